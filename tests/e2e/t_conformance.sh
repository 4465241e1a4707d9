# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# airlock conformance: the suite tests itself. Against a runtime that
# contains nothing (plain `env` as the prefix) every requirement must fail,
# so no probe can pass by accident; against airlock's default policy every
# requirement must hold except the rows airlock honestly fails today, listed
# below, so that both a new failure and a row that starts holding show up
# here (then this list, docs/conformance.md and the README are updated).

# Rows airlock fails under its default policy today, and why: none. (The
# hand-off rows hold since filesystem.protect, git indirection since the
# guard refuses a repository's shape and its pointers; audit.denials since
# the decision log is on by default and, with protected paths, traces the
# file calls; the set-ID, memfd and vsock rows since the sandbox refuses
# set-ID modes, executable memfds and AF_VSOCK; the exec row since every
# mount no exec rule reaches into is noexec.)
CONF_AIRLOCK_KNOWN_FAILURES=""

# conf_run ARGS...: airlock conformance with the e2e probe, its scratch
# directory under $T/tmp (so cleanup can be checked). Sets OUT, ERR, RC.
conf_run() {
	mkdir -p "$T/tmp"
	LAST_CMD="airlock conformance $*"
	(cd "$T" && TMPDIR="$T/tmp" timeout -k 5 300 "$AIRLOCK" conformance --probe "$PROBE" "$@" \
		>"$T/conf.out" 2>"$T/conf.err" </dev/null)
	RC=$?
	OUT=$(cat "$T/conf.out")
	ERR=$(cat "$T/conf.err")
	[ "$RC" != 124 ] || fail "airlock conformance did not finish$(e2e_last_run)"
}

# "ID VERDICT" per requirement, from the table in $OUT.
conf_verdicts() {
	printf '%s\n' "$OUT" | awk '$1 ~ /^(boundary|egress|credentials|handoff|audit)\./ { print $1, $3 }'
}

# The ids with verdict $1 (held, FAILED, n/a), sorted, on one line.
conf_ids() {
	conf_verdicts | awk -v v="$1" '$2 == v { print $1 }' | sort | tr '\n' ' ' | sed 's/ $//'
}

# The same, of the rows in the profile the run used (the table marks the
# others "[strict only]").
conf_ids_in_profile() {
	printf '%s\n' "$OUT" | awk -v v="$1" '$1 ~ /^(boundary|egress|credentials|handoff|audit)\./ &&
		$3 == v && $0 !~ /\[strict only\]/ { print $1 }' | sort | tr '\n' ' ' | sed 's/ $//'
}

# The rows of the known-failure list that are in the baseline profile.
conf_known_baseline_failures() {
	local id
	for id in $CONF_AIRLOCK_KNOWN_FAILURES; do
		case "$id" in
		boundary.setid-plant | egress.vsock) printf '%s\n' "$id" ;;
		esac
	done | sort | tr '\n' ' ' | sed 's/ $//'
}

# Without vsock in the host's kernel its row has nothing to contain.
conf_vsock_na() {
	case "$OUT" in *"host vsock: not available"*) echo egress.vsock ;; esac
}

conf_all_ids() {
	conf_verdicts | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//'
}

# The suite's own namespace is part of what is tested: without it the
# egress rows could not fail, so its absence is a failure here.
conf_assert_netns() {
	assert_match "$OUT" '^network namespace: created' "the suite's network namespace"
}

test_conformance_env_fails_every_requirement() {
	conf_run --runtime env --profile strict
	assert_rc 1 "a runtime that contains nothing fails the suite"
	conf_assert_netns
	local n
	n=$(conf_verdicts | wc -l)
	[ "$n" -ge 30 ] || fail "only $n requirements reported$(e2e_last_run)"
	assert_eq "" "$(conf_ids held)" "requirements held by plain env"
	assert_eq "$(conf_vsock_na)" "$(conf_ids n/a)" "requirements not applicable under plain env"
	assert_eq "$(conf_all_ids | tr ' ' '\n' | grep -vxF "$(conf_vsock_na)" | tr '\n' ' ' | sed 's/ $//')" \
		"$(conf_ids FAILED)" "every requirement failed"
	# The evidence says what got through, in the probe's own words.
	assert_match "$OUT" '^credentials\.env .*env-secret \{canary\}: allowed \(in \$GITHUB_TOKEN\)' "credentials.env evidence"
	assert_match "$OUT" '^credentials\.proc .*proc-environ \{canary\}: allowed \(in the environment of pid' "credentials.proc evidence"
	assert_match "$OUT" '^egress\.metadata .*connect-local \{meta\} 80: allowed \(connected\)' "metadata evidence"
	assert_match "$OUT" '^boundary\.fd-leak .*fds: allowed \(1 inherited: [0-9]+ -> .*/outside\)' "the leaked fd, and only it"
	# What the agent leaves is judged on the host, and each way through
	# is named.
	assert_match "$OUT" '^boundary\.setid-plant .*on the host: set-ID bit or file capabilities on .*chmod-u' "set-ID evidence"
	assert_match "$OUT" '^boundary\.setid-plant .*neighbour chmod-ok \{ws\}/src/build.sh: allowed' "chmod +x neighbour"
	assert_match "$OUT" '^boundary\.exec-writable .*exec-copy /tmp: allowed \(directly ran; through [^ ]+ ran\)' "exec evidence"
	assert_match "$OUT" '^boundary\.memfd-exec .*memfd fexecve: ran' "memfd evidence"
	assert_match "$OUT" '^handoff\.git-indirection .*commondir: allowed \(on the host: .git/commondir exists\).*gitfile: allowed.*bare: allowed' "git evidence"
	assert_match "$OUT" '^handoff\.symlinked-dir .*first: allowed \(on the host: .vscode, a link, leads to tasks.json\).*last: allowed.*rename: allowed.*editor into: allowed \(on the host: editor, a link, leads to tasks.json\)' "link evidence"
	[ -n "$(conf_vsock_na)" ] || assert_match "$OUT" '^egress\.vsock .*vsock: allowed \(stream: created' "vsock evidence"
}

