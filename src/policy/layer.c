/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Enterprise layers: the developer's policy narrowed by enterprise ceilings.
 *
 * WARNING: every function here may only remove from the developer's policy
 * or replace an entry by a narrower one; none may add a grant the
 * developer's policy did not already hold, except a lock, which replaces a
 * field by the enterprise's value, itself narrowed by every other ceiling.
 * Where the intersection of two patterns is not a single pattern, the
 * entry is cut (narrower than the true intersection) and the cut is said.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/glob.h"
#include "policy/internal.h"
#include "policy/layer.h"
#include "policy/mcp.h"
#include "util/cleanup.h"

#define MAX_ENTERPRISE_FILES 256

/* Fields an enterprise file may lock: the developer's value is replaced by
 * the enterprise file's (its default when the file does not write it). */
static const char *const lockable[] = {
	"sandbox.boundary", "sandbox.mode",	   "sandbox.limits",	 "filesystem.baseline",
	"filesystem.read",  "filesystem.write",    "filesystem.deny",	 "filesystem.protect",
	"filesystem.sockets",
	"process.exec",	    "process.env",	   "network",		 "credentials",
	"identity",	    "audit",		   NULL,
};

struct given {
	char name[96];
	unsigned line;
};

struct ceiling {
	struct policy *pol;
	const char *file; /* owned by the effective policy's layer_files */
	struct given *given;
	size_t n_given;
	unsigned section_line; /* line of `enterprise:`, or 0 */
	bool refuse;
	unsigned refuse_line;
	const char *lock[16];
	unsigned lock_line[16];
	bool swapped[16]; /* this file's lock took effect (no earlier file locked the field) */
	size_t n_lock;
	int boundary; /* required minimum, -1: none */
	unsigned boundary_line;
	bool audit, identity_header, forbid_observe;
	unsigned audit_line, identity_line, observe_line;
};

struct lctx {
	struct policy *p;
	struct policy_layer_report *rep;
	struct error *err;
};

/* ---- small helpers ---- */

static int oom(struct lctx *c)
{
	return error_set(c->err, ENOMEM, "enterprise: out of memory");
}

void policy_strv_free(char **v, size_t n)
{
	if (v)
		for (size_t i = 0; i < n; i++)
			free(v[i]);
	free(v);
}

void policy_layer_report_free(struct policy_layer_report *r)
{
	if (!r)
		return;
	policy_strv_free(r->msgs, r->n_msgs);
	free(r->refuse_by);
	free(r->audit_by);
	memset(r, 0, sizeof(*r));
}

static bool str_eq(const char *a, const char *b)
{
	return (!a || !b) ? a == b : strcmp(a, b) == 0;
}

static unsigned given_line(const struct ceiling *e, const char *name)
{
	for (size_t i = 0; i < e->n_given; i++)
		if (strcmp(e->given[i].name, name) == 0)
			return e->given[i].line;
	return 0;
}

static bool locked_here(const struct ceiling *e, const char *field)
{
	for (size_t i = 0; i < e->n_lock; i++)
		if (strcmp(e->lock[i], field) == 0 && e->swapped[i])
			return true;
	return false;
}

static void loc_text(const struct policy_loc *l, char *buf, size_t size)
{
	if (l->line > 0 && l->file)
		snprintf(buf, size, "%s:%u", l->file, l->line);
	else
		snprintf(buf, size, "%s", "(built-in default)");
}

/* One cut: "DEV:LINE: FIELD: WHAT; enterprise FILE:LINE". */
PRINTF_LIKE(5, 6)
static int cut(struct lctx *c, const struct policy_loc *dev, const struct ceiling *e, unsigned eline,
	       const char *fmt, ...)
{
	char what[768], where[300];
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	loc_text(dev, where, sizeof(where));
	if (asprintf(&msg, "%s: %s (enterprise rule %s:%u)", where, what, e->file, eline ? eline : 1) < 0)
		return oom(c);
	char **v = realloc(c->rep->msgs, (c->rep->n_msgs + 1) * sizeof(*v));
	if (!v) {
		free(msg);
		return oom(c);
	}
	v[c->rep->n_msgs++] = msg;
	c->rep->msgs = v;
	return 0;
}

static void quote(const char *s, char *buf, size_t size)
{
	policy_quote(s, strlen(s), buf, size);
}

/* ---- patterns ---- */

/* Containment of request globs ('*' within a segment, '**' across),
 * decided by the pattern automata (policy/glob.h). A pattern that cannot
 * be compiled, or a question too large to answer, is a "no": the entry
 * is then cut, which fails closed. */
bool policy_glob_subset(const char *a, const char *b)
{
	return policy_glob_subset_any(a, &b, 1);
}

bool policy_glob_subset_any(const char *a, const char *const *b, size_t n)
{
	struct error err = { 0 };
	struct glob *ga = NULL, **gb = NULL;
	bool sub = false;
	size_t ok = 0;

	for (size_t i = 0; i < n; i++)
		if (!b[i])
			return true;
	if (!a || n == 0)
		return false;
	if (strcmp(a, b[0]) == 0)
		return true;
	if (!(gb = calloc(n, sizeof(*gb))))
		return false;
	if (glob_compile(a, GLOB_PATH, &ga, &err) < 0)
		goto out;
	for (ok = 0; ok < n; ok++)
		if (glob_compile(b[ok], GLOB_PATH, &gb[ok], &err) < 0)
			goto out;
	if (glob_subset(ga, (const struct glob *const *)gb, n, &sub, NULL, &err) < 0)
		sub = false;
out:
	glob_free(ga);
	for (size_t i = 0; i < ok; i++)
		glob_free(gb[i]);
	free(gb);
	return sub;
}

/* Whether two request globs share a request (an error: assume they do,
 * so that the cut is said). */
static bool glob_meets(const char *a, const char *b)
{
	struct error err = { 0 };
	struct glob *ga = NULL, *gb = NULL;
	bool ov = true;

	if (!a || !b)
		return true;
	if (glob_compile(a, GLOB_PATH, &ga, &err) == 0 && glob_compile(b, GLOB_PATH, &gb, &err) == 0 &&
	    glob_overlap(ga, gb, &ov, NULL, &err) < 0)
		ov = true;
	glob_free(ga);
	glob_free(gb);
	return ov;
}

bool policy_host_pattern_covers(const char *a, const char *b)
{
	return policy_host_covers(a, b);
}

/* ---- the walk over every loc ---- */

typedef void (*loc_fn)(struct policy_loc *l, void *ctx);

static void walk_paths(struct policy_paths *ps, loc_fn fn, void *ctx)
{
	for (size_t i = 0; i < ps->n; i++)
		fn(&ps->v[i].loc, ctx);
}

static void walk_locs(struct policy *p, loc_fn fn, void *ctx)
{
	struct policy_loc *origin = (struct policy_loc *)&p->origin;
	size_t n_origin = sizeof(p->origin) / sizeof(struct policy_loc);

	for (size_t i = 0; i < n_origin; i++)
		fn(&origin[i], ctx);
	fn(&p->sandbox.workspace_loc, ctx);
	walk_paths(&p->filesystem.read, fn, ctx);
	walk_paths(&p->filesystem.write, fn, ctx);
	walk_paths(&p->filesystem.deny, fn, ctx);
	walk_paths(&p->filesystem.protect, fn, ctx);
	walk_paths(&p->filesystem.sockets, fn, ctx);
	walk_paths(&p->process.exec, fn, ctx);
	if (p->process.env_pass_loc)
		for (size_t i = 0; i < p->process.n_env_pass; i++)
			fn(&p->process.env_pass_loc[i], ctx);
	for (size_t i = 0; i < p->process.n_env_set; i++)
		fn(&p->process.env_set[i].loc, ctx);
	fn(&p->network.loc, ctx);
	for (size_t i = 0; i < p->network.n_endpoints; i++) {
		struct policy_endpoint *ep = &p->network.endpoints[i];
		fn(&ep->loc, ctx);
		for (size_t j = 0; j < ep->n_rules; j++)
			fn(&ep->rules[j].loc, ctx);
	}
	for (size_t i = 0; i < p->network.n_allow_private; i++)
		fn(&p->network.allow_private[i].loc, ctx);
	for (size_t i = 0; i < p->network.n_resolve; i++)
		fn(&p->network.resolve[i].loc, ctx);
	for (size_t i = 0; i < p->n_credentials; i++) {
		struct policy_credential *cr = &p->credentials[i];
		fn(&cr->loc, ctx);
		for (size_t j = 0; j < cr->n_bindings; j++) {
			fn(&cr->bindings[j].loc, ctx);
			if (cr->bindings[j].git)
				fn(&cr->bindings[j].git->loc, ctx);
		}
	}
}

static void mark_developer(struct policy_loc *l, void *ctx)
{
	(void)ctx;
	if (l->line > 0 && !l->layer)
		l->layer = "developer";
}

static void mark_enterprise(struct policy_loc *l, void *ctx)
{
	/* The enterprise policy is freed after layering: its entries moved
	 * into the effective policy must name a file the latter owns. */
	if (l->line > 0) {
		l->file = ctx;
		l->layer = "enterprise";
	} else {
		l->file = POLICY_DEFAULT_FILE;
	}
}

void policy_mark_developer(struct policy *p)
{
	walk_locs(p, mark_developer, NULL);
}

/* ---- which files ---- */

static int strv_push(char ***v, size_t *n, const char *s)
{
	if (*n >= MAX_ENTERPRISE_FILES)
		return -E2BIG;
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR's "*.yaml" files (regular files; not hidden), sorted, appended. */
static int add_dir(const char *dir, char ***v, size_t *n, struct error *err)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t nn = 0;
	struct dirent *de;
	int r = 0;

	if (!d)
		return error_sys(err, errno, "%s: cannot read the enterprise policy directory", dir);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		if ((r = strv_push(&names, &nn, de->d_name)) < 0)
			break;
	}
	closedir(d);
	if (r < 0) {
		policy_strv_free(names, nn);
		return error_set(err, -r, "%s: too many enterprise policy files", dir);
	}
	if (nn)
		qsort(names, nn, sizeof(*names), name_cmp);
	for (size_t i = 0; i < nn && r == 0; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		r = strv_push(v, n, path);
	}
	policy_strv_free(names, nn);
	if (r < 0)
		return error_set(err, -r, "%s: too many enterprise policy files", dir);
	return 0;
}

int policy_enterprise_files(const char *extra, char ***files, size_t *n, struct error *err)
{
	char **v = NULL;
	size_t nv = 0;
	struct stat st;
	int r = 0;

	*files = NULL;
	*n = 0;
	/* A missing system file is the common case; an unreadable one is
	 * an error, found when it is opened. */
	if (lstat(POLICY_ENTERPRISE_FILE, &st) == 0 && (r = strv_push(&v, &nv, POLICY_ENTERPRISE_FILE)) < 0)
		goto fail;
	if (stat(POLICY_ENTERPRISE_DIR, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (r = add_dir(POLICY_ENTERPRISE_DIR, &v, &nv, err)) < 0)
		goto out;
	char abs[PATH_MAX];
	if (extra && extra[0] != '/') {
		/* The proxy is handed these names: make them absolute. */
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)) || snprintf(abs, sizeof(abs), "%s/%s", cwd, extra) >= (int)sizeof(abs)) {
			r = error_set(err, ENAMETOOLONG, "%s: cannot make the enterprise policy's path absolute", extra);
			goto out;
		}
		extra = abs;
	}
	if (extra) {
		if (stat(extra, &st) < 0) {
			r = error_sys(err, errno, "%s: cannot open the enterprise policy", extra);
			goto out;
		}
		if (S_ISDIR(st.st_mode))
			r = add_dir(extra, &v, &nv, err);
		else if ((r = strv_push(&v, &nv, extra)) < 0)
			goto fail;
		if (r < 0)
			goto out;
	}
	*files = v;
	*n = nv;
	return 0;
fail:
	r = error_set(err, -r, "enterprise policy files: %s", strerror(-r));
out:
	policy_strv_free(v, nv);
	return r;
}

/* ---- reading an enterprise file ---- */

