# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Policy files: a bad policy is refused with exit 2 and a FILE:LINE:COL
# message naming the field, and the command never runs. The neighbour of
# each bad policy is the same policy fixed, which runs.

# bad_policy TEXT LINE FIELD: TEXT must be refused, pointing at LINE and
# naming FIELD, and the command (touch MARKER) must not run.
bad_policy() {
	local text=$1 line=$2 field=$3 marker="$WS/ran"
	printf '%s\n' "$text" >"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- /usr/bin/touch "$marker"
	assert_rc 2 "exit status for a bad policy"
	assert_no_file "$marker" "the command ran under a bad policy"
	assert_match "$ERR" "$T/policy\\.yaml:$line:[0-9]+" "FILE:LINE:COL in the message"
	assert_contains "$ERR" "$field" "the field named in the message"
	# `policy check` refuses it the same way.
	LAST_CMD="airlock policy check $T/policy.yaml"
	OUT=$("$AIRLOCK" policy check "$T/policy.yaml" 2>&1)
	RC=$?
	assert_rc 2 "policy check of a bad policy"
	assert_match "$OUT" "$T/policy\\.yaml:$line:[0-9]+" "FILE:LINE:COL from policy check"
}

# good_policy TEXT: TEXT runs the command.
good_policy() {
	local marker="$WS/ran-good"
	printf '%s\n' "$1" >"$T/policy.yaml"
	al --policy "$T/policy.yaml" -- /usr/bin/touch "$marker"
	assert_rc 0 "a valid policy runs"
	assert_file "$marker" "the command's marker under a valid policy"
	rm -f "$marker"
}

test_policy_bad_yaml() {
	bad_policy 'version: 1
sandbox:
  limits: [pids: 3' '(3|4)' 'policy.yaml'
	good_policy 'version: 1
sandbox:
  limits: {pids: 300}'
}

test_policy_unknown_field() {
	bad_policy 'version: 1
sandbox:
  workspce: /tmp' 3 'workspce'
	bad_policy 'version: 1
network_policy: {}' 2 'network_policy'
	good_policy 'version: 1
sandbox:
  mode: enforce'
}

test_policy_wrong_type() {
	bad_policy 'version: 1
sandbox:
  limits:
    pids: lots' 4 'pids'
	bad_policy 'version: 1
filesystem:
  read: /etc' 3 'read'
	bad_policy 'version: 1
filesystem:
  baseline: maybe' 3 'baseline'
	good_policy 'version: 1
sandbox:
  limits:
    pids: 300
filesystem:
  baseline: true'
}

test_policy_duplicate_key() {
	bad_policy 'version: 1
sandbox:
  mode: enforce
  mode: observe' 4 'mode'
	bad_policy 'version: 1
version: 1' 2 'version'
}

test_policy_bad_version_and_values() {
	bad_policy 'version: 2' 1 'version'
	bad_policy 'version: 1
sandbox:
  boundary: teleport' 3 'boundary'
	bad_policy 'version: 1
sandbox:
  limits:
    memory: 12 parsecs' 4 'memory'
}

# The agent never sees its policy: a policy file inside the workspace shows
# no content inside and cannot be changed from inside, while the rest of the
# workspace stays readable.
test_policy_file_in_workspace_hidden() {
	printf 'version: 1\nname: inside-%s\n' "$$" >"$WS/airlock.yaml"
	printf 'notes\n' >"$WS/notes.txt"
	al --policy "$WS/airlock.yaml" -- cat "$WS/airlock.yaml"
	assert_not_contains "$OUT" "inside-$$" "the policy's content read inside"
	al --policy "$WS/airlock.yaml" -- /bin/sh -c 'echo "name: widened" >>"$0"; echo "x: 1" >"$0"' \
		"$WS/airlock.yaml"
	assert_eq "version: 1
name: inside-$$" "$(cat "$WS/airlock.yaml")" "the policy file after the sandbox tried to write it"
	al --policy "$WS/airlock.yaml" -- ./airlock-probe read-ok "$WS/notes.txt"
	check_allowed read-ok
}

test_policy_check_prints_effective_policy() {
	printf 'version: 1\nname: e2e-check\nsandbox:\n  limits:\n    open_files: 64\n    wall: 90s\n' \
		>"$T/policy.yaml"
	LAST_CMD="airlock policy check $T/policy.yaml"
	OUT=$(cd "$WS" && HOME="$E2E_HOME" "$AIRLOCK" policy check "$T/policy.yaml" 2>&1)
	RC=$?
	assert_rc 0 "policy check of a valid policy"
	assert_contains "$OUT" "version: 1" "the version"
	assert_contains "$OUT" "e2e-check" "the policy's name"
	assert_contains "$OUT" "open_files: 64" "the limit set in the file"
	assert_contains "$OUT" "workspace" "the (defaulted) workspace"
	assert_contains "$OUT" "$WS" "the workspace resolved to the current directory"
	assert_contains "$OUT" "baseline" "the defaulted filesystem baseline"
}

# A policy this build cannot enforce is refused, never run weaker: the
# command does not run, and the message names the field.
test_policy_unenforceable_refused() {
	local text field
	# (sandbox.mode: observe runs, loudly: t_observe.sh)
	for text in 'sandbox:
  boundary: microvm'; do
		field=${text##*$'\n'  }
		field=${field%%:*}
		printf 'version: 1\n%s\n' "$text" >"$T/policy.yaml"
		al --policy "$T/policy.yaml" -- /usr/bin/touch "$WS/ran"
		case "$RC" in
		2 | 125) ;;
		*) fail "an unenforceable policy ($field) must be refused with 2 or 125$(e2e_last_run)" ;;
		esac
		assert_no_file "$WS/ran" "the command ran under an unenforceable policy ($field)"
		assert_contains "$ERR" "$field" "the refused field named"
	done
	good_policy 'version: 1
sandbox:
  mode: enforce
  boundary: process'
}

