/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the policy module: every rule of schema version 1, valid
 * and invalid, with the exact "file:line:col: field: ..." message; the
 * defaults; and print -> parse round trips.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/internal.h"
#include "policy/policy.h"
#include "util/cleanup.h"

static const struct policy_ctx ctx = { .home = "/home/u", .cwd = "/work/proj" };

#define DIR "/etc/airlock"

static int load_ctx(const char *yaml, size_t len, const struct policy_ctx *c, struct policy **p,
		    struct error *err)
{
	return policy_load_buffer("policy.yaml", DIR, yaml, len, c, p, err);
}

/* Parse yaml that must be valid; the caller frees the result. */
static struct policy *load_ok(const char *yaml)
{
	struct error err = { 0 };
	struct policy *p = NULL;

	if (load_ctx(yaml, strlen(yaml), &ctx, &p, &err) < 0)
		fail_msg("unexpected error: %s", err.msg);
	assert_non_null(p);
	return p;
}

static void check_bad_len(const char *yaml, size_t len, const struct policy_ctx *c,
			  const char *expected)
{
	struct error err = { 0 };
	static struct policy sentinel;
	struct policy *p = &sentinel; /* must be reset to NULL */
	int r = load_ctx(yaml, len, c, &p, &err);

	if (r >= 0) {
		policy_free(p);
		fail_msg("accepted, expected: %s", expected);
	}
	assert_int_equal(r, -EINVAL);
	assert_int_equal(err.code, EINVAL);
	assert_null(p);
	assert_string_equal(err.msg, expected);
}

#define BAD(yaml, expected) check_bad_len((yaml), strlen(yaml), &ctx, (expected))

static char *print_to_string(const struct policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	policy_print(p, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* print p, parse the output again, and require the same policy. */
static void assert_round_trip(const struct policy *p)
{
	_cleanup_free_ char *text = print_to_string(p);
	_cleanup_policy_ struct policy *q = NULL;
	struct error err = { 0 };

	if (policy_load_buffer("printed.yaml", "/nowhere", text, strlen(text), &ctx, &q, &err) < 0)
		fail_msg("printed policy does not parse: %s\n%s", err.msg, text);
	if (!policy_equal(p, q))
		fail_msg("printed policy differs after parsing:\n%s", text);
}

/* ---------------------------------------------------------------- */
/* Defaults                                                          */

static void test_default(void **state)
{
	_cleanup_policy_ struct policy *p = NULL;
	struct error err = { 0 };
	static const char *const pass[] = { "TERM",	   "COLORTERM",	 "LANG",       "LANGUAGE",
					    "LC_ALL",	   "LC_CTYPE",	 "LC_MESSAGES", "LC_COLLATE",
					    "LC_NUMERIC", "LC_TIME",	 "TZ",	       "NO_COLOR" };
	(void)state;

	assert_int_equal(policy_default(&ctx, &p, &err), 0);
	assert_string_equal(p->file, "<default>");
	assert_string_equal(p->dir, "/work/proj");
	assert_int_equal(p->version, 1);
	assert_string_equal(p->name, "default");
	assert_int_equal(p->sandbox.boundary, POLICY_BOUNDARY_PROCESS);
	assert_string_equal(p->sandbox.workspace, "/work/proj");
	assert_int_equal(p->sandbox.workspace_loc.line, 0);
	assert_string_equal(p->sandbox.workspace_loc.file, "<default>");
	assert_int_equal(p->sandbox.mode, POLICY_MODE_ENFORCE);
	assert_int_equal(p->sandbox.host_uid, -1);
	assert_int_equal(p->sandbox.host_gid, -1);
	assert_int_equal(p->sandbox.limits.memory_bytes, 0);
	assert_int_equal(p->sandbox.limits.pids, 4096);
	assert_int_equal(p->sandbox.limits.open_files, 1024);
	assert_int_equal(p->sandbox.limits.cpu_seconds, 0);
	assert_int_equal(p->sandbox.limits.wall_seconds, 0);
	assert_true(p->filesystem.baseline);
	assert_int_equal(p->filesystem.read.n, 0);
	assert_int_equal(p->filesystem.write.n, 0);
	assert_int_equal(p->filesystem.deny.n, 0);
	assert_false(p->process.exec_set);
	assert_int_equal(p->process.exec.n, 0);
	assert_int_equal(p->process.n_env_pass, ARRAY_SIZE(pass));
	for (size_t i = 0; i < ARRAY_SIZE(pass); i++) {
		assert_string_equal(p->process.env_pass[i], pass[i]);
		assert_int_equal(p->process.env_pass_loc[i].line, 0);
		assert_string_equal(p->process.env_pass_loc[i].file, "<default>");
	}
	assert_null(p->process.env_pass[ARRAY_SIZE(pass)]);
	assert_int_equal(p->process.n_env_set, 0);
	assert_int_equal(p->origin.mode.line, 0);
}

static void test_default_normalises_cwd(void **state)
{
	_cleanup_policy_ struct policy *p = NULL;
	struct error err = { 0 };
	const struct policy_ctx c = { .home = "/h", .cwd = "/a//b/./c/" };
	(void)state;

	assert_int_equal(policy_default(&c, &p, &err), 0);
	assert_string_equal(p->sandbox.workspace, "/a/b/c");
}

static void test_default_bad_ctx(void **state)
{
	struct policy *p = NULL;
	struct error err = { 0 };
	const struct policy_ctx rel = { .home = "/h", .cwd = "relative" };
	const struct policy_ctx none = { .home = "/h", .cwd = NULL };
	(void)state;

	assert_int_equal(policy_default(&rel, &p, &err), -EINVAL);
	assert_null(p);
	assert_string_equal(err.msg, "policy: the current directory must be an absolute path");
	assert_int_equal(policy_default(&none, &p, &err), -EINVAL);
	assert_int_equal(policy_load_buffer("x", "/", "version: 1", 10, &rel, &p, &err), -EINVAL);
	assert_null(p);
	assert_int_equal(policy_load_buffer("x", "/", NULL, 0, &ctx, &p, &err), -EINVAL);
	assert_string_equal(err.msg, "x:1:1: (document): the file is empty; a policy needs at least "
				     "\"version: 1\"");
}

static void test_minimal_equals_default(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok("version: 1\n");
	_cleanup_policy_ struct policy *d = NULL;
	struct error err = { 0 };
	(void)state;

	assert_int_equal(policy_default(&ctx, &d, &err), 0);
	assert_true(policy_equal(p, d));
	assert_string_equal(p->file, "policy.yaml");
	assert_string_equal(p->dir, DIR);
	assert_int_equal(p->origin.version.line, 1);
	assert_int_equal(p->origin.version.col, 10);
	assert_ptr_equal(p->origin.version.file, p->file);
	/* Omitted settings keep their built-in origin. */
	assert_int_equal(p->origin.mode.line, 0);
	assert_int_equal(p->sandbox.workspace_loc.line, 0);
}

/* ---------------------------------------------------------------- */
/* A complete valid policy                                           */

static const char full_policy[] = "version: 1\n"
				  "name: my-agent\n"
				  "sandbox:\n"
				  "  boundary: gvisor\n"
				  "  workspace: ../proj\n"
				  "  mode: learn\n"
				  "  host_uid: 1000\n"
				  "  host_gid: auto\n"
				  "  limits:\n"
				  "    memory: 2GiB\n"
				  "    pids: 512\n"
				  "    open_files: 2048\n"
				  "    cpu: 10m\n"
				  "    wall: 1h\n"
				  "filesystem:\n"
				  "  baseline: false\n"
				  "  read: [~/.gitconfig, data]\n"
				  "  write:\n"
				  "    - /tmp/cache\n"
				  "  deny: [~/.ssh, $WORKSPACE/.env]\n"
				  "process:\n"
				  "  exec: [/usr/bin, $WORKSPACE/bin]\n"
				  "  env:\n"
				  "    pass: [TERM, LANG]\n"
				  "    set: {FOO: bar, EMPTY: \"\"}\n";

static void test_full(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok(full_policy);
	(void)state;

	assert_string_equal(p->name, "my-agent");
	assert_int_equal(p->origin.name.line, 2);
	assert_int_equal(p->origin.name.col, 7);
	assert_int_equal(p->sandbox.boundary, POLICY_BOUNDARY_GVISOR);
	assert_string_equal(p->sandbox.workspace, "/etc/proj");
	assert_int_equal(p->sandbox.workspace_loc.line, 5);
	assert_int_equal(p->sandbox.workspace_loc.col, 14);
	assert_ptr_equal(p->sandbox.workspace_loc.file, p->file);
	assert_int_equal(p->sandbox.mode, POLICY_MODE_LEARN);
	assert_int_equal(p->sandbox.host_uid, 1000);
	assert_int_equal(p->sandbox.host_gid, -1);
	assert_int_equal(p->sandbox.limits.memory_bytes, UINT64_C(2) << 30);
	assert_int_equal(p->sandbox.limits.pids, 512);
	assert_int_equal(p->sandbox.limits.open_files, 2048);
	assert_int_equal(p->sandbox.limits.cpu_seconds, 600);
	assert_int_equal(p->sandbox.limits.wall_seconds, 3600);
	assert_int_equal(p->origin.wall.line, 14);
	assert_false(p->filesystem.baseline);

	assert_int_equal(p->filesystem.read.n, 2);
	assert_string_equal(p->filesystem.read.v[0].path, "/home/u/.gitconfig");
	assert_string_equal(p->filesystem.read.v[1].path, "/etc/airlock/data");
	assert_int_equal(p->filesystem.read.v[1].loc.line, 17);
	assert_int_equal(p->filesystem.read.v[1].loc.col, 24);
	assert_ptr_equal(p->filesystem.read.v[1].loc.file, p->file);
	assert_int_equal(p->filesystem.write.n, 1);
	assert_string_equal(p->filesystem.write.v[0].path, "/tmp/cache");
	assert_int_equal(p->filesystem.write.v[0].loc.line, 19);
	assert_int_equal(p->filesystem.write.v[0].loc.col, 7);
	assert_int_equal(p->filesystem.deny.n, 2);
	assert_string_equal(p->filesystem.deny.v[0].path, "/home/u/.ssh");
	assert_string_equal(p->filesystem.deny.v[1].path, "/etc/proj/.env");

	assert_true(p->process.exec_set);
	assert_int_equal(p->process.exec.n, 2);
	assert_string_equal(p->process.exec.v[0].path, "/usr/bin");
	assert_string_equal(p->process.exec.v[1].path, "/etc/proj/bin");
	assert_int_equal(p->process.exec.v[1].loc.line, 22);
	assert_int_equal(p->process.exec.v[1].loc.col, 20);

	assert_int_equal(p->process.n_env_pass, 2);
	assert_string_equal(p->process.env_pass[0], "TERM");
	assert_string_equal(p->process.env_pass[1], "LANG");
	assert_null(p->process.env_pass[2]);
	assert_int_equal(p->process.env_pass_loc[1].line, 24);
	assert_int_equal(p->process.env_pass_loc[1].col, 18);
	assert_int_equal(p->process.n_env_set, 2);
	assert_string_equal(p->process.env_set[0].name, "FOO");
	assert_string_equal(p->process.env_set[0].value, "bar");
	assert_int_equal(p->process.env_set[0].loc.line, 25);
	assert_int_equal(p->process.env_set[0].loc.col, 11);
	assert_ptr_equal(p->process.env_set[0].loc.file, p->file);
	assert_string_equal(p->process.env_set[1].name, "EMPTY");
	assert_string_equal(p->process.env_set[1].value, "");
}

static void test_sections_in_any_order(void **state)
{
	/* $WORKSPACE refers to the workspace set in sandbox, even when the
	 * filesystem section comes first in the file. */
	_cleanup_policy_ struct policy *p = load_ok("filesystem:\n"
						    "  read: [$WORKSPACE/docs]\n"
						    "sandbox:\n"
						    "  workspace: /srv/ws\n"
						    "version: 1\n");
	(void)state;

	assert_string_equal(p->filesystem.read.v[0].path, "/srv/ws/docs");
}

static void test_enums(void **state)
{
	static const struct {
		const char *yaml;
		enum policy_boundary b;
		enum policy_mode m;
	} cases[] = {
		{ "version: 1\nsandbox: {boundary: process, mode: enforce}\n", POLICY_BOUNDARY_PROCESS,
		  POLICY_MODE_ENFORCE },
		{ "version: 1\nsandbox: {boundary: microvm, mode: observe}\n", POLICY_BOUNDARY_MICROVM,
		  POLICY_MODE_OBSERVE },
		{ "version: 1\nsandbox: {boundary: 'gvisor', mode: \"learn\"}\n",
		  POLICY_BOUNDARY_GVISOR, POLICY_MODE_LEARN },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_policy_ struct policy *p = load_ok(cases[i].yaml);
		assert_int_equal(p->sandbox.boundary, cases[i].b);
		assert_int_equal(p->sandbox.mode, cases[i].m);
	}
	assert_string_equal(policy_mode_name(POLICY_MODE_ENFORCE), "enforce");
	assert_string_equal(policy_mode_name(POLICY_MODE_LEARN), "learn");
	assert_string_equal(policy_mode_name(POLICY_MODE_OBSERVE), "observe");
	assert_string_equal(policy_boundary_name(POLICY_BOUNDARY_PROCESS), "process");
	assert_string_equal(policy_boundary_name(POLICY_BOUNDARY_GVISOR), "gvisor");
	assert_string_equal(policy_boundary_name(POLICY_BOUNDARY_MICROVM), "microvm");
}

static void test_yaml_forms(void **state)
{
	/* Explicit document markers, comments, block and flow styles,
	 * quoted keys and values. */
	_cleanup_policy_ struct policy *p = load_ok("%YAML 1.1\n"
						    "---\n"
						    "# a comment\n"
						    "\"version\": 1   # trailing\n"
						    "filesystem:\n"
						    "  read:\n"
						    "    - '/a b'\n"
						    "    - \"/c\\td\"\n"
						    "    - >-\n"
						    "      /folded\n"
						    "  baseline: TRUE\n"
						    "...\n");
	(void)state;

	assert_int_equal(p->filesystem.read.n, 3);
	assert_string_equal(p->filesystem.read.v[0].path, "/a b");
	assert_string_equal(p->filesystem.read.v[1].path, "/c\td");
	assert_string_equal(p->filesystem.read.v[2].path, "/folded");
	assert_true(p->filesystem.baseline);
}

static void test_empty_lists(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok("version: 1\n"
						    "filesystem: {read: [], write: [], deny: []}\n"
						    "process: {env: {pass: [], set: {}}}\n");
	(void)state;

	assert_int_equal(p->filesystem.read.n, 0);
	assert_int_equal(p->process.n_env_pass, 0);
	assert_non_null(p->process.env_pass);
	assert_null(p->process.env_pass[0]);
	assert_int_equal(p->process.n_env_set, 0);
	assert_false(p->process.exec_set);
}

/* ---------------------------------------------------------------- */
/* Top level, version, name                                          */

static void test_version(void **state)
{
	(void)state;
	BAD("name: x\n",
	    "policy.yaml:1:1: version: required key is missing; start the policy with \"version: "
	    "1\"");
	BAD("version: 2\n", "policy.yaml:1:10: version: \"2\" is not a supported version; this build "
			    "reads version: 1");
	BAD("version: 0\n", "policy.yaml:1:10: version: \"0\" is not a supported version; this build "
			    "reads version: 1");
	BAD("version: \"1\"\n",
	    "policy.yaml:1:10: version: \"1\" is a quoted string; write version: 1 without quotes");
	BAD("version: 1.0\n",
	    "policy.yaml:1:10: version: \"1.0\" is not an integer; this build reads version: 1");
	BAD("version: 01\n",
	    "policy.yaml:1:10: version: \"01\" is not an integer; this build reads version: 1");
	BAD("version: one\n",
	    "policy.yaml:1:10: version: \"one\" is not an integer; this build reads version: 1");
	BAD("version: 99999999999999999999999\n",
	    "policy.yaml:1:10: version: \"99999999999999999999999\" is not an integer; this build "
	    "reads version: 1");
	BAD("version: [1]\n", "policy.yaml:1:10: version: is a list; expected the integer 1");
	BAD("version: {a: 1}\n", "policy.yaml:1:10: version: is a map; expected the integer 1");
	BAD("version:\n", "policy.yaml:1:9: version: has no value; expected the integer 1");
	BAD("version: ~\n", "policy.yaml:1:10: version: has no value; expected the integer 1");
}

static void test_top_level_shape(void **state)
{
	(void)state;
	BAD("", "policy.yaml:1:1: (document): the file is empty; a policy needs at least \"version: "
		"1\"");
	BAD("# only a comment\n",
	    "policy.yaml:1:1: (document): the file is empty; a policy needs at least \"version: 1\"");
	BAD("- version: 1\n", "policy.yaml:1:1: (document): the top level is a list; a policy is a "
			      "map that starts with \"version: 1\"");
	BAD("hello\n", "policy.yaml:1:1: (document): the top level is a single value; a policy is a "
		       "map that starts with \"version: 1\"");
	BAD("---\n", "policy.yaml:2:1: (document): the top level is empty; a policy is a map that "
		     "starts with \"version: 1\"");
	BAD("version: 1\n---\nversion: 1\n",
	    "policy.yaml:2:1: (document): a second YAML document; a policy file holds exactly one");
}

static void test_unknown_keys(void **state)
{
	(void)state;
	BAD("version: 1\nnet: {}\n",
	    "policy.yaml:2:1: net: unknown key; valid keys here are version, name, sandbox, "
	    "filesystem, process, network, credentials, identity, audit, mcp");
	BAD("version: 1\nnetwork:\n  allow: []\n",
	    "policy.yaml:3:3: network.allow: unknown key; valid keys here are mode, default, "
	    "endpoints, allow_private, resolve, upstream_ca, leak_scan, log");
	BAD("version: 1\nnetwork:\n  endpoints:\n    - {host: a.example, method: GET}\n",
	    "policy.yaml:4:25: network.endpoints[0].method: unknown key; valid keys here are host, "
	    "id, ports, tls, access, rules, protocol, mcp_server");
	BAD("version: 1\nnetwork:\n  endpoints:\n    - {host: a.example, tls: intercept, rules: "
	    "[{method: GET}]}\n",
	    "policy.yaml:4:50: network.endpoints[0].rules[0].method: unknown key; valid keys here "
	    "are id, methods, path, query, websocket");
	BAD("version: 1\nnetwork:\n  leak_scan: {max: 1}\n",
	    "policy.yaml:3:15: network.leak_scan.max: unknown key; valid keys here are max_body, "
	    "allow_compressed");
	BAD("version: 1\nsandbox:\n  modes: enforce\n",
	    "policy.yaml:3:3: sandbox.modes: unknown key; valid keys here are boundary, workspace, "
	    "mode, workspace_mode, host_uid, host_gid, limits");
	BAD("version: 1\nsandbox:\n  limits:\n    mem: 1G\n",
	    "policy.yaml:4:5: sandbox.limits.mem: unknown key; valid keys here are memory, pids, "
	    "open_files, cpu, wall");
	BAD("version: 1\nfilesystem:\n  protected: [/x]\n",
	    "policy.yaml:3:3: filesystem.protected: unknown key; valid keys here are baseline, read, "
	    "write, deny, protect, protect_defaults, protect_build, sockets");
	BAD("version: 1\nprocess:\n  argv: []\n",
	    "policy.yaml:3:3: process.argv: unknown key; valid keys here are exec, env, git_identity");
	BAD("version: 1\nprocess:\n  env:\n    unset: [A]\n",
	    "policy.yaml:4:5: process.env.unset: unknown key; valid keys here are pass, set");
	/* Unknown keys are reported with the key quoted when it is unusual. */
	BAD("version: 1\n\"a b\": 1\n",
	    "policy.yaml:2:1: \"a b\": unknown key; valid keys here are version, name, sandbox, "
	    "filesystem, process, network, credentials, identity, audit, mcp");
	/* YAML merge keys are not special. */
	BAD("version: 1\n<<: {name: x}\n",
	    "policy.yaml:2:1: \"<<\": unknown key; valid keys here are version, name, sandbox, "
	    "filesystem, process, network, credentials, identity, audit, mcp");
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	BAD("version: 1\nversion: 1\n",
	    "policy.yaml:2:1: version: duplicate key (first given at line 1); give each key once");
	BAD("version: 1\nsandbox:\n  mode: enforce\n  boundary: process\n  mode: learn\n",
	    "policy.yaml:5:3: sandbox.mode: duplicate key (first given at line 3); give each key "
	    "once");
	BAD("version: 1\nprocess:\n  env:\n    set: {A: 1, B: 2, A: 3}\n",
	    "policy.yaml:4:23: process.env.set.A: duplicate key (first given at line 4); give each "
	    "key once");
	/* Even inside values nobody reads, duplicate keys are refused. */
	BAD("version: 1\nextra: {x: 1, x: 2}\n",
	    "policy.yaml:2:15: extra.x: duplicate key (first given at line 2); give each key once");
}

static void test_name(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok("version: 1\nname: \"agent 7 (ci)\"\n");
	(void)state;

	assert_string_equal(p->name, "agent 7 (ci)");
	BAD("version: 1\nname: \"\"\n",
	    "policy.yaml:2:7: name: is empty; expected a name for the policy");
	BAD("version: 1\nname:\n", "policy.yaml:2:6: name: has no value; expected a name for the "
				   "policy");
	BAD("version: 1\nname: [a]\n",
	    "policy.yaml:2:7: name: is a list; expected a name for the policy");
	BAD("version: 1\nname: \"a\\nb\"\n",
	    "policy.yaml:2:7: name: \"a\\nb\" contains a control character; use printable text");
	BAD("version: 1\nname: \"\\u009b31m\"\n",
	    "policy.yaml:2:7: name: \"\\u009b31m\" contains a control character; use printable text");
	BAD("version: 1\nname: \"\\e[31m\"\n",
	    "policy.yaml:2:7: name: \"\\x1b[31m\" contains a control character; use printable text");
}

static void test_identity_and_audit(void **state)
{
	_cleanup_policy_ struct policy *p =
		load_ok("version: 1\nidentity: {agent: \"release-bot\"}\naudit: {dir: logs/audit}\n");
	(void)state;

	assert_string_equal(p->identity.agent, "release-bot");
	/* Relative to the policy file's directory, like every path. */
	assert_non_null(strstr(p->audit.dir, "/logs/audit"));
	assert_true(p->audit.dir[0] == '/');
	assert_round_trip(p);
	BAD("version: 1\nidentity: {agent: \"a\\nb\"}\n",
	    "policy.yaml:2:19: identity.agent: \"a\\nb\" contains a control character; use printable text");
	BAD("version: 1\nidentity: {name: x}\n",
	    "policy.yaml:2:12: identity.name: unknown key; valid keys here are agent, header");
	assert_false(p->identity.header); /* off unless asked for */

	/* identity.header: needs a network section to mean anything. */
	_cleanup_policy_ struct policy *h = load_ok("version: 1\nnetwork:\n  endpoints: [{host: api.example}]\n"
						    "identity: {agent: bot, header: true}\n");
	assert_true(h->identity.header);
	assert_round_trip(h);
	_cleanup_policy_ struct policy *off = load_ok("version: 1\nnetwork:\n  endpoints: [{host: api.example}]\n"
						      "identity: {header: false}\n");
	assert_false(off->identity.header);
	assert_round_trip(off);
	BAD("version: 1\nidentity: {header: true}\n",
	    "policy.yaml:2:20: identity.header: the policy has no network section, so no request could carry the "
	    "identity header; add a network section or drop identity.header");
	BAD("version: 1\nnetwork:\n  endpoints: [{host: api.example}]\nidentity: {header: yes}\n",
	    "policy.yaml:4:20: identity.header: \"yes\" is not a boolean; write true or false");
	BAD("version: 1\naudit: {log: x}\n",
	    "policy.yaml:2:9: audit.log: unknown key; valid keys here are enabled, dir, max_size");
	BAD("version: 1\naudit: [x]\n", "policy.yaml:2:8: audit: is a list; expected a map of settings (key: value lines)");
}

/* The log is on unless the policy turns it off; a directory for a log
 * that is off is a contradiction. */
static void test_audit_enabled(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p = load_ok("version: 1\n");
		assert_true(p->audit.enabled);
		assert_null(p->audit.dir);
	}
	{
		_cleanup_policy_ struct policy *p = load_ok("version: 1\naudit:\n  enabled: false\n");
		assert_false(p->audit.enabled);
		assert_int_equal(p->origin.audit_enabled.line, 3);
		assert_round_trip(p);
	}
	{
		_cleanup_policy_ struct policy *p = load_ok("version: 1\naudit: {enabled: true, dir: /var/log/a}\n");
		assert_true(p->audit.enabled);
		assert_string_equal(p->audit.dir, "/var/log/a");
		assert_round_trip(p);
	}
	BAD("version: 1\naudit:\n  enabled: false\n  dir: /var/log/a\n",
	    "policy.yaml:4:8: audit.dir: a directory for the decision log, which audit.enabled: false turns off; "
	    "remove one of the two");
	BAD("version: 1\naudit: {enabled: off}\n",
	    "policy.yaml:2:18: audit.enabled: \"off\" is not a boolean; write true or false");
}

/* The log's budget: 1 GiB unless the policy says, never unlimited (it
 * ends the run rather than let it go on unlogged). */
static void test_audit_max_size(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p = load_ok("version: 1\n");
		assert_int_equal(p->audit.max_size, UINT64_C(1) << 30);
	}
	{
		_cleanup_policy_ struct policy *p = load_ok("version: 1\naudit:\n  max_size: 64MiB\n");
		assert_int_equal(p->audit.max_size, UINT64_C(64) << 20);
		assert_int_equal(p->origin.audit_max_size.line, 3);
		assert_round_trip(p);
	}
	BAD("version: 1\naudit: {max_size: unlimited}\n",
	    "policy.yaml:2:19: audit.max_size: cannot be unlimited: reaching it ends the run rather than letting it go "
	    "on unlogged; give a size from 1MiB to 1TiB (e.g. 1GiB)");
	BAD("version: 1\naudit: {max_size: 512KiB}\n", "policy.yaml:2:19: audit.max_size: \"512KiB\" is outside 1MiB..1TiB");
	BAD("version: 1\naudit: {max_size: 2TiB}\n", "policy.yaml:2:19: audit.max_size: \"2TiB\" is outside 1MiB..1TiB");
	BAD("version: 1\naudit: {max_size: lots}\n",
	    "policy.yaml:2:19: audit.max_size: \"lots\" is not a size (e.g. 256MiB, 1GiB)");
}

