/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leak scanning of requests, and of responses from a credential's endpoint.
 *
 * Registered secrets are expanded into needles (the value and its common
 * encodings) and matched in one pass with an Aho-Corasick automaton built
 * when a secret is added, so that dlp_scan only reads shared state. The
 * automaton runs only where a filter on sampled 4-byte grams says a needle
 * may start: most of a clean buffer is read one position in (the shortest
 * needle's length - 3), 41 for a 44-byte key. A
 * second pass matches the same needles against a percent-decoded view of
 * the buffer, which catches any mix of escaped and literal bytes (and
 * base64 whose '+', '/' and '=' were escaped to go into a URL), when the
 * buffer contains a '%' at all.
 *
 * The built-in credential formats are recognised by small hand-written
 * matchers behind a filter on the first two bytes.
 *
 * The input is chosen by a hostile agent: every scan is linear in its
 * length and allocates nothing. The secrets come from the supervisor; their
 * number and the size of their needles are bounded anyway, and so is the
 * automaton: at most DLP_MAX_NEEDLE_BYTES + 1 nodes of 16 bytes each plus
 * a dense transition table of at most DLP_DENSE_BYTES.
 */
#include "net/dlp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/hex.h"

#define DLP_MAX_SECRETS 256
#define DLP_MAX_NEEDLE_BYTES (1u << 20)
#define DLP_MAX_NAME 128
#define DLP_MIN_SECRET 8
/* Shorter base64 cores would match by accident in any large base64 body. */
#define DLP_MIN_B64_CORE 8
/* Transition rows for the shallowest nodes, where a scan spends nearly
 * all its time; deeper ones use their sorted child lists and failure
 * links. */
#define DLP_DENSE_BYTES (2u << 20)
#define DLP_DENSE_DEPTH 4
#define DLP_MAX_VARIANTS 40

/*
 * A scan's state is the dense row offset of its node (node * ncls), or
 * AC_SPARSE | node for a node without a dense row, with AC_HIT set when the
 * node ends some needle: the hot loop is then one load, one add and one
 * compare per byte. Both values fit in AC_VALUE: there are at most
 * DLP_MAX_NEEDLE_BYTES + 1 nodes and DLP_DENSE_BYTES / 4 dense entries.
 */
#define AC_HIT 0x80000000u
#define AC_SPARSE 0x40000000u
#define AC_VALUE 0x3fffffffu
/* 8 KiB of bitmap: stays in the first-level cache beside the scanned
 * bytes; with 40 needles of 40 bytes about 2.5 % of the bits are set. */
#define AC_GRAM_BITS (1u << 16)

enum enc {
	ENC_RAW,
	ENC_BASE64,
	ENC_BASE64URL,
	ENC_HEX,
	ENC_URL,
	ENC_FORM,
	ENC_REVERSED,
	ENC_JSON,
	ENC_HTML,
};

static const char *enc_label(enum enc e, bool decoded)
{
	switch (e) {
	case ENC_RAW:
		return decoded ? "url" : "raw";
	case ENC_BASE64:
		return decoded ? "base64, url" : "base64";
	case ENC_BASE64URL:
		return decoded ? "base64url, url" : "base64url";
	case ENC_HEX:
		return decoded ? "hex, url" : "hex";
	case ENC_URL:
		return decoded ? "url, url" : "url";
	case ENC_FORM:
		return decoded ? "form, url" : "form";
	case ENC_REVERSED:
		return decoded ? "reversed, url" : "reversed";
	case ENC_JSON:
		return decoded ? "json, url" : "json";
	case ENC_HTML:
		return decoded ? "html, url" : "html";
	}
	return "?";
}

struct needle {
	uint32_t off; /* into dlp.pool */
	uint32_t len;
	uint16_t secret;
	uint8_t enc; /* enum enc */
};

/* One node's fields together: a step through a node without a dense row
 * reads one or two cache lines. */
struct ac_node {
	uint32_t fail;
	uint32_t child;  /* first child, 0 when none */
	uint16_t nchild;
	uint16_t label;  /* class of the edge into the node */
	int32_t hit;     /* longest needle that is a suffix of the node's string, -1 */
};

/*
 * The automaton. Nodes are numbered in breadth-first order, so a node's
 * failure link is always a smaller number, the nodes with dense rows are
 * the shallowest, and the children of a node are consecutive numbers
 * (child .. child + nchild - 1), sorted by label. Bytes are mapped to
 * classes first: class 0 is every byte that occurs in no needle, and
 * leads back to the root from anywhere.
 */
struct ac {
	uint16_t cls[256];
	uint32_t ncls;
	uint32_t nnodes;
	uint32_t ndense;   /* nodes 0 .. ndense-1 have a dense row */
	uint32_t *dense;   /* ndense * ncls: encoded target state */
	struct ac_node *node;
	uint32_t *nlen;    /* needle lengths, by needle id */
	size_t nneedles;
	size_t maxlen;
	/* The filter in front of the raw scan (ac_scan_sampled): every
	 * step-th position's 4 bytes are looked up in a bitmap of the
	 * 4-grams at offsets 0 .. step-1 of every needle; step is the
	 * shortest needle's length less 3, 0 when there is no filter. */
	uint32_t step;
	uint64_t *grams;   /* AC_GRAM_BITS bits */
	uint32_t *depth;   /* by node: the length of its string */
};

struct dlp {
	char *names[DLP_MAX_SECRETS];
	size_t nsecrets;
	uint8_t *pool; /* needle bytes: wiped before release */
	size_t pool_len;
	struct needle *needles;
	size_t nneedles;
	struct ac *ac; /* NULL until the first secret */
};

/* ---- memory holding secret material ---- */

static void wipe_free(void *p, size_t n)
{
	if (p) {
		explicit_bzero(p, n);
		free(p);
	}
}

static void ac_free(struct ac *a)
{
	if (!a)
		return;
	size_t n = a->nnodes;
	/* The labels spell out every needle; the rest is cheap to wipe too. */
	wipe_free(a->dense, (size_t)a->ndense * a->ncls * sizeof(*a->dense));
	wipe_free(a->node, n * sizeof(*a->node));
	wipe_free(a->nlen, a->nneedles * sizeof(*a->nlen));
	wipe_free(a->depth, n * sizeof(*a->depth));
	/* A set bit says which 4 bytes a needle holds, give or take the
	 * hash's collisions. */
	wipe_free(a->grams, AC_GRAM_BITS / 8);
	wipe_free(a, sizeof(*a));
}

static inline void ac_freep(struct ac **a)
{
	ac_free(*a);
}

/* ---- automaton construction ---- */

static int needle_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct dlp *d = ctx;
	const struct needle *a = &d->needles[*(const uint32_t *)pa];
	const struct needle *b = &d->needles[*(const uint32_t *)pb];
	size_t n = a->len < b->len ? a->len : b->len;
	int r = memcmp(d->pool + a->off, d->pool + b->off, n);

	if (r)
		return r;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	/* Identical needles: the first registered one names the hit. */
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	return ia < ib ? -1 : ia > ib;
}

