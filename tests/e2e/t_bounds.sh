# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# What the agent makes the host hold is bounded by its policy: the request
# bodies the egress proxy (outside the sandbox's cgroup) holds at once, and
# the size of the decision log. Each attack is played from inside the
# sandbox, the bound is checked against the policy (the proxy's peak RSS
# from /proc, the log's size in bytes), and a neighbour within the bound
# works.

# The proxy's policy: 64 MiB for the sandbox, bodies up to 4 MiB. Its
# body budget is the memory limit: 64 MiB.
bounds_policy() {
	cat <<YAML
version: 1
sandbox:
  limits: { memory: 64MiB }
  workspace_mode: direct # the host watches the workspace during the run
network:
  log: $T/net.jsonl
  leak_scan: { max_body: 4MiB }
  resolve: { api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - host: api.test
      id: api
      ports: [$HP]
      rules:
        - { id: api-post, methods: [POST], path: /upload }
        - { id: api-read, methods: [GET], path: "/public/**" }
YAML
}

# hold.py MODE N SIZE PORT: N connections to the proxy, each a POST whose body
# of SIZE bytes (Content-Length, or chunked) is sent but for its end, so
# that the proxy would hold them all at once. Once every byte sent is read
# (or refused), it says "held" and waits for "go"; then it closes them,
# waits until the proxy has let them go, and uploads one body within the
# budget as an ordinary client would.
write_hold() {
	cat >"$WS/hold.py" <<'PY'
import os, socket, sys, time, urllib.request
mode, n, size, hp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
PROXY = 3128

def sockets():
    """(local port, remote port, state, tx, rx) of this netns's TCP sockets."""
    out = []
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(f).read().splitlines()[1:]
        except OSError:
            continue
        for l in lines:
            p = l.split()
            tx, rx = (int(x, 16) for x in p[4].split(":"))
            out.append((int(p[1].split(":")[1], 16), int(p[2].split(":")[1], 16), p[3], tx, rx))
    return out

def wait(cond, what):
    for _ in range(600):
        if cond():
            return
        time.sleep(0.1)
    print("TIMEOUT", what, sockets()); sys.exit(3)

def quiet():
    # Every byte we sent is read by the proxy: nothing queued either way.
    return all(tx == 0 and rx == 0 for l, r, st, tx, rx in sockets() if PROXY in (l, r) and st == "01")

def released():
    return not any(l == PROXY and st != "0A" for l, r, st, tx, rx in sockets())

def marker(name):
    open(name + ".tmp", "w").close(); os.rename(name + ".tmp", name)

def await_file(name):
    wait(lambda: os.path.exists(name), name)

marker("base"); await_file("based")
chunk = b"x" * 65536
conns, refused = [], 0
for i in range(n):
    s = socket.create_connection(("127.0.0.1", PROXY))
    conns.append(s)
    try:
        if mode == "length":
            s.sendall(b"POST http://api.test:%d/upload HTTP/1.1\r\nHost: api.test:%d\r\nContent-Length: %d\r\n\r\n"
                      % (hp, hp, size))
            left = size - 1
            while left:
                k = min(left, len(chunk)); s.sendall(chunk[:k]); left -= k
        else:
            s.sendall(b"POST http://api.test:%d/upload HTTP/1.1\r\nHost: api.test:%d\r\nTransfer-Encoding: chunked\r\n\r\n"
                      % (hp, hp))
            for _ in range(size // len(chunk) - 1):
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
    except OSError:
        pass
wait(quiet, "quiet")
for s in conns:
    s.setblocking(False)
    try:
        if s.recv(4096).startswith(b"HTTP/1.1 503"):
            refused += 1
    except OSError:
        pass
print("refused", refused, "of", n)
sys.stdout.flush()
marker("held"); await_file("go")
for s in conns:
    s.close()
wait(released, "released")
req = urllib.request.Request("http://api.test:%d/upload" % hp, data=b"y" * (3 << 20), method="POST")
try:
    with urllib.request.urlopen(req, timeout=30) as r:
        print("upload", r.status, len(r.read()))
except Exception as e:
    print("upload failed", e)
PY
}

# proxy_status PID FIELD: a field of the proxy's /proc status, in kB.
proxy_status() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

test_bounds_proxy_holds_no_more_bodies_than_its_budget() {
	start_servers
	write_hold
	bounds_policy >"$T/policy.yaml"
	local mode apid ppid base hwm rc budget_kb=$((64 * 1024)) slack_kb=$((16 * 1024))
	for mode in length chunked; do
		rm -f "$WS"/base "$WS"/based "$WS"/held "$WS"/go
		# The run's bound covers the waits below (up to 60 + 120 s: 160 MiB
		# of slow bodies, under AddressSanitizer on a busy machine).
		(cd "$WS" && HOME="$E2E_HOME" exec timeout -k 5 $((3 * E2E_TIMEOUT)) "$AIRLOCK" run \
			--policy "$T/policy.yaml" -- /usr/bin/python3 ./hold.py "$mode" 40 $((4 << 20)) "$HP") \
			>"$T/hold-$mode.out" 2>"$T/hold-$mode.err" </dev/null &
		apid=$!
		wait_for 60 test -e "$WS/base" || fail "$mode: the client did not start: $(cat "$T/hold-$mode.err")"
		ppid=$(pgrep -P "$(pgrep -P "$apid" | head -1)" -x airlock-proxy | head -1)
		[ -n "$ppid" ] || fail "$mode: no airlock-proxy under airlock run $apid"
		base=$(proxy_status "$ppid" VmRSS)
		touch "$WS/based"
		wait_for 120 test -e "$WS/held" || fail "$mode: the bodies were not sent: $(cat "$T/hold-$mode.out")"
		hwm=$(proxy_status "$ppid" VmHWM)
		touch "$WS/go"
		wait "$apid"
		rc=$?
		OUT=$(cat "$T/hold-$mode.out")
		ERR=$(cat "$T/hold-$mode.err")
		LAST_CMD="airlock run -- hold.py $mode (proxy RSS $base kB before, peak $hwm kB)"
		assert_eq 0 "$rc" "$mode: the run"
		# The bound: what the proxy held beyond its own start is the
		# policy's budget (64 MiB) and the connections' own buffers.
		# Under AddressSanitizer (scripts/test.sh's sanitized stage)
		# freed memory is quarantined and every block padded: the
		# resident size says nothing of what the proxy holds, and the
		# refusals below are what is checked there.
		[ -n "${ASAN_OPTIONS:-}" ] || [ $((hwm - base)) -le $((budget_kb + slack_kb)) ] ||
			fail "$mode: the proxy grew by $((hwm - base)) kB holding bodies; its budget is $budget_kb kB$(e2e_last_run)"
		assert_match "$OUT" 'refused [1-9][0-9]* of 40' "$mode: bodies past the budget are refused"
		assert_contains "$(cat "$T/net.jsonl")" "over the proxy's budget of request bodies" \
			"$mode: each refusal is recorded"
		# The neighbour: once the held bodies are gone, an upload within
		# the budget goes through.
		assert_match "$OUT" 'upload 200 [0-9]+' "$mode: an upload within the budget"
		rm -f "$T/net.jsonl"
	done
}

# The log's tests: a small audit.max_size, the log in $T/audit.
log_policy() { # MODE (proxy|transparent) MAX_SIZE [LINES UNDER network]
	cat <<YAML
version: 1
audit: { max_size: $2 }
network:
  mode: $1
${3:-}
  resolve: { api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - host: api.test
      id: api
      ports: [$HP]
      rules:
        - { id: api-read, methods: [GET], path: "/public/**" }
YAML
}

# flood.py KIND N PORT: N junk decisions of KIND as fast as the proxy answers:
# dns (distinct names to the sandbox's resolver), connect (CONNECTs to
# distinct hosts no endpoint names), same (two denied requests, in turn,
# again and again), ordinary (GETs an endpoint allows, and every fourth a
# CONNECT to a distinct host no endpoint names).
write_flood() {
	cat >"$WS/flood.py" <<'PY'
import os, socket, struct, sys
kind, n, hp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def proxy(req):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(req)
    r = s.recv(65536)
    s.close()
    return r.split(b" ")[1].decode() if r.startswith(b"HTTP/") else "none"
got = {}
for i in range(n):
    if kind == "dns":
        q = struct.pack(">HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0)
        for label in ("j%08x" % i, "junk", "test"):
            q += bytes([len(label)]) + label.encode()
        q += b"\0" + struct.pack(">HH", 1, 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        s.sendto(q, ("192.0.2.53", 53))
        try:
            r = s.recv(1500)[:4]
            k = "rcode%d" % (r[3] & 15)
        except OSError as e:
            k = "error"
        s.close()
    elif kind == "connect":
        k = proxy(b"CONNECT h%08x.junk.test:443 HTTP/1.1\r\nHost: h%08x.junk.test:443\r\n\r\n" % (i, i))
    elif kind == "same":
        # Two denials in turn: each is identical to the one before last.
        h = (b"evil.test", b"evil-b.test")[i % 2]
        k = proxy(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (h, h))
    else:
        if i % 4 == 0:
            k = proxy(b"CONNECT d%08x.junk.test:443 HTTP/1.1\r\nHost: d%08x.junk.test:443\r\n\r\n" % (i, i))
            got[k] = got.get(k, 0) + 1
        k = proxy(b"GET http://api.test:%d/public/%d HTTP/1.1\r\nHost: api.test:%d\r\nConnection: close\r\n\r\n"
                  % (hp, i, hp))
    got[k] = got.get(k, 0) + 1
print("flood finished", sorted(got.items()))
PY
}

# The session's log (one run per test directory).
session_log() { ls "$T"/audit/*.jsonl 2>/dev/null | head -1; }

test_bounds_a_log_flood_ends_the_run_at_its_budget() {
	start_servers
	write_flood
	local kind mode log size max=$((1 << 20))
	for kind in dns connect; do
		mode=proxy
		[ "$kind" = dns ] && mode=transparent
		rm -rf "$T/audit"
		log_policy "$mode" 1MiB >"$T/policy.yaml"
		al --policy "$T/policy.yaml" --audit "$T/audit" -- /usr/bin/python3 ./flood.py "$kind" 20000 "$HP"
		assert_rc 137 "$kind: a flood that fills the log ends the run"
		assert_contains "$ERR" "audit.max_size" "$kind: the message names the budget"
		assert_not_contains "$OUT" "flood finished" "$kind: the flood did not run to its end"
		log=$(session_log)
		[ -n "$log" ] || fail "$kind: no decision log in $T/audit$(e2e_last_run)"
		size=$(stat -c %s "$log")
		[ "$size" -le "$max" ] || fail "$kind: the log grew to $size bytes; its budget is $max$(e2e_last_run)"
		[ "$size" -gt $((max / 2)) ] || fail "$kind: the log holds only $size bytes: the flood never reached it$(e2e_last_run)"
		"$AIRLOCK" audit verify "$log" >"$T/verify.out" 2>&1 ||
			fail "$kind: the log is not intact and sealed: $(cat "$T/verify.out")"
		assert_contains "$(tail -n 2 "$log")" '"kind":"log_budget"' "$kind: the log says why it ends"
	done
	# network.log is bounded by the same budget, with the decision log
	# off: the flood ends the run there too.
	rm -f "$T/net.jsonl"
	log_policy transparent 1MiB "  log: $T/net.jsonl" >"$T/policy.yaml"
	al --policy "$T/policy.yaml" --no-audit -- /usr/bin/python3 ./flood.py dns 20000 "$HP"
	assert_rc 137 "network.log: a flood that fills it ends the run"
	assert_contains "$ERR" "network.log reached audit.max_size" "network.log: the message names the budget"
	assert_not_contains "$OUT" "flood finished" "network.log: the flood did not run to its end"
	size=$(stat -c %s "$T/net.jsonl")
	[ "$size" -le "$max" ] || fail "network.log grew to $size bytes; its budget is $max$(e2e_last_run)"
	[ "$size" -gt $((max / 2)) ] || fail "network.log holds only $size bytes$(e2e_last_run)"
}

test_bounds_identical_denials_are_counted_not_repeated() {
	start_servers
	write_flood
	local log n=3000 total
	# 3000 denials, two kinds in turn, would hold about 3 MB of records: far past a
	# 1 MiB log. Held back and counted, they take a few records, and the
	# counts add up to every one of them.
	rm -rf "$T/audit"
	log_policy proxy 1MiB >"$T/policy.yaml"
	al --policy "$T/policy.yaml" --audit "$T/audit" -- /usr/bin/python3 ./flood.py same $n "$HP"
	assert_rc 0 "a run of identical denials within the budget"
	assert_contains "$OUT" "flood finished [('403', $n)]" "every one was refused"
	log=$(session_log)
	"$AIRLOCK" audit verify "$log" >"$T/verify.out" 2>&1 ||
		fail "the log is not intact and sealed: $(cat "$T/verify.out")"
	total=$(grep -E '"hostname":"evil(-b)?\.test"' "$log" |
		sed -n 's/.*"count":\([0-9]*\).*/\1/p; t; s/.*/1/p' | awk '{ s += $1 } END { print s + 0 }')
	assert_eq "$n" "$total" "the records of the denial and their counts add up to every attempt"
	[ "$(grep -cE '"hostname":"evil(-b)?\.test"' "$log")" -lt 100 ] ||
		fail "identical denials were not held back: $(grep -c evil "$log") records$(e2e_last_run)"
	# The neighbour: an ordinary run under the same small budget keeps a
	# complete log, every allowed request and every distinct denial.
	rm -rf "$T/audit"
	al --policy "$T/policy.yaml" --audit "$T/audit" -- /usr/bin/python3 ./flood.py ordinary 200 "$HP"
	assert_rc 0 "an ordinary run under a 1 MiB log"
	assert_contains "$OUT" "flood finished [('200', 200), ('403', 50)]" "allowed requests went through, the others were refused"
	log=$(session_log)
	"$AIRLOCK" audit verify "$log" >"$T/verify.out" 2>&1 ||
		fail "the ordinary run's log is not intact and sealed: $(cat "$T/verify.out")"
	assert_eq 200 "$(grep -c '"rule":"api-read"' "$log")" "every allowed request is in the log"
	assert_eq 50 "$(grep -c '"hostname":"d[0-9a-f]*\.junk\.test"' "$log")" "every distinct denial is in the log"
	assert_not_contains "$(cat "$log")" '"kind":"log_budget"' "an ordinary run never reaches the budget"
}

# Each open connection costs the proxy memory too (a thread's stack, its
# buffers, TLS state): under sandbox.limits.memory the proxy keeps no more
# connections open than that memory pays for, at 512 KiB each (never fewer
# than 32); those past it are answered 503 and closed. Once they are closed,
# a request goes through.
test_bounds_open_connections_bounded_by_memory() {
	start_servers
	cat >"$T/policy.yaml" <<YAML
version: 1
sandbox:
  limits: { memory: 16MiB }
network:
  resolve: { api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - host: api.test
      ports: [$HP]
      rules:
        - { methods: [GET], path: "/public/**" }
YAML
	cat >"$WS/conns.py" <<'PY'
import os, socket, sys, time, urllib.request
n = int(sys.argv[1])
proxy = os.environ["HTTP_PROXY"].rsplit(":", 1)
held, busy = [], 0
for i in range(n):
    s = socket.create_connection((proxy[0].split("//")[1], int(proxy[1])))
    s.settimeout(0.5)
    try:
        data = s.recv(200)
    except socket.timeout:
        data = b""
    if data.startswith(b"HTTP/1.1 503") and b"too many proxy connections" in data:
        busy += 1
        s.close()
    else:
        held.append(s)
print("held", len(held), "busy", busy)
for s in held:
    s.close()
time.sleep(1)
print(urllib.request.urlopen(sys.argv[2]).status)
PY
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./conns.py 40 "http://api.test:$HP/public/x"
	assert_rc 0 "the client ran: $ERR"
	assert_contains "$OUT" "held 32 busy 8" "32 connections held (16 MiB at 512 KiB each), the rest refused"
	assert_contains "$OUT" "200" "once they are closed, a request goes through"
	# Without a memory limit, the same 40 are all held.
	sed -i 's/  limits: { memory: 16MiB }/  limits: { memory: unlimited }/' "$T/policy.yaml"
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./conns.py 40 "http://api.test:$HP/public/x"
	assert_contains "$OUT" "held 40 busy 0" "without a memory limit the proxy holds all 40"
}
