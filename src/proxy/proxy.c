/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy process.
 *
 * An event loop, one worker thread per core (util/fiber.h), and each
 * client connection a fiber on it: the request loop of a connection
 * (keep-alive, pipelining, a CONNECT tunnel, an intercepted TLS session)
 * reads as straight-line code, which is where a proxy's security bugs hide
 * otherwise, and only its waits go through the loop. A connection costs a
 * stack of what it touched and buffers only while a message is in flight;
 * the count is bounded and overload is answered with 503, never by
 * crashing.
 *
 * Order of checks for a request: parse strictly (http.c) -> host and port
 * against the endpoints -> method, path and query against the endpoint's
 * rules -> leak scan of target, headers and body -> resolve once -> every
 * resolved address against the SSRF rules -> connect to exactly the
 * address that was checked. A CONNECT tunnel that is not intercepted is
 * decided on host and port, and its ClientHello's SNI must name the same
 * host.
 */
#include "proxy/proxy.h"

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

static const struct proxy_config *cfg;
static SSL_CTX *upstream_ctx;
static atomic_int active;
/* The CA's leaf cache is not thread-safe, and a context it returns lives
 * only until the next call: both the lookup and SSL_new happen under this. */
static pthread_mutex_t ca_lock = PTHREAD_MUTEX_INITIALIZER;
/* Request bodies held now, against the session's budget: without it an
 * agent under a small memory limit made the proxy, outside its cgroup,
 * hold PROXY_MAX_CONNECTIONS bodies of max_body each (hundreds of MB). */
static uint64_t body_budget;
static unsigned max_conns = PROXY_MAX_CONNECTIONS;
static _Atomic uint64_t body_held;

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

/* ---- records ---- */

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

/* The record as one JSON line, every free-text field cut to cap bytes. */
static int format_record(const struct rec *r, size_t cap, struct buf *b)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int e = buf_reserve(b, 384) ?: buf_printf(b, "{\"time\":%lld,\"decision\":\"%s\",\"kind\":\"%s\"",
			   (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, r->decision, r->kind);
	const struct {
		const char *key, *val;
		size_t len;
	} fields[] = {
		{ "method", r->method, r->method ? strlen(r->method) : 0 },
		{ "host", r->host, r->host ? strlen(r->host) : 0 },
		{ "path", r->target, r->target_len },
		{ "rule", r->rule, r->rule ? strlen(r->rule) : 0 },
		{ "credential", r->credential, r->credential ? strlen(r->credential) : 0 },
		{ "reason", r->reason, r->reason ? strlen(r->reason) : 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(fields) && !e; i++)
		if (fields[i].val)
			e = buf_puts(b, ",\"") ?: buf_puts(b, fields[i].key) ?: buf_puts(b, "\":")
				?: buf_json_string(b, fields[i].val, fields[i].len > cap ? cap : fields[i].len);
	if (!e && r->port)
		e = buf_printf(b, ",\"port\":%u", r->port);
	if (!e && r->status)
		e = buf_printf(b, ",\"status\":%d", r->status);
	/* Observe mode: whether a denial was enforced (a request that cannot
	 * be forwarded at all still is refused). */
	if (!e && cfg->observe && strcmp(r->decision, "deny") == 0)
		e = buf_puts(b, r->observed ? ",\"enforced\":false" : ",\"enforced\":true");
	return e ?: buf_printf(b, ",\"bytes_up\":%llu,\"bytes_down\":%llu}\n", (unsigned long long)r->up,
			       (unsigned long long)r->down);
}

/* ---- the records' way to the supervisor ---- */

/* Each worker gathers the records of its fibers and sends them when it has
 * no fiber left to run (records_idle, the loop's idle hook): one write(2)
 * for a turn of the loop instead of one a request. A batch stays within
 * PIPE_BUF, so that it is written whole and never interleaves with
 * another worker's; a connection's records keep their order. HTTP records
 * follow what they record (the answer is out), so a batch delays no
 * decision; the MCP gateway's go out at once, before the message they
 * decide passes (record_mcp_line). When the supervisor ends the session
 * (SIGTERM) every worker sends what it holds before the proxy exits
 * (on_term), and what comes after goes out at once. */
static __thread char pending[PIPE_BUF];
static __thread size_t pending_len;
static __thread bool in_worker, worker_stopped;
static atomic_bool stopping;
static atomic_uint workers_stopped;
static volatile sig_atomic_t loop_started;

static bool records_write(const char *p, size_t n)
{
	ssize_t w;
	do
		w = write(cfg->records_fd, p, n);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)n;
}

static bool records_send_pending(void)
{
	bool ok = !pending_len || records_write(pending, pending_len);
	pending_len = 0;
	return ok;
}

/* One record line of at most PIPE_BUF bytes on its way; false when it
 * cannot be written (the supervisor is gone). */
static bool record_line(const char *line, size_t len, bool at_once)
{
	if (len > PIPE_BUF)
		return false;
	if (!in_worker)
		return records_write(line, len); /* the DNS thread */
	if (at_once || atomic_load(&stopping) || pending_len + len > sizeof(pending)) {
		if (!records_send_pending())
			return false;
		if (at_once || atomic_load(&stopping))
			return records_write(line, len);
	}
	memcpy(pending + pending_len, line, len);
	pending_len += len;
	return true;
}

static void wipe_and_exit(int sig);

static void records_idle(void)
{
	if (!records_send_pending())
		_exit(1); /* the supervisor is gone: nothing may pass unrecorded */
	/* The session is ending: the last worker to have sent its records
	 * ends the proxy. */
	if (atomic_load(&stopping) && !worker_stopped) {
		worker_stopped = true;
		if (atomic_fetch_add(&workers_stopped, 1) + 1 == fiber_workers())
			wipe_and_exit(0);
	}
}

static void record(const struct rec *r)
{
	struct rec copy;
	char why[768];
	if (r->observed) {
		copy = *r;
		snprintf(why, sizeof(why), "%s; not enforced (observe mode)", r->reason ? r->reason : "denied");
		copy.reason = why;
		r = &copy;
	}
	/* One write(2) of at most PIPE_BUF bytes to a pipe is atomic: records
	 * from concurrent connections never interleave and no lock is held on
	 * the request path. Fields the agent controls can grow sixfold when
	 * escaped, so a record too long is cut shorter until it fits: bounded,
	 * and never dropped. */
	struct buf b = { 0 };
	for (size_t cap = 1024;; cap /= 4) {
		buf_reset(&b);
		if (format_record(r, cap, &b) < 0)
			_exit(1); /* out of memory: nothing may pass unrecorded */
		if (b.len <= PIPE_BUF)
			break;
	}
	if (!record_line(b.data, b.len, false))
		_exit(1); /* the supervisor is gone: nothing may pass unrecorded */
	buf_free(&b);
}

/* A record of the MCP gateway (mcp_http.c), already one line of at most
 * PIPE_BUF bytes: written at once, behind the worker's earlier ones, for
 * the gateway lets its message pass only once the record is out. */
static bool record_mcp_line(const char *line, size_t len)
{
	return record_line(line, len, true);
}

/* Observe mode: a denial the policy would make is recorded and the
 * request goes on as if it were allowed. The first is kept: it is the one
 * enforce mode would have refused on. Returns true when the caller goes
 * on, false when it must refuse (enforce and learn modes).
 * WARNING: letting through never means granting: a credential is never
 * injected where its bindings do not allow it (handle_request). */
static bool let_through(struct rec *rec, char *store, size_t len, const char *kind, const char *rule,
			const char *reason)
{
	if (!cfg->observe)
		return false;
	if (!rec->observed) {
		rec->observed = true;
		rec->decision = "deny";
		snprintf(store, len, "%s", reason ? reason : "denied");
		rec->reason = store;
		if (kind)
			rec->kind = kind;
		if (rule)
			rec->rule = rule;
	}
	return true;
}

/* ---- I/O on either side, plain or TLS ---- */

/* Every socket is non-blocking: a TLS call that wants the socket waits
 * for it in the fiber, within the fd's timeout. False: an error, or the
 * timeout. */
static bool ssl_wait(int fd, SSL *ssl, int r)
{
	int e = SSL_get_error(ssl, r);
	short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
	return ev && fiber_wait(fd, ev, fiber_io_timeout(fd)) > 0;
}

/* SSL_connect or SSL_accept to its end. The result is the last call's,
 * with OpenSSL's error queue as that call left it (fibers share the
 * thread's queue: it is cleared before each call and read before the
 * next wait). */
static int ssl_handshake(SSL *ssl, int fd, int (*step)(SSL *))
{
	for (;;) {
		ERR_clear_error();
		int r = step(ssl);
		if (r == 1 || !ssl_wait(fd, ssl, r))
			return r;
	}
}

static ssize_t io_read(int fd, SSL *ssl, void *p, size_t n)
{
	if (!ssl)
		return fiber_read(fd, p, n);
	for (;;) {
		ERR_clear_error();
		int r = SSL_read(ssl, p, (int)(n > INT32_MAX ? INT32_MAX : n));
		if (r > 0)
			return r;
		if (SSL_get_error(ssl, r) == SSL_ERROR_ZERO_RETURN)
			return 0;
		if (!ssl_wait(fd, ssl, r))
			return -1;
	}
}

static bool io_write(int fd, SSL *ssl, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w;
		if (ssl) {
			/* A write that waited is retried with the same bytes,
			 * as OpenSSL requires. */
			ERR_clear_error();
			int r = SSL_write(ssl, c, (int)(n > INT32_MAX ? INT32_MAX : n));
			if (r <= 0 && ssl_wait(fd, ssl, r))
				continue;
			w = r > 0 ? r : -1;
		} else {
			w = fiber_send(fd, c, n, MSG_NOSIGNAL);
		}
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

static ssize_t cread(struct conn *c, void *p, size_t n)
{
	return io_read(c->cfd, c->cssl, p, n);
}

/* The read that follows our own write on the same exchange: the answer to
 * a request just sent upstream, a keep-alive client's next request once
 * it has its answer. Those bytes are not there yet, and a read first
 * would only learn EAGAIN, for a system call of the few a request costs.
 * Plain sockets only: a TLS session may hold part of a record already. */
static ssize_t io_read_after_write(int fd, SSL *ssl, void *p, size_t n)
{
	if (!ssl && fiber_wait(fd, POLLIN, fiber_io_timeout(fd)) == 0) {
		errno = EAGAIN;
		return -1;
	}
	return io_read(fd, ssl, p, n);
}

static bool cwrite(struct conn *c, const void *p, size_t n)
{
	return io_write(c->cfd, c->cssl, p, n);
}

/* For a connection that never leaves this host. Congestion control has
 * nothing to do on loopback, and a pacing one (BBR, when it is the host's
 * default) spaces our sends out with timers and lets them arrive out of
 * order, which the receiver then takes for loss: a relay through two such
 * connections moved a third less than one. Reno does not pace, and every
 * user may choose it (it is always in tcp_allowed_congestion_control). */
static void local_congestion(int fd)
{
	static const char reno[] = "reno";
	(void)setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, reno, sizeof(reno) - 1);
}

static void set_timeout(int fd, int seconds)
{
	fiber_io_timeout_set(fd, seconds * 1000);
}

/* ---- answers of the proxy's own ---- */

static const char *status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* A plain-text answer that says what was refused and why, for the agent
 * (and the model behind it) to read. Always closes the connection: after a
 * refusal the stream position is not trusted. */
