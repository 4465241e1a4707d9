# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The system-call filter is an allow-list: calls it does not know are
# refused, set-ID modes and executable memfds are refused, only the socket
# families a sandbox needs exist, and real tools keep working.

SECCOMP_NOPROTECT=$'version: 1\nfilesystem:\n  protect_defaults: false'

# Calls newer than any deny-list (statmount, listmount, open_tree_attr, the
# *xattrat calls, file_setattr on this kernel) and a number no kernel has.
test_unknown_syscalls_refused() {
	local policy
	expect_blocked syscall-unknown
	assert_contains "$OUT" "listmount: ENOSYS" "listmount is refused with ENOSYS"
	assert_contains "$OUT" "open_tree_attr: ENOSYS" "open_tree_attr is refused with ENOSYS"
	assert_contains "$OUT" "1000: ENOSYS" "an unassigned number is refused"
	# The same without protected paths (another of the filter's variants).
	al_policy "$SECCOMP_NOPROTECT" -- ./airlock-probe syscall-unknown
	check_blocked syscall-unknown
	# Control: outside, the calls this kernel has reach it.
	outside syscall-unknown
	case "$OUT" in
	*"reached kernel"*) check_control syscall-unknown ;;
	*) ;; # a kernel older than 6.8 has none of them: nothing to compare
	esac
	expect_ok clone-ok
	expect_ok proc-self-ok
}

test_socket_families_refused_needed_work() {
	local fam
	expect_blocked socket-families
	for fam in vsock alg packet packet-dgram xdp key netlink-audit netlink-uevent \
		netlink-sock-diag netlink-netfilter netlink-generic; do
		assert_contains "$OUT" "$fam: EAFNOSUPPORT" "socket family $fam refused with EAFNOSUPPORT"
	done
	expect_blocked vsock
	al_policy "$SECCOMP_NOPROTECT" -- ./airlock-probe socket-families
	check_blocked socket-families
	# Control: in namespaces of our own (CAP_NET_RAW for packet sockets)
	# the same families are created.
	if command -v unshare >/dev/null && unshare -Urn true 2>/dev/null; then
		OUT=$(cd "$WS" && unshare -Urn ./airlock-probe socket-families 2>&1)
		RC=$?
		LAST_CMD="unshare -Urn ./airlock-probe socket-families"
		check_control socket-families
	fi
	expect_ok socket-families-ok
	expect_ok unix-ok
	expect_ok udp-ok
	# getaddrinfo with AI_ADDRCONFIG asks netlink route for the addresses.
	if command -v python3 >/dev/null; then
		al -- python3 -c 'import socket; print(len(socket.getaddrinfo("localhost", 80, flags=socket.AI_ADDRCONFIG)) > 0)'
		assert_rc 0 "getaddrinfo(AI_ADDRCONFIG) inside"
		assert_contains "$OUT" "True" "getaddrinfo(AI_ADDRCONFIG) answers"
	fi
}

# No set-ID bit in the workspace, seen from the host.
seccomp_no_setid_on_host() { # WHAT
	local found
	found=$(find "$WS" -perm /6000 2>/dev/null | tr '\n' ' ')
	assert_eq "" "$found" "$1: set-ID files on the host"
}

