/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Applying a reviewed change to the real workspace, all or nothing.
 *
 * 1. Check: every flagged change accepted, and no change's workspace
 *    entry changed since the run started (the manifest).
 * 2. Stage: each new or replaced file is written under a temporary name
 *    in its target directory (same filesystem, so a rename places it);
 *    each new or replacing directory is built whole under a temporary
 *    name beside its target. Nothing the user sees has changed yet.
 * 3. Swap: each replaced or deleted entry is renamed into a backup
 *    directory at the workspace's top, each staged entry renamed into
 *    place.
 * 4. Commit: the journal says so, the backups are removed.
 *
 * Every step is written to the session's journal (and synced) before it
 * is taken. A failure rolls back in reverse: placed entries removed,
 * backed-up entries renamed back, staged ones removed. An apply that was
 * killed midway leaves its journal, and the next apply, review or
 * discard of the session finishes the rollback (or, past the commit, the
 * cleanup) before anything else.
 *
 * Every path of the workspace is reached through directory fds opened
 * component by component with O_NOFOLLOW: a symlink in the workspace
 * never takes a write elsewhere.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "handoff/handoff.h"
#include "review/review.h"
#include "util/cleanup.h"

struct journal {
	FILE *f;
	char path[PATH_MAX];
};

static int jwrite(struct journal *j, struct error *err, const char *op, const char *rel, const char *extra)
{
	_cleanup_free_ char *esc = rel ? review_escape(rel) : NULL;
	if (rel && !esc)
		return error_set(err, ENOMEM, "out of memory");
	fprintf(j->f, "%s%s%s%s%s\n", op, esc ? " " : "", esc ? esc : "", extra ? " " : "", extra ? extra : "");
	if (fflush(j->f) != 0 || fsync(fileno(j->f)) < 0)
		return error_sys(err, errno, "cannot write the journal %s", j->path);
	return 0;
}

/* Open the parent directory of rel beneath wsfd, never following a
 * symlink; *leaf points at the last component. */
static int open_parent(int wsfd, const char *rel, char *buf, size_t len, const char **leaf)
{
	if (strlen(rel) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, rel);
	char *slash = strrchr(buf, '/');
	if (!slash) {
		*leaf = buf;
		int fd = dup(wsfd);
		return fd < 0 ? -errno : fd;
	}
	*slash = '\0';
	*leaf = slash + 1;
	int fd = dup(wsfd);
	if (fd < 0)
		return -errno;
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int nfd = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0)
			return -errno;
		fd = nfd;
	}
	return fd;
}

/* ---- rollback and recovery ---- */

struct jline {
	char op[16];
	char *rel;
	char *extra;
};

/* Undo the journal's steps in reverse. Returns 0, or the first error (it
 * goes on with the other steps). */
static int rollback(int wsfd, const char *jpath, bool *committed, struct error *err)
{
	*committed = false;
	_cleanup_fclose_ FILE *f = fopen(jpath, "re");
	if (!f)
		return errno == ENOENT ? 0 : error_sys(err, errno, "cannot read %s", jpath);
	struct jline *v = NULL;
	size_t n = 0, cap = 0;
	_cleanup_free_ char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	char *backup = NULL;
	int r = 0;
	while ((len = getline(&line, &lcap, f)) > 0) {
		if (line[len - 1] != '\n')
			break; /* torn last line: that step was not taken */
		line[len - 1] = '\0';
		if (!strcmp(line, "commit")) {
			*committed = true;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct jline *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				r = error_set(err, ENOMEM, "out of memory");
				goto out;
			}
			v = nv;
		}
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		char *rel = sp + 1, *extra = strchr(rel, ' ');
		if (extra)
			*extra++ = '\0';
		if (!review_unescape(rel) || strlen(line) >= sizeof(v[n].op))
			continue;
		snprintf(v[n].op, sizeof(v[n].op), "%s", line);
		v[n].rel = strdup(rel);
		v[n].extra = extra ? strdup(extra) : NULL;
		if (!strcmp(line, "backup"))
			backup = v[n].rel;
		n++;
	}
	for (size_t i = n; i-- > 0 && !*committed;) {
		const char *leaf;
		char buf[PATH_MAX];
		int pfd = open_parent(wsfd, v[i].rel, buf, sizeof(buf), &leaf);
		int e = 0;
		if (pfd < 0) {
			e = pfd == -ENOENT ? 0 : pfd;
		} else if (!strcmp(v[i].op, "placed") || !strcmp(v[i].op, "stage")) {
			e = review_remove_at(pfd, leaf);
		} else if (!strcmp(v[i].op, "moved") && backup && v[i].extra) {
			char from[PATH_MAX];
			snprintf(from, sizeof(from), "%s/%s", backup, v[i].extra);
			if (renameat2(wsfd, from, pfd, leaf, RENAME_NOREPLACE) < 0 && errno != ENOENT)
				e = -errno;
		}
		if (pfd >= 0)
			close(pfd);
		if (e < 0 && r == 0)
			r = error_sys(err, -e, "rollback: cannot restore %s", v[i].rel);
	}
	/* Committed or rolled back: the backups are no longer needed. */
	if (backup && r == 0) {
		int e = review_remove_at(wsfd, backup);
		if (e < 0)
			r = error_sys(err, -e, "cannot remove the backup directory %s", backup);
	}
