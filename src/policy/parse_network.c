/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy section network: endpoints, rules, private ranges, pinned names
 * and the leak scan (see parse.c for the loader).
 */
#include <errno.h>
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

	r = parse_want_list(l, n, list);
	if (r < 0)
		return r;
	if (n->n == 0)
		return FAIL(l, n, list,
			    "is an empty list, which allows nothing; list ports (e.g. [443]), or omit "
			    "ports for [80, 443]");
	ep->ports = calloc(n->n, sizeof(*ep->ports));
	if (!ep->ports)
		return parse_oom(l);
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

	r = parse_want_list(l, n, list);
	if (r < 0)
		return r;
	if (n->n == 0)
		return FAIL(l, n, list,
			    "is an empty list, which matches no request; list methods (e.g. [GET]), or "
			    "omit methods for any method");
	*methods = calloc(n->n + 1, sizeof(char *));
	if (!*methods)
		return parse_oom(l);
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

static int load_rule(struct loader *l, const struct policy_ynode *n, const char *prefix,
		     struct policy_net_rule *rule)
{
	char field[POLICY_FIELD_MAX];
	const struct policy_ynode *v;
	int r;

	r = parse_want_map(l, n, prefix);
	if (r < 0)
		return r;
	r = parse_check_keys(l, n, prefix, "network.endpoints[].rules[]");
	if (r < 0)
		return r;
	rule->loc = parse_loc_of(l, n);
	if ((v = parse_map_get(n, "id"))) {
		parse_field_join(field, sizeof(field), prefix, "id");
		r = parse_load_net_id(l, v, field, &rule->id);
	} else {
		rule->id = strdup(prefix);
		r = rule->id ? 0 : parse_oom(l);
	}
	if (r < 0)
		return r;
	if ((v = parse_map_get(n, "methods"))) {
		parse_field_join(field, sizeof(field), prefix, "methods");
		r = parse_load_methods(l, v, field, &rule->methods, &rule->n_methods);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "path"))) {
		parse_field_join(field, sizeof(field), prefix, "path");
		r = parse_load_glob(l, v, field, true, &rule->path);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "query"))) {
		parse_field_join(field, sizeof(field), prefix, "query");
		r = parse_load_glob(l, v, field, false, &rule->query);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "websocket"))) {
		parse_field_join(field, sizeof(field), prefix, "websocket");
		r = parse_load_bool(l, v, field, &rule->websocket);
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

static int load_endpoint(struct loader *l, const struct policy_ynode *n, size_t idx,
			 struct policy_endpoint *ep)
{
	static const char *const tls_modes[] = { "passthrough", "intercept" };
	static const char *const protocols[] = { "http", "mcp" };
	static const char *const access_modes[] = { "read-only", "read-write" };
	char prefix[POLICY_FIELD_MAX], field[POLICY_FIELD_MAX];
	const struct policy_ynode *v, *access, *rules;
	int r, e;

	parse_field_index(prefix, sizeof(prefix), "network.endpoints", idx);
	r = parse_want_map(l, n, prefix);
	if (r < 0)
		return r;
	r = parse_check_keys(l, n, prefix, "network.endpoints[]");
	if (r < 0)
		return r;
	ep->loc = parse_loc_of(l, n);

	v = parse_map_get(n, "host");
	if (!v)
		return FAIL(l, n, prefix,
			    "has no host; give the host it allows (e.g. {host: api.example.com, ports: "
			    "[443]})");
	parse_field_join(field, sizeof(field), prefix, "host");
	r = parse_load_host(l, v, field, &ep->host);
	if (r < 0)
		return r;

	if ((v = parse_map_get(n, "id"))) {
		parse_field_join(field, sizeof(field), prefix, "id");
		r = parse_load_net_id(l, v, field, &ep->id);
	} else {
		ep->id = strdup(prefix);
		r = ep->id ? 0 : parse_oom(l);
	}
	if (r < 0)
		return r;

	if ((v = parse_map_get(n, "ports"))) {
		parse_field_join(field, sizeof(field), prefix, "ports");
		r = load_ports(l, v, field, ep);
		if (r < 0)
			return r;
	} else {
		ep->ports = calloc(2, sizeof(*ep->ports));
		if (!ep->ports)
			return parse_oom(l);
		ep->ports[0] = 80;
		ep->ports[1] = 443;
		ep->n_ports = 2;
	}

	if ((v = parse_map_get(n, "tls"))) {
		parse_field_join(field, sizeof(field), prefix, "tls");
		r = parse_load_enum(l, v, field, tls_modes, ARRAY_SIZE(tls_modes), &e);
		if (r < 0)
			return r;
		ep->intercept = e == 1;
	}

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
		r = parse_want_list(l, rules, field);
		if (r < 0)
			return r;
		if (rules->n == 0)
			return FAIL(l, rules, field,
				    "is an empty list; list the requests allowed, or omit rules to allow "
				    "every request");
		ep->rules = calloc(rules->n, sizeof(*ep->rules));
		if (!ep->rules)
			return parse_oom(l);
		for (size_t i = 0; i < rules->n; i++) {
			char rprefix[POLICY_FIELD_MAX];

			parse_field_index(rprefix, sizeof(rprefix), field, i);
			ep->n_rules = i + 1;
			r = load_rule(l, rules->items[i], rprefix, &ep->rules[i]);
			if (r < 0)
				return r;
		}
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

	r = parse_want_list(l, n, "network.endpoints");
	if (r < 0)
		return r;
	if (n->n == 0)
		return 0;
	net->endpoints = calloc(n->n, sizeof(*net->endpoints));
	if (!net->endpoints)
		return parse_oom(l);
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

	r = parse_want_list(l, n, "network.allow_private");
	if (r < 0)
		return r;
	if (n->n == 0)
		return 0;
	net->allow_private = calloc(n->n, sizeof(*net->allow_private));
	if (!net->allow_private)
		return parse_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		struct policy_cidr *c = &net->allow_private[i];
		char field[POLICY_FIELD_MAX], q[96], fixed[80];

		parse_field_index(field, sizeof(field), "network.allow_private", i);
		r = parse_want_scalar(l, e, field, "an address or range (e.g. 10.0.0.0/8, 127.0.0.1:8080)");
		if (r < 0)
			return r;
		parse_quote(e, q, sizeof(q));
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

static int load_leak_scan(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	const struct policy_ynode *v;
	int r;

	r = parse_want_map(l, n, "network.leak_scan");
	if (r < 0)
		return r;
	r = parse_check_keys(l, n, "network.leak_scan", "network.leak_scan");
	if (r < 0)
		return r;
	if ((v = parse_map_get(n, "max_body"))) {
		const char *field = "network.leak_scan.max_body";
		uint64_t size = 0;
		char q[96];

		r = parse_want_scalar(l, v, field, "a size (e.g. 1MiB)");
		if (r < 0)
			return r;
		parse_quote(v, q, sizeof(q));
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
		p->origin.max_body = parse_loc_of(l, v);
	}
	if ((v = parse_map_get(n, "allow_compressed"))) {
		r = parse_load_bool(l, v, "network.leak_scan.allow_compressed",
			      &p->network.allow_compressed);
		if (r < 0)
			return r;
		p->origin.allow_compressed = parse_loc_of(l, v);
	}
	return 0;
}

int parse_load_network(struct loader *l, const struct policy_ynode *key,
			const struct policy_ynode *n)
{
	static const char *const modes[] = { "proxy", "transparent" };
	static const char *const defaults[] = { "deny" };
	struct policy *p = l->p;
	struct policy_network *net = &p->network;
	const struct policy_ynode *v;
	int r, e;

	r = parse_want_map(l, n, "network");
	if (r < 0)
		return r;
	r = parse_check_keys(l, n, "network", "network");
	if (r < 0)
		return r;
	net->mode = POLICY_NET_PROXY;
	net->loc = parse_loc_of(l, key ? key : n);
	if ((v = parse_map_get(n, "mode"))) {
		r = parse_load_enum(l, v, "network.mode", modes, ARRAY_SIZE(modes), &e);
		if (r < 0)
			return r;
		net->mode = e == 0 ? POLICY_NET_PROXY : POLICY_NET_TRANSPARENT;
		p->origin.net_mode = parse_loc_of(l, v);
	}
	/* Only deny exists; the key lets a policy say so. */
	if ((v = parse_map_get(n, "default"))) {
		r = parse_load_enum(l, v, "network.default", defaults, ARRAY_SIZE(defaults), &e);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "endpoints"))) {
		r = load_endpoints(l, v);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "allow_private"))) {
		r = load_allow_private(l, v);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "resolve"))) {
		r = load_resolve(l, v);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "upstream_ca"))) {
		r = parse_load_path(l, v, "network.upstream_ca", true, &net->upstream_ca);
		if (r < 0)
			return r;
		p->origin.upstream_ca = parse_loc_of(l, v);
	}
	if ((v = parse_map_get(n, "leak_scan"))) {
		r = load_leak_scan(l, v);
		if (r < 0)
			return r;
	}
	if ((v = parse_map_get(n, "log"))) {
		r = parse_load_path(l, v, "network.log", true, &net->log);
		if (r < 0)
			return r;
		p->origin.net_log = parse_loc_of(l, v);
	}
	return 0;
}
