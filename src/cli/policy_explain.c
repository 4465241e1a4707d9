/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `airlock policy explain`: the effective policy (developer narrowed by
 * enterprise) with the layer and file:line of every rule, or the answer
 * to one question with the deciding rule. The answers come from the code
 * that enforces: net/netpolicy.c for requests (what the proxy calls), the
 * sandbox plan and sandbox/fsrules.c for paths (what observe mode judges
 * by), so an answer cannot drift from enforcement.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "net/addr.h"
#include "net/http.h"
#include "mcp/mcp.h"
#include "net/netpolicy.h"
#include "policy/layer.h"
#include "sandbox/fsrules.h"
#include "sandbox/internal.h"
#include "sandbox/landlock_abi.h"
#include "sandbox/review_run.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"

static const char explain_usage[] =
	"usage: airlock policy explain [--enterprise FILE|DIR] FILE\n"
	"       airlock policy explain [--enterprise FILE|DIR] FILE --request 'METHOD URL'\n"
	"       airlock policy explain [--enterprise FILE|DIR] FILE --path P [--access read|write|exec]\n"
	"       airlock policy explain [--enterprise FILE|DIR] FILE --exec P\n"
	"       airlock policy explain [--enterprise FILE|DIR] FILE --tool SERVER.TOOL [--args JSON]\n"
	"\n"
	"Without a question: the effective policy, each rule followed by\n"
	"\"# developer FILE:LINE\" or \"# enterprise FILE:LINE\".\n"
	"With one: allow or deny, the deciding rule and where it came from.\n"
	"--tool: the MCP gateway's decision on one tools/call (allow, step_up or\n"
	"deny), arguments checked as the gateway checks them (default {}).\n"
	"Exit 0 allow, 1 deny (or step_up for --tool), 2 bad usage or policy.\n";

static void print_loc(const struct policy_loc *l)
{
	if (l->line && l->file) {
		printf(" (%s ", l->layer ? l->layer : "developer");
		policy_print_comment(stdout, l->file);
		printf(":%u)", l->line);
	} else {
		fputs(" (built-in default)", stdout);
	}
}

static const struct policy_loc *rule_loc(const struct policy *p, const struct net_decision *d)
{
	if (!d->ep)
		return NULL;
	for (size_t i = 0; i < d->ep->n_rules; i++)
		if (d->ep->rules[i].id == d->rule)
			return &d->ep->rules[i].loc;
	(void)p;
	return &d->ep->loc;
}

/* With enterprise layers the question is first answered quietly under the
 * developer's policy alone: a denial that policy would have allowed is the
 * enterprise's doing, and is said to be, with the cuts that made it; the
 * fix the reason suggests ("add a rule ...") is then left out, since the
 * developer has that rule and the enterprise took it away. */
static bool quiet;
static bool developer_allows;
static const struct policy_layer_report *cuts;
static enum { TOPIC_PATH, TOPIC_NETWORK, TOPIC_MCP } cuts_topic;
static char cuts_about[PATH_MAX]; /* its host, its path, or its MCP server */

/* Whether a cut ("DEV:LINE: FIELD ...") is about the question: of its
 * section, and naming its host (`host "H"`) or a path holding its path
 * (`"/dir"`). */
static bool cut_about(const char *msg)
{
	if (cuts_topic == TOPIC_MCP) {
		/* "mcp.servers.NAME cut", "mcp.servers.NAME.tools[N] ..." */
		char field[PATH_MAX + 32];
		snprintf(field, sizeof(field), ": mcp.servers.%s", cuts_about);
		const char *at = strstr(msg, field);
		return at && (at[strlen(field)] == ' ' || at[strlen(field)] == '.');
	}
	bool section = cuts_topic == TOPIC_NETWORK ? strstr(msg, ": network.") != NULL
						   : strstr(msg, ": filesystem.") || strstr(msg, ": process.");
	if (!section)
		return false;
	const char *q = strchr(msg, '"');
	const char *e = q ? strchr(q + 1, '"') : NULL;
	if (!e)
		return false;
	size_t n = (size_t)(e - q - 1);
	if (cuts_topic == TOPIC_NETWORK)
		return n == strlen(cuts_about) && strncmp(q + 1, cuts_about, n) == 0;
	return strncmp(q + 1, cuts_about, n) == 0 && (cuts_about[n] == '\0' || cuts_about[n] == '/');
}

/* The enterprise's part in a denial the developer's policy would not make:
 * the cuts about the question. */
