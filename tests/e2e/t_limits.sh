# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Resource limits from sandbox.limits. Each test checks that the limit
# holds and that work under the limit still succeeds.

limits_policy() { # YAML lines under sandbox.limits (indented by 4)
	printf 'version: 1\nsandbox:\n  limits:\n%s\n' "$1" >"$T/policy.yaml"
}

# skip_if_refused WHAT: airlock may refuse (fail closed) a limit it cannot
# enforce on this machine; that is correct, and the limit cannot be tested.
# Only a refusal that names the limit counts: any other failure is a failure.
skip_if_refused() {
	if { [ "$RC" = 125 ] || [ "$RC" = 2 ]; } && printf '%s' "$ERR" | grep -qi "$1"; then
		skip "airlock refuses the $1 limit here: $(printf '%s' "$ERR" | head -c 300)"
	fi
}

test_open_files_limit() {
	limits_policy '    open_files: 64'
	al --policy "$T/policy.yaml" -- /bin/sh -c 'ulimit -n; ulimit -Hn'
	skip_if_refused open_files
	assert_rc 0 "ulimit -n inside"
	assert_eq "64" "$(printf '%s\n' "$OUT" | sed -n 1p)" "soft RLIMIT_NOFILE"
	assert_eq "64" "$(printf '%s\n' "$OUT" | sed -n 2p)" "hard RLIMIT_NOFILE"
	# Attack: raise it back.
	al --policy "$T/policy.yaml" -- /bin/sh -c 'ulimit -n 4096 2>/dev/null && echo RAISED; ulimit -n'
	assert_not_contains "$OUT" "RAISED" "raising RLIMIT_NOFILE inside"
	# Neighbour: lowering it further is fine.
	al --policy "$T/policy.yaml" -- /bin/sh -c 'ulimit -n 32 && ulimit -n'
	assert_rc 0 "lowering RLIMIT_NOFILE"
	assert_eq "32" "$OUT" "lowered RLIMIT_NOFILE"
}

test_cpu_limit() {
	limits_policy '    cpu: 1
    wall: 60s'
	al --policy "$T/policy.yaml" -- /bin/sh -c 'ulimit -t; ulimit -Ht'
	skip_if_refused cpu
	assert_rc 0 "ulimit -t inside"
	assert_eq "1" "$(printf '%s\n' "$OUT" | sed -n 1p)" "soft RLIMIT_CPU"
	assert_eq "1" "$(printf '%s\n' "$OUT" | sed -n 2p)" "hard RLIMIT_CPU"
	# A busy loop is stopped by the CPU limit (SIGXCPU, or SIGKILL at the
	# hard limit), well before the 60 s wall-clock guard.
	al --policy "$T/policy.yaml" -- /bin/sh -c 'while :; do :; done'
	case "$RC" in
	152 | 137) ;;
	*) fail "busy loop under cpu: 1 should die by SIGXCPU (152) or SIGKILL (137)$(e2e_last_run)" ;;
	esac
	# Neighbour: short work completes.
	al --policy "$T/policy.yaml" -- /bin/sh -c 'echo quick'
	assert_rc 0 "short command under the cpu limit"
}

test_wall_clock_limit() {
	limits_policy '    wall: 2s'
	al --policy "$T/policy.yaml" -- sleep 30
	skip_if_refused wall
	assert_rc 137 "a run past its wall-clock limit"
	assert_match "$ERR" '[Ww]all' "the message names the wall-clock limit"
	# Neighbour: a command that finishes in time keeps its own status.
	al --policy "$T/policy.yaml" -- /bin/sh -c 'exit 3'
	assert_rc 3 "a command within the wall-clock limit"
}

