/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of MCP servers inside an airlock run session: the
 * mcp.servers.NAME.policy field, and the supervisor's side of the gateway
 * up to the listener (mcpgw_prepare, mcpgw_stop). Each refusal beside the
 * neighbour that passes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/mcp.h"
#include "policy/policy.h"
#include "sandbox/internal.h"
#include "sandbox/mcpgw.h"

static char ws[256];

static int setup(void **state)
{
	(void)state;
	snprintf(ws, sizeof(ws), "/tmp/airlock-mcpgw-unit.XXXXXX");
	return mkdtemp(ws) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ws);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", ws, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static struct policy *load(const char *yaml, struct error *err)
{
	struct policy *p = NULL;
	struct policy_ctx ctx = { .home = "/home/me", .cwd = ws };
	char *text = NULL;
	if (asprintf(&text, "version: 1\nsandbox:\n  workspace: %s\n%s", ws, yaml) < 0)
		return NULL;
	int r = policy_load_buffer("p.yaml", NULL, text, strlen(text), &ctx, &p, err);
	free(text);
	return r < 0 ? NULL : p;
}

static void test_policy_field(void **state)
{
	(void)state;
	struct error err = { 0 };
	struct policy *p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: srv.yaml\n"
				"    other:\n      command: [y]\n",
				&err);
	assert_non_null(p);
	const struct policy_mcp_server *s = policy_mcp_server(p->mcp, "fs");
	char want[512];
	snprintf(want, sizeof(want), "%s/srv.yaml", ws);
	assert_string_equal(s->policy, want); /* relative to the policy's directory */
	assert_int_equal(s->policy_line, 8);
	assert_null(policy_mcp_server(p->mcp, "other")->policy); /* the default */
	/* Printed, it reads back. */
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	policy_mcp_print(p->mcp, f);
	fclose(f);
	assert_non_null(strstr(out, "      policy: "));
	assert_non_null(strstr(out, want));
	free(out);
	policy_free(p);

	p = load("mcp:\n  servers:\n    fs:\n      policy: [a, b]\n", &err);
	assert_null(p);
	assert_non_null(strstr(err.msg, "mcp.servers.fs.policy"));
	assert_non_null(strstr(err.msg, "p.yaml:7"));
}

static void test_prepare(void **state)
{
	(void)state;
	struct error err = { 0 };
	struct sandbox_plan plan;
	struct mcpgw g;

	/* No mcp section: no socket, nothing in the plan. */
	struct policy *p = load("", &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	assert_int_equal(mcpgw_prepare(p, NULL, &plan, &g, &err), 0);
	assert_int_equal(g.listen, -1);
	assert_int_equal(plan.n_mounts, 0);
	mcpgw_stop(&g);
	policy_free(p);

	/* A server's policy that does not parse: the session does not start,
	 * and the error names both files. */
	write_file("bad.yaml", "version: 1\nbogus: 1\n");
	p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: bad.yaml\n", &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	assert_true(mcpgw_prepare(p, NULL, &plan, &g, &err) < 0);
	assert_non_null(strstr(err.msg, "p.yaml:8: mcp.servers.fs.policy"));
	assert_non_null(strstr(err.msg, "bad.yaml:2"));
	mcpgw_stop(&g);
	plan_free(&plan);
	policy_free(p);

	/* A server's policy that declares servers of its own: refused. */
	write_file("nested.yaml", "version: 1\nmcp:\n  servers:\n    x:\n      command: [x]\n");
	p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: nested.yaml\n", &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	assert_true(mcpgw_prepare(p, NULL, &plan, &g, &err) < 0);
	assert_non_null(strstr(err.msg, "declares MCP servers"));
	mcpgw_stop(&g);
	plan_free(&plan);
	policy_free(p);

	/* The neighbour: a good server policy and a server with none. */
	write_file("good.yaml", "version: 1\n");
	p = load("mcp:\n  servers:\n    fs:\n      command: [x]\n      policy: good.yaml\n"
		 "    dflt:\n      command: [y]\n",
		 &err);
	assert_non_null(p);
	memset(&plan, 0, sizeof(plan));
	plan.privileged = geteuid() == 0;
	assert_int_equal(mcpgw_prepare(p, NULL, &plan, &g, &err), 0);
	assert_true(g.listen >= 0);
	assert_int_equal(g.n_srv, 2);
	/* The default server policy: the session's workspace, read-only. */
	const struct policy *d = g.srv_pol[1];
	assert_string_equal(d->sandbox.workspace, ws);
	assert_int_equal(d->filesystem.read.n, 1);
	assert_string_equal(d->filesystem.read.v[0].path, ws);
	assert_int_equal(policy_net_mode(d), POLICY_NET_NONE);
	/* The socket, alone, and the binary, read-only and executable. */
	assert_int_equal(plan.n_mounts, 2);
	assert_string_equal(plan.mounts[0].dst, MCPGW_SOCKET);
	assert_string_equal(plan.mounts[0].src, g.sock);
	assert_false(plan.mounts[0].is_dir);
	assert_string_equal(plan.mounts[1].dst, MCPGW_BINARY);
	assert_true(plan.mounts[1].readonly);
	assert_int_equal(plan.n_rules, 1);
	assert_string_equal(plan.rules[0].path, MCPGW_BINARY);
	struct stat st;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", g.dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700); /* nobody else on the host reaches the socket */
	assert_int_equal(stat(g.sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	mcpgw_stop(&g);
	assert_int_equal(stat(dir, &st), -1); /* removed at the end */
	plan_free(&plan);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_field),
		cmocka_unit_test(test_prepare),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
