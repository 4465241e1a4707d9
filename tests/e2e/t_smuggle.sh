# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Request smuggling through bodies the upstream does not read. The rules
# allow only GET (and HEAD, DELETE, OPTIONS) under /public and POST to
# /public/upload*; every attack hides "POST /admin/delete-all" where a
# careless upstream (naive_upstream.py, which logs every request it runs)
# takes it for a request of its own: a body on a method that defines none,
# a body the upstream refused before reading (Expect: 100-continue, an
# early answer), an upgrade the upstream takes while it goes on reading
# HTTP/1.1. The smuggled request must never run, and the legitimate
# neighbour of each attack must work.

# smuggle_start: the servers, and the naive upstream (plain on NP, TLS on
# NSP with servers.py's certificate); copies the client into $WS.
smuggle_start() {
	start_servers
	/usr/bin/python3 "$here/naive_upstream.py" "$T/srv" >"$T/srv/naive.out" 2>&1 &
	bg_register $!
	for _ in $(seq 100); do
		[ -f "$T/srv/naive-ports" ] && break
		sleep 0.1
	done
	[ -f "$T/srv/naive-ports" ] || fail "the naive upstream did not start: $(cat "$T/srv/naive.out")"
	read -r NP NSP <"$T/srv/naive-ports"
	: >"$T/srv/naive.log"
	cp "$here/smuggle_client.py" "$WS/"
}

# The same rules for both upstreams, their ids prefixed with $1.
smuggle_rules() {
	cat <<YAML
      rules:
        - { id: $1-read, methods: [GET, HEAD, OPTIONS], path: "/public/**" }
        - { id: $1-delete, methods: [DELETE], path: "/public/items/*" }
        - { id: $1-upload, methods: [POST], path: "/public/upload*" }
        - { id: $1-ws, methods: [GET], path: "/public/ws/**", websocket: true }
        - { id: $1-ws-top, methods: [GET], path: "/public/ws", websocket: true }
YAML
}

smuggle_policy() {
	cat <<YAML
version: 1
${SMUGGLE_SANDBOX:-}
network:
${SMUGGLE_MODE:-}
  log: $T/net.jsonl
  upstream_ca: $T/srv/ca.pem
  resolve: { naive.test: 127.0.0.1, other.test: 127.0.0.1, ws.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$NP, 127.0.0.1:$NSP, 127.0.0.1:$WP]
  leak_scan: { max_body: 65536 }
  endpoints:
    - host: naive.test
      id: naive
      ports: [$NP]
$(smuggle_rules plain)
    - host: other.test
      id: naive-tls
      ports: [$NSP]
      tls: intercept
$(smuggle_rules tls)
    - host: ws.test
      id: ws-echo
      ports: [$WP]
      rules:
        - { id: ws-echo-rule, methods: [GET], path: /ws, websocket: true }
${1:-}
YAML
}

# smuggle SCENARIO [tls] [ARGS...]: the client inside the sandbox, against
# the plain naive upstream or (tls) the intercepted one.
smuggle() {
	local scenario=$1 host=naive.test port=$NP tls=plain
	shift
	if [ "${1:-}" = tls ]; then
		host=other.test port=$NSP tls=tls
		shift
	elif [ "${1:-}" = direct ]; then
		tls=direct
		shift
	fi
	al_policy "$(smuggle_policy "${POLICY_EXTRA:-}")" -- /usr/bin/python3 ./smuggle_client.py \
		"$scenario" "$host" "$port" "$tls" "$@"
	assert_rc 0 "the client ($scenario $tls $*): $OUT $ERR"
	# The upstream runs what it reads at once; a moment for its log.
	sleep 0.3
}

# Nothing the rules refuse ever ran on the upstream.
assert_nothing_smuggled() { # WHAT
	assert_not_contains "$(cat "$T/srv/naive.log")" "/admin/" "$1: the smuggled request ran upstream"
}

test_smuggle_bodies_on_bodiless_methods() {
	smuggle_start
	local tls m
	for tls in "" tls; do
		for m in GET HEAD; do
			smuggle bodiless $tls "$m"
			assert_nothing_smuggled "$m with a body ($tls)"
			assert_match "$OUT" 'attack-cl 400 ' "$m with a Content-Length body refused ($tls)"
			assert_match "$OUT" 'attack-chunked 400 ' "$m with a chunked body refused ($tls)"
			assert_match "$OUT" 'after(-new)? 200 ran GET /public/after' "a GET after it ($tls)"
		done
		# DELETE and OPTIONS bodies are used by some APIs: they pass, and
		# the upstream is told to close after them.
		for m in DELETE OPTIONS; do
			smuggle bodiless $tls "$m"
			assert_nothing_smuggled "$m with a body ($tls)"
			assert_match "$OUT" "attack-cl 200 ran $m /public/" "$m with a Content-Length body forwarded ($tls)"
			assert_match "$OUT" "attack-chunked 200 ran $m /public/" "$m with a chunked body forwarded ($tls)"
			assert_match "$OUT" 'after 200 ran GET /public/after' \
				"a GET after it on the same connection, on a new upstream ($tls)"
		done
	done
	assert_contains "$(cat "$T/net.jsonl")" 'a body on GET' "the refusal is recorded"
}

