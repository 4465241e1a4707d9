/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/build.h"
#include "policy/internal.h"
#include "util/buf.h"

static void list_free(struct imp_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].val);
		free(l->v[i].src);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void imp_build_free(struct imp_build *b)
{
	free(b->workspace);
	free(b->workspace_src);
	free(b->baseline_src);
	free(b->protect_defaults_src);
	free(b->wall_src);
	free(b->network_src);
	list_free(&b->read);
	list_free(&b->write);
	list_free(&b->deny);
	list_free(&b->protect);
	list_free(&b->exec);
	list_free(&b->endpoints);
	list_free(&b->notes);
	list_free(&b->skipped);
}

char *imp_src(const struct imp_build *b, const struct imp_node *n, const char *field)
{
	char *s = NULL;

	if (asprintf(&s, "%s (%s:%u:%u)", field, b->file, n ? n->line : 1, n ? n->col : 1) < 0)
		return NULL;
	return s;
}

static int vfail(struct imp_build *b, const struct imp_node *n, const char *field, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static int vfail(struct imp_build *b, const struct imp_node *n, const char *field, const char *fmt, va_list ap)
{
	char msg[768];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return policy_fail(b->err, b->file, n ? n->line : 1, n ? n->col : 1, field, "%s", msg);
}

int imp_fail(struct imp_build *b, const struct imp_node *n, const char *field, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfail(b, n, field, fmt, ap);
	va_end(ap);
	return r;
}

static int list_push(struct imp_build *b, struct imp_list *l, char *val, char *src)
{
	struct imp_entry *v;

	if (!val || !src) {
		free(val);
		free(src);
		return error_set(b->err, ENOMEM, "out of memory");
	}
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v) {
		free(val);
		free(src);
		return error_set(b->err, ENOMEM, "out of memory");
	}
	l->v = v;
	memset(&v[l->n], 0, sizeof(v[l->n]));
	v[l->n].val = val;
	v[l->n].src = src;
	l->n++;
	return 0;
}

struct imp_entry *imp_push(struct imp_build *b, struct imp_list *l, const char *val, const struct imp_node *n,
			   const char *field)
{
	if (list_push(b, l, strdup(val), imp_src(b, n, field)) < 0)
		return NULL;
	return &l->v[l->n - 1];
}

int imp_narrow(struct imp_build *b, const struct imp_node *n, const char *field, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!b->narrow)
		return imp_fail(b, n, field,
				"%s; airlock would grant less than %s does (pass --narrow to accept that)", msg,
				b->format);
	return list_push(b, &b->notes, strdup(msg), imp_src(b, n, field));
}

int imp_skip(struct imp_build *b, const struct imp_node *n, const char *field, const char *why)
{
	return list_push(b, &b->skipped, strdup(why), imp_src(b, n, field));
}

int imp_add(struct imp_build *b, struct imp_list *l, const char *val, const struct imp_node *n, const char *field)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].val, val))
			return imp_fail(b, n, field, "\"%s\" is also given by %s", val, l->v[i].src);
	return list_push(b, l, strdup(val), imp_src(b, n, field));
}

int imp_known_keys(struct imp_build *b, const struct imp_node *map, const char *field, const char *const *known)
{
	for (size_t i = 0; i < map->n; i++) {
		size_t k = 0;
		while (known[k] && strcmp(known[k], map->v[i].key))
			k++;
		if (known[k])
			continue;
		char f[POLICY_FIELD_MAX] = "";
		if (field && *field)
			snprintf(f, sizeof(f), "%s", field);
		policy_field_append_key(f, sizeof(f), map->v[i].key, strlen(map->v[i].key));
		char list[512] = "";
		for (k = 0; known[k]; k++) {
			strncat(list, k ? ", " : "", sizeof(list) - strlen(list) - 1);
			strncat(list, known[k], sizeof(list) - strlen(list) - 1);
		}
		return imp_fail(b, &map->v[i], f, "unknown key; %s%s has no such field that airlock knows how to "
				"import (known: %s)", b->format, field && *field ? " here" : "", list);
	}
	return 0;
}

int imp_want(struct imp_build *b, const struct imp_node *n, const char *field, enum imp_kind kind)
{
	if (n->kind == kind)
		return 0;
	return imp_fail(b, n, field, "is %s; expected %s", imp_kind_name(n->kind), imp_kind_name(kind));
}

