# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# filesystem.protect: in direct mode the hand-off files are
# read-only inside the sandbox, whether they exist when the run starts
# (read-only mounts) or not (their creation is refused, at any depth,
# through renames and symlinks too). Each published hand-off escape is
# tried both ways and fails, while git add, git commit and ordinary edits
# in the same workspace succeed and the host's copies stay byte for byte
# the same; with protect_defaults: false the same writes succeed (so these
# tests can fail).

# Protected paths are direct mode's: every run here names it. (The
# default, hold mode, holds these writes for review instead:
# t_handoff_indirection.sh, t_tools.sh.)
pal() {
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	al --policy "$T/direct.yaml" "$@"
}

pal_policy() { # POLICY-TEXT -- CMD...
	local text=$1
	shift
	al_policy "$text
sandbox:
  workspace_mode: direct" "$@"
}

pg() { git -C "$WS" -c user.name=e2e -c user.email=e2e@example.test "$@"; }

# A repository holding every protected file the escapes aim at, plus a
# nested repository and a prepared directory to rename.
protect_repo() {
	pg init -q || fail "git init"
	mkdir -p "$WS/src" "$WS/.vscode" "$WS/.github/workflows" "$WS/.venv/bin" "$WS/prep"
	echo 'int main(void) { return 0; }' >"$WS/src/a.c"
	printf '#!/bin/sh\nexit 0\n' >"$WS/.git/hooks/pre-commit"
	chmod +x "$WS/.git/hooks/pre-commit"
	echo '*.txt text' >"$WS/.gitattributes"
	echo '{}' >"$WS/.vscode/settings.json"
	echo '{"version":"2.0.0","tasks":[]}' >"$WS/.vscode/tasks.json"
	echo 'export X=1' >"$WS/.envrc"
	printf 'on: push\njobs: {}\n' >"$WS/.github/workflows/x.yml"
	printf '#!/bin/sh\nexec /usr/bin/python3 "$@"\n' >"$WS/.venv/bin/python"
	chmod +x "$WS/.venv/bin/python"
	# A hand-off name that is a symlink: its target is what a host tool reads.
	echo 'python 3.12' >"$WS/versions.txt"
	ln -s versions.txt "$WS/.tool-versions"
	# A link a protected path passes through: .yarn/releases/yarn.js is
	# yarnstuff/releases/yarn.js.
	mkdir -p "$WS/yarnstuff/releases"
	echo '// yarn' >"$WS/yarnstuff/releases/yarn.js"
	ln -s yarnstuff "$WS/.yarn"
	echo '{"tasks":[{"command":"id","runOptions":{"runOn":"folderOpen"}}]}' >"$WS/prep/tasks.json"
	pg add -A && pg commit -qm init || fail "git commit"
	git -C "$WS" init -q sub || fail "git init sub"
}

# The protected files' digests, as the host sees them.
protect_sums() {
	(cd "$WS" && find .git/hooks .git/config .gitattributes .vscode .envrc .github .venv versions.txt yarnstuff \
		sub/.git/hooks sub/.git/config -type f -print0 | sort -z | xargs -0 sha256sum)
}

# The agent: each escape, then ordinary work. One line per attempt:
# "NAME: blocked" or "NAME: done".
# shellcheck disable=SC2016
PROTECT_AGENT='
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
g() { git -c user.name=agent -c user.email=agent@example.test "$@"; }
try hook sh -c "printf \"#!/bin/sh\\nid\\n\" > .git/hooks/pre-commit"
try hook-new sh -c "echo id > .git/hooks/post-checkout"
try hook-rename sh -c "echo id > h.tmp && mv -f h.tmp .git/hooks/pre-commit"
try hooks-path git config core.hooksPath /tmp
try fsmonitor git config core.fsmonitor "sh -c id"
try ssh-command git config core.sshCommand "sh -c id"
try filter-attr sh -c "echo \"*.c filter=x\" >> .gitattributes"
try filter-config git config filter.x.clean "sh -c id"
try venv-python sh -c "printf \"#!/bin/sh\\nid\\n\" > .venv/bin/python"
try venv-replace sh -c "rm -f .venv/bin/python; printf \"#!/bin/sh\\nid\\n\" > .venv/bin/python"
try vscode-tasks sh -c "echo {} > .vscode/tasks.json"
try vscode-new sh -c "echo {} > .vscode/launch.json"
try envrc sh -c "echo id > .envrc"
try envrc-symlink ln -sf /tmp/x .envrc
try workflow sh -c "printf \"on: push\\n\" > .github/workflows/x.yml"
try workflow-new sh -c "printf \"on: push\\n\" > .github/workflows/y.yml"
try symlink-target sh -c "echo \"python 0\" > versions.txt"
try link-through sh -c "echo id > yarnstuff/releases/yarn.js"
try nested-hook sh -c "echo id > sub/.git/hooks/pre-commit"
try nested-config git -C sub config core.fsmonitor "sh -c id"
try rename-into mv prep .vscode/
try link-ssh ln -s "$HOME/.ssh" keys
try link-etc ln -s /etc/passwd src/pw
try link-climb ln -s ../../.. src/up
ln -s a.c src/alias.c && ln -s "$PWD/src" srcdir && echo "inner-links: done"
echo "int helper(void) { return 1; }" >> src/a.c
echo notes > notes.md
g add src/a.c notes.md && g commit -qm edit && echo "commit: done"
g reset -q --soft HEAD~1 && g commit -qm edit-again && echo "recommit: done"
git -C sub -c user.name=a -c user.email=a@example.test commit -q --allow-empty -m nested && echo "nested-commit: done"
'
PROTECT_ESCAPES="hook hook-new hook-rename hooks-path fsmonitor ssh-command filter-attr filter-config \
venv-python venv-replace vscode-tasks vscode-new envrc envrc-symlink workflow workflow-new symlink-target \
link-through nested-hook nested-config rename-into link-ssh link-etc link-climb"

