/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy's two sides of a connection: reading and writing,
 * plain or TLS, in the connection's fiber; connecting upstream to an
 * address that was checked; relaying bytes both ways once a connection
 * is no longer HTTP (an upgraded WebSocket, a tunnel not intercepted).
 */
#include "proxy/proxy_internal.h"

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
int proxy_ssl_handshake(SSL *ssl, int fd, int (*step)(SSL *))
{
	for (;;) {
		ERR_clear_error();
		int r = step(ssl);
		if (r == 1 || !ssl_wait(fd, ssl, r))
			return r;
	}
}

ssize_t proxy_io_read(int fd, SSL *ssl, void *p, size_t n)
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

bool proxy_io_write(int fd, SSL *ssl, const void *p, size_t n)
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

/* The read that follows our own write on the same exchange: the answer to
 * a request just sent upstream, a keep-alive client's next request once
 * it has its answer. Those bytes are not there yet, and a read first
 * would only learn EAGAIN, for a system call of the few a request costs.
 * Plain sockets only: a TLS session may hold part of a record already. */
ssize_t proxy_io_read_after_write(int fd, SSL *ssl, void *p, size_t n)
{
	if (!ssl && fiber_wait(fd, POLLIN, fiber_io_timeout(fd)) == 0) {
		errno = EAGAIN;
		return -1;
	}
	return proxy_io_read(fd, ssl, p, n);
}

/* For a connection that never leaves this host. Congestion control has
 * nothing to do on loopback, and a pacing one (BBR, when it is the host's
 * default) spaces our sends out with timers and lets them arrive out of
 * order, which the receiver then takes for loss: a relay through two such
 * connections moved a third less than one. Reno does not pace, and every
 * user may choose it (it is always in tcp_allowed_congestion_control). */
void proxy_local_congestion(int fd)
{
	static const char reno[] = "reno";
	(void)setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, reno, sizeof(reno) - 1);
}

/* ---- upstream ---- */

/* TLS to the server over c->ufd, verified for host; reason says why not. */
bool proxy_upstream_tls_start(struct conn *c, const char *host, uint16_t port, char *reason, size_t len)
{
	struct error err = { 0 };
	c->ussl = SSL_new(proxy_upstream_ctx);
	if (c->ussl && tls_client_set_host(c->ussl, host, &err) == 0 && SSL_set_fd(c->ussl, c->ufd) &&
	    proxy_ssl_handshake(c->ussl, c->ufd, SSL_connect) == 1)
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

/* Resolve host (or take its address), check every address against the
 * SSRF rules, connect to the first that answers. The address connected to
 * is one that was checked: there is no second lookup to rebind. */
int proxy_upstream_connect(const char *host, bool is_ip, const struct net_addr *ip, uint16_t port,
			    struct net_decision *d, char *reason, size_t reason_len, struct net_decision *would)
{
	would->reason[0] = '\0';
	const struct policy_network *net = &proxy_cfg->policy->network;
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
			if (proxy_cfg->observe) {
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
			proxy_local_congestion(fd);
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

/* ---- relaying both ways ---- */

/* Relay bytes both ways until either side closes or goes idle (an
 * upgraded WebSocket, plain or inside an intercepted tunnel). */
void proxy_relay(struct conn *c, uint64_t *up, uint64_t *down)
{
	char *b = malloc(RELAY_CHUNK);
	if (!b)
		return;
	/* Bytes the agent sent ahead of the switch belong upstream. */
	if (c->in.len) {
		if (!proxy_io_write(c->ufd, c->ussl, c->in.data, c->in.len))
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
			ssize_t n = proxy_io_read(c->cfd, c->cssl, b, RELAY_CHUNK);
			if (n <= 0 || !proxy_io_write(c->ufd, c->ussl, b, (size_t)n))
				break;
			*up += (uint64_t)n;
		}
		if (up_p || (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = proxy_io_read(c->ufd, c->ussl, b, RELAY_CHUNK);
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
void proxy_splice_relay(int a, int b, uint64_t *ab, uint64_t *ba)
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
