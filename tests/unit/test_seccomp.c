/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seccomp programs seccomp-gen compiled, run by a classic-BPF
 * interpreter over chosen calls: every variant (trace, protected paths,
 * socket guard) gives each call the action the rules mean. No kernel is
 * involved, so a rule that libseccomp merged away or ordered wrongly shows
 * here whatever the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/internal.h"
#include "sandbox/landlock_abi.h"
#include "sandbox/seccomp_bpf.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

enum { ALLOW, TRACE, NOTIFY, EPERM_, ENOSYS_, EAFNO, KILL, OTHER };

static const char *const names[] = { "ALLOW", "TRACE", "NOTIFY", "EPERM", "ENOSYS", "EAFNOSUPPORT", "KILL", "OTHER" };

/* Run a program over one call; the action, as one of the above. */
static int run_prog(const unsigned char *prog, unsigned long bytes, uint32_t arch, int nr, const uint64_t args[6])
{
	const struct sock_filter *f = (const struct sock_filter *)(const void *)prog;
	size_t len = bytes / sizeof(*f);
	struct seccomp_data d = { .nr = nr, .arch = arch };
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = { 0 }, ret = 0;
	size_t pc = 0, steps = 0;

	memcpy(d.args, args, sizeof(d.args));
	while (pc < len && steps++ < 4096) {
		const struct sock_filter *i = &f[pc];
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			assert_true(i->k + 4 <= sizeof(d));
			memcpy(&A, (const char *)&d + i->k, 4);
			pc++;
			break;
		case BPF_LD | BPF_MEM:
			A = M[i->k % BPF_MEMWORDS];
			pc++;
			break;
		case BPF_LDX | BPF_MEM:
			X = M[i->k % BPF_MEMWORDS];
			pc++;
			break;
		case BPF_ST:
			M[i->k % BPF_MEMWORDS] = A;
			pc++;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			A &= i->k;
			pc++;
			break;
		case BPF_MISC | BPF_TAX:
			X = A;
			pc++;
			break;
		case BPF_MISC | BPF_TXA:
			A = X;
			pc++;
			break;
		case BPF_JMP | BPF_JA:
			pc += 1 + i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += 1 + (A == i->k ? i->jt : i->jf);
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += 1 + (A > i->k ? i->jt : i->jf);
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += 1 + (A >= i->k ? i->jt : i->jf);
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += 1 + ((A & i->k) ? i->jt : i->jf);
			break;
		case BPF_RET | BPF_K:
			ret = i->k;
			goto done;
		default:
			fail_msg("instruction 0x%x at %zu not interpreted", i->code, pc);
		}
	}
	fail_msg("the program ran off its end");
done:
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
		return ALLOW;
	case SECCOMP_RET_TRACE:
		return TRACE;
	case SECCOMP_RET_USER_NOTIF:
		return NOTIFY;
	case SECCOMP_RET_KILL_PROCESS:
		return KILL;
	case SECCOMP_RET_ERRNO:
		return (ret & SECCOMP_RET_DATA) == EPERM	? EPERM_
		       : (ret & SECCOMP_RET_DATA) == ENOSYS	? ENOSYS_
		       : (ret & SECCOMP_RET_DATA) == EAFNOSUPPORT ? EAFNO
								  : OTHER;
	default:
		return OTHER;
	}
}

static int run(int k, uint32_t arch, int nr, const uint64_t args[6])
{
	return run_prog(seccomp_bpf_progs[k], *seccomp_bpf_lens[k], arch, nr, args);
}

static void expect(int k, const char *what, int want, int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	const uint64_t args[6] = { a0, a1, a2, a3, 0, 0 };
	int got = run(k, AUDIT_ARCH_X86_64, nr, args);
	if (got != want)
		fail_msg("variant %d: %s: %s, expected %s", k, what, names[got], names[want]);
}

