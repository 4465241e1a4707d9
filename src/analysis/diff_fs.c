/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The widening prover (diff.c): the filesystem as the mount table the
 * sandbox builds, decided path atom by path atom (the deepest mount
 * shows), and the protected paths inside writable ones.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/protect.h"
#include "analysis/diff.h"
#include "analysis/diff_internal.h"
#include "policy/glob.h"
#include "util/cleanup.h"


/* ---- filesystem ---- */

/* The mount table of a policy as prefix languages: what is visible, what
 * is writable (the deepest mount decides), what is denied, protected, and
 * where execution is granted. */
enum fs_role { FS_RO, FS_RW, FS_DENY, FS_PROTECT, FS_EXEC };

struct fs_entry {
	enum fs_role role;
	size_t depth; /* length of the path: deeper mounts cover shallower */
	bool under_ws;
	const struct policy_loc *loc;
	const char *what;
};

static const char *const baseline_dirs[] = { "/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
					     "/libx32" };
static const char *const default_exec_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };

struct fs_side {
	const struct policy *p;
	struct fs_entry *e;
	size_t off, n; /* this side's globs: off .. off + n in the shared list */
};

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static int fs_push(struct gvec *g, struct fs_entry **ents, size_t *cap, const char *pattern, enum glob_kind kind,
		   struct fs_entry e, struct error *err)
{
	int r;
	if (g->n >= *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct fs_entry *v = realloc(*ents, c * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		*ents = v;
		*cap = c;
	}
	if ((r = diff_gvec_add(g, pattern, kind, err)) < 0)
		return r;
	(*ents)[g->n - 1] = e;
	return 0;
}

static int fs_side_build(const struct policy *p, struct gvec *g, struct fs_entry **ents, size_t *cap,
			 struct gvec *prot, struct fs_entry **pents, size_t *pcap, struct error *err)
{
	const char *ws = p->sandbox.workspace;
	int r = 0;
	const struct policy_loc *none = NULL;

