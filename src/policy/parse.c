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
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/internal.h"
#include "policy/mcp.h"
#include "util/cleanup.h"

#define UID_MAX_VALID UINT64_C(4294967294) /* (uid_t)-1 means "no change" to the kernel */
#define COUNT_MAX UINT64_C(2147483647)

struct loader {
	struct policy *p;
	const struct policy_ctx *ctx;
	struct error *err;
	bool pass_given; /* the file gives process.env.pass */
};

#define FAIL(l, n, field, ...) \
	policy_fail((l)->err, (l)->p->file, (n)->line, (n)->col, (field), __VA_ARGS__)

static int oom(struct loader *l)
{
	return error_set(l->err, ENOMEM, "%s: out of memory", l->p->file);
}

static struct policy_loc loc_of(const struct loader *l, const struct policy_ynode *n)
{
	return (struct policy_loc){ l->p->file, n->line, n->col };
}

/* YAML's spellings of null, for a plain scalar. "~" is not among them for
 * paths, where it names the home directory. */
static bool is_null(const struct policy_ynode *n)
{
	if (n->type != POLICY_YNODE_SCALAR || n->quoted)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}

static const char *describe(const struct policy_ynode *n)
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

static void quote(const struct policy_ynode *n, char *buf, size_t size)
{
	policy_quote(n->str, n->len, buf, size);
}

static void field_index(char *buf, size_t size, const char *list, size_t i)
{
	snprintf(buf, size, "%s[%zu]", list, i);
}

/* ---- shapes ---- */

static int want_map(struct loader *l, const struct policy_ynode *n, const char *field)
{
	if (n->type == POLICY_YNODE_MAP)
		return 0;
	if (n->type == POLICY_YNODE_SCALAR && n->len == 0 && !n->quoted)
		return FAIL(l, n, field, "is empty; give its settings or write {} for none");
	return FAIL(l, n, field, "is %s; expected a map of settings (key: value lines)",
		    describe(n));
}

static int want_list(struct loader *l, const struct policy_ynode *n, const char *field)
{
	if (n->type == POLICY_YNODE_SEQ)
		return 0;
	if (n->type == POLICY_YNODE_SCALAR && n->len == 0 && !n->quoted)
		return FAIL(l, n, field, "is empty; give a list or write [] for none");
	return FAIL(l, n, field, "is %s; expected a list (e.g. [a, b] or \"- a\" lines)",
		    describe(n));
}

static int want_scalar(struct loader *l, const struct policy_ynode *n, const char *field,
		       const char *valid)
{
	if (n->type != POLICY_YNODE_SCALAR)
		return FAIL(l, n, field, "is %s; expected %s", describe(n), valid);
	if (is_null(n))
		return FAIL(l, n, field, "has no value; expected %s", valid);
	return 0;
}

/* Refuse keys the schema table (schema.c) does not list beneath `schema`
 * (the map's schema path: "" for the top level, "network.endpoints[]"),
 * naming the valid ones. prefix is the map's field name for messages. */
static int check_keys(struct loader *l, const struct policy_ynode *map, const char *prefix,
		      const char *schema)
{
	for (size_t i = 0; i < map->n; i += 2) {
		const struct policy_ynode *k = map->items[i];
		char field[POLICY_FIELD_MAX];
		char valid[512];

		if (policy_schema_knows(schema, k->str))
			continue;
		snprintf(field, sizeof(field), "%s", prefix);
		policy_field_append_key(field, sizeof(field), k->str, k->len);
		policy_schema_keys(schema, valid, sizeof(valid));
		return FAIL(l, k, field, "unknown key; valid keys here are %s", valid);
	}
	return 0;
}

static const struct policy_ynode *map_get(const struct policy_ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i += 2)
		if (strcmp(map->items[i]->str, key) == 0)
			return map->items[i + 1];
	return NULL;
}

/* ---- scalar values ---- */

static int load_enum(struct loader *l, const struct policy_ynode *n, const char *field,
		     const char *const *names, size_t count, int *out)
{
	char valid[128] = "";
	char q[96];
	int r;

	for (size_t i = 0; i < count; i++) {
		size_t pos = strlen(valid);
		snprintf(valid + pos, sizeof(valid) - pos, "%s%s", i ? ", " : "", names[i]);
	}
	if (n->type != POLICY_YNODE_SCALAR || is_null(n)) {
		char what[160];
		snprintf(what, sizeof(what), "one of %s", valid);
		r = want_scalar(l, n, field, what);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < count; i++) {
		if (strcmp(n->str, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	quote(n, q, sizeof(q));
	return FAIL(l, n, field, "%s is not one of %s", q, valid);
}

static int load_bool(struct loader *l, const struct policy_ynode *n, const char *field, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };
	char q[96];
	int r;

	r = want_scalar(l, n, field, "true or false");
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
	quote(n, q, sizeof(q));
	if (n->quoted)
		return FAIL(l, n, field, "%s is a quoted string; write true or false without quotes",
			    q);
	return FAIL(l, n, field, "%s is not a boolean; write true or false", q);
}

static int load_string(struct loader *l, const struct policy_ynode *n, const char *field,
		       const char *valid, bool allow_empty, char **out)
{
	int r;

	if (!(allow_empty && n->type == POLICY_YNODE_SCALAR && n->quoted && n->len == 0)) {
		r = want_scalar(l, n, field, valid);
		if (r < 0)
			return r;
	}
	if (n->len == 0 && !allow_empty)
		return FAIL(l, n, field, "is empty; expected %s", valid);
	free(*out);
	*out = strdup(n->str);
	if (!*out)
		return oom(l);
	return 0;
}

static int load_version(struct loader *l, const struct policy_ynode *top)
{
	const struct policy_ynode *n = map_get(top, "version");
	uint64_t v = 0;
	char q[96];
	int r;

	if (!n)
		return FAIL(l, top, "version",
			    "required key is missing; start the policy with \"version: 1\"");
	r = want_scalar(l, n, "version", "the integer 1");
	if (r < 0)
		return r;
	quote(n, q, sizeof(q));
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
	l->p->version = POLICY_VERSION;
	l->p->origin.version = loc_of(l, n);
	return 0;
}

/* A name that ends up in terminals and logs: printable text only. */
static int load_label(struct loader *l, const struct policy_ynode *n, const char *field, const char *valid,
		      char **out)
{
	char q[96];
	int r;

	r = load_string(l, n, field, valid, false, out);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->str[i];
		unsigned char next = i + 1 < n->len ? (unsigned char)n->str[i + 1] : 0;

		/* The name ends up in terminals and logs: no C0 or C1 controls
		 * (U+0080..U+009F, where the 8-bit CSI lives). */
		if (c < 0x20 || c == 0x7f || (c == 0xc2 && next >= 0x80 && next <= 0x9f)) {
			quote(n, q, sizeof(q));
			return FAIL(l, n, field, "%s contains a control character; use printable text", q);
		}
	}
	return 0;
}

static int load_name(struct loader *l, const struct policy_ynode *n)
{
	int r = load_label(l, n, "name", "a name for the policy", &l->p->name);
	if (r == 0)
		l->p->origin.name = loc_of(l, n);
	return r;
}

/* identity: {agent: NAME, header: BOOL} */
static int load_identity(struct loader *l, const struct policy_ynode *n)
{
	const struct policy_ynode *v;
	int r = want_map(l, n, "identity");
	if (r == 0)
		r = check_keys(l, n, "identity", "identity");
	if (r == 0 && (v = map_get(n, "agent"))) {
		r = load_label(l, v, "identity.agent", "the agent's name in decision records", &l->p->identity.agent);
		if (r == 0)
			l->p->origin.agent = loc_of(l, v);
	}
	if (r == 0 && (v = map_get(n, "header"))) {
		r = load_bool(l, v, "identity.header", &l->p->identity.header);
		if (r == 0)
			l->p->origin.identity_header = loc_of(l, v);
		/* Loaded after network: the header goes only on the proxy's
		 * requests, so without one it would silently do nothing. */
		if (r == 0 && l->p->identity.header && l->p->network.mode == POLICY_NET_NONE)
			r = FAIL(l, v, "identity.header",
				 "the policy has no network section, so no request could carry the identity header; "
				 "add a network section or drop identity.header");
	}
	return r;
}

static int load_path(struct loader *l, const struct policy_ynode *n, const char *field, bool workspace_var,
		     char **out);

/* audit: {enabled: BOOL, dir: PATH, max_size: SIZE} */
static int load_audit(struct loader *l, const struct policy_ynode *n)
{
	const struct policy_ynode *v;
	int r = want_map(l, n, "audit");
	if (r == 0)
		r = check_keys(l, n, "audit", "audit");
	if (r == 0 && (v = map_get(n, "enabled"))) {
		r = load_bool(l, v, "audit.enabled", &l->p->audit.enabled);
		if (r == 0)
			l->p->origin.audit_enabled = loc_of(l, v);
	}
	/* A directory for a log that is turned off says two things at once. */
	if (r == 0 && !l->p->audit.enabled && (v = map_get(n, "dir")))
		return FAIL(l, v, "audit.dir",
			    "a directory for the decision log, which audit.enabled: false turns off; remove "
			    "one of the two");
	if (r == 0 && (v = map_get(n, "dir"))) {
		r = load_path(l, v, "audit.dir", false, &l->p->audit.dir);
		if (r == 0)
			l->p->origin.audit_dir = loc_of(l, v);
	}
	if (r == 0 && (v = map_get(n, "max_size"))) {
		/* The log is bounded like the memory the agent may use: an
		 * agent that floods it with junk requests must not fill the
		 * host's disk. Reaching it ends the run; it cannot be
		 * unlimited. */
		const char *field = "audit.max_size";
		uint64_t size = 0;
		char q[96];
		if ((r = want_scalar(l, v, field, "a size (e.g. 1GiB)")) < 0)
			return r;
		quote(v, q, sizeof(q));
		if (strcmp(v->str, "unlimited") == 0)
			return FAIL(l, v, field,
				    "cannot be unlimited: reaching it ends the run rather than letting it go on "
				    "unlogged; give a size from 1MiB to 1TiB (e.g. 1GiB)");
		switch (policy_parse_size(v->str, &size)) {
		case POLICY_NUM_OK:
			break;
		case POLICY_NUM_SYNTAX:
			return FAIL(l, v, field, "%s is not a size (e.g. 256MiB, 1GiB)", q);
		case POLICY_NUM_RANGE:
			size = UINT64_MAX;
			break;
		}
		if (size < POLICY_AUDIT_MAX_SIZE_MIN || size > POLICY_AUDIT_MAX_SIZE_MAX)
			return FAIL(l, v, field, "%s is outside 1MiB..1TiB", q);
		l->p->audit.max_size = size;
		l->p->origin.audit_max_size = loc_of(l, v);
	}
	return r;
}

/* host_uid / host_gid: "auto" or 1..4294967294. */
static int load_id(struct loader *l, const struct policy_ynode *n, const char *field,
		   int64_t *out)
{
	uint64_t v = 0;
	char q[96];
	int r;

	r = want_scalar(l, n, field, "auto or an integer from 1 to 4294967294");
	if (r < 0)
		return r;
	if (strcmp(n->str, "auto") == 0) {
		*out = -1;
		return 0;
	}
	quote(n, q, sizeof(q));
	if (n->quoted)
		return FAIL(l, n, field,
			    "%s is a quoted string; write auto or an integer from 1 to 4294967294 "
			    "without quotes",
			    q);
	switch (policy_parse_uint(n->str, UID_MAX_VALID, &v)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_RANGE:
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, field, "%s is not valid; use auto or an integer from 1 to 4294967294",
			    q);
	}
	if (v == 0)
		return FAIL(l, n, field,
			    "0 is root on the host, and the agent never runs as host root; use auto or "
			    "an integer from 1 to 4294967294");
	*out = (int64_t)v;
	return 0;
}

/* A positive count or "unlimited" (stored as 0). */
static int load_count(struct loader *l, const struct policy_ynode *n, const char *field,
		      uint64_t *out)
{
	uint64_t v = 0;
	char q[96];
	int r;

	r = want_scalar(l, n, field, "a positive integer or unlimited");
	if (r < 0)
		return r;
	if (strcmp(n->str, "unlimited") == 0) {
		*out = 0;
		return 0;
	}
	quote(n, q, sizeof(q));
	if (n->quoted)
		return FAIL(l, n, field,
			    "%s is a quoted string; write a positive integer without quotes, or "
			    "unlimited",
			    q);
	switch (policy_parse_uint(n->str, COUNT_MAX, &v)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, field, "%s is not a positive integer (e.g. 512, unlimited)", q);
	case POLICY_NUM_RANGE:
		return FAIL(l, n, field, "%s is too large; the largest count is 2147483647", q);
	}
	if (v == 0)
		return FAIL(l, n, field, "0 is not a limit; use a positive integer or unlimited");
	*out = v;
	return 0;
}

