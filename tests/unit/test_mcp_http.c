/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for MCP over Streamable HTTP (src/proxy/mcp_http.c): the SSE
 * decoder (line endings, joined data lines, kept and dropped fields,
 * bounds, byte-at-a-time feeding), the agreement of the 2026-07-28
 * routing headers with the message, the chunked-body decoder and the
 * upstream head's framing. Each refusal sits next to the neighbour that
 * must pass.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/mcp_http.h"
#include "policy/policy.h"
#include "policy/import/doc.h"
#include "util/buf.h"
#include "util/cleanup.h"

/* ---- SSE ---- */

struct events {
	struct buf all; /* "data|fields" per event, each ending in "\x1e" */
	size_t n;
};

static int collect(void *ctx, const struct mcp_sse_event *ev)
{
	struct events *e = ctx;
	e->n++;
	assert_int_equal(strlen(ev->data), ev->len);
	assert_int_equal(strlen(ev->fields), ev->fields_len);
	assert_int_equal(buf_append(&e->all, ev->data, ev->len), 0);
	assert_int_equal(buf_puts(&e->all, "|"), 0);
	assert_int_equal(buf_append(&e->all, ev->fields, ev->fields_len), 0);
	assert_int_equal(buf_puts(&e->all, "\x1e"), 0);
	return 0;
}

/* Feed text whole, and again a byte at a time: the same events. */
static void sse_both(const char *text, size_t len, const char *want, size_t want_n)
{
	struct mcp_sse s = { 0 };
	struct events e = { 0 };
	assert_int_equal(mcp_sse_feed(&s, text, len, collect, &e), 0);
	assert_int_equal(e.n, want_n);
	assert_string_equal(e.all.data ? e.all.data : "", want);
	mcp_sse_free(&s);
	buf_free(&e.all);

	struct events e1 = { 0 };
	for (size_t i = 0; i < len; i++)
		assert_int_equal(mcp_sse_feed(&s, text + i, 1, collect, &e1), 0);
	assert_int_equal(e1.n, want_n);
	assert_string_equal(e1.all.data ? e1.all.data : "", want);
	mcp_sse_free(&s);
	buf_free(&e1.all);
}

#define SSE(text, want, n) sse_both(text, sizeof(text) - 1, want, n)

static void test_sse_events(void **state)
{
	(void)state;
	SSE("data: {\"a\":1}\n\n", "{\"a\":1}|\x1e", 1);
	/* No space after the colon, and only one space is removed. */
	SSE("data:x\n\ndata:  y\n\n", "x|\x1e y|\x1e", 2);
	/* Several data lines are one message, joined by LF. */
	SSE("data: {\"a\":\ndata: 1}\n\n", "{\"a\":\n1}|\x1e", 1);
	/* CRLF and lone CR end lines too. */
	SSE("data: a\r\n\r\ndata: b\r\rdata: c\r\n\n", "a|\x1e" "b|\x1e" "c|\x1e", 3);
	/* Comments (keep-alives) and events without data are dropped; an
	 * unfinished event is not dispatched. */
	SSE(": ping\n\nevent: x\n\ndata: a\n\ndata: b\n", "a|\x1e", 1);
	/* event and id are kept for the event they belong to, in order. */
	SSE("event: message\nid: 7\ndata: m\n\ndata: n\n\n", "m|event: message\nid: 7\n\x1e" "n|\x1e", 2);
	/* retry: only digits; an id with a control character is dropped. */
	SSE("retry: 100\ndata: a\n\nretry: 1x\nid: a\x01z\ndata: b\n\n", "a|retry: 100\n\x1e" "b|\x1e", 2);
	/* Unknown fields are ignored; "data" alone is an empty data line. */
	SSE("foo: bar\ndata\n\n", "|\x1e", 1);
	/* A BOM at the very start only. */
	SSE("\xef\xbb\xbf" "data: a\n\n", "a|\x1e", 1);
	/* "datax:" is not a data field. */
	SSE("datax: a\ndata: b\n\n", "b|\x1e", 1);
}

static int fail_cb(void *ctx, const struct mcp_sse_event *ev)
{
	(void)ev;
	(*(int *)ctx)++;
	return -EPIPE;
}

