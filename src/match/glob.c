/* SPDX-License-Identifier: Apache-2.0 */
/* Globs as tokens, and the one matcher that runs them (glob.h). */
#include <string.h>

#include "match/glob.h"

/* State flags: FRESH when a token was just reached (from the token before
 * it, or at the start), LOOP when a wildcard consumed a unit and stays.
 * A '**' + '/' may be skipped only when fresh: once it has consumed a
 * unit it must end with a '/' (a, '/', '**' + '/', b does not match a/xb). */
#define FRESH 1u
#define LOOP 2u

size_t match_file_tokens(const char *pattern, uint16_t *tok)
{
	size_t nt = 0;
	for (size_t i = 0; pattern[i];) {
		if (pattern[i] != '*') {
			tok[nt++] = (unsigned char)pattern[i++];
			continue;
		}
		if (pattern[i + 1] != '*') {
			tok[nt++] = MATCH_T_STAR;
			i++;
			continue;
		}
		size_t first = i;
		while (pattern[i] == '*')
			i++;
		bool at_boundary = first == 0 || pattern[first - 1] == '/';
		if (at_boundary && pattern[i] == '/') {
			tok[nt++] = MATCH_T_DSTAR_SLASH;
			i++;
		} else {
			tok[nt++] = MATCH_T_DSTAR;
		}
	}
	return nt;
}

/* Follow the edges that consume nothing. They only go forward, so one
 * pass in order closes the set. */
static void closure(const uint16_t *tok, size_t nt, uint8_t *set)
{
	for (size_t k = 0; k < nt; k++) {
		if (!set[k])
			continue;
		/* '*' and '**' may match nothing, whenever they are left. */
		if (tok[k] == MATCH_T_STAR || tok[k] == MATCH_T_DSTAR)
			set[k + 1] |= FRESH;
		/* A '**' between two '/' matches the empty string only as a
		 * whole: not after it consumed something without a '/'. */
		if (tok[k] == MATCH_T_DSTAR_SLASH && (set[k] & FRESH))
			set[k + 1] |= FRESH;
	}
}

void match_begin(const uint16_t *tok, size_t nt, uint8_t *set)
{
	memset(set, 0, nt + 1);
	set[0] = FRESH;
	closure(tok, nt, set);
}

bool match_step(const uint16_t *tok, size_t nt, const uint8_t *cur, uint8_t *next, unsigned unit)
{
	bool any = false;
	memset(next, 0, nt + 1);
	for (size_t k = 0; k < nt; k++) {
		if (!cur[k])
			continue;
		switch (tok[k]) {
		case MATCH_T_STAR:
			if (unit != '/') {
				next[k] |= LOOP;
				any = true;
			}
			break;
		case MATCH_T_DSTAR:
			next[k] |= LOOP;
			any = true;
			break;
		case MATCH_T_DSTAR_SLASH:
			next[k] |= LOOP;
			any = true;
			if (unit == '/')
				next[k + 1] |= FRESH;
			break;
		default:
			if (tok[k] == unit) {
				next[k + 1] |= FRESH;
				any = true;
			}
			break;
		}
	}
	if (any)
		closure(tok, nt, next);
	return any;
}

bool match_path_glob(const char *glob, const char *s, size_t len)
{
	uint16_t tok[MATCH_PATH_GLOB_MAX];
	uint8_t set_a[MATCH_PATH_GLOB_MAX + 1], set_b[MATCH_PATH_GLOB_MAX + 1];
	uint8_t *cur = set_a, *next = set_b;
	size_t glen, nt = 0;

	if (!glob || (!s && len > 0))
		return false;
	glen = strlen(glob);
	if (glen > MATCH_PATH_GLOB_MAX)
		return false;
	for (size_t i = 0; i < glen; nt++)
		tok[nt] = (uint16_t)match_path_token(glob, glen, &i, nt ? tok[nt - 1] : 0);
	match_begin(tok, nt, cur);
	for (size_t i = 0; i < len;) {
		if (!match_step(tok, nt, cur, next, url_next_unit(s, len, &i)))
			return false;
		uint8_t *t = cur;
		cur = next;
		next = t;
	}
	return match_accepts(cur, nt);
}
