/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp rules, compiled at build time (see seccomp_gen.c) into the BPF
 * programs the sandbox loads: building them with libseccomp at run time
 * cost over a millisecond per start.
 *
 * seccomp is the last layer, installed after Landlock and no_new_privs.
 *
 * An allow-list: the calls real programs make (allowed[] below) run, a
 * few have their arguments judged, and everything else, including every
 * call newer than this file, returns ENOSYS. The kernel interfaces that
 * have carried most container escapes are named as well (denied[]), so
 * that they are refused with EPERM and recorded rather than passed over
 * in silence: ptrace and cross-process memory, bpf, perf, keyrings,
 * userfaultfd, io_uring, the mount API, namespace creation and entry,
 * terminal injection, module and kexec loading. libseccomp emits the
 * architecture check first; a syscall from a foreign ABI (i386 via int
 * 0x80, x32) kills the process, so no table of numbers here can be
 * sidestepped by switching ABI.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "sandbox/seccomp_rules.h"
#include "util/cleanup.h"

/* O_TMPFILE's own bit: libc's O_TMPFILE (and __O_TMPFILE) include
 * O_DIRECTORY, which a plain directory open carries too. */
#define TMPFILE_BIT 020000000

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

#define NS_FLAGS                                                                                \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	 CLONE_NEWCGROUP | 0x00000080 /* CLONE_NEWTIME */)

/* The allow-list. A call named nowhere in this file returns ENOSYS: one the
 * kernel added after this list was written (listmount, statmount,
 * open_tree_attr on 6.8-6.15) reaches nothing, and programs treat ENOSYS
 * as an older kernel and fall back. Surveyed from what glibc 2.36-2.41,
 * musl, Go, Rust std, Python, Node/V8, the JVM, git, gcc, make and
 * coreutils call, against Docker's default profile and Chromium's
 * baseline policy. Calls that take arguments worth judging (clone, ioctl,
 * personality, socket, the chmod, open and mknod families, memfd_create)
 * are not here: their rules below allow what they allow.
 *
 * Left out on purpose, beside the denied list: modify_ldt (a 16-bit
 * segment surface with its own CVEs), uselib, sysfs, ustat, the
 * x86 thread-area calls (x86_64 programs set %fs with arch_prctl),
 * sethostname and setdomainname (the sandbox holds no capability),
 * fanotify_mark without fanotify_init, memfd_secret, process_madvise and
 * process_mrelease (other processes' memory), lsm_*, the *xattrat calls
 * (their plain forms serve every tool today), file_getattr/file_setattr,
 * and every number not assigned yet. */
static const char *const allowed[] = {
	/* memory */
	"brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "mincore", "msync", "mlock",
	"mlock2", "munlock", "mlockall", "munlockall", "remap_file_pages", "pkey_alloc",
	"pkey_free", "pkey_mprotect", "get_mempolicy", "membarrier", "map_shadow_stack", "mseal",
	/* file descriptors and I/O */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
	"pwritev2", "lseek", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "flock",
	"fsync", "fdatasync", "syncfs", "sync", "sync_file_range", "fallocate", "fadvise64",
	"readahead", "sendfile", "splice", "tee", "vmsplice", "copy_file_range", "pipe", "pipe2",
	"cachestat",
	/* paths (Landlock judges them) */
	"stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access",
	"faccessat", "faccessat2", "getcwd", "chdir", "fchdir", "getdents", "getdents64",
	"readlink", "readlinkat", "truncate", "ftruncate", "unlink", "unlinkat", "rmdir",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "chown",
	"fchown", "lchown", "fchownat", "umask", "utime", "utimes", "utimensat", "futimesat",
	"setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr", "fgetxattr", "listxattr",
	"llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
	"inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	/* execution and processes */
	"execve", "execveat", "fork", "vfork", "exit", "exit_group", "wait4", "waitid", "kill",
	"tkill", "tgkill", "getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp",
	"getsid", "setsid", "set_tid_address", "set_robust_list", "get_robust_list", "rseq",
	"arch_prctl", "prctl", "seccomp", "capget", "capset", "getrlimit", "setrlimit",
	"prlimit64", "getrusage", "times", "uname", "sysinfo", "getcpu", "pidfd_open",
	"pidfd_send_signal", "landlock_create_ruleset", "landlock_add_rule",
	"landlock_restrict_self",
	/* identity (the user namespace maps what may be set) */
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
	"setfsgid", "setgroups",
	/* scheduling */
	"sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
	"sched_setparam", "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
	"sched_get_priority_min", "sched_rr_get_interval", "sched_getattr", "sched_setattr",
	"getpriority", "setpriority", "ioprio_get", "ioprio_set",
	/* signals */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
	"rt_sigqueueinfo", "rt_tgsigqueueinfo", "rt_sigsuspend", "sigaltstack", "pause",
	"signalfd", "signalfd4", "restart_syscall",
	/* time */
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"alarm", "getitimer", "setitimer", "timer_create", "timer_settime", "timer_gettime",
	"timer_getoverrun", "timer_delete", "timerfd_create", "timerfd_settime",
	"timerfd_gettime",
	/* waiting */
	"futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "poll", "ppoll",
	"select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
	/* sockets (socket and socketpair are judged below) */
	"bind", "listen", "accept", "accept4", "getsockname", "getpeername", "setsockopt",
	"getsockopt", "shutdown", "recvfrom", "recvmsg", "recvmmsg", "sendmsg", "sendmmsg",
	/* IPC of the sandbox's own IPC namespace */
	"shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
	"mq_timedreceive", "mq_notify", "mq_getsetattr",
	/* asynchronous I/O (the old interface; io_uring is denied) */
	"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
	/* randomness */
	"getrandom",
};

