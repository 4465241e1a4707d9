# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The command line outside `run`.

test_doctor() {
	LAST_CMD="airlock doctor"
	OUT=$("$AIRLOCK" doctor 2>&1)
	RC=$?
	assert_rc 0 "airlock doctor on a machine where the suite runs"
	assert_contains "$OUT" "Landlock" "doctor reports Landlock"
	assert_match "$OUT" '[Ss]eccomp' "doctor reports seccomp"
}

test_version_and_help() {
	LAST_CMD="airlock version"
	OUT=$("$AIRLOCK" version 2>&1)
	RC=$?
	assert_rc 0 "airlock version"
	assert_match "$OUT" '[0-9]+\.[0-9]+' "a version number"
	LAST_CMD="airlock --help"
	OUT=$("$AIRLOCK" --help 2>&1)
	RC=$?
	assert_rc 0 "airlock --help"
	assert_contains "$OUT" "run" "help mentions run"
	assert_contains "$OUT" "policy" "help mentions policy"
}

# Started from the home directory, or above it, with no workspace named,
# the whole home would be the agent's to read and change: refused, saying
# so. Named in a policy it is meant, and runs; from a project it runs.
test_workspace_holding_the_home_refused_unless_named() {
	local d
	for d in "$E2E_HOME" "$(dirname "$E2E_HOME")"; do
		(cd "$d" && HOME="$E2E_HOME" timeout 30 "$AIRLOCK" run -- /bin/sh -c 'echo RAN' >"$T/h.out" 2>"$T/h.err")
		RC=$?
		assert_eq 125 "$RC" "a run from $d is refused"
		assert_not_contains "$(cat "$T/h.out")" "RAN" "the command did not start"
		assert_contains "$(cat "$T/h.err")" "which holds your home" "the message says why"
		assert_contains "$(cat "$T/h.err")" "sandbox.workspace" "and how to mean it"
	done
	printf 'version: 1\nsandbox:\n  workspace: %s\n' "$E2E_HOME" >"$T/home.yaml"
	(cd "$E2E_HOME" && HOME="$E2E_HOME" timeout 30 "$AIRLOCK" run --policy "$T/home.yaml" -- /bin/sh -c 'echo RAN' >"$T/h.out" 2>"$T/h.err")
	assert_eq 0 "$?" "a home named as the workspace runs: $(cat "$T/h.err")"
	al -- /bin/sh -c 'echo RAN'
	assert_rc 0 "a run from a project directory"
	assert_contains "$OUT" "RAN" "runs"
}
