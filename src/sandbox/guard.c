/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protected paths, stage two: names that do not exist yet.
 *
 * A read-only mount protects what exists. To refuse the creation of a
 * protected name (a new .envrc, .vscode/, sub/.git/hooks/pre-commit in a
 * repository made during the run, a directory renamed to sub/.git with a
 * config inside) the seccomp filter sends every call that can make a name
 * appear (open/openat with O_CREAT, creat, mkdir*, mknod*, symlink*,
 * link*, rename*) to the supervisor as a user notification.
 *
 * The supervisor never lets such a call continue in the caller
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE would re-read the path from the
 * caller's memory and re-walk its symlinks after the check: another
 * thread could change either in between). It copies the path once, takes
 * the caller's directory (pidfd_getfd, or /proc/PID/cwd) and hands both
 * to the guard: a process of the sandbox (same user and mount namespaces,
 * same uid, same Landlock domain, so Landlock still judges the call; no
 * seccomp filter, so its own calls are not sent back). The guard pins the
 * parent directory with one openat, reads the parent's real path from
 * /proc/self/fd, judges "parent/name" against the protect globs, and
 * performs the call on the pinned parent with the copied name, never
 * following a symlink it has not judged. It then answers the caller
 * itself, injecting an opened fd (SECCOMP_IOCTL_NOTIF_ADDFD with
 * SECCOMP_ADDFD_FLAG_SEND), with the notification listener the supervisor
 * hands it once (guard_attach): the caller resumes without waiting for
 * the supervisor to wake up, and the supervisor, told first, records the
 * call meanwhile. Without the listener the supervisor answers, as before.
 *
 * WARNING: the listener is the sandbox's one: whoever holds it can answer
 * (and let continue) any notified call of any process of the sandbox. The
 * guard holds it as it holds the power to create protected names: it is
 * not dumpable and the command runs one Landlock layer deeper, so the
 * agent reaches none of its fds (test_protect_guard_fds_out_of_reach), it
 * runs no code but this file's, and it never lets a call continue.
 *
 * Per call the guard is woken once and makes no process, thread, setns or
 * Landlock call; what stays is the notification round trip, the copies of
 * the path and of the caller's directory, the read of the caller's umask,
 * and the judgement on the pinned directory's real path, read anew for
 * every call (see where_of).
 *
 * The guard is single-threaded and performs every creating call of the
 * sandbox, one at a time, so no other name can appear or move between its
 * judgement and its call; the calls that stay in the kernel (unlink,
 * rmdir, writes to existing files) cannot create or move a name.
 *
 * The guard also performs every connect, and every sendto with an
 * address, whether or not paths are protected: a unix pathname address
 * reaches a socket only when it is one filesystem.sockets names or one
 * bound inside the sandbox (g_sock). See docs/sandbox.md, "Host sockets".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <unistd.h>

#include "handoff/handoff.h"
#include "policy/protect.h"
#include "sandbox/ftrace.h"
#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "sandbox/trace.h"
#include "util/cleanup.h"
#include "util/fds.h"

#include "sandbox/guard_proto.h"

/* ---------------------------------------------------------------- guard */

struct guard {
	const struct protect_set *set;
	const char *ws;
	struct guard_resp *resp;
	int notify;     /* the sandbox's notification listener (G_NOTIFY), or -1 */
	mode_t umask;   /* the guard's own umask, as last set */
	/* filesystem.sockets as the sandbox's tree shows them (bound at their
	 * own paths): their device and inode. */
	struct {
		dev_t dev;
		ino_t ino;
	} named[PLAN_MAX_SOCKETS + 1];
	size_t n_named;
};

/* Split path into parent (may be "" for the directory itself) and its
 * last name, in place. Trailing slashes are dropped ("a/b/" names b). */
static void split(char *path, const char **parent, const char **last)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	char *slash = strrchr(path, '/');
	if (!slash) {
		*parent = "";
		*last = path;
	} else if (slash == path) {
		*parent = "/";
		*last = path + 1;
	} else {
		*slash = '\0';
		*parent = path;
		*last = slash + 1;
	}
}