/* Denied outright, with EPERM (or through the supervisor when tracing). */
static const char *const denied[] = {
	/* another process's memory and execution */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	/* kernel attack surface with a long CVE history */
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "keyctl", "add_key", "request_key",
	/* the mount API, old and new */
	"mount", "umount", "umount2", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
	"fspick", "mount_setattr", "pivot_root", "chroot",
	/* namespaces */
	"setns", "unshare",
	/* the machine itself */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "acct",
	"swapon", "swapoff", "reboot", "syslog", "iopl", "ioperm", "settimeofday", "clock_settime",
	"clock_adjtime", "adjtimex", "quotactl", "quotactl_fd", "lookup_dcookie", "vhangup",
	"nfsservctl", "uselib", "_sysctl", "name_to_handle_at", "open_by_handle_at",
	"fanotify_init", "move_pages", "migrate_pages", "mbind", "set_mempolicy",
	"set_mempolicy_home_node",
};


/* airlock-proxy's own filter (seccomp_rules_build_proxy): what an epoll
 * proxy with worker threads, a thread per name resolution (getaddrinfo
 * and the NSS modules it loads), splice, TLS and a records pipe calls
 * once it serves. Everything else returns ENOSYS, as from an older
 * kernel, so that libc takes its fallback (clone3, openat2, statx). */
static const char *const proxy_allowed[] = {
	/* memory: malloc, the fibers' stacks, thread stacks, dlopen of an
	 * NSS module (mmap and mprotect are judged below) */
	"brk", "munmap", "mremap", "madvise", "map_shadow_stack",
	/* file descriptors and I/O: sockets, the splice pipes, the records
	 * pipe, eventfds */
	"read", "write", "readv", "writev", "pread64", "lseek", "close", "close_range", "dup",
	"dup2", "dup3", "fcntl", "splice", "pipe2", "eventfd2",
	/* the MCP gateway's buffers (proxy/mcp_http.c); never executed, as
	 * nothing is: execve is fatal (a memfd's bytes could still be mapped
	 * executable: the rules below narrow code injection, execve's death
	 * is what stops a program from running) */
	"memfd_create", "ftruncate",
	/* reading name-resolution files and CA directories (Landlock
	 * judges the path; open and openat are judged below) */
	"fstat", "newfstatat", "stat", "lstat", "statx", "statfs", "fstatfs", "access",
	"faccessat", "faccessat2", "readlink", "readlinkat",
	/* threads */
	"exit", "exit_group", "getpid", "gettid", "set_robust_list", "get_robust_list",
	"rseq", "set_tid_address", "arch_prctl", "sched_yield", "sched_getaffinity", "getrlimit",
	"getrusage", "uname", "sysinfo", "getcpu",
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
	/* signals: SIGTERM's handler, SIGPIPE ignored, the fibers' context
	 * switches */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall",
	/* time and waiting */
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "poll", "ppoll",
	"select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "epoll_pwait2",
	/* sockets: the agent's connections, upstreams, the DNS socket, the
	 * resolver's UDP and netlink queries, nscd's or resolved's unix
	 * socket (socket is judged below) */
	"connect", "accept", "accept4", "getsockname", "getpeername", "setsockopt", "getsockopt",
	"shutdown", "recvfrom", "recvmsg", "recvmmsg", "sendto", "sendmsg", "sendmmsg",
	"bind", /* glibc's netlink query for AI_ADDRCONFIG; Landlock refuses a TCP bind */
	/* randomness: OpenSSL's seeding, the placeholders */
	"getrandom",
};

/* Killed outright: calls a proxy never makes, and that a proxy taken over
 * by a hostile request would: run a program (execve: a shell with the
 * supervisor's uid, unprivileged), start a process outside the filter's
 * reach, read or write another process's memory (the supervisor's, same
 * uid), or reach kernel surface with a history of escapes. A process
 * that makes one is compromised: it is not told EPERM to try another
 * way. */
static const char *const proxy_killed[] = {
	"execve", "execveat", "fork", "vfork", "kill", "tkill", "rt_sigqueueinfo",
	"rt_tgsigqueueinfo", "pidfd_open", "pidfd_send_signal", "seccomp",
	"memfd_secret", "setuid", "setgid", "setreuid", "setregid", "setresuid",
	"setresgid", "setfsuid", "setfsgid", "setgroups", "capset", "personality", "chdir",
	"fchdir", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat",
	"unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
	"truncate", "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown",
	"fchownat", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
	"listen", "socketpair", "shmget", "shmat", "msgget", "semget", "mq_open",
};

/* Protected paths (filesystem.protect): every call that can make a name
 * appear goes to the supervisor, which has it performed by the guard
 * (guard.c) after judging the name; an open goes only when it may create
 * (O_CREAT), so reading and writing existing files stay in the kernel
 * (existing protected files are read-only mounts). */
static const char *const creating[] = {
	"creat", "mkdir", "mkdirat", "mknod", "mknodat", "link", "linkat", "symlink", "symlinkat",
	"rename", "renameat", "renameat2",
};

/* Syscalls that take a path Landlock judges and change the tree, or run a
 * program (traced from SECCOMP_TRACE_WRITES on). open and openat are
 * judged by their flags (add_open). */
static const char *const traced_writes[] = {
	"creat", "execve", "execveat", "mkdir", "mkdirat", "mknod", "mknodat",
	"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat", "symlink",
	"symlinkat", "truncate",
};

/* Syscalls that only read or probe (traced at SECCOMP_TRACE_ALL alone). */
static const char *const traced_reads[] = {
	/* Probes: a tool that looks for ~/.gitconfig with access() or stat()
	 * and, not finding it, goes on without it is told nothing; learn mode
	 * must see the probe to suggest the file. newfstatat and statx stop
	 * only when given a path (fstat is newfstatat(fd, "", AT_EMPTY_PATH),
	 * too frequent to stop for). */
	"access", "faccessat", "faccessat2", "stat", "lstat", "newfstatat", "statx",
};

