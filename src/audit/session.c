/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What names a session and the policy it ran under, without libcrypto's
 * keys: shared by the writer and the verifier's tools.
 */
#include "audit/audit.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "util/buf.h"
#include "util/entropy.h"
#include "util/file.h"

void audit_policy_sha256(const char *path, char out[65])
{
	struct buf b = { 0 };
	if (path[0] != '<' && file_read_all(path, 16u << 20, &b) == 0)
		audit_sha256_hex(b.data ? b.data : "", b.len, out);
	else
		snprintf(out, 65, "none");
	buf_free(&b);
}

int audit_uuid7(char out[37])
{
	uint8_t b[16];
	int e = entropy_fill(b, sizeof(b));
	if (e < 0)
		return e;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	for (int i = 0; i < 6; i++)
		b[i] = (uint8_t)(ms >> (40 - 8 * i));
	b[6] = (uint8_t)(0x70 | (b[6] & 0x0f)); /* version 7 */
	b[8] = (uint8_t)(0x80 | (b[8] & 0x3f)); /* variant 10 */
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}
