/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Enterprise layers (layer.c): the network section and the credentials
 * narrowed by one ceiling. Where two patterns cross without one containing
 * the other, their intersection is not one pattern: the entry is cut,
 * narrower than the true intersection, and the cut is said.
 *
 * WARNING: as everywhere in layering, only removing from the developer's
 * policy or narrowing an entry (layer_internal.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"
#include "policy/internal.h"
#include "policy/layer.h"
#include "policy/layer_internal.h"
#include "util/cleanup.h"


/* ---- patterns ---- */

/* Containment of request globs ('*' within a segment, '**' across),
 * decided by the pattern automata (policy/glob.h). A pattern that cannot
 * be compiled, or a question too large to answer, is a "no": the entry
 * is then cut, which fails closed. */
bool policy_glob_subset(const char *a, const char *b)
{
	return policy_glob_subset_any(a, &b, 1);
}

bool policy_glob_subset_any(const char *a, const char *const *b, size_t n)
{
	struct error err = { 0 };
	struct glob *ga = NULL, **gb = NULL;
	bool sub = false;
	size_t ok = 0;

	for (size_t i = 0; i < n; i++)
		if (!b[i])
			return true;
	if (!a || n == 0)
		return false;
	if (strcmp(a, b[0]) == 0)
		return true;
	if (!(gb = calloc(n, sizeof(*gb))))
		return false;
	if (glob_compile(a, GLOB_PATH, &ga, &err) < 0)
		goto out;
	for (ok = 0; ok < n; ok++)
		if (glob_compile(b[ok], GLOB_PATH, &gb[ok], &err) < 0)
			goto out;
	if (glob_subset(ga, (const struct glob *const *)gb, n, &sub, NULL, &err) < 0)
		sub = false;
out:
	glob_free(ga);
	for (size_t i = 0; i < ok; i++)
		glob_free(gb[i]);
	free(gb);
	return sub;
}

/* Whether two request globs share a request (an error: assume they do,
 * so that the cut is said). */
static bool glob_meets(const char *a, const char *b)
{
	struct error err = { 0 };
	struct glob *ga = NULL, *gb = NULL;
	bool ov = true;

	if (!a || !b)
		return true;
	if (glob_compile(a, GLOB_PATH, &ga, &err) == 0 && glob_compile(b, GLOB_PATH, &gb, &err) == 0 &&
	    glob_overlap(ga, gb, &ov, NULL, &err) < 0)
		ov = true;
	glob_free(ga);
	glob_free(gb);
	return ov;
}

bool policy_host_pattern_covers(const char *a, const char *b)
{
	return policy_host_covers(a, b);
}

/* ---- network ---- */

static bool has_port(const struct policy_endpoint *ep, uint16_t port)
{
	for (size_t i = 0; i < ep->n_ports; i++)
		if (ep->ports[i] == port)
			return true;
	return false;
}

static bool has_method(char *const *m, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i], x) == 0)
			return true;
	return false;
}

/* Methods of a ∩ b (NULL = any) into *out; false when empty. */
static int methods_meet(const struct policy_net_rule *a, const struct policy_net_rule *b, char ***out, size_t *n,
			bool *empty)
{
	const struct policy_net_rule *src = a->methods ? a : b;
	const struct policy_net_rule *other = a->methods ? b : a;

	*out = NULL;
	*n = 0;
	*empty = false;
	if (!src->methods)
		return 0;
	char **v = calloc(src->n_methods + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < src->n_methods; i++) {
		if (other->methods && !has_method(other->methods, other->n_methods, src->methods[i]))
			continue;
		if (!(v[*n] = strdup(src->methods[i]))) {
			policy_strv_free(v, *n);
			return -ENOMEM;
		}
		(*n)++;
	}
	if (*n == 0) {
		free(v);
		*empty = true;
		return 0;
	}
	*out = v;
	return 0;
}

static bool methods_within(const struct policy_net_rule *a, const struct policy_net_rule *b)
{
	if (!b->methods)
		return true;
	if (!a->methods)
		return false;
	for (size_t i = 0; i < a->n_methods; i++)
		if (!has_method(b->methods, b->n_methods, a->methods[i]))
			return false;
	return true;
}

