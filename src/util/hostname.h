/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_HOSTNAME_H
#define AIRLOCK_UTIL_HOSTNAME_H

/* Character classes and host-name syntax shared by the policy parser (which
 * checks hosts written in a policy) and the proxy's address layer (which
 * normalises hosts an agent sends): both must read a host the same way. */

#include <stdbool.h>
#include <stddef.h>

#define HOSTNAME_MAX_LEN 253
#define HOSTNAME_LABEL_MAX_LEN 63

static inline bool host_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool host_is_hex(char c)
{
	return host_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The value of a hex digit (c must satisfy host_is_hex). */
static inline unsigned host_hex_value(char c)
{
	if (host_is_digit(c))
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	return (unsigned)(c - 'A' + 10);
}

/* Does the last label of s[0..len) read as a number to a URL parser or to
 * inet_aton (decimal digits, or 0x and hex digits: WHATWG URL's "ends in a
 * number")? Such a host is an IPv4 address or invalid, never a name. */
bool host_last_label_numeric(const char *s, size_t len);

#endif
