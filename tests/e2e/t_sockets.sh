# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Unix sockets: no host socket is reachable from the sandbox unless the
# policy names it (filesystem.sockets), not even one in a directory the
# policy grants, nor one a host process creates there after the run
# starts. Each refusal is checked against its neighbour: the same socket
# reached from outside (the servers really listen), a named socket in the
# same directory reached from inside, and the sandbox's own sockets, TCP to
# the proxy and abstract sockets of its own still working.

# A directory of host sockets, like /run and ~/.gnupg hold: a Docker and a
# containerd socket, a D-Bus bus, a gpg agent, and a real ssh-agent with
# one key. The servers run as the uid the sandbox runs as (nobody when the
# suite runs as root, the caller otherwise) so that no permission bit,
# and no ssh-agent peer check, is what refuses: only airlock is. Sets D,
# SU (the command prefix that runs as that uid).
sockets_setup() {
	local uid gid
	al -- sh -c 'id -u; id -g'
	assert_rc 0 "id inside the sandbox"
	uid=$(printf '%s\n' "$OUT" | sed -n 1p)
	gid=$(printf '%s\n' "$OUT" | sed -n 2p)
	SU=()
	[ "$uid" != "$(id -u)" ] && SU=(setpriv --reuid="$uid" --regid="$gid" --clear-groups)
	D=$(mktemp -d /tmp/airlock-e2e-sock.XXXXXX) || fail "mktemp"
	printf '%s\n' "$D" >>"$T/.rm_dirs"
	chmod 755 "$D"
	chown "$uid:$gid" "$D" 2>/dev/null
	cat >"$D/serve.py" <<'PY'
import os, socket, sys, time
socks = []
for p in sys.argv[1:]:
    kind = socket.SOCK_DGRAM if p.endswith(".dgram") else socket.SOCK_STREAM
    s = socket.socket(socket.AF_UNIX, kind)
    s.bind(p)
    if kind == socket.SOCK_STREAM:
        s.listen(16)
    socks.append(s)
print("ready", flush=True)
time.sleep(120)
PY
	cat >"$WS/conn.py" <<'PY'
import errno, socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p)
        print(p.rsplit("/", 1)[-1] + ": connected")
    except OSError as e:
        print(p.rsplit("/", 1)[-1] + ": " + errno.errorcode.get(e.errno, str(e.errno)))
PY
	cp "$WS/conn.py" "$D/conn.py"
	chmod 644 "$D/serve.py" "$D/conn.py"
	sockets_serve docker.sock containerd.sock bus S.gpg-agent
	ssh-keygen -q -t ed25519 -N '' -C airlock-e2e-key -f "$D/key" || fail "ssh-keygen"
	chown "$uid:$gid" "$D/key" "$D/key.pub" 2>/dev/null
	"${SU[@]}" ssh-agent -a "$D/agent.sock" -D >"$T/agent.out" 2>&1 &
	bg_register $!
	wait_for 10 test -S "$D/agent.sock" || fail "ssh-agent did not start: $(cat "$T/agent.out")"
	SSH_AUTH_SOCK="$D/agent.sock" "${SU[@]}" ssh-add -q "$D/key" 2>"$T/add.err" || fail "ssh-add: $(cat "$T/add.err")"
}

# sockets_serve NAME...: listening sockets in $D, until the test ends.
sockets_serve() {
	local out
	out="$T/serve.$RANDOM"
	# shellcheck disable=SC2046
	"${SU[@]}" /usr/bin/python3 "$D/serve.py" $(printf "$D/%s " "$@") >"$out" 2>&1 &
	bg_register $!
	wait_for 10 grep -q ready "$out" || fail "the socket servers did not start: $(cat "$out")"
}

# The line for NAME in $OUT.
sock_line() { printf '%s\n' "$OUT" | grep -m1 -- "^$1: " || true; }

