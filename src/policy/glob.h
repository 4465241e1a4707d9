/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_GLOB_H
#define AIRLOCK_POLICY_GLOB_H

/*
 * The policy's patterns as automata, so that questions about whole
 * languages ("does every path this rule allows fall under one of those
 * rules?") are decided exactly rather than by comparing pattern text.
 *
 * Each pattern compiles to a small NFA over "units": bytes for hosts and
 * filesystem paths; for request paths and queries, the units of
 * netpolicy.c (a %XX of an unreserved character is that character, any
 * other %XX one opaque unit). Questions are answered by a subset
 * construction over the NFAs involved, explored breadth first, so that a
 * witness is always one of the shortest strings with the property. The
 * number of subset states is bounded (GLOB_MAX_STATES): a set of patterns
 * whose product blows up is an error, never a hang.
 *
 * Host questions are answered over normalised names (no trailing dot, as
 * the proxy compares them): a host witness never ends in '.'.
 *
 * Every matcher here agrees with the one enforcing the pattern:
 * GLOB_PATH with netpol_glob_match, GLOB_HOST with netpol_host_match,
 * GLOB_FILE with handoff_glob_match, GLOB_NAME with match_name_run as
 * the MCP engine runs it for tool and prompt names (resource URIs are
 * GLOB_PATH, matched by the engine once normalised) (tests/unit/test_glob.c and
 * tests/fuzz/fuzz_glob.c check it; glibc's fnmatch(p, s, 0) is their
 * oracle for GLOB_NAME, as tests/unit/test_match.c's for the matcher).
 */

#include <stdbool.h>
#include <stddef.h>

#include "match/glob.h"
#include "util/error.h"
#include "util/urlunit.h"

enum glob_kind {
	GLOB_PATH,   /* netpol path/query glob: '*' within a segment, '**' across */
	GLOB_HOST,   /* "*.example.com" or exact, lower-case */
	GLOB_PREFIX, /* filesystem path: itself and everything beneath */
	GLOB_FILE,   /* hand-off/protect glob (handoff_glob_match): bytes, '*', '**', '**' + '/' */
	GLOB_NAME,   /* fnmatch(3)'s patterns, flags 0, C locale (match_name_run): MCP tool and prompt names */
};

/* Each pattern is read into tokens by match/glob.h, which enforcement
 * runs too: the prover and the proxy cannot disagree on what a pattern
 * says. */

/* Patterns longer than this are refused (netpol_glob_match matches
 * nothing with them). */
#define GLOB_PATTERN_MAX 4096
/* Subset states one question may explore. */
#define GLOB_MAX_STATES 200000u

struct glob; /* opaque, compiled */

/* Compile pattern (borrowed) into *out, owned by the caller (glob_free).
 * Errors: -EINVAL for a pattern that is not of the kind (a GLOB_PREFIX
 * that is not absolute; a GLOB_NAME with a "[=" or "[." bracket term,
 * whose meaning depends on the locale's collation), -E2BIG for one longer than GLOB_PATTERN_MAX. */
int glob_compile(const char *pattern, enum glob_kind kind, struct glob **out, struct error *err) WUR;

/* The language of paths that netpol_decide_request never matches by a
 * rule: those holding a "." or ".." segment (GLOB_PATH units). */
int glob_dot_segments(struct glob **out, struct error *err) WUR;

void glob_free(struct glob *g);
static inline void glob_freep(struct glob **g)
{
	glob_free(*g);
}
#define _cleanup_glob_ __attribute__((cleanup(glob_freep)))

enum glob_kind glob_kind(const struct glob *g);
/* The pattern text, borrowed from g. */
const char *glob_pattern(const struct glob *g);

/* Does s[0..len) belong to the language? The same answer as the
 * enforcing matcher gives for the raw string (a host's trailing dot is
 * dropped, a path's %XX decoded). */
bool glob_match(const struct glob *g, const char *s, size_t len);

/* Is L(a) a subset of L(b[0]) ∪ ... ∪ L(b[n-1])? On success *subset is set; when false and
 * witness != NULL, *witness is a new string (caller frees) in L(a) and in none of b. */
int glob_subset(const struct glob *a, const struct glob *const *b, size_t n, bool *subset, char **witness,
		struct error *err) WUR;

/* Is L(a) ∩ L(b) non-empty? When true and witness != NULL, *witness is a string in both. */
int glob_overlap(const struct glob *a, const struct glob *b, bool *overlap, char **witness,
		 struct error *err) WUR;

/* The general question: is there a string in every L(in[i]) and in no
 * L(out[j])? n_in == 0 means every string. When *found and witness !=
 * NULL, *witness is a new shortest such string (caller frees), encoded
 * so that glob_match reads it back as the same units. All globs must use
 * the same units (GLOB_PATH with GLOB_PATH only), else -EINVAL. */
int glob_find(const struct glob *const *in, size_t n_in, const struct glob *const *out, size_t n_out,
	      bool *found, char **witness, struct error *err) WUR;

/*
 * The atoms of out[] inside the intersection of in[]: for every distinct
 * set S of indexes such that some string in every L(in[i]) belongs to
 * L(out[j]) exactly for j in S, calls cb once with sig[j] = (j in S) and a
 * shortest such string (borrowed for the call, NUL-terminated, len bytes).
 * cb returns 0 to go on, > 0 to stop (glob_atoms then returns 0), < 0 to
 * fail (returned as is; cb fills err). This is how a union of
 * multi-dimensional rules is split into pieces each decided on its own.
 */
typedef int (*glob_atom_cb)(void *ctx, const bool *sig, const char *witness, size_t len, struct error *err);
int glob_atoms(const struct glob *const *in, size_t n_in, const struct glob *const *out, size_t n_out,
	       glob_atom_cb cb, void *ctx, struct error *err) WUR;

#endif
