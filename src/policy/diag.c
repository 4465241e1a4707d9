/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Diagnostics for policy files: every message has the shape
 * "FILE:LINE:COL: FIELD: what is wrong; what would be valid".
 * Values echoed back are quoted and escaped, because they come from the
 * file and end up on a terminal or in a log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/internal.h"

/* Longest part of a value echoed in a message, in bytes. */
#define QUOTE_MAX 64

int policy_fail(struct error *err, const char *file, unsigned line, unsigned col, const char *field,
		const char *fmt, ...)
{
	char what[ERROR_MSG_MAX];
	char name[256];
	size_t i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);

	if (!file)
		file = "<policy>";
	for (i = 0; file[i] && i < sizeof(name) - 1; i++) {
		unsigned char c = (unsigned char)file[i];
		name[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	name[i] = '\0';

	return error_set(err, EINVAL, "%s:%u:%u: %s: %s", name, line, col, field, what);
}

static void put(char *buf, size_t size, size_t *pos, const char *s)
{
	size_t n = strlen(s);

	if (*pos >= size)
		return;
	if (n > size - 1 - *pos)
		n = size - 1 - *pos;
	memcpy(buf + *pos, s, n);
	*pos += n;
	buf[*pos] = '\0';
}

void policy_quote(const char *s, size_t len, char *buf, size_t size)
{
	size_t pos = 0;
	size_t i;

	if (size == 0)
		return;
	buf[0] = '\0';
	put(buf, size, &pos, "\"");
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[8];

		if (i >= QUOTE_MAX && (c & 0xc0) != 0x80) {
			put(buf, size, &pos, "...");
			break;
		}
		if (c == '"' || c == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)c;
			tmp[2] = '\0';
		} else if (c == '\n') {
			strcpy(tmp, "\\n");
		} else if (c == '\t') {
			strcpy(tmp, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		} else if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 &&
			   (unsigned char)s[i + 1] <= 0x9f) {
			/* C1 controls (U+0080..U+009F) include the 8-bit CSI a
			 * terminal would act on. */
			snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned char)s[i + 1]);
			i++;
		} else {
			tmp[0] = (char)c;
			tmp[1] = '\0';
		}
		/* Keep room for the closing quote and an ellipsis. */
		if (pos + strlen(tmp) + 5 > size) {
			put(buf, size, &pos, "...");
			break;
		}
		put(buf, size, &pos, tmp);
	}
	put(buf, size, &pos, "\"");
}

static bool simple_key(const char *key, size_t len)
{
	if (len == 0 || len > 64)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = key[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

void policy_field_append_key(char *buf, size_t size, const char *key, size_t len)
{
	size_t pos = strnlen(buf, size);
	char q[QUOTE_MAX + 16];

	if (pos > 0)
		put(buf, size, &pos, ".");
	if (simple_key(key, len)) {
		char tmp[65];
		memcpy(tmp, key, len);
		tmp[len] = '\0';
		put(buf, size, &pos, tmp);
	} else {
		policy_quote(key, len, q, sizeof(q));
		put(buf, size, &pos, q);
	}
}