static void enterprise_cuts(void)
{
	fputs("enterprise: the developer's policy alone allows this; the enterprise layer removed or narrowed "
	      "the rule that allowed it:\n",
	      stdout);
	size_t shown = 0;
	for (size_t i = 0; cuts && i < cuts->n_msgs; i++)
		if (cut_about(cuts->msgs[i])) {
			fputs("  ", stdout);
			policy_print_comment(stdout, cuts->msgs[i]);
			putchar('\n');
			shown++;
		}
	if (!shown)
		fputs("  (no cut names it: a ceiling of the enterprise's own decides, the rule above)\n", stdout);
}

static int answer(bool allow, const char *rule, const struct policy_loc *loc, const char *why,
		  const struct policy *p)
{
	if (quiet)
		return allow ? 0 : 1;
	bool by_enterprise = !allow && developer_allows;
	printf("%s\n", allow ? "allow" : "deny");
	printf("rule: ");
	policy_print_comment(stdout, rule);
	if (loc)
		print_loc(loc);
	putchar('\n');
	if (why && why[0]) {
		const char *fix = by_enterprise ? strstr(why, "; add ") : NULL;
		fputs("why: ", stdout);
		if (fix) {
			_cleanup_free_ char *cut = strndup(why, (size_t)(fix - why));
			policy_print_comment(stdout, cut ? cut : "");
		} else {
			policy_print_comment(stdout, why);
		}
		putchar('\n');
	}
	if (by_enterprise)
		enterprise_cuts();
	if (p->sandbox.mode == POLICY_MODE_OBSERVE) {
		fputs("note: observe mode: nothing is enforced; the answer above is what is recorded\n", stdout);
		return 0;
	}
	return allow ? 0 : 1;
}

/* "METHOD scheme://host[:port]/path?query": read by the proxy's own HTTP
 * parser (net/http.c), so a target the proxy refuses as malformed (a dot
 * segment, a bad percent-encoding, a backslash) is refused here too, and
 * the host, port, path and query are the ones the proxy would decide on. */
static int explain_request(const struct policy *p, const char *q)
{
	const char *sp = strchr(q, ' ');
	if (!sp || sp == q || strlen(q) > 8192) {
		fprintf(stderr, "airlock policy explain: --request wants 'METHOD URL', e.g. 'GET https://example.com/'\n");
		return SANDBOX_EXIT_USAGE;
	}
	const char *url = sp + 1;
	bool https;
	if (!strncmp(url, "https://", 8)) {
		https = true;
	} else if (!strncmp(url, "http://", 7)) {
		https = false;
	} else {
		fprintf(stderr, "airlock policy explain: --request: the URL must start with http:// or https://\n");
		return SANDBOX_EXIT_USAGE;
	}
	const char *auth = url + (https ? 8 : 7);
	size_t alen = strcspn(auth, "/?#");
	/* The request as the agent's client sends it to the proxy: an
	 * absolute-form target with its Host (inside an intercepted tunnel
	 * the target is origin-form; the parser checks path and query the
	 * same way for both). */
	_cleanup_free_ char *head = NULL;
	if (asprintf(&head, "%.*s %s HTTP/1.1\r\nHost: %.*s\r\n\r\n", (int)(sp - q), q, url, (int)alen, auth) < 0)
		return SANDBOX_EXIT_SETUP;
	struct http_request req;
	struct error err = { 0 };
	int status = 400;
	if (http_parse_request(head, strlen(head), &req, &status, &err) <= 0) {
		char why[600];
		snprintf(why, sizeof(why), "the proxy answers %d: %s", status, err.msg[0] ? err.msg : "malformed request");
		return answer(false, "malformed request", NULL, why, p);
	}
	char host[256];
	struct net_addr addr;
	int numeric = addr_normalize_host(req.host, host, sizeof(host), &addr);
	if (numeric < 0)
		return answer(false, "malformed request", NULL, "the proxy answers 400: invalid host", p);
	uint16_t port = req.port;
	cuts_topic = TOPIC_NETWORK;
	snprintf(cuts_about, sizeof(cuts_about), "%s", host);

	struct net_decision d;
	struct policy_network net = p->network;
	net.mode = policy_net_mode(p);
	if (!netpol_decide_host(&net, host, port, &d))
		return answer(false, d.rule, rule_loc(p, &d), d.reason, p);
	/* The address check the proxy makes after resolving: known here for
	 * an address and for a name the policy pins with network.resolve;
	 * other names are resolved only when the request is made. */
	const char *pinned = NULL;
	for (size_t i = 0; i < p->network.n_resolve && !numeric; i++)
		if (!strcmp(p->network.resolve[i].host, host))
			pinned = p->network.resolve[i].addr;
	char tmp[256];
	if (pinned && addr_normalize_host(pinned, tmp, sizeof(tmp), &addr) == 1)
		numeric = 1;
	const struct policy_endpoint *ep = d.ep;
	if (numeric == 1) {
		struct net_decision da;
		if (!netpol_decide_address(&net, &addr, port, &da))
			return answer(false, da.rule, NULL, da.reason, p);
	}
	if (https) {
		/* https: a CONNECT tunnel first, decided as the proxy does. */
		struct net_decision td;
		if (!netpol_decide_tunnel(ep, port, &td))
			return answer(false, td.rule, &ep->loc, td.reason, p);
		if (!ep->intercept)
			return answer(true, ep->id, &ep->loc, td.reason, p);
	}
	if (!netpol_decide_request(ep, req.method, req.path, req.path_len, req.query, req.query_len, false, &d))
		return answer(false, d.rule, rule_loc(p, &d), d.reason, p);
	return answer(true, d.rule, rule_loc(p, &d), numeric == 1 ? NULL
				     : "the address is checked when the proxy resolves the name",
		      p);
}

