/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_TLS_H
#define AIRLOCK_NET_TLS_H

/*
 * TLS for the egress proxy: reading the SNI of a ClientHello, a
 * per-session CA whose private key never leaves the proxy, leaf
 * certificates minted (and cached) per host, and the upstream client
 * context that verifies servers against the system trust store.
 */

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Parse the SNI host_name from the start of a TLS stream (one or more
 * handshake records holding a ClientHello). Returns 1 with sni filled
 * (lower-case, trailing dot removed), 0 when more bytes are needed, -ENOENT
 * when the ClientHello has no SNI, -EINVAL when the bytes are not a
 * well-formed ClientHello, -ENOSPC when the name does not fit in sni_len
 * (256 always suffices). sni is "" unless 1 is returned. Never reads
 * past len; bounded to 16 KiB. */
int tls_parse_sni(const uint8_t *buf, size_t len, char *sni, size_t sni_len);

struct tls_ca;

/* A new CA for this session: an EC P-256 key and a self-signed
 * certificate (CA:TRUE, pathlen 0, keyCertSign, valid from an hour ago
 * for 24 hours, CN "airlock session CA <random>"). *out is owned by the
 * caller. */
int tls_ca_new(struct tls_ca **out, struct error *err) WUR;
void tls_ca_free(struct tls_ca *ca);

/* The CA certificate in PEM (no key), owned by ca. */
const char *tls_ca_cert_pem(const struct tls_ca *ca);

/* A server SSL_CTX presenting a leaf for host (DNS SAN, or IP SAN for an
 * address), signed by the CA, ALPN http/1.1 only. Cached per host (up to
 * 1024 hosts, least recently used evicted). The returned context is
 * borrowed from the cache: valid until the next tls_ca_server_ctx call on
 * ca (which may evict it) or tls_ca_free. Make the SSL from it (SSL_new
 * and SSL_set_SSL_CTX take their own reference) before calling again.
 * NULL with err filled on failure (EINVAL: host is neither a DNS name nor
 * an IP address). Not thread-safe. */
SSL_CTX *tls_ca_server_ctx(struct tls_ca *ca, const char *host, struct error *err);

/* A client SSL_CTX that verifies peers against the system trust store and,
 * when extra_ca_file is non-NULL, that PEM bundle too; TLS 1.2+, ALPN
 * http/1.1. Owned by the caller (SSL_CTX_free). */
SSL_CTX *tls_client_ctx_new(const char *extra_ca_file, struct error *err);

/* Configure ssl (from tls_client_ctx_new) to send SNI and verify the
 * certificate names host (DNS name or IP address). */
int tls_client_set_host(SSL *ssl, const char *host, struct error *err) WUR;

#endif
