/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp rules, compiled at build time (see seccomp_gen.c) into the BPF
 * programs the sandbox loads: building them with libseccomp at run time
 * cost over a millisecond per start.
 *
 * seccomp is the last layer, installed after Landlock and no_new_privs.
 *
 * A deny-list of the kernel interfaces an agent has no business touching
 * and that have carried most container escapes: ptrace and cross-process
 * memory, bpf, perf, keyrings, userfaultfd, io_uring, the mount API,
 * namespace creation and entry, terminal injection, module and kexec
 * loading. libseccomp emits the architecture check first; a syscall from
 * a foreign ABI (i386 via int 0x80, x32) kills the process, so no table of
 * numbers here can be sidestepped by switching ABI.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sandbox/seccomp_rules.h"
#include "util/cleanup.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

#define NS_FLAGS                                                                                \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	 CLONE_NEWCGROUP | 0x00000080 /* CLONE_NEWTIME */)

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

/* Protected paths (filesystem.protect): every call that can make a name
 * appear goes to the supervisor, which has it performed by the guard
 * (guard.c) after judging the name; an open goes only when it may create
 * (O_CREAT), so reading and writing existing files stay in the kernel
 * (existing protected files are read-only mounts). */
static const char *const creating[] = {
	"creat", "mkdir", "mkdirat", "mknod", "mknodat", "link", "linkat", "symlink", "symlinkat",
	"rename", "renameat", "renameat2",
};

/* Syscalls that take a path Landlock judges (traced in trace mode). */
static const char *const traced[] = {
	"open", "openat", "openat2", "creat", "execve", "execveat", "mkdir", "mkdirat", "mknod", "mknodat",
	"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat", "symlink",
	"symlinkat", "truncate",
};

struct rule_ctx {
	scmp_filter_ctx ctx;
	uint32_t deny; /* SCMP_ACT_ERRNO(EPERM) or SCMP_ACT_NOTIFY */
};

static int add(struct rule_ctx *rc, uint32_t action, const char *name, unsigned n,
	       const struct scmp_arg_cmp *args, struct error *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0; /* not a syscall on this architecture */
	int r = seccomp_rule_add_array(rc->ctx, action, nr, n, args);
	if (r < 0 && r != -EEXIST)
		return error_sys(err, -r, "seccomp rule for %s", name);
	return 0;
}

/* Is the call one the guard performs? (open and openat only with O_CREAT.) */
static bool guarded(const char *name)
{
	if (strcmp(name, "open") == 0 || strcmp(name, "openat") == 0 || strcmp(name, "openat2") == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(creating); i++)
		if (strcmp(name, creating[i]) == 0)
			return true;
	return false;
}

