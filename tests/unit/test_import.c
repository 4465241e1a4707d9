/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for `airlock policy import` and `export`: the strict JSON and
 * TOML readers (malformed input is refused with its line and column), the
 * mapping of each format (what is expressed, what is refused and named),
 * and round trips over the example files of each project's documentation
 * (tests/data/import/FORMAT/README names the source of each).
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

#include "policy/import/doc.h"
#include "policy/import/import.h"
#include "policy/internal.h"
#include "policy/policy.h"
#include "util/buf.h"
#include "util/file.h"

#define DATA AIRLOCK_SOURCE_ROOT "/tests/data/import/"

static const struct policy_ctx ctx = { .home = "/home/me", .cwd = "/work/proj" };

/* ---- JSON ---- */

static struct imp_node *json_ok(const char *s)
{
	struct imp_node *n = NULL;
	struct error err = { 0 };
	int r = imp_json_parse("t.json", s, strlen(s), &n, &err);
	if (r < 0)
		fail_msg("unexpected refusal of %s: %s", s, err.msg);
	return n;
}

static void json_bad(const char *s, const char *want)
{
	struct imp_node *n = NULL;
	struct error err = { 0 };
	int r = imp_json_parse("t.json", s, strlen(s), &n, &err);
	if (r >= 0) {
		imp_node_free(n);
		fail_msg("accepted %s", s);
	}
	if (!strstr(err.msg, want))
		fail_msg("for %s: wanted \"%s\" in \"%s\"", s, want, err.msg);
}

static void test_json_valid(void **state)
{
	(void)state;
	struct imp_node *n = json_ok("{\n  \"a\": [1, -2.5e3, \"x\\u00e9\\ud83d\\ude00\"],\n  \"b\": {\"c\": true, \"d\": null}\n}");
	assert_int_equal(n->kind, IMP_MAP);
	const struct imp_node *a = imp_get(n, "a");
	assert_non_null(a);
	assert_int_equal(a->kind, IMP_LIST);
	assert_int_equal(a->n, 3);
	assert_int_equal(a->line, 2);
	assert_int_equal(a->col, 3);
	assert_string_equal(a->v[1].str, "-2.5e3");
	assert_string_equal(a->v[2].str, "x\xc3\xa9\xf0\x9f\x98\x80");
	const struct imp_node *b = imp_get(n, "b");
	assert_int_equal(b->line, 3);
	assert_true(imp_get(b, "c")->b);
	assert_int_equal(imp_get(b, "d")->kind, IMP_NULL);
	assert_null(imp_get(n, "z"));
	imp_node_free(n);
}

/* The most members an object may hold, with keys sharing a long prefix:
 * all distinct is read; the last repeating the first is refused, naming
 * the last. (The check sorts; comparing every pair cost seconds here.) */
static void test_json_many_keys(void **state)
{
	(void)state;
	size_t cap = (size_t)IMP_MAX_ITEMS * 300 + 64, o = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	char prefix[257];
	memset(prefix, 'p', 256);
	prefix[256] = '\0';
	buf[o++] = '{';
	for (int i = 0; i < IMP_MAX_ITEMS; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s\"%s%05d\": %d", i ? "," : "", prefix, i, i);
	buf[o++] = '}';
	struct imp_node *n = NULL;
	struct error err = { 0 };
	assert_int_equal(imp_json_parse_max("t.json", buf, o, 4 << 20, &n, &err), 0);
	assert_int_equal(n->n, IMP_MAX_ITEMS);
	imp_node_free(n);
	n = NULL;
	/* the last key becomes the first's */
	char *close = strrchr(buf, '"');
	memcpy(close - 5, "00000", 5);
	assert_true(imp_json_parse_max("t.json", buf, o, 4 << 20, &n, &err) < 0);
	assert_non_null(strstr(err.msg, "duplicate key"));
	assert_non_null(strstr(err.msg, "00000"));
	assert_non_null(strstr(err.msg, ":1:"));
	free(buf);
}

static void test_json_malformed(void **state)
{
	(void)state;
	json_bad("{\"a\": 1,}", "t.json:1:9: trailing comma before }");
	json_bad("[1,\n 2,\n]", "t.json:3:1: trailing comma before ]");
	json_bad("{\"a\": 1,\n \"a\": 2}", "t.json:2:2: duplicate key \"a\" (first at line 1)");
	/* The repeat named is the first in the input, whatever the order of
	 * the keys; a repeat in a nested object is found as well. */
	json_bad("{\"z\": 1, \"b\": 1,\n\"b\": 2,\n\"z\": 3, \"b\": 4}", "t.json:2:1: duplicate key \"b\" (first at line 1)");
	json_bad("{\"x\": {\"k\": 1, \"j\": 2, \"k\": 3}}", "t.json:1:24: duplicate key \"k\" (first at line 1)");
	json_bad("// c\n{}", "t.json:1:1: comments are not JSON");
	json_bad("{'a': 1}", "expected a \"key\"");
	json_bad("[\"\\x\"]", "invalid escape \\x");
	json_bad("[\"\\ud800\"]", "lone UTF-16 surrogate");
	json_bad("[\"\\u0000\"]", "\\u0000 in a string is refused");
	json_bad("[\"a\nb\"]", "control character 0x0a");
	json_bad("[\"\xc0\xaf\"]", "invalid UTF-8");
	json_bad("[01]", "leading zero");
	json_bad("[1.]", "a digit must follow the decimal point");
	json_bad("{} x", "t.json:1:4: text after the end");
	json_bad("\xef\xbb\xbf{}", "byte order mark");
	json_bad("{\"a\" 1}", "expected ':'");
	json_bad("[tru]", "expected a value");
	json_bad("", "t.json:1:1: unexpected end of input");
	json_bad("[\"abc", "unterminated string");
	char deep[201];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	deep[200] = '\0';
	json_bad(deep, "nested deeper than 64 levels");
	/* More entries than a configuration file has: refused, not scanned. */
	size_t big = 5000 * 2 + 2;
	char *many = malloc(big + 1);
	many[0] = '[';
	for (size_t i = 0; i < 5000; i++) {
		many[1 + 2 * i] = '0';
		many[2 + 2 * i] = ',';
	}
	many[big - 2] = '0';
	many[big - 1] = ']';
	many[big] = '\0';
	json_bad(many, "more than 4096 entries in one array");
	free(many);
	/* 64 levels is still fine. */
	char ok[128];
	memset(ok, '[', 64);
	memset(ok + 64, ']', 64);
	struct imp_node *n = NULL;
	struct error err = { 0 };
	assert_int_equal(imp_json_parse("t.json", ok, 128, &n, &err), 0);
	imp_node_free(n);
}

