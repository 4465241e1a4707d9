/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The widening prover (diff.h). Each section is a set; NEW ⊆ OLD is
 * decided by splitting the space into atoms (glob_atoms: the pieces on
 * which every pattern involved is constant) and deciding each atom with
 * the same rule the enforcing code applies: the first endpoint whose host
 * and port match, the rules inside it, the deepest mount, and so on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/protect.h"
#include "net/addr.h"
#include "net/netpolicy.h"
#include "analysis/diff.h"
#include "policy/glob.h"
#include "policy/mcp.h"
#include "util/cleanup.h"

/* ---- findings ---- */

static char *vfmt(const char *fmt, va_list ap) PRINTF_LIKE(1, 0);
static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

static void loc_text(const struct policy *p, const struct policy_loc *l, char *buf, size_t size)
{
	const char *file = l && l->file ? l->file : p->file;
	if (l && l->line)
		snprintf(buf, size, "%s:%u", file, l->line);
	else
		snprintf(buf, size, "%s (default)", file);
}

/* Record "SECTION: NEW WHERE <fmt>". witness is copied. */
static int add(struct policy_diff *d, struct error *err, const char *section, const struct policy *p,
	       const struct policy_loc *loc, const char *witness, const char *fmt, ...) PRINTF_LIKE(7, 8);
static int add(struct policy_diff *d, struct error *err, const char *section, const struct policy *p,
	       const struct policy_loc *loc, const char *witness, const char *fmt, ...)
{
	char where[512];
	va_list ap;

	loc_text(p, loc, where, sizeof(where));
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct policy_widening *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		d->v = v;
		d->cap = cap;
	}
	va_start(ap, fmt);
	_cleanup_free_ char *msg = vfmt(fmt, ap);
	va_end(ap);
	struct policy_widening *w = &d->v[d->n];
	*w = (struct policy_widening){ 0 };
	w->section = strdup(section);
	w->where = strdup(where);
	w->witness = strdup(witness ? witness : "");
	if (msg && asprintf(&w->text, "%s: NEW %s %s", section, where, msg) < 0)
		w->text = NULL;
	if (!msg || !w->section || !w->where || !w->witness || !w->text) {
		free(w->section);
		free(w->where);
		free(w->witness);
		free(w->text);
		return error_set(err, ENOMEM, "out of memory");
	}
	d->n++;
	return 0;
}

void policy_diff_free(struct policy_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].section);
		free(d->v[i].where);
		free(d->v[i].witness);
		free(d->v[i].text);
	}
	free(d->v);
	*d = (struct policy_diff){ 0 };
}

void policy_diff_print(const struct policy_diff *d, FILE *f)
{
	for (size_t i = 0; i < d->n; i++) {
		for (const char *c = d->v[i].text; *c; c++)
			fputc((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f ? '?' : *c, f);
		fputc('\n', f);
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c >= 0x7f)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

void policy_diff_print_json(const struct policy_diff *d, FILE *f)
{
	fputs("[", f);
	for (size_t i = 0; i < d->n; i++) {
		fputs(i ? ",\n {\"section\": " : "\n {\"section\": ", f);
		json_string(f, d->v[i].section);
		fputs(", \"new\": ", f);
		json_string(f, d->v[i].where);
		fputs(", \"witness\": ", f);
		json_string(f, d->v[i].witness);
		fputs(", \"message\": ", f);
		json_string(f, d->v[i].text);
		fputs("}", f);
	}
	fputs(d->n ? "\n]\n" : "]\n", f);
}

/* ---- compiled pattern lists ---- */

struct gvec {
	struct glob **v;
	size_t n, cap;
};

static void gvec_free(struct gvec *g)
{
	for (size_t i = 0; i < g->n; i++)
		glob_free(g->v[i]);
	free(g->v);
	*g = (struct gvec){ 0 };
}

static int gvec_push(struct gvec *g, struct glob *x, struct error *err)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct glob **v = realloc(g->v, cap * sizeof(*v));
		if (!v) {
			glob_free(x);
			return error_set(err, ENOMEM, "out of memory");
		}
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = x;
	return 0;
}

static int gvec_add(struct gvec *g, const char *pattern, enum glob_kind kind, struct error *err)
{
	struct glob *x = NULL;
	int r = glob_compile(pattern, kind, &x, err);
	if (r < 0)
		return r;
	return gvec_push(g, x, err);
}

#define CG(v) ((const struct glob *const *)(v))

/* ---- network: requests inside a pair of endpoints ---- */

static const char *const common_methods[] = { "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS",
					      "TRACE", "PROPFIND", "X-AIRLOCK-OTHER" };

static bool rule_has_method(const struct policy_net_rule *r, const char *m)
{
	if (!r->methods || r->n_methods == 0)
		return true;
	for (size_t i = 0; i < r->n_methods; i++)
		if (r->methods[i] && !strcmp(r->methods[i], m))
			return true;
	return false;
}

/* The method atoms of a set of rules: each named method, and one named by
 * none (standing for all the others). */
struct methods {
	const char *v[256];
	size_t n;
	bool overflow; /* more names than v holds: the answer would not be exact */
};

static void methods_add(struct methods *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i], name))
			return;
	if (m->n < ARRAY_SIZE(m->v) - 1)
		m->v[m->n++] = name;
	else
		m->overflow = true;
}

static void methods_close(struct methods *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(common_methods); i++) {
		bool named = false;
		for (size_t j = 0; j < m->n && !named; j++)
			named = !strcmp(m->v[j], common_methods[i]);
		if (!named) {
			m->v[m->n++] = common_methods[i];
			return;
		}
	}
}

struct req_witness {
	bool found;
	const char *method;
	char *path;
	char *query;
	bool websocket;
	bool tunnel; /* inside a TLS tunnel (https): the proxy's parser never sees it */
};

struct rule_ctx {
	const struct policy_net_rule *const *old; /* the OLD rules applicable, n_old */
	size_t n_old;
	bool pseudo;   /* the NEW endpoint passes opaque tunnels: dot paths are allowed in them */
	const struct glob *query;
	struct req_witness *w;
};

/* One atom of request paths: sig over the applicable OLD rules' paths,
 * then the dot-path language. */
static int rule_atom(void *vctx, const bool *sig, const char *witness, size_t len, struct error *err)
{
	struct rule_ctx *c = vctx;
	struct gvec q = { 0 };
	bool subset;
	char *wq = NULL;
	int r;

	(void)len;
	if (sig[c->n_old]) {
		/* A dot path: refused by the proxy's parser in every request
		 * it reads (net/http.c), so allowed only inside a tunnel NEW
		 * passes through unseen. */
		if (!c->pseudo)
			return 0;
		c->w->found = true;
		c->w->tunnel = true;
		c->w->path = strdup(witness);
		c->w->query = strdup("");
		return 1;
	}
	for (size_t i = 0; i < c->n_old; i++) {
		if (!sig[i])
			continue;
		const char *pq = c->old[i]->query ? c->old[i]->query : "**";
		if ((r = gvec_add(&q, pq, GLOB_PATH, err)) < 0)
			goto out;
	}
	r = glob_subset(c->query, CG(q.v), q.n, &subset, &wq, err);
	if (r < 0)
		goto out;
	if (!subset) {
		c->w->found = true;
		c->w->path = strdup(witness);
		c->w->query = wq;
		wq = NULL;
		r = 1;
	}
out:
	free(wq);
	gvec_free(&q);
	return r;
}

/* Does NEW's endpoint e allow a request that OLD's endpoint o (which has
 * rules; NULL rules = o denies every request) does not? */
static int requests_widen(const struct policy_endpoint *e, const struct policy_endpoint *o, struct req_witness *w,
			  const struct policy_net_rule **which, struct error *err)
{
	static const struct policy_net_rule any_rule = { .websocket = true };
	const struct policy_net_rule *nr = e->rules;
	size_t nn = e->n_rules;
	struct net_decision td;
	bool pseudo = nn == 0 && !e->intercept && netpol_decide_tunnel(e, 443, &td);
	struct methods m = { .n = 0 };
	_cleanup_glob_ struct glob *dots = NULL, *slash = NULL;
	int r;

	if (nn == 0) {
		nr = &any_rule;
		nn = 1;
	}
	methods_add(&m, "GET");
	for (size_t i = 0; i < nn; i++)
		for (size_t k = 0; k < nr[i].n_methods; k++)
			methods_add(&m, nr[i].methods[k]);
	for (size_t i = 0; o && i < o->n_rules; i++)
		for (size_t k = 0; k < o->rules[i].n_methods; k++)
			methods_add(&m, o->rules[i].methods[k]);
	methods_close(&m);
	if (m.overflow)
		return error_set(err, E2BIG, "endpoint %s: too many distinct methods to compare", e->id);
	if ((r = glob_dot_segments(&dots, err)) < 0 || (r = glob_compile("/**", GLOB_PATH, &slash, err)) < 0)
		return r;

	_cleanup_free_ const struct policy_net_rule **app = calloc(o ? o->n_rules + 1 : 1, sizeof(*app));
	if (!app)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < nn; i++) {
		const struct policy_net_rule *rule = &nr[i];
		for (size_t mi = 0; mi < m.n; mi++) {
			if (!rule_has_method(rule, m.v[mi]))
				continue;
			for (int ws = 0; ws <= (rule->websocket ? 1 : 0); ws++) {
				size_t na = 0;
				for (size_t k = 0; o && k < o->n_rules; k++)
					if (rule_has_method(&o->rules[k], m.v[mi]) && (!ws || o->rules[k].websocket))
						app[na++] = &o->rules[k];
				struct gvec paths = { 0 };
				_cleanup_glob_ struct glob *path = NULL, *query = NULL;
				for (size_t k = 0; k < na && r >= 0; k++)
					r = gvec_add(&paths, app[k]->path ? app[k]->path : "**", GLOB_PATH, err);
				if (r >= 0)
					r = glob_compile(rule->path ? rule->path : "**", GLOB_PATH, &path, err);
				if (r >= 0)
					r = glob_compile(rule->query ? rule->query : "**", GLOB_PATH, &query, err);
				if (r >= 0) {
					/* the dot-path language goes last, not owned by paths */
					struct glob **outs = calloc(na + 1, sizeof(*outs));
					if (!outs) {
						r = error_set(err, ENOMEM, "out of memory");
					} else {
						for (size_t k = 0; k < na; k++)
							outs[k] = paths.v[k];
						outs[na] = dots;
						const struct glob *in[2] = { path, slash };
						struct rule_ctx c = { .old = app, .n_old = na, .pseudo = pseudo, .query = query, .w = w };
						r = glob_atoms(in, 2, CG(outs), na + 1, rule_atom, &c, err);
						free(outs);
					}
				}
				gvec_free(&paths);
				if (r < 0)
					return r;
				if (w->found) {
					if (!w->path || !w->query)
						return error_set(err, ENOMEM, "out of memory");
					w->method = m.v[mi];
					w->websocket = ws;
					*which = e->n_rules == 0 ? NULL : rule;
					return 0;
				}
			}
		}
	}
	return 0;
}

