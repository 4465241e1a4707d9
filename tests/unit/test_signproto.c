/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the writer's side of the signing channel
 * (audit/signproto.c): what airlock-audit-writer agrees to sign for the
 * egress proxy. An identity token's signing input for the session is
 * signed; the texts the same key signs for the log (a checkpoint, the
 * seal) and everything not shaped as this session's token are refused,
 * each next to the accepted input it was made from.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "audit/audit.h"
#include "audit/identity.h"
#include "audit/signproto.h"
#include "util/base64.h"
#include "util/buf.h"

#define SESSION "0190b5a2-7c1e-7abc-8def-0123456789ab"
#define POLICY_SHA "5f2b6c0e3a1d4f7e9b8c2a1d0e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f"
#define HEAD "9a1f0c2d3e4b5a697887960a5b4c3d2e1f00112233445566778899aabbccddee"
#define T0 1800000000LL
#define JTI "00112233445566778899aabbccddeeff"

struct fx {
	struct audit_key *authority, *session_key;
	uint8_t apub[AUDIT_PUB_LEN], spub[AUDIT_PUB_LEN];
	char cert[512];
	struct signproto_expect x;
};

static void fx_init(struct fx *f)
{
	struct error err = { 0 };
	char ahex[65], shex[65];
	memset(f, 0, sizeof(*f));
	assert_int_equal(audit_key_generate(&f->authority, &err), 0);
	assert_int_equal(audit_key_generate(&f->session_key, &err), 0);
	audit_key_public(f->authority, f->apub);
	audit_key_public(f->session_key, f->spub);
	for (int i = 0; i < AUDIT_PUB_LEN; i++) {
		snprintf(ahex + 2 * i, 3, "%02x", f->apub[i]);
		snprintf(shex + 2 * i, 3, "%02x", f->spub[i]);
	}
	snprintf(f->cert, sizeof(f->cert),
		 "{\"agent\":\"bot\",\"session\":\"" SESSION "\",\"boundary\":\"process\",\"policy_sha256\":\"" POLICY_SHA
		 "\",\"host\":\"h\",\"not_before\":%lld,\"not_after\":%lld,\"session_key\":\"%s\",\"authority\":\"%s\"}",
		 T0 * 1000, (T0 + 86400) * 1000, shex, ahex);
	/* The signature's value does not matter here: the header carries it. */
	char sig[129];
	memset(sig, 'a', 128);
	sig[128] = '\0';
	assert_int_equal(signproto_expect_init(&f->x, f->cert, strlen(f->cert), sig, "bot", SESSION, POLICY_SHA,
					       "process", f->apub, (T0 + 86400) * 1000),
			 0);
}

static void fx_fini(struct fx *f)
{
	signproto_expect_fini(&f->x);
	audit_key_free(f->authority);
	audit_key_free(f->session_key);
}

/* The claims of a token for x's session, as identity_token_sign writes
 * them. */
static void claims_text(const struct fx *f, const char *aud, int64_t iat, int64_t exp, char *out, size_t cap)
{
	snprintf(out, cap,
		 "{\"iss\":\"%s\",\"sub\":\"bot\",\"sid\":\"" SESSION "\",\"aud\":\"%s\",\"iat\":%" PRId64
		 ",\"exp\":%" PRId64 ",\"jti\":\"" JTI "\",\"policy_sha256\":\"" POLICY_SHA "\",\"boundary\":\"process\"}",
		 f->x.iss, aud, iat, exp);
}

/* header "." base64url(claims): a signing input. */
static char *input_of(const char *header_b64, const char *claims)
{
	struct buf b = { 0 };
	assert_int_equal(buf_puts(&b, header_b64), 0);
	assert_int_equal(buf_puts(&b, "."), 0);
	assert_int_equal(base64url_encode((const uint8_t *)claims, strlen(claims), &b), 0);
	return b.data;
}

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

/* A request as the proxy sends it: type, id, payload. */
static size_t request(uint8_t type, uint32_t id, const char *payload, size_t len, uint8_t *out)
{
	out[0] = type;
	memcpy(out + 1, &id, 4);
	memcpy(out + SIGNPROTO_HDR, payload, len);
	return SIGNPROTO_HDR + len;
}

static void expect_check_refused(const struct fx *f, const char *in, const char *words)
{
	struct error err = { 0 };
	assert_int_equal(signproto_input_check(&f->x, in, strlen(in), T0 + 10, &err), -EPERM);
	if (!strstr(err.msg, words))
		fail_msg("refused for \"%s\", expected \"%s\"", err.msg, words);
}

/* What the writer answers to payload: the signature, or a refusal that
 * signs nothing. */
