/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scanning a directory for hand-off files, and comparing it with a
 * baseline (a file of digests, or a git commit).
 *
 * The directory is the agent's work: every name, link and byte in it may
 * be hostile. The walk goes through directory fds (openat, O_NOFOLLOW),
 * never follows a symlink, never leaves the directory, bounds depth and
 * entry count, and prints names with control bytes escaped.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "handoff/handoff.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/sha256.h"
#include "util/hex.h"
#include "util/spawn.h"

#define MAX_DEPTH 64
#define MAX_ENTRIES 2000000
#define INSPECT_MAX (4u << 20) /* bytes of a hand-off file looked inside */

/* ---- baselines ---- */

struct base_entry {
	char *path;
	char kind;        /* 'F' file, 'L' link, 'D' directory */
	char sha256[65];  /* "" when not recorded */
	unsigned mode;
	bool seen;
};

struct handoff_baseline {
	struct base_entry *e;
	size_t n, cap;
	bool sorted;
	bool exec_bit_only; /* from git, which keeps only 100644 or 100755 */
};

static int base_cmp(const void *a, const void *b)
{
	return strcmp(((const struct base_entry *)a)->path, ((const struct base_entry *)b)->path);
}

static int base_add(struct handoff_baseline *b, const char *path, char kind, const char *sha, unsigned mode)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct base_entry *e = realloc(b->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		b->e = e;
		b->cap = cap;
	}
	struct base_entry *x = &b->e[b->n];
	*x = (struct base_entry){ .kind = kind, .mode = mode };
	if (!(x->path = strdup(path)))
		return -ENOMEM;
	snprintf(x->sha256, sizeof(x->sha256), "%s", sha ? sha : "");
	b->n++;
	b->sorted = false;
	return 0;
}

static struct base_entry *base_find(const struct handoff_baseline *cb, const char *path)
{
	struct handoff_baseline *b = (struct handoff_baseline *)cb;
	if (!b->sorted) {
		qsort(b->e, b->n, sizeof(*b->e), base_cmp);
		b->sorted = true;
	}
	struct base_entry key = { .path = (char *)path };
	return bsearch(&key, b->e, b->n, sizeof(*b->e), base_cmp);
}

void handoff_baseline_free(struct handoff_baseline *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->e[i].path);
	free(b->e);
	free(b);
}

/* Paths are stored with every byte outside '!'..'~' (and '%') as %XX,
 * so one line holds one entry whatever the name. */
static int put_escaped(struct buf *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int r = c <= ' ' || c >= 0x7f || c == '%' ? buf_printf(o, "%%%02X", c) : buf_append(o, s, 1);
		if (r < 0)
			return r;
	}
	return 0;
}

static int unescape(char *s)
{
	char *w = s;
	for (char *p = s; *p; p++) {
		if (*p != '%') {
			*w++ = *p;
			continue;
		}
		/* Two hex digits exactly: strtol would also take "%+1" or "% 1". */
		int hi = hex_digit_value((unsigned char)p[1]);
		int lo = hi < 0 ? -1 : hex_digit_value((unsigned char)p[2]);
		if (lo < 0 || (hi | lo) == 0)
			return -EINVAL;
		*w++ = (char)(hi << 4 | lo);
		p += 2;
	}
	*w = '\0';
	return 0;
}

/* ---- the walk ---- */

struct walk {
	const struct handoff_scan_opts *opts;
	struct handoff_report *rep;
	struct handoff_baseline *collect; /* baseline_save: every entry goes here */
	struct error *err;
	size_t entries;
	/* The directory's symlinks that stay inside it, gathered by a first
	 * walk (links_only): a path is judged by every name it is reached
	 * by. */
	struct handoff_links links;
	bool links_only;
	const char *root; /* the directory's real path, or NULL */
	/* The directory being read is a repository git would take as one
	 * (not a .git directory, which the table names): its config,
	 * commondir and hooks are judged like .git's. */
	bool planted, planted_hooks;
};