static int load_size(struct loader *l, const struct policy_ynode *n, const char *field,
		     uint64_t *out)
{
	uint64_t v = 0;
	char q[96];
	int r;

	r = want_scalar(l, n, field, "a size (e.g. 512MiB, 2GiB, unlimited)");
	if (r < 0)
		return r;
	if (strcmp(n->str, "unlimited") == 0) {
		*out = 0;
		return 0;
	}
	quote(n, q, sizeof(q));
	switch (policy_parse_size(n->str, &v)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, field, "%s is not a size (e.g. 512MiB, 2GiB, unlimited)", q);
	case POLICY_NUM_RANGE:
		return FAIL(l, n, field, "%s is too large; use unlimited for no limit", q);
	}
	if (v == 0)
		return FAIL(l, n, field, "%s is not a limit; use a positive size or unlimited", q);
	*out = v;
	return 0;
}

static int load_duration(struct loader *l, const struct policy_ynode *n, const char *field,
			 uint64_t *out)
{
	uint64_t v = 0;
	char q[96];
	int r;

	r = want_scalar(l, n, field, "a duration (e.g. 90s, 10m, 2h, unlimited)");
	if (r < 0)
		return r;
	if (strcmp(n->str, "unlimited") == 0) {
		*out = 0;
		return 0;
	}
	quote(n, q, sizeof(q));
	switch (policy_parse_duration(n->str, &v)) {
	case POLICY_NUM_OK:
		break;
	case POLICY_NUM_SYNTAX:
		return FAIL(l, n, field, "%s is not a duration (e.g. 90s, 10m, 2h, unlimited)", q);
	case POLICY_NUM_RANGE:
		return FAIL(l, n, field, "%s is too large; use unlimited for no limit", q);
	}
	if (v == 0)
		return FAIL(l, n, field, "%s is not a limit; use a positive duration or unlimited",
			    q);
	*out = v;
	return 0;
}

/* ---- paths ---- */

/* Resolve s, the path part of scalar n (all of it, or what follows a
 * prefix such as "file:"); messages quote all of n. */
static int resolve_path(struct loader *l, const struct policy_ynode *n, const char *s,
			const char *field, bool workspace_var, char **out)
{
	const struct policy_path_base base = {
		.home = l->ctx->home,
		.workspace = workspace_var ? l->p->sandbox.workspace : NULL,
		.dir = l->p->dir,
	};
	char q[96];

	quote(n, q, sizeof(q));
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
	return oom(l);
}

static int load_path(struct loader *l, const struct policy_ynode *n, const char *field,
		     bool workspace_var, char **out)
{
	if (n->type != POLICY_YNODE_SCALAR)
		return FAIL(l, n, field, "is %s; expected a path", describe(n));
	/* "~" alone is the home directory here, not YAML's null. */
	if (!n->quoted && n->len > 0 && is_null(n) && strcmp(n->str, "~") != 0)
		return FAIL(l, n, field, "has no value; expected a path");
	return resolve_path(l, n, n->str, field, workspace_var, out);
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
static int load_str_list(struct loader *l, const struct policy_ynode *n, const char *list, struct policy_paths *out,
			 int (*item)(struct loader *l, const struct policy_ynode *n, const char *field, char **out))
{
	int r = want_list(l, n, list);

	if (r < 0)
		return r;
	paths_clear(out);
	if (n->n == 0)
		return 0;
	out->v = calloc(n->n, sizeof(*out->v));
	if (!out->v)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		char field[POLICY_FIELD_MAX];

		field_index(field, sizeof(field), list, i);
		r = item(l, n->items[i], field, &out->v[i].path);
		if (r < 0)
			return r;
		out->v[i].loc = loc_of(l, n->items[i]);
		out->n = i + 1;
	}
	return 0;
}

static int load_path_item(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	return load_path(l, n, field, true, out);
}

static int load_path_list(struct loader *l, const struct policy_ynode *n, const char *list,
			  struct policy_paths *out)
{
	return load_str_list(l, n, list, out, load_path_item);
}

/* A named socket's path: a path as elsewhere, or one that starts with
 * $NAME or ${NAME}, taken from airlock's own environment
 * ($SSH_AUTH_SOCK: the agent socket of the shell that starts the run).
 * An unset or empty variable is an error here: the author named a socket
 * the run would silently go without. Whether the path is a socket is
 * checked when the sandbox is planned (plan.c), on the host as it is
 * then. */
static int load_socket_path(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	int r = want_scalar(l, n, field, "a socket's path, or $NAME/... for one from the environment");

	if (r < 0)
		return r;
	const char *s = n->str;
	if (s[0] != '$' || strncmp(s, "$WORKSPACE", 10) == 0)
		return load_path(l, n, field, true, out);
	if (l->ctx->no_env)
		return (*out = strdup(s)) ? 0 : oom(l);
	bool brace = s[1] == '{';
	const char *name = s + 1 + brace, *e = name;
	while (*e == '_' || (*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') || (e > name && *e >= '0' && *e <= '9'))
		e++;
	char q[96];
	quote(n, q, sizeof(q));
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
		return oom(l);
	if (full[0] != '/')
		return FAIL(l, n, field, "%s: $%s is \"%.64s\", not an absolute path", q, var, val);
	return resolve_path(l, n, full, field, false, out);
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
	int r = want_scalar(l, n, field, valid);

	if (r < 0)
		return r;
	if (n->len == 0)
		return FAIL(l, n, field, "is empty; expected %s", valid);
	quote(n, q, sizeof(q));
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
	return *out ? 0 : oom(l);
}

static int load_protect_list(struct loader *l, const struct policy_ynode *n, const char *list,
			     struct policy_paths *out)
{
	return load_str_list(l, n, list, out, load_protect_glob);
}

/* ---- sections ---- */

static int load_limits(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	const struct policy_ynode *v;
	int r;

	r = want_map(l, n, "sandbox.limits");
	if (r < 0)
		return r;
	r = check_keys(l, n, "sandbox.limits", "sandbox.limits");
	if (r < 0)
		return r;
	if ((v = map_get(n, "memory"))) {
		r = load_size(l, v, "sandbox.limits.memory", &p->sandbox.limits.memory_bytes);
		if (r < 0)
			return r;
		p->origin.memory = loc_of(l, v);
	}
	if ((v = map_get(n, "pids"))) {
		r = load_count(l, v, "sandbox.limits.pids", &p->sandbox.limits.pids);
		if (r < 0)
			return r;
		p->origin.pids = loc_of(l, v);
	}
	if ((v = map_get(n, "open_files"))) {
		r = load_count(l, v, "sandbox.limits.open_files", &p->sandbox.limits.open_files);
		if (r < 0)
			return r;
		p->origin.open_files = loc_of(l, v);
	}
	if ((v = map_get(n, "cpu"))) {
		r = load_duration(l, v, "sandbox.limits.cpu", &p->sandbox.limits.cpu_seconds);
		if (r < 0)
			return r;
		p->origin.cpu = loc_of(l, v);
	}
	if ((v = map_get(n, "wall"))) {
		r = load_duration(l, v, "sandbox.limits.wall", &p->sandbox.limits.wall_seconds);
		if (r < 0)
			return r;
		p->origin.wall = loc_of(l, v);
	}
	return 0;
}

static int load_sandbox(struct loader *l, const struct policy_ynode *n)
{
	static const char *const ws_modes[] = { "direct", "review", "hold" };
	static const char *const boundaries[] = { "process", "gvisor", "microvm" };
	static const char *const modes[] = { "enforce", "learn", "observe" };
	struct policy *p = l->p;
	const struct policy_ynode *v;
	int r, e;

	r = want_map(l, n, "sandbox");
	if (r < 0)
		return r;
	r = check_keys(l, n, "sandbox", "sandbox");
	if (r < 0)
		return r;
	if ((v = map_get(n, "boundary"))) {
		r = load_enum(l, v, "sandbox.boundary", boundaries, ARRAY_SIZE(boundaries), &e);
		if (r < 0)
			return r;
		p->sandbox.boundary = (enum policy_boundary)e;
		p->origin.boundary = loc_of(l, v);
	}
	if ((v = map_get(n, "workspace"))) {
		_cleanup_free_ char *ws = NULL;

		r = load_path(l, v, "sandbox.workspace", false, &ws);
		if (r < 0)
			return r;
		free(p->sandbox.workspace);
		p->sandbox.workspace = steal_pointer(&ws);
		p->sandbox.workspace_loc = loc_of(l, v);
	}
	if ((v = map_get(n, "mode"))) {
		r = load_enum(l, v, "sandbox.mode", modes, ARRAY_SIZE(modes), &e);
		if (r < 0)
			return r;
		p->sandbox.mode = (enum policy_mode)e;
		p->origin.mode = loc_of(l, v);
	}
	if ((v = map_get(n, "workspace_mode"))) {
		r = load_enum(l, v, "sandbox.workspace_mode", ws_modes, ARRAY_SIZE(ws_modes), &e);
		if (r < 0)
			return r;
		p->sandbox.workspace_mode = (enum policy_workspace_mode)e;
		p->origin.workspace_mode = loc_of(l, v);
	}
	if ((v = map_get(n, "host_uid"))) {
		r = load_id(l, v, "sandbox.host_uid", &p->sandbox.host_uid);
		if (r < 0)
			return r;
		p->origin.host_uid = loc_of(l, v);
	}
	if ((v = map_get(n, "host_gid"))) {
		r = load_id(l, v, "sandbox.host_gid", &p->sandbox.host_gid);
		if (r < 0)
			return r;
		p->origin.host_gid = loc_of(l, v);
	}
	if ((v = map_get(n, "limits"))) {
		r = load_limits(l, v);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_filesystem(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	const struct policy_ynode *v;
	int r;

	r = want_map(l, n, "filesystem");
	if (r < 0)
		return r;
	r = check_keys(l, n, "filesystem", "filesystem");
	if (r < 0)
		return r;
	if ((v = map_get(n, "baseline"))) {
		r = load_bool(l, v, "filesystem.baseline", &p->filesystem.baseline);
		if (r < 0)
			return r;
		p->origin.baseline = loc_of(l, v);
	}
	if ((v = map_get(n, "read"))) {
		r = load_path_list(l, v, "filesystem.read", &p->filesystem.read);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "write"))) {
		r = load_path_list(l, v, "filesystem.write", &p->filesystem.write);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "deny"))) {
		r = load_path_list(l, v, "filesystem.deny", &p->filesystem.deny);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "protect"))) {
		r = load_protect_list(l, v, "filesystem.protect", &p->filesystem.protect);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "sockets"))) {
		r = load_str_list(l, v, "filesystem.sockets", &p->filesystem.sockets, load_socket_path);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "protect_defaults"))) {
		r = load_bool(l, v, "filesystem.protect_defaults", &p->filesystem.protect_defaults);
		if (r < 0)
			return r;
		p->origin.protect_defaults = loc_of(l, v);
	}
	if ((v = map_get(n, "protect_build"))) {
		r = load_bool(l, v, "filesystem.protect_build", &p->filesystem.protect_build);
		if (r < 0)
			return r;
		p->origin.protect_build = loc_of(l, v);
	}
	return 0;
}

static bool valid_env_name(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

static int bad_env_name(struct loader *l, const struct policy_ynode *n, const char *field)
{
	char q[96];

	quote(n, q, sizeof(q));
	return FAIL(l, n, field,
		    "%s is not a variable name; use letters, digits and _, not starting with a digit",
		    q);
}

static void env_pass_clear(struct policy *p)
{
	for (size_t i = 0; i < p->process.n_env_pass; i++)
		free(p->process.env_pass[i]);
	free(p->process.env_pass);
	free(p->process.env_pass_loc);
	p->process.env_pass = NULL;
	p->process.env_pass_loc = NULL;
	p->process.n_env_pass = 0;
}

static int load_env_pass(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	int r;

	r = want_list(l, n, "process.env.pass");
	if (r < 0)
		return r;
	env_pass_clear(p);
	p->process.env_pass = calloc(n->n + 1, sizeof(char *));
	p->process.env_pass_loc = calloc(n->n ? n->n : 1, sizeof(struct policy_loc));
	if (!p->process.env_pass || !p->process.env_pass_loc)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX];

		field_index(field, sizeof(field), "process.env.pass", i);
		r = want_scalar(l, e, field, "an environment variable name");
		if (r < 0)
			return r;
		if (!valid_env_name(e->str, e->len))
			return bad_env_name(l, e, field);
		p->process.env_pass[i] = strdup(e->str);
		if (!p->process.env_pass[i])
			return oom(l);
		p->process.env_pass_loc[i] = loc_of(l, e);
		p->process.n_env_pass = i + 1;
	}
	p->origin.env_pass = loc_of(l, n);
	return 0;
}

static int load_env_set(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	size_t count = n->n / 2;
	int r;

	r = want_map(l, n, "process.env.set");
	if (r < 0)
		return r;
	if (count == 0) {
		p->origin.env_set = loc_of(l, n);
		return 0;
	}
	p->process.env_set = calloc(count, sizeof(*p->process.env_set));
	if (!p->process.env_set)
		return oom(l);
	for (size_t i = 0; i < count; i++) {
		const struct policy_ynode *k = n->items[2 * i], *v = n->items[2 * i + 1];
		struct policy_env_var *e = &p->process.env_set[i];
		char field[POLICY_FIELD_MAX] = "process.env.set";

		policy_field_append_key(field, sizeof(field), k->str, k->len);
		if (!valid_env_name(k->str, k->len))
			return bad_env_name(l, k, field);
		r = load_string(l, v, field, "a string (use \"\" for an empty value)", true, &e->value);
		if (r < 0)
			return r;
		e->name = strdup(k->str);
		if (!e->name) {
			free(e->value);
			e->value = NULL;
			return oom(l);
		}
		e->loc = loc_of(l, k);
		p->process.n_env_set = i + 1;
	}
	p->origin.env_set = loc_of(l, n);
	return 0;
}

