/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the HTTP head parser and chunked framing.
 *
 * Besides crashes and sanitizer reports it checks:
 *  - the return convention: a head ends in CRLFCRLF within the limits;
 *    0 ("need more") only while no CRLFCRLF has arrived; a refusal has a
 *    status, an errno that fits it, and a printable message;
 *  - prefixes: any prefix of the input gives 0 or exactly the verdict of
 *    the whole input (the proxy parses a growing buffer);
 *  - the upstream head built from an accepted request parses again, to
 *    the same method, host, port, path, query and framing, and building
 *    from that gives the same bytes;
 *  - chunked framing ends at the same byte however the input is split;
 *  - a response played through the credential endpoints' scan
 *    (respscan.c), in reads of a size the input picks, never passes a
 *    fixed secret to the client, and one it passes whole without a
 *    secret in its body arrives with the same body.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "net/dlp.h"
#include "net/http.h"
#include "net/respscan.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct verdict {
	int r;
	int status;
	struct error err;
};

static struct http_request req, tmp_req, again;
static struct http_response resp, tmp_resp;

static void check_message(const struct error *err, int r)
{
	CHECK(err->code == -r);
	CHECK(err->msg[0] != '\0');
	/* peer bytes are quoted: a message never carries a control
	 * character or raw non-ASCII into a log */
	for (const char *p = err->msg; *p; p++)
		CHECK(*p >= 0x20 && *p < 0x7f);
}

static bool has_crlfcrlf(const char *buf, size_t len)
{
	return memmem(buf, len, "\r\n\r\n", 4) != NULL;
}

static void check_request_verdict(const char *buf, size_t len, const struct verdict *v)
{
	if (v->r > 0) {
		size_t n = (size_t)v->r;
		CHECK(v->status == 0);
		CHECK(n <= len && n <= HTTP_MAX_HEAD && n >= 4);
		CHECK(memcmp(buf + n - 4, "\r\n\r\n", 4) == 0);
		CHECK(!has_crlfcrlf(buf, n - 1));
		return;
	}
	if (v->r == 0) {
		CHECK(v->status == 0);
		CHECK(!has_crlfcrlf(buf, len));
		CHECK(len < HTTP_MAX_HEAD);
		return;
	}
	check_message(&v->err, v->r);
	switch (v->status) {
	case 400:
	case 417: /* an Expect other than one 100-continue */
		CHECK(v->r == -EINVAL);
		break;
	case 414:
	case 431:
		CHECK(v->r == -EMSGSIZE);
		break;
	case 501:
	case 505:
		CHECK(v->r == -ENOTSUP);
		break;
	default:
		CHECK(!"unexpected status");
	}
}

static struct verdict parse_request(const char *buf, size_t len, struct http_request *out)
{
	struct verdict v = { 0 };
	v.status = -1;
	v.r = http_parse_request(buf, len, out, &v.status, &v.err);
	check_request_verdict(buf, len, &v);
	return v;
}

static void check_same(const struct verdict *part, const struct verdict *whole)
{
	if (part->r == 0)
		return;
	CHECK(part->r == whole->r);
	CHECK(part->status == whole->status);
	CHECK(strcmp(part->err.msg, whole->err.msg) == 0);
}

/* Lower-case; a name (not an IPv6 literal, whose zone id may end in '.')
 * without its trailing dot. */
