/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitor's side of proto/mcpgw.h, for both monitors: a session's
 * connection monitor (mcpgw.c) and `airlock mcp run` (cli/mcp.c). Both
 * start airlock-mcp-gateway the same way, tell it where everything is in
 * the same 'G', and serve its control socket the same way: every field
 * of what a gateway sends is checked, for a gateway taken over may send
 * anything.
 */
#include "sandbox/mcpgw.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "proto/mcpgw.h"
#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "util/buf.h"
#include "util/cleanup.h"

/* A 'P' message's fields, each checked: a gateway taken over may send
 * anything, and what passes here is written into the pins file of the
 * connection's own server, nowhere else. */
static bool hex64(const char *s, bool empty_ok)
{
	if (!*s)
		return empty_ok;
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

static int pin_take_msg(struct mcp_pins *p, const char *msg, size_t len)
{
	const char *f[5];
	size_t k = 0;
	const char *q = msg, *end = msg + len;
	while (k < 5 && q < end) {
		const char *nul = memchr(q, '\0', (size_t)(end - q));
		if (!nul)
			return -EINVAL;
		f[k++] = q;
		q = nul + 1;
	}
	if (k != 5 || q != end || !f[0][0] || !hex64(f[1], false) || !f[2][0] || !hex64(f[3], true) ||
	    (!f[3][0]) != (!f[4][0]) || p->n >= GWPROTO_MAX_PINS)
		return -EINVAL;
	struct mcp_pin *v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->v = v;
	struct mcp_pin *pin = &v[p->n];
	memset(pin, 0, sizeof(*pin));
	pin->dirty = true;
	memcpy(pin->sha256, f[1], 65);
	memcpy(pin->pending_sha256, f[3], strlen(f[3]) + 1);
	if (!(pin->tool = strdup(f[0])) || !(pin->definition = strdup(f[2])) ||
	    (f[4][0] && !(pin->pending_definition = strdup(f[4])))) {
		free(pin->tool);
		free(pin->definition);
		return -ENOMEM;
	}
	p->n++;
	return 0;
}

/* One control message (proto/mcpgw.h) taken: an 'I' answered, a 'P'
 * kept in p, a 'W' written and answered. 0; CONTROL_GONE when the answer
 * found the socket closed (the gateway is ending, or was killed: its
 * status says which); CONTROL_BROKEN when the gateway broke the
 * protocol. */
enum { CONTROL_GONE = 1, CONTROL_BROKEN = 2 };
static int control_one(int control, const char *msg, int n, struct mcp_pins *p, const char *pins_path,
			const char *workspace)
{
	if (msg[0] == GWPROTO_INSIDE) {
		/* One bit back; the path a message, NUL-terminated, without
		 * another NUL (proto_recv terminated it). */
		char yes = GWPROTO_INSIDE_YES, no = GWPROTO_INSIDE_NO;
		bool in = n >= 3 && msg[n - 1] == '\0' && strlen(msg + 1) == (size_t)n - 2 && n <= 4098 && workspace &&
			  mcp_path_inside(workspace, msg + 1);
		return proto_send(control, in ? &yes : &no, 1, NULL, 0) >= 0 ? 0 : CONTROL_GONE;
	}
	if (msg[0] == GWPROTO_PIN)
		return n <= GWPROTO_MAX_MSG && pin_take_msg(p, msg + 1, (size_t)n - 1) >= 0 ? 0 : CONTROL_BROKEN;
	if (msg[0] != GWPROTO_PINS_WRITE || n != 1)
		return CONTROL_BROKEN;
	struct error err = { 0 };
	char ans[ERROR_MSG_MAX + 2];
	size_t alen = 1;
	ans[0] = GWPROTO_PINS_OK;
	if (!(p->path = strdup(pins_path)))
		error_set(&err, ENOMEM, "out of memory");
	if (!p->path || mcp_pins_save(p, &err) < 0) {
		ans[0] = GWPROTO_PINS_ERR;
		alen += (size_t)snprintf(ans + 1, sizeof(ans) - 1, "%s", err.msg);
	}
	mcp_pins_free(p);
	memset(p, 0, sizeof(*p));
	return proto_send(control, ans, alen, NULL, 0) >= 0 ? 0 : CONTROL_GONE;
}

bool mcpgw_record_ok(const char *msg, size_t n)
{
	/* One whole line per message: a record that would split or join
	 * lines in the log is refused. */
	return n > 0 && n <= MCPGW_MAX_RECORD && msg[n - 1] == '\n' && !memchr(msg, '\n', n - 1);
}

int mcpgw_records_take(int rec_rd, bool (*on_record)(void *ctx, const char *line, size_t len), void *ctx, bool *eof)
{
	static char rec[MCPGW_MAX_RECORD + 1];
	int taken = 0;
	for (;;) {
		ssize_t n = recv(rec_rd, rec, sizeof(rec), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return taken;
		if (n <= 0) {
			*eof = true;
			return n == 0 ? taken : MCPGW_RECORDS_FAILED;
		}
		if (!mcpgw_record_ok(rec, (size_t)n) || !on_record(ctx, rec, (size_t)n))
			return MCPGW_RECORDS_REFUSED;
		taken++;
	}
}

int mcpgw_serve(int control, const char *pins_path, const char *workspace, int rec_rd,
		bool (*on_record)(void *ctx, const char *line, size_t len), void *ctx)
{
	char *msg = malloc(GWPROTO_MAX_MSG + 1);
	struct mcp_pins p = { 0 };
	int r = msg ? 0 : MCPGW_SERVE_BROKEN;
	bool rec_eof = rec_rd < 0;
	while (r == 0 && control >= 0) {
		struct pollfd pf[2] = { { .fd = control, .events = POLLIN }, { .fd = rec_eof ? -1 : rec_rd, .events = POLLIN } };
		if (poll(pf, 2, -1) < 0) {
			if (errno != EINTR)
				r = MCPGW_SERVE_BROKEN;
			continue;
		}
		/* Records first: a decision is in the log before the pins
		 * write or the path it led to is answered. */
		if (!rec_eof && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    mcpgw_records_take(rec_rd, on_record, ctx, &rec_eof) < 0)
			r = MCPGW_SERVE_RECORD;
		if (r || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		int fds[PROTO_MAX_FDS];
		int n = proto_recv(control, msg, GWPROTO_MAX_MSG + 1, fds);
		bool fd_sent = false;
		for (int i = 0; i < PROTO_MAX_FDS; i++)
			if (fds[i] >= 0) {
				close(fds[i]);
				fd_sent = true;
			}
		int c = fd_sent ? CONTROL_BROKEN : n <= 0 ? CONTROL_GONE : control_one(control, msg, n, &p, pins_path, workspace);
		if (c == CONTROL_BROKEN)
			r = MCPGW_SERVE_BROKEN;
		else if (c == CONTROL_GONE)
			control = -1; /* the gateway closed it: it is ending */
	}
	/* The gateway's last records, up to its exit (the socket's other
	 * ends are the gateway's alone). */
	while (r == 0 && !rec_eof) {
		struct pollfd pf = { .fd = rec_rd, .events = POLLIN };
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			r = MCPGW_SERVE_BROKEN;
		else if (mcpgw_records_take(rec_rd, on_record, ctx, &rec_eof) < 0)
			r = MCPGW_SERVE_RECORD;
	}
	mcp_pins_free(&p);
	free(msg);
	return r;
}

int mcpgw_record_death(char *line, size_t cap, const char *name, int sig)
{
	struct buf b = { 0 };
	char tail[160];
	snprintf(tail, sizeof(tail),
		 ",\"decision\":\"deny\",\"rule\":\"gateway\",\"reason\":\"the gateway was killed by signal %d; "
		 "MCP traffic ends (fail closed)\"}\n",
		 sig);
	int r = buf_puts(&b, "{\"kind\":\"mcp\",\"method\":\"(gateway)\",\"server\":");
	if (r >= 0)
		r = buf_json_string(&b, name, strlen(name));
	if (r >= 0)
		r = buf_puts(&b, tail);
	if (r >= 0 && b.len >= cap)
		r = -ENAMETOOLONG;
	if (r >= 0) {
		memcpy(line, b.data, b.len);
		r = (int)b.len;
	}
	buf_free(&b);
	return r;
}

pid_t mcpgw_gateway_spawn(const struct policy *pol, const char *cwd, const char *home, int rec_wr, int *control,
			  struct error *err)
{
	/* Beside airlock, as airlock-proxy is (sibling.c). */
	char exe[PATH_MAX];
	int r = sibling_path("airlock-mcp-gateway", exe, sizeof(exe), err);
	if (r < 0)
		return r;
	int cs[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cs) < 0)
		return error_sys(err, errno, "socketpair");
	/* "" for the built-in default: the gateway loads it as we did. */
	char *fixed[] = { exe, policy_is_default(pol) ? "" : pol->file, (char *)cwd, (char *)home };
	char **argv = sibling_argv(fixed, ARRAY_SIZE(fixed), pol);
	if (!argv) {
		close(cs[0]);
		close(cs[1]);
		return error_set(err, ENOMEM, "out of memory");
	}
	/* Nothing of the monitor's environment: it holds the user's
	 * secrets, and a gateway taken over would read its own. */
	char *envp[4];
	sibling_env(NULL, 0, envp, 0, ARRAY_SIZE(envp));
	pid_t pid = sibling_spawn(argv, envp, cs[1], rec_wr);
	int e = errno;
	free(argv);
	close(cs[1]);
	if (pid < 0) {
		close(cs[0]);
		return error_sys(err, e, "cannot start %s", exe);
	}
	*control = cs[0];
	return pid;
}

int mcpgw_gateway_start(int control, const struct mcpgw_start *st)
{
	char timeout[16], uid[16], gid[16];
	snprintf(timeout, sizeof(timeout), "%u", st->step_up_timeout);
	snprintf(uid, sizeof(uid), "%u", (unsigned)st->uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)st->gid);
	const char *field[GWPROTO_START_FIELDS] = {
		[GWPROTO_START_NAME] = st->name,
		[GWPROTO_START_PINS] = st->pins,
		[GWPROTO_START_WORKSPACE] = st->workspace,
		[GWPROTO_START_STEP_UP_PATH] = st->step_up >= 0 ? st->step_up_path : "",
		[GWPROTO_START_STEP_UP_TIMEOUT] = timeout,
		[GWPROTO_START_UID] = uid,
		[GWPROTO_START_GID] = gid,
		[GWPROTO_START_MODE] = st->stdio ? GWPROTO_MODE_STDIO : GWPROTO_MODE_SESSION,
		[GWPROTO_START_TTY] = st->tty >= 0 ? "1" : "0",
	};
	struct buf m = { 0 };
	int r = buf_append(&m, (char[]){ GWPROTO_START }, 1);
	for (size_t i = 0; i < GWPROTO_START_FIELDS && r >= 0; i++)
		r = buf_append(&m, field[i], strlen(field[i]) + 1);
	int fds[GWPROTO_FD_FIXED + 2] = { [GWPROTO_FD_CLIENT_IN] = st->client_in, [GWPROTO_FD_CLIENT_OUT] = st->client_out,
					  [GWPROTO_FD_SERVER_IN] = st->server_in,
					  [GWPROTO_FD_SERVER_OUT] = st->server_out };
	size_t n = GWPROTO_FD_FIXED;
	if (st->step_up >= 0)
		fds[n++] = st->step_up;
	if (st->tty >= 0)
		fds[n++] = st->tty;
	if (r >= 0)
		r = proto_send(control, m.data, m.len, fds, n);
	buf_free(&m);
	return r;
}

int mcpgw_gateway_end(pid_t gw, pid_t server, int served, const char *name,
		      bool (*on_record)(void *ctx, const char *line, size_t len), void *ctx)
{
	if (served != 0)
		kill(gw, SIGKILL);
	int status = 0;
	while (waitpid(gw, &status, 0) < 0 && errno == EINTR)
		;
	/* Killed: by its filter (SIGSYS: it made a call it never makes, so
	 * it was taken over), or by us when it broke the control protocol. */
	bool killed = served >= 0 && WIFSIGNALED(status);
	if (killed && on_record) {
		char line[512];
		int n = mcpgw_record_death(line, sizeof(line), name, WTERMSIG(status));
		if (n > 0)
			(void)on_record(ctx, line, (size_t)n);
	}
	bool clean = served == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	/* Fail closed: a gateway that failed, or could not record, stops the
	 * server, at once when it was taken over. */
	if (!clean && server > 0)
		kill(server, killed ? SIGKILL : SIGTERM);
	if (killed || served == MCPGW_SERVE_BROKEN)
		return MCPGW_GW_KILLED;
	return clean ? MCPGW_GW_OK : MCPGW_GW_FAILED;
}
