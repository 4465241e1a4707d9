/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the identity assertion (audit/identity.c): base64url, the
 * audience, tokens signed with real Ed25519 keys and a certificate built
 * as airlock-audit builds it, signed through the writer's signing channel
 * (audit/signproto.h) served by a thread, and the verifier. Every refusal is checked
 * next to the token it was made from, which verifies: a good token; each
 * claim and header member changed; tokens whose signature is right but
 * whose claims disagree with their certificate; another authority;
 * expiry, the certificate's validity and the audience; malformed and
 * oversized input.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit/audit.h"
#include "audit/identity.h"
#include "audit/signproto.h"
#include "util/base64.h"
#include "util/buf.h"

#define SESSION "0190b5a2-7c1e-7abc-8def-0123456789ab"
#define POLICY_SHA "5f2b6c0e3a1d4f7e9b8c2a1d0e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f"
#define T0 1800000000LL /* seconds: the certificate is valid a day from here */
#define AUD "https://api.example:8443"

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The writer's side of the signing channel, in a thread: answers as
 * airlock-audit-writer does (signproto_answer), its clock at writer_now,
 * with key. */
static _Atomic int64_t writer_now;
static atomic_int writer_signed; /* requests it answered with a signature */

/* A session as the writer makes one: an authority, a session key, the
 * certificate the authority signed, the writer's end of the signing
 * channel served by a thread, and a signer for the proxy's end. */
struct fixture {
	struct audit_key *authority, *session_key;
	const struct audit_key *writer_key; /* what the writer signs with: the session key */
	uint8_t apub[AUDIT_PUB_LEN];
	struct buf cert;
	char cert_sig[2 * AUDIT_SIG_LEN + 1];
	struct signproto_expect expect;
	int wfd; /* the writer's end, or -1 */
	pthread_t writer;
	struct identity_signer *signer;
};

static void *writer_main(void *arg)
{
	struct fixture *f = arg;
	uint8_t req[SIGNPROTO_REQ_MAX + 1], ans[SIGNPROTO_ANSWER_CAP];
	ssize_t n;
	while ((n = recv(f->wfd, req, sizeof(req), 0)) > 0) {
		size_t m = signproto_answer(&f->expect, f->writer_key, req, (size_t)n, atomic_load(&writer_now), ans);
		if (m && ans[0] == SIGNPROTO_ANS_SIG)
			atomic_fetch_add(&writer_signed, 1);
		if (m && send(f->wfd, ans, m, MSG_NOSIGNAL) < 0)
			break;
	}
	return NULL;
}

/* The writer gone: its end shut, its thread joined. */
static void writer_stop(struct fixture *f)
{
	if (f->wfd < 0)
		return;
	shutdown(f->wfd, SHUT_RDWR);
	pthread_join(f->writer, NULL);
	close(f->wfd);
	f->wfd = -1;
}

static void make_cert(struct fixture *f, const char *agent)
{
	uint8_t spub[AUDIT_PUB_LEN], sig[AUDIT_SIG_LEN];
	char spub_hex[65], apub_hex[65];
	audit_key_public(f->session_key, spub);
	hex(spub, sizeof(spub), spub_hex);
	hex(f->apub, sizeof(f->apub), apub_hex);
	buf_reset(&f->cert);
	assert_int_equal(buf_puts(&f->cert, "{\"agent\":"), 0);
	assert_int_equal(buf_json_string(&f->cert, agent, strlen(agent)), 0);
	assert_int_equal(buf_printf(&f->cert,
				    ",\"session\":\"" SESSION "\",\"boundary\":\"process\",\"policy_sha256\":\"" POLICY_SHA
				    "\",\"host\":\"testhost\",\"not_before\":%lld,\"not_after\":%lld,\"session_key\":\"%s\","
				    "\"authority\":\"%s\"}",
				    T0 * 1000, (T0 + 86400) * 1000, spub_hex, apub_hex),
			 0);
	assert_int_equal(audit_sign(f->authority, f->cert.data, f->cert.len, sig), 0);
	hex(sig, sizeof(sig), f->cert_sig);
}

