/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Identity assertions: compact JWS tokens signed by the session key
 * (audit/identity.h says what they hold).
 */
#include "audit/identity.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audit/audit.h"
#include "doc/json.h"
#include "audit/signproto.h"
#include "util/base64.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/fiber.h"
#include "util/hex.h"

/* Decoded sizes: the header is the certificate escaped (at most six
 * bytes for one) plus a few members; the claims are short fields. */
#define HEADER_MAX (6 * IDENTITY_CERT_MAX + 512)
#define CLAIMS_MAX 2048
#define HEADER_TOKENS 16
#define CLAIMS_TOKENS 32
#define CERT_TOKENS 32

struct cert_info {
	char agent[128], session[37], boundary[16], policy[65], host[256];
	int64_t not_before, not_after;
	uint8_t session_key[AUDIT_PUB_LEN], authority[AUDIT_PUB_LEN];
};

struct cache_entry {
	char aud[IDENTITY_AUD_MAX + 1];
	int64_t iat;
	struct buf token;
};

struct identity_signer {
	int fd;            /* the channel to the writer, which holds the key (audit/signproto.h) */
	atomic_bool busy;  /* an exchange on fd is under way */
	uint32_t next_id;  /* the last request's id; under busy */
	struct cert_info cert;
	char iss[72];
	struct buf header; /* the protected header, base64url: the same for every token */
	pthread_mutex_t lock;
	struct cache_entry cache[IDENTITY_CACHE];
	unsigned next;     /* the entry replaced next when aud is not cached */
};

/* The string member key of object 0 into out; false when absent, not a
 * string, or too long. */
static bool member_str(const struct doc_json *j, const char *key, char *out, size_t cap)
{
	int t = doc_json_member(j, 0, key);
	return t >= 0 && doc_json_str(j, t, out, cap) >= 0;
}

static bool member_int(const struct doc_json *j, const char *key, int64_t *out)
{
	int t = doc_json_member(j, 0, key);
	return t >= 0 && doc_json_int(j, t, out) == 0;
}

/* Members of object 0 not among keys[]: the first one's index, or -1. */
static int unknown_member(const struct doc_json *j, const char *const *keys)
{
	for (int m = 1; m < (int)j->tok[0].end; m = (int)j->tok[m + 1].end) {
		bool known = false;
		for (size_t k = 0; keys[k] && !known; k++)
			known = doc_json_key_is(j, m, keys[k]);
		if (!known)
			return m;
	}
	return -1;
}

static void iss_of(const uint8_t authority[AUDIT_PUB_LEN], char out[72])
{
	char h[65];
	audit_sha256_hex(authority, AUDIT_PUB_LEN, h);
	snprintf(out, 72, "sha256:%s", h);
}

/* The certificate as airlock-audit-writer writes it (writer.c session_start). */
static int cert_read(const char *text, size_t len, struct cert_info *ci, struct error *err)
{
	static const char *const keys[] = { "agent", "session", "boundary", "policy_sha256", "host", "not_before",
					    "not_after", "session_key", "authority", NULL };
	struct doc_json_tok tok[CERT_TOKENS];
	struct doc_json j;
	char hex[2 * AUDIT_PUB_LEN + 1];
	if (len > IDENTITY_CERT_MAX)
		return error_set(err, EINVAL, "the certificate is longer than %d bytes", IDENTITY_CERT_MAX);
	if (doc_json_parse(&j, text, len, tok, CERT_TOKENS, 1) < 0 || tok[0].type != DOC_JSON_OBJECT)
		return error_set(err, EINVAL, "the certificate is not a JSON object");
	if (unknown_member(&j, keys) >= 0)
		return error_set(err, EINVAL, "the certificate has a member a session certificate does not have");
	if (!member_str(&j, "agent", ci->agent, sizeof(ci->agent)) ||
	    !member_str(&j, "session", ci->session, sizeof(ci->session)) ||
	    !member_str(&j, "boundary", ci->boundary, sizeof(ci->boundary)) ||
	    !member_str(&j, "policy_sha256", ci->policy, sizeof(ci->policy)) ||
	    !member_str(&j, "host", ci->host, sizeof(ci->host)))
		return error_set(err, EINVAL,
				 "the certificate lacks agent, session, boundary, policy_sha256 or host, or one is too long");
	if (!member_int(&j, "not_before", &ci->not_before) || !member_int(&j, "not_after", &ci->not_after))
		return error_set(err, EINVAL, "the certificate lacks not_before or not_after");
	if (!member_str(&j, "session_key", hex, sizeof(hex)) ||
	    !hex_decode(hex, strlen(hex), ci->session_key, AUDIT_PUB_LEN) ||
	    !member_str(&j, "authority", hex, sizeof(hex)) || !hex_decode(hex, strlen(hex), ci->authority, AUDIT_PUB_LEN))
		return error_set(err, EINVAL, "the certificate's session_key or authority is not 64 hex digits");
	/* Printed and compared as text: a UUID's characters only. */
	if (strlen(ci->session) != 36 || strspn(ci->session, "0123456789abcdef-") != 36)
		return error_set(err, EINVAL, "the certificate's session is not a UUID");
	return 0;
}

