/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_IMPORT_BUILD_H
#define AIRLOCK_POLICY_IMPORT_BUILD_H

/* The importers' shared half: an airlock policy being assembled from a
 * source file, with the source of each entry, and its YAML form. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/import/doc.h"
#include "policy/import/import.h"

#define IMP_PORTS_MAX 64

struct imp_entry {
	char *val;   /* path, glob or host */
	char *src;   /* "field (FILE:LINE:COL)" */
	uint16_t ports[IMP_PORTS_MAX];
	size_t n_ports;
	const char *access; /* endpoints: NULL, "read-only" (with tls: intercept) */
	const char *methods; /* endpoints: one rule allowing these methods, "[GET, ...]"
	                      * (with tls: intercept); NULL: none */
};

struct imp_list {
	struct imp_entry *v;
	size_t n;
};

struct imp_build {
	const char *file;
	const char *format;
	bool narrow;
	struct error *err;

	char *workspace, *workspace_src;
	int baseline;          /* -1: not set */
	char *baseline_src;
	int protect_defaults;  /* -1: not set */
	char *protect_defaults_src;
	uint64_t wall;         /* seconds; 0 = not set */
	char *wall_src;
	struct imp_list read, write, deny, protect, exec, endpoints;
	bool network;
	char *network_src;
	struct imp_list notes;    /* "narrowed: ..." */
	struct imp_list skipped;  /* fields that are not policy */
};

void imp_build_free(struct imp_build *b);

/* "FIELD (FILE:LINE:COL)", malloc'd; NULL on allocation failure. */
char *imp_src(const struct imp_build *b, const struct imp_node *n, const char *field);

/* Fill err with "FILE:LINE:COL: FIELD: message" and return -EINVAL. */
int imp_fail(struct imp_build *b, const struct imp_node *n, const char *field, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

/* A field whose airlock form grants less than the source: refused without
 * --narrow, listed at the top of the output with it. */
int imp_narrow(struct imp_build *b, const struct imp_node *n, const char *field, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

/* A field that says nothing about what the agent may do (how to run it,
 * how to report): listed at the top of the output as not imported. */
int imp_skip(struct imp_build *b, const struct imp_node *n, const char *field, const char *why);

int imp_add(struct imp_build *b, struct imp_list *l, const char *val, const struct imp_node *n, const char *field);

/* Refuse every key of map that is not in `known` (NULL-terminated). */
int imp_known_keys(struct imp_build *b, const struct imp_node *map, const char *field, const char *const *known);

/* Type checks naming the field. */
int imp_want(struct imp_build *b, const struct imp_node *n, const char *field, enum imp_kind kind);

/* A host name for network.endpoints: what airlock's parser accepts
 * (policy_host_normalize), so the refusal names the source line. */
int imp_host(struct imp_build *b, const struct imp_node *n, const char *field, char *out);

/* Add host to the endpoints on ports 80 and 443, unless an earlier entry
 * covers it (then it is listed as not imported, being redundant). */
int imp_add_host(struct imp_build *b, const char *host, const struct imp_node *n, const char *field);

/* Each element of the list n (field) in order, once it is known to be an
 * absolute path without glob characters (airlock's paths are literal):
 * fn(b, e, "field[i]", i, ctx). A relative one is refused as "\"PATH\" is
 * not " + not_absolute. The first failure ends the walk. */
typedef int (*imp_path_fn)(struct imp_build *b, const struct imp_node *e, const char *f, size_t i, void *ctx);
int imp_paths(struct imp_build *b, const struct imp_node *n, const char *field, const char *not_absolute,
	      imp_path_fn fn, void *ctx);

/* The filesystem section at root's key, read by fn: required, since
 * airlock always gives the agent a workspace and a policy that grants no
 * path cannot be expressed. The source runtime (b->format, named in the
 * output) has no protected paths inside writable ones: with --narrow airlock's stay on
 * and the narrowing is listed, else they are turned off. */
int imp_filesystem(struct imp_build *b, const struct imp_node *root, const char *key,
		   int (*fn)(struct imp_build *b, const struct imp_node *fs));

/* The policy as YAML; *out malloc'd. */
int imp_emit(struct imp_build *b, char **out);

/* Formats. */
int imp_srt(struct imp_build *b, const struct imp_node *root);
int imp_mxc(struct imp_build *b, const struct imp_node *root);
int imp_codex(struct imp_build *b, const struct imp_node *root);
int imp_openshell(struct imp_build *b, const struct imp_node *root);

/* Append an entry without the duplicate check; NULL on failure (err set). */
struct imp_entry *imp_push(struct imp_build *b, struct imp_list *l, const char *val, const struct imp_node *n,
			   const char *field);

#endif
