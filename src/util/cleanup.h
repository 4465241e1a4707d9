/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_CLEANUP_H
#define AIRLOCK_UTIL_CLEANUP_H

/*
 * Scope-bound resource release. Every destructor accepts "nothing held"
 * (NULL, -1). Hand ownership on with steal_pointer() / TAKE_FD() so the
 * cleanup does not fire.
 */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void cleanup_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* Kill (SIGKILL) and reap a child we still own. */
static inline void cleanup_killp(pid_t *pid)
{
	if (*pid > 0) {
		int saved = errno;
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, __WALL) < 0 && errno == EINTR)
			;
		errno = saved;
	}
}

static inline void cleanup_strvp(char ***v)
{
	if (!*v)
		return;
	for (char **p = *v; *p; p++)
		free(*p);
	free(*v);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(cleanup_freep)
#define _cleanup_close_ _cleanup_(cleanup_closep)
#define _cleanup_fclose_ _cleanup_(cleanup_fclosep)
#define _cleanup_kill_ _cleanup_(cleanup_killp)
#define _cleanup_strv_ _cleanup_(cleanup_strvp)

#define steal_pointer(pp)                       \
	({                                      \
		__typeof__(*(pp)) _tmp = *(pp); \
		*(pp) = NULL;                   \
		_tmp;                           \
	})

#define TAKE_FD(fd)              \
	({                       \
		int _tmp = (fd); \
		(fd) = -1;       \
		_tmp;            \
	})

#define TAKE_PID(pid)              \
	({                         \
		pid_t _tmp = (pid); \
		(pid) = 0;         \
		_tmp;              \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
