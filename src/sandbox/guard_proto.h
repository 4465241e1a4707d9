/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_GUARD_PROTO_H
#define AIRLOCK_SANDBOX_GUARD_PROTO_H

/*
 * What the supervisor (guard_notify.c) and the guard (guard.c) say to each
 * other over their socket, and the limits both keep. guard.c says why the
 * guard exists.
 */

#include <limits.h>
#include <stdint.h>

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

/* Symlinks followed at the last component of an O_CREAT open, as the
 * kernel's own limit. */
#define GUARD_MAX_LINKS 40
/* Entries of a directory looked through before a rename of it; above,
 * EXDEV (mv and friends then copy, and each copied name is judged). */
#define GUARD_MAX_TREE 100000
/* How long the supervisor waits for the guard before failing the call. */
#define GUARD_TIMEOUT_S 30
/* How long a connect or sendto on a blocking socket may wait in the guard. */
#define GUARD_SOCK_WAIT_S 5

enum guard_op { G_OPEN = 1, G_MKDIR, G_MKNOD, G_SYMLINK, G_LINK, G_RENAME, G_CONNECT, G_SENDTO, G_NOTIFY };

/* sendto: the most data one call hands over (a datagram larger than this
 * fails with EMSGSIZE, as one larger than the socket's buffer would). */
#define GUARD_MAX_DATA 65536

/* supervisor -> guard; SCM_RIGHTS: the directory of p1, then of p2 (for
 * G_LINK with AT_EMPTY_PATH, the file itself). */
struct guard_req {
	uint64_t seq;    /* echoed in the response */
	uint64_t id;     /* the notification the guard answers, or 0: the supervisor does */
	uint32_t op;
	int32_t flags;   /* open flags, linkat or renameat2 flags */
	uint32_t mode;
	uint32_t umask;
	int32_t vpid;    /* the caller's pid inside the sandbox, or 0 */
	uint32_t cwd;    /* bit 0: the first fd is the caller's cwd (a directory); bit 1: the second */
	uint64_t dev;
	char p1[PATH_MAX]; /* the path; symlink: its target text; link/rename: the old path */
	char p2[PATH_MAX]; /* symlink, link, rename: the new path */
};

/* guard -> supervisor; SCM_RIGHTS: the opened file for G_OPEN. */
struct guard_resp {
	uint64_t seq;
	int32_t res;       /* >= 0, or -errno */
	int32_t answered;  /* the guard answered the call itself (no fd follows) */
	char glob[256];    /* the glob that refused it, or "" */
	char where[PATH_MAX]; /* the protected path, when refused */
};

#endif
