/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Enterprise layers: the developer tries to widen every section; the
 * effective policy is never wider than either layer, and each cut names
 * the developer's rule and the enterprise's (file:line).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <unistd.h>

#include <cmocka.h>

#include "net/netpolicy.h"
#include "policy/internal.h"
#include "mcp/mcp.h"
#include "policy/layer.h"
#include "analysis/diff.h"
#include "util/cleanup.h"

static const struct policy_ctx ctx = { .home = "/home/u", .cwd = "/work/proj" };
static char tmpdir[] = "/tmp/airlock-layer-XXXXXX";
static char entfile[2][300];

static struct policy *dev_load(const char *yaml)
{
	struct error err = { 0 };
	struct policy *p = NULL;
	if (policy_load_buffer("dev.yaml", "/work/proj", yaml, strlen(yaml), &ctx, &p, &err) < 0)
		fail_msg("developer policy: %s", err.msg);
	return p;
}

static const char *ent_write(int i, const char *yaml)
{
	FILE *f = fopen(entfile[i], "w");
	assert_non_null(f);
	fputs(yaml, f);
	fclose(f);
	return entfile[i];
}

/* Apply ents (NULL-terminated YAML texts) to dev; returns the effective
 * policy; rep filled. */
static struct policy *layer(const char *dev, const char *e1, const char *e2, struct policy_layer_report *rep)
{
	struct policy *p = dev_load(dev);
	char *files[2];
	size_t n = 0;
	struct error err = { 0 };
	if (e1)
		files[n++] = (char *)ent_write(0, e1);
	if (e2)
		files[n++] = (char *)ent_write(1, e2);
	if (policy_apply_enterprise(p, files, n, &ctx, rep, &err) < 0)
		fail_msg("layering: %s", err.msg);
	return p;
}

/* Some message mentions both needles. */
static bool layer_str_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool said(const struct policy_layer_report *rep, const char *a, const char *b)
{
	for (size_t i = 0; i < rep->n_msgs; i++)
		if (strstr(rep->msgs[i], a) && (!b || strstr(rep->msgs[i], b)))
			return true;
	return false;
}

static void dump(const struct policy_layer_report *rep)
{
	for (size_t i = 0; i < rep->n_msgs; i++)
		print_message("  msg: %s\n", rep->msgs[i]);
}

/* Whether a request is allowed by a policy, as the proxy decides it. */
static bool allows(const struct policy *p, const char *method, const char *host, uint16_t port, const char *path)
{
	struct net_decision d;
	if (!netpol_decide_host(&p->network, host, port, &d))
		return false;
	return netpol_decide_request(d.ep, method, path, strlen(path), NULL, 0, false, &d);
}

static const char dev_net[] = "version: 1\n"
			      "network:\n"                              /* 2 */
			      "  endpoints:\n"                          /* 3 */
			      "    - host: \"*.github.com\"\n"          /* 4 */
			      "      ports: [443, 8443]\n"              /* 5 */
			      "      tls: intercept\n"                  /* 6 */
			      "      rules:\n"                          /* 7 */
			      "        - methods: [GET, POST, DELETE]\n" /* 8 */
			      "          path: \"/**\"\n"               /* 9 */
			      "    - host: evil.example.com\n"          /* 10 */
			      "    - host: docs.example.org\n"          /* 11 */
			      "      tls: intercept\n"                  /* 12 */
			      "      rules:\n"                          /* 13 */
			      "        - path: \"/a/*/b\"\n";           /* 14 */

static const char ent_net[] = "version: 1\n"
			      "network:\n"                              /* 2 */
			      "  endpoints:\n"                          /* 3 */
			      "    - host: api.github.com\n"            /* 4 */
			      "      ports: [443]\n"                    /* 5 */
			      "      tls: intercept\n"                  /* 6 */
			      "      rules:\n"                          /* 7 */
			      "        - methods: [GET, POST]\n"        /* 8 */
			      "          path: \"/repos/acme/**\"\n"    /* 9 */
			      "    - host: docs.example.org\n"          /* 10 */
			      "      tls: intercept\n"                  /* 11 */
			      "      rules:\n"                          /* 12 */
			      "        - path: \"/a/x/*\"\n";           /* 13 */

/* Hosts, ports, methods, paths: each narrowed; a sample of requests is
 * allowed by the effective policy only when both layers allow it. */
static void test_network_widening(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer(dev_net, ent_net, NULL, &rep);
	_cleanup_policy_ struct policy *dev = dev_load(dev_net);
	struct policy *ent = NULL;
	struct error err = { 0 };
	assert_int_equal(policy_load_file(entfile[0], &ctx, &ent, &err), 0);
	dump(&rep);

	assert_int_equal(p->network.n_endpoints, 1);
	assert_string_equal(p->network.endpoints[0].host, "api.github.com");
	assert_int_equal(p->network.endpoints[0].n_ports, 1);
	assert_int_equal(p->network.endpoints[0].ports[0], 443);
	assert_int_equal(p->network.endpoints[0].n_rules, 1);
	assert_int_equal(p->network.endpoints[0].rules[0].n_methods, 2);
	assert_string_equal(p->network.endpoints[0].rules[0].path, "/repos/acme/**");
	assert_string_equal(p->network.endpoints[0].loc.layer, "enterprise");

	char e4[320];
	snprintf(e4, sizeof(e4), "%s:4", entfile[0]);
	assert_true(said(&rep, "dev.yaml:4:", e4));            /* *.github.com narrowed by api.github.com */
	assert_true(said(&rep, "dev.yaml:10:", "cut"));        /* evil.example.com */
	assert_true(said(&rep, "dev.yaml:10:", entfile[0]));
	char e10[320];
	snprintf(e10, sizeof(e10), "%s:10", entfile[0]);
	assert_true(said(&rep, "dev.yaml:11:", e10));          /* the two path globs cross: not one pattern */
	assert_true(said(&rep, "dev.yaml:11:", "not one pattern"));

	static const char *const hosts[] = { "api.github.com", "x.github.com", "evil.example.com", "docs.example.org" };
	static const uint16_t ports[] = { 443, 8443, 80 };
	static const char *const methods[] = { "GET", "POST", "DELETE" };
	static const char *const paths[] = { "/", "/repos/acme/w", "/repos/other/w", "/a/x/b", "/a/y/b" };
	size_t allowed = 0;
	for (size_t h = 0; h < 4; h++)
		for (size_t o = 0; o < 3; o++)
			for (size_t m = 0; m < 3; m++)
				for (size_t q = 0; q < 5; q++) {
					bool eff = allows(p, methods[m], hosts[h], ports[o], paths[q]);
					bool both = allows(dev, methods[m], hosts[h], ports[o], paths[q]) &&
						    allows(ent, methods[m], hosts[h], ports[o], paths[q]);
					if (eff && !both)
						fail_msg("wider: %s %s:%u%s", methods[m], hosts[h], ports[o], paths[q]);
					allowed += eff;
				}
	/* The neighbour: what both allow still works. */
	assert_true(allows(p, "POST", "api.github.com", 443, "/repos/acme/w"));
	assert_false(allows(p, "DELETE", "api.github.com", 443, "/repos/acme/w"));
	assert_false(allows(p, "GET", "api.github.com", 8443, "/repos/acme/w"));
	assert_false(allows(p, "GET", "api.github.com", 443, "/repos/other/w"));
	assert_false(allows(p, "GET", "evil.example.com", 443, "/"));
	assert_int_equal(allowed, 2);
	policy_free(ent);
	policy_layer_report_free(&rep);
}

