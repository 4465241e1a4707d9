/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The schema table (src/policy/schema.c) the parser takes its keys from:
 * every field has a layering rule and a prover rule, or says why it is
 * neither wider nor narrower. A field added without them fails here.
 *
 * The table is checked against the parser too: a policy writing every key
 * of the schema must load, and every key it writes must be in the table,
 * every field of the table in it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/internal.h"

static bool nonempty(const char *s)
{
	return s && s[0];
}

/* Whether some entry lies beneath path ("path." or "path[]."). */
static bool has_children(const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < policy_n_fields; i++) {
		const char *q = policy_fields[i].path;
		if (strncmp(q, path, n) != 0)
			continue;
		if (q[n] == '.' || (q[n] == '[' && q[n + 1] == ']' && q[n + 2] == '.'))
			return true;
	}
	return false;
}

static void test_every_field_has_rules(void **state)
{
	(void)state;
	size_t bad = 0;

	assert_true(policy_n_fields > 50);
	for (size_t i = 0; i < policy_n_fields; i++) {
		const struct policy_field *f = &policy_fields[i];
		bool section = has_children(f->path);
		bool rules = nonempty(f->layer) && nonempty(f->prove);
		bool neutral = nonempty(f->neutral);

		for (size_t j = 0; j < i; j++)
			if (strcmp(policy_fields[j].path, f->path) == 0) {
				print_error("%s: listed twice\n", f->path);
				bad++;
			}
		if (section && !rules && !neutral && !f->layer && !f->prove)
			continue;
		if (section && (rules || neutral))
			continue; /* a list whose entries carry rules of their own */
		if (rules && neutral) {
			print_error("%s: both rules and a neutral reason; say one\n", f->path);
			bad++;
		} else if (!rules && !neutral) {
			print_error("%s: no layering rule and prover rule, and no reason it is neutral\n", f->path);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* Each entry's parent is in the table (the top level excepted). */
static void test_parents_exist(void **state)
{
	(void)state;
	for (size_t i = 0; i < policy_n_fields; i++) {
		char parent[256];
		snprintf(parent, sizeof(parent), "%s", policy_fields[i].path);
		char *dot = strrchr(parent, '.');
		if (!dot)
			continue;
		*dot = '\0';
		size_t n = strlen(parent);
		if (n > 2 && strcmp(parent + n - 2, "[]") == 0 && !policy_schema_field(parent))
			parent[n - 2] = '\0';
		if (!policy_schema_field(parent))
			fail_msg("%s: its parent %s is not in the table", policy_fields[i].path, parent);
	}
}

/* A policy that writes every key of the schema. */
static const char complete[] =
	"version: 1\n"
	"name: all\n"
	"sandbox:\n"
	"  boundary: process\n"
	"  workspace: /work/proj\n"
	"  mode: enforce\n"
	"  workspace_mode: direct\n"
	"  host_uid: auto\n"
	"  host_gid: auto\n"
	"  limits: {memory: 1GiB, pids: 100, open_files: 100, cpu: 1h, wall: 1h}\n"
	"filesystem:\n"
	"  baseline: true\n"
	"  read: [/srv/r]\n"
	"  write: [/srv/w]\n"
	"  deny: [/srv/r/x]\n"
	"  protect: [\"docs/**\"]\n"
	"  protect_defaults: true\n"
	"  protect_build: false\n"
	"  sockets: [/run/x.sock]\n"
	"process:\n"
	"  exec: [/usr/bin]\n"
	"  env: {pass: [TERM], set: {CI: \"1\"}}\n"
	"  git_identity: host\n"
	"network:\n"
	"  mode: proxy\n"
	"  default: deny\n"
	"  endpoints:\n"
	"    - host: api.example.com\n"
	"      id: api\n"
	"      ports: [443]\n"
	"      tls: intercept\n"
	"      rules:\n"
	"        - {id: r, methods: [GET], path: /v1/**, query: \"a=*\", websocket: false}\n"
	"    - host: ro.example.com\n"
	"      ports: [443]\n"
	"      tls: intercept\n"
	"      access: read-only\n"
	"    - host: mcp.example.com\n"
	"      ports: [443]\n"
	"      tls: intercept\n"
	"      protocol: mcp\n"
	"      mcp_server: remote\n"
	"  allow_private: [127.0.0.1:8080]\n"
	"  resolve: {api.example.com: 127.0.0.1}\n"
	"  upstream_ca: /etc/ca.pem\n"
	"  leak_scan: {max_body: 1MiB, allow_compressed: false}\n"
	"  log: /var/log/net.jsonl\n"
	"credentials:\n"
	"  - name: a\n"
	"    source: env:TOKEN\n"
	"    env: TOKEN\n"
	"    inject: placeholder\n"
	"    bindings:\n"
	"      - {host: api.example.com, id: b, port: 443, header: Authorization, template: \"Bearer {secret}\",\n"
	"         methods: [GET], paths: [\"/v1/**\"]}\n"
	"      - {host: api.example.com, query: key}\n"
	"      - {host: api.example.com, basic: {username: u}}\n"
	"      - host: api.example.com\n"
	"        git: {repos: [\"/r.git\"], fetch: true, push: [\"refs/heads/a\"], delete: false, tags: false}\n"
	"  - name: c\n"
	"    command: [/usr/bin/true]\n"
	"    inject: always\n"
	"    bindings: [{host: api.example.com}]\n"
	"identity: {agent: bot, header: false}\n"
	"audit: {enabled: true, dir: /var/log/audit, max_size: 64MiB}\n"
	"mcp:\n"
	"  servers:\n"
	"    remote:\n"
	"      command: [/usr/bin/srv]\n"
	"      tools:\n"
	"        - name: \"read_*\"\n"
	"          decision: allow\n"
	"          max_calls: 3\n"
	"          args:\n"
	"            path: {glob: \"*\", regex: \"a.*\", enum: [a], max_length: 9, inside_workspace: true,\n"
	"                   required: true}\n"
	"            n: {min: 1, max: 2}\n"
	"      resources: [{uri: \"file:///a/**\", decision: allow}]\n"
	"      prompts: [{name: p, decision: deny}]\n"
	"      max_calls: 10\n"
	"      server_requests: {sampling: false, elicitation: false, roots: false}\n"
	"      scan: {secrets: block, injection: block}\n"
	"      record_arguments: true\n"
	"      pins: /etc/pins.json\n"
	"      policy: /etc/srv.yaml\n"
	"      step_up_timeout: 30\n";

struct seen {
	const char *path[512];
	size_t n;
};

static bool table_below(const char *path)
{
	return has_children(path);
}

static void walk(const struct policy_ynode *n, const char *schema, struct seen *s)
{
	if (n->type != POLICY_YNODE_MAP)
		return;
	bool any = policy_schema_field(schema[0] ? schema : "version") != NULL;
	(void)any;
	char star[256];
	snprintf(star, sizeof(star), "%s%s*", schema, schema[0] ? "." : "");
	bool named = policy_schema_field(star) != NULL;
	for (size_t i = 0; i + 1 < n->n; i += 2) {
		const struct policy_ynode *k = n->items[i], *v = n->items[i + 1];
		char child[256], list[260];
		if (named)
			snprintf(child, sizeof(child), "%s", star);
		else
			snprintf(child, sizeof(child), "%s%s%s", schema, schema[0] ? "." : "", k->str);
		snprintf(list, sizeof(list), "%s[]", child);
		const struct policy_field *f = policy_schema_field(child);
		if (!f && v->type == POLICY_YNODE_SEQ)
			f = policy_schema_field(list);
		if (!f)
			fail_msg("%s: written by the complete policy, missing from the table", child);
		if (s->n < 512)
			s->path[s->n++] = f->path;
		if (v->type == POLICY_YNODE_MAP && table_below(child))
			walk(v, child, s);
		if (v->type == POLICY_YNODE_SEQ && policy_schema_field(list)) {
			if (s->n < 512)
				s->path[s->n++] = policy_schema_field(list)->path;
			for (size_t j = 0; j < v->n; j++)
				walk(v->items[j], list, s);
		}
	}
}

static void test_table_is_the_parser_schema(void **state)
{
	(void)state;
	struct policy_ctx ctx = { .home = "/home/u", .cwd = "/work/proj" };
	struct error err = { 0 };
	struct policy *p = NULL;
	struct policy_ynode *root = NULL;
	struct seen s = { .n = 0 };

	setenv("TOKEN_UNUSED", "x", 1);
	if (policy_load_buffer("all.yaml", "/work/proj", complete, strlen(complete), &ctx, &p, &err) < 0)
		fail_msg("the complete policy does not load: %s", err.msg);
	policy_free(p);
	assert_int_equal(policy_ytree_parse("all.yaml", complete, strlen(complete), &root, &err), 0);
	walk(root, "", &s);
	policy_ynode_free(root);
	for (size_t i = 0; i < policy_n_fields; i++) {
		bool found = false;
		for (size_t j = 0; j < s.n && !found; j++)
			found = strcmp(s.path[j], policy_fields[i].path) == 0;
		if (!found)
			fail_msg("%s: in the table, not written by the complete policy (add it to the test)",
				 policy_fields[i].path);
	}

	/* A key the table does not list is refused, naming the valid ones. */
	static const char unknown[] = "version: 1\nfilesystem:\n  sockts: [/run/x.sock]\n";
	assert_true(policy_load_buffer("u.yaml", "/work/proj", unknown, strlen(unknown), &ctx, &p, &err) < 0);
	assert_non_null(strstr(err.msg, "filesystem.sockts: unknown key"));
	assert_non_null(strstr(err.msg, "sockets"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_field_has_rules),
		cmocka_unit_test(test_parents_exist),
		cmocka_unit_test(test_table_is_the_parser_schema),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
