/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The session's MCP gateway: the supervisor's listener, one monitor per
 * connection, which starts the server in a sandbox of its own and
 * airlock-mcp-gateway to relay (mcpgw.h, proto/mcpgw.h).
 */
#include "sandbox/mcpgw.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp/gateway.h"
#include "proto/mcpgw.h"
#include "mcp/mcp.h"
#include "policy/mcp.h"
#include "sandbox/landlock_abi.h"
#include "sandbox/proto.h"
#include "sandbox/sandbox.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/fds.h"
#include "util/file.h"
#include "util/statedir.h"


static const char *home_of(void)
{
	const char *home = getenv("HOME");
	if (home && home[0] == '/')
		return home;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* The server's sandbox when its entry names no policy: the built-in
 * default (no network, home hidden, environment cleared) with the
 * session's workspace, read-only: a server reads what the agent works
 * on, and changes it only when its own policy says so. */
static int default_server_policy(const struct policy *session, struct policy **out, struct error *err)
{
	struct policy_ctx ctx = { .home = home_of(), .cwd = session->sandbox.workspace };
	int r = policy_default(&ctx, out, err);
	if (r < 0)
		return r;
	struct policy_paths *rd = &(*out)->filesystem.read;
	struct policy_path *v = realloc(rd->v, (rd->n + 1) * sizeof(*v));
	if (!v)
		return error_set(err, ENOMEM, "out of memory");
	rd->v = v;
	/* A read-only bind of the workspace over its read-write one (plan.c
	 * mounts the later, more specific entry on top). */
	v[rd->n] = (struct policy_path){ .path = strdup((*out)->sandbox.workspace) };
	if (!v[rd->n].path)
		return error_set(err, ENOMEM, "out of memory");
	rd->n++;
	return 0;
}

static int load_server_policies(struct mcpgw *g, struct error *err)
{
	const struct policy_mcp *m = g->pol->mcp;
	if (!(g->srv_pol = calloc(m->n_servers, sizeof(*g->srv_pol))))
		return error_set(err, ENOMEM, "out of memory");
	g->n_srv = m->n_servers;
	for (size_t i = 0; i < m->n_servers; i++) {
		const struct policy_mcp_server *s = &m->servers[i];
		int r;
		if (!s->policy) {
			r = default_server_policy(g->pol, &g->srv_pol[i], err);
		} else {
			struct policy_ctx ctx = { .home = home_of(), .cwd = g->pol->sandbox.workspace };
			struct error perr = { 0 };
			r = policy_load_file(s->policy, &ctx, &g->srv_pol[i], &perr);
			if (r < 0)
				r = error_set(err, perr.code ? perr.code : EINVAL,
					      "%s:%u: mcp.servers.%s.policy: the server's policy: %s", g->pol->file,
					      s->policy_line, s->name, perr.msg);
			else if (g->srv_pol[i]->mcp && g->srv_pol[i]->mcp->n_servers)
				/* One level only: a server's sandbox is not a
				 * session with MCP servers of its own. */
				r = error_set(err, EINVAL,
					      "%s: mcp.servers: a server's own policy (mcp.servers.%s.policy) declares "
					      "MCP servers; only the session's policy may",
					      s->policy, s->name);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int mcpgw_prepare(const struct policy *pol, const char *audit_dir, struct sandbox_plan *plan, struct mcpgw *g,
		  struct error *err)
{
	*g = (struct mcpgw)MCPGW_INIT;
	g->pol = pol;
	g->audit_dir = audit_dir;
	if (!pol->mcp || pol->mcp->n_servers == 0)
		return 0;
	/* Observe mode's root is the host's tree: the socket's mount point
	 * would be made in the host's /run, and its private /run goes on top
	 * of it. */
	if (plan->observe)
		return error_set(err, ENOTSUP,
				 "%s: mcp.servers: MCP servers in a session need sandbox.mode enforce or learn; "
				 "observe mode has no gateway",
				 pol->file);
	int r = load_server_policies(g, err);
	if (r < 0)
		return r;
	if (!getcwd(g->cwd, sizeof(g->cwd)))
		return error_sys(err, errno, "getcwd");
	snprintf(g->home, sizeof(g->home), "%s", home_of());

	/* A directory only we can enter holds the socket on the host; the
	 * sandbox sees the socket itself, bound at MCPGW_SOCKET. */
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (!rt || rt[0] != '/' || stat(rt, &st) < 0 || !S_ISDIR(st.st_mode) || access(rt, W_OK) < 0)
		rt = "/tmp";
	snprintf(g->dir, sizeof(g->dir), "%s/airlock-mcp.XXXXXX", rt);
	if (!mkdtemp(g->dir)) {
		r = error_sys(err, errno, "cannot make a directory for the MCP gateway's socket in %s", rt);
		g->dir[0] = '\0';
		return r;
	}
	snprintf(g->sock, sizeof(g->sock), "%s/mcp.sock", g->dir);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(g->sock) >= sizeof(a.sun_path))
		return error_set(err, ENAMETOOLONG, "%s: path too long for a unix socket", g->sock);
	memcpy(a.sun_path, g->sock, strlen(g->sock) + 1);
	g->listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (g->listen < 0)
		return error_sys(err, errno, "socket");
	if (bind(g->listen, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(g->listen, MCPGW_MAX_CONNS) < 0)
		return error_sys(err, errno, "cannot listen on %s", g->sock);
	/* Started as root the sandbox's uid is another's; the directory
	 * (0700) keeps everyone else on the host out. */
	if (chmod(g->sock, 0666) < 0)
		return error_sys(err, errno, "chmod %s", g->sock);
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return error_sys(err, errno, "socketpair");
	g->rec_rd = sp[0];
	g->rec_wr = sp[1];
	if (fcntl(g->rec_rd, F_SETFL, O_NONBLOCK) < 0)
		return error_sys(err, errno, "fcntl");

	char self[PATH_MAX];
	if (!realpath("/proc/self/exe", self))
		return error_sys(err, errno, "cannot find airlock's own executable");
	if (plan_add_mount(plan, MOUNT_BIND, g->sock, MCPGW_SOCKET, false, false) < 0 ||
	    plan_add_mount(plan, MOUNT_BIND, self, MCPGW_BINARY, true, false) < 0 ||
	    plan_add_rule(plan, MCPGW_BINARY, LL_FS_READ_FILE | LL_FS_EXECUTE) < 0 ||
	    /* A host socket, so the guard must know it (filesystem.sockets). */
	    plan_add_socket(plan, MCPGW_SOCKET) < 0)
		return error_set(err, ENOMEM, "out of memory");
	/* Started as root, the sandbox builds its root as its own uid,
	 * which cannot enter the socket's directory: the supervisor clones
	 * both trees here, as for idmapped mounts (idmap.c). */
	for (size_t i = plan->n_mounts - 2; plan->privileged && i < plan->n_mounts; i++) {
		struct mount_entry *m = &plan->mounts[i];
		m->tree_fd = (int)syscall(SYS_open_tree, AT_FDCWD, m->src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (m->tree_fd < 0)
			return error_sys(err, errno, "cannot clone %s", m->src);
	}
	return 0;
}


__attribute__((format(printf, 2, 3))) static void answer(int c, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!send(c, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, MSG_NOSIGNAL);
}

bool mcpgw_read_line(int fd, char *out, size_t len)
{
	size_t n = 0;
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1)
			return false;
		if (ch == '\n')
			break;
		if (n + 1 >= len)
			return false;
		out[n++] = ch;
	}
	out[n] = '\0';
	return true;
}

static int pins_default(const char *name, char *out, size_t len, struct error *err)
{
	char dir[4096];
	/* The same file `airlock mcp` (cli/mcp.c) pins to and approves in. */
	int r = statedir_path("mcp", dir, sizeof(dir), err);
	if (r < 0)
		return error_prefix(err, "mcp.servers.%s: the pin file (name one with pins:)", name);
	r = file_mkdir_p(dir, 0700, err);
	if (r < 0)
		return r;
	snprintf(out, len, "%s/%s.pins.json", dir, name);
	return 0;
}

/* A record of the monitor's own (the gateway's death) to the
 * supervisor, on the records socket the gateways share. */
static bool send_record(void *ctx, const char *line, size_t len)
{
	return send(*(const int *)ctx, line, len, MSG_NOSIGNAL) == (ssize_t)len;
}

/* The step-up control socket of this connection: 0600 in the 0700 run
 * directory under the host's state directory, which the agent's sandbox
 * does not show. The terminal is not used: the agent shares it (and the
 * monitor left it with setsid), so an answer typed there could be read,
 * or typed, by the agent. -1 when none could be made: a step_up call is
 * then denied at once, and says so. */
static int step_up_socket(const char *name, pid_t supervisor, char *sock, size_t len)
{
	char rd[4096];
	struct error derr = { 0 };
	int fd = -1;
	sock[0] = '\0';
	if (mcp_control_dir(rd, sizeof(rd)) < 0)
		error_set(&derr, EINVAL, "neither XDG_STATE_HOME nor HOME is an absolute path");
	else if (file_mkdir_p(rd, 0700, &derr) == 0) {
		snprintf(sock, len, "%s/session-%d-%s-%d.sock", rd, (int)supervisor, name, (int)getpid());
		fd = mcp_control_listen(sock, &derr);
	}
	if (fd < 0) {
		fprintf(stderr, "airlock: mcp.servers.%s: no control socket for step-up: %s\n", name, derr.msg);
		sock[0] = '\0';
	}
	return fd;
}

/* The runner: an `airlock run` of the server's command with the server's
 * policy, its stdin and stdout the given pipe ends; it keeps nothing of
 * the agent's connection. Never returns. */
__attribute__((noreturn)) static void runner_main(struct mcpgw *g, const struct policy_mcp_server *srv,
						  const struct policy *spol, pid_t monitor, int in, int out, int root_to)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != monitor)
		_exit(SANDBOX_EXIT_SETUP);
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
		_exit(SANDBOX_EXIT_SETUP);
	const int keep[] = { root_to };
	if (fds_close_from(3, keep, ARRAY_SIZE(keep)) < 0)
		_exit(SANDBOX_EXIT_SETUP);
	signal(SIGPIPE, SIG_DFL);
	/* The sandbox's "/" goes to the monitor, which judges the paths the
	 * server is given as the server sees them. */
	struct sandbox_opts so = { .policy = spol, .argv = srv->command, .audit_dir = g->audit_dir,
				   .no_audit = !g->audit_dir, .report_root = true, .root_to = root_to };
	int code = 0;
	struct error serr = { 0 };
	if (sandbox_run(&so, &code, &serr) < 0) {
		fprintf(stderr, "airlock: mcp.servers.%s: %s\n", srv->name, serr.msg);
		_exit(SANDBOX_EXIT_SETUP);
	}
	_exit(code);
}

/* The one line of the agent's the monitor reads: a name of at most 64
 * bytes, in the characters policy/mcp.c accepts, of a server the
 * session's policy declares with a command. Everything after it is the
 * gateway's to parse. The server, or NULL with the connection answered
 * why. */
static const struct policy_mcp_server *server_named(struct mcpgw *g, int c, char name[80])
{
	if (!mcpgw_read_line(c, name, 80) || !name[0]) {
		answer(c, "ERR expected a server name and a newline\n");
		return NULL;
	}
	for (const char *q = name; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '-' ||
		      *q == '_' || *q == '.')) {
			answer(c, "ERR not a server name: use letters, digits, '-', '_' and '.'\n");
			return NULL;
		}
	const struct policy_mcp_server *srv = policy_mcp_server(g->pol->mcp, name);
	if (!srv)
		answer(c, "ERR the session's policy declares no mcp.servers.%s\n", name);
	else if (!srv->command)
		answer(c, "ERR mcp.servers.%s has no command to start\n", name);
	return srv && srv->command ? srv : NULL;
}

