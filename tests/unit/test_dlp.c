/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the leak scanner: every encoding of a registered secret is
 * found wherever it sits in surrounding text, and its near misses are not;
 * every built-in pattern fires on its format and not across a word
 * boundary or one character short; the first hit by position names the
 * secret or pattern, never the value; the limits hold.
 *
 * Credential-shaped strings are assembled at run time from a prefix and a
 * generated body, so that no token-shaped literal sits in the source.
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

#include "net/dlp.h"
#include "util/cleanup.h"

/* ---- helpers ---- */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	/* xorshift64*: deterministic across runs and platforms. */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

static void rng_fill(struct rng *r, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rng_next(r) >> 56);
}

/* n characters drawn from alpha. */
static void rng_text(struct rng *r, char *p, size_t n, const char *alpha)
{
	size_t k = strlen(alpha);
	for (size_t i = 0; i < n; i++)
		p[i] = alpha[rng_next(r) % k];
}

static const char B64_STD[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char B64_URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/* The crypt(3) alphabet: base64 in another order, not one we decode. */
static const char B64_CRYPT[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* Base64 of p; the caller frees the result. */
static char *b64(const uint8_t *p, size_t n, const char *alpha, bool pad)
{
	char *o = malloc(4 * (n / 3 + 1) + 1);
	size_t w = 0;

	assert_non_null(o);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t x = (uint32_t)p[i] << 16;
		size_t have = n - i < 3 ? n - i : 3;
		if (have > 1)
			x |= (uint32_t)p[i + 1] << 8;
		if (have > 2)
			x |= p[i + 2];
		for (size_t j = 0; j < 4; j++) {
			if (j <= have)
				o[w++] = alpha[(x >> (18 - 6 * j)) & 63];
			else if (pad)
				o[w++] = '=';
		}
	}
	o[w] = '\0';
	return o;
}

static char *hex(const uint8_t *p, size_t n, bool upper)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *o = malloc(2 * n + 1);

	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		o[2 * i] = dig[p[i] >> 4];
		o[2 * i + 1] = dig[p[i] & 15];
	}
	o[2 * n] = '\0';
	return o;
}

/* Percent-encode the bytes for which enc() is true; space as '+' when
 * plus is set. */
static char *pct(const uint8_t *p, size_t n, bool (*enc)(uint8_t), bool upper, bool plus)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *o = malloc(3 * n + 1);
	size_t w = 0;

	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		if (plus && p[i] == ' ') {
			o[w++] = '+';
		} else if (enc(p[i])) {
			o[w++] = '%';
			o[w++] = dig[p[i] >> 4];
			o[w++] = dig[p[i] & 15];
		} else {
			o[w++] = (char)p[i];
		}
	}
	o[w] = '\0';
	return o;
}

static bool enc_all(uint8_t c)
{
	(void)c;
	return true;
}

/* What encodeURIComponent escapes. */
static bool enc_component(uint8_t c)
{
	return !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		 (c && strchr("-_.!~*'()", c)));
}

/* What Python's urllib.parse.quote escapes by default: RFC 3986 unreserved
 * and '/' stay. */
static bool enc_python(uint8_t c)
{
	return !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		 (c && strchr("-_.~/", c)));
}

static bool enc_none(uint8_t c)
{
	(void)c;
	return false;
}

static struct dlp *new_dlp(void)
{
	struct dlp *d = dlp_new();
	assert_non_null(d);
	return d;
}

static void add(struct dlp *d, const char *name, const void *v, size_t n)
{
	int r = dlp_add_secret(d, name, v, n);
	if (r < 0)
		fail_msg("dlp_add_secret(%s): %d", name, r);
}

#define ADD_STR(d, name, s) add((d), (name), (s), strlen(s))

static bool scan(const struct dlp *d, const void *buf, size_t n, char *what, size_t wl)
{
	return dlp_scan(d, buf, n, what, wl);
}

static void expect_hit(const struct dlp *d, const void *buf, size_t n, const char *expected)
{
	char what[256];
	if (!scan(d, buf, n, what, sizeof(what)))
		fail_msg("no hit, expected \"%s\" in %.*s", expected, (int)(n > 300 ? 300 : n),
			 (const char *)buf);
	if (strcmp(what, expected) != 0)
		fail_msg("hit \"%s\", expected \"%s\" in %.*s", what, expected,
			 (int)(n > 300 ? 300 : n), (const char *)buf);
}

static void expect_miss(const struct dlp *d, const void *buf, size_t n)
{
	char what[256];
	if (scan(d, buf, n, what, sizeof(what)))
		fail_msg("unexpected hit \"%s\" in %.*s", what, (int)(n > 300 ? 300 : n),
			 (const char *)buf);
}

#define HIT(d, s, expected) expect_hit((d), (s), strlen(s), (expected))
#define MISS(d, s) expect_miss((d), (s), strlen(s))

/* pre + mid + post in a new string. */
static char *cat3(const char *pre, const char *mid, const char *post)
{
	size_t a = strlen(pre), b = strlen(mid), c = strlen(post);
	char *o = malloc(a + b + c + 1);
	assert_non_null(o);
	memcpy(o, pre, a);
	memcpy(o + a, mid, b);
	memcpy(o + a + b, post, c + 1);
	return o;
}

/* The secret used by most encoding tests: its six 0xff bytes make '/' in
 * standard base64 and '_' in URL-safe base64 at every alignment, so the two
 * variants differ and the label names the alphabet. */
static const uint8_t SECRET[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'k', 'e', 'y',
				  0x00, 0x13, 0x9c, 'Q', 'z', '!', 0x80, 0x7f, '7' };
#define SECRET_LEN sizeof(SECRET)

