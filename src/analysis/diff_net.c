/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The widening prover (diff.c): the network section, request by request
 * inside each pair of endpoints that decide a host and port, and
 * network.allow_private, address class by address class.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net/addr.h"
#include "net/netpolicy.h"
#include "analysis/diff.h"
#include "analysis/diff_internal.h"
#include "policy/glob.h"
#include "util/cleanup.h"


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

void diff_methods_add(struct methods *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i], name))
			return;
	if (m->n < ARRAY_SIZE(m->v) - 1)
		m->v[m->n++] = name;
	else
		m->overflow = true;
}

void diff_methods_close(struct methods *m)
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
		if ((r = diff_gvec_add(&q, pq, GLOB_PATH, err)) < 0)
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
	diff_gvec_free(&q);
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
	diff_methods_add(&m, "GET");
	for (size_t i = 0; i < nn; i++)
		for (size_t k = 0; k < nr[i].n_methods; k++)
			diff_methods_add(&m, nr[i].methods[k]);
	for (size_t i = 0; o && i < o->n_rules; i++)
		for (size_t k = 0; k < o->rules[i].n_methods; k++)
			diff_methods_add(&m, o->rules[i].methods[k]);
	diff_methods_close(&m);
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
					r = diff_gvec_add(&paths, app[k]->path ? app[k]->path : "**", GLOB_PATH, err);
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
				diff_gvec_free(&paths);
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
						r = diff_add(c->d, err, "network", c->new_, which ? &which->loc : &e->loc, text,
							"allows %s; OLD %s:%u (%s) denies it", text,
							o->loc.file ? o->loc.file : c->old->file, o->loc.line, o->id);
					else
						r = diff_add(c->d, err, "network", c->new_, which ? &which->loc : &e->loc, text,
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
					r = diff_add(c->d, err, "network", c->new_, which ? &which->loc : &e->loc, text,
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
				r = diff_add(c->d, err, "network.tls", c->new_, &e->loc, hp,
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
				r = diff_add(c->d, err, "network.mcp", c->new_, &e->loc, hp,
					"passes MCP requests to %s unjudged (no protocol: mcp); OLD decides each through "
					"mcp.servers.%s", hp, o->mcp_server);
				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}

int diff_net(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	const struct policy_network *nn = &new_->network, *on = &old->network;
	bool old_off = policy_net_mode(old) == POLICY_NET_NONE;
	struct gvec hosts = { 0 };
	int r = 0;

	if (policy_net_mode(new_) == POLICY_NET_NONE)
		return 0;
	for (size_t i = 0; i < nn->n_endpoints && r >= 0; i++)
		r = diff_gvec_add(&hosts, nn->endpoints[i].host, GLOB_HOST, err);
	for (size_t i = 0; !old_off && i < on->n_endpoints && r >= 0; i++)
		r = diff_gvec_add(&hosts, on->endpoints[i].host, GLOB_HOST, err);
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
		if ((r = diff_add(d, err, "network.inspection", new_, &new_->origin.max_body, w,
			     "scans only %llu bytes of each body for leaks; OLD scans %llu", (unsigned long long)nn->max_body,
			     (unsigned long long)on->max_body)) < 0)
			goto out;
	}
	if (nn->allow_compressed && !on->allow_compressed && !old_off &&
	    (r = diff_add(d, err, "network.inspection", new_, &new_->origin.allow_compressed, "a compressed request body",
		     "lets compressed request bodies pass unscanned; OLD refuses them")) < 0)
		goto out;
	if (nn->upstream_ca && (!on->upstream_ca || strcmp(nn->upstream_ca, on->upstream_ca) != 0) &&
	    (r = diff_add(d, err, "network.tls", new_, &new_->origin.upstream_ca, nn->upstream_ca,
		     "trusts the upstream CA bundle %s; OLD does not", nn->upstream_ca)) < 0)
		goto out;
out:
	diff_gvec_free(&hosts);
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

int diff_private(const struct policy *old, const struct policy *new_, struct policy_diff *d,
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
			int r = diff_add(d, err, "network.allow_private", new_, &c->loc, w,
				    "allows connecting to %s (%s address); OLD denies it", w, addr_class_name(cls));
			if (r < 0)
				return r;
			break;
		}
	}
	return 0;
}
