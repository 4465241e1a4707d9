# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# What a credential's endpoint answers never hands the secret back. The
# HTTPS server's .../mirror/MODE routes (servers.py) echo the injected
# Authorization header in the ways a server may: the whole request in a
# JSON body, a response header, a 103 interim response, a chunked body in
# 3-byte chunks (the secret split over chunks and reads), base64, hex,
# reversed, percent-encoded, an HTML page, gzip, until close, stored and
# shown to a later request; and TRACE. The neighbours: the same routes on
# a host without a binding echo as they always did, and a bound endpoint's
# ordinary answers and large bodies in every framing pass unchanged.

# shellcheck source=tests/e2e/t_proxy.sh
. "$here/t_proxy.sh"

echo_setup() {
	# Characters JSON and HTML escape, and '/' and '+' which base64
	# and percent-encoding treat specially.
	ECHO_SECRET="ech0-$RANDOM$RANDOM/x+y<z>&q\"w'v-$RANDOM$RANDOM"
	# A file, not the environment: the supervisor's own variables are
	# on the leak scanner's list anyway; this one is there only as a
	# credential.
	printf '%s\n' "$ECHO_SECRET" >"$T/echo-token"
	chmod 644 "$T/echo-token"
	start_servers
}

echo_policy() {
	cat <<YAML
version: 1
network:
  log: $T/net.jsonl
  upstream_ca: $T/srv/ca.pem
  resolve: { secure.test: 127.0.0.1, other.test: 127.0.0.1, api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP, 127.0.0.1:$SP]
  endpoints:
    - { host: secure.test, ports: [$SP], tls: intercept }
    - { host: other.test, ports: [$SP], tls: intercept }
    - { host: api.test, ports: [$HP] }
credentials:
  - name: echo
    source: file:$T/echo-token
    env: ECHO_TOKEN
    bindings:
      - { id: echo-tls, host: secure.test, port: $SP, header: Authorization, template: "Bearer {secret}" }
  - name: always
    source: file:$T/echo-token
    inject: always
    bindings:
      - { id: always-hdr, host: secure.test, port: $SP, header: X-Key, paths: ["/always/**"] }
YAML
}

# Every form of the secret a mirror route writes, one a line.
echo_forms() {
	/usr/bin/python3 - "$ECHO_SECRET" <<'PY'
import base64, html, json, sys
s = sys.argv[1]
b = s.encode()
auth = ("Bearer " + s).encode()
for f in (s, json.dumps(s)[1:-1], html.escape(s), s[::-1], b.hex(), b.hex().upper(),
          "".join("%%%02X" % c for c in b), base64.b64encode(auth).decode()[12:-4],
          base64.urlsafe_b64encode(auth).decode()[12:-4]):
    print(f)
PY
}