test_sockets_host_sockets_refused_in_a_granted_dir() {
	sockets_setup
	local all=(docker.sock containerd.sock bus S.gpg-agent agent.sock)
	# Control: every one of them answers outside the sandbox.
	OUT=$(cd "$D" && "${SU[@]}" /usr/bin/python3 conn.py "${all[@]/#/$D/}")
	for s in "${all[@]}"; do
		assert_eq "$s: connected" "$(sock_line "$s")" "control: $s outside the sandbox"
	done
	al_policy "version: 1
filesystem:
  read: [$D]" -- /usr/bin/python3 conn.py "${all[@]/#/$D/}"
	assert_rc 0 "the client ran"
	for s in "${all[@]}"; do
		assert_eq "$s: EACCES" "$(sock_line "$s")" "$s inside the sandbox"
	done
	# They are there to see; only reaching them is refused.
	al_policy "version: 1
filesystem:
  read: [$D]" -- ls "$D"
	assert_contains "$OUT" "docker.sock" "the granted directory is visible"
	# Through a symlink, a relative path and /proc/self/cwd: the same.
	ln -s "$D/docker.sock" "$WS/link.sock"
	al_policy "version: 1
filesystem:
  read: [$D]" -- sh -c "/usr/bin/python3 conn.py link.sock; cd $D && /usr/bin/python3 $WS/conn.py docker.sock /proc/self/cwd/bus"
	assert_eq "link.sock: EACCES" "$(sock_line link.sock)" "through a symlink in the workspace"
	assert_eq "docker.sock: EACCES" "$(sock_line docker.sock)" "by a relative path"
	assert_eq "bus: EACCES" "$(sock_line bus)" "through /proc/self/cwd"
	# Each refusal is in the decision log, with the socket's path.
	printf 'version: 1\nfilesystem:\n  read: [%s]\n' "$D" >"$T/policy.yaml"
	al --policy "$T/policy.yaml" --audit "$T/log" -- /usr/bin/python3 conn.py "$D/docker.sock"
	assert_eq "docker.sock: EACCES" "$(sock_line docker.sock)" "the audited run"
	"$AIRLOCK" audit show "$T"/log/*.jsonl >"$T/show" 2>&1 || fail "audit show: $(cat "$T/show")"
	assert_contains "$(cat "$T/show")" "EACCES [protected: a host socket filesystem.sockets does not name]" \
		"the refusal recorded"
	assert_contains "$(cat "$T"/log/*.jsonl)" "$D/docker.sock" "the socket's path in the record"
}

test_sockets_named_ssh_agent_works_and_its_neighbours_stay_refused() {
	sockets_setup
	# Named through the variable, as a user would: $SSH_AUTH_SOCK.
	printf 'version: 1\nfilesystem:\n  read: [%s]\n  sockets: [$SSH_AUTH_SOCK]\n' "$D" >"$T/policy.yaml"
	LAST_CMD="SSH_AUTH_SOCK=$D/agent.sock airlock run --policy $T/policy.yaml -- ssh-add -l; conn.py"
	OUT=$(cd "$WS" && SSH_AUTH_SOCK="$D/agent.sock" HOME="$E2E_HOME" timeout 60 "$AIRLOCK" run --policy "$T/policy.yaml" \
		-- sh -c "SSH_AUTH_SOCK=$D/agent.sock ssh-add -l; /usr/bin/python3 conn.py $D/docker.sock $D/agent.sock" \
		2>"$T/err" </dev/null)
	RC=$?
	ERR=$(cat "$T/err")
	assert_rc 0 "ssh-add -l and the client ran"
	assert_contains "$OUT" "airlock-e2e-key" "ssh-add -l lists the agent's key"
	assert_eq "agent.sock: connected" "$(sock_line agent.sock)" "the named socket"
	assert_eq "docker.sock: EACCES" "$(sock_line docker.sock)" "docker.sock beside the named socket"
	# Named alone, its directory not granted: bound at its own path.
	al_policy "version: 1
filesystem:
  sockets: [$D/agent.sock]" -- sh -c "SSH_AUTH_SOCK=$D/agent.sock ssh-add -l; ls $D"
	assert_contains "$OUT" "airlock-e2e-key" "ssh-add -l through the socket bound alone"
	assert_not_contains "$OUT" "docker.sock" "nothing else of its directory is shown"
	# Without the name, ssh-add cannot reach the agent.
	al_policy "version: 1
filesystem:
  read: [$D]" -- sh -c "SSH_AUTH_SOCK=$D/agent.sock ssh-add -l"
	assert_not_contains "$OUT" "airlock-e2e-key" "the agent unnamed"
	assert_ne 0 "$RC" "ssh-add -l fails without the name"
}

test_sockets_bad_names_are_errors() {
	sockets_setup
	al_policy "version: 1
filesystem:
  sockets:
    - $D/key" -- true
	assert_ne 0 "$RC" "a file that is not a socket"
	assert_contains "$ERR" "policy.yaml:4:7: filesystem.sockets[0]: $D/key is not a unix socket" "the error"
	al_policy 'version: 1
filesystem:
  sockets: [$AIRLOCK_E2E_NO_SUCH_VAR]' -- true
	assert_ne 0 "$RC" "an unset variable"
	assert_contains "$ERR" "policy.yaml:3:13: filesystem.sockets[0]:" "the error's place"
	assert_contains "$ERR" "\$AIRLOCK_E2E_NO_SUCH_VAR is not set" "the error"
	al_policy "version: 1
filesystem:
  sockets: [$D/agent.sock]" -- true
	assert_rc 0 "the same policy with a real socket"
}

test_sockets_late_host_socket_refused() {
	sockets_setup
	# The sandbox starts, says so, and waits for a socket the host makes
	# only then, in the directory it was granted.
	# (direct mode: the host watches the workspace during the run)
	printf 'version: 1\nsandbox:\n  workspace_mode: direct\nfilesystem:\n  read: [%s]\n  sockets: [%s/agent.sock]\n' \
		"$D" "$D" >"$T/policy.yaml"
	(cd "$WS" && HOME="$E2E_HOME" timeout 60 "$AIRLOCK" run --policy "$T/policy.yaml" -- sh -c \
		"echo started > started; i=0; while [ ! -S $D/late.sock ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done;
		 /usr/bin/python3 conn.py $D/late.sock $D/agent.sock" >"$T/late.out" 2>"$T/late.err" </dev/null) &
	local pid=$!
	wait_for 30 test -s "$WS/started" || fail "the sandbox did not start: $(cat "$T/late.err")"
	sockets_serve late.sock
	wait "$pid"
	RC=$?
	OUT=$(cat "$T/late.out")
	ERR=$(cat "$T/late.err")
	assert_rc 0 "the sandboxed client ran"
	assert_eq "late.sock: EACCES" "$(sock_line late.sock)" "a socket made after the start"
	assert_eq "agent.sock: connected" "$(sock_line agent.sock)" "the named one, in the same run"
	OUT=$(cd "$D" && "${SU[@]}" /usr/bin/python3 conn.py "$D/late.sock")
	assert_eq "late.sock: connected" "$(sock_line late.sock)" "control: the late socket answers outside"
}

test_sockets_host_abstract_socket_refused() {
	local name="airlock-e2e-sock-$$-$RANDOM"
	start_abstract_listener "$name"
	outside abstract-connect "$name"
	check_control abstract-connect
	expect_blocked abstract-connect "$name"
	expect_ok abstract-ok
}

# shellcheck disable=SC2016
SOCK_INTERNAL='
import errno, os, socket
def report(name, f):
    try:
        f(); print(name + ": ok")
    except OSError as e:
        print(name + ": " + errno.errorcode.get(e.errno, str(e.errno)))
def pair(path, connect_as):
    srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(connect_as)
    a, _ = srv.accept(); c.sendall(b"ping"); assert a.recv(4) == b"ping"
os.makedirs("/tmp/own", exist_ok=True)
report("tmp", lambda: pair("/tmp/own/s", "/tmp/own/s"))
report("workspace", lambda: pair(os.getcwd() + "/own.sock", "own.sock"))
# From a thread other than the leader (a resolver thread, say).
import threading
def in_thread():
    out = []
    def body():
        try:
            pair("/tmp/own/t", "/tmp/own/t"); out.append("ok")
        except OSError as e:
            out.append(errno.errorcode.get(e.errno, str(e.errno)))
    t = threading.Thread(target=body); t.start(); t.join()
    print("thread: " + out[0])
in_thread()
def dgram():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("/tmp/own/d"); c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    c.sendto(b"x", "/tmp/own/d"); assert s.recv(1) == b"x"
report("dgram", dgram)
# A blocking connect to a listener whose backlog is full would wait for
# ever; through the guard it waits a bounded time (EAGAIN), and the
# sandbox goes on: a file is still created after it.
def full_backlog():
    srv = socket.socket(socket.AF_UNIX); srv.bind("/tmp/own/full"); srv.listen(0)
    first = socket.socket(socket.AF_UNIX); first.connect("/tmp/own/full")
    second = socket.socket(socket.AF_UNIX); second.connect("/tmp/own/full")
report("full-backlog", full_backlog)
report("create-after", lambda: os.close(os.open("/tmp/own/after", os.O_CREAT | os.O_WRONLY, 0o600)))
def host_dgram():
    c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    c.sendto(b"x", os.environ["HOST_DGRAM"])
report("host-dgram", host_dgram)
'

test_sockets_sandbox_own_sockets_work() {
	printf '%s' "$SOCK_INTERNAL" >"$WS/internal.py"
	al -- /usr/bin/python3 internal.py
	assert_rc 0 "the script ran"
	assert_contains "$OUT" "tmp: ok" "a listener and its client in the sandbox's /tmp"
	assert_contains "$OUT" "workspace: ok" "the same in the workspace, by a relative path"
	assert_contains "$OUT" "thread: ok" "the same from a thread other than the leader"
	assert_contains "$OUT" "full-backlog: EAGAIN" "a blocking connect to a full backlog waits a bounded time"
	assert_contains "$OUT" "create-after: ok" "and guarded calls go on after it"
	# A datagram unix socket could send to any socket by sendmsg, which no
	# filter sees: refused while no socket is named.
	assert_contains "$OUT" "dgram: EACCES" "a datagram unix socket with nothing named"
}

test_sockets_datagram_sendto_judged_when_sockets_are_named() {
	sockets_setup
	sockets_serve host.dgram
	printf '%s' "$SOCK_INTERNAL" >"$WS/internal.py"
	al_policy "version: 1
process:
  env:
    set: {HOST_DGRAM: $D/host.dgram}
filesystem:
  read: [$D]
  sockets: [$D/agent.sock]" -- /usr/bin/python3 internal.py
	assert_rc 0 "the script ran"
	assert_contains "$OUT" "dgram: ok" "a datagram socket of the sandbox's own, with a socket named"
	assert_contains "$OUT" "host-dgram: EACCES" "sendto a host datagram socket in a granted directory"
}

test_sockets_tcp_to_the_proxy_still_works() {
	# Blocking and non-blocking connects (the supervisor performs the
	# latter itself, applying Landlock's TCP rule in its stead): the proxy
	# answers both ways; another port is refused both ways.
	# shellcheck disable=SC2016
	al_policy "version: 1
network:
  endpoints:
    - host: api.test" -- /usr/bin/python3 -c '
import errno, os, select, socket, urllib.parse
u = urllib.parse.urlparse(os.environ["HTTPS_PROXY"])
def talk(s, how):
    s.sendall(b"CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n")
    print(how + ":", s.recv(64).split(b"\r\n")[0].decode())
def nonblocking(port):
    s = socket.socket()
    s.setblocking(False)
    e = s.connect_ex((u.hostname, port))
    if e == errno.EINPROGRESS:
        select.select([], [s], [], 10)
        e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    s.setblocking(True)
    return s, e
talk(socket.create_connection((u.hostname, u.port), timeout=10), "blocking")
s, e = nonblocking(u.port)
if e:
    print("nonblocking:", errno.errorcode.get(e, e))
else:
    talk(s, "nonblocking")
for port in (u.port + 1, 22):
    try:
        socket.create_connection((u.hostname, port), timeout=10)
        print("blocking-%d: connected" % port)
    except OSError as x:
        print("blocking-%d: %s" % (port, errno.errorcode.get(x.errno, x.errno)))
    print("nonblocking-%d: %s" % (port, errno.errorcode.get(nonblocking(port)[1], "connected")))'
	assert_rc 0 "the client ran"
	assert_match "$OUT" "^blocking: HTTP/1\.[01] [0-9]{3}" "the proxy answered a blocking connect"
	assert_match "$OUT" "^nonblocking: HTTP/1\.[01] [0-9]{3}" "the proxy answered a non-blocking connect"
	assert_contains "$OUT" "blocking-22: EACCES" "a blocking connect to another port"
	assert_contains "$OUT" "nonblocking-22: EACCES" "a non-blocking connect to another port"
	assert_not_contains "$OUT" ": connected" "no other port"
}
