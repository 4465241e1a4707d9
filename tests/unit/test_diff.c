/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The widening prover, section by section: each widening case names the
 * witness expected, and each is paired with a narrowing (or equal) policy
 * written differently that must report nothing. Witnesses are also put to
 * the enforcing decision functions (netpolicy.c): allowed under NEW,
 * denied under OLD.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/netpolicy.h"
#include "util/cleanup.h"
#include "analysis/diff.h"

static const struct policy_ctx ctx = { .home = "/home/u", .cwd = "/home/u/ws" };

static struct policy *load(const char *name, const char *yaml)
{
	struct policy *p = NULL;
	struct error err = { 0 };
	if (policy_load_buffer(name, "/home/u/ws", yaml, strlen(yaml), &ctx, &p, &err) < 0)
		fail_msg("%s: %s", name, err.msg);
	return p;
}

/* Diff OLD and NEW; the widenings are returned (caller frees). */
static struct policy_diff run(const char *old_yaml, const char *new_yaml)
{
	struct policy *o = load("old.yaml", old_yaml), *n = load("new.yaml", new_yaml);
	struct policy_diff d = { 0 };
	struct error err = { 0 };
	if (policy_diff(o, n, &d, &err) < 0)
		fail_msg("diff: %s", err.msg);
	policy_free(o);
	policy_free(n);
	return d;
}

static void dump(const struct policy_diff *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "  %s\n", d->v[i].text);
}

/* NEW is no wider in `section` (or anywhere, when section is NULL). */
static void expect_none(const char *old_yaml, const char *new_yaml, const char *section)
{
	struct policy_diff d = run(old_yaml, new_yaml);
	for (size_t i = 0; i < d.n; i++)
		if (!section || !strcmp(d.v[i].section, section)) {
			dump(&d);
			fail_msg("unexpected widening in %s", d.v[i].section);
		}
	policy_diff_free(&d);
}

/* A widening in section whose witness is exactly witness; returns 0. */
static void expect(const char *old_yaml, const char *new_yaml, const char *section, const char *witness)
{
	struct policy_diff d = run(old_yaml, new_yaml);
	bool found = false;
	for (size_t i = 0; i < d.n && !found; i++)
		found = !strcmp(d.v[i].section, section) && !strcmp(d.v[i].witness, witness);
	if (!found) {
		dump(&d);
		fail_msg("no %s widening with witness \"%s\"", section, witness);
	}
	policy_diff_free(&d);
}

#define HDR "version: 1\n"

/* ---- network ---- */

#define EP(host, extra) "    - host: \"" host "\"\n      ports: [443]\n      tls: intercept\n" extra

static const char net_old[] = HDR "network:\n  endpoints:\n" EP("*.example.com",
	"      rules:\n        - {methods: [GET], path: \"/repos/**\"}\n");

static void test_network_narrowing(void **state)
{
	(void)state;
	/* a narrower host and a narrower path, written differently */
	expect_none(net_old, HDR "network:\n  endpoints:\n" EP("api.example.com",
		"      rules:\n        - {methods: [GET], path: \"/repos/acme/*\"}\n"), NULL);
	/* the same policy */
	expect_none(net_old, net_old, NULL);
	/* several rules covering exactly what one OLD rule allows */
	expect_none(net_old, HDR "network:\n  endpoints:\n" EP("*.example.com",
		"      rules:\n        - {methods: [GET], path: \"/repos/*\"}\n"
		"        - {methods: [GET], path: \"/repos/*/**\"}\n"), NULL);
}

static void test_network_widening(void **state)
{
	(void)state;
	/* a wider path */
	expect(net_old, HDR "network:\n  endpoints:\n" EP("*.example.com",
		"      rules:\n        - {methods: [GET], path: \"/**\"}\n"), "network",
	       "GET https://y.example.com:443/");
	/* another method */
	expect(net_old, HDR "network:\n  endpoints:\n" EP("*.example.com",
		"      rules:\n        - {methods: [GET, DELETE], path: \"/repos/**\"}\n"), "network",
	       "DELETE https://y.example.com:443/repos/");
	/* a wider host: example.com itself is not under *.example.com */
	expect(net_old, HDR "network:\n  endpoints:\n" EP("example.com",
		"      rules:\n        - {methods: [GET], path: \"/repos/**\"}\n"), "network",
	       "GET https://example.com:443/repos/");
	/* another port */
	expect(net_old, HDR "network:\n  endpoints:\n    - host: \"*.example.com\"\n      ports: [443, 8443]\n"
		"      tls: intercept\n      rules:\n        - {methods: [GET], path: \"/repos/**\"}\n", "network",
	       "GET https://y.example.com:8443/repos/");
	/* no rules and passthrough: a tunnel, every request in it, even a
	 * dot path the proxy's parser refuses everywhere it reads */
	expect(HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/**\", websocket: true}\n"),
	       HDR "network:\n  endpoints:\n    - host: a.com\n      ports: [443]\n", "network", "GET https://a.com:443/.");
	/* no rules but intercepted: the requests inside are parsed, so no
	 * dot path; a websocket upgrade OLD's rule does not allow */
	expect(HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/**\"}\n"),
	       HDR "network:\n  endpoints:\n" EP("a.com", ""), "network", "GET https://a.com:443/ (websocket upgrade)");
	/* websocket */
	expect(net_old, HDR "network:\n  endpoints:\n" EP("*.example.com",
		"      rules:\n        - {methods: [GET], path: \"/repos/**\", websocket: true}\n"), "network",
	       "GET https://y.example.com:443/repos/ (websocket upgrade)");
	/* a query glob dropped */
	expect(HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/s\", query: \"q=*\"}\n"),
	       HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/s\"}\n"), "network",
	       "GET https://a.com:443/s");
	/* TLS interception dropped */
	expect(HDR "network:\n  endpoints:\n" EP("a.com", ""),
	       HDR "network:\n  endpoints:\n    - {host: a.com, ports: [443]}\n", "network.tls", "a.com:443");
	/* from no network at all */
	expect(HDR, HDR "network:\n  endpoints:\n    - {host: a.com, ports: [443]}\n", "network",
	       "GET https://a.com:443/");
}

