/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader for the subset of TOML (v1.0) that runtime configuration files
 * use. What it does not implement it refuses with the line, so that a file
 * is never half understood: multi-line strings, floats, dates and times,
 * and integers in other bases.
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

static unsigned col(const struct imp_reader *p)
{
	return (unsigned)(p->pos - p->line_start + 1);
}

static bool at(const struct imp_reader *p, char c)
{
	return p->pos < p->len && p->s[p->pos] == c;
}

/* Past c when it is next: whether it was. */
static bool take(struct imp_reader *p, char c)
{
	if (!at(p, c))
		return false;
	p->pos++;
	return true;
}

static void skip_blank(struct imp_reader *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
		p->pos++;
}

static void newline(struct imp_reader *p)
{
	p->line++;
	p->line_start = p->pos;
}

/* After a value or header: blanks, an optional comment, then the end of
 * the line or of the input. */
static int end_of_line(struct imp_reader *p)
{
	skip_blank(p);
	if (at(p, '#')) {
		while (p->pos < p->len && p->s[p->pos] != '\n') {
			unsigned char c = (unsigned char)p->s[p->pos];
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return imp_reader_fail(p, "control character in a comment");
			p->pos++;
		}
	}
	if (at(p, '\r'))
		p->pos++;
	if (p->pos >= p->len)
		return 0;
	if (!at(p, '\n'))
		return imp_reader_fail(p, "expected the end of the line");
	p->pos++;
	newline(p);
	return 0;
}

/* Blanks, newlines and comments inside an array. */
static int skip_array_ws(struct imp_reader *p)
{
	for (;;) {
		skip_blank(p);
		if (at(p, '#') || at(p, '\r') || at(p, '\n')) {
			int r = end_of_line(p);
			if (r < 0)
				return r;
			if (p->pos >= p->len)
				return 0;
			continue;
		}
		return 0;
	}
}

/* A basic ("...") or literal ('...') single-line string at p->pos. */
static int parse_string(struct imp_reader *p, char **out, size_t *out_len)
{
	char q = p->s[p->pos];
	size_t end;

	if (p->len - p->pos >= 3 && p->s[p->pos + 1] == q && p->s[p->pos + 2] == q)
		return imp_reader_fail(p, "multi-line strings are not supported; write the value on one line");
	end = ++p->pos;
	while (end < p->len && p->s[end] != q && p->s[end] != '\n') {
		if (q == '"' && p->s[end] == '\\')
			end++;
		end++;
	}
	if (end >= p->len || p->s[end] != q)
		return imp_reader_fail(p, "unterminated string");
	_cleanup_free_ char *buf = malloc(end - p->pos + 1);
	size_t o = 0;
	if (!buf)
		return error_set(p->err, ENOMEM, "out of memory");
	while (p->pos < end) {
		unsigned char c = (unsigned char)p->s[p->pos];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return imp_reader_fail(p, "control character 0x%02x in a string", c);
		if (c != '\\' || q == '\'') {
			if (imp_reader_utf8(p, end, buf, &o) < 0)
				return -EINVAL;
			continue;
		}
		p->pos++;
		char e = p->s[p->pos++];
		uint32_t cp = 0;
		int byte = imp_escape_byte(e), digits = e == 'u' ? 4 : e == 'U' ? 8 : 0;
		if (byte) {
			buf[o++] = (char)byte;
			continue;
		}
		if (!digits)
			return imp_reader_fail(p, "invalid escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
		if (end - p->pos < (size_t)digits)
			return imp_reader_fail(p, "\\%c needs %d hex digits", e, digits);
		for (int i = 0; i < digits; i++) {
			int d = hex_digit_value((unsigned char)p->s[p->pos++]);
			if (d < 0)
				return imp_reader_fail(p, "\\%c needs %d hex digits", e, digits);
			cp = cp << 4 | (uint32_t)d;
		}
		if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return imp_reader_fail(p, "\\%c escape is NUL, a surrogate or past U+10FFFF", e);
		/* An escape is at least 6 bytes and expands to at most 4. */
		utf8_put(buf, &o, cp);
	}
	p->pos = end + 1;
	buf[o] = '\0';
	*out = steal_pointer(&buf);
	*out_len = o;
	return 0;
}

static bool bare_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-';
}