test_smuggle_keepalive_neighbours_work() {
	smuggle_start
	local tls
	for tls in "" tls; do
		: >"$T/srv/naive.log"
		smuggle keepalive $tls
		assert_nothing_smuggled "request-like text in POST bodies ($tls)"
		assert_match "$OUT" 'get0 200 ran GET /public/k0' "GET on a kept-alive connection ($tls)"
		assert_match "$OUT" 'get1 200 ran GET /public/k1' "GET with Content-Length: 0 ($tls)"
		assert_match "$OUT" 'get2 200 ran GET /public/k2' "a third GET ($tls)"
		assert_match "$OUT" "post 200 ran POST /public/upload body=[1-9]" "POST with a body ($tls)"
		assert_match "$OUT" "post-chunked 200 ran POST /public/upload body=[1-9]" "POST with a chunked body ($tls)"
		assert_match "$OUT" 'head 200' "HEAD ($tls)"
		assert_match "$OUT" 'interim 103' "an interim response passed on ($tls)"
		assert_match "$OUT" 'interim 200 ran GET /public/interim' "the final response after two interim ones ($tls)"
		assert_match "$OUT" 'after 200 ran GET /public/after' \
			"after a HEAD whose upstream sent a body anyway, the next answer is the server's ($tls)"
		smuggle pipelined $tls
		assert_match "$OUT" 'pipe1 200 ran GET /public/p1' "the first of two pipelined requests ($tls)"
		assert_match "$OUT" 'pipe2 403 ' "the second, decided on its own ($tls)"
		assert_nothing_smuggled "pipelined ($tls)"
	done
	# One tunnel carried every request of the keep-alive run.
	assert_eq 2 "$(grep -c '"intercepted"' "$T/net.jsonl")" "one tunnel per run"
}

test_smuggle_expect_continue() {
	smuggle_start
	local tls
	for tls in "" tls; do
		smuggle expect $tls
		assert_nothing_smuggled "Expect: 100-continue refused upstream before the body ($tls)"
		assert_match "$OUT" '/public/upload-auth interim 100' "the proxy answers 100 Continue ($tls)"
		assert_match "$OUT" '/public/upload-auth 401 ' "the upstream's refusal reaches the agent ($tls)"
		assert_match "$OUT" '/public/upload 200 ran POST /public/upload body=[1-9]' \
			"a 100-continue upload completes ($tls)"
		assert_match "$OUT" 'after 200 ran GET /public/after' "a GET after them on the same connection ($tls)"
		assert_match "$OUT" 'expect-other 417 ' "an expectation other than 100-continue ($tls)"
	done
}

test_smuggle_upgrades() {
	smuggle_start
	local tls
	for tls in "" tls; do
		smuggle upgrade $tls
		assert_nothing_smuggled "upgrades ($tls)"
		assert_no_match "$OUT" '(^|'$'\n'')[a-z0-9-]+ 101' "an upgrade the upstream did not prove ($tls)"
		assert_match "$OUT" 'h2c 403 ' "h2c ($tls)"
		assert_match "$OUT" 'ws-h2c 403 ' "websocket listed with h2c ($tls)"
		assert_match "$OUT" 'h2c-ws 403 ' "h2c listed before websocket ($tls)"
		assert_match "$OUT" 'fake101 502 ' "a 101 without the WebSocket handshake's answer ($tls)"
		assert_match "$OUT" 'after(-new)? 200 ran GET /public/after' "a GET after them ($tls)"
	done
	al_policy "$(smuggle_policy)" -- /usr/bin/python3 ./smuggle_client.py websocket ws.test "$WP" plain
	assert_match "$OUT" 'ws 101' "a real WebSocket the rule allows"
	assert_contains "$OUT" "ECHO hello" "its frames pass"
}

# Observe mode streams a body over max_body (its first max_body bytes are
# scanned): the upstream answers before the rest arrives, and a careless
# one would read that rest as its next request, which nothing decided.
test_smuggle_early_answer_to_a_streamed_body() {
	smuggle_start
	local tls
	for tls in "" tls; do
		SMUGGLE_SANDBOX=$'sandbox:\n  mode: observe' smuggle early $tls
		assert_nothing_smuggled "a streamed body answered early ($tls)"
		assert_match "$OUT" 'early 401 ' "the upstream's early answer reaches the agent ($tls)"
		assert_match "$OUT" 'after(-new)? 200 ran GET /public/after' "a GET after it ($tls)"
		assert_contains "$(cat "$T/srv/naive.log")" "POST /public/upload-early" "the upload reached the upstream ($tls)"
	done
}

# network.mode: transparent: a client that ignores the proxy is
# redirected to it, and its requests are decided the same way.
test_smuggle_transparent() {
	smuggle_start
	local m
	for m in GET DELETE; do
		SMUGGLE_MODE="  mode: transparent" smuggle bodiless direct "$m"
		assert_nothing_smuggled "$m with a body, redirected"
	done
	assert_match "$OUT" "attack-cl 200 ran DELETE /public/items/1" "DELETE with a body, redirected"
	assert_match "$OUT" 'after 200 ran GET /public/after' "a GET after it on the same connection"
	SMUGGLE_MODE="  mode: transparent" smuggle keepalive direct
	assert_nothing_smuggled "keep-alive, redirected"
	assert_match "$OUT" 'get2 200 ran GET /public/k2' "GETs on a kept-alive redirected connection"
	assert_match "$OUT" "post 200 ran POST /public/upload body=[1-9]" "POST with a body, redirected"
	SMUGGLE_MODE="  mode: transparent" smuggle expect direct
	assert_nothing_smuggled "Expect: 100-continue, redirected"
	assert_match "$OUT" '/public/upload 200 ran POST /public/upload body=[1-9]' "a 100-continue upload, redirected"
	assert_contains "$(cat "$T/net.jsonl")" '"kind":"transparent"' "the requests went through the redirect"
}
