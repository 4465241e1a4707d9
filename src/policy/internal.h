/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_INTERNAL_H
#define AIRLOCK_POLICY_INTERNAL_H

/*
 * Declarations shared by the files of the policy module and its tests.
 * Nothing outside src/policy/ (and tests/) includes this header.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "util/error.h"

/* Bounds on untrusted policy text. The parser refuses anything beyond them
 * before allocating for it. */
#define POLICY_MAX_FILE (1024 * 1024) /* bytes */
#define POLICY_MAX_DEPTH 16           /* nested lists/maps, top level = 1 */
#define POLICY_MAX_LIST 4096          /* entries in one list or keys in one map */
#define POLICY_MAX_SCALAR 4096        /* bytes in one scalar */
#define POLICY_MAX_NODES 65536        /* scalars + lists + maps in a file */

#define POLICY_DEFAULT_FILE "<default>"

/* Room for a dotted field name such as "filesystem.read[4095]" or an
 * unknown key quoted and shortened. */
#define POLICY_FIELD_MAX 192

/* ---- ytree.c: YAML text -> tree with positions ---- */

enum policy_ynode_type {
	POLICY_YNODE_SCALAR,
	POLICY_YNODE_SEQ,
	POLICY_YNODE_MAP,
};

struct policy_ynode {
	enum policy_ynode_type type;
	unsigned line; /* 1-based */
	unsigned col;  /* 1-based, in characters */
	bool quoted;   /* scalar written quoted or as a block scalar */
	char *str;     /* scalar: NUL-terminated, contains no NUL */
	size_t len;    /* scalar: strlen(str) */
	/* SEQ: the entries. MAP: key, value, key, value, ... (keys are scalars). */
	struct policy_ynode **items;
	size_t n;   /* number of items; a map holds n / 2 entries */
	size_t cap; /* allocated slots in items */
};

/* Parse buf as a single YAML document. On success *out is the root node,
 * owned by the caller (free with policy_ynode_free). Aliases, anchors, tags,
 * several documents, duplicate keys, non-scalar keys, NUL bytes and
 * anything beyond the POLICY_MAX_* bounds are refused with a
 * "file:line:col: field: ..." message. file is borrowed, used only for
 * messages. */
int policy_ytree_parse(const char *file, const char *buf, size_t len, struct policy_ynode **out,
		       struct error *err) WUR;

void policy_ynode_free(struct policy_ynode *n);

static inline void policy_ynode_freep(struct policy_ynode **n)
{
	policy_ynode_free(*n);
}

/* ---- diag.c: messages ---- */

/* Fill err with "FILE:LINE:COL: FIELD: <fmt>" and return -EINVAL. Control
 * characters in file are replaced so a crafted file name cannot forge
 * output lines. */
int policy_fail(struct error *err, const char *file, unsigned line, unsigned col, const char *field,
		const char *fmt, ...) PRINTF_LIKE(6, 7);

/* Write s (len bytes) into buf (size > 8) as a double-quoted string with
 * control characters escaped, shortened with "..." past a few dozen bytes.
 * The result is for messages only. */
void policy_quote(const char *s, size_t len, char *buf, size_t size);

/* Append a field segment to buf (NUL-terminated, at most size bytes): the
 * key as is when it is made of [A-Za-z0-9_-], quoted otherwise; preceded by
 * "." unless buf is empty. */
void policy_field_append_key(char *buf, size_t size, const char *key, size_t len);

/* ---- path.c: lexical path handling; never touches the filesystem ---- */

enum policy_path_status {
	POLICY_PATH_OK = 0,
	POLICY_PATH_EMPTY,        /* "" */
	POLICY_PATH_TOO_LONG,     /* >= PATH_MAX bytes, before or after expansion */
	POLICY_PATH_NO_HOME,      /* "~" used but no absolute home directory known */
	POLICY_PATH_TILDE_USER,   /* "~user" */
	POLICY_PATH_UNKNOWN_VAR,  /* "$X..." other than $WORKSPACE */
	POLICY_PATH_NO_WORKSPACE, /* "$WORKSPACE" where it may not be used */
	POLICY_PATH_NOMEM,
};

struct policy_path_base {
	const char *home;      /* absolute, or NULL: "~" is refused */
	const char *workspace; /* absolute, or NULL: "$WORKSPACE" is refused */
	const char *dir;       /* absolute: relative paths resolve against it */
};

/* Expand "~", "~/x", "$WORKSPACE", "$WORKSPACE/x", make a relative path
 * absolute against base->dir, then normalise. On POLICY_PATH_OK *out is a
 * new string owned by the caller. */
enum policy_path_status policy_path_resolve(const char *in, const struct policy_path_base *base,
					    char **out) WUR;

/* Lexically normalise an absolute path: collapse "//" and ".", let ".."
 * remove the previous component (never going above "/"), drop a trailing
 * "/". Symlinks are not resolved. Returns a new string owned by the caller,
 * or NULL (errno set: EINVAL if abs is not absolute, ENOMEM). */
char *policy_path_normalize(const char *abs);

/* True when path equals dir or lies beneath it. Both must be normalised. */
bool policy_path_is_under(const char *path, const char *dir);

/* ---- units.c: numbers, sizes, durations ---- */

enum policy_num_status {
	POLICY_NUM_OK = 0,
	POLICY_NUM_SYNTAX, /* not of the expected form */
	POLICY_NUM_RANGE,  /* of the form but larger than allowed */
};

/* A decimal integer: digits only, no sign, no leading zero (an octal
 * reading of "010" by another YAML tool would differ), at most max. */
enum policy_num_status policy_parse_uint(const char *s, uint64_t max, uint64_t *out) WUR;

/* "<digits>[B|K|KB|KiB|M|MB|MiB|G|GB|GiB|T|TiB]" in bytes. */
enum policy_num_status policy_parse_size(const char *s, uint64_t *out) WUR;

/* "<digits>[s|m|h]" in seconds. */
enum policy_num_status policy_parse_duration(const char *s, uint64_t *out) WUR;

/* Human form that policy_parse_size / policy_parse_duration read back to
 * the same value. bytes / seconds must not be 0 (that is "unlimited"). */
void policy_format_size(uint64_t bytes, char *buf, size_t size);
void policy_format_duration(uint64_t seconds, char *buf, size_t size);

/* ---- default.c ---- */

/* Fill a zeroed policy with the built-in defaults (everything but file and
 * dir). On failure p may hold partial allocations: free it with
 * policy_free. ctx->cwd must be absolute. */
int policy_init_defaults(struct policy *p, const struct policy_ctx *ctx, struct error *err) WUR;

/* The default list for process.env.pass. */
extern const char *const policy_default_env_pass[];
extern const size_t policy_default_env_pass_count;

/* ---- print.c ---- */

/* True when a and b have the same effect: every setting equal, in the same
 * order. file, dir and locations are not compared. */
bool policy_equal(const struct policy *a, const struct policy *b);

#endif
