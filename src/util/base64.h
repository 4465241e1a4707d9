/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_BASE64_H
#define AIRLOCK_UTIL_BASE64_H

/* Standard base64 (RFC 4648, with padding), as HTTP basic auth uses it. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/error.h"

/* Append the encoding of in[0..len) to out. */
int base64_encode(const uint8_t *in, size_t len, struct buf *out);

/* Decode in[0..len) into out[0..cap): strict (padding required, no
 * whitespace, no bits left over). Returns the decoded length, or -EINVAL
 * for malformed input, -ENOSPC when cap is too small. */
ssize_t base64_decode(const char *in, size_t len, uint8_t *out, size_t cap);

/* base64url without padding (RFC 4648 section 5, as JOSE uses it, RFC 7515
 * section 2). */
int base64url_encode(const uint8_t *in, size_t len, struct buf *out) WUR;

/* Strict: only the URL-safe alphabet, no '=', no length of 1 modulo 4 and
 * no bits left over (one encoding per value, so a token cannot be altered
 * in its text without altering its bytes). Returns the decoded length,
 * -EINVAL or -ENOSPC. */
ssize_t base64url_decode(const char *in, size_t len, uint8_t *out, size_t cap);

#endif
