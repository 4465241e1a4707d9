/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy YAML (schema version 1) -> struct policy.
 *
 * The file is untrusted input: it may come from a repository the agent
 * works on. Every key must be known, every value must have the expected
 * type, and contradictions are refused rather than resolved by a rule the
 * author may not expect. The first problem found is reported as
 * "FILE:LINE:COL: FIELD: what is wrong; what would be valid".
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/mcp.h"
#include "policy/parse.h"

#define UID_MAX_VALID UINT64_C(4294967294) /* (uid_t)-1 means "no change" to the kernel */
#define COUNT_MAX UINT64_C(2147483647)

int parse_oom(struct loader *l)
{
	return error_set(l->err, ENOMEM, "%s: out of memory", l->p->file);
}

struct policy_loc parse_loc_of(const struct loader *l, const struct policy_ynode *n)
{
	return (struct policy_loc){ l->p->file, n->line, n->col };
}

/* YAML's spellings of null, for a plain scalar. "~" is not among them for
 * paths, where it names the home directory. */
bool parse_is_null(const struct policy_ynode *n)
{
	if (n->type != POLICY_YNODE_SCALAR || n->quoted)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}

const char *parse_describe(const struct policy_ynode *n)
{
	switch (n->type) {
	case POLICY_YNODE_SEQ:
		return "a list";
	case POLICY_YNODE_MAP:
		return "a map";
	case POLICY_YNODE_SCALAR:
		break;
	}
	return n->len == 0 && !n->quoted ? "empty" : "a single value";
}

void parse_quote(const struct policy_ynode *n, char *buf, size_t size)
{
	policy_quote(n->str, n->len, buf, size);
}

void parse_field_index(char *buf, size_t size, const char *list, size_t i)
{
	snprintf(buf, size, "%s[%zu]", list, i);
}

/* ---- shapes ---- */

int parse_want_map(struct loader *l, const struct policy_ynode *n, const char *field)
{
	if (n->type == POLICY_YNODE_MAP)
		return 0;
	if (n->type == POLICY_YNODE_SCALAR && n->len == 0 && !n->quoted)
		return FAIL(l, n, field, "is empty; give its settings or write {} for none");
	return FAIL(l, n, field, "is %s; expected a map of settings (key: value lines)",
		    parse_describe(n));
}

int parse_want_list(struct loader *l, const struct policy_ynode *n, const char *field)
{
	if (n->type == POLICY_YNODE_SEQ)
		return 0;
	if (n->type == POLICY_YNODE_SCALAR && n->len == 0 && !n->quoted)
		return FAIL(l, n, field, "is empty; give a list or write [] for none");
	return FAIL(l, n, field, "is %s; expected a list (e.g. [a, b] or \"- a\" lines)",
		    parse_describe(n));
}

int parse_want_scalar(struct loader *l, const struct policy_ynode *n, const char *field,
		       const char *valid)
{
	if (n->type != POLICY_YNODE_SCALAR)
		return FAIL(l, n, field, "is %s; expected %s", parse_describe(n), valid);
	if (parse_is_null(n))
		return FAIL(l, n, field, "has no value; expected %s", valid);
	return 0;
}

/* Refuse keys table t does not hold, naming the valid ones as the schema
 * table (schema.c) lists them for t->schema, the map's schema path ("" for
 * the top level, "network.endpoints[]"). prefix is the map's field name
 * for messages. */
static int check_keys(struct loader *l, const struct policy_ynode *map, const char *prefix,
		      const struct parse_table *t)
{
	for (size_t i = 0; i < map->n; i += 2) {
		const struct policy_ynode *k = map->items[i];
		char field[POLICY_FIELD_MAX];
		char valid[512];
		bool known = false;

		for (size_t j = 0; j < t->n_keys && !known; j++)
			known = strcmp(t->keys[j].key, k->str) == 0;
		if (known)
			continue;
		snprintf(field, sizeof(field), "%s", prefix);
		policy_field_append_key(field, sizeof(field), k->str, k->len);
		policy_schema_keys(t->schema, valid, sizeof(valid));
		return FAIL(l, k, field, "unknown key; valid keys here are %s", valid);
	}
	return 0;
}

const struct policy_ynode *parse_map_get(const struct policy_ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i += 2)
		if (strcmp(map->items[i]->str, key) == 0)
			return map->items[i + 1];
	return NULL;
}

