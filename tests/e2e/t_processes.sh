# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The processes of a session, read from /proc while it runs: each helper
# that parses what the agent sends is at least as contained as the agent
# (its own seccomp filter, no_new_privs, no capability, a uid other than
# root's), and holds none of the user's secrets in its environment.

# A session with network rules, so that airlock-proxy runs: an HTTP
# endpoint and an intercepted HTTPS one on the loopback servers.
proc_policy() {
	cat <<YAML
version: 1
sandbox:
  workspace_mode: direct # the host watches the workspace during the run
network:
  log: $T/net.jsonl
  upstream_ca: $T/srv/ca.pem
  resolve: { api.test: 127.0.0.1, secure.test: 127.0.0.1 }
  allow_private: [127.0.0.1:$HP, 127.0.0.1:$SP]
  endpoints:
    - host: api.test
      id: api
      ports: [$HP]
      rules:
        - { id: api-read, methods: [GET], path: "/public/**" }
        - { id: api-post, methods: [POST], path: /upload }
    - host: secure.test
      id: secure
      ports: [$SP]
      tls: intercept
      rules:
        - { id: secure-get, methods: [GET], path: "/ok/*" }
YAML
}

# The agent: sends the secret it found in the workspace (the leak scanner
# must refuse it), then requests the policy allows, over HTTP and through
# the intercepted TLS; prints "NAME STATUS" for each, says "ready" in the
# workspace and waits there for "go", so that the session runs while the
# test reads /proc.
write_agent() {
	cat >"$WS/agent.py" <<'PY'
import os, sys, time, urllib.request, urllib.error
hp, sp = sys.argv[1], sys.argv[2]
tok = open("found.txt").read()

def go(name, method, url, data=None):
    req = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    except Exception as e:
        status = "ERROR %s %s" % (type(e).__name__, e)
    print(name, status, flush=True)

go("secret", "POST", "http://api.test:%s/upload" % hp, tok.encode())
go("plain", "POST", "http://api.test:%s/upload" % hp, b"harmless")
go("read", "GET", "http://api.test:%s/public/x" % hp)
go("tls", "GET", "https://secure.test:%s/ok/x" % sp)
open("ready", "w").close()
for _ in range(1200):
    if os.path.exists("go"):
        break
    time.sleep(0.1)
PY
}

# start_session SECRET: the agent in a session whose airlock holds SECRET
# in a secret-looking variable; waits until the agent is ready. Sets APID.
start_session() {
	start_servers
	write_agent
	proc_policy >"$T/policy.yaml"
	printf '%s' "$1" >"$WS/found.txt"
	(cd "$WS" && DEPLOY_TOKEN="$1" HOME="$E2E_HOME" exec timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run \
		--policy "$T/policy.yaml" -- /usr/bin/python3 ./agent.py "$HP" "$SP") \
		>"$T/session.out" 2>"$T/session.err" </dev/null &
	APID=$!
	bg_register "$APID"
	LAST_CMD="airlock run --policy $T/policy.yaml -- python3 agent.py (DEPLOY_TOKEN set)"
	wait_for 60 test -e "$WS/ready" || {
		OUT=$(cat "$T/session.out") ERR=$(cat "$T/session.err")
		fail "the agent did not get ready$(e2e_last_run)"
	}
}

# end_session: let the agent finish; sets OUT, ERR and RC.
end_session() {
	touch "$WS/go"
	wait "$APID"
	RC=$?
	OUT=$(cat "$T/session.out")
	ERR=$(cat "$T/session.err")
}

# helper_pid NAME: the session's process NAME (airlock-proxy,
# airlock-audit-writer), a descendant of APID (airlock run's child).
helper_pid() {
	local p q
	for p in $(pgrep -x "${1:0:15}"); do # comm holds 15 bytes
		q=$p
		while [ -n "$q" ] && [ "$q" -gt 1 ]; do
			q=$(sed -n 's/^.*) [A-Za-z] \([0-9]*\) .*/\1/p' "/proc/$q/stat" 2>/dev/null)
			if [ "$q" = "$APID" ]; then
				echo "$p"
				return 0
			fi
		done
	done
	return 0
}
proxy_pid() { helper_pid airlock-proxy; }

# status_field FILE FIELD: a field of a /proc status file.
status_field() { awk -v f="$2:" '$1 == f { print $2 }' "$1"; }

