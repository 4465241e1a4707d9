/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `mcp:` section of a policy (docs/policy.md, "mcp"). Kept apart from
 * parse.c: it only needs the YAML tree and the error helpers.
 *
 * Like the rest of the policy, the section is untrusted input: every key
 * must be known, every value of its type; a regex that does not compile
 * or a number that is not one is refused with its line, never ignored.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/glob.h"
#include "policy/internal.h"
#include "policy/mcp.h"
#include "util/cleanup.h"

#define MCP_MAX_ARGV 256

struct ml {
	struct policy *p;
	struct error *err;
};

#define MFAIL(l, n, field, ...) policy_fail((l)->err, (l)->p->file, (n)->line, (n)->col, (field), __VA_ARGS__)

static int moom(struct ml *l)
{
	return error_set(l->err, ENOMEM, "%s: out of memory", l->p->file);
}

static const struct policy_ynode *mget(const struct policy_ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i += 2)
		if (strcmp(map->items[i]->str, key) == 0)
			return map->items[i + 1];
	return NULL;
}

/* Refuse keys the schema table (schema.c) does not list beneath the schema
 * path `schema`; prefix names the map in messages. */
static int mkeys(struct ml *l, const struct policy_ynode *map, const char *prefix, const char *schema)
{
	for (size_t i = 0; i < map->n; i += 2) {
		const struct policy_ynode *k = map->items[i];
		if (policy_schema_knows(schema, k->str))
			continue;
		char field[POLICY_FIELD_MAX], valid[512];
		snprintf(field, sizeof(field), "%s", prefix);
		policy_field_append_key(field, sizeof(field), k->str, k->len);
		policy_schema_keys(schema, valid, sizeof(valid));
		return MFAIL(l, k, field, "unknown key; valid keys here are %s", valid);
	}
	return 0;
}

static int mmap(struct ml *l, const struct policy_ynode *n, const char *field)
{
	if (n->type == POLICY_YNODE_MAP)
		return 0;
	return MFAIL(l, n, field, "expected a map of settings (key: value lines)");
}

static int mlist(struct ml *l, const struct policy_ynode *n, const char *field)
{
	if (n->type == POLICY_YNODE_SEQ)
		return 0;
	return MFAIL(l, n, field, "expected a list (e.g. [a, b] or \"- a\" lines)");
}

static int mstr(struct ml *l, const struct policy_ynode *n, const char *field, const char *valid, char **out)
{
	if (n->type != POLICY_YNODE_SCALAR || n->len == 0)
		return MFAIL(l, n, field, "expected %s", valid);
	for (size_t i = 0; i < n->len; i++)
		if ((unsigned char)n->str[i] < 0x20 || n->str[i] == 0x7f)
			return MFAIL(l, n, field, "contains a control character; expected %s", valid);
	free(*out);
	*out = strdup(n->str);
	return *out ? 0 : moom(l);
}

/* A name glob (a tool's or prompt's name, an argument's glob), read as
 * the MCP engine runs it (match/glob.h). A pattern whose meaning would
 * depend on the locale, or on how far a match gets, is refused here:
 * a deny rule that enforcement could not read would fail open. */
static int mname(struct ml *l, const struct policy_ynode *n, const char *field, const char *valid, char **out)
{
	int r = mstr(l, n, field, valid, out);
	if (r < 0)
		return r;
	struct match_name g;
	r = match_name_compile(*out, &g);
	match_name_free(&g);
	if (r == -ENOMEM)
		return moom(l);
	if (r < 0)
		return MFAIL(l, n, field,
			     "\"%s\" is not a glob airlock can read: an unterminated '[', a collating element "
			     "('[=' or '[.') or a class other than [:alnum:] [:alpha:] [:blank:] [:cntrl:] "
			     "[:digit:] [:graph:] [:lower:] [:print:] [:punct:] [:space:] [:upper:] [:xdigit:]; "
			     "write '\\[' for a literal '['",
			     *out);
	return 0;
}

/* A file a server entry names (its pins, its sandbox policy): resolved as
 * the policy's own paths are, never through a $HOME that is not absolute. */
