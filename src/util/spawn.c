/* SPDX-License-Identifier: Apache-2.0 */
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Whether entry "NAME=..." names one of names (or is replaced by one of
 * sets, "NAME=value"). */
static bool env_named(const char *entry, const char *const *names, bool with_value)
{
	size_t len = strcspn(entry, "=");
	for (; names && *names; names++) {
		size_t n = with_value ? strcspn(*names, "=") : strlen(*names);
		if (n == len && !strncmp(entry, *names, len))
			return true;
	}
	return false;
}

/* environ without the names unset or set, then the ones set. */
static char **child_env(const struct spawn *s)
{
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	for (const char *const *e = s->set_env; e && *e; e++)
		n++;
	char **env = calloc(n + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (char **e = environ; *e; e++)
		if (!env_named(*e, s->unset_env, false) && !env_named(*e, s->set_env, true))
			env[k++] = *e;
	for (const char *const *e = s->set_env; e && *e; e++)
		env[k++] = (char *)*e;
	env[k] = NULL;
	return env;
}

pid_t spawn_reader(const struct spawn *s, int *out_fd)
{
	int p[2], null = -1, r;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if ((s->stdin_fd < 0 || s->stderr_null) && (null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char **env = child_env(s);
	pid_t pid = -1;
	r = env ? 0 : ENOMEM;
	if (!r && (r = posix_spawn_file_actions_init(&fa)) == 0) {
		if (!(r = posix_spawnattr_init(&at))) {
			sigset_t none, pipe;
			sigemptyset(&none);
			sigemptyset(&pipe);
			sigaddset(&pipe, SIGPIPE);
			r = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
			if (!r)
				r = posix_spawnattr_setsigmask(&at, &none);
			if (!r)
				r = posix_spawnattr_setsigdefault(&at, &pipe);
			if (!r)
				r = posix_spawn_file_actions_adddup2(&fa, s->stdin_fd >= 0 ? s->stdin_fd : null, 0);
			if (!r)
				r = posix_spawn_file_actions_adddup2(&fa, p[1], 1);
			if (!r && s->stderr_null)
				r = posix_spawn_file_actions_adddup2(&fa, null, 2);
			if (!r && s->dir)
				r = posix_spawn_file_actions_addchdir_np(&fa, s->dir);
			if (!r)
				r = posix_spawnp(&pid, s->argv[0], &fa, &at, s->argv, env);
			posix_spawnattr_destroy(&at);
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	free(env);
	if (null >= 0)
		close(null);
	close(p[1]);
	if (r) {
		close(p[0]);
		return -r;
	}
	*out_fd = p[0];
	return pid;
}

int spawn_wait(pid_t pid)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}