/* The request as a URL: https where the proxy sees inside TLS or the
 * port is 443, http otherwise (rules on a plain-HTTP port). */
static void req_text(const struct req_witness *w, const struct policy_endpoint *e, const char *host, uint16_t port,
		     char *buf, size_t size)
{
	bool tls = w->tunnel || port == 443 || (e->intercept && port != 80);
	snprintf(buf, size, "%s %s://%s:%u%s%s%s%s", w->method, tls ? "https" : "http", host, port, w->path,
		 w->query[0] ? "?" : "", w->query, w->websocket ? " (websocket upgrade)" : "");
}

struct net_ctx {
	const struct policy *old, *new_;
	struct policy_diff *d;
	uint8_t *done; /* (n_new) x (n_old + 1): pairs already reported */
	uint8_t *tls_done;
};

static bool ep_port(const struct policy_endpoint *ep, uint16_t port)
{
	for (size_t i = 0; i < ep->n_ports; i++)
		if (ep->ports[i] == port)
			return true;
	return false;
}

/* Does p's address check refuse every connection to host:port? Known for
 * an address and for a name p pins with network.resolve (other names are
 * resolved when the request is made, and count as public): the check of
 * net/netpolicy.c, as the proxy makes it after the host decision. */
static bool address_refused(const struct policy *p, const char *host, uint16_t port)
{
	char text[256];
	struct net_addr a;
	int numeric = addr_normalize_host(host, text, sizeof(text), &a);
	for (size_t i = 0; numeric == 0 && i < p->network.n_resolve; i++)
		if (!strcmp(p->network.resolve[i].host, text) &&
		    addr_normalize_host(p->network.resolve[i].addr, text, sizeof(text), &a) == 1)
			numeric = 1;
	if (numeric != 1)
		return false;
	struct policy_network net = p->network;
	struct net_decision d;
	net.mode = policy_net_mode(p);
	return !netpol_decide_address(&net, &a, port, &d);
}

/* Does ep pass TLS tunnels on port (with or without interception)? */
static bool ep_tunnels(const struct policy_endpoint *ep, uint16_t port)
{
	struct net_decision d;
	return ep && netpol_decide_tunnel(ep, port, &d);
}

static int host_atom(void *vctx, const bool *sig, const char *host, size_t len, struct error *err)
{
	struct net_ctx *c = vctx;
	const struct policy_network *nn = &c->new_->network, *on = &c->old->network;
	size_t n_new = nn->n_endpoints, n_old = on->n_endpoints;
	int r;

	(void)len;
	for (size_t i = 0; i < n_new; i++) {
		const struct policy_endpoint *e = &nn->endpoints[i];
		if (!sig[i])
			continue;
		for (size_t pi = 0; pi < e->n_ports; pi++) {
			uint16_t port = e->ports[pi];
			/* The proxy picks the first endpoint whose host and port
			 * match: is it e? */
			bool first = true;
			for (size_t k = 0; k < i && first; k++)
				if (sig[k] && ep_port(&nn->endpoints[k], port))
					first = false;
			if (!first || address_refused(c->new_, host, port))
				continue;
			size_t j = n_old;
			for (size_t k = 0; k < n_old && j == n_old && !address_refused(c->old, host, port); k++)
				if (sig[n_new + k] && ep_port(&on->endpoints[k], port))
					j = k;
			const struct policy_endpoint *o = j < n_old ? &on->endpoints[j] : NULL;
			uint8_t *done = &c->done[i * (n_old + 1) + j];
			if (!*done && (!o || o->n_rules > 0)) {
				struct req_witness w = { 0 };
				const struct policy_net_rule *which = NULL;
				char text[1024];
				r = requests_widen(e, o, &w, &which, err);
				if (r >= 0 && w.found) {
					*done = 1;
					req_text(&w, e, host, port, text, sizeof(text));
					if (o)
						r = add(c->d, err, "network", c->new_, which ? &which->loc : &e->loc, text,
							"allows %s; OLD %s:%u (%s) denies it", text,
							o->loc.file ? o->loc.file : c->old->file, o->loc.line, o->id);
					else
						r = add(c->d, err, "network", c->new_, which ? &which->loc : &e->loc, text,
							"allows %s; OLD denies it (no endpoint for %s:%u)", text, host, port);
				}
				free(w.path);
				free(w.query);
				if (r < 0)
					return r;
			}
			/* OLD's endpoint refuses tunnels there (rules without
			 * interception): every request NEW lets through an
			 * intercepted tunnel is one OLD never lets through TLS. */
			if (!*done && o && e->intercept && ep_tunnels(e, port) && !ep_tunnels(o, port)) {
				struct req_witness w = { 0 };
				const struct policy_net_rule *which = NULL;
				char text[1024];
				r = requests_widen(e, NULL, &w, &which, err);
				if (r >= 0 && w.found) {
					*done = 1;
					w.tunnel = true;
					req_text(&w, e, host, port, text, sizeof(text));
					r = add(c->d, err, "network", c->new_, which ? &which->loc : &e->loc, text,
						"allows %s; OLD %s:%u (%s) refuses TLS tunnels to it", text,
						o->loc.file ? o->loc.file : c->old->file, o->loc.line, o->id);
				}
				free(w.path);
				free(w.query);
				if (r < 0)
					return r;
			}
			/* TLS interception is what lets the proxy scan bodies
			 * and headers for leaked secrets. */
			if (o && o->intercept && !e->intercept && ep_tunnels(e, port) && !(c->tls_done[i] & 1)) {
				char hp[300];
				c->tls_done[i] |= 1;
				snprintf(hp, sizeof(hp), "%s:%u", host, port);
				r = add(c->d, err, "network.tls", c->new_, &e->loc, hp,
					"passes %s through without TLS interception; OLD intercepts and inspects it", hp);
				if (r < 0)
					return r;
			}
			/* protocol: mcp puts every MCP message through the
			 * gateway's decisions; without it they pass unjudged. */
			if (o && o->mcp_server && !e->mcp_server && !(c->tls_done[i] & 2)) {
				char hp[300];
				c->tls_done[i] |= 2;
				snprintf(hp, sizeof(hp), "%s:%u", host, port);
				r = add(c->d, err, "network.mcp", c->new_, &e->loc, hp,
					"passes MCP requests to %s unjudged (no protocol: mcp); OLD decides each through "
					"mcp.servers.%s", hp, o->mcp_server);
				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}

static int net_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	const struct policy_network *nn = &new_->network, *on = &old->network;
	bool old_off = policy_net_mode(old) == POLICY_NET_NONE;
	struct gvec hosts = { 0 };
	int r = 0;

	if (policy_net_mode(new_) == POLICY_NET_NONE)
		return 0;
	for (size_t i = 0; i < nn->n_endpoints && r >= 0; i++)
		r = gvec_add(&hosts, nn->endpoints[i].host, GLOB_HOST, err);
	for (size_t i = 0; !old_off && i < on->n_endpoints && r >= 0; i++)
		r = gvec_add(&hosts, on->endpoints[i].host, GLOB_HOST, err);
	if (r < 0)
		goto out;
	struct policy_network none = { 0 };
	struct policy tmp_old = *old;
	if (old_off)
		tmp_old.network = none;
	size_t n_old = tmp_old.network.n_endpoints;
	struct net_ctx c = { .old = &tmp_old, .new_ = new_, .d = d };
	c.done = calloc(nn->n_endpoints * (n_old + 1) + 1, 1);
	c.tls_done = calloc(nn->n_endpoints + 1, 1);
	if (!c.done || !c.tls_done)
		r = error_set(err, ENOMEM, "out of memory");
	else
		r = glob_atoms(NULL, 0, CG(hosts.v), hosts.n, host_atom, &c, err);
	free(c.done);
	free(c.tls_done);
	if (r < 0)
		goto out;

	/* Inspection of what passes. */
	if (nn->max_body < on->max_body && !old_off) {
		char w[64];
		snprintf(w, sizeof(w), "a body of %llu bytes", (unsigned long long)nn->max_body + 1);
		if ((r = add(d, err, "network.inspection", new_, &new_->origin.max_body, w,
			     "scans only %llu bytes of each body for leaks; OLD scans %llu", (unsigned long long)nn->max_body,
			     (unsigned long long)on->max_body)) < 0)
			goto out;
	}
	if (nn->allow_compressed && !on->allow_compressed && !old_off &&
	    (r = add(d, err, "network.inspection", new_, &new_->origin.allow_compressed, "a compressed request body",
		     "lets compressed request bodies pass unscanned; OLD refuses them")) < 0)
		goto out;
	if (nn->upstream_ca && (!on->upstream_ca || strcmp(nn->upstream_ca, on->upstream_ca) != 0) &&
	    (r = add(d, err, "network.tls", new_, &new_->origin.upstream_ca, nn->upstream_ca,
		     "trusts the upstream CA bundle %s; OLD does not", nn->upstream_ca)) < 0)
		goto out;
out:
	gvec_free(&hosts);
	return r;
}

/* ---- network.allow_private ---- */

/* Addresses standing for every non-public class addr_classify() knows
 * (one inside each range), tried inside a block NEW opens and OLD does
 * not. A block of addresses is a CIDR block and so is each class's range:
 * either the block lies inside a range (its first address is then in it)
 * or holds all of it (these then are). */
static const char *const nonpublic[] = {
	"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.0.1", "169.254.0.1", "169.254.169.254", "100.64.0.1",
	"100.100.100.200", "224.0.0.1", "0.0.0.1", "0.0.0.0", "255.255.255.255", "240.0.0.1", "192.0.0.1",
	"192.0.2.1", "198.18.0.1", "198.51.100.1", "203.0.113.1", "::1", "::", "fc00::1", "fd00::1",
	"fd00:ec2::254", "fd00:ec2::23", "fe80::1", "fec0::1", "ff02::1", "64:ff9b::a00:1", "64:ff9b:1::1",
	"100::1", "2001::1", "2001:db8::1", "3fff::1", "2002:a00:1::1", "::ffff:10.0.0.1", "4000::1",
};

static bool cidr_has(const struct policy_cidr *c, const struct net_addr *a)
{
	struct policy_cidr x = *c;
	x.port = 0;
	return addr_in_cidr(a, 0, &x);
}

static int private_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d,
			struct error *err)
{
	const struct policy_network *nn = &new_->network, *on = &old->network;
	bool old_off = policy_net_mode(old) == POLICY_NET_NONE;

	if (policy_net_mode(new_) == POLICY_NET_NONE)
		return 0;
	for (size_t i = 0; i < nn->n_allow_private; i++) {
		const struct policy_cidr *c = &nn->allow_private[i];
		unsigned full = c->family == AF_INET ? 32 : 128;
		struct net_addr cand[ARRAY_SIZE(nonpublic) + 2];
		size_t nc = 0;

		for (size_t k = 0; k < ARRAY_SIZE(nonpublic); k++) {
			char buf[64];
			struct net_addr a;
			if (addr_normalize_host(nonpublic[k], buf, sizeof(buf), &a) == 1)
				cand[nc++] = a;
		}
		/* the block's own first and last addresses */
		cand[nc].family = c->family;
		memcpy(cand[nc].a, c->addr, 16);
		cand[nc + 1] = cand[nc];
		for (unsigned b = c->prefix; b < full; b++)
			cand[nc + 1].a[b / 8] |= (uint8_t)(0x80 >> (b % 8));
		nc += 2;
		for (size_t k = 0; k < nc; k++) {
			struct net_addr *a = &cand[k];
			if (a->family != c->family || !cidr_has(c, a))
				continue;
			enum addr_class cls = addr_classify(a);
			if (cls == ADDR_PUBLIC || (cls == ADDR_METADATA && c->prefix != full))
				continue;
			/* a port NEW opens: its own, or one no OLD entry names */
			uint16_t port = c->port;
			if (port == 0) {
				port = 1;
				for (bool again = true; again;) {
					again = false;
					for (size_t j = 0; !old_off && j < on->n_allow_private; j++)
						if (on->allow_private[j].port == port) {
							port++;
							again = true;
						}
				}
			}
			/* Decided by the proxy's own address check on each side:
			 * an address NEW's check refuses (an IPv4-mapped one
			 * under an IPv6 block is checked as IPv4) is no witness. */
			struct policy_network nnet = *nn, onet = *on;
			struct net_decision dn, dold;
			nnet.mode = policy_net_mode(new_);
			onet.mode = policy_net_mode(old);
			if (!netpol_decide_address(&nnet, a, port, &dn) ||
			    (!old_off && netpol_decide_address(&onet, a, port, &dold)))
				continue;
			char text[64], w[96];
			addr_format(a, text, sizeof(text));
			if (a->family == AF_INET6)
				snprintf(w, sizeof(w), "[%s]:%u", text, port);
			else
				snprintf(w, sizeof(w), "%s:%u", text, port);
			int r = add(d, err, "network.allow_private", new_, &c->loc, w,
				    "allows connecting to %s (%s address); OLD denies it", w, addr_class_name(cls));
			if (r < 0)
				return r;
			break;
		}
	}
	return 0;
}

/* ---- filesystem ---- */

/* The mount table of a policy as prefix languages: what is visible, what
 * is writable (the deepest mount decides), what is denied, protected, and
 * where execution is granted. */
enum fs_role { FS_RO, FS_RW, FS_DENY, FS_PROTECT, FS_EXEC };

struct fs_entry {
	enum fs_role role;
	size_t depth; /* length of the path: deeper mounts cover shallower */
	bool under_ws;
	const struct policy_loc *loc;
	const char *what;
};

static const char *const baseline_dirs[] = { "/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
					     "/libx32" };
static const char *const default_exec_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };

