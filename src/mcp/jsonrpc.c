/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON-RPC 2.0 framing for the MCP gateway, and the compact writer of the
 * tree the strict reader (policy/import/json.c) builds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"

static int cmp_members(const void *a, const void *b)
{
	const struct imp_node *const *x = a, *const *y = b;
	return strcmp((*x)->key, (*y)->key);
}

static int write_node(struct buf *b, const struct imp_node *n, bool sorted)
{
	int r;
	switch (n->kind) {
	case IMP_NULL:
		return buf_puts(b, "null");
	case IMP_BOOL:
		return buf_puts(b, n->b ? "true" : "false");
	case IMP_NUM:
		return buf_puts(b, n->str);
	case IMP_STR:
		return buf_json_string(b, n->str, n->len);
	case IMP_LIST:
		if ((r = buf_puts(b, "[")) < 0)
			return r;
		for (size_t i = 0; i < n->n; i++) {
			if ((i && (r = buf_puts(b, ",")) < 0) || (r = write_node(b, &n->v[i], sorted)) < 0)
				return r;
		}
		return buf_puts(b, "]");
	case IMP_MAP: {
		const struct imp_node **order = NULL;
		if (sorted && n->n > 1) {
			if (!(order = malloc(n->n * sizeof(*order))))
				return -ENOMEM;
			for (size_t i = 0; i < n->n; i++)
				order[i] = &n->v[i];
			qsort(order, n->n, sizeof(*order), cmp_members);
		}
		r = buf_puts(b, "{");
		for (size_t i = 0; r >= 0 && i < n->n; i++) {
			const struct imp_node *m = order ? order[i] : &n->v[i];
			if (i)
				r = buf_puts(b, ",");
			if (r >= 0)
				r = buf_json_string(b, m->key, strlen(m->key));
			if (r >= 0)
				r = buf_puts(b, ":");
			if (r >= 0)
				r = write_node(b, m, sorted);
		}
		free(order);
		return r < 0 ? r : buf_puts(b, "}");
	}
	}
	return -EINVAL;
}

int mcp_json_write(struct buf *b, const struct imp_node *n, bool sorted)
{
	return write_node(b, n, sorted);
}

/* One step of a path: a key (len bytes at s), an index, or "[*]". */
static size_t select_at(const struct imp_node *n, const char *p, void (*fn)(const struct imp_node *, void *),
			void *ctx)
{
	if (*p == '.')
		p++;
	if (*p == '\0') {
		fn(n, ctx);
		return 1;
	}
	if (*p == '[') {
		if (n->kind != IMP_LIST)
			return 0;
		const char *end = strchr(p, ']');
		if (!end)
			return 0;
		if (p[1] == '*') {
			size_t c = 0;
			for (size_t i = 0; i < n->n; i++)
				c += select_at(&n->v[i], end + 1, fn, ctx);
			return c;
		}
		size_t idx = strtoul(p + 1, NULL, 10);
		return idx < n->n ? select_at(&n->v[idx], end + 1, fn, ctx) : 0;
	}
	size_t k = strcspn(p, ".[");
	if (n->kind != IMP_MAP)
		return 0;
	for (size_t i = 0; i < n->n; i++)
		if (strlen(n->v[i].key) == k && !memcmp(n->v[i].key, p, k))
			return select_at(&n->v[i], p + k, fn, ctx);
	return 0;
}

