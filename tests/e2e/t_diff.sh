# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# `airlock policy diff OLD NEW`: exit codes and witness lines on real
# files, and witnesses put to the real enforcement: the request or path
# the prover names is allowed by a sandbox running NEW and denied by one
# running OLD.

# Loopback servers (lib.sh); sets DHP (plain HTTP).
diff_servers() {
	start_servers
	DHP=$HP
}

# diff_net RULES: a policy with api.test on the loopback server and RULES
# as its endpoint's rules.
diff_net() {
	cat <<YAML
version: 1
sandbox: {workspace: $WS}
network:
  resolve: { api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$DHP]
  endpoints:
    - host: api.test
      ports: [$DHP]
      rules:
$1
YAML
}

# pdiff OLD-FILE NEW-FILE [ARGS]: sets OUT, ERR, RC.
pdiff() {
	LAST_CMD="airlock policy diff $*"
	OUT=$(cd "$T" && "$AIRLOCK" policy diff "$@" 2>"$T/diff.err")
	RC=$?
	ERR=$(cat "$T/diff.err")
}

test_policy_diff_exit_codes_and_lines() {
	DHP=8080
	diff_net '        - { methods: [GET], path: "/public/**" }' >"$T/old.yaml"
	# Narrower, written differently: exit 0 and nothing printed.
	diff_net '        - { methods: [GET], path: "/public/docs/*" }
        - { methods: [GET], path: "/public/a/**" }' >"$T/narrow.yaml"
	pdiff old.yaml narrow.yaml
	assert_rc 0 "a narrower policy"
	assert_eq "" "$OUT" "no widening lines"
	pdiff old.yaml old.yaml
	assert_rc 0 "the same policy"
	# Wider: exit 1, one line naming NEW's rule and a witness.
	diff_net '        - { methods: [GET, POST], path: "/public/**" }' >"$T/new.yaml"
	pdiff old.yaml new.yaml
	assert_rc 1 "a wider policy"
	assert_contains "$OUT" "network: NEW new.yaml:" "the line names NEW's file"
	assert_contains "$OUT" "allows POST http://api.test:8080/public/; OLD old.yaml:" "the witness request"
	# The other way round it is a narrowing.
	pdiff new.yaml old.yaml
	assert_rc 0 "the reverse is no wider"
	# --json: a list with the same witness.
	pdiff old.yaml new.yaml --json
	assert_rc 1 "--json exit status"
	assert_eq "POST http://api.test:8080/public/" \
		"$(printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["witness"])')" \
		"the JSON witness"
	# Bad input: exit 2 with file:line:field.
	printf 'version: 1\nsandbox: {mode: fast}\n' >"$T/bad.yaml"
	pdiff old.yaml bad.yaml
	assert_rc 2 "a bad policy"
	assert_match "$ERR" 'bad.yaml:2:[0-9]+: sandbox.mode' "the error names the file, line and field"
	pdiff old.yaml
	assert_rc 2 "one file only"
}

# The witness request of a network widening: allowed by the proxy under
# NEW, refused under OLD.
test_policy_diff_network_witness_is_enforced() {
	diff_servers
	diff_net '        - { methods: [GET], path: "/public/*" }
        - { methods: [GET], path: "/docs/**" }' >"$T/old.yaml"
	# NEW's one rule is within neither OLD rule alone and not within
	# their union: '*' may match nothing, "//x" is in NEW only.
	diff_net '        - { methods: [GET], path: "/*/x" }' >"$T/new.yaml"
	pdiff old.yaml new.yaml --json
	assert_rc 1 "NEW is wider"
	local w method url
	w=$(printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["witness"])')
	method=${w%% *}
	url=${w#* }
	assert_eq "GET http://api.test:$DHP//x" "$w" "the shortest witness"
	cat >"$WS/get.py" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[2], method=sys.argv[1])
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("ERROR", type(e).__name__, e)
PY
	al --policy "$T/new.yaml" -- /usr/bin/python3 ./get.py "$method" "$url"
	assert_match "$OUT" '^200' "the witness under NEW"
	al --policy "$T/old.yaml" -- /usr/bin/python3 ./get.py "$method" "$url"
	assert_match "$OUT" '^403' "the witness under OLD"
	# Neighbour: a request both allow passes under OLD.
	al --policy "$T/old.yaml" -- /usr/bin/python3 ./get.py GET "http://api.test:$DHP/public/x"
	assert_match "$OUT" '^200' "a request OLD allows"
}

