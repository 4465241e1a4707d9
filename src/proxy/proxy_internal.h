/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_PROXY_INTERNAL_H
#define AIRLOCK_NET_PROXY_INTERNAL_H

/*
 * What the egress proxy's files share (proxy.c says how the process
 * works): a connection, a record, and the few calls from one file to
 * another. Everything here is hidden: inside the proxy, not interposable,
 * and direct calls. The per-request path keeps its helpers static in
 * proxy_request.c, or inline here, so that splitting the proxy into files
 * costs it no call it did not make before.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "proxy/proxy.h"
#include "net/addr.h"
#include "net/dns.h"
#include "net/http.h"
#include "proxy/mcp_http.h"
#include "net/netpolicy.h"
#include "net/respscan.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/fiber.h"

#define RELAY_CHUNK 65536
#define RELAY_PIPE (1 << 20)
#define MAX_ADDRS 16
#define WS_ACCEPT_LEN 28 /* base64 of a SHA-1 */

#pragma GCC visibility push(hidden)

/* Set once by proxy_main before the first connection, read-only after. */
extern const struct proxy_config *proxy_cfg;
extern SSL_CTX *proxy_upstream_ctx;
/* Request bodies the session may hold at once (proxy_body_budget). */
extern uint64_t proxy_body_budget_bytes;

struct conn {
	int cfd;
	SSL *cssl;               /* the agent's side, when a tunnel is intercepted */
	int ufd;                 /* upstream, reused across keep-alive requests */
	SSL *ussl;
	char uhost[HTTP_MAX_HOST + 1];
	uint16_t uport;
	struct buf in;           /* bytes from the agent not yet consumed */
	char thost[HTTP_MAX_HOST + 1]; /* the intercepted tunnel's host and port */
	uint16_t tport;
	const struct policy_endpoint *tep;
	time_t deadline;
	int answered; /* the status of the proxy's own last answer, until recorded */
	/* Transparent mode: the connection was redirected to us, and this
	 * is where the agent meant it to go (thost/tport hold it as a name
	 * when the address was one of our synthetic DNS answers). */
	bool redirected;
};

/* ---- records (proxy_record.c) ---- */

struct rec {
	const char *decision; /* allow | deny */
	const char *kind;     /* http | connect | tunnel-request | malformed */
	const char *method;
	const char *host;
	uint16_t port;
	const char *target;   /* path and query */
	size_t target_len;
	const char *rule;
	const char *credential; /* the credential's name (never its value) */
	const char *reason;
	int status;
	uint64_t up, down;
	bool observed; /* observe mode: denied by the policy, let through anyway */
};

/* One record line of at most PIPE_BUF bytes on its way to the supervisor
 * (proxy.c); false when it cannot be written. */
bool proxy_record_line(const char *line, size_t len, bool at_once);
void proxy_record(const struct rec *r);
bool proxy_let_through(struct rec *rec, char *store, size_t len, const char *kind, const char *rule,
		       const char *reason);
void proxy_answer(struct conn *c, int status, const char *what, const char *reason);

/* The record of a request the proxy answered itself carries that answer's
 * status: OCSF's HTTP Activity requires the response. */
static inline void record_for(struct conn *c, struct rec *r)
{
	if (!r->status && c->answered)
		r->status = c->answered;
	c->answered = 0;
	proxy_record(r);
}

/* ---- I/O on either side, plain or TLS (proxy_conn.c) ---- */

int proxy_ssl_handshake(SSL *ssl, int fd, int (*step)(SSL *));
ssize_t proxy_io_read(int fd, SSL *ssl, void *p, size_t n);
bool proxy_io_write(int fd, SSL *ssl, const void *p, size_t n);
ssize_t proxy_io_read_after_write(int fd, SSL *ssl, void *p, size_t n);
void proxy_local_congestion(int fd);

static inline ssize_t cread(struct conn *c, void *p, size_t n)
{
	return proxy_io_read(c->cfd, c->cssl, p, n);
}

static inline bool cwrite(struct conn *c, const void *p, size_t n)
{
	return proxy_io_write(c->cfd, c->cssl, p, n);
}

static inline void set_timeout(int fd, int seconds)
{
	fiber_io_timeout_set(fd, seconds * 1000);
}

/* ---- upstream and relays (proxy_conn.c) ---- */

bool proxy_upstream_tls_start(struct conn *c, const char *host, uint16_t port, char *reason, size_t len);
int proxy_upstream_connect(const char *host, bool is_ip, const struct net_addr *ip, uint16_t port,
			   struct net_decision *d, char *reason, size_t reason_len, struct net_decision *would);
void proxy_relay(struct conn *c, uint64_t *up, uint64_t *down);
void proxy_splice_relay(int a, int b, uint64_t *ab, uint64_t *ba);

static inline void upstream_close(struct conn *c)
{
	if (c->ussl) {
		SSL_free(c->ussl);
		c->ussl = NULL;
	}
	if (c->ufd >= 0)
		fiber_fd_close(c->ufd);
	c->ufd = -1;
	c->uhost[0] = '\0';
	c->uport = 0;
}

/* ---- requests (proxy_request.c) and tunnels (proxy_tunnel.c) ---- */

/* The request loop of a connection: plain, redirected, or inside an
 * intercepted tunnel. */
void proxy_serve_requests(struct conn *c);
void proxy_open_tunnel(struct conn *c, const char *target_host, uint16_t port, bool announce);

#pragma GCC visibility pop

#endif
