/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for net/tls: the SNI parser against ClientHellos that
 * OpenSSL writes (whole, split across records, truncated, corrupted) and
 * against hand-built ones for each rule; the session CA and its leaves,
 * checked field by field and through real in-memory handshakes; the
 * leaf cache; the upstream client context and its name checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "net/tls.h"
#include "util/cleanup.h"

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

static void tls_ca_freep(struct tls_ca **p)
{
	tls_ca_free(*p);
}
#define _cleanup_ca_ _cleanup_(tls_ca_freep)

static void ssl_ctx_freep(SSL_CTX **p)
{
	SSL_CTX_free(*p);
}
#define _cleanup_ssl_ctx_ _cleanup_(ssl_ctx_freep)

static void ssl_freep(SSL **p)
{
	SSL_free(*p);
}
#define _cleanup_ssl_ _cleanup_(ssl_freep)

static void x509_freep(X509 **p)
{
	X509_free(*p);
}
#define _cleanup_x509_ _cleanup_(x509_freep)

static void pkey_freep(EVP_PKEY **p)
{
	EVP_PKEY_free(*p);
}
#define _cleanup_pkey_ _cleanup_(pkey_freep)

static struct tls_ca *ca_new(void)
{
	struct tls_ca *ca = NULL;
	struct error err = { 0 };

	if (tls_ca_new(&ca, &err) < 0)
		fail_msg("tls_ca_new: %s", err.msg);
	assert_non_null(ca);
	return ca;
}

static SSL_CTX *server_ctx(struct tls_ca *ca, const char *host)
{
	struct error err = { 0 };
	SSL_CTX *ctx = tls_ca_server_ctx(ca, host, &err);

	if (!ctx)
		fail_msg("tls_ca_server_ctx(%s): %s", host, err.msg);
	return ctx;
}

/* Parse a copy of exactly n bytes, so that ASan sees any over-read. */
static int parse(const uint8_t *b, size_t n, char *sni, size_t sni_len)
{
	uint8_t *copy = malloc(n ? n : 1);
	int r;

	assert_non_null(copy);
	if (n)
		memcpy(copy, b, n);
	r = tls_parse_sni(copy, n, sni, sni_len);
	free(copy);
	return r;
}

/* The rules a name from tls_parse_sni must satisfy. */
static bool name_ok(const char *s)
{
	size_t len = strlen(s), label = 0;

	if (len == 0 || len > 255)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0;
}

/* A ClientHello as OpenSSL's client writes it. Caller frees. */
static uint8_t *openssl_hello(const char *sni, int max_version, const unsigned char *alpn,
			      size_t alpn_len, unsigned max_fragment, size_t *len)
{
	_cleanup_ssl_ctx_ SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	_cleanup_ssl_ SSL *ssl = NULL;
	BIO *rb, *wb;
	char *data;
	long n;
	uint8_t *out;

	assert_non_null(ctx);
	if (max_version)
		assert_int_equal(SSL_CTX_set_max_proto_version(ctx, max_version), 1);
	if (max_fragment)
		assert_int_equal(SSL_CTX_set_max_send_fragment(ctx, max_fragment), 1);
	ssl = SSL_new(ctx);
	assert_non_null(ssl);
	rb = BIO_new(BIO_s_mem());
	wb = BIO_new(BIO_s_mem());
	assert_non_null(rb);
	assert_non_null(wb);
	SSL_set_bio(ssl, rb, wb);
	if (sni)
		assert_int_equal(SSL_set_tlsext_host_name(ssl, sni), 1);
	if (alpn)
		assert_int_equal(SSL_set_alpn_protos(ssl, alpn, (unsigned)alpn_len), 0);
	assert_int_equal(SSL_connect(ssl), -1);
	assert_int_equal(SSL_get_error(ssl, -1), SSL_ERROR_WANT_READ);
	n = BIO_get_mem_data(wb, &data);
	assert_true(n > 0);
	out = malloc((size_t)n);
	assert_non_null(out);
	memcpy(out, data, (size_t)n);
	*len = (size_t)n;
	return out;
}

/* The handshake messages carried by a stream of handshake records. */
static size_t unframe(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_size)
{
	size_t off = 0, n = 0;

	while (off < in_len) {
		size_t rlen;

		assert_true(in_len - off >= 5);
		assert_int_equal(in[off], 22);
		rlen = (size_t)in[off + 3] << 8 | in[off + 4];
		assert_true(in_len - off - 5 >= rlen);
		assert_true(n + rlen <= out_size);
		memcpy(out + n, in + off + 5, rlen);
		n += rlen;
		off += 5 + rlen;
	}
	return n;
}

/* Handshake bytes cut into records of at most frag bytes. */
static size_t frame(const uint8_t *hs, size_t hs_len, size_t frag, uint8_t *out, size_t out_size)
{
	size_t n = 0;

	for (size_t off = 0; off < hs_len; off += frag) {
		size_t k = hs_len - off < frag ? hs_len - off : frag;

		assert_true(n + 5 + k <= out_size);
		out[n++] = 22;
		out[n++] = 3;
		out[n++] = 1;
		out[n++] = (uint8_t)(k >> 8);
		out[n++] = (uint8_t)k;
		memcpy(out + n, hs + off, k);
		n += k;
	}
	return n;
}

/* A byte writer with back-patched 16- and 24-bit lengths. */
struct bw {
	uint8_t b[40000];
	size_t n;
};

static void put8(struct bw *w, unsigned v)
{
	assert_true(w->n < sizeof(w->b));
	w->b[w->n++] = (uint8_t)v;
}

static void put16(struct bw *w, unsigned v)
{
	put8(w, v >> 8);
	put8(w, v & 0xff);
}