static int pin(int dirfd, const char *parent)
{
	if (dirfd < 0 && dirfd != AT_FDCWD)
		return -EBADF;
	/* Symlinks in the parent are followed, as the kernel would: what is
	 * judged is where the pinned directory really is. */
	int fd = openat(dirfd, *parent ? parent : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The directory a name is made in: dirfd itself when the name has no
 * parent part and dirfd is known to be a directory (an fd is bound to its
 * directory: a rename cannot move it elsewhere, as a pinned one), else
 * the pinned parent, which *pinned then owns. */
static int pin_dir(int dirfd, bool is_dir, const char *parent, int *pinned)
{
	if (!*parent && is_dir && dirfd >= 0)
		return dirfd;
	return *pinned = pin(dirfd, parent);
}

/* The real path of the pinned directory + "/" + name. Read from the
 * kernel for every call, never kept: a thread can rename the directory
 * (or one above it) between two calls, and an inode number comes back
 * after rmdir and mkdir, so a path kept for a directory would judge a
 * name made in secret/ by where the directory was before, staging/
 * (test_protect_cwd_moved_by_another_thread). */
static int where_of(int pfd, const char *name, char *out, size_t len)
{
	char dir[PATH_MAX];
	if (fds_path(pfd, dir, sizeof(dir)) < 0)
		return -EACCES; /* cannot tell where: refuse */
	int m = strcmp(dir, "/") == 0 ? snprintf(out, len, "/%s", name) : snprintf(out, len, "%s/%s", dir, name);
	return m < 0 || (size_t)m >= len ? -ENAMETOOLONG : 0;
}

/* The path relative to the workspace, or NULL outside it. */
static const char *ws_rel(const struct guard *g, const char *abs)
{
	size_t n = strlen(g->ws);
	if (strncmp(abs, g->ws, n) != 0 || abs[n] != '/')
		return NULL;
	return abs + n + 1;
}

static int refuse(struct guard *g, const char *glob, const char *where)
{
	snprintf(g->resp->glob, sizeof(g->resp->glob), "%s", glob);
	snprintf(g->resp->where, sizeof(g->resp->where), "%s", where);
	return -EACCES;
}

/* The HANDOFF_GIT_* names the directory dfd holds (any type, a dangling
 * symlink too: git's access() checks follow links). */
static unsigned git_names_in(int dfd)
{
	unsigned have = 0;
	struct stat st;
	for (unsigned i = 0; i < HANDOFF_GIT_NAMES; i++)
		if (fstatat(dfd, handoff_git_names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			have |= handoff_git_entry_bit(handoff_git_names[i], S_ISDIR(st.st_mode));
	return have;
}

/* A new name in the workspace directory at dir_rel (pinned as pfd) that
 * would make it a git repository with config, hooks or a commondir of its
 * own: a .git file, a worktree's commondir or a host git run from a
 * parent could then lead git to the agent's config and hooks
 * (core.fsmonitor runs on the next git status). The glob of the refusal,
 * or NULL. Only a name that does not exist yet changes the shape (git
 * renames HEAD.lock over HEAD in its own repository). */
static const char *git_shape(int pfd, const char *dir_rel, const char *name, bool is_dir)
{
	unsigned add = handoff_git_entry_bit(name, is_dir);
	struct stat st;
	if (!add || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return NULL;
	return handoff_git_shape(git_names_in(pfd), add, handoff_git_admin_dir(dir_rel));
}

/* Is the directory up levels above the pinned pfd a git directory of
 * any name (its listing has git's shape)? Fails closed: a directory that
 * cannot be opened counts as one. */
static bool git_dir_above(int pfd, int up)
{
	_cleanup_close_ int fd = openat(pfd, up == 1 ? ".." : "../..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return true;
	unsigned have = git_names_in(fd);
	return handoff_git_shape(have, have, false) != NULL || handoff_git_repository(have);
}

/* A new name (name, in dir_rel pinned as pfd) among the administrative
 * files of a repository the table does not name (a bare one the user
 * keeps in the workspace, vendor/lib.git, mirror/): git runs what appears
 * in its hooks, selects filter and diff drivers from info/attributes, and
 * reads objects from wherever objects/info/alternates points (so the
 * repository's content becomes the agent's). The walk binds the existing
 * ones read-only; these are the ones that do not exist yet. */
static const char *git_admin(int pfd, const char *dir_rel, const char *name)
{
	const char *base = strrchr(dir_rel, '/');
	base = base ? base + 1 : dir_rel;
	if (strcmp(base, "hooks") == 0)
		return git_dir_above(pfd, 1) ? "(a hook of a git repository)" : NULL;
	if (strcmp(base, "info") == 0 && strcmp(name, "attributes") == 0)
		return git_dir_above(pfd, 1) ? "(a git repository's info/attributes)" : NULL;
	size_t n = strlen(dir_rel);
	bool objinfo = n >= 12 && strcmp(dir_rel + n - 12, "objects/info") == 0 &&
		       (n == 12 || dir_rel[n - 13] == '/');
	if (objinfo && (strcmp(name, "alternates") == 0 || strcmp(name, "http-alternates") == 0))
		return git_dir_above(pfd, 2) ? "(a git repository's objects/info/alternates)" : NULL;
	return NULL;
}

/* The repository shapes are refused with the table's git rows (as
 * protect_defaults has them): with protect_defaults: false and globs of
 * the policy's own, git init works as before. */
static bool git_rows_on(const struct protect_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->pat[i], "**/.git/config") == 0)
			return true;
	return false;
}

/* Judge the name about to appear at (pfd, name): 0, or -EACCES with the
 * glob recorded in the response. */
static int judge(struct guard *g, int pfd, const char *name, bool is_dir)
{
	char where[PATH_MAX];
	int r = where_of(pfd, name, where, sizeof(where));
	if (r < 0)
		return r;
	const char *rel = ws_rel(g, where);
	const char *glob = rel ? protect_match(g->set, rel, is_dir) : NULL;
	if (!glob && rel && git_rows_on(g->set)) {
		char dir_rel[PATH_MAX];
		const char *slash = strrchr(rel, '/');
		snprintf(dir_rel, sizeof(dir_rel), "%.*s", slash ? (int)(slash - rel) : 0, rel);
		glob = git_shape(pfd, dir_rel, name, is_dir);
		if (!glob)
			glob = git_admin(pfd, dir_rel, name);
	}
	return glob ? refuse(g, glob, where) : 0;
}

/* Is where (an absolute path about to be a ".git" file) the .git file of
 * a worktree that a repository of the workspace made? git worktree add
 * writes ID/gitdir naming it in .git/worktrees of the repository before
 * it writes the .git file. What the .git file later says is judged where
 * it leads (git_shape), this only keeps other new .git files out. */
static bool worktree_dotgit(const struct guard *g, const char *where)
{
	char anc[PATH_MAX];
	snprintf(anc, sizeof(anc), "%s", where);
	size_t wl = strlen(g->ws);
	for (char *slash; (slash = strrchr(anc, '/')) && (size_t)(slash - anc) >= wl;) {
		*slash = '\0';
		char wt[PATH_MAX + 32];
		snprintf(wt, sizeof(wt), "%s/.git/worktrees", anc);
		_cleanup_close_ int fd = open(wt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d)
			continue;
		int dfd = TAKE_FD(fd);
		struct dirent *de;
		bool found = false;
		for (unsigned n = 0; !found && n < 1000 && (de = readdir(d)); n++) {
			if (de->d_name[0] == '.')
				continue; /* ".", "..": git's ids never start with a dot */
			char p[NAME_MAX + 16], text[PATH_MAX];
			snprintf(p, sizeof(p), "%s/gitdir", de->d_name);
			_cleanup_close_ int f = openat(dfd, p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			ssize_t m = f >= 0 ? read(f, text, sizeof(text) - 1) : -1;
			if (m <= 0)
				continue;
			text[m] = '\0';
			text[strcspn(text, "\r\n")] = '\0';
			if (text[0] == '/') {
				found = strcmp(text, where) == 0;
				continue;
			}
			/* A relative gitdir (worktree.useRelativePaths): from
			 * the administrative directory. */
			char full[2 * PATH_MAX + 64], real[PATH_MAX];
			snprintf(full, sizeof(full), "%s/%s/%s", wt, de->d_name, text);
			char *base = strrchr(full, '/');
			*base = '\0';
			if (realpath(full, real)) {
				char joined[PATH_MAX + NAME_MAX + 2];
				snprintf(joined, sizeof(joined), "%s/%s", real, base + 1);
				found = strcmp(joined, where) == 0;
			}
		}
		closedir(d);
		if (found)
			return true;
	}
	return false;
}

/* A symlink about to appear at (pfd, name): its own name, and whether a
 * protected path could be reached through it (.venv -> foo). */
static int judge_link(struct guard *g, int pfd, const char *name)
{
	int r = judge(g, pfd, name, false);
	if (r < 0)
		return r;
	char where[PATH_MAX];
	if ((r = where_of(pfd, name, where, sizeof(where))) < 0)
		return r;
	const char *rel = ws_rel(g, where);
	return rel && protect_link_dangerous(g->set, rel) ? refuse(g, "(a symlink a protected path would pass through)", where)
							 : 0;
}

static bool dot_or_dotdot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* Does a name have to be judged before (pfd, name) is created? Not when
 * it exists: the call then fails with EEXIST and creates nothing (the
 * guard performs every creating call, so nothing can remove it in
 * between), and a program's mkdir of an existing .vscode sees the EEXIST
 * it expects. */
static bool needs_judging(int pfd, const char *name)
{
	struct stat st;
	return *name && !dot_or_dotdot(name) && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0;
}

/* A call on an existing protected path failed in the kernel (EROFS: the
 * read-only mount): name the glob in the record too. */
static int explain(struct guard *g, int pfd, const char *name, int res)
{
	if (res == -EROFS || res == -EBUSY)
		(void)judge(g, pfd, name, false);
	return res;
}

/* Names through which the kernel would reach the caller's own fds and
 * /proc entry would reach the guard's here (its fds are /dev/null and its
 * socket): "/dev/stderr" must be the caller's stderr. They are rewritten
 * to the caller's /proc/PID, in place. Only the names are rewritten, the
 * judgement is still made on the real path reached. A relative path that
 * climbs into /dev or /proc is not rewritten, and reaches the guard's own
 * harmless entries instead of the caller's. */
static void rewrite_self(char *buf, size_t len, int vpid)
{
	static const struct {
		const char *from;
		const char *to; /* after "/proc/PID" */
		bool prefix;    /* also with more after a '/' */
	} map[] = {
		{ "/proc/self", "", true },	  { "/proc/thread-self", "", true }, { "/dev/fd", "/fd", true },
		{ "/dev/stdin", "/fd/0", false }, { "/dev/stdout", "/fd/1", false },  { "/dev/stderr", "/fd/2", false },
	};
	if (vpid <= 0)
		return;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t n = strlen(map[i].from);
		if (strncmp(buf, map[i].from, n) != 0 || (buf[n] && !(map[i].prefix && buf[n] == '/')))
			continue;
		char out[PATH_MAX];
		int m = snprintf(out, sizeof(out), "/proc/%d%s%s", vpid, map[i].to, buf + n);
		if (m > 0 && (size_t)m < len && (size_t)m < sizeof(out))
			memcpy(buf, out, (size_t)m + 1);
		return;
	}
}

/* The controlling terminal (tty_nr of /proc/PID/stat) of the caller, by
 * its pid in the sandbox, or 0. Read here, when /dev/tty is opened, rather
 * than by the supervisor for every call. */
static uint32_t caller_tty(int vpid)
{
	char p[64], buf[1024];
	if (vpid <= 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/%d/stat", vpid);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *rp = strrchr(buf, ')');
	int tty = 0;
	if (!rp || sscanf(rp + 1, " %*c %*d %*d %*d %d", &tty) != 1)
		return 0;
	return (uint32_t)tty;
}

/* /dev/tty names the opener's controlling terminal: the caller's, not the
 * guard's (which has none). Opened as the caller's /dev/pts/N, else ENXIO
 * as the kernel says to a process without one. */
static int open_tty(int flags, uint32_t tty)
{
	unsigned major = (tty >> 8) & 0xfff, minor = (tty & 0xff) | ((tty >> 12) & 0xfff00);
	if (major < 136 || major > 143)
		return -ENXIO;
	char path[64];
	snprintf(path, sizeof(path), "/dev/pts/%u", (major - 136) * 256 + minor);
	int fd = open(path, (flags & ~(O_CREAT | O_EXCL)) | O_NOCTTY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* open/openat/creat with O_CREAT. The kernel's rules, followed by hand:
 * an existing name is opened (never created); with O_EXCL an existing
 * name, symlink or not, is EEXIST; without it a symlink at the last name
 * is followed (ELOOP with O_NOFOLLOW) and its target judged in turn; a
 * missing name is judged, then created with O_EXCL|O_NOFOLLOW on the
 * pinned parent, so what is created is exactly what was judged. */
static int g_open(struct guard *g, const struct guard_req *q, int dirfd, char *path, int flags, mode_t mode)
{
	char buf[PATH_MAX];
	_cleanup_close_ int owned = -1; /* the directory of the last link followed */
	int base = dirfd;
	bool base_dir = q->cwd & 1;
	snprintf(buf, sizeof(buf), "%s", path);
	for (int hops = 0; hops <= GUARD_MAX_LINKS; hops++) {
		const char *parent, *last;
		if (!buf[0])
			return -ENOENT;
		rewrite_self(buf, sizeof(buf), q->vpid);
		bool trailing = buf[strlen(buf) - 1] == '/';
		split(buf, &parent, &last);
		_cleanup_close_ int pinned = -1;
		int pfd = pin_dir(base, base_dir, parent, &pinned);
		if (pfd < 0)
			return pfd;
		struct statfs sfs;
		if (fstatfs(pfd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC) {
			/* Nothing can be created in /proc; its fd entries are
			 * magic links, opened as links, not by their text. */
			int fd = openat(pfd, *last ? last : ".", (flags & ~(O_CREAT | O_EXCL)) | O_CLOEXEC);
			return fd < 0 ? -errno : fd;
		}
		if (trailing || dot_or_dotdot(last) || !*last) {
			/* Names a directory: O_CREAT cannot create one. */
			int fd = openat(pfd, *last ? last : ".", (flags & ~O_CREAT) | O_CLOEXEC);
			return fd < 0 ? (errno == ENOENT && trailing ? -EISDIR : -errno) : fd;
		}
		struct stat st;
		if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISLNK(st.st_mode) && !(flags & O_EXCL)) {
				if (flags & O_NOFOLLOW)
					return -ELOOP;
				char target[PATH_MAX];
				ssize_t n = readlinkat(pfd, last, target, sizeof(target) - 1);
				if (n < 0) {
					if (errno == ENOENT || errno == EINVAL)
						continue; /* changed meanwhile: look again */
					return -errno;
				}
				target[n] = '\0';
				/* The target is resolved from the link's directory. */
				if (pinned >= 0) {
					if (owned >= 0)
						close(owned);
					owned = TAKE_FD(pinned);
					base = owned;
				}
				base_dir = true;
				snprintf(buf, sizeof(buf), "%s", target);
				continue;
			}
			if (flags & O_EXCL)
				return -EEXIST;
			if (S_ISDIR(st.st_mode))
				return -EISDIR; /* as the kernel answers O_CREAT on a directory */
			if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0))
				return open_tty(flags, caller_tty(q->vpid));
			/* A FIFO would block the guard, and with it every other
			 * creating call of the sandbox, until a reader comes: open
			 * it without waiting (ENXIO for a writer with no reader). */
			int nb = S_ISFIFO(st.st_mode) ? O_NONBLOCK : 0;
			int fd = openat(pfd, last, (flags & ~O_CREAT) | O_NOFOLLOW | O_CLOEXEC | nb);
			if (fd >= 0 && nb && !(flags & O_NONBLOCK))
				(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK & (O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME));
			if (fd >= 0)
				return fd;
			if (errno == ENOENT || errno == ELOOP)
				continue; /* removed or replaced meanwhile */
			return explain(g, pfd, last, -errno);
		}
		if (errno != ENOENT)
			return -errno;
		char at[PATH_MAX];
		bool own_worktree = strcmp(last, ".git") == 0 && where_of(pfd, last, at, sizeof(at)) == 0 &&
				    ws_rel(g, at) && worktree_dotgit(g, at);
		int r = own_worktree ? 0 : judge(g, pfd, last, false);
		if (r < 0)
			return r;
		int fd = openat(pfd, last, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0)
			return fd;
		if (errno == EEXIST && !(flags & O_EXCL))
			continue; /* appeared meanwhile: judge what is there now */
		return -errno;
	}
	return -ELOOP;
}

/* Would a tree moved or linked from (pfd, name) to the protected-path
 * check's newrel bring a protected name along? Walks the tree (no
 * symlink followed), bounded. 0, -EACCES (refused, recorded) or -EXDEV
 * (too big to look through: the caller copies instead). */
static int judge_tree(struct guard *g, int top, const char *newrel, const char *newabs, char *inner,
		      size_t inner_len, size_t *seen, unsigned depth)
{
	_cleanup_close_ int fd = dup(top);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d)
		return -errno;
	fd = -1;
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (dot_or_dotdot(de->d_name))
			continue;
		if (++*seen > GUARD_MAX_TREE || depth > 64) {
			r = -EXDEV;
			break;
		}
		size_t nl = strlen(de->d_name), at = inner_len;
		if (at + 1 + nl + 1 > PATH_MAX) {
			r = -EXDEV;
			break;
		}
		if (at)
			inner[at++] = '/';
		memcpy(inner + at, de->d_name, nl + 1);
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			char buf[PATH_MAX];
			bool is_dir = S_ISDIR(st.st_mode);
			const char *glob = protect_match_beneath(g->set, newrel, inner, is_dir, buf, sizeof(buf));
			if (!glob && S_ISLNK(st.st_mode) && protect_link_dangerous(g->set, buf))
				glob = "(a symlink a protected path would pass through)";
			unsigned bit = handoff_git_entry_bit(de->d_name, is_dir);
			if (!glob && bit) {
				/* The tree's directory that holds it, at its new
				 * place: a repository shape made elsewhere and
				 * moved in whole. */
				char *slash = strrchr(buf, '/');
				if (slash)
					*slash = '\0';
				glob = handoff_git_shape(git_names_in(dirfd(d)) & ~bit, bit,
							 handoff_git_admin_dir(slash ? buf : ""));
			}
			if (glob) {
				char where[PATH_MAX];
				snprintf(where, sizeof(where), "%s/%s", newabs, inner);
				r = refuse(g, glob, where);
			} else if (is_dir) {
				int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub < 0) {
					r = -EXDEV; /* cannot look inside: do not move it whole */
				} else {
					r = judge_tree(g, sub, newrel, newabs, inner, at + nl, seen, depth + 1);
					close(sub);
				}
			}
		}
		inner[inner_len] = '\0';
	}
	closedir(d);
	return r;
}