/* ---------------------------------------------------------------- */
/* sandbox                                                           */

static void test_sandbox_enums_bad(void **state)
{
	(void)state;
	/* The example from the error contract, at line 14 column 7. */
	BAD("version: 1\n\n\n\n\n\n\n\n\n\n\n\nsandbox:\n mode: fast\n",
	    "policy.yaml:14:8: sandbox.mode: \"fast\" is not one of enforce, learn, observe");
	BAD("version: 1\nsandbox: {mode: Enforce}\n",
	    "policy.yaml:2:17: sandbox.mode: \"Enforce\" is not one of enforce, learn, observe");
	BAD("version: 1\nsandbox:\n  boundary: docker\n",
	    "policy.yaml:3:13: sandbox.boundary: \"docker\" is not one of process, gvisor, microvm");
	BAD("version: 1\nsandbox:\n  boundary: [process]\n",
	    "policy.yaml:3:13: sandbox.boundary: is a list; expected one of process, gvisor, "
	    "microvm");
	BAD("version: 1\nsandbox:\n  mode:\n",
	    "policy.yaml:3:8: sandbox.mode: has no value; expected one of enforce, learn, observe");
}

static void test_sandbox_shape(void **state)
{
	(void)state;
	BAD("version: 1\nsandbox: [a]\n",
	    "policy.yaml:2:10: sandbox: is a list; expected a map of settings (key: value lines)");
	BAD("version: 1\nsandbox: process\n", "policy.yaml:2:10: sandbox: is a single value; "
					      "expected a map of settings (key: value lines)");
	BAD("version: 1\nsandbox:\n",
	    "policy.yaml:2:9: sandbox: is empty; give its settings or write {} for none");
	BAD("version: 1\nsandbox:\n  limits: 5\n",
	    "policy.yaml:3:11: sandbox.limits: is a single value; expected a map of settings (key: "
	    "value lines)");
}

static void test_host_ids(void **state)
{
	_cleanup_policy_ struct policy *p =
		load_ok("version: 1\nsandbox: {host_uid: 4294967294, host_gid: 1}\n");
	_cleanup_policy_ struct policy *q =
		load_ok("version: 1\nsandbox: {host_uid: auto, host_gid: \"auto\"}\n");
	(void)state;

	assert_int_equal(p->sandbox.host_uid, INT64_C(4294967294));
	assert_int_equal(p->sandbox.host_gid, 1);
	assert_int_equal(q->sandbox.host_uid, -1);
	assert_int_equal(q->sandbox.host_gid, -1);

	BAD("version: 1\nsandbox:\n  host_uid: 0\n",
	    "policy.yaml:3:13: sandbox.host_uid: 0 is root on the host, and the agent never runs as "
	    "host root; use auto or an integer from 1 to 4294967294");
	BAD("version: 1\nsandbox:\n  host_gid: 0\n",
	    "policy.yaml:3:13: sandbox.host_gid: 0 is root on the host, and the agent never runs as "
	    "host root; use auto or an integer from 1 to 4294967294");
	BAD("version: 1\nsandbox:\n  host_uid: 4294967295\n",
	    "policy.yaml:3:13: sandbox.host_uid: \"4294967295\" is not valid; use auto or an integer "
	    "from 1 to 4294967294");
	BAD("version: 1\nsandbox:\n  host_uid: -1\n",
	    "policy.yaml:3:13: sandbox.host_uid: \"-1\" is not valid; use auto or an integer from 1 "
	    "to 4294967294");
	BAD("version: 1\nsandbox:\n  host_uid: root\n",
	    "policy.yaml:3:13: sandbox.host_uid: \"root\" is not valid; use auto or an integer from "
	    "1 to 4294967294");
	BAD("version: 1\nsandbox:\n  host_uid: \"1000\"\n",
	    "policy.yaml:3:13: sandbox.host_uid: \"1000\" is a quoted string; write auto or an "
	    "integer from 1 to 4294967294 without quotes");
	BAD("version: 1\nsandbox:\n  host_gid: [1]\n",
	    "policy.yaml:3:13: sandbox.host_gid: is a list; expected auto or an integer from 1 to "
	    "4294967294");
}

static void test_limits_valid(void **state)
{
	static const struct {
		const char *memory;
		uint64_t bytes;
	} sizes[] = {
		{ "1", 1 },
		{ "512B", 512 },
		{ "4K", 4096 },
		{ "4KiB", 4096 },
		{ "4KB", 4000 },
		{ "3M", UINT64_C(3) << 20 },
		{ "3MiB", UINT64_C(3) << 20 },
		{ "3MB", 3000000 },
		{ "2G", UINT64_C(2) << 30 },
		{ "2GiB", UINT64_C(2) << 30 },
		{ "2GB", 2000000000 },
		{ "1T", UINT64_C(1) << 40 },
		{ "1TiB", UINT64_C(1) << 40 },
		{ "16777215TiB", UINT64_C(16777215) << 40 },
		{ "unlimited", 0 },
	};
	static const struct {
		const char *text;
		uint64_t seconds;
	} durations[] = {
		{ "90", 90 },  { "90s", 90 },	  { "10m", 600 },
		{ "2h", 7200 }, { "unlimited", 0 },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char yaml[128];
		snprintf(yaml, sizeof(yaml), "version: 1\nsandbox: {limits: {memory: %s}}\n",
			 sizes[i].memory);
		_cleanup_policy_ struct policy *p = load_ok(yaml);
		assert_int_equal(p->sandbox.limits.memory_bytes, sizes[i].bytes);
	}
	for (size_t i = 0; i < ARRAY_SIZE(durations); i++) {
		char yaml[128];
		snprintf(yaml, sizeof(yaml), "version: 1\nsandbox: {limits: {cpu: %s, wall: %s}}\n",
			 durations[i].text, durations[i].text);
		_cleanup_policy_ struct policy *p = load_ok(yaml);
		assert_int_equal(p->sandbox.limits.cpu_seconds, durations[i].seconds);
		assert_int_equal(p->sandbox.limits.wall_seconds, durations[i].seconds);
	}

	_cleanup_policy_ struct policy *p =
		load_ok("version: 1\nsandbox: {limits: {pids: unlimited, open_files: 2147483647}}\n");
	assert_int_equal(p->sandbox.limits.pids, 0);
	assert_int_equal(p->sandbox.limits.open_files, 2147483647);
}

static void test_limits_bad(void **state)
{
	(void)state;
	BAD("version: 1\nsandbox:\n  limits:\n    memory: 12 parsecs\n",
	    "policy.yaml:4:13: sandbox.limits.memory: \"12 parsecs\" is not a size (e.g. 512MiB, "
	    "2GiB, unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    memory: 2gib\n",
	    "policy.yaml:4:13: sandbox.limits.memory: \"2gib\" is not a size (e.g. 512MiB, 2GiB, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    memory: 1.5G\n",
	    "policy.yaml:4:13: sandbox.limits.memory: \"1.5G\" is not a size (e.g. 512MiB, 2GiB, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    memory: -1\n",
	    "policy.yaml:4:13: sandbox.limits.memory: \"-1\" is not a size (e.g. 512MiB, 2GiB, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    memory: 0\n",
	    "policy.yaml:4:13: sandbox.limits.memory: \"0\" is not a limit; use a positive size or "
	    "unlimited");
	BAD("version: 1\nsandbox:\n  limits:\n    memory: 16777216TiB\n",
	    "policy.yaml:4:13: sandbox.limits.memory: \"16777216TiB\" is too large; use unlimited "
	    "for no limit");
	BAD("version: 1\nsandbox:\n  limits:\n    memory: 18446744073709551616\n",
	    "policy.yaml:4:13: sandbox.limits.memory: \"18446744073709551616\" is too large; use "
	    "unlimited for no limit");
	BAD("version: 1\nsandbox:\n  limits:\n    memory: [1G]\n",
	    "policy.yaml:4:13: sandbox.limits.memory: is a list; expected a size (e.g. 512MiB, 2GiB, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    pids: 0\n",
	    "policy.yaml:4:11: sandbox.limits.pids: 0 is not a limit; use a positive integer or "
	    "unlimited");
	BAD("version: 1\nsandbox:\n  limits:\n    pids: -5\n",
	    "policy.yaml:4:11: sandbox.limits.pids: \"-5\" is not a positive integer (e.g. 512, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    pids: 1k\n",
	    "policy.yaml:4:11: sandbox.limits.pids: \"1k\" is not a positive integer (e.g. 512, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    open_files: 2147483648\n",
	    "policy.yaml:4:17: sandbox.limits.open_files: \"2147483648\" is too large; the largest "
	    "count is 2147483647");
	BAD("version: 1\nsandbox:\n  limits:\n    open_files: \"64\"\n",
	    "policy.yaml:4:17: sandbox.limits.open_files: \"64\" is a quoted string; write a "
	    "positive integer without quotes, or unlimited");
	BAD("version: 1\nsandbox:\n  limits:\n    cpu: 10x\n",
	    "policy.yaml:4:10: sandbox.limits.cpu: \"10x\" is not a duration (e.g. 90s, 10m, 2h, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    wall: 1h30m\n",
	    "policy.yaml:4:11: sandbox.limits.wall: \"1h30m\" is not a duration (e.g. 90s, 10m, 2h, "
	    "unlimited)");
	BAD("version: 1\nsandbox:\n  limits:\n    wall: 0s\n",
	    "policy.yaml:4:11: sandbox.limits.wall: \"0s\" is not a limit; use a positive duration "
	    "or unlimited");
	BAD("version: 1\nsandbox:\n  limits:\n    cpu: 5124095576030432h\n",
	    "policy.yaml:4:10: sandbox.limits.cpu: \"5124095576030432h\" is too large; use unlimited "
	    "for no limit");
	BAD("version: 1\nsandbox:\n  limits:\n    cpu:\n",
	    "policy.yaml:4:9: sandbox.limits.cpu: has no value; expected a duration (e.g. 90s, 10m, "
	    "2h, unlimited)");
}

/* ---------------------------------------------------------------- */
/* Paths                                                             */

static void test_path_resolution(void **state)
{
	static const struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ "~", "/home/u" },
		{ "~/", "/home/u" },
		{ "~/.config/x", "/home/u/.config/x" },
		{ "$WORKSPACE", "/work/proj" },
		{ "$WORKSPACE/", "/work/proj" },
		{ "$WORKSPACE/build/../out", "/work/proj/out" },
		{ "rel", "/etc/airlock/rel" },
		{ "./rel/", "/etc/airlock/rel" },
		{ "../x", "/etc/x" },
		{ "../../../../x", "/x" },
		{ "/a//b///c", "/a/b/c" },
		{ "/a/./b/.", "/a/b" },
		{ "/a/b/../../..", "/" },
		{ "/..", "/" },
		{ "/", "/" },
		{ "//", "/" },
		{ "/a/b/", "/a/b" },
		{ "/a/...", "/a/..." },
		{ "/a/.b/..c", "/a/.b/..c" },
		{ "/x/~", "/x/~" },
		{ "a$WORKSPACE", "/etc/airlock/a$WORKSPACE" },
		{ "'~'", "/home/u" },
		{ "\"~/q\"", "/home/u/q" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char yaml[256];
		snprintf(yaml, sizeof(yaml), "version: 1\nfilesystem:\n  read:\n    - %s\n",
			 cases[i].in);
		_cleanup_policy_ struct policy *p = load_ok(yaml);
		assert_int_equal(p->filesystem.read.n, 1);
		if (strcmp(p->filesystem.read.v[0].path, cases[i].out) != 0)
			fail_msg("%s -> %s, expected %s", cases[i].in, p->filesystem.read.v[0].path,
				 cases[i].out);
	}
}

static void test_workspace(void **state)
{
	_cleanup_policy_ struct policy *a = load_ok("version: 1\nsandbox: {workspace: .}\n");
	_cleanup_policy_ struct policy *b = load_ok("version: 1\nsandbox: {workspace: ~/src/}\n");
	_cleanup_policy_ struct policy *c = load_ok("version: 1\nsandbox: {workspace: /srv//w/.}\n");
	(void)state;

	assert_string_equal(a->sandbox.workspace, DIR);
	assert_string_equal(b->sandbox.workspace, "/home/u/src");
	assert_string_equal(c->sandbox.workspace, "/srv/w");
	assert_int_equal(c->sandbox.workspace_loc.line, 2);
	assert_int_equal(c->sandbox.workspace_loc.col, 22);

	BAD("version: 1\nsandbox:\n  workspace: $WORKSPACE/x\n",
	    "policy.yaml:3:14: sandbox.workspace: \"$WORKSPACE/x\" refers to the workspace itself; "
	    "give a path (absolute, ~/..., or relative to the policy file)");
	BAD("version: 1\nsandbox:\n  workspace: [/a]\n",
	    "policy.yaml:3:14: sandbox.workspace: is a list; expected a path");
	BAD("version: 1\nsandbox:\n  workspace:\n",
	    "policy.yaml:3:13: sandbox.workspace: is empty; expected a path");
}

static void test_paths_bad(void **state)
{
	_cleanup_free_ char *longp = NULL;
	_cleanup_free_ char *yaml = NULL;
	(void)state;

	BAD("version: 1\nfilesystem:\n  read: [\"\"]\n",
	    "policy.yaml:3:10: filesystem.read[0]: is empty; expected a path");
	BAD("version: 1\nfilesystem:\n  read:\n    - /a\n    -\n",
	    "policy.yaml:5:6: filesystem.read[1]: is empty; expected a path");
	BAD("version: 1\nfilesystem:\n  read: [/a, null]\n",
	    "policy.yaml:3:14: filesystem.read[1]: has no value; expected a path");
	BAD("version: 1\nfilesystem:\n  write: [~root/x]\n",
	    "policy.yaml:3:11: filesystem.write[0]: \"~root/x\" names another user's home; only ~ "
	    "and ~/... are expanded");
	BAD("version: 1\nfilesystem:\n  deny: [$HOME/.ssh]\n",
	    "policy.yaml:3:10: filesystem.deny[0]: \"$HOME/.ssh\" starts with an unknown variable; "
	    "only $WORKSPACE is expanded (use ~ for the home directory)");
	BAD("version: 1\nfilesystem:\n  deny: [$WORKSPACEX]\n",
	    "policy.yaml:3:10: filesystem.deny[0]: \"$WORKSPACEX\" starts with an unknown variable; "
	    "only $WORKSPACE is expanded (use ~ for the home directory)");
	BAD("version: 1\nfilesystem:\n  deny: [\"${WORKSPACE}/x\"]\n",
	    "policy.yaml:3:10: filesystem.deny[0]: \"${WORKSPACE}/x\" starts with an unknown "
	    "variable; only $WORKSPACE is expanded (use ~ for the home directory)");
	BAD("version: 1\nfilesystem:\n  read: [[/a]]\n",
	    "policy.yaml:3:10: filesystem.read[0]: is a list; expected a path");
	BAD("version: 1\nfilesystem:\n  read: {a: 1}\n",
	    "policy.yaml:3:9: filesystem.read: is a map; expected a list (e.g. [a, b] or \"- a\" "
	    "lines)");
	BAD("version: 1\nfilesystem:\n  read: /a\n",
	    "policy.yaml:3:9: filesystem.read: is a single value; expected a list (e.g. [a, b] or "
	    "\"- a\" lines)");
	BAD("version: 1\nfilesystem:\n  read:\n",
	    "policy.yaml:3:8: filesystem.read: is empty; give a list or write [] for none");
	BAD("version: 1\nfilesystem:\n  read: [\"/a\\0b\"]\n",
	    "policy.yaml:3:10: filesystem.read[0]: value contains a NUL byte; remove the \\0 escape");

	/* PATH_MAX counts the terminating NUL: 4095 bytes fit, 4096 do not. */
	longp = malloc(PATH_MAX + 1);
	assert_non_null(longp);
	longp[0] = '/';
	memset(longp + 1, 'a', PATH_MAX - 2);
	longp[PATH_MAX - 1] = '\0';
	assert_true(asprintf(&yaml, "version: 1\nfilesystem: {read: [%s]}\n", longp) > 0);
	{
		_cleanup_policy_ struct policy *p = load_ok(yaml);
		assert_int_equal(strlen(p->filesystem.read.v[0].path), PATH_MAX - 1);
	}
	free(yaml);
	longp[PATH_MAX - 1] = 'a';
	longp[PATH_MAX] = '\0';
	assert_true(asprintf(&yaml, "version: 1\nfilesystem: {read: [%s]}\n", longp) > 0);
	BAD(yaml, "policy.yaml:2:21: filesystem.read[0]: "
		  "\"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" is longer "
		  "than 4095 bytes once expanded; use a shorter path");
	free(yaml);
	/* Within the limit as written, beyond it once "~" is expanded. */
	longp[0] = '~';
	longp[1] = '/';
	longp[PATH_MAX - 4] = '\0';
	assert_true(asprintf(&yaml, "version: 1\nfilesystem: {read: [%s]}\n", longp) > 0);
	BAD(yaml, "policy.yaml:2:21: filesystem.read[0]: "
		  "\"~/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" is longer "
		  "than 4095 bytes once expanded; use a shorter path");
}

static void test_no_home(void **state)
{
	const struct policy_ctx nohome = { .home = NULL, .cwd = "/w" };
	const struct policy_ctx relhome = { .home = "home", .cwd = "/w" };
	static const char yaml[] = "version: 1\nfilesystem: {deny: [~/.aws]}\n";
	static const char msg[] = "policy.yaml:2:21: filesystem.deny[0]: \"~/.aws\" uses ~ but the "
				  "home directory is not known; use an absolute path";
	(void)state;

	check_bad_len(yaml, strlen(yaml), &nohome, msg);
	check_bad_len(yaml, strlen(yaml), &relhome, msg);
}

static void test_relative_dir(void **state)
{
	_cleanup_policy_ struct policy *p = NULL;
	_cleanup_policy_ struct policy *q = NULL;
	struct error err = { 0 };
	static const char yaml[] = "version: 1\nfilesystem: {read: [x]}\n";
	(void)state;

	/* A relative dir is taken from ctx->cwd; NULL means ctx->cwd. */
	assert_int_equal(policy_load_buffer("p", "conf/./sub/", yaml, strlen(yaml), &ctx, &p, &err),
			 0);
	assert_string_equal(p->dir, "/work/proj/conf/sub");
	assert_string_equal(p->filesystem.read.v[0].path, "/work/proj/conf/sub/x");
	assert_int_equal(policy_load_buffer("p", NULL, yaml, strlen(yaml), &ctx, &q, &err), 0);
	assert_string_equal(q->filesystem.read.v[0].path, "/work/proj/x");
}

/* ---------------------------------------------------------------- */
/* filesystem                                                        */

static void test_baseline(void **state)
{
	(void)state;
	BAD("version: 1\nfilesystem:\n  baseline: yes\n",
	    "policy.yaml:3:13: filesystem.baseline: \"yes\" is not a boolean; write true or false");
	BAD("version: 1\nfilesystem:\n  baseline: \"true\"\n",
	    "policy.yaml:3:13: filesystem.baseline: \"true\" is a quoted string; write true or false "
	    "without quotes");
	BAD("version: 1\nfilesystem:\n  baseline: 1\n",
	    "policy.yaml:3:13: filesystem.baseline: \"1\" is not a boolean; write true or false");
	BAD("version: 1\nfilesystem:\n  baseline:\n",
	    "policy.yaml:3:12: filesystem.baseline: has no value; expected true or false");
	BAD("version: 1\nfilesystem:\n  baseline: [true]\n",
	    "policy.yaml:3:13: filesystem.baseline: is a list; expected true or false");
}

/* filesystem.protect: globs relative to the workspace, the table's rows
 * on by default, build entry points only on request; every bad glob is
 * refused with its line and what would be valid. */