static bool is_lower_host(const char *h)
{
	size_t n = strlen(h);
	if (n == 0 || n > HTTP_MAX_HOST || (h[n - 1] == '.' && !strchr(h, ':')))
		return false;
	for (; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			return false;
	return true;
}

static uint16_t default_port(const char *scheme)
{
	return strcmp(scheme, "https") == 0 ? 443 : 80;
}

static void check_request(const struct http_request *r)
{
	CHECK(r->method[0] != '\0');
	CHECK(is_lower_host(r->host));
	CHECK(r->port != 0);
	CHECK(r->minor == 0 || r->minor == 1);
	CHECK(r->n_headers <= HTTP_MAX_HEADERS);
	switch (r->form) {
	case HTTP_TARGET_ORIGIN:
		CHECK(r->scheme[0] == '\0');
		CHECK(r->path && r->path_len > 0 && r->path[0] == '/');
		break;
	case HTTP_TARGET_ABSOLUTE:
		CHECK(strcmp(r->scheme, "http") == 0 || strcmp(r->scheme, "https") == 0);
		CHECK(r->path && r->path_len > 0 && r->path[0] == '/');
		if (!r->port_explicit)
			CHECK(r->port == default_port(r->scheme));
		break;
	case HTTP_TARGET_AUTHORITY:
		CHECK(strcmp(r->method, "CONNECT") == 0);
		CHECK(!r->path && r->path_len == 0 && r->port_explicit);
		CHECK(r->body == HTTP_BODY_NONE);
		break;
	case HTTP_TARGET_ASTERISK:
		CHECK(strcmp(r->method, "OPTIONS") == 0);
		CHECK(r->path_len == 1 && r->path[0] == '*' && !r->query);
		break;
	}
	for (size_t i = 0; i < r->path_len; i++)
		CHECK(r->path[i] != '?' && r->path[i] != '#' && r->path[i] != '\\');
	CHECK(r->body != HTTP_BODY_EOF);
	CHECK(r->body != HTTP_BODY_CHUNKED || r->minor == 1);
	CHECK(!r->upgrade || r->minor == 1);
	CHECK(!r->upgrade_websocket || r->upgrade);
	/* A body a server may leave unread runs as a request of its own:
	 * never on GET, HEAD or TRACE; elsewhere, outside the methods whose
	 * bodies have a meaning, the upstream is told to close. */
	bool has_body = r->body == HTTP_BODY_CHUNKED || (r->body == HTTP_BODY_LENGTH && r->content_length > 0);
	if (has_body)
		CHECK(strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0 &&
		      strcmp(r->method, "TRACE") != 0);
	else
		CHECK(!r->upstream_close);
	if (has_body && (strcmp(r->method, "DELETE") == 0 || strcmp(r->method, "OPTIONS") == 0))
		CHECK(r->upstream_close);
	if (strcmp(r->method, "POST") == 0 || strcmp(r->method, "PUT") == 0 || strcmp(r->method, "PATCH") == 0)
		CHECK(!r->upstream_close);
	/* websocket only as the one protocol of the one Upgrade field */
	if (r->upgrade_websocket) {
		size_t n = 0;
		for (size_t i = 0; i < r->n_headers; i++)
			if (r->headers[i].name_len == 7 && strncasecmp(r->headers[i].name, "Upgrade", 7) == 0) {
				n++;
				CHECK(!memchr(r->headers[i].value, ',', r->headers[i].value_len));
			}
		CHECK(n == 1);
	}
	CHECK(!r->expect_continue || r->minor == 1);
}

/* The upstream head of r parses again, to the same request. */
static void check_upstream(const struct http_request *r, bool keep_upgrade)
{
	struct buf out = { 0 }, out2 = { 0 };
	size_t lines = 0;

	if (r->form == HTTP_TARGET_AUTHORITY) {
		CHECK(http_build_upstream_head(r, keep_upgrade, &out) == -EINVAL);
		CHECK(out.len == 0);
		buf_free(&out);
		return;
	}
	if (http_build_upstream_head(r, keep_upgrade, &out) < 0)
		abort(); /* only ENOMEM is possible, and fuzzing has memory */
	struct verdict v = parse_request(out.data, out.len, &again);
	if (v.r < 0) {
		/* Adding Host (1.0 without one) and Connection can push a
		 * head at the limits over them; that is the only excuse. */
		for (size_t i = 0; i + 1 < out.len; i++)
			lines += out.data[i] == '\r' && out.data[i + 1] == '\n';
		if (v.status == 431 && (out.len > HTTP_MAX_HEAD || lines - 2 > HTTP_MAX_HEADERS)) {
			buf_free(&out);
			return;
		}
		fprintf(stderr, "upstream head refused: %d %s\n%.*s\n", v.status, v.err.msg,
			(int)out.len, out.data);
		abort();
	}
	CHECK((size_t)v.r == out.len);
	check_request(&again);
	CHECK(again.form == (r->form == HTTP_TARGET_ASTERISK ? HTTP_TARGET_ASTERISK :
								HTTP_TARGET_ORIGIN));
	CHECK(strcmp(again.method, r->method) == 0);
	CHECK(strcmp(again.host, r->host) == 0);
	if (r->port_explicit && r->port != default_port(r->scheme))
		CHECK(again.port_explicit && again.port == r->port);
	else
		CHECK(!again.port_explicit && again.port == 80);
	CHECK(again.path_len == r->path_len && memcmp(again.path, r->path, r->path_len) == 0);
	CHECK(!again.query == !r->query);
	if (r->query)
		CHECK(again.query_len == r->query_len &&
		      memcmp(again.query, r->query, r->query_len) == 0);
	CHECK(again.minor == 1);
	CHECK(again.body == r->body && again.content_length == r->content_length);
	CHECK(again.keep_alive == !r->upstream_close);
	CHECK(again.upstream_close == r->upstream_close);
	CHECK(again.upgrade == (keep_upgrade && r->upgrade));
	if (again.upgrade)
		CHECK(again.upgrade_websocket == r->upgrade_websocket);
	/* the proxy answers Expect itself: it never goes upstream */
	CHECK(!again.expect_continue);
	CHECK(!http_find_header(again.headers, again.n_headers, "Expect"));

	/* building again changes nothing */
	if (http_build_upstream_head(&again, keep_upgrade, &out2) < 0)
		abort();
	CHECK(out2.len == out.len && memcmp(out2.data, out.data, out.len) == 0);
	buf_free(&out);
	buf_free(&out2);
}

/* Feed buf to a chunked decoder whole and split at `at`: same verdict. */
static void check_chunked(const char *buf, size_t len, size_t at)
{
	struct http_chunked a = { 0 }, b = { 0 };
	size_t used = 0, u1 = 0, u2 = 0;
	int r = http_chunked_feed(&a, buf, len, &used);

	CHECK(r == 1 || r == 0 || r == -EINVAL || r == -EOVERFLOW || r == -EMSGSIZE);
	CHECK(used <= len);
	if (r == 0)
		CHECK(used == len);
	if (r == 1)
		CHECK(used >= 5 && memcmp(buf + used - 2, "\r\n", 2) == 0);

	if (at > len)
		at = len;
	int r2 = http_chunked_feed(&b, buf, at, &u1);
	if (r2 == 0) {
		CHECK(u1 == at);
		r2 = http_chunked_feed(&b, buf + at, len - at, &u2);
		u1 += u2;
	}
	CHECK(r2 == r);
	if (r >= 0)
		CHECK(u1 == used);
	/* a finished or failed decoder stays so */
	if (r != 0) {
		size_t u3 = 99;
		CHECK(http_chunked_feed(&a, buf, len, &u3) == (r == 1 ? 1 : -EINVAL));
		CHECK(u3 == 0);
	}

	/* decoding frames exactly as feeding does, and yields the same data
	 * (what the leak scan reads) however the input is split; the data
	 * is never longer than the framed bytes */
	struct http_chunked d1 = { 0 }, d2 = { 0 };
	struct buf o1 = { 0 }, o2 = { 0 };
	size_t v1 = 0, v2 = 0, v3 = 0;
	int s1 = http_chunked_decode(&d1, buf, len, &v1, &o1);
	CHECK(s1 == r || s1 == -ENOMEM);
	if (s1 == r) {
		CHECK(v1 == used);
		CHECK(o1.len <= used);
		CHECK(d1.trailers == a.trailers);
		int s2 = http_chunked_decode(&d2, buf, at, &v2, &o2);
		if (s2 == 0) {
			s2 = http_chunked_decode(&d2, buf + at, len - at, &v3, &o2);
			v2 += v3;
		}
		if (s2 == r) {
			CHECK(o2.len == o1.len);
			CHECK(o1.len == 0 || memcmp(o1.data, o2.data, o1.len) == 0);
		} else {
			CHECK(s2 == -ENOMEM);
		}
	}
	buf_free(&o1);
	buf_free(&o2);
}

static void fuzz_response(const char *buf, size_t len, const char *method)
{
	struct error err = { 0 }, err2 = { 0 };
	int r = http_parse_response(buf, len, method, &resp, &err);

	if (r > 0) {
		size_t n = (size_t)r;
		CHECK(n <= len && n <= HTTP_MAX_HEAD && resp.head_len == n);
		CHECK(memcmp(buf + n - 4, "\r\n\r\n", 4) == 0);
		CHECK(resp.status >= 100 && resp.status <= 599);
		CHECK(resp.minor == 0 || resp.minor == 1);
		CHECK(resp.body != HTTP_BODY_EOF || !resp.keep_alive);
		if (method && strcmp(method, "HEAD") == 0)
			CHECK(resp.body == HTTP_BODY_NONE);
		if (resp.status == 204 || resp.status == 304 || resp.status < 200)
			CHECK(resp.body == HTTP_BODY_NONE);
	} else if (r == 0) {
		CHECK(!has_crlfcrlf(buf, len) && len < HTTP_MAX_HEAD);
	} else {
		check_message(&err, r);
		CHECK(r == -EINVAL || r == -EMSGSIZE || r == -ENOTSUP);
	}
	if (len > 0) {
		int r2 = http_parse_response(buf, len / 2, method, &tmp_resp, &err2);
		CHECK(r2 == 0 || (r2 == r && strcmp(err.msg, err2.msg) == 0));
	}
}

static const char scan_secret[] = "fuzz-http-secret-77c1a9";

struct play {
	const char *in;
	size_t len, pos, step;
	struct buf out;
};

static ssize_t play_read(void *ctx, void *p, size_t n)
{
	struct play *pl = ctx;
	size_t k = pl->len - pl->pos;
	if (k > pl->step)
		k = pl->step;
	if (k > n)
		k = n;
	memcpy(p, pl->in + pl->pos, k);
	pl->pos += k;
	return (ssize_t)k;
}

static bool play_write(void *ctx, const void *p, size_t n)
{
	struct play *pl = ctx;
	return buf_append(&pl->out, p, n) == 0;
}

static void fuzz_scan(const char *buf, size_t size, const char *method)
{
	static struct dlp *d;
	if (!d) {
		d = dlp_new();
		if (!d || dlp_add_secret(d, "credential:f", (const uint8_t *)scan_secret, sizeof(scan_secret) - 1) < 0)
			abort();
	}
	struct play pl = { .in = buf, .len = size, .step = 1 + (size ? (unsigned char)buf[size - 1] % 64 : 0) };
	struct respscan_io io = { .ctx = &pl, .up_read = play_read, .down_write = play_write };
	struct respscan_result res;
	respscan_forward(d, &io, method, &res);
	CHECK(!pl.out.len || !memmem(pl.out.data, pl.out.len, scan_secret, sizeof(scan_secret) - 1));
	CHECK(!dlp_scan_secrets(d, (const uint8_t *)pl.out.data, pl.out.len, NULL, 0));
	CHECK(res.down == pl.out.len);
	CHECK(!res.refused || res.reason[0]);
	buf_free(&pl.out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "HEAD", "CONNECT", NULL };
	const char *buf = (const char *)data;
	struct verdict whole = parse_request(buf, size, &req);

	/* prefixes: half, and all but the last byte */
	if (size > 0) {
		struct verdict half = parse_request(buf, size / 2, &tmp_req);
		check_same(&half, &whole);
		struct verdict most = parse_request(buf, size - 1, &tmp_req);
		check_same(&most, &whole);
	}
	if (whole.r > 0) {
		size_t head = (size_t)whole.r;
		CHECK(req.head_len == head);
		check_request(&req);
		check_upstream(&req, size & 1);
		check_chunked(buf + head, size - head, (size - head) / 3);
	} else {
		check_chunked(buf, size, size / 3);
	}
	const char *method = methods[size ? data[0] % 4 : 0];
	fuzz_response(buf, size, method);
	fuzz_scan(buf, size, method ? method : "GET");
	return 0;
}