static int load_process(struct loader *l, const struct policy_ynode *n, bool *pass_given)
{
	struct policy *p = l->p;
	const struct policy_ynode *v, *env;
	int r;

	r = want_map(l, n, "process");
	if (r < 0)
		return r;
	r = check_keys(l, n, "process", "process");
	if (r < 0)
		return r;
	if ((v = map_get(n, "exec"))) {
		r = load_path_list(l, v, "process.exec", &p->process.exec);
		if (r < 0)
			return r;
		if (p->process.exec.n == 0)
			return FAIL(l, v, "process.exec",
				    "is an empty list, which would forbid running the command itself; "
				    "list directories or omit exec for the baseline and workspace");
		p->process.exec_set = true;
		p->origin.exec = loc_of(l, v);
	}
	if ((env = map_get(n, "env"))) {
		r = want_map(l, env, "process.env");
		if (r < 0)
			return r;
		r = check_keys(l, env, "process.env", "process.env");
		if (r < 0)
			return r;
		if ((v = map_get(env, "pass"))) {
			r = load_env_pass(l, v);
			if (r < 0)
				return r;
			*pass_given = true;
		}
		if ((v = map_get(env, "set"))) {
			r = load_env_set(l, v);
			if (r < 0)
				return r;
		}
	}
	if ((v = map_get(n, "git_identity"))) {
		static const char *const gi[] = { "none", "host" };
		int e;
		r = load_enum(l, v, "process.git_identity", gi, ARRAY_SIZE(gi), &e);
		if (r < 0)
			return r;
		p->process.git_identity = e == 1;
		p->origin.git_identity = loc_of(l, v);
	}
	return 0;
}

/* ---- contradictions ---- */

struct entry {
	const char *s;
	const char *list;
	size_t idx;
	struct policy_loc loc;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c)
		return c;
	if (x->loc.line != y->loc.line)
		return x->loc.line < y->loc.line ? -1 : 1;
	return (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
}

static bool loc_before(const struct policy_loc *a, const struct policy_loc *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* Sort e[0..n) and find the repeated string whose second occurrence comes
 * first in the file. Returns false when every string is distinct. */
static bool find_repeat(struct entry *e, size_t n, const struct entry **first,
			const struct entry **again)
{
	*first = *again = NULL;
	if (n < 2)
		return false;
	qsort(e, n, sizeof(*e), entry_cmp);
	for (size_t i = 0; i + 1 < n;) {
		size_t j = i + 1;
		for (; j < n && strcmp(e[j].s, e[i].s) == 0; j++) {
			if (!*again || loc_before(&e[j].loc, &(*again)->loc)) {
				*again = &e[j];
				*first = &e[i];
			}
		}
		i = j;
	}
	return *again != NULL;
}

static void add_paths(struct entry *e, size_t *n, const struct policy_paths *ps, const char *list)
{
	for (size_t i = 0; i < ps->n; i++)
		e[(*n)++] = (struct entry){ ps->v[i].path, list, i, ps->v[i].loc };
}

static int repeat_error(struct loader *l, const struct entry *first, const struct entry *again,
			const char *rule)
{
	char field[POLICY_FIELD_MAX], other[POLICY_FIELD_MAX];
	char q[96];

	field_index(field, sizeof(field), again->list, again->idx);
	field_index(other, sizeof(other), first->list, first->idx);
	policy_quote(again->s, strlen(again->s), q, sizeof(q));
	if (strcmp(first->list, again->list) == 0)
		return policy_fail(l->err, l->p->file, again->loc.line, again->loc.col, field,
				   "%s is listed twice (first at %s, line %u); remove one", q, other,
				   first->loc.line);
	return policy_fail(l->err, l->p->file, again->loc.line, again->loc.col, field,
			   "%s is also in %s (line %u); %s", q, other, first->loc.line, rule);
}

/* The entry of sorted[0..n) equal to path or to one of its ancestors,
 * nearest first; NULL if none. */
static const struct entry *find_ancestor(const struct entry *sorted, size_t n, const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (n == 0 || len >= sizeof(buf))
		return NULL;
	memcpy(buf, path, len + 1);
	for (;;) {
		size_t lo = 0, hi = n;

		/* Lower bound, so that the first (earliest) of equal paths wins. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(sorted[mid].s, buf) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && strcmp(sorted[lo].s, buf) == 0)
			return &sorted[lo];
		if (len == 1)
			return NULL;
		while (len > 1 && buf[len - 1] != '/')
			len--;
		if (len > 1)
			len--;
		buf[len] = '\0';
	}
}

static int check_filesystem(struct loader *l)
{
	const struct policy *p = l->p;
	const struct policy_paths *deny = &p->filesystem.deny;
	size_t total = p->filesystem.read.n + p->filesystem.write.n + deny->n;
	_cleanup_free_ struct entry *all = NULL;
	_cleanup_free_ struct entry *denied = NULL;
	const struct entry *first, *again, *hit;
	size_t n = 0, nd = 0;

	if (total > 0) {
		all = calloc(total, sizeof(*all));
		if (!all)
			return oom(l);
		add_paths(all, &n, &p->filesystem.read, "filesystem.read");
		add_paths(all, &n, &p->filesystem.write, "filesystem.write");
		add_paths(all, &n, deny, "filesystem.deny");
		if (find_repeat(all, n, &first, &again))
			return repeat_error(l, first, again,
					    "a path may be in only one of read, write and deny");
	}

	if (deny->n) {
		denied = calloc(deny->n, sizeof(*denied));
		if (!denied)
			return oom(l);
		add_paths(denied, &nd, deny, "filesystem.deny");
		qsort(denied, nd, sizeof(*denied), entry_cmp);
	}

	/* The agent must be able to reach its workspace. */
	hit = find_ancestor(denied, nd, p->sandbox.workspace);
	if (hit) {
		char field[POLICY_FIELD_MAX], q[96], w[96];

		field_index(field, sizeof(field), hit->list, hit->idx);
		policy_quote(hit->s, strlen(hit->s), q, sizeof(q));
		policy_quote(p->sandbox.workspace, strlen(p->sandbox.workspace), w, sizeof(w));
		return policy_fail(l->err, p->file, hit->loc.line, hit->loc.col, field,
				   "%s hides the workspace %s; deny paths inside the workspace, or "
				   "choose another workspace",
				   q, w);
	}

	if (p->process.exec_set) {
		const struct policy_paths *ex = &p->process.exec;
		_cleanup_free_ struct entry *execs = calloc(ex->n, sizeof(*execs));
		size_t ne = 0;

		if (!execs)
			return oom(l);
		add_paths(execs, &ne, ex, "process.exec");
		if (find_repeat(execs, ne, &first, &again))
			return repeat_error(l, first, again, "");

		/* execs is sorted now; report in list order. */
		for (size_t i = 0; i < ex->n; i++) {
			char field[POLICY_FIELD_MAX], other[POLICY_FIELD_MAX], q[96];

			hit = find_ancestor(denied, nd, ex->v[i].path);
			if (!hit)
				continue;
			field_index(field, sizeof(field), "process.exec", i);
			field_index(other, sizeof(other), hit->list, hit->idx);
			policy_quote(ex->v[i].path, strlen(ex->v[i].path), q, sizeof(q));
			return policy_fail(l->err, p->file, ex->v[i].loc.line, ex->v[i].loc.col,
					   field,
					   "%s is inside %s (line %u), which is denied; remove it from "
					   "exec or from deny",
					   q, other, hit->loc.line);
		}
	}
	return 0;
}

static int check_env(struct loader *l, bool pass_given)
{
	struct policy *p = l->p;
	size_t np = p->process.n_env_pass;
	_cleanup_free_ struct entry *pass = NULL;
	const struct entry *first, *again;
	size_t n = 0;

	if (np == 0)
		return 0;
	pass = calloc(np, sizeof(*pass));
	if (!pass)
		return oom(l);
	for (size_t i = 0; i < np; i++)
		pass[n++] = (struct entry){ p->process.env_pass[i], "process.env.pass", i,
					    p->process.env_pass_loc[i] };

	if (!pass_given) {
		/* The default pass list yields to an explicit value: "set:
		 * {LANG: C}" alone means what it says. */
		size_t keep = 0;
		for (size_t i = 0; i < np; i++) {
			bool drop = false;
			for (size_t j = 0; j < p->process.n_env_set; j++)
				if (strcmp(p->process.env_pass[i], p->process.env_set[j].name) == 0)
					drop = true;
			if (drop) {
				free(p->process.env_pass[i]);
				continue;
			}
			p->process.env_pass[keep] = p->process.env_pass[i];
			p->process.env_pass_loc[keep] = p->process.env_pass_loc[i];
			keep++;
		}
		p->process.env_pass[keep] = NULL;
		p->process.n_env_pass = keep;
		return 0;
	}

	if (find_repeat(pass, n, &first, &again))
		return repeat_error(l, first, again, "");

	for (size_t j = 0; j < p->process.n_env_set; j++) {
		const struct policy_env_var *e = &p->process.env_set[j];
		const struct entry *hit = NULL;
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(pass[mid].s, e->name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && strcmp(pass[lo].s, e->name) == 0)
			hit = &pass[lo];
		if (hit) {
			char field[POLICY_FIELD_MAX] = "process.env.set", other[POLICY_FIELD_MAX];

			policy_field_append_key(field, sizeof(field), e->name, strlen(e->name));
			field_index(other, sizeof(other), hit->list, hit->idx);
			return policy_fail(l->err, p->file, e->loc.line, e->loc.col, field,
					   "%s is also in %s (line %u); pass copies the caller's value "
					   "and set gives a fixed one: keep one",
					   e->name, other, hit->loc.line);
		}
	}
	return 0;
}

/* ---- network ---- */

static const struct policy_ynode *map_key(const struct policy_ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i += 2)
		if (strcmp(map->items[i]->str, key) == 0)
			return map->items[i];
	return NULL;
}

/* The key node of `key` in map, or fallback (its value) for positions. */
static const struct policy_ynode *key_or(const struct policy_ynode *map, const char *key,
					 const struct policy_ynode *fallback)
{
	const struct policy_ynode *k = map_key(map, key);

	return k ? k : fallback;
}

static void field_join(char *buf, size_t size, const char *prefix, const char *key)
{
	snprintf(buf, size, "%s.%s", prefix, key);
}

/* names_only: a `resolve` key, where only an exact DNS name fits. */
static int bad_host(struct loader *l, const struct policy_ynode *n, const char *field,
		    enum policy_host_status st, bool names_only)
{
	char q[96];

	quote(n, q, sizeof(q));
	switch (st) {
	case POLICY_HOST_NAME:
		break;
	case POLICY_HOST_WILDCARD:
		return FAIL(l, n, field, "%s is a wildcard; resolve maps one exact name to an address",
			    q);
	case POLICY_HOST_IP:
		return FAIL(l, n, field,
			    "%s is an address; resolve maps a DNS name to an address (e.g. "
			    "test.example: 127.0.0.1)",
			    q);
	case POLICY_HOST_EMPTY:
		return FAIL(l, n, field, "is empty; expected a host name (e.g. api.example.com)");
	case POLICY_HOST_URL:
		return FAIL(l, n, field,
			    "%s is a URL or has a path; write the host name alone (e.g. api.example.com)",
			    q);
	case POLICY_HOST_PORT:
		if (names_only)
			return FAIL(l, n, field, "%s has a port; resolve maps a name, without a port", q);
		return FAIL(l, n, field,
			    "%s has a port; write the host alone and list ports in ports (e.g. ports: "
			    "[8080])",
			    q);
	case POLICY_HOST_CHAR:
		return FAIL(l, n, field,
			    "%s has a character not allowed in a host name; use letters, digits, '-', "
			    "'_' and dots (internationalised names in their xn-- form)",
			    q);
	case POLICY_HOST_LABEL:
		return FAIL(l, n, field,
			    "%s has an empty label (two dots in a row, or a dot at the start); write a "
			    "host name such as api.example.com",
			    q);
	case POLICY_HOST_LABEL_LONG:
		return FAIL(l, n, field,
			    "%s has a label longer than 63 bytes, which DNS cannot carry", q);
	case POLICY_HOST_TOO_LONG:
		return FAIL(l, n, field, "%s is longer than 253 bytes, which DNS cannot carry", q);
	case POLICY_HOST_NUMERIC:
		return FAIL(l, n, field,
			    "%s ends in a number, so it is not a DNS name, and it is not a dotted quad; "
			    "write an IPv4 address as four decimal numbers from 0 to 255 without "
			    "leading zeros (e.g. 127.0.0.1)",
			    q);
	case POLICY_HOST_BAD_IPV6:
		return FAIL(l, n, field,
			    "%s is not an IPv6 address; write one without a zone (e.g. ::1, "
			    "2001:db8::1)",
			    q);
	case POLICY_HOST_STAR_ALL:
		return FAIL(l, n, field,
			    "%s would allow every host; list the hosts, or use \"*.example.com\" for "
			    "the names under one domain",
			    q);
	case POLICY_HOST_STAR_TLD:
		return FAIL(l, n, field,
			    "%s covers a whole top-level domain; give at least two labels after \"*.\" "
			    "(e.g. \"*.example.com\")",
			    q);
	case POLICY_HOST_STAR_POS:
		return FAIL(l, n, field,
			    "%s has a '*' that is not the whole first label; the only wildcard is \"*.\" "
			    "at the start (e.g. \"*.example.com\")",
			    q);
	case POLICY_HOST_STAR_IP:
		return FAIL(l, n, field,
			    "%s puts a wildcard before a number; a wildcard covers the subdomains of a "
			    "DNS name (e.g. \"*.example.com\")",
			    q);
	}
	return FAIL(l, n, field, "%s is not a host name", q);
}

static int load_host(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	char host[POLICY_HOST_MAX];
	enum policy_host_status st;
	int r;

	r = want_scalar(l, n, field, "a host name (e.g. api.example.com)");
	if (r < 0)
		return r;
	st = policy_host_normalize(n->str, host);
	if (st != POLICY_HOST_NAME && st != POLICY_HOST_WILDCARD && st != POLICY_HOST_IP)
		return bad_host(l, n, field, st, false);
	*out = strdup(host);
	if (!*out)
		return oom(l);
	return 0;
}

static int load_net_id(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	char q[96];
	int r;

	r = want_scalar(l, n, field, "an id (e.g. github)");
	if (r < 0)
		return r;
	if (!policy_id_valid(n->str)) {
		quote(n, q, sizeof(q));
		return FAIL(l, n, field,
			    "%s is not a valid id; use 1 to %d printable ASCII characters without spaces",
			    q, POLICY_ID_MAX);
	}
	*out = strdup(n->str);
	if (!*out)
		return oom(l);
	return 0;
}

static int load_ports(struct loader *l, const struct policy_ynode *n, const char *list,
		      struct policy_endpoint *ep)
{
	uint8_t seen[65536 / 8] = { 0 };
	int r;

	r = want_list(l, n, list);
	if (r < 0)
		return r;
	if (n->n == 0)
		return FAIL(l, n, list,
			    "is an empty list, which allows nothing; list ports (e.g. [443]), or omit "
			    "ports for [80, 443]");
	ep->ports = calloc(n->n, sizeof(*ep->ports));
	if (!ep->ports)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX], q[96];
		uint64_t v = 0;

		field_index(field, sizeof(field), list, i);
		r = want_scalar(l, e, field, "a port number from 1 to 65535");
		if (r < 0)
			return r;
		quote(e, q, sizeof(q));
		if (e->quoted)
			return FAIL(l, e, field, "%s is a quoted string; write the port without quotes",
				    q);
		if (policy_parse_uint(e->str, 65535, &v) != POLICY_NUM_OK || v == 0)
			return FAIL(l, e, field, "%s is not a port; use an integer from 1 to 65535", q);
		if (seen[v / 8] & (1u << (v % 8))) {
			size_t k = 0;
			while (k < ep->n_ports && ep->ports[k] != v)
				k++;
			return FAIL(l, e, field, "%s is listed twice (first at %s[%zu]); remove one", q,
				    list, k);
		}
		seen[v / 8] |= (uint8_t)(1u << (v % 8));
		ep->ports[i] = (uint16_t)v;
		ep->n_ports = i + 1;
	}
	return 0;
}