int seccomp_rules_build(bool notify, bool trace, bool protect, bool sockets, scmp_filter_ctx *out,
			struct error *err)
{
	struct rule_ctx rc = {
		.ctx = seccomp_init(SCMP_ACT_ALLOW),
		.deny = notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM),
	};
	if (!rc.ctx)
		return error_set(err, ENOMEM, "seccomp_init failed");
	int r;

	/* A foreign ABI is killed, not merely refused: the process could not
	 * be expecting it. */
	if ((r = seccomp_attr_set(rc.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(rc.ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0) {
		r = error_sys(err, -r, "seccomp attributes");
		goto out;
	}

	for (size_t i = 0; i < ARRAY_SIZE(denied); i++)
		if ((r = add(&rc, rc.deny, denied[i], 0, NULL, err)) < 0)
			goto out;

	/* clone: creating any namespace is refused; plain fork and threads
	 * pass. On x86_64 and most ABIs the flags are argument 0. */
	{
		for (int bit = 0; bit < 32; bit++) {
			uint64_t f = 1ULL << bit;
			if (!(NS_FLAGS & f))
				continue;
			struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, f, f);
			if ((r = add(&rc, rc.deny, "clone", 1, &c, err)) < 0)
				goto out;
		}
	}
	/* clone3 passes its flags in memory, which seccomp cannot read.
	 * ENOSYS makes libc fall back to clone, where the check above runs. */
	if ((r = add(&rc, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err)) < 0)
		goto out;

	/* Terminal injection: TIOCSTI pushes bytes into a terminal's input
	 * (CVE-2017-5226 in bubblewrap); TIOCLINUX can do the same on a VT.
	 * The ioctl number is an int: compare the low 32 bits only. */
	{
		const unsigned long bad[] = { TIOCSTI, TIOCLINUX };
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, bad[i]);
			if ((r = add(&rc, rc.deny, "ioctl", 1, &c, err)) < 0)
				goto out;
		}
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
		if ((r = add(&rc, rc.deny, "personality", 1, &c, err)) < 0)
			goto out;
	}

	if (protect) {
		for (size_t i = 0; i < ARRAY_SIZE(creating); i++)
			if ((r = add(&rc, SCMP_ACT_NOTIFY, creating[i], 0, NULL, err)) < 0)
				goto out;
		/* The open flags are an int: compare the low 32 bits. */
		struct scmp_arg_cmp c1 = SCMP_A1(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT);
		struct scmp_arg_cmp c2 = SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT);
		if ((r = add(&rc, SCMP_ACT_NOTIFY, "open", 1, &c1, err)) < 0 ||
		    (r = add(&rc, SCMP_ACT_NOTIFY, "openat", 1, &c2, err)) < 0)
			goto out;
		/* openat2 passes its flags in memory, which seccomp cannot read
		 * and the supervisor could only read racily. ENOSYS makes libc
		 * and most programs fall back to openat, judged above. */
		if ((r = add(&rc, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL, err)) < 0)
			goto out;
	}

	/* Unix sockets (guard.c): connect, and sendto with an address, go to
	 * the supervisor, which has the guard perform them after judging a
	 * pathname address by the inode it reaches. BPF sees no address (it
	 * is in memory), so every connect goes, TCP to the proxy included.
	 * sendmsg and sendmmsg carry theirs inside a struct BPF cannot read
	 * either, and only a datagram unix socket honours one (stream and
	 * seqpacket sockets ignore or refuse it): creating a datagram unix
	 * socket, alone or as a pair, goes to the supervisor too, which
	 * refuses it unless the policy names a socket (see guard.c). */
	if (sockets) {
		struct scmp_arg_cmp dgram[2] = { SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
						 SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf /* SOCK_TYPE_MASK */, SOCK_DGRAM) };
		struct scmp_arg_cmp addr = SCMP_A4(SCMP_CMP_NE, 0);
		if ((r = add(&rc, SCMP_ACT_NOTIFY, "connect", 0, NULL, err)) < 0 ||
		    (r = add(&rc, SCMP_ACT_NOTIFY, "sendto", 1, &addr, err)) < 0 ||
		    (r = add(&rc, SCMP_ACT_NOTIFY, "socket", 2, dgram, err)) < 0 ||
		    (r = add(&rc, SCMP_ACT_NOTIFY, "socketpair", 2, dgram, err)) < 0)
			goto out;
	}

	/* Trace mode: the supervisor (ptrace, from outside) sees the path of
	 * each call Landlock may refuse, and its result; see ftrace.c. With
	 * protection the calls the guard performs are not traced: the
	 * supervisor sees their results itself. */
	if (trace)
		for (size_t i = 0; i < ARRAY_SIZE(traced); i++) {
			if (protect && guarded(traced[i])) {
				if (strcmp(traced[i], "open") != 0 && strcmp(traced[i], "openat") != 0)
					continue;
				bool at = strcmp(traced[i], "openat") == 0;
				struct scmp_arg_cmp c = at ? SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT, 0)
							   : SCMP_A1(SCMP_CMP_MASKED_EQ, O_CREAT, 0);
				if ((r = add(&rc, SCMP_ACT_TRACE(0), traced[i], 1, &c, err)) < 0)
					goto out;
				continue;
			}
			if ((r = add(&rc, SCMP_ACT_TRACE(0), traced[i], 0, NULL, err)) < 0)
				goto out;
		}

	*out = rc.ctx;
	return 0;
out:
	seccomp_release(rc.ctx);
	return r;
}