struct fs_side {
	const struct policy *p;
	struct fs_entry *e;
	size_t off, n; /* this side's globs: off .. off + n in the shared list */
};

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static int fs_push(struct gvec *g, struct fs_entry **ents, size_t *cap, const char *pattern, enum glob_kind kind,
		   struct fs_entry e, struct error *err)
{
	int r;
	if (g->n >= *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct fs_entry *v = realloc(*ents, c * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		*ents = v;
		*cap = c;
	}
	if ((r = gvec_add(g, pattern, kind, err)) < 0)
		return r;
	(*ents)[g->n - 1] = e;
	return 0;
}

static int fs_side_build(const struct policy *p, struct gvec *g, struct fs_entry **ents, size_t *cap,
			 struct gvec *prot, struct fs_entry **pents, size_t *pcap, struct error *err)
{
	const char *ws = p->sandbox.workspace;
	int r = 0;
	const struct policy_loc *none = NULL;

	if (p->filesystem.baseline)
		for (size_t i = 0; i < ARRAY_SIZE(baseline_dirs) && r >= 0; i++)
			r = fs_push(g, ents, cap, baseline_dirs[i], GLOB_PREFIX,
				    (struct fs_entry){ FS_RO, strlen(baseline_dirs[i]), false, &p->origin.baseline,
						       "the system baseline" },
				    err);
	if (r >= 0 && ws)
		r = fs_push(g, ents, cap, ws, GLOB_PREFIX,
			    (struct fs_entry){ FS_RW, strlen(ws), true, &p->sandbox.workspace_loc, "the workspace" }, err);
	for (size_t i = 0; i < p->filesystem.read.n && r >= 0; i++) {
		const struct policy_path *x = &p->filesystem.read.v[i];
		r = fs_push(g, ents, cap, x->path, GLOB_PREFIX,
			    (struct fs_entry){ FS_RO, strlen(x->path), ws && path_under(x->path, ws), &x->loc,
					       "filesystem.read" },
			    err);
	}
	for (size_t i = 0; i < p->filesystem.write.n && r >= 0; i++) {
		const struct policy_path *x = &p->filesystem.write.v[i];
		r = fs_push(g, ents, cap, x->path, GLOB_PREFIX,
			    (struct fs_entry){ FS_RW, strlen(x->path), ws && path_under(x->path, ws), &x->loc,
					       "filesystem.write" },
			    err);
	}
	for (size_t i = 0; i < p->filesystem.deny.n && r >= 0; i++) {
		const struct policy_path *x = &p->filesystem.deny.v[i];
		r = fs_push(g, ents, cap, x->path, GLOB_PREFIX, (struct fs_entry){ FS_DENY, 0, false, &x->loc, "deny" },
			    err);
	}
	if (r >= 0 && p->process.exec_set) {
		for (size_t i = 0; i < p->process.exec.n && r >= 0; i++) {
			const struct policy_path *x = &p->process.exec.v[i];
			r = fs_push(g, ents, cap, x->path, GLOB_PREFIX,
				    (struct fs_entry){ FS_EXEC, 0, false, &x->loc, "process.exec" }, err);
		}
	} else if (r >= 0 && p->filesystem.baseline) {
		for (size_t i = 0; i < ARRAY_SIZE(default_exec_dirs) && r >= 0; i++)
			r = fs_push(g, ents, cap, default_exec_dirs[i], GLOB_PREFIX,
				    (struct fs_entry){ FS_EXEC, 0, false, &p->origin.exec, "the baseline's programs" },
				    err);
	}
	if (r < 0)
		return r;
	/* Protected paths: the workspace + '/' + glob; a directory glob
	 * (D/"**") also protects D itself. */
	struct protect_set ps;
	if (!ws)
		return 0;
	if (strchr(ws, '*'))
		return error_set(err, EINVAL, "%s: the workspace %s holds '*': its protected paths cannot be compared",
				 p->file, ws);
	if (protect_set_from_policy(p, &ps) < 0)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < ps.n && r >= 0; i++) {
		_cleanup_free_ char *abs = NULL, *dir = NULL;
		const struct policy_loc *loc = &p->origin.protect_defaults;
		for (size_t k = 0; k < p->filesystem.protect.n; k++)
			if (!strcmp(p->filesystem.protect.v[k].path, ps.pat[i]))
				loc = &p->filesystem.protect.v[k].loc;
		size_t n = strlen(ps.pat[i]);
		if (asprintf(&abs, "%s/%s", strcmp(ws, "/") ? ws : "", ps.pat[i]) < 0) {
			r = error_set(err, ENOMEM, "out of memory");
			break;
		}
		if (n > 3 && !strcmp(ps.pat[i] + n - 3, "/**")) {
			if (asprintf(&dir, "%s/%.*s", strcmp(ws, "/") ? ws : "", (int)(n - 3), ps.pat[i]) < 0)
				r = error_set(err, ENOMEM, "out of memory");
			else
				r = fs_push(prot, pents, pcap, dir, GLOB_FILE,
					    (struct fs_entry){ FS_PROTECT, 0, false, loc, "protect" }, err);
		}
		if (r >= 0)
			r = fs_push(prot, pents, pcap, abs, GLOB_FILE,
				    (struct fs_entry){ FS_PROTECT, 0, false, loc, "protect" }, err);
	}
	protect_set_free(&ps);
	(void)none;
	return r;
}

struct fs_verdict {
	bool read, write, exec;
	const struct fs_entry *mount; /* the deepest mount */
	const struct fs_entry *exec_by;
};

