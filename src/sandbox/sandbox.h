/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_SANDBOX_H
#define AIRLOCK_SANDBOX_SANDBOX_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "util/error.h"

/* Exit codes of `airlock run` besides the command's own. */
#define SANDBOX_EXIT_USAGE 2    /* bad command line or bad policy: nothing ran */
#define SANDBOX_EXIT_SETUP 125  /* the sandbox could not be built: nothing ran */

struct sandbox_opts {
	const struct policy *policy; /* borrowed */
	char *const *argv;           /* borrowed, NULL-terminated command */
	bool trace_denials;          /* report blocked operations at exit */
	const char *audit_dir;       /* borrowed: write the signed decision log there, or NULL for
	                              * the policy's audit settings */
	bool no_audit;               /* --no-audit: no decision log whatever the policy says */
	const char *log_label;       /* borrowed: when set, "LABEL: PATH" of the decision log goes to
	                              * stderr once the log is started (a caller that keeps a log
	                              * of its own says which is which) */
	bool report_root;            /* once the sandbox is built, send its "/" (O_PATH, SCM_RIGHTS,
	                              * one message, SANDBOX_ROOT_MSG) on root_to: a caller that
	                              * judges paths as the sandbox sees them (an MCP server's
	                              * monitor) */
	int root_to;
};

#define SANDBOX_ROOT_MSG 'R'

/* The host uid and gid pol's sandbox runs as (started as root: the
 * policy's, else the workspace's owner's, else nobody; unprivileged: our
 * own), which a helper relaying for it drops to. 0, or a negative errno
 * with err set (a workspace that is not there, a host uid that would be
 * root). */
int sandbox_host_ids(const struct policy *pol, uid_t *uid, gid_t *gid, struct error *err) WUR;

/* Run argv inside the process boundary described by opts->policy.
 * Returns 0 and sets *exit_code to the command's exit status (128+N for a
 * signal) when the command ran; a negative value with err filled when the
 * sandbox could not be built (nothing of the command ran). */
int sandbox_run(const struct sandbox_opts *opts, int *exit_code, struct error *err) WUR;

/* Print what the kernel supports and what airlock will refuse or degrade.
 * Returns true when `airlock run` can work here. */
bool sandbox_doctor(FILE *f);

#endif
