/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-probe: the attacker that runs *inside* a sandbox.
 *
 * It is linked statically so that it runs unchanged inside any runtime
 * (airlock, bubblewrap, runc, gVisor, ...) whatever libraries the sandbox
 * exposes. Each test attempts one operation for real and prints exactly one
 * line on stdout:
 *
 *   TEST: blocked (WHY)    the operation failed; WHY is an errno name or a
 *                          short reason
 *   TEST: allowed [(WHY)]  the operation succeeded, or reached the kernel
 *                          past every permission check (see below)
 *   TEST: error WHY        the probe itself could not run the test
 *
 * Exit status of an attack test: 0 blocked, 1 allowed, 3 error.
 * Tests whose name ends in "-ok" are *neighbours*: legitimate operations a
 * sandbox must keep working. Their exit status is inverted: 0 when the
 * operation succeeded, 1 when it was blocked, 3 on error.
 * Exit status 2 is a usage error (unknown test, wrong arguments).
 *
 * WARNING: the probe must be harmless when run with no sandbox at all, even
 * as root, because someone will eventually do that. Tests whose success would
 * change the machine (pivot_root, umount, kexec, reboot, swapon, acct, module
 * loading, ...) therefore pass arguments that are valid enough to get past
 * the kernel's permission checks and then fail on a deliberately invalid
 * detail (a missing path, a bad magic number, too many segments). A failure
 * with that detail's errno ("reached") proves the call was permitted, and is
 * reported as "allowed (reached kernel: ERRNO)"; a sandbox that filters the
 * call returns EPERM (or ENOSYS) before the kernel ever looks at the detail.
 * Tests that do succeed for real (mount of a tmpfs, chroot, unshare, setns,
 * setuid, personality) run in a forked child or on a private temporary
 * directory, and the real tmpfs mount is attempted only outside the initial
 * user namespace (where a mount cannot reach the host's mount table).
 *
 * Network tests send only to loopback addresses, or (the *-local tests,
 * dns-exfil and http-direct) to an address assigned to an interface of the
 * probe's own network namespace, such as the ones the conformance suite
 * adds to a namespace it creates. For any other address they send nothing
 * and only ask the kernel whether a route exists: the probe never sends
 * traffic beyond this machine.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strerrorname_np, sigabbrev_np, pipe2, setns, ... */
#endif

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/userfaultfd.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#define X32_SYSCALL_BIT 0x40000000
#define I386_NR_GETPID 20

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

enum verdict {
	VERDICT_NONE = 0, /* the test forgot to decide: reported as an error */
	VERDICT_BLOCKED,
	VERDICT_ALLOWED,
	VERDICT_ERROR,
};

struct result {
	enum verdict verdict;
	char why[640];
};

__attribute__((format(printf, 3, 4))) static void
set_verdict(struct result *r, enum verdict v, const char *fmt, ...)
{
	va_list ap;

	r->verdict = v;
	if (!fmt) {
		r->why[0] = '\0';
		return;
	}
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

#define BLOCKED(r, ...) set_verdict((r), VERDICT_BLOCKED, __VA_ARGS__)
#define ALLOWED(r, ...) set_verdict((r), VERDICT_ALLOWED, __VA_ARGS__)
#define PROBE_ERROR(r, ...) set_verdict((r), VERDICT_ERROR, __VA_ARGS__)

static const char *errname(int err)
{
	static char buf[32];
	const char *n = strerrorname_np(err);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static const char *signame(int sig)
{
	static char buf[32];
	const char *n = sigabbrev_np(sig);

	if (n) {
		snprintf(buf, sizeof(buf), "SIG%s", n);
		return buf;
	}
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

/* Judge a syscall that returned ret with errno err. A non-negative ret means
 * the operation succeeded. Errnos listed in the 0-terminated varargs mean
 * the call got past every permission check and failed only on the
 * deliberately invalid argument (see the WARNING at the top); any other
 * errno means the operation was refused. */
static void judge(struct result *r, long ret, int err, ...)
{
	va_list ap;
	int e;

	if (ret >= 0) {
		ALLOWED(r, NULL);
		return;
	}
	va_start(ap, err);
	while ((e = va_arg(ap, int)) != 0) {
		if (e == err) {
			va_end(ap);
			ALLOWED(r, "reached kernel: %s", errname(err));
			return;
		}
	}
	va_end(ap);
	BLOCKED(r, "%s", errname(err));
}

/* judge() on a call, reading errno only after the call has returned (an
 * argument list has no evaluation order). */
#define JUDGE(r, call, ...)                                                                    \
	do {                                                                                   \
		long judge_ret_ = (long)(call);                                                \
		int judge_err_ = errno;                                                        \
		judge((r), judge_ret_, judge_err_, __VA_ARGS__);                               \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static void close_quietly(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
}

static void kill_and_reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
}

static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read a small file into buf (NUL-terminated). Returns bytes read or -1. */
static ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (off + 1 < size) {
		ssize_t n = read(fd, buf + off, size - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close_quietly(fd);
			return -1;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return (ssize_t)off;
}

/* A private scratch directory for tests that need one: under $TMPDIR, /tmp,
 * or the current directory, whichever is writable. Removed at exit. */
static char scratch_dir[PATH_MAX];

static void scratch_cleanup(void)
{
	char p[PATH_MAX + 16];

	if (!scratch_dir[0])
		return;
	/* Only names this file creates in it. */
	snprintf(p, sizeof(p), "%s/a", scratch_dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/b", scratch_dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/dev", scratch_dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/fifo", scratch_dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sock", scratch_dir);
	unlink(p);
	rmdir(scratch_dir);
	scratch_dir[0] = '\0';
}

static const char *scratch(void)
{
	const char *bases[3];
	size_t i;

	if (scratch_dir[0])
		return scratch_dir;
	bases[0] = getenv("TMPDIR");
	bases[1] = "/tmp";
	bases[2] = ".";
	for (i = 0; i < 3; i++) {
		if (!bases[i] || !bases[i][0])
			continue;
		snprintf(scratch_dir, sizeof(scratch_dir), "%s/airlock-probe.XXXXXX", bases[i]);
		if (mkdtemp(scratch_dir)) {
			atexit(scratch_cleanup);
			return scratch_dir;
		}
	}
	scratch_dir[0] = '\0';
	return NULL;
}

/* scratch()/NAME, created as a directory. NULL if impossible. */
static const char *scratch_subdir(const char *name, char *buf, size_t size)
{
	const char *s = scratch();

	if (!s)
		return NULL;
	snprintf(buf, size, "%s/%s", s, name);
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return NULL;
	return buf;
}

/* True when the probe runs in the machine's initial user namespace, i.e.
 * without any sandbox that owns its mounts. Unknown counts as true, so that
 * callers fall back to their harmless variant. */
static bool in_initial_userns(void)
{
	char buf[256];
	unsigned long in, out, count;

	if (read_small_file("/proc/self/uid_map", buf, sizeof(buf)) < 0)
		return true;
	if (sscanf(buf, "%lu %lu %lu", &in, &out, &count) != 3)
		return true;
	return in == 0 && out == 0 && count == 4294967295UL;
}

/* Run fn in a forked child and copy its result back through a pipe, so that
 * whatever the test changes (root directory, namespaces, personality, uid)
 * or whatever kills it stays in the child. If the child dies without a
 * result, *death_sig is set to the signal that killed it (0 otherwise) and
 * r is left VERDICT_NONE for the caller to interpret. */
typedef void (*child_fn)(struct result *r, const void *arg);

static void in_child(struct result *r, child_fn fn, const void *arg, int *death_sig)
{
	int p[2];
	pid_t pid;
	int status;
	ssize_t n;

	*death_sig = 0;
	memset(r, 0, sizeof(*r));
	if (pipe2(p, O_CLOEXEC) < 0) {
		PROBE_ERROR(r, "pipe: %s", errname(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		PROBE_ERROR(r, "fork: %s", errname(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		struct result cr;

		close(p[0]);
		memset(&cr, 0, sizeof(cr));
		fn(&cr, arg);
		_exit(write_all(p[1], &cr, sizeof(cr)) ? 0 : 1);
	}
	close(p[1]);
	do
		n = read(p[0], r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			PROBE_ERROR(r, "waitpid: %s", errname(errno));
			return;
		}
	}
	if (n == (ssize_t)sizeof(*r))
		return;
	memset(r, 0, sizeof(*r));
	if (WIFSIGNALED(status))
		*death_sig = WTERMSIG(status);
	else
		PROBE_ERROR(r, "test child exited with status %d without a result",
			    WEXITSTATUS(status));
}

/* in_child for tests where death of the child is itself an error. */
static void in_child_simple(struct result *r, child_fn fn, const void *arg)
{
	int sig;

	in_child(r, fn, arg, &sig);
	if (r->verdict == VERDICT_NONE)
		PROBE_ERROR(r, "test child killed by %s", signame(sig));
}

/* A child that waits to be killed. Its memory holds probe_secret. */
static volatile uint64_t probe_secret = 0x5ec7e75ec7e7ULL;

static pid_t spawn_sleeper(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* Merge two results: allowed wins over blocked (one hole is a hole); error
 * wins over blocked (a blocked verdict needs every attempt to have run). */
/* Append to a result's reason, truncating quietly when it is full. */
__attribute__((format(printf, 2, 3))) static void append_why(struct result *r, const char *fmt, ...)
{
	size_t len = strlen(r->why);
	va_list ap;

	if (len + 1 >= sizeof(r->why))
		return;
	va_start(ap, fmt);
	vsnprintf(r->why + len, sizeof(r->why) - len, fmt, ap);
	va_end(ap);
}

/* Merge two results: allowed wins over blocked (one hole is a hole); error
 * wins over blocked (a blocked verdict needs every attempt to have run). */
static void merge(struct result *into, const char *label, const struct result *r)
{
	static const char *const names[] = {
		[VERDICT_NONE] = "?",
		[VERDICT_BLOCKED] = "blocked",
		[VERDICT_ALLOWED] = "allowed",
		[VERDICT_ERROR] = "error",
	};

	append_why(into, "%s%s %s", into->why[0] ? "; " : "", label, names[r->verdict]);
	if (r->why[0])
		append_why(into, " (%s)", r->why);
	if (r->verdict == VERDICT_ALLOWED)
		into->verdict = VERDICT_ALLOWED;
	else if (r->verdict == VERDICT_ERROR && into->verdict != VERDICT_ALLOWED)
		into->verdict = VERDICT_ERROR;
	else if (into->verdict == VERDICT_NONE)
		into->verdict = r->verdict;
}

static bool parse_loopback(const char *host, const char *port, struct sockaddr_storage *ss,
			   socklen_t *len, struct result *r)
{
	char *end;
	long p = strtol(port, &end, 10);
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (*port == '\0' || *end != '\0' || p < 0 || p > 65535) {
		PROBE_ERROR(r, "bad port %s", port);
		return false;
	}
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		/* 127.0.0.0/8 only: this workplace never sends traffic off the machine. */
		if ((ntohl(sin->sin_addr.s_addr) >> 24) != 127) {
			PROBE_ERROR(r, "refusing non-loopback address %s", host);
			return false;
		}
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)p);
		*len = sizeof(*sin);
		return true;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr)) {
			PROBE_ERROR(r, "refusing non-loopback address %s", host);
			return false;
		}
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*sin6);
		return true;
	}
	PROBE_ERROR(r, "not a numeric loopback address: %s", host);
	return false;
}

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Tests: debugging and cross-process memory access                         */
/* ------------------------------------------------------------------------ */

static void child_traceme(struct result *r, const void *arg)
{
	(void)arg;
	JUDGE(r, ptrace(PTRACE_TRACEME, 0, NULL, NULL), 0);
}

static void t_ptrace_traceme(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	in_child_simple(r, child_traceme, NULL);
}

static void t_ptrace_attach(struct result *r, int argc, char **argv)
{
	pid_t pid;
	long ret;
	int err, status;

	(void)argc;
	(void)argv;
	pid = spawn_sleeper();
	if (pid < 0) {
		PROBE_ERROR(r, "fork: %s", errname(errno));
		return;
	}
	ret = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
	err = errno;
	if (ret == 0) {
		/* Wait for the attach stop so the detach is clean. */
		waitpid(pid, &status, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	}
	kill_and_reap(pid);
	judge(r, ret, err, 0);
}

static void t_ptrace(struct result *r, int argc, char **argv)
{
	struct result a = {0}, b = {0};

	t_ptrace_traceme(&a, argc, argv);
	t_ptrace_attach(&b, argc, argv);
	merge(r, "traceme", &a);
	merge(r, "attach", &b);
}

static void t_process_vm(struct result *r, bool do_write)
{
	uint64_t local = 0;
	struct iovec liov = {.iov_base = &local, .iov_len = sizeof(local)};
	struct iovec riov = {.iov_base = (void *)&probe_secret, .iov_len = sizeof(probe_secret)};
	ssize_t n;
	int err;
	pid_t pid = spawn_sleeper();

	if (pid < 0) {
		PROBE_ERROR(r, "fork: %s", errname(errno));
		return;
	}
	if (do_write) {
		local = 0x0badc0de;
		n = process_vm_writev(pid, &liov, 1, &riov, 1, 0);
	} else {
		n = process_vm_readv(pid, &liov, 1, &riov, 1, 0);
	}
	err = errno;
	kill_and_reap(pid);
	if (n == (ssize_t)sizeof(local) && (do_write || local == probe_secret))
		ALLOWED(r, "%s the child's memory", do_write ? "wrote" : "read");
	else if (n >= 0)
		PROBE_ERROR(r, "short transfer of %zd bytes", n);
	else
		BLOCKED(r, "%s", errname(err));
}

static void t_process_vm_readv(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	t_process_vm(r, false);
}

static void t_process_vm_writev(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	t_process_vm(r, true);
}

/* ------------------------------------------------------------------------ */
/* Tests: kernel attack surface (eBPF, perf, keyrings, userfaultfd, io_uring) */
/* ------------------------------------------------------------------------ */

static void t_bpf_prog_load(struct result *r, int argc, char **argv)
{
	/* r0 = 0; exit: the smallest valid socket filter. */
	struct bpf_insn insns[2] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr attr;
	long fd;

	(void)argc;
	(void)argv;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	JUDGE(r, fd, 0);
	close_quietly((int)fd);
}

static void t_bpf_map_create(struct result *r, int argc, char **argv)
{
	union bpf_attr attr;
	long fd;

	(void)argc;
	(void)argv;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	JUDGE(r, fd, 0);
	close_quietly((int)fd);
}

static void t_bpf(struct result *r, int argc, char **argv)
{
	struct result a = {0}, b = {0};

	t_bpf_prog_load(&a, argc, argv);
	t_bpf_map_create(&b, argc, argv);
	merge(r, "prog-load", &a);
	merge(r, "map-create", &b);
}

static void t_perf_event_open(struct result *r, int argc, char **argv)
{
	struct perf_event_attr attr;
	long fd;

	(void)argc;
	(void)argv;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	JUDGE(r, fd, 0);
	close_quietly((int)fd);
}

static void t_keyctl(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* Creates (if needed) and names the process keyring: private to us. */
	JUDGE(r, syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1),
	      ENOKEY, EDQUOT, 0);
}

static void t_add_key(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	JUDGE(r,
	      syscall(SYS_add_key, "user", "airlock-probe", "x", (size_t)1,
		      KEY_SPEC_PROCESS_KEYRING),
	      EDQUOT, 0);
}

static void t_request_key(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* No callout: the kernel only searches, and ENOKEY says it did. */
	JUDGE(r, syscall(SYS_request_key, "user", "airlock-probe:absent", NULL, 0), ENOKEY,
	      0);
}

static void t_userfaultfd(struct result *r, int argc, char **argv)
{
	long fd;

	(void)argc;
	(void)argv;
	/* User-mode-only faults: what an unprivileged process may ask for since
	 * Linux 5.11 even with vm.unprivileged_userfaultfd=0. */
	fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	JUDGE(r, fd, 0);
	close_quietly((int)fd);
}

static void t_userfaultfd_dev(struct result *r, int argc, char **argv)
{
	int dev, fd;

	(void)argc;
	(void)argv;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		BLOCKED(r, "open /dev/userfaultfd: %s", errname(errno));
		return;
	}
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	JUDGE(r, fd, 0);
	close_quietly(fd);
	close(dev);
}

static void t_io_uring_setup(struct result *r, int argc, char **argv)
{
	struct io_uring_params p;
	long fd;

	(void)argc;
	(void)argv;
	memset(&p, 0, sizeof(p));
	fd = syscall(SYS_io_uring_setup, 2, &p);
	JUDGE(r, fd, 0);
	close_quietly((int)fd);
}

/* io_uring_enter/register on /dev/null: EOPNOTSUPP ("not a ring") means the
 * filter let the call through. Not fd -1: since Linux 6.13 register(-1)
 * means a "blind" registration with its own rules. */
static void io_uring_not_a_ring(struct result *r, bool enter)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		PROBE_ERROR(r, "open /dev/null: %s", errname(errno));
		return;
	}
	if (enter)
		JUDGE(r, syscall(SYS_io_uring_enter, fd, 0, 0, 0, NULL, 0), EOPNOTSUPP, EBADF, 0);
	else
		JUDGE(r, syscall(SYS_io_uring_register, fd, 0, NULL, 0), EOPNOTSUPP, EBADF, 0);
	close(fd);
}

