/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loader's field tables (src/policy/parse*.c) against the JSON Schema
 * the project ships for editors and CI (docs/policy.schema.json): for each
 * map of the policy, every key the schema describes is a key the loader
 * reads, and every key the loader reads is in the schema. A key added to
 * one and not the other fails here, before an editor validates a policy
 * the loader refuses, or the loader reads a key no schema user knows of.
 *
 * The schema is JSON, which the policy's own YAML reader reads too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/parse.h"

#define SCHEMA_FILE AIRLOCK_SOURCE_ROOT "/docs/policy.schema.json"

/* Keys of the schema read by other code than the tables: the enterprise
 * section is taken out of the file by layer.c before the loader sees it,
 * and the mcp section is read by mcp.c (its keys are checked against
 * schema.c by test_schema). */
static const struct {
	const char *map, *key;
} elsewhere[] = {
	{ "", "enterprise" },
};

static bool read_elsewhere(const char *map, const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(elsewhere); i++)
		if (strcmp(elsewhere[i].map, map) == 0 && strcmp(elsewhere[i].key, key) == 0)
			return true;
	return false;
}

static const struct policy_ynode *get(const struct policy_ynode *map, const char *key)
{
	if (!map || map->type != POLICY_YNODE_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (strcmp(map->items[i]->str, key) == 0)
			return map->items[i + 1];
	return NULL;
}

/* Follows "$ref": "#/a/b/..." (a JSON pointer into this file) from o. */
static const struct policy_ynode *resolve(const struct policy_ynode *root, const struct policy_ynode *o)
{
	for (int hops = 0; o && hops < 8; hops++) {
		const struct policy_ynode *ref = get(o, "$ref");
		char buf[256];

		if (!ref)
			return o;
		assert_int_equal(strncmp(ref->str, "#/", 2), 0);
		snprintf(buf, sizeof(buf), "%s", ref->str + 2);
		o = root;
		for (char *save = NULL, *c = strtok_r(buf, "/", &save); c && o; c = strtok_r(NULL, "/", &save))
			o = get(o, c);
		if (!o)
			fail_msg("%s: no such place in %s", ref->str, SCHEMA_FILE);
	}
	return o;
}

/* The schema object for a schema.c path ("network.endpoints[].rules[]"),
 * or NULL. */
static const struct policy_ynode *schema_object(const struct policy_ynode *root, const char *path)
{
	const struct policy_ynode *o = root;
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *c = strtok_r(buf, ".", &save); c && o; c = strtok_r(NULL, ".", &save)) {
		size_t n = strlen(c);
		bool list = n > 2 && strcmp(c + n - 2, "[]") == 0;

		if (list)
			c[n - 2] = '\0';
		o = resolve(root, get(resolve(root, o), "properties"));
		o = resolve(root, get(o, c));
		if (o && list)
			o = resolve(root, get(o, "items"));
	}
	return resolve(root, o);
}

static bool table_has(const struct parse_table *t, const char *key)
{
	for (size_t i = 0; i < t->n_keys; i++)
		if (strcmp(t->keys[i].key, key) == 0)
			return true;
	return false;
}

/* Prints and counts the keys one side has and the other lacks. */
static size_t compare(const struct parse_table *t, const struct policy_ynode *obj, const char *src)
{
	const struct policy_ynode *props = get(obj, "properties");
	size_t bad = 0;

	if (!props || props->type != POLICY_YNODE_MAP) {
		print_error("\"%s\": no map of properties in the schema\n", t->schema);
		return 1;
	}
	for (size_t i = 0; i + 1 < props->n; i += 2) {
		const char *key = props->items[i]->str;
		if (!table_has(t, key) && !read_elsewhere(t->schema, key)) {
			print_error("\"%s\": %s is in %s but in no table of the loader\n", t->schema, key, src);
			bad++;
		}
	}
	for (size_t i = 0; i < t->n_keys; i++) {
		if (!get(props, t->keys[i].key)) {
			print_error("\"%s\": %s is read by the loader but missing from %s\n", t->schema,
				    t->keys[i].key, src);
			bad++;
		}
	}
	return bad;
}

static struct policy_ynode *load_schema(void)
{
	struct policy_ynode *root = NULL;
	struct error err = { 0 };
	FILE *f = fopen(SCHEMA_FILE, "r");
	char *buf = malloc(POLICY_MAX_FILE);
	size_t len;

