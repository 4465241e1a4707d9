/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the HTTP head parser: every request form, every refusal
 * (with its status and message) next to the legitimate neighbour that
 * must still pass, pipelining, incremental feeding, the limits at and one
 * past, responses, the upstream head, and chunked framing split at every
 * byte.
 *
 * Every parse goes through a heap copy of exactly the bytes given, so a
 * read past `len` is an ASan report, and every proper prefix of each test
 * message is parsed too: it must give "need more" or the very same
 * verdict as the whole message.
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

#include "net/http.h"
#include "util/buf.h"
#include "util/cleanup.h"

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

static struct http_request req;
static struct http_response resp;

struct verdict {
	int r;
	int status;
	struct error err;
};

/* Parse s[0..n) from a heap copy of exactly n bytes. */
static struct verdict parse_n(const char *s, size_t n, struct http_request *out)
{
	struct verdict v = { 0 };
	char *copy = malloc(n ? n : 1);

	assert_non_null(copy);
	memcpy(copy, s, n);
	v.status = -1;
	v.r = http_parse_request(copy, n, out, &v.status, &v.err);
	free(copy);
	/* the struct points into the freed copy; only the verdict is used */
	return v;
}

/* Every proper prefix gives 0 or exactly the verdict of the whole. */
static void check_prefixes(const char *s, size_t n, const struct verdict *whole)
{
	static struct http_request tmp;

	for (size_t k = 0; k < n; k++) {
		struct verdict v = parse_n(s, k, &tmp);
		if (v.r == 0) {
			assert_int_equal(v.status, 0);
			continue;
		}
		if (v.r != whole->r || v.status != whole->status ||
		    strcmp(v.err.msg, whole->err.msg) != 0)
			fail_msg("prefix of %zu bytes: %d %d \"%s\"; whole message: %d %d \"%s\"", k,
				 v.r, v.status, v.err.msg, whole->r, whole->status, whole->err.msg);
	}
}

/* s must be one complete valid head; req is filled from s itself (the
 * string literal outlives the struct). */
static const struct http_request *ok_len(const char *s, size_t n)
{
	struct verdict v = parse_n(s, n, &req);

	if (v.r < 0)
		fail_msg("refused (%d): %s", v.status, v.err.msg);
	assert_int_equal(v.r, (int)n);
	assert_int_equal(v.status, 0);
	check_prefixes(s, n, &v);
	struct error err = { 0 };
	int status = -1;
	assert_int_equal(http_parse_request(s, n, &req, &status, &err), (int)n);
	assert_int_equal(req.head_len, n);
	return &req;
}

#define OK(s) ok_len((s), strlen(s))

static void bad_len(const char *s, size_t n, int status, const char *msg)
{
	static struct http_request tmp;
	struct verdict v = parse_n(s, n, &tmp);

	if (v.r >= 0)
		fail_msg("accepted (%d), expected %d: %s", v.r, status, msg);
	assert_int_equal(v.status, status);
	assert_int_equal(v.r, -v.err.code);
	switch (status) {
	case 414:
	case 431:
		assert_int_equal(v.r, -EMSGSIZE);
		break;
	case 501:
	case 505:
		assert_int_equal(v.r, -ENOTSUP);
		break;
	default:
		assert_int_equal(v.r, -EINVAL);
	}
	assert_string_equal(v.err.msg, msg);
	check_prefixes(s, n, &v);
}

#define BAD(s, status, msg) bad_len((s), strlen(s), (status), (msg))

/* "POST / HTTP/1.1\r\nHost: h\r\n" + extra + "\r\n" (POST: a method
 * whose body has a meaning, so that framing fields are judged alone) */
static char *with_headers(const char *extra)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "POST / HTTP/1.1\r\nHost: h\r\n%s\r\n", extra);
	return buf;
}

#define OKH(extra) OK(with_headers(extra))
#define BADH(extra, status, msg) BAD(with_headers(extra), (status), (msg))

static void assert_mem(const char *p, size_t n, const char *expected)
{
	if (!expected) {
		assert_null(p);
		assert_int_equal(n, 0);
		return;
	}
	assert_non_null(p);
	if (n != strlen(expected) || memcmp(p, expected, n) != 0)
		fail_msg("\"%.*s\" != \"%s\"", (int)n, p, expected);
}

/* ---------------------------------------------------------------- */
/* Valid requests                                                    */

