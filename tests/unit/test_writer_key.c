/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decision log's writer signs with libsodium (audit/key_sodium.c) and
 * hashes its chain with util/sha256.c; the verifier and the proxy use
 * libcrypto. Held together here: the same key file, the same public key,
 * the same signature, the same digest, from either side.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "audit/audit.h"
#include "util/sha256.h"

static char dir[] = "/tmp/airlock-test-writer-key.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static EVP_PKEY *ossl_key(const uint8_t seed[32])
{
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	assert_non_null(k);
	return k;
}

static void test_signature_is_libcrypto_s(void **state)
{
	(void)state;
	struct error err = { 0 };
	struct audit_key *k = NULL;
	assert_int_equal(audit_key_generate(&k, &err), 0);
	uint8_t seed[32], pub[AUDIT_PUB_LEN], sig[AUDIT_SIG_LEN];
	assert_int_equal(audit_key_seed(k, seed), 0);
	audit_key_public(k, pub);
	static const char msg[] = "airlock-seal\nsession\n41\nhead\n";
	assert_int_equal(audit_sign(k, msg, sizeof(msg) - 1, sig), 0);

	EVP_PKEY *o = ossl_key(seed);
	uint8_t opub[32], osig[64];
	size_t len = sizeof(opub), slen = sizeof(osig);
	assert_int_equal(EVP_PKEY_get_raw_public_key(o, opub, &len), 1);
	assert_memory_equal(pub, opub, 32);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	assert_int_equal(EVP_DigestSignInit(md, NULL, NULL, NULL, o), 1);
	assert_int_equal(EVP_DigestSign(md, osig, &slen, (const uint8_t *)msg, sizeof(msg) - 1), 1);
	/* Ed25519 is deterministic: one signature for a key and a message. */
	assert_memory_equal(sig, osig, 64);
	EVP_MD_CTX_free(md);
	md = EVP_MD_CTX_new();
	assert_int_equal(EVP_DigestVerifyInit(md, NULL, NULL, NULL, o), 1);
	assert_int_equal(EVP_DigestVerify(md, sig, 64, (const uint8_t *)msg, sizeof(msg) - 1), 1);
	/* And a changed message does not verify. */
	assert_int_equal(EVP_DigestVerifyInit(md, NULL, NULL, NULL, o), 1);
	assert_int_not_equal(EVP_DigestVerify(md, sig, 64, (const uint8_t *)msg, sizeof(msg) - 2), 1);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(o);
	audit_key_free(k);
}

static void test_key_file_both_ways(void **state)
{
	(void)state;
	struct error err = { 0 };
	char path[256];
	/* Made here (the directory too), read by libcrypto. */
	snprintf(path, sizeof(path), "%s/state/authority.key", dir);
	struct audit_key *k = NULL;
	assert_int_equal(audit_key_load_or_create(path, &k, &err), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	uint8_t seed[32], pub[32], oseed[32];
	assert_int_equal(audit_key_seed(k, seed), 0);
	audit_key_public(k, pub);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	EVP_PKEY *o = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(o);
	size_t len = sizeof(oseed);
	assert_int_equal(EVP_PKEY_get_raw_private_key(o, oseed, &len), 1);
	assert_memory_equal(seed, oseed, 32);
	EVP_PKEY_free(o);
	audit_key_free(k);
	/* The second run loads the same key. */
	assert_int_equal(audit_key_load_or_create(path, &k, &err), 0);
	uint8_t again[32];
	audit_key_public(k, again);
	assert_memory_equal(pub, again, 32);
	audit_key_free(k);

	/* Made by libcrypto (as `openssl genpkey` would), read here. */
	snprintf(path, sizeof(path), "%s/ossl.key", dir);
	for (size_t i = 0; i < 32; i++)
		seed[i] = (uint8_t)(7 * i + 1);
	o = ossl_key(seed);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(PEM_write_PrivateKey(f, o, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	uint8_t opub[32];
	len = sizeof(opub);
	assert_int_equal(EVP_PKEY_get_raw_public_key(o, opub, &len), 1);
	EVP_PKEY_free(o);
	assert_int_equal(audit_key_load(path, &k, &err), 0);
	audit_key_public(k, pub);
	assert_memory_equal(pub, opub, 32);
	audit_key_free(k);
}

static void test_key_refusals(void **state)
{
	(void)state;
	struct error err = { 0 };
	struct audit_key *k = NULL;
	char path[256];
	snprintf(path, sizeof(path), "%s/none.key", dir);
	assert_int_equal(audit_key_load(path, &k, &err), -ENOENT);
	/* Readable by others: refused, whatever it holds. */
	snprintf(path, sizeof(path), "%s/open.key", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIMzt/JBIpLJY9Fsdx2X31ocAChfs8zvl01Hzc9h053wA\n"
	      "-----END PRIVATE KEY-----\n",
	      f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(audit_key_load(path, &k, &err), -EPERM);
	assert_non_null(strstr(err.msg, "readable by others"));
	/* Another algorithm's key (X25519: OID 1.3.101.110) is not taken
	 * for an Ed25519 one. */
	assert_int_equal(chmod(path, 0600), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VuBCIEIMzt/JBIpLJY9Fsdx2X31ocAChfs8zvl01Hzc9h053wA\n"
	      "-----END PRIVATE KEY-----\n",
	      f);
	fclose(f);
	assert_int_equal(audit_key_load(path, &k, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not an Ed25519 private key"));
}

static void test_sha256_is_libcrypto_s(void **state)
{
	(void)state;
	/* Every tail length, in pieces of every size: the block path (the
	 * processor's SHA instructions where it has them) and the buffered
	 * one. */
	static uint8_t data[4200];
	uint32_t x = 1;
	for (size_t i = 0; i < sizeof(data); i++) {
		x = x * 1103515245 + 12345;
		data[i] = (uint8_t)(x >> 16);
	}
	for (size_t len = 0; len < sizeof(data); len += len < 300 ? 1 : 61) {
		uint8_t ours[32], theirs[32];
		struct sha256 c;
		sha256_init(&c);
		for (size_t off = 0, piece = 1; off < len; off += piece, piece = piece % 150 + 7)
			sha256_update(&c, data + off, piece < len - off ? piece : len - off);
		sha256_final(&c, ours);
		SHA256(data, len, theirs);
		assert_memory_equal(ours, theirs, 32);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signature_is_libcrypto_s),
		cmocka_unit_test(test_key_file_both_ways),
		cmocka_unit_test(test_key_refusals),
		cmocka_unit_test(test_sha256_is_libcrypto_s),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