/* The child of s labelled c, or 0. */
static uint32_t ac_child(const struct ac *a, uint32_t s, unsigned c)
{
	uint32_t lo = a->node[s].child, hi = lo + a->node[s].nchild;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->node[mid].label == c)
			return mid;
		if (a->node[mid].label < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* While building, before the dense rows are encoded: the node reached
 * from s on class c. Needs the failure links of s and its suffixes. */
static uint32_t ac_goto_build(const struct ac *a, uint32_t s, unsigned c)
{
	for (;;) {
		if (s < a->ndense)
			return a->dense[(size_t)s * a->ncls + c];
		uint32_t x = ac_child(a, s, c);
		if (x)
			return x;
		s = a->node[s].fail;
	}
}

static uint32_t ac_encode(const struct ac *a, uint32_t n)
{
	return (n < a->ndense ? n * a->ncls : AC_SPARSE | n) | (a->node[n].hit >= 0 ? AC_HIT : 0);
}

static uint32_t ac_decode(const struct ac *a, uint32_t state)
{
	state &= ~AC_HIT;
	return state & AC_SPARSE ? state & AC_VALUE : state / a->ncls;
}

struct ac_tmp {
	size_t n;
	uint32_t *order; /* index of the sort / BFS queue */
	uint32_t *first, *next, *last;
	uint16_t *label;
	int32_t *out;
	uint32_t *path;
	size_t pathlen;
};

static void ac_tmp_free(struct ac_tmp *t)
{
	wipe_free(t->order, t->n * sizeof(uint32_t));
	wipe_free(t->first, t->n * sizeof(uint32_t));
	wipe_free(t->next, t->n * sizeof(uint32_t));
	wipe_free(t->last, t->n * sizeof(uint32_t));
	wipe_free(t->label, t->n * sizeof(uint16_t));
	wipe_free(t->out, t->n * sizeof(int32_t));
	wipe_free(t->path, t->pathlen * sizeof(uint32_t));
}

static inline uint32_t gram_hash(const uint8_t *p)
{
	uint32_t g;
	memcpy(&g, p, sizeof(g));
	return (g * 2654435761u) >> 16;
}

static inline bool gram_set(const uint64_t *bits, uint32_t h)
{
	return bits[h >> 6] >> (h & 63) & 1;
}

/* Build the automaton of all of d's needles. Returns 0 or -ENOMEM; on
 * success *out is a new automaton owned by the caller. */
static int ac_build(const struct dlp *d, struct ac **out)
{
	_cleanup_(ac_freep) struct ac *a = calloc(1, sizeof(*a));
	struct ac_tmp t = { 0 };
	size_t total = 0, maxlen = 0;
	int r = -ENOMEM;

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < d->nneedles; i++) {
		const struct needle *nd = &d->needles[i];
		total += nd->len;
		if (nd->len > maxlen)
			maxlen = nd->len;
		for (size_t j = 0; j < nd->len; j++)
			a->cls[d->pool[nd->off + j]] = 1;
	}
	a->ncls = 1;
	for (unsigned b = 0; b < 256; b++)
		if (a->cls[b])
			a->cls[b] = (uint16_t)a->ncls++;
	a->maxlen = maxlen;

	a->nneedles = d->nneedles;
	a->nlen = calloc(d->nneedles ? d->nneedles : 1, sizeof(*a->nlen));
	if (!a->nlen)
		goto out;
	for (size_t i = 0; i < d->nneedles; i++)
		a->nlen[i] = d->needles[i].len;

	/* The trie, inserted in sorted order: every node's children are then
	 * created in increasing label order, and each needle shares exactly
	 * the prefix it has in common with the previous one. */
	t.n = total + 1;
	t.pathlen = maxlen + 1;
	t.order = calloc(t.n, sizeof(uint32_t));
	t.first = calloc(t.n, sizeof(uint32_t));
	t.next = calloc(t.n, sizeof(uint32_t));
	t.last = calloc(t.n, sizeof(uint32_t));
	t.label = calloc(t.n, sizeof(uint16_t));
	t.out = calloc(t.n, sizeof(int32_t));
	t.path = calloc(t.pathlen, sizeof(uint32_t));
	if (!t.order || !t.first || !t.next || !t.last || !t.label || !t.out || !t.path)
		goto out;
	for (size_t i = 0; i < d->nneedles; i++)
		t.order[i] = (uint32_t)i;
	qsort_r(t.order, d->nneedles, sizeof(uint32_t), needle_cmp, (void *)d);

	uint32_t nnodes = 1;
	const struct needle *prev = NULL;
	t.out[0] = -1;
	t.path[0] = 0;
	for (size_t k = 0; k < d->nneedles; k++) {
		const struct needle *nd = &d->needles[t.order[k]];
		const uint8_t *s = d->pool + nd->off;
		size_t lcp = 0;

		if (prev) {
			const uint8_t *p = d->pool + prev->off;
			while (lcp < prev->len && lcp < nd->len && p[lcp] == s[lcp])
				lcp++;
			if (lcp == nd->len && lcp == prev->len)
				continue; /* duplicate: the earlier id keeps the node */
		}
		for (size_t j = lcp; j < nd->len; j++) {
			uint32_t parent = t.path[j], n = nnodes++;
			t.label[n] = a->cls[s[j]];
			t.out[n] = -1;
			if (t.last[parent])
				t.next[t.last[parent]] = n;
			else
				t.first[parent] = n;
			t.last[parent] = n;
			t.path[j + 1] = n;
		}
		t.out[t.path[nd->len]] = (int32_t)t.order[k];
		prev = nd;
	}

	/* Breadth-first renumbering. */
	a->nnodes = nnodes;
	a->node = calloc(nnodes, sizeof(*a->node));
	if (!a->node)
		goto out;
	uint32_t *queue = t.order; /* the sort order is no longer needed */
	uint32_t head = 0, tail = 1, level_end = 1, depth = 0, shallow = nnodes;
	queue[0] = 0;
	while (head < tail) {
		if (head == level_end) {
			/* Nodes head .. tail-1 are one deeper. */
			level_end = tail;
			if (++depth == DLP_DENSE_DEPTH + 1)
				shallow = head;
		}
		uint32_t o = queue[head], n = head++;
		a->node[n].label = t.label[o];
		a->node[n].child = t.first[o] ? tail : 0;
		for (uint32_t c = t.first[o]; c; c = t.next[c]) {
			queue[tail++] = c;
			a->node[n].nchild++;
		}
	}
	for (uint32_t n = 0; n < nnodes; n++)
		a->node[n].hit = t.out[queue[n]];

	size_t rows = DLP_DENSE_BYTES / (a->ncls * sizeof(uint32_t));
	a->ndense = (uint32_t)(rows < shallow ? rows : shallow);
	a->dense = calloc((size_t)a->ndense * a->ncls, sizeof(*a->dense));
	if (!a->dense)
		goto out;

	/* Failure links and dense rows, in breadth-first order: everything a
	 * node needs belongs to shallower nodes, which come first. */
	for (uint32_t p = 0; p < nnodes; p++) {
		uint32_t c0 = a->node[p].child, nc = a->node[p].nchild;
		for (uint32_t ch = c0; ch < c0 + nc; ch++) {
			struct ac_node *nd = &a->node[ch];
			nd->fail = p == 0 ? 0 : ac_goto_build(a, a->node[p].fail, nd->label);
			if (nd->hit < 0)
				nd->hit = a->node[nd->fail].hit;
		}
		if (p < a->ndense) {
			uint32_t *row = a->dense + (size_t)p * a->ncls;
			if (p != 0)
				memcpy(row, a->dense + (size_t)a->node[p].fail * a->ncls,
				       a->ncls * sizeof(*row));
			for (uint32_t ch = c0; ch < c0 + nc; ch++)
				row[a->node[ch].label] = ch;
		}
	}
	for (size_t k = 0; k < (size_t)a->ndense * a->ncls; k++)
		a->dense[k] = ac_encode(a, a->dense[k]);

	a->depth = calloc(nnodes, sizeof(*a->depth));
	if (!a->depth)
		goto out;
	for (uint32_t p = 0; p < nnodes; p++)
		for (uint32_t ch = a->node[p].child; ch < a->node[p].child + a->node[p].nchild; ch++)
			a->depth[ch] = a->depth[p] + 1;
	size_t minlen = SIZE_MAX;
	for (size_t i = 0; i < d->nneedles; i++)
		if (d->needles[i].len < minlen)
			minlen = d->needles[i].len;
	if (d->nneedles && minlen >= 4) {
		a->grams = calloc(AC_GRAM_BITS / 64, sizeof(*a->grams));
		if (!a->grams)
			goto out;
		a->step = (uint32_t)(minlen - 3);
		for (size_t i = 0; i < d->nneedles; i++) {
			const uint8_t *nb = d->pool + d->needles[i].off;
			for (size_t o = 0; o < a->step; o++) {
				uint32_t h = gram_hash(nb + o);
				a->grams[h >> 6] |= UINT64_C(1) << (h & 63);
			}
		}
	}
	*out = steal_pointer(&a);
	r = 0;
out:
	ac_tmp_free(&t);
	return r;
}

