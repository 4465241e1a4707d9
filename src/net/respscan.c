/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Responses from endpoints a credential is bound to, scanned for the
 * broker's secrets before the agent sees them (respscan.h).
 */
#include "net/respscan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"
#include "util/cleanup.h"

#define RS_READ 65536

static bool name_is(const struct http_header *h, const char *name)
{
	return strlen(name) == h->name_len && strncasecmp(h->name, name, h->name_len) == 0;
}

int respscan_prepare(struct http_request *req)
{
	size_t k = 0;
	for (size_t i = 0; i < req->n_headers; i++) {
		const struct http_header *h = &req->headers[i];
		if (!name_is(h, "Accept-Encoding") && !name_is(h, "Range") && !name_is(h, "If-Range"))
			req->headers[k++] = *h;
	}
	req->n_headers = k;
	if (req->n_headers >= HTTP_MAX_HEADERS)
		return -E2BIG;
	req->headers[req->n_headers++] = (struct http_header){
		.name = "Accept-Encoding", .name_len = 15, .value = "identity", .value_len = 8
	};
	return 0;
}

bool respscan_coded(const struct http_header *hs, size_t n, char *name, size_t name_len)
{
	for (size_t i = 0; i < n; i++) {
		const struct http_header *h = &hs[i];
		bool te = name_is(h, "Transfer-Encoding");
		if (!te && !name_is(h, "Content-Encoding"))
			continue;
		for (size_t a = 0; a < h->value_len;) {
			size_t b = a;
			while (b < h->value_len && h->value[b] != ',')
				b++;
			size_t s = a, e = b;
			while (s < e && (h->value[s] == ' ' || h->value[s] == '\t'))
				s++;
			while (e > s && (h->value[e - 1] == ' ' || h->value[e - 1] == '\t'))
				e--;
			bool plain = e == s || (e - s == 8 && strncasecmp(h->value + s, "identity", 8) == 0) ||
				     (te && e - s == 7 && strncasecmp(h->value + s, "chunked", 7) == 0);
			if (!plain) {
				snprintf(name, name_len, "%s %.*s", te ? "Transfer-Encoding" : "Content-Encoding",
					 (int)(e - s > 48 ? 48 : e - s), h->value + s);
				return true;
			}
			a = b + 1;
		}
	}
	return false;
}

static void stream_freep(struct dlp_stream **s)
{
	dlp_stream_free(*s);
}

/* Read what the upstream has into rb's free space. */
static ssize_t up_fill(const struct respscan_io *io, struct buf *rb)
{
	if (rb->cap - rb->len < 16384 + 1 && buf_reserve(rb, 16384) < 0)
		return -1;
	ssize_t n = io->up_read(io->ctx, rb->data + rb->len, rb->cap - rb->len - 1);
	if (n > 0)
		rb->len += (size_t)n;
	return n;
}

/* Append body bytes to out as the client will read them: as they are, or
 * as one chunk of a body the proxy frames anew. */
static int put_body(struct buf *out, bool chunked, const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	if (!chunked)
		return buf_append(out, p, n);
	return buf_printf(out, "%zx\r\n", n) ?: buf_append(out, p, n) ?: buf_puts(out, "\r\n");
}

static bool flush(const struct respscan_io *io, struct buf *out, struct respscan_result *res)
{
	if (!out->len)
		return true;
	if (!io->down_write(io->ctx, out->data, out->len))
		return false;
	res->sent = true;
	res->down += out->len;
	buf_reset(out);
	return true;
}

static void refuse(struct respscan_result *res, const char *what, const char *arg)
{
	res->refused = true;
	snprintf(res->reason, sizeof(res->reason), "%s%s%s%s", what, arg ? " (" : "", arg ? arg : "",
		 arg ? ")" : "");
}

/* One response on its way through the scanner. */
struct rs {
	const struct dlp *d;
	const struct respscan_io *io;
	struct respscan_result *res;
	struct buf rb, out, plain;
	struct http_response resp;
	char what[160];
};

