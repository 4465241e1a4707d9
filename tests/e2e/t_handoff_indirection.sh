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
	# A bare repository the user keeps in the workspace.
	git init -q --bare "$WS/vendor/lib.git" || fail "git init --bare"
	git init -q --bare "$WS/vendor/mirror" || fail "git init --bare"
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
try bare-user-hook2 sh -c "echo id > vendor/mirror/hooks/post-update && chmod +x vendor/mirror/hooks/post-update"
try shape-through-link sh -c "mkdir -p e14/objects e14/refs && ln -s e14 e14l && printf \"[core]\\n\\tfsmonitor = id\\n\" > e14l/config"
try shape-in-linked-parent sh -c "mkdir -p e15/r && ln -s e15/r e15l && mkdir e15l/objects e15l/refs && ln -s ../../notes.txt e15l/config"
try bare-user-hook sh -c "echo id > vendor/lib.git/hooks/post-update && chmod +x vendor/lib.git/hooks/post-update"
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
try link-chain sh -c "ln -s tools l1 && ln -s l1 l2 && ln -s l2 .zed"
try link-middle sh -c "mkdir -p deep && ln -s ../tools deep/.husky"
try bin-link sh -c "mkdir -p node_modules && ln -s ../tools node_modules/.bin"
'
IND_ESCAPES="commondir commondir-only common-shape common-shape-hooks gitdir-file gitdir-file-order gitdir-head-commondir \
bare-planted bare-moved-in bare-renamed symlinked-config symlinked-objects shape-through-link shape-in-linked-parent bare-user-hook bare-user-hook2 alternates dotgit-symlink nested-repo hgrc \
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

# Direct mode, where each attack is refused as it is made (hold mode, the
# default, is tested below).
IND_DIRECT='version: 1
sandbox:
  workspace_mode: direct'

test_indirection_direct_mode_refuses_each() {
	ind_repo
	al_policy "$IND_DIRECT" -- /bin/sh -c "$IND_NEIGHBOURS$IND_ATTACKS"
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
	for l in .vscode .github .claude .zed sub3/.git deep/.husky node_modules/.bin sub/.git; do
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
	al_policy "$IND_DIRECT
filesystem:
  protect_defaults: false" -- /bin/sh -c "$IND_NEIGHBOURS$IND_ATTACKS"
	assert_rc 0 "the agent's run"
	for e in $IND_ESCAPES $IND_WT_ESCAPES; do
		assert_contains "$OUT" "$e: done" "the attack $e without protection"
	done
	# The worktree's commondir now leads to the agent's repository: the
	# host's git status in the worktree runs its fsmonitor.
	git -C "$WS/wt" status >/dev/null 2>&1
	assert_file "$WS/wt/PWNED" "the redirected worktree's fsmonitor, run by the host's git status"
}

# ---------------------------------------------------------------- hold mode

# The default, hold mode: inside, every attack is made (the layer takes
# it); at exit the ordinary work lands and none of the attacks does: the
# host's git runs nothing of the agent's, and each flagged path is absent
# or as it was.
test_indirection_hold_mode_lands_none() {
	ind_review_env
	ind_repo
	al -- /bin/sh -c "$IND_NEIGHBOURS$IND_ATTACKS"
	assert_rc 0 "the agent's run"
	for e in $IND_ESCAPES $IND_WT_ESCAPES; do
		assert_contains "$OUT" "$e: done" "$e inside the layer"
	done
	for ok in $IND_OKS; do
		assert_contains "$OUT" "$ok: ok" "the neighbour $ok"
	done
	local p
	for p in $IND_FLAGGED; do
		[ -e "$WS/$p" ] || [ -L "$WS/$p" ] && fail "$p landed in the workspace$(e2e_last_run)"
	done
	assert_contains "$ERR" "held in session" "the held groups are said"
	assert_eq "" "$(git -C "$WS" config --get core.fsmonitor)" "core.fsmonitor on the host"
	git -C "$WS" status >/dev/null 2>&1
	git -C "$WS/wt" status >/dev/null 2>&1
	assert_no_file "$WS/PWNED" "the agent's fsmonitor, run by the host's git status"
	assert_no_file "$WS/wt/PWNED" "the agent's fsmonitor, run by the host's git status in the worktree"
	# The neighbours landed at exit.
	assert_eq "edit" "$(ig log -1 --format=%s main)" "the agent's commit in the real repository"
	assert_contains "$(cat "$WS/src/a.c")" helper "the ordinary edit"
	[ -L "$WS/srclink" ] || fail "the ordinary link did not land"
}