static void put_mem(struct bw *w, const void *p, size_t n)
{
	assert_true(w->n + n <= sizeof(w->b));
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void put_fill(struct bw *w, uint8_t v, size_t n)
{
	assert_true(w->n + n <= sizeof(w->b));
	memset(w->b + w->n, v, n);
	w->n += n;
}

static size_t open16(struct bw *w)
{
	size_t at = w->n;

	put16(w, 0);
	return at;
}

static void close16(struct bw *w, size_t at)
{
	size_t len = w->n - at - 2;

	assert_true(len <= 0xffff);
	w->b[at] = (uint8_t)(len >> 8);
	w->b[at + 1] = (uint8_t)len;
}

/* A server_name extension with one entry of type name_type. */
static void put_sni_ext(struct bw *w, unsigned name_type, const void *name, size_t len)
{
	size_t ext, list, nm;

	put16(w, 0);
	ext = open16(w);
	list = open16(w);
	put8(w, name_type);
	nm = open16(w);
	put_mem(w, name, len);
	close16(w, nm);
	close16(w, list);
	close16(w, ext);
}

/* Fixed offsets in the stream made by build_hello (one record). */
enum {
	OFF_REC_VERSION = 1,
	OFF_REC_LEN = 3,
	OFF_HS_TYPE = 5,
	OFF_HS_LEN = 6,
	OFF_VERSION = 9,
	OFF_SID_LEN = 43,
	OFF_CIPHERS_LEN = 76,
	OFF_COMP_LEN = 82,
	OFF_EXTS_LEN = 84,
	OFF_EXTS = 86,
};

/* A one-record ClientHello with a 32-byte session id, two cipher
 * suites, the null compression method and the given extensions block
 * (ext == NULL: no extensions block at all). */
static size_t build_hello(uint8_t *out, size_t out_size, const struct bw *ext)
{
	static struct bw w;
	size_t rec, body;

	w.n = 0;
	put8(&w, 22);
	put16(&w, 0x0301);
	rec = open16(&w);
	put8(&w, 1);
	body = w.n;
	put8(&w, 0);
	put16(&w, 0);
	put16(&w, 0x0303);
	put_fill(&w, 0xab, 32);
	put8(&w, 32);
	put_fill(&w, 0xcd, 32);
	put16(&w, 4);
	put16(&w, 0x1301);
	put16(&w, 0xc02f);
	put8(&w, 1);
	put8(&w, 0);
	if (ext) {
		size_t e = open16(&w);

		put_mem(&w, ext->b, ext->n);
		close16(&w, e);
	}
	/* handshake length (24 bits) and record length */
	w.b[body] = (uint8_t)((w.n - body - 3) >> 16);
	w.b[body + 1] = (uint8_t)((w.n - body - 3) >> 8);
	w.b[body + 2] = (uint8_t)(w.n - body - 3);
	close16(&w, rec);
	assert_true(w.n <= out_size);
	memcpy(out, w.b, w.n);
	return w.n;
}

static size_t hello_with_name(uint8_t *out, size_t out_size, const void *name, size_t len)
{
	static struct bw e;

	e.n = 0;
	put_sni_ext(&e, 0, name, len);
	return build_hello(out, out_size, &e);
}

static void set16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static size_t get16(const uint8_t *p)
{
	return (size_t)p[0] << 8 | p[1];
}

/* ---------------------------------------------------------------- */
/* SNI: ClientHellos written by OpenSSL                              */

static void test_sni_openssl(void **state)
{
	static const int versions[] = { 0, TLS1_2_VERSION, TLS1_VERSION };
	char sni[256];
	(void)state;

	for (size_t v = 0; v < ARRAY_SIZE(versions); v++) {
		size_t len;
		_cleanup_free_ uint8_t *h =
			openssl_hello("example.test", versions[v], NULL, 0, 0, &len);

		assert_int_equal(parse(h, len, sni, sizeof(sni)), 1);
		assert_string_equal(sni, "example.test");
	}
}

static void test_sni_openssl_normalised(void **state)
{
	size_t len;
	_cleanup_free_ uint8_t *h = openssl_hello("WWW.Example.TEST.", 0, NULL, 0, 0, &len);
	char sni[256];
	(void)state;

	assert_int_equal(parse(h, len, sni, sizeof(sni)), 1);
	assert_string_equal(sni, "www.example.test");
}

static void test_sni_openssl_absent(void **state)
{
	size_t len;
	_cleanup_free_ uint8_t *h = openssl_hello(NULL, 0, NULL, 0, 0, &len);
	_cleanup_free_ uint8_t *h12 = NULL;
	char sni[256] = "stale";
	(void)state;

	assert_int_equal(parse(h, len, sni, sizeof(sni)), -ENOENT);
	assert_string_equal(sni, "");
	h12 = openssl_hello(NULL, TLS1_2_VERSION, NULL, 0, 0, &len);
	assert_int_equal(parse(h12, len, sni, sizeof(sni)), -ENOENT);
}

/* A long ALPN list makes the hello larger than OpenSSL's smallest
 * fragment, so OpenSSL itself splits it across records. */
static void test_sni_openssl_split_by_openssl(void **state)
{
	unsigned char alpn[600];
	size_t alen = 0, len, hs_len;
	_cleanup_free_ uint8_t *h = NULL;
	uint8_t hs[20000];
	char sni[256];
	(void)state;

	while (alen + 21 <= sizeof(alpn)) {
		alpn[alen] = 20;
		memset(alpn + alen + 1, 'a' + (int)(alen % 26), 20);
		alen += 21;
	}
	h = openssl_hello("split.example.test", 0, alpn, alen, 512, &len);
	/* more than one record */
	assert_true((size_t)(h[3] << 8 | h[4]) + 5 < len);
	hs_len = unframe(h, len, hs, sizeof(hs));
	assert_true(hs_len > 512);
	assert_int_equal(parse(h, len, sni, sizeof(sni)), 1);
	assert_string_equal(sni, "split.example.test");
}

static void test_sni_split_records(void **state)
{
	static const size_t frags[] = { 1, 2, 3, 4, 5, 7, 41, 64, 100, 255, 512, 16384 };
	size_t len, hs_len;
	_cleanup_free_ uint8_t *h = openssl_hello("records.example.test", 0, NULL, 0, 0, &len);
	uint8_t hs[4096], out[40000];
	char sni[256];
	(void)state;

	hs_len = unframe(h, len, hs, sizeof(hs));
	for (size_t f = 0; f < ARRAY_SIZE(frags); f++) {
		size_t n = frame(hs, hs_len, frags[f], out, sizeof(out));

		assert_int_equal(parse(out, n, sni, sizeof(sni)), 1);
		assert_string_equal(sni, "records.example.test");
		/* What follows the record that ends the ClientHello (here a
		 * ChangeCipherSpec, then garbage) is not looked at. */
		memcpy(out + n, "\x14\x03\x03\x00\x01\x01\xff\xff", 8);
		assert_int_equal(parse(out, n + 8, sni, sizeof(sni)), 1);
		assert_string_equal(sni, "records.example.test");
	}
}

/* Every proper prefix is "need more" and never a name. */
static void test_sni_truncated(void **state)
{
	static const size_t frags[] = { 1, 3, 7, 100, 16384 };
	size_t len, hs_len;
	_cleanup_free_ uint8_t *h = openssl_hello("cut.example.test", 0, NULL, 0, 0, &len);
	uint8_t hs[4096], out[40000];
	char sni[256];
	(void)state;

	hs_len = unframe(h, len, hs, sizeof(hs));
	for (size_t f = 0; f < ARRAY_SIZE(frags); f++) {
		size_t n = frame(hs, hs_len, frags[f], out, sizeof(out));

		for (size_t cut = 0; cut < n; cut++) {
			strcpy(sni, "stale");
			assert_int_equal(parse(out, cut, sni, sizeof(sni)), 0);
			assert_string_equal(sni, "");
		}
		assert_int_equal(parse(out, n, sni, sizeof(sni)), 1);
	}
	assert_int_equal(tls_parse_sni(NULL, 0, sni, sizeof(sni)), 0);
}

/* Every byte changed three ways: no crash, no over-read, and a name only
 * when the bytes still form a valid hello; outside the name's own bytes
 * that name is the original one. */
static void test_sni_corrupted(void **state)
{
	static const char name[] = "corrupt.example.test";
	static const unsigned deltas[] = { 1, 0xff, 0x80 };
	size_t len;
	_cleanup_free_ uint8_t *h = openssl_hello(name, 0, NULL, 0, 0, &len);
	const uint8_t *at = memmem(h, len, name, strlen(name));
	size_t name_off;
	char sni[256];
	(void)state;

	assert_non_null(at);
	name_off = (size_t)(at - h);
	for (size_t i = 0; i < len; i++) {
		for (size_t d = 0; d < ARRAY_SIZE(deltas); d++) {
			uint8_t saved = h[i];
			int r;

			h[i] = (uint8_t)(saved + deltas[d]);
			r = parse(h, len, sni, sizeof(sni));
			h[i] = saved;
			if (r == 1) {
				assert_true(name_ok(sni));
				if (i < name_off || i >= name_off + strlen(name))
					assert_string_equal(sni, name);
			} else {
				assert_true(r == 0 || r == -EINVAL || r == -ENOENT);
				assert_string_equal(sni, "");
			}
		}
	}
}

/* ---------------------------------------------------------------- */
/* SNI: the rules, one at a time                                     */

static void test_sni_lengths(void **state)
{
	uint8_t h[1024];
	size_t n = hello_with_name(h, sizeof(h), "len.test", 8);
	char sni[256];
	struct {
		size_t off;
		int delta;
		int expect;
	} cases[] = {
		/* a record longer than the message it ends */
		{ OFF_REC_LEN, +1, -EINVAL },
		/* a longer message: wait for bytes that never come */
		{ OFF_HS_LEN + 1, +1, 0 },
		/* a shorter record: the next "record header" is the name */
		{ OFF_REC_LEN, -1, -EINVAL },
		/* a shorter message than its record */
		{ OFF_HS_LEN + 1, -1, -EINVAL },
		{ OFF_CIPHERS_LEN, +1, -EINVAL },
		{ OFF_CIPHERS_LEN, -1, -EINVAL },
		{ OFF_CIPHERS_LEN, +2, -EINVAL },
		{ OFF_CIPHERS_LEN, -2, -EINVAL },
		{ OFF_EXTS_LEN, +1, -EINVAL },
		{ OFF_EXTS_LEN, -1, -EINVAL },
		{ OFF_EXTS + 2, +1, -EINVAL },  /* extension length */
		{ OFF_EXTS + 2, -1, -EINVAL },
		{ OFF_EXTS + 4, +1, -EINVAL },  /* server_name_list length */
		{ OFF_EXTS + 4, -1, -EINVAL },
		{ OFF_EXTS + 7, +1, -EINVAL },  /* host_name length */
		{ OFF_EXTS + 7, -1, -EINVAL },
	};
	(void)state;

	assert_int_equal(parse(h, n, sni, sizeof(sni)), 1);
	assert_string_equal(sni, "len.test");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint8_t c[1024];
		size_t v;

		memcpy(c, h, n);
		v = get16(c + cases[i].off);
		set16(c + cases[i].off, v + (size_t)(ptrdiff_t)cases[i].delta);
		strcpy(sni, "stale");
		if (parse(c, n, sni, sizeof(sni)) != cases[i].expect)
			fail_msg("case %zu: offset %zu %+d: got %d, want %d", i, cases[i].off,
				 cases[i].delta, parse(c, n, sni, sizeof(sni)), cases[i].expect);
		assert_string_equal(sni, "");
	}
}