static struct fs_verdict fs_judge(const struct fs_side *s, const bool *sig)
{
	struct fs_verdict v = { 0 };
	bool deny = false, exec_right = false;

	for (size_t i = 0; i < s->n; i++) {
		const struct fs_entry *e = &s->e[i];
		if (!sig[s->off + i])
			continue;
		switch (e->role) {
		case FS_RO:
		case FS_RW:
			/* Parents before children: the deepest mount shows;
			 * the later of two at one depth (write after read). */
			if (!v.mount || e->depth >= v.mount->depth)
				v.mount = e;
			if (!s->p->process.exec_set && e->under_ws) {
				exec_right = true;
				if (!v.exec_by)
					v.exec_by = e;
			}
			break;
		case FS_DENY:
			deny = true;
			break;
		case FS_PROTECT: /* never here: protect_diff() and fs_atom()'s search */
			break;
		case FS_EXEC:
			exec_right = true;
			if (!v.exec_by || v.exec_by->role != FS_EXEC)
				v.exec_by = e;
			break;
		}
	}
	if (!v.mount || deny)
		return (struct fs_verdict){ 0 };
	v.read = true;
	v.write = v.mount->role == FS_RW;
	v.exec = exec_right;
	return v;
}

struct fs_ctx {
	struct fs_side old, new_;
	struct policy_diff *d;
	const struct gvec *all;      /* mounts, deny, exec of both sides */
	const struct gvec *new_prot; /* NEW's protected globs */
	const struct glob *root;
	const struct glob *empty_seg; /* paths with an empty segment: never a witness */
	/* Reported (NEW entry, OLD deciding entry, aspect) triples: one
	 * line per pair of rules, not one per atom. */
	size_t *seen;
	size_t n_seen, cap_seen;
};

static int fs_seen(struct fs_ctx *c, const struct fs_entry *ne, const struct fs_entry *oe, unsigned aspect,
		   bool *already, struct error *err)
{
	size_t no = c->old.n + 1;
	size_t key = (((size_t)(ne - c->new_.e)) * no + (oe ? (size_t)(oe - c->old.e) : c->old.n)) * 4 + aspect;
	for (size_t i = 0; i < c->n_seen; i++)
		if (c->seen[i] == key) {
			*already = true;
			return 0;
		}
	*already = false;
	if (c->n_seen == c->cap_seen) {
		size_t cap = c->cap_seen ? c->cap_seen * 2 : 32;
		size_t *v = realloc(c->seen, cap * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		c->seen = v;
		c->cap_seen = cap;
	}
	c->seen[c->n_seen++] = key;
	return 0;
}

static int fs_atom(void *vctx, const bool *sig, const char *path, size_t len, struct error *err)
{
	struct fs_ctx *c = vctx;
	struct fs_verdict nv = fs_judge(&c->new_, sig), ov = fs_judge(&c->old, sig);
	bool already;
	int r = 0;

	(void)len;
	if (nv.write && !ov.write) {
		if ((r = fs_seen(c, nv.mount, ov.mount, 0, &already, err)) < 0 || already)
			goto exec;
		/* A path of this atom that NEW does not protect. */
		const struct glob **in = calloc(c->all->n + 1, sizeof(*in));
		const struct glob **out = calloc(c->all->n + c->new_prot->n + 2, sizeof(*out));
		size_t ni = 0, no = 0;
		bool found = false;
		_cleanup_free_ char *w = NULL;
		if (!in || !out) {
			free(in);
			free(out);
			return error_set(err, ENOMEM, "out of memory");
		}
		in[ni++] = c->root;
		for (size_t i = 0; i < c->all->n; i++) {
			if (sig[i])
				in[ni++] = c->all->v[i];
			else
				out[no++] = c->all->v[i];
		}
		for (size_t i = 0; i < c->new_prot->n; i++)
			out[no++] = c->new_prot->v[i];
		out[no++] = c->empty_seg;
		r = glob_find(in, ni, out, no, &found, &w, err);
		free(in);
		free(out);
		if (r < 0)
			return r;
		if (found)
			r = add(c->d, err, "filesystem.write", c->new_.p, nv.mount->loc, w, "(%s) allows writing %s; OLD %s",
				nv.mount->what, w, ov.read ? "makes it read-only" : "hides it");
		else
			c->n_seen--; /* every path of the atom is protected in NEW */
	} else if (nv.read && !ov.read) {
		if ((r = fs_seen(c, nv.mount, ov.mount, 1, &already, err)) < 0 || already)
			goto exec;
		r = add(c->d, err, "filesystem.read", c->new_.p, nv.mount->loc, path,
			"(%s) allows reading %s; OLD hides it", nv.mount->what, path);
	}
exec:
	if (r >= 0 && nv.exec && nv.read && !(ov.exec && ov.read)) {
		const struct fs_entry *by = nv.exec_by ? nv.exec_by : nv.mount;
		if ((r = fs_seen(c, by, ov.exec_by, 2, &already, err)) < 0 || already)
			return r;
		r = add(c->d, err, "filesystem.exec", c->new_.p, by->loc, path, "(%s) allows executing %s; OLD does not",
			by->what, path);
	}
	return r;
}

/* Paths OLD protects that NEW lets the agent write: for each NEW mount
 * that is writable, a path beneath it, in an OLD protected glob, under no
 * deeper read-only NEW mount, no NEW deny and no NEW protected glob. */
static int protect_diff(const struct policy *new_, const struct fs_side *ns, const struct gvec *all,
			const struct gvec *np, const struct gvec *op, const struct fs_entry *opents,
			struct policy_diff *d, struct error *err)
{
	/* Paths with an empty segment ("**" + "/" matching nothing after a
	 * '/'): no such path is ever judged, the kernel reads "a//b" as
	 * "a/b", which a deny or read-only entry may hold. */
	_cleanup_glob_ struct glob *empty_seg = NULL;
	int r = glob_compile("/**//**", GLOB_FILE, &empty_seg, err);
	for (size_t i = 0; i < ns->n && r >= 0; i++) {
		const struct fs_entry *e = &ns->e[i];
		if (e->role != FS_RW)
			continue;
		for (size_t j = 0; j < op->n && r >= 0; j++) {
			const struct glob *in[2] = { all->v[ns->off + i], op->v[j] };
			/* The same glob (over the same workspace) in NEW covers
			 * it: skip the search, which would only confirm that. */
			bool same = false;
			for (size_t k = 0; k < np->n && !same; k++)
				same = !strcmp(glob_pattern(np->v[k]), glob_pattern(op->v[j]));
			if (same)
				continue;
			const struct glob **out = calloc(ns->n + np->n + 2, sizeof(*out));
			size_t no = 0;
			bool found = false;
			_cleanup_free_ char *w = NULL;
			if (!out)
				return error_set(err, ENOMEM, "out of memory");
			for (size_t k = 0; k < ns->n; k++) {
				const struct fs_entry *f = &ns->e[k];
				/* what shows read-only over e: deeper, or at e's
				 * own path and later (`read` naming the workspace) */
				if (f->role == FS_DENY ||
				    (f->role == FS_RO && (f->depth > e->depth || (f->depth == e->depth && k > i))))
					out[no++] = all->v[ns->off + k];
			}
			for (size_t k = 0; k < np->n; k++)
				out[no++] = np->v[k];
			out[no++] = empty_seg;
			r = glob_find(in, 2, out, no, &found, &w, err);
			free(out);
			if (r >= 0 && found) {
				r = add(d, err, "filesystem.write", new_, e->loc, w,
					"(%s) allows writing %s; OLD protects it (%s, %s)", e->what, w,
					glob_pattern(op->v[j]), opents[j].loc && opents[j].loc->line ? "its protect list" : "default row");
				break;
			}
		}
	}
	return r;
}

static int fs_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	struct gvec g = { 0 }, np = { 0 }, op = { 0 };
	struct fs_entry *ents = NULL, *npents = NULL, *opents = NULL;
	size_t cap = 0, npcap = 0, opcap = 0;
	_cleanup_glob_ struct glob *root = NULL, *empty_seg = NULL;
	int r;

	if ((r = glob_compile("/**//**", GLOB_FILE, &empty_seg, err)) < 0)
		goto out;
	if ((r = fs_side_build(new_, &g, &ents, &cap, &np, &npents, &npcap, err)) < 0)
		goto out;
	size_t n_new = g.n;
	if ((r = fs_side_build(old, &g, &ents, &cap, &op, &opents, &opcap, err)) < 0)
		goto out;
	if ((r = glob_compile("/", GLOB_PREFIX, &root, err)) < 0)
		goto out;
	struct fs_ctx c = {
		.new_ = { .p = new_, .e = ents, .off = 0, .n = n_new },
		.old = { .p = old, .e = ents + n_new, .off = n_new, .n = g.n - n_new },
		.d = d,
		.all = &g,
		.new_prot = &np,
		.root = root,
		.empty_seg = empty_seg,
	};
	const struct glob *in[1] = { root };
	r = glob_atoms(in, 1, CG(g.v), g.n, fs_atom, &c, err);
	free(c.seen);
	if (r >= 0 && old->sandbox.mode != POLICY_MODE_OBSERVE)
		r = protect_diff(new_, &c.new_, &g, &np, &op, opents, d, err);
out:
	gvec_free(&g);
	gvec_free(&np);
	gvec_free(&op);
	free(ents);
	free(npents);
	free(opents);
	return r;
}

/* ---- credentials ---- */

struct git_ctx {
	const struct policy_git_binding *const *old; /* parallel to the repos atoms */
	size_t n_old;
	const struct glob *refs;  /* NEW's push refs (one glob) */
	char **w_repo, **w_ref;
	bool found;
	bool delete_;
};