test_protect_default_blocks_each_escape() {
	protect_repo
	protect_sums >"$T/before"
	pal -- /bin/sh -c "$PROTECT_AGENT"
	assert_rc 0 "the agent's run"
	for e in $PROTECT_ESCAPES; do
		assert_contains "$OUT" "$e: blocked" "the escape $e"
	done
	# The neighbours: git and ordinary edits in the same workspace.
	for ok in commit recommit nested-commit inner-links; do
		assert_contains "$OUT" "$ok: done" "$ok inside the sandbox"
	done
	protect_sums >"$T/after"
	cmp -s "$T/before" "$T/after" || fail "protected files changed on the host: $(diff "$T/before" "$T/after")"
	assert_eq "edit-again" "$(pg log -1 --format=%s)" "the commit made inside, seen on the host"
	assert_contains "$(cat "$WS/src/a.c")" helper "the ordinary edit"
	assert_eq "" "$(pg config --get core.fsmonitor)" "core.fsmonitor on the host"
	assert_no_file "$WS/.git/hooks/post-checkout" "the planted hook"
	assert_no_file "$WS/.vscode/launch.json" "the planted launch configuration"
	assert_no_file "$WS/.github/workflows/y.yml" "the planted workflow"
	[ -L "$WS/.envrc" ] && fail ".envrc was replaced by a symlink"
	assert_file "$WS/prep/tasks.json" "the prepared directory, not moved"
	[ -L "$WS/keys" ] && fail "a link to ~/.ssh was made in the workspace"
	[ -L "$WS/src/alias.c" ] || fail "a link inside the workspace was not made"
}

# The same writes with the defaults dropped: each one lands. Without this
# the test above would pass against a sandbox that refused everything.
test_protect_defaults_off_lets_the_same_writes_through() {
	protect_repo
	protect_sums >"$T/before"
	pal_policy 'version: 1
filesystem:
  protect_defaults: false' -- /bin/sh -c "$PROTECT_AGENT"
	assert_rc 0 "the agent's run"
	for e in $PROTECT_ESCAPES; do
		assert_contains "$OUT" "$e: done" "the write $e without protection"
	done
	for ok in commit recommit nested-commit; do
		assert_contains "$OUT" "$ok: done" "$ok inside the sandbox"
	done
	protect_sums >"$T/after"
	cmp -s "$T/before" "$T/after" && fail "no protected file changed with protection off"
	assert_eq "sh -c id" "$(pg config --get core.fsmonitor)" "core.fsmonitor written with protection off"
}

# A repository with none of the hand-off files the escapes aim at (only
# the .git/hooks and .git/config every repository has), and prepared
# directories that would become protected trees under a new name.
protect_fresh_repo() {
	pg init -q || fail "git init"
	mkdir -p "$WS/src" "$WS/prep" "$WS/prep2"
	echo 'int main(void) { return 0; }' >"$WS/src/a.c"
	echo '{"tasks":[{"command":"id","runOptions":{"runOn":"folderOpen"}}]}' >"$WS/prep/tasks.json"
	printf '[core]\n\tfsmonitor = id\n' >"$WS/prep2/config"
	echo notes >"$WS/notes.txt"
	pg add -A && pg commit -qm init || fail "git commit"
}

# The agent, against names that do not exist yet.
# shellcheck disable=SC2016
PROTECT_FRESH_AGENT='
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
g() { git -c user.name=agent -c user.email=agent@example.test "$@"; }
try hook-new sh -c "echo id > .git/hooks/pre-commit"
try filter-attr sh -c "echo \"*.c filter=x\" > .gitattributes"
try venv-python sh -c "mkdir -p .venv/bin && printf \"#!/bin/sh\\nid\\n\" > .venv/bin/python"
try vscode-tasks sh -c "mkdir -p .vscode && echo {} > .vscode/tasks.json"
try envrc sh -c "echo id > .envrc"
try workflow sh -c "mkdir -p .github/workflows && printf \"on: push\\n\" > .github/workflows/x.yml"
try deep-envrc sh -c "mkdir -p a/b/c && echo id > a/b/c/.envrc"
try nested-git-init sh -c "git init -q sub; mkdir -p sub/.git/hooks && echo id > sub/.git/hooks/pre-commit"
try nested-config sh -c "mkdir -p sub2/.git && printf \"[core]\\n\\tfsmonitor = id\\n\" > sub2/.git/config"
try gitdir-file sh -c "mkdir -p sub3 && echo \"gitdir: /tmp/evil\" > sub3/.git"
try rename-dir-git sh -c "mkdir -p sub4 && mv prep2 sub4/.git"
try rename-dir-vscode mv prep .vscode
try symlink-new ln -s notes.txt .bashrc
try symlink-dangling sh -c "ln -s .profile dangling && echo id > dangling"
try symlink-dir sh -c "ln -s src .claude && echo {} > .claude/settings.json"
try hardlink sh -c "echo {} > m.json && ln m.json .mcp.json"
try link-through sh -c "mkdir -p foo/bin && echo id > foo/bin/python && ln -s foo venv"
try link-through-rename sh -c "mkdir -p nm/.bin && echo id > nm/.bin/tsc && ln -s nm nml && mv nml node_modules"
try link-through-hardlink sh -c "mkdir -p y/releases && echo id > y/releases/yarn.js && ln -s y yl && ln -P yl .yarn"
echo "int helper(void) { return 1; }" >> src/a.c
mkdir -p docs/x && echo notes > docs/x/n.md && mv docs/x docs/y
g add src/a.c docs && g commit -qm edit && echo "commit: done"
g reset -q --soft HEAD~1 && g commit -qm edit-again && echo "recommit: done"
'
PROTECT_FRESH_ESCAPES="hook-new filter-attr venv-python vscode-tasks envrc workflow deep-envrc nested-git-init \
nested-config gitdir-file rename-dir-git rename-dir-vscode symlink-new symlink-dangling symlink-dir hardlink \
link-through link-through-rename link-through-hardlink"
PROTECT_FRESH_PATHS=".git/hooks/pre-commit .gitattributes .venv/bin/python .vscode/tasks.json .envrc \
.github/workflows/x.yml a/b/c/.envrc sub/.git/hooks/pre-commit sub2/.git/config sub3/.git sub4/.git/config \
.claude/settings.json .mcp.json .bashrc .profile venv node_modules .yarn"