int parse_map(struct loader *l, const struct policy_ynode *map, const char *prefix, const struct parse_table *t,
	      void *base)
{
	int r;

	if (prefix[0] && (r = parse_want_map(l, map, prefix)) < 0)
		return r;
	if ((r = check_keys(l, map, prefix, t)) < 0)
		return r;
	for (size_t i = 0; i < t->n_keys; i++) {
		const struct parse_key *k = &t->keys[i];
		const struct policy_ynode *v = parse_map_get(map, k->key);
		char field[POLICY_FIELD_MAX];

		if (!k->parse || (!v && !(k->flags & PARSE_ABSENT)))
			continue;
		if (prefix[0])
			parse_field_join(field, sizeof(field), prefix, k->key);
		else
			snprintf(field, sizeof(field), "%s", k->key);
		const struct parse_at at = { map, v, prefix, field, k, base };
		if ((r = k->parse(l, &at, (char *)base + k->offset)) < 0)
			return r;
		if (v && k->origin != PARSE_NO_ORIGIN) {
			struct policy_loc loc = parse_loc_of(l, v);
			memcpy((char *)l->p + k->origin, &loc, sizeof(loc));
		}
	}
	return 0;
}

int parse_bool_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_bool(l, at->v, at->field, data);
}

int parse_enum_at(struct loader *l, const struct parse_at *at, void *data)
{
	const struct parse_enum *e = at->k->arg;
	return parse_load_enum(l, at->v, at->field, e->names, e->count, data);
}

int parse_size_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_size(l, at->v, at->field, data);
}

int parse_count_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_count(l, at->v, at->field, data);
}

int parse_duration_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_duration(l, at->v, at->field, data);
}

int parse_id_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_id(l, at->v, at->field, data);
}

int parse_wpath_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_path(l, at->v, at->field, true, data);
}

int parse_paths_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_path_list(l, at->v, at->field, data);
}

int parse_map_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_map(l, at->v, at->field, at->k->arg, data);
}

/* ---- scalar values ---- */

int parse_load_enum(struct loader *l, const struct policy_ynode *n, const char *field,
		     const char *const *names, size_t count, int *out)
{
	char valid[128] = "";
	char q[96];
	int r;

	for (size_t i = 0; i < count; i++) {
		size_t pos = strlen(valid);
		snprintf(valid + pos, sizeof(valid) - pos, "%s%s", i ? ", " : "", names[i]);
	}
	if (n->type != POLICY_YNODE_SCALAR || parse_is_null(n)) {
		char what[160];
		snprintf(what, sizeof(what), "one of %s", valid);
		r = parse_want_scalar(l, n, field, what);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < count; i++) {
		if (strcmp(n->str, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	parse_quote(n, q, sizeof(q));
	return FAIL(l, n, field, "%s is not one of %s", q, valid);
}

int parse_load_bool(struct loader *l, const struct policy_ynode *n, const char *field, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };
	char q[96];
	int r;

	r = parse_want_scalar(l, n, field, "true or false");
	if (r < 0)
		return r;
	if (!n->quoted) {
		for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
			if (strcmp(n->str, yes[i]) == 0) {
				*out = true;
				return 0;
			}
			if (strcmp(n->str, no[i]) == 0) {
				*out = false;
				return 0;
			}
		}
	}
	parse_quote(n, q, sizeof(q));
	if (n->quoted)
		return FAIL(l, n, field, "%s is a quoted string; write true or false without quotes",
			    q);
	return FAIL(l, n, field, "%s is not a boolean; write true or false", q);
}

int parse_load_string(struct loader *l, const struct policy_ynode *n, const char *field,
		       const char *valid, bool allow_empty, char **out)
{
	int r;

	if (!(allow_empty && n->type == POLICY_YNODE_SCALAR && n->quoted && n->len == 0)) {
		r = parse_want_scalar(l, n, field, valid);
		if (r < 0)
			return r;
	}
	if (n->len == 0 && !allow_empty)
		return FAIL(l, n, field, "is empty; expected %s", valid);
	free(*out);
	*out = strdup(n->str);
	if (!*out)
		return parse_oom(l);
	return 0;
}

static int parse_version_at(struct loader *l, const struct parse_at *at, void *data)
{
	const struct policy_ynode *top = at->map, *n = at->v;
	uint64_t v = 0;
	char q[96];
	int r;

	if (!n)
		return FAIL(l, top, "version",
			    "required key is missing; start the policy with \"version: 1\"");
	r = parse_want_scalar(l, n, "version", "the integer 1");
	if (r < 0)
		return r;
	parse_quote(n, q, sizeof(q));
	if (n->quoted)
		return FAIL(l, n, "version", "%s is a quoted string; write version: 1 without quotes",
			    q);
	switch (policy_parse_uint(n->str, UINT64_MAX, &v)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_RANGE:
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, "version", "%s is not an integer; this build reads version: 1", q);
	}
	if (v != POLICY_VERSION)
		return FAIL(l, n, "version", "%s is not a supported version; this build reads version: 1",
			    q);
	*(int *)data = POLICY_VERSION;
	return 0;
}

