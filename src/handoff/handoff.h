/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_HANDOFF_HANDOFF_H
#define AIRLOCK_HANDOFF_HANDOFF_H

/*
 * Trust hand-offs: files in a workspace that a tool on the host will later
 * execute or trust (a git hook, a git config entry, an editor task, a
 * virtualenv interpreter, a CI workflow, an agent's settings). An agent
 * that cannot escape its sandbox can still write one of these and wait for
 * the user's own tools to run it outside. This module names them (one
 * table, shared by the scanner and by the policy's protected paths) and
 * scans a directory for them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

/* ---- the rule table ---- */

struct handoff_rule {
	const char *pattern;  /* glob relative to the workspace: '*' within a
	                       * name, '**' across directories (a leading
	                       * "**" + "/" matches at any depth, the root too) */
	const char *category; /* git, editor, shell, python, node, ci,
	                       * container, agent, build, vcs */
	const char *why;      /* who runs it, in one line */
	bool opt_in;          /* build entry points: protected only when the
	                       * policy asks; the scanner still lists them */
	bool pointer;         /* names another directory git uses (a .git
	                       * file, a worktree's commondir): review and
	                       * scan judge it by where it leads (a link of
	                       * that name is always flagged); not protected
	                       * by name, but for .git (git writes them for
	                       * every worktree): the directories it could
	                       * lead to are (handoff_git_shape) */
};

/* The documented default set, ended by a NULL pattern. */
extern const struct handoff_rule handoff_rules[];

/* Glob match of a relative path ("a/b/c", no leading '/') against a rule
 * pattern. Pure; bounded by the lengths of both. */
/* handoff_glob_match's tokens are match_file_tokens' (match/glob.h): a
 * byte, or a wildcard:
 *   '*'       any run of bytes but '/'
 *   '**'      any run of bytes
 *   '**' '/'  at a name boundary: nothing, or any run ending in '/'
 * A pattern longer than HANDOFF_GLOB_MAX matches nothing. */
#define HANDOFF_GLOB_MAX 256
/* A glob prepared for many matches: its tokens, and the literal runs
 * every matching path holds (the run it starts with, the run it ends
 * with, the longest one), as bytes. */
struct handoff_glob {
	uint16_t tok[HANDOFF_GLOB_MAX];   /* match_file_tokens */
	size_t nt;
	bool too_long;                    /* matches nothing */
	char bytes[HANDOFF_GLOB_MAX];     /* tok as bytes, a wildcard as 0 */
	size_t head_len, tail_len;        /* literal tokens at the start, at the end */
	size_t lit_at, lit_len;           /* the longest run of literal tokens */
};
void handoff_glob_prepare(const char *pattern, struct handoff_glob *g);
bool handoff_glob_match_prepared(const struct handoff_glob *g, const char *path, size_t path_len);

bool handoff_glob_match(const char *pattern, const char *path);

/* Could some path that starts with prefix match pattern? (The matcher
 * still has a live state after reading prefix.) Pure. */
bool handoff_glob_prefix(const char *pattern, const char *prefix);

/* The first rule matching path, or NULL. */
const struct handoff_rule *handoff_match(const char *path);

/* Does target, a symlink's text (or a gitdir pointer) found at rel,
 * leave the scanned directory? Lexically: absolute, or more ".." than
 * the depth it climbs from. Pure. */
bool handoff_path_escapes(const char *rel, const char *target);

/* ---- git's repository shape ----
 *
 * Git takes a directory D as a repository (setup.c, is_git_directory)
 * when D/HEAD is a valid ref and the common directory (D/commondir's
 * target, else D) holds objects/ and refs/; it then reads config and
 * hooks from the common directory, and config.worktree from D. A .git
 * file, a commondir or a bare repository found while git walks up from
 * the user's directory can lead git to any such directory. Rather than
 * refuse every pointer (git writes them for each worktree), the
 * directories they could lead to are judged: one that holds a control
 * name (config, config.worktree, hooks, commondir) together with HEAD,
 * or with both objects and refs, is a repository with its own commands.
 * A worktree's administrative directory (.git/worktrees/ID) holds HEAD,
 * commondir and refs by design, and never config, hooks or objects. */
enum {
	HANDOFF_GIT_HEAD = 1 << 0,
	HANDOFF_GIT_OBJECTS = 1 << 1,
	HANDOFF_GIT_REFS = 1 << 2,
	HANDOFF_GIT_CONFIG = 1 << 3,
	HANDOFF_GIT_CONFIG_WT = 1 << 4,
	HANDOFF_GIT_HOOKS = 1 << 5,
	HANDOFF_GIT_COMMONDIR = 1 << 6,
};
#define HANDOFF_GIT_NAMES 7
/* The names above, in bit order. */
extern const char *const handoff_git_names[HANDOFF_GIT_NAMES];

/* The bit of a directory entry's name, or 0. Pure. */
unsigned handoff_git_name_bit(const char *name);

/* The bit of an entry as git would take it: HEAD, config,
 * config.worktree and commondir are read as files, so a directory of
 * that name is none of them (app/config/ is a source directory); objects,
 * refs and hooks count whatever their type (a symlink too). Pure. */
unsigned handoff_git_entry_bit(const char *name, bool is_dir);

/* May a directory holding the names in have (HANDOFF_GIT_* bits) gain
 * the name bit add? admin: the directory is a worktree's
 * administrative directory (handoff_git_admin_dir). Returns NULL when it
 * may, else why not. Pure. */
const char *handoff_git_shape(unsigned have, unsigned add, bool admin);