/* A printable secret with bytes encodeURIComponent escapes. */
static const char PASSWORD[] = "p@ss w/rd:x&y=z!~*'()#tail";

/* ---- limits ---- */

static void test_limits(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	char name[160];

	assert_int_equal(dlp_add_secret(d, "SHORT", (const uint8_t *)"1234567", 7), -EINVAL);
	assert_int_equal(dlp_add_secret(d, "EMPTY", (const uint8_t *)"", 0), -EINVAL);
	assert_int_equal(dlp_add_secret(d, NULL, (const uint8_t *)"12345678", 8), -EINVAL);
	assert_int_equal(dlp_add_secret(d, "X", NULL, 8), -EINVAL);
	assert_int_equal(dlp_add_secret(NULL, "X", (const uint8_t *)"12345678", 8), -EINVAL);
	/* Names go into records: no empty, spaced, quoted or long names. */
	assert_int_equal(dlp_add_secret(d, "", (const uint8_t *)"12345678", 8), -EINVAL);
	assert_int_equal(dlp_add_secret(d, "A B", (const uint8_t *)"12345678", 8), -EINVAL);
	assert_int_equal(dlp_add_secret(d, "A\"B", (const uint8_t *)"12345678", 8), -EINVAL);
	assert_int_equal(dlp_add_secret(d, "A\nB", (const uint8_t *)"12345678", 8), -EINVAL);
	memset(name, 'N', 129);
	name[129] = '\0';
	assert_int_equal(dlp_add_secret(d, name, (const uint8_t *)"12345678", 8), -EINVAL);
	name[128] = '\0';
	assert_int_equal(dlp_add_secret(d, name, (const uint8_t *)"12345678", 8), 0);
	/* A name that spells the value, or an encoding of it, is refused:
	 * it would be printed on every hit. */
	assert_int_equal(dlp_add_secret(d, "is-hunter2hunter2", (const uint8_t *)"hunter2hunter2", 14),
			 -EINVAL);
	assert_int_equal(dlp_add_secret(d, "x-6875-6e746572326875-6e74", (const uint8_t *)"hunter2hunt", 11),
			 0);
	assert_int_equal(dlp_add_secret(d, "x-68756e746572326875", (const uint8_t *)"hunter2hu", 9),
			 -EINVAL);
	/* Exactly 8 bytes is enough. */
	assert_int_equal(dlp_add_secret(d, "EIGHT", (const uint8_t *)"8bytes!!", 8), 0);
	HIT(d, "x=8bytes!!", "secret EIGHT (raw)");
	MISS(d, "x=8bytes!");
	dlp_free(d);
	dlp_free(NULL);
}

static void test_limit_count(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	char name[32], value[32];

	for (int i = 0; i < 256; i++) {
		snprintf(name, sizeof(name), "S%d", i);
		snprintf(value, sizeof(value), "value-%08d-x", i);
		ADD_STR(d, name, value);
	}
	assert_int_equal(dlp_add_secret(d, "ONE_TOO_MANY", (const uint8_t *)"value-more-x", 12),
			 -E2BIG);
	/* Every one of them is still found, in a plain and an encoded form. */
	for (int i = 0; i < 256; i++) {
		char expected[64], *h;
		snprintf(value, sizeof(value), "value-%08d-x", i);
		snprintf(expected, sizeof(expected), "secret S%d (raw)", i);
		HIT(d, value, expected);
		h = hex((const uint8_t *)value, strlen(value), i % 2);
		snprintf(expected, sizeof(expected), "secret S%d (hex)", i);
		HIT(d, h, expected);
		free(h);
	}
	MISS(d, "value-more-x");
	dlp_free(d);
}

static void test_limit_bytes(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	struct rng r = { 0x1234 };
	const size_t n = 8192;
	uint8_t *big = malloc(256 * 1024);
	uint8_t *vals = malloc(256 * n);
	char name[32], expected[64];
	int i, ret = 0;

	assert_non_null(big);
	assert_non_null(vals);
	/* One value whose encodings alone exceed 1 MiB. */
	rng_fill(&r, big, 256 * 1024);
	assert_int_equal(dlp_add_secret(d, "HUGE", big, 256 * 1024), -E2BIG);
	/* Fill up with 8 KiB values until the needle budget refuses one;
	 * a refusal leaves every earlier secret in place. */
	rng_fill(&r, vals, 256 * n);
	for (i = 0; i < 256; i++) {
		snprintf(name, sizeof(name), "BIG%d", i);
		ret = dlp_add_secret(d, name, vals + (size_t)i * n, n);
		if (ret < 0)
			break;
	}
	assert_int_equal(ret, -E2BIG);
	assert_true(i > 2 && i < 256);
	for (int j = 0; j < i; j++) {
		snprintf(expected, sizeof(expected), "secret BIG%d (raw)", j);
		expect_hit(d, vals + (size_t)j * n, n, expected);
	}
	expect_miss(d, vals + (size_t)i * n, n);
	/* A small secret still fits after the refusal. */
	ADD_STR(d, "SMALL", "small-secret");
	HIT(d, "small-secret", "secret SMALL (raw)");
	dlp_free(d);
	free(big);
	free(vals);
}

/* ---- encodings of registered secrets ---- */