# The witness paths of filesystem widenings: readable (writable) in a
# sandbox running NEW, not in one running OLD.
test_policy_diff_filesystem_witnesses_are_enforced() {
	local ro
	ro=$(mktemp -d /var/tmp/airlock-e2e-ro.XXXXXX)
	printf '%s\n' "$ro" >>"$T/.rm_dirs"
	chmod 755 "$ro"
	# As root the sandbox runs as an unprivileged uid: let it write there.
	e2e_is_root && chmod 777 "$ro"
	printf 'notes\n' >"$ro/notes"
	chmod 666 "$ro/notes"
	mkdir -p "$WS/data"
	echo secret-text >"$WS/data/key"
	cat >"$T/old.yaml" <<YAML
version: 1
sandbox: {workspace: $WS}
filesystem:
  read: [$ro]
  deny: [$WS/data]
YAML
	cat >"$T/new.yaml" <<YAML
version: 1
sandbox: {workspace: $WS}
filesystem:
  write: [$ro]
YAML
	pdiff old.yaml new.yaml --json
	assert_rc 1 "NEW is wider"
	# A path OLD hides and NEW's workspace lets the agent write, and one
	# OLD makes read-only.
	local hw ww
	hw=$(printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; print([w["witness"] for w in json.load(sys.stdin) if w["section"] == "filesystem.write" and w["message"].endswith("hides it")][0])')
	ww=$(printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; print([w["witness"] for w in json.load(sys.stdin) if w["section"] == "filesystem.write" and w["message"].endswith("read-only")][0])')
	assert_eq "$WS/data" "$hw" "the hidden path's witness"
	assert_eq "$ro" "$ww" "the read-only path's witness"
	al --policy "$T/new.yaml" -- /bin/sh -c "ls $hw && echo appended >>$ww/notes && echo WROTE"
	assert_contains "$OUT" "key" "the hidden path under NEW"
	assert_contains "$OUT" "WROTE" "the read-only path under NEW"
	al --policy "$T/old.yaml" -- /bin/sh -c "ls $hw; echo more >>$ww/notes && echo WROTE; cat $ww/notes"
	assert_not_contains "$OUT" "key" "the hidden path under OLD"
	assert_not_contains "$OUT" "WROTE" "the read-only path under OLD"
	# Neighbour: OLD still reads the file it does not let the agent write.
	assert_contains "$OUT" "notes" "OLD reads what it makes read-only"
}

# The witness of dropping the default protected paths: a hand-off file
# NEW lets the agent write, and a sandbox running OLD does not.
test_policy_diff_protect_witness_is_enforced() {
	mkdir -p "$WS/.git/hooks" "$WS/src"
	printf 'int main(void) { return 0; }\n' >"$WS/src/a.c"
	# Direct mode refuses a protected write inside the sandbox (hold mode,
	# the default, holds it: below).
	printf 'version: 1\nsandbox: {workspace: %s, workspace_mode: direct}\n' "$WS" >"$T/old.yaml"
	printf 'version: 1\nsandbox: {workspace: %s, workspace_mode: direct}\nfilesystem:\n  protect_defaults: false\n' \
		"$WS" >"$T/new.yaml"
	pdiff old.yaml new.yaml --json
	assert_rc 1 "NEW is wider"
	local w
	w=$(printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["witness"])')
	assert_eq "$WS/.git/hooks" "$w" "the witness"
	al --policy "$T/new.yaml" -- /bin/sh -c "echo planted >$w/pre-commit && echo WROTE"
	assert_contains "$OUT" "WROTE" "the witness under NEW"
	rm -f "$w/pre-commit"
	al --policy "$T/old.yaml" -- /bin/sh -c "echo planted >$w/pre-commit && echo WROTE; echo edit >>src/a.c && echo EDITED"
	assert_not_contains "$OUT" "WROTE" "the witness under OLD"
	assert_no_file "$w/pre-commit" "the hook planted under OLD"
	# Neighbour: an ordinary edit in the same workspace under OLD.
	assert_contains "$OUT" "EDITED" "an ordinary edit under OLD"
	pdiff new.yaml old.yaml
	assert_rc 0 "protecting more is no wider"
	# In the default mode the same hook is written inside and held.
	printf 'version: 1\nsandbox: {workspace: %s}\n' "$WS" >"$T/hold.yaml"
	XDG_STATE_HOME="$T/state" al --policy "$T/hold.yaml" -- /bin/sh -c "echo planted >$w/pre-commit && echo WROTE"
	assert_contains "$OUT" "WROTE" "the hook written in hold mode"
	assert_no_file "$w/pre-commit" "the hook held, not landed"
}

# The mcp section: a tool OLD's first matching rule denies and NEW allows
# is one line naming NEW's rule, the witness and OLD's rule; the reverse
# (and a reordering of the same rules) is no wider.
test_policy_diff_mcp_lines() {
	printf 'version: 1\nmcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      tools:\n        - {name: "write_*", decision: deny}\n        - {name: "*", decision: allow}\n' >"$T/old.yaml"
	printf 'version: 1\nmcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      tools:\n        - {name: "write_log", decision: allow}\n        - {name: "write_*", decision: deny}\n        - {name: "*", decision: allow}\n' >"$T/new.yaml"
	printf 'version: 1\nmcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      tools:\n        - {name: "write_*", decision: deny}\n        - {name: "read_*", decision: allow}\n        - {name: "*", decision: allow}\n' >"$T/same.yaml"
	pdiff old.yaml new.yaml
	assert_rc 1 "a tool OLD denies"
	assert_eq 'mcp: NEW new.yaml:7 allows tools/call fs.write_log; OLD denies it (rule mcp.servers.fs.tools[0] deny, line 7)' \
		"$OUT" "one line: NEW's rule, the witness, OLD's deciding rule"
	pdiff new.yaml old.yaml
	assert_rc 0 "the reverse is no wider"
	assert_eq "" "$OUT" "nothing printed"
	pdiff old.yaml same.yaml
	assert_rc 0 "the same language written differently"
}