/* Where a step of respscan_forward leaves it. */
enum rs_next { RS_ON, RS_OUT, RS_OOM, RS_CUT };

/* The head, after any number of interim (1xx) ones: each is scanned
 * before it goes out (103 Early Hints may echo a header too). */
static enum rs_next read_head(struct rs *s, const char *method)
{
	struct respscan_result *res = s->res;
	for (;;) {
		int r = 0;
		if (s->rb.len) {
			struct error err = { 0 };
			r = http_parse_response(s->rb.data, s->rb.len, method, &s->resp, &err);
			if (r < 0) {
				res->bad_gateway = true;
				return RS_OUT;
			}
		}
		if (r == 0) {
			if (up_fill(s->io, &s->rb) <= 0) {
				res->bad_gateway = true;
				return RS_OUT;
			}
			continue;
		}
		if (dlp_scan_secrets(s->d, (const uint8_t *)s->rb.data, s->resp.head_len, s->what, sizeof(s->what))) {
			refuse(res, "the response head carries a secret", s->what);
			return RS_OUT;
		}
		if (s->resp.status >= 100 && s->resp.status < 200 && s->resp.status != 101) {
			if (!s->io->down_write(s->io->ctx, s->rb.data, s->resp.head_len))
				return RS_OUT;
			res->down += s->resp.head_len;
			buf_consume(&s->rb, s->resp.head_len);
			continue;
		}
		return RS_ON;
	}
}

/* WARNING: each refusal here comes before a byte of the final
 * response went out: the caller can still answer 502. */
static enum rs_next refuse_unscannable(struct rs *s)
{
	struct respscan_result *res = s->res;
	if (s->resp.status == 101) {
		/* Past the switch the bytes are another protocol's frames,
		 * which the scanner cannot follow. */
		refuse(res, "a response from a credential's endpoint switches protocols, which cannot be scanned", NULL);
		return RS_OUT;
	}
	if (s->resp.status == 206) {
		/* Range was removed from the request (respscan_prepare); a
		 * slice would carry a piece of a secret that no needle names. */
		refuse(res, "partial content from a credential's endpoint", NULL);
		return RS_OUT;
	}
	char coding[80];
	if (s->resp.body != HTTP_BODY_NONE && respscan_coded(s->resp.headers, s->resp.n_headers, coding, sizeof(coding))) {
		refuse(res, "a response from a credential's endpoint in a coding the scanner cannot read", coding);
		return RS_OUT;
	}
	return RS_ON;
}

/* The body through the stream scanner st, out as the window releases
 * it. */