static int mpath(struct ml *l, const struct policy_ynode *n, const char *field, const char *valid, char **out)
{
	_cleanup_free_ char *raw = NULL;
	int r;

	if ((r = mstr(l, n, field, valid, &raw)) < 0)
		return r;
	struct policy_path_base base = { .home = getenv("HOME"), .workspace = l->p->sandbox.workspace,
					 .dir = l->p->dir };
	if (base.home && base.home[0] != '/')
		base.home = NULL;
	if (policy_path_resolve(raw, &base, out) != POLICY_PATH_OK)
		return MFAIL(l, n, field, "is not a usable path (absolute, relative to the policy, ~/ or "
			     "$WORKSPACE/)");
	return 0;
}

static int mbool(struct ml *l, const struct policy_ynode *n, const char *field, bool *out)
{
	if (n->type == POLICY_YNODE_SCALAR && !n->quoted) {
		if (!strcmp(n->str, "true")) {
			*out = true;
			return 0;
		}
		if (!strcmp(n->str, "false")) {
			*out = false;
			return 0;
		}
	}
	return MFAIL(l, n, field, "expected true or false (unquoted)");
}

static int menum(struct ml *l, const struct policy_ynode *n, const char *field, const char *const *names,
		 int *out)
{
	char valid[128] = "";
	for (int i = 0; names[i]; i++) {
		if (n->type == POLICY_YNODE_SCALAR && !strcmp(n->str, names[i])) {
			*out = i;
			return 0;
		}
		size_t pos = strlen(valid);
		snprintf(valid + pos, sizeof(valid) - pos, "%s%s", i ? ", " : "", names[i]);
	}
	char q[96] = "";
	if (n->type == POLICY_YNODE_SCALAR)
		policy_quote(n->str, n->len, q, sizeof(q));
	return MFAIL(l, n, field, "%s is not one of %s", n->type == POLICY_YNODE_SCALAR ? q : "a list or map",
		     valid);
}

static int mcount(struct ml *l, const struct policy_ynode *n, const char *field, uint64_t *out)
{
	if (n->type != POLICY_YNODE_SCALAR || n->quoted ||
	    policy_parse_uint(n->str, UINT64_C(2147483647), out) != POLICY_NUM_OK || *out == 0)
		return MFAIL(l, n, field, "expected a whole number from 1 to 2147483647");
	return 0;
}

static int mnum(struct ml *l, const struct policy_ynode *n, const char *field, double *out)
{
	char *end = NULL;
	if (n->type == POLICY_YNODE_SCALAR && !n->quoted && n->len > 0) {
		errno = 0;
		double v = strtod(n->str, &end);
		/* strtod also reads "inf", "nan" and hex floats: only finite
		 * decimal numbers are numbers here, as in JSON. */
		if (errno == 0 && end && *end == '\0' && isfinite(v) && !strpbrk(n->str, "xXnN")) {
			*out = v;
			return 0;
		}
	}
	return MFAIL(l, n, field, "expected a number (e.g. 0, -3, 2.5)");
}

/* A JSON path into a tool's arguments: an optional "$" then keys separated
 * by '.', each key followed by any number of "[N]" or "[*]". */
bool policy_mcp_path_valid(const char *s)
{
	if (s[0] == '$') {
		s++;
		if (*s == '\0')
			return true;
		if (*s != '.' && *s != '[')
			return false;
		if (*s == '.')
			s++;
	}
	bool need_key = true;
	while (*s) {
		if (*s == '[') {
			s++;
			if (*s == '*') {
				s++;
			} else {
				if (*s < '0' || *s > '9')
					return false;
				while (*s >= '0' && *s <= '9')
					s++;
			}
			if (*s++ != ']')
				return false;
			need_key = false;
			continue;
		}
		if (*s == '.') {
			if (need_key)
				return false;
			s++;
			need_key = true;
			if (*s == '\0')
				return false;
			continue;
		}
		size_t k = strcspn(s, ".[");
		if (k == 0)
			return false;
		for (size_t i = 0; i < k; i++)
			if ((unsigned char)s[i] <= 0x20 || s[i] == ']')
				return false;
		s += k;
		need_key = false;
	}
	return !need_key;
}

