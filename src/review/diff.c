/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A unified line diff for `airlock review`: Myers' O(ND) shortest edit
 * script (greedy forward search, keeping each round's furthest-reaching
 * paths to walk back from), hunks with three lines of context.
 *
 * Bounded: a change of more than DIFF_MAX_D edits (the trace is O(D^2)
 * memory) is shown as the whole old file removed and the whole new one
 * added, which is still a correct diff.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review/review.h"

#define DIFF_MAX_D 2000
#define CONTEXT 3

struct line {
	const char *p;
	size_t len; /* without the newline */
	bool nl;    /* ends with a newline */
	uint64_t h;
};

static struct line *split(const char *s, size_t len, size_t *n)
{
	size_t cap = 1;
	for (size_t i = 0; i < len; i++)
		cap += s[i] == '\n';
	struct line *v = calloc(cap, sizeof(*v));
	if (!v)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < len;) {
		const char *e = memchr(s + i, '\n', len - i);
		size_t l = e ? (size_t)(e - (s + i)) : len - i;
		uint64_t h = 1469598103934665603ULL;
		for (size_t j = 0; j < l; j++)
			h = (h ^ (uint8_t)s[i + j]) * 1099511628211ULL;
		v[k++] = (struct line){ s + i, l, e != NULL, h };
		i += l + (e != NULL);
	}
	*n = k;
	return v;
}

static bool eq(const struct line *a, const struct line *b)
{
	return a->h == b->h && a->len == b->len && a->nl == b->nl && memcmp(a->p, b->p, a->len) == 0;
}

/* op: ' ' keep, '-' delete a line of a, '+' insert a line of b */
struct edit {
	char op;
	size_t ai, bi; /* the line of a (' ', '-') or b ('+') */
};

/* The edit script from a to b in order, or NULL (ENOMEM, or over the
 * bound with *over set). */
