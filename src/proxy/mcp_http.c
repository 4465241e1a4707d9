/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MCP over Streamable HTTP through the egress proxy (mcp_http.h). The
 * decisions are the stdio gateway's own: every message goes through
 * mcp_gateway_line, whose two outputs (towards the server, towards the
 * client) are memory files read back here. So a message is checked,
 * recorded and re-serialised by exactly the code that does it on stdio.
 */
#include "proxy/mcp_http.h"
#include "proxy/mcp_http_internal.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mcp/gateway.h"
#include "mcp/mcp.h"
#include "net/broker.h"
#include "net/dlp.h"
#include "policy/mcp.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/fiber.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
/* The first revision whose requests must carry Mcp-Method / Mcp-Name. */
#define ROUTING_HEADERS_SINCE "2026-07-28"

static struct mcp_http_server *servers;
static size_t n_servers;
static mcp_http_record_fn record_out;

static struct mcp_http_server *server_named(const char *name)
{
	for (size_t i = 0; i < n_servers; i++)
		if (!strcmp(servers[i].name, name))
			return &servers[i];
	return NULL;
}

int mcp_http_init(const struct policy *p, const struct broker *broker, mcp_http_record_fn rec,
		  struct error *err)
{
	record_out = rec;
	const struct policy_network *net = &p->network;
	for (size_t i = 0; i < net->n_endpoints; i++) {
		const char *name = net->endpoints[i].mcp_server;
		if (!name || server_named(name))
			continue;
		const struct policy_mcp_server *srv = policy_mcp_server(p->mcp, name);
		if (!srv) /* the parser refuses this; stay closed if it did not */
			return error_set(err, EINVAL, "network.endpoints[%zu].mcp_server: no mcp.servers.%s", i, name);
		struct mcp_http_server *v = realloc(servers, (n_servers + 1) * sizeof(*v));
		if (!v)
			return error_set(err, ENOMEM, "out of memory");
		servers = v;
		struct mcp_http_server *s = &servers[n_servers];
		memset(s, 0, sizeof(*s));
		if (!(s->name = strdup(name)))
			return error_set(err, ENOMEM, "out of memory");
		/* Pins: the server's pin file when the policy names one (the
		 * proxy may be unable to write it once unprivileged: a failed
		 * save is recorded); otherwise pinned for this session, so a
		 * definition that changes while it runs is still blocked. */
		int r = mcp_engine_init(&s->engine, srv, s->name, p->sandbox.workspace, srv->pins, err);
		if (r < 0)
			return r;
		/* A server that hands back a credential the proxy injected (an
		 * echo tool, its environment, an error quoting the request):
		 * every string it sends the agent is scanned for every
		 * credential of the session, bound to it or not. */
		r = broker_add_secrets(broker, s->engine.dlp);
		if (r < 0)
			return error_set(err, -r, "mcp.servers.%s: the credentials' secrets for its scanner", name);
		pthread_mutex_init(&s->lock, NULL);
		n_servers++;
	}
	return 0;
}

/* ---- records ---- */

/* Write one record, with the time and the endpoint's host and port put
 * in front of the gateway's fields. A record must fit one atomic pipe
 * write (PIPE_BUF) beside the proxy's own: one that does not is written
 * again from its fields cut short. */