static int load_arg(struct ml *l, const char *pfx, const struct policy_ynode *key, const struct policy_ynode *n,
		    struct policy_mcp_arg *a)
{
	char field[POLICY_FIELD_MAX], f2[POLICY_FIELD_MAX + 32];
	const struct policy_ynode *v;
	int r;

	snprintf(field, sizeof(field), "%s", pfx);
	policy_field_append_key(field, sizeof(field), key->str, key->len);
	a->line = key->line;
	if (!policy_mcp_path_valid(key->str))
		return MFAIL(l, key, field, "is not a JSON path; write keys separated by '.', each "
			     "optionally followed by [N] or [*], e.g. path, options.mode, paths[*]");
	if (!(a->path = strdup(key->str)))
		return moom(l);
	if ((r = mmap(l, n, field)) < 0 || (r = mkeys(l, n, field, "mcp.servers.*.tools[].args.*")) < 0)
		return r;
	if (n->n == 0)
		return MFAIL(l, n, field, "has no constraint; give one of glob, regex, enum, min, max, "
			     "max_length, inside_workspace, required");
#define SUB(name) snprintf(f2, sizeof(f2), "%s.%s", field, name)
	if ((v = mget(n, "glob"))) {
		SUB("glob");
		if ((r = mname(l, v, f2, "an fnmatch pattern", &a->glob)) < 0)
			return r;
	}
	if ((v = mget(n, "regex"))) {
		SUB("regex");
		if ((r = mstr(l, v, f2, "a POSIX extended regular expression", &a->regex)) < 0)
			return r;
		/* Anchored: a constraint on the whole value, so that "^[a-z]+"
		 * written without '$' cannot be satisfied by a prefix. */
		_cleanup_free_ char *anch = NULL;
		if (asprintf(&anch, "^(%s)$", a->regex) < 0)
			return moom(l);
		int rc = regcomp(&a->re, anch, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char msg[128];
			regerror(rc, &a->re, msg, sizeof(msg));
			free(a->regex);
			a->regex = NULL;
			return MFAIL(l, v, f2, "does not compile as a POSIX extended regular expression: %s", msg);
		}
	}
	if ((v = mget(n, "enum"))) {
		SUB("enum");
		if ((r = mlist(l, v, f2)) < 0)
			return r;
		if (v->n == 0)
			return MFAIL(l, v, f2, "is empty; list the values allowed");
		if (!(a->enum_vals = calloc(v->n, sizeof(char *))))
			return moom(l);
		for (size_t i = 0; i < v->n; i++) {
			const struct policy_ynode *e = v->items[i];
			if (e->type != POLICY_YNODE_SCALAR)
				return MFAIL(l, e, f2, "entry %zu is not a single value", i);
			if (!(a->enum_vals[i] = strdup(e->str)))
				return moom(l);
			a->n_enum++;
		}
	}
	if ((v = mget(n, "min"))) {
		SUB("min");
		if ((r = mnum(l, v, f2, &a->min)) < 0)
			return r;
		a->has_min = true;
	}
	if ((v = mget(n, "max"))) {
		SUB("max");
		if ((r = mnum(l, v, f2, &a->max)) < 0)
			return r;
		a->has_max = true;
		if (a->has_min && a->min > a->max)
			return MFAIL(l, v, f2, "is below min; the range would allow nothing");
	}
	if ((v = mget(n, "max_length"))) {
		SUB("max_length");
		if ((r = mcount(l, v, f2, &a->max_length)) < 0)
			return r;
		a->has_max_length = true;
	}
	if ((v = mget(n, "inside_workspace"))) {
		SUB("inside_workspace");
		if ((r = mbool(l, v, f2, &a->inside_workspace)) < 0)
			return r;
		if (!a->inside_workspace)
			return MFAIL(l, v, f2, "false constrains nothing; remove the key or write true");
	}
	if ((v = mget(n, "required"))) {
		SUB("required");
		if ((r = mbool(l, v, f2, &a->required)) < 0)
			return r;
	}
#undef SUB
	return 0;
}

