/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Patterns as automata (glob.h). Each pattern becomes an NFA whose edges
 * carry one unit, one ASCII letter in either case, any unit, or any unit
 * but one; questions over several patterns run one subset construction
 * over all of them at once, breadth first, on an alphabet reduced to the
 * units some edge names plus one representative of all the others (they
 * behave alike on every edge).
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handoff/handoff.h"
#include "policy/glob.h"
#include "util/cleanup.h"
#include "util/urlunit.h"

/* Units: bytes 0..255; in GLOB_PATH, ENC | byte for a %XX that stays encoded. */
#define ENC URL_UNIT_ENC
#define NUNITS 512u

/* E_NOTSEP: any unit but the four segment separators of has_dot_segment(). */
enum edge_type { E_EPS, E_LIT, E_LITCI, E_ANY, E_NOT, E_NOTSEP };

struct edge {
	uint32_t from, to;
	uint16_t u;
	uint8_t type;
};

struct glob {
	enum glob_kind kind;
	char *pattern;
	uint32_t nstates;
	uint32_t start;
	uint8_t *accept;    /* nstates flags */
	struct edge *edges; /* sorted by from */
	uint32_t *first;    /* nstates + 1 offsets into edges */
	size_t nedges;
};

/* ---- building ---- */

struct builder {
	struct edge *e;
	size_t n, cap;
	uint32_t nstates;
};

static uint32_t b_state(struct builder *b)
{
	return b->nstates++;
}

static int b_edge(struct builder *b, uint32_t from, uint8_t type, unsigned u, uint32_t to)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct edge *e = realloc(b->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		b->e = e;
		b->cap = cap;
	}
	b->e[b->n++] = (struct edge){ .from = from, .to = to, .u = (uint16_t)u, .type = type };
	return 0;
}

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return 0;
}

/* Hand the builder's edges to g, with accepting states acc[] (nacc). */
static int b_finish(struct builder *b, struct glob *g, uint32_t start, const uint32_t *acc, size_t nacc)
{
	g->nstates = b->nstates;
	g->start = start;
	g->accept = calloc(b->nstates ? b->nstates : 1, 1);
	g->first = calloc(b->nstates + 1, sizeof(*g->first));
	if (!g->accept || !g->first)
		return -ENOMEM;
	for (size_t i = 0; i < nacc; i++)
		g->accept[acc[i]] = 1;
	/* A stable order is not needed: edges of a state are tried as a set. */
	if (b->n)
		qsort(b->e, b->n, sizeof(*b->e), edge_cmp);
	g->edges = b->e;
	g->nedges = b->n;
	b->e = NULL;
	for (size_t i = 0; i < g->nedges; i++)
		g->first[g->edges[i].from + 1]++;
	for (uint32_t s = 0; s < g->nstates; s++)
		g->first[s + 1] += g->first[s];
	return 0;
}

/* ---- compiling ---- */

#define T_STAR MATCH_T_STAR
#define T_DSTAR MATCH_T_DSTAR
#define T_DSTAR_SLASH MATCH_T_DSTAR_SLASH

/* The tokens enforcement runs (match/glob.h) as an NFA: state k = the
 * first k tokens matched (match_step's states, one for one). A "**" + "/" token gets a second state, its loop: it
 * may be skipped only from its first state (nothing consumed yet), and
 * left from either on the '/' it ends with. */
static int compile_tokens(struct builder *b, const uint16_t *tok, size_t nt, const struct match_set *sets,
			  bool never, struct glob *g)
{
	uint32_t *pos = calloc(nt + 1, sizeof(*pos));
	int r = 0;

	if (!pos)
		return -ENOMEM;
	for (size_t k = 0; k <= nt; k++)
		pos[k] = b_state(b);
	for (size_t k = 0; k < nt && r == 0; k++) {
		switch (tok[k]) {
		case T_STAR:
			r = b_edge(b, pos[k], E_NOT, '/', pos[k]);
			if (r == 0)
				r = b_edge(b, pos[k], E_EPS, 0, pos[k + 1]);
			break;
		case T_DSTAR:
			r = b_edge(b, pos[k], E_ANY, 0, pos[k]);
			if (r == 0)
				r = b_edge(b, pos[k], E_EPS, 0, pos[k + 1]);
			break;
		case T_DSTAR_SLASH: {
			uint32_t loop = b_state(b);
			if ((r = b_edge(b, pos[k], E_EPS, 0, pos[k + 1])) < 0 ||
			    (r = b_edge(b, pos[k], E_ANY, 0, loop)) < 0 ||
			    (r = b_edge(b, loop, E_ANY, 0, loop)) < 0 ||
			    (r = b_edge(b, pos[k], E_LIT, '/', pos[k + 1])) < 0)
				break;
			r = b_edge(b, loop, E_LIT, '/', pos[k + 1]);
			break;
		}
		case MATCH_T_ONE:
			r = b_edge(b, pos[k], E_ANY, 0, pos[k + 1]);
			break;
		default:
			if (tok[k] < MATCH_T_SET) {
				r = b_edge(b, pos[k], E_LIT, tok[k], pos[k + 1]);
				break;
			}
			for (unsigned u = 1; u < 256 && r == 0; u++)
				if (match_set_has(&sets[tok[k] - MATCH_T_SET], u))
					r = b_edge(b, pos[k], E_LIT, u, pos[k + 1]);
			break;
		}
	}
	if (r == 0)
		r = b_finish(b, g, pos[0], &pos[nt], never ? 0 : 1);
	free(pos);
	return r;
}