static void test_origin_form(void **state)
{
	const struct http_request *r = OK("GET /a/b?x=1&y=2 HTTP/1.1\r\n"
					  "Host: Example.COM.\r\n"
					  "User-Agent:  curl/8 \t\r\n"
					  "X-Empty:\r\n"
					  "\r\n");
	(void)state;

	assert_string_equal(r->method, "GET");
	assert_int_equal(r->form, HTTP_TARGET_ORIGIN);
	assert_string_equal(r->scheme, "");
	assert_string_equal(r->host, "example.com");
	assert_int_equal(r->port, 80);
	assert_false(r->port_explicit);
	assert_mem(r->path, r->path_len, "/a/b");
	assert_mem(r->query, r->query_len, "x=1&y=2");
	assert_int_equal(r->minor, 1);
	assert_int_equal(r->n_headers, 3);
	assert_mem(r->headers[0].name, r->headers[0].name_len, "Host");
	assert_mem(r->headers[0].value, r->headers[0].value_len, "Example.COM.");
	assert_mem(r->headers[1].name, r->headers[1].name_len, "User-Agent");
	assert_mem(r->headers[1].value, r->headers[1].value_len, "curl/8");
	assert_mem(r->headers[2].name, r->headers[2].name_len, "X-Empty");
	assert_int_equal(r->headers[2].value_len, 0);
	assert_int_equal(r->body, HTTP_BODY_NONE);
	assert_true(r->keep_alive);
	assert_false(r->upgrade);
	assert_false(r->upgrade_websocket);
	assert_false(r->expect_continue);

	r = OK("GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n");
	assert_int_equal(r->port, 8080);
	assert_true(r->port_explicit);
	assert_mem(r->path, r->path_len, "/");
	assert_null(r->query);

	/* an empty query is still a query */
	r = OK("GET /p? HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_mem(r->path, r->path_len, "/p");
	assert_non_null(r->query);
	assert_int_equal(r->query_len, 0);
}

static void test_absolute_form(void **state)
{
	const struct http_request *r;
	(void)state;

	r = OK("GET http://Example.com:8080/p/q?s=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n");
	assert_int_equal(r->form, HTTP_TARGET_ABSOLUTE);
	assert_string_equal(r->scheme, "http");
	assert_string_equal(r->host, "example.com");
	assert_int_equal(r->port, 8080);
	assert_true(r->port_explicit);
	assert_mem(r->path, r->path_len, "/p/q");
	assert_mem(r->query, r->query_len, "s=1");

	/* scheme case-insensitive; empty path is "/"; default port */
	r = OK("GET HTTPS://a.example HTTP/1.1\r\nHost: a.example:443\r\n\r\n");
	assert_string_equal(r->scheme, "https");
	assert_int_equal(r->port, 443);
	assert_false(r->port_explicit);
	assert_mem(r->path, r->path_len, "/");
	assert_null(r->query);

	r = OK("GET http://a?x HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_mem(r->path, r->path_len, "/");
	assert_mem(r->query, r->query_len, "x");

	/* Host agrees once both sides are normalised */
	OK("GET http://a/ HTTP/1.1\r\nHost: A:80\r\n\r\n");
	OK("GET http://a:80/ HTTP/1.1\r\nHost: a\r\n\r\n");
	OK("GET http://a./ HTTP/1.1\r\nHost: a\r\n\r\n");
	OK("GET https://a/ HTTP/1.1\r\nHost: a:443\r\n\r\n");

	/* HTTP/1.0 may omit Host: the target names the host */
	r = OK("GET http://a.example/ HTTP/1.0\r\n\r\n");
	assert_string_equal(r->host, "a.example");
	assert_int_equal(r->minor, 0);
	assert_false(r->keep_alive);
}

static void test_authority_form(void **state)
{
	const struct http_request *r;
	(void)state;

	r = OK("CONNECT Example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
	assert_string_equal(r->method, "CONNECT");
	assert_int_equal(r->form, HTTP_TARGET_AUTHORITY);
	assert_string_equal(r->scheme, "");
	assert_string_equal(r->host, "example.com");
	assert_int_equal(r->port, 443);
	assert_true(r->port_explicit);
	assert_null(r->path);
	assert_int_equal(r->path_len, 0);
	assert_null(r->query);
	assert_int_equal(r->body, HTTP_BODY_NONE);

	r = OK("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:DB8::1]:8443\r\n\r\n");
	assert_string_equal(r->host, "2001:db8::1");
	assert_int_equal(r->port, 8443);

	/* a Host without port names the same host */
	OK("CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n");
	/* "Content-Length: 0" is no content */
	r = OK("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 0\r\n\r\n");
	assert_int_equal(r->body, HTTP_BODY_NONE);
	/* HTTP/1.0 CONNECT without Host */
	OK("CONNECT a:443 HTTP/1.0\r\n\r\n");
}

static void test_asterisk_form(void **state)
{
	const struct http_request *r = OK("OPTIONS * HTTP/1.1\r\nHost: a:8080\r\n\r\n");
	(void)state;

	assert_int_equal(r->form, HTTP_TARGET_ASTERISK);
	assert_mem(r->path, r->path_len, "*");
	assert_null(r->query);
	assert_string_equal(r->host, "a");
	assert_int_equal(r->port, 8080);
}

static void test_methods(void **state)
{
	(void)state;
	/* any token: the policy decides */
	assert_string_equal(OK("get / HTTP/1.1\r\nHost: h\r\n\r\n")->method, "get");
	assert_string_equal(OK("M-SEARCH / HTTP/1.1\r\nHost: h\r\n\r\n")->method, "M-SEARCH");
	assert_string_equal(OK("PATCH / HTTP/1.1\r\nHost: h\r\n\r\n")->method, "PATCH");
	assert_string_equal(OK("A!#$%&'*+-.^_`|~9 / HTTP/1.1\r\nHost: h\r\n\r\n")->method,
			    "A!#$%&'*+-.^_`|~9");
	/* 32 characters, then 33 */
	assert_string_equal(OK("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF / HTTP/1.1\r\nHost: h\r\n\r\n")->method,
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF");
	BAD("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG / HTTP/1.1\r\nHost: h\r\n\r\n", 400,
	    "request line: method longer than 32 characters");
	BAD("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400,
	    "request line: invalid character \"(\" in the method");
	BAD("GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", 400,
	    "request line: invalid character \"\\x09\" in the method");
	BAD("G\xc3\x89T / HTTP/1.1\r\nHost: h\r\n\r\n", 400,
	    "request line: invalid character \"\\xc3\" in the method");
	BAD(" GET / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "request line: empty method");
	BAD("GET\r\nHost: h\r\n\r\n", 400, "request line: no request target");
}

static void test_hosts(void **state)
{
	const struct http_request *r;
	(void)state;

	r = OK("GET / HTTP/1.1\r\nHost: a-b_c.Example.\r\n\r\n");
	assert_string_equal(r->host, "a-b_c.example");
	r = OK("GET / HTTP/1.1\r\nHost: 10.0.0.1:65535\r\n\r\n");
	assert_string_equal(r->host, "10.0.0.1");
	assert_int_equal(r->port, 65535);
	r = OK("GET / HTTP/1.1\r\nHost: a:1\r\n\r\n");
	assert_int_equal(r->port, 1);
	r = OK("GET / HTTP/1.1\r\nHost: a:00080\r\n\r\n");
	assert_int_equal(r->port, 80);
	assert_true(r->port_explicit);
	r = OK("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n");
	assert_string_equal(r->host, "::1");
	assert_false(r->port_explicit);
	r = OK("GET / HTTP/1.1\r\nHost: [::FFFF:127.0.0.1]:81\r\n\r\n");
	assert_string_equal(r->host, "::ffff:127.0.0.1");
	/* zone ids, in both spellings, kept for the address layer */
	r = OK("GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]\r\n\r\n");
	assert_string_equal(r->host, "fe80::1%eth0");
	r = OK("GET / HTTP/1.1\r\nHost: [fe80::1%eth0]:8080\r\n\r\n");
	assert_string_equal(r->host, "fe80::1%eth0");
	r = OK("GET http://[FE80::1%25Eth0]:8080/ HTTP/1.1\r\nHost: [fe80::1%eth0]:8080\r\n\r\n");
	assert_string_equal(r->host, "fe80::1%eth0");

	/* 255 characters, with and without the trailing dot; then 256 */
	char name[300], msg[400];
	memset(name, 'a', sizeof(name));
	for (size_t i = 63; i < 255; i += 64)
		name[i] = '.';
	snprintf(msg, sizeof(msg), "GET / HTTP/1.1\r\nHost: %.255s\r\n\r\n", name);
	assert_int_equal(strlen(OK(msg)->host), 255);
	snprintf(msg, sizeof(msg), "GET / HTTP/1.1\r\nHost: %.255s.\r\n\r\n", name);
	assert_int_equal(strlen(OK(msg)->host), 255);
	snprintf(msg, sizeof(msg), "GET / HTTP/1.1\r\nHost: %.256s\r\n\r\n", name);
	BAD(msg, 400, "Host: host longer than 255 characters");

	BAD("GET / HTTP/1.1\r\nHost:\r\n\r\n", 400, "Host: empty host");
	BAD("GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400, "Host: empty host");
	BAD("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "Host: invalid character \" \" in host");
	BAD("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "Host: invalid character \"/\" in host");
	BAD("GET / HTTP/1.1\r\nHost: a%2eb\r\n\r\n", 400, "Host: invalid character \"%\" in host");
	BAD("GET / HTTP/1.1\r\nHost: a\xc3\xa9\r\n\r\n", 400,
	    "Host: invalid character \"\\xc3\" in host");
	BAD("GET / HTTP/1.1\r\nHost: a..b\r\n\r\n", 400, "Host: empty label in host \"a..b\"");
	BAD("GET / HTTP/1.1\r\nHost: .a\r\n\r\n", 400, "Host: empty label in host \".a\"");
	BAD("GET / HTTP/1.1\r\nHost: a..\r\n\r\n", 400, "Host: empty label in host \"a..\"");
	BAD("GET / HTTP/1.1\r\nHost: .\r\n\r\n", 400, "Host: empty label in host \".\"");
	BAD("GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400, "Host: userinfo ('@') is not allowed");
	BAD("GET / HTTP/1.1\r\nHost: a:0\r\n\r\n", 400,
	    "Host: invalid port \"0\"; a port is a decimal number from 1 to 65535");
	BAD("GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n", 400,
	    "Host: invalid port \"65536\"; a port is a decimal number from 1 to 65535");
	BAD("GET / HTTP/1.1\r\nHost: a:+80\r\n\r\n", 400,
	    "Host: invalid port \"+80\"; a port is a decimal number from 1 to 65535");
	BAD("GET / HTTP/1.1\r\nHost: a:0x50\r\n\r\n", 400,
	    "Host: invalid port \"0x50\"; a port is a decimal number from 1 to 65535");
	BAD("GET / HTTP/1.1\r\nHost: a:\r\n\r\n", 400,
	    "Host: invalid port \"\"; a port is a decimal number from 1 to 65535");
	BAD("GET / HTTP/1.1\r\nHost: a:000080\r\n\r\n", 400,
	    "Host: invalid port \"000080\"; a port is a decimal number from 1 to 65535");
	BAD("GET / HTTP/1.1\r\nHost: a:80:80\r\n\r\n", 400,
	    "Host: invalid port \"80:80\"; a port is a decimal number from 1 to 65535");
	BAD("GET / HTTP/1.1\r\nHost: ::1\r\n\r\n", 400, "Host: empty host");
	BAD("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400, "Host: unterminated IPv6 literal \"[::1\"");
	BAD("GET / HTTP/1.1\r\nHost: [::g]\r\n\r\n", 400, "Host: \"::g\" is not an IPv6 address");
	BAD("GET / HTTP/1.1\r\nHost: [1.2.3.4]\r\n\r\n", 400,
	    "Host: \"1.2.3.4\" is not an IPv6 address");
	BAD("GET / HTTP/1.1\r\nHost: [v1.x]\r\n\r\n", 400, "Host: \"v1.x\" is not an IPv6 address");
	BAD("GET / HTTP/1.1\r\nHost: []\r\n\r\n", 400, "Host: \"\" is not an IPv6 address");
	BAD("GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", 400,
	    "Host: invalid character \"x\" after IPv6 literal");
	BAD("GET / HTTP/1.1\r\nHost: [fe80::1%]\r\n\r\n", 400, "Host: empty IPv6 zone id");
	BAD("GET / HTTP/1.1\r\nHost: [fe80::1%25]\r\n\r\n", 400, "Host: empty IPv6 zone id");
	BAD("GET / HTTP/1.1\r\nHost: [fe80::1%25e%th]\r\n\r\n", 400,
	    "Host: invalid character \"%\" in IPv6 zone id");
}

static void test_connection(void **state)
{
	const struct http_request *r;
	(void)state;

	assert_true(OKH("Connection: keep-alive\r\n")->keep_alive);
	assert_false(OKH("Connection: close\r\n")->keep_alive);
	assert_false(OKH("Connection: X-Foo, CLOSE\r\n")->keep_alive);
	assert_false(OKH("Connection: keep-alive\r\nConnection: close\r\n")->keep_alive);
	assert_true(OKH("Connection: ,, x-foo ,\r\n")->keep_alive);
	assert_true(OK("GET / HTTP/1.0\r\nHost: h\r\nConnection: Keep-Alive\r\n\r\n")->keep_alive);
	assert_false(OK("GET / HTTP/1.0\r\nHost: h\r\n\r\n")->keep_alive);
	assert_false(OK("GET / HTTP/1.0\r\nHost: h\r\nConnection: keep-alive, close\r\n\r\n")
			     ->keep_alive);

	r = OKH("Connection: keep-alive, Upgrade\r\nUpgrade: WebSocket\r\n");
	assert_true(r->upgrade);
	assert_true(r->upgrade_websocket);
	r = OKH("Upgrade: websocket/13\r\nConnection: upgrade\r\n");
	assert_true(r->upgrade);
	assert_true(r->upgrade_websocket);
	/* the server picks from a list: websocket only when it is the one
	 * protocol offered, in the one Upgrade field */
	r = OKH("Upgrade: websocket/13, h2c\r\nConnection: upgrade\r\n");
	assert_true(r->upgrade);
	assert_false(r->upgrade_websocket);
	r = OKH("Upgrade: websocket\r\nUpgrade: h2c\r\nConnection: upgrade\r\n");
	assert_true(r->upgrade);
	assert_false(r->upgrade_websocket);
	r = OKH("Connection: upgrade\r\nUpgrade: h2c, websocket\r\n");
	assert_true(r->upgrade);
	assert_false(r->upgrade_websocket);
	r = OKH("Connection: upgrade\r\nUpgrade: websockets\r\n");
	assert_false(r->upgrade_websocket);
	/* both halves are needed */
	r = OKH("Upgrade: websocket\r\n");
	assert_false(r->upgrade);
	assert_false(r->upgrade_websocket);
	r = OKH("Connection: upgrade\r\n");
	assert_false(r->upgrade);
	/* ignored in HTTP/1.0 (RFC 9110 §7.8) */
	r = OK("GET / HTTP/1.0\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n");
	assert_false(r->upgrade);
	assert_false(r->upgrade_websocket);

	assert_true(OKH("Expect: 100-Continue\r\n")->expect_continue);
	assert_false(OKH("")->expect_continue);
	/* the proxy meets 100-continue itself; any other is refused */
	BADH("Expect: 200-ok\r\n", 417, "an Expect other than one 100-continue");
	BADH("Expect: 100-continue, 200-ok\r\n", 417, "an Expect other than one 100-continue");
	BADH("Expect: 100-continue\r\nExpect: 100-continue\r\n", 417, "an Expect other than one 100-continue");
	BADH("Expect: \r\n", 417, "an Expect other than one 100-continue");
	/* ignored in HTTP/1.0 (RFC 9110 §10.1.1) */
	assert_false(OK("POST http://h/ HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n")->expect_continue);

	BADH("Connection: a b\r\n", 400, "Connection: \"a b\" is not a list of options");
	BADH("Connection: close;x\r\n", 400, "Connection: \"close;x\" is not a list of options");
	/* a framing field dropped as "hop-by-hop" would desync the next hop */
	BADH("Connection: close, Content-Length\r\nContent-Length: 3\r\n", 400,
	     "Connection: lists \"Content-Length\", which is not a hop-by-hop field");
	BADH("Connection: transfer-encoding\r\n", 400,
	     "Connection: lists \"transfer-encoding\", which is not a hop-by-hop field");
	BADH("Connection: HOST\r\n", 400, "Connection: lists \"HOST\", which is not a hop-by-hop field");
	OKH("Connection: X-Content-Length\r\n");
}

/* ---------------------------------------------------------------- */
/* Framing                                                           */

static void test_content_length(void **state)
{
	const struct http_request *r;
	(void)state;

	r = OK("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n");
	assert_int_equal(r->body, HTTP_BODY_LENGTH);
	assert_int_equal(r->content_length, 5);
	r = OKH("Content-Length: 0\r\n");
	assert_int_equal(r->body, HTTP_BODY_LENGTH);
	assert_int_equal(r->content_length, 0);
	r = OKH("Content-Length:  007 \r\n");
	assert_int_equal(r->content_length, 7);
	r = OKH("Content-Length: 18446744073709551615\r\n");
	assert_true(r->content_length == UINT64_MAX);

	BADH("Content-Length: 18446744073709551616\r\n", 400,
	     "Content-Length: \"18446744073709551616\" is too large");
	BADH("Content-Length: 99999999999999999999999\r\n", 400,
	     "Content-Length: \"99999999999999999999999\" is too large");
	BADH("Content-Length: 5\r\nContent-Length: 5\r\n", 400, "more than one Content-Length");
	BADH("Content-Length: 5\r\ncontent-length: 6\r\n", 400, "more than one Content-Length");
	BADH("Content-Length: 5, 5\r\n", 400,
	     "Content-Length: \"5, 5\" is a list; exactly one length is allowed");
	BADH("Content-Length: 5,\r\n", 400,
	     "Content-Length: \"5,\" is a list; exactly one length is allowed");
	BADH("Content-Length: abc\r\n", 400, "Content-Length: \"abc\" is not a decimal number");
	BADH("Content-Length: +5\r\n", 400, "Content-Length: \"+5\" is not a decimal number");
	BADH("Content-Length: -1\r\n", 400, "Content-Length: \"-1\" is not a decimal number");
	BADH("Content-Length: 0x5\r\n", 400, "Content-Length: \"0x5\" is not a decimal number");
	BADH("Content-Length: 5 5\r\n", 400, "Content-Length: \"5 5\" is not a decimal number");
	BADH("Content-Length: \r\n", 400, "Content-Length: empty value");
}

static void test_transfer_encoding(void **state)
{
	const struct http_request *r;
	(void)state;

	r = OKH("Transfer-Encoding: chunked\r\n");
	assert_int_equal(r->body, HTTP_BODY_CHUNKED);
	assert_int_equal(OKH("Transfer-Encoding: CHUNKED\r\n")->body, HTTP_BODY_CHUNKED);
	assert_int_equal(OKH("Transfer-Encoding: gzip, chunked\r\n")->body, HTTP_BODY_CHUNKED);
	assert_int_equal(OKH("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n")->body,
			 HTTP_BODY_CHUNKED);
	assert_int_equal(OKH("Transfer-Encoding: deflate,x-gzip,compress,x-compress,chunked\r\n")->body,
			 HTTP_BODY_CHUNKED);

	BADH("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", 400,
	     "both Content-Length and Transfer-Encoding");
	BADH("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", 400,
	     "both Content-Length and Transfer-Encoding");
	BADH("Content-Length: 0\r\nTransfer-Encoding: chunked\r\n", 400,
	     "both Content-Length and Transfer-Encoding");
	BADH("Transfer-Encoding: gzip\r\n", 400, "Transfer-Encoding: the final coding must be chunked");
	BADH("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", 400,
	     "Transfer-Encoding: chunked must be the final coding");
	BADH("Transfer-Encoding: chunked, gzip\r\n", 400,
	     "Transfer-Encoding: chunked must be the final coding");
	BADH("Transfer-Encoding: chunked, chunked\r\n", 400,
	     "Transfer-Encoding: chunked must be the final coding");
	BADH("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400,
	     "Transfer-Encoding: chunked must be the final coding");
	BADH("Transfer-Encoding: foo, chunked\r\n", 501,
	     "Transfer-Encoding: unsupported transfer coding \"foo\"");
	BADH("Transfer-Encoding: identity\r\n", 501,
	     "Transfer-Encoding: unsupported transfer coding \"identity\"");
	BADH("Transfer-Encoding: xchunked\r\n", 501,
	     "Transfer-Encoding: unsupported transfer coding \"xchunked\"");
	BADH("Transfer-Encoding: chunked;q=1\r\n", 400,
	     "Transfer-Encoding: \"chunked;q=1\" is not a list of transfer codings");
	BADH("Transfer-Encoding: \"chunked\"\r\n", 400,
	     "Transfer-Encoding: \"\\\"chunked\\\"\" is not a list of transfer codings");
	BADH("Transfer-Encoding: , chunked\r\n", 400,
	     "Transfer-Encoding: \", chunked\" is not a list of transfer codings");
	BADH("Transfer-Encoding:\r\n", 400,
	     "Transfer-Encoding: \"\" is not a list of transfer codings");
	BAD("POST / HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	    "Transfer-Encoding in an HTTP/1.0 request");
	/* A tab or a space: field syntax, so no smuggling spelling. */
	assert_int_equal(OKH("Transfer-Encoding:\tchunked \r\n")->body, HTTP_BODY_CHUNKED);

	BAD("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 5\r\n\r\n", 400,
	    "CONNECT request with content");
	BAD("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	    "CONNECT request with content");

}

/* A body a server may leave unread would be read as the next request. */
static void test_bodies_on_bodiless_methods(void **state)
{
	const struct http_request *r;
	(void)state;

	static const char *const refused[] = { "GET", "HEAD", "TRACE" };
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		char s[256], msg[256];
		snprintf(msg, sizeof(msg),
			 "a body on %s, which servers may not read: it could run as a request of its own; "
			 "send it with POST",
			 refused[i]);
		snprintf(s, sizeof(s), "%s / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n", refused[i]);
		BAD(s, 400, msg);
		snprintf(s, sizeof(s), "%s / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
			 refused[i]);
		BAD(s, 400, msg);
		snprintf(s, sizeof(s), "%s / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
			 refused[i]);
		BAD(s, 400, msg);
		snprintf(s, sizeof(s), "%s http://h/ HTTP/1.0\r\nContent-Length: 1\r\n\r\n", refused[i]);
		BAD(s, 400, msg);
		/* an empty body is no body; none at all either */
		snprintf(s, sizeof(s), "%s / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", refused[i]);
		r = OK(s);
		assert_false(r->upstream_close);
		snprintf(s, sizeof(s), "%s / HTTP/1.1\r\nHost: h\r\n\r\n", refused[i]);
		assert_false(OK(s)->upstream_close);
	}
	/* methods that are case-sensitive: "get" is not GET, and is an
	 * extension method whose body goes with Connection: close */
	assert_true(OK("get / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n")->upstream_close);
	/* DELETE, OPTIONS and unknown methods: forwarded, never reused */
	assert_true(OK("DELETE / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n")->upstream_close);
	assert_true(OK("OPTIONS * HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")->upstream_close);
	assert_true(OK("FROB / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n")->upstream_close);
	assert_false(OK("DELETE / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")->upstream_close);
	assert_false(OK("DELETE / HTTP/1.1\r\nHost: h\r\n\r\n")->upstream_close);
	/* methods whose bodies have a meaning: kept alive */
	static const char *const kept[] = { "POST", "PUT", "PATCH", "PROPFIND", "REPORT", "QUERY" };
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++) {
		char s[256];
		snprintf(s, sizeof(s), "%s / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n", kept[i]);
		r = OK(s);
		assert_int_equal(r->body, HTTP_BODY_LENGTH);
		assert_false(r->upstream_close);
	}
}

/* ---------------------------------------------------------------- */
/* Lines                                                             */

static void test_line_endings(void **state)
{
	(void)state;
	BAD("GET / HTTP/1.1\nHost: h\r\n\r\n", 400, "line 1: LF without CR; lines must end in CRLF");
	BAD("GET / HTTP/1.1\r\nHost: h\n\r\n", 400, "line 2: LF without CR; lines must end in CRLF");
	BAD("GET / HTTP/1.1\r\nHost: h\r\n\n", 400, "line 3: LF without CR; lines must end in CRLF");
	BAD("GET / HTTP/1.1\n\n", 400, "line 1: LF without CR; lines must end in CRLF");
	BAD("GET / HTTP/1.1\r\r\n", 400, "line 1: CR not followed by LF");
	BAD("GET /\r HTTP/1.1\r\nHost: h\r\n\r\n", 400, "line 1: CR not followed by LF");
	BAD("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", 400, "line 3: CR not followed by LF");
	BAD("GET / HTTP/1.1\r\nHost: h\r\n\r\r\n", 400, "line 3: CR not followed by LF");
	BAD("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "empty line before the request line");
	/* the neighbour: CRLF throughout */
	OK("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
}

static void test_field_lines(void **state)
{
	const struct http_request *r;
	(void)state;

	BADH("X-A: 1\r\n folded\r\n", 400,
	     "line 4: line folding (a line starting with whitespace) is not allowed");
	BADH("X-A: 1\r\n\tfolded\r\n", 400,
	     "line 4: line folding (a line starting with whitespace) is not allowed");
	BAD("GET / HTTP/1.1\r\n Host: h\r\n\r\n", 400,
	    "line 2: line folding (a line starting with whitespace) is not allowed");
	BADH("Transfer-Encoding : chunked\r\n", 400,
	     "line 3: whitespace between header name \"Transfer-Encoding\" and ':'");
	BADH("X-A\t: 1\r\n", 400, "line 3: whitespace between header name \"X-A\" and ':'");
	BADH("X A: 1\r\n", 400, "line 3: invalid character \" \" in header name");
	BADH("X@A: 1\r\n", 400, "line 3: invalid character \"@\" in header name");
	BADH("X\xc3\xa9: 1\r\n", 400, "line 3: invalid character \"\\xc3\" in header name");
	BADH(": 1\r\n", 400, "line 3: empty header name");
	BADH("NoColon\r\n", 400, "line 3: no ':' in header line \"NoColon\"");
	BADH("X-A: a\x01" "b\r\n", 400, "line 3: control character \"\\x01\" in the value of \"X-A\"");
	BADH("X-A: a\x7f\r\n", 400, "line 3: control character \"\\x7f\" in the value of \"X-A\"");
	BADH("X-A: \x1b[0m\r\n", 400, "line 3: control character \"\\x1b\" in the value of \"X-A\"");
	static const char nul[] = "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\0b\r\n\r\n";
	bad_len(nul, sizeof(nul) - 1, 400,
		"line 3: control character \"\\x00\" in the value of \"X-A\"");
	/* neighbours: HTAB, SP, obs-text and every VCHAR are field content */
	r = OKH("X-A: a\tb c\xc3\xa9 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\r\n");
	assert_mem(r->headers[1].value, r->headers[1].value_len,
		   "a\tb c\xc3\xa9 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
	r = OKH("!#$%&'*+-.^_`|~Az09: v\r\n");
	assert_mem(r->headers[1].name, r->headers[1].name_len, "!#$%&'*+-.^_`|~Az09");
	r = OKH("X-A:v\r\n");
	assert_mem(r->headers[1].value, r->headers[1].value_len, "v");
}

static void test_versions(void **state)
{
	(void)state;
	assert_int_equal(OK("GET / HTTP/1.0\r\nHost: h\r\n\r\n")->minor, 0);
	assert_int_equal(OK("GET / HTTP/1.1\r\nHost: h\r\n\r\n")->minor, 1);
	BAD("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505,
	    "request line: \"HTTP/2.0\" is not supported; use HTTP/1.1");
	BAD("GET / HTTP/1.2\r\nHost: h\r\n\r\n", 505,
	    "request line: \"HTTP/1.2\" is not supported; use HTTP/1.1");
	BAD("GET / HTTP/0.9\r\nHost: h\r\n\r\n", 505,
	    "request line: \"HTTP/0.9\" is not supported; use HTTP/1.1");
	/* the HTTP/2 preface is a version refusal, decided on its first line */
	BAD("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505,
	    "request line: \"HTTP/2.0\" is not supported; use HTTP/1.1");
	BAD("GET / http/1.1\r\nHost: h\r\n\r\n", 400, "request line: invalid HTTP version \"http/1.1\"");
	BAD("GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400,
	    "request line: invalid HTTP version \"HTTP/1.10\"");
	BAD("GET / HTTP/1\r\nHost: h\r\n\r\n", 400, "request line: invalid HTTP version \"HTTP/1\"");
	BAD("GET / HTTP/11\r\nHost: h\r\n\r\n", 400, "request line: invalid HTTP version \"HTTP/11\"");
	BAD("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400,
	    "request line: invalid HTTP version \"HTTP/1.1 \"");
	BAD("GET /  HTTP/1.1\r\nHost: h\r\n\r\n", 400,
	    "request line: invalid HTTP version \" HTTP/1.1\"");
	BAD("GET / \r\nHost: h\r\n\r\n", 400, "request line: invalid HTTP version \"\"");
	BAD("GET /\r\n\r\n", 400, "request line: no HTTP version (HTTP/0.9 is not supported)");
	BAD("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "request line: empty request target");
}

static void test_host_rules(void **state)
{
	(void)state;
	BAD("GET / HTTP/1.1\r\n\r\n", 400, "no Host header (HTTP/1.1 requires one)");
	BAD("GET http://a/ HTTP/1.1\r\n\r\n", 400, "no Host header (HTTP/1.1 requires one)");
	BAD("CONNECT a:443 HTTP/1.1\r\n\r\n", 400, "no Host header (HTTP/1.1 requires one)");
	BAD("GET / HTTP/1.0\r\n\r\n", 400, "no Host header and no host in the request target");
	OK("GET / HTTP/1.0\r\nHost: a\r\n\r\n");
	BAD("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400, "more than one Host header");
	BAD("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "more than one Host header");
	BAD("GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n", 400,
	    "Host \"b\" disagrees with the request target");
	BAD("GET http://a/ HTTP/1.1\r\nHost: a:8080\r\n\r\n", 400,
	    "Host \"a:8080\" disagrees with the request target");
	BAD("GET http://a:8080/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "Host \"a\" disagrees with the request target");
	BAD("GET https://a/ HTTP/1.1\r\nHost: a:80\r\n\r\n", 400,
	    "Host \"a:80\" disagrees with the request target");
	BAD("GET http://a/ HTTP/1.1\r\nHost: a:443\r\n\r\n", 400,
	    "Host \"a:443\" disagrees with the request target");
	BAD("GET http://a/ HTTP/1.1\r\nHost:\r\n\r\n", 400, "Host: empty host");
	BAD("GET http://[::1]/ HTTP/1.1\r\nHost: [::2]\r\n\r\n", 400,
	    "Host \"[::2]\" disagrees with the request target");
	BAD("CONNECT a:443 HTTP/1.1\r\nHost: b:443\r\n\r\n", 400,
	    "Host \"b:443\" disagrees with the request target");
	BAD("CONNECT a:443 HTTP/1.1\r\nHost: a:80\r\n\r\n", 400,
	    "Host \"a:80\" disagrees with the request target");
}

static void test_targets(void **state)
{
	const struct http_request *r;
	(void)state;

	BAD("CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: CONNECT needs an explicit port");
	BAD("CONNECT [::1] HTTP/1.1\r\nHost: [::1]\r\n\r\n", 400,
	    "request target: CONNECT needs an explicit port");
	BAD("CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: CONNECT needs authority form host:port");
	BAD("CONNECT http://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: CONNECT needs authority form host:port");
	BAD("CONNECT * HTTP/1.1\r\nHost: a\r\n\r\n", 400, "request target: '*' is only for OPTIONS");
	BAD("CONNECT a:443/x HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid port \"443/x\"; a port is a decimal number from 1 to 65535");
	BAD("CONNECT u@a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: userinfo ('@') is not allowed");
	BAD("connect a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: authority form is only for CONNECT");
	BAD("GET example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: authority form is only for CONNECT");
	BAD("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400, "request target: '*' is only for OPTIONS");
	BAD("OPTIONS ** HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: \"**\" is not in origin, absolute, authority or asterisk form");
	BAD("GET foo HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: \"foo\" is not in origin, absolute, authority or asterisk form");
	BAD("GET http:/a HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: \"http:/a\" is not in origin, absolute, authority or asterisk form");
	BAD("GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: scheme \"ftp\" is not http or https");
	BAD("GET httpx://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: scheme \"httpx\" is not http or https");
	BAD("GET http://u:p@a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: userinfo ('@') is not allowed");
	BAD("GET http://allowed.example@evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n", 400,
	    "request target: userinfo ('@') is not allowed");
	BAD("GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n", 400, "request target: empty host");
	BAD("GET http://a:/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid port \"\"; a port is a decimal number from 1 to 65535");
	BAD("GET http://a%2e.b/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid character \"%\" in host");
	BAD("GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: fragment ('#') is not allowed");
	BAD("GET http://a/#b HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: fragment ('#') is not allowed");
	BAD("GET /a\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid character \"\\x01\"");
	BAD("GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid character \"\\xc3\"");
	BAD("GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid character \"\\x09\"");
	BAD("GET /a\x7f HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid character \"\\x7f\"");

	/* userinfo is an authority thing: '@' in a path is fine */
	r = OK("GET /users/@me HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_mem(r->path, r->path_len, "/users/@me");
	r = OK("GET http://a/x@y?u@v HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_mem(r->path, r->path_len, "/x@y");
	/* what WHATWG URL clients send unencoded */
	r = OK("GET /a|b/{c}/^`?q={\"x\":[1]}&r=\\ HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_mem(r->query, r->query_len, "q={\"x\":[1]}&r=\\");
}

static void test_percent_and_dots(void **state)
{
	const struct http_request *r;
	(void)state;

	BAD("GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid percent-encoding \"%zz\"");
	BAD("GET /a%2 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid percent-encoding \"%2\"");
	BAD("GET /a% HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid percent-encoding \"%\"");
	BAD("GET /?a=100% HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid percent-encoding \"%\"");
	BAD("GET /%g0 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
	    "request target: invalid percent-encoding \"%g0\"");
	r = OK("GET /a%2Fb/%41%e9?x=%25%20 HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_mem(r->path, r->path_len, "/a%2Fb/%41%e9");
	/* npm scoped packages and GitLab project ids encode a slash */
	OK("GET /@babel%2fcore HTTP/1.1\r\nHost: registry.npmjs.org\r\n\r\n");
	OK("GET /api/v4/projects/group%2Fproject HTTP/1.1\r\nHost: gitlab.com\r\n\r\n");

	static const char *const dots[] = {
		"/a/../b", "/a/./b",	"/..",	     "/.",	   "/a/..",	    "/a/.",
		"/a/%2e%2E/b", "/a/.%2e/b", "/a/%2e/b", "/a/..%2fb", "/a/..%2Fb", "/a/%2e%2e%2fb",
		"/a/..%5cb", "/a/..;x/b", "/a/..;/b", "/a/.;x/b",  "/a/..%3bx/b", "/a%2f..%2fb",
		"/a%2f..",	"/..?x",
	};
	for (size_t i = 0; i < ARRAY_SIZE(dots); i++) {
		char msg[200];
		snprintf(msg, sizeof(msg), "GET %s HTTP/1.1\r\nHost: a\r\n\r\n", dots[i]);
		BAD(msg, 400, "request target: dot segment (\".\" or \"..\") in path");
		snprintf(msg, sizeof(msg), "GET http://a%s HTTP/1.1\r\nHost: a\r\n\r\n", dots[i]);
		BAD(msg, 400, "request target: dot segment (\".\" or \"..\") in path");
	}
	BAD("GET /a\\b HTTP/1.1\r\nHost: a\r\n\r\n", 400, "request target: backslash in path");
	BAD("GET /a/..\\b HTTP/1.1\r\nHost: a\r\n\r\n", 400, "request target: backslash in path");
	/* neighbours: names that only contain dots, or start with them */
	static const char *const fine[] = {
		"/a/.../b", "/a/..b", "/a/.b", "/a/b..", "/.well-known/x", "/a/%2e%2e%2e",
		"/a/b.c",   "//a",    "/a/;..", "/a/x;../b", "/?../..", "/?a=/./",
	};
	for (size_t i = 0; i < ARRAY_SIZE(fine); i++) {
		char msg[200];
		snprintf(msg, sizeof(msg), "GET %s HTTP/1.1\r\nHost: a\r\n\r\n", fine[i]);
		OK(msg);
	}
}

/* ---------------------------------------------------------------- */
/* Limits                                                            */

static void put_repeat(struct buf *b, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(buf_append(b, &c, 1), 0);
}

/* A request line of exactly n bytes (CRLF excluded); the caller frees. */
static char *request_line_of(size_t n)
{
	struct buf b = { 0 };

	assert_int_equal(buf_puts(&b, "GET /"), 0);
	put_repeat(&b, 'a', n - strlen("GET /") - strlen(" HTTP/1.1"));
	assert_int_equal(buf_puts(&b, " HTTP/1.1\r\nHost: h\r\n\r\n"), 0);
	return b.data;
}

static void test_request_line_limit(void **state)
{
	(void)state;
	_cleanup_free_ char *at = request_line_of(HTTP_MAX_REQUEST_LINE);
	_cleanup_free_ char *past = request_line_of(HTTP_MAX_REQUEST_LINE + 1);

	OK(at);
	BAD(past, 414, "request line longer than 8192 bytes");
	/* refused before the line ends: 8193 bytes and no CRLF yet */
	bad_len(past, HTTP_MAX_REQUEST_LINE + 1, 414, "request line longer than 8192 bytes");
	struct error err = { 0 };
	int status = 0;
	assert_int_equal(http_parse_request(past, HTTP_MAX_REQUEST_LINE, &req, &status, &err), 0);
	/* 8192 bytes and a CR waiting for its LF: not over yet */
	at[HTTP_MAX_REQUEST_LINE] = '\r';
	assert_int_equal(http_parse_request(at, HTTP_MAX_REQUEST_LINE + 1, &req, &status, &err), 0);
}

/* A head of exactly n bytes: request line, Host, one filler field; the
 * caller frees. */
static char *head_of(size_t n)
{
	static const char pre[] = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
	struct buf b = { 0 };

	assert_int_equal(buf_puts(&b, pre), 0);
	put_repeat(&b, 'v', n - strlen(pre) - 4);
	assert_int_equal(buf_puts(&b, "\r\n\r\n"), 0);
	assert_int_equal(b.len, n);
	return b.data;
}

static void test_head_limit(void **state)
{
	(void)state;
	_cleanup_free_ char *at = head_of(HTTP_MAX_HEAD);
	_cleanup_free_ char *past = head_of(HTTP_MAX_HEAD + 1);
	struct error err = { 0 };
	int status = 0;

	assert_int_equal(http_parse_request(at, HTTP_MAX_HEAD, &req, &status, &err), HTTP_MAX_HEAD);
	assert_int_equal(req.n_headers, 2);
	assert_int_equal(http_parse_request(at, HTTP_MAX_HEAD - 1, &req, &status, &err), 0);
	assert_int_equal(http_parse_request(past, HTTP_MAX_HEAD + 1, &req, &status, &err), -EMSGSIZE);
	assert_int_equal(status, 431);
	assert_string_equal(err.msg, "header section longer than 65536 bytes");
	/* known before the end arrives: a field byte at index 65532 leaves
	 * no room for CRLF CRLF */
	status = 0;
	assert_int_equal(http_parse_request(past, HTTP_MAX_HEAD - 4, &req, &status, &err), 0);
	assert_int_equal(http_parse_request(past, HTTP_MAX_HEAD - 3, &req, &status, &err), -EMSGSIZE);
	assert_int_equal(status, 431);

	/* a field line that starts where only the final CRLF still fits */
	_cleanup_free_ char *two = head_of(HTTP_MAX_HEAD);
	memcpy(two + HTTP_MAX_HEAD - 4, "\r\nY:", 4);
	assert_int_equal(http_parse_request(two, HTTP_MAX_HEAD, &req, &status, &err), -EMSGSIZE);
	assert_int_equal(status, 431);
}

static void test_header_count_limit(void **state)
{
	(void)state;
	struct buf b = { 0 };

	assert_int_equal(buf_puts(&b, "GET / HTTP/1.1\r\nHost: h\r\n"), 0);
	for (int i = 1; i < HTTP_MAX_HEADERS; i++)
		assert_int_equal(buf_printf(&b, "X-%d: %d\r\n", i, i), 0);
	assert_int_equal(buf_puts(&b, "\r\n"), 0);
	const struct http_request *r = ok_len(b.data, b.len);
	assert_int_equal(r->n_headers, HTTP_MAX_HEADERS);

	b.len -= 2;
	assert_int_equal(buf_puts(&b, "X-Last: 1\r\n\r\n"), 0);
	bad_len(b.data, b.len, 431, "more than 128 header fields");
	buf_free(&b);
}

/* ---------------------------------------------------------------- */
/* Streams                                                           */

static void test_pipelined(void **state)
{
	static const char stream[] = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
				     "POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
				     "PUT /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
				     "3\r\nxyz\r\n0\r\n\r\n"
				     "GET /4 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
	size_t pos = 0, len = sizeof(stream) - 1;
	struct error err = { 0 };
	int status = 0, r;
	(void)state;

	r = http_parse_request(stream + pos, len - pos, &req, &status, &err);
	assert_int_equal(r, 28);
	assert_mem(req.path, req.path_len, "/1");
	assert_int_equal(req.body, HTTP_BODY_NONE);
	pos += (size_t)r;

	r = http_parse_request(stream + pos, len - pos, &req, &status, &err);
	assert_true(r > 0);
	assert_int_equal((size_t)r, req.head_len);
	assert_mem(req.path, req.path_len, "/2");
	assert_int_equal(req.body, HTTP_BODY_LENGTH);
	pos += req.head_len + req.content_length;

	r = http_parse_request(stream + pos, len - pos, &req, &status, &err);
	assert_true(r > 0);
	assert_mem(req.path, req.path_len, "/3");
	assert_int_equal(req.body, HTTP_BODY_CHUNKED);
	pos += (size_t)r;
	struct http_chunked c = { 0 };
	size_t used = 0;
	assert_int_equal(http_chunked_feed(&c, stream + pos, len - pos, &used), 1);
	assert_int_equal(used, 13);
	pos += used;

	r = http_parse_request(stream + pos, len - pos, &req, &status, &err);
	assert_int_equal((size_t)r, len - pos);
	assert_mem(req.path, req.path_len, "/4");
	assert_false(req.keep_alive);
}

/* Feed a growing buffer one byte at a time, as a proxy reading a slow
 * peer would: 0 until the head is complete, then the same result as
 * parsing it whole, also with the next message's bytes behind it. */
static void test_byte_by_byte(void **state)
{
	static const char msg[] = "POST http://a.example:8080/up?x=1 HTTP/1.1\r\n"
				  "Host: a.example:8080\r\n"
				  "Content-Length: 4\r\n"
				  "Connection: keep-alive, X-Trace\r\n"
				  "X-Trace: 1\r\n"
				  "\r\n"
				  "bodyGET / HTTP/1.1\r\n";
	size_t head = strlen(msg) - strlen("bodyGET / HTTP/1.1\r\n");
	static struct http_request whole;
	struct error err = { 0 };
	int status = 0;
	(void)state;

	assert_int_equal(http_parse_request(msg, head, &whole, &status, &err), (int)head);
	for (size_t k = 0; k <= strlen(msg); k++) {
		char *copy = malloc(k + 1);
		assert_non_null(copy);
		memcpy(copy, msg, k);
		int r = http_parse_request(copy, k, &req, &status, &err);
		if (k < head) {
			assert_int_equal(r, 0);
		} else {
			assert_int_equal(r, (int)head);
			assert_string_equal(req.method, whole.method);
			assert_string_equal(req.host, whole.host);
			assert_int_equal(req.port, whole.port);
			assert_int_equal(req.path_len, whole.path_len);
			assert_memory_equal(req.path, whole.path, req.path_len);
			assert_int_equal(req.n_headers, whole.n_headers);
			assert_int_equal(req.body, whole.body);
			assert_int_equal(req.content_length, 4);
		}
		free(copy);
	}
}

/* ---------------------------------------------------------------- */
/* Responses                                                         */

static int parse_resp(const char *s, const char *method, struct error *err)
{
	char *copy = malloc(strlen(s) + 1);
	assert_non_null(copy);
	memcpy(copy, s, strlen(s));
	int r = http_parse_response(copy, strlen(s), method, &resp, err);
	/* every prefix: 0 or the same verdict */
	for (size_t k = 0; k < strlen(s); k++) {
		static struct http_response tmp;
		struct error e2 = { 0 };
		int r2 = http_parse_response(copy, k, method, &tmp, &e2);
		if (r2 != 0 && (r2 != r || strcmp(e2.msg, err->msg) != 0))
			fail_msg("prefix %zu: %d %s; whole: %d %s", k, r2, e2.msg, r, err->msg);
	}
	free(copy);
	if (r > 0)
		assert_int_equal(r, (int)strlen(s));
	return r;
}

static const struct http_response *resp_ok(const char *s, const char *method)
{
	struct error err = { 0 };
	int r = parse_resp(s, method, &err);
	if (r <= 0)
		fail_msg("response refused (%d): %s", r, err.msg);
	/* re-parse in place so the header pointers stay valid */
	assert_int_equal(http_parse_response(s, strlen(s), method, &resp, &err), r);
	return &resp;
}

static void resp_bad(const char *s, const char *method, int code, const char *msg)
{
	struct error err = { 0 };
	int r = parse_resp(s, method, &err);
	if (r >= 0)
		fail_msg("response accepted, expected: %s", msg);
	assert_int_equal(r, -code);
	assert_int_equal(err.code, code);
	assert_string_equal(err.msg, msg);
}

static void test_response(void **state)
{
	const struct http_response *p;
	(void)state;

	p = resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\n", "GET");
	assert_int_equal(p->status, 200);
	assert_int_equal(p->minor, 1);
	assert_int_equal(p->body, HTTP_BODY_LENGTH);
	assert_int_equal(p->content_length, 5);
	assert_true(p->keep_alive);
	assert_int_equal(p->n_headers, 2);
	assert_mem(p->headers[1].value, p->headers[1].value_len, "x");

	p = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "POST");
	assert_int_equal(p->body, HTTP_BODY_CHUNKED);
	assert_true(p->keep_alive);
	p = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "GET");
	assert_int_equal(p->body, HTTP_BODY_CHUNKED);
	/* RFC 9112 §6.3: a response may end in another coding; read to close */
	p = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "GET");
	assert_int_equal(p->body, HTTP_BODY_EOF);
	assert_false(p->keep_alive);
	p = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: br-custom\r\n\r\n", "GET");
	assert_int_equal(p->body, HTTP_BODY_EOF);

	p = resp_ok("HTTP/1.1 200 OK\r\n\r\n", "GET");
	assert_int_equal(p->body, HTTP_BODY_EOF);
	assert_false(p->keep_alive);
	p = resp_ok("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", "GET");
	assert_int_equal(p->minor, 0);
	assert_false(p->keep_alive);
	p = resp_ok("HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\n", NULL);
	assert_true(p->keep_alive);
	p = resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\n", "GET");
	assert_false(p->keep_alive);

	/* no body: HEAD, 1xx, 204, 304, and 2xx to CONNECT */
	p = resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", "HEAD");
	assert_int_equal(p->body, HTTP_BODY_NONE);
	assert_int_equal(p->content_length, 500);
	assert_true(p->keep_alive);
	assert_int_equal(resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "HEAD")->body,
			 HTTP_BODY_NONE);
	assert_int_equal(resp_ok("HTTP/1.1 100 Continue\r\n\r\n", "POST")->body, HTTP_BODY_NONE);
	p = resp_ok("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		    "Connection: Upgrade\r\n\r\n",
		    "GET");
	assert_int_equal(p->status, 101);
	assert_int_equal(p->body, HTTP_BODY_NONE);
	assert_int_equal(resp_ok("HTTP/1.1 204 No Content\r\n\r\n", "DELETE")->body, HTTP_BODY_NONE);
	assert_int_equal(resp_ok("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", "GET")->body,
			 HTTP_BODY_NONE);
	assert_int_equal(resp_ok("HTTP/1.1 200 Connection established\r\n\r\n", "CONNECT")->body,
			 HTTP_BODY_NONE);
	assert_int_equal(resp_ok("HTTP/1.1 407 Auth\r\nContent-Length: 3\r\n\r\n", "CONNECT")->body,
			 HTTP_BODY_LENGTH);
	/* "head" is not HEAD: methods are case-sensitive */
	assert_int_equal(resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", "head")->body,
			 HTTP_BODY_LENGTH);

	/* status lines */
	assert_int_equal(resp_ok("HTTP/1.1 599\r\n\r\n", "GET")->status, 599);
	assert_int_equal(resp_ok("HTTP/1.1 100 \r\n\r\n", "GET")->status, 100);
	assert_int_equal(resp_ok("HTTP/1.1 404 Not \t Found \xc3\xa9\r\n\r\n", "GET")->status, 404);
	resp_bad("HTTP/1.1 099 Low\r\n\r\n", "GET", EINVAL, "status line: status code 99 is not in 100-599");
	resp_bad("HTTP/1.1 600 High\r\n\r\n", "GET", EINVAL,
		 "status line: status code 600 is not in 100-599");
	resp_bad("HTTP/1.1 20 OK\r\n\r\n", "GET", EINVAL, "status line: invalid status code \"20 OK\"");
	resp_bad("HTTP/1.1 2000 OK\r\n\r\n", "GET", EINVAL,
		 "status line: invalid status code \"2000 OK\"");
	resp_bad("HTTP/1.1 abc OK\r\n\r\n", "GET", EINVAL,
		 "status line: invalid status code \"abc OK\"");
	resp_bad("HTTP/1.1  200 OK\r\n\r\n", "GET", EINVAL,
		 "status line: invalid status code \" 200 OK\"");
	resp_bad("HTTP/1.1\r\n\r\n", "GET", EINVAL, "status line: no status code");
	resp_bad("HTTP/2 200\r\n\r\n", "GET", EINVAL, "status line: invalid HTTP version \"HTTP/2\"");
	resp_bad("HTTP/2.0 200\r\n\r\n", "GET", ENOTSUP, "status line: \"HTTP/2.0\" is not supported");
	resp_bad("HTTP/1.1 200 O\x01K\r\n\r\n", "GET", EINVAL,
		 "status line: control character \"\\x01\" in the reason phrase");
	resp_bad("\r\nHTTP/1.1 200 OK\r\n\r\n", "GET", EINVAL, "empty line before the status line");

	/* the same framing strictness as requests */
	resp_bad("HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n", "GET", EINVAL,
		 "line 1: LF without CR; lines must end in CRLF");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n Folded\r\n\r\n", "GET", EINVAL,
		 "line 3: line folding (a line starting with whitespace) is not allowed");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\n", "GET", EINVAL,
		 "line 2: whitespace between header name \"Content-Length\" and ':'");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", "GET",
		 EINVAL, "both Content-Length and Transfer-Encoding");
	resp_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", "HEAD",
		 EINVAL, "both Content-Length and Transfer-Encoding");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", "GET", EINVAL,
		 "more than one Content-Length");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\n", "GET", EINVAL,
		 "Content-Length: \"1, 1\" is a list; exactly one length is allowed");
	resp_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "GET", EINVAL,
		 "Transfer-Encoding: chunked must be the final coding");
	resp_bad("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "GET", EINVAL,
		 "Transfer-Encoding in an HTTP/1.0 response");

	/* limits */
	struct buf b = { 0 };
	struct error err = { 0 };
	assert_int_equal(buf_puts(&b, "HTTP/1.1 200 "), 0);
	while (b.len < HTTP_MAX_REQUEST_LINE + 1)
		assert_int_equal(buf_puts(&b, "x"), 0);
	assert_int_equal(http_parse_response(b.data, b.len, "GET", &resp, &err), -EMSGSIZE);
	assert_string_equal(err.msg, "status line longer than 8192 bytes");
	buf_reset(&b);
	assert_int_equal(buf_puts(&b, "HTTP/1.1 200 OK\r\n"), 0);
	for (int i = 0; i <= HTTP_MAX_HEADERS; i++)
		assert_int_equal(buf_puts(&b, "X: y\r\n"), 0);
	assert_int_equal(buf_puts(&b, "\r\n"), 0);
	assert_int_equal(http_parse_response(b.data, b.len, "GET", &resp, &err), -EMSGSIZE);
	assert_string_equal(err.msg, "more than 128 header fields");
	buf_free(&b);
	assert_int_equal(http_parse_response("HTTP/1.1 200 OK\r\n", 17, "GET", &resp, &err), 0);
	assert_int_equal(http_parse_response("", 0, "GET", &resp, &err), 0);
}

static void test_find_header(void **state)
{
	const struct http_request *r = OKH("X-One: 1\r\nx-two: 2\r\nX-ONE: 3\r\n");
	const struct http_header *h;
	(void)state;

	h = http_find_header(r->headers, r->n_headers, "x-one");
	assert_non_null(h);
	assert_mem(h->value, h->value_len, "1");
	h = http_find_header(r->headers, r->n_headers, "X-TWO");
	assert_non_null(h);
	assert_mem(h->value, h->value_len, "2");
	assert_ptr_equal(http_find_header(r->headers, r->n_headers, "HOST"), &r->headers[0]);
	assert_null(http_find_header(r->headers, r->n_headers, "X-On"));
	assert_null(http_find_header(r->headers, r->n_headers, "X-One2"));
	assert_null(http_find_header(r->headers, 0, "Host"));
}

/* ---------------------------------------------------------------- */
/* Upstream head                                                     */

static void upstream(const char *in, bool keep_upgrade, const char *expected)
{
	struct buf b = { 0 };
	static struct http_request again;
	struct error err = { 0 };
	int status = 0;

	OK(in);
	assert_int_equal(http_build_upstream_head(&req, keep_upgrade, &b), 0);
	assert_string_equal(b.data, expected);
	/* it parses again, to the same request */
	int r = http_parse_request(b.data, b.len, &again, &status, &err);
	if (r < 0)
		fail_msg("upstream head refused: %s\n%s", err.msg, b.data);
	assert_int_equal((size_t)r, b.len);
	assert_string_equal(again.method, req.method);
	assert_string_equal(again.host, req.host);
	assert_int_equal(again.form, req.form == HTTP_TARGET_ASTERISK ? HTTP_TARGET_ASTERISK :
									   HTTP_TARGET_ORIGIN);
	assert_int_equal(again.path_len, req.path_len);
	assert_memory_equal(again.path, req.path, req.path_len);
	assert_int_equal(again.body, req.body);
	assert_true(again.content_length == req.content_length);
	/* a body the upstream may leave unread: it closes after it */
	assert_int_equal(again.keep_alive, !req.upstream_close);
	assert_int_equal(again.upstream_close, req.upstream_close);
	/* the proxy answers Expect itself */
	assert_false(again.expect_continue);
	assert_int_equal(again.upgrade, keep_upgrade && req.upgrade);
	buf_free(&b);
}

/* A head moved to another buffer: every field follows it, the constant
 * "/" of an empty path stays, and the old buffer can be overwritten. */
static void test_request_move(void **state)
{
	static const char msg[] = "GET http://h:81?q=1 HTTP/1.1\r\nHost: h:81\r\nX-Empty:\r\nA: b\r\n\r\nBODY";
	size_t n = sizeof(msg) - 1;
	char *old = malloc(n), *new = malloc(n);
	struct error err = { 0 };
	int status = -1;
	(void)state;

	assert_non_null(old);
	assert_non_null(new);
	memcpy(old, msg, n);
	assert_int_equal(http_parse_request(old, n, &req, &status, &err), (int)(n - 4));
	memcpy(new, old, req.head_len);
	http_request_move(&req, old, new);
	memset(old, 'x', n);
	free(old);

	assert_mem(req.path, req.path_len, "/");
	assert_mem(req.query, req.query_len, "q=1");
	assert_true(req.query > new && req.query < new + req.head_len);
	assert_int_equal(req.n_headers, 3);
	for (size_t i = 0; i < req.n_headers; i++) {
		assert_true(req.headers[i].name >= new && req.headers[i].name < new + req.head_len);
		assert_true(req.headers[i].value >= new && req.headers[i].value < new + req.head_len);
	}
	assert_mem(req.headers[0].name, req.headers[0].name_len, "Host");
	assert_mem(req.headers[0].value, req.headers[0].value_len, "h:81");
	assert_int_equal(req.headers[1].value_len, 0);
	assert_mem(req.headers[2].name, req.headers[2].name_len, "A");
	assert_mem(req.headers[2].value, req.headers[2].value_len, "b");

	struct buf up = { 0 };
	assert_int_equal(http_build_upstream_head(&req, false, &up), 0);
	assert_string_equal(up.data, "GET /?q=1 HTTP/1.1\r\nHost: h:81\r\nX-Empty: \r\nA: b\r\nConnection: keep-alive\r\n\r\n");
	buf_free(&up);
	free(new);
}

static void test_upstream_head(void **state)
{
	(void)state;
	upstream("POST /p?q HTTP/1.1\r\n"
		 "Host: Example.com.\r\n"
		 "Connection: close, X-Secret\r\n"
		 "x-secret: 1\r\n"
		 "Keep-Alive: timeout=5\r\n"
		 "Proxy-Connection: keep-alive\r\n"
		 "Proxy-Authorization: Basic dTpw\r\n"
		 "Proxy-Authenticate: Basic\r\n"
		 "TE: trailers\r\n"
		 "Trailer: X-Sum\r\n"
		 "Upgrade: websocket\r\n"
		 "Accept: */*\r\n"
		 "Expect: 100-continue\r\n"
		 "Content-Length: 2\r\n"
		 "\r\n",
		 false,
		 "POST /p?q HTTP/1.1\r\n"
		 "Host: example.com\r\n"
		 "Accept: */*\r\n"
		 "Content-Length: 2\r\n"
		 "Connection: keep-alive\r\n"
		 "\r\n");
	/* a body the upstream may leave unread: it is told to close */
	upstream("DELETE /p HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n", false,
		 "DELETE /p HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\n");
	/* the agent's Airlock-Identity, in any case and however many, never
	 * goes on (the proxy adds its own signed one); its neighbour does */
	upstream("GET /p HTTP/1.1\r\n"
		 "Host: a\r\n"
		 "Airlock-Identity: forged\r\n"
		 "airlock-identity: forged2\r\n"
		 "Airlock-Identity-X: kept\r\n"
		 "\r\n",
		 false,
		 "GET /p HTTP/1.1\r\n"
		 "Host: a\r\n"
		 "Airlock-Identity-X: kept\r\n"
		 "Connection: keep-alive\r\n"
		 "\r\n");
	/* absolute form becomes origin form; Host stays in its place */
	upstream("POST http://a.example:8080/x/y?z=1 HTTP/1.1\r\n"
		 "User-Agent: u\r\n"
		 "Host: A.example:8080\r\n"
		 "Transfer-Encoding: gzip, chunked\r\n"
		 "\r\n",
		 false,
		 "POST /x/y?z=1 HTTP/1.1\r\n"
		 "User-Agent: u\r\n"
		 "Host: a.example:8080\r\n"
		 "Transfer-Encoding: gzip, chunked\r\n"
		 "Connection: keep-alive\r\n"
		 "\r\n");
	/* default ports are not written */
	upstream("GET http://a:80 HTTP/1.1\r\nHost: a\r\n\r\n", false,
		 "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");
	upstream("GET https://a:443/?x HTTP/1.1\r\nHost: a:443\r\n\r\n", false,
		 "GET /?x HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");
	upstream("GET / HTTP/1.1\r\nHost: a:80\r\n\r\n", false,
		 "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");
	upstream("GET / HTTP/1.1\r\nHost: a:443\r\n\r\n", false,
		 "GET / HTTP/1.1\r\nHost: a:443\r\nConnection: keep-alive\r\n\r\n");
	/* HTTP/1.0 without Host: one is added, first */
	upstream("GET http://a.example/p HTTP/1.0\r\nAccept: x\r\nConnection: keep-alive\r\n\r\n", false,
		 "GET /p HTTP/1.1\r\nHost: a.example\r\nAccept: x\r\nConnection: keep-alive\r\n\r\n");
	/* IPv6, with a zone in RFC 6874 spelling */
	upstream("GET http://[2001:DB8::1]:8080/ HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n\r\n", false,
		 "GET / HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\nConnection: keep-alive\r\n\r\n");
	upstream("GET / HTTP/1.1\r\nHost: [fe80::1%eth0]\r\n\r\n", false,
		 "GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]\r\nConnection: keep-alive\r\n\r\n");
	upstream("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", false,
		 "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");
	upstream("GET /? HTTP/1.1\r\nHost: a\r\n\r\n", false,
		 "GET /? HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");

	/* upgrades: kept only when asked, with every Upgrade field */
	static const char ws[] = "GET /chat HTTP/1.1\r\n"
				 "Host: a\r\n"
				 "Upgrade: websocket\r\n"
				 "Connection: Upgrade\r\n"
				 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
				 "Sec-WebSocket-Version: 13\r\n"
				 "\r\n";
	upstream(ws, true,
		 "GET /chat HTTP/1.1\r\n"
		 "Host: a\r\n"
		 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		 "Sec-WebSocket-Version: 13\r\n"
		 "Connection: upgrade\r\n"
		 "Upgrade: websocket\r\n"
		 "\r\n");
	upstream(ws, false,
		 "GET /chat HTTP/1.1\r\n"
		 "Host: a\r\n"
		 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		 "Sec-WebSocket-Version: 13\r\n"
		 "Connection: keep-alive\r\n"
		 "\r\n");
	/* an Upgrade field without Connection: upgrade is not an upgrade */
	upstream("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n", true,
		 "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");
}

static void test_upstream_head_edges(void **state)
{
	struct buf b = { 0 };
	(void)state;

	/* appends */
	assert_int_equal(buf_puts(&b, "prefix|"), 0);
	OK("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(http_build_upstream_head(&req, false, &b), 0);
	assert_string_equal(b.data, "prefix|GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");

	/* CONNECT becomes a tunnel, never a forwarded head */
	buf_reset(&b);
	OK("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n");
	assert_int_equal(http_build_upstream_head(&req, false, &b), -EINVAL);
	assert_int_equal(b.len, 0);

	/* framing fields survive whatever a Connection field says, even in
	 * a request the parser would have refused */
	static const char in[] = "POST / HTTP/1.1\r\nHost: a\r\nConnection: X-A\r\n"
				 "Content-Length: 1\r\nX-A: 1\r\n\r\n";
	static const char conn[] = "content-length, x-a, host";
	OK(in);
	req.headers[1].value = conn;
	req.headers[1].value_len = strlen(conn);
	assert_int_equal(http_build_upstream_head(&req, false, &b), 0);
	assert_string_equal(b.data, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
				    "Connection: keep-alive\r\n\r\n");
	buf_free(&b);
}

/* ---------------------------------------------------------------- */
/* Chunked bodies                                                    */

/* Decode s whole, then split in two at every position, then byte by
 * byte: the same end (or error) each time. Returns the result. */
static int chunked(const char *s, size_t n, size_t *end)
{
	struct http_chunked c = { 0 };
	size_t used = 0;
	char *copy = malloc(n ? n : 1);
	assert_non_null(copy);
	memcpy(copy, s, n);
	int whole = http_chunked_feed(&c, copy, n, &used);
	size_t whole_end = used;

	for (size_t k = 0; k <= n; k++) {
		struct http_chunked d = { 0 };
		size_t u1 = 0, u2 = 0;
		int r = http_chunked_feed(&d, copy, k, &u1);
		if (r == 0) {
			assert_int_equal(u1, k);
			r = http_chunked_feed(&d, copy + k, n - k, &u2);
			u1 += u2;
		}
		if (r != whole || (r >= 0 && u1 != whole_end))
			fail_msg("split at %zu: %d used %zu; whole: %d used %zu", k, r, u1, whole,
				 whole_end);
	}
	struct http_chunked d = { 0 };
	int r = 0;
	size_t total = 0;
	for (size_t k = 0; k < n && r == 0; k++) {
		size_t u = 0;
		r = http_chunked_feed(&d, copy + k, 1, &u);
		total += u;
	}
	if (r != whole || (r >= 0 && total != whole_end))
		fail_msg("byte by byte: %d used %zu; whole: %d used %zu", r, total, whole, whole_end);
	free(copy);
	*end = whole_end;
	return whole;
}

static void chunked_ok(const char *s, const char *after)
{
	size_t end = 0;
	char buf[16384];
	size_t n = strlen(s), m = strlen(after);

	assert_true(n + m < sizeof(buf));
	memcpy(buf, s, n);
	memcpy(buf + n, after, m);
	assert_int_equal(chunked(buf, n + m, &end), 1);
	assert_int_equal(end, n);
}

static void chunked_bad(const char *s, int code)
{
	size_t end = 0;
	assert_int_equal(chunked(s, strlen(s), &end), -code);
}

static void test_chunked(void **state)
{
	(void)state;
	chunked_ok("0\r\n\r\n", "");
	chunked_ok("5\r\nhello\r\n0\r\n\r\n", "GET / HTTP/1.1\r\n");
	chunked_ok("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "x");
	chunked_ok("a\r\n0123456789\r\nA\r\n0123456789\r\n0\r\n\r\n", "");
	chunked_ok("000005\r\nhello\r\n000\r\n\r\n", "");
	chunked_ok("1;name\r\nx\r\n0;a=b;c=\"q \\\"x\\\\\";d\r\n\r\n", "more");
	chunked_ok("1;a=\"\xc3\xa9\"\r\nx\r\n0\r\n\r\n", "");
	chunked_ok("1;a\t=\tb\r\nx\r\n0\r\n\r\n", "");
	chunked_ok("3\r\n\r\n\r\r\n0\r\n\r\n", ""); /* data is data */
	chunked_ok("0\r\nX-Sum: 1\r\nY:\r\nz: a b\r\n\r\n", "");
	chunked_ok("0000000000000001\r\nx\r\n0\r\n\r\n", ""); /* 16 digits */

	chunked_bad("", 0); /* 0: need more */
	chunked_bad("5\r\nhel", 0);
	chunked_bad("5\r\nhello\r\n0\r\n", 0);
	chunked_bad("5\r\nhello\r\n0\r\nX: y\r\n", 0);

	chunked_bad("5\nhello\r\n0\r\n\r\n", EINVAL);    /* bare LF after the size */
	chunked_bad("5\rhello\r\n0\r\n\r\n", EINVAL);    /* bare CR */
	chunked_bad("5\r\nhello\n0\r\n\r\n", EINVAL);    /* bare LF after data */
	chunked_bad("5\r\nhelloX\r\n0\r\n\r\n", EINVAL); /* data longer than its size */
	chunked_bad("5\r\nhello\r\r\n0\r\n\r\n", EINVAL);
	chunked_bad("\r\nhello\r\n", EINVAL);               /* no size */
	chunked_bad(";a\r\nhello\r\n", EINVAL);
	chunked_bad("5 \r\nhello\r\n0\r\n\r\n", EINVAL);    /* BWS */
	chunked_bad("5 ;a\r\nhello\r\n0\r\n\r\n", EINVAL);
	chunked_bad(" 5\r\nhello\r\n0\r\n\r\n", EINVAL);
	chunked_bad("0x5\r\nhello\r\n0\r\n\r\n", EINVAL);
	chunked_bad("-5\r\nhello\r\n0\r\n\r\n", EINVAL);
	chunked_bad("+5\r\nhello\r\n0\r\n\r\n", EINVAL);
	chunked_bad("5g\r\nhello\r\n0\r\n\r\n", EINVAL);
	chunked_bad("00000000000000001\r\nx\r\n0\r\n\r\n", EOVERFLOW); /* 17 digits */
	chunked_bad("10000000000000000\r\n", EOVERFLOW);
	chunked_bad("1;a=\"x\r\n\"\r\nx\r\n0\r\n\r\n", EINVAL); /* CR inside quotes */
	chunked_bad("1;a\x01\r\nx\r\n0\r\n\r\n", EINVAL);
	chunked_bad("1;a\nx\r\n0\r\n\r\n", EINVAL);
	chunked_bad("1;a=\"\\\x01\"\r\nx\r\n0\r\n\r\n", EINVAL);
	chunked_bad("1;a,b\r\nx\r\n0\r\n\r\n", EINVAL);
	chunked_bad("0\r\n X: y\r\n\r\n", EINVAL);    /* obs-fold in trailers */
	chunked_bad("0\r\nX : y\r\n\r\n", EINVAL);    /* whitespace before ':' */
	chunked_bad("0\r\n: y\r\n\r\n", EINVAL);      /* empty name */
	chunked_bad("0\r\nX\r\n\r\n", EINVAL);        /* no colon */
	chunked_bad("0\r\nX: a\x01\r\n\r\n", EINVAL); /* control character */
	chunked_bad("0\r\nX: y\n\r\n", EINVAL);
	chunked_bad("0\r\nX: y\r\n\n", EINVAL);
	chunked_bad("0\r\n\n", EINVAL);
	chunked_bad("0\r\n\rx", EINVAL);
}

static void test_chunked_limits(void **state)
{
	struct buf b = { 0 };
	size_t end = 0;
	(void)state;

	/* size line of 4096 bytes, then 4097 */
	assert_int_equal(buf_puts(&b, "1;"), 0);
	while (b.len < 4096)
		assert_int_equal(buf_puts(&b, "e"), 0);
	assert_int_equal(buf_puts(&b, "\r\nx\r\n0\r\n\r\n"), 0);
	assert_int_equal(chunked(b.data, b.len, &end), 1);
	assert_int_equal(end, b.len);
	buf_reset(&b);
	assert_int_equal(buf_puts(&b, "1;"), 0);
	while (b.len < 4097)
		assert_int_equal(buf_puts(&b, "e"), 0);
	assert_int_equal(buf_puts(&b, "\r\nx\r\n0\r\n\r\n"), 0);
	assert_int_equal(chunked(b.data, b.len, &end), -EMSGSIZE);

	/* trailers of 8192 bytes, CRLFs included, then 8193 */
	for (int extra = 0; extra <= 1; extra++) {
		buf_reset(&b);
		assert_int_equal(buf_puts(&b, "0\r\nX: "), 0);
		while (b.len - 3 < (size_t)(8192 + extra - 2))
			assert_int_equal(buf_puts(&b, "v"), 0);
		assert_int_equal(buf_puts(&b, "\r\n\r\n"), 0);
		assert_int_equal(b.len, 3 + 8192 + extra + 2);
		assert_int_equal(chunked(b.data, b.len, &end), extra ? -EMSGSIZE : 1);
	}

	/* the largest size streams through */
	struct http_chunked c = { 0 };
	size_t used = 0;
	char data[1000];
	memset(data, 'd', sizeof(data));
	assert_int_equal(http_chunked_feed(&c, "FFFFFFFFFFFFFFFF\r\n", 18, &used), 0);
	assert_int_equal(used, 18);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(http_chunked_feed(&c, data, sizeof(data), &used), 0);
		assert_int_equal(used, sizeof(data));
	}
	assert_true(c.remaining == UINT64_MAX - 100 * sizeof(data));
	buf_free(&b);
}

/* The decoder yields the data a scanner must read whole: a secret split
 * over chunks, one byte a chunk, or cut by a size line with an
 * extension comes out joined, fed whole or a byte at a time; trailers
 * are noticed (the proxy refuses them) and never reach the data. */
static void test_chunked_decode(void **state)
{
	(void)state;
	static const char in[] = "3;a=\"x;y\"\r\nsec\r\n1\r\nr\r\n2\r\net\r\n0\r\nAirlock-Identity: f\r\n\r\nNEXT";
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		struct http_chunked c = { 0 };
		struct buf out = { 0 };
		size_t used = 0, total = 0;
		int r = 0;
		if (!bytewise) {
			r = http_chunked_decode(&c, in, sizeof(in) - 1, &used, &out);
			total = used;
		} else {
			for (size_t i = 0; i < sizeof(in) - 1 && r == 0; i++) {
				r = http_chunked_decode(&c, in + i, 1, &used, &out);
				total += used;
			}
		}
		assert_int_equal(r, 1);
		assert_int_equal(total, sizeof(in) - 1 - 4);
		assert_int_equal(out.len, 6);
		assert_memory_equal(out.data, "secret", 6);
		assert_true(c.trailers);
		buf_free(&out);
	}
	struct http_chunked c = { 0 };
	struct buf out = { 0 };
	size_t used = 0;
	assert_int_equal(http_chunked_decode(&c, "2\r\nok\r\n0\r\n\r\n", 12, &used, &out), 1);
	assert_false(c.trailers);
	assert_int_equal(out.len, 2);
	buf_free(&out);
	/* malformed framing stops the data where the framing broke */
	memset(&c, 0, sizeof(c));
	assert_true(http_chunked_decode(&c, "2 \r\nok\r\n0\r\n\r\n", 13, &used, &out) < 0);
	assert_int_equal(out.len, 0);
	buf_free(&out);
}

static void test_chunked_states(void **state)
{
	struct http_chunked c = { 0 };
	size_t used = 99;
	(void)state;

	/* done stays done and takes nothing more */
	assert_int_equal(http_chunked_feed(&c, "0\r\n\r\nabc", 8, &used), 1);
	assert_int_equal(used, 5);
	assert_int_equal(http_chunked_feed(&c, "abc", 3, &used), 1);
	assert_int_equal(used, 0);
	assert_int_equal(http_chunked_feed(&c, "", 0, &used), 1);
	assert_int_equal(used, 0);

	/* an error is final, and *used says where */
	memset(&c, 0, sizeof(c));
	assert_int_equal(http_chunked_feed(&c, "5\r\nhelloX", 9, &used), -EINVAL);
	assert_int_equal(used, 8);
	assert_int_equal(http_chunked_feed(&c, "\r\n0\r\n\r\n", 7, &used), -EINVAL);
	assert_int_equal(http_chunked_feed(&c, "", 0, &used), -EINVAL);

	/* nothing fed: need more */
	memset(&c, 0, sizeof(c));
	assert_int_equal(http_chunked_feed(&c, "", 0, &used), 0);
	assert_int_equal(used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin_form),
		cmocka_unit_test(test_absolute_form),
		cmocka_unit_test(test_authority_form),
		cmocka_unit_test(test_asterisk_form),
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_connection),
		cmocka_unit_test(test_content_length),
		cmocka_unit_test(test_transfer_encoding),
		cmocka_unit_test(test_bodies_on_bodiless_methods),
		cmocka_unit_test(test_line_endings),
		cmocka_unit_test(test_field_lines),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_host_rules),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_percent_and_dots),
		cmocka_unit_test(test_request_line_limit),
		cmocka_unit_test(test_head_limit),
		cmocka_unit_test(test_header_count_limit),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_byte_by_byte),
		cmocka_unit_test(test_response),
		cmocka_unit_test(test_find_header),
		cmocka_unit_test(test_request_move),
		cmocka_unit_test(test_upstream_head),
		cmocka_unit_test(test_upstream_head_edges),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_chunked_limits),
		cmocka_unit_test(test_chunked_states),
		cmocka_unit_test(test_chunked_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
