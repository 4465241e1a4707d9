/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON into the importers' tree (doc.h), with the line and column of
 * every value: the tokens are doc/json.h's, the one strict JSON reader of
 * airlock, so that an imported settings file, a pins file and an MCP
 * message are read by the same rules as the audit log (duplicate keys,
 * surrogates, \u0000, UTF-8, depth). What is added here is the tree, the
 * positions, and the wording of each refusal as FILE:LINE:COL.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/json.h"
#include "policy/import/doc.h"

/* The longest number kept as written. */
#define IMP_MAX_NUMBER 64

struct builder {
	const struct doc_json *j;
	struct imp_reader p; /* at the token being built: positions and errors */
};

/* Move the reader to byte at, counting lines (tokens are built in the
 * order of the text, so this is one pass in all). */
static void seek(struct imp_reader *p, size_t at)
{
	for (; p->pos < at && p->pos < p->len; p->pos++)
		if (p->s[p->pos] == '\n') {
			p->line++;
			p->line_start = p->pos + 1;
		}
}

static unsigned col_of(const struct imp_reader *p)
{
	return (unsigned)(p->pos - p->line_start + 1);
}

/* The reader's refusal, at its line and column, in the words of a file's
 * author: what was found there when the reader's own text does not say. */
static int refusal(struct builder *b)
{
	const struct doc_json *j = b->j;
	struct imp_reader *p = &b->p;
	seek(p, j->err_at);
	unsigned char c = j->err_at < p->len ? (unsigned char)p->s[j->err_at] : 0;
	if (!strcmp(j->err, DOC_JSON_ERR_DUPLICATE)) {
		/* The key as written, between its quotes. */
		size_t k = j->err_at + 1, e = k;
		while (e < p->len && p->s[e] != '"' && e - k < 4096)
			e += p->s[e] == '\\' ? 2 : 1;
		struct imp_reader first = { .s = p->s, .len = p->len, .line = 1 };
		seek(&first, j->err_first_at);
		return error_set(p->err, EINVAL, "%s:%u:%u: duplicate key \"%.*s\" (first at line %u)", p->name, p->line,
				 col_of(p), (int)(e - k), p->s + k, first.line);
	}
	if (!strcmp(j->err, DOC_JSON_ERR_DEPTH))
		return imp_reader_fail(p, "nested deeper than %d levels", IMP_MAX_DEPTH);
	bool object = !strcmp(j->err, DOC_JSON_ERR_ENTRIES_OBJECT);
	if (object || !strcmp(j->err, DOC_JSON_ERR_ENTRIES_ARRAY))
		return imp_reader_fail(p, "more than %d entries in one %s", IMP_MAX_ITEMS, object ? "object" : "array");
	if (!strcmp(j->err, DOC_JSON_ERR_ESCAPE))
		return imp_reader_fail(p, "invalid escape \\%c", c >= 0x20 && c < 0x7f ? c : '?');
	if (!strcmp(j->err, DOC_JSON_ERR_CONTROL))
		return imp_reader_fail(p, "control character 0x%02x in a string (write it as \\u%04x)", c, c);
	if (!strcmp(j->err, DOC_JSON_ERR_NOMEM))
		return error_set(p->err, ENOMEM, "out of memory");
	return imp_reader_fail(p, "%s", j->err);
}

static int build(struct builder *b, int t, struct imp_node *n);