/* For a repository planted in a subdirectory: a bare repository, or a
 * directory a .git file or commondir leads to. */
static const struct handoff_rule planted_rule = {
	"(a git repository in a subdirectory)", "git",
	"git run there, or led there by a .git file or commondir, takes its config and hooks", false, false,
};

static struct handoff_entry *report_add(struct handoff_report *rep, const char *path)
{
	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 64;
		struct handoff_entry *e = realloc(rep->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		rep->e = e;
		rep->cap = cap;
	}
	struct handoff_entry *x = &rep->e[rep->n];
	*x = (struct handoff_entry){ 0 };
	if (!(x->path = strdup(path)))
		return NULL;
	rep->n++;
	return x;
}

void handoff_report_free(struct handoff_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->e[i].path);
	free(rep->e);
	*rep = (struct handoff_report){ 0 };
}

/* Digest the regular file name in dfd; the first INSPECT_MAX bytes are
 * left in head for handoff_inspect. */
static int digest_file(int dfd, const char *name, char sha[65], struct buf *head)
{
	_cleanup_(cleanup_closep) int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0)
		return -errno;
	/* Swapped for a FIFO or device since the walk's stat: do not read. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	struct sha256 c;
	char chunk[65536];
	uint8_t d[32];
	sha256_init(&c);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		sha256_update(&c, chunk, (size_t)n);
		if (head && head->len < INSPECT_MAX) {
			size_t take = INSPECT_MAX - head->len < (size_t)n ? INSPECT_MAX - head->len : (size_t)n;
			if (buf_append(head, chunk, take) < 0)
				return -ENOMEM;
		}
	}
	sha256_final(&c, d);
	for (int i = 0; i < 32; i++)
		snprintf(sha + 2 * i, 3, "%02x", d[i]);
	return 0;
}

static void set_reason(struct handoff_entry *x, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void set_reason(struct handoff_entry *x, const char *fmt, ...)
{
	va_list ap;
	size_t used = strlen(x->reason);
	if (used && used + 2 < sizeof(x->reason)) {
		memcpy(x->reason + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(x->reason + used, sizeof(x->reason) - used, fmt, ap);
	va_end(ap);
}

static bool in_git_dir(const char *rel)
{
	return !strncmp(rel, ".git/", 5) || strstr(rel, "/.git/");
}

/* Git never runs a hook whose name ends in ".sample". */
static bool sample_hook(const char *rel)
{
	size_t n = strlen(rel);
	return (!strncmp(rel, ".git/hooks/", 11) || strstr(rel, "/.git/hooks/")) && n > 7 &&
	       !strcmp(rel + n - 7, ".sample");
}

static bool sample_hook_name(const char *name)
{
	size_t n = strlen(name);
	return n > 7 && !strcmp(name + n - 7, ".sample");
}

/* A git hook is live when its name is not a ".sample". */
static bool live_hook(const char *rel)
{
	const char *h = strstr(rel, ".git/hooks/");
	if (!h && strncmp(rel, ".git/hooks/", 11) != 0)
		return false;
	size_t n = strlen(rel);
	return !(n > 7 && !strcmp(rel + n - 7, ".sample"));
}

/* The first pass: only where each link leads. */
static int note_link(struct walk *w, int dfd, const char *name, const char *rel, bool is_link)
{
	char t[4096];
	ssize_t n = is_link ? readlinkat(dfd, name, t, sizeof(t) - 1) : -1;
	if (n < 0)
		return 0;
	t[n] = '\0';
	return handoff_links_add(&w->links, rel, t);
}

/* How rel differs from its baseline entry b (NULL: not in it). */
static enum handoff_change change_since(const struct handoff_baseline *bl, const struct base_entry *b,
					const char *sha, bool is_link, mode_t mode)
{
	if (!b)
		return HANDOFF_ADDED;
	if ((b->sha256[0] && strcmp(b->sha256, sha)) || (b->kind == 'L') != is_link ||
	    (bl->exec_bit_only ? !(b->mode & 0111) != !(mode & 0111) : (b->mode & 07777) != (mode & 07777)))
		return HANDOFF_MODIFIED;
	return HANDOFF_PRESENT;
}