/* ---- TOML ---- */

static struct imp_node *toml_ok(const char *s)
{
	struct imp_node *n = NULL;
	struct error err = { 0 };
	if (imp_toml_parse("c.toml", s, strlen(s), &n, &err) < 0)
		fail_msg("unexpected refusal of %s: %s", s, err.msg);
	return n;
}

static void toml_bad(const char *s, const char *want)
{
	struct imp_node *n = NULL;
	struct error err = { 0 };
	if (imp_toml_parse("c.toml", s, strlen(s), &n, &err) >= 0) {
		imp_node_free(n);
		fail_msg("accepted %s", s);
	}
	if (!strstr(err.msg, want))
		fail_msg("for %s: wanted \"%s\" in \"%s\"", s, want, err.msg);
}

static void test_toml_valid(void **state)
{
	(void)state;
	struct imp_node *n = toml_ok("# top\nsandbox_mode = \"workspace-write\" # trailing\n"
				     "a.b = 1_000\n"
				     "[sandbox_workspace_write]\nwritable_roots = [\n  \"/tmp\", # one\n  '/x\\y',\n]\n"
				     "network_access = false\n"
				     "[projects.\"/home/me/p\"]\ntrust_level = \"trusted\"\n"
				     "[[list]]\nk = {x = 1, y.z = \"q\\u00e9\"}\n[[list]]\nk = -3\n");
	assert_string_equal(imp_get(n, "sandbox_mode")->str, "workspace-write");
	assert_int_equal(imp_get(n, "sandbox_mode")->line, 2);
	assert_string_equal(imp_get(imp_get(n, "a"), "b")->str, "1000");
	const struct imp_node *w = imp_get(n, "sandbox_workspace_write");
	const struct imp_node *roots = imp_get(w, "writable_roots");
	assert_int_equal(roots->n, 2);
	assert_string_equal(roots->v[1].str, "/x\\y");
	assert_int_equal(roots->v[1].line, 7);
	assert_false(imp_get(w, "network_access")->b);
	assert_string_equal(imp_get(imp_get(imp_get(n, "projects"), "/home/me/p"), "trust_level")->str, "trusted");
	const struct imp_node *l = imp_get(n, "list");
	assert_int_equal(l->kind, IMP_LIST);
	assert_int_equal(l->n, 2);
	assert_string_equal(imp_get(imp_get(imp_get(&l->v[0], "k"), "y"), "z")->str, "q\xc3\xa9");
	assert_string_equal(imp_get(&l->v[1], "k")->str, "-3");
	imp_node_free(n);
}

static void test_toml_malformed(void **state)
{
	(void)state;
	toml_bad("a = 1\na = 2\n", "c.toml:2:1: key \"a\" defined twice (first at line 1)");
	toml_bad("[t]\n[t]\n", "c.toml:2:2: table \"t\" defined twice");
	toml_bad("a = 1\na.b = 2\n", "c.toml:2:1: key \"a\" defined twice");
	toml_bad("a = {b = 1}\na.c = 2\n", "c.toml:2:1: key \"a\" defined twice");
	toml_bad("a = \"\"\"x\"\"\"\n", "c.toml:1:5: multi-line strings are not supported");
	toml_bad("a = 1.5\n", "floats, dates");
	toml_bad("a = 1979-05-27\n", "floats, dates");
	toml_bad("a = 0x10\n", "floats, dates");
	toml_bad("a = \"x\n", "unterminated string");
	toml_bad("a 1\n", "expected '='");
	toml_bad("a = 1 b = 2\n", "c.toml:1:7: expected the end of the line");
	toml_bad("a = {x = 1}\n[a]\n", "cannot be extended");
	toml_bad("a = [1, 2\n", "expected ',' or ']'");
	toml_bad("[a\n", "expected ']' to close");
	toml_bad("a = \"\\q\"\n", "invalid escape \\q");
	toml_bad("a = 01\n", "floats, dates");
	toml_bad("a = 1__0\n", "floats, dates");
}

/* The JSON and TOML readers copy a string's characters through one UTF-8
 * check, and TOML's document and inline tables assign keys through one
 * function: each caller at the edges. */
