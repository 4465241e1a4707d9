/* SPDX-License-Identifier: Apache-2.0 */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int file_mkdir_p(const char *dir, mode_t mode, struct error *err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/", dir) >= sizeof(path))
		return error_set(err, ENAMETOOLONG, "%s: path too long", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, mode) < 0 && errno != EEXIST)
			return error_sys(err, errno, "cannot make the directory %s", path);
		*p = '/';
	}
	return 0;
}

int file_read_all(const char *path, size_t max, struct buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	size_t start = out->len;
	int r = 0;
	for (;;) {
		if ((r = buf_reserve(out, 8192)) < 0)
			break;
		ssize_t n = read(fd, out->data + out->len, 8192);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->data[out->len] = '\0';
		if (out->len - start > max) {
			r = -E2BIG;
			break;
		}
	}
	close(fd);
	return r;
}