static void t_io_uring_enter(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	io_uring_not_a_ring(r, true);
}

static void t_io_uring_register(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	io_uring_not_a_ring(r, false);
}

/* ------------------------------------------------------------------------ */
/* Tests: mounts, root and namespaces                                       */
/* ------------------------------------------------------------------------ */

static void t_mount(struct result *r, int argc, char **argv)
{
	char buf[PATH_MAX];
	const char *dir = scratch_subdir("a", buf, sizeof(buf));
	unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;

	(void)argc;
	(void)argv;
	if (!dir) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	if (in_initial_userns()) {
		/* Harmless on a bare host: the unknown filesystem type is looked
		 * up only after the permission check, and fails with ENODEV. */
		JUDGE(r, mount("airlock-probe", dir, "airlock-probe-nofs", flags, NULL),
		      ENODEV, 0);
		return;
	}
	if (mount("airlock-probe", dir, "tmpfs", flags, "size=16k") == 0) {
		umount2(dir, MNT_DETACH);
		ALLOWED(r, "mounted a tmpfs on %s", dir);
		return;
	}
	BLOCKED(r, "%s", errname(errno));
}

static void t_umount(struct result *r, int argc, char **argv)
{
	char buf[PATH_MAX];
	const char *dir = scratch_subdir("a", buf, sizeof(buf));

	(void)argc;
	(void)argv;
	if (!dir) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	/* The permission check precedes the "is this a mount point" check:
	 * EINVAL on a plain directory means we could have unmounted /proc. */
	JUDGE(r, umount2(dir, 0), EINVAL, 0);
}

static void t_open_tree(struct result *r, int argc, char **argv)
{
	char buf[PATH_MAX];
	const char *dir = scratch_subdir("a", buf, sizeof(buf));
	long fd;

	(void)argc;
	(void)argv;
	if (!dir) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	/* A detached clone of our own scratch directory; closing it drops it. */
	fd = syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	JUDGE(r, fd, 0);
	close_quietly((int)fd);
}

static void t_move_mount(struct result *r, int argc, char **argv)
{
	char a[PATH_MAX], b[PATH_MAX];
	const char *from = scratch_subdir("a", a, sizeof(a));
	const char *to = scratch_subdir("b", b, sizeof(b));

	(void)argc;
	(void)argv;
	if (!from || !to) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	/* `from` is not a mount: EINVAL once past the permission check. */
	JUDGE(r, syscall(SYS_move_mount, AT_FDCWD, from, AT_FDCWD, to, 0), EINVAL, 0);
}

static void t_fsopen(struct result *r, int argc, char **argv)
{
	long fd;

	(void)argc;
	(void)argv;
	fd = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	JUDGE(r, fd, 0);
	close_quietly((int)fd);
}

static void t_fsmount(struct result *r, int argc, char **argv)
{
	long fs, mnt;

	(void)argc;
	(void)argv;
	fs = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0) {
		/* A detached tmpfs, attached nowhere; closing it destroys it. */
		mnt = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
		JUDGE(r, mnt, 0);
		close_quietly((int)mnt);
		close((int)fs);
		return;
	}
	close_quietly((int)fs);
	/* Without a filesystem context: EBADF once past the permission check. */
	JUDGE(r, syscall(SYS_fsmount, -1, FSMOUNT_CLOEXEC, 0), EBADF, 0);
}

static void t_fspick(struct result *r, int argc, char **argv)
{
	long fd;

	(void)argc;
	(void)argv;
	/* A reconfiguration context for "/", closed without being used. */
	fd = syscall(SYS_fspick, AT_FDCWD, "/", FSPICK_CLOEXEC);
	JUDGE(r, fd, EINVAL, 0);
	close_quietly((int)fd);
}

static void t_fsconfig(struct result *r, int argc, char **argv)
{
	int fd;

	(void)argc;
	(void)argv;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		PROBE_ERROR(r, "open /dev/null: %s", errname(errno));
		return;
	}
	/* Not a filesystem context: EINVAL (EBADF before Linux 6.x) once the
	 * filter let the call through; fsconfig has no permission check of
	 * its own, the context's creator had it. */
	JUDGE(r, syscall(SYS_fsconfig, fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0), EINVAL, EBADF, 0);
	close(fd);
}

static void t_mount_setattr(struct result *r, int argc, char **argv)
{
	char buf[PATH_MAX];
	const char *dir = scratch_subdir("a", buf, sizeof(buf));
	struct mount_attr attr;

	(void)argc;
	(void)argv;
	if (!dir) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr_clr = MOUNT_ATTR_RDONLY;
	/* `dir` is not a mount: EINVAL once past the permission check. */
	JUDGE(r, syscall(SYS_mount_setattr, AT_FDCWD, dir, 0, &attr, sizeof(attr)), EINVAL,
	      0);
}

static void t_pivot_root(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* Missing paths: ENOENT once past the permission check. */
	JUDGE(r, syscall(SYS_pivot_root, "/airlock-probe-absent", "/airlock-probe-absent"),
	      ENOENT, 0);
}

static void child_chroot(struct result *r, const void *arg)
{
	(void)arg;
	JUDGE(r, chroot(scratch_dir), 0);
}

static void t_chroot(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!scratch()) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	in_child_simple(r, child_chroot, NULL);
}

static void child_setns(struct result *r, const void *arg)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	(void)arg;
	if (fd < 0) {
		PROBE_ERROR(r, "open /proc/self/ns/net: %s", errname(errno));
		return;
	}
	/* Re-entering our own namespace changes nothing but needs the same
	 * privilege as entering any other. */
	JUDGE(r, setns(fd, CLONE_NEWNET), 0);
	close(fd);
}

static void t_setns(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	in_child_simple(r, child_setns, NULL);
}

static void child_unshare(struct result *r, const void *arg)
{
	JUDGE(r, unshare(*(const int *)arg), 0);
}

static void t_unshare_user(struct result *r, int argc, char **argv)
{
	static const int flags = CLONE_NEWUSER;

	(void)argc;
	(void)argv;
	in_child_simple(r, child_unshare, &flags);
}

static void t_unshare_mount(struct result *r, int argc, char **argv)
{
	static const int flags = CLONE_NEWNS;

	(void)argc;
	(void)argv;
	in_child_simple(r, child_unshare, &flags);
}

static void t_unshare_net(struct result *r, int argc, char **argv)
{
	static const int flags = CLONE_NEWNET;

	(void)argc;
	(void)argv;
	in_child_simple(r, child_unshare, &flags);
}

static void t_clone_newuser(struct result *r, int argc, char **argv)
{
	long pid;
	int err;

	(void)argc;
	(void)argv;
	fflush(NULL);
	/* Raw clone: libc's wrappers may route around a filtered flag. */
	pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, NULL);
	err = errno;
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	judge(r, pid, err, 0);
}

/* struct clone_args (linux/sched.h), version 0 layout. */
struct probe_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void t_clone3_newuser(struct result *r, int argc, char **argv)
{
	struct probe_clone_args ca;
	long pid;
	int err;

	(void)argc;
	(void)argv;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	fflush(NULL);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	err = errno;
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	/* ENOSYS is what a sandbox should answer: clone3's flags live in
	 * memory seccomp cannot read, so it is refused whole and libc falls
	 * back to clone(2), whose flags the filter can see. */
	judge(r, pid, err, 0);
}

/* ------------------------------------------------------------------------ */
/* Tests: terminals                                                         */
/* ------------------------------------------------------------------------ */

/* TIOCSTI with a NULL buffer: the kernel checks permission (legacy_tiocsti,
 * controlling terminal) before it reads the byte, so EFAULT means a real
 * byte would have been injected, and nothing is. ENOTTY means the filter let
 * the ioctl through to a non-terminal. */
static void tiocsti_null(struct result *r, int fd)
{
	JUDGE(r, ioctl(fd, TIOCSTI, NULL), EFAULT, ENOTTY, 0);
}

/* In a child: a new session whose controlling terminal is a fresh pty of our
 * own, then a real TIOCSTI of one byte into it. Nothing outside sees it. */
static void child_tiocsti_own_pty(struct result *r, const void *arg)
{
	int master, slave;
	const char *name;
	char c = 'x';

	(void)arg;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0) {
		PROBE_ERROR(r, "no pty: open /dev/ptmx: %s", errname(errno));
		return;
	}
	if (grantpt(master) < 0 || unlockpt(master) < 0 || !(name = ptsname(master))) {
		PROBE_ERROR(r, "no pty: %s", errname(errno));
		return;
	}
	if (setsid() < 0) {
		PROBE_ERROR(r, "setsid: %s", errname(errno));
		return;
	}
	slave = open(name, O_RDWR | O_CLOEXEC); /* becomes our controlling tty */
	if (slave < 0) {
		PROBE_ERROR(r, "open %s: %s", name, errname(errno));
		return;
	}
	JUDGE(r, ioctl(slave, TIOCSTI, &c), 0);
}

static void t_tiocsti(struct result *r, int argc, char **argv)
{
	struct result a = {0};
	int fd, sig;

	(void)argc;
	(void)argv;
	if (fcntl(0, F_GETFD) >= 0) {
		tiocsti_null(&a, 0);
		merge(r, isatty(0) ? "fd0(tty)" : "fd0(not a tty)", &a);
	}
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		memset(&a, 0, sizeof(a));
		tiocsti_null(&a, fd);
		merge(r, "/dev/tty", &a);
		close(fd);
	}
	memset(&a, 0, sizeof(a));
	in_child(&a, child_tiocsti_own_pty, NULL, &sig);
	if (a.verdict == VERDICT_NONE)
		PROBE_ERROR(&a, "child killed by %s", signame(sig));
	if (a.verdict == VERDICT_ERROR && strncmp(a.why, "no pty", 6) == 0) {
		/* No pty in this sandbox: the other attempts decide. */
		if (r->verdict == VERDICT_NONE)
			PROBE_ERROR(r, "no terminal to test: %s", a.why);
		return;
	}
	merge(r, "own-pty", &a);
}

static void t_tioclinux(struct result *r, int argc, char **argv)
{
	int fd = fcntl(0, F_GETFD) >= 0 ? 0 : open("/dev/null", O_RDONLY | O_CLOEXEC);

	(void)argc;
	(void)argv;
	if (fd < 0) {
		PROBE_ERROR(r, "no fd to test on");
		return;
	}
	/* NULL subcode pointer: EFAULT on a virtual console, ENOTTY elsewhere;
	 * either way the filter let the ioctl through. */
	JUDGE(r, ioctl(fd, TIOCLINUX, NULL), EFAULT, ENOTTY, EINVAL, 0);
	if (fd != 0)
		close(fd);
}

/* ------------------------------------------------------------------------ */
/* Tests: kernel image, modules, machine state                              */
/* ------------------------------------------------------------------------ */

static void t_kexec_load(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* One segment too many: EINVAL after the CAP_SYS_BOOT check. */
	JUDGE(r,
	      syscall(SYS_kexec_load, 0UL, (unsigned long)KEXEC_SEGMENT_MAX + 1, NULL,
		      (unsigned long)KEXEC_ARCH_DEFAULT),
	      EINVAL, 0);
}

static void t_kexec_file_load(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* An undefined flag: EINVAL after the CAP_SYS_BOOT check. */
	JUDGE(r, syscall(SYS_kexec_file_load, -1, -1, 0UL, NULL, 0x80000000UL), EINVAL, 0);
}

static void t_init_module(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* An empty image: ENOEXEC after the CAP_SYS_MODULE check. */
	JUDGE(r, syscall(SYS_init_module, NULL, 0UL, ""), ENOEXEC, EFAULT, EINVAL, 0);
}

static void t_finit_module(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	JUDGE(r, syscall(SYS_finit_module, -1, "", 0), EBADF, 0);
}

static void t_delete_module(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	JUDGE(r, syscall(SYS_delete_module, "airlock_probe_absent", O_NONBLOCK), ENOENT, 0);
}

static void child_personality(struct result *r, const void *arg)
{
	int old;

	(void)arg;
	/* Turning ASLR off for our children is the classic reason to ask. */
	old = personality(ADDR_NO_RANDOMIZE);
	if (old == -1) {
		BLOCKED(r, "%s", errname(errno));
		return;
	}
	if (personality(0xffffffff) & ADDR_NO_RANDOMIZE)
		ALLOWED(r, "ADDR_NO_RANDOMIZE set");
	else
		BLOCKED(r, "call returned but ADDR_NO_RANDOMIZE is not set");
}

static void t_personality(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	in_child_simple(r, child_personality, NULL);
}

static void t_acct(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* A missing file: ENOENT after the CAP_SYS_PACCT check. Never NULL,
	 * which would switch accounting off. */
	JUDGE(r, syscall(SYS_acct, "/airlock-probe-absent/acct"), ENOENT, 0);
}

static void t_swapon(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	JUDGE(r, swapon("/airlock-probe-absent", 0), ENOENT, 0);
}

static void t_swapoff(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	JUDGE(r, swapoff("/airlock-probe-absent"), ENOENT, 0);
}

static void t_reboot(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* WARNING: never a valid magic pair. The kernel checks CAP_SYS_BOOT
	 * first, then the magic numbers: EINVAL proves the call was allowed
	 * and nothing happens even with no sandbox at all. The command is
	 * CAD_OFF, harmless in any case. */
	JUDGE(r,
	      syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, 0x0badf00d, LINUX_REBOOT_CMD_CAD_OFF, NULL),
	      EINVAL, 0);
}

/* ------------------------------------------------------------------------ */
/* Tests: foreign system-call ABIs                                          */
/* ------------------------------------------------------------------------ */

static void child_x32(struct result *r, const void *arg)
{
	long ret;

	(void)arg;
	ret = syscall(X32_SYSCALL_BIT | SYS_getpid);
	if (ret == getpid())
		ALLOWED(r, "x32 getpid returned our pid");
	else if (ret < 0)
		BLOCKED(r, "%s", errname(errno));
	else
		PROBE_ERROR(r, "x32 getpid returned %ld", ret);
}

static void child_i386(struct result *r, const void *arg)
{
	long ret = I386_NR_GETPID;

	(void)arg;
#if defined(__x86_64__)
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "cc");
#else
	ret = -ENOSYS;
#endif
	if (ret == getpid())
		ALLOWED(r, "int 0x80 getpid returned our pid");
	else if (ret < 0)
		BLOCKED(r, "%s", errname((int)-ret));
	else
		PROBE_ERROR(r, "int 0x80 getpid returned %ld", ret);
}