static void test_readers_share_strings_and_keys(void **state)
{
	(void)state;
	/* A four-byte character, then what follows it, copied whole. */
	struct imp_node *n = NULL;
	struct error err = { 0 };
	const char *js = "[\"\xf0\x9f\x98\x80x\"]";
	assert_int_equal(imp_json_parse("t.json", js, strlen(js), &n, &err), 0);
	assert_string_equal(n->v[0].str, "\xf0\x9f\x98\x80x");
	imp_node_free(n);
	n = toml_ok("a = \"\xf0\x9f\x98\x80x\"\nb = '\xc3\xa9y'\n");
	assert_string_equal(imp_get(n, "a")->str, "\xf0\x9f\x98\x80x");
	assert_string_equal(imp_get(n, "b")->str, "\xc3\xa9y");
	imp_node_free(n);
	/* The one-letter escapes both know; '/' is JSON's alone. */
	js = "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t.\"]";
	assert_int_equal(imp_json_parse("t.json", js, strlen(js), &n, &err), 0);
	assert_string_equal(n->v[0].str, "\"\\/\b\f\n\r\t.");
	imp_node_free(n);
	n = toml_ok("a = \"\\\"\\\\\\b\\f\\n\\r\\t.\"\n");
	assert_string_equal(imp_get(n, "a")->str, "\"\\\b\f\n\r\t.");
	imp_node_free(n);
	toml_bad("a = \"\\/\"\n", "c.toml:1:8: invalid escape \\/");
	json_bad("[\"\\a\"]", "invalid escape \\a");
	/* A cut sequence, an overlong form and a surrogate: refused where
	 * they start. */
	json_bad("[\"a\xf0\x9f\x98\"]", "t.json:1:4: invalid UTF-8 in a string");
	json_bad("[\"\xc0\xaf\"]", "t.json:1:3: invalid UTF-8 in a string");
	toml_bad("a = \"b\xed\xa0\x80\"\n", "c.toml:1:7: invalid UTF-8 in a string");
	toml_bad("a = 'b\xf0\x9f\x98'\n", "c.toml:1:7: invalid UTF-8 in a string");

	/* Dotted keys make implicit tables in both places... */
	n = toml_ok("a.b = 1\na.c = 2\nt = {x.y = 1, x.z = 2}\n");
	assert_string_equal(imp_get(imp_get(n, "a"), "c")->str, "2");
	assert_int_equal(imp_get(imp_get(n, "a"), "c")->line, 2);
	assert_int_equal(imp_get(imp_get(n, "a"), "c")->col, 3);
	assert_string_equal(imp_get(imp_get(imp_get(n, "t"), "x"), "z")->str, "2");
	imp_node_free(n);
	/* ...and a key given twice is refused in both, an inline table's at
	 * the reader, the document's at the key with its first line. */
	toml_bad("a.b = 1\na.b.c = 2\n", "c.toml:2:3: key \"b\" defined twice (first at line 1)");
	toml_bad("a = {b = 1}\na.b = 2\n", "c.toml:2:1: key \"a\" defined twice (first at line 1)");
	toml_bad("t = {b = 1, b = 2}\n", "c.toml:1:15: key \"b\" defined twice");
	toml_bad("t = {b.c = 1, b = 2}\n", "c.toml:1:17: key \"b\" defined twice");
	toml_bad("t = {b = 1, b.c = 2}\n", "c.toml:1:17: key \"b\" defined twice");
	toml_bad("t = {b = [1], b.c = 2}\n", "key \"b\" defined twice");

	/* Both readers hold at most IMP_MAX_ITEMS children per container. */
	for (size_t want = IMP_MAX_ITEMS; want <= IMP_MAX_ITEMS + 1; want++) {
		size_t cap = 16 * want + 16, o = 0, t = 0;
		char *obj = malloc(cap), *arr = malloc(cap);
		assert_non_null(obj);
		assert_non_null(arr);
		o += (size_t)snprintf(obj + o, cap - o, "{");
		t += (size_t)snprintf(arr + t, cap - t, "a = [");
		for (size_t i = 0; i < want; i++) {
			o += (size_t)snprintf(obj + o, cap - o, "%s\"k%zu\": 1", i ? "," : "", i);
			t += (size_t)snprintf(arr + t, cap - t, "%s1", i ? "," : "");
		}
		snprintf(obj + o, cap - o, "}");
		snprintf(arr + t, cap - t, "]\n");
		if (want == IMP_MAX_ITEMS) {
			assert_int_equal(imp_json_parse("t.json", obj, strlen(obj), &n, &err), 0);
			imp_node_free(n);
			imp_node_free(toml_ok(arr));
		} else {
			json_bad(obj, "more than 4096 entries in one object");
			toml_bad(arr, "more than 4096 entries in one table or array");
		}
		free(obj);
		free(arr);
	}

	/* Each inline table is one level deeper: 64 levels is refused. */
	char deep[700];
	for (int k = 63; k <= 64; k++) {
		size_t o = (size_t)snprintf(deep, sizeof(deep), "a = ");
		for (int i = 0; i < k; i++)
			o += (size_t)snprintf(deep + o, sizeof(deep) - o, "{b = ");
		o += (size_t)snprintf(deep + o, sizeof(deep) - o, "1");
		for (int i = 0; i < k; i++)
			o += (size_t)snprintf(deep + o, sizeof(deep) - o, "}");
		snprintf(deep + o, sizeof(deep) - o, "\n");
		if (k == 63)
			imp_node_free(toml_ok(deep));
		else
			toml_bad(deep, "nested deeper than 64 levels");
	}
}

/* ---- the importers ---- */

static char *read_data(const char *rel, size_t *len)
{
	char path[512];
	struct buf b = { 0 };
	snprintf(path, sizeof(path), DATA "%s", rel);
	if (file_read_all(path, 1 << 20, &b) < 0)
		fail_msg("cannot read %s", path);
	*len = b.len;
	return b.data;
}

/* Convert and load; the policy must be accepted by the real parser. */
static struct policy *import_ok(enum imp_format f, const char *name, const char *text, size_t len, bool narrow,
				char **yaml_out)
{
	struct error err = { 0 };
	char *yaml = NULL;
	struct policy *p = NULL;
	if (imp_convert(f, name, text, len, narrow, &yaml, &err) < 0)
		fail_msg("import of %s refused: %s", name, err.msg);
	if (policy_load_buffer("(imported)", NULL, yaml, strlen(yaml), &ctx, &p, &err) < 0)
		fail_msg("imported policy refused: %s\n%s", err.msg, yaml);
	if (yaml_out)
		*yaml_out = yaml;
	else
		free(yaml);
	return p;
}

static void import_bad(enum imp_format f, const char *name, const char *text, bool narrow, const char *want)
{
	struct error err = { 0 };
	char *yaml = NULL;
	if (imp_convert(f, name, text, strlen(text), narrow, &yaml, &err) >= 0) {
		char msg[4096];
		snprintf(msg, sizeof(msg), "accepted %s:\n%s", text, yaml);
		free(yaml);
		fail_msg("%s", msg);
	}
	if (!strstr(err.msg, want))
		fail_msg("wanted \"%s\" in \"%s\"", want, err.msg);
}

static bool has_path(const struct policy_paths *pp, const char *path)
{
	for (size_t i = 0; i < pp->n; i++)
		if (!strcmp(pp->v[i].path, path))
			return true;
	return false;
}

static const struct policy_endpoint *endpoint(const struct policy *p, const char *host)
{
	for (size_t i = 0; i < p->network.n_endpoints; i++)
		if (!strcmp(p->network.endpoints[i].host, host))
			return &p->network.endpoints[i];
	return NULL;
}

static void test_srt_complete(void **state)
{
	(void)state;
	size_t len;
	char *text = read_data("srt/complete.json", &len), *yaml = NULL;
	struct error err = { 0 };

	/* Without --narrow: refused at the read rule, with its line. */
	assert_true(imp_convert(IMP_FORMAT_SRT, "complete.json", text, len, false, &yaml, &err) < 0);
	assert_non_null(strstr(err.msg, "complete.json:16:5: filesystem.denyRead: srt lets the program read every "
				       "path not listed"));
	assert_non_null(strstr(err.msg, "pass --narrow"));

	struct policy *p = import_ok(IMP_FORMAT_SRT, "complete.json", text, len, true, &yaml);
	/* "." is the workspace (the current directory), writable; the rest
	 * are write paths; relative ones under the workspace. */
	assert_string_equal(p->sandbox.workspace, "/work/proj");
	assert_true(has_path(&p->filesystem.write, "/work/proj/src"));
	assert_true(has_path(&p->filesystem.write, "/work/proj/test"));
	assert_true(has_path(&p->filesystem.write, "/tmp"));
	assert_false(has_path(&p->filesystem.write, "/work/proj"));
	assert_true(has_path(&p->filesystem.deny, "/home/me/.ssh"));
	assert_true(has_path(&p->filesystem.protect, ".env/**"));
	assert_true(has_path(&p->filesystem.protect, "config/production.json/**"));
	assert_false(has_path(&p->filesystem.protect, "**"));
	assert_true(p->filesystem.protect_defaults);
	/* Domains: each on 80 and 443; ones an earlier wildcard covers are
	 * left out and said so. */
	assert_int_equal(p->network.mode, POLICY_NET_PROXY);
	assert_int_equal(p->network.n_endpoints, 4);
	const struct policy_endpoint *e = endpoint(p, "*.github.com");
	assert_non_null(e);
	if (!e)
		return;
	assert_int_equal(e->n_ports, 2);
	assert_int_equal(e->ports[0], 80);
	assert_int_equal(e->ports[1], 443);
	assert_non_null(endpoint(p, "github.com"));
	assert_non_null(endpoint(p, "npmjs.org"));
	assert_null(endpoint(p, "lfs.github.com"));
	assert_non_null(strstr(yaml, "# from network.allowedDomains[1] (complete.json:5:7)\n    - host: \"*.github.com\""));
	assert_non_null(strstr(yaml, "not imported: network.allowedDomains[2] (complete.json:6:7): \"lfs.github.com\" is "
				     "already allowed"));
	assert_non_null(strstr(yaml, "narrowed (--narrow): network.allowUnixSockets (complete.json:12:5)"));
	assert_non_null(strstr(yaml, "not imported: ignoreViolations (complete.json:20:3)"));
	policy_free(p);
	free(yaml);
	free(text);
}