static void test_sni_one_byte_lengths(void **state)
{
	uint8_t h[1024], c[1024];
	size_t n = hello_with_name(h, sizeof(h), "len.test", 8);
	char sni[256];
	(void)state;

	/* session id: 33 is too long; one byte more or less breaks framing */
	memcpy(c, h, n);
	c[OFF_SID_LEN] = 33;
	assert_int_equal(parse(c, n, sni, sizeof(sni)), -EINVAL);
	c[OFF_SID_LEN] = 31;
	assert_int_equal(parse(c, n, sni, sizeof(sni)), -EINVAL);
	/* no compression method, or one too many */
	memcpy(c, h, n);
	c[OFF_COMP_LEN] = 0;
	assert_int_equal(parse(c, n, sni, sizeof(sni)), -EINVAL);
	c[OFF_COMP_LEN] = 2;
	assert_int_equal(parse(c, n, sni, sizeof(sni)), -EINVAL);
	/* handshake type */
	memcpy(c, h, n);
	c[OFF_HS_TYPE] = 2;
	assert_int_equal(parse(c, n, sni, sizeof(sni)), -EINVAL);
	assert_int_equal(parse(c, OFF_HS_TYPE + 1, sni, sizeof(sni)), -EINVAL);
	/* server_name entry of another type only: no SNI */
	memcpy(c, h, n);
	c[OFF_EXTS + 6] = 1;
	assert_int_equal(parse(c, n, sni, sizeof(sni)), -ENOENT);
}

static void test_sni_record_layer(void **state)
{
	uint8_t h[1024], c[1024];
	size_t n = hello_with_name(h, sizeof(h), "rec.test", 8);
	char sni[256];
	(void)state;

	/* not TLS: refused from the first byte */
	assert_int_equal(parse((const uint8_t *)"G", 1, sni, sizeof(sni)), -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x17", 1, sni, sizeof(sni)), -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x16", 1, sni, sizeof(sni)), 0);
	assert_int_equal(parse((const uint8_t *)"\x16\x02", 2, sni, sizeof(sni)), -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x16\x03", 2, sni, sizeof(sni)), 0);
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x00", 3, sni, sizeof(sni)), -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x05", 3, sni, sizeof(sni)), -EINVAL);

	for (unsigned minor = 0; minor <= 5; minor++) {
		memcpy(c, h, n);
		c[OFF_REC_VERSION + 1] = (uint8_t)minor;
		assert_int_equal(parse(c, n, sni, sizeof(sni)),
				 minor >= 1 && minor <= 4 ? 1 : -EINVAL);
	}
	/* an alert record, an empty record, an oversized record */
	memcpy(c, h, n);
	c[0] = 21;
	assert_int_equal(parse(c, n, sni, sizeof(sni)), -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x01\x00\x00\x01", 6, sni, sizeof(sni)),
			 -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x01\x40\x01", 5, sni, sizeof(sni)),
			 -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x01\x40\x00", 5, sni, sizeof(sni)), 0);
	/* an empty record between two halves of the hello */
	{
		uint8_t hs[1024], out[2048];
		size_t hs_len = unframe(h, n, hs, sizeof(hs)), k;

		k = frame(hs, 10, 10, out, sizeof(out));
		memcpy(out + k, "\x16\x03\x01\x00\x00", 5);
		k += 5;
		k += frame(hs + 10, hs_len - 10, 1000, out + k, sizeof(out) - k);
		assert_int_equal(parse(out, k, sni, sizeof(sni)), -EINVAL);
		/* a record of another type between the halves */
		k = frame(hs, 10, 10, out, sizeof(out));
		k += frame(hs + 10, hs_len - 10, 1000, out + k, sizeof(out) - k);
		out[15] = 20;
		assert_int_equal(parse(out, k, sni, sizeof(sni)), -EINVAL);
	}
	/* trailing bytes after the hello in its own record */
	memcpy(c, h, n);
	c[n] = 0;
	set16(c + OFF_REC_LEN, get16(c + OFF_REC_LEN) + 1);
	assert_int_equal(parse(c, n + 1, sni, sizeof(sni)), -EINVAL);
	/* known from the record header alone, before its bytes arrive */
	assert_int_equal(parse(c, OFF_HS_LEN + 3, sni, sizeof(sni)), -EINVAL);
	/* a second handshake message in the record */
	memcpy(c + n, "\x01\x00\x00\x00", 4);
	set16(c + OFF_REC_LEN, get16(h + OFF_REC_LEN) + 4);
	assert_int_equal(parse(c, n + 4, sni, sizeof(sni)), -EINVAL);
}

static void test_sni_size_bound(void **state)
{
	static struct bw e;
	static uint8_t h[40000], hs[40000], out[40000];
	size_t n, hs_len, k;
	char sni[256];
	(void)state;

	/* a hello of exactly 16 KiB (header included) with a padding
	 * extension (type 21) after the server name */
	e.n = 0;
	put_sni_ext(&e, 0, "big.test", 8);
	put16(&e, 21);
	put16(&e, 0);
	n = build_hello(h, sizeof(h), &e);
	{
		size_t pad = 16384 - (n - 5);
		size_t at = e.n - 2;

		put_fill(&e, 0, pad);
		set16(e.b + at, pad);
	}
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(n, 5 + 16384);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), 1);
	assert_string_equal(sni, "big.test");
	hs_len = unframe(h, n, hs, sizeof(hs));
	k = frame(hs, hs_len, 1000, out, sizeof(out));
	assert_int_equal(parse(out, k, sni, sizeof(sni)), 1);

	/* one byte more: refused from the handshake header alone */
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x01\x00\x04\x01\x00\x3f\xfd", 9, sni,
			       sizeof(sni)),
			 -EINVAL);
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x01\x00\x04\x01\x00\x3f\xfc", 9, sni,
			       sizeof(sni)),
			 0);
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x01\x00\x04\x01\xff\xff\xff", 9, sni,
			       sizeof(sni)),
			 -EINVAL);
	/* the header itself split over records */
	assert_int_equal(parse((const uint8_t *)"\x16\x03\x01\x00\x01\x01\x16\x03\x01\x00\x03\x00"
						"\x40\x00",
			       14, sni, sizeof(sni)),
			 -EINVAL);
}

static void test_sni_hello_fields(void **state)
{
	static struct bw e;
	uint8_t h[1024], c[1024];
	size_t n;
	char sni[256];
	(void)state;

	/* legacy_version 3.1 .. 3.3 */
	n = hello_with_name(h, sizeof(h), "v.test", 6);
	for (unsigned v = 0x0300; v <= 0x0305; v++) {
		memcpy(c, h, n);
		set16(c + OFF_VERSION, v);
		assert_int_equal(parse(c, n, sni, sizeof(sni)),
				 v >= 0x0301 && v <= 0x0303 ? 1 : -EINVAL);
	}
	/* no extensions block, and an empty one */
	n = build_hello(h, sizeof(h), NULL);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -ENOENT);
	e.n = 0;
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -ENOENT);
	/* one byte after the extensions block, inside the message */
	n = hello_with_name(h, sizeof(h), "v.test", 6);
	memcpy(c, h, n);
	c[n] = 0;
	c[OFF_HS_LEN + 2]++;
	set16(c + OFF_REC_LEN, get16(c + OFF_REC_LEN) + 1);
	assert_int_equal(parse(c, n + 1, sni, sizeof(sni)), -EINVAL);
	/* a lone byte where the extensions block length would be */
	n = build_hello(h, sizeof(h), NULL);
	memcpy(c, h, n);
	c[n] = 0;
	c[OFF_HS_LEN + 2]++;
	set16(c + OFF_REC_LEN, get16(c + OFF_REC_LEN) + 1);
	assert_int_equal(parse(c, n + 1, sni, sizeof(sni)), -EINVAL);
}

