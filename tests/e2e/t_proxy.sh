# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The egress proxy: the sandbox reaches the network only through it, and it
# decides every request. Real servers on 127.0.0.1 (HTTP, HTTPS signed by a
# CA made for the test, a WebSocket echo); test host names map to loopback
# through the policy's `resolve`. Every denial is paired with an allowed
# neighbour.

# The policy the tests share; $1 adds lines under network:.
net_policy() {
	cat <<YAML
version: 1
${NET_FS:-}
network:
  log: $T/net.jsonl
  upstream_ca: $T/srv/ca.pem
  resolve: { api.test: 127.0.0.1, secure.test: 127.0.0.1, tunnel.test: 127.0.0.1, other.test: 127.0.0.1, ws.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP, 127.0.0.1:$SP, 127.0.0.1:$WP${NET_PRIVATE_EXTRA:-}]
  endpoints:
    - host: api.test
      id: api
      ports: [$HP]
      rules:
        - { id: api-read, methods: [GET, HEAD], path: "/public/**" }
        - { id: api-post, methods: [POST], path: /upload }
        - { id: api-git, methods: [GET], path: "/git/allowed.git/**" }
    - host: secure.test
      id: secure
      ports: [$SP]
      tls: intercept
      rules:
        - { id: secure-get, methods: [GET], path: "/ok/*" }
    - host: tunnel.test
      id: tunnel
      ports: [$SP]
    - host: ws.test
      id: ws
      ports: [$WP]
      rules:
        - { id: ws-upgrade, methods: [GET], path: /ws, websocket: true }
    - host: "127.0.0.1"
      id: raw-ip
      ports: [1, $HP]
    - host: 169.254.169.254
      id: metadata
      ports: [80]
${1:-}
YAML
}

# A python client inside the sandbox: fetch URL with METHOD, print
# "STATUS BODY" (urllib honours HTTP_PROXY and SSL_CERT_FILE).
write_client() {
	cat >"$WS/fetch.py" <<'PY'
import sys, urllib.request, urllib.error, ssl
method, url = sys.argv[1], sys.argv[2]
data = sys.argv[3].encode() if len(sys.argv) > 3 else None
headers = dict(h.split(": ", 1) for h in sys.argv[4:])
req = urllib.request.Request(url, data=data, method=method, headers=headers)
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
except Exception as e:
    print("ERROR", type(e).__name__, e)
PY
}

fetch() { # METHOD URL [BODY [HEADER...]]
	al_policy "$(net_policy)" -- /usr/bin/python3 ./fetch.py "$@"
}

test_proxy_allows_a_rule_and_denies_its_neighbours() {
	start_servers
	write_client
	fetch GET "http://api.test:$HP/public/readme"
	assert_match "$OUT" '^200 .*"path": "/public/readme"' "allowed GET through the proxy"
	fetch GET "http://api.test:$HP/private/keys"
	assert_match "$OUT" '^403 ' "GET outside the rule's path"
	assert_contains "$OUT" "airlock:" "the 403 says what was denied"
	fetch DELETE "http://api.test:$HP/public/readme"
	assert_match "$OUT" '^403 ' "a method the rule does not name"
	fetch POST "http://api.test:$HP/upload" "payload"
	assert_match "$OUT" '^200 .*"body": "payload"' "allowed POST with a body"
	fetch GET "http://other.test:$HP/public/readme"
	assert_match "$OUT" '^403 ' "a host no endpoint names"
	assert_contains "$(cat "$T/net.jsonl")" '"decision":"deny"' "denials are in the decision log"
	assert_contains "$(cat "$T/net.jsonl")" '"rule":"api-read"' "allows name their rule"
}

test_proxy_is_the_only_way_out() {
	start_servers
	write_client
	# A client that ignores HTTP_PROXY gets nowhere: the sandbox's network
	# namespace has only loopback and Landlock allows only the proxy port.
	al_policy "$(net_policy)" -- /usr/bin/python3 -c "
import socket
for port in ($HP, 3128):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(('127.0.0.1', port)); print('connected', port)
    except Exception as e:
        print('refused', port, e)
"
	assert_contains "$OUT" "refused $HP" "direct connect to the server, ignoring the proxy"
	assert_contains "$OUT" "connected 3128" "the proxy port itself"
	al_policy "$(net_policy)" -- /bin/sh -c 'env | grep -i _proxy= | sort'
	assert_contains "$OUT" "HTTP_PROXY=http://127.0.0.1:3128" "HTTP_PROXY set"
	assert_contains "$OUT" "https_proxy=http://127.0.0.1:3128" "https_proxy set"
	# Without a network section there is no proxy at all.
	al -- /bin/sh -c 'env | grep -ci _proxy=; exit 0'
	assert_eq "0" "$OUT" "no proxy variables without network"
}

test_proxy_ssrf_and_metadata_defence() {
	start_servers
	write_client
	# 127.0.0.1:1 is an allowed endpoint but not in allow_private.
	local form
	for form in 127.0.0.1 2130706433 0x7f.1 127.1 0177.0.0.1; do
		fetch GET "http://$form:1/"
		assert_match "$OUT" '^403 ' "loopback written as $form"
	done
	fetch GET "http://127.0.0.1:$HP/public/x"
	assert_match "$OUT" '^200 ' "loopback that allow_private names"
	fetch GET "http://169.254.169.254/latest/meta-data/"
	assert_match "$OUT" '^403 ' "the cloud metadata address"
	assert_contains "$OUT" "metadata" "the refusal names the metadata address"
}