/* A developer rule inside the enterprise's survives whole and unsaid. */
static void test_network_within(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: api.github.com\n"
						  "      ports: [443]\n"
						  "      tls: intercept\n"
						  "      rules:\n"
						  "        - methods: [GET]\n"
						  "          path: \"/repos/acme/widget/**\"\n",
						  ent_net, NULL, &rep);
	assert_int_equal(rep.n_msgs, 0);
	assert_int_equal(p->network.n_endpoints, 1);
	assert_string_equal(p->network.endpoints[0].rules[0].path, "/repos/acme/widget/**");
	assert_string_equal(p->network.endpoints[0].loc.layer, "developer");
	policy_layer_report_free(&rep);
}

/* A rule two enterprise rules cover only together is kept whole. */
static void test_network_union(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: api.test\n"
						  "      ports: [80]\n"
						  "      rules:\n"
						  "        - { id: all-x, methods: [GET], path: \"/x/**\" }\n",
						  "version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: api.test\n"
						  "      ports: [80]\n"
						  "      rules:\n"
						  "        - { methods: [GET, HEAD], path: \"/x/*\" }\n"
						  "        - { methods: [GET], path: \"/x/*/**\" }\n",
						  NULL, &rep);
	dump(&rep);
	assert_int_equal(rep.n_msgs, 0);
	assert_int_equal(p->network.endpoints[0].n_rules, 1);
	assert_string_equal(p->network.endpoints[0].rules[0].id, "all-x");
	assert_true(allows(p, "GET", "api.test", 80, "/x/a/b"));
	assert_false(allows(p, "GET", "api.test", 80, "/y"));
	policy_layer_report_free(&rep);
}

/* The first matching endpoint decides: when the enterprise cuts an
 * earlier, more specific endpoint, its host must not fall through to a
 * later wildcard the developer never let decide it. */
static void test_network_no_fall_through(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	const char *dev_text = "version: 1\n"
			       "network:\n"
			       "  endpoints:\n"
			       "    - host: api.x.example\n"      /* 4 */
			       "      tls: intercept\n"
			       "      rules: [{ methods: [GET], path: \"/a/**\" }]\n"
			       "    - host: \"*.x.example\"\n"   /* 7 */
			       "      tls: intercept\n";
	_cleanup_policy_ struct policy *p = layer(dev_text,
						  "version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: \"*.x.example\"\n"
						  "      tls: intercept\n"
						  "      rules: [{ methods: [GET], path: \"/b/**\" }]\n",
						  NULL, &rep);
	dump(&rep);
	_cleanup_policy_ struct policy *dev = dev_load(dev_text);
	assert_false(allows(dev, "GET", "api.x.example", 443, "/b/x"));
	assert_false(allows(p, "GET", "api.x.example", 443, "/b/x"));
	assert_true(said(&rep, "dev.yaml:7:", "fall through"));
	assert_int_equal(p->network.n_endpoints, 0);
	policy_layer_report_free(&rep);
}

/* The enterprise's own first match holds: its specific endpoint decides
 * its host even where a later wildcard of the enterprise allows more. */
static void test_network_enterprise_order(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	struct error err = { 0 };
	struct policy *ent = NULL;
	_cleanup_policy_ struct policy *p = layer("version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: api.x.example\n"
						  "      tls: intercept\n"
						  "      rules: [{ methods: [GET], path: \"/b/**\" }]\n"
						  "    - host: www.x.example\n"
						  "      tls: intercept\n",
						  "version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: api.x.example\n"
						  "      tls: intercept\n"
						  "      rules: [{ methods: [GET], path: \"/a/**\" }]\n"
						  "    - host: \"*.x.example\"\n"
						  "      tls: intercept\n",
						  NULL, &rep);
	dump(&rep);
	assert_int_equal(policy_load_file(entfile[0], &ctx, &ent, &err), 0);
	assert_false(allows(ent, "GET", "api.x.example", 443, "/b/x"));
	assert_false(allows(p, "GET", "api.x.example", 443, "/b/x"));
	assert_true(said(&rep, "dev.yaml:4:", "cut"));
	/* The neighbour: www.x.example, which only the wildcard decides. */
	assert_true(allows(p, "GET", "www.x.example", 443, "/b/x"));
	policy_free(ent);
	policy_layer_report_free(&rep);
}

static const char dev_cred[] = "version: 1\n"
			       "network:\n"
			       "  endpoints:\n"
			       "    - host: api.github.com\n"
			       "      tls: intercept\n"
			       "    - host: uploads.github.com\n"
			       "      tls: intercept\n"
			       "credentials:\n"                /* 8 */
			       "  - name: gh\n"                /* 9 */
			       "    source: env:GH_TOKEN\n"
			       "    inject: always\n"
			       "    bindings:\n"
			       "      - host: api.github.com\n"    /* 13 */
			       "      - host: uploads.github.com\n" /* 14 */
			       "  - name: other\n"
			       "    source: env:X\n"
			       "    inject: always\n"
			       "    bindings:\n"
			       "      - host: api.github.com\n"; /* 19 */