/* What the hand-off file's own lines make a tool do. */
static void inspect_head(const struct walk *w, struct handoff_entry *x, const struct handoff_rule *rule,
			 const char *name, const char *rel, const char *via, const struct buf *head)
{
	struct handoff_finding f[HANDOFF_MAX_FINDINGS];
	/* A planted repository's config is git config wherever it
	 * lies: judged as .git/config is. */
	size_t nf = rule == &planted_rule && !strcmp(name, "config")
			    ? handoff_inspect_in(w->root, ".git/config", head->data, head->len, f, HANDOFF_MAX_FINDINGS)
			    : handoff_inspect_in(w->root, via[0] ? via : rel, head->data, head->len, f,
						 HANDOFF_MAX_FINDINGS);
	for (size_t i = 0; i < nf; i++) {
		set_reason(x, "line %u: %s", f[i].line, f[i].what);
		x->flagged = true;
	}
}

static int visit(struct walk *w, int dfd, const char *name, const char *rel, const struct stat *st)
{
	const struct handoff_scan_opts *o = w->opts;
	bool is_link = S_ISLNK(st->st_mode), is_reg = S_ISREG(st->st_mode);
	if (w->links_only)
		return note_link(w, dfd, name, rel, is_link);
	/* Every name rel is reached by: .vscode -> tools makes
	 * tools/tasks.json the editor's task file. */
	char via[4096];
	const struct handoff_rule *rule = handoff_match_aliases(&w->links, rel, is_link, via, sizeof(via));
	bool indirect = rule && (is_link ? !handoff_match(rel) : via[0] != '\0');
	if (!rule && !S_ISDIR(st->st_mode) && (w->planted_hooks || (w->planted && handoff_git_entry_bit(name, false) &
							     (HANDOFF_GIT_CONFIG | HANDOFF_GIT_CONFIG_WT | HANDOFF_GIT_COMMONDIR))))
		rule = &planted_rule;
	bool by_change = rule && !rule->opt_in && !rule->pointer; /* flagged when added, changed or removed */
	bool opt_in = rule && rule->opt_in;
	bool exec = is_reg && (st->st_mode & 0111);
	bool setid = is_reg && (st->st_mode & (S_ISUID | S_ISGID));
	char sha[65] = "", target[4096] = "";
	struct buf head = { 0 };
	int r = 0;

	if (is_link) {
		ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return 0; /* gone since the walk read it */
		target[n] = '\0';
		sha256_hex(target, (size_t)n, sha);
	}
	bool outside = is_link && handoff_path_escapes(rel, target);
	bool wanted = rule || exec || setid || outside || is_link;
	if (w->collect) {
		/* Saving a baseline: every file's digest (a later scan
		 * compares whichever becomes of interest). */
		if (is_reg && (r = digest_file(dfd, name, sha, NULL)) < 0)
			return 0;
		return base_add(w->collect, rel, is_link ? 'L' : S_ISDIR(st->st_mode) ? 'D' : 'F', sha,
				st->st_mode & 07777);
	}
	if (S_ISDIR(st->st_mode) || !(is_reg || is_link))
		return 0;
	/* Git keeps no history of .git itself: under --since, what is in
	 * there is judged as if there were no baseline. */
	const struct handoff_baseline *bl = o->baseline;
	if (bl && bl->exec_bit_only && in_git_dir(rel))
		bl = NULL;
	struct base_entry *b = bl ? base_find(bl, rel) : NULL;
	if (b)
		b->seen = true;
	if (!wanted || sample_hook(rel))
		return 0;
	if (is_reg && (r = digest_file(dfd, name, sha, rule ? &head : NULL)) < 0) {
		buf_free(&head);
		return 0;
	}

	enum handoff_change change = HANDOFF_PRESENT;
	if (bl) {
		change = change_since(bl, b, sha, is_link, st->st_mode);
		/* Unchanged since the baseline: nothing to report. */
		if (b && change == HANDOFF_PRESENT) {
			buf_free(&head);
			return 0;
		}
	}
	/* Without a baseline, plain executables are listed only on request. */
	if (!bl && !rule && !setid && !outside && !o->all_executables) {
		buf_free(&head);
		return 0;
	}

	struct handoff_entry *x = report_add(w->rep, rel);
	if (!x) {
		buf_free(&head);
		return -ENOMEM;
	}
	x->rule = rule;
	x->change = change;
	x->mode = st->st_mode;
	memcpy(x->sha256, sha, sizeof(sha));
	if (rule)
		set_reason(x, "%s", rule->why);
	if (by_change && change != HANDOFF_PRESENT)
		x->flagged = true;
	if (rule && rule->pointer && is_link) {
		x->flagged = true;
		set_reason(x, "a symlink where git expects a pointer file: git follows it");
	}
	/* A repository in a subdirectory (the user may keep a bare one):
	 * flagged, as .git's own files are, when changed, for what its
	 * config runs, or for an active hook. */
	if (rule == &planted_rule && w->planted_hooks && is_reg && (st->st_mode & 0111) && !sample_hook_name(name)) {
		x->flagged = true;
		set_reason(x, "an active hook");
	}
	/* A link standing for a hand-off directory (.vscode -> tools, or
	 * l2 in .zed -> l2 -> tools) is no layout tools make: flagged. A
	 * file reached through a link is judged as the hand-off file it
	 * stands for (flagged when changed or for what it runs): npm's .bin
	 * links make every shim's target one. */
	if (indirect && is_link && !opt_in) {
		x->flagged = true;
		if (via[0])
			set_reason(x, "a symlink reached as %s, standing for a hand-off directory", via);
		else
			set_reason(x, "a symlink standing for a hand-off directory: a host tool reads its target");
	} else if (indirect) {
		set_reason(x, "reached as %s through a symlink", via);
	}
	if (rule && is_reg && live_hook(rel) && (st->st_mode & 0111)) {
		x->flagged = true;
		set_reason(x, "an active hook");
	}
	if (rule && head.len)
		inspect_head(w, x, rule, name, rel, via, &head);
	if (setid) {
		x->flagged = true;
		set_reason(x, "set-user-ID or set-group-ID bit");
	}
	if (outside) {
		x->flagged = true;
		set_reason(x, "symlink to %s, outside the directory", target);
	} else if (is_link && rule) {
		set_reason(x, "symlink to %s", target);
	}
	if (exec && !rule && change != HANDOFF_PRESENT) {
		x->flagged = true;
		set_reason(x, b && !(b->mode & 0111) ? "became executable" : "a new executable");
	} else if (exec && !rule && !x->reason[0]) {
		set_reason(x, "executable");
	}
	if (is_link && !rule && !outside && change != HANDOFF_PRESENT)
		set_reason(x, "symlink to %s", target);
	if (!x->reason[0])
		set_reason(x, "changed");
	buf_free(&head);
	return 0;
}

