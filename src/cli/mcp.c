/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock mcp run: a drop-in stdio MCP server command that runs the real
 * server in the sandbox and mediates every message (docs/mcp.md).
 * airlock mcp pins: list, diff and approve pinned tool definitions.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "mcp/gateway.h"
#include "mcp/mcp.h"
#include "policy/mcp.h"
#include "sandbox/auditlog.h"
#include "sandbox/mcpgw.h"
#include "sandbox/sandbox.h"
#include "util/file.h"
#include "util/statedir.h"

static const char mcp_usage[] =
	"usage: airlock mcp run [--policy FILE] [--server NAME] [--pins FILE] [--audit DIR | --no-audit]\n"
	"                       [-- CMD [ARGS...]]\n"
	"       airlock mcp pins list|diff|approve [--policy FILE] [--server NAME] [--pins FILE] [TOOL...]\n"
	"       airlock mcp connect NAME   (inside airlock run: see 'airlock mcp connect --help')\n"
	"       airlock approve|deny [--socket PATH] TOKEN\n"
	"\n"
	"run: a stdio MCP server command for any MCP client. Starts CMD (else the\n"
	"policy's mcp.servers.NAME.command) in the sandbox the policy describes, and\n"
	"relays its JSON-RPC messages, each checked against mcp.servers.NAME: tools\n"
	"the policy does not allow vanish from tools/list and their calls return an\n"
	"error result; results holding secrets or injection markers are withheld or\n"
	"redacted; every decision goes to the signed decision log.\n"
	"\n"
	"pins: tool definitions are pinned (SHA-256) the first time they are listed;\n"
	"a changed definition blocks its tool until 'pins approve TOOL' (or every\n"
	"changed tool without TOOL). 'pins diff' shows the old and new definitions.\n"
	"\n"
	"  -p, --policy FILE  the policy (default: the built-in default, which has no\n"
	"                     mcp section: every tool is denied)\n"
	"  -s, --server NAME  the mcp.servers entry (default: the only one)\n"
	"  -P, --pins FILE    the pin file (default: the server's pins, else\n"
	"                     $XDG_STATE_HOME/airlock/mcp/NAME.pins.json)\n"
	"  -a, --audit DIR    write the gateway's signed decision log in DIR\n"
	"  -A, --no-audit     no decision log\n"
	"  -T, --step-up-timeout SECONDS\n"
	"                     how long a step_up call waits for a person (default 60),\n"
	"                     then it is denied\n"
	"\n"
	"step_up: the call waits; the gateway prints a TOKEN on stderr (and asks on\n"
	"the terminal when it has one); 'airlock approve TOKEN' or 'airlock deny\n"
	"TOKEN' from another terminal decides (--socket PATH when several gateways\n"
	"run; 'airlock approve --list' shows every waiting call and its socket).\n"
	"\n"
	"Exit status of run: the server's; 2 for a bad command line or policy; 125\n"
	"when the gateway or the sandbox could not start.\n";

struct mcp_opts {
	const char *policy_file, *server, *pins, *audit_dir, *socket;
	bool no_audit;
	unsigned timeout;
};

static int parse_opts(int argc, char **argv, struct mcp_opts *o)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' }, { "server", required_argument, NULL, 's' },
		{ "pins", required_argument, NULL, 'P' },   { "audit", required_argument, NULL, 'a' },
		{ "no-audit", no_argument, NULL, 'A' },     { "help", no_argument, NULL, 'h' },
		{ "step-up-timeout", required_argument, NULL, 'T' }, { "socket", required_argument, NULL, 'S' },
		{ 0 },
	};
	int c;
	optind = 1;
	o->timeout = 60;
	while ((c = getopt_long(argc, argv, "+p:s:P:a:AhT:S:", opts, NULL)) != -1) {
		switch (c) {
		case 'T': {
			char *end;
			unsigned long t = strtoul(optarg, &end, 10);
			if (*end || !t || t > 86400) {
				fprintf(stderr, "airlock mcp: --step-up-timeout: %s is not 1..86400 seconds\n", optarg);
				return -1;
			}
			o->timeout = (unsigned)t;
			break;
		}
		case 'S':
			o->socket = optarg;
			break;
		case 'p':
			o->policy_file = optarg;
			break;
		case 's':
			o->server = optarg;
			break;
		case 'P':
			o->pins = optarg;
			break;
		case 'a':
			o->audit_dir = optarg;
			break;
		case 'A':
			o->no_audit = true;
			break;
		case 'h':
			fputs(mcp_usage, stdout);
			return 1;
		default:
			fputs(mcp_usage, stderr);
			return -1;
		}
	}
	return 0;
}