static int git_atom(void *vctx, const bool *sig, const char *repo, size_t len, struct error *err)
{
	struct git_ctx *c = vctx;
	struct gvec refs = { 0 };
	bool subset;
	char *w = NULL;
	int r = 0;

	(void)len;
	for (size_t i = 0; i < c->n_old && r >= 0; i++) {
		const struct policy_git_binding *o = c->old[i];
		if (!sig[i] || (c->delete_ && !o->delete_refs))
			continue;
		for (size_t k = 0; k < o->n_push && r >= 0; k++)
			r = gvec_add(&refs, o->push[k], GLOB_PATH, err);
	}
	if (r >= 0)
		r = glob_subset(c->refs, CG(refs.v), refs.n, &subset, &w, err);
	if (r >= 0 && !subset) {
		c->found = true;
		*c->w_repo = strdup(repo);
		*c->w_ref = w;
		w = NULL;
		r = 1;
	}
	free(w);
	gvec_free(&refs);
	return r;
}

/* NEW binding b's git permissions against the OLD bindings that apply
 * (olds, all with git; a binding without git and paths covers everything
 * and is handled by the caller). Writes a description and a witness. */
static int git_widen(const struct policy_git_binding *b, const struct policy_git_binding *const *olds, size_t no,
		     char *what, size_t what_len, char **witness, struct error *err)
{
	struct gvec ob = { 0 };
	_cleanup_glob_ struct glob *repo = NULL;
	int r = 0;
	bool subset;
	char *w = NULL;
	const char *const any[] = { "**" };
	const char *const *repos = b->repos ? (const char *const *)b->repos : any;
	size_t n_repos = b->repos ? b->n_repos : 1;

	*witness = NULL;
	for (size_t ri = 0; ri < n_repos && r >= 0 && !*witness; ri++) {
		glob_free(repo);
		repo = NULL;
		if ((r = glob_compile(repos[ri], GLOB_PATH, &repo, err)) < 0)
			break;
		/* fetch, tags: repositories alone */
		for (int op = 0; op < 2 && r >= 0 && !*witness; op++) {
			if ((op == 0 && !b->fetch) || (op == 1 && !b->tags))
				continue;
			gvec_free(&ob);
			for (size_t i = 0; i < no && r >= 0; i++) {
				const struct policy_git_binding *o = olds[i];
				if ((op == 0 && !o->fetch) || (op == 1 && !o->tags))
					continue;
				if (!o->repos)
					r = gvec_add(&ob, "**", GLOB_PATH, err);
				for (size_t k = 0; o->repos && k < o->n_repos && r >= 0; k++)
					r = gvec_add(&ob, o->repos[k], GLOB_PATH, err);
			}
			if (r >= 0)
				r = glob_subset(repo, CG(ob.v), ob.n, &subset, &w, err);
			if (r >= 0 && !subset) {
				snprintf(what, what_len, op == 0 ? "fetching" : "pushing tags to");
				*witness = w;
				w = NULL;
			}
		}
		/* push and delete: repositories x refs, a union in two
		 * dimensions: split the repositories into atoms of OLD's. */
		for (int del = 0; del < 2 && r >= 0 && !*witness; del++) {
			if (del && !b->delete_refs)
				continue;
			for (size_t pi = 0; pi < b->n_push && r >= 0 && !*witness; pi++) {
				_cleanup_glob_ struct glob *ref = NULL;
				_cleanup_free_ const struct policy_git_binding **rowner = NULL;
				size_t nrow = 0;
				gvec_free(&ob);
				for (size_t i = 0; i < no; i++)
					nrow += olds[i]->repos ? olds[i]->n_repos : 1;
				rowner = calloc(nrow + 1, sizeof(*rowner));
				if (!rowner) {
					r = error_set(err, ENOMEM, "out of memory");
					break;
				}
				for (size_t i = 0; i < no && r >= 0; i++) {
					const struct policy_git_binding *o = olds[i];
					if (!o->repos) {
						rowner[ob.n] = o;
						r = gvec_add(&ob, "**", GLOB_PATH, err);
					}
					for (size_t k = 0; o->repos && k < o->n_repos && r >= 0; k++) {
						rowner[ob.n] = o;
						r = gvec_add(&ob, o->repos[k], GLOB_PATH, err);
					}
				}
				if (r >= 0)
					r = glob_compile(b->push[pi], GLOB_PATH, &ref, err);
				if (r < 0)
					break;
				char *wr = NULL, *wf = NULL;
				struct git_ctx c = { .old = rowner, .n_old = ob.n, .refs = ref, .w_repo = &wr, .w_ref = &wf,
						     .delete_ = del };
				const struct glob *in[1] = { repo };
				r = glob_atoms(in, 1, CG(ob.v), ob.n, git_atom, &c, err);
				if (r >= 0 && c.found) {
					snprintf(what, what_len, "%s ref %s in", del ? "deleting" : "pushing", wf ? wf : "?");
					*witness = wr;
					wr = NULL;
				}
				free(wr);
				free(wf);
			}
		}
	}
	free(w);
	gvec_free(&ob);
	if (r >= 0 && *witness == NULL)
		return 0;
	return r < 0 ? r : 1;
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool binding_has_method(const struct policy_cred_binding *b, const char *m)
{
	if (!b->methods)
		return true;
	for (size_t i = 0; i < b->n_methods; i++)
		if (!strcmp(b->methods[i], m))
			return true;
	return false;
}

struct cred_ctx {
	const struct policy *new_;
	const struct policy_credential *nc, *oc;
	const struct policy_cred_binding *b;
	struct policy_diff *d;
	bool reported;
};

static int cred_atom(void *vctx, const bool *sig, const char *host, size_t len, struct error *err)
{
	struct cred_ctx *c = vctx;
	const struct policy_cred_binding *b = c->b;
	struct methods m = { .n = 0 };
	int r = 0;

	(void)len;
	methods_add(&m, "GET");
	for (size_t k = 0; k < b->n_methods; k++)
		methods_add(&m, b->methods[k]);
	for (size_t i = 0; i < c->oc->n_bindings; i++)
		for (size_t k = 0; k < c->oc->bindings[i].n_methods; k++)
			methods_add(&m, c->oc->bindings[i].methods[k]);
	methods_close(&m);
	if (m.overflow)
		return error_set(err, E2BIG, "credential %s: too many distinct methods to compare", c->nc->name);
	for (size_t mi = 0; mi < m.n && r >= 0 && !c->reported; mi++) {
		if (!binding_has_method(b, m.v[mi]))
			continue;
		/* OLD bindings that apply to this host, port and method */
		struct gvec paths = { 0 };
		const struct policy_git_binding *gits[64];
		size_t ng = 0;
		bool all = false;
		for (size_t i = 0; i < c->oc->n_bindings && r >= 0; i++) {
			const struct policy_cred_binding *o = &c->oc->bindings[i];
			if (!sig[i] || o->port != b->port || !binding_has_method(o, m.v[mi]))
				continue;
			if (o->git) {
				if (ng == ARRAY_SIZE(gits)) {
					gvec_free(&paths);
					return error_set(err, E2BIG, "credential %s: too many git bindings to compare",
							 c->nc->name);
				}
				gits[ng++] = o->git;
				continue;
			}
			if (!o->paths)
				all = true;
			for (size_t k = 0; o->paths && k < o->n_paths && r >= 0; k++)
				r = gvec_add(&paths, o->paths[k], GLOB_PATH, err);
		}
		char witness[1200];
		if (r >= 0 && !all && !b->git) {
			const char *const any[] = { "/**" };
			const char *const *bp = b->paths ? (const char *const *)b->paths : any;
			size_t nbp = b->paths ? b->n_paths : 1;
			for (size_t k = 0; k < nbp && r >= 0 && !c->reported; k++) {
				_cleanup_glob_ struct glob *p = NULL;
				bool subset;
				_cleanup_free_ char *w = NULL;
				if ((r = glob_compile(bp[k], GLOB_PATH, &p, err)) < 0)
					break;
				if ((r = glob_subset(p, CG(paths.v), paths.n, &subset, &w, err)) < 0)
					break;
				if (!subset) {
					snprintf(witness, sizeof(witness), "%s https://%s:%u%s", m.v[mi], host, b->port, w);
					c->reported = true;
					r = add(c->d, err, "credentials", c->new_, &b->loc, witness,
						"lets credential %s be used for %s; OLD does not", c->nc->name, witness);
				}
			}
		} else if (r >= 0 && !all && b->git) {
			char what[600];
			char *w = NULL;
			r = git_widen(b->git, gits, ng, what, sizeof(what), &w, err);
			if (r > 0) {
				snprintf(witness, sizeof(witness), "%s https://%s:%u%s", what, host, b->port, w);
				c->reported = true;
				r = add(c->d, err, "credentials", c->new_, &b->git->loc, witness,
					"lets credential %s be used for %s; OLD does not", c->nc->name, witness);
			}
			free(w);
		}
		gvec_free(&paths);
	}
	return r < 0 ? r : c->reported ? 1 : 0;
}

static int cred_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	for (size_t i = 0; i < new_->n_credentials; i++) {
		const struct policy_credential *nc = &new_->credentials[i], *oc = NULL;
		int r;
		for (size_t j = 0; j < old->n_credentials && !oc; j++)
			if (!strcmp(old->credentials[j].name, nc->name))
				oc = &old->credentials[j];
		if (!oc || !policy_credential_same_source(nc, oc)) {
			char w[200];
			snprintf(w, sizeof(w), "credential %s", nc->name);
			if ((r = add(d, err, "credentials", new_, &nc->loc, w, "%s credential %s; OLD %s", oc ? "changes the source of" : "adds",
				     nc->name, oc ? "reads another secret" : "has none")) < 0)
				return r;
			continue;
		}
		struct gvec hosts = { 0 };
		r = 0;
		for (size_t j = 0; j < oc->n_bindings && r >= 0; j++)
			r = gvec_add(&hosts, oc->bindings[j].host, GLOB_HOST, err);
		for (size_t k = 0; k < nc->n_bindings && r >= 0; k++) {
			_cleanup_glob_ struct glob *h = NULL;
			if ((r = glob_compile(nc->bindings[k].host, GLOB_HOST, &h, err)) < 0)
				break;
			struct cred_ctx c = { .new_ = new_, .nc = nc, .oc = oc, .b = &nc->bindings[k], .d = d };
			const struct glob *in[1] = { h };
			r = glob_atoms(in, 1, CG(hosts.v), hosts.n, cred_atom, &c, err);
		}
		gvec_free(&hosts);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- single settings ---- */

static int rank_boundary(enum policy_boundary b)
{
	return b == POLICY_BOUNDARY_MICROVM ? 2 : b == POLICY_BOUNDARY_GVISOR ? 1 : 0;
}

static int scalar_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	int r = 0;
	char w[256];

	if (rank_boundary(new_->sandbox.boundary) < rank_boundary(old->sandbox.boundary)) {
		snprintf(w, sizeof(w), "boundary %s", policy_boundary_name(new_->sandbox.boundary));
		if ((r = add(d, err, "sandbox.boundary", new_, &new_->origin.boundary, w,
			     "runs the agent behind a %s boundary; OLD requires %s",
			     policy_boundary_name(new_->sandbox.boundary), policy_boundary_name(old->sandbox.boundary))) < 0)
			return r;
	}
	if (new_->sandbox.mode == POLICY_MODE_OBSERVE && old->sandbox.mode != POLICY_MODE_OBSERVE &&
	    (r = add(d, err, "sandbox.mode", new_, &new_->origin.mode, "mode observe",
		     "enforces nothing (observe); OLD enforces (%s)", policy_mode_name(old->sandbox.mode))) < 0)
		return r;

	const struct {
		const char *name;
		uint64_t o, n;
		const struct policy_loc *loc;
	} lim[] = {
		{ "memory", old->sandbox.limits.memory_bytes, new_->sandbox.limits.memory_bytes, &new_->origin.memory },
		{ "pids", old->sandbox.limits.pids, new_->sandbox.limits.pids, &new_->origin.pids },
		{ "open_files", old->sandbox.limits.open_files, new_->sandbox.limits.open_files, &new_->origin.open_files },
		{ "cpu", old->sandbox.limits.cpu_seconds, new_->sandbox.limits.cpu_seconds, &new_->origin.cpu },
		{ "wall", old->sandbox.limits.wall_seconds, new_->sandbox.limits.wall_seconds, &new_->origin.wall },
	};
	for (size_t i = 0; i < ARRAY_SIZE(lim); i++) {
		if (lim[i].o == 0 || (lim[i].n != 0 && lim[i].n <= lim[i].o))
			continue;
		if (lim[i].n == 0)
			snprintf(w, sizeof(w), "%s unlimited", lim[i].name);
		else
			snprintf(w, sizeof(w), "%s %llu", lim[i].name, (unsigned long long)lim[i].n);
		if ((r = add(d, err, "sandbox.limits", new_, lim[i].loc, w, "allows %s; OLD's limit is %llu", w,
			     (unsigned long long)lim[i].o)) < 0)
			return r;
	}
	if (!new_->audit.enabled && old->audit.enabled &&
	    (r = add(d, err, "audit", new_, &new_->origin.audit_enabled, "audit disabled",
		     "turns the signed decision log off; OLD keeps it")) < 0)
		return r;
	/* A larger log lets the agent make the host hold more before the
	 * run is ended. */
	if (new_->audit.enabled && old->audit.enabled && new_->audit.max_size > old->audit.max_size) {
		snprintf(w, sizeof(w), "a decision log of %llu bytes", (unsigned long long)new_->audit.max_size);
		if ((r = add(d, err, "audit", new_, &new_->origin.audit_max_size, w,
			     "lets the decision log reach %llu bytes; OLD ends the run at %llu",
			     (unsigned long long)new_->audit.max_size, (unsigned long long)old->audit.max_size)) < 0)
			return r;
	}
	if (!new_->identity.header && old->identity.header &&
	    (r = add(d, err, "identity", new_, &new_->origin.identity_header, "no identity header",
		     "drops the signed Airlock-Identity header; OLD sends it")) < 0)
		return r;

	/* process: variables that reach the agent */
	for (size_t i = 0; i < new_->process.n_env_pass; i++) {
		bool known = false;
		for (size_t j = 0; j < old->process.n_env_pass && !known; j++)
			known = !strcmp(new_->process.env_pass[i], old->process.env_pass[j]);
		if (known)
			continue;
		const struct policy_loc *loc = new_->process.env_pass_loc ? &new_->process.env_pass_loc[i]
									  : &new_->origin.env_pass;
		snprintf(w, sizeof(w), "$%s", new_->process.env_pass[i]);
		if ((r = add(d, err, "process.env", new_, loc, w, "passes %s from the caller's environment; OLD does not",
			     w)) < 0)
			return r;
	}
	for (size_t i = 0; i < new_->process.n_env_set; i++) {
		const struct policy_env_var *v = &new_->process.env_set[i];
		bool same = false;
		for (size_t j = 0; j < old->process.n_env_set && !same; j++)
			same = !strcmp(v->name, old->process.env_set[j].name) &&
			       str_eq(v->value, old->process.env_set[j].value);
		if (same)
			continue;
		snprintf(w, sizeof(w), "$%s", v->name);
		if ((r = add(d, err, "process.env", new_, &v->loc, w, "sets %s to a value OLD does not give it", w)) < 0)
			return r;
	}
	if (new_->process.git_identity && !old->process.git_identity &&
	    (r = add(d, err, "process.git_identity", new_, &new_->origin.git_identity, "git_identity host",
		     "gives the agent the host's git user.name and user.email; OLD does not")) < 0)
		return r;
	return 0;
}

static int mcp_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err);

