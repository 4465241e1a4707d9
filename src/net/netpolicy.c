/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Network decisions as pure functions of the policy.
 *
 * Everything a request carries (host, path, query) is agent-controlled, so
 * matching is bounded: host patterns compare strings, and globs run as a
 * set-of-states automaton in O(glob x path) time and fixed memory, never
 * by backtracking (a pattern of several "**" segments ending in a literal
 * that does not match would otherwise take time exponential in their
 * number).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "net/netpolicy.h"
#include "match/glob.h"
#include "policy/glob.h"
#include "util/cleanup.h"
#include "util/urlunit.h"

#define DEFAULT_RULE "network.default"

/* ---- hosts ---- */

static size_t trimmed_len(const char *s)
{
	size_t n = strlen(s);

	return n > 1 && s[n - 1] == '.' ? n - 1 : n;
}

bool netpol_host_match(const char *pattern, const char *host)
{
	size_t lp, lh;

	if (!pattern || !host)
		return false;
	lp = trimmed_len(pattern);
	lh = trimmed_len(host);
	if (lp >= 2 && pattern[0] == '*' && pattern[1] == '.') {
		/* "*.example.com": at least one more non-empty label before
		 * ".example.com"; never "example.com" itself. */
		size_t ls = lp - 1; /* ".example.com" */
		if (lh <= ls || host[lh - ls - 1] == '.')
			return false;
		return strncasecmp(host + lh - ls, pattern + 1, ls) == 0;
	}
	return lp == lh && strncasecmp(pattern, host, lp) == 0;
}

/* ---- globs ---- */

/* Units: a byte (0..255), or an encoded byte that stays encoded
 * (ENC | byte). */
#define ENC URL_UNIT_ENC

bool netpol_glob_match(const char *glob, const char *s, size_t len)
{
	return match_path_glob(glob, s, len);
}

/* ---- messages ---- */

/* s[0..len) for a message: printable ASCII, shortened to max bytes. */
static void shown(const char *s, size_t len, size_t max, char *buf, size_t size)
{
	size_t n = 0;

	if (size == 0)
		return;
	for (size_t i = 0; s && i < len && n + 4 < size; i++) {
		if (i == max) {
			memcpy(buf + n, "...", 3);
			n += 3;
			break;
		}
		unsigned char c = (unsigned char)s[i];
		buf[n++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	buf[n] = '\0';
}

/* host:port, with brackets around an IPv6 address. */
static void host_port(const char *host, uint16_t port, char *buf, size_t size)
{
	char h[128];

	shown(host, strlen(host), 100, h, sizeof(h));
	if (strchr(h, ':'))
		snprintf(buf, size, "[%s]:%u", h, port);
	else
		snprintf(buf, size, "%s:%u", h, port);
}

static void decision_init(struct net_decision *d)
{
	d->allow = false;
	d->rule = DEFAULT_RULE;
	d->ep = NULL;
	d->reason[0] = '\0';
}

static bool net_off(const struct policy_network *net, struct net_decision *d)
{
	if (net && net->mode != POLICY_NET_NONE)
		return false;
	snprintf(d->reason, sizeof(d->reason),
		 "the policy has no network section, so the agent has no network access");
	return true;
}

/* ---- decisions ---- */

static bool ep_has_port(const struct policy_endpoint *ep, uint16_t port)
{
	for (size_t i = 0; i < ep->n_ports; i++)
		if (ep->ports[i] == port)
			return true;
	return false;
}

bool netpol_decide_host(const struct policy_network *net, const char *host, uint16_t port,
			struct net_decision *d)
{
	char name[256], hp[160];
	const struct policy_endpoint *other = NULL;

	decision_init(d);
	if (net_off(net, d))
		return false;
	/* Decide on the canonical text, which is what the policy holds: the
	 * host "0x7f.1" is the endpoint "127.0.0.1". */
	if (!host || addr_normalize_host(host, name, sizeof(name), NULL) < 0) {
		shown(host, host ? strlen(host) : 0, 100, name, sizeof(name));
		snprintf(d->reason, sizeof(d->reason), "\"%s\" is not a valid host name or address",
			 name);
		return false;
	}
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];

		if (!netpol_host_match(ep->host, name))
			continue;
		if (!ep_has_port(ep, port)) {
			if (!other)
				other = ep;
			continue;
		}
		d->allow = true;
		d->rule = ep->id;
		d->ep = ep;
		return true;
	}
	host_port(name, port, hp, sizeof(hp));
	if (other) {
		char ports[64] = "";
		size_t pos = 0;

		for (size_t i = 0; i < other->n_ports && pos + 8 < sizeof(ports); i++)
			pos += (size_t)snprintf(ports + pos, sizeof(ports) - pos, "%s%u", i ? ", " : "",
						other->ports[i]);
		snprintf(d->reason, sizeof(d->reason),
			 "%s: endpoint %s allows ports [%s], not %u; add %u to its ports", hp, other->id,
			 ports, port, port);
	} else {
		shown(name, strlen(name), 100, name, sizeof(name));
		snprintf(d->reason, sizeof(d->reason),
			 "no network.endpoints entry allows %s; add {host: %s, ports: [%u]}", hp, name,
			 port);
	}
	return false;
}