/* A name that ends up in terminals and logs: printable text only. */
static int load_label(struct loader *l, const struct policy_ynode *n, const char *field, const char *valid,
		      char **out)
{
	char q[96];
	int r;

	r = parse_load_string(l, n, field, valid, false, out);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->str[i];
		unsigned char next = i + 1 < n->len ? (unsigned char)n->str[i + 1] : 0;

		/* The name ends up in terminals and logs: no C0 or C1 controls
		 * (U+0080..U+009F, where the 8-bit CSI lives). */
		if (c < 0x20 || c == 0x7f || (c == 0xc2 && next >= 0x80 && next <= 0x9f)) {
			parse_quote(n, q, sizeof(q));
			return FAIL(l, n, field, "%s contains a control character; use printable text", q);
		}
	}
	return 0;
}

int parse_label_at(struct loader *l, const struct parse_at *at, void *data)
{
	return load_label(l, at->v, at->field, at->k->arg, data);
}

/* Loaded after network: the header goes only on the proxy's requests, so
 * without one it would silently do nothing. */
static int parse_identity_header_at(struct loader *l, const struct parse_at *at, void *data)
{
	int r = parse_load_bool(l, at->v, at->field, data);
	if (r == 0 && *(bool *)data && l->p->network.mode == POLICY_NET_NONE)
		r = FAIL(l, at->v, at->field,
			 "the policy has no network section, so no request could carry the identity header; "
			 "add a network section or drop identity.header");
	return r;
}

/* A directory for a log that is turned off says two things at once. */
static int parse_audit_dir_at(struct loader *l, const struct parse_at *at, void *data)
{
	if (!l->p->audit.enabled)
		return FAIL(l, at->v, at->field,
			    "a directory for the decision log, which audit.enabled: false turns off; remove "
			    "one of the two");
	return parse_load_path(l, at->v, at->field, false, data);
}

/* The log is bounded like the memory the agent may use: an agent that
 * floods it with junk requests must not fill the host's disk. Reaching it
 * ends the run; it cannot be unlimited. */
static int parse_audit_max_size_at(struct loader *l, const struct parse_at *at, void *data)
{
	uint64_t size = 0;
	char q[96];
	int r = parse_load_bounded_size(l, at->v, at->field, "a size (e.g. 1GiB)",
					"reaching it ends the run rather than letting it go on unlogged; give a size "
					"from 1MiB to 1TiB (e.g. 1GiB)",
					"256MiB, 1GiB", &size);

	if (r < 0)
		return r;
	parse_quote(at->v, q, sizeof(q));
	if (size < POLICY_AUDIT_MAX_SIZE_MIN || size > POLICY_AUDIT_MAX_SIZE_MAX)
		return FAIL(l, at->v, at->field, "%s is outside 1MiB..1TiB", q);
	*(uint64_t *)data = size;
	return 0;
}

#define AT(field) offsetof(struct policy, field)
#define ORIGIN(name) offsetof(struct policy, origin.name)

/* identity: {agent: NAME, header: BOOL} */
static const struct parse_key identity_keys[] = {
	{ "agent", parse_label_at, AT(identity.agent), ORIGIN(agent), "the agent's name in decision records", 0 },
	{ "header", parse_identity_header_at, AT(identity.header), ORIGIN(identity_header), NULL, 0 },
};
const struct parse_table parse_identity_table = PARSE_TABLE("identity", identity_keys);

/* audit: {enabled: BOOL, dir: PATH, max_size: SIZE} */
static const struct parse_key audit_keys[] = {
	{ "enabled", parse_bool_at, AT(audit.enabled), ORIGIN(audit_enabled), NULL, 0 },
	{ "dir", parse_audit_dir_at, AT(audit.dir), ORIGIN(audit_dir), NULL, 0 },
	{ "max_size", parse_audit_max_size_at, AT(audit.max_size), ORIGIN(audit_max_size), NULL, 0 },
};
const struct parse_table parse_audit_table = PARSE_TABLE("audit", audit_keys);

