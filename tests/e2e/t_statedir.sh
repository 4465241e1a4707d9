# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# airlock's state directory (util/statedir.c) is decided in one place: the
# authority key, the decision log and the MCP pins live under
# $XDG_STATE_HOME/airlock, else $HOME/.local/state/airlock, and with neither
# every one of them is refused alike (no key written into another user's
# home, no log in one place and its key in another).

# sd_run [VAR=VALUE...] -- AIRLOCK-ARGS...: airlock in $WS with HOME and
# XDG_STATE_HOME unset, then the variables given. Sets OUT, ERR, RC.
sd_run() {
	local vars=()
	while [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	local n=$((++E2E_RUN))
	LAST_CMD="env -u HOME -u XDG_STATE_HOME ${vars[*]} airlock $*"
	(cd "$WS" && env -u HOME -u XDG_STATE_HOME "${vars[@]}" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" "$@" \
		>"$T/sd$n.out" 2>"$T/sd$n.err" </dev/null)
	RC=$?
	OUT=$(cat "$T/sd$n.out")
	ERR=$(cat "$T/sd$n.err")
	[ "$RC" != 124 ] || fail "airlock did not finish within ${E2E_TIMEOUT}s$(e2e_last_run)"
}

test_statedir_without_home_run_is_refused_alike() {
	# The log on by default: refused, and the command never ran.
	sd_run -- run -- sh -c 'echo ran >marker1'
	assert_rc 125 "no state directory for the default log"
	assert_contains "$ERR" "neither variable holds an absolute path" "the message says why"
	assert_contains "$ERR" "--no-audit" "and what to do"
	assert_no_file "$WS/marker1" "the command ran"
	# A log directory of its own does not help: the key that signs it
	# lives in the state directory too (it used to be looked for in /root).
	sd_run -- run --audit "$T/audit" -- sh -c 'echo ran >marker2'
	assert_rc 125 "no state directory for the authority key"
	assert_contains "$ERR" "the authority key that signs the decision log: airlock keeps its state in" "the key is named"
	assert_no_file "$WS/marker2" "the command ran"
	assert_no_file "$T/audit" "a log directory made for a log without its key"
	# The neighbour: without the log nothing needs the state directory.
	sd_run -- run --no-audit -- sh -c 'echo ran >marker3'
	assert_rc 0 "a run without a log needs no state directory"
	assert_file "$WS/marker3" "the command ran"
}

test_statedir_xdg_state_home_holds_key_and_log() {
	sd_run XDG_STATE_HOME="$T/state" -- run -- true
	assert_rc 0 "run with XDG_STATE_HOME and no HOME"
	assert_file "$T/state/airlock/authority.key" "the key beside the log"
	local logs
	logs=$(ls "$T/state/airlock/audit/"*.jsonl 2>/dev/null | wc -l)
	[ "$logs" -ge 1 ] || fail "no decision log in $T/state/airlock/audit$(e2e_last_run)"
	# The log verifies against that same key (the local authority).
	local f
	f=$(ls "$T/state/airlock/audit/"*.jsonl | head -1)
	sd_run XDG_STATE_HOME="$T/state" -- audit verify "$f"
	assert_rc 0 "the log verifies: $OUT $ERR"
	# A relative XDG_STATE_HOME is ignored, as the specification says.
	sd_run XDG_STATE_HOME=state -- run -- true
	assert_rc 125 "a relative XDG_STATE_HOME is no state directory"
}

test_statedir_mcp_pins() {
	local mcp_dir=$here/mcp
	command -v node >/dev/null || skip "node is not installed"
	[ -d "$mcp_dir/node_modules/@modelcontextprotocol" ] ||
		skip "the MCP packages are not installed (scripts/deps.sh)"
	cat >"$T/policy.yaml" <<EOF2
version: 1
filesystem:
  read: ["$mcp_dir"]
mcp:
  servers:
    t:
      tools:
        - {name: greet, decision: allow}
        - {name: ask, decision: allow}
EOF2
	local args='["mcp","run","--policy","'"$T/policy.yaml"'","--no-audit","--","node","'"$mcp_dir/test-server.mjs"'"]'
	local ops='[{"op":"list"}]'
	# No state directory: the gateway refuses to start, and says to name
	# the pin file.
	LAST_CMD="env -u HOME mcp-client airlock mcp run"
	(cd "$WS" && env -u HOME -u XDG_STATE_HOME timeout -k 5 "$E2E_TIMEOUT" node "$here/mcp-client.mjs" \
		"{\"command\":\"$AIRLOCK\",\"args\":$args,\"ops\":$ops}" >"$T/c1.out" 2>"$T/c1.err" </dev/null)
	assert_not_contains "$(cat "$T/c1.out")" '"tools":' "the gateway served without a pin file"
	sd_run -- mcp pins list --policy "$T/policy.yaml"
	assert_rc 2 "pins list without a state directory"
	assert_contains "$ERR" "the pin file: airlock keeps its state in" "the message"
	assert_contains "$ERR" "--pins FILE" "and what to do"
	# XDG_STATE_HOME alone: the pins land there, and the pins verbs find
	# them in the same place.
	(cd "$WS" && env -u HOME XDG_STATE_HOME="$T/state" timeout -k 5 "$E2E_TIMEOUT" node "$here/mcp-client.mjs" \
		"{\"command\":\"$AIRLOCK\",\"args\":$args,\"ops\":$ops}" >"$T/c2.out" 2>"$T/c2.err" </dev/null)
	assert_eq '{"tools":["ask","greet"]}' "$(head -1 "$T/c2.out")" "the gateway with XDG_STATE_HOME: $(cat "$T/c2.err")"
	assert_file "$T/state/airlock/mcp/t.pins.json" "the pin file in the state directory"
	sd_run XDG_STATE_HOME="$T/state" -- mcp pins list --policy "$T/policy.yaml"
	assert_rc 0 "pins list"
	assert_match "$OUT" '^[0-9a-f]{64} greet$' "the pinned tool is listed from the same file"
}

# The session's gateway (airlock mcp connect inside airlock run) pins in
# the same state directory as `airlock mcp`, and without one refuses
# rather than pin in the passwd entry's home.
test_statedir_session_gateway_pins() {
	local mcp_dir=$here/mcp
	command -v node >/dev/null || skip "node is not installed"
	[ -f "$mcp_dir/node_modules/@modelcontextprotocol/sdk/package.json" ] && [ -f "$mcp_dir/session-server.mjs" ] ||
		skip "the MCP packages are not installed (scripts/deps.sh)"
	mkdir -p "$T/srvdir"
	cp "$mcp_dir/session-server.mjs" "$T/srvdir/"
	cat >"$T/policy.yaml" <<EOF2
version: 1
filesystem:
  read: ["$mcp_dir", "$here"]
mcp:
  servers:
    probe:
      command: [node, "$T/srvdir/session-server.mjs"]
      policy: "$T/probe-policy.yaml"
      tools:
        - {name: "*", decision: allow}
EOF2
	printf 'version: 1\nsandbox:\n  workspace: "%s"\n' "$T/srvdir" >"$T/probe-policy.yaml"
	printf 'node %s %s 2>&1; echo "rc=$?"\n' "$here/mcp-session-client.mjs" \
		"'{\"mcp_dir\":\"$mcp_dir\",\"command\":\"/run/airlock/airlock\",\"args\":[\"mcp\",\"connect\",\"probe\"],\"ops\":[{\"op\":\"list\"}]}'" \
		>"$WS/agent.sh"
	sd_run -- run --no-audit --policy "$T/policy.yaml" -- /bin/bash ./agent.sh
	assert_not_contains "$OUT" '"tools":[' "the gateway served without a pin file"
	assert_contains "$OUT" "mcp.servers.probe: the pin file (name one with pins:): airlock keeps its state in" \
		"the gateway says why"
	sd_run XDG_STATE_HOME="$T/state" -- run --no-audit --policy "$T/policy.yaml" -- /bin/bash ./agent.sh
	assert_contains "$OUT" '"tools":[' "the gateway with XDG_STATE_HOME"
	assert_file "$T/state/airlock/mcp/probe.pins.json" "the session's pins in the state directory"
	sd_run XDG_STATE_HOME="$T/state" -- mcp pins list --policy "$T/policy.yaml" --server probe
	assert_rc 0 "pins list"
	assert_match "$OUT" '^[0-9a-f]{64} ' "airlock mcp finds the session's pins"
}
