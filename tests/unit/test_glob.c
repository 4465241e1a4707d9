/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pattern automata against the matchers that enforce the patterns.
 * Random patterns (fixed seed) over a small alphabet; every string up to a
 * length over that alphabet is matched both ways, and the language
 * questions (subset of a union, overlap) are compared with brute force:
 * a "no" must come with a witness that really is in a and in none of b,
 * and is never longer than the shortest counterexample brute force finds;
 * a "yes" must have no counterexample among the enumerated strings.
 */
#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "handoff/handoff.h"
#include "net/netpolicy.h"
#include "policy/glob.h"

/* ---- deterministic randomness ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* ---- the reference matchers, one per kind ---- */

static bool prefix_ref(const char *p, const char *s, size_t len)
{
	size_t n = strlen(p);
	if (n == 1)
		return len >= 1 && s[0] == '/';
	return len >= n && !memcmp(p, s, n) && (len == n || s[n] == '/');
}

static bool ref_match(enum glob_kind k, const char *pat, const char *s, size_t len)
{
	char buf[64];
	switch (k) {
	case GLOB_PATH:
		return netpol_glob_match(pat, s, len);
	case GLOB_HOST:
		memcpy(buf, s, len);
		buf[len] = '\0';
		return netpol_host_match(pat, buf);
	case GLOB_PREFIX:
		return prefix_ref(pat, s, len);
	case GLOB_FILE:
		memcpy(buf, s, len);
		buf[len] = '\0';
		return handoff_glob_match(pat, buf);
	case GLOB_NAME:
		/* As src/mcp/engine.c calls it. */
		memcpy(buf, s, len);
		buf[len] = '\0';
		return fnmatch(pat, buf, 0) == 0;
	}
	return false;
}

/* ---- strings ---- */

struct strings {
	char (*v)[8];
	size_t *len;
	size_t n;
};

static void gen_strings(const char *alpha, size_t maxlen, struct strings *out)
{
	size_t na = strlen(alpha), total = 0, p = 1;
	for (size_t l = 0; l <= maxlen; l++, p *= na)
		total += p;
	out->v = calloc(total, sizeof(*out->v));
	out->len = calloc(total, sizeof(*out->len));
	assert_non_null(out->v);
	out->n = 0;
	for (size_t l = 0; l <= maxlen; l++) {
		size_t cnt = 1;
		for (size_t i = 0; i < l; i++)
			cnt *= na;
		for (size_t c = 0; c < cnt; c++) {
			size_t x = c;
			for (size_t i = 0; i < l; i++) {
				out->v[out->n][i] = alpha[x % na];
				x /= na;
			}
			out->len[out->n] = l;
			out->n++;
		}
	}
}

static void free_strings(struct strings *s)
{
	free(s->v);
	free(s->len);
}

/* ---- random patterns ---- */

