/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_FSRULES_H
#define AIRLOCK_SANDBOX_FSRULES_H

/*
 * The filesystem decisions enforce mode would make, as a pure function of
 * the plan: which paths the sandbox's root would show (and how), and which
 * Landlock rights would hold beneath them. Observe mode builds no such
 * root and applies no ruleset; the supervisor asks this evaluator instead
 * at each traced path-taking syscall and records what would have been
 * denied.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sandbox/internal.h"

enum fsrules_view {
	FSV_BIND_RO,  /* a host tree shown read-only */
	FSV_BIND_RW,  /* a host tree shown read-write */
	FSV_PRIVATE,  /* a private tmpfs (/tmp, home, the root): the host's files beneath are not shown */
	FSV_HIDDEN,   /* covered by an empty read-only mount (filesystem.deny, the policy file) */
	FSV_OWN,      /* the sandbox's own /dev, /proc, /run/airlock */
};

enum fsrules_verdict {
	FSR_ALLOW = 0,
	FSR_DENY_ACCESS,   /* Landlock: no rule grants the right */
	FSR_DENY_READONLY, /* a write to a read-only mount */
	FSR_DENY_HIDDEN,   /* the path would not be visible */
	FSR_DENY_NOEXEC,   /* an exec from a noexec mount */
};

struct fsrules {
	struct {
		char *path;
		enum fsrules_view kind;
		bool noexec; /* nothing beneath runs (plan.c, plan_mark_exec) */
	} *views;
	size_t n_views;
	struct ll_rule *rules;
	size_t n_rules;
	uint64_t handled; /* the Landlock rights this kernel enforces; others are never denied */
};

/* Whether path exists in the sandbox's view (observe mode's: the host's,
 * with the sandbox's own /dev and /proc). */
typedef bool (*fsrules_exists_fn)(const char *path, void *ctx);

/* Copy the plan's mounts and rules into *out (owned by the caller: free
 * with fsrules_free). canon, when not NULL, rewrites each rule's path to
 * the real path it names (a rule on /bin holds for /usr/bin when /bin is a
 * link to it). Returns 0 or -ENOMEM. */
int fsrules_from_plan(const struct sandbox_plan *p, uint64_t handled, void (*canon)(char *path, size_t len),
		      struct fsrules *out);
void fsrules_free(struct fsrules *r);

/* What enforce mode would answer to `access` (Landlock rights) on path,
 * an absolute, normalised, symlink-free path. For a right Landlock checks
 * on the parent directory (creating, removing), pass the parent. */
enum fsrules_verdict fsrules_check(const struct fsrules *r, const char *path, uint64_t access,
				   fsrules_exists_fn exists, void *ctx);

/* "EACCES [filesystem]" and the like: what the call would have got. */
const char *fsrules_verdict_name(enum fsrules_verdict v);

#endif
