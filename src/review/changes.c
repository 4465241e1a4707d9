/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The change an agent made in review mode, read out of the overlay's
 * upper directory, and what of it needs a human's eyes.
 *
 * overlayfs keeps in upper every entry the agent created or changed (a
 * changed file is copied up whole), a whiteout (a character device 0:0)
 * for every entry it removed, and an "opaque" xattr on a directory that
 * replaced one of the workspace (its old contents are gone). Mounted in a
 * user namespace the xattrs are user.overlay.*; started by real root they
 * would be trusted.overlay.*, and both are read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "handoff/handoff.h"
#include "net/dlp.h"
#include "review/review.h"
#include "util/cleanup.h"

/* What is read of a file to judge it: hand-off files and credentials sit
 * at the front of anything an agent would write for a host tool. */
#define JUDGE_MAX (8u << 20)

static void add_reason(struct review_change *c, const char *a, const char *b)
{
	size_t used = strlen(c->reason);
	if (used + 3 >= sizeof(c->reason))
		return;
	snprintf(c->reason + used, sizeof(c->reason) - used, "%s%s%s", used ? "; " : "", a, b ? b : "");
}

/* For a repository planted in a subdirectory (a bare repository, or one
 * a .git file or commondir leads to). */
static const struct handoff_rule planted_rule = {
	"(a git repository in a subdirectory)", "git",
	"git run there, or led there by a .git file or commondir, takes its config and hooks", false, false,
};

/* Where a change lies, beyond its path: the workspace's links (a path
 * is judged by every name it is reached by), the workspace's real path,
 * and whether its directory is a repository git would take. */
struct judge_ctx {
	const struct handoff_links *links;
	const char *ws;
	bool planted, planted_hooks;
};

static void judge(struct review_change *c, const struct stat *st, const char *data, size_t len, const char *link,
		  const struct dlp *dlp, const struct protect_set *globs, const struct judge_ctx *jc)
{
	c->flags = 0;
	c->reason[0] = '\0';
	bool is_link = st && S_ISLNK(st->st_mode);
	char via[PATH_MAX];
	const struct handoff_rule *rule =
		handoff_match_aliases(jc ? jc->links : NULL, c->path, is_link, via, sizeof(via));
	bool indirect = rule && (is_link ? !handoff_match(c->path) : via[0] != '\0');
	const char *base = strrchr(c->path, '/') ? strrchr(c->path, '/') + 1 : c->path;
	bool a_dir = st && S_ISDIR(st->st_mode);
	if (!rule && jc && !a_dir &&
	    (jc->planted_hooks || (jc->planted && handoff_git_entry_bit(base, false) &
				   (HANDOFF_GIT_CONFIG | HANDOFF_GIT_CONFIG_WT | HANDOFF_GIT_COMMONDIR))))
		rule = &planted_rule;
	struct handoff_finding fi[HANDOFF_MAX_FINDINGS];
	size_t nf = 0;
	if (rule && st && S_ISREG(st->st_mode) && data) {
		/* A planted repository's config is git config wherever it
		 * lies; a file reached through a link is read as the tool
		 * reads it, by that name. */
		const char *as = rule == &planted_rule && !strcmp(base, "config") ? ".git/config" : via[0] ? via : c->path;
		nf = handoff_inspect_in(jc ? jc->ws : NULL, as, data, len, fi, HANDOFF_MAX_FINDINGS);
	}
	/* The table's build entry points change in ordinary work: flagged
	 * for what they contain, as `airlock handoff scan` does. A directory
	 * of the table (.vscode, .git/hooks) holds nothing a tool runs until
	 * a file is put in it, and that file is flagged. */
	bool is_dir = st && S_ISDIR(st->st_mode) && c->kind != REVIEW_DELETED;
	if (rule && !is_dir && ((!rule->opt_in && !rule->pointer) || nf || (rule->pointer && is_link))) {
		c->flags |= REVIEW_FLAG_HANDOFF;
		char why[512];
		snprintf(why, sizeof(why), "hand-off %s file %s: %s", rule->category, rule->pattern, rule->why);
		add_reason(c, why, NULL);
		if (indirect && is_link && !via[0])
			add_reason(c, "a symlink standing for a hand-off directory: a host tool reads its target", NULL);
		else if (indirect)
			add_reason(c, "reached through a symlink as ", via);
		for (size_t i = 0; i < nf; i++)
			add_reason(c, fi[i].what, NULL);
	}
	/* The policy's own protected paths (filesystem.protect, and the
	 * build rows with protect_build): what direct mode would have kept
	 * read-only, review mode holds and flags. */
	const char *glob = globs && !is_dir ? protect_match(globs, c->path, false) : NULL;
	/* A pointer row (a .git file) is judged above by where it leads. */
	if (glob && rule && rule->pointer && !strcmp(glob, rule->pattern))
		glob = NULL;
	if (glob && !(c->flags & REVIEW_FLAG_HANDOFF)) {
		c->flags |= REVIEW_FLAG_PROTECT;
		add_reason(c, "protected by the policy: ", glob);
	}
	if (c->kind == REVIEW_DELETED || !st)
		return;
	if (S_ISREG(st->st_mode) && (st->st_mode & 0111) && !(S_ISREG(c->old_mode) && (c->old_mode & 0111))) {
		c->flags |= REVIEW_FLAG_EXEC;
		add_reason(c, c->old_mode ? "became executable" : "new executable", NULL);
	}
	if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID))) {
		c->flags |= REVIEW_FLAG_SETID;
		add_reason(c, (st->st_mode & S_ISUID) ? "set-user-ID" : "set-group-ID", NULL);
	}
	if (S_ISLNK(st->st_mode) && link && handoff_path_escapes(c->path, link)) {
		c->flags |= REVIEW_FLAG_LINK;
		add_reason(c, "symlink leaving the workspace -> ", link);
	}
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) || S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode)) {
		c->flags |= REVIEW_FLAG_SPECIAL;
		add_reason(c, S_ISFIFO(st->st_mode) ? "FIFO" : S_ISSOCK(st->st_mode) ? "socket" : "device file", NULL);
	}
	if (S_ISREG(st->st_mode) && data && len) {
		/* The proxy's own credential formats (net/dlp.c): what it would
		 * stop on the wire should not reach the repository either. */
		char what[128];
		if (dlp && dlp_scan(dlp, (const uint8_t *)data, len, what, sizeof(what))) {
			c->flags |= REVIEW_FLAG_SECRET;
			char why[192];
			snprintf(why, sizeof(why), "contents match a credential format (%s)", what);
			add_reason(c, why, NULL);
		}
	}
}