static void test_credentials_widening(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	/* The enterprise binds gh only to api.github.com, on /repos paths;
	 * it has no credential "other". */
	_cleanup_policy_ struct policy *p = layer(dev_cred,
						  "version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: \"*.github.com\"\n"
						  "      tls: intercept\n"
						  "credentials:\n"
						  "  - name: gh\n"           /* 7 */
						  "    source: env:GH_TOKEN\n"
						  "    inject: always\n"
						  "    bindings:\n"
						  "      - host: api.github.com\n"
						  "      - host: uploads.github.com\n"
						  "        paths: [\"/upload/**\"]\n",
						  NULL, &rep);
	dump(&rep);
	assert_int_equal(p->n_credentials, 1);
	assert_string_equal(p->credentials[0].name, "gh");
	assert_int_equal(p->credentials[0].n_bindings, 1);
	assert_string_equal(p->credentials[0].bindings[0].host, "api.github.com");
	assert_true(said(&rep, "dev.yaml:14:", "contains it"));  /* any path is wider than /upload */
	assert_true(said(&rep, "dev.yaml:19:", "no credential of that name"));
	policy_layer_report_free(&rep);

	/* No credentials section in the enterprise file: a binding survives
	 * only where the narrowed network still goes. */
	_cleanup_policy_ struct policy *q = layer(dev_cred,
						  "version: 1\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: api.github.com\n"
						  "      tls: intercept\n",
						  NULL, &rep);
	dump(&rep);
	assert_int_equal(q->n_credentials, 2);
	assert_int_equal(q->credentials[0].n_bindings, 1);
	assert_string_equal(q->credentials[0].bindings[0].host, "api.github.com");
	assert_true(said(&rep, "dev.yaml:14:", "no longer"));
	policy_layer_report_free(&rep);
}

static void test_filesystem_widening(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\n"
						  "filesystem:\n"
						  "  read: [/srv, /etc/ssl]\n"   /* 3 */
						  "  write:\n"
						  "    - /\n"                   /* 5 */
						  "    - /var/tmp\n"            /* 6 */
						  "    - /data/proj/out\n"      /* 7 */
						  "  protect_defaults: false\n" /* 8 */
						  "process:\n"
						  "  env:\n"
						  "    pass: [TERM, AWS_SECRET_ACCESS_KEY]\n", /* 11 */
						  "version: 1\n"
						  "filesystem:\n"
						  "  read: [/etc]\n"             /* 3 */
						  "  write: [/data/proj, /data/cache]\n" /* 4 */
						  "  deny: [/data/proj/secrets]\n"
						  "  protect: [\"**/Makefile\"]\n"
						  "  protect_defaults: true\n"   /* 7 */
						  "process:\n"
						  "  exec: [/usr]\n"             /* 9 */
						  "  env:\n"
						  "    pass: [TERM, LANG]\n",    /* 11 */
						  NULL, &rep);
	dump(&rep);
	/* read: /srv cut, /etc/ssl kept (under /etc). */
	assert_int_equal(p->filesystem.read.n, 1);
	assert_string_equal(p->filesystem.read.v[0].path, "/etc/ssl");
	assert_true(said(&rep, "dev.yaml:3:", "\"/srv\" cut"));
	/* write: / narrowed to the two enterprise dirs, /var/tmp cut,
	 * /data/proj/out kept. */
	assert_int_equal(p->filesystem.write.n, 3);
	assert_string_equal(p->filesystem.write.v[0].path, "/data/proj");
	assert_string_equal(p->filesystem.write.v[0].loc.layer, "enterprise");
	assert_string_equal(p->filesystem.write.v[1].path, "/data/cache");
	assert_string_equal(p->filesystem.write.v[2].path, "/data/proj/out");
	assert_true(said(&rep, "dev.yaml:5:", "narrowed"));
	assert_true(said(&rep, "dev.yaml:6:", "\"/var/tmp\" cut"));
	/* deny and protect added; protect_defaults back on. */
	assert_int_equal(p->filesystem.deny.n, 1);
	assert_string_equal(p->filesystem.deny.v[0].path, "/data/proj/secrets");
	assert_int_equal(p->filesystem.protect.n, 1);
	assert_true(p->filesystem.protect_defaults);
	assert_true(said(&rep, "dev.yaml:8:", "protect_defaults"));
	/* exec: the implicit grant (baseline dirs, workspace) narrowed to /usr. */
	assert_true(p->process.exec_set);
	assert_int_equal(p->process.exec.n, 1);
	assert_string_equal(p->process.exec.v[0].path, "/usr");
	for (size_t i = 0; i < p->process.exec.n; i++)
		assert_string_not_equal(p->process.exec.v[i].path, "/work/proj");
	/* env pass: the secret's name cut, TERM kept. */
	assert_int_equal(p->process.n_env_pass, 1);
	assert_string_equal(p->process.env_pass[0], "TERM");
	assert_true(said(&rep, "dev.yaml:11:", "AWS_SECRET_ACCESS_KEY"));
	/* The workspace (/work/proj) is outside the enterprise's write
	 * entries: it cannot be narrowed, so the run is refused even though
	 * this file says nothing of on_excess. */
	assert_true(said(&rep, "sandbox.workspace", "refused"));
	assert_true(rep.refuse);
	policy_layer_report_free(&rep);

	/* The neighbour: a workspace beneath an enterprise write entry. */
	_cleanup_policy_ struct policy *q = layer("version: 1\n", "version: 1\nfilesystem:\n  write: [/work]\n", NULL, &rep);
	assert_false(rep.refuse);
	assert_int_equal(rep.n_msgs, 0);
	policy_layer_report_free(&rep);
}

/* A credential the enterprise locks in, whose secret file the developer's
 * write paths would show to the agent, is cut. */
