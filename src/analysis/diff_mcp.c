/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The widening prover (diff.c): the mcp section, tool (resource,
 * prompt) name atom by atom with the engine's first-match rule, then the
 * deciding rules' argument constraints and each server's own settings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/diff_internal.h"
#include "policy/glob.h"
#include "policy/mcp.h"
#include "util/cleanup.h"


/* ---- mcp ---- */

/*
 * Per server, tool names (resource URIs, prompt names) are a language:
 * the atoms of every NEW and OLD rule pattern (GLOB_NAME, the name glob the
 * engine runs, match/glob.h; GLOB_PATH for resource URIs, which the engine matches
 * normalised with the proxy's path globs) are decided with the engine's first-match rule. A tool
 * decision ranks deny < step_up < allow; resources and prompts have only
 * allow (the engine refuses anything else). Where both sides let a tool
 * through, the deciding rules' argument constraints and call limits are
 * compared facet by facet.
 */

static int mcp_rank(enum policy_mcp_decision d, bool tools)
{
	if (d == POLICY_MCP_ALLOW)
		return 2;
	if (d == POLICY_MCP_STEP_UP && tools)
		return 1;
	return 0;
}

/* The first rule whose pattern is in sig[off..off+n), or -1. */
static long mcp_first(const bool *sig, size_t off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sig[off + i])
			return (long)i;
	return -1;
}

struct mcp_ctx {
	const struct policy *new_;
	const struct policy_mcp_server *ns, *os; /* os: NULL when OLD has no such server */
	const char *kind;                        /* "tools", "resources", "prompts" */
	const struct policy_mcp_rule *nr, *or_;
	size_t nn, no;
	bool *seen; /* (nn + 1) * (no + 1) pairs of deciding rules already reported */
	struct policy_diff *d;
};

static void arg_path(const char *p, char *out, size_t size)
{
	/* "$.a" and "a" select the same value. */
	if (p[0] == '$' && p[1] == '.')
		p += 2;
	snprintf(out, size, "%s", p);
}

static const struct policy_mcp_arg *arg_find(const struct policy_mcp_rule *r, const char *path)
{
	char a[256], b[256];
	arg_path(path, a, sizeof(a));
	for (size_t i = 0; r && i < r->n_args; i++) {
		arg_path(r->args[i].path, b, sizeof(b));
		if (!strcmp(a, b))
			return &r->args[i];
	}
	return NULL;
}

static bool enum_has(const struct policy_mcp_arg *a, const char *v)
{
	for (size_t i = 0; i < a->n_enum; i++)
		if (!strcmp(a->enum_vals[i], v))
			return true;
	return false;
}

/* A string the regex of o rejects and that of n (when set) takes, from
 * candidates: regexes are not compiled to automata, so a changed regex is
 * a widening only with such a witness (docs/policy.md says so). */
static bool regex_witness(const struct policy_mcp_arg *n, const struct policy_mcp_arg *o, const char *extra,
			  char *out, size_t size)
{
	static const char *const cand[] = { "", "a", "A", "0", "1", "-1", "x", "abc", "/", "/etc/passwd",
					    "../x", "..", ".", " ", "a b", "a/b", "a.b", "a-b", "a_b", "aa", "0.5",
					    "true", "null", "http://x", "https://x", "$(id)", ";", "\n", "%", "*" };
	const char *extras[2] = { extra, n && n->n_enum ? n->enum_vals[0] : NULL };
	for (size_t i = 0; i < ARRAY_SIZE(cand) + 2; i++) {
		const char *s = i < ARRAY_SIZE(cand) ? cand[i] : extras[i - ARRAY_SIZE(cand)];
		if (!s)
			continue;
		if (regexec(&o->re, s, 0, NULL, 0) == 0)
			continue;
		if (n && n->regex && regexec(&n->re, s, 0, NULL, 0) != 0)
			continue;
		snprintf(out, size, "%s", s);
		return true;
	}
	return false;
}

static void json_text(const char *s, char *out, size_t size)
{
	size_t k = 0;
	if (size < 4)
		return;
	out[k++] = '"';
	for (; *s && k + 3 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[k++] = '\\';
			out[k++] = (char)c;
		} else if (c < 0x20) {
			if (k + 7 >= size)
				break;
			k += (size_t)snprintf(out + k, size - k, "\\u%04x", c);
		} else {
			out[k++] = (char)c;
		}
	}
	out[k++] = '"';
	out[k] = '\0';
}