static void test_srt_mapping(void **state)
{
	(void)state;
	/* No "." in allowWrite: the workspace is protected as a whole. */
	const char *ro = "{\"filesystem\": {\"denyRead\": [], \"allowWrite\": [\"/srv/out\"], \"denyWrite\": []}, "
			 "\"network\": {\"allowedDomains\": []}}";
	struct policy *p = import_ok(IMP_FORMAT_SRT, "s.json", ro, strlen(ro), true, NULL);
	assert_true(has_path(&p->filesystem.protect, "**"));
	assert_true(has_path(&p->filesystem.write, "/srv/out"));
	/* An empty allowedDomains is no network at all. */
	assert_int_equal(p->network.mode, POLICY_NET_NONE);
	policy_free(p);

	import_bad(IMP_FORMAT_SRT, "s.json", "{\"filesystem\": {\"allowWrite\": [\".\"]}, \"bogus\": 1}", true,
		   "s.json:1:39: bogus: unknown key");
	import_bad(IMP_FORMAT_SRT, "s.json", "{\"filesystem\": {\"allowWrite\": [\".\"], \"readAll\": true}}", true,
		   "s.json:1:38: filesystem.readAll: unknown key");
	import_bad(IMP_FORMAT_SRT, "s.json", "{\"filesystem\": {\"allowWrite\": [\"src/**/*.ts\"]}}", true,
		   "filesystem.allowWrite[0]: \"src/**/*.ts\" is a glob");
	import_bad(IMP_FORMAT_SRT, "s.json",
		   "{\"filesystem\": {\"allowWrite\": [\".\"]},\n \"network\": {\"allowedDomains\": [\"*.example.com\"],\n"
		   "  \"deniedDomains\": [\"evil.example.com\"]}}",
		   true, "s.json:3:21: network.deniedDomains[0]: \"evil.example.com\" overlaps");
	import_bad(IMP_FORMAT_SRT, "s.json",
		   "{\"filesystem\": {\"allowWrite\": [\".\"]}, \"network\": {\"allowedDomains\": [\"*\"]}}", true,
		   "network.allowedDomains[0]: \"*\" (every host) cannot be expressed");
	import_bad(IMP_FORMAT_SRT, "s.json",
		   "{\"filesystem\": {\"allowWrite\": [\".\"]}, \"network\": {\"allowedDomains\": [], \"httpProxyPort\": 8080}}",
		   true, "network.httpProxyPort: hands filtering to a proxy");
	const char *lb = "{\"filesystem\": {\"allowWrite\": [\".\"]}, \"network\": {\"allowedDomains\": [\"a.com\"], "
			 "\"allowLocalBinding\": true}}";
	char *yaml = NULL;
	p = import_ok(IMP_FORMAT_SRT, "s.json", lb, strlen(lb), true, &yaml);
	assert_non_null(strstr(yaml, "# narrowed (--narrow): network.allowLocalBinding (s.json:1:"));
	assert_non_null(strstr(yaml, "# narrowed (--narrow): filesystem.denyRead (s.json:1:"));
	free(yaml);
	policy_free(p);
	/* A denied domain no allowed one reaches needs nothing. */
	const char *dd = "{\"filesystem\": {\"allowWrite\": [\".\"]}, \"network\": {\"allowedDomains\": [\"a.example.com\"], "
			 "\"deniedDomains\": [\"b.example.com\"]}}";
	p = import_ok(IMP_FORMAT_SRT, "s.json", dd, strlen(dd), true, NULL);
	assert_int_equal(p->network.n_endpoints, 1);
	policy_free(p);
	/* denyWrite outside the current directory: hidden, under --narrow only. */
	const char *dw = "{\"filesystem\": {\"allowWrite\": [\".\", \"/srv\"], \"denyWrite\": [\"/srv/keep\"]}}";
	p = import_ok(IMP_FORMAT_SRT, "s.json", dw, strlen(dw), true, NULL);
	assert_true(has_path(&p->filesystem.deny, "/srv/keep"));
	policy_free(p);
	/* "../x" leaves the current directory: not a protected glob. */
	const char *up = "{\"filesystem\": {\"allowWrite\": [\".\"], \"denyWrite\": [\"../sib\", \"sub/./f\"]}}";
	p = import_ok(IMP_FORMAT_SRT, "s.json", up, strlen(up), true, NULL);
	assert_true(has_path(&p->filesystem.deny, "/work/sib"));
	assert_true(has_path(&p->filesystem.protect, "sub/f/**"));
	policy_free(p);
}

