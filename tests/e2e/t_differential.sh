# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# `policy diff`, `policy explain` and enforcement say the same: the
# seeded differential test of all three on random policies, and one test
# for each place they once disagreed, each with its neighbour.

# pd OLD NEW [ARGS]: `airlock policy diff` in $T; sets OUT, ERR, RC.
pd() {
	LAST_CMD="airlock policy diff $*"
	OUT=$(cd "$T" && "$AIRLOCK" policy diff "$@" 2>"$T/pd.err")
	RC=$?
	ERR=$(cat "$T/pd.err")
}

# px POLICY ARGS...: `airlock policy explain`; sets OUT, ERR, RC.
px() {
	LAST_CMD="airlock policy explain $*"
	OUT=$("$AIRLOCK" policy explain "$@" 2>"$T/px.err")
	RC=$?
	ERR=$(cat "$T/px.err")
}

# A directory outside the workspace the sandbox's uid may use.
dt_outside() {
	DT=$(mktemp -d /var/tmp/airlock-e2e-dt.XXXXXX)
	printf '%s\n' "$DT" >>"$T/.rm_dirs"
	mkdir -p "$DT/D/a/b" "$DT/E"
	echo secret-text >"$DT/D/a/b/f"
	echo open-text >"$DT/E/f"
	chmod -R a+rwX "$DT"
}

test_policy_differential_seeded() {
	# Seeded and bounded: about 20 policies, 60 pairs, 36 actions, 4 real
	# runs. bench/policy-differential runs the same with larger counts.
	LAST_CMD="policy-differential.py --seed 1"
	OUT=$(/usr/bin/python3 "$here/policy-differential.py" --airlock "$AIRLOCK" --probe "$PROBE" \
		--workspace "$WS" --seed 1 --families 5 --size 4 --actions 36 --real 4 2>&1)
	RC=$?
	assert_rc 0 "the differential test finds no disagreement"
	assert_match "$(printf '%s\n' "$OUT" | tail -n 1)" '^[0-9]+ passed, 0 failed$' "its closing line"
	assert_match "$OUT" ' [1-9][0-9]* real runs' "actions were run for real"
	assert_match "$OUT" '[1-9][0-9]* witnesses' "witnesses were checked"
}

# filesystem.deny wins over a grant beneath it, in the sandbox, in
# explain, in diff and in lint, whether or not anything shows the denied
# path's parent.
test_deny_wins_over_a_grant_beneath() {
	dt_outside
	mkdir -p "$WS/data/sub" "$WS/src"
	chmod -R a+rwX "$WS/data" "$WS/src"
	cat >"$T/p.yaml" <<YAML
version: 1
sandbox: {workspace: $WS}
filesystem:
  write: [$DT/D/a/b, $WS/data/sub]
  read: [$DT/E]
  deny: [$DT/D, $WS/data]
YAML
	al --policy "$T/p.yaml" -- /bin/sh -c "cat $DT/D/a/b/f; echo x >$DT/D/a/b/new && echo WROTE-D; echo x >$WS/data/sub/new && echo WROTE-WS; cat $DT/E/f; echo y >$WS/src/new && echo WROTE-SRC"
	assert_not_contains "$OUT" "secret-text" "a write path beneath a deny is not readable"
	assert_not_contains "$OUT" "WROTE-D" "nor writable"
	assert_no_file "$DT/D/a/b/new" "the file written beneath the deny"
	assert_not_contains "$OUT" "WROTE-WS" "a write path beneath a deny in the workspace"
	# Neighbours: a grant beneath no deny, and the workspace.
	assert_contains "$OUT" "open-text" "a read path beneath no deny"
	assert_contains "$OUT" "WROTE-SRC" "the workspace outside the deny"
	px "$T/p.yaml" --path "$DT/D/a/b/f"
	assert_rc 1 "explain: beneath the deny"
	assert_contains "$OUT" "rule: filesystem.deny $DT/D" "explain names the deny"
	px "$T/p.yaml" --path "$DT/D/a/b/f" --access write
	assert_rc 1 "explain: writing beneath the deny"
	px "$T/p.yaml" --path "$DT/E/f"
	assert_rc 0 "explain: the read path beneath no deny"
	# diff: adding a grant beneath a deny widens nothing; dropping the
	# deny does.
	printf 'version: 1\nsandbox: {workspace: %s}\nfilesystem:\n  deny: [%s/D]\n' "$WS" "$DT" >"$T/old.yaml"
	printf 'version: 1\nsandbox: {workspace: %s}\nfilesystem:\n  deny: [%s/D]\n  read: [%s/D/a]\n' "$WS" "$DT" "$DT" >"$T/new.yaml"
	printf 'version: 1\nsandbox: {workspace: %s}\nfilesystem:\n  read: [%s/D/a]\n' "$WS" "$DT" >"$T/wider.yaml"
	pd old.yaml new.yaml
	assert_rc 0 "a read beneath the deny is no widening"
	pd old.yaml wider.yaml
	assert_rc 1 "the same read without the deny is"
	assert_contains "$OUT" "allows reading $DT/D/a" "its witness"
	LAST_CMD="airlock policy check new.yaml"
	ERR=$(cd "$T" && "$AIRLOCK" policy check new.yaml 2>&1 >/dev/null)
	assert_contains "$ERR" "beneath filesystem.deny $DT/D" "lint names the deny that hides the entry"
}

