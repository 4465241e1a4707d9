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
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/protect.h"
#include "sandbox/ftrace.h"
#include "sandbox/fsrules.h"
#include "sandbox/landlock_abi.h"
#include "sandbox/seccomp_bpf.h"
#include "sandbox/internal.h"
#include "sandbox/trace.h"
#include "util/cleanup.h"

#define MAX_TRACKED 1024
/* Entries the sandbox itself made below a private mount (observe mode). */
#define MAX_MADE 4096

struct pending {
	pid_t tid;
	int nr;
	bool creates; /* the call makes the file at path when it succeeds */
	char path[512];
	int path_dfd;    /* the directory fd path is relative to (AT_FDCWD: the cwd) */
	char dest[512];  /* rename and link: the destination, else "" */
	int dest_dfd;
	char where[512]; /* protected path the call touches, or "" */
	const char *glob;
};

struct ftrace {
	struct pending p[MAX_TRACKED];
	size_t n;
	/* Observe mode: the rules enforce mode would apply (borrowed), and
	 * what the sandbox created during the run, which enforce mode's
	 * private /tmp and home would hold too. */
	const struct fsrules *observe;
	char *made[MAX_MADE];
	size_t n_made;
	const struct protect_set *protect;
	const char *ws;
	int root; /* SECCOMP_TRACE_WRITES: the sandbox's root directory, or -1 */
	const struct fsrules *landlock; /* and its Landlock rules (borrowed), or NULL */
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
	case SYS_access: case SYS_stat: case SYS_lstat:
		return 0;
	case SYS_openat: case SYS_openat2: case SYS_execveat: case SYS_mkdirat: case SYS_mknodat:
	case SYS_unlinkat: case SYS_renameat: case SYS_renameat2: case SYS_linkat: case SYS_symlink:
	case SYS_faccessat: case SYS_faccessat2: case SYS_newfstatat: case SYS_statx:
		return 1;
	case SYS_symlinkat:
		return 2;
	default:
		return -1;
	}
}

/* Whether the call creates the file its path names: then ENOENT for a
 * path missing on both sides still means a denial when its directory
 * exists outside (the sandbox hides that directory). openat2 carries its
 * flags in memory and is left out. */
static bool creates(int nr, const uint64_t args[6])
{
	switch (nr) {
	case SYS_creat: case SYS_mkdir: case SYS_mkdirat: case SYS_mknod: case SYS_mknodat:
	case SYS_symlink: case SYS_symlinkat:
		return true;
	case SYS_open:
		return (args[1] & O_CREAT) != 0;
	case SYS_openat:
		return (args[2] & O_CREAT) != 0;
	default:
		return false;
	}
}

/* The directory part of an absolute path exists on the host as a
 * directory. */
static unsigned (*host_look)(void *arg, const char *path);
static void *host_look_arg;

void ftrace_set_host_look(unsigned (*look)(void *arg, const char *path), void *arg)
{
	host_look = look;
	host_look_arg = arg;
}