/* The narrower of two globs, when one contains the other. */
static bool glob_meet(const char *a, const char *b, const char **out)
{
	if (policy_glob_subset(a, b)) {
		*out = a;
		return true;
	}
	if (policy_glob_subset(b, a)) {
		*out = b;
		return true;
	}
	return false;
}

/* r ∩ rc as one rule; *ok false when empty or not expressible. */
static bool methods_share(const struct policy_net_rule *a, const struct policy_net_rule *b)
{
	for (size_t i = 0; i < a->n_methods; i++)
		if (has_method(b->methods, b->n_methods, a->methods[i]))
			return true;
	return false;
}

static int rule_meet(const struct policy_net_rule *r, const struct policy_net_rule *rc, struct policy_net_rule *out,
		     bool *ok, bool *whole, bool *inexpressible)
{
	const char *path, *query;
	bool empty;

	memset(out, 0, sizeof(*out));
	*ok = false;
	*whole = false;
	if (!glob_meet(r->path, rc->path, &path) || !glob_meet(r->query, rc->query, &query)) {
		/* Requests both allow, but no single glob says which: cut,
		 * narrower than the true intersection. */
		if (inexpressible && glob_meets(r->path, rc->path) && glob_meets(r->query, rc->query) &&
		    (!r->methods || !rc->methods || methods_share(r, rc)))
			*inexpressible = true;
		return 0;
	}
	if (methods_meet(r, rc, &out->methods, &out->n_methods, &empty) < 0)
		return -ENOMEM;
	if (empty)
		return 0;
	*whole = methods_within(r, rc) && path == r->path && query == r->query && (!r->websocket || rc->websocket);
	out->websocket = r->websocket && rc->websocket;
	out->loc = *whole ? r->loc : rc->loc;
	char id[POLICY_ID_MAX + 1];
	if (*whole)
		snprintf(id, sizeof(id), "%s", r->id);
	else
		snprintf(id, sizeof(id), "%s&%s", r->id, rc->id);
	if ((path && !(out->path = strdup(path))) || (query && !(out->query = strdup(query))) ||
	    !(out->id = strdup(id))) {
		policy_rule_clear(out);
		return -ENOMEM;
	}
	*ok = true;
	return 0;
}

static int rule_copy(const struct policy_net_rule *r, struct policy_net_rule *out)
{
	bool ok, whole;
	struct policy_net_rule any = { 0 };
	return rule_meet(r, &any, out, &ok, &whole, NULL);
}

/* E ∩ C as one endpoint; *ok false when empty. *whole when it is E. */
/* Every request r allows is allowed by one of C's rules: several of them
 * may together cover a rule none covers alone. */
static bool rule_within_union(const struct policy_net_rule *r, const struct policy_endpoint *C)
{
	const char **paths = calloc(C->n_rules + 1, sizeof(*paths));
	size_t n = 0;
	bool in = false;

	if (!paths)
		return false;
	for (size_t j = 0; j < C->n_rules; j++) {
		const struct policy_net_rule *c = &C->rules[j];
		if (methods_within(r, c) && policy_glob_subset(r->query, c->query) && (!r->websocket || c->websocket))
			paths[n++] = c->path;
	}
	if (n)
		in = policy_glob_subset_any(r->path, paths, n);
	free(paths);
	return in;
}