static bool has_port(const struct policy_endpoint *ep, uint16_t port)
{
	for (size_t i = 0; i < ep->n_ports; i++)
		if (ep->ports[i] == port)
			return true;
	return false;
}

/* A list of HTTP methods, stored upper-case in a new NULL-terminated array
 * (*methods, owned by the policy; *count entries filled so far). */
static int load_methods(struct loader *l, const struct policy_ynode *n, const char *list,
			char ***methods, size_t *count)
{
	int r;

	r = want_list(l, n, list);
	if (r < 0)
		return r;
	if (n->n == 0)
		return FAIL(l, n, list,
			    "is an empty list, which matches no request; list methods (e.g. [GET]), or "
			    "omit methods for any method");
	*methods = calloc(n->n + 1, sizeof(char *));
	if (!*methods)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX], q[96];
		char *m;

		field_index(field, sizeof(field), list, i);
		r = want_scalar(l, e, field, "an HTTP method (e.g. GET)");
		if (r < 0)
			return r;
		quote(e, q, sizeof(q));
		if (!policy_method_valid(e->str))
			return FAIL(l, e, field,
				    "%s is not an HTTP method; use a method name such as GET or POST "
				    "(omit methods for any method)",
				    q);
		m = strdup(e->str);
		if (!m)
			return oom(l);
		/* Methods are case-sensitive on the wire; the policy names
		 * them in the upper case every standard method uses. */
		for (char *c = m; *c; c++)
			if (*c >= 'a' && *c <= 'z')
				*c = (char)(*c - 'a' + 'A');
		for (size_t k = 0; k < i; k++) {
			if (strcmp((*methods)[k], m) == 0) {
				free(m);
				return FAIL(l, e, field, "%s is listed twice (first at %s[%zu]); remove one",
					    q, list, k);
			}
		}
		(*methods)[i] = m;
		*count = i + 1;
	}
	return 0;
}

static int load_glob(struct loader *l, const struct policy_ynode *n, const char *field, bool is_path,
		     char **out)
{
	const char *valid = is_path ? "a path glob starting with / (e.g. /repos/**)"
				    : "a query glob (e.g. \"page=*\")";
	char q[96];
	int r;

	/* A query may be "" (no query); a path never is. */
	if (is_path || !(n->type == POLICY_YNODE_SCALAR && n->quoted && n->len == 0)) {
		r = want_scalar(l, n, field, valid);
		if (r < 0)
			return r;
	}
	if (n->len == 0 && is_path)
		return FAIL(l, n, field, "is empty; expected %s", valid);
	quote(n, q, sizeof(q));
	switch (policy_glob_normalize(n->str, is_path, out)) {
	case POLICY_GLOB_OK:
		return 0;
	case POLICY_GLOB_SLASH:
		return FAIL(l, n, field,
			    "%s does not start with /; a path glob is matched against the whole path "
			    "(e.g. /repos/**)",
			    q);
	case POLICY_GLOB_CHAR:
		if (is_path)
			return FAIL(l, n, field,
				    "%s has a space, control character, non-ASCII byte, '#' or '?'; "
				    "percent-encode it as it appears in requests (e.g. %%20), and match "
				    "the query with query",
				    q);
		return FAIL(l, n, field,
			    "%s has a space, control character, non-ASCII byte or '#'; percent-encode "
			    "it as it appears in requests (e.g. %%20)",
			    q);
	case POLICY_GLOB_PERCENT:
		return FAIL(l, n, field,
			    "%s has a %% not followed by two hex digits; write %%25 for a literal %%", q);
	case POLICY_GLOB_NOMEM:
		break;
	}
	return oom(l);
}

static int load_rule(struct loader *l, const struct policy_ynode *n, const char *prefix,
		     struct policy_net_rule *rule)
{
	char field[POLICY_FIELD_MAX];
	const struct policy_ynode *v;
	int r;

	r = want_map(l, n, prefix);
	if (r < 0)
		return r;
	r = check_keys(l, n, prefix, "network.endpoints[].rules[]");
	if (r < 0)
		return r;
	rule->loc = loc_of(l, n);
	if ((v = map_get(n, "id"))) {
		field_join(field, sizeof(field), prefix, "id");
		r = load_net_id(l, v, field, &rule->id);
	} else {
		rule->id = strdup(prefix);
		r = rule->id ? 0 : oom(l);
	}
	if (r < 0)
		return r;
	if ((v = map_get(n, "methods"))) {
		field_join(field, sizeof(field), prefix, "methods");
		r = load_methods(l, v, field, &rule->methods, &rule->n_methods);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "path"))) {
		field_join(field, sizeof(field), prefix, "path");
		r = load_glob(l, v, field, true, &rule->path);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "query"))) {
		field_join(field, sizeof(field), prefix, "query");
		r = load_glob(l, v, field, false, &rule->query);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "websocket"))) {
		field_join(field, sizeof(field), prefix, "websocket");
		r = load_bool(l, v, field, &rule->websocket);
		if (r < 0)
			return r;
	}
	return 0;
}

/* access: read-only becomes one rule, named like its endpoint. */
static const char *const read_only_methods[] = { "GET", "HEAD", "OPTIONS" };

static int add_read_only(struct loader *l, const struct policy_ynode *n, struct policy_endpoint *ep)
{
	struct policy_net_rule *rule;

	ep->rules = calloc(1, sizeof(*ep->rules));
	if (!ep->rules)
		return oom(l);
	ep->n_rules = 1;
	rule = &ep->rules[0];
	rule->loc = loc_of(l, n);
	rule->id = strdup(ep->id);
	rule->methods = calloc(ARRAY_SIZE(read_only_methods) + 1, sizeof(char *));
	if (!rule->id || !rule->methods)
		return oom(l);
	for (size_t i = 0; i < ARRAY_SIZE(read_only_methods); i++) {
		rule->methods[i] = strdup(read_only_methods[i]);
		if (!rule->methods[i])
			return oom(l);
		rule->n_methods = i + 1;
	}
	return 0;
}

static int load_endpoint(struct loader *l, const struct policy_ynode *n, size_t idx,
			 struct policy_endpoint *ep)
{
	static const char *const tls_modes[] = { "passthrough", "intercept" };
	static const char *const protocols[] = { "http", "mcp" };
	static const char *const access_modes[] = { "read-only", "read-write" };
	char prefix[POLICY_FIELD_MAX], field[POLICY_FIELD_MAX];
	const struct policy_ynode *v, *access, *rules;
	int r, e;

	field_index(prefix, sizeof(prefix), "network.endpoints", idx);
	r = want_map(l, n, prefix);
	if (r < 0)
		return r;
	r = check_keys(l, n, prefix, "network.endpoints[]");
	if (r < 0)
		return r;
	ep->loc = loc_of(l, n);

	v = map_get(n, "host");
	if (!v)
		return FAIL(l, n, prefix,
			    "has no host; give the host it allows (e.g. {host: api.example.com, ports: "
			    "[443]})");
	field_join(field, sizeof(field), prefix, "host");
	r = load_host(l, v, field, &ep->host);
	if (r < 0)
		return r;

	if ((v = map_get(n, "id"))) {
		field_join(field, sizeof(field), prefix, "id");
		r = load_net_id(l, v, field, &ep->id);
	} else {
		ep->id = strdup(prefix);
		r = ep->id ? 0 : oom(l);
	}
	if (r < 0)
		return r;

	if ((v = map_get(n, "ports"))) {
		field_join(field, sizeof(field), prefix, "ports");
		r = load_ports(l, v, field, ep);
		if (r < 0)
			return r;
	} else {
		ep->ports = calloc(2, sizeof(*ep->ports));
		if (!ep->ports)
			return oom(l);
		ep->ports[0] = 80;
		ep->ports[1] = 443;
		ep->n_ports = 2;
	}

	if ((v = map_get(n, "tls"))) {
		field_join(field, sizeof(field), prefix, "tls");
		r = load_enum(l, v, field, tls_modes, ARRAY_SIZE(tls_modes), &e);
		if (r < 0)
			return r;
		ep->intercept = e == 1;
	}

	access = map_get(n, "access");
	rules = map_get(n, "rules");
	if (access) {
		field_join(field, sizeof(field), prefix, "access");
		const struct policy_ynode *k = map_key(n, "access");

		if (rules)
			return FAIL(l, k ? k : access, field,
				    "cannot be combined with rules; use access for a preset, or list "
				    "the requests in rules");
		r = load_enum(l, access, field, access_modes, ARRAY_SIZE(access_modes), &e);
		if (r < 0)
			return r;
		/* read-write is every request: no rules at all. */
		if (e == 0) {
			r = add_read_only(l, access, ep);
			if (r < 0)
				return r;
		}
	}
	if (rules) {
		field_join(field, sizeof(field), prefix, "rules");
		r = want_list(l, rules, field);
		if (r < 0)
			return r;
		if (rules->n == 0)
			return FAIL(l, rules, field,
				    "is an empty list; list the requests allowed, or omit rules to allow "
				    "every request");
		ep->rules = calloc(rules->n, sizeof(*ep->rules));
		if (!ep->rules)
			return oom(l);
		for (size_t i = 0; i < rules->n; i++) {
			char rprefix[POLICY_FIELD_MAX];

			field_index(rprefix, sizeof(rprefix), field, i);
			ep->n_rules = i + 1;
			r = load_rule(l, rules->items[i], rprefix, &ep->rules[i]);
			if (r < 0)
				return r;
		}
	}

