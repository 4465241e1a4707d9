/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_AUDIT_JSON_H
#define AIRLOCK_AUDIT_JSON_H

/*
 * A strict JSON reader for the audit module's own inputs: event lines from
 * the supervisor and the proxy, and log lines that anyone may have edited.
 *
 * It does not allocate: the caller hands it an array of tokens, and a text
 * needing more tokens, or nested deeper than asked, is refused. Beyond
 * RFC 8259 it refuses what a log or an event never holds and what lets two
 * readers disagree about one text: duplicate keys (compared after
 * unescaping), lone surrogates, \u0000, invalid UTF-8 and overlong forms.
 * Strings are not copied; audit_json_str() decodes one when asked.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum audit_json_type {
	AUDIT_JSON_OBJECT = 1,
	AUDIT_JSON_ARRAY,
	AUDIT_JSON_STRING,
	AUDIT_JSON_NUMBER,
	AUDIT_JSON_TRUE,
	AUDIT_JSON_FALSE,
	AUDIT_JSON_NULL,
};

/* Tokens are stored in document order; an object's members follow it as
 * key, value, key, value. `end` lets a reader skip a whole subtree. */
struct audit_json_tok {
	uint8_t type;
	bool escaped;  /* string: holds at least one backslash escape */
	bool integer;  /* number: no fraction, no exponent */
	uint32_t start; /* first byte; a string's after its opening quote */
	uint32_t len;   /* bytes of its text; a string's between the quotes */
	uint32_t end;   /* index of the first token after this subtree */
};

struct audit_json {
	const char *text;
	size_t len;
	struct audit_json_tok *tok; /* the caller's array */
	size_t ntok;
	size_t cap;
	unsigned max_depth;
	const char *err;  /* static text, NULL when the parse succeeded */
	size_t err_at;    /* byte offset of the problem */
};

/* Parse text[0..len) as one JSON value with optional surrounding
 * whitespace. max_depth bounds nested containers (1: one object holding
 * only scalars). The texts are at most UINT32_MAX bytes. Returns 0, or
 * -EINVAL with j->err and j->err_at set. j->tok borrows tok. */
int audit_json_parse(struct audit_json *j, const char *text, size_t len, struct audit_json_tok *tok,
		     size_t cap, unsigned max_depth);

/* The token index of obj's member called key, or -1. */
int audit_json_member(const struct audit_json *j, int obj, const char *key);

/* Whether string token t equals the NUL-terminated key after unescaping. */
bool audit_json_key_is(const struct audit_json *j, int t, const char *key);

/* Decode string token t into out (cap bytes, NUL-terminated). Returns the
 * decoded length, -EINVAL when t is not a string, -E2BIG when it does not
 * fit. */
int audit_json_str(const struct audit_json *j, int t, char *out, size_t cap);

/* The value of integer token t (an integral number in int64 range), or
 * -EINVAL / -ERANGE. */
int audit_json_int(const struct audit_json *j, int t, int64_t *out);

/* Whether string token t is exactly n lower-case hex digits (no escapes). */
bool audit_json_is_hex(const struct audit_json *j, int t, size_t n);

#endif
