# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Learn mode and `airlock policy suggest`: a job runs under a policy that
# misses four of its needs (a file to read outside the workspace, a new
# file to write in another directory, a binary outside process.exec, an
# HTTP endpoint); learn mode enforces and records each denial in the
# signed log; suggest turns the log into a policy that `policy check`
# accepts and under which the same job succeeds with no denial, while the
# neighbours of what was added (another file beside the one read, another
# path on the same host) stay refused. The servers are t_proxy.sh's.

# shellcheck source=tests/e2e/t_proxy.sh
. "$here/t_proxy.sh"

# The job, its directories and the learn-mode policy. Sets RD (a file to
# read), WR (a directory to write in), BIN (a binary), JOB (the job's
# command line); writes $T/learn.yaml.
learn_setup() {
	start_servers
	write_client
	RD=$(mktemp -d /var/tmp/airlock-e2e-rd.XXXXXX)
	WR=$(mktemp -d /var/tmp/airlock-e2e-wr.XXXXXX)
	BIN=$(mktemp -d /var/tmp/airlock-e2e-bin.XXXXXX)
	printf '%s\n%s\n%s\n' "$RD" "$WR" "$BIN" >>"$T/.rm_dirs"
	chmod 755 "$RD" "$WR" "$BIN"
	printf 'input-data\n' >"$RD/in.csv"
	printf 'not-asked-for\n' >"$RD/other.csv"
	chmod 644 "$RD/in.csv" "$RD/other.csv"
	# As root the sandbox runs as an unprivileged uid: let it write there.
	e2e_is_root && chmod 777 "$WR"
	cp "$PROBE" "$BIN/tool" && chmod 755 "$BIN/tool"
	cat >"$WS/job.sh" <<EOF
cat $RD/in.csv && echo read-ok
echo result >$WR/out.txt && echo write-ok
$BIN/tool list >/dev/null && echo exec-ok
python3 ./fetch.py GET http://api.test:$HP/public/item
EOF
	cat >"$T/learn.yaml" <<YAML
version: 1
sandbox:
  mode: learn
process:
  exec: [/usr]
network:
  resolve: { api.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP]
  endpoints:
    - host: other.test
      ports: [$HP]
YAML
	JOB="/usr/bin/sh ./job.sh"
}

# suggest ARGS...: `airlock policy suggest` from the workspace; sets SOUT,
# SERR, SRC.
suggest() {
	(cd "$WS" && HOME="$E2E_HOME" "$AIRLOCK" policy suggest "$@" >"$T/suggest.out" 2>"$T/suggest.err")
	SRC=$?
	SOUT=$(cat "$T/suggest.out")
	SERR=$(cat "$T/suggest.err")
}

# A fresh home for the run, even where the tests are given a real one (the
# unprivileged run): what the host's home holds decides what is hidden.
learn_fresh_home() {
	E2E_HOME=$(mktemp -d /var/tmp/airlock-e2e-home.XXXXXX) || fail "mktemp HOME"
	printf '%s\n' "$E2E_HOME" >>"$T/.rm_dirs"
}