static int endpoint_meet(const struct policy_endpoint *E, const struct policy_endpoint *C, struct policy_endpoint *out,
			 bool *ok, bool *whole, size_t *rules_cut, size_t *inexpressible)
{
	const char *host;

	memset(out, 0, sizeof(*out));
	*ok = false;
	*whole = false;
	*rules_cut = 0;
	*inexpressible = 0;
	if (policy_host_covers(C->host, E->host))
		host = E->host;
	else if (policy_host_covers(E->host, C->host))
		host = C->host;
	else
		return 0;
	if (!(out->ports = calloc(E->n_ports ? E->n_ports : 1, sizeof(*out->ports))))
		return -ENOMEM;
	for (size_t i = 0; i < E->n_ports; i++)
		if (has_port(C, E->ports[i]))
			out->ports[out->n_ports++] = E->ports[i];
	if (out->n_ports == 0) {
		policy_endpoint_clear(out);
		return 0;
	}
	bool rules_whole = true;
	const struct policy_endpoint *from = NULL;
	if (C->n_rules == 0)
		from = E;
	else if (E->n_rules == 0) {
		from = C;
		rules_whole = false;
	}
	if (from) {
		if (from->n_rules && !(out->rules = calloc(from->n_rules, sizeof(*out->rules))))
			goto oom;
		for (size_t i = 0; i < from->n_rules; i++, out->n_rules++)
			if (rule_copy(&from->rules[i], &out->rules[i]) < 0)
				goto oom;
	} else {
		if (!(out->rules = calloc(E->n_rules * C->n_rules, sizeof(*out->rules))))
			goto oom;
		for (size_t i = 0; i < E->n_rules; i++) {
			bool kept = false, inex = false;
			size_t before = out->n_rules;
			if (rule_within_union(&E->rules[i], C)) {
				if (rule_copy(&E->rules[i], &out->rules[out->n_rules]) < 0)
					goto oom;
				out->n_rules++;
				continue;
			}
			for (size_t j = 0; j < C->n_rules && !kept; j++) {
				bool rok, rwhole;
				struct policy_net_rule *slot = &out->rules[out->n_rules];
				if (rule_meet(&E->rules[i], &C->rules[j], slot, &rok, &rwhole, &inex) < 0)
					goto oom;
				if (!rok)
					continue;
				out->n_rules++;
				if (rwhole) {
					/* All of the rule survives: pieces made
					 * from earlier ceiling rules are redundant. */
					kept = true;
					struct policy_net_rule keep = *slot;
					for (size_t k = before; k < out->n_rules - 1; k++)
						policy_rule_clear(&out->rules[k]);
					out->rules[before] = keep;
					out->n_rules = before + 1;
				}
			}
			if (!kept) {
				rules_whole = false;
				(*rules_cut)++;
				*inexpressible += inex;
			}
		}
		if (out->n_rules == 0) {
			policy_endpoint_clear(out);
			return 0;
		}
	}
	out->intercept = E->intercept || C->intercept;
	/* MCP mediation (protocol: mcp) is kept when either layer asks for it:
	 * dropping it would let the endpoint's requests pass unjudged. */
	const struct policy_endpoint *m = E->mcp_server ? E : C->mcp_server ? C : NULL;
	if (m) {
		if (!(out->mcp_server = strdup(m->mcp_server)))
			goto oom;
		out->mcp_loc = m->mcp_loc;
	}
	*whole = host == E->host && out->n_ports == E->n_ports && rules_whole && out->intercept == E->intercept &&
		 (E->mcp_server != NULL) == (out->mcp_server != NULL);
	out->loc = *whole ? E->loc : C->loc;
	char id[POLICY_ID_MAX + 1];
	if (*whole || C->n_rules == 0)
		snprintf(id, sizeof(id), "%s", E->id);
	else
		snprintf(id, sizeof(id), "%s&%s", E->id, C->id);
	if (!(out->host = strdup(host)) || !(out->id = strdup(id)))
		goto oom;
	*ok = true;
	return 0;
oom:
	policy_endpoint_clear(out);
	return -ENOMEM;
}

static bool cidr_within(const struct policy_cidr *a, const struct policy_cidr *b)
{
	if (a->family != b->family || b->prefix > a->prefix || (b->port && b->port != a->port))
		return false;
	unsigned full = b->prefix / 8, rest = b->prefix % 8;
	if (memcmp(a->addr, b->addr, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));
		if ((a->addr[full] & mask) != (b->addr[full] & mask))
			return false;
	}
	return true;
}

/* Whether a and b decide some common host:port (within w's, when w is
 * not NULL). Host patterns overlap exactly when one covers the other. */
static bool shares_domain(const struct policy_endpoint *a, const struct policy_endpoint *b,
			  const struct policy_endpoint *w)
{
	if (!policy_host_covers(a->host, b->host) && !policy_host_covers(b->host, a->host))
		return false;
	if (w && !policy_host_covers(w->host, a->host) && !policy_host_covers(a->host, w->host))
		return false;
	if (w && !policy_host_covers(w->host, b->host) && !policy_host_covers(b->host, w->host))
		return false;
	for (size_t i = 0; i < a->n_ports; i++)
		if (has_port(b, a->ports[i]) && (!w || has_port(w, a->ports[i])))
			return true;
	return false;
}