static void test_sni_extensions(void **state)
{
	static struct bw e;
	uint8_t h[2048];
	size_t n;
	char sni[256];
	(void)state;

	/* after other extensions, including GREASE-style and empty ones */
	e.n = 0;
	put16(&e, 0x0a0a);
	put16(&e, 0);
	put16(&e, 43);
	put16(&e, 3);
	put8(&e, 2);
	put16(&e, 0x0304);
	put_sni_ext(&e, 0, "after.test", 10);
	put16(&e, 0xfafa);
	put16(&e, 1);
	put8(&e, 0);
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), 1);
	assert_string_equal(sni, "after.test");

	/* two server_name extensions, even the same name */
	e.n = 0;
	put_sni_ext(&e, 0, "a.test", 6);
	put_sni_ext(&e, 0, "a.test", 6);
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -EINVAL);
	e.n = 0;
	put_sni_ext(&e, 0, "a.test", 6);
	put_sni_ext(&e, 1, "b.test", 6);
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -EINVAL);

	/* two host_name entries in one list; one of another type is fine */
	for (unsigned second = 0; second <= 1; second++) {
		size_t ext, list, nm;

		e.n = 0;
		put16(&e, 0);
		ext = open16(&e);
		list = open16(&e);
		put8(&e, 0);
		nm = open16(&e);
		put_mem(&e, "a.test", 6);
		close16(&e, nm);
		put8(&e, second);
		nm = open16(&e);
		put_mem(&e, "b.test", 6);
		close16(&e, nm);
		close16(&e, list);
		close16(&e, ext);
		n = build_hello(h, sizeof(h), &e);
		assert_int_equal(parse(h, n, sni, sizeof(sni)), second == 0 ? -EINVAL : 1);
		if (second)
			assert_string_equal(sni, "a.test");
	}

	/* an empty server_name extension (what servers echo) and an empty list */
	e.n = 0;
	put16(&e, 0);
	put16(&e, 0);
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -EINVAL);
	e.n = 0;
	put16(&e, 0);
	put16(&e, 2);
	put16(&e, 0);
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -EINVAL);
	/* bytes after the list inside the extension */
	e.n = 0;
	put16(&e, 0);
	put16(&e, 2 + 1 + 2 + 1 + 1);
	put16(&e, 1 + 2 + 1);
	put8(&e, 0);
	put16(&e, 1);
	put8(&e, 'a');
	put8(&e, 0);
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -EINVAL);
	/* a truncated entry */
	e.n = 0;
	put16(&e, 0);
	put16(&e, 2 + 2);
	put16(&e, 2);
	put8(&e, 0);
	put8(&e, 0);
	n = build_hello(h, sizeof(h), &e);
	assert_int_equal(parse(h, n, sni, sizeof(sni)), -EINVAL);
}

static void check_name(const char *in, size_t in_len, int expect, const char *out)
{
	uint8_t h[2048];
	size_t n = hello_with_name(h, sizeof(h), in, in_len);
	char sni[256] = "stale";
	int r = parse(h, n, sni, sizeof(sni));

	if (r != expect)
		fail_msg("name \"%.*s\" (%zu bytes): got %d, want %d", (int)in_len, in, in_len, r,
			 expect);
	assert_string_equal(sni, out ? out : "");
}

#define NAME_OK(in, out) check_name((in), sizeof(in) - 1, 1, (out))
#define NAME_BAD(in) check_name((in), sizeof(in) - 1, -EINVAL, NULL)

static void test_sni_names(void **state)
{
	char name[300];
	(void)state;

	NAME_OK("a", "a");
	NAME_OK("a.", "a");
	NAME_OK("Example.COM", "example.com");
	NAME_OK("xn--bcher-kva.example", "xn--bcher-kva.example");
	NAME_OK("_acme-challenge.a-b.test", "_acme-challenge.a-b.test");
	NAME_OK("192.0.2.1", "192.0.2.1");
	NAME_BAD("");
	NAME_BAD(".");
	NAME_BAD("..");
	NAME_BAD("a..");
	NAME_BAD(".a");
	NAME_BAD("a..b");
	NAME_BAD("exa mple.test");
	NAME_BAD("exa\0mple.test");
	NAME_BAD("example.test\0");
	NAME_BAD("*.example.test");
	NAME_BAD("ex/ample.test");
	NAME_BAD("ex%ample.test");
	NAME_BAD("b\xc3\xbc" "cher.test");
	NAME_BAD("::1");
	NAME_BAD("[::1]");
	NAME_BAD("a\n.test");

	/* labels of 63 and 64 bytes */
	memset(name, 'l', 63);
	memcpy(name + 63, ".test", 6);
	check_name(name, 68, 1, name);
	memset(name, 'l', 64);
	memcpy(name + 64, ".test", 6);
	check_name(name, 69, -EINVAL, NULL);

	/* 255 bytes: four labels of 63 plus dots (63*4+3 = 255) */
	for (size_t i = 0; i < 255; i++)
		name[i] = (i % 64 == 63) ? '.' : 'x';
	name[255] = '\0';
	check_name(name, 255, 1, name);
	/* 256 is too long even with a trailing dot */
	name[255] = '.';
	name[256] = '\0';
	check_name(name, 256, -EINVAL, NULL);
	/* 255 with a trailing dot: 254 come out */
	name[254] = '.';
	name[253] = 'x';
	{
		char want[256];

		memcpy(want, name, 254);
		want[254] = '\0';
		check_name(name, 255, 1, want);
	}
}

static void test_sni_output_buffer(void **state)
{
	uint8_t h[1024], d[1024];
	size_t n = hello_with_name(h, sizeof(h), "example.test", 12), m;
	char sni[13];
	(void)state;

	memset(sni, 'x', sizeof(sni));
	assert_int_equal(parse(h, n, sni, 13), 1);
	assert_string_equal(sni, "example.test");
	memset(sni, 'x', sizeof(sni));
	assert_int_equal(parse(h, n, sni, 12), -ENOSPC);
	assert_int_equal(sni[0], '\0');
	assert_int_equal(sni[12], 'x');
	assert_int_equal(parse(h, n, NULL, 0), -ENOSPC);
	/* a malformed hello is -EINVAL, whatever the buffer */
	m = hello_with_name(d, sizeof(d), "exa mple.test", 13);
	assert_int_equal(parse(d, m, sni, 2), -EINVAL);
	assert_int_equal(parse(d, m, NULL, 0), -EINVAL);
}

/* ---------------------------------------------------------------- */
/* Session CA                                                        */

static X509 *pem_cert(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x;

	assert_non_null(b);
	x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	assert_non_null(x);
	return x;
}

static long seconds_from_now(const ASN1_TIME *t)
{
	int days, secs;

	assert_int_equal(ASN1_TIME_diff(&days, &secs, NULL, t), 1);
	return (long)days * 86400 + secs;
}

static void check_ext_critical(X509 *x, int nid, bool critical)
{
	int i = X509_get_ext_by_NID(x, nid, -1);

	assert_true(i >= 0);
	assert_int_equal(X509_EXTENSION_get_critical(X509_get_ext(x, i)), critical ? 1 : 0);
	/* no second one */
	assert_true(X509_get_ext_by_NID(x, nid, i) < 0);
}

static void check_ec_p256(EVP_PKEY *k)
{
	char group[64];
	size_t glen;

	assert_non_null(k);
	assert_true(EVP_PKEY_is_a(k, "EC"));
	assert_int_equal(EVP_PKEY_get_group_name(k, group, sizeof(group), &glen), 1);
	assert_string_equal(group, "prime256v1");
}

static void check_serial(X509 *x)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);

	assert_non_null(bn);
	assert_false(BN_is_negative(bn));
	assert_false(BN_is_zero(bn));
	/* random 128 bits: fewer than 100 significant bits is 2^-28 */
	assert_true(BN_num_bits(bn) > 100 && BN_num_bits(bn) <= 128);
	BN_free(bn);
}