bool netpol_decide_name(const struct policy_network *net, const char *host, struct net_decision *d)
{
	char name[256];

	decision_init(d);
	if (net_off(net, d))
		return false;
	if (!host || addr_normalize_host(host, name, sizeof(name), NULL) < 0) {
		shown(host, host ? strlen(host) : 0, 100, name, sizeof(name));
		snprintf(d->reason, sizeof(d->reason), "\"%s\" is not a valid host name or address", name);
		return false;
	}
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		if (netpol_host_match(ep->host, name)) {
			d->allow = true;
			d->rule = ep->id;
			d->ep = ep;
			return true;
		}
	}
	shown(name, strlen(name), 100, name, sizeof(name));
	snprintf(d->reason, sizeof(d->reason), "no network.endpoints entry names %s; add {host: %s, ports: [...]}",
		 name, name);
	return false;
}

/*
 * Does the path hold a "." or ".." segment? Servers and the proxies before
 * them resolve those differently (some after decoding %2E or %2F, some
 * treating '\' as '/', Tomcat also dropping ";params"), so "/repos/../admin"
 * could match the glob "/repos/" followed by "**" here and reach /admin
 * there. Such a path is never
 * matched by a rule.
 */
static bool has_dot_segment(const char *path, size_t len)
{
	size_t i = 0, dots = 0, other = 0;
	bool in_params = false;

	for (;;) {
		bool end = i >= len;
		unsigned u = 0;

		if (!end)
			u = url_next_unit(path, len, &i);
		if (end || u == '/' || u == '\\' || u == (ENC | '/') || u == (ENC | '\\')) {
			if (other == 0 && (dots == 1 || dots == 2))
				return true;
			if (end)
				return false;
			dots = other = 0;
			in_params = false;
			continue;
		}
		if (in_params)
			continue;
		if (u == ';' || u == (ENC | ';'))
			in_params = true;
		else if (u == '.')
			dots++;
		else
			other++;
	}
}

static bool method_in(const struct policy_net_rule *r, const char *method)
{
	if (r->n_methods == 0 || !r->methods)
		return true;
	for (size_t i = 0; i < r->n_methods; i++)
		if (r->methods[i] && strcmp(r->methods[i], method) == 0)
			return true;
	return false;
}

bool netpol_decide_request(const struct policy_endpoint *ep, const char *method, const char *path, size_t path_len,
			   const char *query, size_t query_len, bool websocket, struct net_decision *d)
{
	const struct policy_net_rule *no_ws = NULL;
	char m[40], p[100];

	decision_init(d);
	d->ep = ep;
	if (!ep) {
		snprintf(d->reason, sizeof(d->reason), "no endpoint allows this connection");
		return false;
	}
	if (!method)
		method = "";
	if (!path)
		path_len = 0;
	if (!query)
		query_len = 0;
	shown(method, strlen(method), 32, m, sizeof(m));
	shown(path, path_len, 80, p, sizeof(p));

	if (ep->n_rules == 0) {
		d->allow = true;
		d->rule = ep->id;
		return true;
	}
	if (has_dot_segment(path, path_len)) {
		snprintf(d->reason, sizeof(d->reason),
			 "%s %s: a path with a . or .. segment is never matched by a rule (endpoint %s); "
			 "send the resolved path",
			 m, p, ep->id);
		return false;
	}
	for (size_t i = 0; i < ep->n_rules; i++) {
		const struct policy_net_rule *r = &ep->rules[i];

		if (!method_in(r, method))
			continue;
		if (r->path && !netpol_glob_match(r->path, path ? path : "", path_len))
			continue;
		if (r->query && !netpol_glob_match(r->query, query ? query : "", query_len))
			continue;
		if (websocket && !r->websocket) {
			if (!no_ws)
				no_ws = r;
			continue;
		}
		d->allow = true;
		d->rule = r->id;
		return true;
	}
	if (no_ws)
		snprintf(d->reason, sizeof(d->reason),
			 "websocket upgrade %s %s: rule %s of endpoint %s matches but does not allow "
			 "websocket; add websocket: true to it",
			 m, p, no_ws->id, ep->id);
	else
		snprintf(d->reason, sizeof(d->reason),
			 "%s %s is not allowed by any rule of endpoint %s; add a rule {methods: [%s], "
			 "path: %s}",
			 m, p, ep->id, m, p);
	return false;
}

