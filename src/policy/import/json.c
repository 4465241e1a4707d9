/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A strict JSON reader for importing other runtimes' settings files. It
 * keeps the line and column of every value, which a general JSON library
 * does not, and refuses what RFC 8259 leaves to the reader (duplicate keys)
 * rather than picking the first or the last: two readers of one file must
 * not disagree about what it allows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/doc.h"
#include "util/cleanup.h"
#include "util/hex.h"
#include "util/utf8.h"

static void skip_ws(struct imp_reader *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];
		if (c == '\n') {
			p->line++;
			p->line_start = p->pos + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			return;
		}
		p->pos++;
	}
}

static int hex4(struct imp_reader *p, uint32_t *out)
{
	uint32_t v = 0;

	if (p->len - p->pos < 4)
		return imp_reader_fail(p, "\\u needs four hex digits");
	for (int i = 0; i < 4; i++) {
		int d = hex_digit_value((unsigned char)p->s[p->pos + (size_t)i]);
		if (d < 0)
			return imp_reader_fail(p, "\\u needs four hex digits");
		v = v << 4 | (uint32_t)d;
	}
	p->pos += 4;
	*out = v;
	return 0;
}

/* A string at p->pos (on the opening quote); *out is malloc'd. */
static int parse_string(struct imp_reader *p, char **out, size_t *out_len)
{
	size_t start = ++p->pos, end = start;

	/* First pass: find the end, so the output buffer is bounded by it. */
	while (end < p->len && p->s[end] != '"') {
		if (p->s[end] == '\\')
			end++;
		end++;
	}
	if (end >= p->len)
		return imp_reader_fail(p, "unterminated string");
	_cleanup_free_ char *buf = malloc(end - start + 1);
	size_t o = 0;
	if (!buf)
		return error_set(p->err, ENOMEM, "out of memory");
	while (p->s[p->pos] != '"') {
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c < 0x20)
			return imp_reader_fail(p, "control character 0x%02x in a string (write it as \\u%04x)", c, c);
		if (c != '\\') {
			if (imp_reader_utf8(p, end, buf, &o) < 0)
				return -EINVAL;
			continue;
		}
		p->pos++;
		char e = p->s[p->pos++];
		uint32_t cp;
		/* JSON alone escapes '/' too. */
		int byte = e == '/' ? '/' : imp_escape_byte(e);
		if (byte) {
			buf[o++] = (char)byte;
			continue;
		}
		switch (e) {
		case 'u':
			if (hex4(p, &cp) < 0)
				return -EINVAL;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				uint32_t lo;
				if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
					return imp_reader_fail(p, "lone UTF-16 surrogate \\u%04x", cp);
				p->pos += 2;
				if (hex4(p, &lo) < 0)
					return -EINVAL;
				if (lo < 0xdc00 || lo > 0xdfff)
					return imp_reader_fail(p, "lone UTF-16 surrogate \\u%04x", cp);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff)
				return imp_reader_fail(p, "lone UTF-16 surrogate \\u%04x", cp);
			/* A NUL would cut the C string short: what the importer
			 * checks would not be what the source runtime reads. */
			if (cp == 0)
				return imp_reader_fail(p, "\\u0000 in a string is refused");
			utf8_put(buf, &o, cp);
			break;
		default:
			return imp_reader_fail(p, "invalid escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
		}
	}
	p->pos++;
	buf[o] = '\0';
	*out = steal_pointer(&buf);
	*out_len = o;
	return 0;
}

static int parse_number(struct imp_reader *p, struct imp_node *n)
{
	size_t s = p->pos;

	if (p->pos < p->len && p->s[p->pos] == '-')
		p->pos++;
	if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		return imp_reader_fail(p, "invalid number");
	if (p->s[p->pos] == '0') {
		p->pos++;
		if (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			return imp_reader_fail(p, "leading zero in a number");
	} else {
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	}
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
			return imp_reader_fail(p, "a digit must follow the decimal point");
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
			return imp_reader_fail(p, "a digit must follow the exponent");
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	}
	if (p->pos - s > 64)
		return imp_reader_fail(p, "number longer than 64 characters");
	n->kind = IMP_NUM;
	n->str = strndup(p->s + s, p->pos - s);
	n->len = p->pos - s;
	return n->str ? 0 : error_set(p->err, ENOMEM, "out of memory");
}

static int parse_value(struct imp_reader *p, struct imp_node *n, unsigned depth);

static int cmp_member(const void *a, const void *b)
{
	const struct imp_node *x = *(const struct imp_node *const *)a, *y = *(const struct imp_node *const *)b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	/* Members of one key in the order given, so the first one is first. */
	return x < y ? -1 : x > y;
}

/* Duplicate keys are refused, once the object is read: sorting costs
 * O(n log n) comparisons, where comparing each new key with every earlier
 * one cost O(n^2) (4096 members whose keys share a long prefix took
 * seconds of the proxy's time for one MCP message). The repeat reported
 * is the first one in the input. */