/* The first endpoint before i that was narrowed and shares a host and port
 * with endpoint i, or SIZE_MAX. */
static size_t shadowed_by(const struct policy_network *net, const bool *narrowed, size_t i)
{
	const struct policy_endpoint *E = &net->endpoints[i];

	for (size_t k = 0; k < i; k++) {
		const struct policy_endpoint *P = &net->endpoints[k];
		bool port = false;
		for (size_t x = 0; x < P->n_ports && !port; x++)
			port = has_port(E, P->ports[x]);
		if (narrowed[k] && port && (policy_host_covers(P->host, E->host) || policy_host_covers(E->host, P->host)))
			return k;
	}
	return SIZE_MAX;
}

/* The endpoints: each kept when one enterprise endpoint holds all of it,
 * else replaced by its pieces inside the enterprise's endpoints, in their
 * order, else cut. */
static int narrow_endpoints(struct lctx *c, struct ceiling *e, unsigned line)
{
	struct policy_network *net = &c->p->network;
	const struct policy_network *cn = &e->pol->network;
	int r;

	struct policy_endpoint *out = NULL;
	size_t n_out = 0;
	bool *narrowed = calloc(net->n_endpoints + 1, sizeof(*narrowed));
	if (!narrowed)
		return layer_oom(c);
	for (size_t i = 0; i < net->n_endpoints; i++) {
		struct policy_endpoint *E = &net->endpoints[i];
		size_t pieces = 0, rules_cut = 0, inexpressible = 0;
		bool kept = false;
		char qh[300];

		/* The first endpoint matching host and port decides. When an
		 * earlier one that overlaps this one was narrowed, a request
		 * it used to decide (a port it lost, a host beneath its
		 * wildcard) would now reach this one, which the developer
		 * never let decide it: this one goes too. */
		size_t shadow = shadowed_by(net, narrowed, i);
		if (shadow != SIZE_MAX) {
			narrowed[i] = true;
			layer_quote(E->host, qh, sizeof(qh));
			if ((r = layer_cut(c, &E->loc, e, line,
				     "network.endpoints %s (host %s) cut: it overlaps %s (line %u), which comes first "
				     "and was narrowed; requests that one decided must not fall through to this one",
				     E->id, qh, net->endpoints[shadow].id, net->endpoints[shadow].loc.line)) < 0)
				goto fail;
			continue;
		}

		struct policy_endpoint *nv = realloc(out, (n_out + cn->n_endpoints + 1) * sizeof(*out));
		if (!nv)
			goto oom;
		out = nv;
		/* The enterprise's endpoints decide first-match too: the
		 * pieces keep their order, so a request meets the piece of the
		 * enterprise endpoint that would decide it. An enterprise
		 * endpoint that shares requests with E but leaves no piece
		 * (no rule in common) must not let those requests reach a
		 * later piece: later pieces overlapping it are cut as well. */
		size_t dropped[64], n_dropped = 0;
		bool overflow = false, done = false;
		for (size_t j = 0; j < cn->n_endpoints && !done; j++) {
			const struct policy_endpoint *C = &cn->endpoints[j];
			bool ok, whole, blocked = false;
			size_t rc = 0, ix = 0;
			if (!shares_domain(E, C, NULL))
				continue;
			for (size_t k = 0; k < n_dropped && !blocked; k++)
				blocked = shares_domain(C, &cn->endpoints[dropped[k]], E);
			if (blocked || overflow) {
				rules_cut++;
				if (n_dropped < sizeof(dropped) / sizeof(*dropped))
					dropped[n_dropped++] = j;
				else
					overflow = true;
				continue;
			}
			if (endpoint_meet(E, C, &out[n_out], &ok, &whole, &rc, &ix) < 0)
				goto oom;
			inexpressible += ix;
			if (!ok) {
				if (n_dropped < sizeof(dropped) / sizeof(*dropped))
					dropped[n_dropped++] = j;
				else
					overflow = true;
				continue;
			}
			rules_cut += rc;
			if (whole && pieces == 0 && n_dropped == 0) {
				/* The first enterprise endpoint E meets holds all of
				 * it: E survives as it is. */
				n_out++;
				kept = true;
				break;
			}
			n_out++;
			pieces++;
			/* A piece that is all of E decides every request E
			 * could; later enterprise endpoints never would. */
			done = whole;
		}
		if (kept)
			continue;
		narrowed[i] = true;
		layer_quote(E->host, qh, sizeof(qh));
		unsigned eline = line;
		for (size_t j = 0; j < cn->n_endpoints; j++)
			if (policy_host_covers(cn->endpoints[j].host, E->host) ||
			    policy_host_covers(E->host, cn->endpoints[j].host)) {
				eline = cn->endpoints[j].loc.line;
				break;
			}
		const char *inex_note = inexpressible ? "; where a rule's path and the enterprise's cross without "
							"one containing the other, their intersection is not one pattern "
							"and is cut too (narrower than the true intersection)"
						      : "";
		if (pieces)
			r = layer_cut(c, &E->loc, e, eline,
				"network.endpoints %s (host %s) narrowed to what the enterprise allows (%s)%s", E->id,
				qh,
				rules_cut ? "rules beyond the enterprise's methods or paths cut or narrowed"
					  : "hosts, ports, methods or paths",
				inex_note);
		else
			r = layer_cut(c, &E->loc, e, eline,
				"network.endpoints %s (host %s) cut: no enterprise endpoint allows this host, "
				"its ports and its requests%s",
				E->id, qh, inex_note);
		if (r < 0)
			goto fail;
	}
	free(narrowed);
	for (size_t i = 0; i < net->n_endpoints; i++)
		policy_endpoint_clear(&net->endpoints[i]);
	free(net->endpoints);
	net->endpoints = out;
	net->n_endpoints = n_out;
	return 0;
oom:
	r = layer_oom(c);
fail:
	free(narrowed);
	for (size_t k = 0; k < n_out; k++)
		policy_endpoint_clear(&out[k]);
	free(out);
	return r;
}