static void canon(char *path, size_t len)
{
	char real[PATH_MAX];
	if (realpath(path, real) && strlen(real) < len)
		memcpy(path, real, strlen(real) + 1);
}

static bool host_exists(const char *path, void *ctx)
{
	struct stat st;
	(void)ctx;
	return lstat(path, &st) == 0;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The deepest policy entry holding path: the rule a reader looks at. */
static void deciding_entry(const struct policy *p, const char *path, bool exec, const char **name,
			   const char **entry, const struct policy_loc **loc)
{
	size_t best = 0;
	struct {
		const char *name;
		const struct policy_paths *ps;
	} lists[] = { { "filesystem.deny", &p->filesystem.deny },
		      { "filesystem.write", &p->filesystem.write },
		      { "filesystem.read", &p->filesystem.read },
		      { "process.exec", exec ? &p->process.exec : NULL } };
	*name = NULL;
	*loc = NULL;
	if (under(path, p->sandbox.workspace)) {
		*name = "sandbox.workspace";
		*entry = p->sandbox.workspace;
		*loc = &p->sandbox.workspace_loc;
		best = strlen(p->sandbox.workspace);
	}
	for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++)
		for (size_t i = 0; lists[l].ps && i < lists[l].ps->n; i++) {
			const char *e = lists[l].ps->v[i].path;
			if (under(path, e) && (strlen(e) > best || !*name)) {
				*name = lists[l].name;
				*entry = e;
				*loc = &lists[l].ps->v[i].loc;
				best = strlen(e);
			}
		}
	/* Deny wins over every grant, however deep (sandbox/plan.c). */
	for (size_t i = 0; i < p->filesystem.deny.n; i++)
		if (under(path, p->filesystem.deny.v[i].path)) {
			*name = "filesystem.deny";
			*entry = p->filesystem.deny.v[i].path;
			*loc = &p->filesystem.deny.v[i].loc;
			return;
		}
}

