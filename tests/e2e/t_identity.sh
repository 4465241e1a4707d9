# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The signed identity header: with identity.header the proxy adds
# Airlock-Identity (a JWS signed by the session key of the audit log) to
# every allowed request it sees in clear, for the destination as its
# audience; an Airlock-Identity the agent sends is always dropped.
# `airlock identity verify` checks a token against the authority. The
# servers (servers.py) echo the headers they receive; they and the
# policy come from t_proxy.sh.

# shellcheck source=tests/e2e/t_proxy.sh
. "$here/t_proxy.sh"

id_policy() { # HEADER(true|false) [NETWORK-LINES]
	net_policy "${2:-}"
	cat <<YAML
identity:
  agent: e2e-bot
  header: $1
audit:
  dir: $T/audit
YAML
}

# Inside the sandbox: a plain and an intercepted HTTPS request, each
# carrying an Airlock-Identity of the agent's own making.
id_session() { # HEADER(true|false)
	start_servers
	write_client
	mkdir -p "$T/audit"
	al_policy "$(id_policy "$1")" -- /bin/sh -c \
		"python3 ./fetch.py GET http://api.test:$HP/public/a '' 'Airlock-Identity: forged-by-agent'; python3 ./fetch.py GET https://secure.test:$SP/ok/b '' 'Airlock-Identity: forged-by-agent'"
	assert_eq 0 "$RC" "the session ran: $ERR"
	LOG=$(ls "$T"/audit/*.jsonl)
	[ -f "$LOG" ] || fail "no audit log was written$(e2e_last_run)"
	SESSION=$(basename "$LOG" .jsonl)
}

# The Airlock-Identity header the server received for request N (1, 2).
received_token() {
	printf '%s\n' "$OUT" | python3 -c '
import json, sys
n = int(sys.argv[1])
lines = [l for l in sys.stdin.read().splitlines() if l.startswith("200 ")]
h = json.loads(lines[n - 1][4:])["headers"]
print(h.get("Airlock-Identity", "(none)"))' "$1"
}

idverify() { # ARGS...: sets VOUT and VRC
	VOUT=$(HOME="$E2E_HOME" "$AIRLOCK" identity verify "$@" 2>&1)
	VRC=$?
}

authority_pub() {
	openssl pkey -in "${XDG_STATE_HOME:-$E2E_HOME/.local/state}/airlock/authority.key" -pubout -out "$T/authority.pub" 2>/dev/null
	openssl genpkey -algorithm ed25519 2>/dev/null | openssl pkey -pubout -out "$T/other.pub" 2>/dev/null
}

test_identity_header_carries_a_verifiable_token() {
	id_session true
	assert_match "$OUT" '^200 .*"path": "/public/a"' "the plain request went through"
	assert_match "$OUT" '200 .*"path": "/ok/b"' "the intercepted HTTPS request went through"
	assert_not_contains "$OUT" "forged-by-agent" "the agent's own Airlock-Identity never arrives"
	authority_pub
	local plain tls
	plain=$(received_token 1)
	tls=$(received_token 2)
	assert_match "$plain" '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' "a compact JWS on the plain request"
	assert_match "$tls" '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' "and on the intercepted one"

	idverify "$plain" --authority "$T/authority.pub" --audience "http://api.test:$HP"
	assert_eq 0 "$VRC" "the plain request's token verifies: $VOUT"
	assert_match "$VOUT" 'agent +e2e-bot' "it names the agent"
	assert_match "$VOUT" "session +$SESSION" "and the audit log's session"
	assert_match "$VOUT" "audience +http://api.test:$HP" "and the destination"
	assert_contains "$VOUT" "(the one given)" "anchored to the authority given"
	idverify "$tls" --authority "$T/authority.pub" --audience "https://secure.test:$SP"
	assert_eq 0 "$VRC" "the intercepted request's token verifies: $VOUT"
	assert_match "$VOUT" "session +$SESSION" "the same session"
	# Read from stdin, anchored by default to this machine's authority.
	VOUT=$(printf '%s\n' "$plain" | HOME="$E2E_HOME" "$AIRLOCK" identity verify - 2>&1)
	VRC=$?
	assert_eq 0 "$VRC" "a token on stdin, the local authority by default: $VOUT"
	assert_contains "$VOUT" "(the local authority)" "which it says"
	# With no authority at all: checked against the one the token names,
	# and said to prove nothing about who that is.
	mkdir -p "$T/nohome"
	VOUT=$(HOME="$T/nohome" XDG_STATE_HOME='' "$AIRLOCK" identity verify "$plain" 2>&1)
	VRC=$?
	assert_eq 0 "$VRC" "a token without any authority key to check against: $VOUT"
	assert_contains "$VOUT" "UNANCHORED" "is reported unanchored"

	# The neighbours that must fail.
	idverify "$plain" --authority "$T/authority.pub" --audience "https://secure.test:$SP"
	assert_eq 1 "$VRC" "a token for another audience"
	assert_contains "$VOUT" "audience" "the refusal names the audience"
	idverify "$plain" --authority "$T/other.pub"
	assert_eq 1 "$VRC" "a token checked against another authority"
	assert_contains "$VOUT" "not the one given" "the refusal names the authority"
	idverify "$plain" --authority "$T/authority.pub" --at $(($(date +%s) + 3600))
	assert_eq 1 "$VRC" "a token an hour later"
	assert_contains "$VOUT" "expired" "it has expired"
	local claims tampered
	claims=$(printf '%s' "$plain" | cut -d. -f2 | tr '_-' '/+' | base64 -d 2>/dev/null)
	assert_contains "$claims" '"sub":"e2e-bot"' "the claims name the agent"
	tampered=$(printf '%s' "$plain" | cut -d. -f1).$(printf '%s' "${claims/e2e-bot/e2e-bod}" | base64 -w0 | tr '/+' '_-' | tr -d =).$(printf '%s' "$plain" | cut -d. -f3)
	idverify "$tampered" --authority "$T/authority.pub"
	assert_eq 1 "$VRC" "a token whose agent was changed"
	assert_contains "$VOUT" "bad token signature" "fails its signature"
	# The log proves the same session: its certificate is the token's.
	assert_eq 0 "$("$AIRLOCK" audit verify "$LOG" --authority "$T/authority.pub" >/dev/null; echo $?)" \
		"the session's log verifies against the same authority"
}

test_identity_header_off_sends_none() {
	id_session false
	assert_match "$OUT" '^200 .*"path": "/public/a"' "the plain request went through"
	assert_match "$OUT" '200 .*"path": "/ok/b"' "the intercepted HTTPS request went through"
	assert_eq "(none)" "$(received_token 1)" "no identity header on the plain request"
	assert_eq "(none)" "$(received_token 2)" "nor on the intercepted one"
	assert_not_contains "$OUT" "forged-by-agent" "and the agent's own is dropped all the same"
}

# The header is signed with the decision log's session key. The log is on
# by default (in the state directory), so the header needs no audit.dir
# and no --audit; only a run that turns the log off is refused, as a
# usage error (exit 2) naming the field, and runs nothing.
test_identity_header_needs_the_audit_log() {
	start_servers
	write_client
	local pol
	pol="$(net_policy; printf 'identity:\n  header: true\n')"
	al_policy "$pol" -- /bin/sh -c "python3 ./fetch.py GET http://api.test:$HP/public/a"
	assert_eq 0 "$RC" "identity.header with the log on by default runs: $ERR"
	assert_match "$(received_token 1)" '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' \
		"and the request carries a signed token"
	ls "${XDG_STATE_HOME:-$E2E_HOME/.local/state}"/airlock/audit/*.jsonl >/dev/null 2>&1 ||
		fail "no log in the default place$(e2e_last_run)"

	al --policy "$T/policy.yaml" --no-audit -- /bin/sh -c ': >ran1'
	assert_eq 2 "$RC" "identity.header with --no-audit is a usage error"
	assert_contains "$ERR" "identity.header" "the error names the field"
	assert_contains "$ERR" "--no-audit" "and what turned the log off"
	assert_no_file "$WS/ran1" "nothing ran"
	al_policy "$pol$(printf '\naudit:\n  enabled: false\n')" -- /bin/sh -c ': >ran2'
	assert_eq 2 "$RC" "identity.header with audit.enabled: false is a usage error"
	assert_contains "$ERR" "audit.enabled: false" "naming what turned the log off"
	assert_no_file "$WS/ran2" "nothing ran"
	mkdir -p "$T/audit"
	al --policy "$T/policy.yaml" --audit "$T/audit" -- /bin/true
	assert_eq 0 "$RC" "the same policy with --audit runs: $ERR"
}

test_identity_header_on_redirected_requests() {
	start_servers
	write_client
	mkdir -p "$T/audit"
	# Transparent mode, a client that knows nothing of the proxy: plain
	# HTTP and TLS to an intercepted endpoint, both redirected.
	al_policy "$(id_policy true "  mode: transparent")" -- /usr/bin/env -u HTTP_PROXY -u http_proxy \
		-u HTTPS_PROXY -u https_proxy /bin/sh -c \
		"python3 ./fetch.py GET http://api.test:$HP/public/t '' 'Airlock-Identity: forged-by-agent'; python3 ./fetch.py GET https://secure.test:$SP/ok/t '' 'Airlock-Identity: forged-by-agent'"
	assert_match "$OUT" '^200 .*"path": "/public/t"' "the redirected plain request went through"
	assert_match "$OUT" '200 .*"path": "/ok/t"' "the redirected TLS request went through"
	assert_not_contains "$OUT" "forged-by-agent" "the agent's own Airlock-Identity never arrives"
	assert_contains "$(cat "$T/net.jsonl")" '"kind":"transparent"' "the plain request was redirected"
	authority_pub
	SESSION=$(basename "$(ls "$T"/audit/*.jsonl)" .jsonl)
	idverify "$(received_token 1)" --authority "$T/authority.pub" --audience "http://api.test:$HP"
	assert_eq 0 "$VRC" "the redirected plain request's token verifies: $VOUT"
	assert_match "$VOUT" "session +$SESSION" "for the audit log's session"
	idverify "$(received_token 2)" --authority "$T/authority.pub" --audience "https://secure.test:$SP"
	assert_eq 0 "$VRC" "the redirected TLS request's token verifies: $VOUT"
}

test_identity_header_on_brokered_requests() {
	start_servers
	write_client
	mkdir -p "$T/audit"
	export E2E_ID_SECRET="id-sek-$RANDOM$RANDOM"
	# The echo shows the secret as <token> (servers.py): the proxy
	# withholds an answer that would hand it back to the agent.
	printf '%s\n' "$E2E_ID_SECRET" >"$T/srv/token"
	# A credential the proxy adds to every matching request: the
	# brokered request carries the identity header too.
	al_policy "$(id_policy true)
credentials:
  - name: k
    source: env:E2E_ID_SECRET
    inject: always
    bindings:
      - { id: k-ok, host: secure.test, port: $SP, header: X-Api-Key, template: \"{secret}\", paths: [\"/ok/**\"] }" \
		-- /usr/bin/python3 ./fetch.py GET "https://secure.test:$SP/ok/brokered" '' 'Airlock-Identity: forged-by-agent'
	assert_match "$OUT" '^200 .*"path": "/ok/brokered"' "the brokered request went through: $ERR"
	assert_contains "$OUT" '"X-Api-Key": "<token>"' "with the credential swapped in"
	assert_not_contains "$OUT" "forged-by-agent" "and without the agent's Airlock-Identity"
	authority_pub
	idverify "$(received_token 1)" --authority "$T/authority.pub" --audience "https://secure.test:$SP"
	assert_eq 0 "$VRC" "the brokered request's token verifies: $VOUT"
	assert_match "$VOUT" 'agent +e2e-bot' "naming the agent"
}


# The session key never leaves the audit writer: the proxy asks it for
# each signature (docs/audit.md, "How the proxy gets its tokens signed").
# While a session with identity.header runs, the key's seed, found in the
# writer's memory (the neighbour: the search finds it where it is), is
# neither in the proxy's memory or environment nor in the supervisor's;
# and the tokens the proxy sends before and after still verify.
test_identity_key_stays_in_the_writer() {
	[ -r "/proc/$$/task/$$/children" ] || skip "no /proc/PID/task/TID/children on this kernel"
	python3 -c 'import cryptography' 2>/dev/null || skip "python3-cryptography is not installed"
	start_servers
	write_client
	mkdir -p "$T/audit"
	# Host and sandbox signal each other through the workspace.
	NET_FS=$'sandbox:\n  workspace_mode: direct' id_policy true >"$T/policy.yaml"
	local n=$((++E2E_RUN)) sup i d proxy="" writer="" scan=""
	LAST_CMD="airlock run --policy $T/policy.yaml -- (fetch, wait, fetch)"
	(cd "$WS" && exec env HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run --policy "$T/policy.yaml" -- \
		/bin/sh -c "python3 ./fetch.py GET http://api.test:$HP/public/a; echo >started; while [ ! -e release ]; do sleep 0.1; done; python3 ./fetch.py GET https://secure.test:$SP/ok/b" \
		>"$T/run$n.out" 2>"$T/run$n.err" </dev/null) &
	sup=$!
	for i in $(seq 1 300); do
		[ -e "$WS/started" ] && break
		kill -0 "$sup" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -e "$WS/started" ]; then
		wait "$sup"
		fail "the run did not start: $(cat "$T/run$n.err")"
	fi
	local airlock_pid
	airlock_pid=$(cat /proc/"$sup"/task/*/children 2>/dev/null | head -n1)
	for d in $(descendants "$sup"); do
		case "$(cat /proc/"$d"/comm 2>/dev/null)" in
		airlock-proxy) proxy=$d ;;
		airlock-audit-w*) writer=$d ;;
		esac
	done
	local pub
	pub=$(python3 -c '
import re, sys
m = re.search(r"session_key\\*\"\s*:\s*\\*\"([0-9a-f]{64})", open(sys.argv[1]).readline())
print(m.group(1) if m else "")' "$(ls "$T"/audit/*.jsonl)")
	if [ -n "$proxy" ] && [ -n "$writer" ] && [ -n "$pub" ]; then
		scan=$(python3 "$here/keyscan.py" "$pub" "$writer" "$proxy" $airlock_pid 2>&1)
		scan="$scan (rc $?)"
	fi
	touch "$WS/release"
	wait "$sup"
	RC=$?
	OUT=$(cat "$T/run$n.out")
	ERR=$(cat "$T/run$n.err")
	assert_rc 0 "the session"
	[ -n "$proxy" ] || fail "no airlock-proxy found below the run$(e2e_last_run)"
	[ -n "$writer" ] || fail "no airlock-audit-writer found below the run$(e2e_last_run)"
	[ -n "$pub" ] || fail "no session key in the log's certificate$(e2e_last_run)"
	# The tokens, signed by the writer before and after the scan, verify.
	authority_pub
	SESSION=$(basename "$(ls "$T"/audit/*.jsonl)" .jsonl)
	idverify "$(received_token 1)" --authority "$T/authority.pub" --audience "http://api.test:$HP"
	assert_eq 0 "$VRC" "the plain request's token verifies: $VOUT"
	assert_match "$VOUT" "session +$SESSION" "for the audit log's session"
	idverify "$(received_token 2)" --authority "$T/authority.pub" --audience "https://secure.test:$SP"
	assert_eq 0 "$VRC" "the intercepted request's token verifies: $VOUT"
	case "$scan" in
	*"(rc 3)") skip "the proxy's memory is readable by root only (tokens checked)" ;;
	esac
	assert_contains "$scan" "seed found" "the search finds the key in the writer's memory: $scan"
	assert_contains "$scan" "$proxy airlock-proxy absent" "the proxy holds no copy of the session key: $scan"
	assert_no_match "$scan" '^[0-9]+ .* found$' "no process but the writer holds the session key: $scan"
}