/* Directories whose contents no host tool executes and which can be huge. */
static bool skip_dir(const char *rel)
{
	static const char *const tails[] = { ".git/objects", ".git/lfs" };
	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(rel), m = strlen(tails[i]);
		if (n >= m && !strcmp(rel + n - m, tails[i]) && (n == m || rel[n - m - 1] == '/'))
			return true;
	}
	return false;
}

/* Is the directory dfd at rel a repository git would take, with config,
 * hooks or a commondir of its own, other than what the table names (a
 * .git directory, a submodule's, a worktree's administrative one)? */
static bool planted_repo(int dfd, const char *rel)
{
	unsigned have = 0;
	struct stat st;
	for (unsigned i = 0; i < HANDOFF_GIT_NAMES; i++)
		if (fstatat(dfd, handoff_git_names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			have |= handoff_git_entry_bit(handoff_git_names[i], S_ISDIR(st.st_mode));
	/* A worktree's administrative directory never holds config or
	 * hooks: with them it stands as a repository once its commondir
	 * is rewritten. */
	if (handoff_git_admin_dir(rel))
		return (have & (HANDOFF_GIT_CONFIG | HANDOFF_GIT_HOOKS)) != 0;
	if (!handoff_git_shape(have, have, false))
		return false;
	return !handoff_glob_match("**/.git", rel) && !handoff_glob_match("**/.git/modules/**", rel);
}

static int walk_dir(struct walk *w, int dfd, const char *rel, int depth)
{
	if (depth > MAX_DEPTH)
		return error_set(w->err, ELOOP, "%s: deeper than %d directories", rel, MAX_DEPTH);
	int fd = dup(dfd);
	if (fd < 0)
		return error_sys(w->err, errno, "%s", rel);
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return error_sys(w->err, errno, "%s", rel);
	}
	struct dirent *de;
	int r = 0;
	bool was_planted = w->planted, was_hooks = w->planted_hooks;
	w->planted = !w->links_only && planted_repo(dfd, rel);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->entries > MAX_ENTRIES) {
			r = error_set(w->err, E2BIG, "more than %d entries", MAX_ENTRIES);
			break;
		}
		char child[4096];
		if ((size_t)snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
		    sizeof(child))
			continue;
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		w->rep->files_seen++;
		if ((r = visit(w, dfd, de->d_name, child, &st)) < 0) {
			error_set(w->err, -r, "%s: out of memory", child);
			break;
		}
		if (S_ISDIR(st.st_mode) && skip_dir(child) && !w->links_only) {
			/* Of a repository's objects only the alternates are
			 * of note: git reads objects from what they name. */
			_cleanup_(cleanup_closep) int info =
				openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			_cleanup_(cleanup_closep) int ifd =
				info < 0 ? -1 : openat(info, "info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char alt[4096 + 32];
			struct stat ast;
			snprintf(alt, sizeof(alt), "%s/info/alternates", child);
			if (ifd >= 0 && fstatat(ifd, "alternates", &ast, AT_SYMLINK_NOFOLLOW) == 0 &&
			    (r = visit(w, ifd, "alternates", alt, &ast)) < 0) {
				error_set(w->err, -r, "%s: out of memory", alt);
				break;
			}
		}
		if (S_ISDIR(st.st_mode) && !skip_dir(child)) {
			_cleanup_(cleanup_closep) int sub =
				openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue; /* unreadable or replaced: not ours to follow */
			bool planted = w->planted, hooks = w->planted_hooks;
			w->planted_hooks = hooks || (planted && !strcmp(de->d_name, "hooks"));
			r = walk_dir(w, sub, child, depth + 1);
			w->planted = planted;
			w->planted_hooks = hooks;
			if (r < 0)
				break;
		}
	}
	closedir(d);
	w->planted = was_planted;
	w->planted_hooks = was_hooks;
	return r;
}

