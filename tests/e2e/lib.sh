# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# A small harness for the end-to-end suite, sourced by run.sh.
#
# A test is a shell function named test_* in a tests/e2e/t_*.sh file. Each
# runs in a subshell of its own with:
#   WS         a fresh workspace (mktemp -d under /tmp, owned by the caller),
#              the current directory, with the probe copied in as
#              ./airlock-probe (the sandbox's /tmp is private, so the probe
#              must live in the workspace to be reachable inside)
#   T          a private scratch directory for the test itself: policies,
#              logs, listener output. Never visible inside the sandbox.
#   E2E_HOME   the HOME that airlock is given (see e2e_home below)
# and ends with ok (returning normally), fail MESSAGE, or skip REASON.
# Assertions call fail themselves. WARNING: fail and skip exit the test's
# subshell, so they must not be called inside $(...).
#
# Environment: AIRLOCK (the airlock binary), PROBE (the static probe),
# E2E_TIMEOUT (seconds one airlock run may take, default 60),
# E2E_REAL_HOME=1 (use the caller's real HOME for fake secrets: set by
# run-unprivileged.sh for its dedicated test user).

E2E_PASS=0
E2E_FAIL=0
E2E_SKIP=0
E2E_FAILED=()
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
E2E_VERBOSE=${E2E_VERBOSE:-0}
E2E_SKIP_STATUS=77
# Marker written into every fake secret, so that cleanup never removes a
# file this suite did not create.
E2E_FAKE_MARK="AIRLOCK-E2E-FAKE-SECRET-DO-NOT-USE"

e2e_is_root() { [ "$(id -u)" -eq 0 ]; }

# ---------------------------------------------------------------- outcomes

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

skip() {
	printf 'SKIP: %s\n' "$*" >&2
	exit "$E2E_SKIP_STATUS"
}

# Shows the last airlock run in a failure message.
e2e_last_run() {
	printf '\n    command: %s\n    exit status: %s\n    stdout: %s\n    stderr: %s' \
		"${LAST_CMD:-}" "${RC:-}" "$(printf '%s' "${OUT:-}" | head -c 2000)" \
		"$(printf '%s' "${ERR:-}" | head -c 2000)"
}

# airlock review/apply/discard as the user runs them after a review-mode
# run: sets ROUT, RERR, RRC (stdout also stays in $T/rv.out).
rv() { # ARGS...
	HOME="$E2E_HOME" "$AIRLOCK" "$@" >"$T/rv.out" 2>"$T/rv.err"
	RRC=$?
	ROUT=$(cat "$T/rv.out")
	RERR=$(cat "$T/rv.err")
}

# SID: the review session the last run held, from its line on stderr.
review_session() {
	SID=$(printf '%s\n' "$ERR" | sed -n 's/^airlock: review mode: [0-9]* changes* held in session \([0-9a-f-]*\): .*/\1/p')
	[ -n "$SID" ] || fail "no session announced$(e2e_last_run)"
}

# ---------------------------------------------------------------- assertions

assert_eq() { # EXPECTED ACTUAL WHAT
	[ "$1" = "$2" ] || fail "$3: expected '$1', got '$2'$(e2e_last_run)"
}

assert_ne() { # UNEXPECTED ACTUAL WHAT
	[ "$1" != "$2" ] || fail "$3: got '$2', which must not be$(e2e_last_run)"
}

assert_contains() { # HAYSTACK NEEDLE WHAT
	case "$1" in
	*"$2"*) ;;
	*) fail "$3: '$2' not found$(e2e_last_run)" ;;
	esac
}

assert_not_contains() { # HAYSTACK NEEDLE WHAT
	case "$1" in
	*"$2"*) fail "$3: '$2' must not appear$(e2e_last_run)" ;;
	*) ;;
	esac
}

assert_match() { # STRING ERE WHAT
	printf '%s\n' "$1" | grep -Eq -- "$2" || fail "$3: no match for /$2/$(e2e_last_run)"
}

assert_no_match() { # STRING ERE WHAT
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		fail "$3: unexpected match for /$2/$(e2e_last_run)"
	fi
}

assert_rc() { # EXPECTED WHAT  (checks RC of the last run)
	[ "${RC:-}" = "$1" ] || fail "$2: exit status $1 expected$(e2e_last_run)"
}

assert_file() { [ -e "$1" ] || fail "$2: $1 does not exist$(e2e_last_run)"; }
assert_no_file() { [ ! -e "$1" ] || fail "$2: $1 exists$(e2e_last_run)"; }

# ---------------------------------------------------------------- running