/* ---- scanning for secrets ---- */

struct ac_match {
	size_t start; /* SIZE_MAX: none */
	int32_t needle;
};

/* The state after state t on class c, when t is not a plain dense row:
 * it has AC_HIT or AC_SPARSE set. */
static uint32_t ac_step_slow(const struct ac *a, uint32_t t, unsigned c)
{
	t &= ~AC_HIT;
	if (!(t & AC_SPARSE))
		return a->dense[t + c];
	for (uint32_t s = t & AC_VALUE;; s = a->node[s].fail) {
		if (s < a->ndense)
			return a->dense[(size_t)s * a->ncls + c];
		uint32_t x = ac_child(a, s, c);
		if (x)
			return ac_encode(a, x);
	}
}

static inline uint32_t ac_step(const struct ac *a, uint32_t t, unsigned c)
{
	return t < AC_SPARSE ? a->dense[t + c] : ac_step_slow(a, t, c);
}

/*
 * The needle occurrence that starts first, among those starting before
 * limit; at the same start the one that ends first. A node's hit is the
 * longest needle ending there, which is the one starting first.
 * A match ending at i starts at i + 1 - maxlen or later: once that passes
 * the best start, the scan stops.
 */
/* The automaton from byte i in state t, with m the best match so far
 * (starting at best, or nothing before limit): it runs until no needle
 * starting earlier than the best can still end. */
static struct ac_match ac_run(const struct ac *a, const uint8_t *buf, size_t len, size_t i, uint32_t t,
			      struct ac_match m, size_t best)
{
	size_t end = len;

	if (best < SIZE_MAX - a->maxlen && best + a->maxlen - 1 < end)
		end = best + a->maxlen - 1;
	for (; i < end; i++) {
		t = ac_step(a, t, a->cls[buf[i]]);
		if (!(t & AC_HIT))
			continue;
		int32_t h = a->node[ac_decode(a, t)].hit;
		size_t st = i + 1 - a->nlen[h];
		if (st < best) {
			best = st;
			m.start = st;
			m.needle = h;
			if (best + a->maxlen - 1 < end)
				end = best + a->maxlen - 1;
		}
	}
	return m;
}

static struct ac_match ac_scan(const struct ac *a, const uint8_t *buf, size_t len, size_t limit)
{
	return ac_run(a, buf, len, 0, 0, (struct ac_match){ SIZE_MAX, -1 }, limit);
}

/*
 * The same answer as ac_scan, reading most of buf only through the
 * filter. A needle occurrence at s is at least step + 3 bytes long, so
 * the probe at the multiple of step within [s, s + step) reads 4 of its
 * bytes from offsets 0 .. step-1, whose bit is set: a probe whose bit is
 * clear rules out every start it covers, (q - step, q]. After a set bit
 * the automaton runs from the first start the probe covers (or goes on
 * from where it stopped) until its state holds no partial match starting
 * at or before q: what it leaves is either ruled out or in its state. It
 * reads each byte at most once, so the scan stays linear whatever the
 * input, and with a clear bitmap it reads one byte in step.
 */
static struct ac_match ac_scan_sampled(const struct ac *a, const uint8_t *buf, size_t len, size_t limit)
{
	struct ac_match m = { SIZE_MAX, -1 };
	const size_t k = a->step;
	size_t best = limit;
	size_t i = 0;   /* the next byte the automaton reads */
	uint32_t t = 0; /* its state before that byte */

	if (!k)
		return ac_scan(a, buf, len, limit);
	for (size_t q = 0; q + 4 <= len; q += k) {
		size_t first = q >= k - 1 ? q - (k - 1) : 0;
		if (first >= best)
			break;
		if (!gram_set(a->grams, gram_hash(buf + q)))
			continue;
		if (first > i) {
			/* What lay between was ruled out by clear bits. */
			i = first;
			t = 0;
		}
		while (i < len) {
			t = ac_step(a, t, a->cls[buf[i++]]);
			if (t & AC_HIT) {
				int32_t h = a->node[ac_decode(a, t)].hit;
				size_t st = i - a->nlen[h];
				if (st < best) {
					best = st;
					m.start = st;
					m.needle = h;
				}
			}
			if (i - a->depth[ac_decode(a, t)] > q)
				break;
		}
		if (m.needle >= 0)
			break;
	}
	if (m.needle < 0)
		return m;
	/* A needle starting before the one found ends within maxlen of its
	 * start; every such start is in the state or was ruled out. */
	return ac_run(a, buf, len, i, t, m, best);
}

