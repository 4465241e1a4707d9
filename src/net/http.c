/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strict HTTP/1.1 message heads for the egress proxy (RFC 9110, RFC 9112).
 *
 * The proxy stands between an agent that may be hostile and servers it
 * does not control. A message that the proxy frames one way and the next
 * hop frames another is request smuggling (CL.TE, TE.CL, TE.TE, obs-fold,
 * bare LF, ...), and a target or Host that the policy reads one way and
 * the server another is a policy bypass. Wherever the RFCs let a recipient
 * choose between a lenient reading and refusal, this file refuses.
 *
 * The head is read one CRLF-terminated line at a time and each line is
 * judged as soon as it is complete, so a prefix of a message gives either
 * "need more" or the same verdict as the whole message. Checks that need
 * every field (Host, framing, Connection) run once the head is complete.
 *
 * Nothing here allocates; http_build_upstream_head appends to a buf.
 */
#include "net/http.h"
#include "util/hex.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "net/http_chars.h"

/* ---- errors ---- */

#define QUOTE_SIZE 96

/* s[0..n) quoted for a message: escaped, and cut with "..." when long,
 * because a peer chooses these bytes. */
static const char *quote(char out[QUOTE_SIZE], const char *s, size_t n)
{
	size_t o = 0;

	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[8];
		size_t tl;

		if (c == '"' || c == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)c;
			tl = 2;
		} else if (c >= 0x20 && c < 0x7f) {
			tmp[0] = (char)c;
			tl = 1;
		} else {
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);
			tl = 4;
		}
		/* room for this, and later for "...", '"' and NUL */
		if (o + tl + 5 > QUOTE_SIZE) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(out + o, tmp, tl);
		o += tl;
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

static const char *quote_char(char out[QUOTE_SIZE], char c)
{
	return quote(out, &c, 1);
}

struct ctx {
	int *status;
	struct error *err;
	int rc;
};

static int refuse(struct ctx *x, int status, int code, const char *fmt, ...) PRINTF_LIKE(4, 5);

static int refuse(struct ctx *x, int status, int code, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (x->status)
		*x->status = status;
	x->rc = error_set(x->err, code, "%s", msg);
	return x->rc;
}

#define BAD(x, ...) refuse((x), 400, EINVAL, __VA_ARGS__)

/* ---- lines ---- */

enum line_result {
	LINE_DONE, /* a CRLF-terminated line; *eol is the index of its CR */
	LINE_MORE, /* no line end yet */
	LINE_LONG, /* the line has a byte at index >= stop */
	LINE_BAD,  /* refused (x->rc) */
};

/* Find the end of the line starting at `start`. Only CRLF ends a line:
 * RFC 9112 §2.2 lets a recipient take a bare LF as a line end and some do,
 * so a bare LF (or a CR not followed by LF) is where one parser sees a new
 * header and the next does not. Line content must lie below `stop`. */
static enum line_result scan_line(struct ctx *x, const char *buf, size_t len, size_t start,
				  size_t stop, size_t lineno, size_t *eol)
{
	for (size_t i = start; i < len; i++) {
		if (buf[i] == '\n') {
			BAD(x, "line %zu: LF without CR; lines must end in CRLF", lineno);
			return LINE_BAD;
		}
		if (buf[i] == '\r') {
			*eol = i;
			if (i + 1 == len)
				return LINE_MORE;
			if (buf[i + 1] != '\n') {
				BAD(x, "line %zu: CR not followed by LF", lineno);
				return LINE_BAD;
			}
			return LINE_DONE;
		}
		if (i >= stop)
			return LINE_LONG;
	}
	*eol = len;
	return LINE_MORE;
}

/* One field line, "name: value". */
static int parse_field_line(struct ctx *x, const char *s, size_t n, size_t lineno,
			    struct http_header *h)
{
	char q[QUOTE_SIZE];
	size_t i = 0;

	/* obs-fold continues the previous value for some parsers and starts
	 * a nameless field for others (RFC 9112 §5.2 allows refusing it). A
	 * space before the first field is the same ambiguity. */
	if (n > 0 && is_ows((unsigned char)s[0]))
		return BAD(x, "line %zu: line folding (a line starting with whitespace) is not allowed",
			   lineno);
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == n)
		return BAD(x, "line %zu: no ':' in header line %s", lineno, quote(q, s, n));
	if (s[i] != ':') {
		if (i > 0 && is_ows((unsigned char)s[i])) {
			size_t j = i;
			while (j < n && is_ows((unsigned char)s[j]))
				j++;
			/* "Transfer-Encoding : chunked" is the field to one
			 * parser and an unknown one to the next (RFC 9112 §5.1
			 * requires refusing it). */
			if (j < n && s[j] == ':')
				return BAD(x, "line %zu: whitespace between header name %s and ':'",
					   lineno, quote(q, s, i));
		}
		return BAD(x, "line %zu: invalid character %s in header name", lineno,
			   quote_char(q, s[i]));
	}
	if (i == 0)
		return BAD(x, "line %zu: empty header name", lineno);
	for (size_t j = i + 1; j < n; j++) {
		if (!is_field_char((unsigned char)s[j])) {
			char qn[QUOTE_SIZE];
			return BAD(x, "line %zu: control character %s in the value of %s", lineno,
				   quote_char(q, s[j]), quote(qn, s, i));
		}
	}
	size_t a = i + 1, b = n;
	while (a < b && is_ows((unsigned char)s[a]))
		a++;
	while (b > a && is_ows((unsigned char)s[b - 1]))
		b--;
	h->name = s;
	h->name_len = i;
	h->value = s + a;
	h->value_len = b - a;
	return 0;
}