static void gen_pattern(enum glob_kind k, const char *alpha, char *out, size_t size)
{
	size_t n = 0, len = 1 + rnd(5);
	switch (k) {
	case GLOB_HOST:
		if (rnd(2))
			out[n++] = '*', out[n++] = '.';
		for (size_t i = 0; i < len && n + 1 < size; i++)
			out[n++] = "ab."[rnd(3)];
		break;
	case GLOB_PREFIX:
		out[n++] = '/';
		for (size_t i = 0; i + 1 < len && n + 1 < size; i++)
			out[n++] = "ab/"[rnd(3)];
		while (n > 1 && out[n - 1] == '/')
			n--;
		break;
	case GLOB_NAME: {
		/* Every construct of fnmatch(3) but the locale's
		 * equivalence classes: '*', '?', brackets (negated, ranges,
		 * ']' first, a class, unterminated), '\\' quoting. */
		static const char *const tok[] = { "*", "?", "[ab]", "[!a]", "[a-b]", "[]a]", "[^-]", "[[:alpha:]]",
						   "\\*", "\\a", "-", "." };
		for (size_t i = 0; i < len; i++) {
			/* Declared here: a compound literal inside the if
			 * would end its life with the if. */
			char one[2] = { 0, 0 };
			const char *t;
			if (rnd(2)) {
				one[0] = alpha[rnd((unsigned)strlen(alpha))];
				t = one;
			} else {
				t = tok[rnd(sizeof(tok) / sizeof(tok[0]))];
			}
			if (n + strlen(t) + 2 >= size)
				break;
			memcpy(out + n, t, strlen(t));
			n += strlen(t);
		}
		if (rnd(20) == 0)
			out[n++] = '\\'; /* trailing: fnmatch matches nothing */
		break;
	}
	case GLOB_PATH:
	case GLOB_FILE:
		for (size_t i = 0; i < len && n + 3 < size; i++) {
			unsigned r = rnd(10);
			if (r == 0)
				out[n++] = '*';
			else if (r == 1)
				out[n++] = '*', out[n++] = '*';
			else
				out[n++] = alpha[rnd((unsigned)strlen(alpha))];
		}
		break;
	}
	out[n] = '\0';
}

/* ---- one round: compile, match everything, ask the questions ---- */

#define NB 3

/* Atoms reported by glob_atoms: each signature once, with a witness
 * whose membership is that signature. */
struct atoms {
	enum glob_kind k;
	const char *in[2];
	size_t n_in;
	const char *const *out;
	size_t n_out;
	unsigned seen[64]; /* signatures as bit masks */
	size_t n;
};

static int atom_cb(void *ctx, const bool *sig, const char *w, size_t len, struct error *err)
{
	struct atoms *a = ctx;
	unsigned mask = 0;
	(void)err;
	assert_int_equal(strlen(w), len);
	for (size_t i = 0; i < a->n_in; i++)
		if (!ref_match(a->k, a->in[i], w, len))
			fail_msg("atom witness \"%s\" not in \"%s\"", w, a->in[i]);
	for (size_t j = 0; j < a->n_out; j++) {
		if (ref_match(a->k, a->out[j], w, len) != sig[j])
			fail_msg("atom witness \"%s\": \"%s\" said %d", w, a->out[j], sig[j]);
		mask |= sig[j] ? 1u << j : 0;
	}
	for (size_t i = 0; i < a->n; i++)
		assert_int_not_equal(a->seen[i], mask);
	assert_true(a->n < 64);
	a->seen[a->n++] = mask;
	return 0;
}