static void fixture_init(struct fixture *f)
{
	struct error err = { 0 };
	int sp[2];
	memset(f, 0, sizeof(*f));
	assert_int_equal(audit_key_generate(&f->authority, &err), 0);
	assert_int_equal(audit_key_generate(&f->session_key, &err), 0);
	audit_key_public(f->authority, f->apub);
	make_cert(f, "test-agent");
	assert_int_equal(signproto_expect_init(&f->expect, f->cert.data, f->cert.len, f->cert_sig, "test-agent", SESSION,
					       POLICY_SHA, "process", f->apub, (T0 + 86400) * 1000),
			 0);
	f->writer_key = f->session_key;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	f->wfd = sp[1];
	assert_int_equal(pthread_create(&f->writer, NULL, writer_main, f), 0);
	assert_int_equal(identity_signer_new(sp[0], f->cert.data, f->cert.len, f->cert_sig, &f->signer, &err), 0);
}

static void fixture_fini(struct fixture *f)
{
	writer_stop(f);
	signproto_expect_fini(&f->expect);
	identity_signer_free(f->signer);
	audit_key_free(f->authority);
	audit_key_free(f->session_key);
	buf_free(&f->cert);
}

static char *sign_token(struct fixture *f, const char *aud, int64_t now)
{
	struct buf b = { 0 };
	atomic_store(&writer_now, now);
	assert_int_equal(identity_token_sign(f->signer, aud, now, &b), 0);
	return b.data;
}

/* 0, or -EINVAL with the message in why. */
static int check(const char *tok, const uint8_t *authority, const char *aud, int64_t now, struct identity_claims *c,
		 char why[256])
{
	struct error err = { 0 };
	int r = identity_token_verify(tok, strlen(tok), authority, aud, now, c, &err);
	snprintf(why, 256, "%s", r < 0 ? err.msg : "");
	return r;
}

static void expect_refused(const char *tok, const uint8_t *authority, const char *aud, int64_t now, const char *words)
{
	struct identity_claims c;
	char why[256];
	assert_int_equal(check(tok, authority, aud, now, &c, why), -EINVAL);
	if (!strstr(why, words))
		fail_msg("refused for \"%s\", expected \"%s\"", why, words);
	assert_string_equal(c.agent, ""); /* nothing of a refused token is handed out */
}

/* Part idx (0 header, 1 claims, 2 signature) of tok decoded. */
static char *part(const char *tok, int idx)
{
	const char *s = tok;
	for (int i = 0; i < idx; i++)
		s = strchr(s, '.') + 1;
	const char *e = strchr(s, '.');
	size_t n = e ? (size_t)(e - s) : strlen(s);
	char *out = calloc(1, n + 1);
	assert_non_null(out);
	ssize_t k = base64url_decode(s, n, (uint8_t *)out, n);
	assert_true(k >= 0);
	return out;
}

/* tok with part idx replaced by the encoding of text. */
static char *with_part(const char *tok, int idx, const char *text)
{
	struct buf b = { 0 };
	const char *s = tok;
	for (int i = 0; i < 3; i++) {
		const char *e = strchr(s, '.');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (i)
			assert_int_equal(buf_puts(&b, "."), 0);
		if (i == idx)
			assert_int_equal(base64url_encode((const uint8_t *)text, strlen(text), &b), 0);
		else
			assert_int_equal(buf_append(&b, s, n), 0);
		s = e ? e + 1 : s + n;
	}
	return b.data;
}

/* text with the first occurrence of from replaced by to. */
static char *replaced(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	assert_non_null(at);
	struct buf b = { 0 };
	assert_int_equal(buf_append(&b, text, (size_t)(at - text)), 0);
	assert_int_equal(buf_puts(&b, to), 0);
	assert_int_equal(buf_puts(&b, at + strlen(from)), 0);
	return b.data;
}

/* A token with header and claims as given, signed by key: the way to make
 * one whose signature is right and whose content is not. */