/* The entry (pfd, name) is about to appear at (npfd, nname): judge the
 * name, and everything beneath it when it is a directory. */
static int judge_move(struct guard *g, int pfd, const char *name, int npfd, const char *nname)
{
	struct stat st;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	bool is_dir = S_ISDIR(st.st_mode);
	int r = S_ISLNK(st.st_mode) ? judge_link(g, npfd, nname) : judge(g, npfd, nname, is_dir);
	if (r < 0 || !is_dir)
		return r;
	char newabs[PATH_MAX];
	if ((r = where_of(npfd, nname, newabs, sizeof(newabs))) < 0)
		return r;
	const char *newrel = ws_rel(g, newabs);
	if (!newrel)
		return 0;
	_cleanup_close_ int tree = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tree < 0)
		return -errno;
	char inner[PATH_MAX] = "";
	size_t seen = 0;
	return judge_tree(g, tree, newrel, newabs, inner, 0, &seen, 0);
}

static int g_mk(struct guard *g, const struct guard_req *q, int dirfd, char *path)
{
	const char *parent, *last;
	split(path, &parent, &last);
	_cleanup_close_ int pinned = -1;
	int pfd = pin_dir(dirfd, q->cwd & 1, parent, &pinned);
	if (pfd < 0)
		return pfd;
	if (needs_judging(pfd, last)) {
		int r = judge(g, pfd, last, q->op == G_MKDIR);
		if (r < 0)
			return r;
	}
	int r = q->op == G_MKDIR ? mkdirat(pfd, last, q->mode) : mknodat(pfd, last, q->mode, (dev_t)q->dev);
	return r < 0 ? explain(g, pfd, last, -errno) : 0;
}