static void test_fs_sockets(void **state)
{
	(void)state;
	struct policy *p = load_ok("version: 1\n");
	assert_int_equal(p->filesystem.sockets.n, 0);
	policy_free(p);

	setenv("AIRLOCK_TEST_SOCK", "/run/user/1000/agent.sock", 1);
	setenv("AIRLOCK_TEST_DIR", "/run/x", 1);
	unsetenv("AIRLOCK_TEST_UNSET");
	p = load_ok("version: 1\nfilesystem:\n  sockets: [$AIRLOCK_TEST_SOCK, \"${AIRLOCK_TEST_DIR}/gpg.sock\", "
		    "/var/run/../run/docker.sock]\n");
	assert_int_equal(p->filesystem.sockets.n, 3);
	assert_string_equal(p->filesystem.sockets.v[0].path, "/run/user/1000/agent.sock");
	assert_string_equal(p->filesystem.sockets.v[1].path, "/run/x/gpg.sock");
	assert_string_equal(p->filesystem.sockets.v[2].path, "/var/run/docker.sock");
	assert_int_equal(p->filesystem.sockets.v[1].loc.line, 3);
	assert_round_trip(p);
	policy_free(p);

	BAD("version: 1\nfilesystem:\n  sockets: [$AIRLOCK_TEST_UNSET]\n",
	    "policy.yaml:3:13: filesystem.sockets[0]: \"$AIRLOCK_TEST_UNSET\": $AIRLOCK_TEST_UNSET is not set in "
	    "airlock's environment; set it, or remove the entry");
	BAD("version: 1\nfilesystem:\n  sockets: [\"${AIRLOCK_TEST_SOCK\"]\n",
	    "policy.yaml:3:13: filesystem.sockets[0]: \"${AIRLOCK_TEST_SOCK\": expected $NAME or ${NAME} at the "
	    "start, then nothing or /...");
	setenv("AIRLOCK_TEST_REL", "agent.sock", 1);
	BAD("version: 1\nfilesystem:\n  sockets: [$AIRLOCK_TEST_REL]\n",
	    "policy.yaml:3:13: filesystem.sockets[0]: \"$AIRLOCK_TEST_REL\": $AIRLOCK_TEST_REL is \"agent.sock\", "
	    "not an absolute path");
	BAD("version: 1\nfilesystem:\n  sockets: /run/docker.sock\n",
	    "policy.yaml:3:12: filesystem.sockets: is a single value; expected a list (e.g. [a, b] or \"- a\" lines)");
}

static void test_fs_protect(void **state)
{
	(void)state;
	struct policy *p = load_ok("version: 1\n");
	assert_true(p->filesystem.protect_defaults);
	assert_false(p->filesystem.protect_build);
	assert_int_equal(p->filesystem.protect.n, 0);
	policy_free(p);

	p = load_ok("version: 1\nfilesystem:\n  protect: [\"**/secrets.toml\", tools/**]\n"
		    "  protect_defaults: false\n  protect_build: true\n");
	assert_int_equal(p->filesystem.protect.n, 2);
	assert_string_equal(p->filesystem.protect.v[0].path, "**/secrets.toml");
	assert_string_equal(p->filesystem.protect.v[1].path, "tools/**");
	assert_int_equal(p->filesystem.protect.v[1].loc.line, 3);
	assert_false(p->filesystem.protect_defaults);
	assert_true(p->filesystem.protect_build);
	assert_round_trip(p);
	policy_free(p);

	BAD("version: 1\nfilesystem:\n  protect: [/etc/x]\n",
	    "policy.yaml:3:13: filesystem.protect[0]: \"/etc/x\" starts with /; write a glob relative to "
	    "the workspace (e.g. .git/hooks/** or **/.envrc)");
	BAD("version: 1\nfilesystem:\n  protect: [a/../b]\n",
	    "policy.yaml:3:13: filesystem.protect[0]: \"a/../b\" has an empty, \".\" or \"..\" component "
	    "(or ends with /); write a glob relative to the workspace (e.g. .git/hooks/** or **/.envrc)");
	BAD("version: 1\nfilesystem:\n  protect: [a//b]\n",
	    "policy.yaml:3:13: filesystem.protect[0]: \"a//b\" has an empty, \".\" or \"..\" component "
	    "(or ends with /); write a glob relative to the workspace (e.g. .git/hooks/** or **/.envrc)");
	BAD("version: 1\nfilesystem:\n  protect: [tools/]\n",
	    "policy.yaml:3:13: filesystem.protect[0]: \"tools/\" ends with /; write dir/** for a directory");
	BAD("version: 1\nfilesystem:\n  protect: [\"a?b\"]\n",
	    "policy.yaml:3:13: filesystem.protect[0]: \"a?b\" has a control character, '\\', '?' or '['; "
	    "only '*' (within a name) and '**' (across directories) are wildcards");
	BAD("version: 1\nfilesystem:\n  protect: [\"\"]\n",
	    "policy.yaml:3:13: filesystem.protect[0]: is empty; expected a glob relative to the workspace "
	    "(e.g. .git/hooks/** or **/.envrc)");
	BAD("version: 1\nfilesystem:\n  protect: .envrc\n",
	    "policy.yaml:3:12: filesystem.protect: is a single value; expected a list (e.g. [a, b] or "
	    "\"- a\" lines)");
	BAD("version: 1\nfilesystem:\n  protect_defaults: \"no\"\n",
	    "policy.yaml:3:21: filesystem.protect_defaults: \"no\" is a quoted string; write true or false "
	    "without quotes");
	BAD("version: 1\nfilesystem:\n  protect_build: 1\n",
	    "policy.yaml:3:18: filesystem.protect_build: \"1\" is not a boolean; write true or false");
	char long_glob[300];
	memset(long_glob, 'a', 256);
	long_glob[256] = '\0';
	char yaml[400];
	snprintf(yaml, sizeof(yaml), "version: 1\nfilesystem:\n  protect: [%s]\n", long_glob);
	struct error err = { 0 };
	struct policy *q = NULL;
	assert_int_equal(load_ctx(yaml, strlen(yaml), &ctx, &q, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is longer than 255 bytes"));
}

static void test_fs_contradictions(void **state)
{
	(void)state;
	BAD("version: 1\nfilesystem:\n  read: [/a]\n  write: [/a]\n",
	    "policy.yaml:4:11: filesystem.write[0]: \"/a\" is also in filesystem.read[0] (line 3); a "
	    "path may be in only one of read, write and deny");
	BAD("version: 1\nfilesystem:\n  deny: [/b/c]\n  read: [/x, /b//c/]\n",
	    "policy.yaml:4:14: filesystem.read[1]: \"/b/c\" is also in filesystem.deny[0] (line 3); "
	    "a path may be in only one of read, write and deny");
	BAD("version: 1\nfilesystem:\n  write: [~/w]\n  deny: [/home/u/w]\n",
	    "policy.yaml:4:10: filesystem.deny[0]: \"/home/u/w\" is also in filesystem.write[0] "
	    "(line 3); a path may be in only one of read, write and deny");
	BAD("version: 1\nfilesystem:\n  read: [/a, /b, ./../airlock/c, /etc/airlock/c]\n",
	    "policy.yaml:3:34: filesystem.read[3]: \"/etc/airlock/c\" is listed twice (first at "
	    "filesystem.read[2], line 3); remove one");
	/* The repeat that comes first in the file is the one reported. */
	BAD("version: 1\nfilesystem:\n  read:\n    - /z\n    - /a\n    - /z\n    - /a\n",
	    "policy.yaml:6:7: filesystem.read[2]: \"/z\" is listed twice (first at "
	    "filesystem.read[0], line 4); remove one");

	/* A deny beneath a read or write path is the point of deny. */
	_cleanup_policy_ struct policy *p = load_ok("version: 1\nfilesystem:\n"
						    "  read: [~]\n  write: [/data]\n"
						    "  deny: [~/.ssh, /data/secret]\n");
	assert_int_equal(p->filesystem.deny.n, 2);
}

static void test_workspace_denied(void **state)
{
	const struct policy_ctx home_ws = { .home = "/home/u", .cwd = "/home/u/src/app" };
	static const char deny_home[] = "version: 1\nfilesystem:\n  deny: [~/.ssh, ~]\n";
	(void)state;

	BAD("version: 1\nfilesystem:\n  deny: [/work/proj]\n",
	    "policy.yaml:3:10: filesystem.deny[0]: \"/work/proj\" hides the workspace \"/work/proj\"; "
	    "deny paths inside the workspace, or choose another workspace");
	BAD("version: 1\nfilesystem:\n  deny: [/tmp, /work]\n",
	    "policy.yaml:3:16: filesystem.deny[1]: \"/work\" hides the workspace \"/work/proj\"; deny "
	    "paths inside the workspace, or choose another workspace");
	BAD("version: 1\nfilesystem:\n  deny: [/]\n",
	    "policy.yaml:3:10: filesystem.deny[0]: \"/\" hides the workspace \"/work/proj\"; deny "
	    "paths inside the workspace, or choose another workspace");
	BAD("version: 1\nsandbox: {workspace: /srv/w}\nfilesystem:\n  deny: [$WORKSPACE/..]\n",
	    "policy.yaml:4:10: filesystem.deny[0]: \"/srv\" hides the workspace \"/srv/w\"; deny "
	    "paths inside the workspace, or choose another workspace");
	check_bad_len(deny_home, strlen(deny_home), &home_ws,
		      "policy.yaml:3:18: filesystem.deny[1]: \"/home/u\" hides the workspace "
		      "\"/home/u/src/app\"; deny paths inside the workspace, or choose another "
		      "workspace");

	/* Neighbours that must stay legal: a sibling with a common prefix,
	 * and paths inside the workspace. */
	_cleanup_policy_ struct policy *p = load_ok("version: 1\nfilesystem:\n"
						    "  deny: [/work/pro, /work/proj2, $WORKSPACE/.env,"
						    " $WORKSPACE/.git/hooks]\n");
	assert_int_equal(p->filesystem.deny.n, 4);
}

/* ---------------------------------------------------------------- */
/* process                                                           */

static void test_exec(void **state)
{
	_cleanup_policy_ struct policy *p =
		load_ok("version: 1\nfilesystem:\n  deny: [/usr/bin/sudo, /opt/x]\n"
			"process:\n  exec: [/usr/bin, /opt/xy, /usr/local/bin/tool]\n");
	(void)state;

	assert_true(p->process.exec_set);
	assert_int_equal(p->process.exec.n, 3);
	assert_int_equal(p->origin.exec.line, 5);

	BAD("version: 1\nfilesystem:\n  deny: [/opt]\nprocess:\n  exec: [/usr/bin, /opt/tool/bin]\n",
	    "policy.yaml:5:20: process.exec[1]: \"/opt/tool/bin\" is inside filesystem.deny[0] (line "
	    "3), which is denied; remove it from exec or from deny");
	BAD("version: 1\nfilesystem:\n  deny: [/a, ~/bin]\nprocess:\n  exec: [~/bin]\n",
	    "policy.yaml:5:10: process.exec[0]: \"/home/u/bin\" is inside filesystem.deny[1] (line "
	    "3), which is denied; remove it from exec or from deny");
	BAD("version: 1\nprocess:\n  exec: [/usr/bin, /bin, /usr/bin/]\n",
	    "policy.yaml:3:26: process.exec[2]: \"/usr/bin\" is listed twice (first at "
	    "process.exec[0], line 3); remove one");
	BAD("version: 1\nprocess:\n  exec: []\n",
	    "policy.yaml:3:9: process.exec: is an empty list, which would forbid running the "
	    "command itself; list directories or omit exec for the baseline and workspace");
	BAD("version: 1\nprocess:\n  exec: /usr/bin\n",
	    "policy.yaml:3:9: process.exec: is a single value; expected a list (e.g. [a, b] or \"- "
	    "a\" lines)");
}

static void test_env(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok("version: 1\nprocess:\n  env:\n"
						    "    pass: [_X, a1, PATH]\n"
						    "    set:\n      FOO: \"x: y # z\"\n      N: 42\n");
	(void)state;

	assert_int_equal(p->process.n_env_pass, 3);
	assert_string_equal(p->process.env_pass[2], "PATH");
	assert_int_equal(p->process.n_env_set, 2);
	assert_string_equal(p->process.env_set[0].value, "x: y # z");
	assert_string_equal(p->process.env_set[1].value, "42");
	assert_int_equal(p->process.env_set[1].loc.line, 7);
	assert_int_equal(p->process.env_set[1].loc.col, 7);

	BAD("version: 1\nprocess:\n  env:\n    pass: [TERM, 1X]\n",
	    "policy.yaml:4:18: process.env.pass[1]: \"1X\" is not a variable name; use letters, "
	    "digits and _, not starting with a digit");
	BAD("version: 1\nprocess:\n  env:\n    pass: [\"A=B\"]\n",
	    "policy.yaml:4:12: process.env.pass[0]: \"A=B\" is not a variable name; use letters, "
	    "digits and _, not starting with a digit");
	BAD("version: 1\nprocess:\n  env:\n    pass: [\"\"]\n",
	    "policy.yaml:4:12: process.env.pass[0]: \"\" is not a variable name; use letters, digits "
	    "and _, not starting with a digit");
	BAD("version: 1\nprocess:\n  env:\n    pass: [[A]]\n",
	    "policy.yaml:4:12: process.env.pass[0]: is a list; expected an environment variable "
	    "name");
	BAD("version: 1\nprocess:\n  env:\n    pass: {A: 1}\n",
	    "policy.yaml:4:11: process.env.pass: is a map; expected a list (e.g. [a, b] or \"- a\" "
	    "lines)");
	BAD("version: 1\nprocess:\n  env:\n    pass: [TERM, LANG, TERM]\n",
	    "policy.yaml:4:24: process.env.pass[2]: \"TERM\" is listed twice (first at "
	    "process.env.pass[0], line 4); remove one");
	BAD("version: 1\nprocess:\n  env:\n    set: [A]\n",
	    "policy.yaml:4:10: process.env.set: is a list; expected a map of settings (key: value "
	    "lines)");
	BAD("version: 1\nprocess:\n  env:\n    set:\n      A-B: x\n",
	    "policy.yaml:5:7: process.env.set.A-B: \"A-B\" is not a variable name; use letters, "
	    "digits and _, not starting with a digit");
	BAD("version: 1\nprocess:\n  env:\n    set:\n      \"A B\": x\n",
	    "policy.yaml:5:7: process.env.set.\"A B\": \"A B\" is not a variable name; use letters, "
	    "digits and _, not starting with a digit");
	BAD("version: 1\nprocess:\n  env:\n    set:\n      A:\n",
	    "policy.yaml:5:9: process.env.set.A: has no value; expected a string (use \"\" for an "
	    "empty value)");
	BAD("version: 1\nprocess:\n  env:\n    set:\n      A: null\n",
	    "policy.yaml:5:10: process.env.set.A: has no value; expected a string (use \"\" for an "
	    "empty value)");
	BAD("version: 1\nprocess:\n  env:\n    set:\n      A: [1, 2]\n",
	    "policy.yaml:5:10: process.env.set.A: is a list; expected a string (use \"\" for an "
	    "empty value)");
	BAD("version: 1\nprocess:\n  env: [pass]\n",
	    "policy.yaml:3:8: process.env: is a list; expected a map of settings (key: value lines)");
}

static void test_env_pass_and_set(void **state)
{
	(void)state;
	BAD("version: 1\nprocess:\n  env:\n    pass: [TERM, LANG]\n    set: {LANG: C}\n",
	    "policy.yaml:5:11: process.env.set.LANG: LANG is also in process.env.pass[1] (line 4); "
	    "pass copies the caller's value and set gives a fixed one: keep one");

	/* With the default pass list, set takes the variable out of it. */
	_cleanup_policy_ struct policy *p =
		load_ok("version: 1\nprocess:\n  env:\n    set: {LANG: C.UTF-8, TZ: UTC, X: y}\n");
	assert_int_equal(p->process.n_env_pass, policy_default_env_pass_count - 2);
	for (size_t i = 0; i < p->process.n_env_pass; i++) {
		assert_string_not_equal(p->process.env_pass[i], "LANG");
		assert_string_not_equal(p->process.env_pass[i], "TZ");
	}
	assert_null(p->process.env_pass[p->process.n_env_pass]);
	assert_string_equal(p->process.env_pass[0], "TERM");
	assert_string_equal(p->process.env_pass[p->process.n_env_pass - 1], "NO_COLOR");
	assert_round_trip(p);
}

/* ---------------------------------------------------------------- */
/* YAML features that are refused, and bounds                        */

static void test_yaml_refused(void **state)
{
	(void)state;
	BAD("version: 1\nname: &n x\n",
	    "policy.yaml:2:7: name: YAML anchors (&n) are not supported; write the value out in "
	    "full");
	BAD("version: 1\nfilesystem:\n  read: &r [/a]\n  write: *r\n",
	    "policy.yaml:3:9: filesystem.read: YAML anchors (&r) are not supported; write the value "
	    "out in full");
	BAD("version: 1\nfilesystem:\n  read: [*r]\n",
	    "policy.yaml:3:10: filesystem.read[0]: YAML aliases (*r) are not supported; write the "
	    "value out in full");
	BAD("version: !!int 1\n", "policy.yaml:1:10: version: YAML tags are not supported; remove "
				  "the tag and write the plain value");
	BAD("version: 1\nsandbox: !custom {mode: learn}\n",
	    "policy.yaml:2:10: sandbox: YAML tags are not supported; remove the tag and write the "
	    "plain value");
	BAD("version: 1\n? [a]\n: b\n",
	    "policy.yaml:2:3: (document): a key is a list; keys must be plain names");
	BAD("version: 1\nsandbox:\n  ? {a: 1}\n  : b\n",
	    "policy.yaml:3:5: sandbox: a key is a map; keys must be plain names");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	BAD("version: 1\nsandbox:\n  mode: learn\n bad: x\n",
	    "policy.yaml:4:2: (document): invalid YAML: did not find expected key (while parsing a "
	    "block mapping); check indentation, quotes and brackets");
	BAD("version: 1\nfilesystem:\n  read: [/a, /b\n",
	    "policy.yaml:4:1: filesystem.read[2]: invalid YAML: did not find expected ',' or ']' "
	    "(while parsing a flow sequence); check indentation, quotes and brackets");
	BAD("version: 1\nname: \"abc\n",
	    "policy.yaml:3:1: name: invalid YAML: found unexpected end of stream (while scanning a "
	    "quoted scalar); check indentation, quotes and brackets");
	BAD("version: 1\n\tname: x\n",
	    "policy.yaml:2:1: version: invalid YAML: found a tab character that violates indentation "
	    "(while scanning a plain scalar); check indentation, quotes and brackets");
}

static void test_encoding(void **state)
{
	static const char nul[] = "version: 1\nname: a\0b\n";
	static const char latin1[] = "version: 1\nname: caf\xe9\n";
	_cleanup_policy_ struct policy *p = load_ok("version: 1\nname: café ☕\n");
	(void)state;

	assert_string_equal(p->name, "café ☕");
	{
		_cleanup_policy_ struct policy *b = load_ok("\xef\xbb\xbfversion: 1\nname: bom\n");
		assert_string_equal(b->name, "bom");
		assert_int_equal(b->origin.name.line, 2);
		assert_int_equal(b->origin.name.col, 7);
	}
	BAD("\xef\xbb\xbfversion: 1\nname: caf\xe9\n",
	    "policy.yaml:2:10: name: incomplete UTF-8 octet sequence; a policy must be UTF-8 text");
	/* UTF-16 (here with its byte order mark) is not guessed at. */
	check_bad_len("\xff\xfev\x00", 4, &ctx,
		      "policy.yaml:1:4: (document): the file contains a NUL byte; a policy must be "
		      "UTF-8 text");
	check_bad_len(nul, sizeof(nul) - 1, &ctx,
		      "policy.yaml:2:8: (document): the file contains a NUL byte; a policy must be "
		      "UTF-8 text");
	check_bad_len(latin1, sizeof(latin1) - 1, &ctx,
		      "policy.yaml:2:10: name: incomplete UTF-8 octet sequence; a policy must be "
		      "UTF-8 text");
	BAD("version: 1\nname: \"\\x01\"\n",
	    "policy.yaml:2:7: name: \"\\x01\" contains a control character; use printable text");
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * n + tl + 1);
	char *w = s;

	assert_non_null(s);
	memcpy(w, head, hl);
	w += hl;
	for (size_t i = 0; i < n; i++, w += ul)
		memcpy(w, unit, ul);
	memcpy(w, tail, tl + 1);
	return s;
}

static void test_bounds(void **state)
{
	(void)state;

	/* Nesting: 16 levels parse (and fail later on the unknown key),
	 * 17 are refused while parsing. */
	{
		_cleanup_free_ char *ok16 = repeat("version: 1\nx: ", "[", 15, "");
		_cleanup_free_ char *ok16b = repeat(ok16, "]", 15, "\n");
		_cleanup_free_ char *bad17 = repeat("version: 1\nx: ", "[", 16, "");
		_cleanup_free_ char *bad17b = repeat(bad17, "]", 16, "\n");

		BAD(ok16b, "policy.yaml:2:1: x: unknown key; valid keys here are version, name, "
			   "sandbox, filesystem, process, network, credentials, identity, audit, mcp");
		BAD(bad17b, "policy.yaml:2:19: x[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: lists "
			    "and maps are nested more than 16 deep; a policy needs at most 7");
	}

	/* Lists: 4096 entries are accepted, 4097 refused. */
	{
		_cleanup_free_ char *ok = repeat("version: 1\nprocess: {env: {pass: [", "A,", 4095,
						 "A]}}\n");
		_cleanup_free_ char *bad = repeat("version: 1\nprocess: {env: {pass: [", "A,", 4096,
						  "A]}}\n");

		BAD(ok, "policy.yaml:2:26: process.env.pass[1]: \"A\" is listed twice (first at "
			"process.env.pass[0], line 2); remove one");
		BAD(bad, "policy.yaml:2:8216: process.env.pass: has more than 4096 entries; split it "
			 "or use a parent directory");
	}

	/* Maps: 4096 keys at most. */
	{
		_cleanup_free_ char *keys = malloc(4097 * 16 + 64);
		size_t pos = 0;

		assert_non_null(keys);
		pos += (size_t)sprintf(keys, "version: 1\nprocess: {env: {set: {");
		for (int i = 0; i < 4097; i++)
			pos += (size_t)sprintf(keys + pos, "V%d: x,", i);
		strcpy(keys + pos - 1, "}}}\n");
		BAD(keys, "policy.yaml:2:35777: process.env.set: has more than 4096 keys; a map may "
			  "hold at most 4096");
	}

	/* Scalars: 4096 bytes at most. */
	{
		_cleanup_free_ char *ok = repeat("version: 1\nname: ", "n", 4096, "\n");
		_cleanup_free_ char *bad = repeat("version: 1\nname: ", "n", 4097, "\n");
		_cleanup_policy_ struct policy *p = load_ok(ok);

		assert_int_equal(strlen(p->name), 4096);
		BAD(bad, "policy.yaml:2:7: name: value is 4097 bytes long; at most 4096 bytes are "
			 "accepted");
	}

	/* Whole file: 1 MiB at most; the size is checked before parsing. */
	{
		_cleanup_free_ char *big = repeat("version: 1\n", "#", POLICY_MAX_FILE - 11, "");
		_cleanup_free_ char *bigger = repeat("version: 1\n", "#", POLICY_MAX_FILE - 10, "");
		_cleanup_policy_ struct policy *p = load_ok(big);

		assert_int_equal(p->version, 1);
		BAD(bigger, "policy.yaml:1:1: (document): the file is 1048577 bytes; a policy may be at "
			    "most 1048576 bytes (1 MiB)");
	}

	/* Nodes: 65536 in all, however they are spread. */
	{
		_cleanup_free_ char *yaml = malloc(17 * (8 + 4096 * 2) + 64);
		size_t pos = 0;

		assert_non_null(yaml);
		pos += (size_t)sprintf(yaml, "version: 1\n");
		for (int k = 0; k < 17; k++) {
			pos += (size_t)sprintf(yaml + pos, "k%02d: [", k);
			for (int i = 0; i < 4095; i++)
				pos += (size_t)sprintf(yaml + pos, "a,");
			pos += (size_t)sprintf(yaml + pos, "a]\n");
		}
		BAD(yaml, "policy.yaml:17:8129: k15[4061]: the file has more than 65536 YAML nodes; a "
			  "policy needs far fewer");
	}
}

/* ---------------------------------------------------------------- */
/* Files                                                             */

static void test_load_file(void **state)
{
	char dir[] = "/tmp/test_policy.XXXXXX";
	char path[PATH_MAX], big[PATH_MAX];
	_cleanup_policy_ struct policy *p = NULL;
	struct policy *q = NULL;
	struct error err = { 0 };
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("version: 1\nfilesystem:\n  read: [data, ../up]\n  write: [/x]\n  deny: [/x/\n", f);
	fclose(f);
	assert_int_equal(policy_load_file(path, &ctx, &q, &err), -EINVAL);
	assert_null(q);
	{
		char expected[PATH_MAX + 256];
		snprintf(expected, sizeof(expected),
			 "%s:6:1: filesystem.deny[1]: invalid YAML: did not find expected ',' or ']' "
			 "(while parsing a flow sequence); check indentation, quotes and brackets",
			 path);
		assert_string_equal(err.msg, expected);
	}

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("version: 1\nfilesystem:\n  read: [data, ../up]\n", f);
	fclose(f);
	assert_int_equal(policy_load_file(path, &ctx, &p, &err), 0);
	assert_string_equal(p->file, path);
	assert_string_equal(p->dir, dir);
	{
		char expected[PATH_MAX];
		snprintf(expected, sizeof(expected), "%s/data", dir);
		assert_string_equal(p->filesystem.read.v[0].path, expected);
		assert_string_equal(p->filesystem.read.v[1].path, "/tmp/up");
		assert_ptr_equal(p->filesystem.read.v[0].loc.file, p->file);
	}

	/* A relative file name: its directory is taken from ctx->cwd. */
	{
		const struct policy_ctx c = { .home = "/h", .cwd = dir };
		_cleanup_policy_ struct policy *r = NULL;
		assert_int_equal(policy_load_file("p.yaml", &c, &r, &err), 0);
		assert_string_equal(r->file, "p.yaml");
		assert_string_equal(r->dir, dir);
	}

	/* Missing file. */
	snprintf(big, sizeof(big), "%s/missing.yaml", dir);
	assert_int_equal(policy_load_file(big, &ctx, &q, &err), -ENOENT);
	assert_null(q);
	{
		char expected[PATH_MAX + 64];
		snprintf(expected, sizeof(expected),
			 "%s: cannot open the policy: No such file or directory", big);
		assert_string_equal(err.msg, expected);
	}

	/* A directory. */
	assert_int_equal(policy_load_file(dir, &ctx, &q, &err), -EISDIR);

	/* Larger than 1 MiB: refused without reading further. */
	snprintf(big, sizeof(big), "%s/big.yaml", dir);
	f = fopen(big, "w");
	assert_non_null(f);
	fputs("version: 1\n", f);
	for (int i = 0; i < POLICY_MAX_FILE; i++)
		fputc('#', f);
	fclose(f);
	assert_int_equal(policy_load_file(big, &ctx, &q, &err), -EINVAL);
	{
		char expected[PATH_MAX + 128];
		snprintf(expected, sizeof(expected),
			 "%s:1:1: (document): the file is larger than 1048576 bytes (1 MiB); a policy "
			 "must be smaller",
			 big);
		assert_string_equal(err.msg, expected);
	}

	/* An unbounded character device is bounded by the read limit. */
	assert_int_equal(policy_load_file("/dev/zero", &ctx, &q, &err), -EINVAL);
	assert_string_equal(err.msg, "/dev/zero:1:1: (document): the file is larger than 1048576 "
				     "bytes (1 MiB); a policy must be smaller");

	unlink(path);
	unlink(big);
	assert_int_equal(rmdir(dir), 0);
}

static void test_file_name_in_message_is_sanitised(void **state)
{
	struct policy *p = NULL;
	struct error err = { 0 };
	(void)state;

	assert_int_equal(policy_load_buffer("evil\nname.yaml", "/", "version: 2", 10, &ctx, &p, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "evil?name.yaml:1:10: version: \"2\" is not a supported version; "
				     "this build reads version: 1");
}

/* ---------------------------------------------------------------- */
/* Printing                                                          */

static void test_print(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok(full_policy);
	_cleanup_free_ char *text = print_to_string(p);
	(void)state;

	assert_non_null(strstr(text, "\nversion: 1  # policy.yaml:1\n"));
	assert_non_null(strstr(text, "\nname: \"my-agent\"  # policy.yaml:2\n"));
	assert_non_null(strstr(text, "\n  boundary: gvisor  # policy.yaml:4\n"));
	assert_non_null(strstr(text, "\n  workspace: \"/etc/proj\"  # policy.yaml:5\n"));
	assert_non_null(strstr(text, "\n  host_uid: 1000  # policy.yaml:7\n"));
	assert_non_null(strstr(text, "\n    memory: 2GiB  # policy.yaml:10\n"));
	assert_non_null(strstr(text, "\n    cpu: 10m  # policy.yaml:13\n"));
	assert_non_null(strstr(text, "\n    wall: 1h  # policy.yaml:14\n"));
	assert_non_null(strstr(text, "\n  baseline: false  # policy.yaml:16\n"));
	assert_non_null(strstr(text, "\n  read:\n    - \"/home/u/.gitconfig\"  # policy.yaml:17\n"));
	assert_non_null(strstr(text, "\n  exec:\n    - \"/usr/bin\"  # policy.yaml:22\n"));
	assert_non_null(strstr(text, "\n    pass:\n      - TERM  # policy.yaml:24\n"));
	assert_non_null(strstr(text, "\n      EMPTY: \"\"  # policy.yaml:25\n"));
	assert_round_trip(p);
}

static void test_print_default(void **state)
{
	_cleanup_policy_ struct policy *p = NULL;
	_cleanup_free_ char *text = NULL;
	struct error err = { 0 };
	(void)state;

	assert_int_equal(policy_default(&ctx, &p, &err), 0);
	text = print_to_string(p);
	/* Built-in values carry no provenance comment. */
	assert_non_null(strstr(text, "\nversion: 1\nname: \"default\"\nsandbox:\n"));
	assert_non_null(strstr(text, "\n    memory: unlimited\n    pids: 4096\n"
				     "    open_files: 1024\n    cpu: unlimited\n    wall: unlimited\n"));
	assert_non_null(strstr(text, "\n  read: []\n  write: []\n  deny: []\n  protect: []\n  sockets: []\n"
				     "  protect_defaults: true\n  protect_build: false\nprocess:\n  env:\n"));
	assert_null(strstr(text, "exec"));
	assert_non_null(strstr(text, "\n    set: {}\n"));
	assert_round_trip(p);
}

static void test_print_units(void **state)
{
	static const char *const sizes[] = { "1",     "1023",	 "1024", "1536KiB", "1000",
					     "1MB",   "2000000", "3GiB", "5TiB",	  "7T",
					     "999999999999B", "16777215TiB" };
	static const char *const durations[] = { "1", "59", "60", "61", "3600", "5400", "86400" };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char yaml[128];
		snprintf(yaml, sizeof(yaml), "version: 1\nsandbox: {limits: {memory: %s}}\n",
			 sizes[i]);
		_cleanup_policy_ struct policy *p = load_ok(yaml);
		assert_round_trip(p);
	}
	for (size_t i = 0; i < ARRAY_SIZE(durations); i++) {
		char yaml[128];
		snprintf(yaml, sizeof(yaml), "version: 1\nsandbox: {limits: {cpu: %s, wall: %s}}\n",
			 durations[i], durations[i]);
		_cleanup_policy_ struct policy *p = load_ok(yaml);
		assert_round_trip(p);
	}

	char buf[32];
	policy_format_size(UINT64_C(3) << 30, buf, sizeof(buf));
	assert_string_equal(buf, "3GiB");
	policy_format_size(1536 * 1024, buf, sizeof(buf));
	assert_string_equal(buf, "1536KiB");
	policy_format_size(2000000, buf, sizeof(buf));
	assert_string_equal(buf, "2MB");
	policy_format_size(1023, buf, sizeof(buf));
	assert_string_equal(buf, "1023B");
	policy_format_duration(5400, buf, sizeof(buf));
	assert_string_equal(buf, "90m");
	policy_format_duration(7200, buf, sizeof(buf));
	assert_string_equal(buf, "2h");
	policy_format_duration(61, buf, sizeof(buf));
	assert_string_equal(buf, "61s");
}

static void test_print_hostile_strings(void **state)
{
	/* Values that could break out of a quoted scalar or a line. */
	_cleanup_policy_ struct policy *p = load_ok(
		"version: 1\n"
		"name: \"a\\\"b\\\\c # d: e\"\n"
		"sandbox:\n"
		"  workspace: \"/w/x\\ny: z\"\n"
		"filesystem:\n"
		"  read: [\"/r/\\u2028/\\u0085/\\x7f/\\uFEFF/\\u00a0/é/\\U0001F600\", \"/'q'\", "
		"\"/- x\", \"/#\"]\n"
		"process:\n"
		"  env:\n"
		"    pass: [\"NULL\", null_ok]\n"
		"    set: {A: \"\\x1b[2J\", B: \"'\", C: \"\\\\\", D: \"--- \\n...\\n\", E: \"&x *y !z "
		"%a @b `c\"}\n");
	_cleanup_free_ char *text = print_to_string(p);
	(void)state;

	assert_string_equal(p->process.env_pass[0], "NULL");
	assert_non_null(strstr(text, "\n      - \"NULL\"  # policy.yaml:9\n"));
	assert_non_null(strstr(text, "\"/w/x\\ny: z\""));
	assert_round_trip(p);
}

static void test_print_sanitises_comments(void **state)
{
	_cleanup_policy_ struct policy *p = NULL;
	_cleanup_free_ char *text = NULL;
	struct error err = { 0 };
	static const char yaml[] = "version: 1\nname: x\n";
	(void)state;

	assert_int_equal(policy_load_buffer("a\nversion: 2\xe2\x80\xa8.yaml", "/", yaml,
					    strlen(yaml), &ctx, &p, &err),
			 0);
	text = print_to_string(p);
	assert_null(strstr(text, "\nversion: 2"));
	assert_non_null(strstr(text, "name: \"x\"  # a?version: 2?.yaml:2\n"));
	assert_round_trip(p);
}

static void test_print_non_utf8_workspace(void **state)
{
	/* A directory name from the environment need not be UTF-8; the
	 * output must still be valid YAML. */
	const struct policy_ctx c = { .home = "/h", .cwd = "/w/\xff\xfe" };
	_cleanup_policy_ struct policy *p = NULL;
	_cleanup_policy_ struct policy *q = NULL;
	_cleanup_free_ char *text = NULL;
	struct error err = { 0 };
	(void)state;

	assert_int_equal(policy_default(&c, &p, &err), 0);
	text = print_to_string(p);
	assert_non_null(strstr(text, "workspace: \"/w/\\xff\\xfe\""));
	assert_int_equal(policy_load_buffer("x", "/", text, strlen(text), &c, &q, &err), 0);
}

/* ---------------------------------------------------------------- */
/* Network                                                           */

/* A policy of yaml, wrapped as "version: 1\nnetwork:\n" + yaml. */
static struct policy *load_net(const char *yaml)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "version: 1\nnetwork:\n%s", yaml);
	return load_ok(buf);
}