static inline bool is_escape(const uint8_t *buf, size_t len, size_t i)
{
	return buf[i] == '%' && len - i > 2 && hex_digit_value((unsigned char)buf[i + 1]) >= 0 && hex_digit_value((unsigned char)buf[i + 2]) >= 0;
}

/* The byte of the percent-decoded view at buf[*i], advancing *i. */
static inline uint8_t pct_next(const uint8_t *buf, size_t len, size_t *i)
{
	uint8_t c = buf[*i];
	if (is_escape(buf, len, *i)) {
		c = (uint8_t)(hex_digit_value((unsigned char)buf[*i + 1]) << 4 | hex_digit_value((unsigned char)buf[*i + 2]));
		*i += 3;
		return c;
	}
	*i += 1;
	return c;
}

/*
 * Like ac_scan over the percent-decoded view of buf[ws..we) ("%41" reads
 * as 'A'; '+' stays '+', the form needles cover it). ws must not be inside
 * an escape. Decoding keeps order, so the first match in the view is the
 * first in buf; its start is mapped back with a second walk. A decoded
 * offset never exceeds the raw one, so stopping on decoded offsets is
 * conservative.
 */
static struct ac_match ac_scan_pct_window(const struct ac *a, const uint8_t *buf, size_t len,
					  size_t ws, size_t we, size_t limit)
{
	struct ac_match m = { SIZE_MAX, -1 };
	size_t dbest = SIZE_MAX;
	uint32_t t = 0;

	for (size_t i = ws, di = 0; i < we; di++) {
		if (di + 1 >= a->maxlen &&
		    (di + 1 - a->maxlen >= dbest || ws + di + 1 - a->maxlen >= limit))
			break;
		t = ac_step(a, t, a->cls[pct_next(buf, len, &i)]);
		if (!(t & AC_HIT))
			continue;
		int32_t h = a->node[ac_decode(a, t)].hit;
		size_t st = di + 1 - a->nlen[h];
		if (st < dbest) {
			dbest = st;
			m.needle = h;
		}
	}
	if (m.needle < 0)
		return m;
	size_t i = ws;
	for (size_t di = 0; di < dbest; di++)
		(void)pct_next(buf, len, &i);
	if (i >= limit)
		return (struct ac_match){ SIZE_MAX, -1 };
	m.start = i;
	return m;
}

/*
 * The first match, starting before limit, in the percent-decoded view that
 * the raw scan could not see: one that contains an escape. Such a match
 * spans at most 3 * maxlen raw bytes, so only windows of that reach
 * around escapes are decoded; a body with a few escapes costs little more
 * than the raw scan. Each escape's window holds every match containing it.
 * Windows may overlap (by less than their length: the scan stays linear)
 * and start in order; a match reported before limit contains an escape
 * (the raw scan has set limit at or before any other), which lies before
 * the next window's escapes, so the first window with a match has the
 * first match.
 */
static struct ac_match ac_scan_pct(const struct ac *a, const uint8_t *buf, size_t len,
				   size_t limit)
{
	const size_t reach = 3 * a->maxlen + 3;
	size_t p = 0;

	while (p < len) {
		const uint8_t *q = memchr(buf + p, '%', len - p);
		if (!q)
			break;
		size_t e = (size_t)(q - buf);
		if (!is_escape(buf, len, e)) {
			p = e + 1;
			continue;
		}
		size_t ws = e > reach ? e - reach : 0, we = e + 3;
		/* A '%' is never inside an escape: step back out of one. */
		for (size_t k = 1; k <= 2 && ws >= k; k++)
			if (is_escape(buf, len, ws - k))
				ws -= k;
		/* Take in every escape within reach of the window's end. */
		for (p = we; p < len && p < we + reach;) {
			q = memchr(buf + p, '%', (we + reach < len ? we + reach : len) - p);
			if (!q)
				break;
			p = (size_t)(q - buf);
			if (is_escape(buf, len, p)) {
				we = p + 3;
				p += 3;
			} else {
				p++;
			}
		}
		we = we + reach < len ? we + reach : len;
		if (ws >= limit)
			break;
		struct ac_match m = ac_scan_pct_window(a, buf, len, ws, we, limit);
		if (m.needle >= 0)
			return m;
		p = we;
	}
	return (struct ac_match){ SIZE_MAX, -1 };
}

/* ---- built-in credential formats ---- */

enum pat {
	PAT_AWS,
	PAT_GITHUB,
	PAT_GITLAB,
	PAT_SLACK,
	PAT_STRIPE,
	PAT_GOOGLE,
	PAT_OPENAI,
	PAT_ANTHROPIC,
	PAT_PEM,
	PAT_JWT,
	PAT_NPM,
	PAT_PYPI,
	PAT_COUNT,
};

const char *const dlp_patterns[][2] = {
	[PAT_AWS] = { "aws-access-key-id",
		      "AWS access key id: AKIA, ASIA, AGPA, AIDA, AROA, ANPA, ANVA or APKA "
		      "and 16 characters of A-Z2-7" },
	[PAT_GITHUB] = { "github-token",
			 "GitHub token: ghp_, gho_, ghu_, ghs_ or ghr_ and 36 alphanumerics; "
			 "github_pat_, 22 alphanumerics, _ and 59 alphanumerics" },
	[PAT_GITLAB] = { "gitlab-token",
			 "GitLab personal access token: glpat- and 20 of A-Za-z0-9_-" },
	[PAT_SLACK] = { "slack-token",
			"Slack token: xoxa-, xoxb-, xoxp-, xoxr- or xoxs- and at least 10 of "
			"A-Za-z0-9-" },
	[PAT_STRIPE] = { "stripe-secret-key",
			 "Stripe live secret or restricted key: sk_live_ or rk_live_ and at "
			 "least 24 alphanumerics" },
	[PAT_GOOGLE] = { "google-api-key", "Google API key: AIza and 35 of A-Za-z0-9_-" },
	[PAT_OPENAI] = { "openai-api-key",
			 "OpenAI API key: sk- (also sk-proj-) and at least 40 of A-Za-z0-9_-, "
			 "not sk-ant-" },
	[PAT_ANTHROPIC] = { "anthropic-api-key",
			    "Anthropic API key: sk-ant- and at least 80 of A-Za-z0-9_-" },
	[PAT_PEM] = { "private-key-pem",
		      "PEM private key header: -----BEGIN, optional words such as RSA, EC, "
		      "OPENSSH or ENCRYPTED, then PRIVATE KEY-----" },
	[PAT_JWT] = { "jwt",
		      "JSON Web Token: header and payload both starting with eyJ, three "
		      "base64url parts separated by dots" },
	[PAT_NPM] = { "npm-token", "npm access token: npm_ and 36 alphanumerics" },
	[PAT_PYPI] = { "pypi-token",
		       "PyPI API token: pypi-AgEIcHlwaS5vcmc and at least 50 base64url "
		       "characters" },
	[PAT_COUNT] = { NULL, NULL },
};

