/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The flagged part of a change, grouped by what made it: a new repository
 * (`git init`, `git clone`), a Python virtual environment, the command
 * links npm puts in node_modules/.bin, or else the directory the flagged
 * files lie in. A group is what a person accepts with one
 * `airlock apply ID --accept ROOT`, and what hold mode keeps back.
 *
 * A group whose root the agent made new (a fresh .git, .venv or .bin) is
 * held whole: a repository without its config, or a virtual environment
 * without its interpreter links, is no use to the host, and landing half
 * of one would leave the other half to be judged without its context. A
 * group in a directory that was already there holds its flagged entries
 * only.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "review/review.h"

bool review_beneath(const char *path, const char *root)
{
	size_t n = strlen(root);
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int cmp_path(const void *a, const void *b)
{
	const struct review_change *const *x = a, *const *y = b;
	return strcmp((*x)->path, (*y)->path);
}

/* The change at exactly path, through the index sorted by path. */
static const struct review_change *lookup(struct review_change **idx, size_t n, const char *path)
{
	struct review_change key = { .path = (char *)path }, *kp = &key;
	struct review_change **hit = bsearch(&kp, idx, n, sizeof(*idx), cmp_path);
	return hit ? *hit : NULL;
}

static bool fresh_dir(const struct review_change *c)
{
	return c && S_ISDIR(c->mode) && (c->kind == REVIEW_ADDED || c->replace_dir);
}

/* The prefix of path through the first component named comp (or the
 * pair "a/b"), into out; false when none. */
static bool prefix_through(const char *path, const char *comp, char *out, size_t len)
{
	size_t cl = strlen(comp);
	for (const char *p = path; p; p = strchr(p, '/')) {
		if (*p == '/')
			p++;
		if (!strncmp(p, comp, cl) && (p[cl] == '\0' || p[cl] == '/')) {
			size_t n = (size_t)(p - path) + cl;
			if (n >= len)
				return false;
			memcpy(out, path, n);
			out[n] = '\0';
			return true;
		}
	}
	return false;
}

static int group_at(struct review_groups *g, const char *root, enum review_group_kind kind, bool whole)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->g[i].root, root))
			return (int)i;
	struct review_group *v = realloc(g->g, (g->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	g->g = v;
	struct review_group *n = &g->g[g->n];
	memset(n, 0, sizeof(*n));
	if (!(n->root = strdup(root)))
		return -ENOMEM;
	n->kind = kind;
	n->whole = whole;
	return (int)g->n++;
}

#define NOT_A_TOOL INT_MIN

/* Where a flagged change belongs, by what made it: a group's index,
 * NOT_A_TOOL, or -ENOMEM. */
static int classify(struct review_groups *g, struct review_change **idx, size_t n, const struct review_change *c)
{
	char root[PATH_MAX];
	if (prefix_through(c->path, "node_modules/.bin", root, sizeof(root)))
		return group_at(g, root, REVIEW_GROUP_BIN, fresh_dir(lookup(idx, n, root)));
	if (prefix_through(c->path, ".git", root, sizeof(root)))
		return group_at(g, root, REVIEW_GROUP_REPO, fresh_dir(lookup(idx, n, root)));
	/* A virtual environment: a directory above that holds a pyvenv.cfg
	 * the agent wrote (the outermost one). */
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", c->path);
	for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		char cfg[PATH_MAX + 16];
		snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", buf);
		const struct review_change *v = lookup(idx, n, cfg);
		if (v && v->kind != REVIEW_DELETED)
			return group_at(g, buf, REVIEW_GROUP_VENV, fresh_dir(lookup(idx, n, buf)));
		*s = '/';
	}
	return NOT_A_TOOL;
}

