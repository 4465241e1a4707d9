/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_POLICY_H
#define AIRLOCK_POLICY_POLICY_H

/*
 * The effective policy: what the YAML says after defaults are applied and
 * every path is made absolute. The sandbox reads only this structure; it
 * never sees YAML.
 *
 * Ownership: a struct policy owns every string and array reachable from it;
 * policy_free() releases all of it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

#define POLICY_VERSION 1

/* Where a value came from, for diagnostics and for `policy check` output.
 * file is borrowed from struct policy.file (or the literal "<default>"). */
struct policy_loc {
	const char *file;
	unsigned line; /* 1-based; 0 = built-in default */
	unsigned col;  /* 1-based */
};

enum policy_boundary {
	POLICY_BOUNDARY_PROCESS = 0,
	POLICY_BOUNDARY_GVISOR,
	POLICY_BOUNDARY_MICROVM,
};

enum policy_mode {
	POLICY_MODE_ENFORCE = 0,
	POLICY_MODE_LEARN,   /* enforce, and report what was denied */
	POLICY_MODE_OBSERVE, /* no enforcement (refused by this build's run) */
};

struct policy_path {
	char *path; /* absolute, normalised (no "." / ".." / "//", no trailing "/") */
	struct policy_loc loc;
};

struct policy_paths {
	struct policy_path *v;
	size_t n;
};

struct policy_env_var {
	char *name;
	char *value;
	struct policy_loc loc;
};

/* 0 in any field means "no limit". */
struct policy_limits {
	uint64_t memory_bytes;
	uint64_t pids;
	uint64_t open_files;
	uint64_t cpu_seconds;
	uint64_t wall_seconds;
};

struct policy {
	char *file;   /* path of the policy file, or "<default>" */
	char *dir;    /* directory relative paths were resolved against */
	int version;
	char *name;

	struct {
		enum policy_boundary boundary;
		char *workspace;            /* absolute */
		struct policy_loc workspace_loc;
		enum policy_mode mode;
		int64_t host_uid;           /* -1 = auto (see README) */
		int64_t host_gid;           /* -1 = auto */
		struct policy_limits limits;
	} sandbox;

	struct {
		bool baseline;              /* bind the system baseline read-only */
		struct policy_paths read;   /* extra read-only paths */
		struct policy_paths write;  /* extra read-write paths (workspace is implicit) */
		struct policy_paths deny;   /* hidden even when under read/write paths */
	} filesystem;

	struct {
		bool exec_set;              /* false: exec from baseline + workspace */
		struct policy_paths exec;   /* Landlock EXECUTE granted beneath these */
		char **env_pass;            /* NULL-terminated names copied from the caller */
		size_t n_env_pass;
		struct policy_env_var *env_set;
		size_t n_env_set;
		struct policy_loc *env_pass_loc; /* n_env_pass entries, parallel to env_pass */
	} process;

	/* Where each single-valued setting came from (line 0: built-in default). */
	struct {
		struct policy_loc version, name, boundary, mode, host_uid, host_gid;
		struct policy_loc memory, pids, open_files, cpu, wall;
		struct policy_loc baseline, exec, env_pass, env_set;
	} origin;
};

/* Context for resolving "~" and relative paths. Borrowed strings. */
struct policy_ctx {
	const char *home; /* invoking user's home directory */
	const char *cwd;  /* current directory: the default workspace */
};

/* Parse a policy file. On success *out is a new policy owned by the caller.
 * On failure err holds "FILE:LINE:COL: FIELD: what is wrong and what would
 * be valid" and the return value is negative. A relative path is opened
 * from ctx->cwd, and relative paths inside the file resolve against the
 * file's directory. docs/policy.md describes the schema and every rule. */
int policy_load_file(const char *path, const struct policy_ctx *ctx, struct policy **out,
		     struct error *err) WUR;

/* Same as policy_load_file for a buffer; `name` is used in diagnostics and
 * relative paths resolve against `dir` (itself relative to ctx->cwd; NULL
 * means ctx->cwd). buf and name are borrowed. */
int policy_load_buffer(const char *name, const char *dir, const char *buf, size_t len,
		       const struct policy_ctx *ctx, struct policy **out, struct error *err) WUR;

/* The built-in default policy: workspace = ctx->cwd read-write, system
 * baseline read-only, home hidden, no network, environment cleared to a
 * safe list. */
int policy_default(const struct policy_ctx *ctx, struct policy **out, struct error *err) WUR;

/* Print the effective policy as YAML (with "# file:line" provenance
 * comments) to f. The output is a valid policy that parses back to the same
 * settings. */
void policy_print(const struct policy *p, FILE *f);

void policy_free(struct policy *p);

static inline void policy_freep(struct policy **p)
{
	policy_free(*p);
}
#define _cleanup_policy_ __attribute__((cleanup(policy_freep)))

const char *policy_mode_name(enum policy_mode m);
const char *policy_boundary_name(enum policy_boundary b);

#endif