/* Read the field lines from `pos` to the empty line. Returns the head
 * length, 0 for more, or a refusal. */
static int read_field_lines(struct ctx *x, const char *buf, size_t len, size_t pos,
			    struct http_header *hdrs, size_t *n_hdrs)
{
	for (size_t lineno = 2;; lineno++) {
		size_t eol = 0;

		/* A field line ending at eol leaves room for its CRLF and the
		 * final CRLF within HTTP_MAX_HEAD. */
		switch (scan_line(x, buf, len, pos, HTTP_MAX_HEAD - 4, lineno, &eol)) {
		case LINE_DONE:
			break;
		case LINE_MORE:
			return 0;
		case LINE_LONG:
			return refuse(x, 431, EMSGSIZE, "header section longer than %d bytes",
				      HTTP_MAX_HEAD);
		case LINE_BAD:
			return x->rc;
		}
		if (eol == pos)
			return (int)(eol + 2);
		if (*n_hdrs == HTTP_MAX_HEADERS)
			return refuse(x, 431, EMSGSIZE, "more than %d header fields", HTTP_MAX_HEADERS);
		int r = parse_field_line(x, buf + pos, eol - pos, lineno, &hdrs[*n_hdrs]);
		if (r < 0)
			return r;
		(*n_hdrs)++;
		pos = eol + 2;
	}
}

/* ---- fields shared by requests and responses ---- */

struct fields {
	size_t n_cl;
	uint64_t content_length;
	bool te;          /* a Transfer-Encoding field is present */
	bool te_chunked;  /* ... and its final coding is chunked */
	bool conn_close;
	bool conn_keep_alive;
	bool conn_upgrade;
	size_t n_host;
	const struct http_header *host;
	const struct http_header *upgrade; /* the first Upgrade field */
	size_t n_upgrade;
	bool expect_continue;
	bool expect_other; /* an Expect field other than one 100-continue */
};