static char *forge(const char *header, const char *claims, const struct audit_key *key)
{
	struct buf b = { 0 };
	uint8_t sig[AUDIT_SIG_LEN];
	assert_int_equal(base64url_encode((const uint8_t *)header, strlen(header), &b), 0);
	assert_int_equal(buf_puts(&b, "."), 0);
	assert_int_equal(base64url_encode((const uint8_t *)claims, strlen(claims), &b), 0);
	assert_int_equal(audit_sign(key, b.data, b.len, sig), 0);
	assert_int_equal(buf_puts(&b, "."), 0);
	assert_int_equal(base64url_encode(sig, sizeof(sig), &b), 0);
	return b.data;
}

static void test_base64url(void **state)
{
	(void)state;
	uint8_t in[16], out[16];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(0xf0 + i * 37);
	for (size_t n = 0; n <= sizeof(in); n++) {
		struct buf b = { 0 };
		assert_int_equal(base64url_encode(in, n, &b), 0);
		assert_int_equal(b.len, (n * 4 + 2) / 3);
		assert_null(b.data ? strpbrk(b.data, "=+/") : NULL);
		assert_int_equal(base64url_decode(b.data ? b.data : "", b.len, out, sizeof(out)), (ssize_t)n);
		assert_memory_equal(in, out, n);
		buf_free(&b);
	}
	assert_int_equal(base64url_decode("-_8", 3, out, sizeof(out)), 2);
	assert_int_equal(out[0], 0xfb);
	assert_int_equal(out[1], 0xff);
	/* Refused: the other alphabet, padding, a lone character, bits left
	 * over (QR and QQ would both be "A"), and no room. */
	assert_int_equal(base64url_decode("+/8", 3, out, sizeof(out)), -EINVAL);
	assert_int_equal(base64url_decode("QQ==", 4, out, sizeof(out)), -EINVAL);
	assert_int_equal(base64url_decode("QUJDR", 5, out, sizeof(out)), -EINVAL);
	assert_int_equal(base64url_decode("QR", 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(base64url_decode("QQ", 2, out, sizeof(out)), 1);
	assert_int_equal(base64url_decode("QUJD", 4, out, 2), -ENOSPC);
	assert_int_equal(base64url_decode("QUJD", 4, out, 3), 3);
}

static void test_audience(void **state)
{
	(void)state;
	char a[IDENTITY_AUD_MAX + 1];
	assert_int_equal(identity_audience("http", "api.test", 80, a), 0);
	assert_string_equal(a, "http://api.test");
	assert_int_equal(identity_audience("https", "api.test", 443, a), 0);
	assert_string_equal(a, "https://api.test");
	assert_int_equal(identity_audience("https", "api.test", 80, a), 0);
	assert_string_equal(a, "https://api.test:80");
	assert_int_equal(identity_audience("http", "::1", 8080, a), 0);
	assert_string_equal(a, "http://[::1]:8080");
	char host[300];
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(identity_audience("https", host, 443, a), -ENAMETOOLONG);
}

static void test_good_token(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	char *tok = sign_token(&f, AUD, T0 + 10);
	struct identity_claims c;
	char why[256];
	assert_int_equal(check(tok, f.apub, AUD, T0 + 10, &c, why), 0);
	assert_string_equal(c.agent, "test-agent");
	assert_string_equal(c.session, SESSION);
	assert_string_equal(c.aud, AUD);
	assert_string_equal(c.boundary, "process");
	assert_string_equal(c.policy_sha256, POLICY_SHA);
	assert_string_equal(c.host, "testhost");
	assert_int_equal(c.iat, T0 + 10);
	assert_int_equal(c.exp, T0 + 10 + IDENTITY_LIFETIME);
	assert_int_equal(strlen(c.jti), 32);
	assert_memory_equal(c.authority, f.apub, AUDIT_PUB_LEN);
	assert_true(c.anchored);
	/* Without an authority: verified against the one it names, and said
	 * to be unanchored. Without an audience: any. */
	assert_int_equal(check(tok, NULL, NULL, T0 + 10, &c, why), 0);
	assert_false(c.anchored);
	/* The header is what RFC 7515 says, and carries the certificate. */
	char *h = part(tok, 0);
	assert_non_null(strstr(h, "{\"alg\":\"EdDSA\",\"typ\":\"airlock-id+jwt\",\"kid\":\"" SESSION "\""));
	assert_non_null(strstr(h, "\"airlock_cert_sig\":\""));
	free(h);
	/* Two tokens: two token ids. */
	char *tok2 = sign_token(&f, AUD, T0 + 10);
	struct identity_claims c2;
	assert_int_equal(check(tok2, f.apub, AUD, T0 + 10, &c2, why), 0);
	assert_string_not_equal(c.jti, c2.jti);
	free(tok2);
	free(tok);
	fixture_fini(&f);
}

static void test_signer_refuses(void **state)
{
	(void)state;
	struct fixture f;
	struct error err = { 0 };
	struct identity_signer *s = NULL;
	fixture_init(&f);
	/* A certificate its authority did not sign. */
	char *cert = replaced(f.cert.data, "test-agent", "test-agenT");
	assert_int_equal(identity_signer_new(-1, cert, strlen(cert), f.cert_sig, &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "signature"));
	free(cert);
	assert_null(s);
	/* After the certificate's not_after: no token. */
	struct buf b = { 0 };
	assert_int_equal(identity_token_sign(f.signer, AUD, T0 + 86400, &b), -EKEYEXPIRED);
	/* Close to it: cut to it. */
	char *tok = sign_token(&f, AUD, T0 + 86400 - 10);
	struct identity_claims c;
	char why[256];
	assert_int_equal(check(tok, f.apub, AUD, T0 + 86400 - 5, &c, why), 0);
	assert_int_equal(c.exp, T0 + 86400);
	free(tok);
	fixture_fini(&f);
}

/* The writer is the only signer, and the proxy takes nothing from it
 * unchecked: a signature by another key than the certified one, a
 * refusal, a writer gone, each fails the token, and nothing is sent
 * unsigned. */
static void test_signer_fails_closed(void **state)
{
	(void)state;
	struct fixture f;
	struct error err = { 0 };
	struct audit_key *other;
	struct buf b = { 0 };
	fixture_init(&f);
	assert_int_equal(audit_key_generate(&other, &err), 0);
	atomic_store(&writer_now, T0 + 10);
	f.writer_key = other;
	assert_int_equal(identity_token_sign(f.signer, AUD, T0 + 10, &b), -EIO);
	assert_int_equal(b.len, 0);
	f.writer_key = f.session_key;
	/* The writer refuses what its clock says is not now. */
	atomic_store(&writer_now, T0 + 10 + IDENTITY_SKEW + 1);
	assert_int_equal(identity_token_sign(f.signer, AUD, T0 + 10, &b), -EPERM);
	assert_int_equal(b.len, 0);
	/* The neighbour: the same request at the writer's now is signed. */
	atomic_store(&writer_now, T0 + 10);
	assert_int_equal(identity_token_get(f.signer, AUD, T0 + 10, &b), 0);
	buf_reset(&b);
	/* The writer gone: no new token; the one already signed is still
	 * served until half its life has passed. */
	writer_stop(&f);
	int r = identity_token_sign(f.signer, "https://new.example", T0 + 10, &b);
	assert_true(r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN);
	assert_int_equal(b.len, 0);
	r = identity_token_get(f.signer, "https://new.example", T0 + 10, &b);
	assert_true(r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN);
	assert_int_equal(b.len, 0);
	assert_int_equal(identity_token_get(f.signer, AUD, T0 + 11, &b), 0);
	buf_reset(&b);
	r = identity_token_get(f.signer, AUD, T0 + 10 + IDENTITY_LIFETIME / 2, &b);
	assert_true(r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN);
	assert_int_equal(b.len, 0);
	buf_free(&b);
	audit_key_free(other);
	fixture_fini(&f);
}

/* Every claim and header member changed after signing. */
static void test_tampered(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	char *tok = sign_token(&f, AUD, T0 + 10);
	char *claims = part(tok, 1), *header = part(tok, 0);
	char iat[32], exp[32];
	snprintf(iat, sizeof(iat), "\"iat\":%lld", T0 + 10);
	snprintf(exp, sizeof(exp), "\"exp\":%lld", T0 + 10 + IDENTITY_LIFETIME);
	const char *const claim_edits[][2] = {
		{ "\"iss\":\"sha256:", "\"iss\":\"sha256:0" },
		{ "test-agent", "test-agenT" },
		{ "\"sid\":\"0190", "\"sid\":\"1190" },
		{ AUD, "https://api.example:8444" },
		{ iat, "\"iat\":1800000001" },
		{ exp, "\"exp\":1800003600" },
		{ "\"jti\":\"", "\"jti\":\"0" },
		{ POLICY_SHA, "6f2b6c0e3a1d4f7e9b8c2a1d0e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f" },
		{ "process", "gvisor" },
	};
	for (size_t i = 0; i < sizeof(claim_edits) / sizeof(claim_edits[0]); i++) {
		char *text = replaced(claims, claim_edits[i][0], claim_edits[i][1]);
		char *bad = with_part(tok, 1, text);
		expect_refused(bad, f.apub, NULL, T0 + 10, "bad token signature");
		expect_refused(bad, NULL, NULL, T0 + 10, "bad token signature");
		free(bad);
		free(text);
	}
	const char *const header_edits[][3] = {
		{ "\"EdDSA\"", "\"none\"", "alg is not EdDSA" },
		{ "airlock-id+jwt", "JWT", "typ is not" },
		{ "\"kid\":\"0190", "\"kid\":\"1190", "kid is not the certificate's session" },
		{ "test-agent", "test-agenT", "bad certificate signature" },
		{ "\"airlock_cert_sig\":\"", "\"airlock_cert_sig\":\"0", "128 hex digits" },
	};
	for (size_t i = 0; i < sizeof(header_edits) / sizeof(header_edits[0]); i++) {
		char *text = replaced(header, header_edits[i][0], header_edits[i][1]);
		char *bad = with_part(tok, 0, text);
		expect_refused(bad, f.apub, NULL, T0 + 10, header_edits[i][2]);
		free(bad);
		free(text);
	}
	/* The signature itself, one bit. */
	char *sig = strrchr(tok, '.') + 1;
	char *bad = strdup(tok);
	bad[sig - tok + 5] = bad[sig - tok + 5] == 'A' ? 'B' : 'A';
	expect_refused(bad, f.apub, NULL, T0 + 10, "bad token signature");
	free(bad);
	/* And the token it all came from still verifies. */
	struct identity_claims c;
	char why[256];
	assert_int_equal(check(tok, f.apub, AUD, T0 + 10, &c, why), 0);
	free(claims);
	free(header);
	free(tok);
	fixture_fini(&f);
}

/* Signed by the session key, but saying what the certificate does not:
 * each consistency check on its own. */
static void test_claims_must_match_the_certificate(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	char *tok = sign_token(&f, AUD, T0 + 10);
	char *claims = part(tok, 1), *header = part(tok, 0);
	char iat[32], exp[32];
	snprintf(iat, sizeof(iat), "\"iat\":%lld", T0 + 10);
	snprintf(exp, sizeof(exp), "\"exp\":%lld", T0 + 10 + IDENTITY_LIFETIME);
	const char *const edits[][3] = {
		{ "\"iss\":\"sha256:", "\"iss\":\"sha256:0", "iss is not the fingerprint" },
		{ "test-agent", "other-agent", "sub is not the certificate's agent" },
		{ "\"sid\":\"0190", "\"sid\":\"1190", "sid is not the certificate's session" },
		{ POLICY_SHA, "6f2b", "policy_sha256 is not the certificate's" },
		{ "\"process\"", "\"gvisor\"", "boundary is not the certificate's" },
		{ "\"jti\":", "\"extra\":1,\"jti\":", "the claims hold one no airlock token has" },
		{ exp, "\"exp\":1800000005", "is not within" },
		{ exp, "\"exp\":1800009000", "is not within" },
		{ "\"aud\":", "\"audience\":", "the claims hold one" },
		{ iat, "\"iat\":\"1800000010\"", "iat or exp is missing" },
	};
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		char *text = replaced(claims, edits[i][0], edits[i][1]);
		char *bad = forge(header, text, f.session_key);
		expect_refused(bad, f.apub, NULL, T0 + 10, edits[i][2]);
		free(bad);
		free(text);
	}
	/* The same forging with nothing changed verifies: the refusals are
	 * the edits'. */
	char *same = forge(header, claims, f.session_key);
	struct identity_claims c;
	char why[256];
	assert_int_equal(check(same, f.apub, AUD, T0 + 10, &c, why), 0);
	free(same);
	/* A header member no token has, signed. */
	char *h2 = replaced(header, "\"kid\":", "\"crit\":\"x\",\"kid\":");
	char *bad = forge(h2, claims, f.session_key);
	expect_refused(bad, f.apub, NULL, T0 + 10, "a member no airlock token has");
	free(bad);
	free(h2);
	/* The genuine certificate with another key's signature: the key is
	 * not the certified one. */
	struct audit_key *other;
	struct error err = { 0 };
	assert_int_equal(audit_key_generate(&other, &err), 0);
	bad = forge(header, claims, other);
	expect_refused(bad, f.apub, NULL, T0 + 10, "bad token signature");
	free(bad);
	audit_key_free(other);
	free(claims);
	free(header);
	free(tok);
	fixture_fini(&f);
}

static void test_other_authority(void **state)
{
	(void)state;
	struct fixture f, g;
	fixture_init(&f);
	fixture_init(&g);
	char *tok = sign_token(&g, AUD, T0 + 10);
	/* Self-consistent, but from another authority than the one given. */
	expect_refused(tok, f.apub, NULL, T0 + 10, "not the one given");
	struct identity_claims c;
	char why[256];
	assert_int_equal(check(tok, g.apub, NULL, T0 + 10, &c, why), 0);
	assert_int_equal(check(tok, NULL, NULL, T0 + 10, &c, why), 0);
	assert_false(c.anchored);
	/* g's certificate with f's authority named in it: its signature is
	 * g's, so it fails against f. */
	char *header = part(tok, 0), *claims = part(tok, 1);
	char ghex[65], fhex[65];
	hex(g.apub, AUDIT_PUB_LEN, ghex);
	hex(f.apub, AUDIT_PUB_LEN, fhex);
	char *h2 = replaced(header, ghex, fhex);
	char *bad = forge(h2, claims, g.session_key);
	expect_refused(bad, f.apub, NULL, T0 + 10, "bad certificate signature");
	free(bad);
	free(h2);
	free(header);
	free(claims);
	free(tok);
	fixture_fini(&f);
	fixture_fini(&g);
}

static void test_time_and_audience(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	char *tok = sign_token(&f, AUD, T0 + 100);
	struct identity_claims c;
	char why[256];
	assert_int_equal(check(tok, f.apub, AUD, T0 + 100 + IDENTITY_LIFETIME - 1, &c, why), 0);
	expect_refused(tok, f.apub, AUD, T0 + 100 + IDENTITY_LIFETIME, "expired");
	assert_int_equal(check(tok, f.apub, AUD, T0 + 100 - IDENTITY_SKEW, &c, why), 0);
	expect_refused(tok, f.apub, AUD, T0 + 100 - IDENTITY_SKEW - 1, "in the future");
	expect_refused(tok, f.apub, "https://api.example:8444", T0 + 100, "not https://api.example:8444");
	expect_refused(tok, f.apub, "https://api.example", T0 + 100, "audience");
	/* A token before its certificate's not_before (beyond the skew). */
	char *early = sign_token(&f, AUD, T0 - IDENTITY_SKEW + 1);
	assert_int_equal(check(early, f.apub, AUD, T0 - IDENTITY_SKEW + 1, &c, why), 0);
	struct buf b = { 0 };
	assert_int_equal(identity_token_sign(f.signer, AUD, T0 - IDENTITY_SKEW - 1, &b), -EKEYEXPIRED);
	free(early);
	free(tok);
	fixture_fini(&f);
}

static void test_malformed(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	char *tok = sign_token(&f, AUD, T0 + 10);
	expect_refused("", NULL, NULL, T0 + 10, "empty");
	expect_refused("abc", NULL, NULL, T0 + 10, "three base64url parts");
	expect_refused("a.b", NULL, NULL, T0 + 10, "three base64url parts");
	expect_refused("a.b.c.d", NULL, NULL, T0 + 10, "three base64url parts");
	expect_refused("..", NULL, NULL, T0 + 10, "protected header is not base64url");
	char *plus = replaced(tok, "e", "+");
	expect_refused(plus, NULL, NULL, T0 + 10, "protected header is not base64url");
	free(plus);
	char *notjson = with_part(tok, 0, "{\"alg\":\"EdDSA\",");
	expect_refused(notjson, NULL, NULL, T0 + 10, "not a JSON object");
	free(notjson);
	char *dup = with_part(tok, 0, "{\"alg\":\"EdDSA\",\"alg\":\"none\"}");
	expect_refused(dup, NULL, NULL, T0 + 10, "not a JSON object");
	free(dup);
	char *arr = with_part(tok, 0, "[\"EdDSA\"]");
	expect_refused(arr, NULL, NULL, T0 + 10, "not a JSON object");
	free(arr);
	char *claims_bad = with_part(tok, 1, "not json");
	expect_refused(claims_bad, NULL, NULL, T0 + 10, "bad token signature");
	free(claims_bad);
	char *shortsig = with_part(tok, 2, "abc");
	expect_refused(shortsig, NULL, NULL, T0 + 10, "not 64 bytes");
	free(shortsig);
	/* Oversized: the whole, and a certificate longer than any. */
	size_t n = IDENTITY_TOKEN_MAX + 1;
	char *big = malloc(n + 1);
	memset(big, 'A', n);
	big[10] = '.';
	big[20] = '.';
	big[n] = '\0';
	expect_refused(big, NULL, NULL, T0 + 10, "longer than");
	big[IDENTITY_TOKEN_MAX] = '\0';
	expect_refused(big, NULL, NULL, T0 + 10, "protected header");
	free(big);
	char *header = part(tok, 0);
	struct buf pad = { 0 };
	assert_int_equal(buf_puts(&pad, "{\\\"pad\\\":\\\""), 0);
	for (int i = 0; i < IDENTITY_CERT_MAX; i++)
		assert_int_equal(buf_puts(&pad, "x"), 0);
	assert_int_equal(buf_puts(&pad, "\\\",\\\"agent"), 0);
	char *h2 = replaced(header, "{\\\"agent", pad.data);
	char *huge = with_part(tok, 0, h2);
	expect_refused(huge, NULL, NULL, T0 + 10, "airlock_cert");
	free(huge);
	free(h2);
	buf_free(&pad);
	free(header);
	free(tok);
	fixture_fini(&f);
}

static void test_cache(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	struct buf a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	atomic_store(&writer_now, T0 + 10);
	assert_int_equal(identity_token_get(f.signer, AUD, T0 + 10, &a), 0);
	/* A cached token needs no writer. */
	atomic_store(&writer_now, 0);
	assert_int_equal(identity_token_get(f.signer, AUD, T0 + 10 + IDENTITY_LIFETIME / 2 - 1, &b), 0);
	assert_string_equal(a.data, b.data); /* cached */
	atomic_store(&writer_now, T0 + 20);
	assert_int_equal(identity_token_get(f.signer, "http://other.example", T0 + 20, &c), 0);
	assert_string_not_equal(a.data, c.data); /* its own audience */
	atomic_store(&writer_now, T0 + 10 + IDENTITY_LIFETIME / 2);
	assert_int_equal(identity_token_get(f.signer, AUD, T0 + 10 + IDENTITY_LIFETIME / 2, &d), 0);
	assert_string_not_equal(a.data, d.data); /* re-signed at half its life */
	struct identity_claims cl;
	char why[256];
	assert_int_equal(check(d.data, f.apub, AUD, T0 + 10 + IDENTITY_LIFETIME, &cl, why), 0);
	assert_int_equal(check(c.data, f.apub, "http://other.example", T0 + 20, &cl, why), 0);
	/* More audiences than the cache holds: each still gets its own. */
	atomic_store(&writer_now, T0 + 30);
	for (int i = 0; i < 2 * IDENTITY_CACHE; i++) {
		char aud[64];
		struct buf t = { 0 };
		snprintf(aud, sizeof(aud), "https://h%d.example", i);
		assert_int_equal(identity_token_get(f.signer, aud, T0 + 30, &t), 0);
		assert_int_equal(check(t.data, f.apub, aud, T0 + 30, &cl, why), 0);
		buf_free(&t);
	}
	buf_free(&a);
	buf_free(&b);
	buf_free(&c);
	buf_free(&d);
	fixture_fini(&f);
}

/* Several threads asking at once, each for audiences of its own: every
 * token comes back signed for the audience asked (answers are matched to
 * their requests). */
#define ASKERS 4
struct asker {
	struct fixture *f;
	int index, failures;
};

static void *asker_main(void *arg)
{
	struct asker *a = arg;
	struct identity_claims cl;
	char why[256];
	for (int i = 0; i < 20; i++) {
		char aud[64];
		struct buf t = { 0 };
		snprintf(aud, sizeof(aud), "https://t%d-%d.example", a->index, i);
		if (identity_token_sign(a->f->signer, aud, T0 + 40, &t) < 0 ||
		    check(t.data, a->f->apub, aud, T0 + 40, &cl, why) < 0)
			a->failures++;
		buf_free(&t);
	}
	return NULL;
}

/* Connections that all find no token for one audience at once (a
 * client's first burst) share one signature. */
static void *same_aud_main(void *arg)
{
	struct asker *a = arg;
	struct buf t = { 0 };
	struct identity_claims cl;
	char why[256];
	if (identity_token_get(a->f->signer, AUD, T0 + 50, &t) < 0 || check(t.data, a->f->apub, AUD, T0 + 50, &cl, why) < 0)
		a->failures++;
	buf_free(&t);
	return NULL;
}

static void test_one_signature_for_a_burst(void **state)
{
	(void)state;
	struct fixture f;
	pthread_t th[ASKERS];
	struct asker as[ASKERS];
	fixture_init(&f);
	atomic_store(&writer_now, T0 + 50);
	atomic_store(&writer_signed, 0);
	for (int i = 0; i < ASKERS; i++) {
		as[i] = (struct asker){ .f = &f, .index = i };
		assert_int_equal(pthread_create(&th[i], NULL, same_aud_main, &as[i]), 0);
	}
	for (int i = 0; i < ASKERS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(as[i].failures, 0);
	}
	assert_int_equal(atomic_load(&writer_signed), 1);
	fixture_fini(&f);
}

static void test_concurrent_requests(void **state)
{
	(void)state;
	struct fixture f;
	pthread_t th[ASKERS];
	struct asker as[ASKERS];
	fixture_init(&f);
	atomic_store(&writer_now, T0 + 40);
	for (int i = 0; i < ASKERS; i++) {
		as[i] = (struct asker){ .f = &f, .index = i };
		assert_int_equal(pthread_create(&th[i], NULL, asker_main, &as[i]), 0);
	}
	for (int i = 0; i < ASKERS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(as[i].failures, 0);
	}
	fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64url),
		cmocka_unit_test(test_audience),
		cmocka_unit_test(test_good_token),
		cmocka_unit_test(test_signer_refuses),
		cmocka_unit_test(test_signer_fails_closed),
		cmocka_unit_test(test_concurrent_requests),
		cmocka_unit_test(test_one_signature_for_a_burst),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_claims_must_match_the_certificate),
		cmocka_unit_test(test_other_authority),
		cmocka_unit_test(test_time_and_audience),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
