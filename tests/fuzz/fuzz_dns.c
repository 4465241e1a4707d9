/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the DNS query parser, the answer builder and the
 * synthetic address map.
 *
 * Besides crashes and sanitizer reports (the input is copied to a buffer
 * of exactly its size, so any over-read is caught) it checks:
 *  - the result is 0, -EINVAL or -EPROTO, and the query is all zero unless
 *    0 is returned;
 *  - an accepted query has a plain-query header, a name of at most 253
 *    characters of lower-case letters, digits, '-', '_' and dots, with no
 *    empty label and none over 63, and a question that re-encodes to the
 *    bytes it came from (compared case-blind);
 *  - a message ends where it says: an accepted input with one byte less,
 *    or one byte more, is refused;
 *  - the answer built from an accepted query fits exactly the length it
 *    reports, fails with -ENOSPC one byte short without writing past the
 *    cap, has the documented header, the question byte for byte, and an A
 *    record only where one belongs;
 *  - the synthetic map gives an accepted name an address in 198.18.0.0/15
 *    that maps back to it, and the same address again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SYNTH_ENTRIES 256

static struct dns_synth *synth;

static int parse_exact(const uint8_t *data, size_t size, struct dns_query *q)
{
	uint8_t *copy = malloc(size ? size : 1);
	int r;

	CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	memset(q, 0xa5, sizeof(*q));
	r = dns_parse_query(copy, size, q);
	free(copy);
	return r;
}

static bool name_ok(const char *s)
{
	size_t len = strnlen(s, DNS_NAME_MAX + 1), label = 0;

	if (len > DNS_NAME_MAX)
		return false;
	if (len == 0)
		return true; /* the root */
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0;
}

static char lower(uint8_t c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

/* The question of data, re-encoded from q, is what data holds. */
static void check_question(const uint8_t *data, const struct dns_query *q)
{
	size_t off = DNS_HEADER_LEN;
	const char *s = q->name;

	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);

		CHECK(data[off] == l);
		for (size_t i = 0; i < l; i++)
			CHECK(lower(data[off + 1 + i]) == s[i]);
		off += 1 + l;
		s += l + (dot ? 1 : 0);
	}
	CHECK(data[off] == 0);
	off++;
	CHECK(q->qtype == (data[off] << 8 | data[off + 1]));
	CHECK(q->qclass == (data[off + 2] << 8 | data[off + 3]));
	CHECK(off + 4 == q->question_end);
}

static void check_answer(const uint8_t *req, const struct dns_query *q)
{
	static const uint8_t a4[4] = { 198, 18, 3, 4 };
	uint8_t out[DNS_HEADER_LEN + 255 + 4 + 16 + 8];
	size_t qlen = q->question_end - DNS_HEADER_LEN;
	bool want = q->qtype == DNS_TYPE_A && q->qclass == DNS_CLASS_IN;
	size_t len = DNS_HEADER_LEN + qlen + (want ? 16 : 0);
	ssize_t n;
	uint16_t flags;

	/* one byte short: -ENOSPC, and nothing written at or past the cap */
	memset(out, 0xee, sizeof(out));
	n = dns_build_answer(req, q, DNS_NOERROR, a4, 300, out, len - 1);
	CHECK(n == -ENOSPC);
	for (size_t i = len - 1; i < sizeof(out); i++)
		CHECK(out[i] == 0xee);

	n = dns_build_answer(req, q, DNS_NOERROR, a4, 300, out, len);
	CHECK(n == (ssize_t)len);
	CHECK(out[len] == 0xee);
	CHECK(out[0] == (q->id >> 8) && out[1] == (q->id & 0xff));
	flags = (uint16_t)(out[2] << 8 | out[3]);
	CHECK(flags == (DNS_FLAG_QR | DNS_FLAG_AA | DNS_FLAG_RA | (q->flags & DNS_FLAG_RD)));
	CHECK(out[4] == 0 && out[5] == 1);
	CHECK(out[6] == 0 && out[7] == (want ? 1 : 0));
	CHECK(out[8] == 0 && out[9] == 0 && out[10] == 0 && out[11] == 0);
	CHECK(memcmp(out + DNS_HEADER_LEN, req + DNS_HEADER_LEN, qlen) == 0);
	if (want) {
		static const uint8_t rr[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 198, 18, 3, 4 };
		CHECK(memcmp(out + q->question_end, rr, sizeof(rr)) == 0);
	}
	/* a response is never taken for a query */
	{
		struct dns_query back;
		CHECK(dns_parse_query(out, len, &back) == -EPROTO);
	}

	/* NXDOMAIN: the question alone, whatever the address */
	n = dns_build_answer(req, q, DNS_NXDOMAIN, a4, 300, out, sizeof(out));
	CHECK(n == (ssize_t)(DNS_HEADER_LEN + qlen));
	CHECK((out[3] & 0x0f) == DNS_NXDOMAIN && out[7] == 0);
	CHECK(memcmp(out + DNS_HEADER_LEN, req + DNS_HEADER_LEN, qlen) == 0);
}