test_protect_default_blocks_creation() {
	protect_fresh_repo
	pal -- /bin/sh -c "$PROTECT_FRESH_AGENT"
	assert_rc 0 "the agent's run"
	for e in $PROTECT_FRESH_ESCAPES; do
		assert_contains "$OUT" "$e: blocked" "the escape $e"
	done
	for ok in commit recommit; do
		assert_contains "$OUT" "$ok: done" "$ok inside the sandbox"
	done
	for p in $PROTECT_FRESH_PATHS; do
		[ -e "$WS/$p" ] || [ -L "$WS/$p" ] && fail "$p was created on the host"
	done
	[ -L "$WS/.claude" ] && fail ".claude was created as a symlink"
	assert_eq "" "$(pg config --get core.fsmonitor)" "core.fsmonitor on the host"
	assert_eq "edit-again" "$(pg log -1 --format=%s)" "the commit made inside, seen on the host"
	assert_file "$WS/docs/y/n.md" "an ordinary directory renamed"
	assert_file "$WS/prep2/config" "the prepared directory, not moved"
	assert_file "$WS/prep/tasks.json" "the other prepared directory, not moved"
}

test_protect_defaults_off_lets_the_same_creation_through() {
	protect_fresh_repo
	pal_policy 'version: 1
filesystem:
  protect_defaults: false' -- /bin/sh -c "$PROTECT_FRESH_AGENT"
	assert_rc 0 "the agent's run"
	for e in $PROTECT_FRESH_ESCAPES; do
		assert_contains "$OUT" "$e: done" "the creation $e without protection"
	done
	for p in $PROTECT_FRESH_PATHS; do
		[ -e "$WS/$p" ] || [ -L "$WS/$p" ] || fail "$p was not created with protection off"
	done
}

# The path is in the caller's memory: another thread flips it between a
# harmless name and .envrc while the first one creates files. The guard
# copies it once and creates exactly the name it judged, so .envrc never
# appears; without protection it does (the flip is seen), and the harmless
# name appears both ways.
protect_race_script() {
	cat >"$WS/race.py" <<'PY'
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(64)
buf.value = b"harmless"
stop = False
def flip():
    # sleep(0) hands the interpreter lock over after each flip, so the
    # opening thread starts its calls with either name, and this thread
    # keeps flipping while the calls are under way.
    while not stop:
        ctypes.memmove(buf, b".envrc\0", 7)
        time.sleep(0)
        ctypes.memmove(buf, b"harmless\0", 9)
        time.sleep(0)
t = threading.Thread(target=flip)
t.start()
for i in range(3000):
    fd = libc.open(buf, os.O_CREAT | os.O_WRONLY, 0o644)
    if fd >= 0:
        os.close(fd)
stop = True
t.join()
print("done")
PY
}

test_protect_path_swapped_by_another_thread() {
	command -v python3 >/dev/null || skip "no python3"
	protect_race_script
	pal -- /usr/bin/python3 race.py
	assert_rc 0 "the racing run"
	assert_file "$WS/harmless" "the harmless name, created"
	assert_no_file "$WS/.envrc" ".envrc created through a swapped path"
	rm -f "$WS/harmless"
	pal_policy 'version: 1
filesystem:
  protect_defaults: false' -- /usr/bin/python3 race.py
	assert_rc 0 "the racing run without protection"
	assert_file "$WS/.envrc" ".envrc without protection (the flip is seen)"
	assert_file "$WS/harmless" "the harmless name without protection"
}

# A glob of the policy's own protects its paths, alone once the defaults
# are dropped; its neighbour stays writable.
test_protect_policy_glob() {
	mkdir -p "$WS/deploy/keys" "$WS/docs"
	echo a >"$WS/deploy/keys/a.pub"
	echo d >"$WS/docs/readme"
	echo x >"$WS/.envrc"
	pal_policy 'version: 1
filesystem:
  protect_defaults: false
  protect: ["deploy/**"]' -- /bin/sh -c '
		echo b > deploy/keys/a.pub && echo "deploy: done"
		echo b > deploy/new && echo "deploy-new: done"
		echo e > docs/readme && echo "docs: done"
		echo y > .envrc && echo "envrc: done"
		true'
	assert_rc 0 "the run"
	assert_not_contains "$OUT" "deploy: done" "a write under the policy's glob"
	assert_not_contains "$OUT" "deploy-new: done" "a file created under the policy's glob"
	assert_contains "$OUT" "docs: done" "a write beside it"
	assert_contains "$OUT" "envrc: done" "a default row, dropped"
	assert_eq a "$(cat "$WS/deploy/keys/a.pub")" "the protected file on the host"
	# Build entry points only when asked.
	echo 'all:' >"$WS/Makefile"
	pal -- /bin/sh -c 'echo "all: ; id" > Makefile && echo "make: done"'
	assert_contains "$OUT" "make: done" "Makefile under the defaults"
	pal_policy 'version: 1
filesystem:
  protect_build: true' -- /bin/sh -c 'echo "all: ; id" > Makefile && echo "make: done"; true'
	assert_not_contains "$OUT" "make: done" "Makefile with protect_build"
	assert_eq "all: ; id" "$(cat "$WS/Makefile")" "the Makefile written by the first run only"
}

