/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host names and addresses for the SSRF defence.
 *
 * The host of a request is read the way the most permissive reader would
 * read it (inet_aton's shorthand IPv4, URL parsers' "ends in a number"
 * rule, IPv4 inside IPv6), so that every spelling of an address is
 * recognised as that address before any check: 0x7f.1, 2130706433 and
 * [::ffff:7f00:1] are all 127.0.0.1. A host that is neither a valid DNS
 * name nor an address is refused rather than handed to the resolver, which
 * might read it some other way.
 *
 * WARNING: the canonical text produced here must stay the one
 * policy/netspec.c stores for hosts in a policy (compared with strcmp).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "net/addr.h"
#include "util/cleanup.h"
#include "util/hostname.h"

#define NAME_MAX_LEN HOSTNAME_MAX_LEN
#define LABEL_MAX_LEN HOSTNAME_LABEL_MAX_LEN

/* ::ffff:a.b.c.d and ::a.b.c.d (but not :: and ::1) reach an IPv4 host:
 * they become that IPv4 address, so one check covers both spellings. */
static void v6_to_v4_if_embedded(struct net_addr *a)
{
	static const uint8_t zero[12];
	const uint8_t *b = a->a;
	bool mapped, compat;

	if (a->family != AF_INET6)
		return;
	mapped = memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff;
	compat = memcmp(b, zero, 12) == 0 && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1);
	if (!mapped && !compat)
		return;
	memmove(a->a, b + 12, 4);
	memset(a->a + 4, 0, 12);
	a->family = AF_INET;
}

/*
 * IPv4 in every form inet_aton and WHATWG URL parsers accept: one to four
 * parts separated by dots, each decimal, octal with a leading 0, or hex
 * with 0x (0x alone is 0); every part but the last is one byte, and the
 * last fills the remaining bytes. s has no trailing dot.
 */
static bool parse_v4_legacy(const char *s, size_t len, uint8_t out[4])
{
	uint64_t parts[4];
	size_t n = 0, i = 0;
	uint32_t v4;

	for (;;) {
		uint64_t v = 0;
		unsigned base = 10;
		size_t start;

		if (n == 4 || i >= len || s[i] == '.')
			return false;
		if (s[i] == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
			base = 16;
			i += 2;
		} else if (s[i] == '0' && i + 1 < len && s[i + 1] != '.') {
			base = 8;
			i++;
		}
		start = i;
		for (; i < len && s[i] != '.'; i++) {
			unsigned d;

			if (base == 16 ? !host_is_hex(s[i]) : !host_is_digit(s[i]))
				return false;
			d = host_hex_value(s[i]);
			if (d >= base)
				return false;
			v = v * base + d;
			if (v > UINT32_MAX)
				return false;
		}
		/* "0x" alone is 0; an empty decimal or octal part is not a number. */
		if (i == start && base != 16)
			return false;
		parts[n++] = v;
		if (i == len)
			break;
		i++; /* the dot */
	}
	for (size_t k = 0; k + 1 < n; k++)
		if (parts[k] > 255)
			return false;
	if (parts[n - 1] > (UINT32_MAX >> (8 * (n - 1))))
		return false;
	v4 = (uint32_t)parts[n - 1];
	for (size_t k = 0; k + 1 < n; k++)
		v4 |= (uint32_t)parts[k] << (24 - 8 * k);
	out[0] = (uint8_t)(v4 >> 24);
	out[1] = (uint8_t)(v4 >> 16);
	out[2] = (uint8_t)(v4 >> 8);
	out[3] = (uint8_t)v4;
	return true;
}

static bool valid_name(const char *s, size_t len)
{
	size_t label = 0;

	if (len == 0 || len > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			if (label == 0 || label > LABEL_MAX_LEN)
				return false;
			label = 0;
			continue;
		}
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || host_is_digit(c) || c == '-' || c == '_'))
			return false;
		label++;
	}
	return true;
}

/* An IPv6 literal, with or without a zone ("%eth0", or "%25eth0" as a
 * URL writes it): the zone only picks an interface and is dropped. */
static bool parse_v6(const char *s, size_t len, struct net_addr *a)
{
	char tmp[INET6_ADDRSTRLEN + 1];
	const char *pct = memchr(s, '%', len);

	if (pct)
		len = (size_t)(pct - s);
	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (inet_pton(AF_INET6, tmp, a->a) != 1)
		return false;
	a->family = AF_INET6;
	v6_to_v4_if_embedded(a);
	return true;
}