test_setid_refused_chmod_neighbours_work() {
	local script setid_src
	cp /bin/true "$WS/true-copy"
	setid_src=$(find /usr/bin /bin -maxdepth 1 -perm -4000 -type f 2>/dev/null | head -n1)
	# Every line prints REFUSED or LANDED; set -u only.
	script='
try() { if "$@" 2>/dev/null; then echo "LANDED: $*"; else echo "REFUSED: $*"; fi; }
try chmod 4755 true-copy
try chmod 2755 true-copy
try chmod 6755 true-copy
try chmod u+s true-copy
try chmod g+s true-copy
try python3 -c "import os; os.chmod(\"true-copy\", 0o4755)"
try python3 -c "import os; os.close(os.open(\"py-open\", os.O_WRONLY | os.O_CREAT, 0o4755))"
try python3 -c "import os; os.mkdir(\"py-dir\", 0o2755)"
try python3 -c "import os, stat; os.mknod(\"py-node\", stat.S_IFREG | 0o4755)"
try install -m 4755 /bin/true installed
try install -m 2755 -d installed-dir
# File capabilities: no CAP_SETFCAP in the sandbox. A hard link or rename of
# a set-ID program from outside crosses a mount.
try python3 -c "import os, struct; os.setxattr(\"true-copy\", \"security.capability\", struct.pack(\"<5I\", 0x02000001, 1 << 21, 0, 0, 0))"
if [ -n "$1" ]; then try ln "$1" linked; try mv "$1" moved; fi
# cp -p of a set-ID program: cp may succeed, dropping the bits it cannot
# keep; the host check below judges.
if [ -n "$1" ]; then cp -p "$1" preserved 2>/dev/null; fi
# Neighbours.
printf "#!/bin/sh\necho SCRIPT-RAN\n" > script.sh
chmod +x script.sh && ./script.sh
chmod 755 true-copy && ./true-copy && echo BINARY-RAN
mkdir -p shared && chmod 1777 shared && echo STICKY-SET
'
	al -- sh -c "$script" sh "$setid_src"
	assert_rc 0 "the script ran"
	assert_not_contains "$OUT" "LANDED" "a set-ID mode was accepted"
	assert_contains "$OUT" "REFUSED: chmod 4755" "chmod 4755 refused"
	assert_contains "$OUT" "REFUSED: install -m 4755" "install -m 4755 refused"
	assert_contains "$OUT" "SCRIPT-RAN" "chmod +x of a script"
	assert_contains "$OUT" "BINARY-RAN" "running a workspace binary"
	assert_contains "$OUT" "STICKY-SET" "chmod 1777 of a directory"
	assert_eq "1777" "$(stat -c %a "$WS/shared")" "the sticky directory's mode on the host"
	assert_eq "755" "$(stat -c %a "$WS/true-copy")" "the copy's mode on the host"
	seccomp_no_setid_on_host "chmod(1), python, install, cp -p"
	assert_contains "$OUT" "REFUSED: python3 -c import os, struct" "security.capability refused"
	if python3 -c 'import os, sys; os.getxattr(sys.argv[1], "security.capability")' "$WS/true-copy" 2>/dev/null; then
		fail "security.capability on the workspace copy$(e2e_last_run)"
	fi
	# Every creating call, raw and through libc, with and without
	# protected paths (the guard performs creates under protection).
	expect_blocked setid-plant "$WS/plant"
	expect_blocked setid-create "$WS/create"
	al_policy "$SECCOMP_NOPROTECT" -- ./airlock-probe setid-plant "$WS/plant2"
	check_blocked setid-plant
	al_policy "$SECCOMP_NOPROTECT" -- ./airlock-probe setid-create "$WS/create2"
	check_blocked setid-create
	seccomp_no_setid_on_host "the probe's set-ID plants"
	expect_ok chmod-ok "$WS/ok.sh"
	# Control: the same plants succeed outside any sandbox.
	outside setid-create "$T/control"
	check_control setid-create
}

test_memfd_exec_refused_memfd_works() {
	expect_ok memfd-ok
	probe memfd-exec
	assert_contains "$OUT" "memfd(MFD_EXEC): EPERM" "memfd_create(MFD_EXEC) refused"
	if [ -e /proc/sys/vm/memfd_noexec ]; then
		# Linux >= 6.3: every memfd is sealed against exec, made by the
		# supervisor (and, started as root, by vm.memfd_noexec = 2).
		check_blocked memfd-exec
		al --no-audit -- ./airlock-probe memfd-exec
		check_blocked memfd-exec
		al_policy "$SECCOMP_NOPROTECT" -- ./airlock-probe memfd-exec
		check_blocked memfd-exec
		if e2e_is_root; then
			al -- cat /proc/sys/vm/memfd_noexec
			assert_eq "2" "$OUT" "vm.memfd_noexec inside"
		fi
	fi
	outside memfd-exec
	check_control memfd-exec
	al --no-audit -- ./airlock-probe memfd-ok
	check_allowed memfd-ok
	if command -v python3 >/dev/null; then
		al -- python3 -c '
import os
fd = os.memfd_create("x"); os.write(fd, b"abc")
print(os.pread(fd, 3, 0), os.readlink("/proc/self/fd/%d" % fd), os.fstat(fd).st_uid == os.getuid())
os.fchmod(fd, 0o600); print("FCHMOD-OK")
try:
    os.fchmod(fd, 0o700); print("EXEC-BIT-SET")
except PermissionError:
    print("EXEC-BIT-REFUSED")'
		assert_rc 0 "python's os.memfd_create"
		assert_contains "$OUT" "b'abc' /memfd:x (deleted) True" "python's memfd holds its bytes and its name, and is the caller's"
		assert_contains "$OUT" "FCHMOD-OK" "fchmod of the caller's memfd"
		if [ -e /proc/sys/vm/memfd_noexec ]; then
			assert_contains "$OUT" "EXEC-BIT-REFUSED" "an exec bit on a memfd"
		fi
	fi
}