static void test_raw_every_offset(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	struct rng r = { 7 };
	uint8_t buf[256];

	add(d, "KEY", SECRET, SECRET_LEN);
	for (size_t off = 0; off + SECRET_LEN <= sizeof(buf); off++) {
		rng_text(&r, (char *)buf, sizeof(buf), "abcdefghij klmnop=&");
		memcpy(buf + off, SECRET, SECRET_LEN);
		expect_hit(d, buf, sizeof(buf), "secret KEY (raw)");
		/* The secret cut short at either end is not found. */
		buf[off + SECRET_LEN - 1] ^= 0x01;
		expect_miss(d, buf, sizeof(buf));
		buf[off + SECRET_LEN - 1] ^= 0x01;
		buf[off] ^= 0x40;
		expect_miss(d, buf, sizeof(buf));
	}
	/* At the very start and end of the buffer, and as all of it. */
	expect_hit(d, SECRET, SECRET_LEN, "secret KEY (raw)");
	expect_miss(d, SECRET, SECRET_LEN - 1);
	expect_miss(d, SECRET + 1, SECRET_LEN - 1);
	dlp_free(d);
}

/*
 * The secret at byte offsets 0..5 of a longer random byte string (every
 * alignment, twice), followed by 0..4 more bytes, the whole of it in
 * base64 of either alphabet, padded or not, inside a JSON-ish body.
 */
static void check_base64(const struct dlp *d, const uint8_t *secret, size_t n,
			 const char *alpha, const char *label, bool expect)
{
	struct rng r = { 99 };
	uint8_t stream[128];
	char expected[64];

	snprintf(expected, sizeof(expected), "secret KEY (%s)", label);
	assert_true(n + 10 <= sizeof(stream));
	for (size_t off = 0; off < 6; off++) {
		for (size_t after = 0; after < 5; after++) {
			for (int pad = 0; pad < 2; pad++) {
				rng_fill(&r, stream, sizeof(stream));
				memcpy(stream + off, secret, n);
				char *e = b64(stream, off + n + after, alpha, pad);
				char *body = cat3("{\"blob\":\"", e, "\"}");
				if (expect)
					HIT(d, body, expected);
				else
					MISS(d, body);
				/* As the whole buffer, too. */
				if (expect)
					HIT(d, e, expected);
				else
					MISS(d, e);
				free(body);
				free(e);
			}
		}
	}
}

static void test_base64(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	uint8_t near[SECRET_LEN];

	add(d, "KEY", SECRET, SECRET_LEN);
	check_base64(d, SECRET, SECRET_LEN, B64_STD, "base64", true);
	check_base64(d, SECRET, SECRET_LEN, B64_URL, "base64url", true);
	/* One byte changed in the middle: every alignment's core differs. */
	memcpy(near, SECRET, SECRET_LEN);
	near[8] ^= 0x20;
	check_base64(d, near, SECRET_LEN, B64_STD, "base64", false);
	check_base64(d, near, SECRET_LEN, B64_URL, "base64url", false);
	/* Another alphabet: the same bits, other characters. */
	check_base64(d, SECRET, SECRET_LEN, B64_CRYPT, "base64", false);
	dlp_free(d);
}

/* Random printable and binary secrets of every length from 8 to 40: each
 * found in base64 at every alignment (the label may be either alphabet
 * when the two encodings agree). */
static void test_base64_lengths(void **state)
{
	(void)state;
	struct rng r = { 4242 };
	uint8_t secret[40], stream[64];
	char what[128];

	for (size_t n = 8; n <= sizeof(secret); n++) {
		struct dlp *d = new_dlp();
		rng_fill(&r, secret, n);
		/* The core ends with a character that may carry only the top
		 * bits of the last byte; with those bits zero, the zero-filled
		 * last character of the shorter stream would be the same. */
		secret[n - 1] |= 0xfc;
		add(d, "K", secret, n);
		for (size_t off = 0; off < 3; off++) {
			for (int a = 0; a < 2; a++) {
				rng_fill(&r, stream, sizeof(stream));
				memcpy(stream + off, secret, n);
				char *e = b64(stream, off + n + (n % 3), a ? B64_URL : B64_STD,
					      n % 2);
				assert_true(scan(d, e, strlen(e), what, sizeof(what)));
				if (strcmp(what, "secret K (base64)") != 0 &&
				    strcmp(what, "secret K (base64url)") != 0)
					fail_msg("n=%zu off=%zu: %s", n, off, what);
				free(e);
			}
		}
		/* The secret one byte shorter, ending the stream. */
		for (size_t off = 0; off < 3; off++) {
			memset(stream, 'a', off);
			memcpy(stream + off, secret, n - 1);
			char *e = b64(stream, off + n - 1, B64_STD, true);
			expect_miss(d, e, strlen(e));
			free(e);
		}
		dlp_free(d);
	}
}

static void test_hex(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	struct rng r = { 5 };
	uint8_t stream[64];

	add(d, "KEY", SECRET, SECRET_LEN);
	for (int upper = 0; upper < 2; upper++) {
		for (size_t off = 0; off + SECRET_LEN <= sizeof(stream); off++) {
			rng_fill(&r, stream, sizeof(stream));
			memcpy(stream + off, SECRET, SECRET_LEN);
			char *h = hex(stream, sizeof(stream), upper);
			HIT(d, h, "secret KEY (hex)");
			/* At an odd character offset in hex-looking text. */
			char *odd = cat3("a", h, "");
			HIT(d, odd, "secret KEY (hex)");
			/* One digit changed. */
			char *p = h + 2 * off + 10;
			*p = *p == '0' ? '1' : '0';
			MISS(d, h);
			free(odd);
			free(h);
		}
	}
	/* Mixed case is not one of the variants. */
	char *h = hex(SECRET, SECRET_LEN, false);
	for (size_t i = 0; i < 2 * SECRET_LEN; i += 2)
		if (h[i] >= 'a')
			h[i] = (char)(h[i] - 'a' + 'A');
	MISS(d, h);
	free(h);
	/* One byte short. */
	h = hex(SECRET, SECRET_LEN - 1, false);
	MISS(d, h);
	free(h);
	dlp_free(d);
}

