/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the DNS module: queries a stub resolver sends parse (built
 * here byte by byte); every malformed or unusual message is refused with
 * the documented code while its legitimate neighbour is accepted; answers
 * carry the right header, question and address, read back the way a
 * resolver reads them, and never overrun the buffer; the synthetic map is
 * stable, reversible, bounded and consistent under concurrent assignment.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/dns.h"

/* ---- a packet builder ---- */

struct pkt {
	uint8_t b[1024];
	size_t n;
};

static void put8(struct pkt *p, unsigned v)
{
	assert_true(p->n < sizeof(p->b));
	p->b[p->n++] = (uint8_t)v;
}

static void put16(struct pkt *p, unsigned v)
{
	put8(p, v >> 8);
	put8(p, v & 0xff);
}

static void put32(struct pkt *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p, v & 0xffff);
}

static void put_bytes(struct pkt *p, const void *d, size_t len)
{
	assert_true(p->n + len <= sizeof(p->b));
	memcpy(p->b + p->n, d, len);
	p->n += len;
}

static void header(struct pkt *p, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns,
		   unsigned ar)
{
	p->n = 0;
	put16(p, id);
	put16(p, flags);
	put16(p, qd);
	put16(p, an);
	put16(p, ns);
	put16(p, ar);
}

/* A dotted name as labels ("" is the root); no validation, so tests can
 * write anything the wire can carry. */
static void put_name(struct pkt *p, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);
		put8(p, (unsigned)l);
		put_bytes(p, name, l);
		name += l;
		if (*name == '.')
			name++;
	}
	put8(p, 0);
}

static void put_label(struct pkt *p, const void *d, size_t len)
{
	put8(p, (unsigned)len);
	put_bytes(p, d, len);
}

/* An OPT record: root name, type 41, class = UDP size, ttl 0 (DO clear). */
static void put_opt(struct pkt *p, unsigned udp_size, const uint8_t *rdata, size_t rdlen)
{
	put8(p, 0);
	put16(p, DNS_TYPE_OPT);
	put16(p, udp_size);
	put32(p, 0);
	put16(p, (unsigned)rdlen);
	if (rdlen)
		put_bytes(p, rdata, rdlen);
}

/* The usual stub query: id 0x1234, RD, one question. */
static void query(struct pkt *p, const char *name, unsigned qtype)
{
	header(p, 0x1234, DNS_FLAG_RD, 1, 0, 0, 0);
	put_name(p, name);
	put16(p, qtype);
	put16(p, DNS_CLASS_IN);
}

static int parse(const struct pkt *p, struct dns_query *q)
{
	/* An exact-size heap copy, so an over-read trips ASan in CI. */
	uint8_t *copy = malloc(p->n ? p->n : 1);
	int r;

	assert_non_null(copy);
	memcpy(copy, p->b, p->n);
	memset(q, 0x5a, sizeof(*q));
	r = dns_parse_query(copy, p->n, q);
	free(copy);
	return r;
}

static void assert_zeroed(const struct dns_query *q)
{
	static const struct dns_query zero;
	assert_memory_equal(q, &zero, sizeof(zero));
}

static void assert_refused(const struct pkt *p, int expect)
{
	struct dns_query q;
	assert_int_equal(parse(p, &q), expect);
	assert_zeroed(&q);
}

/* ---- well-formed queries ---- */

static void test_a_query(void **state)
{
	struct pkt p;
	struct dns_query q;
	(void)state;

	query(&p, "example.com", DNS_TYPE_A);
	assert_int_equal(parse(&p, &q), 0);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.flags, DNS_FLAG_RD);
	assert_string_equal(q.name, "example.com");
	assert_int_equal(q.qtype, DNS_TYPE_A);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_int_equal(q.question_end, 12 + 13 + 4);
	assert_int_equal(q.question_end, p.n);
	assert_false(q.edns);
	assert_int_equal(q.edns_size, 0);
}

static void test_aaaa_query_edns(void **state)
{
	/* a DNS cookie option (code 10, 8-byte client cookie), as dig sends */
	static const uint8_t cookie[] = { 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct pkt p;
	struct dns_query q;
	size_t qend;
	(void)state;

	header(&p, 0xbeef, DNS_FLAG_RD | 0x0020 /* AD */, 1, 0, 0, 1);
	put_name(&p, "ipv6.example.org");
	put16(&p, DNS_TYPE_AAAA);
	put16(&p, DNS_CLASS_IN);
	qend = p.n;
	put_opt(&p, 4096, cookie, sizeof(cookie));
	assert_int_equal(parse(&p, &q), 0);
	assert_int_equal(q.id, 0xbeef);
	assert_string_equal(q.name, "ipv6.example.org");
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);
	assert_int_equal(q.question_end, qend);
	assert_true(q.edns);
	assert_int_equal(q.edns_size, 4096);

	/* no options at all, and a small size, are fine too */
	p.n = qend;
	put_opt(&p, 512, NULL, 0);
	assert_int_equal(parse(&p, &q), 0);
	assert_true(q.edns);
	assert_int_equal(q.edns_size, 512);
}