/* A new symlink in the workspace whose target leaves it (~/.ssh, /etc):
 * a host tool that later reads or uploads the workspace would follow it
 * with the host's rights. Judged lexically on the target text, which the
 * guard then creates as judged; an absolute target inside the workspace
 * is fine. Goes with the hand-off table (protect_defaults). */
static int judge_target(struct guard *g, int pfd, const char *name, const char *target)
{
	char where[PATH_MAX];
	int r = where_of(pfd, name, where, sizeof(where));
	if (r < 0)
		return r;
	const char *rel = ws_rel(g, where);
	if (!rel)
		return 0;
	if (target[0] == '/') {
		/* Absolute: inside the workspace it is judged as if written
		 * from the workspace's top ("x" stands for a name there). */
		size_t n = strlen(g->ws);
		if (strncmp(target, g->ws, n) != 0 || (target[n] != '/' && target[n] != '\0'))
			return refuse(g, "(a symlink leaving the workspace)", where);
		rel = "x";
		target += n + (target[n] == '/');
	}
	return handoff_path_escapes(rel, target) ? refuse(g, "(a symlink leaving the workspace)", where) : 0;
}

static int g_symlink(struct guard *g, const struct guard_req *q, int dirfd, char *path)
{
	const char *parent, *last;
	split(path, &parent, &last);
	_cleanup_close_ int pfd = pin(dirfd, parent);
	if (pfd < 0)
		return pfd;
	if (needs_judging(pfd, last)) {
		int r = judge_link(g, pfd, last);
		if (r < 0 || (g->set->n && (r = judge_target(g, pfd, last, q->p1)) < 0))
			return r;
	}
	return symlinkat(q->p1, pfd, last) < 0 ? explain(g, pfd, last, -errno) : 0;
}