/* How an integer setting with a keyword ("auto", "unlimited") is written,
 * and what each mistake is told. */
struct int_form {
	const char *valid;    /* what to write: "a positive integer or unlimited" */
	const char *keyword;  /* the word that stands for no number */
	const char *unquoted; /* after "is a quoted string; write " */
	uint64_t max;
	const char *syntax; /* after the quoted value */
	const char *range;  /* after the quoted value */
	const char *zero;   /* the whole message for 0 */
};

/* Returns 1 for the keyword, else 0 with *v from 1 to f->max. */
static int load_int_or(struct loader *l, const struct policy_ynode *n, const char *field, const struct int_form *f,
		       uint64_t *v)
{
	char q[96];
	int r = parse_want_scalar(l, n, field, f->valid);

	if (r < 0)
		return r;
	if (strcmp(n->str, f->keyword) == 0)
		return 1;
	parse_quote(n, q, sizeof(q));
	if (n->quoted)
		return FAIL(l, n, field, "%s is a quoted string; write %s", q, f->unquoted);
	switch (policy_parse_uint(n->str, f->max, v)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, field, "%s %s", q, f->syntax);
	case POLICY_NUM_RANGE:
		return FAIL(l, n, field, "%s %s", q, f->range);
	}
	if (*v == 0)
		return FAIL(l, n, field, "%s", f->zero);
	return 0;
}

/* host_uid / host_gid: "auto" (stored as -1) or 1..4294967294. */
static const struct int_form id_form = {
	.valid = "auto or an integer from 1 to 4294967294",
	.keyword = "auto",
	.unquoted = "auto or an integer from 1 to 4294967294 without quotes",
	.max = UID_MAX_VALID,
	.syntax = "is not valid; use auto or an integer from 1 to 4294967294",
	.range = "is not valid; use auto or an integer from 1 to 4294967294",
	.zero = "0 is root on the host, and the agent never runs as host root; use auto or an integer from 1 to "
		"4294967294",
};

/* A positive count or "unlimited" (stored as 0). */
static const struct int_form count_form = {
	.valid = "a positive integer or unlimited",
	.keyword = "unlimited",
	.unquoted = "a positive integer without quotes, or unlimited",
	.max = COUNT_MAX,
	.syntax = "is not a positive integer (e.g. 512, unlimited)",
	.range = "is too large; the largest count is 2147483647",
	.zero = "0 is not a limit; use a positive integer or unlimited",
};

int parse_load_id(struct loader *l, const struct policy_ynode *n, const char *field, int64_t *out)
{
	uint64_t v = 0;
	int r = load_int_or(l, n, field, &id_form, &v);

	if (r >= 0)
		*out = r == 1 ? -1 : (int64_t)v;
	return r < 0 ? r : 0;
}

int parse_load_count(struct loader *l, const struct policy_ynode *n, const char *field, uint64_t *out)
{
	uint64_t v = 0;
	int r = load_int_or(l, n, field, &count_form, &v);

	if (r >= 0)
		*out = r == 1 ? 0 : v;
	return r < 0 ? r : 0;
}

/* A size or a duration limit: how it is written and read. */
struct limit_unit {
	const char *valid; /* "a size (e.g. 512MiB, 2GiB, unlimited)" */
	const char *noun;  /* "size" */
	enum policy_num_status (*parse)(const char *s, uint64_t *out);
};

/* A positive limit or "unlimited" (stored as 0). */
static int load_limit(struct loader *l, const struct policy_ynode *n, const char *field,
		      const struct limit_unit *u, uint64_t *out)
{
	uint64_t v = 0;
	char q[96];
	int r;

	r = parse_want_scalar(l, n, field, u->valid);
	if (r < 0)
		return r;
	if (strcmp(n->str, "unlimited") == 0) {
		*out = 0;
		return 0;
	}
	parse_quote(n, q, sizeof(q));
	switch (u->parse(n->str, &v)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, field, "%s is not %s", q, u->valid);
	case POLICY_NUM_RANGE:
		return FAIL(l, n, field, "%s is too large; use unlimited for no limit", q);
	}
	if (v == 0)
		return FAIL(l, n, field, "%s is not a limit; use a positive %s or unlimited", q, u->noun);
	*out = v;
	return 0;
}

