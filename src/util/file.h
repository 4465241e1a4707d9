/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_FILE_H
#define AIRLOCK_UTIL_FILE_H

/* Small file-system helpers shared by the supervisor and its helpers. */

#include <stddef.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/error.h"

/* Make dir and any missing parents with mode (existing ones are left as
 * they are). */
int file_mkdir_p(const char *dir, mode_t mode, struct error *err) WUR;

/* Append the whole file at path to out. -E2BIG when it is longer than
 * max bytes, another negative errno when it cannot be read. */
int file_read_all(const char *path, size_t max, struct buf *out) WUR;

#endif