int handoff_scan(const char *dir, const struct handoff_scan_opts *opts, struct handoff_report *rep,
		 struct error *err)
{
	_cleanup_(cleanup_closep) int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, errno, "%s", dir);
	char root[4096];
	struct walk w = { .opts = opts, .rep = rep, .err = err, .links_only = true };
	if (realpath(dir, root))
		w.root = root;
	if (opts->baseline)
		for (size_t i = 0; i < opts->baseline->n; i++)
			opts->baseline->e[i].seen = false;
	int r = walk_dir(&w, fd, "", 0);
	w.links_only = false;
	w.entries = 0;
	rep->files_seen = 0;
	/* The first walk read the top's directory stream to its end (a
	 * dup shares the offset). */
	if (r >= 0 && lseek(fd, 0, SEEK_SET) < 0)
		r = error_sys(err, errno, "%s", dir);
	if (r >= 0)
		r = walk_dir(&w, fd, "", 0);
	handoff_links_free(&w.links);
	if (r < 0)
		return r;
	if (!opts->baseline)
		return 0;
	/* What the baseline had and the directory no longer has: only hand-off
	 * files matter (a deleted CI workflow can switch a check off). */
	for (size_t i = 0; i < opts->baseline->n; i++) {
		const struct base_entry *b = &opts->baseline->e[i];
		const struct handoff_rule *rule = handoff_match(b->path);
		if (b->seen || b->kind == 'D' || !rule)
			continue;
		struct handoff_entry *x = report_add(rep, b->path);
		if (!x)
			return error_set(err, ENOMEM, "out of memory");
		x->rule = rule;
		x->change = HANDOFF_REMOVED;
		x->flagged = !rule->opt_in && !rule->pointer;
		x->mode = b->mode;
		set_reason(x, "%s", rule->why);
	}
	return 0;
}