unsigned ftrace_host_look_local(const char *path)
{
	struct stat st;
	unsigned bits = 0;
	if (path[0] == '/' && lstat(path, &st) == 0)
		bits |= FTRACE_HOST_EXISTS;
	if (path[0] == '/' && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		bits |= FTRACE_HOST_DIR;
	return bits;
}

unsigned ftrace_host_look(const char *path)
{
	return host_look ? host_look(host_look_arg, path) : ftrace_host_look_local(path);
}

bool ftrace_dir_exists(const char *path)
{
	char dir[512];
	const char *slash = strrchr(path, '/');
	if (path[0] != '/' || !slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return ftrace_host_look(dir) & FTRACE_HOST_DIR;
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

/* Where dirfd's path (a relative path's base) is, read from /proc: the
 * tracee's cwd for AT_FDCWD, else its open directory. */
static bool base_of(pid_t tid, int dirfd, char *out, size_t len)
{
	char link[64];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dirfd);
	ssize_t n = readlink(link, out, len - 1);
	if (n <= 0 || out[0] != '/')
		return false;
	out[n] = '\0';
	return true;
}

/* name, relative to dfd in tid (its cwd for AT_FDCWD) or absolute, as an
 * absolute, lexically normalised path in the sandbox's tree (which shows
 * the workspace and the host's paths at their own names, so /proc/TID/cwd
 * reads the same outside). */
static bool join_path(pid_t tid, int dfd, const char *name, char *out, size_t len)
{
	char base[512];
	if (name[0] == '/') {
		if ((size_t)snprintf(out, len, "%s", name) >= len)
			return false;
	} else if (!base_of(tid, dfd, base, sizeof(base)) ||
		   (size_t)snprintf(out, len, "%s/%s", base, name) >= len) {
		return false;
	}
	normalize(out);
	return true;
}

/* Does the call's path, resolved against its directory fd as the tracee
 * sees it (the sandbox shows the workspace at its host path, so
 * /proc/TID/cwd reads the same), fall on a protected path? Sets p->where
 * and p->glob when it does. A symlink in the way is not followed: this
 * names a refusal, it never makes one. */
static void protected_at(struct ftrace *f, pid_t tid, int dfd, const char *rel, struct pending *p)
{
	if (!join_path(tid, dfd, rel, p->where, sizeof(p->where)))
		return;
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
	struct ftrace *f = calloc(1, sizeof(struct ftrace));
	if (f)
		f->root = -1;
	return f;
}

void ftrace_free(struct ftrace *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_made; i++)
		free(f->made[i]);
	if (f->root >= 0)
		close(f->root);
	free(f);
}

void ftrace_observe(struct ftrace *f, const struct fsrules *rules)
{
	f->observe = rules;
}

int ftrace_attach(pid_t init, struct error *err)
{
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
	if (ptrace(PTRACE_SEIZE, init, 0, opts) < 0)
		return error_sys(err, errno, "cannot trace the sandbox for --trace-denials");
	return 0;
}

/* ---- observe mode: judge each call at its entry, let it run ---- */

/* A normalised absolute path from base and a path: no "//", ".", "..". */
static void normalise(const char *base, const char *rel, char *out, size_t len)
{
	char tmp[PATH_MAX * 2];
	snprintf(tmp, sizeof(tmp), "%s/%s", rel[0] == '/' ? "" : base, rel);
	size_t o = 0;
	out[o++] = '/';
	for (char *save = NULL, *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
			continue;
		}
		size_t n = strlen(c);
		if (o + n + 2 >= len)
			break;
		if (o > 1)
			out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
	}
	out[o] = '\0';
}

static bool own_tree(const char *path)
{
	static const char *const own[] = { "/proc", "/dev", "/run" };
	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		size_t n = strlen(own[i]);
		if (strncmp(path, own[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

/* The path the kernel will judge: absolute, and with its symlinks
 * resolved (the last one only when the call follows it). Observe mode's
 * tree is the host's but for the sandbox's own /proc, /dev and /run,
 * so the supervisor resolves names as the sandbox would; those three are
 * taken as written. */
static bool resolve_path(pid_t tid, int dirfd, unsigned long long addr, bool follow, char *out, size_t len)
{
	char raw[PATH_MAX], base[PATH_MAX] = "/", abs[PATH_MAX];
	read_string(tid, addr, raw, sizeof(raw));
	if (raw[0] == '\0' || (raw[0] == '?' && raw[1] == '\0'))
		return false;
	if (raw[0] != '/' && !base_of(tid, dirfd, base, sizeof(base)))
		return false;
	normalise(base, raw, abs, sizeof(abs));
	char real[PATH_MAX];
	if (own_tree(abs)) {
		snprintf(out, len, "%s", abs);
	} else if (follow && realpath(abs, real)) {
		snprintf(out, len, "%s", real);
	} else {
		char *slash = strrchr(abs, '/');
		if (slash == abs || !slash) {
			snprintf(out, len, "%s", abs);
			return true;
		}
		*slash = '\0';
		if (realpath(abs, real))
			snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, slash + 1);
		else
			snprintf(out, len, "%s/%s", abs, slash + 1);
	}
	return true;
}

struct exists_ctx {
	const struct ftrace *f;
	pid_t tid;
};

/* lstat as the sandbox sees it: through its root (its own /proc and /dev). */
static int sandbox_lstat(pid_t tid, const char *path, struct stat *st)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)tid, path);
	return lstat(p, st);
}

