/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_DLP_INTERNAL_H
#define AIRLOCK_NET_DLP_INTERNAL_H

/*
 * What the leak scanner's two files share: the scanner and its automaton
 * (dlp.c scans with them, dlp_secrets.c builds them from the registered
 * secrets), and the automaton's small steps, inline because a scan takes
 * them on every byte.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/dlp.h"

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

static inline void wipe_free(void *p, size_t n)
{
	if (p) {
		explicit_bzero(p, n);
		free(p);
	}
}

/* The child of s labelled c, or 0. */
static inline uint32_t ac_child(const struct ac *a, uint32_t s, unsigned c)
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

static inline uint32_t ac_encode(const struct ac *a, uint32_t n)
{
	return (n < a->ndense ? n * a->ncls : AC_SPARSE | n) | (a->node[n].hit >= 0 ? AC_HIT : 0);
}

static inline uint32_t ac_decode(const struct ac *a, uint32_t state)
{
	state &= ~AC_HIT;
	return state & AC_SPARSE ? state & AC_VALUE : state / a->ncls;
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

static inline bool is_alnum(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

#endif
