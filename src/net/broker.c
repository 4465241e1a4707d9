/* SPDX-License-Identifier: Apache-2.0 */
#include "net/broker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "net/gitproto.h"
#include "net/netpolicy.h"
#include "util/base64.h"
#include "util/entropy.h"

#define MAX_PUSH_COMMANDS 256
#define PUSH_PREFIX_MAX 65536 /* the command list is read from this much of the body */

struct broker *broker_new(const struct policy *pol)
{
	struct broker *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	if (pol->n_credentials) {
		b->v = calloc(pol->n_credentials, sizeof(*b->v));
		if (!b->v) {
			free(b);
			return NULL;
		}
	}
	b->n = pol->n_credentials;
	for (size_t i = 0; i < b->n; i++)
		b->v[i].pol = &pol->credentials[i];
	if (!(b->echo = dlp_new())) {
		free(b->v);
		free(b);
		return NULL;
	}
	return b;
}

void broker_free(struct broker *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		if (b->v[i].secret) {
			explicit_bzero(b->v[i].secret, b->v[i].secret_len);
			munlock(b->v[i].secret, b->v[i].secret_len);
			free(b->v[i].secret);
		}
		explicit_bzero(b->v[i].placeholder, sizeof(b->v[i].placeholder));
	}
	dlp_free(b->echo);
	free(b->v);
	free(b);
}