static struct edit *myers(const struct line *a, size_t n, const struct line *b, size_t m, size_t *ne, bool *over)
{
	*over = false;
	long max = (long)(n + m);
	long dmax = max < DIFF_MAX_D ? max : DIFF_MAX_D;
	/* trace[d] holds V[-d..d] after round d. */
	long **trace = calloc((size_t)dmax + 1, sizeof(long *));
	long *v = calloc((size_t)(2 * dmax + 3), sizeof(long));
	struct edit *out = NULL;
	long D = -1;
	if (!trace || !v)
		goto done;
	long off = dmax + 1;
	for (long d = 0; d <= dmax && D < 0; d++) {
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			long y = x - k;
			while (x < (long)n && y < (long)m && eq(&a[x], &b[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= (long)n && y >= (long)m) {
				D = d;
				break;
			}
		}
		if (!(trace[d] = malloc((size_t)(2 * d + 1) * sizeof(long))))
			goto done;
		for (long k = -d; k <= d; k++)
			trace[d][k + d] = v[off + k];
	}
	if (D < 0) {
		*over = true;
		goto done;
	}
	size_t cap = n + m + 1, k_out = 0;
	out = malloc(cap * sizeof(*out));
	if (!out)
		goto done;
	long x = (long)n, y = (long)m;
	for (long d = D; d > 0; d--) {
		long k = x - y;
		const long *pv = trace[d - 1];
		long pk = (k == -d || (k != d && pv[k - 1 + (d - 1)] < pv[k + 1 + (d - 1)])) ? k + 1 : k - 1;
		long px = pv[pk + (d - 1)], py = px - pk;
		while (x > px && y > py) {
			x--, y--;
			out[k_out++] = (struct edit){ ' ', (size_t)x, (size_t)y };
		}
		if (pk == k + 1)
			out[k_out++] = (struct edit){ '+', (size_t)x, (size_t)(y - 1) };
		else
			out[k_out++] = (struct edit){ '-', (size_t)(x - 1), (size_t)y };
		x = px, y = py;
	}
	while (x > 0 && y > 0) {
		x--, y--;
		out[k_out++] = (struct edit){ ' ', (size_t)x, (size_t)y };
	}
	for (size_t i = 0; i < k_out / 2; i++) {
		struct edit t = out[i];
		out[i] = out[k_out - 1 - i];
		out[k_out - 1 - i] = t;
	}
	*ne = k_out;
done:
	if (trace)
		for (long d = 0; d <= dmax; d++)
			free(trace[d]);
	free(trace);
	free(v);
	return out;
}

/* Over the bound: everything of a goes, everything of b comes. */
static struct edit *replace_all(size_t n, size_t m, size_t *ne)
{
	struct edit *out = malloc((n + m + 1) * sizeof(*out));
	if (!out)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		out[k++] = (struct edit){ '-', i, 0 };
	for (size_t j = 0; j < m; j++)
		out[k++] = (struct edit){ '+', n, j };
	*ne = k;
	return out;
}

long review_diff_distance(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = 0, m = 0, ne = 0;
	struct line *la = split(a, alen, &n), *lb = split(b, blen, &m);
	bool over = false;
	struct edit *e = la && lb ? myers(la, n, lb, m, &ne, &over) : NULL;
	long d = -1;
	if (e) {
		d = 0;
		for (size_t i = 0; i < ne; i++)
			d += e[i].op != ' ';
	}
	free(e);
	free(la);
	free(lb);
	return d;
}

static void put_line(FILE *f, char op, const struct line *l)
{
	fputc(op, f);
	for (size_t i = 0; i < l->len; i++) {
		unsigned char c = (unsigned char)l->p[i];
		/* A terminal escape in a file under review must not rewrite
		 * what the reviewer sees. */
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('\n', f);
	if (!l->nl)
		fputs("\\ No newline at end of file\n", f);
}

static void put_name(FILE *f, const char *prefix, const char *side, const char *name)
{
	fputs(prefix, f);
	if (!name) {
		fputs("/dev/null\n", f);
		return;
	}
	fputs(side, f);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	fputc('\n', f);
}

int review_diff(FILE *f, const char *name, const char *a, size_t alen, const char *b, size_t blen)
{
	if ((a && memchr(a, '\0', alen)) || (b && memchr(b, '\0', blen))) {
		fputs("Binary files differ\n", f);
		return 0;
	}
	size_t n = 0, m = 0, ne = 0;
	struct line *la = split(a ? a : "", a ? alen : 0, &n);
	struct line *lb = split(b ? b : "", b ? blen : 0, &m);
	bool over = false;
	struct edit *e = la && lb ? myers(la, n, lb, m, &ne, &over) : NULL;
	if (!e && over)
		e = replace_all(n, m, &ne);
	if (!e) {
		free(la);
		free(lb);
		return -ENOMEM;
	}
	put_name(f, "--- ", "a/", a ? name : NULL);
	put_name(f, "+++ ", "b/", b ? name : NULL);
	for (size_t i = 0; i < ne;) {
		/* The next change, and the hunk around it: changes closer than
		 * twice the context share one. */
		while (i < ne && e[i].op == ' ')
			i++;
		if (i == ne)
			break;
		size_t start = i >= CONTEXT ? i - CONTEXT : 0, end = i;
		for (;;) {
			while (end < ne && e[end].op != ' ')
				end++;
			size_t gap = end;
			while (gap < ne && e[gap].op == ' ' && gap - end < 2 * CONTEXT + 1)
				gap++;
			if (gap < ne && e[gap].op != ' ' && gap - end <= 2 * CONTEXT) {
				end = gap;
				continue;
			}
			end = end + CONTEXT < ne ? end + CONTEXT : ne;
			break;
		}
		size_t as = 0, al = 0, bs = 0, bl = 0;
		bool first_a = true, first_b = true;
		for (size_t j = start; j < end; j++) {
			if (e[j].op != '+') {
				if (first_a)
					as = e[j].ai, first_a = false;
				al++;
			}
			if (e[j].op != '-') {
				if (first_b)
					bs = e[j].bi, first_b = false;
				bl++;
			}
		}
		/* An empty side names the line before it (0 at the top). */
		if (first_a)
			as = e[start].op == '+' ? e[start].ai : 0;
		if (first_b)
			bs = e[start].op == '-' ? e[start].bi : 0;
		fprintf(f, "@@ -%zu,%zu +%zu,%zu @@\n", al ? as + 1 : as, al, bl ? bs + 1 : bs, bl);
		for (size_t j = start; j < end; j++)
			put_line(f, e[j].op, e[j].op == '+' ? &lb[e[j].bi] : &la[e[j].ai]);
		i = end;
	}
	free(e);
	free(la);
	free(lb);
	return 0;
}