test_proxy_https_interception_decides_each_request() {
	start_servers
	write_client
	fetch GET "https://secure.test:$SP/ok/page"
	assert_match "$OUT" '^200 .*"path": "/ok/page"' "intercepted HTTPS GET the rule allows"
	fetch GET "https://secure.test:$SP/admin"
	assert_match "$OUT" '^403 ' "intercepted HTTPS GET outside the rule"
	fetch POST "https://secure.test:$SP/ok/page" "x"
	assert_match "$OUT" '^403 ' "intercepted HTTPS POST"
	# curl and git trust the session CA through the variables set inside.
	al_policy "$(net_policy)" -- /usr/bin/curl -sS "https://secure.test:$SP/ok/curl"
	assert_contains "$OUT" '"path": "/ok/curl"' "curl through interception"
}

test_proxy_connect_tunnel_checks_sni() {
	start_servers
	write_client
	cat >"$WS/sni.py" <<'PY'
import socket, ssl, sys
host, port, sni = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
print(s.recv(4096).split(b"\r\n")[0].decode())
ctx = ssl.create_default_context(cafile=sys.argv[4])
ctx.check_hostname = False
try:
    t = ctx.wrap_socket(s, server_hostname=sni)
    t.sendall(f"GET /t HTTP/1.1\r\nHost: {sni}\r\nConnection: close\r\n\r\n".encode())
    print("TLS-OK", t.recv(4096).split(b"\r\n")[0].decode())
except Exception as e:
    print("TLS-FAIL", type(e).__name__)
PY
	cp "$T/srv/ca.pem" "$WS/ca.pem"
	al_policy "$(net_policy)" -- /usr/bin/python3 ./sni.py tunnel.test "$SP" tunnel.test ./ca.pem
	assert_contains "$OUT" "TLS-OK HTTP/1.1 200" "a tunnel whose SNI is its host"
	al_policy "$(net_policy)" -- /usr/bin/python3 ./sni.py tunnel.test "$SP" other.test ./ca.pem
	assert_contains "$OUT" "TLS-FAIL" "SNI naming another host (domain fronting)"
	assert_contains "$(cat "$T/net.jsonl")" "does not match CONNECT" "the fronting attempt is recorded"
	al_policy "$(net_policy)" -- /usr/bin/python3 ./sni.py other.test "$SP" other.test ./ca.pem
	assert_contains "$OUT" "403" "CONNECT to a host no endpoint names"
}

test_proxy_response_bodies_arrive_whole() {
	start_servers
	# Bodies framed by length, chunked and read to EOF, of sizes on either
	# side of the proxy's buffer and splice thresholds, one after another
	# on one connection where the framing allows, plain and intercepted.
	cat >"$WS/bodies.py" <<'PY'
import http.client, ssl, sys
hp, sp = sys.argv[1], int(sys.argv[2])
sizes = [0, 1, 16000, 40000, 65535, 65536, 70000, 300000]
def want(n):
    return bytes((7 * i + 3) % 256 for i in range(n))
def check(conn, url, host, n, tag):
    conn.request("GET", url, headers={"Host": host})
    r = conn.getresponse()
    body = r.read()
    print(tag, n, "OK" if r.status == 200 and body == want(n) else "BAD %d %d" % (r.status, len(body)))
for mode in ("length", "chunked"):
    c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=20)
    for n in sizes:
        check(c, f"http://api.test:{hp}/public/gen-{mode}-{n}", f"api.test:{hp}", n, "plain-" + mode)
    t = http.client.HTTPSConnection("127.0.0.1", 3128, timeout=20, context=ssl.create_default_context())
    t.set_tunnel("secure.test", sp)
    for n in sizes:
        check(t, f"/ok/gen-{mode}-{n}", f"secure.test:{sp}", n, "tls-" + mode)
for n in sizes:
    c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=20)
    check(c, f"http://api.test:{hp}/public/gen-eof-{n}", f"api.test:{hp}", n, "plain-eof")
PY
	al_policy "$(net_policy)" -- /usr/bin/python3 ./bodies.py "$HP" "$SP"
	assert_eq "40" "$(grep -c ' OK$' <<<"$OUT")" "every body whole: $(grep -v ' OK$' <<<"$OUT" | head -3)"
	assert_not_contains "$OUT" "BAD" "no body cut or changed"
}

test_proxy_refuses_smuggling() {
	start_servers
	cat >"$WS/raw.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(sys.argv[1].encode().decode("unicode_escape").encode("latin-1"))
print(s.recv(4096).split(b"\r\n")[0].decode())
PY
	local u="http://api.test:$HP/public/x"
	local h="Host: api.test:$HP"
	local req
	for req in \
		"POST $u HTTP/1.1\\r\\n$h\\r\\nContent-Length: 4\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n" \
		"POST $u HTTP/1.1\\r\\n$h\\r\\nContent-Length: 4\\r\\nContent-Length: 5\\r\\n\\r\\nabcd" \
		"GET $u HTTP/1.1\\r\\n$h\\r\\nX-A: b\\r\\n c\\r\\n\\r\\n" \
		"GET $u HTTP/1.1\\r\\nHost: other.test:$HP\\r\\n\\r\\n" \
		"GET $u HTTP/1.1\\n$h\\n\\n" \
		"G(T $u HTTP/1.1\\r\\n$h\\r\\n\\r\\n"; do
		al_policy "$(net_policy)" -- /usr/bin/python3 ./raw.py "$req"
		assert_match "$OUT" '^HTTP/1.1 (400|403|501) ' "smuggling attempt refused: $req"
	done
	al_policy "$(net_policy)" -- /usr/bin/python3 ./raw.py "GET $u HTTP/1.1\\r\\n$h\\r\\nConnection: close\\r\\n\\r\\n"
	assert_match "$OUT" '^HTTP/1.0 200|^HTTP/1.1 200' "the same request, well-formed"
}

