/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File-denial tracing for --trace-denials and learn mode.
 *
 * Landlock reports a denial to the process (EACCES), and to the kernel's
 * audit log only for root. To tell an unprivileged user which file access
 * was blocked, the supervisor traces the sandbox from outside: in trace
 * mode the seccomp filter marks the path-taking syscalls SECCOMP_RET_TRACE,
 * the supervisor notes the path at that stop, lets the call run to its
 * exit stop, and records it when it failed with EACCES or EPERM. Other
 * syscalls run untraced.
 *
 * The tracee cannot trace back or detach us: ptrace is denied inside, and
 * PTRACE_O_EXITKILL ends every tracee if the supervisor dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "handoff/protect.h"
#include "sandbox/ftrace.h"
#include "sandbox/internal.h"
#include "sandbox/trace.h"

#define MAX_TRACKED 1024

struct pending {
	pid_t tid;
	int nr;
	char path[512];
	char where[512]; /* protected path the call touches, or "" */
	const char *glob;
};

struct ftrace {
	struct pending p[MAX_TRACKED];
	size_t n;
	const struct protect_set *protect;
	const char *ws;
};

void ftrace_set_protect(struct ftrace *f, const struct protect_set *set, const char *ws)
{
	f->protect = set;
	f->ws = ws;
}

/* The destination of a rename or link: (dirfd argument or -1, path argument). */
static void dest_args(int nr, int *dfd, int *path)
{
	*dfd = *path = -1;
	switch (nr) {
	case SYS_rename: case SYS_link:
		*path = 1;
		break;
	case SYS_renameat: case SYS_renameat2: case SYS_linkat:
		*dfd = 2;
		*path = 3;
		break;
	default:
		break;
	}
}

/* Which argument holds the path that Landlock judged. */
static int path_arg(int nr)
{
	switch (nr) {
	case SYS_open: case SYS_creat: case SYS_execve: case SYS_mkdir: case SYS_mknod: case SYS_unlink:
	case SYS_rmdir: case SYS_truncate: case SYS_rename: case SYS_link:
		return 0;
	case SYS_openat: case SYS_openat2: case SYS_execveat: case SYS_mkdirat: case SYS_mknodat:
	case SYS_unlinkat: case SYS_renameat: case SYS_renameat2: case SYS_linkat: case SYS_symlink:
		return 1;
	case SYS_symlinkat:
		return 2;
	default:
		return -1;
	}
}

static void read_string(pid_t pid, unsigned long long addr, char *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len - 1 };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len - 1 };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n <= 0) {
		/* A read across the end of a mapping fails whole: retry short. */
		remote.iov_len = local.iov_len = 4096 - (addr & 4095);
		if (remote.iov_len > len - 1)
			remote.iov_len = local.iov_len = len - 1;
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	}
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[n] = '\0';
	buf[strnlen(buf, (size_t)n)] = '\0';
}

/* Lexically: "a/./b/../c" -> "a/c", in place; the result is absolute. */
static void normalize(char *path)
{
	char out[1024];
	size_t o = 0;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[--o] != '/')
				;
		} else if (o + 1 + n < sizeof(out)) {
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = e;
	}
	out[o] = '\0';
	snprintf(path, 512, "%s", o ? out : "/");
}

/* Does the call's path, resolved against its directory fd as the tracee
 * sees it (the sandbox shows the workspace at its host path, so
 * /proc/TID/cwd reads the same), fall on a protected path? Sets p->where
 * and p->glob when it does. A symlink in the way is not followed: this
 * names a refusal, it never makes one. */
static void protected_at(struct ftrace *f, pid_t tid, int dfd, unsigned long long addr, struct pending *p)
{
	char rel[512], link[64], base[512];
	read_string(tid, addr, rel, sizeof(rel));
	if (rel[0] == '/') {
		snprintf(p->where, sizeof(p->where), "%s", rel);
	} else {
		if (dfd == AT_FDCWD)
			snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
		else
			snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dfd);
		ssize_t n = readlink(link, base, sizeof(base) - 1);
		if (n <= 0)
			return;
		base[n] = '\0';
		if ((size_t)snprintf(p->where, sizeof(p->where), "%s/%s", base, rel) >= sizeof(p->where))
			return;
	}
	normalize(p->where);
	size_t wl = strlen(f->ws);
	if (strncmp(p->where, f->ws, wl) != 0 || p->where[wl] != '/')
		return;
	const char *r = p->where + wl + 1;
	p->glob = protect_match(f->protect, r, false);
	if (!p->glob)
		p->glob = protect_match(f->protect, r, true);
}

