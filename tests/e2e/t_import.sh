# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# `airlock policy import`: another runtime's settings file, converted and
# run. An imported srt allowed domain passes the proxy while another domain
# is refused; an imported write root is writable while a path beside it is
# not. Test host names map to loopback through `network.resolve`, which the
# test appends (srt has no such setting); all traffic stays on 127.0.0.1.

# import_srt FILE: the converted policy in $T/imported.yaml.
import_srt() {
	"$AIRLOCK" policy import --from srt --narrow "$1" >"$T/imported.yaml" 2>"$T/import.err"
	RC=$?
	[ "$RC" = 0 ] || fail "import of $1 refused: $(cat "$T/import.err")"
	"$AIRLOCK" policy check "$T/imported.yaml" >/dev/null 2>"$T/check.err" ||
		fail "the imported policy does not check: $(cat "$T/check.err")"
}

write_fetch() {
	cat >"$WS/fetch.py" <<'PY'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=20) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
except Exception as e:
    print("ERROR", type(e).__name__, e)
PY
}

test_import_srt_allowed_domain_passes_other_refused() {
	cat >"$T/srt.json" <<'JSON'
{
  "network": {
    "allowedDomains": ["api.test"],
    "deniedDomains": []
  },
  "filesystem": {
    "denyRead": [],
    "allowWrite": ["."],
    "denyWrite": []
  }
}
JSON
	import_srt "$T/srt.json"
	assert_contains "$(cat "$T/imported.yaml")" '- host: "api.test"' "the allowed domain is an endpoint"
	# A listener on port 80 is out of reach of an unprivileged run, so
	# the allowed request reaches the upstream connection, which fails
	# (502); the other domain never gets that far (403).
	{
		cat "$T/imported.yaml"
		printf '  resolve: { api.test: 127.0.0.1, other.test: 127.0.0.1 }\n'
		printf '  allow_private: [127.0.0.1:80]\n'
		printf '  log: %s\n' "$T/net.jsonl"
	} >"$T/policy.yaml"
	write_fetch
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./fetch.py "http://api.test/x"
	assert_match "$OUT" '^502 ' "the allowed domain passes the policy and is tried upstream"
	al --policy "$T/policy.yaml" -- /usr/bin/python3 ./fetch.py "http://other.test/x"
	assert_match "$OUT" '^403 ' "a domain the settings do not allow"
	# The decision log: the allowed domain was decided by the imported
	# endpoint and failed only at the connection; the other had no entry.
	local log
	log=$(cat "$T/net.jsonl")
	assert_match "$log" '"host":"api.test"[^}]*"rule":"network.endpoints\[0\]"[^}]*"reason":"cannot connect' \
		"the allowed domain's decision"
	assert_match "$log" '"host":"other.test"[^}]*"reason":"no network.endpoints entry allows' \
		"the other domain's decision"
}

test_import_srt_write_roots() {
	mkdir -p "$T/wroot" "$T/beside"
	chmod 0777 "$T/wroot" "$T/beside"
	cat >"$T/srt.json" <<JSON
{
  "network": { "allowedDomains": [] },
  "filesystem": {
    "denyRead": [],
    "allowWrite": ["$T/wroot"],
    "denyWrite": []
  }
}
JSON
	import_srt "$T/srt.json"
	# The write root is writable; a directory beside it is not, and the
	# workspace (srt's current directory, not in allowWrite) is read-only.
	al --policy "$T/imported.yaml" -- /bin/sh -c "echo in > '$T/wroot/f' && echo WROTE"
	assert_contains "$OUT" "WROTE" "write into the imported write root"
	assert_eq "in" "$(cat "$T/wroot/f")" "the file written inside"
	al --policy "$T/imported.yaml" -- /bin/sh -c "echo in > '$T/beside/f' && echo WROTE"
	assert_not_contains "$OUT" "WROTE" "write beside the write root"
	assert_no_file "$T/beside/f" "a file beside the write root"
	al --policy "$T/imported.yaml" -- /bin/sh -c "echo in > ./ws-file && echo WROTE; cat ./airlock-probe >/dev/null && echo READ"
	assert_not_contains "$OUT" "WROTE" "write into the workspace srt's settings keep read-only"
	assert_contains "$OUT" "READ" "the workspace is still readable"
	assert_no_file "$WS/ws-file" "a file in the read-only workspace"
}

test_import_refusals_name_file_line_field() {
	printf '{\n  "filesystem": {"allowWrite": ["."]},\n  "sandboxMode": "strict"\n}\n' >"$T/bad.json"
	"$AIRLOCK" policy import --from srt --narrow "$T/bad.json" >"$T/out" 2>"$T/err"
	RC=$?
	assert_rc 2 "an unknown srt field"
	assert_contains "$(cat "$T/err")" "$T/bad.json:3:3: sandboxMode: unknown key" "the error names file, line and field"
	assert_eq "" "$(cat "$T/out")" "nothing printed on refusal"
	# Without --narrow, srt's read-everything default is refused.
	printf '{"filesystem": {"allowWrite": ["."]}}\n' >"$T/ok.json"
	"$AIRLOCK" policy import --from srt "$T/ok.json" >"$T/out" 2>"$T/err"
	RC=$?
	assert_rc 2 "srt's reads without --narrow"
	assert_contains "$(cat "$T/err")" "pass --narrow" "the error says how to accept the narrowing"
	"$AIRLOCK" policy import --from srt --narrow "$T/ok.json" >"$T/out" 2>"$T/err"
	RC=$?
	assert_rc 0 "the same file with --narrow"
}