static bool emit(const struct mcp_http_exchange *x, const char *line, size_t len)
{
	if (!record_out)
		return true;
	if (len < 2 || line[0] != '{')
		return false;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct buf b = { 0 };
	int e = buf_printf(&b, "{\"time\":%lld,\"host\":", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	if (e >= 0)
		e = buf_json_string(&b, x->host, strlen(x->host));
	if (e >= 0)
		e = buf_printf(&b, ",\"port\":%u,", x->port);
	if (e >= 0)
		e = buf_append(&b, line + 1, len - 1);
	if (e >= 0 && b.len > PIPE_BUF) {
		/* Re-emit with every string field at most 48 bytes. */
		_cleanup_imp_node_ struct imp_node *m = NULL;
		struct error perr = { 0 };
		size_t l = len && line[len - 1] == '\n' ? len - 1 : len;
		buf_reset(&b);
		if (imp_json_parse("record", line, l, &m, &perr) < 0 || !m || m->kind != IMP_MAP) {
			buf_free(&b);
			return false;
		}
		e = buf_printf(&b, "{\"time\":%lld", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
		for (size_t i = 0; e >= 0 && i < m->n; i++) {
			if (m->v[i].kind != IMP_STR)
				continue;
			size_t n = m->v[i].len > 48 ? 48 : m->v[i].len;
			while (n && n < m->v[i].len && ((unsigned char)m->v[i].str[n] & 0xc0) == 0x80)
				n--;
			e = buf_puts(&b, ",");
			if (e >= 0)
				e = buf_json_string(&b, m->v[i].key, strlen(m->v[i].key));
			if (e >= 0)
				e = buf_puts(&b, ":");
			if (e >= 0)
				e = buf_json_string(&b, m->v[i].str, n);
		}
		if (e >= 0)
			e = buf_puts(&b, "}\n");
	}
	bool ok = e >= 0 && b.len <= PIPE_BUF && record_out(b.data, b.len);
	buf_free(&b);
	return ok;
}

static bool gw_record(void *ctx, const char *line, size_t len)
{
	return emit(ctx, line, len);
}

/* A record of our own, in the gateway's shape, for what is refused
 * before the gateway sees it. */
static bool record_refusal(const struct mcp_http_exchange *x, const char *method, const char *reason)
{
	struct buf b = { 0 };
	int e = buf_puts(&b, "{\"kind\":\"mcp\",\"method\":");
	if (e >= 0)
		e = buf_json_string(&b, method, strnlen(method, 256));
	if (e >= 0)
		e = buf_puts(&b, ",\"server\":");
	if (e >= 0)
		e = buf_json_string(&b, x->srv->name, strlen(x->srv->name));
	if (e >= 0)
		e = buf_puts(&b, ",\"direction\":\"client\",\"decision\":\"deny\",\"rule\":\"protocol\",\"reason\":");
	if (e >= 0)
		e = buf_json_string(&b, reason, strnlen(reason, 512));
	if (e >= 0)
		e = buf_puts(&b, "}\n");
	bool ok = e >= 0 && emit(x, b.data, b.len);
	buf_free(&b);
	return ok;
}

/* ---- the gateway, one message at a time ---- */

void mcp_http_exchange_free(struct mcp_http_exchange *x)
{
	if (!x)
		return;
	mcp_gateway_fini(&x->gw);
	if (x->to_server >= 0)
		close(x->to_server);
	if (x->to_client >= 0)
		close(x->to_client);
	free(x);
}

static struct mcp_http_exchange *exchange_new(struct mcp_http_server *s, const char *host, uint16_t port)
{
	struct mcp_http_exchange *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->srv = s;
	x->to_server = memfd_create("mcp-to-server", MFD_CLOEXEC);
	x->to_client = memfd_create("mcp-to-client", MFD_CLOEXEC);
	if (x->to_server < 0 || x->to_client < 0) {
		mcp_http_exchange_free(x);
		return NULL;
	}
	snprintf(x->host, sizeof(x->host), "%s", host);
	x->port = port;
	x->client_fd = -1;
	x->gw.engine = &s->engine;
	x->gw.client_in = x->gw.server_out = -1;
	/* The gateway asks no one itself (WARNING: fd 0 is a valid fd;
	 * these must be -1, not left zeroed): with the proxy's control
	 * socket, a step-up call is held and gw_message waits for the
	 * person; without it, the call is denied at once (recorded as
	 * deferred, then denied). */
	x->gw.control_fd = x->gw.tty_fd = -1;
	x->gw.hold_for_caller = mcp_http_step_up_listening();
	x->gw.step_up_timeout = s->engine.srv && s->engine.srv->step_up_timeout ? s->engine.srv->step_up_timeout : 60;
	x->gw.server_in = x->to_server;
	x->gw.client_out = x->to_client;
	x->gw.record = gw_record;
	x->gw.record_ctx = x;
	return x;
}

/* What the gateway wrote to fd since the last call, without the final
 * newline; the file is emptied. */
static int take_output(int fd, struct buf *out)
{
	off_t end = lseek(fd, 0, SEEK_CUR);
	if (end < 0)
		return -errno;
	if (end == 0)
		return 0;
	if (buf_reserve(out, (size_t)end + 1) < 0)
		return -ENOMEM;
	size_t got = 0;
	while (got < (size_t)end) {
		ssize_t n = pread(fd, out->data + out->len + got, (size_t)end - got, (off_t)got);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	out->len += got;
	while (out->len && out->data[out->len - 1] == '\n')
		out->len--;
	out->data[out->len] = '\0';
	if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}

/* One message through the gateway. *server and *client receive what it
 * sends each way (empty when nothing). A step-up call is held here, out
 * of the engine's lock, until a person or the timeout decides. Negative
 * errno: nothing may pass (out of memory, or the record could not be
 * written). */
static int gw_message(struct mcp_http_exchange *x, bool from_client, const char *msg, size_t len,
		      struct buf *server, struct buf *client)
{
	struct error err = { 0 };
	pthread_mutex_lock(&x->srv->lock);
	int r = mcp_gateway_line(&x->gw, from_client, msg, len, &err);
	pthread_mutex_unlock(&x->srv->lock);
	while (r >= 0 && !x->gw.record_failed && x->gw.n_held)
		r = mcp_http_step_up_wait(x, &err);
	if (r < 0)
		return r;
	if (x->gw.record_failed)
		return -EPIPE;
	r = take_output(x->to_server, server);
	if (r == 0)
		r = take_output(x->to_client, client);
	return r;
}

/* ---- HTTP answers of the proxy's own ---- */

static int json_answer(struct buf *answer, int status, const char *reason_phrase, const char *json, size_t len,
		       bool keep)
{
	return buf_printf(answer,
			  "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
			  "Cache-Control: no-store\r\nConnection: %s\r\n\r\n",
			  status, reason_phrase, len, keep ? "keep-alive" : "close") ?:
		       buf_append(answer, json, len);
}

/* {"jsonrpc":"2.0","id":ID|null,"error":{"code":C,"message":M}} */
static int jsonrpc_error(struct buf *out, const struct imp_node *id, int code, const char *msg)
{
	int e = buf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (e >= 0)
		e = id ? mcp_json_write(out, id, false) : buf_puts(out, "null");
	if (e >= 0)
		e = buf_printf(out, ",\"error\":{\"code\":%d,\"message\":", code);
	if (e >= 0)
		e = buf_json_string(out, msg, strlen(msg));
	return e >= 0 ? buf_puts(out, "}}") : e;
}

static bool refuse(struct buf *answer, int status, const char *phrase, const struct imp_node *id, int code,
		   const char *msg, char *why, size_t why_len)
{
	struct buf j = { 0 };
	buf_reset(answer);
	if (jsonrpc_error(&j, id, code, msg) < 0 || json_answer(answer, status, phrase, j.data, j.len, false) < 0)
		buf_reset(answer);
	buf_free(&j);
	snprintf(why, why_len, "%s", msg);
	return false;
}

/* ---- request side ---- */

static const struct http_header *header_once(const struct http_header *h, size_t n, const char *name, bool *dup)
{
	const struct http_header *found = NULL;
	size_t nl = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (h[i].name_len == nl && !strncasecmp(h[i].name, name, nl)) {
			if (found)
				*dup = true;
			found = &h[i];
		}
	return found;
}

static bool value_is(const struct http_header *h, const char *s)
{
	return s && h->value_len == strlen(s) && !memcmp(h->value, s, h->value_len);
}

bool mcp_http_headers_agree(const struct http_header *h, size_t n, const struct imp_node *msg, char *why,
			    size_t why_len)
{
	bool dup = false;
	const struct http_header *hm = header_once(h, n, "Mcp-Method", &dup);
	const struct http_header *hn = header_once(h, n, "Mcp-Name", &dup);
	const struct http_header *hv = header_once(h, n, "MCP-Protocol-Version", &dup);
	if (dup) {
		snprintf(why, why_len, "an MCP routing header is given more than once");
		return false;
	}
	const struct imp_node *mn = imp_get(msg, "method");
	const char *method = mn && mn->kind == IMP_STR ? mn->str : NULL;
	const struct imp_node *params = imp_get(msg, "params");
	const char *name = NULL;
	if (method && (!strcmp(method, "tools/call") || !strcmp(method, "prompts/get") ||
		       !strcmp(method, "resources/read"))) {
		const struct imp_node *nn = imp_get(params, method[0] == 'r' ? "uri" : "name");
		name = nn && nn->kind == IMP_STR ? nn->str : NULL;
	}
	const struct imp_node *meta = imp_get(params, "_meta");
	const struct imp_node *mv = meta && meta->kind == IMP_MAP ? imp_get(meta, META_VERSION) : NULL;
	if (mv && mv->kind != IMP_STR) {
		snprintf(why, why_len, "params._meta[\"" META_VERSION "\"] is not a string");
		return false;
	}
	const char *version = mv ? mv->str : NULL;
	if (hv && version && !value_is(hv, version)) {
		snprintf(why, why_len, "MCP-Protocol-Version %.*s disagrees with the message's protocol version %.64s",
			 (int)(hv->value_len > 64 ? 64 : hv->value_len), hv->value, version);
		return false;
	}
	/* The newest revision routes by these headers: an intermediary
	 * that reads only them must see what the server will act on. */
	char vbuf[32] = "";
	if (version)
		snprintf(vbuf, sizeof(vbuf), "%s", version);
	else if (hv)
		snprintf(vbuf, sizeof(vbuf), "%.*s", (int)(hv->value_len < 31 ? hv->value_len : 31), hv->value);
	bool routed = vbuf[0] && strcmp(vbuf, ROUTING_HEADERS_SINCE) >= 0;
	if (hm) {
		if (!value_is(hm, method)) {
			snprintf(why, why_len, "Mcp-Method %.*s disagrees with the message's method %.128s",
				 (int)(hm->value_len > 128 ? 128 : hm->value_len), hm->value, method ? method : "(none)");
			return false;
		}
	} else if (routed && method) {
		snprintf(why, why_len, "protocol %s needs the Mcp-Method header", vbuf);
		return false;
	}
	if (hn) {
		if (!value_is(hn, name)) {
			snprintf(why, why_len, "Mcp-Name %.*s disagrees with the message's %s %.128s",
				 (int)(hn->value_len > 128 ? 128 : hn->value_len), hn->value,
				 method && method[0] == 'r' ? "params.uri" : "params.name", name ? name : "(none)");
			return false;
		}
	} else if (routed && name) {
		snprintf(why, why_len, "protocol %s needs the Mcp-Name header for %s", vbuf, method);
		return false;
	}
	return true;
}

/* The body without its framing: chunked bodies are decoded by the
 * decoder that framed them for the proxy, so the gateway decides the
 * very bytes the proxy delimited. */
static int body_bytes(const struct http_request *req, const char *body, size_t len, struct buf *out)
{
	if (req->body != HTTP_BODY_CHUNKED)
		return buf_append(out, body, len);
	struct http_chunked d = { 0 };
	size_t used = 0;
	int r = http_chunked_decode(&d, body, len, &used, out);
	return r == 1 ? 0 : r == -ENOMEM ? r : -EBADMSG;
}

bool mcp_http_request(const struct policy_endpoint *ep, const struct http_request *req, const char *body,
		      size_t len, int client_fd, struct mcp_http_exchange **xp, struct buf *fwd, struct buf *answer,
		      char *why, size_t why_len)
{
	struct mcp_http_server *s = server_named(ep->mcp_server);
	*xp = NULL;
	if (!s)
		return refuse(answer, 500, "Internal Server Error", NULL, MCP_ERR_DENIED,
			      "airlock has no engine for this MCP server", why, why_len);
	struct mcp_http_exchange *x = exchange_new(s, req->host, req->port);
	if (!x)
		return refuse(answer, 500, "Internal Server Error", NULL, MCP_ERR_DENIED, "airlock is out of memory",
			      why, why_len);
	x->client_fd = client_fd;

	/* GET opens the server's stream of requests and notifications
	 * (each checked as it comes); DELETE ends a session. Neither has a
	 * message of the client's. */
	if (!strcmp(req->method, "GET") || !strcmp(req->method, "DELETE")) {
		if (req->body != HTTP_BODY_NONE && !(req->body == HTTP_BODY_LENGTH && req->content_length == 0)) {
			record_refusal(x, req->method, "a GET or DELETE with a body");
			mcp_http_exchange_free(x);
			return refuse(answer, 400, "Bad Request", NULL, MCP_ERR_INVALID,
				      "airlock refused an MCP GET or DELETE with a body", why, why_len);
		}
		*xp = x;
		return true;
	}
	if (strcmp(req->method, "POST")) {
		char msg[128];
		snprintf(msg, sizeof(msg), "airlock refused %.32s to an MCP endpoint: only POST, GET and DELETE",
			 req->method);
		record_refusal(x, req->method, msg);
		mcp_http_exchange_free(x);
		return refuse(answer, 405, "Method Not Allowed", NULL, MCP_ERR_INVALID, msg, why, why_len);
	}

	struct buf msg = { 0 }, to_server = { 0 }, to_client = { 0 };
	_cleanup_imp_node_ struct imp_node *m = NULL;
	bool ok = false;
	int r = body_bytes(req, body, len, &msg);
	if (r < 0 || msg.len > MCP_HTTP_MAX_MESSAGE) {
		const char *reason = r == -ENOMEM ? "out of memory" : r < 0 ? "malformed chunked framing"
									    : "message longer than the gateway's bound";
		record_refusal(x, msg.len > MCP_HTTP_MAX_MESSAGE ? "(oversized)" : "(malformed)", reason);
		char text[160];
		snprintf(text, sizeof(text), "airlock refused the request body: %s", reason);
		refuse(answer, r < 0 ? 400 : 413, r < 0 ? "Bad Request" : "Content Too Large", NULL,
		       r < 0 ? MCP_ERR_PARSE : MCP_ERR_INVALID, text, why, why_len);
		goto out;
	}
	struct error perr = { 0 };
	if (mcp_frame_parse(msg.data ? msg.data : "", msg.len, &m, &perr) == MCP_FRAME_OK) {
		char reason[400];
		if (!mcp_http_headers_agree(req->headers, req->n_headers, m, reason, sizeof(reason))) {
			const struct imp_node *mn = imp_get(m, "method");
			if (!record_refusal(x, mn && mn->kind == IMP_STR ? mn->str : "(response)", reason))
				goto fail_record;
			char text[480];
			snprintf(text, sizeof(text), "airlock refused the request: %s", reason);
			refuse(answer, 400, "Bad Request", imp_get(m, "id"), MCP_ERR_INVALID, text, why, why_len);
			goto out;
		}
	}
	/* Malformed messages too: the gateway answers and records them. */
	r = gw_message(x, true, msg.data ? msg.data : "", msg.len, &to_server, &to_client);
	if (r == -EPIPE)
		goto fail_record;
	if (r < 0) {
		refuse(answer, 500, "Internal Server Error", NULL, MCP_ERR_DENIED, "airlock could not check the message",
		       why, why_len);
		goto out;
	}
	if (to_client.len) {
		/* Answered here: a denied call (a tool result with isError,
		 * which the model reads), a refused read, a malformed message. */
		bool bad = m == NULL;
		buf_reset(answer);
		if (json_answer(answer, bad ? 400 : 200, bad ? "Bad Request" : "OK", to_client.data, to_client.len,
				req->keep_alive && !bad) < 0)
			buf_reset(answer);
		snprintf(why, why_len, "%s", bad ? "malformed MCP message" : "MCP message refused by mcp policy");
		goto out;
	}
	if (!to_server.len) {
		/* A message without an id that the policy denied: decided and
		 * recorded, but no JSON-RPC answer can be addressed to it. */
		refuse(answer, 403, "Forbidden", NULL, MCP_ERR_DENIED,
		       "airlock refused the message: the policy denies what it asks for", why, why_len);
		goto out;
	}
	buf_reset(fwd);
	if (buf_append(fwd, to_server.data, to_server.len) < 0) {
		refuse(answer, 500, "Internal Server Error", NULL, MCP_ERR_DENIED, "airlock is out of memory", why,
		       why_len);
		goto out;
	}
	*xp = x;
	x = NULL;
	ok = true;
	goto out;
fail_record:
	refuse(answer, 500, "Internal Server Error", NULL, MCP_ERR_DENIED,
	       "airlock cannot write its decision log; nothing passes", why, why_len);
out:
	mcp_http_exchange_free(x);
	buf_free(&msg);
	buf_free(&to_server);
	buf_free(&to_client);
	return ok;
}

void mcp_http_oversized(const struct policy_endpoint *ep, const struct http_request *req, struct buf *answer,
			char *why, size_t why_len)
{
	struct mcp_http_server *s = server_named(ep->mcp_server);
	struct mcp_http_exchange x = { .srv = s, .port = req->port };
	snprintf(x.host, sizeof(x.host), "%s", req->host);
	static const char m[] = "airlock refused an MCP message larger than its bound (network.leak_scan.max_body)";
	if (s)
		(void)record_refusal(&x, "(oversized)", m);
	refuse(answer, 413, "Content Too Large", NULL, MCP_ERR_INVALID, m, why, why_len);
}

static bool is_header(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);
	return len > n && line[n] == ':' && !strncasecmp(line, name, n);
}

int mcp_http_fix_head(struct buf *head, bool has_body, size_t body_len)
{
	struct buf out = { 0 };
	size_t i = 0;
	int e = 0;
	/* Lines up to the empty one; the request line is kept. */
	while (i < head->len && e >= 0) {
		char *nl = memchr(head->data + i, '\n', head->len - i);
		size_t end = nl ? (size_t)(nl - head->data) + 1 : head->len;
		const char *line = head->data + i;
		size_t ll = end - i;
		if (ll <= 2) /* the empty line */
			break;
		if (!is_header(line, ll, "Content-Length") && !is_header(line, ll, "Transfer-Encoding") &&
		    !is_header(line, ll, "Accept-Encoding"))
			e = buf_append(&out, line, ll);
		i = end;
	}
	if (e >= 0 && has_body)
		e = buf_printf(&out, "Content-Length: %zu\r\n", body_len);
	if (e >= 0)
		e = buf_puts(&out, "\r\n");
	if (e < 0) {
		buf_free(&out);
		return -ENOMEM;
	}
	buf_free(head);
	*head = out;
	return 0;
}

/* ---- response side ---- */

struct relay {
	struct mcp_http_exchange *x;
	const struct mcp_http_io *io;
	uint64_t *down;
	bool failed;   /* the agent is gone, or nothing may pass */
	size_t events;
};

static bool down(struct relay *rl, const void *p, size_t n)
{
	if (rl->failed || !rl->io->down_write(rl->io->ctx, p, n)) {
		rl->failed = true;
		return false;
	}
	*rl->down += n;
	return true;
}

static bool down_chunk(struct relay *rl, const char *p, size_t n)
{
	char hdr[32];
	int hl = snprintf(hdr, sizeof(hdr), "%zx\r\n", n);
	return !n || (down(rl, hdr, (size_t)hl) && down(rl, p, n) && down(rl, "\r\n", 2));
}

/* One SSE event from the server: its message through the gateway, and
 * the checked message out as an event of our own. A message refused on
 * its way to the client (a server request the policy does not allow) is
 * recorded by the gateway and not passed on; the gateway's answer to
 * the server cannot go back on this response, so it is posted to the
 * server on a connection of its own. */
static int on_event(void *ctx, const struct mcp_sse_event *ev)
{
	struct relay *rl = ctx;
	struct buf to_server = { 0 }, to_client = { 0 }, out = { 0 };
	int r = gw_message(rl->x, false, ev->data, ev->len, &to_server, &to_client);
	if (r < 0) {
		rl->failed = true;
		goto done;
	}
	if (to_server.len && rl->io->post_server)
		(void)rl->io->post_server(rl->io->ctx, to_server.data, to_server.len);
	if (to_client.len) {
		r = buf_append(&out, ev->fields, ev->fields_len);
		if (r >= 0)
			r = buf_puts(&out, "data: ");
		if (r >= 0)
			r = buf_append(&out, to_client.data, to_client.len);
		if (r >= 0)
			r = buf_puts(&out, "\n\n");
		if (r < 0 || !down_chunk(rl, out.data, out.len))
			rl->failed = true;
		rl->events++;
	}
done:
	buf_free(&to_server);
	buf_free(&to_client);
	buf_free(&out);
	return rl->failed ? -EPIPE : 0;
}

/* The response head for the agent: the upstream's status and headers
 * except framing and hop-by-hop ones, then our own framing. */
static int response_head(const struct http_response *resp, const char *raw, struct buf *out, const char *ctype,
			 bool chunked, size_t len, bool keep)
{
	int e = buf_printf(out, "HTTP/1.1 %d %s\r\n", resp->status, resp->status < 300 ? "OK" : "Error");
	static const char *const drop[] = { "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
					    "Trailer", "Upgrade", "Proxy-Connection", "Proxy-Authenticate",
					    "Content-Type", "Content-Encoding", "TE" };
	(void)raw;
	for (size_t i = 0; i < resp->n_headers && e >= 0; i++) {
		const struct http_header *h = &resp->headers[i];
		bool skip = false;
		for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]) && !skip; k++)
			skip = h->name_len == strlen(drop[k]) && !strncasecmp(h->name, drop[k], h->name_len);
		if (!skip)
			e = buf_append(out, h->name, h->name_len) ?: buf_puts(out, ": ")
				?: buf_append(out, h->value, h->value_len) ?: buf_puts(out, "\r\n");
	}
	if (e >= 0 && ctype)
		e = buf_printf(out, "Content-Type: %s\r\n", ctype);
	if (e >= 0)
		e = chunked ? buf_puts(out, "Transfer-Encoding: chunked\r\n")
			    : buf_printf(out, "Content-Length: %zu\r\n", len);
	if (e >= 0)
		e = buf_printf(out, "Connection: %s\r\n\r\n", keep ? "keep-alive" : "close");
	return e;
}

