/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The floor of any out-of-process MCP gateway, for bench/mcp: a process
 * between client and server that forwards bytes both ways and does
 * nothing else (no parsing, no policy, no records). What `airlock mcp
 * run` costs above this is the gateway's own work; what this costs above
 * a direct connection is the extra hop itself.
 *
 *   mcp-relay CMD ARGS...
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int put(int fd, const char *p, ssize_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, (size_t)n);
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int in[2], out[2];
	if (argc < 2 || pipe(in) < 0 || pipe(out) < 0)
		return 2;
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	signal(SIGPIPE, SIG_IGN);
	static char buf[65536];
	struct pollfd p[2] = { { .fd = 0, .events = POLLIN }, { .fd = out[0], .events = POLLIN } };
	for (;;) {
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents) {
			ssize_t n = read(0, buf, sizeof(buf));
			if (n <= 0) {
				close(in[1]);
				p[0].fd = -1;
			} else if (put(in[1], buf, n) < 0) {
				break;
			}
		}
		if (p[1].revents) {
			ssize_t n = read(out[0], buf, sizeof(buf));
			if (n <= 0 || put(1, buf, n) < 0)
				break;
		}
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
