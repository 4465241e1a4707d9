/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy section network: endpoints, rules, private ranges, pinned names
 * and the leak scan (see parse.c for the loader).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/parse.h"
/* ---- network ---- */

/* names_only: a `resolve` key, where only an exact DNS name fits. */
static int bad_host(struct loader *l, const struct policy_ynode *n, const char *field,
		    enum policy_host_status st, bool names_only)
{
	char q[96];

	parse_quote(n, q, sizeof(q));
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

int parse_load_host(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	char host[POLICY_HOST_MAX];
	enum policy_host_status st;
	int r;

	r = parse_want_scalar(l, n, field, "a host name (e.g. api.example.com)");
	if (r < 0)
		return r;
	st = policy_host_normalize(n->str, host);
	if (st != POLICY_HOST_NAME && st != POLICY_HOST_WILDCARD && st != POLICY_HOST_IP)
		return bad_host(l, n, field, st, false);
	*out = strdup(host);
	if (!*out)
		return parse_oom(l);
	return 0;
}

int parse_load_net_id(struct loader *l, const struct policy_ynode *n, const char *field, char **out)
{
	char q[96];
	int r;

	r = parse_want_scalar(l, n, field, "an id (e.g. github)");
	if (r < 0)
		return r;
	if (!policy_id_valid(n->str)) {
		parse_quote(n, q, sizeof(q));
		return FAIL(l, n, field,
			    "%s is not a valid id; use 1 to %d printable ASCII characters without spaces",
			    q, POLICY_ID_MAX);
	}
	*out = strdup(n->str);
	if (!*out)
		return parse_oom(l);
	return 0;
}

static int load_ports(struct loader *l, const struct policy_ynode *n, const char *list,
		      struct policy_endpoint *ep)
{
	uint8_t seen[65536 / 8] = { 0 };
	int r;

	r = parse_list_alloc(l, n, list,
			     "is an empty list, which allows nothing; list ports (e.g. [443]), or omit "
			     "ports for [80, 443]",
			     sizeof(*ep->ports), (void **)&ep->ports);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX], q[96];
		uint64_t v = 0;

		parse_field_index(field, sizeof(field), list, i);
		r = parse_want_scalar(l, e, field, "a port number from 1 to 65535");
		if (r < 0)
			return r;
		parse_quote(e, q, sizeof(q));
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

bool parse_has_port(const struct policy_endpoint *ep, uint16_t port)
{
	for (size_t i = 0; i < ep->n_ports; i++)
		if (ep->ports[i] == port)
			return true;
	return false;
}

/* A list of HTTP methods, stored upper-case in a new NULL-terminated array
 * (*methods, owned by the policy; *count entries filled so far). */
int parse_load_methods(struct loader *l, const struct policy_ynode *n, const char *list,
			char ***methods, size_t *count)
{
	int r;

	r = parse_list_alloc(l, n, list,
			     "is an empty list, which matches no request; list methods (e.g. [GET]), or "
			     "omit methods for any method",
			     sizeof(char *), (void **)methods);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX], q[96];
		char *m;

		parse_field_index(field, sizeof(field), list, i);
		r = parse_want_scalar(l, e, field, "an HTTP method (e.g. GET)");
		if (r < 0)
			return r;
		parse_quote(e, q, sizeof(q));
		if (!policy_method_valid(e->str))
			return FAIL(l, e, field,
				    "%s is not an HTTP method; use a method name such as GET or POST "
				    "(omit methods for any method)",
				    q);
		m = strdup(e->str);
		if (!m)
			return parse_oom(l);
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

int parse_load_glob(struct loader *l, const struct policy_ynode *n, const char *field, bool is_path,
		     char **out)
{
	const char *valid = is_path ? "a path glob starting with / (e.g. /repos/**)"
				    : "a query glob (e.g. \"page=*\")";
	char q[96];
	int r;

	/* A query may be "" (no query); a path never is. */
	if (is_path || !(n->type == POLICY_YNODE_SCALAR && n->quoted && n->len == 0)) {
		r = parse_want_scalar(l, n, field, valid);
		if (r < 0)
			return r;
	}
	if (n->len == 0 && is_path)
		return FAIL(l, n, field, "is empty; expected %s", valid);
	parse_quote(n, q, sizeof(q));
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
	return parse_oom(l);
}

#define RULE(field) offsetof(struct policy_net_rule, field)
#define EP(field) offsetof(struct policy_endpoint, field)

/* An entry's id, or its field name ("network.endpoints[2]") when it has
 * none: records and messages always have a name to show. */
int parse_net_id_at(struct loader *l, const struct parse_at *at, void *data)
{
	char **out = data;

	if (at->v)
		return parse_load_net_id(l, at->v, at->field, out);
	*out = strdup(at->prefix);
	return *out ? 0 : parse_oom(l);
}

static int parse_rule_methods_at(struct loader *l, const struct parse_at *at, void *data)
{
	struct policy_net_rule *rule = data;
	return parse_load_methods(l, at->v, at->field, &rule->methods, &rule->n_methods);
}

static int parse_path_glob_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_glob(l, at->v, at->field, true, data);
}