	if (p->filesystem.baseline)
		for (size_t i = 0; i < ARRAY_SIZE(baseline_dirs) && r >= 0; i++)
			r = fs_push(g, ents, cap, baseline_dirs[i], GLOB_PREFIX,
				    (struct fs_entry){ FS_RO, strlen(baseline_dirs[i]), false, &p->origin.baseline,
						       "the system baseline" },
				    err);
	if (r >= 0 && ws)
		r = fs_push(g, ents, cap, ws, GLOB_PREFIX,
			    (struct fs_entry){ FS_RW, strlen(ws), true, &p->sandbox.workspace_loc, "the workspace" }, err);
	for (size_t i = 0; i < p->filesystem.read.n && r >= 0; i++) {
		const struct policy_path *x = &p->filesystem.read.v[i];
		r = fs_push(g, ents, cap, x->path, GLOB_PREFIX,
			    (struct fs_entry){ FS_RO, strlen(x->path), ws && path_under(x->path, ws), &x->loc,
					       "filesystem.read" },
			    err);
	}
	for (size_t i = 0; i < p->filesystem.write.n && r >= 0; i++) {
		const struct policy_path *x = &p->filesystem.write.v[i];
		r = fs_push(g, ents, cap, x->path, GLOB_PREFIX,
			    (struct fs_entry){ FS_RW, strlen(x->path), ws && path_under(x->path, ws), &x->loc,
					       "filesystem.write" },
			    err);
	}
	for (size_t i = 0; i < p->filesystem.deny.n && r >= 0; i++) {
		const struct policy_path *x = &p->filesystem.deny.v[i];
		r = fs_push(g, ents, cap, x->path, GLOB_PREFIX, (struct fs_entry){ FS_DENY, 0, false, &x->loc, "deny" },
			    err);
	}
	if (r >= 0 && p->process.exec_set) {
		for (size_t i = 0; i < p->process.exec.n && r >= 0; i++) {
			const struct policy_path *x = &p->process.exec.v[i];
			r = fs_push(g, ents, cap, x->path, GLOB_PREFIX,
				    (struct fs_entry){ FS_EXEC, 0, false, &x->loc, "process.exec" }, err);
		}
	} else if (r >= 0 && p->filesystem.baseline) {
		for (size_t i = 0; i < ARRAY_SIZE(default_exec_dirs) && r >= 0; i++)
			r = fs_push(g, ents, cap, default_exec_dirs[i], GLOB_PREFIX,
				    (struct fs_entry){ FS_EXEC, 0, false, &p->origin.exec, "the baseline's programs" },
				    err);
	}
	if (r < 0)
		return r;
	/* Protected paths: the workspace + '/' + glob; a directory glob
	 * (D/"**") also protects D itself. */
	struct protect_set ps;
	if (!ws)
		return 0;
	if (strchr(ws, '*'))
		return error_set(err, EINVAL, "%s: the workspace %s holds '*': its protected paths cannot be compared",
				 p->file, ws);
	if (protect_set_from_policy(p, &ps) < 0)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < ps.n && r >= 0; i++) {
		_cleanup_free_ char *abs = NULL, *dir = NULL;
		const struct policy_loc *loc = &p->origin.protect_defaults;
		for (size_t k = 0; k < p->filesystem.protect.n; k++)
			if (!strcmp(p->filesystem.protect.v[k].path, ps.pat[i]))
				loc = &p->filesystem.protect.v[k].loc;
		size_t n = strlen(ps.pat[i]);
		if (asprintf(&abs, "%s/%s", strcmp(ws, "/") ? ws : "", ps.pat[i]) < 0) {
			r = error_set(err, ENOMEM, "out of memory");
			break;
		}
		if (n > 3 && !strcmp(ps.pat[i] + n - 3, "/**")) {
			if (asprintf(&dir, "%s/%.*s", strcmp(ws, "/") ? ws : "", (int)(n - 3), ps.pat[i]) < 0)
				r = error_set(err, ENOMEM, "out of memory");
			else
				r = fs_push(prot, pents, pcap, dir, GLOB_FILE,
					    (struct fs_entry){ FS_PROTECT, 0, false, loc, "protect" }, err);
		}
		if (r >= 0)
			r = fs_push(prot, pents, pcap, abs, GLOB_FILE,
				    (struct fs_entry){ FS_PROTECT, 0, false, loc, "protect" }, err);
	}
	protect_set_free(&ps);
	(void)none;
	return r;
}

struct fs_verdict {
	bool read, write, exec;
	const struct fs_entry *mount; /* the deepest mount */
	const struct fs_entry *exec_by;
};

static struct fs_verdict fs_judge(const struct fs_side *s, const bool *sig)
{
	struct fs_verdict v = { 0 };
	bool deny = false, exec_right = false;

	for (size_t i = 0; i < s->n; i++) {
		const struct fs_entry *e = &s->e[i];
		if (!sig[s->off + i])
			continue;
		switch (e->role) {
		case FS_RO:
		case FS_RW:
			/* Parents before children: the deepest mount shows;
			 * the later of two at one depth (write after read). */
			if (!v.mount || e->depth >= v.mount->depth)
				v.mount = e;
			if (!s->p->process.exec_set && e->under_ws) {
				exec_right = true;
				if (!v.exec_by)
					v.exec_by = e;
			}
			break;
		case FS_DENY:
			deny = true;
			break;
		case FS_PROTECT: /* never here: protect_diff() and fs_atom()'s search */
			break;
		case FS_EXEC:
			exec_right = true;
			if (!v.exec_by || v.exec_by->role != FS_EXEC)
				v.exec_by = e;
			break;
		}
	}
	if (!v.mount || deny)
		return (struct fs_verdict){ 0 };
	v.read = true;
	v.write = v.mount->role == FS_RW;
	v.exec = exec_right;
	return v;
}

struct fs_ctx {
	struct fs_side old, new_;
	struct policy_diff *d;
	const struct gvec *all;      /* mounts, deny, exec of both sides */
	const struct gvec *new_prot; /* NEW's protected globs */
	const struct glob *root;
	const struct glob *empty_seg; /* paths with an empty segment: never a witness */
	/* Reported (NEW entry, OLD deciding entry, aspect) triples: one
	 * line per pair of rules, not one per atom. */
	size_t *seen;
	size_t n_seen, cap_seen;
};