static void test_txt_query(void **state)
{
	struct pkt p;
	struct dns_query q;
	(void)state;

	query(&p, "_dmarc.mail-1.example.net", DNS_TYPE_TXT);
	assert_int_equal(parse(&p, &q), 0);
	assert_string_equal(q.name, "_dmarc.mail-1.example.net");
	assert_int_equal(q.qtype, DNS_TYPE_TXT);
}

static void test_mixed_case_lowered(void **state)
{
	struct pkt p;
	struct dns_query q;
	(void)state;

	/* DNS 0x20: resolvers randomise the case of the question */
	query(&p, "ExAmPlE.CoM", DNS_TYPE_A);
	assert_int_equal(parse(&p, &q), 0);
	assert_string_equal(q.name, "example.com");
	/* only letters change */
	query(&p, "A-Z_09.B", DNS_TYPE_A);
	assert_int_equal(parse(&p, &q), 0);
	assert_string_equal(q.name, "a-z_09.b");
}

static void test_root_and_trailing_dot(void **state)
{
	struct pkt p;
	struct dns_query q;
	(void)state;

	query(&p, "", DNS_TYPE_NS);
	assert_int_equal(p.n, 12 + 1 + 4);
	assert_int_equal(parse(&p, &q), 0);
	assert_string_equal(q.name, "");
	assert_int_equal(q.qtype, DNS_TYPE_NS);
	assert_int_equal(q.question_end, 17);

	/* the wire form of "com." is the same as "com": no trailing dot */
	query(&p, "com", DNS_TYPE_SOA);
	assert_int_equal(parse(&p, &q), 0);
	assert_string_equal(q.name, "com");
}

static void test_label_and_name_limits(void **state)
{
	char l63[64], l64[65];
	struct pkt p;
	struct dns_query q;
	(void)state;

	memset(l63, 'a', 63);
	l63[63] = '\0';
	memset(l64, 'b', 64);
	l64[64] = '\0';

	header(&p, 1, 0, 1, 0, 0, 0);
	put_label(&p, l63, 63);
	put_name(&p, "com");
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_int_equal(parse(&p, &q), 0);
	assert_int_equal(strlen(q.name), 63 + 4);
	assert_memory_equal(q.name, l63, 63);

	header(&p, 1, 0, 1, 0, 0, 0);
	put_label(&p, l64, 64);
	put_name(&p, "com");
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);

	/* 63+1+63+1+63+1+61 = 253 characters: the longest name */
	header(&p, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 3; i++)
		put_label(&p, l63, 63);
	put_label(&p, l63, 61);
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_int_equal(parse(&p, &q), 0);
	assert_int_equal(strlen(q.name), 253);
	assert_int_equal(q.question_end, 12 + 255 + 4);

	/* one more character: 254 */
	header(&p, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 3; i++)
		put_label(&p, l63, 63);
	put_label(&p, l63, 62);
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);

	/* many short labels: 127 x "a" = 253 characters, 128 = 255 */
	header(&p, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 127; i++)
		put_label(&p, "a", 1);
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_int_equal(parse(&p, &q), 0);
	assert_int_equal(strlen(q.name), 253);

	header(&p, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 128; i++)
		put_label(&p, "a", 1);
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);
}

/* ---- malformed ---- */

static void test_truncated(void **state)
{
	static const uint8_t ecs[] = { 0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2 };
	struct pkt p, cut;
	struct dns_query q;
	(void)state;

	/* every prefix of a valid query, header included, is refused */
	header(&p, 7, DNS_FLAG_RD, 1, 0, 0, 1);
	put_name(&p, "www.example.com");
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	put_opt(&p, 1232, ecs, sizeof(ecs));
	assert_int_equal(parse(&p, &q), 0);
	for (size_t n = 0; n < p.n; n++) {
		cut = p;
		cut.n = n;
		assert_refused(&cut, -EINVAL);
	}

	/* a label whose length runs past the end */
	header(&p, 7, 0, 1, 0, 0, 0);
	put8(&p, 10);
	put_bytes(&p, "abcde", 5);
	assert_refused(&p, -EINVAL);
	/* ... and the same length byte with enough bytes behind it */
	header(&p, 7, 0, 1, 0, 0, 0);
	put_label(&p, "abcdefghij", 10);
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_int_equal(parse(&p, &q), 0);

	/* an OPT whose rdlength runs past the end */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put8(&p, 0);
	put16(&p, DNS_TYPE_OPT);
	put16(&p, 4096);
	put32(&p, 0);
	put16(&p, 12);
	put_bytes(&p, "\0\012\0\010abcd", 8);
	assert_refused(&p, -EINVAL);

	/* an option whose length runs past the OPT's rdata */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put_opt(&p, 4096, (const uint8_t *)"\0\012\0\011abcdefgh", 12);
	assert_refused(&p, -EINVAL);
	/* ... with as many bytes after the record as it overruns: the end
	 * matches only if the option framing is ignored */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put_opt(&p, 4096, (const uint8_t *)"\0\012\0\011abcdefgh", 12);
	put8(&p, 'i');
	assert_refused(&p, -EINVAL);
	/* the neighbour: the option's real length */
	p.b[p.n - 1 - 12 + 3] = 8;
	p.n--;
	assert_int_equal(parse(&p, &q), 0);
	assert_true(q.edns);
	/* an option header cut short inside the rdata */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put_opt(&p, 4096, (const uint8_t *)"\0\012\0", 3);
	assert_refused(&p, -EINVAL);
}

