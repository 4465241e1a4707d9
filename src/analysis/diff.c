/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The widening prover (diff.h). Each section is a set; NEW ⊆ OLD is
 * decided by splitting the space into atoms (glob_atoms: the pieces on
 * which every pattern involved is constant) and deciding each atom with
 * the same rule the enforcing code applies: the first endpoint whose host
 * and port match, the rules inside it, the deepest mount, and so on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/diff_internal.h"
#include "policy/glob.h"
#include "policy/mcp.h"
#include "util/cleanup.h"

/* ---- findings ---- */

static char *vfmt(const char *fmt, va_list ap) PRINTF_LIKE(1, 0);
static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

static void loc_text(const struct policy *p, const struct policy_loc *l, char *buf, size_t size)
{
	const char *file = l && l->file ? l->file : p->file;
	if (l && l->line)
		snprintf(buf, size, "%s:%u", file, l->line);
	else
		snprintf(buf, size, "%s (default)", file);
}

int diff_add(struct policy_diff *d, struct error *err, const char *section, const struct policy *p,
	       const struct policy_loc *loc, const char *witness, const char *fmt, ...)
{
	char where[512];
	va_list ap;

	loc_text(p, loc, where, sizeof(where));
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct policy_widening *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		d->v = v;
		d->cap = cap;
	}
	va_start(ap, fmt);
	_cleanup_free_ char *msg = vfmt(fmt, ap);
	va_end(ap);
	struct policy_widening *w = &d->v[d->n];
	*w = (struct policy_widening){ 0 };
	w->section = strdup(section);
	w->where = strdup(where);
	w->witness = strdup(witness ? witness : "");
	if (msg && asprintf(&w->text, "%s: NEW %s %s", section, where, msg) < 0)
		w->text = NULL;
	if (!msg || !w->section || !w->where || !w->witness || !w->text) {
		free(w->section);
		free(w->where);
		free(w->witness);
		free(w->text);
		return error_set(err, ENOMEM, "out of memory");
	}
	d->n++;
	return 0;
}

void policy_diff_free(struct policy_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].section);
		free(d->v[i].where);
		free(d->v[i].witness);
		free(d->v[i].text);
	}
	free(d->v);
	*d = (struct policy_diff){ 0 };
}