# Each protected path is a mount: their number is bounded, and a
# workspace over the bound is refused by name, not half-protected.
test_protect_mount_bound() {
	local i
	for i in $(seq 1 1030); do
		mkdir "$WS/d$i" && : >"$WS/d$i/.envrc"
	done
	pal -- /bin/true
	assert_ne 0 "$RC" "a run with 1030 protected paths"
	assert_contains "$ERR" "more than 1024 protected paths" "the bound named"
	rm -rf "$WS"/d10[0-9][0-9]
	pal -- /bin/sh -c 'echo x > d1/.envrc || echo "d1: blocked"'
	assert_rc 0 "a run with 999 protected paths"
	assert_contains "$OUT" "d1: blocked" "a protected path among many"
}

# With the audit log on, each refused write to a protected path is a
# file_denied decision naming the glob; an allowed edit is not.
test_protect_denials_in_the_audit_log() {
	protect_repo
	pal --audit "$T/log" -- /bin/sh -c '
		echo id > .git/hooks/pre-commit
		git config core.fsmonitor "sh -c id"
		mkdir -p a && echo id > a/.envrc
		echo ok > src/a.c
		# A write without O_CREAT is no creating call: the guard never
		# sees it; the read-only bind refuses it, the tracer names why.
		/usr/bin/python3 -c "import os; os.open(\".git/config\", os.O_WRONLY | os.O_TRUNC)" 2>/dev/null
		true'
	assert_rc 0 "the audited run"
	local log
	log=$(ls "$T"/log/*.jsonl) || fail "no audit log"
	"$AIRLOCK" audit show "$log" >"$T/show" 2>&1 || fail "audit show: $(cat "$T/show")"
	local show
	show=$(cat "$T/show")
	assert_contains "$show" 'EROFS [protected: **/.git/hooks/**]' "the hook write recorded"
	assert_contains "$show" 'EACCES [protected: **/.git/config]' "the config rename recorded"
	assert_contains "$show" 'EACCES [protected: **/.envrc]' "the new .envrc refused and recorded"
	assert_contains "$show" 'EROFS [protected: **/.git/config]' \
		"the write to an existing protected file (no creating call) recorded with its glob"
	assert_contains "$(cat "$log")" "$WS/.git/hooks/pre-commit" "the hook's path in the record"
	assert_contains "$(cat "$log")" "$WS/a/.envrc" "the new .envrc's path in the record"
	assert_not_contains "$(cat "$log")" "$WS/src/a.c" "the allowed edit"
	# Only asked-for reports reach stderr.
	assert_not_contains "$ERR" "airlock: denied" "the denial report without --trace-denials"
}

# A creating call from a thread other than its process's leader, relative
# to a directory fd (the supervisor copies that fd through a pidfd, which
# must name the thread): performed, and still judged.
test_protect_creating_calls_from_a_thread() {
	pg init -q || fail "git init"
	# shellcheck disable=SC2016
	pal -- /usr/bin/python3 -c '
import errno, os, threading
def body():
    d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for name in ("notes.txt", ".envrc"):
        try:
            os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=d))
            print(name + ": created")
        except OSError as e:
            print(name + ": " + errno.errorcode.get(e.errno, str(e.errno)))
t = threading.Thread(target=body); t.start(); t.join()'
	assert_rc 0 "the script ran"
	assert_contains "$OUT" "notes.txt: created" "an ordinary file, from a thread, by a directory fd"
	assert_contains "$OUT" ".envrc: EACCES" "a protected name, the same way"
	assert_file "$WS/notes.txt" "the file the thread made"
	assert_no_file "$WS/.envrc" "the protected name"
}