static void test_compression_refused(void **state)
{
	struct pkt p;
	(void)state;

	/* the question is a pointer to offset 12: itself, a loop */
	header(&p, 1, 0, 1, 0, 0, 0);
	put16(&p, 0xc00c);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);

	/* a label, then a pointer back to it: www.www.www... */
	header(&p, 1, 0, 1, 0, 0, 0);
	put_label(&p, "www", 3);
	put16(&p, 0xc00c);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);

	/* a pointer into the header, and one past the end */
	header(&p, 1, 0, 1, 0, 0, 0);
	put16(&p, 0xc002);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);
	header(&p, 1, 0, 1, 0, 0, 0);
	put16(&p, 0xffff);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);

	/* the extended label types 0x40 and 0x80 */
	header(&p, 1, 0, 1, 0, 0, 0);
	put8(&p, 0x41);
	put_bytes(&p, "a", 1);
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);
	p.b[12] = 0x81;
	assert_refused(&p, -EINVAL);
	/* the neighbour: length 1 */
	p.b[12] = 0x01;
	struct dns_query q;
	assert_int_equal(parse(&p, &q), 0);
	assert_string_equal(q.name, "a");
}

static void test_bad_label_bytes(void **state)
{
	static const uint8_t bad[] = { '.', '\0', 0x80, 0xff, ' ', '/', '*', '@', '\\', '\n', 0x7f, 0xc3,
				       '"', '%', '+', '=', ':', '`' };
	struct pkt p;
	struct dns_query q;
	uint8_t label[5];
	(void)state;

	for (size_t i = 0; i < sizeof(bad); i++) {
		/* in the middle, first and last position of a label */
		for (size_t at = 0; at < 5; at += 2) {
			memcpy(label, "ab-_9", 5);
			label[at] = bad[i];
			header(&p, 1, 0, 1, 0, 0, 0);
			put_label(&p, label, 5);
			put_name(&p, "example");
			put16(&p, DNS_TYPE_A);
			put16(&p, DNS_CLASS_IN);
			assert_refused(&p, -EINVAL);
			/* the neighbour: the same label with a good byte */
			label[at] = 'z';
			p.b[13 + at] = 'z';
			assert_int_equal(parse(&p, &q), 0);
		}
	}
	/* a label "a.b" must not read as two labels */
	header(&p, 1, 0, 1, 0, 0, 0);
	put_label(&p, "a.b", 3);
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_refused(&p, -EINVAL);
}

static void test_not_plain_query(void **state)
{
	struct pkt p;
	struct dns_query q;
	(void)state;

	/* the base case is accepted ... */
	query(&p, "example.com", DNS_TYPE_A);
	assert_int_equal(parse(&p, &q), 0);

	/* QR=1: a response */
	p.b[2] |= 0x80;
	assert_refused(&p, -EPROTO);
	/* opcode 2 (STATUS), 4 (NOTIFY), 5 (UPDATE), 1 (IQUERY) */
	for (unsigned op = 1; op < 16; op++) {
		query(&p, "example.com", DNS_TYPE_A);
		p.b[2] = (uint8_t)((p.b[2] & 0x87) | (op << 3));
		assert_refused(&p, -EPROTO);
	}
	/* QDCOUNT 0 and 2 (with two questions really there) */
	header(&p, 1, 0, 0, 0, 0, 0);
	assert_refused(&p, -EPROTO);
	header(&p, 1, 0, 2, 0, 0, 0);
	for (int i = 0; i < 2; i++) {
		put_name(&p, "example.com");
		put16(&p, DNS_TYPE_A);
		put16(&p, DNS_CLASS_IN);
	}
	assert_refused(&p, -EPROTO);
	/* ANCOUNT 1, NSCOUNT 1 */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[7] = 1;
	assert_refused(&p, -EPROTO);
	query(&p, "example.com", DNS_TYPE_A);
	p.b[9] = 1;
	assert_refused(&p, -EPROTO);
	/* ARCOUNT 2, with two OPT records present */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 2;
	put_opt(&p, 4096, NULL, 0);
	put_opt(&p, 4096, NULL, 0);
	assert_refused(&p, -EPROTO);
	/* an additional record that is not OPT: root name, type A */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put8(&p, 0);
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	put32(&p, 0);
	put16(&p, 4);
	put32(&p, 0x7f000001);
	assert_refused(&p, -EPROTO);
	/* ... a named record (TSIG-like) */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put_name(&p, "key.example");
	put16(&p, 250);
	put16(&p, 255);
	put32(&p, 0);
	put16(&p, 0);
	assert_refused(&p, -EPROTO);
	/* ... an OPT with a name */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put_name(&p, "x");
	put16(&p, DNS_TYPE_OPT);
	put16(&p, 4096);
	put32(&p, 0);
	put16(&p, 0);
	assert_refused(&p, -EPROTO);

	/* a response is refused as such even with a broken body */
	header(&p, 1, DNS_FLAG_QR, 1, 0, 0, 0);
	put8(&p, 0xc0);
	assert_refused(&p, -EPROTO);
}

