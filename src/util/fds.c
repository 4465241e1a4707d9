/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fds_close_from: close_range(2), with the fallbacks a kernel or a filter
 * without it needs. Nothing here allocates: the callers are forked
 * children of a process that may hold locks (posix_spawn's rules).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fds.h"

/* The descriptors a loop may have to visit: beyond this a loop is no
 * longer a fallback but a hang, and the caller fails closed instead. */
#define FDS_LOOP_MAX (1 << 20)

/* keep, sorted and without duplicates, into out; the count, or -E2BIG. */
static int sorted_keep(const int *keep, size_t n, int *out)
{
	size_t m = 0;
	if (n > FDS_MAX_KEEP)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		size_t j = m;
		if (keep[i] < 0)
			continue;
		while (j > 0 && out[j - 1] > keep[i])
			j--;
		if (j > 0 && out[j - 1] == keep[i])
			continue;
		memmove(out + j + 1, out + j, (m - j) * sizeof(*out));
		out[j] = keep[i];
		m++;
	}
	return (int)m;
}

static bool kept(int fd, const int *keep, int n)
{
	for (int i = 0; i < n; i++)
		if (keep[i] == fd)
			return true;
	return false;
}

/* Each fd of /proc/self/fd that is >= from and not kept: closed when
 * do_close, counted otherwise. Returns the count, or a negative errno. */
static int walk(int from, const int *keep, int n, bool do_close)
{
	/* linux_dirent64 records, read raw: opendir allocates. */
	union {
		char b[4096];
		uint64_t align;
	} buf;
	int left = 0;
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	for (;;) {
		long got = syscall(SYS_getdents64, dfd, buf.b, sizeof(buf.b));
		if (got < 0) {
			int e = errno;
			close(dfd);
			return -e;
		}
		if (got == 0)
			break;
		for (long off = 0; off < got;) {
			unsigned short reclen;
			const char *name = buf.b + off + 19; /* d_ino, d_off, d_reclen, d_type */
			memcpy(&reclen, buf.b + off + 16, sizeof(reclen));
			if (reclen == 0)
				break;
			off += reclen;
			if (name[0] < '0' || name[0] > '9')
				continue;
			long fd = 0;
			for (const char *c = name; *c >= '0' && *c <= '9' && fd <= INT32_MAX; c++)
				fd = fd * 10 + (*c - '0');
			if (fd < from || fd > INT32_MAX || fd == dfd || kept((int)fd, keep, n))
				continue;
			left++;
			/* Linux frees the fd whatever close returns (EINTR, EIO
			 * included); the count on the second walk says whether
			 * it did. */
			if (do_close)
				close((int)fd);
		}
	}
	close(dfd);
	return left;
}

int fds_close_from_walk(int from, const int *keep, size_t n)
{
	int k[FDS_MAX_KEEP];
	int m = sorted_keep(keep, n, k);
	if (m < 0)
		return m;
	int r = walk(from, k, m, true);
	if (r < 0)
		return r;
	/* Verified, not assumed: a second walk must find nothing. */
	r = walk(from, k, m, false);
	return r < 0 ? r : r > 0 ? -EBADFD : 0;
}

int fds_close_from_loop(int from, const int *keep, size_t n)
{
	int k[FDS_MAX_KEEP];
	int m = sorted_keep(keep, n, k);
	struct rlimit rl;
	if (m < 0)
		return m;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	/* The hard limit bounds every fd the process could have opened
	 * (a soft limit lowered later does not close the fds above it). */
	rlim_t end = rl.rlim_max;
	if (end == RLIM_INFINITY || end > FDS_LOOP_MAX)
		return -EMFILE;
	for (rlim_t fd = (rlim_t)(from < 0 ? 0 : from); fd < end; fd++) {
		if (kept((int)fd, k, m))
			continue;
		if (close((int)fd) < 0 && errno == EBADF)
			continue;
		/* Closed, or freed by a close that reported an error: check. */
		if (fcntl((int)fd, F_GETFD) >= 0)
			return -EBADFD;
	}
	return 0;
}

int fds_close_from(int from, const int *keep, size_t n)
{
	int k[FDS_MAX_KEEP];
	int m = sorted_keep(keep, n, k);
	if (m < 0)
		return m;
	unsigned lo = from < 0 ? 0 : (unsigned)from;
	bool ok = true;
	for (int i = 0; i < m && ok; i++) {
		if (k[i] < (int)lo)
			continue;
		if ((unsigned)k[i] > lo)
			ok = syscall(SYS_close_range, lo, (unsigned)k[i] - 1, 0U) == 0;
		lo = (unsigned)k[i] + 1;
	}
	if (ok && syscall(SYS_close_range, lo, ~0U, 0U) == 0)
		return 0;
	/* Whatever close_range's failure (ENOSYS: Linux < 5.9, or a filter
	 * that hides it; EINVAL; EPERM), the fds are closed one by one, and
	 * the result verified. */
	int r = fds_close_from_walk(from, keep, n);
	if (r == -ENOENT || r == -EACCES || r == -EMFILE || r == -ENFILE)
		r = fds_close_from_loop(from, keep, n);
	return r;
}

int fds_path(int fd, char *out, size_t len)
{
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t n = len > 1 ? readlink(proc, out, len - 1) : -1;
	if (n <= 0)
		return -EACCES;
	out[n] = '\0';
	return 0;
}