/* Report one argument facet NEW lets through and OLD does not. */
static int arg_add(struct mcp_ctx *c, const char *tool, const struct policy_mcp_arg *oa, const char *value,
		   const char *what, struct error *err)
{
	char wit[1200], rule[256];
	if (value)
		snprintf(wit, sizeof(wit), "%s.%s {\"%s\": %s}", c->ns->name, tool, oa->path, value);
	else
		snprintf(wit, sizeof(wit), "%s.%s {}", c->ns->name, tool);
	snprintf(rule, sizeof(rule), "mcp.servers.%s.tools[%zu]", c->os->name, (size_t)(c->or_ - c->os->tools));
	struct policy_loc loc = { .file = c->new_->file, .line = c->nr->line };
	return diff_add(c->d, err, "mcp", c->new_, &loc, wit, "allows tools/call %s (%s); OLD denies it (rule %s, line %u)",
		   wit, what, rule, oa->line ? oa->line : c->or_->line);
}

static int args_widen(struct mcp_ctx *c, const char *tool, struct error *err)
{
	const struct policy_mcp_rule *n = c->nr, *o = c->or_;
	char v[600], buf[600];
	int r = 0;

	for (size_t i = 0; i < o->n_args && r >= 0; i++) {
		const struct policy_mcp_arg *oa = &o->args[i], *na = arg_find(n, oa->path);
		if (oa->required && !(na && na->required)) {
			r = arg_add(c, tool, oa, NULL, "without the argument OLD requires", err);
			if (r < 0)
				break;
		}
		if (oa->glob && !(na && na->glob && !strcmp(na->glob, oa->glob))) {
			_cleanup_glob_ struct glob *go = NULL, *gn = NULL;
			bool found = false;
			_cleanup_free_ char *w = NULL;
			if ((r = glob_compile(oa->glob, GLOB_NAME, &go, err)) < 0 ||
			    (na && na->glob && (r = glob_compile(na->glob, GLOB_NAME, &gn, err)) < 0)) {
				/* A glob we cannot model: any change counts. */
				error_clear(err);
				snprintf(buf, sizeof(buf), "glob \"%s\" replaced by %s", oa->glob,
					 na && na->glob ? na->glob : "none");
				r = arg_add(c, tool, oa, NULL, buf, err);
			} else {
				const struct glob *in[1] = { gn }, *out[1] = { go };
				if ((r = glob_find(in, gn ? 1 : 0, out, 1, &found, &w, err)) >= 0 && found) {
					json_text(w, v, sizeof(v));
					snprintf(buf, sizeof(buf), "outside OLD's glob \"%s\"", oa->glob);
					r = arg_add(c, tool, oa, v, buf, err);
				}
			}
			if (r < 0)
				break;
		}
		if (oa->regex && !(na && na->regex && !strcmp(na->regex, oa->regex))) {
			if (regex_witness(na, oa, na && na->glob ? na->glob : NULL, buf, sizeof(buf))) {
				json_text(buf, v, sizeof(v));
				snprintf(buf, sizeof(buf), "not matching OLD's regex \"%s\"", oa->regex);
				if ((r = arg_add(c, tool, oa, v, buf, err)) < 0)
					break;
			}
		}
		if (oa->n_enum) {
			const char *extra = NULL;
			if (!na || !na->n_enum) {
				extra = "\"not-in-enum\"";
			} else {
				for (size_t k = 0; k < na->n_enum && !extra; k++)
					if (!enum_has(oa, na->enum_vals[k])) {
						json_text(na->enum_vals[k], v, sizeof(v));
						extra = v;
					}
			}
			if (extra && (r = arg_add(c, tool, oa, extra, "a value outside OLD's enum", err)) < 0)
				break;
		}
		if (oa->has_min && !(na && na->has_min && na->min >= oa->min)) {
			snprintf(v, sizeof(v), "%.17g", na && na->has_min ? na->min : oa->min - 1);
			if ((r = arg_add(c, tool, oa, v, "below OLD's min", err)) < 0)
				break;
		}
		if (oa->has_max && !(na && na->has_max && na->max <= oa->max)) {
			snprintf(v, sizeof(v), "%.17g", na && na->has_max ? na->max : oa->max + 1);
			if ((r = arg_add(c, tool, oa, v, "above OLD's max", err)) < 0)
				break;
		}
		if (oa->has_max_length && !(na && na->has_max_length && na->max_length <= oa->max_length)) {
			uint64_t len = oa->max_length + 1;
			snprintf(v, sizeof(v), "\"<%llu bytes>\"", (unsigned long long)len);
			if ((r = arg_add(c, tool, oa, v, "longer than OLD's max_length", err)) < 0)
				break;
		}
		if (oa->inside_workspace && !(na && na->inside_workspace) &&
		    (r = arg_add(c, tool, oa, "\"/etc/x\"", "a path outside the workspace", err)) < 0)
			break;
	}
	if (r >= 0 && o->max_calls && (!n->max_calls || n->max_calls > o->max_calls)) {
		char wit[300];
		snprintf(wit, sizeof(wit), "%s.%s call %llu", c->ns->name, tool, (unsigned long long)o->max_calls + 1);
		struct policy_loc loc = { .file = c->new_->file, .line = n->line };
		char lim[64] = "no limit";
		if (n->max_calls)
			snprintf(lim, sizeof(lim), "max_calls %llu", (unsigned long long)n->max_calls);
		r = diff_add(c->d, err, "mcp", c->new_, &loc, wit, "allows tools/call %s (%s); OLD's max_calls is %llu", wit,
			lim, (unsigned long long)o->max_calls);
	}
	return r;
}