static void test_mxc_mapping(void **state)
{
	(void)state;
	size_t len;
	char *text = read_data("mxc/12_lxc_filesystem_access.json", &len);
	struct policy *p = import_ok(IMP_FORMAT_MXC, "12.json", text, len, false, NULL);
	assert_string_equal(p->sandbox.workspace, "/mnt/output");
	assert_true(has_path(&p->filesystem.read, "/mnt/shared"));
	assert_true(has_path(&p->filesystem.deny, "/etc/shadow"));
	assert_false(p->filesystem.protect_defaults);
	assert_int_equal(p->network.mode, POLICY_NET_NONE);
	policy_free(p);
	/* --narrow keeps airlock's protected paths. */
	p = import_ok(IMP_FORMAT_MXC, "12.json", text, len, true, NULL);
	assert_true(p->filesystem.protect_defaults);
	policy_free(p);
	free(text);

	text = read_data("mxc/18_mac_filesystem_access.json", &len);
	p = import_ok(IMP_FORMAT_MXC, "18.json", text, len, false, NULL);
	assert_string_equal(p->sandbox.workspace, "/tmp");
	assert_int_equal(p->sandbox.limits.wall_seconds, 15);
	assert_true(has_path(&p->filesystem.deny, "/Users"));
	policy_free(p);
	free(text);

	text = read_data("mxc/13_lxc_network_restricted.json", &len);
	char *y = NULL;
	struct error err = { 0 };
	assert_true(imp_convert(IMP_FORMAT_MXC, "13.json", text, len, true, &y, &err) < 0);
	assert_non_null(strstr(err.msg, "13.json:1:1: filesystem: is missing"));
	free(text);

	text = read_data("mxc/30_network_0_8_directional.json", &len);
	/* With a path granted, the CIDR rule is what is refused. */
	char *withfs = NULL;
	assert_true(asprintf(&withfs, "{\"filesystem\": {\"readwritePaths\": [\"/srv\"]},%s", strchr(text, '{') + 1) > 0);
	import_bad(IMP_FORMAT_MXC, "30.json", withfs, true, "network.egress.allow: address-range rules have no airlock form");
	free(withfs);
	free(text);

	import_bad(IMP_FORMAT_MXC, "w.json", "{\"version\": \"0.6.0-alpha\", \"filesystem\": {\"readwritePaths\": "
		   "[\"C:\\\\temp\"]}}", false, "w.json:1:62: filesystem.readwritePaths[0]: \"C:\\temp\" is not an absolute POSIX path");
	import_bad(IMP_FORMAT_MXC, "w.json", "{\"filesystem\": {}}", false, "version: is missing");
	import_bad(IMP_FORMAT_MXC, "w.json", "{\"version\": \"0.8.0-alpha\", \"filesystem\": {\"readwritePaths\": [\"/a\"]}, "
		   "\"network\": {\"defaultPolicy\": \"allow\"}}", false, "network.defaultPolicy: \"allow\" lets everything out");
	import_bad(IMP_FORMAT_MXC, "w.json", "{\"version\": \"0.8.0-alpha\", \"filesystem\": {\"readwritePaths\": [\"/a\"], "
		   "\"deniedPaths\": [\"/a\"]}}", false, "is also granted by");
	import_bad(IMP_FORMAT_MXC, "w.json", "{\"version\": \"0.8.0-alpha\", \"filesystem\": {\"readwritePaths\": [\"/a\"]}, "
		   "\"network\": {\"allowedHosts\": [\"api.github.com\"]}}", false, "pass --narrow");
	const char *hosts = "{\"version\": \"0.8.0-alpha\", \"filesystem\": {\"readonlyPaths\": [\"/a\"]}, \"network\": "
			    "{\"allowedHosts\": [\"api.github.com\"], \"blockedHosts\": [\"b.example.com\"]}, \"timeoutMs\": 2500}";
	import_bad(IMP_FORMAT_MXC, "w.json", hosts, false, "");
	p = import_ok(IMP_FORMAT_MXC, "w.json", hosts, strlen(hosts), true, NULL);
	/* A read-only path only: it is the workspace, protected as a whole. */
	assert_string_equal(p->sandbox.workspace, "/a");
	assert_true(has_path(&p->filesystem.protect, "**"));
	assert_non_null(endpoint(p, "api.github.com"));
	assert_int_equal(p->sandbox.limits.wall_seconds, 2);
	policy_free(p);
}

static void test_codex_mapping(void **state)
{
	(void)state;
	size_t len;
	char *text = read_data("codex/workspace-write.toml", &len), *yaml = NULL;
	struct error err = { 0 };

	assert_true(imp_convert(IMP_FORMAT_CODEX, "ww.toml", text, len, false, &yaml, &err) < 0);
	assert_non_null(strstr(err.msg, "ww.toml:2:1: sandbox_mode: Codex lets commands read any file"));
	struct policy *p = import_ok(IMP_FORMAT_CODEX, "ww.toml", text, len, true, &yaml);
	/* The workspace stays writable with .git and .codex protected;
	 * writable_roots are write paths, the names Codex keeps read-only
	 * in them hidden. */
	assert_false(has_path(&p->filesystem.protect, "**"));
	assert_true(has_path(&p->filesystem.protect, ".git/**"));
	assert_true(has_path(&p->filesystem.protect, ".codex/**"));
	assert_true(has_path(&p->filesystem.write, "/tmp"));
	assert_true(has_path(&p->filesystem.deny, "/tmp/.git"));
	assert_int_equal(p->network.mode, POLICY_NET_NONE);
	assert_non_null(strstr(yaml, "# from sandbox_workspace_write.writable_roots[0] (ww.toml:8:19)\n    - \"/tmp\""));
	policy_free(p);
	free(yaml);
	free(text);

	text = read_data("codex/read-only.toml", &len);
	p = import_ok(IMP_FORMAT_CODEX, "ro.toml", text, len, true, NULL);
	assert_true(has_path(&p->filesystem.protect, "**"));
	assert_int_equal(p->filesystem.write.n, 0);
	policy_free(p);
	free(text);

	text = read_data("codex/danger-full-access.toml", &len);
	assert_true(imp_convert(IMP_FORMAT_CODEX, "d.toml", text, len, true, &yaml, &err) < 0);
	assert_non_null(strstr(err.msg, "d.toml:2:1: sandbox_mode: danger-full-access is no sandbox"));
	free(text);

	import_bad(IMP_FORMAT_CODEX, "c.toml", "model = \"o3\"\nsandbox_mod = \"read-only\"\n", true,
		   "c.toml:2:1: sandbox_mod: unknown key");
	import_bad(IMP_FORMAT_CODEX, "c.toml", "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\n"
		   "writable_root = [\"/x\"]\n", true, "c.toml:3:1: sandbox_workspace_write.writable_root: unknown key");
	import_bad(IMP_FORMAT_CODEX, "c.toml", "default_permissions = \":workspace\"\n", true,
		   "c.toml:1:1: default_permissions: Codex permission profiles (beta) are not imported");
	import_bad(IMP_FORMAT_CODEX, "c.toml", "[profiles.ci]\nsandbox_mode = \"danger-full-access\"\n", true,
		   "profiles.ci: a profile with its own sandbox settings");
	import_bad(IMP_FORMAT_CODEX, "c.toml", "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\n"
		   "network_access = true\n", false, "");
	const char *net = "sandbox_mode = \"workspace-write\"\napproval_policy = \"never\"\n[sandbox_workspace_write]\n"
			  "network_access = true\nexclude_slash_tmp = true\n[mcp_servers.x]\ncommand = \"npx\"\n";
	p = import_ok(IMP_FORMAT_CODEX, "c.toml", net, strlen(net), true, &yaml);
	/* Any host cannot be expressed: narrowed to none, and said so. */
	assert_int_equal(p->network.mode, POLICY_NET_NONE);
	assert_false(has_path(&p->filesystem.write, "/tmp"));
	assert_non_null(strstr(yaml, "narrowed (--narrow): sandbox_workspace_write.network_access (c.toml:4:1)"));
	assert_non_null(strstr(yaml, "not imported: mcp_servers (c.toml:6:2)"));
	policy_free(p);
	free(yaml);
}