# assert_ids_not_root STATUS WHO: none of the real, effective, saved and
# file-system uids and gids in /proc status file STATUS is root's, and no
# supplementary group is left.
assert_ids_not_root() {
	local ids
	ids=$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "$1")
	assert_no_match "$ids" '(^| )0( |$)' "$2's uids ($ids)"
	ids=$(awk '$1 == "Gid:" { print $2, $3, $4, $5 }' "$1")
	assert_no_match "$ids" '(^| )0( |$)' "$2's gids ($ids)"
	assert_eq "" "$(status_field "$1" Groups)" "$2's supplementary groups"
}

test_processes_proxy_is_contained_and_holds_no_secret_in_its_environment() {
	local tok="proc-s3cr3t-$RANDOM$RANDOM-value" pid st env
	start_session "$tok"
	pid=$(proxy_pid)
	[ -n "$pid" ] || fail "no airlock-proxy under airlock run $APID: $(cat "$T/session.out" "$T/session.err")"
	st=/proc/$pid/status
	assert_eq 2 "$(status_field "$st" Seccomp)" "the proxy runs under a seccomp filter (Seccomp: 2)"
	assert_eq 1 "$(status_field "$st" NoNewPrivs)" "the proxy has no_new_privs"
	assert_eq 0000000000000000 "$(status_field "$st" CapEff)" "the proxy holds no capability"
	if e2e_is_root; then
		# Started by root, it serves as the sandbox's host uid and gid,
		# never as root: real, effective, saved and file-system ids
		# alike, with no supplementary group.
		assert_ids_not_root "$st" "the proxy"
		# Its environment: root may read it (an unprivileged proxy is not
		# dumpable, and its environment is then the user's to read only
		# through it). The value is nowhere in it.
		env=$(tr '\0' '\n' <"/proc/$pid/environ") || fail "cannot read /proc/$pid/environ"
		assert_contains "$env" "HOME=" "the proxy's environment was read"
		assert_not_contains "$env" "$tok" "the secret in the proxy's environment"
		assert_not_contains "$env" "DEPLOY_TOKEN" "the secret's variable in the proxy's environment"
	else
		assert_eq "$(id -u)" "$(awk '$1 == "Uid:" { print $3 }' "$st")" "an unprivileged proxy keeps the user's uid"
	fi
	end_session
	assert_eq 0 "$RC" "the session$(e2e_last_run)"
	# The neighbours: the leak scanner still knows the secret, which now
	# reaches it over the control socket, and what the policy allows
	# still passes, TLS interception included.
	assert_contains "$OUT" "secret 403" "a request carrying airlock's secret is refused"
	assert_contains "$OUT" "plain 200" "the same request without it passes"
	assert_contains "$OUT" "read 200" "an allowed GET passes"
	assert_contains "$OUT" "tls 200" "an allowed GET through the intercepted TLS passes"
	assert_not_contains "$(cat "$T/net.jsonl")" "$tok" "the log never holds the secret"
}

