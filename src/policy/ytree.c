/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML text -> a small tree of scalars, lists and maps, each with its line
 * and column.
 *
 * libyaml's event API is used rather than its document loader so that
 * every bound is checked before anything is built: aliases are refused
 * when they are seen (a walk over nested aliases grows exponentially,
 * the "billion laughs"), and depth, entry counts, scalar sizes and the
 * total number of nodes are capped as events arrive.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "policy/internal.h"
#include "util/cleanup.h"

struct builder {
	const char *file;
	struct error *err;
	struct policy_ynode *root;
	struct policy_ynode *stack[POLICY_MAX_DEPTH]; /* open lists and maps */
	size_t depth;
	size_t nodes;
	unsigned docs;
};

void policy_ynode_free(struct policy_ynode *n)
{
	if (!n)
		return;
	free(n->str);
	for (size_t i = 0; i < n->n; i++)
		policy_ynode_free(n->items[i]);
	free(n->items);
	free(n);
}

/*
 * The dotted field name for an error found while building. With pending,
 * the error is about the event being added to the innermost open
 * container; without, it is about that container itself.
 */
static void builder_field(const struct builder *b, bool pending, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < b->depth; i++) {
		const struct policy_ynode *c = b->stack[i];
		bool top = i + 1 == b->depth;

		if (top && !pending)
			break;
		if (c->type == POLICY_YNODE_SEQ) {
			size_t idx = top ? c->n : c->n - 1;
			size_t pos = strlen(buf);
			snprintf(buf + pos, size - pos, "[%zu]", idx);
		} else {
			const struct policy_ynode *key = NULL;

			/* An open child is always a value (keys are scalars),
			 * so its key is the item before it. */
			if (!top)
				key = c->items[c->n - 2];
			else if (c->n % 2 == 1)
				key = c->items[c->n - 1];
			if (!key)
				break;
			policy_field_append_key(buf, size, key->str, key->len);
		}
	}
	if (buf[0] == '\0')
		snprintf(buf, size, "(document)");
}

static int fail_at(struct builder *b, const yaml_mark_t *mark, bool pending, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

static int fail_at(struct builder *b, const yaml_mark_t *mark, bool pending, const char *fmt, ...)
{
	char field[POLICY_FIELD_MAX];
	char what[ERROR_MSG_MAX];
	va_list ap;

	builder_field(b, pending, field, sizeof(field));
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return policy_fail(b->err, b->file, (unsigned)mark->line + 1, (unsigned)mark->column + 1,
			   field, "%s", what);
}

static const char *kind_name(const struct policy_ynode *n)
{
	switch (n->type) {
	case POLICY_YNODE_SEQ:
		return "a list";
	case POLICY_YNODE_MAP:
		return "a map";
	case POLICY_YNODE_SCALAR:
		break;
	}
	return "a scalar";
}

/* Add n to the innermost open container (or make it the root). Takes
 * ownership of n in every case. */
static int attach(struct builder *b, struct policy_ynode *n, const yaml_mark_t *mark)
{
	_cleanup_(policy_ynode_freep) struct policy_ynode *node = n;
	struct policy_ynode *parent;

	if (++b->nodes > POLICY_MAX_NODES)
		return fail_at(b, mark, true,
			       "the file has more than %d YAML nodes; a policy needs far fewer",
			       POLICY_MAX_NODES);
	if (b->depth == 0) {
		b->root = steal_pointer(&node);
		return 0;
	}

	parent = b->stack[b->depth - 1];
	if (parent->type == POLICY_YNODE_SEQ) {
		if (parent->n >= POLICY_MAX_LIST)
			return fail_at(b, mark, false,
				       "has more than %d entries; split it or use a parent directory",
				       POLICY_MAX_LIST);
	} else {
		bool is_key = parent->n % 2 == 0;

		if (is_key && node->type != POLICY_YNODE_SCALAR)
			return fail_at(b, mark, false, "a key is %s; keys must be plain names",
				       kind_name(node));
		if (is_key && parent->n / 2 >= POLICY_MAX_LIST)
			return fail_at(b, mark, false, "has more than %d keys; a map may hold at most %d",
				       POLICY_MAX_LIST, POLICY_MAX_LIST);
	}
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct policy_ynode **items = reallocarray(parent->items, cap, sizeof(*items));
		if (!items)
			return error_set(b->err, ENOMEM, "%s: out of memory", b->file);
		parent->items = items;
		parent->cap = cap;
	}
	parent->items[parent->n++] = steal_pointer(&node);
	return 0;
}

