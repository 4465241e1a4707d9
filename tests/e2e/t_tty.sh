# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Interactive use: when stdin is a terminal, the command gets a terminal of
# airlock's own, and still cannot inject input with TIOCSTI.

# in_script CMD: run CMD under util-linux script(1), i.e. on a fresh pty.
in_script() {
	command -v script >/dev/null || skip "no script(1)"
	LAST_CMD="script -qec \"$1\" /dev/null"
	OUT=$(cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" script -qec "$1" /dev/null 2>&1 </dev/null)
	RC=$?
	OUT=$(printf '%s' "$OUT" | tr -d '\r')
	ERR=
}

test_terminal_inside_when_stdin_is_a_tty() {
	in_script "$AIRLOCK run -- /bin/sh -c 'tty; test -t 0 && echo TTY-OK; test -t 1 && echo OUT-TTY'"
	assert_rc 0 "script running airlock"
	assert_contains "$OUT" "TTY-OK" "stdin inside is a terminal"
	assert_match "$OUT" '^/dev/(pts/[0-9]+|tty|console)' "tty(1) names a terminal"
	assert_not_contains "$OUT" "not a tty" "tty(1) output"
	in_script "$AIRLOCK run -- ./airlock-probe ioctl-ok"
	check_allowed ioctl-ok
	assert_contains "$OUT" "TIOCGWINSZ" "window size ioctl on the terminal"
}

test_tiocsti_blocked_on_a_real_terminal() {
	in_script "$AIRLOCK run -- ./airlock-probe tiocsti"
	check_blocked tiocsti
	assert_contains "$OUT" "fd0(tty)" "fd 0 was a terminal in this test"
	in_script "$AIRLOCK run -- ./airlock-probe tioclinux"
	check_blocked tioclinux
	in_script "$AIRLOCK run -- ./airlock-probe ioctl-ok"
	check_allowed ioctl-ok
}