out:
	for (size_t i = 0; i < n; i++) {
		free(v[i].rel);
		free(v[i].extra);
	}
	free(v);
	return r;
}

int review_recover(const char *dir, FILE *out, struct error *err)
{
	char jpath[PATH_MAX];
	snprintf(jpath, sizeof(jpath), "%s/journal", dir);
	if (access(jpath, F_OK) < 0)
		return 0;
	_cleanup_free_ char *ws = NULL;
	int r = review_session_workspace(dir, &ws, err);
	if (r < 0)
		return r;
	_cleanup_close_ int wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wsfd < 0)
		return error_sys(err, errno, "cannot open the workspace %s", ws);
	bool committed;
	if ((r = rollback(wsfd, jpath, &committed, err)) < 0)
		return error_prefix(err, "an interrupted apply of %s could not be rolled back", dir);
	if (committed && review_session_hold(dir)) {
		/* What landed is in place; what is held stays. The layer may
		 * still hold copies of what landed: equal to the workspace's
		 * files, they read back as no change. */
		if (unlink(jpath) < 0)
			return error_sys(err, errno, "cannot remove %s", jpath);
		return 1;
	}
	if (committed) {
		/* The change is in place: the session is spent. */
		fprintf(out, "airlock: an interrupted apply had finished; removing the session\n");
		return review_session_remove(dir, err) < 0 ? -EIO : 1;
	}
	if (unlink(jpath) < 0)
		return error_sys(err, errno, "cannot remove %s", jpath);
	fprintf(out, "airlock: an interrupted apply was rolled back; %s is as it was\n", ws);
	return 1;
}

/* ---- checks ---- */

static bool glob_any(char *const *globs, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(globs[i], path) || handoff_glob_match(globs[i], path))
			return true;
	return false;
}