static void collect_given(struct ceiling *e, const struct policy_ynode *n, const char *prefix, int depth)
{
	if (n->type != POLICY_YNODE_MAP || depth > 3)
		return;
	for (size_t i = 0; i + 1 < n->n; i += 2) {
		const struct policy_ynode *k = n->items[i];
		char name[96];
		snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "." : "", k->str);
		struct given *g = realloc(e->given, (e->n_given + 1) * sizeof(*g));
		if (!g)
			return; /* treated as not given: a section then narrows nothing */
		e->given = g;
		snprintf(g[e->n_given].name, sizeof(g[e->n_given].name), "%s", name);
		g[e->n_given].line = k->line;
		e->n_given++;
		collect_given(e, n->items[i + 1], name, depth + 1);
	}
}

#define EFAIL(e, n, field, ...) policy_fail(err, (e)->file, (n)->line, (n)->col, (field), __VA_ARGS__)

static int scalar_bool(struct ceiling *e, const struct policy_ynode *n, const char *field, bool *out,
		       struct error *err)
{
	if (n->type == POLICY_YNODE_SCALAR && !n->quoted && strcmp(n->str, "true") == 0)
		*out = true;
	else if (n->type == POLICY_YNODE_SCALAR && !n->quoted && strcmp(n->str, "false") == 0)
		*out = false;
	else
		return EFAIL(e, n, field, "expected true or false");
	return 0;
}

static int load_section(struct ceiling *e, const struct policy_ynode *sec, struct error *err)
{
	if (sec->type != POLICY_YNODE_MAP)
		return EFAIL(e, sec, "enterprise",
			     "expected a map with on_excess, lock, require, forbid_observe");
	for (size_t i = 0; i + 1 < sec->n; i += 2) {
		const struct policy_ynode *k = sec->items[i], *v = sec->items[i + 1];
		int r;

		if (strcmp(k->str, "on_excess") == 0) {
			if (v->type != POLICY_YNODE_SCALAR ||
			    (strcmp(v->str, "warn") != 0 && strcmp(v->str, "refuse") != 0))
				return EFAIL(e, v, "enterprise.on_excess", "expected warn or refuse");
			e->refuse = strcmp(v->str, "refuse") == 0;
			e->refuse_line = v->line;
		} else if (strcmp(k->str, "forbid_observe") == 0) {
			if ((r = scalar_bool(e, v, "enterprise.forbid_observe", &e->forbid_observe, err)) < 0)
				return r;
			e->observe_line = v->line;
		} else if (strcmp(k->str, "lock") == 0) {
			if (v->type != POLICY_YNODE_SEQ)
				return EFAIL(e, v, "enterprise.lock", "expected a list of field names");
			for (size_t j = 0; j < v->n; j++) {
				const struct policy_ynode *f = v->items[j];
				size_t x;
				char field[64];
				snprintf(field, sizeof(field), "enterprise.lock[%zu]", j);
				for (x = 0; lockable[x] && f->type == POLICY_YNODE_SCALAR; x++)
					if (strcmp(lockable[x], f->str) == 0)
						break;
				if (f->type != POLICY_YNODE_SCALAR || !lockable[x])
					return EFAIL(e, f, field,
						     "not a field that can be locked; valid: sandbox.boundary, "
						     "sandbox.mode, sandbox.limits, filesystem.baseline, "
						     "filesystem.read, filesystem.write, filesystem.deny, "
						     "filesystem.protect, filesystem.sockets, process.exec, process.env, network, "
						     "credentials, identity, audit");
				if (e->n_lock >= sizeof(e->lock) / sizeof(e->lock[0]))
					return EFAIL(e, f, field, "too many locks");
				for (size_t y = 0; y < e->n_lock; y++)
					if (e->lock[y] == lockable[x])
						return EFAIL(e, f, field, "%s is locked twice", lockable[x]);
				e->lock[e->n_lock] = lockable[x];
				e->lock_line[e->n_lock++] = f->line;
			}
		} else if (strcmp(k->str, "require") == 0) {
			if (v->type != POLICY_YNODE_MAP)
				return EFAIL(e, v, "enterprise.require",
					     "expected a map with boundary, audit, identity_header");
			for (size_t j = 0; j + 1 < v->n; j += 2) {
				const struct policy_ynode *rk = v->items[j], *rv = v->items[j + 1];
				if (strcmp(rk->str, "boundary") == 0) {
					static const char *const names[] = { "process", "gvisor", "microvm" };
					e->boundary = -1;
					for (int b = 0; b < 3; b++)
						if (rv->type == POLICY_YNODE_SCALAR && strcmp(rv->str, names[b]) == 0)
							e->boundary = b;
					if (e->boundary < 0)
						return EFAIL(e, rv, "enterprise.require.boundary",
							     "expected process, gvisor or microvm");
					e->boundary_line = rv->line;
				} else if (strcmp(rk->str, "audit") == 0) {
					if ((r = scalar_bool(e, rv, "enterprise.require.audit", &e->audit, err)) < 0)
						return r;
					e->audit_line = rv->line;
				} else if (strcmp(rk->str, "identity_header") == 0) {
					if ((r = scalar_bool(e, rv, "enterprise.require.identity_header",
							     &e->identity_header, err)) < 0)
						return r;
					e->identity_line = rv->line;
				} else {
					return EFAIL(e, rk, "enterprise.require",
						     "unknown key; valid keys here are boundary, audit, identity_header");
				}
			}
		} else {
			return EFAIL(e, k, "enterprise",
				     "unknown key; valid keys here are on_excess, lock, require, forbid_observe");
		}
	}
	return 0;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static int load_ceiling(struct ceiling *e, const char *path, const struct policy_ctx *ctx, struct error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ char *dir = NULL;
	_cleanup_(policy_ynode_freep) struct policy_ynode *root = NULL;
	struct policy_ynode *sec_key = NULL, *sec = NULL;
	size_t len = 0;
	int r;

	e->boundary = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return error_sys(err, errno, "%s: cannot open the enterprise policy", path);
	if ((r = policy_read_bounded(fd, path, "the enterprise policy", &buf, &len, err)) < 0)
		return r;
	if (len > POLICY_MAX_FILE)
		return policy_fail(err, path, 1, 1, "(document)", "the file is larger than 1 MiB");
	if ((r = policy_ytree_parse(path, buf, len, &root, err)) < 0)
		return r;
	/* The enterprise section is taken out before the rest is read as an
	 * ordinary policy, which does not know the key. */
	if (root->type == POLICY_YNODE_MAP)
		for (size_t i = 0; i + 1 < root->n; i += 2)
			if (strcmp(root->items[i]->str, "enterprise") == 0) {
				sec_key = root->items[i];
				sec = root->items[i + 1];
				memmove(&root->items[i], &root->items[i + 2], (root->n - i - 2) * sizeof(*root->items));
				root->n -= 2;
				break;
			}
	if (sec) {
		e->section_line = sec_key->line;
		r = load_section(e, sec, err);
		policy_ynode_free(sec_key);
		policy_ynode_free(sec);
		if (r < 0)
			return r;
	}
	collect_given(e, root, "", 1);
	if (!(dir = dir_of(path)))
		return error_set(err, ENOMEM, "%s: out of memory", path);
	return policy_load_tree(path, dir, root, ctx, &e->pol, err);
}

/* ---- locks ---- */

static const struct policy_loc *first_set(const struct policy_loc *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i]->line > 0)
			return v[i];
	return NULL;
}

/* Where the developer's policy sets field, or NULL when it does not. */
static const struct policy_loc *dev_set(const struct policy *p, const char *field)
{
	const struct policy_paths *ps = NULL;
	const struct policy_loc *l = NULL;

	if (!strcmp(field, "sandbox.boundary"))
		l = &p->origin.boundary;
	else if (!strcmp(field, "sandbox.mode"))
		l = &p->origin.mode;
	else if (!strcmp(field, "sandbox.limits")) {
		const struct policy_loc *v[] = { &p->origin.memory, &p->origin.pids, &p->origin.open_files,
						 &p->origin.cpu, &p->origin.wall };
		return first_set(v, 5);
	} else if (!strcmp(field, "filesystem.baseline"))
		l = &p->origin.baseline;
	else if (!strcmp(field, "filesystem.read"))
		ps = &p->filesystem.read;
	else if (!strcmp(field, "filesystem.write"))
		ps = &p->filesystem.write;
	else if (!strcmp(field, "filesystem.deny"))
		ps = &p->filesystem.deny;
	else if (!strcmp(field, "filesystem.protect")) {
		const struct policy_loc *v[] = { &p->origin.protect_defaults, &p->origin.protect_build };
		if ((l = first_set(v, 2)))
			return l;
		ps = &p->filesystem.protect;
	} else if (!strcmp(field, "filesystem.sockets"))
		ps = &p->filesystem.sockets;
	else if (!strcmp(field, "process.exec"))
		l = &p->origin.exec;
	else if (!strcmp(field, "process.env")) {
		const struct policy_loc *v[] = { &p->origin.env_pass, &p->origin.env_set };
		return first_set(v, 2);
	} else if (!strcmp(field, "network"))
		l = &p->network.loc;
	else if (!strcmp(field, "credentials"))
		return p->n_credentials ? &p->credentials[0].loc : NULL;
	else if (!strcmp(field, "identity")) {
		const struct policy_loc *v[] = { &p->origin.agent, &p->origin.identity_header };
		return first_set(v, 2);
	} else if (!strcmp(field, "audit")) {
		const struct policy_loc *v[] = { &p->origin.audit_enabled, &p->origin.audit_dir,
						 &p->origin.audit_max_size };
		return first_set(v, 3);
	}
	if (ps) {
		for (size_t i = 0; i < ps->n; i++)
			if (ps->v[i].loc.line > 0)
				return &ps->v[i].loc;
		return NULL;
	}
	return l && l->line > 0 ? l : NULL;
}

#define SWAP(a, b)                      \
	do {                            \
		__typeof__(a) tmp_ = (a); \
		(a) = (b);              \
		(b) = tmp_;             \
	} while (0)

/* Exchange field between the effective policy and the ceiling: the
 * developer's value is freed with the ceiling. */