	/* protocol: mcp: the requests are MCP messages for the gateway's
	 * engine; which mcp.servers entry decides them is checked once the
	 * mcp section is loaded (check_mcp_endpoints). */
	const struct policy_ynode *proto = map_get(n, "protocol"), *srvname = map_get(n, "mcp_server");
	int pe = 0;
	if (proto) {
		field_join(field, sizeof(field), prefix, "protocol");
		r = load_enum(l, proto, field, protocols, ARRAY_SIZE(protocols), &pe);
		if (r < 0)
			return r;
	}
	if (pe == 1) {
		field_join(field, sizeof(field), prefix, "mcp_server");
		if (!srvname)
			return FAIL(l, proto, field,
				    "is missing; protocol: mcp needs the mcp.servers entry whose rules decide "
				    "the calls (e.g. mcp_server: github)");
		r = load_string(l, srvname, field, "the name of an mcp.servers entry", false, &ep->mcp_server);
		if (r < 0)
			return r;
		ep->mcp_loc = loc_of(l, proto);
		/* Over passthrough TLS the proxy sees no message at all. */
		if (!ep->intercept && has_port(ep, 443)) {
			field_join(field, sizeof(field), prefix, "protocol");
			return FAIL(l, proto, field,
				    "mcp needs tls: intercept to see the messages inside HTTPS; add tls: "
				    "intercept, or list only plain-HTTP ports (ports: [80])");
		}
	} else if (srvname) {
		field_join(field, sizeof(field), prefix, "mcp_server");
		return FAIL(l, srvname, field, "is only meaningful with protocol: mcp; add protocol: mcp or remove it");
	}

	/* A passthrough TLS connection is opaque: the proxy sees the host
	 * (SNI) and nothing of the requests inside. */
	if (ep->n_rules > 0 && !ep->intercept && has_port(ep, 443)) {
		const struct policy_ynode *at = access ? access : rules;
		field_join(field, sizeof(field), prefix, access ? "access" : "rules");
		return FAIL(l, at, field,
			    "rules need tls: intercept to see inside HTTPS; add tls: intercept, or "
			    "list only plain-HTTP ports (ports: [80])");
	}
	return 0;
}

struct idref {
	const char *id;
	struct policy_loc loc;
	bool given;
	size_t ep, rule; /* rule == SIZE_MAX: the endpoint's own id */
};

static int idref_cmp(const void *a, const void *b)
{
	const struct idref *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	if (c)
		return c;
	if (x->loc.line != y->loc.line)
		return x->loc.line < y->loc.line ? -1 : 1;
	return (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
}

static void idref_name(const struct idref *r, char *buf, size_t size)
{
	if (r->rule == SIZE_MAX)
		snprintf(buf, size, "network.endpoints[%zu]", r->ep);
	else
		snprintf(buf, size, "network.endpoints[%zu].rules[%zu]", r->ep, r->rule);
}

/* Ids name the deciding rule in every record: each must be unique. A
 * clash always involves a given id (the defaults differ), and it is
 * reported there. */
static int check_net_ids(struct loader *l, const struct policy_ynode *eps)
{
	const struct policy_network *net = &l->p->network;
	_cleanup_free_ struct idref *refs = NULL;
	const struct idref *first = NULL, *again = NULL;
	size_t n = 0, total = net->n_endpoints;

	for (size_t i = 0; i < net->n_endpoints; i++)
		total += net->endpoints[i].n_rules;
	refs = calloc(total ? total : 1, sizeof(*refs));
	if (!refs)
		return oom(l);
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		const struct policy_ynode *epn = eps->items[i];
		const struct policy_ynode *idn = map_get(epn, "id");
		const struct policy_ynode *rules = map_get(epn, "rules");

		refs[n++] = (struct idref){ ep->id, idn ? loc_of(l, idn) : ep->loc, idn != NULL, i,
					    SIZE_MAX };
		/* The access preset's rule shares its endpoint's id. */
		if (!rules)
			continue;
		for (size_t j = 0; j < ep->n_rules; j++) {
			idn = map_get(rules->items[j], "id");
			refs[n++] = (struct idref){ ep->rules[j].id,
						    idn ? loc_of(l, idn) : ep->rules[j].loc,
						    idn != NULL, i, j };
		}
	}
	qsort(refs, n, sizeof(*refs), idref_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1, given = 0;
		const struct idref *g1 = NULL, *g2 = NULL, *a, *f;

		while (j < n && strcmp(refs[j].id, refs[i].id) == 0)
			j++;
		if (j - i < 2) {
			i = j;
			continue;
		}
		for (size_t k = i; k < j; k++) {
			if (!refs[k].given)
				continue;
			if (given == 0)
				g1 = &refs[k];
			else if (given == 1)
				g2 = &refs[k];
			given++;
		}
		/* Report at the second given id, or at the only one. */
		a = g2 ? g2 : g1;
		f = a == &refs[i] ? &refs[i + 1] : &refs[i];
		if (a && (!again || loc_before(&a->loc, &again->loc))) {
			again = a;
			first = f;
		}
		i = j;
	}
	if (again) {
		char field[POLICY_FIELD_MAX], other[POLICY_FIELD_MAX], q[96];

		idref_name(again, field, sizeof(field));
		strncat(field, ".id", sizeof(field) - strlen(field) - 1);
		idref_name(first, other, sizeof(other));
		policy_quote(again->id, strlen(again->id), q, sizeof(q));
		return policy_fail(l->err, l->p->file, again->loc.line, again->loc.col, field,
				   "%s is also the id of %s (line %u); give each endpoint and rule "
				   "its own id",
				   q, other, first->loc.line);
	}
	return 0;
}

/* The first endpoint that matches decides, so an entry whose host and
 * port an earlier entry already matches would never be used: refused. */
static int check_net_endpoints(struct loader *l, const struct policy_ynode *eps)
{
	const struct policy_network *net = &l->p->network;
	_cleanup_free_ uint8_t *ports = calloc(65536 / 8, 1);

	if (!ports)
		return oom(l);
	for (size_t j = 1; j < net->n_endpoints; j++) {
		const struct policy_endpoint *b = &net->endpoints[j];
		int r = 0;

		for (size_t k = 0; k < b->n_ports; k++)
			ports[b->ports[k] / 8] |= (uint8_t)(1u << (b->ports[k] % 8));
		for (size_t i = 0; i < j && r == 0; i++) {
			const struct policy_endpoint *a = &net->endpoints[i];

			if (!policy_host_covers(a->host, b->host))
				continue;
			for (size_t k = 0; k < a->n_ports; k++) {
				uint16_t port = a->ports[k];
				const struct policy_ynode *at;
				char field[POLICY_FIELD_MAX], q[96], qa[96];

				if (!(ports[port / 8] & (1u << (port % 8))))
					continue;
				at = map_get(eps->items[j], "host");
				field_index(field, sizeof(field), "network.endpoints", j);
				strncat(field, ".host", sizeof(field) - strlen(field) - 1);
				policy_quote(b->host, strlen(b->host), q, sizeof(q));
				policy_quote(a->host, strlen(a->host), qa, sizeof(qa));
				if (strcmp(a->host, b->host) == 0)
					r = FAIL(l, at, field,
						 "%s port %u is also in network.endpoints[%zu] (line %u); "
						 "give each host and port once (merge the two entries)",
						 q, port, i, a->loc.line);
				else
					r = FAIL(l, at, field,
						 "%s port %u is already matched by network.endpoints[%zu] "
						 "(%s, line %u), which comes first and decides; put the "
						 "more specific entry first, or drop the port from one",
						 q, port, i, qa, a->loc.line);
				break;
			}
		}
		for (size_t k = 0; k < b->n_ports; k++)
			ports[b->ports[k] / 8] = 0;
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_endpoints(struct loader *l, const struct policy_ynode *n)
{
	struct policy_network *net = &l->p->network;
	int r;

	r = want_list(l, n, "network.endpoints");
	if (r < 0)
		return r;
	if (n->n == 0)
		return 0;
	net->endpoints = calloc(n->n, sizeof(*net->endpoints));
	if (!net->endpoints)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		net->n_endpoints = i + 1;
		r = load_endpoint(l, n->items[i], i, &net->endpoints[i]);
		if (r < 0)
			return r;
	}
	r = check_net_ids(l, n);
	if (r < 0)
		return r;
	return check_net_endpoints(l, n);
}

static int load_allow_private(struct loader *l, const struct policy_ynode *n)
{
	struct policy_network *net = &l->p->network;
	int r;

	r = want_list(l, n, "network.allow_private");
	if (r < 0)
		return r;
	if (n->n == 0)
		return 0;
	net->allow_private = calloc(n->n, sizeof(*net->allow_private));
	if (!net->allow_private)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		struct policy_cidr *c = &net->allow_private[i];
		char field[POLICY_FIELD_MAX], q[96], fixed[80];

		field_index(field, sizeof(field), "network.allow_private", i);
		r = want_scalar(l, e, field, "an address or range (e.g. 10.0.0.0/8, 127.0.0.1:8080)");
		if (r < 0)
			return r;
		quote(e, q, sizeof(q));
		switch (policy_cidr_parse(e->str, c)) {
		case POLICY_CIDR_OK:
			break;
		case POLICY_CIDR_SYNTAX:
			return FAIL(l, e, field,
				    "%s is not an address or range; write ADDRESS[/PREFIX][:PORT] (e.g. "
				    "10.0.0.0/8, 127.0.0.1:8080, fd00::/8, [::1]:9000: an IPv6 address "
				    "with a port needs brackets)",
				    q);
		case POLICY_CIDR_PREFIX:
			return FAIL(l, e, field,
				    "%s has an invalid prefix length; use /0 to /32 for IPv4, /0 to /128 "
				    "for IPv6",
				    q);
		case POLICY_CIDR_PORT:
			return FAIL(l, e, field,
				    "%s has an invalid port; use 1 to 65535, or no port for every port", q);
		case POLICY_CIDR_HOST_BITS:
			policy_cidr_format(c, fixed, sizeof(fixed));
			return FAIL(l, e, field, "%s has bits set past its prefix length; write %s", q,
				    fixed);
		case POLICY_CIDR_MAPPED:
			return FAIL(l, e, field,
				    "%s is an IPv4-mapped or IPv4-compatible IPv6 range, which never "
				    "matches: those addresses are checked as IPv4; write the IPv4 address "
				    "or range (and an IPv6 address with a port in brackets: [::1]:9000)",
				    q);
		}
		c->loc = loc_of(l, e);
		net->n_allow_private = i + 1;
		for (size_t k = 0; k < i; k++) {
			const struct policy_cidr *o = &net->allow_private[k];
			if (o->family == c->family && o->prefix == c->prefix && o->port == c->port &&
			    memcmp(o->addr, c->addr, sizeof(c->addr)) == 0)
				return FAIL(l, e, field,
					    "%s is listed twice (first at network.allow_private[%zu], line "
					    "%u); remove one",
					    q, k, o->loc.line);
		}
	}
	return 0;
}

static int load_resolve(struct loader *l, const struct policy_ynode *n)
{
	struct policy_network *net = &l->p->network;
	size_t count = n->n / 2;
	int r;

	r = want_map(l, n, "network.resolve");
	if (r < 0)
		return r;
	if (count == 0)
		return 0;
	net->resolve = calloc(count, sizeof(*net->resolve));
	if (!net->resolve)
		return oom(l);
	for (size_t i = 0; i < count; i++) {
		const struct policy_ynode *k = n->items[2 * i], *v = n->items[2 * i + 1];
		struct policy_resolve *e = &net->resolve[i];
		char field[POLICY_FIELD_MAX] = "network.resolve";
		char host[POLICY_HOST_MAX], addr[POLICY_HOST_MAX], q[96];
		enum policy_host_status st;

		policy_field_append_key(field, sizeof(field), k->str, k->len);
		st = policy_host_normalize(k->str, host);
		if (st != POLICY_HOST_NAME)
			return bad_host(l, k, field, st, true);
		for (size_t j = 0; j < i; j++) {
			if (strcmp(net->resolve[j].host, host) == 0) {
				quote(k, q, sizeof(q));
				return FAIL(l, k, field,
					    "%s is the same name as the entry at line %u; give each name "
					    "once",
					    q, net->resolve[j].loc.line);
			}
		}
		r = want_scalar(l, v, field, "an IP address (e.g. 127.0.0.1 or ::1)");
		if (r < 0)
			return r;
		if (!policy_addr_canon(v->str, addr)) {
			quote(v, q, sizeof(q));
			return FAIL(l, v, field,
				    "%s is not an IP address; write an IPv4 dotted quad or an IPv6 "
				    "address (e.g. 127.0.0.1, ::1)",
				    q);
		}
		e->host = strdup(host);
		e->addr = strdup(addr);
		e->loc = loc_of(l, k);
		net->n_resolve = i + 1;
		if (!e->host || !e->addr)
			return oom(l);
	}
	return 0;
}

#define MAX_BODY_LIMIT (UINT64_C(1) << 30)