static int parse_content_length(struct ctx *x, const struct http_header *h, struct fields *f)
{
	char q[QUOTE_SIZE];
	uint64_t v = 0;

	/* Two lengths (even equal ones, even as "5, 5") are refused: RFC 9112
	 * §6.3 lets a recipient merge identical values, and a peer that does
	 * not is a desync. */
	if (++f->n_cl > 1)
		return BAD(x, "more than one Content-Length");
	if (h->value_len == 0)
		return BAD(x, "Content-Length: empty value");
	if (memchr(h->value, ',', h->value_len))
		return BAD(x, "Content-Length: %s is a list; exactly one length is allowed",
			   quote(q, h->value, h->value_len));
	for (size_t i = 0; i < h->value_len; i++) {
		unsigned char c = (unsigned char)h->value[i];
		if (!is_digit(c))
			return BAD(x, "Content-Length: %s is not a decimal number",
				   quote(q, h->value, h->value_len));
		if (v > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
			return BAD(x, "Content-Length: %s is too large",
				   quote(q, h->value, h->value_len));
		v = v * 10 + (uint64_t)(c - '0');
	}
	f->content_length = v;
	return 0;
}

/* Transfer codings a request may carry before chunked: registered, and
 * without parameters. "identity" is gone since RFC 7230 and was a classic
 * TE.TE smuggling spelling. */
static bool known_coding(const char *s, size_t n)
{
	return text_is(s, n, "gzip") || text_is(s, n, "x-gzip") || text_is(s, n, "deflate") ||
	       text_is(s, n, "compress") || text_is(s, n, "x-compress");
}

/* All Transfer-Encoding fields form one list, in order. Every element must
 * be a bare coding; chunked may appear only once, as the final coding
 * (RFC 9112 §6.1). A request's final coding must be chunked (§6.3 item 4:
 * 400), and a request coding we do not know is 501. A response may end
 * in another coding: then it is read until close. */
static int parse_transfer_encoding(struct ctx *x, bool request, const struct http_header *hdrs,
				   size_t n, struct fields *f)
{
	char q[QUOTE_SIZE];
	bool last_chunked = false;

	for (size_t i = 0; i < n; i++) {
		const struct http_header *h = &hdrs[i];
		const char *s = h->value, *end = h->value + h->value_len, *e;
		size_t el;

		if (!name_is(h, "Transfer-Encoding"))
			continue;
		f->te = true;
		while (list_next(&s, end, &e, &el)) {
			if (!all_tchars(e, el))
				return BAD(x, "Transfer-Encoding: %s is not a list of transfer codings",
					   quote(q, h->value, h->value_len));
			if (last_chunked)
				return BAD(x, "Transfer-Encoding: chunked must be the final coding");
			if (text_is(e, el, "chunked")) {
				last_chunked = true;
			} else if (request && !known_coding(e, el)) {
				return refuse(x, 501, ENOTSUP,
					      "Transfer-Encoding: unsupported transfer coding %s",
					      quote(q, e, el));
			}
		}
	}
	if (f->te && request && !last_chunked)
		return BAD(x, "Transfer-Encoding: the final coding must be chunked");
	f->te_chunked = last_chunked;
	return 0;
}

/* Connection options: close, keep-alive, upgrade, and the names of other
 * hop-by-hop fields, which the proxy removes. Listing a field that frames
 * the message or names the host would make the proxy drop it on the way
 * upstream: "Connection: Content-Length" turns a body into a second
 * request there. */
static int parse_connection(struct ctx *x, const struct http_header *h, struct fields *f)
{
	char q[QUOTE_SIZE];
	const char *s = h->value, *end = h->value + h->value_len, *e;
	size_t el;

	while (list_next(&s, end, &e, &el)) {
		if (el == 0)
			continue;
		if (!all_tchars(e, el))
			return BAD(x, "Connection: %s is not a list of options",
				   quote(q, h->value, h->value_len));
		if (text_is(e, el, "close"))
			f->conn_close = true;
		else if (text_is(e, el, "keep-alive"))
			f->conn_keep_alive = true;
		else if (text_is(e, el, "upgrade"))
			f->conn_upgrade = true;
		else if (text_is(e, el, "content-length") || text_is(e, el, "transfer-encoding") ||
			 text_is(e, el, "host"))
			return BAD(x, "Connection: lists %s, which is not a hop-by-hop field",
				   quote(q, e, el));
	}
	return 0;
}

static int read_fields(struct ctx *x, bool request, const struct http_header *hdrs, size_t n,
		       struct fields *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		const struct http_header *h = &hdrs[i];
		int r = 0;

		if (name_is(h, "Content-Length")) {
			r = parse_content_length(x, h, f);
		} else if (name_is(h, "Connection")) {
			r = parse_connection(x, h, f);
		} else if (name_is(h, "Host")) {
			f->n_host++;
			f->host = h;
		} else if (name_is(h, "Upgrade")) {
			if (!f->upgrade)
				f->upgrade = h;
			f->n_upgrade++;
		} else if (name_is(h, "Expect")) {
			if (text_is(h->value, h->value_len, "100-continue") && !f->expect_continue)
				f->expect_continue = true;
			else
				f->expect_other = true;
		}
		if (r < 0)
			return r;
	}
	int r = parse_transfer_encoding(x, request, hdrs, n, f);
	if (r < 0)
		return r;
	/* CL.TE and TE.CL: RFC 9112 §6.3 says TE wins, but an intermediary
	 * that forwards both hands the choice to the next parser. */
	if (f->te && f->n_cl > 0)
		return BAD(x, "both Content-Length and Transfer-Encoding");
	return 0;
}

/* ---- versions ---- */

enum version_result { VERSION_OK, VERSION_UNSUPPORTED, VERSION_INVALID };

/* HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive (RFC 9112 §2.3). */
static enum version_result parse_version(const char *v, size_t n, int *minor)
{
	if (n != 8 || memcmp(v, "HTTP/", 5) != 0 || !is_digit((unsigned char)v[5]) || v[6] != '.' ||
	    !is_digit((unsigned char)v[7]))
		return VERSION_INVALID;
	if (v[5] == '1' && (v[7] == '0' || v[7] == '1')) {
		*minor = v[7] - '0';
		return VERSION_OK;
	}
	return VERSION_UNSUPPORTED;
}

/* ---- hosts ---- */

struct authority {
	char host[HTTP_MAX_HOST + 1];
	uint16_t port;
	bool port_explicit;
};

static int parse_port(struct ctx *x, const char *what, const char *s, size_t n, uint16_t *port)
{
	char q[QUOTE_SIZE];
	unsigned v = 0;

	/* Decimal digits only: no sign, no hex, no empty port. Five digits at
	 * most, so the value cannot wrap before the range check. */
	if (n == 0 || n > 5)
		goto bad;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit((unsigned char)s[i]))
			goto bad;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		goto bad;
	*port = (uint16_t)v;
	return 0;
bad:
	return BAD(x, "%s: invalid port %s; a port is a decimal number from 1 to 65535", what,
		   quote(q, s, n));
}

/* IP-literal without its brackets: an IPv6 address, optionally followed by
 * a zone id after "%25" (RFC 6874) or a bare '%'. Stored as "addr%zone" so
 * the address layer sees one spelling. IPvFuture is refused. */
