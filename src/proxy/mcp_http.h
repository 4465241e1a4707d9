/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_MCP_HTTP_H
#define AIRLOCK_NET_MCP_HTTP_H

/*
 * MCP over Streamable HTTP, mediated by the egress proxy for endpoints
 * with `protocol: mcp` (docs/mcp.md, "Remote servers over HTTP"). Each
 * POST body is one JSON-RPC message, decided by the gateway of
 * src/mcp/ exactly as on stdio; each response (application/json, or
 * text/event-stream with one message per event) goes through the same
 * gateway before the agent sees it. What is forwarded either way is the
 * gateway's re-serialisation of what it checked, never the peer's bytes.
 *
 * The decisions for one mcp.servers entry share one engine (call limits
 * and pins hold across every connection of the session); the requests
 * awaiting an answer are tracked per HTTP exchange, since the answer to
 * a POST comes in that POST's response and nowhere else.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/http.h"
#include "policy/policy.h"
#include "util/buf.h"
#include "util/error.h"

struct broker;

struct imp_node;

/* Each record of the gateway (one flat JSON line, kind "mcp", newline
 * included) goes out through this; false when the log is gone. */
typedef bool (*mcp_http_record_fn)(const char *line, size_t len);

/* Make an engine for each mcp.servers entry an endpoint names. Before
 * the proxy drops its privileges: the workspace is resolved and pin files
 * are read here. rec is called from any connection thread. */
int mcp_http_init(const struct policy *p, const struct broker *broker, mcp_http_record_fn rec,
		  struct error *err) WUR;

/* Step-up: serve `airlock approve|deny|approve --list` on the listening
 * socket fd (path, for the prompt), on a thread of its own. Without it a
 * step_up call is denied at once. After mcp_http_init. */
int mcp_http_step_up_serve(int fd, const char *path, struct error *err) WUR;

/* ---- request side ---- */

/* One HTTP exchange with the server: the requests of it awaiting an
 * answer (the answer to a POST comes in that POST's response). */
struct mcp_http_exchange;
void mcp_http_exchange_free(struct mcp_http_exchange *x);
static inline void mcp_http_exchange_freep(struct mcp_http_exchange **x)
{
	mcp_http_exchange_free(*x);
}

/* Check one request to a protocol: mcp endpoint. body holds the request
 * body as collected (with its framing, per req->body). Returns true when
 * the request goes upstream with *fwd as its body (the checked message;
 * empty for a request without one) and *x (the caller's) is the exchange
 * its response is relayed with; false when the proxy answers it itself
 * with *answer (a complete HTTP/1.1 response), why saying what for the
 * network record. fwd and answer are the caller's. client_fd is the
 * agent's connection: a step-up call waiting for a person is denied when
 * the agent hangs up (-1: not watched). */
bool mcp_http_request(const struct policy_endpoint *ep, const struct http_request *req, const char *body,
		      size_t len, int client_fd, struct mcp_http_exchange **x, struct buf *fwd, struct buf *answer,
		      char *why, size_t why_len);

/* A request whose body is over the bound, refused unread: recorded, and
 * *answer is a JSON-RPC error. */
void mcp_http_oversized(const struct policy_endpoint *ep, const struct http_request *req, struct buf *answer,
			char *why, size_t why_len);

/* Replace the framing of an upstream request head built by
 * http_build_upstream_head: drop Content-Length, Transfer-Encoding and
 * Accept-Encoding (a compressed response could not be checked), then add
 * Content-Length: body_len (when has_body). -ENOMEM. */
int mcp_http_fix_head(struct buf *head, bool has_body, size_t body_len) WUR;

/* ---- response side ---- */

struct mcp_http_io {
	void *ctx;
	ssize_t (*up_read)(void *ctx, void *p, size_t n);        /* <= 0: end or error */
	bool (*down_write)(void *ctx, const void *p, size_t n);  /* false: the agent is gone */
	/* Post a message to the server on a connection of its own, with the
	 * request's session headers (the gateway's refusal of a server
	 * request); NULL: such refusals are dropped. */
	bool (*post_server)(void *ctx, const char *body, size_t len);
};

/* Relay the upstream's response to the request just sent, each message
 * through the exchange's gateway. Returns whether the agent's connection
 * may carry another request; *status is the upstream's status (0 when
 * none came), *down the bytes sent to the agent, *upstream_ok whether
 * the upstream connection is in step for another request (the response
 * ended by its framing, keep-alive, nothing after it). */
bool mcp_http_response(struct mcp_http_exchange *x, const struct http_request *req, const struct mcp_http_io *io,
		       uint64_t *down, int *status, bool *upstream_ok);

/* ---- parsers, exposed for the unit tests and the fuzz harness ---- */

#define MCP_HTTP_MAX_MESSAGE (4 * 1024 * 1024)

/* A text/event-stream decoder (WHATWG HTML "server-sent events"): lines
 * end in CRLF, LF or CR; "data:" lines of one event are joined with
 * LF; a blank line ends the event. Of the other fields, "event" and "id"
 * are kept (passed on with the checked message) and "retry" is dropped
 * when not all digits; comments are dropped. */
struct mcp_sse {
	struct buf line;    /* the line being read */
	struct buf data;    /* the event's data so far */
	struct buf fields;  /* "event: x\n" / "id: y\n" lines to pass on */
	bool has_data;
	bool after_cr;      /* the last byte was CR: a following LF is part of it */
	bool bom_checked;
	bool failed;        /* a bound was exceeded: the stream is refused */
};

struct mcp_sse_event {
	const char *data;   /* the joined data lines, NUL-terminated */
	size_t len;
	const char *fields; /* event/id/retry lines, each ending in LF, NUL-terminated ("" for none) */
	size_t fields_len;
};

/* Feed bytes; fn is called for every complete event with data (events
 * without data lines are dropped, as a browser would). Returns 0, a
 * negative errno from fn, or -EMSGSIZE when a line or an event's data
 * is longer than MCP_HTTP_MAX_MESSAGE. */
int mcp_sse_feed(struct mcp_sse *s, const char *p, size_t n,
		 int (*fn)(void *ctx, const struct mcp_sse_event *ev), void *ctx) WUR;
void mcp_sse_free(struct mcp_sse *s);

/* The 2026-07-28 routing headers against the message they came with:
 * Mcp-Method must equal the method, Mcp-Name the params.name (tools/call,
 * prompts/get) or params.uri (resources/read); MCP-Protocol-Version must
 * equal params._meta["io.modelcontextprotocol/protocolVersion"] when the
 * message carries one. When the protocol version is 2026-07-28 or later
 * Mcp-Method (and Mcp-Name for a named method) must be present. A header
 * given twice is refused. Returns false with why filled on disagreement. */
bool mcp_http_headers_agree(const struct http_header *h, size_t n, const struct imp_node *msg, char *why,
			    size_t why_len);

#endif