static void test_ca_certificate(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_ca_ struct tls_ca *ca2 = ca_new();
	_cleanup_x509_ X509 *x = pem_cert(tls_ca_cert_pem(ca));
	_cleanup_x509_ X509 *x2 = pem_cert(tls_ca_cert_pem(ca2));
	char cn[128], cn2[128];
	BASIC_CONSTRAINTS *bc;
	(void)state;

	/* PEM only, no key */
	assert_non_null(strstr(tls_ca_cert_pem(ca), "-----BEGIN CERTIFICATE-----"));
	assert_null(strstr(tls_ca_cert_pem(ca), "PRIVATE"));

	assert_int_equal(X509_get_version(x), X509_VERSION_3);
	assert_int_equal(X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn,
						   sizeof(cn)),
			 19 + 16);
	assert_memory_equal(cn, "airlock session CA ", 19);
	assert_int_equal(strspn(cn + 19, "0123456789abcdef"), 16);
	assert_int_equal(X509_NAME_cmp(X509_get_subject_name(x), X509_get_issuer_name(x)), 0);
	assert_int_equal(X509_NAME_get_text_by_NID(X509_get_subject_name(x2), NID_commonName, cn2,
						   sizeof(cn2)),
			 35);
	assert_string_not_equal(cn, cn2);
	assert_int_not_equal(ASN1_INTEGER_cmp(X509_get0_serialNumber(x), X509_get0_serialNumber(x2)),
			     0);
	check_serial(x);

	/* self-signed with ECDSA P-256 / SHA-256 */
	check_ec_p256(X509_get0_pubkey(x));
	assert_int_equal(X509_verify(x, X509_get0_pubkey(x)), 1);
	assert_int_equal(X509_get_signature_nid(x), NID_ecdsa_with_SHA256);

	check_ext_critical(x, NID_basic_constraints, true);
	bc = X509_get_ext_d2i(x, NID_basic_constraints, NULL, NULL);
	assert_non_null(bc);
	assert_true(bc->ca);
	assert_non_null(bc->pathlen);
	assert_int_equal(ASN1_INTEGER_get(bc->pathlen), 0);
	BASIC_CONSTRAINTS_free(bc);
	check_ext_critical(x, NID_key_usage, true);
	assert_int_equal(X509_get_key_usage(x), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	check_ext_critical(x, NID_subject_key_identifier, false);
	assert_non_null(X509_get0_subject_key_id(x));
	assert_int_equal(X509_check_ca(x), 1);

	/* from an hour ago for a day */
	assert_true(labs(seconds_from_now(X509_get0_notBefore(x)) + 3600) < 120);
	assert_true(labs(seconds_from_now(X509_get0_notAfter(x)) - 86400) < 120);
}

static void test_leaf_certificate(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_x509_ X509 *cax = pem_cert(tls_ca_cert_pem(ca));
	SSL_CTX *ctx = server_ctx(ca, "example.test");
	X509 *leaf = SSL_CTX_get0_certificate(ctx);
	STACK_OF(X509) *chain = NULL;
	GENERAL_NAMES *san;
	GENERAL_NAME *gn;
	BASIC_CONSTRAINTS *bc;
	EXTENDED_KEY_USAGE *eku;
	AUTHORITY_KEYID *akid;
	char cn[128];
	(void)state;

	assert_non_null(leaf);
	assert_int_equal(X509_get_version(leaf), X509_VERSION_3);
	assert_int_equal(X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn,
						   sizeof(cn)),
			 12);
	assert_string_equal(cn, "example.test");
	assert_int_equal(X509_NAME_cmp(X509_get_issuer_name(leaf), X509_get_subject_name(cax)), 0);
	assert_int_equal(X509_verify(leaf, X509_get0_pubkey(cax)), 1);
	assert_int_equal(X509_get_signature_nid(leaf), NID_ecdsa_with_SHA256);
	check_ec_p256(X509_get0_pubkey(leaf));
	check_serial(leaf);
	assert_int_not_equal(ASN1_INTEGER_cmp(X509_get0_serialNumber(leaf),
					      X509_get0_serialNumber(cax)),
			     0);

	/* the CA's validity window */
	assert_int_equal(ASN1_TIME_compare(X509_get0_notBefore(leaf), X509_get0_notBefore(cax)), 0);
	assert_int_equal(ASN1_TIME_compare(X509_get0_notAfter(leaf), X509_get0_notAfter(cax)), 0);

	/* SAN: exactly DNS:example.test */
	san = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
	assert_non_null(san);
	assert_int_equal(sk_GENERAL_NAME_num(san), 1);
	gn = sk_GENERAL_NAME_value(san, 0);
	assert_int_equal(gn->type, GEN_DNS);
	assert_int_equal(ASN1_STRING_length(gn->d.dNSName), 12);
	assert_memory_equal(ASN1_STRING_get0_data(gn->d.dNSName), "example.test", 12);
	GENERAL_NAMES_free(san);

	check_ext_critical(leaf, NID_basic_constraints, true);
	bc = X509_get_ext_d2i(leaf, NID_basic_constraints, NULL, NULL);
	assert_non_null(bc);
	assert_false(bc->ca);
	BASIC_CONSTRAINTS_free(bc);
	assert_int_equal(X509_check_ca(leaf), 0);
	check_ext_critical(leaf, NID_key_usage, true);
	assert_int_equal(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
	check_ext_critical(leaf, NID_ext_key_usage, false);
	eku = X509_get_ext_d2i(leaf, NID_ext_key_usage, NULL, NULL);
	assert_non_null(eku);
	assert_int_equal(sk_ASN1_OBJECT_num(eku), 1);
	assert_int_equal(OBJ_obj2nid(sk_ASN1_OBJECT_value(eku, 0)), NID_server_auth);
	sk_ASN1_OBJECT_pop_free(eku, ASN1_OBJECT_free);
	check_ext_critical(leaf, NID_authority_key_identifier, false);
	akid = X509_get_ext_d2i(leaf, NID_authority_key_identifier, NULL, NULL);
	assert_non_null(akid);
	assert_non_null(akid->keyid);
	assert_int_equal(ASN1_OCTET_STRING_cmp(akid->keyid, X509_get0_subject_key_id(cax)), 0);
	AUTHORITY_KEYID_free(akid);

	/* the chain sent includes the CA */
	assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
	assert_non_null(chain);
	assert_int_equal(sk_X509_num(chain), 1);
	assert_int_equal(X509_cmp(sk_X509_value(chain, 0), cax), 0);
}

static void test_leaf_long_name(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	char host[256], cn[256];
	X509 *leaf;
	GENERAL_NAMES *san;
	GENERAL_NAME *gn;
	(void)state;

	for (size_t i = 0; i < 200; i++)
		host[i] = (i % 50 == 49) ? '.' : (char)('a' + i % 26);
	strcpy(host + 200, "test");
	leaf = SSL_CTX_get0_certificate(server_ctx(ca, host));
	assert_int_equal(X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn,
						   sizeof(cn)),
			 64);
	assert_memory_equal(cn, host, 64);
	san = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
	assert_non_null(san);
	gn = sk_GENERAL_NAME_value(san, 0);
	assert_int_equal(gn->type, GEN_DNS);
	assert_int_equal(ASN1_STRING_length(gn->d.dNSName), (int)strlen(host));
	assert_memory_equal(ASN1_STRING_get0_data(gn->d.dNSName), host, strlen(host));
	GENERAL_NAMES_free(san);
}

static void check_ip_san(SSL_CTX *ctx, const unsigned char *addr, int len, const char *cn_want)
{
	X509 *leaf = SSL_CTX_get0_certificate(ctx);
	GENERAL_NAMES *san = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
	GENERAL_NAME *gn;
	char cn[128];

	assert_non_null(san);
	assert_int_equal(sk_GENERAL_NAME_num(san), 1);
	gn = sk_GENERAL_NAME_value(san, 0);
	assert_int_equal(gn->type, GEN_IPADD);
	assert_int_equal(ASN1_STRING_length(gn->d.iPAddress), len);
	assert_memory_equal(ASN1_STRING_get0_data(gn->d.iPAddress), addr, (size_t)len);
	GENERAL_NAMES_free(san);
	assert_true(X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn,
					      sizeof(cn)) > 0);
	assert_string_equal(cn, cn_want);
}

static void test_leaf_ip(void **state)
{
	static const unsigned char v4[4] = { 127, 0, 0, 1 };
	static const unsigned char v6[16] = { [15] = 1 };
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	SSL_CTX *c6;
	(void)state;

	check_ip_san(server_ctx(ca, "127.0.0.1"), v4, 4, "127.0.0.1");
	c6 = server_ctx(ca, "::1");
	check_ip_san(c6, v6, 16, "::1");
	/* one address, one entry, however it is written */
	assert_ptr_equal(server_ctx(ca, "[::1]"), c6);
	assert_ptr_equal(server_ctx(ca, "0:0::1"), c6);
}

