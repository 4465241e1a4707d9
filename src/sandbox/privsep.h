/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_PRIVSEP_H
#define AIRLOCK_SANDBOX_PRIVSEP_H

/*
 * Started as root, the supervisor gives up root before its loop reads the
 * agent's first request (privsep.c): it becomes the sandbox's uid, which
 * owns the sandbox's user namespace, so it keeps what the loop needs (the
 * agent's memory for seccomp notifications, ptrace for the tracer) and
 * nothing over the host. What still needs root after that is a request to
 * a helper forked before the drop, the privileged helper, which takes
 * only the operations of the table below, each in the phases it names
 * (OpenSSH's monitor: requests in a table, gated by phase; bubblewrap's
 * closed list of privileged operations). The helper acts on the state it
 * was forked with: one request carries an argument, PRIV_HOST_LOOK's
 * absolute path, answered with two bits; the one fd a request may carry
 * is an MCP connection from the sandbox, which the helper does not read
 * (the connection's monitor does).
 *
 * Unprivileged there is no helper: each operation runs in the supervisor,
 * through the same table (privsep_call).
 */

#include <stdbool.h>
#include <sys/types.h>

#include "sandbox/auditlog.h"
#include "sandbox/egress.h"
#include "sandbox/internal.h"
#include "sandbox/mcpgw.h"
#include "sandbox/review_run.h"
#include "util/error.h"

/* The requests, one byte each; an MCP connection's fd rides with
 * PRIV_MCP_CONN. Each is answered PRIV_DONE once carried out. */
enum privsep_op {
	PRIV_MCP_CONN = 'M',      /* start a connection's monitor (mcpgw_conn_start) */
	PRIV_MCP_KILL = 'K',      /* fail closed: end every monitor */
	PRIV_MCP_STOP = 'S',      /* the session ends: let the monitors finish, bounded; remove the socket */
	PRIV_PROXY_SIGNAL = 'P',  /* SIGTERM the proxy (still root for a few ms after its start) */
	PRIV_PROXY_KILL = 'X',    /* SIGKILL it */
	PRIV_HOST_LOOK = 'L',     /* + an absolute path: FTRACE_HOST_* bits of it, as root sees the host */
	PRIV_FINISH = 'F',        /* the sandbox is gone: review's change read, the unheld part landed as its
				   * owner, what is held said, the overlay's mount let go; then PRIV_END's work */
	PRIV_END = 'Q',           /* drop a session that never ran, remove the cgroup and sockets; exit */
};

/* From the helper, unasked: a connection's monitor ended, with its raw
 * wait status (an int) after the byte. */
#define PRIV_EV_MCP_ENDED 'E'
#define PRIV_DONE 'd'

/* Every request is answered with PRIV_DONE and one byte: 0 but for
 * PRIV_HOST_LOOK's bits. */

/* What the operations act on: the supervisor's own state, which the
 * helper has as it was at the fork. Pointers are borrowed. */
struct privsep_ctx {
	struct mcpgw *mcp;
	struct egress *egress;
	struct review_run *rr;
	const char *workspace;
	struct auditlog *audit;   /* NULL without a log */
	struct cgroup_handle *cg;
	int sandbox_pidfd;        /* the sandbox's init: its exit opens the end phase */
};

struct privsep {
	pid_t pid; /* the helper, 0 when none (unprivileged, or not yet) */
	int fd;    /* our end of its socket, -1 when none */
	bool ended; /* it answered PRIV_END or PRIV_FINISH (or, without a helper, they ran) */
	bool died;  /* it exited without */
};

#define PRIVSEP_INIT { .pid = 0, .fd = -1 }

/* Started as root: fork the helper with ctx, keeping in it only the fds
 * ctx names, then become uid and gid for good (no supplementary groups,
 * not dumpable, no_new_privs). The caller's copies of what the helper now
 * owns alone (the overlay's mount, the review lock, the MCP records'
 * writing end) are closed. A failure leaves the caller root and the run
 * must end. */
int privsep_start(struct privsep *p, struct privsep_ctx *ctx, uid_t uid, gid_t gid, struct error *err) WUR;

/* Carry out op (with fd for PRIV_MCP_CONN; fd is the caller's still, and
 * closed by it): in the helper when there is one, else here. While the
 * helper works, side_fd (or -1) is served with side(arg) when readable,
 * and monitors' ends are passed to the MCP gateway. Returns 0, or -EPIPE
 * when the helper is gone (the run must end). */
int privsep_call(struct privsep *p, struct privsep_ctx *ctx, enum privsep_op op, int fd, int side_fd,
		 void (*side)(void *), void *arg);

/* PRIV_HOST_LOOK: ftrace_host_look_local's bits for path as the helper
 * sees the host (0 when the helper is gone, or for a relative path). */
unsigned privsep_host_look(struct privsep *p, struct privsep_ctx *ctx, const char *path);

/* The helper's socket is readable (the event loop polls p->fd): take its
 * unasked messages. Returns false once it is gone. */
bool privsep_read(struct privsep *p, struct privsep_ctx *ctx);

/* A child exited: true when it was the helper. */
bool privsep_reaped(struct privsep *p, pid_t pid);

/* Started as root: what the sandbox's pid namespace must hold that only
 * the host's root may set (vm.memfd_noexec), set by a short-lived child
 * forked into it, which runs while the sandbox builds itself. Its pid, or
 * a negative errno with err set; privsep_pidns_wait takes its word (0,
 * or a negative errno with err set), before the command may start. */
pid_t privsep_pidns_start(pid_t child, struct error *err) WUR;
int privsep_pidns_wait(pid_t writer, struct error *err) WUR;

/* The helper's loop, for the tests: serve requests on fd until PRIV_END,
 * PRIV_FINISH or EOF, then return the exit status the helper would have. */
int privsep_serve(int fd, struct privsep_ctx *ctx);

#endif