# al [RUN-OPTIONS...] -- CMD [ARGS...]
# `airlock run` in $WS with HOME=$E2E_HOME, stdin from /dev/null, bounded by
# E2E_TIMEOUT. Sets OUT, ERR (captured text) and RC (exit status).
al() {
	local n=$((++E2E_RUN))
	LAST_CMD="airlock run $*"
	(cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run "$@" \
		>"$T/run$n.out" 2>"$T/run$n.err" </dev/null)
	RC=$?
	OUT=$(cat "$T/run$n.out")
	ERR=$(cat "$T/run$n.err")
	if [ "$RC" = 124 ]; then
		fail "airlock did not finish within ${E2E_TIMEOUT}s$(e2e_last_run)"
	fi
	return 0
}

# al_policy POLICY-TEXT -- CMD...: the same with a policy file written to $T.
al_policy() {
	local text=$1
	shift
	printf '%s\n' "$text" >"$T/policy.yaml"
	[ "$1" = "--" ] && shift
	al --policy "$T/policy.yaml" -- "$@"
}

# probe TEST [ARGS...]: the probe inside the default sandbox.
probe() { al -- ./airlock-probe "$@"; }

# The probe's verdict line for TEST in $OUT.
e2e_probe_line() { printf '%s\n' "$OUT" | grep -m1 -- "^$1: " || true; }

# check_blocked TEST: the last run was the attack TEST and it was blocked.
check_blocked() {
	local line
	line=$(e2e_probe_line "$1")
	case "$line" in
	"$1: blocked"*) [ "$RC" = 0 ] || fail "$1: blocked, but exit status $RC$(e2e_last_run)" ;;
	"") fail "$1: the probe printed no verdict$(e2e_last_run)" ;;
	*) fail "attack $1 was not blocked: $line$(e2e_last_run)" ;;
	esac
}

# check_allowed TEST: the last run was the neighbour TEST and it worked.
check_allowed() {
	local line
	line=$(e2e_probe_line "$1")
	case "$line" in
	"$1: allowed"*) [ "$RC" = 0 ] || fail "$1: allowed, but exit status $RC$(e2e_last_run)" ;;
	"") fail "$1: the probe printed no verdict$(e2e_last_run)" ;;
	*) fail "neighbour $1 must work: $line$(e2e_last_run)" ;;
	esac
}

# check_control TEST: the last run was an attack run as a control where it
# must succeed (outside the sandbox, or in namespaces the test made).
check_control() {
	local line
	line=$(e2e_probe_line "$1")
	case "$line" in
	"$1: allowed"*) [ "$RC" = 1 ] || fail "control $1: allowed, but exit status $RC$(e2e_last_run)" ;;
	*) fail "control $1 must succeed outside the sandbox: '$line'$(e2e_last_run)" ;;
	esac
}

# outside TEST [ARGS...]: the probe outside any sandbox, for controls that
# only talk to the test's own loopback listeners.
outside() {
	LAST_CMD="(outside the sandbox) airlock-probe $*"
	OUT=$("$PROBE" "$@" 2>&1)
	RC=$?
	ERR=
}

# expect_blocked ATTACK [ARGS...] / expect_ok NEIGHBOUR [ARGS...]
expect_blocked() {
	probe "$@"
	check_blocked "$1"
}

expect_ok() {
	case "$1" in
	*-ok) ;;
	*) fail "harness: expect_ok needs a neighbour test (NAME-ok), got $1" ;;
	esac
	probe "$@"
	check_allowed "$1"
}

# bg_register PID: kill PID (and wait for it) when the test ends.
bg_register() { printf '%s\n' "$1" >>"$T/.bg_pids"; }