static void swap_field(struct policy *p, struct policy *q, const char *field)
{
	if (!strcmp(field, "sandbox.boundary")) {
		SWAP(p->sandbox.boundary, q->sandbox.boundary);
		SWAP(p->origin.boundary, q->origin.boundary);
	} else if (!strcmp(field, "sandbox.mode")) {
		SWAP(p->sandbox.mode, q->sandbox.mode);
		SWAP(p->origin.mode, q->origin.mode);
	} else if (!strcmp(field, "sandbox.limits")) {
		SWAP(p->sandbox.limits, q->sandbox.limits);
		SWAP(p->origin.memory, q->origin.memory);
		SWAP(p->origin.pids, q->origin.pids);
		SWAP(p->origin.open_files, q->origin.open_files);
		SWAP(p->origin.cpu, q->origin.cpu);
		SWAP(p->origin.wall, q->origin.wall);
	} else if (!strcmp(field, "filesystem.baseline")) {
		SWAP(p->filesystem.baseline, q->filesystem.baseline);
		SWAP(p->origin.baseline, q->origin.baseline);
	} else if (!strcmp(field, "filesystem.read")) {
		SWAP(p->filesystem.read, q->filesystem.read);
	} else if (!strcmp(field, "filesystem.write")) {
		SWAP(p->filesystem.write, q->filesystem.write);
	} else if (!strcmp(field, "filesystem.deny")) {
		SWAP(p->filesystem.deny, q->filesystem.deny);
	} else if (!strcmp(field, "filesystem.sockets")) {
		SWAP(p->filesystem.sockets, q->filesystem.sockets);
	} else if (!strcmp(field, "filesystem.protect")) {
		SWAP(p->filesystem.protect, q->filesystem.protect);
		SWAP(p->filesystem.protect_defaults, q->filesystem.protect_defaults);
		SWAP(p->filesystem.protect_build, q->filesystem.protect_build);
		SWAP(p->origin.protect_defaults, q->origin.protect_defaults);
		SWAP(p->origin.protect_build, q->origin.protect_build);
	} else if (!strcmp(field, "process.exec")) {
		SWAP(p->process.exec_set, q->process.exec_set);
		SWAP(p->process.exec, q->process.exec);
		SWAP(p->origin.exec, q->origin.exec);
	} else if (!strcmp(field, "process.env")) {
		SWAP(p->process.env_pass, q->process.env_pass);
		SWAP(p->process.n_env_pass, q->process.n_env_pass);
		SWAP(p->process.env_pass_loc, q->process.env_pass_loc);
		SWAP(p->process.env_set, q->process.env_set);
		SWAP(p->process.n_env_set, q->process.n_env_set);
		SWAP(p->origin.env_pass, q->origin.env_pass);
		SWAP(p->origin.env_set, q->origin.env_set);
	} else if (!strcmp(field, "network")) {
		SWAP(p->network, q->network);
		SWAP(p->origin.net_mode, q->origin.net_mode);
		SWAP(p->origin.upstream_ca, q->origin.upstream_ca);
		SWAP(p->origin.max_body, q->origin.max_body);
		SWAP(p->origin.allow_compressed, q->origin.allow_compressed);
		SWAP(p->origin.net_log, q->origin.net_log);
	} else if (!strcmp(field, "credentials")) {
		SWAP(p->credentials, q->credentials);
		SWAP(p->n_credentials, q->n_credentials);
	} else if (!strcmp(field, "identity")) {
		SWAP(p->identity.agent, q->identity.agent);
		SWAP(p->identity.header, q->identity.header);
		SWAP(p->origin.agent, q->origin.agent);
		SWAP(p->origin.identity_header, q->origin.identity_header);
	} else if (!strcmp(field, "audit")) {
		SWAP(p->audit.enabled, q->audit.enabled);
		SWAP(p->audit.dir, q->audit.dir);
		SWAP(p->origin.audit_enabled, q->origin.audit_enabled);
		SWAP(p->origin.audit_dir, q->origin.audit_dir);
		SWAP(p->audit.max_size, q->audit.max_size);
		SWAP(p->origin.audit_max_size, q->origin.audit_max_size);
	}
}

/* ---- filesystem: prefixes ---- */