/* A widening hidden by a union: no single OLD rule covers NEW's, and the
 * union of OLD's covers a split of NEW's exactly. */
static void test_network_union(void **state)
{
	(void)state;
	const char *old = HDR "network:\n  endpoints:\n" EP("a.com",
		"      rules:\n        - {path: \"/a/*\"}\n        - {path: \"/b/*\"}\n");
	/* one NEW rule over both: within the union */
	expect_none(old, HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/a/c\"}\n"
		"        - {path: \"/b/*\"}\n"), NULL);
	/* "/" + "*" + "/c" is not within: '*' may match nothing */
	expect(old, HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/*/c\"}\n"), "network",
	       "GET https://a.com:443//c");
	const char *old2 = HDR "network:\n  endpoints:\n" EP("a.com",
		"      rules:\n        - {path: \"/a/x*\"}\n        - {path: \"/a/*y\"}\n");
	expect_none(old2, HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/a/x*y\"}\n"), NULL);
	expect(old2, HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {path: \"/a/*\"}\n"), "network",
	       "GET https://a.com:443/a/");
	/* a method split across two OLD rules is covered */
	expect_none(HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {methods: [GET], path: \"/**\"}\n"
		"        - {methods: [POST], path: \"/**\"}\n"),
		HDR "network:\n  endpoints:\n" EP("a.com", "      rules:\n        - {methods: [GET, POST], path: \"/x/**\"}\n"),
		NULL);
}

/* The proxy picks the first endpoint whose host and port match: an
 * earlier narrow endpoint does not make a later wide one narrow. */
static void test_network_first_match(void **state)
{
	(void)state;
	const char *old = HDR "network:\n  endpoints:\n" EP("api.example.com", "      rules:\n        - {path: \"/v1/**\"}\n");
	const char *new_ = HDR "network:\n  endpoints:\n" EP("api.example.com", "      rules:\n        - {path: \"/v1/**\"}\n")
		EP("*.example.com", "");
	expect(old, new_, "network", "GET https://y.example.com:443/");
	/* a shadowed endpoint allows nothing: NEW the same as OLD */
	expect_none(new_, new_, NULL);
	/* and shadowing works the other way: OLD's later wide endpoint
	 * never applies to api.example.com */
	expect(HDR "network:\n  endpoints:\n" EP("api.example.com", "      rules:\n        - {path: \"/v1/**\"}\n")
		EP("*.example.com", ""),
	       HDR "network:\n  endpoints:\n" EP("api.example.com", ""), "network", "GET https://api.example.com:443/");

	/* The witness against the enforcing functions. */
	struct policy *o = load("old.yaml", old), *n = load("new.yaml", new_);
	struct net_decision dn, dd;
	assert_true(netpol_decide_host(&n->network, "y.example.com", 443, &dn));
	assert_true(netpol_decide_request(dn.ep, "GET", "/", 1, "", 0, false, &dn));
	assert_false(netpol_decide_host(&o->network, "y.example.com", 443, &dd));
	policy_free(o);
	policy_free(n);
}