#define NET_BAD(yaml, expected)                                                  \
	do {                                                                     \
		char buf_[4096];                                                 \
		snprintf(buf_, sizeof(buf_), "version: 1\nnetwork:\n%s", (yaml)); \
		BAD(buf_, (expected));                                           \
	} while (0)

static void test_network_absent(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok("version: 1\n");
	_cleanup_policy_ struct policy *d = NULL;
	_cleanup_free_ char *text = NULL;
	struct error err = { 0 };
	(void)state;

	assert_int_equal(p->network.mode, POLICY_NET_NONE);
	assert_int_equal(p->network.n_endpoints, 0);
	assert_null(p->network.endpoints);
	assert_int_equal(p->network.n_allow_private, 0);
	assert_int_equal(p->network.n_resolve, 0);
	assert_null(p->network.upstream_ca);
	assert_null(p->network.log);
	assert_int_equal(p->network.max_body, 1024 * 1024);
	assert_false(p->network.allow_compressed);
	assert_int_equal(p->origin.net_mode.line, 0);

	assert_int_equal(policy_default(&ctx, &d, &err), 0);
	assert_int_equal(d->network.mode, POLICY_NET_NONE);
	assert_int_equal(d->network.max_body, 1024 * 1024);
	text = print_to_string(d);
	assert_null(strstr(text, "\nnetwork:"));
	assert_non_null(strstr(text, "\n# No network section: the agent has no network access.\n"));
	assert_round_trip(d);
}

static void test_network_empty_section(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok("version: 1\nnetwork: {}\n");
	(void)state;

	/* A section, even empty, turns the proxy on; nothing is allowed yet. */
	assert_int_equal(p->network.mode, POLICY_NET_PROXY);
	assert_int_equal(p->network.n_endpoints, 0);
	assert_int_equal(p->network.max_body, 1024 * 1024);
	assert_false(p->network.allow_compressed);
	assert_int_equal(p->network.loc.line, 2);
	assert_int_equal(p->network.loc.col, 1);
	assert_round_trip(p);

	BAD("version: 1\nnetwork:\n",
	    "policy.yaml:2:9: network: is empty; give its settings or write {} for none");
	BAD("version: 1\nnetwork: [a]\n",
	    "policy.yaml:2:10: network: is a list; expected a map of settings (key: value lines)");
	BAD("version: 1\nnetwork: none\n", "policy.yaml:2:10: network: is a single value; expected "
					   "a map of settings (key: value lines)");
}

static const char net_policy[] =
	"version: 1\n"
	"network:\n"
	"  mode: transparent\n"
	"  default: deny\n"
	"  endpoints:\n"
	"    - host: Api.GitHub.com.\n"
	"      id: github\n"
	"      ports: [443]\n"
	"      tls: intercept\n"
	"      access: read-only\n"
	"    - host: \"*.Example.com\"\n"
	"      ports: [80, 8080]\n"
	"      rules:\n"
	"        - methods: [get, Post]\n"
	"          path: /repos/%7euser/%2f/**\n"
	"          query: \"page=*\"\n"
	"        - id: ws\n"
	"          path: /ws\n"
	"          websocket: true\n"
	"    - host: \"[::FFFF:127.0.0.1]\"\n"
	"      ports: [8080]\n"
	"      access: read-write\n"
	"    - host: 2001:DB8::1\n"
	"  allow_private: [127.0.0.1:8080, 10.0.0.0/8, \"[::1]:9000\", fd00::/8, \"[fd00::]/8:443\", "
	"169.254.169.254]\n"
	"  resolve: {Test.Example.: 127.0.0.1, v6.example: \"[::1]\"}\n"
	"  upstream_ca: ./ca.pem\n"
	"  leak_scan: {max_body: 2MiB, allow_compressed: true}\n"
	"  log: $WORKSPACE/../net.jsonl\n";

static void test_network_full(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok(net_policy);
	const struct policy_network *net = &p->network;
	const struct policy_endpoint *ep;
	const struct policy_net_rule *r;
	static const uint8_t ten[16] = { 10 };
	static const uint8_t v6_loopback[16] = { [15] = 1 };
	static const uint8_t fd00[16] = { 0xfd };
	(void)state;

	assert_int_equal(net->mode, POLICY_NET_TRANSPARENT);
	assert_int_equal(p->origin.net_mode.line, 3);
	assert_int_equal(p->origin.net_mode.col, 9);
	assert_int_equal(net->n_endpoints, 4);

	ep = &net->endpoints[0];
	assert_string_equal(ep->host, "api.github.com");
	assert_string_equal(ep->id, "github");
	assert_int_equal(ep->n_ports, 1);
	assert_int_equal(ep->ports[0], 443);
	assert_true(ep->intercept);
	assert_int_equal(ep->loc.line, 6);
	assert_int_equal(ep->loc.col, 7);
	assert_ptr_equal(ep->loc.file, p->file);
	/* access: read-only is one rule named like the endpoint. */
	assert_int_equal(ep->n_rules, 1);
	r = &ep->rules[0];
	assert_string_equal(r->id, "github");
	assert_int_equal(r->n_methods, 3);
	assert_string_equal(r->methods[0], "GET");
	assert_string_equal(r->methods[1], "HEAD");
	assert_string_equal(r->methods[2], "OPTIONS");
	assert_null(r->methods[3]);
	assert_null(r->path);
	assert_null(r->query);
	assert_false(r->websocket);
	assert_int_equal(r->loc.line, 10);

	ep = &net->endpoints[1];
	assert_string_equal(ep->host, "*.example.com");
	assert_string_equal(ep->id, "network.endpoints[1]");
	assert_int_equal(ep->n_ports, 2);
	assert_int_equal(ep->ports[0], 80);
	assert_int_equal(ep->ports[1], 8080);
	assert_false(ep->intercept);
	assert_int_equal(ep->n_rules, 2);
	r = &ep->rules[0];
	assert_string_equal(r->id, "network.endpoints[1].rules[0]");
	assert_int_equal(r->n_methods, 2);
	assert_string_equal(r->methods[0], "GET");
	assert_string_equal(r->methods[1], "POST");
	assert_null(r->methods[2]);
	/* %7e is '~' (unreserved: decoded); %2f stays encoded, in upper case. */
	assert_string_equal(r->path, "/repos/~user/%2F/**");
	assert_string_equal(r->query, "page=*");
	assert_false(r->websocket);
	assert_int_equal(r->loc.line, 14);
	assert_int_equal(r->loc.col, 11);
	r = &ep->rules[1];
	assert_string_equal(r->id, "ws");
	assert_null(r->methods);
	assert_int_equal(r->n_methods, 0);
	assert_string_equal(r->path, "/ws");
	assert_null(r->query);
	assert_true(r->websocket);

	ep = &net->endpoints[2];
	assert_string_equal(ep->host, "127.0.0.1");
	assert_int_equal(ep->n_rules, 0); /* read-write: every request */
	ep = &net->endpoints[3];
	assert_string_equal(ep->host, "2001:db8::1");
	assert_int_equal(ep->n_ports, 2);
	assert_int_equal(ep->ports[0], 80);
	assert_int_equal(ep->ports[1], 443);

	assert_int_equal(net->n_allow_private, 6);
	assert_int_equal(net->allow_private[0].family, AF_INET);
	assert_memory_equal(net->allow_private[0].addr, "\x7f\0\0\x01", 4);
	assert_int_equal(net->allow_private[0].prefix, 32);
	assert_int_equal(net->allow_private[0].port, 8080);
	assert_int_equal(net->allow_private[0].loc.line, 24);
	assert_int_equal(net->allow_private[0].loc.col, 19);
	assert_int_equal(net->allow_private[1].family, AF_INET);
	assert_memory_equal(net->allow_private[1].addr, ten, 16);
	assert_int_equal(net->allow_private[1].prefix, 8);
	assert_int_equal(net->allow_private[1].port, 0);
	assert_int_equal(net->allow_private[2].family, AF_INET6);
	assert_memory_equal(net->allow_private[2].addr, v6_loopback, 16);
	assert_int_equal(net->allow_private[2].prefix, 128);
	assert_int_equal(net->allow_private[2].port, 9000);
	assert_int_equal(net->allow_private[3].family, AF_INET6);
	assert_memory_equal(net->allow_private[3].addr, fd00, 16);
	assert_int_equal(net->allow_private[3].prefix, 8);
	assert_int_equal(net->allow_private[3].port, 0);
	assert_int_equal(net->allow_private[4].prefix, 8);
	assert_int_equal(net->allow_private[4].port, 443);
	assert_int_equal(net->allow_private[5].prefix, 32);

	assert_int_equal(net->n_resolve, 2);
	assert_string_equal(net->resolve[0].host, "test.example");
	assert_string_equal(net->resolve[0].addr, "127.0.0.1");
	assert_int_equal(net->resolve[0].loc.line, 25);
	assert_int_equal(net->resolve[0].loc.col, 13);
	assert_string_equal(net->resolve[1].host, "v6.example");
	assert_string_equal(net->resolve[1].addr, "::1");

	assert_string_equal(net->upstream_ca, "/etc/airlock/ca.pem");
	assert_int_equal(p->origin.upstream_ca.line, 26);
	assert_int_equal(net->max_body, 2 * 1024 * 1024);
	assert_true(net->allow_compressed);
	assert_int_equal(p->origin.max_body.line, 27);
	assert_int_equal(p->origin.allow_compressed.line, 27);
	assert_string_equal(net->log, "/work/net.jsonl");
	assert_int_equal(p->origin.net_log.line, 28);
	assert_round_trip(p);
}

static void test_network_mode(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p = load_net("  mode: proxy\n  default: deny\n");
		assert_int_equal(p->network.mode, POLICY_NET_PROXY);
	}
	NET_BAD("  mode: direct\n",
		"policy.yaml:3:9: network.mode: \"direct\" is not one of proxy, transparent");
	NET_BAD("  mode: none\n",
		"policy.yaml:3:9: network.mode: \"none\" is not one of proxy, transparent");
	NET_BAD("  default: allow\n", "policy.yaml:3:12: network.default: \"allow\" is not one of deny");
	NET_BAD("  default:\n", "policy.yaml:3:11: network.default: has no value; expected one of deny");
}

