# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The signed decision log: `airlock run --audit DIR` writes one chained
# OCSF record per decision, checkpoints and a seal signed by the session
# key, which the local authority certifies; `airlock audit verify` finds
# every edit, deletion, insertion, reordering and truncation. The servers
# and policy are t_proxy.sh's.

# shellcheck source=tests/e2e/t_proxy.sh
. "$here/t_proxy.sh"

# A session with allowed and denied requests; sets LOG.
audited_session() {
	start_servers
	write_client
	net_policy >"$T/policy.yaml"
	mkdir -p "$T/audit"
	al --policy "$T/policy.yaml" --audit "$T/audit" -- /bin/sh -c \
		"python3 ./fetch.py GET http://api.test:$HP/public/a; python3 ./fetch.py GET http://api.test:$HP/private/b; python3 ./fetch.py GET http://other.test:$HP/"
	LOG=$(ls "$T"/audit/*.jsonl)
	[ -f "$LOG" ] || fail "no audit log was written$(e2e_last_run)"
}

verify() { # LOG [ARGS...]: sets VOUT and VRC
	VOUT=$("$AIRLOCK" audit verify "$@" 2>&1)
	VRC=$?
}

test_audit_log_records_and_verifies() {
	audited_session
	assert_contains "$OUT" "200" "the allowed request went through"
	verify "$LOG"
	assert_eq 0 "$VRC" "verify of an intact sealed log: $VOUT"
	assert_contains "$VOUT" "intact and sealed" "verify says so"
	local first last
	first=$(head -n1 "$LOG")
	last=$(tail -n1 "$LOG")
	assert_contains "$first" '"kind":"session_start"' "the first record is the session's start"
	assert_contains "$first" '"certificate"' "with the session certificate"
	assert_contains "$last" '"kind":"seal"' "the last record is the seal"
	assert_contains "$(cat "$LOG")" '"class_uid":4002' "HTTP Activity records"
	assert_contains "$(cat "$LOG")" '"decision":"deny"' "denials are recorded"
	assert_contains "$(cat "$LOG")" '"kind":"session_end"' "the session's end is recorded"
	# Read by people: a table filtered by decision, counts, CSV.
	local shown
	shown=$("$AIRLOCK" audit show "$LOG" --decision deny)
	assert_contains "$shown" "/private/b" "show lists the denied request"
	assert_not_contains "$shown" "/public/a" "and not the allowed one (filter)"
	assert_match "$("$AIRLOCK" audit stats "$LOG")" '[0-9]+ records, [0-9]+ allow, [0-9]+ deny' "stats counts decisions"
	assert_contains "$("$AIRLOCK" audit export "$LOG" --format csv)" '"http","GET","api.test"' "CSV export"
	assert_eq "$(wc -l <"$LOG")" "$("$AIRLOCK" audit export "$LOG" --format jsonl | wc -l)" "JSON lines export"
	# Anchored to the local authority's public key, and not to another.
	local key="$XDG_STATE_HOME/airlock/authority.key"
	assert_file "$key" "the authority key made on first use"
	openssl pkey -in "$key" -pubout -out "$T/authority.pub" 2>/dev/null
	verify "$LOG" --authority "$T/authority.pub"
	assert_eq 0 "$VRC" "verify against the authority's public key: $VOUT"
	openssl genpkey -algorithm ed25519 2>/dev/null | openssl pkey -pubout -out "$T/other.pub" 2>/dev/null
	verify "$LOG" --authority "$T/other.pub"
	assert_ne 0 "$VRC" "verify against another authority"
	assert_contains "$VOUT" "authority" "the refusal names the authority"
}

test_audit_verify_finds_tampering() {
	audited_session
	local n
	n=$(wc -l <"$LOG")
	[ "$n" -ge 5 ] || fail "expected at least 5 records, got $n"
	cp "$LOG" "$T/orig"

	# An edited record: a denial turned into an allowance.
	grep -n '"decision":"deny"' "$T/orig" | head -n1 | cut -d: -f1 >"$T/line"
	local d
	d=$(cat "$T/line")
	sed "${d}s/\"decision\":\"deny\"/\"decision\":\"allow\"/" "$T/orig" >"$LOG"
	verify "$LOG"
	assert_ne 0 "$VRC" "an edited record"
	assert_contains "$VOUT" ":$d:" "the edit is reported at its line"
	# Exported or shown, the edited log says it is not evidence.
	local xrc
	"$AIRLOCK" audit export "$LOG" --format csv >"$T/x.out" 2>"$T/x.err"
	xrc=$?
	assert_eq 3 "$xrc" "export of an edited log exits as verify does"
	assert_contains "$(cat "$T/x.err")" "does not verify at line $d" "export of an edited log warns, naming the line"
	assert_contains "$(cat "$T/x.out")" '"allow"' "the records are still there to investigate"
	"$AIRLOCK" audit show "$LOG" >/dev/null 2>"$T/x.err"
	assert_eq 3 "$?" "show of an edited log"
	assert_contains "$(cat "$T/x.err")" "WARNING" "show of an edited log warns"

	# A deleted record.
	sed '3d' "$T/orig" >"$LOG"
	verify "$LOG"
	assert_ne 0 "$VRC" "a deleted record"
	assert_contains "$VOUT" ":3:" "the deletion is reported where the chain breaks"

	# A duplicated record.
	sed '3p' "$T/orig" >"$LOG"
	verify "$LOG"
	assert_ne 0 "$VRC" "a duplicated record"

	# Two records swapped.
	awk 'NR==3{a=$0; next} NR==4{print; print a; next} {print}' "$T/orig" >"$LOG"
	verify "$LOG"
	assert_ne 0 "$VRC" "reordered records"

	# Truncated: the seal (and the records before it) cut off.
	head -n $((n - 2)) "$T/orig" >"$LOG"
	verify "$LOG"
	assert_eq 1 "$VRC" "a truncated log"
	assert_contains "$VOUT" "unsealed" "truncation is reported as an unsealed log"

	# A torn last line, as a crash while writing leaves it.
	head -c $(($(wc -c <"$T/orig") - 40)) "$T/orig" >"$LOG"
	verify "$LOG"
	assert_ne 0 "$VRC" "a torn last line"
	assert_contains "$VOUT" "torn" "the torn line is reported as such"

	# The original still verifies, and exports without a word.
	cp "$T/orig" "$LOG"
	verify "$LOG"
	assert_eq 0 "$VRC" "the untouched log: $VOUT"
	"$AIRLOCK" audit export "$LOG" --format jsonl >"$T/x.out" 2>"$T/x.err"
	assert_eq 0 "$?" "export of the intact log"
	assert_eq "" "$(cat "$T/x.err")" "export of the intact log warns of nothing"
	# Unsealed (a session still running) is noted, not refused.
	head -n $((n - 2)) "$T/orig" >"$LOG"
	"$AIRLOCK" audit export "$LOG" --format jsonl >"$T/x.out" 2>"$T/x.err"
	assert_eq 0 "$?" "export of an unsealed log"
	assert_contains "$(cat "$T/x.err")" "not sealed" "export of an unsealed log notes it"
}

test_audit_supervisor_killed_leaves_an_unsealed_intact_log() {
	mkdir -p "$T/audit"
	# The host watches the workspace while the command runs: direct mode
	# (hold mode lands the agent's files only at exit).
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	(cd "$WS" && HOME="$E2E_HOME" exec "$AIRLOCK" run --policy "$T/direct.yaml" --audit "$T/audit" -- \
		/bin/sh -c ': >started; sleep 30') >/dev/null 2>&1 </dev/null &
	local apid=$! wpid
	wait_for 20 test -e "$WS/started" || fail "the command did not start"
	wpid=$(pgrep -P "$apid" -f airlock-audit-writer) || fail "no audit writer under the supervisor"
	kill -KILL "$apid"
	wait "$apid" 2>/dev/null
	# The writer outlives the supervisor until it has written what it had:
	# read the log once it is gone, not at a guessed moment.
	wait_for 20 e2e_gone "$wpid" || fail "the audit writer did not end after the supervisor died"
	local log
	log=$(ls "$T"/audit/*.jsonl)
	verify "$log"
	assert_eq 1 "$VRC" "verify after the supervisor was killed: $VOUT"
	assert_contains "$VOUT" "unsealed" "the session is reported unsealed"
	assert_not_contains "$VOUT" "tamper" "and not as tampered"
}

test_audit_writer_death_ends_the_run() {
	mkdir -p "$T/audit"
	# The host watches the workspace while the command runs: direct mode
	# (hold mode lands the agent's files only at exit).
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	(cd "$WS" && HOME="$E2E_HOME" exec "$AIRLOCK" run --policy "$T/direct.yaml" --audit "$T/audit" -- \
		/bin/sh -c ': >started; sleep 30; echo survived') >"$T/d.out" 2>"$T/d.err" </dev/null &
	local apid=$! i rc
	wait_for 20 test -e "$WS/started" || fail "the command did not start"
	for i in $(seq 100); do
		pkill -KILL -P "$apid" -f airlock-audit-writer 2>/dev/null && break
		sleep 0.1
	done
	wait "$apid"
	rc=$?
	assert_not_contains "$(cat "$T/d.out")" "survived" "the command outlived the audit writer"
	assert_eq 125 "$rc" "exit status after the audit writer died"
	assert_contains "$(cat "$T/d.err")" "audit writer stopped" "the message says why"
}

# A run that goes quiet costs the host nothing: the writer sleeps until an
# event comes. It used to wait "until the next checkpoint is due" even
# with nothing to checkpoint, and from the second quiet stretch on that
# was a poll with no timeout in a loop: a core taken from the agent for the
# rest of the run (a build took 1.65 times as long with the log as
# without). The writer's CPU time over 13 quiet seconds is read from
# /proc: a busy loop spends seconds there, a sleeping writer hundredths.
# The neighbours: an event after the quiet stretch is still written, and a
# checkpoint still comes five seconds after records that need one.
# The command starts while the writer may still be starting; what holds it
# is its first exec, a noted call the supervisor answers only once the
# writer has answered. An agent that races its first exfiltration (a
# request through the proxy, a refused write) against the writer's start
# gets nothing through before the writer can take the record. The writer
# is held at its start here: its authority key is a FIFO nobody writes
# yet, so the test, not the scheduler, says when it is ready.

# held_writer_run CMD: airlock run in the background, the proxy's policy
# in direct mode (start_servers first), its writer held at its key. Waits
# until the command is at its first exec. Sets APID.
held_writer_run() {
	write_client
	NET_FS='sandbox: {workspace_mode: direct}' net_policy >"$T/policy.yaml"
	mkdir -p "$T/held/airlock"
	mkfifo -m 600 "$T/held/airlock/authority.key"
	(cd "$WS" && HOME="$E2E_HOME" XDG_STATE_HOME="$T/held" exec "$AIRLOCK" run --policy "$T/policy.yaml" -- \
		/bin/sh -c "$1") >"$T/h.out" 2>"$T/h.err" </dev/null &
	APID=$!
	bg_register "$APID"
	wait_for 20 command_at_exec "$APID" ||
		fail "the command did not wait at its first exec for the writer: $(cat "$T/h.err")"
}

# The sandbox's init has forked the command, which has not exec'd yet: both
# still carry init's name.
command_at_exec() { # SUPERVISOR-PID
	local init
	init=$(pgrep -P "$1" -x airlock-init) && pgrep -P "$init" -x airlock-init >/dev/null
}

test_audit_writer_still_starting_holds_the_first_decision() {
	openssl genpkey -algorithm ed25519 -out "$T/key.pem" 2>/dev/null || fail "openssl genpkey"
	start_servers
	held_writer_run ": >started; python3 ./fetch.py GET http://api.test:$HP/public/a; touch /usr/airlock-e2e-early 2>/dev/null; : >done"
	sleep 1
	command_at_exec "$APID" || fail "the command went past its first exec before the writer was ready"
	assert_no_file "$WS/started" "the command ran before the writer was ready"
	[ -z "$(ls "$T"/held/airlock/audit/ 2>/dev/null)" ] || fail "a log exists before the writer read its key"
	# The writer gets its key: the log opens, and the command runs.
	cat "$T/key.pem" >"$T/held/airlock/authority.key"
	wait "$APID"
	local rc=$? log
	assert_eq 0 "$rc" "the run once the writer was ready: $(cat "$T/h.err")"
	assert_file "$WS/done" "the command ran to its end"
	assert_contains "$(cat "$T/h.out")" "200" "its first request was answered"
	log=$(ls "$T"/held/airlock/audit/*.jsonl) || fail "no log"
	verify "$log"
	assert_eq 0 "$VRC" "the log verifies: $VOUT"
	# The first decisions are in the log: the request and the refused write.
	assert_contains "$(cat "$log")" '/public/a' "the first request is recorded"
	assert_contains "$(cat "$log")" 'airlock-e2e-early' "the first refused write is recorded"
}

test_audit_writer_that_cannot_start_lets_nothing_through() {
	start_servers
	held_writer_run ": >started; python3 ./fetch.py GET http://api.test:$HP/public/a; : >done"
	assert_no_file "$WS/started" "the command ran before the writer was ready"
	# The writer reads a key that is none: it refuses to start.
	printf 'not a key\n' >"$T/held/airlock/authority.key"
	wait "$APID"
	local rc=$?
	assert_eq 125 "$rc" "exit status when the writer cannot start"
	assert_contains "$(cat "$T/h.err")" "the audit writer did not start" "the message says why"
	assert_contains "$(cat "$T/h.err")" "not an Ed25519 private key" "and what the writer found"
	assert_no_file "$WS/started" "the command ran although the writer never started"
	assert_no_file "$WS/done" "the command ran although the writer never started"
	assert_not_contains "$(cat "$T/h.out")" "200" "a request went through although the writer never started"
}

test_audit_writer_sleeps_through_a_quiet_run() {
	mkdir -p "$T/audit"
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	(cd "$WS" && HOME="$E2E_HOME" exec "$AIRLOCK" run --policy "$T/direct.yaml" --audit "$T/audit" -- \
		/bin/sh -c ': >started; sleep 13; touch /usr/airlock-e2e-late 2>/dev/null; : >done') \
		>"$T/q.out" 2>"$T/q.err" </dev/null &
	local apid=$! writer ticks hz
	wait_for 20 test -e "$WS/started" || fail "the command did not start"
	writer=$(pgrep -P "$apid" -f airlock-audit-writer) || fail "no audit writer under $apid"
	sleep 12
	hz=$(getconf CLK_TCK)
	ticks=$(awk '{print $14 + $15}' "/proc/$writer/stat") || fail "the writer's /proc/PID/stat"
	wait "$apid" || fail "the run: $(cat "$T/q.err")"
	[ "$ticks" -lt "$hz" ] || fail "the audit writer used $ticks ticks ($hz a second) of CPU in 12 quiet seconds"
	local log
	log=$(ls "$T"/audit/*.jsonl) || fail "no log"
	"$AIRLOCK" audit verify "$log" >"$T/v.out" 2>&1 || fail "the log: $(cat "$T/v.out")"
	assert_contains "$(cat "$log")" "/usr/airlock-e2e-late" "the refusal after the quiet stretch"
	# session_start and policy_loaded at the start: a checkpoint at five
	# seconds, then the seal.
	[ "$(grep -c '"kind":"checkpoint"' "$log")" -ge 1 ] || fail "no timed checkpoint: $(cat "$log")"
}

# The writer confines itself once its log is open (audit/writer.c,
# confine): no new privileges, Landlock (which /proc does not show) and a
# seccomp allow-list that kills it for any other call. The neighbours:
# what it does after that (the command's records, the seal, the log's
# fsync) all still works, and the log verifies. A sanitized build's
# writer goes without the allow-list (its runtime's calls are not ours).
test_audit_writer_confines_itself() {
	mkdir -p "$T/audit"
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	(cd "$WS" && HOME="$E2E_HOME" exec "$AIRLOCK" run --policy "$T/direct.yaml" --audit "$T/audit" -- \
		/bin/sh -c ': >started; while [ ! -e release ]; do sleep 0.1; done; touch /usr/airlock-e2e-late 2>/dev/null; : >done') \
		>"$T/c.out" 2>"$T/c.err" </dev/null &
	local apid=$! writer status log
	wait_for 20 test -e "$WS/started" || fail "the command did not start"
	writer=$(pgrep -P "$apid" -f airlock-audit-writer) || fail "no audit writer under $apid"
	status=$(cat "/proc/$writer/status")
	touch "$WS/release"
	wait "$apid" || fail "the run: $(cat "$T/c.err")"
	assert_match "$status" '^NoNewPrivs:[[:space:]]+1$' "the writer set no_new_privs"
	[ -n "${ASAN_OPTIONS:-}" ] ||
		assert_match "$status" '^Seccomp:[[:space:]]+2$' "the writer runs under a seccomp filter"
	assert_file "$WS/done" "the command ran to its end"
	log=$(ls "$T"/audit/*.jsonl) || fail "no log"
	verify "$log"
	assert_eq 0 "$VRC" "the confined writer's log verifies, sealed: $VOUT"
	assert_contains "$(cat "$log")" "/usr/airlock-e2e-late" "the refusal after confinement is recorded"
	assert_contains "$(cat "$log")" '"kind":"seal"' "and the seal"
}

test_audit_from_the_policy_with_the_agents_name() {
	printf 'version: 1\nidentity: {agent: "nightly-refactor-bot"}\naudit: {dir: %s}\n' "$T/plog" >"$T/p.yaml"
	al --policy "$T/p.yaml" -- /bin/true
	assert_rc 0 "a run whose policy asks for the audit log"
	local log
	log=$(ls "$T"/plog/*.jsonl 2>/dev/null)
	[ -f "$log" ] || fail "no log in the policy's audit.dir"
	assert_contains "$(head -n1 "$log")" '"agent":"nightly-refactor-bot"' "the agent's name is in the certificate"
	verify "$log"
	assert_eq 0 "$VRC" "verify: $VOUT"
	assert_contains "$VOUT" "agent nightly-refactor-bot" "verify names the agent"
}

test_audit_on_by_default_in_the_state_directory() {
	al -- /bin/sh -c ': >ran'
	assert_rc 0 "a run with neither --audit nor audit.dir"
	local dir="$XDG_STATE_HOME/airlock/audit" log
	log=$(ls "$dir"/*.jsonl 2>/dev/null)
	[ -f "$log" ] || fail "no log in $dir$(e2e_last_run)"
	assert_eq 700 "$(stat -c %a "$dir")" "the default directory's mode"
	verify "$log"
	assert_eq 0 "$VRC" "verify the default log: $VOUT"
	assert_contains "$VOUT" "intact and sealed" "verify says so"

	# Without XDG_STATE_HOME: under HOME's .local/state.
	local home="$T/home"
	mkdir -p "$home"
	(cd "$WS" && env -u XDG_STATE_HOME HOME="$home" "$AIRLOCK" run -- /bin/true) </dev/null >/dev/null 2>&1
	assert_eq 0 "$?" "a run with HOME and no XDG_STATE_HOME"
	log=$(ls "$home"/.local/state/airlock/audit/*.jsonl 2>/dev/null)
	[ -f "$log" ] || fail "no log under \$HOME/.local/state/airlock/audit"
	verify "$log"
	assert_eq 0 "$VRC" "verify the HOME log: $VOUT"
}

test_audit_turned_off_by_flag_and_policy() {
	local dir="$XDG_STATE_HOME/airlock/audit"
	al --no-audit -- /bin/sh -c ': >ran1'
	assert_rc 0 "a run with --no-audit"
	assert_file "$WS/ran1" "the command ran"
	assert_no_file "$dir" "--no-audit writes no log"

	printf 'version: 1\naudit:\n  enabled: false\n' >"$T/off.yaml"
	al --policy "$T/off.yaml" -- /bin/sh -c ': >ran2'
	assert_rc 0 "a run whose policy says audit.enabled: false"
	assert_file "$WS/ran2" "the command ran"
	assert_no_file "$dir" "audit.enabled: false writes no log"
	assert_contains "$("$AIRLOCK" policy check "$T/off.yaml")" "enabled: false" "policy check shows the setting"
	assert_contains "$("$AIRLOCK" policy default)" "enabled: true" "the default policy shows the log on"

	# The neighbour: --audit DIR on the command line still wins over the
	# policy, and the two flags together are a usage error.
	al --policy "$T/off.yaml" --audit "$T/explicit" -- /bin/true
	assert_rc 0 "--audit DIR with audit.enabled: false"
	[ -f "$(ls "$T"/explicit/*.jsonl 2>/dev/null)" ] || fail "--audit DIR wrote no log$(e2e_last_run)"
	al --no-audit --audit "$T/explicit" -- /bin/sh -c ': >ran3'
	assert_rc 2 "--no-audit with --audit DIR"
	assert_no_file "$WS/ran3" "the contradictory command line ran nothing"

	printf 'version: 1\naudit:\n  enabled: false\n  dir: /var/log/x\n' >"$T/both.yaml"
	al --policy "$T/both.yaml" -- /bin/true
	assert_rc 2 "audit.dir with audit.enabled: false"
	assert_contains "$ERR" "both.yaml:4" "the error names file and line"

	# The policy names where the log goes; --no-audit contradicts it like
	# audit.enabled: false does: a usage error naming the field, not a
	# sandbox that failed to build.
	printf 'version: 1\naudit:\n  dir: %s\n' "$T/pol-audit" >"$T/dir.yaml"
	al --policy "$T/dir.yaml" --no-audit -- /bin/sh -c ': >ran4'
	assert_rc 2 "--no-audit with audit.dir"
	assert_contains "$ERR" "dir.yaml:3:8: audit.dir" "the error names file, line and field"
	assert_contains "$ERR" "--no-audit" "and the flag"
	assert_no_file "$WS/ran4" "the contradictory run ran nothing"
	al --policy "$T/dir.yaml" -- /bin/sh -c ': >ran5'
	assert_rc 0 "the neighbour: audit.dir alone"
	[ -f "$(ls "$T"/pol-audit/*.jsonl 2>/dev/null)" ] || fail "audit.dir wrote no log$(e2e_last_run)"
}

test_audit_default_directory_unusable_fails_closed() {
	# A state directory that cannot hold the log: a file where its audit
	# directory must go (the authority key beside it is fine).
	mkdir -p "$T/st/airlock"
	: >"$T/st/airlock/audit"
	XDG_STATE_HOME="$T/st" al -- /bin/sh -c ': >ran'
	assert_rc 125 "a run whose default log directory is not a directory"
	assert_no_file "$WS/ran" "the command did not run without its log"
	assert_contains "$ERR" "default directory $T/st/airlock/audit" "the error names the path"
	assert_contains "$ERR" "--audit DIR" "and how to choose another"
	assert_contains "$ERR" "--no-audit" "and how to turn the log off"
	# One that cannot be made at all.
	: >"$T/blocker"
	XDG_STATE_HOME="$T/blocker/state" al -- /bin/sh -c ': >ran'
	assert_rc 125 "a run whose default log directory cannot be made"
	assert_no_file "$WS/ran" "the command did not run without its log"
	assert_contains "$ERR" "$T/blocker/state/airlock/audit" "the error names the path"

	# The neighbours: the same runs turned off, or pointed elsewhere, run.
	XDG_STATE_HOME="$T/blocker/state" al --no-audit -- /bin/sh -c ': >ran'
	assert_rc 0 "the same run with --no-audit"
	assert_file "$WS/ran" "the command ran"
	XDG_STATE_HOME="$T/st" al --audit "$T/elsewhere" -- /bin/true
	assert_rc 0 "the same run with --audit DIR"
	[ -f "$(ls "$T"/elsewhere/*.jsonl 2>/dev/null)" ] || fail "--audit DIR wrote no log$(e2e_last_run)"
}

test_audit_setup_failure_is_sealed_in_the_log() {
	# The writer starts before the sandbox is planned: a run refused at
	# planning (a workspace that does not exist) still ends its log with
	# the failure, sealed.
	printf 'version: 1\nsandbox:\n  workspace: %s\n' "$T/no-such-ws" >"$T/p.yaml"
	al --policy "$T/p.yaml" -- /bin/true
	assert_rc 125 "a run whose workspace does not exist"
	local log
	log=$(ls "$XDG_STATE_HOME"/airlock/audit/*.jsonl 2>/dev/null)
	[ -f "$log" ] || fail "no log for the failed run$(e2e_last_run)"
	verify "$log"
	assert_eq 0 "$VRC" "the failed run's log verifies: $VOUT"
	assert_contains "$(cat "$log")" '"exit_status":125' "the log records the failure"
	# The neighbour: the same policy with a workspace that exists runs.
	mkdir "$T/no-such-ws"
	al --policy "$T/p.yaml" -- /bin/true
	assert_rc 0 "the same policy once the workspace exists"
}

# A log kept where the agent may write (audit.dir, network.log in the
# workspace) is hidden from the agent: it cannot delete, rewrite or add
# to the record of what it did. The rest of the workspace stays its own.
test_audit_log_in_the_workspace_out_of_the_agents_reach() {
	mkdir -p "$WS/logs" "$WS/logs/net"
	printf 'mine\n' >"$WS/notes.txt"
	printf 'version: 1\naudit:\n  dir: %s/logs\nnetwork:\n  log: %s/logs/net/net.jsonl\n' "$WS" "$WS" >"$T/policy.yaml"
	: >"$WS/logs/net/net.jsonl"
	# A log of an earlier run, there before this one.
	al --policy "$T/policy.yaml" -- /bin/true
	assert_rc 0 "a first run: $ERR"
	local first
	first=$(ls "$WS"/logs/*.jsonl)
	al --policy "$T/policy.yaml" -- /bin/sh -c '
		rm -rf logs 2>/dev/null; rm -f logs/*.jsonl 2>/dev/null
		ls logs/*.jsonl 2>/dev/null && echo SEEN
		echo forged >>logs/net/net.jsonl 2>/dev/null && echo APPENDED
		echo "{}" >logs/forged.jsonl 2>/dev/null && echo FORGED
		rm notes.txt && echo NOTES-GONE'
	assert_not_contains "$OUT" "SEEN" "the earlier log is out of sight"
	assert_not_contains "$OUT" "APPENDED" "network.log cannot be written"
	assert_not_contains "$OUT" "FORGED" "no log can be added"
	assert_contains "$OUT" "NOTES-GONE" "the rest of the workspace is the agent's"
	assert_file "$first" "the earlier log is still there"
	verify "$first"
	assert_eq 0 "$VRC" "and verifies: $VOUT"
	assert_no_file "$WS/logs/forged.jsonl" "nothing was added"
	assert_not_contains "$(cat "$WS/logs/net/net.jsonl")" "forged" "network.log unchanged by the agent"
	assert_eq 2 "$(ls "$WS"/logs/*.jsonl | wc -l)" "both runs' logs are there"
}

# `audit show`, the CSV export and --trace-denials say what was decided,
# one line per record: the file and the program that asked for it, the
# request a network denial refused. The agent names the program, the path
# and the request: in CSV nothing of theirs may start a row of its own or
# a spreadsheet formula, and on the terminal nothing may draw.
test_audit_show_and_csv_one_readable_line_per_record() {
	start_servers
	write_client
	net_policy >"$T/policy.yaml"
	mkdir -p "$T/audit"
	cp /bin/touch "$WS/=HYPERLINK(1),\"x"
	al --trace-denials --policy "$T/policy.yaml" --audit "$T/audit" -- /bin/sh -c "
		python3 ./fetch.py GET http://api.test:$HP/public/a
		python3 ./fetch.py GET http://api.test:$HP/private/b
		python3 ./fetch.py -2+3 http://api.test:$HP/public/c
		./=HYPERLINK\\(1\\),\\\"x '/usr/airlock-e2e,\"q
@SUM(9)' 2>/dev/null; true"
	LOG=$(ls "$T"/audit/*.jsonl)
	[ -f "$LOG" ] || fail "no audit log was written$(e2e_last_run)"
	local shown
	shown=$("$AIRLOCK" audit show "$LOG")
	assert_eq "$(wc -l <"$LOG")" "$(($(printf '%s\n' "$shown" | wc -l) - 1))" "one line per record (and a header): $shown"
	assert_match "$shown" "deny +file_denied +[a-z]+ /usr/airlock-e2e,\"q\\?@SUM\\(9\\) by =HYPERLINK" \
		"a file record names the access, the path and the program: $shown"
	assert_match "$shown" "deny +http +GET api.test:$HP/private/b " "a network denial names method, host and path: $shown"
	assert_match "$shown" "deny +http +-2\\+3 api.test:$HP/public/c " "and the method as the agent sent it"
	# --trace-denials: the network denial as a line, not the proxy's JSON.
	assert_match "$ERR" "airlock: denied: http GET api.test:$HP/private/b: .*\\[" "--trace-denials names the request: $ERR"
	assert_not_contains "$ERR" '{"time"' "--trace-denials prints no raw record"
	! printf '%s\n' "$ERR" | grep -q '^@SUM' || fail "a newline in a path started a line of the report: $ERR"

	# CSV, read back by a CSV reader: one row per record, every field
	# where it belongs, none a formula.
	"$AIRLOCK" audit export "$LOG" --format csv >"$T/log.csv" || fail "export --format csv"
	python3 - "$T/log.csv" "$(wc -l <"$LOG")" "$HP" <<'PY' || fail "CSV: $(cat "$T/log.csv")"
import csv, sys
path, records, port = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(path, newline="").read()
rows = list(csv.reader(text.splitlines(True)))
head, rows = rows[0], rows[1:]
assert len(text.splitlines()) == records + 1, "one physical line per record"
assert len(rows) == records, (len(rows), records)
assert all(len(r) == len(head) for r in rows), "every row has every column"
col = {n: i for i, n in enumerate(head)}
for r in rows:
    for v in r:
        assert v[:1] not in ("=", "+", "-", "@", "\t", "\r"), ("formula", v)
f = [r for r in rows if r[col["kind"]] == "file_denied" and "airlock-e2e" in r[col["path"]]]
assert f, "the file record"
f = f[0]
assert f[col["path"]] == '/usr/airlock-e2e,"q?@SUM(9)', f[col["path"]]
assert f[col["program"]].startswith("'=HYPERLINK(1)"), f[col["program"]]  # comm: 15 bytes
assert f[col["access"]], "the access asked"
h = [r for r in rows if r[col["path"]] == "/private/b"][0]
assert (h[col["decision"]], h[col["method"]], h[col["host"]], h[col["port"]]) == ("deny", "GET", "api.test", port), h
assert h[col["reason"]] and h[col["rule"]] is not None
m = [r for r in rows if r[col["path"]] == "/public/c"][0]
assert m[col["method"]] == "'-2+3", m[col["method"]]
PY
}