/* Every call no rule names. */
#define DEFAULT_ACTION SCMP_ACT_ERRNO(ENOSYS)

struct rule_ctx {
	scmp_filter_ctx ctx;
	uint32_t deny; /* SCMP_ACT_ERRNO(EPERM) or SCMP_ACT_NOTIFY */
	enum seccomp_trace trace;
	bool protect, sockets;
	/* Per syscall number: 1 has an unconditional rule, 2 conditional ones.
	 * libseccomp lets an unconditional rule swallow every conditional
	 * rule of the same call, whatever the order they were added in (an
	 * ALLOW would silently undo a TIOCSTI or set-ID refusal): the build
	 * fails instead. WARNING: conditional rules of one call with
	 * different actions must not overlap either: libseccomp tests them in
	 * an order of its own and the first that matches wins, so every
	 * builder below makes its cases disjoint. */
	uint8_t kind[8192];
};

static bool in(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}
#define IN(list, name) in((list), ARRAY_SIZE(list), (name))

static int add(struct rule_ctx *rc, uint32_t action, const char *name, unsigned n,
	       const struct scmp_arg_cmp *args, struct error *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	/* Negative: not a syscall on this architecture (libseccomp's
	 * pseudo-numbers), or one newer than libseccomp: ENOSYS either way. */
	if (nr < 0)
		return 0;
	if ((size_t)nr >= sizeof(rc->kind))
		return error_set(err, ERANGE, "seccomp rule for %s: syscall number %d out of range", name, nr);
	uint8_t k = n ? 2 : 1;
	if (rc->kind[nr] && (rc->kind[nr] != k || k == 1))
		return error_set(err, EEXIST, "seccomp rules for %s: an unconditional rule beside others", name);
	rc->kind[nr] = k;
	/* The default action already: libseccomp refuses a rule that says it
	 * again. */
	if (action == DEFAULT_ACTION)
		return 0;
	int r = seccomp_rule_add_array(rc->ctx, action, nr, n, args);
	if (r < 0 && r != -EEXIST)
		return error_sys(err, -r, "seccomp rule for %s", name);
	return 0;
}

/* A call the log must see: at SECCOMP_TRACE_ALL a stop for the tracer
 * (which sees its result at its exit stop); at SECCOMP_TRACE_WRITES a
 * user notification, which the supervisor notes and lets run
 * (ftrace_notified): one round trip, and no tracer in the sandbox's
 * forks, execs and exits. */
static uint32_t traced_action(const struct rule_ctx *rc)
{
	return rc->trace == SECCOMP_TRACE_ALL ? SCMP_ACT_TRACE(0) : SCMP_ACT_NOTIFY;
}

/* What a call that passes every check does: goes to the guard when it can
 * make a name under protection, stops for the tracer when it takes a path
 * Landlock judges, else runs. */
static uint32_t pass(const struct rule_ctx *rc, const char *name)
{
	if (rc->protect && IN(creating, name))
		return SCMP_ACT_NOTIFY;
	if (rc->trace != SECCOMP_TRACE_OFF && IN(traced_writes, name))
		return traced_action(rc);
	if (rc->trace == SECCOMP_TRACE_ALL && IN(traced_reads, name))
		return SCMP_ACT_TRACE(0);
	return SCMP_ACT_ALLOW;
}

/* Set-ID files (as systemd's RestrictSUIDSGID=): a file the agent makes
 * is stored under the workspace owner's id on the host (root's, on a
 * root-owned workspace, through the idmapped mount), so a set-uid or
 * set-gid bit on it is a program any local user runs as that owner. The
 * mode argument modearg is judged after the conditions pre (at most 2):
 * without S_ISUID and S_ISGID the call does ok, with either it is denied.
 * The two cases are disjoint, so no rule can shadow the other. */
