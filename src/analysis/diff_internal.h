/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_DIFF_INTERNAL_H
#define AIRLOCK_POLICY_DIFF_INTERNAL_H

/*
 * What the widening prover's files share: diff.c records the findings
 * and compares the single settings; diff_net.c, diff_fs.c, diff_cred.c and
 * diff_mcp.c compare one section each, as sets.
 */

#include <stdbool.h>
#include <stddef.h>

#include "analysis/diff.h"
#include "policy/glob.h"
#include "policy/policy.h"
#include "util/error.h"

/* Record "SECTION: NEW WHERE <fmt>" against NEW's setting at loc (p's
 * file when loc names none). witness is copied. */
int diff_add(struct policy_diff *d, struct error *err, const char *section, const struct policy *p,
	     const struct policy_loc *loc, const char *witness, const char *fmt, ...) PRINTF_LIKE(7, 8);

/* a and b both NULL, or the same string. */
bool diff_str_eq(const char *a, const char *b);

/* A list of compiled patterns, owned. */
struct gvec {
	struct glob **v;
	size_t n, cap;
};

void diff_gvec_free(struct gvec *g);
/* Compile pattern as kind and append it; the error of either step. */
int diff_gvec_add(struct gvec *g, const char *pattern, enum glob_kind kind, struct error *err);

#define CG(v) ((const struct glob *const *)(v))

/* The method atoms of a set of rules: each named method, and one named by
 * none (standing for all the others). */
struct methods {
	const char *v[256];
	size_t n;
	bool overflow; /* more names than v holds: the answer would not be exact */
};

void diff_methods_add(struct methods *m, const char *name);
/* Add one method none of the rules names, standing for all the others. */
void diff_methods_close(struct methods *m);

/* The sections: every widening found is added to d. */
int diff_net(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err);
int diff_private(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err);
int diff_fs(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err);
int diff_cred(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err);
int diff_mcp(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err);

#endif