static void test_allow_private(void **state)
{
	(void)state;
	const char *old = HDR "network:\n  allow_private: [10.0.0.0/8, \"127.0.0.1:8080\"]\n  endpoints: []\n";
	expect_none(old, HDR "network:\n  allow_private: [10.1.0.0/16, \"127.0.0.1:8080\"]\n  endpoints: []\n", NULL);
	expect(old, HDR "network:\n  allow_private: [172.16.0.0/12]\n  endpoints: []\n", "network.allow_private",
	       "172.16.0.1:1");
	/* a port-bound entry made any-port */
	expect(old, HDR "network:\n  allow_private: [127.0.0.1]\n  endpoints: []\n", "network.allow_private",
	       "127.0.0.1:1");
	/* a range holding the metadata address does not open it; the
	 * address itself does */
	expect_none(HDR "network:\n  allow_private: [169.254.0.0/17, 169.254.128.0/17]\n  endpoints: []\n",
		    HDR "network:\n  allow_private: [169.254.0.0/16]\n  endpoints: []\n", NULL);
	expect(HDR "network:\n  allow_private: [169.254.0.0/16]\n  endpoints: []\n",
	       HDR "network:\n  allow_private: [169.254.169.254]\n  endpoints: []\n", "network.allow_private",
	       "169.254.169.254:1");
	/* public addresses need no entry: 0.0.0.0/0 opens the private ones */
	expect_none(HDR "network:\n  endpoints: []\n", HDR "network:\n  allow_private: [8.0.0.0/8]\n  endpoints: []\n",
		    NULL);
	expect(HDR "network:\n  endpoints: []\n", HDR "network:\n  allow_private: [0.0.0.0/0]\n  endpoints: []\n",
	       "network.allow_private", "127.0.0.1:1");
}

static void test_inspection(void **state)
{
	(void)state;
	const char *old = HDR "network:\n  endpoints: []\n  leak_scan: {max_body: 1MiB}\n";
	expect(old, HDR "network:\n  endpoints: []\n  leak_scan: {max_body: 1KiB}\n", "network.inspection",
	       "a body of 1025 bytes");
	expect_none(old, HDR "network:\n  endpoints: []\n  leak_scan: {max_body: 2MiB}\n", NULL);
	expect(old, HDR "network:\n  endpoints: []\n  leak_scan: {allow_compressed: true}\n", "network.inspection",
	       "a compressed request body");
}

/* Dropping protocol: mcp lets MCP requests pass without the gateway. */
static void test_mcp_mediation(void **state)
{
	(void)state;
#define MCP_SRV "mcp:\n  servers:\n    remote:\n      tools:\n        - {name: echo, decision: allow}\n"
	const char *old = HDR "network:\n  endpoints:\n    - host: \"mcp.example.com\"\n      ports: [8080]\n"
			      "      protocol: mcp\n      mcp_server: remote\n" MCP_SRV;
	const char *plain = HDR "network:\n  endpoints:\n    - host: \"mcp.example.com\"\n      ports: [8080]\n" MCP_SRV;
	expect(old, plain, "network.mcp", "mcp.example.com:8080");
	expect_none(old, old, NULL);
	expect_none(plain, old, "network.mcp");
#undef MCP_SRV
}

/* ---- filesystem ---- */

static void test_filesystem(void **state)
{
	(void)state;
	const char *old = HDR "filesystem:\n  read: [/srv/data]\n  write: [/srv/out]\n  deny: [/srv/data/secret]\n";
	expect_none(old, HDR "filesystem:\n  read: [/srv/data/pub]\n  write: [/srv/out/tmp]\n", NULL);
	expect(old, HDR "filesystem:\n  read: [/srv/data]\n  write: [/srv/out]\n", "filesystem.read",
	       "/srv/data/secret");
	expect(old, HDR "filesystem:\n  read: [/srv]\n  write: [/srv/out]\n  deny: [/srv/data/secret]\n",
	       "filesystem.read", "/srv");
	/* read made write */
	expect(old, HDR "filesystem:\n  write: [/srv/out, /srv/data]\n  deny: [/srv/data/secret]\n", "filesystem.write",
	       "/srv/data");
	/* a read-only path under a writable one stays read-only */
	expect_none(HDR "filesystem:\n  write: [/srv]\n  read: [/srv/ro]\n",
		    HDR "filesystem:\n  write: [/srv/out]\n  read: [/srv/ro]\n", NULL);
	expect(HDR "filesystem:\n  write: [/srv]\n  read: [/srv/ro]\n", HDR "filesystem:\n  write: [/srv]\n",
	       "filesystem.write", "/srv/ro");
	/* the baseline */
	expect(HDR "filesystem:\n  baseline: false\n", HDR, "filesystem.read", "/etc");
	/* protected paths: dropping the defaults lets the agent write a
	 * pre-commit hook */
	expect(HDR, HDR "filesystem:\n  protect_defaults: false\n", "filesystem.write", "/home/u/ws/.git/hooks");
	expect_none(HDR "filesystem:\n  protect_defaults: false\n", HDR, NULL);
	expect(HDR "filesystem:\n  protect: [\"deploy/**\"]\n", HDR, "filesystem.write", "/home/u/ws/deploy");
	/* a protect glob covered by a wider one in NEW */
	expect_none(HDR "filesystem:\n  protect: [\"deploy/prod/**\"]\n", HDR "filesystem:\n  protect: [\"deploy/**\"]\n",
		    NULL);
	/* execution */
	expect(HDR "process:\n  exec: [/usr/bin]\n", HDR "process:\n  exec: [/usr/bin, /opt/tools]\n", "filesystem.exec",
	       "/opt/tools");
	expect_none(HDR "process:\n  exec: [/usr]\n", HDR "process:\n  exec: [/usr/bin]\n", NULL);
	/* an exec list of its own keeps the workspace from being executable */
	expect(HDR "process:\n  exec: [/usr]\n", HDR, "filesystem.exec", "/home/u/ws");
	expect_none(HDR, HDR "process:\n  exec: [/usr/bin]\n", NULL);
}