static int add_mode(struct rule_ctx *rc, const char *name, uint32_t ok, unsigned modearg,
		    const struct scmp_arg_cmp *pre, unsigned npre, struct error *err)
{
	static const uint64_t bad[] = { S_ISUID, S_ISGID };
	struct scmp_arg_cmp c[3];
	int r;
	for (unsigned i = 0; i < npre; i++)
		c[i] = pre[i];
	c[npre] = SCMP_CMP(modearg, SCMP_CMP_MASKED_EQ, S_ISUID | S_ISGID, 0);
	if ((r = add(rc, ok, name, npre + 1, c, err)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		c[npre] = SCMP_CMP(modearg, SCMP_CMP_MASKED_EQ, bad[i], bad[i]);
		if ((r = add(rc, rc->deny, name, npre + 1, c, err)) < 0)
			return r;
	}
	return 0;
}

/* open and openat: the flags at flagsarg, the mode after them. Without
 * O_CREAT or O_TMPFILE the mode is ignored and the file exists: the call
 * runs; the log sees it (traced_action) at SECCOMP_TRACE_ALL, and at
 * SECCOMP_TRACE_WRITES when it opens for writing or truncates (a read
 * runs unseen). With O_CREAT or O_TMPFILE the mode is judged; under
 * protection an O_CREAT open goes to the guard, which judges the name. */
static int add_open(struct rule_ctx *rc, const char *name, unsigned flagsarg, struct error *err)
{
	const uint64_t mask = O_CREAT | TMPFILE_BIT;
	const uint64_t kinds[] = { O_CREAT, TMPFILE_BIT, O_CREAT | TMPFILE_BIT };
	uint32_t traced = rc->trace != SECCOMP_TRACE_OFF ? traced_action(rc) : SCMP_ACT_ALLOW;
	int r;
	if (rc->trace == SECCOMP_TRACE_WRITES) {
		/* Disjoint cases of the access mode and O_TRUNC beside no
		 * O_CREAT and no O_TMPFILE: O_RDONLY alone runs, the other
		 * seven (O_ACCMODE's value 3 included) stop. */
		const uint64_t rmask = mask | O_ACCMODE | O_TRUNC;
		for (uint64_t acc = 0; acc <= O_ACCMODE; acc++)
			for (int trunc = 0; trunc < 2; trunc++) {
				uint64_t v = acc | (trunc ? O_TRUNC : 0);
				struct scmp_arg_cmp c = SCMP_CMP(flagsarg, SCMP_CMP_MASKED_EQ, rmask, v);
				if ((r = add(rc, v ? traced : SCMP_ACT_ALLOW, name, 1, &c, err)) < 0)
					return r;
			}
	} else {
		struct scmp_arg_cmp c = SCMP_CMP(flagsarg, SCMP_CMP_MASKED_EQ, mask, 0);
		if ((r = add(rc, traced, name, 1, &c, err)) < 0)
			return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		uint32_t ok = (kinds[i] & O_CREAT) && rc->protect ? SCMP_ACT_NOTIFY : traced;
		struct scmp_arg_cmp c = SCMP_CMP(flagsarg, SCMP_CMP_MASKED_EQ, mask, kinds[i]);
		if ((r = add_mode(rc, name, ok, flagsarg + 1, &c, 1, err)) < 0)
			return r;
	}
	return 0;
}

/* The complement of a set of 32-bit values, as disjoint masked compares:
 * walking the bits from the top, every prefix no value in the set shares
 * is one rule. Used where a call must be allowed except for a few values
 * of one argument (libseccomp has no "else"). */
static int add_except32(struct rule_ctx *rc, uint32_t action, const char *name, unsigned arg,
			const uint32_t *vals, size_t nvals, uint32_t mask, uint32_t prefix, int bit,
			struct error *err)
{
	bool any = false;
	for (size_t i = 0; i < nvals; i++)
		any |= (vals[i] & mask) == prefix;
	if (!any) {
		struct scmp_arg_cmp c = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, mask, prefix);
		return add(rc, action, name, 1, &c, err);
	}
	if (bit < 0)
		return 0; /* the value itself: not allowed */
	uint32_t b = 1U << bit;
	int r = add_except32(rc, action, name, arg, vals, nvals, mask | b, prefix, bit - 1, err);
	if (r < 0)
		return r;
	return add_except32(rc, action, name, arg, vals, nvals, mask | b, prefix | b, bit - 1, err);
}

/* clone with any namespace flag: one rule a bit, as a masked compare
 * takes one mask (a namespace is kernel surface, unshare's). */
static int deny_clone_namespaces(struct rule_ctx *rc, struct error *err)
{
	for (int bit = 0; bit < 32; bit++) {
		uint64_t f = 1ULL << bit;
		if (!(NS_FLAGS & f))
			continue;
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, f, f);
		int r = add(rc, rc->deny, "clone", 1, &c, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Socket families (socket and socketpair take the same first three
 * arguments). AF_UNIX, AF_INET and AF_INET6, and AF_NETLINK for
 * NETLINK_ROUTE alone (getaddrinfo's AI_ADDRCONFIG, ip(8), interface
 * lists). Every other family gets EAFNOSUPPORT, as from a kernel without
 * it: AF_VSOCK is not namespaced and reaches the hypervisor's services
 * past the network namespace and the proxy; AF_PACKET, AF_ALG, AF_XDP,
 * AF_KEY, AF_BLUETOOTH, AF_TIPC and the other netlink protocols are
 * kernel surface no agent needs. Values beyond 32 bits (the kernel reads
 * an int) fall outside the allowed ones and are refused. */
static int add_socket(struct rule_ctx *rc, const char *name, struct error *err)
{
	static const uint64_t ok[] = { AF_INET, AF_INET6 };
	const uint32_t refuse = SCMP_ACT_ERRNO(EAFNOSUPPORT);
	int r;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, ok[i]);
		if ((r = add(rc, SCMP_ACT_ALLOW, name, 1, &c, err)) < 0)
			return r;
	}
	/* AF_UNIX by type (the low 4 bits): SOCK_DGRAM, and SOCK_RAW, which
	 * af_unix turns into SOCK_DGRAM, go to the supervisor under the
	 * socket guard (see guard.c: a datagram socket's sendmsg can name
	 * any socket, and no filter sees that address). The three rules
	 * after the first cover the other 14 values. */
	{
		uint32_t dgram = rc->sockets ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW;
		static const uint64_t other[][2] = { { 0xe, 0x0 }, { 0xc, 0x4 }, { 0x8, 0x8 } };
		struct scmp_arg_cmp c[2] = { SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
					     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xe, SOCK_DGRAM) };
		if ((r = add(rc, dgram, name, 2, c, err)) < 0)
			return r;
		for (size_t i = 0; i < ARRAY_SIZE(other); i++) {
			c[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, other[i][0], other[i][1]);
			if ((r = add(rc, SCMP_ACT_ALLOW, name, 2, c, err)) < 0)
				return r;
		}
	}
	{
		struct scmp_arg_cmp c[2] = { SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
					     SCMP_A2(SCMP_CMP_EQ, NETLINK_ROUTE) };
		if ((r = add(rc, SCMP_ACT_ALLOW, name, 2, c, err)) < 0)
			return r;
		c[1] = SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE);
		if ((r = add(rc, refuse, name, 2, c, err)) < 0)
			return r;
	}
	for (uint64_t f = 0; f < AF_NETLINK; f++) {
		if (f == AF_UNIX || f == AF_INET || f == AF_INET6)
			continue;
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, f);
		if ((r = add(rc, refuse, name, 1, &c, err)) < 0)
			return r;
	}
	struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_GT, AF_NETLINK);
	return add(rc, refuse, name, 1, &c, err);
}