static int parse_query_glob_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_glob(l, at->v, at->field, false, data);
}

static const struct parse_key rule_keys[] = {
	{ "id", parse_net_id_at, RULE(id), PARSE_NO_ORIGIN, NULL, PARSE_ABSENT },
	{ "methods", parse_rule_methods_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "path", parse_path_glob_at, RULE(path), PARSE_NO_ORIGIN, NULL, 0 },
	{ "query", parse_query_glob_at, RULE(query), PARSE_NO_ORIGIN, NULL, 0 },
	{ "websocket", parse_bool_at, RULE(websocket), PARSE_NO_ORIGIN, NULL, 0 },
};
const struct parse_table parse_rule_table = PARSE_TABLE("network.endpoints[].rules[]", rule_keys);

/* access: read-only becomes one rule, named like its endpoint. */
static const char *const read_only_methods[] = { "GET", "HEAD", "OPTIONS" };

static int add_read_only(struct loader *l, const struct policy_ynode *n, struct policy_endpoint *ep)
{
	struct policy_net_rule *rule;

	ep->rules = calloc(1, sizeof(*ep->rules));
	if (!ep->rules)
		return parse_oom(l);
	ep->n_rules = 1;
	rule = &ep->rules[0];
	rule->loc = parse_loc_of(l, n);
	rule->id = strdup(ep->id);
	rule->methods = calloc(ARRAY_SIZE(read_only_methods) + 1, sizeof(char *));
	if (!rule->id || !rule->methods)
		return parse_oom(l);
	for (size_t i = 0; i < ARRAY_SIZE(read_only_methods); i++) {
		rule->methods[i] = strdup(read_only_methods[i]);
		if (!rule->methods[i])
			return parse_oom(l);
		rule->n_methods = i + 1;
	}
	return 0;
}

static int parse_ep_host_at(struct loader *l, const struct parse_at *at, void *data)
{
	if (!at->v)
		return FAIL(l, at->map, at->prefix,
			    "has no host; give the host it allows (e.g. {host: api.example.com, ports: "
			    "[443]})");
	return parse_load_host(l, at->v, at->field, data);
}

/* Without ports, an endpoint allows plain HTTP and HTTPS. */
static int parse_ep_ports_at(struct loader *l, const struct parse_at *at, void *data)
{
	struct policy_endpoint *ep = data;

	if (at->v)
		return load_ports(l, at->v, at->field, ep);
	ep->ports = calloc(2, sizeof(*ep->ports));
	if (!ep->ports)
		return parse_oom(l);
	ep->ports[0] = 80;
	ep->ports[1] = 443;
	ep->n_ports = 2;
	return 0;
}

static int parse_ep_tls_at(struct loader *l, const struct parse_at *at, void *data)
{
	static const char *const tls_modes[] = { "passthrough", "intercept" };
	int e, r = parse_load_enum(l, at->v, at->field, tls_modes, ARRAY_SIZE(tls_modes), &e);

	if (r == 0)
		*(bool *)data = e == 1;
	return r;
}

/* access, rules, protocol and mcp_server are read by load_endpoint: each
 * is checked against the others. */
