/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_HEX_H
#define AIRLOCK_UTIL_HEX_H

/*
 * Hex digits, one implementation for every reader and writer of them
 * (digests, keys, signatures, session ids, escapes). Writing is always
 * lower case. hex_decode reads lower case only: a digest or key accepted
 * in two spellings can be two things to two readers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of one hexadecimal digit (either case), or -1. */
static inline int hex_digit_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* in[n] as 2n lower-case digits and a NUL into out[2n + 1]. */
void hex_encode(const uint8_t *in, size_t n, char *out);

/* Exactly 2n lower-case digits (s[len], len == 2n) into out[n]; false,
 * with out partly written, for any other length or byte. */
bool hex_decode(const char *s, size_t len, uint8_t *out, size_t n);

#endif
