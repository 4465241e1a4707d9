/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_URLUNIT_H
#define AIRLOCK_UTIL_URLUNIT_H

/*
 * The units a request path or query is compared in, by the proxy's
 * matcher (src/net/netpolicy.c) and by the automata that reason about it
 * (src/policy/glob.c): one definition, so the two cannot drift apart.
 *
 * A unit is a byte (0..255), or URL_UNIT_ENC | byte for an encoded byte
 * that stays encoded. RFC 3986 makes %XX of an unreserved character
 * equivalent to the character, so it is decoded; any other %XX (notably
 * %2F) stays one opaque unit, equal only to the same %XX in any hex case
 * and never to the character it encodes: "/a%2Fb" is one segment to us
 * and to most servers. A '%' not followed by two hex digits is a plain
 * '%'.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/hex.h"

#define URL_UNIT_ENC 0x100u

static inline bool url_unreserved(unsigned c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.' || c == '_' || c == '~';
}

/* The unit at s[*i], advancing *i past it. */
static inline unsigned url_next_unit(const char *s, size_t len, size_t *i)
{
	unsigned char c = (unsigned char)s[*i];

	if (c == '%' && *i + 2 < len) {
		int hi = hex_digit_value((unsigned char)s[*i + 1]), lo = hex_digit_value((unsigned char)s[*i + 2]);
		if (hi >= 0 && lo >= 0) {
			unsigned v = (unsigned)(hi * 16 + lo);
			*i += 3;
			return url_unreserved(v) ? v : (URL_UNIT_ENC | v);
		}
	}
	(*i)++;
	return c;
}

#endif
