/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Enterprise layers (layer.c): the filesystem, process and sandbox
 * sections, the decision log and identity narrowed by one ceiling, and the
 * credentials whose secrets the narrowed filesystem would show.
 *
 * WARNING: as everywhere in layering, only removing from the developer's
 * policy or narrowing an entry (layer_internal.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"
#include "policy/internal.h"
#include "policy/layer.h"
#include "policy/layer_internal.h"
#include "util/cleanup.h"


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
		layer_quote(d->path, q, sizeof(q));
		r = added ? layer_cut(c, &d->loc, e, eline, "%s %s narrowed to the %zu enterprise entr%s beneath it", field,
				q, added, added == 1 ? "y" : "ies")
			  : layer_cut(c, &d->loc, e, eline, "%s %s cut: no enterprise %s entry covers it", field, q, field);
	}
	if (r == -ENOMEM)
		r = layer_oom(c);
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
			return layer_oom(c);
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
	unsigned line = 0, deny_line = layer_given(e, "filesystem.deny");
	size_t n_lists = 0, w = 0;
	const char *by = NULL;
	int r;

	if (layer_locked(e, "filesystem.sockets"))
		return 0;
	if ((line = layer_given(e, "filesystem.sockets"))) {
		lists[n_lists++] = &q->filesystem.sockets;
		by = "filesystem.sockets";
	} else {
		unsigned rl = layer_given(e, "filesystem.read"), wl = layer_given(e, "filesystem.write");
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
		layer_quote(d->path, q1, sizeof(q1));
		if (denied)
			r = layer_cut(c, &d->loc, e, deny_line ? deny_line : e->section_line,
				"filesystem.sockets %s cut: it lies beneath %s, denied by %s:%u", q1, denied->path,
				denied->loc.file, denied->loc.line);
		else
			r = layer_cut(c, &d->loc, e, line, "filesystem.sockets %s cut: no enterprise %s entry covers it", q1,
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

int layer_narrow_filesystem(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	unsigned line;
	int r;

	if ((line = layer_given(e, "filesystem.baseline")) && !q->filesystem.baseline && p->filesystem.baseline &&
	    !layer_locked(e, "filesystem.baseline")) {
		if (p->origin.baseline.line && (r = layer_cut(c, &p->origin.baseline, e, line,
							"filesystem.baseline: true cut to false")) < 0)
			return r;
		p->filesystem.baseline = false;
		p->origin.baseline = q->origin.baseline;
	}
	if ((line = layer_given(e, "filesystem.read"))) {
		/* What may be read: the ceiling's read and write lists. */
		const struct policy_paths *lists[2] = { &q->filesystem.read, &q->filesystem.write };
		if (!layer_locked(e, "filesystem.read") &&
		    (r = narrow_paths(c, &p->filesystem.read, lists, 2, e, line, "filesystem.read", false)) < 0)
			return r;
	}
	if ((line = layer_given(e, "filesystem.write")) && !layer_locked(e, "filesystem.write")) {
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
			layer_quote(p->sandbox.workspace, qw, sizeof(qw));
			if ((r = layer_cut(c, &p->sandbox.workspace_loc, e, line,
				     "sandbox.workspace %s is not beneath an enterprise filesystem.write entry; a "
				     "workspace cannot be narrowed, so the run is refused",
				     qw)) < 0)
				return r;
			if (!c->rep->refuse) {
				c->rep->refuse = true;
				if (asprintf(&c->rep->refuse_by, "%s:%u", e->file, line) < 0) {
					c->rep->refuse_by = NULL;
					return layer_oom(c);
				}
			}
		}
	}
	if (layer_given(e, "filesystem.deny") && !layer_locked(e, "filesystem.deny") &&
	    (r = union_paths(c, &p->filesystem.deny, &q->filesystem.deny)) < 0)
		return r;
	if ((r = narrow_sockets(c, e)) < 0)
		return r;
	if (!layer_locked(e, "filesystem.protect")) {
		if (layer_given(e, "filesystem.protect") &&
		    (r = union_paths(c, &p->filesystem.protect, &q->filesystem.protect)) < 0)
			return r;
		if ((line = layer_given(e, "filesystem.protect_defaults")) && q->filesystem.protect_defaults &&
		    !p->filesystem.protect_defaults) {
			if ((r = layer_cut(c, &p->origin.protect_defaults, e, line,
				     "filesystem.protect_defaults: false cut to true")) < 0)
				return r;
			p->filesystem.protect_defaults = true;
			p->origin.protect_defaults = q->origin.protect_defaults;
		}
		if ((line = layer_given(e, "filesystem.protect_build")) && q->filesystem.protect_build &&
		    !p->filesystem.protect_build) {
			p->filesystem.protect_build = true;
			p->origin.protect_build = q->origin.protect_build;
		}
	}
	if ((line = layer_given(e, "process.exec")) && !layer_locked(e, "process.exec")) {
		const struct policy_paths *lists[1] = { &q->process.exec };
		if (!p->process.exec_set) {
			/* The implicit grant, written out so it can be narrowed
			 * like an explicit one. */
			static const struct policy_loc none = { POLICY_DEFAULT_FILE, 0, 0, NULL, NULL };
			if (p->filesystem.baseline)
				for (size_t i = 0; i < sizeof(implicit_exec) / sizeof(*implicit_exec); i++)
					if (path_push(&p->process.exec, implicit_exec[i], &none) < 0)
						return layer_oom(c);
			if (path_push(&p->process.exec, p->sandbox.workspace, &p->sandbox.workspace_loc) < 0)
				return layer_oom(c);
			p->process.exec_set = true;
		}
		if ((r = narrow_paths(c, &p->process.exec, lists, 1, e, line, "process.exec", true)) < 0)
			return r;
		if (!p->origin.exec.line)
			p->origin.exec = q->origin.exec;
	}
	if ((line = layer_given(e, "process.git_identity")) && !q->process.git_identity && p->process.git_identity) {
		if ((r = layer_cut(c, &p->origin.git_identity, e, line,
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
	unsigned line = layer_given(e, "process.env.set");
	size_t w = 0;
	int r;

	if (!line || layer_locked(e, "process.env"))
		return 0;
	for (size_t i = 0; i < p->process.n_env_set; i++) {
		struct policy_env_var *v = &p->process.env_set[i];
		bool same = false;
		for (size_t j = 0; j < q->process.n_env_set && !same; j++)
			same = !strcmp(v->name, q->process.env_set[j].name) && layer_str_eq(v->value, q->process.env_set[j].value);
		if (same) {
			p->process.env_set[w++] = *v;
			continue;
		}
		if (v->loc.line && (r = layer_cut(c, &v->loc, e, line,
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
			return layer_oom(c);
		p->process.env_set = nv;
		nv[p->process.n_env_set] = (struct policy_env_var){ strdup(ev->name), ev->value ? strdup(ev->value) : NULL,
								    ev->loc };
		if (!nv[p->process.n_env_set].name || (ev->value && !nv[p->process.n_env_set].value)) {
			free(nv[p->process.n_env_set].name);
			free(nv[p->process.n_env_set].value);
			return layer_oom(c);
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

int layer_narrow_env(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	unsigned line = layer_given(e, "process.env.pass");
	size_t w = 0;
	int r;

	if ((r = narrow_env_set(c, e)) < 0)
		return r;
	if (!line || layer_locked(e, "process.env"))
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
		if (l->line && (r = layer_cut(c, l, e, line, "process.env.pass %s cut: not in the enterprise list",
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
		int r = layer_cut(c, dloc, e, line, "sandbox.limits.%s %s cut to the enterprise limit %llu", name,
			    *dev ? "above the ceiling" : "unlimited", (unsigned long long)ceil);
		if (r < 0)
			return r;
	}
	*dev = ceil;
	*dloc = *cloc;
	return 0;
}

int layer_narrow_sandbox(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p, *q = e->pol;
	unsigned line;
	int r;

	if (layer_given(e, "sandbox.limits") && !layer_locked(e, "sandbox.limits")) {
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
			if ((line = layer_given(e, name)) &&
			    (r = min_limit(c, e, line, lims[i].dev, lims[i].dloc, lims[i].ceil, lims[i].cloc,
					   lims[i].name)) < 0)
				return r;
		}
	}
	/* A boundary written in an enterprise file is a minimum, like
	 * enterprise.require.boundary. */
	int want = e->boundary;
	unsigned bline = e->boundary_line;
	if ((line = layer_given(e, "sandbox.boundary")) && !layer_locked(e, "sandbox.boundary") &&
	    (int)q->sandbox.boundary > want) {
		want = (int)q->sandbox.boundary;
		bline = line;
	}
	if (want >= 0 && (int)p->sandbox.boundary < want) {
		if (p->origin.boundary.line &&
		    (r = layer_cut(c, &p->origin.boundary, e, bline, "sandbox.boundary: %s is below the required %s",
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
	if ((line = layer_given(e, "sandbox.workspace_mode")) &&
	    policy_workspace_mode_rank(p->sandbox.workspace_mode) < policy_workspace_mode_rank(q->sandbox.workspace_mode)) {
		if ((r = layer_cut(c, &p->origin.workspace_mode, e, line, "sandbox.workspace_mode: %s cut to %s: %s",
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
		if (!(line = layer_given(e, ids[i].name)) || *ids[i].dev == ids[i].ceil)
			continue;
		if ((r = layer_cut(c, ids[i].dloc, e, line, "%s: the enterprise's value applies", ids[i].name)) < 0)
			return r;
		*ids[i].dev = ids[i].ceil;
		*ids[i].dloc = *ids[i].cloc;
	}
	/* Observe enforces nothing: forbidden outright, or by a mode the
	 * enterprise file writes (enforce or learn). */
	line = e->forbid_observe ? e->observe_line : 0;
	enum policy_mode to = POLICY_MODE_ENFORCE;
	if (!line && (line = layer_given(e, "sandbox.mode")) && !layer_locked(e, "sandbox.mode")) {
		if (q->sandbox.mode == POLICY_MODE_OBSERVE)
			line = 0;
		else
			to = q->sandbox.mode;
	}
	if (line && p->sandbox.mode == POLICY_MODE_OBSERVE) {
		if ((r = layer_cut(c, &p->origin.mode, e, line, "sandbox.mode: observe is forbidden; %s applies",
			     policy_mode_name(to))) < 0)
			return r;
		p->sandbox.mode = to;
		p->origin.mode = (struct policy_loc){ e->file, line, 1, NULL, "enterprise" };
	}
	return 0;
}

/* ---- audit and identity ---- */

int layer_set_str(char **dst, const char *s)
{
	char *n = s ? strdup(s) : NULL;
	if (s && !n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

int layer_narrow_audit(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p;
	unsigned line = e->audit ? e->audit_line : 0;
	int r;

	if (!line && (line = layer_given(e, "audit.enabled")) && !layer_locked(e, "audit") && !e->pol->audit.enabled)
		line = 0;
	if (line) {
		if (!p->audit.enabled) {
			if ((r = layer_cut(c, &p->origin.audit_enabled, e, line,
				     "audit.enabled: false cut: the decision log is required")) < 0)
				return r;
			p->audit.enabled = true;
			p->origin.audit_enabled = (struct policy_loc){ e->file, line, 1, NULL, "enterprise" };
		}
		if (!c->rep->require_audit) {
			c->rep->require_audit = true;
			if (asprintf(&c->rep->audit_by, "%s:%u", e->file, line) < 0) {
				c->rep->audit_by = NULL;
				return layer_oom(c);
			}
		}
		/* The log's directory, when the enterprise names one, is where
		 * the log goes. */
		if (e->pol->audit.dir && layer_given(e, "audit.dir") && !layer_locked(e, "audit")) {
			if (layer_set_str(&p->audit.dir, e->pol->audit.dir) < 0)
				return layer_oom(c);
			p->origin.audit_dir = e->pol->origin.audit_dir;
		}
	}
	/* The log's size is a ceiling like the sandbox's limits: the smaller
	 * wins, so a developer cannot let an agent fill more of the host's
	 * disk than the enterprise allows. */
	if ((line = layer_given(e, "audit.max_size")) && !layer_locked(e, "audit") &&
	    p->audit.max_size > e->pol->audit.max_size) {
		if (p->origin.audit_max_size.line &&
		    (r = layer_cut(c, &p->origin.audit_max_size, e, line, "audit.max_size above the ceiling cut to %llu",
			     (unsigned long long)e->pol->audit.max_size)) < 0)
			return r;
		p->audit.max_size = e->pol->audit.max_size;
		p->origin.audit_max_size = e->pol->origin.audit_max_size;
	}
	unsigned hline = e->identity_header ? e->identity_line : 0;
	if (!hline && (line = layer_given(e, "identity.header")) && !layer_locked(e, "identity") && e->pol->identity.header)
		hline = line;
	if (hline && !p->identity.header) {
		if (p->origin.identity_header.line &&
		    (r = layer_cut(c, &p->origin.identity_header, e, hline, "identity.header: false cut to true")) < 0)
			return r;
		p->identity.header = true;
		p->origin.identity_header = (struct policy_loc){ e->file, hline, 1, NULL, "enterprise" };
	}
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
int layer_check_secrets(struct lctx *c, const struct ceiling *e)
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
		if ((r = layer_cut(c, &cr->loc, e, e->section_line, "credentials %s cut: %s in the layered policy", cr->name,
			     bad)) < 0)
			return r;
		policy_credential_clear(cr);
	}
	p->n_credentials = w;
	return 0;
}
