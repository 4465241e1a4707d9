# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The process model: identity, inherited file descriptors, exit statuses,
# signals, the init process, and what happens when the supervisor dies.

# Outside uids of every line of the uid_map printed by `cat`.
e2e_outside_uids() { printf '%s\n' "$OUT" | awk 'NF == 3 { print $2 }' | sort -u | tr '\n' ' '; }

test_uid_mapping() {
	al -- cat /proc/self/uid_map
	assert_rc 0 "reading uid_map"
	[ -n "$OUT" ] || fail "empty uid_map$(e2e_last_run)"
	if e2e_is_root; then
		# Host root is never mapped into the sandbox.
		assert_no_match "$OUT" '^[[:space:]]*[0-9]+[[:space:]]+0[[:space:]]' "uid_map outside uid 0"
	else
		assert_eq "$(id -u) " "$(e2e_outside_uids)" "outside uid of an unprivileged run"
	fi
	expect_blocked uid-map
	al -- id -u
	assert_rc 0 "id -u inside"
	[ -n "$OUT" ] || fail "id -u printed nothing"
	# Neighbour: the sandbox still has an identity to work with.
	expect_ok write-ok "$WS/owned.txt"
}

test_uid_follows_workspace_owner_as_root() {
	e2e_is_root || skip "only root chooses the host uid"
	chown 4242:4242 "$WS"
	al -- cat /proc/self/uid_map
	assert_rc 0 "reading uid_map"
	assert_eq "4242 " "$(e2e_outside_uids)" "outside uid for a workspace owned by uid 4242"
	expect_ok write-ok "$WS/by-owner.txt"
	chown 0:0 "$WS"
	al -- cat /proc/self/uid_map
	assert_eq "65534 " "$(e2e_outside_uids)" "outside uid for a root-owned workspace"
}

test_policy_host_uid_override_as_root() {
	e2e_is_root || skip "only root chooses the host uid"
	printf 'version: 1\nsandbox:\n  host_uid: 4343\n  host_gid: 4343\n' >"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- cat /proc/self/uid_map
	assert_rc 0 "reading uid_map"
	assert_eq "4343 " "$(e2e_outside_uids)" "outside uid set by sandbox.host_uid"
}

test_no_inherited_fds() {
	local n
	printf 'secret\n' >"$T/held-open"
	n=$((++E2E_RUN))
	LAST_CMD="exec 3..9 open; airlock run -- ./airlock-probe fds"
	(
		exec 3<"$T/held-open" 4</etc/passwd 5>"$T/w5" 6<>"$T/w6" 7</etc/passwd 8<"$T/held-open" 9>"$T/w9"
		cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run -- ./airlock-probe fds \
			>"$T/fds.out" 2>"$T/fds.err" </dev/null
	)
	RC=$?
	OUT=$(cat "$T/fds.out")
	ERR=$(cat "$T/fds.err")
	check_blocked fds
	# Neighbour: 0, 1 and 2 are there and usable.
	al -- sh -c 'echo out; echo err >&2; read -r x; echo "read rc=$?"'
	assert_contains "$OUT" "out" "stdout inside"
	assert_contains "$ERR" "err" "stderr inside"
	assert_contains "$OUT" "read rc=1" "stdin (at EOF) inside"
}

test_exit_status_propagation() {
	al -- true
	assert_rc 0 "exit 0"
	al -- sh -c 'exit 42'
	assert_rc 42 "exit 42"
	al -- sh -c 'kill -TERM $$'
	assert_rc 143 "killed by SIGTERM"
	al -- sh -c 'kill -KILL $$'
	assert_rc 137 "killed by SIGKILL"
	al -- sh -c 'kill -SEGV $$'
	assert_rc 139 "killed by SIGSEGV"
}

test_usage_errors_exit_2() {
	local marker="$WS/should-not-exist"
	(cd "$WS" && "$AIRLOCK" run >/dev/null 2>&1)
	RC=$? LAST_CMD="airlock run"
	assert_rc 2 "run without a command"
	(cd "$WS" && "$AIRLOCK" run --no-such-option -- touch "$marker" >/dev/null 2>&1)
	RC=$? LAST_CMD="airlock run --no-such-option -- touch"
	assert_rc 2 "run with an unknown option"
	assert_no_file "$marker" "the command ran despite a usage error"
	(cd "$WS" && "$AIRLOCK" run --policy "$T/does-not-exist.yaml" -- touch "$marker" >/dev/null 2>&1)
	RC=$? LAST_CMD="airlock run --policy MISSING -- touch"
	assert_rc 2 "run with a missing policy file"
	assert_no_file "$marker" "the command ran despite a missing policy"
	("$AIRLOCK" no-such-command >/dev/null 2>&1)
	RC=$? LAST_CMD="airlock no-such-command"
	assert_rc 2 "an unknown command"
}

# start_bg_airlock CMD...: airlock run in the background, with SIGINT, SIGTERM
# and SIGHUP at their defaults (a non-interactive shell starts background
# jobs with SIGINT ignored). Sets AL_PID.
start_bg_airlock() {
	# The host watches the workspace while the command runs: direct mode.
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	(cd "$WS" && HOME="$E2E_HOME" exec env --default-signal=INT,TERM,HUP "$AIRLOCK" run --policy "$T/direct.yaml" -- "$@" \
		>"$T/bg.out" 2>"$T/bg.err" </dev/null) &
	AL_PID=$!
	bg_register "$AL_PID"
}

