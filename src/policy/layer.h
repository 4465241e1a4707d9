/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_LAYER_H
#define AIRLOCK_POLICY_LAYER_H

/*
 * Enterprise layers: an enterprise policy is a ceiling over the developer's
 * policy. The effective policy is the developer's narrowed by every
 * enterprise file, never widened (docs/policy.md, "Enterprise layers").
 *
 * An enterprise file is a policy file (same schema) plus an optional
 * `enterprise:` section. A section or field the enterprise file does not
 * write does not constrain the developer's; one it writes is a ceiling.
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "util/error.h"

#define POLICY_ENTERPRISE_FILE "/etc/airlock/enterprise.yaml"
#define POLICY_ENTERPRISE_DIR "/etc/airlock/enterprise.d"

/* What narrowing the developer's policy produced. */
struct policy_layer_report {
	char **msgs;          /* one line per cut: "DEV:LINE: FIELD: ... (enterprise E:LINE)" */
	size_t n_msgs;
	bool refuse;          /* an enterprise file says on_excess: refuse */
	char *refuse_by;      /* "FILE:LINE" of the first on_excess: refuse, or NULL */
	bool require_audit;   /* the decision log may not be turned off (--no-audit) */
	char *audit_by;       /* "FILE:LINE" of the rule requiring it, or NULL */
};

void policy_layer_report_free(struct policy_layer_report *r);

/* The enterprise files that apply, in order: POLICY_ENTERPRISE_FILE, then
 * POLICY_ENTERPRISE_DIR's "*.yaml" sorted by name (each when present),
 * then `extra` (a file, or a directory whose "*.yaml" are taken sorted),
 * when not NULL. There is deliberately no way to leave out the system
 * files: --enterprise only adds ceilings. *files (owned by the caller,
 * each string and the array; free with policy_strv_free) may be empty. */
int policy_enterprise_files(const char *extra, char ***files, size_t *n, struct error *err) WUR;
void policy_strv_free(char **v, size_t n);

/* Narrow p by the enterprise files, in order. In them "~" is the
 * password database's home of getuid() and $WORKSPACE is p's workspace
 * (ctx->cwd only when p has none). Every cut is described in
 * rep (owned by the caller; free with policy_layer_report_free), whatever
 * on_excess says: the caller warns or refuses. Entries taken from an
 * enterprise file keep their file:line with layer "enterprise"; p's own
 * get layer "developer". A bad enterprise file is an error (the run must
 * not go ahead without its ceiling). */
int policy_apply_enterprise(struct policy *p, char *const *files, size_t n, const struct policy_ctx *ctx,
			    struct policy_layer_report *rep, struct error *err) WUR;

/* Give every entry p's file set the layer "developer" (done by
 * policy_apply_enterprise when there is an enterprise file). */
void policy_mark_developer(struct policy *p);

/* True when every host host pattern b matches is matched by pattern a. */
bool policy_host_pattern_covers(const char *a, const char *b);

/* Request-glob containment used by layering and lint (policy/glob.h):
 * true when every string glob a matches is matched by glob b, or by one of
 * b[0..n) (NULL = any). A glob that cannot be compiled gives false. */
bool policy_glob_subset(const char *a, const char *b);
bool policy_glob_subset_any(const char *a, const char *const *b, size_t n);

#endif
