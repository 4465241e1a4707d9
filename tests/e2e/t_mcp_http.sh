# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# MCP over Streamable HTTP through the egress proxy: an endpoint with
# `protocol: mcp` has each message decided by the MCP gateway. The real
# @modelcontextprotocol/server-everything runs in its Streamable HTTP mode
# on loopback outside the sandbox (it answers POSTs as SSE streams); inside
# `airlock run` the official SDK client (tests/e2e/mcp-http-client.mjs)
# and raw requests (python) reach it through the proxy. scripts/deps.sh
# installs the packages into tests/e2e/mcp/node_modules.

MCP_DIR=${MCP_DIR:-$here/mcp}
MCP_EV=$MCP_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js

mh_need() {
	command -v node >/dev/null || skip "node is not installed"
	[ -f "$MCP_EV" ] || skip "the MCP packages are not installed (scripts/deps.sh installs them into $MCP_DIR)"
}

# Start server-everything over Streamable HTTP; sets MP (its port). Extra
# environment for the server in "$@".
mh_start_server() {
	MP=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	env "$@" PORT="$MP" node "$MCP_EV" streamableHttp >"$T/ev.log" 2>&1 &
	bg_register $!
	wait_for 30 grep -q "listening on port" "$T/ev.log" ||
		fail "server-everything did not start: $(cat "$T/ev.log")"
}

# The policy: mcp.test is the server, its messages decided by mcp.servers.ev
# ($1: more settings of ev, indented 6 spaces).
mh_policy() {
	cat >"$T/policy.yaml" <<YAML
version: 1
sandbox:
  workspace_mode: direct # the host watches the workspace during a run
filesystem:
  read: ["$MCP_DIR", "$here"]
audit:
  dir: "$T/audit"
network:
  log: $T/net.jsonl
  leak_scan: {max_body: 64KiB}
  resolve: { mcp.test: 127.0.0.1, plain.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$MP]
  endpoints:
    - host: mcp.test
      id: mcp-ev
      ports: [$MP]
      protocol: mcp
      mcp_server: ev
    - host: plain.test
      id: plain-ev
      ports: [$MP]
mcp:
  servers:
    ev:
${1:-}
      tools:
        - {name: trigger-sampling-request, decision: allow}
        - {name: get-annotated-message, decision: step_up}
        - name: echo
          decision: allow
          args:
            message: {glob: "hi *"}
        - {name: trigger-long-running-operation, decision: allow}
        - {name: get-env, decision: allow}
        - {name: "get-*", decision: deny}
YAML
}

# mh_client OPS-JSON [HOST [EXTRA-SPEC]]: the SDK client inside airlock run.
mh_client() {
	local url="http://${2:-mcp.test}:$MP/mcp"
	al --policy "$T/policy.yaml" -- node "$here/mcp-http-client.mjs" "{\"url\":\"$url\",\"ops\":$1${3:-}}"
}

mh_dump() { [ -n "${MH_DUMP:-}" ] && { printf "%s\n" "$OUT" >>"$MH_DUMP"; mh_records >>"$MH_DUMP"; }; return 0; }
line() { printf '%s\n' "$OUT" | sed -n "${1}p"; }

# The proxy's MCP records (its network log, one JSON record a line).
mh_records() { grep '"kind":"mcp"' "$T/net.jsonl" 2>/dev/null || true; }

# A TLS front on loopback for the server, as mcps.test; sets sp (its port).
mh_tls_front() {
	mkdir -p "$T/tls"
	/usr/bin/python3 "$here/tls-front.py" "$T/tls" mcps.test "$MP" >"$T/tls/log" 2>&1 &
	bg_register $!
	wait_for 30 test -f "$T/tls/port" || fail "the TLS front did not start: $(cat "$T/tls/log")"
	sp=$(cat "$T/tls/port")
}