static const char *const decisions[] = { "allow", "deny", "step_up", NULL };

/* kind: "tools", "resources" or "prompts"; each entry {name|uri: GLOB,
 * decision: ..., [args: {...}], [max_calls: N]}. */
static int load_rules(struct ml *l, const char *pfx, const char *kind, const struct policy_ynode *n,
		      struct policy_mcp_rule **out, size_t *count)
{
	bool tools = !strcmp(kind, "tools"), res = !strcmp(kind, "resources");
	const char *mkey = res ? "uri" : "name";
	char field[POLICY_FIELD_MAX], f2[POLICY_FIELD_MAX + 32];
	int r;

	snprintf(field, sizeof(field), "%s.%s", pfx, kind);
	if ((r = mlist(l, n, field)) < 0)
		return r;
	if (n->n == 0)
		return 0;
	if (!(*out = calloc(n->n, sizeof(**out))))
		return moom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i], *v;
		struct policy_mcp_rule *rule = &(*out)[i];
		(*count)++;
		snprintf(field, sizeof(field), "%s.%s[%zu]", pfx, kind, i);
		rule->line = e->line;
		if ((r = mmap(l, e, field)) < 0 ||
		    (r = mkeys(l, e, field, tools ? "mcp.servers.*.tools[]" : res ? "mcp.servers.*.resources[]" : "mcp.servers.*.prompts[]")) < 0)
			return r;
		snprintf(f2, sizeof(f2), "%s.%s", field, mkey);
		if (!(v = mget(e, mkey)))
			return MFAIL(l, e, f2, "required key is missing; give the %s or a glob such as \"*\"",
				     res ? "resource URI" : tools ? "tool name" : "prompt name");
		if ((r = (res ? mstr : mname)(l, v, f2,
					      res ? "a URI glob ('*' within a segment, '**' across)" : "a name or fnmatch glob",
					      &rule->match)) < 0)
			return r;
		snprintf(f2, sizeof(f2), "%s.decision", field);
		if (!(v = mget(e, "decision")))
			return MFAIL(l, e, f2, "required key is missing; give allow, deny or step_up");
		int d = 0;
		if ((r = menum(l, v, f2, decisions, &d)) < 0)
			return r;
		rule->decision = (enum policy_mcp_decision)d;
		if (!tools && rule->decision == POLICY_MCP_STEP_UP)
			return MFAIL(l, v, f2, "step_up applies to tool calls only; write allow or deny");
		if ((v = mget(e, "max_calls"))) {
			snprintf(f2, sizeof(f2), "%s.max_calls", field);
			if ((r = mcount(l, v, f2, &rule->max_calls)) < 0)
				return r;
		}
		if ((v = mget(e, "args"))) {
			snprintf(f2, sizeof(f2), "%s.args", field);
			if ((r = mmap(l, v, f2)) < 0)
				return r;
			if (rule->decision == POLICY_MCP_DENY)
				return MFAIL(l, v, f2, "constraints on a denied tool's arguments are never checked; "
					     "remove args or allow the tool");
			if (!(rule->args = calloc(v->n / 2 + 1, sizeof(*rule->args))))
				return moom(l);
			for (size_t j = 0; j < v->n; j += 2) {
				rule->n_args++;
				if ((r = load_arg(l, f2, v->items[j], v->items[j + 1], &rule->args[j / 2])) < 0)
					return r;
			}
		}
	}
	return 0;
}

static bool server_name_valid(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_' || *s == '.'))
			return false;
	return true;
}

static int load_server(struct ml *l, const struct policy_ynode *key, const struct policy_ynode *n,
		       struct policy_mcp_server *s)
{
	static const char *const req_keys[] = { "sampling", "elicitation", "roots", NULL };
	static const char *const secret_modes[] = { "block", "redact", NULL };
	static const char *const inj_modes[] = { "block", "redact", "off", NULL };
	char pfx[POLICY_FIELD_MAX], f2[POLICY_FIELD_MAX + 32];
	const struct policy_ynode *v;
	int r;