# The directory a creating call is relative to (the caller's cwd), moved
# by another thread between the calls: each name is judged where the
# directory is when the guard makes it, never where it was last seen (a
# path kept for a directory would let a thread move the cwd under a
# protected glob and create there). A directory holding a protected name
# cannot be moved there either, so a file whose own path is in secret/
# was made there.
protect_cwd_race_script() {
	cat >"$WS/cwdrace.py" <<'PY'
import os, sys, threading
sys.setswitchinterval(1e-5)
top = os.getcwd()
os.mkdir("staging")
os.chdir("staging")
stop = False
moves = [0, 0]
def move():
    while not stop:
        for i, (a, b) in enumerate((("staging", "secret"), ("secret", "staging"))):
            try:
                os.rename(os.path.join(top, a), os.path.join(top, b))
                moves[i] += 1
            except OSError:
                pass
t = threading.Thread(target=move)
t.start()
made = inside = 0
# 1500 tries, and on until the other thread has moved the cwd at least
# once (bounded): a slow machine or a sanitized build may not give it a
# turn within the first 1500, and a race never run proves nothing.
i = 0
while i < 1500 or (moves[0] == 0 and i < 30000):
    i += 1
    try:
        fd = os.open("id.key", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError:
        continue
    made += 1
    if os.readlink("/proc/self/fd/%d" % fd).startswith(os.path.join(top, "secret") + "/"):
        inside += 1
    os.close(fd)
    os.unlink("id.key")
stop = True
t.join()
print("made %d inside %d there %d back %d" % (made, inside, moves[0], moves[1]))
PY
}

test_protect_cwd_moved_by_another_thread() {
	command -v python3 >/dev/null || skip "no python3"
	protect_cwd_race_script
	pal_policy 'version: 1
filesystem:
  protect_defaults: false
  protect: ["secret/*.key"]' -- /usr/bin/python3 cwdrace.py
	assert_rc 0 "the racing run"
	assert_contains "$OUT" " inside 0 " "keys made while the cwd was secret/"
	assert_not_contains "$OUT" "made 0 " "keys made while the cwd was staging/ (none at all)"
	assert_not_contains "$OUT" " there 0 " "moves of the cwd to secret/ (none at all)"
	rm -rf "$WS/staging" "$WS/secret"
	pal_policy 'version: 1
filesystem:
  protect_defaults: false' -- /usr/bin/python3 cwdrace.py
	assert_rc 0 "the racing run without the glob"
	assert_not_contains "$OUT" " inside 0 " "keys made in secret/ without the glob (the race is run)"
}

# An absolute path with a directory fd: the kernel ignores the fd, even a
# closed one, and so does the guard, which still judges the name where
# the path leads.
test_protect_absolute_path_beside_a_closed_fd() {
	command -v python3 >/dev/null || skip "no python3"
	# shellcheck disable=SC2016
	pal -- /usr/bin/python3 -c '
import errno, os
d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
os.close(d)
for name in ("notes.txt", ".envrc"):
    try:
        os.close(os.open(os.path.join(os.getcwd(), name), os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=d))
        print(name + ": created")
    except OSError as e:
        print(name + ": " + errno.errorcode.get(e.errno, str(e.errno)))
try:
    os.mkdir(os.path.join(os.getcwd(), ".vscode"), dir_fd=d)
    print(".vscode: created")
except OSError as e:
    print(".vscode: " + errno.errorcode.get(e.errno, str(e.errno)))'
	assert_rc 0 "the script ran"
	assert_contains "$OUT" "notes.txt: created" "an ordinary file by absolute path, the fd closed"
	assert_contains "$OUT" ".envrc: EACCES" "a protected name, the same way"
	assert_contains "$OUT" ".vscode: EACCES" "a protected directory, the same way"
	assert_file "$WS/notes.txt" "the file made"
	assert_no_file "$WS/.envrc" "the protected name"
	assert_no_file "$WS/.vscode" "the protected directory"
}

# The guard holds the sandbox's notification listener (it answers the
# calls it performs): with it, a process could answer its own creating
# calls. The agent, the same uid in the same Landlock domain, reaches no
# fd of the guard's: not through /proc/PID/fd, not with pidfd_getfd; its
# own it lists.
test_protect_guard_fds_out_of_reach() {
	command -v python3 >/dev/null || skip "no python3"
	# shellcheck disable=SC2016
	pal -- /usr/bin/python3 -c '
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def comm(p):
    try:
        return open("/proc/%s/comm" % p).read().strip()
    except OSError:
        return ""
guards = [p for p in os.listdir("/proc") if p.isdigit() and comm(p) == "airlock-guard"]
print("guards: %d" % len(guards))
print("own fds: %s" % ("listed" if os.listdir("/proc/self/fd") else "none"))
for p in guards:
    try:
        os.listdir("/proc/%s/fd" % p)
        print("guard fds: listed")
    except OSError as e:
        print("guard fds: " + errno.errorcode.get(e.errno, str(e.errno)))
    opened = 0
    for n in range(64):
        try:
            os.close(os.open("/proc/%s/fd/%d" % (p, n), os.O_PATH))
            opened += 1
        except OSError:
            pass
    print("guard fd opens: %d" % opened)
    pidfd = libc.syscall(434, int(p), 0)
    copied = sum(1 for n in range(64) if pidfd >= 0 and libc.syscall(438, pidfd, n, 0) >= 0)
    print("guard fd copies: %d" % copied)'
	assert_rc 0 "the script ran"
	assert_contains "$OUT" "guards: 1" "the guard, seen from the sandbox"
	assert_contains "$OUT" "own fds: listed" "the agent'"'"'s own fds"
	assert_not_contains "$OUT" "guard fds: listed" "the guard'"'"'s fd list"
	assert_contains "$OUT" "guard fd opens: 0" "the guard'"'"'s fds through /proc"
	assert_contains "$OUT" "guard fd copies: 0" "the guard'"'"'s fds through pidfd_getfd"
}

# ---- the start-up walk fails closed --------------------------------------

# The next run's agent, against whatever the previous run left: make the
# directory $1 reachable again, then rewrite the repository $2's existing
# config with an open without O_CREAT (no creating call: the guard never
# sees it; only a read-only mount stops it), and through git. One line
# per attempt, as PROTECT_AGENT's, and an ordinary write in the current
# directory.
# shellcheck disable=SC2016
PROTECT_REOPEN_AGENT='
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
d=$1 repo=$2
try chmod-back chmod 755 "$d"
try edit /usr/bin/python3 -c "import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b\"[core]\\n\\tfsmonitor = id\\n\")" "$repo/.git/config"
try git-config git -C "$repo" config core.fsmonitor id
if echo neighbour > notes-beside.txt; then echo "neighbour: done"; else echo "neighbour: failed"; fi
'

# A repository at $WS/$1 (created when missing) with an ordinary file.
protect_walk_repo() {
	mkdir -p "$WS/$1" || fail "mkdir $1"
	git -C "$WS/$1" init -q || fail "git init $1"
}

# Run 1 sets mode $2 on $WS/$1 (nothing refuses a chmod); run 2 tries to
# reach and edit the config of the repository $WS/$3. Run 2 starts, and
# the edit fails: the directory the walk could not look through is
# read-only whole, its mode included.
protect_two_runs() {
	local d=$WS/$1 mode=$2 repo=$WS/$3 before
	before=$(sha256sum <"$repo/.git/config")
	pal -- chmod "$mode" "$d"
	assert_rc 0 "run 1: chmod $mode $1"
	[ $((8#$(stat -c %a "$d"))) = $((8#$mode)) ] || fail "run 1 did not leave $1 at mode $mode: $(stat -c %a "$d")"
	pal -- /bin/sh -c "$PROTECT_REOPEN_AGENT" sh "$d" "$repo"
	chmod 755 "$d"
	assert_rc 0 "run 2 after chmod $mode $1"
	assert_contains "$OUT" "edit: blocked" "run 2 after chmod $mode $1: the edit of $3/.git/config"
	assert_contains "$OUT" "git-config: blocked" "run 2 after chmod $mode $1: git config in $3"
	assert_contains "$OUT" "neighbour: done" "run 2 after chmod $mode $1: an ordinary file beside"
	assert_eq "$before" "$(sha256sum <"$repo/.git/config")" "$3/.git/config on the host after chmod $mode $1"
	assert_eq "" "$(git -C "$repo" config --get core.fsmonitor)" "core.fsmonitor in $3 after chmod $mode $1"
}

test_protect_unreadable_directory_across_runs() {
	command -v python3 >/dev/null || skip "no python3"
	protect_walk_repo .
	protect_walk_repo sub
	local mode
	# On .git itself: no read, search only, write only, write and search.
	for mode in 000 111 222 333; do
		protect_two_runs .git "$mode" .
	done
	# On a directory above a nested repository.
	for mode in 000 111 222; do
		protect_two_runs sub "$mode" sub
	done
	# Readable but not searchable: listed, but nothing inside opens.
	protect_two_runs sub 644 sub
	# The neighbour: with every mode restored, a normal run works on the
	# repository, and its config is still protected.
	pal -- /bin/sh -c 'git status --short >/dev/null && echo "status: done"
		git -c user.name=a -c user.email=a@example.test commit -q --allow-empty -m x && echo "commit: done"
		git config core.fsmonitor id || echo "config: blocked"'
	assert_rc 0 "a normal run"
	assert_contains "$OUT" "status: done" "git status"
	assert_contains "$OUT" "commit: done" "git commit"
	assert_contains "$OUT" "config: blocked" "git config with a readable .git"
}

# The workspace itself left unreadable: the next run either refuses, naming
# it, or keeps its protected paths read-only.
test_protect_unreadable_workspace_across_runs() {
	command -v python3 >/dev/null || skip "no python3"
	protect_walk_repo .
	local before
	before=$(sha256sum <"$WS/.git/config")
	pal -- chmod 000 "$WS"
	assert_rc 0 "run 1: chmod 000 on the workspace"
	# Started from outside it: the caller may not enter it either.
	printf 'version: 1\nsandbox:\n  workspace: %s\n  workspace_mode: direct\n' "$WS" >"$T/ws.yaml"
	LAST_CMD="airlock run --policy $T/ws.yaml (run 2)"
	(cd "$T" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run --policy "$T/ws.yaml" -- \
		/bin/sh -c "$PROTECT_REOPEN_AGENT" sh "$WS" "$WS" >"$T/run2.out" 2>"$T/run2.err" </dev/null)
	RC=$?
	OUT=$(cat "$T/run2.out")
	ERR=$(cat "$T/run2.err")
	chmod 755 "$WS"
	if [ "$RC" != 0 ]; then
		assert_contains "$ERR" "$WS" "the refusal names the workspace"
	else
		assert_contains "$OUT" "edit: blocked" "the edit of .git/config"
	fi
	assert_eq "$before" "$(sha256sum <"$WS/.git/config")" ".git/config on the host"
}

# A tree deeper than the walk goes, and one whose names are too long to
# join into a path: the directory where the walk stops is read-only whole
# (a repository planted beneath it cannot be edited); the run starts, and
# ordinary files above it stay writable.
test_protect_walk_limits_cover_what_they_stop_at() {
	command -v python3 >/dev/null || skip "no python3"
	local deep long i
	deep=$(printf 'd/%.0s' $(seq 70))
	protect_walk_repo "${deep%/}"
	long=$(printf 'n%.0s' $(seq 250))
	(cd "$WS" && for i in $(seq 17); do mkdir "$long" && cd "$long" || exit 1; done && mkdir .git &&
		printf '[core]\n' >.git/config) || fail "cannot make the long tree"
	local before_deep
	before_deep=$(sha256sum <"$WS/${deep}.git/config")
	# shellcheck disable=SC2016
	pal -- /bin/sh -c '
		try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
		try deep-edit /usr/bin/python3 -c "import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b\"[core]\\n\\tfsmonitor = id\\n\")" "$1.git/config"
		try deep-git git -C "$1" config core.fsmonitor id
		try long-edit /usr/bin/python3 -c "import os, sys
os.chdir(sys.argv[1])
for i in range(17):
    os.chdir(sys.argv[2])
fd = os.open(\".git/config\", os.O_WRONLY | os.O_APPEND)
os.write(fd, b\"[core]\\n\\tfsmonitor = id\\n\")" "$2" "$3"
		echo x > d/d/ok.txt && echo "shallow: done"' sh "$WS/$deep" "$WS" "$long"
	assert_rc 0 "the run over the deep and long trees"
	assert_contains "$OUT" "deep-edit: blocked" "the edit of the config 70 directories deep"
	assert_contains "$OUT" "deep-git: blocked" "git config 70 directories deep"
	assert_contains "$OUT" "long-edit: blocked" "the open for writing of the config under long names"
	assert_contains "$OUT" "shallow: done" "a file two directories deep"
	assert_eq "$before_deep" "$(sha256sum <"$WS/${deep}.git/config")" "the deep config on the host"
}

# A FIFO or a socket where a protected file would be: bound read-only over
# itself like a file (it cannot be removed, renamed or replaced by a
# file); an ordinary FIFO beside it can.
test_protect_special_files_at_protected_names() {
	command -v python3 >/dev/null || skip "no python3"
	mkfifo "$WS/.envrc" "$WS/plain-fifo" || fail "mkfifo"
	mkdir -p "$WS/s"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$WS/s/.envrc" ||
		fail "cannot bind a socket"
	# shellcheck disable=SC2016
	pal -- /bin/sh -c '
		try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
		try fifo-rm rm -f .envrc
		try fifo-mv mv .envrc x
		try sock-rm rm -f s/.envrc
		try sock-replace sh -c "rm -f s/.envrc; echo id > s/.envrc"
		try plain-rm rm -f plain-fifo'
	assert_rc 0 "the run"
	for e in fifo-rm fifo-mv sock-rm sock-replace; do
		assert_contains "$OUT" "$e: blocked" "$e"
	done
	assert_contains "$OUT" "plain-rm: done" "removing an ordinary FIFO"
	[ -p "$WS/.envrc" ] || fail ".envrc is no longer the FIFO"
	[ -S "$WS/s/.envrc" ] || fail "s/.envrc is no longer the socket"
}

# Started as root, a directory of another owner (mode 0700) that the
# sandbox's uid cannot enter: the walk, as root, lists the repository
# inside; the run starts, the directory is read-only whole, and the rest
# of the workspace works.
test_protect_other_owners_directory() {
	e2e_is_root || skip "needs root (a directory of another owner)"
	command -v python3 >/dev/null || skip "no python3"
	protect_walk_repo .
	protect_walk_repo other
	chown -R 54321:54321 "$WS/other" && chmod 700 "$WS/other" || fail "chown"
	local before
	before=$(sha256sum <"$WS/other/.git/config")
	pal -- /bin/sh -c "$PROTECT_REOPEN_AGENT" sh "$WS/other" "$WS/other"
	assert_rc 0 "the run with another owner's repository inside"
	assert_contains "$OUT" "chmod-back: blocked" "chmod of the other owner's directory"
	assert_contains "$OUT" "edit: blocked" "the edit of its config"
	assert_eq "$before" "$(sha256sum <"$WS/other/.git/config")" "its config on the host"
	pal -- /bin/sh -c 'git status --short >/dev/null && echo "status: done"'
	assert_contains "$OUT" "status: done" "git status in the workspace"
}

# A repository under a filesystem.deny path is neither walked nor bound
# (the sandbox shows an empty directory there): the run starts, and the
# repository beside it is protected as ever.
test_protect_skips_denied_directories() {
	protect_walk_repo .
	protect_walk_repo hidden/repo
	pal_policy "version: 1
filesystem:
  deny: [$WS/hidden]" -- /bin/sh -c 'ls -A hidden | wc -l; git config core.fsmonitor id || echo "config: blocked"'
	assert_rc 0 "the run with a denied directory holding a repository"
	assert_eq "0" "$(printf '%s\n' "$OUT" | sed -n 1p | tr -d ' ')" "entries of the denied directory inside"
	assert_contains "$OUT" "config: blocked" "git config beside it"
}

# ---- git directories of any name -----------------------------------------

# Git directories the table does not name, made by the user before the
# run: a bare repository kept as mirror/ (with a hook of its own, info/
# attributes and an alternate) and one two deep, a separate git directory
# that a .git file names relatively (wt/.git: "gitdir: ../gd"), a
# worktree's administrative directory, a directory a .git file names that
# is no git directory by its shape (HEAD and config only), and its
# neighbour of the same shape that no .git file names.
protect_gitdirs() {
	local g=(git -c user.name=e2e -c user.email=e2e@example.test -c init.defaultBranch=main)
	"${g[@]}" init -q "$WS/app" && echo a >"$WS/app/a.txt" && "${g[@]}" -C "$WS/app" add a.txt &&
		"${g[@]}" -C "$WS/app" commit -qm one || fail "the repository app"
	"${g[@]}" init -q --bare "$WS/mirror" && "${g[@]}" -C "$WS/app" push -q ../mirror HEAD:refs/heads/main ||
		fail "the bare repository mirror"
	printf '#!/bin/sh\nexit 0\n' >"$WS/mirror/hooks/post-receive" && chmod +x "$WS/mirror/hooks/post-receive"
	mkdir -p "$WS/mirror/info" && echo '*.c diff' >"$WS/mirror/info/attributes"
	echo "$WS/app/.git/objects" >"$WS/mirror/objects/info/alternates"
	mkdir -p "$WS/data" && "${g[@]}" init -q --bare "$WS/data/repo" || fail "the bare repository data/repo"
	printf '#!/bin/sh\nexit 0\n' >"$WS/data/repo/hooks/update" && chmod +x "$WS/data/repo/hooks/update"
	"${g[@]}" init -q --separate-git-dir="$WS/gd" "$WS/wt" && echo 'gitdir: ../gd' >"$WS/wt/.git" &&
		"${g[@]}" -C "$WS/wt" commit -q --allow-empty -m one || fail "the repository wt with its git directory gd"
	printf '#!/bin/sh\nexit 0\n' >"$WS/gd/hooks/pre-commit" && chmod +x "$WS/gd/hooks/pre-commit"
	"${g[@]}" -C "$WS/app" worktree add -q ../wt2 2>/dev/null || fail "git worktree add"
	assert_file "$WS/app/.git/worktrees/wt2/commondir" "the worktree's commondir"
	mkdir -p "$WS/gd2" "$WS/sub2" "$WS/plain"
	echo 'ref: refs/heads/main' >"$WS/gd2/HEAD" && printf '[core]\n' >"$WS/gd2/config"
	echo 'gitdir: ../gd2' >"$WS/sub2/.git"
	echo 'ref: refs/heads/main' >"$WS/plain/HEAD" && printf '[core]\n' >"$WS/plain/config"
}

PROTECT_GITDIR_FILES="mirror/config mirror/hooks/post-receive mirror/info/attributes mirror/objects/info/alternates
data/repo/config data/repo/hooks/update gd/config gd/hooks/pre-commit app/.git/worktrees/wt2/commondir gd2/config"

# The agent rewrites each existing file in place: an open without O_CREAT
# never reaches the guard, only a read-only mount stops it. One line per
# file, "FILE: written" or "FILE: ERRNO". Then the neighbours.
# shellcheck disable=SC2016
PROTECT_GITDIR_AGENT='
try() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$n: done"; else echo "$n: blocked"; fi; }
g() { git -c user.name=agent -c user.email=agent@example.test "$@"; }
for f in $FILES plain/config; do
	/usr/bin/python3 -c "import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
    os.write(fd, b\"#\\n\")
    print(sys.argv[1] + \": written\")
except OSError as e:
    print(sys.argv[1] + \": \" + errno.errorcode.get(e.errno, str(e.errno)))" "$f"
done
try fsmonitor git --git-dir=mirror config core.fsmonitor "sh -c id"
try deep-fsmonitor git --git-dir=data/repo config core.fsmonitor "sh -c id"
try gd-fsmonitor git -C wt config core.fsmonitor "sh -c id"
try hook-new sh -c "echo id > mirror/hooks/post-checkout"
try new-attributes sh -c "echo \"*.c filter=x\" > data/repo/info/attributes"
try new-alternates sh -c "echo /tmp > data/repo/objects/info/alternates"
try new-alternates-link ln -s ../../../../mirror/objects/info/alternates data/repo/objects/info/alternates
try new-http-alternates sh -c "echo http://x.test/ > data/repo/objects/info/http-alternates"
try info-neighbour sh -c "mkdir -p notes/info && echo x > notes/info/attributes"
try objinfo-neighbour sh -c "mkdir -p notes/objects/info && echo x > notes/objects/info/alternates"
git --git-dir=mirror log --oneline >/dev/null && echo "mirror-log: done"
(cd app && g commit -q --allow-empty -m two && g push -q ../mirror HEAD:refs/heads/main) && echo "push: done"
git -C wt status --short >/dev/null && echo "status: done"
g -C wt commit -q --allow-empty -m two && echo "wt-commit: done"
git -C wt2 status --short >/dev/null && echo "wt2-status: done"
g -C app worktree add -q own && g -C app worktree remove own && echo "own-worktree: done"
true
'

# A git directory of any name has its config, hooks, commondir,
# info/attributes and objects/info/alternates read-only as .git's are, and
# so does whatever directory a .git file names in the workspace; its
# objects and refs stay writable (git push, git commit), and a directory
# that merely holds a HEAD and a config file stays writable.
test_protect_git_directories_of_any_name() {
	command -v python3 >/dev/null || skip "no python3"
	protect_gitdirs
	local f before
	# shellcheck disable=SC2086
	before=$(cd "$WS" && sha256sum $PROTECT_GITDIR_FILES) || fail "sha256sum"
	pal -- /usr/bin/env FILES="$PROTECT_GITDIR_FILES" /bin/sh -c "$PROTECT_GITDIR_AGENT"
	assert_rc 0 "the agent's run"
	for f in $PROTECT_GITDIR_FILES; do
		assert_contains "$OUT" "$f: EROFS" "the in-place edit of $f"
	done
	for f in fsmonitor deep-fsmonitor gd-fsmonitor hook-new new-attributes new-alternates \
		new-alternates-link new-http-alternates; do
		assert_contains "$OUT" "$f: blocked" "the escape $f"
	done
	assert_no_file "$WS/data/repo/info/attributes" "a new info/attributes of a bare repository"
	assert_no_file "$WS/data/repo/objects/info/alternates" "new alternates of a bare repository"
	# The neighbours.
	assert_contains "$OUT" "plain/config: written" "a config beside a HEAD, no git directory"
	for f in info-neighbour objinfo-neighbour mirror-log push status wt-commit wt2-status own-worktree; do
		assert_contains "$OUT" "$f: done" "$f inside the sandbox"
	done
	# shellcheck disable=SC2086
	assert_eq "$before" "$(cd "$WS" && sha256sum $PROTECT_GITDIR_FILES)" "the protected files on the host"
	assert_eq "$(git -C "$WS/app" rev-parse HEAD)" "$(git --git-dir="$WS/mirror" rev-parse main)" \
		"the commit pushed into mirror, seen on the host"
	assert_eq "two" "$(git -C "$WS/wt" log -1 --format=%s)" "the commit made in wt (objects and refs in gd)"
	assert_eq "" "$(git --git-dir="$WS/mirror" config --get core.fsmonitor)" "core.fsmonitor in mirror on the host"
	assert_no_file "$WS/mirror/hooks/post-checkout" "the planted hook"
	assert_eq "$(printf '[core]\n#')" "$(cat "$WS/plain/config")" "the neighbour's config on the host"
	# The same edits land with the table off: the files are writable
	# but for the protection (so this test can fail).
	pal_policy 'version: 1
filesystem:
  protect_defaults: false' -- /usr/bin/env FILES="$PROTECT_GITDIR_FILES" /bin/sh -c "$PROTECT_GITDIR_AGENT"
	assert_rc 0 "the run with the table off"
	for f in $PROTECT_GITDIR_FILES; do
		assert_contains "$OUT" "$f: written" "the in-place edit of $f with the table off"
	done
}