static void check_round(enum glob_kind k, const char *palpha, const struct strings *S, unsigned rounds)
{
	for (unsigned round = 0; round < rounds; round++) {
		char pa[32], pb[NB][32];
		struct glob *a = NULL, *b[NB] = { NULL };
		struct error err = { 0 };
		size_t nb = 1 + rnd(NB);

		gen_pattern(k, palpha, pa, sizeof(pa));
		assert_int_equal(glob_compile(pa, k, &a, &err), 0);
		for (size_t i = 0; i < nb; i++) {
			gen_pattern(k, palpha, pb[i], sizeof(pb[i]));
			assert_int_equal(glob_compile(pb[i], k, &b[i], &err), 0);
		}
		/* Matching, string by string, and the shortest counterexample. */
		size_t shortest = SIZE_MAX, shortest_both = SIZE_MAX;
		for (size_t j = 0; j < S->n; j++) {
			const char *s = S->v[j];
			size_t l = S->len[j];
			/* Hosts are compared normalised: no trailing dot. */
			if (k == GLOB_HOST && l > 1 && s[l - 1] == '.')
				continue;
			bool ia = ref_match(k, pa, s, l), inb = false;
			if (glob_match(a, s, l) != ia)
				fail_msg("kind %d: pattern \"%s\" on \"%.*s\": automaton %d, matcher %d", k, pa, (int)l,
					 s, !ia, ia);
			for (size_t i = 0; i < nb; i++) {
				bool ib = ref_match(k, pb[i], s, l);
				if (glob_match(b[i], s, l) != ib)
					fail_msg("kind %d: pattern \"%s\" on \"%.*s\": automaton %d, matcher %d", k, pb[i],
						 (int)l, s, !ib, ib);
				inb |= ib;
			}
			if (ia && !inb && l < shortest)
				shortest = l;
			if (ia && ref_match(k, pb[0], s, l) && l < shortest_both)
				shortest_both = l;
		}

		bool subset;
		char *w = NULL;
		assert_int_equal(glob_subset(a, (const struct glob *const *)b, nb, &subset, &w, &err), 0);
		if (subset) {
			if (shortest != SIZE_MAX)
				fail_msg("kind %d: \"%s\" said within %s...; brute force disagrees", k, pa, pb[0]);
			assert_null(w);
		} else {
			assert_non_null(w);
			size_t wl = strlen(w);
			if (k == GLOB_HOST)
				assert_false(wl > 1 && w[wl - 1] == '.');
			if (!ref_match(k, pa, w, wl))
				fail_msg("witness \"%s\" not in \"%s\"", w, pa);
			for (size_t i = 0; i < nb; i++)
				if (ref_match(k, pb[i], w, wl))
					fail_msg("witness \"%s\" of \"%s\" is in \"%s\"", w, pa, pb[i]);
			/* Breadth first: never longer in units than a
			 * counterexample of the enumeration (an encoded unit
			 * spells as 3 bytes, so compare only plain witnesses). */
			if (!strchr(w, '%'))
				assert_true(wl <= shortest || shortest == SIZE_MAX);
		}
		free(w);
		w = NULL;

		bool overlap;
		assert_int_equal(glob_overlap(a, b[0], &overlap, &w, &err), 0);
		if (overlap) {
			assert_non_null(w);
			assert_true(ref_match(k, pa, w, strlen(w)));
			assert_true(ref_match(k, pb[0], w, strlen(w)));
		} else {
			if (shortest_both != SIZE_MAX)
				fail_msg("kind %d: \"%s\" and \"%s\" said disjoint; brute force disagrees", k, pa, pb[0]);
		}
		free(w);

		/* Atoms of b inside a (and inside a and b[0]): every signature
		 * brute force sees is reported, each with a true witness. */
		const char *outs[NB];
		for (size_t i = 0; i < nb; i++)
			outs[i] = pb[i];
		for (size_t two = 0; two < 2; two++) {
			struct atoms at = { .k = k, .in = { pa, pb[0] }, .n_in = 1 + two, .out = outs, .n_out = nb };
			const struct glob *in[2] = { a, b[0] };
			assert_int_equal(glob_atoms(in, 1 + two, (const struct glob *const *)b, nb, atom_cb, &at, &err), 0);
			for (size_t j = 0; j < S->n; j++) {
				const char *s = S->v[j];
				size_t l = S->len[j];
				unsigned mask = 0;
				if (k == GLOB_HOST && l > 1 && s[l - 1] == '.')
					continue;
				if (!ref_match(k, pa, s, l) || (two && !ref_match(k, pb[0], s, l)))
					continue;
				for (size_t i = 0; i < nb; i++)
					mask |= ref_match(k, pb[i], s, l) ? 1u << i : 0;
				bool reported = false;
				for (size_t i = 0; i < at.n && !reported; i++)
					reported = at.seen[i] == mask;
				if (!reported)
					fail_msg("atoms of \"%s\": \"%.*s\" has signature %u, not reported", pa, (int)l, s, mask);
			}
		}
		glob_free(a);
		for (size_t i = 0; i < nb; i++)
			glob_free(b[i]);
	}
}

static void test_path_brute_force(void **state)
{
	(void)state;
	struct strings S;
	gen_strings("ab/.", 6, &S);
	check_round(GLOB_PATH, "ab/.", &S, 300);
	free_strings(&S);
}