static bool exists_for_rules(const char *path, void *vctx)
{
	const struct exists_ctx *c = vctx;
	for (size_t i = 0; i < c->f->n_made; i++)
		if (strcmp(c->f->made[i], path) == 0)
			return false; /* made by the sandbox: enforce mode would show it */
	struct stat st;
	return sandbox_lstat(c->tid, path, &st) == 0;
}

static void parent_of(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s", path);
	char *slash = strrchr(out, '/');
	if (slash == out)
		out[1] = '\0';
	else if (slash)
		*slash = '\0';
}

static uint64_t make_right(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return LL_FS_MAKE_DIR;
	case S_IFCHR: return LL_FS_MAKE_CHAR;
	case S_IFBLK: return LL_FS_MAKE_BLOCK;
	case S_IFIFO: return LL_FS_MAKE_FIFO;
	case S_IFSOCK: return LL_FS_MAKE_SOCK;
	case S_IFLNK: return LL_FS_MAKE_SYM;
	default: return LL_FS_MAKE_REG;
	}
}

/* Judge one access; record it when enforce mode would have refused it.
 * Returns true when it would have been allowed. */
static bool judge(struct ftrace *f, struct trace_log *log, pid_t tid, int nr, const char *shown, const char *at,
		  uint64_t access, bool exec)
{
	struct exists_ctx ctx = { f, tid };
	enum fsrules_verdict v = fsrules_check(f->observe, at, access, exists_for_rules, &ctx);
	if (v == FSR_ALLOW)
		return true;
	char name[64];
	trace_record_would_deny(log, tid, seccomp_syscall_name(nr, name, sizeof(name)), shown, exec,
				fsrules_verdict_name(v));
	return false;
}

/* A new entry the sandbox makes below a private mount is one enforce
 * mode would show it too (in its private /tmp, say). */
static void note_made(struct ftrace *f, const char *path)
{
	if (f->n_made < MAX_MADE && (f->made[f->n_made] = strdup(path)))
		f->n_made++;
}

/* Creating path (of type mode): the parent needs the make right. */
static void judge_create(struct ftrace *f, struct trace_log *log, pid_t tid, int nr, const char *path, mode_t mode,
			 uint64_t extra)
{
	char parent[PATH_MAX];
	struct stat st;
	if (sandbox_lstat(tid, path, &st) == 0)
		return; /* EEXIST in either mode */
	parent_of(path, parent, sizeof(parent));
	if (judge(f, log, tid, nr, path, parent, make_right(mode) | extra, false))
		note_made(f, path);
}

