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
	BAD("version: 1\nnetwork: {}\n",
	    "policy.yaml:2:1: network: unknown key; valid keys here are version, name, sandbox, "
	    "filesystem, process");
	BAD("version: 1\nsandbox:\n  modes: enforce\n",
	    "policy.yaml:3:3: sandbox.modes: unknown key; valid keys here are boundary, workspace, "
	    "mode, host_uid, host_gid, limits");
	BAD("version: 1\nsandbox:\n  limits:\n    mem: 1G\n",
	    "policy.yaml:4:5: sandbox.limits.mem: unknown key; valid keys here are memory, pids, "
	    "open_files, cpu, wall");
	BAD("version: 1\nfilesystem:\n  protect: [/x]\n",
	    "policy.yaml:3:3: filesystem.protect: unknown key; valid keys here are baseline, read, "
	    "write, deny");
	BAD("version: 1\nprocess:\n  argv: []\n",
	    "policy.yaml:3:3: process.argv: unknown key; valid keys here are exec, env");
	BAD("version: 1\nprocess:\n  env:\n    unset: [A]\n",
	    "policy.yaml:4:5: process.env.unset: unknown key; valid keys here are pass, set");
	/* Unknown keys are reported with the key quoted when it is unusual. */
	BAD("version: 1\n\"a b\": 1\n",
	    "policy.yaml:2:1: \"a b\": unknown key; valid keys here are version, name, sandbox, "
	    "filesystem, process");
	/* YAML merge keys are not special. */
	BAD("version: 1\n<<: {name: x}\n",
	    "policy.yaml:2:1: \"<<\": unknown key; valid keys here are version, name, sandbox, "
	    "filesystem, process");
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
			   "sandbox, filesystem, process");
		BAD(bad17b, "policy.yaml:2:19: x[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: lists "
			    "and maps are nested more than 16 deep; a policy needs at most 4");
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
	assert_non_null(strstr(text, "\n  read: []\n  write: []\n  deny: []\nprocess:\n  env:\n"));
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
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_is_under),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_quote),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
