/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The signing channel's shared half (audit/signproto.h): the identity
 * token's protected header, which proxy and writer must make alike, and
 * the writer's check of what it is asked to sign. Linked by the writer
 * (libsodium's audit_sign) and by the proxy's libraries (libcrypto's):
 * nothing here names either.
 */
#include "audit/signproto.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "audit/identity.h"
#include "doc/json.h"
#include "util/base64.h"

/* The claims' decoded size and tokens: nine short members. */
#define CLAIMS_MAX 2048
#define CLAIMS_TOKENS 32
#define CLAIMS_N 9

int signproto_header(const char *session, const char *cert, size_t cert_len, const char *cert_sig_hex,
		     struct buf *out)
{
	struct buf h = { 0 };
	int r = buf_printf(&h, "{\"alg\":\"EdDSA\",\"typ\":\"" IDENTITY_TYP "\",\"kid\":\"%s\",\"airlock_cert\":",
			   session) ?:
		buf_json_string(&h, cert, cert_len) ?: buf_printf(&h, ",\"airlock_cert_sig\":\"%s\"}", cert_sig_hex) ?:
		base64url_encode((const uint8_t *)h.data, h.len, out);
	buf_free(&h);
	return r;
}

int signproto_expect_init(struct signproto_expect *x, const char *cert, size_t cert_len, const char *cert_sig_hex,
			  const char *agent, const char *session, const char *policy_sha256, const char *boundary,
			  const uint8_t authority[AUDIT_PUB_LEN], int64_t not_after_ms)
{
	char h[65];
	memset(x, 0, sizeof(*x));
	if (strlen(agent) >= sizeof(x->sub) || strlen(session) >= sizeof(x->sid) ||
	    strlen(policy_sha256) >= sizeof(x->policy_sha256) || strlen(boundary) >= sizeof(x->boundary))
		return -ENAMETOOLONG;
	audit_sha256_hex(authority, AUDIT_PUB_LEN, h);
	snprintf(x->iss, sizeof(x->iss), "sha256:%s", h);
	snprintf(x->sub, sizeof(x->sub), "%s", agent);
	snprintf(x->sid, sizeof(x->sid), "%s", session);
	snprintf(x->policy_sha256, sizeof(x->policy_sha256), "%s", policy_sha256);
	snprintf(x->boundary, sizeof(x->boundary), "%s", boundary);
	x->not_after = not_after_ms / 1000;
	return signproto_header(session, cert, cert_len, cert_sig_hex, &x->header);
}

void signproto_expect_fini(struct signproto_expect *x)
{
	buf_free(&x->header);
}

static bool member_is(const struct doc_json *j, const char *key, const char *want)
{
	int t = doc_json_member(j, 0, key);
	return t >= 0 && j->tok[t].type == DOC_JSON_STRING && doc_json_key_is(j, t, want);
}

/* An audience as identity_audience makes one: http(s)://, then printable
 * ASCII without spaces. */
static bool audience_ok(const struct doc_json *j)
{
	char aud[IDENTITY_AUD_MAX + 1];
	int t = doc_json_member(j, 0, "aud");
	int n = t >= 0 ? doc_json_str(j, t, aud, sizeof(aud)) : -EINVAL;
	if (n <= 0 || (strncmp(aud, "http://", 7) != 0 && strncmp(aud, "https://", 8) != 0))
		return false;
	for (int i = 0; i < n; i++)
		if (aud[i] <= 0x20 || aud[i] >= 0x7f)
			return false;
	return true;
}

int signproto_input_check(const struct signproto_expect *x, const char *in, size_t len, int64_t now,
			  struct error *err)
{
	static const char *const claims[CLAIMS_N] = { "iss", "sub", "sid", "aud", "iat", "exp", "jti", "policy_sha256",
						      "boundary" };
	/* WARNING: this prefix is what keeps the session key's two uses
	 * apart. A checkpoint or seal signs "airlock-checkpoint\n..." or
	 * "airlock-seal\n..." (writer.c), an identity token the base64url
	 * of '{"alg":...' and a dot: no text is both, so a signature asked
	 * for here never verifies as a checkpoint, whatever else the proxy
	 * sends. */
	if (len > SIGNPROTO_INPUT_MAX)
		return error_set(err, EPERM, "longer than %d bytes", SIGNPROTO_INPUT_MAX);
	if (!x->header.len || len <= x->header.len + 1 || memcmp(in, x->header.data, x->header.len) != 0 ||
	    in[x->header.len] != '.')
		return error_set(err, EPERM, "not this session's identity token header");
	const char *c = in + x->header.len + 1;
	size_t clen = len - x->header.len - 1;
	uint8_t text[CLAIMS_MAX];
	/* Strict base64url: no dot, newline or padding can follow. */
	ssize_t n = base64url_decode(c, clen, text, sizeof(text));
	if (n <= 0)
		return error_set(err, EPERM, "the claims are not base64url, or longer than %d bytes", CLAIMS_MAX);
	struct doc_json_tok tok[CLAIMS_TOKENS];
	struct doc_json j;
	if (doc_json_parse(&j, (const char *)text, (size_t)n, tok, CLAIMS_TOKENS, 1) < 0 ||
	    tok[0].type != DOC_JSON_OBJECT)
		return error_set(err, EPERM, "the claims are not a JSON object");
	/* Duplicate keys are refused by the parser: nine members that
	 * include each of the nine claims are exactly those. */
	int members = 0;
	for (int m = 1; m < (int)tok[0].end; m = (int)tok[m + 1].end)
		members++;
	for (size_t k = 0; k < CLAIMS_N; k++)
		if (doc_json_member(&j, 0, claims[k]) < 0)
			return error_set(err, EPERM, "the claims lack %s", claims[k]);
	if (members != CLAIMS_N)
		return error_set(err, EPERM, "the claims hold one an identity token does not have");
	if (!member_is(&j, "iss", x->iss) || !member_is(&j, "sub", x->sub) || !member_is(&j, "sid", x->sid) ||
	    !member_is(&j, "policy_sha256", x->policy_sha256) || !member_is(&j, "boundary", x->boundary))
		return error_set(err, EPERM, "iss, sub, sid, policy_sha256 or boundary is not the session's");
	if (!audience_ok(&j))
		return error_set(err, EPERM, "aud is not an http(s) audience of at most %d bytes", IDENTITY_AUD_MAX);
	if (!doc_json_is_hex(&j, doc_json_member(&j, 0, "jti"), 32))
		return error_set(err, EPERM, "jti is not 32 hex digits");
	int64_t iat, exp;
	if (doc_json_int(&j, doc_json_member(&j, 0, "iat"), &iat) < 0 ||
	    doc_json_int(&j, doc_json_member(&j, 0, "exp"), &exp) < 0)
		return error_set(err, EPERM, "iat or exp is not an integer");
	/* Tokens for later use, or for longer than a token lives, would
	 * outlast a session that was ended, or the proxy's compromise. */
	if (iat < now - IDENTITY_SKEW || iat > now + IDENTITY_SKEW)
		return error_set(err, EPERM, "iat is not now");
	if (exp <= iat || exp <= now || exp - iat > IDENTITY_LIFETIME || exp > x->not_after)
		return error_set(err, EPERM, "exp is not within %d s of iat and the certificate's validity",
				 IDENTITY_LIFETIME);
	return 0;
}

size_t signproto_answer(const struct signproto_expect *x, const struct audit_key *key, const uint8_t *req, size_t n,
			int64_t now, uint8_t ans[SIGNPROTO_ANSWER_CAP])
{
	struct error err = { 0 };
	if (n < SIGNPROTO_HDR)
		return 0;
	memcpy(ans + 1, req + 1, 4);
	int r = req[0] != SIGNPROTO_REQ_IDENTITY ? error_set(&err, EPERM, "not a request this channel serves")
		: n > SIGNPROTO_REQ_MAX ? error_set(&err, EPERM, "longer than %d bytes", SIGNPROTO_INPUT_MAX)
					: signproto_input_check(x, (const char *)req + SIGNPROTO_HDR, n - SIGNPROTO_HDR,
								now, &err);
	if (r == 0 && audit_sign(key, req + SIGNPROTO_HDR, n - SIGNPROTO_HDR, ans + SIGNPROTO_HDR) < 0)
		r = error_set(&err, EIO, "cannot sign");
	if (r == 0) {
		ans[0] = SIGNPROTO_ANS_SIG;
		return SIGNPROTO_HDR + AUDIT_SIG_LEN;
	}
	size_t m = strnlen(err.msg, SIGNPROTO_REASON_MAX);
	ans[0] = SIGNPROTO_ANS_REFUSED;
	memcpy(ans + SIGNPROTO_HDR, err.msg, m);
	return SIGNPROTO_HDR + m;
}
