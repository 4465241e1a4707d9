/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_BUF_H
#define AIRLOCK_UTIL_BUF_H

/* A growable byte buffer. Owns data; buf_free() releases it (and wipes
 * nothing: use buf_wipe() for secrets). A zeroed struct is an empty buf. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct buf {
	char *data; /* NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
};

int buf_reserve(struct buf *b, size_t extra) WUR;            /* -ENOMEM */
int buf_append(struct buf *b, const void *p, size_t n) WUR;  /* -ENOMEM */
int buf_puts(struct buf *b, const char *s) WUR;
int buf_printf(struct buf *b, const char *fmt, ...) WUR PRINTF_LIKE(2, 3);
/* Append s as a JSON string literal (with quotes), escaping as RFC 8259
 * requires; invalid UTF-8 bytes become \ufffd. */
int buf_json_string(struct buf *b, const char *s, size_t n) WUR;
void buf_consume(struct buf *b, size_t n); /* drop n bytes from the front */
void buf_reset(struct buf *b);             /* len = 0, keep memory */
void buf_wipe(struct buf *b);              /* explicit_bzero + free */
void buf_free(struct buf *b);

#endif