static void test_network_hosts(void **state)
{
	static const struct {
		const char *in, *out;
	} good[] = {
		{ "API.Example.COM.", "api.example.com" },
		{ "localhost", "localhost" },
		{ "_dmarc.x-y.example", "_dmarc.x-y.example" },
		{ "xn--bcher-kva.example", "xn--bcher-kva.example" },
		{ "'*.Example.com'", "*.example.com" },
		{ "'*.a.example.com.'", "*.a.example.com" },
		{ "10.1.2.3", "10.1.2.3" },
		{ "10.1.2.3.", "10.1.2.3" },
		{ "0.0.0.0", "0.0.0.0" },
		{ "'[::1]'", "::1" },
		{ "'::1'", "::1" },
		{ "'[2001:DB8:0:0:0:0:0:1]'", "2001:db8::1" },
		{ "'::ffff:192.0.2.1'", "192.0.2.1" },
		{ "'[::ffff:c000:201]'", "192.0.2.1" },
		{ "'::192.0.2.1'", "192.0.2.1" },
		{ "'64:ff9b::192.0.2.1'", "64:ff9b::c000:201" },
		{ "1x.example", "1x.example" },
		{ "0x1g.example", "0x1g.example" },
		{ "example.0x1g", "example.0x1g" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char yaml[256];
		snprintf(yaml, sizeof(yaml), "  endpoints: [{host: %s}]\n", good[i].in);
		_cleanup_policy_ struct policy *p = load_net(yaml);
		assert_string_equal(p->network.endpoints[0].host, good[i].out);
		assert_round_trip(p);
	}

	NET_BAD("  endpoints: [{host: \"*\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"*\" would allow every host; list the "
		"hosts, or use \"*.example.com\" for the names under one domain");
	NET_BAD("  endpoints: [{host: \"*.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"*.com\" covers a whole top-level "
		"domain; give at least two labels after \"*.\" (e.g. \"*.example.com\")");
	NET_BAD("  endpoints: [{host: \"*.com.\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"*.com.\" covers a whole top-level "
		"domain; give at least two labels after \"*.\" (e.g. \"*.example.com\")");
	NET_BAD("  endpoints: [{host: \"a.*.example.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"a.*.example.com\" has a '*' that is "
		"not the whole first label; the only wildcard is \"*.\" at the start (e.g. "
		"\"*.example.com\")");
	NET_BAD("  endpoints: [{host: \"*example.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"*example.com\" has a '*' that is not "
		"the whole first label; the only wildcard is \"*.\" at the start (e.g. "
		"\"*.example.com\")");
	NET_BAD("  endpoints: [{host: \"**.example.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"**.example.com\" has a '*' that is not "
		"the whole first label; the only wildcard is \"*.\" at the start (e.g. "
		"\"*.example.com\")");
	NET_BAD("  endpoints: [{host: \"*.*.example.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"*.*.example.com\" has a '*' that is "
		"not the whole first label; the only wildcard is \"*.\" at the start (e.g. "
		"\"*.example.com\")");
	NET_BAD("  endpoints: [{host: \"*.0.0.1\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"*.0.0.1\" puts a wildcard before a "
		"number; a wildcard covers the subdomains of a DNS name (e.g. \"*.example.com\")");
	NET_BAD("  endpoints: [{host: exa_mple.com:443}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"exa_mple.com:443\" has a port; write "
		"the host alone and list ports in ports (e.g. ports: [8080])");
	NET_BAD("  endpoints: [{host: \"[::1]:443\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"[::1]:443\" has a port; write the host "
		"alone and list ports in ports (e.g. ports: [8080])");
	NET_BAD("  endpoints: [{host: \"https://api.example.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"https://api.example.com\" is a URL or "
		"has a path; write the host name alone (e.g. api.example.com)");
	NET_BAD("  endpoints: [{host: \"user@example.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"user@example.com\" is a URL or has a "
		"path; write the host name alone (e.g. api.example.com)");
	NET_BAD("  endpoints: [{host: \"exa mple.com\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"exa mple.com\" has a character not "
		"allowed in a host name; use letters, digits, '-', '_' and dots (internationalised "
		"names in their xn-- form)");
	NET_BAD("  endpoints: [{host: \"bücher.example\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"bücher.example\" has a character not "
		"allowed in a host name; use letters, digits, '-', '_' and dots (internationalised "
		"names in their xn-- form)");
	NET_BAD("  endpoints: [{host: \"a%2eexample\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"a%2eexample\" has a character not "
		"allowed in a host name; use letters, digits, '-', '_' and dots (internationalised "
		"names in their xn-- form)");
	NET_BAD("  endpoints: [{host: a..example}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"a..example\" has an empty label (two "
		"dots in a row, or a dot at the start); write a host name such as api.example.com");
	NET_BAD("  endpoints: [{host: .example}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \".example\" has an empty label (two "
		"dots in a row, or a dot at the start); write a host name such as api.example.com");
	NET_BAD("  endpoints: [{host: \".\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \".\" has an empty label (two dots in a "
		"row, or a dot at the start); write a host name such as api.example.com");
	NET_BAD("  endpoints: [{host: \"\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: is empty; expected a host name (e.g. "
		"api.example.com)");
	NET_BAD("  endpoints: [{host: }]\n", "policy.yaml:3:22: network.endpoints[0].host: has no "
					    "value; expected a host name (e.g. api.example.com)");
	NET_BAD("  endpoints: [{host: [a]}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: is a list; expected a host name (e.g. "
		"api.example.com)");
	/* Shorthand IPv4 is refused in a policy: it says what it means. */
	static const char *const numeric[] = { "127.1",	    "2130706433", "0x7f.1",	"0177.0.0.1",
					       "127.0.0.01", "256.1.1.1",  "1.2.3.4.5", "example.123",
					       "a.0x10",     "1.2.3.",	   "0x" };
	for (size_t i = 0; i < ARRAY_SIZE(numeric); i++) {
		char yaml[128], msg[512];
		snprintf(yaml, sizeof(yaml), "  endpoints: [{host: \"%s\"}]\n", numeric[i]);
		snprintf(msg, sizeof(msg),
			 "policy.yaml:3:22: network.endpoints[0].host: \"%s\" ends in a number, so it "
			 "is not a DNS name, and it is not a dotted quad; write an IPv4 address as four "
			 "decimal numbers from 0 to 255 without leading zeros (e.g. 127.0.0.1)",
			 numeric[i]);
		if (strcmp(numeric[i], "1.2.3.") == 0)
			continue; /* "1.2.3" after the root dot: numeric as well */
		NET_BAD(yaml, msg);
	}
	NET_BAD("  endpoints: [{host: \"1.2.3.\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"1.2.3.\" ends in a number, so it is not "
		"a DNS name, and it is not a dotted quad; write an IPv4 address as four decimal "
		"numbers from 0 to 255 without leading zeros (e.g. 127.0.0.1)");
	NET_BAD("  endpoints: [{host: \"fe80::1%eth0\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"fe80::1%eth0\" is not an IPv6 address; "
		"write one without a zone (e.g. ::1, 2001:db8::1)");
	NET_BAD("  endpoints: [{host: \"[::1\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"[::1\" is not an IPv6 address; write "
		"one without a zone (e.g. ::1, 2001:db8::1)");
	NET_BAD("  endpoints: [{host: \"[127.0.0.1]\"}]\n",
		"policy.yaml:3:22: network.endpoints[0].host: \"[127.0.0.1]\" is not an IPv6 address; "
		"write one without a zone (e.g. ::1, 2001:db8::1)");

	/* 63-byte labels and 253-byte names are the limits. */
	{
		char label[64], name[300], yaml[400], msg[700];
		memset(label, 'a', 63);
		label[63] = '\0';
		snprintf(name, sizeof(name), "%s.%s.%s.%.61s", label, label, label, label);
		assert_int_equal(strlen(name), 253);
		snprintf(yaml, sizeof(yaml), "  endpoints: [{host: %s}]\n", name);
		_cleanup_policy_ struct policy *p = load_net(yaml);
		assert_string_equal(p->network.endpoints[0].host, name);

		snprintf(yaml, sizeof(yaml), "  endpoints: [{host: %s.}]\n", name);
		_cleanup_policy_ struct policy *q = load_net(yaml);
		assert_string_equal(q->network.endpoints[0].host, name);

		snprintf(yaml, sizeof(yaml), "  endpoints: [{host: a%s}]\n", name);
		snprintf(msg, sizeof(msg),
			 "policy.yaml:3:22: network.endpoints[0].host: \"a%.63s...\" has a label longer "
			 "than 63 bytes, which DNS cannot carry",
			 name);
		NET_BAD(yaml, msg);
		snprintf(yaml, sizeof(yaml), "  endpoints: [{host: a.%s}]\n", name);
		snprintf(msg, sizeof(msg),
			 "policy.yaml:3:22: network.endpoints[0].host: \"a.%.62s...\" is longer than 253 "
			 "bytes, which DNS cannot carry",
			 name);
		NET_BAD(yaml, msg);
	}

	/* A plain *.example.com is a YAML alias: the message says to quote it. */
	NET_BAD("  endpoints:\n    - host: *.example.com\n",
		"policy.yaml:4:13: network.endpoints[0].host: invalid YAML: a plain value cannot start "
		"with '*', which YAML reads as an alias; quote it (e.g. \"*.example.com\")");
}

static void test_network_endpoint_shape(void **state)
{
	(void)state;
	NET_BAD("  endpoints: {host: a.example}\n",
		"policy.yaml:3:14: network.endpoints: is a map; expected a list (e.g. [a, b] or \"- a\" "
		"lines)");
	NET_BAD("  endpoints: [a.example]\n",
		"policy.yaml:3:15: network.endpoints[0]: is a single value; expected a map of settings "
		"(key: value lines)");
	NET_BAD("  endpoints: [{ports: [443]}]\n",
		"policy.yaml:3:15: network.endpoints[0]: has no host; give the host it allows (e.g. "
		"{host: api.example.com, ports: [443]})");
	NET_BAD("  endpoints: [{host: a.example, tls: terminate}]\n",
		"policy.yaml:3:38: network.endpoints[0].tls: \"terminate\" is not one of passthrough, "
		"intercept");
	NET_BAD("  endpoints: [{host: a.example, id: \"my id\"}]\n",
		"policy.yaml:3:37: network.endpoints[0].id: \"my id\" is not a valid id; use 1 to 128 "
		"printable ASCII characters without spaces");
	NET_BAD("  endpoints: [{host: a.example, id: \"\"}]\n",
		"policy.yaml:3:37: network.endpoints[0].id: \"\" is not a valid id; use 1 to 128 "
		"printable ASCII characters without spaces");
	{
		_cleanup_policy_ struct policy *p = load_net("  endpoints: []\n");
		assert_int_equal(p->network.n_endpoints, 0);
		assert_int_equal(p->network.mode, POLICY_NET_PROXY);
	}
}

static void test_network_ports(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p =
			load_net("  endpoints: [{host: a.example, ports: [1, 65535, 8080]}]\n");
		assert_int_equal(p->network.endpoints[0].n_ports, 3);
		assert_int_equal(p->network.endpoints[0].ports[0], 1);
		assert_int_equal(p->network.endpoints[0].ports[1], 65535);
		assert_int_equal(p->network.endpoints[0].ports[2], 8080);
	}
	NET_BAD("  endpoints: [{host: a.example, ports: [0]}]\n",
		"policy.yaml:3:41: network.endpoints[0].ports[0]: \"0\" is not a port; use an integer "
		"from 1 to 65535");
	NET_BAD("  endpoints: [{host: a.example, ports: [65536]}]\n",
		"policy.yaml:3:41: network.endpoints[0].ports[0]: \"65536\" is not a port; use an "
		"integer from 1 to 65535");
	NET_BAD("  endpoints: [{host: a.example, ports: [https]}]\n",
		"policy.yaml:3:41: network.endpoints[0].ports[0]: \"https\" is not a port; use an "
		"integer from 1 to 65535");
	NET_BAD("  endpoints: [{host: a.example, ports: [0443]}]\n",
		"policy.yaml:3:41: network.endpoints[0].ports[0]: \"0443\" is not a port; use an "
		"integer from 1 to 65535");
	NET_BAD("  endpoints: [{host: a.example, ports: [\"443\"]}]\n",
		"policy.yaml:3:41: network.endpoints[0].ports[0]: \"443\" is a quoted string; write the "
		"port without quotes");
	NET_BAD("  endpoints: [{host: a.example, ports: [443, 80, 443]}]\n",
		"policy.yaml:3:50: network.endpoints[0].ports[2]: \"443\" is listed twice (first at "
		"network.endpoints[0].ports[0]); remove one");
	NET_BAD("  endpoints: [{host: a.example, ports: []}]\n",
		"policy.yaml:3:40: network.endpoints[0].ports: is an empty list, which allows nothing; "
		"list ports (e.g. [443]), or omit ports for [80, 443]");
	NET_BAD("  endpoints: [{host: a.example, ports: 443}]\n",
		"policy.yaml:3:40: network.endpoints[0].ports: is a single value; expected a list (e.g. "
		"[a, b] or \"- a\" lines)");
}

static void test_network_rules(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p = load_net(
			"  endpoints:\n"
			"    - host: a.example\n"
			"      tls: intercept\n"
			"      rules:\n"
			"        - {}\n"
			"        - {methods: [PROPFIND, \"M-SEARCH\", get], path: \"/a%41%2fb%2F%7E*\"}\n"
			"        - {path: /x, query: \"\"}\n"
			"        - {query: \"a=%3d%7e\", websocket: false}\n");
		const struct policy_endpoint *ep = &p->network.endpoints[0];

		assert_int_equal(ep->n_rules, 4);
		assert_null(ep->rules[0].methods);
		assert_null(ep->rules[0].path);
		assert_string_equal(ep->rules[1].methods[0], "PROPFIND");
		assert_string_equal(ep->rules[1].methods[1], "M-SEARCH");
		assert_string_equal(ep->rules[1].methods[2], "GET");
		assert_string_equal(ep->rules[1].path, "/aA%2Fb%2F~*");
		assert_string_equal(ep->rules[2].query, "");
		assert_string_equal(ep->rules[3].query, "a=%3D~");
		assert_round_trip(p);
	}
#define RULE(x) "  endpoints: [{host: a.example, tls: intercept, rules: [" x "]}]\n"
	NET_BAD(RULE("{methods: [\"GE T\"]}"),
		"policy.yaml:3:68: network.endpoints[0].rules[0].methods[0]: \"GE T\" is not an HTTP "
		"method; use a method name such as GET or POST (omit methods for any method)");
	NET_BAD(RULE("{methods: [\"*\"]}"),
		"policy.yaml:3:68: network.endpoints[0].rules[0].methods[0]: \"*\" is not an HTTP "
		"method; use a method name such as GET or POST (omit methods for any method)");
	NET_BAD(RULE("{methods: [GET, get]}"),
		"policy.yaml:3:73: network.endpoints[0].rules[0].methods[1]: \"get\" is listed twice "
		"(first at network.endpoints[0].rules[0].methods[0]); remove one");
	NET_BAD(RULE("{methods: []}"),
		"policy.yaml:3:67: network.endpoints[0].rules[0].methods: is an empty list, which "
		"matches no request; list methods (e.g. [GET]), or omit methods for any method");
	NET_BAD(RULE("{path: repos/**}"),
		"policy.yaml:3:64: network.endpoints[0].rules[0].path: \"repos/**\" does not start with "
		"/; a path glob is matched against the whole path (e.g. /repos/**)");
	NET_BAD(RULE("{path: \"\"}"),
		"policy.yaml:3:64: network.endpoints[0].rules[0].path: is empty; expected a path glob "
		"starting with / (e.g. /repos/**)");
	NET_BAD(RULE("{path: \"/a?b=1\"}"),
		"policy.yaml:3:64: network.endpoints[0].rules[0].path: \"/a?b=1\" has a space, control "
		"character, non-ASCII byte, '#' or '?'; percent-encode it as it appears in requests "
		"(e.g. %20), and match the query with query");
	NET_BAD(RULE("{path: \"/a b\"}"),
		"policy.yaml:3:64: network.endpoints[0].rules[0].path: \"/a b\" has a space, control "
		"character, non-ASCII byte, '#' or '?'; percent-encode it as it appears in requests "
		"(e.g. %20), and match the query with query");
	NET_BAD(RULE("{path: \"/100%\"}"),
		"policy.yaml:3:64: network.endpoints[0].rules[0].path: \"/100%\" has a % not followed "
		"by two hex digits; write %25 for a literal %");
	NET_BAD(RULE("{query: \"a#b\"}"),
		"policy.yaml:3:65: network.endpoints[0].rules[0].query: \"a#b\" has a space, control "
		"character, non-ASCII byte or '#'; percent-encode it as it appears in requests (e.g. "
		"%20)");
	NET_BAD(RULE("{query: [a]}"),
		"policy.yaml:3:65: network.endpoints[0].rules[0].query: is a list; expected a query "
		"glob (e.g. \"page=*\")");
	NET_BAD(RULE("{websocket: \"true\"}"),
		"policy.yaml:3:69: network.endpoints[0].rules[0].websocket: \"true\" is a quoted "
		"string; write true or false without quotes");
	NET_BAD(RULE("{id: \"a\\tb\"}"),
		"policy.yaml:3:62: network.endpoints[0].rules[0].id: \"a\\tb\" is not a valid id; use 1 "
		"to 128 printable ASCII characters without spaces");
	NET_BAD(RULE("GET"),
		"policy.yaml:3:57: network.endpoints[0].rules[0]: is a single value; expected a map of "
		"settings (key: value lines)");
	NET_BAD("  endpoints: [{host: a.example, tls: intercept, rules: []}]\n",
		"policy.yaml:3:56: network.endpoints[0].rules: is an empty list; list the requests "
		"allowed, or omit rules to allow every request");
#undef RULE
}

static void test_network_access_and_tls(void **state)
{
	(void)state;
	{
		/* Rules on plain-HTTP ports need no interception. */
		_cleanup_policy_ struct policy *p =
			load_net("  endpoints:\n"
				 "    - {host: a.example, ports: [80, 8080], access: read-only}\n"
				 "    - {host: b.example, ports: [80], rules: [{methods: [GET]}]}\n"
				 "    - {host: c.example, access: read-write}\n");
		assert_int_equal(p->network.endpoints[0].n_rules, 1);
		assert_int_equal(p->network.endpoints[1].n_rules, 1);
		assert_int_equal(p->network.endpoints[2].n_rules, 0);
		assert_false(p->network.endpoints[2].intercept);
		assert_round_trip(p);
	}
	NET_BAD("  endpoints:\n    - {host: a.example, ports: [443], access: read-only}\n",
		"policy.yaml:4:47: network.endpoints[0].access: rules need tls: intercept to see inside "
		"HTTPS; add tls: intercept, or list only plain-HTTP ports (ports: [80])");
	/* The default ports include 443. */
	NET_BAD("  endpoints:\n    - {host: a.example, rules: [{path: /x}]}\n",
		"policy.yaml:4:32: network.endpoints[0].rules: rules need tls: intercept to see inside "
		"HTTPS; add tls: intercept, or list only plain-HTTP ports (ports: [80])");
	NET_BAD("  endpoints:\n    - {host: a.example, tls: passthrough, access: read-only}\n",
		"policy.yaml:4:51: network.endpoints[0].access: rules need tls: intercept to see inside "
		"HTTPS; add tls: intercept, or list only plain-HTTP ports (ports: [80])");
	NET_BAD("  endpoints:\n    - {host: a.example, tls: intercept, access: read-only, rules: "
		"[{}]}\n",
		"policy.yaml:4:41: network.endpoints[0].access: cannot be combined with rules; use "
		"access for a preset, or list the requests in rules");
	NET_BAD("  endpoints:\n    - {host: a.example, access: write}\n",
		"policy.yaml:4:33: network.endpoints[0].access: \"write\" is not one of read-only, "
		"read-write");
	/* read-write needs no interception: it is every request. */
	{
		_cleanup_policy_ struct policy *p =
			load_net("  endpoints: [{host: a.example, access: read-write}]\n");
		assert_int_equal(p->network.endpoints[0].n_rules, 0);
	}
}

static void test_network_duplicates(void **state)
{
	(void)state;
	{
		/* Same host on other ports, and a wildcard after the names it
		 * covers, are fine. */
		_cleanup_policy_ struct policy *p = load_net("  endpoints:\n"
							     "    - {host: a.example.com, ports: [443]}\n"
							     "    - {host: A.example.com., ports: [80]}\n"
							     "    - {host: \"*.example.com\"}\n"
							     "    - {host: example.com}\n"
							     "    - {host: \"*.other.example.org\"}\n"
							     "    - {host: \"*.example.org\", ports: [8080]}\n");
		assert_int_equal(p->network.n_endpoints, 6);
		assert_round_trip(p);
	}
	NET_BAD("  endpoints:\n"
		"    - {host: a.example.com, ports: [80, 443]}\n"
		"    - {host: A.Example.com., ports: [443, 8443]}\n",
		"policy.yaml:5:14: network.endpoints[1].host: \"a.example.com\" port 443 is also in "
		"network.endpoints[0] (line 4); give each host and port once (merge the two entries)");
	NET_BAD("  endpoints:\n"
		"    - {host: \"*.example.com\", ports: [443]}\n"
		"    - {host: api.example.com, tls: intercept, access: read-only}\n",
		"policy.yaml:5:14: network.endpoints[1].host: \"api.example.com\" port 443 is already "
		"matched by network.endpoints[0] (\"*.example.com\", line 4), which comes first and "
		"decides; put the more specific entry first, or drop the port from one");
	NET_BAD("  endpoints:\n"
		"    - {host: \"*.example.com\"}\n"
		"    - {host: \"*.a.example.com\", ports: [80]}\n",
		"policy.yaml:5:14: network.endpoints[1].host: \"*.a.example.com\" port 80 is already "
		"matched by network.endpoints[0] (\"*.example.com\", line 4), which comes first and "
		"decides; put the more specific entry first, or drop the port from one");
	NET_BAD("  endpoints:\n"
		"    - {host: \"127.0.0.1\", ports: [8080]}\n"
		"    - {host: \"::ffff:127.0.0.1\", ports: [8080]}\n",
		"policy.yaml:5:14: network.endpoints[1].host: \"127.0.0.1\" port 8080 is also in "
		"network.endpoints[0] (line 4); give each host and port once (merge the two entries)");
}

static void test_network_ids(void **state)
{
	(void)state;
	NET_BAD("  endpoints:\n"
		"    - {host: a.example, id: x}\n"
		"    - {host: b.example, id: x}\n",
		"policy.yaml:5:29: network.endpoints[1].id: \"x\" is also the id of network.endpoints[0] "
		"(line 4); give each endpoint and rule its own id");
	NET_BAD("  endpoints:\n"
		"    - {host: a.example, id: x}\n"
		"    - {host: b.example, ports: [80], rules: [{id: x}]}\n",
		"policy.yaml:5:51: network.endpoints[1].rules[0].id: \"x\" is also the id of "
		"network.endpoints[0] (line 4); give each endpoint and rule its own id");
	/* A rule may not take its own endpoint's id either. */
	NET_BAD("  endpoints:\n"
		"    - {host: a.example, id: x, ports: [80], rules: [{id: x}]}\n",
		"policy.yaml:4:58: network.endpoints[0].rules[0].id: \"x\" is also the id of "
		"network.endpoints[0] (line 4); give each endpoint and rule its own id");
	/* A given id may not take a default one. */
	NET_BAD("  endpoints:\n"
		"    - {host: a.example, id: \"network.endpoints[1]\"}\n"
		"    - {host: b.example}\n",
		"policy.yaml:4:29: network.endpoints[0].id: \"network.endpoints[1]\" is also the id of "
		"network.endpoints[1] (line 5); give each endpoint and rule its own id");
	NET_BAD("  endpoints:\n"
		"    - {host: a.example, ports: [80], rules: [{id: r}, {id: r}]}\n",
		"policy.yaml:4:60: network.endpoints[0].rules[1].id: \"r\" is also the id of "
		"network.endpoints[0].rules[0] (line 4); give each endpoint and rule its own id");
}