/* The work of addr_normalize_host: text (NAME_MAX_LEN + 1 bytes) and *a
 * are always written. */
static int normalize(const char *host, char *text, struct net_addr *a)
{
	char buf[NAME_MAX_LEN + 2];
	size_t len;

	if (!host)
		return -EINVAL;
	len = strlen(host);
	if (len == 0)
		return -EINVAL;

	if (host[0] == '[' || memchr(host, ':', len)) {
		bool ok;

		if (host[0] == '[')
			ok = len >= 2 && host[len - 1] == ']' && parse_v6(host + 1, len - 2, a);
		else
			ok = parse_v6(host, len, a);
		if (!ok)
			return -EINVAL;
		addr_format(a, text, NAME_MAX_LEN + 1);
		return 1;
	}

	/* Room for 253 bytes and a trailing dot. */
	if (len > NAME_MAX_LEN + 1)
		return -EINVAL;
	for (size_t i = 0; i <= len; i++)
		buf[i] = (host[i] >= 'A' && host[i] <= 'Z') ? (char)(host[i] - 'A' + 'a') : host[i];
	if (len > 1 && buf[len - 1] == '.')
		buf[--len] = '\0';

	if (host_last_label_numeric(buf, len)) {
		if (!parse_v4_legacy(buf, len, a->a))
			return -EINVAL;
		a->family = AF_INET;
		addr_format(a, text, NAME_MAX_LEN + 1);
		return 1;
	}
	if (!valid_name(buf, len))
		return -EINVAL;
	memcpy(text, buf, len + 1);
	return 0;
}

int addr_normalize_host(const char *host, char *out, size_t outlen, struct net_addr *addr)
{
	/* Through copies, so that out may be host itself and nothing but an
	 * empty out is written on failure. */
	char text[NAME_MAX_LEN + 1] = "";
	struct net_addr a = { 0 };
	int r = normalize(host, text, &a);

	if (r >= 0 && out && strlen(text) >= outlen)
		r = -ENOSPC;
	if (r < 0) {
		if (out && outlen)
			out[0] = '\0';
		return r;
	}
	if (out)
		memcpy(out, text, strlen(text) + 1);
	if (addr && r == 1)
		*addr = a;
	return r;
}

/* ---- classes ---- */

struct v4_range {
	uint32_t net;
	unsigned prefix;
	enum addr_class cls;
};

#define V4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

/* First match wins: single addresses before the ranges holding them. */
static const struct v4_range v4_ranges[] = {
	{ V4(169, 254, 169, 254), 32, ADDR_METADATA }, /* AWS, GCP, Azure, OpenStack, ... */
	{ V4(169, 254, 170, 2), 32, ADDR_METADATA },   /* AWS ECS task credentials */
	{ V4(169, 254, 170, 23), 32, ADDR_METADATA },  /* AWS EKS pod identity */
	{ V4(100, 100, 100, 200), 32, ADDR_METADATA }, /* Alibaba Cloud */
	{ V4(168, 63, 129, 16), 32, ADDR_METADATA },   /* Azure WireServer: a public address */
	{ V4(255, 255, 255, 255), 32, ADDR_BROADCAST },
	{ V4(0, 0, 0, 0), 8, ADDR_UNSPECIFIED },	/* Linux connects 0.0.0.0 to itself */
	{ V4(127, 0, 0, 0), 8, ADDR_LOOPBACK },
	{ V4(10, 0, 0, 0), 8, ADDR_PRIVATE },
	{ V4(172, 16, 0, 0), 12, ADDR_PRIVATE },
	{ V4(192, 168, 0, 0), 16, ADDR_PRIVATE },
	{ V4(169, 254, 0, 0), 16, ADDR_LINK_LOCAL },
	{ V4(100, 64, 0, 0), 10, ADDR_CGNAT },
	{ V4(224, 0, 0, 0), 4, ADDR_MULTICAST },
	{ V4(240, 0, 0, 0), 4, ADDR_RESERVED },
	{ V4(192, 0, 0, 0), 24, ADDR_RESERVED },   /* IETF protocol assignments */
	{ V4(192, 0, 2, 0), 24, ADDR_RESERVED },   /* TEST-NET-1 */
	{ V4(198, 51, 100, 0), 24, ADDR_RESERVED }, /* TEST-NET-2 */
	{ V4(203, 0, 113, 0), 24, ADDR_RESERVED },  /* TEST-NET-3 */
	{ V4(198, 18, 0, 0), 15, ADDR_RESERVED },   /* benchmarking */
	{ V4(192, 88, 99, 0), 24, ADDR_RESERVED },  /* 6to4 relay anycast (deprecated) */
};

