# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The network: only the sandbox's own loopback. Listeners started by the
# test outside the sandbox are reachable from outside (the control) and not
# from inside. All traffic stays on 127.0.0.1.

test_tcp_connect_to_host_listener_blocked() {
	start_listener tcp
	# Control: the listener answers outside the sandbox.
	outside connect 127.0.0.1 "$PORT"
	check_control connect
	expect_blocked connect 127.0.0.1 "$PORT"
	expect_blocked connect ::1 "$PORT"
	# Neighbour: local IPC inside the sandbox works.
	expect_ok unix-ok "$WS/ipc.sock"
	# Through the shell's /dev/tcp as well, where bash is in the baseline.
	if [ -x /bin/bash ]; then
		al -- /bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT && echo CONNECTED"
		assert_not_contains "$OUT" "CONNECTED" "bash /dev/tcp connect to the host listener"
	fi
}

test_tcp_bind_blocked_loopback_udp_works() {
	local port=$((20000 + RANDOM % 20000))
	expect_blocked bind "$port"
	expect_blocked bind 0
	expect_ok udp-ok
}

test_udp_to_host_listener_gets_no_reply() {
	start_listener udp
	outside udp 127.0.0.1 "$PORT"
	check_control udp
	expect_blocked udp 127.0.0.1 "$PORT"
	expect_ok udp-ok
}

test_abstract_socket_of_host_unreachable() {
	local name="airlock-e2e-$$-$RANDOM"
	start_abstract_listener "$name"
	outside abstract-connect "$name"
	check_control abstract-connect
	expect_blocked abstract-connect "$name"
	expect_ok abstract-ok
}

test_only_loopback_interface() {
	expect_blocked net-ifaces
	al -- cat /proc/net/dev
	assert_rc 0 "reading /proc/net/dev"
	assert_contains "$OUT" "lo:" "the loopback interface"
	assert_eq "lo" "$(printf '%s\n' "$OUT" | tail -n +3 | cut -d: -f1 | tr -d ' ' | tr '\n' ' ' |
		sed 's/ $//')" "interfaces inside"
	expect_ok udp-ok
}