test_proxy_upstream_out_of_step_is_not_reused() {
	start_servers
	# Two requests on one client connection; the first upstream answer is
	# a bodiless 204 followed by bytes that look like another response.
	cat >"$WS/desync.py" <<'PY'
import http.client, sys, time
hp = sys.argv[1]
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=20)
for path in ("/public/desync", "/public/next"):
    if path == "/public/next":
        time.sleep(1)  # the stray bytes (sent 0.1 s late) are there before the next request
    c.request("GET", f"http://api.test:{hp}{path}", headers={"Host": f"api.test:{hp}"})
    r = c.getresponse()
    body = r.read()
    print(path, r.status, body[:60].decode("latin-1"))
    if r.will_close:
        c.close()
PY
	al_policy "$(net_policy)" -- /usr/bin/python3 ./desync.py "$HP"
	assert_contains "$OUT" "/public/desync 204" "the bodiless response"
	assert_not_contains "$OUT" "SMUGGLED" "bytes after a bodiless response given to the next request"
	assert_match "$OUT" '/public/next 200 \{"method": "GET", "path": "/public/next"' "the next request answered by the server"
}

# The proxy serves every connection from a few threads: a connection that
# waits (a head sent a byte at a time, a body that stops halfway, a TLS
# handshake never finished, an upstream that never answers) must never stop
# another. Each kind is opened once per CPU in a row, so that it lands on
# every worker; then a plain request must be answered while all of them
# still wait.
test_proxy_one_connection_waiting_stops_no_other() {
	start_servers
	# An upstream that takes connections and never answers.
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
while True:
    c, _ = s.accept(); held.append(c)
' "$T/mute.port" &
	bg_register $!
	local i
	for i in $(seq 50); do [ -s "$T/mute.port" ] && break; sleep 0.1; done
	local mp
	mp=$(cat "$T/mute.port")
	cat >"$WS/stall.py" <<'PY'
import os, socket, sys, time
hp, sp, mp = sys.argv[1:4]
n = len(os.sched_getaffinity(0))
def conn():
    c = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    return c
stalled = []
for kind in ("head", "body", "handshake", "upstream"):
    for _ in range(n):
        c = conn()
        if kind == "head":
            c.sendall(f"GET http://api.test:{hp}/public/a HTTP/1.1\r\nHost: api.test:{hp}\r\nX-Slow: ".encode())
        elif kind == "body":
            c.sendall(f"POST http://api.test:{hp}/upload HTTP/1.1\r\nHost: api.test:{hp}\r\nContent-Length: 100\r\n\r\n0123456789".encode())
        elif kind == "handshake":
            c.sendall(f"CONNECT secure.test:{sp} HTTP/1.1\r\nHost: secure.test:{sp}\r\n\r\n".encode())
            c.recv(4096)  # 200 Connection established; no ClientHello follows
        else:
            c.sendall(f"GET http://127.0.0.1:{mp}/ HTTP/1.1\r\nHost: 127.0.0.1:{mp}\r\n\r\n".encode())
        stalled.append((kind, c))
time.sleep(0.5)
c = conn()
c.sendall(f"GET http://api.test:{hp}/public/ok HTTP/1.1\r\nHost: api.test:{hp}\r\nConnection: close\r\n\r\n".encode())
data = b""
while True:
    b = c.recv(65536)
    if not b:
        break
    data += b
print("plain:", data.split(b"\r\n")[0].decode())
waiting = 0
for kind, s in stalled:
    s.setblocking(False)
    try:
        got = s.recv(1)
        print("answered early:", kind, got)
    except BlockingIOError:
        waiting += 1
print("still waiting:", waiting, "of", len(stalled))
PY
	NET_PRIVATE_EXTRA=", 127.0.0.1:$mp" al_policy "$(NET_PRIVATE_EXTRA=", 127.0.0.1:$mp" net_policy "    - { host: \"127.0.0.1\", id: mute, ports: [$mp] }")" -- \
		/usr/bin/python3 ./stall.py "$HP" "$SP" "$mp"
	assert_contains "$OUT" "plain: HTTP/1.1 200" "a plain request is answered while other connections wait"
	assert_not_contains "$OUT" "answered early" "the waiting connections were not cut short"
	assert_match "$OUT" "still waiting: ([0-9]+) of \1" "every stalled connection still waits"
}

# The proxy's workers gather their records and send them between turns of
# the loop: every request of a burst that ends the session, the last one
# included, is in the log, once.
test_proxy_records_every_request_up_to_the_last() {
	start_servers
	cat >"$WS/burst.py" <<'PY'
import http.client, sys, threading
hp = sys.argv[1]
def worker(k):
    c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=20)
    for i in range(20):
        path = f"/public/burst-{k}-{i}"
        c.request("GET", f"http://api.test:{hp}{path}", headers={"Host": f"api.test:{hp}"})
        r = c.getresponse()
        r.read()
        if r.status != 200:
            print("status", r.status, path)
ts = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
for t in ts: t.start()
for t in ts: t.join()
print("done")
PY
	al_policy "$(net_policy)" -- /usr/bin/python3 ./burst.py "$HP"
	assert_contains "$OUT" "done" "the burst ran"
	assert_not_contains "$OUT" "status" "every request of the burst was answered 200"
	local n k i missing=0
	n=$(grep -c '"path":"/public/burst-' "$T/net.jsonl")
	assert_eq 320 "$n" "every request of the burst is recorded once"
	for k in 0 7 15; do
		for i in 0 19; do
			grep -q "\"path\":\"/public/burst-$k-$i\"" "$T/net.jsonl" || missing=$((missing + 1))
		done
	done
	assert_eq 0 "$missing" "the first and the last requests of the connections are recorded"
}