static int check_duplicate_keys(struct imp_reader *p, const struct imp_node *n)
{
	const struct imp_node **m, *dup = NULL, *first = NULL;

	if (n->n < 2)
		return 0;
	m = calloc(n->n, sizeof(*m));
	if (!m)
		return error_set(p->err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n->n; i++)
		m[i] = &n->v[i];
	qsort(m, n->n, sizeof(*m), cmp_member);
	/* In a run of equal keys the first member comes first and the
	 * second is its first repeat. */
	for (size_t i = 0; i + 1 < n->n;) {
		size_t j = i + 1;
		while (j < n->n && !strcmp(m[i]->key, m[j]->key))
			j++;
		if (j > i + 1 && (!dup || m[i + 1] < dup)) {
			dup = m[i + 1];
			first = m[i];
		}
		i = j;
	}
	free(m);
	if (!dup)
		return 0;
	return error_set(p->err, EINVAL, "%s:%u:%u: duplicate key \"%s\" (first at line %u)", p->name, dup->line,
			 dup->col, dup->key, first->line);
}


static int parse_container(struct imp_reader *p, struct imp_node *n, unsigned depth)
{
	bool obj = p->s[p->pos] == '{';
	char close = obj ? '}' : ']';
	int r;

	if (depth >= IMP_MAX_DEPTH)
		return imp_reader_fail(p, "nested deeper than %d levels", IMP_MAX_DEPTH);
	n->kind = obj ? IMP_MAP : IMP_LIST;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		struct imp_node *c = NULL;
		char *key = NULL;
		size_t klen;
		unsigned kline = 0, kcol = 0;

		skip_ws(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return imp_reader_fail(p, p->pos < p->len && p->s[p->pos] == '}' ?
							"trailing comma before }" :
							"expected a \"key\"");
			kline = p->line;
			kcol = (unsigned)(p->pos - p->line_start + 1);
			if ((r = parse_string(p, &key, &klen)) < 0)
				return r;
			if (strlen(key) != klen) {
				free(key);
				return imp_reader_fail(p, "NUL in a key");
			}
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				free(key);
				return imp_reader_fail(p, "expected ':' after the key");
			}
			p->pos++;
			skip_ws(p);
		} else if (p->pos < p->len && p->s[p->pos] == ']') {
			return imp_reader_fail(p, "trailing comma before ]");
		}
		if ((r = imp_reader_add(p, n, n->kind == IMP_MAP ? "object" : "array", &c)) < 0 || !c) {
			free(key);
			return r < 0 ? r : -EINVAL;
		}
		c->key = key;
		if ((r = parse_value(p, c, depth + 1)) < 0)
			return r;
		if (obj) {
			c->line = kline;
			c->col = kcol;
		}
		skip_ws(p);
		if (p->pos >= p->len)
			return imp_reader_fail(p, "unexpected end of input; expected ',' or '%c'", close);
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == close) {
			p->pos++;
			return obj ? check_duplicate_keys(p, n) : 0;
		}
		return imp_reader_fail(p, "expected ',' or '%c'", close);
	}
}

static int parse_value(struct imp_reader *p, struct imp_node *n, unsigned depth)
{
	skip_ws(p);
	n->line = p->line;
	n->col = (unsigned)(p->pos - p->line_start + 1);
	if (p->pos >= p->len)
		return imp_reader_fail(p, "unexpected end of input; expected a value");
	char c = p->s[p->pos];
	if (c == '{' || c == '[')
		return parse_container(p, n, depth);
	if (c == '"') {
		int r = parse_string(p, &n->str, &n->len);
		return r < 0 ? r : imp_reader_string(p, n);
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return parse_number(p, n);
	static const struct {
		const char *w;
		enum imp_kind k;
		bool b;
	} words[] = { { "true", IMP_BOOL, true }, { "false", IMP_BOOL, false }, { "null", IMP_NULL, false } };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t wl = strlen(words[i].w);
		if (p->len - p->pos >= wl && !memcmp(p->s + p->pos, words[i].w, wl)) {
			p->pos += wl;
			n->kind = words[i].k;
			n->b = words[i].b;
			return 0;
		}
	}
	if (c == '/' || c == '#')
		return imp_reader_fail(p, "comments are not JSON");
	if (c == '\'')
		return imp_reader_fail(p, "single-quoted strings are not JSON");
	return imp_reader_fail(p, "expected a value (object, array, string, number, true, false or null)");
}

int imp_json_parse(const char *name, const char *buf, size_t len, struct imp_node **out, struct error *err)
{
	return imp_json_parse_max(name, buf, len, IMP_MAX_INPUT, out, err);
}

int imp_json_parse_max(const char *name, const char *buf, size_t len, size_t max, struct imp_node **out,
		       struct error *err)
{
	struct imp_reader p = { .name = name, .s = buf, .len = len, .line = 1, .err = err };
	struct imp_node *root;
	int r;

	if (len > max)
		return error_set(err, EFBIG, "%s: larger than %zu bytes", name, max);
	/* A UTF-8 byte order mark is not JSON (RFC 8259 section 8.1 lets a
	 * reader ignore it; we say so rather than guess). */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		return error_set(err, EINVAL, "%s:1:1: byte order mark; save the file as UTF-8 without one", name);
	root = calloc(1, sizeof(*root));
	if (!root)
		return error_set(err, ENOMEM, "out of memory");
	r = parse_value(&p, root, 0);
	if (r == 0) {
		skip_ws(&p);
		if (p.pos != p.len)
			r = imp_reader_fail(&p, "text after the end of the JSON value");
	}
	if (r < 0) {
		imp_node_free(root);
		return r;
	}
	*out = root;
	return 0;
}