static void test_server_ctx_refuses(void **state)
{
	static const char *const bad[] = {
		"",	      "a b",	      "exa\nmple.test", "*.example.test", "a..b",
		"[::1",	      "[127.0.0.1]", "fe80::1%eth0",   "::1]",		 "x/y",
		"\x1b[31m.test",
	};
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	struct error err = { 0 };
	char long_name[300];
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		error_clear(&err);
		if (tls_ca_server_ctx(ca, bad[i], &err))
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(err.code, EINVAL);
		assert_non_null(strstr(err.msg, "is neither a DNS name nor an IP address"));
		/* untrusted bytes are not echoed raw */
		assert_null(strchr(err.msg, '\n'));
		assert_null(strchr(err.msg, '\x1b'));
	}
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_null(tls_ca_server_ctx(ca, long_name, &err));
	assert_true(strlen(err.msg) < 200);
	assert_null(tls_ca_server_ctx(ca, NULL, &err));
	assert_null(tls_ca_server_ctx(NULL, "example.test", &err));
}

/* ---------------------------------------------------------------- */
/* Handshakes in memory                                              */

/* Drive both ends over a BIO pair until both are done or one fails. */
static bool handshake(SSL *c, SSL *s)
{
	BIO *cb = NULL, *sb = NULL;
	bool cdone = false, sdone = false;

	assert_int_equal(BIO_new_bio_pair(&cb, 0, &sb, 0), 1);
	SSL_set_bio(c, cb, cb);
	SSL_set_bio(s, sb, sb);
	SSL_set_connect_state(c);
	SSL_set_accept_state(s);
	for (int i = 0; i < 64 && !(cdone && sdone); i++) {
		int r, e;

		if (!cdone) {
			r = SSL_do_handshake(c);
			e = SSL_get_error(c, r);
			if (r == 1)
				cdone = true;
			else if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
				break;
		}
		if (!sdone) {
			r = SSL_do_handshake(s);
			e = SSL_get_error(s, r);
			if (r == 1)
				sdone = true;
			else if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
				break;
		}
	}
	ERR_clear_error();
	return cdone && sdone;
}

/* A client trusting the session CA only. */
static SSL_CTX *client_trusting(const char *pem)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	_cleanup_x509_ X509 *x = NULL;

	assert_non_null(ctx);
	if (pem) {
		x = pem_cert(pem);
		assert_int_equal(X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x), 1);
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return ctx;
}

static bool connect_to(SSL_CTX *cctx, SSL_CTX *sctx, const char *expect_host, long *verify)
{
	_cleanup_ssl_ SSL *c = SSL_new(cctx);
	_cleanup_ssl_ SSL *s = SSL_new(sctx);
	bool ok;

	assert_non_null(c);
	assert_non_null(s);
	if (expect_host) {
		assert_int_equal(SSL_set_tlsext_host_name(c, expect_host), 1);
		assert_int_equal(SSL_set1_host(c, expect_host), 1);
	}
	ok = handshake(c, s);
	if (verify)
		*verify = SSL_get_verify_result(c);
	return ok;
}

static void test_handshake_session_ca(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_ca_ struct tls_ca *other = ca_new();
	_cleanup_ssl_ctx_ SSL_CTX *cctx = client_trusting(tls_ca_cert_pem(ca));
	_cleanup_ssl_ctx_ SSL_CTX *nobody = client_trusting(NULL);
	_cleanup_ssl_ctx_ SSL_CTX *wrong_ca = client_trusting(tls_ca_cert_pem(other));
	SSL_CTX *sctx = server_ctx(ca, "example.test");
	long v;
	(void)state;

	assert_true(connect_to(cctx, sctx, "example.test", &v));
	assert_int_equal(v, X509_V_OK);
	/* the names are checked: another host is refused */
	assert_false(connect_to(cctx, sctx, "other.test", &v));
	assert_int_equal(v, X509_V_ERR_HOSTNAME_MISMATCH);
	assert_false(connect_to(cctx, sctx, "sub.example.test", &v));
	assert_int_equal(v, X509_V_ERR_HOSTNAME_MISMATCH);
	/* the chain is checked: without this session's CA it fails */
	assert_false(connect_to(nobody, sctx, "example.test", &v));
	assert_int_not_equal(v, X509_V_OK);
	assert_false(connect_to(wrong_ca, sctx, "example.test", &v));
	assert_int_not_equal(v, X509_V_OK);
}

static void test_handshake_ip(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_ssl_ctx_ SSL_CTX *cctx = client_trusting(tls_ca_cert_pem(ca));
	SSL_CTX *sctx = server_ctx(ca, "127.0.0.1");
	const char *ips[] = { "127.0.0.1", "127.0.0.2" };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(ips); i++) {
		_cleanup_ssl_ SSL *c = SSL_new(cctx);
		_cleanup_ssl_ SSL *s = SSL_new(sctx);

		assert_int_equal(X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c), ips[i]), 1);
		assert_int_equal(handshake(c, s), i == 0);
		assert_int_equal(SSL_get_verify_result(c),
				 i == 0 ? X509_V_OK : X509_V_ERR_IP_ADDRESS_MISMATCH);
	}
}

/* TLS 1.1 between two ends that both allow it, except for the server's
 * minimum under test; security level 0 so that only the version decides. */
static bool tls11_handshake(SSL_CTX *cctx, SSL_CTX *sctx, bool lower_server_min)
{
	_cleanup_ssl_ SSL *c = SSL_new(cctx);
	_cleanup_ssl_ SSL *s = SSL_new(sctx);

	assert_non_null(c);
	assert_non_null(s);
	SSL_set_security_level(c, 0);
	SSL_set_security_level(s, 0);
	SSL_set_verify(c, SSL_VERIFY_NONE, NULL);
	assert_int_equal(SSL_set_min_proto_version(c, TLS1_VERSION), 1);
	assert_int_equal(SSL_set_max_proto_version(c, TLS1_1_VERSION), 1);
	if (lower_server_min)
		assert_int_equal(SSL_set_min_proto_version(s, TLS1_VERSION), 1);
	return handshake(c, s);
}

static void test_handshake_versions(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_ssl_ctx_ SSL_CTX *cctx = client_trusting(tls_ca_cert_pem(ca));
	SSL_CTX *sctx = server_ctx(ca, "example.test");
	(void)state;

	assert_int_equal(SSL_CTX_get_min_proto_version(sctx), TLS1_2_VERSION);
	assert_int_equal(SSL_CTX_set_max_proto_version(cctx, TLS1_2_VERSION), 1);
	assert_true(connect_to(cctx, sctx, "example.test", NULL));
	/* TLS 1.1 is refused, by the minimum version alone */
	assert_true(tls11_handshake(cctx, sctx, true));
	assert_false(tls11_handshake(cctx, sctx, false));
}

static void alpn_case(SSL_CTX *cctx, SSL_CTX *sctx, const unsigned char *offer, size_t offer_len,
		      const char *want)
{
	_cleanup_ssl_ SSL *c = SSL_new(cctx);
	_cleanup_ssl_ SSL *s = SSL_new(sctx);
	const unsigned char *sel = NULL;
	unsigned sel_len = 0;

	assert_non_null(c);
	assert_non_null(s);
	assert_int_equal(SSL_set1_host(c, "example.test"), 1);
	if (offer)
		assert_int_equal(SSL_set_alpn_protos(c, offer, (unsigned)offer_len), 0);
	assert_true(handshake(c, s));
	SSL_get0_alpn_selected(c, &sel, &sel_len);
	if (!want) {
		assert_int_equal(sel_len, 0);
		return;
	}
	assert_int_equal(sel_len, strlen(want));
	assert_memory_equal(sel, want, sel_len);
}

static void test_alpn(void **state)
{
	static const unsigned char both[] = "\x02h2\x08http/1.1";
	static const unsigned char h2[] = "\x02h2";
	static const unsigned char h11_first[] = "\x08http/1.1\x02h2";
	static const unsigned char other[] = "\x08http/1.0\x06spdy/3";
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_ssl_ctx_ SSL_CTX *cctx = client_trusting(tls_ca_cert_pem(ca));
	SSL_CTX *sctx = server_ctx(ca, "example.test");
	(void)state;

	alpn_case(cctx, sctx, both, sizeof(both) - 1, "http/1.1");
	alpn_case(cctx, sctx, h11_first, sizeof(h11_first) - 1, "http/1.1");
	/* h2 only: no ALPN in the answer, and the handshake still succeeds */
	alpn_case(cctx, sctx, h2, sizeof(h2) - 1, NULL);
	alpn_case(cctx, sctx, other, sizeof(other) - 1, NULL);
	alpn_case(cctx, sctx, NULL, 0, NULL);
}

/* ---------------------------------------------------------------- */
/* Leaf cache                                                        */