static const struct parse_key endpoint_keys[] = {
	{ "host", parse_ep_host_at, EP(host), PARSE_NO_ORIGIN, NULL, PARSE_ABSENT },
	{ "id", parse_net_id_at, EP(id), PARSE_NO_ORIGIN, NULL, PARSE_ABSENT },
	{ "ports", parse_ep_ports_at, 0, PARSE_NO_ORIGIN, NULL, PARSE_ABSENT },
	{ "tls", parse_ep_tls_at, EP(intercept), PARSE_NO_ORIGIN, NULL, 0 },
	{ "access", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "rules", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "protocol", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "mcp_server", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
};
const struct parse_table parse_endpoint_table = PARSE_TABLE("network.endpoints[]", endpoint_keys);

static int load_rule(struct loader *l, const struct policy_ynode *item, const char *field, size_t i, void *elem)
{
	(void)i;
	struct policy_net_rule *rule = elem;
	rule->loc = parse_loc_of(l, item);
	return parse_map(l, item, field, &parse_rule_table, rule);
}

/* network.endpoints[idx] (prefix) into elem, a struct policy_endpoint
 * (a parse_item_fn). */
static int load_endpoint(struct loader *l, const struct policy_ynode *n, const char *prefix, size_t idx,
			 void *elem)
{
	struct policy_endpoint *ep = elem;
	static const char *const protocols[] = { "http", "mcp" };
	static const char *const access_modes[] = { "read-only", "read-write" };
	char field[POLICY_FIELD_MAX];
	const struct policy_ynode *access, *rules;
	int r, e;

	(void)idx;
	ep->loc = parse_loc_of(l, n);
	r = parse_map(l, n, prefix, &parse_endpoint_table, ep);
	if (r < 0)
		return r;

	access = parse_map_get(n, "access");
	rules = parse_map_get(n, "rules");
	if (access) {
		parse_field_join(field, sizeof(field), prefix, "access");
		const struct policy_ynode *k = parse_map_key(n, "access");

		if (rules)
			return FAIL(l, k ? k : access, field,
				    "cannot be combined with rules; use access for a preset, or list "
				    "the requests in rules");
		r = parse_load_enum(l, access, field, access_modes, ARRAY_SIZE(access_modes), &e);
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
		parse_field_join(field, sizeof(field), prefix, "rules");
		r = parse_list_items(l, rules, field,
				     "is an empty list; list the requests allowed, or omit rules to allow "
				     "every request",
				     sizeof(*ep->rules), (void **)&ep->rules, &ep->n_rules, load_rule);
		if (r < 0)
			return r;
	}

	/* protocol: mcp: the requests are MCP messages for the gateway's
	 * engine; which mcp.servers entry decides them is checked once the
	 * mcp section is loaded (parse_check_mcp_endpoints). */
	const struct policy_ynode *proto = parse_map_get(n, "protocol"), *srvname = parse_map_get(n, "mcp_server");
	int pe = 0;
	if (proto) {
		parse_field_join(field, sizeof(field), prefix, "protocol");
		r = parse_load_enum(l, proto, field, protocols, ARRAY_SIZE(protocols), &pe);
		if (r < 0)
			return r;
	}
	if (pe == 1) {
		parse_field_join(field, sizeof(field), prefix, "mcp_server");
		if (!srvname)
			return FAIL(l, proto, field,
				    "is missing; protocol: mcp needs the mcp.servers entry whose rules decide "
				    "the calls (e.g. mcp_server: github)");
		r = parse_load_string(l, srvname, field, "the name of an mcp.servers entry", false, &ep->mcp_server);
		if (r < 0)
			return r;
		ep->mcp_loc = parse_loc_of(l, proto);
		/* Over passthrough TLS the proxy sees no message at all. */
		if (!ep->intercept && parse_has_port(ep, 443)) {
			parse_field_join(field, sizeof(field), prefix, "protocol");
			return FAIL(l, proto, field,
				    "mcp needs tls: intercept to see the messages inside HTTPS; add tls: "
				    "intercept, or list only plain-HTTP ports (ports: [80])");
		}
	} else if (srvname) {
		parse_field_join(field, sizeof(field), prefix, "mcp_server");
		return FAIL(l, srvname, field, "is only meaningful with protocol: mcp; add protocol: mcp or remove it");
	}

	/* A passthrough TLS connection is opaque: the proxy sees the host
	 * (SNI) and nothing of the requests inside. */
	if (ep->n_rules > 0 && !ep->intercept && parse_has_port(ep, 443)) {
		const struct policy_ynode *at = access ? access : rules;
		parse_field_join(field, sizeof(field), prefix, access ? "access" : "rules");
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
		return parse_oom(l);
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		const struct policy_ynode *epn = eps->items[i];
		const struct policy_ynode *idn = parse_map_get(epn, "id");
		const struct policy_ynode *rules = parse_map_get(epn, "rules");

		refs[n++] = (struct idref){ ep->id, idn ? parse_loc_of(l, idn) : ep->loc, idn != NULL, i,
					    SIZE_MAX };
		/* The access preset's rule shares its endpoint's id. */
		if (!rules)
			continue;
		for (size_t j = 0; j < ep->n_rules; j++) {
			idn = parse_map_get(rules->items[j], "id");
			refs[n++] = (struct idref){ ep->rules[j].id,
						    idn ? parse_loc_of(l, idn) : ep->rules[j].loc,
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
		if (a && (!again || parse_loc_before(&a->loc, &again->loc))) {
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
		return parse_oom(l);
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
				at = parse_map_get(eps->items[j], "host");
				parse_field_index(field, sizeof(field), "network.endpoints", j);
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

	r = parse_list_items(l, n, "network.endpoints", NULL, sizeof(*net->endpoints), (void **)&net->endpoints,
			     &net->n_endpoints, load_endpoint);
	if (r < 0 || n->n == 0)
		return r;
	r = check_net_ids(l, n);
	if (r < 0)
		return r;
	return check_net_endpoints(l, n);
}

/* What is wrong with an allow_private entry, after its quoted text. */
static const char *const cidr_errors[] = {
	[POLICY_CIDR_SYNTAX] = "is not an address or range; write ADDRESS[/PREFIX][:PORT] (e.g. 10.0.0.0/8, "
			       "127.0.0.1:8080, fd00::/8, [::1]:9000: an IPv6 address with a port needs "
			       "brackets)",
	[POLICY_CIDR_PREFIX] = "has an invalid prefix length; use /0 to /32 for IPv4, /0 to /128 for IPv6",
	[POLICY_CIDR_PORT] = "has an invalid port; use 1 to 65535, or no port for every port",
	[POLICY_CIDR_MAPPED] = "is an IPv4-mapped or IPv4-compatible IPv6 range, which never matches: those "
			       "addresses are checked as IPv4; write the IPv4 address or range (and an IPv6 "
			       "address with a port in brackets: [::1]:9000)",
};

static int load_allow_private(struct loader *l, const struct policy_ynode *n)
{
	struct policy_network *net = &l->p->network;
	int r;

	r = parse_list_alloc(l, n, "network.allow_private", NULL, sizeof(*net->allow_private),
			     (void **)&net->allow_private);
	if (r < 0 || n->n == 0)
		return r;
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		struct policy_cidr *c = &net->allow_private[i];
		char field[POLICY_FIELD_MAX], q[96], fixed[80];

		parse_field_index(field, sizeof(field), "network.allow_private", i);
		r = parse_want_scalar(l, e, field, "an address or range (e.g. 10.0.0.0/8, 127.0.0.1:8080)");
		if (r < 0)
			return r;
		parse_quote(e, q, sizeof(q));
		enum policy_cidr_status st = policy_cidr_parse(e->str, c);
		if (st == POLICY_CIDR_HOST_BITS) {
			policy_cidr_format(c, fixed, sizeof(fixed));
			return FAIL(l, e, field, "%s has bits set past its prefix length; write %s", q, fixed);
		}
		if (st != POLICY_CIDR_OK)
			return FAIL(l, e, field, "%s %s", q, cidr_errors[st]);
		c->loc = parse_loc_of(l, e);
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

	r = parse_want_map(l, n, "network.resolve");
	if (r < 0)
		return r;
	if (count == 0)
		return 0;
	net->resolve = calloc(count, sizeof(*net->resolve));
	if (!net->resolve)
		return parse_oom(l);
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
				parse_quote(k, q, sizeof(q));
				return FAIL(l, k, field,
					    "%s is the same name as the entry at line %u; give each name "
					    "once",
					    q, net->resolve[j].loc.line);
			}
		}
		r = parse_want_scalar(l, v, field, "an IP address (e.g. 127.0.0.1 or ::1)");
		if (r < 0)
			return r;
		if (!policy_addr_canon(v->str, addr)) {
			parse_quote(v, q, sizeof(q));
			return FAIL(l, v, field,
				    "%s is not an IP address; write an IPv4 dotted quad or an IPv6 "
				    "address (e.g. 127.0.0.1, ::1)",
				    q);
		}
		e->host = strdup(host);
		e->addr = strdup(addr);
		e->loc = parse_loc_of(l, k);
		net->n_resolve = i + 1;
		if (!e->host || !e->addr)
			return parse_oom(l);
	}
	return 0;
}

#define MAX_BODY_LIMIT (UINT64_C(1) << 30)

static int parse_max_body_at(struct loader *l, const struct parse_at *at, void *data)
{
	uint64_t size = 0;
	char q[96];
	int r = parse_load_bounded_size(l, at->v, at->field, "a size (e.g. 1MiB)",
					"a body is held while it is scanned; give a size up to 1GiB (e.g. 1MiB)",
					"64KiB, 1MiB", &size);

	if (r < 0)
		return r;
	parse_quote(at->v, q, sizeof(q));
	if (size == 0)
		return FAIL(l, at->v, at->field, "%s would scan nothing; give a size (e.g. 1MiB)", q);
	if (size > MAX_BODY_LIMIT)
		return FAIL(l, at->v, at->field, "%s is larger than 1GiB, the most that is scanned", q);
	*(uint64_t *)data = size;
	return 0;
}

#define AT(field) offsetof(struct policy, field)
#define ORIGIN(name) offsetof(struct policy, origin.name)

static const struct parse_key leak_scan_keys[] = {
	{ "max_body", parse_max_body_at, AT(network.max_body), ORIGIN(max_body), NULL, 0 },
	{ "allow_compressed", parse_bool_at, AT(network.allow_compressed), ORIGIN(allow_compressed), NULL, 0 },
};
const struct parse_table parse_leak_scan_table = PARSE_TABLE("network.leak_scan", leak_scan_keys);

static int parse_net_mode_at(struct loader *l, const struct parse_at *at, void *data)
{
	static const char *const modes[] = { "proxy", "transparent" };
	int e, r = parse_load_enum(l, at->v, at->field, modes, ARRAY_SIZE(modes), &e);

	if (r == 0)
		*(enum policy_net_mode *)data = e == 0 ? POLICY_NET_PROXY : POLICY_NET_TRANSPARENT;
	return r;
}

/* Only deny exists; the key lets a policy say so. */
static int parse_net_default_at(struct loader *l, const struct parse_at *at, void *data)
{
	static const char *const defaults[] = { "deny" };
	int e;

	(void)data;
	return parse_load_enum(l, at->v, at->field, defaults, ARRAY_SIZE(defaults), &e);
}

static int parse_endpoints_at(struct loader *l, const struct parse_at *at, void *data)
{
	(void)data;
	return load_endpoints(l, at->v);
}

static int parse_allow_private_at(struct loader *l, const struct parse_at *at, void *data)
{
	(void)data;
	return load_allow_private(l, at->v);
}

static int parse_resolve_at(struct loader *l, const struct parse_at *at, void *data)
{
	(void)data;
	return load_resolve(l, at->v);
}

static const struct parse_key network_keys[] = {
	{ "mode", parse_net_mode_at, AT(network.mode), ORIGIN(net_mode), NULL, 0 },
	{ "default", parse_net_default_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "endpoints", parse_endpoints_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "allow_private", parse_allow_private_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "resolve", parse_resolve_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "upstream_ca", parse_wpath_at, AT(network.upstream_ca), ORIGIN(upstream_ca), NULL, 0 },
	{ "leak_scan", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_leak_scan_table, 0 },
	{ "log", parse_wpath_at, AT(network.log), ORIGIN(net_log), NULL, 0 },
};
const struct parse_table parse_network_table = PARSE_TABLE("network", network_keys);

/* A network section turns the proxy on, whatever it holds. */
int parse_network_at(struct loader *l, const struct parse_at *at, void *data)
{
	const struct policy_ynode *key = parse_map_key(at->map, "network");
	int r;

	(void)data;
	if ((r = parse_want_map(l, at->v, at->field)) < 0)
		return r;
	l->p->network.mode = POLICY_NET_PROXY;
	l->p->network.loc = parse_loc_of(l, key ? key : at->v);
	return parse_map(l, at->v, at->field, &parse_network_table, l->p);
}
