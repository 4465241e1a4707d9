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

/* The built-in pattern names and a one-line description each, for docs
 * and `airlock doctor`: NULL-terminated arrays of pairs. */
extern const char *const dlp_patterns[][2];

#endif