static int explain_path(const struct policy *p, const char *arg, const char *access)
{
	bool is_exec = !strcmp(access, "exec"), is_write = !strcmp(access, "write");
	if (!is_exec && !is_write && strcmp(access, "read") != 0) {
		fprintf(stderr, "airlock policy explain: --access must be read, write or exec\n");
		return SANDBOX_EXIT_USAGE;
	}
	char abs[PATH_MAX], cwd[PATH_MAX];
	if (arg[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)) || snprintf(abs, sizeof(abs), "%s/%s", cwd, arg) >= (int)sizeof(abs))
			return SANDBOX_EXIT_USAGE;
	} else if (snprintf(abs, sizeof(abs), "%s", arg) >= (int)sizeof(abs)) {
		return SANDBOX_EXIT_USAGE;
	}
	/* The kernel judges the real path: resolve links as Landlock would
	 * (for a path not there yet, its directory). */
	struct stat st;
	bool exists = stat(abs, &st) == 0;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", abs);
	if (exists) {
		canon(path, sizeof(path));
	} else {
		char *slash = strrchr(path, '/');
		if (slash && slash != path) {
			*slash = '\0';
			canon(path, sizeof(path));
			size_t n = strlen(path);
			snprintf(path + n, sizeof(path) - n, "/%s", strrchr(abs, '/') + 1);
		}
	}
	cuts_topic = TOPIC_PATH;
	snprintf(cuts_about, sizeof(cuts_about), "%s", path);
	uint64_t want;
	char target[PATH_MAX];
	snprintf(target, sizeof(target), "%s", path);
	if (is_exec) {
		want = LL_FS_EXECUTE | LL_FS_READ_FILE;
	} else if (is_write && exists) {
		want = S_ISDIR(st.st_mode) ? LL_FS_MAKE_REG | LL_FS_REMOVE_FILE : LL_FS_WRITE_FILE;
	} else if (is_write) {
		/* Creating: Landlock checks the directory it is made in. */
		want = LL_FS_MAKE_REG;
		char *slash = strrchr(target, '/');
		if (slash == target)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
	} else {
		want = exists && S_ISDIR(st.st_mode) ? LL_FS_READ_DIR : LL_FS_READ_FILE;
	}

	struct error err = { 0 };
	struct sandbox_plan plan;
	char *argv[] = { (char *)"true", NULL };
	if (plan_build(p, argv, false, &plan, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		plan_free(&plan);
		return SANDBOX_EXIT_USAGE;
	}
	struct fsrules rules = { 0 };
	int abi = landlock_abi();
	if (fsrules_from_plan(&plan, landlock_fs_mask(abi > 0 ? abi : 3), canon, &rules) < 0) {
		plan_free(&plan);
		fprintf(stderr, "airlock: out of memory\n");
		return SANDBOX_EXIT_SETUP;
	}
	enum fsrules_verdict v = fsrules_check(&rules, target, want, host_exists, NULL);
	fsrules_free(&rules);
	/* A name that does not exist yet is created through the guard
	 * (sandbox/guard.c), which refuses a protected one. */
	const char *glob = NULL;
	size_t wl = plan.workspace ? strlen(plan.workspace) : 0;
	if (v == FSR_ALLOW && is_write && !exists && plan.protect.n && wl && strncmp(path, plan.workspace, wl) == 0 &&
	    path[wl] == '/' && (glob = protect_match(&plan.protect, path + wl + 1, false)))
		v = FSR_DENY_ACCESS;
	char protected_by[360] = "";
	if (glob)
		snprintf(protected_by, sizeof(protected_by), " (protected: %s)", glob);
	/* In hold and review modes the write happens inside and what it
	 * makes waits for a person: "allow" alone would say it lands. */
	const char *mode_why = NULL;
	enum policy_workspace_mode mode = review_run_mode(p, &mode_why);
	if (v == FSR_ALLOW && is_write && wl && strncmp(path, plan.workspace, wl) == 0 && path[wl] == '/') {
		struct protect_set ps = { 0 };
		const char *held = NULL;
		if (mode == POLICY_WS_HOLD && protect_set_from_policy(p, &ps) == 0)
			held = protect_match(&ps, path + wl + 1, false);
		if (held)
			snprintf(protected_by, sizeof(protected_by),
				 " inside; held at exit for review (protected: %s), it lands only with airlock apply "
				 "SESSION --accept",
				 held);
		else if (mode == POLICY_WS_REVIEW)
			snprintf(protected_by, sizeof(protected_by),
				 " inside; held at exit for review (workspace_mode: review holds every change)");
		protect_set_free(&ps);
	}
	plan_free(&plan);

	const char *name, *entry = NULL;
	const struct policy_loc *loc;
	deciding_entry(p, path, is_exec, &name, &entry, &loc);
	char rule[PATH_MAX + 64], why[PATH_MAX + 128];
	if (name)
		snprintf(rule, sizeof(rule), "%s %s", name, entry);
	else
		snprintf(rule, sizeof(rule), "%s", "filesystem (no entry holds this path: the baseline or nothing)");
	snprintf(why, sizeof(why), "%s %s: %s%s", access, path, fsrules_verdict_name(v), protected_by);
	return answer(v == FSR_ALLOW, rule, loc, why, p);
}

/* "SERVER.TOOL": the decision of src/mcp/engine.c (mcp_tool_call_allowed,
 * the function the gateway calls) for a first call in a session. Pin
 * approvals are per-machine state, not policy: a tool whose definition
 * changed is also refused until approved ('airlock mcp pins diff'). */