static int path_push(struct policy_paths *ps, const char *path, const struct policy_loc *loc)
{
	struct policy_path *v = realloc(ps->v, (ps->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ps->v = v;
	if (!(v[ps->n].path = strdup(path)))
		return -ENOMEM;
	v[ps->n].loc = *loc;
	ps->n++;
	return 0;
}

/* Each entry of *dev is kept when it lies beneath an entry of a ceiling
 * list; else replaced by the ceiling entries beneath it; else cut. */
static int narrow_paths(struct lctx *c, struct policy_paths *dev, const struct policy_paths *const *ceil, size_t n_ceil,
			const struct ceiling *e, unsigned eline, const char *field, bool quiet_defaults)
{
	struct policy_paths out = { 0 };
	int r = 0;

	for (size_t i = 0; i < dev->n && r == 0; i++) {
		const struct policy_path *d = &dev->v[i];
		bool kept = false;
		size_t added = 0;
		char q[300];

		for (size_t l = 0; l < n_ceil && !kept; l++)
			for (size_t j = 0; j < ceil[l]->n && !kept; j++)
				kept = policy_path_is_under(d->path, ceil[l]->v[j].path);
		if (kept) {
			r = path_push(&out, d->path, &d->loc);
			continue;
		}
		for (size_t l = 0; l < n_ceil && r == 0; l++)
			for (size_t j = 0; j < ceil[l]->n && r == 0; j++)
				if (policy_path_is_under(ceil[l]->v[j].path, d->path)) {
					r = path_push(&out, ceil[l]->v[j].path, &ceil[l]->v[j].loc);
					added++;
				}
		if (r < 0)
			break;
		if (quiet_defaults && d->loc.line == 0)
			continue;
		quote(d->path, q, sizeof(q));
		r = added ? cut(c, &d->loc, e, eline, "%s %s narrowed to the %zu enterprise entr%s beneath it", field,
				q, added, added == 1 ? "y" : "ies")
			  : cut(c, &d->loc, e, eline, "%s %s cut: no enterprise %s entry covers it", field, q, field);
	}
	if (r == -ENOMEM)
		r = oom(c);
	if (r < 0) {
		for (size_t i = 0; i < out.n; i++)
			free(out.v[i].path);
		free(out.v);
		return r;
	}
	for (size_t i = 0; i < dev->n; i++)
		free(dev->v[i].path);
	free(dev->v);
	*dev = out;
	return 0;
}

static int union_paths(struct lctx *c, struct policy_paths *dev, const struct policy_paths *add)
{
	for (size_t j = 0; j < add->n; j++) {
		bool have = false;
		for (size_t i = 0; i < dev->n && !have; i++)
			have = strcmp(dev->v[i].path, add->v[j].path) == 0;
		if (!have && path_push(dev, add->v[j].path, &add->v[j].loc) < 0)
			return oom(c);
	}
	return 0;
}

/* The directories exec is granted beneath when process.exec is not set
 * (sandbox/plan.c default_exec_dirs, and the workspace). */
static const char *const implicit_exec[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt" };

/* filesystem.sockets: a host socket is a path the agent reaches (a
 * Docker-style socket hands it the host). A socket is kept only beneath an
 * entry of the enterprise's sockets list when the file writes one, else
 * beneath its read or write entries when it writes those, and never
 * beneath an enterprise deny entry: a ceiling that hides /var/run must not
 * leave /var/run/docker.sock bound inside. The sandbox binds a socket at
 * its real path (sandbox/plan.c), so the name as written and the real path
 * must both pass: a link elsewhere to the denied socket is cut too.
 * Nothing is put in a cut socket's place (a ceiling's directory is no
 * socket). */
static bool socket_within(const char *path, const struct policy_paths *const *lists, size_t n_lists)
{
	if (n_lists == 0)
		return true;
	for (size_t l = 0; l < n_lists; l++)
		for (size_t j = 0; j < lists[l]->n; j++)
			if (policy_path_is_under(path, lists[l]->v[j].path))
				return true;
	return false;
}

static const struct policy_path *socket_denied(const struct policy *p, const char *path)
{
	for (size_t j = 0; j < p->filesystem.deny.n; j++)
		if (p->filesystem.deny.v[j].loc.layer && !strcmp(p->filesystem.deny.v[j].loc.layer, "enterprise") &&
		    policy_path_is_under(path, p->filesystem.deny.v[j].path))
			return &p->filesystem.deny.v[j];
	return NULL;
}

static int narrow_sockets(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	struct policy_paths *ps = &p->filesystem.sockets;
	const struct policy_paths *lists[2] = { NULL, NULL };
	unsigned line = 0, deny_line = given_line(e, "filesystem.deny");
	size_t n_lists = 0, w = 0;
	const char *by = NULL;
	int r;

	if (locked_here(e, "filesystem.sockets"))
		return 0;
	if ((line = given_line(e, "filesystem.sockets"))) {
		lists[n_lists++] = &q->filesystem.sockets;
		by = "filesystem.sockets";
	} else {
		unsigned rl = given_line(e, "filesystem.read"), wl = given_line(e, "filesystem.write");
		if (rl || wl) {
			lists[n_lists++] = &q->filesystem.read;
			lists[n_lists++] = &q->filesystem.write;
			line = rl ? rl : wl;
			by = "filesystem.read or filesystem.write";
		}
	}
	for (size_t i = 0; i < ps->n; i++) {
		struct policy_path *d = &ps->v[i];
		char real[PATH_MAX], q1[300];
		/* A socket not there now fails the run when it starts. */
		bool have_real = realpath(d->path, real) != NULL;
		bool ok = socket_within(d->path, lists, n_lists) && (!have_real || socket_within(real, lists, n_lists));
		/* The deny list here holds every ceiling's so far. */
		const struct policy_path *denied = socket_denied(p, d->path);
		if (!denied && have_real)
			denied = socket_denied(p, real);
		if (ok && !denied) {
			ps->v[w++] = *d;
			continue;
		}
		quote(d->path, q1, sizeof(q1));
		if (denied)
			r = cut(c, &d->loc, e, deny_line ? deny_line : e->section_line,
				"filesystem.sockets %s cut: it lies beneath %s, denied by %s:%u", q1, denied->path,
				denied->loc.file, denied->loc.line);
		else
			r = cut(c, &d->loc, e, line, "filesystem.sockets %s cut: no enterprise %s entry covers it", q1,
				by);
		free(d->path);
		if (r < 0) {
			for (size_t k = i + 1; k < ps->n; k++)
				ps->v[w++] = ps->v[k];
			ps->n = w;
			return r;
		}
	}
	ps->n = w;
	return 0;
}

static int narrow_filesystem(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	unsigned line;
	int r;

	if ((line = given_line(e, "filesystem.baseline")) && !q->filesystem.baseline && p->filesystem.baseline &&
	    !locked_here(e, "filesystem.baseline")) {
		if (p->origin.baseline.line && (r = cut(c, &p->origin.baseline, e, line,
							"filesystem.baseline: true cut to false")) < 0)
			return r;
		p->filesystem.baseline = false;
		p->origin.baseline = q->origin.baseline;
	}
	if ((line = given_line(e, "filesystem.read"))) {
		/* What may be read: the ceiling's read and write lists. */
		const struct policy_paths *lists[2] = { &q->filesystem.read, &q->filesystem.write };
		if (!locked_here(e, "filesystem.read") &&
		    (r = narrow_paths(c, &p->filesystem.read, lists, 2, e, line, "filesystem.read", false)) < 0)
			return r;
	}
	if ((line = given_line(e, "filesystem.write")) && !locked_here(e, "filesystem.write")) {
		const struct policy_paths *lists[1] = { &q->filesystem.write };
		if ((r = narrow_paths(c, &p->filesystem.write, lists, 1, e, line, "filesystem.write", false)) < 0)
			return r;
		/* The workspace is a write grant too, and one that cannot be
		 * narrowed (the run needs it): outside the ceiling, nothing
		 * runs, whatever on_excess says. A workspace of ~ would
		 * otherwise hand the agent ~/.bashrc. */
		bool inside = false;
		for (size_t i = 0; i < q->filesystem.write.n && !inside; i++)
			inside = policy_path_is_under(p->sandbox.workspace, q->filesystem.write.v[i].path);
		if (!inside) {
			char qw[300];
			quote(p->sandbox.workspace, qw, sizeof(qw));
			if ((r = cut(c, &p->sandbox.workspace_loc, e, line,
				     "sandbox.workspace %s is not beneath an enterprise filesystem.write entry; a "
				     "workspace cannot be narrowed, so the run is refused",
				     qw)) < 0)
				return r;
			if (!c->rep->refuse) {
				c->rep->refuse = true;
				if (asprintf(&c->rep->refuse_by, "%s:%u", e->file, line) < 0) {
					c->rep->refuse_by = NULL;
					return oom(c);
				}
			}
		}
	}
	if (given_line(e, "filesystem.deny") && !locked_here(e, "filesystem.deny") &&
	    (r = union_paths(c, &p->filesystem.deny, &q->filesystem.deny)) < 0)
		return r;
	if ((r = narrow_sockets(c, e)) < 0)
		return r;
	if (!locked_here(e, "filesystem.protect")) {
		if (given_line(e, "filesystem.protect") &&
		    (r = union_paths(c, &p->filesystem.protect, &q->filesystem.protect)) < 0)
			return r;
		if ((line = given_line(e, "filesystem.protect_defaults")) && q->filesystem.protect_defaults &&
		    !p->filesystem.protect_defaults) {
			if ((r = cut(c, &p->origin.protect_defaults, e, line,
				     "filesystem.protect_defaults: false cut to true")) < 0)
				return r;
			p->filesystem.protect_defaults = true;
			p->origin.protect_defaults = q->origin.protect_defaults;
		}
		if ((line = given_line(e, "filesystem.protect_build")) && q->filesystem.protect_build &&
		    !p->filesystem.protect_build) {
			p->filesystem.protect_build = true;
			p->origin.protect_build = q->origin.protect_build;
		}
	}
	if ((line = given_line(e, "process.exec")) && !locked_here(e, "process.exec")) {
		const struct policy_paths *lists[1] = { &q->process.exec };
		if (!p->process.exec_set) {
			/* The implicit grant, written out so it can be narrowed
			 * like an explicit one. */
			static const struct policy_loc none = { POLICY_DEFAULT_FILE, 0, 0, NULL, NULL };
			if (p->filesystem.baseline)
				for (size_t i = 0; i < sizeof(implicit_exec) / sizeof(*implicit_exec); i++)
					if (path_push(&p->process.exec, implicit_exec[i], &none) < 0)
						return oom(c);
			if (path_push(&p->process.exec, p->sandbox.workspace, &p->sandbox.workspace_loc) < 0)
				return oom(c);
			p->process.exec_set = true;
		}
		if ((r = narrow_paths(c, &p->process.exec, lists, 1, e, line, "process.exec", true)) < 0)
			return r;
		if (!p->origin.exec.line)
			p->origin.exec = q->origin.exec;
	}
	if ((line = given_line(e, "process.git_identity")) && !q->process.git_identity && p->process.git_identity) {
		if ((r = cut(c, &p->origin.git_identity, e, line,
			     "process.git_identity: host cut to none: the enterprise keeps the host's identity")) < 0)
			return r;
		p->process.git_identity = false;
		p->origin.git_identity = q->origin.git_identity;
	}
	return 0;
}

/* ---- process.env.pass ---- */

/* process.env.set: a value the agent starts with. A variable the
 * enterprise does not set to the same value is cut; the enterprise's
 * values apply. */
static int narrow_env_set(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	unsigned line = given_line(e, "process.env.set");
	size_t w = 0;
	int r;

	if (!line || locked_here(e, "process.env"))
		return 0;
	for (size_t i = 0; i < p->process.n_env_set; i++) {
		struct policy_env_var *v = &p->process.env_set[i];
		bool same = false;
		for (size_t j = 0; j < q->process.n_env_set && !same; j++)
			same = !strcmp(v->name, q->process.env_set[j].name) && str_eq(v->value, q->process.env_set[j].value);
		if (same) {
			p->process.env_set[w++] = *v;
			continue;
		}
		if (v->loc.line && (r = cut(c, &v->loc, e, line,
					    "process.env.set %s cut: the enterprise does not set it to this value",
					    v->name)) < 0)
			return r;
		free(v->name);
		free(v->value);
	}
	p->process.n_env_set = w;
	for (size_t j = 0; j < q->process.n_env_set; j++) {
		const struct policy_env_var *ev = &q->process.env_set[j];
		bool have = false;
		for (size_t i = 0; i < p->process.n_env_set && !have; i++)
			have = !strcmp(p->process.env_set[i].name, ev->name);
		if (have)
			continue;
		struct policy_env_var *nv = realloc(p->process.env_set, (p->process.n_env_set + 1) * sizeof(*nv));
		if (!nv)
			return oom(c);
		p->process.env_set = nv;
		nv[p->process.n_env_set] = (struct policy_env_var){ strdup(ev->name), ev->value ? strdup(ev->value) : NULL,
								    ev->loc };
		if (!nv[p->process.n_env_set].name || (ev->value && !nv[p->process.n_env_set].value)) {
			free(nv[p->process.n_env_set].name);
			free(nv[p->process.n_env_set].value);
			return oom(c);
		}
		p->process.n_env_set++;
		/* The enterprise's value, not the caller's: a name passed too
		 * would reach the agent twice. */
		size_t w2 = 0;
		for (size_t i = 0; i < p->process.n_env_pass; i++) {
			if (strcmp(p->process.env_pass[i], ev->name) == 0) {
				free(p->process.env_pass[i]);
				continue;
			}
			p->process.env_pass[w2] = p->process.env_pass[i];
			if (p->process.env_pass_loc)
				p->process.env_pass_loc[w2] = p->process.env_pass_loc[i];
			w2++;
		}
		p->process.n_env_pass = w2;
		if (p->process.env_pass)
			p->process.env_pass[w2] = NULL;
	}
	return 0;
}

static int narrow_env(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	unsigned line = given_line(e, "process.env.pass");
	size_t w = 0;
	int r;

	if ((r = narrow_env_set(c, e)) < 0)
		return r;
	if (!line || locked_here(e, "process.env"))
		return 0;
	for (size_t i = 0; i < p->process.n_env_pass; i++) {
		bool ok = false;
		for (size_t j = 0; j < q->process.n_env_pass && !ok; j++)
			ok = strcmp(p->process.env_pass[i], q->process.env_pass[j]) == 0;
		if (ok) {
			p->process.env_pass[w] = p->process.env_pass[i];
			if (p->process.env_pass_loc)
				p->process.env_pass_loc[w] = p->process.env_pass_loc[i];
			w++;
			continue;
		}
		const struct policy_loc *l = p->process.env_pass_loc ? &p->process.env_pass_loc[i] : &p->origin.env_pass;
		if (l->line && (r = cut(c, l, e, line, "process.env.pass %s cut: not in the enterprise list",
					p->process.env_pass[i])) < 0)
			return r;
		free(p->process.env_pass[i]);
	}
	p->process.n_env_pass = w;
	if (p->process.env_pass)
		p->process.env_pass[w] = NULL;
	return 0;
}

/* ---- sandbox ---- */

static int min_limit(struct lctx *c, struct ceiling *e, unsigned line, uint64_t *dev, struct policy_loc *dloc,
		     uint64_t ceil, const struct policy_loc *cloc, const char *name)
{
	if (ceil == 0 || (*dev != 0 && *dev <= ceil))
		return 0;
	if (dloc->line) {
		int r = cut(c, dloc, e, line, "sandbox.limits.%s %s cut to the enterprise limit %llu", name,
			    *dev ? "above the ceiling" : "unlimited", (unsigned long long)ceil);
		if (r < 0)
			return r;
	}
	*dev = ceil;
	*dloc = *cloc;
	return 0;
}

static int narrow_sandbox(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	unsigned line;
	int r;

	if (given_line(e, "sandbox.limits") && !locked_here(e, "sandbox.limits")) {
		/* Only the limits the file writes: the defaults of the others
		 * (pids 4096, open_files 1024) are not the enterprise's word. */
		struct policy_limits *d = &p->sandbox.limits;
		const struct policy_limits *l = &q->sandbox.limits;
		struct {
			const char *name;
			uint64_t *dev;
			struct policy_loc *dloc;
			uint64_t ceil;
			const struct policy_loc *cloc;
		} lims[] = {
			{ "memory", &d->memory_bytes, &p->origin.memory, l->memory_bytes, &q->origin.memory },
			{ "pids", &d->pids, &p->origin.pids, l->pids, &q->origin.pids },
			{ "open_files", &d->open_files, &p->origin.open_files, l->open_files, &q->origin.open_files },
			{ "cpu", &d->cpu_seconds, &p->origin.cpu, l->cpu_seconds, &q->origin.cpu },
			{ "wall", &d->wall_seconds, &p->origin.wall, l->wall_seconds, &q->origin.wall },
		};
		for (size_t i = 0; i < sizeof(lims) / sizeof(*lims); i++) {
			char name[64];
			snprintf(name, sizeof(name), "sandbox.limits.%s", lims[i].name);
			if ((line = given_line(e, name)) &&
			    (r = min_limit(c, e, line, lims[i].dev, lims[i].dloc, lims[i].ceil, lims[i].cloc,
					   lims[i].name)) < 0)
				return r;
		}
	}
	/* A boundary written in an enterprise file is a minimum, like
	 * enterprise.require.boundary. */
	int want = e->boundary;
	unsigned bline = e->boundary_line;
	if ((line = given_line(e, "sandbox.boundary")) && !locked_here(e, "sandbox.boundary") &&
	    (int)q->sandbox.boundary > want) {
		want = (int)q->sandbox.boundary;
		bline = line;
	}
	if (want >= 0 && (int)p->sandbox.boundary < want) {
		if (p->origin.boundary.line &&
		    (r = cut(c, &p->origin.boundary, e, bline, "sandbox.boundary: %s is below the required %s",
			     policy_boundary_name(p->sandbox.boundary),
			     policy_boundary_name((enum policy_boundary)want))) < 0)
			return r;
		p->sandbox.boundary = (enum policy_boundary)want;
		p->origin.boundary = (struct policy_loc){ e->file, bline, 1, NULL, "enterprise" };
	}
	/* Review mode puts all the agent's writes before a person; direct
	 * never lets a hand-off file into the workspace; hold lets one in on
	 * a person's accept. A mode the enterprise writes is a ceiling: a
	 * developer's mode that lets more through unreviewed is cut to it. */
	if ((line = given_line(e, "sandbox.workspace_mode")) &&
	    policy_workspace_mode_rank(p->sandbox.workspace_mode) < policy_workspace_mode_rank(q->sandbox.workspace_mode)) {
		if ((r = cut(c, &p->origin.workspace_mode, e, line, "sandbox.workspace_mode: %s cut to %s: %s",
			     policy_workspace_mode_name(p->sandbox.workspace_mode),
			     policy_workspace_mode_name(q->sandbox.workspace_mode),
			     q->sandbox.workspace_mode == POLICY_WS_REVIEW
				     ? "the enterprise reviews the agent's writes"
				     : "the enterprise refuses hand-off files rather than hold them for an accept")) < 0)
			return r;
		p->sandbox.workspace_mode = q->sandbox.workspace_mode;
		p->origin.workspace_mode = q->origin.workspace_mode;
	}
	/* The host ids the agent acts as decide which host files it may open
	 * beneath the paths it sees: the enterprise's, when it names them. */
	const struct {
		const char *name;
		int64_t *dev, ceil;
		struct policy_loc *dloc;
		const struct policy_loc *cloc;
	} ids[] = {
		{ "sandbox.host_uid", &p->sandbox.host_uid, q->sandbox.host_uid, &p->origin.host_uid, &q->origin.host_uid },
		{ "sandbox.host_gid", &p->sandbox.host_gid, q->sandbox.host_gid, &p->origin.host_gid, &q->origin.host_gid },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		if (!(line = given_line(e, ids[i].name)) || *ids[i].dev == ids[i].ceil)
			continue;
		if ((r = cut(c, ids[i].dloc, e, line, "%s: the enterprise's value applies", ids[i].name)) < 0)
			return r;
		*ids[i].dev = ids[i].ceil;
		*ids[i].dloc = *ids[i].cloc;
	}
	/* Observe enforces nothing: forbidden outright, or by a mode the
	 * enterprise file writes (enforce or learn). */
	line = e->forbid_observe ? e->observe_line : 0;
	enum policy_mode to = POLICY_MODE_ENFORCE;
	if (!line && (line = given_line(e, "sandbox.mode")) && !locked_here(e, "sandbox.mode")) {
		if (q->sandbox.mode == POLICY_MODE_OBSERVE)
			line = 0;
		else
			to = q->sandbox.mode;
	}
	if (line && p->sandbox.mode == POLICY_MODE_OBSERVE) {
		if ((r = cut(c, &p->origin.mode, e, line, "sandbox.mode: observe is forbidden; %s applies",
			     policy_mode_name(to))) < 0)
			return r;
		p->sandbox.mode = to;
		p->origin.mode = (struct policy_loc){ e->file, line, 1, NULL, "enterprise" };
	}
	return 0;
}

/* ---- audit and identity ---- */

static int set_str(char **dst, const char *s)
{
	char *n = s ? strdup(s) : NULL;
	if (s && !n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static int narrow_audit(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p;
	unsigned line = e->audit ? e->audit_line : 0;
	int r;

	if (!line && (line = given_line(e, "audit.enabled")) && !locked_here(e, "audit") && !e->pol->audit.enabled)
		line = 0;
	if (line) {
		if (!p->audit.enabled) {
			if ((r = cut(c, &p->origin.audit_enabled, e, line,
				     "audit.enabled: false cut: the decision log is required")) < 0)
				return r;
			p->audit.enabled = true;
			p->origin.audit_enabled = (struct policy_loc){ e->file, line, 1, NULL, "enterprise" };
		}
		if (!c->rep->require_audit) {
			c->rep->require_audit = true;
			if (asprintf(&c->rep->audit_by, "%s:%u", e->file, line) < 0) {
				c->rep->audit_by = NULL;
				return oom(c);
			}
		}
		/* The log's directory, when the enterprise names one, is where
		 * the log goes. */
		if (e->pol->audit.dir && given_line(e, "audit.dir") && !locked_here(e, "audit")) {
			if (set_str(&p->audit.dir, e->pol->audit.dir) < 0)
				return oom(c);
			p->origin.audit_dir = e->pol->origin.audit_dir;
		}
	}
	/* The log's size is a ceiling like the sandbox's limits: the smaller
	 * wins, so a developer cannot let an agent fill more of the host's
	 * disk than the enterprise allows. */
	if ((line = given_line(e, "audit.max_size")) && !locked_here(e, "audit") &&
	    p->audit.max_size > e->pol->audit.max_size) {
		if (p->origin.audit_max_size.line &&
		    (r = cut(c, &p->origin.audit_max_size, e, line, "audit.max_size above the ceiling cut to %llu",
			     (unsigned long long)e->pol->audit.max_size)) < 0)
			return r;
		p->audit.max_size = e->pol->audit.max_size;
		p->origin.audit_max_size = e->pol->origin.audit_max_size;
	}
	unsigned hline = e->identity_header ? e->identity_line : 0;
	if (!hline && (line = given_line(e, "identity.header")) && !locked_here(e, "identity") && e->pol->identity.header)
		hline = line;
	if (hline && !p->identity.header) {
		if (p->origin.identity_header.line &&
		    (r = cut(c, &p->origin.identity_header, e, hline, "identity.header: false cut to true")) < 0)
			return r;
		p->identity.header = true;
		p->origin.identity_header = (struct policy_loc){ e->file, hline, 1, NULL, "enterprise" };
	}
	return 0;
}

/* ---- network ---- */

static bool has_port(const struct policy_endpoint *ep, uint16_t port)
{
	for (size_t i = 0; i < ep->n_ports; i++)
		if (ep->ports[i] == port)
			return true;
	return false;
}

static bool has_method(char *const *m, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i], x) == 0)
			return true;
	return false;
}

/* Methods of a ∩ b (NULL = any) into *out; false when empty. */
static int methods_meet(const struct policy_net_rule *a, const struct policy_net_rule *b, char ***out, size_t *n,
			bool *empty)
{
	const struct policy_net_rule *src = a->methods ? a : b;
	const struct policy_net_rule *other = a->methods ? b : a;

	*out = NULL;
	*n = 0;
	*empty = false;
	if (!src->methods)
		return 0;
	char **v = calloc(src->n_methods + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < src->n_methods; i++) {
		if (other->methods && !has_method(other->methods, other->n_methods, src->methods[i]))
			continue;
		if (!(v[*n] = strdup(src->methods[i]))) {
			policy_strv_free(v, *n);
			return -ENOMEM;
		}
		(*n)++;
	}
	if (*n == 0) {
		free(v);
		*empty = true;
		return 0;
	}
	*out = v;
	return 0;
}

static bool methods_within(const struct policy_net_rule *a, const struct policy_net_rule *b)
{
	if (!b->methods)
		return true;
	if (!a->methods)
		return false;
	for (size_t i = 0; i < a->n_methods; i++)
		if (!has_method(b->methods, b->n_methods, a->methods[i]))
			return false;
	return true;
}

/* The narrower of two globs, when one contains the other. */
static bool glob_meet(const char *a, const char *b, const char **out)
{
	if (policy_glob_subset(a, b)) {
		*out = a;
		return true;
	}
	if (policy_glob_subset(b, a)) {
		*out = b;
		return true;
	}
	return false;
}

/* r ∩ rc as one rule; *ok false when empty or not expressible. */
static bool methods_share(const struct policy_net_rule *a, const struct policy_net_rule *b)
{
	for (size_t i = 0; i < a->n_methods; i++)
		if (has_method(b->methods, b->n_methods, a->methods[i]))
			return true;
	return false;
}

static int rule_meet(const struct policy_net_rule *r, const struct policy_net_rule *rc, struct policy_net_rule *out,
		     bool *ok, bool *whole, bool *inexpressible)
{
	const char *path, *query;
	bool empty;

	memset(out, 0, sizeof(*out));
	*ok = false;
	*whole = false;
	if (!glob_meet(r->path, rc->path, &path) || !glob_meet(r->query, rc->query, &query)) {
		/* Requests both allow, but no single glob says which: cut,
		 * narrower than the true intersection. */
		if (inexpressible && glob_meets(r->path, rc->path) && glob_meets(r->query, rc->query) &&
		    (!r->methods || !rc->methods || methods_share(r, rc)))
			*inexpressible = true;
		return 0;
	}
	if (methods_meet(r, rc, &out->methods, &out->n_methods, &empty) < 0)
		return -ENOMEM;
	if (empty)
		return 0;
	*whole = methods_within(r, rc) && path == r->path && query == r->query && (!r->websocket || rc->websocket);
	out->websocket = r->websocket && rc->websocket;
	out->loc = *whole ? r->loc : rc->loc;
	char id[POLICY_ID_MAX + 1];
	if (*whole)
		snprintf(id, sizeof(id), "%s", r->id);
	else
		snprintf(id, sizeof(id), "%s&%s", r->id, rc->id);
	if ((path && !(out->path = strdup(path))) || (query && !(out->query = strdup(query))) ||
	    !(out->id = strdup(id))) {
		policy_rule_clear(out);
		return -ENOMEM;
	}
	*ok = true;
	return 0;
}

static int rule_copy(const struct policy_net_rule *r, struct policy_net_rule *out)
{
	bool ok, whole;
	struct policy_net_rule any = { 0 };
	return rule_meet(r, &any, out, &ok, &whole, NULL);
}

/* E ∩ C as one endpoint; *ok false when empty. *whole when it is E. */
/* Every request r allows is allowed by one of C's rules: several of them
 * may together cover a rule none covers alone. */
static bool rule_within_union(const struct policy_net_rule *r, const struct policy_endpoint *C)
{
	const char **paths = calloc(C->n_rules + 1, sizeof(*paths));
	size_t n = 0;
	bool in = false;

	if (!paths)
		return false;
	for (size_t j = 0; j < C->n_rules; j++) {
		const struct policy_net_rule *c = &C->rules[j];
		if (methods_within(r, c) && policy_glob_subset(r->query, c->query) && (!r->websocket || c->websocket))
			paths[n++] = c->path;
	}
	if (n)
		in = policy_glob_subset_any(r->path, paths, n);
	free(paths);
	return in;
}

static int endpoint_meet(const struct policy_endpoint *E, const struct policy_endpoint *C, struct policy_endpoint *out,
			 bool *ok, bool *whole, size_t *rules_cut, size_t *inexpressible)
{
	const char *host;

	memset(out, 0, sizeof(*out));
	*ok = false;
	*whole = false;
	*rules_cut = 0;
	*inexpressible = 0;
	if (policy_host_covers(C->host, E->host))
		host = E->host;
	else if (policy_host_covers(E->host, C->host))
		host = C->host;
	else
		return 0;
	if (!(out->ports = calloc(E->n_ports ? E->n_ports : 1, sizeof(*out->ports))))
		return -ENOMEM;
	for (size_t i = 0; i < E->n_ports; i++)
		if (has_port(C, E->ports[i]))
			out->ports[out->n_ports++] = E->ports[i];
	if (out->n_ports == 0) {
		policy_endpoint_clear(out);
		return 0;
	}
	bool rules_whole = true;
	const struct policy_endpoint *from = NULL;
	if (C->n_rules == 0)
		from = E;
	else if (E->n_rules == 0) {
		from = C;
		rules_whole = false;
	}
	if (from) {
		if (from->n_rules && !(out->rules = calloc(from->n_rules, sizeof(*out->rules))))
			goto oom;
		for (size_t i = 0; i < from->n_rules; i++, out->n_rules++)
			if (rule_copy(&from->rules[i], &out->rules[i]) < 0)
				goto oom;
	} else {
		if (!(out->rules = calloc(E->n_rules * C->n_rules, sizeof(*out->rules))))
			goto oom;
		for (size_t i = 0; i < E->n_rules; i++) {
			bool kept = false, inex = false;
			size_t before = out->n_rules;
			if (rule_within_union(&E->rules[i], C)) {
				if (rule_copy(&E->rules[i], &out->rules[out->n_rules]) < 0)
					goto oom;
				out->n_rules++;
				continue;
			}
			for (size_t j = 0; j < C->n_rules && !kept; j++) {
				bool rok, rwhole;
				struct policy_net_rule *slot = &out->rules[out->n_rules];
				if (rule_meet(&E->rules[i], &C->rules[j], slot, &rok, &rwhole, &inex) < 0)
					goto oom;
				if (!rok)
					continue;
				out->n_rules++;
				if (rwhole) {
					/* All of the rule survives: pieces made
					 * from earlier ceiling rules are redundant. */
					kept = true;
					struct policy_net_rule keep = *slot;
					for (size_t k = before; k < out->n_rules - 1; k++)
						policy_rule_clear(&out->rules[k]);
					out->rules[before] = keep;
					out->n_rules = before + 1;
				}
			}
			if (!kept) {
				rules_whole = false;
				(*rules_cut)++;
				*inexpressible += inex;
			}
		}
		if (out->n_rules == 0) {
			policy_endpoint_clear(out);
			return 0;
		}
	}
	out->intercept = E->intercept || C->intercept;
	/* MCP mediation (protocol: mcp) is kept when either layer asks for it:
	 * dropping it would let the endpoint's requests pass unjudged. */
	const struct policy_endpoint *m = E->mcp_server ? E : C->mcp_server ? C : NULL;
	if (m) {
		if (!(out->mcp_server = strdup(m->mcp_server)))
			goto oom;
		out->mcp_loc = m->mcp_loc;
	}
	*whole = host == E->host && out->n_ports == E->n_ports && rules_whole && out->intercept == E->intercept &&
		 (E->mcp_server != NULL) == (out->mcp_server != NULL);
	out->loc = *whole ? E->loc : C->loc;
	char id[POLICY_ID_MAX + 1];
	if (*whole || C->n_rules == 0)
		snprintf(id, sizeof(id), "%s", E->id);
	else
		snprintf(id, sizeof(id), "%s&%s", E->id, C->id);
	if (!(out->host = strdup(host)) || !(out->id = strdup(id)))
		goto oom;
	*ok = true;
	return 0;
oom:
	policy_endpoint_clear(out);
	return -ENOMEM;
}

static bool cidr_within(const struct policy_cidr *a, const struct policy_cidr *b)
{
	if (a->family != b->family || b->prefix > a->prefix || (b->port && b->port != a->port))
		return false;
	unsigned full = b->prefix / 8, rest = b->prefix % 8;
	if (memcmp(a->addr, b->addr, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));
		if ((a->addr[full] & mask) != (b->addr[full] & mask))
			return false;
	}
	return true;
}

/* Whether a and b decide some common host:port (within w's, when w is
 * not NULL). Host patterns overlap exactly when one covers the other. */
static bool shares_domain(const struct policy_endpoint *a, const struct policy_endpoint *b,
			  const struct policy_endpoint *w)
{
	if (!policy_host_covers(a->host, b->host) && !policy_host_covers(b->host, a->host))
		return false;
	if (w && !policy_host_covers(w->host, a->host) && !policy_host_covers(a->host, w->host))
		return false;
	if (w && !policy_host_covers(w->host, b->host) && !policy_host_covers(b->host, w->host))
		return false;
	for (size_t i = 0; i < a->n_ports; i++)
		if (has_port(b, a->ports[i]) && (!w || has_port(w, a->ports[i])))
			return true;
	return false;
}

static int narrow_network(struct lctx *c, struct ceiling *e)
{
	struct policy_network *net = &c->p->network;
	const struct policy_network *cn = &e->pol->network;
	unsigned line = given_line(e, "network");
	int r;

	if (!line || locked_here(e, "network") || net->mode == POLICY_NET_NONE)
		return 0;
	struct policy_endpoint *out = NULL;
	size_t n_out = 0;
	bool *narrowed = calloc(net->n_endpoints + 1, sizeof(*narrowed));
	if (!narrowed)
		return oom(c);
	for (size_t i = 0; i < net->n_endpoints; i++) {
		struct policy_endpoint *E = &net->endpoints[i];
		size_t pieces = 0, rules_cut = 0, inexpressible = 0;
		bool kept = false;
		char qh[300];

		/* The first endpoint matching host and port decides. When an
		 * earlier one that overlaps this one was narrowed, a request
		 * it used to decide (a port it lost, a host beneath its
		 * wildcard) would now reach this one, which the developer
		 * never let decide it: this one goes too. */
		size_t shadow = SIZE_MAX;
		for (size_t k = 0; k < i && shadow == SIZE_MAX; k++) {
			const struct policy_endpoint *P = &net->endpoints[k];
			bool port = false;
			for (size_t x = 0; x < P->n_ports && !port; x++)
				port = has_port(E, P->ports[x]);
			if (narrowed[k] && port &&
			    (policy_host_covers(P->host, E->host) || policy_host_covers(E->host, P->host)))
				shadow = k;
		}
		if (shadow != SIZE_MAX) {
			narrowed[i] = true;
			quote(E->host, qh, sizeof(qh));
			if ((r = cut(c, &E->loc, e, line,
				     "network.endpoints %s (host %s) cut: it overlaps %s (line %u), which comes first "
				     "and was narrowed; requests that one decided must not fall through to this one",
				     E->id, qh, net->endpoints[shadow].id, net->endpoints[shadow].loc.line)) < 0)
				goto fail;
			continue;
		}

		struct policy_endpoint *nv = realloc(out, (n_out + cn->n_endpoints + 1) * sizeof(*out));
		if (!nv)
			goto oom;
		out = nv;
		/* The enterprise's endpoints decide first-match too: the
		 * pieces keep their order, so a request meets the piece of the
		 * enterprise endpoint that would decide it. An enterprise
		 * endpoint that shares requests with E but leaves no piece
		 * (no rule in common) must not let those requests reach a
		 * later piece: later pieces overlapping it are cut as well. */
		size_t dropped[64], n_dropped = 0;
		bool overflow = false, done = false;
		for (size_t j = 0; j < cn->n_endpoints && !done; j++) {
			const struct policy_endpoint *C = &cn->endpoints[j];
			bool ok, whole, blocked = false;
			size_t rc = 0, ix = 0;
			if (!shares_domain(E, C, NULL))
				continue;
			for (size_t k = 0; k < n_dropped && !blocked; k++)
				blocked = shares_domain(C, &cn->endpoints[dropped[k]], E);
			if (blocked || overflow) {
				rules_cut++;
				if (n_dropped < sizeof(dropped) / sizeof(*dropped))
					dropped[n_dropped++] = j;
				else
					overflow = true;
				continue;
			}
			if (endpoint_meet(E, C, &out[n_out], &ok, &whole, &rc, &ix) < 0)
				goto oom;
			inexpressible += ix;
			if (!ok) {
				if (n_dropped < sizeof(dropped) / sizeof(*dropped))
					dropped[n_dropped++] = j;
				else
					overflow = true;
				continue;
			}
			rules_cut += rc;
			if (whole && pieces == 0 && n_dropped == 0) {
				/* The first enterprise endpoint E meets holds all of
				 * it: E survives as it is. */
				n_out++;
				kept = true;
				break;
			}
			n_out++;
			pieces++;
			/* A piece that is all of E decides every request E
			 * could; later enterprise endpoints never would. */
			done = whole;
		}
		if (kept)
			continue;
		narrowed[i] = true;
		quote(E->host, qh, sizeof(qh));
		unsigned eline = line;
		for (size_t j = 0; j < cn->n_endpoints; j++)
			if (policy_host_covers(cn->endpoints[j].host, E->host) ||
			    policy_host_covers(E->host, cn->endpoints[j].host)) {
				eline = cn->endpoints[j].loc.line;
				break;
			}
		const char *inex_note = inexpressible ? "; where a rule's path and the enterprise's cross without "
							"one containing the other, their intersection is not one pattern "
							"and is cut too (narrower than the true intersection)"
						      : "";
		if (pieces)
			r = cut(c, &E->loc, e, eline,
				"network.endpoints %s (host %s) narrowed to what the enterprise allows (%s)%s", E->id,
				qh,
				rules_cut ? "rules beyond the enterprise's methods or paths cut or narrowed"
					  : "hosts, ports, methods or paths",
				inex_note);
		else
			r = cut(c, &E->loc, e, eline,
				"network.endpoints %s (host %s) cut: no enterprise endpoint allows this host, "
				"its ports and its requests%s",
				E->id, qh, inex_note);
		if (r < 0)
			goto fail;
	}
	free(narrowed);
	for (size_t i = 0; i < net->n_endpoints; i++)
		policy_endpoint_clear(&net->endpoints[i]);
	free(net->endpoints);
	net->endpoints = out;
	net->n_endpoints = n_out;

	size_t w = 0;
	for (size_t i = 0; i < net->n_allow_private; i++) {
		bool ok = false;
		for (size_t j = 0; j < cn->n_allow_private && !ok; j++)
			ok = cidr_within(&net->allow_private[i], &cn->allow_private[j]);
		if (ok) {
			net->allow_private[w++] = net->allow_private[i];
			continue;
		}
		char buf[80];
		policy_cidr_format(&net->allow_private[i], buf, sizeof(buf));
		if ((r = cut(c, &net->allow_private[i].loc, e, line,
			     "network.allow_private %s cut: no enterprise allow_private range holds it", buf)) < 0)
			return r;
	}
	net->n_allow_private = w;

	/* network.resolve replaces DNS for a name: a pin the enterprise does
	 * not make would send the traffic of a name it allows (a passthrough
	 * tunnel, unexamined) to an address of the developer's choosing. A
	 * pin is kept only when the enterprise pins the name to the same
	 * address; the enterprise's pins apply. */
	w = 0;
	for (size_t i = 0; i < net->n_resolve; i++) {
		struct policy_resolve *d = &net->resolve[i];
		const struct policy_resolve *er = NULL;
		for (size_t j = 0; j < cn->n_resolve && !er; j++)
			if (!strcmp(cn->resolve[j].host, d->host))
				er = &cn->resolve[j];
		if (er && !strcmp(er->addr, d->addr)) {
			net->resolve[w++] = *d;
			continue;
		}
		char qh[300];
		quote(d->host, qh, sizeof(qh));
		r = er ? cut(c, &d->loc, e, er->loc.line, "network.resolve %s -> %s cut: the enterprise pins it to %s", qh,
			     d->addr, er->addr)
		       : cut(c, &d->loc, e, line, "network.resolve %s -> %s cut: the enterprise does not pin this name", qh,
			     d->addr);
		free(d->host);
		free(d->addr);
		if (r < 0) {
			for (size_t k = i + 1; k < net->n_resolve; k++)
				net->resolve[w++] = net->resolve[k];
			net->n_resolve = w;
			return r;
		}
	}
	net->n_resolve = w;
	for (size_t j = 0; j < cn->n_resolve; j++) {
		bool have = false;
		for (size_t i = 0; i < net->n_resolve && !have; i++)
			have = !strcmp(net->resolve[i].host, cn->resolve[j].host);
		if (have)
			continue;
		struct policy_resolve *nv = realloc(net->resolve, (net->n_resolve + 1) * sizeof(*nv));
		if (!nv)
			return oom(c);
		net->resolve = nv;
		nv[net->n_resolve] = (struct policy_resolve){ strdup(cn->resolve[j].host), strdup(cn->resolve[j].addr),
							      cn->resolve[j].loc };
		if (!nv[net->n_resolve].host || !nv[net->n_resolve].addr) {
			free(nv[net->n_resolve].host);
			free(nv[net->n_resolve].addr);
			return oom(c);
		}
		net->n_resolve++;
	}

	/* An extra CA bundle makes more upstream certificates trusted. */
	if (net->upstream_ca && !str_eq(net->upstream_ca, cn->upstream_ca)) {
		char qc[300];
		quote(net->upstream_ca, qc, sizeof(qc));
		if ((r = cut(c, &c->p->origin.upstream_ca, e, given_line(e, "network.upstream_ca") ?: line,
			     "network.upstream_ca %s cut: the enterprise does not trust it", qc)) < 0)
			return r;
		free(net->upstream_ca);
		net->upstream_ca = NULL;
		c->p->origin.upstream_ca = e->pol->origin.upstream_ca;
	}
	if (given_line(e, "network.leak_scan")) {
		if (net->allow_compressed && !cn->allow_compressed) {
			net->allow_compressed = false;
			c->p->origin.allow_compressed = e->pol->origin.allow_compressed;
		}
		if (cn->max_body > net->max_body) {
			net->max_body = cn->max_body;
			c->p->origin.max_body = e->pol->origin.max_body;
		}
	}
	return 0;
oom:
	r = oom(c);
fail:
	free(narrowed);
	for (size_t k = 0; k < n_out; k++)
		policy_endpoint_clear(&out[k]);
	free(out);
	return r;
}

/* ---- credentials ---- */

static bool strv_within(char *const *a, size_t na, char *const *b, size_t nb, bool glob)
{
	if (!b)
		return true;
	if (!a)
		return false;
	for (size_t i = 0; i < na; i++) {
		bool ok = false;
		if (glob)
			ok = policy_glob_subset_any(a[i], (const char *const *)b, nb);
		for (size_t j = 0; j < nb && !ok && !glob; j++)
			ok = strcmp(a[i], b[j]) == 0;
		if (!ok)
			return false;
	}
	return true;
}

/* A binding the enterprise's binding of the same credential contains:
 * the same host or one beneath its wildcard, the same port and place for
 * the secret, and no more methods, paths, repositories or pushes. */
static bool binding_within(const struct policy_cred_binding *b, const struct policy_cred_binding *cb)
{
	if (!policy_host_covers(cb->host, b->host) || b->port != cb->port || b->where != cb->where ||
	    !str_eq(b->header, cb->header) || !str_eq(b->query, cb->query))
		return false;
	if (!strv_within(b->methods, b->n_methods, cb->methods, cb->n_methods, false) ||
	    !strv_within(b->paths, b->n_paths, cb->paths, cb->n_paths, true))
		return false;
	if (cb->git) {
		if (!b->git)
			return false;
		if (!strv_within(b->git->repos, b->git->n_repos, cb->git->repos, cb->git->n_repos, true) ||
		    (b->git->fetch && !cb->git->fetch) || (b->git->delete_refs && !cb->git->delete_refs) ||
		    (b->git->tags && !cb->git->tags))
			return false;
		if (b->git->push && (!cb->git->push ||
				     !strv_within(b->git->push, b->git->n_push, cb->git->push, cb->git->n_push, true)))
			return false;
	}
	return true;
}

/* Whether the effective network still takes host:port through an
 * intercepting endpoint (the broker needs to see inside the request). */
static bool binding_reachable(const struct policy_network *net, const struct policy_cred_binding *b)
{
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const struct policy_endpoint *ep = &net->endpoints[i];
		if (has_port(ep, b->port) && ep->intercept && policy_host_covers(ep->host, b->host))
			return true;
	}
	return false;
}