enum ctype { CT_NONE, CT_JSON, CT_SSE, CT_OTHER };

static enum ctype content_type(const struct http_response *resp)
{
	const struct http_header *h = http_find_header(resp->headers, resp->n_headers, "Content-Type");
	if (!h)
		return CT_NONE;
	size_t n = h->value_len;
	const char *semi = memchr(h->value, ';', n);
	if (semi)
		n = (size_t)(semi - h->value);
	while (n && (h->value[n - 1] == ' ' || h->value[n - 1] == '\t'))
		n--;
	if (n == 16 && !strncasecmp(h->value, "application/json", 16))
		return CT_JSON;
	if (n == 17 && !strncasecmp(h->value, "text/event-stream", 17))
		return CT_SSE;
	return CT_OTHER;
}

/* Body bytes from the upstream, framing removed, into sink. Returns 1 at
 * the end of the body, 0 when the connection ended early or failed,
 * -EMSGSIZE when it exceeds max (max 0: unbounded, for streams). */
struct body_in {
	const struct mcp_http_io *io;
	const struct http_response *resp;
	struct buf *rb;         /* bytes read past the head */
	uint64_t left;          /* HTTP_BODY_LENGTH */
	struct http_chunked dc;
};

/* Next piece of body into out (appended). 1: more may follow; 0: end of
 * body; negative: error. */