static void test_sse_bounds(void **state)
{
	(void)state;
	struct mcp_sse s = { 0 };
	struct events e = { 0 };
	/* One line over the bound: refused, and stays refused. */
	size_t big = MCP_HTTP_MAX_MESSAGE + 64;
	char *p = malloc(big + 1);
	assert_non_null(p);
	memcpy(p, "data: ", 6);
	memset(p + 6, 'x', big - 6);
	assert_int_equal(mcp_sse_feed(&s, p, big, collect, &e), -EMSGSIZE);
	assert_int_equal(mcp_sse_feed(&s, "\n\n", 2, collect, &e), -EMSGSIZE);
	assert_int_equal(e.n, 0);
	mcp_sse_free(&s);
	/* Many data lines whose total is over the bound: refused too. */
	size_t half = MCP_HTTP_MAX_MESSAGE / 2 + 8;
	memset(p + 6, 'y', half);
	p[6 + half] = '\n';
	assert_int_equal(mcp_sse_feed(&s, p, 6 + half + 1, collect, &e), 0);
	assert_int_equal(mcp_sse_feed(&s, p, 6 + half + 1, collect, &e), -EMSGSIZE);
	assert_int_equal(e.n, 0);
	mcp_sse_free(&s);
	/* The neighbour: a message at the bound passes. */
	size_t at = MCP_HTTP_MAX_MESSAGE;
	char *q = malloc(6 + at + 2);
	assert_non_null(q);
	memcpy(q, "data: ", 6);
	memset(q + 6, 'z', at);
	memcpy(q + 6 + at, "\n\n", 2);
	assert_int_equal(mcp_sse_feed(&s, q, 6 + at + 2, collect, &e), 0);
	assert_int_equal(e.n, 1);
	mcp_sse_free(&s);
	buf_free(&e.all);
	free(p);
	free(q);
	/* The callback's error stops the feed. */
	int calls = 0;
	assert_int_equal(mcp_sse_feed(&s, "data: a\n\ndata: b\n\n", 18, fail_cb, &calls), -EPIPE);
	assert_int_equal(calls, 1);
	mcp_sse_free(&s);
}

/* ---- header agreement ---- */

static struct imp_node *msg(const char *json)
{
	struct imp_node *m = NULL;
	struct error err = { 0 };
	assert_int_equal(imp_json_parse("t", json, strlen(json), &m, &err), 0);
	return m;
}

#define H(n, v) { n, sizeof(n) - 1, v, sizeof(v) - 1 }

static bool agree(const char *json, const struct http_header *h, size_t n, char *why)
{
	_cleanup_imp_node_ struct imp_node *m = msg(json);
	why[0] = '\0';
	return mcp_http_headers_agree(h, n, m, why, 256);
}

