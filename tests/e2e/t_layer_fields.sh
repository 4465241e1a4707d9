# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Fields an enterprise ceiling and `policy diff` once did not know (the
# schema table, src/policy/schema.c, now names a rule for each): a host
# socket the enterprise denied, a name pinned to an address of the
# developer's choosing, review mode turned off, variables set for the
# agent. Each attack is played under the ceiling (on_excess: warn, which
# clips, and refuse) and the legitimate neighbour must still work.

# shellcheck source=tests/e2e/t_sockets.sh
. "$here/t_sockets.sh"
# shellcheck source=tests/e2e/t_layers.sh
. "$here/t_layers.sh"

# lf_run POLICY ENTERPRISE CMD...: airlock run, setting OUT, ERR, RC.
lf_run() {
	local pol=$1 ent=$2
	shift 2
	if [ -n "$ent" ]; then
		al --policy "$pol" --enterprise "$ent" -- "$@"
	else
		al --policy "$pol" -- "$@"
	fi
}

test_layer_fields_socket_denied_by_the_enterprise() {
	sockets_setup
	printf 'version: 1\nfilesystem:\n  sockets: [%s/docker.sock, %s/agent.sock]\n' "$D" "$D" >"$T/dev.yaml"
	# Control: the developer's policy alone reaches both sockets.
	lf_run "$T/dev.yaml" "" /usr/bin/python3 conn.py "$D/docker.sock" "$D/agent.sock"
	assert_rc 0 "the developer's policy alone"
	assert_eq "docker.sock: connected" "$(sock_line docker.sock)" "the control reaches docker.sock"

	# The enterprise hides the sockets' directory and refuses excess: the
	# run is refused, nothing runs.
	printf 'version: 1\nenterprise:\n  on_excess: refuse\nfilesystem:\n  deny: [%s]\n' "$D" >"$T/ent-refuse.yaml"
	lf_run "$T/dev.yaml" "$T/ent-refuse.yaml" /bin/sh -c ": >$WS/ran"
	assert_rc 2 "a socket beneath the enterprise's deny, on_excess: refuse"
	assert_contains "$ERR" "filesystem.sockets \"$D/docker.sock\" cut: it lies beneath $D" "the cut names the socket"
	assert_no_file "$WS/ran" "the refused run's command"
	# on_excess: warn clips: the run goes ahead without the socket.
	printf 'version: 1\nfilesystem:\n  deny: [%s]\n' "$D" >"$T/ent-warn.yaml"
	lf_run "$T/dev.yaml" "$T/ent-warn.yaml" /usr/bin/python3 conn.py "$D/docker.sock" "$D/agent.sock"
	assert_rc 0 "the clipped run"
	assert_contains "$ERR" "filesystem.sockets \"$D/docker.sock\" cut" "the cut is said"
	assert_ne "docker.sock: connected" "$(sock_line docker.sock)" "docker.sock beneath the enterprise's deny"
	assert_ne "agent.sock: connected" "$(sock_line agent.sock)" "agent.sock beneath it too"
	# A link elsewhere to the denied socket: the sandbox binds the real
	# path, so the ceiling judges it too.
	ln -s "$D/docker.sock" "$T/dsock"
	printf 'version: 1\nfilesystem:\n  sockets: [%s/dsock]\n' "$T" >"$T/dev-link.yaml"
	lf_run "$T/dev-link.yaml" "" /usr/bin/python3 conn.py "$D/docker.sock"
	assert_eq "docker.sock: connected" "$(sock_line docker.sock)" "the control: the link binds the socket"
	lf_run "$T/dev-link.yaml" "$T/ent-warn.yaml" /usr/bin/python3 conn.py "$D/docker.sock"
	assert_contains "$ERR" "filesystem.sockets \"$T/dsock\" cut: it lies beneath $D" "the link is cut"
	assert_ne "docker.sock: connected" "$(sock_line docker.sock)" "the denied socket through a link"
	# A deny of the socket itself, not its directory.
	printf 'version: 1\nfilesystem:\n  deny: [%s/docker.sock]\n' "$D" >"$T/ent-one.yaml"
	lf_run "$T/dev.yaml" "$T/ent-one.yaml" /usr/bin/python3 conn.py "$D/docker.sock" "$D/agent.sock"
	assert_ne "docker.sock: connected" "$(sock_line docker.sock)" "the socket the enterprise denies by name"
	assert_eq "agent.sock: connected" "$(sock_line agent.sock)" "its neighbour the enterprise does not deny"

	# A sockets ceiling: only the ssh agent.
	printf 'version: 1\nfilesystem:\n  sockets: [%s/agent.sock]\n' "$D" >"$T/ent-sockets.yaml"
	lf_run "$T/dev.yaml" "$T/ent-sockets.yaml" /usr/bin/python3 conn.py "$D/docker.sock" "$D/agent.sock"
	assert_contains "$ERR" "no enterprise filesystem.sockets entry covers it" "the cut names the ceiling"
	assert_ne "docker.sock: connected" "$(sock_line docker.sock)" "a socket outside the enterprise's list"
	assert_eq "agent.sock: connected" "$(sock_line agent.sock)" "the socket the enterprise allows"
	# A read/write ceiling covers sockets too: a socket is a host path.
	printf 'version: 1\nfilesystem:\n  read: [/usr]\n  write: [%s]\n' "$WS" >"$T/ent-read.yaml"
	lf_run "$T/dev.yaml" "$T/ent-read.yaml" /usr/bin/python3 conn.py "$D/docker.sock"
	assert_ne "docker.sock: connected" "$(sock_line docker.sock)" "a socket outside the enterprise's read/write"
	printf 'version: 1\nfilesystem:\n  read: [%s]\n  write: [%s]\n' "$D" "$WS" >"$T/ent-read2.yaml"
	lf_run "$T/dev.yaml" "$T/ent-read2.yaml" /usr/bin/python3 conn.py "$D/docker.sock"
	assert_eq "docker.sock: connected" "$(sock_line docker.sock)" "a socket inside the enterprise's read"
	# The legitimate neighbour: a narrowing enterprise layer that denies
	# something else leaves the socket alone.
	printf 'version: 1\nenterprise:\n  on_excess: refuse\nfilesystem:\n  deny: [%s/elsewhere]\n' "$T" >"$T/ent-ok.yaml"
	lf_run "$T/dev.yaml" "$T/ent-ok.yaml" /usr/bin/python3 conn.py "$D/docker.sock"
	assert_rc 0 "a narrowing enterprise layer with on_excess: refuse: $ERR"
	assert_eq "docker.sock: connected" "$(sock_line docker.sock)" "the socket no ceiling forbids"
	# A lock replaces the developer's list.
	printf 'version: 1\nenterprise:\n  lock: [filesystem.sockets]\nfilesystem:\n  sockets: [%s/agent.sock]\n' "$D" \
		>"$T/ent-lock.yaml"
	lf_run "$T/dev.yaml" "$T/ent-lock.yaml" /usr/bin/python3 conn.py "$D/docker.sock" "$D/agent.sock"
	assert_ne "docker.sock: connected" "$(sock_line docker.sock)" "a locked sockets list drops the developer's"
	assert_eq "agent.sock: connected" "$(sock_line agent.sock)" "and binds the enterprise's"

	# policy diff sees the socket.
	printf 'version: 1\nfilesystem:\n  sockets: [%s/agent.sock]\n' "$D" >"$T/old.yaml"
	LAST_CMD="airlock policy diff old.yaml dev.yaml"
	OUT=$("$AIRLOCK" policy diff "$T/old.yaml" "$T/dev.yaml" 2>&1)
	RC=$?
	assert_rc 1 "a socket added is wider"
	assert_contains "$OUT" "filesystem.sockets: NEW $T/dev.yaml:3 lets the agent reach the host socket $D/docker.sock" \
		"the line names the socket"
	OUT=$("$AIRLOCK" policy diff "$T/dev.yaml" "$T/old.yaml" 2>&1)
	RC=$?
	assert_rc 0 "a socket dropped is not wider: $OUT"
}