static void test_every_variant(void **state)
{
	(void)state;
#ifndef __x86_64__
	skip();
#else
	for (int k = 0; k < SECCOMP_BPF_PROGS; k++) {
		enum seccomp_trace trace = (enum seccomp_trace)(k % SECCOMP_TRACE_LEVELS);
		bool protect = k / SECCOMP_TRACE_LEVELS % 2, sockets = k / SECCOMP_TRACE_LEVELS / 2;
		bool listener = trace != SECCOMP_TRACE_OFF || protect || sockets;
		assert_int_equal(seccomp_bpf_index(trace, protect, sockets), k);
		int deny = trace != SECCOMP_TRACE_OFF ? NOTIFY : EPERM_;
		/* A read is traced only at ALL; a write, a name made or removed
		 * and an exec at WRITES too, as a notification to be noted. */
		int path = trace == SECCOMP_TRACE_ALL ? TRACE : ALLOW;
		int write = trace == SECCOMP_TRACE_ALL ? TRACE : trace == SECCOMP_TRACE_WRITES ? NOTIFY : ALLOW;
		int create = protect ? NOTIFY : write;
		const uint64_t cwd = (uint64_t)(int64_t)AT_FDCWD;

		/* Unknown calls, and the ones newer than the list. */
		expect(k, "statmount", ENOSYS_, 457, 0, 0, 0, 0);
		expect(k, "listmount", ENOSYS_, 458, 0, 0, 0, 0);
		expect(k, "open_tree_attr", ENOSYS_, 467, 0, 0, 0, 0);
		expect(k, "syscall 1000", ENOSYS_, 1000, 0, 0, 0, 0);
		expect(k, "modify_ldt", ENOSYS_, SYS_modify_ldt, 0, 0, 0, 0);
		/* Allowed, denied. */
		expect(k, "getpid", ALLOW, SYS_getpid, 0, 0, 0, 0);
		expect(k, "rseq", ALLOW, SYS_rseq, 0, 0, 0, 0);
		expect(k, "close_range", ALLOW, SYS_close_range, 0, 0, 0, 0);
		expect(k, "execve", write, SYS_execve, 0, 0, 0, 0);
		expect(k, "unlinkat", write, SYS_unlinkat, cwd, 0, 0, 0);
		expect(k, "rename", protect ? NOTIFY : write, SYS_rename, 0, 0, 0, 0);
		expect(k, "truncate", write, SYS_truncate, 0, 0, 0, 0);
		expect(k, "access", path, SYS_access, 0, 0, 0, 0);
		expect(k, "newfstatat path", path, SYS_newfstatat, cwd, 0, 0, 0);
		expect(k, "newfstatat fd", ALLOW, SYS_newfstatat, 3, 0, 0, AT_EMPTY_PATH);
		expect(k, "ptrace", deny, SYS_ptrace, 0, 0, 0, 0);
		expect(k, "io_uring_setup", deny, SYS_io_uring_setup, 0, 0, 0, 0);
		expect(k, "clone3", ENOSYS_, SYS_clone3, 0, 0, 0, 0);
		expect(k, "openat2", ENOSYS_, SYS_openat2, 0, 0, 0, 0);
		expect(k, "clone(CLONE_NEWUSER)", deny, SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0);
		expect(k, "clone(SIGCHLD)", ALLOW, SYS_clone, SIGCHLD, 0, 0, 0);
		expect(k, "ioctl(TIOCSTI)", deny, SYS_ioctl, 0, TIOCSTI, 0, 0);
		expect(k, "ioctl(TIOCSTI, high bits)", deny, SYS_ioctl, 0, (1ULL << 32) | TIOCSTI, 0, 0);
		expect(k, "ioctl(FIONREAD)", ALLOW, SYS_ioctl, 0, FIONREAD, 0, 0);
		expect(k, "ioctl(TIOCSTI + 1)", ALLOW, SYS_ioctl, 0, TIOCSTI + 1, 0, 0);
		expect(k, "personality(0)", ALLOW, SYS_personality, 0, 0, 0, 0);
		expect(k, "personality(query)", ALLOW, SYS_personality, 0xffffffffULL, 0, 0, 0);
		expect(k, "personality(ADDR_NO_RANDOMIZE)", deny, SYS_personality, 0x0040000, 0, 0, 0);
		/* Set-ID modes. */
		expect(k, "chmod 4755", deny, SYS_chmod, 0, 04755, 0, 0);
		expect(k, "chmod 2755", deny, SYS_chmod, 0, 02755, 0, 0);
		expect(k, "chmod 0755", ALLOW, SYS_chmod, 0, 0755, 0, 0);
		expect(k, "chmod 1777", ALLOW, SYS_chmod, 0, 01777, 0, 0);
		expect(k, "fchmodat 6755", deny, SYS_fchmodat, cwd, 0, 06755, 0);
		expect(k, "fchmodat2 4755", deny, 452, cwd, 0, 04755, 0);
		expect(k, "fchmod 2700", deny, SYS_fchmod, 0, 02700, 0, 0);
		expect(k, "openat read", path, SYS_openat, cwd, 0, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 04755);
		expect(k, "openat O_WRONLY", write, SYS_openat, cwd, 0, O_WRONLY | O_CLOEXEC, 0);
		expect(k, "openat O_RDWR", write, SYS_openat, cwd, 0, O_RDWR, 0);
		expect(k, "openat O_RDONLY | O_TRUNC", write, SYS_openat, cwd, 0, O_RDONLY | O_TRUNC, 0);
		expect(k, "open O_WRONLY", write, SYS_open, 0, O_WRONLY, 0, 0);
		expect(k, "openat O_CREAT 0644", create, SYS_openat, cwd, 0, O_WRONLY | O_CREAT, 0644);
		expect(k, "openat O_CREAT 4755", deny, SYS_openat, cwd, 0, O_WRONLY | O_CREAT, 04755);
		expect(k, "openat O_TMPFILE 2700", deny, SYS_openat, cwd, 0, O_TMPFILE | O_RDWR, 02700);
		expect(k, "openat O_TMPFILE 0600", write, SYS_openat, cwd, 0, O_TMPFILE | O_RDWR, 0600);
		expect(k, "open O_CREAT 4700", deny, SYS_open, 0, O_CREAT, 04700, 0);
		expect(k, "creat 2700", deny, SYS_creat, 0, 02700, 0, 0);
		expect(k, "creat 0644", create, SYS_creat, 0, 0644, 0, 0);
		expect(k, "mkdir 2755", deny, SYS_mkdir, 0, 02755, 0, 0);
		expect(k, "mkdir 0755", create, SYS_mkdir, 0, 0755, 0, 0);
		expect(k, "mknodat 4600", deny, SYS_mknodat, cwd, 0, S_IFREG | 04600, 0);
		/* memfds. */
		expect(k, "memfd_create(MFD_EXEC)", deny, SYS_memfd_create, 0, 0x10, 0, 0);
		expect(k, "memfd_create", listener ? NOTIFY : ALLOW, SYS_memfd_create, 0, 1, 0, 0);
		/* Socket families. */
		expect(k, "socket(AF_VSOCK)", EAFNO, SYS_socket, AF_VSOCK, SOCK_STREAM, 0, 0);
		expect(k, "socket(AF_PACKET)", EAFNO, SYS_socket, AF_PACKET, SOCK_RAW, 0, 0);
		expect(k, "socket(AF_ALG)", EAFNO, SYS_socket, 38, SOCK_SEQPACKET, 0, 0);
		expect(k, "socket(AF_UNSPEC)", EAFNO, SYS_socket, AF_UNSPEC, SOCK_STREAM, 0, 0);
		expect(k, "socket(200)", EAFNO, SYS_socket, 200, SOCK_STREAM, 0, 0);
		expect(k, "socket(netlink audit)", EAFNO, SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT, 0);
		expect(k, "socketpair(AF_TIPC)", EAFNO, SYS_socketpair, 30, SOCK_RDM, 0, 0);
		expect(k, "socket(netlink route)", ALLOW, SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE, 0);
		expect(k, "socket(AF_INET)", ALLOW, SYS_socket, AF_INET, SOCK_STREAM, 0, 0);
		expect(k, "socket(AF_INET6)", ALLOW, SYS_socket, AF_INET6, SOCK_DGRAM, 0, 0);
		expect(k, "socket(AF_UNIX, stream)", ALLOW, SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, 0);
		expect(k, "socket(AF_UNIX, seqpacket)", ALLOW, SYS_socket, AF_UNIX, SOCK_SEQPACKET, 0, 0);
		expect(k, "socket(AF_UNIX, dgram)", sockets ? NOTIFY : ALLOW, SYS_socket, AF_UNIX, SOCK_DGRAM, 0, 0);
		expect(k, "socket(AF_UNIX, raw)", sockets ? NOTIFY : ALLOW, SYS_socket, AF_UNIX, SOCK_RAW, 0, 0);
		expect(k, "socketpair(AF_UNIX, raw)", sockets ? NOTIFY : ALLOW, SYS_socketpair, AF_UNIX, SOCK_RAW, 0, 0);
		expect(k, "connect", sockets ? NOTIFY : ALLOW, SYS_connect, 0, 0, 0, 0);
		/* A foreign ABI. */
		const uint64_t none[6] = { 0 };
		assert_int_equal(run(k, AUDIT_ARCH_I386, 20, none), KILL);
	}
#endif
}

