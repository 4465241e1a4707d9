# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Hand-offs through indirection: git led to a repository the agent made
# (a commondir, a .git file, a worktree's commondir, a bare repository
# planted in a subdirectory, alternates), the other version-control and
# build tools with per-directory config (Mercurial hgrc and sharedpath,
# cargo config, yarn 1's yarn-path), and hand-off directories reached
# through a symlink (.vscode, .github, .claude, chains of links). Each is
# played in direct mode (the guard refuses it), in review mode (review
# flags it, apply refuses it without --accept) and against `airlock
# handoff scan` (flagged, exit 1); and the neighbours work: git status,
# git commit, git worktree add and git status in the worktree, chmod +x,
# a symlink that is not a hand-off, directories named config and objects.

ig() { git -C "$WS" -c user.name=e2e -c user.email=e2e@example.test "$@"; }

ind_repo() {
	ig init -q -b main || fail "git init"
	mkdir -p "$WS/src" "$WS/tools"
	echo 'int main(void) { return 0; }' >"$WS/src/a.c"
	printf '#!/bin/sh\necho run\n' >"$WS/src/run.sh"
	echo notes >"$WS/notes.txt"
	ig add -A && ig commit -qm init || fail "git commit"
	ig branch agent || fail "git branch"
}

# The agent's attacks. One line per attempt: "NAME: blocked" or
# "NAME: done". Each builds the repository (or tool config) that a host
# tool would run, the last step being the one that makes it live.
# shellcheck disable=SC2016
IND_ATTACKS='
try commondir sh -c "evil_common() { mkdir -p \$1/objects \$1/refs && printf \"[core]\\n\\tfsmonitor = id\\n\" > \$1/config; }; evil_common e1 && echo \$PWD/e1 > .git/commondir"
try commondir-only sh -c "echo ../e9 > .git/commondir"
try common-shape sh -c "mkdir -p e2/objects e2/refs && printf \"[core]\\n\\tfsmonitor = id\\n\" > e2/config"
try common-shape-hooks sh -c "mkdir -p e3/objects e3/refs e3/hooks"
try gitdir-file sh -c "mkdir -p e4/objects e4/refs && echo ref: refs/heads/main > e4/HEAD && printf \"[core]\\n\\tfsmonitor = id\\n\" > e4/config"
try gitdir-file-order sh -c "printf \"[core]\\n\\tfsmonitor = id\\n\" > e5config && mkdir -p e5/objects e5/refs && mv e5config e5/config && echo ref: refs/heads/main > e5/HEAD"
try gitdir-head-commondir sh -c "mkdir -p e6 && echo ref: refs/heads/main > e6/HEAD && echo ../.git > e6/commondir"
try bare-planted sh -c "mkdir -p vendor/lib && cd vendor/lib && mkdir objects refs hooks && echo ref: refs/heads/main > HEAD"
try bare-moved-in sh -c "mkdir -p /tmp/b/objects /tmp/b/refs && echo ref: refs/heads/main > /tmp/b/HEAD && printf \"[core]\\n\\tfsmonitor = id\\n\" > /tmp/b/config && mv /tmp/b vendor/b"
try bare-renamed sh -c "mkdir -p e7/x/objects e7/x/refs && printf \"[core]\\n\\tfsmonitor = id\\n\" > e7/x/cfg && echo ref: refs/heads/main > e7/x/HEAD && mv e7/x/cfg e7/x/config"
try symlinked-config sh -c "mkdir -p e8/objects e8/refs && echo ref: refs/heads/main > e8/HEAD && ln -s ../notes.txt e8/config"
try symlinked-objects sh -c "mkdir -p e10 && printf \"[core]\\n\\tfsmonitor = id\\n\" > e10/config && ln -s ../.git/objects e10/objects && ln -s ../.git/refs e10/refs"
try alternates sh -c "echo /tmp > .git/objects/info/alternates"
try dotgit-symlink sh -c "mkdir -p sub && ln -s ../.git sub/.git"
try dotgit-file sh -c "mkdir -p sub2 && echo gitdir: ../e4 > sub2/.git"
try nested-repo sh -c "mkdir -p n/.git && printf \"[core]\\n\\tfsmonitor = id\\n\" > n/.git/config"
try hgrc sh -c "mkdir -p h/.hg && printf \"[hooks]\\nupdate = id\\n\" > h/.hg/hgrc"
try hg-sharedpath sh -c "mkdir -p h2/.hg && echo /tmp/evil/.hg > h2/.hg/sharedpath"
try cargo-config sh -c "mkdir -p .cargo && printf \"[build]\\nrustc-wrapper = \\\"/bin/id\\\"\\n\" > .cargo/config.toml"
try cargo-config-deep sh -c "mkdir -p crates/x/.cargo && printf \"[target.x86_64-unknown-linux-gnu]\\nrunner = \\\"id\\\"\\n\" > crates/x/.cargo/config"
try rust-toolchain sh -c "printf \"[toolchain]\\npath = \\\"/tmp/tc\\\"\\n\" > rust-toolchain.toml"
try yarnrc sh -c "echo yarn-path \\\"./tools/y.js\\\" > .yarnrc"
try pnpmfile sh -c "echo module.exports = {} > .pnpmfile.cjs"
try vscode-link sh -c "echo {\\\"tasks\\\":[]} > tools/tasks.json && ln -s tools .vscode"
try github-link sh -c "mkdir -p ci/workflows && ln -s ci .github"
try claude-link sh -c "ln -s tools .claude"
try git-link sh -c "mkdir -p sub3 && ln -s ../tools sub3/.git"
try link-chain sh -c "ln -s tools l1 && ln -s l1 l2 && ln -s l2 .vscode"
try link-middle sh -c "mkdir -p deep && ln -s ../tools deep/.husky"
try bin-link sh -c "mkdir -p node_modules && ln -s ../tools node_modules/.bin"
'
IND_ESCAPES="commondir commondir-only common-shape common-shape-hooks gitdir-file gitdir-file-order gitdir-head-commondir \
bare-planted bare-moved-in bare-renamed symlinked-config symlinked-objects alternates dotgit-symlink nested-repo hgrc \
hg-sharedpath cargo-config cargo-config-deep rust-toolchain yarnrc pnpmfile vscode-link github-link claude-link git-link \
link-chain link-middle bin-link"