# wait_bg_airlock: wait (bounded) for AL_PID; sets RC, OUT, ERR.
wait_bg_airlock() {
	local i
	for i in $(seq 1 300); do
		kill -0 "$AL_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$AL_PID" 2>/dev/null && fail "airlock did not exit after the signal"
	wait "$AL_PID"
	RC=$?
	OUT=$(cat "$T/bg.out")
	ERR=$(cat "$T/bg.err")
}

e2e_signal_forwarding() { # SIGNAL
	local sig=$1
	rm -f "$WS/ready" "$WS/marker"
	LAST_CMD="airlock run -- sh (trap $sig, exit 7); kill -$sig airlock"
	# shellcheck disable=SC2016
	start_bg_airlock /bin/sh -c 'trap "echo got-$0 >\"$1/marker\"; exit 7" '"$sig"'
		echo ready >"$1/ready"
		sleep 100 & wait $!' "$sig" "$WS"
	wait_for 30 test -e "$WS/ready" || fail "the command inside never started: $(cat "$T/bg.err")"
	kill "-$sig" "$AL_PID"
	wait_bg_airlock
	assert_rc 7 "airlock's exit status after forwarding SIG$sig"
	assert_file "$WS/marker" "the command's SIG$sig trap"
	assert_eq "got-$sig" "$(cat "$WS/marker")" "marker content"
}

test_signal_forwarding_term() { e2e_signal_forwarding TERM; }
test_signal_forwarding_int() { e2e_signal_forwarding INT; }
test_signal_forwarding_hup() { e2e_signal_forwarding HUP; }

test_zombies_are_reaped() {
	# Orphans: each subshell exits at once, its sleep is reparented to pid 1,
	# which must reap it when it ends. Then count sleeps still alive and
	# zombies, polling (bounded) while the orphans finish.
	# shellcheck disable=SC2016
	al -- /bin/sh -c '
		for i in 1 2 3 4 5 6 7 8; do (sleep 0.2 &); done
		n=0
		while [ $n -lt 100 ]; do
			z=$(cat /proc/[0-9]*/stat 2>/dev/null | grep -c ") Z ")
			s=$(cat /proc/[0-9]*/stat 2>/dev/null | grep -c "(sleep)")
			[ "$z" -eq 0 ] && [ "$s" -eq 0 ] && break
			n=$((n + 1)); sleep 0.1
		done
		echo "zombies=$z sleepers=$s"'
	assert_rc 0 "the orphan-spawning command"
	assert_contains "$OUT" "zombies=0 sleepers=0" "orphans reaped by the sandbox's init"
}

test_init_is_pid_1_and_command_is_its_child() {
	al -- /bin/sh -c 'echo "self=$$ ppid=$PPID"; cut -d" " -f1-4 /proc/1/stat'
	assert_rc 0 "inspecting pid 1"
	assert_contains "$OUT" "ppid=1" "the command's parent is pid 1"
	assert_not_contains "$OUT" "self=1 " "the command is not pid 1 itself"
	expect_blocked proc-host
	# The command sits in a Landlock layer of its own: it cannot signal
	# its init, while signals to its own children work.
	expect_blocked signal 1
	expect_ok signal-ok
}

test_host_processes_invisible() {
	local tag="airlock-e2e-visible.$$.$RANDOM"
	(exec -a "$tag" sleep 60) &
	bg_register $!
	wait_for 5 pgrep -f "$tag" >/dev/null || fail "could not start the host process"
	# The pattern is bracketed so that it does not match its own command line.
	al -- /bin/sh -c "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -c '${tag//./[.]}'"
	assert_eq "0" "$OUT" "host processes with the tag visible inside"
	expect_blocked proc-host
	expect_ok signal-ok
}

# The sandbox's init cannot be killed or stopped from inside: the command
# keeps running and its status comes out.
test_init_survives_kill_from_inside() {
	al -- /bin/sh -c 'kill -KILL 1; kill -STOP 1; sleep 0.2; exit 5'
	assert_rc 5 "the command's status after it signalled pid 1"
	expect_ok signal-ok
}

e2e_no_process() { ! pgrep -f "$1" >/dev/null; }

test_supervisor_death_kills_sandbox() {
	local arg="1000.$$$RANDOM" pat
	# Anchored: airlock's own command line also contains "sleep ARG".
	pat="^sleep ${arg//./[.]}\$"
	LAST_CMD="airlock run -- sleep $arg; kill -9 airlock"
	start_bg_airlock sleep "$arg"
	wait_for 30 pgrep -f "$pat" >/dev/null ||
		fail "the sandboxed sleep never appeared: $(cat "$T/bg.err")"
	kill -9 "$AL_PID"
	wait "$AL_PID" 2>/dev/null
	if ! wait_for 10 e2e_no_process "$pat"; then
		pkill -9 -f "$pat"
		fail "sleep $arg survived its supervisor's SIGKILL: $(pgrep -af "$pat")"
	fi
}

test_new_session_without_terminal() {
	# stdin is not a terminal: no controlling terminal inside at all.
	expect_blocked read /dev/tty
	al -- /bin/sh -c 'test -t 0 && echo STDIN-IS-TTY; echo done'
	assert_eq "done" "$OUT" "stdin inside is not a terminal"
	expect_ok ioctl-ok
}