static int parse_ipv6(struct ctx *x, const char *what, const char *s, size_t n, char *out)
{
	char q[QUOTE_SIZE];
	char addr[INET6_ADDRSTRLEN];
	struct in6_addr in6;
	const char *pct = memchr(s, '%', n);
	size_t alen = pct ? (size_t)(pct - s) : n;
	size_t o = 0;

	if (alen == 0 || alen >= sizeof(addr))
		return BAD(x, "%s: %s is not an IPv6 address", what, quote(q, s, n));
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET6, addr, &in6) != 1)
		return BAD(x, "%s: %s is not an IPv6 address", what, quote(q, s, alen));
	for (size_t i = 0; i < alen; i++)
		out[o++] = ascii_lower(s[i]);
	if (pct) {
		const char *z = pct + 1, *end = s + n;
		if (end - z >= 2 && z[0] == '2' && z[1] == '5')
			z += 2;
		if (z == end)
			return BAD(x, "%s: empty IPv6 zone id", what);
		if ((size_t)(end - z) + o + 1 > HTTP_MAX_HOST)
			return BAD(x, "%s: host longer than %d characters", what, HTTP_MAX_HOST);
		out[o++] = '%';
		for (; z < end; z++) {
			if (!is_unreserved((unsigned char)*z))
				return BAD(x, "%s: invalid character %s in IPv6 zone id", what,
					   quote_char(q, *z));
			out[o++] = ascii_lower(*z);
		}
	}
	out[o] = '\0';
	return 0;
}

/* reg-name restricted to what DNS names use: letters, digits, '-', '.',
 * '_'. No percent-encoding, no empty labels; one trailing dot is dropped
 * so "example.com." and "example.com" are one host to the policy. */
static int parse_reg_name(struct ctx *x, const char *what, const char *s, size_t n, char *out)
{
	char q[QUOTE_SIZE];

	if (n == 0)
		return BAD(x, "%s: empty host", what);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '.' && c != '_')
			return BAD(x, "%s: invalid character %s in host", what, quote_char(q, s[i]));
	}
	size_t m = n;
	if (s[m - 1] == '.')
		m--;
	if (m > HTTP_MAX_HOST)
		return BAD(x, "%s: host longer than %d characters", what, HTTP_MAX_HOST);
	for (size_t i = 0; i < m; i++) {
		if (s[i] == '.' && (i == 0 || i + 1 == m || s[i + 1] == '.'))
			return BAD(x, "%s: empty label in host %s", what, quote(q, s, n));
		out[i] = ascii_lower(s[i]);
	}
	if (m == 0)
		return BAD(x, "%s: empty label in host %s", what, quote(q, s, n));
	out[m] = '\0';
	return 0;
}

/* host [ ":" port ], as in an authority-form target, an absolute-form
 * target's authority, or a Host field. */
static int parse_authority(struct ctx *x, const char *what, const char *s, size_t n,
			   struct authority *a)
{
	char q[QUOTE_SIZE];
	size_t i;
	int r;

	memset(a, 0, sizeof(*a));
	/* userinfo: "http://allowed.example@evil.example/" names evil to a
	 * URL parser and may look like allowed to a careless reader. */
	if (memchr(s, '@', n))
		return BAD(x, "%s: userinfo ('@') is not allowed", what);
	if (n > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close)
			return BAD(x, "%s: unterminated IPv6 literal %s", what, quote(q, s, n));
		r = parse_ipv6(x, what, s + 1, (size_t)(close - s) - 1, a->host);
		if (r < 0)
			return r;
		i = (size_t)(close - s) + 1;
		if (i < n && s[i] != ':')
			return BAD(x, "%s: invalid character %s after IPv6 literal", what,
				   quote_char(q, s[i]));
	} else {
		const char *colon = memchr(s, ':', n);
		i = colon ? (size_t)(colon - s) : n;
		r = parse_reg_name(x, what, s, i, a->host);
		if (r < 0)
			return r;
	}
	if (i < n) {
		r = parse_port(x, what, s + i + 1, n - i - 1, &a->port);
		if (r < 0)
			return r;
		a->port_explicit = true;
	}
	return 0;
}

/* ---- request targets ---- */

/* '%' must start a valid escape: servers disagree about "%zz" and "%2"
 * (kept as is, decoded to garbage, refused), and the policy matcher
 * decodes what it compares. */
static int check_percent(struct ctx *x, const char *s, size_t n)
{
	char q[QUOTE_SIZE];

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%')
			continue;
		if (n - i < 3 || hex_digit_value((unsigned char)s[i + 1]) < 0 ||
		    hex_digit_value((unsigned char)s[i + 2]) < 0)
			return BAD(x, "request target: invalid percent-encoding %s",
				   quote(q, s + i, n - i < 3 ? n - i : 3));
		i += 2;
	}
	return 0;
}

/* s[i] decoded, for the characters that give a path its structure:
 * '.', '/', '\\' and ';' may arrive percent-encoded. */
