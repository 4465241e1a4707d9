/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_PROTO_PROXY_H
#define AIRLOCK_PROTO_PROXY_H

/*
 * The control channel between the supervisor and airlock-proxy: one
 * SOCK_SEQPACKET socket (sandbox/proto.h frames it, fds ride along with
 * SCM_RIGHTS). Each message starts with its type's letter. The order is
 * fixed: the proxy answers first (CA / NO_CA / ERROR), then takes any
 * number of CRED, ENV, STEP_UP and IDENTITY, and ends the exchange with
 * LISTEN, after which the socket is closed. A letter out of this table or
 * out of its place ends the proxy before it serves a byte.
 *
 * This header sits below every layer: both ends include it, and neither
 * includes the other's code.
 */

/* Where the proxy listens inside the sandbox's network namespace. */
#define PROXY_PORT 3128

/*   name              letter  direction          body, fds */
#define PROXY_MSG_TABLE(X)                                                                     \
	X(PROXY_MSG_CA,       'C', "proxy -> sup",   "the session CA's PEM certificate")      \
	X(PROXY_MSG_NO_CA,    'N', "proxy -> sup",   "nothing: no endpoint intercepts TLS")   \
	X(PROXY_MSG_ERROR,    'E', "proxy -> sup",   "why the proxy cannot start")            \
	X(PROXY_MSG_CRED,     'K', "sup -> proxy",   "name NUL placeholder NUL secret")       \
	X(PROXY_MSG_ENV,      'V', "sup -> proxy",   "name NUL value, for the leak scanner")  \
	X(PROXY_MSG_STEP_UP,  'S', "sup -> proxy",   "socket path; fd: the step-up socket")   \
	X(PROXY_MSG_IDENTITY, 'I', "sup -> proxy",   "signature, certificate; fd: signer")    \
	X(PROXY_MSG_LISTEN,   'L', "sup -> proxy",   "one PROXY_SOCK_* letter per fd")

enum proxy_msg {
#define PROXY_MSG_ENUM(name, letter, dir, body) name = letter,
	PROXY_MSG_TABLE(PROXY_MSG_ENUM)
#undef PROXY_MSG_ENUM
};

/* What each fd of a PROXY_MSG_LISTEN message is, in the order sent. */
enum proxy_sock {
	PROXY_SOCK_LISTEN4 = '4', /* the listener (always first) */
	PROXY_SOCK_LISTEN6 = '6', /* its IPv6 twin */
	PROXY_SOCK_DNS = 'D',     /* the sandbox's DNS socket (transparent mode) */
};

#endif
