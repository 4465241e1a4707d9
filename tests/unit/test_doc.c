/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the one JSON reader (src/doc/json.c) where its callers
 * differ: tokens of the caller's (the audit writer's, which may not
 * allocate) or grown by the reader (the MCP gateway's messages, pins and
 * imported files). Both ways must give one verdict on one text: a parser
 * differential between two readers of one message is how a decision and
 * its record come to disagree. Each refusal is tested next to an
 * accepted neighbour.
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

#include "doc/json.h"
#include "util/buf.h"

/* One verdict, whichever way the tokens come: 0 or -EINVAL, and the same
 * error at the same byte. */
static int both(const char *text, unsigned depth)
{
	struct doc_json_tok tok[4096];
	struct doc_json a, b;
	int ra = doc_json_parse(&a, text, strlen(text), tok, 4096, depth);
	int rb = doc_json_parse_grow(&b, text, strlen(text), strlen(text) + 1, 0, depth);
	assert_int_equal(ra, rb);
	if (ra < 0) {
		assert_string_equal(a.err, b.err);
		assert_int_equal(a.err_at, b.err_at);
	} else {
		assert_int_equal(a.ntok, b.ntok);
		assert_memory_equal(a.tok, b.tok, a.ntok * sizeof(*a.tok));
	}
	doc_json_free(&b);
	return ra;
}

static void test_same_verdict_both_ways(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ok;
	} cases[] = {
		{ "{\"a\":[1,2,{\"b\":null}],\"c\":\"d\\u00e9\"}", 1 },
		{ "{\"a\":1,\"a\":2}", 0 },
		{ "{\"a\":1,\"\\u0061\":2}", 0 }, /* the same key once unescaped */
		{ "{\"a\":1,\"b\":2}", 1 },
		{ "[1,2,]", 0 },
		{ "[1,2]", 1 },
		{ "[\"\\ud800\"]", 0 },
		{ "[\"\\ud83d\\ude00\"]", 1 },
		{ "[\"\\u0000\"]", 0 },
		{ "[\"\\u0001\"]", 1 },
		{ "[\"\xc0\xaf\"]", 0 },
		{ "[\"\xc3\xa9\"]", 1 },
		{ "[01]", 0 },
		{ "[0.1]", 1 },
		{ "// c\n[]", 0 },
		{ "[] ", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(both(cases[i].text, 8) == 0, cases[i].ok);
}

/* Grown tokens: as many as the text needs, up to the bound. */
static void test_grow_bound(void **state)
{
	(void)state;
	struct buf t = { 0 };
	assert_int_equal(buf_puts(&t, "["), 0);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(buf_puts(&t, i ? ",1" : "1"), 0);
	assert_int_equal(buf_puts(&t, "]"), 0);
	struct doc_json j;
	assert_int_equal(doc_json_parse_grow(&j, t.data, t.len, 10001, 0, 4), 0);
	assert_int_equal(j.ntok, 10001);
	doc_json_free(&j);
	assert_int_equal(doc_json_parse_grow(&j, t.data, t.len, 10000, 0, 4), -EINVAL);
	assert_string_equal(j.err, "too many values");
	doc_json_free(&j);
	/* A bound on one container's entries: the entry past it is where
	 * the reading stops. */
	assert_int_equal(doc_json_parse_grow(&j, t.data, t.len, 10001, 10000, 4), 0);
	doc_json_free(&j);
	assert_int_equal(doc_json_parse_grow(&j, t.data, t.len, 10001, 9999, 4), -EINVAL);
	assert_string_equal(j.err, DOC_JSON_ERR_ENTRIES_ARRAY);
	assert_int_equal(j.err_at, t.len - 2);
	doc_json_free(&j);
	buf_free(&t);
}

/* Past 32 keys a grown reader sorts them: a duplicate is still found,
 * the first repeat in the text is the one said, with its first
 * occurrence; and thousands of keys that share a long prefix cost no
 * more than a sort. */
static void test_many_keys_sorted(void **state)
{
	(void)state;
	char prefix[300];
	memset(prefix, 'p', 299);
	prefix[299] = '\0';
	struct buf t = { 0 };
	assert_int_equal(buf_puts(&t, "{"), 0);
	for (int i = 0; i < 4000; i++) {
		char m[400];
		snprintf(m, sizeof(m), "%s\"%s%05d\":%d", i ? "," : "", prefix, i, i);
		assert_int_equal(buf_puts(&t, m), 0);
	}
	assert_int_equal(buf_puts(&t, "}"), 0);
	struct doc_json j;
	assert_int_equal(doc_json_parse_grow(&j, t.data, t.len, t.len + 1, 0, 4), 0);
	doc_json_free(&j);
	/* Key 3000 made key 10's twin, and key 3500 key 20's: 3000 is the
	 * first repeat in the text. */
	char *k3000 = strstr(t.data, "03000\""), *k3500 = strstr(t.data, "03500\"");
	memcpy(k3000, "00010", 5);
	memcpy(k3500, "00020", 5);
	assert_int_equal(doc_json_parse_grow(&j, t.data, t.len, t.len + 1, 0, 4), -EINVAL);
	assert_string_equal(j.err, DOC_JSON_ERR_DUPLICATE);
	assert_int_equal(j.err_at, (size_t)(k3000 - t.data) - 300);
	assert_int_equal(j.err_first_at, (size_t)(strstr(t.data, "00010\"") - t.data) - 300);
	doc_json_free(&j);
	/* The fixed-array reader finds the same, its own way. */
	struct doc_json_tok *tok = malloc(8100 * sizeof(*tok));
	assert_non_null(tok);
	struct doc_json f;
	assert_int_equal(doc_json_parse(&f, t.data, t.len, tok, 8100, 4), -EINVAL);
	assert_string_equal(f.err, DOC_JSON_ERR_DUPLICATE);
	assert_int_equal(f.err_at, j.err_at);
	free(tok);
	buf_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_verdict_both_ways),
		cmocka_unit_test(test_grow_bound),
		cmocka_unit_test(test_many_keys_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