static char path_char(const char *s, size_t n, size_t i, size_t *adv)
{
	*adv = 1;
	if (s[i] == '%' && n - i >= 3) {
		int v = hex_digit_value((unsigned char)s[i + 1]) * 16 + hex_digit_value((unsigned char)s[i + 2]);
		if (v == '.' || v == '/' || v == '\\' || v == ';') {
			*adv = 3;
			return (char)v;
		}
	}
	return s[i];
}

/* The policy matches the path as sent; the server resolves dot segments
 * first. "/public/../admin" matches a rule that allows everything under
 * /public and reaches /admin. Refused in every spelling a server is known to resolve:
 * encoded dots ("%2e%2e"), segments split by an encoded or literal
 * backslash or an encoded slash ("..%2f", "..\\"), and a path parameter
 * after the dots ("..;x", which Tomcat resolves). A literal backslash is
 * a separator to some servers and not to others, so it is refused too.
 * Well-behaved clients resolve dot segments before sending. */
static int check_path(struct ctx *x, const char *p, size_t n)
{
	size_t dots = 0;
	bool other = false, params = false;

	if (memchr(p, '\\', n))
		return BAD(x, "request target: backslash in path");
	for (size_t i = 0; i <= n;) {
		size_t adv = 1;
		char c = i == n ? '/' : path_char(p, n, i, &adv);

		if (c == '/' || c == '\\') {
			if (!other && (dots == 1 || dots == 2))
				return BAD(x, "request target: dot segment (\".\" or \"..\") in path");
			dots = 0;
			other = params = false;
		} else if (params) {
			/* ignored up to the next separator */
		} else if (c == ';') {
			params = true;
		} else if (c == '.') {
			dots++;
		} else {
			other = true;
		}
		i += adv;
	}
	return 0;
}

/* path-abempty [ "?" query ]; an empty path is "/" (RFC 9112 §3.2.1). */
static int parse_path_query(struct ctx *x, struct http_request *req, const char *s, size_t n)
{
	const char *qm = memchr(s, '?', n);
	size_t plen = qm ? (size_t)(qm - s) : n;
	int r = check_percent(x, s, n);

	if (r < 0)
		return r;
	if (plen == 0) {
		req->path = "/";
		req->path_len = 1;
	} else {
		req->path = s;
		req->path_len = plen;
	}
	if (qm) {
		req->query = qm + 1;
		req->query_len = n - plen - 1;
	}
	return check_path(x, req->path, req->path_len);
}

static bool is_scheme_char(unsigned char c)
{
	return is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.';
}

/* RFC 9112 §3.2: origin-form, absolute-form, authority-form (CONNECT
 * only, with a port) or asterisk-form (OPTIONS only); nothing else. */
static int parse_target(struct ctx *x, struct http_request *req, const char *t, size_t n)
{
	char q[QUOTE_SIZE];
	bool connect = strcmp(req->method, "CONNECT") == 0;
	struct authority a;
	size_t i;
	int r;

	/* Visible ASCII only. A fragment is never sent (RFC 9110 §4.2.5);
	 * servers that take '#' as the end of the path see a different path
	 * from the policy. */
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		if (c == '#')
			return BAD(x, "request target: fragment ('#') is not allowed");
		if (c < 0x21 || c > 0x7e)
			return BAD(x, "request target: invalid character %s", quote_char(q, t[i]));
	}
	if (t[0] == '/') {
		if (connect)
			return BAD(x, "request target: CONNECT needs authority form host:port");
		req->form = HTTP_TARGET_ORIGIN;
		return parse_path_query(x, req, t, n);
	}
	if (n == 1 && t[0] == '*') {
		if (strcmp(req->method, "OPTIONS") != 0)
			return BAD(x, "request target: '*' is only for OPTIONS");
		req->form = HTTP_TARGET_ASTERISK;
		req->path = t;
		req->path_len = 1;
		return 0;
	}
	i = 0;
	if (is_alpha((unsigned char)t[0]))
		while (i < n && is_scheme_char((unsigned char)t[i]))
			i++;
	if (i > 0 && n - i >= 3 && memcmp(t + i, "://", 3) == 0) {
		if (connect)
			return BAD(x, "request target: CONNECT needs authority form host:port");
		if (!text_is(t, i, "http") && !text_is(t, i, "https"))
			return BAD(x, "request target: scheme %s is not http or https",
				   quote(q, t, i));
		for (size_t k = 0; k < i; k++)
			req->scheme[k] = ascii_lower(t[k]);
		req->scheme[i] = '\0';
		size_t a0 = i + 3, a1 = a0;
		while (a1 < n && t[a1] != '/' && t[a1] != '?')
			a1++;
		r = parse_authority(x, "request target", t + a0, a1 - a0, &a);
		if (r < 0)
			return r;
		req->form = HTTP_TARGET_ABSOLUTE;
		memcpy(req->host, a.host, sizeof(req->host));
		req->port_explicit = a.port_explicit;
		req->port = a.port_explicit ? a.port : default_port(req->scheme);
		return parse_path_query(x, req, t + a1, n - a1);
	}
	if (!connect) {
		if (memchr(t, ':', n) && !memchr(t, '/', n) && !memchr(t, '?', n))
			return BAD(x, "request target: authority form is only for CONNECT");
		return BAD(x, "request target: %s is not in origin, absolute, authority or asterisk "
			      "form",
			   quote(q, t, n));
	}
	r = parse_authority(x, "request target", t, n, &a);
	if (r < 0)
		return r;
	if (!a.port_explicit)
		return BAD(x, "request target: CONNECT needs an explicit port");
	req->form = HTTP_TARGET_AUTHORITY;
	memcpy(req->host, a.host, sizeof(req->host));
	req->port = a.port;
	req->port_explicit = true;
	return 0;
}

