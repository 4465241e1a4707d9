/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy's records of its decisions, and the answers it gives
 * itself when it refuses (proxy.c sends the records on).
 */
#include "proxy/proxy_internal.h"

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
	if (!e && proxy_cfg->observe && strcmp(r->decision, "deny") == 0)
		e = buf_puts(b, r->observed ? ",\"enforced\":false" : ",\"enforced\":true");
	return e ?: buf_printf(b, ",\"bytes_up\":%llu,\"bytes_down\":%llu}\n", (unsigned long long)r->up,
			       (unsigned long long)r->down);
}

void proxy_record(const struct rec *r)
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
	if (!proxy_record_line(b.data, b.len, false))
		_exit(1); /* the supervisor is gone: nothing may pass unrecorded */
	buf_free(&b);
}

/* Observe mode: a denial the policy would make is recorded and the
 * request goes on as if it were allowed. The first is kept: it is the one
 * enforce mode would have refused on. Returns true when the caller goes
 * on, false when it must refuse (enforce and learn modes).
 * WARNING: letting through never means granting: a credential is never
 * injected where its bindings do not allow it (handle_request). */
bool proxy_let_through(struct rec *rec, char *store, size_t len, const char *kind, const char *rule,
			const char *reason)
{
	if (!proxy_cfg->observe)
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
void proxy_answer(struct conn *c, int status, const char *what, const char *reason)
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