/* One connection, in its own process, the monitor: a fork of the
 * supervisor that reads the server's name, starts the server's sandbox
 * (the runner) and the gateway that relays between them, writes the
 * pins the gateway changed, and fails closed when the gateway dies.
 * Never returns. */
__attribute__((noreturn)) static void conn_main(struct mcpgw *g, int c, pid_t supervisor)
{
	/* With the supervisor gone, the session is over: so is its monitor
	 * (and, through their own death signals, the gateway and the
	 * server). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != supervisor)
		_exit(1);
	int rec = g->rec_wr;
	/* Nothing of the supervisor's: not the audit writer's socket, the
	 * proxy's control socket, the sandbox's sync socket or terminal. */
	const int keep[] = { c, rec };
	if (fds_close_from(3, keep, 2) < 0)
		_exit(1);
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		close(devnull);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Out of the terminal's process group: a ^C meant for the session
	 * reaches the agent through the supervisor, and the servers end
	 * when their clients do, in order, with their records. */
	(void)setsid();

	char name[80];
	const struct policy_mcp_server *srv = server_named(g, c, name);
	if (!srv)
		_exit(1);
	const struct policy *spol = g->srv_pol[srv - g->pol->mcp->servers];

	struct error err = { 0 };
	/* The ids the gateway relays as and, started as root, the monitor
	 * serves it as: the server sandbox's. */
	uid_t uid;
	gid_t gid;
	if (sandbox_host_ids(spol, &uid, &gid, &err) < 0) {
		answer(c, "ERR mcp.servers.%s: %s\n", name, err.msg);
		_exit(1);
	}
	char pins[4200];
	if (srv->pins)
		snprintf(pins, sizeof(pins), "%s", srv->pins);
	else if (pins_default(name, pins, sizeof(pins), &err) < 0) {
		answer(c, "ERR %s\n", err.msg);
		_exit(1);
	}
	char sock[4200] = "";
	int step_up = policy_mcp_steps_up(srv) ? step_up_socket(name, supervisor, sock, sizeof(sock)) : -1;

	/* What inside_workspace judges against: the server's workspace as
	 * its sandbox shows it, at its resolved host path (plan.c). */
	char *ws_real = realpath(spol->sandbox.workspace, NULL);
	int to_srv[2], from_srv[2], rs[2];
	if (pipe2(to_srv, O_CLOEXEC) < 0 || pipe2(from_srv, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rs) < 0) {
		answer(c, "ERR pipe: %s\n", strerror(errno));
		_exit(1);
	}
	pid_t me = getpid();
	pid_t runner = fork();
	if (runner < 0) {
		answer(c, "ERR fork: %s\n", strerror(errno));
		_exit(1);
	}
	if (runner == 0)
		runner_main(g, srv, spol, me, to_srv[0], from_srv[1], rs[1]);
	close(to_srv[0]);
	close(from_srv[1]);
	close(rs[1]);
	struct mcpgw_mon m = MCPGW_MON_INIT;
	m.pins = pins;
	m.workspace = ws_real;
	m.root_from = rs[0];
	m.server = runner;

	int control = -1;
	pid_t gw = mcpgw_gateway_spawn(g->pol, g->cwd, g->home, g->rec_wr, &control, &err);
	if (gw < 0) {
		answer(c, "ERR mcp.servers.%s: the gateway: %s\n", name, err.msg);
		kill(runner, SIGKILL);
		_exit(1);
	}
	/* The server's sandbox and the gateway are started: what the monitor
	 * may not do from here is the keeper's, and it serves the gateway,
	 * whose messages it parses and whose paths it resolves, confined. */
	if (mcpgw_monitor_confine(&m, gw, sock, uid, gid, supervisor, &err) < 0) {
		answer(c, "ERR mcp.servers.%s: the monitor: %s\n", name, err.msg[0] ? err.msg : "its parent is gone");
		kill(gw, SIGKILL);
		kill(runner, SIGKILL);
		_exit(1);
	}
	const struct mcpgw_start st = { .name = name, .pins = pins, .workspace = spol->sandbox.workspace,
					.step_up_path = sock, .step_up_timeout = srv->step_up_timeout ? srv->step_up_timeout : 60,
					.uid = uid, .gid = gid, .client_in = c, .client_out = c,
					.server_in = to_srv[1], .server_out = from_srv[0], .step_up = step_up, .tty = -1 };
	int r = mcpgw_gateway_start(control, &st);
	/* The gateway holds them now: with these copies closed, the
	 * gateway's end is the connection's and the server's input's end. */
	close(c);
	close(to_srv[1]);
	close(from_srv[0]);
	if (step_up >= 0)
		close(step_up);

	/* The gateway's records go to the supervisor straight; the
	 * monitor's own (the gateway's death) too. */
	m.on_record = send_record;
	m.ctx = &rec;
	int served = r < 0 ? -1 : mcpgw_serve(control, &m);
	free(ws_real);
	close(control);
	int end = mcpgw_gateway_end(gw, served, name, &m);
	int rstatus = 0;
	while (waitpid(runner, &rstatus, 0) < 0 && errno == EINTR)
		;
	mcpgw_keeper_end(&m); /* it removes the step-up socket */
	/* One taken over ends the run (mcpgw_reaped). */
	if (end == MCPGW_GW_KILLED)
		_exit(MCPGW_EXIT_GATEWAY_KILLED);
	_exit(end == MCPGW_GW_OK && WIFEXITED(rstatus) && WEXITSTATUS(rstatus) == 0 ? 0 : 1);
}

