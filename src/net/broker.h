/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_BROKER_H
#define AIRLOCK_NET_BROKER_H

/*
 * The credential broker, inside the egress proxy. The agent holds only
 * placeholders: random per-session strings with a recognisable prefix. A
 * placeholder is swapped for its secret only in a request a binding of
 * its credential allows, and only where that binding says (a header, the
 * basic-auth password, a query parameter); seen anywhere else it blocks
 * the request as credential misuse. A credential with `inject: always`
 * has no placeholder: the proxy adds the secret to the requests its
 * bindings match. Git bindings decide smart-HTTP operations down to the
 * refs a push updates.
 *
 * Pure functions of the policy, the secrets and the request: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/dlp.h"
#include "net/http.h"
#include "policy/policy.h"
#include "util/buf.h"

#define BROKER_PREFIX "airlock_ph_"
#define BROKER_PREFIX_LEN 11
#define BROKER_PLACEHOLDER_LEN (BROKER_PREFIX_LEN + 40) /* 160 random bits, lower-case hex */
#define BROKER_MAX_SECRET 16384
/* Shorter secrets could not be told apart from ordinary bytes in what
 * comes back from a bound endpoint (broker_bound). */
#define BROKER_MIN_SECRET 8
#define BROKER_MAX_CREDENTIALS 64

struct broker_cred {
	const struct policy_credential *pol;          /* borrowed from the policy */
	char placeholder[BROKER_PLACEHOLDER_LEN + 1]; /* "" when the credential has none */
	uint8_t *secret;                              /* owned; wiped by broker_free */
	size_t secret_len;
};

struct broker {
	struct broker_cred *v;
	size_t n;
	/* Every secret and its encodings, to scan what comes back from a
	 * bound endpoint: a server that echoes a request (an echo route, a
	 * debug or error page, TRACE) would hand the agent the secret. */
	struct dlp *echo;
};

/* One slot per credential of pol (borrowed; must outlive the broker), no
 * secrets yet. NULL when out of memory. */
struct broker *broker_new(const struct policy *pol);

/* Wipe every secret and free. NULL is fine. */
void broker_free(struct broker *b);

/* Set the placeholder and secret of the credential called name (both
 * copied). -ENOENT for an unknown name, -EINVAL for a placeholder of the
 * wrong form or a secret that is shorter than BROKER_MIN_SECRET, too long,
 * or holds bytes a header cannot carry (CR, LF, NUL). */
int broker_set(struct broker *b, const char *name, const char *placeholder, const uint8_t *secret,
	       size_t len);

/* Have all credentials got their secret? */
bool broker_complete(const struct broker *b);

/* A fresh placeholder: BROKER_PREFIX and 40 lower-case hex digits from
 * getrandom(2). */
int broker_make_placeholder(char out[BROKER_PLACEHOLDER_LEN + 1]);

/* The credential whose placeholder occurs in buf[0..len), or NULL. */
const struct broker_cred *broker_find(const struct broker *b, const char *buf, size_t len);

/* Does a binding of some credential name host:port (host canonical)?
 * Everything that comes back from such a place is scanned for the
 * secrets (respscan.h), whether or not this request carried one: a server
 * may keep what an earlier request carried and show it later. */
/* Add every credential's secret to d, named "credential:NAME": a scanner
 * of what a server sends the agent then withholds any of them. */
int broker_add_secrets(const struct broker *b, struct dlp *d) WUR;

bool broker_bound(const struct broker *b, const char *host, uint16_t port);

/* Is req a git push (git-receive-pack) to host:port that some git
 * binding covers? Such a request is decided from its first commands. */
bool broker_git_push(const struct broker *b, const char *host, uint16_t port, const struct http_request *req);

enum broker_verdict {
	BROKER_PASS = 0, /* no credential involved: send the request as it is */
	BROKER_INJECT,   /* req now carries a secret */
	BROKER_MISUSE,   /* a placeholder where no binding allows it: deny, record credential_misuse */
	BROKER_DENY,     /* a git operation the credential's binding refuses: deny */
};

struct broker_result {
	enum broker_verdict verdict;
	const char *credential; /* the credential's name (for records), or NULL */
	const char *binding;    /* the deciding binding's id, or NULL */
	char reason[384];       /* never holds a secret */
};

/* Apply the credentials to req, a request bound for host:port (host
 * canonical) whose body (framing included, as collected) is
 * body[0..body_len). On BROKER_INJECT the fields of req that changed
 * point into *side, which the caller owns, must keep until the upstream
 * head is built, and must release with buf_wipe (it holds the secret).
 * Returns 0, or a negative errno (out of memory, too many headers):
 * then the request must be refused. */
int broker_apply(const struct broker *b, const char *host, uint16_t port, struct http_request *req,
		 const char *body, size_t body_len, struct buf *side, struct broker_result *res);

#endif