static void observe_call(struct ftrace *f, struct trace_log *log, pid_t tid, int nr, const uint64_t *a)
{
	char path[PATH_MAX], parent[PATH_MAX];
	struct stat st;
	int dirfd = AT_FDCWD;
	unsigned long long addr = 0;
	unsigned long long flags = 0;

	switch (nr) {
	case SYS_open: case SYS_creat: case SYS_openat: case SYS_openat2: {
		if (nr == SYS_open) {
			addr = a[0];
			flags = a[1];
		} else if (nr == SYS_creat) {
			addr = a[0];
			flags = O_CREAT | O_WRONLY | O_TRUNC;
		} else {
			dirfd = (int)a[0];
			addr = a[1];
			flags = a[2];
			if (nr == SYS_openat2) {
				/* struct open_how starts with the flags. */
				uint64_t how = 0;
				struct iovec l = { &how, sizeof(how) }, r = { (void *)(uintptr_t)a[2], sizeof(how) };
				if (process_vm_readv(tid, &l, 1, &r, 1, 0) != sizeof(how))
					return;
				flags = how;
			}
		}
		if (flags & O_PATH)
			return; /* Landlock judges no O_PATH open */
		bool creat = flags & O_CREAT;
		bool follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
		if (!resolve_path(tid, dirfd, addr, follow, path, sizeof(path)))
			return;
		bool exists = sandbox_lstat(tid, path, &st) == 0;
		if (!exists && !creat)
			return; /* ENOENT in either mode */
		int acc = (int)(flags & O_ACCMODE);
		uint64_t access = 0;
		if (exists && S_ISDIR(st.st_mode))
			access = LL_FS_READ_DIR;
		else {
			if (acc == O_RDONLY || acc == O_RDWR)
				access |= LL_FS_READ_FILE;
			if (acc == O_WRONLY || acc == O_RDWR)
				access |= LL_FS_WRITE_FILE;
			/* O_TRUNC truncates (and Landlock checks it) only on a
			 * regular file: `>/dev/null` is no truncation. */
			if ((flags & O_TRUNC) && exists && S_ISREG(st.st_mode) && acc != O_RDONLY)
				access |= LL_FS_TRUNCATE;
		}
		if (!exists) {
			/* A new file: made in its parent, then opened. */
			parent_of(path, parent, sizeof(parent));
			if (!judge(f, log, tid, nr, path, parent, LL_FS_MAKE_REG, false))
				return;
			note_made(f, path);
		}
		judge(f, log, tid, nr, path, path, access, false);
		return;
	}
	case SYS_execve: case SYS_execveat:
		if (nr == SYS_execveat) {
			dirfd = (int)a[0];
			addr = a[1];
		} else {
			addr = a[0];
		}
		if (!resolve_path(tid, dirfd, addr, true, path, sizeof(path)) || sandbox_lstat(tid, path, &st) < 0)
			return;
		judge(f, log, tid, nr, path, path, LL_FS_EXECUTE, true);
		return;
	case SYS_truncate:
		if (resolve_path(tid, AT_FDCWD, a[0], true, path, sizeof(path)) && sandbox_lstat(tid, path, &st) == 0)
			judge(f, log, tid, nr, path, path, LL_FS_TRUNCATE, false);
		return;
	case SYS_mkdir: case SYS_mkdirat:
		if (resolve_path(tid, nr == SYS_mkdir ? AT_FDCWD : (int)a[0], nr == SYS_mkdir ? a[0] : a[1], false, path,
				 sizeof(path)))
			judge_create(f, log, tid, nr, path, S_IFDIR, 0);
		return;
	case SYS_mknod: case SYS_mknodat:
		if (resolve_path(tid, nr == SYS_mknod ? AT_FDCWD : (int)a[0], nr == SYS_mknod ? a[0] : a[1], false, path,
				 sizeof(path)))
			judge_create(f, log, tid, nr, path, (mode_t)(nr == SYS_mknod ? a[1] : a[2]), 0);
		return;
	case SYS_symlink: case SYS_symlinkat:
		if (resolve_path(tid, nr == SYS_symlink ? AT_FDCWD : (int)a[1], nr == SYS_symlink ? a[1] : a[2], false,
				 path, sizeof(path)))
			judge_create(f, log, tid, nr, path, S_IFLNK, 0);
		return;
	case SYS_unlink: case SYS_rmdir: case SYS_unlinkat: {
		bool dir = nr == SYS_rmdir || (nr == SYS_unlinkat && (a[2] & AT_REMOVEDIR));
		if (!resolve_path(tid, nr == SYS_unlinkat ? (int)a[0] : AT_FDCWD, nr == SYS_unlinkat ? a[1] : a[0], false,
				  path, sizeof(path)) ||
		    sandbox_lstat(tid, path, &st) < 0)
			return;
		parent_of(path, parent, sizeof(parent));
		judge(f, log, tid, nr, path, parent, dir ? LL_FS_REMOVE_DIR : LL_FS_REMOVE_FILE, false);
		return;
	}
	case SYS_rename: case SYS_renameat: case SYS_renameat2: case SYS_link: case SYS_linkat: {
		bool two_fds = nr != SYS_rename && nr != SYS_link;
		bool link = nr == SYS_link || nr == SYS_linkat;
		char to[PATH_MAX], to_parent[PATH_MAX];
		if (!resolve_path(tid, two_fds ? (int)a[0] : AT_FDCWD, two_fds ? a[1] : a[0], false, path, sizeof(path)) ||
		    !resolve_path(tid, two_fds ? (int)a[2] : AT_FDCWD, two_fds ? a[3] : a[1], false, to, sizeof(to)) ||
		    sandbox_lstat(tid, path, &st) < 0)
			return;
		parent_of(path, parent, sizeof(parent));
		parent_of(to, to_parent, sizeof(to_parent));
		/* Moving or linking across directories also needs REFER. */
		uint64_t refer = strcmp(parent, to_parent) != 0 ? LL_FS_REFER : 0;
		if (!link &&
		    !judge(f, log, tid, nr, path, parent, (S_ISDIR(st.st_mode) ? LL_FS_REMOVE_DIR : LL_FS_REMOVE_FILE) | refer,
			   false))
			return;
		if (link && refer && !judge(f, log, tid, nr, path, parent, refer, false))
			return;
		struct stat tst;
		uint64_t make = make_right(st.st_mode) | refer;
		if (sandbox_lstat(tid, to, &tst) == 0)
			make |= S_ISDIR(tst.st_mode) ? LL_FS_REMOVE_DIR : LL_FS_REMOVE_FILE; /* replaced */
		if (judge(f, log, tid, nr, to, to_parent, make, false))
			note_made(f, to);
		return;
	}
	default:
		return;
	}
}