static void test_locked_secret_meets_developer_paths(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	const char *ent = "version: 1\n"
			  "enterprise:\n"
			  "  lock: [credentials]\n"
			  "network:\n"
			  "  endpoints:\n"
			  "    - { host: api.corp.example, tls: intercept }\n"
			  "credentials:\n"
			  "  - name: corp\n"
			  "    source: file:/srv/secrets/corp-token\n"
			  "    inject: always\n"
			  "    bindings: [{ host: api.corp.example }]\n";
#define DEV_SECRET(read) "version: 1\nfilesystem:\n  read: [" read "]\nnetwork:\n  endpoints:\n" \
			 "    - { host: api.corp.example, tls: intercept }\n"
	const char *text = DEV_SECRET("/srv");
	_cleanup_policy_ struct policy *p = layer(text, ent, NULL, &rep);
	dump(&rep);
	assert_int_equal(p->n_credentials, 0);
	assert_true(said(&rep, "credentials corp cut", "visible"));
	policy_layer_report_free(&rep);
	text = DEV_SECRET("/srv/public");
	_cleanup_policy_ struct policy *q = layer(text, ent, NULL, &rep);
	assert_int_equal(q->n_credentials, 1);
	assert_string_equal(q->credentials[0].name, "corp");
	assert_string_equal(q->credentials[0].loc.layer, "enterprise");
	policy_layer_report_free(&rep);
}

static void test_sandbox_widening(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\n"
						  "sandbox:\n"
						  "  boundary: process\n"   /* 3 */
						  "  mode: observe\n"       /* 4 */
						  "  limits:\n"
						  "    pids: 100000\n"      /* 6 */
						  "    memory: unlimited\n" /* 7 */
						  "    open_files: 64\n"    /* 8 */
						  "audit:\n"
						  "  enabled: false\n",     /* 10 */
						  "version: 1\n"
						  "enterprise:\n"
						  "  on_excess: refuse\n"   /* 3 */
						  "  forbid_observe: true\n" /* 4 */
						  "  require:\n"
						  "    boundary: gvisor\n"  /* 6 */
						  "    audit: true\n"       /* 7 */
						  "sandbox:\n"
						  "  limits:\n"
						  "    pids: 512\n"
						  "    memory: 1GiB\n"
						  "    open_files: 4096\n",
						  NULL, &rep);
	dump(&rep);
	assert_int_equal(p->sandbox.boundary, POLICY_BOUNDARY_GVISOR);
	assert_true(said(&rep, "dev.yaml:3:", "gvisor"));
	assert_int_equal(p->sandbox.mode, POLICY_MODE_ENFORCE);
	assert_true(said(&rep, "dev.yaml:4:", "observe"));
	assert_int_equal(p->sandbox.limits.pids, 512);
	assert_int_equal(p->sandbox.limits.memory_bytes, UINT64_C(1) << 30);
	assert_int_equal(p->sandbox.limits.open_files, 64); /* already narrower: kept */
	assert_true(said(&rep, "dev.yaml:6:", "pids"));
	assert_true(said(&rep, "dev.yaml:7:", "memory"));
	assert_false(said(&rep, "dev.yaml:8:", NULL));
	assert_true(p->audit.enabled);
	assert_true(rep.require_audit);
	assert_true(said(&rep, "dev.yaml:10:", "audit"));
	assert_true(rep.refuse);
	assert_non_null(strstr(rep.refuse_by, ":3"));
	policy_layer_report_free(&rep);
}

/* The decision log's budget is a ceiling: the smaller wins, and a
 * developer value above it is cut and said. */
static void test_audit_max_size_ceiling(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\naudit:\n  max_size: 4GiB\n", /* 3 */
						  "version: 1\naudit:\n  max_size: 16MiB\n", NULL, &rep);
	dump(&rep);
	assert_int_equal(p->audit.max_size, UINT64_C(16) << 20);
	assert_true(said(&rep, "dev.yaml:3:", "max_size"));
	policy_layer_report_free(&rep);
	/* Unset by the developer: the default (1 GiB) is narrowed too. */
	_cleanup_policy_ struct policy *q = layer("version: 1\n", "version: 1\naudit: {max_size: 16MiB}\n", NULL, &rep);
	assert_int_equal(q->audit.max_size, UINT64_C(16) << 20);
	policy_layer_report_free(&rep);
	/* Already narrower: kept. */
	_cleanup_policy_ struct policy *r = layer("version: 1\naudit: {max_size: 2MiB}\n",
						  "version: 1\naudit: {max_size: 16MiB}\n", NULL, &rep);
	assert_int_equal(r->audit.max_size, UINT64_C(2) << 20);
	assert_false(said(&rep, "dev.yaml:", "max_size"));
	policy_layer_report_free(&rep);
}

/* Locked fields: the developer's value is replaced (and said), and the
 * locked value is still narrowed by the other enterprise files. */
static void test_locks(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\n"
						  "filesystem:\n"
						  "  write: [/data/mine]\n" /* 3 */
						  "network:\n"              /* 4 */
						  "  endpoints:\n"
						  "    - host: evil.example.com\n",
						  "version: 1\n"
						  "enterprise:\n"
						  "  lock: [network, filesystem.write]\n" /* 3 */
						  "filesystem:\n"
						  "  write: [/data/shared, /data/more]\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: \"*.corp.example\"\n",
						  "version: 1\n"
						  "filesystem:\n"
						  "  write: [/data/shared]\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: git.corp.example\n",
						  &rep);
	dump(&rep);
	assert_int_equal(p->network.n_endpoints, 1);
	assert_string_equal(p->network.endpoints[0].host, "git.corp.example");
	assert_int_equal(p->filesystem.write.n, 1);
	assert_string_equal(p->filesystem.write.v[0].path, "/data/shared");
	char e3[320];
	snprintf(e3, sizeof(e3), "%s:3", entfile[0]);
	assert_true(said(&rep, "dev.yaml:3:", e3));
	assert_true(said(&rep, "dev.yaml:4:", "locked"));
	policy_layer_report_free(&rep);
}

/* Every lockable field at once: each member that holds it, its origin
 * included, is the enterprise's afterwards (one table says which). */
