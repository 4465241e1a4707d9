/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Building the sandbox's root. Runs in the child, which owns a new user and
 * mount namespace and holds every capability *in that namespace only*.
 *
 * Shape: every host tree the sandbox may see is first cloned as a detached
 * mount (open_tree), then made read-only/nosuid/nodev while still detached
 * (mount_setattr), then attached beneath a fresh tmpfs that becomes "/" via
 * pivot_root. Cloning before anything is mounted means a workspace under
 * /tmp cannot be shadowed by the staging tmpfs, and setting attributes on
 * the detached tree means the tree is never visible writable.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/cleanup.h"

/* The staging point. It is only ever mounted over inside our private mount
 * namespace; the host's /tmp is untouched. Observe mode builds no new root
 * and works on its copy of the host's tree in place (stage ""). */
#define STAGE "/tmp"
static const char *stage = STAGE;

static int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static int sys_mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr)
{
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, attr, sizeof(*attr));
}

/* mkdir -p of an absolute sandbox path beneath rootfd. The leaf is a
 * directory or, when !leaf_dir, an empty file. */
static int make_mount_point(int rootfd, const char *path, bool leaf_dir, struct error *err)
{
	_cleanup_free_ char *copy = strdup(path + 1);
	if (!copy)
		return error_set(err, ENOMEM, "out of memory");
	_cleanup_close_ int dir = dup(rootfd);
	if (dir < 0)
		return error_sys(err, errno, "dup");
	char *save = NULL;
	char *comp = strtok_r(copy, "/", &save);
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		bool last = next == NULL;
		if (last && !leaf_dir) {
			/* Already there (observe mode mounts over the host's
			 * own file): nothing to make, and nothing to open. */
			struct stat st;
			if (fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode)))
				return 0; /* (a named socket in a bound directory: bound over itself) */
			int fd = openat(dir, comp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
			if (fd < 0 && errno != EEXIST && errno != EISDIR)
				return error_sys(err, errno, "cannot create mount point %s", path);
			if (fd >= 0)
				close(fd);
			return 0;
		}
		if (mkdirat(dir, comp, 0755) < 0 && errno != EEXIST)
			return error_sys(err, errno, "cannot create mount point %s", path);
		int nd = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nd < 0)
			return error_sys(err, errno, "cannot open mount point %s", path);
		close(dir);
		dir = nd;
		comp = next;
	}
	return 0;
}

/* STAGE + dst, refusing (never truncating) an over-long path. */
static int staged(char *buf, size_t len, const char *dst, struct error *err)
{
	int n = snprintf(buf, len, "%s%s", stage, dst);
	if (n < 0 || (size_t)n >= len)
		return error_set(err, ENAMETOOLONG, "path too long: %s", dst);
	return 0;
}