static struct pending *slot(struct ftrace *f, pid_t tid, bool create)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->p[i].tid == tid)
			return &f->p[i];
	if (!create || f->n == MAX_TRACKED)
		return NULL;
	f->p[f->n].tid = tid;
	return &f->p[f->n++];
}

static void forget(struct ftrace *f, pid_t tid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->p[i].tid == tid) {
			f->p[i] = f->p[--f->n];
			return;
		}
}

struct ftrace *ftrace_new(void)
{
	return calloc(1, sizeof(struct ftrace));
}

void ftrace_free(struct ftrace *f)
{
	free(f);
}

int ftrace_attach(pid_t init, struct error *err)
{
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
	if (ptrace(PTRACE_SEIZE, init, 0, opts) < 0)
		return error_sys(err, errno, "cannot trace the sandbox for --trace-denials");
	return 0;
}

bool ftrace_handle(struct ftrace *f, struct trace_log *log, pid_t tid, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		forget(f, tid);
		return false;
	}
	if (!WIFSTOPPED(status))
		return false;
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	long resume = PTRACE_CONT;
	int inject = 0;

	if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
		struct __ptrace_syscall_info si;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) > 0 && si.op == PTRACE_SYSCALL_INFO_SECCOMP) {
			int a = path_arg((int)si.seccomp.nr);
			struct pending *p = a >= 0 ? slot(f, tid, true) : NULL;
			if (p) {
				p->nr = (int)si.seccomp.nr;
				read_string(tid, si.seccomp.args[a], p->path, sizeof(p->path));
				p->where[0] = '\0';
				p->glob = NULL;
				if (f->protect) {
					int dfd, dp;
					dest_args(p->nr, &dfd, &dp);
					/* Only for the record: the kernel enforces (read-only
					 * mounts), this names why. The destination first: a
					 * rename onto .git/config is about .git/config. */
					if (dp >= 0)
						protected_at(f, tid, dfd >= 0 ? (int)si.seccomp.args[dfd] : AT_FDCWD,
							     si.seccomp.args[dp], p);
					if (!p->glob)
						protected_at(f, tid, a > 0 && p->nr != SYS_symlink ?
							     (int)si.seccomp.args[a - 1] : AT_FDCWD,
							     si.seccomp.args[a], p);
				}
				resume = PTRACE_SYSCALL; /* stop again at its exit */
			}
		}
	} else if (sig == (SIGTRAP | 0x80)) {
		struct __ptrace_syscall_info si;
		struct pending *p = slot(f, tid, false);
		if (p && ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) > 0 &&
		    si.op == PTRACE_SYSCALL_INFO_EXIT && si.exit.is_error) {
			int e = (int)-si.exit.rval;
			struct stat st;
			/* The sandbox shows host paths at their own names, so a
			 * path missing inside but present outside was hidden. */
			bool hidden = e == ENOENT && p->path[0] == '/' && lstat(p->path, &st) == 0;
			if (p->glob && (e == EROFS || e == EBUSY || e == EACCES || e == EPERM)) {
				char name[64];
				trace_record_protected(log, tid, seccomp_syscall_name(p->nr, name, sizeof(name)),
						       p->where, e, p->glob);
			} else if (e == EACCES || e == EPERM || e == EROFS || hidden) {
				char name[64];
				trace_record_file(log, tid, seccomp_syscall_name(p->nr, name, sizeof(name)), p->path, e);
			}
		}
		forget(f, tid);
	} else if (sig == SIGTRAP && event) {
		/* fork/vfork/clone/exec events: nothing to do */
	} else if (event == PTRACE_EVENT_STOP) {
		/* Group-stop of a seized tracee (or its first stop): keep the
		 * job-control semantics without resuming it. */
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return true;
		}
	} else {
		inject = sig; /* an ordinary signal: deliver it */
	}
	ptrace((enum __ptrace_request)resume, tid, 0, inject);
	return true;
}
