/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_CLOCK_H
#define AIRLOCK_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds: for pauses and deadlines, which a change
 * of the wall clock must not move. */
static inline int64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