static void test_trailing_garbage(void **state)
{
	struct pkt p;
	struct dns_query q;
	(void)state;

	query(&p, "example.com", DNS_TYPE_A);
	put8(&p, 0);
	assert_refused(&p, -EINVAL);

	/* after an OPT record */
	query(&p, "example.com", DNS_TYPE_A);
	p.b[11] = 1;
	put_opt(&p, 4096, NULL, 0);
	assert_int_equal(parse(&p, &q), 0);
	put_bytes(&p, "exfil", 5);
	assert_refused(&p, -EINVAL);

	/* a second record appended without counting it */
	query(&p, "example.com", DNS_TYPE_A);
	put_opt(&p, 4096, NULL, 0);
	assert_refused(&p, -EINVAL);
}

/* ---- answers ---- */

/* Read a response the way a resolver does; returns the answer count and
 * fills addr with the first A record's address. Follows one compression
 * pointer, which must lead to the question's name. */
static unsigned read_response(const uint8_t *r, size_t n, const struct pkt *req, uint16_t qtype,
			      uint8_t addr[4], uint32_t *ttl)
{
	size_t off = 12, qlen;
	unsigned an;

	assert_true(n >= 12);
	assert_memory_equal(r, req->b, 2);                        /* id */
	assert_int_equal(r[2] & 0x80, 0x80);                     /* QR */
	assert_int_equal(r[2] & 0x78, 0);                        /* opcode */
	assert_int_equal(r[2] & 0x04, 0x04);                     /* AA */
	assert_int_equal(r[2] & 0x02, 0);                        /* TC */
	assert_int_equal(r[2] & 0x01, req->b[2] & 0x01);         /* RD */
	assert_int_equal(r[3] & 0x80, 0x80);                     /* RA */
	assert_int_equal((r[4] << 8) | r[5], 1);                 /* QDCOUNT */
	an = (unsigned)(r[6] << 8 | r[7]);
	assert_int_equal((r[8] << 8) | r[9], 0);
	assert_int_equal((r[10] << 8) | r[11], 0);               /* no EDNS */

	/* the question: as sent, byte for byte */
	while (r[off] != 0)
		off += 1u + r[off];
	off += 5;
	qlen = off - 12;
	assert_true(off <= n);
	assert_memory_equal(r + 12, req->b + 12, qlen);

	for (unsigned i = 0; i < an; i++) {
		assert_true(n - off >= 12);
		assert_int_equal(r[off], 0xc0);
		assert_int_equal(r[off + 1], 12);
		assert_int_equal((r[off + 2] << 8) | r[off + 3], qtype);
		assert_int_equal((r[off + 4] << 8) | r[off + 5], DNS_CLASS_IN);
		*ttl = (uint32_t)r[off + 6] << 24 | (uint32_t)r[off + 7] << 16 |
		       (uint32_t)r[off + 8] << 8 | r[off + 9];
		assert_int_equal((r[off + 10] << 8) | r[off + 11], 4);
		off += 12;
		assert_true(n - off >= 4);
		memcpy(addr, r + off, 4);
		off += 4;
	}
	assert_int_equal(off, n); /* nothing after the records */
	return an;
}

