/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_DIFF_H
#define AIRLOCK_POLICY_DIFF_H

/*
 * The widening prover behind `airlock policy diff OLD NEW`: does NEW allow
 * anything OLD does not? Each section is compared as the set of things it
 * allows (requests, paths, credential uses, address ranges), with the
 * pattern automata of glob.h, so that a narrowing written differently is
 * not a widening and a widening hidden by a union is found. Every widening
 * comes with a witness: one concrete request, path or use that NEW allows
 * and OLD denies. docs/policy.md lists what counts per section.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/policy.h"
#include "util/error.h"

struct policy_widening {
	char *section; /* "network", "filesystem.write", ... */
	char *where;   /* "new.yaml:12": the NEW setting that allows it */
	char *witness; /* the request, path, ... NEW allows and OLD denies */
	char *text;    /* the whole line, "SECTION: NEW WHERE allows ...; OLD denies it" */
};

struct policy_diff {
	struct policy_widening *v;
	size_t n, cap;
};

/* Compare; out (zeroed by the caller) receives every widening found, at
 * most one per pair of rules involved. Both policies are borrowed. Fails
 * (-E2BIG) only when patterns are too complex to compare exactly. */
int policy_diff(const struct policy *old, const struct policy *new_, struct policy_diff *out,
		struct error *err) WUR;

void policy_diff_free(struct policy_diff *d);

/* Print the widenings, one line each, or as a JSON array. */
void policy_diff_print(const struct policy_diff *d, FILE *f);
void policy_diff_print_json(const struct policy_diff *d, FILE *f);

#endif
