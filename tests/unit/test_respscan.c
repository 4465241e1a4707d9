/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The response scan of credential endpoints (net/respscan.c) and the
 * leak scanner's stream under it (net/dlp.c): responses are played from
 * memory in pieces of every size, and what the client would receive is
 * checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/dlp.h"
#include "net/respscan.h"
#include "util/buf.h"

#define SECRET "tok-3f9a1c77e0b24d58aa91/+x"

struct play {
	const char *in;
	size_t len, pos;
	size_t step; /* bytes per read: how the upstream's bytes arrive */
	struct buf out;
	size_t writes;
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
	pl->writes++;
	return buf_append(&pl->out, p, n) == 0;
}

static void must(int r)
{
	assert_true(r >= 0);
}

static struct dlp *secret_dlp(void)
{
	struct dlp *d = dlp_new();
	assert_non_null(d);
	assert_int_equal(dlp_add_secret(d, "credential:t", (const uint8_t *)SECRET, strlen(SECRET)), 0);
	return d;
}

/* Play resp[0..len) in reads of step bytes; the result and what the
 * client got (in pl->out, owned by the caller). */
static void play(const struct dlp *d, const char *method, const char *resp, size_t len, size_t step,
		 struct play *pl, struct respscan_result *res)
{
	memset(pl, 0, sizeof(*pl));
	pl->in = resp;
	pl->len = len;
	pl->step = step;
	struct respscan_io io = { .ctx = pl, .up_read = play_read, .down_write = play_write };
	respscan_forward(d, &io, method, res);
}

static char *chunk_it(const char *body, size_t piece, const char *head)
{
	struct buf b = { 0 };
	assert_int_equal(buf_puts(&b, head), 0);
	for (size_t i = 0, n = strlen(body); i < n; i += piece) {
		size_t k = n - i < piece ? n - i : piece;
		assert_int_equal(buf_printf(&b, "%zx;ext=1\r\n", k), 0);
		assert_int_equal(buf_append(&b, body + i, k), 0);
		assert_int_equal(buf_puts(&b, "\r\n"), 0);
	}
	assert_int_equal(buf_puts(&b, "0\r\nX-Trailer: " SECRET "\r\n\r\n"), 0);
	return b.data;
}

/* A body by length, chunked or until close passes unchanged (chunked
 * framed anew, the trailer dropped) for any read size, and a secret
 * anywhere in it is withheld whatever the reads, the chunks and the
 * encodings; no byte of it reaches the client. */
