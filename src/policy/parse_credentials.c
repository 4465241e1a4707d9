/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy section credentials: secret sources, bindings to hosts, headers
 * and git operations (see parse.c for the loader).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/mcp.h"
#include "policy/parse.h"
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

	r = parse_want_scalar(l, n, field, valid);
	if (r < 0)
		return r;
	parse_quote(n, q, sizeof(q));
	if (strncmp(n->str, "env:", 4) == 0) {
		const char *name = n->str + 4;

		if (!parse_valid_env_name(name, strlen(name)))
			return FAIL(l, n, field,
				    "%s does not name a variable after env:; use letters, digits and _, "
				    "not starting with a digit (e.g. env:GITHUB_TOKEN)",
				    q);
		c->source = POLICY_CRED_ENV;
		c->source_arg = strdup(name);
		return c->source_arg ? 0 : parse_oom(l);
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
		r = parse_resolve_path(l, n, n->str + 5, field, true, &c->source_arg);
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

	r = parse_list_alloc(l, n, list,
			     "is an empty list; give the program and its arguments (e.g. "
			     "[/usr/bin/gh, auth, token])",
			     sizeof(char *), (void **)&c->command);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX];

		parse_field_index(field, sizeof(field), list, i);
		if (i > 0) {
			r = parse_load_string(l, e, field, "an argument (use \"\" for an empty one)", true,
					&c->command[i]);
			if (r < 0)
				return r;
			c->n_command = i + 1;
			continue;
		}
		r = parse_load_string(l, e, field, "a program (an absolute path, or a name looked up in PATH)",
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
			r = parse_load_path(l, e, field, true, &c->command[0]);
			if (r < 0)
				return r;
			/* airlock runs the program outside the sandbox: one the
			 * agent can replace would run the agent's code there. */
			grant = agent_reaches(l->p, c->command[0], true, &idx);
			if (grant) {
				parse_quote(e, q, sizeof(q));
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

	r = parse_want_scalar(l, n, field, "a port number from 1 to 65535");
	if (r < 0)
		return r;
	parse_quote(n, q, sizeof(q));
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

	r = parse_want_list(l, n, list);
	if (r < 0)
		return r;
	if (n->n == 0)
		return FAIL(l, n, list,
			    "is an empty list, which matches no %s; list globs (e.g. [/repos/**]), or "
			    "omit it for any %s",
			    what, what);
	*out = calloc(n->n + 1, sizeof(char *));
	if (!*out)
		return parse_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		char field[POLICY_FIELD_MAX];

		parse_field_index(field, sizeof(field), list, i);
		r = parse_load_glob(l, n->items[i], field, true, &(*out)[i]);
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

	/* push: [] is no push, as when it is absent. */
	r = parse_list_alloc(l, n, list, NULL, sizeof(char *), (void **)out);
	if (r < 0 || n->n == 0)
		return r;
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX], q[96];

		parse_field_index(field, sizeof(field), list, i);
		r = parse_want_scalar(l, e, field, "a ref glob (e.g. refs/heads/agent/**)");
		if (r < 0)
			return r;
		parse_quote(e, q, sizeof(q));
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
			return parse_oom(l);
		*count = i + 1;
	}
	return 0;
}

#define GIT(field) offsetof(struct policy_git_binding, field)
#define BIND(field) offsetof(struct policy_cred_binding, field)

static int parse_git_repos_at(struct loader *l, const struct parse_at *at, void *data)
{
	struct policy_git_binding *g = data;
	return load_glob_list(l, at->v, at->field, "repository", &g->repos, &g->n_repos);
}

static int parse_git_push_at(struct loader *l, const struct parse_at *at, void *data)
{
	struct policy_git_binding *g = data;
	return load_ref_globs(l, at->v, at->field, &g->push, &g->n_push);
}