static void answer(struct conn *c, int status, const char *what, const char *reason)
{
	struct buf body = { 0 }, msg = { 0 };
	if (buf_printf(&body, "airlock: %s: %s\n", what, reason) == 0 &&
	    buf_printf(&msg,
		       "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
		       "Connection: close\r\nX-Airlock-Decision: deny\r\n\r\n%s",
		       status, status_text(status), body.len, body.data) == 0)
		(void)cwrite(c, msg.data, msg.len);
	buf_free(&body);
	buf_free(&msg);
	c->answered = status;
}

/* The record of a request the proxy answered itself carries that answer's
 * status: OCSF's HTTP Activity requires the response. */
static void record_for(struct conn *c, struct rec *r)
{
	if (!r->status && c->answered)
		r->status = c->answered;
	c->answered = 0;
	record(r);
}

/* ---- upstream ---- */

static void upstream_close(struct conn *c)
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

/* Resolve host (or take its address), check every address against the
 * SSRF rules, connect to the first that answers. The address connected to
 * is one that was checked: there is no second lookup to rebind. */
/* An idle upstream connection that is readable holds bytes no request
 * asked for (a response smuggled behind a bodiless one, arriving late) or
 * was closed by the server: either way it must not carry the next
 * request, whose answer would be those bytes. */
static bool upstream_stale(const struct conn *c)
{
	struct pollfd p = { .fd = c->ufd, .events = POLLIN };
	return poll(&p, 1, 0) != 0;
}

/* TLS to the server over c->ufd, verified for host; reason says why not. */
static bool upstream_tls_start(struct conn *c, const char *host, uint16_t port, char *reason, size_t len)
{
	struct error err = { 0 };
	c->ussl = SSL_new(upstream_ctx);
	if (c->ussl && tls_client_set_host(c->ussl, host, &err) == 0 && SSL_set_fd(c->ussl, c->ufd) &&
	    ssl_handshake(c->ussl, c->ufd, SSL_connect) == 1)
		return true;
	unsigned long e = ERR_peek_last_error();
	snprintf(reason, len, "TLS to %s:%u failed: %s", host, port,
		 err.msg[0] ? err.msg : e ? ERR_reason_error_string(e) : "handshake");
	ERR_clear_error();
	return false;
}

/* addr_resolve on a thread of its own: getaddrinfo has no form that
 * would not stop every connection of the loop while it waits. */
struct resolve_job {
	const struct policy_network *net;
	const char *host;
	struct net_addr *addrs;
	int n;
	struct error err;
};

static void resolve_job_run(void *arg)
{
	struct resolve_job *j = arg;
	j->n = addr_resolve(j->net, j->host, j->addrs, MAX_ADDRS, &j->err);
}

static int upstream_connect(const char *host, bool is_ip, const struct net_addr *ip, uint16_t port,
			    struct net_decision *d, char *reason, size_t reason_len, struct net_decision *would)
{
	would->reason[0] = '\0';
	const struct policy_network *net = &cfg->policy->network;
	struct net_addr addrs[MAX_ADDRS];
	int n;
	if (is_ip) {
		addrs[0] = *ip;
		n = 1;
	} else {
		struct resolve_job job = { .net = net, .host = host, .addrs = addrs };
		fiber_run_blocking(resolve_job_run, &job);
		n = job.n;
		if (n <= 0) {
			snprintf(reason, reason_len, "%s", job.err.msg[0] ? job.err.msg : "cannot resolve");
			return -EHOSTUNREACH;
		}
	}
	for (int i = 0; i < n; i++)
		if (!netpol_decide_address(net, &addrs[i], port, d)) {
			/* Observe mode: noted in would, connected anyway. */
			if (cfg->observe) {
				if (!would->reason[0])
					*would = *d;
				continue;
			}
			snprintf(reason, reason_len, "%s", d->reason);
			return -EACCES;
		}
	int last = ECONNREFUSED;
	for (int i = 0; i < n; i++) {
		struct sockaddr_storage ss = { 0 };
		socklen_t len;
		if (addrs[i].family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
			s4->sin_family = AF_INET;
			s4->sin_port = htons(port);
			memcpy(&s4->sin_addr, addrs[i].a, 4);
			len = sizeof(*s4);
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(port);
			memcpy(&s6->sin6_addr, addrs[i].a, 16);
			len = sizeof(*s6);
		}
		int fd = socket(addrs[i].family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			last = errno;
			continue;
		}
		fiber_fd_own(fd);
		if (addr_classify(&addrs[i]) == ADDR_LOOPBACK)
			local_congestion(fd);
		int cr = fiber_connect(fd, (struct sockaddr *)&ss, len, 30 * 1000);
		if (cr == 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			set_timeout(fd, PROXY_IDLE_SECONDS);
			return fd;
		}
		last = -cr;
		fiber_fd_close(fd);
	}
	snprintf(reason, reason_len, "cannot connect to %s:%u: %s", host, port, strerror(last));
	return -last;
}

/* ---- the budget of request bodies ---- */

uint64_t proxy_body_budget(const struct policy *pol)
{
	uint64_t max = pol->network.max_body; /* the parser sets its default */
	uint64_t b = pol->sandbox.limits.memory_bytes ? pol->sandbox.limits.memory_bytes : PROXY_BODY_BUDGET_DEFAULT;
	return b < max + PROXY_BODY_SLACK ? max + PROXY_BODY_SLACK : b;
}

unsigned proxy_max_connections(const struct policy *pol)
{
	uint64_t m = pol->sandbox.limits.memory_bytes;
	if (!m)
		return PROXY_MAX_CONNECTIONS;
	uint64_t n = m / PROXY_CONN_COST;
	return n < PROXY_MIN_CONNECTIONS ? PROXY_MIN_CONNECTIONS : n > PROXY_MAX_CONNECTIONS ? PROXY_MAX_CONNECTIONS : (unsigned)n;
}

/* Take n bytes of the budget for a body about to be held; false when the
 * budget has not that much left (the body is then refused, never held). */
static bool body_reserve(uint64_t n, uint64_t *charged)
{
	uint64_t held = atomic_load(&body_held);
	do
		if (n > body_budget - held)
			return false;
	while (!atomic_compare_exchange_weak(&body_held, &held, held + n));
	*charged += n;
	return true;
}

static void body_release(uint64_t *charged)
{
	/* Most requests hold no body: no write to the shared counter. */
	if (*charged)
		atomic_fetch_sub(&body_held, *charged);
	*charged = 0;
}

/* ---- reading a request head ---- */

/* Returns 1 with a parsed head, 0 on a clean EOF between requests, -1 after
 * answering an error (the connection must close). */
static int read_head(struct conn *c, struct http_request *req, bool after_answer)
{
	for (;;) {
		if (c->in.len) {
			int status = 400;
			struct error err = { 0 };
			int r = http_parse_request(c->in.data, c->in.len, req, &status, &err);
			if (r > 0)
				return 1;
			if (r < 0) {
				answer(c, status, "malformed request", err.msg);
				record(&(struct rec){ .decision = "deny", .kind = "malformed", .reason = err.msg,
						      .status = status });
				return -1;
			}
		}
		if (c->in.len >= HTTP_MAX_HEAD + 1) /* the parser says 431 first */
			return -1;
		if (time(NULL) > c->deadline)
			return -1;
		if (buf_reserve(&c->in, 16384) < 0)
			return -1;
		ssize_t n = after_answer && c->in.len == 0 ?
				    io_read_after_write(c->cfd, c->cssl, c->in.data + c->in.len, 16384) :
				    cread(c, c->in.data + c->in.len, 16384);
		if (n <= 0)
			return n == 0 && c->in.len == 0 ? 0 : -1;
		c->in.len += (size_t)n;
		c->in.data[c->in.len] = '\0';
	}
}

/* ---- relaying bodies ---- */

/* Ensure at least `want` bytes are buffered in c->in (or EOF). */
static bool fill(struct conn *c, size_t want)
{
	while (c->in.len < want) {
		if (buf_reserve(&c->in, 16384) < 0)
			return false;
		ssize_t n = cread(c, c->in.data + c->in.len, 16384);
		if (n <= 0)
			return false;
		c->in.len += (size_t)n;
	}
	return true;
}

/* Collect the request body (framing kept) into body, bounded by max.
 * Returns 1 ok, 0 too large, -1 I/O or framing error. */
/* The part of a request body left unread when only a prefix of it was
 * collected (a git push larger than max_body). */
struct body_rest {
	bool active;
	bool chunked;
	uint64_t remaining;     /* Content-Length bytes still to come */
	struct http_chunked ch; /* chunked framing, where the prefix stopped */
};

/* Collect the request body (framing kept) into body, bounded by max.
 * Returns 1 ok, 0 too large, -1 I/O or framing error, 3 a chunked body
 * with trailer fields, 4 over the session's body budget (what was held
 * is in *charged, for the caller to release). When rest is not NULL a
 * body over max is not refused: its first max bytes (or so) are
 * collected, the rest is described in *rest, and 2 is returned. */
static int collect_body(struct conn *c, const struct http_request *req, uint64_t max, struct buf *body,
			struct body_rest *rest, uint64_t *charged)
{
	if (req->body == HTTP_BODY_LENGTH) {
		uint64_t take = req->content_length;
		if (take > max) {
			if (!rest)
				return 0;
			take = max;
			*rest = (struct body_rest){ .active = true, .remaining = req->content_length - max };
		}
		/* Charged before a byte is read: the declared length is what
		 * would be held. */
		if (!body_reserve(take, charged))
			return 4;
		/* Read straight into body: through c->in the body would be
		 * held twice. */
		size_t have = c->in.len < take ? c->in.len : (size_t)take;
		if (buf_append(body, c->in.data, have) < 0 || buf_reserve(body, (size_t)take - have) < 0)
			return -1;
		buf_consume(&c->in, have);
		while (body->len < take) {
			ssize_t n = cread(c, body->data + body->len, (size_t)take - body->len);
			if (n <= 0)
				return -1;
			body->len += (size_t)n;
		}
		body->data[body->len] = '\0';
		return rest && rest->active ? 2 : 1;
	}
	if (req->body != HTTP_BODY_CHUNKED)
		return 1;
	struct http_chunked ch = { 0 };
	for (;;) {
		if (c->in.len == 0 && !fill(c, 1))
			return -1;
		size_t used = 0;
		int r = http_chunked_feed(&ch, c->in.data, c->in.len, &used);
		if (r < 0)
			return -1;
		bool over = body->len + used > max + 65536;
		if (over && !rest)
			return 0;
		/* Trailer fields are headers that arrive after the body:
		 * Airlock-Identity, Host, Content-Length, hop-by-hop fields
		 * and forged credentials would reach the upstream past every
		 * header rule. No request needs them: refused. */
		if (ch.trailers)
			return 3;
		/* Twice: the scanner decodes a copy without the framing. */
		if (!body_reserve(2 * (uint64_t)used, charged))
			return 4;
		if (buf_append(body, c->in.data, used) < 0)
			return -1;
		buf_consume(&c->in, used);
		if (r == 1)
			return 1;
		if (over) {
			*rest = (struct body_rest){ .active = true, .chunked = true, .ch = ch };
			return 2;
		}
		if (c->in.len == 0 && !fill(c, 1))
			return -1;
	}
}

/* Send the rest of a body upstream as it arrives, framing and all.
 * Returns 1 when it was sent, 2 when the upstream answered first (the
 * rest is not sent: the answer goes to the agent, and neither
 * connection carries another request), 0 on an error. */