/* The server's entry (NULL when the policy has none: every tool denied)
 * and its name. */
static int pick_server(const struct policy *pol, const struct mcp_opts *o, const struct policy_mcp_server **srv,
		       const char **name)
{
	*srv = NULL;
	if (o->server) {
		*srv = policy_mcp_server(pol->mcp, o->server);
		if (!*srv) {
			fprintf(stderr, "airlock mcp: %s: no mcp.servers.%s in the policy\n", pol->file, o->server);
			return -1;
		}
		*name = o->server;
		return 0;
	}
	if (pol->mcp && pol->mcp->n_servers == 1) {
		*srv = &pol->mcp->servers[0];
		*name = (*srv)->name;
		return 0;
	}
	if (pol->mcp && pol->mcp->n_servers > 1) {
		fprintf(stderr, "airlock mcp: %s: the policy has %zu servers; say which with --server NAME\n", pol->file,
			pol->mcp->n_servers);
		return -1;
	}
	*name = "default";
	return 0;
}

static int pins_path(const struct mcp_opts *o, const struct policy_mcp_server *srv, const char *name, char *out,
		     size_t len, bool make_dir)
{
	if (o->pins) {
		snprintf(out, len, "%s", o->pins);
		return 0;
	}
	if (srv && srv->pins) {
		snprintf(out, len, "%s", srv->pins);
		return 0;
	}
	char dir[4096];
	struct error serr = { 0 };
	if (statedir_path("mcp", dir, sizeof(dir), &serr) < 0) {
		fprintf(stderr, "airlock mcp: the pin file: %s; or give --pins FILE\n", serr.msg);
		return -1;
	}
	if (make_dir) {
		struct error err = { 0 };
		if (file_mkdir_p(dir, 0700, &err) < 0) {
			fprintf(stderr, "airlock mcp: %s\n", err.msg);
			return -1;
		}
	}
	snprintf(out, len, "%s/%s.pins.json", dir, name);
	return 0;
}

/* A gateway's record into its log; without a log, taken and dropped. */
static bool record_to_log(void *ctx, const char *line, size_t len)
{
	return !ctx || auditlog_event(ctx, line, len);
}

/* The server's sandbox, supervised by a child of this process, its
 * stdin and stdout the gateway's pipes (to_srv, from_srv: this side's
 * ends stay open, the server's are closed here); its pid, or -1 said.
 * The sandbox's "/" will come on *root_from, once it is built: paths are
 * judged as the server sees them (mcpgw_mon). */
static pid_t start_server(struct sandbox_opts *so, const struct auditlog *log, int to_srv[2], int from_srv[2],
			  int *root_from)
{
	int rs[2];
	if (pipe2(to_srv, O_CLOEXEC) < 0 || pipe2(from_srv, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rs) < 0) {
		perror("airlock mcp: pipe");
		return -1;
	}
	so->report_root = true;
	so->root_to = rs[1];
	pid_t pid = fork();
	if (pid < 0) {
		perror("airlock mcp: fork");
		return -1;
	}
	if (pid == 0) {
		/* The server's stdin and stdout are the gateway's pipes; its
		 * stderr is the client's (logging passes through). */
		if (dup2(to_srv[0], STDIN_FILENO) < 0 || dup2(from_srv[1], STDOUT_FILENO) < 0)
			_exit(SANDBOX_EXIT_SETUP);
		/* This process supervises rather than execs: close-on-exec
		 * does not close the gateway's ends here, and a write end left
		 * open would keep the server from ever seeing the end of its
		 * input. */
		close(to_srv[0]);
		close(to_srv[1]);
		close(from_srv[0]);
		close(from_srv[1]);
		close(rs[0]);
		/* The gateway's log is the gateway's: the server's side of the
		 * fork keeps no way to write to it. */
		if (log->control >= 0)
			close(log->control);
		if (log->events >= 0)
			close(log->events);
		signal(SIGPIPE, SIG_DFL);
		int code = 0;
		struct error serr = { 0 };
		if (sandbox_run(so, &code, &serr) < 0) {
			fprintf(stderr, "airlock: %s\n", serr.msg);
			_exit(SANDBOX_EXIT_SETUP);
		}
		_exit(code);
	}
	close(to_srv[0]);
	close(from_srv[1]);
	close(rs[1]);
	*root_from = rs[0];
	return pid;
}

