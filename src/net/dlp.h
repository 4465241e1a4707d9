/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_DLP_H
#define AIRLOCK_NET_DLP_H

/*
 * Leak scanning of outbound requests: the values of secrets the
 * supervisor knows (raw, base64 in its three alignments and both
 * alphabets, hex in both cases, URL-encoded), and common credential
 * formats. A hit names the secret or the pattern, never the value.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct dlp;

/* A scanner with the built-in credential patterns. NULL on ENOMEM. */
struct dlp *dlp_new(void);
/* Wipes every registered secret before freeing. */
void dlp_free(struct dlp *d);

/* Register a secret value under name (copied; at least 8 bytes, shorter
 * values are refused with -EINVAL: they would match by accident). */
int dlp_add_secret(struct dlp *d, const char *name, const uint8_t *value, size_t len) WUR;

/* Scan one buffer. Returns true on a hit, with what = "secret NAME
 * (base64)" or "pattern aws-access-key-id" and so on. */
bool dlp_scan(const struct dlp *d, const uint8_t *buf, size_t len, char *what, size_t what_len);

/* The same for the registered secrets alone, no built-in patterns: what
 * comes back from a server may hold any token of its own. */
bool dlp_scan_secrets(const struct dlp *d, const uint8_t *buf, size_t len, char *what, size_t what_len);

/*
 * Streaming scan for the registered secrets (no patterns), for a body of
 * any length read piece by piece: a secret is found whatever the pieces'
 * boundaries, and none of its bytes is ever released. Each feed holds back
 * the last dlp_window(d) bytes, which the next feed (or the end) releases.
 */
struct dlp_stream;

/* Bytes a stream holds back: 0 when d has no secret. */
size_t dlp_window(const struct dlp *d);
/* A stream over d (borrowed; must outlive it): 0 or -ENOMEM. */
int dlp_stream_new(const struct dlp *d, struct dlp_stream **out) WUR;
/* Wipes what it holds. NULL is fine. */
void dlp_stream_free(struct dlp_stream *s);
/* Scan p[0..n) as the continuation of everything fed before. Returns 1 on
 * a hit (what as dlp_scan; the stream must then be dropped), -ENOMEM, or
 * 0 with *out[0..*out_len) the bytes now safe to pass on: they point into
 * the stream and are valid until the next call. */
int dlp_stream_feed(struct dlp_stream *s, const uint8_t *p, size_t n, const uint8_t **out, size_t *out_len,
		    char *what, size_t what_len) WUR;
/* The end of the stream: the bytes held back, all scanned already. */
void dlp_stream_end(struct dlp_stream *s, const uint8_t **out, size_t *out_len);

/* The built-in pattern names and a one-line description each, for docs
 * and `airlock doctor`: NULL-terminated arrays of pairs. */
extern const char *const dlp_patterns[][2];

#endif