static bool placeholder_form(const char *p)
{
	if (strlen(p) != BROKER_PLACEHOLDER_LEN || strncmp(p, BROKER_PREFIX, BROKER_PREFIX_LEN) != 0)
		return false;
	for (const char *c = p + BROKER_PREFIX_LEN; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

int broker_set(struct broker *b, const char *name, const char *placeholder, const uint8_t *secret, size_t len)
{
	struct broker_cred *c = NULL;
	for (size_t i = 0; i < b->n && !c; i++)
		if (strcmp(b->v[i].pol->name, name) == 0)
			c = &b->v[i];
	if (!c)
		return -ENOENT;
	if ((placeholder[0] && !placeholder_form(placeholder)) || len < BROKER_MIN_SECRET || len > BROKER_MAX_SECRET ||
	    memchr(secret, '\r', len) || memchr(secret, '\n', len) || memchr(secret, '\0', len))
		return -EINVAL;
	char label[96];
	snprintf(label, sizeof(label), "credential:%s", name);
	int r = dlp_add_secret(b->echo, label, secret, len);
	if (r < 0)
		return r;
	uint8_t *copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, secret, len);
	/* Best effort: never swapped out, never in a core dump. */
	(void)mlock(copy, len);
	if (c->secret) {
		explicit_bzero(c->secret, c->secret_len);
		free(c->secret);
	}
	c->secret = copy;
	c->secret_len = len;
	snprintf(c->placeholder, sizeof(c->placeholder), "%s", placeholder);
	return 0;
}

bool broker_complete(const struct broker *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (!b->v[i].secret)
			return false;
	return true;
}

int broker_make_placeholder(char out[BROKER_PLACEHOLDER_LEN + 1])
{
	uint8_t rnd[20];
	int e = entropy_fill(rnd, sizeof(rnd));
	if (e < 0)
		return e;
	memcpy(out, BROKER_PREFIX, BROKER_PREFIX_LEN);
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(out + BROKER_PREFIX_LEN + 2 * i, 3, "%02x", rnd[i]);
	out[BROKER_PLACEHOLDER_LEN] = '\0';
	return 0;
}

static bool contains(const char *buf, size_t len, const char *needle, size_t nlen)
{
	return nlen && len >= nlen && memmem(buf, len, needle, nlen) != NULL;
}

const struct broker_cred *broker_find(const struct broker *b, const char *buf, size_t len)
{
	if (!b || !buf || len < BROKER_PLACEHOLDER_LEN)
		return NULL;
	/* Find the prefix first (cheap), then which placeholder it starts. */
	const char *p = buf, *end = buf + len;
	while ((p = memmem(p, (size_t)(end - p), BROKER_PREFIX, BROKER_PREFIX_LEN))) {
		if ((size_t)(end - p) >= BROKER_PLACEHOLDER_LEN)
			for (size_t i = 0; i < b->n; i++)
				if (b->v[i].placeholder[0] &&
				    memcmp(p, b->v[i].placeholder, BROKER_PLACEHOLDER_LEN) == 0)
					return &b->v[i];
		p += BROKER_PREFIX_LEN;
	}
	return NULL;
}

/* ---- where a request stands against a binding ---- */

static bool method_ok(const struct policy_cred_binding *bd, const char *method)
{
	if (!bd->methods)
		return true;
	for (size_t i = 0; i < bd->n_methods; i++)
		if (strcmp(bd->methods[i], method) == 0)
			return true;
	return false;
}

static bool path_ok(const struct policy_cred_binding *bd, const struct http_request *req)
{
	if (!bd->paths)
		return true;
	for (size_t i = 0; i < bd->n_paths; i++)
		if (netpol_glob_match(bd->paths[i], req->path, req->path_len))
			return true;
	return false;
}

/* The body without its chunked framing, as far as it goes (at most cap
 * bytes): enough for a push's command list. */
static size_t dechunk_prefix(const char *in, size_t len, char *out, size_t cap)
{
	size_t i = 0, n = 0;
	while (i < len && n < cap) {
		uint64_t size = 0;
		size_t digits = 0;
		while (i < len && digits < 16) {
			char ch = in[i];
			int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
				ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
			if (v < 0)
				break;
			size = size * 16 + (uint64_t)v;
			i++;
			digits++;
		}
		if (!digits || size == 0)
			break;
		const char *lf = memchr(in + i, '\n', len - i);
		if (!lf)
			break;
		i = (size_t)(lf - in) + 1;
		size_t take = size < len - i ? (size_t)size : len - i;
		if (take > cap - n)
			take = cap - n;
		memcpy(out + n, in + i, take);
		n += take;
		if (take < size)
			break;
		i += take + 2; /* CRLF after the data (the parser checked the framing) */
	}
	return n;
}

/* Does bd match the request? 1 yes, 0 no, -1 when it is a git binding
 * for this host whose rules refuse the operation (why says how). */
static int binding_match(const struct policy_cred_binding *bd, const char *host, uint16_t port,
			 const struct http_request *req, const char *body, size_t body_len, char *why,
			 size_t why_len)
{
	if (bd->port != port || !netpol_host_match(bd->host, host) || !method_ok(bd, req->method))
		return 0;
	if (!bd->git)
		return path_ok(bd, req) ? 1 : 0;

	char repo[512];
	enum git_op op = git_classify(req->method, req->path, req->path_len, req->query, req->query_len, repo,
				      sizeof(repo));
	if (op == GIT_OP_NONE)
		return 0;
	/* Another repository on the host is not this binding's to allow or
	 * refuse: another binding or credential may allow it, and a request
	 * carrying no placeholder for it is no business of ours. */
	const struct policy_git_binding scope = { .repos = bd->git->repos, .n_repos = bd->git->n_repos,
						  .fetch = true };
	if (!git_decide(&scope, GIT_OP_FETCH, repo, NULL, 0, NULL, 0))
		return 0;
	struct git_ref_update *u = NULL;
	size_t n = 0;
	if (op == GIT_OP_PUSH) {
		char *plain = NULL;
		const char *cmds = body;
		size_t cmds_len = body_len;
		if (req->body == HTTP_BODY_CHUNKED) {
			plain = malloc(PUSH_PREFIX_MAX);
			if (!plain) {
				snprintf(why, why_len, "out of memory");
				return -1;
			}
			cmds_len = dechunk_prefix(body, body_len, plain, PUSH_PREFIX_MAX);
			cmds = plain;
		}
		u = calloc(MAX_PUSH_COMMANDS, sizeof(*u));
		size_t consumed = 0;
		int r = u ? git_parse_push_commands((const uint8_t *)cmds, cmds_len, u, MAX_PUSH_COMMANDS, &n,
						    &consumed) :
			    -ENOMEM;
		free(plain);
		if (r != 1) {
			free(u);
			snprintf(why, why_len, "git push to %s: %s", repo,
				 r == 0	       ? "the ref-update commands are incomplete" :
				 r == -ENOTSUP ? "signed pushes are not supported" :
				 r == -E2BIG   ? "too many ref updates in one push" :
						 "malformed ref-update commands");
			return -1;
		}
	}
	bool ok = git_decide(bd->git, op, repo, u, n, why, why_len);
	free(u);
	return ok ? 1 : -1;
}

int broker_add_secrets(const struct broker *b, struct dlp *d)
{
	for (size_t i = 0; b && i < b->n; i++) {
		if (!b->v[i].secret)
			continue;
		char label[96];
		snprintf(label, sizeof(label), "credential:%s", b->v[i].pol->name);
		int r = dlp_add_secret(d, label, b->v[i].secret, b->v[i].secret_len);
		if (r < 0)
			return r;
	}
	return 0;
}

bool broker_bound(const struct broker *b, const char *host, uint16_t port)
{
	for (size_t i = 0; b && i < b->n; i++)
		for (size_t k = 0; k < b->v[i].pol->n_bindings; k++) {
			const struct policy_cred_binding *bd = &b->v[i].pol->bindings[k];
			if (bd->port == port && netpol_host_match(bd->host, host))
				return true;
		}
	return false;
}

bool broker_git_push(const struct broker *b, const char *host, uint16_t port, const struct http_request *req)
{
	char repo[GIT_REPO_MAX + 1];
	if (!b || git_classify(req->method, req->path, req->path_len, req->query, req->query_len, repo,
			       sizeof(repo)) != GIT_OP_PUSH)
		return false;
	for (size_t i = 0; i < b->n; i++)
		for (size_t k = 0; k < b->v[i].pol->n_bindings; k++) {
			const struct policy_cred_binding *bd = &b->v[i].pol->bindings[k];
			if (bd->git && bd->port == port && netpol_host_match(bd->host, host))
				return true;
		}
	return false;
}

/* ---- building the changed fields ---- */

/* A replacement field, by offset into side (side may move while it grows). */
struct field {
	size_t off, len;
	bool set;
};

/* Append c's secret percent-encoded (all but unreserved characters), as a
 * query parameter's value. */
static int put_pct(struct buf *side, const struct broker_cred *c)
{
	int r = 0;
	for (size_t i = 0; i < c->secret_len && !r; i++) {
		unsigned char ch = c->secret[i];
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
		    ch == '.' || ch == '_' || ch == '~')
			r = buf_append(side, &ch, 1);
		else
			r = buf_printf(side, "%%%02X", ch);
	}
	return r;
}