/* ---- credentials ---- */

#define CRED(bind) "network:\n  endpoints:\n" EP("*.github.com", "") EP("github.com", "") EP("a.com", "") "credentials:\n  - name: gh\n    source: env:GH_TOKEN\n    env: GH_TOKEN\n    bindings:\n" bind

static void test_credentials(void **state)
{
	(void)state;
	const char *old = HDR CRED("      - {host: api.github.com, methods: [GET], paths: [\"/repos/acme/**\"]}\n");
	expect_none(old, HDR CRED("      - {host: api.github.com, methods: [GET], paths: [\"/repos/acme/widget/*\"]}\n"), NULL);
	expect(old, HDR CRED("      - {host: api.github.com, methods: [GET], paths: [\"/repos/**\"]}\n"), "credentials",
	       "GET https://api.github.com:443/repos/");
	expect(old, HDR CRED("      - {host: api.github.com, methods: [GET, POST], paths: [\"/repos/acme/**\"]}\n"),
	       "credentials", "POST https://api.github.com:443/repos/acme/");
	expect(old, HDR CRED("      - {host: \"*.github.com\", methods: [GET], paths: [\"/repos/acme/**\"]}\n"),
	       "credentials", "GET https://x.github.com:443/repos/acme/");
	expect(old, HDR CRED("      - {host: api.github.com, methods: [GET], paths: [\"/repos/acme/**\"]}\n")
		"  - name: other\n    source: env:OTHER\n    env: OTHER\n    bindings:\n      - {host: a.com}\n",
	       "credentials", "credential other");
	/* git: pushing more refs */
	const char *git_old = HDR CRED("      - host: github.com\n        git: {repos: [\"/acme/*.git\"], push: [\"refs/heads/agent/**\"]}\n");
	expect_none(git_old, HDR CRED("      - host: github.com\n        git: {repos: [\"/acme/widget.git\"], push: [\"refs/heads/agent/x\"]}\n"),
		    NULL);
	expect(git_old, HDR CRED("      - host: github.com\n        git: {repos: [\"/acme/*.git\"], push: [\"refs/heads/**\"]}\n"),
	       "credentials", "pushing ref refs/heads/ in https://github.com:443/acme/.git");
	expect(git_old, HDR CRED("      - host: github.com\n        git: {repos: [\"/**\"]}\n"), "credentials",
	       "fetching https://github.com:443/");
	/* deleting refs it may push */
	expect(git_old, HDR CRED("      - host: github.com\n        git: {repos: [\"/acme/*.git\"], push: [\"refs/heads/agent/**\"], delete: true}\n"),
	       "credentials", "deleting ref refs/heads/agent/ in https://github.com:443/acme/.git");
	/* the same permissions split over two bindings */
	expect_none(HDR CRED("      - host: github.com\n        git: {repos: [\"/acme/*.git\"], push: [\"refs/heads/**\"]}\n"),
		    HDR CRED("      - host: github.com\n        git: {repos: [\"/acme/a*.git\"], push: [\"refs/heads/x/**\"]}\n"
			     "      - host: github.com\n        git: {repos: [\"/acme/*b.git\"], push: [\"refs/heads/y/*\"]}\n"),
		    NULL);
}

/* ---- single settings ---- */

static void test_settings(void **state)
{
	(void)state;
	expect(HDR "sandbox: {boundary: gvisor}\n", HDR "sandbox: {boundary: process}\n", "sandbox.boundary",
	       "boundary process");
	expect_none(HDR "sandbox: {boundary: gvisor}\n", HDR "sandbox: {boundary: microvm}\n", NULL);
	expect(HDR, HDR "sandbox: {mode: observe}\n", "sandbox.mode", "mode observe");
	expect_none(HDR, HDR "sandbox: {mode: learn}\n", NULL);
	expect(HDR "sandbox: {limits: {pids: 100}}\n", HDR "sandbox: {limits: {pids: 200}}\n", "sandbox.limits", "pids 200");
	expect(HDR "sandbox: {limits: {pids: 100}}\n", HDR "sandbox: {limits: {pids: unlimited}}\n", "sandbox.limits", "pids unlimited");
	expect_none(HDR "sandbox: {limits: {pids: 100}}\n", HDR "sandbox: {limits: {pids: 50}}\n", NULL);
	expect(HDR, HDR "audit: {enabled: false}\n", "audit", "audit disabled");
	expect(HDR "audit: {max_size: 64MiB}\n", HDR, "audit", "a decision log of 1073741824 bytes");
	expect_none(HDR, HDR "audit: {max_size: 64MiB}\n", NULL);
	expect(HDR, HDR "process:\n  env: {pass: [AWS_SECRET_ACCESS_KEY]}\n", "process.env", "$AWS_SECRET_ACCESS_KEY");
	expect_none(HDR "process:\n  env: {pass: [TERM, LANG]}\n", HDR "process:\n  env: {pass: [LANG]}\n", NULL);
	expect(HDR "process:\n  env: {set: {CI: \"1\"}}\n", HDR "process:\n  env: {set: {CI: \"1\", LD_PRELOAD: /x.so}}\n",
	       "process.env", "$LD_PRELOAD");
	expect_none(HDR "process:\n  env: {set: {CI: \"1\", A: b}}\n", HDR "process:\n  env: {set: {CI: \"1\"}}\n", NULL);
	expect(HDR "identity: {header: true}\naudit: {dir: /var/log/a}\nnetwork: {endpoints: []}\n",
	       HDR "audit: {dir: /var/log/a}\nnetwork: {endpoints: []}\n", "identity", "no identity header");
}