/* Fields outside the set comparisons above (schema.c names each field's
 * prover rule): a host socket, a pinned address, review mode, the host
 * ids the agent acts as, an MCP server's own sandbox. */
static int fields_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	char w[600];
	int r;

	/* A socket is a door to a host service (a Docker-style socket is the
	 * host): any socket OLD does not bind is wider. */
	for (size_t i = 0; i < new_->filesystem.sockets.n; i++) {
		const struct policy_path *x = &new_->filesystem.sockets.v[i];
		bool known = false;
		for (size_t j = 0; j < old->filesystem.sockets.n && !known; j++)
			known = !strcmp(x->path, old->filesystem.sockets.v[j].path);
		if (!known && (r = add(d, err, "filesystem.sockets", new_, &x->loc, x->path,
				       "lets the agent reach the host socket %s; OLD does not", x->path)) < 0)
			return r;
	}
	/* A pin replaces DNS: traffic for an allowed name (a passthrough
	 * tunnel included) goes to the pinned address. */
	if (policy_net_mode(new_) != POLICY_NET_NONE) {
		const struct policy_network *nn = &new_->network, *on = &old->network;
		for (size_t i = 0; i < nn->n_resolve; i++) {
			const struct policy_resolve *x = &nn->resolve[i], *o = NULL;
			for (size_t j = 0; j < on->n_resolve && !o; j++)
				if (!strcmp(on->resolve[j].host, x->host))
					o = &on->resolve[j];
			if (o && !strcmp(o->addr, x->addr))
				continue;
			snprintf(w, sizeof(w), "%s -> %s", x->host, x->addr);
			if ((r = add(d, err, "network.resolve", new_, &x->loc, w, "sends %s to %s; OLD %s%s", x->host,
				     x->addr, o ? "pins it to " : "resolves it by DNS", o ? o->addr : "")) < 0)
				return r;
		}
		for (size_t j = 0; j < on->n_resolve; j++) {
			bool have = false;
			for (size_t i = 0; i < nn->n_resolve && !have; i++)
				have = !strcmp(nn->resolve[i].host, on->resolve[j].host);
			if (have)
				continue;
			snprintf(w, sizeof(w), "%s -> DNS", on->resolve[j].host);
			if ((r = add(d, err, "network.resolve", new_, &new_->network.loc, w,
				     "resolves %s by DNS; OLD pins it to %s", on->resolve[j].host, on->resolve[j].addr)) < 0)
				return r;
		}
	}
	if (policy_workspace_mode_rank(new_->sandbox.workspace_mode) <
	    policy_workspace_mode_rank(old->sandbox.workspace_mode)) {
		snprintf(w, sizeof(w), "workspace_mode %s", policy_workspace_mode_name(new_->sandbox.workspace_mode));
		if ((r = add(d, err, "sandbox.workspace_mode", new_, &new_->origin.workspace_mode, w, "%s; OLD %s",
			     new_->sandbox.workspace_mode == POLICY_WS_DIRECT
				     ? "lets the agent's writes reach the workspace directly"
				     : "lets a hand-off file reach the workspace on one accept",
			     old->sandbox.workspace_mode == POLICY_WS_REVIEW ? "puts them up for review"
									     : "refuses hand-off files")) < 0)
			return r;
	}
	const struct {
		const char *name;
		int64_t n, o;
		const struct policy_loc *loc;
	} ids[] = {
		{ "host_uid", new_->sandbox.host_uid, old->sandbox.host_uid, &new_->origin.host_uid },
		{ "host_gid", new_->sandbox.host_gid, old->sandbox.host_gid, &new_->origin.host_gid },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		if (ids[i].n == ids[i].o)
			continue;
		char nv[32], ov[32];
		if (ids[i].n < 0)
			snprintf(nv, sizeof(nv), "auto");
		else
			snprintf(nv, sizeof(nv), "%lld", (long long)ids[i].n);
		if (ids[i].o < 0)
			snprintf(ov, sizeof(ov), "auto");
		else
			snprintf(ov, sizeof(ov), "%lld", (long long)ids[i].o);
		snprintf(w, sizeof(w), "%s %s", ids[i].name, nv);
		if ((r = add(d, err, "sandbox.ids", new_, ids[i].loc, w,
			     "runs the agent as another host %s (%s; OLD %s): it may open other host files", ids[i].name + 5,
			     nv, ov)) < 0)
			return r;
	}
	for (size_t i = 0; new_->mcp && old->mcp && i < new_->mcp->n_servers; i++) {
		const struct policy_mcp_server *ns = &new_->mcp->servers[i];
		const struct policy_mcp_server *os = policy_mcp_server(old->mcp, ns->name);
		if (!os || str_eq(ns->policy, os->policy))
			continue;
		struct policy_loc loc = { .file = new_->file, .line = ns->policy_line ? ns->policy_line : ns->line };
		snprintf(w, sizeof(w), "%s policy %s", ns->name, ns->policy ? ns->policy : "(default)");
		if ((r = add(d, err, "mcp", new_, &loc, w, "runs server %s under another sandbox policy (%s); OLD uses %s",
			     ns->name, ns->policy ? ns->policy : "the default", os->policy ? os->policy : "the default")) < 0)
			return r;
	}
	return 0;
}