# mh_policy's file, with mcps.test:$sp intercepted and decided by ev.
mh_policy_tls() {
	SP=$sp TLSDIR=$T/tls /usr/bin/python3 - "$T/policy.yaml" <<'PY'
import os, sys
p = sys.argv[1]
s = open(p).read()
sp = os.environ["SP"]
s = s.replace("  endpoints:\n", "  endpoints:\n    - {host: mcps.test, ports: [%s], tls: intercept, protocol: mcp, mcp_server: ev}\n" % sp, 1)
s = s.replace("allow_private: [", "allow_private: [127.0.0.1:%s, " % sp, 1)
s = s.replace("resolve: { ", "resolve: { mcps.test: 127.0.0.1, ", 1)
s = s.replace("network:\n", "network:\n  upstream_ca: %s/ca.pem\n" % os.environ["TLSDIR"], 1)
open(p, "w").write(s)
PY
}

test_mcp_http_tools_decided_through_the_proxy() {
	mh_need
	mh_start_server
	mh_policy
	mh_client '[{"op":"list"},
		{"op":"call","name":"echo","arguments":{"message":"hi there"}},
		{"op":"call","name":"echo","arguments":{"message":"bye there"}},
		{"op":"call","name":"get-sum","arguments":{"a":1,"b":2}},
		{"op":"progress","name":"trigger-long-running-operation","arguments":{"duration":1,"steps":3}}]'
	mh_dump
	assert_rc 0 "the client ran"
	assert_contains "$(line 1)" '"echo"' "the allowed tool is listed"
	assert_contains "$(line 1)" '"get-env"' "an allowed get- tool is listed"
	assert_not_contains "$(line 1)" '"get-sum"' "the denied tool is not listed"
	assert_not_contains "$(line 1)" '"get-tiny-image"' "a tool of the denying glob is not listed"
	assert_not_contains "$(line 1)" '"trigger-sampling-request"' "a tool the server registers only for sampling clients is absent"
	assert_contains "$(line 2)" "Echo: hi there" "the allowed call ran on the server"
	assert_contains "$(line 3)" '"isError":true' "an argument outside its constraint is an error result"
	assert_contains "$(line 3)" "message" "the reason names the argument"
	assert_not_contains "$(line 3)" "Echo: bye" "the refused call did not reach the server"
	assert_contains "$(line 4)" '"isError":true' "the denied tool's call is an error result"
	assert_contains "$(line 4)" "get-sum" "the reason names the tool"
	assert_not_contains "$(line 4)" "The sum of" "the denied call did not run"
	# The server streams progress notifications, then the result, as SSE
	# events of one response: each passed through the gateway.
	assert_match "$(line 5)" '"progress":[1-9]' "progress notifications arrived as SSE events"
	assert_contains "$(line 5)" "Long running operation completed" "the streamed result arrived"
	local recs
	recs=$(mh_records)
	assert_match "$recs" '"host":"mcp.test".*"method":"tools/call","server":"ev","tool":"get-sum".*"args_sha256":"[0-9a-f]{64}".*"decision":"deny"' \
		"the denied call is recorded with server, tool, argument digest and decision"
	assert_match "$recs" '"tool":"echo".*"decision":"allow","rule":"mcp.servers.ev.tools\[2\]"' \
		"the allowed call is recorded with its rule"
	# In the session's signed log: API Activity records (class 6003).
	local audit
	audit=$(cat "$T"/audit/*.jsonl 2>/dev/null | grep '"kind":"mcp"' || true)
	[ -n "${MH_DUMP:-}" ] && printf '%s\n' "$audit" >>"$MH_DUMP"
	assert_match "$audit" '"class_uid":6003.*"get-sum"|"get-sum".*"class_uid":6003' "the denied call is an API Activity record in the session's log"
	# The same server through an endpoint without protocol: mcp is plain
	# HTTP: the gateway is not involved (the neighbour of the test above).
	mh_client '[{"op":"call","name":"get-sum","arguments":{"a":1,"b":2}}]' plain.test
	assert_contains "$(line 1)" "The sum of 1 and 2 is 3" "without protocol: mcp the call is not mediated"
}

# mh_step_up DECIDE: a step_up call (then an allowed one) through the
# proxy in the background; DECIDE (approve, deny or none) from outside
# through the proxy's control socket, as a person would.
mh_step_up() {
	local decide=$1
	rm -f "$T/su.out" "$T/su.err" "$WS/other.out" "$WS/step-up-seen" "$WS/self.out"
	# A second client of the same session calls the same server while
	# the first one's call waits: the wait holds no lock of the server's.
	cat >"$WS/agent.sh" <<EOF
(while ! grep -q . step-up-seen 2>/dev/null; do sleep 0.2; done
 read -r sock token <step-up-seen
 # The agent tries to approve its own call, knowing the socket's host path.
 /run/airlock/airlock approve --socket "\$sock" "\$token" >self.out 2>&1
 echo "cli=\$?" >>self.out
 /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.send(b"approve " + sys.argv[2].encode())
print(s.recv(100))' "\$sock" "\$token" >>self.out 2>&1
 echo "raw=\$?" >>self.out
 node "$here/mcp-http-client.mjs" '{"url":"http://mcp.test:$MP/mcp","ops":[{"op":"call","name":"echo","arguments":{"message":"hi meanwhile"}}]}' >other.out) &
node "$here/mcp-http-client.mjs" '{"url":"http://mcp.test:$MP/mcp","ops":[
	{"op":"call","name":"get-annotated-message","arguments":{"messageType":"success"}},
	{"op":"call","name":"echo","arguments":{"message":"hi after"}}]}'
rc=\$?
wait
exit \$rc
EOF
	(cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run --policy "$T/policy.yaml" -- \
		/bin/bash ./agent.sh >"$T/su.out" 2>"$T/su.err" </dev/null) &
	local pid=$!
	bg_register "$pid"
	wait_for 60 grep -q "airlock: step-up [0-9]*: server ev asks to run tool get-annotated-message (mcp.test:$MP)" "$T/su.err" ||
		fail "the proxy did not announce the held call: $(cat "$T/su.err" 2>/dev/null)"
	local sock token
	sock=$(sed -n "s/.*airlock approve --socket \([^ ]*\) [0-9]*'.*/\1/p" "$T/su.err" | head -1)
	token=$(sed -n "s/.*airlock: step-up \([0-9]*\): .*/\1/p" "$T/su.err" | head -1)
	[ -n "$sock" ] && [ -n "$token" ] || fail "no control socket or token named: $(cat "$T/su.err")"
	echo "$sock $token" >"$WS/step-up-seen"
	wait_for 60 grep -q "Echo: hi meanwhile" "$WS/other.out" ||
		fail "another call of the server waited behind the held one: $(cat "$WS/other.out" "$T/su.err" 2>/dev/null)"
	assert_match "$(cat "$WS/self.out")" 'cli=[1-9]' "the agent cannot approve its own call with airlock approve: $(cat "$WS/self.out")"
	assert_match "$(cat "$WS/self.out")" 'raw=[1-9]' "nor by connecting to the socket itself: $(cat "$WS/self.out")"
	assert_not_contains "$(cat "$WS/self.out")" "approved" "no approval came back to the agent"
	[ -n "${MH_DUMP:-}" ] && cat "$WS/self.out" >>"$MH_DUMP"
	[ "$decide" = none ] || step_up_decide "$sock" "$token" get-annotated-message "$decide"
	wait "$pid"
	RC=$?
	OUT=$(cat "$T/su.out")
	mh_dump
	assert_eq 0 "$RC" "the session: $OUT $(cat "$T/su.err")"
	assert_no_file "$sock" "the control socket is gone with the session"
	assert_contains "$(line 2)" "Echo: hi after" "the next call goes on"
	assert_eq 1 "$(mh_records | grep '"tool":"get-annotated-message"' | grep -c '"decision":"defer".*step-up: waiting')" \
		"the deferral is recorded"
}