/* Percent-encoding: "%2f" is one unit that '*' crosses and '/' does not
 * match; "%61" is 'a'. */
static void test_path_percent_brute_force(void **state)
{
	(void)state;
	struct strings S;
	gen_strings("a/%2f6", 5, &S);
	check_round(GLOB_PATH, "a/%2f61", &S, 300);
	free_strings(&S);
}

static void test_host_brute_force(void **state)
{
	(void)state;
	struct strings S;
	gen_strings("abA.", 6, &S);
	check_round(GLOB_HOST, "ab.", &S, 300);
	free_strings(&S);
}

static void test_file_brute_force(void **state)
{
	(void)state;
	struct strings S;
	gen_strings("ab/.", 6, &S);
	check_round(GLOB_FILE, "ab/", &S, 300);
	free_strings(&S);
}

static void test_name_brute_force(void **state)
{
	(void)state;
	struct strings S;
	gen_strings("ab[-*", 5, &S);
	check_round(GLOB_NAME, "ab", &S, 400);
	free_strings(&S);
}

static void test_prefix_brute_force(void **state)
{
	(void)state;
	struct strings S;
	gen_strings("ab/", 7, &S);
	check_round(GLOB_PREFIX, "ab/", &S, 300);
	free_strings(&S);
}

/* ---- hand-written cases ---- */

static struct glob *C(const char *p, enum glob_kind k)
{
	struct glob *g = NULL;
	struct error err = { 0 };
	assert_int_equal(glob_compile(p, k, &g, &err), 0);
	return g;
}

static void expect_subset(const char *a, enum glob_kind k, const char *const *b, size_t n, const char *witness)
{
	struct glob *ga = C(a, k), *gb[8];
	struct error err = { 0 };
	bool subset;
	char *w = NULL;
	for (size_t i = 0; i < n; i++)
		gb[i] = C(b[i], k);
	assert_int_equal(glob_subset(ga, (const struct glob *const *)gb, n, &subset, &w, &err), 0);
	if (witness) {
		if (subset)
			fail_msg("\"%s\" said within %s", a, b[0]);
		assert_string_equal(w, witness);
	} else {
		if (!subset)
			fail_msg("\"%s\" not within %s: %s", a, b[0], w);
		assert_null(w);
	}
	free(w);
	glob_free(ga);
	for (size_t i = 0; i < n; i++)
		glob_free(gb[i]);
}

