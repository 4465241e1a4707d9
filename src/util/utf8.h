/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_UTF8_H
#define AIRLOCK_UTIL_UTF8_H

/*
 * Strict UTF-8 (RFC 3629), one definition for every reader and writer:
 * overlong forms, surrogates and code points past U+10FFFF are invalid,
 * so that no two byte strings decode alike.
 */

#include <stddef.h>
#include <stdint.h>

/* The length of the valid sequence at s (n bytes available), or 0; when
 * cp is not NULL it receives the code point. */
static inline size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c, min;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		len = 1, min = 0, c = s[0];
	} else if ((s[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (cp)
		*cp = c;
	return len;
}

/* Append cp (at most U+10FFFF) as UTF-8 at out + *o, advancing *o by 1 to
 * 4 bytes; the caller has room. */
static inline void utf8_put(char *out, size_t *o, uint32_t cp)
{
	if (cp < 0x80) {
		out[(*o)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*o)++] = (char)(0xc0 | (cp >> 6));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*o)++] = (char)(0xe0 | (cp >> 12));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*o)++] = (char)(0xf0 | (cp >> 18));
		out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	}
}

#endif
