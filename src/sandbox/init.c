/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pid 1 of the sandbox: starts the command, reaps every zombie, forwards
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 to it, and exits with its
 * status (128+N when it died by signal N). When the command exits the
 * rest of the namespace is killed: nothing outlives the run. When the
 * supervisor goes away (its end of the socket closes) everything dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "util/cleanup.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static void noop_handler(int sig)
{
	(void)sig;
}

/* execvpe() searches the caller's PATH, not envp's: search envp's. */
static void exec_in_path(char *const argv[], char *const envp[])
{
	const char *cmd = argv[0];
	if (strchr(cmd, '/')) {
		execve(cmd, argv, envp);
		return;
	}
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	int saved = ENOENT;
	while (*path) {
		size_t n = strcspn(path, ":");
		char full[PATH_MAX];
		if (n == 0)
			snprintf(full, sizeof(full), "%s", cmd);
		else
			snprintf(full, sizeof(full), "%.*s/%s", (int)n, path, cmd);
		execve(full, argv, envp);
		if (errno == EACCES || errno == EPERM)
			saved = errno;
		else if (errno != ENOENT && errno != ENOTDIR)
			return;
		path += n;
		if (*path == ':')
			path++;
	}
	errno = saved;
}

__attribute__((noreturn)) static void run_command(const struct sandbox_plan *plan, int pty_slave)
{
	/* Dumpable again, as execve would make it anyway: so a tracing
	 * supervisor can read the path of the command's first execve. */
	prctl(PR_SET_DUMPABLE, 1);
	sigset_t none;
	sigemptyset(&none);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		signal(forwarded[i], SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* A new session: the command has no controlling terminal of the
	 * host's, so it cannot inject input into it. */
	if (setsid() < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	if (pty_slave >= 0) {
		/* airlock's own pty becomes the controlling terminal. */
		if (ioctl(pty_slave, TIOCSCTTY, 0) < 0)
			_exit(SANDBOX_EXIT_SETUP_CHILD);
		for (int fd = 0; fd <= 2; fd++)
			if (isatty(fd) && dup2(pty_slave, fd) < 0)
				_exit(SANDBOX_EXIT_SETUP_CHILD);
	}
	if (chdir(plan->cwd) < 0 && chdir("/") < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	/* One more Landlock layer, for the command alone: its init (in the
	 * outer layer) is then out of reach of its signals. */
	if (landlock_scope_self() < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	/* Only 0, 1, 2 cross into the command. */
	if (syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) < 0)
		for (int fd = 3; fd < 65536; fd++)
			close(fd);

	exec_in_path(plan->argv, plan->envp);
	int e = errno;
	dprintf(2, "airlock: cannot execute %s: %s\n", plan->argv[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

static int status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 125;
}

__attribute__((noreturn)) void init_main(const struct sandbox_plan *plan, int sync_fd, int pty_slave)
{
	prctl(PR_SET_NAME, "airlock-init");

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++) {
		sigaddset(&mask, forwarded[i]);
		/* pid 1 drops signals it has no handler for: install one so
		 * signals from the supervisor are not lost. */
		struct sigaction sa = { .sa_handler = noop_handler };
		sigaction(forwarded[i], &sa, NULL);
	}
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);

	pid_t cmd = fork();
	if (cmd < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	if (cmd == 0)
		run_command(plan, pty_slave);

	/* Init keeps no handle on the host's terminal or files. */
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		for (int fd = 0; fd <= 2; fd++)
			dup2(devnull, fd);
		close(devnull);
	}
	if (pty_slave >= 0)
		close(pty_slave);

	int cmd_status = -1;
	for (;;) {
		struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN }, { .fd = sync_fd, .events = POLLIN } };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & (POLLHUP | POLLERR | POLLIN))
			break; /* the supervisor is gone: end everything */
		if (!(pfd[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(cmd, (int)si.ssi_signo);
			continue;
		}
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == cmd)
				cmd_status = st;
		if (cmd_status != -1)
			break;
	}

	/* Nothing outlives the command. */
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	if (cmd_status == -1)
		_exit(137);
	char msg[1 + sizeof(int)];
	msg[0] = PROTO_EXIT;
	memcpy(msg + 1, &cmd_status, sizeof(int));
	(void)!send(sync_fd, msg, sizeof(msg), MSG_NOSIGNAL);
	_exit(status_code(cmd_status));
}