/* The ioctl and personality calls that stay refused whatever else runs. */
static int add_ioctl_personality(struct rule_ctx *rc, struct error *err)
{
	int r;

	/* Terminal injection: TIOCSTI pushes bytes into a terminal's input
	 * (CVE-2017-5226 in bubblewrap); TIOCLINUX can do the same on a VT.
	 * The ioctl number is an int: compare the low 32 bits only. Every
	 * other number is allowed by the rules add_except32 makes. */
	{
		static const uint32_t bad[] = { TIOCSTI, TIOCLINUX };
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, bad[i]);
			if ((r = add(rc, rc->deny, "ioctl", 1, &c, err)) < 0)
				return r;
		}
		if ((r = add_except32(rc, SCMP_ACT_ALLOW, "ioctl", 1, bad, ARRAY_SIZE(bad), 0, 0, 31, err)) < 0)
			return r;
	}

	/* personality: only PER_LINUX (0) and the query value 0xffffffff.
	 * Others disable ASLR (ADDR_NO_RANDOMIZE) or enable
	 * READ_IMPLIES_EXEC. libseccomp cannot AND two tests of one argument,
	 * so: any 32-bit value other than all-zeros and all-ones has, read
	 * cyclically, a set bit followed by a clear one; one rule per bit
	 * position catches exactly those. The kernel reads only the low 32
	 * bits of the argument, and so do these rules. */
	for (int bit = 0; bit < 32; bit++) {
		uint64_t set = 1ULL << bit, clear = 1ULL << ((bit + 1) % 32);
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, set | clear, set);
		if ((r = add(rc, rc->deny, "personality", 1, &c, err)) < 0)
			return r;
	}
	for (int i = 0; i < 2; i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffULL, i ? 0xffffffffULL : 0);
		if ((r = add(rc, SCMP_ACT_ALLOW, "personality", 1, &c, err)) < 0)
			return r;
	}
	return 0;
}

/* Set-ID modes and how a file is opened or made. */
static int add_setid(struct rule_ctx *rc, struct error *err)
{
	int r;

	/* Set-ID modes: the chmod family (fchmodat2 where libseccomp knows
	 * it; elsewhere it gets ENOSYS and libc falls back to fchmodat),
	 * open with O_CREAT or O_TMPFILE, creat, mkdir, mknod. */
	{
		static const struct {
			const char *name;
			unsigned modearg;
		} moded[] = {
			{ "chmod", 1 },	 { "fchmod", 1 }, { "fchmodat", 2 }, { "fchmodat2", 2 },
			{ "creat", 1 },	 { "mkdir", 1 },  { "mkdirat", 2 },  { "mknod", 1 },
			{ "mknodat", 2 },
		};
		for (size_t i = 0; i < ARRAY_SIZE(moded); i++)
			if ((r = add_mode(rc, moded[i].name, pass(rc, moded[i].name), moded[i].modearg, NULL, 0,
					  err)) < 0)
				return r;
		if ((r = add_open(rc, "open", 1, err)) < 0 || (r = add_open(rc, "openat", 2, err)) < 0)
			return r;
	}
	/* openat2 passes its flags and mode in memory, which seccomp cannot
	 * read and the supervisor could only read racily. ENOSYS makes libc
	 * and most programs fall back to openat, judged above. */
	if ((r = add(rc, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL, err)) < 0)
		return r;
	return 0;
}

