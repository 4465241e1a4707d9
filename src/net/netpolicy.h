/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_NETPOLICY_H
#define AIRLOCK_NET_NETPOLICY_H

/*
 * Network decisions: which endpoint a host:port falls under, whether a
 * request inside it is allowed, whether a resolved address may be reached.
 * Pure functions of the policy; no I/O.
 */

#include <stdbool.h>
#include <stdint.h>

#include "net/addr.h"
#include "policy/policy.h"

struct net_decision {
	bool allow;
	const char *rule;                    /* id of the deciding rule, or "network.default" */
	const struct policy_endpoint *ep;    /* the endpoint host:port matched, or NULL */
	char reason[256];                    /* for a denial: what was denied and what would allow it */
};

/* Host patterns: exact (case-insensitive; both sides already normalised)
 * or "*.example.com", which matches any name with at least one more label
 * and not example.com itself. */
bool netpol_host_match(const char *pattern, const char *host);

/* Path globs: '*' matches within one segment (no '/'), '**' matches across
 * segments (including none), other characters literally. Percent-encoded
 * unreserved characters in path are decoded before matching; an encoded
 * '/' (%2F) never matches a literal '/'. */
bool netpol_glob_match(const char *glob, const char *s, size_t len);

/* Connection level: the first endpoint whose host pattern and ports match.
 * Denied when none does. */
bool netpol_decide_host(const struct policy_network *net, const char *host, uint16_t port,
			struct net_decision *d);

/* Name level, for DNS in transparent mode: the first endpoint whose host
 * pattern matches, at any of its ports. Denied when none does. */
bool netpol_decide_name(const struct policy_network *net, const char *host, struct net_decision *d);

/* Request level inside an endpoint: allowed when the endpoint has no rules,
 * or some rule matches method, path, query and (for an upgrade) allows
 * websocket. `access: read-only` is expanded by the parser into methods. */
bool netpol_decide_request(const struct policy_endpoint *ep, const char *method, const char *path, size_t path_len,
			   const char *query, size_t query_len, bool websocket, struct net_decision *d);

/* Tunnel level, for a TLS connection (CONNECT, or a redirected one) to an
 * endpoint the host decision chose: an intercepting endpoint decides each
 * request inside it (netpol_decide_request); a passthrough tunnel is
 * opaque, so it is allowed only where the endpoint would allow every
 * request anyway: no rules and no protocol: mcp. */
bool netpol_decide_tunnel(const struct policy_endpoint *ep, uint16_t port, struct net_decision *d);

/* Address level, after resolution: a non-public address is denied unless
 * allow_private names it (with the port, when the entry has one). */
bool netpol_decide_address(const struct policy_network *net, const struct net_addr *a, uint16_t port,
			   struct net_decision *d);

#endif