static void test_hand_written(void **state)
{
	(void)state;
	/* fnmatch names: '*' crosses '/' and '.'; a tool glob covers its server prefix. */
	const char *fs_star[] = { "fs.*" };
	expect_subset("fs.write_file", GLOB_NAME, fs_star, 1, NULL);
	const char *fs_read[] = { "fs.read_*" };
	expect_subset("fs.*", GLOB_NAME, fs_read, 1, "fs.");
	struct glob *g = NULL;
	struct error err = { 0 };
	assert_int_equal(glob_compile("[a", GLOB_NAME, &g, &err), -EINVAL);
	assert_null(g);
	g = C("a\\", GLOB_NAME); /* trailing backslash: fnmatch matches nothing */
	assert_false(glob_match(g, "a", 1));
	assert_false(glob_match(g, "a\\", 2));
	glob_free(g);
	const char *star_example[] = { "*.example.com" };
	expect_subset("api.example.com", GLOB_HOST, star_example, 1, NULL);
	const char *api[] = { "api.example.com" };
	expect_subset("*.example.com", GLOB_HOST, api, 1, "y.example.com");
	/* example.com itself is not under "*.example.com". */
	expect_subset("example.com", GLOB_HOST, star_example, 1, "example.com");
	const char *repos_dstar[] = { "/repos/**" };
	expect_subset("/repos/acme/*", GLOB_PATH, repos_dstar, 1, NULL);
	const char *repos_acme[] = { "/repos/acme/*" };
	expect_subset("/repos/**", GLOB_PATH, repos_acme, 1, "/repos/");
	/* A union covers what neither part does alone. */
	const char *ab[] = { "/a/*", "/b/*" };
	expect_subset("/a/x", GLOB_PATH, ab, 2, NULL);
	const char *axy[] = { "/a/x*", "/a/*y" };
	expect_subset("/a/*", GLOB_PATH, axy, 2, "/a/");
	const char *split[] = { "/a/*", "/a/*/**" };
	expect_subset("/a/**", GLOB_PATH, split, 2, NULL);
	expect_subset("/a**", GLOB_PATH, split, 2, "/a");
	const char *split2[] = { "/a", "/a/*", "/a/*/**" };
	expect_subset("/a/**", GLOB_PATH, split2, 3, NULL);
	/* %2F is not a '/': '*' crosses it. */
	const char *enc[] = { "/a/*" };
	expect_subset("/a/x%2Fy", GLOB_PATH, enc, 1, NULL);
	/* Filesystem prefixes: a path grants everything beneath. */
	const char *ws[] = { "/home/u/ws" };
	expect_subset("/home/u/ws/.git/hooks", GLOB_PREFIX, ws, 1, NULL);
	const char *hooks[] = { "/home/u/ws/.git/hooks" };
	expect_subset("/home/u/ws", GLOB_PREFIX, hooks, 1, "/home/u/ws");
	const char *root[] = { "/" };
	expect_subset("/etc", GLOB_PREFIX, root, 1, NULL);
	/* "/home/u/wsx" is not beneath "/home/u/ws". */
	const char *ws2[] = { "/home/u/ws" };
	expect_subset("/home/u/wsx", GLOB_PREFIX, ws2, 1, "/home/u/wsx");
}

/* The proxy's matcher and GLOB_PATH read a request glob through one
 * tokenizer: both give these answers, where a misread wildcard would show. */