static struct policy_ynode *new_node(enum policy_ynode_type type, const yaml_mark_t *mark)
{
	struct policy_ynode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->type = type;
	n->line = (unsigned)mark->line + 1;
	n->col = (unsigned)mark->column + 1;
	return n;
}

static int check_props(struct builder *b, const yaml_event_t *ev, const yaml_char_t *anchor,
		       const yaml_char_t *tag)
{
	if (anchor)
		return fail_at(b, &ev->start_mark, true,
			       "YAML anchors (&%.32s) are not supported; write the value out in full",
			       (const char *)anchor);
	if (tag)
		return fail_at(b, &ev->start_mark, true,
			       "YAML tags are not supported; remove the tag and write the plain value");
	return 0;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	struct policy_ynode *n;
	size_t len = ev->data.scalar.length;
	int r;

	r = check_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag);
	if (r < 0)
		return r;
	if (len > POLICY_MAX_SCALAR)
		return fail_at(b, &ev->start_mark, true,
			       "value is %zu bytes long; at most %d bytes are accepted", len,
			       POLICY_MAX_SCALAR);
	if (memchr(ev->data.scalar.value, '\0', len))
		return fail_at(b, &ev->start_mark, true,
			       "value contains a NUL byte; remove the \\0 escape");

	n = new_node(POLICY_YNODE_SCALAR, &ev->start_mark);
	if (!n)
		return error_set(b->err, ENOMEM, "%s: out of memory", b->file);
	n->str = malloc(len + 1);
	if (!n->str) {
		policy_ynode_free(n);
		return error_set(b->err, ENOMEM, "%s: out of memory", b->file);
	}
	memcpy(n->str, ev->data.scalar.value, len);
	n->str[len] = '\0';
	n->len = len;
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	return attach(b, n, &ev->start_mark);
}

static int on_start(struct builder *b, const yaml_event_t *ev, enum policy_ynode_type type)
{
	struct policy_ynode *n;
	int r;

	if (type == POLICY_YNODE_SEQ)
		r = check_props(b, ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag);
	else
		r = check_props(b, ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag);
	if (r < 0)
		return r;
	if (b->depth >= POLICY_MAX_DEPTH)
		return fail_at(b, &ev->start_mark, true,
			       "lists and maps are nested more than %d deep; a policy needs at most 7",
			       POLICY_MAX_DEPTH);

	n = new_node(type, &ev->start_mark);
	if (!n)
		return error_set(b->err, ENOMEM, "%s: out of memory", b->file);
	r = attach(b, n, &ev->start_mark);
	if (r < 0)
		return r;
	b->stack[b->depth++] = n;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct policy_ynode *x = *(const struct policy_ynode *const *)a;
	const struct policy_ynode *y = *(const struct policy_ynode *const *)b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(x->str, y->str, x->len);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (x->col > y->col) - (x->col < y->col);
}

static bool before(const struct policy_ynode *x, const struct policy_ynode *y)
{
	return x->line < y->line || (x->line == y->line && x->col < y->col);
}

/* Duplicate keys are refused: YAML says they are an error, and parsers
 * that keep the first or the last would read the same file differently. */
static int check_duplicate_keys(struct builder *b, const struct policy_ynode *map)
{
	_cleanup_free_ struct policy_ynode **keys = NULL;
	const struct policy_ynode *dup = NULL, *first = NULL;
	size_t n = map->n / 2;

	if (n < 2)
		return 0;
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		return error_set(b->err, ENOMEM, "%s: out of memory", b->file);
	for (size_t i = 0; i < n; i++)
		keys[i] = map->items[2 * i];
	qsort(keys, n, sizeof(*keys), key_cmp);

	/* Report the repeat that comes first in the file. */
	for (size_t i = 0; i + 1 < n;) {
		size_t j = i + 1;
		while (j < n && keys[j]->len == keys[i]->len &&
		       memcmp(keys[j]->str, keys[i]->str, keys[i]->len) == 0) {
			if (!dup || before(keys[j], dup)) {
				dup = keys[j];
				first = keys[i];
			}
			j++;
		}
		i = j;
	}
	if (!dup)
		return 0;

	char field[POLICY_FIELD_MAX];
	builder_field(b, false, field, sizeof(field));
	if (strcmp(field, "(document)") == 0)
		field[0] = '\0';
	policy_field_append_key(field, sizeof(field), dup->str, dup->len);
	return policy_fail(b->err, b->file, dup->line, dup->col, field,
			   "duplicate key (first given at line %u); give each key once",
			   first->line);
}

