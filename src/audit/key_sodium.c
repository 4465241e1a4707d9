/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ed25519 keys and signatures for airlock-audit-writer, through
 * libsodium, behind the functions sign.c gives the other executables
 * with libcrypto.
 *
 * Why not libcrypto here: every `airlock run` with its log on starts the
 * writer, and the command waits for it. Loading libcrypto (relocating
 * its 17,000 pointers, page by page) and bringing up its default
 * provider for the first Ed25519 key cost the writer 7 ms of CPU of the
 * 9 it took to start, on a machine whose other core builds the sandbox
 * meanwhile; libsodium costs under one. Ed25519 is deterministic (RFC
 * 8032): the same seed and message give the same signature from either
 * library, and the verifier (sign.c) checks these with libcrypto
 * (test_writer_key.c holds the two to that).
 *
 * The key file is the one form libcrypto writes for an Ed25519 key
 * (PKCS#8, RFC 8410, one base64 line), read and written here without a
 * PEM or ASN.1 library.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/ed25519_pem.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/file.h"

struct audit_key {
	uint8_t sk[crypto_sign_SECRETKEYBYTES]; /* libsodium's form: the seed, then the public key */
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
};


static void key_freep(struct audit_key **k)
{
	audit_key_free(*k);
}

/* The key of a seed; wipes nothing (the caller owns seed). */
static int key_from_seed(const uint8_t seed[32], struct audit_key **out, struct error *err)
{
	if (sodium_init() < 0)
		return error_set(err, EIO, "cannot initialise libsodium");
	struct audit_key *k = calloc(1, sizeof(*k));
	if (!k)
		return error_set(err, ENOMEM, "out of memory");
	if (crypto_sign_seed_keypair(k->pk, k->sk, seed) != 0) {
		audit_key_free(k);
		return error_set(err, EIO, "cannot make an Ed25519 key");
	}
	*out = k;
	return 0;
}

int audit_key_generate(struct audit_key **out, struct error *err)
{
	uint8_t seed[32];
	int r = ed25519_seed_new(seed, err) ?: key_from_seed(seed, out, err);
	explicit_bzero(seed, sizeof(seed));
	return r;
}

int audit_key_load(const char *path, struct audit_key **out, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return error_sys(err, errno, "cannot open the authority key %s", path);
	struct stat st;
	if (fstat(fd, &st) == 0 && (st.st_mode & 077))
		return error_set(err, EPERM, "%s: the authority key is readable by others (mode %o); chmod 600 it",
				 path, st.st_mode & 0777);
	char text[ED25519_PEM_LEN + 1];
	uint8_t seed[32];
	ssize_t n;
	do
		n = read(fd, text, sizeof(text));
	while (n < 0 && errno == EINTR);
	int r = 0;
	if (n > 0 && ed25519_pem_seed(text, (size_t)n, seed))
		r = key_from_seed(seed, out, err);
	else
		r = error_set(err, EINVAL,
			      "%s: not an Ed25519 private key in the PEM form `openssl genpkey -algorithm ed25519` "
			      "writes (PKCS#8, one base64 line)",
			      path);
	explicit_bzero(text, sizeof(text));
	explicit_bzero(seed, sizeof(seed));
	return r;
}

int audit_key_load_or_create(const char *path, struct audit_key **out, struct error *err)
{
	int r = audit_key_load(path, out, err);
	if (r != -ENOENT)
		return r;
	error_clear(err);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		r = file_mkdir_p(dir, 0700, err);
	}
	if (r < 0)
		return r;
	_cleanup_(key_freep) struct audit_key *k = NULL;
	if ((r = audit_key_generate(&k, err)) < 0)
		return r;
	struct buf pem = { 0 };
	r = ed25519_pem_write(k->sk, &pem); /* libsodium's key starts with the seed */
	/* Written whole under a name of its own, then linked into place:
	 * the key's name never shows a partial file, and two first runs at
	 * once do not overwrite each other's key (link refuses an existing
	 * name; the loser loads the winner's). */
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	int fd = r < 0 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && r == 0 && errno == EEXIST && unlink(tmp) == 0) /* a crashed run of the same pid */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (r < 0 || fd < 0) {
		r = r < 0 ? error_set(err, -r, "out of memory") : error_sys(err, errno, "cannot create the authority key %s", tmp);
		goto wipe;
	}
	errno = EIO; /* a short write sets none */
	if (write(fd, pem.data, pem.len) != (ssize_t)pem.len || fsync(fd) < 0) {
		r = error_sys(err, errno, "cannot write the authority key %s", tmp);
		close(fd);
		unlink(tmp);
		goto wipe;
	}
	if (close(fd) < 0) {
		r = error_sys(err, errno, "cannot write the authority key %s", tmp);
		unlink(tmp);
		goto wipe;
	}
	int lr = link(tmp, path), lerr = errno;
	unlink(tmp);
	if (lr < 0)
		r = lerr == EEXIST ? audit_key_load(path, out, err)
				   : error_sys(err, lerr, "cannot create the authority key %s", path);
	else
		*out = steal_pointer(&k);
wipe:
	if (pem.data)
		explicit_bzero(pem.data, pem.len);
	buf_free(&pem);
	return r;
}

void audit_key_free(struct audit_key *k)
{
	if (!k)
		return;
	explicit_bzero(k, sizeof(*k));
	free(k);
}

int audit_key_seed(const struct audit_key *k, uint8_t seed[32])
{
	memcpy(seed, k->sk, 32);
	return 0;
}

void audit_key_public(const struct audit_key *k, uint8_t pub[AUDIT_PUB_LEN])
{
	memcpy(pub, k->pk, AUDIT_PUB_LEN);
}

int audit_sign(const struct audit_key *k, const void *msg, size_t len, uint8_t sig[AUDIT_SIG_LEN])
{
	unsigned long long slen = 0;
	if (crypto_sign_detached(sig, &slen, msg, len, k->sk) != 0 || slen != AUDIT_SIG_LEN)
		return -EIO;
	return 0;
}