static void test_network_allow_private(void **state)
{
	static const struct {
		const char *in, *printed;
	} good[] = {
		{ "127.0.0.1", "127.0.0.1" },
		{ "127.0.0.1/32", "127.0.0.1" },
		{ "127.0.0.1:8080", "127.0.0.1:8080" },
		{ "10.0.0.0/8:5432", "10.0.0.0/8:5432" },
		{ "0.0.0.0/0", "0.0.0.0/0" },
		{ "::1", "::1" },
		{ "[::1]", "::1" },
		{ "[::1]:9000", "[::1]:9000" },
		{ "FD00::/8", "fd00::/8" },
		{ "[fd00::]/8", "fd00::/8" },
		{ "[fd00::]/8:443", "[fd00::]/8:443" },
		/* Without brackets every ':' is the address's. */
		{ "fd00::1:443", "fd00::1:443" },
		{ "64:ff9b::/96", "64:ff9b::/96" },
		{ "::/0", "::/0" },
		{ "::", "::" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char yaml[256], buf[80];
		struct policy_cidr c;

		snprintf(yaml, sizeof(yaml), "  allow_private: [\"%s\"]\n", good[i].in);
		_cleanup_policy_ struct policy *p = load_net(yaml);
		assert_int_equal(p->network.n_allow_private, 1);
		policy_cidr_format(&p->network.allow_private[0], buf, sizeof(buf));
		assert_string_equal(buf, good[i].printed);
		assert_int_equal(policy_cidr_parse(buf, &c), POLICY_CIDR_OK);
		assert_int_equal(c.family, p->network.allow_private[0].family);
		assert_int_equal(c.prefix, p->network.allow_private[0].prefix);
		assert_int_equal(c.port, p->network.allow_private[0].port);
		assert_memory_equal(c.addr, p->network.allow_private[0].addr, 16);
		assert_round_trip(p);
	}

	static const char *const syntax[] = { "localhost",  "10.0.0",      "[10.0.0.1]",
					      "[::1",	    "::1]:80",	   "10.0.0.1:80:80", "",
					      "10.0.0.01", "0x7f.1",	   "[::1]x",	   "fe80::1%eth0" };
	for (size_t i = 0; i < ARRAY_SIZE(syntax); i++) {
		char yaml[128], msg[512];
		snprintf(yaml, sizeof(yaml), "  allow_private: [\"%s\"]\n", syntax[i]);
		snprintf(msg, sizeof(msg),
			 "policy.yaml:3:19: network.allow_private[0]: \"%s\" is not an address or range; "
			 "write ADDRESS[/PREFIX][:PORT] (e.g. 10.0.0.0/8, 127.0.0.1:8080, fd00::/8, "
			 "[::1]:9000: an IPv6 address with a port needs brackets)",
			 syntax[i]);
		NET_BAD(yaml, msg);
	}
	NET_BAD("  allow_private: [10.0.0.0/8/8]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"10.0.0.0/8/8\" has an invalid prefix "
		"length; use /0 to /32 for IPv4, /0 to /128 for IPv6");
	NET_BAD("  allow_private: [10.0.0.0/33]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"10.0.0.0/33\" has an invalid prefix "
		"length; use /0 to /32 for IPv4, /0 to /128 for IPv6");
	NET_BAD("  allow_private: [\"fd00::/129\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"fd00::/129\" has an invalid prefix "
		"length; use /0 to /32 for IPv4, /0 to /128 for IPv6");
	NET_BAD("  allow_private: [\"10.0.0.0/08\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"10.0.0.0/08\" has an invalid prefix "
		"length; use /0 to /32 for IPv4, /0 to /128 for IPv6");
	NET_BAD("  allow_private: [\"10.0.0.0/\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"10.0.0.0/\" has an invalid prefix "
		"length; use /0 to /32 for IPv4, /0 to /128 for IPv6");
	NET_BAD("  allow_private: [\"127.0.0.1:0\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"127.0.0.1:0\" has an invalid port; use 1 "
		"to 65535, or no port for every port");
	NET_BAD("  allow_private: [\"[::1]:65536\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"[::1]:65536\" has an invalid port; use 1 "
		"to 65535, or no port for every port");
	NET_BAD("  allow_private: [10.1.2.3/8]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"10.1.2.3/8\" has bits set past its prefix "
		"length; write 10.0.0.0/8");
	NET_BAD("  allow_private: [\"[fd00::1]/8:443\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"[fd00::1]/8:443\" has bits set past its "
		"prefix length; write [fd00::]/8:443");
	NET_BAD("  allow_private: [\"::ffff:127.0.0.1\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"::ffff:127.0.0.1\" is an IPv4-mapped or "
		"IPv4-compatible IPv6 range, which never matches: those addresses are checked as IPv4; "
		"write the IPv4 address or range (and an IPv6 address with a port in brackets: [::1]:9000)");
	NET_BAD("  allow_private: [\"::ffff:0:0/96\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"::ffff:0:0/96\" is an IPv4-mapped or "
		"IPv4-compatible IPv6 range, which never matches: those addresses are checked as IPv4; "
		"write the IPv4 address or range (and an IPv6 address with a port in brackets: [::1]:9000)");
	NET_BAD("  allow_private: [\"::10.0.0.1\"]\n",
		"policy.yaml:3:19: network.allow_private[0]: \"::10.0.0.1\" is an IPv4-mapped or "
		"IPv4-compatible IPv6 range, which never matches: those addresses are checked as IPv4; "
		"write the IPv4 address or range (and an IPv6 address with a port in brackets: [::1]:9000)");
	NET_BAD("  allow_private: [10.0.0.0/8, 127.0.0.1, 10.0.0.0/8]\n",
		"policy.yaml:3:42: network.allow_private[2]: \"10.0.0.0/8\" is listed twice (first at "
		"network.allow_private[0], line 3); remove one");
	NET_BAD("  allow_private: [[10.0.0.0/8]]\n",
		"policy.yaml:3:19: network.allow_private[0]: is a list; expected an address or range "
		"(e.g. 10.0.0.0/8, 127.0.0.1:8080)");
}

static void test_network_resolve(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p =
			load_net("  resolve:\n"
				 "    A.Example.: 192.0.2.1\n"
				 "    b.example: \"2001:DB8::0:1\"\n"
				 "    c.example: \"::ffff:10.0.0.1\"\n");
		assert_int_equal(p->network.n_resolve, 3);
		assert_string_equal(p->network.resolve[0].host, "a.example");
		assert_string_equal(p->network.resolve[0].addr, "192.0.2.1");
		assert_string_equal(p->network.resolve[1].addr, "2001:db8::1");
		assert_string_equal(p->network.resolve[2].addr, "10.0.0.1");
		assert_round_trip(p);
	}
	NET_BAD("  resolve: {a.example: 1.2.3.4, A.EXAMPLE.: 1.2.3.5}\n",
		"policy.yaml:3:33: network.resolve.\"A.EXAMPLE.\": \"A.EXAMPLE.\" is the same name as "
		"the entry at line 3; give each name once");
	NET_BAD("  resolve: {\"*.example.com\": 1.2.3.4}\n",
		"policy.yaml:3:13: network.resolve.\"*.example.com\": \"*.example.com\" is a wildcard; "
		"resolve maps one exact name to an address");
	NET_BAD("  resolve: {1.2.3.4: 1.2.3.5}\n",
		"policy.yaml:3:13: network.resolve.\"1.2.3.4\": \"1.2.3.4\" is an address; resolve maps a "
		"DNS name to an address (e.g. test.example: 127.0.0.1)");
	NET_BAD("  resolve: {\"a.example:80\": 1.2.3.5}\n",
		"policy.yaml:3:13: network.resolve.\"a.example:80\": \"a.example:80\" has a port; "
		"resolve maps a name, without a port");
	NET_BAD("  resolve: {a.example: localhost}\n",
		"policy.yaml:3:24: network.resolve.\"a.example\": \"localhost\" is not an IP address; "
		"write an IPv4 dotted quad or an IPv6 address (e.g. 127.0.0.1, ::1)");
	NET_BAD("  resolve: {a.example: 127.1}\n",
		"policy.yaml:3:24: network.resolve.\"a.example\": \"127.1\" is not an IP address; write "
		"an IPv4 dotted quad or an IPv6 address (e.g. 127.0.0.1, ::1)");
	NET_BAD("  resolve: {a.example: [1.2.3.4]}\n",
		"policy.yaml:3:24: network.resolve.\"a.example\": is a list; expected an IP address "
		"(e.g. 127.0.0.1 or ::1)");
	NET_BAD("  resolve: [a.example]\n",
		"policy.yaml:3:12: network.resolve: is a list; expected a map of settings (key: value "
		"lines)");
}

static void test_network_leak_scan_and_paths(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p =
			load_ok("version: 1\n"
				"sandbox: {workspace: /srv/ws}\n"
				"network:\n"
				"  upstream_ca: ~/ca/../ca.pem\n"
				"  log: $WORKSPACE/.airlock/net.jsonl\n"
				"  leak_scan: {max_body: 1GiB, allow_compressed: false}\n");
		assert_string_equal(p->network.upstream_ca, "/home/u/ca.pem");
		assert_string_equal(p->network.log, "/srv/ws/.airlock/net.jsonl");
		assert_int_equal(p->network.max_body, UINT64_C(1) << 30);
		assert_false(p->network.allow_compressed);
		assert_round_trip(p);
	}
	NET_BAD("  leak_scan: {max_body: unlimited}\n",
		"policy.yaml:3:25: network.leak_scan.max_body: cannot be unlimited: a body is held "
		"while it is scanned; give a size up to 1GiB (e.g. 1MiB)");
	NET_BAD("  leak_scan: {max_body: 0}\n",
		"policy.yaml:3:25: network.leak_scan.max_body: \"0\" would scan nothing; give a size "
		"(e.g. 1MiB)");
	NET_BAD("  leak_scan: {max_body: 1025MiB}\n",
		"policy.yaml:3:25: network.leak_scan.max_body: \"1025MiB\" is larger than 1GiB, the "
		"most that is scanned");
	NET_BAD("  leak_scan: {max_body: 99999999999999999999}\n",
		"policy.yaml:3:25: network.leak_scan.max_body: \"99999999999999999999\" is larger than "
		"1GiB, the most that is scanned");
	NET_BAD("  leak_scan: {max_body: 1 MiB}\n",
		"policy.yaml:3:25: network.leak_scan.max_body: \"1 MiB\" is not a size (e.g. 64KiB, "
		"1MiB)");
	NET_BAD("  leak_scan: {allow_compressed: yes}\n",
		"policy.yaml:3:33: network.leak_scan.allow_compressed: \"yes\" is not a boolean; write "
		"true or false");
	NET_BAD("  upstream_ca: \"\"\n", "policy.yaml:3:16: network.upstream_ca: is empty; expected "
					 "a path");
	NET_BAD("  log: $HOME/x\n",
		"policy.yaml:3:8: network.log: \"$HOME/x\" starts with an unknown variable; only "
		"$WORKSPACE is expanded (use ~ for the home directory)");
}

static void test_network_print(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok(net_policy);
	_cleanup_free_ char *text = print_to_string(p);
	(void)state;

	assert_non_null(strstr(text, "\nnetwork:  # policy.yaml:2\n"
				     "  mode: transparent  # policy.yaml:3\n"
				     "  default: deny\n"
				     "  endpoints:\n"
				     "    - host: \"api.github.com\"  # policy.yaml:6\n"
				     "      id: \"github\"\n"
				     "      ports: [443]\n"
				     "      tls: intercept\n"
				     "      access: read-only  # policy.yaml:10\n"
				     "    - host: \"*.example.com\"  # policy.yaml:11\n"
				     "      ports: [80, 8080]\n"
				     "      tls: passthrough\n"
				     "      rules:\n"
				     "        - methods: [\"GET\", \"POST\"]  # policy.yaml:14\n"
				     "          path: \"/repos/~user/%2F/**\"\n"
				     "          query: \"page=*\"\n"
				     "          websocket: false\n"
				     "        - id: \"ws\"  # policy.yaml:17\n"
				     "          path: \"/ws\"\n"
				     "          websocket: true\n"
				     "    - host: \"127.0.0.1\"  # policy.yaml:20\n"
				     "      ports: [8080]\n"
				     "      tls: passthrough\n"
				     "    - host: \"2001:db8::1\"  # policy.yaml:23\n"
				     "      ports: [80, 443]\n"
				     "      tls: passthrough\n"
				     "  allow_private:\n"
				     "    - \"127.0.0.1:8080\"  # policy.yaml:24\n"
				     "    - \"10.0.0.0/8\"  # policy.yaml:24\n"
				     "    - \"[::1]:9000\"  # policy.yaml:24\n"
				     "    - \"fd00::/8\"  # policy.yaml:24\n"
				     "    - \"[fd00::]/8:443\"  # policy.yaml:24\n"
				     "    - \"169.254.169.254\"  # policy.yaml:24\n"
				     "  resolve:\n"
				     "    \"test.example\": \"127.0.0.1\"  # policy.yaml:25\n"
				     "    \"v6.example\": \"::1\"  # policy.yaml:25\n"
				     "  upstream_ca: \"/etc/airlock/ca.pem\"  # policy.yaml:26\n"
				     "  leak_scan:\n"
				     "    max_body: 2MiB  # policy.yaml:27\n"
				     "    allow_compressed: true  # policy.yaml:27\n"
				     "  log: \"/work/net.jsonl\"  # policy.yaml:28\n"));
	assert_round_trip(p);

	/* An empty section prints its defaults. */
	{
		_cleanup_policy_ struct policy *e = load_ok("version: 1\nnetwork: {}\n");
		_cleanup_free_ char *t = print_to_string(e);
		assert_non_null(strstr(t, "\nnetwork:  # policy.yaml:2\n"
					  "  mode: proxy\n"
					  "  default: deny\n"
					  "  endpoints: []\n"
					  "  allow_private: []\n"
					  "  resolve: {}\n"
					  "  leak_scan:\n"
					  "    max_body: 1MiB\n"
					  "    allow_compressed: false\n"));
		assert_null(strstr(t, "upstream_ca"));
		assert_null(strstr(t, "log:"));
	}

	/* Hostile ids, methods and globs stay inside their quotes. */
	{
		_cleanup_policy_ struct policy *h = load_net(
			"  endpoints:\n"
			"    - host: a.example\n"
			"      id: \"x\\\"#y:'z'\"\n"
			"      tls: intercept\n"
			"      rules:\n"
			"        - {id: \"&a\", methods: [\"#\", \"!X\", \"|\", \"'\", \"`\"], path: "
			"\"/*:'\\\"*&!\", query: \"a=\\\"b\\\\\"}\n");
		assert_string_equal(h->network.endpoints[0].id, "x\"#y:'z'");
		assert_round_trip(h);
	}
}

static void test_network_equal(void **state)
{
	_cleanup_policy_ struct policy *a = load_ok(net_policy);
	(void)state;

	/* Every field takes part in the comparison. */
	static const char *const edits[][2] = {
		{ "mode: transparent", "mode: proxy" },
		{ "Api.GitHub.com.", "api.github.org" },
		{ "id: github", "id: gh" },
		{ "ports: [443]", "ports: [443, 444]" },
		{ "access: read-only", "access: read-write" },
		{ "[get, Post]", "[GET]" },
		{ "%2f/**", "**" },
		{ "\"page=*\"", "\"page=1\"" },
		{ "websocket: true", "websocket: false" },
		{ "10.0.0.0/8", "10.0.0.0/9" },
		{ "[::1]:9000", "[::1]:9001" },
		{ "Test.Example.: 127.0.0.1", "Test.Example.: 127.0.0.2" },
		{ "./ca.pem", "./ca2.pem" },
		{ "2MiB", "3MiB" },
		{ "allow_compressed: true", "allow_compressed: false" },
		{ "net.jsonl", "net2.jsonl" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(edits); i++) {
		char yaml[sizeof(net_policy) + 64];
		const char *at = strstr(net_policy, edits[i][0]);

		assert_non_null(at);
		snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(at - net_policy), net_policy,
			 edits[i][1], at + strlen(edits[i][0]));
		_cleanup_policy_ struct policy *b = load_ok(yaml);
		if (policy_equal(a, b))
			fail_msg("edit %zu (%s) not seen by policy_equal", i, edits[i][1]);
	}
}

/* ---------------------------------------------------------------- */
/* Credentials                                                       */

static const char cred_policy[] =
	"version: 1\n"
	"process:\n"
	"  env: {pass: [TERM], set: {CI: \"1\"}}\n"
	"network:\n"
	"  endpoints:\n"
	"    - {host: api.github.com, ports: [443, 8443], tls: intercept}\n"
	"    - {host: github.com, ports: [443], tls: intercept}\n"
	"    - {host: \"*.example.com\", ports: [443, 8443], tls: intercept}\n"
	"credentials:\n"
	"  - name: github\n"
	"    source: env:GITHUB_TOKEN\n"
	"    env: GITHUB_TOKEN\n"
	"    inject: placeholder\n"
	"    bindings:\n"
	"      - host: API.GitHub.com.\n"
	"        id: gh-api\n"
	"        port: 443\n"
	"        header: Authorization\n"
	"        template: \"Bearer {secret}\"\n"
	"        methods: [GET, post]\n"
	"        paths: [\"/repos/acme/**\", \"/a%7eb\"]\n"
	"      - host: github.com\n"
	"        basic: { username: x-access-token }\n"
	"        git:\n"
	"          repos: [\"/acme/widget.git\"]\n"
	"          fetch: true\n"
	"          push: [\"refs/heads/agent/**\"]\n"
	"          delete: false\n"
	"          tags: false\n"
	"  - name: example_2\n"
	"    command: [/usr/bin/gh, auth, token, \"\"]\n"
	"    inject: always\n"
	"    bindings:\n"
	"      - host: api.example.com\n"
	"        query: api_key\n"
	"      - {host: \"*.example.com\", port: 8443, header: X-Api-Key, template: \"{secret}\"}\n"
	"  - name: from-file\n"
	"    source: file:~/.config/token\n"
	"    env: FILE_TOKEN\n"
	"    bindings:\n"
	"      - host: github.com\n"
	"        git: {fetch: false, push: [\"refs/heads/a\"], delete: true, tags: true}\n";

static void test_credentials_full(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok(cred_policy);
	const struct policy_credential *c;
	const struct policy_cred_binding *b;
	(void)state;

	assert_int_equal(p->n_credentials, 3);

	c = &p->credentials[0];
	assert_string_equal(c->name, "github");
	assert_int_equal(c->source, POLICY_CRED_ENV);
	assert_string_equal(c->source_arg, "GITHUB_TOKEN");
	assert_null(c->command);
	assert_int_equal(c->n_command, 0);
	assert_string_equal(c->env, "GITHUB_TOKEN");
	assert_int_equal(c->inject, POLICY_INJECT_PLACEHOLDER);
	assert_int_equal(c->loc.line, 10);
	assert_int_equal(c->loc.col, 5);
	assert_ptr_equal(c->loc.file, p->file);
	assert_int_equal(c->n_bindings, 2);

	b = &c->bindings[0];
	assert_string_equal(b->id, "gh-api");
	assert_string_equal(b->host, "api.github.com");
	assert_int_equal(b->port, 443);
	assert_int_equal(b->where, POLICY_CRED_HEADER);
	assert_string_equal(b->header, "Authorization");
	assert_string_equal(b->tmpl, "Bearer {secret}");
	assert_null(b->username);
	assert_null(b->query);
	assert_int_equal(b->n_methods, 2);
	assert_string_equal(b->methods[0], "GET");
	assert_string_equal(b->methods[1], "POST");
	assert_null(b->methods[2]);
	assert_int_equal(b->n_paths, 2);
	assert_string_equal(b->paths[0], "/repos/acme/**");
	assert_string_equal(b->paths[1], "/a~b");
	assert_null(b->paths[2]);
	assert_null(b->git);
	assert_int_equal(b->loc.line, 15);
	assert_int_equal(b->loc.col, 15);

	b = &c->bindings[1];
	assert_string_equal(b->id, "credentials[0].bindings[1]");
	assert_string_equal(b->host, "github.com");
	assert_int_equal(b->port, 443);
	assert_int_equal(b->where, POLICY_CRED_BASIC);
	assert_string_equal(b->username, "x-access-token");
	assert_null(b->header);
	assert_null(b->tmpl);
	assert_null(b->methods);
	assert_null(b->paths);
	assert_non_null(b->git);
	assert_int_equal(b->git->n_repos, 1);
	assert_string_equal(b->git->repos[0], "/acme/widget.git");
	assert_null(b->git->repos[1]);
	assert_true(b->git->fetch);
	assert_int_equal(b->git->n_push, 1);
	assert_string_equal(b->git->push[0], "refs/heads/agent/**");
	assert_null(b->git->push[1]);
	assert_false(b->git->delete_refs);
	assert_false(b->git->tags);
	assert_int_equal(b->git->loc.line, 25);

	c = &p->credentials[1];
	assert_string_equal(c->name, "example_2");
	assert_int_equal(c->source, POLICY_CRED_COMMAND);
	assert_null(c->source_arg);
	assert_int_equal(c->n_command, 4);
	assert_string_equal(c->command[0], "/usr/bin/gh");
	assert_string_equal(c->command[1], "auth");
	assert_string_equal(c->command[2], "token");
	assert_string_equal(c->command[3], "");
	assert_null(c->command[4]);
	assert_null(c->env);
	assert_int_equal(c->inject, POLICY_INJECT_ALWAYS);
	assert_int_equal(c->n_bindings, 2);
	b = &c->bindings[0];
	assert_string_equal(b->id, "credentials[1].bindings[0]");
	assert_int_equal(b->where, POLICY_CRED_QUERY);
	assert_string_equal(b->query, "api_key");
	assert_null(b->header);
	assert_null(b->tmpl);
	assert_int_equal(b->port, 443);
	b = &c->bindings[1];
	assert_string_equal(b->host, "*.example.com");
	assert_int_equal(b->port, 8443);
	assert_string_equal(b->header, "X-Api-Key");
	assert_string_equal(b->tmpl, "{secret}");

	c = &p->credentials[2];
	assert_int_equal(c->source, POLICY_CRED_FILE);
	assert_string_equal(c->source_arg, "/home/u/.config/token");
	assert_int_equal(c->inject, POLICY_INJECT_PLACEHOLDER);
	b = &c->bindings[0];
	/* Without header, basic or query: Authorization: Bearer. */
	assert_int_equal(b->where, POLICY_CRED_HEADER);
	assert_string_equal(b->header, "Authorization");
	assert_string_equal(b->tmpl, "Bearer {secret}");
	assert_null(b->git->repos);
	assert_false(b->git->fetch);
	assert_true(b->git->delete_refs);
	assert_true(b->git->tags);

	/* The credential variables are not among the variables passed. */
	assert_int_equal(p->process.n_env_pass, 1);
	assert_round_trip(p);
}

static void test_credentials_absent_or_empty(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p = load_ok("version: 1\n");
		_cleanup_free_ char *text = print_to_string(p);

		assert_int_equal(p->n_credentials, 0);
		assert_null(p->credentials);
		assert_null(strstr(text, "credentials"));
	}
	{
		/* An empty list needs no network either. */
		_cleanup_policy_ struct policy *p = load_ok("version: 1\ncredentials: []\n");

		assert_int_equal(p->n_credentials, 0);
		assert_null(p->credentials);
		assert_round_trip(p);
	}
	BAD("version: 1\ncredentials:\n",
	    "policy.yaml:2:13: credentials: is empty; give a list or write [] for none");
	BAD("version: 1\ncredentials: {name: a}\n",
	    "policy.yaml:2:14: credentials: is a map; expected a list (e.g. [a, b] or \"- a\" lines)");
	BAD("version: 1\ncredentials: [a]\n",
	    "policy.yaml:2:15: credentials[0]: is a single value; expected a map of settings (key: "
	    "value lines)");
	/* Credentials need the proxy. */
	BAD("version: 1\ncredentials:\n  - {name: a, source: env:A, env: B, bindings: [{host: "
	    "a.example}]}\n",
	    "policy.yaml:2:1: credentials: the policy has no network section, so the agent has no "
	    "network and no credential could be used; add a network section with an endpoint with "
	    "tls: intercept for each binding's host");
}

/* Lines 1-6; credentials start on line 7. */
#define CRED_HEAD                                                           \
	"version: 1\n"                                                      \
	"network:\n"                                                        \
	"  endpoints:\n"                                                    \
	"    - {host: api.github.com, ports: [443], tls: intercept}\n"      \
	"    - {host: \"*.example.com\", ports: [443, 80], tls: intercept}\n" \
	"credentials:\n"