int imp_host(struct imp_build *b, const struct imp_node *n, const char *field, char *out)
{
	int r = imp_want(b, n, field, IMP_STR);
	if (r < 0)
		return r;
	switch (policy_host_normalize(n->str, out)) {
	case POLICY_HOST_NAME:
	case POLICY_HOST_WILDCARD:
	case POLICY_HOST_IP:
		return 0;
	case POLICY_HOST_STAR_ALL:
		return imp_fail(b, n, field, "\"*\" (every host) cannot be expressed: airlock allows hosts by name");
	case POLICY_HOST_URL:
	case POLICY_HOST_PORT:
		return imp_fail(b, n, field, "\"%s\" is not a host name alone", n->str);
	case POLICY_HOST_STAR_POS:
	case POLICY_HOST_STAR_TLD:
	case POLICY_HOST_STAR_IP:
		return imp_fail(b, n, field, "\"%s\": airlock wildcards are \"*.\" and a domain of two labels or "
				"more (\"*.example.com\"); this pattern cannot be expressed", n->str);
	case POLICY_HOST_EMPTY:
	case POLICY_HOST_CHAR:
	case POLICY_HOST_LABEL:
	case POLICY_HOST_LABEL_LONG:
	case POLICY_HOST_TOO_LONG:
	case POLICY_HOST_NUMERIC:
	case POLICY_HOST_BAD_IPV6:
		break;
	}
	return imp_fail(b, n, field, "\"%s\" is not a host name, wildcard or address airlock accepts", n->str);
}

int imp_add_host(struct imp_build *b, const char *host, const struct imp_node *n, const char *field)
{
	int r;

	/* An entry an earlier one covers adds nothing, and airlock refuses
	 * it (the first match decides); say so instead. */
	for (size_t k = 0; k < b->endpoints.n; k++)
		if (policy_host_covers(b->endpoints.v[k].val, host)) {
			char why[POLICY_HOST_MAX + 256];
			snprintf(why, sizeof(why), "\"%s\" is already allowed by %s", host, b->endpoints.v[k].src);
			return imp_skip(b, n, field, why);
		}
	if ((r = imp_add(b, &b->endpoints, host, n, field)) < 0)
		return r;
	struct imp_entry *e = &b->endpoints.v[b->endpoints.n - 1];
	e->ports[0] = 80;
	e->ports[1] = 443;
	e->n_ports = 2;
	return 0;
}

int imp_paths(struct imp_build *b, const struct imp_node *n, const char *field, const char *not_absolute,
	      imp_path_fn fn, void *ctx)
{
	char f[POLICY_FIELD_MAX];
	int r = imp_want(b, n, field, IMP_LIST);

	for (size_t i = 0; r == 0 && i < n->n; i++) {
		const struct imp_node *e = &n->v[i];
		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		if ((r = imp_want(b, e, f, IMP_STR)) < 0)
			break;
		if (e->str[0] != '/')
			return imp_fail(b, e, f, "\"%s\" is not %s", e->str, not_absolute);
		if (strpbrk(e->str, "*?["))
			return imp_fail(b, e, f, "\"%s\" is a glob; airlock paths are literal", e->str);
		r = fn(b, e, f, i, ctx);
	}
	return r;
}

int imp_filesystem(struct imp_build *b, const struct imp_node *root, const char *key,
		   int (*fn)(struct imp_build *b, const struct imp_node *fs))
{
	const struct imp_node *fs = imp_get(root, key);
	int r = fs ? fn(b, fs)
		   : imp_fail(b, root, key, "is missing; airlock always gives the agent a workspace, so a policy that "
			      "grants no path cannot be expressed");

	if (r < 0)
		return r;
	if (b->narrow)
		return imp_narrow(b, fs, key, "airlock's protected paths (git hooks, shell rc files, ...) stay read-only");
	b->protect_defaults = 0;
	free(b->protect_defaults_src);
	if (asprintf(&b->protect_defaults_src, "%s has no protected paths (with --narrow they stay on)", b->format) < 0) {
		b->protect_defaults_src = NULL;
		return error_set(b->err, ENOMEM, "out of memory");
	}
	return 0;
}

/* ---- output ---- */