int policy_diff(const struct policy *old, const struct policy *new_, struct policy_diff *out, struct error *err)
{
	int r;

	if ((r = scalar_diff(old, new_, out, err)) < 0 || (r = net_diff(old, new_, out, err)) < 0 ||
	    (r = private_diff(old, new_, out, err)) < 0 || (r = cred_diff(old, new_, out, err)) < 0 ||
	    (r = fs_diff(old, new_, out, err)) < 0 || (r = mcp_diff(old, new_, out, err)) < 0 ||
	    (r = fields_diff(old, new_, out, err)) < 0)
		return r;
	return 0;
}

/* ---- mcp ---- */

/*
 * Per server, tool names (resource URIs, prompt names) are a language:
 * the atoms of every NEW and OLD rule pattern (GLOB_NAME, fnmatch as the
 * engine calls it; GLOB_PATH for resource URIs, which the engine matches
 * normalised with the proxy's path globs) are decided with the engine's first-match rule. A tool
 * decision ranks deny < step_up < allow; resources and prompts have only
 * allow (the engine refuses anything else). Where both sides let a tool
 * through, the deciding rules' argument constraints and call limits are
 * compared facet by facet.
 */

static int mcp_rank(enum policy_mcp_decision d, bool tools)
{
	if (d == POLICY_MCP_ALLOW)
		return 2;
	if (d == POLICY_MCP_STEP_UP && tools)
		return 1;
	return 0;
}

/* The first rule whose pattern is in sig[off..off+n), or -1. */
static long mcp_first(const bool *sig, size_t off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sig[off + i])
			return (long)i;
	return -1;
}

struct mcp_ctx {
	const struct policy *new_;
	const struct policy_mcp_server *ns, *os; /* os: NULL when OLD has no such server */
	const char *kind;                        /* "tools", "resources", "prompts" */
	const struct policy_mcp_rule *nr, *or_;
	size_t nn, no;
	bool *seen; /* (nn + 1) * (no + 1) pairs of deciding rules already reported */
	struct policy_diff *d;
};

static void arg_path(const char *p, char *out, size_t size)
{
	/* "$.a" and "a" select the same value. */
	if (p[0] == '$' && p[1] == '.')
		p += 2;
	snprintf(out, size, "%s", p);
}

static const struct policy_mcp_arg *arg_find(const struct policy_mcp_rule *r, const char *path)
{
	char a[256], b[256];
	arg_path(path, a, sizeof(a));
	for (size_t i = 0; r && i < r->n_args; i++) {
		arg_path(r->args[i].path, b, sizeof(b));
		if (!strcmp(a, b))
			return &r->args[i];
	}
	return NULL;
}

static bool enum_has(const struct policy_mcp_arg *a, const char *v)
{
	for (size_t i = 0; i < a->n_enum; i++)
		if (!strcmp(a->enum_vals[i], v))
			return true;
	return false;
}

/* A string the regex of o rejects and that of n (when set) takes, from
 * candidates: regexes are not compiled to automata, so a changed regex is
 * a widening only with such a witness (docs/policy.md says so). */
static bool regex_witness(const struct policy_mcp_arg *n, const struct policy_mcp_arg *o, const char *extra,
			  char *out, size_t size)
{
	static const char *const cand[] = { "", "a", "A", "0", "1", "-1", "x", "abc", "/", "/etc/passwd",
					    "../x", "..", ".", " ", "a b", "a/b", "a.b", "a-b", "a_b", "aa", "0.5",
					    "true", "null", "http://x", "https://x", "$(id)", ";", "\n", "%", "*" };
	const char *extras[2] = { extra, n && n->n_enum ? n->enum_vals[0] : NULL };
	for (size_t i = 0; i < ARRAY_SIZE(cand) + 2; i++) {
		const char *s = i < ARRAY_SIZE(cand) ? cand[i] : extras[i - ARRAY_SIZE(cand)];
		if (!s)
			continue;
		if (regexec(&o->re, s, 0, NULL, 0) == 0)
			continue;
		if (n && n->regex && regexec(&n->re, s, 0, NULL, 0) != 0)
			continue;
		snprintf(out, size, "%s", s);
		return true;
	}
	return false;
}

static void json_text(const char *s, char *out, size_t size)
{
	size_t k = 0;
	if (size < 4)
		return;
	out[k++] = '"';
	for (; *s && k + 3 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[k++] = '\\';
			out[k++] = (char)c;
		} else if (c < 0x20) {
			if (k + 7 >= size)
				break;
			k += (size_t)snprintf(out + k, size - k, "\\u%04x", c);
		} else {
			out[k++] = (char)c;
		}
	}
	out[k++] = '"';
	out[k] = '\0';
}

/* Report one argument facet NEW lets through and OLD does not. */
static int arg_add(struct mcp_ctx *c, const char *tool, const struct policy_mcp_arg *oa, const char *value,
		   const char *what, struct error *err)
{
	char wit[1200], rule[256];
	if (value)
		snprintf(wit, sizeof(wit), "%s.%s {\"%s\": %s}", c->ns->name, tool, oa->path, value);
	else
		snprintf(wit, sizeof(wit), "%s.%s {}", c->ns->name, tool);
	snprintf(rule, sizeof(rule), "mcp.servers.%s.tools[%zu]", c->os->name, (size_t)(c->or_ - c->os->tools));
	struct policy_loc loc = { .file = c->new_->file, .line = c->nr->line };
	return add(c->d, err, "mcp", c->new_, &loc, wit, "allows tools/call %s (%s); OLD denies it (rule %s, line %u)",
		   wit, what, rule, oa->line ? oa->line : c->or_->line);
}

static int args_widen(struct mcp_ctx *c, const char *tool, struct error *err)
{
	const struct policy_mcp_rule *n = c->nr, *o = c->or_;
	char v[600], buf[600];
	int r = 0;

	for (size_t i = 0; i < o->n_args && r >= 0; i++) {
		const struct policy_mcp_arg *oa = &o->args[i], *na = arg_find(n, oa->path);
		if (oa->required && !(na && na->required)) {
			r = arg_add(c, tool, oa, NULL, "without the argument OLD requires", err);
			if (r < 0)
				break;
		}
		if (oa->glob && !(na && na->glob && !strcmp(na->glob, oa->glob))) {
			_cleanup_glob_ struct glob *go = NULL, *gn = NULL;
			bool found = false;
			_cleanup_free_ char *w = NULL;
			if ((r = glob_compile(oa->glob, GLOB_NAME, &go, err)) < 0 ||
			    (na && na->glob && (r = glob_compile(na->glob, GLOB_NAME, &gn, err)) < 0)) {
				/* A glob we cannot model: any change counts. */
				error_clear(err);
				snprintf(buf, sizeof(buf), "glob \"%s\" replaced by %s", oa->glob,
					 na && na->glob ? na->glob : "none");
				r = arg_add(c, tool, oa, NULL, buf, err);
			} else {
				const struct glob *in[1] = { gn }, *out[1] = { go };
				if ((r = glob_find(in, gn ? 1 : 0, out, 1, &found, &w, err)) >= 0 && found) {
					json_text(w, v, sizeof(v));
					snprintf(buf, sizeof(buf), "outside OLD's glob \"%s\"", oa->glob);
					r = arg_add(c, tool, oa, v, buf, err);
				}
			}
			if (r < 0)
				break;
		}
		if (oa->regex && !(na && na->regex && !strcmp(na->regex, oa->regex))) {
			if (regex_witness(na, oa, na && na->glob ? na->glob : NULL, buf, sizeof(buf))) {
				json_text(buf, v, sizeof(v));
				snprintf(buf, sizeof(buf), "not matching OLD's regex \"%s\"", oa->regex);
				if ((r = arg_add(c, tool, oa, v, buf, err)) < 0)
					break;
			}
		}
		if (oa->n_enum) {
			const char *extra = NULL;
			if (!na || !na->n_enum) {
				extra = "\"not-in-enum\"";
			} else {
				for (size_t k = 0; k < na->n_enum && !extra; k++)
					if (!enum_has(oa, na->enum_vals[k])) {
						json_text(na->enum_vals[k], v, sizeof(v));
						extra = v;
					}
			}
			if (extra && (r = arg_add(c, tool, oa, extra, "a value outside OLD's enum", err)) < 0)
				break;
		}
		if (oa->has_min && !(na && na->has_min && na->min >= oa->min)) {
			snprintf(v, sizeof(v), "%.17g", na && na->has_min ? na->min : oa->min - 1);
			if ((r = arg_add(c, tool, oa, v, "below OLD's min", err)) < 0)
				break;
		}
		if (oa->has_max && !(na && na->has_max && na->max <= oa->max)) {
			snprintf(v, sizeof(v), "%.17g", na && na->has_max ? na->max : oa->max + 1);
			if ((r = arg_add(c, tool, oa, v, "above OLD's max", err)) < 0)
				break;
		}
		if (oa->has_max_length && !(na && na->has_max_length && na->max_length <= oa->max_length)) {
			uint64_t len = oa->max_length + 1;
			snprintf(v, sizeof(v), "\"<%llu bytes>\"", (unsigned long long)len);
			if ((r = arg_add(c, tool, oa, v, "longer than OLD's max_length", err)) < 0)
				break;
		}
		if (oa->inside_workspace && !(na && na->inside_workspace) &&
		    (r = arg_add(c, tool, oa, "\"/etc/x\"", "a path outside the workspace", err)) < 0)
			break;
	}
	if (r >= 0 && o->max_calls && (!n->max_calls || n->max_calls > o->max_calls)) {
		char wit[300];
		snprintf(wit, sizeof(wit), "%s.%s call %llu", c->ns->name, tool, (unsigned long long)o->max_calls + 1);
		struct policy_loc loc = { .file = c->new_->file, .line = n->line };
		char lim[64] = "no limit";
		if (n->max_calls)
			snprintf(lim, sizeof(lim), "max_calls %llu", (unsigned long long)n->max_calls);
		r = add(c->d, err, "mcp", c->new_, &loc, wit, "allows tools/call %s (%s); OLD's max_calls is %llu", wit,
			lim, (unsigned long long)o->max_calls);
	}
	return r;
}