static void test_url(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	const uint8_t *pw = (const uint8_t *)PASSWORD;
	size_t n = strlen(PASSWORD);
	struct {
		bool (*enc)(uint8_t);
		bool upper, plus;
		const char *label;
	} cases[] = {
		{ enc_all, true, false, "url" },
		{ enc_all, false, false, "url" },
		{ enc_component, true, false, "url" },
		{ enc_component, false, false, "url" },
		{ enc_component, true, true, "form" },
		{ enc_component, false, true, "form" },
		{ enc_none, false, true, "form" },
		/* Encoders that escape other sets are read through the
		 * percent-decoded view. */
		{ enc_python, true, false, "url" },
		{ enc_python, false, true, "form, url" },
	};

	add(d, "PW", pw, n);
	add(d, "KEY", SECRET, SECRET_LEN);
	HIT(d, PASSWORD, "secret PW (raw)");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *e = pct(pw, n, cases[i].enc, cases[i].upper, cases[i].plus);
		char expected[64];
		snprintf(expected, sizeof(expected), "secret PW (%s)", cases[i].label);
		for (size_t k = 0; k < 40; k++) {
			char pre[64];
			snprintf(pre, sizeof(pre), "GET /q?a=%.*s&pw=", (int)k,
				 "0123456789abcdefghijklmnopqrstuvwxyz%41BCDE");
			char *req = cat3(pre, e, "&b=2 HTTP/1.1");
			HIT(d, req, expected);
			free(req);
		}
		/* One escaped byte changed (or, with none escaped, a letter). */
		char *bad = strdup(e);
		assert_non_null(bad);
		char *q = strchr(bad + 4, '%');
		if (q)
			q[2] = q[2] == '0' ? '1' : '0';
		else
			bad[2] = 'S';
		MISS(d, bad);
		free(bad);
		free(e);
	}
	/* Every byte escaped, mixing cases within the string. */
	char *e = pct(SECRET, SECRET_LEN, enc_all, true, false);
	for (char *p = e; *p; p++)
		if (*p >= 'A' && *p <= 'F' && ((p - e) & 4))
			*p = (char)(*p - 'A' + 'a');
	HIT(d, e, "secret KEY (url)");
	free(e);
	/* Base64 put into a URL: '/', '+' and '=' escaped. */
	uint8_t stream[40];
	memset(stream, 'z', sizeof(stream));
	memcpy(stream + 1, SECRET, SECRET_LEN);
	char *b = b64(stream, sizeof(stream), B64_STD, true);
	char *be = pct((const uint8_t *)b, strlen(b), enc_component, true, false);
	char *req = cat3("/upload?data=", be, "");
	HIT(d, req, "secret KEY (base64, url)");
	free(req);
	free(be);
	free(b);
	/* Escapes far apart: a secret whose escapes lie in the gap between
	 * two windows around other escapes. */
	for (size_t gap = 0; gap < 1200; gap += 37) {
		char wide[4096];
		memset(wide, 'q', sizeof(wide));
		memcpy(wide, "%20", 3);
		e = pct(pw, n, enc_component, false, false);
		memcpy(wide + 3 + gap, e, strlen(e));
		memcpy(wide + 3 + gap + strlen(e) + gap, "%21", 3);
		wide[sizeof(wide) - 1] = '\0';
		HIT(d, wide, "secret PW (url)");
		/* Only its last byte escaped, far from the other escapes. */
		memset(wide, 'q', sizeof(wide) - 1);
		memcpy(wide + 1500, "%20", 3);
		memcpy(wide + 1500 + 3 + gap, PASSWORD, n - 1);
		memcpy(wide + 1500 + 3 + gap + n - 1, "%6C", 3);
		memcpy(wide + 1500 + 3 + gap + n + 2 + gap, "%21", 3);
		HIT(d, wide, "secret PW (url)");
		free(e);
	}
	/* Percent signs that are not escapes, around a raw secret. */
	char *odd = cat3("%%%4%zz%", PASSWORD, "%");
	HIT(d, odd, "secret PW (raw)");
	free(odd);
	/* Encoded twice: one layer is decoded, the other is a variant. A
	 * third layer is not undone. */
	e = pct(pw, n, enc_component, true, false);
	char *twice = pct((const uint8_t *)e, strlen(e), enc_component, true, false);
	char *thrice = pct((const uint8_t *)twice, strlen(twice), enc_component, true, false);
	HIT(d, twice, "secret PW (url, url)");
	MISS(d, thrice);
	free(thrice);
	free(twice);
	free(e);
	dlp_free(d);
}

/*
 * The automaton against a naive search. The "ab" secrets overlap in every
 * way two-letter strings can, so failure links matter; the binary secrets
 * make every byte a class of its own, so that the dense rows run out and
 * deep nodes go through their child lists. Expected: the first start, and
 * at the same start the shorter needle, then the earlier name.
 */