test_conformance_airlock_default_policy() {
	conf_run --runtime "$AIRLOCK run --audit {audit} --" --profile strict
	conf_assert_netns
	assert_eq "$CONF_AIRLOCK_KNOWN_FAILURES" "$(conf_ids FAILED)" "rows airlock fails (update the known list only with a reason)"
	assert_eq "" "$(conf_ids n/a)" "rows not applicable to airlock"
	local held expected
	held=$(conf_ids held)
	expected=$(conf_all_ids | tr ' ' '\n' | grep -vxF -f <(printf '%s\n' $CONF_AIRLOCK_KNOWN_FAILURES) |
		tr '\n' ' ' | sed 's/ $//')
	assert_eq "$expected" "$held" "rows airlock holds"
	if [ -n "$CONF_AIRLOCK_KNOWN_FAILURES" ]; then
		assert_rc 1 "strict profile with known failures"
	else
		assert_rc 0 "airlock holds the strict profile"
	fi
	# The record is verified by airlock's own verifier, and the agent
	# could not reach it.
	assert_match "$OUT" '^audit\.tamper .*held.*read \{audit\}: blocked.*after the run: airlock audit verify: intact and sealed' "audit.tamper evidence"
	# Each neighbour kept working: held means contained, not broken.
	assert_match "$OUT" '^boundary\.host-files .*neighbour read-ok \{ws\}/README.md: allowed' "workspace readable"
	assert_match "$OUT" '^boundary\.write-outside .*neighbour write-ok \{ws\}/output.txt: allowed' "workspace writable"

	# The baseline profile leaves the hand-offs and the record out: airlock
	# holds all of it but the known failures that are baseline rows.
	conf_run --runtime "$AIRLOCK run --audit {audit} --" --profile baseline
	local known_baseline
	known_baseline=$(conf_known_baseline_failures)
	assert_eq "$known_baseline" "$(conf_ids_in_profile FAILED)" "baseline rows airlock fails"
	if [ -n "$known_baseline" ]; then
		assert_rc 1 "baseline profile with known failures"
	else
		assert_rc 0 "airlock holds the baseline profile"
		assert_match "$OUT" '0 failed in the baseline profile' "baseline summary"
	fi
}

# The row that fails for airlock's default holds once denials are traced:
# the suite tells the two apart.
test_conformance_airlock_traced_denials_are_recorded() {
	conf_run --runtime "$AIRLOCK run --trace-denials --audit {audit} --" --profile strict
	assert_match "$OUT" '^audit\.denials +audit +held .*[1-9][0-9]* denials; airlock audit verify: intact and sealed' "denials in the verified record"
}

# A weakened airlock is caught: passing the secret's variable in turns
# exactly its row to FAILED.
test_conformance_sees_a_weakened_airlock() {
	cat >"$T/weak.yaml" <<-'YAML'
	version: 1
	process:
	  env:
	    pass: [GITHUB_TOKEN]
	YAML
	conf_run --runtime "$AIRLOCK run --policy $T/weak.yaml --audit {audit} --" --profile baseline
	assert_rc 1 "a policy passing GITHUB_TOKEN fails the baseline"
	assert_eq "$(printf '%s\n' credentials.env $CONF_AIRLOCK_KNOWN_FAILURES | sort | tr '\n' ' ' | sed 's/ $//')" \
		"$(conf_ids FAILED)" "only the environment row fails beyond the known ones"
	assert_match "$OUT" '^credentials\.env .*allowed \(in \$GITHUB_TOKEN\)' "evidence"
}

