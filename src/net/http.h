/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_HTTP_H
#define AIRLOCK_NET_HTTP_H

/*
 * Strict HTTP/1.1 message heads (RFC 9110/9112), as a proxy must parse
 * them: anything a second parser could read differently is refused
 * (request smuggling). Parsing never allocates: names and values point
 * into the caller's buffer, which must outlive the parsed struct.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

#define HTTP_MAX_REQUEST_LINE 8192
#define HTTP_MAX_HEAD 65536     /* request or response head, CRLFCRLF included */
#define HTTP_MAX_HEADERS 128
#define HTTP_MAX_METHOD 32
#define HTTP_MAX_HOST 255

struct http_header {
	const char *name; /* into the caller's buffer; not NUL-terminated */
	size_t name_len;
	const char *value; /* OWS trimmed */
	size_t value_len;
};

enum http_target_form {
	HTTP_TARGET_ORIGIN,    /* /path?query (with a Host header) */
	HTTP_TARGET_ABSOLUTE,  /* http://host:port/path?query (forward proxy) */
	HTTP_TARGET_AUTHORITY, /* host:port (CONNECT only) */
	HTTP_TARGET_ASTERISK,  /* * (OPTIONS only) */
};

enum http_body {
	HTTP_BODY_NONE,
	HTTP_BODY_LENGTH,  /* Content-Length bytes */
	HTTP_BODY_CHUNKED, /* Transfer-Encoding: chunked (the final coding) */
	HTTP_BODY_EOF,     /* responses only: until the connection closes */
};

struct http_request {
	char method[HTTP_MAX_METHOD + 1];
	enum http_target_form form;
	char scheme[8];                 /* "http" or "https" ("" for origin/authority form) */
	char host[HTTP_MAX_HOST + 1];   /* from the target, else from Host; lower-case,
	                                 * trailing dot removed, IPv6 without brackets */
	uint16_t port;                  /* explicit, or the scheme's default (80/443) */
	bool port_explicit;
	const char *path;               /* origin path, starts with '/'; "*" for asterisk form */
	size_t path_len;
	const char *query;              /* after '?', NULL when absent */
	size_t query_len;
	int minor;                      /* HTTP/1.minor: 0 or 1 */
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t n_headers;
	enum http_body body;
	uint64_t content_length;
	bool keep_alive;                /* per version default and Connection */
	bool upgrade;                   /* Connection: upgrade with an Upgrade header */
	bool upgrade_websocket;         /* ... and the protocol is websocket */
	bool expect_continue;           /* one Expect: 100-continue, on HTTP/1.1 */
	/* The upstream may leave the body unread (a body on DELETE or on a
	 * method of no known meaning; the proxy sets it too, for a body it
	 * streams): the upstream head says Connection: close, and the
	 * connection is never reused. */
	bool upstream_close;
	size_t head_len;                /* bytes of the head, CRLFCRLF included */
};

struct http_response {
	int status;
	int minor;
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t n_headers;
	enum http_body body;
	uint64_t content_length;
	bool keep_alive;
	size_t head_len;
};

/* Parse a request head at the start of buf[0..len).
 * Returns head_len (> 0) when a complete, valid head was parsed; 0 when
 * more bytes are needed (and none of the limits is exceeded yet); a
 * negative errno when the head is invalid: then *status is the HTTP status
 * to answer (400, 414 URI too long, 417 an Expect other than
 * 100-continue, 431 headers too large, 501 unknown transfer coding, 505
 * version) and err says why, e.g. "both
 * Content-Length and Transfer-Encoding". Refused: bare CR or LF line
 * endings, obs-fold, whitespace before ':', invalid token characters in
 * the method or header names, control characters in values, duplicate or
 * non-numeric Content-Length, Content-Length with Transfer-Encoding, a
 * Transfer-Encoding whose final coding is not chunked, HTTP/0.9 and
 * versions other than 1.0/1.1, a missing Host on 1.1, more than one Host,
 * a Host that disagrees with an absolute-form target, CONNECT without
 * authority form, authority form without CONNECT, userinfo in a target,
 * a body on GET, HEAD or TRACE. */
int http_parse_request(const char *buf, size_t len, struct http_request *req, int *status,
		       struct error *err) WUR;

/* The head req was parsed from has been copied from old to new (its
 * head_len bytes): point req's names, values, path and query at the copy,
 * so the original buffer can be reused. Pointers that were not into old
 * (a constant "/" path) are left alone. */
void http_request_move(struct http_request *req, const char *old, const char *new);

/* Parse a response head; method is the request's (HEAD and 1xx/204/304
 * have no body; a 2xx to CONNECT is a tunnel). Same return convention. */
int http_parse_response(const char *buf, size_t len, const char *method, struct http_response *resp,
			struct error *err) WUR;

/* Find a header by case-insensitive name; NULL when absent. */
const struct http_header *http_find_header(const struct http_header *h, size_t n, const char *name);

/* The head to send upstream for req, in origin form, with hop-by-hop
 * headers removed (Connection and what it lists, Keep-Alive,
 * Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE, Trailer,
 * Upgrade unless keep_upgrade), and Airlock-Identity (the proxy's own,
 * which the agent may not send), and "Connection: keep-alive" or
 * "Connection: upgrade" as appropriate. Appends to out. */
int http_build_upstream_head(const struct http_request *req, bool keep_upgrade, struct buf *out) WUR;

/* Incremental chunked-body framing: feed bytes, learn where the body
 * (including trailers) ends. Bounded chunk-size lines and trailers. The
 * one chunked decoder of the tree: the proxy's framing, its leak scan
 * and the MCP gateway all read a body through it, so none of them can
 * see a different body than the others. */
struct http_chunked {
	int state;
	uint64_t remaining;
	size_t line_len;
	bool trailers; /* a trailer field line was seen */
};
/* Consumes from buf[0..len); *used = bytes that belong to the body;
 * returns 1 when the body ended (at *used), 0 when more is needed, a
 * negative errno on malformed framing. */
int http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, size_t *used) WUR;
/* The same, and the chunk data (framing, extensions and trailers
 * removed) is appended to out; -ENOMEM when out cannot grow. */
int http_chunked_decode(struct http_chunked *c, const char *buf, size_t len, size_t *used, struct buf *out) WUR;

#endif