/* Append s[0..len) to side with every occurrence of the placeholder
 * replaced by the secret (pct: percent-encoded, for a query). */
static int put_replaced(struct buf *side, const char *s, size_t len, const struct broker_cred *c, bool pct,
			struct field *f)
{
	f->off = side->len;
	const char *p = s, *end = s + len;
	int r = 0;
	while (p < end && !r) {
		const char *hit = memmem(p, (size_t)(end - p), c->placeholder, BROKER_PLACEHOLDER_LEN);
		const char *stop = hit ? hit : end;
		r = buf_append(side, p, (size_t)(stop - p));
		if (!hit || r)
			break;
		if (pct) {
			r = put_pct(side, c);
		} else {
			r = buf_append(side, c->secret, c->secret_len);
		}
		p = hit + BROKER_PLACEHOLDER_LEN;
	}
	f->len = side->len - f->off;
	f->set = true;
	return r;
}

static bool name_is(const struct http_header *h, const char *name)
{
	return strlen(name) == h->name_len && strncasecmp(h->name, name, h->name_len) == 0;
}

/* The decoded credentials of "Basic XXX", into out (NUL-terminated). */
static ssize_t basic_decode(const struct http_header *h, char *out, size_t cap)
{
	if (h->value_len < 6 || strncasecmp(h->value, "basic ", 6) != 0)
		return -EINVAL;
	const char *v = h->value + 6;
	size_t n = h->value_len - 6;
	while (n && *v == ' ')
		v++, n--;
	ssize_t d = base64_decode(v, n, (uint8_t *)out, cap - 1);
	if (d >= 0)
		out[d] = '\0';
	return d;
}

/* Where a placeholder of c occurs in req, judged against binding bd (NULL:
 * no binding matched). Returns true when every occurrence is at bd's
 * site; else false with the first wrong place in where. */