static int compile_path(struct builder *b, const char *glob, struct glob *g)
{
	size_t glen = strlen(glob), nt = 0;
	_cleanup_free_ uint16_t *tok = calloc(glen + 1, sizeof(*tok));

	if (!tok)
		return -ENOMEM;
	for (size_t i = 0; i < glen; nt++)
		tok[nt] = (uint16_t)match_path_token(glob, glen, &i, nt ? tok[nt - 1] : 0);
	return compile_tokens(b, tok, nt, NULL, false, g);
}

/* handoff_glob_match's own tokens (bytes; "**" + "/" also at the start). */
static int compile_file(struct builder *b, const char *pattern, struct glob *g)
{
	_cleanup_free_ uint16_t *tok = calloc(strlen(pattern) + 1, sizeof(*tok));

	if (!tok)
		return -ENOMEM;
	return compile_tokens(b, tok, match_file_tokens(pattern, tok), NULL, false, g);
}

/* fnmatch(p, s, 0), as the MCP engine runs it: match/glob.h's name
 * tokens. */
static int compile_name(struct builder *b, const char *p, struct glob *g)
{
	struct match_name m;
	int r = match_name_compile(p, &m);
	if (r < 0)
		return r;
	r = compile_tokens(b, m.tok, m.nt, m.sets, m.never, g);
	match_name_free(&m);
	return r;
}

static size_t trimmed_len(const char *s, size_t n)
{
	return n > 1 && s[n - 1] == '.' ? n - 1 : n;
}

/* A chain of case-insensitive literals from `from`; returns the last state. */
static int host_chain(struct builder *b, uint32_t from, const char *s, size_t n, uint32_t *last)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		uint32_t to = b_state(b);
		int r;
		if (c < 0x80 && isalpha(c))
			r = b_edge(b, from, E_LITCI, (unsigned)tolower(c), to);
		else
			r = b_edge(b, from, E_LIT, c, to);
		if (r < 0)
			return r;
		from = to;
	}
	*last = from;
	return 0;
}

/* netpol_host_match: "*.example.com" is one or more bytes not ending in
 * '.' then ".example.com"; anything else is the exact name. ASCII case
 * does not matter. */
static int compile_host(struct builder *b, const char *pattern, struct glob *g)
{
	size_t lp = trimmed_len(pattern, strlen(pattern));
	uint32_t start = b_state(b), last;
	int r;

	if (lp >= 2 && pattern[0] == '*' && pattern[1] == '.') {
		uint32_t label = b_state(b);
		if ((r = b_edge(b, start, E_ANY, 0, start)) < 0 || (r = b_edge(b, start, E_NOT, '.', label)) < 0 ||
		    (r = host_chain(b, label, pattern + 1, lp - 1, &last)) < 0)
			return r;
	} else if ((r = host_chain(b, start, pattern, lp, &last)) < 0) {
		return r;
	}
	return b_finish(b, g, start, &last, 1);
}

/* A filesystem path grants itself and everything beneath it: p, and p
 * followed by '/' and anything ("/" itself: '/' and anything). */
static int compile_prefix(struct builder *b, const char *p, struct glob *g)
{
	size_t n = strlen(p);
	uint32_t start = b_state(b), last = start, below = b_state(b);
	uint32_t acc[2];
	int r;

	if (n == 1) {
		if ((r = b_edge(b, start, E_LIT, '/', below)) < 0 || (r = b_edge(b, below, E_ANY, 0, below)) < 0)
			return r;
		acc[0] = below;
		return b_finish(b, g, start, acc, 1);
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t to = b_state(b);
		if ((r = b_edge(b, last, E_LIT, (unsigned char)p[i], to)) < 0)
			return r;
		last = to;
	}
	if ((r = b_edge(b, last, E_LIT, '/', below)) < 0 || (r = b_edge(b, below, E_ANY, 0, below)) < 0)
		return r;
	acc[0] = last;
	acc[1] = below;
	return b_finish(b, g, start, acc, 2);
}

