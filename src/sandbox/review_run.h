/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_REVIEW_RUN_H
#define AIRLOCK_SANDBOX_REVIEW_RUN_H

/* The supervisor's side of review mode (see review_run.c). */

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "sandbox/auditlog.h"
#include "util/error.h"

struct sandbox_plan;

#include "review/review.h"

struct review_run {
	bool active;
	bool hold;        /* hold mode: the unheld part lands at exit */
	bool land_failed; /* it could not: all is held */
	bool gone;        /* it did, and nothing was held */
	char *dir;        /* the session directory, owned */
	int lock;         /* held while the sandbox runs (when locked) */
	bool locked;
	char id[64];
	size_t n_changes, n_flagged, n_held;
	struct review_groups groups; /* what stays held */
	int layer;        /* the overlay's mount, from the sandbox (when layer_held) */
	bool layer_held;
};

/* The mode a run of pol takes: hold gives way to direct in observe mode,
 * and, left to its default, where the policy cannot run behind a layer
 * (*why says which; NULL otherwise). */
enum policy_workspace_mode review_run_mode(const struct policy *pol, const char **why);

/* Refuse a policy that review mode cannot run as written (observe mode;
 * a write path holding the workspace or inside it), naming file, line and
 * field. Also called by `airlock run` before anything starts (exit 2). */
int review_run_check(const struct policy *pol, struct error *err) WUR;
/* Refuse a policy that would reach the workspace around the layer, start
 * the session, and put its fds and the overlay into the plan. */
int review_run_prepare(const struct policy *pol, struct sandbox_plan *plan, struct review_run *rr,
		       struct error *err) WUR;
/* Keep the overlay's mount (PROTO_FD_LAYER, fd now rr's) until the run
 * is over: see review_run.c. */
void review_run_hold_layer(struct review_run *rr, int fd);
/* Name the session after the decision log's session (or a fresh id). */
int review_run_name(struct review_run *rr, const char *session, struct error *err) WUR;
/* After the command: read the change; each flagged entry becomes a
 * file_flagged record in the log (audit may be NULL). */
void review_run_finish(struct review_run *rr, const char *ws, struct auditlog *audit);
/* Say on stderr what is held and how to review it (or drop an empty
 * session); let the overlay's mount go. */
void review_run_report(struct review_run *rr);
/* Setup failed: drop the session. */
void review_run_abort(struct review_run *rr);

#endif
