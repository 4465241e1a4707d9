/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stdio relay of the MCP gateway (docs/mcp.md). Lines from either
 * side are parsed, checked by the engine and written back in our own
 * serialisation; what fails to parse is answered with a JSON-RPC error
 * and recorded, never forwarded.
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mcp/gateway.h"
#include "net/dlp.h"
#include "util/cleanup.h"
#include "util/sha256.h"
#include "util/statedir.h"

#define MCP_MAX_PENDING 4096

struct mcp_pending {
	char *id;   /* the id as serialised */
	char *method;
	char *tool; /* tools/call */
};

struct mcp_held {
	char token[24];
	char *msg;          /* the call as we serialised it */
	char *tool;
	char rule[128];
	uint64_t deadline;  /* CLOCK_MONOTONIC, ms */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void pending_free(struct mcp_pending *p)
{
	free(p->id);
	free(p->method);
	free(p->tool);
}

void mcp_gateway_fini(struct mcp_gateway *g)
{
	for (size_t i = 0; i < g->n_held; i++) {
		free(g->held[i].msg);
		free(g->held[i].tool);
	}
	free(g->held);
	g->held = NULL;
	g->n_held = 0;
	for (size_t i = 0; i < g->n_pending; i++)
		pending_free(&g->pending[i]);
	free(g->pending);
	g->pending = NULL;
	g->n_pending = g->cap_pending = 0;
}

static int id_text(const struct imp_node *id, char **out)
{
	struct buf b = { 0 };
	if (mcp_json_write(&b, id, false) < 0) {
		buf_free(&b);
		return -ENOMEM;
	}
	*out = b.data;
	return 0;
}

static int pending_add(struct mcp_gateway *g, const struct imp_node *id, const char *method, const char *tool)
{
	/* A client that never reads its answers must not grow this without
	 * bound: the oldest request is forgotten (its response then passes
	 * unfiltered only if it is not a tools/list or tools/call answer,
	 * which are refused below when unknown). */
	if (g->n_pending >= MCP_MAX_PENDING) {
		pending_free(&g->pending[0]);
		memmove(g->pending, g->pending + 1, (g->n_pending - 1) * sizeof(*g->pending));
		g->n_pending--;
	}
	if (g->n_pending == g->cap_pending) {
		size_t cap = g->cap_pending ? g->cap_pending * 2 : 16;
		struct mcp_pending *v = realloc(g->pending, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		g->pending = v;
		g->cap_pending = cap;
	}
	struct mcp_pending *p = &g->pending[g->n_pending];
	memset(p, 0, sizeof(*p));
	if (id_text(id, &p->id) < 0 || !(p->method = strdup(method)) || (tool && !(p->tool = strdup(tool)))) {
		pending_free(p);
		return -ENOMEM;
	}
	g->n_pending++;
	return 0;
}

/* Take the pending request with this id (*out owned by the caller). */
static bool pending_take(struct mcp_gateway *g, const struct imp_node *id, struct mcp_pending *out)
{
	_cleanup_free_ char *t = NULL;
	if (id_text(id, &t) < 0)
		return false;
	for (size_t i = 0; i < g->n_pending; i++)
		if (!strcmp(g->pending[i].id, t)) {
			*out = g->pending[i];
			memmove(g->pending + i, g->pending + i + 1, (g->n_pending - i - 1) * sizeof(*g->pending));
			g->n_pending--;
			return true;
		}
	return false;
}

static int write_all(int fd, const char *p, size_t n, struct error *err)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return error_set(err, errno ? errno : EIO, "write: %s", strerror(errno ? errno : EIO));
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_msg(int fd, const struct imp_node *m, struct error *err)
{
	struct buf b = { 0 };
	if (fd < 0)
		return 0;
	int r = mcp_json_write(&b, m, false);
	if (r >= 0)
		r = buf_puts(&b, "\n");
	if (r < 0) {
		buf_free(&b);
		return error_set(err, ENOMEM, "out of memory");
	}
	r = write_all(fd, b.data, b.len, err);
	buf_free(&b);
	return r;
}

/* Forward a checked message; nothing is forwarded once a record could not
 * be written (fail closed: no decision goes unrecorded). */
static int gsend(const struct mcp_gateway *g, int fd, const struct imp_node *m, struct error *err)
{
	if (g->record_failed)
		return error_set(err, EPIPE, "the decision log's writer is gone; the gateway stops");
	return send_msg(fd, m, err);
}

/* Write a message built in b (r: how its building ended) and free b. */
static int send_built(int fd, struct buf *b, int r, struct error *err)
{
	if (r >= 0)
		r = write_all(fd, b->data, b->len, err);
	else
		r = error_set(err, ENOMEM, "out of memory");
	buf_free(b);
	return r;
}

/* {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M}} */
static int send_error(int fd, const struct imp_node *id, int code, const char *msg, struct error *err)
{
	struct buf b = { 0 };
	if (fd < 0) /* the server's input is closed: it is told nothing more */
		return 0;
	int r = buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (r >= 0)
		r = id ? mcp_json_write(&b, id, false) : buf_puts(&b, "null");
	if (r >= 0)
		r = buf_printf(&b, ",\"error\":{\"code\":%d,\"message\":", code);
	if (r >= 0)
		r = buf_json_string(&b, msg, strlen(msg));
	if (r >= 0)
		r = buf_puts(&b, "}}\n");
	return send_built(fd, &b, r, err);
}

/* A tool result the model reads: the call did not happen, and why. */
static int send_tool_error(int fd, const struct imp_node *id, const char *reason, struct error *err)
{
	struct buf b = { 0 };
	int r = buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (r >= 0)
		r = mcp_json_write(&b, id, false);
	if (r >= 0)
		r = buf_puts(&b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	if (r >= 0)
		r = buf_json_string(&b, reason, strlen(reason));
	if (r >= 0)
		r = buf_puts(&b, "}],\"isError\":true}}\n");
	return send_built(fd, &b, r, err);
}

struct rec {
	const char *method, *tool, *decision, *rule, *reason, *direction, *target;
	const struct imp_node *args;
	const char *old_sha256, *new_sha256;
};

/* A peer-controlled string in a record, cut at a character boundary:
 * tool names and URIs are the peer's, and a record line has a bound
 * (AUDIT_EVENT_MAX_LINE) the writer enforces. A line that would be too
 * long is written again with shorter fields. */
#define MCP_RECORD_FIELD_MAX 512
#define MCP_RECORD_FIELD_MIN 64
#define MCP_RECORD_LINE_MAX 8000

static int json_capped(struct buf *b, const char *s, size_t cap)
{
	size_t n = strlen(s);
	if (n > cap) {
		n = cap;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return buf_json_string(b, s, n);
}

static void record(struct mcp_gateway *g, const struct rec *r)
{
	if (!g->record)
		return;
	struct buf b = { 0 };
	size_t cap = MCP_RECORD_FIELD_MAX;
again:;
	int e = buf_puts(&b, "{\"kind\":\"mcp\"");
#define FIELD(name, val)                                             \
	if (e >= 0 && (val)) {                                       \
		e = buf_puts(&b, ",\"" name "\":");                  \
		if (e >= 0)                                          \
			e = json_capped(&b, (val), cap);                  \
	}
	FIELD("method", r->method);
	FIELD("server", g->engine->server);
	FIELD("tool", r->tool);
	FIELD("target", r->target);
	FIELD("direction", r->direction);
	if (r->args) {
		struct buf a = { 0 };
		if (mcp_json_write(&a, r->args, true) >= 0 && a.data) {
			char hexbuf[65];
			const char *hex = hexbuf;
			sha256_hex(a.data, a.len, hexbuf);
			FIELD("args_sha256", hex);
			if (g->engine->srv && g->engine->srv->record_arguments) {
				FIELD("arguments", a.data);
			}
		}
		buf_free(&a);
	}
	FIELD("old_sha256", r->old_sha256);
	FIELD("new_sha256", r->new_sha256);
	FIELD("decision", r->decision);
	FIELD("rule", r->rule);
	FIELD("reason", r->reason);
#undef FIELD
	if (e >= 0)
		e = buf_puts(&b, "}\n");
	if (e >= 0 && b.len > MCP_RECORD_LINE_MAX && cap > MCP_RECORD_FIELD_MIN) {
		/* Nine fields escaped at six bytes a byte: cut them shorter. */
		cap = MCP_RECORD_FIELD_MIN;
		buf_reset(&b);
		goto again;
	}
	if (e < 0 || !g->record(g->record_ctx, b.data, b.len))
		g->record_failed = true;
	buf_free(&b);
}

static const char *str_of(const struct imp_node *n)
{
	return n && n->kind == IMP_STR ? n->str : NULL;
}

static struct imp_node *get_mut(struct imp_node *map, const char *key)
{
	return (struct imp_node *)imp_get(map, key);
}

/* ---- step-up ---- */

void mcp_say(int tty_fd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The tool name is the peer's: nothing in it may act on a terminal. */
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\n')
			*c = '?';
	(void)!write(STDERR_FILENO, msg, strlen(msg));
	if (tty_fd >= 0 && write(tty_fd, msg, strlen(msg)) < 0) {
		/* the terminal went away: the control socket still works */
	}
}

static int hold(struct mcp_gateway *g, const struct imp_node *m, const char *tool, const char *rule,
		struct error *err)
{
	struct mcp_held *v = realloc(g->held, (g->n_held + 1) * sizeof(*v));
	if (!v)
		return error_set(err, ENOMEM, "out of memory");
	g->held = v;
	struct mcp_held *h = &g->held[g->n_held];
	memset(h, 0, sizeof(*h));
	struct buf b = { 0 };
	if (mcp_json_write(&b, m, false) < 0 || !(h->tool = strdup(tool))) {
		buf_free(&b);
		free(h->tool);
		return error_set(err, ENOMEM, "out of memory");
	}
	h->msg = b.data;
	snprintf(h->token, sizeof(h->token), "%lu", ++g->next_token);
	snprintf(h->rule, sizeof(h->rule), "%s", rule);
	h->deadline = now_ms() + (uint64_t)g->step_up_timeout * 1000;
	g->n_held++;
	if (g->control_fd >= 0)
		mcp_say(g->tty_fd, "airlock: step-up %s: server %s asks to run tool %s; approve with 'airlock approve --socket %s %s' "
		       "or deny with 'airlock deny --socket %s %s' within %us\n",
		    h->token, g->engine->server, tool, g->control_path, h->token, g->control_path, h->token,
		    g->step_up_timeout);
	if (g->tty_fd >= 0)
		mcp_say(g->tty_fd, "airlock: step-up %s: run tool %s of server %s? [y/N] ", h->token, tool, g->engine->server);
	return 0;
}

bool mcp_gateway_resolve(struct mcp_gateway *g, const char *token, bool approve, const char *by, struct error *err,
			 int *rc)
{
	size_t i;
	for (i = 0; i < g->n_held; i++)
		if (!strcmp(g->held[i].token, token))
			break;
	if (i == g->n_held)
		return false;
	struct mcp_held h = g->held[i];
	memmove(g->held + i, g->held + i + 1, (g->n_held - i - 1) * sizeof(*g->held));
	g->n_held--;
	_cleanup_imp_node_ struct imp_node *m = NULL;
	struct error perr = { 0 };
	*rc = 0;
	if (mcp_frame_parse(h.msg, strlen(h.msg), &m, &perr) != MCP_FRAME_OK) {
		*rc = error_set(err, EINVAL, "a held call does not parse again: %s", perr.msg);
		goto out;
	}
	const struct imp_node *id = imp_get(m, "id");
	const struct imp_node *args = imp_get(imp_get(m, "params"), "arguments");
	char reason[256];
	snprintf(reason, sizeof(reason), "step-up %s %s", approve ? "approved" : "denied", by);
	struct rec r = { .method = "tools/call", .tool = h.tool, .args = args, .decision = approve ? "allow" : "deny",
			 .rule = h.rule, .reason = reason, .direction = "client" };
	record(g, &r);
	if (approve) {
		if (pending_add(g, id, "tools/call", h.tool) < 0)
			*rc = error_set(err, ENOMEM, "out of memory");
		else
			*rc = gsend(g, g->server_in, m, err);
	} else {
		char msg[400];
		snprintf(msg, sizeof(msg), "airlock denied the call: a person was asked to approve %s and it was %s",
			 h.tool, reason);
		*rc = send_tool_error(g->client_out, id, msg, err);
	}
out:
	free(h.msg);
	free(h.tool);
	return true;
}

const char *mcp_gateway_held(const struct mcp_gateway *g, size_t i, const char **tool)
{
	if (i >= g->n_held)
		return NULL;
	*tool = g->held[i].tool;
	return g->held[i].token;
}

static void control_answer(const struct mcp_control_ops *ops, void *ctx, const char *line, char *out,
			   size_t out_len)
{
	if (!strcmp(line, "list")) {
		size_t o = 0;
		char token[24], tool[256];
		out[0] = '\0';
		for (size_t i = 0; o + 1 < out_len && ops->waiting(ctx, i, token, sizeof(token), tool, sizeof(tool)); i++)
			o += (size_t)snprintf(out + o, out_len - o, "%s %s\n", token, tool);
		if (o >= out_len)
			out[out_len - 1] = '\0';
		return;
	}
	bool approve = !strncmp(line, "approve ", 8);
	if (!approve && strncmp(line, "deny ", 5)) {
		snprintf(out, out_len, "error: expected approve TOKEN, deny TOKEN or list\n");
		return;
	}
	const char *token = line + (approve ? 8 : 5);
	if (!ops->decide(ctx, token, approve))
		snprintf(out, out_len, "error: no call waits under %.20s\n", token);
	else
		snprintf(out, out_len, "%s %.20s\n", approve ? "approved" : "denied", token);
}

void mcp_control_serve(int listen_fd, const struct mcp_control_ops *ops, void *ctx)
{
	int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS)
			usleep(100 * 1000); /* not a busy loop while out of fds */
		return;
	}
	struct timeval tv = { .tv_sec = 2 };
	(void)setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char line[128];
	ssize_t n = recv(c, line, sizeof(line) - 1, 0);
	if (n > 0) {
		line[n] = '\0';
		line[strcspn(line, "\r\n")] = '\0';
		char out[4096];
		control_answer(ops, ctx, line, out, sizeof(out));
		(void)send(c, out, strlen(out), MSG_NOSIGNAL);
	}
	close(c);
}

/* The gateway's own control socket: its held calls. */
struct control_ctx {
	struct mcp_gateway *g;
	struct error *err;
	int rc;
};

static bool gw_waiting(void *ctx, size_t i, char *token, size_t token_len, char *tool, size_t tool_len)
{
	struct control_ctx *c = ctx;
	if (i >= c->g->n_held)
		return false;
	snprintf(token, token_len, "%s", c->g->held[i].token);
	snprintf(tool, tool_len, "%s", c->g->held[i].tool);
	return true;
}

static bool gw_decide(void *ctx, const char *token, bool approve)
{
	struct control_ctx *c = ctx;
	int rc = 0;
	bool found = mcp_gateway_resolve(c->g, token, approve, "through the control socket", c->err, &rc);
	if (rc < 0 && c->rc == 0)
		c->rc = rc;
	return found;
}

/* One connection to the control socket. The peer is the same user (the
 * socket is 0600 in a 0700 directory). */
static int control_accept(struct mcp_gateway *g, struct error *err)
{
	static const struct mcp_control_ops ops = { .waiting = gw_waiting, .decide = gw_decide };
	struct control_ctx c = { .g = g, .err = err };
	mcp_control_serve(g->control_fd, &ops, &c);
	return c.rc;
}

/* A line from the terminal answers the oldest held call. */
static int tty_answer(struct mcp_gateway *g, struct error *err)
{
	char line[64];
	ssize_t n = read(g->tty_fd, line, sizeof(line) - 1);
	if (n <= 0) {
		g->tty_fd = -1;
		return 0;
	}
	line[n] = '\0';
	if (!g->n_held)
		return 0;
	char token[24];
	snprintf(token, sizeof(token), "%s", g->held[0].token);
	bool yes = line[0] == 'y' || line[0] == 'Y';
	int rc = 0;
	(void)mcp_gateway_resolve(g, token, yes, "at the terminal", err, &rc);
	return rc;
}

/* Deny what waited too long; returns the poll timeout to the next
 * deadline (-1: none). */
static int expire(struct mcp_gateway *g, int *rc, struct error *err)
{
	*rc = 0;
	uint64_t now = now_ms();
	for (size_t i = 0; i < g->n_held;) {
		if (g->held[i].deadline <= now) {
			char token[24], by[64];
			snprintf(token, sizeof(token), "%s", g->held[i].token);
			snprintf(by, sizeof(by), "by the timeout after %us", g->step_up_timeout);
			(void)mcp_gateway_resolve(g, token, false, by, err, rc);
			if (*rc < 0)
				return -1;
			continue;
		}
		i++;
	}
	int t = -1;
	for (size_t i = 0; i < g->n_held; i++) {
		uint64_t left = g->held[i].deadline - now;
		if (t < 0 || left < (uint64_t)t)
			t = left > 60000 ? 60000 : (int)left;
	}
	return t;
}

/* ---- client -> server ---- */

/* The request methods the policy decides by what they name. Compared
 * without regard to case: a server that folds case would run
 * "Tools/Call" as tools/call. */
static bool is_method(const char *method, const char *name)
{
	return !strcasecmp(method, name);
}

/* A denial the client is told of, when it can be: a message without an
 * id gets no answer (none can be addressed to it), but is recorded and
 * dropped all the same. */
static int deny_client(struct mcp_gateway *g, const struct imp_node *id, bool tool_result, int code,
		       const char *reason, struct error *err)
{
	if (!id)
		return 0;
	return tool_result ? send_tool_error(g->client_out, id, reason, err)
			   : send_error(g->client_out, id, code, reason, err);
}

static int from_client(struct mcp_gateway *g, struct imp_node *m, struct error *err)
{
	struct mcp_engine *e = g->engine;
	const char *method = str_of(imp_get(m, "method"));
	const struct imp_node *id = imp_get(m, "id");
	const struct imp_node *params = imp_get(m, "params");
	struct mcp_verdict v;

	if (!method) /* a response to a server request */
		return gsend(g, g->server_in, m, err);

	/* A request is decided by what it asks for, with or without an id:
	 * a server that dispatches on the method runs a tools/call sent as
	 * a notification just the same. */
	if (is_method(method, "tools/call")) {
		const char *tool = str_of(imp_get(params, "name"));
		const struct imp_node *args = imp_get(params, "arguments");
		if (!tool) {
			struct rec r = { .method = method, .decision = "deny", .rule = "protocol",
					 .reason = "tools/call without a tool name", .direction = "client" };
			record(g, &r);
			return deny_client(g, id, false, MCP_ERR_INVALID, "tools/call without a tool name", err);
		}
		bool ok = mcp_tool_call_allowed(e, tool, args, &v);
		if (ok && v.decision == POLICY_MCP_STEP_UP) {
			/* AARM's defer: one record now, one when a person (or
			 * the timeout) decides. */
			struct rec d = { .method = method, .tool = tool, .args = args, .decision = "defer",
					 .rule = v.rule, .reason = "step-up: waiting for a person's approval",
					 .direction = "client" };
			record(g, &d);
			if (id && (g->control_fd >= 0 || g->tty_fd >= 0 || g->hold_for_caller) && g->n_held < MCP_MAX_HELD)
				return hold(g, m, tool, v.rule, err);
			ok = false;
			snprintf(v.reason, sizeof(v.reason),
				 !id ? "airlock denied the call: the policy asks a person to approve %s, and a call "
				       "without an id cannot be held for approval"
				 : g->n_held >= MCP_MAX_HELD
					 ? "airlock denied the call: the policy asks a person to approve %s, and too many "
					   "calls are already waiting"
					 : "airlock denied the call: the policy asks a person to approve %s, and this "
					   "gateway has no one to ask",
				 tool);
		}
		struct rec r = { .method = method, .tool = tool, .args = args, .decision = ok ? "allow" : "deny",
				 .rule = v.rule, .reason = ok ? NULL : v.reason, .direction = "client" };
		record(g, &r);
		if (!ok)
			return deny_client(g, id, true, 0, v.reason, err);
		if (id && pending_add(g, id, "tools/call", tool) < 0)
			return error_set(err, ENOMEM, "out of memory");
		return gsend(g, g->server_in, m, err);
	}
	/* What names a resource or a prompt is decided by the rules for it:
	 * a subscription to a denied resource would bring its updates, and a
	 * completion for a denied prompt's or resource template's argument
	 * would list what it holds (file names, keys, rows). */
	bool complete = is_method(method, "completion/complete");
	const struct imp_node *ref = complete ? imp_get(params, "ref") : NULL;
	const char *ref_type = str_of(imp_get(ref, "type"));
	if (complete && (!ref_type || (strcmp(ref_type, "ref/prompt") && strcmp(ref_type, "ref/resource")))) {
		/* a kind of reference no rule decides: refused, not passed */
		const char *why = "completion/complete without a ref/prompt or ref/resource reference";
		struct rec r = { .method = method, .decision = "deny", .rule = "protocol", .reason = why,
				 .direction = "client" };
		record(g, &r);
		return deny_client(g, id, false, MCP_ERR_INVALID, why, err);
	}
	if (is_method(method, "resources/read") || is_method(method, "prompts/get") ||
	    is_method(method, "resources/subscribe") || complete) {
		bool res = complete ? !strcmp(ref_type, "ref/resource") : !is_method(method, "prompts/get");
		const char *what = complete ? str_of(imp_get(ref, res ? "uri" : "name"))
					    : str_of(imp_get(params, res ? "uri" : "name"));
		if (!what) {
			const char *why = complete ? (res ? "completion/complete for a resource without a uri"
							  : "completion/complete for a prompt without a name")
				: res ? "a resource request without a uri" : "prompts/get without a name";
			struct rec r = { .method = method, .decision = "deny", .rule = "protocol", .reason = why,
					 .direction = "client" };
			record(g, &r);
			return deny_client(g, id, false, MCP_ERR_INVALID, why, err);
		}
		bool ok = res ? mcp_resource_allowed(e, what, &v) : mcp_prompt_allowed(e, what, &v);
		struct rec r = { .method = method, .target = what, .args = res ? NULL : imp_get(params, "arguments"),
				 .decision = ok ? "allow" : "deny", .rule = v.rule, .reason = ok ? NULL : v.reason,
				 .direction = "client" };
		record(g, &r);
		if (!ok)
			return deny_client(g, id, false, MCP_ERR_DENIED, v.reason, err);
		method = complete ? "completion/complete"
			 : is_method(method, "resources/subscribe") ? "resources/subscribe"
			 : res ? "resources/read" : "prompts/get";
	}
	if (id && pending_add(g, id, method, NULL) < 0)
		return error_set(err, ENOMEM, "out of memory");
	return gsend(g, g->server_in, m, err);
}

/* ---- server -> client ---- */

struct scan_state {
	struct mcp_engine *e;
	bool redact_secrets, redact_injection, check_injection, phrases;
	bool hit_secret, hit_injection;
	char what[160];
};

/* Every string of a result, secrets and injection markers; redaction
 * replaces the whole string holding a secret (a partial redaction could
 * leave enough of it), and strips invisible characters. */
static int scan_node(struct scan_state *s, struct imp_node *n)
{
	if (n->kind == IMP_STR) {
		char what[128];
		if (dlp_scan(s->e->dlp, (const uint8_t *)n->str, n->len, what, sizeof(what))) {
			if (!s->hit_secret && !s->hit_injection)
				snprintf(s->what, sizeof(s->what), "%s", what);
			s->hit_secret = true;
			if (s->redact_secrets) {
				char *rep = NULL;
				if (asprintf(&rep, "[redacted by airlock: %s]", what) < 0)
					return -ENOMEM;
				free(n->str);
				n->str = rep;
				n->len = strlen(rep);
			}
		}
		if (s->check_injection && mcp_scan_injection(n->str, n->len, s->phrases, what, sizeof(what))) {
			if (!s->hit_secret && !s->hit_injection)
				snprintf(s->what, sizeof(s->what), "%s", what);
			s->hit_injection = true;
			if (s->redact_injection) {
				char *rep = mcp_strip_invisible(n->str, n->len);
				if (!rep)
					return -ENOMEM;
				/* A phrase cannot be stripped: the text is withheld. */
				if (mcp_scan_injection(rep, strlen(rep), s->phrases, what, sizeof(what))) {
					free(rep);
					if (asprintf(&rep, "[withheld by airlock: %s]", what) < 0)
						return -ENOMEM;
				}
				free(n->str);
				n->str = rep;
				n->len = strlen(rep);
			}
		}
		return 0;
	}
	if (n->kind == IMP_LIST || n->kind == IMP_MAP)
		for (size_t i = 0; i < n->n; i++) {
			int r = scan_node(s, &n->v[i]);
			if (r < 0)
				return r;
		}
	return 0;
}

static void scan_init(struct scan_state *s, struct mcp_engine *e, bool phrases)
{
	memset(s, 0, sizeof(*s));
	s->e = e;
	const struct policy_mcp_server *srv = e->srv;
	s->redact_secrets = srv && srv->scan_secrets == POLICY_MCP_SCAN_REDACT;
	s->check_injection = !srv || srv->scan_injection != POLICY_MCP_SCAN_OFF;
	s->redact_injection = srv && srv->scan_injection == POLICY_MCP_SCAN_REDACT;
	s->phrases = phrases;
}

static int filter_tools_list(struct mcp_gateway *g, struct imp_node *result)
{
	struct mcp_engine *e = g->engine;
	struct imp_node *tools = get_mut(result, "tools");
	bool pins_changed = false;
	if (!tools || tools->kind != IMP_LIST)
		return 0;
	size_t o = 0;
	for (size_t i = 0; i < tools->n; i++) {
		struct imp_node *t = &tools->v[i];
		/* A copy: redaction below may replace the strings of t. */
		_cleanup_free_ char *name = str_of(imp_get(t, "name")) ? strdup(str_of(imp_get(t, "name"))) : NULL;
		bool keep = name && mcp_tool_listed(e, name);
		char what[128];
		if (keep && mcp_scan_injection(name, strlen(name), false, what, sizeof(what))) {
			/* A name cannot be redacted: the model would call another. */
			char reason[256];
			snprintf(reason, sizeof(reason), "tool name holds %s", what);
			struct rec r = { .method = "tools/list", .tool = name, .decision = "deny",
					 .rule = "scan.injection", .reason = reason, .direction = "server" };
			record(g, &r);
			keep = false;
		}
		char hex[65];
		_cleanup_free_ char *canon = NULL;
		if (keep && mcp_tool_hash(t, hex, &canon) == 0) {
			enum mcp_pin_state st = mcp_pins_check(&e->pins, name, hex, canon, &pins_changed);
			if (st == MCP_PIN_CHANGED) {
				struct mcp_pin *pin = mcp_pins_find(&e->pins, name);
				char reason[256];
				snprintf(reason, sizeof(reason),
					 "the definition of tool %s changed since it was approved; blocked until "
					 "'airlock mcp pins approve'", name);
				struct rec r = { .method = "tools/list", .tool = name, .decision = "deny",
						 .rule = "pins", .reason = reason, .direction = "server",
						 .old_sha256 = pin ? pin->sha256 : NULL, .new_sha256 = hex };
				record(g, &r);
				keep = false;
			}
		} else if (keep) {
			keep = false;
		}
		if (keep) {
			/* Descriptions are what the model reads as instructions. */
			struct scan_state s;
			scan_init(&s, e, true);
			if (scan_node(&s, t) < 0)
				return -ENOMEM;
			if (s.hit_secret || s.hit_injection) {
				bool block = (s.hit_secret && !s.redact_secrets) || (s.hit_injection && !s.redact_injection);
				char reason[256];
				snprintf(reason, sizeof(reason), "tool definition holds %s", s.what);
				struct rec r = { .method = "tools/list", .tool = name, .decision = block ? "deny" : "modify",
						 .rule = s.hit_secret ? "scan.secrets" : "scan.injection", .reason = reason,
						 .direction = "server" };
				record(g, &r);
				if (block)
					keep = false;
			}
		}
		if (keep) {
			if (o != i) {
				tools->v[o] = *t;
				memset(t, 0, sizeof(*t));
			}
			o++;
		} else {
			imp_node_release(t);
		}
	}
	tools->n = o;
	if (pins_changed) {
		struct error perr = { 0 };
		if (e->pins.path &&
		    (g->pins_save ? g->pins_save(g->pins_ctx, &e->pins, &perr) : mcp_pins_save(&e->pins, &perr)) < 0) {
			struct rec r = { .method = "tools/list", .decision = "deny", .rule = "pins", .reason = perr.msg,
					 .direction = "server" };
			record(g, &r);
		}
	}
	return 0;
}

/* Scan one part of a server's message the model may read (a result, an
 * error, a request's or notification's params): secrets and injection
 * markers, redacted where the policy says so. A hit is recorded; *block
 * says the part must be withheld, reason why. phrases: the part is read
 * as instructions (descriptions, the initialize result's instructions,
 * listings), where the instruction phrases are looked for too. */
static int scan_part(struct mcp_gateway *g, struct imp_node *n, bool phrases, const char *method, const char *tool,
		     const char *noun, bool *block, char *reason, size_t reason_len)
{
	struct scan_state s;
	*block = false;
	if (!n)
		return 0;
	scan_init(&s, g->engine, phrases);
	if (scan_node(&s, n) < 0)
		return -ENOMEM;
	if (!s.hit_secret && !s.hit_injection)
		return 0;
	*block = (s.hit_secret && !s.redact_secrets) || (s.hit_injection && !s.redact_injection);
	snprintf(reason, reason_len, "airlock %s the %s: it holds %s", *block ? "withheld" : "redacted", noun, s.what);
	struct rec r = { .method = method, .tool = tool, .decision = *block ? "deny" : "modify",
			 .rule = s.hit_secret ? "scan.secrets" : "scan.injection", .reason = reason,
			 .direction = "server" };
	record(g, &r);
	return 0;
}

/* Results the model reads as instructions rather than as data. */
static bool read_as_instructions(const char *method)
{
	return is_method(method, "initialize") || is_method(method, "server/discover") ||
	       is_method(method, "tools/list") || is_method(method, "prompts/list") ||
	       is_method(method, "resources/list") || is_method(method, "resources/templates/list");
}

static int from_server(struct mcp_gateway *g, struct imp_node *m, struct error *err)
{
	struct mcp_engine *e = g->engine;
	const char *method = str_of(imp_get(m, "method"));
	const struct imp_node *id = imp_get(m, "id");
	struct mcp_verdict v;
	char reason[400];
	bool block;

	/* A server's request is decided by its method, with or without an
	 * id: a client that dispatches on the method would sample for an
	 * id-less sampling/createMessage just the same. Only what is named
	 * a notification is one. */
	if (method && (id || strncasecmp(method, "notifications/", 14))) {
		bool ok = mcp_server_request_allowed(e, method, &v);
		if (strcmp(method, "ping") || !id) {
			struct rec r = { .method = method, .decision = ok ? "allow" : "deny", .rule = v.rule,
					 .reason = ok ? NULL : v.reason, .direction = "server" };
			record(g, &r);
		}
		if (!ok)
			return id ? send_error(g->server_in, id, MCP_ERR_DENIED, v.reason, err) : 0;
		if (scan_part(g, get_mut(m, "params"), false, method, NULL, "request", &block, reason,
			      sizeof(reason)) < 0)
			return error_set(err, ENOMEM, "out of memory");
		if (block)
			return id ? send_error(g->server_in, id, MCP_ERR_DENIED, reason, err) : 0;
		return gsend(g, g->client_out, m, err);
	}
	if (method) {
		/* A notification (a log message, progress) is read by the
		 * model like a result. */
		if (scan_part(g, get_mut(m, "params"), false, method, NULL, "notification", &block, reason,
			      sizeof(reason)) < 0)
			return error_set(err, ENOMEM, "out of memory");
		return block ? 0 : gsend(g, g->client_out, m, err);
	}

	struct mcp_pending p = { 0 };
	if (!pending_take(g, id, &p)) {
		/* A response to nothing the client asked (or that we forgot):
		 * it could smuggle a tool list past the filter. */
		struct rec r = { .method = "(response)", .decision = "deny", .rule = "protocol",
				 .reason = "response to no pending request", .direction = "server" };
		record(g, &r);
		return 0;
	}
	int rc = 0;
	bool is_call = is_method(p.method, "tools/call");
	struct imp_node *result = get_mut(m, "result");
	struct imp_node *error = get_mut(m, "error");
	if (error) {
		/* An error's message and data reach the model as well. */
		if (scan_part(g, error, false, p.method, p.tool, "error", &block, reason, sizeof(reason)) < 0) {
			rc = error_set(err, ENOMEM, "out of memory");
			goto out;
		}
		if (block) {
			rc = send_error(g->client_out, id, MCP_ERR_DENIED, reason, err);
			goto out;
		}
	}
	if (result && result->kind == IMP_MAP) {
		/* 2026-07-28: a result that asks the client for input
		 * (sampling, elicitation) before the request can complete is a
		 * server-initiated request under the same policy. */
		const char *rt = str_of(imp_get(result, "resultType"));
		if (rt && !strcmp(rt, "input_required")) {
			const struct imp_node *reqs = imp_get(result, "inputRequests");
			for (size_t i = 0; reqs && (reqs->kind == IMP_MAP || reqs->kind == IMP_LIST) && i < reqs->n; i++) {
				const char *im = str_of(imp_get(&reqs->v[i], "method"));
				if (!im || !mcp_server_request_allowed(e, im, &v)) {
					struct rec r = { .method = im ? im : "(input request)", .decision = "deny",
							 .rule = im ? v.rule : "protocol",
							 .reason = im ? v.reason : "input request without a method",
							 .direction = "server" };
					record(g, &r);
					rc = send_error(g->client_out, id, MCP_ERR_DENIED,
							im ? v.reason : "airlock refused an input request without a method",
							err);
					goto out;
				}
			}
		}
		if (is_method(p.method, "tools/list") && filter_tools_list(g, result) < 0) {
			rc = error_set(err, ENOMEM, "out of memory");
			goto out;
		}
	}
	if (result) {
		/* Every result, not only a tool's: the rest of a tool list
		 * (the tools themselves were scanned one by one above),
		 * the initialize result's instructions, prompt and resource
		 * listings, completions. */
		struct imp_node *tools = is_method(p.method, "tools/list") ? get_mut(result, "tools") : NULL, saved;
		if (tools) {
			/* Scanned (and decided tool by tool) already; a
			 * withheld phrase's notice must not be found again. */
			saved = *tools;
			tools->kind = IMP_NULL;
			tools->n = 0;
		}
		int sr = scan_part(g, result, read_as_instructions(p.method), p.method, p.tool, "result", &block,
				   reason, sizeof(reason));
		if (tools)
			*tools = saved;
		if (sr < 0) {
			rc = error_set(err, ENOMEM, "out of memory");
			goto out;
		}
		if (block) {
			rc = is_call ? send_tool_error(g->client_out, id, reason, err)
				     : send_error(g->client_out, id, MCP_ERR_DENIED, reason, err);
			goto out;
		}
	}
	rc = gsend(g, g->client_out, m, err);
out:
	pending_free(&p);
	return rc;
}

int mcp_gateway_line(struct mcp_gateway *g, bool client, const char *line, size_t len, struct error *err)
{
	_cleanup_imp_node_ struct imp_node *m = NULL;
	struct error perr = { 0 };
	if (len && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return 0;
	enum mcp_frame f = mcp_frame_parse(line, len, &m, &perr);
	if (f != MCP_FRAME_OK) {
		struct rec r = { .method = "(malformed)", .decision = "deny", .rule = "protocol", .reason = perr.msg,
				 .direction = client ? "client" : "server" };
		record(g, &r);
		char msg[600];
		snprintf(msg, sizeof(msg), "airlock refused a malformed message: %s", perr.msg);
		return send_error(client ? g->client_out : g->server_in, NULL,
				  f == MCP_FRAME_PARSE ? MCP_ERR_PARSE : MCP_ERR_INVALID, msg, err);
	}
	int r = client ? from_client(g, m, err) : from_server(g, m, err);
	if (r == 0 && g->record_failed)
		return error_set(err, EPIPE, "the decision log's writer is gone; the gateway stops");
	return r;
}

struct lbuf {
	struct buf b;
	bool discarding; /* in the rest of an oversized line */
};

/* Read what fd has; hand over complete lines. Returns 0, or 1 at EOF. */
static int pump(struct mcp_gateway *g, int fd, bool client, struct lbuf *lb, struct error *err)
{
	char tmp[65536];
	ssize_t n = read(fd, tmp, sizeof(tmp));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	if (n == 0)
		return 1;
	if (buf_append(&lb->b, tmp, (size_t)n) < 0)
		return error_set(err, ENOMEM, "out of memory");
	size_t start = 0;
	for (;;) {
		char *nl = memchr(lb->b.data + start, '\n', lb->b.len - start);
		if (!nl)
			break;
		size_t len = (size_t)(nl - (lb->b.data + start));
		if (lb->discarding) {
			lb->discarding = false;
		} else {
			int r = mcp_gateway_line(g, client, lb->b.data + start, len, err);
			if (r < 0)
				return r;
		}
		start += len + 1;
	}
	buf_consume(&lb->b, start);
	if (lb->b.len > MCP_MAX_MESSAGE) {
		/* Too long to be a message: answer once, then drop bytes up to
		 * the next newline rather than buffer them. */
		if (!lb->discarding) {
			struct rec r = { .method = "(oversized)", .decision = "deny", .rule = "protocol",
					 .reason = "message longer than the gateway's bound", .direction = client ? "client" : "server" };
			record(g, &r);
			char msg[128];
			snprintf(msg, sizeof(msg), "airlock refused a message of more than %d bytes", MCP_MAX_MESSAGE);
			int rr = send_error(client ? g->client_out : g->server_in, NULL, MCP_ERR_INVALID, msg, err);
			if (rr < 0)
				return rr;
		}
		lb->discarding = true;
		buf_reset(&lb->b);
	}
	return 0;
}

int mcp_gateway_run(struct mcp_gateway *g, struct error *err)
{
	struct lbuf cin = { 0 }, sout = { 0 };
	bool client_open = true;
	int rc = 0;
	for (;;) {
		int timeout = expire(g, &rc, err);
		if (rc < 0)
			break;
		struct pollfd p[4] = { { .fd = client_open ? g->client_in : -1, .events = POLLIN },
				       { .fd = g->server_out, .events = POLLIN },
				       { .fd = g->control_fd, .events = POLLIN },
				       { .fd = g->n_held ? g->tty_fd : -1, .events = POLLIN } };
		int n = poll(p, 4, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = error_set(err, errno, "poll: %s", strerror(errno));
			break;
		}
		if (n == 0)
			continue;
		if (p[2].revents & POLLIN && (rc = control_accept(g, err)) < 0)
			break;
		if (p[3].revents & (POLLIN | POLLHUP | POLLERR) && (rc = tty_answer(g, err)) < 0)
			break;
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = pump(g, g->server_out, false, &sout, err);
			if (r < 0) {
				rc = r;
				break;
			}
			if (r == 1)
				break;
		}
		if (client_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			int r = pump(g, g->client_in, true, &cin, err);
			if (r < 0) {
				rc = r;
				break;
			}
			if (r == 1) {
				/* The client is done: so is the server's input, once
				 * no held call may still go to it. Held calls are
				 * then denied: no one will read their answers. */
				client_open = false;
				while (g->n_held) {
					char token[24];
					snprintf(token, sizeof(token), "%s", g->held[0].token);
					(void)mcp_gateway_resolve(g, token, false, "because the client left", err, &rc);
				}
				close(g->server_in);
				g->server_in = -1;
			}
		}
	}
	buf_free(&cin.b);
	buf_free(&sout.b);
	return rc;
}

int mcp_control_dir(char *out, size_t len)
{
	return statedir_path("mcp/run", out, len, NULL) < 0 ? -1 : 0;
}

int mcp_control_listen(const char *path, struct error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path))
		return error_set(err, ENAMETOOLONG, "control socket path too long: %s", path);
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, errno, "control socket: %s", strerror(errno));
	unlink(path);
	/* Made 0600 from the start: no moment in which another user could
	 * connect and approve. */
	mode_t old = umask(0177);
	int r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r < 0 || listen(fd, 8) < 0) {
		int e = errno;
		close(fd);
		return error_set(err, e, "control socket %s: %s", path, strerror(e));
	}
	return fd;
}