int glob_compile(const char *pattern, enum glob_kind kind, struct glob **out, struct error *err)
{
	struct builder b = { 0 };
	struct glob *g;
	int r;

	*out = NULL;
	if (!pattern)
		return error_set(err, EINVAL, "no pattern");
	if (strlen(pattern) > GLOB_PATTERN_MAX)
		return error_set(err, E2BIG, "pattern longer than %d bytes", GLOB_PATTERN_MAX);
	if (kind == GLOB_PREFIX && pattern[0] != '/')
		return error_set(err, EINVAL, "\"%.100s\" is not an absolute path", pattern);
	g = calloc(1, sizeof(*g));
	if (!g || !(g->pattern = strdup(pattern))) {
		free(g);
		return error_set(err, ENOMEM, "out of memory");
	}
	g->kind = kind;
	switch (kind) {
	case GLOB_PATH:
		r = compile_path(&b, pattern, g);
		break;
	case GLOB_HOST:
		r = compile_host(&b, pattern, g);
		break;
	case GLOB_PREFIX:
		r = compile_prefix(&b, pattern, g);
		break;
	case GLOB_FILE:
		r = compile_file(&b, pattern, g);
		break;
	case GLOB_NAME:
		r = compile_name(&b, pattern, g);
		break;
	default:
		r = -EINVAL;
		break;
	}
	free(b.e);
	if (r < 0) {
		glob_free(g);
		return error_set(err, -r, "compiling \"%.100s\": %s", pattern,
				 r == -ENOMEM		     ? "out of memory"
				 : kind == GLOB_NAME ? "an unterminated bracket, equivalence class or collating symbol is not supported"
						     : "invalid kind");
	}
	*out = g;
	return 0;
}

int glob_dot_segments(struct glob **out, struct error *err)
{
	struct builder b = { 0 };
	struct glob *g;
	int r;
	static const unsigned seps[] = { '/', '\\', ENC | '/', ENC | '\\' };

	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g || !(g->pattern = strdup("<paths with a . or .. segment>"))) {
		free(g);
		return error_set(err, ENOMEM, "out of memory");
	}
	g->kind = GLOB_PATH;
	/* any* then a segment start (the beginning, or after a separator):
	 * one or two dots, optionally ";params" (up to the next separator),
	 * then the end or a separator and anything. has_dot_segment() in
	 * netpolicy.c is the reference. */
	uint32_t any = b_state(&b), seg = b_state(&b), d1 = b_state(&b), d2 = b_state(&b), par = b_state(&b),
		 done = b_state(&b), start = b_state(&b);
	uint32_t acc[4] = { d1, d2, par, done };
	r = 0;
	r = r ? r : b_edge(&b, start, E_EPS, 0, any);
	r = r ? r : b_edge(&b, start, E_EPS, 0, seg);
	r = r ? r : b_edge(&b, any, E_ANY, 0, any);
	r = r ? r : b_edge(&b, seg, E_LIT, '.', d1);
	r = r ? r : b_edge(&b, d1, E_LIT, '.', d2);
	r = r ? r : b_edge(&b, d1, E_LIT, ';', par);
	r = r ? r : b_edge(&b, d2, E_LIT, ';', par);
	r = r ? r : b_edge(&b, d1, E_LIT, ENC | ';', par);
	r = r ? r : b_edge(&b, d2, E_LIT, ENC | ';', par);
	r = r ? r : b_edge(&b, done, E_ANY, 0, done);
	for (size_t i = 0; i < ARRAY_SIZE(seps) && r == 0; i++) {
		r = r ? r : b_edge(&b, any, E_LIT, seps[i], seg);
		r = r ? r : b_edge(&b, d1, E_LIT, seps[i], done);
		r = r ? r : b_edge(&b, d2, E_LIT, seps[i], done);
		r = r ? r : b_edge(&b, par, E_LIT, seps[i], done);
	}
	/* par: anything but a separator stays in the parameters. */
	r = r ? r : b_edge(&b, par, E_NOTSEP, 0, par);
	if (r == 0)
		r = b_finish(&b, g, start, acc, 4);
	free(b.e);
	if (r < 0) {
		glob_free(g);
		return error_set(err, -r, "out of memory");
	}
	*out = g;
	return 0;
}

/* Host names as the proxy compares them: no trailing dot (but "." itself).
 * Every host question runs inside this language, so that a witness is a
 * name netpol_host_match sees as it is. */
