/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_REVIEW_REVIEW_H
#define AIRLOCK_REVIEW_REVIEW_H

/*
 * Review mode (sandbox.workspace_mode: review): the agent writes to a
 * copy-on-write layer (an overlayfs upper directory held outside the
 * sandbox), and nothing reaches the real workspace until a human has
 * looked at the change and applied it. This module owns the sessions
 * (one directory each under the state directory), reads the change out of
 * an upper directory, judges what needs a human's eyes, shows it as a
 * diff, and applies it to the workspace all or nothing.
 *
 * A session directory holds:
 *   layer/upper/  the overlay's upper directory (the agent's change)
 *   layer/work/   the overlay's work directory (layer/ and both belong
 *                 to the sandbox's uid)
 *   meta       "workspace PATH", "started SECONDS", "protect GLOB" lines
 *              (the policy's protected paths, flagged at review) and
 *              "mode hold" for a session of hold mode
 *   manifest   the workspace as it was when the run started: one line per
 *              entry, "type ino size mtime_ns ctime_ns path" (conflicts)
 *   journal    while an apply runs (see apply.c)
 * Paths in meta, manifest and journal are escaped (review_escape).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "policy/protect.h"
#include "util/error.h"

#define REVIEW_ID_MAX 64
#define REVIEW_UPPER "layer/upper" /* beneath the session directory */
#define REVIEW_MAX_ENTRIES 1000000
#define REVIEW_MAX_DEPTH 64

/* ---- sessions (session.c) ---- */

/* The directory holding every session: $XDG_STATE_HOME/airlock/review,
 * else $HOME/.local/state/airlock/review. */
int review_root(char *out, size_t len, struct error *err) WUR;

/* Is id a session name we made (letters, digits, '-', no '/' or "..")? */
bool review_id_valid(const char *id);

/* A fresh random id (a UUID, as the decision log's sessions are). */
void review_new_id(char out[37]);

/* Start a session for the workspace ws (resolved) under a temporary
 * name: make its directory, layer/, layer/upper and layer/work (owned by
 * uid:gid when started as root, so that the sandbox's uid writes there),
 * write meta and the manifest of ws. *dir (malloc'd) is the session
 * directory. */
int review_session_begin(const char *ws, uid_t uid, gid_t gid, const struct protect_set *globs, bool hold,
			 char **dir, struct error *err) WUR;

/* Was the session started in hold mode (meta "mode hold")? Then an apply
 * lands what is accepted and keeps the other groups held. */
bool review_session_hold(const char *dir);

/* The protected-path globs a session recorded (out is the caller's,
 * protect_set_free). */
int review_session_protect(const char *dir, struct protect_set *out, struct error *err) WUR;

/* Give the session at *dir its final name id (replaces *dir). */
int review_session_name(char **dir, const char *id, struct error *err) WUR;

/* Remove a session directory and all beneath it (no symlink followed). */
int review_session_remove(const char *dir, struct error *err) WUR;

/* Remove name in pfd and everything beneath it, without following links
 * (a directory left unreadable is made readable first); 0 or -errno. */
int review_remove_at(int pfd, const char *name) WUR;

/* The directory of session id: 0, -ENOENT with a message naming it, or
 * another error. */
int review_session_dir(const char *id, char *out, size_t len, struct error *err) WUR;

/* Hold the session for one apply, review or discard at a time (an apply
 * that found another's journal would otherwise roll back work still in
 * progress). Returns the fd holding the lock, or a negative errno with a
 * message when another holds it. */
int review_session_lock(const char *dir, struct error *err) WUR;

/* The workspace a session was started for (malloc'd). */
int review_session_workspace(const char *dir, char **ws, struct error *err) WUR;

/* List held sessions on f, one line each (id, workspace, start time). */
int review_session_list(FILE *f, struct error *err) WUR;

/* ---- manifest (session.c) ---- */