	snprintf(pfx, sizeof(pfx), "mcp.servers");
	policy_field_append_key(pfx, sizeof(pfx), key->str, key->len);
	s->line = key->line;
	if (!server_name_valid(key->str))
		return MFAIL(l, key, pfx, "is not a server name; use letters, digits, '-', '_' and '.' (at most 64)");
	if (!(s->name = strdup(key->str)))
		return moom(l);
	if ((r = mmap(l, n, pfx)) < 0 || (r = mkeys(l, n, pfx, "mcp.servers.*")) < 0)
		return r;
	if ((v = mget(n, "command"))) {
		snprintf(f2, sizeof(f2), "%s.command", pfx);
		if ((r = mlist(l, v, f2)) < 0)
			return r;
		if (v->n == 0 || v->n > MCP_MAX_ARGV)
			return MFAIL(l, v, f2, "expected the server's argv: 1 to %d strings", MCP_MAX_ARGV);
		if (!(s->command = calloc(v->n + 1, sizeof(char *))))
			return moom(l);
		for (size_t i = 0; i < v->n; i++) {
			char f3[POLICY_FIELD_MAX + 48];
			snprintf(f3, sizeof(f3), "%s[%zu]", f2, i);
			if (v->items[i]->type != POLICY_YNODE_SCALAR)
				return MFAIL(l, v->items[i], f3, "expected a string");
			if (!(s->command[i] = strdup(v->items[i]->str)))
				return moom(l);
			s->n_command++;
		}
	}
	if ((v = mget(n, "tools")) && (r = load_rules(l, pfx, "tools", v, &s->tools, &s->n_tools)) < 0)
		return r;
	if ((v = mget(n, "resources")) &&
	    (r = load_rules(l, pfx, "resources", v, &s->resources, &s->n_resources)) < 0)
		return r;
	if ((v = mget(n, "prompts")) && (r = load_rules(l, pfx, "prompts", v, &s->prompts, &s->n_prompts)) < 0)
		return r;
	if ((v = mget(n, "max_calls"))) {
		snprintf(f2, sizeof(f2), "%s.max_calls", pfx);
		if ((r = mcount(l, v, f2, &s->max_calls)) < 0)
			return r;
	}
	if ((v = mget(n, "server_requests"))) {
		snprintf(f2, sizeof(f2), "%s.server_requests", pfx);
		if ((r = mmap(l, v, f2)) < 0 || (r = mkeys(l, v, f2, "mcp.servers.*.server_requests")) < 0)
			return r;
		bool *dst[] = { &s->sampling, &s->elicitation, &s->roots };
		for (int i = 0; i < 3; i++) {
			const struct policy_ynode *b = mget(v, req_keys[i]);
			char f3[POLICY_FIELD_MAX + 64];
			snprintf(f3, sizeof(f3), "%s.%s", f2, req_keys[i]);
			if (b && (r = mbool(l, b, f3, dst[i])) < 0)
				return r;
		}
	}
	if ((v = mget(n, "scan"))) {
		snprintf(f2, sizeof(f2), "%s.scan", pfx);
		if ((r = mmap(l, v, f2)) < 0 || (r = mkeys(l, v, f2, "mcp.servers.*.scan")) < 0)
			return r;
		const struct policy_ynode *b;
		char f3[POLICY_FIELD_MAX + 64];
		int m;
		if ((b = mget(v, "secrets"))) {
			snprintf(f3, sizeof(f3), "%s.secrets", f2);
			if ((r = menum(l, b, f3, secret_modes, &m)) < 0)
				return r;
			s->scan_secrets = (enum policy_mcp_scan)m;
		}
		if ((b = mget(v, "injection"))) {
			snprintf(f3, sizeof(f3), "%s.injection", f2);
			if ((r = menum(l, b, f3, inj_modes, &m)) < 0)
				return r;
			s->scan_injection = (enum policy_mcp_scan)m;
		}
	}
	if ((v = mget(n, "record_arguments"))) {
		snprintf(f2, sizeof(f2), "%s.record_arguments", pfx);
		if ((r = mbool(l, v, f2, &s->record_arguments)) < 0)
			return r;
	}
	if ((v = mget(n, "step_up_timeout"))) {
		snprintf(f2, sizeof(f2), "%s.step_up_timeout", pfx);
		uint64_t t = 0;
		if ((r = mcount(l, v, f2, &t)) < 0)
			return r;
		if (t < 1 || t > 86400)
			return MFAIL(l, v, f2, "is not 1..86400 seconds");
		s->step_up_timeout = (unsigned)t;
	}
	if ((v = mget(n, "pins"))) {
		snprintf(f2, sizeof(f2), "%s.pins", pfx);
		if ((r = mpath(l, v, f2, "a file path", &s->pins)) < 0)
			return r;
	}
	if ((v = mget(n, "policy"))) {
		/* The server's own sandbox inside an airlock run session
		 * (src/sandbox/mcpgw.c): a policy file, loaded when the
		 * session starts. */
		snprintf(f2, sizeof(f2), "%s.policy", pfx);
		if ((r = mpath(l, v, f2, "a policy file path", &s->policy)) < 0)
			return r;
		s->policy_line = v->line;
	}
	return 0;
}