static void test_answer_a(void **state)
{
	static const uint8_t a4[4] = { 198, 18, 0, 2 };
	static const uint8_t expect[] = {
		0x12, 0x34, 0x85, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,
		7, 'E', 'x', 'A', 'm', 'P', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1,
		0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 0, 2,
	};
	struct pkt p;
	struct dns_query q;
	uint8_t out[512], addr[4];
	uint32_t ttl = 0;
	ssize_t n;
	(void)state;

	query(&p, "ExAmPle.com", DNS_TYPE_A);
	assert_int_equal(parse(&p, &q), 0);
	n = dns_build_answer(p.b, &q, DNS_NOERROR, a4, 60, out, sizeof(out));
	assert_int_equal(n, sizeof(expect));
	assert_memory_equal(out, expect, sizeof(expect));
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_A, addr, &ttl), 1);
	assert_memory_equal(addr, a4, 4);
	assert_int_equal(ttl, 60);

	/* the answer is a response: our own parser refuses it as a query */
	assert_int_equal(dns_parse_query(out, (size_t)n, &q), -EPROTO);

	/* RD clear in the query: clear in the answer */
	header(&p, 0xffff, 0, 1, 0, 0, 0);
	put_name(&p, "a.b");
	put16(&p, DNS_TYPE_A);
	put16(&p, DNS_CLASS_IN);
	assert_int_equal(parse(&p, &q), 0);
	n = dns_build_answer(p.b, &q, DNS_NOERROR, a4, 0xffffffffu, out, sizeof(out));
	assert_true(n > 0);
	assert_int_equal(out[0], 0xff);
	assert_int_equal(out[1], 0xff);
	assert_int_equal(out[2], 0x84);
	assert_int_equal(out[3], 0x80);
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_A, addr, &ttl), 1);
	assert_int_equal(ttl, 0xffffffffu);
}

static void test_answer_no_record(void **state)
{
	static const uint8_t a4[4] = { 198, 18, 1, 1 };
	struct pkt p;
	struct dns_query q;
	uint8_t out[512], addr[4];
	uint32_t ttl;
	ssize_t n;
	(void)state;

	/* NXDOMAIN: the question is copied, no answer even with an address */
	query(&p, "Blocked.Example", DNS_TYPE_A);
	assert_int_equal(parse(&p, &q), 0);
	n = dns_build_answer(p.b, &q, DNS_NXDOMAIN, a4, 60, out, sizeof(out));
	assert_int_equal(n, p.n);
	assert_int_equal(out[3] & 0x0f, DNS_NXDOMAIN);
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_A, addr, &ttl), 0);
	n = dns_build_answer(p.b, &q, DNS_NXDOMAIN, NULL, 60, out, sizeof(out));
	assert_int_equal(n, p.n);
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_A, addr, &ttl), 0);

	/* SERVFAIL and REFUSED likewise */
	n = dns_build_answer(p.b, &q, DNS_SERVFAIL, NULL, 0, out, sizeof(out));
	assert_int_equal(out[3] & 0x0f, DNS_SERVFAIL);
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_A, addr, &ttl), 0);
	n = dns_build_answer(p.b, &q, DNS_REFUSED, NULL, 0, out, sizeof(out));
	assert_int_equal(out[3] & 0x0f, DNS_REFUSED);
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_A, addr, &ttl), 0);

	/* AAAA for an allowed name: NOERROR, no data; never an A record */
	query(&p, "ok.example", DNS_TYPE_AAAA);
	assert_int_equal(parse(&p, &q), 0);
	n = dns_build_answer(p.b, &q, DNS_NOERROR, a4, 60, out, sizeof(out));
	assert_int_equal(n, p.n);
	assert_int_equal(out[3] & 0x0f, DNS_NOERROR);
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_AAAA, addr, &ttl), 0);

	/* class CH, type A: no IN answer */
	header(&p, 9, DNS_FLAG_RD, 1, 0, 0, 0);
	put_name(&p, "version.bind");
	put16(&p, DNS_TYPE_A);
	put16(&p, 3);
	assert_int_equal(parse(&p, &q), 0);
	n = dns_build_answer(p.b, &q, DNS_NOERROR, a4, 60, out, sizeof(out));
	assert_int_equal(n, p.n);
	assert_int_equal(out[7], 0);

	/* an EDNS query gets no OPT back, and the question stops before it */
	query(&p, "edns.example", DNS_TYPE_A);
	p.b[11] = 1;
	size_t qend = p.n;
	put_opt(&p, 1232, NULL, 0);
	assert_int_equal(parse(&p, &q), 0);
	n = dns_build_answer(p.b, &q, DNS_NOERROR, a4, 60, out, sizeof(out));
	assert_int_equal(n, qend + 16);
	assert_int_equal(out[11], 0);
	assert_int_equal(out[qend], 0xc0);
	assert_int_equal(read_response(out, (size_t)n, &p, DNS_TYPE_A, addr, &ttl), 1);
	assert_memory_equal(addr, a4, 4);
}

