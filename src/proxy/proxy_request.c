/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy's request loop: reading a head, deciding the request,
 * holding and scanning its body, forwarding it and relaying the response
 * (forward proxy, redirected, or inside an intercepted tunnel). This is
 * the per-request path: its helpers stay static here so they inline.
 */
#include "proxy/proxy_internal.h"

/* Request bodies held now, against the session's budget: without it an
 * agent under a small memory limit made the proxy, outside its cgroup,
 * hold PROXY_MAX_CONNECTIONS bodies of max_body each (hundreds of MB). */
static _Atomic uint64_t body_held;

/* ---- the budget of request bodies ---- */

/* Take n bytes of the budget for a body about to be held; false when the
 * budget has not that much left (the body is then refused, never held). */
static bool body_reserve(uint64_t n, uint64_t *charged)
{
	uint64_t held = atomic_load(&body_held);
	do
		if (n > proxy_body_budget_bytes - held)
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

/* An idle upstream connection that is readable holds bytes no request
 * asked for (a response smuggled behind a bodiless one, arriving late) or
 * was closed by the server: either way it must not carry the next
 * request, whose answer would be those bytes. */
static bool upstream_stale(const struct conn *c)
{
	struct pollfd p = { .fd = c->ufd, .events = POLLIN };
	return poll(&p, 1, 0) != 0;
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
				proxy_answer(c, status, "malformed request", err.msg);
				proxy_record(&(struct rec){ .decision = "deny", .kind = "malformed", .reason = err.msg,
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
				    proxy_io_read_after_write(c->cfd, c->cssl, c->in.data + c->in.len, 16384) :
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
		if (used && !proxy_io_write(c->ufd, c->ussl, c->in.data, used))
			return 0;
		*up += used;
		buf_consume(&c->in, used);
		if (r == 1)
			return 1;
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
	if (!proxy_cfg->dlp)
		return false;
	if (dlp_scan(proxy_cfg->dlp, (const uint8_t *)req->path, req->path_len, what, len))
		return true;
	if (req->query && dlp_scan(proxy_cfg->dlp, (const uint8_t *)req->query, req->query_len, what, len))
		return true;
	if (dlp_scan(proxy_cfg->dlp, (const uint8_t *)req->host, strlen(req->host), what, len))
		return true;
	for (size_t i = 0; i < req->n_headers; i++)
		if (dlp_scan(proxy_cfg->dlp, (const uint8_t *)req->headers[i].value, req->headers[i].value_len, what, len))
			return true;
	if (req->body != HTTP_BODY_CHUNKED)
		return body->len && dlp_scan(proxy_cfg->dlp, (const uint8_t *)body->data, body->len, what, len);
	/* The scanner reads the body the upstream will read: chunk framing
	 * removed, or a secret split over two chunks (or one byte a chunk,
	 * or cut by a chunk-size line) passes. The framing is scanned too,
	 * as it travels (chunk extensions carry any bytes). A prefix of a
	 * streamed body decodes as far as it goes. */
	if (body->len && dlp_scan(proxy_cfg->dlp, (const uint8_t *)body->data, body->len, what, len))
		return true;
	struct buf plain = { 0 };
	struct http_chunked ch = { 0 };
	size_t used = 0;
	int r = http_chunked_decode(&ch, body->data, body->len, &used, &plain);
	bool hit = r == -ENOMEM || (plain.len && dlp_scan(proxy_cfg->dlp, (const uint8_t *)plain.data, plain.len, what, len));
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
	ssize_t n = after_write ? proxy_io_read_after_write(c->ufd, c->ussl, at, room) : proxy_io_read(c->ufd, c->ussl, at, room);
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

/* The rest of a Content-Length body, upstream to agent, through rb (empty
 * here: every byte in it was body). Returns the bytes that did not come. */
static uint64_t relay_length_body(struct conn *c, struct buf *rb, uint64_t left, uint64_t *down)
{
	/* Plain on both sides: move a large body through a pipe, never
	 * copying it into user space. A pipe costs four system calls of its
	 * own, more than copying a body of a few reads. */
	if (left >= RELAY_CHUNK && !c->ussl && !c->cssl)
		left -= splice_body(c->ufd, c->cfd, left, down);
	while (left) {
		size_t room = rb->cap - 1;
		ssize_t n = proxy_io_read(c->ufd, c->ussl, rb->data, left < room ? (size_t)left : room);
		if (n <= 0 || !cwrite(c, rb->data, (size_t)n))
			break;
		left -= (uint64_t)n;
		*down += (uint64_t)n;
	}
	return left;
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
		proxy_answer(c, 502, "bad gateway", "the upstream answered 101 without completing the WebSocket handshake");
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
		uint64_t left = relay_length_body(c, &rb, resp.content_length - with, down);
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
		while ((n = proxy_io_read(c->ufd, c->ussl, rb.data, rb.cap - 1)) > 0 && cwrite(c, rb.data, (size_t)n))
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
	proxy_answer(c, 502, "bad gateway", "the upstream server's response was not valid HTTP/1.1");
out:
	upstream_close(c);
	buf_free(&rb);
	return false;
}

static ssize_t scan_up_read(void *ctx, void *p, size_t n)
{
	struct conn *c = ctx;
	return proxy_io_read(c->ufd, c->ussl, p, n);
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
	respscan_forward(proxy_cfg->broker->echo, &io, req->method, &res);
	rec->down = res.down;
	rec->status = res.status;
	if (!res.upstream_ok)
		upstream_close(c);
	if (res.refused) {
		if (!res.sent)
			proxy_answer(c, 502, "response withheld", res.reason);
		snprintf(why, why_len, "%s", res.reason);
		rec->kind = "response_leak";
		rec->reason = why;
		rec->observed = false;
		rec->status = res.sent ? res.status : 502;
		return false;
	}
	if (res.bad_gateway)
		proxy_answer(c, 502, "bad gateway", "the upstream server's response was not valid HTTP/1.1");
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
	if (!proxy_cfg->identity || head->len < 4 || identity_audience(c->cssl ? "https" : "http", host, port, aud) < 0)
		return 0;
	size_t end = head->len;
	head->len -= 2; /* before the empty line */
	int r = buf_puts(head, IDENTITY_HEADER_NAME ": ");
	if (r == 0 && (r = identity_token_get(proxy_cfg->identity, aud, time(NULL), head)) == -EKEYEXPIRED) {
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
	return proxy_io_read(m->c->ufd, m->c->ussl, p, n);
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
	int fd = proxy_upstream_connect(m->host, m->is_ip, m->ip, m->port, &d, reason, sizeof(reason), &would);
	if (fd < 0) {
		rec.reason = reason;
		proxy_record(&rec);
		return false;
	}
	SSL *ssl = NULL;
	struct error err = { 0 };
	bool ok = true;
	if (m->c->cssl) {
		ssl = SSL_new(proxy_upstream_ctx);
		ok = ssl && tls_client_set_host(ssl, m->host, &err) >= 0 && SSL_set_fd(ssl, fd) &&
		     proxy_ssl_handshake(ssl, fd, SSL_connect) == 1;
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
		ok = e == 0 && proxy_io_write(fd, ssl, head.data, head.len) && proxy_io_write(fd, ssl, body, len);
	}
	if (ok) {
		/* The answer (202) is read and dropped, bounded. */
		char tmp[4096];
		size_t total = 0;
		ssize_t n;
		while (total < 65536 && (n = proxy_io_read(fd, ssl, tmp, sizeof(tmp))) > 0) {
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
	proxy_record(&rec);
	return ok;
}

/* What the steps of one request share (handle_request). rec's strings
 * point into host, reason and obs. */
struct req_state {
	struct conn *c;
	struct http_request *req;
	const struct policy_network *net;
	struct rec rec;
	char host[HTTP_MAX_HOST + 1], reason[512];
	struct net_addr ip;
	int kind; /* addr_normalize_host's: 1 for an address */
	uint16_t port;
	const struct policy_endpoint *ep;
	struct net_decision d, would;
	struct buf body;
	uint64_t charged; /* of the body budget, released with body */
	char obs[512];    /* observe mode: the reason of the denial let through */
	struct mcp_http_exchange *mx; /* handle_request's, freed there */
	struct mcp_ctx mc;
	struct body_rest rest;
	bool mcp, injected, scan_back, answered_early, keep;
	struct buf side; /* the credentials' injected header values */
};

/* How a step of a request ends: on to the next step; refused (the
 * caller records it and closes the connection); or over (recorded where
 * it had to be, s->keep says whether the connection goes on). */
enum step { STEP_ON, STEP_DENY, STEP_OUT };

/* Refuse with an answer of the proxy's own and the record's reason. */
static enum step refuse_request(struct req_state *s, int status, const char *what, const char *answer,
				const char *reason)
{
	proxy_answer(s->c, status, what, answer);
	s->rec.reason = reason;
	return STEP_DENY;
}

/* Where the request goes: the Host against the tunnel or the redirected
 * connection it came on, or the absolute-form target of a proxy
 * request. */
static enum step decide_destination(struct req_state *s)
{
	struct conn *c = s->c;
	struct http_request *req = s->req;
	struct rec *rec = &s->rec;

	s->kind = addr_normalize_host(req->host, s->host, sizeof(s->host), &s->ip);
	rec->host = s->kind >= 0 ? s->host : req->host;
	if (s->kind < 0)
		return refuse_request(s, 400, "invalid host", req->host, "invalid host");
	if (c->cssl) {
		/* Inside an intercepted tunnel the Host must be the tunnel's. */
		s->port = c->tport;
		if (strcmp(s->host, c->thost) != 0 || (req->port_explicit && req->port != c->tport)) {
			snprintf(s->reason, sizeof(s->reason), "Host %s disagrees with the tunnel's %s:%u", s->host,
				 c->thost, c->tport);
			if (!proxy_let_through(rec, s->obs, sizeof(s->obs), NULL, NULL, s->reason))
				return refuse_request(s, 403, "denied", s->reason, s->reason);
		}
		s->ep = c->tep;
		rec->port = s->port;
	} else if (c->redirected) {
		/* Redirected: the request goes where the agent connected, so
		 * its Host must name that place; the decision is on it. */
		s->port = c->tport;
		rec->port = s->port;
		rec->kind = "transparent";
		if (strcmp(s->host, c->thost) != 0 || (req->port_explicit && req->port != c->tport)) {
			snprintf(s->reason, sizeof(s->reason), "Host %s disagrees with the connection's destination %s:%u",
				 s->host, c->thost, c->tport);
			if (!proxy_let_through(rec, s->obs, sizeof(s->obs), NULL, NULL, s->reason))
				return refuse_request(s, 403, "denied", s->reason, s->reason);
		}
	} else {
		if (req->form != HTTP_TARGET_ABSOLUTE || strcmp(req->scheme, "http") != 0)
			return refuse_request(s, 400, "not a proxy request",
					      "send absolute-form http:// requests, or CONNECT for https",
					      "not a proxy request");
		s->port = req->port;
		rec->port = s->port;
	}
	return STEP_ON;
}

/* The policy's decision on the endpoint (outside a tunnel), then on the
 * method, path and query, and what the head asks of the body. */
static enum step decide_head(struct req_state *s)
{
	struct conn *c = s->c;
	struct http_request *req = s->req;
	struct rec *rec = &s->rec;
	struct net_decision *d = &s->d;

	if (!c->cssl) {
		/* Outside a tunnel the endpoint is decided here. */
		if (!netpol_decide_host(s->net, s->host, s->port, d)) {
			snprintf(s->reason, sizeof(s->reason), "%s %s:%u: %s", req->method, s->host, s->port, d->reason);
			if (!proxy_let_through(rec, s->obs, sizeof(s->obs), NULL, d->rule, d->reason)) {
				rec->rule = d->rule;
				return refuse_request(s, 403, "denied", s->reason, d->reason);
			}
		}
		s->ep = d->ep; /* NULL when observe mode let a denied host through */
	}
	if (s->ep && !netpol_decide_request(s->ep, req->method, req->path, req->path_len, req->query, req->query_len,
					    req->upgrade_websocket, d)) {
		snprintf(s->reason, sizeof(s->reason), "%s %s:%u%.*s: %s", req->method, s->host, s->port,
			 (int)(rec->target_len > 200 ? 200 : rec->target_len), req->path, d->reason);
		if (!proxy_let_through(rec, s->obs, sizeof(s->obs), NULL, d->rule, d->reason)) {
			rec->rule = d->rule;
			return refuse_request(s, 403, "denied", s->reason, d->reason);
		}
	}
	if (!rec->observed)
		rec->rule = d->rule;
	if (req->upgrade && !req->upgrade_websocket)
		return refuse_request(s, 403, "denied", "only WebSocket upgrades can be allowed",
				      "upgrade to a protocol other than websocket");
	char coding[80];
	if (req->body != HTTP_BODY_NONE && compressed(req, coding, sizeof(coding)) && !s->net->allow_compressed) {
		snprintf(s->reason, sizeof(s->reason), "compressed body (%s)", coding);
		if (!proxy_let_through(rec, s->obs, sizeof(s->obs), NULL, NULL, s->reason))
			return refuse_request(s, 415, "denied",
					      "compressed request bodies cannot be scanned for leaks "
					      "(network.leak_scan.allow_compressed is false)",
					      s->reason);
	}
	return STEP_ON;
}

/* The body: held (bounded by max_body and the session's budget) or its
 * rest streamed later, and the whole request scanned for leaks. */
static enum step take_body(struct req_state *s)
{
	struct conn *c = s->c;
	struct http_request *req = s->req;
	struct rec *rec = &s->rec;

	/* The head is decided: the agent may send the body it holds back
	 * for a 100 (its Expect never goes upstream, see build_head). */
	if (req->expect_continue && req->body != HTTP_BODY_NONE &&
	    !(req->body == HTTP_BODY_LENGTH && req->content_length == 0)) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
		if (!cwrite(c, cont, sizeof(cont) - 1))
			return STEP_OUT;
	}
	/* A git push the broker decides from its first commands may be
	 * larger than max_body: its pack (compressed) is streamed after them.
	 * Observe mode streams any body over max_body (its first max_body
	 * bytes are scanned). */
	bool may_stream = proxy_cfg->broker && c->cssl && broker_git_push(proxy_cfg->broker, s->host, s->port, req);
	/* An MCP message is checked whole: never streamed past a bound. */
	s->mcp = s->ep && s->ep->mcp_server;
	uint64_t max = s->mcp && s->net->max_body > MCP_HTTP_MAX_MESSAGE ? MCP_HTTP_MAX_MESSAGE : s->net->max_body;
	int cb = collect_body(c, req, max, &s->body, !s->mcp && (may_stream || proxy_cfg->observe) ? &s->rest : NULL,
			      &s->charged);
	if (cb == 4) {
		/* Fail closed on the host's memory: refused, not held, and
		 * recorded; the agent may retry once others are done. */
		snprintf(s->reason, sizeof(s->reason),
			 "the proxy holds its budget of %llu bytes of request bodies (sandbox.limits.memory, else "
			 "%llu; at least network.leak_scan.max_body)",
			 (unsigned long long)proxy_body_budget_bytes, (unsigned long long)PROXY_BODY_BUDGET_DEFAULT);
		rec->status = 503;
		return refuse_request(s, 503, "refused", s->reason, "over the proxy's budget of request bodies");
	}
	if (cb == 0 && s->mcp) {
		struct buf ans = { 0 };
		char mwhy[256];
		mcp_http_oversized(s->ep, req, &ans, mwhy, sizeof(mwhy));
		(void)cwrite(c, ans.data, ans.len);
		buf_free(&ans);
		rec->rule = s->ep->id;
		rec->reason = "MCP message over max_body";
		return STEP_DENY;
	}
	if (cb == 0)
		return refuse_request(s, 413, "denied", "the request body is larger than network.leak_scan.max_body",
				      "body over max_body");
	if (cb == 3)
		return refuse_request(s, 400, "denied", "trailer fields in a request are not forwarded",
				      "trailer fields in a request");
	if (cb < 0)
		return STEP_OUT;
	if (cb == 2 && !may_stream)
		(void)proxy_let_through(rec, s->obs, sizeof(s->obs), NULL, NULL, "body over max_body");
	/* A body streamed on after the head is one the upstream may answer
	 * before it has read (a refusal, a redirect): its rest, unscanned,
	 * must not become the next request. */
	if (cb == 2)
		req->upstream_close = true;
	char what[128];
	if (leak_check(req, &s->body, what, sizeof(what))) {
		snprintf(s->reason, sizeof(s->reason), "the request carries %s", what);
		/* The target may carry the secret itself: keep it out of the log. */
		rec->target = "(withheld: it carries a secret)";
		rec->target_len = strlen(rec->target);
		if (!proxy_let_through(rec, s->obs, sizeof(s->obs), "leak", NULL, s->reason)) {
			rec->kind = "leak";
			return refuse_request(s, 403, "leak blocked", s->reason, s->reason);
		}
	}
	return STEP_ON;
}

/* protocol: mcp: the message is decided by the MCP gateway, and what
 * goes upstream is its checked re-serialisation. */
static enum step mcp_gate(struct req_state *s)
{
	struct conn *c = s->c;
	struct http_request *req = s->req;
	struct rec *rec = &s->rec;
	struct buf fwd = { 0 }, ans = { 0 };
	char mwhy[512];

	if (!mcp_http_request(s->ep, req, s->body.data, s->body.len, c->cfd, &s->mx, &fwd, &ans, mwhy, sizeof(mwhy))) {
		bool sent = ans.len && cwrite(c, ans.data, ans.len);
		bool closes = !ans.data || strstr(ans.data, "Connection: close");
		rec->status = sent && ans.len > 12 ? atoi(ans.data + 9) : 0;
		rec->down = sent ? ans.len : 0;
		buf_free(&ans);
		buf_free(&fwd);
		snprintf(s->reason, sizeof(s->reason), "%s", mwhy);
		rec->rule = s->ep->id;
		rec->reason = s->reason;
		record_for(c, rec);
		/* A refusal the proxy answered itself (a denied tool call as
		 * its isError result) leaves the connection usable, as the
		 * server's own answer would. */
		s->keep = sent && req->keep_alive && !closes;
		return STEP_OUT;
	}
	buf_free(&ans);
	buf_free(&s->body);
	s->body = fwd;
	/* For the gateway's refusals posted to the server later: the
	 * session's headers as they are now (credentials may replace header
	 * values, and their buffer is wiped once sent). */
	copy_header(req, "Mcp-Session-Id", s->mc.session, sizeof(s->mc.session));
	copy_header(req, "MCP-Protocol-Version", s->mc.version, sizeof(s->mc.version));
	return STEP_ON;
}

/* Credentials: a placeholder becomes its secret only where one of its
 * bindings allows it, and blocks the request anywhere else. Then what a
 * credential's endpoint answers is prepared for the response scan. */
static enum step apply_credentials(struct req_state *s)
{
	struct conn *c = s->c;
	struct http_request *req = s->req;
	struct rec *rec = &s->rec;

	if (proxy_cfg->broker && proxy_cfg->broker->n) {
		struct broker_result br;
		/* Observe mode lets a misused placeholder through as the agent
		 * sent it: req is restored from this copy, so no secret goes
		 * where no binding puts it. */
		struct http_request sent = *req;
		if (broker_apply(proxy_cfg->broker, s->host, s->port, req, s->body.data, s->body.len, &s->side, &br) < 0)
			return refuse_request(s, 403, "denied", "the request's credentials cannot be applied",
					      "credentials cannot be applied");
		rec->credential = br.credential;
		if (br.verdict == BROKER_INJECT && !c->cssl) {
			br.verdict = BROKER_MISUSE;
			snprintf(br.reason, sizeof(br.reason),
				 "credential %s goes only into requests inside intercepted TLS, not plain HTTP",
				 br.credential);
		}
		if (br.verdict == BROKER_MISUSE || br.verdict == BROKER_DENY) {
			const char *k = br.verdict == BROKER_MISUSE ? "credential_misuse" : "git";
			buf_wipe(&s->side);
			if (!proxy_let_through(rec, s->obs, sizeof(s->obs), k, br.binding, br.reason)) {
				rec->kind = k;
				rec->rule = br.binding ? br.binding : rec->rule;
				snprintf(s->reason, sizeof(s->reason), "%s", br.reason);
				return refuse_request(s, 403, br.verdict == BROKER_MISUSE ? "credential misuse" : "denied",
						      br.reason, s->reason);
			}
			*req = sent;
			br.verdict = BROKER_PASS;
		}
		s->injected = br.verdict == BROKER_INJECT;
	}

	/* What a credential's endpoint answers is scanned for the secrets
	 * (respscan.h), whether or not this request carried one. TRACE
	 * would echo the request, secret and all: refused outright. */
	s->scan_back = proxy_cfg->broker && !s->mx && broker_bound(proxy_cfg->broker, s->host, s->port);
	if (s->scan_back && strcasecmp(req->method, "TRACE") == 0) {
		buf_wipe(&s->side);
		rec->kind = "response_leak";
		return refuse_request(s, 403, "denied", "TRACE to a credential's endpoint would echo the credential",
				      "TRACE to a credential's endpoint");
	}
	if (s->scan_back && respscan_prepare(req) < 0) {
		buf_wipe(&s->side);
		return refuse_request(s, 431, "denied", "too many header fields to ask for an unencoded response",
				      "too many header fields");
	}
	return STEP_ON;
}

/* Upstream: reuse the connection to the same place, else connect. An
 * idle upstream that is readable was closed by the server or holds bytes
 * no request asked for (upstream_stale): it is replaced, and the bytes go
 * with it. Inside an intercepted tunnel the new connection goes to the
 * tunnel's own host and port, checked as the first was; this is also how
 * a tunnel outlives a server's idle timeout or a long step-up wait. */
static enum step open_upstream(struct req_state *s)
{
	struct conn *c = s->c;
	struct rec *rec = &s->rec;
	bool reopen = c->cssl ? !c->ussl || SSL_pending(c->ussl) > 0 || upstream_stale(c) :
				c->ufd < 0 || upstream_stale(c) || strcmp(c->uhost, s->host) != 0 || c->uport != s->port;
	if (!reopen)
		return STEP_ON;
	char uhost[HTTP_MAX_HOST + 1];
	struct net_addr uip = s->ip;
	int ukind = s->kind;
	uint16_t uport = s->port;
	snprintf(uhost, sizeof(uhost), "%s", s->host);
	if (c->cssl) {
		ukind = addr_normalize_host(c->thost, uhost, sizeof(uhost), &uip);
		uport = c->tport;
	}
	upstream_close(c);
	int fd = -EINVAL;
	if (ukind < 0) {
		snprintf(s->reason, sizeof(s->reason), "the tunnel's host %s is invalid", c->thost);
	} else {
		fd = proxy_upstream_connect(uhost, ukind == 1, &uip, uport, &s->d, s->reason, sizeof(s->reason), &s->would);
		if (s->would.reason[0])
			(void)proxy_let_through(rec, s->obs, sizeof(s->obs), NULL, s->would.rule, s->would.reason);
	}
	if (fd >= 0) {
		c->ufd = fd;
		if (c->cssl && !proxy_upstream_tls_start(c, uhost, uport, s->reason, sizeof(s->reason))) {
			upstream_close(c);
			fd = -EIO;
		}
	}
	if (fd < 0) {
		proxy_answer(c, fd == -EACCES ? 403 : 502, fd == -EACCES ? "denied" : "bad gateway", s->reason);
		if (!rec->observed) {
			rec->reason = s->reason;
			if (fd == -EACCES)
				rec->rule = s->d.rule;
		}
		buf_wipe(&s->side);
		return STEP_DENY;
	}
	snprintf(c->uhost, sizeof(c->uhost), "%s", uhost);
	c->uport = uport;
	return STEP_ON;
}

/* The head (with the identity header) and the body upstream, and the
 * rest of a streamed body. False, recorded, when they could not go. */
static bool send_upstream(struct req_state *s)
{
	struct conn *c = s->c;
	struct http_request *req = s->req;
	struct rec *rec = &s->rec;
	struct buf head = { 0 };
	int unsigned_id = 0;
	bool ok = http_build_upstream_head(req, req->upgrade_websocket, &head) == 0 &&
		  (!s->mx || mcp_http_fix_head(&head, s->body.len > 0, s->body.len) == 0) &&
		  (unsigned_id = add_identity(c, s->host, s->port, &head)) == 0 &&
		  proxy_io_write(c->ufd, c->ussl, head.data, head.len) &&
		  (!s->body.len || proxy_io_write(c->ufd, c->ussl, s->body.data, s->body.len));
	rec->up = head.len + s->body.len;
	if (ok && s->rest.active) {
		int fr = forward_rest(c, &s->rest, &rec->up);
		ok = fr > 0;
		s->answered_early = fr == 2;
	}
	/* From here req's injected headers (into side) are gone: only its
	 * method and keep-alive flag are read below. */
	if (s->injected) {
		/* Both held the secret. */
		buf_wipe(&head);
		buf_wipe(&s->side);
	}
	buf_free(&head);
	buf_free(&s->side);
	if (ok)
		return true;
	proxy_answer(c, 502, "bad gateway",
		     unsigned_id ? "the identity header could not be signed" : "the upstream connection failed");
	upstream_close(c);
	if (unsigned_id) {
		rec->reason = "identity.header: the audit writer did not sign the Airlock-Identity header";
		rec->decision = "deny";
		rec->observed = false;
	} else if (!rec->observed) {
		rec->reason = "upstream write failed";
		rec->decision = s->injected ? "modify" : "allow";
	}
	record_for(c, rec);
	return false;
}

/* The response to the agent: through the MCP gateway, scanned for a
 * credential's secrets, or relayed (and a WebSocket upgrade then relayed
 * both ways); then its record. */
static void relay_response(struct req_state *s)
{
	struct conn *c = s->c;
	struct http_request *req = s->req;
	struct rec *rec = &s->rec;
	bool upgraded = false;
	if (s->mx) {
		/* Each message of the response through the gateway. An
		 * upstream out of step is closed; inside an intercepted tunnel
		 * the tunnel then ends too (the agent's side of it may be out
		 * of step as well). */
		s->mc.host = s->host;
		s->mc.is_ip = s->kind == 1;
		s->mc.ip = &s->ip;
		s->mc.port = s->port;
		struct mcp_http_io io = { .ctx = &s->mc, .up_read = mcp_up_read, .down_write = mcp_down_write,
					  .post_server = mcp_post_server };
		bool up_ok = false;
		s->keep = mcp_http_response(s->mx, req, &io, &rec->down, &rec->status, &up_ok);
		if (!up_ok) {
			upstream_close(c);
			if (c->cssl)
				s->keep = false;
		}
	} else if (s->scan_back) {
		s->keep = forward_scanned(c, req, rec, s->reason, sizeof(s->reason));
	} else {
		char accept[WS_ACCEPT_LEN + 1];
		bool ws = req->upgrade_websocket && websocket_accept(req, accept);
		s->keep = forward_response(c, req, ws ? accept : NULL, &rec->down, &rec->status, &upgraded);
		/* The rest of the body is still in the agent's stream. */
		if (s->answered_early)
			s->keep = false;
	}
	/* A request let through with a credential the agent never held is
	 * not what the agent sent: docs/audit.md's `modify`. */
	rec->decision = rec->observed || (rec->kind && strcmp(rec->kind, "response_leak") == 0) ? "deny" :
			s->injected ? "modify" : "allow";
	if (upgraded) {
		proxy_relay(c, &rec->up, &rec->down);
		s->keep = false;
	}
	record_for(c, rec);
}

/* One request, step by step in the order the file's comment gives; each
 * step is static and called once here, so the compiler folds them back
 * into one function. True when the connection may carry another. */
static bool handle_request(struct conn *c, struct http_request *req)
{
	struct req_state s = { .c = c, .req = req, .net = &proxy_cfg->policy->network,
			       .rec = { .decision = "deny", .kind = c->cssl ? "tunnel-request" : "http",
					.method = req->method, .target = req->path, .target_len = req->path_len },
			       .mc = { .c = c, .req = req } };
	/* Its cleanup runs at each return. */
	_cleanup_(mcp_http_exchange_freep) struct mcp_http_exchange *mx = NULL;
	enum step st;

	if (req->query)
		s.rec.target_len = (size_t)(req->query + req->query_len - req->path);
	st = decide_destination(&s);
	if (st == STEP_ON)
		st = decide_head(&s);
	if (st == STEP_ON)
		st = take_body(&s);
	if (st == STEP_ON && s.mcp) {
		st = mcp_gate(&s);
		mx = s.mx;
	}
	if (st == STEP_ON)
		st = apply_credentials(&s);
	if (st == STEP_ON)
		st = open_upstream(&s);
	if (st == STEP_ON && send_upstream(&s))
		relay_response(&s);
	if (st == STEP_DENY) {
		record_for(c, &s.rec);
		s.keep = false;
	}
	buf_free(&s.body);
	body_release(&s.charged);
	return s.keep;
}

static void handle_connect(struct conn *c, struct http_request *req)
{
	/* req's fields point into c->in: copy the host out before the head
	 * is consumed (the tunnel's bytes follow it there). */
	char host[HTTP_MAX_HOST + 1];
	snprintf(host, sizeof(host), "%s", req->host);
	uint16_t port = req->port;
	buf_consume(&c->in, req->head_len);
	proxy_open_tunnel(c, host, port, true);
}

/* ---- a connection ---- */

void proxy_serve_requests(struct conn *c)
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
				proxy_answer(c, 400, "malformed request",
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