int policy_load_mcp(struct policy *p, const struct policy_ynode *n, struct error *err)
{
	struct ml l = { p, err };
	const struct policy_ynode *v;
	int r;

	if ((r = mmap(&l, n, "mcp")) < 0 || (r = mkeys(&l, n, "mcp", "mcp")) < 0)
		return r;
	if (!(p->mcp = calloc(1, sizeof(*p->mcp))))
		return moom(&l);
	if (!(v = mget(n, "servers")))
		return 0;
	if ((r = mmap(&l, v, "mcp.servers")) < 0)
		return r;
	if (v->n == 0)
		return 0;
	if (!(p->mcp->servers = calloc(v->n / 2, sizeof(*p->mcp->servers))))
		return moom(&l);
	for (size_t i = 0; i < v->n; i += 2) {
		p->mcp->n_servers++;
		if ((r = load_server(&l, v->items[i], v->items[i + 1], &p->mcp->servers[i / 2])) < 0)
			return r;
	}
	return 0;
}

/* ---- freeing, lookup, printing ---- */

static void rules_free(struct policy_mcp_rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].match);
		for (size_t j = 0; j < r[i].n_args; j++) {
			struct policy_mcp_arg *a = &r[i].args[j];
			free(a->path);
			free(a->glob);
			if (a->regex) {
				regfree(&a->re);
				free(a->regex);
			}
			for (size_t k = 0; k < a->n_enum; k++)
				free(a->enum_vals[k]);
			free(a->enum_vals);
		}
		free(r[i].args);
	}
	free(r);
}

void policy_mcp_free(struct policy_mcp *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_servers; i++) {
		struct policy_mcp_server *s = &m->servers[i];
		free(s->name);
		for (size_t j = 0; j < s->n_command; j++)
			free(s->command[j]);
		free(s->command);
		free(s->policy);
		rules_free(s->tools, s->n_tools);
		rules_free(s->resources, s->n_resources);
		rules_free(s->prompts, s->n_prompts);
		free(s->pins);
	}
	free(m->servers);
	free(m);
}

const struct policy_mcp_server *policy_mcp_server(const struct policy_mcp *m, const char *name)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n_servers; i++)
		if (!strcmp(m->servers[i].name, name))
			return &m->servers[i];
	return NULL;
}

const struct policy_mcp_rule *policy_mcp_rule_first(const struct policy_mcp_rule *rules, size_t n, const char *name,
						    size_t *index)
{
	for (size_t i = 0; i < n; i++) {
		int m = match_name_glob(rules[i].match, name);
		if (m < 0 ? rules[i].decision == POLICY_MCP_ALLOW : m == 0)
			continue;
		if (index)
			*index = i;
		return &rules[i];
	}
	return NULL;
}

bool policy_mcp_steps_up(const struct policy_mcp_server *srv)
{
	for (size_t i = 0; srv && i < srv->n_tools; i++)
		if (srv->tools[i].decision == POLICY_MCP_STEP_UP)
			return true;
	return false;
}