static void test_cache_reuse(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	SSL_CTX *a = server_ctx(ca, "a.test");
	SSL_CTX *b = server_ctx(ca, "b.test");
	(void)state;

	assert_ptr_not_equal(a, b);
	assert_ptr_equal(server_ctx(ca, "a.test"), a);
	assert_ptr_equal(server_ctx(ca, "A.Test."), a);
	assert_ptr_equal(server_ctx(ca, "b.test"), b);
	/* one leaf key for the session, distinct certificates */
	assert_int_equal(EVP_PKEY_eq(SSL_CTX_get0_privatekey(a), SSL_CTX_get0_privatekey(b)), 1);
	assert_int_not_equal(X509_cmp(SSL_CTX_get0_certificate(a), SSL_CTX_get0_certificate(b)), 0);
}

/*
 * 1024 hosts stay; the 1025th evicts the least recently used. Extra
 * references keep the old contexts alive so that a new context cannot
 * reuse an old address and fake a cache hit.
 */
static void test_cache_eviction(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_ssl_ctx_ SSL_CTX *cctx = client_trusting(tls_ca_cert_pem(ca));
	_cleanup_ssl_ SSL *held_c = NULL;
	_cleanup_ssl_ SSL *held_s = NULL;
	SSL_CTX *h0, *h1, *h2, *again;
	char host[32];
	(void)state;

	h0 = server_ctx(ca, "h0.test");
	h1 = server_ctx(ca, "h1.test");
	h2 = server_ctx(ca, "h2.test");
	assert_int_equal(SSL_CTX_up_ref(h0), 1);
	assert_int_equal(SSL_CTX_up_ref(h1), 1);
	/* an SSL made before its context is evicted keeps working */
	held_s = SSL_new(h2);
	assert_non_null(held_s);
	for (int i = 3; i < 1024; i++) {
		snprintf(host, sizeof(host), "h%d.test", i);
		server_ctx(ca, host);
	}
	/* full: h0 is the oldest; touch it so h1 is */
	assert_ptr_equal(server_ctx(ca, "h0.test"), h0);
	server_ctx(ca, "h1024.test");
	assert_ptr_equal(server_ctx(ca, "h0.test"), h0);
	again = server_ctx(ca, "h1.test");
	assert_ptr_not_equal(again, h1);
	/* that miss evicted h2, the oldest now */
	assert_ptr_not_equal(server_ctx(ca, "h2.test"), h2);
	held_c = SSL_new(cctx);
	assert_non_null(held_c);
	assert_int_equal(SSL_set1_host(held_c, "h2.test"), 1);
	assert_true(handshake(held_c, held_s));
	SSL_CTX_free(h0);
	SSL_CTX_free(h1);
}

/* ---------------------------------------------------------------- */
/* Upstream client context                                           */

struct tmpdir {
	char path[64];
};

static void tmpdir_rm(struct tmpdir *d)
{
	char cmd[128];

	if (d->path[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
		assert_int_equal(system(cmd), 0);
	}
}

static void tmpdir_make(struct tmpdir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/test_tls.XXXXXX");
	assert_non_null(mkdtemp(d->path));
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static EVP_PKEY *test_key(void)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");

	assert_non_null(k);
	return k;
}

static void test_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *e;

	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	assert_non_null(e);
	assert_int_equal(X509_add_ext(x, e, -1), 1);
	X509_EXTENSION_free(e);
}

/* A certificate made the plain way, independent of tls.c. issuer NULL:
 * self-signed CA. */
static X509 *test_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
		       const char *san)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();

	assert_non_null(x);
	assert_non_null(name);
	assert_int_equal(X509_set_version(x, X509_VERSION_3), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(x), (long)(random() + 1)), 1);
	assert_int_equal(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
						    (const unsigned char *)cn, -1, -1, 0),
			 1);
	assert_int_equal(X509_set_subject_name(x, name), 1);
	assert_int_equal(
		X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name), 1);
	X509_NAME_free(name);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), -600));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), 3600));
	assert_int_equal(X509_set_pubkey(x, key), 1);
	if (!issuer) {
		test_ext(x, x, NID_basic_constraints, "critical,CA:TRUE");
		test_ext(x, x, NID_key_usage, "critical,keyCertSign");
		test_ext(x, x, NID_subject_key_identifier, "hash");
	} else {
		test_ext(x, issuer, NID_subject_alt_name, san);
		test_ext(x, issuer, NID_ext_key_usage, "serverAuth");
	}
	assert_true(X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()) > 0);
	return x;
}

static char *cert_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;

	assert_non_null(b);
	assert_int_equal(PEM_write_bio_X509(b, x), 1);
	n = BIO_get_mem_data(b, &data);
	out = strndup(data, (size_t)n);
	BIO_free(b);
	assert_non_null(out);
	return out;
}

/* An upstream server presenting leaf (and nothing else in its chain). */
static SSL_CTX *upstream_ctx(X509 *leaf, EVP_PKEY *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	assert_non_null(ctx);
	assert_int_equal(SSL_CTX_use_certificate(ctx, leaf), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey(ctx, key), 1);
	return ctx;
}

static SSL_CTX *client_ctx(const char *extra)
{
	struct error err = { 0 };
	SSL_CTX *ctx = tls_client_ctx_new(extra, &err);

	if (!ctx)
		fail_msg("tls_client_ctx_new: %s", err.msg);
	return ctx;
}

/* Connect with a tls_client_ctx_new context and tls_client_set_host. */
static bool upstream_connect(SSL_CTX *cctx, SSL_CTX *sctx, const char *host, long *verify,
			     char *sni_seen, size_t sni_len)
{
	_cleanup_ssl_ SSL *c = SSL_new(cctx);
	_cleanup_ssl_ SSL *s = SSL_new(sctx);
	struct error err = { 0 };
	const char *name;
	bool ok;

	assert_non_null(c);
	assert_non_null(s);
	if (tls_client_set_host(c, host, &err) < 0)
		fail_msg("tls_client_set_host(%s): %s", host, err.msg);
	ok = handshake(c, s);
	*verify = SSL_get_verify_result(c);
	name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
	snprintf(sni_seen, sni_len, "%s", name ? name : "");
	return ok;
}

