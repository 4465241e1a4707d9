/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock's helper executables (airlock-proxy, airlock-audit) live beside
 * airlock itself; the supervisor starts them with only the fds it names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/internal.h"

int sibling_path(const char *name, char *out, size_t len, struct error *err)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return error_sys(err, errno, "cannot find airlock's own executable");
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	if ((size_t)snprintf(out, len, "%s/%s", self, name) >= len)
		return error_set(err, ENAMETOOLONG, "path too long");
	if (access(out, X_OK) < 0)
		return error_sys(err, errno, "%s is missing", out);
	return 0;
}

pid_t sibling_spawn(char *const argv[], int keep_a, int keep_b)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* Only the two fds named, and stdio (in from /dev/null, out to it;
	 * stderr stays for fatal messages), cross into the helper. */
	fcntl(keep_a, F_SETFD, 0);
	fcntl(keep_b, F_SETFD, 0);
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(argv[0], argv);
	_exit(127);
}