/* s as print(f, s) writes it; malloc'd, NULL when out of memory. */
static char *printed(void (*print)(FILE *f, const char *s), const char *s)
{
	char *t = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&t, &tl);

	if (!f)
		return NULL;
	print(f, s);
	if (fclose(f) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

static int put_comment(struct buf *o, const char *indent, const char *prefix, const char *s)
{
	char *t = printed(policy_print_comment, s);
	if (!t)
		return -ENOMEM;
	int r = buf_printf(o, "%s# %s%s\n", indent, prefix, t);
	free(t);
	return r;
}

static int put_string(struct buf *o, const char *s)
{
	char *t = printed(policy_print_string, s);
	if (!t)
		return -ENOMEM;
	int r = buf_puts(o, t);
	free(t);
	return r;
}

static int put_list(struct buf *o, const char *key, const struct imp_list *l)
{
	int r = 0;

	if (!l->n)
		return 0;
	if ((r = buf_printf(o, "  %s:\n", key)) < 0)
		return r;
	for (size_t i = 0; i < l->n && r >= 0; i++) {
		if ((r = put_comment(o, "    ", "from ", l->v[i].src)) < 0)
			break;
		if ((r = buf_puts(o, "    - ")) < 0 || (r = put_string(o, l->v[i].val)) < 0)
			break;
		r = buf_puts(o, "\n");
	}
	return r;
}

/* A comment line at the top of the output. */
static int put_note(struct buf *o, const char *fmt, ...) PRINTF_LIKE(2, 3);
static int put_note(struct buf *o, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	int r = put_comment(o, "", "", s);
	free(s);
	return r;
}

static int emit(struct imp_build *b, struct buf *o)
{
	int r;

	if ((r = put_comment(o, "", "", "airlock policy imported from a settings file; see docs/import.md")) < 0)
		return r;
	if ((r = put_note(o, "source: %s (%s)", b->file, b->format)) < 0)
		return r;
	for (size_t i = 0; i < b->notes.n; i++)
		if ((r = put_note(o, "narrowed (--narrow): %s: %s", b->notes.v[i].src, b->notes.v[i].val)) < 0)
			return r;
	for (size_t i = 0; i < b->skipped.n; i++)
		if ((r = put_note(o, "not imported: %s: %s", b->skipped.v[i].src, b->skipped.v[i].val)) < 0)
			return r;
	if ((r = buf_puts(o, "version: 1\n")) < 0)
		return r;
	if (b->workspace || b->wall || b->protect.n) {
		if ((r = buf_puts(o, "sandbox:\n")) < 0)
			return r;
		if (b->workspace) {
			if ((r = put_comment(o, "  ", "from ", b->workspace_src)) < 0 ||
			    (r = buf_puts(o, "  workspace: ")) < 0 || (r = put_string(o, b->workspace)) < 0 ||
			    (r = buf_puts(o, "\n")) < 0)
				return r;
		}
		if (b->wall) {
			if ((r = put_comment(o, "  ", "from ", b->wall_src)) < 0 ||
			    (r = buf_printf(o, "  limits:\n    wall: %" PRIu64 "s\n", b->wall)) < 0)
				return r;
		}
		/* The protect entries stand for what the source keeps
		 * read-only: in the default hold mode a write there would
		 * succeed inside and be held, which the source never allows. */
		if (b->protect.n &&
		    (r = buf_puts(o, "  # filesystem.protect below is what the source keeps read-only: refused, not held\n"
				     "  workspace_mode: direct\n")) < 0)
			return r;
	}
	if ((r = buf_puts(o, "filesystem:\n")) < 0)
		return r;
	if (b->baseline >= 0) {
		if ((r = put_comment(o, "  ", "from ", b->baseline_src)) < 0 ||
		    (r = buf_printf(o, "  baseline: %s\n", b->baseline ? "true" : "false")) < 0)
			return r;
	}
	if (b->protect_defaults >= 0) {
		if ((r = put_comment(o, "  ", "", b->protect_defaults_src)) < 0 ||
		    (r = buf_printf(o, "  protect_defaults: %s\n", b->protect_defaults ? "true" : "false")) < 0)
			return r;
	}
	if ((r = put_list(o, "read", &b->read)) < 0 || (r = put_list(o, "write", &b->write)) < 0 ||
	    (r = put_list(o, "deny", &b->deny)) < 0 || (r = put_list(o, "protect", &b->protect)) < 0)
		return r;
	if (!b->read.n && !b->write.n && !b->deny.n && !b->protect.n && b->baseline < 0 && b->protect_defaults < 0 &&
	    (r = buf_puts(o, "  read: []\n")) < 0)
		return r;
	if (b->exec.n) {
		if ((r = buf_puts(o, "process:\n")) < 0)
			return r;
		struct imp_list *l = &b->exec;
		if ((r = put_list(o, "exec", l)) < 0)
			return r;
	}
	if (!b->network) {
		return put_comment(o, "", "", "no network section: the agent has no network access");
	}
	if ((r = put_comment(o, "", "from ", b->network_src)) < 0 || (r = buf_puts(o, "network:\n")) < 0)
		return r;
	if (!b->endpoints.n)
		return buf_puts(o, "  endpoints: []\n");
	if ((r = buf_puts(o, "  endpoints:\n")) < 0)
		return r;
	for (size_t i = 0; i < b->endpoints.n; i++) {
		const struct imp_entry *e = &b->endpoints.v[i];
		if ((r = put_comment(o, "    ", "from ", e->src)) < 0 || (r = buf_puts(o, "    - host: ")) < 0 ||
		    (r = put_string(o, e->val)) < 0 || (r = buf_puts(o, "\n      ports: [")) < 0)
			return r;
		for (size_t k = 0; k < e->n_ports; k++)
			if ((r = buf_printf(o, "%s%u", k ? ", " : "", e->ports[k])) < 0)
				return r;
		if ((r = buf_puts(o, "]\n")) < 0)
			return r;
		if (e->access && (r = buf_printf(o, "      tls: intercept\n      access: %s\n", e->access)) < 0)
			return r;
		if (e->methods && (r = buf_printf(o, "      tls: intercept\n      rules:\n        - methods: %s\n",
						 e->methods)) < 0)
			return r;
	}
	return 0;
}

int imp_emit(struct imp_build *b, char **out)
{
	struct buf o = { 0 };
	int r = emit(b, &o);

	if (r < 0) {
		buf_free(&o);
		return error_set(b->err, ENOMEM, "out of memory");
	}
	*out = o.data;
	return 0;
}

/* ---- entry points ---- */

static const char *const format_names[] = {
	[IMP_FORMAT_SRT] = "srt",
	[IMP_FORMAT_CODEX] = "codex",
	[IMP_FORMAT_MXC] = "mxc",
	[IMP_FORMAT_OPENSHELL] = "openshell",
};

bool imp_format_from_name(const char *name, enum imp_format *out)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (!strcmp(name, format_names[i])) {
			*out = (enum imp_format)i;
			return true;
		}
	return false;
}