/* One key segment: bare, "basic" or 'literal'. */
static int parse_key_part(struct imp_reader *p, char **out)
{
	size_t len;

	skip_blank(p);
	if (at(p, '"') || at(p, '\'')) {
		int r = parse_string(p, out, &len);
		if (r < 0)
			return r;
		if (strlen(*out) != len) {
			free(*out);
			*out = NULL;
			return imp_reader_fail(p, "NUL in a key");
		}
		return 0;
	}
	size_t s = p->pos;
	while (p->pos < p->len && bare_char(p->s[p->pos]))
		p->pos++;
	if (p->pos == s)
		return imp_reader_fail(p, "expected a key");
	*out = strndup(p->s + s, p->pos - s);
	return *out ? 0 : error_set(p->err, ENOMEM, "out of memory");
}

#define KEY_PARTS_MAX 16

struct keypath {
	char *part[KEY_PARTS_MAX];
	unsigned line[KEY_PARTS_MAX], col[KEY_PARTS_MAX];
	size_t n;
};

static void keypath_free(struct keypath *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->part[i]);
	k->n = 0;
}

static int parse_key(struct imp_reader *p, struct keypath *k)
{
	for (;;) {
		if (k->n == KEY_PARTS_MAX)
			return imp_reader_fail(p, "a dotted key of more than %d parts", KEY_PARTS_MAX);
		skip_blank(p);
		k->line[k->n] = p->line;
		k->col[k->n] = col(p);
		int r = parse_key_part(p, &k->part[k->n]);
		if (r < 0)
			return r;
		k->n++;
		skip_blank(p);
		if (!at(p, '.'))
			return 0;
		p->pos++;
	}
}

static struct imp_node *find(struct imp_node *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].key, key))
			return &t->v[i];
	return NULL;
}

/* A new child of t named by part i of k, at that part's position; the
 * name moves from k to the child. */
static int add_key(struct imp_reader *p, struct imp_node *t, struct keypath *k, size_t i, struct imp_node **c)
{
	int r = imp_reader_add(p, t, "table or array", c);
	if (r < 0)
		return r;
	(*c)->key = k->part[i];
	k->part[i] = NULL;
	(*c)->line = k->line[i];
	(*c)->col = k->col[i];
	return 0;
}

static int parse_value(struct imp_reader *p, struct imp_node *n, unsigned depth);

/* "KEY = VALUE" with the key read into k: the value, at depth, under t,
 * through the implicit tables a dotted key names. A key given twice is
 * refused, as TOML requires; in an inline table the error points at the
 * reader, elsewhere at the key and its first definition. */
static int put_key(struct imp_reader *p, struct imp_node *t, struct keypath *k, unsigned depth, bool in_inline)
{
	struct imp_node *c;
	int r = 0;

	for (size_t i = 0; i < k->n; i++) {
		c = find(t, k->part[i]);
		bool last = i + 1 == k->n;
		/* Only a table a dotted key created may take more keys (an
		 * inline table or array is sealed, never implicit). */
		if (c && (last || c->kind != IMP_MAP || c->sealed || !c->implicit)) {
			if (in_inline)
				return imp_reader_fail(p, "key \"%s\" defined twice", k->part[i]);
			return error_set(p->err, EINVAL, "%s:%u:%u: key \"%s\" defined twice (first at line %u)",
					 p->name, k->line[i], k->col[i], k->part[i], c->line);
		}
		if (!last) {
			if (!c) {
				if ((r = add_key(p, t, k, i, &c)) < 0)
					return r;
				c->kind = IMP_MAP;
				c->implicit = true;
			}
			t = c;
			continue;
		}
		if ((r = add_key(p, t, k, i, &c)) < 0)
			return r;
		skip_blank(p);
		if (!take(p, '='))
			return imp_reader_fail(p, "expected '=' after the key");
		r = parse_value(p, c, depth);
		c->line = k->line[i];
		c->col = k->col[i];
	}
	return r;
}

