/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ed25519 keys and signatures for the audit log, through libcrypto, for
 * the verifier and the proxy's identity header. The log's writer signs
 * with key_sodium.c, behind the same functions.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/ed25519_pem.h"
#include "util/base64.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/hex.h"

struct audit_key {
	EVP_PKEY *pkey;
};

static int ssl_fail(struct error *err, const char *what)
{
	unsigned long e = ERR_get_error();
	ERR_clear_error();
	return error_set(err, EIO, "%s: %s", what, e ? ERR_reason_error_string(e) : "libcrypto failed");
}

static int key_from_seed(const uint8_t seed[32], struct audit_key **out, struct error *err)
{
	struct audit_key *k = calloc(1, sizeof(*k));
	if (!k)
		return error_set(err, ENOMEM, "out of memory");
	k->pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	if (!k->pkey) {
		free(k);
		return ssl_fail(err, "cannot make an Ed25519 key");
	}
	*out = k;
	return 0;
}

/* The seed from the kernel (ed25519_seed_new): libcrypto's own generator
 * would first build and seed its DRBGs, a quarter of the writer's
 * start-up, and nothing else needs them (Ed25519 signing is
 * deterministic). */
int audit_key_generate(struct audit_key **out, struct error *err)
{
	uint8_t seed[32];
	int r = ed25519_seed_new(seed, err) ?: key_from_seed(seed, out, err);
	explicit_bzero(seed, sizeof(seed));
	return r;
}

/* The key as PEM_write_PrivateKey writes an Ed25519 key (PKCS#8, one base64
 * line), read without libcrypto's decoders: trying each of them costs a
 * millisecond or more of every run's start. NULL for any other form, which
 * the caller hands to PEM_read_PrivateKey. */
static EVP_PKEY *ed25519_pkcs8_fast(FILE *f)
{
	char text[ED25519_PEM_LEN + 1];
	uint8_t seed[32];
	EVP_PKEY *pkey = NULL;
	size_t n = fread(text, 1, sizeof(text), f);
	if (ed25519_pem_seed(text, n, seed))
		pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof(seed));
	explicit_bzero(text, sizeof(text));
	explicit_bzero(seed, sizeof(seed));
	if (!pkey)
		rewind(f);
	return pkey;
}

int audit_key_load(const char *path, struct audit_key **out, struct error *err)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return error_sys(err, errno, "cannot open the authority key %s", path);
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
		fclose(f);
		return error_set(err, EPERM, "%s: the authority key is readable by others (mode %o); chmod 600 it",
				 path, st.st_mode & 0777);
	}
	EVP_PKEY *pkey = ed25519_pkcs8_fast(f);
	if (!pkey)
		pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!pkey || EVP_PKEY_id(pkey) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(pkey);
		ERR_clear_error();
		return error_set(err, EINVAL, "%s: not an Ed25519 private key in PEM", path);
	}
	struct audit_key *k = calloc(1, sizeof(*k));
	if (!k) {
		EVP_PKEY_free(pkey);
		return error_set(err, ENOMEM, "out of memory");
	}
	k->pkey = pkey;
	*out = k;
	return 0;
}