void policy_diff_print(const struct policy_diff *d, FILE *f)
{
	for (size_t i = 0; i < d->n; i++) {
		for (const char *c = d->v[i].text; *c; c++)
			fputc((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f ? '?' : *c, f);
		fputc('\n', f);
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c >= 0x7f)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

void policy_diff_print_json(const struct policy_diff *d, FILE *f)
{
	fputs("[", f);
	for (size_t i = 0; i < d->n; i++) {
		fputs(i ? ",\n {\"section\": " : "\n {\"section\": ", f);
		json_string(f, d->v[i].section);
		fputs(", \"new\": ", f);
		json_string(f, d->v[i].where);
		fputs(", \"witness\": ", f);
		json_string(f, d->v[i].witness);
		fputs(", \"message\": ", f);
		json_string(f, d->v[i].text);
		fputs("}", f);
	}
	fputs(d->n ? "\n]\n" : "]\n", f);
}

/* ---- compiled pattern lists ---- */

void diff_gvec_free(struct gvec *g)
{
	for (size_t i = 0; i < g->n; i++)
		glob_free(g->v[i]);
	free(g->v);
	*g = (struct gvec){ 0 };
}

static int gvec_push(struct gvec *g, struct glob *x, struct error *err)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct glob **v = realloc(g->v, cap * sizeof(*v));
		if (!v) {
			glob_free(x);
			return error_set(err, ENOMEM, "out of memory");
		}
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = x;
	return 0;
}

int diff_gvec_add(struct gvec *g, const char *pattern, enum glob_kind kind, struct error *err)
{
	struct glob *x = NULL;
	int r = glob_compile(pattern, kind, &x, err);
	if (r < 0)
		return r;
	return gvec_push(g, x, err);
}


bool diff_str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* ---- single settings ---- */

static int rank_boundary(enum policy_boundary b)
{
	return b == POLICY_BOUNDARY_MICROVM ? 2 : b == POLICY_BOUNDARY_GVISOR ? 1 : 0;
}

static int scalar_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	int r = 0;
	char w[256];

	if (rank_boundary(new_->sandbox.boundary) < rank_boundary(old->sandbox.boundary)) {
		snprintf(w, sizeof(w), "boundary %s", policy_boundary_name(new_->sandbox.boundary));
		if ((r = diff_add(d, err, "sandbox.boundary", new_, &new_->origin.boundary, w,
			     "runs the agent behind a %s boundary; OLD requires %s",
			     policy_boundary_name(new_->sandbox.boundary), policy_boundary_name(old->sandbox.boundary))) < 0)
			return r;
	}
	if (new_->sandbox.mode == POLICY_MODE_OBSERVE && old->sandbox.mode != POLICY_MODE_OBSERVE &&
	    (r = diff_add(d, err, "sandbox.mode", new_, &new_->origin.mode, "mode observe",
		     "enforces nothing (observe); OLD enforces (%s)", policy_mode_name(old->sandbox.mode))) < 0)
		return r;

	const struct {
		const char *name;
		uint64_t o, n;
		const struct policy_loc *loc;
	} lim[] = {
		{ "memory", old->sandbox.limits.memory_bytes, new_->sandbox.limits.memory_bytes, &new_->origin.memory },
		{ "pids", old->sandbox.limits.pids, new_->sandbox.limits.pids, &new_->origin.pids },
		{ "open_files", old->sandbox.limits.open_files, new_->sandbox.limits.open_files, &new_->origin.open_files },
		{ "cpu", old->sandbox.limits.cpu_seconds, new_->sandbox.limits.cpu_seconds, &new_->origin.cpu },
		{ "wall", old->sandbox.limits.wall_seconds, new_->sandbox.limits.wall_seconds, &new_->origin.wall },
	};
	for (size_t i = 0; i < ARRAY_SIZE(lim); i++) {
		if (lim[i].o == 0 || (lim[i].n != 0 && lim[i].n <= lim[i].o))
			continue;
		if (lim[i].n == 0)
			snprintf(w, sizeof(w), "%s unlimited", lim[i].name);
		else
			snprintf(w, sizeof(w), "%s %llu", lim[i].name, (unsigned long long)lim[i].n);
		if ((r = diff_add(d, err, "sandbox.limits", new_, lim[i].loc, w, "allows %s; OLD's limit is %llu", w,
			     (unsigned long long)lim[i].o)) < 0)
			return r;
	}
	if (!new_->audit.enabled && old->audit.enabled &&
	    (r = diff_add(d, err, "audit", new_, &new_->origin.audit_enabled, "audit disabled",
		     "turns the signed decision log off; OLD keeps it")) < 0)
		return r;
	/* A larger log lets the agent make the host hold more before the
	 * run is ended. */
	if (new_->audit.enabled && old->audit.enabled && new_->audit.max_size > old->audit.max_size) {
		snprintf(w, sizeof(w), "a decision log of %llu bytes", (unsigned long long)new_->audit.max_size);
		if ((r = diff_add(d, err, "audit", new_, &new_->origin.audit_max_size, w,
			     "lets the decision log reach %llu bytes; OLD ends the run at %llu",
			     (unsigned long long)new_->audit.max_size, (unsigned long long)old->audit.max_size)) < 0)
			return r;
	}
	if (!new_->identity.header && old->identity.header &&
	    (r = diff_add(d, err, "identity", new_, &new_->origin.identity_header, "no identity header",
		     "drops the signed Airlock-Identity header; OLD sends it")) < 0)
		return r;

	/* process: variables that reach the agent */
	for (size_t i = 0; i < new_->process.n_env_pass; i++) {
		bool known = false;
		for (size_t j = 0; j < old->process.n_env_pass && !known; j++)
			known = !strcmp(new_->process.env_pass[i], old->process.env_pass[j]);
		if (known)
			continue;
		const struct policy_loc *loc = new_->process.env_pass_loc ? &new_->process.env_pass_loc[i]
									  : &new_->origin.env_pass;
		snprintf(w, sizeof(w), "$%s", new_->process.env_pass[i]);
		if ((r = diff_add(d, err, "process.env", new_, loc, w, "passes %s from the caller's environment; OLD does not",
			     w)) < 0)
			return r;
	}
	for (size_t i = 0; i < new_->process.n_env_set; i++) {
		const struct policy_env_var *v = &new_->process.env_set[i];
		bool same = false;
		for (size_t j = 0; j < old->process.n_env_set && !same; j++)
			same = !strcmp(v->name, old->process.env_set[j].name) &&
			       diff_str_eq(v->value, old->process.env_set[j].value);
		if (same)
			continue;
		snprintf(w, sizeof(w), "$%s", v->name);
		if ((r = diff_add(d, err, "process.env", new_, &v->loc, w, "sets %s to a value OLD does not give it", w)) < 0)
			return r;
	}
	if (new_->process.git_identity && !old->process.git_identity &&
	    (r = diff_add(d, err, "process.git_identity", new_, &new_->origin.git_identity, "git_identity host",
		     "gives the agent the host's git user.name and user.email; OLD does not")) < 0)
		return r;
	return 0;
}

/* Fields outside the set comparisons above (schema.c names each field's
 * prover rule): a host socket, a pinned address, review mode, the host
 * ids the agent acts as, an MCP server's own sandbox. */
