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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/glob.h"
#include "policy/internal.h"
#include "policy/layer.h"
#include "policy/layer_internal.h"
#include "policy/mcp.h"
#include "util/cleanup.h"

#define MAX_ENTERPRISE_FILES 256

/* A member of struct policy, exchanged byte for byte by a lock. */
#define M(member) { offsetof(struct policy, member), sizeof(((struct policy *)0)->member) }

/* Fields an enterprise file may lock: the developer's value is replaced by
 * the enterprise file's (its default when the file does not write it).
 * Each names every member that holds it, its origin included.
 * WARNING: a member left out here would keep the developer's value under
 * a lock. */
static const struct lockable {
	const char *name;
	struct {
		size_t off, size; /* size 0: the end */
	} m[8];
} lockable[] = {
	{ "sandbox.boundary", { M(sandbox.boundary), M(origin.boundary) } },
	{ "sandbox.mode", { M(sandbox.mode), M(origin.mode) } },
	{ "sandbox.limits",
	  { M(sandbox.limits), M(origin.memory), M(origin.pids), M(origin.open_files), M(origin.cpu), M(origin.wall) } },
	{ "filesystem.baseline", { M(filesystem.baseline), M(origin.baseline) } },
	{ "filesystem.read", { M(filesystem.read) } },
	{ "filesystem.write", { M(filesystem.write) } },
	{ "filesystem.deny", { M(filesystem.deny) } },
	{ "filesystem.protect",
	  { M(filesystem.protect), M(filesystem.protect_defaults), M(filesystem.protect_build),
	    M(origin.protect_defaults), M(origin.protect_build) } },
	{ "filesystem.sockets", { M(filesystem.sockets) } },
	{ "process.exec", { M(process.exec_set), M(process.exec), M(origin.exec) } },
	{ "process.env",
	  { M(process.env_pass), M(process.n_env_pass), M(process.env_pass_loc), M(process.env_set),
	    M(process.n_env_set), M(origin.env_pass), M(origin.env_set) } },
	{ "network",
	  { M(network), M(origin.net_mode), M(origin.upstream_ca), M(origin.max_body), M(origin.allow_compressed),
	    M(origin.net_log) } },
	{ "credentials", { M(credentials), M(n_credentials) } },
	{ "identity", { M(identity.agent), M(identity.header), M(origin.agent), M(origin.identity_header) } },
	{ "audit",
	  { M(audit.enabled), M(audit.dir), M(origin.audit_enabled), M(origin.audit_dir), M(audit.max_size),
	    M(origin.audit_max_size) } },
};
#undef M

/* ---- small helpers ---- */

int layer_oom(struct lctx *c)
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

bool layer_str_eq(const char *a, const char *b)
{
	return (!a || !b) ? a == b : strcmp(a, b) == 0;
}

unsigned layer_given(const struct ceiling *e, const char *name)
{
	for (size_t i = 0; i < e->n_given; i++)
		if (strcmp(e->given[i].name, name) == 0)
			return e->given[i].line;
	return 0;
}

bool layer_locked(const struct ceiling *e, const char *field)
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

int layer_cut(struct lctx *c, const struct policy_loc *dev, const struct ceiling *e, unsigned eline,
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
		return layer_oom(c);
	char **v = realloc(c->rep->msgs, (c->rep->n_msgs + 1) * sizeof(*v));
	if (!v) {
		free(msg);
		return layer_oom(c);
	}
	v[c->rep->n_msgs++] = msg;
	c->rep->msgs = v;
	return 0;
}

void layer_quote(const char *s, char *buf, size_t size)
{
	policy_quote(s, strlen(s), buf, size);
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
				for (x = 0; x < ARRAY_SIZE(lockable) && f->type == POLICY_YNODE_SCALAR; x++)
					if (strcmp(lockable[x].name, f->str) == 0)
						break;
				if (f->type != POLICY_YNODE_SCALAR || x == ARRAY_SIZE(lockable))
					return EFAIL(e, f, field,
						     "not a field that can be locked; valid: sandbox.boundary, "
						     "sandbox.mode, sandbox.limits, filesystem.baseline, "
						     "filesystem.read, filesystem.write, filesystem.deny, "
						     "filesystem.protect, filesystem.sockets, process.exec, process.env, network, "
						     "credentials, identity, audit");
				if (e->n_lock >= sizeof(e->lock) / sizeof(e->lock[0]))
					return EFAIL(e, f, field, "too many locks");
				for (size_t y = 0; y < e->n_lock; y++)
					if (e->lock[y] == lockable[x].name)
						return EFAIL(e, f, field, "%s is locked twice", lockable[x].name);
				e->lock[e->n_lock] = lockable[x].name;
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

/* Exchange field between the effective policy and the ceiling: the
 * developer's value is freed with the ceiling. */
static void swap_field(struct policy *p, struct policy *q, const char *field)
{
	for (size_t i = 0; i < ARRAY_SIZE(lockable); i++) {
		if (strcmp(lockable[i].name, field) != 0)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(lockable[i].m) && lockable[i].m[k].size; k++) {
			unsigned char *x = (unsigned char *)p + lockable[i].m[k].off;
			unsigned char *y = (unsigned char *)q + lockable[i].m[k].off;
			for (size_t b = 0; b < lockable[i].m[k].size; b++) {
				unsigned char t = x[b];
				x[b] = y[b];
				y[b] = t;
			}
		}
		return;
	}
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
				if ((r = layer_cut(&c, at, &es[i], es[i].lock_line[k],
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
		if ((r = layer_narrow_sandbox(&c, &es[i])) < 0 || (r = layer_narrow_filesystem(&c, &es[i])) < 0 ||
		    (r = layer_narrow_env(&c, &es[i])) < 0 || (r = layer_narrow_network(&c, &es[i])) < 0 ||
		    (r = layer_narrow_credentials(&c, &es[i], true)) < 0 || (r = layer_narrow_audit(&c, &es[i])) < 0 ||
		    (r = layer_narrow_mcp(&c, &es[i])) < 0)
			goto out;
	}
	/* A secret may only go where the narrowed network still reaches
	 * (named after the last file that narrowed the network). */
	size_t last = n - 1;
	for (size_t i = 0; i < n; i++)
		if (layer_given(&es[i], "network"))
			last = i;
	if ((r = layer_narrow_credentials(&c, &es[last], false)) < 0 || (r = layer_check_secrets(&c, &es[last])) < 0)
		goto out;
out:
	for (size_t i = 0; i < n; i++) {
		policy_free(es[i].pol);
		free(es[i].given);
	}
	free(es);
	return r;
}
