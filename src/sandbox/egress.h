/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_EGRESS_H
#define AIRLOCK_SANDBOX_EGRESS_H

/* The supervisor's side of the egress proxy: what it prepares before the
 * sandbox exists (session CA, leak scanner, decision log), the proxy
 * process it starts once the sandbox's listening socket arrives, and the
 * decision records it receives from it. */

#include <stdbool.h>
#include <sys/types.h>

#include "net/dlp.h"
#include "net/tls.h"
#include "policy/policy.h"
#include "sandbox/internal.h"
#include "sandbox/trace.h"
#include "util/buf.h"

struct egress {
	pid_t pid;          /* the proxy process, 0 when none */
	int records;        /* read end of the records pipe, -1 when none */
	int records_w;      /* write end, handed to the proxy */
	int log_fd;         /* network.log, or -1 */
	struct dlp *dlp;
	struct tls_ca *ca;
	struct buf partial; /* an incomplete record line */
	bool died;          /* the proxy exited while the sandbox ran */
};

/* Before clone: set up what the proxy needs and put the CA bundle in the
 * plan. A policy without network leaves e inert. */
int egress_prepare(const struct policy *pol, struct sandbox_plan *plan, struct egress *e,
		   struct error *err) WUR;

/* Fork the proxy serving listen_fd (which this call closes). */
int egress_start(struct egress *e, const struct policy *pol, const struct sandbox_plan *plan, int listen_fd,
		 struct error *err) WUR;

/* Read the records available on e->records: append them to the log, and
 * denials to the trace when t is non-NULL. */
void egress_read(struct egress *e, struct trace_log *t);

/* A child exited: true when it was the proxy. */
bool egress_reaped(struct egress *e, pid_t pid);

/* Stop the proxy, take its last records, release everything. */
void egress_stop(struct egress *e, struct trace_log *t);

#endif