int seccomp_rules_build(bool notify, enum seccomp_trace trace, bool protect, bool sockets, scmp_filter_ctx *out,
			struct error *err)
{
	_cleanup_free_ struct rule_ctx *rcp = calloc(1, sizeof(*rcp));
	if (!rcp)
		return error_set(err, ENOMEM, "seccomp rules: out of memory");
	struct rule_ctx *rc = rcp;
	*rc = (struct rule_ctx){
		.ctx = seccomp_init(DEFAULT_ACTION),
		.deny = notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM),
		.trace = trace,
		.protect = protect,
		.sockets = sockets,
	};
	if (!rc->ctx)
		return error_set(err, ENOMEM, "seccomp_init failed");
	int r;

	/* A foreign ABI is killed, not merely refused: the process could not
	 * be expecting it. Every call pays for the filter's length, so
	 * libseccomp sorts the syscall numbers into a binary tree. */
	if ((r = seccomp_attr_set(rc->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(rc->ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||
	    (r = seccomp_attr_set(rc->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		r = error_sys(err, -r, "seccomp attributes");
		goto out;
	}

	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
		int flagsarg = !strcmp(allowed[i], "newfstatat") ? 3 : !strcmp(allowed[i], "statx") ? 2 : -1;
		if (rc->trace == SECCOMP_TRACE_ALL && flagsarg >= 0) {
			/* AT_EMPTY_PATH: on the fd itself, no path to judge. */
			struct scmp_arg_cmp fd_only = SCMP_CMP((unsigned)flagsarg, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
							       AT_EMPTY_PATH);
			struct scmp_arg_cmp by_path = SCMP_CMP((unsigned)flagsarg, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0);
			if ((r = add(rc, SCMP_ACT_ALLOW, allowed[i], 1, &fd_only, err)) < 0 ||
			    (r = add(rc, pass(rc, allowed[i]), allowed[i], 1, &by_path, err)) < 0)
				goto out;
			continue;
		}
		if ((r = add(rc, pass(rc, allowed[i]), allowed[i], 0, NULL, err)) < 0)
			goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(denied); i++)
		if ((r = add(rc, rc->deny, denied[i], 0, NULL, err)) < 0)
			goto out;

	/* clone: creating any namespace is refused; plain fork and threads
	 * pass. On x86_64 and most ABIs the flags are argument 0. */
	if ((r = deny_clone_namespaces(rc, err)) < 0)
		goto out;
	{
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0);
		if ((r = add(rc, SCMP_ACT_ALLOW, "clone", 1, &c, err)) < 0)
			goto out;
	}
	/* clone3 passes its flags in memory, which seccomp cannot read.
	 * ENOSYS makes libc fall back to clone, where the check above runs. */
	if ((r = add(rc, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err)) < 0)
		goto out;

	if ((r = add_ioctl_personality(rc, err)) < 0 || (r = add_setid(rc, err)) < 0)
		goto out;

	/* Executable memfds: bytes that never were a file run as a program,
	 * past every exec rule (Landlock does not judge the kernel's internal
	 * mounts). MFD_EXEC asks for one outright: refused. A memfd without it
	 * is executable too unless vm.memfd_noexec is 2 in the sandbox's pid
	 * namespace, which only a privileged start can set (child.c): so when
	 * the supervisor listens (always, but for a filter no run uses), it
	 * makes the memfd, sealed against exec (seccomp.c). */
	{
		bool listener = trace != SECCOMP_TRACE_OFF || protect || sockets;
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, MFD_EXEC, MFD_EXEC);
		if ((r = add(rc, rc->deny, "memfd_create", 1, &c, err)) < 0)
			goto out;
		c = SCMP_A1(SCMP_CMP_MASKED_EQ, MFD_EXEC, 0);
		if ((r = add(rc, listener ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW, "memfd_create", 1, &c, err)) < 0)
			goto out;
	}

	if ((r = add_socket(rc, "socket", err)) < 0 || (r = add_socket(rc, "socketpair", err)) < 0)
		goto out;

	/* Unix sockets (guard.c): connect, and sendto with an address, go to
	 * the supervisor, which has the guard perform them after judging a
	 * pathname address by the inode it reaches. BPF sees no address (it
	 * is in memory), so every connect goes, TCP to the proxy included.
	 * sendmsg and sendmmsg carry theirs inside a struct BPF cannot read
	 * either, and only a datagram unix socket honours one (stream and
	 * seqpacket sockets ignore or refuse it): creating a datagram unix
	 * socket, alone or as a pair, goes to the supervisor too (above),
	 * which refuses it unless the policy names a socket (see guard.c). */
	{
		struct scmp_arg_cmp addr = SCMP_A4(SCMP_CMP_NE, 0), none = SCMP_A4(SCMP_CMP_EQ, 0);
		if ((r = add(rc, sockets ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW, "connect", 0, NULL, err)) < 0 ||
		    (r = add(rc, sockets ? SCMP_ACT_NOTIFY : SCMP_ACT_ALLOW, "sendto", 1, &addr, err)) < 0 ||
		    (r = add(rc, SCMP_ACT_ALLOW, "sendto", 1, &none, err)) < 0)
			goto out;
	}

	*out = rc->ctx;
	return 0;
out:
	seccomp_release(rc->ctx);
	return r;
}

/* The pins file of an MCP server the proxy's gateway speaks to over HTTP
 * (policy mcp.servers.*.pins): trust on first use writes it, under a lock
 * file, through a temporary file renamed over it (mcp/pins.c). Landlock
 * confines these calls to the pins files' directories. */
static const char *const proxy_pins[] = { "rename", "unlink", "flock", "fsync" };

/* open and openat of airlock-proxy: for reading alone. A proxy taken over
 * cannot write a file (Landlock refuses it too, where the kernel has
 * Landlock), nor create one to map as code. The deny rules overlap one
 * another, never the allow rule. */
static int add_open_readonly(struct rule_ctx *rc, const char *name, unsigned flagsarg, struct error *err)
{
	const uint64_t mask = O_ACCMODE | O_CREAT | TMPFILE_BIT | O_TRUNC;
	static const uint64_t bad[][2] = { { O_ACCMODE, O_WRONLY }, { O_ACCMODE, O_RDWR }, { O_ACCMODE, O_ACCMODE },
					   { O_CREAT, O_CREAT },      { TMPFILE_BIT, TMPFILE_BIT }, { O_TRUNC, O_TRUNC } };
	struct scmp_arg_cmp c = SCMP_CMP(flagsarg, SCMP_CMP_MASKED_EQ, mask, 0);
	int r = add(rc, SCMP_ACT_ALLOW, name, 1, &c, err);
	for (size_t i = 0; i < ARRAY_SIZE(bad) && r == 0; i++) {
		c = SCMP_CMP(flagsarg, SCMP_CMP_MASKED_EQ, bad[i][0], bad[i][1]);
		r = add(rc, SCMP_ACT_ERRNO(EPERM), name, 1, &c, err);
	}
	return r;
}

/* A helper's allow-list begun: calls not listed get deflt, the ones
 * listed as denied and a foreign architecture kill the process. */
static int allow_list_new(uint32_t deflt, struct rule_ctx **out, struct error *err)
{
	struct rule_ctx *rc = calloc(1, sizeof(*rc));
	if (!rc)
		return error_set(err, ENOMEM, "seccomp rules: out of memory");
	rc->ctx = seccomp_init(deflt);
	rc->deny = SCMP_ACT_KILL_PROCESS;
	if (!rc->ctx) {
		free(rc);
		return error_set(err, ENOMEM, "seccomp_init failed");
	}
	int r;
	if ((r = seccomp_attr_set(rc->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(rc->ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||
	    (r = seccomp_attr_set(rc->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		seccomp_release(rc->ctx);
		free(rc);
		return error_sys(err, -r, "seccomp attributes");
	}
	*out = rc;
	return 0;
}

int seccomp_rules_build_proxy(bool pins, scmp_filter_ctx *out, struct error *err)
{
	_cleanup_free_ struct rule_ctx *rc = NULL;
	int r = allow_list_new(DEFAULT_ACTION, &rc, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(proxy_allowed); i++)
		if ((r = add(rc, SCMP_ACT_ALLOW, proxy_allowed[i], 0, NULL, err)) < 0)
			goto out;
	for (size_t i = 0; i < ARRAY_SIZE(denied); i++)
		if ((r = add(rc, rc->deny, denied[i], 0, NULL, err)) < 0)
			goto out;
	for (size_t i = 0; i < ARRAY_SIZE(proxy_killed); i++)
		if (!(pins && IN(proxy_pins, proxy_killed[i])) &&
		    (r = add(rc, rc->deny, proxy_killed[i], 0, NULL, err)) < 0)
			goto out;
	for (size_t i = 0; pins && i < ARRAY_SIZE(proxy_pins); i++)
		if ((r = add(rc, SCMP_ACT_ALLOW, proxy_pins[i], 0, NULL, err)) < 0)
			goto out;

	/* clone: threads only (CLONE_THREAD), in no new namespace. A fork
	 * would be a process the supervisor does not know of, holding the
	 * proxy's secrets; a namespace, kernel surface (unshare's). The
	 * cases are disjoint: the namespace bits, then none of them with and
	 * without CLONE_THREAD. clone3 hides its flags in memory: ENOSYS,
	 * and glibc falls back to clone. */
	if ((r = deny_clone_namespaces(rc, err)) < 0)
		goto out;
	{
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS | CLONE_THREAD, CLONE_THREAD);
		if ((r = add(rc, SCMP_ACT_ALLOW, "clone", 1, &c, err)) < 0)
			goto out;
		c = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS | CLONE_THREAD, 0);
		if ((r = add(rc, rc->deny, "clone", 1, &c, err)) < 0 ||
		    (r = add(rc, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err)) < 0)
			goto out;
	}

	/* Code injection: no memory both writable and executable, and none
	 * made executable after the fact (systemd's MemoryDenyWriteExecute):
	 * bytes a request wrote into the heap do not run.
	 * dlopen maps an NSS module's code from its file with PROT_EXEC at
	 * once, never through mprotect. EPERM rather than death: a library
	 * asking for an executable stack fails to load, as it should. */
	{
		const uint64_t wx = PROT_WRITE | PROT_EXEC;
		static const uint64_t ok[] = { 0, PROT_WRITE, PROT_EXEC };
		for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
			struct scmp_arg_cmp c = SCMP_A2(SCMP_CMP_MASKED_EQ, wx, ok[i]);
			if ((r = add(rc, SCMP_ACT_ALLOW, "mmap", 1, &c, err)) < 0)
				goto out;
		}
		struct scmp_arg_cmp c = SCMP_A2(SCMP_CMP_MASKED_EQ, wx, wx);
		if ((r = add(rc, SCMP_ACT_ERRNO(EPERM), "mmap", 1, &c, err)) < 0)
			goto out;
		c = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
		if ((r = add(rc, SCMP_ACT_ALLOW, "mprotect", 1, &c, err)) < 0)
			goto out;
		c = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC);
		if ((r = add(rc, SCMP_ACT_ERRNO(EPERM), "mprotect", 1, &c, err)) < 0)
			goto out;
	}

	if (pins) {
		if ((r = add(rc, SCMP_ACT_ALLOW, "open", 0, NULL, err)) < 0 ||
		    (r = add(rc, SCMP_ACT_ALLOW, "openat", 0, NULL, err)) < 0)
			goto out;
	} else if ((r = add_open_readonly(rc, "open", 1, err)) < 0 || (r = add_open_readonly(rc, "openat", 2, err)) < 0) {
		goto out;
	}
	if ((r = add(rc, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL, err)) < 0)
		goto out;

	/* ioctl: the resolver's FIONREAD and non-blocking switches, isatty's
	 * TCGETS; no terminal injection (TIOCSTI) on the stderr it shares
	 * with the user's terminal, and no device's ioctls. The number is an
	 * int: the low 32 bits are compared. */
	{
		static const uint32_t ok[] = { FIONREAD, FIONBIO, FIOCLEX, FIONCLEX, TCGETS };
		for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
			struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, ok[i]);
			if ((r = add(rc, SCMP_ACT_ALLOW, "ioctl", 1, &c, err)) < 0)
				goto out;
		}
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI);
		if ((r = add(rc, rc->deny, "ioctl", 1, &c, err)) < 0)
			goto out;
	}

	/* prctl: a thread's name (glibc names its threads' mappings with
	 * PR_SET_VMA); never PR_SET_DUMPABLE back on (ptrace and
	 * /proc/PID/mem of the proxy's memory by the user's other
	 * processes), nor the other options. */
	{
		static const uint64_t ok[] = { PR_SET_NAME, PR_GET_NAME, 0x53564d41 /* PR_SET_VMA */ };
		for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
			struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, ok[i]);
			if ((r = add(rc, SCMP_ACT_ALLOW, "prctl", 1, &c, err)) < 0)
				goto out;
		}
	}

	/* Another process of the same uid (the supervisor, unprivileged) is
	 * neither signalled nor limited: tgkill sends SIGABRT alone (abort),
	 * and Landlock's signal scope (6.12+) keeps even that at home;
	 * prlimit64 only reads (getrlimit). */
	{
		struct scmp_arg_cmp c = SCMP_A2(SCMP_CMP_EQ, SIGABRT);
		if ((r = add(rc, SCMP_ACT_ALLOW, "tgkill", 1, &c, err)) < 0)
			goto out;
		c = SCMP_A2(SCMP_CMP_EQ, 0);
		if ((r = add(rc, SCMP_ACT_ALLOW, "prlimit64", 1, &c, err)) < 0)
			goto out;
	}

	if ((r = add_socket(rc, "socket", err)) < 0)
		goto out;
	*out = rc->ctx;
	return 0;
