/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_HANDOFF_PROTECT_H
#define AIRLOCK_HANDOFF_PROTECT_H

/*
 * Protected paths (filesystem.protect): the hand-off files of the rule
 * table, plus the policy's own globs, made read-only inside the sandbox.
 * This part is pure: which relative paths a set of globs protects. The
 * sandbox (src/sandbox/protect.c) walks the workspace with it.
 *
 * A directory glob (its last component is "**", as in .vscode/ followed
 * by "**") protects the directory and everything beneath it,
 * and also anything else (a file, a symlink) at the directory's own name:
 * a symlink ".vscode -> notes" would otherwise make notes/tasks.json the
 * task file. Any other glob protects files, symlinks and special files but
 * not a directory it happens to name: "**" + "/.git" is about a .git *file*
 * (a gitdir pointer); the .git directory is walked into, so that its
 * objects, refs and index stay writable and only its hooks and config are
 * protected.
 */

#include <stdbool.h>
#include <stddef.h>

#include "handoff/handoff.h"
#include "policy/policy.h"

struct protect_set {
	char **pat; /* owned */
	size_t n;
	size_t cap; /* room in pat */
	/* Prepared for matching at the first match, per pattern: the
	 * pattern, and for a directory glob (DIR, '/', "**") its DIR as a
	 * glob of its own (head[i].nt is 0 otherwise). Owned; NULL until
	 * then. */
	struct handoff_glob *glob, *head;
};

/* The effective set: the table's default rows unless
 * filesystem.protect_defaults is false, its opt-in rows when
 * filesystem.protect_build, then filesystem.protect. Returns 0 or -ENOMEM;
 * *out is the caller's (protect_set_free). */
int protect_set_from_policy(const struct policy *pol, struct protect_set *out);
void protect_set_free(struct protect_set *s);

/* Add pat (copied) unless the set holds it already. 0 or -ENOMEM. */
int protect_set_add(struct protect_set *s, const char *pat);

/* The glob protecting rel (relative to the workspace, no leading or
 * trailing '/'), or NULL. is_dir: rel is a directory. Pure. */
const char *protect_match(const struct protect_set *s, const char *rel, bool is_dir);

/* Could anything beneath the directory rel be protected? false lets a
 * walk skip the whole subtree. rel "" is the workspace itself. Pure. */
bool protect_may_match_beneath(const struct protect_set *s, const char *rel);

/* Would a symlink at rel let a protected path be reached through it? A
 * link ".venv -> foo" makes foo/bin/python the ".venv/bin/python" a host
 * tool runs, while foo/bin/python itself matches no glob. It would when
 * rel, or a trailing part of it, leads into a glob past the glob's own
 * "**" + "/" (".venv/" leads into .venv/bin/...), not when only that
 * leading "**" + "/" would reach through it (**" + "/.envrc matches
 * rel/.envrc, but also the link's target's .envrc, which is protected in
 * its own right). Pure. */
bool protect_link_dangerous(const struct protect_set *s, const char *rel);

/* A directory tree is about to appear at dst (a rename or link of a
 * directory): would the entry inside it at inner (relative to the tree's
 * top, "" for the top itself) be protected at its new place? Returns the
 * glob, or NULL. buf is scratch space of len bytes; a joined path that
 * does not fit counts as protected (the caller refuses), and so the
 * answer is then the string "(path too long)". Pure. */
const char *protect_match_beneath(const struct protect_set *s, const char *dst, const char *inner, bool is_dir,
				  char *buf, size_t len);

#endif
