/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protected paths, stage one: every protected file or directory that
 * exists in the workspace when the sandbox starts is bound read-only over
 * itself (mount.c, MOUNT_PROTECT), so the kernel refuses every write to it
 * (EROFS), every unlink or rename of it (EBUSY: it is a mount point), and
 * every file created beneath a protected directory.
 *
 * The walk runs in the supervisor before any sandboxed code exists, on
 * the host's view, through directory fds (openat, O_NOFOLLOW), bounded in
 * depth, entries and mounts like the hand-off scanner's. It only lists
 * paths; mount.c opens each one again, component by component without
 * following a symlink, inside the sandbox's own tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handoff/protect.h"
#include "sandbox/internal.h"
#include "util/cleanup.h"

struct walk {
	struct sandbox_plan *plan;
	const struct protect_set *set;
	const char *ws;     /* host path of the workspace, resolved */
	size_t entries;
	size_t mounts;
	struct error *err;
};

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int add(struct walk *w, const char *abs, bool is_dir)
{
	struct sandbox_plan *p = w->plan;
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].kind == MOUNT_PROTECT && strcmp(p->mounts[i].dst, abs) == 0)
			return 0;
	if (++w->mounts > PROTECT_MAX_MOUNTS)
		return error_set(w->err, E2BIG,
				 "filesystem.protect: more than %d protected paths exist in the workspace %s; "
				 "protect their directory with a dir/** glob, or narrow filesystem.protect",
				 PROTECT_MAX_MOUNTS, w->ws);
	struct mount_entry *v = realloc(p->mounts, (p->n_mounts + 1) * sizeof(*v));
	if (!v)
		return error_set(w->err, ENOMEM, "out of memory");
	p->mounts = v;
	v[p->n_mounts] = (struct mount_entry){ .kind = MOUNT_PROTECT, .readonly = true, .is_dir = is_dir, .tree_fd = -1 };
	if (!(v[p->n_mounts].dst = strdup(abs)))
		return error_set(w->err, ENOMEM, "out of memory");
	p->n_mounts++;
	return 0;
}

/* A symlink at a protected name: what the host tool will read is its
 * target, so the target is protected when it lies in the workspace.
 * (Outside it, the sandbox shows it read-only or not at all, unless a
 * filesystem.write path says otherwise.) A dangling link protects
 * nothing here. */
static int add_link_target(struct walk *w, int parent, const char *name)
{
	_cleanup_close_ int fd = openat(parent, name, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char proc[64], real[PATH_MAX];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(proc, real, sizeof(real) - 1);
	if (n <= 0)
		return 0;
	real[n] = '\0';
	struct stat st;
	if (!under(real, w->ws) || strcmp(real, w->ws) == 0 || fstat(fd, &st) < 0)
		return 0;
	return add(w, real, S_ISDIR(st.st_mode));
}

static int walk_dir(struct walk *w, int parent, char *rel, size_t rel_len, unsigned depth)
{
	_cleanup_close_ int fd = dup(parent);
	if (fd < 0)
		return error_sys(w->err, errno, "dup");
	DIR *d = fdopendir(fd);
	if (!d)
		return error_sys(w->err, errno, "cannot read %s/%s", w->ws, rel);
	fd = -1; /* owned by d */
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (++w->entries > PROTECT_MAX_ENTRIES) {
			r = error_set(w->err, E2BIG,
				      "filesystem.protect: the workspace %s has more than %d entries to look through; "
				      "narrow filesystem.protect, or set filesystem.protect_defaults: false",
				      w->ws, PROTECT_MAX_ENTRIES);
			break;
		}
		size_t nl = strlen(name);
		if (rel_len + 1 + nl + 1 > PATH_MAX || strlen(w->ws) + 1 + rel_len + 1 + nl + 1 > PATH_MAX) {
			r = error_set(w->err, ENAMETOOLONG, "filesystem.protect: a path under %s/%s is too long",
				      w->ws, rel);
			break;
		}
		size_t at = rel_len;
		if (rel_len)
			rel[at++] = '/';
		memcpy(rel + at, name, nl + 1);
		/* The entry's type from the directory when the filesystem
		 * gives it (a stat per entry was most of the walk's cost). */
		mode_t type = de->d_type == DT_DIR ? S_IFDIR : de->d_type == DT_LNK ? S_IFLNK :
			      de->d_type == DT_UNKNOWN ? 0 : S_IFREG;
		if (!type) {
			struct stat st;
			if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				rel[rel_len] = '\0';
				continue; /* gone meanwhile */
			}
			type = st.st_mode & S_IFMT;
		}
		bool is_dir = type == S_IFDIR;
		char abs[PATH_MAX];
		snprintf(abs, sizeof(abs), "%s/%s", w->ws, rel);
		if (protect_match(w->set, rel, is_dir) || (type == S_IFLNK && protect_link_dangerous(w->set, rel))) {
			/* A link a protected path passes through (.venv -> foo):
			 * its whole target becomes read-only. */
			r = type == S_IFLNK ? add_link_target(w, dirfd(d), name) : add(w, abs, is_dir);
		} else if (is_dir && protect_may_match_beneath(w->set, rel)) {
			if (depth >= PROTECT_MAX_DEPTH) {
				r = error_set(w->err, E2BIG,
					      "filesystem.protect: %s is nested more than %d directories deep", abs,
					      PROTECT_MAX_DEPTH);
			} else {
				_cleanup_close_ int sub =
					openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0)
					r = walk_dir(w, sub, rel, at + nl, depth + 1);
				else if (errno != ENOENT && errno != EACCES)
					r = error_sys(w->err, errno, "cannot open %s", abs);
			}
		}
		rel[rel_len] = '\0';
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

int protect_plan(struct sandbox_plan *p, const struct policy *pol, const char *ws, struct error *err)
{
	if (protect_set_from_policy(pol, &p->protect) < 0)
		return error_set(err, ENOMEM, "out of memory");
	int r = 0;
	if (p->protect.n) {
		struct walk w = { .plan = p, .set = &p->protect, .ws = ws, .err = err };
		_cleanup_close_ int fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *rel = calloc(1, PATH_MAX);
		if (fd < 0)
			r = error_sys(err, errno, "cannot open the workspace %s", ws);
		else if (!rel)
			r = error_set(err, ENOMEM, "out of memory");
		else
			r = walk_dir(&w, fd, rel, 0, 0);
	}
	return r;
}