/* ---- requests ---- */

static int parse_request_line(struct ctx *x, struct http_request *req, const char *s, size_t n)
{
	char q[QUOTE_SIZE];
	size_t i = 0;

	/* RFC 9112 §2.2 lets a server skip empty lines before a request; the
	 * proxy does not guess where a message starts. */
	if (n == 0)
		return BAD(x, "empty line before the request line");
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == n)
		return BAD(x, "request line: no request target");
	if (s[i] != ' ')
		return BAD(x, "request line: invalid character %s in the method", quote_char(q, s[i]));
	if (i == 0)
		return BAD(x, "request line: empty method");
	if (i > HTTP_MAX_METHOD)
		return BAD(x, "request line: method longer than %d characters", HTTP_MAX_METHOD);
	memcpy(req->method, s, i);
	req->method[i] = '\0';

	size_t t0 = i + 1;
	const char *sp = memchr(s + t0, ' ', n - t0);
	if (!sp)
		return BAD(x, "request line: no HTTP version (HTTP/0.9 is not supported)");
	size_t t1 = (size_t)(sp - s);
	if (t1 == t0)
		return BAD(x, "request line: empty request target");
	const char *v = sp + 1;
	size_t vn = n - t1 - 1;
	switch (parse_version(v, vn, &req->minor)) {
	case VERSION_OK:
		break;
	case VERSION_UNSUPPORTED:
		return refuse(x, 505, ENOTSUP, "request line: %s is not supported; use HTTP/1.1",
			      quote(q, v, vn));
	case VERSION_INVALID:
		return BAD(x, "request line: invalid HTTP version %s", quote(q, v, vn));
	}
	return parse_target(x, req, s + t0, t1 - t0);
}

static bool same_port(const struct authority *h, uint16_t port, uint16_t dflt)
{
	return (h->port_explicit ? h->port : dflt) == port;
}

/* Methods whose request content has a defined meaning (RFC 9110 §9.3,
 * RFC 4918, RFC 3253, RFC 5323): a server reads their bodies. */
static bool method_defines_content(const char *m)
{
	static const char *const names[] = { "POST",  "PUT",   "PATCH",  "PROPFIND",   "PROPPATCH", "MKCOL",
					     "LOCK",  "REPORT", "SEARCH", "MKCALENDAR", "ACL",       "QUERY" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(m, names[i]) == 0)
			return true;
	return false;
}

/* A body that the upstream may leave unread is a request of its own to
 * a server that does not read it ("GET /public/x" carrying "POST
 * /admin/..." as its body): one the policy never decided and no record
 * shows. GET, HEAD and TRACE bodies have no meaning anywhere (TRACE must
 * not have one, RFC 9110 §9.3.8) and are refused. DELETE, OPTIONS and
 * methods of no known meaning go through (some APIs send DELETE with a
 * body), but the upstream is told to close after them and is not reused
 * (upstream_close): what it left unread is never read as a request. */
static int request_body_rules(struct ctx *x, struct http_request *req)
{
	if (req->body == HTTP_BODY_NONE || (req->body == HTTP_BODY_LENGTH && req->content_length == 0))
		return 0;
	if (strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0 ||
	    strcmp(req->method, "TRACE") == 0)
		return BAD(x, "a body on %s, which servers may not read: it could run as a request of its own; "
			   "send it with POST", req->method);
	if (!method_defines_content(req->method))
		req->upstream_close = true;
	return 0;
}