# Real tools under the allow-list: what they call (rseq, clone3 and its
# fallback, futex_waitv, close_range, faccessat2, epoll_pwait2, pidfd_open,
# getrandom, statx, ...) must be allowed, or fail over as on an older kernel.
test_real_tools_work() {
	local script
	command -v git >/dev/null || skip "no git"
	command -v python3 >/dev/null || skip "no python3"
	command -v cc >/dev/null || skip "no cc"
	command -v make >/dev/null || skip "no make"
	git -C "$WS" init -q repo && printf 'hello\n' >"$WS/repo/a.txt"
	mkdir -p "$WS/pkg" "$WS/build"
	printf '#include <stdio.h>\nint main(void) { puts("CC-OK"); return 0; }\n' >"$WS/build/hello.c"
	printf 'hello: hello.c\n\tcc -O2 -pthread -o hello hello.c\n' >"$WS/build/Makefile"
	script='
set -e
cd repo
git -c user.email=e2e@example.invalid -c user.name=e2e add a.txt
git -c user.email=e2e@example.invalid -c user.name=e2e commit -q -m first
git status --short && git log --oneline | grep -q first && echo GIT-OK
cd ../build && make -s && ./hello
python3 - <<EOF
import os, subprocess, threading, multiprocessing as mp, tempfile, hashlib, socket, asyncio
assert subprocess.run(["true"]).returncode == 0
t = threading.Thread(target=lambda: None); t.start(); t.join()
with mp.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]
with tempfile.NamedTemporaryFile() as f: f.write(b"x"); f.flush(); os.stat(f.name)
async def main(): await asyncio.sleep(0)
asyncio.run(main())
os.urandom(16); hashlib.sha256(b"x").hexdigest()
print("PYTHON-OK")
EOF
if command -v perl >/dev/null; then perl -MPOSIX -e "print qq(PERL-OK\n)"; else echo PERL-OK; fi
if command -v node >/dev/null; then
node -e "
const cp = require(\"child_process\"), { Worker } = require(\"worker_threads\"), fs = require(\"fs\"), crypto = require(\"crypto\");
cp.execSync(\"true\"); crypto.randomBytes(8); fs.writeFileSync(\"n.txt\", \"x\"); fs.statSync(\"n.txt\");
const w = new Worker(\"require(\\\"worker_threads\\\").parentPort.postMessage(1)\", { eval: true });
w.on(\"message\", () => { console.log(\"NODE-OK\"); w.terminate(); });
"
else echo NODE-OK; fi
if command -v npm >/dev/null; then
cd ../pkg
export npm_config_cache="$PWD/.npm-cache" npm_config_offline=true npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
npm --version >/dev/null && npm init -y >/dev/null && npm pack --silent >/dev/null && ls pkg-1.0.0.tgz >/dev/null && echo NPM-OK
else echo NPM-OK; fi
'
	E2E_TIMEOUT=180 al -- bash -c "$script"
	assert_rc 0 "the tools ran"
	local t
	for t in GIT-OK CC-OK PYTHON-OK PERL-OK NODE-OK NPM-OK; do
		assert_contains "$OUT" "$t" "$t"
	done
}

# af_unix turns SOCK_RAW into SOCK_DGRAM: a datagram unix socket whose
# sendmsg may name any socket, which the socket guard refuses unless the
# policy names a socket. SOCK_RAW must not be a way around that refusal.
test_unix_raw_socket_is_a_datagram_socket() {
	local script
	command -v python3 >/dev/null || skip "no python3"
	script='
import socket
for name, make in (("raw", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW)),
                   ("raw-pair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)),
                   ("dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))):
    try:
        make(); print(name, "CREATED")
    except OSError as e:
        print(name, "REFUSED", e.errno)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
a.sendall(b"x"); print("stream-pair", "OK" if b.recv(1) == b"x" else "BROKEN")
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); print("seqpacket OK")
'
	al -- python3 -c "$script"
	assert_rc 0 "the script ran"
	assert_contains "$OUT" "raw REFUSED" "socket(AF_UNIX, SOCK_RAW) refused"
	assert_contains "$OUT" "raw-pair REFUSED" "socketpair(AF_UNIX, SOCK_RAW) refused"
	assert_contains "$OUT" "dgram REFUSED" "socket(AF_UNIX, SOCK_DGRAM) refused"
	assert_contains "$OUT" "stream-pair OK" "a unix stream pair"
	assert_contains "$OUT" "seqpacket OK" "a unix seqpacket socket"
}
