/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_HEX_H
#define AIRLOCK_UTIL_HEX_H

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

#endif