static int body_next(struct body_in *b, struct buf *out)
{
	for (;;) {
		switch (b->resp->body) {
		case HTTP_BODY_NONE:
			return 0;
		case HTTP_BODY_LENGTH:
			if (b->left == 0)
				return 0;
			if (b->rb->len) {
				size_t take = b->rb->len < b->left ? b->rb->len : (size_t)b->left;
				if (buf_append(out, b->rb->data, take) < 0)
					return -ENOMEM;
				buf_consume(b->rb, take);
				b->left -= take;
				return 1;
			}
			break;
		case HTTP_BODY_CHUNKED:
			if (b->rb->len) {
				size_t used = 0;
				int r = http_chunked_decode(&b->dc, b->rb->data, b->rb->len, &used, out);
				buf_consume(b->rb, used);
				if (r < 0)
					return r;
				if (r == 1)
					return 0;
				return 1;
			}
			break;
		case HTTP_BODY_EOF:
			if (b->rb->len) {
				if (buf_append(out, b->rb->data, b->rb->len) < 0)
					return -ENOMEM;
				buf_reset(b->rb);
				return 1;
			}
			break;
		}
		if (buf_reserve(b->rb, 16384) < 0)
			return -ENOMEM;
		ssize_t n = b->io->up_read(b->io->ctx, b->rb->data, 16384);
		if (n <= 0)
			return b->resp->body == HTTP_BODY_EOF ? 0 : -EPIPE;
		b->rb->len = (size_t)n;
		b->rb->data[n] = '\0';
	}
}

