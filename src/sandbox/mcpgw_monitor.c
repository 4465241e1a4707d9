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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "proto/mcpgw.h"
#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp_bpf.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/fds.h"

/* A 'P' message's pin (mcp_pin_decode checks each field: a gateway
 * taken over may send anything, and what passes here is written into
 * the pins file of the connection's own server, nowhere else), within
 * the bounds of one write (proto/mcpgw.h). */
static int pin_take_msg(struct mcp_pins *p, const char *msg, size_t len)
{
	if (p->n >= GWPROTO_MAX_PINS)
		return -EINVAL;
	/* What is held until the write, bounded: a gateway taken over
	 * would otherwise have this process, the keeper too, hold all it
	 * can send. */
	size_t bytes = len;
	for (size_t i = 0; i < p->n; i++)
		bytes += mcp_pin_encoded_len(&p->v[i]);
	if (bytes > GWPROTO_MAX_PIN_BYTES)
		return -E2BIG;
	return mcp_pin_decode(p, msg, len);
}

/* One message, any fd it carried closed (*fd_sent says so): none of
 * this file's peers sends one. */
static int recv_no_fds(int sock, char *buf, size_t len, bool *fd_sent)
{
	int fds[PROTO_MAX_FDS];
	int n = proto_recv(sock, buf, len, fds);
	*fd_sent = false;
	for (int i = 0; i < PROTO_MAX_FDS; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			*fd_sent = true;
		}
	return n;
}

/* The pins taken since the last 'W' written into path, and forgotten:
 * the answer ('K', or 'E' and why) in ans, its length returned. */
static size_t pins_write(struct mcp_pins *p, const char *path, char ans[ERROR_MSG_MAX + 2])
{
	struct error err = { 0 };
	size_t alen = 1;
	ans[0] = GWPROTO_PINS_OK;
	if (!(p->path = strdup(path)))
		error_set(&err, ENOMEM, "out of memory");
	if (!p->path || mcp_pins_save(p, &err) < 0) {
		ans[0] = GWPROTO_PINS_ERR;
		alen += (size_t)snprintf(ans + 1, ERROR_MSG_MAX + 1, "%s", err.msg);
	}
	mcp_pins_free(p);
	memset(p, 0, sizeof(*p));
	return alen;
}

/* The server sandbox's "/", as its supervisor sent it once built: taken
 * once, at the first path to judge (the gateway waits for the answer;
 * the server is usually up long before). A supervisor that ended
 * without sending it leaves nothing inside. */
static void root_take(struct mcpgw_mon *m)
{
	char b[2];
	int fds[PROTO_MAX_FDS];
	int n = proto_recv(m->root_from, b, sizeof(b), fds);
	for (int i = 0; i < PROTO_MAX_FDS; i++) {
		if (fds[i] >= 0 && i == 0 && n == 1 && b[0] == SANDBOX_ROOT_MSG)
			m->root = fds[i];
		else if (fds[i] >= 0)
			close(fds[i]);
	}
	m->root_from = -1;
	if (m->root < 0)
		m->workspace = NULL;
}

/* One control message (proto/mcpgw.h) taken: an 'I' answered, a 'P'
 * kept in p (and passed to the keeper), a 'W' written (by the keeper)
 * and answered. 0; CONTROL_GONE when the answer found the socket closed
 * (the gateway is ending, or was killed: its status says which);
 * CONTROL_BROKEN when the gateway broke the protocol. */