static int request_semantics(struct ctx *x, struct http_request *req, const struct fields *f)
{
	char q[QUOTE_SIZE];
	struct authority h;
	int r;

	memset(&h, 0, sizeof(h));
	/* Two Host fields: the policy checks one, the server may use the
	 * other (RFC 9112 §3.2 requires 400). */
	if (f->n_host > 1)
		return BAD(x, "more than one Host header");
	if (f->n_host == 0 && req->minor == 1)
		return BAD(x, "no Host header (HTTP/1.1 requires one)");
	if (f->host) {
		r = parse_authority(x, "Host", f->host->value, f->host->value_len, &h);
		if (r < 0)
			return r;
	}
	switch (req->form) {
	case HTTP_TARGET_ORIGIN:
	case HTTP_TARGET_ASTERISK:
		if (!f->host)
			return BAD(x, "no Host header and no host in the request target");
		memcpy(req->host, h.host, sizeof(req->host));
		req->port_explicit = h.port_explicit;
		req->port = h.port_explicit ? h.port : default_port(req->scheme);
		break;
	case HTTP_TARGET_ABSOLUTE:
		/* RFC 9112 §3.2.2 says to ignore Host here; a server behind
		 * the proxy that does not would serve another site than the
		 * one the policy allowed. */
		if (f->host && (strcmp(h.host, req->host) != 0 ||
				!same_port(&h, req->port, default_port(req->scheme))))
			return BAD(x, "Host %s disagrees with the request target",
				   quote(q, f->host->value, f->host->value_len));
		break;
	case HTTP_TARGET_AUTHORITY:
		if (f->host && (strcmp(h.host, req->host) != 0 ||
				!same_port(&h, req->port, req->port)))
			return BAD(x, "Host %s disagrees with the request target",
				   quote(q, f->host->value, f->host->value_len));
		break;
	}
	/* RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has
	 * faulty framing; a 1.0 hop would not decode it. */
	if (f->te && req->minor == 0)
		return BAD(x, "Transfer-Encoding in an HTTP/1.0 request");
	if (req->form == HTTP_TARGET_AUTHORITY) {
		/* Bytes after a CONNECT head are tunnel data; a length on it
		 * would let a second parser read them as a body. */
		if (f->te || f->content_length > 0)
			return BAD(x, "CONNECT request with content");
		req->body = HTTP_BODY_NONE;
	} else if (f->te) {
		req->body = HTTP_BODY_CHUNKED;
	} else if (f->n_cl > 0) {
		req->body = HTTP_BODY_LENGTH;
		req->content_length = f->content_length;
	} else {
		req->body = HTTP_BODY_NONE;
	}
	if (req->minor == 1)
		req->keep_alive = !f->conn_close;
	else
		req->keep_alive = f->conn_keep_alive && !f->conn_close;
	/* RFC 9110 §7.8: Upgrade in an HTTP/1.0 request is ignored. */
	if (req->minor == 1 && f->conn_upgrade && f->upgrade) {
		const char *s = f->upgrade->value, *end = s + f->upgrade->value_len, *e = NULL;
		size_t el = 0;

		req->upgrade = true;
		/* WARNING: websocket only when it is the one protocol offered
		 * in the one Upgrade field: the server picks from a list
		 * ("websocket, h2c"), and a switch to h2c would turn the relay
		 * into a channel for requests no rule decides. */
		if (f->n_upgrade == 1 && list_next(&s, end, &e, &el)) {
			const char *slash = memchr(e, '/', el);
			size_t nl = slash ? (size_t)(slash - e) : el;
			const char *e2;
			size_t el2;
			req->upgrade_websocket = text_is(e, nl, "websocket") && !list_next(&s, end, &e2, &el2);
		}
	}
	req->expect_continue = f->expect_continue && req->minor == 1;
	/* The proxy answers 100-continue itself and never forwards Expect
	 * (see build_head): an expectation it cannot meet is refused, as
	 * RFC 9110 §10.1.1 allows, rather than dropped unmet. */
	if (f->expect_other)
		return refuse(x, 417, EINVAL, "an Expect other than one 100-continue");
	return request_body_rules(x, req);
}

/* ---- the first line and the fields, for requests and responses ---- */

static int parse_status_line(struct ctx *x, struct http_response *resp, const char *s, size_t n);

/* Read a message head: the request line (req) or the status line (resp),
 * then the field lines and what they mean together (f). Returns the
 * head's length, 0 when more bytes are needed, or a negative errno; a
 * first line longer than HTTP_MAX_REQUEST_LINE is answered 414 for a
 * request, 502 for a response. */
static int read_message_head(struct ctx *x, const char *buf, size_t len, struct http_request *req,
			     struct http_response *resp, struct fields *f)
{
	size_t eol = 0;
	int r;

	switch (scan_line(x, buf, len, 0, HTTP_MAX_REQUEST_LINE, 1, &eol)) {
	case LINE_DONE:
		break;
	case LINE_MORE:
		return 0;
	case LINE_LONG:
		return refuse(x, req ? 414 : 502, EMSGSIZE, "%s longer than %d bytes",
			      req ? "request line" : "status line", HTTP_MAX_REQUEST_LINE);
	case LINE_BAD:
		return x->rc;
	}
	r = req ? parse_request_line(x, req, buf, eol) : parse_status_line(x, resp, buf, eol);
	if (r < 0)
		return r;
	struct http_header *hdrs = req ? req->headers : resp->headers;
	size_t *n_hdrs = req ? &req->n_headers : &resp->n_headers;
	r = read_field_lines(x, buf, len, eol + 2, hdrs, n_hdrs);
	if (r <= 0)
		return r;
	int e = read_fields(x, req != NULL, hdrs, *n_hdrs, f);
	return e < 0 ? e : r;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req, int *status,
		       struct error *err)
{
	struct ctx x = { status, err, 0 };
	struct fields f;