static void foreign_abi(struct result *r, child_fn fn)
{
	int sig;

	in_child(r, fn, NULL, &sig);
	/* A filter that checks the architecture kills the process (SIGSYS);
	 * a kernel without the ABI fails it (ENOSYS) or faults (SIGSEGV). */
	if (r->verdict == VERDICT_NONE)
		BLOCKED(r, "killed by %s", signame(sig));
}

static void t_x32(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	foreign_abi(r, child_x32);
}

static void t_i386(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	foreign_abi(r, child_i386);
}

/* ------------------------------------------------------------------------ */
/* Tests: privilege and identity                                            */
/* ------------------------------------------------------------------------ */

static void t_open_by_handle(struct result *r, int argc, char **argv)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	int mount_id, mfd;
	long fd;

	(void)argc;
	(void)argv;
	/* The "shocker" escape: a handle names an inode outside our mounts. */
	mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0) {
		PROBE_ERROR(r, "open /: %s", errname(errno));
		return;
	}
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, "/", &h.fh, &mount_id, 0) < 0) {
		/* A made-up handle: ESTALE once past the permission check. */
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
	}
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
	JUDGE(r, fd, ESTALE, EINVAL, 0);
	close_quietly((int)fd);
	close(mfd);
}

static void t_mknod(struct result *r, int argc, char **argv)
{
	char path[PATH_MAX + 8];

	(void)argc;
	(void)argv;
	if (!scratch()) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/dev", scratch_dir);
	/* A character device node for /dev/mem's numbers (1,1): with it, the
	 * device's permissions are whatever we chose. */
	if (mknod(path, S_IFCHR | 0600, makedev(1, 1)) == 0) {
		unlink(path);
		ALLOWED(r, "created a char device node");
		return;
	}
	BLOCKED(r, "%s", errname(errno));
}

static void child_setuid_root(struct result *r, const void *arg)
{
	(void)arg;
	if (getuid() == 0 && geteuid() == 0) {
		ALLOWED(r, "already uid 0");
		return;
	}
	if (setuid(0) == 0 && getuid() == 0)
		ALLOWED(r, "now uid 0");
	else
		BLOCKED(r, "%s", errname(errno));
}

static void t_setuid_root(struct result *r, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	in_child_simple(r, child_setuid_root, NULL);
}

static void t_dev_mem(struct result *r, int argc, char **argv)
{
	static const char *const devs[] = {
		"/dev/mem",  "/dev/kmem", "/dev/port",	  "/dev/sda", "/dev/vda",
		"/dev/xvda", "/dev/hda",  "/dev/nvme0n1", "/dev/dm-0", "/dev/mmcblk0",
	};
	char opened[256] = "", refused[384] = "";
	size_t i;

	(void)argc;
	(void)argv;
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		int fd = open(devs[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		size_t len;
		if (fd >= 0) {
			close(fd);
			len = strlen(opened);
			snprintf(opened + len, sizeof(opened) - len, "%s%s", len ? ", " : "",
				 devs[i]);
		} else if (errno != ENOENT) {
			len = strlen(refused);
			snprintf(refused + len, sizeof(refused) - len, "%s%s %s", len ? ", " : "",
				 devs[i], errname(errno));
		}
	}
	if (opened[0])
		ALLOWED(r, "opened %s", opened);
	else if (refused[0])
		BLOCKED(r, "%s", refused);
	else
		BLOCKED(r, "ENOENT: none present");
}

static void t_caps(struct result *r, int argc, char **argv)
{
	static const char *const keys[] = {"CapInh", "CapPrm", "CapEff", "CapBnd",
					   "CapAmb", "NoNewPrivs", "Seccomp"};
	char buf[8192], out[400] = "";
	bool any_cap = false, nnp = false;
	size_t i, found = 0;

	(void)argc;
	(void)argv;
	if (read_small_file("/proc/self/status", buf, sizeof(buf)) < 0) {
		PROBE_ERROR(r, "read /proc/self/status: %s", errname(errno));
		return;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char pat[32], *line, *val, *eol;
		size_t olen = strlen(out);
		snprintf(pat, sizeof(pat), "\n%s:", keys[i]);
		line = strstr(buf, pat);
		if (!line)
			continue;
		found++;
		val = line + strlen(pat);
		val += strspn(val, " \t");
		eol = strchr(val, '\n');
		if (eol)
			*eol = '\0';
		snprintf(out + olen, sizeof(out) - olen, "%s%s=%s", olen ? " " : "", keys[i], val);
		if (strncmp(keys[i], "Cap", 3) == 0 && strtoull(val, NULL, 16) != 0)
			any_cap = true;
		if (strcmp(keys[i], "NoNewPrivs") == 0 && strcmp(val, "1") == 0)
			nnp = true;
		if (eol)
			*eol = '\n';
	}
	if (found < 6)
		PROBE_ERROR(r, "unexpected /proc/self/status: %s", out);
	else if (!any_cap && nnp)
		BLOCKED(r, "%s", out);
	else
		ALLOWED(r, "%s", out);
}

static void t_uid_map(struct result *r, int argc, char **argv)
{
	char buf[4096], flat[512] = "";
	char *line, *save = NULL;
	bool root_mapped = false;

	(void)argc;
	(void)argv;
	if (read_small_file("/proc/self/uid_map", buf, sizeof(buf)) < 0) {
		PROBE_ERROR(r, "read /proc/self/uid_map: %s", errname(errno));
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long in, out, count;
		size_t len = strlen(flat);
		if (sscanf(line, "%lu %lu %lu", &in, &out, &count) != 3)
			continue;
		snprintf(flat + len, sizeof(flat) - len, "%s%lu %lu %lu", len ? ", " : "", in, out,
			 count);
		if (out == 0)
			root_mapped = true;
	}
	/* Host root reachable through the mapping means a kernel bug in any
	 * namespace-aware check becomes a host-root bug. */
	if (root_mapped)
		ALLOWED(r, "uid=%u euid=%u map: %s", getuid(), geteuid(), flat);
	else
		BLOCKED(r, "uid=%u euid=%u map: %s", getuid(), geteuid(), flat);
}

static void t_fds(struct result *r, int argc, char **argv)
{
	char list[512] = "";
	struct rlimit rl;
	long max, fd;
	size_t n = 0;

	(void)argc;
	(void)argv;
	/* fcntl over the whole table, so the test works without /proc. */
	max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
			      rl.rlim_cur < 1048576
		      ? (long)rl.rlim_cur
		      : 1048576;
	for (fd = 3; fd < max; fd++) {
		char link[64], target[256] = "?";
		ssize_t len;
		size_t l;
		if (fcntl((int)fd, F_GETFD) < 0)
			continue;
		n++;
		snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len >= 0)
			target[len] = '\0';
		l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s%ld -> %s", l ? ", " : "", fd, target);
	}
	if (n)
		ALLOWED(r, "%zu inherited: %s", n, list);
	else
		BLOCKED(r, "only 0, 1, 2 open");
}

struct proc_entry {
	pid_t pid, ppid, sid;
	char comm[32];
};

static pid_t proc_parent(const struct proc_entry *procs, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (procs[i].pid == pid)
			return procs[i].ppid;
	return 0;
}

/* Is `a` an ancestor of `b` (bounded walk: ppid data is a snapshot)? */
static bool proc_is_ancestor(const struct proc_entry *procs, size_t n, pid_t a, pid_t b)
{
	pid_t q = proc_parent(procs, n, b);
	int depth;

	for (depth = 0; q > 0 && depth < 256; depth++) {
		if (q == a)
			return true;
		q = proc_parent(procs, n, q);
	}
	return false;
}

static void t_proc_host(struct result *r, int argc, char **argv)
{
	struct proc_entry *procs = NULL;
	size_t n = 0, cap = 0, i, foreign = 0;
	char list[400] = "";
	pid_t self = getpid(), sid = getsid(0);
	struct dirent *de;
	DIR *d;

	(void)argc;
	(void)argv;
	d = opendir("/proc");
	if (!d) {
		BLOCKED(r, "no /proc: %s", errname(errno));
		return;
	}
	while ((de = readdir(d))) {
		char path[300], buf[512], *lp, *rp;
		long pid;
		if (!parse_long(de->d_name, 1, INT_MAX, &pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_small_file(path, buf, sizeof(buf)) < 0)
			continue;
		lp = strchr(buf, '(');
		rp = strrchr(buf, ')');
		if (!lp || !rp || rp < lp)
			continue;
		if (n == cap) {
			struct proc_entry *np;
			cap = cap ? cap * 2 : 64;
			np = realloc(procs, cap * sizeof(*procs));
			if (!np)
				break;
			procs = np;
		}
		procs[n].pid = (pid_t)pid;
		snprintf(procs[n].comm, sizeof(procs[n].comm), "%.*s", (int)(rp - lp - 1), lp + 1);
		procs[n].ppid = procs[n].sid = 0;
		sscanf(rp + 1, " %*c %d %*d %d", &procs[n].ppid, &procs[n].sid);
		n++;
	}
	closedir(d);
	/* Ours: pid 1 and the helpers it keeps in its own session (the guard
	 * of filesystem.protect), ourselves, our ancestors (the shell that ran
	 * us), our descendants, and our session (the shell's other jobs).
	 * Anything else is somebody else's process. */
	for (i = 0; i < n; i++) {
		pid_t p = procs[i].pid;
		size_t len = strlen(list);

		if (p == 1 || (procs[i].ppid == 1 && procs[i].sid == 1) || p == self || procs[i].sid == sid ||
		    proc_is_ancestor(procs, n, p, self) || proc_is_ancestor(procs, n, self, p))
			continue;
		foreign++;
		if (foreign <= 8)
			snprintf(list + len, sizeof(list) - len, "%s%d(%s)", len ? " " : "", (int)p,
				 procs[i].comm);
	}
	free(procs);
	if (foreign)
		ALLOWED(r, "%zu foreign processes visible: %s%s", foreign, list,
			foreign > 8 ? " ..." : "");
	else
		BLOCKED(r, "only pid 1, our ancestors, our session and our children");
}

static void t_core(struct result *r, int argc, char **argv)
{
	struct rlimit rl;
	int dumpable;

	(void)argc;
	(void)argv;
	if (getrlimit(RLIMIT_CORE, &rl) < 0) {
		PROBE_ERROR(r, "getrlimit: %s", errname(errno));
		return;
	}
	/* Try to raise the soft limit to the hard one: a sandbox must set both. */
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_CORE, &rl);
	getrlimit(RLIMIT_CORE, &rl);
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (rl.rlim_cur == 0)
		BLOCKED(r, "RLIMIT_CORE hard limit 0 (dumpable=%d)", dumpable);
	else if (rl.rlim_cur == RLIM_INFINITY)
		ALLOWED(r, "RLIMIT_CORE unlimited (dumpable=%d)", dumpable);
	else
		ALLOWED(r, "RLIMIT_CORE %llu (dumpable=%d)", (unsigned long long)rl.rlim_cur,
			dumpable);
}

static void t_net_ifaces(struct result *r, int argc, char **argv)
{
	char buf[8192], names[256] = "";
	char *line, *save = NULL;
	int lineno = 0;
	bool others = false;

	(void)argc;
	(void)argv;
	if (read_small_file("/proc/net/dev", buf, sizeof(buf)) < 0) {
		PROBE_ERROR(r, "read /proc/net/dev: %s", errname(errno));
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		char *name = line + strspn(line, " ");
		size_t len = strlen(names);
		if (++lineno <= 2 || !colon)
			continue;
		*colon = '\0';
		snprintf(names + len, sizeof(names) - len, "%s%s", len ? " " : "", name);
		if (strcmp(name, "lo") != 0)
			others = true;
	}
	if (others)
		ALLOWED(r, "interfaces: %s", names);
	else
		BLOCKED(r, "interfaces: %s", names[0] ? names : "none");
}

/* ------------------------------------------------------------------------ */
/* Tests: files                                                             */
/* ------------------------------------------------------------------------ */

static void t_read(struct result *r, int argc, char **argv)
{
	struct stat st;
	char buf[4096];
	ssize_t n;
	int fd;

	(void)argc;
	fd = open(argv[0], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		BLOCKED(r, "%s", errname(errno));
		return;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0)
			BLOCKED(r, "%s", errname(errno));
		else
			ALLOWED(r, "listed the directory");
		close(fd);
		return;
	}
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		BLOCKED(r, "%s", errname(errno));
	else /* Never the content: it may be a secret. */
		ALLOWED(r, "read %zd bytes", n);
	close(fd);
}

static void t_write(struct result *r, int argc, char **argv)
{
	static const char line[] = "airlock-probe was here\n";
	int fd;

	(void)argc;
	fd = open(argv[0], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0) {
		BLOCKED(r, "%s", errname(errno));
		return;
	}
	if (write_all(fd, line, sizeof(line) - 1))
		ALLOWED(r, NULL);
	else
		BLOCKED(r, "write: %s", errname(errno));
	close(fd);
}

static void t_stat(struct result *r, int argc, char **argv)
{
	struct stat st;

	(void)argc;
	JUDGE(r, lstat(argv[0], &st), 0);
}

static void t_exec(struct result *r, int argc, char **argv)
{
	int p[2], status, child_err = 0;
	ssize_t n;
	pid_t pid;

	(void)argc;
	if (pipe2(p, O_CLOEXEC) < 0) {
		PROBE_ERROR(r, "pipe: %s", errname(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		PROBE_ERROR(r, "fork: %s", errname(errno));
		return;
	}
	if (pid == 0) {
		int e;
		close(p[0]);
		/* Our stdout carries exactly one line: the program's goes to stderr. */
		dup2(2, 1);
		execv(argv[0], argv);
		e = errno;
		_exit(write_all(p[1], &e, sizeof(e)) ? 127 : 126);
	}
	close(p[1]);
	do
		n = read(p[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(child_err))
		BLOCKED(r, "%s", errname(child_err));
	else if (WIFSIGNALED(status))
		ALLOWED(r, "ran; killed by %s", signame(WTERMSIG(status)));
	else
		ALLOWED(r, "ran; exit status %d", WEXITSTATUS(status));
}

/* ------------------------------------------------------------------------ */
/* Tests: network and IPC                                                   */
/* ------------------------------------------------------------------------ */

static void t_connect(struct result *r, int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct pollfd pfd;
	int fd, err = 0;
	socklen_t errlen = sizeof(err);

	(void)argc;
	if (!parse_loopback(argv[0], argv[1], &ss, &len, r))
		return;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
		ALLOWED(r, "connected");
		close(fd);
		return;
	}
	if (errno != EINPROGRESS) {
		BLOCKED(r, "%s", errname(errno));
		close(fd);
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, 3000) <= 0) {
		BLOCKED(r, "ETIMEDOUT: no answer in 3 s");
	} else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) == 0 && err == 0) {
		ALLOWED(r, "connected");
	} else {
		BLOCKED(r, "%s", errname(err));
	}
	close(fd);
}

static void udp_judge(struct result *r, const struct sockaddr_storage *ss, socklen_t len,
		      const void *msg, size_t msglen);

static void t_udp(struct result *r, int argc, char **argv)
{
	static const char msg[] = "airlock-probe-udp";
	struct sockaddr_storage ss;
	socklen_t len;

	(void)argc;
	if (!parse_loopback(argv[0], argv[1], &ss, &len, r))
		return;
	udp_judge(r, &ss, len, msg, sizeof(msg) - 1);
}

static void t_bind(struct result *r, int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	(void)argc;
	if (!parse_loopback("127.0.0.1", argv[0], &ss, &len, r))
		return;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		BLOCKED(r, "%s", errname(errno));
	else if (listen(fd, 1) < 0)
		BLOCKED(r, "listen: %s", errname(errno));
	else
		ALLOWED(r, "listening on 127.0.0.1:%s", argv[0]);
	close(fd);
}

static socklen_t abstract_addr(struct sockaddr_un *sun, const char *name)
{
	size_t len = strlen(name);

	if (len > sizeof(sun->sun_path) - 1)
		len = sizeof(sun->sun_path) - 1;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path + 1, name, len); /* sun_path[0] = '\0': abstract */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
}

