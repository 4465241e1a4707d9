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
 * A git directory of any name is protected as .git is: a directory whose
 * listing shows git's repository shape (handoff_git_repository: a bare
 * repository kept as mirror/, a separate git directory, a worktree's
 * administrative directory) has its config, config.worktree, hooks,
 * commondir, info/attributes and objects/info/alternates matched as
 * PARENT/.git/NAME too, and so has the directory a .git file names in the
 * workspace, whatever its shape. Otherwise the agent rewrites mirror/config
 * in place (core.fsmonitor) and the host's next git in mirror runs it. The
 * shape comes from the names readdir gives, with no stat more.
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

#include "policy/protect.h"
#include "sandbox/internal.h"
#include "util/cleanup.h"
#include "util/fds.h"

struct walk {
	struct sandbox_plan *plan;
	const struct protect_set *set;
	struct protect_set git_set; /* the patterns of set a .git name could match differently (owned) */
	const char *ws;     /* host path of the workspace, resolved */
	size_t entries;
	size_t mounts;
	size_t planned;     /* the plan's mounts before the walk's own (the deny covers among them) */
	struct error *err;
	char **repos;       /* real paths of the git directories walked as such, owned */
	size_t n_repos;
	char **gitdirs;     /* real paths .git files name in the workspace, owned */
	size_t n_gitdirs;
};

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

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
	char real[PATH_MAX];
	if (fds_path(fd, real, sizeof(real)) < 0)
		return 0;
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

/* An entry's type when it could not be examined (fstatat failed but for
 * ENOENT): not a file type. */
#define TYPE_UNEXAMINED ((mode_t)S_IFMT)

/* The names a git directory holds that the table protects beneath .git
 * (config, hooks, commondir, info/attributes, objects/info/alternates):
 * an entry of one of these names waits until the whole listing has
 * shown whether its directory is a git directory, and is then matched
 * under the name it has if the directory were .git. */
static const char *const git_held[] = { "config", "config.worktree", "commondir", "hooks", "info", "objects" };
#define GIT_HELD (sizeof(git_held) / sizeof(git_held[0]))

static int git_held_index(const char *name)
{
	for (size_t i = 0; i < GIT_HELD; i++)
		if (strcmp(name, git_held[i]) == 0)
			return (int)i;
	return -1;
}

/* Could pat match a path beneath a git directory by its .git name
 * (PARENT/.git/REST) and not by its own (PARENT/NAME/REST)? Only if it
 * names .git, or has a wildcard that could stand for the component that
 * differs: any but a leading and a trailing "**" (which match either
 * name alike) and a '*' in its last component (which matches the entry's
 * own last name, the same in both). In doubt, it could. The walk matches
 * the .git names against these patterns only (a dozen of the table's
 * rows): matching every entry of a bare repository's objects against the
 * whole table twice cost a sixth of the start-up. */
static bool may_match_as_git(const char *pat)
{
	if (strstr(pat, ".git"))
		return true;
	const char *p = strncmp(pat, "**/", 3) == 0 ? pat + 3 : pat;
	size_t n = strlen(p);
	if (n >= 3 && strcmp(p + n - 3, "/**") == 0)
		n -= 3;
	const char *last = memrchr(p, '/', n);
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '*')
			continue;
		bool dstar = (i + 1 < n && p[i + 1] == '*') || (i > 0 && p[i - 1] == '*');
		if (dstar || (last && p + i < last))
			return true;
	}
	return false;
}