/* A server whose tools step up needs someone to ask: the control socket
 * (--socket, or one per server and process in the user's control
 * directory), and the terminal when there is one (an MCP client seldom
 * gives it one). sock (cap bytes) keeps the socket's path; the listener
 * in *listener and the terminal in *tty, each -1 when none. */
static void open_step_up(const struct mcp_opts *o, const char *name, char *sock, size_t cap, int *listener, int *tty)
{
	char rd[4096];
	struct error derr = { 0 };
	if (o->socket)
		snprintf(sock, cap, "%s", o->socket);
	else if (mcp_control_dir(rd, sizeof(rd)) == 0 && file_mkdir_p(rd, 0700, &derr) == 0)
		snprintf(sock, cap, "%s/%s-%d.sock", rd, name, (int)getpid());
	if (sock[0] && (*listener = mcp_control_listen(sock, &derr)) < 0) {
		fprintf(stderr, "airlock mcp: %s\n", derr.msg);
		sock[0] = '\0';
	}
	*tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
}

/* The gateway, airlock-mcp-gateway, relays between the client (our
 * stdin and stdout) and the server in a sandbox of its own: the client's
 * JSON-RPC is parsed there, never here (proto/mcpgw.h, "stdio"). This
 * process is its monitor: it writes the pins it changed, answers whether
 * a path is inside the workspace, and takes its records into the log.
 * The gateway's outcome (MCPGW_GW_*), with the server told to stop
 * unless the gateway ended cleanly. */
static int relay(const struct policy *pol, const struct policy_mcp_server *srv, const char *name,
		 const struct mcp_opts *o, struct mcpgw_mon *m, int to_srv, int from_srv)
{
	const char *pins = m->pins;
	pid_t server = m->server;
	struct error err = { 0 };
	uid_t uid;
	gid_t gid;
	char cwd[4096];
	int rs[2], control = -1;
	pid_t gw = -1;
	int r = sandbox_host_ids(pol, &uid, &gid, &err);
	if (r >= 0 && !getcwd(cwd, sizeof(cwd)))
		r = error_sys(&err, errno, "getcwd");
	if (r >= 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rs) < 0)
		r = error_sys(&err, errno, "socketpair");
	if (r >= 0) {
		r = gw = mcpgw_gateway_spawn(pol, cwd, cli_home(), rs[1], &control, &err);
		close(rs[1]);
		if (r < 0)
			close(rs[0]);
	}
	if (r < 0) {
		fprintf(stderr, "airlock mcp: %s\n", err.msg);
		kill(server, SIGTERM);
		return MCPGW_GW_FAILED;
	}
	char sock[4096] = "";
	int listener = -1, tty = -1;
	if (policy_mcp_steps_up(srv))
		open_step_up(o, name, sock, sizeof(sock), &listener, &tty);
	/* The workspace as the server's sandbox shows it, at its resolved
	 * host path (plan.c). */
	char *ws_real = realpath(pol->sandbox.workspace, NULL);
	/* Opened before: the confined process opens nothing. */
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* As a session's monitor (sandbox/mcpgw.c): what this process may
	 * not do from here (write the pins file, signal the gateway or the
	 * server) is the pins keeper's, and it serves the gateway, and seals
	 * its log, confined (as root, as the server sandbox's uid), its
	 * environment, with the client's secrets, wiped. */
	if (mcpgw_monitor_confine(m, gw, sock, uid, gid, 0, &err) < 0) {
		fprintf(stderr, "airlock mcp: %s\n", err.msg);
		r = -1;
	}
	const struct mcpgw_start st = { .name = name, .pins = pins, .workspace = pol->sandbox.workspace,
					.step_up_path = sock, .step_up_timeout = o->timeout, .uid = uid, .gid = gid,
					.stdio = true, .client_in = STDIN_FILENO, .client_out = STDOUT_FILENO,
					.server_in = to_srv, .server_out = from_srv, .step_up = listener, .tty = tty };
	if (r >= 0)
		r = mcpgw_gateway_start(control, &st);
	if (listener >= 0)
		close(listener);
	if (tty >= 0)
		close(tty);
	/* Ours no more: the server sees the end of its input when the
	 * gateway closes its copy, and the client hears only the gateway. */
	close(to_srv);
	close(from_srv);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		close(devnull);
	}
	m->workspace = ws_real;
	m->rec_rd = rs[0];
	int served = r < 0 ? -1 : mcpgw_serve(control, m);
	m->workspace = NULL;
	free(ws_real);
	close(control);
	int end = mcpgw_gateway_end(gw, served, name, m);
	close(rs[0]);
	if (m->keeper >= 0)
		mcpgw_keeper_end(m); /* it removes the step-up socket */
	else if (sock[0])
		unlink(sock);
	if (served == MCPGW_SERVE_RECORD)
		fprintf(stderr, "airlock mcp: %s: a decision could not reach the log; the gateway was stopped (fail closed)\n",
			name);
	else if (end == MCPGW_GW_KILLED)
		fprintf(stderr, "airlock mcp: %s: the gateway was killed or broke its protocol; MCP traffic ended "
				"(fail closed)\n",
			name);
	return end;
}