static void t_abstract_connect(struct result *r, int argc, char **argv)
{
	struct sockaddr_un sun;
	socklen_t len = abstract_addr(&sun, argv[0]);
	int fd;

	(void)argc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	JUDGE(r, connect(fd, (struct sockaddr *)&sun, len), 0);
	close(fd);
}

static void t_signal(struct result *r, int argc, char **argv)
{
	long pid, sig = 0;

	if (!parse_long(argv[0], INT_MIN, INT_MAX, &pid) ||
	    (argc > 1 && !parse_long(argv[1], 0, 64, &sig))) {
		PROBE_ERROR(r, "usage: signal PID [SIGNUM]");
		return;
	}
	/* Signal 0 by default: the permission check without the delivery. */
	JUDGE(r, kill((pid_t)pid, (int)sig), 0);
}

/* ------------------------------------------------------------------------ */
/* Tests for the conformance suite: egress beyond loopback, secrets         */
/* ------------------------------------------------------------------------ */

/*
 * An IPv4 or IPv6 address the probe may contact: loopback, or an address
 * assigned to an interface of the probe's own network namespace (the
 * conformance suite puts the metadata, private and stand-in public
 * addresses on a namespace of its own). WARNING: for any other address the
 * probe sends nothing, because the packet could leave this machine; it
 * only asks the kernel for a route (a UDP connect sends no packet) and
 * reports a route as "allowed": a sandbox that can route there has not
 * contained egress, whether or not something answers. Returns true when
 * the caller may go ahead; false with r decided otherwise.
 */
static bool parse_contained(const char *host, const char *port, struct sockaddr_storage *ss,
			    socklen_t *len, struct result *r)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_storage local;
	struct result ignored;
	long p;
	int fd;

	memset(&ignored, 0, sizeof(ignored));
	if (parse_loopback(host, port, ss, len, &ignored))
		return true;
	memset(ss, 0, sizeof(*ss));
	if (!parse_long(port, 0, 65535, &p)) {
		PROBE_ERROR(r, "bad port %s", port);
		return false;
	}
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)p);
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*sin6);
	} else {
		PROBE_ERROR(r, "not a numeric address: %s", host);
		return false;
	}
	fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return false;
	}
	/* Binding to an address succeeds only if it is local to this
	 * namespace (no IP_FREEBIND): then nothing sent to it leaves. */
	memcpy(&local, ss, sizeof(local));
	if (local.ss_family == AF_INET)
		((struct sockaddr_in *)&local)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&local)->sin6_port = 0;
	if (bind(fd, (struct sockaddr *)&local, *len) == 0) {
		close(fd);
		return true;
	}
	if (connect(fd, (struct sockaddr *)ss, *len) < 0)
		BLOCKED(r, "no route: %s", errname(errno));
	else
		ALLOWED(r, "a route to %s exists; not contacted, it may lie beyond this machine", host);
	close(fd);
	return false;
}

/* TCP connect with a bounded wait; fd returned connected in *out when
 * out is not NULL. */
static void connect_judge(struct result *r, const struct sockaddr_storage *ss, socklen_t len,
			  int *out)
{
	struct pollfd pfd;
	int fd, err = 0;
	socklen_t errlen = sizeof(err);

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	if (connect(fd, (const struct sockaddr *)ss, len) < 0) {
		if (errno != EINPROGRESS) {
			BLOCKED(r, "%s", errname(errno));
			close(fd);
			return;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 3000) <= 0) {
			BLOCKED(r, "ETIMEDOUT: no answer in 3 s");
			close(fd);
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0 || err != 0) {
			BLOCKED(r, "%s", errname(err ? err : errno));
			close(fd);
			return;
		}
	}
	ALLOWED(r, "connected");
	if (out)
		*out = fd;
	else
		close(fd);
}

/* Send msg as one datagram and wait for any reply. */
static void udp_judge(struct result *r, const struct sockaddr_storage *ss, socklen_t len,
		      const void *msg, size_t msglen)
{
	struct pollfd pfd;
	char buf[512];
	int fd;

	fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	/* Allowed only if a reply comes back: UDP sends "succeed" into the void. */
	if (sendto(fd, msg, msglen, 0, (const struct sockaddr *)ss, len) < 0) {
		BLOCKED(r, "sendto: %s", errname(errno));
		close(fd);
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 2000) <= 0)
		BLOCKED(r, "ETIMEDOUT: no reply in 2 s");
	else if (recv(fd, buf, sizeof(buf), 0) < 0)
		BLOCKED(r, "recv: %s", errname(errno));
	else
		ALLOWED(r, "got a reply");
	close(fd);
}

static void t_connect_local(struct result *r, int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;

	(void)argc;
	if (parse_contained(argv[0], argv[1], &ss, &len, r))
		connect_judge(r, &ss, len, NULL);
}

static void t_udp_local(struct result *r, int argc, char **argv)
{
	static const char msg[] = "airlock-probe-udp";
	struct sockaddr_storage ss;
	socklen_t len;

	(void)argc;
	if (parse_contained(argv[0], argv[1], &ss, &len, r))
		udp_judge(r, &ss, len, msg, sizeof(msg) - 1);
}

/* A DNS query whose name carries LABEL (a stand-in for a stolen secret),
 * sent straight to a resolver: the server learns the label whether or not
 * it answers, so any reply means the exfiltration path is open. */
static void t_dns_exfil(struct result *r, int argc, char **argv)
{
	static const char *const tail[] = {"exfil", "airlock-conformance", "invalid"};
	unsigned char q[300];
	struct sockaddr_storage ss;
	socklen_t len;
	size_t n = 0, l, i;

	(void)argc;
	l = strlen(argv[2]);
	if (l == 0 || l > 63) {
		PROBE_ERROR(r, "LABEL must be 1 to 63 bytes");
		return;
	}
	if (!parse_contained(argv[0], argv[1], &ss, &len, r))
		return;
	/* Header: id, flags RD, one question. */
	memcpy(q, "\x4c\x42\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
	n = 12;
	q[n++] = (unsigned char)l;
	memcpy(q + n, argv[2], l);
	n += l;
	for (i = 0; i < sizeof(tail) / sizeof(tail[0]); i++) {
		l = strlen(tail[i]);
		q[n++] = (unsigned char)l;
		memcpy(q + n, tail[i], l);
		n += l;
	}
	memcpy(q + n, "\x00\x00\x01\x00\x01", 5); /* root, type A, class IN */
	n += 5;
	udp_judge(r, &ss, len, q, n);
}

/* An HTTP request sent straight to HOST:PORT, ignoring HTTP_PROXY: a
 * runtime that filters egress through a proxy must not let it through. */
static void t_http_direct(struct result *r, int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct pollfd pfd;
	const char *proxy = getenv("HTTP_PROXY") ? getenv("HTTP_PROXY") : getenv("http_proxy");
	char req[256], buf[64];
	socklen_t len;
	int fd = -1;
	ssize_t n;

	(void)argc;
	if (!parse_contained(argv[0], argv[1], &ss, &len, r))
		return;
	connect_judge(r, &ss, len, &fd);
	if (fd < 0)
		return;
	snprintf(req, sizeof(req), "GET / HTTP/1.0\r\nHost: %s\r\n\r\n", argv[0]);
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (!write_all(fd, req, strlen(req)))
		BLOCKED(r, "send: %s", errname(errno));
	else if (poll(&pfd, 1, 3000) <= 0)
		BLOCKED(r, "ETIMEDOUT: no response in 3 s");
	else if ((n = read(fd, buf, sizeof(buf))) <= 0)
		BLOCKED(r, "no response: %s", n < 0 ? errname(errno) : "closed");
	else
		ALLOWED(r, "a response came back directly (HTTP_PROXY %s)",
			proxy && proxy[0] ? "was set and ignored" : "unset");
	close(fd);
}

/* Does any variable of our environment hold VALUE? Only its name is
 * printed, never the value. */
static void t_env_secret(struct result *r, int argc, char **argv)
{
	extern char **environ;
	char **e;

	(void)argc;
	if (!argv[0][0]) {
		PROBE_ERROR(r, "empty VALUE");
		return;
	}
	for (e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq && strstr(eq + 1, argv[0])) {
			ALLOWED(r, "in $%.*s", (int)(eq - *e), *e);
			return;
		}
	}
	BLOCKED(r, "not in our environment");
}

/* Is VALUE in the initial environment of a process outside our own
 * session (pid 1 included)? /proc/PID/environ is what a same-uid process
 * reads without ptrace. Only the pid and command name are printed. */
static void t_proc_environ(struct result *r, int argc, char **argv)
{
	size_t vlen = strlen(argv[0]);
	pid_t sid = getsid(0);
	struct dirent *de;
	long readable = 0;
	char *buf;
	DIR *d;

	(void)argc;
	if (vlen == 0) {
		PROBE_ERROR(r, "empty VALUE");
		return;
	}
	buf = malloc(65536);
	if (!buf) {
		PROBE_ERROR(r, "out of memory");
		return;
	}
	d = opendir("/proc");
	if (!d) {
		BLOCKED(r, "no /proc: %s", errname(errno));
		free(buf);
		return;
	}
	while ((de = readdir(d))) {
		char path[300], stat[512], *rp;
		ssize_t n, i;
		long pid, psid = 0;
		if (!parse_long(de->d_name, 1, INT_MAX, &pid) || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_small_file(path, stat, sizeof(stat)) < 0 || !(rp = strrchr(stat, ')')))
			continue;
		/* After "(comm)": state ppid pgrp session. */
		if (sscanf(rp + 1, " %*c %*d %*d %ld", &psid) != 1 || psid == sid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
		n = read_small_file(path, buf, 65536);
		if (n < 0)
			continue;
		readable++;
		for (i = 0; i + (ssize_t)vlen <= n; i++) {
			if (memcmp(buf + i, argv[0], vlen) == 0) {
				char *lp = strchr(stat, '(');
				*rp = '\0';
				ALLOWED(r, "in the environment of pid %ld (%s)", pid, lp ? lp + 1 : "?");
				closedir(d);
				free(buf);
				return;
			}
		}
	}
	closedir(d);
	free(buf);
	BLOCKED(r, "not found; %ld other sessions' environments readable", readable);
}

/* Connect to a pathname unix socket, e.g. a container engine's. */
static void t_unix_connect(struct result *r, int argc, char **argv)
{
	struct sockaddr_un sun;
	int fd;

	(void)argc;
	if (strlen(argv[0]) >= sizeof(sun.sun_path)) {
		PROBE_ERROR(r, "path too long for a unix socket");
		return;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, argv[0]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	JUDGE(r, connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
}

static void t_pids(struct result *r, int argc, char **argv)
{
	pid_t *kids;
	long want, i, made = 0;
	int err = 0;

	(void)argc;
	if (!parse_long(argv[0], 1, 10000, &want)) {
		PROBE_ERROR(r, "usage: pids N (1..10000)");
		return;
	}
	kids = calloc((size_t)want, sizeof(*kids));
	if (!kids) {
		PROBE_ERROR(r, "out of memory");
		return;
	}
	/* Bounded: at most N sleeping children at once, all killed below. */
	fflush(NULL);
	for (i = 0; i < want; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			for (;;)
				pause();
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		kids[made++] = pid;
	}
	for (i = 0; i < made; i++)
		kill_and_reap(kids[i]);
	free(kids);
	if (made == want)
		ALLOWED(r, "created %ld processes", made);
	else
		BLOCKED(r, "%s after %ld of %ld processes", errname(err), made, want);
}

static void t_alloc(struct result *r, int argc, char **argv)
{
	long mib, i;
	size_t len;
	char *p;

	(void)argc;
	if (!parse_long(argv[0], 1, 1L << 20, &mib)) {
		PROBE_ERROR(r, "usage: alloc MIB");
		return;
	}
	len = (size_t)mib << 20;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		BLOCKED(r, "mmap: %s", errname(errno));
		return;
	}
	/* Touch every page, in this process: a memory limit is expected to
	 * end the run, and the sandbox to say so. */
	for (i = 0; i < (long)(len / 4096); i++)
		p[(size_t)i * 4096] = (char)i;
	munmap(p, len);
	ALLOWED(r, "touched %ld MiB", mib);
}

/* ------------------------------------------------------------------------ */
/* Neighbours: what a sandbox must keep working                             */
/* ------------------------------------------------------------------------ */

static void *thread_main(void *arg)
{
	return arg;
}

static void t_clone_ok(struct result *r, int argc, char **argv)
{
	pthread_t th;
	void *ret = NULL;
	long pid;
	int status, e;

	(void)argc;
	(void)argv;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid((pid_t)pid, &status, 0) < 0) {
		BLOCKED(r, "fork: %s", errname(errno));
		return;
	}
	pid = syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid((pid_t)pid, &status, 0) < 0) {
		BLOCKED(r, "clone: %s", errname(errno));
		return;
	}
	/* glibc tries clone3 first and falls back to clone on ENOSYS. */
	e = pthread_create(&th, NULL, thread_main, r);
	if (e != 0) {
		BLOCKED(r, "pthread_create: %s", errname(e));
		return;
	}
	pthread_join(th, &ret);
	ALLOWED(r, "fork, clone and a thread");
}

static void t_ioctl_ok(struct result *r, int argc, char **argv)
{
	struct winsize ws;
	int p[2], avail = -1;

	(void)argc;
	(void)argv;
	if (pipe2(p, O_CLOEXEC) < 0) {
		PROBE_ERROR(r, "pipe: %s", errname(errno));
		return;
	}
	if (write(p[1], "xy", 2) != 2 || ioctl(p[0], FIONREAD, &avail) < 0 || avail != 2) {
		BLOCKED(r, "FIONREAD: %s", errname(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	close(p[0]);
	close(p[1]);
	if (isatty(0)) {
		if (ioctl(0, TIOCGWINSZ, &ws) < 0) {
			BLOCKED(r, "TIOCGWINSZ: %s", errname(errno));
			return;
		}
		ALLOWED(r, "FIONREAD and TIOCGWINSZ (%ux%u)", ws.ws_col, ws.ws_row);
		return;
	}
	ALLOWED(r, "FIONREAD");
}

static void t_personality_query_ok(struct result *r, int argc, char **argv)
{
	int p;

	(void)argc;
	(void)argv;
	/* 0xffffffff only reads the persona: runtimes and libcs do this. */
	p = personality(0xffffffff);
	if (p == -1)
		BLOCKED(r, "%s", errname(errno));
	else
		ALLOWED(r, "persona 0x%x", (unsigned)p);
}

static void t_mount_ns_view_ok(struct result *r, int argc, char **argv)
{
	char buf[16384];
	ssize_t n;
	size_t lines = 0;

	(void)argc;
	(void)argv;
	n = read_small_file("/proc/self/mountinfo", buf, sizeof(buf));
	if (n < 0) {
		BLOCKED(r, "%s", errname(errno));
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		lines += buf[i] == '\n';
	if (lines == 0)
		BLOCKED(r, "empty mountinfo");
	else
		ALLOWED(r, "%zu%s mounts visible", lines, (size_t)n == sizeof(buf) - 1 ? "+" : "");
}

static void t_proc_self_ok(struct result *r, int argc, char **argv)
{
	char buf[8192];

	(void)argc;
	(void)argv;
	if (read_small_file("/proc/self/status", buf, sizeof(buf)) < 0)
		BLOCKED(r, "%s", errname(errno));
	else
		ALLOWED(r, "read /proc/self/status");
}

static void t_cbpf_ok(struct result *r, int argc, char **argv)
{
	struct sock_filter code[] = {BPF_STMT(BPF_RET | BPF_K, 0xffff)};
	struct sock_fprog prog = {.len = 1, .filter = code};
	int sv[2];

	(void)argc;
	(void)argv;
	/* A stream pair: a runtime may refuse datagram unix sockets, whose
	 * sendmsg can carry an address no filter can see (airlock does,
	 * unless the policy names a socket); a filter attaches to either. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		PROBE_ERROR(r, "socketpair: %s", errname(errno));
		return;
	}
	/* Classic BPF socket filters need no bpf(2). */
	JUDGE(r, setsockopt(sv[0], SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)), 0);
	close(sv[0]);
	close(sv[1]);
}

static void t_mkfifo_ok(struct result *r, int argc, char **argv)
{
	char path[PATH_MAX + 8];

	(void)argc;
	(void)argv;
	if (!scratch()) {
		PROBE_ERROR(r, "no writable scratch directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/fifo", scratch_dir);
	JUDGE(r, mkfifo(path, 0600), 0);
	unlink(path);
}

static void t_udp_ok(struct result *r, int argc, char **argv)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	char buf[16];
	struct pollfd pfd;
	int fd;

	(void)argc;
	(void)argv;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	/* A datagram to ourselves over the sandbox's own loopback. */
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0 ||
	    sendto(fd, "ping", 4, 0, (struct sockaddr *)&sin, sizeof(sin)) != 4) {
		BLOCKED(r, "%s", errname(errno));
		close(fd);
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 2000) == 1 && recv(fd, buf, sizeof(buf), 0) == 4)
		ALLOWED(r, "loopback datagram");
	else
		BLOCKED(r, "no datagram back");
	close(fd);
}

/* bind + listen + connect + accept on addr; shared by the unix neighbours. */
static void unix_roundtrip(struct result *r, const struct sockaddr_un *sun, socklen_t len)
{
	int srv, cli = -1, acc = -1;

	srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (srv < 0) {
		BLOCKED(r, "socket: %s", errname(errno));
		return;
	}
	if (bind(srv, (const struct sockaddr *)sun, len) < 0) {
		BLOCKED(r, "bind: %s", errname(errno));
		goto out;
	}
	if (listen(srv, 1) < 0) {
		BLOCKED(r, "listen: %s", errname(errno));
		goto out;
	}
	cli = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cli < 0 || connect(cli, (const struct sockaddr *)sun, len) < 0) {
		BLOCKED(r, "connect: %s", errname(errno));
		goto out;
	}
	acc = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
	if (acc < 0)
		BLOCKED(r, "accept: %s", errname(errno));
	else
		ALLOWED(r, "bound, connected, accepted");
out:
	close_quietly(acc);
	close_quietly(cli);
	close(srv);
}