/* Fields the prover once did not know (schema.c names its rule for each):
 * each widening found with its witness, each narrowing not wider. */
static void test_fields_once_unknown(void **state)
{
	(void)state;
	expect(HDR, HDR "filesystem: {sockets: [/run/docker.sock]}\n", "filesystem.sockets", "/run/docker.sock");
	expect(HDR "filesystem: {sockets: [/run/a.sock]}\n", HDR "filesystem: {sockets: [/run/a.sock, /run/b.sock]}\n",
	       "filesystem.sockets", "/run/b.sock");
	expect_none(HDR "filesystem: {sockets: [/run/a.sock, /run/b.sock]}\n", HDR "filesystem: {sockets: [/run/a.sock]}\n",
		    NULL);
#define NET(extra) "network:\n" extra "  endpoints: [{host: api.example.com, ports: [443]}]\n"
	expect(HDR NET(""), HDR NET("  resolve: {api.example.com: 203.0.113.7}\n"), "network.resolve",
	       "api.example.com -> 203.0.113.7");
	expect(HDR NET("  resolve: {api.example.com: 192.0.2.1}\n"), HDR NET("  resolve: {api.example.com: 203.0.113.7}\n"),
	       "network.resolve", "api.example.com -> 203.0.113.7");
	expect(HDR NET("  resolve: {api.example.com: 192.0.2.1}\n"), HDR NET(""), "network.resolve", "api.example.com -> DNS");
	expect_none(HDR NET("  resolve: {api.example.com: 192.0.2.1}\n"), HDR NET("  resolve: {api.example.com: 192.0.2.1}\n"),
		    NULL);
	/* No network in NEW: a pin in OLD sends nothing anywhere. */
	expect_none(HDR NET("  resolve: {api.example.com: 192.0.2.1}\n"), HDR, NULL);
#undef NET
	expect(HDR "sandbox: {workspace_mode: review}\n", HDR "sandbox: {workspace_mode: direct}\n", "sandbox.workspace_mode",
	       "workspace_mode direct");
	/* Left to its default, the mode is hold. */
	expect(HDR "sandbox: {workspace_mode: review}\n", HDR, "sandbox.workspace_mode", "workspace_mode hold");
	expect(HDR "sandbox: {workspace_mode: direct}\n", HDR, "sandbox.workspace_mode", "workspace_mode hold");
	expect_none(HDR "sandbox: {workspace_mode: direct}\n", HDR "sandbox: {workspace_mode: review}\n", NULL);
	/* hold < direct < review: hold lets a hand-off file land on one
	 * accept, where direct refuses it. */
	expect(HDR "sandbox: {workspace_mode: direct}\n", HDR "sandbox: {workspace_mode: hold}\n", "sandbox.workspace_mode",
	       "workspace_mode hold");
	expect(HDR "sandbox: {workspace_mode: review}\n", HDR "sandbox: {workspace_mode: hold}\n", "sandbox.workspace_mode",
	       "workspace_mode hold");
	expect_none(HDR "sandbox: {workspace_mode: hold}\n", HDR "sandbox: {workspace_mode: direct}\n", NULL);
	expect_none(HDR "sandbox: {workspace_mode: hold}\n", HDR "sandbox: {workspace_mode: review}\n", NULL);
	expect(HDR "sandbox: {host_uid: 1000}\n", HDR "sandbox: {host_uid: 1001}\n", "sandbox.ids", "host_uid 1001");
	expect(HDR "sandbox: {host_gid: 1000}\n", HDR, "sandbox.ids", "host_gid auto");
	expect_none(HDR "sandbox: {host_uid: 1000}\n", HDR "sandbox: {host_uid: 1000}\n", NULL);
#define SRV(extra) "mcp:\n  servers:\n    s: {command: [/usr/bin/s], tools: [{name: a, decision: allow}]" extra "}\n"
	expect(HDR SRV(""), HDR SRV(", policy: /etc/wide.yaml"), "mcp", "s policy /etc/wide.yaml");
	expect(HDR SRV(", policy: /etc/narrow.yaml"), HDR SRV(""), "mcp", "s policy (default)");
	expect_none(HDR SRV(", policy: /etc/p.yaml"), HDR SRV(", policy: /etc/p.yaml"), NULL);
#undef SRV
}