static void test_openshell_mapping(void **state)
{
	(void)state;
	size_t len;
	char *text = read_data("openshell/schema-filesystem.yaml", &len), *yaml = NULL;
	struct error err = { 0 };

	assert_true(imp_convert(IMP_FORMAT_OPENSHELL, "fs.yaml", text, len, false, &yaml, &err) < 0);
	assert_non_null(strstr(err.msg, "fs.yaml:16:3: landlock.compatibility: best_effort"));
	struct policy *p = import_ok(IMP_FORMAT_OPENSHELL, "fs.yaml", text, len, true, NULL);
	/* Only what is listed: no baseline; read-only paths are readable
	 * and executable; the working directory is the workspace. */
	assert_false(p->filesystem.baseline);
	assert_true(has_path(&p->filesystem.read, "/usr"));
	assert_true(has_path(&p->filesystem.read, "/etc"));
	assert_false(has_path(&p->filesystem.read, "/proc"));
	assert_true(has_path(&p->filesystem.write, "/tmp"));
	assert_true(p->process.exec_set);
	assert_true(has_path(&p->process.exec, "/usr"));
	assert_true(has_path(&p->process.exec, "/work/proj"));
	assert_string_equal(p->sandbox.workspace, "/work/proj");
	policy_free(p);
	free(text);

	/* Entries limited to some programs: refused, or left out. */
	text = read_data("openshell/schema-full-example.yaml", &len);
	assert_true(imp_convert(IMP_FORMAT_OPENSHELL, "full.yaml", text, len, false, &yaml, &err) < 0);
	assert_non_null(strstr(err.msg, "full.yaml:24:5: network_policies.github_rest_api.binaries: OpenShell lets only"));
	p = import_ok(IMP_FORMAT_OPENSHELL, "full.yaml", text, len, true, NULL);
	assert_int_equal(p->network.n_endpoints, 0);
	policy_free(p);
	free(text);

	const char *any = "version: 1\nfilesystem_policy:\n  include_workdir: true\nlandlock: {compatibility: hard_requirement}\n"
			  "network_policies:\n  gh:\n    endpoints:\n      - host: api.github.com\n        port: 443\n"
			  "        protocol: rest\n        access: read-only\n      - host: \"**.npmjs.org\"\n        ports: [443, 8443]\n"
			  "      - host: uploads.example.com\n        port: 443\n        protocol: rest\n        access: read-write\n"
			  "    binaries:\n      - path: /**\n";
	p = import_ok(IMP_FORMAT_OPENSHELL, "any.yaml", any, strlen(any), false, NULL);
	const struct policy_endpoint *e = endpoint(p, "api.github.com");
	assert_non_null(e);
	if (!e)
		return;
	assert_true(e->intercept);
	assert_int_equal(e->n_rules, 1);
	assert_int_equal(e->rules[0].n_methods, 3);
	e = endpoint(p, "*.npmjs.org");
	assert_non_null(e);
	if (!e)
		return;
	assert_int_equal(e->n_ports, 2);
	assert_int_equal(e->n_rules, 0);
	e = endpoint(p, "uploads.example.com");
	assert_non_null(e);
	if (!e)
		return;
	assert_int_equal(e->rules[0].n_methods, 6);
	assert_false(p->filesystem.protect_defaults);
	policy_free(p);

	import_bad(IMP_FORMAT_OPENSHELL, "o.yaml", "version: 1\nfilesystem_policy: {include_workdir: true}\n"
		   "network_policies:\n  x:\n    endpoints:\n      - host: \"*.example.com\"\n        port: 443\n"
		   "    binaries: [{path: /**}]\n", false, "o.yaml:6:9: network_policies.x.endpoints[0].host: \"*.example.com\": OpenShell's '*' matches within one label");
	import_bad(IMP_FORMAT_OPENSHELL, "o.yaml", "version: 1\nfilesystem_policy: {include_workdir: true}\n"
		   "network_policies:\n  x:\n    endpoints:\n      - host: a.example.com\n        port: 443\n        protocol: rest\n"
		   "        rules: [{allow: {method: GET, path: /x}}]\n    binaries: [{path: /**}]\n", false,
		   "network_policies.x.endpoints[0].rules: has no airlock form");
	import_bad(IMP_FORMAT_OPENSHELL, "o.yaml", "version: 1\nfilesystem_policy: {include_workdir: true}\n"
		   "network_policies:\n  x:\n    endpoints:\n      - host: a.example.com\n        prot: 443\n"
		   "    binaries: [{path: /usr/bin/curl}]\n", true, "o.yaml:7:9: network_policies.x.endpoints[0].prot: unknown key");
	import_bad(IMP_FORMAT_OPENSHELL, "o.yaml", "version: 2\n", false, "o.yaml:1:1: version: must be 1");
	import_bad(IMP_FORMAT_OPENSHELL, "o.yaml", "version: 1\nfilesystem_policy: {read_only: [/usr]}\nnetwork_middlewares: {x: {}}\n",
		   false, "network_middlewares: middleware has no airlock form");
}

/* MXC and OpenShell read their filesystem section through one function:
 * required, and without --narrow airlock's protected paths are turned off
 * with the runtime named; with it they stay on and the narrowing is said. */