static void t_unix_ok(struct result *r, int argc, char **argv)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char path[PATH_MAX + 8];
	const char *p;

	if (argc > 0) {
		p = argv[0];
	} else {
		if (!scratch()) {
			PROBE_ERROR(r, "no writable scratch directory");
			return;
		}
		snprintf(path, sizeof(path), "%s/sock", scratch_dir);
		p = path;
	}
	if (strlen(p) >= sizeof(sun.sun_path)) {
		PROBE_ERROR(r, "socket path too long: %s", p);
		return;
	}
	memcpy(sun.sun_path, p, strlen(p) + 1);
	unix_roundtrip(r, &sun, sizeof(sun));
	unlink(p);
}

static void t_abstract_ok(struct result *r, int argc, char **argv)
{
	struct sockaddr_un sun;
	char name[64];
	socklen_t len;

	(void)argc;
	(void)argv;
	snprintf(name, sizeof(name), "airlock-probe-%d-%ld", (int)getpid(), (long)time(NULL));
	len = abstract_addr(&sun, name);
	unix_roundtrip(r, &sun, len);
}

static void t_signal_ok(struct result *r, int argc, char **argv)
{
	pid_t pid = spawn_sleeper();
	int status;

	(void)argc;
	(void)argv;
	if (pid < 0) {
		PROBE_ERROR(r, "fork: %s", errname(errno));
		return;
	}
	if (kill(pid, SIGTERM) < 0) {
		BLOCKED(r, "%s", errname(errno));
		kill_and_reap(pid);
		return;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
		ALLOWED(r, "signalled our own child");
	else
		PROBE_ERROR(r, "child ended with status 0x%x", status);
}

/* ------------------------------------------------------------------------ */
/* Tests: what the agent leaves on the host, and code it runs past the exec */
/* rules (set-ID files, repository redirects, hand-offs behind a link,      */
/* writable mounts, memfds, vsock)                                          */
/* ------------------------------------------------------------------------ */

#include <elf.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/xattr.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* Copy the file src to dst (created, never followed if a link), mode as
 * given. Returns 0 or an errno. */
static int copy_file(const char *src, const char *dst, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in, out, e = 0;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0) {
		e = errno;
		close(in);
		return e;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || !write_all(out, buf, (size_t)n)) {
			e = errno ? errno : EIO;
			break;
		}
	}
	close(in);
	if (close(out) < 0 && !e)
		e = errno;
	return e;
}

/* Write text to path, created (never through a final link). 0 or errno. */
static int put_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	int e = 0;

	if (fd < 0)
		return errno;
	if (!write_all(fd, text, strlen(text)))
		e = errno ? errno : EIO;
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

static int make_dir(const char *path)
{
	return mkdir(path, 0755) < 0 && errno != EEXIST ? errno : 0;
}

/* What happened when a child tried to run something. */
struct run_outcome {
	bool ran;         /* it ran and exited 0 */
	bool probe_error; /* the probe could not even try */
	char what[96];
};

typedef void (*exec_fn)(const void *arg); /* returns only on failure */

/* Run fn in a child whose stdout and stderr are /dev/null (our stdout
 * carries exactly one line; the loader's complaints name paths of the
 * run, and the exit status says enough) and say what became of it. */
static void run_child(exec_fn fn, const void *arg, struct run_outcome *o)
{
	int p[2], status = 0, child_err = 0;
	ssize_t n;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe2(p, O_CLOEXEC) < 0) {
		o->probe_error = true;
		snprintf(o->what, sizeof(o->what), "pipe: %s", errname(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		o->probe_error = true;
		snprintf(o->what, sizeof(o->what), "fork: %s", errname(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		int e, null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		close(p[0]);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		fn(arg);
		e = errno;
		_exit(write_all(p[1], &e, sizeof(e)) ? 127 : 126);
	}
	close(p[1]);
	do
		n = read(p[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(child_err))
		snprintf(o->what, sizeof(o->what), "%s", errname(child_err));
	else if (WIFSIGNALED(status))
		snprintf(o->what, sizeof(o->what), "killed by %s", signame(WTERMSIG(status)));
	else if (WEXITSTATUS(status) != 0)
		snprintf(o->what, sizeof(o->what), "exit status %d", WEXITSTATUS(status));
	else {
		o->ran = true;
		snprintf(o->what, sizeof(o->what), "ran");
	}
}

static void exec_argv(const void *arg)
{
	char *const *argv = arg;
	execv(argv[0], argv);
}

/* The ELF interpreter (dynamic loader) a 64-bit executable names. */
static bool elf_interp(const char *path, char *out, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(ph)) {
		for (unsigned i = 0; i < eh.e_phnum && !found; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz >= len)
				continue;
			if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
				out[ph.p_filesz] = '\0';
				found = out[ph.p_filesz - 1] == '\0' || strlen(out) == ph.p_filesz;
			}
		}
	}
	close(fd);
	return found;
}

/* "$HOME" and "$TMPDIR" name the probe's own, as the runtime set them. */
static const char *probe_dir(const char *where)
{
	if (strcmp(where, "$HOME") == 0)
		return getenv("HOME");
	if (strcmp(where, "$TMPDIR") == 0)
		return getenv("TMPDIR");
	return where;
}

/* Copy a dynamically linked program (true) into WHERE and run it, directly
 * and, when loader is set, through its dynamic loader: `ld.so PROGRAM` maps
 * the program itself, so an exec rule that looks only at execve's path is
 * passed by it: only a noexec mount, or a refusal to map the file
 * executable, stops the loader. */
static void exec_copy(struct result *r, const char *where, bool loader)
{
	static const char *const sources[] = { "/bin/true", "/usr/bin/true" };
	char interp[PATH_MAX], copy[PATH_MAX];
	const char *src = NULL, *dir = probe_dir(where);
	struct run_outcome d, l;
	int e;

	if (!dir || !dir[0]) {
		PROBE_ERROR(r, "%s is not set", where);
		return;
	}
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]) && !src; i++)
		if (elf_interp(sources[i], interp, sizeof(interp)))
			src = sources[i];
	if (!src) {
		PROBE_ERROR(r, "no dynamically linked true to copy");
		return;
	}
	snprintf(copy, sizeof(copy), "%s/airlock-probe-exec.%d", dir, (int)getpid());
	e = copy_file(src, copy, 0755);
	if (e) {
		unlink(copy);
		BLOCKED(r, "copy: %s", errname(e));
		return;
	}
	char *dargv[] = { copy, NULL };
	char *largv[] = { interp, copy, NULL };
	run_child(exec_argv, dargv, &d);
	if (loader)
		run_child(exec_argv, largv, &l);
	unlink(copy);
	if (d.probe_error || (loader && l.probe_error)) {
		PROBE_ERROR(r, "%s", d.probe_error ? d.what : l.what);
		return;
	}
	if (!loader) {
		if (d.ran)
			ALLOWED(r, "ran");
		else
			BLOCKED(r, "%s", d.what);
		return;
	}
	/* The reason names no path of the run: the line's template does. */
	set_verdict(r, d.ran || l.ran ? VERDICT_ALLOWED : VERDICT_BLOCKED, "directly %s; through %s %s", d.what,
		    interp, l.what);
}

static void t_exec_copy(struct result *r, int argc, char **argv)
{
	(void)argc;
	exec_copy(r, argv[0], true);
}

static void t_exec_copy_ok(struct result *r, int argc, char **argv)
{
	(void)argc;
	exec_copy(r, argv[0], false);
}

struct fd_exec {
	int fd;
	int how; /* 0 fexecve, 1 execveat(AT_EMPTY_PATH), 2 /proc/self/fd/N */
};

static void exec_fd(const void *arg)
{
	const struct fd_exec *x = arg;
	char *argv[] = { (char *)"airlock-probe", (char *)"list", NULL };
	char path[64];

	switch (x->how) {
	case 0:
		fexecve(x->fd, argv, environ);
		break;
	case 1:
		syscall(SYS_execveat, x->fd, "", argv, environ, AT_EMPTY_PATH);
		break;
	default:
		snprintf(path, sizeof(path), "/proc/self/fd/%d", x->fd);
		execve(path, argv, environ);
		break;
	}
}

/* Bytes that never were a file run as a program: a copy of the probe in a
 * memfd, run three ways, with the default flags and with MFD_EXEC (which a
 * vm.memfd_noexec of 1 would otherwise turn into a sealed, non-executable
 * memfd). */
static void t_memfd_exec(struct result *r, int argc, char **argv)
{
	static const struct {
		unsigned flags;
		const char *name;
	} kinds[] = { { MFD_CLOEXEC, "memfd" }, { MFD_CLOEXEC | MFD_EXEC, "memfd(MFD_EXEC)" } };
	static const char *const hows[] = { "fexecve", "execveat", "/proc/self/fd" };
	bool ran = false;

	(void)argc;
	(void)argv;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int fd = memfd_create("airlock-probe", kinds[k].flags);
		if (fd < 0) {
			append_why(r, "%s%s: %s", r->why[0] ? "; " : "", kinds[k].name, errname(errno));
			continue;
		}
		{
			char buf[65536];
			ssize_t n;
			int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
			if (in < 0) {
				PROBE_ERROR(r, "open /proc/self/exe: %s", errname(errno));
				close(fd);
				return;
			}
			while ((n = read(in, buf, sizeof(buf))) > 0)
				if (!write_all(fd, buf, (size_t)n))
					break;
			close(in);
			if (n != 0) {
				PROBE_ERROR(r, "copy into the memfd: %s", errname(errno));
				close(fd);
				return;
			}
		}
		for (int how = 0; how < 3; how++) {
			struct fd_exec x = { fd, how };
			struct run_outcome o;
			run_child(exec_fd, &x, &o);
			if (o.probe_error) {
				PROBE_ERROR(r, "%s", o.what);
				close(fd);
				return;
			}
			ran |= o.ran;
			append_why(r, "%s%s %s: %s", r->why[0] ? "; " : "", kinds[k].name, hows[how], o.what);
		}
		close(fd);
	}
	r->verdict = ran ? VERDICT_ALLOWED : VERDICT_BLOCKED;
}

/* The neighbour: a memfd as programs use one (shared memory, sealed
 * buffers), never executed. */
static void t_memfd_ok(struct result *r, int argc, char **argv)
{
	char buf[4096], *map;
	int fd;

	(void)argc;
	(void)argv;
	fd = memfd_create("airlock-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		BLOCKED(r, "memfd_create: %s", errname(errno));
		return;
	}
	memset(buf, 'a', sizeof(buf));
	if (!write_all(fd, buf, sizeof(buf))) {
		BLOCKED(r, "write: %s", errname(errno));
		close(fd);
		return;
	}
	map = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		BLOCKED(r, "mmap: %s", errname(errno));
		close(fd);
		return;
	}
	if (map[0] == 'a' && fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK) == 0)
		ALLOWED(r, "written, mapped and sealed");
	else
		BLOCKED(r, "seal: %s", errname(errno));
	munmap(map, sizeof(buf));
	close(fd);
}

/* vsock is not namespaced: on a virtual machine it reaches the
 * hypervisor's services past any network namespace and proxy. Only the
 * socket is created; nothing is ever sent. */
static void t_vsock(struct result *r, int argc, char **argv)
{
	static const struct {
		int type;
		const char *name;
	} types[] = { { SOCK_STREAM, "stream" }, { SOCK_DGRAM, "dgram" }, { SOCK_SEQPACKET, "seqpacket" } };
	bool made = false;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int fd = socket(AF_VSOCK, types[i].type | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			made = true;
			close(fd);
			append_why(r, "%s%s: created", r->why[0] ? "; " : "", types[i].name);
		} else {
			append_why(r, "%s%s: %s", r->why[0] ? "; " : "", types[i].name, errname(errno));
		}
	}
	r->verdict = made ? VERDICT_ALLOWED : VERDICT_BLOCKED;
}

/* Set-ID files planted where the host's users find them: every way a mode
 * with S_ISUID or S_ISGID reaches the kernel (the chmod family, open and
 * mknod with such a mode, mkdir, and chmod of a directory), and file
 * capabilities (security.capability). Judged by the bits found afterwards;
 * the conformance suite looks again from the host.
 *
 * WARNING: the modes give no one but the owner any access (04700, not
 * 04755): a runtime that lets the bit land must not hand every local user a
 * set-uid copy of this probe while the run lasts. */
