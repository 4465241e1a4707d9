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

void respscan_forward(const struct dlp *d, const struct respscan_io *io, const char *method,
		      struct respscan_result *res)
{
	struct buf rb = { 0 }, out = { 0 }, plain = { 0 };
	_cleanup_(stream_freep) struct dlp_stream *st = NULL;
	struct http_response resp;
	char what[160];

	memset(res, 0, sizeof(*res));
	if (buf_reserve(&rb, RS_READ - 1) < 0)
		goto oom;

	/* The head, after any number of interim (1xx) ones: each is scanned
	 * before it goes out (103 Early Hints may echo a header too). */
	for (;;) {
		int r = 0;
		if (rb.len) {
			struct error err = { 0 };
			r = http_parse_response(rb.data, rb.len, method, &resp, &err);
			if (r < 0) {
				res->bad_gateway = true;
				goto out;
			}
		}
		if (r == 0) {
			if (up_fill(io, &rb) <= 0) {
				res->bad_gateway = true;
				goto out;
			}
			continue;
		}
		if (dlp_scan_secrets(d, (const uint8_t *)rb.data, resp.head_len, what, sizeof(what))) {
			refuse(res, "the response head carries a secret", what);
			goto out;
		}
		if (resp.status >= 100 && resp.status < 200 && resp.status != 101) {
			if (!io->down_write(io->ctx, rb.data, resp.head_len))
				goto out;
			res->down += resp.head_len;
			buf_consume(&rb, resp.head_len);
			continue;
		}
		break;
	}
	res->status = resp.status;
	/* WARNING: each refusal below comes before a byte of the final
	 * response went out: the caller can still answer 502. */
	if (resp.status == 101) {
		/* Past the switch the bytes are another protocol's frames,
		 * which the scanner cannot follow. */
		refuse(res, "a response from a credential's endpoint switches protocols, which cannot be scanned", NULL);
		goto out;
	}
	if (resp.status == 206) {
		/* Range was removed from the request (respscan_prepare); a
		 * slice would carry a piece of a secret that no needle names. */
		refuse(res, "partial content from a credential's endpoint", NULL);
		goto out;
	}
	char coding[80];
	if (resp.body != HTTP_BODY_NONE && respscan_coded(resp.headers, resp.n_headers, coding, sizeof(coding))) {
		refuse(res, "a response from a credential's endpoint in a coding the scanner cannot read", coding);
		goto out;
	}

	/* The head goes out with the first body bytes the window releases,
	 * so a small response is scanned whole before anything is sent. */
	if (buf_append(&out, rb.data, resp.head_len) < 0)
		goto oom;
	buf_consume(&rb, resp.head_len);
	if (resp.body == HTTP_BODY_NONE) {
		if (!flush(io, &out, res))
			goto out;
		res->complete = rb.len == 0; /* bytes past a bodiless response: out of step */
		res->upstream_ok = res->complete && resp.keep_alive;
		goto out;
	}
	if (dlp_stream_new(d, &st) < 0)
		goto oom;
	/* A chunked body is scanned as decoded and framed anew: chunk-size
	 * lines and extensions cannot split a secret from the scanner, and
	 * trailers (fields after the scan of the head) are dropped. */
	bool chunked = resp.body == HTTP_BODY_CHUNKED;
	struct http_chunked ch = { 0 };
	uint64_t left = resp.body == HTTP_BODY_LENGTH ? resp.content_length : 0;
	bool done = resp.body == HTTP_BODY_LENGTH && left == 0, stalled = false;
	while (!done) {
		/* Read when everything buffered is used, or when the framing
		 * needs more than it holds (a chunk-size line cut short). */
		if (rb.len == 0 || stalled) {
			ssize_t n = up_fill(io, &rb);
			/* A body until close ends however the connection does
			 * (a server that skips TLS close_notify too): what was
			 * held back is scanned already. */
			if (n <= 0 && resp.body == HTTP_BODY_EOF) {
				done = true;
				break;
			}
			if (n <= 0)
				goto cut;
		}
		const uint8_t *data = (const uint8_t *)rb.data;
		size_t dlen = 0, used = 0;
		switch (resp.body) {
		case HTTP_BODY_LENGTH:
			used = dlen = rb.len < left ? rb.len : (size_t)left;
			left -= dlen;
			done = left == 0;
			break;
		case HTTP_BODY_CHUNKED: {
			buf_reset(&plain);
			int r = http_chunked_decode(&ch, rb.data, rb.len, &used, &plain);
			if (r < 0)
				goto cut;
			data = (const uint8_t *)plain.data;
			dlen = plain.len;
			done = r == 1;
			break;
		}
		case HTTP_BODY_EOF:
			used = dlen = rb.len;
			break;
		case HTTP_BODY_NONE:
			break;
		}
		const uint8_t *rel;
		size_t rel_len;
		int r = dlp_stream_feed(st, data, dlen, &rel, &rel_len, what, sizeof(what));
		buf_consume(&rb, used);
		stalled = used == 0;
		if (r != 0) {
			if (r < 0)
				goto oom;
			refuse(res, "the response body carries a secret", what);
			goto out;
		}
		if (put_body(&out, chunked, rel, rel_len) < 0)
			goto oom;
		if (rel_len && !flush(io, &out, res))
			goto out;
	}
	const uint8_t *rel;
	size_t rel_len;
	dlp_stream_end(st, &rel, &rel_len);
	if (put_body(&out, chunked, rel, rel_len) < 0 || (chunked && buf_puts(&out, "0\r\n\r\n") < 0))
		goto oom;
	if (!flush(io, &out, res))
		goto out;
	res->complete = resp.body != HTTP_BODY_EOF && rb.len == 0;
	res->upstream_ok = res->complete && resp.keep_alive;
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
		buf_wipe(&rb);
		buf_wipe(&plain);
	}
	buf_free(&rb);
	buf_free(&plain);
	buf_free(&out);
}
