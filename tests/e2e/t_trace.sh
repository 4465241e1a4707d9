# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# --trace-denials: blocked operations are reported at exit on stderr, one
# "airlock: denied:" line each, naming the system call and the path.

test_trace_denials_names_path_and_syscall() {
	make_fake_secret
	# shellcheck disable=SC2016
	al --trace-denials -- /bin/sh -c '
		cat "$1" >/dev/null 2>&1
		./airlock-probe ptrace-attach >/dev/null
		cp ./airlock-probe /tmp/p && ./airlock-probe exec /tmp/p list >/dev/null
		exit 0' sh "$SECRET"
	assert_rc 0 "the traced command's own status"
	assert_contains "$ERR" "airlock: denied:" "denial lines"
	assert_match "$ERR" '^airlock: denied:.*ptrace' "a line naming ptrace"
	assert_match "$ERR" '^airlock: denied:.*/tmp/p' "a line naming the exec from /tmp"
	assert_match "$ERR" '^airlock: denied:.*id_rsa' "a line naming the secret's path"
}

test_trace_denials_quiet_when_nothing_denied() {
	al --trace-denials -- /bin/sh -c 'echo fine >"$0/ok.txt"; cat "$0/ok.txt"' "$WS"
	assert_rc 0 "a run with nothing denied"
	assert_eq "fine" "$OUT" "its output"
	assert_not_contains "$ERR" "airlock: denied:" "denial lines for a clean run"
	# Without the option, a denied run says nothing either.
	al -- ./airlock-probe ptrace-attach
	check_blocked ptrace-attach
	assert_not_contains "$ERR" "airlock: denied:" "denial lines without --trace-denials"
}