static int on_end(struct builder *b)
{
	struct policy_ynode *n;

	/* libyaml pairs start and end events. */
	if (b->depth == 0)
		return error_set(b->err, EINVAL, "%s: unbalanced YAML events", b->file);
	n = b->stack[b->depth - 1];
	if (n->type == POLICY_YNODE_MAP) {
		int r = check_duplicate_keys(b, n);
		if (r < 0)
			return r;
	}
	b->depth--;
	return 0;
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_NO_EVENT:
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (b->docs++ > 0)
			return fail_at(b, &ev->start_mark, false,
				       "a second YAML document; a policy file holds exactly one");
		return 0;
	case YAML_ALIAS_EVENT:
		return fail_at(b, &ev->start_mark, true,
			       "YAML aliases (*%.32s) are not supported; write the value out in full",
			       (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, POLICY_YNODE_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, POLICY_YNODE_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b);
	}
	return 0;
}

/* Line and column (1-based, columns in characters) of a byte offset. */
static void offset_pos(const char *buf, size_t len, size_t off, unsigned *line, unsigned *col)
{
	unsigned l = 1, c = 1;

	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static int syntax_error(struct builder *b, const yaml_parser_t *parser, const char *buf, size_t len)
{
	const char *problem = parser->problem ? parser->problem : "unknown problem";
	char field[POLICY_FIELD_MAX];
	unsigned line, col;

	if (parser->error == YAML_MEMORY_ERROR)
		return error_set(b->err, ENOMEM, "%s: out of memory", b->file);
	builder_field(b, true, field, sizeof(field));
	if (parser->error == YAML_READER_ERROR) {
		offset_pos(buf, len, parser->problem_offset, &line, &col);
		return policy_fail(b->err, b->file, line, col, field,
				   "%s; a policy must be UTF-8 text", problem);
	}
	/* A wildcard host written plainly, *.example.com, scans as an alias. */
	if (parser->context && strcmp(parser->context, "while scanning an alias") == 0)
		return policy_fail(b->err, b->file, (unsigned)parser->context_mark.line + 1,
				   (unsigned)parser->context_mark.column + 1, field,
				   "invalid YAML: a plain value cannot start with '*', which YAML "
				   "reads as an alias; quote it (e.g. \"*.example.com\")");
	line = (unsigned)parser->problem_mark.line + 1;
	col = (unsigned)parser->problem_mark.column + 1;
	if (parser->context)
		return policy_fail(b->err, b->file, line, col, field,
				   "invalid YAML: %s (%s); check indentation, quotes and brackets",
				   problem, parser->context);
	return policy_fail(b->err, b->file, line, col, field,
			   "invalid YAML: %s; check indentation, quotes and brackets", problem);
}

static void builder_fini(struct builder *b)
{
	policy_ynode_free(b->root);
	b->root = NULL;
}

int policy_ytree_parse(const char *file, const char *buf, size_t len, struct policy_ynode **out,
		       struct error *err)
{
	_cleanup_(builder_fini) struct builder b = { .file = file, .err = err };
	yaml_parser_t parser;
	const char *nul;
	bool done = false;
	int r = 0;

	*out = NULL;
	if (!buf) {
		if (len)
			return error_set(err, EINVAL, "%s: no buffer", file);
		buf = "";
	}
	if (len > POLICY_MAX_FILE)
		return policy_fail(err, file, 1, 1, "(document)",
				   "the file is %zu bytes; a policy may be at most %d bytes (1 MiB)", len,
				   POLICY_MAX_FILE);
	nul = memchr(buf, '\0', len);
	if (nul) {
		unsigned line, col;
		offset_pos(buf, len, (size_t)(nul - buf), &line, &col);
		return policy_fail(err, file, line, col, "(document)",
				   "the file contains a NUL byte; a policy must be UTF-8 text");
	}

	/* A UTF-8 byte order mark, as some editors write: skipped here
	 * because the reader is told the encoding rather than left to guess
	 * it (a guess would let UTF-16 in). */
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
		buf += 3;
		len -= 3;
	}

	if (!yaml_parser_initialize(&parser))
		return error_set(err, ENOMEM, "%s: out of memory", file);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);

	while (!done) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&parser, &ev)) {
			r = syntax_error(&b, &parser, buf, len);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		r = on_event(&b, &ev);
		yaml_event_delete(&ev);
		if (r < 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (r < 0)
		return r;

	if (!b.root)
		return policy_fail(err, file, 1, 1, "(document)",
				   "the file is empty; a policy needs at least \"version: 1\"");
	*out = steal_pointer(&b.root);
	return 0;
}