bool policy_credential_same_source(const struct policy_credential *a, const struct policy_credential *b)
{
	if (a->source != b->source || !str_eq(a->source_arg, b->source_arg) || a->n_command != b->n_command)
		return false;
	for (size_t i = 0; i < a->n_command; i++)
		if (!str_eq(a->command[i], b->command[i]))
			return false;
	return true;
}

static int narrow_credentials(struct lctx *c, const struct ceiling *e, bool by_ceiling)
{
	struct policy *p = c->p;
	unsigned line = e ? given_line(e, "credentials") : 0;
	size_t wc = 0;
	int r;

	if (by_ceiling && (!line || locked_here(e, "credentials")))
		return 0;
	for (size_t i = 0; i < p->n_credentials; i++) {
		struct policy_credential *cr = &p->credentials[i];
		const struct policy_credential *cc = NULL;
		size_t wb = 0;

		if (by_ceiling)
			for (size_t j = 0; j < e->pol->n_credentials && !cc; j++)
				if (strcmp(e->pol->credentials[j].name, cr->name) == 0)
					cc = &e->pol->credentials[j];
		/* The enterprise's bindings are about its secret: another
		 * secret under the same name does not inherit them. */
		if (cc && !policy_credential_same_source(cr, cc)) {
			if ((r = cut(c, &cr->loc, e, cc->loc.line,
				     "credentials %s cut: its source is not the enterprise's credential of that name",
				     cr->name)) < 0)
				return r;
			policy_credential_clear(cr);
			continue;
		}
		for (size_t k = 0; k < cr->n_bindings; k++) {
			struct policy_cred_binding *b = &cr->bindings[k];
			bool ok = false;
			char qh[300];

			if (by_ceiling) {
				for (size_t j = 0; cc && j < cc->n_bindings && !ok; j++)
					ok = binding_within(b, &cc->bindings[j]);
			} else {
				ok = binding_reachable(&p->network, b);
			}
			if (ok) {
				cr->bindings[wb++] = *b;
				continue;
			}
			quote(b->host, qh, sizeof(qh));
			if (by_ceiling)
				r = cut(c, &b->loc, e, cc ? cc->loc.line : line,
					"credentials %s binding %s (host %s) cut: %s", cr->name, b->id, qh,
					cc ? "no binding of the enterprise's credential of that name contains it"
					   : "the enterprise has no credential of that name");
			else
				r = cut(c, &b->loc, e, given_line(e, "network"),
					"credentials %s binding %s (host %s) cut: the narrowed network no longer "
					"takes its host and port through an intercepting endpoint",
					cr->name, b->id, qh);
			policy_binding_clear(b);
			if (r < 0)
				return r;
		}
		cr->n_bindings = wb;
		if (wb == 0) {
			policy_credential_clear(cr);
			continue;
		}
		p->credentials[wc++] = *cr;
	}
	p->n_credentials = wc;
	return 0;
}

