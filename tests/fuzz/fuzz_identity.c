/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the identity token verifier (audit/identity.c),
 * which `airlock identity verify` runs on tokens from anyone, and for the
 * strict base64url decoder under it.
 *
 * The first byte picks what the rest is (below 0xf0, modulo 3):
 *   0  a whole token;
 *   1  the claims' JSON, in a token whose header is genuine and whose
 *      signature by the session key is right, so that mutations reach
 *      the claims' checks past the signature;
 *   2  the protected header's JSON, with genuine claims, signed the same
 *      way: mutations reach the certificate's parser and its checks;
 *   0xf0 and up: the claims' JSON in a signing input the proxy asks the
 *      audit writer to sign (audit/signproto.c), after the genuine
 *      header: what the writer accepts, signed, must verify.
 * Keys and certificate are fixed (made once from constant seeds).
 *
 * Besides crashes and sanitizer reports it checks that verification
 * returns 0 or -EINVAL; a refusal says why and hands out nothing; an
 * acceptance has an audience, exp after iat, a UUID session, and is
 * anchored exactly when an authority was given; and that base64url
 * decoding is canonical (what decodes encodes back to the same text).
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "audit/audit.h"
#include "audit/identity.h"
#include "audit/signproto.h"
#include "util/base64.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define T0 1800000000LL

#define SESSION "0190b5a2-7c1e-7abc-8def-0123456789ab"

static uint8_t apub[32];
static uint8_t session_seed[32];
static struct buf header_b64, claims_b64;
static struct signproto_expect expect;

static EVP_PKEY *key_of(const uint8_t seed[32])
{
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	CHECK(k);
	return k;
}

static void sign(const uint8_t seed[32], const void *msg, size_t len, uint8_t sig[64])
{
	EVP_PKEY *k = key_of(seed);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t n = 64;
	CHECK(md && EVP_DigestSignInit(md, NULL, NULL, NULL, k) > 0 && EVP_DigestSign(md, sig, &n, msg, len) > 0);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(k);
}

