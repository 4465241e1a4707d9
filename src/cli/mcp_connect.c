/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock mcp connect NAME: the MCP server command inside an `airlock run`
 * session. Relays stdin and stdout to the session's gateway
 * (src/sandbox/mcpgw.h), which starts mcp.servers.NAME in a sandbox of
 * its own and checks every message. This side holds no policy and
 * decides nothing: it cannot, since it runs where the agent does.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sandbox/mcpgw.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"

static const char connect_usage[] =
	"usage: airlock mcp connect NAME\n"
	"\n"
	"Inside an `airlock run` session: the stdio MCP server command for the\n"
	"server the session's policy declares as mcp.servers.NAME. The session's\n"
	"gateway starts that server in a sandbox of its own and mediates every\n"
	"message; this command only relays them (through " MCPGW_SOCKET ").\n"
	"\n"
	"Exit status: 0 when the client ended the session; 1 when the gateway or\n"
	"the server ended it first (the server died, or the decision log is\n"
	"gone: fail closed), or refused NAME; 2 for a bad command line.\n";

static bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

int cli_mcp_connect(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(connect_usage, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-' || !argv[1][0]) {
		fputs(connect_usage, stderr);
		return SANDBOX_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strlen(name) > 64 || strchr(name, '\n')) {
		fprintf(stderr, "airlock mcp connect: '%s' is not a server name\n", name);
		return SANDBOX_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	memcpy(a.sun_path, MCPGW_SOCKET, sizeof(MCPGW_SOCKET));
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr,
			"airlock mcp connect: no MCP gateway at %s (%s): this command runs inside `airlock run` "
			"with a policy that declares mcp.servers; outside a session use `airlock mcp run`\n",
			MCPGW_SOCKET, strerror(errno));
		return 1;
	}
	char line[80];
	int n = snprintf(line, sizeof(line), "%s\n", name);
	char ans[512];
	if (!write_all(s, line, (size_t)n) || !mcpgw_read_line(s, ans, sizeof(ans))) {
		fprintf(stderr, "airlock mcp connect: the gateway closed the connection before answering\n");
		return 1;
	}
	if (strcmp(ans, "OK")) {
		fprintf(stderr, "airlock mcp connect: %s: %s\n", name, strncmp(ans, "ERR ", 4) ? ans : ans + 4);
		return 1;
	}

	bool in_open = true;
	char buf[65536];
	for (;;) {
		struct pollfd p[2] = { { .fd = in_open ? STDIN_FILENO : -1, .events = POLLIN },
				       { .fd = s, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("airlock mcp connect: poll");
			return 1;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(s, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				if (!in_open)
					return 0;
				/* Fail closed: the client is told by the end of
				 * its server's output, and by our status. */
				fprintf(stderr, "airlock mcp connect: %s: the gateway ended the session (the server "
						"or its sandbox stopped, or the decision log is gone)\n",
					name);
				return 1;
			}
			if (!write_all(STDOUT_FILENO, buf, (size_t)r))
				return 1;
		}
		if (in_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				/* The client is done: the gateway closes the
				 * server's input and we wait for the rest. */
				in_open = false;
				(void)shutdown(s, SHUT_WR);
				continue;
			}
			if (!write_all(s, buf, (size_t)r)) {
				fprintf(stderr, "airlock mcp connect: %s: the gateway ended the session\n", name);
				return 1;
			}
		}
	}
}