out:
	seccomp_release(rc->ctx);
	return r;
}

/* airlock-mcp-gateway's filter (seccomp_rules_build_gateway): what its
 * one thread calls once it relays (mcp/gateway_exec.c): the agent's
 * connection, the server's pipes, the records and control sockets, the
 * step-up listener, its memory, the clock, and stderr. It opens and
 * resolves no path (its monitor writes the pins file and judges an
 * argument's path, proto/mcpgw.h), so every other call
 * kills it: a gateway taken over by a message cannot run a program, start
 * a process, open, make or remove a file, trace or signal another
 * process, enter a namespace or make memory executable. */
static const char *const gateway_allowed[] = {
	"read", "write", "readv", "writev", "close", "lseek", "fstat", "newfstatat", "fcntl",
	"poll", "ppoll", "recvfrom", "recvmsg", "sendto", "sendmsg", "accept", "accept4", "shutdown",
	"brk", "munmap", "mremap", "madvise", "futex", "getrandom",
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "restart_syscall",
	/* a sanitized build's runtime sets up its signal stack as it goes */
	"sigaltstack",
	"getpid", "gettid", "exit", "exit_group",
};

/* An allow-list killing on anything else: names, then memory never
 * executable (a helper that loads no code once it serves: bytes a
 * message wrote into the heap never run), then abort's SIGABRT to
 * itself and no other signal. The caller adds what is its own. */
