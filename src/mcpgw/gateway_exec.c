/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-mcp-gateway: an MCP gateway for one client, as an executable
 * of its own (proto/mcpgw.h: what crosses, and how): a connection of a
 * session's agent, or the stdio client of `airlock mcp run`.
 *
 * Its monitor (a session's connection monitor, sandbox/mcpgw.c, or `mcp
 * run`, cli/mcp.c) starts it with an empty environment and hands it, in
 * one 'G' message, the client's input and output, the server's stdin and
 * stdout (the server's sandbox is the monitor's: this process starts
 * nothing) and what it needs to know. It reads the policy again, loads
 * the server's pins, and then, before it answers the client and reads a
 * byte of the client's or the server's:
 * drops to the sandbox's uid and gid with no supplementary groups (as
 * root), sets no_new_privs, stops being dumpable, enters a Landlock
 * domain that allows no path at all and a seccomp allow-list that kills
 * it for any other call (seccomp_rules_build_gateway, compiled at build
 * time: seccomp_bpf_gateway). A message that
 * takes it over gets a process that can only relay on the fds it holds:
 * no program, no file, no other process, none of the user's secrets.
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mcp/gateway.h"
#include "proto/mcpgw.h"
#include "mcp/mcp.h"
#include "policy/layer.h"
#include "policy/mcp.h"
#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "sandbox/seccomp_bpf.h"
#include "util/buf.h"

static int client = -1; /* a session's connection, told why it is refused; -1 for a stdio client */

/* Before OK: a session's client is told why (mcpgw.h's ERR line); a stdio
 * client hears only JSON-RPC, so the reason goes to stderr alone; the
 * monitor sees the exit status. */
__attribute__((noreturn, format(printf, 1, 2))) static void refuse(const char *fmt, ...)
{
	char line[ERROR_MSG_MAX + 8];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line + 4, sizeof(line) - 5, fmt, ap);
	va_end(ap);
	memcpy(line, "ERR ", 4);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 6)
		n = (int)sizeof(line) - 6;
	line[4 + n] = '\n';
	if (client >= 0)
		(void)!send(client, line, 5 + (size_t)n, MSG_NOSIGNAL);
	fprintf(stderr, "airlock-mcp-gateway: %.*s\n", n, line + 4);
	_exit(1);
}

static bool record_send(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	ssize_t w;
	do
		w = send(GWPROTO_FD_RECORDS, line, len, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)len;
}

/* mcp_gateway's pins_save: the changed pins to the monitor, which
 * writes the file ('P'... 'W', then 'K' or 'E'). */
static int pins_to_monitor(void *ctx, struct mcp_pins *p, struct error *err)
{
	(void)ctx;
	/* No more than the monitor takes before a write (proto/mcpgw.h),
	 * weighed as it weighs them: a server with more tools than that is
	 * recorded, not cut off. */
	size_t dirty = 0, bytes = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].dirty) {
			dirty++;
			bytes += mcp_pin_encoded_len(&p->v[i]);
		}
	if (dirty > GWPROTO_MAX_PINS || bytes > GWPROTO_MAX_PIN_BYTES)
		return error_set(err, E2BIG, "%s: %zu changed pins, more than one write takes", p->path, dirty);
	for (size_t i = 0; i < p->n; i++) {
		const struct mcp_pin *pin = &p->v[i];
		if (!pin->dirty)
			continue;
		struct buf m = { 0 };
		int r = buf_append(&m, (char[]){ GWPROTO_PIN }, 1);
		if (r >= 0)
			r = mcp_pin_encode(pin, &m);
		if (r >= 0 && m.len > GWPROTO_MAX_MSG)
			r = -EMSGSIZE;
		if (r >= 0)
			r = proto_send(GWPROTO_FD_CONTROL, m.data, m.len, NULL, 0);
		buf_free(&m);
		if (r < 0)
			return error_set(err, -r, "%s: the pin of tool %s: %s", p->path, pin->tool, strerror(-r));
	}
	char w = GWPROTO_PINS_WRITE;
	int r = proto_send(GWPROTO_FD_CONTROL, &w, 1, NULL, 0);
	char ans[ERROR_MSG_MAX + 2];
	int fds[PROTO_MAX_FDS];
	int n = r < 0 ? r : proto_recv(GWPROTO_FD_CONTROL, ans, sizeof(ans), fds);
	if (n <= 0)
		return error_set(err, n < 0 ? -n : EPIPE, "%s: the monitor did not answer", p->path);
	if (ans[0] != GWPROTO_PINS_OK)
		return error_set(err, EIO, "%s", ans[0] == GWPROTO_PINS_ERR ? ans + 1 : "the monitor's answer");
	for (size_t i = 0; i < p->n; i++)
		p->v[i].dirty = false;
	return 0;
}

/* The engine's path_inside: the monitor resolves (GWPROTO_INSIDE). A
 * path too long, or no answer: outside (the call is denied). */
static bool inside_by_monitor(void *ctx, const char *path)
{
	(void)ctx;
	size_t len = strlen(path);
	if (len >= 4096)
		return false;
	char m[4097 + 1];
	m[0] = GWPROTO_INSIDE;
	memcpy(m + 1, path, len + 1);
	if (proto_send(GWPROTO_FD_CONTROL, m, len + 2, NULL, 0) < 0)
		return false;
	char ans[8];
	int fds[PROTO_MAX_FDS];
	return proto_recv(GWPROTO_FD_CONTROL, ans, sizeof(ans), fds) == 1 && ans[0] == GWPROTO_INSIDE_YES;
}

/* The sandbox, in the order each step needs: ids (as root), then
 * no_new_privs (which Landlock and seccomp need), Landlock, seccomp. */
static int contain(uid_t uid, gid_t gid, pid_t monitor, struct error *err)
{
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0))
		return error_sys(err, errno, "cannot drop to uid %u, gid %u", (unsigned)uid, (unsigned)gid);
	/* A change of ids clears the parent-death signal: set again, and
	 * the monitor checked to be still there. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != monitor)
		return error_set(err, ESRCH, "the monitor is gone");
	/* Not dumpable: another process of the same uid (the agent's, as
	 * root the sandbox's uid is the agent's) may not ptrace it or read
	 * its memory. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0)
		return error_sys(err, errno, "prctl");
	int r = landlock_confine(NULL, 0, err);
	if (r < 0 && r != -ENOSYS)
		return r;
	return seccomp_apply_gateway(err);
}

int main(int argc, char **argv)
{
	pid_t monitor = getppid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (argc < 4) {
		fprintf(stderr, "airlock-mcp-gateway: started by airlock run, not by hand\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	/* The monitor's one message: where everything is. */
	static char msg[16384];
	int fds[PROTO_MAX_FDS];
	int n = proto_recv(GWPROTO_FD_CONTROL, msg, sizeof(msg), fds);
	int nfds = 0;
	while (nfds < PROTO_MAX_FDS && fds[nfds] >= 0)
		nfds++;
	if (n < 2 || msg[0] != GWPROTO_START || nfds < GWPROTO_FD_FIXED)
		_exit(1);
	const char *field[GWPROTO_START_FIELDS];
	const char *q = msg + 1, *end = msg + n;
	for (size_t i = 0; i < GWPROTO_START_FIELDS; i++) {
		const char *nul = q < end ? memchr(q, '\0', (size_t)(end - q)) : NULL;
		if (!nul)
			refuse("the monitor's start message is malformed");
		field[i] = q;
		q = nul + 1;
	}
	bool stdio = !strcmp(field[GWPROTO_START_MODE], GWPROTO_MODE_STDIO);
	if (!stdio)
		client = fds[GWPROTO_FD_CLIENT_IN];
	const char *name = field[GWPROTO_START_NAME];
	bool step_up = field[GWPROTO_START_STEP_UP_PATH][0] != '\0';
	bool tty = !strcmp(field[GWPROTO_START_TTY], "1");
	if ((!stdio && strcmp(field[GWPROTO_START_MODE], GWPROTO_MODE_SESSION)) ||
	    nfds != GWPROTO_FD_FIXED + step_up + tty)
		refuse("the monitor's start message is malformed");
	int step_up_fd = step_up ? fds[GWPROTO_FD_FIXED] : -1;
	int tty_fd = tty ? fds[GWPROTO_FD_FIXED + step_up] : -1;

	/* The policy, read as the monitor's side read it (the proxy does the
	 * same, proxy/proxy_exec.c): the server's rules are what relay
	 * needs. "" is the built-in default. */
	struct policy_ctx ctx = { .cwd = argv[2], .home = argv[3], .no_env = true };
	struct error err = { 0 };
	struct policy *pol = NULL;
	if ((argv[1][0] ? policy_load_file(argv[1], &ctx, &pol, &err) : policy_default(&ctx, &pol, &err)) < 0)
		refuse("%s", err.msg);
	if (argc > 4) {
		struct policy_layer_report rep = { 0 };
		int lr = policy_apply_enterprise(pol, argv + 4, (size_t)(argc - 4), &ctx, &rep, &err);
		policy_layer_report_free(&rep);
		if (lr < 0)
			refuse("%s", err.msg);
	}
	/* A session's server is one its policy declares; `mcp run` of a
	 * policy without the entry relays with every tool denied. */
	const struct policy_mcp_server *srv = policy_mcp_server(pol->mcp, name);
	if (!srv && !stdio)
		refuse("the session's policy declares no mcp.servers.%s", name);
	/* Path constraints (inside_workspace) are judged against the
	 * directory the server's own sandbox is given; the pins are read
	 * now, while the file is still in reach. */
	struct mcp_engine eng;
	if (mcp_engine_init(&eng, srv, name, field[GWPROTO_START_WORKSPACE], field[GWPROTO_START_PINS], &err) < 0)
		refuse("%s", err.msg);
	eng.path_inside = inside_by_monitor;
	if (contain((uid_t)strtoul(field[GWPROTO_START_UID], NULL, 10), (gid_t)strtoul(field[GWPROTO_START_GID], NULL, 10),
		    monitor, &err) < 0)
		refuse("mcp.servers.%s: the gateway's sandbox: %s", name, err.msg);

	/* Contained: from here on, what the client and the server send. */
	if (!stdio && send(client, "OK\n", 3, MSG_NOSIGNAL) != 3)
		_exit(1);
	struct mcp_gateway gw = { .engine = &eng, .client_in = fds[GWPROTO_FD_CLIENT_IN],
				  .client_out = fds[GWPROTO_FD_CLIENT_OUT], .server_in = fds[GWPROTO_FD_SERVER_IN],
				  .server_out = fds[GWPROTO_FD_SERVER_OUT], .record = record_send,
				  .control_fd = step_up_fd, .control_path = step_up ? field[GWPROTO_START_STEP_UP_PATH] : NULL,
				  .tty_fd = tty_fd,
				  .step_up_timeout = (unsigned)strtoul(field[GWPROTO_START_STEP_UP_TIMEOUT], NULL, 10),
				  .pins_save = pins_to_monitor };
	int gr = mcp_gateway_run(&gw, &err);
	if (gr < 0)
		fprintf(stderr, "airlock: mcp.servers.%s: %s\n", name, err.msg);
	bool failed = gr < 0 || gw.record_failed;
	/* The agent's side learns of the end from the connection: closed
	 * while its client still talks is an error there. */
	_exit(failed ? 1 : 0);
}