/* A JSON-RPC error response as our own {"jsonrpc","id","error":{code,
 * message}}; a message holding a secret or an injection marker is
 * replaced. -EINVAL when body is not one. */
static int error_copy(struct mcp_http_exchange *x, const char *body, size_t len, struct buf *out)
{
	_cleanup_imp_node_ struct imp_node *m = NULL;
	struct error perr = { 0 };
	/* Not mcp_frame_parse: servers answer a request they could not
	 * read without an id (the SDK's own servers leave it out). */
	if (imp_json_parse_max("message", body, len, MCP_HTTP_MAX_MESSAGE, &m, &perr) < 0 || m->kind != IMP_MAP)
		return -EINVAL;
	const struct imp_node *id = imp_get(m, "id");
	if (id && !(id->kind == IMP_STR || (id->kind == IMP_NUM && !strpbrk(id->str, ".eE"))))
		id = NULL;
	const struct imp_node *e = imp_get(m, "error"), *code = imp_get(e, "code"), *msg = imp_get(e, "message");
	if (!e || !code || code->kind != IMP_NUM || !msg || msg->kind != IMP_STR)
		return -EINVAL;
	char what[128];
	char *end = NULL;
	long c = strtol(code->str, &end, 10);
	if (!end || *end || c < INT32_MIN || c > INT32_MAX)
		return -EINVAL;
	const char *text = msg->str;
	if (dlp_scan(x->srv->engine.dlp, (const uint8_t *)msg->str, msg->len, what, sizeof(what)) ||
	    mcp_scan_injection(msg->str, msg->len, false, what, sizeof(what)))
		text = "[withheld by airlock: the server's error message]";
	return jsonrpc_error(out, id, (int)c, text);
}

