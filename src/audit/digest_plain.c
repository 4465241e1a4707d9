/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit_sha256_hex without libcrypto, for airlock-audit-writer (see
 * writer.c for why it does not link libcrypto). The same digest as
 * digest.c's: the verifier, which links that one, checks the chain the
 * writer made with this one.
 */
#include "audit/audit.h"
#include "util/sha256.h"

void audit_sha256_hex(const void *buf, size_t len, char out[65])
{
	sha256_hex(buf, len, out);
}