static void test_path_tokens_shared(void **state)
{
	(void)state;
	static const struct {
		const char *pat, *s;
		bool match;
	} cases[] = {
		{ "/a/**/b", "/a/b", true },       /* "**" between slashes may be nothing */
		{ "/a/**/b", "/a/x/y/b", true },
		{ "/a/**/b", "/a/xb", false },     /* ...or a run ending in '/' */
		{ "/a**/b", "/a/b", true },        /* not after '/': any run */
		{ "/a**/b", "/ab", false },
		{ "**/b", "b", false },            /* at the start: no slash before it */
		{ "**/b", "x/b", true },
		{ "/*", "/a/b", false },           /* '*' stays in its segment */
		{ "/***", "/a/b", true },          /* three stars are '**' */
		{ "/%41", "/A", true },            /* an unreserved %XX is its character */
		{ "/a%2Fb", "/a/b", false },       /* %2F stays one opaque unit */
		{ "/a%2fb", "/a%2Fb", true },
		{ "/x/**/", "/x/", true },
		{ "/x/**/", "/x/y", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct glob *g = C(cases[i].pat, GLOB_PATH);
		bool net = netpol_glob_match(cases[i].pat, cases[i].s, strlen(cases[i].s));
		bool aut = glob_match(g, cases[i].s, strlen(cases[i].s));
		glob_free(g);
		if (net != cases[i].match || aut != cases[i].match)
			fail_msg("%s ~ %s: netpol %d, glob %d, want %d", cases[i].pat, cases[i].s, net, aut,
				 cases[i].match);
	}
}

static void test_dot_segments(void **state)
{
	(void)state;
	struct glob *d = NULL;
	struct error err = { 0 };
	assert_int_equal(glob_dot_segments(&d, &err), 0);
	const char *yes[] = { ".", "..", "/a/.", "/a/../b", "/.;x/b", "/a%2F..", "/%2E%2E/x", "..;", "a\\..\\b" };
	const char *no[] = { "", "/", "/a/...", "/a/.b", "/a;../", "/a/b.", "/;../x", "/.x/" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		if (!glob_match(d, yes[i], strlen(yes[i])))
			fail_msg("\"%s\" has a dot segment", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if (glob_match(d, no[i], strlen(no[i])))
			fail_msg("\"%s\" has no dot segment", no[i]);
	/* Against the proxy's own refusal, over every short string: an
	 * endpoint whose one rule allows any path refuses exactly these. */
	struct policy_net_rule rule = { .id = "r" };
	struct policy_endpoint ep = { .id = "e", .rules = &rule, .n_rules = 1 };
	struct strings S;
	gen_strings("a./;\\%2eFB3", 4, &S);
	for (size_t j = 0; j < S.n; j++) {
		struct net_decision dd;
		bool refused = !netpol_decide_request(&ep, "GET", S.v[j], S.len[j], "", 0, false, &dd);
		if (glob_match(d, S.v[j], S.len[j]) != refused)
			fail_msg("\"%.*s\": dot-segment automaton %d, proxy refuses %d", (int)S.len[j], S.v[j], !refused,
				 refused);
	}
	free_strings(&S);
	/* "/a/" + "**" minus the dot paths is exactly within "/a", "/a/" +
	 * "*" and "/a/" + "*" + "/" + "**". */
	struct glob *a = C("/a/**", GLOB_PATH);
	struct glob *b[4] = { C("/a", GLOB_PATH), C("/a/*", GLOB_PATH), C("/a/*/**", GLOB_PATH), d };
	bool subset;
	char *w = NULL;
	assert_int_equal(glob_subset(a, (const struct glob *const *)b, 4, &subset, &w, &err), 0);
	assert_true(subset);
	glob_free(a);
	for (size_t i = 0; i < 4; i++)
		glob_free(b[i]);
}

/* A set of patterns whose automaton blows up is an error, not a hang. */
static void test_bounded(void **state)
{
	(void)state;
	char pat[64];
	struct glob *a = NULL, *b[12];
	struct error err = { 0 };
	bool subset;
	char *w = NULL;
	/* "**" + "a" + n more units: the classic exponential subset construction. */
	assert_int_equal(glob_compile("**", GLOB_PATH, &a, &err), 0);
	for (int i = 0; i < 12; i++) {
		snprintf(pat, sizeof(pat), "**a%.*s", 6 + i, "*****************************");
		for (char *p = pat + 3; *p; p++)
			*p = (char)('b' + (p - pat) % 2);
		strcat(pat, "**a**b*a*b*a**b**a");
		assert_int_equal(glob_compile(pat, GLOB_PATH, &b[i], &err), 0);
	}
	int r = glob_subset(a, (const struct glob *const *)b, 12, &subset, &w, &err);
	/* Either an answer or the bound; both are fine, a hang is not. */
	if (r < 0)
		assert_non_null(strstr(err.msg, "too complex"));
	free(w);
	glob_free(a);
	for (int i = 0; i < 12; i++)
		glob_free(b[i]);
	/* Too long a pattern is refused. */
	char *big = malloc(GLOB_PATTERN_MAX + 2);
	memset(big, 'a', GLOB_PATTERN_MAX + 1);
	big[GLOB_PATTERN_MAX + 1] = '\0';
	assert_int_equal(glob_compile(big, GLOB_PATH, &a, &err), -E2BIG);
	free(big);
	assert_int_equal(glob_compile("relative", GLOB_PREFIX, &a, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_brute_force),
		cmocka_unit_test(test_path_percent_brute_force),
		cmocka_unit_test(test_host_brute_force),
		cmocka_unit_test(test_file_brute_force),
		cmocka_unit_test(test_prefix_brute_force),
		cmocka_unit_test(test_name_brute_force),
		cmocka_unit_test(test_hand_written),
		cmocka_unit_test(test_path_tokens_shared),
		cmocka_unit_test(test_dot_segments),
		cmocka_unit_test(test_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
