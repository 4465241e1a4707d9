/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one glob matcher (match/glob.c) on its own, with each kind's
 * tokens: what each wildcard may and may not cross, and the '**' + '/'
 * whose empty match is only the whole of it. The callers' own tests
 * (net, handoff) and the prover's (glob) check the same answers through
 * netpol_glob_match, handoff_glob_match and the automata.
 */
#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "match/glob.h"

/* A file glob over bytes; *alive: a continuation could still match. */
static bool file_match(const char *pattern, const char *s, bool *alive)
{
	uint16_t tok[256];
	return match_bytes(tok, match_file_tokens(pattern, tok), NULL, s, alive);
}

/* A request glob over URL units. */
static bool path_match(const char *glob, const char *s)
{
	return match_path_glob(glob, s, strlen(s));
}

static void test_star_stays_in_its_segment(void **state)
{
	(void)state;
	assert_true(file_match("a/*", "a/b", NULL));
	assert_true(file_match("a/*", "a/", NULL));
	assert_false(file_match("a/*", "a/b/c", NULL));
	assert_true(file_match("a/**", "a/b/c", NULL));
	assert_true(path_match("/v1/*", "/v1/x"));
	assert_false(path_match("/v1/*", "/v1/x/y"));
}

/* "**" + "/" is nothing, or a run that ends in '/': never a run that
 * ends elsewhere (a/xb is not under a/ ... /b). At a file glob's start it
 * is one too; a request glob's starts with '/'. */
static void test_dstar_slash(void **state)
{
	(void)state;
	assert_true(file_match("a/**/b", "a/b", NULL));
	assert_true(file_match("a/**/b", "a/x/b", NULL));
	assert_true(file_match("a/**/b", "a/x/y/b", NULL));
	assert_false(file_match("a/**/b", "a/xb", NULL));
	assert_false(file_match("a/**/b", "ab", NULL));
	assert_true(file_match("**/.env", ".env", NULL));
	assert_true(file_match("**/.env", "x/y/.env", NULL));
	assert_false(file_match("**/.env", "x.env", NULL));
	assert_true(path_match("/a/**/b", "/a/b"));
	assert_false(path_match("/a/**/b", "/a/xb"));
}

/* An encoded '/' is one opaque unit: '*' crosses it, a literal '/' in
 * the glob does not match it; an unreserved character's %XX is the
 * character itself. */
static void test_url_units(void **state)
{
	(void)state;
	assert_true(path_match("/a/*", "/a/x%2Fy"));
	assert_false(path_match("/a/x/y", "/a/x%2Fy"));
	assert_true(path_match("/a/b", "/a/%62"));
}

/* The set empties as soon as no continuation can match: the walk that
 * asks whether to descend stops there. */
static void test_alive(void **state)
{
	(void)state;
	bool alive;
	assert_false(file_match("src/*.c", "src/", &alive));
	assert_true(alive);
	assert_false(file_match("src/*.c", "lib/", &alive));
	assert_false(alive);
}

/* MCP name globs: fnmatch(3)'s patterns, run by the one matcher. */
static void test_name_globs(void **state)
{
	static const struct {
		const char *glob, *name;
		int want; /* 1 a match, 0 none, or the refusal */
	} cases[] = {
		/* '*' crosses '/' and a leading '.', unlike a file glob's. */
		{ "fs_*", "fs_read/x", 1 },
		{ "*", ".hidden", 1 },
		{ "fs_?", "fs_a", 1 },
		{ "fs_?", "fs_", 0 },
		{ "[!a-c]x", "dx", 1 },
		{ "[!a-c]x", "bx", 0 },
		{ "[]a]", "]", 1 },
		{ "[[:digit:]]", "7", 1 },
		{ "[[:digit:]]", "x", 0 },
		{ "\\*", "*", 1 },
		{ "\\*", "a", 0 },
		/* A trailing '\\': fnmatch matches nothing, and neither do we. */
		{ "a\\", "a\\", 0 },
		{ "a\\", "a", 0 },
		/* What the locale or the match's progress decides is refused. */
		{ "[[=a=]]", "a", -EINVAL },
		{ "[[.a.]]", "a", -EINVAL },
		{ "[[:nope:]]", "a", -EINVAL },
		{ "read[", "read[", -EINVAL },
		{ "[a-", "a", -EINVAL },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = match_name_glob(cases[i].glob, cases[i].name);
		if (got != cases[i].want)
			fail_msg("glob \"%s\" name \"%s\": %d, want %d", cases[i].glob, cases[i].name, got, cases[i].want);
	}
}

/* The same answers as glibc's fnmatch(p, s, 0) in the C locale, on
 * random patterns made of every construct it reads the same in every
 * locale, and random names over the bytes they name. */
static void test_name_globs_agree_with_fnmatch(void **state)
{
	static const char *const parts[] = { "*", "?", "[ab]", "[!a]", "[^b]", "[a-c]", "[]a]", "[!]]", "[a-]",
					     "[[:alpha:]]", "[[:digit:][:punct:]]", "[\\]]", "[\\-a]", "\\*", "\\?",
					     "\\[", "\\a", "a", "b", "/", ".", "-", "]", "\xc3", "\xa9", "[\x80-\xff]" };
	static const char units[] = "ab/.-]*?[\\1\xc3\xa9";
	(void)state;
	srand(19);
	for (int round = 0; round < 20000; round++) {
		char pat[128] = "", name[32];
		size_t np = (size_t)rand() % 6, nn = (size_t)rand() % 8;
		for (size_t i = 0; i < np; i++)
			strcat(pat, parts[rand() % (int)(sizeof(parts) / sizeof(parts[0]))]);
		if (rand() % 25 == 0)
			strcat(pat, "\\");
		for (size_t i = 0; i < nn; i++)
			name[i] = units[rand() % (int)(sizeof(units) - 1)];
		name[nn] = '\0';
		int ours = match_name_glob(pat, name);
		assert_true(ours >= 0);
		if (ours != (fnmatch(pat, name, 0) == 0))
			fail_msg("pattern \"%s\" name \"%s\": ours %d", pat, name, ours);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_star_stays_in_its_segment),
		cmocka_unit_test(test_dstar_slash),
		cmocka_unit_test(test_url_units),
		cmocka_unit_test(test_alive),
		cmocka_unit_test(test_name_globs),
		cmocka_unit_test(test_name_globs_agree_with_fnmatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