int audit_key_load_or_create(const char *path, struct audit_key **out, struct error *err)
{
	int r = audit_key_load(path, out, err);
	if (r != -ENOENT)
		return r;
	error_clear(err);
	FILE *f;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		r = file_mkdir_p(dir, 0700, err);
	}
	if (r < 0)
		return r;
	struct audit_key *k;
	if ((r = audit_key_generate(&k, err)) < 0)
		return r;
	/* Written whole under a name of its own, then linked into place:
	 * the key's name never shows a partial file, and two first runs at
	 * once do not overwrite each other's key (link refuses an existing
	 * name; the loser loads the winner's). */
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* a crashed run of the same pid */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		audit_key_free(k);
		return error_sys(err, errno, "cannot create the authority key %s", tmp);
	}
	f = fdopen(fd, "w");
	if (!f || !PEM_write_PrivateKey(f, k->pkey, NULL, NULL, 0, NULL, NULL) || fflush(f) != 0 ||
	    fsync(fileno(f)) < 0) {
		if (f)
			fclose(f);
		else
			close(fd);
		unlink(tmp);
		audit_key_free(k);
		return ssl_fail(err, "cannot write the authority key");
	}
	if (fclose(f) != 0) {
		unlink(tmp);
		audit_key_free(k);
		return error_sys(err, errno, "cannot write the authority key %s", tmp);
	}
	int lr = link(tmp, path), lerr = errno;
	unlink(tmp);
	if (lr < 0) {
		audit_key_free(k);
		if (lerr == EEXIST)
			return audit_key_load(path, out, err);
		return error_sys(err, lerr, "cannot create the authority key %s", path);
	}
	*out = k;
	return 0;
}

void audit_key_free(struct audit_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

int audit_key_seed(const struct audit_key *k, uint8_t seed[32])
{
	size_t len = 32;
	if (EVP_PKEY_get_raw_private_key(k->pkey, seed, &len) <= 0 || len != 32) {
		explicit_bzero(seed, 32);
		ERR_clear_error();
		return -EIO;
	}
	return 0;
}

void audit_key_public(const struct audit_key *k, uint8_t pub[AUDIT_PUB_LEN])
{
	size_t len = AUDIT_PUB_LEN;
	if (EVP_PKEY_get_raw_public_key(k->pkey, pub, &len) <= 0 || len != AUDIT_PUB_LEN)
		memset(pub, 0, AUDIT_PUB_LEN);
}

int audit_sign(const struct audit_key *k, const void *msg, size_t len, uint8_t sig[AUDIT_SIG_LEN])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t slen = AUDIT_SIG_LEN;
	int ok = md && EVP_DigestSignInit(md, NULL, NULL, NULL, k->pkey) > 0 &&
		 EVP_DigestSign(md, sig, &slen, msg, len) > 0 && slen == AUDIT_SIG_LEN;
	EVP_MD_CTX_free(md);
	if (!ok) {
		ERR_clear_error();
		return -EIO;
	}
	return 0;
}

bool audit_sig_ok(const uint8_t pub[AUDIT_PUB_LEN], const void *msg, size_t len, const uint8_t sig[AUDIT_SIG_LEN])
{
	EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, AUDIT_PUB_LEN);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = pkey && md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, pkey) > 0 &&
		  EVP_DigestVerify(md, sig, AUDIT_SIG_LEN, msg, len) == 1;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	ERR_clear_error();
	return ok;
}


int audit_pub_load(const char *path, uint8_t pub[AUDIT_PUB_LEN], struct error *err)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return error_sys(err, errno, "cannot open the public key %s", path);
	char text[1024];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	/* One line of 64 hex digits... */
	size_t hex = 0;
	while (hex < n && hex_digit_value((unsigned char)text[hex]) >= 0)
		hex++;
	if (hex == 2 * AUDIT_PUB_LEN && (text[hex] == '\0' || text[hex] == '\n')) {
		for (size_t i = 0; i < AUDIT_PUB_LEN; i++)
			pub[i] = (uint8_t)(hex_digit_value((unsigned char)text[2 * i]) << 4 | hex_digit_value((unsigned char)text[2 * i + 1]));
		return 0;
	}
	/* ...or PEM. */
	rewind(f);
	EVP_PKEY *pkey = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	size_t len = AUDIT_PUB_LEN;
	bool ok = pkey && EVP_PKEY_id(pkey) == EVP_PKEY_ED25519 &&
		  EVP_PKEY_get_raw_public_key(pkey, pub, &len) > 0 && len == AUDIT_PUB_LEN;
	EVP_PKEY_free(pkey);
	ERR_clear_error();
	if (!ok)
		return error_set(err, EINVAL, "%s: not an Ed25519 public key (PEM, or 64 hex digits)", path);
	return 0;
}
