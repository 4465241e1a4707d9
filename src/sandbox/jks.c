/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The session's CA bundle as a Java KeyStore, for the JVM: it reads its
 * own trust store (/etc/ssl/certs/java/cacerts), not PEM bundles nor
 * SSL_CERT_FILE, and refused every intercepted connection. JKS rather
 * than PKCS12 because it needs no cipher: `airlock` does not load
 * libcrypto, and a trusted-certificate entry is the certificate's DER
 * under an alias. Every JDK reads JKS (Debian's own cacerts is one).
 *
 * Layout (big-endian): magic FEEDFEED, version 2, entry count; per entry
 * tag 2 (trusted certificate), alias (u16 length + bytes), creation time
 * in ms (u64), certificate type "X.509" (u16 length + bytes), DER length
 * (u32) and DER; then SHA-1 over the store password as UTF-16BE, the
 * bytes "Mighty Aphrodite" and everything before, which is how the JDK
 * checks a store loaded with a password ("changeit", the cacerts
 * default, for tools that pass it).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/internal.h"
#include "util/base64.h"

struct sha1 {
	uint32_t h[5];
	uint64_t len;
	uint8_t block[64];
	size_t n;
};

static uint32_t rol(uint32_t x, int k)
{
	return (x << k) | (x >> (32 - k));
}

static void sha1_block(struct sha1 *s, const uint8_t *p)
{
	uint32_t w[80];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		uint32_t t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
}

static void sha1_init(struct sha1 *s)
{
	*s = (struct sha1){ .h = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 } };
}

static void sha1_update(struct sha1 *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	s->len += len;
	while (len) {
		size_t take = 64 - s->n < len ? 64 - s->n : len;
		memcpy(s->block + s->n, p, take);
		s->n += take;
		p += take;
		len -= take;
		if (s->n == 64) {
			sha1_block(s, s->block);
			s->n = 0;
		}
	}
}

static void sha1_final(struct sha1 *s, uint8_t out[20])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, zero = 0, lenb[8];
	sha1_update(s, &pad, 1);
	while (s->n != 56)
		sha1_update(s, &zero, 1);
	for (int i = 0; i < 8; i++)
		lenb[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha1_update(s, lenb, 8);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

static int put_u16(struct buf *b, unsigned v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	return buf_append(b, x, 2);
}

static int put_u32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	return buf_append(b, x, 4);
}

static int put_str(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	return put_u16(b, (unsigned)n) < 0 ? -ENOMEM : buf_append(b, s, n);
}

#define PEM_BEGIN "-----BEGIN CERTIFICATE-----"
#define PEM_END "-----END CERTIFICATE-----"
#define JKS_CERT_MAX (64u << 10) /* far above any CA certificate */

int jks_from_pem(const char *pem, struct buf *out)
{
	struct buf b = { 0 };
	uint8_t *der = malloc(JKS_CERT_MAX);
	char *text = malloc(JKS_CERT_MAX * 4 / 3 + 4);
	int r = -ENOMEM;
	if (!der || !text)
		goto out;
	if (put_u32(&b, 0xfeedfeed) < 0 || put_u32(&b, 2) < 0 || put_u32(&b, 0) < 0)
		goto out;
	uint32_t count = 0;
	const char *p = pem;
	while ((p = strstr(p, PEM_BEGIN))) {
		p += sizeof(PEM_BEGIN) - 1;
		const char *end = strstr(p, PEM_END);
		if (!end)
			break;
		/* The base64 between the markers, without its line breaks. A
		 * block that does not decode is left out: the bundle is the
		 * system's, and one bad entry must not cost the others. */
		size_t n = 0;
		bool fits = true;
		for (const char *c = p; c < end && fits; c++)
			if (*c != '\n' && *c != '\r' && *c != ' ' && *c != '\t') {
				fits = n < JKS_CERT_MAX * 4 / 3;
				text[n++] = *c;
			}
		p = end + sizeof(PEM_END) - 1;
		ssize_t len = fits ? base64_decode(text, n, der, JKS_CERT_MAX) : -ENOSPC;
		if (len <= 0)
			continue;
		char alias[32];
		snprintf(alias, sizeof(alias), "airlock-%u", count);
		if (put_u32(&b, 2) < 0 || put_str(&b, alias) < 0 || put_u32(&b, 0) < 0 || put_u32(&b, 0) < 0 ||
		    put_str(&b, "X.509") < 0 || put_u32(&b, (uint32_t)len) < 0 || buf_append(&b, der, (size_t)len) < 0)
			goto out;
		count++;
	}
	if (!count) {
		r = -EINVAL;
		goto out;
	}
	uint8_t *c = (uint8_t *)b.data + 8;
	c[0] = (uint8_t)(count >> 24);
	c[1] = (uint8_t)(count >> 16);
	c[2] = (uint8_t)(count >> 8);
	c[3] = (uint8_t)count;
	struct sha1 s;
	sha1_init(&s);
	static const char pw[] = "changeit", whitener[] = "Mighty Aphrodite";
	for (size_t i = 0; i < sizeof(pw) - 1; i++) {
		uint8_t u[2] = { 0, (uint8_t)pw[i] };
		sha1_update(&s, u, 2);
	}
	sha1_update(&s, whitener, sizeof(whitener) - 1);
	sha1_update(&s, b.data, b.len);
	uint8_t digest[20];
	sha1_final(&s, digest);
	if (buf_append(&b, digest, sizeof(digest)) < 0)
		goto out;
	*out = b;
	b = (struct buf){ 0 };
	r = 0;
out:
	buf_free(&b);
	free(der);
	free(text);
	return r;
}