/* Note call nr of tid with arguments a, whose path is argument path_arg(nr),
 * into p: what conclude() needs once its result is known. */
static void note(struct pending *p, pid_t tid, int nr, const uint64_t a[6])
{
	int i = path_arg(nr);
	p->tid = tid;
	p->nr = nr;
	p->creates = creates(nr, a);
	read_string(tid, a[i], p->path, sizeof(p->path));
	p->path_dfd = i > 0 && nr != SYS_symlink ? (int)a[i - 1] : AT_FDCWD;
	p->dest[0] = '\0';
	p->where[0] = '\0';
	p->glob = NULL;
	int dfd, dp;
	dest_args(nr, &dfd, &dp);
	if (dp >= 0) {
		read_string(tid, a[dp], p->dest, sizeof(p->dest));
		p->dest_dfd = dfd >= 0 ? (int)a[dfd] : AT_FDCWD;
	}
}

/* Record call p of tid, which failed (or, noted at entry, will fail) with
 * e, when e is a refusal the log holds. */
static void conclude(struct ftrace *f, struct trace_log *log, pid_t tid, struct pending *p, int e)
{
	/* The sandbox shows host paths at their own names, so a
	 * path missing inside but present outside was hidden. */
	bool hidden = e == ENOENT && p->path[0] == '/' && (ftrace_host_look(p->path) & FTRACE_HOST_EXISTS);
	bool dir_hidden = e == ENOENT && !hidden && p->creates && p->path[0] == '/' && ftrace_dir_exists(p->path);
	bool refused = e == EROFS || e == EBUSY || e == EACCES || e == EPERM;
	if (refused && f->protect) {
		/* Only for the record, and only for a refused call (the
		 * kernel enforces: read-only mounts): does it touch a
		 * protected path? The destination first: a rename onto
		 * .git/config is about .git/config. */
		if (p->dest[0])
			protected_at(f, tid, p->dest_dfd, p->dest, p);
		if (!p->glob)
			protected_at(f, tid, p->path_dfd, p->path, p);
	}
	/* The open-files rlimit, which the kernel reports to
	 * nobody, seen here at the call it refused. */
	if (e == EMFILE) {
		char name[64];
		trace_note_emfile(log, tid, seccomp_syscall_name(p->nr, name, sizeof(name)));
	}
	if (p->glob && refused) {
		char name[64];
		trace_record_protected(log, tid, seccomp_syscall_name(p->nr, name, sizeof(name)), p->where, e,
				       p->glob);
	} else if (e == EACCES || e == EPERM || e == EROFS || hidden || dir_hidden) {
		char name[64];
		trace_record_file(log, tid, seccomp_syscall_name(p->nr, name, sizeof(name)), p->path, e,
				  dir_hidden, p->creates);
	}
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
			struct pending *p = a >= 0 && !f->observe ? slot(f, tid, true) : NULL;
			if (f->observe)
				observe_call(f, log, tid, (int)si.seccomp.nr, si.seccomp.args);
			if (p) {
				note(p, tid, (int)si.seccomp.nr, si.seccomp.args);
				resume = PTRACE_SYSCALL; /* stop again at its exit */
			}
		}
	} else if (sig == (SIGTRAP | 0x80)) {
		struct __ptrace_syscall_info si;
		struct pending *p = slot(f, tid, false);
		if (p && ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) > 0 &&
		    si.op == PTRACE_SYSCALL_INFO_EXIT && si.exit.is_error) {
			conclude(f, log, tid, p, (int)-si.exit.rval);
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

/* ---- SECCOMP_TRACE_WRITES: noted from a user notification ---- */

void ftrace_landlock(struct ftrace *f, const struct fsrules *rules)
{
	f->landlock = rules;
}

void ftrace_root(struct ftrace *f, int root)
{
	if (f->root >= 0)
		close(f->root);
	f->root = root;
}

/* join_path, for a name a call will look up. */
static bool absolute_in(pid_t tid, int dfd, const char *name, char *out, size_t len)
{
	/* An empty name (ENOENT but with AT_EMPTY_PATH, judged apart) or
	 * one that could not be read names nothing to look at. */
	if (name[0] == '\0' || (name[0] == '?' && name[1] == '\0'))
		return false;
	return join_path(tid, dfd, name, out, len);
}

/* The file the sandbox sees at abs, as an O_PATH fd opened from outside:
 * RESOLVE_IN_ROOT resolves its symlinks, absolute ones too, inside the
 * sandbox's tree, as the sandbox itself would. -errno when there is
 * none. */
static int open_inside(const struct ftrace *f, const char *abs, bool follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, f->root, abs, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* What a failed open_inside says of the call: ENOENT when nothing is
 * there (the call will fail so too), else 0 (no look, no record). */
static int missing(int err)
{
	return err == -ENOENT || err == -ENOTDIR ? ENOENT : 0;
}

/* Whether the sandbox's Landlock rules refuse right on the file fd (a
 * look from outside, opened by open_inside): fsrules judges its real,
 * symlink-free path, which /proc shows for the fd. */
static bool landlock_refuses(const struct ftrace *f, int fd, uint64_t right)
{
	char link[64], real[PATH_MAX];
	if (!f->landlock || !right)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, real, sizeof(real) - 1);
	if (n <= 0 || real[0] != '/')
		return false;
	real[n] = '\0';
	return fsrules_check(f->landlock, real, right, NULL, NULL) == FSR_DENY_ACCESS;
}

/* What the mount holding the file fd (opened by open_inside) answers a
 * write, then what Landlock answers right there: 0, EROFS or EACCES.
 * mode_first: an existing file is written, and its mode is checked before
 * its mount (see below). Any failure to look is 0: nothing is recorded. */
static int write_outcome_fd(const struct ftrace *f, pid_t tid, int fd, bool mode_first, uint64_t right)
{
	struct statvfs sv;
	if (fstatvfs(fd, &sv) < 0)
		return 0;
	if (!(sv.f_flag & ST_RDONLY))
		return landlock_refuses(f, fd, right) ? EACCES : 0;
	/* An existing file opened for writing without O_TRUNC, or
	 * truncate()d, meets its mode before its mount (may_open, then the
	 * mount's write access): the sandbox runs with no capabilities, so
	 * the mode alone decides. An open with O_TRUNC and a name made or
	 * removed meet the mount first. WARNING: this order is the kernel's;
	 * t_trace.sh checks it against the tracer, which sees real results. */
	struct stat st;
	uid_t uid;
	gid_t gid;
	if (mode_first && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && seccomp_caller_fsids(tid, &uid, &gid)) {
		mode_t w = st.st_uid == uid ? S_IWUSR : st.st_gid == gid ? S_IWGRP : S_IWOTH;
		if (!(st.st_mode & w))
			return EACCES;
	}
	return EROFS;
}

/* write_outcome_fd for the file at abs or, for a name to be made or
 * removed (parent), its directory; ENOENT when there is nothing there. */
static int write_outcome(const struct ftrace *f, pid_t tid, const char *abs, bool parent, bool follow,
			 bool mode_first, uint64_t right)
{
	char dir[512];
	const char *at = abs;
	if (parent) {
		const char *slash = strrchr(abs, '/');
		if (!slash || (size_t)(slash - abs) >= sizeof(dir))
			return 0;
		memcpy(dir, abs, (size_t)(slash - abs));
		dir[slash - abs] = '\0';
		at = dir[0] ? dir : "/";
		follow = true;
	}
	_cleanup_close_ int fd = open_inside(f, at, follow);
	if (fd < 0)
		return missing(fd);
	return write_outcome_fd(f, tid, fd, mode_first && !parent, right);
}

/* The error the kernel will give call p (noted at its entry, before it
 * runs): a write to a read-only mount (EROFS), or one the file's mode
 * refuses first (EACCES), a name made in a directory the sandbox does not
 * have (ENOENT), a program on a noexec mount (EACCES), a right the
 * sandbox's Landlock rules do not grant (EACCES). 0 when it will run.
 * WARNING: this only names refusals for the log; the kernel makes them.
 * A thread that rewrites the path between this look and the kernel's can
 * have a refused call recorded under another name, or not at all, never
 * make a refused call run. */
static int predict(const struct ftrace *f, pid_t tid, const struct pending *p, const uint64_t a[6])
{
	char abs[512], dest[512];
	int flags;
	if (!absolute_in(tid, p->path_dfd, p->path, abs, sizeof(abs)))
		return 0;
	switch (p->nr) {
	case SYS_execve: case SYS_execveat: {
		if (p->nr == SYS_execveat && (a[4] & AT_EMPTY_PATH))
			return 0;
		_cleanup_close_ int fd = open_inside(f, abs, !(p->nr == SYS_execveat && (a[4] & AT_SYMLINK_NOFOLLOW)));
		if (fd < 0)
			return missing(fd);
		struct statvfs sv;
		if (fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_NOEXEC))
			return EACCES;
		return landlock_refuses(f, fd, LL_FS_EXECUTE) ? EACCES : 0;
	}
	case SYS_open: case SYS_openat: {
		flags = (int)a[p->nr == SYS_open ? 1 : 2];
		bool follow = !(flags & O_NOFOLLOW), trunc = flags & O_TRUNC;
		uint64_t write = ((flags & O_ACCMODE) != O_RDONLY ? LL_FS_WRITE_FILE : 0) | (trunc ? LL_FS_TRUNCATE : 0);
		if ((flags & O_TMPFILE) == O_TMPFILE)
			return write_outcome(f, tid, abs, false, true, false, 0);
		_cleanup_close_ int fd = open_inside(f, abs, follow);
		if (fd >= 0) {
			if ((flags & O_CREAT) && (flags & O_EXCL))
				return 0; /* EEXIST */
			struct stat st;
			if (!write || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode))
				return 0; /* a read, or EISDIR: no refusal */
			/* A device, fifo or socket is written without the mount's
			 * write access and truncated by nobody (`>/dev/null`):
			 * only Landlock may refuse it. */
			if (!S_ISREG(st.st_mode))
				return landlock_refuses(f, fd, LL_FS_WRITE_FILE) ? EACCES : 0;
			return write_outcome_fd(f, tid, fd, !trunc, write);
		}
		if (flags & O_CREAT)
			return write_outcome(f, tid, abs, true, true, false, LL_FS_MAKE_REG);
		return missing(fd);
	}
	case SYS_truncate:
		return write_outcome(f, tid, abs, false, true, true, LL_FS_TRUNCATE);
	case SYS_creat:
		return write_outcome(f, tid, abs, true, true, false, LL_FS_MAKE_REG);
	case SYS_mkdir: case SYS_mkdirat:
		return write_outcome(f, tid, abs, true, true, false, LL_FS_MAKE_DIR);
	case SYS_mknod: case SYS_mknodat:
		return write_outcome(f, tid, abs, true, true, false, make_right((mode_t)a[p->nr == SYS_mknod ? 1 : 2]));
	case SYS_symlink: case SYS_symlinkat:
		return write_outcome(f, tid, abs, true, true, false, LL_FS_MAKE_SYM);
	case SYS_rmdir:
		return write_outcome(f, tid, abs, true, true, false, LL_FS_REMOVE_DIR);
	case SYS_unlink: case SYS_unlinkat:
		return write_outcome(f, tid, abs, true, true, false,
				     p->nr == SYS_unlinkat && (a[2] & AT_REMOVEDIR) ? LL_FS_REMOVE_DIR : LL_FS_REMOVE_FILE);
	case SYS_rename: case SYS_renameat: case SYS_renameat2: case SYS_link: case SYS_linkat: {
		/* What the name is decides the rights: a directory moved needs
		 * REMOVE_DIR and MAKE_DIR. */
		struct stat st;
		_cleanup_close_ int src = open_inside(f, abs, false);
		mode_t type = src >= 0 && fstat(src, &st) == 0 ? st.st_mode : S_IFREG;
		bool link = p->nr == SYS_link || p->nr == SYS_linkat;
		int e = link ? 0
			     : write_outcome(f, tid, abs, true, true, false,
					     S_ISDIR(type) ? LL_FS_REMOVE_DIR : LL_FS_REMOVE_FILE);
		if (e || !absolute_in(tid, p->dest_dfd, p->dest, dest, sizeof(dest)))
			return e;
		return write_outcome(f, tid, dest, true, true, false, make_right(type));
	}
	default:
		return 0;
	}
}