/* ---- the network prover against brute force ---- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* A random policy: 1-3 endpoints over a few host patterns and two ports,
 * each without rules or with 1-3 rules of random methods, path globs over
 * {a, b, /, *, **} and query globs. */
static void random_policy(char *buf, size_t size)
{
	static const char *const hosts[] = { "a.b.c", "*.b.c", "b.c", "*.a.b.c", "x.b.c" };
	static const char *const ports[] = { "[80]", "[8080]", "[80, 8080]" };
	static const char *const methods[] = { "", "methods: [GET], ", "methods: [POST], ", "methods: [GET, POST], " };
	static const char *const queries[] = { "", "", ", query: \"a\"", ", query: \"*\"" };
	size_t n = (size_t)snprintf(buf, size, "version: 1\nnetwork:\n  endpoints:\n");
	unsigned ne = 1 + rnd(3);
	for (unsigned e = 0; e < ne; e++) {
		n += (size_t)snprintf(buf + n, size - n, "    - host: \"%s\"\n      ports: %s\n", hosts[rnd(5)], ports[rnd(3)]);
		unsigned nr = rnd(4);
		if (nr == 0)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "      rules:\n");
		for (unsigned r = 0; r < nr; r++) {
			char path[16];
			size_t pl = 0;
			path[pl++] = '/';
			unsigned len = rnd(4);
			for (unsigned i = 0; i < len; i++) {
				unsigned c = rnd(6);
				if (c == 4)
					path[pl++] = '*';
				else if (c == 5)
					path[pl++] = '*', path[pl++] = '*';
				else
					path[pl++] = "ab/a"[c];
			}
			path[pl] = '\0';
			n += (size_t)snprintf(buf + n, size - n, "        - {%spath: \"%s\"%s%s}\n", methods[rnd(4)], path,
					      queries[rnd(4)], rnd(3) == 0 ? ", websocket: true" : "");
		}
	}
}

static bool allows(const struct policy *p, const char *method, const char *host, uint16_t port, const char *path,
		   const char *query, bool ws)
{
	struct net_decision d;
	if (!netpol_decide_host(&p->network, host, port, &d))
		return false;
	return netpol_decide_request(d.ep, method, path, strlen(path), query, strlen(query), ws, &d);
}

/* "METHOD http://HOST:PORT/PATH[?QUERY][ (websocket upgrade)]" */
static void parse_witness(const char *w, char *method, char *host, uint16_t *port, char *path, char *query, bool *ws)
{
	const char *sp = strchr(w, ' '), *h, *c, *pa, *q, *end;
	assert_non_null(sp);
	memcpy(method, w, (size_t)(sp - w));
	method[sp - w] = '\0';
	h = strstr(sp, "://");
	assert_non_null(h);
	h += 3;
	c = strchr(h, ':');
	assert_non_null(c);
	memcpy(host, h, (size_t)(c - h));
	host[c - h] = '\0';
	*port = (uint16_t)strtoul(c + 1, (char **)&pa, 10);
	*ws = strstr(pa, " (websocket upgrade)") != NULL;
	end = *ws ? strstr(pa, " (websocket upgrade)") : pa + strlen(pa);
	q = memchr(pa, '?', (size_t)(end - pa));
	memcpy(path, pa, (size_t)((q ? q : end) - pa));
	path[(q ? q : end) - pa] = '\0';
	if (q) {
		memcpy(query, q + 1, (size_t)(end - q - 1));
		query[end - q - 1] = '\0';
	} else {
		query[0] = '\0';
	}
}