	assert_non_null(f);
	assert_non_null(buf);
	len = fread(buf, 1, POLICY_MAX_FILE, f);
	fclose(f);
	assert_true(len > 0 && len < POLICY_MAX_FILE);
	if (policy_ytree_parse(SCHEMA_FILE, buf, len, &root, &err) < 0)
		fail_msg("%s", err.msg);
	free(buf);
	return root;
}

static void test_tables_match_the_json_schema(void **state)
{
	struct policy_ynode *root = load_schema();
	size_t bad = 0;

	(void)state;
	assert_true(parse_n_tables >= 16);
	for (size_t i = 0; i < parse_n_tables; i++) {
		const struct parse_table *t = parse_tables[i];
		const struct policy_ynode *obj = schema_object(root, t->schema);

		if (!obj) {
			print_error("\"%s\": a table of the loader with no object in %s\n", t->schema, SCHEMA_FILE);
			bad++;
			continue;
		}
		bad += compare(t, obj, SCHEMA_FILE);
	}
	policy_ynode_free(root);
	assert_int_equal(bad, 0);
}

/* Every map the schema describes, outside the mcp section, has a table:
 * a section added to the schema alone is found too. */
static size_t walk(const struct policy_ynode *root, const struct policy_ynode *o, const char *path, unsigned depth)
{
	const struct policy_ynode *props;
	size_t bad = 0;

	o = resolve(root, o);
	if (!o || depth > 12)
		return 0;
	if (strcmp(path, "mcp") == 0 || strcmp(path, "enterprise") == 0)
		return 0;
	if (get(o, "items"))
		return walk(root, get(o, "items"), path, depth + 1);
	props = get(o, "properties");
	if (!props)
		return 0;
	bool found = false;
	for (size_t i = 0; i < parse_n_tables && !found; i++)
		found = strcmp(parse_tables[i]->schema, path) == 0;
	if (!found) {
		print_error("\"%s\": a map of %s that no table of the loader reads\n", path, SCHEMA_FILE);
		bad++;
	}
	for (size_t i = 0; i + 1 < props->n; i += 2) {
		const struct policy_ynode *v = resolve(root, props->items[i + 1]);
		char child[256];
		bool list = v && get(v, "items");

		snprintf(child, sizeof(child), "%s%s%s%s", path, path[0] ? "." : "", props->items[i]->str,
			 list ? "[]" : "");
		bad += walk(root, v, child, depth + 1);
	}
	return bad;
}

static void test_every_schema_map_has_a_table(void **state)
{
	struct policy_ynode *root = load_schema();

	(void)state;
	assert_int_equal(walk(root, root, "", 0), 0);
	policy_ynode_free(root);
}

/* The valid keys an "unknown key" message names come from schema.c: each
 * key a table reads must be among them, or the message would leave it out
 * (and layering and the prover would not know it). */
static void test_tables_are_in_schema_c(void **state)
{
	size_t bad = 0;

	(void)state;
	for (size_t i = 0; i < parse_n_tables; i++) {
		const struct parse_table *t = parse_tables[i];
		for (size_t j = 0; j < t->n_keys; j++) {
			if (policy_schema_knows(t->schema, t->keys[j].key))
				continue;
			print_error("\"%s\": %s is read by the loader but not in src/policy/schema.c\n", t->schema,
				    t->keys[j].key);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* The comparison itself finds a key on either side only. */
static void test_compare_finds_either_side(void **state)
{
	static const char doc[] = "{\"properties\": {\"a\": {}, \"b\": {}}}";
	static const struct parse_key ab[] = { { "a", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
					       { "b", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 } };
	static const struct parse_key abc[] = { { "a", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
						{ "b", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 },
						{ "c", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 } };
	static const struct parse_key a[] = { { "a", NULL, 0, PARSE_NO_ORIGIN, NULL, 0 } };
	const struct parse_table same = PARSE_TABLE("x", ab), more = PARSE_TABLE("x", abc), fewer = PARSE_TABLE("x", a);
	struct policy_ynode *obj = NULL;
	struct error err = { 0 };

	(void)state;
	assert_int_equal(policy_ytree_parse("t.json", doc, strlen(doc), &obj, &err), 0);
	assert_int_equal(compare(&same, obj, "t.json"), 0);
	assert_int_equal(compare(&more, obj, "t.json"), 1);
	assert_int_equal(compare(&fewer, obj, "t.json"), 1);
	policy_ynode_free(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_finds_either_side),
		cmocka_unit_test(test_tables_match_the_json_schema),
		cmocka_unit_test(test_every_schema_map_has_a_table),
		cmocka_unit_test(test_tables_are_in_schema_c),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