static int fields_diff(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	char w[600];
	int r;

	/* A socket is a door to a host service (a Docker-style socket is the
	 * host): any socket OLD does not bind is wider. */
	for (size_t i = 0; i < new_->filesystem.sockets.n; i++) {
		const struct policy_path *x = &new_->filesystem.sockets.v[i];
		bool known = false;
		for (size_t j = 0; j < old->filesystem.sockets.n && !known; j++)
			known = !strcmp(x->path, old->filesystem.sockets.v[j].path);
		if (!known && (r = diff_add(d, err, "filesystem.sockets", new_, &x->loc, x->path,
				       "lets the agent reach the host socket %s; OLD does not", x->path)) < 0)
			return r;
	}
	/* A pin replaces DNS: traffic for an allowed name (a passthrough
	 * tunnel included) goes to the pinned address. */
	if (policy_net_mode(new_) != POLICY_NET_NONE) {
		const struct policy_network *nn = &new_->network, *on = &old->network;
		for (size_t i = 0; i < nn->n_resolve; i++) {
			const struct policy_resolve *x = &nn->resolve[i], *o = NULL;
			for (size_t j = 0; j < on->n_resolve && !o; j++)
				if (!strcmp(on->resolve[j].host, x->host))
					o = &on->resolve[j];
			if (o && !strcmp(o->addr, x->addr))
				continue;
			snprintf(w, sizeof(w), "%s -> %s", x->host, x->addr);
			if ((r = diff_add(d, err, "network.resolve", new_, &x->loc, w, "sends %s to %s; OLD %s%s", x->host,
				     x->addr, o ? "pins it to " : "resolves it by DNS", o ? o->addr : "")) < 0)
				return r;
		}
		for (size_t j = 0; j < on->n_resolve; j++) {
			bool have = false;
			for (size_t i = 0; i < nn->n_resolve && !have; i++)
				have = !strcmp(nn->resolve[i].host, on->resolve[j].host);
			if (have)
				continue;
			snprintf(w, sizeof(w), "%s -> DNS", on->resolve[j].host);
			if ((r = diff_add(d, err, "network.resolve", new_, &new_->network.loc, w,
				     "resolves %s by DNS; OLD pins it to %s", on->resolve[j].host, on->resolve[j].addr)) < 0)
				return r;
		}
	}
	if (policy_workspace_mode_rank(new_->sandbox.workspace_mode) <
	    policy_workspace_mode_rank(old->sandbox.workspace_mode)) {
		snprintf(w, sizeof(w), "workspace_mode %s", policy_workspace_mode_name(new_->sandbox.workspace_mode));
		if ((r = diff_add(d, err, "sandbox.workspace_mode", new_, &new_->origin.workspace_mode, w, "%s; OLD %s",
			     new_->sandbox.workspace_mode == POLICY_WS_DIRECT
				     ? "lets the agent's writes reach the workspace directly"
				     : "lets a hand-off file reach the workspace on one accept",
			     old->sandbox.workspace_mode == POLICY_WS_REVIEW ? "puts them up for review"
									     : "refuses hand-off files")) < 0)
			return r;
	}
	const struct {
		const char *name;
		int64_t n, o;
		const struct policy_loc *loc;
	} ids[] = {
		{ "host_uid", new_->sandbox.host_uid, old->sandbox.host_uid, &new_->origin.host_uid },
		{ "host_gid", new_->sandbox.host_gid, old->sandbox.host_gid, &new_->origin.host_gid },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		if (ids[i].n == ids[i].o)
			continue;
		char nv[32], ov[32];
		if (ids[i].n < 0)
			snprintf(nv, sizeof(nv), "auto");
		else
			snprintf(nv, sizeof(nv), "%lld", (long long)ids[i].n);
		if (ids[i].o < 0)
			snprintf(ov, sizeof(ov), "auto");
		else
			snprintf(ov, sizeof(ov), "%lld", (long long)ids[i].o);
		snprintf(w, sizeof(w), "%s %s", ids[i].name, nv);
		if ((r = diff_add(d, err, "sandbox.ids", new_, ids[i].loc, w,
			     "runs the agent as another host %s (%s; OLD %s): it may open other host files", ids[i].name + 5,
			     nv, ov)) < 0)
			return r;
	}
	for (size_t i = 0; new_->mcp && old->mcp && i < new_->mcp->n_servers; i++) {
		const struct policy_mcp_server *ns = &new_->mcp->servers[i];
		const struct policy_mcp_server *os = policy_mcp_server(old->mcp, ns->name);
		if (!os || diff_str_eq(ns->policy, os->policy))
			continue;
		struct policy_loc loc = { .file = new_->file, .line = ns->policy_line ? ns->policy_line : ns->line };
		snprintf(w, sizeof(w), "%s policy %s", ns->name, ns->policy ? ns->policy : "(default)");
		if ((r = diff_add(d, err, "mcp", new_, &loc, w, "runs server %s under another sandbox policy (%s); OLD uses %s",
			     ns->name, ns->policy ? ns->policy : "the default", os->policy ? os->policy : "the default")) < 0)
			return r;
	}
	return 0;
}

int policy_diff(const struct policy *old, const struct policy *new_, struct policy_diff *out, struct error *err)
{
	int r;

	if ((r = scalar_diff(old, new_, out, err)) < 0 || (r = diff_net(old, new_, out, err)) < 0 ||
	    (r = diff_private(old, new_, out, err)) < 0 || (r = diff_cred(old, new_, out, err)) < 0 ||
	    (r = diff_fs(old, new_, out, err)) < 0 || (r = diff_mcp(old, new_, out, err)) < 0 ||
	    (r = fields_diff(old, new_, out, err)) < 0)
		return r;
	return 0;
}