# The audit writer parses what the proxy recorded of the agent's requests
# and signs with the session key: it gets none of the user's environment,
# where /proc/PID/environ would show a secret to whatever runs as its uid.
test_processes_writer_holds_no_secret_in_its_environment() {
	local tok="proc-w-s3cr3t-$RANDOM$RANDOM" pid env log
	start_session "$tok"
	pid=$(helper_pid airlock-audit-writer)
	[ -n "$pid" ] || fail "no airlock-audit-writer under airlock run $APID: $(cat "$T/session.err")"
	env=$(tr '\0' '\n' <"/proc/$pid/environ") || fail "cannot read /proc/$pid/environ"
	assert_not_contains "$env" "$tok" "the secret in the writer's environment"
	assert_not_contains "$env" "DEPLOY_TOKEN" "the secret's variable in the writer's environment"
	assert_not_contains "$env" "HOME=" "the user's variables in the writer's environment"
	end_session
	assert_eq 0 "$RC" "the session$(e2e_last_run)"
	# The neighbour: the writer still keeps and seals the session's log.
	log=$(ls -t "$XDG_STATE_HOME"/airlock/audit/*.jsonl 2>/dev/null | head -n 1)
	[ -f "$log" ] || fail "no log under $XDG_STATE_HOME/airlock/audit"
	"$AIRLOCK" audit verify "$log" >"$T/v.out" 2>&1 || fail "the session's log: $(cat "$T/v.out")"
	assert_contains "$(cat "$log")" "api-read" "the log holds the allowed request's rule"
}

test_processes_every_proxy_thread_is_filtered() {
	local pid task n=0 filters
	start_session "proc-other-$RANDOM$RANDOM-value"
	pid=$(proxy_pid)
	[ -n "$pid" ] || fail "no airlock-proxy under airlock run $APID: $(cat "$T/session.out" "$T/session.err")"
	# Each thread's own status: the filter covers the workers and the
	# resolver's threads as well as the main one. Seccomp_filters (Linux
	# 5.9+) counts the filters stacked on it: at least the proxy's own.
	# The kernel shows no task's Landlock domain in /proc; the unit tests
	# (test_proxy_contain) run the proxy's domain and filter and try what
	# they refuse.
	for task in /proc/"$pid"/task/*; do
		[ -r "$task/status" ] || continue
		n=$((n + 1))
		assert_eq 2 "$(status_field "$task/status" Seccomp)" "thread $(basename "$task") runs under the filter"
		assert_eq 1 "$(status_field "$task/status" NoNewPrivs)" "thread $(basename "$task") has no_new_privs"
		filters=$(status_field "$task/status" Seccomp_filters)
		if [ -n "$filters" ]; then
			[ "$filters" -ge 1 ] || fail "thread $(basename "$task"): Seccomp_filters $filters"
		fi
	done
	[ "$n" -ge 2 ] || fail "the proxy shows $n threads; its workers were expected"
	end_session
	assert_eq 0 "$RC" "the session$(e2e_last_run)"
	assert_contains "$OUT" "read 200" "the contained proxy still serves an allowed request"
}

# A session with one MCP server (cat: it answers each message with the
# message itself). The agent opens `airlock mcp connect echo`, sends a
# ping, and once the answer is back says "ready" and holds the connection
# open until "go", so that the gateway runs while the test reads /proc;
# then it connects once more and prints what that second connection was
# told ("second: ..."). Sets APID.
start_mcp_session() {
	cat >"$T/mcp-policy.yaml" <<YAML
version: 1
sandbox:
  workspace_mode: direct # the host watches the workspace during the run
mcp:
  servers:
    echo:
      command: [/bin/cat]
YAML
	cat >"$WS/mcp-agent.sh" <<'SH'
{ printf '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'; for _ in $(seq 1200); do [ -e go ] && break; sleep 0.1; done; } |
	/run/airlock/airlock mcp connect echo >mcp.out 2>mcp.err &
c=$!
for _ in $(seq 600); do grep -q ping mcp.out 2>/dev/null && break; sleep 0.1; done
touch ready
wait "$c"
echo "first: rc=$?"
printf '{"jsonrpc":"2.0","id":2,"method":"ping"}\n' | /run/airlock/airlock mcp connect echo >mcp2.out 2>mcp2.err
echo "second: rc=$? $(cat mcp2.out mcp2.err)"
SH
	(cd "$WS" && DEPLOY_TOKEN="$1" HOME="$E2E_HOME" exec timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" run \
		--policy "$T/mcp-policy.yaml" -- /bin/bash ./mcp-agent.sh) \
		>"$T/session.out" 2>"$T/session.err" </dev/null &
	APID=$!
	bg_register "$APID"
	LAST_CMD="airlock run --policy $T/mcp-policy.yaml -- bash mcp-agent.sh (DEPLOY_TOKEN set)"
	wait_for 60 test -e "$WS/ready" || {
		OUT=$(cat "$T/session.out") ERR=$(cat "$T/session.err")
		fail "the agent did not get ready$(e2e_last_run)"
	}
}

# descendant_named PID COMM: the first descendant of PID whose comm is
# COMM (15 bytes at most), if any.
descendant_named() {
	local p
	for p in $(descendants "$1"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ]; then
			echo "$p"
			return 0
		fi
	done
	return 0
}

# gateway_pid: the session's airlock-mcp-gateway, a descendant of APID.
gateway_pid() { descendant_named "$APID" airlock-mcp-gat; }

# assert_gateway_contained PID SECRET: an airlock-mcp-gateway under its
# own filter, with no_new_privs and no capability; as root not root's ids
# and nothing in its environment but the sanitizers' settings;
# unprivileged the user's uid, and not dumpable (its environment
# unreadable to the user).
assert_gateway_contained() {
	local st=/proc/$1/status env
	assert_eq 2 "$(status_field "$st" Seccomp)" "the gateway runs under a seccomp filter (Seccomp: 2)"
	assert_eq 1 "$(status_field "$st" NoNewPrivs)" "the gateway has no_new_privs"
	assert_eq 0000000000000000 "$(status_field "$st" CapEff)" "the gateway holds no capability"
	assert_eq 0000000000000000 "$(status_field "$st" CapPrm)" "the gateway can regain no capability"
	if e2e_is_root; then
		# Started by root, it relays as the sandbox's host uid and gid,
		# never root's, with no supplementary group.
		assert_ids_not_root "$st" "the gateway"
		# Root reads it (the gateway is not dumpable): nothing of the
		# monitor's environment, the secret least of all.
		env=$(tr '\0' '\n' <"/proc/$1/environ") || fail "cannot read /proc/$1/environ"
		assert_not_contains "$env" "$2" "the secret in the gateway's environment"
		assert_not_contains "$env" "DEPLOY_TOKEN" "the secret's variable in the gateway's environment"
		assert_eq "" "$(grep -Ev '^(ASAN|UBSAN|LSAN)_OPTIONS=' <<<"$env")" "the gateway's environment"
	else
		assert_eq "$(id -u)" "$(awk '$1 == "Uid:" { print $3 }' "$st")" "an unprivileged gateway keeps the user's uid"
		if env=$(tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null); then
			assert_not_contains "$env" "$2" "the secret in the gateway's environment"
			fail "the user read the gateway's environment: it is dumpable"
		fi
	fi
}

test_processes_mcp_gateway_is_contained_and_holds_no_secret_in_its_environment() {
	local tok="proc-mcp-s3cr3t-$RANDOM$RANDOM-value" pid st
	start_mcp_session "$tok"
	assert_contains "$(cat "$WS/mcp.out")" '"method":"ping"' "the ping went through the gateway and back"
	pid=$(gateway_pid)
	[ -n "$pid" ] || fail "no airlock-mcp-gateway under airlock run $APID: $(cat "$T/session.out" "$T/session.err")"
	assert_gateway_contained "$pid" "$tok"
	st=/proc/$pid/status
	# The monitor keeps nothing of the environment once the runner and
	# the gateway are started: the secret is not in it, as root (which
	# reads it) or unprivileged (where the user may).
	local menv mst=/proc/$(status_field "$st" PPid)/status
	# Root or not, the monitor serves its gateway under its own seccomp
	# filter and Landlock domain (it writes no file and signals no
	# process: its pins keeper does), not dumpable.
	assert_eq 2 "$(status_field "$mst" Seccomp)" "the connection's monitor runs under a seccomp filter (Seccomp: 2)"
	assert_eq 1 "$(status_field "$mst" NoNewPrivs)" "the connection's monitor has no_new_privs"
	if menv=$(tr '\0' '\n' <"/proc/$(status_field "$st" PPid)/environ" 2>/dev/null) || e2e_is_root; then
		assert_not_contains "$menv" "$tok" "the secret in the connection monitor's environment"
		assert_not_contains "$menv" "DEPLOY_TOKEN" "the secret's variable in the connection monitor's environment"
	fi
	if e2e_is_root; then
		# Its monitor (the gateway's parent) gave root up once it had
		# started the gateway and the server, as the table says: it
		# parses what the gateway sends, and resolves the paths it
		# names, as the server sandbox's uid, not dumpable, with
		# no_new_privs. Root stays with the pins keeper beside it,
		# which holds no fd of the connection's. The runner, the
		# supervisor of the server's sandbox, gave up root as the
		# session's supervisor did.
		local mon runner="" keeper="" c
		mon=$(status_field "$st" PPid)
		assert_ids_not_root "/proc/$mon/status" "the connection's monitor"
		assert_eq 1 "$(status_field "/proc/$mon/status" NoNewPrivs)" "the connection's monitor has no_new_privs"
		assert_eq 0000000000000000 "$(status_field "/proc/$mon/status" CapEff)" "the connection's monitor holds no capability"
		for c in $(descendants "$mon"); do
			[ "$(status_field "/proc/$c/status" PPid)" = "$mon" ] && [ "$c" != "$pid" ] || continue
			if [ "$(cat "/proc/$c/comm")" = airlock-pins ]; then
				keeper=$c
			else
				runner=$c
			fi
		done
		[ -n "$runner" ] || fail "no runner beside the gateway under the monitor $mon"
		[ -n "$keeper" ] || fail "no pins keeper beside the gateway under the monitor $mon"
		assert_eq 0 "$(awk '$1 == "Uid:" { print $3 }' "/proc/$keeper/status")" "the pins keeper is root"
		assert_not_contains "$(tr '\0' '\n' <"/proc/$keeper/environ")" "$tok" "the secret in the pins keeper's environment"
		# Its fds: the standard three (the monitor's /dev/null and
		# stderr), its socket to the monitor, the runner's pidfd and
		# the gateway's.
		assert_eq 6 "$(ls "/proc/$keeper/fd" | wc -l)" "the pins keeper's fds: $(ls -l "/proc/$keeper/fd")"
		assert_ids_not_root "/proc/$runner/status" "the MCP server's supervisor"
		assert_eq 1 "$(status_field "/proc/$runner/status" NoNewPrivs)" "the MCP server's supervisor has no_new_privs"
	fi
	touch "$WS/go"
	wait "$APID"
	RC=$?
	OUT=$(cat "$T/session.out")
	ERR=$(cat "$T/session.err")
	assert_eq 0 "$RC" "the session$(e2e_last_run)"
	assert_contains "$OUT" '"id":2,"method":"ping"' "a second connection is relayed too"
}

# killed_fails_closed WHO MESSAGE: a session's gateway (WHO gateway) or
# its monitor (WHO monitor) killed as its seccomp filter kills (SIGSYS);
# the run ends (125), says MESSAGE, and nothing of a later connection
# reaches a server.
killed_fails_closed() {
	local pid
	start_mcp_session "proc-mcp-$1-$RANDOM$RANDOM-value"
	pid=$(gateway_pid)
	[ -n "$pid" ] || fail "no airlock-mcp-gateway under airlock run $APID: $(cat "$T/session.out" "$T/session.err")"
	[ "$1" = gateway ] || pid=$(status_field "/proc/$pid/status" PPid)
	kill -SYS "$pid"
	wait "$APID"
	RC=$?
	OUT=$(cat "$T/session.out")
	ERR=$(cat "$T/session.err")
	assert_eq 125 "$RC" "the run ends (fail closed)$(e2e_last_run)"
	assert_contains "$ERR" "$2" "and says why"
	assert_not_contains "$OUT" '"id":2' "nothing of a later connection reaches a server"
}

# Fail closed: a gateway killed as its seccomp filter kills (SIGSYS) ends
# the run, as the proxy's death does: a gateway that makes a call it never
# makes was taken over. What the filter kills for is tested in
# tests/unit/test_mcp_gateway_filter.c: nothing short of taking the
# gateway over makes it call one, and production code keeps no switch for
# a test.
test_processes_mcp_gateway_killed_fails_closed() {
	killed_fails_closed gateway "an MCP gateway was killed"
}

# The same for the gateway's monitor: killed as its own filter kills (a
# call its loop never makes: a gateway's message took it over), the run
# ends, and says which.
test_processes_mcp_monitor_killed_fails_closed() {
	killed_fails_closed monitor "an MCP gateway's monitor was killed"
}

# `airlock mcp run` outside a session: a stdio MCP client (here, a fifo
# held open) talks to /bin/cat as the server through the same
# airlock-mcp-gateway, a child of `mcp run`, which then relays while the
# test reads /proc. Sets MPID, and INFD (the client's side of the fifo).
start_mcp_run() {
	cat >"$T/mcp-run.yaml" <<YAML
version: 1
audit:
  dir: "$T/run-audit"
mcp:
  servers:
    echo:
      command: [/bin/cat]
YAML
	mkfifo "$T/run.in"
	(cd "$WS" && DEPLOY_TOKEN="$1" HOME="$E2E_HOME" exec timeout -k 5 "$E2E_TIMEOUT" "$AIRLOCK" mcp run \
		--policy "$T/mcp-run.yaml" --pins "$T/run-pins.json") \
		<"$T/run.in" >"$T/run.out" 2>"$T/run.err" &
	MPID=$!
	bg_register "$MPID"
	exec {INFD}>"$T/run.in"
	LAST_CMD="airlock mcp run --policy $T/mcp-run.yaml -- /bin/cat (DEPLOY_TOKEN set)"
	printf '{"jsonrpc":"2.0","id":1,"method":"ping"}\n' >&"$INFD"
	wait_for 60 grep -q '"method":"ping"' "$T/run.out" || {
		OUT=$(cat "$T/run.out") ERR=$(cat "$T/run.err")
		fail "the ping did not come back through mcp run$(e2e_last_run)"
	}
}

# end_mcp_run: the client's input ends; RC, OUT, ERR of mcp run.
end_mcp_run() {
	exec {INFD}>&-
	wait "$MPID"
	RC=$?
	OUT=$(cat "$T/run.out")
	ERR=$(cat "$T/run.err")
}

# mcp_run_gateway: the airlock-mcp-gateway under MPID.
mcp_run_gateway() { descendant_named "$MPID" airlock-mcp-gat; }

# The client's JSON-RPC is parsed by a contained gateway, not by `mcp run`
# itself, which keeps the user's environment and (as root) root.
test_processes_mcp_run_gateway_is_contained_and_holds_no_secret_in_its_environment() {
	local tok="proc-run-s3cr3t-$RANDOM$RANDOM-value" pid
	start_mcp_run "$tok"
	pid=$(mcp_run_gateway)
	[ -n "$pid" ] || fail "no airlock-mcp-gateway under airlock mcp run $MPID: $(cat "$T/run.err")"
	assert_gateway_contained "$pid" "$tok"
	# Nothing but the gateway reads the client: `mcp run` holds neither
	# its stdin's fifo nor its stdout any more.
	local cli
	cli=$(mcp_run_cli)
	assert_not_contains "$(ls -l /proc/"$cli"/fd/ 2>/dev/null)" "$T/run.in" "mcp run's own fds"
	# Root or not, `mcp run` serves its gateway under the monitor's own
	# seccomp filter and Landlock domain.
	assert_eq 2 "$(status_field "/proc/$cli/status" Seccomp)" "mcp run, serving, runs under a seccomp filter"
	assert_eq 1 "$(status_field "/proc/$cli/status" NoNewPrivs)" "mcp run, serving, has no_new_privs"
	if e2e_is_root; then
		# Started as root, `mcp run` serves its gateway as the server
		# sandbox's uid, as a session's monitor does; root stays with
		# its pins keeper.
		assert_ids_not_root "/proc/$cli/status" "mcp run, serving"
		assert_eq 1 "$(status_field "/proc/$cli/status" NoNewPrivs)" "mcp run, serving, has no_new_privs"
		local c keeper=""
		for c in $(descendants "$cli"); do
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" = airlock-pins ] && keeper=$c
		done
		[ -n "$keeper" ] || fail "no pins keeper under mcp run $cli"
		assert_eq 0 "$(awk '$1 == "Uid:" { print $3 }' "/proc/$keeper/status")" "the pins keeper is root"
		assert_not_contains "$(tr '\0' '\n' <"/proc/$keeper/environ")" "$tok" "the secret in the pins keeper's environment"
		assert_not_contains "$(tr '\0' '\n' <"/proc/$cli/environ")" "$tok" "the secret in mcp run's environment, serving"
	fi
	# A call of a tool the policy does not allow: answered by the gateway
	# with an error, and recorded.
	printf '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm","arguments":{}}}\n' >&"$INFD"
	wait_for 30 grep -q '"id":2' "$T/run.out" || fail "the call was not answered: $(cat "$T/run.err")"
	end_mcp_run
	assert_eq 0 "$RC" "mcp run ends with its client's input$(e2e_last_run)"
	assert_contains "$(grep '"id":2' <<<"$OUT")" '"isError":true' "the denied call is an error result"
	assert_match "$(cat "$T"/run-audit/*.jsonl)" '"tool":"rm".*"decision":"deny".*"kind":"mcp"' \
		"the gateway's decision is in the log"
}

# mcp_run_cli: the airlock process of mcp run (the gateway's parent).
mcp_run_cli() { status_field "/proc/$(mcp_run_gateway)/status" PPid; }

# Fail closed: a gateway killed as its filter kills (a call it never
# makes: taken over) ends `mcp run` with 125, the server with it, and the
# log says so.
test_processes_mcp_run_gateway_killed_fails_closed() {
	local pid
	start_mcp_run "proc-run-other-$RANDOM$RANDOM-value"
	pid=$(mcp_run_gateway)
	[ -n "$pid" ] || fail "no airlock-mcp-gateway under airlock mcp run $MPID: $(cat "$T/run.err")"
	kill -SYS "$pid"
	wait "$MPID"
	RC=$?
	exec {INFD}>&-
	OUT=$(cat "$T/run.out")
	ERR=$(cat "$T/run.err")
	assert_eq 125 "$RC" "mcp run ends (fail closed)$(e2e_last_run)"
	assert_contains "$ERR" "the gateway was killed or broke its protocol" "and says why"
	assert_contains "$(cat "$T"/run-audit/*.jsonl)" '"message":"the gateway was killed by signal 31' "the log says it too"
}

# Started as root, the supervisor gives up root before the agent's first
# request is decided: it becomes the sandbox's uid (which owns the
# sandbox's user namespace, so it still reads notifying callers and
# ptraces), and what needs root after that is asked of airlock-priv, a
# helper that keeps root, takes a closed list of one-byte requests and
# holds none of the loop's channels (tests/unit/test_privsep.c attacks
# its table).
test_processes_supervisor_gives_up_root() {
	local pid st uid helper fds env
	start_session "proc-sup-$RANDOM$RANDOM-value"
	pid=$(helper_pid airlock)
	[ -n "$pid" ] || fail "no supervisor under airlock run $APID"
	st=/proc/$pid/status
	if e2e_is_root; then
		assert_ids_not_root "$st" "the supervisor"
		assert_eq 0000000000000000 "$(status_field "$st" CapEff)" "the supervisor holds no capability"
		assert_eq 0000000000000000 "$(status_field "$st" CapPrm)" "the supervisor can regain no capability"
		assert_eq 1 "$(status_field "$st" NoNewPrivs)" "the supervisor has no_new_privs"
		# A process of the same uid on the host (where a kernel escape
		# from the sandbox would land) cannot read the supervisor; root
		# still can (the neighbour), and finds its environment zeroed:
		# what the loop needed of it went to the proxy and the command
		# before the agent's first request.
		uid=$(status_field "$st" Uid)
		if setpriv --reuid="$uid" --regid="$(status_field "$st" Gid)" --clear-groups \
			cat "/proc/$pid/environ" >"$T/env.out" 2>/dev/null; then
			fail "the sandbox's uid read the supervisor's environment"
		fi
		env=$(tr -d '\0' <"/proc/$pid/environ") || fail "root cannot read /proc/$pid/environ"
		assert_eq "" "$env" "the supervisor's environment"
		helper=$(helper_pid airlock-priv)
		[ -n "$helper" ] || fail "no privileged helper under airlock run $APID"
		assert_eq 0 "$(awk '$1 == "Uid:" { print $3 }' "/proc/$helper/status")" "the helper keeps root"
		# Without MCP servers to start, it keeps no secret either: it
		# zeroed its copy of the environment where the kernel shows it
		# (it keeps HOME and XDG_STATE_HOME, where review's sessions
		# are), at its start.
		env=$(tr -d '\0' <"/proc/$helper/environ") || fail "cannot read /proc/$helper/environ"
		assert_eq "" "$env" "the helper's environment"
		# None of the loop's channels: no seccomp listener, no pty, no
		# pipe from the proxy; besides stdio, its socket, its own
		# signalfd, the sandbox's pidfd and the writer's socket.
		fds=$(ls -l "/proc/$helper/fd" | awk 'NR > 1 { print $NF }')
		assert_not_contains "$fds" "seccomp" "the helper's fds"
		assert_not_contains "$fds" "pipe:" "the helper's fds"
		assert_not_contains "$fds" "/dev/pts" "the helper's fds"
		assert_eq 7 "$(wc -l <<<"$fds")" "the helper's fds: $(tr '\n' ' ' <<<"$fds")"
	else
		assert_eq "$(id -u)" "$(awk '$1 == "Uid:" { print $3 }' "$st")" "an unprivileged supervisor keeps the user's uid"
		if env=$(tr -d '\0' <"/proc/$pid/environ" 2>/dev/null); then
			assert_eq "" "$env" "the supervisor's environment, zeroed"
		fi
		assert_eq "" "$(helper_pid airlock-priv)" "no privileged helper unprivileged"
	fi
	end_session
	assert_eq 0 "$RC" "the session$(e2e_last_run)"
	# The neighbours: what the loop does without root still works.
	assert_contains "$OUT" "secret 403" "a request carrying airlock's secret is refused"
	assert_contains "$OUT" "read 200" "an allowed GET passes"
	assert_contains "$OUT" "tls 200" "an allowed GET through the intercepted TLS passes"
}

# The sandbox's own processes, as the process table says: init and the
# guard (which parses the agent's calls) run as the sandbox's uid with no
# capability and no_new_privs, init under the seccomp filter and the
# guard without one (its calls must not come back to it), and neither
# holds the user's environment: the secret airlock holds is in none of
# them, nor in the command's (the policy's environment, built before).
test_processes_sandbox_init_and_guard_hold_no_secret() {
	local tok="proc-sbx-$RANDOM$RANDOM-value" init guard agent pid st env
	start_session "$tok"
	init=$(descendant_named "$APID" airlock-init)
	guard=$(descendant_named "$APID" airlock-guard)
	agent=$(descendant_named "$APID" python3)
	[ -n "$init" ] && [ -n "$guard" ] && [ -n "$agent" ] ||
		fail "init ($init), the guard ($guard) or the agent ($agent) not found under airlock run $APID"
	for pid in "$init" "$guard"; do
		st=/proc/$pid/status
		if e2e_is_root; then
			assert_ids_not_root "$st" "$(cat "/proc/$pid/comm")"
		else
			assert_eq "$(id -u)" "$(awk '$1 == "Uid:" { print $3 }' "$st")" "$(cat "/proc/$pid/comm") keeps the user's uid"
		fi
		assert_eq 0000000000000000 "$(status_field "$st" CapEff)" "$(cat "/proc/$pid/comm") holds no capability"
		assert_eq 1 "$(status_field "$st" NoNewPrivs)" "$(cat "/proc/$pid/comm") has no_new_privs"
	done
	assert_eq 2 "$(status_field "/proc/$init/status" Seccomp)" "init runs under the seccomp filter"
	assert_eq 0 "$(status_field "/proc/$guard/status" Seccomp)" "the guard runs without one"
	# Root reads them: empty. The user may not: both are not dumpable.
	for pid in "$init" "$guard"; do
		if e2e_is_root; then
			env=$(tr -d '\0' <"/proc/$pid/environ") || fail "cannot read /proc/$pid/environ"
			assert_eq "" "$env" "the environment of $(cat "/proc/$pid/comm")"
		elif env=$(tr -d '\0' <"/proc/$pid/environ" 2>/dev/null); then
			fail "the user read the environment of $(cat "/proc/$pid/comm"): it is dumpable ($env)"
		fi
	done
	env=$(tr '\0' '\n' <"/proc/$agent/environ") || fail "cannot read /proc/$agent/environ"
	assert_contains "$env" "AIRLOCK_SANDBOX=process" "the agent's environment, the policy's (the neighbour)"
	assert_not_contains "$env" "$tok" "the secret in the agent's environment"
	assert_not_contains "$env" "DEPLOY_TOKEN" "the secret's variable in the agent's environment"
	end_session
	assert_eq 0 "$RC" "the session$(e2e_last_run)"
	assert_contains "$OUT" "secret 403" "a request carrying airlock's secret is refused"
	assert_contains "$OUT" "read 200" "an allowed GET passes"
}

# under_subreaper POLICY CMD...: airlock run --no-audit --policy POLICY --
# CMD... from the workspace, as the child of a subreaper that reaps
# nothing; prints "rc=N left=[COMM...]": what was left its child, 0.3 s
# after the run.
under_subreaper() {
	(cd "$WS" && HOME="$E2E_HOME" timeout -k 5 "$E2E_TIMEOUT" python3 - "$AIRLOCK" "$@" <<'PY'
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
rc = subprocess.run([sys.argv[1], "run", "--no-audit", "--policy", sys.argv[2], "--"] + sys.argv[3:]).returncode
time.sleep(0.3)
kids = open("/proc/self/task/%d/children" % os.getpid()).read().split()
names = []
for k in kids:
    try:
        names.append(open("/proc/%s/comm" % k).read().strip())
    except OSError:
        pass
print("rc=%d left=[%s]" % (rc, " ".join(names)))
PY
	)
}

# No process of a run outlives it: the run is started under a subreaper
# that reaps nothing, so a child airlock left behind (the privileged
# helper, a monitor) becomes the subreaper's child, zombie or not,
# instead of being reaped quietly by the machine's init. (Two outlive a
# run by design, and are left out here: the writer's final fsync, with
# the log on, and the release of review's overlay, which syncs.)
test_processes_nothing_outlives_the_run() {
	local out
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\n' >"$T/direct.yaml"
	out=$(under_subreaper "$T/direct.yaml" /bin/true)
	LAST_CMD="airlock run --no-audit (workspace_mode: direct) -- /bin/true, under a subreaper"
	assert_contains "$out" "rc=0" "the run"
	assert_contains "$out" "left=[]" "what the run left behind"
}

# The same with an MCP connection, and one left open when the agent
# exits: its monitor, the monitor's pins keeper (root's, as root), the
# gateway and the server's sandbox all end with the run.
test_processes_nothing_outlives_a_run_with_mcp_connections() {
	local out
	cat >"$T/mcp-direct.yaml" <<YAML
version: 1
sandbox:
  workspace_mode: direct
mcp:
  servers:
    echo:
      command: [/bin/cat]
YAML
	cat >"$WS/mcp-leave.sh" <<'SH'
printf '{"jsonrpc":"2.0","id":1,"method":"ping"}\n' | /run/airlock/airlock mcp connect echo >one.out 2>&1
{ printf '{"jsonrpc":"2.0","id":2,"method":"ping"}\n'; sleep 30; } | /run/airlock/airlock mcp connect echo >two.out 2>&1 &
for _ in $(seq 300); do grep -q '"id":2' two.out 2>/dev/null && break; sleep 0.1; done
cat one.out two.out
SH
	out=$(under_subreaper "$T/mcp-direct.yaml" /bin/bash ./mcp-leave.sh)
	LAST_CMD="airlock run --no-audit (an MCP server; a connection left open) -- bash mcp-leave.sh, under a subreaper"
	assert_contains "$out" '"id":1' "the first connection was answered: $out"
	assert_contains "$out" '"id":2' "the second connection was answered, and left open: $out"
	assert_contains "$out" "rc=0" "the run"
	assert_contains "$out" "left=[]" "what the run left behind"
}