static int parse_git_delete_at(struct loader *l, const struct parse_at *at, void *data)
{
	struct policy_git_binding *g = data;
	int r = parse_load_bool(l, at->v, at->field, &g->delete_refs);

	if (r == 0 && g->delete_refs && g->n_push == 0)
		return FAIL(l, at->v, at->field,
			    "true lets refs that push matches be deleted, and push matches none; "
			    "give push globs, or drop delete");
	return r;
}

/* WARNING: delete after push, which it is checked against. */
static const struct parse_key git_keys[] = {
	{ "repos", parse_git_repos_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "fetch", parse_bool_at, GIT(fetch), PARSE_NO_ORIGIN, NULL, 0 },
	{ "push", parse_git_push_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "delete", parse_git_delete_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "tags", parse_bool_at, GIT(tags), PARSE_NO_ORIGIN, NULL, 0 },
};
const struct parse_table parse_git_table = PARSE_TABLE("credentials[].bindings[].git", git_keys);

static int load_git(struct loader *l, const struct policy_ynode *n, const char *prefix,
		    struct policy_git_binding *g)
{
	int r;

	g->loc = parse_loc_of(l, n);
	g->fetch = true;
	if ((r = parse_map(l, n, prefix, &parse_git_table, g)) < 0)
		return r;
	if (!g->fetch && g->n_push == 0 && !g->tags)
		return FAIL(l, n, prefix,
			    "allows no git operation (fetch: false, no push globs, tags: false); allow "
			    "one, or remove the binding");
	return 0;
}

static int parse_bind_host_at(struct loader *l, const struct parse_at *at, void *data)
{
	struct policy_cred_binding *b = data;
	int r;

	if (!at->v)
		return FAIL(l, at->map, at->prefix,
			    "has no host; give the host the secret is for (e.g. {host: api.github.com})");
	if ((r = parse_load_host(l, at->v, at->field, &b->host)) < 0)
		return r;
	/* At the host: the binding's problems with the network are there. */
	b->loc = parse_loc_of(l, at->v);
	return 0;
}

static int parse_bind_port_at(struct loader *l, const struct parse_at *at, void *data)
{
	return load_port(l, at->v, at->field, data);
}

/* The keys after port are read by load_binding: where the secret goes
 * (header, basic or query, one of them) decides what else may be given. */