# A read beneath a deny under the baseline (/usr): hidden, and explain
# says so.
test_deny_wins_beneath_the_baseline() {
	[ -d /usr/share/doc ] || skip "no /usr/share/doc"
	printf 'version: 1\nsandbox: {workspace: %s}\nfilesystem:\n  read: [/usr/share/doc]\n  deny: [/usr/share]\n' "$WS" >"$T/p.yaml"
	al --policy "$T/p.yaml" -- /bin/sh -c 'ls /usr/share/doc >/dev/null && echo LISTED; ls /usr/lib >/dev/null && echo BASELINE'
	assert_not_contains "$OUT" "LISTED" "a read path beneath a deny under the baseline"
	assert_contains "$OUT" "BASELINE" "the rest of the baseline"
	px "$T/p.yaml" --path /usr/share/doc
	assert_rc 1 "explain: hidden"
	assert_contains "$OUT" "hidden" "explain says why"
	printf 'version: 1\nsandbox: {workspace: %s}\nfilesystem:\n  read: [/usr/share/doc]\n' "$WS" >"$T/q.yaml"
	px "$T/q.yaml" --path /usr/share/doc
	assert_rc 0 "explain: the same read without the deny"
	al --policy "$T/q.yaml" -- /bin/sh -c 'ls /usr/share/doc >/dev/null && echo LISTED'
	assert_contains "$OUT" "LISTED" "the same read without the deny"
}