static int attach(int tree, const char *dst, struct error *err)
{
	char target[PATH_MAX];
	if (staged(target, sizeof(target), dst, err) < 0)
		return -ENAMETOOLONG;
	if (sys_move_mount(tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return error_sys(err, errno, "cannot attach %s", dst);
	return 0;
}

static int set_attrs(int tree, uint64_t set, struct error *err, const char *what)
{
	struct mount_attr attr = { .attr_set = set };
	if (sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0)
		return error_sys(err, errno, "cannot restrict mount of %s", what);
	return 0;
}

static int mount_tmpfs_at(const char *dst, const char *opts, unsigned long flags, struct error *err)
{
	char target[PATH_MAX];
	if (staged(target, sizeof(target), dst, err) < 0)
		return -ENAMETOOLONG;
	if (mount("tmpfs", target, "tmpfs", flags, opts) < 0)
		return error_sys(err, errno, "cannot mount tmpfs on %s", dst);
	return 0;
}

static int build_dev(int rootfd, int *devtrees, struct error *err)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
	int r = make_mount_point(rootfd, "/dev", true, err);
	if (r < 0)
		return r;
	r = mount_tmpfs_at("/dev", "mode=0755,size=64k", MS_NOSUID | MS_NOEXEC, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
		char p[64];
		snprintf(p, sizeof(p), "/dev/%s", nodes[i]);
		r = make_mount_point(rootfd, p, false, err);
		if (r < 0)
			return r;
		r = attach(devtrees[i], p, err);
		if (r < 0)
			return r;
	}
	r = make_mount_point(rootfd, "/dev/pts", true, err);
	if (r >= 0)
		r = make_mount_point(rootfd, "/dev/shm", true, err);
	if (r < 0)
		return r;
	char pts[PATH_MAX];
	if ((r = staged(pts, sizeof(pts), "/dev/pts", err)) < 0)
		return r;
	if (mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") < 0)
		return error_sys(err, errno, "cannot mount devpts");
	r = mount_tmpfs_at("/dev/shm", "mode=1777", MS_NOSUID | MS_NODEV | MS_NOEXEC, err);
	if (r < 0)
		return r;
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" },
		{ "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" },
	};
	_cleanup_close_ int dev = openat(rootfd, "dev", O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dev < 0)
		return error_sys(err, errno, "cannot open /dev");
	for (size_t i = 0; i < ARRAY_SIZE(links); i++)
		if (symlinkat(links[i][0], dev, links[i][1]) < 0)
			return error_sys(err, errno, "cannot create /dev/%s", links[i][1]);
	return 0;
}

/* A protected path, bound read-only over itself. The path is opened
 * component by component beneath the new root without following a
 * symlink, so a name the plan saw as a file cannot have become a link to
 * somewhere else; the tree is cloned from what the sandbox already shows
 * there (the workspace's bind, idmapped or not), made read-only while
 * detached, and attached on top of the very dentry it came from.
 *
 * Fails closed (protect.c lists only paths the sandbox shows: none
 * beneath filesystem.deny): a path gone or changed since the walk (a
 * component renamed, removed, or now a symlink or a file) refuses the run
 * rather than leave whatever took its place writable. A directory on the
 * way that the sandbox's uid may not search (another owner's, mode 0700,
 * seen only by a walk started as root) is bound read-only whole instead:
 * the agent cannot reach beneath it, nor change its mode. */
static int protect_bind(int rootfd, const char *ws, const char *dst, struct error *err)
{
	_cleanup_free_ char *copy = strdup(dst + 1);
	if (!copy)
		return error_set(err, ENOMEM, "out of memory");
	_cleanup_close_ int fd = dup(rootfd);
	if (fd < 0)
		return error_sys(err, errno, "dup");
	size_t ws_len = strlen(ws), reached = 0; /* length of dst's prefix that fd names */
	char *save = NULL;
	for (char *comp = strtok_r(copy, "/", &save); comp;) {
		char *next = strtok_r(NULL, "/", &save);
		int nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC | (next ? O_DIRECTORY : 0));
		if (nfd < 0 && errno == EACCES && reached > ws_len && strncmp(dst, ws, ws_len) == 0 &&
		    dst[ws_len] == '/')
			break; /* fd: a directory in the workspace the sandbox cannot search */
		if (nfd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
			return error_set(err, errno,
					 "protected path %s was moved, removed or replaced while the sandbox was built; "
					 "start the run again",
					 dst);
		if (nfd < 0)
			return error_sys(err, errno, "cannot open protected path %s", dst);
		close(fd);
		fd = nfd;
		reached += 1 + strlen(comp);
		comp = next;
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_sys(err, errno, "cannot stat protected path %s", dst);
	if (S_ISLNK(st.st_mode))
		return error_set(err, EINVAL, "protected path %s became a symlink while the sandbox was built", dst);
	_cleanup_close_ int tree = sys_open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return error_sys(err, errno, "cannot bind protected path %s", dst);
	int r = set_attrs(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err, dst);
	if (r < 0)
		return r;
	if (sys_move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, errno, "cannot make protected path %s read-only", dst);
	return 0;
}

#define REVIEW_STAGE "/.airlock-review"

/* Review mode: an overlay over the workspace's bind at dst, with that bind
 * as its lower layer and the session's upper and work directories.
 * Mounted from inside the sandbox's user namespace (overlayfs allows that
 * since Linux 5.11), so its xattrs are user.overlay.* (userxattr). The
 * kernel takes upper and work only from a mount of our own namespace
 * (it clones them privately). So a detached clone of the session's layer
 * directory (tree: ours, made while the host's tree was in view, or,
 * started as root, where the sandbox's uid cannot walk the path, the
 * supervisor's) is attached for the moment the overlay takes to mount,
 * then detached again, and its fd closed: no way out reaches the command.
 * *held gets the overlay's mount (an O_PATH fd) for the supervisor: see
 * PROTO_FD_LAYER. */
static int overlay_workspace(int tree, int rootfd, const char *dst, bool exec, int *held, struct error *err)
{
	char target[PATH_MAX], stage_dir[PATH_MAX];
	int r = staged(target, sizeof(target), dst, err);
	int lower = -1, fs = -1, mnt = -1, layer = -1, upper = -1, work = -1;
	bool attached = false;
	if (r < 0 || (r = staged(stage_dir, sizeof(stage_dir), REVIEW_STAGE, err)) < 0)
		goto out;
	if ((r = make_mount_point(rootfd, REVIEW_STAGE, true, err)) < 0 || (r = attach(tree, REVIEW_STAGE, err)) < 0)
		goto out;
	attached = true;
	layer = open(stage_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	upper = layer < 0 ? -1 : openat(layer, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	work = layer < 0 ? -1 : openat(layer, "work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upper < 0 || work < 0) {
		r = error_sys(err, errno, "review mode: cannot open the session's layer");
		goto out;
	}
	lower = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
	if (lower < 0 || fs < 0) {
		r = error_sys(err, errno, "review mode: cannot %s", lower < 0 ? "open the workspace" : "use overlayfs");
		goto out;
	}
	const int fds[3] = { lower, upper, work };
	const char *keys[3] = { "lowerdir+", "upperdir", "workdir" };
	bool by_fd = syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, keys[0], NULL, fds[0]) == 0;
	for (int i = 0; i < 3; i++) {
		if (by_fd && (i == 0 || syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, keys[i], NULL, fds[i]) == 0))
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, i == 0 ? "lowerdir" : keys[i], path, 0) < 0) {
			r = error_sys(err, errno, "review mode: overlayfs refuses %s", keys[i]);
			goto out;
		}
	}
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		r = error_sys(err, errno,
			      "review mode: cannot mount the overlay on the workspace (the state directory's "
			      "filesystem must support user xattrs, and may not be an overlay itself)");
		goto out;
	}
	/* The overlay is what the command sees: as exec as the bind beneath. */
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
			   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (exec ? 0 : MOUNT_ATTR_NOEXEC));
	if (mnt < 0 || sys_move_mount(mnt, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		r = error_sys(err, errno, "review mode: cannot attach the overlay on %s", dst);
		goto out;
	}
	*held = mnt;
	mnt = -1;
	r = 0;
out:
	for (int i = 0; i < 6; i++) {
		int fd = (int[]){ lower, fs, mnt, layer, upper, work }[i];
		if (fd >= 0)
			close(fd);
	}
	close(tree);
	if (attached) {
		if (umount2(stage_dir, MNT_DETACH) < 0 && r == 0)
			r = error_sys(err, errno, "review mode: cannot detach the session's layer");
		if (unlinkat(rootfd, &REVIEW_STAGE[1], AT_REMOVEDIR) < 0 && r == 0)
			r = error_sys(err, errno, "review mode: cannot remove %s", REVIEW_STAGE);
	}
	return r;
}