static int cmd_run(int argc, char **argv)
{
	struct mcp_opts o = { 0 };
	int r = parse_opts(argc, argv, &o);
	if (r)
		return r > 0 ? 0 : SANDBOX_EXIT_USAGE;
	if (o.audit_dir && o.no_audit) {
		fprintf(stderr, "airlock mcp run: --audit DIR and --no-audit contradict each other\n");
		return SANDBOX_EXIT_USAGE;
	}
	struct error err = { 0 };
	_cleanup_policy_ struct policy *pol = NULL;
	if (cli_load_policy(o.policy_file, &pol, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	if (cli_no_audit_contradicts(pol, o.no_audit))
		return SANDBOX_EXIT_USAGE;
	const struct policy_mcp_server *srv;
	const char *name;
	if (pick_server(pol, &o, &srv, &name) < 0)
		return SANDBOX_EXIT_USAGE;
	char *const *cmd = optind < argc ? argv + optind : srv ? srv->command : NULL;
	if (!cmd) {
		fprintf(stderr, "airlock mcp run: no server command: give -- CMD ARGS or mcp.servers.%s.command\n",
			name);
		return SANDBOX_EXIT_USAGE;
	}
	char pins[4096];
	if (pins_path(&o, srv, name, pins, sizeof(pins), true) < 0)
		return SANDBOX_EXIT_USAGE;

	/* The gateway's own decision log (the sandboxed server's run keeps
	 * its own, as any airlock run does). */
	struct auditlog log = AUDITLOG_INIT;
	char dir[4096];
	bool is_default = false;
	r = auditlog_dir(o.audit_dir, o.no_audit, pol, dir, sizeof(dir), &is_default, &err);
	if (r < 0 || (r > 0 && (auditlog_start(pol, dir, &log, &err) < 0 || auditlog_ready(&log, &err) < 0))) {
		fprintf(stderr, "airlock mcp: %s\n", err.msg);
		if (log.pid > 0) {
			struct error aerr = { 0 };
			(void)auditlog_finish(&log, SANDBOX_EXIT_SETUP, &aerr);
		}
		return SANDBOX_EXIT_SETUP;
	}
	bool have_log = r > 0;
	/* Two logs with the same agent name: each is named by what it holds,
	 * at the start and (the gateway's) at the end. */
	char server_label[512];
	snprintf(server_label, sizeof(server_label),
		 "airlock mcp: %s: the server sandbox's log (its files, network and processes)", name);
	if (have_log)
		fprintf(stderr, "airlock mcp: %s: the gateway's log (MCP messages, tools, step-ups): %s\n", name,
			log.path);

	int to_srv[2], from_srv[2];
	/* A client that goes away must not kill the gateway mid-record. */
	signal(SIGPIPE, SIG_IGN);
	struct sandbox_opts so = { .policy = pol, .argv = cmd, .audit_dir = o.audit_dir, .no_audit = o.no_audit,
				   .log_label = server_label };
	int root_from = -1;
	pid_t pid = start_server(&so, &log, to_srv, from_srv, &root_from);
	if (pid < 0)
		return SANDBOX_EXIT_SETUP;

	struct mcpgw_mon m = MCPGW_MON_INIT;
	m.pins = pins;
	m.server = pid;
	m.root_from = root_from;
	m.on_record = record_to_log;
	m.ctx = have_log ? &log : NULL;
	int end = relay(pol, srv, name, &o, &m, to_srv[1], from_srv[0]);
	close(root_from);
	if (m.root >= 0)
		close(m.root);
	int status = 0, code;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (end != MCPGW_GW_OK)
		code = SANDBOX_EXIT_SETUP;
	if (have_log) {
		struct error aerr = { 0 };
		if (auditlog_finish(&log, code, &aerr) < 0) {
			fprintf(stderr, "airlock mcp: %s\n", aerr.msg);
			code = SANDBOX_EXIT_SETUP;
		} else
			fprintf(stderr, "airlock mcp: %s: the gateway's log, sealed: %s\n", name, log.path);
	}
	/* Confined since relay (the monitor's filter): no exit handler runs
	 * here, as none may (a sanitizer's leak check, which would trace
	 * this process, least of all); the gateway ends the same way. */
	fflush(stderr);
	_exit(code);
}

/* No TOOL arguments: every tool; else the tools named. */
static bool tool_named(const char *tool, char **argv, int from, int argc)
{
	if (from >= argc)
		return true;
	for (int a = from; a < argc; a++)
		if (!strcmp(argv[a], tool))
			return true;
	return false;
}

static int cmd_pins(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "list") && strcmp(argv[1], "diff") && strcmp(argv[1], "approve"))) {
		fputs(mcp_usage, stderr);
		return SANDBOX_EXIT_USAGE;
	}
	const char *verb = argv[1];
	struct mcp_opts o = { 0 };
	int r = parse_opts(argc - 1, argv + 1, &o);
	if (r)
		return r > 0 ? 0 : SANDBOX_EXIT_USAGE;
	int first_tool = optind + 1;
	struct error err = { 0 };
	_cleanup_policy_ struct policy *pol = NULL;
	const struct policy_mcp_server *srv = NULL;
	const char *name = o.server ? o.server : "default";
	if (!o.pins) {
		if (cli_load_policy(o.policy_file, &pol, &err) < 0) {
			fprintf(stderr, "airlock: %s\n", err.msg);
			return SANDBOX_EXIT_USAGE;
		}
		if (pick_server(pol, &o, &srv, &name) < 0)
			return SANDBOX_EXIT_USAGE;
	}
	char path[4096];
	if (pins_path(&o, srv, name, path, sizeof(path), false) < 0)
		return SANDBOX_EXIT_USAGE;
	struct mcp_pins p;
	if (mcp_pins_load(&p, path, &err) < 0) {
		fprintf(stderr, "airlock mcp pins: %s\n", err.msg);
		mcp_pins_free(&p);
		return 1;
	}
	int rc = 0;
	if (!strcmp(verb, "list")) {
		for (size_t i = 0; i < p.n; i++)
			printf("%s %s%s\n", p.v[i].sha256, p.v[i].tool, p.v[i].pending_sha256[0] ? " (changed: blocked)" : "");
	} else if (!strcmp(verb, "diff")) {
		for (size_t i = 0; i < p.n; i++) {
			const struct mcp_pin *pin = &p.v[i];
			if (!pin->pending_sha256[0] || !tool_named(pin->tool, argv, first_tool, argc))
				continue;
			printf("tool %s\n- sha256 %s\n- %s\n+ sha256 %s\n+ %s\n", pin->tool, pin->sha256, pin->definition,
			       pin->pending_sha256, pin->pending_definition);
		}
	} else {
		size_t approved = 0;
		for (size_t i = 0; i < p.n; i++) {
			struct mcp_pin *pin = &p.v[i];
			if (!tool_named(pin->tool, argv, first_tool, argc) || !mcp_pin_approve(pin))
				continue;
			printf("approved %s %s\n", pin->sha256, pin->tool);
			approved++;
		}
		if (!approved) {
			fprintf(stderr, "airlock mcp pins: no changed definition to approve%s\n",
				first_tool < argc ? " among the tools named" : "");
			rc = 1;
		} else if (mcp_pins_save(&p, &err) < 0) {
			fprintf(stderr, "airlock mcp pins: %s\n", err.msg);
			rc = 1;
		}
	}
	mcp_pins_free(&p);
	return rc;
}