static int normal_hosts(struct glob **out)
{
	struct builder b = { 0 };
	struct glob *g = calloc(1, sizeof(*g));
	int r = 0;

	*out = NULL;
	if (!g || !(g->pattern = strdup("<host names>"))) {
		free(g);
		return -ENOMEM;
	}
	g->kind = GLOB_HOST;
	uint32_t start = b_state(&b), name = b_state(&b), dot = b_state(&b), lone = b_state(&b);
	uint32_t acc[3] = { start, name, lone };
	r = r ? r : b_edge(&b, start, E_NOT, '.', name);
	r = r ? r : b_edge(&b, start, E_LIT, '.', lone);
	r = r ? r : b_edge(&b, lone, E_LIT, '.', dot);
	r = r ? r : b_edge(&b, lone, E_NOT, '.', name);
	r = r ? r : b_edge(&b, name, E_NOT, '.', name);
	r = r ? r : b_edge(&b, name, E_LIT, '.', dot);
	r = r ? r : b_edge(&b, dot, E_LIT, '.', dot);
	r = r ? r : b_edge(&b, dot, E_NOT, '.', name);
	if (r == 0)
		r = b_finish(&b, g, start, acc, 3);
	free(b.e);
	if (r < 0) {
		glob_free(g);
		return r;
	}
	*out = g;
	return 0;
}

void glob_free(struct glob *g)
{
	if (!g)
		return;
	free(g->pattern);
	free(g->accept);
	free(g->edges);
	free(g->first);
	free(g);
}

enum glob_kind glob_kind(const struct glob *g)
{
	return g->kind;
}

const char *glob_pattern(const struct glob *g)
{
	return g->pattern;
}

/* ---- edges ---- */

static bool edge_takes(const struct edge *e, unsigned u)
{
	switch ((enum edge_type)e->type) {
	case E_EPS:
		return false;
	case E_LIT:
		return e->u == u;
	case E_LITCI:
		return u < 0x80 && (unsigned)tolower((int)u) == e->u;
	case E_ANY:
		return true;
	case E_NOT:
		return e->u != u;
	case E_NOTSEP:
		return u != '/' && u != '\\' && u != (ENC | '/') && u != (ENC | '\\');
	}
	return false;
}

/* ---- matching one string ---- */

static void closure1(const struct glob *g, uint8_t *set, uint32_t *stack)
{
	size_t sp = 0;
	for (uint32_t s = 0; s < g->nstates; s++)
		if (set[s])
			stack[sp++] = s;
	while (sp) {
		uint32_t s = stack[--sp];
		for (uint32_t i = g->first[s]; i < g->first[s + 1]; i++) {
			const struct edge *e = &g->edges[i];
			if (e->type == E_EPS && !set[e->to]) {
				set[e->to] = 1;
				stack[sp++] = e->to;
			}
		}
	}
}

bool glob_match(const struct glob *g, const char *s, size_t len)
{
	_cleanup_free_ uint8_t *cur = NULL, *next = NULL;
	_cleanup_free_ uint32_t *stack = NULL;
	bool any = false;

	if (!g || (!s && len > 0))
		return false;
	if (g->kind == GLOB_HOST)
		len = trimmed_len(s, len);
	cur = calloc(g->nstates, 1);
	next = calloc(g->nstates, 1);
	stack = calloc(g->nstates, sizeof(*stack));
	if (!cur || !next || !stack)
		return false;
	cur[g->start] = 1;
	closure1(g, cur, stack);
	for (size_t i = 0; i < len;) {
		unsigned u = g->kind == GLOB_PATH ? url_next_unit(s, len, &i) : (unsigned char)s[i++];
		memset(next, 0, g->nstates);
		any = false;
		for (uint32_t st = 0; st < g->nstates; st++) {
			if (!cur[st])
				continue;
			for (uint32_t k = g->first[st]; k < g->first[st + 1]; k++)
				if (edge_takes(&g->edges[k], u)) {
					next[g->edges[k].to] = 1;
					any = true;
				}
		}
		if (!any)
			return false;
		closure1(g, next, stack);
		uint8_t *t = cur;
		cur = next;
		next = t;
	}
	for (uint32_t st = 0; st < g->nstates; st++)
		if (cur[st] && g->accept[st])
			return true;
	return false;
}

/* ---- questions over several patterns ---- */

struct comp {
	const struct glob *g;
	uint32_t off;
	bool in;
};

struct explore {
	struct comp *c;
	size_t nc;
	uint32_t N;      /* NFA states of all components */
	size_t W;        /* 64-bit words of one subset */
	uint32_t *owner; /* N: the component of each state */
	bool path_units;
	unsigned sym[NUNITS + 1];
	size_t nsym;
	uint64_t *sets;  /* n subsets of W words */
	uint32_t *parent;
	uint16_t *via;
	size_t n, cap;
	uint32_t *slot;  /* open addressing: index + 1, 0 = empty */
	size_t nslot;
	uint32_t *stack;
	struct glob *hosts; /* owned: normal_hosts(), an extra "in" when comparing hosts */
	uint64_t *univ;     /* W words: states accepting every continuation */
	uint64_t *scratch;  /* W words */
};

