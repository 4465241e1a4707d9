/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the policy loader (parse*.c): the loader's state, the shared
 * shape and value readers, and the field tables each section is read by.
 *
 * Every reader returns 0 or a negative errno and, on failure, fills
 * l->err with "FILE:LINE:COL: FIELD: what is wrong; what would be valid"
 * (policy_fail in diag.c); the first problem found is the one reported.
 */
#ifndef AIRLOCK_POLICY_PARSE_H
#define AIRLOCK_POLICY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/internal.h"
#include "util/cleanup.h"

struct loader {
	struct policy *p;
	const struct policy_ctx *ctx;
	struct error *err;
	bool pass_given; /* the file gives process.env.pass */
};

#define FAIL(l, n, field, ...) \
	policy_fail((l)->err, (l)->p->file, (n)->line, (n)->col, (field), __VA_ARGS__)

/* ---- parse.c: shapes and values ---- */

int parse_oom(struct loader *l);
struct policy_loc parse_loc_of(const struct loader *l, const struct policy_ynode *n);
bool parse_is_null(const struct policy_ynode *n);
const char *parse_describe(const struct policy_ynode *n);
void parse_quote(const struct policy_ynode *n, char *buf, size_t size);
void parse_field_index(char *buf, size_t size, const char *list, size_t i);
void parse_field_join(char *buf, size_t size, const char *prefix, const char *key);
int parse_want_map(struct loader *l, const struct policy_ynode *n, const char *field);
int parse_want_list(struct loader *l, const struct policy_ynode *n, const char *field);
int parse_want_scalar(struct loader *l, const struct policy_ynode *n, const char *field, const char *valid);
int parse_check_keys(struct loader *l, const struct policy_ynode *map, const char *prefix, const char *schema);
/* The value of key in map, or NULL. */
const struct policy_ynode *parse_map_get(const struct policy_ynode *map, const char *key);
/* The key node of key in map, or NULL. */
const struct policy_ynode *parse_map_key(const struct policy_ynode *map, const char *key);
/* The key node of key in map, or fallback (its value) for positions. */
const struct policy_ynode *parse_key_or(const struct policy_ynode *map, const char *key,
					const struct policy_ynode *fallback);
int parse_load_enum(struct loader *l, const struct policy_ynode *n, const char *field, const char *const *names,
		    size_t count, int *out);
int parse_load_bool(struct loader *l, const struct policy_ynode *n, const char *field, bool *out);
/* *out (freed first) becomes a copy of the scalar. */
int parse_load_string(struct loader *l, const struct policy_ynode *n, const char *field, const char *valid,
		      bool allow_empty, char **out);
int parse_load_id(struct loader *l, const struct policy_ynode *n, const char *field, int64_t *out);
int parse_load_count(struct loader *l, const struct policy_ynode *n, const char *field, uint64_t *out);
int parse_load_size(struct loader *l, const struct policy_ynode *n, const char *field, uint64_t *out);
int parse_load_duration(struct loader *l, const struct policy_ynode *n, const char *field, uint64_t *out);

/* ---- parse.c: paths ---- */

/* *out: a newly allocated absolute path the caller frees. */
int parse_resolve_path(struct loader *l, const struct policy_ynode *n, const char *s, const char *field,
		       bool workspace_var, char **out);
int parse_load_path(struct loader *l, const struct policy_ynode *n, const char *field, bool workspace_var,
		    char **out);
int parse_load_str_list(struct loader *l, const struct policy_ynode *n, const char *list, struct policy_paths *out,
			int (*item)(struct loader *l, const struct policy_ynode *n, const char *field, char **out));
int parse_load_path_list(struct loader *l, const struct policy_ynode *n, const char *list, struct policy_paths *out);
int parse_load_socket_path(struct loader *l, const struct policy_ynode *n, const char *field, char **out);
int parse_load_protect_list(struct loader *l, const struct policy_ynode *n, const char *list,
			    struct policy_paths *out);

/* ---- parse_sandbox.c ---- */

int parse_load_sandbox(struct loader *l, const struct policy_ynode *n);
int parse_load_filesystem(struct loader *l, const struct policy_ynode *n);
int parse_load_process(struct loader *l, const struct policy_ynode *n, bool *pass_given);
bool parse_valid_env_name(const char *s, size_t len);
int parse_bad_env_name(struct loader *l, const struct policy_ynode *n, const char *field);
bool parse_loc_before(const struct policy_loc *a, const struct policy_loc *b);
int parse_check_filesystem(struct loader *l);
int parse_check_env(struct loader *l, bool pass_given);

/* ---- parse_network.c ---- */

int parse_load_network(struct loader *l, const struct policy_ynode *key, const struct policy_ynode *n);
int parse_load_host(struct loader *l, const struct policy_ynode *n, const char *field, char **out);
int parse_load_net_id(struct loader *l, const struct policy_ynode *n, const char *field, char **out);
bool parse_has_port(const struct policy_endpoint *ep, uint16_t port);
/* *methods: a NULL-terminated array the caller owns. */
int parse_load_methods(struct loader *l, const struct policy_ynode *n, const char *list, char ***methods,
		       size_t *count);
int parse_load_glob(struct loader *l, const struct policy_ynode *n, const char *field, bool is_path, char **out);

/* ---- parse_credentials.c ---- */

int parse_load_credentials(struct loader *l, const struct policy_ynode *key, const struct policy_ynode *n);
int parse_check_mcp_endpoints(struct loader *l);

#endif