static void test_answer_space_and_args(void **state)
{
	static const uint8_t a4[4] = { 198, 18, 0, 9 };
	struct pkt p;
	struct dns_query q, bad;
	uint8_t out[600];
	ssize_t full, n;
	(void)state;

	query(&p, "space.example.com", DNS_TYPE_A);
	assert_int_equal(parse(&p, &q), 0);
	full = dns_build_answer(p.b, &q, DNS_NOERROR, a4, 60, out, sizeof(out));
	assert_int_equal(full, p.n + 16);
	/* every cap below the length fails and writes nothing past cap */
	for (size_t cap = 0; cap < (size_t)full; cap++) {
		memset(out, 0xee, sizeof(out));
		n = dns_build_answer(p.b, &q, DNS_NOERROR, a4, 60, out, cap);
		assert_int_equal(n, -ENOSPC);
		for (size_t i = cap; i < sizeof(out); i++)
			assert_int_equal(out[i], 0xee);
	}
	memset(out, 0xee, sizeof(out));
	assert_int_equal(dns_build_answer(p.b, &q, DNS_NOERROR, a4, 60, out, (size_t)full), full);
	assert_int_equal(out[full], 0xee);
	/* without the answer record it fits in 16 bytes less */
	assert_int_equal(dns_build_answer(p.b, &q, DNS_NXDOMAIN, NULL, 60, out, p.n), p.n);
	assert_int_equal(dns_build_answer(p.b, &q, DNS_NXDOMAIN, NULL, 60, out, p.n - 1), -ENOSPC);

	/* rcode outside 4 bits, a question_end that cannot be one */
	assert_int_equal(dns_build_answer(p.b, &q, 16, NULL, 0, out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_build_answer(p.b, &q, -1, NULL, 0, out, sizeof(out)), -EINVAL);
	bad = q;
	bad.question_end = 16;
	assert_int_equal(dns_build_answer(p.b, &bad, 0, NULL, 0, out, sizeof(out)), -EINVAL);
	bad.question_end = 12 + 255 + 4 + 1;
	assert_int_equal(dns_build_answer(p.b, &bad, 0, NULL, 0, out, sizeof(out)), -EINVAL);
}

static void test_type_name(void **state)
{
	(void)state;
	assert_string_equal(dns_type_name(DNS_TYPE_A), "A");
	assert_string_equal(dns_type_name(DNS_TYPE_AAAA), "AAAA");
	assert_string_equal(dns_type_name(DNS_TYPE_TXT), "TXT");
	assert_string_equal(dns_type_name(DNS_TYPE_HTTPS), "HTTPS");
	assert_string_equal(dns_type_name(DNS_TYPE_ANY), "ANY");
	/* never NULL: the result goes straight into an audit record */
	for (unsigned t = 0; t <= 0xffff; t++)
		assert_non_null(dns_type_name((uint16_t)t));
	assert_string_equal(dns_type_name(0xff00), "UNKNOWN");
}

/* ---- synthetic addresses ---- */

static void test_synth_is_synthetic(void **state)
{
	(void)state;
	assert_false(dns_synth_is_synthetic((const uint8_t[]){ 198, 17, 255, 255 }));
	assert_true(dns_synth_is_synthetic((const uint8_t[]){ 198, 18, 0, 0 }));
	assert_true(dns_synth_is_synthetic((const uint8_t[]){ 198, 18, 200, 1 }));
	assert_true(dns_synth_is_synthetic((const uint8_t[]){ 198, 19, 255, 255 }));
	assert_false(dns_synth_is_synthetic((const uint8_t[]){ 198, 20, 0, 0 }));
	assert_false(dns_synth_is_synthetic((const uint8_t[]){ 199, 18, 0, 1 }));
	assert_false(dns_synth_is_synthetic((const uint8_t[]){ 18, 198, 0, 1 }));
}

static void test_synth_basic(void **state)
{
	struct dns_synth *s = dns_synth_new(16);
	uint8_t a[4], b[4], c[4];
	char name[DNS_NAME_MAX + 1];
	(void)state;

	assert_non_null(s);
	assert_int_equal(dns_synth_lookup_name(s, "example.com", a), 0);
	assert_memory_equal(a, ((const uint8_t[]){ 198, 18, 0, 2 }), 4);
	assert_true(dns_synth_is_synthetic(a));
	assert_int_equal(dns_synth_lookup_name(s, "example.com", b), 0);
	assert_memory_equal(a, b, 4);
	assert_int_equal(dns_synth_lookup_name(s, "example.org", c), 0);
	assert_memory_not_equal(a, c, 4);
	assert_true(dns_synth_is_synthetic(c));

	assert_true(dns_synth_lookup_addr(s, a, name, sizeof(name)));
	assert_string_equal(name, "example.com");
	assert_true(dns_synth_lookup_addr(s, c, name, sizeof(name)));
	assert_string_equal(name, "example.org");
	/* an exact-size buffer works, one byte less does not */
	assert_true(dns_synth_lookup_addr(s, a, name, 12));
	assert_string_equal(name, "example.com");
	assert_false(dns_synth_lookup_addr(s, a, name, 11));
	assert_string_equal(name, "");
	assert_false(dns_synth_lookup_addr(s, a, name, 0));

	/* synthetic but unassigned; the reserved two; not synthetic at all */
	strcpy(name, "stale");
	assert_false(dns_synth_lookup_addr(s, (const uint8_t[]){ 198, 18, 0, 4 }, name, sizeof(name)));
	assert_string_equal(name, "");
	assert_false(dns_synth_lookup_addr(s, (const uint8_t[]){ 198, 19, 255, 255 }, name, sizeof(name)));
	assert_false(dns_synth_lookup_addr(s, (const uint8_t[]){ 198, 18, 0, 0 }, name, sizeof(name)));
	assert_false(dns_synth_lookup_addr(s, (const uint8_t[]){ 198, 18, 0, 1 }, name, sizeof(name)));
	assert_false(dns_synth_lookup_addr(s, (const uint8_t[]){ 10, 18, 0, 2 }, name, sizeof(name)));
	assert_false(dns_synth_lookup_addr(s, (const uint8_t[]){ 198, 20, 0, 2 }, name, sizeof(name)));

	/* names the parser would never produce are refused, not stored */
	static const char *const bad[] = { "", "Example.com", "a..b", ".a", "a.", "a b", "a/b",
					   "caf\xc3\xa9.example", "a\tb" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dns_synth_lookup_name(s, bad[i], b), -EINVAL);
	char l64[70], n254[300];
	memset(l64, 'x', 64);
	l64[64] = '\0';
	assert_int_equal(dns_synth_lookup_name(s, l64, b), -EINVAL);
	l64[63] = '\0';
	assert_int_equal(dns_synth_lookup_name(s, l64, b), 0);
	memset(n254, 'a', sizeof(n254));
	for (size_t i = 1; i < sizeof(n254); i += 2)
		n254[i] = '.';
	n254[253] = '\0';
	assert_int_equal(dns_synth_lookup_name(s, n254, b), 0);
	assert_true(dns_synth_lookup_addr(s, b, name, sizeof(name)));
	assert_string_equal(name, n254);
	n254[253] = '.';
	n254[255] = '\0';
	assert_int_equal(dns_synth_lookup_name(s, n254, b), -EINVAL);
	n254[255] = 'a';
	n254[sizeof(n254) - 1] = '\0';
	assert_int_equal(dns_synth_lookup_name(s, n254, b), -EINVAL);

	dns_synth_free(s);
	dns_synth_free(NULL);
}

static void test_synth_new_bounds(void **state)
{
	struct dns_synth *s;
	(void)state;

	errno = 0;
	assert_null(dns_synth_new(0));
	assert_int_equal(errno, EINVAL);
	assert_null(dns_synth_new(DNS_SYNTH_MAX_ENTRIES + 1));
	assert_int_equal(errno, EINVAL);
	s = dns_synth_new(DNS_SYNTH_MAX_ENTRIES);
	assert_non_null(s);
	dns_synth_free(s);
}

static void test_synth_full(void **state)
{
	struct dns_synth *s = dns_synth_new(5);
	char name[32];
	uint8_t a[5][4], b[4];
	(void)state;

	assert_non_null(s);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "host%d.example", i);
		assert_int_equal(dns_synth_lookup_name(s, name, a[i]), 0);
		assert_int_equal(a[i][3], 2 + i);
	}
	assert_int_equal(dns_synth_lookup_name(s, "one-too-many.example", b), -ENOSPC);
	assert_int_equal(dns_synth_lookup_name(s, "another.example", b), -ENOSPC);
	/* the names held still resolve both ways */
	for (int i = 0; i < 5; i++) {
		char back[DNS_NAME_MAX + 1];
		snprintf(name, sizeof(name), "host%d.example", i);
		assert_int_equal(dns_synth_lookup_name(s, name, b), 0);
		assert_memory_equal(a[i], b, 4);
		assert_true(dns_synth_lookup_addr(s, b, back, sizeof(back)));
		assert_string_equal(back, name);
	}
	/* the address after the last never maps back */
	b[3] = 7;
	assert_false(dns_synth_lookup_addr(s, b, name, sizeof(name)));
	dns_synth_free(s);
}