test_pids_limit() {
	local made
	limits_policy '    pids: 50'
	al --policy "$T/policy.yaml" -- ./airlock-probe pids 200
	skip_if_refused pids
	check_blocked pids
	made=$(e2e_probe_line pids | sed -n 's/.* after \([0-9]*\) of .*/\1/p')
	[ -n "$made" ] && [ "$made" -lt 50 ] ||
		fail "processes created under pids: 50: '$made'$(e2e_last_run)"
	al --policy "$T/policy.yaml" -- ./airlock-probe pids-ok 10
	check_allowed pids-ok
}

test_memory_limit() {
	limits_policy '    memory: 64M
    wall: 60s'
	al --policy "$T/policy.yaml" -- ./airlock-probe alloc-ok 16
	skip_if_refused memory
	check_allowed alloc-ok
	al --policy "$T/policy.yaml" -- ./airlock-probe alloc 512
	# Enforced either way: the allocation is refused (an address-space
	# limit, where no memory cgroup can be had), or the run is ended.
	if e2e_probe_line alloc | grep -q 'blocked'; then
		assert_rc 0 "exit status of a refused allocation"
		return 0
	fi
	if [ "$RC" = 1 ] && e2e_probe_line alloc | grep -q 'allowed'; then
		if "$AIRLOCK" doctor 2>&1 | grep -i 'memory' | grep -Eqi 'not|unavailable|no '; then
			skip "no memory limit on this machine: $("$AIRLOCK" doctor 2>&1 | grep -i memory)"
		fi
		fail "allocating 512 MiB under memory: 64M succeeded$(e2e_last_run)"
	fi
	assert_ne 0 "$RC" "exit status of a run past its memory limit"
	assert_match "$ERR" '[Mm]emory' "a message naming the memory limit"
}

# Reaching a limit names the limit. A cgroup reports its memory and
# process limits; an rlimit (open files always, memory and processes
# without a cgroup) is reported to nobody, so a command that fails under
# one is told which limits were in force and the error each makes.
test_limits_reached_are_named() {
	limits_policy '    open_files: 16
    pids: 40
    memory: 256M
    wall: 60s'
	al --policy "$T/policy.yaml" -- python3 -c 'fs = [open("/etc/hostname") for i in range(40)]'
	skip_if_refused open_files
	assert_ne 0 "$RC" "opening 40 files under open_files: 16"
	assert_contains "$ERR" "Too many open files" "the program's own error"
	assert_match "$ERR" "open-files limit of 16 reached \(sandbox.limits.open_files\)|open files 16 per process \(sandbox.limits.open_files" \
		"airlock names the open-files limit: $ERR"
	# Traced, the refused call itself is seen, and named.
	al --trace-denials --policy "$T/policy.yaml" -- python3 -c 'fs = [open("/etc/hostname") for i in range(40)]'
	assert_contains "$ERR" "open-files limit of 16 reached (sandbox.limits.open_files): openat by python3 failed with EMFILE" \
		"--trace-denials sees the limit reached"
	assert_not_contains "$ERR" "whose reaching the kernel does not report" "and says so, not what it cannot know"
	al --policy "$T/policy.yaml" -- /bin/sh -c 'for i in $(seq 80); do sleep 3 & done 2>/dev/null; wait; exit 1'
	assert_ne 0 "$RC" "80 processes under pids: 40"
	assert_match "$ERR" "process limit of 40 reached|processes 40 \\(sandbox.limits.pids" "airlock names the process limit: $ERR"
	al --policy "$T/policy.yaml" -- python3 -c 'b = bytearray(1 << 30)'
	assert_ne 0 "$RC" "1 GiB under memory: 256M"
	assert_match "$ERR" "memory limit of 268435456 bytes reached|memory 268435456 bytes per process \\(sandbox.limits.memory" \
		"airlock names the memory limit: $ERR"
	# Neighbours: work under the limits says nothing of them.
	al --policy "$T/policy.yaml" -- python3 -c 'fs = [open("/etc/hostname") for i in range(4)]; print("ok")'
	assert_rc 0 "a few files under open_files: 16"
	assert_not_contains "$ERR" "limit" "no word of a limit not reached"
}
