/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Registering the leak scanner's secrets: each value with the encoded
 * variants an agent could send it in (base64, hex, percent-encoded,
 * reversed, JSON and HTML escaped), and the Aho-Corasick automaton over
 * all of them that dlp.c scans with. Everything that held secret bytes is
 * wiped before it is freed.
 */
#include "net/dlp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/cleanup.h"
#include "util/hex.h"

/* ---- memory holding secret material ---- */

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

/* What the sampled raw scan (ac_scan_sampled) needs beside the automaton:
 * each node's depth, and the bitmap of the needles' leading 4-grams.
 * Returns 0 or -ENOMEM. */
static int ac_build_filter(struct ac *a, const struct dlp *d, uint32_t nnodes)
{
	a->depth = calloc(nnodes, sizeof(*a->depth));
	if (!a->depth)
		return -ENOMEM;
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
			return -ENOMEM;
		a->step = (uint32_t)(minlen - 3);
		for (size_t i = 0; i < d->nneedles; i++) {
			const uint8_t *nb = d->pool + d->needles[i].off;
			for (size_t o = 0; o < a->step; o++) {
				uint32_t h = gram_hash(nb + o);
				a->grams[h >> 6] |= UINT64_C(1) << (h & 63);
			}
		}
	}
	return 0;
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

	if (ac_build_filter(a, d, nnodes) < 0)
		goto out;
	*out = steal_pointer(&a);
	r = 0;
out:
	ac_tmp_free(&t);
	return r;
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

