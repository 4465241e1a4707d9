/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DNS for the transparent network mode: the query parser, the answer
 * builder and the map of synthetic addresses.
 *
 * The parser sees whatever the agent sends to port 53, which is a classic
 * exfiltration channel (data encoded in labels) and a classic parser attack
 * surface (compression loops, length bytes that run past the packet).
 * It therefore accepts only what a stub resolver sends for a lookup: one
 * question whose name is plain labels of letters, digits, '-' and '_', and
 * at most one OPT record. There is no compression to follow, so no loop can
 * exist, and every name that passes can be logged and compared as it is.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "net/dns.h"
#include "util/hostname.h"

#define LABEL_MAX HOSTNAME_LABEL_MAX_LEN
#define OPT_FIXED_LEN 10 /* type, class (UDP size), ttl, rdlength */
#define ANSWER_A_LEN 16  /* pointer, type, class, ttl, rdlength, address */
#define QUESTION_MIN_LEN 5                  /* root name, qtype, qclass */
#define QUESTION_MAX_LEN (DNS_NAME_MAX + 2 + 4) /* 253 chars = 255 wire bytes */

_Static_assert(DNS_NAME_MAX == HOSTNAME_MAX_LEN, "one limit for names everywhere");

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Letters, digits, '-' and '_' (service labels such as _dmarc, _443._tcp).
 * Everything else, in particular '.', NUL, spaces, controls and bytes over
 * 0x7f, would make a label that prints, compares or resolves differently
 * from how it arrived. */
