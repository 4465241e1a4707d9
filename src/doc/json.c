/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strict JSON reader (doc/json.h): every JSON text airlock reads goes
 * through it, the supervisor's and the proxy's events, log lines anyone
 * may have edited, JSON-RPC messages of the MCP gateways, pins files and
 * other runtimes' settings (policy/import/json.c builds its tree from
 * these tokens). One reader, so that no two parts of airlock can disagree
 * about what one text says.
 *
 * What it reads may come from the agent: a host name, a path or a reason
 * may hold any byte the agent chose. Everything here is bounded by the
 * caller's buffers and never reads past the length it was given (the
 * texts need not be NUL-terminated).
 */
#include "doc/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "util/cleanup.h"
#include "util/hex.h"
#include "util/utf8.h"

/* ---- the reader ---- */

/* The parse state, kept apart from struct doc_json so that the hot loops
 * work on locals: with -fno-strict-aliasing every store to a token could
 * otherwise alias the counters and force them to be read again. */
struct reader {
	const char *s;
	size_t n;
	size_t i;
	struct doc_json_tok *tok;
	size_t ntok;
	size_t cap;
	unsigned max_depth;
	const char *err;
	size_t err_at;
	size_t err_first_at;
	struct doc_json *j; /* for comparing keys, and its tokens when they grow */
};

static int fail_at(struct reader *r, size_t at, const char *what)
{
	r->err = what;
	r->err_at = at;
	return -EINVAL;
}

static int fail(struct reader *r, const char *what)
{
	return fail_at(r, r->i, what);
}

/* JSON whitespace is all at or below ' '; the common case, none, costs one
 * comparison. */