static void test_lock_every_field(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\n"
						  "sandbox:\n"
						  "  mode: observe\n"
						  "  limits: {memory: 1G, pids: 7, open_files: 9, cpu: 11, wall: 13}\n"
						  "filesystem:\n"
						  "  baseline: false\n"
						  "  read: [/srv/r]\n"
						  "  write: [/srv/w]\n"
						  "  deny: [/srv/d]\n"
						  "  protect: [\"x/**\"]\n"
						  "  protect_defaults: false\n"
						  "process:\n"
						  "  exec: [/srv/x]\n"
						  "  env: {pass: [DEV_VAR], set: {DEV_SET: a}}\n"
						  "network:\n"
						  "  endpoints:\n"
						  "    - host: dev.example.com\n"
						  "identity: {agent: dev-agent, header: false}\n"
						  "audit: {max_size: 5M}\n",
						  "version: 1\n"
						  "enterprise:\n"
						  "  lock: [sandbox.boundary, sandbox.mode, sandbox.limits, filesystem.baseline,\n"
						  "         filesystem.read, filesystem.write, filesystem.deny, filesystem.protect,\n"
						  "         filesystem.sockets, process.exec, process.env, network, credentials,\n"
						  "         identity, audit]\n",
						  NULL, &rep);
	struct policy *d = dev_load("version: 1\n");
	assert_int_equal(p->sandbox.mode, d->sandbox.mode);
	assert_int_equal(p->sandbox.limits.memory_bytes, d->sandbox.limits.memory_bytes);
	assert_int_equal(p->sandbox.limits.pids, d->sandbox.limits.pids);
	assert_int_equal(p->sandbox.limits.wall_seconds, d->sandbox.limits.wall_seconds);
	assert_int_equal(p->origin.memory.line, 0);
	assert_int_equal(p->origin.wall.line, 0);
	assert_int_equal(p->filesystem.baseline, d->filesystem.baseline);
	assert_int_equal(p->origin.baseline.line, 0);
	assert_int_equal(p->filesystem.read.n, d->filesystem.read.n);
	assert_int_equal(p->filesystem.write.n, d->filesystem.write.n);
	assert_int_equal(p->filesystem.deny.n, d->filesystem.deny.n);
	assert_int_equal(p->filesystem.protect.n, d->filesystem.protect.n);
	assert_int_equal(p->filesystem.protect_defaults, d->filesystem.protect_defaults);
	assert_int_equal(p->origin.protect_defaults.line, 0);
	assert_int_equal(p->process.exec_set, d->process.exec_set);
	assert_int_equal(p->origin.exec.line, 0);
	assert_int_equal(p->process.n_env_pass, d->process.n_env_pass);
	assert_int_equal(p->process.n_env_set, d->process.n_env_set);
	assert_int_equal(p->origin.env_pass.line, 0);
	assert_int_equal(p->network.n_endpoints, 0);
	assert_int_equal(p->identity.header, d->identity.header);
	assert_int_equal(p->origin.identity_header.line, 0);
	assert_true(layer_str_same(p->identity.agent, d->identity.agent));
	assert_int_equal(p->audit.max_size, d->audit.max_size);
	assert_int_equal(p->origin.audit_max_size.line, 0);
	assert_true(said(&rep, "dev.yaml:3:", "sandbox.mode is locked"));
	assert_true(said(&rep, "dev.yaml:4:", "sandbox.limits is locked"));
	policy_free(d);
	policy_layer_report_free(&rep);
}

/* An unlocked section the enterprise does not write narrows nothing. */
static void test_unwritten_sections(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer(dev_net, "version: 1\nfilesystem:\n  deny: [/srv]\n", NULL, &rep);
	assert_int_equal(rep.n_msgs, 0);
	assert_int_equal(p->network.n_endpoints, 3);
	assert_int_equal(p->filesystem.deny.n, 1);
	policy_layer_report_free(&rep);
	/* A limit the enterprise does not write is not narrowed by its
	 * default (pids 4096). */
	_cleanup_policy_ struct policy *q = layer("version: 1\nsandbox:\n  limits: { pids: 100000 }\n",
						  "version: 1\nsandbox:\n  limits: { memory: 1GiB }\n", NULL, &rep);
	assert_int_equal(rep.n_msgs, 0);
	assert_int_equal(q->sandbox.limits.pids, 100000);
	assert_int_equal(q->sandbox.limits.memory_bytes, UINT64_C(1) << 30);
	policy_layer_report_free(&rep);
	/* A write ceiling does not narrow reads. */
	_cleanup_policy_ struct policy *r = layer("version: 1\nfilesystem:\n  read: [/srv]\n",
						  "version: 1\nfilesystem:\n  write: [/work]\n", NULL, &rep);
	assert_int_equal(rep.n_msgs, 0);
	assert_int_equal(r->filesystem.read.n, 1);
	policy_layer_report_free(&rep);
}

/* "~" and $WORKSPACE in an enterprise file are the account's home and the
 * developer's workspace, not $HOME or the directory the run starts in. */
static void test_enterprise_paths(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer("version: 1\nsandbox:\n  workspace: /work/proj/sub\n",
						  "version: 1\nfilesystem:\n  deny: [$WORKSPACE/.env, ~/.aws]\n", NULL,
						  &rep);
	struct passwd *pw = getpwuid(getuid());
	char aws[4200];
	assert_non_null(pw);
	snprintf(aws, sizeof(aws), "%s/.aws", strcmp(pw->pw_dir, "/") ? pw->pw_dir : "");
	assert_int_equal(p->filesystem.deny.n, 2);
	assert_string_equal(p->filesystem.deny.v[0].path, "/work/proj/sub/.env");
	assert_string_equal(p->filesystem.deny.v[1].path, aws);
	assert_string_not_equal(p->filesystem.deny.v[1].path, "/home/u/.aws"); /* ctx.home, the developer's */
	policy_layer_report_free(&rep);
}

static void test_bad_enterprise(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	struct error err = { 0 };
	_cleanup_policy_ struct policy *p = dev_load("version: 1\n");
	char *files[1] = { (char *)ent_write(0, "version: 1\nenterprise:\n  lock: [network.endpoints]\n") };
	assert_int_equal(policy_apply_enterprise(p, files, 1, &ctx, &rep, &err), -EINVAL);
	assert_non_null(strstr(err.msg, ":3:"));
	assert_non_null(strstr(err.msg, "enterprise.lock[0]"));
	policy_layer_report_free(&rep);
	ent_write(0, "version: 1\nenterprise:\n  on_excess: maybe\n");
	assert_int_equal(policy_apply_enterprise(p, files, 1, &ctx, &rep, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "enterprise.on_excess"));
	policy_layer_report_free(&rep);
	ent_write(0, "version: 1\nnetwork:\n  endpoints: nope\n");
	assert_int_equal(policy_apply_enterprise(p, files, 1, &ctx, &rep, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "network.endpoints"));
	policy_layer_report_free(&rep);
}