static void test_reference(void **state)
{
	(void)state;
	struct rng r = { 31337 };
	struct dlp *d = new_dlp();
	enum { NAB = 150, NBIN = 100, LEN = 3000 };
	char ab[NAB][32];
	size_t ablen[NAB];
	char name[16], expected[64], what[256];
	char *buf = malloc(LEN + 1);

	assert_non_null(buf);
	for (int i = 0; i < NBIN; i++) {
		uint8_t v[40];
		rng_fill(&r, v, sizeof(v));
		snprintf(name, sizeof(name), "B%d", i);
		add(d, name, v, sizeof(v));
	}
	for (int i = 0; i < NAB; i++) {
		ablen[i] = 14 + rng_next(&r) % 17;
		rng_text(&r, ab[i], ablen[i], "ab");
		ab[i][ablen[i]] = '\0';
		snprintf(name, sizeof(name), "S%d", i);
		add(d, name, ab[i], ablen[i]);
	}
	for (int trial = 0; trial < 300; trial++) {
		rng_text(&r, buf, LEN, "ab");
		buf[LEN] = '\0';
		if (trial % 2) {
			int k = (int)(rng_next(&r) % NAB);
			size_t at = rng_next(&r) % (LEN - ablen[k]);
			memcpy(buf + at, ab[k], ablen[k]);
		}
		/* Each secret is also a needle backwards (after its raw
		 * form, which names a palindrome). */
		int want = -1;
		bool want_rev = false;
		for (size_t p = 0; p < LEN && want < 0; p++) {
			for (int i = 0; i < NAB; i++) {
				for (int rv = 0; rv < 2; rv++) {
					if (p + ablen[i] > LEN)
						continue;
					bool eq = true;
					for (size_t j = 0; j < ablen[i] && eq; j++)
						eq = buf[p + j] == ab[i][rv ? ablen[i] - 1 - j : j];
					if (!eq)
						continue;
					if (want < 0 || ablen[i] < ablen[want]) {
						want = i;
						want_rev = rv && memcmp(buf + p, ab[i], ablen[i]) != 0;
					}
				}
			}
		}
		bool got = scan(d, buf, LEN, what, sizeof(what));
		if (want < 0) {
			if (got)
				fail_msg("trial %d: unexpected %s", trial, what);
			continue;
		}
		snprintf(expected, sizeof(expected), "secret S%d (%s)", want, want_rev ? "reversed" : "raw");
		if (!got || strcmp(what, expected) != 0)
			fail_msg("trial %d: got %s, expected %s", trial, got ? what : "nothing",
				 expected);
	}
	free(buf);
	dlp_free(d);
}

/*
 * The raw scan reads one position in (shortest needle - 3) through a
 * filter: a secret of the shortest length at every offset against those
 * positions, at the very start and end of the buffer, in buffers too
 * short to probe, and a secret later in the buffer than one the filter
 * let through by accident. A miss by one byte stays a miss.
 */
static void test_sampled_offsets(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	char buf[128], what[256];

	ADD_STR(d, "EIGHT", "q7Zk2Wp9");
	for (size_t at = 0; at < 40; at++) {
		for (size_t tail = 0; tail < 7; tail++) {
			memset(buf, '.', sizeof(buf));
			memcpy(buf + at, "q7Zk2Wp9", 8);
			if (!dlp_scan(d, (const uint8_t *)buf, at + 8 + tail, what, sizeof(what)) ||
			    strcmp(what, "secret EIGHT (raw)") != 0)
				fail_msg("at %zu, tail %zu: not found", at, tail);
			/* Cut off by the buffer's end: not there. */
			if (dlp_scan(d, (const uint8_t *)buf, at + 7, what, sizeof(what)))
				fail_msg("at %zu: a 7-byte prefix was taken for the secret", at);
			/* Its reversed form, too. */
			memcpy(buf + at, "9pW2kZ7q", 8);
			if (!dlp_scan(d, (const uint8_t *)buf, at + 8 + tail, what, sizeof(what)) ||
			    strcmp(what, "secret EIGHT (reversed)") != 0)
				fail_msg("at %zu, tail %zu: reversed not found", at, tail);
			memcpy(buf + at, "q7Zk2Wp8", 8);
			if (dlp_scan(d, (const uint8_t *)buf, at + 8 + tail, what, sizeof(what)))
				fail_msg("at %zu: a near miss was taken for the secret: %s", at, what);
		}
	}
	MISS(d, "q7Z");
	/* Prefixes of the secret in every probe's way, the secret itself
	 * past them: the automaton started for a prefix goes on to it. */
	for (size_t at = 0; at < 20; at++) {
		memset(buf, '.', sizeof(buf));
		for (size_t p = 0; p + 4 <= 100; p += 4)
			memcpy(buf + p, "q7Zk", 4);
		memcpy(buf + 100 - at, "q7Zk2Wp9", 8);
		buf[110] = '\0';
		HIT(d, buf, "secret EIGHT (raw)");
	}
	dlp_free(d);
}

/* ---- the first hit ---- */

static void test_first_hit(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	char tok[64], buf[512];

	ADD_STR(d, "FIRST", "first-secret-value");
	ADD_STR(d, "SECOND", "second-secret-value");
	ADD_STR(d, "INNER", "secret-val");
	snprintf(tok, sizeof(tok), "ghp_%s", "0123456789abcdefghijABCDEFGHIJ012345");

	snprintf(buf, sizeof(buf), "a=%s b=first-secret-value", tok);
	HIT(d, buf, "pattern github-token");
	snprintf(buf, sizeof(buf), "a=first-secret-value b=%s", tok);
	HIT(d, buf, "secret FIRST (raw)");
	/* Registered later but earlier in the buffer. */
	HIT(d, "second-secret-value first-secret-value", "secret SECOND (raw)");
	/* "secret-val" ends first, but "first-secret-value" starts first. */
	HIT(d, "xfirst-secret-value", "secret FIRST (raw)");
	HIT(d, "xsecret-value", "secret INNER (raw)");
	/* Encoded secret before a raw one. */
	char *h = hex((const uint8_t *)"second-secret-value", 19, false);
	snprintf(buf, sizeof(buf), "%s first-secret-value", h);
	HIT(d, buf, "secret SECOND (hex)");
	free(h);
	/* A URL-encoded secret before a raw one: the decoded view is
	 * ordered by the position in the buffer. */
	HIT(d, "%66irst-secret-value second-secret-value", "secret FIRST (url)");
	HIT(d, "second-secret-value %66irst-secret-value", "secret SECOND (raw)");
	HIT(d, "%73econd-secret-value first-secret-value", "secret SECOND (url)");
	dlp_free(d);

	/* A registered secret that is also a token names the secret. */
	d = new_dlp();
	ADD_STR(d, "GITHUB_TOKEN", tok);
	snprintf(buf, sizeof(buf), "Authorization: token %s", tok);
	HIT(d, buf, "secret GITHUB_TOKEN (raw)");
	/* The same value under two names: the first registered one. */
	ADD_STR(d, "ALSO", tok);
	HIT(d, buf, "secret GITHUB_TOKEN (raw)");
	/* What the secret is, base64-encoded, in a basic auth header. */
	char cred[128];
	snprintf(cred, sizeof(cred), "user:%s", tok);
	char *b = b64((const uint8_t *)cred, strlen(cred), B64_STD, true);
	snprintf(buf, sizeof(buf), "Authorization: Basic %s\r\n", b);
	HIT(d, buf, "secret GITHUB_TOKEN (base64)");
	free(b);
	dlp_free(d);
}

