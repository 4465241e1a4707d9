/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit_sha256_hex through libcrypto, for the executables that link it
 * (airlock-audit, airlock-proxy): the verifier hashes every line of a log,
 * and libcrypto's SHA-256 uses the processor's SHA extensions.
 * airlock-audit-writer, which must not load libcrypto, links
 * digest_plain.c instead.
 */
#include "audit/audit.h"
#include "util/hex.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>

static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
/* One context per thread, kept from line to line: EVP_Digest makes and
 * frees a context and the provider's state for every call, about a tenth
 * of a short line's hashing. A key, not __thread: its destructor frees
 * the context when the thread ends (the proxy's resolver threads, a
 * test's). */
static pthread_key_t sha256_key;
static bool sha256_keyed;

static void ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

/* Fetch the implementation once: EVP_sha256() would make every digest
 * look the provider's algorithm up again, a quarter of a short line's
 * hashing time. */
static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	sha256_keyed = pthread_key_create(&sha256_key, ctx_free) == 0;
}

void audit_sha256_hex(const void *buf, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	pthread_once(&sha256_once, sha256_fetch);
	const EVP_MD *type = sha256_md ? sha256_md : EVP_sha256();
	EVP_MD_CTX *ctx = sha256_keyed ? pthread_getspecific(sha256_key) : NULL;
	if (!ctx && (ctx = EVP_MD_CTX_new()) && sha256_keyed && pthread_setspecific(sha256_key, ctx) != 0) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	bool ok = ctx && EVP_DigestInit_ex2(ctx, type, NULL) == 1 && EVP_DigestUpdate(ctx, buf, len) == 1 &&
		  EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == sizeof(md);
	if (ctx && !sha256_keyed)
		EVP_MD_CTX_free(ctx);
	if (!ok) {
		/* Equal to no hash: a record it is compared with fails. */
		out[0] = '\0';
		return;
	}
	hex_encode(md, sizeof(md), out);
}