static void test_headers_agree(void **state)
{
	(void)state;
	char why[256];
	const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}";
	const char *read = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///a\"}}";
	const char *v26 = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
			  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
	const char *resp = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";

	/* No headers: the 2025-11-25 revision has none. */
	assert_true(agree(call, NULL, 0, why));
	struct http_header ok[] = { H("Mcp-Method", "tools/call"), H("Mcp-Name", "echo") };
	assert_true(agree(call, ok, 2, why));
	struct http_header lower[] = { H("mcp-method", "tools/call"), H("MCP-NAME", "echo") };
	assert_true(agree(call, lower, 2, why));

	struct http_header bad_m[] = { H("Mcp-Method", "tools/list"), H("Mcp-Name", "echo") };
	assert_false(agree(call, bad_m, 2, why));
	assert_non_null(strstr(why, "Mcp-Method tools/list disagrees with the message's method tools/call"));
	struct http_header bad_n[] = { H("Mcp-Method", "tools/call"), H("Mcp-Name", "rm") };
	assert_false(agree(call, bad_n, 2, why));
	assert_non_null(strstr(why, "Mcp-Name rm disagrees with the message's params.name echo"));
	/* Case matters in the values: a tool named Echo is another tool. */
	struct http_header case_n[] = { H("Mcp-Name", "Echo") };
	assert_false(agree(call, case_n, 1, why));
	/* A prefix is not agreement. */
	struct http_header prefix[] = { H("Mcp-Name", "ech") };
	assert_false(agree(call, prefix, 1, why));

	/* resources/read: the name is the uri. */
	struct http_header uri_ok[] = { H("Mcp-Method", "resources/read"), H("Mcp-Name", "file:///a") };
	assert_true(agree(read, uri_ok, 2, why));
	struct http_header uri_bad[] = { H("Mcp-Method", "resources/read"), H("Mcp-Name", "file:///b") };
	assert_false(agree(read, uri_bad, 2, why));
	assert_non_null(strstr(why, "params.uri"));

	/* Given twice: which one would the server read? */
	struct http_header dup[] = { H("Mcp-Method", "tools/call"), H("Mcp-Method", "tools/call") };
	assert_false(agree(call, dup, 2, why));
	assert_non_null(strstr(why, "more than once"));

	/* A response carries no method: a method header is a disagreement. */
	struct http_header on_resp[] = { H("Mcp-Method", "tools/call") };
	assert_false(agree(resp, on_resp, 1, why));
	assert_true(agree(resp, NULL, 0, why));

	/* MCP-Protocol-Version against _meta. */
	struct http_header v_ok[] = { H("MCP-Protocol-Version", "2026-07-28"), H("Mcp-Method", "tools/call"),
				      H("Mcp-Name", "echo") };
	assert_true(agree(v26, v_ok, 3, why));
	struct http_header v_bad[] = { H("MCP-Protocol-Version", "2025-11-25"), H("Mcp-Method", "tools/call"),
				       H("Mcp-Name", "echo") };
	assert_false(agree(v26, v_bad, 3, why));
	assert_non_null(strstr(why, "MCP-Protocol-Version 2025-11-25 disagrees"));
	/* 2026-07-28 routes by the headers: they must be there. */
	struct http_header v_no_m[] = { H("MCP-Protocol-Version", "2026-07-28"), H("Mcp-Name", "echo") };
	assert_false(agree(v26, v_no_m, 2, why));
	assert_non_null(strstr(why, "needs the Mcp-Method header"));
	struct http_header v_no_n[] = { H("MCP-Protocol-Version", "2026-07-28"), H("Mcp-Method", "tools/call") };
	assert_false(agree(v26, v_no_n, 2, why));
	assert_non_null(strstr(why, "needs the Mcp-Name header"));
	/* Only the header says 2026-07-28: the same holds. */
	struct http_header hv_only[] = { H("MCP-Protocol-Version", "2026-07-28") };
	assert_false(agree(call, hv_only, 1, why));
	/* An older version with no routing headers passes. */
	struct http_header old[] = { H("MCP-Protocol-Version", "2025-11-25") };
	assert_true(agree(call, old, 1, why));
	/* A _meta version that is not a string is refused. */
	assert_false(agree("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
			   "{\"io.modelcontextprotocol/protocolVersion\":7}}}",
			   NULL, 0, why));
}

/* ---- chunked ---- */

static int dechunk_all(const char *p, size_t n, struct buf *out, bool bytewise)
{
	struct http_chunked d = { 0 };
	size_t used = 0;
	if (!bytewise)
		return http_chunked_decode(&d, p, n, &used, out);
	for (size_t i = 0; i < n; i++) {
		int r = http_chunked_decode(&d, p + i, 1, &used, out);
		if (r != 0)
			return r;
	}
	return 0;
}

static void test_dechunk(void **state)
{
	(void)state;
	static const char ok[] = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n";
	for (int bw = 0; bw < 2; bw++) {
		struct buf out = { 0 };
		assert_int_equal(dechunk_all(ok, sizeof(ok) - 1, &out, bw), bw ? 1 : 1);
		assert_string_equal(out.data, "hello world");
		buf_free(&out);
	}
	struct buf out = { 0 };
	struct http_chunked d = { 0 };
	size_t used = 0;
	/* Bytes after the end are not consumed. */
	assert_int_equal(http_chunked_decode(&d, "1\r\na\r\n0\r\n\r\nGET", 14, &used, &out), 1);
	assert_int_equal(used, 11);
	buf_free(&out);
	/* Malformed framing, and what the proxy's framing refuses (BWS
	 * before the extension, a bare LF in it): the gateway reads a body
	 * exactly as the proxy delimited it. */
	const char *bad[] = { "x\r\n", "5\nhello\r\n", "2\r\nabc\r\n", "\r\n", "1234567890abcdef0\r\n",
			      "1\r\na\r\n0\r\n\n", "1 ;x\r\na\r\n", "1\t\r\na\r\n", "1;a\nb\r\na\r\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct http_chunked z = { 0 };
		assert_true(http_chunked_decode(&z, bad[i], strlen(bad[i]), &used, &out) < 0);
		buf_free(&out);
	}
}