const char *policy_mcp_decision_name(enum policy_mcp_decision d)
{
	switch (d) {
	case POLICY_MCP_ALLOW:
		return "allow";
	case POLICY_MCP_DENY:
		return "deny";
	case POLICY_MCP_STEP_UP:
		return "step_up";
	}
	return "deny";
}

static void print_rules(FILE *f, const char *kind, const struct policy_mcp_rule *r, size_t n)
{
	if (!n)
		return;
	fprintf(f, "      %s:\n", kind);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "        - %s: ", !strcmp(kind, "resources") ? "uri" : "name");
		policy_print_string(f, r[i].match);
		fprintf(f, "\n          decision: %s\n", policy_mcp_decision_name(r[i].decision));
		if (r[i].max_calls)
			fprintf(f, "          max_calls: %llu\n", (unsigned long long)r[i].max_calls);
		if (!r[i].n_args)
			continue;
		fprintf(f, "          args:\n");
		for (size_t j = 0; j < r[i].n_args; j++) {
			const struct policy_mcp_arg *a = &r[i].args[j];
			fprintf(f, "            ");
			policy_print_string(f, a->path);
			fprintf(f, ":\n");
			if (a->glob) {
				fprintf(f, "              glob: ");
				policy_print_string(f, a->glob);
				fputc('\n', f);
			}
			if (a->regex) {
				fprintf(f, "              regex: ");
				policy_print_string(f, a->regex);
				fputc('\n', f);
			}
			if (a->n_enum) {
				fprintf(f, "              enum: [");
				for (size_t k = 0; k < a->n_enum; k++) {
					if (k)
						fputs(", ", f);
					policy_print_string(f, a->enum_vals[k]);
				}
				fputs("]\n", f);
			}
			if (a->has_min)
				fprintf(f, "              min: %.17g\n", a->min);
			if (a->has_max)
				fprintf(f, "              max: %.17g\n", a->max);
			if (a->has_max_length)
				fprintf(f, "              max_length: %llu\n", (unsigned long long)a->max_length);
			if (a->inside_workspace)
				fprintf(f, "              inside_workspace: true\n");
			if (a->required)
				fprintf(f, "              required: true\n");
		}
	}
}

void policy_mcp_print(const struct policy_mcp *m, FILE *f)
{
	static const char *const scans[] = { "block", "redact", "off" };
	if (!m)
		return;
	fprintf(f, "mcp:\n  servers:%s\n", m->n_servers ? "" : " {}");
	for (size_t i = 0; i < m->n_servers; i++) {
		const struct policy_mcp_server *s = &m->servers[i];
		fprintf(f, "    %s:\n", s->name);
		if (s->command) {
			fprintf(f, "      command: [");
			for (size_t j = 0; j < s->n_command; j++) {
				if (j)
					fputs(", ", f);
				policy_print_string(f, s->command[j]);
			}
			fputs("]\n", f);
		}
		print_rules(f, "tools", s->tools, s->n_tools);
		print_rules(f, "resources", s->resources, s->n_resources);
		print_rules(f, "prompts", s->prompts, s->n_prompts);
		if (s->max_calls)
			fprintf(f, "      max_calls: %llu\n", (unsigned long long)s->max_calls);
		fprintf(f, "      server_requests: {sampling: %s, elicitation: %s, roots: %s}\n",
			s->sampling ? "true" : "false", s->elicitation ? "true" : "false", s->roots ? "true" : "false");
		fprintf(f, "      scan: {secrets: %s, injection: %s}\n", scans[s->scan_secrets],
			scans[s->scan_injection]);
		fprintf(f, "      record_arguments: %s\n", s->record_arguments ? "true" : "false");
		if (s->step_up_timeout)
			fprintf(f, "      step_up_timeout: %u\n", s->step_up_timeout);
		if (s->pins) {
			fprintf(f, "      pins: ");
			policy_print_string(f, s->pins);
			fputc('\n', f);
		}
		if (s->policy) {
			fprintf(f, "      policy: ");
			policy_print_string(f, s->policy);
			fputc('\n', f);
		}
	}
}