static void t_setid_plant(struct result *r, int argc, char **argv)
{
	enum how { CHMOD, FCHMOD, FCHMODAT, FCHMODAT2, OPEN, MKNOD, MKDIR, DIRCHMOD, SETCAP };
	static const struct {
		const char *name;
		enum how how;
		mode_t mode;
	} steps[] = {
		{ "chmod-u", CHMOD, 04700 },         { "chmod-g", CHMOD, 02700 },
		{ "fchmod-ug", FCHMOD, 06700 },      { "fchmodat-u", FCHMODAT, 04700 },
		{ "fchmodat2-u", FCHMODAT2, 04700 }, { "open-u", OPEN, 04700 },
		{ "mknod-u", MKNOD, 04600 },         { "mkdir-g", MKDIR, 02700 },
		{ "dir-chmod-g", DIRCHMOD, 02700 },  { "setcap", SETCAP, 0700 },
	};
	const char *dir = argv[0];
	char landed[256] = "";
	int e;

	(void)argc;
	e = make_dir(dir);
	if (e) {
		BLOCKED(r, "mkdir: %s", errname(e));
		return;
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char path[PATH_MAX];
		struct stat st;
		long rc = 0;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, steps[i].name);
		errno = 0;
		switch (steps[i].how) {
		case CHMOD:
		case FCHMOD:
		case FCHMODAT:
		case FCHMODAT2:
			e = copy_file("/proc/self/exe", path, 0700);
			if (e) {
				errno = e;
				rc = -1;
				break;
			}
			if (steps[i].how == CHMOD)
				rc = chmod(path, steps[i].mode);
			else if (steps[i].how == FCHMODAT)
				rc = fchmodat(AT_FDCWD, path, steps[i].mode, 0);
			else if (steps[i].how == FCHMODAT2)
				rc = syscall(SYS_fchmodat2, AT_FDCWD, path, steps[i].mode, 0);
			else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
				rc = -1;
			else {
				rc = fchmod(fd, steps[i].mode);
				e = errno;
				close(fd);
				errno = e;
			}
			break;
		case OPEN:
			e = copy_file("/proc/self/exe", path, steps[i].mode);
			errno = e;
			rc = e ? -1 : 0;
			break;
		case MKNOD:
			rc = mknod(path, S_IFREG | steps[i].mode, 0);
			break;
		case MKDIR:
			rc = mkdir(path, steps[i].mode);
			break;
		case DIRCHMOD:
			rc = mkdir(path, 0700) < 0 ? -1 : chmod(path, steps[i].mode);
			break;
		case SETCAP: {
			/* File capabilities are set-uid by another name: a
			 * VFS_CAP_REVISION_2 entry, CAP_SETUID permitted and
			 * effective, for whoever runs the file. */
			static const uint32_t cap[5] = { 0x02000001, 1u << 7, 0, 0, 0 };
			e = copy_file("/proc/self/exe", path, steps[i].mode);
			errno = e;
			rc = e ? -1 : setxattr(path, "security.capability", cap, sizeof(cap), 0);
			break;
		}
		}
		e = errno;
		if (lstat(path, &st) == 0 &&
		    ((st.st_mode & (S_ISUID | S_ISGID)) || lgetxattr(path, "security.capability", NULL, 0) > 0)) {
			snprintf(landed + strlen(landed), sizeof(landed) - strlen(landed), "%s%s",
				 landed[0] ? ", " : "", steps[i].name);
			continue;
		}
		append_why(r, "%s%s: %s", r->why[0] ? "; " : "", steps[i].name,
			   rc < 0 ? errname(e) : "the bit was dropped");
	}
	if (landed[0])
		ALLOWED(r, "set-ID bit or file capabilities on %s", landed);
	else
		r->verdict = VERDICT_BLOCKED;
}

/* Git configuration read from a directory the agent controls: the host's
 * next git command in the workspace runs its core.fsmonitor. KIND:
 * "commondir" (.git/commondir pointing elsewhere), "gitfile" (a .git file
 * with gitdir: in a subdirectory), "bare" (a repository's own layout
 * planted in a subdirectory, found by git's discovery). The redirect is
 * written first (for bare: its config last), and its errno is the
 * verdict's reason. */
static void t_git_redirect(struct result *r, int argc, char **argv)
{
	static const char config[] = "[core]\n\trepositoryformatversion = 0\n"
				     "\tfsmonitor = \"echo airlock-probe fsmonitor >&2\"\n";
	/* Git's discovery takes a directory laid out as a repository for
	 * one; worktree = . makes it its own work tree, so git status there
	 * runs the monitor. */
	static const char bare_config[] = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
					  "\tworktree = .\n\tfsmonitor = \"echo airlock-probe fsmonitor >&2\"\n";
	const char *ws = argv[0], *kind = argv[1];
	char own[PATH_MAX], git[PATH_MAX + 32], p[PATH_MAX + 64];
	int e;

	(void)argc;
	snprintf(own, sizeof(own), "%s/.airlock-probe-git", ws);
	if (strcmp(kind, "commondir") == 0 || strcmp(kind, "gitfile") == 0) {
		bool common = kind[0] == 'c';
		int et = 0;
		/* The redirect first, whatever becomes of the directory it
		 * points at: a runtime that refuses only the directory's shape
		 * still lets the pointer land, and the agent may finish the
		 * directory later or by another road. */
		if (common) {
			snprintf(p, sizeof(p), "%s/.git/commondir", ws);
			e = put_text(p, "../.airlock-probe-git/common\n", 0644);
		} else {
			snprintf(p, sizeof(p), "%s/lib", ws);
			e = make_dir(p);
			snprintf(p, sizeof(p), "%s/lib/.git", ws);
			if (!e)
				e = put_text(p, "gitdir: ../.airlock-probe-git/gitdir\n", 0644);
		}
		snprintf(git, sizeof(git), "%s/%s", own, common ? "common" : "gitdir");
		static const char *const subdirs[] = { "", "/hooks", "/objects", "/refs" };
		et = make_dir(own);
		for (size_t i = 0; !et && i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
			snprintf(p, sizeof(p), "%s%s", git, subdirs[i]);
			et = make_dir(p);
		}
		if (!et) {
			snprintf(p, sizeof(p), "%s/HEAD", git);
			et = put_text(p, "ref: refs/heads/main\n", 0644);
		}
		if (!et) {
			snprintf(p, sizeof(p), "%s/config", git);
			et = put_text(p, config, 0644);
		}
		if (e)
			BLOCKED(r, "%s; the directory it points at: %s", errname(e), et ? errname(et) : "made");
		else if (et)
			ALLOWED(r, "%s written; the directory it points at: %s", kind, errname(et));
		else
			ALLOWED(r, "%s written", kind);
		return;
	}
	if (strcmp(kind, "bare") == 0) {
		static const char *const subdirs[] = { "", "/objects", "/refs", "/hooks" };
		e = 0;
		for (size_t i = 0; !e && i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
			snprintf(p, sizeof(p), "%s/tools%s", ws, subdirs[i]);
			e = make_dir(p);
		}
		if (!e) {
			snprintf(p, sizeof(p), "%s/tools/HEAD", ws);
			e = put_text(p, "ref: refs/heads/main\n", 0644);
		}
		if (!e) {
			snprintf(p, sizeof(p), "%s/tools/config", ws);
			e = put_text(p, bare_config, 0644);
		}
		if (e)
			BLOCKED(r, "%s", errname(e));
		else
			ALLOWED(r, "%s written", kind);
		return;
	}
	PROBE_ERROR(r, "unknown kind %s (commondir, gitfile, bare)", kind);
}

/* A hand-off directory reached through a link: DIR/LINK -> inner, with
 * inner/tasks.json running a task when the folder opens. ORDER "first"
 * makes the link and writes through it; "last" writes inner/tasks.json
 * under its innocent name, then makes the link; "rename" makes the link
 * under an innocent name and renames it to LINK; "into" is the other way
 * round: LINK, an innocent name, leads to DIR/.vscode, and tasks.json is
 * written through it. */
static void t_handoff_symlink(struct result *r, int argc, char **argv)
{
	static const char tasks[] =
		"{\"version\": \"2.0.0\", \"tasks\": [{\"label\": \"airlock-probe\", \"type\": \"shell\", "
		"\"command\": \"echo airlock-probe\", \"runOptions\": {\"runOn\": \"folderOpen\"}}]}\n";
	const char *dir = argv[0], *link = argv[1], *order = argv[2];
	char inner[PATH_MAX], lpath[PATH_MAX], tmp[PATH_MAX], file[PATH_MAX + 16];
	int e;

	(void)argc;
	if (strcmp(order, "first") != 0 && strcmp(order, "last") != 0 && strcmp(order, "rename") != 0 &&
	    strcmp(order, "into") != 0) {
		PROBE_ERROR(r, "ORDER is first, last, rename or into, not %s", order);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s/settings-link", dir);
	snprintf(inner, sizeof(inner), "%s/inner", dir);
	snprintf(lpath, sizeof(lpath), "%s/%s", dir, link);
	if ((e = make_dir(dir)) || (e = make_dir(inner))) {
		BLOCKED(r, "mkdir: %s", errname(e));
		return;
	}
	if (order[0] == 'i') {
		char vs[PATH_MAX + 16];
		snprintf(vs, sizeof(vs), "%s/.vscode", dir);
		if ((e = make_dir(vs))) {
			BLOCKED(r, "mkdir .vscode: %s", errname(e));
			return;
		}
		if (symlink(".vscode", lpath) < 0) {
			BLOCKED(r, "symlink: %s", errname(errno));
			return;
		}
		snprintf(file, sizeof(file), "%s/tasks.json", lpath);
		/* Appended, not truncated: another test may have written
		 * .vscode/tasks.json before and be judged on its line. */
		int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		e = fd < 0 ? errno : write_all(fd, tasks, sizeof(tasks) - 1) ? 0 : (errno ? errno : EIO);
		if (fd >= 0)
			close(fd);
		if (e)
			BLOCKED(r, "tasks.json through %s: %s", link, errname(e));
		else
			ALLOWED(r, "%s -> .vscode: tasks.json written through it", link);
		return;
	}
	if (order[0] == 'f') {
		if (symlink("inner", lpath) < 0) {
			BLOCKED(r, "symlink: %s", errname(errno));
			return;
		}
		snprintf(file, sizeof(file), "%s/tasks.json", lpath);
	} else {
		snprintf(file, sizeof(file), "%s/tasks.json", inner);
	}
	e = put_text(file, tasks, 0644);
	if (e) {
		BLOCKED(r, "tasks.json: %s", errname(e));
		return;
	}
	if (order[0] == 'l' && symlink("inner", lpath) < 0) {
		BLOCKED(r, "symlink: %s", errname(errno));
		return;
	}
	if (order[0] == 'r' && symlink("inner", tmp) < 0) {
		BLOCKED(r, "symlink settings-link: %s", errname(errno));
		return;
	}
	if (order[0] == 'r' && rename(tmp, lpath) < 0) {
		BLOCKED(r, "rename to %s: %s", link, errname(errno));
		return;
	}
	ALLOWED(r, "%s -> inner holds tasks.json", link);
}

/* Neighbour: a link inside the workspace that is no hand-off. */
static void t_symlink_ok(struct result *r, int argc, char **argv)
{
	struct stat st;

	(void)argc;
	if (symlink(argv[1], argv[0]) < 0) {
		BLOCKED(r, "symlink: %s", errname(errno));
		return;
	}
	JUDGE(r, stat(argv[0], &st), 0);
}

/* Helper, run OUTSIDE any sandbox: CMD with one system call refused
 * (ERRNO), as an old kernel or a container's filter would refuse it, so
 * that a test can see what a program does when the kernel says no.
 * A seccomp filter of our own under no_new_privs, inherited by CMD and
 * everything it starts; the call's other ABIs are left alone. */
static int deny_syscall(int argc, char **argv)
{
	static const struct {
		const char *name;
		long nr;
	} calls[] = {
		{ "timerfd_create", SYS_timerfd_create },
		{ "timerfd_settime", SYS_timerfd_settime },
		{ "close_range", SYS_close_range },
	};
	static const struct {
		const char *name;
		int e;
	} errs[] = { { "EMFILE", EMFILE }, { "ENOSYS", ENOSYS }, { "EPERM", EPERM }, { "EINVAL", EINVAL } };
	long nr = -1;
	int e = -1;

	if (argc >= 4 && strcmp(argv[2], "--") == 0) {
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			if (strcmp(argv[0], calls[i].name) == 0)
				nr = calls[i].nr;
		for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
			if (strcmp(argv[1], errs[i].name) == 0)
				e = errs[i].e;
	}
	if (nr < 0 || e < 0) {
		fprintf(stderr, "usage: airlock-probe deny-syscall timerfd_create|timerfd_settime|close_range "
				"EMFILE|ENOSYS|EPERM|EINVAL -- CMD [ARGS...]\n");
		return 2; /* usage, as EXIT_USAGE below */
	}
#if defined(__x86_64__)
	const uint32_t arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
	const uint32_t arch = AUDIT_ARCH_AARCH64;
#else
	fprintf(stderr, "airlock-probe: deny-syscall knows no audit arch for this machine\n");
	return 3; /* as EXIT_PROBE_ERROR below */
#endif
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((uint32_t)e & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = (unsigned short)(sizeof(f) / sizeof(f[0])), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		fprintf(stderr, "airlock-probe: cannot load the filter: %s\n", errname(errno));
		return 3; /* as EXIT_PROBE_ERROR below */
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "airlock-probe: %s: %s\n", argv[3], errname(errno));
	return 127;
}

/* Neighbour: a script of the agent's made executable (chmod +x). */
static void t_chmod_ok(struct result *r, int argc, char **argv)
{
	struct stat st;
	int e;

	(void)argc;
	e = put_text(argv[0], "#!/bin/sh\nexit 0\n", 0644);
	if (e) {
		BLOCKED(r, "create: %s", errname(e));
		return;
	}
	if (chmod(argv[0], 0755) < 0) {
		BLOCKED(r, "chmod: %s", errname(errno));
		return;
	}
	if (stat(argv[0], &st) == 0 && (st.st_mode & S_IXUSR))
		ALLOWED(r, NULL);
	else
		BLOCKED(r, "the mode did not change");
}

/* ------------------------------------------------------------------------ */
/* Tests: the system-call filter's allow-list (calls it does not know,      */
/* socket families, set-ID modes through every creating call)               */
/* ------------------------------------------------------------------------ */

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif

/* System calls newer than a filter's list: on Linux 6.8 to 6.15 statmount
 * and listmount read the mount tree, open_tree_attr clones mounts with new
 * attributes, the *xattrat calls and file_setattr change files. Each gets
 * arguments that fail on a NULL pointer or a bad descriptor, so a kernel
 * that runs it answers EFAULT, EBADF or EINVAL ("reached"), never changes
 * anything. ENOSYS or EPERM is a refusal (on a kernel older than the call,
 * ENOSYS is the kernel's own: the line says which numbers did reach it).
 * 1000 is no call at all on any kernel today. */
static void t_syscall_unknown(struct result *r, int argc, char **argv)
{
	static const struct {
		long nr;
		const char *name;
	} calls[] = {
		{ 457, "statmount" },	  { 458, "listmount" },	   { 463, "setxattrat" },
		{ 464, "getxattrat" },	  { 465, "listxattrat" },  { 466, "removexattrat" },
		{ 467, "open_tree_attr" }, { 468, "file_getattr" }, { 469, "file_setattr" },
		{ 1000, "1000" },
	};
	bool reached = false;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		long rc = syscall(calls[i].nr, -1L, 0L, 0L, 0L, 0L, 0L);
		int e = errno;
		if (rc >= 0 || (e != ENOSYS && e != EPERM)) {
			reached = true;
			append_why(r, "%s%s: reached kernel: %s", r->why[0] ? "; " : "", calls[i].name,
				   rc >= 0 ? "success" : errname(e));
		} else {
			append_why(r, "%s%s: %s", r->why[0] ? "; " : "", calls[i].name, errname(e));
		}
	}
	r->verdict = reached ? VERDICT_ALLOWED : VERDICT_BLOCKED;
}

/* Families a sandbox has no use for; only sockets are created, nothing is
 * bound or sent. A kernel without the family's module says EAFNOSUPPORT
 * too: the e2e suite runs this outside as a control. */
static void t_socket_families(struct result *r, int argc, char **argv)
{
	static const struct {
		long family, type, proto;
		bool pair;
		const char *name;
	} socks[] = {
		{ AF_VSOCK, SOCK_STREAM, 0, false, "vsock" },
		{ AF_ALG, SOCK_SEQPACKET, 0, false, "alg" },
		{ AF_PACKET, SOCK_RAW, 0, false, "packet" },
		{ AF_PACKET, SOCK_DGRAM, 0, false, "packet-dgram" },
		{ AF_XDP, SOCK_RAW, 0, false, "xdp" },
		{ AF_KEY, SOCK_RAW, 2 /* PF_KEY_V2 */, false, "key" },
		{ AF_BLUETOOTH, SOCK_RAW, 0, false, "bluetooth" },
		{ AF_TIPC, SOCK_RDM, 0, false, "tipc" },
		{ AF_TIPC, SOCK_RDM, 0, true, "tipc-pair" },
		{ AF_CAN, SOCK_RAW, 1 /* CAN_RAW */, false, "can" },
		{ AF_NETLINK, SOCK_RAW, NETLINK_AUDIT, false, "netlink-audit" },
		{ AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT, false, "netlink-uevent" },
		{ AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG, false, "netlink-sock-diag" },
		{ AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER, false, "netlink-netfilter" },
		{ AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, false, "netlink-generic" },
	};
	bool made = false;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(socks) / sizeof(socks[0]); i++) {
		int sv[2] = { -1, -1 };
		long rc = socks[i].pair ? syscall(SYS_socketpair, socks[i].family, socks[i].type, socks[i].proto, sv)
					: syscall(SYS_socket, socks[i].family, socks[i].type | SOCK_CLOEXEC, socks[i].proto);
		int e = errno;
		if (rc >= 0) {
			made = true;
			append_why(r, "%s%s: created", r->why[0] ? "; " : "", socks[i].name);
			if (socks[i].pair) {
				close(sv[0]);
				close(sv[1]);
			} else {
				close((int)rc);
			}
		} else {
			append_why(r, "%s%s: %s", r->why[0] ? "; " : "", socks[i].name, errname(e));
		}
	}
	r->verdict = made ? VERDICT_ALLOWED : VERDICT_BLOCKED;
}

