/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_ADDR_H
#define AIRLOCK_NET_ADDR_H

/*
 * Host names and addresses as the SSRF defence sees them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "util/error.h"

struct net_addr {
	int family;       /* AF_INET or AF_INET6 */
	uint8_t a[16];    /* network byte order */
};

/* Normalise the host of a request. Numeric forms are recognised the way
 * the C library's inet_aton and URL parsers read them, so none can slip
 * past a check: 127.0.0.1, 0x7f.1, 0177.0.0.1, 2130706433, 127.1,
 * [::1], [::ffff:127.0.0.1] (IPv4-mapped: treated as IPv4), [fe80::1%eth0]
 * (the zone is dropped). Returns 1 and fills *addr for a numeric host, 0
 * for a DNS name, a negative errno when invalid. `out` receives the
 * canonical text (lower-case name without trailing dot; dotted quad;
 * RFC 5952 IPv6 without brackets). */
int addr_normalize_host(const char *host, char *out, size_t outlen, struct net_addr *addr) WUR;

enum addr_class {
	ADDR_PUBLIC,
	ADDR_LOOPBACK,     /* 127/8, ::1 */
	ADDR_PRIVATE,      /* 10/8, 172.16/12, 192.168/16, fc00::/7 */
	ADDR_LINK_LOCAL,   /* 169.254/16, fe80::/10 */
	ADDR_CGNAT,        /* 100.64/10 */
	ADDR_MULTICAST,    /* 224/4, ff00::/8 */
	ADDR_UNSPECIFIED,  /* 0/8, :: */
	ADDR_BROADCAST,    /* 255.255.255.255 */
	ADDR_METADATA,     /* 169.254.169.254, fd00:ec2::254, 100.100.100.200 */
	ADDR_RESERVED,     /* 240/4, 192.0.0/24, 198.18/15, doc ranges, 64:ff9b::/96 with a private v4, ... */
};

enum addr_class addr_classify(const struct net_addr *a);
const char *addr_class_name(enum addr_class c);

/* Is a in the range (and, when c->port != 0, is port equal)? */
bool addr_in_cidr(const struct net_addr *a, uint16_t port, const struct policy_cidr *c);

/* Text form of an address (RFC 5952 for IPv6). */
void addr_format(const struct net_addr *a, char *out, size_t len);

/* Resolve a DNS name to at most max addresses (A and AAAA), consulting
 * the policy's fixed `resolve` entries first. Returns the count (> 0) or
 * a negative errno with err filled ("no address for NAME"). */
int addr_resolve(const struct policy_network *net, const char *host, struct net_addr *out, size_t max,
		 struct error *err) WUR;

#endif