/* ---- signing ---- */

/* The channel to the writer carries one exchange at a time: s->busy is
 * taken by a fiber that then waits for its answer, and a fiber that finds
 * it taken sleeps (giving its worker to the others) and tries again.
 * WARNING: not a pthread mutex, which a fiber waiting here would hold
 * while its worker's other fibers block on it (util/fiber.h). The rate is
 * low: one signature per destination every half lifetime. */
static int channel_take(struct identity_signer *s, int64_t deadline)
{
	while (atomic_exchange(&s->busy, true)) {
		if (clock_mono_ns() >= deadline)
			return -ETIMEDOUT;
		fiber_sleep(1);
	}
	return 0;
}

static void channel_release(struct identity_signer *s)
{
	atomic_store(&s->busy, false);
}

/* One exchange, the channel taken: the signing input out, the signature
 * back, checked. */
static int sign_remote(struct identity_signer *s, const char *msg, size_t len, int64_t deadline,
		       uint8_t sig[AUDIT_SIG_LEN])
{
	if (len > SIGNPROTO_INPUT_MAX)
		return -E2BIG;
	uint8_t *req = malloc(SIGNPROTO_HDR + len);
	if (!req)
		return -ENOMEM;
	uint32_t id = ++s->next_id;
	req[0] = SIGNPROTO_REQ_IDENTITY;
	memcpy(req + 1, &id, 4);
	memcpy(req + SIGNPROTO_HDR, msg, len);
	int r = -EAGAIN;
	while (r == -EAGAIN) {
		int left = (int)((deadline - clock_mono_ns()) / 1000000);
		if (send(s->fd, req, SIGNPROTO_HDR + len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)(SIGNPROTO_HDR + len))
			r = 0;
		else if (errno != EAGAIN && errno != EINTR)
			r = -errno; /* the writer is gone: EPIPE, ECONNRESET */
		else if (left <= 0 || (errno == EAGAIN && fiber_wait(s->fd, POLLOUT, left) <= 0))
			r = -ETIMEDOUT;
	}
	free(req);
	uint8_t ans[SIGNPROTO_ANSWER_CAP + 1];
	while (r == 0) {
		int left = (int)((deadline - clock_mono_ns()) / 1000000);
		ssize_t n = recv(s->fd, ans, sizeof(ans), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (left <= 0 || (errno == EAGAIN && fiber_wait(s->fd, POLLIN, left) <= 0))
				r = -ETIMEDOUT;
			continue;
		}
		if (n <= 0) {
			r = n == 0 ? -EPIPE : -errno;
			break;
		}
		uint32_t got = 0;
		if (n >= SIGNPROTO_HDR)
			memcpy(&got, ans + 1, 4);
		if (n < SIGNPROTO_HDR || got != id)
			continue; /* the answer to an exchange that timed out */
		if (ans[0] == SIGNPROTO_ANS_SIG && n == SIGNPROTO_HDR + AUDIT_SIG_LEN)
			memcpy(sig, ans + SIGNPROTO_HDR, AUDIT_SIG_LEN);
		r = ans[0] == SIGNPROTO_ANS_SIG && n == SIGNPROTO_HDR + AUDIT_SIG_LEN ? 1 : -EPERM;
	}
	if (r < 0)
		return r;
	/* A writer that signed with another key would have the proxy send
	 * tokens no verifier accepts: refused here, where it shows. */
	return audit_sig_ok(s->cert.session_key, msg, len, sig) ? 0 : -EIO;
}