static void explore_free(struct explore *x)
{
	free(x->c);
	free(x->owner);
	free(x->sets);
	free(x->parent);
	free(x->via);
	free(x->slot);
	free(x->stack);
	glob_free(x->hosts);
	free(x->univ);
	free(x->scratch);
}

/* Units preferred as the representative of "any other unit": they make
 * witnesses readable. */
static const char preferred[] = "xyzqjkvwabcdefghilmnoprstu0123456789-_~";

static void mark_unit(uint8_t *named, unsigned u)
{
	if (u < NUNITS)
		named[u] = 1;
}

/* Does state s accept the empty string (an accepting state within its
 * closure)? stack: scratch of g->nstates entries at least. */
static bool accepts_empty(const struct glob *g, uint32_t s, uint32_t *stack)
{
	size_t sp = 0;
	stack[sp++] = s;
	/* The closures here are chains (edges only go forward), so no set of
	 * visited states is needed to terminate, but bound the walk anyway. */
	for (size_t steps = 0; sp && steps < (size_t)g->nstates * 4; steps++) {
		uint32_t t = stack[--sp];
		if (g->accept[t])
			return true;
		for (uint32_t k = g->first[t]; k < g->first[t + 1]; k++)
			if (g->edges[k].type == E_EPS && sp < g->nstates)
				stack[sp++] = g->edges[k].to;
	}
	return false;
}

static int explore_init(struct explore *x, const struct glob *const *in, size_t n_in,
			const struct glob *const *out, size_t n_out, struct error *err)
{
	uint8_t named[NUNITS] = { 0 };
	bool have_path = false, have_bytes = false;

	memset(x, 0, sizeof(*x));
	x->nc = n_in + n_out;
	for (size_t i = 0; i < x->nc; i++) {
		const struct glob *g = i < n_in ? in[i] : out[i - n_in];
		if (g && g->kind == GLOB_HOST && !x->hosts) {
			if (normal_hosts(&x->hosts) < 0)
				return error_set(err, ENOMEM, "out of memory");
		}
	}
	if (x->hosts)
		x->nc++;
	x->c = calloc(x->nc ? x->nc : 1, sizeof(*x->c));
	if (!x->c)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < x->nc; i++) {
		const struct glob *g = i < n_in ? in[i] : i < n_in + n_out ? out[i - n_in] : x->hosts;
		if (!g)
			return error_set(err, EINVAL, "no pattern");
		x->c[i] = (struct comp){ .g = g, .off = x->N, .in = i < n_in || i >= n_in + n_out };
		if ((uint64_t)x->N + g->nstates > UINT32_MAX / 2)
			return error_set(err, E2BIG, "patterns too large to compare");
		x->N += g->nstates;
		if (g->kind == GLOB_PATH)
			have_path = true;
		else
			have_bytes = true;
		for (size_t k = 0; k < g->nedges; k++) {
			const struct edge *e = &g->edges[k];
			switch ((enum edge_type)e->type) {
			case E_LIT:
			case E_NOT:
				mark_unit(named, e->u);
				break;
			case E_LITCI:
				mark_unit(named, e->u);
				mark_unit(named, (unsigned)toupper(e->u));
				break;
			case E_NOTSEP:
				mark_unit(named, '/');
				mark_unit(named, '\\');
				mark_unit(named, ENC | '/');
				mark_unit(named, ENC | '\\');
				break;
			case E_EPS:
			case E_ANY:
				break;
			}
		}
	}
	if (have_path && have_bytes)
		return error_set(err, EINVAL, "cannot compare request path globs with other patterns");
	x->path_units = have_path;
	x->W = (x->N + 63) / 64;
	if (x->W == 0)
		x->W = 1;
	x->owner = calloc(x->N ? x->N : 1, sizeof(*x->owner));
	x->stack = calloc(x->N ? x->N : 1, sizeof(*x->stack));
	if (!x->owner || !x->stack)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < x->nc; i++)
		for (uint32_t s = 0; s < x->c[i].g->nstates; s++)
			x->owner[x->c[i].off + s] = (uint32_t)i;
	/* A state that accepts and loops on every unit accepts every
	 * continuation: its component's answer is settled for good. */
	x->univ = calloc(x->W, sizeof(*x->univ));
	x->scratch = calloc(x->W, sizeof(*x->scratch));
	if (!x->univ || !x->scratch)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < x->nc; i++) {
		const struct glob *g = x->c[i].g;
		for (uint32_t s = 0; s < g->nstates; s++) {
			bool loop = false;
			for (uint32_t k = g->first[s]; k < g->first[s + 1]; k++)
				loop |= g->edges[k].type == E_ANY && g->edges[k].to == s;
			if (loop && accepts_empty(g, s, x->stack))
				x->univ[(x->c[i].off + s) / 64] |= (uint64_t)1 << ((x->c[i].off + s) % 64);
		}
	}

	/* The alphabet: one unit standing for all units no edge names, then
	 * every named unit. */
	unsigned limit = x->path_units ? NUNITS : 256;
	int other = -1;
	for (const char *p = preferred; *p && other < 0; p++)
		if (!named[(unsigned char)*p])
			other = (unsigned char)*p;
	for (unsigned u = 1; u < limit && other < 0; u++) {
		/* In paths, an encoded unreserved character never occurs. */
		if (u & ENC && url_unreserved(u & 0xff))
			continue;
		if (!named[u])
			other = (int)u;
	}
	if (other >= 0)
		x->sym[x->nsym++] = (unsigned)other;
	/* Among strings of one length the first found wins: lower-case
	 * letters and digits, then punctuation, then upper case, then
	 * encoded units, so that a witness reads like a name or a path. */
	for (int rank = 0; rank < 4; rank++)
		for (unsigned u = 0; u < limit; u++) {
			int ur = u & ENC ? 3 : (u < 0x80 && isupper((int)u)) ? 2 : (u < 0x80 && (islower((int)u) || isdigit((int)u))) ? 0 : 1;
			if (ur == rank && named[u] && !(u & ENC && url_unreserved(u & 0xff)))
				x->sym[x->nsym++] = u;
		}
	return 0;
}