const char *imp_format_name(enum imp_format f)
{
	return format_names[f];
}

int imp_convert(enum imp_format f, const char *file, const char *buf, size_t len, bool narrow, char **yaml,
		struct error *err)
{
	_cleanup_imp_node_ struct imp_node *root = NULL;
	struct imp_build b = { .file = file, .narrow = narrow, .err = err, .baseline = -1, .protect_defaults = -1 };
	int r;

	switch (f) {
	case IMP_FORMAT_SRT:
		b.format = "srt";
		r = imp_json_parse(file, buf, len, &root, err);
		break;
	case IMP_FORMAT_MXC:
		b.format = "MXC";
		r = imp_json_parse(file, buf, len, &root, err);
		break;
	case IMP_FORMAT_CODEX:
		b.format = "Codex";
		r = imp_toml_parse(file, buf, len, &root, err);
		break;
	case IMP_FORMAT_OPENSHELL:
		b.format = "OpenShell";
		r = imp_yaml_parse(file, buf, len, &root, err);
		break;
	default:
		return error_set(err, EINVAL, "unknown format");
	}
	if (r < 0)
		return r;
	if (root->kind != IMP_MAP) {
		r = imp_fail(&b, root, "(top level)", "is %s; expected a map", imp_kind_name(root->kind));
		goto out;
	}
	switch (f) {
	case IMP_FORMAT_SRT: r = imp_srt(&b, root); break;
	case IMP_FORMAT_MXC: r = imp_mxc(&b, root); break;
	case IMP_FORMAT_CODEX: r = imp_codex(&b, root); break;
	case IMP_FORMAT_OPENSHELL: r = imp_openshell(&b, root); break;
	}
	if (r == 0)
		r = imp_emit(&b, yaml);
out:
	imp_build_free(&b);
	return r;
}
