/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What enforce mode's filesystem would decide, without building it. The
 * plan (plan.c) describes enforce mode's root as mounts and Landlock
 * rules; this file answers, for one path and one set of rights, what that
 * root and that ruleset would have done, the way the kernel would:
 *
 *  - the deepest mount covering the path says whether it is visible at
 *    all (a private tmpfs shows none of the host's files beneath it; a
 *    deny mount shows an empty file or directory) and whether it is
 *    read-only;
 *  - that mount says whether anything beneath it runs (noexec);
 *  - Landlock grants a right on a path when some rule on the path or one
 *    of its ancestors grants it, and checks only the rights this kernel's
 *    ABI handles.
 *
 * Pure: existence is asked of the caller, so the unit tests can drive it
 * with a made-up tree.
 */
#include "sandbox/fsrules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/landlock_abi.h"
#include "util/cleanup.h"

/* Rights that change the filesystem: refused by a read-only mount. */
#define WRITE_RIGHTS (LL_WRITE | LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK)

static bool under(const char *path, const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int add_view(struct fsrules *r, const char *path, enum fsrules_view kind, bool noexec)
{
	typeof(r->views) v = realloc(r->views, (r->n_views + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->views = v;
	if (!(v[r->n_views].path = strdup(path)))
		return -ENOMEM;
	v[r->n_views].noexec = noexec;
	v[r->n_views++].kind = kind;
	return 0;
}

/* The view on top at path among those added so far: is it noexec? */
static bool top_noexec(const struct fsrules *r, const char *path)
{
	bool noexec = true;
	for (size_t i = 0; i < r->n_views; i++)
		if (under(path, r->views[i].path))
			noexec = r->views[i].noexec;
	return noexec;
}

int fsrules_from_plan(const struct sandbox_plan *p, uint64_t handled, void (*canon)(char *path, size_t len),
		      struct fsrules *out)
{
	memset(out, 0, sizeof(*out));
	out->handled = handled;
	/* The root itself is a tmpfs showing nothing of the host's but the
	 * mount points; the sandbox's own /dev and /proc sit on it. All
	 * noexec (mount.c). */
	if (add_view(out, "/", FSV_PRIVATE, true) < 0)
		goto oom;
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct mount_entry *m = &p->mounts[i];
		enum fsrules_view kind;
		bool noexec = !m->exec;
		switch (m->kind) {
		case MOUNT_BIND:
			kind = m->readonly ? FSV_BIND_RO : FSV_BIND_RW;
			break;
		case MOUNT_PROTECT:
			/* Read-only over itself: kept in observe mode too. A
			 * clone of the view beneath, it keeps that one's exec. */
			kind = FSV_BIND_RO;
			noexec = top_noexec(out, m->dst);
			break;
		case MOUNT_TMPFS:
			kind = FSV_PRIVATE;
			break;
		case MOUNT_HIDE_DIR:
		case MOUNT_HIDE_FILE:
			kind = FSV_HIDDEN;
			noexec = true;
			break;
		case MOUNT_SYMLINK:
		default:
			continue; /* paths reach us with their links resolved */
		}
		if (add_view(out, m->dst, kind, noexec) < 0)
			goto oom;
	}
	/* mount.c makes /dev, /proc and the CA bundle's place after the
	 * plan's mounts, over whatever these showed there. */
	if (add_view(out, "/dev", FSV_OWN, true) < 0 || add_view(out, "/proc", FSV_OWN, true) < 0 ||
	    (p->ca_bundle && add_view(out, "/run/airlock", FSV_OWN, true) < 0))
		goto oom;
	out->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*out->rules));
	if (!out->rules)
		goto oom;
	for (size_t i = 0; i < p->n_rules; i++) {
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s", p->rules[i].path);
		if (canon)
			canon(buf, sizeof(buf));
		if (!(out->rules[i].path = strdup(buf)))
			goto oom;
		out->rules[i].access = p->rules[i].access;
		out->n_rules++;
	}
	return 0;
oom:
	fsrules_free(out);
	return -ENOMEM;
}

void fsrules_free(struct fsrules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_views; i++)
		free(r->views[i].path);
	free(r->views);
	for (size_t i = 0; i < r->n_rules; i++)
		free(r->rules[i].path);
	free(r->rules);
	memset(r, 0, sizeof(*r));
}

enum fsrules_verdict fsrules_check(const struct fsrules *r, const char *path, uint64_t access,
				   fsrules_exists_fn exists, void *ctx)
{
	if (!access || path[0] != '/')
		return FSR_ALLOW;

	/* The mount on top: the last one made (views are in mount order)
	 * among those covering the path. A later mount deeper down is
	 * reached through the earlier one; a later one higher up covers the
	 * earlier one whole: a filesystem.deny mount over D hides a read
	 * bind made at D/a before it, whatever the depths say. */
	size_t top = 0;
	bool found = false;
	for (size_t i = 0; i < r->n_views; i++) {
		if (under(path, r->views[i].path)) {
			top = i;
			found = true;
		}
	}
	if (!found)
		return FSR_DENY_HIDDEN;
	const char *mp = r->views[top].path;
	switch (r->views[top].kind) {
	case FSV_HIDDEN:
		return FSR_DENY_HIDDEN;
	case FSV_BIND_RO:
		if (access & WRITE_RIGHTS)
			return FSR_DENY_READONLY;
		break;
	case FSV_PRIVATE: {
		if (strcmp(path, mp) == 0)
			break;
		/* A directory on the way to a mount point exists in the
		 * sandbox's root too (it was made to hold the mount). */
		bool skeleton = false;
		for (size_t i = 0; i < r->n_views && !skeleton; i++)
			skeleton = i > top && under(r->views[i].path, path);
		if (skeleton)
			break;
		/* Below a private tmpfs only what the sandbox made itself is
		 * there: a host entry at the first level below it is not
		 * shown (nor anything beneath it). */
		size_t skip = strcmp(mp, "/") == 0 ? 1 : strlen(mp) + 1;
		const char *end = strchr(path + skip, '/');
		char first[4096];
		size_t n = end ? (size_t)(end - path) : strlen(path);
		if (n >= sizeof(first))
			return FSR_DENY_HIDDEN;
		memcpy(first, path, n);
		first[n] = '\0';
		if (exists && exists(first, ctx))
			return FSR_DENY_HIDDEN;
		break;
	}
	case FSV_BIND_RW:
	case FSV_OWN:
		break;
	}
	/* The kernel checks noexec before Landlock (may_open). */
	if ((access & LL_FS_EXECUTE) && r->views[top].noexec)
		return FSR_DENY_NOEXEC;

	/* A read-only mount refuses writes whatever the kernel's Landlock
	 * ABI; Landlock only judges the rights it handles. */
	uint64_t granted = 0;
	for (size_t i = 0; i < r->n_rules; i++)
		if (under(path, r->rules[i].path))
			granted |= r->rules[i].access;
	return (access & r->handled & ~granted) ? FSR_DENY_ACCESS : FSR_ALLOW;
}

const char *fsrules_verdict_name(enum fsrules_verdict v)
{
	switch (v) {
	case FSR_ALLOW:
		return "allowed";
	case FSR_DENY_ACCESS:
		return "EACCES [filesystem]";
	case FSR_DENY_READONLY:
		return "EROFS [read-only]";
	case FSR_DENY_HIDDEN:
		return "ENOENT [hidden: not in the sandbox's view]";
	case FSR_DENY_NOEXEC:
		return "EACCES [noexec mount]";
	}
	return "?";
}
