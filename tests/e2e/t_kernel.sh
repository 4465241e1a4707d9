# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The kernel's attack surface from inside the sandbox: every probe attack
# fails, and the legitimate neighbour of each family still works.

test_ptrace_blocked_fork_works() {
	expect_blocked ptrace-traceme
	expect_blocked ptrace-attach
	expect_blocked ptrace
	expect_ok clone-ok
	expect_ok signal-ok
}

test_process_vm_blocked_own_proc_readable() {
	expect_blocked process-vm-readv
	expect_blocked process-vm-writev
	expect_ok proc-self-ok
}

test_bpf_blocked_classic_filter_works() {
	expect_blocked bpf-prog-load
	expect_blocked bpf-map-create
	expect_blocked bpf
	expect_ok cbpf-ok
}

test_perf_event_open_blocked() {
	expect_blocked perf-event-open
	expect_ok proc-self-ok
}

test_keyrings_blocked() {
	expect_blocked keyctl
	expect_blocked add-key
	expect_blocked request-key
	# Neighbour: ordinary local IPC in the same process still works.
	expect_ok unix-ok
}

test_userfaultfd_blocked_memory_works() {
	expect_blocked userfaultfd
	expect_blocked userfaultfd-dev
	expect_ok alloc-ok 16
}

test_io_uring_blocked_plain_io_works() {
	expect_blocked io-uring-setup
	expect_blocked io-uring-enter
	expect_blocked io-uring-register
	printf 'plain io\n' >"$WS/plain.txt"
	expect_ok read-ok "$WS/plain.txt"
	expect_ok write-ok "$WS/plain.txt"
}

test_mount_family_blocked_mountinfo_readable() {
	local t
	for t in mount umount open-tree move-mount fsopen fsmount fspick fsconfig \
		mount-setattr pivot-root chroot; do
		expect_blocked "$t"
	done
	expect_ok mount-ns-view-ok
}

test_namespaces_blocked_plain_clone_works() {
	local t
	for t in setns unshare-user unshare-mount unshare-net clone-newuser clone3-newuser; do
		expect_blocked "$t"
	done
	# clone3 must fail with ENOSYS, so that libc falls back to clone(2).
	probe clone3-newuser
	assert_contains "$OUT" "ENOSYS" "clone3 is refused with ENOSYS"
	expect_ok clone-ok
}

test_terminal_injection_blocked_ioctl_works() {
	expect_blocked tiocsti
	expect_blocked tioclinux
	expect_ok ioctl-ok
}

test_kernel_image_and_machine_state_blocked() {
	local t
	for t in kexec-load kexec-file-load init-module finit-module delete-module \
		acct swapon swapoff reboot; do
		expect_blocked "$t"
	done
	expect_ok proc-self-ok
}

test_personality_blocked_query_works() {
	expect_blocked personality
	expect_ok personality-query-ok
}

test_foreign_abi_blocked_native_works() {
	expect_blocked x32
	# The architecture check kills: a kernel without x32 would only say ENOSYS.
	assert_contains "$OUT" "SIGSYS" "x32 system call kills the process"
	expect_blocked i386
	expect_ok clone-ok
}

test_device_and_handle_attacks_blocked() {
	expect_blocked open-by-handle
	expect_blocked mknod
	expect_blocked dev-mem
	expect_ok mkfifo-ok
	expect_ok read-ok /dev/null
	expect_ok write-ok /dev/null
}

test_no_capabilities_no_new_privs() {
	expect_blocked caps
	assert_contains "$OUT" "NoNewPrivs=1" "no_new_privs is set"
	expect_blocked setuid-root
	expect_ok proc-self-ok
}

test_core_dumps_off() {
	expect_blocked core
	expect_ok proc-self-ok
}

# Every probe test that takes no argument, in one run; catches a probe test
# added later without an e2e test of its own.
test_probe_all() {
	probe all
	assert_rc 0 "every attack blocked and every neighbour working"
	assert_no_match "$(printf '%s\n' "$OUT" | grep -v -- '-ok: ')" ': (allowed|error)' \
		"no attack allowed, no probe error"
	assert_no_match "$(printf '%s\n' "$OUT" | grep -- '-ok: ')" '-ok: (blocked|error)' \
		"every neighbour working"
}

# The probe is not vacuous: in namespaces this test makes itself (a user
# namespace where we are root, without airlock's Landlock and seccomp), the
# same attacks succeed. A probe that reported "blocked" everywhere would
# make every test above pass with enforcement switched off.
test_probe_not_vacuous() {
	local t
	command -v unshare >/dev/null || skip "no unshare(1)"
	unshare -Urmnpf --mount-proc true 2>/dev/null || skip "unshare -Urmnpf is not permitted here"
	for t in ptrace-traceme ptrace-attach process-vm-readv keyctl userfaultfd mount umount \
		pivot-root chroot setns unshare-user clone-newuser clone3-newuser personality; do
		OUT=$(cd "$WS" && unshare -Urmnpf --mount-proc ./airlock-probe "$t" 2>&1)
		RC=$?
		LAST_CMD="unshare -Urmnpf --mount-proc ./airlock-probe $t"
		check_control "$t"
	done
}

test_minimal_dev() {
	local extra
	al -- ls -A /dev
	assert_rc 0 "listing /dev"
	extra=$(printf '%s\n' "$OUT" | grep -Ev '^(null|zero|full|random|urandom|tty|pts|ptmx|shm|fd|stdin|stdout|stderr|console|core|mqueue)$' | tr '\n' ' ')
	assert_eq "" "$extra" "unexpected entries in the sandbox's /dev"
	expect_blocked read /dev/kmsg
	expect_blocked write /dev/kmsg
	expect_ok read-ok /dev/urandom
	expect_ok write-ok /dev/null
	expect_ok write-ok /dev/shm/airlock-e2e
}

test_ipc_namespace() {
	local id
	command -v ipcmk >/dev/null || skip "no ipcmk(1)"
	id=$(ipcmk -M 4096 2>/dev/null | grep -o '[0-9]*$')
	[ -n "$id" ] || skip "cannot create a SysV shared memory segment here"
	al -- cat /proc/sysvipc/shm
	ipcrm -m "$id"
	assert_rc 0 "reading /proc/sysvipc/shm inside"
	assert_no_match "$OUT" "^[[:space:]]*[0-9]+[[:space:]]+$id[[:space:]]" \
		"the host's SysV segment $id visible inside"
	# Neighbour: the sandbox's own SysV IPC works (ipcmk is in the baseline).
	al -- sh -c 'id=$(ipcmk -M 4096 | grep -o "[0-9]*$") && ipcrm -m "$id" && echo IPC-OK'
	assert_contains "$OUT" "IPC-OK" "SysV shared memory inside"
}
