/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for MCP over Streamable HTTP (src/proxy/mcp_http.c):
 * the SSE decoder, the chunked-body decoder and the agreement of the
 * routing headers with a message. The first byte picks the split point
 * for the incremental decoders; the rest is the input.
 *
 * Besides crashes and sanitizer reports it checks:
 *  - the SSE decoder gives the same events whether the stream comes in
 *    one piece, split in two, or a byte at a time;
 *  - every event's data is NUL-terminated at its length and no longer
 *    than the bound; its passed-on fields are printable lines;
 *  - the chunked decoder gives the same body and verdict split or whole;
 *  - header agreement on a framed message is deterministic and says why
 *    when it refuses.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"
#include "proxy/mcp_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct acc {
	struct buf all;
	size_t n;
};

static int collect(void *ctx, const struct mcp_sse_event *ev)
{
	struct acc *a = ctx;
	if (strlen(ev->data) > ev->len || ev->data[ev->len] != '\0' || ev->len > MCP_HTTP_MAX_MESSAGE + 64 ||
	    strlen(ev->fields) != ev->fields_len)
		abort();
	for (size_t i = 0; i < ev->fields_len; i++)
		if ((unsigned char)ev->fields[i] < 0x20 && ev->fields[i] != '\n')
			abort();
	if (ev->fields_len && ev->fields[ev->fields_len - 1] != '\n')
		abort();
	a->n++;
	if (buf_append(&a->all, ev->data, ev->len) < 0 || buf_append(&a->all, "\0", 1) < 0 ||
	    buf_append(&a->all, ev->fields, ev->fields_len) < 0 || buf_append(&a->all, "\0", 1) < 0)
		abort();
	return 0;
}

static int sse_run(const char *p, size_t n, size_t split, struct acc *a)
{
	struct mcp_sse s = { 0 };
	int r = 0;
	if (split == SIZE_MAX) {
		for (size_t i = 0; i < n && r == 0; i++)
			r = mcp_sse_feed(&s, p + i, 1, collect, a);
	} else {
		r = mcp_sse_feed(&s, p, split, collect, a);
		if (r == 0)
			r = mcp_sse_feed(&s, p + split, n - split, collect, a);
	}
	mcp_sse_free(&s);
	return r;
}

static int dc_run(const char *p, size_t n, size_t split, struct buf *out, size_t *total)
{
	struct http_chunked d = { 0 };
	size_t used = 0;
	int r = http_chunked_decode(&d, p, split, &used, out);
	*total = used;
	if (r == 0 && used == split) {
		r = http_chunked_decode(&d, p + split, n - split, &used, out);
		*total += used;
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *p = (const char *)data + 1;
	size_t n = size - 1, split = n ? data[0] % (n + 1) : 0;

	struct acc whole = { 0 }, two = { 0 }, bytes = { 0 };
	int r1 = sse_run(p, n, n, &whole);
	int r2 = sse_run(p, n, split, &two);
	int r3 = n <= 4096 ? sse_run(p, n, SIZE_MAX, &bytes) : r1;
	if (r1 != r2 || whole.n != two.n || whole.all.len != two.all.len ||
	    (whole.all.len && memcmp(whole.all.data, two.all.data, whole.all.len)))
		abort();
	if (n <= 4096 && (r1 != r3 || whole.n != bytes.n || whole.all.len != bytes.all.len ||
			  (whole.all.len && memcmp(whole.all.data, bytes.all.data, whole.all.len))))
		abort();
	buf_free(&whole.all);
	buf_free(&two.all);
	buf_free(&bytes.all);

	struct buf b1 = { 0 }, b2 = { 0 };
	size_t u1 = 0, u2 = 0;
	int d1 = dc_run(p, n, n, &b1, &u1), d2 = dc_run(p, n, split, &b2, &u2);
	/* A split only matters to where a failure is noticed. */
	if ((d1 == 1) != (d2 == 1) || (d1 == 1 && (u1 != u2 || b1.len != b2.len ||
						   (b1.len && memcmp(b1.data, b2.data, b1.len)))))
		abort();
	buf_free(&b1);
	buf_free(&b2);

	/* Headers: the input's first line as Mcp-Name, the rest as the
	 * message. */
	const char *nl = memchr(p, '\n', n);
	if (nl) {
		struct imp_node *m = NULL;
		struct error err = { 0 };
		size_t hl = (size_t)(nl - p);
		if (mcp_frame_parse(nl + 1, n - hl - 1, &m, &err) == MCP_FRAME_OK) {
			struct http_header h[] = { { "Mcp-Name", 8, p, hl }, { "Mcp-Method", 10, "tools/call", 10 } };
			char w1[256] = "", w2[256] = "";
			bool a1 = mcp_http_headers_agree(h, 2, m, w1, sizeof(w1));
			bool a2 = mcp_http_headers_agree(h, 2, m, w2, sizeof(w2));
			if (a1 != a2 || (!a1 && (!w1[0] || strcmp(w1, w2))))
				abort();
		}
		imp_node_free(m);
	}
	return 0;
}
