/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_DOC_JSON_H
#define AIRLOCK_DOC_JSON_H

/*
 * The one strict JSON reader of airlock (doc/json.c): the audit writer's
 * and verifier's inputs, the proxy's and the supervisor's events, the MCP
 * gateways' JSON-RPC messages and pins files, other runtimes' settings
 * files (whose tree, with lines and columns, policy/import/json.c builds
 * from these tokens).
 *
 * doc_json_parse does not allocate: the caller hands it an array of
 * tokens, and a text needing more tokens, or nested deeper than asked, is
 * refused (the audit writer reads under a filter that allows no mmap);
 * doc_json_parse_grow allocates them. Beyond RFC 8259 it refuses what lets
 * two readers disagree about one text: duplicate keys (compared after
 * unescaping), lone surrogates, \u0000, invalid UTF-8 and overlong forms.
 * Strings are not copied; doc_json_str() decodes one when asked.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum doc_json_type {
	DOC_JSON_OBJECT = 1,
	DOC_JSON_ARRAY,
	DOC_JSON_STRING,
	DOC_JSON_NUMBER,
	DOC_JSON_TRUE,
	DOC_JSON_FALSE,
	DOC_JSON_NULL,
};

/* Tokens are stored in document order; an object's members follow it as
 * key, value, key, value. `end` lets a reader skip a whole subtree. */
struct doc_json_tok {
	uint8_t type;
	bool escaped;  /* string: holds at least one backslash escape */
	bool integer;  /* number: no fraction, no exponent */
	uint32_t start; /* first byte; a string's after its opening quote */
	uint32_t len;   /* bytes of its text; a string's between the quotes */
	uint32_t end;   /* index of the first token after this subtree */
};

struct doc_json {
	const char *text;
	size_t len;
	struct doc_json_tok *tok; /* the caller's array */
	size_t ntok;
	size_t cap;
	unsigned max_depth;
	const char *err;  /* static text, NULL when the parse succeeded */
	size_t err_at;    /* byte offset of the problem */
	size_t err_first_at; /* "duplicate key": the offset of the key's first quote */
	bool grow;        /* tok is the reader's own (doc_json_parse_grow) */
	size_t max_tok;   /* ... grown up to this many */
	size_t max_items; /* entries of one object or array, 0 for no bound ("too many entries") */
};

/* The errors a caller may say in words of its own (the importers'
 * FILE:LINE:COL refusals, policy/import/json.c), compared as text: a
 * duplicate key (err_first_at has the first), a container over
 * max_items, nesting past max_depth, an escape that is none (err_at on
 * its letter), a control byte in a string (err_at on it), and memory. */
#define DOC_JSON_ERR_DUPLICATE "duplicate key"
#define DOC_JSON_ERR_ENTRIES_OBJECT "too many entries in an object"
#define DOC_JSON_ERR_ENTRIES_ARRAY "too many entries in an array"
#define DOC_JSON_ERR_DEPTH "nested too deep"
#define DOC_JSON_ERR_ESCAPE "invalid escape"
#define DOC_JSON_ERR_CONTROL "control character in a string"
#define DOC_JSON_ERR_NOMEM "out of memory"

/* Parse text[0..len) as one JSON value with optional surrounding
 * whitespace. max_depth bounds nested containers (1: one object holding
 * only scalars). The texts are at most UINT32_MAX bytes. Returns 0, or
 * -EINVAL with j->err and j->err_at set. j->tok borrows tok. */
int doc_json_parse(struct doc_json *j, const char *text, size_t len, struct doc_json_tok *tok,
		     size_t cap, unsigned max_depth);

/* As doc_json_parse, with tokens of its own, grown as the text needs
 * them up to max_tok ("too many values" past it), and at most max_items
 * entries in one object or array (0: no bound). j->tok is the caller's
 * to release with doc_json_free, whatever the result. */
int doc_json_parse_grow(struct doc_json *j, const char *text, size_t len, size_t max_tok, size_t max_items,
			unsigned max_depth);

/* Release what doc_json_parse_grow allocated. */
void doc_json_free(struct doc_json *j);

/* The token index of obj's member called key, or -1. */
int doc_json_member(const struct doc_json *j, int obj, const char *key);

/* Whether string token t equals the NUL-terminated key after unescaping. */
bool doc_json_key_is(const struct doc_json *j, int t, const char *key);

/* Decode string token t into out (cap bytes, NUL-terminated). Returns the
 * decoded length, -EINVAL when t is not a string, -E2BIG when it does not
 * fit. */
int doc_json_str(const struct doc_json *j, int t, char *out, size_t cap);

/* The value of integer token t (an integral number in int64 range), or
 * -EINVAL / -ERANGE. */
int doc_json_int(const struct doc_json *j, int t, int64_t *out);

/* Whether string token t is exactly n lower-case hex digits (no escapes). */
bool doc_json_is_hex(const struct doc_json *j, int t, size_t n);

#endif