static int build_container(struct builder *b, int t, struct imp_node *n)
{
	const struct doc_json *j = b->j;
	bool obj = j->tok[t].type == DOC_JSON_OBJECT;
	n->kind = obj ? IMP_MAP : IMP_LIST;
	for (int m = t + 1; m < (int)j->tok[t].end;) {
		struct imp_node *c = NULL;
		int r = imp_reader_add(&b->p, n, obj ? "object" : "array", &c);
		if (r < 0)
			return r;
		if (!obj) {
			if ((r = build(b, m, c)) < 0)
				return r;
			m = (int)j->tok[m].end;
			continue;
		}
		/* A member is where its key is. */
		const struct doc_json_tok *k = &j->tok[m];
		seek(&b->p, k->start - 1);
		unsigned line = b->p.line, col = col_of(&b->p);
		if (!(c->key = malloc(k->len + 1)))
			return error_set(b->p.err, ENOMEM, "out of memory");
		if (doc_json_str(j, m, c->key, k->len + 1) < 0)
			return imp_reader_fail(&b->p, "a key that cannot be read");
		if ((r = build(b, m + 1, c)) < 0)
			return r;
		c->line = line;
		c->col = col;
		m = (int)j->tok[m + 1].end;
	}
	return 0;
}

static int build(struct builder *b, int t, struct imp_node *n)
{
	const struct doc_json *j = b->j;
	const struct doc_json_tok *tk = &j->tok[t];
	seek(&b->p, tk->type == DOC_JSON_STRING ? tk->start - 1 : tk->start);
	n->line = b->p.line;
	n->col = col_of(&b->p);
	switch ((enum doc_json_type)tk->type) {
	case DOC_JSON_OBJECT:
	case DOC_JSON_ARRAY:
		return build_container(b, t, n);
	case DOC_JSON_STRING: {
		/* Decoded, it is no longer than as written. */
		if (!(n->str = malloc(tk->len + 1)))
			return error_set(b->p.err, ENOMEM, "out of memory");
		int l = doc_json_str(j, t, n->str, tk->len + 1);
		if (l < 0)
			return imp_reader_fail(&b->p, "a string that cannot be read");
		n->len = (size_t)l;
		return imp_reader_string(&b->p, n);
	}
	case DOC_JSON_NUMBER:
		if (tk->len > IMP_MAX_NUMBER)
			return imp_reader_fail(&b->p, "number longer than %d characters", IMP_MAX_NUMBER);
		n->kind = IMP_NUM;
		n->str = strndup(j->text + tk->start, tk->len);
		n->len = tk->len;
		return n->str ? 0 : error_set(b->p.err, ENOMEM, "out of memory");
	case DOC_JSON_TRUE:
	case DOC_JSON_FALSE:
		n->kind = IMP_BOOL;
		n->b = tk->type == DOC_JSON_TRUE;
		return 0;
	case DOC_JSON_NULL:
		n->kind = IMP_NULL;
		return 0;
	}
	return imp_reader_fail(&b->p, "a value of no JSON type");
}

int imp_json_parse(const char *name, const char *buf, size_t len, struct imp_node **out, struct error *err)
{
	return imp_json_parse_max(name, buf, len, IMP_MAX_INPUT, out, err);
}

int imp_json_parse_max(const char *name, const char *buf, size_t len, size_t max, struct imp_node **out,
		       struct error *err)
{
	if (len > max)
		return error_set(err, EFBIG, "%s: larger than %zu bytes", name, max);
	/* A UTF-8 byte order mark is not JSON (RFC 8259 section 8.1 lets a
	 * reader ignore it; we say so rather than guess). */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		return error_set(err, EINVAL, "%s:1:1: byte order mark; save the file as UTF-8 without one", name);
	struct doc_json j;
	struct builder b = { .j = &j, .p = { .name = name, .s = buf, .len = len, .line = 1, .err = err } };
	/* Every token is one byte at least: len + 1 bounds them. */
	int r = doc_json_parse_grow(&j, buf, len, len + 1, IMP_MAX_ITEMS, IMP_MAX_DEPTH);
	struct imp_node *root = NULL;
	if (r < 0)
		r = refusal(&b);
	else if (!(root = calloc(1, sizeof(*root))))
		r = error_set(err, ENOMEM, "out of memory");
	else
		r = build(&b, 0, root);
	doc_json_free(&j);
	if (r < 0) {
		imp_node_free(root);
		return r;
	}
	*out = root;
	return 0;
}