test_conformance_formats_and_usage() {
	conf_run --runtime env --format junit
	assert_rc 1 "junit run"
	printf '%s\n' "$OUT" >"$T/junit.xml"
	if command -v /usr/bin/python3 >/dev/null; then
		/usr/bin/python3 - "$T/junit.xml" <<-'PY' || fail "junit output is not what it should be$(e2e_last_run)"
		import sys, xml.etree.ElementTree as ET
		s = ET.parse(sys.argv[1]).getroot().find("testsuite")
		cases = s.findall("testcase")
		fails = [c for c in cases if c.find("failure") is not None]
		assert len(cases) == int(s.get("tests")) >= 30
		assert len(fails) == int(s.get("failures")) > 0
		# baseline profile: the strict-only rows are skipped, not failed
		assert all(c.find("skipped") is not None for c in cases if c.get("name").startswith("handoff."))
		PY
	fi
	assert_contains "$OUT" '<testcase classname="credentials" name="credentials.env"><failure' "junit failure"

	conf_run --runtime env --format json --profile strict
	assert_rc 1 "json run"
	if command -v /usr/bin/python3 >/dev/null; then
		printf '%s\n' "$OUT" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["requirements"]
assert d["profile"] == "strict" and len(r) >= 30
assert all(x["aicm"] and x["rationale"] for x in r)
# Without vsock in the host kernel its row has nothing to contain.
if d["host_vsock"] != "available":
    assert [x["verdict"] for x in r if x["id"] == "egress.vsock"] == ["not_applicable"]
    r = [x for x in r if x["id"] != "egress.vsock"]
assert all(x["verdict"] == "failed" for x in r)
assert d["summary"]["failed_in_profile"] == len(r)
assert {"AIS-11", "AIS-13", "IAM-18", "LOG"} <= {c for x in r for c in x["aicm"]}
' || fail "json output$(e2e_last_run)"
	fi

	conf_run --profile strict
	assert_rc 2 "--runtime missing"
	assert_contains "$ERR" "--runtime PREFIX is required" "message"
	conf_run --runtime env --profile lax
	assert_rc 2 "bad profile"
	assert_contains "$ERR" '--profile: "lax" is not baseline or strict' "message"
	conf_run --runtime env --format yaml
	assert_rc 2 "bad format"
	conf_run --runtime "build/src/airlock run --"
	assert_rc 2 "relative runtime path"
	assert_contains "$ERR" '"build/src/airlock" is a relative path' "message"
	conf_run --runtime env --probe "$T/nonexistent"
	assert_rc 2 "missing probe"
	assert_contains "$ERR" "--probe $T/nonexistent" "message names the probe"
}

# A runtime that runs nothing is neither held nor failed row by row, and
# the suite still says it failed; whatever happened, nothing is left.
test_conformance_runtime_that_runs_nothing_and_cleanup() {
	conf_run --runtime "false"
	assert_rc 1 "a runtime that ran nothing"
	assert_contains "$ERR" "the runtime ran no probe" "message"
	assert_match "$OUT" '^boundary\.host-files .* n/a .*the runtime did not run the probe \(exit status 1' "row evidence"
	assert_eq "" "$(ls -A "$T/tmp")" "scratch directories left behind"
	conf_run --runtime env --keep
	local kept
	kept=$(printf '%s\n' "$ERR" | sed -n 's/^airlock conformance: scratch directory kept: //p')
	[ -n "$kept" ] && [ -f "$kept/outside/planted.txt" ] || fail "--keep keeps the scratch directory$(e2e_last_run)"
	rm -rf "$kept"
	assert_eq "" "$(conf_services_under "$T/tmp")" "a stand-in service left running"
}

# The stand-in services of the runs whose scratch directory is under $1,
# one "PID ARGV0" a line. A service names its run in its argv[0], so that
# another conformance run of the same user going on at the same time is
# neither counted as a leftover nor missed.
conf_services_under() {
	pgrep -u "$(id -u)" -a -f '^airlock-conformance-service:' | awk -v d="$1/" '
		{ n = split($2, a, ":"); p = substr($2, length(a[1]) + 2) }
		substr(p, 1, length(d)) == d { print $1, $2 }'
}

# No stand-in service outlives its suite, and the check sees only its own
# run's: another run of the same user, held waiting in its runtime prefix,
# is still going when this one's check is made.
test_conformance_cleanup_with_another_run_going_on() {
	mkdir -p "$T/other"
	# The other run's "runtime" waits for a file, then runs nothing.
	(TMPDIR="$T/other" timeout -k 5 120 "$AIRLOCK" conformance --probe "$PROBE" \
		--runtime "sh -c 'while [ ! -e $T/release ]; do sleep 0.1; done; exit 1' release" \
		>"$T/other.out" 2>&1 </dev/null) &
	local other=$! i
	for i in $(seq 1 300); do
		[ -z "$(conf_services_under "$T/other")" ] || break
		sleep 0.1
	done
	[ -n "$(conf_services_under "$T/other")" ] || { touch "$T/release"; wait "$other"; fail "the other run's service did not start$(e2e_last_run)"; }

	conf_run --runtime "false"
	assert_rc 1 "a runtime that ran nothing"
	assert_eq "" "$(conf_services_under "$T/tmp")" "this run's stand-in service left running"
	[ -n "$(conf_services_under "$T/other")" ] || fail "the other run's service is not seen while it runs"

	touch "$T/release"
	wait "$other"
	assert_eq "" "$(conf_services_under "$T/other")" "the other run's stand-in service left running"
	assert_eq "" "$(ls -A "$T/other")" "the other run's scratch directory left behind"
}