/* ---- baseline files ---- */

#define BASELINE_MAGIC "airlock-handoff-baseline 1\n"

int handoff_baseline_save(const char *dir, const char *file, struct error *err)
{
	struct handoff_baseline b = { 0 };
	struct handoff_report rep = { 0 };
	struct handoff_scan_opts opts = { 0 };
	_cleanup_(cleanup_closep) int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_(cleanup_closep) int out = -1;
	struct buf o = { 0 };
	char tmp[4096];
	int r;

	if (fd < 0)
		return error_sys(err, errno, "%s", dir);
	struct walk w = { .opts = &opts, .rep = &rep, .collect = &b, .err = err };
	if ((r = walk_dir(&w, fd, "", 0)) < 0)
		goto out;
	r = buf_puts(&o, BASELINE_MAGIC);
	for (size_t i = 0; r >= 0 && i < b.n; i++) {
		r = buf_printf(&o, "%c %s %o ", b.e[i].kind, b.e[i].sha256[0] ? b.e[i].sha256 : "-", b.e[i].mode);
		r = r < 0 ? r : put_escaped(&o, b.e[i].path);
		r = r < 0 ? r : buf_puts(&o, "\n");
	}
	if (r < 0) {
		r = error_set(err, ENOMEM, "out of memory");
		goto out;
	}
	/* Written beside, then renamed: a reader never sees half a baseline. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", file, (int)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		r = error_sys(err, errno, "%s", tmp);
		goto out;
	}
	for (size_t off = 0; off < o.len;) {
		ssize_t n = write(out, o.data + off, o.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = error_sys(err, errno, "%s", tmp);
			unlink(tmp);
			goto out;
		}
		off += (size_t)n;
	}
	if (fsync(out) < 0 || rename(tmp, file) < 0) {
		r = error_sys(err, errno, "%s", file);
		unlink(tmp);
		goto out;
	}
	r = 0;
out:
	for (size_t i = 0; i < b.n; i++)
		free(b.e[i].path);
	free(b.e);
	handoff_report_free(&rep);
	buf_free(&o);
	return r;
}

int handoff_baseline_load(const char *file, struct handoff_baseline **out, struct error *err)
{
	_cleanup_(cleanup_fclosep) FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int r = 0;

	if (!f)
		return error_sys(err, errno, "%s", file);
	struct handoff_baseline *b = calloc(1, sizeof(*b));
	if (!b)
		return error_set(err, ENOMEM, "out of memory");
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (lineno == 1) {
			if (strcmp(line, "airlock-handoff-baseline 1")) {
				r = error_set(err, EINVAL, "%s:1: not an airlock hand-off baseline", file);
				break;
			}
			continue;
		}
		char kind, sha[65], path[4096];
		unsigned mode;
		if (sscanf(line, "%c %64s %o %4095s", &kind, sha, &mode, path) != 4 ||
		    (kind != 'F' && kind != 'L' && kind != 'D') || unescape(path) < 0 ||
		    (strcmp(sha, "-") && strlen(sha) != 64)) {
			r = error_set(err, EINVAL, "%s:%u: malformed entry", file, lineno);
			break;
		}
		if ((r = base_add(b, path, kind, strcmp(sha, "-") ? sha : "", mode)) < 0) {
			error_set(err, ENOMEM, "out of memory");
			break;
		}
	}
	free(line);
	if (!r && lineno == 0)
		r = error_set(err, EINVAL, "%s: empty file, not a baseline", file);
	if (r < 0) {
		handoff_baseline_free(b);
		return r;
	}
	*out = b;
	return 0;
}

/* ---- a baseline from git ---- */

/* Run git with everything that could make it execute the repository's
 * commands switched off: no system or global config, hooks pointed at
 * nothing, fsmonitor off, no replace objects. ls-tree and cat-file
 * --batch read objects only; they run no filter or textconv. stdin_fd is
 * git's standard input (-1: /dev/null); its output comes back in out. */
static int run_git(const char *dir, char *const args[], int stdin_fd, struct buf *out, struct error *err)
{
	char *argv[24];
	size_t n = 0;
	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = (char *)dir;
	argv[n++] = "--no-replace-objects";
	argv[n++] = "-c";
	argv[n++] = "core.fsmonitor=false";
	argv[n++] = "-c";
	argv[n++] = "core.hooksPath=/dev/null";
	argv[n++] = "-c";
	argv[n++] = "safe.directory=*";
	for (size_t i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	static const char *const set_env[] = { "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", NULL };
	static const char *const unset_env[] = { "GIT_DIR", "GIT_WORK_TREE", NULL };
	struct spawn s = { .argv = argv, .stdin_fd = stdin_fd, .set_env = set_env, .unset_env = unset_env };
	int fd;
	pid_t pid = spawn_reader(&s, &fd);
	if (pid < 0)
		return error_sys(err, (int)-pid, "cannot run git");
	char chunk[65536];
	int r = 0;
	for (;;) {
		ssize_t got = read(fd, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (r == 0 && buf_append(out, chunk, (size_t)got) < 0)
			r = error_set(err, ENOMEM, "out of memory");
	}
	close(fd);
	int status = spawn_wait(pid);
	if (r == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		r = error_set(err, EINVAL, "git %s in %s failed (exit %d)", args[0], dir,
			      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return r;
}

int handoff_baseline_git(const char *dir, const char *ref, struct handoff_baseline **out, struct error *err)
{
	struct buf tree = { 0 }, batch = { 0 }, req = { 0 };
	char spec[512];
	int r;

	if (ref[0] == '-')
		return error_set(err, EINVAL, "--since %s: a ref may not start with '-'", ref);
	snprintf(spec, sizeof(spec), "%s^{tree}", ref);
	char *ls[] = { "ls-tree", "-r", "-z", "--full-tree", spec, NULL };
	if ((r = run_git(dir, ls, -1, &tree, err)) < 0)
		goto fail;
	struct handoff_baseline *b = calloc(1, sizeof(*b));
	if (!b) {
		r = error_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	b->exec_bit_only = true;
	/* "MODE TYPE OID\tPATH\0" per entry. Digests are needed for hand-off
	 * files, executables and links: fetch those blobs. */
	size_t nwant = 0;
	for (size_t i = 0; i < tree.len;) {
		char *ent = tree.data + i;
		size_t n = strnlen(ent, tree.len - i);
		i += n + 1;
		char *tab = memchr(ent, '\t', n);
		unsigned mode;
		char type[16], oid[80];
		if (!tab || sscanf(ent, "%o %15s %79s", &mode, type, oid) != 3)
			continue;
		if (strcmp(type, "blob"))
			continue;
		const char *path = tab + 1;
		char kind = (mode & 0170000) == 0120000 ? 'L' : 'F';
		if ((r = base_add(b, path, kind, "", mode & 07777)) < 0)
			break;
		/* Git records 100755 or 100644: mode bits beyond that are not
		 * comparable; keep only the executable bit's meaning. */
		b->e[b->n - 1].mode = kind == 'L' ? 0777 : (mode & 0111) ? 0755 : 0644;
		if (kind == 'L' || handoff_match(path) || (mode & 0111)) {
			if ((r = buf_printf(&req, "%s\n", oid)) < 0)
				break;
			b->e[b->n - 1].sha256[0] = '?'; /* digest pending */
			nwant++;
		}
	}
	if (r < 0) {
		handoff_baseline_free(b);
		r = error_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	if (nwant) {
		/* The request goes in through a memfd: no pipe to deadlock on. */
		_cleanup_(cleanup_closep) int mfd = memfd_create("airlock-git-req", MFD_CLOEXEC);
		if (mfd < 0 || write(mfd, req.data, req.len) != (ssize_t)req.len || lseek(mfd, 0, SEEK_SET) < 0) {
			handoff_baseline_free(b);
			r = error_sys(err, errno, "memfd");
			goto fail;
		}
		char *cat[] = { "cat-file", "--batch", NULL };
		if ((r = run_git(dir, cat, mfd, &batch, err)) < 0) {
			handoff_baseline_free(b);
			goto fail;
		}
		/* Answers come in request order: "OID TYPE SIZE\nDATA\n". */
		size_t pos = 0;
		for (size_t i = 0; i < b->n; i++) {
			if (b->e[i].sha256[0] != '?')
				continue;
			char *nl = memchr(batch.data + pos, '\n', batch.len - pos);
			unsigned long long size;
			char oid[80], type[16];
			if (!nl || sscanf(batch.data + pos, "%79s %15s %llu", oid, type, &size) != 3 ||
			    size > batch.len - (size_t)(nl + 1 - batch.data)) {
				handoff_baseline_free(b);
				r = error_set(err, EINVAL, "git cat-file: unexpected answer");
				goto fail;
			}
			sha256_hex(nl + 1, (size_t)size, b->e[i].sha256);
			pos = (size_t)(nl + 1 - batch.data) + (size_t)size + 1;
		}
	}
	*out = b;
	r = 0;
fail:
	buf_free(&tree);
	buf_free(&batch);
	buf_free(&req);
	return r;
}

/* ---- printing ---- */

static const char *change_name(enum handoff_change c)
{
	switch (c) {
	case HANDOFF_PRESENT:
		return "present";
	case HANDOFF_ADDED:
		return "added";
	case HANDOFF_MODIFIED:
		return "modified";
	case HANDOFF_REMOVED:
		return "removed";
	}
	return "?";
}

static void print_safe(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static int entry_cmp(const void *a, const void *b)
{
	const struct handoff_entry *x = a, *y = b;
	if (x->flagged != y->flagged)
		return x->flagged ? -1 : 1;
	return strcmp(x->path, y->path);
}

void handoff_report_print(const struct handoff_report *rep, bool json, FILE *f)
{
	if (rep->n)
		qsort(rep->e, rep->n, sizeof(*rep->e), entry_cmp);
	for (size_t i = 0; i < rep->n; i++) {
		const struct handoff_entry *x = &rep->e[i];
		const char *cat = x->rule ? x->rule->category : x->mode & (S_ISUID | S_ISGID) ? "setid"
							     : S_ISLNK(x->mode)                ? "link"
											       : "exec";
		if (json) {
			struct buf b = { 0 };
			int r = buf_puts(&b, "{\"path\":");
			r = r ?: buf_json_string(&b, x->path, strlen(x->path));
			r = r ?: buf_printf(&b, ",\"category\":\"%s\",\"change\":\"%s\",\"flagged\":%s,\"reason\":",
					    cat, change_name(x->change), x->flagged ? "true" : "false");
			r = r ?: buf_json_string(&b, x->reason, strlen(x->reason));
			r = r ?: buf_printf(&b, ",\"sha256\":\"%s\",\"mode\":\"%04o\"}\n", x->sha256, x->mode & 07777);
			if (r == 0)
				fwrite(b.data, 1, b.len, f);
			buf_free(&b);
			continue;
		}
		fprintf(f, "%s %-8s %-9s ", x->flagged ? "!" : " ", change_name(x->change), cat);
		print_safe(f, x->path);
		fputs("  ", f);
		print_safe(f, x->reason);
		fputc('\n', f);
	}
}