static uint8_t answer(const struct fx *f, uint8_t type, const char *payload, size_t len, uint8_t ans[SIGNPROTO_ANSWER_CAP],
		      size_t *alen)
{
	static uint8_t req[SIGNPROTO_REQ_MAX + 64];
	assert_true(len + SIGNPROTO_HDR <= sizeof(req));
	size_t n = request(type, 0x01020304, payload, len, req);
	*alen = signproto_answer(&f->x, f->session_key, req, n, T0 + 10, ans);
	assert_true(*alen >= SIGNPROTO_HDR);
	uint32_t id;
	memcpy(&id, ans + 1, 4);
	assert_int_equal(id, 0x01020304); /* the answer names its request */
	return ans[0];
}

/* The accepted neighbour: a token's signing input is signed, by the
 * session key, over exactly those bytes. */
static void test_identity_input_is_signed(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	char claims[1024];
	claims_text(&f, "https://api.example:8443", T0 + 10, T0 + 10 + IDENTITY_LIFETIME, claims, sizeof(claims));
	char *in = input_of(f.x.header.data, claims);
	struct error err = { 0 };
	assert_int_equal(signproto_input_check(&f.x, in, strlen(in), T0 + 10, &err), 0);
	uint8_t ans[SIGNPROTO_ANSWER_CAP];
	size_t alen;
	assert_int_equal(answer(&f, SIGNPROTO_REQ_IDENTITY, in, strlen(in), ans, &alen), SIGNPROTO_ANS_SIG);
	assert_int_equal(alen, SIGNPROTO_HDR + AUDIT_SIG_LEN);
	assert_true(audit_sig_ok(f.spub, in, strlen(in), ans + SIGNPROTO_HDR));
	/* The header is the one a verifier reads: the certificate in it. */
	uint8_t h[4096];
	ssize_t hn = base64url_decode(f.x.header.data, f.x.header.len, h, sizeof(h) - 1);
	assert_true(hn > 0);
	h[hn] = '\0';
	assert_non_null(strstr((char *)h, "{\"alg\":\"EdDSA\",\"typ\":\"" IDENTITY_TYP "\",\"kid\":\"" SESSION "\""));
	/* Issued within the skew of the writer's clock, valid a second. */
	free(in);
	claims_text(&f, "http://h.test", T0 + 10 - IDENTITY_SKEW, T0 + 11, claims, sizeof(claims));
	in = input_of(f.x.header.data, claims);
	assert_int_equal(signproto_input_check(&f.x, in, strlen(in), T0 + 10, &err), 0);
	free(in);
	fx_fini(&f);
}

/* The log's own signed texts, and a signature asked for as a checkpoint
 * would be: refused, so that a proxy taken over gets no signature it
 * could pass off as a checkpoint or the seal. */
static void test_checkpoint_refused(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	const char *const logs[] = {
		"airlock-checkpoint\n" SESSION "\n1000\n" HEAD "\n",
		"airlock-seal\n" SESSION "\n1234\n" HEAD "\n",
		f.cert, /* what the authority signs: not the session key's, still not for the proxy */
	};
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		uint8_t ans[SIGNPROTO_ANSWER_CAP];
		size_t alen;
		expect_check_refused(&f, logs[i], "not this session's identity token header");
		assert_int_equal(answer(&f, SIGNPROTO_REQ_IDENTITY, logs[i], strlen(logs[i]), ans, &alen),
				 SIGNPROTO_ANS_REFUSED);
		assert_true(alen <= SIGNPROTO_HDR + SIGNPROTO_REASON_MAX);
		/* Under any other type byte too. */
		assert_int_equal(answer(&f, 'c', logs[i], strlen(logs[i]), ans, &alen), SIGNPROTO_ANS_REFUSED);
	}
	/* A checkpoint text after the header, or in the claims: still
	 * refused (the claims must be this session's token's). */
	char *in = input_of(f.x.header.data, "airlock-checkpoint\n" SESSION "\n1000\n" HEAD "\n");
	expect_check_refused(&f, in, "not a JSON object");
	free(in);
	struct buf b = { 0 };
	assert_int_equal(buf_puts(&b, f.x.header.data), 0);
	assert_int_equal(buf_puts(&b, ".airlock-checkpoint\n" SESSION "\n1000\n" HEAD "\n"), 0);
	expect_check_refused(&f, b.data, "base64url");
	buf_free(&b);
	fx_fini(&f);
}