bool netpol_decide_tunnel(const struct policy_endpoint *ep, uint16_t port, struct net_decision *d)
{
	decision_init(d);
	d->ep = ep;
	if (!ep) {
		snprintf(d->reason, sizeof(d->reason), "no endpoint allows this connection");
		return false;
	}
	d->rule = ep->id;
	if (ep->intercept) {
		d->allow = true;
		snprintf(d->reason, sizeof(d->reason), "intercepted: each request inside is decided by the rules");
		return true;
	}
	/* Rules on a port other than 443 may go without interception, for
	 * plain HTTP there. A TLS tunnel on that port would carry any
	 * request past them unseen: the rules are the policy, so no tunnel. */
	if (ep->mcp_server) {
		snprintf(d->reason, sizeof(d->reason),
			 "protocol: mcp needs tls: intercept: a passthrough tunnel to port %u would hide every MCP "
			 "message (endpoint %s)",
			 port, ep->id);
		return false;
	}
	if (ep->n_rules > 0) {
		snprintf(d->reason, sizeof(d->reason),
			 "endpoint %s has rules, which a passthrough TLS tunnel to port %u would carry any request "
			 "past; set tls: intercept, or send plain http:// requests",
			 ep->id, port);
		return false;
	}
	d->allow = true;
	snprintf(d->reason, sizeof(d->reason),
		 "tls: passthrough: the proxy allows the connection and does not see the requests");
	return true;
}

static const char *article(const char *word)
{
	return strchr("aeiou", word[0]) ? "an" : "a";
}

bool netpol_decide_address(const struct policy_network *net, const struct net_addr *a, uint16_t port,
			   struct net_decision *d)
{
	const struct policy_cidr *port_only = NULL;
	struct net_addr conv;
	enum addr_class cls;
	const char *name;
	char text[64], hp[80];

	decision_init(d);
	if (net_off(net, d))
		return false;
	if (!a) {
		snprintf(d->reason, sizeof(d->reason), "no address");
		return false;
	}
	/* Through the text form, so that an IPv4-mapped address from a
	 * socket is checked (and matched) as the IPv4 address it is. */
	addr_format(a, text, sizeof(text));
	if (addr_normalize_host(text, text, sizeof(text), &conv) != 1) {
		snprintf(d->reason, sizeof(d->reason), "not an IPv4 or IPv6 address");
		return false;
	}
	a = &conv;
	cls = addr_classify(a);
	if (cls == ADDR_PUBLIC) {
		/* No entry decides: public addresses are what endpoints reach. */
		d->allow = true;
		return true;
	}
	for (size_t i = 0; i < net->n_allow_private; i++) {
		const struct policy_cidr *c = &net->allow_private[i];
		struct policy_cidr range = *c;
		unsigned full = a->family == AF_INET ? 32 : 128;

		/* A metadata service hands out the host's credentials: only an
		 * entry naming that very address opens it, not a range that
		 * happens to contain it (169.254.0.0/16, 0.0.0.0/0). */
		if (cls == ADDR_METADATA && c->prefix != full)
			continue;
		range.port = 0;
		if (!addr_in_cidr(a, port, &range))
			continue;
		if (c->port != 0 && c->port != port) {
			if (!port_only)
				port_only = c;
			continue;
		}
		d->allow = true;
		d->rule = "network.allow_private";
		snprintf(d->reason, sizeof(d->reason), "%s is allowed by network.allow_private[%zu]", text,
			 i);
		return true;
	}
	name = addr_class_name(cls);
	if (port_only)
		snprintf(d->reason, sizeof(d->reason),
			 "%s is %s %s address; allow_private names it only for port %u, not %u", text,
			 article(name), name, port_only->port, port);
	else if (cls == ADDR_METADATA)
		snprintf(d->reason, sizeof(d->reason),
			 "%s is %s %s address; allow_private does not name it", text, article(name),
			 name);
	else {
		host_port(text, port, hp, sizeof(hp));
		snprintf(d->reason, sizeof(d->reason),
			 "%s is %s %s address; allow_private does not name it (add \"%s\" to "
			 "network.allow_private to allow it)",
			 text, article(name), name, hp);
	}
	return false;
}