	memset(req, 0, sizeof(*req));
	if (status)
		*status = 0;
	if (!buf || len == 0)
		return 0;
	int r = read_message_head(&x, buf, len, req, NULL, &f);
	if (r <= 0)
		return r;
	size_t head_len = (size_t)r;
	r = request_semantics(&x, req, &f);
	if (r < 0)
		return r;
	req->head_len = head_len;
	return (int)head_len;
}

static const char *moved(const char *p, const char *old, size_t len, const char *new)
{
	/* Compared as integers: p may point into another object ("/"). */
	uintptr_t a = (uintptr_t)p, o = (uintptr_t)old;
	if (!p || a < o || a - o >= len)
		return p;
	return new + (a - o);
}

void http_request_move(struct http_request *req, const char *old, const char *new)
{
	size_t len = req->head_len;

	req->path = moved(req->path, old, len, new);
	req->query = moved(req->query, old, len, new);
	for (size_t i = 0; i < req->n_headers; i++) {
		req->headers[i].name = moved(req->headers[i].name, old, len, new);
		req->headers[i].value = moved(req->headers[i].value, old, len, new);
	}
}

/* ---- responses ---- */

static int parse_status_line(struct ctx *x, struct http_response *resp, const char *s, size_t n)
{
	char q[QUOTE_SIZE];
	const char *sp = memchr(s, ' ', n);
	size_t vn = sp ? (size_t)(sp - s) : n;

	if (n == 0)
		return BAD(x, "empty line before the status line");
	switch (parse_version(s, vn, &resp->minor)) {
	case VERSION_OK:
		break;
	case VERSION_UNSUPPORTED:
		return refuse(x, 505, ENOTSUP, "status line: %s is not supported", quote(q, s, vn));
	case VERSION_INVALID:
		return BAD(x, "status line: invalid HTTP version %s", quote(q, s, vn));
	}
	if (!sp)
		return BAD(x, "status line: no status code");
	const char *c = sp + 1;
	size_t cn = n - vn - 1;
	/* status-code SP [ reason-phrase ]; the SP is often missing when the
	 * reason is, and that reads the same to everyone. */
	if (cn < 3 || !is_digit((unsigned char)c[0]) || !is_digit((unsigned char)c[1]) ||
	    !is_digit((unsigned char)c[2]) || (cn > 3 && c[3] != ' '))
		return BAD(x, "status line: invalid status code %s", quote(q, c, cn));
	int code = (c[0] - '0') * 100 + (c[1] - '0') * 10 + (c[2] - '0');
	if (code < 100 || code > 599)
		return BAD(x, "status line: status code %d is not in 100-599", code);
	for (size_t i = 4; i < cn; i++)
		if (!is_field_char((unsigned char)c[i]))
			return BAD(x, "status line: control character %s in the reason phrase",
				   quote_char(q, c[i]));
	resp->status = code;
	return 0;
}

int http_parse_response(const char *buf, size_t len, const char *method, struct http_response *resp,
			struct error *err)
{
	int status = 0;
	struct ctx x = { &status, err, 0 };
	struct fields f;

	memset(resp, 0, sizeof(*resp));
	if (!buf || len == 0)
		return 0;
	int r = read_message_head(&x, buf, len, NULL, resp, &f);
	if (r <= 0)
		return r;
	size_t head_len = (size_t)r;
	if (f.te && resp->minor == 0)
		return BAD(&x, "Transfer-Encoding in an HTTP/1.0 response");

	bool head = method && strcmp(method, "HEAD") == 0;
	bool connect = method && strcmp(method, "CONNECT") == 0;
	int s = resp->status;
	resp->content_length = f.content_length;
	/* RFC 9112 §6.3, in its order. */
	if (head || (s >= 100 && s < 200) || s == 204 || s == 304)
		resp->body = HTTP_BODY_NONE;
	else if (connect && s >= 200 && s < 300)
		resp->body = HTTP_BODY_NONE; /* the tunnel starts after the head */
	else if (f.te)
		resp->body = f.te_chunked ? HTTP_BODY_CHUNKED : HTTP_BODY_EOF;
	else if (f.n_cl > 0)
		resp->body = HTTP_BODY_LENGTH;
	else
		resp->body = HTTP_BODY_EOF;
	if (resp->minor == 1)
		resp->keep_alive = !f.conn_close;
	else
		resp->keep_alive = f.conn_keep_alive && !f.conn_close;
	if (resp->body == HTTP_BODY_EOF)
		resp->keep_alive = false;
	resp->head_len = head_len;
	return (int)head_len;
}

const struct http_header *http_find_header(const struct http_header *h, size_t n, const char *name)
{
	if (!h || !name)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (name_is(&h[i], name))
			return &h[i];
	return NULL;
}