/* The events of an SSE body, each through the gateway (on_event), then
 * the end of the chunked body we send. False when the stream was cut. */
static bool relay_events(struct mcp_http_exchange *x, struct relay *rl, struct body_in *bi, struct buf *body,
			 struct mcp_sse *sse, bool *body_done)
{
	bool keep = true;
	for (;;) {
		buf_reset(body);
		int r = body_next(bi, body);
		if (r < 0) {
			keep = false;
			break;
		}
		if (body->len && mcp_sse_feed(sse, body->data, body->len, on_event, rl) < 0) {
			if (!rl->failed) {
				/* A bound exceeded: the stream ends here. */
				static const char m[] = "airlock refused an event of more than the gateway's bound";
				(void)record_refusal(x, "(oversized)", m);
			}
			keep = false;
			break;
		}
		if (r == 0) {
			*body_done = true;
			break;
		}
	}
	/* The end of the body we send, even after an error: the agent then
	 * sees a complete, shorter stream. */
	if (!rl->failed && !down(rl, "0\r\n\r\n", 5))
		keep = false;
	return keep;
}

bool mcp_http_response(struct mcp_http_exchange *x, const struct http_request *req, const struct mcp_http_io *io,
		       uint64_t *down_bytes, int *status, bool *upstream_ok)
{
	bool body_done = false;
	*upstream_ok = false;
	struct buf rb = { 0 }, head = { 0 }, body = { 0 }, to_server = { 0 }, to_client = { 0 };
	struct http_response resp;
	struct relay rl = { .x = x, .io = io, .down = down_bytes };
	struct mcp_sse sse = { 0 };
	bool keep = false;
	*status = 0;
	for (;;) {
		if (buf_reserve(&rb, 16384) < 0)
			goto out;
		ssize_t n = io->up_read(io->ctx, rb.data + rb.len, rb.cap - rb.len - 1);
		if (n <= 0)
			goto bad_gateway;
		rb.len += (size_t)n;
		rb.data[rb.len] = '\0';
		struct error err = { 0 };
		int r = http_parse_response(rb.data, rb.len, req->method, &resp, &err);
		if (r < 0)
			goto bad_gateway;
		if (r == 0)
			continue;
		if (resp.status >= 100 && resp.status < 200) {
			/* Interim responses (and a 101: no upgrade here) are
			 * not passed on. */
			if (resp.status == 101)
				goto bad_gateway;
			buf_consume(&rb, resp.head_len);
			continue;
		}
		break;
	}
	/* resp points into rb's head: keep it, read the body after it. */
	struct buf rest = { 0 };
	if (buf_append(&rest, rb.data + resp.head_len, rb.len - resp.head_len) < 0)
		goto out;
	*status = resp.status;
	const struct http_header *ce = http_find_header(resp.headers, resp.n_headers, "Content-Encoding");
	if (ce && !(ce->value_len == 8 && !strncasecmp(ce->value, "identity", 8))) {
		buf_free(&rest);
		goto bad_gateway;
	}
	struct body_in bi = { .io = io, .resp = &resp, .rb = &rest, .left = resp.content_length };
	enum ctype ct = content_type(&resp);
	bool ok2xx = resp.status >= 200 && resp.status < 300;

	if (ok2xx && ct == CT_SSE) {
		keep = req->keep_alive;
		if (response_head(&resp, rb.data, &head, "text/event-stream", true, 0, keep) < 0 ||
		    !down(&rl, head.data, head.len)) {
			keep = false;
			goto done_body;
		}
		if (!relay_events(x, &rl, &bi, &body, &sse, &body_done))
			keep = false;
		goto done_body;
	}

	/* A single message (or none) in the body: read it whole, bounded. */
	for (;;) {
		int r = body_next(&bi, &body);
		if (r < 0) {
			buf_free(&rest);
			goto bad_gateway;
		}
		if (body.len > MCP_HTTP_MAX_MESSAGE) {
			(void)record_refusal(x, "(oversized)", "response longer than the gateway's bound");
			buf_free(&rest);
			goto bad_gateway;
		}
		if (r == 0) {
			body_done = true;
			break;
		}
	}
	keep = req->keep_alive;
	if (ok2xx && ct == CT_JSON && body.len) {
		int r = gw_message(x, false, body.data, body.len, &to_server, &to_client);
		if (r < 0 || !to_client.len) {
			/* Withheld (a response to nothing asked, or a refused
			 * server request): the gateway recorded why. */
			buf_reset(&to_client);
			if (r < 0 || jsonrpc_error(&to_client, NULL, MCP_ERR_DENIED,
						   "airlock withheld the MCP server's response") < 0) {
				buf_free(&rest);
				goto bad_gateway;
			}
		}
		if (response_head(&resp, rb.data, &head, "application/json", false, to_client.len, keep) < 0 ||
		    !down(&rl, head.data, head.len) || !down(&rl, to_client.data, to_client.len))
			keep = false;
	} else if (!body.len) {
		/* 202 Accepted for a notification or a response, 204, errors
		 * without a body. */
		if (response_head(&resp, rb.data, &head, NULL, false, 0, keep) < 0 || !down(&rl, head.data, head.len))
			keep = false;
	} else if (!ok2xx && ct == CT_JSON && error_copy(x, body.data, body.len, &to_client) == 0) {
		/* The server's JSON-RPC error for a refused HTTP request (no
		 * session, a bad header): its code and message, checked. */
		if (response_head(&resp, rb.data, &head, "application/json", false, to_client.len, keep) < 0 ||
		    !down(&rl, head.data, head.len) || !down(&rl, to_client.data, to_client.len))
			keep = false;
	} else {
		buf_reset(&to_client);
		/* Anything else in a body is not passed on: an error status
		 * keeps its number (the SDK reads 404 as an ended session),
		 * with a JSON-RPC error of ours. */
		char m[96];
		snprintf(m, sizeof(m), "the MCP server answered HTTP %d with a body airlock does not pass on",
			 resp.status);
		if (jsonrpc_error(&to_client, NULL, MCP_ERR_DENIED, m) < 0 ||
		    response_head(&resp, rb.data, &head, "application/json", false, to_client.len, keep) < 0 ||
		    !down(&rl, head.data, head.len) || !down(&rl, to_client.data, to_client.len))
			keep = false;
	}
done_body:
	/* The upstream connection can carry another request only when this
	 * response ended by its framing with nothing after it. */
	*upstream_ok = body_done && resp.keep_alive && resp.body != HTTP_BODY_EOF && rest.len == 0;
	buf_free(&rest);
	goto out;
bad_gateway:;
	static const char bg_body[] = "airlock: bad gateway: the MCP server's response cannot be checked\n";
	char bg[256];
	int bl = snprintf(bg, sizeof(bg),
			  "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n%s",
			  sizeof(bg_body) - 1, bg_body);
	if (!*status)
		*status = 502;
	if (!rl.failed && *down_bytes == 0)
		(void)down(&rl, bg, (size_t)bl);
	keep = false;
out:
	if (rl.failed)
		keep = false;
	mcp_sse_free(&sse);
	buf_free(&rb);
	buf_free(&head);
	buf_free(&body);
	buf_free(&to_server);
	buf_free(&to_client);
	return keep;
}