/* One command to the control socket at path; its answer into out (empty
 * when the gateway answered nothing). -1 with a message when it could
 * not be asked. */
static int control_ask(const char *verb, const char *path, const char *cmd, char *out, size_t len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "airlock %s: socket path too long\n", verb);
		return -1;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "airlock %s: %s: %s\n", verb, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ssize_t n = -1;
	size_t got = 0;
	if (send(fd, cmd, strlen(cmd), MSG_NOSIGNAL) >= 0)
		while (got + 1 < len && (n = recv(fd, out + got, len - 1 - got, 0)) > 0)
			got += (size_t)n;
	close(fd);
	out[got] = '\0';
	if (n < 0) {
		fprintf(stderr, "airlock %s: no answer from %s\n", verb, path);
		return -1;
	}
	return 0;
}

/* airlock approve|deny --list: every call waiting in the run directory's
 * gateways (the standalone ones and every session's), a line each:
 * SOCKET TOKEN TOOL. */
static int list_waiting(const char *verb)
{
	char rd[4096];
	if (mcp_control_dir(rd, sizeof(rd)) < 0) {
		fprintf(stderr, "airlock %s: neither XDG_STATE_HOME nor HOME is an absolute path\n", verb);
		return SANDBOX_EXIT_USAGE;
	}
	DIR *d = opendir(rd);
	struct dirent *de;
	int rc = 0;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".sock"))
			continue;
		char path[4400], out[4096];
		snprintf(path, sizeof(path), "%s/%s", rd, de->d_name);
		if (control_ask(verb, path, "list\n", out, sizeof(out)) < 0) {
			rc = 1;
			continue;
		}
		for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
			printf("%s %s\n", path, line);
	}
	if (d)
		closedir(d);
	return rc;
}