/* ---- secrets the narrowed filesystem would show ---- */

/* Whether the agent sees path (for writing, when want_write), as
 * parse.c:agent_reaches judges a credential's source. */
static bool agent_reaches(const struct policy *p, const char *path, bool want_write)
{
	for (size_t i = 0; i < p->filesystem.deny.n; i++)
		if (policy_path_is_under(path, p->filesystem.deny.v[i].path))
			return false;
	if (p->sandbox.workspace && policy_path_is_under(path, p->sandbox.workspace))
		return true;
	for (size_t i = 0; i < p->filesystem.write.n; i++)
		if (policy_path_is_under(path, p->filesystem.write.v[i].path))
			return true;
	for (size_t i = 0; i < p->filesystem.read.n && !want_write; i++)
		if (policy_path_is_under(path, p->filesystem.read.v[i].path))
			return true;
	return false;
}

/* Each file was checked against its own filesystem section; a credential
 * locked in from the enterprise meets the developer's paths only here. A
 * credential whose secret file the agent could read, or whose command it
 * could replace, is cut. */
static int check_secrets(struct lctx *c, const struct ceiling *e)
{
	struct policy *p = c->p;
	size_t w = 0;
	int r;

	for (size_t i = 0; i < p->n_credentials; i++) {
		struct policy_credential *cr = &p->credentials[i];
		const char *bad = NULL;
		if (cr->source == POLICY_CRED_FILE && cr->source_arg && agent_reaches(p, cr->source_arg, false))
			bad = "its secret file is visible to the agent";
		else if (cr->source == POLICY_CRED_COMMAND && cr->command && cr->command[0] &&
			 cr->command[0][0] == '/' && agent_reaches(p, cr->command[0], true))
			bad = "its command is writable by the agent";
		if (!bad) {
			p->credentials[w++] = *cr;
			continue;
		}
		if ((r = cut(c, &cr->loc, e, e->section_line, "credentials %s cut: %s in the layered policy", cr->name,
			     bad)) < 0)
			return r;
		policy_credential_clear(cr);
	}
	p->n_credentials = w;
	return 0;
}