static int load_leak_scan(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	const struct policy_ynode *v;
	int r;

	r = want_map(l, n, "network.leak_scan");
	if (r < 0)
		return r;
	r = check_keys(l, n, "network.leak_scan", "network.leak_scan");
	if (r < 0)
		return r;
	if ((v = map_get(n, "max_body"))) {
		const char *field = "network.leak_scan.max_body";
		uint64_t size = 0;
		char q[96];

		r = want_scalar(l, v, field, "a size (e.g. 1MiB)");
		if (r < 0)
			return r;
		quote(v, q, sizeof(q));
		if (strcmp(v->str, "unlimited") == 0)
			return FAIL(l, v, field,
				    "cannot be unlimited: a body is held while it is scanned; give a "
				    "size up to 1GiB (e.g. 1MiB)");
		switch (policy_parse_size(v->str, &size)) {
		case POLICY_NUM_OK:
			break;
		case POLICY_NUM_SYNTAX:
			return FAIL(l, v, field, "%s is not a size (e.g. 64KiB, 1MiB)", q);
		case POLICY_NUM_RANGE:
			size = UINT64_MAX;
			break;
		}
		if (size == 0)
			return FAIL(l, v, field, "%s would scan nothing; give a size (e.g. 1MiB)", q);
		if (size > MAX_BODY_LIMIT)
			return FAIL(l, v, field, "%s is larger than 1GiB, the most that is scanned", q);
		p->network.max_body = size;
		p->origin.max_body = loc_of(l, v);
	}
	if ((v = map_get(n, "allow_compressed"))) {
		r = load_bool(l, v, "network.leak_scan.allow_compressed",
			      &p->network.allow_compressed);
		if (r < 0)
			return r;
		p->origin.allow_compressed = loc_of(l, v);
	}
	return 0;
}

static int load_network(struct loader *l, const struct policy_ynode *key,
			const struct policy_ynode *n)
{
	static const char *const modes[] = { "proxy", "transparent" };
	static const char *const defaults[] = { "deny" };
	struct policy *p = l->p;
	struct policy_network *net = &p->network;
	const struct policy_ynode *v;
	int r, e;

	r = want_map(l, n, "network");
	if (r < 0)
		return r;
	r = check_keys(l, n, "network", "network");
	if (r < 0)
		return r;
	net->mode = POLICY_NET_PROXY;
	net->loc = loc_of(l, key ? key : n);
	if ((v = map_get(n, "mode"))) {
		r = load_enum(l, v, "network.mode", modes, ARRAY_SIZE(modes), &e);
		if (r < 0)
			return r;
		net->mode = e == 0 ? POLICY_NET_PROXY : POLICY_NET_TRANSPARENT;
		p->origin.net_mode = loc_of(l, v);
	}
	/* Only deny exists; the key lets a policy say so. */
	if ((v = map_get(n, "default"))) {
		r = load_enum(l, v, "network.default", defaults, ARRAY_SIZE(defaults), &e);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "endpoints"))) {
		r = load_endpoints(l, v);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "allow_private"))) {
		r = load_allow_private(l, v);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "resolve"))) {
		r = load_resolve(l, v);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "upstream_ca"))) {
		r = load_path(l, v, "network.upstream_ca", true, &net->upstream_ca);
		if (r < 0)
			return r;
		p->origin.upstream_ca = loc_of(l, v);
	}
	if ((v = map_get(n, "leak_scan"))) {
		r = load_leak_scan(l, v);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "log"))) {
		r = load_path(l, v, "network.log", true, &net->log);
		if (r < 0)
			return r;
		p->origin.net_log = loc_of(l, v);
	}
	return 0;
}

/* ---- credentials ---- */

#define CRED_NAME_MAX 64
#define CRED_TOKEN_MAX 128 /* header and query parameter names */
#define CRED_SECRET "{secret}"

static bool cred_name_valid(const char *s, size_t len)
{
	if (len == 0 || len > CRED_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* An HTTP field name (RFC 9110 token). */
static bool header_name_valid(const char *s, size_t len)
{
	if (len == 0 || len > CRED_TOKEN_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", c)))
			return false;
	}
	return true;
}

static bool query_name_valid(const char *s, size_t len)
{
	if (len == 0 || len > CRED_TOKEN_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* Headers that frame or route the request, or that the next hop consumes:
 * a secret placed there would change what the request means (a second
 * Content-Length smuggles a request) or never reach the service. */
static const char *const framing_headers[] = {
	"host",		    "content-length",	   "transfer-encoding", "connection",
	"keep-alive",	    "proxy-connection",	   "proxy-authorization", "te",
	"trailer",	    "upgrade",
};

static bool is_framing_header(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(framing_headers); i++)
		if (strcasecmp(s, framing_headers[i]) == 0)
			return true;
	return false;
}

static size_t count_secret(const char *s)
{
	size_t n = 0;

	for (const char *at = strstr(s, CRED_SECRET); at; at = strstr(at + 1, CRED_SECRET))
		n++;
	return n;
}

/* A grant that lets the agent reach path (read it, or with want_write
 * change it): "the workspace", "filesystem.read" or "filesystem.write"
 * with *idx set, or NULL when none does or a filesystem.deny entry hides
 * it. Lexical, like every other path comparison in the policy. */
static const char *agent_reaches(const struct policy *p, const char *path, bool want_write,
				 size_t *idx)
{
	const struct policy_paths *deny = &p->filesystem.deny;

	for (size_t i = 0; i < deny->n; i++)
		if (policy_path_is_under(path, deny->v[i].path))
			return NULL;
	*idx = SIZE_MAX;
	if (p->sandbox.workspace && policy_path_is_under(path, p->sandbox.workspace))
		return "the workspace";
	for (size_t i = 0; i < p->filesystem.write.n; i++) {
		if (policy_path_is_under(path, p->filesystem.write.v[i].path)) {
			*idx = i;
			return "filesystem.write";
		}
	}
	if (want_write)
		return NULL;
	for (size_t i = 0; i < p->filesystem.read.n; i++) {
		if (policy_path_is_under(path, p->filesystem.read.v[i].path)) {
			*idx = i;
			return "filesystem.read";
		}
	}
	return NULL;
}

/* "the workspace" or "filesystem.read[2] (line 7)". */
static void grant_name(const struct policy *p, const char *grant, size_t idx, char *buf,
		       size_t size)
{
	const struct policy_paths *ps =
		strcmp(grant, "filesystem.read") == 0 ? &p->filesystem.read : &p->filesystem.write;

	if (idx == SIZE_MAX)
		snprintf(buf, size, "%s", grant);
	else
		snprintf(buf, size, "%s[%zu] (line %u)", grant, idx, ps->v[idx].loc.line);
}

static int load_cred_source(struct loader *l, const struct policy_ynode *n, const char *field,
			    struct policy_credential *c)
{
	const char *valid = "env:NAME or file:PATH (e.g. env:GITHUB_TOKEN)";
	char q[96];
	int r;

	r = want_scalar(l, n, field, valid);
	if (r < 0)
		return r;
	quote(n, q, sizeof(q));
	if (strncmp(n->str, "env:", 4) == 0) {
		const char *name = n->str + 4;

		if (!valid_env_name(name, strlen(name)))
			return FAIL(l, n, field,
				    "%s does not name a variable after env:; use letters, digits and _, "
				    "not starting with a digit (e.g. env:GITHUB_TOKEN)",
				    q);
		c->source = POLICY_CRED_ENV;
		c->source_arg = strdup(name);
		return c->source_arg ? 0 : oom(l);
	}
	if (strncmp(n->str, "file:", 5) == 0) {
		const char *grant;
		char where[POLICY_FIELD_MAX + 32];
		size_t idx;

		if (n->str[5] == '\0')
			return FAIL(l, n, field,
				    "%s has no path after file:; write file:PATH (absolute, ~/..., or "
				    "relative to the policy file)",
				    q);
		r = resolve_path(l, n, n->str + 5, field, true, &c->source_arg);
		if (r < 0)
			return r;
		c->source = POLICY_CRED_FILE;
		/* The secret must stay outside the sandbox. */
		grant = agent_reaches(l->p, c->source_arg, false, &idx);
		if (grant) {
			grant_name(l->p, grant, idx, where, sizeof(where));
			return FAIL(l, n, field,
				    "%s is inside %s, where the agent can read the secret itself; keep "
				    "the file outside the paths the agent sees, or hide it with "
				    "filesystem.deny",
				    q, where);
		}
		return 0;
	}
	return FAIL(l, n, field,
		    "%s does not start with env: or file:; write env:NAME for a variable of airlock's "
		    "own environment or file:PATH for a file, or give command: [PROGRAM, ARGS...] "
		    "instead of source",
		    q);
}

static int load_cred_command(struct loader *l, const struct policy_ynode *n, const char *list,
			     struct policy_credential *c)
{
	int r;

	r = want_list(l, n, list);
	if (r < 0)
		return r;
	if (n->n == 0)
		return FAIL(l, n, list,
			    "is an empty list; give the program and its arguments (e.g. "
			    "[/usr/bin/gh, auth, token])");
	c->command = calloc(n->n + 1, sizeof(char *));
	if (!c->command)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX];

		field_index(field, sizeof(field), list, i);
		if (i > 0) {
			r = load_string(l, e, field, "an argument (use \"\" for an empty one)", true,
					&c->command[i]);
			if (r < 0)
				return r;
			c->n_command = i + 1;
			continue;
		}
		r = load_string(l, e, field, "a program (an absolute path, or a name looked up in PATH)",
				false, &c->command[0]);
		if (r < 0)
			return r;
		c->n_command = 1;
		if (strchr(e->str, '/') || e->str[0] == '~' || e->str[0] == '$') {
			const char *grant;
			char q[96], where[POLICY_FIELD_MAX + 32];
			size_t idx;

			free(c->command[0]);
			c->command[0] = NULL;
			r = load_path(l, e, field, true, &c->command[0]);
			if (r < 0)
				return r;
			/* airlock runs the program outside the sandbox: one the
			 * agent can replace would run the agent's code there. */
			grant = agent_reaches(l->p, c->command[0], true, &idx);
			if (grant) {
				quote(e, q, sizeof(q));
				grant_name(l->p, grant, idx, where, sizeof(where));
				return FAIL(l, e, field,
					    "%s is inside %s, which the agent can write: it could replace "
					    "the program that airlock runs outside the sandbox; use a "
					    "program installed elsewhere (e.g. /usr/bin/gh)",
					    q, where);
			}
		}
	}
	return 0;
}

static int load_port(struct loader *l, const struct policy_ynode *n, const char *field,
		     uint16_t *out)
{
	uint64_t v = 0;
	char q[96];
	int r;

	r = want_scalar(l, n, field, "a port number from 1 to 65535");
	if (r < 0)
		return r;
	quote(n, q, sizeof(q));
	if (n->quoted)
		return FAIL(l, n, field, "%s is a quoted string; write the port without quotes", q);
	if (policy_parse_uint(n->str, 65535, &v) != POLICY_NUM_OK || v == 0)
		return FAIL(l, n, field, "%s is not a port; use an integer from 1 to 65535", q);
	*out = (uint16_t)v;
	return 0;
}

/* A list of path globs into a new NULL-terminated array. */
static int load_glob_list(struct loader *l, const struct policy_ynode *n, const char *list,
			  const char *what, char ***out, size_t *count)
{
	int r;

	r = want_list(l, n, list);
	if (r < 0)
		return r;
	if (n->n == 0)
		return FAIL(l, n, list,
			    "is an empty list, which matches no %s; list globs (e.g. [/repos/**]), or "
			    "omit it for any %s",
			    what, what);
	*out = calloc(n->n + 1, sizeof(char *));
	if (!*out)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		char field[POLICY_FIELD_MAX];

		field_index(field, sizeof(field), list, i);
		r = load_glob(l, n->items[i], field, true, &(*out)[i]);
		if (r < 0)
			return r;
		*count = i + 1;
	}
	return 0;
}

/* A ref glob: a full ref name ("refs/...") with '*' and '**'. */
static int load_ref_globs(struct loader *l, const struct policy_ynode *n, const char *list,
			  char ***out, size_t *count)
{
	int r;

	r = want_list(l, n, list);
	if (r < 0)
		return r;
	/* push: [] is no push, as when it is absent. */
	if (n->n == 0)
		return 0;
	*out = calloc(n->n + 1, sizeof(char *));
	if (!*out)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX], q[96];

		field_index(field, sizeof(field), list, i);
		r = want_scalar(l, e, field, "a ref glob (e.g. refs/heads/agent/**)");
		if (r < 0)
			return r;
		quote(e, q, sizeof(q));
		if (strncmp(e->str, "refs/", 5) != 0 || e->len == 5)
			return FAIL(l, e, field,
				    "%s does not start with refs/; name full refs (e.g. "
				    "refs/heads/agent/**)",
				    q);
		for (size_t k = 0; k < e->len; k++) {
			unsigned char c = (unsigned char)e->str[k];
			if (c <= 0x20 || c >= 0x7f || strchr("~^:?[\\", c))
				return FAIL(l, e, field,
					    "%s has a character git does not allow in ref names (space, "
					    "control, non-ASCII, ~ ^ : ? [ \\); the wildcards are * and **",
					    q);
		}
		if (strstr(e->str, "..") || strstr(e->str, "//") || e->str[e->len - 1] == '/')
			return FAIL(l, e, field,
				    "%s has \"..\", \"//\" or a trailing /, which no ref name has; write "
				    "e.g. refs/heads/agent/**",
				    q);
		(*out)[i] = strdup(e->str);
		if (!(*out)[i])
			return oom(l);
		*count = i + 1;
	}
	return 0;
}

static int load_git(struct loader *l, const struct policy_ynode *n, const char *prefix,
		    struct policy_git_binding *g)
{
	char field[POLICY_FIELD_MAX];
	const struct policy_ynode *v;
	int r;