/* airlock approve|deny [--socket PATH] TOKEN, or --list */
int cli_mcp_decide(int argc, char **argv)
{
	bool approve = !strcmp(argv[0], "approve");
	if (argc == 2 && !strcmp(argv[1], "--list"))
		return list_waiting(argv[0]);
	struct mcp_opts o = { 0 };
	int r = parse_opts(argc, argv, &o);
	if (r)
		return r > 0 ? 0 : SANDBOX_EXIT_USAGE;
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: airlock %s [--socket PATH] TOKEN\n", argv[0]);
		return SANDBOX_EXIT_USAGE;
	}
	char path[4096];
	if (o.socket) {
		snprintf(path, sizeof(path), "%s", o.socket);
	} else {
		/* The only gateway's socket; with several, say which. */
		char rd[4096];
		if (mcp_control_dir(rd, sizeof(rd)) < 0) {
			fprintf(stderr, "airlock %s: give --socket PATH\n", argv[0]);
			return SANDBOX_EXIT_USAGE;
		}
		DIR *d = opendir(rd);
		int found = 0;
		struct dirent *de;
		while (d && (de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (l > 5 && !strcmp(de->d_name + l - 5, ".sock")) {
				snprintf(path, sizeof(path), "%s/%s", rd, de->d_name);
				found++;
			}
		}
		if (d)
			closedir(d);
		if (found != 1) {
			fprintf(stderr, "airlock %s: %s gateway waiting in %s; give --socket PATH\n", argv[0],
				found ? "more than one" : "no", rd);
			return 1;
		}
	}
	char cmd[160], out[4096];
	snprintf(cmd, sizeof(cmd), "%s %.100s\n", approve ? "approve" : "deny", argv[optind]);
	if (control_ask(argv[0], path, cmd, out, sizeof(out)) < 0)
		return 1;
	if (!out[0]) {
		fprintf(stderr, "airlock %s: no answer from %s\n", argv[0], path);
		return 1;
	}
	fputs(out, strncmp(out, "error", 5) ? stdout : stderr);
	return strncmp(out, "error", 5) ? 0 : 1;
}

int cli_mcp(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(mcp_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? SANDBOX_EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pins"))
		return cmd_pins(argc - 1, argv + 1);
	if (!strcmp(argv[1], "connect"))
		return cli_mcp_connect(argc - 1, argv + 1);
	fprintf(stderr, "airlock mcp: unknown command '%s'\n\n%s", argv[1], mcp_usage);
	return SANDBOX_EXIT_USAGE;
}