/* ---- entry point ---- */

/* ---- mcp ---- */

/*
 * The enterprise's mcp section is a ceiling over the developer's: a server
 * it does not list is cut; per tool name (resource URI, prompt name) the
 * decision is the lower of the two (deny < step_up < allow) with both
 * rules' argument constraints and the smaller call limit. Names are
 * languages (GLOB_NAME; GLOB_PATH for resource URIs): a developer rule whose names one enterprise rule
 * decides is narrowed in place; one whose names several enterprise rules
 * decide becomes one rule per enterprise pattern (each inside the
 * developer's), then a deny for the rest; anything else is cut to deny.
 */

static int arg_copy(const struct policy_mcp_arg *a, struct policy_mcp_arg *out)
{
	*out = *a;
	out->path = strdup(a->path);
	out->glob = a->glob ? strdup(a->glob) : NULL;
	out->regex = NULL;
	out->enum_vals = a->n_enum ? calloc(a->n_enum, sizeof(char *)) : NULL;
	if (!out->path || (a->glob && !out->glob) || (a->n_enum && !out->enum_vals))
		return -ENOMEM;
	for (size_t k = 0; k < a->n_enum; k++)
		if (!(out->enum_vals[k] = strdup(a->enum_vals[k])))
			return -ENOMEM;
	if (a->regex) {
		/* As policy/mcp.c compiles it: anchored, the whole value. */
		_cleanup_free_ char *anch = NULL;
		if (asprintf(&anch, "^(%s)$", a->regex) < 0)
			return -ENOMEM;
		if (regcomp(&out->re, anch, REG_EXTENDED | REG_NOSUB) != 0)
			return -EINVAL;
		if (!(out->regex = strdup(a->regex))) {
			regfree(&out->re);
			return -ENOMEM;
		}
	}
	return 0;
}

static void mrule_free(struct policy_mcp_rule *r)
{
	free(r->match);
	for (size_t j = 0; j < r->n_args; j++) {
		struct policy_mcp_arg *a = &r->args[j];
		free(a->path);
		free(a->glob);
		if (a->regex) {
			regfree(&a->re);
			free(a->regex);
		}
		for (size_t k = 0; a->enum_vals && k < a->n_enum; k++)
			free(a->enum_vals[k]);
		free(a->enum_vals);
	}
	free(r->args);
	memset(r, 0, sizeof(*r));
}

static enum policy_mcp_decision mdec_min(enum policy_mcp_decision a, enum policy_mcp_decision b)
{
	if (a == POLICY_MCP_DENY || b == POLICY_MCP_DENY)
		return POLICY_MCP_DENY;
	if (a == POLICY_MCP_STEP_UP || b == POLICY_MCP_STEP_UP)
		return POLICY_MCP_STEP_UP;
	return POLICY_MCP_ALLOW;
}

static uint64_t limit_min(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* rule d (developer) met with rule e (enterprise) on pattern `match`:
 * the lower decision, d's constraints then e's, the smaller limit. */
static int mrule_meet(const struct policy_mcp_rule *d, const struct policy_mcp_rule *e, const char *match,
		      struct policy_mcp_rule *out)
{
	int r = 0;
	memset(out, 0, sizeof(*out));
	out->decision = e ? mdec_min(d->decision, e->decision) : POLICY_MCP_DENY;
	out->line = d->line;
	out->max_calls = e ? limit_min(d->max_calls, e->max_calls) : d->max_calls;
	if (!(out->match = strdup(match)))
		return -ENOMEM;
	if (out->decision == POLICY_MCP_DENY)
		return 0;
	size_t n = d->n_args + (e ? e->n_args : 0);
	if (n && !(out->args = calloc(n, sizeof(*out->args))))
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		r = arg_copy(i < d->n_args ? &d->args[i] : &e->args[i - d->n_args], &out->args[i]);
		out->n_args++;
	}
	return r;
}

struct mdecide {
	size_t n_dev_before;
	size_t n_ent;
	bool *decides; /* n_ent + 1: [n_ent] = no enterprise rule */
};

static int mdecide_atom(void *vctx, const bool *sig, const char *w, size_t len, struct error *err)
{
	struct mdecide *m = vctx;
	(void)w, (void)len, (void)err;
	for (size_t i = 0; i < m->n_dev_before; i++)
		if (sig[i])
			return 0; /* an earlier developer rule decides it */
	for (size_t j = 0; j < m->n_ent; j++)
		if (sig[m->n_dev_before + j]) {
			m->decides[j] = true;
			return 0;
		}
	m->decides[m->n_ent] = true;
	return 0;
}

static int narrow_mcp_rules(struct lctx *c, const struct ceiling *e, const char *server, const char *kind,
			    struct policy_mcp_rule **rulesp, size_t *np, const struct policy_mcp_rule *er, size_t ne,
			    unsigned eline)
{
	struct policy_mcp_rule *rules = *rulesp, *out = NULL;
	size_t n = *np, nout = 0, cap = 0;
	int r = 0;
	struct glob **g = calloc(n + ne + 1, sizeof(*g));
	bool *decides = calloc(ne + 1, sizeof(bool));
	bool *inside = calloc(ne + 1, sizeof(bool));
	struct error gerr = { 0 };

	if (!g || !decides || !inside) {
		r = oom(c);
		goto done;
	}
	bool modelled = true;
	for (size_t i = 0; i < n + ne && modelled; i++)
		modelled = glob_compile(i < n ? rules[i].match : er[i - n].match,
					!strcmp(kind, "resources") ? GLOB_PATH : GLOB_NAME, &g[i], &gerr) == 0;
	for (size_t i = 0; i < n; i++) {
		struct policy_mcp_rule *d = &rules[i];
		struct policy_loc dloc = { .file = c->p->file, .line = d->line, .layer = "developer" };
		/* Room for every enterprise rule plus the rule itself. */
		if (nout + ne + 1 > cap) {
			size_t ncap = (nout + ne + 1) * 2;
			struct policy_mcp_rule *v = realloc(out, ncap * sizeof(*v));
			if (!v) {
				r = oom(c);
				goto done;
			}
			out = v;
			cap = ncap;
		}
		if (d->decision == POLICY_MCP_DENY) {
			out[nout++] = *d;
			memset(d, 0, sizeof(*d));
			continue;
		}
		size_t nd = 0, only = ne;
		bool all_inside = modelled;
		if (modelled) {
			memset(decides, 0, (ne + 1) * sizeof(bool));
			/* sig: the developer's earlier rules, then the enterprise's. */
			const struct glob *in[1] = { g[i] };
			struct glob **outs = calloc(i + ne + 1, sizeof(*outs));
			if (!outs) {
				r = oom(c);
				goto done;
			}
			for (size_t k = 0; k < i; k++)
				outs[k] = g[k];
			for (size_t j = 0; j < ne; j++)
				outs[i + j] = g[n + j];
			struct mdecide m = { .n_dev_before = i, .n_ent = ne, .decides = decides };
			r = glob_atoms(in, 1, (const struct glob *const *)outs, i + ne, mdecide_atom, &m, &gerr);
			free(outs);
			if (r < 0) {
				/* Too complex to compare: cut, as for an unmodelled pattern. */
				error_clear(&gerr);
				r = 0;
				all_inside = false;
				nd = 2;
			} else {
				for (size_t j = 0; j <= ne; j++)
					if (decides[j]) {
						nd++;
						only = j;
					}
				for (size_t j = 0; j < ne && all_inside; j++)
					if (decides[j]) {
						bool sub = false;
						const struct glob *one[1] = { g[i] };
						all_inside = glob_subset(g[n + j], one, 1, &sub, NULL, &gerr) == 0 && sub;
						error_clear(&gerr);
					}
			}
		}
		if (modelled && nd == 0) {
			/* Earlier rules take every name it covers: it decides nothing. */
			out[nout++] = *d;
			memset(d, 0, sizeof(*d));
			continue;
		}
		if (modelled && nd == 1) {
			/* One enterprise rule (or none: denied) decides all it covers. */
			const struct policy_mcp_rule *er1 = nd == 1 && only < ne ? &er[only] : NULL;
			if ((r = mrule_meet(d, er1, d->match, &out[nout])) < 0) {
				nout++;
				r = oom(c);
				goto done;
			}
			struct policy_mcp_rule *m = &out[nout++];
			if (m->decision != d->decision) {
				if ((r = cut(c, &dloc, e, er1 ? er1->line : eline,
					     "mcp.servers.%s.%s[%zu] (\"%s\"): %s narrowed to %s: %s", server, kind, i,
					     d->match, policy_mcp_decision_name(d->decision),
					     policy_mcp_decision_name(m->decision),
					     er1 ? "the enterprise's rule decides so" : "no enterprise rule allows these names")) < 0)
					goto done;
			} else if (er1 && (er1->n_args || (er1->max_calls && er1->max_calls != m->max_calls) ||
					   m->max_calls != d->max_calls)) {
				if ((r = cut(c, &dloc, e, er1->line,
					     "mcp.servers.%s.%s[%zu] (\"%s\"): the enterprise's argument constraints "
					     "and call limit apply too", server, kind, i, d->match)) < 0)
					goto done;
			}
			mrule_free(d);
			continue;
		}
		if (modelled && all_inside) {
			/* Several enterprise rules decide: one rule per enterprise
			 * pattern, in the enterprise's order, then a deny for the
			 * names no enterprise rule takes. Exact: each pattern lies
			 * inside the developer's, and first match order is kept. */
			for (size_t j = 0; j < ne; j++) {
				if (!decides[j])
					continue;
				if ((r = mrule_meet(d, &er[j], er[j].match, &out[nout])) < 0) {
					nout++;
					r = oom(c);
					goto done;
				}
				nout++;
			}
			if ((r = cut(c, &dloc, e, eline,
				     "mcp.servers.%s.%s[%zu] (\"%s\") split by the enterprise's rules: each name "
				     "gets the lower decision and both rules' constraints", server, kind, i, d->match)) < 0)
				goto done;
		} else {
			if ((r = cut(c, &dloc, e, eline,
				     "mcp.servers.%s.%s[%zu] (\"%s\") cut to deny: %s", server, kind, i, d->match,
				     modelled ? "several enterprise rules decide its names and the intersection "
						"is not a list of patterns"
					      : "a pattern here or in the enterprise's rules cannot be compared "
						"(an unterminated bracket or a collating element)")) < 0)
				goto done;
		}
		/* The developer's rule itself, now denying what is left, so
		 * that no later rule takes its names. */
		out[nout] = (struct policy_mcp_rule){ .match = d->match, .decision = POLICY_MCP_DENY, .line = d->line };
		d->match = NULL;
		nout++;
		mrule_free(d);
	}
done:
	for (size_t i = 0; g && i < n + ne; i++)
		glob_free(g[i]);
	free(g);
	free(decides);
	free(inside);
	if (r < 0) {
		for (size_t i = 0; i < nout; i++)
			mrule_free(&out[i]);
		free(out);
		return r;
	}
	for (size_t i = 0; i < n; i++)
		mrule_free(&rules[i]);
	free(rules);
	*rulesp = out;
	*np = nout;
	return 0;
}

