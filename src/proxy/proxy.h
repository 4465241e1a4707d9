/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_PROXY_H
#define AIRLOCK_NET_PROXY_H

/*
 * The egress proxy: a process of its own, forked by the supervisor, that
 * serves the listening socket created inside the sandbox's network
 * namespace. Every request is decided by the policy; every decision is
 * sent as one JSON line on records_fd to the supervisor, which logs it.
 * The proxy holds no file of the supervisor's and no signing key: with
 * identity.header the audit writer signs the Airlock-Identity header for
 * it (audit/signproto.h). It drops to an unprivileged uid before it
 * reads a byte from the sandbox.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/identity.h"
#include "net/broker.h"
#include "net/dlp.h"
#include "net/tls.h"
#include "policy/policy.h"
#include "proto/proxy.h"

#define PROXY_MAX_CONNECTIONS 512
#define PROXY_DNS_NAMES 65536       /* distinct names the sandbox's DNS answers */
#define PROXY_IDLE_SECONDS 120      /* no byte either way */
#define PROXY_HEAD_SECONDS 30       /* to send a complete request head */
#define PROXY_TOTAL_SECONDS 3600    /* one connection, whatever it does */

/* Request bodies held at once, all connections together, when the policy
 * sets no sandbox.limits.memory. */
#define PROXY_BODY_BUDGET_DEFAULT (256ULL * 1024 * 1024)
/* Framing and read slack of one body over max_body (chunk-size lines,
 * the last read). */
#define PROXY_BODY_SLACK (128ULL * 1024)

/* The bytes of request bodies the proxy may hold at once for the session,
 * all connections together: sandbox.limits.memory when set (the agent
 * makes the host hold no more than it may hold itself), else
 * PROXY_BODY_BUDGET_DEFAULT; never less than one body of
 * network.leak_scan.max_body (and its slack), which the policy allows. */
uint64_t proxy_body_budget(const struct policy *pol);

/* What one open connection may make the proxy hold besides a body: its
 * fiber's stack (256 KiB, util/fiber.c), the head and response buffers,
 * two TLS states. */
#define PROXY_CONN_COST (512ULL * 1024)
#define PROXY_MIN_CONNECTIONS 32

/* Connections open at once: PROXY_MAX_CONNECTIONS, or under
 * sandbox.limits.memory as many as that memory pays for at
 * PROXY_CONN_COST each (never fewer than PROXY_MIN_CONNECTIONS): 512 idle
 * connections held about 170 MB of the host's memory for an agent limited
 * to 64 MiB. */
unsigned proxy_max_connections(const struct policy *pol);

struct proxy_config {
	const struct policy *policy;   /* borrowed */
	int listen_fd;                 /* bound and listening, inside the sandbox's netns */
	int listen6_fd;                /* transparent mode: the same on [::1], or -1 */
	int dns_fd;                    /* transparent mode: UDP 127.0.0.1:53 in the netns, or -1 */
	bool transparent;              /* connections arrive redirected (SO_ORIGINAL_DST) */
	int records_fd;                /* write end of the pipe to the supervisor */
	struct dlp *dlp;               /* secrets to refuse sending out; may be NULL */
	struct broker *broker;         /* credentials to swap in where bound; may be NULL */
	struct tls_ca *ca;             /* the session CA, when some endpoint intercepts */
	struct identity_signer *identity; /* identity.header: has Airlock-Identity signed; else NULL */
	bool observe;                  /* sandbox.mode: observe: record what the policy would deny, let it through */
	int step_up_fd;                /* listening control socket for MCP step-up over HTTP, or -1 */
	const char *step_up_path;      /* its path, for the prompt */
	uid_t drop_uid;                /* ids to drop to when started as root */
	gid_t drop_gid;
	/* The proxy's own sandbox (airlock-proxy: proxy_contain), entered
	 * after the ids are dropped and before any thread starts or a byte
	 * of the agent's is read; NULL for none (the unit tests). Returns 0
	 * or a negative errno with err set: the proxy then exits. */
	int (*contain)(const struct policy *pol, struct error *err);
};

/* proxy_contain.c, linked into airlock-proxy alone: the proxy's own
 * Landlock domain and seccomp filter, for every thread, started or to
 * come (proxy_config.contain). */
int proxy_contain(const struct policy *pol, struct error *err) WUR;

/* Run the proxy until the listening socket's sandbox is gone (the
 * supervisor kills us). Never returns. */
__attribute__((noreturn)) void proxy_main(const struct proxy_config *cfg);

#endif
