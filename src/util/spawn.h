/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_SPAWN_H
#define AIRLOCK_UTIL_SPAWN_H

/*
 * Running a helper program whose standard output we read: a credential's
 * command, `git config`, git for a hand-off baseline. One implementation,
 * so that each gets the same child: standard input never our terminal,
 * an empty signal mask and SIGPIPE's default (a helper that inherited a
 * blocked SIGTERM could not be stopped), no fd of ours but the ones
 * named (all of ours are O_CLOEXEC).
 */

#include <stdbool.h>
#include <sys/types.h>

struct spawn {
	char *const *argv;            /* argv[0] is looked up in PATH */
	int stdin_fd;                 /* -1: /dev/null */
	bool stderr_null;             /* else ours */
	const char *dir;              /* NULL: ours */
	const char *const *set_env;   /* NULL or "NAME=value" ..., NULL: set in its environment */
	const char *const *unset_env; /* NULL or names ..., NULL: removed from it */
};

/* Starts s->argv with its standard output a pipe whose reading end
 * (O_CLOEXEC) goes to *out_fd. Returns its pid, or a negative errno:
 * -ENOENT when there is no such program. The caller reads, then reaps
 * it with spawn_wait. */
pid_t spawn_reader(const struct spawn *s, int *out_fd);

/* Waits for pid; its wait status. */
int spawn_wait(pid_t pid);

#endif