static const struct limit_unit size_unit = { "a size (e.g. 512MiB, 2GiB, unlimited)", "size", policy_parse_size };
static const struct limit_unit duration_unit = { "a duration (e.g. 90s, 10m, 2h, unlimited)", "duration",
						 policy_parse_duration };

int parse_load_size(struct loader *l, const struct policy_ynode *n, const char *field, uint64_t *out)
{
	return load_limit(l, n, field, &size_unit, out);
}

int parse_load_duration(struct loader *l, const struct policy_ynode *n, const char *field, uint64_t *out)
{
	return load_limit(l, n, field, &duration_unit, out);
}

int parse_load_bounded_size(struct loader *l, const struct policy_ynode *n, const char *field, const char *valid,
			    const char *why_bounded, const char *examples, uint64_t *out)
{
	char q[96];
	int r = parse_want_scalar(l, n, field, valid);

	if (r < 0)
		return r;
	parse_quote(n, q, sizeof(q));
	if (strcmp(n->str, "unlimited") == 0)
		return FAIL(l, n, field, "cannot be unlimited: %s", why_bounded);
	switch (policy_parse_size(n->str, out)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, field, "%s is not a size (e.g. %s)", q, examples);
	case POLICY_NUM_RANGE:
		*out = UINT64_MAX;
		break;
	}
	return 0;
}

int parse_list_alloc(struct loader *l, const struct policy_ynode *n, const char *list, const char *if_empty,
		     size_t size, void **out)
{
	int r = parse_want_list(l, n, list);

	if (r < 0)
		return r;
	if (n->n == 0)
		return if_empty ? FAIL(l, n, list, "%s", if_empty) : 0;
	*out = calloc(n->n + 1, size);
	return *out ? 0 : parse_oom(l);
}

int parse_list_items(struct loader *l, const struct policy_ynode *n, const char *list, const char *if_empty,
		     size_t size, void **arr, size_t *count, parse_item_fn *fn)
{
	int r = parse_list_alloc(l, n, list, if_empty, size, arr);

	for (size_t i = 0; r >= 0 && i < n->n; i++) {
		char prefix[POLICY_FIELD_MAX];

		parse_field_index(prefix, sizeof(prefix), list, i);
		/* Counted before it is read: a half-read entry is freed too. */
		*count = i + 1;
		r = fn(l, n->items[i], prefix, i, (char *)*arr + i * size);
	}
	return r;
}

/* ---- paths ---- */

/* Resolve s, the path part of scalar n (all of it, or what follows a
 * prefix such as "file:"); messages quote all of n. */
int parse_resolve_path(struct loader *l, const struct policy_ynode *n, const char *s,
			const char *field, bool workspace_var, char **out)
{
	const struct policy_path_base base = {
		.home = l->ctx->home,
		.workspace = workspace_var ? l->p->sandbox.workspace : NULL,
		.dir = l->p->dir,
	};
	char q[96];

	parse_quote(n, q, sizeof(q));
	switch (policy_path_resolve(s, &base, out)) {
	case POLICY_PATH_OK:
		return 0;
	case POLICY_PATH_EMPTY:
		return FAIL(l, n, field, "is empty; expected a path");
	case POLICY_PATH_TOO_LONG:
		return FAIL(l, n, field, "%s is longer than %d bytes once expanded; use a shorter path",
			    q, PATH_MAX - 1);
	case POLICY_PATH_NO_HOME:
		return FAIL(l, n, field,
			    "%s uses ~ but the home directory is not known; use an absolute path",
			    q);
	case POLICY_PATH_TILDE_USER:
		return FAIL(l, n, field,
			    "%s names another user's home; only ~ and ~/... are expanded", q);
	case POLICY_PATH_UNKNOWN_VAR:
		return FAIL(l, n, field,
			    "%s starts with an unknown variable; only $WORKSPACE is expanded (use ~ "
			    "for the home directory)",
			    q);
	case POLICY_PATH_NO_WORKSPACE:
		return FAIL(l, n, field,
			    "%s refers to the workspace itself; give a path (absolute, ~/..., or "
			    "relative to the policy file)",
			    q);
	case POLICY_PATH_NOMEM:
		break;
	}
	return parse_oom(l);
}

