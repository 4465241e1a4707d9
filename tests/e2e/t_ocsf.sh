# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Every record the decision log holds carries what OCSF 1.3.0 requires of
# its class and of each object in it: records of every class airlock
# writes, made by real runs, checked by tests/e2e/ocsf-check.py against
# the schema's required lists (tests/data/ocsf-1.3.0-required.txt).

# shellcheck source=tests/e2e/t_credentials.sh
. "$here/t_credentials.sh"
# shellcheck source=tests/e2e/t_mcp.sh
. "$here/t_mcp.sh"

OCSF_REQUIRED=$here/../data/ocsf-1.3.0-required.txt

test_ocsf_every_record_class_carries_what_the_schema_requires() {
	cred_setup
	write_client
	local ro
	ro=$(mktemp -d /var/tmp/airlock-e2e-ro.XXXXXX)
	printf '%s\n' "$ro" >>"$T/.rm_dirs"
	chmod 755 "$ro"
	cp /bin/echo "$ro/e" && chmod 755 "$ro/e" || fail "cp"
	mkdir -p "$T/audit"
	CRED_FS="filesystem:
  read: [$ro]" cred_policy >"$T/policy.yaml"
	# File System Activity (a write refused), Process Activity (a
	# system call refused by seccomp), HTTP
	# Activity (allowed, brokered, refused by the proxy), Network Activity
	# (a tunnel refused), Detection Finding (a credential misused), API
	# Activity (the session's own records).
	# shellcheck disable=SC2016
	al --policy "$T/policy.yaml" --audit "$T/audit" -- /bin/sh -c '
		touch /usr/airlock-e2e-ocsf 2>/dev/null
		./airlock-probe unshare-user
		curl -sS -H "Authorization: Bearer $API_TOKEN" https://secure.test:'"$SP"'/api/whoami
		curl -sS https://secure.test:'"$SP"'/nothing/here
		curl -sS http://api.test:'"$HP"'/x
		curl -sS -H "Authorization: Bearer $API_TOKEN" http://api.test:'"$HP"'/api/whoami
		curl -sS https://denied.test:'"$SP"'/ 2>/dev/null
		python3 ./fetch.py GET http://api.test:'"$HP"'/public/a
		true' sh "$ro/e"
	assert_rc 0 "the run: $ERR"
	# Process Activity: a program refused (by noexec), recorded as such in
	# observe mode.
	printf 'version: 1\nsandbox:\n  mode: observe\nfilesystem:\n  read: [%s]\n' "$ro" >"$T/observe.yaml"
	al --policy "$T/observe.yaml" --audit "$T/audit" -- "$ro/e" RAN
	assert_contains "$OUT" "RAN" "the observed run: $ERR"
	# DNS Activity: a name no endpoint allows, asked of the sandbox's
	# resolver in transparent mode.
	cat >"$WS/resolve.py" <<'PY'
import socket
try:
    socket.getaddrinfo("nowhere.test", 80)
except socket.gaierror:
    pass
PY
	net_policy "  mode: transparent" >"$T/transparent.yaml"
	al --policy "$T/transparent.yaml" --audit "$T/audit" -- /usr/bin/python3 ./resolve.py
	assert_rc 0 "the transparent run: $ERR"
	# API Activity of the MCP gateway: a call allowed, one denied.
	if command -v node >/dev/null && [ -f "$MCP_DIR/test-server.mjs" ] && [ -d "$MCP_DIR/node_modules" ]; then
		mcp_policy "    t:
      tools:
        - {name: greet, decision: allow}"
		mcp_client '[{"op":"list"},{"op":"call","name":"greet","arguments":{"name":"bob"}},{"op":"call","name":"ask","arguments":{}}]' \
			node "$MCP_DIR/test-server.mjs"
		[ -n "$(mcp_records)" ] || fail "no MCP record$(e2e_last_run)"
	fi
	local kinds
	kinds=$(cat "$T"/audit/*.jsonl | grep -o '"kind":"[a-z_-]*"' | sort -u | tr '\n' ' ')
	for k in file_denied exec_denied syscall_denied http tunnel-request connect dns credential_misuse session_start; do
		assert_contains "$kinds" "\"kind\":\"$k\"" "a record of kind $k was made"
	done
	python3 "$here/ocsf-check.py" "$OCSF_REQUIRED" "$T"/audit/*.jsonl --classes 1001,1007,2004,4001,4002,4003,6003 \
		>"$T/ocsf.out" 2>&1 || fail "records lack what OCSF 1.3.0 requires:
$(cat "$T/ocsf.out")"
}

# The checker itself finds what is missing: a required attribute of the
# class, a required attribute of an object, an object with none of its
# at_least_one set.
test_ocsf_checker_finds_what_is_missing() {
	local rec='{"class_uid":6003,"category_uid":6,"activity_id":99,"type_uid":600399,"time":1,"severity_id":1,"metadata":{"product":{"name":"airlock","vendor_name":"airlock"},"version":"1.3.0"},"actor":{"app_name":"airlock"},"api":{"operation":"x"},"src_endpoint":{"hostname":"h"}}'
	printf '%s\n' "$rec" >"$T/good.jsonl"
	python3 "$here/ocsf-check.py" "$OCSF_REQUIRED" "$T/good.jsonl" >"$T/c.out" 2>&1 ||
		fail "a complete record: $(cat "$T/c.out")"
	printf '%s\n' "${rec/,\"src_endpoint\":\{\"hostname\":\"h\"\}/}" >"$T/bad.jsonl"
	printf '%s\n' "${rec/,\"vendor_name\":\"airlock\"/}" >>"$T/bad.jsonl"
	printf '%s\n' "${rec/\"hostname\":\"h\"/\"port\":1}" >>"$T/bad.jsonl"
	python3 "$here/ocsf-check.py" "$OCSF_REQUIRED" "$T/bad.jsonl" >"$T/c.out" 2>&1 && fail "incomplete records pass"
	assert_contains "$(cat "$T/c.out")" "bad.jsonl:1: class 6003 (kind None): src_endpoint is missing" "a class's attribute"
	assert_contains "$(cat "$T/c.out")" "bad.jsonl:2: class 6003 (kind None): metadata.product.vendor_name is missing" "an object's"
	assert_contains "$(cat "$T/c.out")" "bad.jsonl:3: class 6003 (kind None): src_endpoint has none of" "at_least_one"
}