static void test_network_brute_force(void **state)
{
	(void)state;
	static const char *const hosts[] = { "a.b.c", "b.c", "x.b.c", "y.b.c", "x.a.b.c", "y.x.b.c", "c" };
	static const uint16_t ports[] = { 80, 8080, 443 };
	static const char *const methods[] = { "GET", "POST", "PUT" };
	static const char *const queries[] = { "", "a", "b" };
	/* request paths: '/' then up to 4 of {a, b, /, .} */
	char paths[400][8];
	size_t np = 0;
	for (unsigned len = 0; len <= 4; len++) {
		unsigned cnt = 1;
		for (unsigned i = 0; i < len; i++)
			cnt *= 4;
		for (unsigned x = 0; x < cnt; x++) {
			unsigned y = x;
			paths[np][0] = '/';
			for (unsigned i = 0; i < len; i++, y /= 4)
				paths[np][1 + i] = "ab/."[y % 4];
			paths[np][1 + len] = '\0';
			np++;
		}
	}
	unsigned wider = 0;
	for (unsigned round = 0; round < 150; round++) {
		char ot[2048], nt[2048];
		/* the parser refuses an endpoint shadowed by an earlier one:
		 * draw again */
		struct policy *o = NULL, *n = NULL;
		struct error lerr = { 0 };
		do {
			random_policy(ot, sizeof(ot));
		} while (policy_load_buffer("old.yaml", "/home/u/ws", ot, strlen(ot), &ctx, &o, &lerr) < 0);
		/* Half the time NEW is OLD with some rules dropped and some
		 * globs narrowed ("**" made "*"), mostly no wider; else a
		 * random policy, mostly wider. */
		for (int tries = 0; round % 2 == 0 && tries < 5 && !n; tries++) {
			size_t k = 0;
			for (const char *line = ot; *line;) {
				const char *eol = strchr(line, '\n');
				size_t ll = eol ? (size_t)(eol - line + 1) : strlen(line);
				bool rule = strstr(line, "- {") && (size_t)(strstr(line, "- {") - line) < ll;
				if (!(rule && rnd(3) == 0)) {
					memcpy(nt + k, line, ll);
					if (rule && rnd(2) == 0) {
						char *dd = memmem(nt + k, ll, "**", 2);
						if (dd)
							memmove(dd, dd + 1, ll - (size_t)(dd + 1 - (nt + k))), ll--;
					}
					k += ll;
				}
				line += ll;
			}
			nt[k] = '\0';
			if (policy_load_buffer("new.yaml", "/home/u/ws", nt, strlen(nt), &ctx, &n, &lerr) < 0)
				n = NULL;
		}
		while (!n) {
			random_policy(nt, sizeof(nt));
			if (policy_load_buffer("new.yaml", "/home/u/ws", nt, strlen(nt), &ctx, &n, &lerr) < 0)
				n = NULL;
		}
		struct policy_diff d = { 0 };
		struct error err = { 0 };
		if (policy_diff(o, n, &d, &err) < 0)
			fail_msg("diff: %s", err.msg);
		bool reported = false;
		for (size_t i = 0; i < d.n; i++) {
			if (strcmp(d.v[i].section, "network") != 0)
				continue;
			reported = true;
			/* every witness: NEW allows it, OLD does not */
			char method[16], host[64], path[256], query[256];
			uint16_t port;
			bool ws;
			parse_witness(d.v[i].witness, method, host, &port, path, query, &ws);
			if (!allows(n, method, host, port, path, query, ws) || allows(o, method, host, port, path, query, ws))
				fail_msg("witness %s is not a widening\nOLD:\n%sNEW:\n%s", d.v[i].witness, ot, nt);
		}
		/* brute force: a request NEW allows and OLD does not, among the
		 * enumerated ones, means a widening must have been reported */
		bool found = false;
		for (size_t h = 0; h < ARRAY_SIZE(hosts) && !found; h++)
			for (size_t pt = 0; pt < ARRAY_SIZE(ports) && !found; pt++)
				for (size_t m = 0; m < ARRAY_SIZE(methods) && !found; m++)
					for (size_t pa = 0; pa < np && !found; pa++)
						for (size_t q = 0; q < ARRAY_SIZE(queries) && !found; q++)
							for (int ws = 0; ws < 2 && !found; ws++)
								found = allows(n, methods[m], hosts[h], ports[pt], paths[pa],
									       queries[q], ws) &&
									!allows(o, methods[m], hosts[h], ports[pt], paths[pa],
										queries[q], ws);
		if (found && !reported)
			fail_msg("brute force finds a widening the prover missed\nOLD:\n%sNEW:\n%s", ot, nt);
		wider += reported;
		policy_diff_free(&d);
		policy_free(o);
		policy_free(n);
	}
	/* the generator makes both kinds */
	if (wider < 10 || wider > 140)
		fail_msg("%u of 150 pairs wider", wider);
}

/* ---- mcp ---- */

#define MCP_FS(tools) HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      tools:\n" tools