/* ---- SSE ---- */

void mcp_sse_free(struct mcp_sse *s)
{
	buf_free(&s->line);
	buf_free(&s->data);
	buf_free(&s->fields);
	memset(s, 0, sizeof(*s));
}

static bool field_is(const char *line, size_t len, const char *name, const char **val, size_t *vlen)
{
	size_t n = strlen(name);
	if (len < n || memcmp(line, name, n))
		return false;
	if (len == n) {
		*val = line + n;
		*vlen = 0;
		return true;
	}
	if (line[n] != ':')
		return false;
	*val = line + n + 1;
	*vlen = len - n - 1;
	if (*vlen && **val == ' ') {
		(*val)++;
		(*vlen)--;
	}
	return true;
}

/* One complete line (terminator removed). */
static int sse_line(struct mcp_sse *s, int (*fn)(void *, const struct mcp_sse_event *), void *ctx)
{
	const char *line = s->line.data ? s->line.data : "";
	size_t len = s->line.len;
	const char *v;
	size_t vl;
	int r = 0;
	if (len == 0) {
		/* Dispatch. */
		if (s->has_data) {
			struct mcp_sse_event ev = { .data = s->data.data ? s->data.data : "", .len = s->data.len,
						    .fields = s->fields.data ? s->fields.data : "",
						    .fields_len = s->fields.len };
			r = fn(ctx, &ev);
		}
		buf_reset(&s->data);
		buf_reset(&s->fields);
		s->has_data = false;
		return r;
	}
	if (line[0] == ':') /* a comment (keep-alive) */
		return 0;
	if (field_is(line, len, "data", &v, &vl)) {
		if (s->has_data && buf_append(&s->data, "\n", 1) < 0)
			return -ENOMEM;
		if (s->data.len + vl > MCP_HTTP_MAX_MESSAGE)
			return -EMSGSIZE;
		if (buf_append(&s->data, v, vl) < 0)
			return -ENOMEM;
		s->has_data = true;
		return 0;
	}
	bool ev = field_is(line, len, "event", &v, &vl), id = !ev && field_is(line, len, "id", &v, &vl);
	bool retry = !ev && !id && field_is(line, len, "retry", &v, &vl);
	if (retry)
		for (size_t i = 0; i < vl; i++)
			if (v[i] < '0' || v[i] > '9')
				retry = false;
	/* An id holding NUL is ignored by the standard; these fields go out
	 * again as we read them, so they are kept to printable bytes and a
	 * bound. */
	if ((ev || id || retry) && vl <= 256 && s->fields.len < 1024) {
		for (size_t i = 0; i < vl; i++)
			if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
				return 0;
		return buf_puts(&s->fields, ev ? "event: " : id ? "id: " : "retry: ") ?: buf_append(&s->fields, v, vl)
			?: buf_puts(&s->fields, "\n");
	}
	return 0;
}