# e2e_gone PID: PID has ended (gone, or a zombie nobody reaped yet: its
# files are closed either way).
e2e_gone() {
	local st
	st=$(sed -n 's/^.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds. Bounded,
# and not a timing assertion: a slow machine only waits longer.
wait_for() {
	local limit=$(($1 * 10)) i=0
	shift
	while ! "$@"; do
		i=$((i + 1))
		[ "$i" -ge "$limit" ] && return 1
		sleep 0.1
	done
	return 0
}

# start_listener tcp|udp: a loopback server outside the sandbox. Sets PORT.
start_listener() {
	local kind=$1 pid
	"$PROBE" "serve-$kind" 0 120 >"$T/listener-$kind.out" 2>&1 &
	pid=$!
	bg_register "$pid"
	wait_for 10 grep -q '^port ' "$T/listener-$kind.out" ||
		fail "the $kind listener did not start: $(cat "$T/listener-$kind.out")"
	PORT=$(sed -n 's/^port //p' "$T/listener-$kind.out")
}

# start_abstract_listener NAME: an abstract unix socket outside the sandbox.
start_abstract_listener() {
	local pid
	"$PROBE" serve-abstract "$1" 120 >"$T/listener-abstract.out" 2>&1 &
	pid=$!
	bg_register "$pid"
	wait_for 10 grep -q '^listening ' "$T/listener-abstract.out" ||
		fail "the abstract listener did not start: $(cat "$T/listener-abstract.out")"
}

# track_probe_write PATH: PATH is a target of the probe's write attack. If
# the attack succeeds where it must not, the file it leaves outside the test's
# directories is removed at cleanup (only if it did not exist before and holds
# nothing but the probe's line).
track_probe_write() {
	[ -e "$1" ] || printf '%s\n' "$1" >>"$T/.probe_files"
}

# make_home_file NAME: a file in $E2E_HOME holding the fake-secret marker,
# removed at cleanup (never one the suite did not make). Sets HOME_FILE.
make_home_file() {
	HOME_FILE="$E2E_HOME/$1"
	if [ -e "$HOME_FILE" ] && ! grep -q "$E2E_FAKE_MARK" "$HOME_FILE" 2>/dev/null; then
		skip "$HOME_FILE exists and was not made by this suite"
	fi
	printf '%s\n' "$E2E_FAKE_MARK" >"$HOME_FILE" || fail "cannot write $HOME_FILE"
	printf '%s\n' "$HOME_FILE" >>"$T/.fake_files"
}

# make_fake_secret: a fake private key at $E2E_HOME/.ssh/id_rsa. Sets SECRET.
make_fake_secret() {
	SECRET="$E2E_HOME/.ssh/id_rsa"
	if [ ! -d "$E2E_HOME/.ssh" ]; then
		mkdir "$E2E_HOME/.ssh" || fail "cannot create $E2E_HOME/.ssh"
		printf '%s\n' "$E2E_HOME/.ssh" >>"$T/.fake_dirs"
	fi
	chmod 700 "$E2E_HOME/.ssh"
	if [ -e "$SECRET" ] && ! grep -q "$E2E_FAKE_MARK" "$SECRET" 2>/dev/null; then
		skip "$SECRET exists and is not a fake made by this suite"
	fi
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n' \
		"$E2E_FAKE_MARK" >"$SECRET"
	chmod 600 "$SECRET"
	printf '%s\n' "$SECRET" >>"$T/.fake_files"
}

# ---------------------------------------------------------------- lifecycle

# The HOME airlock sees. A temporary directory outside /tmp (a HOME under
# /tmp would be hidden by the private /tmp alone and prove nothing), unless
# E2E_REAL_HOME=1 asks for the real one of a dedicated test user.
e2e_home() {
	if [ "${E2E_REAL_HOME:-0}" = 1 ] && [ -d "${HOME:-}" ] && [ -w "$HOME" ]; then
		E2E_HOME=$HOME
	else
		E2E_HOME=$(mktemp -d /var/tmp/airlock-e2e-home.XXXXXX) || fail "mktemp HOME"
		printf '%s\n' "$E2E_HOME" >>"$T/.rm_dirs"
	fi
}

e2e_cleanup() {
	local pid f d
	if [ -f "$T/.bg_pids" ]; then
		while read -r pid; do
			kill "$pid" 2>/dev/null
			kill -9 "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
		done <"$T/.bg_pids"
	fi
	if [ -f "$T/.fake_files" ]; then
		while read -r f; do
			grep -q "$E2E_FAKE_MARK" "$f" 2>/dev/null && rm -f "$f"
		done <"$T/.fake_files"
	fi
	if [ -f "$T/.probe_files" ]; then
		while read -r f; do
			[ "$(cat "$f" 2>/dev/null)" = "airlock-probe was here" ] && rm -f "$f"
		done <"$T/.probe_files"
	fi
	# Directories the suite created, only if it left them empty.
	if [ -f "$T/.fake_dirs" ]; then
		while read -r d; do
			rmdir "$d" 2>/dev/null
		done <"$T/.fake_dirs"
	fi
	if [ -f "$T/.rm_dirs" ]; then
		while read -r d; do
			case "$d" in /var/tmp/airlock-e2e-* | /tmp/airlock-e2e-*) rm -rf "$d" ;; esac
		done <"$T/.rm_dirs"
	fi
	[ -n "${WS:-}" ] && rm -rf "$WS"
	[ -n "${T:-}" ] && rm -rf "$T"
}

e2e_setup() {
	T=$(mktemp -d /tmp/airlock-e2e-t.XXXXXX) || fail "mktemp T"
	WS=$(mktemp -d /tmp/airlock-e2e-ws.XXXXXX) || fail "mktemp WS"
	trap e2e_cleanup EXIT
	E2E_RUN=0
	e2e_home
	# The decision log is on by default, in the state directory: each
	# test's logs and authority key stay in its own $T, removed with it,
	# and a test user's real home (which may be unwritable) is left alone.
	XDG_STATE_HOME="$T/state"
	cp "$PROBE" "$WS/airlock-probe" && chmod 755 "$WS/airlock-probe" || fail "cannot copy the probe"
	cd "$WS" || fail "cd $WS"
	export AIRLOCK PROBE WS T E2E_HOME XDG_STATE_HOME
}

# e2e_run_test FUNCTION: run one test in its own subshell and count it.
e2e_run_test() {
	local fn=$1 log rc
	log=$(mktemp /tmp/airlock-e2e-log.XXXXXX)
	(
		e2e_setup
		"$fn"
	) >"$log" 2>&1 </dev/null
	rc=$?
	case "$rc" in
	0)
		E2E_PASS=$((E2E_PASS + 1))
		printf 'ok   %s\n' "$fn"
		[ "$E2E_VERBOSE" = 1 ] && sed 's/^/     /' "$log"
		;;
	"$E2E_SKIP_STATUS")
		E2E_SKIP=$((E2E_SKIP + 1))
		printf 'skip %s: %s\n' "$fn" "$(sed -n 's/^SKIP: //p' "$log" | head -1)"
		;;
	*)
		E2E_FAIL=$((E2E_FAIL + 1))
		E2E_FAILED+=("$fn")
		printf 'FAIL %s\n' "$fn"
		sed 's/^/     /' "$log"
		;;
	esac
	rm -f "$log"
}

