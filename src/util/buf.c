/* SPDX-License-Identifier: Apache-2.0 */
#include "util/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

int buf_reserve(struct buf *b, size_t extra)
{
	if (extra > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	char *d = realloc(b->data, cap);
	if (!d)
		return -ENOMEM;
	b->data = d;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	int r = buf_reserve(b, n);
	if (r < 0)
		return r;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	int r = buf_reserve(b, (size_t)n);
	if (r < 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int buf_json_string(struct buf *b, const char *s, size_t n)
{
	int r = buf_append(b, "\"", 1);
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n && r == 0;) {
		unsigned char c = u[i];
		/* A run of printable ASCII goes in as it is, in one append. */
		size_t run = 0;
		while (i + run < n && u[i + run] >= 0x20 && u[i + run] < 0x7f && u[i + run] != '"' &&
		       u[i + run] != '\\')
			run++;
		if (run) {
			r = buf_append(b, u + i, run);
			i += run;
			continue;
		}
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			r = buf_append(b, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			r = buf_printf(b, "\\u%04x", c);
			i++;
		} else {
			size_t l = utf8_decode(u + i, n - i, NULL);
			if (l == 0) {
				r = buf_puts(b, "\\ufffd");
				i++;
			} else {
				r = buf_append(b, u + i, l);
				i += l;
			}
		}
	}
	return r < 0 ? r : buf_append(b, "\"", 1);
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
	} else {
		memmove(b->data, b->data + n, b->len - n);
		b->len -= n;
	}
	if (b->data)
		b->data[b->len] = '\0';
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf_wipe(struct buf *b)
{
	if (b->data)
		explicit_bzero(b->data, b->cap);
	buf_free(b);
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
