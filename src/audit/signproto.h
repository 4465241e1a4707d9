/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_AUDIT_SIGNPROTO_H
#define AIRLOCK_AUDIT_SIGNPROTO_H

/*
 * The signing channel between the egress proxy and airlock-audit-writer.
 *
 * With identity.header the proxy adds a token signed by the session key
 * (audit/identity.h), the key that also signs the log's checkpoints and
 * its seal. That key never leaves the writer: the proxy builds the token's
 * JWS signing input and asks the writer to sign it, as OpenSSH's
 * unprivileged child asks its monitor (mm_sshkey_sign). The writer signs
 * only what signproto_input_check accepts: the signing input of an
 * identity token for this session, so that a proxy taken over by the
 * agent's bytes gets at most identity tokens, never a signature it could
 * pass off as a checkpoint or a seal.
 *
 * The channel is a SOCK_SEQPACKET socketpair the writer makes once its log
 * is open; the proxy's end travels with the writer's 'I' message to the
 * supervisor and on with the proxy's 'I' (SCM_RIGHTS both times). No
 * path, no listener: only the process holding that end can ask.
 *
 * Every message is one datagram: a type byte, a 4-byte request id in host
 * order (the proxy's; the answer repeats it, so that an answer that
 * arrives after its asker gave up is told apart), then the payload.
 */

#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "util/buf.h"
#include "util/error.h"

/* The messages, as OpenSSH's MONITOR_REQ_* / MONITOR_ANS_*. */
enum signproto_type {
	SIGNPROTO_REQ_IDENTITY = 'i', /* proxy -> writer: payload the JWS signing input, ASCII,
				       * at most SIGNPROTO_INPUT_MAX bytes */
	SIGNPROTO_ANS_SIG = 's',      /* writer -> proxy: payload the Ed25519 signature (64 bytes) */
	SIGNPROTO_ANS_REFUSED = 'r',  /* writer -> proxy: payload why, text of at most
				       * SIGNPROTO_REASON_MAX bytes; nothing was signed */
};

#define SIGNPROTO_HDR 5             /* type byte and request id */
#define SIGNPROTO_INPUT_MAX 8000    /* a token's first two parts (IDENTITY_TOKEN_MAX less the signature) */
#define SIGNPROTO_REASON_MAX 200
#define SIGNPROTO_REQ_MAX (SIGNPROTO_HDR + SIGNPROTO_INPUT_MAX)
#define SIGNPROTO_TIMEOUT_MS 10000  /* how long the proxy waits for an answer */

/* What the writer knows of its session, and an identity token for it must
 * say. */
struct signproto_expect {
	struct buf header;       /* the protected header, base64url, exactly as the proxy makes it */
	char iss[72];            /* "sha256:" and the authority key's SHA-256 */
	char sub[128];           /* the agent */
	char sid[37];            /* the session */
	char policy_sha256[65];
	char boundary[16];
	int64_t not_after;       /* the certificate's end, epoch seconds */
};

/* The token's protected header, base64url, appended to out:
 * {"alg":"EdDSA","typ":IDENTITY_TYP,"kid":SESSION,"airlock_cert":CERT,
 *  "airlock_cert_sig":SIG}. Proxy and writer both make it here, so they
 * agree byte for byte. */
int signproto_header(const char *session, const char *cert, size_t cert_len, const char *cert_sig_hex,
		     struct buf *out) WUR;

/* Fill x for the session whose certificate cert (its JSON text, as the
 * writer made it) is signed cert_sig_hex, naming the given values.
 * authority: the public key that signed the certificate. x->header is
 * x's; signproto_expect_fini frees it. */
int signproto_expect_init(struct signproto_expect *x, const char *cert, size_t cert_len, const char *cert_sig_hex,
			  const char *agent, const char *session, const char *policy_sha256, const char *boundary,
			  const uint8_t authority[AUDIT_PUB_LEN], int64_t not_after_ms) WUR;
void signproto_expect_fini(struct signproto_expect *x);

/* Whether in[0..len) is the JWS signing input of an identity token for
 * x's session, issued within IDENTITY_SKEW seconds of now (epoch seconds),
 * valid at now and for at most IDENTITY_LIFETIME seconds, inside the
 * certificate's validity: x's header exactly, a dot, the claims in
 * base64url, whose JSON object holds exactly the claims of an identity
 * token with x's iss, sub, sid, policy_sha256 and boundary, an http(s)
 * audience and a 32-hex-digit jti. -EPERM with err saying which part is
 * wrong. */
int signproto_input_check(const struct signproto_expect *x, const char *in, size_t len, int64_t now,
			  struct error *err) WUR;

/* The writer's side of one request: req[0..n) as received, answered in
 * ans (SIGNPROTO_ANS_MAX + AUDIT_SIG_LEN bytes) with key's signature when
 * signproto_input_check accepts the input, with a refusal otherwise.
 * Returns the answer's length, or 0 when req is too short to carry a
 * request id (nothing to answer). */
#define SIGNPROTO_ANSWER_CAP (SIGNPROTO_HDR + (SIGNPROTO_REASON_MAX > AUDIT_SIG_LEN ? SIGNPROTO_REASON_MAX : AUDIT_SIG_LEN))
size_t signproto_answer(const struct signproto_expect *x, const struct audit_key *key, const uint8_t *req, size_t n,
			int64_t now, uint8_t ans[SIGNPROTO_ANSWER_CAP]);

#endif