/* Does a directory holding the names in have (HANDOFF_GIT_* bits) stand
 * as a git directory that exists: HEAD with a commondir (a worktree's
 * administrative directory, or a repository whose common directory is
 * elsewhere), or objects with refs (a repository, or the common
 * directory another one's commondir names: git reads config and hooks
 * there, and that one needs no HEAD of its own)? HEAD with objects and
 * refs, git's own test, is among them; HEAD beside a config file without
 * objects and refs is not. Pure. */
bool handoff_git_repository(unsigned have);

/* Is rel (relative to the workspace) a worktree's administrative
 * directory, ".git/worktrees/ID" at any depth? Pure. */
bool handoff_git_admin_dir(const char *rel);

/* ---- names through links ----
 *
 * A path can be reached by other names than its own: a symlink ".vscode
 * -> tools" makes tools/tasks.json the .vscode/tasks.json an editor
 * runs. handoff_aliases holds the directory's symlinks that stay inside
 * it (link path, target resolved lexically from the link's directory),
 * and gives every name a path is reached by, through chains of links and
 * links in the middle of paths, to a bounded number. */
struct handoff_links {
	struct {
		char *path;   /* the link, relative */
		char *target; /* where it leads, relative, normalised; "" the top */
	} *v;
	size_t n, cap;
};

/* Record the link at rel with target text; a target leaving the
 * directory (absolute, or too many "..") is not recorded. 0 or -ENOMEM. */
int handoff_links_add(struct handoff_links *l, const char *rel, const char *target);
void handoff_links_free(struct handoff_links *l);

/* The first rule matching rel or any other name rel is reached by
 * through l (rel itself first). *via is set to that name when it is not
 * rel (a buffer of vlen bytes), else "". A directory rule's directory
 * (".vscode" for .vscode/ and "**") matches a link at that name too.
 * Pure. */
const struct handoff_rule *handoff_match_aliases(const struct handoff_links *l, const char *rel, bool is_link,
						 char *via, size_t vlen);

/* ---- content checks ---- */

/* A finding inside a hand-off file: something that runs a command. */
struct handoff_finding {
	unsigned line;   /* 1-based, 0 when not about one line */
	char what[256];  /* e.g. "core.fsmonitor runs a command on every git status" */
};

#define HANDOFF_MAX_FINDINGS 16

/* Look inside the file at relative path rel, whose bytes are data[0..len),
 * for entries that make a host tool run a command (git config keys such
 * as core.hooksPath, core.fsmonitor, core.sshCommand, filter and diff
 * drivers, "!" aliases, includes; .gitattributes drivers; .gitmodules
 * update commands; editor tasks that run on folder open). Fills at most
 * max findings and returns how many. Pure. */
size_t handoff_inspect(const char *rel, const char *data, size_t len, struct handoff_finding *out,
		       size_t max);

/* The same, knowing root, the absolute path of the directory rel is in
 * (or NULL): a pointer file (a .git file's gitdir, a commondir, an
 * alternate, a Mercurial sharedpath) naming a place inside root by its
 * absolute path (as git worktree add writes it) is judged by where it
 * leads there. Pointers are reported unless they lead where git itself
 * makes them lead (a worktree's or a submodule's directory; a worktree's
 * own repository). Pure. */
size_t handoff_inspect_in(const char *root, const char *rel, const char *data, size_t len,
			  struct handoff_finding *out, size_t max);

/* dir + "/" + target with "." and ".." resolved lexically, into out;
 * false when it climbs above the top or does not fit. Pure. */
bool handoff_path_resolve(const char *dir, const char *target, char *out, size_t len);

/* ---- scanning a directory ---- */

enum handoff_change {
	HANDOFF_PRESENT,  /* no baseline: the file is there */
	HANDOFF_ADDED,
	HANDOFF_MODIFIED,
	HANDOFF_REMOVED,
};

struct handoff_entry {
	char *path;                     /* relative to the scanned directory */
	const struct handoff_rule *rule; /* NULL for an entry listed for another reason */
	enum handoff_change change;
	bool flagged;                   /* needs a human's eyes before a host tool runs */
	char reason[512];               /* why it is listed or flagged */
	char sha256[65];                /* of the contents (or of a link's target text) */
	unsigned mode;                  /* st_mode */
};

struct handoff_report {
	struct handoff_entry *e;
	size_t n, cap;
	size_t files_seen;
};

struct handoff_baseline;

struct handoff_scan_opts {
	const struct handoff_baseline *baseline; /* NULL: list what is there */
	bool all_executables; /* also list every executable file (a baseline
	                       * diff always lists new ones) */
};

/* Walk dir (never following symlinks, never leaving it) and fill rep with
 * the hand-off files, executables and links of note. Returns 0 or a
 * negative errno with err set. rep is the caller's (handoff_report_free). */
int handoff_scan(const char *dir, const struct handoff_scan_opts *opts, struct handoff_report *rep,
		 struct error *err);
void handoff_report_free(struct handoff_report *rep);

/* A baseline: every regular file's digest and mode, every link's target
 * and every directory under dir, as text lines "D sha256 mode path", kept
 * in a file by handoff_baseline_save. */
int handoff_baseline_save(const char *dir, const char *file, struct error *err);
int handoff_baseline_load(const char *file, struct handoff_baseline **out, struct error *err);
/* A baseline made from git: the blobs of REF's tree, compared by git's
 * object ids (git runs with hooks, fsmonitor and filters switched off). */
int handoff_baseline_git(const char *dir, const char *ref, struct handoff_baseline **out, struct error *err);
void handoff_baseline_free(struct handoff_baseline *b);

/* Print the report as a table (or JSON lines when json). */
void handoff_report_print(const struct handoff_report *rep, bool json, FILE *f);

#endif