# The policies under examples/ (one per coding agent, and a plain shell)
# are what a new user copies, so they cannot be left to rot: each is
# valid, draws no lint warning (`policy check --strict`), starts a run,
# and widens the built-in default by exactly the list in its header
# ("#   SECTION: WITNESS" lines, as `policy diff --json` names them). The
# header names every request the network allows ("network: METHOD URL"),
# since `policy diff` against the default shows one request per new
# endpoint: a policy of those requests alone must be no narrower than the
# example. A change that widens an example (another host, route or
# variable, a write outside the workspace) fails here until its header
# says so.
test_policy_examples() {
	local dir="$here/../../examples" f n=0 want got
	[ -d "$dir" ] || fail "no examples directory at $dir"
	"$AIRLOCK" policy default >"$T/default.yaml" 2>"$T/default.err" ||
		fail "airlock policy default failed: $(cat "$T/default.err")"
	for f in "$dir"/*.yaml; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		LAST_CMD="airlock policy check --strict $f"
		OUT=$(cd "$WS" && HOME="$E2E_HOME" "$AIRLOCK" policy check --strict "$f" 2>"$T/check.err")
		RC=$?
		ERR=$(cat "$T/check.err")
		assert_rc 0 "policy check --strict of $f"
		assert_eq "" "$ERR" "warnings from policy check --strict of $f"
		want=$(sed -n '/^# Widens the built-in default by exactly/,/^[^#]/s/^#   \([a-z.]*: .*\)$/\1/p' "$f" |
			LC_ALL=C sort)
		[ -n "$want" ] || fail "$f lists no widening in its header"
		# Every section but the network: exactly the header's lines.
		LAST_CMD="airlock policy diff default $f --json"
		OUT=$(cd "$WS" && HOME="$E2E_HOME" "$AIRLOCK" policy diff "$T/default.yaml" "$f" --json 2>"$T/diff.err")
		RC=$?
		ERR=$(cat "$T/diff.err")
		assert_rc 1 "policy diff of the default and $f (1: wider)"
		got=$(printf '%s' "$OUT" | /usr/bin/python3 -c '
import json, sys
for d in json.load(sys.stdin):
    print("%s: %s" % (d["section"], d["witness"]))' | LC_ALL=C sort) ||
			fail "policy diff --json of $f is not JSON$(e2e_last_run)"
		assert_eq "$(printf '%s\n' "$want" | grep -v '^network: ')" \
			"$(printf '%s\n' "$got" | grep -v '^network: ')" \
			"the widenings of $f over the default outside the network (its header, then policy diff)"
		# The network: each request diff names is in the header, and the
		# header's requests, as a policy of their own, allow all the
		# example's network does.
		printf '%s\n' "$got" | grep '^network: ' | while IFS= read -r line; do
			printf '%s\n' "$want" | grep -qxF "$line" ||
				fail "$f allows $line, which its header does not list"
		done || exit 1
		printf '%s\n' "$want" | sed -n 's/^network: //p' | /usr/bin/python3 -c '
import json, sys, urllib.parse
eps = {}
for line in sys.stdin.read().split("\n"):
    if not line:
        continue
    method, url = line.split(" ", 1)
    u = urllib.parse.urlsplit(url)
    eps.setdefault((u.hostname, u.port), []).append((method, u.path))
print("version: 1")
if eps:
    print("network:\n  endpoints:")
for (host, port), rules in eps.items():
    print("    - {host: %s, ports: [%d], tls: intercept, rules: [%s]}" % (json.dumps(host), port,
          ", ".join("{methods: [%s], path: %s}" % (m, json.dumps(p)) for m, p in rules)))
' >"$T/declared.yaml"
		LAST_CMD="airlock policy diff $T/declared.yaml $f --json"
		OUT=$(cd "$WS" && HOME="$E2E_HOME" "$AIRLOCK" policy diff "$T/declared.yaml" "$f" --json 2>"$T/diff.err")
		RC=$?
		ERR=$(cat "$T/diff.err")
		[ "$RC" -le 1 ] || fail "policy diff of the header's requests and $f: exit $RC$(e2e_last_run)"
		assert_not_contains "$OUT" '"section": "network"' "requests $f allows beyond its header"
		# It starts: the proxy, the credentials (fake values) and the mounts.
		ANTHROPIC_API_KEY=e2e-fake-anthropic-key-0123456789 OPENAI_API_KEY=e2e-fake-openai-key-0123456789 \
			al --policy "$f" -- /bin/true
		assert_rc 0 "airlock run --policy $f -- /bin/true"
	done
	[ "$n" -ge 4 ] || fail "only $n example policies under $dir (Claude Code, Codex, Aider, shell expected)"
}
