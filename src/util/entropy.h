/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_ENTROPY_H
#define AIRLOCK_UTIL_ENTROPY_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/types.h>

/* n bytes from the kernel's generator, for keys: getrandom without flags
 * waits until the kernel's pool is initialised, and no library's own
 * generator has to be built and seeded first. 0, or negative errno (the
 * buffer's contents are then the caller's to wipe). */
static inline int entropy_fill(void *buf, size_t n)
{
	uint8_t *p = buf;
	size_t got = 0;
	while (got < n) {
		ssize_t r = getrandom(p + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

#endif