int mcp_sse_feed(struct mcp_sse *s, const char *p, size_t n, int (*fn)(void *ctx, const struct mcp_sse_event *ev),
		 void *ctx)
{
	if (s->failed)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!s->bom_checked) {
			/* A UTF-8 BOM at the very start is not part of the
			 * first line. */
			if ((unsigned char)c == (unsigned char)"\xef\xbb\xbf"[s->line.len]) {
				if (buf_append(&s->line, &c, 1) < 0)
					return -ENOMEM;
				if (s->line.len == 3) {
					buf_reset(&s->line);
					s->bom_checked = true;
				}
				continue;
			}
			s->bom_checked = true;
		}
		if (s->after_cr) {
			s->after_cr = false;
			if (c == '\n')
				continue;
		}
		if (c == '\r' || c == '\n') {
			s->after_cr = c == '\r';
			int r = sse_line(s, fn, ctx);
			buf_reset(&s->line);
			if (r < 0) {
				if (r == -EMSGSIZE)
					s->failed = true;
				return r;
			}
			continue;
		}
		/* Runs of ordinary bytes go in at once, up to the bound. */
		size_t j = i;
		while (j < n && p[j] != '\r' && p[j] != '\n')
			j++;
		if (j - i > MCP_HTTP_MAX_MESSAGE + 16 - s->line.len) {
			s->failed = true;
			return -EMSGSIZE;
		}
		if (buf_append(&s->line, p + i, j - i) < 0)
			return -ENOMEM;
		i = j - 1;
	}
	return 0;
}
