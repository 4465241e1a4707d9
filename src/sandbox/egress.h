/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_EGRESS_H
#define AIRLOCK_SANDBOX_EGRESS_H

/* The supervisor's side of the egress proxy: it starts airlock-proxy
 * before the sandbox exists (the proxy makes the session CA, whose
 * certificate goes into the sandbox), hands it the sandbox's listening
 * socket once that exists, and takes the decision records it sends. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "sandbox/auditlog.h"
#include "sandbox/internal.h"
#include "sandbox/trace.h"
#include "util/buf.h"

struct egress {
	pid_t pid;          /* the proxy process, 0 when none */
	int control;        /* our end of the control socket, -1 when none */
	int records;        /* read end of the records pipe, -1 when none */
	int log_fd;         /* network.log, or -1 */
	uint64_t log_bytes; /* what this session appended to it */
	uint64_t log_max;   /* audit.max_size: network.log is bounded like the decision log */
	bool log_full;      /* it reached log_max: the run must end */
	struct buf partial; /* an incomplete record line */
	bool died;          /* the proxy exited while the sandbox ran */
	struct auditlog *audit; /* borrowed: where every record also goes, or NULL */
	bool audit_lost;    /* a record could not reach the audit writer */
	char step_up_sock[4200]; /* the proxy's control socket for MCP step-up over HTTP, or "" */
	/* A supervisor that gave up root cannot signal the proxy in the
	 * moment after its start when it still is root: signal_root(arg,
	 * sig) asks the privileged helper (privsep.h), or NULL. */
	void (*signal_root)(void *arg, int sig);
	void *signal_arg;
};

#define EGRESS_INIT { .control = -1, .records = -1, .log_fd = -1 }

/* Before clone: start the proxy and put the CA bundle in the plan. A
 * policy without network leaves e inert. */
int egress_prepare(const struct policy *pol, struct sandbox_plan *plan, struct egress *e,
		   struct error *err) WUR;

/* identity.header: send the certificate and the signing channel the
 * audit writer handed over (a->identity, a->sign_fd) to the proxy, then
 * drop our copies. Before egress_start. Nothing to do without them. */
int egress_identity(struct egress *e, struct auditlog *a, struct error *err) WUR;

/* Hand the proxy its sockets from inside the sandbox: fds[0] the
 * listener, fds[1] its IPv6 twin and fds[2] the DNS socket (transparent
 * mode; -1 when absent). This call closes them. */
int egress_start(struct egress *e, const int fds[3], struct error *err) WUR;

/* The records pipe's size: what one egress_read takes at most. */
#define EGRESS_RECORDS_PIPE (256 * 1024)

/* Read the records available on e->records: append them to the log, and
 * denials to the trace when t is non-NULL. Returns true when it read
 * any. */
bool egress_read(struct egress *e, struct trace_log *t);

/* A child exited: true when it was the proxy. */
bool egress_reaped(struct egress *e, pid_t pid);

/* Stop the proxy, take its last records, release everything. */
void egress_stop(struct egress *e, struct trace_log *t);

#endif