static int parse_inline_table(struct imp_reader *p, struct imp_node *n, unsigned depth)
{
	n->kind = IMP_MAP;
	n->sealed = true;
	p->pos++;
	skip_blank(p);
	if (take(p, '}'))
		return 0;
	for (;;) {
		struct keypath k = { 0 };
		int r = parse_key(p, &k);
		if (r == 0)
			r = put_key(p, n, &k, depth + 1, true);
		keypath_free(&k);
		if (r < 0)
			return r;
		skip_blank(p);
		if (take(p, ','))
			continue;
		if (take(p, '}'))
			return 0;
		return imp_reader_fail(p, "expected ',' or '}' in an inline table (which must fit on one line)");
	}
}

static int parse_array(struct imp_reader *p, struct imp_node *n, unsigned depth)
{
	int r;

	n->kind = IMP_LIST;
	n->sealed = true;
	p->pos++;
	for (;;) {
		if ((r = skip_array_ws(p)) < 0)
			return r;
		if (take(p, ']'))
			return 0;
		struct imp_node *c;
		if ((r = imp_reader_add(p, n, "table or array", &c)) < 0)
			return r;
		if ((r = parse_value(p, c, depth + 1)) < 0)
			return r;
		if ((r = skip_array_ws(p)) < 0)
			return r;
		if (take(p, ','))
			continue;
		if (take(p, ']'))
			return 0;
		return imp_reader_fail(p, "expected ',' or ']' in an array");
	}
}

static int parse_value(struct imp_reader *p, struct imp_node *n, unsigned depth)
{
	if (depth >= IMP_MAX_DEPTH)
		return imp_reader_fail(p, "nested deeper than %d levels", IMP_MAX_DEPTH);
	skip_blank(p);
	n->line = p->line;
	n->col = col(p);
	if (p->pos >= p->len || at(p, '\n') || at(p, '\r') || at(p, '#'))
		return imp_reader_fail(p, "expected a value");
	char c = p->s[p->pos];
	if (c == '"' || c == '\'') {
		int r = parse_string(p, &n->str, &n->len);
		return r < 0 ? r : imp_reader_string(p, n);
	}
	if (c == '[')
		return parse_array(p, n, depth);
	if (c == '{')
		return parse_inline_table(p, n, depth);
	size_t s = p->pos;
	while (p->pos < p->len && !strchr(" \t\r\n,]}#", p->s[p->pos]))
		p->pos++;
	size_t wl = p->pos - s;
	const char *w = p->s + s;
	if (wl == 4 && !memcmp(w, "true", 4)) {
		n->kind = IMP_BOOL;
		n->b = true;
		return 0;
	}
	if (wl == 5 && !memcmp(w, "false", 5)) {
		n->kind = IMP_BOOL;
		return 0;
	}
	/* A decimal integer: optional sign, digits with single underscores
	 * between them, no leading zero. */
	size_t i = 0;
	bool ok = wl > 0 && wl <= 24;
	char digits[32];
	size_t nd = 0;
	if (ok && (w[0] == '+' || w[0] == '-')) {
		if (w[0] == '-')
			digits[nd++] = '-';
		i++;
	}
	if (ok && (i >= wl || w[i] < '0' || w[i] > '9'))
		ok = false;
	if (ok && w[i] == '0' && i + 1 < wl)
		ok = false;
	for (; ok && i < wl; i++) {
		if (w[i] >= '0' && w[i] <= '9')
			digits[nd++] = w[i];
		else if (w[i] == '_' && i > 0 && w[i - 1] >= '0' && w[i - 1] <= '9' && i + 1 < wl && w[i + 1] >= '0' &&
			 w[i + 1] <= '9')
			continue;
		else
			ok = false;
	}
	if (ok) {
		n->kind = IMP_NUM;
		n->str = strndup(digits, nd);
		n->len = nd;
		return n->str ? 0 : error_set(p->err, ENOMEM, "out of memory");
	}
	p->pos = s;
	return imp_reader_fail(p, "expected a string, integer, boolean, array or inline table (floats, dates and "
			"integers in other bases are not supported)");
}

/* Walk (creating implicit tables) to the table a [header] or [[header]]
 * names, from the root. */