# The developer pins a name the enterprise allows to an address of its own
# choosing: the proxy would send that name's traffic there.
test_layer_fields_resolve_pin_under_a_ceiling() {
	start_servers
	lay_client
	cat >"$T/dev.yaml" <<YAML
version: 1
network:
  resolve: { api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - { host: api.test, ports: [$HP] }
YAML
	lf_run "$T/dev.yaml" "" /usr/bin/python3 ./fetch.py GET "http://api.test:$HP/public/x"
	assert_eq "200" "$OUT" "the control: the developer's pin reaches the server"
	# The enterprise allows the name but does not pin it (DNS decides).
	cat >"$T/ent-dns.yaml" <<YAML
version: 1
network:
  allow_private: [127.0.0.0/8]
  endpoints:
    - { host: api.test, ports: [$HP] }
YAML
	lf_run "$T/dev.yaml" "$T/ent-dns.yaml" /usr/bin/python3 ./fetch.py GET "http://api.test:$HP/public/x"
	assert_ne "200" "$OUT" "a pin the enterprise does not make"
	assert_contains "$ERR" "network.resolve \"api.test\" -> 127.0.0.1 cut: the enterprise does not pin this name" \
		"the cut names the pin"
	# The enterprise pins the name elsewhere: its address wins.
	cat >"$T/ent-other.yaml" <<YAML
version: 1
enterprise:
  on_excess: warn
network:
  resolve: { api.test: 127.0.0.9 }
  allow_private: [127.0.0.0/8]
  endpoints:
    - { host: api.test, ports: [$HP] }
YAML
	lf_run "$T/dev.yaml" "$T/ent-other.yaml" /usr/bin/python3 ./fetch.py GET "http://api.test:$HP/public/x"
	assert_ne "200" "$OUT" "a pin to another address than the enterprise's"
	assert_contains "$ERR" "cut: the enterprise pins it to 127.0.0.9" "the cut names the enterprise's address"
	# on_excess: refuse: nothing runs.
	sed 's/on_excess: warn/on_excess: refuse/' "$T/ent-other.yaml" >"$T/ent-refuse.yaml"
	lf_run "$T/dev.yaml" "$T/ent-refuse.yaml" /bin/sh -c ": >$WS/ran"
	assert_rc 2 "the pin under on_excess: refuse"
	assert_no_file "$WS/ran" "the refused run's command"
	# The neighbour: the enterprise pins the name to the same address.
	sed 's/127.0.0.9/127.0.0.1/' "$T/ent-refuse.yaml" >"$T/ent-same.yaml"
	lf_run "$T/dev.yaml" "$T/ent-same.yaml" /usr/bin/python3 ./fetch.py GET "http://api.test:$HP/public/x"
	assert_rc 0 "the same pin under on_excess: refuse: $ERR"
	assert_eq "200" "$OUT" "the pin both layers make"

	# policy diff: a pin added or moved is wider; the same pin is not.
	cat >"$T/old.yaml" <<YAML
version: 1
network:
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - { host: api.test, ports: [$HP] }
YAML
	OUT=$("$AIRLOCK" policy diff "$T/old.yaml" "$T/dev.yaml" 2>&1)
	RC=$?
	assert_rc 1 "a pin added"
	assert_contains "$OUT" "network.resolve: NEW $T/dev.yaml:3 sends api.test to 127.0.0.1; OLD resolves it by DNS" \
		"the witness"
	sed 's/127.0.0.1 }/127.0.0.2 }/' "$T/dev.yaml" >"$T/moved.yaml"
	OUT=$("$AIRLOCK" policy diff "$T/dev.yaml" "$T/moved.yaml" 2>&1)
	RC=$?
	assert_rc 1 "a pin moved"
	assert_contains "$OUT" "OLD pins it to 127.0.0.1" "the witness names OLD's address"
	OUT=$("$AIRLOCK" policy diff "$T/dev.yaml" "$T/dev.yaml" 2>&1)
	RC=$?
	assert_rc 0 "the same pin: $OUT"
}

# Review mode holds the agent's writes for a person; direct lets them
# land in the workspace at once.
test_layer_fields_review_mode_under_a_ceiling_and_in_diff() {
	printf 'version: 1\nsandbox:\n  workspace: %s\n  workspace_mode: direct\n' "$WS" >"$T/direct.yaml"
	printf 'version: 1\nsandbox:\n  workspace: %s\n  workspace_mode: review\n' "$WS" >"$T/review.yaml"
	printf 'version: 1\nsandbox:\n  workspace_mode: review\n' >"$T/ent.yaml"
	lf_run "$T/direct.yaml" "" /bin/sh -c 'echo x >direct-file'
	assert_rc 0 "the control: direct mode"
	assert_file "$WS/direct-file" "direct mode writes to the workspace"
	lf_run "$T/direct.yaml" "$T/ent.yaml" /bin/sh -c 'echo x >held-file'
	assert_rc 0 "direct mode under a review ceiling: $ERR"
	assert_contains "$ERR" "sandbox.workspace_mode: direct cut to review" "the cut is said"
	assert_no_file "$WS/held-file" "the write is held for review, not in the workspace"
	review_session
	# The neighbour: a review policy under the same ceiling runs as it is.
	lf_run "$T/review.yaml" "$T/ent.yaml" /bin/sh -c 'echo x >held2'
	assert_rc 0 "review under a review ceiling"
	assert_not_contains "$ERR" "cut" "nothing to cut"

	LAST_CMD="airlock policy diff review.yaml direct.yaml"
	OUT=$("$AIRLOCK" policy diff "$T/review.yaml" "$T/direct.yaml" 2>&1)
	RC=$?
	assert_rc 1 "review to direct is wider"
	assert_contains "$OUT" "sandbox.workspace_mode: NEW $T/direct.yaml:4 lets the agent's writes reach the workspace directly" \
		"the line"
	OUT=$("$AIRLOCK" policy diff "$T/direct.yaml" "$T/review.yaml" 2>&1)
	RC=$?
	assert_rc 0 "direct to review is a narrowing: $OUT"
	assert_eq "" "$OUT" "not wider, nothing printed"
}

# Variables set for the agent, an extra upstream CA, another secret under
# the enterprise's credential name, the identity header, the host ids, an
# MCP server's pins, policy and command: each narrowed by a ceiling that
# writes it, and left alone by one that does not.
test_layer_fields_other_fields_under_a_ceiling() {
	printf 'version: 1\nprocess:\n  env:\n    set: {LF_DEV: "dev", LF_BOTH: "same"}\n' >"$T/dev.yaml"
	printf 'version: 1\nprocess:\n  env:\n    set: {LF_BOTH: "same", LF_ENT: "ent"}\n' >"$T/ent.yaml"
	printf 'version: 1\nprocess:\n  env:\n    pass: [TERM, PATH, HOME, LANG]\n' >"$T/ent-pass.yaml"
	lf_run "$T/dev.yaml" "" /bin/sh -c 'echo "dev=$LF_DEV both=$LF_BOTH ent=$LF_ENT"'
	assert_eq "dev=dev both=same ent=" "$OUT" "the control"
	lf_run "$T/dev.yaml" "$T/ent.yaml" /bin/sh -c 'echo "dev=$LF_DEV both=$LF_BOTH ent=$LF_ENT"'
	assert_eq "dev= both=same ent=ent" "$OUT" "env.set under a ceiling that writes env.set"
	assert_contains "$ERR" "process.env.set LF_DEV cut" "the cut is said"
	lf_run "$T/dev.yaml" "$T/ent-pass.yaml" /bin/sh -c 'echo "dev=$LF_DEV both=$LF_BOTH"'
	assert_eq "dev=dev both=same" "$OUT" "a ceiling writing only env.pass leaves env.set alone"

	# Whole sections through `policy check`, which prints the layered policy.
	cat >"$T/dev2.yaml" <<YAML
version: 1
sandbox:
  host_uid: 4242
network:
  upstream_ca: /etc/ssl/dev-ca.pem
  endpoints:
    - { host: api.example.com, ports: [443], tls: intercept }
credentials:
  - name: gh
    source: env:LF_OTHER_TOKEN
    env: GH_TOKEN
    bindings: [{host: api.example.com}]
  - name: ok
    source: env:LF_OK_TOKEN
    env: OK_TOKEN
    bindings: [{host: api.example.com}]
mcp:
  servers:
    fs: {command: [/usr/bin/dev-fs], tools: [{name: "*", decision: allow}]}
    pinned:
      command: [/usr/bin/srv]
      pins: /tmp/dev-pins.json
      policy: /tmp/dev-srv.yaml
      tools: [{name: "*", decision: allow}]
YAML
	cat >"$T/ent2.yaml" <<YAML
version: 1
sandbox:
  host_uid: 5151
network:
  endpoints:
    - { host: api.example.com, ports: [443], tls: intercept }
credentials:
  - name: gh
    source: env:LF_TOKEN
    env: GH_TOKEN
    bindings: [{host: api.example.com}]
  - name: ok
    source: env:LF_OK_TOKEN
    env: OK_TOKEN
    bindings: [{host: api.example.com}]
identity: {header: true}
mcp:
  servers:
    fs: {command: [/usr/bin/corp-fs], tools: [{name: "*", decision: allow}]}
    pinned: {command: [/usr/bin/srv], tools: [{name: "*", decision: allow}]}
YAML
	LAST_CMD="airlock policy check --enterprise ent2.yaml dev2.yaml"
	OUT=$(cd "$T" && "$AIRLOCK" policy check --enterprise "$T/ent2.yaml" "$T/dev2.yaml" 2>"$T/check.err")
	RC=$?
	ERR=$(cat "$T/check.err")
	assert_rc 0 "policy check under the ceiling: $ERR"
	assert_contains "$ERR" "sandbox.host_uid: the enterprise's value applies" "host_uid"
	assert_contains "$OUT" "host_uid: 5151" "the enterprise's host uid"
	assert_contains "$ERR" "network.upstream_ca \"/etc/ssl/dev-ca.pem\" cut" "an upstream CA the enterprise does not trust"
	assert_not_contains "$OUT" "dev-ca.pem" "is gone from the layered policy"
	assert_contains "$ERR" "credentials gh cut: its source is not the enterprise's" "another secret under gh"
	assert_not_contains "$OUT" "LF_OTHER_TOKEN" "is gone"
	assert_contains "$OUT" "env:LF_OK_TOKEN" "the credential both layers read from one source stays"
	assert_match "$OUT" "header: true" "the enterprise's identity header"
	assert_contains "$ERR" "mcp.servers.fs cut: its command is not the enterprise's" "another program as fs"
	assert_not_contains "$OUT" "dev-fs" "is gone"
	assert_contains "$ERR" "mcp.servers.pinned.pins: the default applies" "the developer's pin file"
	assert_contains "$ERR" "mcp.servers.pinned.policy: the default applies" "and server policy"
	assert_not_contains "$OUT" "dev-pins.json" "are gone"
	assert_not_contains "$OUT" "dev-srv.yaml" "both"
	assert_contains "$OUT" "/usr/bin/srv" "the server both layers name stays"
	# The neighbour: a ceiling that writes none of these leaves them.
	printf 'version: 1\nfilesystem:\n  deny: [/srv/nothing]\n' >"$T/ent3.yaml"
	OUT=$(cd "$T" && "$AIRLOCK" policy check --enterprise "$T/ent3.yaml" "$T/dev2.yaml" 2>"$T/check.err")
	RC=$?
	ERR=$(cat "$T/check.err")
	assert_rc 0 "policy check under an unrelated ceiling: $ERR"
	assert_not_contains "$ERR" "cut" "nothing cut"
	assert_contains "$OUT" "dev-ca.pem" "the upstream CA stays"
	assert_contains "$OUT" "dev-pins.json" "the pin file stays"

	# policy diff: another host uid, another server policy are wider; the
	# same file is not.
	sed -e 's/host_uid: 4242/host_uid: 4343/' -e 's|/tmp/dev-srv.yaml|/tmp/wide-srv.yaml|' "$T/dev2.yaml" >"$T/dev3.yaml"
	LAST_CMD="airlock policy diff dev2.yaml dev3.yaml"
	OUT=$("$AIRLOCK" policy diff "$T/dev2.yaml" "$T/dev3.yaml" 2>&1)
	RC=$?
	assert_rc 1 "another host uid and server policy"
	assert_contains "$OUT" "sandbox.ids: NEW $T/dev3.yaml:3 runs the agent as another host uid (4343; OLD 4242)" \
		"the host uid line"
	assert_contains "$OUT" "runs server pinned under another sandbox policy (/tmp/wide-srv.yaml)" "the server policy line"
	OUT=$("$AIRLOCK" policy diff "$T/dev2.yaml" "$T/dev2.yaml" 2>&1)
	RC=$?
	assert_rc 0 "the same policy: $OUT"
}