static int g_link_rename(struct guard *g, const struct guard_req *q, int fd1, int fd2, char *oldp, char *newp)
{
	const char *nparent, *nlast;
	split(newp, &nparent, &nlast);
	_cleanup_close_ int npfd = pin(fd2, nparent);
	if (npfd < 0)
		return npfd;
	if (q->op == G_LINK && (q->flags & AT_EMPTY_PATH) && !oldp[0]) {
		/* linkat(fd, "", ..., AT_EMPTY_PATH): fd1 is the file itself
		 * (an O_PATH fd can be a symlink's). */
		struct stat st;
		int r = fstat(fd1, &st) == 0 && S_ISLNK(st.st_mode) ? judge_link(g, npfd, nlast) : judge(g, npfd, nlast, false);
		if (r < 0)
			return r;
		return linkat(fd1, "", npfd, nlast, AT_EMPTY_PATH) < 0 ? -errno : 0;
	}
	const char *oparent, *olast;
	split(oldp, &oparent, &olast);
	_cleanup_close_ int opfd = pin(fd1, oparent);
	if (opfd < 0)
		return opfd;
	int r;
	if (q->op == G_LINK) {
		/* A hard link is never to a directory; what matters is the
		 * new name, and, for a link to a symlink (link(2) does not
		 * follow one), what could be reached through it. */
		struct stat st;
		bool to_link = !(q->flags & AT_SYMLINK_FOLLOW) && fstatat(opfd, olast, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			       S_ISLNK(st.st_mode);
		if (needs_judging(npfd, nlast) &&
		    (r = to_link ? judge_link(g, npfd, nlast) : judge(g, npfd, nlast, false)) < 0)
			return r;
		int fl = q->flags & AT_SYMLINK_FOLLOW;
		return linkat(opfd, olast, npfd, nlast, fl) < 0 ? -errno : 0;
	}
	if (!dot_or_dotdot(olast) && *olast && !dot_or_dotdot(nlast) && *nlast) {
		if ((r = judge_move(g, opfd, olast, npfd, nlast)) < 0)
			return r;
		/* RENAME_EXCHANGE moves the new entry to the old name too. */
		if ((q->flags & RENAME_EXCHANGE) && (r = judge_move(g, npfd, nlast, opfd, olast)) < 0)
			return r;
	}
	if (syscall(SYS_renameat2, opfd, olast, npfd, nlast, (unsigned)q->flags) < 0)
		return explain(g, opfd, olast, -errno);
	return 0;
}

/* Is a unix socket bound at the inode (dev, ino) one of the sandbox's own,
 * that is, a socket of the sandbox's network namespace? The kernel lists
 * the namespace's unix sockets with the inode each is bound at
 * (sock_diag, UDIAG_SHOW_VFS); a host process's socket is in the host's
 * namespace and never in this list. The list gives the inode's low 32
 * bits and the device in the kernel's encoding. */
static bool bound_in_sandbox(dev_t dev, ino_t ino)
{
	_cleanup_close_ int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return false;
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0U, .udiag_show = UDIAG_SHOW_VFS },
	};
	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return false;
	uint32_t want_dev = (major(dev) << 20) | minor(dev), want_ino = (uint32_t)ino;
	static char buf[32768];
	/* Headers and attributes are copied out, never cast in place: a
	 * byte buffer promises no alignment. */
	for (;;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		if (n <= 0)
			return false;
		for (size_t off = 0; off + sizeof(struct nlmsghdr) <= (size_t)n;) {
			struct nlmsghdr h;
			memcpy(&h, buf + off, sizeof(h));
			if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > (size_t)n - off)
				return false;
			if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR)
				return false;
			size_t at = off + NLMSG_LENGTH(sizeof(struct unix_diag_msg)), end = off + h.nlmsg_len;
			while (at + sizeof(struct rtattr) <= end) {
				struct rtattr a;
				memcpy(&a, buf + at, sizeof(a));
				if (a.rta_len < sizeof(a) || a.rta_len > end - at)
					break;
				if (a.rta_type == UNIX_DIAG_VFS && a.rta_len >= RTA_LENGTH(sizeof(struct unix_diag_vfs))) {
					struct unix_diag_vfs v;
					memcpy(&v, buf + at + RTA_LENGTH(0), sizeof(v));
					if (v.udiag_vfs_ino == want_ino && v.udiag_vfs_dev == want_dev)
						return true;
				}
				at += RTA_ALIGN(a.rta_len);
			}
			off += NLMSG_ALIGN(h.nlmsg_len);
		}
	}
}

