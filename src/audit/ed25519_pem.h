/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_AUDIT_ED25519_PEM_H
#define AIRLOCK_AUDIT_ED25519_PEM_H

/* The authority key: a new key's seed, and its file, an Ed25519 private
 * key in the one-line PKCS#8 PEM form (RFC 8410) that `openssl genpkey
 * -algorithm ed25519` and PEM_write_PrivateKey write. One maker, reader
 * and writer, for the libcrypto side (sign.c) and the log's writer
 * (key_sodium.c): the two must agree byte for byte. */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/base64.h"
#include "util/buf.h"
#include "util/entropy.h"
#include "util/error.h"

#define ED25519_PEM_HEAD "-----BEGIN PRIVATE KEY-----\n"
#define ED25519_PEM_TAIL "\n-----END PRIVATE KEY-----\n"
#define ED25519_PEM_LEN (sizeof(ED25519_PEM_HEAD) - 1 + 64 + sizeof(ED25519_PEM_TAIL) - 1)

/* SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING {
 * OCTET STRING (32) } }: RFC 8410 section 7, then the 32-byte seed. */
static const uint8_t ed25519_der_head[16] = { 0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
					      0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20 };

/* A new key's seed: an Ed25519 private key is 32 random bytes (RFC 8032
 * section 5.1.5), taken from the kernel (entropy_fill), not from a
 * library's generator that would first have to be built and seeded. The
 * caller wipes seed, whatever the result. */
static inline int ed25519_seed_new(uint8_t seed[32], struct error *err)
{
	int e = entropy_fill(seed, 32);
	return e < 0 ? error_sys(err, -e, "cannot make an Ed25519 key: getrandom") : 0;
}

/* The seed of text (len bytes) when it is exactly that form; false for
 * anything else. The caller wipes text and seed. */
static inline bool ed25519_pem_seed(const char *text, size_t len, uint8_t seed[32])
{
	uint8_t der[48];
	const size_t head = sizeof(ED25519_PEM_HEAD) - 1;
	bool ok = len == ED25519_PEM_LEN && memcmp(text, ED25519_PEM_HEAD, head) == 0 &&
		  memcmp(text + head + 64, ED25519_PEM_TAIL, sizeof(ED25519_PEM_TAIL) - 1) == 0 &&
		  base64_decode(text + head, 64, der, sizeof(der)) == (ssize_t)sizeof(der) &&
		  memcmp(der, ed25519_der_head, sizeof(ed25519_der_head)) == 0;
	if (ok)
		memcpy(seed, der + sizeof(ed25519_der_head), 32);
	explicit_bzero(der, sizeof(der));
	return ok;
}

/* That form of seed, appended to pem (which the caller wipes). */
static inline int ed25519_pem_write(const uint8_t seed[32], struct buf *pem)
{
	uint8_t der[48];
	memcpy(der, ed25519_der_head, sizeof(ed25519_der_head));
	memcpy(der + sizeof(ed25519_der_head), seed, 32);
	int r = buf_puts(pem, ED25519_PEM_HEAD) ?: base64_encode(der, sizeof(der), pem) ?: buf_puts(pem, ED25519_PEM_TAIL);
	explicit_bzero(der, sizeof(der));
	return r;
}

#endif