size_t mcp_json_select(const struct imp_node *root, const char *path,
		       void (*fn)(const struct imp_node *v, void *ctx), void *ctx)
{
	if (path[0] == '$')
		path++;
	return select_at(root, path, fn, ctx);
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* key as a case-insensitive decoder compares it: ASCII folded, and the
 * two non-ASCII characters Go's encoding/json folds into ASCII letters
 * (U+017F LONG S to 's', U+212A KELVIN SIGN to 'k'). */
static char *fold_key(const char *key)
{
	size_t n = strlen(key), o = 0;
	char *f = malloc(n + 1);
	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)key[i];
		if (c == 0xc5 && (unsigned char)key[i + 1] == 0xbf) {
			f[o++] = 's';
			i++;
		} else if (c == 0xe2 && (unsigned char)key[i + 1] == 0x84 && (unsigned char)key[i + 2] == 0xaa) {
			f[o++] = 'k';
			i += 2;
		} else {
			f[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
	}
	f[o] = '\0';
	return f;
}

/* Two keys of one object that differ only in case ("method" and
 * "Method", "path" and "PATH", "arguments" and "argument\u017f"): a peer
 * that decodes keys without regard to case (Go's encoding/json does,
 * and takes the last) would act on the one we did not check. Refused
 * anywhere in the message. */
static bool keys_collide(const struct imp_node *n, int depth)
{
	if (depth > IMP_MAX_DEPTH || (n->kind != IMP_MAP && n->kind != IMP_LIST))
		return false;
	if (n->kind == IMP_MAP && n->n > 1) {
		char **k = calloc(n->n, sizeof(*k));
		bool dup = !k; /* fail closed */
		for (size_t i = 0; k && i < n->n && !dup; i++)
			dup = !(k[i] = fold_key(n->v[i].key));
		if (!dup) {
			qsort(k, n->n, sizeof(*k), cmp_keys);
			for (size_t i = 1; i < n->n && !dup; i++)
				dup = !strcmp(k[i - 1], k[i]);
		}
		for (size_t i = 0; k && i < n->n; i++)
			free(k[i]);
		free(k);
		if (dup)
			return true;
	}
	for (size_t i = 0; i < n->n; i++)
		if (keys_collide(&n->v[i], depth + 1))
			return true;
	return false;
}

/* A method name of MCP's alphabet. A server that trims, folds case or
 * stops at a NUL would dispatch "tools/call " or "Tools/Call" as
 * tools/call, which the policy decides by its exact name. */
static bool method_ok(const struct imp_node *m)
{
	for (size_t i = 0; i < m->len; i++) {
		char c = m->str[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
		      c == '_' || c == '-' || c == '.' || c == '$'))
			return false;
	}
	return m->len > 0;
}

enum mcp_frame mcp_frame_parse(const char *line, size_t len, struct imp_node **msg, struct error *err)
{
	_cleanup_imp_node_ struct imp_node *m = NULL;
	*msg = NULL;
	if (len > MCP_MAX_MESSAGE) {
		error_set(err, EFBIG, "message of more than %d bytes", MCP_MAX_MESSAGE);
		return MCP_FRAME_TOO_BIG;
	}
	if (imp_json_parse_max("message", line, len, MCP_MAX_MESSAGE, &m, err) < 0)
		return MCP_FRAME_PARSE;
	if (m->kind == IMP_LIST) {
		error_set(err, EINVAL, "a batch (JSON array); send one message per line");
		return MCP_FRAME_INVALID;
	}
	if (m->kind != IMP_MAP) {
		error_set(err, EINVAL, "not a JSON object");
		return MCP_FRAME_INVALID;
	}
	if (keys_collide(m, 0)) {
		error_set(err, EINVAL, "two keys of one object differ only in case");
		return MCP_FRAME_INVALID;
	}
	const struct imp_node *v = imp_get(m, "jsonrpc");
	if (!v || v->kind != IMP_STR || strcmp(v->str, "2.0")) {
		error_set(err, EINVAL, "\"jsonrpc\" is not \"2.0\"");
		return MCP_FRAME_INVALID;
	}
	const struct imp_node *id = imp_get(m, "id"), *method = imp_get(m, "method");
	const struct imp_node *res = imp_get(m, "result"), *er = imp_get(m, "error");
	/* JSON-RPC allows null and fractional ids; MCP does not (its ids are
	 * strings or integers), and a null id could not be told apart from
	 * our own answers to unparseable messages. */
	if (id && !(id->kind == IMP_STR || (id->kind == IMP_NUM && !strpbrk(id->str, ".eE")))) {
		error_set(err, EINVAL, "\"id\" is neither a string nor an integer");
		return MCP_FRAME_INVALID;
	}
	if (method) {
		if (method->kind != IMP_STR || !method_ok(method)) {
			error_set(err, EINVAL, "\"method\" is not a non-empty string of letters, digits and /_-.$");
			return MCP_FRAME_INVALID;
		}
		if (res || er) {
			error_set(err, EINVAL, "a request with \"result\" or \"error\"");
			return MCP_FRAME_INVALID;
		}
		const struct imp_node *params = imp_get(m, "params");
		if (params && params->kind != IMP_MAP) {
			error_set(err, EINVAL, "\"params\" is not an object");
			return MCP_FRAME_INVALID;
		}
	} else {
		if (!id || (!res == !er)) {
			error_set(err, EINVAL, "neither a request (method) nor a response (id and one of result, error)");
			return MCP_FRAME_INVALID;
		}
		if (er && er->kind != IMP_MAP) {
			error_set(err, EINVAL, "\"error\" is not an object");
			return MCP_FRAME_INVALID;
		}
	}
	*msg = m;
	m = NULL;
	return MCP_FRAME_OK;
}