/* The deciding rule of rules[0..n) for a name witness, as the gateway
 * finds it (policy_mcp_rule_first), or -1. */
static long gateway_first(const struct policy_mcp_rule *rules, size_t n, const char *name)
{
	size_t i = 0;
	return policy_mcp_rule_first(rules, n, name, &i) ? (long)i : -1;
}

static int mcp_atom(void *vctx, const bool *sig, const char *name, size_t len, struct error *err)
{
	struct mcp_ctx *c = vctx;
	bool tools = !strcmp(c->kind, "tools");
	long ni = mcp_first(sig, 0, c->nn), oi = mcp_first(sig, c->nn, c->no);
	/* A tool's or prompt's name is decided by the gateway's own
	 * first-match function on the witness: the automata only find the
	 * witnesses. Were the two ever to disagree, the answer would not be
	 * the gateway's: the question fails rather than guess. (Resource
	 * URIs are matched normalised, with the proxy's path globs.) */
	if (strcmp(c->kind, "resources") != 0 && strlen(name) == len) {
		long gn = gateway_first(c->nr, c->nn, name), go = gateway_first(c->or_, c->no, name);
		if (gn != ni || go != oi)
			return error_set(err, EPROTO,
					 "mcp.servers.%s.%s: the prover's automata and the gateway's matcher disagree on "
					 "the name \"%s\" (NEW rule %ld against %ld, OLD rule %ld against %ld)",
					 c->ns->name, c->kind, name, ni, gn, oi, go);
	}
	if (ni < 0)
		return 0;
	const struct policy_mcp_rule *nr = &c->nr[ni], *or_ = oi >= 0 ? &c->or_[oi] : NULL;
	int nrank = mcp_rank(nr->decision, tools), orank = or_ ? mcp_rank(or_->decision, tools) : 0;
	size_t pair = (size_t)ni * (c->no + 1) + (size_t)(oi + 1);
	if (nrank == 0 || c->seen[pair])
		return 0;
	if (nrank <= orank && !tools)
		return 0;
	c->seen[pair] = true;
	if (nrank > orank) {
		char wit[600], rule[300];
		const char *verb = tools ? "tools/call" : !strcmp(c->kind, "resources") ? "resources/read" : "prompts/get";
		snprintf(wit, sizeof(wit), "%s.%s", c->ns->name, name);
		if (or_)
			snprintf(rule, sizeof(rule), "rule mcp.servers.%s.%s[%ld] %s, line %u", c->os->name, c->kind, oi,
				 policy_mcp_decision_name(or_->decision), or_->line);
		else if (c->os)
			snprintf(rule, sizeof(rule), "no rule of server %s matches", c->os->name);
		else
			snprintf(rule, sizeof(rule), "it has no server %s", c->ns->name);
		struct policy_loc loc = { .file = c->new_->file, .line = nr->line };
		return diff_add(c->d, err, "mcp", c->new_, &loc, wit, "%s %s %s; OLD %s it (%s)",
			   nr->decision == POLICY_MCP_STEP_UP ? "allows with step-up" : "allows", verb, wit,
			   orank == 1 ? "steps up" : "denies", rule);
	}
	/* Both let it through: the deciding rules' constraints. */
	struct mcp_ctx sub = *c;
	sub.nr = nr;
	sub.or_ = or_;
	_cleanup_free_ char *tool = strndup(name, len);
	if (!tool)
		return error_set(err, ENOMEM, "out of memory");
	return args_widen(&sub, tool, err);
}

