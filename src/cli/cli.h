/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_CLI_CLI_H
#define AIRLOCK_CLI_CLI_H

#include <stdio.h>

#include "policy/policy.h"
#include "util/error.h"

/* One entry point per verb; each returns the process exit code. */
int cli_run(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_handoff(int argc, char **argv);
int cli_review(int argc, char **argv);
int cli_apply(int argc, char **argv);
int cli_discard(int argc, char **argv);
int cli_identity(int argc, char **argv);
int cli_conformance(int argc, char **argv);
int cli_mcp(int argc, char **argv); /* mcp.c */
int cli_mcp_connect(int argc, char **argv); /* mcp_connect.c */
int cli_mcp_decide(int argc, char **argv); /* airlock approve|deny, mcp.c */
int cli_policy(int argc, char **argv);
int cli_policy_import(int argc, char **argv); /* policy_import.c */
int cli_policy_export(int argc, char **argv);
int cli_policy_diff(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_version(int argc, char **argv);

/* Hand over to airlock-audit (the only executable that links libcrypto):
 * exec it with verb and argv[1..argc). Returns only on failure, with the
 * exit code. */
int cli_audit_exec(const char *verb, int argc, char **argv);

/* --no-audit with a policy that names audit.dir: said on stderr, naming
 * the field's line; the caller exits with SANDBOX_EXIT_USAGE. */
bool cli_no_audit_contradicts(const struct policy *pol, bool no_audit);

/* Load FILE, or the built-in default when file is NULL. */
int cli_load_policy(const char *file, struct policy **out, struct error *err);

/* The home directory a policy's ~/ paths mean: $HOME when absolute, else
 * the user's from the password database, else "/". */
const char *cli_home(void);

struct policy_layer_report;

/* Load FILE (or the built-in default) and narrow it by the enterprise
 * policy: the system's files, then `enterprise` (a file or directory, or
 * NULL). rep receives the cuts (free with policy_layer_report_free). */
int cli_load_layered(const char *file, const char *enterprise, struct policy **out,
		     struct policy_layer_report *rep, struct error *err);

/* Print rep's cuts to f as "airlock: enterprise: ..." lines. Returns true
 * when on_excess: refuse applies (something was cut): the caller refuses
 * with SANDBOX_EXIT_USAGE. */
bool cli_layer_report(const struct policy_layer_report *rep, FILE *f);

/* `airlock policy explain` and the lint of `airlock policy check`. */
int cli_policy_explain(int argc, char **argv);
size_t cli_policy_lint(const struct policy *p, FILE *f);

#endif
