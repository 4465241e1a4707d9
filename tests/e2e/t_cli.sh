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