static inline bool bit(const uint64_t *set, uint32_t s)
{
	return (set[s / 64] >> (s % 64)) & 1;
}

static inline void setbit(uint64_t *set, uint32_t s)
{
	set[s / 64] |= (uint64_t)1 << (s % 64);
}

static void closure(struct explore *x, uint64_t *set)
{
	size_t sp = 0;
	for (size_t w = 0; w < x->W; w++)
		for (uint64_t m = set[w]; m; m &= m - 1)
			x->stack[sp++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
	while (sp) {
		uint32_t s = x->stack[--sp];
		const struct comp *c = &x->c[x->owner[s]];
		uint32_t l = s - c->off;
		for (uint32_t i = c->g->first[l]; i < c->g->first[l + 1]; i++) {
			const struct edge *e = &c->g->edges[i];
			uint32_t t = c->off + e->to;
			if (e->type == E_EPS && !bit(set, t)) {
				setbit(set, t);
				x->stack[sp++] = t;
			}
		}
	}
}

/* A component in a universal state accepts whatever follows: keep only
 * that state, so that subsets differing in its other states (which can
 * no longer change its answer) are one. Without this, paths through
 * several "D/" + "**" directories multiply the subsets for nothing. */
static void settle(struct explore *x, uint64_t *set)
{
	bool any = false;
	for (size_t w = 0; w < x->W && !any; w++)
		any = (set[w] & x->univ[w]) != 0;
	if (!any)
		return;
	for (size_t w = 0; w < x->W; w++)
		for (uint64_t m = set[w] & x->univ[w]; m; m &= m - 1) {
			uint32_t s = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
			const struct comp *c = &x->c[x->owner[s]];
			if (!bit(set, s))
				continue; /* cleared by an earlier universal state of c */
			for (uint32_t t = c->off; t < c->off + c->g->nstates; t++)
				if (t != s && bit(set, t))
					set[t / 64] &= ~((uint64_t)1 << (t % 64));
		}
}

static void step(struct explore *x, const uint64_t *from, unsigned u, uint64_t *to)
{
	memset(to, 0, x->W * sizeof(*to));
	for (size_t w = 0; w < x->W; w++)
		for (uint64_t m = from[w]; m; m &= m - 1) {
			uint32_t s = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
			const struct comp *c = &x->c[x->owner[s]];
			uint32_t l = s - c->off;
			for (uint32_t i = c->g->first[l]; i < c->g->first[l + 1]; i++)
				if (edge_takes(&c->g->edges[i], u))
					setbit(to, c->off + c->g->edges[i].to);
		}
	closure(x, to);
	settle(x, to);
}

static uint64_t set_hash(const uint64_t *set, size_t W)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < W; i++) {
		h ^= set[i];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h;
}

/* The index of set among the subsets seen, adding it (with its parent
 * and symbol) when new. *added tells which. */
