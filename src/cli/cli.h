/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_CLI_CLI_H
#define AIRLOCK_CLI_CLI_H

#include "policy/policy.h"
#include "util/error.h"

/* One entry point per verb; each returns the process exit code. */
int cli_run(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_handoff(int argc, char **argv);
int cli_identity(int argc, char **argv);
int cli_conformance(int argc, char **argv);
int cli_mcp(int argc, char **argv); /* mcp.c */
int cli_mcp_decide(int argc, char **argv); /* airlock approve|deny, mcp.c */
int cli_policy(int argc, char **argv);
int cli_policy_import(int argc, char **argv); /* policy_import.c */
int cli_policy_export(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_version(int argc, char **argv);

/* Hand over to airlock-audit (the only executable that links libcrypto):
 * exec it with verb and argv[1..argc). Returns only on failure, with the
 * exit code. */
int cli_audit_exec(const char *verb, int argc, char **argv);

/* Load FILE, or the built-in default when file is NULL. */
int cli_load_policy(const char *file, struct policy **out, struct error *err);

#endif
