/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lint for `airlock policy check`: rules that are valid but do not do what
 * their author probably meant. Each warning names file:line; none changes
 * the policy.
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "handoff/handoff.h"
#include "policy/glob.h"
#include "policy/layer.h"
#include "policy/mcp.h"

PRINTF_LIKE(3, 4)
static void warn(FILE *f, const struct policy_loc *loc, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fputs("airlock: lint: ", f);
	if (loc->line && loc->file) {
		policy_print_comment(f, loc->file);
		fprintf(f, ":%u: ", loc->line);
	}
	policy_print_comment(f, what);
	fputc('\n', f);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool ports_within(const struct policy_endpoint *a, const struct policy_endpoint *b)
{
	for (size_t i = 0; i < a->n_ports; i++) {
		bool ok = false;
		for (size_t j = 0; j < b->n_ports && !ok; j++)
			ok = a->ports[i] == b->ports[j];
		if (!ok)
			return false;
	}
	return true;
}

static bool methods_within(const struct policy_net_rule *a, const struct policy_net_rule *b)
{
	if (!b->methods)
		return true;
	if (!a->methods)
		return false;
	for (size_t i = 0; i < a->n_methods; i++) {
		bool ok = false;
		for (size_t j = 0; j < b->n_methods && !ok; j++)
			ok = strcmp(a->methods[i], b->methods[j]) == 0;
		if (!ok)
			return false;
	}
	return true;
}

static size_t lint_network(const struct policy *p, FILE *f)
{
	const struct policy_network *net = &p->network;
	size_t n = 0;

	for (size_t j = 0; j < net->n_endpoints; j++) {
		const struct policy_endpoint *b = &net->endpoints[j];
		/* The proxy takes the first endpoint whose host and port
		 * match (net/netpolicy.c): a later one inside an earlier one
		 * never decides anything. */
		for (size_t i = 0; i < j; i++) {
			const struct policy_endpoint *a = &net->endpoints[i];
			if (policy_host_pattern_covers(a->host, b->host) && ports_within(b, a)) {
				warn(f, &b->loc,
				     "network.endpoints %s (host %s) can never match: endpoint %s (line %u) takes every "
				     "host and port it names first",
				     b->id, b->host, a->id, a->loc.line);
				n++;
				break;
			}
		}
		for (size_t y = 0; y < b->n_rules; y++)
			for (size_t x = 0; x < y; x++) {
				const struct policy_net_rule *rx = &b->rules[x], *ry = &b->rules[y];
				if (methods_within(ry, rx) && policy_glob_subset(ry->path, rx->path) &&
				    policy_glob_subset(ry->query, rx->query) && (!ry->websocket || rx->websocket)) {
					warn(f, &ry->loc, "rule %s is shadowed by rule %s (line %u), which allows all it allows",
					     ry->id, rx->id, rx->loc.line);
					n++;
					break;
				}
			}
	}
	/* A secret bound to a host the agent may use on every path and with
	 * every method: any request there carries it. */
	for (size_t i = 0; i < p->n_credentials; i++) {
		const struct policy_credential *c = &p->credentials[i];
		for (size_t k = 0; k < c->n_bindings; k++) {
			const struct policy_cred_binding *bd = &c->bindings[k];
			for (size_t j = 0; j < net->n_endpoints; j++) {
				const struct policy_endpoint *ep = &net->endpoints[j];
				bool port = false;
				for (size_t x = 0; x < ep->n_ports; x++)
					port = port || ep->ports[x] == bd->port;
				if (!port || !policy_host_pattern_covers(ep->host, bd->host))
					continue;
				if (ep->n_rules == 0 && !bd->paths && !bd->methods && !bd->git) {
					warn(f, &bd->loc,
					     "credential %s is bound to %s, which endpoint %s (line %u) allows on every "
					     "path and method: the agent can spend the secret on any request there; give "
					     "the endpoint rules or the binding paths/methods",
					     c->name, bd->host, ep->id, ep->loc.line);
					n++;
				}
				break;
			}
		}
	}
	return n;
}

static size_t lint_filesystem(const struct policy *p, FILE *f)
{
	/* Deny wins over every grant beneath it (sandbox/plan.c). */
	const struct policy_paths *lists[4] = { &p->filesystem.read, &p->filesystem.write, &p->process.exec,
						&p->filesystem.sockets };
	static const char *const names[4] = { "filesystem.read", "filesystem.write", "process.exec",
					      "filesystem.sockets" };
	size_t n = 0;

	for (int l = 0; l < 4; l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			for (size_t d = 0; d < p->filesystem.deny.n; d++)
				if (under(lists[l]->v[i].path, p->filesystem.deny.v[d].path)) {
					warn(f, &lists[l]->v[i].loc,
					     "%s %s can never match: it is beneath filesystem.deny %s (line %u), which "
					     "hides it",
					     names[l], lists[l]->v[i].path, p->filesystem.deny.v[d].path,
					     p->filesystem.deny.v[d].loc.line);
					n++;
					break;
				}
	/* Trust hand-off files: written in the sandbox, run outside it. */
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir ? pw->pw_dir : NULL;
	}
	for (size_t i = 0; i < p->filesystem.write.n; i++) {
		const struct policy_path *w = &p->filesystem.write.v[i];
		const struct handoff_rule *hr = handoff_match(w->path + 1);
		if (home && under(home, w->path)) {
			warn(f, &w->loc,
			     "filesystem.write %s holds the home directory: the agent can write ~/.bashrc, ~/.profile "
			     "and the other files the user's shell and tools run outside the sandbox",
			     w->path);
			n++;
		} else if (hr) {
			warn(f, &w->loc, "filesystem.write %s is a trust hand-off path (%s): %s", w->path, hr->pattern,
			     hr->why);
			n++;
		} else if (!under(w->path, p->sandbox.workspace)) {
			warn(f, &w->loc,
			     "filesystem.write %s is outside the workspace, where protected paths do not apply: the "
			     "agent can write git hooks, editor tasks and the like there",
			     w->path);
			n++;
		}
	}
	if (home && p->sandbox.workspace && under(home, p->sandbox.workspace)) {
		warn(f, &p->sandbox.workspace_loc,
		     "sandbox.workspace %s holds the home directory: the agent can write ~/.bashrc, ~/.profile and "
		     "the other files the user's shell and tools run outside the sandbox (protected paths cover "
		     "only the hand-off table's rows)",
		     p->sandbox.workspace);
		n++;
	}
	if (!p->filesystem.protect_defaults) {
		warn(f, &p->origin.protect_defaults,
		     "filesystem.protect_defaults: false: the workspace's trust hand-off files (.git/hooks, "
		     ".git/config, .vscode/, .envrc, CI workflows, ...) are writable by the agent");
		n++;
	}
	return n;
}

/* MCP rules, first match decides: a rule whose every name an earlier rule
 * already takes never decides anything (decided exactly on the fnmatch
 * automata of glob.c); an allow on every name gives the server's whole
 * surface, future tools included. Constraints on a denied tool are
 * refused when the policy loads (policy/mcp.c), so they need no lint. */
static size_t lint_mcp_rules(const struct policy *p, FILE *f, const struct policy_mcp_server *s, const char *kind,
			     const struct policy_mcp_rule *r, size_t n)
{
	size_t count = 0;
	struct glob **g = calloc(n ? n : 1, sizeof(*g));
	_cleanup_glob_ struct glob *all = NULL;
	struct error err = { 0 };
	/* Resource URIs are matched with the proxy's path globs. */
	enum glob_kind gk = !strcmp(kind, "resources") ? GLOB_PATH : GLOB_NAME;
	if (!g || glob_compile(gk == GLOB_PATH ? "**" : "*", gk, &all, &err) < 0) {
		free(g);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct policy_loc loc = { .file = p->file, .line = r[i].line };
		bool sub = false;
		if (glob_compile(r[i].match, gk, &g[i], &err) < 0) {
			/* Refused when the policy loads (an unterminated
			 * bracket, a collating element); one built some
			 * other way is said once. */
			warn(f, &loc, "mcp.servers.%s.%s[%zu]: \"%s\" cannot be analysed (%s)", s->name, kind, i,
			     r[i].match, err.msg);
			error_clear(&err);
			count++;
			continue;
		}
		size_t ne = 0;
		struct glob *earlier[64];
		for (size_t j = 0; j < i && ne < 64; j++)
			if (g[j])
				earlier[ne++] = g[j];
		if (ne && glob_subset(g[i], (const struct glob *const *)earlier, ne, &sub, NULL, &err) == 0 && sub) {
			warn(f, &loc, "mcp.servers.%s.%s[%zu] (\"%s\") is shadowed by earlier rules: every name it matches "
				      "is decided before it",
			     s->name, kind, i, r[i].match);
			count++;
		}
		error_clear(&err);
		bool every = false;
		const struct glob *one[1] = { g[i] };
		if (r[i].decision == POLICY_MCP_ALLOW &&
		    glob_subset(all, one, 1, &every, NULL, &err) == 0 && every) {
			warn(f, &loc,
			     "mcp.servers.%s.%s[%zu] allows every %s of the server, those it adds later included; "
			     "list the ones the agent needs",
			     s->name, kind, i, !strcmp(kind, "tools") ? "tool" : !strcmp(kind, "resources") ? "resource" : "prompt");
			count++;
		}
		error_clear(&err);
	}
	for (size_t i = 0; i < n; i++)
		glob_free(g[i]);
	free(g);
	return count;
}

static size_t lint_mcp(const struct policy *p, FILE *f)
{
	size_t n = 0;
	for (size_t i = 0; p->mcp && i < p->mcp->n_servers; i++) {
		const struct policy_mcp_server *s = &p->mcp->servers[i];
		n += lint_mcp_rules(p, f, s, "tools", s->tools, s->n_tools);
		n += lint_mcp_rules(p, f, s, "resources", s->resources, s->n_resources);
		n += lint_mcp_rules(p, f, s, "prompts", s->prompts, s->n_prompts);
	}
	return n;
}

size_t cli_policy_lint(const struct policy *p, FILE *f)
{
	size_t n = lint_network(p, f) + lint_filesystem(p, f) + lint_mcp(p, f);
	/* observe mode is warned about with POLICY_OBSERVE_WARNING already. */
	if (p->sandbox.mode == POLICY_MODE_OBSERVE)
		n++;
	return n;
}