static int intern(struct explore *x, const uint64_t *set, uint32_t parent, uint16_t via, size_t *idx, bool *added,
		  struct error *err)
{
	if (x->n >= x->nslot / 2) {
		size_t nslot = x->nslot ? x->nslot * 2 : 1024;
		uint32_t *slot = calloc(nslot, sizeof(*slot));
		if (!slot)
			return error_set(err, ENOMEM, "out of memory");
		for (size_t i = 0; i < x->n; i++) {
			size_t h = (size_t)set_hash(x->sets + i * x->W, x->W) & (nslot - 1);
			while (slot[h])
				h = (h + 1) & (nslot - 1);
			slot[h] = (uint32_t)i + 1;
		}
		free(x->slot);
		x->slot = slot;
		x->nslot = nslot;
	}
	size_t h = (size_t)set_hash(set, x->W) & (x->nslot - 1);
	while (x->slot[h]) {
		size_t i = x->slot[h] - 1;
		if (!memcmp(x->sets + i * x->W, set, x->W * sizeof(*set))) {
			*idx = i;
			*added = false;
			return 0;
		}
		h = (h + 1) & (x->nslot - 1);
	}
	if (x->n >= GLOB_MAX_STATES || (uint64_t)(x->n + 1) * x->W * 8 > ((uint64_t)256 << 20))
		return error_set(err, E2BIG,
				 "the patterns are too complex to compare exactly (more than %zu automaton states)",
				 x->n);
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 256;
		uint64_t *sets = realloc(x->sets, cap * x->W * sizeof(*sets));
		if (!sets)
			return error_set(err, ENOMEM, "out of memory");
		x->sets = sets;
		uint32_t *par = realloc(x->parent, cap * sizeof(*par));
		if (!par)
			return error_set(err, ENOMEM, "out of memory");
		x->parent = par;
		uint16_t *v = realloc(x->via, cap * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		x->via = v;
		x->cap = cap;
	}
	memcpy(x->sets + x->n * x->W, set, x->W * sizeof(*set));
	x->parent[x->n] = parent;
	x->via[x->n] = via;
	x->slot[h] = (uint32_t)x->n + 1;
	*idx = x->n++;
	*added = true;
	return 0;
}

/* The string leading to subset i, encoded for the kind's matcher. */
static int witness_of(struct explore *x, size_t i, char **out, size_t *outlen, struct error *err)
{
	size_t n = 0;
	for (size_t j = i; j != 0; j = x->parent[j])
		n++;
	_cleanup_free_ unsigned *u = calloc(n + 1, sizeof(*u));
	char *s = malloc(n * 3 + 1);
	if (!u || !s) {
		free(s);
		return error_set(err, ENOMEM, "out of memory");
	}
	size_t k = n;
	for (size_t j = i; j != 0; j = x->parent[j])
		u[--k] = x->sym[x->via[j]];
	size_t len = 0;
	for (k = 0; k < n; k++) {
		unsigned c = u[k];
		if (c & ENC) {
			static const char hex[] = "0123456789ABCDEF";
			s[len++] = '%';
			s[len++] = hex[(c >> 4) & 0xf];
			s[len++] = hex[c & 0xf];
		} else if (x->path_units && k > 0 && u[k - 1] == '%' && c < 0x80 && hex_digit_value((unsigned char)c) >= 0) {
			/* A plain '%' followed by two hex digits would read back
			 * as one decoded unit: spell the digit encoded. */
			static const char hex[] = "0123456789ABCDEF";
			s[len++] = '%';
			s[len++] = hex[(c >> 4) & 0xf];
			s[len++] = hex[c & 0xf];
		} else {
			s[len++] = (char)c;
		}
	}
	s[len] = '\0';
	*out = s;
	if (outlen)
		*outlen = len;
	return 0;
}

/* Breadth-first over the subsets. find mode: stop at the first subset
 * accepted by every in and no out. Atom mode: report each new signature. */
