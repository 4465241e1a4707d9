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
 *
 * WARNING: the walk fails closed. A directory it cannot look through
 * completely (unreadable, as after an earlier run's `chmod 000 .git`;
 * deeper than PROTECT_MAX_DEPTH; holding a name too long to join; a read
 * error; listed as a directory but no longer one when opened) is itself
 * listed whenever a protected path could lie beneath it, so it is bound
 * read-only whole: nothing beneath can be written, and its mode cannot be
 * changed back to reach a file inside. Skipping it would leave, say,
 * .git/config writable in the next run (an open without O_CREAT never
 * reaches the guard). Only the entry bound, which names no directory,
 * refuses the run.
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
	size_t planned;     /* the plan's mounts before the walk's own (the deny covers among them) */
	struct error *err;
};

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Does the sandbox hide abs (filesystem.deny: an empty mount over it or
 * over a directory above it)? The agent cannot reach what is there, and
 * mount.c would not find it to bind. */
static bool hidden(const struct walk *w, const char *abs)
{
	const struct sandbox_plan *p = w->plan;
	for (size_t i = 0; i < w->planned; i++)
		if ((p->mounts[i].kind == MOUNT_HIDE_DIR && under(abs, p->mounts[i].dst)) ||
		    (p->mounts[i].kind == MOUNT_HIDE_FILE && strcmp(abs, p->mounts[i].dst) == 0))
			return true;
	return false;
}

static int add(struct walk *w, const char *abs, bool is_dir)
{
	struct sandbox_plan *p = w->plan;
	if (hidden(w, abs))
		return 0;
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

/* Could a protected path be at rel, or beneath it, whatever rel turns out
 * to be (a directory, a file, a symlink)? */
static bool may_matter(const struct protect_set *set, const char *rel)
{
	return protect_match(set, rel, true) || protect_match(set, rel, false) || protect_link_dangerous(set, rel) ||
	       protect_may_match_beneath(set, rel);
}

/* walk_dir's answer when it could not look through the whole directory:
 * its caller lists the directory itself (see the WARNING above). */
#define WALK_INCOMPLETE 1

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
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			/* A read error ends the listing early: what it did not
			 * list was never looked at. */
			if (errno != 0)
				r = WALK_INCOMPLETE;
			break;
		}
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
			/* A name the walk cannot join: this directory is
			 * covered whole by its caller. */
			r = WALK_INCOMPLETE;
			break;
		}
		size_t at = rel_len;
		if (rel_len)
			rel[at++] = '/';
		memcpy(rel + at, name, nl + 1);
		char abs[PATH_MAX];
		snprintf(abs, sizeof(abs), "%s/%s", w->ws, rel);
		/* The entry's type from the directory when the filesystem
		 * gives it (a stat per entry was most of the walk's cost). */
		mode_t type = de->d_type == DT_DIR ? S_IFDIR : de->d_type == DT_LNK ? S_IFLNK :
			      de->d_type == DT_UNKNOWN ? 0 : S_IFREG;
		if (!type) {
			struct stat st;
			if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
				type = st.st_mode & S_IFMT;
			} else {
				/* Gone meanwhile, or not to be examined (a
				 * directory readable but not searchable): the
				 * latter is covered whatever it is. */
				if (errno != ENOENT && may_matter(w->set, rel))
					r = add(w, abs, false);
				rel[rel_len] = '\0';
				if (r < 0)
					break;
				continue;
			}
		}
		bool is_dir = type == S_IFDIR;
		if (protect_match(w->set, rel, is_dir) || (type == S_IFLNK && protect_link_dangerous(w->set, rel))) {
			/* A link a protected path passes through (.venv -> foo):
			 * its whole target becomes read-only. */
			r = type == S_IFLNK ? add_link_target(w, dirfd(d), name) : add(w, abs, is_dir);
		} else if (is_dir && protect_may_match_beneath(w->set, rel) && !hidden(w, abs)) {
			if (depth >= PROTECT_MAX_DEPTH) {
				/* Too deep to look through: covered whole. */
				r = add(w, abs, true);
			} else {
				_cleanup_close_ int sub =
					openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					r = walk_dir(w, sub, rel, at + nl, depth + 1);
					if (r == WALK_INCOMPLETE)
						r = add(w, abs, true);
				} else if (errno != ENOENT) {
					/* Not to be looked inside: EACCES (mode 000,
					 * 111, 222, another owner's), ELOOP or
					 * ENOTDIR (no longer a directory): covered
					 * whole. ENOENT: removed or moved since it
					 * was listed; no sandboxed process can move
					 * a tree holding a protected path (the guard
					 * refuses it, and an unreadable tree too). */
					r = add(w, abs, true);
				}
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
		struct walk w = { .plan = p, .set = &p->protect, .ws = ws, .err = err, .planned = p->n_mounts };
		_cleanup_close_ int fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *rel = calloc(1, PATH_MAX);
		if (fd < 0)
			r = error_sys(err, errno, "cannot open the workspace %s", ws);
		else if (!rel)
			r = error_set(err, ENOMEM, "out of memory");
		else if ((r = walk_dir(&w, fd, rel, 0, 0)) == WALK_INCOMPLETE)
			r = error_set(err, EIO,
				      "filesystem.protect: cannot look through the workspace %s (a read error, or a name "
				      "too long to join); its protected paths could not be made read-only",
				      ws);
	}
	return r;
}