test_import_codex_workspace_write_keeps_git_read_only() {
	mkdir -p "$WS/.git" "$WS/src"
	printf 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n' >"$T/config.toml"
	"$AIRLOCK" policy import --from codex --narrow "$T/config.toml" >"$T/imported.yaml" 2>"$T/import.err"
	RC=$?
	assert_rc 0 "import of a Codex workspace-write config"
	# The workspace is writable, as in Codex; .git inside it is not.
	al --policy "$T/imported.yaml" -- /bin/sh -c "echo a > src/f && echo WROTE-SRC; echo b > .git/f && echo WROTE-GIT"
	assert_contains "$OUT" "WROTE-SRC" "a write in the workspace"
	assert_not_contains "$OUT" "WROTE-GIT" "a write into .git, which Codex keeps read-only"
	assert_file "$WS/src/f" "the file written in the workspace"
	assert_no_file "$WS/.git/f" "a file in .git"
}

test_import_openshell_lists_only_what_it_names() {
	mkdir -p "$T/rw" "$T/beside"
	chmod 0777 "$T/rw" "$T/beside"
	printf 'seen\n' >"$T/rw/listed"
	cat >"$T/openshell.yaml" <<YAML
version: 1
filesystem_policy:
  include_workdir: true
  read_only:
    - /usr
    - /etc
  read_write:
    - $T/rw
landlock:
  compatibility: hard_requirement
YAML
	"$AIRLOCK" policy import --from openshell "$T/openshell.yaml" >"$T/imported.yaml" 2>"$T/import.err"
	RC=$?
	[ "$RC" = 0 ] || fail "import refused: $(cat "$T/import.err")"
	# The static probe, from the workspace (include_workdir), so that the
	# test does not depend on how this system links its programs.
	track_probe_write "$T/beside/f"
	al --policy "$T/imported.yaml" -- ./airlock-probe write-ok "$T/rw/f"
	check_allowed write-ok
	al --policy "$T/imported.yaml" -- ./airlock-probe write "$T/beside/f"
	check_blocked write
	al --policy "$T/imported.yaml" -- ./airlock-probe read-ok /etc/passwd
	check_allowed read-ok
	# /opt is in airlock's baseline, not in the OpenShell policy.
	if [ -d /opt ]; then
		al --policy "$T/imported.yaml" -- ./airlock-probe read /opt
		check_blocked read
	fi
}

test_export_round_trip_through_the_cli() {
	# microsoft/mxc tests/examples/12_lxc_filesystem_access.json (also in
	# tests/data/import/mxc, which the unprivileged run does not copy).
	local src="$T/mxc.json"
	cat >"$src" <<'JSON'
{
  "version": "0.6.0-alpha",
  "containerId": "CLI-LXC-FilesystemAccess",
  "containment": "lxc",
  "process": {
    "commandLine": "ls -la /mnt/shared && echo 'test' > /mnt/output/result.txt && cat /mnt/output/result.txt"
  },
  "lifecycle": {
    "destroyOnExit": true
  },
  "lxc": {
    "distribution": "alpine",
    "release": "3.20"
  },
  "filesystem": {
    "readonlyPaths": ["/mnt/shared"],
    "readwritePaths": ["/mnt/output"],
    "deniedPaths": ["/etc/shadow"]
  }
}
JSON
	"$AIRLOCK" policy import --from mxc "$src" >"$T/a.yaml" 2>"$T/err"
	RC=$?
	assert_rc 0 "import of the MXC example"
	# Without --accept-wider: refused, naming the airlock field.
	"$AIRLOCK" policy export --to mxc "$T/a.yaml" >"$T/out.json" 2>"$T/err"
	RC=$?
	assert_rc 2 "export that would widen, without --accept-wider"
	assert_contains "$(cat "$T/err")" "sandbox.limits:" "the refusal names the airlock field"
	assert_eq "" "$(cat "$T/out.json")" "nothing printed on refusal"
	"$AIRLOCK" policy export --to mxc --accept-wider "$T/a.yaml" >"$T/out.json" 2>"$T/err"
	RC=$?
	assert_rc 0 "export with --accept-wider"
	assert_contains "$(cat "$T/err")" "wider in MXC: sandbox.limits" "each widening is listed"
	assert_contains "$(cat "$T/out.json")" '"readwritePaths": ["/mnt/output"]' "the workspace as MXC's read-write path"
	"$AIRLOCK" policy import --from mxc "$T/out.json" >"$T/b.yaml" 2>"$T/err"
	RC=$?
	assert_rc 0 "import of the exported file"
	# The same effective policy, apart from where each value came from.
	"$AIRLOCK" policy check "$T/a.yaml" | sed 's/ *#.*//' >"$T/a.eff"
	"$AIRLOCK" policy check "$T/b.yaml" | sed 's/ *#.*//' >"$T/b.eff"
	assert_eq "$(cat "$T/a.eff")" "$(cat "$T/b.eff")" "import, export, import"
	assert_contains "$(cat "$T/a.eff")" '"/mnt/shared"' "the read-only path is in the policy"
}
