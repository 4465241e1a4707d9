/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lexical values of the network section: hosts, address ranges, URL
 * globs, HTTP methods and ids. No DNS and no I/O; the parser turns the
 * statuses returned here into messages.
 *
 * WARNING: hosts are stored in exactly the text net/addr.c gives a request's
 * host after normalisation, because the proxy compares the two as strings.
 * A change to one side's canonical form must be made on the other too
 * (tests/unit/test_net.c checks that they agree).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/internal.h"
#include "util/cleanup.h"
#include "util/hostname.h"

#define NAME_MAX_LEN HOSTNAME_MAX_LEN
#define LABEL_MAX_LEN HOSTNAME_LABEL_MAX_LEN

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Write the canonical text of a 16-byte IPv6 address: IPv4-mapped
 * (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d, but not :: and ::1)
 * addresses reach IPv4 hosts, so they are written, and checked, as IPv4. */
static void v6_text(const uint8_t a[16], char *out)
{
	static const uint8_t zero[12];
	bool mapped = memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff;
	bool compat = memcmp(a, zero, 12) == 0 && !(a[12] == 0 && a[13] == 0 && a[14] == 0 && a[15] <= 1);

	if (mapped || compat)
		snprintf(out, POLICY_HOST_MAX, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
	else if (!inet_ntop(AF_INET6, a, out, POLICY_HOST_MAX))
		out[0] = '\0';
}

static bool v6_parse(const char *s, size_t len, uint8_t a[16])
{
	char tmp[INET6_ADDRSTRLEN + 1];

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return inet_pton(AF_INET6, tmp, a) == 1;
}

/* Strict dotted quad: four decimal numbers 0..255 without leading zeros
 * (glibc's inet_pton refuses "01" and anything but four parts). */
static bool v4_parse(const char *s, size_t len, uint8_t a[4])
{
	char tmp[INET_ADDRSTRLEN + 1];

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return inet_pton(AF_INET, tmp, a) == 1;
}

bool policy_addr_canon(const char *in, char *out)
{
	size_t len = strlen(in);
	uint8_t a[16];

	if (len >= 2 && in[0] == '[' && in[len - 1] == ']') {
		if (!v6_parse(in + 1, len - 2, a))
			return false;
		v6_text(a, out);
		return true;
	}
	if (strchr(in, ':')) {
		if (!v6_parse(in, len, a))
			return false;
		v6_text(a, out);
		return true;
	}
	if (!v4_parse(in, len, a))
		return false;
	snprintf(out, POLICY_HOST_MAX, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	return true;
}

/* Labels of letters, digits, '-' and '_', 1..63 bytes, 253 in all; name
 * is lower-case already. */
static enum policy_host_status check_name(const char *name, size_t len)
{
	size_t label = 0;

	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || host_is_digit(c) || c == '-' || c == '_' || c == '.'))
			return POLICY_HOST_CHAR;
	}
	if (len == 0)
		return POLICY_HOST_LABEL;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || name[i] == '.') {
			if (label == 0)
				return POLICY_HOST_LABEL;
			if (label > LABEL_MAX_LEN)
				return POLICY_HOST_LABEL_LONG;
			label = 0;
		} else {
			label++;
		}
	}
	if (len > NAME_MAX_LEN)
		return POLICY_HOST_TOO_LONG;
	return POLICY_HOST_NAME;
}

static bool only_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!host_is_digit(*s))
			return false;
	return true;
}

enum policy_host_status policy_host_normalize(const char *in, char *out)
{
	char buf[POLICY_HOST_MAX + 2];
	size_t len = strlen(in);
	const char *colon;
	enum policy_host_status st;
	uint8_t a[16];

	out[0] = '\0';
	if (len == 0)
		return POLICY_HOST_EMPTY;
	if (strstr(in, "://") || strchr(in, '/') || strchr(in, '@'))
		return POLICY_HOST_URL;