# Inside an intercepted tunnel the upstream is the proxy's own connection:
# when the server closes it while idle (its keep-alive ran out, or a
# step-up wait outlasted it), the next request in the tunnel goes on a new
# one, checked as the first was; bytes the server sent that no request
# asked for go with the old one and never reach the agent.
test_proxy_tunnel_upstream_reopened() {
	start_servers
	cat >"$WS/reopen.py" <<'PY'
import http.client, ssl, sys, time
sp = int(sys.argv[1])
t = http.client.HTTPSConnection("127.0.0.1", 3128, timeout=20, context=ssl.create_default_context())
t.set_tunnel("secure.test", sp)
for path in ("/ok/idle-close", "/ok/after-close", "/ok/desync", "/ok/after-desync"):
    if path.startswith("/ok/after"):
        time.sleep(1)  # the server's close, or its stray bytes (0.1 s late), are there first
    t.request("GET", path, headers={"Host": f"secure.test:{sp}"})
    r = t.getresponse()
    body = r.read()
    print(path, r.status, body[:60].decode("latin-1"))
PY
	al_policy "$(net_policy)" -- /usr/bin/python3 ./reopen.py "$SP"
	assert_rc 0 "the client: $OUT"
	assert_contains "$OUT" "/ok/idle-close 200 closing" "the response before the server closed"
	assert_match "$OUT" '/ok/after-close 200 \{"method": "GET", "path": "/ok/after-close"' \
		"the next request in the same tunnel, on a new upstream"
	assert_contains "$OUT" "/ok/desync 204" "the bodiless response"
	assert_not_contains "$OUT" "SMUGGLED" "bytes no request asked for given to the next request"
	assert_match "$OUT" '/ok/after-desync 200 \{"method": "GET", "path": "/ok/after-desync"' \
		"the request after them answered by the server"
	assert_eq 1 "$(grep -c '"intercepted"' "$T/net.jsonl")" "one tunnel carried them all: $(cat "$T/net.jsonl")"
}