static void expect_proxy(bool pins, const char *what, int want, int nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	const uint64_t args[6] = { a0, a1, a2, 0, 0, 0 };
	int got = run_prog(pins ? seccomp_bpf_proxy_pins : seccomp_bpf_proxy,
			   pins ? seccomp_bpf_proxy_pins_len : seccomp_bpf_proxy_len, AUDIT_ARCH_X86_64, nr, args);
	if (got != want)
		fail_msg("proxy%s: %s: %s, expected %s", pins ? " (pins)" : "", what, names[got], names[want]);
}

/* airlock-proxy's own programs: what a proxy serving calls passes, what
 * only a proxy taken over would call kills it. */
static void test_proxy_filter(void **state)
{
	(void)state;
#ifndef __x86_64__
	skip();
#else
	const uint64_t cwd = (uint64_t)(int64_t)AT_FDCWD;
	for (int pins = 0; pins < 2; pins++) {
		int writes = pins ? ALLOW : EPERM_;
		/* Serving. */
		expect_proxy(pins, "epoll_wait", ALLOW, SYS_epoll_wait, 0, 0, 0);
		expect_proxy(pins, "splice", ALLOW, SYS_splice, 0, 0, 0);
		expect_proxy(pins, "accept4", ALLOW, SYS_accept4, 0, 0, 0);
		expect_proxy(pins, "getrandom", ALLOW, SYS_getrandom, 0, 0, 0);
		expect_proxy(pins, "clone(thread)", ALLOW, SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0, 0);
		expect_proxy(pins, "clone3", ENOSYS_, SYS_clone3, 0, 0, 0);
		expect_proxy(pins, "socket(AF_INET)", ALLOW, SYS_socket, AF_INET, SOCK_STREAM, 0);
		expect_proxy(pins, "socket(netlink route)", ALLOW, SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
		expect_proxy(pins, "socket(AF_PACKET)", EAFNO, SYS_socket, AF_PACKET, SOCK_RAW, 0);
		expect_proxy(pins, "openat read", ALLOW, SYS_openat, cwd, 0, O_RDONLY | O_CLOEXEC);
		expect_proxy(pins, "mmap r-x", ALLOW, SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC);
		expect_proxy(pins, "mmap rw-", ALLOW, SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE);
		expect_proxy(pins, "mprotect none", ALLOW, SYS_mprotect, 0, 4096, PROT_NONE);
		expect_proxy(pins, "prctl(PR_SET_NAME)", ALLOW, SYS_prctl, PR_SET_NAME, 0, 0);
		expect_proxy(pins, "ioctl(FIONREAD)", ALLOW, SYS_ioctl, 0, FIONREAD, 0);
		/* Writing a file: the pins program alone. */
		expect_proxy(pins, "openat O_WRONLY", writes, SYS_openat, cwd, 0, O_WRONLY);
		expect_proxy(pins, "openat O_RDWR | O_CREAT", writes, SYS_openat, cwd, 0, O_RDWR | O_CREAT);
		expect_proxy(pins, "openat O_TRUNC", writes, SYS_openat, cwd, 0, O_RDONLY | O_TRUNC);
		expect_proxy(pins, "open O_CREAT", writes, SYS_open, 0, O_CREAT, 0600);
		expect_proxy(pins, "rename", pins ? ALLOW : KILL, SYS_rename, 0, 0, 0);
		/* Code injection. */
		expect_proxy(pins, "mmap rwx", EPERM_, SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC);
		expect_proxy(pins, "mprotect r-x", EPERM_, SYS_mprotect, 0, 4096, PROT_READ | PROT_EXEC);
		/* Only an attacker's. */
		expect_proxy(pins, "execve", KILL, SYS_execve, 0, 0, 0);
		expect_proxy(pins, "execveat", KILL, SYS_execveat, 0, 0, 0);
		expect_proxy(pins, "fork", KILL, SYS_fork, 0, 0, 0);
		expect_proxy(pins, "clone(SIGCHLD)", KILL, SYS_clone, SIGCHLD, 0, 0);
		expect_proxy(pins, "clone(thread, CLONE_NEWUSER)", KILL, SYS_clone, CLONE_THREAD | CLONE_NEWUSER, 0, 0);
		expect_proxy(pins, "ptrace", KILL, SYS_ptrace, 0, 0, 0);
		expect_proxy(pins, "process_vm_readv", KILL, SYS_process_vm_readv, 0, 0, 0);
		expect_proxy(pins, "kill", KILL, SYS_kill, 1, 9, 0);
		expect_proxy(pins, "unshare", KILL, SYS_unshare, 0, 0, 0);
		expect_proxy(pins, "setns", KILL, SYS_setns, 0, 0, 0);
		expect_proxy(pins, "mount", KILL, SYS_mount, 0, 0, 0);
		expect_proxy(pins, "bpf", KILL, SYS_bpf, 0, 0, 0);
		expect_proxy(pins, "keyctl", KILL, SYS_keyctl, 0, 0, 0);
		expect_proxy(pins, "pidfd_open", KILL, SYS_pidfd_open, 1, 0, 0);
		expect_proxy(pins, "memfd_create", ALLOW, SYS_memfd_create, 0, MFD_CLOEXEC, 0);
		expect_proxy(pins, "setuid", KILL, SYS_setuid, 0, 0, 0);
		expect_proxy(pins, "ioctl(TIOCSTI)", KILL, SYS_ioctl, 2, TIOCSTI, 0);
		/* Neither: what a kernel without the call would say. */
		expect_proxy(pins, "prctl(PR_SET_DUMPABLE)", ENOSYS_, SYS_prctl, PR_SET_DUMPABLE, 1, 0);
		expect_proxy(pins, "ioctl(TIOCSETD)", ENOSYS_, SYS_ioctl, 2, TIOCSETD, 0);
		expect_proxy(pins, "syscall 1000", ENOSYS_, 1000, 0, 0, 0);
		const uint64_t none[6] = { 0 };
		assert_int_equal(run_prog(seccomp_bpf_proxy, seccomp_bpf_proxy_len, AUDIT_ARCH_I386, 20, none), KILL);
	}
#endif
}

/* The same in the kernel: a child confines itself as airlock-proxy does
 * (Landlock reading /etc, then the filter) and tries. Exit status: 0 when
 * every step went as expected, else the step that did not. */
static int confined_child(const char *outside)
{
	struct error err = { 0 };
	const struct landlock_grant etc = { .path = "/etc", .access = LL_READ };
	bool landlock = landlock_abi() >= 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 10;
	if (landlock && landlock_confine(&etc, 1, &err) < 1)
		return 11;
	if (seccomp_apply_proxy(false, &err) < 0)
		return 12;
	/* The neighbour: name resolution's files are read. */
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 13;
	close(fd);
	/* Landlock: a file outside the grants is not opened. */
	fd = open(outside, O_RDONLY | O_CLOEXEC);
	if (landlock && (fd >= 0 || errno != EACCES))
		return 14;
	/* seccomp: nothing opened for writing, nothing made executable. */
	if (open(outside, O_WRONLY | O_CLOEXEC) >= 0 || errno != EPERM)
		return 15;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 16;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) == 0 || errno != EPERM)
		return 17;
	/* execve kills: the exit status is never reached. */
	char *const argv[] = { (char *)"/bin/true", NULL };
	syscall(SYS_execve, "/bin/true", argv, NULL);
	return 18;
}

static void test_proxy_confined_in_the_kernel(void **state)
{
	(void)state;
	char outside[] = "/tmp/airlock-test-seccomp.XXXXXX";
	int tmp = mkstemp(outside);
	assert_true(tmp >= 0);
	close(tmp);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(confined_child(outside));
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(outside);
	if (WIFEXITED(st))
		fail_msg("the confined child exited with %d (step that went wrong), not killed by its execve",
			 WEXITSTATUS(st));
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_variant),
		cmocka_unit_test(test_proxy_filter),
		cmocka_unit_test(test_proxy_confined_in_the_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
