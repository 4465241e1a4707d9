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
#include "proxy/proxy_internal.h"

const struct proxy_config *proxy_cfg;
SSL_CTX *proxy_upstream_ctx;
uint64_t proxy_body_budget_bytes;
static atomic_int active;
static unsigned max_conns = PROXY_MAX_CONNECTIONS;

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
		w = write(proxy_cfg->records_fd, p, n);
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
bool proxy_record_line(const char *line, size_t len, bool at_once)
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

/* A record of the MCP gateway (mcp_http.c), already one line of at most
 * PIPE_BUF bytes: written at once, behind the worker's earlier ones, for
 * the gateway lets its message pass only once the record is out. */
static bool record_mcp_line(const char *line, size_t len)
{
	return proxy_record_line(line, len, true);
}

/* ---- the budget of request bodies and connections ---- */

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
		proxy_serve_requests(c);
		return;
	}
	if (r < 0) {
		proxy_record(&(struct rec){ .decision = "deny", .kind = "transparent", .host = c->thost[0] ? c->thost : NULL,
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
		proxy_open_tunnel(c, c->thost, c->tport, false);
		return;
	}
	proxy_serve_requests(c);
}

/* The sandbox's DNS: names an endpoint matches get a synthetic address
 * that the proxy maps back when the agent connects to it; the query never
 * leaves the proxy, so no name the agent makes up reaches a resolver
 * outside (no DNS exfiltration). Anything else gets NXDOMAIN and a
 * record. */
static void dns_answer(const uint8_t *pkt, size_t len, const struct sockaddr_storage *from, socklen_t flen)
{
	const struct policy_network *net = &proxy_cfg->policy->network;
	struct dns_query q;
	int r = dns_parse_query(pkt, len, &q);
	if (r < 0) {
		proxy_record(&(struct rec){ .decision = "deny", .kind = "dns",
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
	} else if (proxy_cfg->dlp && dlp_scan(proxy_cfg->dlp, (const uint8_t *)q.name, strlen(q.name), what, sizeof(what))) {
		snprintf(reason, sizeof(reason), "the name carries %s", what);
		rec.kind = "leak";
		rec.host = "(withheld: it carries a secret)";
		rec.reason = reason;
	} else if ((bc = proxy_cfg->broker ? broker_find(proxy_cfg->broker, q.name, strlen(q.name)) : NULL)) {
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
	if (q.qclass == 1 && strcmp(rec.decision, "deny") == 0 && proxy_cfg->observe)
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
		(void)!sendto(proxy_cfg->dns_fd, out, (size_t)n, MSG_DONTWAIT, (const struct sockaddr *)from, flen);
	proxy_record(&rec);
}

static void *dns_main(void *arg)
{
	(void)arg;
	for (;;) {
		uint8_t pkt[1500];
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(proxy_cfg->dns_fd, pkt, sizeof(pkt), MSG_TRUNC, (struct sockaddr *)&from, &flen);
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
	if (proxy_cfg->transparent)
		serve_redirected(c);
	else
		proxy_serve_requests(c);
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
	proxy_local_congestion(fd);
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
	struct pollfd lfds[2] = { { .fd = proxy_cfg->listen_fd, .events = POLLIN },
				  { .fd = proxy_cfg->listen6_fd, .events = POLLIN } };
	nfds_t nl = proxy_cfg->listen6_fd >= 0 ? 2 : 1;
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
		if (setgroups(0, NULL) < 0 || setresgid(proxy_cfg->drop_gid, proxy_cfg->drop_gid, proxy_cfg->drop_gid) < 0 ||
		    setresuid(proxy_cfg->drop_uid, proxy_cfg->drop_uid, proxy_cfg->drop_uid) < 0)
			_exit(1);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0)
		_exit(1);
}

static void wipe_and_exit(int sig)
{
	(void)sig;
	const struct broker *b = proxy_cfg ? proxy_cfg->broker : NULL;
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
	proxy_cfg = config;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "airlock-proxy");
	signal(SIGPIPE, SIG_IGN);
	/* The supervisor ends the session with SIGTERM: send the records,
	 * wipe the secrets, then go. */
	struct sigaction term = { .sa_handler = on_term };
	sigfillset(&term.sa_mask);
	sigaction(SIGTERM, &term, NULL);

	struct error err = { 0 };
	proxy_upstream_ctx = tls_client_ctx_new(proxy_cfg->policy->network.upstream_ca, &err);
	if (!proxy_upstream_ctx) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	if (mcp_http_init(proxy_cfg->policy, proxy_cfg->broker, record_mcp_line, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	drop_privileges();
	/* Its own sandbox before any thread starts and before the agent's
	 * first byte. */
	if (proxy_cfg->contain && proxy_cfg->contain(proxy_cfg->policy, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	if (proxy_cfg->step_up_fd >= 0 && mcp_http_step_up_serve(proxy_cfg->step_up_fd, proxy_cfg->step_up_path, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	proxy_body_budget_bytes = proxy_body_budget(proxy_cfg->policy);
	max_conns = proxy_max_connections(proxy_cfg->policy);

	if (proxy_cfg->transparent) {
		pthread_attr_t attr;
		pthread_t t;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		if (!(synth = dns_synth_new(PROXY_DNS_NAMES)) || proxy_cfg->dns_fd < 0 ||
		    pthread_create(&t, &attr, dns_main, NULL) != 0)
			_exit(1);
		pthread_attr_destroy(&attr);
	}
	/* The listeners are waited on by the loop: an accept that found
	 * nothing must not block the worker. */
	if (fcntl(proxy_cfg->listen_fd, F_SETFL, O_NONBLOCK) < 0 ||
	    (proxy_cfg->listen6_fd >= 0 && fcntl(proxy_cfg->listen6_fd, F_SETFL, O_NONBLOCK) < 0))
		_exit(1);
	fiber_set_idle(records_idle);
	loop_started = 1;
	if (fiber_main(0, worker_first, NULL, &err) < 0) {
		dprintf(2, "airlock: egress proxy: %s\n", err.msg);
		_exit(1);
	}
	_exit(1);
}