static inline bool is_alnum(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static inline bool is_b64url(uint8_t c)
{
	return is_alnum(c) || c == '-' || c == '_';
}

static inline bool is_alnum_dash(uint8_t c)
{
	return is_alnum(c) || c == '-';
}

static inline bool is_b32_upper(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7');
}

static inline bool is_upper_digit(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Length of the run of bytes satisfying pred at p, counting at most max. */
static inline size_t run(const uint8_t *p, size_t n, bool (*pred)(uint8_t), size_t max)
{
	size_t i = 0;
	if (n > max)
		n = max;
	while (i < n && pred(p[i]))
		i++;
	return i;
}

static inline bool has(const uint8_t *p, size_t n, const char *lit, size_t litlen)
{
	return n >= litlen && memcmp(p, lit, litlen) == 0;
}

#define HAS(p, n, lit) has((p), (n), (lit), sizeof(lit) - 1)

/*
 * A token starts where the byte before it cannot belong to the same word:
 * "XAKIA..." is part of something longer. Escapes count as separators, so
 * the token in a JSON string after "\n" or "\u0022", or in a URL after
 * "%22", is still seen.
 */
static bool at_boundary(const uint8_t *b, size_t i)
{
	if (i == 0 || !is_alnum(b[i - 1]))
		return true;
	if (i >= 2 && b[i - 2] == '\\')
		return true;
	if (i >= 3 && b[i - 3] == '%' && hex_digit_value((unsigned char)b[i - 2]) >= 0 && hex_digit_value((unsigned char)b[i - 1]) >= 0)
		return true;
	if (i >= 6 && b[i - 6] == '\\' && b[i - 5] == 'u' && hex_digit_value((unsigned char)b[i - 4]) >= 0 &&
	    hex_digit_value((unsigned char)b[i - 3]) >= 0 && hex_digit_value((unsigned char)b[i - 2]) >= 0 && hex_digit_value((unsigned char)b[i - 1]) >= 0)
		return true;
	return false;
}

/* A word separator inside a PEM header: space, or space as a form or URL
 * encoding writes it. Returns its length, 0 if none. */
static size_t pem_sep(const uint8_t *p, size_t n)
{
	if (n >= 1 && (p[0] == ' ' || p[0] == '+'))
		return 1;
	if (HAS(p, n, "%20"))
		return 3;
	return 0;
}

static bool match_pem(const uint8_t *p, size_t n)
{
	size_t q = sizeof("-----BEGIN") - 1;

	if (!HAS(p, n, "-----BEGIN"))
		return false;
	/* At most four words before PRIVATE KEY: the scan stays bounded. */
	for (int words = 0; words <= 4; words++) {
		size_t s = pem_sep(p + q, n - q);
		if (!s)
			return false;
		q += s;
		if (HAS(p + q, n - q, "PRIVATE")) {
			size_t k = q + sizeof("PRIVATE") - 1;
			size_t s2 = pem_sep(p + k, n - k);
			if (s2 && HAS(p + k + s2, n - k - s2, "KEY")) {
				k += s2 + sizeof("KEY") - 1;
				if (HAS(p + k, n - k, "-----"))
					return true;
				size_t s3 = pem_sep(p + k, n - k);
				if (s3 && HAS(p + k + s3, n - k - s3, "BLOCK-----"))
					return true;
			}
		}
		size_t w = run(p + q, n - q, is_upper_digit, 24);
		if (w == 0)
			return false;
		q += w;
	}
	return false;
}

/*
 * header.payload.signature, header and payload "eyJ" (base64 of '{"') and
 * at least 10 more characters each, the signature at least 10. The header
 * run is unbounded; every later start inside the same run would see the
 * same run end and a shorter header, so after a check fails no start
 * before *skip is tried again. Each run is read at most twice.
 */
static bool match_jwt(const uint8_t *b, size_t len, size_t i, size_t *skip)
{
	size_t e1, q, e2;

	if (i < *skip || !HAS(b + i, len - i, "eyJ"))
		return false;
	e1 = i + run(b + i, len - i, is_b64url, SIZE_MAX);
	*skip = e1;
	if (e1 - i < 13 || e1 >= len || b[e1] != '.')
		return false;
	q = e1 + 1;
	if (!HAS(b + q, len - q, "eyJ"))
		return false;
	e2 = q + run(b + q, len - q, is_b64url, SIZE_MAX);
	if (e2 - q < 13 || e2 >= len || b[e2] != '.')
		return false;
	return run(b + e2 + 1, len - e2 - 1, is_b64url, 10) == 10;
}

/* The pattern that starts at b[i], or -1. */
static int match_at(const uint8_t *b, size_t len, size_t i, size_t *jwt_skip)
{
	const uint8_t *p = b + i;
	size_t n = len - i;

	if (p[0] == '-')
		return match_pem(p, n) ? PAT_PEM : -1;
	if (!at_boundary(b, i))
		return -1;
	switch (p[0]) {
	case 'A':
		if (n >= 20 && (HAS(p, n, "AKIA") || HAS(p, n, "ASIA") || HAS(p, n, "AGPA") ||
				HAS(p, n, "AIDA") || HAS(p, n, "AROA") || HAS(p, n, "ANPA") ||
				HAS(p, n, "ANVA") || HAS(p, n, "APKA")) &&
		    run(p + 4, n - 4, is_b32_upper, 16) == 16)
			return PAT_AWS;
		if (HAS(p, n, "AIza") && run(p + 4, n - 4, is_b64url, 35) == 35)
			return PAT_GOOGLE;
		return -1;
	case 'g':
		if (n >= 4 && p[1] == 'h' && p[2] && strchr("pousr", p[2]) && p[3] == '_' &&
		    run(p + 4, n - 4, is_alnum, 36) == 36)
			return PAT_GITHUB;
		if (HAS(p, n, "github_pat_") && run(p + 11, n - 11, is_alnum, 22) == 22 &&
		    n > 33 && p[33] == '_' && run(p + 34, n - 34, is_alnum, 59) == 59)
			return PAT_GITHUB;
		if (HAS(p, n, "glpat-") && run(p + 6, n - 6, is_b64url, 20) == 20)
			return PAT_GITLAB;
		return -1;
	case 'x':
		if (n >= 5 && HAS(p, n, "xox") && p[3] && strchr("abprs", p[3]) && p[4] == '-' &&
		    run(p + 5, n - 5, is_alnum_dash, 10) == 10)
			return PAT_SLACK;
		return -1;
	case 's':
		if (HAS(p, n, "sk_live_") && run(p + 8, n - 8, is_alnum, 24) == 24)
			return PAT_STRIPE;
		if (HAS(p, n, "sk-ant-"))
			return run(p + 7, n - 7, is_b64url, 80) == 80 ? PAT_ANTHROPIC : -1;
		if (HAS(p, n, "sk-") && run(p + 3, n - 3, is_b64url, 40) == 40)
			return PAT_OPENAI;
		return -1;
	case 'r':
		if (HAS(p, n, "rk_live_") && run(p + 8, n - 8, is_alnum, 24) == 24)
			return PAT_STRIPE;
		return -1;
	case 'e':
		return match_jwt(b, len, i, jwt_skip) ? PAT_JWT : -1;
	case 'n':
		if (HAS(p, n, "npm_") && run(p + 4, n - 4, is_alnum, 36) == 36)
			return PAT_NPM;
		return -1;
	case 'p':
		if (HAS(p, n, "pypi-AgEIcHlwaS5vcmc") && run(p + 20, n - 20, is_b64url, 50) == 50)
			return PAT_PYPI;
		return -1;
	default:
		return -1;
	}
}

/*
 * A cheap filter in front of match_at: the first two bytes of every
 * prefix. A pair can start a pattern when pat_first[b0] & pat_second[b1].
 * WARNING: a prefix added to match_at must be added here, or it is never
 * tried.
 */
enum {
	F_A = 1 << 0, /* AKIA ASIA AGPA AIDA AROA ANPA ANVA APKA AIza */
	F_G = 1 << 1, /* ghp_ .. ghr_ github_pat_ glpat- */
	F_X = 1 << 2, /* xox */
	F_S = 1 << 3, /* sk_live_ sk- */
	F_R = 1 << 4, /* rk_live_ */
	F_D = 1 << 5, /* ----- */
	F_E = 1 << 6, /* eyJ */
	F_N = 1 << 7, /* npm_ */
	F_P = 1 << 8, /* pypi- */
};

static const uint16_t pat_first[256] = {
	['A'] = F_A, ['g'] = F_G, ['x'] = F_X, ['s'] = F_S, ['r'] = F_R,
	['-'] = F_D, ['e'] = F_E, ['n'] = F_N, ['p'] = F_P,
};

static const uint16_t pat_second[256] = {
	['K'] = F_A, ['S'] = F_A, ['G'] = F_A, ['I'] = F_A, ['R'] = F_A, ['N'] = F_A,
	['P'] = F_A, ['h'] = F_G, ['i'] = F_G, ['l'] = F_G, ['o'] = F_X, ['k'] = F_S | F_R,
	['-'] = F_D, ['y'] = F_E | F_P, ['p'] = F_N,
};

/* The first pattern by start position; *start is set when one is found.
 * Each position costs a bounded amount of work but JWT runs, see
 * match_jwt. */
static int pattern_scan(const uint8_t *b, size_t len, size_t *start)
{
	size_t jwt_skip = 0;

	for (size_t i = 0; i + 1 < len; i++) {
		if (!(pat_first[b[i]] & pat_second[b[i + 1]]))
			continue;
		int p = match_at(b, len, i, &jwt_skip);
		if (p >= 0) {
			*start = i;
			return p;
		}
	}
	return -1;
}

static bool scan(const struct dlp *d, const uint8_t *buf, size_t len, bool patterns, char *what,
		 size_t what_len)
{
	size_t pstart = SIZE_MAX;
	int pat;
	struct ac_match m = { SIZE_MAX, -1 };
	bool decoded = false;

	if (what && what_len)
		what[0] = '\0';
	if (!buf || len == 0)
		return false;
	pat = patterns ? pattern_scan(buf, len, &pstart) : -1;
	/* At the same start a secret wins: its name says more. */
	if (d && d->ac && d->ac->maxlen) {
		size_t limit = pat >= 0 ? pstart + 1 : SIZE_MAX;
		m = ac_scan_sampled(d->ac, buf, len, limit);
		if (memchr(buf, '%', len)) {
			struct ac_match u = ac_scan_pct(d->ac, buf, len,
							m.needle >= 0 ? m.start : limit);
			if (u.needle >= 0) {
				m = u;
				decoded = true;
			}
		}
	}
	if (m.needle >= 0) {
		const struct needle *nd = &d->needles[m.needle];
		if (what && what_len)
			snprintf(what, what_len, "secret %s (%s)", d->names[nd->secret],
				 enc_label((enum enc)nd->enc, decoded));
		return true;
	}
	if (pat >= 0) {
		if (what && what_len)
			snprintf(what, what_len, "pattern %s", dlp_patterns[pat][0]);
		return true;
	}
	return false;
}

bool dlp_scan(const struct dlp *d, const uint8_t *buf, size_t len, char *what, size_t what_len)
{
	return scan(d, buf, len, true, what, what_len);
}

bool dlp_scan_secrets(const struct dlp *d, const uint8_t *buf, size_t len, char *what, size_t what_len)
{
	return scan(d, buf, len, false, what, what_len);
}

/* ---- streams ---- */

/*
 * A stream is scanned as a sliding window: every feed scans the bytes it
 * holds back from before and the new ones together. A needle occurrence
 * spans at most 3 * maxlen raw bytes (every byte percent-escaped), so one
 * that ends in the new bytes starts within the held-back window: it is
 * found whole however the stream was cut (a secret split over two reads,
 * two chunks, a chunk-size line), and none of its bytes has been released
 * yet. Cost: the window is scanned again on every feed; memory: the
 * window and one feed.
 */
struct dlp_stream {
	const struct dlp *d;
	size_t window;
	uint8_t *buf;    /* held-back bytes, then the last feed */
	size_t len, cap;
	size_t high;     /* bytes of buf ever written: what is wiped */
	size_t released; /* buf[0..released) was handed out by the last call */
};

size_t dlp_window(const struct dlp *d)
{
	return d && d->ac && d->ac->maxlen ? 3 * d->ac->maxlen + 3 : 0;
}

int dlp_stream_new(const struct dlp *d, struct dlp_stream **out)
{
	struct dlp_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->d = d;
	s->window = dlp_window(d);
	*out = s;
	return 0;
}

void dlp_stream_free(struct dlp_stream *s)
{
	if (!s)
		return;
	/* The window may hold the start of a secret that never completed,
	 * or after a hit the secret itself, also where compaction moved it
	 * from. */
	if (s->buf)
		explicit_bzero(s->buf, s->high);
	free(s->buf);
	free(s);
}

static void stream_compact(struct dlp_stream *s)
{
	if (s->released) {
		memmove(s->buf, s->buf + s->released, s->len - s->released);
		s->len -= s->released;
		s->released = 0;
	}
}

int dlp_stream_feed(struct dlp_stream *s, const uint8_t *p, size_t n, const uint8_t **out, size_t *out_len,
		    char *what, size_t what_len)
{
	*out = NULL;
	*out_len = 0;
	stream_compact(s);
	if (s->len + n > s->cap) {
		size_t cap = s->len + n > 2 * s->cap ? s->len + n : 2 * s->cap;
		uint8_t *b = malloc(cap);
		if (!b)
			return -ENOMEM;
		if (s->len)
			memcpy(b, s->buf, s->len);
		wipe_free(s->buf, s->high);
		s->buf = b;
		s->cap = cap;
		s->high = s->len;
	}
	if (n)
		memcpy(s->buf + s->len, p, n);
	s->len += n;
	if (s->len > s->high)
		s->high = s->len;
	if (dlp_scan_secrets(s->d, s->buf, s->len, what, what_len))
		return 1;
	s->released = s->len > s->window ? s->len - s->window : 0;
	*out = s->buf;
	*out_len = s->released;
	return 0;
}

void dlp_stream_end(struct dlp_stream *s, const uint8_t **out, size_t *out_len)
{
	stream_compact(s);
	s->released = s->len;
	*out = s->buf;
	*out_len = s->len;
}

/* ---- registering secrets ---- */

/* The variants of one secret, deduplicated, in a scratch buffer that is
 * wiped when released. */
struct variants {
	uint8_t *buf;
	size_t cap, used, budget;
	size_t high; /* bytes of buf ever written: what is wiped */
	size_t n;
	struct {
		size_t off, len;
		enum enc enc;
	} v[DLP_MAX_VARIANTS];
	bool too_big;
};

/* Room for one more variant of at most max bytes at buf + used. */
static uint8_t *variant_room(struct variants *vs, size_t max)
{
	if (vs->cap - vs->used < max) {
		vs->too_big = true;
		return NULL;
	}
	if (vs->used + max > vs->high)
		vs->high = vs->used + max;
	return vs->buf + vs->used;
}

/* Keep the len bytes at buf + off, which is vs->used (just written at
 * variant_room()) or inside what is kept already, unless an earlier
 * variant is the same string. */
static void variant_commit_at(struct variants *vs, size_t off, size_t len, enum enc enc)
{
	const uint8_t *s = vs->buf + off;

	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i].len == len && memcmp(vs->buf + vs->v[i].off, s, len) == 0)
			return;
	if (vs->n == DLP_MAX_VARIANTS || off + len > vs->budget) {
		vs->too_big = true;
		return;
	}
	vs->v[vs->n].off = off;
	vs->v[vs->n].len = len;
	vs->v[vs->n].enc = enc;
	vs->n++;
	if (off + len > vs->used)
		vs->used = off + len;
}