static bool occurrences_ok(const struct broker_cred *c, const struct policy_cred_binding *bd,
			   const struct http_request *req, const char *body, size_t body_len, const char **where)
{
	const char *ph = c->placeholder;
	const size_t pl = BROKER_PLACEHOLDER_LEN;
	if (contains(req->path, req->path_len, ph, pl)) {
		*where = "the path";
		return false;
	}
	if (req->query && contains(req->query, req->query_len, ph, pl)) {
		/* Only as the value of the binding's parameter. */
		const char *q = req->query, *end = req->query + req->query_len;
		while (q < end) {
			const char *amp = memchr(q, '&', (size_t)(end - q));
			const char *pe = amp ? amp : end;
			const char *eq = memchr(q, '=', (size_t)(pe - q));
			if (contains(q, (size_t)(pe - q), ph, pl)) {
				bool right = bd && bd->where == POLICY_CRED_QUERY && eq &&
					     (size_t)(eq - q) == strlen(bd->query) &&
					     strncmp(q, bd->query, (size_t)(eq - q)) == 0 &&
					     !contains(q, (size_t)(eq - q), ph, pl);
				if (!right) {
					*where = "the query";
					return false;
				}
			}
			q = pe + 1;
		}
	}
	for (size_t i = 0; i < req->n_headers; i++) {
		const struct http_header *h = &req->headers[i];
		if (contains(h->name, h->name_len, ph, pl)) {
			*where = "a header name";
			return false;
		}
		bool raw = contains(h->value, h->value_len, ph, pl);
		if (raw && !(bd && bd->where == POLICY_CRED_HEADER && name_is(h, bd->header))) {
			*where = "a header the binding does not name";
			return false;
		}
		char dec[1024];
		ssize_t d;
		/* By the decoded length: a NUL in the user name must not hide
		 * a placeholder after it, which the swap below would reach. */
		if (name_is(h, "Authorization") && (d = basic_decode(h, dec, sizeof(dec))) >= 0 &&
		    contains(dec, (size_t)d, ph, pl)) {
			const char *colon = memchr(dec, ':', (size_t)d);
			bool right = bd && bd->where == POLICY_CRED_BASIC && colon &&
				     !contains(dec, (size_t)(colon - dec), ph, pl);
			explicit_bzero(dec, sizeof(dec));
			if (!right) {
				*where = "basic authentication the binding does not name";
				return false;
			}
		}
	}
	if (body_len && contains(body, body_len, ph, pl)) {
		*where = "the body";
		return false;
	}
	return true;
}

/* Remove every header called name from req. */
static void drop_headers(struct http_request *req, const char *name)
{
	size_t k = 0;
	for (size_t i = 0; i < req->n_headers; i++)
		if (!name_is(&req->headers[i], name))
			req->headers[k++] = req->headers[i];
	req->n_headers = k;
}

/* Build bd's injection for c into side; header/value fields set. */
static int put_always(struct buf *side, const struct broker_cred *c, const struct policy_cred_binding *bd,
		      const struct http_request *req, struct field *name, struct field *value, struct field *query)
{
	int r = 0;
	switch (bd->where) {
	case POLICY_CRED_HEADER: {
		name->off = side->len;
		r = buf_puts(side, bd->header);
		name->len = side->len - name->off;
		name->set = true;
		const char *at = strstr(bd->tmpl, "{secret}");
		value->off = side->len;
		if (!r && at)
			r = buf_append(side, bd->tmpl, (size_t)(at - bd->tmpl)) ?:
				buf_append(side, c->secret, c->secret_len) ?: buf_puts(side, at + 8);
		value->len = side->len - value->off;
		value->set = true;
		break;
	}
	case POLICY_CRED_BASIC: {
		name->off = side->len;
		r = buf_puts(side, "Authorization");
		name->len = side->len - name->off;
		name->set = true;
		struct buf plain = { 0 };
		r = r ?: buf_puts(&plain, bd->username ? bd->username : "") ?: buf_puts(&plain, ":") ?:
			buf_append(&plain, c->secret, c->secret_len);
		value->off = side->len;
		r = r ?: buf_puts(side, "Basic ") ?: base64_encode((const uint8_t *)plain.data, plain.len, side);
		value->len = side->len - value->off;
		value->set = true;
		buf_wipe(&plain);
		break;
	}
	case POLICY_CRED_QUERY: {
		/* The agent's own values of the parameter go; ours is added. */
		query->off = side->len;
		const char *q = req->query, *end = req->query ? req->query + req->query_len : NULL;
		size_t plen = strlen(bd->query);
		bool first = true;
		while (q && q < end && !r) {
			const char *amp = memchr(q, '&', (size_t)(end - q));
			const char *pe = amp ? amp : end;
			bool ours = (size_t)(pe - q) >= plen && strncmp(q, bd->query, plen) == 0 &&
				    (q + plen == pe || q[plen] == '=');
			if (!ours) {
				r = (first ? 0 : buf_puts(side, "&")) ?: buf_append(side, q, (size_t)(pe - q));
				first = false;
			}
			q = pe + 1;
		}
		r = r ?: (first ? 0 : buf_puts(side, "&")) ?: buf_printf(side, "%s=", bd->query);
		r = r ?: put_pct(side, c);
		query->len = side->len - query->off;
		query->set = true;
		break;
	}
	}
	return r;
}

