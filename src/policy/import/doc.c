/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/doc.h"
#include "policy/internal.h"
#include "util/cleanup.h"
#include "util/utf8.h"

static void node_release(struct imp_node *n)
{
	for (size_t i = 0; i < n->n; i++)
		node_release(&n->v[i]);
	free(n->v);
	free(n->key);
	free(n->str);
}

void imp_node_release(struct imp_node *n)
{
	node_release(n);
	memset(n, 0, sizeof(*n));
}

void imp_node_free(struct imp_node *n)
{
	if (!n)
		return;
	node_release(n);
	free(n);
}

const struct imp_node *imp_get(const struct imp_node *map, const char *key)
{
	if (!map || map->kind != IMP_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->v[i].key, key))
			return &map->v[i];
	return NULL;
}

const char *imp_kind_name(enum imp_kind k)
{
	switch (k) {
	case IMP_NULL: return "null";
	case IMP_BOOL: return "a boolean";
	case IMP_NUM: return "a number";
	case IMP_STR: return "a string";
	case IMP_LIST: return "a list";
	case IMP_MAP: return "a map";
	}
	return "?";
}

static bool is_decimal(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int from_ynode(const struct policy_ynode *y, struct imp_node *n, struct error *err)
{
	n->line = y->line;
	n->col = y->col;
	if (y->type == POLICY_YNODE_SCALAR) {
		if (!y->quoted) {
			if (!strcmp(y->str, "true") || !strcmp(y->str, "false")) {
				n->kind = IMP_BOOL;
				n->b = y->str[0] == 't';
				return 0;
			}
			if (y->len == 0 || !strcmp(y->str, "null") || !strcmp(y->str, "~")) {
				n->kind = IMP_NULL;
				return 0;
			}
		}
		n->kind = !y->quoted && is_decimal(y->str) ? IMP_NUM : IMP_STR;
		n->str = strdup(y->str);
		n->len = y->len;
		return n->str ? 0 : error_set(err, ENOMEM, "out of memory");
	}
	bool map = y->type == POLICY_YNODE_MAP;
	size_t count = map ? y->n / 2 : y->n;
	n->kind = map ? IMP_MAP : IMP_LIST;
	if (!count)
		return 0;
	n->v = calloc(count, sizeof(*n->v));
	if (!n->v)
		return error_set(err, ENOMEM, "out of memory");
	n->cap = count;
	for (size_t i = 0; i < count; i++) {
		const struct policy_ynode *val = map ? y->items[2 * i + 1] : y->items[i];
		int r = from_ynode(val, &n->v[i], err);
		n->n = i + 1;
		if (r < 0)
			return r;
		if (map) {
			const struct policy_ynode *k = y->items[2 * i];
			n->v[i].key = strdup(k->str);
			if (!n->v[i].key)
				return error_set(err, ENOMEM, "out of memory");
			n->v[i].line = k->line;
			n->v[i].col = k->col;
		}
	}
	return 0;
}

int imp_yaml_parse(const char *name, const char *buf, size_t len, struct imp_node **out, struct error *err)
{
	_cleanup_(policy_ynode_freep) struct policy_ynode *y = NULL;
	struct imp_node *root;
	int r;

	if (len > IMP_MAX_INPUT)
		return error_set(err, EFBIG, "%s: larger than %d bytes", name, IMP_MAX_INPUT);
	r = policy_ytree_parse(name, buf, len, &y, err);
	if (r < 0)
		return r;
	root = calloc(1, sizeof(*root));
	if (!root)
		return error_set(err, ENOMEM, "out of memory");
	if (!y) {
		root->kind = IMP_MAP;
		root->line = root->col = 1;
	} else if ((r = from_ynode(y, root, err)) < 0) {
		imp_node_free(root);
		return r;
	}
	*out = root;
	return 0;
}

int imp_reader_fail(struct imp_reader *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(p->err, EINVAL, "%s:%u:%zu: %s", p->name, p->line, p->pos - p->line_start + 1, msg);
}

int imp_reader_utf8(struct imp_reader *p, size_t end, char *buf, size_t *o)
{
	size_t k = utf8_decode((const unsigned char *)p->s + p->pos, end - p->pos, NULL);

	if (!k)
		return imp_reader_fail(p, "invalid UTF-8 in a string");
	memcpy(buf + *o, p->s + p->pos, k);
	*o += k;
	p->pos += k;
	return 0;
}

int imp_reader_add(struct imp_reader *p, struct imp_node *parent, const char *what, struct imp_node **child)
{
	if (parent->n >= IMP_MAX_ITEMS)
		return imp_reader_fail(p, "more than %d entries in one %s", IMP_MAX_ITEMS, what);
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct imp_node *v = realloc(parent->v, cap * sizeof(*v));
		if (!v)
			return error_set(p->err, ENOMEM, "out of memory");
		parent->v = v;
		parent->cap = cap;
	}
	*child = &parent->v[parent->n++];
	memset(*child, 0, sizeof(**child));
	return 0;
}

int imp_escape_byte(char e)
{
	switch (e) {
	case '"': return '"';
	case '\\': return '\\';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	default: return 0;
	}
}

int imp_reader_string(struct imp_reader *p, struct imp_node *n)
{
	if (strlen(n->str) != n->len)
		return imp_reader_fail(p, "NUL in a string");
	n->kind = IMP_STR;
	return 0;
}