/* A full map the size the proxy uses, over the /16 boundary: every address
 * distinct, in range, and mapping back. */
static void test_synth_large(void **state)
{
	const size_t max = 70000;
	struct dns_synth *s = dns_synth_new(max);
	char name[64], back[DNS_NAME_MAX + 1];
	uint8_t a[4];
	(void)state;

	assert_non_null(s);
	for (size_t i = 0; i < max; i++) {
		uint32_t v, expect = 0xc6120002u + (uint32_t)i;
		snprintf(name, sizeof(name), "n%zu.example", i);
		assert_int_equal(dns_synth_lookup_name(s, name, a), 0);
		v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
		assert_int_equal(v, expect);
	}
	assert_int_equal(dns_synth_lookup_name(s, "overflow.example", a), -ENOSPC);
	for (size_t i = 0; i < max; i += 997) {
		snprintf(name, sizeof(name), "n%zu.example", i);
		assert_int_equal(dns_synth_lookup_name(s, name, a), 0);
		assert_true(dns_synth_lookup_addr(s, a, back, sizeof(back)));
		assert_string_equal(back, name);
	}
	dns_synth_free(s);
}

#define THREADS 8
#define SHARED 2000
#define OWN 250

static pthread_barrier_t start;

struct worker {
	struct dns_synth *s;
	unsigned id;
	uint8_t shared[SHARED][4];
	uint8_t own[OWN][4];
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[64], back[DNS_NAME_MAX + 1];