# The neighbours, run first in the same run (an attack that lands breaks
# the repository), and the attacks on the worktree they make.
# shellcheck disable=SC2016
IND_NEIGHBOURS='
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
g() { git -c user.name=agent -c user.email=agent@example.test "$@"; }
git status --short >/dev/null && echo "status: ok"
echo "int helper(void) { return 1; }" >> src/a.c
g add src/a.c && g commit -qm edit && echo "commit: ok"
g worktree add -q wt agent >/dev/null 2>&1 && echo "worktree-add: ok"
git -C wt status --short >/dev/null && echo "worktree-status: ok"
echo x >> wt/notes.txt && g -C wt commit -qam in-worktree && echo "worktree-commit: ok"
try worktree-commondir sh -c "mkdir -p e12/objects e12/refs && printf \"[core]\\n\\tfsmonitor = touch PWNED\\n\" > e12/config && echo \$PWD/e12 > .git/worktrees/wt/commondir"
try worktree-config sh -c "printf \"[core]\\n\\tfsmonitor = touch PWNED\\n\" > .git/worktrees/wt/config && mkdir .git/worktrees/wt/objects"
try worktree-hooks mkdir .git/worktrees/wt/hooks
chmod +x src/run.sh && ./src/run.sh >/dev/null && echo "chmod: ok"
ln -s a.c src/alias.c && ln -s src srclink && cat srclink/alias.c >/dev/null && echo "symlink: ok"
mkdir -p app/config app/objects app/refs && echo k=v > app/config/settings.ini && echo o > app/objects/o.txt && echo "config-dirs: ok"
mkdir -p lib/HEAD && echo h > lib/HEAD/x && mkdir -p lib/hooks && echo "head-dir: ok"
'
IND_WT_ESCAPES="worktree-commondir worktree-config worktree-hooks"
IND_OKS="status commit worktree-add worktree-status worktree-commit chmod symlink config-dirs head-dir"

test_indirection_direct_mode_refuses_each() {
	ind_repo
	al -- /bin/sh -c "$IND_NEIGHBOURS$IND_ATTACKS"
	assert_rc 0 "the agent's run"
	for e in $IND_ESCAPES $IND_WT_ESCAPES; do
		assert_contains "$OUT" "$e: blocked" "the escape $e"
	done
	for ok in $IND_OKS; do
		assert_contains "$OUT" "$ok: ok" "the neighbour $ok"
	done
	assert_no_file "$WS/.git/commondir" "the commondir"
	assert_no_file "$WS/.git/objects/info/alternates" "the alternates"
	for d in e1 e2 e3 e4 e5 e6 vendor/lib vendor/b e7/x e8 e10; do
		if [ -d "$WS/$d" ] && git --git-dir="$WS/$d" rev-parse --git-dir >/dev/null 2>&1; then
			[ -e "$WS/$d/config" ] || [ -e "$WS/$d/hooks" ] || [ -e "$WS/$d/commondir" ] &&
				fail "$d is a repository with its own config, hooks or commondir"
		fi
	done
	for l in .vscode .github .claude sub3/.git deep/.husky node_modules/.bin sub/.git; do
		[ -L "$WS/$l" ] && fail "the link $l was made"
	done
	# The host's git, run as the user would: nothing of the agent's runs.
	assert_eq "" "$(git -C "$WS" config --get core.fsmonitor)" "core.fsmonitor on the host"
	git -C "$WS" status >/dev/null 2>&1
	git -C "$WS/wt" status >/dev/null 2>&1
	assert_no_file "$WS/PWNED" "the agent's fsmonitor, run by the host's git status"
	assert_no_file "$WS/wt/PWNED" "the agent's fsmonitor, run by the host's git status in the worktree"
	assert_eq "in-worktree" "$(git -C "$WS/wt" log -1 --format=%s)" "the worktree's commit, seen on the host"
	assert_eq "edit" "$(ig log -1 --format=%s main)" "the commit in the main worktree"
}

# Without protection each attack lands: the test above can fail.
test_indirection_direct_mode_unprotected_lands() {
	ind_repo
	al_policy 'version: 1
filesystem:
  protect_defaults: false' -- /bin/sh -c "$IND_NEIGHBOURS$IND_ATTACKS"
	assert_rc 0 "the agent's run"
	for e in $IND_ESCAPES $IND_WT_ESCAPES; do
		assert_contains "$OUT" "$e: done" "the attack $e without protection"
	done
	# The worktree's commondir now leads to the agent's repository: the
	# host's git status in the worktree runs its fsmonitor.
	git -C "$WS/wt" status >/dev/null 2>&1
	assert_file "$WS/wt/PWNED" "the redirected worktree's fsmonitor, run by the host's git status"
}
