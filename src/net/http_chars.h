/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_HTTP_CHARS_H
#define AIRLOCK_NET_HTTP_CHARS_H

/*
 * The character classes and small text helpers of the HTTP files
 * (http.c, http_upstream.c, http_chunked.c): inline, for they run on
 * every byte of every head.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net/http.h"

static inline bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}


/* RFC 9110 §5.6.2 tchar: the characters of methods, field names and
 * transfer codings. */
static inline bool is_tchar(unsigned char c)
{
	if (is_alpha(c) || is_digit(c))
		return true;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
	case '-': case '.': case '^': case '_': case '`': case '|': case '~':
		return true;
	default:
		return false;
	}
}

/* field-vchar, SP and HTAB (RFC 9110 §5.5): obs-text is allowed, every
 * other control character is not. A NUL or a lone CR in a value is cut or
 * turned into a line end by some servers. */
static inline bool is_field_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static inline bool is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* RFC 3986 unreserved: the characters of an IPv6 zone id. */
static inline bool is_unreserved(unsigned char c)
{
	return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* ASCII only: field names must not compare differently under a locale
 * (tolower() in a Turkish locale folds 'I' elsewhere). */
static inline char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static inline bool ascii_case_equal(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (ascii_lower(a[i]) != ascii_lower(b[i]))
			return false;
	return true;
}

static inline bool name_is(const struct http_header *h, const char *name)
{
	return ascii_case_equal(h->name, h->name_len, name, strlen(name));
}

static inline bool text_is(const char *s, size_t n, const char *word)
{
	return ascii_case_equal(s, n, word, strlen(word));
}

static inline bool all_tchars(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return true;
}

/* Next element of a comma-separated list (RFC 9110 §5.6.1) in [*s, end),
 * OWS trimmed; empty elements are returned as such. *s becomes NULL after
 * the last element; false then. */
static inline bool list_next(const char **s, const char *end, const char **elem, size_t *elem_len)
{
	const char *p = *s;

	if (!p)
		return false;
	const char *comma = memchr(p, ',', (size_t)(end - p));
	const char *stop = comma ? comma : end;
	const char *a = p, *b = stop;
	while (a < b && is_ows((unsigned char)*a))
		a++;
	while (b > a && is_ows((unsigned char)b[-1]))
		b--;
	*elem = a;
	*elem_len = (size_t)(b - a);
	*s = comma ? comma + 1 : NULL;
	return true;
}

/* The port a scheme means when the authority names none. */
static inline uint16_t default_port(const char *scheme)
{
	return strcmp(scheme, "https") == 0 ? 443 : 80;
}

#endif