static int narrow_mcp(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p;
	const struct policy_mcp *em = e->pol->mcp;
	unsigned eline = given_line(e, "mcp");
	int r;

	if (!em || !p->mcp)
		return 0;
	for (size_t i = 0; i < p->mcp->n_servers;) {
		struct policy_mcp_server *s = &p->mcp->servers[i];
		const struct policy_mcp_server *es = policy_mcp_server(em, s->name);
		struct policy_loc dloc = { .file = p->file, .line = s->line, .layer = "developer" };
		/* The enterprise's rules are about the program it names: another
		 * program under the same name has tools it never judged. */
		bool other_cmd = false;
		if (es && es->command) {
			other_cmd = s->n_command != es->n_command;
			for (size_t k = 0; k < s->n_command && !other_cmd; k++)
				other_cmd = strcmp(s->command[k], es->command[k]) != 0;
		}
		if (!es || other_cmd) {
			if ((r = cut(c, &dloc, e, es && es->line ? es->line : eline, "mcp.servers.%s cut: %s", s->name,
				     es ? "its command is not the enterprise's server of that name"
					: "the enterprise's mcp section does not list it")) < 0)
				return r;
			/* Remove by moving the last server here; a one-server
			 * policy struct frees through policy_mcp_free. */
			struct policy_mcp one = { .servers = s, .n_servers = 1 };
			struct policy_mcp *tmp = calloc(1, sizeof(*tmp));
			if (!tmp)
				return oom(c);
			tmp->servers = calloc(1, sizeof(*tmp->servers));
			if (!tmp->servers) {
				free(tmp);
				return oom(c);
			}
			tmp->servers[0] = *one.servers;
			tmp->n_servers = 1;
			p->mcp->servers[i] = p->mcp->servers[--p->mcp->n_servers];
			policy_mcp_free(tmp);
			continue;
		}
		unsigned sline = es->line ? es->line : eline;
		if ((r = narrow_mcp_rules(c, e, s->name, "tools", &s->tools, &s->n_tools, es->tools, es->n_tools, sline)) <
			    0 ||
		    (r = narrow_mcp_rules(c, e, s->name, "resources", &s->resources, &s->n_resources, es->resources,
					  es->n_resources, sline)) < 0 ||
		    (r = narrow_mcp_rules(c, e, s->name, "prompts", &s->prompts, &s->n_prompts, es->prompts,
					  es->n_prompts, sline)) < 0)
			return r;
		/* The pin file holds the approved tool definitions, and the
		 * server policy its sandbox: the enterprise's (its default when
		 * it writes none) replace the developer's. */
		const struct {
			const char *name;
			char **dev;
			const char *ent;
		} files[] = { { "pins", &s->pins, es->pins }, { "policy", &s->policy, es->policy } };
		for (size_t k = 0; k < ARRAY_SIZE(files); k++) {
			if (str_eq(*files[k].dev, files[k].ent))
				continue;
			if ((r = cut(c, &dloc, e, sline, "mcp.servers.%s.%s: %s applies", s->name, files[k].name,
				     files[k].ent ? files[k].ent : "the default")) < 0 ||
			    (r = set_str(files[k].dev, files[k].ent)) < 0)
				return r == -ENOMEM ? oom(c) : r;
			if (k == 1)
				s->policy_line = es->policy_line;
		}
		uint64_t mc = limit_min(s->max_calls, es->max_calls);
		if (mc != s->max_calls) {
			if ((r = cut(c, &dloc, e, sline, "mcp.servers.%s.max_calls lowered to %llu", s->name,
				     (unsigned long long)mc)) < 0)
				return r;
			s->max_calls = mc;
		}
		const struct {
			const char *name;
			bool *dev;
			bool ent;
		} req[] = { { "sampling", &s->sampling, es->sampling },
			    { "elicitation", &s->elicitation, es->elicitation },
			    { "roots", &s->roots, es->roots } };
		for (size_t k = 0; k < ARRAY_SIZE(req); k++)
			if (*req[k].dev && !req[k].ent) {
				if ((r = cut(c, &dloc, e, sline, "mcp.servers.%s.server_requests.%s cut", s->name,
					     req[k].name)) < 0)
					return r;
				*req[k].dev = false;
			}
		/* block (0) < redact (1) < off (2): the stricter wins. */
		if (es->scan_secrets < s->scan_secrets) {
			if ((r = cut(c, &dloc, e, sline, "mcp.servers.%s.scan.secrets raised to the enterprise's", s->name)) <
			    0)
				return r;
			s->scan_secrets = es->scan_secrets;
		}
		if (es->scan_injection < s->scan_injection) {
			if ((r = cut(c, &dloc, e, sline, "mcp.servers.%s.scan.injection raised to the enterprise's",
				     s->name)) < 0)
				return r;
			s->scan_injection = es->scan_injection;
		}
		i++;
	}
	return 0;
}

int policy_apply_enterprise(struct policy *p, char *const *files, size_t n, const struct policy_ctx *ctx,
			    struct policy_layer_report *rep, struct error *err)
{
	struct ceiling *es = NULL;
	struct lctx c = { .p = p, .rep = rep, .err = err };
	int r = 0;

	memset(rep, 0, sizeof(*rep));
	if (n == 0)
		return 0;
	/* In an enterprise file "~" is the home directory of the user
	 * running airlock as the password database says, and $WORKSPACE is
	 * the developer's workspace: neither $HOME nor the directory the run
	 * starts in (both the developer's to choose) moves the enterprise's
	 * paths away from what they protect. */
	char home[PATH_MAX] = "/";
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096];
	if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp && pwp->pw_dir &&
	    pwp->pw_dir[0] == '/')
		snprintf(home, sizeof(home), "%s", pwp->pw_dir);
	struct policy_ctx ectx = { .home = home,
				   .cwd = p->sandbox.workspace ? p->sandbox.workspace : ctx->cwd,
				   .no_env = ctx->no_env };
	if (!(es = calloc(n, sizeof(*es))))
		return error_set(err, ENOMEM, "enterprise: out of memory");
	walk_locs(p, mark_developer, NULL);
	for (size_t i = 0; i < n; i++) {
		char **lf = realloc(p->layer_files, (p->n_layer_files + 1) * sizeof(*lf));
		if (!lf || !(lf[p->n_layer_files] = strdup(files[i]))) {
			if (lf)
				p->layer_files = lf;
			r = error_set(err, ENOMEM, "enterprise: out of memory");
			goto out;
		}
		p->layer_files = lf;
		es[i].file = lf[p->n_layer_files++];
		if ((r = load_ceiling(&es[i], files[i], &ectx, err)) < 0)
			goto out;
		walk_locs(es[i].pol, mark_enterprise, (void *)es[i].file);
		if (es[i].refuse && !rep->refuse) {
			rep->refuse = true;
			if (asprintf(&rep->refuse_by, "%s:%u", es[i].file, es[i].refuse_line) < 0) {
				rep->refuse_by = NULL;
				r = error_set(err, ENOMEM, "enterprise: out of memory");
				goto out;
			}
		}
	}
	/* Locks first, all of them: the locked value is then narrowed by
	 * every other file's ceiling like any developer value would be. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < es[i].n_lock; k++) {
			bool earlier = false;
			for (size_t j = 0; j < i && !earlier; j++)
				for (size_t x = 0; x < es[j].n_lock && !earlier; x++)
					earlier = es[j].lock[x] == es[i].lock[k];
			const struct policy_loc *at = dev_set(p, es[i].lock[k]);
			if (at && !earlier) {
				if ((r = cut(&c, at, &es[i], es[i].lock_line[k],
					     "%s is locked by the enterprise: the developer's setting is ignored",
					     es[i].lock[k])) < 0)
					goto out;
			}
			if (!earlier) {
				swap_field(p, es[i].pol, es[i].lock[k]);
				es[i].swapped[k] = true;
			}
		}
	for (size_t i = 0; i < n; i++) {
		if ((r = narrow_sandbox(&c, &es[i])) < 0 || (r = narrow_filesystem(&c, &es[i])) < 0 ||
		    (r = narrow_env(&c, &es[i])) < 0 || (r = narrow_network(&c, &es[i])) < 0 ||
		    (r = narrow_credentials(&c, &es[i], true)) < 0 || (r = narrow_audit(&c, &es[i])) < 0 ||
		    (r = narrow_mcp(&c, &es[i])) < 0)
			goto out;
	}
	/* A secret may only go where the narrowed network still reaches
	 * (named after the last file that narrowed the network). */
	size_t last = n - 1;
	for (size_t i = 0; i < n; i++)
		if (given_line(&es[i], "network"))
			last = i;
	if ((r = narrow_credentials(&c, &es[last], false)) < 0 || (r = check_secrets(&c, &es[last])) < 0)
		goto out;
out:
	for (size_t i = 0; i < n; i++) {
		policy_free(es[i].pol);
		free(es[i].given);
	}
	free(es);
	return r;
}