static int fs_seen(struct fs_ctx *c, const struct fs_entry *ne, const struct fs_entry *oe, unsigned aspect,
		   bool *already, struct error *err)
{
	size_t no = c->old.n + 1;
	size_t key = (((size_t)(ne - c->new_.e)) * no + (oe ? (size_t)(oe - c->old.e) : c->old.n)) * 4 + aspect;
	for (size_t i = 0; i < c->n_seen; i++)
		if (c->seen[i] == key) {
			*already = true;
			return 0;
		}
	*already = false;
	if (c->n_seen == c->cap_seen) {
		size_t cap = c->cap_seen ? c->cap_seen * 2 : 32;
		size_t *v = realloc(c->seen, cap * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		c->seen = v;
		c->cap_seen = cap;
	}
	c->seen[c->n_seen++] = key;
	return 0;
}

static int fs_atom(void *vctx, const bool *sig, const char *path, size_t len, struct error *err)
{
	struct fs_ctx *c = vctx;
	struct fs_verdict nv = fs_judge(&c->new_, sig), ov = fs_judge(&c->old, sig);
	bool already;
	int r = 0;

	(void)len;
	if (nv.write && !ov.write) {
		if ((r = fs_seen(c, nv.mount, ov.mount, 0, &already, err)) < 0 || already)
			goto exec;
		/* A path of this atom that NEW does not protect. */
		const struct glob **in = calloc(c->all->n + 1, sizeof(*in));
		const struct glob **out = calloc(c->all->n + c->new_prot->n + 2, sizeof(*out));
		size_t ni = 0, no = 0;
		bool found = false;
		_cleanup_free_ char *w = NULL;
		if (!in || !out) {
			free(in);
			free(out);
			return error_set(err, ENOMEM, "out of memory");
		}
		in[ni++] = c->root;
		for (size_t i = 0; i < c->all->n; i++) {
			if (sig[i])
				in[ni++] = c->all->v[i];
			else
				out[no++] = c->all->v[i];
		}
		for (size_t i = 0; i < c->new_prot->n; i++)
			out[no++] = c->new_prot->v[i];
		out[no++] = c->empty_seg;
		r = glob_find(in, ni, out, no, &found, &w, err);
		free(in);
		free(out);
		if (r < 0)
			return r;
		if (found)
			r = diff_add(c->d, err, "filesystem.write", c->new_.p, nv.mount->loc, w, "(%s) allows writing %s; OLD %s",
				nv.mount->what, w, ov.read ? "makes it read-only" : "hides it");
		else
			c->n_seen--; /* every path of the atom is protected in NEW */
	} else if (nv.read && !ov.read) {
		if ((r = fs_seen(c, nv.mount, ov.mount, 1, &already, err)) < 0 || already)
			goto exec;
		r = diff_add(c->d, err, "filesystem.read", c->new_.p, nv.mount->loc, path,
			"(%s) allows reading %s; OLD hides it", nv.mount->what, path);
	}
exec:
	if (r >= 0 && nv.exec && nv.read && !(ov.exec && ov.read)) {
		const struct fs_entry *by = nv.exec_by ? nv.exec_by : nv.mount;
		if ((r = fs_seen(c, by, ov.exec_by, 2, &already, err)) < 0 || already)
			return r;
		r = diff_add(c->d, err, "filesystem.exec", c->new_.p, by->loc, path, "(%s) allows executing %s; OLD does not",
			by->what, path);
	}
	return r;
}

/* Paths OLD protects that NEW lets the agent write: for each NEW mount
 * that is writable, a path beneath it, in an OLD protected glob, under no
 * deeper read-only NEW mount, no NEW deny and no NEW protected glob. */
static int protect_diff(const struct policy *new_, const struct fs_side *ns, const struct gvec *all,
			const struct gvec *np, const struct gvec *op, const struct fs_entry *opents,
			struct policy_diff *d, struct error *err)
{
	/* Paths with an empty segment ("**" + "/" matching nothing after a
	 * '/'): no such path is ever judged, the kernel reads "a//b" as
	 * "a/b", which a deny or read-only entry may hold. */
	_cleanup_glob_ struct glob *empty_seg = NULL;
	int r = glob_compile("/**//**", GLOB_FILE, &empty_seg, err);
	for (size_t i = 0; i < ns->n && r >= 0; i++) {
		const struct fs_entry *e = &ns->e[i];
		if (e->role != FS_RW)
			continue;
		for (size_t j = 0; j < op->n && r >= 0; j++) {
			const struct glob *in[2] = { all->v[ns->off + i], op->v[j] };
			/* The same glob (over the same workspace) in NEW covers
			 * it: skip the search, which would only confirm that. */
			bool same = false;
			for (size_t k = 0; k < np->n && !same; k++)
				same = !strcmp(glob_pattern(np->v[k]), glob_pattern(op->v[j]));
			if (same)
				continue;
			const struct glob **out = calloc(ns->n + np->n + 2, sizeof(*out));
			size_t no = 0;
			bool found = false;
			_cleanup_free_ char *w = NULL;
			if (!out)
				return error_set(err, ENOMEM, "out of memory");
			for (size_t k = 0; k < ns->n; k++) {
				const struct fs_entry *f = &ns->e[k];
				/* what shows read-only over e: deeper, or at e's
				 * own path and later (`read` naming the workspace) */
				if (f->role == FS_DENY ||
				    (f->role == FS_RO && (f->depth > e->depth || (f->depth == e->depth && k > i))))
					out[no++] = all->v[ns->off + k];
			}
			for (size_t k = 0; k < np->n; k++)
				out[no++] = np->v[k];
			out[no++] = empty_seg;
			r = glob_find(in, 2, out, no, &found, &w, err);
			free(out);
			if (r >= 0 && found) {
				r = diff_add(d, err, "filesystem.write", new_, e->loc, w,
					"(%s) allows writing %s; OLD protects it (%s, %s)", e->what, w,
					glob_pattern(op->v[j]), opents[j].loc && opents[j].loc->line ? "its protect list" : "default row");
				break;
			}
		}
	}
	return r;
}

int diff_fs(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	struct gvec g = { 0 }, np = { 0 }, op = { 0 };
	struct fs_entry *ents = NULL, *npents = NULL, *opents = NULL;
	size_t cap = 0, npcap = 0, opcap = 0;
	_cleanup_glob_ struct glob *root = NULL, *empty_seg = NULL;
	int r;

	if ((r = glob_compile("/**//**", GLOB_FILE, &empty_seg, err)) < 0)
		goto out;
	if ((r = fs_side_build(new_, &g, &ents, &cap, &np, &npents, &npcap, err)) < 0)
		goto out;
	size_t n_new = g.n;
	if ((r = fs_side_build(old, &g, &ents, &cap, &op, &opents, &opcap, err)) < 0)
		goto out;
	if ((r = glob_compile("/", GLOB_PREFIX, &root, err)) < 0)
		goto out;
	struct fs_ctx c = {
		.new_ = { .p = new_, .e = ents, .off = 0, .n = n_new },
		.old = { .p = old, .e = ents + n_new, .off = n_new, .n = g.n - n_new },
		.d = d,
		.all = &g,
		.new_prot = &np,
		.root = root,
		.empty_seg = empty_seg,
	};
	const struct glob *in[1] = { root };
	r = glob_atoms(in, 1, CG(g.v), g.n, fs_atom, &c, err);
	free(c.seen);
	if (r >= 0 && old->sandbox.mode != POLICY_MODE_OBSERVE)
		r = protect_diff(new_, &c.new_, &g, &np, &op, opents, d, err);
out:
	diff_gvec_free(&g);
	diff_gvec_free(&np);
	diff_gvec_free(&op);
	free(ents);
	free(npents);
	free(opents);
	return r;
}