static int64_t deadline_from_now(void)
{
	return clock_mono_ns() + (int64_t)SIGNPROTO_TIMEOUT_MS * 1000000;
}

int identity_signer_new(int sign_fd, const char *cert, size_t cert_len, const char *cert_sig_hex,
			struct identity_signer **out, struct error *err)
{
	uint8_t sig[AUDIT_SIG_LEN];
	struct cert_info ci;
	int r = cert_read(cert, cert_len, &ci, err);
	if (r < 0)
		return r;
	if (!hex_decode(cert_sig_hex, strlen(cert_sig_hex), sig, sizeof(sig)) ||
	    !audit_sig_ok(ci.authority, cert, cert_len, sig))
		return error_set(err, EINVAL, "the session certificate's signature does not verify");
	struct identity_signer *s = calloc(1, sizeof(*s));
	if (!s)
		return error_set(err, ENOMEM, "out of memory");
	s->cert = ci;
	iss_of(ci.authority, s->iss);
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->busy, false);
	s->fd = -1;
	r = signproto_header(ci.session, cert, cert_len, cert_sig_hex, &s->header);
	if (r < 0) {
		identity_signer_free(s);
		return error_set(err, ENOMEM, "out of memory");
	}
	s->fd = sign_fd;
	*out = s;
	return 0;
}

void identity_signer_free(struct identity_signer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < IDENTITY_CACHE; i++)
		buf_free(&s->cache[i].token);
	buf_free(&s->header);
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* identity_token_sign with the channel taken. */
static int token_sign(struct identity_signer *s, const char *aud, int64_t now, int64_t deadline, struct buf *out)
{
	uint8_t rnd[16], sig[AUDIT_SIG_LEN];
	char jti[33];
	int64_t exp = now + IDENTITY_LIFETIME, last = s->cert.not_after / 1000;
	if (strlen(aud) > IDENTITY_AUD_MAX)
		return -ENAMETOOLONG;
	/* The certificate's times are in milliseconds, now in seconds: the
	 * first request can come within the second the certificate was
	 * made, which the skew covers (as it does for verifiers). */
	if (now >= last || now * 1000 < s->cert.not_before - IDENTITY_SKEW * 1000)
		return -EKEYEXPIRED; /* the certificate does not cover now */
	if (exp > last)
		exp = last;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	hex_encode(rnd, sizeof(rnd), jti);
	struct buf claims = { 0 };
	size_t start = out->len;
	int r = buf_printf(&claims, "{\"iss\":\"%s\",\"sub\":", s->iss) ?:
		buf_json_string(&claims, s->cert.agent, strlen(s->cert.agent)) ?:
		buf_printf(&claims, ",\"sid\":\"%s\",\"aud\":", s->cert.session) ?:
		buf_json_string(&claims, aud, strlen(aud)) ?:
		buf_printf(&claims, ",\"iat\":%" PRId64 ",\"exp\":%" PRId64 ",\"jti\":\"%s\",\"policy_sha256\":",
			   now, exp, jti) ?:
		buf_json_string(&claims, s->cert.policy, strlen(s->cert.policy)) ?: buf_puts(&claims, ",\"boundary\":") ?:
		buf_json_string(&claims, s->cert.boundary, strlen(s->cert.boundary)) ?: buf_puts(&claims, "}") ?:
		buf_append(out, s->header.data, s->header.len) ?: buf_puts(out, ".") ?:
		base64url_encode((const uint8_t *)claims.data, claims.len, out);
	buf_free(&claims);
	if (r == 0)
		r = sign_remote(s, out->data + start, out->len - start, deadline, sig);
	if (r == 0)
		r = buf_puts(out, ".") ?: base64url_encode(sig, sizeof(sig), out);
	if (r < 0) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return r;
}

int identity_token_sign(struct identity_signer *s, const char *aud, int64_t now, struct buf *out)
{
	int64_t deadline = deadline_from_now();
	int r = channel_take(s, deadline);
	if (r < 0)
		return r;
	r = token_sign(s, aud, now, deadline, out);
	channel_release(s);
	return r;
}