static inline void skip_ws(struct reader *r)
{
	while (r->i < r->n && (unsigned char)r->s[r->i] <= ' ' &&
	       (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' || r->s[r->i] == '\r'))
		r->i++;
}

/* The tokens doc_json_parse_grow gives the reader: twice as many, up to
 * its bound. Indices, never pointers, are kept across a new token. */
static int grow(struct reader *r, size_t start)
{
	struct doc_json *j = r->j;
	if (!j->grow || r->cap >= j->max_tok)
		return fail_at(r, start, "too many values");
	size_t cap = r->cap ? r->cap * 2 : 64;
	if (cap > j->max_tok)
		cap = j->max_tok;
	struct doc_json_tok *t = realloc(r->tok, cap * sizeof(*t));
	if (!t)
		return fail_at(r, start, DOC_JSON_ERR_NOMEM);
	r->tok = j->tok = t;
	r->cap = j->cap = cap;
	return 0;
}

static inline int new_tok(struct reader *r, enum doc_json_type type, size_t start)
{
	if (r->ntok >= r->cap && grow(r, start) < 0)
		return -EINVAL;
	r->tok[r->ntok] = (struct doc_json_tok){ .type = (uint8_t)type, .start = (uint32_t)start };
	return (int)r->ntok++;
}


/* Four hex digits at s; -1 when they are not. */
static long hex4(const char *s)
{
	long v = 0;
	for (int k = 0; k < 4; k++) {
		int h = hex_digit_value((unsigned char)s[k]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* The bytes among the 8 at p that end a run of plain ASCII: a quote, a
 * backslash, a control character or a byte >= 0x80, as the high bit of
 * each. The bit tricks ("some byte is zero / below n") can also flag a
 * byte after a true hit, never one before it, so the lowest bit set is
 * exact. Strings are most of a record's bytes, and their lengths are too
 * irregular for a branch per byte to be predicted. */
static inline uint64_t special8(const unsigned char *p)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t w;
	memcpy(&w, p, 8);
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
	return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & high;
}

/* A string at r->i (its opening quote). Inlined into its callers: more
 * than half the tokens of a record are strings. */
static inline __attribute__((always_inline)) int parse_string(struct reader *r)
{
	const unsigned char *u = (const unsigned char *)r->s;
	const size_t n = r->n, start = r->i + 1;
	size_t i = start;
	bool escaped = false;
	for (;;) {
		/* The common case, a run of printable ASCII. */
#if defined(__SSE2__)
		/* 16 bytes at a time: as signed bytes, those below 0x20 and
		 * those >= 0x80 are exactly the ones less than 0x20. */
		while (n - i >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(u + i));
			__m128i sp = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
							       _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
						  _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
			unsigned m = (unsigned)_mm_movemask_epi8(sp);
			if (m) {
				i += (size_t)__builtin_ctz(m);
				goto special;
			}
			i += 16;
		}
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		while (n - i >= 8) {
			uint64_t m = special8(u + i);
			if (m) {
				i += (size_t)__builtin_ctzll(m) / 8;
				break;
			}
			i += 8;
		}
#endif
		while (i < n && u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\')
			i++;
#if defined(__SSE2__)
special:
#endif
		if (i >= n)
			return fail_at(r, i, "unterminated string");
		unsigned char c = u[i];
		if (c == '"')
			break;
		if (c < 0x20)
			return fail_at(r, i, DOC_JSON_ERR_CONTROL);
		if (c >= 0x80) {
			size_t l = utf8_decode(u + i, n - i, NULL);
			if (!l)
				return fail_at(r, i, "invalid UTF-8 in a string");
			i += l;
			continue;
		}
		/* A backslash. */
		escaped = true;
		if (i + 1 >= n)
			return fail_at(r, i, "unterminated string");
		switch (u[i + 1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			i += 2;
			continue;
		case 'u':
			break;
		default:
			return fail_at(r, i + 1, DOC_JSON_ERR_ESCAPE);
		}
		if (n - i < 6)
			return fail_at(r, i, "\\u needs four hex digits");
		long cp = hex4(r->s + i + 2);
		if (cp < 0)
			return fail_at(r, i, "\\u needs four hex digits");
		/* NUL would cut the C strings the values become. */
		if (cp == 0)
			return fail_at(r, i, "\\u0000 in a string is refused");
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return fail_at(r, i, "lone UTF-16 surrogate");
		if (cp >= 0xd800 && cp <= 0xdbff) {
			long lo = n - i >= 12 && u[i + 6] == '\\' && u[i + 7] == 'u' ? hex4(r->s + i + 8) : -1;
			if (lo < 0xdc00 || lo > 0xdfff)
				return fail_at(r, i, "lone UTF-16 surrogate");
			i += 12;
		} else {
			i += 6;
		}
	}
	int t = new_tok(r, DOC_JSON_STRING, start);
	if (t < 0)
		return t;
	struct doc_json_tok *tk = &r->tok[t];
	tk->len = (uint32_t)(i - start);
	tk->escaped = escaped;
	tk->end = (uint32_t)t + 1;
	r->i = i + 1; /* past the closing quote */
	return t;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int parse_number(struct reader *r)
{
	const unsigned char *u = (const unsigned char *)r->s;
	const size_t n = r->n, start = r->i;
	size_t i = start;
	bool integer = true;
	if (u[i] == '-')
		i++;
	if (i >= n || !is_digit(u[i]))
		return fail_at(r, i, "invalid number");
	if (u[i] == '0') {
		i++;
		if (i < n && is_digit(u[i]))
			return fail_at(r, i, "leading zero in a number");
	} else {
		while (i < n && is_digit(u[i]))
			i++;
	}
	if (i < n && u[i] == '.') {
		integer = false;
		i++;
		if (i >= n || !is_digit(u[i]))
			return fail_at(r, i, "a digit must follow the decimal point");
		while (i < n && is_digit(u[i]))
			i++;
	}
	if (i < n && (u[i] == 'e' || u[i] == 'E')) {
		integer = false;
		i++;
		if (i < n && (u[i] == '+' || u[i] == '-'))
			i++;
		if (i >= n || !is_digit(u[i]))
			return fail_at(r, i, "a digit must follow the exponent");
		while (i < n && is_digit(u[i]))
			i++;
	}
	int t = new_tok(r, DOC_JSON_NUMBER, start);
	if (t < 0)
		return t;
	struct doc_json_tok *tk = &r->tok[t];
	tk->integer = integer;
	tk->len = (uint32_t)(i - start);
	tk->end = (uint32_t)t + 1;
	r->i = i;
	return t;
}

static int parse_literal(struct reader *r, const char *word, enum doc_json_type type)
{
	size_t l = strlen(word);
	if (r->n - r->i < l || memcmp(r->s + r->i, word, l) != 0)
		return fail(r, "expected a value (object, array, string, number, true, false or null)");
	int t = new_tok(r, type, r->i);
	if (t < 0)
		return t;
	r->i += l;
	r->tok[t].len = (uint32_t)l;
	r->tok[t].end = (uint32_t)t + 1;
	return t;
}

/* The next code point of a validated string's raw text at *i (< end). */
static uint32_t next_cp(const char *s, size_t *i)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char c = u[*i];
	if (c == '\\') {
		char e = s[*i + 1];
		*i += 2;
		switch (e) {
		case 'b':
			return '\b';
		case 'f':
			return '\f';
		case 'n':
			return '\n';
		case 'r':
			return '\r';
		case 't':
			return '\t';
		case 'u': {
			uint32_t cp = (uint32_t)hex4(s + *i);
			*i += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				uint32_t lo = (uint32_t)hex4(s + *i + 2);
				*i += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			return cp;
		}
		default:
			return (unsigned char)e; /* " \ / */
		}
	}
	if (c < 0x80) {
		(*i)++;
		return c;
	}
	size_t l = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
	uint32_t cp = c & (l == 2 ? 0x1f : l == 3 ? 0x0f : 0x07);
	for (size_t k = 1; k < l; k++)
		cp = cp << 6 | (u[*i + k] & 0x3f);
	*i += l;
	return cp;
}

static bool str_eq(const struct doc_json *j, int a, int b)
{
	const struct doc_json_tok *ta = &j->tok[a], *tb = &j->tok[b];
	if (!ta->escaped && !tb->escaped)
		return ta->len == tb->len && memcmp(j->text + ta->start, j->text + tb->start, ta->len) == 0;
	size_t ia = ta->start, ea = ta->start + ta->len;
	size_t ib = tb->start, eb = tb->start + tb->len;
	while (ia < ea && ib < eb)
		if (next_cp(j->text, &ia) != next_cp(j->text, &ib))
			return false;
	return ia == ea && ib == eb;
}

/* A key's first and last 8 bytes and its length, mixed: equal keys have
 * equal fingerprints, different ones seldom do. A short key is read as
 * the last bytes of a word that ends with it (the bytes before it are
 * shifted out) when the text reaches back far enough. */
static inline uint64_t fingerprint(const char *text, size_t start, size_t len)
{
	const char *p = text + start;
	uint64_t a = 0, b = 0;
	if (len >= 8) {
		memcpy(&a, p, 8);
		memcpy(&b, p + len - 8, 8);
	} else if (len && start + len >= 8 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
		memcpy(&a, p + len - 8, 8);
		a >>= (8 - len) * 8;
	} else {
		/* the same word as the shifted load above: first byte lowest */
		for (size_t k = 0; k < len; k++)
			a |= (uint64_t)(unsigned char)p[k] << (8 * k);
	}
	return (a * 0x9e3779b97f4a7c15ULL) ^ (b + len) * 0xc2b2ae3d27d4eb4fULL;
}

/* Two keys' decoded order (code point by code point), then their order
 * in the text. */
static int key_cmp(const void *a, const void *b, void *arg)
{
	const struct doc_json *j = arg;
	int x = *(const int *)a, y = *(const int *)b;
	const struct doc_json_tok *tx = &j->tok[x], *ty = &j->tok[y];
	int c = 0;
	if (!tx->escaped && !ty->escaped) {
		size_t l = tx->len < ty->len ? tx->len : ty->len;
		c = memcmp(j->text + tx->start, j->text + ty->start, l);
		if (!c && tx->len != ty->len)
			c = tx->len < ty->len ? -1 : 1;
	} else {
		size_t ix = tx->start, ex = tx->start + tx->len, iy = ty->start, ey = ty->start + ty->len;
		while (!c && ix < ex && iy < ey) {
			uint32_t cx = next_cp(j->text, &ix), cy = next_cp(j->text, &iy);
			c = cx < cy ? -1 : cx > cy;
		}
		if (!c)
			c = (ix < ex) - (iy < ey);
	}
	return c ? c : (x > y) - (x < y);
}

/* The duplicate keys of object t, once it is read, by sorting its keys:
 * O(n log n) where comparing each key with every earlier one is O(n^2)
 * (thousands of keys that share a long prefix would cost seconds of a
 * gateway's time for one message). With tokens of the reader's own only
 * (doc_json_parse_grow): the fixed arrays of the others bound their keys.
 * The repeat said is the first in the text. */
static int keys_sorted_check(struct reader *r, int t)
{
	size_t n = 0;
	for (int m = t + 1; m < (int)r->tok[t].end; m = (int)r->tok[m + 1].end)
		n++;
	int *k = malloc(n * sizeof(*k));
	if (!k)
		return fail(r, DOC_JSON_ERR_NOMEM);
	n = 0;
	for (int m = t + 1; m < (int)r->tok[t].end; m = (int)r->tok[m + 1].end)
		k[n++] = m;
	qsort_r(k, n, sizeof(*k), key_cmp, r->j);
	int dup = -1, first = -1;
	for (size_t a = 0; a + 1 < n; a++) {
		/* In a run of equal keys, the first in the text comes first
		 * (key_cmp's tie-break). */
		int x = k[a], y = k[a + 1];
		if (!str_eq(r->j, x, y))
			continue;
		if (dup < 0 || y < dup) {
			dup = y;
			first = x;
		}
		while (a + 1 < n && str_eq(r->j, x, k[a + 1]))
			a++;
	}
	free(k);
	if (dup < 0)
		return 0;
	r->err_first_at = r->tok[first].start - 1;
	return fail_at(r, r->tok[dup].start - 1, DOC_JSON_ERR_DUPLICATE);
}

static int parse_value(struct reader *r, unsigned depth);

static int parse_container(struct reader *r, unsigned depth, bool object)
{
	if (depth >= r->max_depth)
		return fail(r, DOC_JSON_ERR_DEPTH);
	int t = new_tok(r, object ? DOC_JSON_OBJECT : DOC_JSON_ARRAY, r->i);
	if (t < 0)
		return t;
	char close = object ? '}' : ']';
	/* Keys are compared with the object's earlier keys by a fingerprint
	 * first, and in full only when those match. Past KEYS_FAST keys, or
	 * once a key has escapes (whose raw bytes say nothing of what they
	 * decode to), every key is compared in full. */
	enum { KEYS_FAST = 32 };
	uint64_t fp[KEYS_FAST], bloom[2] = { 0, 0 };
	size_t nkeys = 0, items = 0;
	bool slow = false, sorted = false;
	r->i++;
	skip_ws(r);
	if (r->i < r->n && r->s[r->i] == close) {
		r->i++;
		r->tok[t].len = 2;
		r->tok[t].end = (uint32_t)r->ntok;
		return t;
	}
	for (;;) {
		skip_ws(r);
		/* After a comma: the common mistakes of hand-written files,
		 * said as such. */
		if (r->i < r->n && r->s[r->i] == close)
			return fail(r, object ? "trailing comma before }" : "trailing comma before ]");
		if (object) {
			if (r->i >= r->n || r->s[r->i] != '"')
				return fail(r, "expected a \"key\"");
			size_t at = r->i;
			int k = parse_string(r);
			if (k < 0)
				return k;
			/* Two readers that keep different ones of a duplicated key
			 * see different records; refuse them. */
			const struct doc_json_tok *kt = &r->tok[k];
			if (kt->escaped || nkeys == KEYS_FAST)
				slow = true;
			if (slow && r->j->grow) {
				sorted = true; /* keys_sorted_check, at the end */
			} else if (slow) {
				for (int m = t + 1; m < k; m = (int)r->tok[m + 1].end)
					if (str_eq(r->j, m, k)) {
						r->err_first_at = r->tok[m].start - 1;
						return fail_at(r, at, DOC_JSON_ERR_DUPLICATE);
					}
			} else {
				uint64_t f = fingerprint(r->s, kt->start, kt->len);
				uint64_t bit = 1ULL << (f >> 58);
				unsigned half = (unsigned)(f >> 57) & 1;
				if (bloom[half] & bit)
					for (size_t m = 0; m < nkeys; m++)
						if (fp[m] == f) {
							/* rare: find the key of that fingerprint */
							for (int o = t + 1; o < k; o = (int)r->tok[o + 1].end)
								if (str_eq(r->j, o, k)) {
									r->err_first_at = r->tok[o].start - 1;
									return fail_at(r, at, DOC_JSON_ERR_DUPLICATE);
								}
							break;
						}
				bloom[half] |= bit;
				fp[nkeys++] = f;
			}
			skip_ws(r);
			if (r->i >= r->n || r->s[r->i] != ':')
				return fail(r, "expected ':' after the key");
			r->i++;
			skip_ws(r);
		}
		/* A bound on a container's entries, where the caller set one:
		 * what is refused is not read on. */
		if (r->j->max_items && ++items > r->j->max_items)
			return fail(r, object ? DOC_JSON_ERR_ENTRIES_OBJECT : DOC_JSON_ERR_ENTRIES_ARRAY);
		/* Strings and numbers, the common values, without the detour. */
		int v;
		if (r->i < r->n && r->s[r->i] == '"')
			v = parse_string(r);
		else if (r->i < r->n && (is_digit((unsigned char)r->s[r->i]) || r->s[r->i] == '-'))
			v = parse_number(r);
		else
			v = parse_value(r, depth + 1);
		if (v < 0)
			return v;
		skip_ws(r);
		if (r->i >= r->n)
			return fail(r, object ? "unexpected end of input; expected ',' or '}'" :
						"unexpected end of input; expected ',' or ']'");
		if (r->s[r->i] == ',') {
			r->i++;
			continue;
		}
		if (r->s[r->i] == close) {
			r->i++;
			break;
		}
		return fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
	r->tok[t].len = (uint32_t)(r->i - r->tok[t].start);
	r->tok[t].end = (uint32_t)r->ntok;
	if (sorted && keys_sorted_check(r, t) < 0)
		return -EINVAL;
	return t;
}

static int parse_value(struct reader *r, unsigned depth)
{
	skip_ws(r);
	if (r->i >= r->n)
		return fail(r, "unexpected end of input; expected a value");
	switch (r->s[r->i]) {
	case '{':
		return parse_container(r, depth, true);
	case '[':
		return parse_container(r, depth, false);
	case '"':
		return parse_string(r);
	case 't':
		return parse_literal(r, "true", DOC_JSON_TRUE);
	case 'f':
		return parse_literal(r, "false", DOC_JSON_FALSE);
	case 'n':
		return parse_literal(r, "null", DOC_JSON_NULL);
	case '/':
	case '#':
		return fail(r, "comments are not JSON");
	case '\'':
		return fail(r, "single-quoted strings are not JSON");
	default:
		if (r->s[r->i] == '-' || is_digit((unsigned char)r->s[r->i]))
			return parse_number(r);
		return fail(r, "expected a value (object, array, string, number, true, false or null)");
	}
}

static int parse(struct doc_json *j, const char *text, size_t len, struct doc_json_tok *tok, size_t cap,
		 unsigned max_depth)
{
	j->text = text;
	j->len = len;
	j->tok = tok;
	j->cap = cap;
	j->max_depth = max_depth;
	struct reader r = { .s = text, .n = len, .tok = tok, .cap = cap, .max_depth = max_depth, .j = j };
	int t = len > INT32_MAX ? fail(&r, "text too long") : parse_value(&r, 0);
	if (t >= 0) {
		skip_ws(&r);
		if (r.i != r.n)
			t = fail(&r, "text after the end of the JSON value");
	}
	j->ntok = r.ntok;
	j->err = r.err;
	j->err_at = r.err_at;
	j->err_first_at = r.err_first_at;
	return t < 0 ? t : 0;
}

int doc_json_parse(struct doc_json *j, const char *text, size_t len, struct doc_json_tok *tok, size_t cap,
		   unsigned max_depth)
{
	*j = (struct doc_json){ 0 };
	return parse(j, text, len, tok, cap, max_depth);
}

int doc_json_parse_grow(struct doc_json *j, const char *text, size_t len, size_t max_tok, size_t max_items,
			unsigned max_depth)
{
	*j = (struct doc_json){ .grow = true, .max_tok = max_tok, .max_items = max_items };
	return parse(j, text, len, NULL, 0, max_depth);
}

void doc_json_free(struct doc_json *j)
{
	if (j->grow)
		free(j->tok);
	j->tok = NULL;
	j->ntok = j->cap = 0;
}

bool doc_json_key_is(const struct doc_json *j, int t, const char *key)
{
	const struct doc_json_tok *tk = &j->tok[t];
	if (tk->type != DOC_JSON_STRING)
		return false;
	if (!tk->escaped) {
		size_t l = strlen(key);
		return tk->len == l && memcmp(j->text + tk->start, key, l) == 0;
	}
	size_t i = tk->start, e = tk->start + tk->len;
	const unsigned char *k = (const unsigned char *)key;
	while (i < e && *k) {
		/* key is UTF-8; compare it byte-wise against the encoded code point */
		uint32_t cp = next_cp(j->text, &i);
		unsigned char enc[4];
		size_t l;
		if (cp < 0x80)
			enc[0] = (unsigned char)cp, l = 1;
		else if (cp < 0x800)
			enc[0] = (unsigned char)(0xc0 | cp >> 6), enc[1] = (unsigned char)(0x80 | (cp & 0x3f)), l = 2;
		else if (cp < 0x10000)
			enc[0] = (unsigned char)(0xe0 | cp >> 12), enc[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f)),
			enc[2] = (unsigned char)(0x80 | (cp & 0x3f)), l = 3;
		else
			enc[0] = (unsigned char)(0xf0 | cp >> 18), enc[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f)),
			enc[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f)), enc[3] = (unsigned char)(0x80 | (cp & 0x3f)),
			l = 4;
		for (size_t m = 0; m < l; m++, k++)
			if (*k != enc[m])
				return false;
	}
	return i == e && !*k;
}

int doc_json_member(const struct doc_json *j, int obj, const char *key)
{
	if (obj < 0 || (size_t)obj >= j->ntok || j->tok[obj].type != DOC_JSON_OBJECT)
		return -1;
	for (int m = obj + 1; m < (int)j->tok[obj].end; m = (int)j->tok[m + 1].end)
		if (doc_json_key_is(j, m, key))
			return m + 1;
	return -1;
}

int doc_json_str(const struct doc_json *j, int t, char *out, size_t cap)
{
	if (t < 0 || (size_t)t >= j->ntok || j->tok[t].type != DOC_JSON_STRING || cap == 0)
		return -EINVAL;
	const struct doc_json_tok *tk = &j->tok[t];
	if (!tk->escaped) {
		if (tk->len >= cap)
			return -E2BIG;
		memcpy(out, j->text + tk->start, tk->len);
		out[tk->len] = '\0';
		return (int)tk->len;
	}
	size_t o = 0, i = tk->start, e = tk->start + tk->len;
	while (i < e) {
		size_t before = i;
		uint32_t cp = next_cp(j->text, &i);
		if (j->text[before] != '\\') {
			/* raw UTF-8: copy the bytes as they are */
			size_t l = i - before;
			if (o + l >= cap)
				return -E2BIG;
			memcpy(out + o, j->text + before, l);
			o += l;
			continue;
		}
		size_t l = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
		if (o + l >= cap)
			return -E2BIG;
		unsigned char *u = (unsigned char *)out + o;
		if (l == 1) {
			u[0] = (unsigned char)cp;
		} else if (l == 2) {
			u[0] = (unsigned char)(0xc0 | cp >> 6);
			u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		} else if (l == 3) {
			u[0] = (unsigned char)(0xe0 | cp >> 12);
			u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		} else {
			u[0] = (unsigned char)(0xf0 | cp >> 18);
			u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
			u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		}
		o += l;
	}
	out[o] = '\0';
	return (int)o;
}

int doc_json_int(const struct doc_json *j, int t, int64_t *out)
{
	if (t < 0 || (size_t)t >= j->ntok || j->tok[t].type != DOC_JSON_NUMBER || !j->tok[t].integer)
		return -EINVAL;
	const char *p = j->text + j->tok[t].start, *e = p + j->tok[t].len;
	bool neg = *p == '-';
	if (neg)
		p++;
	/* Accumulate negatively: INT64_MIN has no positive counterpart. */
	int64_t v = 0;
	for (; p < e; p++) {
		int d = *p - '0';
		if (v < (INT64_MIN + d) / 10)
			return -ERANGE;
		v = v * 10 - d;
	}
	if (!neg) {
		if (v == INT64_MIN)
			return -ERANGE;
		v = -v;
	}
	*out = v;
	return 0;
}

bool doc_json_is_hex(const struct doc_json *j, int t, size_t n)
{
	static const bool lower_hex[256] = {
		['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
		['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	};
	if (t < 0 || (size_t)t >= j->ntok || j->tok[t].type != DOC_JSON_STRING || j->tok[t].len != n)
		return false;
	const unsigned char *p = (const unsigned char *)j->text + j->tok[t].start;
	bool ok = true;
	for (size_t k = 0; k < n; k++)
		ok &= lower_hex[p[k]];
	return ok;
}

