/* SPDX-License-Identifier: Apache-2.0 */
/* Globs as tokens, and the one matcher that runs them (glob.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
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

bool match_step(const uint16_t *tok, size_t nt, const struct match_set *sets, const uint8_t *cur, uint8_t *next,
		unsigned unit)
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
		case MATCH_T_ONE:
			next[k + 1] |= FRESH;
			any = true;
			break;
		default:
			if (tok[k] >= MATCH_T_SET ? match_set_has(&sets[tok[k] - MATCH_T_SET], unit) : tok[k] == unit) {
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

bool match_bytes(const uint16_t *tok, size_t nt, const struct match_set *sets, const char *s, bool *alive)
{
	/* On the stack: no allocation that could fail a deny rule open. */
	uint8_t set_a[MATCH_BYTES_MAX + 1], set_b[MATCH_BYTES_MAX + 1];
	uint8_t *cur = set_a, *next = set_b;

	if (alive)
		*alive = false;
	if (nt > MATCH_BYTES_MAX)
		return false;
	match_begin(tok, nt, cur);
	for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
		if (!match_step(tok, nt, sets, cur, next, *u))
			return false;
		uint8_t *t = cur;
		cur = next;
		next = t;
	}
	if (alive)
		*alive = true;
	return match_accepts(cur, nt);
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
		if (!match_step(tok, nt, NULL, cur, next, url_next_unit(s, len, &i)))
			return false;
		uint8_t *t = cur;
		cur = next;
		next = t;
	}
	return match_accepts(cur, nt);
}

/* ---- name globs: fnmatch(3)'s patterns ---- */

static void set_add(struct match_set *set, unsigned b)
{
	set->bit[b >> 3] |= (uint8_t)(1u << (b & 7));
}

/* "[:name:]" at p: its class's bytes added to set, *k past it. -EINVAL
 * for a class the C locale does not have, or no ":]". */
static int bracket_class(const char *p, size_t *k, struct match_set *set)
{
	static const struct {
		const char *name;
		int (*fn)(int);
	} classes[] = {
		{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank }, { "cntrl", iscntrl },
		{ "digit", isdigit }, { "graph", isgraph }, { "lower", islower }, { "print", isprint },
		{ "punct", ispunct }, { "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
	};
	const char *name = p + *k + 2, *end = strstr(name, ":]");
	if (!end)
		return -EINVAL;
	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
		if (strlen(classes[c].name) != (size_t)(end - name) || strncmp(classes[c].name, name, (size_t)(end - name)))
			continue;
		/* The C locale's classes hold ASCII alone. */
		for (unsigned b = 1; b < 128; b++)
			if (classes[c].fn((int)b))
				set_add(set, b);
		*k = (size_t)(end - p) + 2;
		return 0;
	}
	return -EINVAL;
}

/* One bracket's byte at p[*k] ('\\' quoting the next), *k past it. */
static int bracket_byte(const char *p, size_t *k)
{
	if (p[*k] == '\\')
		(*k)++;
	if (p[*k] == '\0')
		return -EINVAL;
	return (unsigned char)p[(*k)++];
}

/* One bracket starting after '[' at p[*i] into set, *i past its ']'. */
static int name_bracket(const char *p, size_t *i, struct match_set *set)
{
	size_t k = *i;
	bool neg = false, first = true;

	memset(set, 0, sizeof(*set));
	if (p[k] == '!' || p[k] == '^') {
		neg = true;
		k++;
	}
	for (;;) {
		if (p[k] == '\0')
			return -EINVAL;
		if (p[k] == ']' && !first)
			break;
		first = false;
		/* Collation: what it names depends on the locale. */
		if (p[k] == '[' && (p[k + 1] == '=' || p[k + 1] == '.'))
			return -EINVAL;
		if (p[k] == '[' && p[k + 1] == ':') {
			int r = bracket_class(p, &k, set);
			if (r < 0)
				return r;
			continue;
		}
		int lo = bracket_byte(p, &k);
		if (lo < 0)
			return lo;
		if (p[k] != '-' || p[k + 1] == ']' || p[k + 1] == '\0') {
			set_add(set, (unsigned)lo);
			continue;
		}
		k++;
		if (p[k] == '[' && (p[k + 1] == '=' || p[k + 1] == '.' || p[k + 1] == ':'))
			return -EINVAL;
		int hi = bracket_byte(p, &k);
		if (hi < 0)
			return hi;
		for (int b = lo; b <= hi; b++)
			set_add(set, (unsigned)b);
	}
	*i = k + 1;
	if (neg)
		for (size_t b = 0; b < sizeof(set->bit); b++)
			set->bit[b] = (uint8_t)~set->bit[b];
	set->bit[0] &= (uint8_t)~1u;
	return 0;
}

void match_name_free(struct match_name *g)
{
	free(g->tok);
	free(g->sets);
	memset(g, 0, sizeof(*g));
}

int match_name_compile(const char *p, struct match_name *out)
{
	size_t len = strlen(p), nsets = 0;
	memset(out, 0, sizeof(*out));
	if (len > MATCH_NAME_GLOB_MAX)
		return -E2BIG;
	/* At most a token a byte, and a set for each '[' at most. */
	out->tok = calloc(len + 1, sizeof(*out->tok));
	out->sets = calloc(len / 2 + 1, sizeof(*out->sets));
	if (!out->tok || !out->sets) {
		match_name_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; p[i];) {
		unsigned char c = (unsigned char)p[i];
		uint16_t t;
		if (c == '*') {
			t = MATCH_T_DSTAR; /* no FNM_PATHNAME: '/' too */
			i++;
		} else if (c == '?') {
			t = MATCH_T_ONE;
			i++;
		} else if (c == '[') {
			i++;
			int r = name_bracket(p, &i, &out->sets[nsets]);
			if (r < 0) {
				match_name_free(out);
				return r;
			}
			t = (uint16_t)(MATCH_T_SET + nsets++);
		} else if (c == '\\') {
			if (!p[i + 1]) {
				out->never = true;
				break;
			}
			t = (unsigned char)p[i + 1];
			i += 2;
		} else {
			t = c;
			i++;
		}
		out->tok[out->nt++] = t;
	}
	return 0;
}

bool match_name_run(const struct match_name *g, const char *s)
{
	return !g->never && match_bytes(g->tok, g->nt, g->sets, s, NULL);
}

int match_name_glob(const char *pattern, const char *s)
{
	struct match_name g;
	int r = match_name_compile(pattern, &g);
	if (r < 0)
		return r;
	r = match_name_run(&g, s) ? 1 : 0;
	match_name_free(&g);
	return r;
}