static enum addr_class classify_v4(const uint8_t b[4])
{
	uint32_t v = V4(b[0], b[1], b[2], b[3]);

	for (size_t i = 0; i < ARRAY_SIZE(v4_ranges); i++) {
		uint32_t mask = v4_ranges[i].prefix ? UINT32_MAX << (32 - v4_ranges[i].prefix) : 0;
		if ((v & mask) == v4_ranges[i].net)
			return v4_ranges[i].cls;
	}
	return ADDR_PUBLIC;
}

static bool v6_prefix(const uint8_t *a, const uint8_t *p, unsigned bits)
{
	size_t bytes = bits / 8;
	unsigned rest = bits % 8;

	if (memcmp(a, p, bytes) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[bytes] & mask) == (p[bytes] & mask);
}

/* An address that hands its embedded IPv4 address to a translator (NAT64,
 * 6to4) is as reachable as that address: public only when it is. */
static enum addr_class embedded(const uint8_t *v4)
{
	return classify_v4(v4) == ADDR_PUBLIC ? ADDR_PUBLIC : ADDR_RESERVED;
}

static enum addr_class classify_v6(const uint8_t a[16])
{
	static const uint8_t unspecified[16] = { 0 };
	static const uint8_t loopback[16] = { [15] = 1 };
	static const uint8_t ec2_metadata[16] = { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 };
	static const uint8_t ec2_pod[16] = { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x23 };
	static const uint8_t nat64[16] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t nat64_local[16] = { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 };
	static const uint8_t discard[16] = { 0x01, 0x00 };
	static const uint8_t ietf[16] = { 0x20, 0x01 };
	static const uint8_t doc[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	static const uint8_t doc2[16] = { 0x3f, 0xff };
	static const uint8_t six_to_four[16] = { 0x20, 0x02 };
	static const uint8_t ula[16] = { 0xfc };
	static const uint8_t link_local[16] = { 0xfe, 0x80 };
	static const uint8_t site_local[16] = { 0xfe, 0xc0 };
	static const uint8_t multicast[16] = { 0xff };
	static const uint8_t global[16] = { 0x20 };

	if (memcmp(a, unspecified, 16) == 0)
		return ADDR_UNSPECIFIED;
	if (memcmp(a, loopback, 16) == 0)
		return ADDR_LOOPBACK;
	if (memcmp(a, ec2_metadata, 16) == 0 || memcmp(a, ec2_pod, 16) == 0)
		return ADDR_METADATA;
	if (v6_prefix(a, nat64, 96))
		return embedded(a + 12);
	if (v6_prefix(a, nat64_local, 48))
		return ADDR_RESERVED;
	if (v6_prefix(a, discard, 64))
		return ADDR_RESERVED;
	if (v6_prefix(a, doc, 32) || v6_prefix(a, doc2, 20))
		return ADDR_RESERVED;
	/* Teredo, benchmarking, ORCHID and the other IETF assignments. */
	if (v6_prefix(a, ietf, 23))
		return ADDR_RESERVED;
	if (v6_prefix(a, six_to_four, 16))
		return embedded(a + 2);
	if (v6_prefix(a, ula, 7) || v6_prefix(a, site_local, 10))
		return ADDR_PRIVATE;
	if (v6_prefix(a, link_local, 10))
		return ADDR_LINK_LOCAL;
	if (v6_prefix(a, multicast, 8))
		return ADDR_MULTICAST;
	/* Only 2000::/3 is allocated for global unicast; the rest, including
	 * the deprecated IPv4-translated ::ffff:0:0:0/96, is not public. */
	if (!v6_prefix(a, global, 3))
		return ADDR_RESERVED;
	return ADDR_PUBLIC;
}

enum addr_class addr_classify(const struct net_addr *a)
{
	struct net_addr c = *a;