static void test_filesystem_section_shared(void **state)
{
	(void)state;
	static const struct {
		enum imp_format f;
		const char *name, *bare, *with_fs, *key, *runtime;
	} cases[] = {
		{ IMP_FORMAT_MXC, "m.json", "{\"version\": \"0.8.0\"}",
		  "{\"version\": \"0.8.0\", \"filesystem\": {\"readwritePaths\": [\"/srv/w\"]}}", "filesystem", "MXC" },
		{ IMP_FORMAT_OPENSHELL, "o.yaml", "version: 1\n",
		  "version: 1\nfilesystem_policy: {include_workdir: true}\n", "filesystem_policy", "OpenShell" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[300];
		snprintf(want, sizeof(want), "%s:1:1: %s: is missing; airlock always gives the agent a workspace",
			 cases[i].name, cases[i].key);
		import_bad(cases[i].f, cases[i].name, cases[i].bare, true, want);
		import_bad(cases[i].f, cases[i].name, cases[i].bare, false, want);

		char *yaml = NULL;
		struct policy *p = import_ok(cases[i].f, cases[i].name, cases[i].with_fs, strlen(cases[i].with_fs),
					     false, &yaml);
		assert_false(p->filesystem.protect_defaults);
		snprintf(want, sizeof(want), "%s has no protected paths (with --narrow they stay on)", cases[i].runtime);
		if (!strstr(yaml, want))
			fail_msg("%s not in\n%s", want, yaml);
		policy_free(p);
		free(yaml);

		p = import_ok(cases[i].f, cases[i].name, cases[i].with_fs, strlen(cases[i].with_fs), true, &yaml);
		assert_true(p->filesystem.protect_defaults);
		snprintf(want, sizeof(want), "# narrowed (--narrow): %s (%s:", cases[i].key, cases[i].name);
		if (!strstr(yaml, want))
			fail_msg("%s not in\n%s", want, yaml);
		snprintf(want, sizeof(want), "): airlock's protected paths (git hooks, shell rc files, ...) stay read-only");
		if (!strstr(yaml, want))
			fail_msg("%s not in\n%s", want, yaml);
		assert_null(strstr(yaml, "has no protected paths"));
		policy_free(p);
		free(yaml);
	}
}

/* srt's three path lists go through one walk: each entry named by its
 * list and index, and the current directory judged per list. */
static void test_srt_path_lists(void **state)
{
	(void)state;
	static const char *const keys[] = { "denyRead", "allowWrite", "denyWrite" };
	for (size_t i = 0; i < 3; i++) {
		char text[256], want[256];
		snprintf(text, sizeof(text), "{\"filesystem\": {\"allowWrite\": [\".\"], \"%s\": [\"/ok\", \"/a?\"]}}",
			 keys[i]);
		if (i == 1)
			snprintf(text, sizeof(text), "{\"filesystem\": {\"allowWrite\": [\".\", \"/a?\"]}}");
		snprintf(want, sizeof(want), "filesystem.%s[1]: \"/a?\" is a glob", keys[i]);
		import_bad(IMP_FORMAT_SRT, "s.json", text, true, want);
	}
	import_bad(IMP_FORMAT_SRT, "s.json", "{\"filesystem\": {\"denyRead\": [\"/x\", \"./\"]}}", true,
		   "s.json:1:36: filesystem.denyRead[1]: denies the current directory");
	import_bad(IMP_FORMAT_SRT, "s.json", "{\"filesystem\": {\"allowWrite\": [\".\", \"a/..\", \"./\"]}}", true,
		   "filesystem.allowWrite[2]: the current directory is listed twice");
	import_bad(IMP_FORMAT_SRT, "s.json", "{\"filesystem\": {\"allowWrite\": [\".\"], \"denyWrite\": [\".\"]}}", true,
		   "filesystem.denyWrite[0]: denies writing the current directory that allowWrite allows");
	/* Without "." written, denying it is no contradiction. */
	const char *ok = "{\"filesystem\": {\"denyRead\": [\"/x\"], \"allowWrite\": [\"/w\"], \"denyWrite\": [\".\", "
			 "\"./a/./b\"]}}";
	struct policy *p = import_ok(IMP_FORMAT_SRT, "s.json", ok, strlen(ok), true, NULL);
	assert_true(has_path(&p->filesystem.deny, "/x"));
	assert_true(has_path(&p->filesystem.write, "/w"));
	assert_true(has_path(&p->filesystem.protect, "a/b/**"));
	assert_true(has_path(&p->filesystem.protect, "**"));
	policy_free(p);
}

/* MXC and OpenShell check their path lists through one walk: in order,
 * each a string, absolute (each runtime's own words) and no glob. */
static void test_path_lists_shared(void **state)
{
	(void)state;
#define MXC_LIST "{\"version\": \"0.8.0\", \"filesystem\": {\"readwritePaths\": [\"/srv/w\", %s]}}"
#define OS_LIST "version: 1\nfilesystem_policy:\n  read_write: [/srv/w, %s]\n"
	static const struct {
		const char *item, *mxc_want, *os_want;
	} cases[] = {
		{ "\"rel/x\"", "m.json:1:66: filesystem.readwritePaths[1]: \"rel/x\" is not an absolute POSIX path (a "
			       "Windows path has no meaning in a Linux sandbox)",
		  "o.yaml:3:24: filesystem_policy.read_write[1]: \"rel/x\" is not absolute (OpenShell requires it)" },
		{ "\"/a/*\"", "m.json:1:66: filesystem.readwritePaths[1]: \"/a/*\" is a glob; airlock paths are literal",
		  "o.yaml:3:24: filesystem_policy.read_write[1]: \"/a/*\" is a glob; airlock paths are literal" },
		{ "[\"/x\"]", "m.json:1:66: filesystem.readwritePaths[1]:", "o.yaml:3:24: filesystem_policy.read_write[1]:" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), MXC_LIST, cases[i].item);
		import_bad(IMP_FORMAT_MXC, "m.json", text, true, cases[i].mxc_want);
		snprintf(text, sizeof(text), OS_LIST, cases[i].item);
		import_bad(IMP_FORMAT_OPENSHELL, "o.yaml", text, true, cases[i].os_want);
	}
	/* Good paths go where each runtime puts them: MXC's first read-write
	 * path is the workspace, OpenShell's too, its others writable. */
	char text[512];
	snprintf(text, sizeof(text), MXC_LIST, "\"/srv/x\"");
	struct policy *p = import_ok(IMP_FORMAT_MXC, "m.json", text, strlen(text), true, NULL);
	assert_string_equal(p->sandbox.workspace, "/srv/w");
	assert_true(has_path(&p->filesystem.write, "/srv/x"));
	policy_free(p);
	snprintf(text, sizeof(text), OS_LIST, "/srv/x");
	p = import_ok(IMP_FORMAT_OPENSHELL, "o.yaml", text, strlen(text), true, NULL);
	assert_string_equal(p->sandbox.workspace, "/srv/w");
	assert_true(has_path(&p->filesystem.write, "/srv/x"));
	policy_free(p);
#undef MXC_LIST
#undef OS_LIST
}

/* Drop "# ..." comments and the blanks before them, in place. */
static void strip_comments(char *t)
{
	char *d = t;
	for (char *s = t; *s; s++) {
		if (*s == '#') {
			while (d > t && d[-1] == ' ')
				d--;
			while (s[1] && s[1] != '\n')
				s++;
			continue;
		}
		*d++ = *s;
	}
	*d = '\0';
}