static void variant_commit(struct variants *vs, size_t len, enum enc enc)
{
	variant_commit_at(vs, vs->used, len, enc);
}

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/*
 * Base64 of the secret preceded by k filler bytes, inside a larger stream.
 * Output character j carries bits 6j .. 6j+5 of the stream; it depends on
 * the secret alone when those bits lie within the secret's 8k .. 8(k+len)
 * bits. Those characters are the stable core, the same whatever surrounds
 * the secret. When the secret ends the stream, the characters after the
 * core (zero bits filled in) and the '=' padding are fixed too: that is
 * the tail variant, with and without padding. Filler bytes are zero; the
 * core does not depend on them.
 */
static void add_base64(struct variants *vs, const uint8_t *v, size_t len, unsigned k,
		       const char *alpha, enum enc enc)
{
	size_t total = k + len, groups = (total + 2) / 3;
	size_t first = (8 * k + 5) / 6, core_end = 8 * total / 6;
	uint8_t *o = variant_room(vs, 4 * groups);
	size_t w = 0;

	if (!o || core_end - first < DLP_MIN_B64_CORE)
		return;
	for (size_t g = 0; g < groups; g++) {
		uint32_t x = 0;
		size_t have = 0;
		for (size_t j = 0; j < 3; j++) {
			size_t idx = 3 * g + j;
			uint8_t byte = 0;
			if (idx < total) {
				byte = idx < k ? 0 : v[idx - k];
				have++;
			}
			x = x << 8 | byte;
		}
		/* have bytes fill have + 1 characters; '=' pads the rest. */
		for (size_t j = 0; j < 4; j++) {
			uint8_t ch = j <= have ? (uint8_t)alpha[(x >> (18 - 6 * j)) & 63] : '=';
			if (4 * g + j >= first)
				o[w++] = ch;
		}
	}
	size_t unpadded = w;
	while (unpadded > 0 && o[unpadded - 1] == '=')
		unpadded--;
	/* The three are prefixes of one string: they share its bytes. */
	size_t off = vs->used;
	variant_commit_at(vs, off, core_end - first, enc);
	variant_commit_at(vs, off, unpadded, enc);
	variant_commit_at(vs, off, w, enc);
}