static int open_header(struct imp_reader *p, struct imp_node *root, struct keypath *k, bool array, struct imp_node **out)
{
	struct imp_node *t = root, *c;
	int r;

	for (size_t i = 0; i < k->n; i++) {
		bool last = i + 1 == k->n;
		c = find(t, k->part[i]);
		if (c && c->sealed)
			return error_set(p->err, EINVAL, "%s:%u:%u: \"%s\" was given as an inline value; it cannot "
				      "be extended by a table header", p->name, k->line[i], k->col[i], k->part[i]);
		if (c && c->kind == IMP_LIST && !(last && !array)) {
			/* An array of tables: a further [[x]] adds one, [x.y]
			 * continues the last one. */
			if (last && array) {
				struct imp_node *e;
				if ((r = imp_reader_add(p, c, "table or array", &e)) < 0)
					return r;
				e->kind = IMP_MAP;
				e->line = k->line[i];
				e->col = k->col[i];
				*out = e;
				return 0;
			}
			t = &c->v[c->n - 1];
			continue;
		}
		if (c && c->kind != IMP_MAP)
			return error_set(p->err, EINVAL, "%s:%u:%u: \"%s\" is already %s, not a table", p->name,
					 k->line[i], k->col[i], k->part[i], imp_kind_name(c->kind));
		if (c && last) {
			if (array || !c->implicit)
				return error_set(p->err, EINVAL, "%s:%u:%u: table \"%s\" defined twice (first at line %u)",
						 p->name, k->line[i], k->col[i], k->part[i], c->line);
			c->implicit = false;
			c->line = k->line[i];
			c->col = k->col[i];
			*out = c;
			return 0;
		}
		if (!c) {
			if ((r = add_key(p, t, k, i, &c)) < 0)
				return r;
			if (last && array) {
				struct imp_node *e;
				c->kind = IMP_LIST;
				if ((r = imp_reader_add(p, c, "table or array", &e)) < 0)
					return r;
				e->kind = IMP_MAP;
				e->line = c->line;
				e->col = c->col;
				*out = e;
				return 0;
			}
			c->kind = IMP_MAP;
			c->implicit = !last;
		}
		t = c;
	}
	*out = t;
	return 0;
}

static int parse_doc(struct imp_reader *p, struct imp_node *root)
{
	struct imp_node *cur = root;
	/* Tables that key/value lines defined with dotted keys under the
	 * current header may not be reopened by a later header; marking them
	 * not implicit does that. */
	int r;

	while (p->pos < p->len) {
		skip_blank(p);
		if (p->pos >= p->len)
			break;
		if (at(p, '#') || at(p, '\n') || at(p, '\r')) {
			if ((r = end_of_line(p)) < 0)
				return r;
			continue;
		}
		struct keypath k = { 0 };
		if (at(p, '[')) {
			bool array = p->len - p->pos >= 2 && p->s[p->pos + 1] == '[';
			p->pos += array ? 2 : 1;
			r = parse_key(p, &k);
			if (r == 0) {
				skip_blank(p);
				if (!at(p, ']') || (array && (p->len - p->pos < 2 || p->s[p->pos + 1] != ']')))
					r = imp_reader_fail(p, "expected '%s' to close the table header", array ? "]]" : "]");
				else
					p->pos += array ? 2 : 1;
			}
			if (r == 0)
				r = open_header(p, root, &k, array, &cur);
			keypath_free(&k);
			if (r < 0 || (r = end_of_line(p)) < 0)
				return r;
			continue;
		}
		r = parse_key(p, &k);
		if (r == 0)
			r = put_key(p, cur, &k, 0, false);
		keypath_free(&k);
		if (r < 0 || (r = end_of_line(p)) < 0)
			return r;
	}
	return 0;
}

int imp_toml_parse(const char *name, const char *buf, size_t len, struct imp_node **out, struct error *err)
{
	struct imp_reader p = { .name = name, .s = buf, .len = len, .line = 1, .err = err };
	struct imp_node *root;
	int r;

	if (len > IMP_MAX_INPUT)
		return error_set(err, EFBIG, "%s: larger than %d bytes", name, IMP_MAX_INPUT);
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			return error_set(err, EINVAL, "%s: NUL byte in the file", name);
	root = calloc(1, sizeof(*root));
	if (!root)
		return error_set(err, ENOMEM, "out of memory");
	root->kind = IMP_MAP;
	root->line = root->col = 1;
	r = parse_doc(&p, root);
	if (r < 0) {
		imp_node_free(root);
		return r;
	}
	*out = root;
	return 0;
}
