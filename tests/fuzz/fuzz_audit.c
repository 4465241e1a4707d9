/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the audit module's readers: the strict JSON reader,
 * the event parser, the record builder fed with what the parser accepts,
 * and `airlock audit verify` on the input taken as a whole log.
 *
 * Besides crashes and sanitizer reports (inputs are copied to buffers of
 * exactly their size, so any over-read is caught) it checks:
 *  - the reader returns 0 or -EINVAL; on success its tokens nest properly
 *    (every subtree ends within its parent, every string lies inside the
 *    text), on failure it says what and where, within the text;
 *  - an accepted event has at most AUDIT_EVENT_MAX_FIELDS fields with
 *    unique keys of at most 31 bytes and values that are strings (valid
 *    UTF-8, no NUL), integers or booleans; written out again with
 *    buf_json_string it parses to the same event (nothing is lost or
 *    invented in decoding);
 *  - the record built from an accepted event with a kind fits
 *    AUDIT_CANONICAL_MAX, is one JSON object once closed with its hash,
 *    and is built alike twice;
 *  - verify returns 0, 1 or 2 with a report that agrees: 0 is sealed with
 *    no problem, 1 unsealed or torn, 2 names a problem; the problem text is
 *    NUL-terminated and printable;
 * The seed corpus (tests/fuzz/corpus/audit) holds real, signed logs, so
 * that mutations get past the certificate on line 1 into the chain.
 * `airlock audit suggest`, a layer above, has its harness: fuzz_suggest.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "audit/audit.h"
#include "doc/json.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t l;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			l = 2, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			l = 3, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			l = 4, cp = c & 0x07, min = 0x10000;
		else
			return false;
		if (n - i < l)
			return false;
		for (size_t k = 1; k < l; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += l;
	}
	return true;
}

static void check_tokens(const struct doc_json *j)
{
	CHECK(j->ntok >= 1 && j->ntok <= j->cap);
	CHECK(j->tok[0].end == j->ntok);
	for (size_t t = 0; t < j->ntok; t++) {
		const struct doc_json_tok *k = &j->tok[t];
		CHECK(k->end > t && k->end <= j->ntok);
		CHECK((size_t)k->start + k->len <= j->len);
		if (k->type == DOC_JSON_STRING || k->type == DOC_JSON_NUMBER || k->type == DOC_JSON_TRUE ||
		    k->type == DOC_JSON_FALSE || k->type == DOC_JSON_NULL) {
			CHECK(k->end == t + 1);
		} else {
			CHECK(k->type == DOC_JSON_OBJECT || k->type == DOC_JSON_ARRAY);
			/* children nest inside */
			for (size_t c = t + 1; c < k->end; c = j->tok[c].end)
				CHECK(j->tok[c].end <= k->end);
			if (k->type == DOC_JSON_OBJECT)
				for (size_t c = t + 1; c < k->end; c = j->tok[c + 1].end) {
					CHECK(c + 1 < k->end);
					CHECK(j->tok[c].type == DOC_JSON_STRING);
				}
		}
		if (k->type == DOC_JSON_STRING) {
			char out[256];
			int n = doc_json_str(j, (int)t, out, sizeof(out));
			CHECK(n >= 0 || n == -E2BIG);
			if (n >= 0) {
				CHECK(strlen(out) == (size_t)n);
				CHECK(utf8_valid((const unsigned char *)out, (size_t)n));
				CHECK(doc_json_key_is(j, (int)t, out));
			}
		}
	}
}

static void fuzz_reader(const char *text, size_t size)
{
	static struct doc_json_tok tok[256];
	struct doc_json j;
	int r = doc_json_parse(&j, text, size, tok, 256, 16);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		CHECK(j.err == NULL);
		check_tokens(&j);
	} else {
		CHECK(j.err != NULL && j.err_at <= size);
	}
}

static void check_event(const struct audit_event *ev)
{
	CHECK(ev->n <= AUDIT_EVENT_MAX_FIELDS);
	for (size_t i = 0; i < ev->n; i++) {
		CHECK(strnlen(ev->f[i].key, sizeof(ev->f[i].key)) < sizeof(ev->f[i].key));
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(ev->f[i].key, ev->f[k].key) != 0);
		const struct audit_value *v = &ev->f[i].v;
		CHECK(v->type == AUDIT_STR || v->type == AUDIT_INT || v->type == AUDIT_BOOL);
		if (v->type == AUDIT_STR) {
			CHECK(v->s >= ev->store && v->s < ev->store + sizeof(ev->store));
			size_t room = (size_t)(ev->store + sizeof(ev->store) - v->s);
			size_t n = strnlen(v->s, room);
			CHECK(n < room);
			CHECK(utf8_valid((const unsigned char *)v->s, n));
			CHECK(audit_event_str(ev, ev->f[i].key) == v->s);
		} else if (v->type == AUDIT_INT) {
			CHECK(audit_event_int(ev, ev->f[i].key, v->i == 7 ? 8 : 7) == v->i);
		}
	}
}

/* The event written out again, as a producer would. */
static void reencode(const struct audit_event *ev, struct buf *b)
{
	buf_reset(b);
	int r = buf_puts(b, "{");
	for (size_t i = 0; i < ev->n && !r; i++) {
		const struct audit_value *v = &ev->f[i].v;
		r = (i ? buf_puts(b, ",") : 0) ?: buf_json_string(b, ev->f[i].key, strlen(ev->f[i].key)) ?:
			buf_puts(b, ":");
		if (r)
			break;
		if (v->type == AUDIT_STR)
			r = buf_json_string(b, v->s, strlen(v->s));
		else if (v->type == AUDIT_INT)
			r = buf_printf(b, "%lld", (long long)v->i);
		else
			r = buf_puts(b, v->b ? "true" : "false");
	}
	CHECK(r == 0 && buf_puts(b, "}") == 0);
}