	if (in[0] == '[') {
		const char *end = strchr(in, ']');
		if (end && end[1] == ':' && only_digits(end + 2))
			return POLICY_HOST_PORT;
		if (!end || end[1] != '\0' || !v6_parse(in + 1, (size_t)(end - in - 1), a))
			return POLICY_HOST_BAD_IPV6;
		v6_text(a, out);
		return POLICY_HOST_IP;
	}
	colon = strchr(in, ':');
	if (colon) {
		if (v6_parse(in, len, a)) {
			v6_text(a, out);
			return POLICY_HOST_IP;
		}
		if (!strchr(colon + 1, ':') && only_digits(colon + 1))
			return POLICY_HOST_PORT;
		return POLICY_HOST_BAD_IPV6;
	}

	if (len > NAME_MAX_LEN + 3)
		return POLICY_HOST_TOO_LONG;
	for (size_t i = 0; i <= len; i++)
		buf[i] = lower(in[i]);
	/* One trailing dot is the root: "example.com." is "example.com". */
	if (len > 1 && buf[len - 1] == '.')
		buf[--len] = '\0';

	if (memchr(buf, '*', len)) {
		const char *rest = buf + 2;
		size_t rest_len = len - 2;

		if (len == 1)
			return POLICY_HOST_STAR_ALL;
		if (buf[0] != '*' || buf[1] != '.' || memchr(rest, '*', rest_len))
			return POLICY_HOST_STAR_POS;
		st = check_name(rest, rest_len);
		if (st != POLICY_HOST_NAME)
			return st;
		if (host_last_label_numeric(rest, rest_len))
			return POLICY_HOST_STAR_IP;
		if (!memchr(rest, '.', rest_len))
			return POLICY_HOST_STAR_TLD;
		memcpy(out, buf, len + 1);
		return POLICY_HOST_WILDCARD;
	}

	st = check_name(buf, len);
	if (st != POLICY_HOST_NAME)
		return st;
	if (host_last_label_numeric(buf, len)) {
		if (!v4_parse(buf, len, a))
			return POLICY_HOST_NUMERIC;
		snprintf(out, POLICY_HOST_MAX, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		return POLICY_HOST_IP;
	}
	memcpy(out, buf, len + 1);
	return POLICY_HOST_NAME;
}

bool policy_host_covers(const char *a, const char *b)
{
	size_t la, lb;

	if (strcmp(a, b) == 0)
		return true;
	if (a[0] != '*' || a[1] != '.')
		return false;
	/* a + 1 is ".example.com": b must end with it after at least one
	 * more byte ("x.example.com" or "*.x.example.com"). */
	la = strlen(a + 1);
	lb = strlen(b);
	return lb > la && strcmp(b + lb - la, a + 1) == 0;
}

/* ---- address ranges ---- */

static bool parse_num(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	char tmp[16];

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return policy_parse_uint(tmp, max, out) == POLICY_NUM_OK;
}

enum policy_cidr_status policy_cidr_parse(const char *s, struct policy_cidr *out)
{
	static const uint8_t zero[12];
	const char *addr = s, *rest;
	size_t addr_len;
	bool bracket = false, v6;
	unsigned max;
	uint64_t v;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end)
			return POLICY_CIDR_SYNTAX;
		addr = s + 1;
		addr_len = (size_t)(end - addr);
		rest = end + 1;
		bracket = true;
		v6 = true;
	} else if (strchr(s, ':') && strchr(s, ':') != strrchr(s, ':')) {
		/* An IPv6 address has two colons or more, and without
		 * brackets every ':' belongs to it: "fd00::1:443" is an
		 * address, so a port needs "[fd00::1]:443". */
		rest = s + strcspn(s, "/");
		addr_len = (size_t)(rest - s);
		v6 = true;
	} else {
		rest = s + strcspn(s, "/:");
		addr_len = (size_t)(rest - s);
		v6 = false;
	}

	memset(out->addr, 0, sizeof(out->addr));
	if (v6) {
		out->family = AF_INET6;
		max = 128;
		if (!v6_parse(addr, addr_len, out->addr))
			return POLICY_CIDR_SYNTAX;
	} else {
		out->family = AF_INET;
		max = 32;
		if (!v4_parse(addr, addr_len, out->addr))
			return POLICY_CIDR_SYNTAX;
	}
	out->prefix = max;
	out->port = 0;

	if (rest[0] == '/') {
		size_t n = strcspn(rest + 1, ":");
		if (!parse_num(rest + 1, n, max, &v))
			return POLICY_CIDR_PREFIX;
		out->prefix = (unsigned)v;
		rest += 1 + n;
	}
	if (rest[0] == ':') {
		if (v6 && !bracket)
			return POLICY_CIDR_SYNTAX;
		if (!parse_num(rest + 1, strlen(rest + 1), 65535, &v) || v == 0)
			return POLICY_CIDR_PORT;
		out->port = (uint16_t)v;
		rest += strlen(rest);
	}
	if (rest[0] != '\0')
		return POLICY_CIDR_SYNTAX;

	/* Addresses are converted to IPv4 before they are checked, so such a
	 * range would never match what it seems to name. */
	if (v6 && out->prefix >= 96 && memcmp(out->addr, zero, 10) == 0 &&
	    ((out->addr[10] == 0xff && out->addr[11] == 0xff) ||
	     (out->addr[10] == 0 && out->addr[11] == 0 &&
	      !(out->prefix == 128 && out->addr[12] == 0 && out->addr[13] == 0 && out->addr[14] == 0 &&
		out->addr[15] <= 1))))
		return POLICY_CIDR_MAPPED;

	bool host_bits = false;
	for (unsigned bit = out->prefix; bit < max; bit++) {
		uint8_t mask = (uint8_t)(0x80u >> (bit % 8));
		if (out->addr[bit / 8] & mask) {
			host_bits = true;
			out->addr[bit / 8] &= (uint8_t)~mask;
		}
	}
	return host_bits ? POLICY_CIDR_HOST_BITS : POLICY_CIDR_OK;
}