/* network.allow_private: a range is kept when an enterprise range holds it. */
static int narrow_allow_private(struct lctx *c, struct ceiling *e, unsigned line)
{
	struct policy_network *net = &c->p->network;
	const struct policy_network *cn = &e->pol->network;
	int r;

	size_t w = 0;
	for (size_t i = 0; i < net->n_allow_private; i++) {
		bool ok = false;
		for (size_t j = 0; j < cn->n_allow_private && !ok; j++)
			ok = cidr_within(&net->allow_private[i], &cn->allow_private[j]);
		if (ok) {
			net->allow_private[w++] = net->allow_private[i];
			continue;
		}
		char buf[80];
		policy_cidr_format(&net->allow_private[i], buf, sizeof(buf));
		if ((r = layer_cut(c, &net->allow_private[i].loc, e, line,
			     "network.allow_private %s cut: no enterprise allow_private range holds it", buf)) < 0)
			return r;
	}
	net->n_allow_private = w;
	return 0;
}

static int narrow_resolve(struct lctx *c, struct ceiling *e, unsigned line)
{
	struct policy_network *net = &c->p->network;
	const struct policy_network *cn = &e->pol->network;
	size_t w = 0;
	int r;

	/* network.resolve replaces DNS for a name: a pin the enterprise does
	 * not make would send the traffic of a name it allows (a passthrough
	 * tunnel, unexamined) to an address of the developer's choosing. A
	 * pin is kept only when the enterprise pins the name to the same
	 * address; the enterprise's pins apply. */
	for (size_t i = 0; i < net->n_resolve; i++) {
		struct policy_resolve *d = &net->resolve[i];
		const struct policy_resolve *er = NULL;
		for (size_t j = 0; j < cn->n_resolve && !er; j++)
			if (!strcmp(cn->resolve[j].host, d->host))
				er = &cn->resolve[j];
		if (er && !strcmp(er->addr, d->addr)) {
			net->resolve[w++] = *d;
			continue;
		}
		char qh[300];
		layer_quote(d->host, qh, sizeof(qh));
		r = er ? layer_cut(c, &d->loc, e, er->loc.line, "network.resolve %s -> %s cut: the enterprise pins it to %s", qh,
			     d->addr, er->addr)
		       : layer_cut(c, &d->loc, e, line, "network.resolve %s -> %s cut: the enterprise does not pin this name", qh,
			     d->addr);
		free(d->host);
		free(d->addr);
		if (r < 0) {
			for (size_t k = i + 1; k < net->n_resolve; k++)
				net->resolve[w++] = net->resolve[k];
			net->n_resolve = w;
			return r;
		}
	}
	net->n_resolve = w;
	for (size_t j = 0; j < cn->n_resolve; j++) {
		bool have = false;
		for (size_t i = 0; i < net->n_resolve && !have; i++)
			have = !strcmp(net->resolve[i].host, cn->resolve[j].host);
		if (have)
			continue;
		struct policy_resolve *nv = realloc(net->resolve, (net->n_resolve + 1) * sizeof(*nv));
		if (!nv)
			return layer_oom(c);
		net->resolve = nv;
		nv[net->n_resolve] = (struct policy_resolve){ strdup(cn->resolve[j].host), strdup(cn->resolve[j].addr),
							      cn->resolve[j].loc };
		if (!nv[net->n_resolve].host || !nv[net->n_resolve].addr) {
			free(nv[net->n_resolve].host);
			free(nv[net->n_resolve].addr);
			return layer_oom(c);
		}
		net->n_resolve++;
	}
	return 0;
}