	r = want_map(l, n, prefix);
	if (r < 0)
		return r;
	r = check_keys(l, n, prefix, "credentials[].bindings[].git");
	if (r < 0)
		return r;
	g->loc = loc_of(l, n);
	g->fetch = true;
	if ((v = map_get(n, "repos"))) {
		field_join(field, sizeof(field), prefix, "repos");
		r = load_glob_list(l, v, field, "repository", &g->repos, &g->n_repos);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "fetch"))) {
		field_join(field, sizeof(field), prefix, "fetch");
		r = load_bool(l, v, field, &g->fetch);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "push"))) {
		field_join(field, sizeof(field), prefix, "push");
		r = load_ref_globs(l, v, field, &g->push, &g->n_push);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "delete"))) {
		field_join(field, sizeof(field), prefix, "delete");
		r = load_bool(l, v, field, &g->delete_refs);
		if (r < 0)
			return r;
		if (g->delete_refs && g->n_push == 0)
			return FAIL(l, v, field,
				    "true lets refs that push matches be deleted, and push matches none; "
				    "give push globs, or drop delete");
	}
	if ((v = map_get(n, "tags"))) {
		field_join(field, sizeof(field), prefix, "tags");
		r = load_bool(l, v, field, &g->tags);
		if (r < 0)
			return r;
	}
	if (!g->fetch && g->n_push == 0 && !g->tags)
		return FAIL(l, n, prefix,
			    "allows no git operation (fetch: false, no push globs, tags: false); allow "
			    "one, or remove the binding");
	return 0;
}

static int load_binding(struct loader *l, const struct policy_ynode *n, const char *prefix,
			struct policy_cred_binding *b)
{
	static const char *const wheres[] = { "header", "basic", "query" };
	char field[POLICY_FIELD_MAX], q[96];
	const struct policy_ynode *v, *where_key = NULL, *tmpl;
	int r;

	r = want_map(l, n, prefix);
	if (r < 0)
		return r;
	r = check_keys(l, n, prefix, "credentials[].bindings[]");
	if (r < 0)
		return r;

	v = map_get(n, "host");
	if (!v)
		return FAIL(l, n, prefix,
			    "has no host; give the host the secret is for (e.g. {host: api.github.com})");
	field_join(field, sizeof(field), prefix, "host");
	r = load_host(l, v, field, &b->host);
	if (r < 0)
		return r;
	/* At the host: the binding's problems with the network are there. */
	b->loc = loc_of(l, v);

	if ((v = map_get(n, "id"))) {
		field_join(field, sizeof(field), prefix, "id");
		r = load_net_id(l, v, field, &b->id);
	} else {
		b->id = strdup(prefix);
		r = b->id ? 0 : oom(l);
	}
	if (r < 0)
		return r;

	b->port = 443;
	if ((v = map_get(n, "port"))) {
		field_join(field, sizeof(field), prefix, "port");
		r = load_port(l, v, field, &b->port);
		if (r < 0)
			return r;
	}

	/* One place for the secret; the keys are checked in file order so
	 * that the second one is reported. */
	b->where = POLICY_CRED_HEADER;
	for (size_t i = 0; i < n->n; i += 2) {
		const struct policy_ynode *k = n->items[i];

		for (size_t w = 0; w < ARRAY_SIZE(wheres); w++) {
			if (strcmp(k->str, wheres[w]) != 0)
				continue;
			field_join(field, sizeof(field), prefix, wheres[w]);
			if (where_key)
				return FAIL(l, k, field,
					    "cannot be combined with %s; a binding puts the secret in one "
					    "place: header, basic or query",
					    where_key->str);
			where_key = k;
			b->where = (enum policy_cred_where)w;
		}
	}

	tmpl = map_get(n, "template");
	switch (b->where) {
	case POLICY_CRED_HEADER:
		if ((v = map_get(n, "header"))) {
			field_join(field, sizeof(field), prefix, "header");
			r = want_scalar(l, v, field, "a header name (e.g. Authorization)");
			if (r < 0)
				return r;
			quote(v, q, sizeof(q));
			if (!header_name_valid(v->str, v->len))
				return FAIL(l, v, field,
					    "%s is not a header name; use 1 to %d letters, digits and "
					    "!#$%%&'*+-.^_`|~ (e.g. Authorization, X-Api-Key)",
					    q, CRED_TOKEN_MAX);
			if (is_framing_header(v->str))
				return FAIL(l, v, field,
					    "%s frames or routes the request, or is consumed by the next "
					    "hop, so a secret cannot go there; name the header the service "
					    "reads it from (e.g. Authorization)",
					    q);
			b->header = strdup(v->str);
		} else {
			b->header = strdup("Authorization");
		}
		if (!b->header)
			return oom(l);
		if (tmpl) {
			size_t count;

			field_join(field, sizeof(field), prefix, "template");
			r = load_string(l, tmpl, field,
					"a header value holding {secret} (e.g. \"Bearer {secret}\")", false,
					&b->tmpl);
			if (r < 0)
				return r;
			quote(tmpl, q, sizeof(q));
			for (size_t i = 0; i < tmpl->len; i++) {
				unsigned char c = (unsigned char)tmpl->str[i];
				/* CR or LF would start another header line. */
				if ((c < 0x20 && c != '\t') || c >= 0x7f)
					return FAIL(l, tmpl, field,
						    "%s has a control character or a non-ASCII byte; a "
						    "header value is printable ASCII",
						    q);
			}
			count = count_secret(b->tmpl);
			if (count != 1)
				return FAIL(l, tmpl, field,
					    "%s holds {secret} %s; write it exactly once where the secret "
					    "goes (e.g. \"Bearer {secret}\")",
					    q, count == 0 ? "nowhere" : "more than once");
		} else {
			b->tmpl = strdup("Bearer " CRED_SECRET);
			if (!b->tmpl)
				return oom(l);
		}
		break;
	case POLICY_CRED_BASIC: {
		const struct policy_ynode *u;

		field_join(field, sizeof(field), prefix, "basic");
		v = map_get(n, "basic");
		r = want_map(l, v, field);
		if (r < 0)
			return r;
		r = check_keys(l, v, field, "credentials[].bindings[].basic");
		if (r < 0)
			return r;
		if ((u = map_get(v, "username"))) {
			field_join(field, sizeof(field), prefix, "basic.username");
			r = load_string(l, u, field, "a user name (use \"\" for none)", true,
					&b->username);
			if (r < 0)
				return r;
			quote(u, q, sizeof(q));
			for (size_t i = 0; i < u->len; i++) {
				unsigned char c = (unsigned char)u->str[i];
				/* RFC 7617: the user-id ends at the first colon. */
				if (c < 0x20 || c == 0x7f || c == ':')
					return FAIL(l, u, field,
						    "%s has a colon or a control character; Basic "
						    "authentication cannot carry them in a user name",
						    q);
			}
		} else {
			b->username = strdup("");
			if (!b->username)
				return oom(l);
		}
		break;
	}
	case POLICY_CRED_QUERY:
		field_join(field, sizeof(field), prefix, "query");
		v = map_get(n, "query");
		r = want_scalar(l, v, field, "a query parameter name (e.g. api_key)");
		if (r < 0)
			return r;
		if (!query_name_valid(v->str, v->len)) {
			quote(v, q, sizeof(q));
			return FAIL(l, v, field,
				    "%s is not a parameter name; use 1 to %d letters, digits, '_', '.' "
				    "and '-' (e.g. api_key)",
				    q, CRED_TOKEN_MAX);
		}
		b->query = strdup(v->str);
		if (!b->query)
			return oom(l);
		break;
	}
	if (tmpl && b->where != POLICY_CRED_HEADER) {
		field_join(field, sizeof(field), prefix, "template");
		return FAIL(l, key_or(n, "template", tmpl), field,
			    "only goes with header; %s puts the secret in %s, without a template",
			    where_key->str,
			    b->where == POLICY_CRED_BASIC ? "Authorization: Basic" : "the query");
	}

