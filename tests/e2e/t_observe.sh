# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# sandbox.mode: observe. Nothing is enforced: the agent sees the host's
# tree and the proxy lets through what the policy would refuse, but every
# such decision is recorded (enforced: false), and stderr says so before
# the command starts and after it ends. Each observe run is paired with
# the same run in enforce mode, where every one of those actions fails.
# The servers and the client are t_proxy.sh's.

# shellcheck source=tests/e2e/t_credentials.sh
. "$here/t_credentials.sh"

# A directory outside the policy, made by the test, with a file to read;
# sets OUTSIDE. Writable by the sandbox's uid (65534 when started as root).
make_outside() {
	OUTSIDE=$(mktemp -d /tmp/airlock-e2e-observe.XXXXXX) || fail "mktemp"
	printf '%s\n' "$OUTSIDE" >>"$T/.rm_dirs"
	chmod 1777 "$OUTSIDE"
	printf 'outside-data\n' >"$OUTSIDE/secret.txt"
	chmod 644 "$OUTSIDE/secret.txt"
}

# observe_policy MODE [none]: the policy both runs share; "none" leaves
# out the network section.
observe_policy() {
	printf 'version: 1\nsandbox:\n  mode: %s\n' "$1"
	[ "${2:-}" = none ] && return 0
	cat <<YAML
network:
  resolve: { api.test: 127.0.0.1, other.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - host: api.test
      ports: [$HP]
      rules:
        - { id: api-read, methods: [GET], path: "/public/**" }
YAML
}

# The agent's script: a read, a write and a program run outside the
# policy, a request to a host no endpoint names, and an allowed request.
write_agent() {
	cat >"$WS/agent.sh" <<SH
cat "$OUTSIDE/secret.txt" && echo READ-OK
echo written >"$OUTSIDE/new.txt" && echo WRITE-OK
cp /bin/true "$OUTSIDE/tool" && "$OUTSIDE/tool" && echo EXEC-OK
echo "denied-host: \$(python3 ./fetch.py GET http://other.test:$HP/x)"
echo "allowed-host: \$(python3 ./fetch.py GET http://api.test:$HP/public/a)"
SH
}

# Lines of the log matching every pattern given.
log_lines() { # LOG PATTERN...
	local out
	out=$(cat "$1")
	shift
	local p
	for p in "$@"; do
		out=$(printf '%s\n' "$out" | grep -F -- "$p")
	done
	printf '%s' "$out"
}

test_observe_records_and_lets_through_what_enforce_denies() {
	start_servers
	write_client
	make_outside
	write_agent
	observe_policy observe >"$T/observe.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/observe.yaml" --audit "$T/audit" -- /bin/sh ./agent.sh
	assert_rc 0 "the observed script ran"
	assert_contains "$OUT" "outside-data" "observe: the file outside the policy was read"
	assert_contains "$OUT" "READ-OK" "observe: the read succeeded"
	assert_contains "$OUT" "WRITE-OK" "observe: the write succeeded"
	assert_eq "written" "$(cat "$OUTSIDE/new.txt" 2>/dev/null)" "observe: the write reached the real file"
	assert_contains "$OUT" "EXEC-OK" "observe: the program outside the policy ran"
	assert_match "$OUT" '^denied-host: 200 ' "observe: the request to a denied host went through"
	assert_match "$OUT" '^allowed-host: 200 ' "observe: the allowed request went through"
	# The warnings: the first line of stderr (before anything ran) and the
	# last one, with the count of would-be denials.
	assert_eq "airlock: WARNING: observe mode: nothing is enforced; decisions are only recorded" \
		"$(printf '%s\n' "$ERR" | head -n1)" "the start warning comes first"
	assert_match "$(printf '%s\n' "$ERR" | tail -n1)" \
		'^airlock: WARNING: observe mode: nothing was enforced; [0-9]+ operations? would have been denied$' \
		"the end warning comes last"
	local n
	n=$(printf '%s\n' "$ERR" | tail -n1 | sed -E 's/.*enforced; ([0-9]+) operation.*/\1/')
	[ "$n" -ge 3 ] || fail "at least the read, the write and the request would have been denied, counted $n$(e2e_last_run)"
	assert_contains "$ERR" "would deny (not enforced): openat(\"$OUTSIDE/secret.txt\")" "the read is reported"

	local log
	log=$(ls "$T"/audit/*.jsonl)
	VOUT=$("$AIRLOCK" audit verify "$log" 2>&1) || fail "audit verify: $VOUT"
	assert_contains "$VOUT" "intact and sealed" "the log verifies"
	[ -n "$(log_lines "$log" '"kind":"file_denied"' "\"path\":\"$OUTSIDE/secret.txt\"" \
		'"decision":"deny","enforced":false')" ] || fail "no unenforced deny record of the read: $(cat "$log")"
	[ -n "$(log_lines "$log" '"kind":"file_denied"' "\"path\":\"$OUTSIDE/new.txt\"" \
		'"decision":"deny","enforced":false')" ] || fail "no unenforced deny record of the write: $(cat "$log")"
	[ -n "$(log_lines "$log" '"kind":"exec_denied"' "\"path\":\"$OUTSIDE/tool\"" \
		'"decision":"deny","enforced":false')" ] || fail "no unenforced exec_denied record: $(cat "$log")"
	[ -n "$(log_lines "$log" '"kind":"http"' '"hostname":"other.test"' 'not enforced (observe mode)' \
		'"decision":"deny","enforced":false')" ] || fail "no unenforced deny record of the request: $(cat "$log")"
	[ -n "$(log_lines "$log" '"kind":"http"' '"hostname":"api.test"' '"decision":"allow"')" ] ||
		fail "no allow record of the allowed request: $(cat "$log")"
	assert_not_contains "$(cat "$log")" '"enforced":true' "in observe mode no record claims enforcement here"
	assert_contains "$(cat "$log")" '"mode":"observe"' "the records name the mode"

	# The neighbour: the same script under the same policy in enforce mode.
	rm -f "$OUTSIDE/new.txt"
	observe_policy enforce >"$T/enforce.yaml"
	al --policy "$T/enforce.yaml" -- /bin/sh ./agent.sh
	assert_not_contains "$OUT" "outside-data" "enforce: the file outside is not read"
	assert_not_contains "$OUT" "READ-OK" "enforce: the read fails"
	assert_not_contains "$OUT" "WRITE-OK" "enforce: the write fails"
	assert_not_contains "$OUT" "EXEC-OK" "enforce: the program outside does not run"
	assert_no_file "$OUTSIDE/new.txt" "enforce: nothing was written outside"
	assert_match "$OUT" '^denied-host: 403 ' "enforce: the request to a denied host is refused"
	assert_match "$OUT" '^allowed-host: 200 ' "enforce: the allowed request still works"
	assert_not_contains "$ERR" "observe mode" "enforce mode prints no observe warning"
}

test_observe_policy_check_warns() {
	printf 'version: 1\nsandbox:\n  mode: observe\n' >"$T/observe.yaml"
	local err rc
	err=$("$AIRLOCK" policy check "$T/observe.yaml" 2>&1 >/dev/null)
	rc=$?
	assert_eq 0 "$rc" "an observe policy is valid"
	assert_contains "$err" "WARNING: observe mode: nothing is enforced" "policy check warns"
	printf 'version: 1\nsandbox:\n  mode: enforce\n' >"$T/enforce.yaml"
	err=$("$AIRLOCK" policy check "$T/enforce.yaml" 2>&1 >/dev/null)
	assert_not_contains "$err" "WARNING" "an enforce policy gets no warning"
}

# Without a network section observe mode still puts the proxy in front:
# the request is seen, recorded as what the policy (no network at all)
# would deny, and let through. Enforce mode has no network at all.
test_observe_without_network_section_goes_through_the_proxy() {
	start_servers
	write_client
	make_outside
	# The proxy resolves the name itself: without a network section there
	# is no `resolve`, so the address is asked for by number.
	observe_policy observe none >"$T/observe.yaml"
	al --policy "$T/observe.yaml" -- python3 ./fetch.py GET "http://127.0.0.1:$HP/x"
	assert_rc 0 "observe run"
	assert_match "$OUT" '^200 ' "observe: the request went through the proxy"
	assert_contains "$ERR" "no network section" "observe: reported as what the policy would deny"
	assert_contains "$ERR" "not enforced" "and as not enforced"
	observe_policy enforce none >"$T/enforce.yaml"
	al --policy "$T/enforce.yaml" -- python3 ./fetch.py GET "http://127.0.0.1:$HP/x"
	assert_match "$OUT" '^ERROR ' "enforce: no network at all"
}

# seccomp is no access decision: observe mode keeps the filter, and the
# log says that refusal was enforced.
test_observe_keeps_the_seccomp_filter() {
	observe_policy observe none >"$T/observe.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/observe.yaml" --audit "$T/audit" -- ./airlock-probe unshare-user
	check_blocked unshare-user
	local log
	log=$(ls "$T"/audit/*.jsonl)
	[ -n "$(log_lines "$log" '"kind":"syscall_denied"' '"decision":"deny","enforced":true')" ] ||
		fail "the seccomp refusal is recorded as enforced: $(cat "$log")"
	# The neighbour: an ordinary process in the same sandbox runs.
	al --policy "$T/observe.yaml" -- ./airlock-probe clone-ok
	check_allowed clone-ok
}

# Observe mode skips blocking; it never grants. A placeholder used where no
# binding allows it goes out as the agent wrote it, never as the secret.
test_observe_never_injects_a_credential_outside_its_binding() {
	cred_setup
	local obs=$'sandbox:\n  mode: observe'
	# shellcheck disable=SC2016
	al_policy "$(cred_policy "$obs")" -- /bin/sh -c \
		'curl -sS -X DELETE -H "Authorization: Bearer $API_TOKEN" https://secure.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" '"method": "DELETE"' "observe: the misused placeholder's request reached the server"
	assert_contains "$OUT" '"auth": "missing"' "observe: without the secret (a method the binding does not name)"
	# shellcheck disable=SC2016
	al_policy "$(cred_policy "$obs")" -- /bin/sh -c \
		'curl -sS -H "Authorization: Bearer $API_TOKEN" https://other.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" '"auth": "missing"' "observe: the placeholder sent to another host is not the secret"
	# The neighbour: where the binding allows it, the secret still goes in.
	# shellcheck disable=SC2016
	al_policy "$(cred_policy "$obs")" -- /bin/sh -c \
		'curl -sS -H "Authorization: Bearer $API_TOKEN" https://secure.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" '"auth": "ok"' "observe: injected where the binding allows"
	local log
	log=$(cat "$T/net.jsonl")
	[ -n "$(printf '%s\n' "$log" | grep -F '"kind":"credential_misuse"' | grep -F '"enforced":false' |
		grep -F 'not enforced (observe mode)')" ] || fail "misuse recorded as not enforced: $log"
	local leaked
	leaked=$(grep -rl --exclude-dir=srv --exclude=git-token --exclude=q-token -- "$SECRET" "$T" 2>/dev/null)
	assert_eq "" "$leaked" "no file the run wrote holds the secret"
	# Enforce mode refuses the same request.
	# shellcheck disable=SC2016
	al_policy "$(cred_policy)" -- /bin/sh -c \
		'curl -sS -X DELETE -H "Authorization: Bearer $API_TOKEN" https://secure.test:'"$SP"'/api/whoami'
	assert_contains "$OUT" "credential misuse" "enforce: the misuse is refused"
}

# The neighbour of every would-be denial above: work the policy allows
# (in the workspace, the baseline, /dev/null, a file of its own in /tmp)
# is recorded as nothing at all.
test_observe_allowed_work_records_nothing() {
	observe_policy observe none >"$T/observe.yaml"
	al --policy "$T/observe.yaml" -- /bin/sh -c '
		echo hi >./f && cat ./f >/dev/null && mkdir ./d && mv ./f ./d/g && rm -r ./d
		ls / /usr/bin >/dev/null && cat /etc/os-release >/dev/null
		t=/tmp/airlock-e2e-observe-own.$$
		echo mine >"$t" && cat "$t" && rm "$t"'
	assert_rc 0 "the allowed work ran"
	assert_contains "$OUT" "mine" "its own file in /tmp"
	assert_contains "$ERR" "airlock: no operation would have been denied" "nothing reported"
	assert_contains "$ERR" "nothing was enforced; 0 operations would have been denied" "none counted"
}

# The home is writable in an observed run as in an enforced one (there,
# private scratch): a tool that keeps a cache or a dot file works in both,
# so what observe records predicts enforce. Started as root the agent's
# uid is unprivileged, and what it writes is stored as the home's owner.
test_observe_home_writable_as_in_enforce() {
	local agent='mkdir -p "$HOME/.cache/e2e-tool" && echo cached >"$HOME/.cache/e2e-tool/c" && echo dot >"$HOME/.e2e-dot" && echo HOME-OK'
	observe_policy observe none >"$T/observe.yaml"
	observe_policy enforce none >"$T/enforce.yaml"
	al --policy "$T/enforce.yaml" -- /bin/sh -c "$agent"
	assert_rc 0 "the enforced run writes its private home: $ERR"
	assert_contains "$OUT" "HOME-OK" "enforced"
	assert_no_file "$E2E_HOME/.e2e-dot" "an enforced run's home is private"
	al --policy "$T/observe.yaml" -- /bin/sh -c "$agent"
	assert_rc 0 "the observed run writes the home: $ERR"
	assert_contains "$OUT" "HOME-OK" "observed"
	assert_file "$E2E_HOME/.e2e-dot" "an observed run writes the real home"
	assert_eq "$(stat -c %u "$E2E_HOME")" "$(stat -c %u "$E2E_HOME/.e2e-dot")" "stored as the home's owner"
	rm -rf "$E2E_HOME/.cache" "$E2E_HOME/.e2e-dot"
}

# Transparent mode: the sandbox's DNS answers a name no endpoint allows
# (recorded as a would-be denial) and the redirected connection is let
# through; in enforce mode the name does not resolve.
test_observe_transparent_dns_and_redirect() {
	start_servers
	local pol
	pol=$(net_policy "  mode: transparent
sandbox:
  mode: observe")
	al_policy "$pol" -- /usr/bin/env -u HTTP_PROXY -u http_proxy -u HTTPS_PROXY -u https_proxy \
		-u ALL_PROXY -u all_proxy /usr/bin/curl -sS --noproxy '*' "http://other.test:$HP/x"
	assert_rc 0 "observe: curl ignoring the proxy reached a name no endpoint allows"
	assert_contains "$OUT" '"path": "/x"' "observe: the server answered"
	local log
	log=$(cat "$T/net.jsonl")
	[ -n "$(printf '%s\n' "$log" | grep -F '"kind":"dns"' | grep -F '"host":"other.test"' |
		grep -F '"decision":"deny"' | grep -F '"enforced":false')" ] ||
		fail "the DNS answer is recorded as a would-be denial: $log"
	[ -n "$(printf '%s\n' "$log" | grep -F '"kind":"transparent"' | grep -F '"host":"other.test"' |
		grep -F '"enforced":false')" ] || fail "the redirected request is recorded as a would-be denial: $log"
	# Enforce mode: no answer for the name.
	al_policy "$(net_policy "  mode: transparent")" -- /usr/bin/env -u HTTP_PROXY -u http_proxy \
		-u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy \
		/usr/bin/curl -sS --noproxy '*' "http://other.test:$HP/x"
	assert_ne 0 "$RC" "enforce: the name does not resolve"
	assert_not_contains "$OUT" '"path": "/x"' "enforce: the server was never reached"
}

# The policy file stays read-only in observe mode: an agent that rewrote
# it would weaken every enforced run after this one. A file beside it, as
# writable, is written.
test_observe_keeps_the_policy_file_read_only() {
	make_outside
	observe_policy observe none >"$OUTSIDE/policy.yaml"
	printf 'neighbour\n' >"$OUTSIDE/beside.yaml"
	chmod 666 "$OUTSIDE/policy.yaml" "$OUTSIDE/beside.yaml"
	cp "$OUTSIDE/policy.yaml" "$T/policy.orig"
	al --policy "$OUTSIDE/policy.yaml" -- /bin/sh -c "
		grep -q 'mode: observe' '$OUTSIDE/policy.yaml' && echo READ-OK
		echo '  mode: enforce' >>'$OUTSIDE/policy.yaml' && echo APPEND-OK
		mv '$OUTSIDE/policy.yaml' '$OUTSIDE/moved.yaml' && echo MOVE-OK
		echo changed >>'$OUTSIDE/beside.yaml' && echo BESIDE-OK"
	assert_rc 0 "the observed script ran"
	assert_contains "$OUT" "READ-OK" "the policy file can be read"
	assert_not_contains "$OUT" "APPEND-OK" "the policy file cannot be written"
	assert_not_contains "$OUT" "MOVE-OK" "the policy file cannot be moved away"
	assert_contains "$OUT" "BESIDE-OK" "the file beside it can"
	cmp -s "$OUTSIDE/policy.yaml" "$T/policy.orig" || fail "the policy file changed$(e2e_last_run)"
	assert_contains "$(cat "$OUTSIDE/beside.yaml")" "changed" "the neighbour was written"
}

# The record of the run and the key that certifies it stay out of the
# agent's hands in observe mode: the audit log is read-only, the authority
# key hidden. Other files of the home are read as usual.
test_observe_keeps_the_log_and_the_authority_key_out_of_reach() {
	mkdir -p "$T/audit"
	e2e_is_root && chmod 755 "$E2E_HOME"
	printf 'neighbour\n' >"$E2E_HOME/airlock-e2e-neighbour.txt"
	printf '%s\n' "$E2E_HOME/airlock-e2e-neighbour.txt" >>"$T/.fake_files"
	chmod 644 "$E2E_HOME/airlock-e2e-neighbour.txt"
	observe_policy observe none >"$T/observe.yaml"
	local key="${XDG_STATE_HOME:-$E2E_HOME/.local/state}/airlock/authority.key"
	al --policy "$T/observe.yaml" --audit "$T/audit" -- /bin/sh -c "
		cat '$key' >/dev/null 2>&1 && echo KEY-READ
		for f in '$T'/audit/*.jsonl; do echo x >>\"\$f\" && echo LOG-WRITTEN; done
		cat '$E2E_HOME/airlock-e2e-neighbour.txt'"
	assert_rc 0 "the observed script ran"
	assert_file "$key" "the authority key exists"
	assert_not_contains "$OUT" "KEY-READ" "the authority key cannot be read"
	assert_not_contains "$OUT" "LOG-WRITTEN" "the audit log cannot be written"
	assert_contains "$OUT" "neighbour" "another file of the home is read"
	VOUT=$("$AIRLOCK" audit verify "$(ls "$T"/audit/*.jsonl)" 2>&1) || fail "audit verify: $VOUT"
}