/* The first of pc's bindings that allows the request (*match) and the
 * first that refuses it (*refused, its reason in refusal). */
static void match_bindings(const struct policy_credential *pc, const char *host, uint16_t port,
			   const struct http_request *req, const char *body, size_t body_len,
			   const struct policy_cred_binding **match, const struct policy_cred_binding **refused,
			   char *why, size_t why_len, char *refusal, size_t refusal_len)
{
	for (size_t k = 0; k < pc->n_bindings; k++) {
		const struct policy_cred_binding *bd = &pc->bindings[k];
		int m = binding_match(bd, host, port, req, body, body_len, why, why_len);
		if (m < 0 && !*refused) {
			*refused = bd;
			snprintf(refusal, refusal_len, "%s", why);
		}
		if (m > 0 && !*match)
			*match = bd;
	}
}

/* Does the request carry c's placeholder anywhere the agent controls? */
static bool placeholder_seen(const struct broker_cred *c, const struct http_request *req, const char *body,
			     size_t body_len)
{
	bool has_ph = c->placeholder[0] != '\0';
	bool seen = has_ph && (contains(req->path, req->path_len, c->placeholder, BROKER_PLACEHOLDER_LEN) ||
			       (req->query && contains(req->query, req->query_len, c->placeholder,
						       BROKER_PLACEHOLDER_LEN)));
	for (size_t h = 0; has_ph && !seen && h < req->n_headers; h++)
		seen = contains(req->headers[h].name, req->headers[h].name_len, c->placeholder,
				BROKER_PLACEHOLDER_LEN) ||
		       contains(req->headers[h].value, req->headers[h].value_len, c->placeholder,
				BROKER_PLACEHOLDER_LEN);
	/* Basic credentials are encoded: look inside them too. */
	for (size_t h = 0; has_ph && !seen && h < req->n_headers; h++) {
		char dec[1024];
		ssize_t d = name_is(&req->headers[h], "Authorization") ?
				    basic_decode(&req->headers[h], dec, sizeof(dec)) :
				    -EINVAL;
		if (d >= 0)
			seen = contains(dec, (size_t)d, c->placeholder, BROKER_PLACEHOLDER_LEN);
		explicit_bzero(dec, sizeof(dec));
	}
	seen = seen || (has_ph && contains(body, body_len, c->placeholder, BROKER_PLACEHOLDER_LEN));
	return seen;
}

/* Swap c's secret in for its placeholder at match's site, into side;
 * hv and query say where. 0 or -errno. */
static int swap_in(struct buf *side, const struct broker_cred *c, const struct policy_cred_binding *match,
		   struct http_request *req, struct field *hv, struct field *query)
{
	int r = 0;
	for (size_t h = 0; h < req->n_headers && !r; h++) {
		struct http_header *hd = &req->headers[h];
		if (match->where == POLICY_CRED_HEADER && name_is(hd, match->header))
			r = put_replaced(side, hd->value, hd->value_len, c, false, &hv[h]);
		if (match->where == POLICY_CRED_BASIC && name_is(hd, "Authorization")) {
			char dec[1024];
			ssize_t d = basic_decode(hd, dec, sizeof(dec));
			if (d > 0 && contains(dec, (size_t)d, c->placeholder, BROKER_PLACEHOLDER_LEN)) {
				struct buf plain = { 0 };
				struct field f;
				r = buf_reserve(&plain, (size_t)d + c->secret_len * 4 + 8) ?:
					put_replaced(&plain, dec, (size_t)d, c, false, &f);
				hv[h].off = side->len;
				r = r ?: buf_puts(side, "Basic ") ?:
					base64_encode((const uint8_t *)plain.data, plain.len, side);
				hv[h].len = side->len - hv[h].off;
				hv[h].set = true;
				buf_wipe(&plain);
			}
			explicit_bzero(dec, sizeof(dec));
		}
	}
	if (!r && match->where == POLICY_CRED_QUERY && req->query)
		r = put_replaced(side, req->query, req->query_len, c, true, query);
	return r;
}

