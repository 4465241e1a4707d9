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

/* ---- field tables ----
 *
 * Each map of the policy (a section, an endpoint, a binding) is read by
 * parse_map against a table of its keys, in the manner of systemd's gperf
 * configuration tables: the key, the function that reads its value, where
 * the value goes (an offset from the base the section is read into) and
 * where the line it was written on is kept (an offset to one of struct
 * policy's origin fields). A key the table does not hold is refused, so a
 * misspelt key cannot be silently ignored; tests/unit/test_parse_table.c
 * holds every table to docs/policy.schema.json.
 *
 * WARNING: the keys are read in table order and the first problem is the
 * one reported: reorder a table only knowing that a policy with two
 * mistakes then names the other one first, and that later keys may read
 * what earlier ones stored (audit.dir reads audit.enabled). */

struct parse_key;

/* Where parse_map is: the map, the value of the key (NULL when absent,
 * which only a PARSE_ABSENT key sees), the map's field name and the key's
 * ("network.endpoints[2]", "network.endpoints[2].host"). */
struct parse_at {
	const struct policy_ynode *map;
	const struct policy_ynode *v;
	const char *prefix;
	const char *field;
	const struct parse_key *k;
	void *base; /* what the map is read into; data is base + k->offset */
};

typedef int parse_fn(struct loader *l, const struct parse_at *at, void *data);

enum {
	/* parse is called for an absent key too (v == NULL): for a default
	 * that depends on the map (an id named after its entry) or for a
	 * required key, whose parse says what is missing. */
	PARSE_ABSENT = 1u << 0,
};

#define PARSE_NO_ORIGIN SIZE_MAX

struct parse_key {
	const char *key;
	/* NULL: the key is accepted here and read by the section's own code
	 * after the table, because its meaning depends on other keys
	 * (network.endpoints[].access against rules). */
	parse_fn *parse;
	size_t offset;
	size_t origin; /* offsetof(struct policy, origin.NAME) or PARSE_NO_ORIGIN */
	const void *arg; /* for parse: enum names, a nested table, what a label is */
	unsigned flags;
};

struct parse_table {
	const char *schema; /* its path in schema.c ("" for the top level), for "valid keys here are" */
	const struct parse_key *keys;
	size_t n_keys;
};

#define PARSE_TABLE(schema_path, keys_array) { (schema_path), (keys_array), ARRAY_SIZE(keys_array) }

/* The names an enum key takes, in the order of its C enum. */
struct parse_enum {
	const char *const *names;
	size_t count;
};

#define PARSE_ENUM(array) { (array), ARRAY_SIZE(array) }

/* Reads map (whose field name is prefix, "" for the top level) into base
 * by table t: a map is wanted (prefix non-empty), every key must be in t,
 * then each key of t present in map (or PARSE_ABSENT) is parsed. */
int parse_map(struct loader *l, const struct policy_ynode *map, const char *prefix, const struct parse_table *t,
	      void *base);

/* Value readers for tables; data points at the type named. */
parse_fn parse_bool_at;     /* bool */
parse_fn parse_enum_at;     /* int (a C enum), arg: struct parse_enum */
parse_fn parse_size_at;     /* uint64_t, 0 = unlimited */
parse_fn parse_count_at;    /* uint64_t, 0 = unlimited */
parse_fn parse_duration_at; /* uint64_t seconds, 0 = unlimited */
parse_fn parse_id_at;       /* int64_t, -1 = auto */
parse_fn parse_label_at;    /* char *, arg: what the label is, for messages */
parse_fn parse_wpath_at;    /* char *: a path that may use $WORKSPACE */
parse_fn parse_paths_at;    /* struct policy_paths of paths */
parse_fn parse_map_at;      /* a nested map read into base, arg: struct parse_table */

/* All the tables, for tests/unit/test_parse_table.c. */
extern const struct parse_table *const parse_tables[];
extern const size_t parse_n_tables;
extern const struct parse_table parse_top_table, parse_sandbox_table, parse_limits_table, parse_filesystem_table,
	parse_process_table, parse_env_table, parse_identity_table, parse_audit_table, parse_network_table,
	parse_endpoint_table, parse_rule_table, parse_leak_scan_table, parse_credential_table, parse_binding_table,
	parse_basic_table, parse_git_table;

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
/* A size that cannot be unlimited (why_bounded says why, and what to
 * write): *out is UINT64_MAX when too large to count, for the caller's
 * bounds to refuse. */
int parse_load_bounded_size(struct loader *l, const struct policy_ynode *n, const char *field, const char *valid,
			    const char *why_bounded, const char *examples, uint64_t *out);
/* Wants list n. An empty one is refused with if_empty as the message,
 * or (if_empty NULL) left alone. Else *out becomes a zeroed array of
 * n->n + 1 entries of size bytes, the caller's: the last one stays zero,
 * ending an array of strings. */
/* Reads each entry of list n into (*arr)[i] (entries of size bytes)
 * with fn, its field "LIST[i]" and its index i, after parse_list_alloc; *count is the
 * number begun, so that a failure frees every entry touched. */
typedef int parse_item_fn(struct loader *l, const struct policy_ynode *item, const char *field, size_t i,
			  void *elem);
int parse_list_items(struct loader *l, const struct policy_ynode *n, const char *list, const char *if_empty,
		     size_t size, void **arr, size_t *count, parse_item_fn *fn);
int parse_list_alloc(struct loader *l, const struct policy_ynode *n, const char *list, const char *if_empty,
		     size_t size, void **out);

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

bool parse_valid_env_name(const char *s, size_t len);
int parse_bad_env_name(struct loader *l, const struct policy_ynode *n, const char *field);
bool parse_loc_before(const struct policy_loc *a, const struct policy_loc *b);
int parse_check_filesystem(struct loader *l);
int parse_check_env(struct loader *l, bool pass_given);

/* ---- parse_network.c ---- */

parse_fn parse_network_at;
parse_fn parse_net_id_at; /* char *, PARSE_ABSENT: the entry's field name when absent */
int parse_load_host(struct loader *l, const struct policy_ynode *n, const char *field, char **out);
int parse_load_net_id(struct loader *l, const struct policy_ynode *n, const char *field, char **out);
bool parse_has_port(const struct policy_endpoint *ep, uint16_t port);
/* *methods: a NULL-terminated array the caller owns. */
int parse_load_methods(struct loader *l, const struct policy_ynode *n, const char *list, char ***methods,
		       size_t *count);
int parse_load_glob(struct loader *l, const struct policy_ynode *n, const char *field, bool is_path, char **out);

/* ---- parse_credentials.c ---- */

parse_fn parse_credentials_at;
int parse_check_mcp_endpoints(struct loader *l);

#endif