	if ((v = map_get(n, "methods"))) {
		field_join(field, sizeof(field), prefix, "methods");
		r = load_methods(l, v, field, &b->methods, &b->n_methods);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "paths"))) {
		field_join(field, sizeof(field), prefix, "paths");
		if (map_get(n, "git"))
			return FAIL(l, key_or(n, "paths", v), field,
				    "cannot be combined with git: git chooses the paths of its requests "
				    "itself; limit the repositories with git.repos");
		r = load_glob_list(l, v, field, "request", &b->paths, &b->n_paths);
		if (r < 0)
			return r;
	}
	if ((v = map_get(n, "git"))) {
		field_join(field, sizeof(field), prefix, "git");
		if (b->where == POLICY_CRED_QUERY)
			return FAIL(l, key_or(n, "git", v), field,
				    "needs header or basic: git sends credentials in a header, never in "
				    "the query");
		b->git = calloc(1, sizeof(*b->git));
		if (!b->git)
			return oom(l);
		r = load_git(l, v, field, b->git);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A credential's variable holds its placeholder: the caller's value
 * passed in (process.env.pass) could be the real secret, and a fixed value
 * (process.env.set) would replace the placeholder. n is the name; the
 * credentials before idx are loaded. */
static int check_cred_env(struct loader *l, const struct policy_ynode *n, const char *field,
			  size_t idx)
{
	struct policy *p = l->p;
	char q[96];

	quote(n, q, sizeof(q));
	for (size_t k = 0; k < idx; k++)
		if (p->credentials[k].env && strcmp(p->credentials[k].env, n->str) == 0)
			return FAIL(l, n, field,
				    "%s is also the variable of credentials[%zu] (line %u); give each "
				    "credential its own variable",
				    q, k, p->credentials[k].loc.line);
	for (size_t k = 0; k < p->process.n_env_set; k++)
		if (strcmp(p->process.env_set[k].name, n->str) == 0)
			return FAIL(l, n, field,
				    "%s is also in process.env.set (line %u), whose fixed value would "
				    "replace the placeholder; remove it from set",
				    q, p->process.env_set[k].loc.line);
	for (size_t k = 0; k < p->process.n_env_pass; k++) {
		if (strcmp(p->process.env_pass[k], n->str) != 0)
			continue;
		if (l->pass_given)
			return FAIL(l, n, field,
				    "%s is also in process.env.pass[%zu] (line %u), which would hand the "
				    "agent the caller's value, perhaps the real secret; remove it from "
				    "pass",
				    q, k, p->process.env_pass_loc[k].line);
		/* The default pass list yields, as it does to set. */
		free(p->process.env_pass[k]);
		memmove(&p->process.env_pass[k], &p->process.env_pass[k + 1],
			(p->process.n_env_pass - k) * sizeof(char *));
		memmove(&p->process.env_pass_loc[k], &p->process.env_pass_loc[k + 1],
			(p->process.n_env_pass - k - 1) * sizeof(struct policy_loc));
		p->process.n_env_pass--;
		break;
	}
	return 0;
}

static int load_credential(struct loader *l, const struct policy_ynode *n, size_t idx,
			   struct policy_credential *c)
{
	static const char *const injects[] = { "placeholder", "always" };
	char prefix[POLICY_FIELD_MAX], field[POLICY_FIELD_MAX], q[96];
	const struct policy_ynode *v, *src, *cmd, *bindings;
	int r, e;

	field_index(prefix, sizeof(prefix), "credentials", idx);
	r = want_map(l, n, prefix);
	if (r < 0)
		return r;
	r = check_keys(l, n, prefix, "credentials[]");
	if (r < 0)
		return r;
	c->loc = loc_of(l, n);

	v = map_get(n, "name");
	if (!v)
		return FAIL(l, n, prefix, "has no name; give one (e.g. name: github)");
	field_join(field, sizeof(field), prefix, "name");
	r = want_scalar(l, v, field, "a name (e.g. github)");
	if (r < 0)
		return r;
	if (!cred_name_valid(v->str, v->len)) {
		quote(v, q, sizeof(q));
		return FAIL(l, v, field,
			    "%s is not a valid name; use 1 to %d lower-case letters, digits, '_' and "
			    "'-'",
			    q, CRED_NAME_MAX);
	}
	for (size_t k = 0; k < idx; k++) {
		const struct policy_credential *o = &l->p->credentials[k];

		if (strcmp(o->name, v->str) == 0) {
			quote(v, q, sizeof(q));
			return FAIL(l, v, field,
				    "%s is also the name of credentials[%zu] (line %u); give each "
				    "credential its own name",
				    q, k, o->loc.line);
		}
	}
	c->name = strdup(v->str);
	if (!c->name)
		return oom(l);

	src = map_get(n, "source");
	cmd = map_get(n, "command");
	if (src && cmd) {
		field_join(field, sizeof(field), prefix, "command");
		return FAIL(l, key_or(n, "command", cmd), field,
			    "cannot be combined with source; give one: source: env:NAME or "
			    "file:PATH, or command: [PROGRAM, ARGS...]");
	}
	if (!src && !cmd)
		return FAIL(l, n, prefix,
			    "has no source; give source: env:NAME or source: file:PATH, or command: "
			    "[PROGRAM, ARGS...] whose output is the secret");
	if (src) {
		field_join(field, sizeof(field), prefix, "source");
		r = load_cred_source(l, src, field, c);
	} else {
		field_join(field, sizeof(field), prefix, "command");
		c->source = POLICY_CRED_COMMAND;
		r = load_cred_command(l, cmd, field, c);
	}
	if (r < 0)
		return r;

	if ((v = map_get(n, "env"))) {
		field_join(field, sizeof(field), prefix, "env");
		r = want_scalar(l, v, field, "an environment variable name");
		if (r < 0)
			return r;
		if (!valid_env_name(v->str, v->len))
			return bad_env_name(l, v, field);
		r = check_cred_env(l, v, field, idx);
		if (r < 0)
			return r;
		c->env = strdup(v->str);
		if (!c->env)
			return oom(l);
	}
	c->inject = POLICY_INJECT_PLACEHOLDER;
	if ((v = map_get(n, "inject"))) {
		field_join(field, sizeof(field), prefix, "inject");
		r = load_enum(l, v, field, injects, ARRAY_SIZE(injects), &e);
		if (r < 0)
			return r;
		c->inject = (enum policy_cred_inject)e;
	}
	if (c->inject == POLICY_INJECT_PLACEHOLDER && !c->env) {
		field_join(field, sizeof(field), prefix, "env");
		return FAIL(l, n, field,
			    "is missing; with inject: placeholder (the default) the agent holds only "
			    "a placeholder, found in this variable, so without it the agent could never "
			    "use the credential; name a variable (e.g. env: GITHUB_TOKEN), or set "
			    "inject: always");
	}

	bindings = map_get(n, "bindings");
	if (!bindings)
		return FAIL(l, n, prefix,
			    "has no bindings; list where the secret may be sent (e.g. bindings: "
			    "[{host: api.github.com}])");
	field_join(field, sizeof(field), prefix, "bindings");
	r = want_list(l, bindings, field);
	if (r < 0)
		return r;
	if (bindings->n == 0)
		return FAIL(l, bindings, field,
			    "is an empty list, so the secret could be sent nowhere; list where it may "
			    "be sent (e.g. [{host: api.github.com}])");
	c->bindings = calloc(bindings->n, sizeof(*c->bindings));
	if (!c->bindings)
		return oom(l);
	for (size_t i = 0; i < bindings->n; i++) {
		char bprefix[POLICY_FIELD_MAX];

		field_index(bprefix, sizeof(bprefix), field, i);
		c->n_bindings = i + 1;
		r = load_binding(l, bindings->items[i], bprefix, &c->bindings[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A binding's host:port must be decided by endpoints that intercept TLS:
 * the first endpoint matching a host on the port decides (as in
 * check_net_endpoints), so every endpoint before the first one covering
 * the binding's host that matches some of its hosts decides for those. */
static int check_binding_net(struct loader *l, const char *prefix,
			     const struct policy_cred_binding *b)
{
	const struct policy_network *net = &l->p->network;
	bool v6 = strchr(b->host, ':') != NULL;
	char hp[POLICY_HOST_MAX + 16];

	snprintf(hp, sizeof(hp), "%s%s%s:%u", v6 ? "[" : "", b->host, v6 ? "]" : "", b->port);
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		bool covers;

		if (!has_port(ep, b->port))
			continue;
		covers = policy_host_covers(ep->host, b->host);
		if (!covers && !policy_host_covers(b->host, ep->host))
			continue;
		if (!ep->intercept) {
			char qe[96];

			policy_quote(ep->host, strlen(ep->host), qe, sizeof(qe));
			return policy_fail(l->err, l->p->file, b->loc.line, b->loc.col, prefix,
					   "%s is decided by network.endpoints[%zu] (%s, line %u), which "
					   "has tls: passthrough; the proxy must see inside the request to "
					   "put the secret in it: give that endpoint tls: intercept",
					   hp, i, qe, ep->loc.line);
		}
		if (covers)
			return 0;
	}
	return policy_fail(l->err, l->p->file, b->loc.line, b->loc.col, prefix,
			   "%s is not under a network.endpoints entry with tls: intercept; the proxy "
			   "must see inside the request to put the secret in it: add an endpoint {host: "
			   "\"%s\", ports: [%u], tls: intercept}",
			   hp, b->host, b->port);
}

struct bindref {
	const char *id;
	struct policy_loc loc; /* of the id, or of the binding when not given */
	bool given;
	size_t cred, bind;
};

static int bindref_cmp(const void *a, const void *b)
{
	const struct bindref *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	if (c)
		return c;
	if (x->loc.line != y->loc.line)
		return x->loc.line < y->loc.line ? -1 : 1;
	return (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
}

/* Binding ids name the binding in every record of a credential's use, so
 * each must be unique. A clash always involves a given id (the defaults
 * differ), and it is reported there: at the later of two given ids, or at
 * the one given id that takes another binding's default. */
static int check_binding_ids(struct loader *l, const struct policy_ynode *list)
{
	const struct policy *p = l->p;
	_cleanup_free_ struct bindref *refs = NULL;
	const struct bindref *at = NULL, *other = NULL;
	size_t n = 0, total = 0;

	for (size_t i = 0; i < p->n_credentials; i++)
		total += p->credentials[i].n_bindings;
	refs = calloc(total ? total : 1, sizeof(*refs));
	if (!refs)
		return oom(l);
	for (size_t i = 0; i < p->n_credentials && i < list->n; i++) {
		const struct policy_ynode *bl = map_get(list->items[i], "bindings");

		for (size_t j = 0; bl && j < p->credentials[i].n_bindings && j < bl->n; j++) {
			const struct policy_ynode *idn = map_get(bl->items[j], "id");

			refs[n++] = (struct bindref){ p->credentials[i].bindings[j].id,
						      loc_of(l, idn ? idn : bl->items[j]), idn != NULL,
						      i, j };
		}
	}
	qsort(refs, n, sizeof(*refs), bindref_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		const struct bindref *g1 = NULL, *g2 = NULL, *a;

		while (j < n && strcmp(refs[j].id, refs[i].id) == 0)
			j++;
		for (size_t k = i; j - i > 1 && k < j; k++) {
			if (!refs[k].given)
				continue;
			if (!g1)
				g1 = &refs[k];
			else if (!g2)
				g2 = &refs[k];
		}
		a = g2 ? g2 : g1;
		if (a && (!at || loc_before(&a->loc, &at->loc))) {
			at = a;
			other = a == &refs[i] ? &refs[i + 1] : &refs[i];
		}
		i = j;
	}
	if (at) {
		char field[POLICY_FIELD_MAX], q[96];

		snprintf(field, sizeof(field), "credentials[%zu].bindings[%zu].id", at->cred, at->bind);
		policy_quote(at->id, strlen(at->id), q, sizeof(q));
		return policy_fail(l->err, l->p->file, at->loc.line, at->loc.col, field,
				   "%s is also the id of credentials[%zu].bindings[%zu] (line %u); give "
				   "each binding its own id",
				   q, other->cred, other->bind, other->loc.line);
	}
	return 0;
}

static int load_credentials(struct loader *l, const struct policy_ynode *key,
			    const struct policy_ynode *n)
{
	struct policy *p = l->p;
	int r;

	r = want_list(l, n, "credentials");
	if (r < 0)
		return r;
	if (n->n == 0)
		return 0;
	p->credentials = calloc(n->n, sizeof(*p->credentials));
	if (!p->credentials)
		return oom(l);
	for (size_t i = 0; i < n->n; i++) {
		p->n_credentials = i + 1;
		r = load_credential(l, n->items[i], i, &p->credentials[i]);
		if (r < 0)
			return r;
	}
	r = check_binding_ids(l, n);
	if (r < 0)
		return r;

	if (p->network.mode == POLICY_NET_NONE)
		return FAIL(l, key ? key : n, "credentials",
			    "the policy has no network section, so the agent has no network and no "
			    "credential could be used; add a network section with an endpoint with tls: "
			    "intercept for each binding's host");
	for (size_t i = 0; i < p->n_credentials; i++) {
		for (size_t j = 0; j < p->credentials[i].n_bindings; j++) {
			char prefix[POLICY_FIELD_MAX];

			snprintf(prefix, sizeof(prefix), "credentials[%zu].bindings[%zu]", i, j);
			r = check_binding_net(l, prefix, &p->credentials[i].bindings[j]);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* Each protocol: mcp endpoint names a server of the mcp section: a
 * misspelt name would otherwise leave every call denied without saying
 * why. */
static int check_mcp_endpoints(struct loader *l)
{
	const struct policy_network *net = &l->p->network;
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		char prefix[POLICY_FIELD_MAX], field[POLICY_FIELD_MAX];
		if (!ep->mcp_server || policy_mcp_server(l->p->mcp, ep->mcp_server))
			continue;
		field_index(prefix, sizeof(prefix), "network.endpoints", i);
		field_join(field, sizeof(field), prefix, "mcp_server");
		return policy_fail(l->err, l->p->file, ep->mcp_loc.line, ep->mcp_loc.col, field,
				   "\"%s\" is not an entry of mcp.servers; add mcp.servers.%s with its tools "
				   "rules, or name an existing one",
				   ep->mcp_server, ep->mcp_server);
	}
	return 0;
}

/* ---- entry points ---- */

static int load_tree(struct loader *l, const struct policy_ynode *top)
{
	const struct policy_ynode *v;
	bool pass_given = false;
	int r;

	if (top->type != POLICY_YNODE_MAP)
		return FAIL(l, top, "(document)",
			    "the top level is %s; a policy is a map that starts with \"version: 1\"",
			    describe(top));
	r = check_keys(l, top, "", "");
	if (r < 0)
		return r;
	r = load_version(l, top);
	if (r < 0)
		return r;
	if ((v = map_get(top, "name"))) {
		r = load_name(l, v);
		if (r < 0)
			return r;
	}
	/* Before the other sections: they may use $WORKSPACE. */
	if ((v = map_get(top, "sandbox"))) {
		r = load_sandbox(l, v);
		if (r < 0)
			return r;
	}
	if ((v = map_get(top, "filesystem"))) {
		r = load_filesystem(l, v);
		if (r < 0)
			return r;
	}
	if ((v = map_get(top, "process"))) {
		r = load_process(l, v, &pass_given);
		if (r < 0)
			return r;
		l->pass_given = pass_given;
	}
	if ((v = map_get(top, "network"))) {
		r = load_network(l, map_key(top, "network"), v);
		if (r < 0)
			return r;
	}
	/* After network (its bindings are checked against the endpoints) and
	 * after filesystem (a secret's file must be out of the agent's reach). */
	if ((v = map_get(top, "credentials"))) {
		r = load_credentials(l, map_key(top, "credentials"), v);
		if (r < 0)
			return r;
	}
	if ((v = map_get(top, "identity")) && (r = load_identity(l, v)) < 0)
		return r;
	if ((v = map_get(top, "audit")) && (r = load_audit(l, v)) < 0)
		return r;
	/* After sandbox: pin file paths may use $WORKSPACE. */
	if ((v = map_get(top, "mcp")) && (r = policy_load_mcp(l->p, v, l->err)) < 0)
		return r;
	if ((r = check_mcp_endpoints(l)) < 0)
		return r;
	r = check_filesystem(l);
	if (r < 0)
		return r;
	return check_env(l, pass_given);
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

int policy_load_buffer(const char *name, const char *dir, const char *buf, size_t len,
		       const struct policy_ctx *ctx, struct policy **out, struct error *err)
{
	_cleanup_policy_ struct policy *p = NULL;
	_cleanup_(policy_ynode_freep) struct policy_ynode *root = NULL;
	struct loader l;
	int r;

	*out = NULL;
	if (!name)
		name = "<policy>";
	p = calloc(1, sizeof(*p));
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

	r = policy_ytree_parse(p->file, buf, len, &root, err);
	if (r < 0)
		return r;

	l = (struct loader){ .p = p, .ctx = ctx, .err = err };
	r = load_tree(&l, root);
	if (r < 0)
		return r;
	*out = steal_pointer(&p);
	return 0;
}

int policy_load_tree(const char *name, const char *dir, const struct policy_ynode *root,
		     const struct policy_ctx *ctx, struct policy **out, struct error *err)
{
	_cleanup_policy_ struct policy *p = NULL;
	struct loader l;
	int r;

	*out = NULL;
	p = calloc(1, sizeof(*p));
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
	l = (struct loader){ .p = p, .ctx = ctx, .err = err };
	r = load_tree(&l, root);
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

int policy_load_file(const char *path, const struct policy_ctx *ctx, struct policy **out,
		     struct error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *abs = NULL;
	size_t len = 0;

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

	/* Read one byte past the limit to tell "exactly 1 MiB" from "more";
	 * reading to the limit rather than trusting st_size also bounds
	 * pipes and character devices. */
	buf = malloc(POLICY_MAX_FILE + 1);
	if (!buf)
		return error_set(err, ENOMEM, "%s: out of memory", path);
	while (len < POLICY_MAX_FILE + 1) {
		ssize_t n = read(fd, buf + len, POLICY_MAX_FILE + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_sys(err, errno, "%s: cannot read the policy", path);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > POLICY_MAX_FILE)
		return policy_fail(err, path, 1, 1, "(document)",
				   "the file is larger than %d bytes (1 MiB); a policy must be smaller",
				   POLICY_MAX_FILE);

	dir = dir_of(path);
	if (!dir)
		return error_set(err, ENOMEM, "%s: out of memory", path);
	return policy_load_buffer(path, dir, buf, len, ctx, out, err);
}