static const struct parse_key binding_keys[] = {
	{ "host", parse_bind_host_at, 0, PARSE_NO_ORIGIN, NULL, PARSE_ABSENT },
	{ "id", parse_net_id_at, BIND(id), PARSE_NO_ORIGIN, NULL, PARSE_ABSENT },
	{ "port", parse_bind_port_at, BIND(port), PARSE_NO_ORIGIN, NULL, 0 },
	{ "header", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "template", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "basic", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "query", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "methods", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "paths", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "git", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
};
const struct parse_table parse_binding_table = PARSE_TABLE("credentials[].bindings[]", binding_keys);

/* RFC 7617: the user-id ends at the first colon. */
static int parse_basic_username_at(struct loader *l, const struct parse_at *at, void *data)
{
	const struct policy_ynode *u = at->v;
	char **out = data, q[96];
	int r;

	if (!u) {
		*out = strdup("");
		return *out ? 0 : parse_oom(l);
	}
	r = parse_load_string(l, u, at->field, "a user name (use \"\" for none)", true, out);
	if (r < 0)
		return r;
	parse_quote(u, q, sizeof(q));
	for (size_t i = 0; i < u->len; i++) {
		unsigned char c = (unsigned char)u->str[i];
		if (c < 0x20 || c == 0x7f || c == ':')
			return FAIL(l, u, at->field,
				    "%s has a colon or a control character; Basic "
				    "authentication cannot carry them in a user name",
				    q);
	}
	return 0;
}

static const struct parse_key basic_keys[] = {
	{ "username", parse_basic_username_at, BIND(username), PARSE_NO_ORIGIN, NULL, PARSE_ABSENT },
};
const struct parse_table parse_basic_table = PARSE_TABLE("credentials[].bindings[].basic", basic_keys);

/* The secret in a header: which one (Authorization unless named) and the
 * text around it (tmpl, the template key's value, or "Bearer {secret}"). */
static int load_header_place(struct loader *l, const struct policy_ynode *n, const char *prefix,
			     const struct policy_ynode *tmpl, struct policy_cred_binding *b)
{
	char field[POLICY_FIELD_MAX], q[96];
	const struct policy_ynode *v;
	int r;

	if ((v = parse_map_get(n, "header"))) {
		parse_field_join(field, sizeof(field), prefix, "header");
		r = parse_want_scalar(l, v, field, "a header name (e.g. Authorization)");
		if (r < 0)
			return r;
		parse_quote(v, q, sizeof(q));
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
		return parse_oom(l);
	if (tmpl) {
		size_t count;

		parse_field_join(field, sizeof(field), prefix, "template");
		r = parse_load_string(l, tmpl, field,
				"a header value holding {secret} (e.g. \"Bearer {secret}\")", false,
				&b->tmpl);
		if (r < 0)
			return r;
		parse_quote(tmpl, q, sizeof(q));
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
			return parse_oom(l);
	}
	return 0;
}

/* One binding (prefix, its index unused) into elem, a struct
 * policy_cred_binding (a parse_item_fn). */
static int load_binding(struct loader *l, const struct policy_ynode *n, const char *prefix, size_t idx,
			void *elem)
{
	struct policy_cred_binding *b = elem;
	static const char *const wheres[] = { "header", "basic", "query" };
	char field[POLICY_FIELD_MAX], q[96];
	const struct policy_ynode *v, *where_key = NULL, *tmpl;
	int r;

	(void)idx;

	b->port = 443;
	r = parse_map(l, n, prefix, &parse_binding_table, b);
	if (r < 0)
		return r;

	/* One place for the secret; the keys are checked in file order so
	 * that the second one is reported. */
	b->where = POLICY_CRED_HEADER;
	for (size_t i = 0; i < n->n; i += 2) {
		const struct policy_ynode *k = n->items[i];

		for (size_t w = 0; w < ARRAY_SIZE(wheres); w++) {
			if (strcmp(k->str, wheres[w]) != 0)
				continue;
			parse_field_join(field, sizeof(field), prefix, wheres[w]);
			if (where_key)
				return FAIL(l, k, field,
					    "cannot be combined with %s; a binding puts the secret in one "
					    "place: header, basic or query",
					    where_key->str);
			where_key = k;
			b->where = (enum policy_cred_where)w;
		}
	}

	tmpl = parse_map_get(n, "template");
	switch (b->where) {
	case POLICY_CRED_HEADER:
		r = load_header_place(l, n, prefix, tmpl, b);
		if (r < 0)
			return r;
		break;
	case POLICY_CRED_BASIC: {
		parse_field_join(field, sizeof(field), prefix, "basic");
		r = parse_map(l, parse_map_get(n, "basic"), field, &parse_basic_table, b);
		if (r < 0)
			return r;
		break;
	}
	case POLICY_CRED_QUERY:
		parse_field_join(field, sizeof(field), prefix, "query");
		v = parse_map_get(n, "query");
		r = parse_want_scalar(l, v, field, "a query parameter name (e.g. api_key)");
		if (r < 0)
			return r;
		if (!query_name_valid(v->str, v->len)) {
			parse_quote(v, q, sizeof(q));
			return FAIL(l, v, field,
				    "%s is not a parameter name; use 1 to %d letters, digits, '_', '.' "
				    "and '-' (e.g. api_key)",
				    q, CRED_TOKEN_MAX);
		}
		b->query = strdup(v->str);
		if (!b->query)
			return parse_oom(l);
		break;
	}
	if (tmpl && b->where != POLICY_CRED_HEADER) {
		parse_field_join(field, sizeof(field), prefix, "template");
		return FAIL(l, parse_key_or(n, "template", tmpl), field,
			    "only goes with header; %s puts the secret in %s, without a template",
			    where_key->str,
			    b->where == POLICY_CRED_BASIC ? "Authorization: Basic" : "the query");
	}

	if ((v = parse_map_get(n, "methods"))) {
		parse_field_join(field, sizeof(field), prefix, "methods");
		r = parse_load_methods(l, v, field, &b->methods, &b->n_methods);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "paths"))) {
		parse_field_join(field, sizeof(field), prefix, "paths");
		if (parse_map_get(n, "git"))
			return FAIL(l, parse_key_or(n, "paths", v), field,
				    "cannot be combined with git: git chooses the paths of its requests "
				    "itself; limit the repositories with git.repos");
		r = load_glob_list(l, v, field, "request", &b->paths, &b->n_paths);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "git"))) {
		parse_field_join(field, sizeof(field), prefix, "git");
		if (b->where == POLICY_CRED_QUERY)
			return FAIL(l, parse_key_or(n, "git", v), field,
				    "needs header or basic: git sends credentials in a header, never in "
				    "the query");
		b->git = calloc(1, sizeof(*b->git));
		if (!b->git)
			return parse_oom(l);
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

	parse_quote(n, q, sizeof(q));
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

/* Every key of a credential is read by load_credential: the name is
 * checked against the credentials before it, the source against the
 * filesystem, the variable against process.env, the bindings against the
 * network. */
static const struct parse_key credential_keys[] = {
	{ "name", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "source", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "command", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "env", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "inject", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "bindings", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
};
const struct parse_table parse_credential_table = PARSE_TABLE("credentials[]", credential_keys);

/* credentials[idx] (prefix) into elem, a struct policy_credential (a
 * parse_item_fn). */
static int load_credential(struct loader *l, const struct policy_ynode *n, const char *prefix, size_t idx,
			   void *elem)
{
	struct policy_credential *c = elem;
	static const char *const injects[] = { "placeholder", "always" };
	char field[POLICY_FIELD_MAX], q[96];
	const struct policy_ynode *v, *src, *cmd, *bindings;
	int r, e;

	r = parse_map(l, n, prefix, &parse_credential_table, c);
	if (r < 0)
		return r;
	c->loc = parse_loc_of(l, n);

	v = parse_map_get(n, "name");
	if (!v)
		return FAIL(l, n, prefix, "has no name; give one (e.g. name: github)");
	parse_field_join(field, sizeof(field), prefix, "name");
	r = parse_want_scalar(l, v, field, "a name (e.g. github)");
	if (r < 0)
		return r;
	if (!cred_name_valid(v->str, v->len)) {
		parse_quote(v, q, sizeof(q));
		return FAIL(l, v, field,
			    "%s is not a valid name; use 1 to %d lower-case letters, digits, '_' and "
			    "'-'",
			    q, CRED_NAME_MAX);
	}
	for (size_t k = 0; k < idx; k++) {
		const struct policy_credential *o = &l->p->credentials[k];

		if (strcmp(o->name, v->str) == 0) {
			parse_quote(v, q, sizeof(q));
			return FAIL(l, v, field,
				    "%s is also the name of credentials[%zu] (line %u); give each "
				    "credential its own name",
				    q, k, o->loc.line);
		}
	}
	c->name = strdup(v->str);
	if (!c->name)
		return parse_oom(l);

	src = parse_map_get(n, "source");
	cmd = parse_map_get(n, "command");
	if (src && cmd) {
		parse_field_join(field, sizeof(field), prefix, "command");
		return FAIL(l, parse_key_or(n, "command", cmd), field,
			    "cannot be combined with source; give one: source: env:NAME or "
			    "file:PATH, or command: [PROGRAM, ARGS...]");
	}
	if (!src && !cmd)
		return FAIL(l, n, prefix,
			    "has no source; give source: env:NAME or source: file:PATH, or command: "
			    "[PROGRAM, ARGS...] whose output is the secret");
	if (src) {
		parse_field_join(field, sizeof(field), prefix, "source");
		r = load_cred_source(l, src, field, c);
	} else {
		parse_field_join(field, sizeof(field), prefix, "command");
		c->source = POLICY_CRED_COMMAND;
		r = load_cred_command(l, cmd, field, c);
	}
	if (r < 0)
		return r;

	if ((v = parse_map_get(n, "env"))) {
		parse_field_join(field, sizeof(field), prefix, "env");
		r = parse_want_scalar(l, v, field, "an environment variable name");
		if (r < 0)
			return r;
		if (!parse_valid_env_name(v->str, v->len))
			return parse_bad_env_name(l, v, field);
		r = check_cred_env(l, v, field, idx);
		if (r < 0)
			return r;
		c->env = strdup(v->str);
		if (!c->env)
			return parse_oom(l);
	}
	c->inject = POLICY_INJECT_PLACEHOLDER;
	if ((v = parse_map_get(n, "inject"))) {
		parse_field_join(field, sizeof(field), prefix, "inject");
		r = parse_load_enum(l, v, field, injects, ARRAY_SIZE(injects), &e);
		if (r < 0)
			return r;
		c->inject = (enum policy_cred_inject)e;
	}
	if (c->inject == POLICY_INJECT_PLACEHOLDER && !c->env) {
		parse_field_join(field, sizeof(field), prefix, "env");
		return FAIL(l, n, field,
			    "is missing; with inject: placeholder (the default) the agent holds only "
			    "a placeholder, found in this variable, so without it the agent could never "
			    "use the credential; name a variable (e.g. env: GITHUB_TOKEN), or set "
			    "inject: always");
	}

	bindings = parse_map_get(n, "bindings");
	if (!bindings)
		return FAIL(l, n, prefix,
			    "has no bindings; list where the secret may be sent (e.g. bindings: "
			    "[{host: api.github.com}])");
	parse_field_join(field, sizeof(field), prefix, "bindings");
	r = parse_list_items(l, bindings, field,
			     "is an empty list, so the secret could be sent nowhere; list where it may "
			     "be sent (e.g. [{host: api.github.com}])",
			     sizeof(*c->bindings), (void **)&c->bindings, &c->n_bindings, load_binding);
	if (r < 0)
		return r;
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

		if (!parse_has_port(ep, b->port))
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
		return parse_oom(l);
	for (size_t i = 0; i < p->n_credentials && i < list->n; i++) {
		const struct policy_ynode *bl = parse_map_get(list->items[i], "bindings");

		for (size_t j = 0; bl && j < p->credentials[i].n_bindings && j < bl->n; j++) {
			const struct policy_ynode *idn = parse_map_get(bl->items[j], "id");

			refs[n++] = (struct bindref){ p->credentials[i].bindings[j].id,
						      parse_loc_of(l, idn ? idn : bl->items[j]), idn != NULL,
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
		if (a && (!at || parse_loc_before(&a->loc, &at->loc))) {
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

int parse_credentials_at(struct loader *l, const struct parse_at *at, void *data)
{
	const struct policy_ynode *key = parse_map_key(at->map, "credentials"), *n = at->v;
	struct policy *p = l->p;
	int r;

	(void)data;
	r = parse_list_items(l, n, "credentials", NULL, sizeof(*p->credentials), (void **)&p->credentials,
			     &p->n_credentials, load_credential);
	if (r < 0 || n->n == 0)
		return r;
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
int parse_check_mcp_endpoints(struct loader *l)
{
	const struct policy_network *net = &l->p->network;
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		char prefix[POLICY_FIELD_MAX], field[POLICY_FIELD_MAX];
		if (!ep->mcp_server || policy_mcp_server(l->p->mcp, ep->mcp_server))
			continue;
		parse_field_index(prefix, sizeof(prefix), "network.endpoints", i);
		parse_field_join(field, sizeof(field), prefix, "mcp_server");
		return policy_fail(l->err, l->p->file, ep->mcp_loc.line, ep->mcp_loc.col, field,
				   "\"%s\" is not an entry of mcp.servers; add mcp.servers.%s with its tools "
				   "rules, or name an existing one",
				   ep->mcp_server, ep->mcp_server);
	}
	return 0;
}