static bool socket_allowed(const struct guard *g, const struct stat *st)
{
	for (size_t i = 0; i < g->n_named; i++)
		if (g->named[i].dev == st->st_dev && g->named[i].ino == st->st_ino)
			return true;
	return bound_in_sandbox(st->st_dev, st->st_ino);
}

/* connect or sendto, performed on the caller's socket with the address
 * copied once. A unix pathname address is looked up once (as connect
 * would: from the caller's directory, following symlinks), judged by the
 * inode it reaches, and that very inode is what the call then reaches,
 * through /proc/self/fd: no rename or symlink swapped in between can
 * change it. */
static int g_sock(struct guard *g, const struct guard_req *q, int sock, int cwd, const void *data, size_t dlen)
{
	union {
		struct sockaddr sa;
		struct sockaddr_un un;
		struct sockaddr_storage ss;
	} a;
	socklen_t alen = q->mode;
	_cleanup_close_ int pfd = -1;
	if (alen > sizeof(a))
		return -EINVAL;
	memcpy(&a, q->p1, alen);
	if (alen > offsetof(struct sockaddr_un, sun_path) && a.sa.sa_family == AF_UNIX && a.un.sun_path[0]) {
		char path[PATH_MAX];
		size_t plen = alen - offsetof(struct sockaddr_un, sun_path);
		memcpy(path, a.un.sun_path, plen);
		path[plen] = '\0';
		rewrite_self(path, sizeof(path), q->vpid);
		pfd = openat(path[0] == '/' || cwd < 0 ? AT_FDCWD : cwd, path, O_PATH | O_CLOEXEC);
		if (pfd < 0)
			return -errno;
		struct stat st;
		if (fstat(pfd, &st) < 0)
			return -errno;
		if (S_ISSOCK(st.st_mode) && !socket_allowed(g, &st)) {
			snprintf(g->resp->glob, sizeof(g->resp->glob), "a host socket filesystem.sockets does not name");
			snprintf(g->resp->where, sizeof(g->resp->where), "%s", path);
			return -EACCES;
		}
		memset(&a.un, 0, sizeof(a.un));
		a.un.sun_family = AF_UNIX;
		int m = snprintf(a.un.sun_path, sizeof(a.un.sun_path), "/proc/self/fd/%d", pfd);
		alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)m + 1);
	}
	/* A call on a blocking socket can wait (a listener's full backlog, a
	 * full datagram receiver), and while it waits the guard and the
	 * supervisor answer nothing else. The wait is bounded by a send
	 * timeout set for the call alone (the caller's own, when shorter,
	 * stays): past it the caller gets what the kernel gives a socket
	 * with that timeout (EAGAIN for unix, EINPROGRESS for TCP). */
	struct timeval old = { 0 }, bound = { .tv_sec = GUARD_SOCK_WAIT_S };
	socklen_t ol = sizeof(old);
	int fl = fcntl(sock, F_GETFL);
	bool bounded = fl >= 0 && !(fl & O_NONBLOCK) && !((q->flags & MSG_DONTWAIT) && q->op == G_SENDTO) &&
		       getsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &old, &ol) == 0 &&
		       ((!old.tv_sec && !old.tv_usec) || old.tv_sec >= GUARD_SOCK_WAIT_S) &&
		       setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof(bound)) == 0;
	/* MSG_NOSIGNAL: a SIGPIPE would kill the guard; the caller gets
	 * EPIPE without the signal. */
	ssize_t r = q->op == G_CONNECT ? connect(sock, &a.sa, alen)
				       : sendto(sock, data, dlen, q->flags | MSG_NOSIGNAL, &a.sa, alen);
	int e = errno;
	if (bounded)
		(void)setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &old, sizeof(old));
	if (r < 0)
		return -e;
	return q->op == G_CONNECT ? 0 : (int)r;
}