void review_judge(struct review_change *c, const struct stat *st, const char *data, size_t len, const char *link,
		  const struct protect_set *globs)
{
	struct dlp *d = dlp_new();
	judge(c, st, data, len, link, d, globs, NULL);
	dlp_free(d);
}

/* ---- reading upper ---- */

struct reader {
	struct review_changes *out;
	struct dlp *dlp;
	const struct protect_set *globs;
	size_t entries;
	struct error *err;
	struct judge_ctx jc;
	struct handoff_links links;
};

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 0 && minor(st->st_rdev) == 0;
}

static bool is_opaque(int dfd, const char *name)
{
	char v[4];
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = fgetxattr(fd, "user.overlay.opaque", v, sizeof(v));
	if (n < 0)
		n = fgetxattr(fd, "trusted.overlay.opaque", v, sizeof(v));
	close(fd);
	return n >= 1 && v[0] == 'y';
}

/* Read up to max bytes of name (a regular file) in dfd. */
static char *read_head(int dfd, const char *name, size_t max, size_t *len)
{
	*len = 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	size_t want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
	char *buf = malloc(want + 1);
	size_t got = 0;
	while (buf && got < want) {
		ssize_t n = read(fd, buf + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (buf)
		buf[got] = '\0';
	*len = got;
	return buf;
}

static bool same_file(int a_dfd, int b_dfd, const char *name, const struct stat *a, const struct stat *b)
{
	if (a->st_mode != b->st_mode || a->st_size != b->st_size)
		return false;
	if (S_ISLNK(a->st_mode)) {
		char x[PATH_MAX], y[PATH_MAX];
		ssize_t n = readlinkat(a_dfd, name, x, sizeof(x));
		ssize_t m = readlinkat(b_dfd, name, y, sizeof(y));
		return n >= 0 && n == m && memcmp(x, y, (size_t)n) == 0;
	}
	if (!S_ISREG(a->st_mode))
		return false;
	int fa = openat(a_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	int fb = openat(b_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	bool same = fa >= 0 && fb >= 0;
	char x[16384], y[16384];
	while (same) {
		ssize_t n = read(fa, x, sizeof(x));
		ssize_t m = n > 0 ? read(fb, y, (size_t)n) : 0;
		if (n <= 0) {
			same = n == 0;
			break;
		}
		same = n == m && memcmp(x, y, (size_t)n) == 0;
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

static int add_change(struct reader *rd, const char *path, enum review_kind kind, bool replace, mode_t mode,
		      mode_t old_mode, int udfd, const char *name)
{
	struct review_changes *o = rd->out;
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		struct review_change *v = realloc(o->c, cap * sizeof(*v));
		if (!v)
			return error_set(rd->err, ENOMEM, "out of memory");
		o->c = v;
		o->cap = cap;
	}
	struct review_change *c = &o->c[o->n];
	memset(c, 0, sizeof(*c));
	if (!(c->path = strdup(path)))
		return error_set(rd->err, ENOMEM, "out of memory");
	o->n++;
	c->kind = kind;
	c->replace_dir = replace;
	c->mode = mode;
	c->old_mode = old_mode;
	struct stat st;
	bool have = kind != REVIEW_DELETED && fstatat(udfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	size_t len = 0;
	_cleanup_free_ char *data = have && S_ISREG(st.st_mode) ? read_head(udfd, name, JUDGE_MAX, &len) : NULL;
	char link[PATH_MAX] = "";
	if (have && S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(udfd, name, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
	}
	judge(c, have ? &st : NULL, data, len, link, rd->dlp, rd->globs, &rd->jc);
	return 0;
}

/* Is the directory at rel, as the agent left it (upper over the
 * workspace's), a repository git would take, with config, hooks or a
 * commondir of its own, other than what the table names (.git, a
 * submodule's, a worktree's administrative directory)? */
static bool planted_repo(int udfd, int ldfd, const char *rel)
{
	unsigned have = 0;
	struct stat st;
	for (unsigned i = 0; i < HANDOFF_GIT_NAMES; i++) {
		const char *n = handoff_git_names[i];
		if (fstatat(udfd, n, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!is_whiteout(&st))
				have |= handoff_git_entry_bit(n, S_ISDIR(st.st_mode));
		} else if (ldfd >= 0 && fstatat(ldfd, n, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			have |= handoff_git_entry_bit(n, S_ISDIR(st.st_mode));
		}
	}
	/* A worktree's administrative directory never holds config or
	 * hooks: with them it stands as a repository once its commondir
	 * is rewritten. */
	if (handoff_git_admin_dir(rel))
		return (have & (HANDOFF_GIT_CONFIG | HANDOFF_GIT_HOOKS)) != 0;
	if (!handoff_git_shape(have, have, false))
		return false;
	return !handoff_glob_match("**/.git", rel) && !handoff_glob_match("**/.git/modules/**", rel);
}

/* The symlinks beneath dfd (at rel) into l, without following any;
 * bounded like the change itself. A repository's objects hold none. */
static int collect_links(struct handoff_links *l, int dfd, const char *rel, unsigned depth, size_t *seen)
{
	if (depth > REVIEW_MAX_DEPTH)
		return 0;
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++*seen > REVIEW_MAX_ENTRIES) {
			r = -EFBIG; /* a link not seen is a name not judged: fail closed */
			break;
		}
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >= sizeof(path))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t n = readlinkat(dirfd(d), de->d_name, t, sizeof(t) - 1);
			if (n >= 0) {
				t[n] = '\0';
				r = handoff_links_add(l, path, t);
			}
		} else if (S_ISDIR(st.st_mode) && !handoff_glob_match("**/.git/objects", path)) {
			int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				r = collect_links(l, sub, path, depth + 1, seen);
				close(sub);
			}
		}
	}
	closedir(d);
	return r;
}

/* udfd: a directory of upper; ldfd: the same directory in the workspace,
 * or -1 when the workspace has none there (all beneath is new). */
static int read_dir(struct reader *rd, int udfd, int ldfd, const char *rel, unsigned depth)
{
	if (depth > REVIEW_MAX_DEPTH)
		return error_set(rd->err, ELOOP, "the change is more than %d directories deep at %s",
				 REVIEW_MAX_DEPTH, rel);
	int fd = dup(udfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return error_sys(rd->err, errno, "cannot list the change at %s", rel[0] ? rel : ".");
	}
	int r = 0;
	struct dirent *de;
	bool was_planted = rd->jc.planted, was_hooks = rd->jc.planted_hooks;
	rd->jc.planted = planted_repo(udfd, ldfd, rel);
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (++rd->entries > REVIEW_MAX_ENTRIES) {
			r = error_set(rd->err, EFBIG, "the change holds more than %d entries", REVIEW_MAX_ENTRIES);
			break;
		}
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, rel[0] ? "/" : "", name) >= sizeof(path)) {
			r = error_set(rd->err, ENAMETOOLONG, "path too long beneath %s", rel);
			break;
		}
		struct stat us, ls;
		if (fstatat(udfd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		bool in_ws = ldfd >= 0 && fstatat(ldfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0;
		mode_t old = in_ws ? ls.st_mode : 0;
		if (is_whiteout(&us)) {
			if (in_ws && (r = add_change(rd, path, REVIEW_DELETED, false, 0, old, udfd, name)) < 0)
				break;
			continue;
		}
		if (S_ISDIR(us.st_mode)) {
			bool opaque = is_opaque(udfd, name);
			bool merged = in_ws && S_ISDIR(ls.st_mode) && !opaque;
			if (!merged && (r = add_change(rd, path, in_ws ? REVIEW_MODIFIED : REVIEW_ADDED, in_ws, us.st_mode,
						       old, udfd, name)) < 0)
				break;
			int usub = openat(udfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (usub < 0) {
				r = error_sys(rd->err, errno, "cannot open the change at %s", path);
				break;
			}
			int lsub = merged ? openat(ldfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
			bool planted = rd->jc.planted, hooks = rd->jc.planted_hooks;
			rd->jc.planted_hooks = hooks || (planted && !strcmp(name, "hooks"));
			r = read_dir(rd, usub, lsub, path, depth + 1);
			rd->jc.planted = planted;
			rd->jc.planted_hooks = hooks;
			close(usub);
			if (lsub >= 0)
				close(lsub);
			if (r < 0)
				break;
			continue;
		}
		if (in_ws && !S_ISDIR(ls.st_mode) && same_file(udfd, ldfd, name, &us, &ls))
			continue; /* copied up, not changed (opened for writing, touched) */
		if ((r = add_change(rd, path, in_ws ? REVIEW_MODIFIED : REVIEW_ADDED, in_ws && S_ISDIR(ls.st_mode),
				    us.st_mode, old, udfd, name)) < 0)
			break;
	}
	closedir(d);
	rd->jc.planted = was_planted;
	rd->jc.planted_hooks = was_hooks;
	return r;
}

static int cmp_change(const void *a, const void *b)
{
	const struct review_change *x = a, *y = b;
	if (!x->flags != !y->flags)
		return x->flags ? -1 : 1;
	return strcmp(x->path, y->path);
}

int review_changes_read(const char *upper, const char *ws, const struct protect_set *globs, struct review_changes *out,
			struct error *err)
{
	memset(out, 0, sizeof(*out));
	_cleanup_close_ int u = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (u < 0)
		return error_sys(err, errno, "cannot open %s", upper);
	_cleanup_close_ int l = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l < 0)
		return error_sys(err, errno, "cannot open the workspace %s", ws);
	struct reader rd = { .out = out, .err = err, .dlp = dlp_new(), .globs = globs };
	if (!rd.dlp)
		return error_set(err, ENOMEM, "out of memory");
	/* The links of the workspace as the agent left it (its own and the
	 * ones it made), so that a change is judged by every name a host
	 * tool can reach it by: .vscode -> tools makes tools/tasks.json the
	 * editor's task file. */
	size_t seen = 0;
	int r = collect_links(&rd.links, l, "", 0, &seen);
	seen = 0;
	if (r == 0)
		r = collect_links(&rd.links, u, "", 0, &seen);
	/* The walks above read both top directory streams to their end (a
	 * dup shares the offset). */
	if (r == 0 && (lseek(l, 0, SEEK_SET) < 0 || lseek(u, 0, SEEK_SET) < 0))
		r = -errno;
	rd.jc.links = &rd.links;
	char wsreal[PATH_MAX];
	rd.jc.ws = realpath(ws, wsreal) ? wsreal : ws;
	if (r == -EFBIG)
		r = error_set(err, EFBIG, "more than %d entries in %s or the change: their links cannot all be judged",
			      REVIEW_MAX_ENTRIES, ws);
	else if (r < 0)
		r = error_sys(err, -r, "cannot read the links of %s", ws);
	else
		r = read_dir(&rd, u, l, "", 0);
	handoff_links_free(&rd.links);
	dlp_free(rd.dlp);
	if (r < 0) {
		review_changes_free(out);
		return r;
	}
	if (out->n) /* qsort takes no NULL array, even of nothing */
		qsort(out->c, out->n, sizeof(*out->c), cmp_change);
	return 0;
}

void review_changes_free(struct review_changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->c[i].path);
	free(c->c);
	memset(c, 0, sizeof(*c));
}

size_t review_changes_flagged(const struct review_changes *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		n += c->c[i].flags != 0;
	return n;
}