void policy_cidr_format(const struct policy_cidr *c, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";
	char prefix[8] = "", port[8] = "";
	bool v6 = c->family == AF_INET6;

	if (!inet_ntop(v6 ? AF_INET6 : AF_INET, c->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (c->prefix != (v6 ? 128u : 32u))
		snprintf(prefix, sizeof(prefix), "/%u", c->prefix);
	if (c->port)
		snprintf(port, sizeof(port), ":%u", c->port);
	if (v6 && c->port)
		snprintf(buf, size, "[%s]%s%s", a, prefix, port);
	else
		snprintf(buf, size, "%s%s%s", a, prefix, port);
}

/* ---- globs, methods, ids ---- */

static bool unreserved(unsigned c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.' || c == '_' || c == '~';
}

enum policy_glob_status policy_glob_normalize(const char *in, bool is_path, char **out)
{
	static const char hex[] = "0123456789ABCDEF";
	_cleanup_free_ char *buf = NULL;
	size_t n = 0;

	*out = NULL;
	if (is_path && in[0] != '/')
		return POLICY_GLOB_SLASH;
	buf = malloc(strlen(in) + 1);
	if (!buf)
		return POLICY_GLOB_NOMEM;
	for (size_t i = 0; in[i]; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c <= 0x20 || c >= 0x7f || c == '#' || (is_path && c == '?'))
			return POLICY_GLOB_CHAR;
		if (c != '%') {
			buf[n++] = (char)c;
			continue;
		}
		if (!host_is_hex(in[i + 1]) || !host_is_hex(in[i + 2]))
			return POLICY_GLOB_PERCENT;
		unsigned v = host_hex_value(in[i + 1]) * 16 + host_hex_value(in[i + 2]);
		if (unreserved(v)) {
			buf[n++] = (char)v;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[v >> 4];
			buf[n++] = hex[v & 15];
		}
		i += 2;
	}
	buf[n] = '\0';
	*out = steal_pointer(&buf);
	return POLICY_GLOB_OK;
}

bool policy_method_valid(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > POLICY_METHOD_MAX || strcmp(s, "*") == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || host_is_digit(c) ||
		      strchr("!#$%&'*+-.^_`|~", c)))
			return false;
	}
	return true;
}

bool policy_id_valid(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > POLICY_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}