static void add_hex(struct variants *vs, const uint8_t *v, size_t len, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	uint8_t *o = variant_room(vs, 2 * len);

	if (!o)
		return;
	for (size_t i = 0; i < len; i++) {
		o[2 * i] = (uint8_t)digits[v[i] >> 4];
		o[2 * i + 1] = (uint8_t)digits[v[i] & 15];
	}
	variant_commit(vs, 2 * len, ENC_HEX);
}

/* What encodeURIComponent leaves alone. */
static bool uri_component_safe(uint8_t c)
{
	return is_alnum(c) || (c && strchr("-_.!~*'()", c));
}

enum pct_mode {
	PCT_ALL,       /* every byte %xx */
	PCT_COMPONENT, /* encodeURIComponent */
	PCT_FORM,      /* encodeURIComponent, space as '+' */
	PCT_PLUS,      /* only space, as '+' */
};

static void add_pct(struct variants *vs, const uint8_t *v, size_t len, enum pct_mode mode,
		    bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	uint8_t *o = variant_room(vs, 3 * len);
	size_t w = 0;

	if (!o)
		return;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = v[i];
		bool keep;
		switch (mode) {
		case PCT_ALL:
			keep = false;
			break;
		case PCT_COMPONENT:
			keep = uri_component_safe(c);
			break;
		case PCT_FORM:
			keep = uri_component_safe(c);
			if (c == ' ') {
				o[w++] = '+';
				continue;
			}
			break;
		case PCT_PLUS:
			o[w++] = c == ' ' ? '+' : c;
			continue;
		}
		if (keep) {
			o[w++] = c;
		} else {
			o[w++] = '%';
			o[w++] = (uint8_t)digits[c >> 4];
			o[w++] = (uint8_t)digits[c & 15];
		}
	}
	variant_commit(vs, w, mode == PCT_FORM || mode == PCT_PLUS ? ENC_FORM : ENC_URL);
}

/* The value backwards: a page that reverses what it is sent (or a script
 * behind an echo) must not hand it out that way either. */
static void add_reversed(struct variants *vs, const uint8_t *v, size_t len)
{
	uint8_t *o = variant_room(vs, len);

	if (!o)
		return;
	for (size_t i = 0; i < len; i++)
		o[i] = v[len - 1 - i];
	variant_commit(vs, len, ENC_REVERSED);
}

/* The value as a JSON string writes it (an echo of headers as JSON):
 * '"' and '\' escaped, and '/' too when slash is set. Control bytes cannot
 * occur: a secret travels in a header. */