test_mcp_http_step_up_approve_deny_timeout() {
	mh_need
	mh_start_server
	# The first two runs wait for the person however slow the machine.
	mh_policy "      step_up_timeout: 600"
	mh_step_up approve
	assert_contains "$(line 1)" "Operation completed successfully" "the approved call ran on the server"
	assert_not_contains "$(line 1)" '"isError":true' "an approved call is no error"
	assert_eq 1 "$(mh_records | grep '"tool":"get-annotated-message"' | grep -c '"decision":"allow".*step-up approved through the control socket')" \
		"its resolution names who decided"

	: >"$T/net.jsonl"
	mh_step_up deny
	assert_contains "$(line 1)" '"isError":true' "a denied call is an error result"
	assert_contains "$(line 1)" "denied through the control socket" "that says why"
	assert_not_contains "$(line 1)" "Operation completed" "the denied call did not run"
	assert_eq 1 "$(mh_records | grep '"tool":"get-annotated-message"' | grep -c '"decision":"deny".*step-up denied through the control socket')" \
		"its resolution names who decided"

	: >"$T/net.jsonl"
	mh_policy "      step_up_timeout: 1"
	mh_step_up none
	assert_contains "$(line 1)" "denied by the timeout after 1s" "no answer: denied at the timeout"
	assert_not_contains "$(line 1)" "Operation completed" "the call did not run"
	assert_eq 1 "$(mh_records | grep '"tool":"get-annotated-message"' | grep -c '"decision":"deny".*step-up denied by the timeout after 1s')" \
		"its resolution names the timeout"
	# Both records of each call in the session's signed log too.
	local audit
	audit=$(cat "$T"/audit/*.jsonl 2>/dev/null | grep '"kind":"mcp"' | grep -c 'get-annotated-message' || true)
	[ "${audit:-0}" -ge 6 ] || fail "the step-up records are not all in the session's logs ($audit)"
	local f
	for f in "$T"/audit/*.jsonl; do
		"$AIRLOCK" audit verify "$f" >"$T/verify.out" 2>&1 || fail "airlock audit verify $f: $(cat "$T/verify.out")"
	done
}

# An agent that hangs up while its call waits: the call is denied then,
# not kept for a person to approve after the agent has gone.
test_mcp_http_step_up_client_leaves() {
	mh_need
	mh_start_server
	mh_policy "      step_up_timeout: 600"
	cat >"$WS/leave.py" <<'PY'
import http.client, json, os, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "get-annotated-message", "arguments": {"messageType": "success"}}})
c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=3)
c.request("POST", os.environ["URL"], body=body,
          headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
try:
    print("answered", c.getresponse().status)
except OSError as e:
    print("gave up:", type(e).__name__)
c.close()
PY
	# The session lasts until the denial is in the network log (bounded),
	# not for a guessed time after the agent gave up.
	local n=$((E2E_RUN + 1)) pid
	(al --policy "$T/policy.yaml" -- /bin/sh -c "URL=http://mcp.test:$MP/mcp /usr/bin/python3 leave.py
		i=0; while [ ! -e left-seen ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done"
	 echo "$RC" >"$T/leave.rc") &
	pid=$!
	bg_register "$pid"
	wait_for 60 grep -q 'step-up denied because the client left' "$T/net.jsonl"
	: >"$WS/left-seen"
	wait "$pid"
	RC=$(cat "$T/leave.rc")
	OUT=$(cat "$T/run$n.out")
	ERR=$(cat "$T/run$n.err")
	mh_dump
	assert_rc 0 "the agent ran: $ERR"
	assert_contains "$OUT" "gave up" "the agent hung up while its call waited"
	assert_contains "$ERR" "asks to run tool get-annotated-message" "the call was held for a person"
	assert_eq 1 "$(mh_records | grep '"tool":"get-annotated-message"' | grep -c '"decision":"deny".*step-up denied because the client left')" \
		"the call is denied when its agent leaves, and the record says so"
	assert_eq 0 "$(mh_records | grep '"tool":"get-annotated-message"' | grep -c '"decision":"allow"')" \
		"nothing let the call through"
}

test_mcp_http_results_scanned() {
	mh_need
	mh_start_server MH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345
	mh_policy
	mh_client '[{"op":"call","name":"get-env","arguments":{}},{"op":"call","name":"echo","arguments":{"message":"hi clean"}}]'
	mh_dump
	assert_rc 0 "the client ran"
	assert_not_contains "$OUT" "ghp_0123456789" "the token in the result does not reach the agent"
	assert_contains "$(line 1)" '"isError":true' "the result holding a secret is withheld"
	assert_contains "$(line 1)" "github-token" "the reason names the pattern"
	assert_contains "$(line 2)" "Echo: hi clean" "a clean result passes"
	assert_match "$(mh_records)" '"tool":"get-env","direction":"server".*"decision":"deny","rule":"scan.secrets"' \
		"the withheld result is recorded"
}

# A credential injected into requests to the MCP endpoint, which the
# server hands back (here: the environment its get-env tool prints, as a
# server holding the same key would): withheld like a pattern's token,
# though it matches none. The neighbour: a clean result passes.
test_mcp_http_results_never_carry_a_credential() {
	mh_need
	local secret="mcp-bound-$RANDOM$RANDOM-k3y-$RANDOM"
	printf '%s\n' "$secret" >"$T/mcp-key"
	chmod 644 "$T/mcp-key"
	mh_start_server MH_KEY="$secret"
	mh_tls_front
	mh_policy
	mh_policy_tls
	cat >>"$T/policy.yaml" <<YAML
credentials:
  - name: mcpkey
    source: file:$T/mcp-key
    env: MCP_KEY
    bindings:
      - { host: mcps.test, port: $sp, header: X-Api-Key, template: "{secret}" }
YAML
	al --policy "$T/policy.yaml" -- node "$here/mcp-http-client.mjs" "{\"url\":\"https://mcps.test:$sp/mcp\",\"ops\":[
		{\"op\":\"call\",\"name\":\"get-env\",\"arguments\":{}},
		{\"op\":\"call\",\"name\":\"echo\",\"arguments\":{\"message\":\"hi clean\"}}]}"
	mh_dump
	assert_rc 0 "the client ran"
	assert_not_contains "$OUT" "$secret" "the credential in the result does not reach the agent"
	assert_contains "$(line 1)" '"isError":true' "the result holding the credential is withheld"
	assert_contains "$(line 1)" "credential:mcpkey" "the reason names the credential"
	assert_contains "$(line 2)" "Echo: hi clean" "a clean result passes"
	assert_match "$(mh_records)" '"tool":"get-env","direction":"server".*"decision":"deny","rule":"scan.secrets"' \
		"the withheld result is recorded"
}

test_mcp_http_server_requests_in_the_stream() {
	mh_need
	mh_start_server
	# The server asks the client for sampling inside the SSE stream of
	# the tools/call it is answering.
	mh_policy "      server_requests: {sampling: true}"
	mh_client '[{"op":"call","name":"trigger-sampling-request","arguments":{"prompt":"p"}}]' mcp.test ',"sampling":true'
	mh_dump
	assert_rc 0 "the client ran"
	assert_contains "$(line 1)" "sampled by the client" "an allowed sampling request reached the client and its answer the server"
	assert_eq '{"sampled":1}' "$(line 2)" "the client was asked once"
	assert_match "$(mh_records)" '"method":"sampling/createMessage".*"direction":"server","decision":"allow"' \
		"the allowed server request is recorded"

	rm -f "$T/net.jsonl"
	mh_policy
	# The refusal goes to the server at once (posted on a connection of
	# its own): the call ends with the server's error, not a timeout.
	mh_client '[{"op":"call","name":"trigger-sampling-request","arguments":{"prompt":"p"}}]' mcp.test ',"sampling":true'
	mh_dump
	assert_rc 0 "the client ran"
	assert_not_contains "$(line 1)" "sampled by the client" "the refused sampling request got no answer from the client"
	assert_contains "$(line 1)" "airlock refused the server's request sampling/createMessage" \
		"the server was told why, and the call ended with that"
	assert_eq '{"sampled":0}' "$(line 2)" "the client was never asked"
	assert_match "$(mh_records)" '"method":"sampling/createMessage".*"direction":"server","decision":"deny","rule":"[^"]+","reason":"[^"]*sampling' \
		"the refused server request is recorded"
	assert_match "$(cat "$T/net.jsonl")" '"decision":"allow".*"reason":"the MCP gateway.s refusal of a server request"' \
		"the posted refusal is a request of the proxy's own, recorded"
}

test_mcp_http_call_limit_spans_connections() {
	mh_need
	mh_start_server
	mh_policy "      max_calls: 2"
	# The client opens a connection per request (mcp-http-client.mjs):
	# the limit is the session's, kept by the one engine the proxy has
	# for ev, not the connection's.
	mh_client '[{"op":"call","name":"echo","arguments":{"message":"hi one"}},
		{"op":"call","name":"echo","arguments":{"message":"hi two"}},
		{"op":"call","name":"echo","arguments":{"message":"hi three"}}]'
	mh_dump
	assert_contains "$(line 1)" "Echo: hi one" "the first call ran"
	assert_contains "$(line 2)" "Echo: hi two" "the second call ran"
	assert_contains "$(line 3)" '"isError":true' "the third call is over the limit"
	assert_contains "$(line 3)" "the session's 2 tool calls are used" "the reason names the limit"
	assert_not_contains "$(line 3)" "Echo: hi three" "the call over the limit did not run"
	assert_match "$(mh_records)" '"tool":"echo".*"decision":"deny","rule":"mcp.servers.ev.max_calls"' \
		"the refusal is recorded with the limit as its rule"
}

test_mcp_http_inside_intercepted_tls() {
	mh_need
	mh_start_server
	mh_tls_front
	mh_policy
	mh_policy_tls
	al --policy "$T/policy.yaml" -- node "$here/mcp-http-client.mjs" "{\"url\":\"https://mcps.test:$sp/mcp\",\"ops\":[
		{\"op\":\"list\"},{\"op\":\"call\",\"name\":\"echo\",\"arguments\":{\"message\":\"hi tls\"}},
		{\"op\":\"call\",\"name\":\"get-sum\",\"arguments\":{\"a\":1,\"b\":2}}]}"
	mh_dump
	assert_rc 0 "the client ran"
	assert_contains "$(line 1)" '"echo"' "the allowed tool is listed"
	assert_not_contains "$(line 1)" '"get-sum"' "the denied tool is not listed"
	assert_contains "$(line 2)" "Echo: hi tls" "the allowed call ran through the intercepted tunnel"
	assert_contains "$(line 3)" '"isError":true' "the denied call is an error result"
	assert_not_contains "$(line 3)" "The sum of" "the denied call did not run"
	assert_match "$(mh_records)" '"host":"mcps.test".*"tool":"get-sum".*"decision":"deny"' "the denial is recorded"

	# Several exchanges in one tunnel: its upstream is fixed, so each
	# response must leave it in step (a JSON answer, an SSE stream, a
	# refusal the proxy makes itself).
	cat >"$WS/tunnel.py" <<'PY'
import http.client, json, os, sys, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
host, port = sys.argv[1], int(sys.argv[2])
c = http.client.HTTPSConnection(proxy.hostname, proxy.port, timeout=20)
c.set_tunnel(host, port)
h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
def post(msg, extra={}):
    c.request("POST", "/mcp", body=json.dumps(msg), headers={**h, **extra})
    r = c.getresponse()
    body = r.read().decode().replace("\n", " ")
    print(r.status, body[:300])
    return r
r = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
          "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
sid = {"Mcp-Session-Id": r.getheader("Mcp-Session-Id")}
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get-sum", "arguments": {"a": 1, "b": 2}}}, sid)
post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi again"}}}, sid)
PY
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./tunnel.py mcps.test "$sp"
	mh_dump
	assert_rc 0 "the raw client ran"
	assert_match "$(line 1)" '^200 .*"protocolVersion"' "initialize in the tunnel"
	assert_match "$(line 2)" '^202 ' "the notification in the same tunnel"
	assert_match "$(line 3)" '^200 .*"isError":true' "a refusal of the proxy's in the same tunnel"
	assert_match "$(line 4)" '^200 .*Echo: hi again' "then an allowed call still in the same tunnel"
}

# Raw requests for what the SDK never sends.
mh_raw_client() {
	cat >"$WS/raw.py" <<'PY'
import http.client, json, os, sys, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
url = sys.argv[1]
for spec in json.loads(sys.argv[2]):
    body = spec["body"].encode() if "body" in spec else b"x" * spec["size"]
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(spec.get("headers", {}))
    c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=20)
    c.request("POST", url, body=body, headers=h)
    r = c.getresponse()
    print(r.status, r.read().decode(errors="replace").replace("\n", " "))
    c.close()
PY
}

test_mcp_http_refuses_malformed_and_disagreeing_messages() {
	mh_need
	mh_start_server
	mh_policy
	mh_raw_client
	local init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
	local call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi raw"}}}'
	local specs
	specs=$(INIT=$init CALL=$call /usr/bin/python3 -c '
import json, os
i, c = os.environ["INIT"], os.environ["CALL"]
print(json.dumps([
  {"body": i, "headers": {"Mcp-Method": "tools/list"}},
  {"body": i, "headers": {"Mcp-Method": "initialize"}},
  {"body": c, "headers": {"Mcp-Method": "tools/call", "Mcp-Name": "get-env"}},
  {"body": c, "headers": {"Mcp-Method": "tools/call", "Mcp-Name": "echo"}},
  {"body": "{\"jsonrpc\":\"2.0\",\"id\":3,"},
  {"body": "[" + i + "]"},
  {"size": 70000},
  {"body": json.dumps({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}), "headers": {"MCP-Protocol-Version": "2025-11-25"}},
  {"body": json.dumps({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}), "headers": {"MCP-Protocol-Version": "2026-07-28"}},
]))')
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./raw.py "http://mcp.test:$MP/mcp" "$specs"
	mh_dump
	assert_rc 0 "the raw client ran"
	assert_match "$(line 1)" '^400 .*"error".*Mcp-Method tools/list disagrees with the message.s method initialize' \
		"an Mcp-Method that disagrees with the body is refused"
	assert_match "$(line 2)" '^200 .*"result".*"protocolVersion"' "the agreeing neighbour reaches the server"
	assert_match "$(line 3)" '^400 .*Mcp-Name get-env disagrees with the message.s params.name echo' \
		"an Mcp-Name that disagrees with params.name is refused"
	assert_match "$(line 4)" '^400 .*"error"' "the agreeing neighbour is forwarded (the server refuses it: no session)"
	assert_not_contains "$(line 4)" "airlock" "the agreeing neighbour's answer is the server's"
	assert_match "$(line 5)" '^400 .*"code":-32700' "a malformed body is refused with a parse error"
	assert_match "$(line 6)" '^400 .*"code":-32600' "a batch is refused"
	assert_match "$(line 7)" '^413 .*"error".*larger than its bound' "an oversized body is refused"
	assert_match "$(line 8)" '^400 .*MCP-Protocol-Version 2025-11-25 disagrees' \
		"a protocol version header that disagrees with _meta is refused"
	assert_match "$(line 9)" '^400 .*needs the Mcp-Method header' \
		"2026-07-28 requests need Mcp-Method"
	local recs
	recs=$(mh_records)
	assert_match "$recs" '"method":"initialize".*"decision":"deny","rule":"protocol","reason":"Mcp-Method tools/list' \
		"the header disagreement is recorded"
	assert_match "$recs" '"method":"\(malformed\)".*"decision":"deny"' "the malformed body is recorded"
	assert_match "$recs" '"method":"\(oversized\)".*"decision":"deny"' "the oversized body is recorded"
	assert_not_contains "$(cat "$T/ev.log")" "get-env" "nothing refused reached the server"
}

test_mcp_http_requests_decided_whatever_their_framing() {
	mh_need
	mh_start_server
	mh_policy
	mh_raw_client
	local specs
	specs=$(/usr/bin/python3 -c '
import json
j = {"jsonrpc": "2.0"}
def m(**kw):
    d = dict(j); d.update(kw); return json.dumps(d)
call = lambda name, **kw: m(method=kw.pop("method", "tools/call"), params={"name": name, "arguments": {}}, **kw)
print(json.dumps([
  {"body": call("get-tiny-image")},
  {"body": call("get-tiny-image", method="Tools/Call")},
  {"body": call("get-annotated-message")},
  {"body": m(method="resources/read", params={"uri": "demo://resource/static/document/../../secret"})},
  {"body": m(method="prompts/get", params={"name": "steal"})},
  {"body": call("get-tiny-image", id=None)},
  {"body": json.dumps([json.loads(call("get-tiny-image", id=1))])},
  {"body": m(id=2, method="ping", Method="tools/call", params={"name": "get-tiny-image"})},
  {"body": m(method="tools/call", params={"name": "echo", "arguments": {"message": "hi idless"}})},
  {"body": m(method="notifications/initialized")},
]))')
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./raw.py "http://mcp.test:$MP/mcp" "$specs"
	mh_dump
	assert_rc 0 "the raw client ran"
	local i
	for i in 1 2 3 4 5; do
		assert_match "$(line $i)" '^403 .*"code":-32001,"message":"airlock refused the message' \
			"id-less denied request $i is refused by the proxy"
	done
	for i in 6 7 8; do
		assert_match "$(line $i)" '^400 .*"code":-32600,"message":"airlock refused a malformed message' \
			"framing $i is refused as malformed"
	done
	assert_not_contains "$(line 9)" "airlock" "an allowed id-less call is forwarded: the answer is the server's"
	assert_not_contains "$(line 10)" "airlock" "the client's notifications/initialized is forwarded"
	local recs
	recs=$(mh_records)
	assert_eq 2 "$(printf '%s\n' "$recs" | grep '"tool":"get-tiny-image"' | grep -c '"decision":"deny"')" \
		"both id-less calls of the denied tool are recorded"
	assert_match "$recs" '"tool":"get-annotated-message".*"decision":"deny"' \
		"an id-less step-up call is denied: it cannot be held"
	assert_match "$recs" '"method":"resources/read".*"decision":"deny"' "the id-less read is recorded"
	assert_match "$recs" '"method":"prompts/get".*"decision":"deny"' "the id-less prompt is recorded"
	assert_match "$recs" '"tool":"echo".*"decision":"allow"' "the allowed id-less call is recorded"
	assert_not_contains "$(cat "$T/ev.log")" "get-tiny-image" "nothing refused reached the server"
}

# A server's SSE stream is decided message by message: a server request
# sent without an id (sampling, roots, elicitation), which a client would
# act on, is dropped and recorded; a key in a notification or an error is
# withheld; a clean notification and the result pass unchanged.
test_mcp_http_sse_server_requests_without_id_decided() {
	command -v node >/dev/null || skip "node is not installed"
	MP=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	(cd "$T" && PORT=$MP exec node "$MCP_DIR/sse-server.mjs") >"$T/sse.log" 2>&1 &
	bg_register $!
	wait_for 30 grep -q "listening on port" "$T/sse.log" || fail "the SSE server did not start: $(cat "$T/sse.log")"
	cat >"$T/policy.yaml" <<YAML
version: 1
filesystem:
  read: ["$here"]
audit:
  dir: "$T/audit"
network:
  log: $T/net.jsonl
  resolve: { mcp.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$MP]
  endpoints:
    - {host: mcp.test, ports: [$MP], protocol: mcp, mcp_server: hostile}
mcp:
  servers:
    hostile:
      tools:
        - {name: "*", decision: allow}
YAML
	mh_raw_client
	local call='{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{}}}'
	local specs
	# shellcheck disable=SC2059
	specs=$(C1=$(printf "$call" 1 noisy) C2=$(printf "$call" 2 fails) C3=$(printf "$call" 3 clean) /usr/bin/python3 -c '
import json, os
print(json.dumps([{"body": os.environ[k]} for k in ("C1", "C2", "C3")]))')
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./raw.py "http://mcp.test:$MP/mcp" "$specs"
	mh_dump
	assert_rc 0 "the raw client ran"
	assert_not_contains "$OUT" "AKIAIOSFODNN7EXAMPLE" "no key in a notification or an error reaches the client"
	assert_no_match "$OUT" '"method":"(sampling/createMessage|roots/list|elicitation/create)"' \
		"no id-less server request the policy forbids reaches the client"
	assert_not_contains "$OUT" "exfiltrate" "the sampling request's text never reaches the client"
	assert_contains "$(line 1)" '"text":"noisy done"' "the noisy call's result arrives"
	assert_contains "$(line 1)" '"data":"indexing done"' "its clean notification arrives"
	assert_match "$(line 2)" '"error":\{"code":-32001,"message":"airlock withheld the error' "a key in an error is withheld"
	assert_contains "$(line 3)" '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"indexing done"}}' \
		"a clean stream's notification passes unchanged"
	assert_contains "$(line 3)" '"text":"clean done"' "a clean stream's result passes"
	local recs
	recs=$(mh_records)
	assert_match "$recs" '"method":"sampling/createMessage".*"decision":"deny"' "the id-less sampling request is recorded as denied"
	assert_match "$recs" '"method":"roots/list".*"decision":"deny"' "the id-less roots request is recorded as denied"
}
