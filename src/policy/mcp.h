/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_MCP_H
#define AIRLOCK_POLICY_MCP_H

/*
 * The policy's `mcp:` section: per MCP server, which tools, resources and
 * prompts the agent may use, constraints on tool arguments, call limits,
 * server-initiated requests, scanning and pinning. docs/policy.md
 * ("mcp") describes every field; src/mcp/ enforces them.
 *
 * Ownership: struct policy owns the section (policy->mcp, NULL when the
 * file has none) and everything under it; policy_free() releases it.
 */

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum policy_mcp_decision {
	POLICY_MCP_ALLOW = 0,
	POLICY_MCP_DENY,
	POLICY_MCP_STEP_UP,
};

/* A constraint on the value(s) at one JSON path of a tool's arguments.
 * Every field set must hold for every value the path selects. */
struct policy_mcp_arg {
	char *path;            /* as written: "a.b", "paths[*]", "$.a" */
	char *glob;            /* name glob (match/glob.h: fnmatch(3)'s patterns) for a string, or NULL */
	char *regex;           /* POSIX ERE, matched against the whole string, or NULL */
	regex_t re;            /* compiled, anchored; valid when regex != NULL */
	char **enum_vals;      /* the value must equal one of these (string or number as text) */
	size_t n_enum;
	bool has_min, has_max;
	double min, max;       /* numeric range, inclusive */
	bool has_max_length;
	uint64_t max_length;   /* bytes of a string, entries of an array */
	bool inside_workspace; /* a path string that resolves inside the workspace */
	bool required;         /* the path must select at least one value */
	unsigned line;
};

/* tools / resources / prompts: a name (or URI) glob and a decision. */
struct policy_mcp_rule {
	char *match;           /* name glob on the tool or prompt name (match/glob.h), URI glob on the resource */
	enum policy_mcp_decision decision;
	struct policy_mcp_arg *args; /* tools only */
	size_t n_args;
	uint64_t max_calls;    /* 0: no limit; calls of the tools this rule matches, per session */
	unsigned line;
};

enum policy_mcp_scan {
	POLICY_MCP_SCAN_BLOCK = 0,
	POLICY_MCP_SCAN_REDACT,
	POLICY_MCP_SCAN_OFF,
};

struct policy_mcp_server {
	char *name;
	char **command;        /* NULL-terminated argv, or NULL when not given */
	size_t n_command;
	struct policy_mcp_rule *tools, *resources, *prompts;
	size_t n_tools, n_resources, n_prompts;
	uint64_t max_calls;    /* 0: no limit; tools/call per session */
	bool sampling, elicitation, roots; /* server-initiated requests allowed */
	enum policy_mcp_scan scan_secrets;   /* block or redact */
	enum policy_mcp_scan scan_injection; /* block, redact or off */
	bool record_arguments;
	unsigned step_up_timeout; /* seconds a step_up call waits for a person in a session; 0: the default (60) */
	char *pins;            /* absolute path of the pin file, or NULL for the default */
	char *policy;          /* absolute path of the server's own sandbox policy in an airlock run
	                        * session, or NULL: the built-in default, workspace read-only */
	unsigned policy_line;
	unsigned line;
};

struct policy_mcp {
	struct policy_mcp_server *servers;
	size_t n_servers;
};

void policy_mcp_free(struct policy_mcp *m);

/* The section as YAML for policy_print (reads back to the same settings). */
void policy_mcp_print(const struct policy_mcp *m, FILE *f);

/* The server called name, or NULL. */
const struct policy_mcp_server *policy_mcp_server(const struct policy_mcp *m, const char *name);

const char *policy_mcp_decision_name(enum policy_mcp_decision d);

/* The rule that decides a tool's or prompt's name among rules[0..n):
 * the first whose name glob (match/glob.h) takes it, or NULL when none
 * does (the name is denied), its position in *index (may be NULL). The
 * gateway enforces with it and the prover asks it of each witness. A
 * glob that cannot be read (refused when a policy loads: one can only
 * come from a policy built some other way) takes every name when it
 * denies or steps up and none when it allows: it never opens what it was
 * written to close. */
const struct policy_mcp_rule *policy_mcp_rule_first(const struct policy_mcp_rule *rules, size_t n, const char *name,
						    size_t *index);

/* Whether some tool rule of srv (may be NULL) asks a person (step_up). */
bool policy_mcp_steps_up(const struct policy_mcp_server *srv);

#endif
