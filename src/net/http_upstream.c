/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The head the egress proxy sends upstream for a request http.c has
 * parsed: the request line in origin form, Host first, and no hop-by-hop
 * field (nor one the Connection field names) passed on.
 */
#include "net/http.h"
#include "net/http_chars.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- upstream ---- */

static bool is_hop_by_hop(const struct http_header *h)
{
	static const char *const names[] = {
		"Connection",	       "Keep-Alive",	     "Proxy-Connection", "Proxy-Authorization",
		"Proxy-Authenticate", "TE",		     "Trailer",		 "Upgrade",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (name_is(h, names[i]))
			return true;
	return false;
}

/* Is h named by a Connection option of req? */
static bool listed_in_connection(const struct http_request *req, const struct http_header *h)
{
	for (size_t i = 0; i < req->n_headers; i++) {
		const struct http_header *c = &req->headers[i];
		const char *s = c->value, *end = c->value + c->value_len, *e;
		size_t el;

		if (!name_is(c, "Connection"))
			continue;
		while (list_next(&s, end, &e, &el))
			if (ascii_case_equal(e, el, h->name, h->name_len))
				return true;
	}
	return false;
}

static int append_host(struct buf *out, const struct http_request *req)
{
	const char *pct = strchr(req->host, '%');
	int r;

	if (strchr(req->host, ':')) {
		/* RFC 6874: the zone delimiter is "%25" inside a URI. */
		if (pct)
			r = buf_printf(out, "Host: [%.*s%%25%s]", (int)(pct - req->host), req->host,
				       pct + 1);
		else
			r = buf_printf(out, "Host: [%s]", req->host);
	} else {
		r = buf_printf(out, "Host: %s", req->host);
	}
	if (r == 0 && req->port_explicit && req->port != default_port(req->scheme))
		r = buf_printf(out, ":%u", (unsigned)req->port);
	if (r == 0)
		r = buf_puts(out, "\r\n");
	return r;
}

static int append_field(struct buf *out, const struct http_header *h)
{
	int r = buf_append(out, h->name, h->name_len);
	if (r == 0)
		r = buf_puts(out, ": ");
	if (r == 0)
		r = buf_append(out, h->value, h->value_len);
	if (r == 0)
		r = buf_puts(out, "\r\n");
	return r;
}

static int build_head(const struct http_request *req, bool keep_upgrade, struct buf *out)
{
	bool has_host = http_find_header(req->headers, req->n_headers, "Host") != NULL;
	bool upgrade = keep_upgrade && req->upgrade;
	int r;

	/* The result is never much longer than the head it comes from (a
	 * Host and a Connection field at most are added): one allocation. */
	r = buf_reserve(out, req->head_len + HTTP_MAX_HOST + 64);
	if (r == 0)
		r = buf_puts(out, req->method);
	if (r == 0)
		r = buf_puts(out, " ");
	if (r == 0)
		r = buf_append(out, req->path, req->path_len);
	if (r == 0 && req->query) {
		r = buf_puts(out, "?");
		if (r == 0)
			r = buf_append(out, req->query, req->query_len);
	}
	if (r == 0)
		r = buf_puts(out, " HTTP/1.1\r\n");
	if (r == 0 && !has_host)
		r = append_host(out, req);
	for (size_t i = 0; i < req->n_headers && r == 0; i++) {
		const struct http_header *h = &req->headers[i];

		if (name_is(h, "Host")) {
			if (has_host)
				r = append_host(out, req);
			has_host = false; /* exactly one */
			continue;
		}
		if (is_hop_by_hop(h))
			continue;
		/* WARNING: the signed identity header is the proxy's to add,
		 * never the agent's to send (it would claim to be another
		 * session, or replay a token it saw): dropped always, whether
		 * identity.header is on or not. */
		if (name_is(h, "Airlock-Identity"))
			continue;
		/* The proxy holds the whole body before it forwards the
		 * request, and answers 100-continue itself: an upstream that
		 * saw Expect could answer at once and take the body, which the
		 * agent was to hold back, for its next request. */
		if (name_is(h, "Expect"))
			continue;
		/* WARNING: framing fields are never dropped, whatever the
		 * Connection field says; the parser refuses such a list, and
		 * this holds for any other caller. */
		if (!name_is(h, "Content-Length") && !name_is(h, "Transfer-Encoding") &&
		    listed_in_connection(req, h))
			continue;
		r = append_field(out, h);
	}
	if (r == 0 && upgrade) {
		r = buf_puts(out, "Connection: upgrade\r\n");
		for (size_t i = 0; i < req->n_headers && r == 0; i++)
			if (name_is(&req->headers[i], "Upgrade"))
				r = append_field(out, &req->headers[i]);
	} else if (r == 0) {
		r = buf_puts(out, req->upstream_close ? "Connection: close\r\n" : "Connection: keep-alive\r\n");
	}
	if (r == 0)
		r = buf_puts(out, "\r\n");
	return r;
}

int http_build_upstream_head(const struct http_request *req, bool keep_upgrade, struct buf *out)
{
	size_t start = out->len;

	/* A CONNECT is not forwarded as a request: it becomes a tunnel. */
	if (req->form == HTTP_TARGET_AUTHORITY || !req->path || req->path_len == 0 ||
	    req->method[0] == '\0' || req->host[0] == '\0')
		return -EINVAL;
	int r = build_head(req, keep_upgrade, out);
	if (r < 0) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return r;
}