int review_groups_make(struct review_changes *ch, struct review_groups *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	struct review_change **idx = calloc(ch->n + 1, sizeof(*idx));
	if (!idx)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < ch->n; i++) {
		idx[i] = &ch->c[i];
		ch->c[i].group = -1;
	}
	if (ch->n)
		qsort(idx, ch->n, sizeof(*idx), cmp_path);
	int r = 0;
	/* The tools' groups first, so that what is left can join them. */
	for (size_t i = 0; i < ch->n && r >= 0; i++) {
		if (!ch->c[i].flags)
			continue;
		int k = classify(out, idx, ch->n, &ch->c[i]);
		if (k >= 0)
			ch->c[i].group = k;
		else if (k != NOT_A_TOOL)
			r = k;
	}
	for (size_t i = 0; i < ch->n && r >= 0; i++) {
		struct review_change *c = &ch->c[i];
		if (!c->flags || c->group >= 0)
			continue;
		char root[PATH_MAX];
		/* The command a package's bin link leads to (made executable
		 * by npm, and flagged as reached through the link) goes with
		 * the links into it. */
		const char *nm = strstr(c->path, "node_modules/");
		while (!(c->flags & ~(unsigned)(REVIEW_FLAG_EXEC | REVIEW_FLAG_HANDOFF)) && nm &&
		       (nm == c->path || nm[-1] == '/')) {
			snprintf(root, sizeof(root), "%.*snode_modules/.bin", (int)(nm - c->path), c->path);
			for (size_t k = 0; k < out->n && c->group < 0; k++)
				if (out->g[k].kind == REVIEW_GROUP_BIN && !strcmp(out->g[k].root, root))
					c->group = (int)k;
			const char *next = strstr(nm + 1, "/node_modules/");
			nm = next ? next + 1 : NULL;
		}
		if (c->group >= 0)
			continue;
		/* Else: the outermost directory the agent made above it, the
		 * directory it lies in, or itself at the top. */
		const char *slash = strrchr(c->path, '/');
		if (!slash) {
			snprintf(root, sizeof(root), "%s", c->path);
		} else {
			snprintf(root, sizeof(root), "%.*s", (int)(slash - c->path), c->path);
			char buf[PATH_MAX];
			snprintf(buf, sizeof(buf), "%s", c->path);
			for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
				*s = '\0';
				if (fresh_dir(lookup(idx, ch->n, buf))) {
					snprintf(root, sizeof(root), "%s", buf);
					break;
				}
				*s = '/';
			}
		}
		if ((r = group_at(out, root, REVIEW_GROUP_OTHER, false)) >= 0)
			c->group = r;
	}
	/* Everything beneath a group held whole belongs to it. */
	for (size_t i = 0; i < ch->n && r >= 0; i++) {
		struct review_change *c = &ch->c[i];
		for (size_t k = 0; k < out->n; k++)
			if (out->g[k].whole && review_beneath(c->path, out->g[k].root) &&
			    (c->group < 0 || !out->g[c->group].whole ||
			     strlen(out->g[k].root) < strlen(out->g[c->group].root)))
				c->group = (int)k;
	}
	free(idx);
	if (r < 0) {
		review_groups_free(out);
		return error_set(err, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ch->n; i++) {
		const struct review_change *c = &ch->c[i];
		if (c->group < 0)
			continue;
		struct review_group *gp = &out->g[c->group];
		gp->n++;
		if (c->flags)
			gp->n_flagged++;
		if (S_ISLNK(c->mode))
			gp->n_links++;
		if (S_ISREG(c->mode) && (c->mode & 0111))
			gp->n_exec++;
		if (c->flags & REVIEW_FLAG_HANDOFF)
			gp->n_handoff++;
		if (c->flags & REVIEW_FLAG_LINK)
			gp->n_escaping++;
		if (c->flags & (REVIEW_FLAG_SETID | REVIEW_FLAG_SPECIAL | REVIEW_FLAG_SECRET | REVIEW_FLAG_PROTECT))
			gp->n_other++;
		char hooks[PATH_MAX + 8];
		snprintf(hooks, sizeof(hooks), "%s/hooks/", gp->root);
		if (gp->kind == REVIEW_GROUP_REPO && !strncmp(c->path, hooks, strlen(hooks)) && c->kind != REVIEW_DELETED)
			gp->n_hooks++;
	}
	/* A root that is not itself a change is a directory that was there
	 * (an existing .git); one that is a file stands alone. */
	for (size_t k = 0; k < out->n; k++) {
		struct review_group *gp = &out->g[k];
		const struct review_change *rc = NULL;
		for (size_t i = 0; i < ch->n && !rc; i++)
			if (!strcmp(ch->c[i].path, gp->root))
				rc = &ch->c[i];
		gp->dir = !rc || S_ISDIR(rc->mode) || (rc->kind == REVIEW_DELETED && S_ISDIR(rc->old_mode));
	}
	return 0;
}

void review_groups_free(struct review_groups *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->g[i].root);
	free(g->g);
	memset(g, 0, sizeof(*g));
}

static void count(char *out, size_t len, size_t *used, size_t n, const char *one, const char *many)
{
	if (!n || *used >= len)
		return;
	*used += (size_t)snprintf(out + *used, len - *used, "%s%zu %s", *used ? ", " : "", n, n == 1 ? one : many);
}

void review_group_describe(const struct review_group *g, char *out, size_t len)
{
	size_t used = 0;
	out[0] = '\0';
	switch (g->kind) {
	case REVIEW_GROUP_REPO:
		if (g->whole && g->n_hooks)
			snprintf(out, len, "a new repository with its config and %zu hook%s", g->n_hooks,
				 g->n_hooks == 1 ? "" : "s");
		else if (g->whole)
			snprintf(out, len, "a new repository with its config");
		else
			count(out, len, &used, g->n_flagged, "change to the repository's config or hooks",
			      "changes to the repository's config or hooks");
		return;
	case REVIEW_GROUP_VENV:
		used = (size_t)snprintf(out, len, "a Python virtual environment");
		count(out, len, &used, g->n_exec + g->n_links, "executable", "executables");
		return;
	case REVIEW_GROUP_BIN:
		count(out, len, &used, g->n_links, "link into node_modules", "links into node_modules");
		count(out, len, &used, g->n_exec, "command", "commands");
		return;
	case REVIEW_GROUP_OTHER:
		break;
	}
	count(out, len, &used, g->n_exec, "new executable", "new executables");
	count(out, len, &used, g->n_handoff, "hand-off file", "hand-off files");
	count(out, len, &used, g->n_escaping, "link leaving the workspace", "links leaving the workspace");
	count(out, len, &used, g->n_other, "set-ID, device, credential or protected file",
	      "set-ID, device, credential or protected files");
	if (!used)
		count(out, len, &used, g->n_flagged, "flagged file", "flagged files");
}

void review_groups_print(FILE *f, const struct review_groups *g, size_t max)
{
	for (size_t i = 0; i < g->n && i < max; i++) {
		char what[512];
		review_group_describe(&g->g[i], what, sizeof(what));
		fprintf(f, "  %s%s: %s\n", g->g[i].root, g->g[i].dir ? "/" : "", what);
	}
	if (g->n > max)
		fprintf(f, "  and %zu more (airlock review lists them)\n", g->n - max);
}