#define CRED_OK(yaml) load_ok(CRED_HEAD yaml)
#define CRED_BAD(yaml, expected) BAD(CRED_HEAD yaml, expected)
/* One credential on line 7 with one binding given in x. */
#define ONE_BINDING(x) "  - {name: a, source: env:A, env: B, bindings: [" x "]}\n"

static void test_credentials_keys_and_names(void **state)
{
	(void)state;
	CRED_BAD("  - {name: a, sorce: env:A}\n",
		 "policy.yaml:7:15: credentials[0].sorce: unknown key; valid keys here are name, "
		 "source, command, env, inject, bindings");
	CRED_BAD(ONE_BINDING("{host: api.github.com, headers: X}"),
		 "policy.yaml:7:72: credentials[0].bindings[0].headers: unknown key; valid keys here "
		 "are host, id, port, header, template, basic, query, methods, paths, git");
	CRED_BAD(ONE_BINDING("{host: api.github.com, git: {branches: [main]}}"),
		 "policy.yaml:7:78: credentials[0].bindings[0].git.branches: unknown key; valid keys "
		 "here are repos, fetch, push, delete, tags");
	CRED_BAD(ONE_BINDING("{host: api.github.com, basic: {user: x}}"),
		 "policy.yaml:7:80: credentials[0].bindings[0].basic.user: unknown key; valid keys "
		 "here are username");

	CRED_BAD("  - {source: env:A, env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:5: credentials[0]: has no name; give one (e.g. name: github)");
	CRED_BAD("  - {name: GitHub, source: env:A, env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:12: credentials[0].name: \"GitHub\" is not a valid name; use 1 to 64 "
		 "lower-case letters, digits, '_' and '-'");
	CRED_BAD("  - {name: \"\", source: env:A, env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:12: credentials[0].name: \"\" is not a valid name; use 1 to 64 "
		 "lower-case letters, digits, '_' and '-'");
	CRED_BAD("  - {name: "
		 "a234567890123456789012345678901234567890123456789012345678901234x, source: env:A, "
		 "env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:12: credentials[0].name: "
		 "\"a234567890123456789012345678901234567890123456789012345678901234...\" is not a "
		 "valid name; use 1 to 64 lower-case letters, digits, '_' and '-'");
	CRED_BAD("  - {name: a, source: env:A, env: A, bindings: [{host: api.github.com}]}\n"
		 "  - {name: a, source: env:B, env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:8:12: credentials[1].name: \"a\" is also the name of credentials[0] "
		 "(line 7); give each credential its own name");
}

static void test_credentials_source(void **state)
{
	(void)state;
	CRED_BAD("  - {name: a, env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:5: credentials[0]: has no source; give source: env:NAME or source: "
		 "file:PATH, or command: [PROGRAM, ARGS...] whose output is the secret");
	CRED_BAD("  - {name: a, source: env:A, command: [x], env: B, bindings: [{host: "
		 "api.github.com}]}\n",
		 "policy.yaml:7:30: credentials[0].command: cannot be combined with source; give "
		 "one: source: env:NAME or file:PATH, or command: [PROGRAM, ARGS...]");
	CRED_BAD("  - {name: a, source: \"GITHUB_TOKEN\", env: B, bindings: [{host: "
		 "api.github.com}]}\n",
		 "policy.yaml:7:23: credentials[0].source: \"GITHUB_TOKEN\" does not start with env: "
		 "or file:; write env:NAME for a variable of airlock's own environment or file:PATH "
		 "for a file, or give command: [PROGRAM, ARGS...] instead of source");
	CRED_BAD("  - {name: a, source: \"env:1A\", env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:23: credentials[0].source: \"env:1A\" does not name a variable after "
		 "env:; use letters, digits and _, not starting with a digit (e.g. env:GITHUB_TOKEN)");
	CRED_BAD("  - {name: a, source: \"file:\", env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:23: credentials[0].source: \"file:\" has no path after file:; write "
		 "file:PATH (absolute, ~/..., or relative to the policy file)");
	CRED_BAD("  - {name: a, source: [env:A], env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:23: credentials[0].source: is a list; expected env:NAME or file:PATH "
		 "(e.g. env:GITHUB_TOKEN)");
	CRED_BAD("  - {name: a, source: \"file:~x/t\", env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:23: credentials[0].source: \"file:~x/t\" names another user's home; "
		 "only ~ and ~/... are expanded");
	{
		/* Relative to the policy file's directory; $WORKSPACE expands. */
		_cleanup_policy_ struct policy *p =
			CRED_OK("  - {name: a, source: file:secrets/../tok, env: A, bindings: [{host: "
				"api.github.com}]}\n"
				"  - {name: b, source: \"file:$WORKSPACE/../tok\", env: B, bindings: "
				"[{host: api.github.com}]}\n");
		assert_string_equal(p->credentials[0].source_arg, "/etc/airlock/tok");
		assert_string_equal(p->credentials[1].source_arg, "/work/tok");
		assert_round_trip(p);
	}
	/* A secret file the agent can read is no secret. */
	CRED_BAD("  - {name: a, source: \"file:$WORKSPACE/.token\", env: B, bindings: [{host: "
		 "api.github.com}]}\n",
		 "policy.yaml:7:23: credentials[0].source: \"file:$WORKSPACE/.token\" is inside the "
		 "workspace, where the agent can read the secret itself; keep the file outside the "
		 "paths the agent sees, or hide it with filesystem.deny");
	BAD("version: 1\n"
	    "filesystem: {read: [/etc/x, ~/.config]}\n"
	    "network: {endpoints: [{host: a.example, tls: intercept}]}\n"
	    "credentials:\n"
	    "  - {name: a, source: \"file:~/.config/gh/token\", env: B, bindings: [{host: "
	    "a.example}]}\n",
	    "policy.yaml:5:23: credentials[0].source: \"file:~/.config/gh/token\" is inside "
	    "filesystem.read[1] (line 2), where the agent can read the secret itself; keep the file "
	    "outside the paths the agent sees, or hide it with filesystem.deny");
	{
		/* ... unless a deny entry hides it. */
		_cleanup_policy_ struct policy *p = load_ok(
			"version: 1\n"
			"filesystem: {read: [~/.config], deny: [~/.config/gh, $WORKSPACE/.token]}\n"
			"network: {endpoints: [{host: a.example, tls: intercept}]}\n"
			"credentials:\n"
			"  - {name: a, source: \"file:~/.config/gh/token\", env: A, bindings: [{host: "
			"a.example}]}\n"
			"  - {name: b, source: \"file:$WORKSPACE/.token\", env: B, bindings: [{host: "
			"a.example}]}\n");
		assert_string_equal(p->credentials[0].source_arg, "/home/u/.config/gh/token");
		assert_string_equal(p->credentials[1].source_arg, "/work/proj/.token");
	}

	/* command */
	{
		_cleanup_policy_ struct policy *p =
			CRED_OK("  - {name: a, command: [gh, auth, token], env: A, bindings: [{host: "
				"api.github.com}]}\n"
				"  - {name: b, command: [./bin/get-token, \"--for\", \"a b\"], env: B, "
				"bindings: [{host: api.github.com}]}\n"
				"  - {name: c, command: [~/bin/t], env: C, bindings: [{host: "
				"api.github.com}]}\n");
		/* A bare name is looked up in PATH; a path resolves like any other. */
		assert_string_equal(p->credentials[0].command[0], "gh");
		assert_string_equal(p->credentials[1].command[0], "/etc/airlock/bin/get-token");
		assert_string_equal(p->credentials[1].command[2], "a b");
		assert_string_equal(p->credentials[2].command[0], "/home/u/bin/t");
		assert_round_trip(p);
	}
	CRED_BAD("  - {name: a, command: [], env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:24: credentials[0].command: is an empty list; give the program and "
		 "its arguments (e.g. [/usr/bin/gh, auth, token])");
	CRED_BAD("  - {name: a, command: /usr/bin/gh, env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:24: credentials[0].command: is a single value; expected a list (e.g. "
		 "[a, b] or \"- a\" lines)");
	CRED_BAD("  - {name: a, command: [\"\"], env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:25: credentials[0].command[0]: is empty; expected a program (an "
		 "absolute path, or a name looked up in PATH)");
	CRED_BAD("  - {name: a, command: [gh, [x]], env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:29: credentials[0].command[1]: is a list; expected an argument (use "
		 "\"\" for an empty one)");
	/* A program the agent could replace would run outside the sandbox. */
	CRED_BAD("  - {name: a, command: [$WORKSPACE/bin/tok], env: B, bindings: [{host: "
		 "api.github.com}]}\n",
		 "policy.yaml:7:25: credentials[0].command[0]: \"$WORKSPACE/bin/tok\" is inside the "
		 "workspace, which the agent can write: it could replace the program that airlock "
		 "runs outside the sandbox; use a program installed elsewhere (e.g. /usr/bin/gh)");
	BAD("version: 1\n"
	    "filesystem: {write: [~/.local]}\n"
	    "network: {endpoints: [{host: a.example, tls: intercept}]}\n"
	    "credentials:\n"
	    "  - {name: a, command: [~/.local/bin/tok], env: B, bindings: [{host: a.example}]}\n",
	    "policy.yaml:5:25: credentials[0].command[0]: \"~/.local/bin/tok\" is inside "
	    "filesystem.write[0] (line 2), which the agent can write: it could replace the program "
	    "that airlock runs outside the sandbox; use a program installed elsewhere (e.g. "
	    "/usr/bin/gh)");
	{
		/* Read-only for the agent is fine for a program. */
		_cleanup_policy_ struct policy *p =
			load_ok("version: 1\n"
				"filesystem: {read: [~/.local]}\n"
				"network: {endpoints: [{host: a.example, tls: intercept}]}\n"
				"credentials:\n"
				"  - {name: a, command: [~/.local/bin/tok], env: B, bindings: [{host: "
				"a.example}]}\n");
		assert_string_equal(p->credentials[0].command[0], "/home/u/.local/bin/tok");
	}
}

static void test_credentials_inject_and_env(void **state)
{
	(void)state;
	CRED_BAD("  - {name: a, source: env:A, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:5: credentials[0].env: is missing; with inject: placeholder (the "
		 "default) the agent holds only a placeholder, found in this variable, so without it "
		 "the agent could never use the credential; name a variable (e.g. env: GITHUB_TOKEN), "
		 "or set inject: always");
	CRED_BAD("  - {name: a, source: env:A, inject: placeholder, bindings: [{host: "
		 "api.github.com}]}\n",
		 "policy.yaml:7:5: credentials[0].env: is missing; with inject: placeholder (the "
		 "default) the agent holds only a placeholder, found in this variable, so without it "
		 "the agent could never use the credential; name a variable (e.g. env: GITHUB_TOKEN), "
		 "or set inject: always");
	CRED_BAD("  - {name: a, source: env:A, env: B, inject: sometimes, bindings: [{host: "
		 "api.github.com}]}\n",
		 "policy.yaml:7:46: credentials[0].inject: \"sometimes\" is not one of placeholder, "
		 "always");
	CRED_BAD("  - {name: a, source: env:A, env: \"B-1\", bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:35: credentials[0].env: \"B-1\" is not a variable name; use letters, "
		 "digits and _, not starting with a digit");
	{
		/* inject: always needs no variable, also with a query binding. */
		_cleanup_policy_ struct policy *p =
			CRED_OK("  - {name: a, source: env:A, inject: always, bindings: [{host: "
				"x.example.com, query: key}]}\n");
		assert_null(p->credentials[0].env);
		assert_int_equal(p->credentials[0].inject, POLICY_INJECT_ALWAYS);
		assert_round_trip(p);
	}

	/* The placeholder's variable is the credential's alone. */
	CRED_BAD("  - {name: a, source: env:A, env: T, bindings: [{host: api.github.com}]}\n"
		 "  - {name: b, source: env:A, env: T, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:8:35: credentials[1].env: \"T\" is also the variable of credentials[0] "
		 "(line 7); give each credential its own variable");
	BAD("version: 1\n"
	    "process: {env: {set: {T: x}}}\n"
	    "network: {endpoints: [{host: a.example, tls: intercept}]}\n"
	    "credentials:\n"
	    "  - {name: a, source: env:A, env: T, bindings: [{host: a.example}]}\n",
	    "policy.yaml:5:35: credentials[0].env: \"T\" is also in process.env.set (line 2), whose "
	    "fixed value would replace the placeholder; remove it from set");
	BAD("version: 1\n"
	    "process: {env: {pass: [TERM, T]}}\n"
	    "network: {endpoints: [{host: a.example, tls: intercept}]}\n"
	    "credentials:\n"
	    "  - {name: a, source: env:A, env: T, bindings: [{host: a.example}]}\n",
	    "policy.yaml:5:35: credentials[0].env: \"T\" is also in process.env.pass[1] (line 2), "
	    "which would hand the agent the caller's value, perhaps the real secret; remove it from "
	    "pass");
	{
		/* The default pass list yields to a credential's variable. */
		_cleanup_policy_ struct policy *p =
			CRED_OK("  - {name: a, source: env:A, env: TZ, bindings: [{host: "
				"api.github.com}]}\n"
				"  - {name: b, source: env:A, env: TERM, bindings: [{host: "
				"api.github.com}]}\n");
		assert_int_equal(p->process.n_env_pass, policy_default_env_pass_count - 2);
		for (size_t i = 0; i < p->process.n_env_pass; i++) {
			assert_string_not_equal(p->process.env_pass[i], "TZ");
			assert_string_not_equal(p->process.env_pass[i], "TERM");
		}
		assert_string_equal(p->process.env_pass[0], "COLORTERM");
		assert_null(p->process.env_pass[p->process.n_env_pass]);
		assert_round_trip(p);
	}
}

static void test_credentials_bindings(void **state)
{
	(void)state;
	CRED_BAD("  - {name: a, source: env:A, env: B}\n",
		 "policy.yaml:7:5: credentials[0]: has no bindings; list where the secret may be sent "
		 "(e.g. bindings: [{host: api.github.com}])");
	CRED_BAD("  - {name: a, source: env:A, env: B, bindings: []}\n",
		 "policy.yaml:7:48: credentials[0].bindings: is an empty list, so the secret could be "
		 "sent nowhere; list where it may be sent (e.g. [{host: api.github.com}])");
	CRED_BAD(ONE_BINDING("{port: 443}"),
		 "policy.yaml:7:49: credentials[0].bindings[0]: has no host; give the host the secret "
		 "is for (e.g. {host: api.github.com})");
	CRED_BAD(ONE_BINDING("{host: \"https://api.github.com\"}"),
		 "policy.yaml:7:56: credentials[0].bindings[0].host: \"https://api.github.com\" is a "
		 "URL or has a path; write the host name alone (e.g. api.example.com)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, port: \"443\"}"),
		 "policy.yaml:7:78: credentials[0].bindings[0].port: \"443\" is a quoted string; write "
		 "the port without quotes");
	CRED_BAD(ONE_BINDING("{host: api.github.com, port: 0}"),
		 "policy.yaml:7:78: credentials[0].bindings[0].port: \"0\" is not a port; use an "
		 "integer from 1 to 65535");
	CRED_BAD(ONE_BINDING("{host: api.github.com, id: \"a b\"}"),
		 "policy.yaml:7:76: credentials[0].bindings[0].id: \"a b\" is not a valid id; use 1 to "
		 "128 printable ASCII characters without spaces");

	/* One place for the secret. */
	CRED_BAD(ONE_BINDING("{host: api.github.com, header: X, basic: {username: u}}"),
		 "policy.yaml:7:83: credentials[0].bindings[0].basic: cannot be combined with header; "
		 "a binding puts the secret in one place: header, basic or query");
	CRED_BAD(ONE_BINDING("{host: api.github.com, query: k, header: X}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].header: cannot be combined with query; "
		 "a binding puts the secret in one place: header, basic or query");
	CRED_BAD(ONE_BINDING("{host: api.github.com, basic: {username: u}, template: \"{secret}\"}"),
		 "policy.yaml:7:94: credentials[0].bindings[0].template: only goes with header; basic "
		 "puts the secret in Authorization: Basic, without a template");
	CRED_BAD(ONE_BINDING("{host: api.github.com, query: k, template: \"{secret}\"}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].template: only goes with header; query "
		 "puts the secret in the query, without a template");

	/* header and template */
	CRED_BAD(ONE_BINDING("{host: api.github.com, header: \"X Key\"}"),
		 "policy.yaml:7:80: credentials[0].bindings[0].header: \"X Key\" is not a header name; "
		 "use 1 to 128 letters, digits and !#$%&'*+-.^_`|~ (e.g. Authorization, X-Api-Key)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, header: \"X:\"}"),
		 "policy.yaml:7:80: credentials[0].bindings[0].header: \"X:\" is not a header name; "
		 "use 1 to 128 letters, digits and !#$%&'*+-.^_`|~ (e.g. Authorization, X-Api-Key)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, header: Content-Length}"),
		 "policy.yaml:7:80: credentials[0].bindings[0].header: \"Content-Length\" frames or "
		 "routes the request, or is consumed by the next hop, so a secret cannot go there; "
		 "name the header the service reads it from (e.g. Authorization)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, header: host}"),
		 "policy.yaml:7:80: credentials[0].bindings[0].header: \"host\" frames or routes the "
		 "request, or is consumed by the next hop, so a secret cannot go there; name the "
		 "header the service reads it from (e.g. Authorization)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, template: \"token\"}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].template: \"token\" holds {secret} "
		 "nowhere; write it exactly once where the secret goes (e.g. \"Bearer {secret}\")");
	CRED_BAD(ONE_BINDING("{host: api.github.com, template: \"{secret}{secret}\"}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].template: \"{secret}{secret}\" holds "
		 "{secret} more than once; write it exactly once where the secret goes (e.g. "
		 "\"Bearer {secret}\")");
	CRED_BAD(ONE_BINDING("{host: api.github.com, template: \"Bearer {secret}\\r\\nX-A: 1\"}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].template: \"Bearer {secret}\\x0d\\nX-A: "
		 "1\" has a control character or a non-ASCII byte; a header value is printable ASCII");
	CRED_BAD(ONE_BINDING("{host: api.github.com, template: \"\"}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].template: is empty; expected a header "
		 "value holding {secret} (e.g. \"Bearer {secret}\")");

	/* basic and query */
	CRED_BAD(ONE_BINDING("{host: api.github.com, basic: x-access-token}"),
		 "policy.yaml:7:79: credentials[0].bindings[0].basic: is a single value; expected a "
		 "map of settings (key: value lines)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, basic: {username: \"a:b\"}}"),
		 "policy.yaml:7:90: credentials[0].bindings[0].basic.username: \"a:b\" has a colon or a "
		 "control character; Basic authentication cannot carry them in a user name");
	CRED_BAD(ONE_BINDING("{host: api.github.com, query: \"api key\"}"),
		 "policy.yaml:7:79: credentials[0].bindings[0].query: \"api key\" is not a parameter "
		 "name; use 1 to 128 letters, digits, '_', '.' and '-' (e.g. api_key)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, query: \"k=v\"}"),
		 "policy.yaml:7:79: credentials[0].bindings[0].query: \"k=v\" is not a parameter name; "
		 "use 1 to 128 letters, digits, '_', '.' and '-' (e.g. api_key)");
	{
		/* basic: {} is an empty user name. */
		_cleanup_policy_ struct policy *p =
			CRED_OK(ONE_BINDING("{host: api.github.com, basic: {}}"));
		assert_int_equal(p->credentials[0].bindings[0].where, POLICY_CRED_BASIC);
		assert_string_equal(p->credentials[0].bindings[0].username, "");
		assert_round_trip(p);
	}

	/* methods and paths, checked as in network rules */
	CRED_BAD(ONE_BINDING("{host: api.github.com, methods: [\"G T\"]}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].methods[0]: \"G T\" is not an HTTP "
		 "method; use a method name such as GET or POST (omit methods for any method)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, methods: [GET, get]}"),
		 "policy.yaml:7:87: credentials[0].bindings[0].methods[1]: \"get\" is listed twice "
		 "(first at credentials[0].bindings[0].methods[0]); remove one");
	CRED_BAD(ONE_BINDING("{host: api.github.com, methods: []}"),
		 "policy.yaml:7:81: credentials[0].bindings[0].methods: is an empty list, which "
		 "matches no request; list methods (e.g. [GET]), or omit methods for any method");
	CRED_BAD(ONE_BINDING("{host: api.github.com, paths: [repos/**]}"),
		 "policy.yaml:7:80: credentials[0].bindings[0].paths[0]: \"repos/**\" does not start "
		 "with /; a path glob is matched against the whole path (e.g. /repos/**)");
	CRED_BAD(ONE_BINDING("{host: api.github.com, paths: []}"),
		 "policy.yaml:7:79: credentials[0].bindings[0].paths: is an empty list, which matches "
		 "no request; list globs (e.g. [/repos/**]), or omit it for any request");
}

static void test_credentials_git(void **state)
{
	(void)state;
#define GIT(x) ONE_BINDING("{host: api.github.com, git: " x "}")
	{
		_cleanup_policy_ struct policy *p = CRED_OK(GIT("{}"));
		const struct policy_git_binding *g = p->credentials[0].bindings[0].git;

		/* git: {} is clone and fetch of any repository. */
		assert_non_null(g);
		assert_null(g->repos);
		assert_true(g->fetch);
		assert_null(g->push);
		assert_int_equal(g->n_push, 0);
		assert_false(g->delete_refs);
		assert_false(g->tags);
		assert_round_trip(p);
	}
	{
		/* push: [] is no push. */
		_cleanup_policy_ struct policy *p = CRED_OK(GIT("{push: [], tags: true}"));
		assert_null(p->credentials[0].bindings[0].git->push);
		assert_true(p->credentials[0].bindings[0].git->tags);
	}
	CRED_BAD(ONE_BINDING("{host: api.github.com, query: k, git: {}}"),
		 "policy.yaml:7:82: credentials[0].bindings[0].git: needs header or basic: git sends "
		 "credentials in a header, never in the query");
	CRED_BAD(ONE_BINDING("{host: api.github.com, paths: [/x], git: {}}"),
		 "policy.yaml:7:72: credentials[0].bindings[0].paths: cannot be combined with git: "
		 "git chooses the paths of its requests itself; limit the repositories with git.repos");
	CRED_BAD(GIT("{push: [heads/main]}"),
		 "policy.yaml:7:85: credentials[0].bindings[0].git.push[0]: \"heads/main\" does not "
		 "start with refs/; name full refs (e.g. refs/heads/agent/**)");
	CRED_BAD(GIT("{push: [\"refs/\"]}"),
		 "policy.yaml:7:85: credentials[0].bindings[0].git.push[0]: \"refs/\" does not start "
		 "with refs/; name full refs (e.g. refs/heads/agent/**)");
	CRED_BAD(GIT("{push: [\"refs/heads/a b\"]}"),
		 "policy.yaml:7:85: credentials[0].bindings[0].git.push[0]: \"refs/heads/a b\" has a "
		 "character git does not allow in ref names (space, control, non-ASCII, ~ ^ : ? [ \\); "
		 "the wildcards are * and **");
	CRED_BAD(GIT("{push: [\"refs/heads/../tags/x\"]}"),
		 "policy.yaml:7:85: credentials[0].bindings[0].git.push[0]: \"refs/heads/../tags/x\" "
		 "has \"..\", \"//\" or a trailing /, which no ref name has; write e.g. "
		 "refs/heads/agent/**");
	CRED_BAD(GIT("{push: [refs/heads/]}"),
		 "policy.yaml:7:85: credentials[0].bindings[0].git.push[0]: \"refs/heads/\" has "
		 "\"..\", \"//\" or a trailing /, which no ref name has; write e.g. "
		 "refs/heads/agent/**");
	CRED_BAD(GIT("{repos: []}"),
		 "policy.yaml:7:85: credentials[0].bindings[0].git.repos: is an empty list, which "
		 "matches no repository; list globs (e.g. [/repos/**]), or omit it for any repository");
	CRED_BAD(GIT("{repos: [acme/x.git]}"),
		 "policy.yaml:7:86: credentials[0].bindings[0].git.repos[0]: \"acme/x.git\" does not "
		 "start with /; a path glob is matched against the whole path (e.g. /repos/**)");
	CRED_BAD(GIT("{delete: true}"),
		 "policy.yaml:7:86: credentials[0].bindings[0].git.delete: true lets refs that push "
		 "matches be deleted, and push matches none; give push globs, or drop delete");
	CRED_BAD(GIT("{fetch: false}"),
		 "policy.yaml:7:77: credentials[0].bindings[0].git: allows no git operation (fetch: "
		 "false, no push globs, tags: false); allow one, or remove the binding");
	CRED_BAD(GIT("{fetch: \"yes\"}"),
		 "policy.yaml:7:85: credentials[0].bindings[0].git.fetch: \"yes\" is a quoted string; "
		 "write true or false without quotes");
	CRED_BAD(GIT("[fetch]"),
		 "policy.yaml:7:77: credentials[0].bindings[0].git: is a list; expected a map of "
		 "settings (key: value lines)");
#undef GIT
}