static void test_glob_subset(void **state)
{
	(void)state;
	assert_true(policy_glob_subset("/repos/acme/x", "/repos/**"));
	assert_true(policy_glob_subset("/repos/*/x", "/repos/**"));
	assert_true(policy_glob_subset("/a", "/a"));
	assert_true(policy_glob_subset("/a", NULL));
	assert_false(policy_glob_subset(NULL, "/a/**"));
	assert_false(policy_glob_subset("/repos", "/repos/**"));
	assert_false(policy_glob_subset("/reposx/a", "/repos/**"));
	assert_false(policy_glob_subset("/a/*", "/a/x"));
	/* A union covers what neither pattern covers alone. */
	const char *const two[] = { "/x/*", "/x/*/**" };
	assert_true(policy_glob_subset_any("/x/**", two, 2));
	assert_false(policy_glob_subset("/x/**", two[0]));
	assert_false(policy_glob_subset("/x/**", two[1]));
	assert_false(policy_glob_subset_any("/y/**", two, 2));
	/* Ref globs of git bindings have no leading '/'. */
	assert_true(policy_glob_subset("refs/heads/agent/*", "refs/heads/**"));
	assert_false(policy_glob_subset("refs/tags/*", "refs/heads/**"));
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(entfile[0], sizeof(entfile[0]), "%s/ent1.yaml", tmpdir);
	snprintf(entfile[1], sizeof(entfile[1]), "%s/ent2.yaml", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(entfile[0]);
	unlink(entfile[1]);
	rmdir(tmpdir);
	return 0;
}

/* ---- mcp ---- */

/* The MCP engine's decision (src/mcp/engine.c) on one call under p. */
static enum policy_mcp_decision tool_decision(const struct policy *p, const char *server, const char *tool,
					      const char *args_json)
{
	struct mcp_engine e;
	struct error err = { 0 };
	struct imp_node *args = NULL;
	struct mcp_verdict v = { 0 };
	const struct policy_mcp_server *srv = p->mcp ? policy_mcp_server(p->mcp, server) : NULL;
	if (args_json && imp_json_parse("args", args_json, strlen(args_json), &args, &err) < 0)
		fail_msg("%s", err.msg);
	if (mcp_engine_init(&e, srv, server, "/tmp", NULL, &err) < 0)
		fail_msg("%s", err.msg);
	bool ok = mcp_tool_call_allowed(&e, tool, args, &v);
	mcp_engine_fini(&e);
	imp_node_free(args);
	return ok ? v.decision : POLICY_MCP_DENY;
}

static void test_mcp_ceiling(void **state)
{
	(void)state;
	struct policy_layer_report rep = { 0 };
	const char *dev = "version: 1\nmcp:\n  servers:\n    fs:\n      command: [node, fs.js]\n"
			  "      max_calls: 100\n      server_requests: {sampling: true, roots: true}\n"
			  "      scan: {secrets: redact, injection: off}\n      tools:\n"
			  "        - {name: \"read_*\", decision: allow, args: {path: {max_length: 8}}}\n"
			  "        - {name: \"*\", decision: allow}\n"
			  "    extra:\n      command: [x]\n      tools:\n        - {name: \"*\", decision: allow}\n";
	const char *ent = "version: 1\nmcp:\n  servers:\n    fs:\n      max_calls: 10\n"
			  "      server_requests: {roots: true}\n"
			  "      scan: {secrets: block, injection: redact}\n      tools:\n"
			  "        - {name: \"read_secret*\", decision: deny}\n"
			  "        - {name: \"read_*\", decision: allow, args: {path: {glob: \"/ws/*\"}}}\n"
			  "        - {name: \"write_*\", decision: step_up}\n";
	/* Without the ceiling the developer's policy allows all of it. */
	struct policy *d = dev_load(dev);
	assert_int_equal(tool_decision(d, "fs", "read_secret_key", "{\"path\": \"/ws/a\"}"), POLICY_MCP_ALLOW);
	assert_int_equal(tool_decision(d, "fs", "delete", NULL), POLICY_MCP_ALLOW);
	assert_int_equal(tool_decision(d, "extra", "x", NULL), POLICY_MCP_ALLOW);
	policy_free(d);

	struct policy *p = layer(dev, ent, NULL, &rep);
	/* Allowed under both, with both rules' constraints. */
	assert_int_equal(tool_decision(p, "fs", "read_file", "{\"path\": \"/ws/a\"}"), POLICY_MCP_ALLOW);
	assert_int_equal(tool_decision(p, "fs", "read_file", "{\"path\": \"/etc/x\"}"), POLICY_MCP_DENY);
	assert_int_equal(tool_decision(p, "fs", "read_file", "{\"path\": \"/ws/abcdefgh\"}"), POLICY_MCP_DENY);
	/* Denied or stepped up by the enterprise, denied where it lists nothing. */
	assert_int_equal(tool_decision(p, "fs", "read_secret_key", "{\"path\": \"/ws/a\"}"), POLICY_MCP_DENY);
	assert_int_equal(tool_decision(p, "fs", "write_file", NULL), POLICY_MCP_STEP_UP);
	assert_int_equal(tool_decision(p, "fs", "delete", NULL), POLICY_MCP_DENY);
	/* A server the enterprise does not list is gone. */
	assert_null(policy_mcp_server(p->mcp, "extra"));
	assert_int_equal(tool_decision(p, "extra", "x", NULL), POLICY_MCP_DENY);
	const struct policy_mcp_server *s = policy_mcp_server(p->mcp, "fs");
	assert_non_null(s);
	assert_int_equal(s->max_calls, 10);
	assert_false(s->sampling);
	assert_true(s->roots);
	assert_int_equal(s->scan_secrets, POLICY_MCP_SCAN_BLOCK);
	assert_int_equal(s->scan_injection, POLICY_MCP_SCAN_REDACT);
	if (!said(&rep, "dev.yaml:12: mcp.servers.extra cut", "enterprise rule") ||
	    !said(&rep, "mcp.servers.fs.tools[0] (\"read_*\") split", NULL) ||
	    !said(&rep, "mcp.servers.fs.tools[1] (\"*\") split", NULL) ||
	    !said(&rep, "server_requests.sampling cut", NULL) || said(&rep, "server_requests.roots", NULL)) {
		dump(&rep);
		fail_msg("cuts not reported");
	}
	policy_free(p);
	policy_layer_report_free(&rep);

	/* One enterprise rule deciding all of a developer rule: narrowed in
	 * place; names decided by rules outside the developer's pattern:
	 * cut to deny, and said. */
	p = layer("version: 1\nmcp:\n  servers:\n    fs:\n      command: [n]\n      tools:\n"
		  "        - {name: \"run\", decision: allow}\n        - {name: \"a*\", decision: allow}\n",
		  "version: 1\nmcp:\n  servers:\n    fs:\n      tools:\n"
		  "        - {name: \"r*\", decision: step_up}\n        - {name: \"*b\", decision: allow}\n",
		  NULL, &rep);
	assert_int_equal(tool_decision(p, "fs", "run", NULL), POLICY_MCP_STEP_UP);
	assert_int_equal(tool_decision(p, "fs", "ab", NULL), POLICY_MCP_DENY);
	if (!said(&rep, "tools[0] (\"run\"): allow narrowed to step_up", NULL) ||
	    !said(&rep, "tools[1] (\"a*\") cut to deny", NULL)) {
		dump(&rep);
		fail_msg("cuts not reported");
	}
	policy_free(p);
	policy_layer_report_free(&rep);

	/* An enterprise file without an mcp section leaves it alone. */
	p = layer(dev, "version: 1\n", NULL, &rep);
	assert_int_equal(tool_decision(p, "extra", "x", NULL), POLICY_MCP_ALLOW);
	assert_int_equal(tool_decision(p, "fs", "delete", NULL), POLICY_MCP_ALLOW);
	policy_free(p);
	policy_layer_report_free(&rep);
}

/* Fields layering once let through whole (schema.c now names a rule for
 * each): a host socket beneath an enterprise deny, a pin of an allowed
 * name, an extra upstream CA, direct writes under a review ceiling, the
 * host ids, variables set, another secret under the enterprise's
 * credential name, the identity header, an MCP server's command, pins and
 * policy. The layered policy is then checked with the prover: whatever it
 * holds beyond the developer's policy is the enterprise's own word (not
 * wider than the enterprise's policy as well). */
static const char dev_fields[] =
	"version: 1\n"
	"sandbox: {workspace_mode: direct, host_uid: 4242}\n"
	"filesystem:\n"
	"  sockets: [/run/docker.sock, /srv/sock/agent.sock]\n"
	"process:\n"
	"  env:\n"
	"    set: {LF_DEV: dev, LF_BOTH: same}\n"
	"    pass: [TERM, LF_ENT]\n"
	"network:\n"
	"  resolve: {api.example.com: 203.0.113.7, other.example.com: 203.0.113.8}\n"
	"  upstream_ca: /etc/ssl/dev-ca.pem\n"
	"  endpoints:\n"
	"    - {host: api.example.com, ports: [443], tls: intercept}\n"
	"credentials:\n"
	"  - {name: gh, source: \"env:LF_OTHER\", env: GH_TOKEN, bindings: [{host: api.example.com}]}\n"
	"mcp:\n"
	"  servers:\n"
	"    fs: {command: [/usr/bin/dev-fs], tools: [{name: \"*\", decision: allow}]}\n"
	"    srv: {command: [/usr/bin/srv], pins: /tmp/dev-pins.json, policy: /tmp/dev-srv.yaml,\n"
	"          tools: [{name: \"*\", decision: allow}]}\n";

static const char ent_fields[] =
	"version: 1\n"
	"sandbox: {workspace_mode: review, host_uid: 5151}\n"
	"filesystem:\n"
	"  deny: [/run]\n"
	"process:\n"
	"  env:\n"
	"    set: {LF_BOTH: same, LF_ENT: ent}\n"
	"network:\n"
	"  resolve: {api.example.com: 192.0.2.1}\n"
	"  endpoints:\n"
	"    - {host: api.example.com, ports: [443], tls: intercept}\n"
	"credentials:\n"
	"  - {name: gh, source: \"env:LF_TOKEN\", env: GH_TOKEN, bindings: [{host: api.example.com}]}\n"
	"identity: {header: true}\n"
	"mcp:\n"
	"  servers:\n"
	"    fs: {command: [/usr/bin/corp-fs], tools: [{name: \"*\", decision: allow}]}\n"
	"    srv: {command: [/usr/bin/srv], tools: [{name: \"*\", decision: allow}]}\n";

/* The workspace modes in the order hold < direct < review: an
 * enterprise's mode cuts a developer's below it, never one above. */
static void test_workspace_mode_ceiling(void **state)
{
	(void)state;
	static const struct {
		const char *dev, *ent;
		enum policy_workspace_mode want;
		const char *cut;
	} cases[] = {
		{ "hold", "direct", POLICY_WS_DIRECT, "sandbox.workspace_mode: hold cut to direct" },
		{ "hold", "review", POLICY_WS_REVIEW, "sandbox.workspace_mode: hold cut to review" },
		{ "direct", "review", POLICY_WS_REVIEW, "sandbox.workspace_mode: direct cut to review" },
		{ "direct", "hold", POLICY_WS_DIRECT, NULL },
		{ "review", "hold", POLICY_WS_REVIEW, NULL },
		{ "review", "direct", POLICY_WS_REVIEW, NULL },
		{ "hold", "hold", POLICY_WS_HOLD, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dev[128], ent[128];
		snprintf(dev, sizeof(dev), "version: 1\nsandbox: {workspace_mode: %s}\n", cases[i].dev);
		snprintf(ent, sizeof(ent), "version: 1\nsandbox: {workspace_mode: %s}\n", cases[i].ent);
		struct policy_layer_report rep;
		_cleanup_policy_ struct policy *p = layer(dev, ent, NULL, &rep);
		dump(&rep);
		if (p->sandbox.workspace_mode != cases[i].want)
			fail_msg("%s under %s: %s", cases[i].dev, cases[i].ent,
				 policy_workspace_mode_name(p->sandbox.workspace_mode));
		if (cases[i].cut)
			assert_true(said(&rep, cases[i].cut, NULL));
		else
			assert_int_equal(rep.n_msgs, 0);
		policy_layer_report_free(&rep);
	}
}

static void test_fields_once_unknown(void **state)
{
	(void)state;
	struct policy_layer_report rep;
	_cleanup_policy_ struct policy *p = layer(dev_fields, ent_fields, NULL, &rep);
	dump(&rep);

	assert_int_equal(p->filesystem.sockets.n, 1);
	assert_string_equal(p->filesystem.sockets.v[0].path, "/srv/sock/agent.sock");
	assert_true(said(&rep, "filesystem.sockets \"/run/docker.sock\" cut", "/run"));
	assert_int_equal(p->network.n_resolve, 1);
	assert_string_equal(p->network.resolve[0].host, "api.example.com");
	assert_string_equal(p->network.resolve[0].addr, "192.0.2.1");
	assert_true(said(&rep, "network.resolve \"api.example.com\" -> 203.0.113.7 cut", "192.0.2.1"));
	assert_true(said(&rep, "network.resolve \"other.example.com\"", "does not pin"));
	assert_null(p->network.upstream_ca);
	assert_int_equal(p->sandbox.workspace_mode, POLICY_WS_REVIEW);
	assert_int_equal(p->sandbox.host_uid, 5151);
	assert_int_equal(p->process.n_env_set, 2);
	for (size_t i = 0; i < p->process.n_env_set; i++)
		assert_true(!strcmp(p->process.env_set[i].name, "LF_BOTH") || !strcmp(p->process.env_set[i].name, "LF_ENT"));
	for (size_t i = 0; i < p->process.n_env_pass; i++)
		assert_string_not_equal(p->process.env_pass[i], "LF_ENT");
	assert_int_equal(p->n_credentials, 0);
	assert_true(said(&rep, "credentials gh cut: its source", NULL));
	assert_true(p->identity.header);
	assert_int_equal(p->mcp->n_servers, 1);
	assert_string_equal(p->mcp->servers[0].name, "srv");
	assert_null(p->mcp->servers[0].pins);
	assert_null(p->mcp->servers[0].policy);

	/* The prover: nothing the layered policy allows beyond the
	 * developer's is also beyond the enterprise's. */
	_cleanup_policy_ struct policy *dev = dev_load(dev_fields);
	struct policy *ent = NULL;
	struct error err = { 0 };
	assert_int_equal(policy_load_file(entfile[0], &ctx, &ent, &err), 0);
	struct policy_diff over_dev = { 0 }, over_ent = { 0 };
	assert_int_equal(policy_diff(dev, p, &over_dev, &err), 0);
	assert_int_equal(policy_diff(ent, p, &over_ent, &err), 0);
	for (size_t i = 0; i < over_dev.n; i++)
		for (size_t j = 0; j < over_ent.n; j++)
			if (!strcmp(over_dev.v[i].section, over_ent.v[j].section) &&
			    !strcmp(over_dev.v[i].witness, over_ent.v[j].witness))
				fail_msg("wider than both layers: %s / %s", over_dev.v[i].text, over_ent.v[j].text);
	policy_diff_free(&over_dev);
	policy_diff_free(&over_ent);
	policy_free(ent);
	policy_layer_report_free(&rep);

	/* The neighbour: an enterprise that writes the developer's own values
	 * cuts nothing and keeps them. */
	static const char same[] = "version: 1\n"
				   "filesystem:\n"
				   "  sockets: [/run/docker.sock, /srv/sock/agent.sock]\n"
				   "  deny: [/srv/other]\n"
				   "network:\n"
				   "  resolve: {api.example.com: 203.0.113.7, other.example.com: 203.0.113.8}\n"
				   "  upstream_ca: /etc/ssl/dev-ca.pem\n"
				   "  endpoints:\n"
				   "    - {host: api.example.com, ports: [443], tls: intercept}\n"
				   "sandbox: {host_uid: 4242}\n";
	_cleanup_policy_ struct policy *q = layer(dev_fields, same, NULL, &rep);
	dump(&rep);
	assert_int_equal(rep.n_msgs, 0);
	assert_int_equal(q->filesystem.sockets.n, 2);
	assert_int_equal(q->network.n_resolve, 2);
	assert_non_null(q->network.upstream_ca);
	assert_int_equal(q->sandbox.workspace_mode, POLICY_WS_DIRECT);
	assert_string_equal(q->filesystem.sockets.v[0].loc.layer, "developer");
	policy_layer_report_free(&rep);

	/* A locked list: the enterprise's sockets, whose provenance names a
	 * file the layered policy owns (the enterprise policy is freed). */
	static const char lock[] = "version: 1\n"
				   "enterprise: {lock: [filesystem.sockets]}\n"
				   "filesystem:\n"
				   "  sockets: [/srv/sock/agent.sock]\n";
	_cleanup_policy_ struct policy *l = layer(dev_fields, lock, NULL, &rep);
	assert_true(said(&rep, "filesystem.sockets is locked", NULL));
	assert_int_equal(l->filesystem.sockets.n, 1);
	assert_string_equal(l->filesystem.sockets.v[0].path, "/srv/sock/agent.sock");
	assert_string_equal(l->filesystem.sockets.v[0].loc.layer, "enterprise");
	assert_ptr_equal(l->filesystem.sockets.v[0].loc.file, l->layer_files[0]);
	policy_layer_report_free(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_network_widening),
		cmocka_unit_test(test_network_within),
		cmocka_unit_test(test_network_union),
		cmocka_unit_test(test_network_no_fall_through),
		cmocka_unit_test(test_network_enterprise_order),
		cmocka_unit_test(test_credentials_widening),
		cmocka_unit_test(test_filesystem_widening),
		cmocka_unit_test(test_sandbox_widening),
		cmocka_unit_test(test_audit_max_size_ceiling),
		cmocka_unit_test(test_locked_secret_meets_developer_paths),
		cmocka_unit_test(test_locks),
		cmocka_unit_test(test_lock_every_field),
		cmocka_unit_test(test_unwritten_sections),
		cmocka_unit_test(test_enterprise_paths),
		cmocka_unit_test(test_bad_enterprise),
		cmocka_unit_test(test_glob_subset),
		cmocka_unit_test(test_mcp_ceiling),
		cmocka_unit_test(test_fields_once_unknown),
		cmocka_unit_test(test_workspace_mode_ceiling),
	};
	return cmocka_run_group_tests_name("layer", tests, setup, teardown);
}