# ---------------------------------------------------------------- review mode

ind_review_env() {
	export XDG_STATE_HOME="$T/state"
}

# The workspace as the host sees it: type, mode, path, link target or
# digest. The probe is not the repository's.
ind_state() {
	(cd "$WS" && find . -path ./airlock-probe -prune -o -printf '%y %m %p %l\n' | sort |
		while read -r t m p l; do
			if [ "$t" = f ]; then
				printf '%s %s %s %s\n' "$t" "$m" "$p" "$(sha256sum <"$p" | cut -c1-64)"
			else
				printf '%s %s %s %s\n' "$t" "$m" "$p" "$l"
			fi
		done)
}

# What each attack leaves that a host tool would follow.
IND_FLAGGED=".git/commondir vendor/lib.git/hooks/post-update vendor/mirror/hooks/post-update e1/config e2/config e4/config e5/config e6/commondir vendor/b/config e7/x/config \
e8/config e10/config .git/objects/info/alternates sub/.git sub2/.git n/.git/config h/.hg/hgrc h2/.hg/sharedpath \
.cargo/config.toml crates/x/.cargo/config rust-toolchain.toml .yarnrc .pnpmfile.cjs .vscode tools/tasks.json .github \
.claude sub3/.git l1 l2 .zed deep/.husky node_modules/.bin .git/worktrees/wt/commondir e12/config \
.git/worktrees/wt/config e14/config e15/r/config"
# The neighbours' files, which nothing flags.
IND_QUIET="src/a.c src/alias.c srclink app/config/settings.ini app/objects/o.txt lib/HEAD/x wt/.git wt/notes.txt"

test_indirection_review_mode_flags_each() {
	ind_review_env
	ind_repo
	ind_state >"$T/before"
	al_policy 'version: 1
sandbox:
  workspace_mode: review' -- /bin/sh -c "$IND_NEIGHBOURS$IND_ATTACKS"
	assert_rc 0 "the agent's run"
	review_session
	# Inside, nothing refuses: the layer takes every write.
	for e in $IND_ESCAPES $IND_WT_ESCAPES; do
		assert_contains "$OUT" "$e: done" "$e inside the review layer"
	done
	for ok in $IND_OKS; do
		assert_contains "$OUT" "$ok: ok" "the neighbour $ok"
	done
	rv review "$SID" --json
	assert_eq 1 "$RRC" "review's status with flagged changes ($RERR)"
	python3 -c '
import json, sys
rows = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    rows[r["path"]] = r
missing = [p for p in sys.argv[2].split() if p not in rows or not rows[p]["flagged"]]
quiet = [p for p in sys.argv[3].split() if p not in rows or rows[p]["flagged"]]
if missing or quiet:
    print("not flagged:", missing, "flagged or absent neighbours:", [(p, rows.get(p)) for p in quiet])
    sys.exit(1)
' "$T/rv.out" "$IND_FLAGGED" "$IND_QUIET" || fail "review's judgement: $(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["path"], r["flagged"])' "$T/rv.out" | head -80)"
	rv review "$SID"
	# (tools is reached as .vscode, .claude, .zed and node_modules/.bin:
	# one name is given)
	assert_match "$ROUT" "reached through a symlink as [^ ]*/tasks\.json" "the task file named by a link"
	assert_contains "$ROUT" "commondir leads git to" "the commondir named"
	assert_contains "$ROUT" "core.fsmonitor" "a planted repository's fsmonitor named"

	# apply refuses them, naming them, and changes nothing.
	rv apply "$SID"
	assert_eq 1 "$RRC" "apply without --accept"
	assert_contains "$RERR" "not accepted" "apply's refusal"
	for p in .git/commondir .vscode tools/tasks.json e4/config .cargo/config.toml h/.hg/hgrc; do
		assert_contains "$RERR" "$p" "apply names $p"
	done
	ind_state >"$T/after"
	cmp -s "$T/before" "$T/after" || fail "a refused apply changed the workspace: $(diff "$T/before" "$T/after" | head)"

	# Without them the ordinary work lands, and the host's git runs
	# nothing of the agent's.
	local args=() p
	for p in $IND_FLAGGED; do
		args+=(--exclude "$p")
	done
	# (the worktree checks out the probe the first commit took in)
	rv apply "$SID" "${args[@]}" --accept src/run.sh --accept wt/airlock-probe
	assert_eq 0 "$RRC" "apply with the flagged files left out ($RERR)"
	assert_eq "edit" "$(ig log -1 --format=%s main)" "the agent's commit in the real repository"
	assert_contains "$(cat "$WS/src/a.c")" helper "the ordinary edit"
	git -C "$WS" status >/dev/null 2>&1 || fail "git status on the host after apply"
	assert_no_file "$WS/PWNED" "the agent's fsmonitor, run by the host's git status"
	for p in .git/commondir .git/objects/info/alternates .vscode .cargo/config.toml e4/config; do
		[ -e "$WS/$p" ] || [ -L "$WS/$p" ] && fail "$p was applied"
	done
	[ -L "$WS/srclink" ] || fail "the ordinary link was not applied"
}

