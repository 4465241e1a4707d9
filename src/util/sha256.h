/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_SHA256_H
#define AIRLOCK_UTIL_SHA256_H

/* SHA-256 (FIPS 180-4) for the executables that do not link libcrypto:
 * content digests for the hand-off scanner's baselines, and the decision
 * log's chain in airlock-audit-writer (the verifier checks it with
 * libcrypto's). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t block[64];
	size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, uint8_t out[32]);
/* The digest of data as 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);
/* Tests: the portable rounds even where the processor's SHA instructions
 * would be used. */
void sha256_force_portable(bool on);

#endif