int broker_apply(const struct broker *b, const char *host, uint16_t port, struct http_request *req,
		 const char *body, size_t body_len, struct buf *side, struct broker_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!b || !b->n)
		return 0;

	/* Space for the changed fields, reserved once, when first needed:
	 * growing would leave copies of the secret behind. */
	size_t secrets = 0;
	for (size_t i = 0; i < b->n; i++)
		secrets += b->v[i].secret_len;
	const size_t side_need = 2 * req->head_len + 4 * secrets + 4096;
	int r = 0;

	struct field hv[HTTP_MAX_HEADERS] = { 0 };
	struct field query = { 0 }, add_name = { 0 }, add_value = { 0 };
	const char *drop = NULL;
	char why[320], refusal[320];

	for (size_t i = 0; i < b->n; i++) {
		const struct broker_cred *c = &b->v[i];
		const struct policy_credential *pc = c->pol;

		/* Git bindings refuse operations on their repositories that
		 * none of the credential's bindings allows, whether or not the
		 * request would carry the secret. A binding is an allowance:
		 * one binding's refusal does not veto another's. */
		const struct policy_cred_binding *match = NULL, *refused = NULL;
		match_bindings(pc, host, port, req, body, body_len, &match, &refused, why, sizeof(why), refusal,
			       sizeof(refusal));
		if (refused && !match) {
			res->verdict = BROKER_DENY;
			res->credential = pc->name;
			res->binding = refused->id;
			snprintf(res->reason, sizeof(res->reason), "credential %s, binding %s: %s", pc->name,
				 refused->id, refusal);
			return 0;
		}

		bool seen = placeholder_seen(c, req, body, body_len);

		if (seen) {
			const char *where = NULL;
			if (!match) {
				res->verdict = BROKER_MISUSE;
				res->credential = pc->name;
				snprintf(res->reason, sizeof(res->reason),
					 "the placeholder of credential %s in %s %s:%u%.*s, which none of its bindings "
					 "allows",
					 pc->name, req->method, host, port, (int)(req->path_len > 120 ? 120 : req->path_len),
					 req->path);
				return 0;
			}
			if (!occurrences_ok(c, match, req, body, body_len, &where)) {
				res->verdict = BROKER_MISUSE;
				res->credential = pc->name;
				res->binding = match->id;
				snprintf(res->reason, sizeof(res->reason),
					 "the placeholder of credential %s in %s; binding %s carries it only in %s %s",
					 pc->name, where, match->id,
					 match->where == POLICY_CRED_HEADER ? "the header" :
					 match->where == POLICY_CRED_BASIC  ? "basic authentication" :
									      "the query parameter",
					 match->where == POLICY_CRED_HEADER ? match->header :
					 match->where == POLICY_CRED_BASIC  ? "" :
									      match->query);
				return 0;
			}
			/* Swap it in at the binding's site. */
			if (!side->cap && (r = buf_reserve(side, side_need)) < 0)
				return r;
			r = swap_in(side, c, match, req, hv, &query);
			if (r < 0)
				return r;
			res->verdict = BROKER_INJECT;
			res->credential = pc->name;
			res->binding = match->id;
			continue;
		}
		if (pc->inject == POLICY_INJECT_ALWAYS && match && res->verdict != BROKER_INJECT) {
			if (!side->cap && (r = buf_reserve(side, side_need)) < 0)
				return r;
			r = put_always(side, c, match, req, &add_name, &add_value, &query);
			if (r < 0)
				return r;
			drop = match->where == POLICY_CRED_HEADER ? match->header :
			       match->where == POLICY_CRED_BASIC  ? "Authorization" :
								    NULL;
			res->verdict = BROKER_INJECT;
			res->credential = pc->name;
			res->binding = match->id;
		}
	}
	if (res->verdict != BROKER_INJECT)
		return 0;

	/* side is complete: point the request at it. */
	for (size_t h = 0; h < req->n_headers; h++)
		if (hv[h].set) {
			req->headers[h].value = side->data + hv[h].off;
			req->headers[h].value_len = hv[h].len;
		}
	if (query.set) {
		req->query = side->data + query.off;
		req->query_len = query.len;
	}
	if (drop)
		drop_headers(req, drop);
	if (add_name.set) {
		if (req->n_headers >= HTTP_MAX_HEADERS)
			return -E2BIG;
		req->headers[req->n_headers++] = (struct http_header){ .name = side->data + add_name.off,
								       .name_len = add_name.len,
								       .value = side->data + add_value.off,
								       .value_len = add_value.len };
	}
	return 0;
}
