/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_DNS_H
#define AIRLOCK_NET_DNS_H

/*
 * The DNS side of the transparent network mode. Every UDP query leaving
 * the sandbox's network namespace is redirected to the egress proxy, which
 * answers the names the policy allows with a synthetic IPv4 address from
 * 198.18.0.0/15 (RFC 2544's benchmarking range, never routed) and maps
 * that address back to the name when the agent connects to it; the proxy
 * then resolves the real name itself. Everything else gets NXDOMAIN.
 *
 * This is also the defence against exfiltration over DNS, so the query
 * parser reads hostile bytes: it accepts only the narrow shape a stub
 * resolver sends (one question, at most an EDNS OPT record) and only names
 * that can be printed and compared as they are.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

#define DNS_HEADER_LEN 12
#define DNS_NAME_MAX 253      /* text form, no trailing dot */
#define DNS_MSG_MAX 65535     /* no DNS message is longer */

#define DNS_TYPE_A 1
#define DNS_TYPE_NS 2
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_SOA 6
#define DNS_TYPE_PTR 12
#define DNS_TYPE_MX 15
#define DNS_TYPE_TXT 16
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_SRV 33
#define DNS_TYPE_OPT 41
#define DNS_TYPE_SVCB 64
#define DNS_TYPE_HTTPS 65
#define DNS_TYPE_AXFR 252
#define DNS_TYPE_ANY 255
#define DNS_CLASS_IN 1

/* Header flag bits (the 16-bit word after the id). */
#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_AA 0x0400
#define DNS_FLAG_TC 0x0200
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)
#define DNS_RCODE(flags) ((flags) & 0xf)

enum dns_rcode {
	DNS_NOERROR = 0,
	DNS_FORMERR = 1,
	DNS_SERVFAIL = 2,
	DNS_NXDOMAIN = 3,
	DNS_NOTIMP = 4,
	DNS_REFUSED = 5,
};

struct dns_query {
	uint16_t id;
	uint16_t flags;
	char name[DNS_NAME_MAX + 1]; /* lower-case, dotted, no trailing dot; "" for the root */
	uint16_t qtype, qclass;
	size_t question_end;         /* offset just past the question in the packet */
	bool edns;                   /* an OPT record came with the query */
	uint16_t edns_size;          /* its UDP payload size, as sent (RFC 6891
				      * reads values below 512 as 512) */
};

/* Parse one DNS query message of n bytes at p (a whole UDP payload).
 * Returns 0 with *q filled, or a negative errno with *q zeroed:
 *  -EINVAL  malformed: truncated, a compression pointer or an extended
 *           label type in the question, a label over 63 bytes, a name over
 *           253 characters, a label byte other than a letter, digit, '-' or
 *           '_', a malformed OPT record, or bytes after the message;
 *  -EPROTO  well-formed but not a plain query: QR=1, opcode other than
 *           QUERY, QDCOUNT != 1, ANCOUNT or NSCOUNT != 0, ARCOUNT > 1, or
 *           an additional record that is not an OPT with the root name.
 * The header is judged first, so a response or a notify is -EPROTO however
 * broken its body. The name is lower-cased. Never reads past n; p and q are
 * the caller's and nothing is kept. */
int dns_parse_query(const uint8_t *p, size_t n, struct dns_query *q) WUR;

/* The mnemonic of a query type for logs and audit records ("A", "AAAA",
 * "TXT", ...), or "UNKNOWN" for a type without one here. A static string,
 * never NULL. */
const char *dns_type_name(uint16_t qtype);

/* Build a response to the query parsed into q from req (the same bytes,
 * unchanged) into out[0..cap). The header carries q->id, QR=1, opcode 0,
 * AA=1, RD copied from the query, RA=1 and rcode; the question is
 * req[12..q->question_end) copied as sent, so a resolver that randomises
 * the case of names (DNS 0x20) sees its own spelling back. When a4 is
 * non-NULL, rcode is DNS_NOERROR and the question is class IN type A, one
 * answer follows: the name as a pointer to the question, type A, class IN,
 * ttl, the four bytes at a4. Otherwise there is no answer record (a name
 * that exists without an address of the asked type gets NOERROR and no
 * data). No EDNS record is added. Returns the length written, -ENOSPC when
 * cap is too small (nothing useful is in out then), -EINVAL when rcode is
 * not 0..15 or q->question_end is not a question's end. req, q, a4 and out
 * are the caller's. */
ssize_t dns_build_answer(const uint8_t *req, const struct dns_query *q, int rcode, const uint8_t *a4,
			 uint32_t ttl, uint8_t *out, size_t cap) WUR;

/*
 * Synthetic addresses: the map between allowed names and addresses in
 * 198.18.0.0/15. The address of the i-th name assigned is 198.18.0.2 + i
 * (198.18.0.0 and 198.18.0.1 are kept out: the network address and the
 * conventional gateway), so an address maps back by array index. Entries
 * are never evicted: an address handed to the agent keeps meaning the same
 * name for the whole session, so a cached answer can never lead a
 * connection to another host. Thread-safe: the DNS thread assigns while
 * connection threads map back.
 */
#define DNS_SYNTH_MAX_ENTRIES ((size_t)(1u << 17) - 2)

struct dns_synth;

/* A map holding at most max_entries names (1..DNS_SYNTH_MAX_ENTRIES).
 * Memory is bounded: the index arrays for max_entries are allocated here,
 * and each name is copied when assigned. Owned by the caller
 * (dns_synth_free). NULL with errno set on failure (EINVAL for a bad
 * max_entries, ENOMEM, or the error of getrandom for the hash key). */
struct dns_synth *dns_synth_new(size_t max_entries);

/* Frees the map and every name it holds. Accepts NULL. No other thread may
 * use the map any more. */
void dns_synth_free(struct dns_synth *s);

/* The address of name, assigned now if name is new. name is what
 * dns_parse_query produces: 1..253 characters, lower-case letters, digits,
 * '-', '_', dot-separated labels of 1..63 (anything else is -EINVAL, so the
 * map only ever holds names safe to print and resolve). The name is copied;
 * out is the caller's. Returns 0, -EINVAL, -ENOSPC when the map is full
 * (the caller answers SERVFAIL; names already held still resolve), or
 * -ENOMEM. */
int dns_synth_lookup_name(struct dns_synth *s, const char *name, uint8_t out[4]) WUR;

/* The name assigned to address a: true with name (len bytes, the caller's)
 * filled, or false with name "" (when len > 0) if a was never assigned or
 * the name does not fit (DNS_NAME_MAX + 1 always suffices). */
bool dns_synth_lookup_addr(struct dns_synth *s, const uint8_t a[4], char *name, size_t len);

/* Is a in 198.18.0.0/15? */
bool dns_synth_is_synthetic(const uint8_t a[4]);

#endif
