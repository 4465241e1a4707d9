/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The widening prover (diff.c): where a credential may be used, host,
 * method and path, and for git the repositories and refs it may push.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/diff_internal.h"
#include "policy/glob.h"
#include "util/cleanup.h"


/* ---- credentials ---- */

struct git_ctx {
	const struct policy_git_binding *const *old; /* parallel to the repos atoms */
	size_t n_old;
	const struct glob *refs;  /* NEW's push refs (one glob) */
	char **w_repo, **w_ref;
	bool found;
	bool delete_;
};

static int git_atom(void *vctx, const bool *sig, const char *repo, size_t len, struct error *err)
{
	struct git_ctx *c = vctx;
	struct gvec refs = { 0 };
	bool subset;
	char *w = NULL;
	int r = 0;

	(void)len;
	for (size_t i = 0; i < c->n_old && r >= 0; i++) {
		const struct policy_git_binding *o = c->old[i];
		if (!sig[i] || (c->delete_ && !o->delete_refs))
			continue;
		for (size_t k = 0; k < o->n_push && r >= 0; k++)
			r = diff_gvec_add(&refs, o->push[k], GLOB_PATH, err);
	}
	if (r >= 0)
		r = glob_subset(c->refs, CG(refs.v), refs.n, &subset, &w, err);
	if (r >= 0 && !subset) {
		c->found = true;
		*c->w_repo = strdup(repo);
		*c->w_ref = w;
		w = NULL;
		r = 1;
	}
	free(w);
	diff_gvec_free(&refs);
	return r;
}

/* NEW binding b's git permissions against the OLD bindings that apply
 * (olds, all with git; a binding without git and paths covers everything
 * and is handled by the caller). Writes a description and a witness. */
static int git_widen(const struct policy_git_binding *b, const struct policy_git_binding *const *olds, size_t no,
		     char *what, size_t what_len, char **witness, struct error *err)
{
	struct gvec ob = { 0 };
	_cleanup_glob_ struct glob *repo = NULL;
	int r = 0;
	bool subset;
	char *w = NULL;
	const char *const any[] = { "**" };
	const char *const *repos = b->repos ? (const char *const *)b->repos : any;
	size_t n_repos = b->repos ? b->n_repos : 1;

	*witness = NULL;
	for (size_t ri = 0; ri < n_repos && r >= 0 && !*witness; ri++) {
		glob_free(repo);
		repo = NULL;
		if ((r = glob_compile(repos[ri], GLOB_PATH, &repo, err)) < 0)
			break;
		/* fetch, tags: repositories alone */
		for (int op = 0; op < 2 && r >= 0 && !*witness; op++) {
			if ((op == 0 && !b->fetch) || (op == 1 && !b->tags))
				continue;
			diff_gvec_free(&ob);
			for (size_t i = 0; i < no && r >= 0; i++) {
				const struct policy_git_binding *o = olds[i];
				if ((op == 0 && !o->fetch) || (op == 1 && !o->tags))
					continue;
				if (!o->repos)
					r = diff_gvec_add(&ob, "**", GLOB_PATH, err);
				for (size_t k = 0; o->repos && k < o->n_repos && r >= 0; k++)
					r = diff_gvec_add(&ob, o->repos[k], GLOB_PATH, err);
			}
			if (r >= 0)
				r = glob_subset(repo, CG(ob.v), ob.n, &subset, &w, err);
			if (r >= 0 && !subset) {
				snprintf(what, what_len, op == 0 ? "fetching" : "pushing tags to");
				*witness = w;
				w = NULL;
			}
		}
		/* push and delete: repositories x refs, a union in two
		 * dimensions: split the repositories into atoms of OLD's. */
		for (int del = 0; del < 2 && r >= 0 && !*witness; del++) {
			if (del && !b->delete_refs)
				continue;
			for (size_t pi = 0; pi < b->n_push && r >= 0 && !*witness; pi++) {
				_cleanup_glob_ struct glob *ref = NULL;
				_cleanup_free_ const struct policy_git_binding **rowner = NULL;
				size_t nrow = 0;
				diff_gvec_free(&ob);
				for (size_t i = 0; i < no; i++)
					nrow += olds[i]->repos ? olds[i]->n_repos : 1;
				rowner = calloc(nrow + 1, sizeof(*rowner));
				if (!rowner) {
					r = error_set(err, ENOMEM, "out of memory");
					break;
				}
				for (size_t i = 0; i < no && r >= 0; i++) {
					const struct policy_git_binding *o = olds[i];
					if (!o->repos) {
						rowner[ob.n] = o;
						r = diff_gvec_add(&ob, "**", GLOB_PATH, err);
					}
					for (size_t k = 0; o->repos && k < o->n_repos && r >= 0; k++) {
						rowner[ob.n] = o;
						r = diff_gvec_add(&ob, o->repos[k], GLOB_PATH, err);
					}
				}
				if (r >= 0)
					r = glob_compile(b->push[pi], GLOB_PATH, &ref, err);
				if (r < 0)
					break;
				char *wr = NULL, *wf = NULL;
				struct git_ctx c = { .old = rowner, .n_old = ob.n, .refs = ref, .w_repo = &wr, .w_ref = &wf,
						     .delete_ = del };
				const struct glob *in[1] = { repo };
				r = glob_atoms(in, 1, CG(ob.v), ob.n, git_atom, &c, err);
				if (r >= 0 && c.found) {
					snprintf(what, what_len, "%s ref %s in", del ? "deleting" : "pushing", wf ? wf : "?");
					*witness = wr;
					wr = NULL;
				}
				free(wr);
				free(wf);
			}
		}
	}
	free(w);
	diff_gvec_free(&ob);
	if (r >= 0 && *witness == NULL)
		return 0;
	return r < 0 ? r : 1;
}