e2e_summary() {
	local line="$E2E_PASS passed, $E2E_FAIL failed"
	[ "$E2E_SKIP" -gt 0 ] && line="$line, $E2E_SKIP skipped"
	if [ "$E2E_FAIL" -gt 0 ]; then
		printf 'failed tests: %s\n' "${E2E_FAILED[*]}"
	fi
	printf '%s\n' "$line"
	[ "$E2E_FAIL" -eq 0 ]
}

# start_servers: the loopback servers of servers.py, with their files in
# $T/srv (a token file written there first is the secret the HTTPS server
# checks); sets HP (HTTP), SP (HTTPS) and WP (websocket) to their ports.
# git_served_repo NAME TEXT: a bare repository $T/srv/git/NAME.git with one
# commit (a README holding TEXT) on main, ready for git's dumb HTTP from the
# servers start_servers runs.
git_served_repo() {
	local g="$T/srv/git"
	mkdir -p "$g"
	git init -q --bare "$g/$1.git"
	rm -rf "$T/src"
	git -C "$T" -c init.defaultBranch=main init -q src
	echo "$2" >"$T/src/README"
	git -C "$T/src" add README
	git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm first
	git -C "$T/src" push -q "$g/$1.git" HEAD:main
	git -C "$g/$1.git" symbolic-ref HEAD refs/heads/main
	git -C "$g/$1.git" update-server-info
}

start_servers() {
	mkdir -p "$T/srv"
	/usr/bin/python3 "$here/servers.py" "$T/srv" >"$T/srv/log" 2>&1 &
	bg_register $!
	local i
	for i in $(seq 100); do
		[ -f "$T/srv/ports" ] && break
		sleep 0.1
	done
	[ -f "$T/srv/ports" ] || fail "test servers did not start: $(cat "$T/srv/log")"
	read -r HP SP WP <"$T/srv/ports"
}

# step_up_decide SOCK TOKEN TOOL DECIDE: as a person would, from outside
# the sandbox: the control socket is the user's alone, lists the waiting
# call, refuses an unknown token, takes DECIDE (approve or deny) once.
step_up_decide() {
	local sock=$1 token=$2 tool=$3 decide=$4
	[ -S "$sock" ] || fail "no control socket at '$sock'"
	assert_eq 600 "$(stat -c %a "$sock")" "the control socket is the user's alone"
	assert_eq 700 "$(stat -c %a "$(dirname "$sock")")" "in a directory that is the user's alone"
	"$AIRLOCK" approve --list >"$T/list.out" 2>&1
	assert_eq 0 "$?" "airlock approve --list: $(cat "$T/list.out")"
	assert_eq "$sock $token $tool" "$(cat "$T/list.out")" "the waiting call is listed with its socket"
	"$AIRLOCK" approve --socket "$sock" 77 >"$T/decide0.out" 2>&1
	assert_eq 1 "$?" "an unknown token is refused: $(cat "$T/decide0.out")"
	# Without --socket: the only socket in the run directory.
	"$AIRLOCK" "$decide" "$token" >"$T/decide.out" 2>&1
	assert_eq 0 "$?" "airlock $decide: $(cat "$T/decide.out")"
	"$AIRLOCK" "$decide" --socket "$sock" "$token" >"$T/decide2.out" 2>&1
	assert_eq 1 "$?" "a call is decided once: $(cat "$T/decide2.out")"
}

# The processes below PID (children's children included), one a line.
descendants() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}