static inline bool label_byte_ok(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

static inline char lower(uint8_t c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/* The additional record of a query with ARCOUNT 1, starting at *off: an
 * OPT (RFC 6891) with the root name, whose options are well framed. */
static int parse_opt(const uint8_t *p, size_t n, size_t *off, struct dns_query *q)
{
	size_t o = *off, rdlen, end;

	if (o >= n)
		return -EINVAL;
	if (p[o] != 0)
		return -EPROTO; /* a named record: TSIG, SIG(0), or junk */
	o++;
	if (n - o < 2)
		return -EINVAL;
	if (rd16(p + o) != DNS_TYPE_OPT)
		return -EPROTO;
	if (n - o < OPT_FIXED_LEN)
		return -EINVAL;
	q->edns_size = rd16(p + o + 2);
	rdlen = rd16(p + o + 8);
	o += OPT_FIXED_LEN;
	if (rdlen > n - o)
		return -EINVAL;
	end = o + rdlen;
	while (o < end) {
		size_t optlen;

		if (end - o < 4)
			return -EINVAL;
		optlen = rd16(p + o + 2);
		o += 4;
		if (optlen > end - o)
			return -EINVAL;
		o += optlen;
	}
	q->edns = true;
	*off = o;
	return 0;
}

static int parse_query(const uint8_t *p, size_t n, struct dns_query *q)
{
	uint16_t qdcount, ancount, nscount, arcount;
	size_t off = DNS_HEADER_LEN, len = 0;

	if (n < DNS_HEADER_LEN || n > DNS_MSG_MAX)
		return -EINVAL;
	q->id = rd16(p);
	q->flags = rd16(p + 2);
	qdcount = rd16(p + 4);
	ancount = rd16(p + 6);
	nscount = rd16(p + 8);
	arcount = rd16(p + 10);
	/* Answering a response would let two resolvers ping-pong through us. */
	if (q->flags & DNS_FLAG_QR)
		return -EPROTO;
	if (DNS_OPCODE(q->flags) != 0)
		return -EPROTO; /* IQUERY, STATUS, NOTIFY, UPDATE */
	if (qdcount != 1 || ancount != 0 || nscount != 0 || arcount > 1)
		return -EPROTO;

	/* Labels only. A query has nothing before its question to point at,
	 * so a compression pointer there (or an extended label type, 0x40 and
	 * 0x80) is never legitimate: refusing it (len > 63) removes pointer
	 * loops and out-of-packet references altogether. */
	for (;;) {
		uint8_t l;

		if (off >= n)
			return -EINVAL;
		l = p[off++];
		if (l == 0)
			break;
		if (l > LABEL_MAX || l > n - off)
			return -EINVAL;
		if (len + (len ? 1 : 0) + l > DNS_NAME_MAX)
			return -EINVAL;
		if (len)
			q->name[len++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = p[off + i];
			if (!label_byte_ok(c))
				return -EINVAL;
			q->name[len++] = lower(c);
		}
		off += l;
	}
	q->name[len] = '\0';
	if (n - off < 4)
		return -EINVAL;
	q->qtype = rd16(p + off);
	q->qclass = rd16(p + off + 2);
	off += 4;
	q->question_end = off;

	if (arcount == 1) {
		int r = parse_opt(p, n, &off, q);
		if (r < 0)
			return r;
	}
	/* Bytes after the message are a side channel nobody needs. */
	if (off != n)
		return -EINVAL;
	return 0;
}

int dns_parse_query(const uint8_t *p, size_t n, struct dns_query *q)
{
	int r;

	memset(q, 0, sizeof(*q));
	r = parse_query(p, n, q);
	if (r < 0)
		memset(q, 0, sizeof(*q));
	return r;
}

const char *dns_type_name(uint16_t qtype)
{
	switch (qtype) {
	case DNS_TYPE_A:
		return "A";
	case DNS_TYPE_NS:
		return "NS";
	case DNS_TYPE_CNAME:
		return "CNAME";
	case DNS_TYPE_SOA:
		return "SOA";
	case DNS_TYPE_PTR:
		return "PTR";
	case DNS_TYPE_MX:
		return "MX";
	case DNS_TYPE_TXT:
		return "TXT";
	case DNS_TYPE_AAAA:
		return "AAAA";
	case DNS_TYPE_SRV:
		return "SRV";
	case DNS_TYPE_OPT:
		return "OPT";
	case DNS_TYPE_SVCB:
		return "SVCB";
	case DNS_TYPE_HTTPS:
		return "HTTPS";
	case DNS_TYPE_AXFR:
		return "AXFR";
	case DNS_TYPE_ANY:
		return "ANY";
	default:
		return "UNKNOWN";
	}
}

ssize_t dns_build_answer(const uint8_t *req, const struct dns_query *q, int rcode, const uint8_t *a4,
			 uint32_t ttl, uint8_t *out, size_t cap)
{
	size_t qlen, len;
	bool answer;
	uint16_t flags;

	if (rcode < 0 || rcode > 15)
		return -EINVAL;
	if (q->question_end < DNS_HEADER_LEN + QUESTION_MIN_LEN ||
	    q->question_end > DNS_HEADER_LEN + QUESTION_MAX_LEN)
		return -EINVAL;
	qlen = q->question_end - DNS_HEADER_LEN;
	/* An address only where it answers the question: never under an
	 * error rcode, nor as an IN A record for an AAAA, TXT or CHAOS one. */
	answer = a4 && rcode == DNS_NOERROR && q->qtype == DNS_TYPE_A && q->qclass == DNS_CLASS_IN;
	len = DNS_HEADER_LEN + qlen + (answer ? ANSWER_A_LEN : 0);
	if (cap < len)
		return -ENOSPC;

	flags = (uint16_t)(DNS_FLAG_QR | DNS_FLAG_AA | (q->flags & DNS_FLAG_RD) | DNS_FLAG_RA |
			   (unsigned)rcode);
	wr16(out, q->id);
	wr16(out + 2, flags);
	wr16(out + 4, 1);
	wr16(out + 6, answer ? 1 : 0);
	wr16(out + 8, 0);
	wr16(out + 10, 0);
	memcpy(out + DNS_HEADER_LEN, req + DNS_HEADER_LEN, qlen);
	if (answer) {
		uint8_t *a = out + DNS_HEADER_LEN + qlen;
		wr16(a, 0xc000 | DNS_HEADER_LEN); /* the question's name */
		wr16(a + 2, DNS_TYPE_A);
		wr16(a + 4, DNS_CLASS_IN);
		wr32(a + 6, ttl);
		wr16(a + 10, 4);
		memcpy(a + 12, a4, 4);
	}
	return (ssize_t)len;
}

/* ---- synthetic addresses ---- */

#define SYNTH_BASE 0xc6120000u /* 198.18.0.0 */
#define SYNTH_RESERVED 2u      /* 198.18.0.0 and 198.18.0.1 */

_Static_assert(DNS_SYNTH_MAX_ENTRIES + SYNTH_RESERVED == 1u << 17, "a /15 holds 2^17 addresses");

struct dns_synth {
	pthread_mutex_t lock;
	uint64_t key[2];  /* SipHash key: names are chosen by the agent */
	size_t max;       /* capacity of names */
	size_t count;     /* names[0..count) are assigned */
	char **names;     /* index i is the name of SYNTH_BASE + 2 + i */
	uint32_t *slots;  /* open addressing, index + 1, 0 when empty */
	size_t mask;      /* slots has mask + 1 entries, at least 2 * max */
};

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND(v0, v1, v2, v3)                   \
	do {                                       \
		v0 += v1;                          \
		v1 = rotl64(v1, 13);               \
		v1 ^= v0;                          \
		v0 = rotl64(v0, 32);               \
		v2 += v3;                          \
		v3 = rotl64(v3, 16);               \
		v3 ^= v2;                          \
		v0 += v3;                          \
		v3 = rotl64(v3, 21);               \
		v3 ^= v0;                          \
		v2 += v1;                          \
		v1 = rotl64(v1, 17);               \
		v1 ^= v2;                          \
		v2 = rotl64(v2, 32);               \
	} while (0)

/* SipHash-2-4 (Aumasson and Bernstein, 2012). A keyed hash rather than a
 * plain one because the agent picks the names: with a known hash it could
 * send names that all land in one probe chain and make every assignment
 * walk the whole table. */
static uint64_t siphash24(const uint64_t key[2], const uint8_t *m, size_t len)
{
	uint64_t v0 = key[0] ^ 0x736f6d6570736575ull;
	uint64_t v1 = key[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = key[0] ^ 0x6c7967656e657261ull;
	uint64_t v3 = key[1] ^ 0x7465646279746573ull;
	uint64_t b = (uint64_t)len << 56;
	size_t i = 0;

	for (; len - i >= 8; i += 8) {
		uint64_t w = 0;
		for (unsigned k = 0; k < 8; k++)
			w |= (uint64_t)m[i + k] << (8 * k);
		v3 ^= w;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= w;
	}
	for (unsigned k = 0; i + k < len; k++)
		b |= (uint64_t)m[i + k] << (8 * k);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (unsigned k = 0; k < 4; k++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* A name as dns_parse_query produces it. */
static bool synth_name_ok(const char *s, size_t len)
{
	size_t label = 0;

	if (len == 0 || len > DNS_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)s[i];
		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!label_byte_ok(c) || (c >= 'A' && c <= 'Z'))
			return false;
		if (++label > LABEL_MAX)
			return false;
	}
	return label > 0;
}

struct dns_synth *dns_synth_new(size_t max_entries)
{
	struct dns_synth *s;
	size_t table = 16;
	ssize_t r;
	int e;

	if (max_entries == 0 || max_entries > DNS_SYNTH_MAX_ENTRIES) {
		errno = EINVAL;
		return NULL;
	}
	while (table < 2 * max_entries)
		table <<= 1;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->max = max_entries;
	s->mask = table - 1;
	s->names = calloc(max_entries, sizeof(*s->names));
	s->slots = calloc(table, sizeof(*s->slots));
	if (!s->names || !s->slots) {
		e = ENOMEM;
		goto fail;
	}
	do
		r = getrandom(s->key, sizeof(s->key), 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(s->key)) {
		e = r < 0 ? errno : EIO;
		goto fail;
	}
	e = pthread_mutex_init(&s->lock, NULL);
	if (e != 0)
		goto fail;
	return s;

fail:
	free(s->names);
	free(s->slots);
	free(s);
	errno = e;
	return NULL;
}

void dns_synth_free(struct dns_synth *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	for (size_t i = 0; i < s->count; i++)
		free(s->names[i]);
	free(s->names);
	free(s->slots);
	free(s);
}

static void synth_addr(size_t index, uint8_t out[4])
{
	wr32(out, SYNTH_BASE + SYNTH_RESERVED + (uint32_t)index);
}

int dns_synth_lookup_name(struct dns_synth *s, const char *name, uint8_t out[4])
{
	size_t len = strnlen(name, DNS_NAME_MAX + 1), i;
	char *copy;

	if (!synth_name_ok(name, len))
		return -EINVAL;
	i = (size_t)siphash24(s->key, (const uint8_t *)name, len) & s->mask;

	pthread_mutex_lock(&s->lock);
	/* WARNING: terminates only because the table is never more than half
	 * full (mask + 1 >= 2 * max, and count <= max). */
	for (; s->slots[i] != 0; i = (i + 1) & s->mask) {
		size_t idx = s->slots[i] - 1;
		if (strcmp(s->names[idx], name) == 0) {
			pthread_mutex_unlock(&s->lock);
			synth_addr(idx, out);
			return 0;
		}
	}
	if (s->count >= s->max) {
		pthread_mutex_unlock(&s->lock);
		return -ENOSPC;
	}
	copy = malloc(len + 1);
	if (!copy) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	memcpy(copy, name, len + 1);
	s->names[s->count] = copy;
	s->slots[i] = (uint32_t)s->count + 1;
	synth_addr(s->count, out);
	s->count++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

bool dns_synth_lookup_addr(struct dns_synth *s, const uint8_t a[4], char *name, size_t len)
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	size_t idx, nl;
	bool ok = false;

	if (len > 0)
		name[0] = '\0';
	if (!dns_synth_is_synthetic(a) || v - SYNTH_BASE < SYNTH_RESERVED)
		return false;
	idx = v - SYNTH_BASE - SYNTH_RESERVED;

	pthread_mutex_lock(&s->lock);
	if (idx < s->count) {
		nl = strlen(s->names[idx]);
		if (nl < len) {
			memcpy(name, s->names[idx], nl + 1);
			ok = true;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

bool dns_synth_is_synthetic(const uint8_t a[4])
{
	return a[0] == 198 && (a[1] & 0xfe) == 18;
}