enum { CONTROL_GONE = 1, CONTROL_BROKEN = 2 };
static int control_one(int control, const char *msg, int n, struct mcp_pins *p, struct mcpgw_mon *m)
{
	if (msg[0] == GWPROTO_INSIDE) {
		/* One bit back; the path a message, NUL-terminated, without
		 * another NUL (proto_recv terminated it). */
		char yes = GWPROTO_INSIDE_YES, no = GWPROTO_INSIDE_NO;
		bool well_formed = n >= 3 && msg[n - 1] == '\0' && strlen(msg + 1) == (size_t)n - 2 && n <= 4098;
		if (well_formed && m->root_from >= 0)
			root_take(m);
		bool in = well_formed && m->workspace && mcp_path_inside_root(m->root, m->workspace, msg + 1);
		return proto_send(control, in ? &yes : &no, 1, NULL, 0) >= 0 ? 0 : CONTROL_GONE;
	}
	if (msg[0] == GWPROTO_PIN) {
		if (n > GWPROTO_MAX_MSG || pin_take_msg(p, msg + 1, (size_t)n - 1) < 0)
			return CONTROL_BROKEN;
		/* Checked here and again there: the keeper is root. */
		if (m->keeper >= 0 && proto_send(m->keeper, msg, (size_t)n, NULL, 0) < 0)
			return CONTROL_BROKEN;
		return 0;
	}
	if (msg[0] != GWPROTO_PINS_WRITE || n != 1)
		return CONTROL_BROKEN;
	char ans[ERROR_MSG_MAX + 2];
	size_t alen;
	if (m->keeper < 0) {
		alen = pins_write(p, m->pins, ans);
	} else {
		mcp_pins_free(p);
		memset(p, 0, sizeof(*p));
		bool fd_sent;
		int k = proto_send(m->keeper, msg, 1, NULL, 0) < 0 ? -1 : recv_no_fds(m->keeper, ans, sizeof(ans), &fd_sent);
		if (k < 1 || fd_sent || (ans[0] != GWPROTO_PINS_OK && ans[0] != GWPROTO_PINS_ERR)) {
			ans[0] = GWPROTO_PINS_ERR;
			alen = 1 + (size_t)snprintf(ans + 1, sizeof(ans) - 1, "the pins keeper is gone");
		} else {
			alen = (size_t)k;
		}
	}
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

int mcpgw_serve(int control, struct mcpgw_mon *m)
{
	int rec_rd = m->rec_rd;
	bool (*on_record)(void *ctx, const char *line, size_t len) = m->on_record;
	void *ctx = m->ctx;
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
		bool fd_sent;
		int n = recv_no_fds(control, msg, GWPROTO_MAX_MSG + 1, &fd_sent);
		int c = fd_sent ? CONTROL_BROKEN : n <= 0 ? CONTROL_GONE : control_one(control, msg, n, &p, m);
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

/* The server's supervisor told to stop (SIGTERM) or killed: by the
 * keeper when there is one (a monitor that gave root up may not signal
 * it while it is still root). */
static void server_signal(const struct mcpgw_mon *m, int sig)
{
	char req = sig == SIGKILL ? GWPROTO_KEEPER_KILL : GWPROTO_KEEPER_TERM;
	if (m->keeper >= 0)
		(void)proto_send(m->keeper, &req, 1, NULL, 0);
	else if (m->server > 0)
		kill(m->server, sig);
}

/* The gateway killed: by the keeper when there is one (a monitor under
 * its own filter signals no process). */
static void gateway_kill(const struct mcpgw_mon *m, pid_t gw)
{
	char req = GWPROTO_KEEPER_KILL_GATEWAY;
	if (m->keeper >= 0)
		(void)proto_send(m->keeper, &req, 1, NULL, 0);
	else
		kill(gw, SIGKILL);
}

int mcpgw_gateway_end(pid_t gw, int served, const char *name, struct mcpgw_mon *m)
{
	bool (*on_record)(void *ctx, const char *line, size_t len) = m->on_record;
	void *ctx = m->ctx;
	if (served != 0)
		gateway_kill(m, gw);
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
	if (!clean)
		server_signal(m, killed ? SIGKILL : SIGTERM);
	if (killed || served == MCPGW_SERVE_BROKEN)
		return MCPGW_GW_KILLED;
	return clean ? MCPGW_GW_OK : MCPGW_GW_FAILED;
}

/* ---- the monitor's own sandbox, and the pins keeper ---- */

int mcpgw_monitor_confine(struct mcpgw_mon *m, pid_t gw, const char *step_up_sock, uid_t uid, gid_t gid,
			  pid_t parent, struct error *err)
{
	/* The keeper first: it is forked with what the monitor may still do. */
	int r = mcpgw_keeper_start(m, gw, step_up_sock, err);
	/* Nothing here reads the environment any more (the runner and the
	 * gateway have what they take of it): the user's secrets in it go,
	 * whatever happens next. */
	caps_wipe_environ();
	if (r >= 0 && geteuid() == 0)
		r = caps_drop_root(uid, gid, err);
	if (r < 0)
		return r;
	/* A change of ids clears the parent-death signal: set again, and
	 * the parent checked to be still there. */
	if (parent > 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
		return error_set(err, ESRCH, "its parent is gone");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0)
		return error_sys(err, errno, "prctl");
	r = landlock_confine(NULL, 0, err);
	if (r < 0 && r != -ENOSYS)
		return r;
	return seccomp_apply_monitor(err);
}

/* The keeper's loop (mcpgw_keeper_start): root, and a closed list of
 * requests, each checked as the gateway's own were (its monitor may be
 * the one taken over). Ends at the end of its socket, or at the first
 * request outside the list: the step-up socket removed on the way out. */
static __attribute__((noreturn)) void keeper_main(int fd, int pidfd, int gw_pidfd, const char *pins,
						   const char *step_up_sock)
{
	char *msg = malloc(GWPROTO_MAX_MSG + 1);
	struct mcp_pins p = { 0 };
	for (;;) {
		bool fd_sent;
		int n = msg ? recv_no_fds(fd, msg, GWPROTO_MAX_MSG + 1, &fd_sent) : -1;
		if (n <= 0 || fd_sent)
			break;
		if (msg[0] == GWPROTO_PIN) {
			if (n > GWPROTO_MAX_MSG || pin_take_msg(&p, msg + 1, (size_t)n - 1) < 0)
				break;
		} else if (msg[0] == GWPROTO_PINS_WRITE && n == 1) {
			char ans[ERROR_MSG_MAX + 2];
			size_t alen = pins_write(&p, pins, ans);
			if (proto_send(fd, ans, alen, NULL, 0) < 0)
				break;
		} else if ((msg[0] == GWPROTO_KEEPER_TERM || msg[0] == GWPROTO_KEEPER_KILL) && n == 1) {
			/* Through the pidfd: the pid is never another's. */
			(void)syscall(SYS_pidfd_send_signal, pidfd, msg[0] == GWPROTO_KEEPER_KILL ? SIGKILL : SIGTERM,
				      NULL, 0);
		} else if (msg[0] == GWPROTO_KEEPER_KILL_GATEWAY && n == 1 && gw_pidfd >= 0) {
			(void)syscall(SYS_pidfd_send_signal, gw_pidfd, SIGKILL, NULL, 0);
		} else {
			break;
		}
	}
	if (step_up_sock[0])
		unlink(step_up_sock);
	_exit(0);
}

int mcpgw_keeper_start(struct mcpgw_mon *m, pid_t gw, const char *step_up_sock, struct error *err)
{
	int sv[2];
	int pidfd = (int)syscall(SYS_pidfd_open, m->server, 0);
	if (pidfd < 0)
		return error_sys(err, errno, "pidfd_open");
	int gw_pidfd = gw > 0 ? (int)syscall(SYS_pidfd_open, gw, 0) : -1;
	if ((gw > 0 && gw_pidfd < 0) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = errno;
		close(pidfd);
		if (gw_pidfd >= 0)
			close(gw_pidfd);
		return error_sys(err, e, "pidfd_open or socketpair");
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* No parent-death signal: the monitor's end, however it comes,
		 * is the end of the socket, and the step-up socket goes then. */
		prctl(PR_SET_NAME, "airlock-pins");
		caps_wipe_environ();
		const int keep[] = { sv[1], pidfd, gw_pidfd };
		if (prctl(PR_SET_DUMPABLE, 0) < 0 || fds_close_from(3, keep, ARRAY_SIZE(keep) - (gw_pidfd < 0)) < 0)
			_exit(1);
		keeper_main(sv[1], pidfd, gw_pidfd, m->pins, step_up_sock);
	}
	int e = errno;
	close(sv[1]);
	close(pidfd);
	if (gw_pidfd >= 0)
		close(gw_pidfd);
	if (pid < 0) {
		close(sv[0]);
		return error_sys(err, e, "cannot start the pins keeper (fork)");
	}
	m->keeper = sv[0];
	m->keeper_pid = pid;
	return 0;
}

void mcpgw_keeper_end(struct mcpgw_mon *m)
{
	if (m->keeper < 0)
		return;
	close(m->keeper);
	m->keeper = -1;
	while (waitpid(m->keeper_pid, NULL, 0) < 0 && errno == EINTR)
		;
}