int layer_narrow_network(struct lctx *c, struct ceiling *e)
{
	struct policy_network *net = &c->p->network;
	const struct policy_network *cn = &e->pol->network;
	unsigned line = layer_given(e, "network");
	int r;

	if (!line || layer_locked(e, "network") || net->mode == POLICY_NET_NONE)
		return 0;
	if ((r = narrow_endpoints(c, e, line)) < 0 || (r = narrow_allow_private(c, e, line)) < 0 ||
	    (r = narrow_resolve(c, e, line)) < 0)
		return r;
	/* An extra CA bundle makes more upstream certificates trusted. */
	if (net->upstream_ca && !layer_str_eq(net->upstream_ca, cn->upstream_ca)) {
		char qc[300];
		layer_quote(net->upstream_ca, qc, sizeof(qc));
		if ((r = layer_cut(c, &c->p->origin.upstream_ca, e, layer_given(e, "network.upstream_ca") ?: line,
			     "network.upstream_ca %s cut: the enterprise does not trust it", qc)) < 0)
			return r;
		free(net->upstream_ca);
		net->upstream_ca = NULL;
		c->p->origin.upstream_ca = e->pol->origin.upstream_ca;
	}
	if (layer_given(e, "network.leak_scan")) {
		if (net->allow_compressed && !cn->allow_compressed) {
			net->allow_compressed = false;
			c->p->origin.allow_compressed = e->pol->origin.allow_compressed;
		}
		if (cn->max_body > net->max_body) {
			net->max_body = cn->max_body;
			c->p->origin.max_body = e->pol->origin.max_body;
		}
	}
	return 0;
}

/* ---- credentials ---- */

static bool strv_within(char *const *a, size_t na, char *const *b, size_t nb, bool glob)
{
	if (!b)
		return true;
	if (!a)
		return false;
	for (size_t i = 0; i < na; i++) {
		bool ok = false;
		if (glob)
			ok = policy_glob_subset_any(a[i], (const char *const *)b, nb);
		for (size_t j = 0; j < nb && !ok && !glob; j++)
			ok = strcmp(a[i], b[j]) == 0;
		if (!ok)
			return false;
	}
	return true;
}

/* A binding the enterprise's binding of the same credential contains:
 * the same host or one beneath its wildcard, the same port and place for
 * the secret, and no more methods, paths, repositories or pushes. */