static int mcp_atom(void *vctx, const bool *sig, const char *name, size_t len, struct error *err)
{
	struct mcp_ctx *c = vctx;
	bool tools = !strcmp(c->kind, "tools");
	long ni = mcp_first(sig, 0, c->nn), oi = mcp_first(sig, c->nn, c->no);
	(void)len;
	if (ni < 0)
		return 0;
	const struct policy_mcp_rule *nr = &c->nr[ni], *or_ = oi >= 0 ? &c->or_[oi] : NULL;
	int nrank = mcp_rank(nr->decision, tools), orank = or_ ? mcp_rank(or_->decision, tools) : 0;
	size_t pair = (size_t)ni * (c->no + 1) + (size_t)(oi + 1);
	if (nrank == 0 || c->seen[pair])
		return 0;
	if (nrank <= orank && !tools)
		return 0;
	c->seen[pair] = true;
	if (nrank > orank) {
		char wit[600], rule[300];
		const char *verb = tools ? "tools/call" : !strcmp(c->kind, "resources") ? "resources/read" : "prompts/get";
		snprintf(wit, sizeof(wit), "%s.%s", c->ns->name, name);
		if (or_)
			snprintf(rule, sizeof(rule), "rule mcp.servers.%s.%s[%ld] %s, line %u", c->os->name, c->kind, oi,
				 policy_mcp_decision_name(or_->decision), or_->line);
		else if (c->os)
			snprintf(rule, sizeof(rule), "no rule of server %s matches", c->os->name);
		else
			snprintf(rule, sizeof(rule), "it has no server %s", c->ns->name);
		struct policy_loc loc = { .file = c->new_->file, .line = nr->line };
		return add(c->d, err, "mcp", c->new_, &loc, wit, "%s %s %s; OLD %s it (%s)",
			   nr->decision == POLICY_MCP_STEP_UP ? "allows with step-up" : "allows", verb, wit,
			   orank == 1 ? "steps up" : "denies", rule);
	}
	/* Both let it through: the deciding rules' constraints. */
	struct mcp_ctx sub = *c;
	sub.nr = nr;
	sub.or_ = or_;
	_cleanup_free_ char *tool = strndup(name, len);
	if (!tool)
		return error_set(err, ENOMEM, "out of memory");
	return args_widen(&sub, tool, err);
}

static int mcp_rules_diff(const struct policy *new_, const struct policy_mcp_server *ns,
			  const struct policy_mcp_server *os, const char *kind, const struct policy_mcp_rule *nr,
			  size_t nn, const struct policy_mcp_rule *or_, size_t no, struct policy_diff *d,
			  struct error *err)
{
	struct gvec g = { 0 };
	int r = 0;
	for (size_t i = 0; i < nn + no && r >= 0; i++)
		r = gvec_add(&g, i < nn ? nr[i].match : or_[i - nn].match,
			     !strcmp(kind, "resources") ? GLOB_PATH : GLOB_NAME, err);
	if (r == -EINVAL) {
		/* A pattern glob.c does not model (an unterminated bracket, a
		 * collating element): only an identical rule list is trusted,
		 * rule i against rule i. */
		char why[256];
		bool same = nn == no;
		snprintf(why, sizeof(why), "%s", err->msg);
		gvec_free(&g);
		error_clear(err);
		for (size_t i = 0; i < nn && same; i++)
			same = !strcmp(nr[i].match, or_[i].match) && nr[i].decision == or_[i].decision;
		if (!same) {
			char wit[300];
			snprintf(wit, sizeof(wit), "%s.%s", ns->name, kind);
			struct policy_loc loc = { .file = new_->file, .line = nn ? nr[0].line : ns->line };
			return add(d, err, "mcp", new_, &loc, wit,
				   "changes %s, whose patterns cannot be compared exactly (%s); counted as wider", wit, why);
		}
		r = 0;
		for (size_t i = 0; i < nn && r >= 0 && !strcmp(kind, "tools"); i++) {
			if (nr[i].decision == POLICY_MCP_DENY)
				continue;
			struct mcp_ctx c = { .new_ = new_, .ns = ns, .os = os, .kind = kind, .nr = &nr[i], .or_ = &or_[i],
					     .d = d };
			r = args_widen(&c, nr[i].match, err);
		}
		return r;
	}
	if (r < 0) {
		gvec_free(&g);
		return r;
	}
	_cleanup_free_ bool *seen = calloc((nn + 1) * (no + 1), sizeof(bool));
	if (!seen) {
		gvec_free(&g);
		return error_set(err, ENOMEM, "out of memory");
	}
	struct mcp_ctx c = { .new_ = new_, .ns = ns, .os = os, .kind = kind, .nr = nr, .or_ = or_,
			     .nn = nn, .no = no, .seen = seen, .d = d };
	r = glob_atoms(NULL, 0, CG(g.v), g.n, mcp_atom, &c, err);
	gvec_free(&g);
	return r;
}

static int scan_rank(enum policy_mcp_scan s)
{
	return s == POLICY_MCP_SCAN_OFF ? 2 : s == POLICY_MCP_SCAN_REDACT ? 1 : 0;
}

static const char *scan_name(enum policy_mcp_scan s)
{
	return s == POLICY_MCP_SCAN_OFF ? "off" : s == POLICY_MCP_SCAN_REDACT ? "redact" : "block";
}

static int mcp_server_diff(const struct policy *new_, const struct policy_mcp_server *ns,
			   const struct policy_mcp_server *os, struct policy_diff *d, struct error *err)
{
	int r;
	char w[400];
	struct policy_loc loc = { .file = new_->file, .line = ns->line };

	if ((r = mcp_rules_diff(new_, ns, os, "tools", ns->tools, ns->n_tools, os ? os->tools : NULL,
				os ? os->n_tools : 0, d, err)) < 0 ||
	    (r = mcp_rules_diff(new_, ns, os, "resources", ns->resources, ns->n_resources,
				os ? os->resources : NULL, os ? os->n_resources : 0, d, err)) < 0 ||
	    (r = mcp_rules_diff(new_, ns, os, "prompts", ns->prompts, ns->n_prompts, os ? os->prompts : NULL,
				os ? os->n_prompts : 0, d, err)) < 0)
		return r;
	const struct {
		const char *name, *method;
		bool n, o;
	} req[] = {
		{ "sampling", "sampling/createMessage", ns->sampling, os && os->sampling },
		{ "elicitation", "elicitation/create", ns->elicitation, os && os->elicitation },
		{ "roots", "roots/list", ns->roots, os && os->roots },
	};
	for (size_t i = 0; i < ARRAY_SIZE(req); i++) {
		if (!req[i].n || req[i].o)
			continue;
		snprintf(w, sizeof(w), "%s %s", ns->name, req[i].method);
		if ((r = add(d, err, "mcp", new_, &loc, w,
			     "allows server %s to send %s (server_requests.%s); OLD refuses it", ns->name,
			     req[i].method, req[i].name)) < 0)
			return r;
	}
	if (!os)
		return 0;
	if (os->max_calls && (!ns->max_calls || ns->max_calls > os->max_calls)) {
		snprintf(w, sizeof(w), "%s tools/call %llu", ns->name, (unsigned long long)os->max_calls + 1);
		if ((r = add(d, err, "mcp", new_, &loc, w, "allows %s in a session; OLD's max_calls is %llu", w,
			     (unsigned long long)os->max_calls)) < 0)
			return r;
	}
	const struct {
		const char *name;
		enum policy_mcp_scan n, o;
	} sc[] = {
		{ "secrets", ns->scan_secrets, os->scan_secrets },
		{ "injection", ns->scan_injection, os->scan_injection },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sc); i++) {
		if (scan_rank(sc[i].n) <= scan_rank(sc[i].o))
			continue;
		snprintf(w, sizeof(w), "%s scan.%s %s", ns->name, sc[i].name, scan_name(sc[i].n));
		if ((r = add(d, err, "mcp", new_, &loc, w, "weakens %s; OLD has %s", w, scan_name(sc[i].o))) < 0)
			return r;
	}
	/* A different pin file holds other approved definitions: a tool
	 * whose definition changed may pass unapproved. Any change counts. */
	if (!str_eq(ns->pins, os->pins)) {
		snprintf(w, sizeof(w), "%s pins %s", ns->name, ns->pins ? ns->pins : "(default)");
		if ((r = add(d, err, "mcp", new_, &loc, w, "reads approvals from another pin file (%s); OLD uses %s", w,
			     os->pins ? os->pins : "the default")) < 0)
			return r;
	}
	/* Another command is another server, with tools OLD never saw. */
	bool same_cmd = ns->n_command == os->n_command;
	for (size_t i = 0; i < ns->n_command && same_cmd; i++)
		same_cmd = !strcmp(ns->command[i], os->command[i]);
	if (!same_cmd) {
		snprintf(w, sizeof(w), "%s command %s", ns->name, ns->n_command ? ns->command[0] : "(none)");
		if ((r = add(d, err, "mcp", new_, &loc, w, "runs another program as server %s (%s); OLD runs %s",
			     ns->name, ns->n_command ? ns->command[0] : "none",
			     os->n_command ? os->command[0] : "none")) < 0)
			return r;
	}
	return 0;
}

static int mcp_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	if (!new_->mcp)
		return 0;
	for (size_t i = 0; i < new_->mcp->n_servers; i++) {
		const struct policy_mcp_server *ns = &new_->mcp->servers[i];
		const struct policy_mcp_server *os = old->mcp ? policy_mcp_server(old->mcp, ns->name) : NULL;
		int r = mcp_server_diff(new_, ns, os, d, err);
		if (r < 0)
			return r;
	}
	return 0;
}