static int mcp_rules_diff(const struct policy *new_, const struct policy_mcp_server *ns,
			  const struct policy_mcp_server *os, const char *kind, const struct policy_mcp_rule *nr,
			  size_t nn, const struct policy_mcp_rule *or_, size_t no, struct policy_diff *d,
			  struct error *err)
{
	struct gvec g = { 0 };
	int r = 0;
	for (size_t i = 0; i < nn + no && r >= 0; i++)
		r = diff_gvec_add(&g, i < nn ? nr[i].match : or_[i - nn].match,
			     !strcmp(kind, "resources") ? GLOB_PATH : GLOB_NAME, err);
	if (r == -EINVAL) {
		/* A pattern glob.c does not model (an unterminated bracket, a
		 * collating element): only an identical rule list is trusted,
		 * rule i against rule i. */
		char why[256];
		bool same = nn == no;
		snprintf(why, sizeof(why), "%s", err->msg);
		diff_gvec_free(&g);
		error_clear(err);
		for (size_t i = 0; i < nn && same; i++)
			same = !strcmp(nr[i].match, or_[i].match) && nr[i].decision == or_[i].decision;
		if (!same) {
			char wit[300];
			snprintf(wit, sizeof(wit), "%s.%s", ns->name, kind);
			struct policy_loc loc = { .file = new_->file, .line = nn ? nr[0].line : ns->line };
			return diff_add(d, err, "mcp", new_, &loc, wit,
				   "changes %s, whose patterns cannot be compared exactly (%s); counted as wider", wit, why);
		}
		r = 0;
		for (size_t i = 0; i < nn && r >= 0 && !strcmp(kind, "tools"); i++) {
			if (nr[i].decision == POLICY_MCP_DENY)
				continue;
			struct mcp_ctx c = { .new_ = new_, .ns = ns, .os = os, .kind = kind, .nr = &nr[i], .or_ = &or_[i],
					     .d = d };
			r = args_widen(&c, nr[i].match, err);
		}
		return r;
	}
	if (r < 0) {
		diff_gvec_free(&g);
		return r;
	}
	_cleanup_free_ bool *seen = calloc((nn + 1) * (no + 1), sizeof(bool));
	if (!seen) {
		diff_gvec_free(&g);
		return error_set(err, ENOMEM, "out of memory");
	}
	struct mcp_ctx c = { .new_ = new_, .ns = ns, .os = os, .kind = kind, .nr = nr, .or_ = or_,
			     .nn = nn, .no = no, .seen = seen, .d = d };
	r = glob_atoms(NULL, 0, CG(g.v), g.n, mcp_atom, &c, err);
	diff_gvec_free(&g);
	return r;
}

static int scan_rank(enum policy_mcp_scan s)
{
	return s == POLICY_MCP_SCAN_OFF ? 2 : s == POLICY_MCP_SCAN_REDACT ? 1 : 0;
}

static const char *scan_name(enum policy_mcp_scan s)
{
	return s == POLICY_MCP_SCAN_OFF ? "off" : s == POLICY_MCP_SCAN_REDACT ? "redact" : "block";
}