test_proxy_websocket_only_where_allowed() {
	start_servers
	cat >"$WS/ws.py" <<'PY'
import socket, sys, base64, os
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall((f"GET http://{host}:{port}{path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
head = s.recv(4096).split(b"\r\n")[0].decode()
print(head)
if " 101 " in head:
    s.sendall(bytes([0x81, 0x85, 1, 2, 3, 4]) + bytes(b ^ [1, 2, 3, 4][i % 4] for i, b in enumerate(b"hello")))
    print("ECHO", s.recv(64)[2:].decode())
PY
	al_policy "$(net_policy)" -- /usr/bin/python3 ./ws.py ws.test "$WP" /ws
	assert_contains "$OUT" "101" "a WebSocket the rule allows"
	assert_contains "$OUT" "ECHO hello" "frames pass after the upgrade"
	al_policy "$(net_policy)" -- /usr/bin/python3 ./ws.py api.test "$HP" /public/x
	assert_contains "$OUT" "403" "an upgrade where no rule allows websocket"
}

test_proxy_blocks_known_secrets_and_credential_formats() {
	start_servers
	write_client
	# The supervisor's environment holds a token the sandbox never gets;
	# if the agent finds it anyway, the proxy will not send it out.
	local tok="s3cr3t-value-$RANDOM$RANDOM-xyz"
	printf '%s' "$tok" >"$WS/found.txt"
	DEPLOY_TOKEN="$tok" fetch POST "http://api.test:$HP/upload" "$tok"
	assert_match "$OUT" '^403 ' "a known secret in a body"
	assert_not_contains "$(cat "$T/net.jsonl")" "$tok" "the log never holds the secret"
	local b64
	b64=$(printf '%s' "$tok" | base64 -w0)
	DEPLOY_TOKEN="$tok" fetch GET "http://api.test:$HP/public/x?q=$b64"
	assert_match "$OUT" '^403 ' "the secret base64-encoded in a query"
	assert_not_contains "$(cat "$T/net.jsonl")" "$b64" "the log never holds the encoded secret"
	fetch GET "http://api.test:$HP/public/x" "" "Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	assert_match "$OUT" '^403 ' "a GitHub token format in a header"
	DEPLOY_TOKEN="$tok" fetch POST "http://api.test:$HP/upload" "harmless"
	assert_match "$OUT" '^200 ' "the same request without the secret"
}

# A raw HTTP/1.1 client inside the sandbox: sends each case of a JSON list
# through the proxy, plain (absolute form) or inside an intercepted TLS
# tunnel (CONNECT), and prints "NAME STATUS" and, for a 200, whether the
# upstream received the body byte for byte as sent.
write_raw_client() {
	cat >"$WS/raw.py" <<'PY'
import json, os, socket, ssl, sys, urllib.parse
scheme, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = json.load(open(sys.argv[4]))
proxy = urllib.parse.urlparse(os.environ["HTTP_PROXY"])

def read_response(s):
    data = b""
    while b"\r\n\r\n" not in data:
        c = s.recv(65536)
        if not c:
            return data, b""
        data += c
    head, _, body = data.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    while len(body) < n:
        c = s.recv(65536)
        if not c:
            break
        body += c
    return head, body

for case in cases:
    name, body = case["name"], case["body"].encode("latin-1")
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=20)
    target = f"http://{host}:{port}/upload"
    if scheme == "https":
        s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        head, _ = read_response(s)
        s = ssl.create_default_context().wrap_socket(s, server_hostname=host)
        target = "/upload"
    framing = "Transfer-Encoding: chunked" if case.get("chunked", True) else f"Content-Length: {len(body)}"
    if any(h.lower().startswith("transfer-encoding") for h in case.get("headers", [])):
        framing = "X-Framing: in the case's own headers"
    head = f"POST {target} HTTP/1.1\r\nHost: {host}:{port}\r\n{framing}\r\nConnection: close\r\n"
    head += "".join(h + "\r\n" for h in case.get("headers", [])) + "\r\n"
    try:
        s.sendall(head.encode() + body)
        rhead, rbody = read_response(s)
        status = rhead.split(b" ")[1].decode() if rhead else "none"
    except OSError as e:
        status, rbody = "error-" + type(e).__name__, b""
    same = ""
    if status == "200":
        try:
            got = json.loads(rbody)["body"].encode("latin-1")
        except (ValueError, KeyError, UnicodeError):
            got = None
        same = " same" if got == body else " changed:" + repr(got)
    print(name, status + same)
    s.close()
PY
}

# leak_cases SECRET: the attack and neighbour bodies, as JSON.
leak_cases() {
	/usr/bin/python3 - "$1" <<'PY'
import gzip, json, sys
tok = sys.argv[1]
def chunks(parts, ext=""):
    return "".join(f"{len(p):x}{ext}\r\n{p}\r\n" for p in parts) + "0\r\n\r\n"
h = len(tok) // 2
gz = gzip.compress(tok.encode()).decode("latin-1")
cases = [
    {"name": "split2", "body": chunks([tok[:h], tok[h:]])},
    {"name": "bytewise", "body": chunks(list(tok))},
    {"name": "ext", "body": chunks([tok[:3], tok[3:h], tok[h:]], ';name="v";q=1')},
    # the secret cut where a chunk-size line and its extension sit
    {"name": "straddle", "body": f"{h:x};{'x' * 40}\r\n{tok[:h]}\r\n{len(tok) - h:X}\r\n{tok[h:]}\r\n0\r\n\r\n"},
    {"name": "whole", "body": chunks([tok])},
    {"name": "gzip", "chunked": False, "body": gz, "headers": ["Content-Encoding: gzip"]},
    {"name": "gzip-chunked", "body": chunks([gz]), "headers": ["Content-Encoding: gzip"]},
    {"name": "stacked", "chunked": False, "body": gz, "headers": ["Content-Encoding: identity, gzip"]},
    {"name": "second-field", "chunked": False, "body": gz,
     "headers": ["Content-Encoding: identity", "Content-Encoding: gzip"]},
    {"name": "unknown", "chunked": False, "body": "x", "headers": ["Content-Encoding: x-private"]},
    {"name": "upper", "chunked": False, "body": gz, "headers": ["Content-Encoding: GZIP"]},
    # a transfer coding under chunked hides the body the same way
    {"name": "te-gzip", "chunked": False, "body": chunks([gz]), "headers": ["Transfer-Encoding: gzip, chunked"]},
    {"name": "te-fields", "chunked": False, "body": chunks([gz]),
     "headers": ["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"]},
    # neighbours: uploads without the secret pass, byte for byte
    {"name": "ok-chunked", "body": chunks(["hello ", "world", "!" * 3000])},
    {"name": "ok-bytewise", "body": chunks(list("harmless"))},
    {"name": "ok-ext", "body": chunks(["a", "b"], ";v=\"1 2\"")},
    {"name": "ok-identity", "chunked": False, "body": "plain", "headers": ["Content-Encoding: IDENTITY"]},
]
print(json.dumps(cases))
PY
}

test_proxy_leak_scan_reads_chunked_and_coded_bodies() {
	start_servers
	write_raw_client
	local tok="s3cr3t-value-$RANDOM$RANDOM-xyz" pol scheme host port line c
	leak_cases "$tok" >"$WS/cases.json"
	pol=$(net_policy | sed 's|^\(        - { id: secure-get.*\)$|\1\n        - { id: secure-post, methods: [POST], path: /upload }|')
	for scheme in http https; do
		host=api.test port=$HP
		[ $scheme = https ] && host=secure.test port=$SP
		DEPLOY_TOKEN="$tok" al_policy "$pol" -- /usr/bin/python3 ./raw.py "$scheme" "$host" "$port" cases.json
		for c in split2 bytewise ext straddle whole; do
			line=$(printf '%s\n' "$OUT" | grep -m1 "^$c ")
			assert_eq "$c 403" "$line" "$scheme: a known secret in a chunked body ($c)$(e2e_last_run)"
		done
		for c in gzip gzip-chunked stacked second-field unknown upper te-gzip te-fields; do
			line=$(printf '%s\n' "$OUT" | grep -m1 "^$c ")
			assert_eq "$c 415" "$line" "$scheme: a body in a coding the scanner cannot read ($c)$(e2e_last_run)"
		done
		for c in ok-chunked ok-bytewise ok-ext ok-identity; do
			line=$(printf '%s\n' "$OUT" | grep -m1 "^$c ")
			assert_eq "$c 200 same" "$line" "$scheme: an upload without a secret arrives unchanged ($c)$(e2e_last_run)"
		done
		assert_contains "$(cat "$T/net.jsonl")" "compressed body (Content-Encoding gzip)" "the refusal names the coding"
		assert_contains "$(cat "$T/net.jsonl")" "compressed body (Content-Encoding x-private)" "an unknown coding"
		assert_contains "$(cat "$T/net.jsonl")" "compressed body (Transfer-Encoding gzip)" "a transfer coding"
		assert_not_contains "$(cat "$T/net.jsonl")" "$tok" "the log never holds the secret"
	done
}

test_proxy_refuses_request_trailers() {
	start_servers
	write_raw_client
	local pol scheme host port line c
	/usr/bin/python3 - >"$WS/cases.json" <<'PY'
import json
body = "5\r\nhello\r\n0\r\n"
cases = [
    {"name": "identity", "body": body + "Airlock-Identity: forged-by-agent\r\n\r\n"},
    {"name": "authorization", "body": body + "Authorization: Bearer forged\r\n\r\n"},
    {"name": "framing", "body": body + "Content-Length: 0\r\nTransfer-Encoding: chunked\r\nHost: other.test\r\n\r\n"},
    {"name": "hop", "body": body + "Connection: close\r\n\r\n"},
    {"name": "harmless", "body": body + "X-Checksum: 1234\r\n\r\n"},
    {"name": "declared", "body": body + "X-Checksum: 1234\r\n\r\n", "headers": ["Trailer: X-Checksum"]},
    {"name": "ok-none", "body": body + "\r\n"},
    {"name": "ok-declared-none", "body": body + "\r\n", "headers": ["Trailer: X-Checksum"]},
]
print(json.dumps(cases))
PY
	pol=$(net_policy | sed 's|^\(        - { id: secure-get.*\)$|\1\n        - { id: secure-post, methods: [POST], path: /upload }|')
	for scheme in http https; do
		host=api.test port=$HP
		[ $scheme = https ] && host=secure.test port=$SP
		al_policy "$pol" -- /usr/bin/python3 ./raw.py "$scheme" "$host" "$port" cases.json
		for c in identity authorization framing hop harmless declared; do
			line=$(printf '%s\n' "$OUT" | grep -m1 "^$c ")
			assert_eq "$c 400" "$line" "$scheme: a request trailer is refused ($c)$(e2e_last_run)"
		done
		for c in ok-none ok-declared-none; do
			line=$(printf '%s\n' "$OUT" | grep -m1 "^$c ")
			assert_eq "$c 200 same" "$line" "$scheme: a chunked body without trailers passes unchanged$(e2e_last_run)"
		done
		assert_contains "$(cat "$T/net.jsonl")" '"reason":"trailer fields in a request"' "each refusal is recorded"
		assert_not_contains "$(cat "$T/srv/log" 2>/dev/null)" "forged-by-agent" "the upstream never saw it"
	done
}

test_proxy_death_ends_the_run() {
	start_servers
	# The host watches the workspace while the command runs: direct mode.
	{ net_policy; printf 'sandbox:\n  workspace_mode: direct\n'; } >"$T/policy.yaml"
	(cd "$WS" && HOME="$E2E_HOME" exec "$AIRLOCK" run --policy "$T/policy.yaml" -- \
		/bin/sh -c ': >started; sleep 30; echo survived') >"$T/d.out" 2>"$T/d.err" </dev/null &
	local apid=$! i rc
	wait_for 20 test -e "$WS/started" || fail "the command did not start"
	for i in $(seq 100); do
		pkill -KILL -P "$apid" -x airlock-proxy 2>/dev/null && break
		sleep 0.1
	done
	wait "$apid"
	rc=$?
	assert_not_contains "$(cat "$T/d.out")" "survived" "the command outlived the proxy"
	assert_eq 125 "$rc" "exit status after the proxy died"
	assert_contains "$(cat "$T/d.err")" "egress proxy stopped" "the message says why"
}

test_proxy_git_clone_through_a_rule() {
	start_servers
	local g="$T/srv/git"
	git_served_repo allowed "hello through the proxy"
	cp -r "$g/allowed.git" "$g/other.git"
	# git clone creates a repository (its .git/config and hooks) in the
	# workspace, which the default protected paths refuse (t_protect.sh);
	# without them the refused clone below fails for the proxy's reason only.
	local NET_FS=$'filesystem:\n  protect_defaults: false'
	al_policy "$(net_policy)" -- /usr/bin/git clone -q "http://api.test:$HP/git/allowed.git" cloned
	assert_rc 0 "git clone of the repository a rule allows"
	assert_eq "hello through the proxy" "$(cat "$WS/cloned/README")" "the cloned file"
	al_policy "$(net_policy)" -- /usr/bin/git clone -q "http://api.test:$HP/git/other.git" other
	assert_ne 0 "$RC" "git clone of a repository no rule allows"
	assert_no_file "$WS/other/README" "the refused clone's file"
}

# Intercepted HTTPS works for tools that read no variable, or whose own
# setting overrides the common ones: the session CA is in the system's
# bundle file inside (apt, curl and python with the variables unset) and
# in npm's own variable (which wins over an npmrc's cafile). A name the
# rules refuse is still refused: trusting the CA grants nothing.
test_proxy_interception_trusted_without_per_tool_flags() {
	start_servers
	local pol
	pol=$(net_policy | sed 's|        - { id: secure-get, methods: \[GET\], path: "/ok/\*" }|        - { id: secure-get, methods: [GET], path: "/ok/**" }|')
	local bare='env -u SSL_CERT_FILE -u CURL_CA_BUNDLE -u REQUESTS_CA_BUNDLE -u GIT_SSL_CAINFO -u NODE_EXTRA_CA_CERTS'
	al_policy "$pol" -- /bin/sh -c "$bare /usr/bin/curl -sS https://secure.test:$SP/ok/bare-curl; echo; $bare /usr/bin/python3 -c 'import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1]).read().decode())' https://secure.test:$SP/ok/bare-python"
	assert_rc 0 "curl and python with no CA variable: $ERR"
	assert_contains "$OUT" '"path": "/ok/bare-curl"' "curl trusts the system bundle inside"
	assert_contains "$OUT" '"path": "/ok/bare-python"' "python trusts the system bundle inside"
	if [ -x /usr/lib/apt/apt-helper ]; then
		al_policy "$pol" -- /bin/sh -c "$bare /usr/lib/apt/apt-helper download-file https://secure.test:$SP/ok/bare-apt \$HOME/apt.out >/dev/null 2>&1; cat \$HOME/apt.out"
		assert_contains "$OUT" '"path": "/ok/bare-apt"' "apt's https method trusts the system bundle inside: $ERR"
	fi
	if command -v npm >/dev/null; then
		# An npmrc cafile naming another CA, as corporate setups do.
		printf 'cafile=%s\n' "$WS/other-ca.pem" >"$WS/.npmrc"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout /dev/null \
			-out "$WS/other-ca.pem" -subj /CN=other -days 1 2>/dev/null
		al_policy "$pol" -- /bin/sh -c "npm ping --registry https://secure.test:$SP/ok/ 2>&1; echo npm-rc=\$?"
		assert_contains "$OUT" "npm-rc=0" "npm with an npmrc cafile trusts the session CA: $OUT"
	fi
	# Trust grants nothing: a path no rule allows is still refused.
	al_policy "$pol" -- /bin/sh -c "$bare /usr/bin/curl -s -o /dev/null -w '%{http_code}' https://secure.test:$SP/admin"
	assert_eq "403" "$OUT" "a refused path stays refused"
	# The bundle cannot be changed from inside.
	al_policy "$pol" -- /bin/sh -c 'echo x >>/etc/ssl/certs/ca-certificates.crt && echo WROTE'
	assert_not_contains "$OUT" "WROTE" "the system bundle inside is read-only"
}

# A client that does not trust the session CA (its own CA option names
# another CA) refuses the intercepted handshake: no 403 page can reach it,
# so the record and --trace-denials say what happened and how to fix it.
# Played with curl, python's ssl and node, each as it refuses; the
# neighbour (the same client trusting the bundle) goes through.
test_proxy_client_refusing_the_session_ca_is_named() {
	start_servers
	local pol
	pol=$(net_policy | sed 's|        - { id: secure-get, methods: \[GET\], path: "/ok/\*" }|        - { id: secure-get, methods: [GET], path: "/ok/**" }|')
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout /dev/null \
		-out "$WS/other-ca.pem" -subj /CN=other -days 1 2>/dev/null
	cp "$here/tools/node-get.js" "$WS/node-get.js"
	printf '%s\n' "$pol" >"$T/policy.yaml"
	al --trace-denials --policy "$T/policy.yaml" -- /bin/sh -c "
		curl -sS --cacert other-ca.pem https://secure.test:$SP/ok/curl-refuses; echo curl-rc=\$?
		python3 -c 'import ssl,sys,urllib.request; c=ssl.create_default_context(cafile=\"other-ca.pem\"); print(urllib.request.urlopen(sys.argv[1], context=c).read())' https://secure.test:$SP/ok/python-refuses 2>&1 | tail -1
		if command -v node >/dev/null; then node node-get.js https://secure.test:$SP/ok/node-refuses '{\"ca\":\"other-ca.pem\"}'; fi
		curl -sS https://secure.test:$SP/ok/curl-trusts"
	assert_contains "$OUT" "curl-rc=60" "curl refused the certificate: $OUT"
	assert_contains "$OUT" "CERTIFICATE_VERIFY_FAILED" "python refused the certificate"
	assert_contains "$OUT" '"path": "/ok/curl-trusts"' "the neighbour trusting the bundle went through"
	# (curl's and python's refusals are the same record: identical
	# denials are counted, not repeated)
	local recs
	recs=$(grep -F 'refused the session CA' "$T/net.jsonl" || true)
	assert_contains "$recs" "the agent's TLS client refused the session CA (alert unknown CA); trust /run/airlock/ca.pem in its CA setting" \
		"the record names the refusal, the alert and the bundle"
	assert_contains "$recs" '"decision":"deny"' "a refused handshake is a denial"
	if command -v node >/dev/null; then
		assert_contains "$OUT" "error: SELF_SIGNED_CERT_IN_CHAIN" "node refused the certificate"
		assert_contains "$recs" "refused the session CA (it hung up after the certificate); trust /run/airlock/ca.pem" \
			"node hangs up without an alert: named too"
	fi
	assert_contains "$ERR" "airlock: denied: network: TLS to secure.test: the agent's TLS client refused the session CA (alert unknown CA); trust /run/airlock/ca.pem in its CA setting (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS" \
		"--trace-denials says it with the fix"
	assert_not_contains "$(grep -F 'curl-trusts' "$T/net.jsonl")" "refused the session CA" "the trusting client is not named"
	if command -v java >/dev/null && command -v keytool >/dev/null; then
		# Java with a trust store of its own choosing (certificate_unknown).
		keytool -importcert -noprompt -alias other -file "$WS/other-ca.pem" -storetype JKS -keystore "$WS/other.jks" \
			-storepass changeit >/dev/null 2>&1
		cp "$here/tools/Get.java" "$WS/Get.java"
		: >"$T/net.jsonl"
		al_policy "$pol" -- /bin/sh -c "java -Djavax.net.ssl.trustStore=other.jks Get.java https://secure.test:$SP/ok/java-refuses 2>&1"
		assert_ne 0 "$RC" "java refused the certificate"
		assert_contains "$(cat "$T/net.jsonl")" "the agent's TLS client refused the session CA (alert certificate unknown)" \
			"java's refusal is named"
	fi
}

# More tools with no flag of their own: Java (its own trust store, not a
# PEM bundle), git, wget, node, npm with a cafile in the user's npmrc, pip,
# apt-get update.
# Each is skipped only when it is not installed.
test_proxy_interception_trusted_by_java_and_more_tools() {
	start_servers
	local pol g
	pol=$(net_policy | sed 's|        - { id: secure-get, methods: \[GET\], path: "/ok/\*" }|        - { id: secure-get, methods: [GET], path: "/ok/**" }\n        - { id: secure-git, methods: [GET], path: "/git/allowed.git/**" }\n        - { id: secure-apt, methods: [GET], path: "/git/apt/**" }|')
	local bare='env -u SSL_CERT_FILE -u CURL_CA_BUNDLE -u REQUESTS_CA_BUNDLE -u GIT_SSL_CAINFO'
	local ran=0
	if command -v java >/dev/null; then
		cp "$here/tools/Get.java" "$WS/Get.java"
		al_policy "$pol" -- /bin/sh -c "java Get.java https://secure.test:$SP/ok/java 2>&1"
		assert_rc 0 "java trusts the session CA through its own store: $OUT"
		assert_contains "$OUT" '"path": "/ok/java"' "java's request went through"
		assert_not_contains "$OUT" "JAVA_TOOL_OPTIONS" "nothing is added to java's command line"
		if command -v keytool >/dev/null; then
			# Tools that pass the store's default password check
			# its integrity: the store must pass.
			al_policy "$pol" -- /bin/sh -c "keytool -list -keystore /etc/ssl/certs/java/cacerts -storepass changeit 2>&1 | head -3"
			assert_contains "$OUT" "Keystore type: JKS" "keytool reads the store with its password: $OUT"
		fi
		ran=$((ran + 1))
	fi
	if command -v git >/dev/null; then
		git_served_repo allowed "cloned over intercepted https"
		al_policy "$pol" -- /bin/sh -c "$bare git clone -q https://secure.test:$SP/git/allowed.git /tmp/c 2>&1 && cat /tmp/c/README"
		assert_rc 0 "git clone over intercepted https: $OUT"
		assert_contains "$OUT" "cloned over intercepted https" "git's clone"
		ran=$((ran + 1))
	fi
	if command -v wget >/dev/null; then
		al_policy "$pol" -- /bin/sh -c "$bare wget -q -O - https://secure.test:$SP/ok/wget"
		assert_rc 0 "wget: $ERR"
		assert_contains "$OUT" '"path": "/ok/wget"' "wget trusts the system bundle inside"
		ran=$((ran + 1))
	fi
	if command -v node >/dev/null; then
		cp "$here/tools/node-get.js" "$WS/node-get.js"
		al_policy "$pol" -- /bin/sh -c "node node-get.js https://secure.test:$SP/ok/node"
		assert_rc 0 "node with no flag of its own: $OUT"
		assert_contains "$OUT" '"path": "/ok/node"' "node trusts the session CA"
		ran=$((ran + 1))
	fi
	if command -v npm >/dev/null; then
		# The user's own npmrc with a cafile naming another CA: the
		# variable airlock sets wins over it (npm reads its environment
		# after the user's and the project's npmrc).
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout /dev/null \
			-out "$WS/other-ca.pem" -subj /CN=other -days 1 2>/dev/null
		al_policy "$pol" -- /bin/sh -c "printf 'cafile=%s\n' '$WS/other-ca.pem' >\$HOME/.npmrc; npm config get cafile; npm ping --registry https://secure.test:$SP/ok/ 2>&1; echo npm-rc=\$?"
		assert_contains "$OUT" "npm-rc=0" "npm with a user npmrc cafile trusts the session CA: $OUT"
		assert_contains "$(printf '%s\n' "$OUT" | head -1)" "/run/airlock/ca.pem" "npm's cafile is the session bundle"
		ran=$((ran + 1))
	fi
	if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
		# pip's index answers with no package: the request reached it,
		# trusted (an untrusted one fails with an SSLError first).
		al_policy "$pol" -- /bin/sh -c "/usr/bin/python3 -m pip download --no-deps --no-cache-dir --retries 0 -d /tmp/dl --index-url https://secure.test:$SP/ok/simple/ airlock-nothing 2>&1"
		assert_contains "$OUT" "No matching distribution found for airlock-nothing" "pip reached its index: $OUT"
		assert_not_contains "$OUT" "SSLError" "pip trusts the session CA"
		assert_contains "$(cat "$T/net.jsonl")" '"path":"/ok/simple/airlock-nothing/"' "pip's request was decided inside the tunnel"
		ran=$((ran + 1))
	fi
	if command -v apt-get >/dev/null; then
		# apt-get update from an https repository on loopback (unsigned,
		# [trusted=yes]): apt's https method reads only the system bundle.
		local r="$T/srv/git/apt"
		mkdir -p "$r/dists/stable/main/binary-amd64"
		: >"$r/dists/stable/main/binary-amd64/Packages"
		{
			printf 'Origin: e2e\nSuite: stable\nCodename: stable\nArchitectures: amd64\nComponents: main\nDate: %s\nSHA256:\n' "$(date -Ru)"
			printf ' %s 0 main/binary-amd64/Packages\n' "$(sha256sum <"$r/dists/stable/main/binary-amd64/Packages" | cut -d' ' -f1)"
		} >"$r/dists/stable/Release"
		printf 'deb [trusted=yes arch=amd64] https://secure.test:%s/git/apt stable main\n' "$SP" >"$WS/sources.list"
		al_policy "$pol" -- /bin/sh -c "mkdir -p /tmp/lists/partial /tmp/cache/archives/partial; apt-get -o Dir::Etc::SourceList=$WS/sources.list -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists=/tmp/lists -o Dir::Cache=/tmp/cache -o Debug::NoLocking=1 -o APT::Sandbox::User=\$(id -un) update 2>&1; echo apt-rc=\$?; ls /tmp/lists"
		assert_contains "$OUT" "apt-rc=0" "apt-get update over intercepted https: $OUT"
		assert_contains "$OUT" "Get:2 https://secure.test:$SP/git/apt stable Release" "apt fetched the Release file"
		assert_contains "$OUT" "secure.test:${SP}_git_apt_dists_stable_Release" "apt kept it"
		ran=$((ran + 1))
	fi
	[ "$ran" -gt 0 ] || skip "none of java, git, wget, node, npm, pip, apt-get is installed"
}