# The only log in directory $1.
log_in() {
	local l
	l=$(ls "$1"/*.jsonl 2>/dev/null)
	[ -f "$l" ] || fail "no audit log in $1$(e2e_last_run)"
	printf '%s' "$l"
}

test_learn_then_suggest_lets_the_job_run() {
	learn_setup
	mkdir -p "$T/audit1" "$T/audit2" "$T/audit3"
	# shellcheck disable=SC2086
	al --policy "$T/learn.yaml" --audit "$T/audit1" -- $JOB
	# Learn mode enforced: every one of the four failed.
	assert_not_contains "$OUT" "read-ok" "learn mode: the read outside the workspace was refused"
	assert_not_contains "$OUT" "write-ok" "learn mode: the write in another directory was refused"
	assert_not_contains "$OUT" "exec-ok" "learn mode: the binary outside process.exec was refused"
	assert_match "$OUT" '^403 ' "learn mode: the request to an unlisted host was refused"
	assert_no_file "$WR/out.txt" "learn mode: nothing was written"
	local log1 text1
	log1=$(log_in "$T/audit1")
	text1=$(cat "$log1")
	assert_match "$text1" "\"path\":\"$RD/in.csv\".*\"kind\":\"file_denied\"" "the log records the denied read"
	assert_match "$text1" "\"path\":\"$WR/out.txt\".*\"kind\":\"file_denied\"" "the log records the denied write"
	assert_match "$text1" "\"syscall\":\"execve\"" "the log records the denied exec"
	assert_match "$text1" '"hostname":"api.test".*"decision":"deny"' "the log records the denied request"

	suggest "$log1" --policy "$T/learn.yaml"
	assert_eq 0 "$SRC" "suggest: $SERR"
	printf '%s\n' "$SOUT" >"$T/suggested.yaml"
	# Exact: the file, the directory written in, the binary, host and port
	# and path, and nothing wider.
	assert_match "$SOUT" "^    - \"$RD/in.csv\"  # 1 denial: openat\(\"$RD/in.csv\"\) by cat" "the file read, exactly"
	assert_match "$SOUT" "^    - \"$WR\"  # 1 denial: openat\(\"$WR/out.txt\"\) by sh" "the directory the file is created in"
	assert_match "$SOUT" "^    - \"$BIN/tool\"  # 1 denial: execve" "the binary itself"
	assert_no_match "$SOUT" "\"$RD\"" "not the directory of the file read"
	assert_no_match "$SOUT" "\"$BIN\"" "not the directory of the binary"
	assert_contains "$SOUT" "    - host: \"api.test\"  # 1 denial: GET http://api.test:$HP/public/item" "the endpoint"
	assert_contains "$SOUT" "      ports: [$HP]" "its port only"
	assert_contains "$SOUT" '          path: "/public/item"' "the path requested, no glob"
	assert_contains "$SOUT" "  mode: enforce" "the suggested policy enforces"
	# --policy alone takes the policy file the log names: the same.
	suggest "$log1" --policy
	assert_eq 0 "$SRC" "suggest --policy alone: $SERR"
	assert_eq "$(cat "$T/suggested.yaml")" "$SOUT" "--policy alone merges into the policy the log names"
	# Without --policy: the additions alone, not a whole policy.
	suggest "$log1"
	assert_eq 0 "$SRC" "suggest without --policy: $SERR"
	assert_contains "$SOUT" "    - \"$RD/in.csv\"  # 1 denial" "the fragment has the additions"
	assert_not_contains "$SOUT" "version: 1" "the fragment is not a whole policy"
	assert_not_contains "$SOUT" "other.test" "nor repeats what the policy has"
	local check
	check=$(cd "$WS" && "$AIRLOCK" policy check "$T/suggested.yaml" 2>&1) ||
		fail "airlock policy check refuses the suggested policy: $check"

	# The same job under the suggested policy: all four work, no denial.
	# shellcheck disable=SC2086
	al --policy "$T/suggested.yaml" --audit "$T/audit2" -- $JOB
	assert_rc 0 "the job under the suggested policy"
	assert_contains "$OUT" "read-ok" "the read now works"
	assert_contains "$OUT" "write-ok" "the write now works"
	assert_contains "$OUT" "exec-ok" "the exec now works"
	assert_match "$OUT" '^200 .*"path": "/public/item"' "the request now goes through"
	assert_eq "result" "$(cat "$WR/out.txt")" "the file written"
	local text2
	text2=$(cat "$(log_in "$T/audit2")")
	assert_contains "$text2" '"mode":"enforce"' "the second run enforced"
	assert_not_contains "$text2" '"decision":"deny"' "no denial under the suggested policy"
	assert_eq 0 "$("$AIRLOCK" audit verify "$(log_in "$T/audit2")" >/dev/null 2>&1; echo $?)" "the second log verifies"

	# The neighbours of what was added stay refused.
	al --policy "$T/suggested.yaml" --audit "$T/audit3" -- /usr/bin/sh -c \
		"cat $RD/other.csv; python3 ./fetch.py GET http://api.test:$HP/private/x; cp $BIN/tool ./t2 && ./t2 list >/dev/null && echo copy-ran"
	assert_not_contains "$OUT" "not-asked-for" "another file beside the one read stays hidden"
	assert_match "$OUT" '^403 ' "another path on the same host is refused"
	assert_not_contains "$OUT" "copy-ran" "a copy of the binary elsewhere does not run"
}

# A learn run with one denied read; sets LOG.
learn_one_denial() {
	RD=$(mktemp -d /var/tmp/airlock-e2e-rd.XXXXXX)
	printf '%s\n' "$RD" >>"$T/.rm_dirs"
	chmod 755 "$RD"
	printf 'x\n' >"$RD/f" && chmod 644 "$RD/f"
	printf 'version: 1\nsandbox:\n  mode: learn\n' >"$T/learn.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/learn.yaml" --audit "$T/audit" -- /usr/bin/sh -c "cat $RD/f; echo done"
	assert_contains "$OUT" "done" "the learn run ran"
	LOG=$(log_in "$T/audit")
}

test_suggest_refuses_a_tampered_log() {
	learn_one_denial
	cp "$LOG" "$T/orig"
	suggest "$LOG" --policy "$T/learn.yaml"
	assert_eq 0 "$SRC" "suggest from the intact log: $SERR"
	assert_contains "$SOUT" "\"$RD/f\"" "the intact log's suggestion"
	# A denial's path changed after the session wrote it.
	local d
	d=$(grep -n '"kind":"file_denied"' "$T/orig" | head -n1 | cut -d: -f1)
	[ -n "$d" ] || fail "no file_denied record in the log"
	sed "${d}s|$RD/f|/etc/passwd|g" "$T/orig" >"$LOG"
	suggest "$LOG" --policy "$T/learn.yaml"
	assert_eq 3 "$SRC" "suggest from an edited log"
	assert_contains "$SERR" "$LOG:$d:" "the refusal names the first bad line"
	assert_contains "$SERR" "fails verification" "and says why"
	assert_eq "" "$SOUT" "nothing is suggested from it"
	# Cut short (no seal): a warning, and the suggestion still comes.
	head -n -1 "$T/orig" >"$LOG"
	suggest "$LOG" --policy "$T/learn.yaml"
	assert_eq 0 "$SRC" "suggest from an unsealed log: $SERR"
	assert_contains "$SERR" "warning" "an unsealed log is warned about"
	assert_contains "$SERR" "unsealed" "and called unsealed"
	assert_contains "$SOUT" "\"$RD/f\"" "the suggestion from the records verified"
	# Not a log at all: an error naming the file and the line.
	printf 'version: 1\n' >"$T/not-a-log.jsonl"
	suggest "$T/not-a-log.jsonl"
	assert_ne 0 "$SRC" "suggest from a file that is not a log"
	assert_contains "$SERR" "$T/not-a-log.jsonl:1:" "the error names file and line"
}

test_suggest_nothing_when_nothing_was_denied() {
	printf 'version: 1\nsandbox:\n  mode: learn\n' >"$T/learn.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/learn.yaml" --audit "$T/audit" -- /usr/bin/sh -c 'echo fine >./out.txt && cat ./out.txt'
	assert_eq "fine" "$OUT" "the allowed job ran"
	suggest "$(log_in "$T/audit")"
	assert_eq 0 "$SRC" "suggest from a log without denials: $SERR"
	assert_contains "$SERR" "nothing to suggest" "says there is nothing to suggest"
	assert_eq "" "$SOUT" "and prints no policy"
}

# A tool's ordinary misses are no denials: it makes its cache in the
# private home deepest directory first (npm), probes /sys (node, git) and
# looks in caches it does not have; the host has every one of those
# paths. Only what it asked of the host, ~/.gitconfig and two files it
# only probed for (stat, access), is recorded and suggested; nothing under
# a tool cache.
test_learn_records_only_what_the_sandbox_hid() {
	mkdir -p "$E2E_HOME/.npm/_cacache/index-v5/ab" "$E2E_HOME/.cache/pip/http" "$E2E_HOME/work/build"
	printf 'cached\n' >"$E2E_HOME/.cache/pip/http/x"
	printf '[user]\n\tname = e2e\n' >"$E2E_HOME/.gitconfig"
	mkdir -p "$E2E_HOME/.config/git"
	printf '*.bin binary\n' >"$E2E_HOME/.config/git/attributes"
	printf '*.o\n' >"$E2E_HOME/.gitignore_global"
	printf 'version: 1\nsandbox:\n  mode: learn\n' >"$T/learn.yaml"
	mkdir -p "$T/audit"
	cat >"$WS/tool.py" <<'PY'
import os
h = os.environ["HOME"]
# npm's mkdir: the deepest first, then each parent on ENOENT
def mkdirp(d):
    try:
        os.mkdir(d)
    except FileNotFoundError:
        mkdirp(os.path.dirname(d)); os.mkdir(d)
    except FileExistsError:
        pass
mkdirp(h + "/.npm/_cacache/index-v5/ab/cd")
open(h + "/.npm/_cacache/index-v5/ab/cd/entry", "w").write("x")
for p in ("/sys/fs/cgroup/memory.max", "/sys/devices/system/cpu/online", h + "/.cache/pip/http/x"):
    try:
        open(p).read()
    except OSError:
        pass
try:
    open(h + "/.gitconfig").read()
except OSError:
    pass
# probes only, as git makes them: a stat and an access
os.path.exists(h + "/.config/git/attributes")
os.access(h + "/.gitignore_global", os.R_OK)
print("tool-done")
PY
	al --policy "$T/learn.yaml" --audit "$T/audit" -- /usr/bin/python3 ./tool.py
	assert_rc 0 "the tool ran: $ERR"
	assert_contains "$OUT" "tool-done" "to its end"
	local log
	log=$(log_in "$T/audit")
	assert_not_contains "$(grep file_denied "$log")" "/.npm" "the cache made deepest first is not a denial"
	assert_not_contains "$(grep file_denied "$log")" "/sys/" "probes of /sys are not denials"
	assert_not_contains "$(grep file_denied "$log")" "/.cache/" "a miss in a tool cache is not a denial"
	assert_contains "$(grep file_denied "$log")" "$E2E_HOME/.gitconfig" "a read of a host file the sandbox hid is"
	suggest "$log"
	assert_eq 0 "$SRC" "suggest: $SERR"
	assert_contains "$SOUT" "$E2E_HOME/.gitconfig" "suggests the host file the tool asked for"
	assert_contains "$SOUT" "$E2E_HOME/.config/git/attributes" "and the one it looked for with stat"
	assert_contains "$SOUT" "$E2E_HOME/.gitignore_global" "and the one it looked for with access"
	assert_not_contains "$SOUT" "/.npm" "never the host's npm cache"
	assert_not_contains "$SOUT" "/.cache" "never a host cache"
}

# A learn run whose job (prompt-injected, say) reads the host's keys and
# tokens: the reads are recorded, and suggest offers none of them; the
# neighbour, an ordinary host file the same job read, is offered.
test_learn_suggests_no_credential_store() {
	learn_fresh_home
	mkdir -p "$E2E_HOME/.ssh" "$E2E_HOME/.aws" "$E2E_HOME/.config/gh"
	printf 'key\n' >"$E2E_HOME/.ssh/id_ed25519"
	printf '[default]\n' >"$E2E_HOME/.aws/credentials"
	printf 'github.com:\n' >"$E2E_HOME/.config/gh/hosts.yml"
	printf '//registry.npmjs.org/:_authToken=x\n' >"$E2E_HOME/.npmrc"
	printf 'machine example.com\n' >"$E2E_HOME/.netrc"
	printf '[user]\n\tname = e2e\n' >"$E2E_HOME/.gitconfig"
	printf 'version: 1\nsandbox:\n  mode: learn\n' >"$T/learn.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/learn.yaml" --audit "$T/audit" -- /bin/sh -c \
		'for f in .ssh/id_ed25519 .aws/credentials .config/gh/hosts.yml .npmrc .netrc .gitconfig; do cat "$HOME/$f" 2>/dev/null; done; echo job-done'
	assert_rc 0 "the job ran: $ERR"
	assert_contains "$OUT" "job-done" "to its end"
	assert_not_contains "$OUT" "_authToken" "no token was read in the learn run"
	local log
	log=$(log_in "$T/audit")
	assert_contains "$(grep file_denied "$log")" "$E2E_HOME/.ssh/id_ed25519" "the probe for a key is recorded"
	suggest "$log"
	assert_eq 0 "$SRC" "suggest: $SERR"
	assert_contains "$SOUT" "a credential store" "suggest says why it offers none"
	local f
	for f in .ssh .aws .config/gh .npmrc .netrc; do
		assert_not_contains "$(printf '%s\n' "$SOUT" | grep '^ *- "')" "$E2E_HOME/$f" "suggest offers no line for ~/$f"
	done
	assert_contains "$SOUT" "- \"$E2E_HOME/.gitconfig\"" "an ordinary host file is offered"
}

# The real npm installing a package with a command (a local tarball, no
# registry), the host's own npm cache and logs in place: the learn run
# records no "hidden" denial, and what it suggests names nothing under the
# host's home. The neighbour: the install worked and its command runs.
test_learn_npm_install_suggests_nothing_of_the_home() {
	command -v npm >/dev/null || skip "npm is not installed"
	learn_fresh_home
	mkdir -p "$E2E_HOME/.npm/_cacache/index-v5" "$E2E_HOME/.npm/_logs" "$E2E_HOME/.config"
	mkdir -p "$T/pkg/package/bin"
	cat >"$T/pkg/package/package.json" <<'JSON'
{"name": "hello-cmd", "version": "1.0.0", "bin": {"hello-cmd": "bin/hello.js"}}
JSON
	printf '#!/usr/bin/env node\nconsole.log("hello from the command");\n' >"$T/pkg/package/bin/hello.js"
	tar -C "$T/pkg" -czf "$WS/hello-cmd-1.0.0.tgz" package
	printf '{"name":"app","version":"1.0.0"}\n' >"$WS/package.json"
	printf 'version: 1\nsandbox:\n  mode: learn\n' >"$T/learn.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/learn.yaml" --audit "$T/audit" -- \
		/bin/sh -c 'npm install --offline --no-audit --no-fund ./hello-cmd-1.0.0.tgz && npx --offline hello-cmd'
	assert_rc 0 "npm installed the package: $ERR"
	assert_contains "$OUT" "hello from the command" "and its command runs"
	local log
	log=$(log_in "$T/audit")
	assert_eq 0 "$(grep -c 'hidden' "$log")" "no denial says the sandbox hid something: $(grep hidden "$log" | head -3)"
	suggest "$log"
	assert_eq 0 "$SRC" "suggest: $SERR"
	assert_not_contains "$SOUT" "$E2E_HOME" "nothing under the host's home is suggested"
}