/* Excluded: the path or a directory above it matches an --exclude glob. */
static bool excluded(const struct review_apply_opts *o, const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (;;) {
		if (glob_any(o->exclude, o->n_exclude, buf))
			return true;
		char *slash = strrchr(buf, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

/* Does the workspace entry at rel (and, for a directory that goes, all
 * beneath it) still look as the manifest recorded it? */
static bool unchanged_at(int pfd, const char *leaf, const char *rel, const struct review_manifest *m, bool tree,
			 unsigned depth)
{
	struct stat st;
	const struct review_mentry *e = review_manifest_find(m, rel);
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return !e && errno == ENOENT;
	if (!e || !review_mentry_same(e, &st))
		return false;
	if (!tree || !S_ISDIR(st.st_mode) || depth > REVIEW_MAX_DEPTH)
		return true;
	int fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool same = true;
	size_t seen = 0;
	struct dirent *de;
	while (same && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char sub[PATH_MAX];
		snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
		seen++;
		same = unchanged_at(dirfd(d), de->d_name, sub, m, true, depth + 1);
	}
	closedir(d);
	if (!same)
		return false;
	/* Nothing removed from it either: as many entries directly below
	 * as the manifest has. */
	size_t want = 0, rl = strlen(rel);
	const struct review_mentry *lo = e + 1, *end = m->e + m->n;
	for (; lo < end && !strncmp(lo->path, rel, rl) && lo->path[rl] == '/'; lo++)
		want += strchr(lo->path + rl + 1, '/') == NULL;
	return want == seen;
}

/* ---- staging ---- */

struct applier {
	int wsfd;
	const char *upper;
	int ufd;
	struct journal j;
	unsigned seq;
	char tag[32];
	char backup[64];
	bool root;
	bool hold;    /* a session of hold mode: what is not accepted stays */
	char **held;  /* sorted: paths kept back with all beneath them */
	size_t nheld;
	struct error *err;
};

static int cmp_str(const void *a, const void *b);

/* Is path, or a directory above it, kept back? */
static bool is_held(const struct applier *a, const char *path)
{
	if (!a->nheld)
		return false;
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (;;) {
		char *key = buf;
		if (bsearch(&key, a->held, a->nheld, sizeof(char *), cmp_str))
			return true;
		char *slash = strrchr(buf, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

static int copy_data(int from, int to)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(from, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			off += w;
		}
	}
}

/* Create name in dfd as a copy of urel in upper (a file, link or FIFO;
 * a directory with all beneath it). owner: the ids it gets when we are
 * root. */
static int copy_entry(struct applier *a, int dfd, const char *name, const char *urel, uid_t uid, gid_t gid,
		      const struct review_apply_opts *o, unsigned depth)
{
	struct stat st;
	if (fstatat(a->ufd, urel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return error_sys(a->err, errno, "cannot read the change at %s", urel);
	mode_t perm = st.st_mode & 07777;
	struct timespec ts[2] = { st.st_atim, st.st_mtim };
	if (S_ISREG(st.st_mode)) {
		_cleanup_close_ int in = openat(a->ufd, urel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		int e;
		if (in < 0 || out < 0)
			return error_sys(a->err, errno, "cannot stage %s", urel);
		if ((e = copy_data(in, out)) < 0)
			return error_sys(a->err, -e, "cannot stage %s", urel);
		if ((a->root && fchown(out, uid, gid) < 0) || fchmod(out, perm) < 0 || futimens(out, ts) < 0)
			return error_sys(a->err, errno, "cannot stage %s", urel);
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(a->ufd, urel, target, sizeof(target) - 1);
		if (n < 0)
			return error_sys(a->err, errno, "cannot read the link %s", urel);
		target[n] = '\0';
		if (symlinkat(target, dfd, name) < 0 ||
		    (a->root && fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0))
			return error_sys(a->err, errno, "cannot stage %s", urel);
		return 0;
	}
	if (S_ISFIFO(st.st_mode)) {
		if (mkfifoat(dfd, name, 0600) < 0 || (a->root && fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0) ||
		    fchmodat(dfd, name, perm, 0) < 0)
			return error_sys(a->err, errno, "cannot stage %s", urel);
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return error_set(a->err, EINVAL, "%s is a %s, which apply does not make; leave it out with --exclude",
				 urel, S_ISSOCK(st.st_mode) ? "socket" : "device file");
	if (depth > REVIEW_MAX_DEPTH)
		return error_set(a->err, ELOOP, "%s: too deep", urel);
	if (mkdirat(dfd, name, 0700) < 0)
		return error_sys(a->err, errno, "cannot stage %s", urel);
	_cleanup_close_ int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int usub = openat(a->ufd, urel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0 || usub < 0)
		return error_sys(a->err, errno, "cannot stage %s", urel);
	int fd = dup(usub);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return error_sys(a->err, errno, "cannot list %s", urel);
	}
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char child[PATH_MAX];
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", urel, de->d_name) >= sizeof(child)) {
			r = error_set(a->err, ENAMETOOLONG, "path too long beneath %s", urel);
			break;
		}
		struct stat cs;
		if (fstatat(usub, de->d_name, &cs, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* Whiteouts in a new directory hide nothing; excluded entries
		 * stay out. */
		if ((S_ISCHR(cs.st_mode) && cs.st_rdev == 0) || excluded(o, child) || is_held(a, child))
			continue;
		if ((r = copy_entry(a, sub, de->d_name, child, uid, gid, o, depth + 1)) < 0)
			break;
	}
	closedir(d);
	if (r == 0 && ((a->root && fchown(sub, uid, gid) < 0) || fchmod(sub, perm) < 0 || futimens(sub, ts) < 0))
		r = error_sys(a->err, errno, "cannot stage %s", urel);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is path beneath one of the sorted roots (a directory that comes whole)?
 * Looks up each directory above it: bounded by its depth, not by how many
 * changes there are. */
static bool beneath_root(char **roots, size_t n, const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *slash = strrchr(buf, '/'); slash; slash = strrchr(buf, '/')) {
		*slash = '\0';
		char *key = buf;
		if (bsearch(&key, roots, n, sizeof(char *), cmp_str))
			return true;
	}
	return false;
}

/* An accept names a change (its path or a glob matching it), or a
 * directory the change, or its group's root, lies in: a group is
 * accepted whole by naming its root. */
static bool named(const struct review_apply_opts *o, const char *path)
{
	return glob_any(o->accept, o->n_accept, path);
}

static bool covered_by(const char *acc, const struct review_change *c, const struct review_groups *g)
{
	return !strcmp(acc, c->path) || handoff_glob_match(acc, c->path) || review_beneath(c->path, acc) ||
	       (c->group >= 0 && review_beneath(g->g[c->group].root, acc));
}

static bool covered(const struct review_apply_opts *o, const struct review_change *c, const struct review_groups *g)
{
	for (size_t i = 0; i < o->n_accept; i++)
		if (covered_by(o->accept[i], c, g))
			return true;
	return false;
}

/* A group held whole is accepted by naming its root or a directory
 * above it. */
static bool group_accepted(const struct review_apply_opts *o, const struct review_group *g)
{
	for (size_t i = 0; i < o->n_accept; i++)
		if (review_beneath(g->root, o->accept[i]))
			return true;
	return false;
}

/* What accepting a group does not take along: set-ID bits, devices,
 * FIFOs and sockets, credentials, and links leaving the workspace for
 * anything but the system's own files under /usr (a virtual
 * environment's interpreter). Each needs naming itself, as before
 * groups. */
static bool needs_naming(const struct review_change *c, int ufd)
{
	if (c->flags & (REVIEW_FLAG_SETID | REVIEW_FLAG_SPECIAL | REVIEW_FLAG_SECRET))
		return true;
	if (!(c->flags & REVIEW_FLAG_LINK))
		return false;
	char t[PATH_MAX];
	ssize_t n = readlinkat(ufd, c->path, t, sizeof(t) - 1);
	if (n <= 0)
		return true;
	t[n] = '\0';
	/* /usr/../home/x leaves /usr: no "..", no "//" tricks. */
	return strncmp(t, "/usr/", 5) != 0 || strstr(t, "/..") != NULL || strstr(t, "/./") != NULL;
}

struct op {
	const struct review_change *c;
	char staged[64]; /* the temporary name beside the target, or "" */
	bool goes;       /* the workspace's entry is moved to the backup */
};

/* Remove from the layer (dfd at rel) what landed, keeping what is held
 * or excluded and the directories above it; a kept directory loses its
 * opaque mark, since the workspace now holds what it replaced. *empty:
 * nothing kept. 0 or -errno. */
static int prune(struct applier *a, int dfd, const char *rel, const struct review_apply_opts *o, unsigned depth,
		 bool *empty)
{
	if (depth > REVIEW_MAX_DEPTH)
		return -ELOOP;
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >= sizeof(path)) {
			r = -ENAMETOOLONG;
			break;
		}
		if (excluded(o, path) || is_held(a, path)) {
			*empty = false;
			continue;
		}
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				r = -errno;
				break;
			}
			bool sub_empty = true;
			r = prune(a, sub, path, o, depth + 1, &sub_empty);
			if (r == 0 && !sub_empty) {
				(void)fremovexattr(sub, "user.overlay.opaque");
				(void)fremovexattr(sub, "trusted.overlay.opaque");
			}
			close(sub);
			if (r == 0 && sub_empty)
				r = review_remove_at(dfd, de->d_name);
			else if (!sub_empty)
				*empty = false;
			continue;
		}
		if (unlinkat(dfd, de->d_name, 0) < 0) {
			/* A directory the agent left read-only is ours to open. */
			if (errno != EACCES || fchmod(dfd, 0700) < 0 || unlinkat(dfd, de->d_name, 0) < 0)
				r = -errno;
		}
	}
	closedir(d);
	return r;
}

/* 1. What goes in, and may it. An accept that names nothing held is
 * a typing error that would otherwise pass as a review. */
static int check_accepts(const struct review_apply_opts *o, const struct review_changes *ch,
			 const struct review_groups *groups, struct error *err)
{
	for (size_t i = 0; i < o->n_accept; i++) {
		bool any = false;
		for (size_t k = 0; k < ch->n && !any; k++)
			any = ch->c[k].flags && !excluded(o, ch->c[k].path) && covered_by(o->accept[i], &ch->c[k], groups);
		if (!any)
			return error_set(err, ENOENT, "--accept %s: nothing held there%s; nothing was applied", o->accept[i],
					 groups->n ? " (airlock review lists what is)" : " (nothing is flagged)");
	}
	return 0;
}

/* In hold mode a group not accepted stays in the session, whole
 * when the agent made its root, else its flagged entries. Returns how
 * many changes are kept back. */
static size_t hold_back(struct applier *a, const struct review_apply_opts *o, const struct review_changes *ch,
			const struct review_groups *groups)
{
	size_t kept = 0;
	for (size_t i = 0; a->hold && i < ch->n; i++) {
		const struct review_change *c = &ch->c[i];
		if (c->group < 0 || excluded(o, c->path))
			continue;
		const struct review_group *g = &groups->g[c->group];
		/* A new executable alone lands, as it does in direct mode:
		 * builds make them; hold keeps back what host tools run by
		 * themselves. */
		if (!g->whole && review_held_flags(c->flags) == 0)
			continue;
		if (g->whole ? group_accepted(o, g) : covered(o, c, groups))
			continue;
		kept++;
		/* (a member outside the root, such as the command a bin link
		 * leads to, is held by its own path) */
		a->held[a->nheld++] = g->whole && review_beneath(c->path, g->root) ? g->root : c->path;
	}
	if (a->nheld)
		qsort(a->held, a->nheld, sizeof(char *), cmp_str);
	return kept;
}

/* The operations an apply will do, and what stops it first. */
struct plan {
	struct op *ops;
	char **roots;
	size_t nops, nroots, applied;
};

struct buf_list {
	char text[ERROR_MSG_MAX];
	size_t len, n;
};

/* Fill p->ops with what lands; refuse, before anything is touched, a
 * flagged change not accepted, one that must be named, or one the
 * workspace changed since the run started. */
static int plan_ops(struct applier *a, const struct review_apply_opts *o, const struct review_changes *ch,
		    const struct review_groups *groups, const struct review_manifest *man, struct plan *p,
		    struct error *err)
{
	/* A change beneath a directory that comes whole (new, or replacing
	 * another) travels with it. */
	struct buf_list refused = { .len = 0 }, conflicts = { .len = 0 }, unnamed = { .len = 0 };
	for (size_t i = 0; i < ch->n; i++) {
		const struct review_change *q = &ch->c[i];
		if (S_ISDIR(q->mode) && (q->kind == REVIEW_ADDED || q->replace_dir) && !excluded(o, q->path) &&
		    !is_held(a, q->path))
			p->roots[p->nroots++] = q->path;
	}
	if (p->nroots)
		qsort(p->roots, p->nroots, sizeof(char *), cmp_str);
	for (size_t i = 0; i < ch->n; i++) {
		const struct review_change *c = &ch->c[i];
		if (excluded(o, c->path) || is_held(a, c->path))
			continue;
		if (c->flags && !covered(o, c, groups) && !(a->hold && review_held_flags(c->flags) == 0)) {
			refused.n++;
			if (refused.len + strlen(c->path) + 4 < sizeof(refused.text))
				refused.len += (size_t)snprintf(refused.text + refused.len, sizeof(refused.text) - refused.len,
								"%s%s", refused.n > 1 ? ", " : "", c->path);
		} else if (c->flags && !named(o, c->path) && needs_naming(c, a->ufd)) {
			unnamed.n++;
			if (unnamed.len + strlen(c->path) + strlen(c->reason) + 8 < sizeof(unnamed.text))
				unnamed.len += (size_t)snprintf(unnamed.text + unnamed.len, sizeof(unnamed.text) - unnamed.len,
								"%s%s (%s)", unnamed.n > 1 ? "; " : "", c->path, c->reason);
		}
		p->applied++;
		if (beneath_root(p->roots, p->nroots, c->path))
			continue;
		char buf[PATH_MAX];
		const char *leaf;
		int pfd = open_parent(a->wsfd, c->path, buf, sizeof(buf), &leaf);
		bool ok = pfd >= 0 && unchanged_at(pfd, leaf, c->path, man, c->kind == REVIEW_DELETED || c->replace_dir, 0);
		if (pfd >= 0)
			close(pfd);
		if (!ok) {
			conflicts.n++;
			if (conflicts.len + strlen(c->path) + 4 < sizeof(conflicts.text))
				conflicts.len += (size_t)snprintf(conflicts.text + conflicts.len,
								  sizeof(conflicts.text) - conflicts.len, "%s%s",
								  conflicts.n > 1 ? ", " : "", c->path);
		}
		p->ops[p->nops].c = c;
		p->ops[p->nops].goes = c->kind != REVIEW_ADDED;
		p->nops++;
	}
	if (refused.n)
		return error_set(err, EPERM,
				 "%zu flagged change%s not accepted: %s; read them with airlock review, then name each "
				 "with --accept PATH or leave it out with --exclude GLOB; nothing was applied",
				 refused.n, refused.n == 1 ? "" : "s", refused.text);
	if (unnamed.n)
		return error_set(err, EPERM,
				 "%zu flagged change%s in an accepted group must be named each with --accept PATH (set-ID, "
				 "devices, credentials and links leaving the workspace are not taken along with a "
				 "directory): %s; nothing was applied",
				 unnamed.n, unnamed.n == 1 ? "" : "s", unnamed.text);
	if (conflicts.n)
		return error_set(err, EBUSY,
				 "%zu change%s conflict with the workspace, changed there since the run started: %s; "
				 "nothing was applied",
				 conflicts.n, conflicts.n == 1 ? "" : "s", conflicts.text);
	return 0;
}

/* 2. The journal (nothing to roll back if this fails). */
static int open_journal(struct applier *a, const char *dir, struct error *err)
{
	snprintf(a->j.path, sizeof(a->j.path), "%s/journal", dir);
	int jfd = open(a->j.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (jfd < 0 || !(a->j.f = fdopen(jfd, "w"))) {
		if (jfd >= 0)
			close(jfd);
		return error_sys(err, errno, "cannot start the journal %s", a->j.path);
	}
	return 0;
}

/* ... then the backup directory (a failure from here on rolls back). */
static int make_backup(struct applier *a, const char *ws, struct error *err)
{
	int r;
	snprintf(a->tag, sizeof(a->tag), "%d", (int)getpid());
	snprintf(a->backup, sizeof(a->backup), ".airlock-apply-%s", a->tag);
	if ((r = jwrite(&a->j, err, "backup", a->backup, NULL)) < 0)
		return r;
	if (mkdirat(a->wsfd, a->backup, 0700) < 0)
		return error_sys(err, errno, "cannot make %s/%s", ws, a->backup);
	return 0;
}

/* 3. Stage. */
static int stage_ops(struct applier *a, struct op *ops, size_t nops, const struct review_apply_opts *o,
		     struct error *err)
{
	int r;
	for (size_t i = 0; i < nops; i++) {
		struct op *p = &ops[i];
		if (p->c->kind == REVIEW_DELETED)
			continue;
		char buf[PATH_MAX], rel[PATH_MAX];
		const char *leaf;
		_cleanup_close_ int pfd = open_parent(a->wsfd, p->c->path, buf, sizeof(buf), &leaf);
		if (pfd < 0)
			return error_sys(err, -pfd, "cannot open the directory of %s", p->c->path);
		snprintf(p->staged, sizeof(p->staged), ".airlock-stage-%s-%u", a->tag, ++a->seq);
		snprintf(rel, sizeof(rel), "%.*s%s", (int)(leaf - buf), p->c->path, p->staged);
		if ((r = jwrite(&a->j, err, "stage", rel, NULL)) < 0)
			return r;
		/* Started as root: a new entry belongs to whoever owns its
		 * directory (as the idmapped workspace stored the agent's
		 * files), a replaced one keeps its owner. */
		struct stat ps, os;
		uid_t uid = 0;
		gid_t gid = 0;
		if (fstat(pfd, &ps) == 0)
			uid = ps.st_uid, gid = ps.st_gid;
		if (p->goes && fstatat(pfd, leaf, &os, AT_SYMLINK_NOFOLLOW) == 0)
			uid = os.st_uid, gid = os.st_gid;
		if ((r = copy_entry(a, pfd, p->staged, p->c->path, uid, gid, o, 0)) < 0)
			return r;
	}
	return 0;
}

/* 4. Swap. */
static int swap_ops(struct applier *a, struct op *ops, size_t nops, struct error *err)
{
	int r;
	for (size_t i = 0; i < nops; i++) {
		struct op *p = &ops[i];
		char buf[PATH_MAX], num[16];
		const char *leaf;
		_cleanup_close_ int pfd = open_parent(a->wsfd, p->c->path, buf, sizeof(buf), &leaf);
		if (pfd < 0)
			return error_sys(err, -pfd, "cannot open the directory of %s", p->c->path);
		if (p->goes) {
			snprintf(num, sizeof(num), "%zu", i);
			char to[128];
			snprintf(to, sizeof(to), "%s/%s", a->backup, num);
			if ((r = jwrite(&a->j, err, "moved", p->c->path, num)) < 0)
				return r;
			if (renameat2(pfd, leaf, a->wsfd, to, RENAME_NOREPLACE) < 0)
				return error_sys(err, errno, "cannot move %s aside", p->c->path);
		}
		if (p->staged[0]) {
			if ((r = jwrite(&a->j, err, "placed", p->c->path, NULL)) < 0)
				return r;
			if (renameat2(pfd, p->staged, pfd, leaf, RENAME_NOREPLACE) < 0)
				return error_sys(err, errno, "cannot put %s in place", p->c->path);
		}
	}
	return 0;
}

/* The session after what it held landed: in hold mode what is kept
 * back stays, else the session goes. */
static int finish_session(struct applier *a, const char *dir, const struct review_apply_opts *o, size_t kept,
			  struct error *err)
{
	int r;
	if (a->hold && (kept || o->n_exclude)) {
		/* What landed leaves the layer; what is held stays for the
		 * next apply, which reads it against the workspace as it is
		 * now. */
		bool empty = true;
		r = prune(a, a->ufd, "", o, 0, &empty);
		if (r == 0 && a->j.path[0] && unlink(a->j.path) < 0 && errno != ENOENT)
			r = -errno;
		if (r == 0 && empty)
			r = review_session_remove(dir, err);
		else if (r < 0)
			r = error_sys(err, -r, "the change landed, but the session %s could not drop it: a later apply "
					       "would find it a conflict",
				      dir);
	} else {
		r = review_session_remove(dir, err);
	}
	return r;
}

/* Roll back what was done; the error that stopped us is the one
 * the user reads. */
static void roll_back(struct applier *a, struct error *err)
{
	if (a->j.f) {
		fclose(a->j.f);
		a->j.f = NULL;
	}
	struct error rerr = { 0 };
	bool committed;
	if (rollback(a->wsfd, a->j.path, &committed, &rerr) < 0) {
		(void)error_prefix(err, "the rollback failed (%s), the journal %s is kept and the next airlock "
				   "apply, review or discard of this session tries again",
				   rerr.msg, a->j.path);
	} else {
		unlink(a->j.path);
		(void)error_prefix(err, "nothing was applied");
	}
}

int review_apply(const char *dir, const struct review_apply_opts *o, FILE *out, struct error *err)
{
	int r = review_recover(dir, out, err);
	if (r < 0)
		return r;
	if (r > 0 && access(dir, F_OK) < 0)
		return 0; /* the interrupted apply had finished */
	_cleanup_free_ char *ws = NULL;
	if ((r = review_session_workspace(dir, &ws, err)) < 0)
		return r;
	char upper[PATH_MAX];
	snprintf(upper, sizeof(upper), "%s/" REVIEW_UPPER, dir);
	struct review_changes ch = { 0 };
	struct review_manifest man = { 0 };
	struct review_groups groups = { 0 };
	struct plan plan = { 0 };
	size_t kept = 0;
	struct applier a = { .wsfd = -1, .ufd = -1, .upper = upper, .root = geteuid() == 0, .err = err,
			     .hold = review_session_hold(dir) };
	struct protect_set globs = { 0 };
	if ((r = review_session_protect(dir, &globs, err)) >= 0)
		r = review_changes_read(upper, ws, &globs, &ch, err);
	protect_set_free(&globs);
	if (r < 0)
		return r;
	if ((r = review_manifest_load(dir, &man, err)) < 0 || (r = review_groups_make(&ch, &groups, err)) < 0)
		goto out;
	if (o->seen)
		o->seen(&ch, &groups, o->seen_ctx);
	if (!(plan.ops = calloc(ch.n + 1, sizeof(*plan.ops))) || !(plan.roots = calloc(ch.n + 1, sizeof(char *))) ||
	    !(a.held = calloc(ch.n + 1, sizeof(char *)))) {
		r = error_set(err, ENOMEM, "out of memory");
		goto out;
	}
	a.wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a.ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (a.wsfd < 0 || a.ufd < 0) {
		r = error_sys(err, errno, "cannot open %s", a.wsfd < 0 ? ws : upper);
		goto out;
	}

	if ((r = check_accepts(o, &ch, &groups, err)) < 0)
		goto out;
	kept = hold_back(&a, o, &ch, &groups);
	if ((r = plan_ops(&a, o, &ch, &groups, &man, &plan, err)) < 0)
		goto out;

	if (a.hold && plan.nops == 0)
		goto done; /* all held: the workspace is not touched */

	if ((r = open_journal(&a, dir, err)) < 0)
		goto out;
	if ((r = make_backup(&a, ws, err)) < 0)
		goto fail;
	if ((r = stage_ops(&a, plan.ops, plan.nops, o, err)) < 0)
		goto fail;
	if ((r = swap_ops(&a, plan.ops, plan.nops, err)) < 0)
		goto fail;

	/* 5. Commit, then clean up. */
	if ((r = jwrite(&a.j, err, "commit", NULL, NULL)) < 0)
		goto fail;
	fclose(a.j.f);
	a.j.f = NULL;
	if (!o->quiet)
		fprintf(out, "airlock: applied %zu change%s to %s\n", plan.applied, plan.applied == 1 ? "" : "s", ws);
	if (review_remove_at(a.wsfd, a.backup) < 0)
		fprintf(out, "airlock: warning: could not remove %s/%s\n", ws, a.backup);
done:
	r = finish_session(&a, dir, o, kept, err);
	goto out;

fail:
	roll_back(&a, err);
out:
	if (a.j.f)
		fclose(a.j.f);
	if (a.wsfd >= 0)
		close(a.wsfd);
	if (a.ufd >= 0)
		close(a.ufd);
	free(plan.ops);
	free(plan.roots);
	free(a.held);
	review_groups_free(&groups);
	review_manifest_free(&man);
	review_changes_free(&ch);
	return r;
}