static void test_client_extra_ca(void **state)
{
	_cleanup_pkey_ EVP_PKEY *ca_key = test_key();
	_cleanup_pkey_ EVP_PKEY *leaf_key = test_key();
	_cleanup_x509_ X509 *ca = test_cert(ca_key, "test upstream CA", NULL, NULL, NULL);
	_cleanup_x509_ X509 *leaf =
		test_cert(leaf_key, "upstream.test", ca, ca_key, "DNS:upstream.test,IP:127.0.0.1");
	_cleanup_free_ char *pem = cert_pem(ca);
	_cleanup_(tmpdir_rm) struct tmpdir d = { { 0 } };
	_cleanup_ssl_ctx_ SSL_CTX *sctx = upstream_ctx(leaf, leaf_key);
	_cleanup_ssl_ctx_ SSL_CTX *with = NULL;
	_cleanup_ssl_ctx_ SSL_CTX *without = NULL;
	char path[128], seen[256];
	long v;
	(void)state;

	tmpdir_make(&d);
	snprintf(path, sizeof(path), "%s/extra.pem", d.path);
	write_file(path, pem, strlen(pem));
	with = client_ctx(path);
	without = client_ctx(NULL);

	assert_true(upstream_connect(with, sctx, "upstream.test", &v, seen, sizeof(seen)));
	assert_int_equal(v, X509_V_OK);
	assert_string_equal(seen, "upstream.test");
	/* names are normalised before they are sent and checked */
	assert_true(upstream_connect(with, sctx, "UPSTREAM.test.", &v, seen, sizeof(seen)));
	assert_string_equal(seen, "upstream.test");
	assert_false(upstream_connect(with, sctx, "other.test", &v, seen, sizeof(seen)));
	assert_int_equal(v, X509_V_ERR_HOSTNAME_MISMATCH);
	/* an address: checked against the IP SAN, and no SNI is sent */
	assert_true(upstream_connect(with, sctx, "127.0.0.1", &v, seen, sizeof(seen)));
	assert_int_equal(v, X509_V_OK);
	assert_string_equal(seen, "");
	assert_false(upstream_connect(with, sctx, "127.0.0.2", &v, seen, sizeof(seen)));
	assert_int_equal(v, X509_V_ERR_IP_ADDRESS_MISMATCH);
	assert_false(upstream_connect(with, sctx, "::1", &v, seen, sizeof(seen)));
	assert_int_equal(v, X509_V_ERR_IP_ADDRESS_MISMATCH);
	/* without the extra CA, the system store does not know this CA */
	assert_false(upstream_connect(without, sctx, "upstream.test", &v, seen, sizeof(seen)));
	assert_int_equal(v, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

static void test_client_session_ca(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_(tmpdir_rm) struct tmpdir d = { { 0 } };
	_cleanup_ssl_ctx_ SSL_CTX *cctx = NULL;
	char path[128], seen[256];
	long v;
	(void)state;

	tmpdir_make(&d);
	snprintf(path, sizeof(path), "%s/session.pem", d.path);
	write_file(path, tls_ca_cert_pem(ca), strlen(tls_ca_cert_pem(ca)));
	cctx = client_ctx(path);

	assert_true(upstream_connect(cctx, server_ctx(ca, "example.test"), "example.test", &v, seen,
				     sizeof(seen)));
	assert_string_equal(seen, "example.test");
	assert_true(upstream_connect(cctx, server_ctx(ca, "127.0.0.1"), "127.0.0.1", &v, seen,
				     sizeof(seen)));
	assert_string_equal(seen, "");
	assert_true(upstream_connect(cctx, server_ctx(ca, "::1"), "[::1]", &v, seen, sizeof(seen)));
	assert_false(upstream_connect(cctx, server_ctx(ca, "127.0.0.1"), "127.0.0.2", &v, seen,
				      sizeof(seen)));
	/* a DNS leaf does not pass for an address, nor the reverse */
	assert_false(upstream_connect(cctx, server_ctx(ca, "example.test"), "127.0.0.1", &v, seen,
				      sizeof(seen)));
	assert_false(upstream_connect(cctx, server_ctx(ca, "127.0.0.1"), "example.test", &v, seen,
				      sizeof(seen)));
}

static void test_client_alpn_and_version(void **state)
{
	_cleanup_ca_ struct tls_ca *ca = ca_new();
	_cleanup_ssl_ctx_ SSL_CTX *cctx = client_ctx(NULL);
	_cleanup_ssl_ SSL *c = SSL_new(cctx);
	_cleanup_ssl_ SSL *s = NULL;
	const unsigned char *sel = NULL;
	unsigned sel_len = 0;
	(void)state;

	assert_int_equal(SSL_CTX_get_min_proto_version(cctx), TLS1_2_VERSION);
	assert_int_equal(SSL_CTX_get_verify_mode(cctx), SSL_VERIFY_PEER);
	/* offers http/1.1, which the session CA's server picks (the
	 * certificate is not checked here: ALPN only) */
	s = SSL_new(server_ctx(ca, "example.test"));
	assert_non_null(c);
	assert_non_null(s);
	SSL_set_verify(c, SSL_VERIFY_NONE, NULL);
	assert_true(handshake(c, s));
	SSL_get0_alpn_selected(c, &sel, &sel_len);
	assert_int_equal(sel_len, 8);
	assert_memory_equal(sel, "http/1.1", 8);

	/* a TLS 1.1 server is refused, by the minimum version alone */
	for (int lower = 1; lower >= 0; lower--) {
		_cleanup_pkey_ EVP_PKEY *ca_key = test_key();
		_cleanup_pkey_ EVP_PKEY *k = test_key();
		_cleanup_x509_ X509 *ca_x = test_cert(ca_key, "old CA", NULL, NULL, NULL);
		_cleanup_x509_ X509 *x = test_cert(k, "old.test", ca_x, ca_key, "DNS:old.test");
		_cleanup_ssl_ctx_ SSL_CTX *old = upstream_ctx(x, k);
		_cleanup_ssl_ SSL *c2 = SSL_new(cctx);
		_cleanup_ssl_ SSL *s2 = SSL_new(old);

		assert_non_null(c2);
		assert_non_null(s2);
		SSL_set_security_level(c2, 0);
		SSL_set_security_level(s2, 0);
		SSL_set_verify(c2, SSL_VERIFY_NONE, NULL);
		assert_int_equal(SSL_set_min_proto_version(s2, TLS1_VERSION), 1);
		assert_int_equal(SSL_set_max_proto_version(s2, TLS1_1_VERSION), 1);
		if (lower)
			assert_int_equal(SSL_set_min_proto_version(c2, TLS1_VERSION), 1);
		assert_int_equal(handshake(c2, s2), lower);
	}
}

static void test_client_ca_file_errors(void **state)
{
	_cleanup_(tmpdir_rm) struct tmpdir d = { { 0 } };
	struct error err = { 0 };
	char path[128];
	(void)state;

	tmpdir_make(&d);
	snprintf(path, sizeof(path), "%s/missing.pem", d.path);
	assert_null(tls_client_ctx_new(path, &err));
	assert_int_equal(err.code, ENOENT);
	assert_non_null(strstr(err.msg, path));

	assert_null(tls_client_ctx_new(d.path, &err));
	assert_int_equal(err.code, EINVAL);
	assert_non_null(strstr(err.msg, d.path));
	assert_non_null(strstr(err.msg, "not a regular file"));

	snprintf(path, sizeof(path), "%s/empty.pem", d.path);
	write_file(path, "", 0);
	error_clear(&err);
	assert_null(tls_client_ctx_new(path, &err));
	assert_int_equal(err.code, EINVAL);
	assert_non_null(strstr(err.msg, path));

	snprintf(path, sizeof(path), "%s/junk.pem", d.path);
	write_file(path, "not a certificate\n", 18);
	error_clear(&err);
	assert_null(tls_client_ctx_new(path, &err));
	assert_int_equal(err.code, EINVAL);
	assert_non_null(strstr(err.msg, path));

	snprintf(path, sizeof(path), "%s/broken.pem", d.path);
	{
		static const char broken[] =
			"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

		write_file(path, broken, strlen(broken));
	}
	error_clear(&err);
	assert_null(tls_client_ctx_new(path, &err));
	assert_int_equal(err.code, EINVAL);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(ERR_peek_error(), 0);
}

static void test_client_set_host_refuses(void **state)
{
	static const char *const bad[] = { "", "a b", "*.example.test", "[127.0.0.1]", "a..b",
					   "fe80::1%eth0" };
	_cleanup_ssl_ctx_ SSL_CTX *cctx = client_ctx(NULL);
	struct error err = { 0 };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_ssl_ SSL *c = SSL_new(cctx);

		assert_non_null(c);
		assert_int_equal(tls_client_set_host(c, bad[i], &err), -EINVAL);
		assert_non_null(strstr(err.msg, "is neither a DNS name nor an IP address"));
	}
	assert_int_equal(tls_client_set_host(NULL, "a.test", &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sni_openssl),
		cmocka_unit_test(test_sni_openssl_normalised),
		cmocka_unit_test(test_sni_openssl_absent),
		cmocka_unit_test(test_sni_openssl_split_by_openssl),
		cmocka_unit_test(test_sni_split_records),
		cmocka_unit_test(test_sni_truncated),
		cmocka_unit_test(test_sni_corrupted),
		cmocka_unit_test(test_sni_lengths),
		cmocka_unit_test(test_sni_one_byte_lengths),
		cmocka_unit_test(test_sni_record_layer),
		cmocka_unit_test(test_sni_size_bound),
		cmocka_unit_test(test_sni_hello_fields),
		cmocka_unit_test(test_sni_extensions),
		cmocka_unit_test(test_sni_names),
		cmocka_unit_test(test_sni_output_buffer),
		cmocka_unit_test(test_ca_certificate),
		cmocka_unit_test(test_leaf_certificate),
		cmocka_unit_test(test_leaf_long_name),
		cmocka_unit_test(test_leaf_ip),
		cmocka_unit_test(test_server_ctx_refuses),
		cmocka_unit_test(test_handshake_session_ca),
		cmocka_unit_test(test_handshake_ip),
		cmocka_unit_test(test_handshake_versions),
		cmocka_unit_test(test_alpn),
		cmocka_unit_test(test_cache_reuse),
		cmocka_unit_test(test_cache_eviction),
		cmocka_unit_test(test_client_extra_ca),
		cmocka_unit_test(test_client_session_ca),
		cmocka_unit_test(test_client_alpn_and_version),
		cmocka_unit_test(test_client_ca_file_errors),
		cmocka_unit_test(test_client_set_host_refuses),
	};

	return cmocka_run_group_tests_name("tls", tests, NULL, NULL);
}