static int explain_tool(const struct policy *p, const char *q, const char *args_json)
{
	const char *dot = strchr(q, '.');
	if (!dot || dot == q || !dot[1]) {
		fprintf(stderr, "airlock policy explain: --tool: \"%s\" is not SERVER.TOOL\n", q);
		return SANDBOX_EXIT_USAGE;
	}
	_cleanup_free_ char *server = strndup(q, (size_t)(dot - q));
	const char *tool = dot + 1;
	struct error err = { 0 };
	_cleanup_imp_node_ struct imp_node *args = NULL;
	if (!server)
		return SANDBOX_EXIT_USAGE;
	if (args_json && imp_json_parse("--args", args_json, strlen(args_json), &args, &err) < 0) {
		fprintf(stderr, "airlock policy explain: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	if (args && args->kind != IMP_MAP) {
		fprintf(stderr, "airlock policy explain: --args: expected a JSON object, got %s\n",
			imp_kind_name(args->kind));
		return SANDBOX_EXIT_USAGE;
	}
	const struct policy_mcp_server *srv = p->mcp ? policy_mcp_server(p->mcp, server) : NULL;
	struct mcp_engine eng;
	if (mcp_engine_init(&eng, srv, server, p->sandbox.workspace, NULL, &err) < 0) {
		mcp_engine_fini(&eng);
		fprintf(stderr, "airlock policy explain: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	struct mcp_verdict v = { 0 };
	bool ok = mcp_tool_call_allowed(&eng, tool, args, &v);
	mcp_engine_fini(&eng);
	bool allowed = ok && v.decision == POLICY_MCP_ALLOW;
	if (quiet)
		return allowed ? 0 : 1;
	cuts_topic = TOPIC_MCP;
	snprintf(cuts_about, sizeof(cuts_about), "%s", server);
	printf("%s\n", !ok ? "deny" : policy_mcp_decision_name(v.decision));
	fputs("rule: ", stdout);
	if (!srv) {
		printf("mcp (no server %s: every tool of it is denied)", server);
	} else {
		policy_print_comment(stdout, v.rule);
		size_t idx = 0;
		const struct policy_mcp_rule *r = mcp_tool_rule(srv, tool, &idx);
		unsigned line = strstr(v.rule, ".max_calls") ? srv->line : r ? r->line : 0;
		if (line) {
			struct policy_loc loc = { .file = p->file, .line = line };
			print_loc(&loc);
		} else {
			fputs(" (built-in default)", stdout);
		}
	}
	putchar('\n');
	if (v.reason[0]) {
		fputs("why: ", stdout);
		policy_print_comment(stdout, v.reason);
		putchar('\n');
	}
	if (ok && v.decision == POLICY_MCP_STEP_UP)
		fputs("why: a person must approve each call\n", stdout);
	if (!allowed && developer_allows)
		enterprise_cuts();
	return allowed ? 0 : 1;
}

int cli_policy_explain(int argc, char **argv)
{
	const char *enterprise = NULL, *file = NULL, *request = NULL, *path = NULL, *access = "read",
		   *exec = NULL, *tool = NULL, *args = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(explain_usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--enterprise"))
			slot = &enterprise;
		else if (!strcmp(a, "--request"))
			slot = &request;
		else if (!strcmp(a, "--path"))
			slot = &path;
		else if (!strcmp(a, "--access"))
			slot = &access;
		else if (!strcmp(a, "--exec"))
			slot = &exec;
		else if (!strcmp(a, "--tool"))
			slot = &tool;
		else if (!strcmp(a, "--args"))
			slot = &args;
		if (slot && i + 1 < argc) {
			*slot = argv[++i];
			continue;
		}
		if (slot || a[0] == '-' || file) {
			fputs(explain_usage, stderr);
			return SANDBOX_EXIT_USAGE;
		}
		file = a;
	}
	if (!file || (!!request + !!path + !!exec + !!tool) > 1) {
		fputs(explain_usage, stderr);
		return SANDBOX_EXIT_USAGE;
	}
	if (args && !tool) {
		fputs(explain_usage, stderr);
		return SANDBOX_EXIT_USAGE;
	}
	struct error err = { 0 };
	_cleanup_policy_ struct policy *pol = NULL;
	_cleanup_(policy_layer_report_free) struct policy_layer_report rep = { 0 };
	if (cli_load_layered(file, enterprise, &pol, &rep, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	/* Provenance: every rule says its layer, the developer's included. */
	policy_mark_developer(pol);
	bool refused = cli_layer_report(&rep, stderr);
	if (rep.n_msgs && (request || path || exec || tool)) {
		_cleanup_policy_ struct policy *dev = NULL;
		if (cli_load_policy(file, &dev, &err) == 0) {
			quiet = true;
			int dr = request ? explain_request(dev, request)
				 : tool	 ? explain_tool(dev, tool, args)
					 : explain_path(dev, path ? path : exec, path ? access : "exec");
			quiet = false;
			developer_allows = dr == 0;
			cuts = &rep;
		}
	}
	if (request)
		return explain_request(pol, request);
	if (tool)
		return explain_tool(pol, tool, args);
	if (path || exec)
		return explain_path(pol, path ? path : exec, path ? access : "exec");
	policy_print(pol, stdout);
	return refused ? SANDBOX_EXIT_USAGE : 0;
}