static void test_credentials_ids(void **state)
{
	(void)state;
	{
		/* Ids may repeat network ids: they name other things. */
		_cleanup_policy_ struct policy *p =
			CRED_OK(ONE_BINDING("{host: api.github.com, id: \"network.endpoints[0]\"}"));
		assert_string_equal(p->credentials[0].bindings[0].id, "network.endpoints[0]");
		assert_round_trip(p);
	}
	CRED_BAD(ONE_BINDING("{host: api.github.com, id: x}, {host: api.github.com, id: x}"),
		 "policy.yaml:7:107: credentials[0].bindings[1].id: \"x\" is also the id of "
		 "credentials[0].bindings[0] (line 7); give each binding its own id");
	CRED_BAD("  - {name: a, source: env:A, env: A, bindings: [{host: api.github.com, id: x}]}\n"
		 "  - {name: b, source: env:A, env: B, bindings: [{host: api.github.com, id: x}]}\n",
		 "policy.yaml:8:76: credentials[1].bindings[0].id: \"x\" is also the id of "
		 "credentials[0].bindings[0] (line 7); give each binding its own id");
	/* A given id may not take another binding's default. */
	CRED_BAD("  - {name: a, source: env:A, env: A, bindings: [{host: api.github.com}]}\n"
		 "  - {name: b, source: env:A, env: B, bindings: [{host: api.github.com, id: "
		 "\"credentials[0].bindings[0]\"}]}\n",
		 "policy.yaml:8:76: credentials[1].bindings[0].id: \"credentials[0].bindings[0]\" is "
		 "also the id of credentials[0].bindings[0] (line 7); give each binding its own id");
	CRED_BAD("  - {name: a, source: env:A, env: A, bindings: [{host: api.github.com, id: "
		 "\"credentials[1].bindings[0]\"}]}\n"
		 "  - {name: b, source: env:A, env: B, bindings: [{host: api.github.com}]}\n",
		 "policy.yaml:7:76: credentials[0].bindings[0].id: \"credentials[1].bindings[0]\" is "
		 "also the id of credentials[1].bindings[0] (line 8); give each binding its own id");
}

static void test_credentials_network(void **state)
{
	(void)state;
	{
		_cleanup_policy_ struct policy *p =
			CRED_OK(ONE_BINDING("{host: \"*.example.com\"}, {host: a.b.example.com, port: "
					    "80}, {host: \"*.x.example.com\"}"));
		assert_int_equal(p->credentials[0].n_bindings, 3);
	}
	CRED_BAD(ONE_BINDING("{host: github.com}"),
		 "policy.yaml:7:56: credentials[0].bindings[0]: github.com:443 is not under a "
		 "network.endpoints entry with tls: intercept; the proxy must see inside the request "
		 "to put the secret in it: add an endpoint {host: \"github.com\", ports: [443], tls: "
		 "intercept}");
	CRED_BAD(ONE_BINDING("{host: api.github.com, port: 8443}"),
		 "policy.yaml:7:56: credentials[0].bindings[0]: api.github.com:8443 is not under a "
		 "network.endpoints entry with tls: intercept; the proxy must see inside the request "
		 "to put the secret in it: add an endpoint {host: \"api.github.com\", ports: [8443], "
		 "tls: intercept}");
	/* "*.example.com" does not match example.com itself. */
	CRED_BAD(ONE_BINDING("{host: example.com}"),
		 "policy.yaml:7:56: credentials[0].bindings[0]: example.com:443 is not under a "
		 "network.endpoints entry with tls: intercept; the proxy must see inside the request "
		 "to put the secret in it: add an endpoint {host: \"example.com\", ports: [443], tls: "
		 "intercept}");
	/* A wildcard binding needs a wildcard that covers it. */
	CRED_BAD(ONE_BINDING("{host: \"*.github.com\"}"),
		 "policy.yaml:7:56: credentials[0].bindings[0]: *.github.com:443 is not under a "
		 "network.endpoints entry with tls: intercept; the proxy must see inside the request "
		 "to put the secret in it: add an endpoint {host: \"*.github.com\", ports: [443], tls: "
		 "intercept}");
	BAD("version: 1\n"
	    "network: {endpoints: [{host: \"::1\", ports: [8080]}]}\n"
	    "credentials:\n"
	    "  - {name: a, source: env:A, env: B, bindings: [{host: \"[::1]\", port: 8080}]}\n",
	    "policy.yaml:4:56: credentials[0].bindings[0]: [::1]:8080 is decided by "
	    "network.endpoints[0] (\"::1\", line 2), which has tls: passthrough; the proxy must see "
	    "inside the request to put the secret in it: give that endpoint tls: intercept");
	/* The endpoint that decides must intercept, even when a later one would. */
	BAD("version: 1\n"
	    "network:\n"
	    "  endpoints:\n"
	    "    - {host: a.example.com, ports: [443]}\n"
	    "    - {host: \"*.example.com\", tls: intercept}\n"
	    "credentials:\n"
	    "  - {name: a, source: env:A, env: B, bindings: [{host: \"*.example.com\"}, {host: "
	    "b.example.com}]}\n",
	    "policy.yaml:7:56: credentials[0].bindings[0]: *.example.com:443 is decided by "
	    "network.endpoints[0] (\"a.example.com\", line 4), which has tls: passthrough; the proxy "
	    "must see inside the request to put the secret in it: give that endpoint tls: "
	    "intercept");
	{
		_cleanup_policy_ struct policy *p =
			load_ok("version: 1\n"
				"network:\n"
				"  endpoints:\n"
				"    - {host: a.example.com, ports: [443]}\n"
				"    - {host: \"*.example.com\", tls: intercept}\n"
				"credentials:\n"
				"  - {name: a, source: env:A, env: B, bindings: [{host: b.example.com}, "
				"{host: \"*.b.example.com\"}]}\n");
		assert_int_equal(p->credentials[0].n_bindings, 2);
	}
	/* An endpoint with the host but not the port does not decide. */
	{
		_cleanup_policy_ struct policy *p =
			load_ok("version: 1\n"
				"network:\n"
				"  endpoints:\n"
				"    - {host: a.example.com, ports: [80]}\n"
				"    - {host: a.example.com, ports: [443], tls: intercept}\n"
				"credentials:\n"
				"  - {name: a, source: env:A, env: B, bindings: [{host: a.example.com}]}\n");
		assert_int_equal(p->credentials[0].bindings[0].port, 443);
	}
}

static void test_credentials_print(void **state)
{
	_cleanup_policy_ struct policy *p = load_ok(cred_policy);
	_cleanup_free_ char *text = print_to_string(p);
	(void)state;

	assert_non_null(strstr(text, "\ncredentials:\n"
				     "  - name: \"github\"  # policy.yaml:10\n"
				     "    source: \"env:GITHUB_TOKEN\"\n"
				     "    env: GITHUB_TOKEN\n"
				     "    inject: placeholder\n"
				     "    bindings:\n"
				     "      - host: \"api.github.com\"  # policy.yaml:15\n"
				     "        id: \"gh-api\"\n"
				     "        port: 443\n"
				     "        header: \"Authorization\"\n"
				     "        template: \"Bearer {secret}\"\n"
				     "        methods: [\"GET\", \"POST\"]\n"
				     "        paths: [\"/repos/acme/**\", \"/a~b\"]\n"
				     "      - host: \"github.com\"  # policy.yaml:22\n"
				     "        port: 443\n"
				     "        basic: {username: \"x-access-token\"}\n"
				     "        git:  # policy.yaml:25\n"
				     "          repos: [\"/acme/widget.git\"]\n"
				     "          fetch: true\n"
				     "          push: [\"refs/heads/agent/**\"]\n"
				     "          delete: false\n"
				     "          tags: false\n"
				     "  - name: \"example_2\"  # policy.yaml:30\n"
				     "    command: [\"/usr/bin/gh\", \"auth\", \"token\", \"\"]\n"
				     "    inject: always\n"
				     "    bindings:\n"
				     "      - host: \"api.example.com\"  # policy.yaml:34\n"
				     "        port: 443\n"
				     "        query: \"api_key\"\n"
				     "      - host: \"*.example.com\"  # policy.yaml:36\n"
				     "        port: 8443\n"
				     "        header: \"X-Api-Key\"\n"
				     "        template: \"{secret}\"\n"
				     "  - name: \"from-file\"  # policy.yaml:37\n"
				     "    source: \"file:/home/u/.config/token\"\n"
				     "    env: FILE_TOKEN\n"
				     "    inject: placeholder\n"
				     "    bindings:\n"
				     "      - host: \"github.com\"  # policy.yaml:41\n"
				     "        port: 443\n"
				     "        header: \"Authorization\"\n"
				     "        template: \"Bearer {secret}\"\n"
				     "        git:  # policy.yaml:42\n"
				     "          fetch: false\n"
				     "          push: [\"refs/heads/a\"]\n"
				     "          delete: true\n"
				     "          tags: true\n"));
	assert_round_trip(p);

	/* Hostile strings stay inside their quotes. */
	{
		_cleanup_policy_ struct policy *h = CRED_OK(
			"  - name: a\n"
			"    command: [\"/bin/x\", \"a\\\"b\", \"#c\", \"\\t\", \"{d: e}\", \"\\u2028\"]\n"
			"    env: \"null_\"\n"
			"    bindings:\n"
			"      - {host: api.github.com, id: \"'#x\\\"\", template: \"a\\\"#{secret}'\", "
			"paths: [\"/:'*&!\"]}\n");
		assert_string_equal(h->credentials[0].command[1], "a\"b");
		assert_string_equal(h->credentials[0].bindings[0].tmpl, "a\"#{secret}'");
		assert_round_trip(h);
	}
}

static void test_credentials_equal(void **state)
{
	_cleanup_policy_ struct policy *a = load_ok(cred_policy);
	(void)state;

	/* Every field takes part in the comparison. */
	static const char *const edits[][2] = {
		{ "name: github", "name: gh" },
		{ "env:GITHUB_TOKEN", "env:GH_TOKEN" },
		{ "env: GITHUB_TOKEN", "env: GH_TOKEN" },
		{ "inject: placeholder", "inject: always" },
		{ "API.GitHub.com.", "github.com" },
		{ "id: gh-api", "id: gh" },
		{ "port: 443", "port: 8443" },
		{ "header: Authorization", "header: X-Auth" },
		{ "\"Bearer {secret}\"", "\"token {secret}\"" },
		{ "[GET, post]", "[GET]" },
		{ "\"/a%7eb\"", "\"/a\"" },
		{ "username: x-access-token", "username: git" },
		{ "\"/acme/widget.git\"", "\"/acme/x.git\"" },
		{ "fetch: true", "fetch: false" },
		{ "refs/heads/agent/**", "refs/heads/**" },
		{ "delete: false", "delete: true" },
		{ "tags: false", "tags: true" },
		{ "[/usr/bin/gh, auth, token, \"\"]", "[/usr/bin/gh, auth, token]" },
		{ "query: api_key", "query: key" },
		{ "port: 8443", "port: 443" },
		{ "template: \"{secret}\"", "template: \"x{secret}\"" },
		{ "file:~/.config/token", "file:~/.config/token2" },
		{ "        git: {fetch: false, push: [\"refs/heads/a\"], delete: true, tags: true}\n",
		  "" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(edits); i++) {
		char yaml[sizeof(cred_policy) + 64];
		const char *at = strstr(cred_policy, edits[i][0]);

		assert_non_null(at);
		snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(at - cred_policy), cred_policy,
			 edits[i][1], at + strlen(edits[i][0]));
		_cleanup_policy_ struct policy *b = load_ok(yaml);
		if (policy_equal(a, b))
			fail_msg("edit %zu (%s) not seen by policy_equal", i, edits[i][1]);
	}
}

static void test_netspec_helpers(void **state)
{
	char out[POLICY_HOST_MAX];
	_cleanup_free_ char *g = NULL;
	(void)state;

	assert_int_equal(policy_host_normalize("Example.COM", out), POLICY_HOST_NAME);
	assert_string_equal(out, "example.com");
	assert_int_equal(policy_host_normalize("*.Example.COM.", out), POLICY_HOST_WILDCARD);
	assert_string_equal(out, "*.example.com");
	assert_int_equal(policy_host_normalize("[::]", out), POLICY_HOST_IP);
	assert_string_equal(out, "::");
	assert_int_equal(policy_host_normalize("::2", out), POLICY_HOST_IP);
	assert_string_equal(out, "0.0.0.2");
	assert_int_equal(policy_host_normalize("*", out), POLICY_HOST_STAR_ALL);
	assert_int_equal(policy_host_normalize("*.", out), POLICY_HOST_STAR_ALL);
	assert_int_equal(policy_host_normalize("*..com", out), POLICY_HOST_LABEL);
	assert_int_equal(policy_host_normalize("", out), POLICY_HOST_EMPTY);
	assert_int_equal(policy_host_normalize("a/b", out), POLICY_HOST_URL);
	assert_int_equal(policy_host_normalize("a:b", out), POLICY_HOST_BAD_IPV6);

	assert_true(policy_host_covers("a.example", "a.example"));
	assert_true(policy_host_covers("*.example", "a.example"));
	assert_true(policy_host_covers("*.example", "*.a.example"));
	assert_true(policy_host_covers("*.example", "b.a.example"));
	assert_false(policy_host_covers("*.example", "example"));
	assert_false(policy_host_covers("*.example", "aexample"));
	assert_false(policy_host_covers("a.example", "*.example"));
	assert_false(policy_host_covers("*.a.example", "*.example"));

	assert_true(policy_addr_canon("[::1]", out));
	assert_string_equal(out, "::1");
	assert_true(policy_addr_canon("::ffff:1.2.3.4", out));
	assert_string_equal(out, "1.2.3.4");
	assert_false(policy_addr_canon("1.2.3", out));
	assert_false(policy_addr_canon("[1.2.3.4]", out));
	assert_false(policy_addr_canon("", out));

	assert_int_equal(policy_glob_normalize("/%41%2f%2F%25%7e%5F", true, &g), POLICY_GLOB_OK);
	assert_string_equal(g, "/A%2F%2F%25~_");
	free(g);
	g = NULL;
	assert_int_equal(policy_glob_normalize("x", false, &g), POLICY_GLOB_OK);
	assert_string_equal(g, "x");
	free(g);
	g = NULL;
	assert_int_equal(policy_glob_normalize("x", true, &g), POLICY_GLOB_SLASH);
	assert_null(g);
	assert_int_equal(policy_glob_normalize("/%4", true, &g), POLICY_GLOB_PERCENT);
	assert_int_equal(policy_glob_normalize("/%g0", true, &g), POLICY_GLOB_PERCENT);
	assert_int_equal(policy_glob_normalize("/\x7f", true, &g), POLICY_GLOB_CHAR);
	assert_int_equal(policy_glob_normalize("a?b", false, &g), POLICY_GLOB_OK);
	free(g);
	g = NULL;

	assert_true(policy_method_valid("GET"));
	assert_true(policy_method_valid("M-SEARCH"));
	assert_true(policy_method_valid("x!#$%&'*+-.^_`|~9"));
	assert_false(policy_method_valid(""));
	assert_false(policy_method_valid("*"));
	assert_false(policy_method_valid("GET "));
	assert_false(policy_method_valid("G\"T"));
	assert_false(policy_method_valid("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")); /* 33 */
	assert_true(policy_id_valid("a"));
	assert_true(policy_id_valid("network.endpoints[0]"));
	assert_false(policy_id_valid(""));
	assert_false(policy_id_valid("a b"));
	assert_false(policy_id_valid("\xc3\xa9"));
}

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

static void test_normalize(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "/", "/" },	       { "///", "/" },	       { "/a", "/a" },
		{ "/a/", "/a" },       { "/a//b", "/a/b" },    { "/./a/.", "/a" },
		{ "/a/../b", "/b" },   { "/../../a", "/a" },   { "/a/b/c/../../d", "/a/d" },
		{ "/a/..b", "/a/..b" }, { "/a/b..", "/a/b.." }, { "/a/...", "/a/..." },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *n = policy_path_normalize(cases[i].in);
		assert_non_null(n);
		assert_string_equal(n, cases[i].out);
	}
	assert_null(policy_path_normalize("relative"));
	assert_null(policy_path_normalize(""));
}

static void test_is_under(void **state)
{
	(void)state;
	assert_true(policy_path_is_under("/a/b", "/a"));
	assert_true(policy_path_is_under("/a", "/a"));
	assert_true(policy_path_is_under("/a", "/"));
	assert_true(policy_path_is_under("/", "/"));
	assert_false(policy_path_is_under("/ab", "/a"));
	assert_false(policy_path_is_under("/a", "/a/b"));
	assert_false(policy_path_is_under("/", "/a"));
}

static void test_numbers(void **state)
{
	uint64_t v = 0;
	(void)state;

	assert_int_equal(policy_parse_uint("0", 10, &v), POLICY_NUM_OK);
	assert_int_equal(v, 0);
	assert_int_equal(policy_parse_uint("10", 10, &v), POLICY_NUM_OK);
	assert_int_equal(policy_parse_uint("11", 10, &v), POLICY_NUM_RANGE);
	assert_int_equal(policy_parse_uint("18446744073709551615", UINT64_MAX, &v), POLICY_NUM_OK);
	assert_true(v == UINT64_MAX);
	assert_int_equal(policy_parse_uint("18446744073709551616", UINT64_MAX, &v),
			 POLICY_NUM_RANGE);
	assert_int_equal(policy_parse_uint("", 10, &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_uint("+1", 10, &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_uint("07", 10, &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_uint("1 ", 10, &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_uint("0x1", 10, &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_size("99999999999999999999x", &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_size("16777216T", &v), POLICY_NUM_RANGE);
	assert_int_equal(policy_parse_size("17179869183G", &v), POLICY_NUM_OK);
	assert_int_equal(policy_parse_size("1 G", &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_size("1TB", &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_duration("1d", &v), POLICY_NUM_SYNTAX);
	assert_int_equal(policy_parse_duration("18446744073709551615s", &v), POLICY_NUM_OK);
	assert_int_equal(policy_parse_duration("307445734561825861m", &v), POLICY_NUM_RANGE);
}

static void test_quote(void **state)
{
	char buf[128];
	_cleanup_free_ char *longs = repeat("", "x", 100, "");
	(void)state;

	policy_quote("a\"b\\c\n\t\x01\x7f", 9, buf, sizeof(buf));
	assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\t\\x01\\x7f\"");
	policy_quote("\xc2\x9b" "1m", 4, buf, sizeof(buf));
	assert_string_equal(buf, "\"\\u009b1m\"");
	policy_quote(longs, 100, buf, sizeof(buf));
	assert_int_equal(strlen(buf), 64 + 5);
	assert_string_equal(buf + 65, "...\"");
	policy_quote(longs, 100, buf, 12);
	assert_string_equal(buf, "\"xxxxxx...\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_default_normalises_cwd),
		cmocka_unit_test(test_default_bad_ctx),
		cmocka_unit_test(test_minimal_equals_default),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_sections_in_any_order),
		cmocka_unit_test(test_enums),
		cmocka_unit_test(test_yaml_forms),
		cmocka_unit_test(test_empty_lists),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_top_level_shape),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_identity_and_audit),
		cmocka_unit_test(test_audit_enabled),
		cmocka_unit_test(test_audit_max_size),
		cmocka_unit_test(test_sandbox_enums_bad),
		cmocka_unit_test(test_sandbox_shape),
		cmocka_unit_test(test_host_ids),
		cmocka_unit_test(test_limits_valid),
		cmocka_unit_test(test_limits_bad),
		cmocka_unit_test(test_path_resolution),
		cmocka_unit_test(test_workspace),
		cmocka_unit_test(test_paths_bad),
		cmocka_unit_test(test_no_home),
		cmocka_unit_test(test_relative_dir),
		cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_fs_contradictions),
		cmocka_unit_test(test_fs_sockets),
		cmocka_unit_test(test_fs_protect),
		cmocka_unit_test(test_workspace_denied),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_env_pass_and_set),
		cmocka_unit_test(test_yaml_refused),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_encoding),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_file_name_in_message_is_sanitised),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_print_default),
		cmocka_unit_test(test_print_units),
		cmocka_unit_test(test_print_hostile_strings),
		cmocka_unit_test(test_print_sanitises_comments),
		cmocka_unit_test(test_print_non_utf8_workspace),
		cmocka_unit_test(test_network_absent),
		cmocka_unit_test(test_network_empty_section),
		cmocka_unit_test(test_network_full),
		cmocka_unit_test(test_network_mode),
		cmocka_unit_test(test_network_hosts),
		cmocka_unit_test(test_network_endpoint_shape),
		cmocka_unit_test(test_network_ports),
		cmocka_unit_test(test_network_rules),
		cmocka_unit_test(test_network_access_and_tls),
		cmocka_unit_test(test_network_duplicates),
		cmocka_unit_test(test_network_ids),
		cmocka_unit_test(test_network_allow_private),
		cmocka_unit_test(test_network_resolve),
		cmocka_unit_test(test_network_leak_scan_and_paths),
		cmocka_unit_test(test_network_print),
		cmocka_unit_test(test_network_equal),
		cmocka_unit_test(test_credentials_full),
		cmocka_unit_test(test_credentials_absent_or_empty),
		cmocka_unit_test(test_credentials_keys_and_names),
		cmocka_unit_test(test_credentials_source),
		cmocka_unit_test(test_credentials_inject_and_env),
		cmocka_unit_test(test_credentials_bindings),
		cmocka_unit_test(test_credentials_git),
		cmocka_unit_test(test_credentials_ids),
		cmocka_unit_test(test_credentials_network),
		cmocka_unit_test(test_credentials_print),
		cmocka_unit_test(test_credentials_equal),
		cmocka_unit_test(test_netspec_helpers),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_is_under),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_quote),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
