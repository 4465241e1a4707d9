# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# MCP servers inside an `airlock run` session: the agent's MCP client
# (tests/e2e/mcp-session-client.mjs, the official SDK) runs inside the
# sandbox with `/run/airlock/airlock mcp connect NAME` as its server
# command; the session's gateway starts mcp.servers.NAME in a sandbox of
# its own, under that server's own policy, and records every decision in
# the session's signed log. The servers: the real
# @modelcontextprotocol/server-filesystem, and tests/e2e/mcp/
# session-server.mjs (reads any path, shows its environment, calls an
# HTTPS upstream with a brokered credential).

MCP_DIR=${MCP_DIR:-$here/mcp}
MS_FS=$MCP_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

ms_need() {
	command -v node >/dev/null || skip "node is not installed"
	[ -f "$MS_FS" ] && [ -f "$MCP_DIR/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
		skip "the MCP packages are not installed (scripts/deps.sh installs them into $MCP_DIR)"
	[ -f "$MCP_DIR/session-server.mjs" ] || skip "no $MCP_DIR/session-server.mjs"
}

# The loopback HTTPS upstream of t_proxy.sh (servers.py): /api/... answers
# "auth": "ok" only with "Authorization: Bearer <the secret>".
ms_upstream() {
	mkdir -p "$T/srv"
	SECRET="sek-$RANDOM$RANDOM$RANDOM-mcp"
	printf '%s\n' "$SECRET" >"$T/srv/token"
	chmod 644 "$T/srv/token"
	export E2E_API_TOKEN=$SECRET
	start_servers
}

# The session's policy: the agent reads the packages and this directory;
# server fs is the filesystem server limited to $T/srvdir (its own
# policy: that directory is its workspace); server probe is
# session-server.mjs in the same directory, with network to the upstream
# and the credential brokered for it alone (when ms_upstream ran first).
ms_setup() {
	mkdir -p "$T/srvdir" "$T/audit"
	echo "server-only" >"$T/srvdir/server.txt"
	echo "agent-only" >"$WS/agent.txt"
	cp "$MCP_DIR/session-server.mjs" "$T/srvdir/"
	cat >"$T/policy.yaml" <<EOF2
version: 1
filesystem:
  read: ["$MCP_DIR", "$here"]
audit:
  dir: "$T/audit"
mcp:
  servers:
    fs:
      command: [node, "$MS_FS", "$T/srvdir"]
      policy: "$T/fs-policy.yaml"
      record_arguments: true
      tools:
        - name: read_text_file
          decision: allow
          args:
            path: {inside_workspace: true, required: true}
        - name: list_allowed_directories
          decision: allow
        - name: "*"
          decision: deny
    probe:
      command: [node, "$T/srvdir/session-server.mjs"]
      policy: "$T/probe-policy.yaml"
      scan: {secrets: redact}
      tools:
        - {name: "*", decision: allow}
EOF2
	cat >"$T/fs-policy.yaml" <<EOF2
version: 1
sandbox:
  workspace: "$T/srvdir"
filesystem:
  read: ["$MCP_DIR"]
EOF2
	printf 'version: 1\nsandbox:\n  workspace: "%s"\n' "$T/srvdir" >"$T/probe-policy.yaml"
	[ -n "${SP:-}" ] || return 0
	cat >>"$T/probe-policy.yaml" <<EOF2
process:
  env:
    set: {UPSTREAM: "secure.test:$SP"}
network:
  upstream_ca: $T/srv/ca.pem
  resolve: { secure.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$SP]
  endpoints:
    - { host: secure.test, ports: [$SP], tls: intercept }
credentials:
  - name: api
    source: env:E2E_API_TOKEN
    env: API_TOKEN
    bindings:
      - id: api-read
        host: secure.test
        port: $SP
        header: Authorization
        template: "Bearer {secret}"
        methods: [GET]
        paths: ["/api/**"]
EOF2
}

# ms_client NAME OPS-JSON: a line of the agent's script running the SDK
# client against `airlock mcp connect NAME`, its output prefixed "NAME: ".
ms_client() {
	printf 'node %s %s 2>&1 | sed "s/^/%s: /"; echo "%s: rc=$?"\n' "$here/mcp-session-client.mjs" \
		"'{\"mcp_dir\":\"$MCP_DIR\",\"command\":\"/run/airlock/airlock\",\"args\":[\"mcp\",\"connect\",\"$1\"],\"ops\":$2}'" \
		"$1" "$1"
}

# ms_run SCRIPT: run SCRIPT (sh) as the agent in the session.
ms_run() {
	printf 'set -o pipefail 2>/dev/null\n%s\n' "$1" >"$WS/agent.sh"
	al --policy "$T/policy.yaml" -- /bin/bash ./agent.sh
}

# The session's own log: the one whose policy_loaded names the session's
# policy file (the servers' sandboxes keep logs of their own beside it).
ms_session_log() {
	grep -l "\"policy_file\":\"$T/policy.yaml\"" "$T"/audit/*.jsonl 2>/dev/null | head -1
}

# ms_count LINES PATTERN...: how many of LINES hold every fixed PATTERN.
ms_count() {
	local lines=$1
	shift
	local p
	for p in "$@"; do
		lines=$(printf '%s\n' "$lines" | grep -F -- "$p" || true)
	done
	printf '%s\n' "$lines" | grep -c . || true
}

ms_verify_logs() {
	local f n=0
	for f in "$T"/audit/*.jsonl; do
		[ -f "$f" ] || continue
		"$AIRLOCK" audit verify "$f" >"$T/verify.out" 2>&1 ||
			fail "airlock audit verify $f: $(cat "$T/verify.out")"
		n=$((n + 1))
	done
	[ "$n" -ge 2 ] || fail "expected the session's log and the servers' logs, found $n"
}

test_mcp_session_fs_server_in_its_own_sandbox() {
	ms_need
	ms_setup
	local script
	script=$(
		ms_client fs '[{"op":"list"},
			{"op":"call","name":"read_text_file","arguments":{"path":"'"$T"'/srvdir/server.txt"}},
			{"op":"call","name":"read_text_file","arguments":{"path":"'"$WS"'/agent.txt"}},
			{"op":"call","name":"write_file","arguments":{"path":"'"$T"'/srvdir/new.txt","content":"x"}}]'
		ms_client probe '[{"op":"call","name":"read","arguments":{"path":"'"$WS"'/agent.txt"}},
			{"op":"call","name":"read","arguments":{"path":"'"$T"'/srvdir/server.txt"}}]'
		echo "echo agent-sees-ws: \$(cat $WS/agent.txt 2>&1)"
		echo "echo agent-sees-srvdir: \$(cat $T/srvdir/server.txt 2>&1)"
	)
	ms_run "$script"
	assert_rc 0 "the session"
	# The policy: a denied tool is not even listed; the allowed one works.
	assert_contains "$OUT" 'fs: {"tools":["list_allowed_directories","read_text_file"]}' \
		"tools/list shows the allowed tools only"
	# The listed tools are pinned in the file `airlock mcp pins` reads:
	# the gateway opens no file, its monitor writes what it sends.
	assert_contains "$(cat "$XDG_STATE_HOME/airlock/mcp/fs.pins.json" 2>&1)" '"read_text_file":{"sha256":"' \
		"the session pinned the tools it listed"
	assert_contains "$OUT" 'server-only' "an allowed call inside the server's directory"
	assert_contains "$OUT" 'fs: {"content":[{"type":"text","text":"airlock denied the call: argument path names a path outside the workspace '"$T"'/srvdir"}],"isError":true}' \
		"a path outside the server's directory is refused by the argument constraint"
	assert_no_file "$T/srvdir/new.txt" "the denied write_file"
	assert_contains "$OUT" 'the policy denies the tool write_file"}],"isError":true}' "calling a denied tool returns an error"
	# The sandboxes: the server's cannot read the agent's workspace, the
	# agent's cannot read the server's directory; each reads its own.
	assert_contains "$OUT" 'probe: {"content":[{"type":"text","text":"ERROR ENOENT"}]}' \
		"the server's sandbox does not show the agent's workspace"
	assert_contains "$OUT" 'probe: {"content":[{"type":"text","text":"server-only\n"}]}' \
		"the server's sandbox shows its own directory"
	assert_contains "$OUT" "agent-sees-ws: agent-only" "the agent reads its workspace"
	assert_match "$OUT" "agent-sees-srvdir: cat: .*No such file or directory" \
		"the agent's sandbox does not show the server's directory"
	assert_contains "$OUT" "fs: rc=0" "the fs client ended cleanly"
	# Every decision in the session's signed log, which verifies.
	local log recs
	log=$(ms_session_log)
	[ -n "$log" ] || fail "no session log in $T/audit$(e2e_last_run)"
	recs=$(grep '"kind":"mcp"' "$log" || true)
	assert_eq 1 "$(ms_count "$recs" '"name":"fs"' '"tool":"read_text_file"' '"decision":"allow"')" \
		"the allowed call is recorded in the session's log"
	assert_eq 1 "$(ms_count "$recs" '"name":"fs"' '"tool":"read_text_file"' '"decision":"deny"' 'outside the workspace')" \
		"the call refused by the constraint is recorded"
	assert_eq 1 "$(ms_count "$recs" '"name":"fs"' '"tool":"write_file"' '"decision":"deny"')" \
		"the call of a denied tool is recorded"
	assert_eq 2 "$(ms_count "$recs" '"name":"probe"' '"tool":"read"' '"decision":"allow"')" \
		"the other server's calls too"
	ms_verify_logs
}

test_mcp_session_brokered_credential() {
	ms_need
	ms_upstream
	ms_setup
	local script
	script=$(
		echo 'echo "agent-env: $(env | tr "\n" " ")"'
		ms_client probe '[{"op":"call","name":"whoami"},{"op":"call","name":"env"}]'
	)
	ms_run "$script"
	assert_rc 0 "the session"
	# The upstream saw the secret: the proxy of the server's sandbox put it
	# in place of the placeholder.
	assert_contains "$OUT" 'auth\": \"ok' "the server's upstream received the brokered credential"
	# The server holds a placeholder; the agent holds nothing of it.
	assert_match "$OUT" 'probe: .*API_TOKEN\\":\\"' "the server's environment has the placeholder"
	assert_no_match "$OUT" 'agent-env: .*API_TOKEN' "the agent's environment has no credential variable"
	assert_not_contains "$OUT" "$SECRET" "neither environment holds the secret"
	local leaked
	leaked=$(grep -rl --exclude-dir=srv -- "$SECRET" "$T" "$WS" 2>/dev/null)
	assert_eq "" "$leaked" "no file of the run holds the secret"
	assert_contains "$(grep '"kind":"mcp"' "$(ms_session_log)")" '"tool":"whoami"' "the call is recorded"
	ms_verify_logs
}

test_mcp_session_undeclared_name_fails() {
	ms_need
	ms_setup
	local script
	script=$(
		echo '/run/airlock/airlock mcp connect nope </dev/null; echo "direct: rc=$?"'
		ms_client nope '[{"op":"list"}]'
		ms_client fs '[{"op":"list"}]'
	)
	ms_run "$script"
	assert_contains "$OUT" "declares no mcp.servers.nope" "the gateway names the undeclared server"
	assert_contains "$OUT" "direct: rc=1" "connect exits non-zero"
	assert_contains "$OUT" "nope: rc=3" "the client cannot connect"
	assert_contains "$OUT" 'fs: {"tools":["list_allowed_directories","read_text_file"]}' \
		"a declared name in the same session works"
}

test_mcp_session_connect_outside_a_session_fails() {
	LAST_CMD="airlock mcp connect fs (outside a session)"
	OUT=$("$AIRLOCK" mcp connect fs </dev/null 2>&1)
	RC=$?
	assert_rc 1 "connect outside airlock run"
	assert_contains "$OUT" "no MCP gateway at /run/airlock/mcp.sock" "says why"
}

test_mcp_session_bad_server_policy_refused() {
	ms_need
	ms_setup
	printf 'version: 1\nbogus: 1\n' >"$T/fs-policy.yaml"
	al --policy "$T/policy.yaml" -- /bin/true
	assert_rc 125 "a session whose server policy is bad does not start"
	assert_match "$ERR" "policy.yaml:[0-9]+: mcp.servers.fs.policy: the server's policy: .*fs-policy.yaml:2" \
		"the error names the field and the server's file and line"
}

test_mcp_session_server_death_ends_connect() {
	ms_need
	ms_setup
	# The server exits at once: the relay must end with an error, not hang
	# or report success.
	sed -i "s|command: \[node, \"$T/srvdir/session-server.mjs\"\]|command: [/bin/false]|" "$T/policy.yaml"
	ms_run "$(ms_client probe '[{"op":"list"}]')"
	assert_contains "$OUT" "the gateway ended the session" "connect says the session ended"
	assert_match "$OUT" "probe: rc=[1-9]" "the client fails"
}

# The end to end view of fail closed: the writer dies mid-session, the
# session ends, no further call reaches the server and its sandbox ends.
# (The supervisor also kills the gateway processes at once; with the agent
# killed too, the relay's end alone would stop the server, so this test
# does not single that out.)
test_mcp_session_audit_writer_death_stops_mcp() {
	ms_need
	ms_setup
	local init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
	local call='{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"read","arguments":{"path":"'"$T"'/srvdir/server.txt"}}}'
	# The agent speaks to the gateway, pauses, then calls again.
	cat >"$WS/agent.sh" <<EOF2
{ echo '$init'; echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'; echo '${call/ID/2}'
  sleep 30; echo '${call/ID/3}'; } | /run/airlock/airlock mcp connect probe >out.jsonl
echo survived
EOF2
	# The host watches the workspace while the agent runs: direct mode.
	sed -i 's/^version: 1$/version: 1\nsandbox: {workspace_mode: direct}/' "$T/policy.yaml"
	(cd "$WS" && HOME="$E2E_HOME" exec "$AIRLOCK" run --policy "$T/policy.yaml" -- /bin/bash ./agent.sh) \
		>"$T/d.out" 2>"$T/d.err" </dev/null &
	local apid=$! i rc
	wait_for 30 grep -q '"id":2,' "$WS/out.jsonl" || fail "the first call was not answered: $(cat "$T/d.err")"
	pgrep -f "$T/srvdir/[s]ession-server.mjs" >/dev/null || fail "the server is not running"
	for i in $(seq 100); do
		pkill -KILL -P "$apid" -f airlock-audit-writer 2>/dev/null && break
		sleep 0.1
	done
	wait "$apid"
	rc=$?
	assert_eq 125 "$rc" "exit status after the audit writer died"
	assert_contains "$(cat "$T/d.err")" "audit writer stopped" "the message says why"
	assert_not_contains "$(cat "$T/d.out")" "survived" "the agent outlived the audit writer"
	assert_not_contains "$(cat "$WS/out.jsonl")" '"id":3,' "no MCP call after the audit writer died"
	# The server's sandbox ends with the gateway.
	wait_for 10 sh -c "! pgrep -f '$T/srvdir/[s]ession-server.mjs' >/dev/null" ||
		fail "the MCP server outlived the session's audit writer"
}

test_mcp_session_observe_mode_refused() {
	ms_need
	ms_setup
	# Observe mode's root is the host's tree: no gateway socket there.
	sed -i 's/^version: 1$/version: 1\nsandbox: {mode: observe}/' "$T/policy.yaml"
	al --policy "$T/policy.yaml" -- /bin/true
	assert_rc 125 "a session with MCP servers in observe mode"
	assert_contains "$ERR" "observe mode has no gateway" "says why"
	sed -i '/^sandbox: {mode: observe}$/d' "$T/policy.yaml"
	al --policy "$T/policy.yaml" -- /bin/true
	assert_rc 0 "the same session in enforce mode"
}

# The socket speaks only the gateway's protocol: a name that is not a
# server name is refused, and after OK a line that is not JSON-RPC gets
# the gateway's parse error and never reaches the server, while the
# valid request beside it does.
test_mcp_session_socket_is_only_the_gateway() {
	ms_need
	ms_setup
	cat >"$WS/raw.py" <<'EOF2'
import socket, sys, time
def talk(lines, want):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("/run/airlock/mcp.sock")
    s.sendall("".join(l + "\n" for l in lines).encode())
    data, end = b"", time.time() + 30
    while time.time() < end and not all(w.encode() in data for w in want):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data.decode(errors="replace")
print("bad-name:", talk(["../../etc"], ["\n"]).strip())
init = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
call = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"%s"}}}' % sys.argv[1]
out = talk(["probe", init, "GET / HTTP/1.1", call], ['"id":1,', '"id":2,', "-32700"])
for l in out.splitlines():
    print("probe:", l)
EOF2
	ms_run "python3 ./raw.py $T/srvdir/server.txt"
	assert_contains "$OUT" "bad-name: ERR not a server name" "a name that is not a server name"
	assert_contains "$OUT" "probe: OK" "a declared name"
	assert_match "$OUT" 'probe: .*"code":-32700' "the line that is not JSON-RPC is answered by the gateway"
	assert_match "$OUT" 'probe: .*"id":2,.*server-only' "the valid call beside it reaches the server"
	assert_contains "$(cat "$T/srvdir/received.log")" '"method":"tools/call"' "the server's view: the call"
	assert_not_contains "$(cat "$T/srvdir/received.log")" "HTTP/1.1" "and not the other line"
}

# A server without a policy of its own: the built-in default with the
# session's workspace read-only and no network.
test_mcp_session_default_server_policy() {
	ms_need
	ms_setup
	# The server's script must be readable in its sandbox: in the workspace.
	cp "$MCP_DIR/session-server.mjs" "$WS/"
	sed -i "s|      command: \[node, \"$T/srvdir/session-server.mjs\"\]|      command: [node, \"$WS/session-server.mjs\"]|; /policy: \"\$T\/probe-policy.yaml\"/d" "$T/policy.yaml"
	sed -i "\|policy: \"$T/probe-policy.yaml\"|d" "$T/policy.yaml"
	grep -q probe-policy "$T/policy.yaml" && fail "the test's policy still names the server's policy"
	ms_run "$(ms_client probe '[{"op":"call","name":"read","arguments":{"path":"'"$WS"'/agent.txt"}},
		{"op":"call","name":"write","arguments":{"path":"'"$WS"'/by-server.txt"}},
		{"op":"call","name":"read","arguments":{"path":"'"$T"'/srvdir/server.txt"}},
		{"op":"call","name":"whoami"},{"op":"call","name":"env"}]')"
	assert_contains "$OUT" 'probe: {"content":[{"type":"text","text":"agent-only\n"}]}' \
		"the server reads the session's workspace"
	assert_contains "$OUT" 'probe: {"content":[{"type":"text","text":"ERROR EROFS"}]}' "read-only"
	assert_no_file "$WS/by-server.txt" "the server's write"
	assert_contains "$OUT" 'probe: {"content":[{"type":"text","text":"ERROR ENOENT"}]}' \
		"nothing else of the host"
	assert_contains "$OUT" 'probe: {"content":[{"type":"text","text":"ERROR connect EACCES' \
		"no network: even a loopback connect is refused"
	assert_match "$OUT" 'probe: .*AIRLOCK_SANDBOX' "the server's environment"
	assert_no_match "$OUT" 'probe: .*HTTPS_PROXY' "has no proxy"
	assert_contains "$OUT" "probe: rc=0" "the client ended cleanly"
}

# ms_step_up DECIDE: the agent calls probe's write (step_up) then read;
# DECIDE (approve, deny, or none: left to mcp.servers.probe.step_up_timeout,
# 1s) comes from another process through the connection's control
# socket, whose path and token the gateway prints on the session's stderr.
ms_step_up() {
	local decide=$1
	rm -f "$T/srvdir/w.txt" "$T/srvdir/received.log" "$T"/audit/*.jsonl "$T/su.err" "$T/su.out"
	ms_run_bg "$(ms_client probe '[{"op":"call","name":"write","arguments":{"path":"'"$T"'/srvdir/w.txt"}},
		{"op":"call","name":"read","arguments":{"path":"'"$T"'/srvdir/server.txt"}}]')"
	local pid=$!
	bg_register "$pid"
	wait_for 60 grep -q "airlock: step-up 1: server probe asks to run tool write" "$T/su.err" ||
		fail "the session's gateway did not announce the held call: $(cat "$T/su.err" 2>/dev/null)"
	local sock
	sock=$(sed -n "s/.*airlock approve --socket \([^ ]*\) 1'.*/\1/p" "$T/su.err" | head -1)
	[ -n "$sock" ] || fail "no control socket named: $(cat "$T/su.err")"
	[ "$decide" = none ] || step_up_decide "$sock" 1 write "$decide"
	wait "$pid"
	RC=$?
	OUT=$(cat "$T/su.out")
	assert_eq 0 "$RC" "the session: $OUT $(cat "$T/su.err")"
	assert_no_file "$sock" "the control socket is gone with the connection"
	assert_contains "$OUT" 'probe: {"content":[{"type":"text","text":"server-only\n"}]}' "the allowed tool works"
	RECS=$(grep '"kind":"mcp"' "$(ms_session_log)")
	assert_eq 1 "$(ms_count "$RECS" '"tool":"write"' '"decision":"defer"' '"message":"step-up: waiting')" \
		"the deferral is in the session's log"
}

# ms_run_bg SCRIPT: ms_run in the background, output in $T/su.out and
# $T/su.err.
ms_run_bg() {
	printf 'set -o pipefail 2>/dev/null\n%s\n' "$1" >"$WS/agent.sh"
	(cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run --policy "$T/policy.yaml" \
		-- /bin/bash ./agent.sh >"$T/su.out" 2>"$T/su.err" </dev/null) &
}

# Step-up inside a session: the call waits while a person decides from
# another terminal (airlock approve / deny against the connection's
# control socket), or until the timeout denies it; two records each time.
test_mcp_session_step_up() {
	ms_need
	ms_setup
	sed -i 's|        - {name: "\*", decision: allow}|        - {name: write, decision: step_up}\n        - {name: "*", decision: allow}\n      step_up_timeout: 1|' "$T/policy.yaml"
	grep -q 'decision: step_up' "$T/policy.yaml" || fail "the test's policy has no step_up rule"
	# The timeout is 1s for the third run; the first two must wait for
	# the person however slow the machine.
	sed 's|      step_up_timeout: 1|      step_up_timeout: 600|' "$T/policy.yaml" >"$T/policy-slow.yaml"
	cp "$T/policy.yaml" "$T/policy-fast.yaml"

	cp "$T/policy-slow.yaml" "$T/policy.yaml"
	ms_step_up approve
	assert_file "$T/srvdir/w.txt" "an approved call runs"
	assert_contains "$(cat "$T/srvdir/received.log")" '"name":"write"' "the server saw the approved call"
	assert_eq 1 "$(ms_count "$RECS" '"tool":"write"' '"decision":"allow"' 'step-up approved through the control socket')" \
		"its resolution names who decided"

	cp "$T/policy-slow.yaml" "$T/policy.yaml"
	ms_step_up deny
	assert_contains "$OUT" "denied through the control socket" "a denied call is an error result that says why"
	assert_no_file "$T/srvdir/w.txt" "the server did not run it"
	assert_not_contains "$(cat "$T/srvdir/received.log")" '"name":"write"' "the server never saw the call"
	assert_eq 1 "$(ms_count "$RECS" '"tool":"write"' '"decision":"deny"' 'step-up denied through the control socket')" \
		"its resolution names who decided"

	cp "$T/policy-fast.yaml" "$T/policy.yaml"
	ms_step_up none
	assert_contains "$OUT" "denied by the timeout after 1s" "no answer: denied at the timeout"
	assert_no_file "$T/srvdir/w.txt" "the server did not run it"
	assert_eq 1 "$(ms_count "$RECS" '"tool":"write"' '"decision":"deny"' 'step-up denied by the timeout after 1s')" \
		"its resolution names the timeout"
	ms_verify_logs
}