static void test_fix_head(void **state)
{
	(void)state;
	struct buf h = { 0 };
	assert_int_equal(buf_puts(&h, "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 99\r\n"
				      "transfer-encoding: chunked\r\nAccept-Encoding: gzip\r\nMcp-Method: x\r\n\r\n"),
			 0);
	assert_int_equal(mcp_http_fix_head(&h, true, 12), 0);
	assert_string_equal(h.data, "POST /mcp HTTP/1.1\r\nHost: a\r\nMcp-Method: x\r\nContent-Length: 12\r\n\r\n");
	assert_int_equal(mcp_http_fix_head(&h, false, 0), 0);
	assert_string_equal(h.data, "POST /mcp HTTP/1.1\r\nHost: a\r\nMcp-Method: x\r\n\r\n");
	buf_free(&h);
}

/* ---- the endpoint fields ---- */

static struct policy *load(const char *net, struct error *err)
{
	struct policy *p = NULL;
	struct policy_ctx ctx = { .home = "/home/me", .cwd = "/tmp" };
	char *text = NULL;
	if (asprintf(&text,
		     "version: 1\nsandbox:\n  workspace: /tmp\nnetwork:\n  endpoints:\n%s"
		     "mcp:\n  servers:\n    ev:\n      tools:\n        - {name: echo, decision: allow}\n",
		     net) < 0)
		return NULL;
	memset(err, 0, sizeof(*err));
	int r = policy_load_buffer("p.yaml", NULL, text, strlen(text), &ctx, &p, err);
	free(text);
	return r < 0 ? NULL : p;
}

static void test_endpoint_fields(void **state)
{
	(void)state;
	struct error err;
	struct policy *p = load("    - {host: a.test, ports: [443], tls: intercept, protocol: mcp, mcp_server: ev}\n"
				"    - {host: b.test, ports: [8080], protocol: mcp, mcp_server: ev}\n"
				"    - {host: c.test, protocol: http}\n",
				&err);
	assert_non_null(p);
	assert_string_equal(p->network.endpoints[0].mcp_server, "ev");
	assert_string_equal(p->network.endpoints[1].mcp_server, "ev");
	assert_null(p->network.endpoints[2].mcp_server);
	/* Printed and read back: the same. */
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	policy_print(p, f);
	fclose(f);
	assert_non_null(strstr(out, "protocol: mcp\n      mcp_server: \"ev\"\n"));
	free(out);
	policy_free(p);

	/* On 443 without intercept the proxy could not read a message. */
	assert_null(load("    - {host: a.test, protocol: mcp, mcp_server: ev}\n", &err));
	assert_non_null(strstr(err.msg, "p.yaml:6:"));
	assert_non_null(strstr(err.msg, "network.endpoints[0].protocol: mcp needs tls: intercept"));
	assert_null(load("    - {host: a.test, ports: [80], protocol: mcp}\n", &err));
	assert_non_null(strstr(err.msg, "network.endpoints[0].mcp_server: is missing"));
	assert_null(load("    - {host: a.test, ports: [80], protocol: mcp, mcp_server: nope}\n", &err));
	assert_non_null(strstr(err.msg, "network.endpoints[0].mcp_server: \"nope\" is not an entry of mcp.servers"));
	assert_null(load("    - {host: a.test, ports: [80], mcp_server: ev}\n", &err));
	assert_non_null(strstr(err.msg, "network.endpoints[0].mcp_server: is only meaningful with protocol: mcp"));
	assert_null(load("    - {host: a.test, ports: [80], protocol: grpc}\n", &err));
	assert_non_null(strstr(err.msg, "network.endpoints[0].protocol"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sse_events),
		cmocka_unit_test(test_sse_bounds),
		cmocka_unit_test(test_headers_agree),
		cmocka_unit_test(test_dechunk),
		cmocka_unit_test(test_fix_head),
		cmocka_unit_test(test_endpoint_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