static int forward_rest(struct conn *c, struct body_rest *rest, uint64_t *up)
{
	for (;;) {
		if (!rest->chunked && rest->remaining == 0)
			return 1;
		if (upstream_stale(c) || (c->ussl && SSL_pending(c->ussl) > 0))
			return 2;
		if (c->in.len == 0 && !fill(c, 1))
			return 0;
		size_t used;
		int r = 0;
		if (rest->chunked) {
			r = http_chunked_feed(&rest->ch, c->in.data, c->in.len, &used);
			/* Trailers on a streamed body: the upstream never gets
			 * the end of it (see collect_body). */
			if (r < 0 || rest->ch.trailers)
				return 0;
		} else {
			used = c->in.len < rest->remaining ? c->in.len : (size_t)rest->remaining;
			rest->remaining -= used;
		}
		if (used && !io_write(c->ufd, c->ussl, c->in.data, used))
			return 0;
		*up += used;
		buf_consume(&c->in, used);
		if (r == 1)
			return 1;
	}
}

/* Relay bytes both ways until either side closes or goes idle (an
 * upgraded WebSocket, plain or inside an intercepted tunnel). */
static void relay(struct conn *c, uint64_t *up, uint64_t *down)
{
	char *b = malloc(RELAY_CHUNK);
	if (!b)
		return;
	/* Bytes the agent sent ahead of the switch belong upstream. */
	if (c->in.len) {
		if (!io_write(c->ufd, c->ussl, c->in.data, c->in.len))
			goto out;
		*up += c->in.len;
		buf_reset(&c->in);
	}
	for (;;) {
		/* TLS may hold decrypted bytes that poll() cannot see. */
		bool cp = c->cssl && SSL_pending(c->cssl) > 0;
		bool up_p = c->ussl && SSL_pending(c->ussl) > 0;
		struct pollfd p[2] = { { .fd = c->cfd, .events = POLLIN }, { .fd = c->ufd, .events = POLLIN } };
		if (!cp && !up_p && fiber_poll(p, 2, PROXY_IDLE_SECONDS * 1000) <= 0)
			break;
		if (time(NULL) > c->deadline)
			break;
		if (cp || (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = io_read(c->cfd, c->cssl, b, RELAY_CHUNK);
			if (n <= 0 || !io_write(c->ufd, c->ussl, b, (size_t)n))
				break;
			*up += (uint64_t)n;
		}
		if (up_p || (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = io_read(c->ufd, c->ussl, b, RELAY_CHUNK);
			if (n <= 0 || !cwrite(c, b, (size_t)n))
				break;
			*down += (uint64_t)n;
		}
	}
out:
	free(b);
}

/* One direction of a plain tunnel: a socket, the pipe its bytes wait in,
 * the socket they go to. What each socket may do without waiting is
 * known from the last call on it: a splice that said EAGAIN clears it,
 * a poll that says so sets it again. */
struct leg {
	int from, to, pipe[2];
	size_t held, cap; /* bytes in the pipe, and what it holds at most */
	bool readable, eof, shut;
	bool full; /* EAGAIN with bytes held: the pipe's slots may be used up */
	uint64_t *moved;
};

/* Bytes into the pipe and on out of it. False: the tunnel failed. */
static bool leg_turn(struct leg *l, bool *writable_to, bool *progress)
{
	if (l->readable && !l->eof && !l->full && l->held < l->cap) {
		ssize_t n = splice(l->from, NULL, l->pipe[1], NULL, l->cap - l->held, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			l->held += (size_t)n;
			*progress = true;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			l->eof = true;
			*progress = true;
		} else if (errno == EAGAIN) {
			/* The socket is empty or the pipe full: a pipe's slots
			 * can run out before its bytes do. Waiting for the socket
			 * while the pipe is full would spin on a socket that is
			 * readable all along, so with bytes held it waits for
			 * them to leave first. */
			l->readable = false;
			l->full = l->held > 0;
		}
	}
	if (l->held && *writable_to) {
		ssize_t n = splice(l->pipe[0], NULL, l->to, NULL, l->held, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			l->held -= (size_t)n;
			*l->moved += (uint64_t)n;
			l->full = false;
			l->readable = true;
			*progress = true;
		} else if (n < 0 && errno == EAGAIN) {
			*writable_to = false;
		} else if (n < 0 && errno != EINTR) {
			return false;
		}
	}
	if (l->eof && !l->held && !l->shut) {
		shutdown(l->to, SHUT_WR);
		l->shut = true;
	}
	return true;
}

static short leg_wants(const struct leg *l, bool readable_from, const struct leg *back, bool writable)
{
	short ev = 0;
	if (!readable_from && !l->eof && !l->full && l->held < l->cap)
		ev |= POLLIN;
	if (back->held && !writable)
		ev |= POLLOUT;
	return ev;
}

/* A plain tunnel: splice through a pipe each way, no copy to user space.
 * A wait comes only when neither way moved: a bulk transfer runs on the
 * splices alone, giving the worker's other fibers their turn every few
 * rounds. */
static void splice_relay(int a, int b, uint64_t *ab, uint64_t *ba)
{
	struct leg up = { .from = a, .to = b, .moved = ab, .readable = true, .pipe = { -1, -1 } };
	struct leg down = { .from = b, .to = a, .moved = ba, .readable = true, .pipe = { -1, -1 } };
	if (pipe2(up.pipe, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(down.pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		goto out;
	/* Larger pipes mean fewer trips round the loop for bulk tunnels; the
	 * size the kernel granted is the bound (pipe-max-size may refuse). */
	struct leg *legs[2] = { &up, &down };
	for (int i = 0; i < 2; i++) {
		fcntl(legs[i]->pipe[0], F_SETPIPE_SZ, RELAY_PIPE);
		int sz = fcntl(legs[i]->pipe[0], F_GETPIPE_SZ);
		legs[i]->cap = sz > 0 ? (size_t)sz : 65536;
	}
	fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
	fcntl(b, F_SETFL, fcntl(b, F_GETFL) | O_NONBLOCK);
	bool a_out = true, b_out = true;
	for (unsigned turns = 1;; turns++) {
		if (up.eof && !up.held && down.eof && !down.held)
			break;
		if ((up.eof && !up.held && !down.held) || (down.eof && !down.held && !up.held))
			break; /* one side is done and nothing is left for the other */
		bool progress = false;
		if (!leg_turn(&up, &b_out, &progress) || !leg_turn(&down, &a_out, &progress))
			break;
		if (progress) {
			if (turns % 16 == 0)
				fiber_yield();
			continue;
		}
		struct pollfd p[2] = { { .fd = a, .events = leg_wants(&up, up.readable, &down, a_out) },
				       { .fd = b, .events = leg_wants(&down, down.readable, &up, b_out) } };
		if (fiber_poll(p, 2, PROXY_IDLE_SECONDS * 1000) <= 0)
			break;
		const short gone = POLLHUP | POLLERR;
		up.readable |= (p[0].revents & (POLLIN | gone)) != 0;
		a_out |= (p[0].revents & (POLLOUT | gone)) != 0;
		down.readable |= (p[1].revents & (POLLIN | gone)) != 0;
		b_out |= (p[1].revents & (POLLOUT | gone)) != 0;
	}
out:
	for (int i = 0; i < 2; i++) {
		if (up.pipe[i] >= 0)
			close(up.pipe[i]);
		if (down.pipe[i] >= 0)
			close(down.pipe[i]);
	}
}

/* One splice of a body, waiting in the fiber for the socket (fd, for
 * events) within its timeout. */
static ssize_t splice_wait(int in, int out, size_t n, int fd, short events)
{
	ssize_t r;
	while ((r = splice(in, NULL, out, NULL, n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK)) < 0 && fiber_again(fd, events))
		;
	return r;
}

/* Move up to len bytes from a socket to another through a pipe, within
 * the sockets' timeouts. Returns the bytes moved. */
static uint64_t splice_body(int from, int to, uint64_t len, uint64_t *count)
{
	int p[2];
	uint64_t moved = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return 0;
	fcntl(p[0], F_SETPIPE_SZ, RELAY_PIPE);
	while (moved < len) {
		size_t want = len - moved > RELAY_PIPE ? RELAY_PIPE : (size_t)(len - moved);
		/* The pipe is empty here: only the socket can make either
		 * call wait. */
		ssize_t in = splice_wait(from, p[1], want, from, POLLIN);
		if (in <= 0)
			break;
		for (ssize_t out = 0; out < in;) {
			ssize_t n = splice_wait(p[0], to, (size_t)(in - out), to, POLLOUT);
			if (n <= 0)
				goto out;
			out += n;
		}
		moved += (uint64_t)in;
		*count += (uint64_t)in;
	}
out:
	close(p[0]);
	close(p[1]);
	return moved;
}

/* ---- one HTTP request (forward proxy, or inside an intercepted tunnel) ---- */

/* The first coding other than identity (or, in Transfer-Encoding,
 * chunked) of a request, as "Field coding" in name, or false. The
 * scanner reads only identity: any coding hides the body from it
 * ("identity, gzip" stacked, a second Content-Encoding field after an
 * "identity" one, "Transfer-Encoding: gzip, chunked"). */
static bool compressed(const struct http_request *req, char *name, size_t name_len)
{
	/* the same reading of the coding fields as a response's */
	return respscan_coded(req->headers, req->n_headers, name, name_len);
}

/* Scan everything the request would carry out. */
static bool leak_check(const struct http_request *req, const struct buf *body, char *what, size_t len)
{
	if (!cfg->dlp)
		return false;
	if (dlp_scan(cfg->dlp, (const uint8_t *)req->path, req->path_len, what, len))
		return true;
	if (req->query && dlp_scan(cfg->dlp, (const uint8_t *)req->query, req->query_len, what, len))
		return true;
	if (dlp_scan(cfg->dlp, (const uint8_t *)req->host, strlen(req->host), what, len))
		return true;
	for (size_t i = 0; i < req->n_headers; i++)
		if (dlp_scan(cfg->dlp, (const uint8_t *)req->headers[i].value, req->headers[i].value_len, what, len))
			return true;
	if (req->body != HTTP_BODY_CHUNKED)
		return body->len && dlp_scan(cfg->dlp, (const uint8_t *)body->data, body->len, what, len);
	/* The scanner reads the body the upstream will read: chunk framing
	 * removed, or a secret split over two chunks (or one byte a chunk,
	 * or cut by a chunk-size line) passes. The framing is scanned too,
	 * as it travels (chunk extensions carry any bytes). A prefix of a
	 * streamed body decodes as far as it goes. */
	if (body->len && dlp_scan(cfg->dlp, (const uint8_t *)body->data, body->len, what, len))
		return true;
	struct buf plain = { 0 };
	struct http_chunked ch = { 0 };
	size_t used = 0;
	int r = http_chunked_decode(&ch, body->data, body->len, &used, &plain);
	bool hit = r == -ENOMEM || (plain.len && dlp_scan(cfg->dlp, (const uint8_t *)plain.data, plain.len, what, len));
	if (r == -ENOMEM)
		snprintf(what, len, "a body the proxy had no memory to decode");
	buf_free(&plain);
	return hit;
}

/* Read what the upstream has into rb's free space, first making room for
 * 16 KiB when less is left. Returns what io_read returned. */
static ssize_t upstream_fill(struct conn *c, struct buf *rb, bool after_write)
{
	if (rb->cap - rb->len < 16384 + 1 && buf_reserve(rb, 16384) < 0)
		return -1;
	void *at = rb->data + rb->len;
	size_t room = rb->cap - rb->len - 1;
	ssize_t n = after_write ? io_read_after_write(c->ufd, c->ussl, at, room) : io_read(c->ufd, c->ussl, at, room);
	if (n > 0)
		rb->len += (size_t)n;
	return n;
}

/* The Sec-WebSocket-Accept a server that really switches to WebSocket
 * answers to req's Sec-WebSocket-Key (RFC 6455 §4.2.2), into out; false
 * when req has no key. */
static bool websocket_accept(const struct http_request *req, char out[WS_ACCEPT_LEN + 1])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	const struct http_header *k = http_find_header(req->headers, req->n_headers, "Sec-WebSocket-Key");
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!k || k->value_len == 0 || k->value_len > 64)
		return false;
	char in[64 + sizeof(guid)];
	memcpy(in, k->value, k->value_len);
	memcpy(in + k->value_len, guid, sizeof(guid) - 1);
	if (!EVP_Digest(in, k->value_len + sizeof(guid) - 1, md, &mdlen, EVP_sha1(), NULL) || mdlen != 20)
		return false;
	return EVP_EncodeBlock((unsigned char *)out, md, 20) == WS_ACCEPT_LEN;
}

/* Did the upstream switch to WebSocket, as the handshake proves? A 101
 * from a server that did not (a status page that answers any code, a
 * switch to another protocol) would turn the relay into a raw channel
 * to a server still reading HTTP/1.1: requests no rule decides. */
static bool websocket_switched(const struct http_response *resp, const char *accept)
{
	const struct http_header *u = http_find_header(resp->headers, resp->n_headers, "Upgrade");
	const struct http_header *a = http_find_header(resp->headers, resp->n_headers, "Sec-WebSocket-Accept");
	return accept && u && u->value_len == 9 && strncasecmp(u->value, "websocket", 9) == 0 && a &&
	       a->value_len == WS_ACCEPT_LEN && memcmp(a->value, accept, WS_ACCEPT_LEN) == 0;
}

/* Forward the response: head, then the body by its framing. ws_accept
 * is the handshake's answer when the request may switch to WebSocket,
 * else NULL. Returns whether the client connection may carry another
 * request; the upstream is closed unless it is in step and may carry
 * one too. */
static bool forward_response(struct conn *c, const struct http_request *req, const char *ws_accept,
			     uint64_t *down, int *status_out, bool *upgraded)
{
	struct buf rb = { 0 };
	struct http_response resp;
	bool keep = false;    /* the agent's stream is in step */
	bool up_keep = false; /* ... and the upstream's */
	bool may_upgrade = ws_accept != NULL;
	*upgraded = false;
	/* Room for a head and a body of up to about 64 KiB in one read. */
	if (buf_reserve(&rb, RELAY_CHUNK - 1) < 0)
		goto out;
	for (;;) {
		struct error err = { 0 };
		int r = rb.len ? http_parse_response(rb.data, rb.len, req->method, &resp, &err) : 0;
		if (r < 0)
			goto bad_gateway;
		if (r == 0) {
			/* The head of the answer to the request just sent. */
			if (upstream_fill(c, &rb, rb.len == 0) <= 0)
				goto bad_gateway;
			continue;
		}
		if (resp.status < 100 || resp.status >= 200 || resp.status == 101)
			break;
		/* Interim responses, any number of them, then the final one.
		 * A 100 is not passed on: the upstream never saw Expect (the
		 * proxy answered it), and the agent's stream has one. */
		if (resp.status != 100) {
			if (!cwrite(c, rb.data, resp.head_len))
				goto out;
			*down += resp.head_len;
		}
		buf_consume(&rb, resp.head_len);
	}
	*status_out = resp.status;
	if (resp.status == 101 && !websocket_switched(&resp, ws_accept)) {
		*status_out = 502;
		answer(c, 502, "bad gateway", "the upstream answered 101 without completing the WebSocket handshake");
		goto out;
	}

	/* The head goes out with the body bytes that arrived with it: one
	 * send, and one segment for a small response, instead of two. */
	size_t with = 0;
	struct http_chunked ch = { 0 };
	int chunked_end = 0;
	size_t rest = rb.len - resp.head_len;
	switch (resp.body) {
	case HTTP_BODY_NONE:
		break;
	case HTTP_BODY_LENGTH:
		with = rest < resp.content_length ? rest : (size_t)resp.content_length;
		break;
	case HTTP_BODY_CHUNKED:
		chunked_end = rest ? http_chunked_feed(&ch, rb.data + resp.head_len, rest, &with) : 0;
		if (chunked_end < 0)
			goto bad_gateway;
		break;
	case HTTP_BODY_EOF:
		with = rest;
		break;
	}
	if (resp.status == 101)
		with = may_upgrade ? rest : 0;
	if (!cwrite(c, rb.data, resp.head_len + with))
		goto out;
	*down += resp.head_len + with;
	buf_consume(&rb, resp.head_len + with);

	if (resp.status == 101) {
		if (!may_upgrade)
			goto out;
		/* Switched protocols (a WebSocket the rule allowed): what
		 * arrived after the head went through; now both ways raw. */
		*upgraded = true;
		buf_free(&rb);
		return false; /* the upstream stays open for the relay */
	}

	switch (resp.body) {
	case HTTP_BODY_NONE:
		/* Bytes past a bodiless response: the upstream is out of step
		 * (the agent's stream is not). */
		keep = true;
		up_keep = rb.len == 0;
		break;
	case HTTP_BODY_LENGTH: {
		uint64_t left = resp.content_length - with;
		/* Plain on both sides: move a large body through a pipe, never
		 * copying it into user space. A pipe costs four system calls of
		 * its own, more than copying a body of a few reads. */
		if (left >= RELAY_CHUNK && !c->ussl && !c->cssl)
			left -= splice_body(c->ufd, c->cfd, left, down);
		/* rb is empty here (every byte in it was body): it is the
		 * buffer for the rest. */
		while (left) {
			size_t room = rb.cap - 1;
			ssize_t n = io_read(c->ufd, c->ussl, rb.data, left < room ? (size_t)left : room);
			if (n <= 0 || !cwrite(c, rb.data, (size_t)n))
				break;
			left -= (uint64_t)n;
			*down += (uint64_t)n;
		}
		/* Bytes past the body: the upstream is out of step. */
		keep = left == 0;
		up_keep = keep && rb.len == 0;
		break;
	}
	case HTTP_BODY_CHUNKED: {
		while (chunked_end == 0) {
			if (upstream_fill(c, &rb, false) <= 0)
				goto out;
			size_t used = 0;
			chunked_end = http_chunked_feed(&ch, rb.data, rb.len, &used);
			if (chunked_end < 0)
				goto out;
			if (used && !cwrite(c, rb.data, used))
				goto out;
			*down += used;
			buf_consume(&rb, used);
		}
		keep = true;
		up_keep = rb.len == 0;
		break;
	}
	case HTTP_BODY_EOF: {
		ssize_t n;
		while ((n = io_read(c->ufd, c->ussl, rb.data, rb.cap - 1)) > 0 && cwrite(c, rb.data, (size_t)n))
			*down += (uint64_t)n;
		keep = false;
		upstream_close(c);
		break;
	}
	}
	/* Never reused after a request whose body it may have left unread,
	 * after a HEAD (a server that sends the body anyway, a little late,
	 * would answer the next request with it), or after an upgrade it
	 * declined (it may have switched halfway). */
	if (!resp.keep_alive || !up_keep || req->upstream_close || strcmp(req->method, "HEAD") == 0 ||
	    req->upgrade)
		upstream_close(c);
	buf_free(&rb);
	return keep && req->keep_alive;
bad_gateway:
	answer(c, 502, "bad gateway", "the upstream server's response was not valid HTTP/1.1");
out:
	upstream_close(c);
	buf_free(&rb);
	return false;
}

static ssize_t scan_up_read(void *ctx, void *p, size_t n)
{
	struct conn *c = ctx;
	return io_read(c->ufd, c->ussl, p, n);
}

static bool scan_down_write(void *ctx, const void *p, size_t n)
{
	return cwrite(ctx, p, n);
}

/* The response of a credential's endpoint, through the scanner. A secret
 * in it (or a body it cannot read) is withheld and recorded as a denial
 * (rec->reason into why); the connection is cut when part of the response
 * went out already. */
static bool forward_scanned(struct conn *c, const struct http_request *req, struct rec *rec, char *why,
			    size_t why_len)
{
	struct respscan_io io = { .ctx = c, .up_read = scan_up_read, .down_write = scan_down_write };
	struct respscan_result res;
	respscan_forward(cfg->broker->echo, &io, req->method, &res);
	rec->down = res.down;
	rec->status = res.status;
	if (!res.upstream_ok)
		upstream_close(c);
	if (res.refused) {
		if (!res.sent)
			answer(c, 502, "response withheld", res.reason);
		snprintf(why, why_len, "%s", res.reason);
		rec->kind = "response_leak";
		rec->reason = why;
		rec->observed = false;
		rec->status = res.sent ? res.status : 502;
		return false;
	}
	if (res.bad_gateway)
		answer(c, 502, "bad gateway", "the upstream server's response was not valid HTTP/1.1");
	return res.complete && req->keep_alive;
}

/* identity.header: the signed Airlock-Identity header, for the
 * destination as its audience, at the end of head (built by
 * http_build_upstream_head, which always drops one the agent sent: the
 * agent cannot speak for the session). When the certificate has expired
 * the request goes without one, as it would with the feature off (0).
 * Any other failure (out of memory, the audit writer gone, refusing or
 * not answering) is returned, and the request is not sent: it fails
 * closed rather than go unsigned. */
static int add_identity(const struct conn *c, const char *host, uint16_t port, struct buf *head)
{
	char aud[IDENTITY_AUD_MAX + 1];
	if (!cfg->identity || head->len < 4 || identity_audience(c->cssl ? "https" : "http", host, port, aud) < 0)
		return 0;
	size_t end = head->len;
	head->len -= 2; /* before the empty line */
	int r = buf_puts(head, IDENTITY_HEADER_NAME ": ");
	if (r == 0 && (r = identity_token_get(cfg->identity, aud, time(NULL), head)) == -EKEYEXPIRED) {
		memcpy(head->data + end - 2, "\r\n", 2);
		head->len = end;
		head->data[end] = '\0';
		return 0;
	}
	return r ?: buf_puts(head, "\r\n\r\n");
}

/* An MCP exchange's view of the connection and the request. */
struct mcp_ctx {
	struct conn *c;
	const struct http_request *req; /* its path only: headers may point into freed memory by then */
	char session[256];              /* Mcp-Session-Id and MCP-Protocol-Version as the agent sent them */
	char version[64];
	const char *host;
	bool is_ip;
	const struct net_addr *ip;
	uint16_t port;
};

static ssize_t mcp_up_read(void *ctx, void *p, size_t n)
{
	struct mcp_ctx *m = ctx;
	return io_read(m->c->ufd, m->c->ussl, p, n);
}

static bool mcp_down_write(void *ctx, const void *p, size_t n)
{
	struct mcp_ctx *m = ctx;
	return cwrite(m->c, p, n);
}

/* A header's value into out when it fits; else out stays empty. */
static void copy_header(const struct http_request *req, const char *name, char *out, size_t size)
{
	const struct http_header *h = http_find_header(req->headers, req->n_headers, name);
	if (h && h->value_len < size)
		snprintf(out, size, "%.*s", (int)h->value_len, h->value);
}

/* The gateway's refusal of a server request seen in a response stream,
 * posted to the server on a connection of its own (the one the stream
 * comes on is busy), with the session's headers: the server learns at
 * once instead of waiting for its timeout. Decided like the request it
 * answers (same endpoint and address checks), and recorded. */
static bool mcp_post_server(void *ctx, const char *body, size_t len)
{
	struct mcp_ctx *m = ctx;
	const struct http_request *req = m->req;
	struct net_decision d = { 0 }, would;
	char reason[256];
	struct rec rec = { .decision = "deny", .kind = m->c->cssl ? "tunnel-request" : "http", .method = "POST",
			   .host = m->host, .port = m->port, .target = req->path, .target_len = req->path_len };
	int fd = upstream_connect(m->host, m->is_ip, m->ip, m->port, &d, reason, sizeof(reason), &would);
	if (fd < 0) {
		rec.reason = reason;
		record(&rec);
		return false;
	}
	SSL *ssl = NULL;
	struct error err = { 0 };
	bool ok = true;
	if (m->c->cssl) {
		ssl = SSL_new(upstream_ctx);
		ok = ssl && tls_client_set_host(ssl, m->host, &err) >= 0 && SSL_set_fd(ssl, fd) &&
		     ssl_handshake(ssl, fd, SSL_connect) == 1;
		ERR_clear_error();
	}
	struct buf head = { 0 };
	if (ok) {
		bool v6 = strchr(m->host, ':') != NULL;
		int e = buf_printf(&head, "POST %.*s%s%.*s HTTP/1.1\r\nHost: %s%s%s:%u\r\n", (int)req->path_len,
				   req->path, req->query ? "?" : "", req->query ? (int)req->query_len : 0,
				   req->query ? req->query : "", v6 ? "[" : "", m->host, v6 ? "]" : "", m->port);
		if (e == 0 && m->session[0])
			e = buf_printf(&head, "Mcp-Session-Id: %s\r\n", m->session);
		if (e == 0 && m->version[0])
			e = buf_printf(&head, "MCP-Protocol-Version: %s\r\n", m->version);
		if (e == 0)
			e = buf_printf(&head,
				       "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
				       "Content-Length: %zu\r\nConnection: close\r\n\r\n",
				       len);
		ok = e == 0 && io_write(fd, ssl, head.data, head.len) && io_write(fd, ssl, body, len);
	}
	if (ok) {
		/* The answer (202) is read and dropped, bounded. */
		char tmp[4096];
		size_t total = 0;
		ssize_t n;
		while (total < 65536 && (n = io_read(fd, ssl, tmp, sizeof(tmp))) > 0) {
			if (total == 0 && n > 12 && !memcmp(tmp, "HTTP/1.", 7))
				rec.status = atoi(tmp + 9);
			total += (size_t)n;
		}
		rec.down = total;
		rec.up = head.len + len;
	}
	buf_free(&head);
	if (ssl)
		SSL_free(ssl);
	fiber_fd_close(fd);
	rec.decision = ok ? "allow" : "deny";
	rec.rule = d.rule;
	rec.reason = ok ? "the MCP gateway's refusal of a server request" : "upstream write failed";
	record(&rec);
	return ok;
}

static bool handle_request(struct conn *c, struct http_request *req)
{
	const struct policy_network *net = &cfg->policy->network;
	struct rec rec = { .decision = "deny", .kind = c->cssl ? "tunnel-request" : "http", .method = req->method,
			   .target = req->path, .target_len = req->path_len };
	char host[HTTP_MAX_HOST + 1], reason[512];
	struct net_addr ip;
	uint16_t port;
	const struct policy_endpoint *ep = NULL;
	struct net_decision d = { 0 }, would;
	struct buf body = { 0 };
	uint64_t charged = 0; /* of the body budget, released with body */
	bool keep = false;
	char obs[512]; /* observe mode: the reason of the denial let through */
	/* Declared before every goto: its cleanup runs at each return. */
	_cleanup_(mcp_http_exchange_freep) struct mcp_http_exchange *mx = NULL;
	struct mcp_ctx mc = { .c = c, .req = req };

	if (req->query)
		rec.target_len = (size_t)(req->query + req->query_len - req->path);

	int kind = addr_normalize_host(req->host, host, sizeof(host), &ip);
	rec.host = kind >= 0 ? host : req->host;
	if (kind < 0) {
		answer(c, 400, "invalid host", req->host);
		rec.reason = "invalid host";
		goto deny;
	}
	if (c->cssl) {
		/* Inside an intercepted tunnel the Host must be the tunnel's. */
		port = c->tport;
		if (strcmp(host, c->thost) != 0 || (req->port_explicit && req->port != c->tport)) {
			snprintf(reason, sizeof(reason), "Host %s disagrees with the tunnel's %s:%u", host, c->thost,
				 c->tport);
			if (!let_through(&rec, obs, sizeof(obs), NULL, NULL, reason)) {
				answer(c, 403, "denied", reason);
				rec.reason = reason;
				goto deny;
			}
		}
		ep = c->tep;
		rec.port = port;
	} else if (c->redirected) {
		/* Redirected: the request goes where the agent connected, so
		 * its Host must name that place; the decision is on it. */
		port = c->tport;
		rec.port = port;
		rec.kind = "transparent";
		if (strcmp(host, c->thost) != 0 || (req->port_explicit && req->port != c->tport)) {
			snprintf(reason, sizeof(reason), "Host %s disagrees with the connection's destination %s:%u",
				 host, c->thost, c->tport);
			if (!let_through(&rec, obs, sizeof(obs), NULL, NULL, reason)) {
				answer(c, 403, "denied", reason);
				rec.reason = reason;
				goto deny;
			}
		}
	} else {
		if (req->form != HTTP_TARGET_ABSOLUTE || strcmp(req->scheme, "http") != 0) {
			answer(c, 400, "not a proxy request",
			       "send absolute-form http:// requests, or CONNECT for https");
			rec.reason = "not a proxy request";
			goto deny;
		}
		port = req->port;
		rec.port = port;
	}
	if (!c->cssl) {
		/* Outside a tunnel the endpoint is decided here. */
		if (!netpol_decide_host(net, host, port, &d)) {
			snprintf(reason, sizeof(reason), "%s %s:%u: %s", req->method, host, port, d.reason);
			if (!let_through(&rec, obs, sizeof(obs), NULL, d.rule, d.reason)) {
				answer(c, 403, "denied", reason);
				rec.rule = d.rule;
				rec.reason = d.reason;
				goto deny;
			}
		}
		ep = d.ep; /* NULL when observe mode let a denied host through */
	}
	if (ep && !netpol_decide_request(ep, req->method, req->path, req->path_len, req->query, req->query_len,
					 req->upgrade_websocket, &d)) {
		snprintf(reason, sizeof(reason), "%s %s:%u%.*s: %s", req->method, host, port,
			 (int)(rec.target_len > 200 ? 200 : rec.target_len), req->path, d.reason);
		if (!let_through(&rec, obs, sizeof(obs), NULL, d.rule, d.reason)) {
			answer(c, 403, "denied", reason);
			rec.rule = d.rule;
			rec.reason = d.reason;
			goto deny;
		}
	}
	if (!rec.observed)
		rec.rule = d.rule;
	if (req->upgrade && !req->upgrade_websocket) {
		answer(c, 403, "denied", "only WebSocket upgrades can be allowed");
		rec.reason = "upgrade to a protocol other than websocket";
		goto deny;
	}
	char coding[80];
	if (req->body != HTTP_BODY_NONE && compressed(req, coding, sizeof(coding)) && !net->allow_compressed) {
		snprintf(reason, sizeof(reason), "compressed body (%s)", coding);
		if (!let_through(&rec, obs, sizeof(obs), NULL, NULL, reason)) {
			answer(c, 415, "denied", "compressed request bodies cannot be scanned for leaks "
						 "(network.leak_scan.allow_compressed is false)");
			rec.reason = reason;
			goto deny;
		}
	}
	/* The head is decided: the agent may send the body it holds back
	 * for a 100 (its Expect never goes upstream, see build_head). */
	if (req->expect_continue && req->body != HTTP_BODY_NONE &&
	    !(req->body == HTTP_BODY_LENGTH && req->content_length == 0)) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
		if (!cwrite(c, cont, sizeof(cont) - 1))
			goto out;
	}
	/* A git push the broker decides from its first commands may be
	 * larger than max_body: its pack (compressed) is streamed after them.
	 * Observe mode streams any body over max_body (its first max_body
	 * bytes are scanned). */
	struct body_rest rest = { 0 };
	bool may_stream = cfg->broker && c->cssl && broker_git_push(cfg->broker, host, port, req);
	/* An MCP message is checked whole: never streamed past a bound. */
	bool mcp = ep && ep->mcp_server;
	uint64_t max = mcp && net->max_body > MCP_HTTP_MAX_MESSAGE ? MCP_HTTP_MAX_MESSAGE : net->max_body;
	int cb = collect_body(c, req, max, &body, !mcp && (may_stream || cfg->observe) ? &rest : NULL, &charged);
	if (cb == 4) {
		/* Fail closed on the host's memory: refused, not held, and
		 * recorded; the agent may retry once others are done. */
		snprintf(reason, sizeof(reason),
			 "the proxy holds its budget of %llu bytes of request bodies (sandbox.limits.memory, else "
			 "%llu; at least network.leak_scan.max_body)",
			 (unsigned long long)body_budget, (unsigned long long)PROXY_BODY_BUDGET_DEFAULT);
		answer(c, 503, "refused", reason);
		rec.reason = "over the proxy's budget of request bodies";
		rec.status = 503;
		goto deny;
	}
	if (cb == 0 && mcp) {
		struct buf ans = { 0 };
		char mwhy[256];
		mcp_http_oversized(ep, req, &ans, mwhy, sizeof(mwhy));
		(void)cwrite(c, ans.data, ans.len);
		buf_free(&ans);
		rec.rule = ep->id;
		rec.reason = "MCP message over max_body";
		goto deny;
	}
	if (cb == 0) {
		answer(c, 413, "denied", "the request body is larger than network.leak_scan.max_body");
		rec.reason = "body over max_body";
		goto deny;
	}
	if (cb == 3) {
		answer(c, 400, "denied", "trailer fields in a request are not forwarded");
		rec.reason = "trailer fields in a request";
		goto deny;
	}
	if (cb < 0)
		goto out;
	if (cb == 2 && !may_stream)
		(void)let_through(&rec, obs, sizeof(obs), NULL, NULL, "body over max_body");
	/* A body streamed on after the head is one the upstream may answer
	 * before it has read (a refusal, a redirect): its rest, unscanned,
	 * must not become the next request. */
	if (cb == 2)
		req->upstream_close = true;
	char what[128];
	if (leak_check(req, &body, what, sizeof(what))) {
		snprintf(reason, sizeof(reason), "the request carries %s", what);
		/* The target may carry the secret itself: keep it out of the log. */
		rec.target = "(withheld: it carries a secret)";
		rec.target_len = strlen(rec.target);
		if (!let_through(&rec, obs, sizeof(obs), "leak", NULL, reason)) {
			answer(c, 403, "leak blocked", reason);
			rec.kind = "leak";
			rec.reason = reason;
			goto deny;
		}
	}

	/* protocol: mcp: the message is decided by the MCP gateway, and
	 * what goes upstream is its checked re-serialisation. */
	if (mcp) {
		struct buf fwd = { 0 }, ans = { 0 };
		char mwhy[512];
		if (!mcp_http_request(ep, req, body.data, body.len, c->cfd, &mx, &fwd, &ans, mwhy, sizeof(mwhy))) {
			bool sent = ans.len && cwrite(c, ans.data, ans.len);
			bool closes = !ans.data || strstr(ans.data, "Connection: close");
			rec.status = sent && ans.len > 12 ? atoi(ans.data + 9) : 0;
			rec.down = sent ? ans.len : 0;
			buf_free(&ans);
			buf_free(&fwd);
			snprintf(reason, sizeof(reason), "%s", mwhy);
			rec.rule = ep->id;
			rec.reason = reason;
			record_for(c, &rec);
			/* A refusal the proxy answered itself (a denied tool
			 * call as its isError result) leaves the connection
			 * usable, as the server's own answer would. */
			keep = sent && req->keep_alive && !closes;
			goto out;
		}
		buf_free(&ans);
		buf_free(&body);
		body = fwd;
		/* For the gateway's refusals posted to the server later: the
		 * session's headers as they are now (credentials may replace
		 * header values, and their buffer is wiped once sent). */
		copy_header(req, "Mcp-Session-Id", mc.session, sizeof(mc.session));
		copy_header(req, "MCP-Protocol-Version", mc.version, sizeof(mc.version));
	}

	/* Credentials: a placeholder becomes its secret only where one of
	 * its bindings allows it, and blocks the request anywhere else. */
	struct buf side = { 0 };
	bool injected = false;
	if (cfg->broker && cfg->broker->n) {
		struct broker_result br;
		/* Observe mode lets a misused placeholder through as the agent
		 * sent it: req is restored from this copy, so no secret goes
		 * where no binding puts it. */
		struct http_request sent = *req;
		if (broker_apply(cfg->broker, host, port, req, body.data, body.len, &side, &br) < 0) {
			answer(c, 403, "denied", "the request's credentials cannot be applied");
			rec.reason = "credentials cannot be applied";
			goto deny;
		}
		rec.credential = br.credential;
		if (br.verdict == BROKER_INJECT && !c->cssl) {
			br.verdict = BROKER_MISUSE;
			snprintf(br.reason, sizeof(br.reason),
				 "credential %s goes only into requests inside intercepted TLS, not plain HTTP",
				 br.credential);
		}
		if (br.verdict == BROKER_MISUSE || br.verdict == BROKER_DENY) {
			const char *k = br.verdict == BROKER_MISUSE ? "credential_misuse" : "git";
			buf_wipe(&side);
			if (!let_through(&rec, obs, sizeof(obs), k, br.binding, br.reason)) {
				answer(c, 403, br.verdict == BROKER_MISUSE ? "credential misuse" : "denied", br.reason);
				rec.kind = k;
				rec.rule = br.binding ? br.binding : rec.rule;
				snprintf(reason, sizeof(reason), "%s", br.reason);
				rec.reason = reason;
				goto deny;
			}
			*req = sent;
			br.verdict = BROKER_PASS;
		}
		injected = br.verdict == BROKER_INJECT;
	}

	/* What a credential's endpoint answers is scanned for the secrets
	 * (respscan.h), whether or not this request carried one. TRACE
	 * would echo the request, secret and all: refused outright. */
	bool scan_back = cfg->broker && !mx && broker_bound(cfg->broker, host, port);
	if (scan_back && strcasecmp(req->method, "TRACE") == 0) {
		buf_wipe(&side);
		answer(c, 403, "denied", "TRACE to a credential's endpoint would echo the credential");
		rec.kind = "response_leak";
		rec.reason = "TRACE to a credential's endpoint";
		goto deny;
	}
	if (scan_back && respscan_prepare(req) < 0) {
		buf_wipe(&side);
		answer(c, 431, "denied", "too many header fields to ask for an unencoded response");
		rec.reason = "too many header fields";
		goto deny;
	}

	/* Upstream: reuse the connection to the same place, else connect.
	 * An idle upstream that is readable was closed by the server or
	 * holds bytes no request asked for (upstream_stale): it is replaced,
	 * and the bytes go with it. Inside an intercepted tunnel the new
	 * connection goes to the tunnel's own host and port, checked as the
	 * first was; this is also how a tunnel outlives a server's idle
	 * timeout or a long step-up wait. */
	bool reopen = c->cssl ? !c->ussl || SSL_pending(c->ussl) > 0 || upstream_stale(c) :
				c->ufd < 0 || upstream_stale(c) || strcmp(c->uhost, host) != 0 || c->uport != port;
	if (reopen) {
		char uhost[HTTP_MAX_HOST + 1];
		struct net_addr uip = ip;
		int ukind = kind;
		uint16_t uport = port;
		snprintf(uhost, sizeof(uhost), "%s", host);
		if (c->cssl) {
			ukind = addr_normalize_host(c->thost, uhost, sizeof(uhost), &uip);
			uport = c->tport;
		}
		upstream_close(c);
		int fd = -EINVAL;
		if (ukind < 0) {
			snprintf(reason, sizeof(reason), "the tunnel's host %s is invalid", c->thost);
		} else {
			fd = upstream_connect(uhost, ukind == 1, &uip, uport, &d, reason, sizeof(reason), &would);
			if (would.reason[0])
				(void)let_through(&rec, obs, sizeof(obs), NULL, would.rule, would.reason);
		}
		if (fd >= 0) {
			c->ufd = fd;
			if (c->cssl && !upstream_tls_start(c, uhost, uport, reason, sizeof(reason))) {
				upstream_close(c);
				fd = -EIO;
			}
		}
		if (fd < 0) {
			answer(c, fd == -EACCES ? 403 : 502, fd == -EACCES ? "denied" : "bad gateway", reason);
			if (!rec.observed) {
				rec.reason = reason;
				if (fd == -EACCES)
					rec.rule = d.rule;
			}
			buf_wipe(&side);
			goto deny;
		}
		snprintf(c->uhost, sizeof(c->uhost), "%s", uhost);
		c->uport = uport;
	}

	struct buf head = { 0 };
	int unsigned_id = 0;
	bool ok = http_build_upstream_head(req, req->upgrade_websocket, &head) == 0 &&
		  (!mx || mcp_http_fix_head(&head, body.len > 0, body.len) == 0) &&
		  (unsigned_id = add_identity(c, host, port, &head)) == 0 && io_write(c->ufd, c->ussl, head.data, head.len) &&
		  (!body.len || io_write(c->ufd, c->ussl, body.data, body.len));
	rec.up = head.len + body.len;
	bool answered_early = false;
	if (ok && rest.active) {
		int fr = forward_rest(c, &rest, &rec.up);
		ok = fr > 0;
		answered_early = fr == 2;
	}
	/* From here req's injected headers (into side) are gone: only its
	 * method and keep-alive flag are read below. */
	if (injected) {
		/* Both held the secret. */
		buf_wipe(&head);
		buf_wipe(&side);
	}
	buf_free(&head);
	buf_free(&side);
	if (!ok) {
		answer(c, 502, "bad gateway",
		       unsigned_id ? "the identity header could not be signed" : "the upstream connection failed");
		upstream_close(c);
		if (unsigned_id) {
			rec.reason = "identity.header: the audit writer did not sign the Airlock-Identity header";
			rec.decision = "deny";
			rec.observed = false;
		} else if (!rec.observed) {
			rec.reason = "upstream write failed";
			rec.decision = injected ? "modify" : "allow";
		}
		record_for(c, &rec);
		goto out;
	}
	bool upgraded = false;
	if (mx) {
		/* Each message of the response through the gateway. An
		 * upstream out of step is closed; inside an intercepted tunnel
		 * the tunnel then ends too (the agent's side of it may be out
		 * of step as well). */
		mc.host = host;
		mc.is_ip = kind == 1;
		mc.ip = &ip;
		mc.port = port;
		struct mcp_http_io io = { .ctx = &mc, .up_read = mcp_up_read, .down_write = mcp_down_write,
					  .post_server = mcp_post_server };
		bool up_ok = false;
		keep = mcp_http_response(mx, req, &io, &rec.down, &rec.status, &up_ok);
		if (!up_ok) {
			upstream_close(c);
			if (c->cssl)
				keep = false;
		}
	} else if (scan_back) {
		keep = forward_scanned(c, req, &rec, reason, sizeof(reason));
	} else {
		char accept[WS_ACCEPT_LEN + 1];
		bool ws = req->upgrade_websocket && websocket_accept(req, accept);
		keep = forward_response(c, req, ws ? accept : NULL, &rec.down, &rec.status, &upgraded);
		/* The rest of the body is still in the agent's stream. */
		if (answered_early)
			keep = false;
	}
	/* A request let through with a credential the agent never held is
	 * not what the agent sent: docs/audit.md's `modify`. */
	rec.decision = rec.observed || (rec.kind && strcmp(rec.kind, "response_leak") == 0) ? "deny" :
		       injected ? "modify" : "allow";
	if (upgraded) {
		relay(c, &rec.up, &rec.down);
		keep = false;
	}
	record_for(c, &rec);
	goto out;
deny:
	record_for(c, &rec);
	keep = false;
out:
	buf_free(&body);
	body_release(&charged);
	return keep;
}

/* ---- CONNECT ---- */

static void serve_requests(struct conn *c);

/* Read the ClientHello (without consuming it) until its SNI is known. */
static int peek_sni(struct conn *c, char *sni, size_t len)
{
	for (;;) {
		if (c->in.len) {
			int r = tls_parse_sni((const uint8_t *)c->in.data, c->in.len, sni, len);
			if (r != 0)
				return r;
		}
		if (c->in.len > 16384 + 5)
			return -EINVAL;
		if (buf_reserve(&c->in, 4096) < 0)
			return -ENOMEM;
		ssize_t n = cread(c, c->in.data + c->in.len, 4096);
		if (n <= 0)
			return -EIO;
		c->in.len += (size_t)n;
	}
}

/* A tunnel the decision d refused: answered 403 (when the agent waits for
 * an answer) and recorded, true; or, in observe mode, let through with
 * the denial noted in rec, false. */
static bool tunnel_refused(struct conn *c, struct rec *rec, char *obs, size_t obs_len, bool announce,
			   const char *verb, const char *host, uint16_t port, const struct net_decision *d)
{
	if (let_through(rec, obs, obs_len, NULL, d->rule, d->reason))
		return false;
	if (announce) {
		char reason[512];
		snprintf(reason, sizeof(reason), "%s %s:%u: %s", verb, host, port, d->reason);
		answer(c, 403, "denied", reason);
	}
	rec->rule = d->rule;
	rec->reason = d->reason;
	record(rec);
	return true;
}

/* WARNING: the sandbox's path of the bundle (PLAN_CA_BUNDLE in
 * src/sandbox/internal.h); the reason below sends users to it. */
#define PROXY_CA_BUNDLE "/run/airlock/ca.pem"

/* The agent's side of an intercepted handshake: has our certificate gone
 * out? (app data: a bool). */
static void note_cert_sent(const SSL *ssl, int where, int ret)
{
	(void)ret;
	if ((where & SSL_CB_LOOP) && SSL_get_state(ssl) == TLS_ST_SW_CERT)
		*(bool *)SSL_get_app_data(ssl) = true;
}

/* Why the agent's side of an intercepted handshake failed. A client that
 * does not trust the session CA (its own CA setting, a pinned bundle, a
 * JDK with a store of its own) says so with an alert, unknown_ca from
 * OpenSSL, Go and node, certificate_unknown from Java and NSS,
 * bad_certificate from others, or hangs up once it has seen our
 * certificate; the tool then prints a certificate error that never names
 * airlock. The reason names the session bundle and the variables that
 * point tools at it. No 403 page is possible: the client refused the only
 * channel it would read one from. */
static const char *agent_handshake_failure(SSL *ssl, int ret, bool cert_sent, char *buf, size_t len)
{
	static const char fix[] = "trust " PROXY_CA_BUNDLE " in its CA setting (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, "
				  "REQUESTS_CA_BUNDLE, GIT_SSL_CAINFO, NPM_CONFIG_CAFILE point there; Java: "
				  "its default trust store)";
	int alert = -1;
	bool eof = SSL_get_error(ssl, ret) == SSL_ERROR_SYSCALL || SSL_get_error(ssl, ret) == SSL_ERROR_ZERO_RETURN;
	unsigned long e;
	while ((e = ERR_get_error())) {
		int why = ERR_GET_REASON(e);
		if (ERR_GET_LIB(e) == ERR_LIB_SSL && why > SSL_AD_REASON_OFFSET && why < SSL_AD_REASON_OFFSET + 256)
			alert = why - SSL_AD_REASON_OFFSET;
		else if (ERR_GET_LIB(e) == ERR_LIB_SSL && why == SSL_R_UNEXPECTED_EOF_WHILE_READING)
			eof = true;
	}
	switch (alert) {
	case SSL_AD_UNKNOWN_CA:
	case SSL_AD_BAD_CERTIFICATE:
	case SSL_AD_CERTIFICATE_UNKNOWN:
	case SSL_AD_UNSUPPORTED_CERTIFICATE:
		snprintf(buf, len, "the agent's TLS client refused the session CA (alert %s); %s",
			 SSL_alert_desc_string_long(alert), fix);
		return buf;
	case -1:
		break;
	default:
		snprintf(buf, len, "TLS handshake with the agent failed (alert %s)", SSL_alert_desc_string_long(alert));
		return buf;
	}
	if (cert_sent && eof) {
		snprintf(buf, len, "the agent's TLS client refused the session CA (it hung up after the certificate); %s",
			 fix);
		return buf;
	}
	return "TLS handshake with the agent failed";
}

/* A TLS tunnel to target_host:port: asked for with CONNECT (announce: the
 * agent waits for our 200), or a redirected connection whose first byte
 * opened a TLS handshake (nothing to announce; the agent's ClientHello is
 * still unread in the socket). */
static void open_tunnel(struct conn *c, const char *target_host, uint16_t port, bool announce)
{
	const struct policy_network *net = &cfg->policy->network;
	char host[HTTP_MAX_HOST + 1], reason[512];
	struct net_addr ip;
	struct net_decision d = { 0 }, would;
	struct rec rec = { .decision = "deny", .kind = announce ? "connect" : "transparent-tls",
			   .method = announce ? "CONNECT" : NULL, .port = port };
	char obs[512]; /* observe mode: the reason of the denial let through */
	const char *verb = announce ? "CONNECT" : "TLS to";
	int kind = addr_normalize_host(target_host, host, sizeof(host), &ip);
	rec.host = kind >= 0 ? host : target_host;
	if (kind < 0) {
		if (announce)
			answer(c, 400, "invalid host", target_host);
		rec.reason = "invalid host";
		record_for(c, &rec);
		return;
	}
	const struct broker_cred *bc = cfg->broker ? broker_find(cfg->broker, host, strlen(host)) : NULL;
	if (bc) {
		snprintf(reason, sizeof(reason), "the placeholder of credential %s in the host name", bc->pol->name);
		rec.credential = bc->pol->name;
		if (!let_through(&rec, obs, sizeof(obs), "credential_misuse", NULL, reason)) {
			if (announce)
				answer(c, 403, "credential misuse", reason);
			rec.kind = "credential_misuse";
			rec.reason = reason;
			record_for(c, &rec);
			return;
		}
	}
	if (!netpol_decide_host(net, host, port, &d) &&
	    tunnel_refused(c, &rec, obs, sizeof(obs), announce, verb, host, port, &d))
		return;
	/* NULL when observe mode let a denied host through: a tunnel
	 * spliced as it is, not intercepted. */
	const struct policy_endpoint *ep = d.ep;
	if (!rec.observed)
		rec.rule = d.rule;
	/* A passthrough tunnel is opaque: refused to an endpoint whose rules
	 * or protocol: mcp would have decided each request in it. */
	struct net_decision td;
	if (ep && !netpol_decide_tunnel(ep, port, &td)) {
		if (tunnel_refused(c, &rec, obs, sizeof(obs), announce, verb, host, port, &td))
			return;
		ep = NULL; /* observe mode: spliced as it is, not intercepted */
	}
	int fd = upstream_connect(host, kind == 1, &ip, port, &d, reason, sizeof(reason), &would);
	if (would.reason[0])
		(void)let_through(&rec, obs, sizeof(obs), NULL, would.rule, would.reason);
	if (fd < 0) {
		if (announce)
			answer(c, fd == -EACCES ? 403 : 502, fd == -EACCES ? "denied" : "bad gateway", reason);
		if (!rec.observed)
			rec.reason = reason;
		record_for(c, &rec);
		return;
	}
	c->ufd = fd;
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	if (announce && !cwrite(c, ok, sizeof(ok) - 1))
		return;

	if (ep && ep->intercept) {
		struct error err = { 0 };
		if (!cfg->ca || c->in.len) {
			rec.reason = cfg->ca ? "bytes before the TLS handshake" : "no session CA";
			record_for(c, &rec);
			return;
		}
		pthread_mutex_lock(&ca_lock);
		SSL_CTX *sctx = tls_ca_server_ctx(cfg->ca, host, &err);
		c->cssl = sctx ? SSL_new(sctx) : NULL;
		pthread_mutex_unlock(&ca_lock);
		if (!c->cssl) {
			rec.reason = err.msg[0] ? err.msg : "cannot make a TLS session";
			record_for(c, &rec);
			return;
		}
		bool cert_sent = false;
		SSL_set_app_data(c->cssl, &cert_sent);
		SSL_set_info_callback(c->cssl, note_cert_sent);
		int ar = SSL_set_fd(c->cssl, c->cfd) ? ssl_handshake(c->cssl, c->cfd, SSL_accept) : -1;
		SSL_set_info_callback(c->cssl, NULL);
		SSL_set_app_data(c->cssl, NULL);
		if (ar != 1) {
			rec.reason = agent_handshake_failure(c->cssl, ar, cert_sent, reason, sizeof(reason));
			record_for(c, &rec);
			return;
		}
		/* The name the agent's TLS stack asked for must be the
		 * CONNECT host (no fronting behind an allowed name). */
		const char *sni = SSL_get_servername(c->cssl, TLSEXT_NAMETYPE_host_name);
		if ((sni && strcasecmp(sni, host) != 0) || (!sni && kind == 0)) {
			snprintf(reason, sizeof(reason), "TLS SNI %s does not match %s %s", sni ? sni : "(none)",
				 verb, host);
			if (!let_through(&rec, obs, sizeof(obs), NULL, NULL, reason)) {
				rec.reason = reason;
				record_for(c, &rec);
				return;
			}
		}
		if (!upstream_tls_start(c, host, port, reason, sizeof(reason))) {
			answer(c, 502, "bad gateway", reason);
			rec.reason = reason;
			record_for(c, &rec);
			return;
		}
		if (!rec.observed) {
			rec.decision = "allow";
			rec.reason = "intercepted";
		}
		record_for(c, &rec);
		snprintf(c->thost, sizeof(c->thost), "%s", host);
		c->tport = port;
		c->tep = ep;
		snprintf(c->uhost, sizeof(c->uhost), "%s", host);
		c->uport = port;
		serve_requests(c);
		return;
	}

	/* Not intercepted: decided on host and port, and the SNI must agree. */
	char sni[256];
	int r = peek_sni(c, sni, sizeof(sni));
	bool sni_ok = (r == 1 && strcmp(sni, host) == 0) || (r == -ENOENT && kind == 1);
	if (!sni_ok) {
		if (r == 1)
			snprintf(reason, sizeof(reason), "TLS SNI %s does not match %s %s (domain fronting)", sni,
				 verb, host);
		else
			snprintf(reason, sizeof(reason), "the tunnel to %s:%u did not start with a TLS ClientHello %s",
				 host, port, r == -ENOENT ? "naming the host" : "");
		if (!let_through(&rec, obs, sizeof(obs), NULL, NULL, reason)) {
			rec.reason = reason;
			record_for(c, &rec);
			return;
		}
	}
	rec.decision = rec.observed ? "deny" : "allow";
	if (!io_write(c->ufd, NULL, c->in.data, c->in.len))
		return;
	rec.up = c->in.len;
	buf_reset(&c->in);
	splice_relay(c->cfd, c->ufd, &rec.up, &rec.down);
	record_for(c, &rec);
}

static void handle_connect(struct conn *c, struct http_request *req)
{
	/* req's fields point into c->in: copy the host out before the head
	 * is consumed (the tunnel's bytes follow it there). */
	char host[HTTP_MAX_HOST + 1];
	snprintf(host, sizeof(host), "%s", req->host);
	uint16_t port = req->port;
	buf_consume(&c->in, req->head_len);
	open_tunnel(c, host, port, true);
}

/* ---- a connection ---- */

static void serve_requests(struct conn *c)
{
	/* Each head is moved out of c->in while its request is handled
	 * (fields point into it, and the body follows at the start of c->in);
	 * one buffer serves every request of the connection. */
	struct buf head = { 0 };
	bool answered = false;
	for (;;) {
		struct http_request req;
		int r = read_head(c, &req, answered);
		if (r <= 0)
			break;
		if (req.form == HTTP_TARGET_AUTHORITY) {
			if (c->cssl || c->redirected) {
				answer(c, 400, "malformed request",
				       c->cssl ? "CONNECT inside a tunnel" : "CONNECT on a redirected connection");
				break;
			}
			handle_connect(c, &req);
			break;
		}
		buf_reset(&head);
		if (buf_append(&head, c->in.data, req.head_len) < 0)
			break;
		http_request_move(&req, c->in.data, head.data);
		buf_consume(&c->in, req.head_len);
		if (!handle_request(c, &req))
			break;
		answered = true;
	}
	buf_free(&head);
}

/* ---- transparent mode ---- */

static struct dns_synth *synth;

#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80 /* <linux/netfilter_ipv4.h>, and IP6T_ in ipv6 */
#endif

/* Where a redirected connection was going. Returns 1 and fills thost and
 * tport when it was redirected, 0 when the agent connected to the proxy
 * itself (explicit proxy use, which transparent mode also serves), -1
 * when the destination cannot be told (the connection is refused). */
static int original_destination(struct conn *c, char *why, size_t why_len)
{
	struct sockaddr_storage local, orig;
	socklen_t llen = sizeof(local), olen = sizeof(orig);
	if (getsockname(c->cfd, (struct sockaddr *)&local, &llen) < 0) {
		snprintf(why, why_len, "getsockname: %s", strerror(errno));
		return -1;
	}
	int level = local.ss_family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP;
	if (getsockopt(c->cfd, level, SO_ORIGINAL_DST, &orig, &olen) < 0) {
		if (errno == ENOENT)
			return 0; /* no NAT entry: not redirected */
		snprintf(why, why_len, "SO_ORIGINAL_DST: %s", strerror(errno));
		return -1;
	}
	struct net_addr a = { .family = orig.ss_family };
	if (orig.ss_family == AF_INET) {
		const struct sockaddr_in *o = (const struct sockaddr_in *)&orig;
		const struct sockaddr_in *l = (const struct sockaddr_in *)&local;
		if (o->sin_addr.s_addr == l->sin_addr.s_addr && o->sin_port == l->sin_port)
			return 0;
		memcpy(a.a, &o->sin_addr, 4);
		c->tport = ntohs(o->sin_port);
	} else if (orig.ss_family == AF_INET6) {
		const struct sockaddr_in6 *o = (const struct sockaddr_in6 *)&orig;
		const struct sockaddr_in6 *l = (const struct sockaddr_in6 *)&local;
		if (!memcmp(&o->sin6_addr, &l->sin6_addr, 16) && o->sin6_port == l->sin6_port)
			return 0;
		memcpy(a.a, &o->sin6_addr, 16);
		c->tport = ntohs(o->sin6_port);
	} else {
		snprintf(why, why_len, "original destination of family %d", orig.ss_family);
		return -1;
	}
	if (a.family == AF_INET && dns_synth_is_synthetic(a.a)) {
		/* One of our DNS answers: the name it stands for. */
		if (!dns_synth_lookup_addr(synth, a.a, c->thost, sizeof(c->thost))) {
			addr_format(&a, c->thost, sizeof(c->thost));
			snprintf(why, why_len, "%s was never given out by the sandbox's DNS", c->thost);
			return -1;
		}
	} else {
		addr_format(&a, c->thost, sizeof(c->thost));
	}
	c->redirected = true;
	return 1;
}

/* A redirected connection: TLS (by its first byte, a handshake record)
 * is a tunnel to the destination, anything else is read as HTTP/1.1. */
static void serve_redirected(struct conn *c)
{
	char why[256];
	int r = original_destination(c, why, sizeof(why));
	if (r == 0) {
		serve_requests(c);
		return;
	}
	if (r < 0) {
		record(&(struct rec){ .decision = "deny", .kind = "transparent", .host = c->thost[0] ? c->thost : NULL,
				      .port = c->tport, .reason = why });
		return;
	}
	unsigned char first;
	ssize_t n;
	while ((n = recv(c->cfd, &first, 1, MSG_PEEK)) < 0 && fiber_again(c->cfd, POLLIN))
		;
	if (n != 1)
		return;
	if (first == 0x16) {
		open_tunnel(c, c->thost, c->tport, false);
		return;
	}
	serve_requests(c);
}

/* The sandbox's DNS: names an endpoint matches get a synthetic address
 * that the proxy maps back when the agent connects to it; the query never
 * leaves the proxy, so no name the agent makes up reaches a resolver
 * outside (no DNS exfiltration). Anything else gets NXDOMAIN and a
 * record. */
static void dns_answer(const uint8_t *pkt, size_t len, const struct sockaddr_storage *from, socklen_t flen)
{
	const struct policy_network *net = &cfg->policy->network;
	struct dns_query q;
	int r = dns_parse_query(pkt, len, &q);
	if (r < 0) {
		record(&(struct rec){ .decision = "deny", .kind = "dns",
				      .reason = r == -EPROTO ? "not a standard query" : "malformed DNS query" });
		return;
	}
	struct rec rec = { .decision = "deny", .kind = "dns", .method = dns_type_name(q.qtype), .host = q.name };
	const struct broker_cred *bc;
	struct net_decision d = { 0 };
	char what[128], reason[320];
	int rcode = DNS_NXDOMAIN;
	uint8_t a4[4];
	const uint8_t *answer_a = NULL;
	if (q.qclass != 1) {
		rcode = DNS_REFUSED;
		rec.reason = "query class is not IN";
	} else if (cfg->dlp && dlp_scan(cfg->dlp, (const uint8_t *)q.name, strlen(q.name), what, sizeof(what))) {
		snprintf(reason, sizeof(reason), "the name carries %s", what);
		rec.kind = "leak";
		rec.host = "(withheld: it carries a secret)";
		rec.reason = reason;
	} else if ((bc = cfg->broker ? broker_find(cfg->broker, q.name, strlen(q.name)) : NULL)) {
		rec.kind = "credential_misuse";
		rec.credential = bc->pol->name;
		rec.reason = "a credential's placeholder in a DNS name";
	} else if (!netpol_decide_name(net, q.name, &d)) {
		rec.rule = d.rule;
		rec.reason = d.reason;
	} else {
		rec.rule = d.rule;
		rec.decision = "allow";
	}
	/* Observe mode answers a name the policy would refuse as if it were
	 * allowed (the connection that follows is decided, and let through,
	 * on its own). */
	if (q.qclass == 1 && strcmp(rec.decision, "deny") == 0 && cfg->observe)
		rec.observed = true;
	if (q.qclass == 1 && (strcmp(rec.decision, "allow") == 0 || rec.observed)) {
		rcode = DNS_NOERROR;
		if (q.qtype == 1 /* A */) {
			r = dns_synth_lookup_name(synth, q.name, a4);
			if (r < 0) {
				rcode = DNS_SERVFAIL;
				rec.decision = "deny";
				rec.observed = false;
				rec.reason = "the synthetic address pool is exhausted";
			} else {
				answer_a = a4;
			}
		}
		/* Any other type of an allowed name: an empty answer. The
		 * agent connects by IPv4 to a synthetic address; the proxy
		 * resolves the real name itself. */
	}
	uint8_t out[600];
	ssize_t n = dns_build_answer(pkt, &q, rcode, answer_a, 300, out, sizeof(out));
	if (n > 0)
		(void)!sendto(cfg->dns_fd, out, (size_t)n, MSG_DONTWAIT, (const struct sockaddr *)from, flen);
	record(&rec);
}

static void *dns_main(void *arg)
{
	(void)arg;
	for (;;) {
		uint8_t pkt[1500];
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(cfg->dns_fd, pkt, sizeof(pkt), MSG_TRUNC, (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno != EINTR)
				usleep(10000);
			continue;
		}
		if ((size_t)n > sizeof(pkt))
			continue; /* truncated: no query is this long */
		dns_answer(pkt, (size_t)n, &from, flen);
	}
	return NULL;
}

static void conn_main(void *arg)
{
	struct conn *c = arg;
	fiber_fd_own(c->cfd);
	set_timeout(c->cfd, PROXY_HEAD_SECONDS);
	c->deadline = time(NULL) + PROXY_TOTAL_SECONDS;
	if (cfg->transparent)
		serve_redirected(c);
	else
		serve_requests(c);
	upstream_close(c);
	if (c->cssl) {
		SSL_shutdown(c->cssl);
		SSL_free(c->cssl);
	}
	fiber_fd_close(c->cfd);
	buf_free(&c->in);
	free(c);
	atomic_fetch_sub(&active, 1);
}

/* A connection the proxy takes: its fiber, or a 503 when it holds its
 * bound of connections already. */
static void admit(int fd, unsigned *next)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* The agent's end is in the sandbox's network namespace, on this
	 * host. */
	local_congestion(fd);
	if ((unsigned)atomic_fetch_add(&active, 1) >= max_conns) {
		atomic_fetch_sub(&active, 1);
		static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 36\r\n"
					   "Connection: close\r\n\r\nairlock: too many proxy connections\n";
		(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	struct conn *c = calloc(1, sizeof(*c));
	if (c) {
		c->cfd = fd;
		c->ufd = -1;
	}
	/* Round the workers: each gets every n-th connection. */
	if (!c || !fiber_spawn_on((*next)++, conn_main, c)) {
		free(c);
		close(fd);
		atomic_fetch_sub(&active, 1);
	}
}

/* Worker 0's first fiber takes the connections for every worker. IPv6
 * connections only exist in transparent mode, redirected to [::1]. */
static void accept_main(void)
{
	struct pollfd lfds[2] = { { .fd = cfg->listen_fd, .events = POLLIN },
				  { .fd = cfg->listen6_fd, .events = POLLIN } };
	nfds_t nl = cfg->listen6_fd >= 0 ? 2 : 1;
	unsigned next = 0;
	for (;;) {
		if (fiber_poll(lfds, nl, -1) <= 0)
			continue;
		for (nfds_t i = 0; i < nl; i++) {
			if (!lfds[i].revents)
				continue;
			/* A burst is taken whole, but bounded: the
			 * connections already taken get their turn. */
			for (int k = 0; k < 64; k++) {
				int fd = accept4(lfds[i].fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (fd >= 0) {
					admit(fd, &next);
					continue;
				}
				if (errno == EINTR || errno == ECONNABORTED)
					continue;
				if (errno == EAGAIN)
					break;
				if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
					fiber_sleep(10); /* out of resources: back off, do not spin */
					break;
				}
				_exit(1);
			}
		}
	}
}

static void worker_first(unsigned index, void *arg)
{
	(void)arg;
	in_worker = true;
	if (index == 0)
		accept_main();
}

static void drop_privileges(void)
{
	if (geteuid() == 0) {
		/* Parse the agent's bytes as nobody of importance. */
		if (setgroups(0, NULL) < 0 || setresgid(cfg->drop_gid, cfg->drop_gid, cfg->drop_gid) < 0 ||
		    setresuid(cfg->drop_uid, cfg->drop_uid, cfg->drop_uid) < 0)
			_exit(1);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0)
		_exit(1);
}

static void wipe_and_exit(int sig)
{
	(void)sig;
	const struct broker *b = cfg ? cfg->broker : NULL;
	for (size_t i = 0; b && i < b->n; i++)
		if (b->v[i].secret)
			explicit_bzero(b->v[i].secret, b->v[i].secret_len);
	_exit(0);
}

/* SIGTERM: the supervisor ends the session. The workers send the records
 * they hold, then the last of them wipes the secrets and exits
 * (records_idle); before the loop runs nothing is held. */
static void on_term(int sig)
{
	if (!loop_started)
		wipe_and_exit(sig);
	atomic_store(&stopping, true);
	fiber_wake_all();
}

__attribute__((noreturn)) void proxy_main(const struct proxy_config *config)
{
	cfg = config;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "airlock-proxy");
	signal(SIGPIPE, SIG_IGN);
	/* The supervisor ends the session with SIGTERM: send the records,
	 * wipe the secrets, then go. */
	struct sigaction term = { .sa_handler = on_term };
	sigfillset(&term.sa_mask);
	sigaction(SIGTERM, &term, NULL);

	struct error err = { 0 };
	upstream_ctx = tls_client_ctx_new(cfg->policy->network.upstream_ca, &err);
	if (!upstream_ctx) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	if (mcp_http_init(cfg->policy, cfg->broker, record_mcp_line, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	drop_privileges();
	/* Its own sandbox before any thread starts and before the agent's
	 * first byte. */
	if (cfg->contain && cfg->contain(cfg->policy, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	if (cfg->step_up_fd >= 0 && mcp_http_step_up_serve(cfg->step_up_fd, cfg->step_up_path, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	body_budget = proxy_body_budget(cfg->policy);
	max_conns = proxy_max_connections(cfg->policy);

	if (cfg->transparent) {
		pthread_attr_t attr;
		pthread_t t;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		if (!(synth = dns_synth_new(PROXY_DNS_NAMES)) || cfg->dns_fd < 0 ||
		    pthread_create(&t, &attr, dns_main, NULL) != 0)
			_exit(1);
		pthread_attr_destroy(&attr);
	}
	/* The listeners are waited on by the loop: an accept that found
	 * nothing must not block the worker. */
	if (fcntl(cfg->listen_fd, F_SETFL, O_NONBLOCK) < 0 ||
	    (cfg->listen6_fd >= 0 && fcntl(cfg->listen6_fd, F_SETFL, O_NONBLOCK) < 0))
		_exit(1);
	fiber_set_idle(records_idle);
	loop_started = 1;
	if (fiber_main(0, worker_first, NULL, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	_exit(1);
}