# Set-ID bits that exist in the layer (whatever made them) are flagged,
# and apply refuses them unless accepted; an ordinary mode is not.
test_indirection_review_flags_setid_files() {
	ind_review_env
	ind_repo
	al_policy 'version: 1
sandbox:
  workspace_mode: review' -- /bin/sh -c 'echo x > plain && cp /bin/true tool && chmod 755 tool && echo y > grp'
	assert_rc 0 "the agent's run"
	review_session
	local upper="$XDG_STATE_HOME/airlock/review/$SID/layer/upper"
	[ -f "$upper/tool" ] || fail "no layer at $upper"
	chmod 4755 "$upper/tool" && chmod 2644 "$upper/grp" || fail "cannot set the bits in the layer"
	ind_state >"$T/before"
	rv review "$SID"
	assert_eq 1 "$RRC" "review's status"
	assert_match "$ROUT" "^! +added +file +tool\$" "the set-user-ID file flagged"
	assert_match "$ROUT" "^! +added +file +grp\$" "the set-group-ID file flagged"
	assert_match "$ROUT" "^  added +file +plain\$" "the plain file, unflagged"
	assert_contains "$ROUT" "set-user-ID" "the set-user-ID bit named"
	assert_contains "$ROUT" "set-group-ID" "the set-group-ID bit named"
	rv apply "$SID"
	assert_eq 1 "$RRC" "apply without --accept"
	assert_contains "$RERR" "tool" "apply names the set-ID file"
	ind_state >"$T/after"
	cmp -s "$T/before" "$T/after" || fail "a refused apply changed the workspace"
	rv apply "$SID" --exclude tool --exclude grp
	assert_eq 0 "$RRC" "apply with the set-ID files left out ($RERR)"
	assert_file "$WS/plain" "the plain file applied"
	assert_no_file "$WS/tool" "the set-ID file"
}

# ---------------------------------------------------------------- handoff scan

test_indirection_scan_flags_each() {
	ind_repo
	# The neighbour first: a clean repository with a worktree and
	# ordinary links flags nothing.
	ig worktree add -q "$WS/wt" agent 2>/dev/null || fail "git worktree add"
	ln -s src "$WS/srclink"
	mkdir -p "$WS/app/config" "$WS/app/objects" "$WS/app/refs"
	"$AIRLOCK" handoff scan "$WS" >"$T/clean.out" 2>"$T/clean.err"
	assert_eq 0 "$?" "scan of a clean repository with a worktree ($(cat "$T/clean.out" "$T/clean.err"))"
	rm -rf "$WS/wt" "$WS/srclink" "$WS/app"
	ig worktree prune
	# A baseline file: the commondir attack leaves a repository git
	# itself can no longer read, so --since could not be used.
	"$AIRLOCK" handoff baseline "$WS" "$T/base" || fail "handoff baseline"
	al_policy "$IND_DIRECT
filesystem:
  protect_defaults: false" -- /bin/sh -c "$IND_NEIGHBOURS$IND_ATTACKS"
	assert_rc 0 "the agent's run"
	"$AIRLOCK" handoff scan "$WS" --baseline "$T/base" >"$T/scan.out" 2>"$T/scan.err"
	assert_eq 1 "$?" "scan's status ($(cat "$T/scan.err"))"
	local out p
	out=$(cat "$T/scan.out")
	for p in $IND_FLAGGED; do
		assert_match "$out" "^! .* ${p//./\\.}  " "a flagged line for $p"
	done
	for p in wt/.git src/alias.c srclink; do
		assert_no_match "$out" "^! .* ${p//./\\.}  " "the neighbour $p flagged"
	done
	# Without a baseline the pointers and links are flagged all the same.
	"$AIRLOCK" handoff scan "$WS" >"$T/scan2.out" 2>"$T/scan2.err"
	assert_eq 1 "$?" "scan's status without a baseline"
	out=$(cat "$T/scan2.out")
	for p in .git/commondir .git/objects/info/alternates e4/config sub2/.git .vscode .claude .zed \
		l2 sub3/.git h2/.hg/sharedpath .git/worktrees/wt/commondir; do
		assert_match "$out" "^! .* ${p//./\\.}  " "a flagged line for $p without a baseline"
	done
	assert_no_match "$out" "^! .* wt/\\.git  " "the worktree's own .git file"
	# Reached through a link, a file is listed as the hand-off it stands
	# for, and flagged as that one would be (here for being new).
	assert_match "$out" "^  .* tools/tasks\\.json  .*reached as [^ ]*/tasks\\.json through a symlink" \
		"the task file behind the link, listed"
}