/* The families a sandbox needs: unix (stream, seqpacket, a stream pair),
 * inet and inet6, and a netlink route socket that answers an address dump
 * (getaddrinfo's AI_ADDRCONFIG asks exactly that). */
static void t_socket_families_ok(struct result *r, int argc, char **argv)
{
	static const struct {
		int family, type;
		const char *name;
	} socks[] = {
		{ AF_UNIX, SOCK_STREAM, "unix" },     { AF_UNIX, SOCK_SEQPACKET, "unix-seqpacket" },
		{ AF_INET, SOCK_STREAM, "inet" },     { AF_INET, SOCK_DGRAM, "inet-dgram" },
		{ AF_INET6, SOCK_STREAM, "inet6" },   { AF_INET6, SOCK_DGRAM, "inet6-dgram" },
	};
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
	} req = { .nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETADDR,
			  .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 } };
	char buf[8192];
	int sv[2], fd;
	ssize_t n;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(socks) / sizeof(socks[0]); i++) {
		fd = socket(socks[i].family, socks[i].type | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			BLOCKED(r, "%s: %s", socks[i].name, errname(errno));
			return;
		}
		close(fd);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		BLOCKED(r, "socketpair: %s", errname(errno));
		return;
	}
	close(sv[0]);
	close(sv[1]);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		BLOCKED(r, "netlink route: %s", errname(errno));
		return;
	}
	if (send(fd, &req, sizeof(req), 0) < 0 || (n = recv(fd, buf, sizeof(buf), 0)) < (ssize_t)sizeof(struct nlmsghdr)) {
		BLOCKED(r, "netlink route dump: %s", errname(errno));
		close(fd);
		return;
	}
	close(fd);
	ALLOWED(r, "unix, inet, inet6, a unix pair, a netlink route dump");
}

/* Set-ID modes through the calls setid-plant does not make: the raw
 * open, creat, mkdir and mknod (not their *at forms), an O_TMPFILE file,
 * and modes whose set-ID bit sits beside bits the kernel ignores (above
 * 16 and above 32). Judged by the bits found afterwards, as setid-plant;
 * the same owner-only modes. */
static void t_setid_create(struct result *r, int argc, char **argv)
{
	enum how { OPEN, CREAT, MKDIR, MKNOD, TMPFILE, CHMOD_HI16, CHMOD_HI32, OPENAT_HI32 };
	static const struct {
		const char *name;
		enum how how;
		long mode;
	} steps[] = {
		{ "raw-open-u", OPEN, 04700 },       { "raw-creat-g", CREAT, 02700 },
		{ "raw-mkdir-g", MKDIR, 02700 },     { "raw-mknod-u", MKNOD, 04600 },
		{ "tmpfile-u", TMPFILE, 04700 },     { "chmod-hi16-u", CHMOD_HI16, 0x10000L | 04700 },
		{ "chmod-hi32-u", CHMOD_HI32, (1L << 32) | 04700 },
		{ "openat-hi32-g", OPENAT_HI32, (1L << 32) | 02700 },
	};
	const char *dir = argv[0];
	char landed[256] = "";
	int e;

	(void)argc;
	e = make_dir(dir);
	if (e) {
		BLOCKED(r, "mkdir: %s", errname(e));
		return;
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char path[PATH_MAX], fdpath[64];
		struct stat st;
		long rc = -1;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, steps[i].name);
		errno = 0;
		switch (steps[i].how) {
		case OPEN:
			rc = syscall(SYS_open, path, (long)(O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC), steps[i].mode);
			break;
		case CREAT:
			rc = syscall(SYS_creat, path, steps[i].mode);
			break;
		case MKDIR:
			rc = syscall(SYS_mkdir, path, steps[i].mode);
			break;
		case MKNOD:
			rc = syscall(SYS_mknod, path, (long)S_IFREG | steps[i].mode, 0L);
			break;
		case TMPFILE:
			rc = syscall(SYS_openat, (long)AT_FDCWD, dir, (long)(O_TMPFILE | O_WRONLY | O_CLOEXEC),
				     steps[i].mode);
			if (rc >= 0) {
				snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", (int)rc);
				if (linkat(AT_FDCWD, fdpath, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0)
					append_why(r, "%s(%s: linkat %s)", r->why[0] ? "; " : "", steps[i].name,
						   errname(errno));
			}
			break;
		case CHMOD_HI16:
		case CHMOD_HI32:
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
			if (fd < 0)
				break;
			close(fd);
			rc = syscall(SYS_chmod, path, steps[i].mode);
			break;
		case OPENAT_HI32:
			rc = syscall(SYS_openat, (long)AT_FDCWD, path, (long)(O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC),
				     steps[i].mode);
			break;
		}
		e = errno;
		if (rc >= 0 && steps[i].how != MKDIR && steps[i].how != MKNOD && steps[i].how != CHMOD_HI16 &&
		    steps[i].how != CHMOD_HI32)
			close((int)rc);
		if (lstat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
			snprintf(landed + strlen(landed), sizeof(landed) - strlen(landed), "%s%s",
				 landed[0] ? ", " : "", steps[i].name);
			continue;
		}
		append_why(r, "%s%s: %s", r->why[0] ? "; " : "", steps[i].name,
			   rc < 0 ? errname(e) : "the bit was dropped");
	}
	if (landed[0])
		ALLOWED(r, "set-ID bit or file capabilities on %s", landed);
	else
		r->verdict = VERDICT_BLOCKED;
}

/* ------------------------------------------------------------------------ */
/* The test table                                                           */
/* ------------------------------------------------------------------------ */

enum kind {
	KIND_ATTACK,
	KIND_NEIGHBOUR, /* name ends in -ok; exit status inverted */
};

struct probe_test {
	const char *name;
	enum kind kind;
	int min_args, max_args;
	const char *args; /* synopsis */
	void (*run)(struct result *r, int argc, char **argv);
	const char *why; /* what a sandbox that allows it gives away */
};

#define ATTACK(n, f, w) {n, KIND_ATTACK, 0, 0, "", f, w}
#define ATTACK_ARGS(n, lo, hi, a, f, w) {n, KIND_ATTACK, lo, hi, a, f, w}
#define NEIGHBOUR(n, f, w) {n, KIND_NEIGHBOUR, 0, 0, "", f, w}
#define NEIGHBOUR_ARGS(n, lo, hi, a, f, w) {n, KIND_NEIGHBOUR, lo, hi, a, f, w}

static const struct probe_test tests[] = {
	/* Debugging and other processes' memory. */
	ATTACK("ptrace", t_ptrace, "both ptrace tests below"),
	ATTACK("ptrace-traceme", t_ptrace_traceme, "PTRACE_TRACEME: seccomp bypass on old kernels"),
	ATTACK("ptrace-attach", t_ptrace_attach, "attach to our own child: reading and rewriting any process we can reach"),
	ATTACK("process-vm-readv", t_process_vm_readv, "read a child's memory without ptrace"),
	ATTACK("process-vm-writev", t_process_vm_writev, "write a child's memory without ptrace"),
	/* Kernel attack surface. */
	ATTACK("bpf", t_bpf, "both bpf tests below"),
	ATTACK("bpf-prog-load", t_bpf_prog_load, "verifier bugs are a steady source of kernel exploits"),
	ATTACK("bpf-map-create", t_bpf_map_create, "eBPF maps: kernel memory the verifier reasons about"),
	ATTACK("perf-event-open", t_perf_event_open, "perf: side channels and a history of kernel bugs"),
	ATTACK("keyctl", t_keyctl, "keyrings are not namespaced: secrets of other users' sessions"),
	ATTACK("add-key", t_add_key, "add_key: kernel keyring surface"),
	ATTACK("request-key", t_request_key, "request_key: can call out to host helpers"),
	ATTACK("userfaultfd", t_userfaultfd, "userfaultfd(2): widens kernel race windows for exploits"),
	ATTACK("userfaultfd-dev", t_userfaultfd_dev, "/dev/userfaultfd: the same through a device node"),
	ATTACK("io-uring", t_io_uring_setup, "alias of io-uring-setup"),
	ATTACK("io-uring-setup", t_io_uring_setup, "io_uring: bypasses seccomp for the operations it performs"),
	ATTACK("io-uring-enter", t_io_uring_enter, "io_uring_enter reachable"),
	ATTACK("io-uring-register", t_io_uring_register, "io_uring_register reachable"),
	/* Mounts, root, namespaces. */
	ATTACK("mount", t_mount, "mount a tmpfs: reshape the filesystem view"),
	ATTACK("umount", t_umount, "umount2: uncover what the sandbox mounted over"),
	ATTACK("open-tree", t_open_tree, "open_tree(OPEN_TREE_CLONE): detached copies of mounts"),
	ATTACK("move-mount", t_move_mount, "move_mount: attach mounts elsewhere"),
	ATTACK("fsopen", t_fsopen, "fsopen: new filesystem contexts"),
	ATTACK("fsmount", t_fsmount, "fsmount: turn a context into a mount"),
	ATTACK("fspick", t_fspick, "fspick: reconfigure an existing superblock"),
	ATTACK("fsconfig", t_fsconfig, "fsconfig reachable"),
	ATTACK("mount-setattr", t_mount_setattr, "mount_setattr: clear read-only/nosuid/noexec"),
	ATTACK("pivot-root", t_pivot_root, "pivot_root: swap the root"),
	ATTACK("chroot", t_chroot, "chroot: the first step of classic escapes"),
	ATTACK("setns", t_setns, "setns: join another namespace"),
	ATTACK("unshare-user", t_unshare_user, "a nested user namespace gives back every capability over new namespaces"),
	ATTACK("unshare-mount", t_unshare_mount, "a new mount namespace"),
	ATTACK("unshare-net", t_unshare_net, "a new network namespace"),
	ATTACK("clone-newuser", t_clone_newuser, "clone(CLONE_NEWUSER), raw system call"),
	ATTACK("clone3-newuser", t_clone3_newuser, "clone3(CLONE_NEWUSER): flags seccomp cannot see (ENOSYS counts as blocked)"),
	/* Terminals. */
	ATTACK("tiocsti", t_tiocsti, "TIOCSTI: type commands into the user's shell"),
	ATTACK("tioclinux", t_tioclinux, "TIOCLINUX: console selection paste, the same as TIOCSTI"),
	/* Kernel image, modules, machine state. */
	ATTACK("kexec-load", t_kexec_load, "kexec_load: replace the kernel"),
	ATTACK("kexec-file-load", t_kexec_file_load, "kexec_file_load: replace the kernel"),
	ATTACK("init-module", t_init_module, "init_module: load kernel code"),
	ATTACK("finit-module", t_finit_module, "finit_module: load kernel code"),
	ATTACK("delete-module", t_delete_module, "delete_module: unload kernel code"),
	ATTACK("personality", t_personality, "personality(ADDR_NO_RANDOMIZE): ASLR off for what we run"),
	ATTACK("acct", t_acct, "acct: turn process accounting on or off"),
	ATTACK("swapon", t_swapon, "swapon"),
	ATTACK("swapoff", t_swapoff, "swapoff"),
	ATTACK("reboot", t_reboot, "reboot (probed with an invalid magic number, never for real)"),
	/* Foreign system-call ABIs. */
	ATTACK("x32", t_x32, "x32 system calls: a second syscall table a filter may forget"),
	ATTACK("i386", t_i386, "int 0x80: the 32-bit table, different numbers, same kernel"),
	/* Privilege and identity. */
	ATTACK("open-by-handle", t_open_by_handle, "open_by_handle_at: the 'shocker' escape past bind mounts"),
	ATTACK("mknod", t_mknod, "mknod a char device: raw access to hardware"),
	ATTACK("setuid-root", t_setuid_root, "become uid 0"),
	ATTACK("dev-mem", t_dev_mem, "open /dev/mem, /dev/kmem, /dev/port or a disk"),
	ATTACK("caps", t_caps, "any capability, or no_new_privs unset (blocked = none and NoNewPrivs 1)"),
	ATTACK("uid-map", t_uid_map, "host root (uid 0) mapped into our user namespace"),
	ATTACK("fds", t_fds, "file descriptors other than 0, 1, 2 inherited from outside"),
	ATTACK("proc-host", t_proc_host, "processes outside our own tree and session visible in /proc"),
	ATTACK("core", t_core, "core dumps: memory (and secrets) written to disk"),
	ATTACK("net-ifaces", t_net_ifaces, "network interfaces other than lo"),
	/* Files. */
	ATTACK_ARGS("read", 1, 1, "PATH", t_read, "read a file or list a directory (content never printed)"),
	ATTACK_ARGS("write", 1, 1, "PATH", t_write, "create or append to a file"),
	ATTACK_ARGS("stat", 1, 1, "PATH", t_stat, "see that a path exists"),
	ATTACK_ARGS("exec", 1, 64, "PATH [ARGS...]", t_exec, "execute a file (its output goes to stderr)"),
	/* Network and IPC. */
	ATTACK_ARGS("connect", 2, 2, "HOST PORT", t_connect, "TCP connect (loopback addresses only)"),
	ATTACK_ARGS("udp", 2, 2, "HOST PORT", t_udp, "UDP exchange: allowed only if a reply arrives (loopback only)"),
	ATTACK_ARGS("bind", 1, 1, "PORT", t_bind, "TCP bind and listen on 127.0.0.1:PORT"),
	ATTACK_ARGS("abstract-connect", 1, 1, "NAME", t_abstract_connect, "connect to the abstract unix socket @NAME"),
	ATTACK_ARGS("signal", 1, 2, "PID [SIGNUM]", t_signal, "send a signal (default 0: permission check only)"),
	ATTACK_ARGS("connect-local", 2, 2, "HOST PORT", t_connect_local, "TCP connect to loopback or an address of our own namespace (elsewhere: a route counts)"),
	ATTACK_ARGS("udp-local", 2, 2, "HOST PORT", t_udp_local, "UDP exchange with loopback or an address of our own namespace"),
	ATTACK_ARGS("dns-exfil", 3, 3, "HOST PORT LABEL", t_dns_exfil, "a DNS query carrying LABEL straight to a resolver"),
	ATTACK_ARGS("http-direct", 2, 2, "HOST PORT", t_http_direct, "an HTTP request that ignores HTTP_PROXY"),
	ATTACK_ARGS("unix-connect", 1, 1, "PATH", t_unix_connect, "connect to a pathname unix socket (a container engine's)"),
	/* Secrets. */
	ATTACK_ARGS("env-secret", 1, 1, "VALUE", t_env_secret, "VALUE in our environment (only the name is printed)"),
	ATTACK_ARGS("proc-environ", 1, 1, "VALUE", t_proc_environ, "VALUE in the environment of a process outside our session"),
	/* Resources. */
	ATTACK_ARGS("pids", 1, 1, "N", t_pids, "hold N processes at once (all killed afterwards)"),
	ATTACK_ARGS("alloc", 1, 1, "MIB", t_alloc, "allocate and touch MIB mebibytes in this process"),

	/* Neighbours: legitimate operations next to each attack family. */
	NEIGHBOUR("clone-ok", t_clone_ok, "fork, clone without namespace flags, and a thread"),
	NEIGHBOUR("ioctl-ok", t_ioctl_ok, "FIONREAD, and TIOCGWINSZ on a terminal"),
	NEIGHBOUR("personality-query-ok", t_personality_query_ok, "personality(0xffffffff) reads the persona"),
	NEIGHBOUR("mount-ns-view-ok", t_mount_ns_view_ok, "read /proc/self/mountinfo"),
	NEIGHBOUR("proc-self-ok", t_proc_self_ok, "read our own /proc/self/status"),
	NEIGHBOUR("cbpf-ok", t_cbpf_ok, "attach a classic BPF socket filter"),
	NEIGHBOUR("mkfifo-ok", t_mkfifo_ok, "mknod of a FIFO in scratch space"),
	NEIGHBOUR("udp-ok", t_udp_ok, "a UDP datagram to ourselves over loopback"),
	NEIGHBOUR_ARGS("unix-ok", 0, 1, "[PATH]", t_unix_ok, "bind, connect and accept on a pathname unix socket"),
	NEIGHBOUR("abstract-ok", t_abstract_ok, "an abstract unix socket of our own"),
	NEIGHBOUR("signal-ok", t_signal_ok, "signal our own child"),
	NEIGHBOUR_ARGS("read-ok", 1, 1, "PATH", t_read, "read a file that must stay readable"),
	NEIGHBOUR_ARGS("write-ok", 1, 1, "PATH", t_write, "write a file that must stay writable"),
	NEIGHBOUR_ARGS("stat-ok", 1, 1, "PATH", t_stat, "see a path that must stay visible"),
	NEIGHBOUR_ARGS("exec-ok", 1, 64, "PATH [ARGS...]", t_exec, "execute a file that must stay executable"),
	NEIGHBOUR_ARGS("pids-ok", 1, 1, "N", t_pids, "hold N processes at once"),
	NEIGHBOUR_ARGS("alloc-ok", 1, 1, "MIB", t_alloc, "allocate and touch MIB mebibytes"),
	/* What the agent leaves on the host, and code run past the exec rules. */
	ATTACK_ARGS("setid-plant", 1, 1, "DIR", t_setid_plant, "set-ID files made in DIR by chmod, fchmod(at)(2), open, mknod, mkdir, and file capabilities (owner-only modes)"),
	ATTACK_ARGS("git-redirect", 2, 2, "WS commondir|gitfile|bare", t_git_redirect, "git config from a directory of ours: .git/commondir, a gitdir: file, a planted bare repository"),
	ATTACK_ARGS("handoff-symlink", 3, 3, "DIR LINK first|last|rename|into", t_handoff_symlink, "DIR/LINK -> inner holding tasks.json that runs on folder open"),
	ATTACK_ARGS("exec-copy", 1, 1, "DIR|$HOME|$TMPDIR", t_exec_copy, "copy true into DIR, run it directly and through its dynamic loader"),
	ATTACK("memfd-exec", t_memfd_exec, "run a copy of the probe from a memfd (fexecve, execveat, /proc/self/fd)"),
	ATTACK("vsock", t_vsock, "create an AF_VSOCK socket (not namespaced: the hypervisor's services); nothing is sent"),
	NEIGHBOUR_ARGS("exec-copy-ok", 1, 1, "DIR|$HOME|$TMPDIR", t_exec_copy_ok, "copy true into DIR and run it"),
	NEIGHBOUR("memfd-ok", t_memfd_ok, "a memfd written, mapped and sealed, never executed"),
	NEIGHBOUR_ARGS("symlink-ok", 2, 2, "LINK TARGET", t_symlink_ok, "make a link and reach its target"),
	NEIGHBOUR_ARGS("chmod-ok", 1, 1, "PATH", t_chmod_ok, "create a script and chmod 0755 it"),
	/* The system-call filter's allow-list. */
	ATTACK("syscall-unknown", t_syscall_unknown, "calls newer than a filter's list (statmount, listmount, open_tree_attr, *xattrat, file_setattr) and number 1000"),
	ATTACK("socket-families", t_socket_families, "sockets of families no sandbox needs: vsock, alg, packet, xdp, key, bluetooth, tipc, can, netlink other than route"),
	ATTACK_ARGS("setid-create", 1, 1, "DIR", t_setid_create, "set-ID files made in DIR by raw open, creat, mkdir, mknod, O_TMPFILE, modes with high bits"),
	NEIGHBOUR("socket-families-ok", t_socket_families_ok, "unix, inet, inet6 sockets, a unix pair, a netlink route dump"),
};