static bool binding_has_method(const struct policy_cred_binding *b, const char *m)
{
	if (!b->methods)
		return true;
	for (size_t i = 0; i < b->n_methods; i++)
		if (!strcmp(b->methods[i], m))
			return true;
	return false;
}

struct cred_ctx {
	const struct policy *new_;
	const struct policy_credential *nc, *oc;
	const struct policy_cred_binding *b;
	struct policy_diff *d;
	bool reported;
};

static int cred_atom(void *vctx, const bool *sig, const char *host, size_t len, struct error *err)
{
	struct cred_ctx *c = vctx;
	const struct policy_cred_binding *b = c->b;
	struct methods m = { .n = 0 };
	int r = 0;

	(void)len;
	diff_methods_add(&m, "GET");
	for (size_t k = 0; k < b->n_methods; k++)
		diff_methods_add(&m, b->methods[k]);
	for (size_t i = 0; i < c->oc->n_bindings; i++)
		for (size_t k = 0; k < c->oc->bindings[i].n_methods; k++)
			diff_methods_add(&m, c->oc->bindings[i].methods[k]);
	diff_methods_close(&m);
	if (m.overflow)
		return error_set(err, E2BIG, "credential %s: too many distinct methods to compare", c->nc->name);
	for (size_t mi = 0; mi < m.n && r >= 0 && !c->reported; mi++) {
		if (!binding_has_method(b, m.v[mi]))
			continue;
		/* OLD bindings that apply to this host, port and method */
		struct gvec paths = { 0 };
		const struct policy_git_binding *gits[64];
		size_t ng = 0;
		bool all = false;
		for (size_t i = 0; i < c->oc->n_bindings && r >= 0; i++) {
			const struct policy_cred_binding *o = &c->oc->bindings[i];
			if (!sig[i] || o->port != b->port || !binding_has_method(o, m.v[mi]))
				continue;
			if (o->git) {
				if (ng == ARRAY_SIZE(gits)) {
					diff_gvec_free(&paths);
					return error_set(err, E2BIG, "credential %s: too many git bindings to compare",
							 c->nc->name);
				}
				gits[ng++] = o->git;
				continue;
			}
			if (!o->paths)
				all = true;
			for (size_t k = 0; o->paths && k < o->n_paths && r >= 0; k++)
				r = diff_gvec_add(&paths, o->paths[k], GLOB_PATH, err);
		}
		char witness[1200];
		if (r >= 0 && !all && !b->git) {
			const char *const any[] = { "/**" };
			const char *const *bp = b->paths ? (const char *const *)b->paths : any;
			size_t nbp = b->paths ? b->n_paths : 1;
			for (size_t k = 0; k < nbp && r >= 0 && !c->reported; k++) {
				_cleanup_glob_ struct glob *p = NULL;
				bool subset;
				_cleanup_free_ char *w = NULL;
				if ((r = glob_compile(bp[k], GLOB_PATH, &p, err)) < 0)
					break;
				if ((r = glob_subset(p, CG(paths.v), paths.n, &subset, &w, err)) < 0)
					break;
				if (!subset) {
					snprintf(witness, sizeof(witness), "%s https://%s:%u%s", m.v[mi], host, b->port, w);
					c->reported = true;
					r = diff_add(c->d, err, "credentials", c->new_, &b->loc, witness,
						"lets credential %s be used for %s; OLD does not", c->nc->name, witness);
				}
			}
		} else if (r >= 0 && !all && b->git) {
			char what[600];
			char *w = NULL;
			r = git_widen(b->git, gits, ng, what, sizeof(what), &w, err);
			if (r > 0) {
				snprintf(witness, sizeof(witness), "%s https://%s:%u%s", what, host, b->port, w);
				c->reported = true;
				r = diff_add(c->d, err, "credentials", c->new_, &b->git->loc, witness,
					"lets credential %s be used for %s; OLD does not", c->nc->name, witness);
			}
			free(w);
		}
		diff_gvec_free(&paths);
	}
	return r < 0 ? r : c->reported ? 1 : 0;
}

int diff_cred(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	for (size_t i = 0; i < new_->n_credentials; i++) {
		const struct policy_credential *nc = &new_->credentials[i], *oc = NULL;
		int r;
		for (size_t j = 0; j < old->n_credentials && !oc; j++)
			if (!strcmp(old->credentials[j].name, nc->name))
				oc = &old->credentials[j];
		if (!oc || !policy_credential_same_source(nc, oc)) {
			char w[200];
			snprintf(w, sizeof(w), "credential %s", nc->name);
			if ((r = diff_add(d, err, "credentials", new_, &nc->loc, w, "%s credential %s; OLD %s", oc ? "changes the source of" : "adds",
				     nc->name, oc ? "reads another secret" : "has none")) < 0)
				return r;
			continue;
		}
		struct gvec hosts = { 0 };
		r = 0;
		for (size_t j = 0; j < oc->n_bindings && r >= 0; j++)
			r = diff_gvec_add(&hosts, oc->bindings[j].host, GLOB_HOST, err);
		for (size_t k = 0; k < nc->n_bindings && r >= 0; k++) {
			_cleanup_glob_ struct glob *h = NULL;
			if ((r = glob_compile(nc->bindings[k].host, GLOB_HOST, &h, err)) < 0)
				break;
			struct cred_ctx c = { .new_ = new_, .nc = nc, .oc = oc, .b = &nc->bindings[k], .d = d };
			const struct glob *in[1] = { h };
			r = glob_atoms(in, 1, CG(hosts.v), hosts.n, cred_atom, &c, err);
		}
		diff_gvec_free(&hosts);
		if (r < 0)
			return r;
	}
	return 0;
}
