/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Enterprise layers (layer.c): the mcp section narrowed by one ceiling.
 *
 * WARNING: as everywhere in layering, only removing from the developer's
 * policy or narrowing an entry (layer_internal.h).
 */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"
#include "policy/internal.h"
#include "policy/layer.h"
#include "policy/layer_internal.h"
#include "policy/mcp.h"
#include "util/cleanup.h"


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

/* Which enterprise rules decide the names developer rule i covers, among
 * the globs g (the n developer rules', then the ne enterprise rules'):
 * decides[j] for rule j, decides[ne] for names no enterprise rule takes;
 * *nd of them, the last in *only; *all_inside stays true when each
 * deciding pattern lies inside rule i's. A question too complex to answer
 * counts as several deciders, not inside (the rule is then cut to deny).
 * -ENOMEM only. */
static int mcp_deciders(struct glob **g, size_t n, size_t i, size_t ne, bool *decides, size_t *nd, size_t *only,
			bool *all_inside)
{
	struct error gerr = { 0 };
	/* sig: the developer's earlier rules, then the enterprise's. */
	const struct glob *in[1] = { g[i] };
	struct glob **outs = calloc(i + ne + 1, sizeof(*outs));

	if (!outs)
		return -ENOMEM;
	memset(decides, 0, (ne + 1) * sizeof(bool));
	for (size_t k = 0; k < i; k++)
		outs[k] = g[k];
	for (size_t j = 0; j < ne; j++)
		outs[i + j] = g[n + j];
	struct mdecide m = { .n_dev_before = i, .n_ent = ne, .decides = decides };
	int r = glob_atoms(in, 1, (const struct glob *const *)outs, i + ne, mdecide_atom, &m, &gerr);
	free(outs);
	if (r < 0) {
		/* Too complex to compare: cut, as for an unmodelled pattern. */
		error_clear(&gerr);
		*all_inside = false;
		*nd = 2;
		return 0;
	}
	for (size_t j = 0; j <= ne; j++)
		if (decides[j]) {
			(*nd)++;
			*only = j;
		}
	for (size_t j = 0; j < ne && *all_inside; j++)
		if (decides[j]) {
			bool sub = false;
			const struct glob *one[1] = { g[i] };
			*all_inside = glob_subset(g[n + j], one, 1, &sub, NULL, &gerr) == 0 && sub;
			error_clear(&gerr);
		}
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
		r = layer_oom(c);
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
				r = layer_oom(c);
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
		if (modelled && mcp_deciders(g, n, i, ne, decides, &nd, &only, &all_inside) < 0) {
			r = layer_oom(c);
			goto done;
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
				r = layer_oom(c);
				goto done;
			}
			struct policy_mcp_rule *m = &out[nout++];
			if (m->decision != d->decision) {
				if ((r = layer_cut(c, &dloc, e, er1 ? er1->line : eline,
					     "mcp.servers.%s.%s[%zu] (\"%s\"): %s narrowed to %s: %s", server, kind, i,
					     d->match, policy_mcp_decision_name(d->decision),
					     policy_mcp_decision_name(m->decision),
					     er1 ? "the enterprise's rule decides so" : "no enterprise rule allows these names")) < 0)
					goto done;
			} else if (er1 && (er1->n_args || (er1->max_calls && er1->max_calls != m->max_calls) ||
					   m->max_calls != d->max_calls)) {
				if ((r = layer_cut(c, &dloc, e, er1->line,
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
					r = layer_oom(c);
					goto done;
				}
				nout++;
			}
			if ((r = layer_cut(c, &dloc, e, eline,
				     "mcp.servers.%s.%s[%zu] (\"%s\") split by the enterprise's rules: each name "
				     "gets the lower decision and both rules' constraints", server, kind, i, d->match)) < 0)
				goto done;
		} else {
			if ((r = layer_cut(c, &dloc, e, eline,
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

int layer_narrow_mcp(struct lctx *c, struct ceiling *e)
{
	struct policy *p = c->p;
	const struct policy_mcp *em = e->pol->mcp;
	unsigned eline = layer_given(e, "mcp");
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
			if ((r = layer_cut(c, &dloc, e, es && es->line ? es->line : eline, "mcp.servers.%s cut: %s", s->name,
				     es ? "its command is not the enterprise's server of that name"
					: "the enterprise's mcp section does not list it")) < 0)
				return r;
			/* Remove by moving the last server here; a one-server
			 * policy struct frees through policy_mcp_free. */
			struct policy_mcp one = { .servers = s, .n_servers = 1 };
			struct policy_mcp *tmp = calloc(1, sizeof(*tmp));
			if (!tmp)
				return layer_oom(c);
			tmp->servers = calloc(1, sizeof(*tmp->servers));
			if (!tmp->servers) {
				free(tmp);
				return layer_oom(c);
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
			if (layer_str_eq(*files[k].dev, files[k].ent))
				continue;
			if ((r = layer_cut(c, &dloc, e, sline, "mcp.servers.%s.%s: %s applies", s->name, files[k].name,
				     files[k].ent ? files[k].ent : "the default")) < 0 ||
			    (r = layer_set_str(files[k].dev, files[k].ent)) < 0)
				return r == -ENOMEM ? layer_oom(c) : r;
			if (k == 1)
				s->policy_line = es->policy_line;
		}
		uint64_t mc = limit_min(s->max_calls, es->max_calls);
		if (mc != s->max_calls) {
			if ((r = layer_cut(c, &dloc, e, sline, "mcp.servers.%s.max_calls lowered to %llu", s->name,
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
				if ((r = layer_cut(c, &dloc, e, sline, "mcp.servers.%s.server_requests.%s cut", s->name,
					     req[k].name)) < 0)
					return r;
				*req[k].dev = false;
			}
		/* block (0) < redact (1) < off (2): the stricter wins. */
		if (es->scan_secrets < s->scan_secrets) {
			if ((r = layer_cut(c, &dloc, e, sline, "mcp.servers.%s.scan.secrets raised to the enterprise's", s->name)) <
			    0)
				return r;
			s->scan_secrets = es->scan_secrets;
		}
		if (es->scan_injection < s->scan_injection) {
			if ((r = layer_cut(c, &dloc, e, sline, "mcp.servers.%s.scan.injection raised to the enterprise's",
				     s->name)) < 0)
				return r;
			s->scan_injection = es->scan_injection;
		}
		i++;
	}
	return 0;
}