static void test_mcp(void **state)
{
	(void)state;
	/* A tool OLD denies by its first matching rule, NEW allows. */
	const char *old_ = MCP_FS("        - {name: \"fs.write_*\", decision: deny}\n"
				  "        - {name: \"fs.*\", decision: allow}\n");
	expect(old_, MCP_FS("        - {name: \"fs.*\", decision: allow}\n"), "mcp", "fs.fs.write_");
	/* Reordered and split but the same language: nothing. */
	expect_none(old_,
		    MCP_FS("        - {name: \"fs.write_*\", decision: deny}\n"
			   "        - {name: \"fs.read*\", decision: allow}\n"
			   "        - {name: \"fs.*\", decision: allow}\n"
			   "        - {name: \"x*\", decision: deny}\n"),
		    NULL);
	/* A trailing "*" lets through what OLD lists nothing for: the shortest, the empty name. */
	expect(old_,
	       MCP_FS("        - {name: \"fs.write_*\", decision: deny}\n"
		      "        - {name: \"*\", decision: allow}\n"),
	       "mcp", "fs.");
	/* deny -> step_up and step_up -> allow widen; allow -> step_up narrows. */
	const char *deny = MCP_FS("        - {name: run, decision: deny}\n");
	const char *step = MCP_FS("        - {name: run, decision: step_up}\n");
	const char *allow = MCP_FS("        - {name: run, decision: allow}\n");
	expect(deny, step, "mcp", "fs.run");
	expect(step, allow, "mcp", "fs.run");
	expect_none(allow, step, NULL);
	expect_none(step, deny, NULL);
	/* A new server with an allowing rule; OLD has no mcp section at all. */
	expect(HDR, allow, "mcp", "fs.run");
	expect_none(HDR, deny, NULL);
	/* Resources: a URI glob widened. */
	expect(HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      resources:\n"
		   "        - {uri: \"file:///ws/*\", decision: allow}\n",
	       HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      resources:\n"
		   "        - {uri: \"file:///*\", decision: allow}\n",
	       "mcp", "fs.file:///");
	/* Resource URIs are path globs, as the gateway matches them: "*"
	 * stays in one segment, so "**" widens it (fnmatch would call the
	 * two equal). */
	expect(HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      resources:\n"
		   "        - {uri: \"public/*\", decision: allow}\n",
	       HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      resources:\n"
		   "        - {uri: \"public/**\", decision: allow}\n",
	       "mcp", "fs.public//");
}

static void test_mcp_args(void **state)
{
	(void)state;
	const char *old_ = MCP_FS("        - {name: write, decision: allow, max_calls: 5, args: {"
				  "path: {glob: \"/ws/*\", required: true, inside_workspace: true}, "
				  "mode: {enum: [a, b]}, n: {min: 1, max: 10}, text: {max_length: 100}, "
				  "id: {regex: \"[a-z]+\"}}}\n");
	/* Every facet tightened or kept, written differently: nothing. */
	expect_none(old_,
		    MCP_FS("        - {name: write, decision: allow, max_calls: 3, args: {"
			   "\"$.path\": {glob: \"/ws/a*\", required: true, inside_workspace: true}, "
			   "mode: {enum: [a]}, n: {min: 2, max: 9}, text: {max_length: 10}, "
			   "id: {regex: \"[a-z]+\"}, extra: {required: true}}}\n"),
		    NULL);
	const char *new_ = MCP_FS("        - {name: write, decision: allow, args: {"
				  "path: {glob: \"/*\"}, mode: {enum: [a, c]}, n: {min: 0, max: 11}, "
				  "text: {max_length: 200}, id: {regex: \"[a-z0-9]+\"}}}\n");
	expect(old_, new_, "mcp", "fs.write {}");
	expect(old_, new_, "mcp", "fs.write {\"path\": \"/\"}");
	expect(old_, new_, "mcp", "fs.write {\"path\": \"/etc/x\"}");
	expect(old_, new_, "mcp", "fs.write {\"mode\": \"c\"}");
	expect(old_, new_, "mcp", "fs.write {\"n\": 0}");
	expect(old_, new_, "mcp", "fs.write {\"n\": 11}");
	expect(old_, new_, "mcp", "fs.write {\"text\": \"<101 bytes>\"}");
	expect(old_, new_, "mcp", "fs.write {\"id\": \"0\"}");
	expect(old_, new_, "mcp", "fs.write call 6");
}

static void test_mcp_server_settings(void **state)
{
	(void)state;
	const char *old_ = HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      max_calls: 10\n"
			       "      scan: {secrets: block, injection: redact}\n";
	expect_none(old_,
		    HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n      max_calls: 9\n"
			"      scan: {secrets: block, injection: block}\n      record_arguments: true\n",
		    NULL);
	const char *new_ = HDR "mcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n"
			       "      server_requests: {sampling: true}\n"
			       "      scan: {secrets: redact, injection: off}\n      pins: /tmp/other.json\n";
	expect(old_, new_, "mcp", "fs sampling/createMessage");
	expect(old_, new_, "mcp", "fs tools/call 11");
	expect(old_, new_, "mcp", "fs scan.secrets redact");
	expect(old_, new_, "mcp", "fs scan.injection off");
	expect(old_, new_, "mcp", "fs pins /tmp/other.json");
	expect(old_, HDR "mcp:\n  servers:\n    fs:\n      command: [python3, fs.py]\n      max_calls: 10\n"
			 "      scan: {secrets: block, injection: redact}\n",
	       "mcp", "fs command python3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_network_narrowing),
		cmocka_unit_test(test_fields_once_unknown),
		cmocka_unit_test(test_mcp_mediation),
		cmocka_unit_test(test_network_widening),
		cmocka_unit_test(test_network_union),
		cmocka_unit_test(test_network_first_match),
		cmocka_unit_test(test_allow_private),
		cmocka_unit_test(test_inspection),
		cmocka_unit_test(test_filesystem),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_mcp),
		cmocka_unit_test(test_mcp_args),
		cmocka_unit_test(test_mcp_server_settings),
		cmocka_unit_test(test_network_brute_force),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