int parse_load_path(struct loader *l, const struct policy_ynode *n, const char *field,
		     bool workspace_var, char **out)
{
	if (n->type != POLICY_YNODE_SCALAR)
		return FAIL(l, n, field, "is %s; expected a path", parse_describe(n));
	/* "~" alone is the home directory here, not YAML's null. */
	if (!n->quoted && n->len > 0 && parse_is_null(n) && strcmp(n->str, "~") != 0)
		return FAIL(l, n, field, "has no value; expected a path");
	return parse_resolve_path(l, n, n->str, field, workspace_var, out);
}

static void paths_clear(struct policy_paths *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->v[i].path);
	free(ps->v);
	ps->v = NULL;
	ps->n = 0;
}

/* A list of strings, each read by item (which names its field). */
int parse_load_str_list(struct loader *l, const struct policy_ynode *n, const char *list, struct policy_paths *out,
			 int (*item)(struct loader *l, const struct policy_ynode *n, const char *field, char **out))
{
	int r = parse_want_list(l, n, list);

	if (r < 0)
		return r;
	paths_clear(out);
	if (n->n == 0)
		return 0;
	out->v = calloc(n->n, sizeof(*out->v));
	if (!out->v)
		return parse_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		char field[POLICY_FIELD_MAX];

		parse_field_index(field, sizeof(field), list, i);
		r = item(l, n->items[i], field, &out->v[i].path);
		if (r < 0)
			return r;
		out->v[i].loc = parse_loc_of(l, n->items[i]);
		out->n = i + 1;
	}
	return 0;
}

static int load_path_item(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	return parse_load_path(l, n, field, true, out);
}

int parse_load_path_list(struct loader *l, const struct policy_ynode *n, const char *list,
			  struct policy_paths *out)
{
	return parse_load_str_list(l, n, list, out, load_path_item);
}

/* A named socket's path: a path as elsewhere, or one that starts with
 * $NAME or ${NAME}, taken from airlock's own environment
 * ($SSH_AUTH_SOCK: the agent socket of the shell that starts the run).
 * An unset or empty variable is an error here: the author named a socket
 * the run would silently go without. Whether the path is a socket is
 * checked when the sandbox is planned (plan.c), on the host as it is
 * then. */
int parse_load_socket_path(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	int r = parse_want_scalar(l, n, field, "a socket's path, or $NAME/... for one from the environment");

	if (r < 0)
		return r;
	const char *s = n->str;
	if (s[0] != '$' || strncmp(s, "$WORKSPACE", 10) == 0)
		return parse_load_path(l, n, field, true, out);
	if (l->ctx->no_env)
		return (*out = strdup(s)) ? 0 : parse_oom(l);
	bool brace = s[1] == '{';
	const char *name = s + 1 + brace, *e = name;
	while (*e == '_' || (*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') || (e > name && *e >= '0' && *e <= '9'))
		e++;
	char q[96];
	parse_quote(n, q, sizeof(q));
	if (e == name || (brace && *e != '}') || (!brace && *e && *e != '/'))
		return FAIL(l, n, field, "%s: expected $NAME or ${NAME} at the start, then nothing or /...", q);
	char var[128];
	if ((size_t)(e - name) >= sizeof(var))
		return FAIL(l, n, field, "%s: the variable's name is too long", q);
	memcpy(var, name, (size_t)(e - name));
	var[e - name] = '\0';
	const char *val = getenv(var);
	if (!val || !*val)
		return FAIL(l, n, field, "%s: $%s is not set in airlock's environment; set it, or remove the entry", q,
			    var);
	_cleanup_free_ char *full = NULL;
	if (asprintf(&full, "%s%s", val, e + brace) < 0)
		return parse_oom(l);
	if (full[0] != '/')
		return FAIL(l, n, field, "%s: $%s is \"%.64s\", not an absolute path", q, var, val);
	return parse_resolve_path(l, n, full, field, false, out);
}

/* A protected-path glob: relative to the workspace, matched by the
 * hand-off table's matcher (src/handoff/rules.c), so bounded by its
 * length limit. ".." and absolute globs are refused: a protected path
 * outside the workspace is not a workspace's protected path, and a
 * ".." would never match the walk's names anyway, so the author would
 * believe in a protection that does not exist. */
#define PROTECT_GLOB_MAX 255

static int load_protect_glob(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	const char *valid = "a glob relative to the workspace (e.g. .git/hooks/** or **/.envrc)";
	char q[96];
	int r = parse_want_scalar(l, n, field, valid);

	if (r < 0)
		return r;
	if (n->len == 0)
		return FAIL(l, n, field, "is empty; expected %s", valid);
	parse_quote(n, q, sizeof(q));
	if (n->len > PROTECT_GLOB_MAX)
		return FAIL(l, n, field, "%s is longer than %d bytes", q, PROTECT_GLOB_MAX);
	if (n->str[0] == '/')
		return FAIL(l, n, field, "%s starts with /; write %s", q, valid);
	for (size_t i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->str[i];
		if (c < 0x20 || c == 0x7f || c == '\\' || c == '?' || c == '[')
			return FAIL(l, n, field,
				    "%s has a control character, '\\', '?' or '['; only '*' (within a name) and "
				    "'**' (across directories) are wildcards",
				    q);
	}
	const char *p = n->str;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return FAIL(l, n, field,
				    "%s has an empty, \".\" or \"..\" component (or ends with /); write %s", q,
				    valid);
		p += len;
		if (*p == '/' && !*++p)
			return FAIL(l, n, field, "%s ends with /; write dir/** for a directory", q);
	}
	*out = strdup(n->str);
	return *out ? 0 : parse_oom(l);
}

int parse_load_protect_list(struct loader *l, const struct policy_ynode *n, const char *list,
			     struct policy_paths *out)
{
	return parse_load_str_list(l, n, list, out, load_protect_glob);
}

const struct policy_ynode *parse_map_key(const struct policy_ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i += 2)
		if (strcmp(map->items[i]->str, key) == 0)
			return map->items[i];
	return NULL;
}