static int mcp_server_diff(const struct policy *new_, const struct policy_mcp_server *ns,
			   const struct policy_mcp_server *os, struct policy_diff *d, struct error *err)
{
	int r;
	char w[400];
	struct policy_loc loc = { .file = new_->file, .line = ns->line };

	if ((r = mcp_rules_diff(new_, ns, os, "tools", ns->tools, ns->n_tools, os ? os->tools : NULL,
				os ? os->n_tools : 0, d, err)) < 0 ||
	    (r = mcp_rules_diff(new_, ns, os, "resources", ns->resources, ns->n_resources,
				os ? os->resources : NULL, os ? os->n_resources : 0, d, err)) < 0 ||
	    (r = mcp_rules_diff(new_, ns, os, "prompts", ns->prompts, ns->n_prompts, os ? os->prompts : NULL,
				os ? os->n_prompts : 0, d, err)) < 0)
		return r;
	const struct {
		const char *name, *method;
		bool n, o;
	} req[] = {
		{ "sampling", "sampling/createMessage", ns->sampling, os && os->sampling },
		{ "elicitation", "elicitation/create", ns->elicitation, os && os->elicitation },
		{ "roots", "roots/list", ns->roots, os && os->roots },
	};
	for (size_t i = 0; i < ARRAY_SIZE(req); i++) {
		if (!req[i].n || req[i].o)
			continue;
		snprintf(w, sizeof(w), "%s %s", ns->name, req[i].method);
		if ((r = diff_add(d, err, "mcp", new_, &loc, w,
			     "allows server %s to send %s (server_requests.%s); OLD refuses it", ns->name,
			     req[i].method, req[i].name)) < 0)
			return r;
	}
	if (!os)
		return 0;
	if (os->max_calls && (!ns->max_calls || ns->max_calls > os->max_calls)) {
		snprintf(w, sizeof(w), "%s tools/call %llu", ns->name, (unsigned long long)os->max_calls + 1);
		if ((r = diff_add(d, err, "mcp", new_, &loc, w, "allows %s in a session; OLD's max_calls is %llu", w,
			     (unsigned long long)os->max_calls)) < 0)
			return r;
	}
	const struct {
		const char *name;
		enum policy_mcp_scan n, o;
	} sc[] = {
		{ "secrets", ns->scan_secrets, os->scan_secrets },
		{ "injection", ns->scan_injection, os->scan_injection },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sc); i++) {
		if (scan_rank(sc[i].n) <= scan_rank(sc[i].o))
			continue;
		snprintf(w, sizeof(w), "%s scan.%s %s", ns->name, sc[i].name, scan_name(sc[i].n));
		if ((r = diff_add(d, err, "mcp", new_, &loc, w, "weakens %s; OLD has %s", w, scan_name(sc[i].o))) < 0)
			return r;
	}
	/* A different pin file holds other approved definitions: a tool
	 * whose definition changed may pass unapproved. Any change counts. */
	if (!diff_str_eq(ns->pins, os->pins)) {
		snprintf(w, sizeof(w), "%s pins %s", ns->name, ns->pins ? ns->pins : "(default)");
		if ((r = diff_add(d, err, "mcp", new_, &loc, w, "reads approvals from another pin file (%s); OLD uses %s", w,
			     os->pins ? os->pins : "the default")) < 0)
			return r;
	}
	/* Another command is another server, with tools OLD never saw. */
	bool same_cmd = ns->n_command == os->n_command;
	for (size_t i = 0; i < ns->n_command && same_cmd; i++)
		same_cmd = !strcmp(ns->command[i], os->command[i]);
	if (!same_cmd) {
		snprintf(w, sizeof(w), "%s command %s", ns->name, ns->n_command ? ns->command[0] : "(none)");
		if ((r = diff_add(d, err, "mcp", new_, &loc, w, "runs another program as server %s (%s); OLD runs %s",
			     ns->name, ns->n_command ? ns->command[0] : "none",
			     os->n_command ? os->command[0] : "none")) < 0)
			return r;
	}
	return 0;
}

int diff_mcp(const struct policy *old, const struct policy *new_, struct policy_diff *d, struct error *err)
{
	if (!new_->mcp)
		return 0;
	for (size_t i = 0; i < new_->mcp->n_servers; i++) {
		const struct policy_mcp_server *ns = &new_->mcp->servers[i];
		const struct policy_mcp_server *os = old->mcp ? policy_mcp_server(old->mcp, ns->name) : NULL;
		int r = mcp_server_diff(new_, ns, os, d, err);
		if (r < 0)
			return r;
	}
	return 0;
}
