/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the pattern automata (src/policy/glob.c), checked
 * differentially against the matchers that enforce the patterns.
 *
 * Input: one byte choosing the kind, then pattern A, pattern B and a
 * string S separated by NUL bytes. Besides crashes and sanitizer reports
 * it aborts when
 *  - glob_match(A, S) differs from the enforcing matcher
 *    (netpol_glob_match, netpol_host_match, handoff_glob_match, or the
 *    prefix rule of a filesystem path);
 *  - glob_subset(A, {B}) answers "no" with a witness that is not in A or
 *    is in B, or glob_overlap(A, B) answers "yes" with a witness outside
 *    either (by the enforcing matchers);
 *  - A is not within A ∪ B, or not within "**" (paths).
 * A pattern set too complex to compare exactly may fail with -E2BIG;
 * nothing else may fail.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handoff/handoff.h"
#include "net/netpolicy.h"
#include "match/glob.h"
#include "policy/glob.h"

static bool prefix_ref(const char *p, const char *s, size_t len)
{
	size_t n = strlen(p);
	if (n == 1)
		return len >= 1 && s[0] == '/';
	return len >= n && !memcmp(p, s, n) && (len == n || s[n] == '/');
}

/* s is NUL-terminated at len (the harness makes it so). */
static bool ref(enum glob_kind k, const char *pat, const char *s, size_t len)
{
	switch (k) {
	case GLOB_PATH:
		return netpol_glob_match(pat, s, len);
	case GLOB_HOST:
		return strlen(s) == len && netpol_host_match(pat, s);
	case GLOB_PREFIX:
		return prefix_ref(pat, s, len);
	case GLOB_FILE:
		return strlen(s) == len && handoff_glob_match(pat, s);
	case GLOB_NAME:
		/* As src/mcp/engine.c calls it (the C locale: airlock never
		 * calls setlocale). */
		return strlen(s) == len && fnmatch(pat, s, 0) == 0;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum glob_kind kinds[] = { GLOB_PATH, GLOB_HOST, GLOB_PREFIX, GLOB_FILE, GLOB_NAME };
	struct glob *a = NULL, *b = NULL, *all = NULL;
	struct error err = { 0 };
	char *buf, *pa, *pb, *s, *w = NULL;
	size_t slen;
	bool yes;
	int r;

	/* Short patterns: the subset construction is exponential in the
	 * worst case, bounded by GLOB_MAX_STATES; keep each run quick. */
	if (size < 1 || size > 256)
		return 0;
	enum glob_kind k = kinds[data[0] % 5];
	buf = calloc(size + 3, 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	pa = buf;
	pb = pa + strlen(pa) + 1;
	s = pb + strlen(pb) + 1;
	if (s > buf + size)
		s = buf + size;
	slen = strlen(s);
	/* handoff_glob_match takes NUL-terminated paths; hosts likewise. */
	if (glob_compile(pa, k, &a, &err) < 0 || glob_compile(pb, k, &b, &err) < 0)
		goto out; /* a relative GLOB_PREFIX, a GLOB_NAME with an unterminated bracket */
	if (glob_match(a, s, slen) != ref(k, pa, s, slen))
		abort();
	if (glob_match(b, s, slen) != ref(k, pb, s, slen))
		abort();
	/* The engine's own runner, on the same tokens, against glibc. */
	if (k == GLOB_NAME && strlen(s) == slen && (match_name_glob(pa, s) == 1) != ref(k, pa, s, slen))
		abort();

	const struct glob *bs[2] = { b, a };
	r = glob_subset(a, bs, 1, &yes, &w, &err);
	if (r < 0 && r != -E2BIG)
		abort();
	if (r == 0 && !yes) {
		size_t wl = strlen(w);
		if (!ref(k, pa, w, wl) || ref(k, pb, w, wl))
			abort();
	}
	free(w);
	w = NULL;
	r = glob_overlap(a, b, &yes, &w, &err);
	if (r < 0 && r != -E2BIG)
		abort();
	if (r == 0 && yes) {
		size_t wl = strlen(w);
		if (!ref(k, pa, w, wl) || !ref(k, pb, w, wl))
			abort();
	}
	free(w);
	w = NULL;
	r = glob_subset(a, bs, 2, &yes, &w, &err);
	if (r < 0 && r != -E2BIG)
		abort();
	if (r == 0 && !yes)
		abort();
	if (k == GLOB_PATH && glob_compile("**", GLOB_PATH, &all, &err) == 0) {
		const struct glob *u[1] = { all };
		r = glob_subset(a, u, 1, &yes, &w, &err);
		if (r == 0 && !yes)
			abort();
	}
out:
	free(w);
	glob_free(a);
	glob_free(b);
	glob_free(all);
	free(buf);
	return 0;
}