/* The key node of `key` in map, or fallback (its value) for positions. */
const struct policy_ynode *parse_key_or(const struct policy_ynode *map, const char *key,
					 const struct policy_ynode *fallback)
{
	const struct policy_ynode *k = parse_map_key(map, key);

	return k ? k : fallback;
}

void parse_field_join(char *buf, size_t size, const char *prefix, const char *key)
{
	snprintf(buf, size, "%s.%s", prefix, key);
}


/* ---- entry points ---- */

/* After sandbox: pin file paths may use $WORKSPACE. */
static int parse_mcp_at(struct loader *l, const struct parse_at *at, void *data)
{
	(void)data;
	return policy_load_mcp(l->p, at->v, l->err);
}

/* WARNING: sandbox comes before the sections that may use $WORKSPACE;
 * network before credentials (bindings are checked against the endpoints)
 * and identity (its header needs a network); filesystem before
 * credentials (a secret's file must be out of the agent's reach). */
static const struct parse_key top_keys[] = {
	{ "version", parse_version_at, AT(version), ORIGIN(version), NULL, PARSE_ABSENT },
	{ "name", parse_label_at, AT(name), ORIGIN(name), "a name for the policy", 0 },
	{ "sandbox", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_sandbox_table, 0 },
	{ "filesystem", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_filesystem_table, 0 },
	{ "process", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_process_table, 0 },
	{ "network", parse_network_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "credentials", parse_credentials_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "identity", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_identity_table, 0 },
	{ "audit", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_audit_table, 0 },
	{ "mcp", parse_mcp_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
};
const struct parse_table parse_top_table = PARSE_TABLE("", top_keys);

const struct parse_table *const parse_tables[] = {
	&parse_top_table,	  &parse_sandbox_table,	  &parse_limits_table,	   &parse_filesystem_table,
	&parse_process_table,	  &parse_env_table,	  &parse_identity_table,   &parse_audit_table,
	&parse_network_table,	  &parse_endpoint_table,  &parse_rule_table,	   &parse_leak_scan_table,
	&parse_credential_table, &parse_binding_table,	  &parse_basic_table,	   &parse_git_table,
};
const size_t parse_n_tables = ARRAY_SIZE(parse_tables);

static int load_tree(struct loader *l, const struct policy_ynode *top)
{
	int r;

	if (top->type != POLICY_YNODE_MAP)
		return FAIL(l, top, "(document)",
			    "the top level is %s; a policy is a map that starts with \"version: 1\"",
			    parse_describe(top));
	if ((r = parse_map(l, top, "", &parse_top_table, l->p)) < 0)
		return r;
	if ((r = parse_check_mcp_endpoints(l)) < 0)
		return r;
	if ((r = parse_check_filesystem(l)) < 0)
		return r;
	return parse_check_env(l, l->pass_given);
}

/* An absolute, normalised form of dir (relative to ctx->cwd); NULL dir
 * means ctx->cwd. */
static char *absolute_dir(const char *dir, const struct policy_ctx *ctx)
{
	_cleanup_free_ char *joined = NULL;

	if (!dir || !dir[0])
		return policy_path_normalize(ctx->cwd);
	if (dir[0] == '/')
		return policy_path_normalize(dir);
	if (asprintf(&joined, "%s/%s", ctx->cwd, dir) < 0)
		return NULL;
	return policy_path_normalize(joined);
}

/* A policy with the built-in defaults, named name, whose relative paths
 * are taken from dir; *out is the caller's. */
static int new_policy(const char *name, const char *dir, const struct policy_ctx *ctx, struct policy **out,
		      struct error *err)
{
	_cleanup_policy_ struct policy *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return error_set(err, ENOMEM, "%s: out of memory", name);
	r = policy_init_defaults(p, ctx, err);
	if (r < 0)
		return r;
	p->file = strdup(name);
	p->dir = absolute_dir(dir, ctx);
	if (!p->file || !p->dir)
		return error_set(err, ENOMEM, "%s: out of memory", name);
	if (strlen(p->dir) >= PATH_MAX)
		return error_set(err, ENAMETOOLONG, "%s: the policy's directory is too long", name);
	*out = steal_pointer(&p);
	return 0;
}

int policy_load_buffer(const char *name, const char *dir, const char *buf, size_t len,
		       const struct policy_ctx *ctx, struct policy **out, struct error *err)
{
	_cleanup_policy_ struct policy *p = NULL;
	_cleanup_(policy_ynode_freep) struct policy_ynode *root = NULL;
	int r;

	*out = NULL;
	r = new_policy(name ? name : "<policy>", dir, ctx, &p, err);
	if (r < 0)
		return r;
	r = policy_ytree_parse(p->file, buf, len, &root, err);
	if (r < 0)
		return r;
	r = load_tree(&(struct loader){ .p = p, .ctx = ctx, .err = err }, root);
	if (r < 0)
		return r;
	*out = steal_pointer(&p);
	return 0;
}

int policy_load_tree(const char *name, const char *dir, const struct policy_ynode *root,
		     const struct policy_ctx *ctx, struct policy **out, struct error *err)
{
	_cleanup_policy_ struct policy *p = NULL;
	int r;

	*out = NULL;
	r = new_policy(name, dir, ctx, &p, err);
	if (r < 0)
		return r;
	r = load_tree(&(struct loader){ .p = p, .ctx = ctx, .err = err }, root);
	if (r < 0)
		return r;
	*out = steal_pointer(&p);
	return 0;
}

/* The directory part of path ("." when it has none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

int policy_read_bounded(int fd, const char *path, const char *what, char **buf, size_t *len, struct error *err)
{
	_cleanup_free_ char *b = malloc(POLICY_MAX_FILE + 1);
	size_t n = 0;

	if (!b)
		return error_set(err, ENOMEM, "%s: out of memory", path);
	while (n < POLICY_MAX_FILE + 1) {
		ssize_t got = read(fd, b + n, POLICY_MAX_FILE + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return error_sys(err, errno, "%s: cannot read %s", path, what);
		if (got == 0)
			break;
		n += (size_t)got;
	}
	*buf = steal_pointer(&b);
	*len = n;
	return 0;
}

int policy_load_file(const char *path, const struct policy_ctx *ctx, struct policy **out,
		     struct error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *abs = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	if (!ctx || !ctx->cwd || ctx->cwd[0] != '/')
		return error_set(err, EINVAL, "policy: the current directory must be an absolute path");
	/* A relative name is taken from ctx->cwd, the directory its relative
	 * paths will be resolved against, not from wherever this process
	 * happens to be. */
	if (path[0] != '/' && asprintf(&abs, "%s/%s", ctx->cwd, path) < 0)
		return error_set(err, ENOMEM, "%s: out of memory", path);
	fd = open(abs ? abs : path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return error_sys(err, errno, "%s: cannot open the policy", path);

	/* One byte past the limit tells "exactly 1 MiB" from "more". */
	if ((r = policy_read_bounded(fd, path, "the policy", &buf, &len, err)) < 0)
		return r;
	if (len > POLICY_MAX_FILE)
		return policy_fail(err, path, 1, 1, "(document)",
				   "the file is larger than %d bytes (1 MiB); a policy must be smaller",
				   POLICY_MAX_FILE);

	dir = dir_of(path);
	if (!dir)
		return error_set(err, ENOMEM, "%s: out of memory", path);
	return policy_load_buffer(path, dir, buf, len, ctx, out, err);
}