static void test_what(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	char what[8];

	ADD_STR(d, "A_LONG_SECRET_NAME", "the-secret-value");
	/* Truncated, always terminated. */
	memset(what, 'x', sizeof(what));
	assert_true(dlp_scan(d, (const uint8_t *)"the-secret-value", 16, what, sizeof(what)));
	assert_int_equal(strlen(what), sizeof(what) - 1);
	assert_true(dlp_scan(d, (const uint8_t *)"the-secret-value", 16, NULL, 0));
	memset(what, 'x', sizeof(what));
	assert_false(dlp_scan(d, (const uint8_t *)"nothing here", 12, what, sizeof(what)));
	assert_string_equal(what, "");
	assert_false(dlp_scan(d, NULL, 0, what, sizeof(what)));
	assert_false(dlp_scan(d, (const uint8_t *)"", 0, what, sizeof(what)));
	/* No secrets: the patterns still apply. */
	assert_false(dlp_scan(NULL, (const uint8_t *)"the-secret-value", 16, NULL, 0));
	dlp_free(d);
}

/* Every encoding found, and no hit's text carries the value or an
 * encoding of it. */
static void test_names_never_carry_value(void **state)
{
	(void)state;
	struct dlp *d = new_dlp();
	const uint8_t *v = (const uint8_t *)PASSWORD;
	size_t n = strlen(PASSWORD);
	char what[256];
	char *forms[] = {
		strdup(PASSWORD),
		b64(v, n, B64_STD, true),
		b64(v, n, B64_URL, false),
		hex(v, n, false),
		hex(v, n, true),
		pct(v, n, enc_all, true, false),
		pct(v, n, enc_component, false, false),
		pct(v, n, enc_component, true, true),
	};
	char *h = hex(v, n, false);

	add(d, "PW", v, n);
	for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
		assert_non_null(forms[i]);
		assert_true(scan(d, forms[i], strlen(forms[i]), what, sizeof(what)));
		assert_non_null(strstr(what, "secret PW ("));
		assert_null(strstr(what, PASSWORD));
		assert_null(strstr(what, "p@ss"));
		assert_null(strstr(what, h));
		free(forms[i]);
	}
	free(h);
	dlp_free(d);
}

/* ---- built-in patterns ---- */

/* prefix + n characters cycling through alpha from start, in buf. */
static char *tok(char *buf, size_t size, const char *prefix, size_t n, const char *alpha,
		 size_t start)
{
	size_t p = strlen(prefix), k = strlen(alpha), at = start % k;
	assert_true(p + n < size);
	memcpy(buf, prefix, p);
	/* WARNING: not alpha[(start + 7 * i) % k], nor a running index
	 * taken modulo k: clang 14.0.6 -O2 vectorizes either loop, once
	 * inlined here, into code that reads past alpha. */
	for (size_t i = 0; i < n; i++) {
		buf[p + i] = alpha[at];
		at += 7;
		if (at >= k)
			at -= k;
	}
	buf[p + n] = '\0';
	return buf;
}

/* The token is found alone and after separators and escapes, not after a
 * letter or digit, and not when one character short or with a character
 * outside its alphabet at position bad. */
static void check_pattern(const char *name, const char *token, size_t bad)
{
	char expected[64], buf[512];
	size_t n = strlen(token);
	static const char *const seps[] = { "", " ", "\"", "=", "\n", ":", "\\n", "\\t",
					    "%22", "%3D", "\\u0022", "'", "/", ".", "_", "-" };

	snprintf(expected, sizeof(expected), "pattern %s", name);
	for (size_t i = 0; i < ARRAY_SIZE(seps); i++) {
		snprintf(buf, sizeof(buf), "x %s%s trailing", seps[i], token);
		if (!strcmp(name, "private-key-pem") || !strcmp(name, "jwt") || seps[i][0])
			HIT(NULL, buf, expected);
		snprintf(buf, sizeof(buf), "%s%s", seps[i], token);
		HIT(NULL, buf, expected);
	}
	if (strcmp(name, "private-key-pem") != 0) {
		snprintf(buf, sizeof(buf), "X%s", token);
		MISS(NULL, buf);
		snprintf(buf, sizeof(buf), "word9%s", token);
		MISS(NULL, buf);
		snprintf(buf, sizeof(buf), "%%2%s", token); /* not an escape */
		MISS(NULL, buf);
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)(n - 1), token);
	MISS(NULL, buf);
	snprintf(buf, sizeof(buf), "%s", token);
	buf[bad] = '!';
	MISS(NULL, buf);
	buf[bad] = ' ';
	MISS(NULL, buf);
}