static void hexs(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void init(void)
{
	uint8_t aseed[32], spub[32], sig[64];
	char ah[65], sh[65], sigh[129];
	for (int i = 0; i < 32; i++) {
		aseed[i] = (uint8_t)(i + 1);
		session_seed[i] = (uint8_t)(0x80 + i);
	}
	size_t n = 32;
	EVP_PKEY *a = key_of(aseed), *s = key_of(session_seed);
	CHECK(EVP_PKEY_get_raw_public_key(a, apub, &n) > 0);
	n = 32;
	CHECK(EVP_PKEY_get_raw_public_key(s, spub, &n) > 0);
	EVP_PKEY_free(a);
	EVP_PKEY_free(s);
	hexs(apub, 32, ah);
	hexs(spub, 32, sh);
	struct buf cert = { 0 };
	CHECK(buf_printf(&cert,
			 "{\"agent\":\"fuzz-agent\",\"session\":\"" SESSION "\","
			 "\"boundary\":\"process\",\"policy_sha256\":\"none\",\"host\":\"fuzzhost\",\"not_before\":%lld,"
			 "\"not_after\":%lld,\"session_key\":\"%s\",\"authority\":\"%s\"}",
			 T0 * 1000, (T0 + 86400) * 1000, sh, ah) == 0);
	sign(aseed, cert.data, cert.len, sig);
	hexs(sig, 64, sigh);
	CHECK(signproto_expect_init(&expect, cert.data, cert.len, sigh, "fuzz-agent", SESSION, "none", "process", apub,
				    (T0 + 86400) * 1000) == 0);
	CHECK(buf_append(&header_b64, expect.header.data, expect.header.len) == 0);
	struct buf claims = { 0 };
	CHECK(buf_printf(&claims,
			 "{\"iss\":\"%s\",\"sub\":\"fuzz-agent\",\"sid\":\"" SESSION "\",\"aud\":\"https://a.example\","
			 "\"iat\":%lld,\"exp\":%lld,\"jti\":\"00112233445566778899aabbccddeeff\",\"policy_sha256\":\"none\","
			 "\"boundary\":\"process\"}",
			 expect.iss, T0 + 10, T0 + 310) == 0);
	CHECK(base64url_encode((const uint8_t *)claims.data, claims.len, &claims_b64) == 0);
	buf_free(&claims);
	buf_free(&cert);
}

/* What the audit writer agrees to sign for the proxy: claims after the
 * genuine header. Anything it accepts, once signed, is a token that
 * verifies (it signs nothing a verifier would refuse), and it refuses
 * with -EPERM and a reason. */
static void check_sign_request(const uint8_t *body, size_t n)
{
	struct buf t = { 0 };
	struct error err = { 0 };
	CHECK(buf_append(&t, header_b64.data, header_b64.len) == 0 && buf_puts(&t, ".") == 0 &&
	      base64url_encode(body, n, &t) == 0);
	int r = signproto_input_check(&expect, t.data, t.len, T0 + 10, &err);
	CHECK(r == 0 || r == -EPERM);
	if (r < 0) {
		CHECK(err.msg[0] != '\0');
	} else {
		uint8_t sig[64];
		struct identity_claims c;
		sign(session_seed, t.data, t.len, sig);
		CHECK(buf_puts(&t, ".") == 0 && base64url_encode(sig, sizeof(sig), &t) == 0);
		CHECK(identity_token_verify(t.data, t.len, apub, NULL, T0 + 10, &c, &err) == 0);
	}
	buf_free(&t);
}

static void check_verify(const char *tok, size_t len)
{
	static const char *const auds[] = { NULL, "https://a.example" };
	for (int a = 0; a < 2; a++) {
		struct identity_claims c;
		struct error err = { 0 };
		const uint8_t *auth = a ? apub : NULL;
		int r = identity_token_verify(tok, len, auth, auds[a], T0 + 10, &c, &err);
		CHECK(r == 0 || r == -EINVAL);
		if (r < 0) {
			CHECK(err.msg[0] != '\0');
			CHECK(c.agent[0] == '\0' && c.aud[0] == '\0');
		} else {
			CHECK(c.aud[0] && strlen(c.aud) <= IDENTITY_AUD_MAX);
			CHECK(c.exp > c.iat && c.exp - c.iat <= IDENTITY_MAX_LIFETIME);
			CHECK(strlen(c.session) == 36);
			CHECK(c.anchored == (auth != NULL));
			CHECK(!auds[a] || strcmp(c.aud, auds[a]) == 0);
		}
	}
}

/* prefix "." b64(body) or b64(body) "." suffix, then "." and the session
 * key's signature. */
static void signed_token(const uint8_t *body, size_t n, bool body_is_claims)
{
	struct buf t = { 0 };
	uint8_t sig[64];
	if (body_is_claims)
		CHECK(buf_append(&t, header_b64.data, header_b64.len) == 0 && buf_puts(&t, ".") == 0 &&
		      base64url_encode(body, n, &t) == 0);
	else
		CHECK(base64url_encode(body, n, &t) == 0 && buf_puts(&t, ".") == 0 &&
		      buf_append(&t, claims_b64.data, claims_b64.len) == 0);
	sign(session_seed, t.data, t.len, sig);
	CHECK(buf_puts(&t, ".") == 0 && base64url_encode(sig, sizeof(sig), &t) == 0);
	check_verify(t.data, t.len);
	buf_free(&t);
}

static void check_base64url(const char *text, size_t n)
{
	uint8_t *out = malloc(n + 1);
	CHECK(out);
	ssize_t k = base64url_decode(text, n, out, n);
	CHECK(k >= 0 || k == -EINVAL);
	if (k >= 0) {
		struct buf b = { 0 };
		CHECK(base64url_encode(out, (size_t)k, &b) == 0);
		CHECK(b.len == n && (n == 0 || memcmp(b.data, text, n) == 0));
		buf_free(&b);
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	if (!ready) {
		init();
		ready = true;
	}
	if (size < 1)
		return 0;
	/* A copy of exactly the input's size: an over-read is caught. */
	size_t n = size - 1;
	char *rest = malloc(n ? n : 1);
	CHECK(rest);
	memcpy(rest, data + 1, n);
	if (data[0] >= 0xf0) {
		check_sign_request((const uint8_t *)rest, n);
		free(rest);
		return 0;
	}
	switch (data[0] % 3) {
	case 0:
		check_verify(rest, n);
		check_base64url(rest, n);
		break;
	case 1:
		signed_token((const uint8_t *)rest, n, true);
		break;
	default:
		signed_token((const uint8_t *)rest, n, false);
		break;
	}
	free(rest);
	return 0;
}
