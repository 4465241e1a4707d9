/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_FDS_H
#define AIRLOCK_UTIL_FDS_H

/*
 * Closing every descriptor a process inherited but for a few, before it
 * runs something that must not hold them (the sandbox's command, the
 * guard, an MCP server). An fd that survives is a way out of the sandbox
 * (a host directory, a socket of the supervisor), so this fails closed:
 * the caller ends the process when it returns an error.
 */

#include <stddef.h>

#include "util/error.h"

/* The most descriptors fds_close_from keeps besides those below from. */
#define FDS_MAX_KEEP 64

/* Close every fd >= from except keep[0..n) (any order, duplicates and
 * values below from allowed). close_range(2) when the kernel has it;
 * when it fails (ENOSYS before Linux 5.9 or under a seccomp filter, EINVAL,
 * EPERM), each fd listed in /proc/self/fd, or without /proc each fd up to
 * the process's descriptor limit. Returns 0, or a negative errno when an
 * fd may have been left open (-E2BIG: more than FDS_MAX_KEEP to keep).
 * Async-signal-safe (no allocation): it runs between fork and exec.
 * Takes no ownership of keep. */
int fds_close_from(int from, const int *keep, size_t n) WUR;

/* The two fallbacks on their own, for the tests: the walk of
 * /proc/self/fd (-ENOENT without /proc), and the loop to the limit. */
int fds_close_from_walk(int from, const int *keep, size_t n) WUR;
int fds_close_from_loop(int from, const int *keep, size_t n) WUR;

/* The path the kernel has for fd (its /proc/self/fd link) into out:
 * where an fd opened by walking, links followed, really is. Returns 0, or
 * -EACCES when it cannot be read (the caller then cannot tell where: a
 * judgement refuses). */
int fds_path(int fd, char *out, size_t len) WUR;

#endif