static void test_patterns(void **state)
{
	(void)state;
	char t[512], a[256], b[256], c[256];
	const char *up32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	const char *b64u = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

	static const char *const aws[] = { "AKIA", "ASIA", "AGPA", "AIDA",
					   "AROA", "ANPA", "ANVA", "APKA" };
	for (size_t i = 0; i < ARRAY_SIZE(aws); i++)
		check_pattern("aws-access-key-id", tok(t, sizeof(t), aws[i], 16, up32, i), 10);
	MISS(NULL, tok(t, sizeof(t), "AKIA", 16, "abcdefghijklmnopqrstuvwxyz234567", 0));
	MISS(NULL, tok(t, sizeof(t), "AKIA", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0189", 3));
	MISS(NULL, tok(t, sizeof(t), "ABIA", 16, up32, 0));

	static const char *const gh[] = { "ghp_", "gho_", "ghu_", "ghs_", "ghr_" };
	for (size_t i = 0; i < ARRAY_SIZE(gh); i++)
		check_pattern("github-token", tok(t, sizeof(t), gh[i], 36, ALNUM, i), 20);
	MISS(NULL, tok(t, sizeof(t), "ghx_", 36, ALNUM, 0));
	tok(a, sizeof(a), "github_pat_", 22, ALNUM, 3);
	tok(b, sizeof(b), "_", 59, ALNUM, 11);
	snprintf(t, sizeof(t), "%s%s", a, b);
	check_pattern("github-token", t, 20);
	t[33] = 'x'; /* the separator */
	MISS(NULL, t);

	check_pattern("gitlab-token", tok(t, sizeof(t), "glpat-", 20, b64u, 1), 15);

	static const char *const slack[] = { "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-" };
	for (size_t i = 0; i < ARRAY_SIZE(slack); i++)
		check_pattern("slack-token",
			      tok(t, sizeof(t), slack[i], 10, "0123456789-abcXYZ", i), 9);
	HIT(NULL, tok(t, sizeof(t), "xoxb-", 60, "0123456789-abcXYZ", 0), "pattern slack-token");
	MISS(NULL, tok(t, sizeof(t), "xoxc-", 30, ALNUM, 0));

	check_pattern("stripe-secret-key", tok(t, sizeof(t), "sk_live_", 24, ALNUM, 2), 20);
	check_pattern("stripe-secret-key", tok(t, sizeof(t), "rk_live_", 24, ALNUM, 5), 9);
	HIT(NULL, tok(t, sizeof(t), "sk_live_", 99, ALNUM, 2), "pattern stripe-secret-key");
	MISS(NULL, tok(t, sizeof(t), "sk_test_", 30, ALNUM, 2));

	check_pattern("google-api-key", tok(t, sizeof(t), "AIza", 35, b64u, 4), 30);

	check_pattern("openai-api-key", tok(t, sizeof(t), "sk-", 40, b64u, 0), 30);
	/* "proj-" counts towards the 40 after "sk-". */
	check_pattern("openai-api-key", tok(t, sizeof(t), "sk-proj-", 35, b64u, 8), 30);
	HIT(NULL, tok(t, sizeof(t), "sk-proj-", 150, b64u, 8), "pattern openai-api-key");
	/* sk-ant- is Anthropic's, and short of 80 it is nothing. */
	MISS(NULL, tok(t, sizeof(t), "sk-ant-", 60, b64u, 0));
	check_pattern("anthropic-api-key", tok(t, sizeof(t), "sk-ant-", 80, b64u, 0), 50);
	check_pattern("anthropic-api-key", tok(t, sizeof(t), "sk-ant-api03-", 74, b64u, 0), 50);

	static const char *const pem[] = {
		"-----BEGIN PRIVATE KEY-----",
		"-----BEGIN RSA PRIVATE KEY-----",
		"-----BEGIN EC PRIVATE KEY-----",
		"-----BEGIN OPENSSH PRIVATE KEY-----",
		"-----BEGIN ENCRYPTED PRIVATE KEY-----",
		"-----BEGIN DSA PRIVATE KEY-----",
		"-----BEGIN PGP PRIVATE KEY BLOCK-----",
		"-----BEGIN+RSA+PRIVATE+KEY-----",
		"-----BEGIN%20OPENSSH%20PRIVATE%20KEY-----",
	};
	for (size_t i = 0; i < ARRAY_SIZE(pem); i++)
		check_pattern("private-key-pem", pem[i], strlen(pem[i]) - 3);
	HIT(NULL, "{\"key\":\"-----BEGIN RSA PRIVATE KEY-----\\nMIIE\"}", "pattern private-key-pem");
	HIT(NULL, "x------BEGIN PRIVATE KEY-----", "pattern private-key-pem");
	MISS(NULL, "-----BEGIN PUBLIC KEY-----");
	MISS(NULL, "-----BEGIN CERTIFICATE-----");
	MISS(NULL, "-----BEGIN RSA PUBLIC KEY-----");
	MISS(NULL, "-----BEGIN PRIVATE KEY----");
	MISS(NULL, "-----BEGIN private key-----");
	MISS(NULL, "-----BEGIN A B C D E PRIVATE KEY-----");

	tok(a, sizeof(a), "eyJ", 16, b64u, 1);
	tok(b, sizeof(b), "eyJ", 40, b64u, 2);
	tok(c, sizeof(c), "", 10, b64u, 3);
	snprintf(t, sizeof(t), "%s.%s.%s", a, b, c);
	check_pattern("jwt", t, 1);
	snprintf(t, sizeof(t), "Authorization: Bearer %s.%s.%s\r\n", a, b, c);
	HIT(NULL, t, "pattern jwt");
	snprintf(t, sizeof(t), "%s.%s.", a, b); /* no signature */
	MISS(NULL, t);
	snprintf(t, sizeof(t), "%s.x%s.%s", a, b, c); /* payload not eyJ */
	MISS(NULL, t);
	snprintf(t, sizeof(t), "eyJhbGciOi.%s.%s", b, c); /* header too short */
	MISS(NULL, t);
	/* A JWT after a long run of eyJ-looking base64. */
	snprintf(t, sizeof(t), "eyJeyJeyJeyJeyJeyJeyJ %s.%s.%s", a, b, c);
	HIT(NULL, t, "pattern jwt");
	snprintf(t, sizeof(t), "eyJeyJ.eyJeyJeyJeyJeyJ.eyJeyJeyJeyJ.%s.%s.%s", a, b, c);
	HIT(NULL, t, "pattern jwt");

	check_pattern("npm-token", tok(t, sizeof(t), "npm_", 36, ALNUM, 6), 20);
	check_pattern("pypi-token", tok(t, sizeof(t), "pypi-AgEIcHlwaS5vcmc", 50, b64u, 7), 40);
	MISS(NULL, tok(t, sizeof(t), "pypi-AgEIcHlwaS5vcmX", 80, b64u, 7));
}

static void test_pattern_table(void **state)
{
	(void)state;
	size_t n = 0;

	for (; dlp_patterns[n][0]; n++) {
		assert_non_null(dlp_patterns[n][1]);
		assert_true(strlen(dlp_patterns[n][1]) > 10);
		for (size_t m = 0; m < n; m++)
			assert_string_not_equal(dlp_patterns[n][0], dlp_patterns[m][0]);
	}
	assert_int_equal(n, 12);
}

/* ---- no false positives ---- */

static void test_random_buffers(void **state)
{
	(void)state;
	const size_t n = 1 << 20;
	uint8_t *buf = malloc(n);
	struct rng r = { 20240601 };
	struct dlp *d = new_dlp();
	char what[256];

	assert_non_null(buf);
	/* Ten random secrets that the buffers do not contain. */
	for (int i = 0; i < 10; i++) {
		uint8_t v[24];
		char name[16];
		rng_fill(&r, v, sizeof(v));
		snprintf(name, sizeof(name), "R%d", i);
		add(d, name, v, sizeof(v));
	}
	rng_fill(&r, buf, n);
	if (dlp_scan(d, buf, n, what, sizeof(what)))
		fail_msg("random bytes: %s", what);
	rng_text(&r, (char *)buf, n, ALNUM);
	if (dlp_scan(d, buf, n, what, sizeof(what)))
		fail_msg("random alphanumerics: %s", what);
	rng_text(&r, (char *)buf, n, B64_STD);
	if (dlp_scan(d, buf, n, what, sizeof(what)))
		fail_msg("random base64: %s", what);
	rng_text(&r, (char *)buf, n, "0123456789abcdef%");
	if (dlp_scan(d, buf, n, what, sizeof(what)))
		fail_msg("random hex and percent signs: %s", what);
	dlp_free(d);
	free(buf);
}

/* Inputs built to make a careless matcher slow or wrong: long runs of
 * prefixes. They must neither hit nor crash (speed is measured in bench,
 * not here). */
static void test_adversarial(void **state)
{
	(void)state;
	const size_t n = 1 << 20;
	char *buf = malloc(n + 1);
	static const struct {
		const char *unit, *hit;
	} units[] = {
		{ "eyJ", NULL },
		{ "eyJ.", NULL },
		{ "eyJeyJeyJeyJ.", NULL },
		{ "-----BEGIN ", NULL },
		{ "-----BEGIN A ", NULL },
		{ "%", NULL },
		{ "%4", NULL },
		{ "%41", NULL },
		{ "AKIA1", NULL },
		{ "github_pat_", NULL },
		{ "ghp_", NULL },
		{ "aaaaaaaa", NULL },
		/* By format, these runs are credentials. */
		{ "sk-ant-", "pattern anthropic-api-key" },
		{ "sk-", "pattern openai-api-key" },
		{ "AKIA", "pattern aws-access-key-id" },
		{ "xoxb-", "pattern slack-token" },
		{ "eyJeyJeyJeyJe.", "pattern jwt" },
	};
	struct dlp *d = new_dlp();

	assert_non_null(buf);
	ADD_STR(d, "AS", "aaaaaaaaaaaaaaaaaaaaaaaab");
	for (size_t u = 0; u < ARRAY_SIZE(units); u++) {
		size_t k = strlen(units[u].unit);
		for (size_t i = 0; i < n; i++)
			buf[i] = units[u].unit[i % k];
		buf[n] = '\0';
		if (units[u].hit)
			expect_hit(d, buf, n, units[u].hit);
		else
			expect_miss(d, buf, n);
	}
	/* The secret after a megabyte of its own prefix. */
	memset(buf, 'a', n);
	memcpy(buf + n - 1, "b", 2);
	HIT(d, buf, "secret AS (raw)");
	dlp_free(d);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_limit_count),
		cmocka_unit_test(test_limit_bytes),
		cmocka_unit_test(test_raw_every_offset),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_base64_lengths),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_sampled_offsets),
		cmocka_unit_test(test_first_hit),
		cmocka_unit_test(test_what),
		cmocka_unit_test(test_names_never_carry_value),
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_pattern_table),
		cmocka_unit_test(test_random_buffers),
		cmocka_unit_test(test_adversarial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