	/* all threads assign at once, so their insertions overlap */
	pthread_barrier_wait(&start);
	for (unsigned k = 0; k < SHARED + OWN; k++) {
		/* each thread walks the shared names from another start, and
		 * interleaves its own, so assignments race */
		if (k % 7 == 0 && k / 7 < OWN) {
			unsigned i = k / 7;
			snprintf(name, sizeof(name), "own%u-t%u.example", i, w->id);
			if (dns_synth_lookup_name(w->s, name, w->own[i]) != 0)
				w->failures++;
		}
		if (k < SHARED) {
			unsigned i = (k + w->id * 97) % SHARED;
			snprintf(name, sizeof(name), "shared%u.example", i);
			if (dns_synth_lookup_name(w->s, name, w->shared[i]) != 0)
				w->failures++;
			/* a connection thread mapping back meanwhile */
			if (!dns_synth_lookup_addr(w->s, w->shared[i], back, sizeof(back)) ||
			    strcmp(back, name) != 0)
				w->failures++;
		}
	}
	return NULL;
}

static void test_synth_threads(void **state)
{
	struct dns_synth *s = dns_synth_new(SHARED + THREADS * OWN);
	struct worker *w = calloc(THREADS, sizeof(*w));
	pthread_t t[THREADS];
	uint8_t *seen;
	char name[64], back[DNS_NAME_MAX + 1];
	uint8_t extra[4];
	(void)state;

	assert_non_null(s);
	assert_non_null(w);
	assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		w[i].s = s;
		w[i].id = i;
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&start);

	/* every thread saw the same address for each shared name */
	for (unsigned i = 0; i < THREADS; i++) {
		assert_int_equal(w[i].failures, 0);
		assert_memory_equal(w[i].shared, w[0].shared, sizeof(w[0].shared));
	}
	/* and all SHARED + THREADS * OWN addresses are distinct and dense:
	 * exactly the first max offsets, each once */
	seen = calloc(SHARED + THREADS * OWN, 1);
	assert_non_null(seen);
	for (unsigned i = 0; i < THREADS; i++) {
		for (unsigned j = 0; j < SHARED + OWN; j++) {
			const uint8_t *a = j < SHARED ? w[i].shared[j] : w[i].own[j - SHARED];
			size_t off;
			assert_true(dns_synth_is_synthetic(a));
			off = ((size_t)(a[1] - 18) << 16 | (size_t)a[2] << 8 | a[3]) - 2;
			assert_true(off < SHARED + THREADS * OWN);
			if (j < SHARED && i > 0)
				continue;
			assert_int_equal(seen[off], 0);
			seen[off] = 1;
			assert_true(dns_synth_lookup_addr(s, a, back, sizeof(back)));
			if (j < SHARED)
				snprintf(name, sizeof(name), "shared%u.example", j);
			else
				snprintf(name, sizeof(name), "own%u-t%u.example", j - SHARED, i);
			assert_string_equal(back, name);
		}
	}
	for (size_t k = 0; k < SHARED + THREADS * OWN; k++)
		assert_int_equal(seen[k], 1);
	assert_int_equal(dns_synth_lookup_name(s, "late.example", extra), -ENOSPC);
	free(seen);
	free(w);
	dns_synth_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_query),
		cmocka_unit_test(test_aaaa_query_edns),
		cmocka_unit_test(test_txt_query),
		cmocka_unit_test(test_mixed_case_lowered),
		cmocka_unit_test(test_root_and_trailing_dot),
		cmocka_unit_test(test_label_and_name_limits),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_compression_refused),
		cmocka_unit_test(test_bad_label_bytes),
		cmocka_unit_test(test_not_plain_query),
		cmocka_unit_test(test_trailing_garbage),
		cmocka_unit_test(test_answer_a),
		cmocka_unit_test(test_answer_no_record),
		cmocka_unit_test(test_answer_space_and_args),
		cmocka_unit_test(test_type_name),
		cmocka_unit_test(test_synth_is_synthetic),
		cmocka_unit_test(test_synth_basic),
		cmocka_unit_test(test_synth_new_bounds),
		cmocka_unit_test(test_synth_full),
		cmocka_unit_test(test_synth_large),
		cmocka_unit_test(test_synth_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