static void fuzz_event(const char *text, size_t size)
{
	static struct audit_event ev, again;
	static struct buf b, rec, rec2;
	int r = audit_event_parse(text, size, &ev);
	CHECK(r == 0 || r == -EINVAL);
	if (r != 0) {
		CHECK(ev.n == 0);
		return;
	}
	check_event(&ev);
	reencode(&ev, &b);
	/* Written again it may be longer (buf_json_string escapes DEL, the
	 * input may not have); compared whenever it still fits a line. */
	if (b.len <= AUDIT_EVENT_MAX_LINE) {
		CHECK(audit_event_parse(b.data, b.len, &again) == 0);
		CHECK(again.n == ev.n);
		for (size_t i = 0; i < ev.n; i++) {
			CHECK(strcmp(again.f[i].key, ev.f[i].key) == 0);
			CHECK(again.f[i].v.type == ev.f[i].v.type);
			if (ev.f[i].v.type == AUDIT_STR)
				CHECK(strcmp(again.f[i].v.s, ev.f[i].v.s) == 0);
			else if (ev.f[i].v.type == AUDIT_INT)
				CHECK(again.f[i].v.i == ev.f[i].v.i);
			else
				CHECK(again.f[i].v.b == ev.f[i].v.b);
		}
	}

	struct audit_session s = { .enforced = (size & 1) != 0 };
	snprintf(s.agent, sizeof(s.agent), "fuzz\"agent\x01");
	snprintf(s.session_id, sizeof(s.session_id), "0190b5a2-7c1e-7abc-8def-0123456789ab");
	snprintf(s.boundary, sizeof(s.boundary), "process");
	snprintf(s.policy_sha256, sizeof(s.policy_sha256), "%064d", 0);
	snprintf(s.host, sizeof(s.host), "host");
	snprintf(s.mode, sizeof(s.mode), "enforce");
	char prev[65];
	snprintf(prev, sizeof(prev), "%064d", 0);
	buf_reset(&rec);
	r = audit_record_build(&ev, &s, 1, prev, 1234, &rec);
	const char *kind = audit_event_str(&ev, "kind");
	if (!kind) {
		CHECK(r == -EINVAL);
		return;
	}
	bool strict = !strcmp(kind, "session_start") || !strcmp(kind, "checkpoint") || !strcmp(kind, "seal");
	CHECK(r == 0 || (r == -EINVAL && strict));
	if (r != 0) {
		CHECK(rec.len == 0);
		return;
	}
	CHECK(rec.len <= AUDIT_CANONICAL_MAX && strlen(rec.data) == rec.len);
	buf_reset(&rec2);
	CHECK(audit_record_build(&ev, &s, 1, prev, 1234, &rec2) == 0);
	CHECK(rec2.len == rec.len && memcmp(rec.data, rec2.data, rec.len) == 0);
	CHECK(buf_puts(&rec, ",\"hash\":\"") == 0 && buf_puts(&rec, prev) == 0 && buf_puts(&rec, "\"}}") == 0);
	static struct doc_json_tok tok[1024];
	struct doc_json j;
	CHECK(doc_json_parse(&j, rec.data, rec.len, tok, 1024, 8) == 0);
	CHECK(tok[0].type == DOC_JSON_OBJECT);
	int air = doc_json_member(&j, 0, "airlock");
	CHECK(air > 0 && tok[air].end == j.ntok);
}

static void fuzz_verify(const uint8_t *data, size_t size)
{
	static int fd = -1;
	if (fd < 0) {
		fd = memfd_create("fuzz-audit-log", MFD_CLOEXEC);
		CHECK(fd >= 0);
	}
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct audit_report rep;
	int r = audit_verify_file(path, NULL, &rep);
	CHECK(r == 0 || r == 1 || r == 2);
	size_t plen = strnlen(rep.problem, sizeof(rep.problem));
	CHECK(plen < sizeof(rep.problem));
	/* What the log holds reaches a terminal only defanged. */
	for (size_t i = 0; i < plen; i++)
		CHECK(rep.problem[i] >= 0x20 && rep.problem[i] < 0x7f);
	for (size_t i = 0; rep.agent[i]; i++)
		CHECK((unsigned char)rep.agent[i] >= 0x20 && rep.agent[i] != 0x7f);
	CHECK(strspn(rep.session_id, "0123456789abcdef-") == strlen(rep.session_id));
	CHECK(strnlen(rep.session_id, sizeof(rep.session_id)) < sizeof(rep.session_id));
	CHECK(strnlen(rep.agent, sizeof(rep.agent)) < sizeof(rep.agent));
	size_t lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	CHECK(rep.bad_line <= lines);
	CHECK(rep.records <= lines);
	if (r == 0) {
		CHECK(rep.sealed && !rep.torn_tail && plen == 0 && rep.bad_line == 0 && rep.records >= 2);
	} else {
		CHECK(plen > 0);
		if (r == 1)
			CHECK(!rep.sealed && rep.records >= 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly the input's bytes, so that reading one more is caught. */
	char *copy = malloc(size ? size : 1);
	CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	fuzz_reader(copy, size);
	if (size <= AUDIT_EVENT_MAX_LINE + 1)
		fuzz_event(copy, size);
	free(copy);
	fuzz_verify(data, size);
	return 0;
}
