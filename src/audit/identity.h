/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_AUDIT_IDENTITY_H
#define AIRLOCK_AUDIT_IDENTITY_H

/*
 * Signed identity assertions: the `Airlock-Identity` header the egress
 * proxy adds to the requests it forwards when `identity.header` is on, so
 * that the receiving side can tell which agent (not which person) sent
 * one, and `airlock identity verify TOKEN`.
 *
 * The token is a compact JWS (RFC 7515) signed with EdDSA (RFC 8037) by
 * the session key, the one that signs the session's audit log, which
 * never leaves airlock-audit-writer: the proxy asks it for each signature
 * (audit/signproto.h). Its
 * protected header carries the session certificate (the JSON text the
 * local authority signed, and that signature), so a verifier needs only
 * the authority's public key:
 *
 *   {"alg":"EdDSA","typ":"airlock-id+jwt","kid":SESSION,
 *    "airlock_cert":CERT-TEXT,"airlock_cert_sig":HEX}
 *
 * and its claims repeat what the certificate binds, plus the audience and
 * a short validity:
 *
 *   {"iss":"sha256:HEX","sub":AGENT,"sid":SESSION,"aud":"https://host:port",
 *    "iat":SECONDS,"exp":SECONDS,"jti":HEX,"policy_sha256":HEX,
 *    "boundary":B}
 *
 * iss is SHA-256 of the authority's raw public key. The parser below
 * reads tokens from anyone: every length is bounded, the JSON reader is
 * the audit module's strict one (no duplicate keys), unknown header
 * members and claims are refused.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

#define IDENTITY_HEADER_NAME "Airlock-Identity"
#define IDENTITY_TYP "airlock-id+jwt"
#define IDENTITY_LIFETIME 300      /* seconds a token is valid */
#define IDENTITY_MAX_LIFETIME 3600 /* the longest a verifier accepts */
#define IDENTITY_SKEW 60           /* seconds of clock difference tolerated on iat */
#define IDENTITY_TOKEN_MAX 8192    /* characters of a whole token */
#define IDENTITY_CERT_MAX 2048     /* bytes of the certificate's JSON text */
#define IDENTITY_AUD_MAX 300       /* "https://" + a host name + ":65535" */
#define IDENTITY_CACHE 32          /* audiences whose tokens are kept */

struct identity_signer;

/* A signer for the session certificate (cert: its JSON text, cert_sig:
 * the authority's signature in 128 hex digits) whose signatures are made
 * by airlock-audit-writer, which alone holds the session key: sign_fd is
 * the proxy's end of the writer's signing channel (audit/signproto.h),
 * the signer's on success, still the caller's on failure. Refused when
 * the certificate does not parse or its signature does not verify with
 * the authority it names. *out is the caller's, freed with
 * identity_signer_free. */
int identity_signer_new(int sign_fd, const char *cert, size_t cert_len, const char *cert_sig_hex,
			struct identity_signer **out, struct error *err) WUR;

/* Close the channel and free; NULL is fine. */
void identity_signer_free(struct identity_signer *s);

/* Sign a new token for audience aud issued at now (epoch seconds), valid
 * for IDENTITY_LIFETIME seconds but never past the certificate's
 * not_after: the writer is asked to sign it, and the fiber waits for the
 * answer (util/fiber.h; outside a fiber the thread blocks). Appends it to
 * out. Fails closed: -EKEYEXPIRED when the certificate does not cover
 * now; -EPIPE, -ECONNRESET or -ETIMEDOUT when the writer is gone or does
 * not answer within SIGNPROTO_TIMEOUT_MS; -EPERM when it refused; -EIO
 * when its signature is not the certified key's. */
int identity_token_sign(struct identity_signer *s, const char *aud, int64_t now, struct buf *out) WUR;

/* The token for aud at now, from a cache of IDENTITY_CACHE audiences: a
 * cached token is re-signed once half its lifetime has passed, so a
 * token handed out has at least half its lifetime left. Thread-safe, and
 * holds no lock while the writer signs. Appends it to out; fails as
 * identity_token_sign. */
int identity_token_get(struct identity_signer *s, const char *aud, int64_t now, struct buf *out) WUR;

/* The destination as a token's audience: scheme://host[:port], the port
 * left out when it is the scheme's default, an IPv6 address in brackets.
 * Returns -ENAMETOOLONG when it does not fit out[IDENTITY_AUD_MAX + 1]. */
int identity_audience(const char *scheme, const char *host, uint16_t port, char out[IDENTITY_AUD_MAX + 1]) WUR;

struct identity_claims {
	char agent[128];
	char session[37];
	char aud[IDENTITY_AUD_MAX + 1];
	char jti[65];
	char policy_sha256[65];
	char boundary[16];
	char host[256];             /* the certificate's: where the session ran */
	int64_t iat, exp;           /* epoch seconds */
	int64_t not_before, not_after; /* the certificate's, epoch milliseconds */
	uint8_t authority[32];      /* the key that signed the certificate */
	bool anchored;              /* it is the authority the caller gave */
};

/* Verify token[0..len) at now (epoch seconds): its structure, the
 * certificate's signature (by authority when given, else by the key the
 * certificate names, and then c->anchored is false), the JWS signature
 * by the certified session key, that the claims agree with the
 * certificate, the validity of token and certificate at now, and the
 * audience when given. Returns 0 with c filled, or -EINVAL with err
 * saying what failed (one line). */
int identity_token_verify(const char *token, size_t len, const uint8_t *authority /* 32 bytes or NULL */,
			  const char *audience /* or NULL */, int64_t now, struct identity_claims *c,
			  struct error *err) WUR;

#endif