static void guard_named(struct guard *g, const struct sandbox_plan *plan)
{
	for (size_t i = 0; i < plan->n_sockets && g->n_named < PLAN_MAX_SOCKETS + 1; i++) {
		struct stat st;
		if (stat(plan->sockets[i], &st) == 0 && S_ISSOCK(st.st_mode)) {
			g->named[g->n_named].dev = st.st_dev;
			g->named[g->n_named].ino = st.st_ino;
			g->n_named++;
		}
	}
}

/* Answer the caller's pending call (q->id) with res, installing out (an
 * opened file, or -1) as its result: the caller resumes without waiting
 * for the supervisor. A caller gone meanwhile (ENOENT) took its call, and
 * the id, with it. */
static void answer(int notify, const struct guard_req *q, int res, int out)
{
	if (out >= 0) {
		struct seccomp_notif_addfd add = {
			.id = q->id,
			.flags = SECCOMP_ADDFD_FLAG_SEND,
			.srcfd = (uint32_t)out,
			.newfd_flags = (q->flags & O_CLOEXEC) ? O_CLOEXEC : 0,
		};
		if (ioctl(notify, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0 || errno == ENOENT)
			return;
		res = -errno; /* e.g. EMFILE: the call fails with it */
	}
	struct seccomp_notif_resp r = { .id = q->id };
	if (res < 0)
		r.error = res;
	else
		r.val = res;
	(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

static void guard_serve(const struct sandbox_plan *plan, int sock)
{
	struct guard_req *q = malloc(sizeof(*q));
	struct guard_resp *resp = malloc(sizeof(*resp));
	char *data = malloc(GUARD_MAX_DATA);
	static struct guard g;
	if (!q || !resp || !data)
		_exit(1);
	g = (struct guard){ .set = &plan->protect, .ws = plan->workspace, .resp = resp, .notify = -1, .umask = 0 };
	umask(0);
	guard_named(&g, plan);
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * 2)];
			struct cmsghdr align;
		} u;
		struct iovec iov[2] = { { .iov_base = q, .iov_len = sizeof(*q) },
					{ .iov_base = data, .iov_len = GUARD_MAX_DATA } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0)
			_exit(0); /* the supervisor is gone */
		int fds[2] = { -1, -1 };
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < k; i++) {
					int fd;
					memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
					if (i < 2)
						fds[i] = fd;
					else
						close(fd);
				}
			}
		if ((size_t)n == sizeof(*q) && q->op == G_NOTIFY) {
			/* The listener, once, from the supervisor (the only
			 * other end of this socket); no answer. */
			if (g.notify < 0 && fds[0] >= 0)
				g.notify = TAKE_FD(fds[0]);
			for (int i = 0; i < 2; i++)
				if (fds[i] >= 0)
					close(fds[i]);
			continue;
		}
		memset(resp, 0, sizeof(*resp));
		int res = -EINVAL, out = -1;
		size_t dlen = (size_t)n > sizeof(*q) ? (size_t)n - sizeof(*q) : 0;
		if ((size_t)n >= sizeof(*q) && fds[0] >= 0 && (q->op == G_CONNECT || q->op == G_SENDTO)) {
			res = g_sock(&g, q, fds[0], fds[1], data, dlen);
		} else if ((size_t)n == sizeof(*q) &&
			   (fds[0] >= 0 || ((q->op == G_OPEN || q->op == G_MKDIR || q->op == G_MKNOD) && q->p1[0] == '/'))) {
			q->p1[PATH_MAX - 1] = q->p2[PATH_MAX - 1] = '\0';
			int fd2 = fds[1] >= 0 ? fds[1] : fds[0];
			if ((q->op == G_OPEN || q->op == G_MKDIR || q->op == G_MKNOD) && (q->umask & 0777) != g.umask) {
				g.umask = q->umask & 0777;
				umask(g.umask);
			}
			if (q->op != G_SYMLINK) /* a symlink's target is text, not looked up */
				rewrite_self(q->p1, sizeof(q->p1), q->vpid);
			rewrite_self(q->p2, sizeof(q->p2), q->vpid);
			/* A set-ID file the guard made would be stored under the
			 * workspace owner's id on the host, for any local user to
			 * run as that owner (as root, on a root-owned workspace).
			 * The seccomp filter refuses these modes before they get
			 * here; the guard, which creates with its own
			 * privileges, refuses them too. */
			if ((q->mode & (S_ISUID | S_ISGID)) &&
			    (q->op == G_MKDIR || q->op == G_MKNOD ||
			     (q->op == G_OPEN && (q->flags & (O_CREAT | O_TMPFILE)))))
				res = -EPERM;
			else switch ((enum guard_op)q->op) {
			case G_OPEN:
				res = g_open(&g, q, fds[0] >= 0 ? fds[0] : AT_FDCWD, q->p1, q->flags, q->mode);
				if (res >= 0) {
					out = res;
					res = 0;
				}
				break;
			case G_MKDIR:
			case G_MKNOD:
				res = g_mk(&g, q, fds[0] >= 0 ? fds[0] : AT_FDCWD, q->p1);
				break;
			case G_SYMLINK:
				res = g_symlink(&g, q, fds[0], q->p2);
				break;
			case G_LINK:
			case G_RENAME:
				res = g_link_rename(&g, q, fds[0], fd2, q->p1, q->p2);
				break;
			case G_CONNECT:
			case G_SENDTO:
			case G_NOTIFY:
				break; /* above */
			}
		}
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		resp->res = res;
		resp->seq = q->seq;
		/* With the listener the guard answers the caller itself, after
		 * telling the supervisor (which then records the call while
		 * the caller resumes, instead of before). */
		resp->answered = (size_t)n >= sizeof(*q) && q->id && g.notify >= 0;
		if (proto_send(sock, resp, sizeof(*resp), &out, out >= 0 && !resp->answered ? 1 : 0) < 0)
			_exit(1);
		if (resp->answered)
			answer(g.notify, q, res, out);
		if (out >= 0)
			close(out);
	}
}

int guard_start(const struct sandbox_plan *plan, struct error *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_sys(err, errno, "socketpair");
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return error_sys(err, e, "cannot start the guard");
	}
	if (pid == 0) {
		/* Hold nothing of init's: no sync socket, no pty, no listener. */
		int keep = sv[1];
		if (keep != 3) {
			if (dup3(keep, 3, O_CLOEXEC) < 0)
				_exit(1);
			keep = 3;
		}
		if (fds_close_from(4, NULL, 0) < 0)
			_exit(1);
		/* Not even the host's terminal through stdio. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0)
			_exit(1);
		for (int i = 0; i < 3; i++)
			if (dup2(null, i) < 0)
				_exit(1);
		close(null);
		/* Not dumpable: the agent (same uid) may not read its memory or
		 * borrow its fds through /proc. */
		if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			_exit(1);
		prctl(PR_SET_NAME, "airlock-guard");
		guard_serve(plan, keep);
		_exit(0);
	}
	close(sv[1]);
	return sv[0];
}