# Rules on a passthrough port (not 443): plain requests are decided by
# them; a TLS tunnel there would carry any request past them, so the
# proxy refuses it, explain says so and diff counts it.
test_passthrough_rules_refuse_tunnels() {
	start_servers
	cat >"$WS/tun.py" <<'PY'
import socket, ssl, sys
host, port = sys.argv[1], int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
print(s.recv(4096).split(b"\r\n")[0].decode())
ctx = ssl.create_default_context(cafile="ca.pem")
try:
    t = ctx.wrap_socket(s, server_hostname=host)
    t.sendall(f"DELETE /admin HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    print("TLS-OK", t.recv(4096).split(b"\r\n")[0].decode())
except Exception as e:
    print("TLS-FAIL", type(e).__name__)
PY
	cat >"$WS/get.py" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
c.request(sys.argv[1], sys.argv[2])
print(c.getresponse().status)
PY
	cp "$T/srv/ca.pem" "$WS/ca.pem"
	pol() { # RULES-OF-tunnel.test
		cat <<YAML
version: 1
sandbox: {workspace: $WS}
network:
  resolve: { tunnel.test: 127.0.0.1, api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$SP, 127.0.0.1:$HP]
  endpoints:
    - host: tunnel.test
      ports: [$SP]
      tls: passthrough
$1
    - host: api.test
      ports: [$HP]
      rules:
        - { methods: [GET], path: "/public/**" }
YAML
	}
	pol '      rules:
        - { methods: [GET], path: "/t" }' >"$T/rules.yaml"
	pol "" >"$T/open.yaml"
	al --policy "$T/rules.yaml" -- /bin/sh -c "/usr/bin/python3 ./tun.py tunnel.test $SP; /usr/bin/python3 ./get.py GET http://api.test:$HP/public/x"
	assert_contains "$OUT" "403" "CONNECT to a passthrough endpoint with rules"
	assert_not_contains "$OUT" "TLS-OK" "no request passes the rules in a tunnel"
	assert_contains "$OUT" "200" "a plain request the rules allow"
	px "$T/rules.yaml" --request "GET https://tunnel.test:$SP/t"
	assert_rc 1 "explain: an https request to it"
	assert_contains "$OUT" "passthrough TLS tunnel" "explain says why"
	px "$T/rules.yaml" --request "GET http://api.test:$HP/public/x"
	assert_rc 0 "explain: the plain request"
	# Neighbour: the endpoint without rules still tunnels.
	al --policy "$T/open.yaml" -- /usr/bin/python3 ./tun.py tunnel.test "$SP"
	assert_contains "$OUT" "200 Connection established" "a passthrough endpoint without rules"
	assert_contains "$OUT" "TLS-OK HTTP/1.1" "its tunnel"
	px "$T/open.yaml" --request "GET https://tunnel.test:$SP/t"
	assert_rc 0 "explain: the tunnel without rules"
	# diff: dropping the rules opens tunnels; intercepting the same rules
	# opens https requests the rules allow.
	pd rules.yaml open.yaml --json
	assert_rc 1 "rules dropped"
	pol '      rules:
        - { methods: [GET], path: "/t" }' | sed 's/tls: passthrough/tls: intercept/' >"$T/icpt.yaml"
	pd rules.yaml icpt.yaml --json
	assert_rc 1 "intercepted: tunnels OLD refuses"
	local w
	w=$(printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; print([x["witness"] for x in json.load(sys.stdin) if x["section"] == "network"][0])')
	assert_eq "GET https://tunnel.test:$SP/t" "$w" "the witness"
	px "$T/icpt.yaml" --request "$w"
	assert_rc 0 "the witness under NEW"
	px "$T/rules.yaml" --request "$w"
	assert_rc 1 "the witness under OLD"
	pd icpt.yaml rules.yaml
	assert_rc 0 "refusing tunnels is no widening"
}

# read: [$WORKSPACE] makes the workspace read-only, protected paths
# included: diff does not call it a widening over the protected paths.
test_diff_readonly_workspace_over_protect() {
	mkdir -p "$WS/.git/hooks" "$WS/src"
	chmod -R a+rwX "$WS/.git" "$WS/src"
	printf 'version: 1\nsandbox: {workspace: %s}\n' "$WS" >"$T/old.yaml"
	printf 'version: 1\nsandbox: {workspace: %s}\nfilesystem:\n  read: [%s]\n  protect_defaults: false\n' "$WS" "$WS" >"$T/ro.yaml"
	printf 'version: 1\nsandbox: {workspace: %s}\nfilesystem:\n  protect_defaults: false\n' "$WS" >"$T/rw.yaml"
	pd old.yaml ro.yaml
	assert_rc 0 "a read-only workspace without protected paths is no wider"
	assert_eq "" "$OUT" "nothing printed"
	al --policy "$T/ro.yaml" -- /bin/sh -c "echo x >.git/hooks/pre-commit && echo WROTE-HOOK; echo x >src/a.c && echo WROTE-SRC"
	assert_not_contains "$OUT" "WROTE" "nothing is writable in the read-only workspace"
	# Neighbour: the writable workspace without protected paths is wider.
	pd old.yaml rw.yaml --json
	assert_rc 1 "protect_defaults: false"
	assert_contains "$OUT" "$WS/.git/hooks" "its witness"
}

# explain reads a request with the proxy's own parser: what the proxy
# refuses as malformed, explain refuses.
test_explain_malformed_requests_as_the_proxy() {
	start_servers
	cat >"$T/p.yaml" <<YAML
version: 1
sandbox: {workspace: $WS}
network:
  resolve: { api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - host: api.test
      ports: [$HP]
YAML
	cat >"$WS/get.py" <<'PY'
import http.client, sys
for path in sys.argv[2:]:
    c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
    c.request("GET", "http://" + sys.argv[1] + path)
    print(path, c.getresponse().status)
PY
	local p
	for p in /. /a/../b /%2 /a/%2e%2e/b '/a\b'; do
		px "$T/p.yaml" --request "GET http://api.test:$HP$p"
		assert_rc 1 "explain: $p"
		assert_contains "$OUT" "malformed request" "explain: $p is malformed"
	done
	px "$T/p.yaml" --request "GET http://api.test:$HP/a/b"
	assert_rc 0 "explain: a well-formed path"
	al --policy "$T/p.yaml" -- /usr/bin/python3 ./get.py "api.test:$HP" /. /a/../b /%2 /a/%2e%2e/b /a/b
	assert_contains "$OUT" "/. 400" "the proxy: /."
	assert_contains "$OUT" "/a/../b 400" "the proxy: /a/../b"
	assert_contains "$OUT" "/%2 400" "the proxy: /%2"
	assert_contains "$OUT" "/a/%2e%2e/b 400" "the proxy: an encoded dot segment"
	assert_contains "$OUT" "/a/b 200" "the proxy: a well-formed path"
}

# A private address the proxy's address check refuses is no widening and
# no witness; one allow_private opens is.
test_diff_private_address_witness() {
	start_servers
	cat >"$WS/get.py" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
c.request("GET", sys.argv[1])
print(c.getresponse().status)
PY
	pol() { # ALLOW_PRIVATE
		printf 'version: 1\nsandbox: {workspace: %s}\nnetwork:\n  allow_private: [%s]\n  endpoints:\n    - host: "127.0.0.1"\n      ports: [%s]\n' "$WS" "$1" "$HP"
	}
	printf 'version: 1\nsandbox: {workspace: %s}\nnetwork: {}\n' "$WS" >"$T/old.yaml"
	pol "" >"$T/none.yaml"
	pol '"::/0"' >"$T/mapped.yaml"
	pol "127.0.0.1:$HP" >"$T/open.yaml"
	pd old.yaml none.yaml
	assert_rc 0 "an endpoint on an address the check refuses"
	# ::/0 opens IPv6 loopback, not 127.0.0.1: an IPv4-mapped address
	# is checked as IPv4.
	pd old.yaml mapped.yaml
	assert_rc 1 "::/0 opens IPv6 addresses"
	assert_contains "$OUT" "network.allow_private: NEW mapped.yaml:4 allows connecting to [::1]" "the one it opens"
	assert_not_contains "$OUT" "127.0.0.1" "no witness on the IPv4 address it does not open"
	al --policy "$T/mapped.yaml" -- /bin/sh -c "/usr/bin/python3 ./get.py http://127.0.0.1:$HP/x; /usr/bin/python3 ./get.py 'http://[::ffff:127.0.0.1]:$HP/x'"
	assert_eq "403
403" "$OUT" "the proxy refuses both spellings"
	# Neighbour: allow_private naming it is a widening, and its witness
	# is what the proxy lets through.
	pd old.yaml open.yaml --json
	assert_rc 1 "allow_private naming the address"
	local w
	w=$(printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; print([x["witness"] for x in json.load(sys.stdin) if x["section"] == "network"][0])')
	assert_eq "GET http://127.0.0.1:$HP/" "$w" "the witness"
	al --policy "$T/open.yaml" -- /usr/bin/python3 ./get.py "${w#GET }"
	assert_eq "200" "$OUT" "the witness under NEW"
}
