/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which workspace paths are protected: the hand-off table's globs and the
 * policy's, matched by the table's own matcher (src/handoff/rules.c), so
 * the scanner and the sandbox agree on every name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handoff/handoff.h"
#include "policy/protect.h"

/* A directory glob (DIR, '/', "**"): the length of DIR, else 0. */
static size_t dir_glob_prefix(const char *pat)
{
	size_t n = strlen(pat);
	return n > 3 && strcmp(pat + n - 3, "/**") == 0 ? n - 3 : 0;
}

int protect_set_add(struct protect_set *s, const char *pat)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->pat[i], pat) == 0)
			return 0;
	/* Room doubles: growing by one moved every pattern on each add. */
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		char **v = realloc(s->pat, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->pat = v;
		s->cap = cap;
	}
	if (!(s->pat[s->n] = strdup(pat)))
		return -ENOMEM;
	s->n++;
	/* Prepared again, with the new glob, at the next match. */
	free(s->glob);
	free(s->head);
	s->glob = s->head = NULL;
	return 0;
}

/* The globs prepared for matching, made at the first match: a prepared
 * glob is over a kilobyte, the default table over ninety of them, and
 * most sets are never matched against (a run in hold mode builds two
 * just to name their patterns). They are a cache of pat: a set is
 * still const to its readers, and single-threaded (each process its
 * own copy). false when out of memory. */
static bool prepared(const struct protect_set *cs)
{
	struct protect_set *s = (struct protect_set *)cs;
	if (s->glob || !s->n)
		return true;
	s->glob = calloc(s->n, sizeof(*s->glob));
	s->head = calloc(s->n, sizeof(*s->head));
	if (!s->glob || !s->head) {
		free(s->glob);
		free(s->head);
		s->glob = s->head = NULL;
		return false;
	}
	for (size_t i = 0; i < s->n; i++) {
		handoff_glob_prepare(s->pat[i], &s->glob[i]);
		size_t d = dir_glob_prefix(s->pat[i]);
		char head[HANDOFF_GLOB_MAX + 1];
		/* (A longer head belongs to a glob too long to match.) */
		if (d && d <= HANDOFF_GLOB_MAX) {
			memcpy(head, s->pat[i], d);
			head[d] = '\0';
			handoff_glob_prepare(head, &s->head[i]);
		}
	}
	return true;
}

int protect_set_from_policy(const struct policy *pol, struct protect_set *out)
{
	*out = (struct protect_set){ 0 };
	for (const struct handoff_rule *r = handoff_rules; r->pattern; r++) {
		bool on = r->opt_in ? pol->filesystem.protect_build : pol->filesystem.protect_defaults;
		/* A pointer row is judged by where it leads: the guard
		 * refuses the repository shapes it could lead to. A .git
		 * file or link stays protected by name all the same (no tool
		 * but git worktree add makes one, and the guard makes that
		 * one: its repository's worktrees/ID/gitdir names it). */
		if (r->pointer && strcmp(r->pattern, "**/.git") != 0)
			continue;
		if (on && protect_set_add(out, r->pattern) < 0)
			goto oom;
	}
	for (size_t i = 0; i < pol->filesystem.protect.n; i++)
		if (protect_set_add(out, pol->filesystem.protect.v[i].path) < 0)
			goto oom;
	return 0;
oom:
	protect_set_free(out);
	return -ENOMEM;
}

void protect_set_free(struct protect_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->pat[i]);
	free(s->pat);
	free(s->glob);
	free(s->head);
	*s = (struct protect_set){ 0 };
}

const char *protect_match(const struct protect_set *s, const char *rel, bool is_dir)
{
	if (!*rel)
		return NULL; /* the workspace itself is never protected */
	/* Out of memory: every path is protected (fail closed). */
	if (!prepared(s))
		return s->pat[0];
	size_t len = strlen(rel);
	for (size_t i = 0; i < s->n; i++) {
		if (s->head[i].nt) { /* a directory glob: its DIR too */
			if (handoff_glob_match_prepared(&s->head[i], rel, len) ||
			    handoff_glob_match_prepared(&s->glob[i], rel, len))
				return s->pat[i];
		} else if (!is_dir && handoff_glob_match_prepared(&s->glob[i], rel, len)) {
			return s->pat[i];
		}
	}
	return NULL;
}

bool protect_may_match_beneath(const struct protect_set *s, const char *rel)
{
	char prefix[4096];
	int n = *rel ? snprintf(prefix, sizeof(prefix), "%s/", rel) : snprintf(prefix, sizeof(prefix), "%s", "");
	if (n < 0 || (size_t)n >= sizeof(prefix))
		return true; /* cannot tell: look */
	for (size_t i = 0; i < s->n; i++)
		if (handoff_glob_prefix(s->pat[i], prefix))
			return true;
	return false;
}

const char *protect_match_beneath(const struct protect_set *s, const char *dst, const char *inner, bool is_dir,
				  char *buf, size_t len)
{
	int n = *inner ? snprintf(buf, len, "%s/%s", dst, inner) : snprintf(buf, len, "%s", dst);
	if (n < 0 || (size_t)n >= len)
		return "(path too long)";
	return protect_match(s, buf, is_dir);
}

bool protect_link_dangerous(const struct protect_set *s, const char *rel)
{
	char prefix[4096];
	if (!*rel)
		return false;
	for (size_t i = 0; i < s->n; i++) {
		const char *pat = s->pat[i];
		bool any_depth = strncmp(pat, "**/", 3) == 0;
		const char *anchored = any_depth ? pat + 3 : pat;
		/* rel itself, and for a glob at any depth each trailing part of
		 * rel that starts at a name. */
		for (const char *suffix = rel; suffix;) {
			int n = snprintf(prefix, sizeof(prefix), "%s/", suffix);
			if (n < 0 || (size_t)n >= sizeof(prefix))
				return true; /* cannot tell: refuse */
			if (handoff_glob_prefix(anchored, prefix))
				return true;
			if (!any_depth)
				break;
			suffix = strchr(suffix, '/');
			if (suffix)
				suffix++;
		}
	}
	return false;
}