struct review_mentry {
	char *path;  /* relative, owned */
	char type;   /* 'f' file, 'd' directory, 'l' link, 'o' other */
	uint64_t ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct review_manifest {
	struct review_mentry *e; /* sorted by path */
	size_t n;
};

int review_manifest_load(const char *dir, struct review_manifest *m, struct error *err) WUR;
void review_manifest_free(struct review_manifest *m);
const struct review_mentry *review_manifest_find(const struct review_manifest *m, const char *path);
/* Does the entry still match st (same type, inode, size, times)? Pure. */
bool review_mentry_same(const struct review_mentry *e, const struct stat *st);

/* Escape a path for a line-based file: bytes <= ' ', '%', 0x7f become %XX.
 * Returns malloc'd text or NULL. Pure. */
char *review_escape(const char *s);
/* Undo review_escape in place; false on a malformed escape. */
bool review_unescape(char *s);

/* ---- the change (changes.c) ---- */

enum review_kind {
	REVIEW_ADDED,
	REVIEW_MODIFIED,
	REVIEW_DELETED,
};

/* Why a change needs a human's eyes. */
enum {
	REVIEW_FLAG_HANDOFF = 1 << 0,  /* a file of the hand-off table */
	REVIEW_FLAG_EXEC = 1 << 1,     /* a new executable, or +x added */
	REVIEW_FLAG_SETID = 1 << 2,    /* set-user-ID or set-group-ID */
	REVIEW_FLAG_LINK = 1 << 3,     /* a symlink leaving the workspace */
	REVIEW_FLAG_SPECIAL = 1 << 4,  /* device, FIFO or socket */
	REVIEW_FLAG_SECRET = 1 << 5,   /* contents match a credential format */
	REVIEW_FLAG_PROTECT = 1 << 6,  /* a protected path of the policy (filesystem.protect) */
};

struct review_change {
	char *path;            /* relative to the workspace, owned */
	enum review_kind kind;
	bool replace_dir;      /* the upper holds an opaque directory (or a
	                        * directory where the workspace had another
	                        * type): the old tree goes, the new one comes */
	mode_t mode;           /* upper's st_mode (0 for a deletion) */
	mode_t old_mode;       /* the workspace's st_mode (0 when absent) */
	unsigned flags;
	char reason[768];      /* the flags in words, "" when not flagged */
	int group;             /* review_groups_make: its group, or -1 */
};

struct review_changes {
	struct review_change *c;
	size_t n, cap;
};

/* Read the change held in upper (an overlay upper directory) against the
 * workspace ws: walk upper without following a symlink, turning
 * whiteouts into deletions and opaque directories into replacements, and
 * judge each change (globs: the policy's protected paths, or NULL).
 * Sorted: flagged first, then by path. */
int review_changes_read(const char *upper, const char *ws, const struct protect_set *globs, struct review_changes *out,
			struct error *err) WUR;
void review_changes_free(struct review_changes *c);
size_t review_changes_flagged(const struct review_changes *c);

/* Judge one change from what it is: rel its path, st the upper's stat,
 * old_mode the workspace's mode (0 when absent), data[0..len) the first
 * bytes of a regular file, link the text of a symlink. Sets c->flags and
 * c->reason. Pure. */
void review_judge(struct review_change *c, const struct stat *st, const char *data, size_t len, const char *link,
		  const struct protect_set *globs);

/* ---- groups (groups.c) ---- */

enum review_group_kind {
	REVIEW_GROUP_REPO,  /* a .git directory */
	REVIEW_GROUP_VENV,  /* a directory holding the pyvenv.cfg the agent wrote */
	REVIEW_GROUP_BIN,   /* node_modules/.bin, and the commands it links to */
	REVIEW_GROUP_OTHER, /* the outermost new directory, the directory, or the file */
};

struct review_group {
	char *root; /* relative, owned */
	enum review_group_kind kind;
	bool whole; /* a new directory: all beneath it is held with it */
	bool dir;   /* the root is a directory (else one file) */
	size_t n, n_flagged, n_exec, n_links, n_hooks, n_handoff, n_escaping, n_other;
};

struct review_groups {
	struct review_group *g;
	size_t n;
};

/* The flags hold mode keeps a change back for: all but a new
 * executable's alone. Pure. */
static inline unsigned review_held_flags(unsigned flags)
{
	return flags & ~(unsigned)REVIEW_FLAG_EXEC;
}

/* Is path root or beneath it? Pure. */
bool review_beneath(const char *path, const char *root);

/* Group the flagged changes of ch by what made them (sets each change's
 * group: -1 for a change no group holds). out is the caller's. */
int review_groups_make(struct review_changes *ch, struct review_groups *out, struct error *err) WUR;
void review_groups_free(struct review_groups *g);
/* "a Python virtual environment, 12 executables" and the like. Pure. */
void review_group_describe(const struct review_group *g, char *out, size_t len);
/* The groups of ch on f, one line each ("  ROOT/: what"), at most max
 * lines and a count of the rest. */
void review_groups_print(FILE *f, const struct review_groups *g, size_t max);

/* ---- diff (diff.c) ---- */

/* A unified diff (3 lines of context) of a[0..alen) against b[0..blen)
 * on f, under the names "a/NAME" and "b/NAME". Binary contents (a NUL
 * byte) print one line saying so. Returns 0 or -ENOMEM. */
int review_diff(FILE *f, const char *name, const char *a, size_t alen, const char *b, size_t blen) WUR;

/* The edit script's shape, for tests: how many lines the shortest edit
 * deletes and inserts, or -1 when over the bound. Pure. */
long review_diff_distance(const char *a, size_t alen, const char *b, size_t blen);

/* ---- apply (apply.c) ---- */

struct review_apply_opts {
	char *const *exclude; /* globs: changes left out (and kept out of the check) */
	size_t n_exclude;
	char *const *accept;  /* flagged paths a human accepted: a path, a glob, or a
	                       * directory (a group accepted whole) */
	size_t n_accept;
	bool quiet;           /* say nothing when it is done */
	/* Called once with the change and its groups as read, before they
	 * are checked (NULL: not called). */
	void (*seen)(const struct review_changes *ch, const struct review_groups *g, void *ctx);
	void *seen_ctx;
};

/* Apply session dir's change to its workspace, all or nothing, then
 * remove the session. Refuses flagged changes not accepted, and changes
 * whose workspace file changed since the run started (naming them). A
 * session of hold mode instead keeps each group not accepted, lands the
 * rest, and is removed only once nothing is held. */
int review_apply(const char *dir, const struct review_apply_opts *o, FILE *out, struct error *err) WUR;

/* An apply that was interrupted leaves a journal: roll it back (or, past
 * its commit point, finish it). Returns 1 when it did something, 0 when
 * there was no journal, or a negative errno. */
int review_recover(const char *dir, FILE *out, struct error *err) WUR;

#endif