test_broker_echo_never_hands_the_secret_back() {
	echo_setup
	local pad
	pad=$(head -c 6000 /dev/zero | tr '\0' p)
	cat >"$WS/echo.sh" <<SH
S=https://secure.test:$SP
O=https://other.test:$SP
for m in body header early chunked b64 b64url hex reversed url html eof gzip; do
	echo "== \$m"
	curl -sS --compressed -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/\$m" 2>&1
	echo
done
echo "== padded-chunked"
curl -sS -H "X-Pad: $pad" -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/chunked" 2>&1
echo
echo "== padded-eof"
curl -sS -H "X-Pad: $pad" -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/eof" 2>&1
echo
echo "== head"
curl -sS -I -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/header" 2>&1
echo "== trace"
curl -sS -X TRACE -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/body" 2>&1
echo "== trace-bare"
curl -sS -X TRACE "\$S/mirror/body" 2>&1
echo "== always"
curl -sS "\$S/always/mirror/body" 2>&1
echo
echo "== store"
curl -sS -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/store" 2>&1
echo "== recall-tls"
curl -sS "\$S/mirror/recall" 2>&1
echo "== keepalive"
curl -sS -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/plain" "\$S/mirror/body" "\$S/mirror/plain" 2>&1
echo "== neighbours"
for m in body header chunked b64 reversed gzip; do
	curl -sS --compressed -H "Authorization: Bearer neighbour-value" "\$O/mirror/\$m" 2>&1
	echo
done
curl -sS -X TRACE -H "Authorization: Bearer neighbour-trace" "\$O/mirror/body" 2>&1
echo
echo "== leaked"
curl -sS -H "X-Copy: \$(cat leaked.txt)" "\$O/mirror/plain" 2>&1
curl -sS --data-binary @leaked.txt "\$O/mirror/plain" 2>&1
echo "== plain"
curl -sS -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/plain" 2>&1
for g in length-300000 chunked-300000 eof-300000; do
	echo "gen-\$g \$(curl -sS -H "Authorization: Bearer \$ECHO_TOKEN" "\$S/mirror/gen-\$g" | sha256sum | cut -c1-16)"
done
SH
	# As if the secret had reached the agent some other way: the
	# request-side leak scan knows every credential's value too.
	printf '%s' "$ECHO_SECRET" >"$WS/leaked.txt"
	al_policy "$(echo_policy)" -- /bin/sh ./echo.sh
	rm -f "$WS/leaked.txt"
	local out=$OUT f
	while IFS= read -r f; do
		assert_not_contains "$out" "$f" "the agent never sees the secret in any form"
	done < <(echo_forms)

	# Each attack was refused, and said so.
	local m
	for m in body header early chunked b64 b64url hex reversed url html gzip; do
		assert_contains "$(printf '%s\n' "$out" | sed -n "/^== $m\$/,/^== /p")" "response withheld" \
			"the $m echo is withheld"
	done
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== gzip$/,/^== /p')" "cannot read (Content-Encoding gzip)" \
		"a coded body is refused as unreadable"
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== padded-chunked$/,/^== /p')" "curl: (" \
		"a chunked echo whose head went out is cut"
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== head$/,/^== /p')" "502" "a HEAD echo in a header"
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== trace$/,/^== /p')" "TRACE to a credential's endpoint" \
		"TRACE is refused"
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== trace-bare$/,/^== /p')" "TRACE to a credential's endpoint" \
		"TRACE without a placeholder too"
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== always$/,/^== /p')" "response withheld" \
		"an inject: always secret echoed"
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== store$/,/^== /p')" "stored" "storing passes"
	assert_contains "$(printf '%s\n' "$out" | sed -n '/^== recall-tls$/,/^== /p')" "response withheld" \
		"a secret shown to a later request without one"

	# The neighbours.
	local ka nb
	ka=$(printf '%s\n' "$out" | sed -n '/^== keepalive$/,/^== /p')
	assert_contains "$ka" "an ordinary answer" "an ordinary answer before a withheld one"
	assert_contains "$ka" "response withheld" "the withheld one on the same connection"
	nb=$(printf '%s\n' "$out" | sed -n '/^== neighbours$/,/^== /p')
	assert_contains "$nb" '"Authorization": "Bearer neighbour-value"' "an unbound echo in a body"
	assert_contains "$nb" "see the header" "an unbound echo in a header passes"
	assert_contains "$nb" "$(printf 'Bearer neighbour-value' | base64)" "an unbound base64 echo"
	assert_contains "$nb" "eulav-ruobhgien reraeB" "an unbound reversed echo"
	assert_contains "$nb" '"Authorization": "Bearer neighbour-trace"' "an unbound TRACE"
	assert_eq 3 "$(printf '%s\n' "$nb" | grep -c '"Authorization": "Bearer neighbour-value"')" \
		"unbound body, chunked and gzip echoes arrive whole"
	local leaked
	leaked=$(printf '%s\n' "$out" | sed -n '/^== leaked$/,/^== /p')
	assert_eq 2 "$(printf '%s\n' "$leaked" | grep -c 'leak blocked: the request carries secret credential:')" \
		"a credential's value in a request's header or body is a leak"
	local plain want
	plain=$(printf '%s\n' "$out" | sed -n '/^== plain$/,$p')
	assert_contains "$plain" "an ordinary answer" "a bound endpoint's ordinary answer"
	want=$(/usr/bin/python3 -c 'import hashlib; print(hashlib.sha256(bytes((7*i+3)%256 for i in range(300000))).hexdigest()[:16])')
	assert_contains "$plain" "gen-length-300000 $want" "a large body by length, unchanged"
	assert_contains "$plain" "gen-chunked-300000 $want" "a large chunked body, unchanged"
	assert_contains "$plain" "gen-eof-300000 $want" "a large body until close, unchanged"

	local log
	log=$(cat "$T/net.jsonl")
	assert_contains "$log" '"kind":"response_leak"' "each refusal is recorded"
	assert_contains "$log" 'the response body carries a secret (secret credential:' "naming the credential"
	assert_contains "$log" '(base64)' "and the encoding"
	while IFS= read -r f; do
		assert_not_contains "$log" "$f" "the log never holds the secret"
	done < <(echo_forms)
}

test_broker_echo_short_secret_refused() {
	echo_setup
	# Seven bytes could not be told apart from what a server answers.
	printf 'abc1234\n' >"$T/echo-token"
	al_policy "$(echo_policy)" -- /bin/true
	assert_ne 0 "$RC" "a credential whose secret is shorter than 8 bytes"
	assert_contains "$ERR" "credential echo: the secret is shorter than 8 bytes" "the error names the credential"
	# The neighbour: eight bytes are enough.
	printf 'abc12345\n' >"$T/echo-token"
	al_policy "$(echo_policy)" -- /bin/true
	assert_eq 0 "$RC" "an 8-byte secret: $ERR"
}