static int git_set_from(const struct protect_set *set, struct protect_set *out)
{
	*out = (struct protect_set){ 0 };
	for (size_t i = 0; i < set->n; i++)
		if (may_match_as_git(set->pat[i]) && protect_set_add(out, set->pat[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* rel by its own name against the set, al (when not NULL: the .git name
 * of a path in a git directory) against the patterns it could change. */
static bool match_either(const struct walk *w, const char *rel, const char *al, bool is_dir)
{
	return protect_match(w->set, rel, is_dir) || (al && protect_match(&w->git_set, al, is_dir));
}

static bool link_dangerous_either(const struct walk *w, const char *rel, const char *al)
{
	return protect_link_dangerous(w->set, rel) || (al && protect_link_dangerous(&w->git_set, al));
}

static bool beneath_either(const struct walk *w, const char *rel, const char *al)
{
	return protect_may_match_beneath(w->set, rel) || (al && protect_may_match_beneath(&w->git_set, al));
}

/* A pre-existing .git file (dfd, ".git"): git takes the directory its
 * "gitdir: PATH" names as the repository, with its config and hooks,
 * whatever that directory is called. Its real path is recorded when it
 * lies in the workspace (protect_plan walks its git_held names as a git
 * directory's if the walk did not find it to be one). What cannot be read or opened is no
 * repository git would use, or a directory the walk itself covers whole
 * (one it cannot look through). */
static int note_gitdir(struct walk *w, int dfd)
{
	_cleanup_close_ int f = openat(dfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char text[PATH_MAX + 16];
	ssize_t n = f >= 0 ? read(f, text, sizeof(text) - 1) : -1;
	if (n <= 0)
		return 0;
	text[n] = '\0';
	/* As git's read_gitfile_gently: "gitdir: " then the path, with the
	 * line ends at its end dropped; relative to the file's directory. */
	if (strncmp(text, "gitdir: ", 8) != 0)
		return 0;
	char *path = text + 8;
	size_t len = strlen(path);
	while (len && (path[len - 1] == '\n' || path[len - 1] == '\r'))
		path[--len] = '\0';
	if (!len)
		return 0;
	/* Followed as git follows it (real_path): links in it included. */
	_cleanup_close_ int t = openat(dfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t < 0)
		return 0;
	char real[PATH_MAX];
	if (fds_path(t, real, sizeof(real)) < 0)
		return 0;
	if (!under(real, w->ws))
		return 0;
	for (size_t i = 0; i < w->n_gitdirs; i++)
		if (strcmp(w->gitdirs[i], real) == 0)
			return 0;
	char **v = realloc(w->gitdirs, (w->n_gitdirs + 1) * sizeof(*v));
	if (!v)
		return error_set(w->err, ENOMEM, "out of memory");
	w->gitdirs = v;
	if (!(v[w->n_gitdirs] = strdup(real)))
		return error_set(w->err, ENOMEM, "out of memory");
	w->n_gitdirs++;
	return 0;
}

static int walk_dir(struct walk *w, int parent, char *rel, size_t rel_len, char *al, size_t al_len, unsigned depth,
		    bool git_dir);

/* The entry name of the directory d (listed at rel, and matched at al
 * too when al is not NULL: the name a git directory's entries have
 * beneath .git), of the given type: list it, or walk into it. rel and al
 * are PATH_MAX buffers; each is restored to its first rel_len, al_len
 * bytes. */
static int visit(struct walk *w, DIR *d, const char *name, mode_t type, char *rel, size_t rel_len, char *al,
		 size_t al_len, unsigned depth)
{
	size_t nl = strlen(name);
	size_t at = rel_len, al_at = al_len;
	if (al && al_len + 1 + nl + 1 > PATH_MAX)
		return WALK_INCOMPLETE;
	if (rel_len)
		rel[at++] = '/';
	memcpy(rel + at, name, nl + 1);
	if (al) {
		if (al_len)
			al[al_at++] = '/';
		memcpy(al + al_at, name, nl + 1);
	}
	char abs[PATH_MAX];
	snprintf(abs, sizeof(abs), "%s/%s", w->ws, rel);
	int r = 0;
	bool is_dir = type == S_IFDIR;
	if (type == TYPE_UNEXAMINED) {
		/* Not to be examined (a directory readable but not
		 * searchable): covered whatever it is. */
		if (may_matter(w->set, rel) || (al && may_matter(&w->git_set, al)))
			r = add(w, abs, false);
	} else if (match_either(w, rel, al, is_dir) || (type == S_IFLNK && link_dangerous_either(w, rel, al))) {
		/* A link a protected path passes through (.venv -> foo):
		 * its whole target becomes read-only. */
		r = type == S_IFLNK ? add_link_target(w, dirfd(d), name) : add(w, abs, is_dir);
		if (r == 0 && type == S_IFREG && strcmp(name, ".git") == 0)
			r = note_gitdir(w, dirfd(d));
	} else if (is_dir && beneath_either(w, rel, al) && !hidden(w, abs)) {
		if (depth >= PROTECT_MAX_DEPTH) {
			/* Too deep to look through: covered whole. */
			r = add(w, abs, true);
		} else {
			_cleanup_close_ int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				r = walk_dir(w, sub, rel, at + nl, al, al ? al_at + nl : 0, depth + 1, false);
				if (r == WALK_INCOMPLETE)
					r = add(w, abs, true);
			} else if (errno != ENOENT) {
				/* Not to be looked inside: EACCES (mode 000,
				 * 111, 222, another owner's), ELOOP or ENOTDIR
				 * (no longer a directory): covered whole.
				 * ENOENT: removed or moved since it was listed;
				 * no sandboxed process can move a tree holding
				 * a protected path (the guard refuses it, and an
				 * unreadable tree too). */
				r = add(w, abs, true);
			}
		}
	}
	rel[rel_len] = '\0';
	if (al)
		al[al_len] = '\0';
	return r;
}

/* Record the git directory at rel (its real path) for protect_plan. */
static int note_git_dir(struct walk *w, const char *rel)
{
	char **v = realloc(w->repos, (w->n_repos + 1) * sizeof(*v));
	if (!v)
		return error_set(w->err, ENOMEM, "out of memory");
	w->repos = v;
	if ((*rel ? asprintf(&v[w->n_repos], "%s/%s", w->ws, rel) : asprintf(&v[w->n_repos], "%s", w->ws)) < 0)
		return error_set(w->err, ENOMEM, "out of memory");
	w->n_repos++;
	return 0;
}

/* Walk the directory parent (its listing at rel, matched at al too when
 * al is not NULL). git_dir: take it as a git directory whatever its
 * listing holds (a .git file's target), and look only at the names
 * git_held lists: the walk of the workspace has seen the rest. (Walking
 * it all again would let .git files naming "." at each depth make the
 * walk's cost grow with the square of the tree.) */
static int walk_dir(struct walk *w, int parent, char *rel, size_t rel_len, char *al, size_t al_len, unsigned depth,
		    bool git_dir)
{
	_cleanup_close_ int fd = dup(parent);
	if (fd < 0)
		return error_sys(w->err, errno, "dup");
	DIR *d = fdopendir(fd);
	if (!d)
		return error_sys(w->err, errno, "cannot read %s/%s", w->ws, rel);
	fd = -1; /* owned by d */
	int r = 0;
	unsigned have = 0;          /* the HANDOFF_GIT_* names listed */
	mode_t held[GIT_HELD] = { 0 }; /* the git_held entries' types, 0 when absent */
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
		/* The entry's type from the directory when the filesystem
		 * gives it (a stat per entry was most of the walk's cost). */
		mode_t type = de->d_type == DT_DIR ? S_IFDIR : de->d_type == DT_LNK ? S_IFLNK :
			      de->d_type == DT_UNKNOWN ? 0 : S_IFREG;
		if (!type) {
			struct stat st;
			if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				type = st.st_mode & S_IFMT;
			else if (errno == ENOENT)
				continue; /* gone meanwhile */
			else
				type = TYPE_UNEXAMINED;
		}
		/* The git directory's shape, from the names the listing
		 * gives: no stat more. An entry that could not be examined
		 * counts as the file git would read. */
		have |= handoff_git_entry_bit(name, type == S_IFDIR);
		int k = git_held_index(name);
		if (k >= 0) {
			held[k] = type;
			continue;
		}
		if (git_dir)
			continue; /* walked as part of the workspace already */
		r = visit(w, d, name, type, rel, rel_len, al, al_len, depth);
		if (r != 0)
			break;
	}
	if (r == 0) {
		/* A git directory of any name (a bare repository kept as
		 * mirror/, a separate git directory, a worktree's
		 * administrative directory) has its config, hooks,
		 * commondir and the rest protected as .git's are: git run
		 * in it, or led to it by a .git file or a commondir, runs
		 * what they name. Its held entries are matched as
		 * PARENT/.git/NAME besides their own name. */
		bool repo = git_dir || handoff_git_repository(have);
		_cleanup_free_ char *gal = NULL;
		char *hal = al;
		size_t hal_len = al_len;
		if (repo) {
			const char *base = al ? al : rel;
			const char *slash = strrchr(base, '/');
			int plen = slash ? (int)(slash - base) : 0;
			if (!(gal = malloc(PATH_MAX)))
				r = error_set(w->err, ENOMEM, "out of memory");
			else if (snprintf(gal, PATH_MAX, "%.*s%s.git", plen, base, slash ? "/" : "") >= PATH_MAX)
				r = WALK_INCOMPLETE;
			else if (strcmp(gal, rel) == 0)
				hal = NULL; /* .git itself: its own name matches */
			else
				hal = gal;
			hal_len = hal ? strlen(hal) : 0;
			if (r == 0)
				r = note_git_dir(w, rel);
		}
		for (size_t k = 0; r == 0 && k < GIT_HELD; k++)
			if (held[k])
				r = visit(w, d, git_held[k], held[k], rel, rel_len, hal, hal_len, depth);
	}
	closedir(d);
	return r;
}

/* A .git file's target that the walk did not find to be a git directory
 * (its HEAD a directory, say, or not yet there): its git_held names
 * walked again as a git directory's, unless the sandbox hides it or a
 * protected directory holds it whole. */
static int walk_gitdir(struct walk *w, const char *abs, char *rel)
{
	for (size_t i = 0; i < w->n_repos; i++)
		if (strcmp(w->repos[i], abs) == 0)
			return 0;
	if (hidden(w, abs))
		return 0;
	for (size_t i = 0; i < w->plan->n_mounts; i++) {
		const struct mount_entry *m = &w->plan->mounts[i];
		if (m->kind == MOUNT_PROTECT && m->is_dir && under(abs, m->dst))
			return 0;
	}
	const char *r0 = abs + strlen(w->ws);
	r0 += *r0 == '/';
	unsigned depth = *r0 ? 1 : 0; /* as walk_dir's: the workspace is 0 */
	for (const char *c = r0; *c; c++)
		depth += *c == '/';
	snprintf(rel, PATH_MAX, "%s", r0);
	if (depth > PROTECT_MAX_DEPTH)
		return add(w, abs, true); /* deeper than the walk looks: covered whole */
	_cleanup_close_ int fd = open(abs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : add(w, abs, true);
	int r = walk_dir(w, fd, rel, strlen(rel), NULL, 0, depth, true);
	if (r == WALK_INCOMPLETE)
		r = *r0 ? add(w, abs, true)
			: error_set(w->err, EIO,
				    "filesystem.protect: cannot look through the workspace %s, the git directory a .git "
				    "file names; its protected paths could not be made read-only",
				    w->ws);
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
		else if (!rel || git_set_from(&p->protect, &w.git_set) < 0)
			r = error_set(err, ENOMEM, "out of memory");
		else if ((r = walk_dir(&w, fd, rel, 0, NULL, 0, 0, false)) == WALK_INCOMPLETE)
			r = error_set(err, EIO,
				      "filesystem.protect: cannot look through the workspace %s (a read error, or a name "
				      "too long to join); its protected paths could not be made read-only",
				      ws);
		/* The git directories .git files name, once the walk has
		 * seen which directories are git directories by their
		 * shape (a walk of one may find more .git files). */
		for (size_t i = 0; r == 0 && i < w.n_gitdirs; i++)
			r = walk_gitdir(&w, w.gitdirs[i], rel);
		protect_set_free(&w.git_set);
		strv_free(w.repos, w.n_repos);
		strv_free(w.gitdirs, w.n_gitdirs);
	}
	return r;
}