/* Import-only formats: import -> print -> parse prints the same. */
static void print_round_trip(enum imp_format f, const char *rel)
{
	size_t len;
	char *text = read_data(rel, &len);
	struct policy *p1 = import_ok(f, rel, text, len, true, NULL), *p2 = NULL;
	char *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;
	struct error err = { 0 };
	FILE *fa = open_memstream(&a, &al);
	policy_print(p1, fa);
	fclose(fa);
	if (policy_load_buffer("(printed)", NULL, a, al, &ctx, &p2, &err) < 0)
		fail_msg("%s: printed policy refused: %s", rel, err.msg);
	FILE *fb = open_memstream(&b, &bl);
	policy_print(p2, fb);
	fclose(fb);
	assert_true(policy_equal(p1, p2));
	/* The provenance comments differ (file:line); the settings do not. */
	strip_comments(a);
	strip_comments(b);
	assert_string_equal(a, b);
	policy_free(p1);
	policy_free(p2);
	free(a);
	free(b);
	free(text);
}

static void test_print_round_trips(void **state)
{
	(void)state;
	print_round_trip(IMP_FORMAT_CODEX, "codex/workspace-write.toml");
	print_round_trip(IMP_FORMAT_CODEX, "codex/read-only.toml");
	print_round_trip(IMP_FORMAT_OPENSHELL, "openshell/schema-filesystem.yaml");
	print_round_trip(IMP_FORMAT_OPENSHELL, "openshell/schema-full-example.yaml");
	print_round_trip(IMP_FORMAT_SRT, "srt/complete.json");
	print_round_trip(IMP_FORMAT_MXC, "mxc/12_lxc_filesystem_access.json");
}

/* import -> policy -> export -> import gives the same policy. */
static void round_trip(enum imp_format f, const char *rel, bool narrow)
{
	size_t len;
	char *text = read_data(rel, &len), *json = NULL, *warn = NULL;
	struct error err = { 0 };
	struct policy *p1 = import_ok(f, rel, text, len, narrow, NULL);

	if (imp_export(f, p1, ctx.cwd, false, &json, &warn, &err) == 0)
		fail_msg("%s: exported without --accept-wider", rel);
	if (imp_export(f, p1, ctx.cwd, true, &json, &warn, &err) < 0)
		fail_msg("%s: export refused: %s", rel, err.msg);
	assert_non_null(strstr(warn, "sandbox.limits"));
	struct policy *p2 = import_ok(f, "(exported)", json, strlen(json), narrow, NULL);
	if (!policy_equal(p1, p2)) {
		fprintf(stderr, "exported:\n%s\n", json);
		policy_print(p1, stderr);
		policy_print(p2, stderr);
		fail_msg("%s: round trip changed the policy", rel);
	}
	policy_free(p1);
	policy_free(p2);
	free(json);
	free(warn);
	free(text);
}

static void test_round_trips(void **state)
{
	(void)state;
	round_trip(IMP_FORMAT_SRT, "srt/restrict-dirs.json", true);
	round_trip(IMP_FORMAT_MXC, "mxc/12_lxc_filesystem_access.json", false);
	round_trip(IMP_FORMAT_MXC, "mxc/18_mac_filesystem_access.json", false);
}

static void test_export_refusals(void **state)
{
	(void)state;
	const char *y = "version: 1\nnetwork:\n  endpoints:\n    - host: api.example.com\n      ports: [443]\n";
	struct policy *p = NULL;
	struct error err = { 0 };
	char *json = NULL, *warn = NULL;
	assert_int_equal(policy_load_buffer("p.yaml", NULL, y, strlen(y), &ctx, &p, &err), 0);
	/* srt: the endpoint's port is lost; named, refused without the flag. */
	assert_true(imp_export(IMP_FORMAT_SRT, p, ctx.cwd, false, &json, &warn, &err) < 0);
	assert_non_null(strstr(err.msg, "pass --accept-wider"));
	assert_int_equal(imp_export(IMP_FORMAT_SRT, p, ctx.cwd, true, &json, &warn, &err), 0);
	assert_non_null(strstr(warn, "network.endpoints[0]: api.example.com: srt allows every port"));
	assert_non_null(strstr(json, "\"allowedDomains\": [\"api.example.com\"]"));
	free(json);
	free(warn);
	/* MXC: no endpoints at all, even with the flag. */
	assert_true(imp_export(IMP_FORMAT_MXC, p, ctx.cwd, true, &json, &warn, &err) < 0);
	assert_non_null(strstr(err.msg, "network: MXC's host filtering"));
	policy_free(p);

	y = "version: 1\nsandbox:\n  mode: observe\n";
	assert_int_equal(policy_load_buffer("p.yaml", NULL, y, strlen(y), &ctx, &p, &err), 0);
	assert_true(imp_export(IMP_FORMAT_SRT, p, ctx.cwd, true, &json, &warn, &err) < 0);
	assert_non_null(strstr(err.msg, "sandbox.mode: observe is not expressible in srt"));
	policy_free(p);

	y = "version: 1\nfilesystem:\n  protect: [\"**/.envrc\"]\n  protect_defaults: false\n";
	assert_int_equal(policy_load_buffer("p.yaml", NULL, y, strlen(y), &ctx, &p, &err), 0);
	assert_true(imp_export(IMP_FORMAT_SRT, p, ctx.cwd, true, &json, &warn, &err) < 0);
	assert_non_null(strstr(err.msg, "filesystem.protect[0]: \"**/.envrc\" is not expressible in srt"));
	assert_true(imp_export(IMP_FORMAT_MXC, p, ctx.cwd, true, &json, &warn, &err) < 0);
	assert_non_null(strstr(err.msg, "filesystem.protect[0]: MXC has no read-only path"));
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_valid),
		cmocka_unit_test(test_json_malformed),
		cmocka_unit_test(test_json_many_keys),
		cmocka_unit_test(test_toml_valid),
		cmocka_unit_test(test_toml_malformed),
		cmocka_unit_test(test_readers_share_strings_and_keys),
		cmocka_unit_test(test_srt_complete),
		cmocka_unit_test(test_srt_mapping),
		cmocka_unit_test(test_mxc_mapping),
		cmocka_unit_test(test_filesystem_section_shared),
		cmocka_unit_test(test_path_lists_shared),
		cmocka_unit_test(test_srt_path_lists),
		cmocka_unit_test(test_codex_mapping),
		cmocka_unit_test(test_openshell_mapping),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_print_round_trips),
		cmocka_unit_test(test_export_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