static int hide_file_tree(struct error *err)
{
	/* An empty, read-only file to mount over denied files: a detached
	 * tmpfs holding one empty file, cloned at that file. */
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return error_sys(err, errno, "fsopen tmpfs");
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		close(fs);
		return error_sys(err, errno, "fsconfig tmpfs");
	}
	int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	close(fs);
	if (mnt < 0)
		return error_sys(err, errno, "fsmount tmpfs");
	int f = openat(mnt, "empty", O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
	if (f < 0) {
		close(mnt);
		return error_sys(err, errno, "create empty file");
	}
	close(f);
	int tree = sys_open_tree(mnt, "empty", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	close(mnt);
	if (tree < 0)
		return error_sys(err, errno, "clone empty file");
	int r = set_attrs(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err,
			  "empty file");
	if (r < 0) {
		close(tree);
		return r;
	}
	return tree;
}

/* The bundle is also shown in place of the system's own bundle files
 * (those the sandbox shows, as regular files): apt, wget, Java's trust
 * store tooling and every program linked against a TLS library with its
 * built-in path read only those, not SSL_CERT_FILE, and failed every
 * intercepted request. The bundle holds the system's roots too, so what
 * they trusted they still trust. A name reached through a link is left
 * alone: resolved from outside the new root it could name a host file. */
static int cover_files(int rootfd, const char *ca, const char *const *files, size_t n, struct error *err)
{
	for (size_t i = 0; i < n; i++) {
		const char *bundle = files[i] + 1; /* beneath rootfd */
		struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
					.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		_cleanup_close_ int at = (int)syscall(SYS_openat2, rootfd, bundle, &how, sizeof(how));
		struct stat st;
		if (at < 0 || fstat(at, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		_cleanup_close_ int tree = sys_open_tree(AT_FDCWD, ca, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (tree < 0)
			return error_sys(err, errno, "cannot clone the CA bundle");
		int r = set_attrs(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err,
				  "the CA bundle");
		if (r < 0)
			return r;
		if (sys_move_mount(tree, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			return error_sys(err, errno, "cannot show the CA bundle at %s", files[i]);
	}
	return 0;
}

/* A file of ours under /run/airlock, 0444, its staged path in staged_out. */
static int write_run_file(int rootfd, const char *path, const void *data, size_t len, char *staged_out,
			  size_t staged_len, struct error *err)
{
	int r = make_mount_point(rootfd, path, false, err);
	if (r < 0 || (r = staged(staged_out, staged_len, path, err)) < 0)
		return r;
	int fd = open(staged_out, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || fchmod(fd, 0444) < 0) {
		r = error_sys(err, errno, "cannot write %s", path);
		if (fd >= 0)
			close(fd);
		return r;
	}
	close(fd);
	return 0;
}

static const char *const devnodes[] = { "/dev/null", "/dev/zero", "/dev/full",
					"/dev/random", "/dev/urandom", "/dev/tty" };

/* What mount_build_root's steps share. Every fd here is owned, -1 when
 * unset, and closed by root_build_fini; trees is owned too (one entry per
 * plan mount). */
struct root_build {
	const struct sandbox_plan *plan;
	int *trees;
	int devtrees[ARRAY_SIZE(devnodes)];
	int hide_tree;
	int rootfd;
	int review_tree;
	int held;
};

static void root_build_fini(struct root_build *b)
{
	stage = STAGE;
	for (size_t i = 0; i < ARRAY_SIZE(b->devtrees); i++)
		if (b->devtrees[i] >= 0)
			close(b->devtrees[i]);
	if (b->trees)
		for (size_t i = 0; i < b->plan->n_mounts; i++)
			if (b->trees[i] >= 0)
				close(b->trees[i]);
	if (b->hide_tree >= 0)
		close(b->hide_tree);
	free(b->trees);
	cleanup_closep(&b->held);
	cleanup_closep(&b->review_tree);
	cleanup_closep(&b->rootfd);
}

/* 1. Clone every host tree while the host's view is still intact. */
static int clone_host_trees(struct root_build *b, struct error *err)
{
	const struct sandbox_plan *plan = b->plan;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(devnodes); i++) {
		b->devtrees[i] = sys_open_tree(AT_FDCWD, devnodes[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (b->devtrees[i] < 0)
			return error_sys(err, errno, "cannot clone %s", devnodes[i]);
		r = set_attrs(b->devtrees[i], MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err, devnodes[i]);
		if (r < 0)
			return r;
	}

	if (plan->review_layer && b->review_tree < 0) {
		b->review_tree = sys_open_tree(AT_FDCWD, plan->review_layer, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (b->review_tree < 0)
			return error_sys(err, errno, "review mode: cannot clone %s", plan->review_layer);
	}
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct mount_entry *m = &plan->mounts[i];
		if (m->kind == MOUNT_HIDE_FILE && b->hide_tree < 0) {
			b->hide_tree = hide_file_tree(err);
			if (b->hide_tree < 0)
				return b->hide_tree;
		}
		if (m->kind != MOUNT_BIND)
			continue;
		if (m->tree_fd >= 0) {
			b->trees[i] = m->tree_fd; /* prepared (idmapped) by the supervisor */
		} else {
			b->trees[i] = sys_open_tree(AT_FDCWD, m->src,
						    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
			/* Observe mode's read-only cover of the policy file:
			 * a file the sandbox's uid cannot even reach, it
			 * cannot change either. */
			if (b->trees[i] < 0 && plan->observe && errno == EACCES)
				continue;
			if (b->trees[i] < 0)
				return error_sys(err, errno, "cannot bind %s", m->src);
		}
		uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		if (m->readonly)
			attrs |= MOUNT_ATTR_RDONLY;
		/* No execute rule reaches into it: noexec, or the loader
		 * (`ld.so FILE`) and mmap(PROT_EXEC) would run its files
		 * past Landlock (plan.c, plan_mark_exec). Observe mode
		 * enforces nothing of the policy: its binds keep the
		 * host's exec. */
		if (!m->exec && !plan->observe)
			attrs |= MOUNT_ATTR_NOEXEC;
		r = set_attrs(b->trees[i], attrs, err, m->src);
		if (r < 0)
			return r;
	}
	return 0;
}

/* 2. A fresh tmpfs as the new root, noexec (it holds mount points,
 * links and the CA bundle, nothing to run). Observe mode: the host's tree
 * (our namespace's copy of it) stays the root; only the sandbox's own
 * /dev, /proc and /run go on top. */
static int open_new_root(struct root_build *b, struct error *err)
{
	if (b->plan->observe)
		stage = "";
	else if (mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=1m") < 0)
		return error_sys(err, errno, "cannot mount the new root");
	b->rootfd = open(b->plan->observe ? "/" : STAGE, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b->rootfd < 0)
		return error_sys(err, errno, "cannot open the new root");
	return 0;
}

/* One MOUNT_SYMLINK entry, its parents made first. */
static int attach_symlink(int rootfd, const struct mount_entry *m, struct error *err)
{
	_cleanup_free_ char *parent = strdup(m->dst);
	if (!parent)
		return error_set(err, ENOMEM, "out of memory");
	char *slash = strrchr(parent, '/');
	*slash = '\0';
	if (*parent) {
		int r = make_mount_point(rootfd, parent, true, err);
		if (r < 0)
			return r;
	}
	if (symlinkat(m->src, rootfd, m->dst + 1) < 0 && errno != EEXIST)
		return error_sys(err, errno, "cannot create symlink %s", m->dst);
	return 0;
}

/* One MOUNT_BIND entry: the tree cloned at step 1, and the review layer
 * over the workspace. */
static int attach_bind(struct root_build *b, size_t i, struct error *err)
{
	const struct sandbox_plan *plan = b->plan;
	const struct mount_entry *m = &plan->mounts[i];
	int r;

	if (b->trees[i] < 0)
		return 0; /* observe mode: out of the sandbox's reach, see above */
	r = make_mount_point(b->rootfd, m->dst, m->is_dir, err);
	/* Observe mode's cover of a file the sandbox's view does
	 * not show (under its private /tmp, say): nothing to
	 * cover, since the agent cannot reach it there. */
	if (r < 0 && plan->observe && m->readonly && (r == -EROFS || r == -ENOENT || r == -EACCES)) {
		close(b->trees[i]);
		b->trees[i] = -1;
		return 0;
	}
	if (r >= 0)
		r = attach(b->trees[i], m->dst, err);
	if (r >= 0 && m->overlay) {
		r = overlay_workspace(b->review_tree, b->rootfd, m->dst, m->exec || plan->observe, &b->held, err);
		b->review_tree = -1;
	}
	return r < 0 ? r : 0;
}

/* One MOUNT_TMPFS entry, owned by the sandbox's uid unless sticky. */
static int attach_tmpfs(const struct sandbox_plan *plan, int rootfd, const struct mount_entry *m,
			struct error *err)
{
	int r = make_mount_point(rootfd, m->dst, true, err);
	if (r >= 0) {
		char opts[32];
		snprintf(opts, sizeof(opts), "mode=%04o", m->mode);
		r = mount_tmpfs_at(m->dst, opts, MS_NOSUID | MS_NODEV | (m->exec ? 0 : MS_NOEXEC), err);
	}
	if (r < 0)
		return r;
	if (!(m->mode & S_ISVTX)) {
		char target[PATH_MAX];
		if ((r = staged(target, sizeof(target), m->dst, err)) < 0)
			return r;
		if (chown(target, plan->inner_uid, plan->inner_gid) < 0)
			return error_sys(err, errno, "cannot chown %s", m->dst);
	}
	return 0;
}

/* 3. Attach in plan order (parents before children). */
static int attach_mounts(struct root_build *b, struct error *err)
{
	const struct sandbox_plan *plan = b->plan;
	int r;

	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct mount_entry *m = &plan->mounts[i];
		switch (m->kind) {
		case MOUNT_SYMLINK:
			r = attach_symlink(b->rootfd, m, err);
			if (r < 0)
				return r;
			break;
		case MOUNT_BIND:
			r = attach_bind(b, i, err);
			if (r < 0)
				return r;
			break;
		case MOUNT_TMPFS:
			r = attach_tmpfs(plan, b->rootfd, m, err);
			if (r < 0)
				return r;
			break;
		case MOUNT_HIDE_DIR:
			r = mount_tmpfs_at(m->dst, "mode=0555,size=4k", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
					   err);
			/* Observe mode covers airlock's own files on the host's
			 * tree: one the sandbox's uid cannot reach needs none. */
			if (r == -EACCES && plan->observe)
				r = 0;
			if (r < 0)
				return r;
			break;
		case MOUNT_PROTECT:
			r = protect_bind(b->rootfd, plan->workspace, m->dst, err);
			if (r < 0)
				return r;
			break;
		case MOUNT_HIDE_FILE: {
			int t = sys_open_tree(b->hide_tree, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
			if (t < 0)
				return error_sys(err, errno, "cannot clone the empty file");
			r = attach(t, m->dst, err);
			close(t);
			if (r < 0)
				return r;
			break;
		}
		}
	}
	return 0;
}

/* The sandbox's own /dev, /proc and (observe mode) /run, and the trust
 * stores that trust the session CA. */
static int add_system_mounts(struct root_build *b, struct error *err)
{
	const struct sandbox_plan *plan = b->plan;
	int rootfd = b->rootfd;
	int r;

	r = build_dev(rootfd, b->devtrees, err);
	if (r < 0)
		return r;
	r = make_mount_point(rootfd, "/proc", true, err);
	if (r < 0)
		return r;
	/* Must precede the umount of the old root: the kernel only lets a
	 * user namespace mount procfs while a full procfs is visible. */
	char procdir[PATH_MAX];
	if ((r = staged(procdir, sizeof(procdir), "/proc", err)) < 0)
		return r;
	if (mount("proc", procdir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return error_sys(err, errno, "cannot mount /proc");
	/* Observe mode: the host's /run holds its runtime sockets (container
	 * engines, systemd, D-Bus), ways out of every namespace the sandbox
	 * keeps; a private /run replaces it, and holds the CA bundle. */
	if (plan->observe) {
		struct stat st;
		if (stat("/run", &st) == 0 && S_ISDIR(st.st_mode)) {
			r = mount_tmpfs_at("/run", "mode=0755", MS_NOSUID | MS_NODEV | MS_NOEXEC, err);
			if (r < 0)
				return r;
		} else if (plan->ca_bundle) {
			return error_set(err, ENOENT, "observe mode: no /run to hold the CA bundle");
		}
	}

	/* The CA bundle that trusts the session CA, where the agent can read
	 * but not replace it. */
	if (plan->ca_bundle) {
		char ca[PATH_MAX];
		if ((r = write_run_file(rootfd, PLAN_CA_BUNDLE, plan->ca_bundle, strlen(plan->ca_bundle), ca, sizeof(ca),
					err)) < 0 ||
		    (r = cover_files(rootfd, ca, plan_system_bundles, ARRAY_SIZE(plan_system_bundles), err)) < 0)
			return r;
	}
	/* The JVM's trust store: Java reads no PEM bundle. */
	if (plan->java_store.len) {
		static const char *const java[] = { PLAN_JAVA_CACERTS };
		char ca[PATH_MAX];
		if ((r = write_run_file(rootfd, PLAN_JAVA_STORE, plan->java_store.data, plan->java_store.len, ca,
					sizeof(ca), err)) < 0 ||
		    (r = cover_files(rootfd, ca, java, ARRAY_SIZE(java), err)) < 0)
			return r;
	}
	return 0;
}

/* 4. and 5.: the new root sealed and swapped in for the host's. */
static int pivot_to_new_root(int rootfd, struct error *err)
{
	/* 4. The root itself becomes read-only; /tmp, /dev, home stay writable
	 * as their own mounts. */
	{
		struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
		if (sys_mount_setattr(rootfd, "", AT_EMPTY_PATH, &ro) < 0)
			return error_sys(err, errno, "cannot make the new root read-only");
	}

	/* 5. pivot_root(".", ".") stacks the old root under the new one; the
	 * lazy unmount then drops the host's tree from our view entirely. */
	if (fchdir(rootfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return error_sys(err, errno, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return error_sys(err, errno, "cannot detach the old root");
	if (chdir("/") < 0)
		return error_sys(err, errno, "chdir /");
	return 0;
}

int mount_build_root(const struct sandbox_plan *plan, int *layer, struct error *err)
{
	struct root_build b = { .plan = plan, .hide_tree = -1, .rootfd = -1, .review_tree = plan->review_tree_fd,
				.held = -1 };
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(b.devtrees); i++)
		b.devtrees[i] = -1;
	*layer = -1;

	/* Nothing we do may propagate back to the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		r = error_sys(err, errno, "cannot make mounts private");
		goto out;
	}

	b.trees = calloc(plan->n_mounts ? plan->n_mounts : 1, sizeof(int));
	if (!b.trees) {
		r = error_set(err, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < plan->n_mounts; i++)
		b.trees[i] = -1;

	if ((r = clone_host_trees(&b, err)) < 0 || (r = open_new_root(&b, err)) < 0 ||
	    (r = attach_mounts(&b, err)) < 0 || (r = add_system_mounts(&b, err)) < 0)
		goto out;

	if (plan->observe) {
		r = chdir("/") < 0 ? error_sys(err, errno, "chdir /") : 0;
		goto out;
	}

	if ((r = pivot_to_new_root(b.rootfd, err)) < 0)
		goto out;
	*layer = TAKE_FD(b.held);
	r = 0;
out:
	root_build_fini(&b);
	return r;
}