static enum rs_next forward_body(struct rs *s, struct dlp_stream *st)
{
	struct respscan_result *res = s->res;
	/* A chunked body is scanned as decoded and framed anew: chunk-size
	 * lines and extensions cannot split a secret from the scanner, and
	 * trailers (fields after the scan of the head) are dropped. */
	bool chunked = s->resp.body == HTTP_BODY_CHUNKED;
	struct http_chunked ch = { 0 };
	uint64_t left = s->resp.body == HTTP_BODY_LENGTH ? s->resp.content_length : 0;
	bool done = s->resp.body == HTTP_BODY_LENGTH && left == 0, stalled = false;
	while (!done) {
		/* Read when everything buffered is used, or when the framing
		 * needs more than it holds (a chunk-size line cut short). */
		if (s->rb.len == 0 || stalled) {
			ssize_t n = up_fill(s->io, &s->rb);
			/* A body until close ends however the connection does
			 * (a server that skips TLS close_notify too): what was
			 * held back is scanned already. */
			if (n <= 0 && s->resp.body == HTTP_BODY_EOF) {
				done = true;
				break;
			}
			if (n <= 0)
				return RS_CUT;
		}
		const uint8_t *data = (const uint8_t *)s->rb.data;
		size_t dlen = 0, used = 0;
		switch (s->resp.body) {
		case HTTP_BODY_LENGTH:
			used = dlen = s->rb.len < left ? s->rb.len : (size_t)left;
			left -= dlen;
			done = left == 0;
			break;
		case HTTP_BODY_CHUNKED: {
			buf_reset(&s->plain);
			int r = http_chunked_decode(&ch, s->rb.data, s->rb.len, &used, &s->plain);
			if (r < 0)
				return RS_CUT;
			data = (const uint8_t *)s->plain.data;
			dlen = s->plain.len;
			done = r == 1;
			break;
		}
		case HTTP_BODY_EOF:
			used = dlen = s->rb.len;
			break;
		case HTTP_BODY_NONE:
			break;
		}
		const uint8_t *rel;
		size_t rel_len;
		int r = dlp_stream_feed(st, data, dlen, &rel, &rel_len, s->what, sizeof(s->what));
		buf_consume(&s->rb, used);
		stalled = used == 0;
		if (r != 0) {
			if (r < 0)
				return RS_OOM;
			refuse(res, "the response body carries a secret", s->what);
			return RS_OUT;
		}
		if (put_body(&s->out, chunked, rel, rel_len) < 0)
			return RS_OOM;
		if (rel_len && !flush(s->io, &s->out, res))
			return RS_OUT;
	}
	const uint8_t *rel;
	size_t rel_len;
	dlp_stream_end(st, &rel, &rel_len);
	if (put_body(&s->out, chunked, rel, rel_len) < 0 || (chunked && buf_puts(&s->out, "0\r\n\r\n") < 0))
		return RS_OOM;
	if (!flush(s->io, &s->out, res))
		return RS_OUT;
	res->complete = s->resp.body != HTTP_BODY_EOF && s->rb.len == 0;
	res->upstream_ok = res->complete && s->resp.keep_alive;
	return RS_OUT;
}

void respscan_forward(const struct dlp *d, const struct respscan_io *io, const char *method,
		      struct respscan_result *res)
{
	struct rs s = { .d = d, .io = io, .res = res };
	_cleanup_(stream_freep) struct dlp_stream *st = NULL;
	enum rs_next next;

	memset(res, 0, sizeof(*res));
	if (buf_reserve(&s.rb, RS_READ - 1) < 0)
		goto oom;

	if (read_head(&s, method) != RS_ON)
		goto out;
	res->status = s.resp.status;
	if (refuse_unscannable(&s) != RS_ON)
		goto out;

	/* The head goes out with the first body bytes the window releases,
	 * so a small response is scanned whole before anything is sent. */
	if (buf_append(&s.out, s.rb.data, s.resp.head_len) < 0)
		goto oom;
	buf_consume(&s.rb, s.resp.head_len);
	if (s.resp.body == HTTP_BODY_NONE) {
		if (!flush(io, &s.out, res))
			goto out;
		res->complete = s.rb.len == 0; /* bytes past a bodiless response: out of step */
		res->upstream_ok = res->complete && s.resp.keep_alive;
		goto out;
	}
	if (dlp_stream_new(d, &st) < 0)
		goto oom;
	next = forward_body(&s, st);
	if (next == RS_OOM)
		goto oom;
	if (next == RS_CUT)
		goto cut;
	goto out;

oom:
	refuse(res, "the proxy had no memory to scan a response from a credential's endpoint", NULL);
	goto out;
cut:
	/* The upstream broke off or framed the body wrongly: the client
	 * gets no more, and nothing held back. */
	if (!res->sent)
		res->bad_gateway = true;
out:
	/* After a hit the upstream's bytes hold the secret; otherwise
	 * everything here was scanned clean, and wiping 64 KiB buffers on
	 * every response would be most of the scan's cost. */
	if (res->refused) {
		buf_wipe(&s.rb);
		buf_wipe(&s.plain);
	}
	buf_free(&s.rb);
	buf_free(&s.plain);
	buf_free(&s.out);
}
