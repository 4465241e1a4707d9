# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# What airlock does when the kernel refuses something it needs: the run
# does not start (exit 125, a message naming what failed), rather than run
# without it. The refusal is real: `airlock-probe deny-syscall` starts
# airlock under a seccomp filter that refuses one call, as an old kernel
# or a container's filter would.

# fc_run CALL ERRNO [RUN-ARGS...] -- CMD...: airlock run in $WS under the
# filter. Sets OUT, ERR, RC.
fc_run() {
	local call=$1 errno=$2
	shift 2
	local n=$((++E2E_RUN))
	LAST_CMD="airlock-probe deny-syscall $call $errno -- airlock run $*"
	(cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$PROBE" deny-syscall "$call" "$errno" -- \
		"$AIRLOCK" run "$@" >"$T/fc$n.out" 2>"$T/fc$n.err" </dev/null)
	RC=$?
	OUT=$(cat "$T/fc$n.out")
	ERR=$(cat "$T/fc$n.err")
	[ "$RC" != 124 ] || fail "airlock did not finish within ${E2E_TIMEOUT}s$(e2e_last_run)"
}

# The wall-clock limit is a timer: one the kernel will not make or arm
# must not become a run without a limit.
test_failclosed_wall_timer_refused() {
	printf 'version: 1\nsandbox:\n  limits:\n    wall: 30s\n' >"$T/wall.yaml"
	fc_run timerfd_create EMFILE --no-audit --policy "$T/wall.yaml" -- sh -c 'echo ran >marker1'
	assert_rc 125 "a wall limit without a timer"
	assert_contains "$ERR" "sandbox.limits.wall: cannot make the wall-clock timer (timerfd_create); the run was not started" \
		"the message"
	assert_no_file "$WS/marker1" "the command ran without its limit"
	fc_run timerfd_settime EINVAL --no-audit --policy "$T/wall.yaml" -- sh -c 'echo ran >marker2'
	assert_rc 125 "a wall limit whose timer cannot be armed"
	assert_contains "$ERR" "cannot arm the wall-clock timer (timerfd_settime)" "the message"
	assert_no_file "$WS/marker2" "the command ran without its limit"
	# The neighbour: under the same filter, a run with no wall limit needs
	# no timer and runs.
	fc_run timerfd_create EMFILE --no-audit -- sh -c 'echo ran >marker3'
	assert_rc 0 "a run without a wall limit"
	assert_file "$WS/marker3" "the command ran"
}


# Without close_range (Linux < 5.9, or a filter that hides it) the
# sandbox's processes still hold none of the descriptors airlock was
# started with: here a host directory, which in the sandbox's init or the
# guard would be a way back to the host's files.
test_failclosed_close_range_refused_inherited_fd_closed() {
	[ -r "/proc/$$/task/$$/children" ] || skip "no /proc/PID/task/TID/children on this kernel"
	mkdir -p "$T/held"
	local n=$((++E2E_RUN)) sup i d seen=0 holders=""
	LAST_CMD="airlock-probe deny-syscall close_range ENOSYS -- airlock run -- (waits) 7<$T/held"
	# Host and sandbox signal each other through the workspace: direct
	# mode (hold mode shows neither side the other's new files).
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	(cd "$WS" && exec env HOME="$E2E_HOME" "$PROBE" deny-syscall close_range ENOSYS -- "$AIRLOCK" run \
		--policy "$T/direct.yaml" -- sh -c 'echo >started; while [ ! -e release ]; do sleep 0.1; done' \
		>"$T/fc$n.out" 2>"$T/fc$n.err" </dev/null 7<"$T/held") &
	sup=$!
	for i in $(seq 1 300); do
		[ -e "$WS/started" ] && break
		kill -0 "$sup" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$WS/started" ] || { wait "$sup"; fail "the run did not start: $(cat "$T/fc$n.err")"; }
	for d in $(descendants "$sup"); do
		case "$(cat /proc/"$d"/comm 2>/dev/null)" in
		airlock-guard | airlock-init) ;;
		*) continue ;;
		esac
		if ! ls /proc/"$d"/fd >/dev/null 2>&1; then
			touch "$WS/release"
			wait "$sup"
			skip "the descriptors of the sandbox's own processes are readable by root only"
		fi
		seen=$((seen + 1))
		if ls -l /proc/"$d"/fd 2>/dev/null | grep -qF -- "-> $T/held"; then
			holders="$holders $(cat /proc/"$d"/comm)"
		fi
	done
	touch "$WS/release"
	wait "$sup"
	RC=$?
	assert_rc 0 "the run"
	[ "$seen" -ge 2 ] || fail "found $seen of the sandbox's init and guard$(e2e_last_run)"
	assert_eq "" "$holders" "processes holding the inherited host directory"
}