int mcpgw_accept(struct mcpgw *g)
{
	int c = accept4(g->listen, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return -1;
	if (g->lost) {
		answer(c, "ERR %s\n",
		       g->monitor_killed   ? "a gateway's monitor was killed: no more MCP traffic in this session"
		       : g->gateway_killed ? "a gateway was killed: no more MCP traffic in this session"
					 : "the decision log is gone: no more MCP traffic in this session");
		close(c);
		return -1;
	}
	return c;
}

void mcpgw_conn_start(struct mcpgw *g, int c)
{
	size_t slot = MCPGW_MAX_CONNS;
	for (size_t i = 0; i < MCPGW_MAX_CONNS; i++)
		if (g->conns[i] == 0) {
			slot = i;
			break;
		}
	if (slot == MCPGW_MAX_CONNS) {
		answer(c, "ERR too many MCP connections at once in this session\n");
		return;
	}
	pid_t supervisor = getpid();
	pid_t pid = fork();
	if (pid == 0)
		conn_main(g, c, supervisor);
	if (pid > 0)
		g->conns[slot] = pid;
}

/* A gateway's record into the session's log (none without a log). */
static bool record_to_log(void *ctx, const char *line, size_t len)
{
	struct mcpgw *g = ctx;
	return !g->audit || auditlog_event(g->audit, line, len);
}

bool mcpgw_read(struct mcpgw *g)
{
	bool any = false, eof = false;
	for (;;) {
		int t = mcpgw_records_take(g->rec_rd, record_to_log, g, &eof);
		if (t != MCPGW_RECORDS_REFUSED)
			return any || t > 0;
		/* A record that would split or join lines in the log, or
		 * that the log did not take: the traffic stops, and what
		 * waits behind it is read on. */
		any = true;
		g->lost = true;
		mcpgw_kill(g);
	}
}

/* A monitor ended with status. Fail closed: a gateway taken over may
 * have been one of several the agent opened; none goes on, and no other
 * is started. So for a monitor killed by any signal but the SIGKILL the
 * session's end sends (its filter's SIGSYS: a gateway's message took it
 * over; a crash: one may have). */
void mcpgw_monitor_ended(struct mcpgw *g, int status)
{
	bool gw = WIFEXITED(status) && WEXITSTATUS(status) == MCPGW_EXIT_GATEWAY_KILLED;
	bool mon = WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL;
	if (gw || mon) {
		g->lost = g->gateway_killed = true;
		g->monitor_killed |= mon;
		mcpgw_kill(g);
	}
}

bool mcpgw_reaped(struct mcpgw *g, pid_t pid, int status)
{
	for (size_t i = 0; i < MCPGW_MAX_CONNS; i++)
		if (g->conns[i] == pid) {
			g->conns[i] = 0;
			if (g->ended)
				g->ended(g, status);
			else
				mcpgw_monitor_ended(g, status);
			return true;
		}
	return false;
}

void mcpgw_kill_local(struct mcpgw *g)
{
	for (size_t i = 0; i < MCPGW_MAX_CONNS; i++)
		if (g->conns[i] > 0)
			kill(g->conns[i], SIGKILL);
}

void mcpgw_kill(struct mcpgw *g)
{
	if (g->kill_all)
		g->kill_all(g->remote);
	else
		mcpgw_kill_local(g);
}

void mcpgw_stop_conns(struct mcpgw *g)
{
	/* The clients went with the sandbox: each gateway closes its
	 * server's input, the server exits and its sandbox's log is sealed.
	 * Bounded: a server that ignores the end of its input is killed. */
	for (int round = 0; round < 100; round++) {
		bool left = false;
		for (size_t i = 0; i < MCPGW_MAX_CONNS; i++) {
			if (g->conns[i] <= 0)
				continue;
			int st = 0;
			if (waitpid(g->conns[i], &st, WNOHANG) == g->conns[i])
				(void)mcpgw_reaped(g, g->conns[i], st);
			else
				left = true;
		}
		if (g->rec_rd >= 0)
			mcpgw_read(g);
		if (!left)
			break;
		if (g->rec_rd >= 0) {
			struct pollfd p = { .fd = g->rec_rd, .events = POLLIN };
			(void)poll(&p, 1, 50);
		} else {
			usleep(50000);
		}
	}
	for (size_t i = 0; i < MCPGW_MAX_CONNS; i++)
		if (g->conns[i] > 0) {
			kill(g->conns[i], SIGKILL);
			waitpid(g->conns[i], NULL, 0);
			g->conns[i] = 0;
		}
}

void mcpgw_remove_socket(struct mcpgw *g)
{
	if (g->sock[0])
		unlink(g->sock);
	if (g->dir[0])
		rmdir(g->dir);
	g->sock[0] = g->dir[0] = '\0';
}

void mcpgw_stop(struct mcpgw *g)
{
	if (g->listen >= 0)
		close(g->listen);
	g->listen = -1;
	if (g->rec_wr >= 0)
		close(g->rec_wr);
	g->rec_wr = -1;
	if (g->stop_all) {
		g->stop_all(g->remote);
		g->stop_all = NULL; /* the helper removed the socket */
		g->sock[0] = g->dir[0] = '\0';
	} else {
		mcpgw_stop_conns(g);
	}
	if (g->rec_rd >= 0) {
		mcpgw_read(g);
		close(g->rec_rd);
	}
	g->rec_rd = -1;
	mcpgw_remove_socket(g);
	for (size_t i = 0; i < g->n_srv; i++)
		policy_free(g->srv_pol[i]);
	free(g->srv_pol);
	g->srv_pol = NULL;
	g->n_srv = 0;
}