	/* Addresses from elsewhere (a socket, the resolver) may still be
	 * IPv4-mapped. */
	v6_to_v4_if_embedded(&c);
	if (c.family == AF_INET)
		return classify_v4(c.a);
	if (c.family == AF_INET6)
		return classify_v6(c.a);
	return ADDR_RESERVED;
}

const char *addr_class_name(enum addr_class c)
{
	switch (c) {
	case ADDR_PUBLIC:
		return "public";
	case ADDR_LOOPBACK:
		return "loopback";
	case ADDR_PRIVATE:
		return "private";
	case ADDR_LINK_LOCAL:
		return "link-local";
	case ADDR_CGNAT:
		return "carrier-grade NAT";
	case ADDR_MULTICAST:
		return "multicast";
	case ADDR_UNSPECIFIED:
		return "unspecified";
	case ADDR_BROADCAST:
		return "broadcast";
	case ADDR_METADATA:
		return "cloud metadata";
	case ADDR_RESERVED:
		return "reserved";
	}
	return "unknown";
}

bool addr_in_cidr(const struct net_addr *a, uint16_t port, const struct policy_cidr *c)
{
	unsigned max = a->family == AF_INET ? 32 : 128;

	if (a->family != c->family || (a->family != AF_INET && a->family != AF_INET6) ||
	    c->prefix > max)
		return false;
	if (c->port != 0 && c->port != port)
		return false;
	return v6_prefix(a->a, c->addr, c->prefix);
}

void addr_format(const struct net_addr *a, char *out, size_t len)
{
	char text[INET6_ADDRSTRLEN] = "?";

	if (len == 0)
		return;
	if (a->family != AF_INET && a->family != AF_INET6)
		snprintf(text, sizeof(text), "?");
	else if (!inet_ntop(a->family, a->a, text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	snprintf(out, len, "%s", text);
}

/* ---- resolution ---- */

static bool add_unique(struct net_addr *out, size_t *n, size_t max, const struct net_addr *a)
{
	for (size_t i = 0; i < *n; i++)
		if (out[i].family == a->family && memcmp(out[i].a, a->a, sizeof(a->a)) == 0)
			return true;
	if (*n >= max)
		return false;
	out[(*n)++] = *a;
	return true;
}

/* The host for a message: printable ASCII only, shortened. */
static void safe_text(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < size && i < 96; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) ? '?' : s[i];
	if (s[i] && size > 4) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
}

static bool name_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > 1 && a[la - 1] == '.')
		la--;
	if (lb > 1 && b[lb - 1] == '.')
		lb--;
	return la == lb && strncasecmp(a, b, la) == 0;
}

int addr_resolve(const struct policy_network *net, const char *host, struct net_addr *out, size_t max,
		 struct error *err)
{
	char name[NAME_MAX_LEN + 1], shown[128];
	struct addrinfo hints = { 0 }, *res = NULL;
	struct net_addr a;
	size_t n = 0;
	int r;

	if (!host)
		return error_set(err, EINVAL, "no host to resolve");
	if (max == 0)
		return error_set(err, EINVAL, "no room for the addresses of a host");
	r = addr_normalize_host(host, name, sizeof(name), &a);
	if (r < 0) {
		safe_text(host, shown, sizeof(shown));
		return error_set(err, EINVAL, "no address for %s: not a valid host name", shown);
	}
	if (r == 1) {
		out[0] = a;
		return 1;
	}

	/* Fixed entries replace DNS for their name entirely. */
	for (size_t i = 0; net && i < net->n_resolve; i++) {
		const struct policy_resolve *e = &net->resolve[i];

		if (!e->host || !e->addr || !name_eq(e->host, name))
			continue;
		if (addr_normalize_host(e->addr, NULL, 0, &a) == 1)
			add_unique(out, &n, max, &a);
	}
	if (n > 0)
		return (int)n;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(name, NULL, &hints, &res);
	if (r != 0) {
		int code;

		switch (r) {
		case EAI_NONAME:
		case EAI_NODATA:
		case EAI_ADDRFAMILY:
			return error_set(err, ENOENT, "no address for %s", name);
		case EAI_AGAIN:
			code = EAGAIN;
			break;
		case EAI_MEMORY:
			code = ENOMEM;
			break;
		case EAI_SYSTEM:
			code = errno ? errno : EIO;
			break;
		default:
			code = EIO;
			break;
		}
		return error_set(err, code, "no address for %s: %s", name, gai_strerror(r));
	}
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		memset(&a, 0, sizeof(a));
		if (ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(struct sockaddr_in)) {
			const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)ai->ai_addr;
			a.family = AF_INET;
			memcpy(a.a, &sin->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6 &&
			   ai->ai_addrlen >= sizeof(struct sockaddr_in6)) {
			const struct sockaddr_in6 *sin6 =
				(const struct sockaddr_in6 *)(const void *)ai->ai_addr;
			a.family = AF_INET6;
			memcpy(a.a, &sin6->sin6_addr, 16);
			v6_to_v4_if_embedded(&a);
		} else {
			continue;
		}
		if (!add_unique(out, &n, max, &a))
			break;
	}
	freeaddrinfo(res);
	if (n == 0)
		return error_set(err, ENOENT, "no address for %s", name);
	return (int)n;
}