static void add_json(struct variants *vs, const uint8_t *v, size_t len, bool slash)
{
	uint8_t *o = variant_room(vs, 2 * len);
	size_t w = 0;

	if (!o)
		return;
	for (size_t i = 0; i < len; i++) {
		if (v[i] == '"' || v[i] == '\\' || (slash && v[i] == '/'))
			o[w++] = '\\';
		o[w++] = v[i];
	}
	variant_commit(vs, w, ENC_JSON);
}

/* The value as an HTML page writes it (a debug or error page): & < > "
 * and ' as entities, the apostrophe in its two common spellings. */
static void add_html(struct variants *vs, const uint8_t *v, size_t len, const char *apos)
{
	uint8_t *o = variant_room(vs, 6 * len);
	size_t w = 0;

	if (!o)
		return;
	for (size_t i = 0; i < len; i++) {
		const char *ent = v[i] == '&' ? "&amp;" : v[i] == '<' ? "&lt;" : v[i] == '>' ? "&gt;" :
				  v[i] == '"' ? "&quot;" : v[i] == '\'' ? apos : NULL;
		if (ent) {
			memcpy(o + w, ent, strlen(ent));
			w += strlen(ent);
		} else {
			o[w++] = v[i];
		}
	}
	variant_commit(vs, w, ENC_HTML);
}

/* All variants of value, in the order that names a hit when two of them
 * are the same string: raw first. */
static void make_variants(struct variants *vs, const uint8_t *v, size_t len)
{
	uint8_t *o = variant_room(vs, len);
	if (o) {
		memcpy(o, v, len);
		variant_commit(vs, len, ENC_RAW);
	}
	for (unsigned k = 0; k < 3; k++)
		add_base64(vs, v, len, k, b64_std, ENC_BASE64);
	for (unsigned k = 0; k < 3; k++)
		add_base64(vs, v, len, k, b64_url, ENC_BASE64URL);
	add_hex(vs, v, len, false);
	add_hex(vs, v, len, true);
	add_pct(vs, v, len, PCT_ALL, true);
	add_pct(vs, v, len, PCT_ALL, false);
	add_pct(vs, v, len, PCT_COMPONENT, true);
	add_pct(vs, v, len, PCT_COMPONENT, false);
	if (memchr(v, ' ', len)) {
		add_pct(vs, v, len, PCT_PLUS, false);
		add_pct(vs, v, len, PCT_FORM, true);
		add_pct(vs, v, len, PCT_FORM, false);
	}
	add_reversed(vs, v, len);
	add_json(vs, v, len, false);
	add_json(vs, v, len, true);
	add_html(vs, v, len, "&#x27;");
	add_html(vs, v, len, "&#39;");
}

/* A name goes into records and messages: printable ASCII, no quotes,
 * backslashes or spaces, bounded. */
static bool name_ok(const char *name, size_t *lenp)
{
	size_t n = 0;

	for (; name[n]; n++) {
		unsigned char c = (unsigned char)name[n];
		if (n >= DLP_MAX_NAME || c <= 0x20 || c >= 0x7f || strchr("\"'\\`", c))
			return false;
	}
	*lenp = n;
	return n > 0;
}

/* Add the variants as the needles of a new secret and rebuild the
 * automaton. On failure d is unchanged. */
static int install(struct dlp *d, const char *name, const struct variants *vs)
{
	struct dlp next = *d;
	int r = -ENOMEM;

	next.pool_len = d->pool_len + vs->used;
	next.nneedles = d->nneedles + vs->n;
	next.pool = malloc(next.pool_len);
	next.needles = calloc(next.nneedles, sizeof(*next.needles));
	next.ac = NULL;
	char *name_copy = strdup(name);
	if (!next.pool || !next.needles || !name_copy)
		goto fail;
	if (d->pool_len)
		memcpy(next.pool, d->pool, d->pool_len);
	memcpy(next.pool + d->pool_len, vs->buf, vs->used);
	if (d->nneedles)
		memcpy(next.needles, d->needles, d->nneedles * sizeof(*next.needles));
	for (size_t i = 0; i < vs->n; i++) {
		struct needle *nd = &next.needles[d->nneedles + i];
		nd->off = (uint32_t)(d->pool_len + vs->v[i].off);
		nd->len = (uint32_t)vs->v[i].len;
		nd->secret = (uint16_t)d->nsecrets;
		nd->enc = (uint8_t)vs->v[i].enc;
	}
	r = ac_build(&next, &next.ac);
	if (r < 0)
		goto fail;

	wipe_free(d->pool, d->pool_len);
	wipe_free(d->needles, d->nneedles * sizeof(*d->needles));
	ac_free(d->ac);
	d->pool = next.pool;
	d->pool_len = next.pool_len;
	d->needles = next.needles;
	d->nneedles = next.nneedles;
	d->ac = next.ac;
	d->names[d->nsecrets++] = name_copy;
	return 0;

fail:
	free(name_copy);
	wipe_free(next.pool, next.pool_len);
	wipe_free(next.needles, next.nneedles * sizeof(*next.needles));
	return r;
}

int dlp_add_secret(struct dlp *d, const char *name, const uint8_t *value, size_t len)
{
	struct variants vs = { 0 };
	size_t namelen;
	int r;

	if (!d || !name || !value || len < DLP_MIN_SECRET || !name_ok(name, &namelen))
		return -EINVAL;
	if (d->nsecrets >= DLP_MAX_SECRETS)
		return -E2BIG;
	/* The value, its hex and its percent-encoding alone take 6 bytes a
	 * byte, however many variants coincide: refuse before allocating for
	 * a value that cannot fit. */
	vs.budget = DLP_MAX_NEEDLE_BYTES - d->pool_len;
	if (len > vs.budget / 6)
		return -E2BIG;
	/* Room for every variant of make_variants, all distinct: the value,
	 * six base64 tails of at most (4 * len + 16) / 3, two hex of 2 * len,
	 * four percent-encodings and two form encodings of at most 3 * len,
	 * the value with '+' for space, the value reversed, two JSON
	 * escapings of at most 2 * len and two HTML escapings of at most
	 * 6 * len. */
	vs.cap = 52 * len + 64;
	vs.buf = malloc(vs.cap);
	if (!vs.buf)
		return -ENOMEM;
	make_variants(&vs, value, len);
	if (vs.too_big) {
		r = -E2BIG;
		goto out;
	}
	/* The name is shown on every hit: it must not carry the value. */
	for (size_t i = 0; i < vs.n; i++) {
		if (memmem(name, namelen, vs.buf + vs.v[i].off, vs.v[i].len)) {
			r = -EINVAL;
			goto out;
		}
	}

	r = install(d, name, &vs);
out:
	wipe_free(vs.buf, vs.high);
	return r;
}

struct dlp *dlp_new(void)
{
	return calloc(1, sizeof(struct dlp));
}

void dlp_free(struct dlp *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nsecrets; i++)
		free(d->names[i]);
	wipe_free(d->pool, d->pool_len);
	wipe_free(d->needles, d->nneedles * sizeof(*d->needles));
	ac_free(d->ac);
	free(d);
}
