/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_RESPSCAN_H
#define AIRLOCK_NET_RESPSCAN_H

/*
 * What comes back from an endpoint a credential is bound to. The broker
 * puts a secret into requests the agent sends there; a server that echoes
 * its request (an echo route, a debug or error page, TRACE) would hand the
 * secret to the agent, which could then send it anywhere. Every response
 * from such an endpoint is scanned for the broker's secrets in all the
 * encodings the leak scanner knows (dlp.h): the head, and the body
 * whatever its framing (Content-Length, chunked, until close), read as a
 * stream with a held-back window, so a secret split over reads or chunks
 * is found before any of its bytes is passed on. A hit withholds the
 * response (502) or, once its head went out, cuts the connection. A body
 * in a content coding the scanner cannot read is refused, not passed.
 *
 * No other response is touched: the cost falls on bound endpoints only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/dlp.h"
#include "net/http.h"

/* Make a request to a bound endpoint ask for what the scanner can read:
 * Accept-Encoding replaced by identity (without the field any coding is
 * acceptable, RFC 9110 §12.5.3), Range and If-Range removed (a slice of an
 * echo is a piece of the secret, which no window can recognise). Header
 * values point to constants. Returns 0, or -E2BIG when req has no room
 * for the header added: then the request must be refused. */
int respscan_prepare(struct http_request *req) WUR;

struct respscan_io {
	void *ctx;
	ssize_t (*up_read)(void *ctx, void *p, size_t n);        /* as read(2) */
	bool (*down_write)(void *ctx, const void *p, size_t n);  /* all of it, or false */
};

struct respscan_result {
	int status;        /* the upstream's final status, 0 if none was read */
	uint64_t down;     /* bytes passed to the client */
	bool sent;         /* some of the final response's bytes went out */
	bool refused;      /* withheld or cut: record a denial with reason */
	bool bad_gateway;  /* the upstream's answer was not valid HTTP/1.1 */
	bool complete;     /* the whole response went out: the client may go on */
	bool upstream_ok;  /* and the upstream connection may carry another request */
	char reason[192];  /* never holds a secret */
};

/* Forward one response (after 1xx interim ones) from io's upstream to its
 * client, scanned for d's secrets. method is the request's. On refused or
 * bad_gateway with !sent the caller answers 502 itself; with sent it must
 * close the client connection. */
void respscan_forward(const struct dlp *d, const struct respscan_io *io, const char *method,
		      struct respscan_result *res);

/* The first content or transfer coding of a response other than identity
 * (and, in Transfer-Encoding, chunked), as "Field coding" in name, or false. */
bool respscan_coded(const struct http_header *h, size_t n, char *name, size_t name_len);

#endif