/* Each part of an accepted input changed on its own: refused. */
static void test_identity_input_edits_refused(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	char claims[1024];
	claims_text(&f, "https://api.example:8443", T0 + 10, T0 + 10 + IDENTITY_LIFETIME, claims, sizeof(claims));
	char exp[32];
	snprintf(exp, sizeof(exp), "\"exp\":%lld", T0 + 10 + IDENTITY_LIFETIME);
	const char *const edits[][3] = {
		{ "\"sub\":\"bot\"", "\"sub\":\"other\"", "not the session's" },
		{ "\"sid\":\"0190", "\"sid\":\"1190", "not the session's" },
		{ "\"iss\":\"sha256:", "\"iss\":\"sha256:0", "not the session's" },
		{ "\"process\"", "\"gvisor\"", "not the session's" },
		{ POLICY_SHA, "6f2b", "not the session's" },
		{ "\"jti\":", "\"extra\":1,\"jti\":", "does not have" },
		{ "\"aud\":", "\"audience\":", "lack aud" },
		{ "https://api.example:8443", "ftp://api.example", "aud is not" },
		{ "https://api.example:8443", "https://a b", "aud is not" },
		{ "https://api.example:8443", "", "aud is not" },
		{ JTI, "0011", "jti is not" },
		{ JTI, "00112233445566778899AABBCCDDEEFF", "jti is not" },
		{ "\"iat\":1800000010", "\"iat\":\"1800000010\"", "not an integer" },
		{ "\"iat\":1800000010", "\"iat\":1800000071", "iat is not now" },
		{ "\"iat\":1800000010", "\"iat\":1799999949", "iat is not now" },
		{ exp, "\"exp\":1800000010", "exp is not within" },
		{ exp, "\"exp\":1800000311", "exp is not within" },
		{ "\"iat\":1800000010", "\"iat\":1800000009", "exp is not within" }, /* 301 s */
		{ "{\"iss\"", "[{\"iss\"", "not a JSON object" },
	};
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		char *text = replaced(claims, edits[i][0], edits[i][1]);
		char *in = input_of(f.x.header.data, text);
		expect_check_refused(&f, in, edits[i][2]);
		free(in);
		free(text);
	}
	/* Past the certificate's not_after. */
	char late[1024];
	claims_text(&f, "http://h.test", T0 + 86400 - 5, T0 + 86400 + 1, late, sizeof(late));
	char *in = input_of(f.x.header.data, late);
	struct error err = { 0 };
	assert_int_equal(signproto_input_check(&f.x, in, strlen(in), T0 + 86400 - 5, &err), -EPERM);
	free(in);
	/* Another header: typ, or a member added. */
	uint8_t h[4096];
	ssize_t hn = base64url_decode(f.x.header.data, f.x.header.len, h, sizeof(h) - 1);
	assert_true(hn > 0);
	h[hn] = '\0';
	char *h2 = replaced((char *)h, IDENTITY_TYP, "JWT");
	struct buf hb = { 0 };
	assert_int_equal(base64url_encode((const uint8_t *)h2, strlen(h2), &hb), 0);
	in = input_of(hb.data, claims);
	expect_check_refused(&f, in, "header");
	free(in);
	buf_free(&hb);
	free(h2);
	/* Trailing bytes: a newline, a second dot, a signature part. */
	char *good = input_of(f.x.header.data, claims);
	const char *const tails[] = { "\n", ".", ".AAAA" };
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		struct buf t = { 0 };
		assert_int_equal(buf_puts(&t, good), 0);
		assert_int_equal(buf_puts(&t, tails[i]), 0);
		expect_check_refused(&f, t.data, "base64url");
		buf_free(&t);
	}
	/* Too long: refused before it is read, and a datagram cut at the
	 * writer's buffer is refused for its length. */
	size_t big = SIGNPROTO_INPUT_MAX + 1;
	char *huge = malloc(big + 1);
	assert_non_null(huge);
	memcpy(huge, good, strlen(good));
	memset(huge + strlen(good), 'A', big - strlen(good));
	huge[big] = '\0';
	expect_check_refused(&f, huge, "longer than");
	uint8_t ans[SIGNPROTO_ANSWER_CAP];
	size_t alen;
	assert_int_equal(answer(&f, SIGNPROTO_REQ_IDENTITY, huge, big, ans, &alen), SIGNPROTO_ANS_REFUSED);
	free(huge);
	/* Too short for a request id: nothing to answer. */
	uint8_t tiny[3] = { SIGNPROTO_REQ_IDENTITY, 0, 0 };
	assert_int_equal(signproto_answer(&f.x, f.session_key, tiny, sizeof(tiny), T0 + 10, ans), 0);
	/* And the untouched input, once more, is signed. */
	assert_int_equal(answer(&f, SIGNPROTO_REQ_IDENTITY, good, strlen(good), ans, &alen), SIGNPROTO_ANS_SIG);
	free(good);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_input_is_signed),
		cmocka_unit_test(test_checkpoint_refused),
		cmocka_unit_test(test_identity_input_edits_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