/* Is notification (nr, a) one SECCOMP_TRACE_WRITES sends to be noted
 * (seccomp_rules.c), rather than a refusal? A set-ID mode is refused. */
static bool noted(int nr, const uint64_t a[6])
{
	const uint64_t setid = S_ISUID | S_ISGID;
	switch (nr) {
	case SYS_open: case SYS_openat: {
		uint64_t flags = a[nr == SYS_open ? 1 : 2], mode = a[nr == SYS_open ? 2 : 3];
		bool makes = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
		if (makes && (mode & setid))
			return false;
		return makes || (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	}
	case SYS_creat: case SYS_mkdir: case SYS_mknod:
		return !(a[1] & setid);
	case SYS_mkdirat: case SYS_mknodat:
		return !(a[2] & setid);
	case SYS_unlink: case SYS_unlinkat: case SYS_rmdir: case SYS_rename: case SYS_renameat:
	case SYS_renameat2: case SYS_link: case SYS_linkat: case SYS_symlink: case SYS_symlinkat:
	case SYS_truncate: case SYS_execve: case SYS_execveat:
		return true;
	default:
		return false;
	}
}

bool ftrace_notified(struct ftrace *f, struct trace_log *log, int notify, const struct seccomp_notif *req)
{
	uint64_t a[6];
	for (size_t i = 0; i < 6; i++)
		a[i] = req->data.args[i];
	if (!f || f->root < 0 || !noted(req->data.nr, a))
		return false;
	struct pending p;
	pid_t tid = (pid_t)req->pid;
	note(&p, tid, req->data.nr, a);
	/* The path was read from the caller's memory: the notification must
	 * still be live, or the pid may name another process by now. */
	if (ioctl(notify, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0) {
		int e = predict(f, tid, &p, a);
		if (e)
			conclude(f, log, tid, &p, e);
	}
	/* CONTINUE: the kernel decides this call, as it would untraced
	 * (mounts, Landlock); the supervisor only notes it. Never for a call
	 * the supervisor decides (the guard performs those itself). */
	struct seccomp_notif_resp resp = {
		.id = req->id,
		.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE,
	};
	(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	return true;
}