static void check_synth(const char *name)
{
	uint8_t a[4], b[4];
	char back[DNS_NAME_MAX + 1];
	int r;

	if (name[0] == '\0') {
		if (synth)
			CHECK(dns_synth_lookup_name(synth, name, a) == -EINVAL);
		return;
	}
	if (!synth) {
		synth = dns_synth_new(SYNTH_ENTRIES);
		CHECK(synth != NULL);
	}
	r = dns_synth_lookup_name(synth, name, a);
	if (r == -ENOSPC) {
		/* start over with an empty map, so both paths are exercised */
		dns_synth_free(synth);
		synth = dns_synth_new(SYNTH_ENTRIES);
		CHECK(synth != NULL);
		r = dns_synth_lookup_name(synth, name, a);
	}
	CHECK(r == 0);
	CHECK(dns_synth_is_synthetic(a));
	CHECK(!(a[1] == 18 && a[2] == 0 && a[3] < 2));
	CHECK(dns_synth_lookup_addr(synth, a, back, sizeof(back)));
	CHECK(strcmp(back, name) == 0);
	CHECK(dns_synth_lookup_name(synth, name, b) == 0);
	CHECK(memcmp(a, b, 4) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dns_query zero;
	struct dns_query q, other;
	int r, r2;

	r = parse_exact(data, size, &q);
	CHECK(r == 0 || r == -EINVAL || r == -EPROTO);
	if (r != 0) {
		CHECK(memcmp(&q, &zero, sizeof(q)) == 0);
		return 0;
	}

	CHECK(size >= DNS_HEADER_LEN);
	CHECK(q.id == (data[0] << 8 | data[1]) && q.flags == (data[2] << 8 | data[3]));
	CHECK(!(q.flags & DNS_FLAG_QR) && DNS_OPCODE(q.flags) == 0);
	CHECK(name_ok(q.name));
	CHECK(dns_type_name(q.qtype) != NULL);
	CHECK(q.question_end >= DNS_HEADER_LEN + 5 && q.question_end <= size);
	check_question(data, &q);
	CHECK(q.edns == (q.question_end < size));
	CHECK(q.edns == (data[11] == 1));
	if (!q.edns)
		CHECK(q.edns_size == 0);

	/* exactly one message: a byte less or a byte more is refused */
	r2 = parse_exact(data, size - 1, &other);
	CHECK(r2 == -EINVAL);
	{
		uint8_t *more = malloc(size + 1);
		CHECK(more != NULL);
		memcpy(more, data, size);
		more[size] = data[size - 1];
		r2 = dns_parse_query(more, size + 1, &other);
		free(more);
		CHECK(r2 == -EINVAL);
	}

	check_answer(data, &q);
	check_synth(q.name);
	return 0;
}
