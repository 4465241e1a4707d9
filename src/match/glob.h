/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_MATCH_GLOB_H
#define AIRLOCK_MATCH_GLOB_H

/*
 * Globs as tokens, and the one matcher that runs them. Every glob the
 * policy holds is read here into tokens (a unit, or a wildcard) and run
 * by the same set-of-states simulation (no backtracking, so no pattern
 * can make a match slow), whatever its units:
 *  - request paths and queries (net/netpolicy.c): the units of
 *    util/urlunit.h, a %XX of an unreserved character being that
 *    character;
 *  - hand-off and protected-file globs (handoff/rules.c): bytes;
 *  - MCP tool and prompt names and argument globs (mcp/engine.c):
 *    fnmatch(3)'s patterns with flags 0 in the C locale, over bytes.
 * The prover (policy/glob.c) compiles the same tokens into its automata,
 * so that what it proves of a pattern is what enforcement runs: a second
 * reading of a pattern, or a second runner, is how the two drift apart.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/urlunit.h"

/* The wildcards, above every unit (a byte, or URL_UNIT_ENC | byte). */
#define MATCH_T_STAR 0x200u        /* '*': any run of units but '/' */
#define MATCH_T_DSTAR 0x201u       /* '**': any run of units */
#define MATCH_T_DSTAR_SLASH 0x202u /* '**' then '/' after a '/': nothing, or a run ending in '/' */
#define MATCH_T_ONE 0x203u         /* a name's '?': any one unit */
#define MATCH_T_SET 0x400u         /* + n: a name's bracket, the n-th of its sets */

/* A bracket's bytes, a bit each (byte 0 never: names are C strings). */
struct match_set {
	uint8_t bit[32];
};

static inline bool match_set_has(const struct match_set *set, unsigned unit)
{
	return unit < 256 && ((set->bit[unit >> 3] >> (unit & 7)) & 1);
}

/* The request glob's token at glob[*i] (glen bytes in all), advancing *i
 * past it; prev is the token before it (0 at the start). */
static inline unsigned match_path_token(const char *glob, size_t glen, size_t *i, unsigned prev)
{
	size_t run = 0;

	if (glob[*i] != '*')
		return url_next_unit(glob, glen, i);
	while (*i < glen && glob[*i] == '*') {
		run++;
		(*i)++;
	}
	if (run == 1)
		return MATCH_T_STAR;
	if (prev == '/' && *i < glen && glob[*i] == '/') {
		(*i)++;
		return MATCH_T_DSTAR_SLASH;
	}
	return MATCH_T_DSTAR;
}

/* The tokens of a hand-off (file) glob into tok, which has room for
 * strlen(pattern) of them: bytes, '*', '**', and '**' + '/' at the start
 * or after a '/'. Their number. */
size_t match_file_tokens(const char *pattern, uint16_t *tok);

/*
 * A name glob, as fnmatch(p, s, 0) reads it in the C locale (airlock
 * never calls setlocale): '*' any bytes ('/' and a leading '.'
 * included), '?' one byte, a bracket one of its bytes ('!' or '^'
 * negating, ']' first taken as itself, ranges by byte value, the twelve
 * classes as the C locale has them, '\\' quoting), '\\' quoting the next
 * byte. A trailing '\\', on which glibc fails every name, matches nothing
 * (never).
 */
struct match_name {
	uint16_t *tok;
	size_t nt;
	struct match_set *sets; /* a MATCH_T_SET + n token's set is sets[n] */
	bool never;
};

/* Read pattern into *out (match_name_free). -EINVAL for what fnmatch's
 * reading depends on the locale or on how far a match gets: an
 * equivalence class ("[=") or collating symbol ("[."), a class other
 * than the twelve, an unterminated bracket (glibc reads some as a literal
 * '[' and fails on others only when a match reaches them); -E2BIG over
 * MATCH_NAME_GLOB_MAX bytes; -ENOMEM. The policy refuses these patterns
 * when it loads, so enforcement never meets one. */
#define MATCH_NAME_GLOB_MAX MATCH_BYTES_MAX
int match_name_compile(const char *pattern, struct match_name *out);
void match_name_free(struct match_name *g);
/* Does the name s match? */
bool match_name_run(const struct match_name *g, const char *s);
/* Compile and run at once: 1 for a match, 0 for none, or
 * match_name_compile's negative errno. */
int match_name_glob(const char *pattern, const char *s);

/*
 * The matcher. A state set holds nt + 1 bytes: set[k] != 0 when the
 * first k tokens can match the units read so far (set[nt]: the whole
 * glob). match_begin fills the set before any unit; match_step reads one
 * unit from cur into next and says whether any state is left (none: no
 * continuation can match).
 */
void match_begin(const uint16_t *tok, size_t nt, uint8_t *set);
/* sets: a name glob's, or NULL for globs without brackets. */
bool match_step(const uint16_t *tok, size_t nt, const struct match_set *sets, const uint8_t *cur, uint8_t *next,
		unsigned unit);
static inline bool match_accepts(const uint8_t *set, size_t nt)
{
	return set[nt] != 0;
}

/* The tokens run over the bytes of the C string s (hand-off and name
 * globs; sets: a name glob's, or NULL), nt at most MATCH_BYTES_MAX.
 * *alive (may be NULL): the state set is not empty after s, so some
 * continuation of s could still match. */
#define MATCH_BYTES_MAX 4096
bool match_bytes(const uint16_t *tok, size_t nt, const struct match_set *sets, const char *s, bool *alive);

/* A request glob against s[0..len) (URL units, a %XX of an unreserved
 * character read as that character). A glob longer than
 * MATCH_PATH_GLOB_MAX bytes matches nothing (a policy scalar is at most
 * 4096 bytes). */
#define MATCH_PATH_GLOB_MAX 4096
bool match_path_glob(const char *glob, const char *s, size_t len);

#endif