/* The cache's entry for aud, or NULL; under s->lock. */
static struct cache_entry *cached(struct identity_signer *s, const char *aud)
{
	for (size_t i = 0; i < IDENTITY_CACHE; i++)
		if (s->cache[i].token.len && strcmp(s->cache[i].aud, aud) == 0)
			return &s->cache[i];
	return NULL;
}

/* The cached token for aud when it is fresh at now: appended to out, and
 * true with *r the result. */
static bool from_cache(struct identity_signer *s, const char *aud, int64_t now, struct buf *out, int *r)
{
	pthread_mutex_lock(&s->lock);
	struct cache_entry *e = cached(s, aud);
	/* Re-signed after half its lifetime, and when the clock went back. */
	bool fresh = e && now >= e->iat && now - e->iat < IDENTITY_LIFETIME / 2;
	if (fresh)
		*r = buf_append(out, e->token.data, e->token.len);
	pthread_mutex_unlock(&s->lock);
	return fresh;
}

int identity_token_get(struct identity_signer *s, const char *aud, int64_t now, struct buf *out)
{
	int r = 0;
	if (from_cache(s, aud, now, out, &r))
		return r;
	/* WARNING: s->lock is not held while the writer signs (a fiber
	 * waits for it; util/fiber.h). The channel is: and once a fiber has
	 * it, the cache is read again, so that the connections that all
	 * found no token at once (a client's first burst) share the one
	 * their first fiber had signed rather than each ask for another. */
	int64_t deadline = deadline_from_now();
	if ((r = channel_take(s, deadline)) < 0)
		return r;
	if (from_cache(s, aud, now, out, &r)) {
		channel_release(s);
		return r;
	}
	struct buf token = { 0 };
	r = token_sign(s, aud, now, deadline, &token);
	channel_release(s);
	if (r == 0)
		r = buf_append(out, token.data, token.len);
	if (r < 0) {
		buf_free(&token);
		return r;
	}
	pthread_mutex_lock(&s->lock);
	struct cache_entry *e = cached(s, aud);
	if (!e) {
		e = &s->cache[s->next];
		s->next = (s->next + 1) % IDENTITY_CACHE;
	}
	buf_free(&e->token);
	e->token = token;
	snprintf(e->aud, sizeof(e->aud), "%s", aud);
	e->iat = now;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int identity_audience(const char *scheme, const char *host, uint16_t port, char out[IDENTITY_AUD_MAX + 1])
{
	bool dflt = (strcmp(scheme, "http") == 0 && port == 80) || (strcmp(scheme, "https") == 0 && port == 443);
	bool v6 = strchr(host, ':') != NULL;
	char p[8] = "";
	if (!dflt)
		snprintf(p, sizeof(p), ":%u", port);
	int n = snprintf(out, IDENTITY_AUD_MAX + 1, "%s://%s%s%s%s", scheme, v6 ? "[" : "", host, v6 ? "]" : "", p);
	return n < 0 || n > IDENTITY_AUD_MAX ? -ENAMETOOLONG : 0;
}

/* ---- verifying ---- */

struct verify_buffers {
	uint8_t header[HEADER_MAX];
	uint8_t claims[CLAIMS_MAX];
	char cert[IDENTITY_CERT_MAX + 1];
	struct doc_json_tok htok[HEADER_TOKENS], ctok[CLAIMS_TOKENS];
};

/* Whether string member key of object 0 is exactly want (after
 * unescaping). */
static bool member_is(const struct doc_json *j, const char *key, const char *want)
{
	int t = doc_json_member(j, 0, key);
	return t >= 0 && j->tok[t].type == DOC_JSON_STRING && doc_json_key_is(j, t, want);
}

static int verify(const char *token, size_t len, const uint8_t *authority, const char *audience, int64_t now,
		  struct identity_claims *c, struct verify_buffers *b, struct error *err)
{
	static const char *const header_keys[] = { "alg", "typ", "kid", "airlock_cert", "airlock_cert_sig", NULL };
	static const char *const claim_keys[] = { "iss", "sub", "sid", "aud", "iat", "exp", "jti", "policy_sha256",
						  "boundary", NULL };
	memset(c, 0, sizeof(*c));
	if (len == 0)
		return error_set(err, EINVAL, "the token is empty");
	if (len > IDENTITY_TOKEN_MAX)
		return error_set(err, EINVAL, "the token is longer than %d characters", IDENTITY_TOKEN_MAX);
	const char *dot1 = memchr(token, '.', len);
	const char *dot2 = dot1 ? memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token)) : NULL;
	if (!dot2 || memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)))
		return error_set(err, EINVAL, "not a compact JWS: it must be three base64url parts joined by dots");
	size_t hlen = (size_t)(dot1 - token), plen = (size_t)(dot2 - dot1 - 1), slen = len - (size_t)(dot2 + 1 - token);

	/* The protected header and the certificate it carries. */
	ssize_t hn = base64url_decode(token, hlen, b->header, sizeof(b->header));
	if (hn <= 0)
		return error_set(err, EINVAL, "the protected header is not %s",
				 hn == -ENOSPC ? "of a size a token has" : "base64url");
	struct doc_json h, p;
	if (doc_json_parse(&h, (const char *)b->header, (size_t)hn, b->htok, HEADER_TOKENS, 1) < 0 ||
	    b->htok[0].type != DOC_JSON_OBJECT)
		return error_set(err, EINVAL, "the protected header is not a JSON object");
	int bad = unknown_member(&h, header_keys);
	if (bad >= 0)
		return error_set(err, EINVAL, "the protected header has a member no airlock token has");
	if (!member_is(&h, "alg", "EdDSA"))
		return error_set(err, EINVAL, "the protected header's alg is not EdDSA");
	if (!member_is(&h, "typ", IDENTITY_TYP))
		return error_set(err, EINVAL, "the protected header's typ is not " IDENTITY_TYP);
	int ct = doc_json_member(&h, 0, "airlock_cert");
	char sighex[2 * AUDIT_SIG_LEN + 1];
	uint8_t csig[AUDIT_SIG_LEN];
	int clen = ct >= 0 ? doc_json_str(&h, ct, b->cert, sizeof(b->cert)) : -EINVAL;
	if (clen < 0)
		return error_set(err, EINVAL, "the protected header has no airlock_cert, or a longer one than %d bytes",
				 IDENTITY_CERT_MAX);
	if (!member_str(&h, "airlock_cert_sig", sighex, sizeof(sighex)) ||
	    !hex_decode(sighex, strlen(sighex), csig, sizeof(csig)))
		return error_set(err, EINVAL, "the protected header's airlock_cert_sig is not 128 hex digits");
	struct cert_info ci;
	int r = cert_read(b->cert, (size_t)clen, &ci, err);
	if (r < 0)
		return error_prefix(err, "airlock_cert");
	char got[65];
	if (authority && memcmp(authority, ci.authority, AUDIT_PUB_LEN) != 0) {
		hex_encode(ci.authority, AUDIT_PUB_LEN, got);
		return error_set(err, EINVAL, "the certificate is signed by authority %s, not the one given", got);
	}
	if (!audit_sig_ok(ci.authority, b->cert, (size_t)clen, csig)) {
		hex_encode(ci.authority, AUDIT_PUB_LEN, got);
		return error_set(err, EINVAL, "bad certificate signature: it does not verify with authority %s", got);
	}
	if (!member_is(&h, "kid", ci.session))
		return error_set(err, EINVAL, "the protected header's kid is not the certificate's session");

	/* The JWS signature, over the first two parts as sent (RFC 7515
	 * section 5.2), by the certified session key. */
	uint8_t sig[AUDIT_SIG_LEN + 1];
	ssize_t sn = base64url_decode(dot2 + 1, slen, sig, sizeof(sig));
	if (sn != AUDIT_SIG_LEN)
		return error_set(err, EINVAL, "the signature is not 64 bytes of base64url");
	if (!audit_sig_ok(ci.session_key, token, (size_t)(dot2 - token), sig))
		return error_set(err, EINVAL, "bad token signature: it does not verify with the certified session key");

	/* The claims: signed, so anything wrong here was signed wrong. */
	ssize_t pn = base64url_decode(dot1 + 1, plen, b->claims, sizeof(b->claims));
	if (pn <= 0)
		return error_set(err, EINVAL, "the claims are not %s", pn == -ENOSPC ? "of a size a token has" : "base64url");
	if (doc_json_parse(&p, (const char *)b->claims, (size_t)pn, b->ctok, CLAIMS_TOKENS, 1) < 0 ||
	    b->ctok[0].type != DOC_JSON_OBJECT)
		return error_set(err, EINVAL, "the claims are not a JSON object");
	if (unknown_member(&p, claim_keys) >= 0)
		return error_set(err, EINVAL, "the claims hold one no airlock token has");
	char iss[72];
	iss_of(ci.authority, iss);
	if (!member_is(&p, "iss", iss))
		return error_set(err, EINVAL, "iss is not the fingerprint of the certificate's authority");
	if (!member_is(&p, "sub", ci.agent))
		return error_set(err, EINVAL, "sub is not the certificate's agent");
	if (!member_is(&p, "sid", ci.session))
		return error_set(err, EINVAL, "sid is not the certificate's session");
	if (!member_is(&p, "policy_sha256", ci.policy))
		return error_set(err, EINVAL, "policy_sha256 is not the certificate's");
	if (!member_is(&p, "boundary", ci.boundary))
		return error_set(err, EINVAL, "boundary is not the certificate's");
	if (!member_str(&p, "aud", c->aud, sizeof(c->aud)) || !c->aud[0])
		return error_set(err, EINVAL, "aud is missing, or longer than %d bytes", IDENTITY_AUD_MAX);
	if (!member_str(&p, "jti", c->jti, sizeof(c->jti)) || !c->jti[0])
		return error_set(err, EINVAL, "jti is missing, or longer than 64 bytes");
	if (!member_int(&p, "iat", &c->iat) || !member_int(&p, "exp", &c->exp))
		return error_set(err, EINVAL, "iat or exp is missing or not an integer");

	/* Time. */
	if (c->exp <= c->iat || c->exp - c->iat > IDENTITY_MAX_LIFETIME)
		return error_set(err, EINVAL, "exp %" PRId64 " is not within %d s after iat %" PRId64, c->exp,
				 IDENTITY_MAX_LIFETIME, c->iat);
	if (now >= c->exp)
		return error_set(err, EINVAL, "the token expired at %" PRId64 " (now %" PRId64 ")", c->exp, now);
	if (c->iat > now + IDENTITY_SKEW)
		return error_set(err, EINVAL, "the token is issued at %" PRId64 ", in the future (now %" PRId64 ")",
				 c->iat, now);
	if (now > INT64_MAX / 1000 || now < 0 || now * 1000 < ci.not_before - IDENTITY_SKEW * 1000 ||
	    now * 1000 >= ci.not_after)
		return error_set(err, EINVAL,
				 "the certificate is not valid at %" PRId64 " (valid from %" PRId64 " to %" PRId64 " ms)",
				 now, ci.not_before, ci.not_after);
	if (c->iat * 1000 < ci.not_before - IDENTITY_SKEW * 1000 || c->exp > ci.not_after / 1000)
		return error_set(err, EINVAL, "the token's validity is outside its certificate's");
	if (audience && strcmp(audience, c->aud) != 0)
		return error_set(err, EINVAL, "the token is for audience %.*s, not %.*s", 100, c->aud, 100, audience);

	memcpy(c->agent, ci.agent, sizeof(c->agent));
	memcpy(c->session, ci.session, sizeof(c->session));
	memcpy(c->policy_sha256, ci.policy, sizeof(c->policy_sha256));
	memcpy(c->boundary, ci.boundary, sizeof(c->boundary));
	memcpy(c->host, ci.host, sizeof(c->host));
	memcpy(c->authority, ci.authority, sizeof(c->authority));
	c->not_before = ci.not_before;
	c->not_after = ci.not_after;
	c->anchored = authority != NULL;
	return 0;
}

int identity_token_verify(const char *token, size_t len, const uint8_t *authority, const char *audience, int64_t now,
			  struct identity_claims *c, struct error *err)
{
	/* About 20 KiB: on the heap, the proxy's threads have small stacks
	 * and a verifier may be embedded anywhere. */
	struct verify_buffers *b = malloc(sizeof(*b));
	if (!b)
		return error_set(err, ENOMEM, "out of memory");
	int r = verify(token, len, authority, audience, now, c, b, err);
	free(b);
	if (r < 0)
		memset(c, 0, sizeof(*c));
	return r;
}