static int explore_run(struct explore *x, size_t n_in, size_t n_out, bool find, bool *found, char **witness,
		       glob_atom_cb cb, void *ctx, struct error *err)
{
	_cleanup_free_ uint64_t *cur = calloc(x->W, sizeof(*cur));
	_cleanup_free_ uint64_t *nxt = calloc(x->W, sizeof(*nxt));
	_cleanup_free_ bool *alive = calloc(x->nc + 1, sizeof(*alive));
	_cleanup_free_ bool *acc = calloc(x->nc + 1, sizeof(*acc));
	_cleanup_free_ uint8_t *seen = NULL; /* signatures reported, n_out bytes each */
	size_t nseen = 0, idx;
	bool added;
	int r;

	if (found)
		*found = false;
	if (!cur || !nxt || !alive || !acc)
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < x->nc; i++)
		setbit(cur, x->c[i].off + x->c[i].g->start);
	closure(x, cur);
	settle(x, cur);
	if ((r = intern(x, cur, 0, 0, &idx, &added, err)) < 0)
		return r;
	for (size_t q = 0; q < x->n; q++) {
		const uint64_t *set = x->sets + q * x->W;
		bool dead = false, all_in = true, none_out = true;

		memset(alive, 0, x->nc * sizeof(*alive));
		memset(acc, 0, x->nc * sizeof(*acc));
		for (size_t w = 0; w < x->W; w++)
			for (uint64_t m = set[w]; m; m &= m - 1) {
				uint32_t s = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
				uint32_t o = x->owner[s];
				alive[o] = true;
				/* a universal state stands for its closure, which
				 * settle() may have dropped */
				if (x->c[o].g->accept[s - x->c[o].off] || bit(x->univ, s))
					acc[o] = true;
			}
		for (size_t i = 0; i < x->nc; i++) {
			if (!x->c[i].in)
				continue;
			if (!alive[i])
				dead = true;
			if (!acc[i])
				all_in = false;
		}
		if (dead)
			continue; /* no string with this prefix is in every in */
		if (find) {
			/* An out component accepting every continuation: no
			 * witness starts with this prefix. */
			bool settled = false;
			for (size_t w = 0; w < x->W && !settled; w++)
				for (uint64_t m = set[w] & x->univ[w]; m && !settled; m &= m - 1) {
					uint32_t s = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
					size_t o = x->owner[s];
					settled = o >= n_in && o < n_in + n_out;
				}
			if (settled)
				continue;
		}
		for (size_t j = 0; j < n_out; j++)
			if (acc[n_in + j])
				none_out = false;
		if (all_in && find && none_out) {
			*found = true;
			return witness ? witness_of(x, q, witness, NULL, err) : 0;
		}
		if (all_in && !find) {
			bool fresh = true;
			for (size_t k = 0; k < nseen && fresh; k++) {
				bool same = true;
				for (size_t j = 0; j < n_out && same; j++)
					same = seen[k * n_out + j] == (uint8_t)acc[n_in + j];
				fresh = !same;
			}
			if (fresh) {
				uint8_t *ns = realloc(seen, (nseen + 1) * (n_out ? n_out : 1));
				if (!ns)
					return error_set(err, ENOMEM, "out of memory");
				seen = ns;
				for (size_t j = 0; j < n_out; j++)
					seen[nseen * n_out + j] = acc[n_in + j];
				nseen++;
				_cleanup_free_ char *w = NULL;
				size_t wl;
				if ((r = witness_of(x, q, &w, &wl, err)) < 0)
					return r;
				r = cb(ctx, acc + n_in, w, wl, err);
				if (r != 0)
					return r < 0 ? r : 0;
			}
		}
		for (size_t si = 0; si < x->nsym; si++) {
			step(x, x->sets + q * x->W, x->sym[si], nxt);
			bool any = false;
			for (size_t w = 0; w < x->W && !any; w++)
				any = nxt[w] != 0;
			if (!any && x->nc > n_out)
				continue;
			if ((r = intern(x, nxt, (uint32_t)q, (uint16_t)si, &idx, &added, err)) < 0)
				return r;
		}
	}
	return 0;
}

int glob_find(const struct glob *const *in, size_t n_in, const struct glob *const *out, size_t n_out,
	      bool *found, char **witness, struct error *err)
{
	struct explore x;
	int r;

	if (witness)
		*witness = NULL;
	*found = false;
	r = explore_init(&x, in, n_in, out, n_out, err);
	if (r == 0)
		r = explore_run(&x, n_in, n_out, true, found, witness, NULL, NULL, err);
	explore_free(&x);
	return r;
}

int glob_atoms(const struct glob *const *in, size_t n_in, const struct glob *const *out, size_t n_out,
	       glob_atom_cb cb, void *ctx, struct error *err)
{
	struct explore x;
	int r;

	r = explore_init(&x, in, n_in, out, n_out, err);
	if (r == 0)
		r = explore_run(&x, n_in, n_out, false, NULL, NULL, cb, ctx, err);
	explore_free(&x);
	return r;
}

int glob_subset(const struct glob *a, const struct glob *const *b, size_t n, bool *subset, char **witness,
		struct error *err)
{
	bool found = false;
	int r = glob_find(&a, 1, b, n, &found, witness, err);

	if (r < 0)
		return r;
	*subset = !found;
	return 0;
}

int glob_overlap(const struct glob *a, const struct glob *b, bool *overlap, char **witness, struct error *err)
{
	const struct glob *both[2] = { a, b };

	return glob_find(both, 2, NULL, 0, overlap, witness, err);
}