static void test_framings(void **state)
{
	(void)state;
	struct dlp *d = secret_dlp();
	char big[9000];
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + i % 23);
	big[sizeof(big) - 1] = '\0';
	static const char *const forms[] = { SECRET, "tok-3f9a1c77e0b24d58aa91%2F%2Bx",
					     "x+/19aa85d42b0e77c1a9f3-kot", "dG9rLTNmOWExYzc3ZTBiMjRkNThhYTkxLyt4",
					     "746f6b2d33663961316337376530623234643538616139312f2b78" };
	const size_t steps[] = { 1, 2, 7, 100, 4096, 65536 };
	const size_t pieces[] = { 1, 3, 64, 10000 };

	for (size_t s = 0; s < sizeof(steps) / sizeof(*steps); s++) {
		struct play pl;
		struct respscan_result res;
		char *r;
		/* The neighbours: no secret. */
		must(asprintf(&r, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
						     strlen(big), big));
		play(d, "GET", r, strlen(r), steps[s], &pl, &res);
		assert_false(res.refused);
		assert_true(res.complete && res.upstream_ok);
		assert_int_equal(pl.out.len, strlen(r));
		assert_memory_equal(pl.out.data, r, strlen(r));
		assert_int_equal(res.status, 200);
		free(r);
		buf_free(&pl.out);

		for (size_t p = 0; p < sizeof(pieces) / sizeof(*pieces); p++) {
			r = chunk_it(big, pieces[p], "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
			play(d, "GET", r, strlen(r), steps[s], &pl, &res);
			assert_false(res.refused);
			assert_true(res.complete);
			/* De-chunk what the client got: the body, no trailer. */
			const char *body = strstr(pl.out.data, "\r\n\r\n");
			assert_non_null(body);
			struct http_chunked ch = { 0 };
			struct buf plain = { 0 };
			size_t used = 0;
			assert_int_equal(http_chunked_decode(&ch, body + 4, pl.out.len - (size_t)(body + 4 - pl.out.data),
							     &used, &plain), 1);
			assert_int_equal(plain.len, strlen(big));
			assert_memory_equal(plain.data, big, strlen(big));
			assert_null(memmem(pl.out.data, pl.out.len, "X-Trailer", 9));
			buf_free(&plain);
			buf_free(&pl.out);
			free(r);
		}

		must(asprintf(&r, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n%s", big));
		play(d, "GET", r, strlen(r), steps[s], &pl, &res);
		assert_false(res.refused);
		assert_false(res.upstream_ok);
		assert_int_equal(pl.out.len, strlen(r));
		free(r);
		buf_free(&pl.out);

		/* The attack, at the start, the middle and the end of the body. */
		for (size_t f = 0; f < sizeof(forms) / sizeof(*forms); f++) {
			for (size_t at = 0; at < sizeof(big); at += 4499) {
				char body[sizeof(big) + 128];
				snprintf(body, sizeof(body), "%.*s%s%s", (int)at, big, forms[f], big + at);
				const size_t skip = strlen(forms[f]) > 40 ? 12 : 0; /* the core of an encoding */
				const char *heads[] = { "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", NULL };
				for (int k = 0; k < 3; k++) {
					if (k == 0)
						must(asprintf(&r, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
								 strlen(body), body));
					else if (k == 1)
						r = chunk_it(body, pieces[(s + f) % 4],
							     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
					else
						must(asprintf(&r, "%s%s", heads[0], body));
					play(d, "GET", r, strlen(r), steps[s], &pl, &res);
					if (!res.refused)
						fail_msg("form %zu at %zu, framing %d, reads of %zu: not refused", f, at, k,
							 steps[s]);
					assert_false(res.complete);
					assert_non_null(strstr(res.reason, "secret credential:t"));
					assert_null(strstr(res.reason, SECRET));
					/* Not even the form's first bytes went out. */
					if (pl.out.len && memmem(pl.out.data, pl.out.len, forms[f] + skip, 8))
						fail_msg("form %zu at %zu, framing %d: part of it went out", f, at, k);
					/* A small response is withheld whole. */
					if (at == 0 && steps[s] >= 4096 && k != 1)
						assert_false(res.sent);
					free(r);
					buf_free(&pl.out);
				}
			}
		}
	}
	dlp_free(d);
}

/* The head, interim responses, codings, partial content, a switch of
 * protocols and the bodiless responses. */
static void test_heads(void **state)
{
	(void)state;
	struct dlp *d = secret_dlp();
	struct play pl;
	struct respscan_result res;
	static const struct {
		const char *method, *resp;
		bool refused;
	} cases[] = {
		{ "GET", "HTTP/1.1 200 OK\r\nX-Echo: Bearer " SECRET "\r\nContent-Length: 2\r\n\r\nok", true },
		{ "HEAD", "HTTP/1.1 200 OK\r\nX-Echo: " SECRET "\r\nContent-Length: 20\r\n\r\n", true },
		{ "GET", "HTTP/1.1 103 Early Hints\r\nLink: " SECRET "\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		  true },
		{ "GET", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\nok", true },
		{ "GET", "HTTP/1.1 200 OK\r\nContent-Encoding: identity, br\r\nContent-Length: 2\r\n\r\nok", true },
		{ "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", true },
		{ "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx", true },
		{ "GET", "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/9\r\nContent-Length: 2\r\n\r\nok", true },
		{ "GET", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", true },
		/* The neighbours. */
		{ "HEAD", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n", false },
		{ "GET", "HTTP/1.1 304 Not Modified\r\nContent-Encoding: gzip\r\n\r\n", false },
		{ "GET", "HTTP/1.1 204 No Content\r\n\r\n", false },
		{ "GET", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false },
		{ "GET", "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		for (size_t step = 1; step <= 4096; step *= 64) {
			play(d, cases[i].method, cases[i].resp, strlen(cases[i].resp), step, &pl, &res);
			if (res.refused != cases[i].refused)
				fail_msg("case %zu, reads of %zu: refused %d (%s)", i, step, res.refused, res.reason);
			if (res.refused) {
				assert_false(res.sent);
				assert_null(pl.out.len ? memmem(pl.out.data, pl.out.len, SECRET, 8) : NULL);
			} else {
				assert_true(res.complete);
				assert_int_equal(pl.out.len, strlen(cases[i].resp));
				assert_memory_equal(pl.out.data, cases[i].resp, pl.out.len);
			}
			buf_free(&pl.out);
		}
	}
	/* Not HTTP at all. */
	play(d, "GET", "SSH-2.0-x\r\n\r\n", 13, 4096, &pl, &res);
	assert_true(res.bad_gateway);
	assert_int_equal(pl.out.len, 0);
	dlp_free(d);
}

/* The request asks for what the scanner can read. */
static void test_prepare(void **state)
{
	(void)state;
	static const char head[] = "GET /x HTTP/1.1\r\nHost: a.test\r\nAccept-Encoding: gzip, br\r\n"
				   "Range: bytes=5-9\r\nIf-Range: \"e\"\r\nX-Keep: 1\r\n\r\n";
	struct http_request req;
	struct error err = { 0 };
	int status = 0;
	assert_true(http_parse_request(head, sizeof(head) - 1, &req, &status, &err) > 0);
	assert_int_equal(respscan_prepare(&req), 0);
	struct buf out = { 0 };
	assert_int_equal(http_build_upstream_head(&req, false, &out), 0);
	assert_non_null(strstr(out.data, "Accept-Encoding: identity\r\n"));
	assert_null(strstr(out.data, "gzip"));
	assert_null(strstr(out.data, "Range"));
	assert_non_null(strstr(out.data, "X-Keep: 1\r\n"));
	buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framings),
		cmocka_unit_test(test_heads),
		cmocka_unit_test(test_prepare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
