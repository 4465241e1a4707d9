/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock's helper executables (airlock-proxy, airlock-audit-writer) live beside
 * airlock itself; the supervisor starts them with only the fds it names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/cleanup.h"

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

/* posix_spawn rather than fork: glibc's shares the supervisor's memory
 * until the exec instead of copying its page tables, which took
 * milliseconds of the run's start (the writer is on its critical path). */
pid_t sibling_spawn(char *const argv[], char *const envp[], int keep_a, int keep_b)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	sigemptyset(&none);
	int r = posix_spawn_file_actions_init(&fa);
	if (r != 0) {
		errno = r;
		return -1;
	}
	if ((r = posix_spawnattr_init(&at)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		errno = r;
		return -1;
	}
	/* keep_a becomes 3 and keep_b 4 (keep_b first moved above both, in
	 * case keep_a's new number is its old one), stdin and stdout
	 * /dev/null; stderr stays for fatal messages; nothing else the
	 * caller holds or inherited crosses into the helper. */
	int above = (keep_a > keep_b ? keep_a : keep_b) + 1;
	if (above < 5)
		above = 5;
	pid_t pid = -1;
	if ((r = posix_spawn_file_actions_adddup2(&fa, keep_b, above)) == 0 &&
	    (r = posix_spawn_file_actions_adddup2(&fa, keep_a, 3)) == 0 &&
	    (r = posix_spawn_file_actions_adddup2(&fa, above, 4)) == 0 &&
	    (r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0)) == 0 &&
	    (r = posix_spawn_file_actions_adddup2(&fa, 0, 1)) == 0 &&
	    (r = posix_spawn_file_actions_addclosefrom_np(&fa, 5)) == 0 &&
	    (r = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
	    (r = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK)) == 0)
		r = posix_spawn(&pid, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (r != 0) {
		errno = r;
		return -1;
	}
	return pid;
}

char **sibling_argv(char *const fixed[], size_t n, const struct policy *pol)
{
	char **argv = calloc(n + pol->n_layer_files + 1, sizeof(*argv));
	if (!argv)
		return NULL;
	memcpy(argv, fixed, n * sizeof(*fixed));
	for (size_t i = 0; i < pol->n_layer_files; i++)
		argv[n + i] = pol->layer_files[i];
	return argv;
}

void sibling_env(const char *const kept[], size_t n_kept, char *envp[], size_t n, size_t max)
{
	static const char *const sanitizers[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS" };
	for (char **e = environ; e && *e && n + 1 < max; e++) {
		size_t len = strcspn(*e, "=");
		bool keep = false;
		for (size_t i = 0; i < n_kept && !keep; i++)
			keep = strlen(kept[i]) == len && !strncmp(*e, kept[i], len);
		for (size_t i = 0; i < ARRAY_SIZE(sanitizers) && !keep; i++)
			keep = strlen(sanitizers[i]) == len && !strncmp(*e, sanitizers[i], len);
		if (keep && (*e)[len] == '=')
			envp[n++] = *e;
	}
	envp[n] = NULL;
}