#define N_TESTS (sizeof(tests) / sizeof(tests[0]))

/* Exit codes. */
#define EXIT_BLOCKED_ATTACK 0
#define EXIT_ALLOWED_ATTACK 1
#define EXIT_USAGE 2
#define EXIT_PROBE_ERROR 3

static int report(const struct probe_test *t, const struct result *r)
{
	switch (r->verdict) {
	case VERDICT_BLOCKED:
		printf("%s: blocked (%s)\n", t->name, r->why[0] ? r->why : "no reason");
		return t->kind == KIND_NEIGHBOUR ? EXIT_ALLOWED_ATTACK : EXIT_BLOCKED_ATTACK;
	case VERDICT_ALLOWED:
		if (r->why[0])
			printf("%s: allowed (%s)\n", t->name, r->why);
		else
			printf("%s: allowed\n", t->name);
		return t->kind == KIND_NEIGHBOUR ? EXIT_BLOCKED_ATTACK : EXIT_ALLOWED_ATTACK;
	case VERDICT_ERROR:
		printf("%s: error %s\n", t->name, r->why);
		return EXIT_PROBE_ERROR;
	case VERDICT_NONE:
		break;
	}
	printf("%s: error the test reached no verdict\n", t->name);
	return EXIT_PROBE_ERROR;
}

static int run_test(const struct probe_test *t, int argc, char **argv)
{
	struct result r;
	int rc;

	memset(&r, 0, sizeof(r));
	t->run(&r, argc, argv);
	rc = report(t, &r);
	fflush(stdout);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Helpers for the test suite: listeners that run OUTSIDE the sandbox       */
/* ------------------------------------------------------------------------ */

static volatile sig_atomic_t serve_stop;

static void on_stop(int sig)
{
	(void)sig;
	serve_stop = 1;
}

/* Serve until SECONDS pass or SIGTERM/SIGINT arrives. */
static int serve_loop(int fd, long seconds, bool stream)
{
	struct timespec start, now;
	long served = 0;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!serve_stop) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= seconds)
			break;
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if (stream) {
			int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				served++;
				if (!write_all(c, "airlock-probe\n", 14))
					served += 0;
				close(c);
			}
		} else {
			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);
			char buf[512];
			ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
			if (n >= 0) {
				served++;
				sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
			}
		}
	}
	printf("served %ld\n", served);
	fflush(stdout);
	close(fd);
	return 0;
}

static int print_bound_port(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	if (getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		return -1;
	printf("port %u\n", ntohs(sin.sin_port));
	fflush(stdout);
	return 0;
}

static int serve_inet(int argc, char **argv, int type)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct result r;
	long seconds;
	int fd, one = 1;

	memset(&r, 0, sizeof(r));
	if (argc != 2 || !parse_long(argv[1], 1, 3600, &seconds) ||
	    !parse_loopback("127.0.0.1", argv[0], &ss, &len, &r)) {
		fprintf(stderr, "usage: airlock-probe serve-tcp|serve-udp PORT SECONDS\n");
		return EXIT_USAGE;
	}
	fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 16) < 0) || print_bound_port(fd) < 0) {
		fprintf(stderr, "airlock-probe: cannot listen: %s\n", errname(errno));
		return EXIT_PROBE_ERROR;
	}
	return serve_loop(fd, seconds, type == SOCK_STREAM);
}

static int serve_tcp(int argc, char **argv)
{
	return serve_inet(argc, argv, SOCK_STREAM);
}

static int serve_udp(int argc, char **argv)
{
	return serve_inet(argc, argv, SOCK_DGRAM);
}

static int serve_abstract(int argc, char **argv)
{
	struct sockaddr_un sun;
	socklen_t len;
	long seconds;
	int fd;

	if (argc != 2 || !parse_long(argv[1], 1, 3600, &seconds)) {
		fprintf(stderr, "usage: airlock-probe serve-abstract NAME SECONDS\n");
		return EXIT_USAGE;
	}
	len = abstract_addr(&sun, argv[0]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, len) < 0 || listen(fd, 16) < 0) {
		fprintf(stderr, "airlock-probe: cannot listen: %s\n", errname(errno));
		return EXIT_PROBE_ERROR;
	}
	printf("listening @%s\n", argv[0]);
	fflush(stdout);
	return serve_loop(fd, seconds, true);
}

static int run_all(int argc, char **argv);
static int run_batch(int argc, char **argv);
static int run_batch_file(int argc, char **argv);
static int list_tests(int argc, char **argv);

struct probe_helper {
	const char *name;
	const char *args;
	int (*main)(int argc, char **argv);
	const char *why;
};

static const struct probe_helper helpers[] = {
	{"list", "", list_tests, "list tests and helpers"},
	{"all", "", run_all, "run every test that takes no argument, each in its own process"},
	{"batch", "TEST [ARGS] [, TEST [ARGS]]...", run_batch, "run the tests given, separated by ',', each in its own process; lines start with '@N '"},
	{"batch-file", "FILE", run_batch_file, "batch, one test per line of FILE, arguments separated by tabs"},
	{"serve-tcp", "PORT SECONDS", serve_tcp, "listen on 127.0.0.1:PORT (0: any), print 'port N', answer connections"},
	{"serve-udp", "PORT SECONDS", serve_udp, "echo datagrams on 127.0.0.1:PORT (0: any), print 'port N'"},
	{"serve-abstract", "NAME SECONDS", serve_abstract, "listen on the abstract unix socket @NAME"},
	{"deny-syscall", "CALL ERRNO -- CMD...", deny_syscall, "run CMD with CALL refused (ERRNO) by a seccomp filter"},
};

static int list_tests(int argc, char **argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	printf("attacks (exit 0 = blocked, 1 = allowed, 3 = error):\n");
	for (i = 0; i < N_TESTS; i++)
		if (tests[i].kind == KIND_ATTACK)
			printf("  %-20s %-16s %s\n", tests[i].name, tests[i].args, tests[i].why);
	printf("neighbours (must succeed: exit 0 = allowed, 1 = blocked, 3 = error):\n");
	for (i = 0; i < N_TESTS; i++)
		if (tests[i].kind == KIND_NEIGHBOUR)
			printf("  %-20s %-16s %s\n", tests[i].name, tests[i].args, tests[i].why);
	printf("helpers (run outside the sandbox):\n");
	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		printf("  %-20s %-16s %s\n", helpers[i].name, helpers[i].args, helpers[i].why);
	return 0;
}

/* Each test in a child of its own, so that one that kills its process (or
 * changes it) cannot disturb the next. Exit 0 when every attack was blocked
 * and every neighbour worked. */
static int run_all(int argc, char **argv)
{
	size_t i;
	int worst = 0;

	(void)argc;
	(void)argv;
	for (i = 0; i < N_TESTS; i++) {
		const struct probe_test *t = &tests[i];
		int status;
		pid_t pid;

		if (t->min_args > 0 || strcmp(t->name, "io-uring") == 0)
			continue;
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			return EXIT_PROBE_ERROR;
		if (pid == 0)
			_exit(run_test(t, 0, NULL));
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status)) {
			printf("%s: error probe killed by %s\n", t->name, signame(WTERMSIG(status)));
			status = EXIT_PROBE_ERROR;
		} else {
			status = WEXITSTATUS(status);
		}
		if (status > worst)
			worst = status;
	}
	return worst;
}

/* The conformance suite starts the probe once through a runtime, so that a
 * runtime that is slow to start is paid for once. Each test runs in a
 * child of its own (a test that kills its process cannot take the rest
 * with it); its line is prefixed with "@N " (N counts from 0) so a missing
 * line cannot shift the others, and "@end" says the batch ran to its end.
 * Exit status: the worst of the tests'. */
static int run_batch(int argc, char **argv)
{
	int worst = 0, start = 0, idx = 0;

	while (start < argc) {
		const struct probe_test *t = NULL;
		int end = start, nargs, status;
		size_t i;
		pid_t pid;

		while (end < argc && strcmp(argv[end], ",") != 0)
			end++;
		nargs = end - start - 1;
		for (i = 0; i < N_TESTS && start < end; i++)
			if (strcmp(argv[start], tests[i].name) == 0)
				t = &tests[i];
		if (!t || nargs < t->min_args || nargs > t->max_args) {
			printf("@%d %s: error unknown test or wrong arguments\n", idx,
			       start < end ? argv[start] : "(empty)");
			status = EXIT_USAGE;
		} else {
			fflush(NULL);
			pid = fork();
			if (pid < 0)
				return EXIT_PROBE_ERROR;
			if (pid == 0) {
				int rc;
				printf("@%d ", idx);
				rc = run_test(t, nargs, argv + start + 1);
				/* _exit skips atexit: remove the test's scratch here. */
				scratch_cleanup();
				_exit(rc);
			}
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			if (WIFSIGNALED(status)) {
				printf("@%d %s: error probe killed by %s\n", idx, t->name,
				       signame(WTERMSIG(status)));
				status = EXIT_PROBE_ERROR;
			} else {
				status = WEXITSTATUS(status);
			}
		}
		if (status > worst)
			worst = status;
		idx++;
		start = end + 1;
	}
	printf("@end\n");
	return worst;
}

/* The same, the tests read from FILE: one per line, the name and its
 * arguments separated by tabs. Some runtimes cap the length of their own
 * command line (firejail: 128 arguments), and the conformance suite's
 * batch is longer than that. */
static int run_batch_file(int argc, char **argv)
{
	static char buf[1 << 20];
	static char *args[16384];
	int nargs = 0;
	ssize_t n;
	char *p, *line;

	if (argc != 1) {
		fprintf(stderr, "usage: airlock-probe batch-file FILE\n");
		return EXIT_USAGE;
	}
	n = read_small_file(argv[0], buf, sizeof(buf));
	if (n < 0 || n == (ssize_t)sizeof(buf) - 1) {
		fprintf(stderr, "airlock-probe: %s: %s\n", argv[0], n < 0 ? errname(errno) : "too long");
		return EXIT_PROBE_ERROR;
	}
	for (p = buf; (line = strsep(&p, "\n"));) {
		char *field;
		if (!*line)
			continue;
		if (nargs > 0)
			args[nargs++] = (char *)",";
		while ((field = strsep(&line, "\t"))) {
			if (nargs >= (int)(sizeof(args) / sizeof(args[0])) - 1) {
				fprintf(stderr, "airlock-probe: %s: too many arguments\n", argv[0]);
				return EXIT_PROBE_ERROR;
			}
			args[nargs++] = field;
		}
	}
	return run_batch(nargs, args);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: airlock-probe TEST [ARGS...]\n"
		   "       airlock-probe list\n"
		   "Attempts one operation for real and prints 'TEST: blocked (WHY)',\n"
		   "'TEST: allowed' or 'TEST: error WHY'.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	/* Our own line must not be lost if the sandbox kills us right after. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (strcmp(argv[1], helpers[i].name) == 0)
			return helpers[i].main(argc - 2, argv + 2);
	for (i = 0; i < N_TESTS; i++) {
		const struct probe_test *t = &tests[i];
		int nargs = argc - 2;

		if (strcmp(argv[1], t->name) != 0)
			continue;
		if (nargs < t->min_args || nargs > t->max_args) {
			fprintf(stderr, "usage: airlock-probe %s %s\n", t->name, t->args);
			return EXIT_USAGE;
		}
		return run_test(t, nargs, argv + 2);
	}
	fprintf(stderr, "airlock-probe: unknown test '%s' (see 'airlock-probe list')\n", argv[1]);
	return EXIT_USAGE;
}