static int helper_list(const char *const *names, size_t n, struct rule_ctx **out, struct error *err)
{
	struct rule_ctx *rc = NULL;
	int r = allow_list_new(SCMP_ACT_KILL_PROCESS, &rc, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r >= 0; i++)
		r = add(rc, SCMP_ACT_ALLOW, names[i], 0, NULL, err);
	struct scmp_arg_cmp c = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	if (r >= 0)
		r = add(rc, SCMP_ACT_ALLOW, "mmap", 1, &c, err);
	if (r >= 0)
		r = add(rc, SCMP_ACT_ALLOW, "mprotect", 1, &c, err);
	struct scmp_arg_cmp abrt = SCMP_A2(SCMP_CMP_EQ, SIGABRT);
	if (r >= 0)
		r = add(rc, SCMP_ACT_ALLOW, "tgkill", 1, &abrt, err);
	if (r < 0) {
		seccomp_release(rc->ctx);
		free(rc);
		return r;
	}
	*out = rc;
	return 0;
}

/* An MCP connection's monitor (sandbox/mcpgw.c), once it serves: the
 * gateway's control socket and records, the keeper's socket, the
 * server's root for inside_workspace's lookups, waiting for its
 * children. It writes no file (the keeper does), signals no process (the
 * keeper does), and opens nothing but O_PATH: a monitor taken over by a
 * gateway's message cannot read a file, run a program, start a process,
 * trace or signal one, or make memory executable. */
static const char *const monitor_allowed[] = {
	"read", "write", "close", "fstat", "newfstatat", "readlinkat", "fcntl", "dup", "dup2", "dup3",
	"poll", "ppoll", "recvfrom", "recvmsg", "sendto", "sendmsg", "shutdown",
	"brk", "munmap", "mremap", "madvise", "futex",
	"clock_gettime", "clock_nanosleep", "nanosleep",
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "restart_syscall", "sigaltstack",
	"wait4", "waitid", "getpid", "gettid", "getppid", "exit", "exit_group",
	/* RESOLVE_IN_ROOT beneath the server's root: its how is in memory,
	 * where seccomp cannot see O_PATH; Landlock (no file access at all)
	 * stands behind it */
	"openat2",
};

int seccomp_rules_build_monitor(scmp_filter_ctx *out, struct error *err)
{
	_cleanup_free_ struct rule_ctx *rc = NULL;
	int r = helper_list(monitor_allowed, ARRAY_SIZE(monitor_allowed), &rc, err);
	if (r < 0)
		return r;
	/* openat for the ".." walk: O_PATH, and O_PATH alone. */
	struct scmp_arg_cmp c = SCMP_A2(SCMP_CMP_MASKED_EQ, O_PATH, O_PATH);
	if ((r = add(rc, SCMP_ACT_ALLOW, "openat", 1, &c, err)) < 0) {
		seccomp_release(rc->ctx);
		return r;
	}
	*out = rc->ctx;
	return 0;
}

int seccomp_rules_build_gateway(scmp_filter_ctx *out, struct error *err)
{
	_cleanup_free_ struct rule_ctx *rc = NULL;
	int r = helper_list(gateway_allowed, ARRAY_SIZE(gateway_allowed), &rc, err);
	if (r < 0)
		return r;
	/* The step-up control connection's receive timeout (mcp_control_serve). */
	struct scmp_arg_cmp timeo[] = { SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET), SCMP_A2(SCMP_CMP_EQ, SO_RCVTIMEO) };
	/* ioctl: isatty's TCGETS on stderr alone; never TIOCSTI into the
	 * terminal it shares with the user. */
	struct scmp_arg_cmp tcgets = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TCGETS);
	if ((r = add(rc, SCMP_ACT_ALLOW, "setsockopt", 2, timeo, err)) < 0 ||
	    (r = add(rc, SCMP_ACT_ALLOW, "ioctl", 1, &tcgets, err)) < 0) {
		seccomp_release(rc->ctx);
		return r;
	}
	*out = rc->ctx;
	return 0;
}