static bool binding_within(const struct policy_cred_binding *b, const struct policy_cred_binding *cb)
{
	if (!policy_host_covers(cb->host, b->host) || b->port != cb->port || b->where != cb->where ||
	    !layer_str_eq(b->header, cb->header) || !layer_str_eq(b->query, cb->query))
		return false;
	if (!strv_within(b->methods, b->n_methods, cb->methods, cb->n_methods, false) ||
	    !strv_within(b->paths, b->n_paths, cb->paths, cb->n_paths, true))
		return false;
	if (cb->git) {
		if (!b->git)
			return false;
		if (!strv_within(b->git->repos, b->git->n_repos, cb->git->repos, cb->git->n_repos, true) ||
		    (b->git->fetch && !cb->git->fetch) || (b->git->delete_refs && !cb->git->delete_refs) ||
		    (b->git->tags && !cb->git->tags))
			return false;
		if (b->git->push && (!cb->git->push ||
				     !strv_within(b->git->push, b->git->n_push, cb->git->push, cb->git->n_push, true)))
			return false;
	}
	return true;
}

/* Whether the effective network still takes host:port through an
 * intercepting endpoint (the broker needs to see inside the request). */
static bool binding_reachable(const struct policy_network *net, const struct policy_cred_binding *b)
{
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		if (has_port(ep, b->port) && ep->intercept && policy_host_covers(ep->host, b->host))
			return true;
	}
	return false;
}

bool policy_credential_same_source(const struct policy_credential *a, const struct policy_credential *b)
{
	if (a->source != b->source || !layer_str_eq(a->source_arg, b->source_arg) || a->n_command != b->n_command)
		return false;
	for (size_t i = 0; i < a->n_command; i++)
		if (!layer_str_eq(a->command[i], b->command[i]))
			return false;
	return true;
}

int layer_narrow_credentials(struct lctx *c, const struct ceiling *e, bool by_ceiling)
{
	struct policy *p = c->p;
	unsigned line = e ? layer_given(e, "credentials") : 0;
	size_t wc = 0;
	int r;

	if (by_ceiling && (!line || layer_locked(e, "credentials")))
		return 0;
	for (size_t i = 0; i < p->n_credentials; i++) {
		struct policy_credential *cr = &p->credentials[i];
		const struct policy_credential *cc = NULL;
		size_t wb = 0;

		if (by_ceiling)
			for (size_t j = 0; j < e->pol->n_credentials && !cc; j++)
				if (strcmp(e->pol->credentials[j].name, cr->name) == 0)
					cc = &e->pol->credentials[j];
		/* The enterprise's bindings are about its secret: another
		 * secret under the same name does not inherit them. */
		if (cc && !policy_credential_same_source(cr, cc)) {
			if ((r = layer_cut(c, &cr->loc, e, cc->loc.line,
				     "credentials %s cut: its source is not the enterprise's credential of that name",
				     cr->name)) < 0)
				return r;
			policy_credential_clear(cr);
			continue;
		}
		for (size_t k = 0; k < cr->n_bindings; k++) {
			struct policy_cred_binding *b = &cr->bindings[k];
			bool ok = false;
			char qh[300];

			if (by_ceiling) {
				for (size_t j = 0; cc && j < cc->n_bindings && !ok; j++)
					ok = binding_within(b, &cc->bindings[j]);
			} else {
				ok = binding_reachable(&p->network, b);
			}
			if (ok) {
				cr->bindings[wb++] = *b;
				continue;
			}
			layer_quote(b->host, qh, sizeof(qh));
			if (by_ceiling)
				r = layer_cut(c, &b->loc, e, cc ? cc->loc.line : line,
					"credentials %s binding %s (host %s) cut: %s", cr->name, b->id, qh,
					cc ? "no binding of the enterprise's credential of that name contains it"
					   : "the enterprise has no credential of that name");
			else
				r = layer_cut(c, &b->loc, e, layer_given(e, "network"),
					"credentials %s binding %s (host %s) cut: the narrowed network no longer "
					"takes its host and port through an intercepting endpoint",
					cr->name, b->id, qh);
			policy_binding_clear(b);
			if (r < 0)
				return r;
		}
		cr->n_bindings = wb;
		if (wb == 0) {
			policy_credential_clear(cr);
			continue;
		}
		p->credentials[wc++] = *cr;
	}
	p->n_credentials = wc;
	return 0;
}