# Set-ID files in the directory are flagged (the scan's documentation
# says so); executables without the bits are not, without a baseline.
test_indirection_scan_flags_setid() {
	mkdir -p "$WS/bin"
	cp /bin/true "$WS/bin/tool" && cp /bin/true "$WS/bin/plain" && echo x >"$WS/bin/grp"
	"$AIRLOCK" handoff scan "$WS" >"$T/s0.out" 2>&1
	assert_eq 0 "$?" "scan without set-ID files ($(cat "$T/s0.out"))"
	chmod 4755 "$WS/bin/tool" && chmod 2644 "$WS/bin/grp" || fail "chmod"
	"$AIRLOCK" handoff scan "$WS" >"$T/s1.out" 2>&1
	assert_eq 1 "$?" "scan with set-ID files"
	local out
	out=$(cat "$T/s1.out")
	assert_match "$out" "^! .* bin/tool  .*set-user-ID" "the set-user-ID file flagged"
	assert_match "$out" "^! .* bin/grp  .*set-group-ID" "the set-group-ID file flagged"
	assert_no_match "$out" "bin/plain" "the plain executable listed"
}

# Links the user already had when the run starts: a file created through
# the link, or in its target directly, is judged by the link's name too;
# a directory that is no hand-off, reached through an ordinary link, is
# written as usual.
test_indirection_links_made_before_the_run() {
	ind_repo
	mkdir -p "$WS/tools" "$WS/ci/workflows" "$WS/docs"
	ln -s tools "$WS/.vscode"
	ln -s ../ci "$WS/docs/.github"
	ln -s docs "$WS/doclink"
	al_policy "$IND_DIRECT" -- /bin/sh -c '
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
try through-link sh -c "echo {} > .vscode/tasks.json"
try in-target sh -c "echo {} > tools/tasks.json"
try workflow-through sh -c "echo on: push > docs/.github/workflows/x.yml"
try workflow-target sh -c "echo on: push > ci/workflows/y.yml"
try workflow-via-doclink sh -c "echo on: push > doclink/.github/workflows/z.yml"
echo notes > doclink/n.md && echo "ordinary-link: ok"
'
	assert_rc 0 "the agent's run"
	for e in through-link in-target workflow-through workflow-target workflow-via-doclink; do
		assert_contains "$OUT" "$e: blocked" "the escape $e"
	done
	assert_contains "$OUT" "ordinary-link: ok" "a write through an ordinary link"
	assert_no_file "$WS/tools/tasks.json" "the task file"
	assert_file "$WS/docs/n.md" "the note written through the ordinary link"
}

# The repository shapes go with the table's git rows: with
# protect_defaults: false and a glob of the policy's own, a repository
# can be made (and the glob still holds).
test_indirection_shape_goes_with_the_table() {
	ind_repo
	al_policy "$IND_DIRECT
filesystem:
  protect_defaults: false
  protect: [\"**/secrets/**\"]" -- /bin/sh -c '
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
try git-init sh -c "git init -q sub && git -C sub config core.x y"
try bare sh -c "mkdir -p b/objects b/refs && echo ref: refs/heads/main > b/HEAD && echo [core] > b/config"
try secrets sh -c "mkdir -p secrets && echo x > secrets/a"
'
	assert_rc 0 "the agent's run"
	assert_contains "$OUT" "git-init: done" "git init without the table"
	assert_contains "$OUT" "bare: done" "a bare repository without the table"
	assert_contains "$OUT" "secrets: blocked" "the policy's own glob"
}
