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
 * closed list of privileged operations).
 *
 * The helper is forked while the sandbox builds itself (privsep_fork),
 * off the path the command waits on, and acts on the state it was forked
 * with, completed by one message in its first phase: PRIV_SETUP, sent by
 * the supervisor while still root, just before it drops (privsep_drop),
 * with what was decided since (the proxy's pid and step-up socket, the
 * review session's name, the overlay's mount). The setup phase ends with
 * it, and nothing can open it again: a supervisor taken over after the
 * drop finds it closed. Then one request carries an argument,
 * PRIV_HOST_LOOK's absolute path, answered with two bits; the one fd a
 * request may carry is an MCP connection from the sandbox, which the
 * helper does not read (the connection's monitor does).
 *
 * Unprivileged there is no helper: each operation runs in the supervisor,
 * through the same table (privsep_call).
 */

#include <stdbool.h>
#include <stdint.h>
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
	PRIV_SETUP = 'U',         /* + struct privsep_setup (and the overlay's mount): the setup phase's one
				   * request, unanswered */
	PRIV_MCP_CONN = 'M',      /* start a connection's monitor (mcpgw_conn_start) */
	PRIV_MCP_KILL = 'K',      /* fail closed: end every monitor */
	PRIV_MCP_STOP = 'S',      /* the session ends: let the monitors finish, bounded; remove the socket */
	PRIV_PROXY_SIGNAL = 'P',  /* SIGTERM the proxy (still root for a few ms after its start) */
	PRIV_PROXY_KILL = 'X',    /* SIGKILL it */
	PRIV_HOST_LOOK = 'L',     /* + an absolute path: FTRACE_HOST_* bits of it, as root sees the host */
	PRIV_FINISH = 'F',        /* the sandbox is gone: read review's change, land the unheld part as its owner */
	PRIV_END = 'Q',           /* a finished session's report (what is held; the overlay's mount let go), or
				   * the drop of one that never ran; the cgroup and sockets removed; exit */
};

/* From the helper, unasked: a connection's monitor ended, with its raw
 * wait status (an int) after the byte. */
#define PRIV_EV_MCP_ENDED 'E'
#define PRIV_DONE 'd'

/* Every request but PRIV_SETUP is answered with PRIV_DONE and one byte:
 * 0 but for PRIV_HOST_LOOK's bits. */

/* PRIV_SETUP's body: fixed size, every string NUL-terminated inside its
 * array; the overlay's mount rides with it when review holds one. */
struct privsep_setup {
	int32_t proxy_pid;       /* 0: no proxy */
	char step_up_sock[108];  /* "" : none */
	char review_id[64];      /* the session's name ("" without review) */
};

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
	bool set_up;              /* PRIV_SETUP was served: the setup phase is over */
	bool finished;            /* PRIV_FINISH was served: PRIV_END reports review's session */
	unsigned looks;           /* PRIV_HOST_LOOK served (PRIVSEP_MAX_LOOKS) */
};

struct privsep {
	pid_t pid; /* the helper, 0 when none (unprivileged, or not yet) */
	int fd;    /* our end of its socket, -1 when none */
	bool set_up; /* PRIV_SETUP sent: requests go to the helper (before, we are root and act here) */
	bool ended; /* it answered PRIV_END (or, without a helper, the end ran) */
	bool end_posted; /* PRIV_END sent, its answer not yet read (privsep_finish) */
	bool died;  /* it exited without */
};

#define PRIVSEP_INIT { .pid = 0, .fd = -1 }

/* Started as root, once the sandbox is cloned: fork the helper with ctx,
 * keeping in it only the fds ctx names; it waits for PRIV_SETUP. The
 * caller's copies of what the helper now owns alone (the review lock, the
 * MCP records' writing end) are closed. */
int privsep_fork(struct privsep *p, struct privsep_ctx *ctx, struct error *err) WUR;

/* Send PRIV_SETUP with what ctx holds now (see struct privsep_setup),
 * close the caller's copies of the overlay's mount and the review
 * session's name, then become uid and gid for good (no supplementary
 * groups, not dumpable, no_new_privs). A failure leaves the caller root
 * and the run must end. */
int privsep_drop(struct privsep *p, struct privsep_ctx *ctx, uid_t uid, gid_t gid, struct error *err) WUR;

/* Carry out op (with fd for PRIV_MCP_CONN; fd is the caller's still, and
 * closed by it): in the helper once it is set up, else here (before
 * PRIV_SETUP the caller is root; PRIV_END then also lets the helper go,
 * which exits without acting). While the
 * helper works, side_fd (or -1) is served with side(arg) when readable,
 * and monitors' ends are passed to the MCP gateway. Returns 0, or -EPIPE
 * when the helper is gone (the run must end). */
int privsep_call(struct privsep *p, struct privsep_ctx *ctx, enum privsep_op op, int fd, int side_fd,
		 void (*side)(void *), void *arg);

/* The run's end, once the sandbox is gone: PRIV_FINISH when review holds
 * a session, and PRIV_END sent behind it without waiting, so that the
 * helper says what is held and removes the cgroup and sockets while the
 * caller has the log sealed; the next privsep_call(PRIV_END) reads its
 * answer. Returns PRIV_FINISH's answer (0), or a negative errno when the
 * helper is gone. Without a helper both run here, now. */
int privsep_finish(struct privsep *p, struct privsep_ctx *ctx, bool review);

/* The looks the helper answers in a session; later ones are answered 0
 * (nothing there). A supervisor taken over could otherwise learn, name
 * after name, what root's private directories hold. */
#define PRIVSEP_MAX_LOOKS 4096

/* ftrace_host_look_local's bits for path: looked at here when the caller
 * may search every directory on the way, and asked of the helper
 * (PRIV_HOST_LOOK, root's view) only when it may not (EACCES: root's
 * 0700 home). 0 when the helper is gone, or for a relative path. */
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

/* The helper's loop, for the tests: serve requests on fd until PRIV_END
 * or EOF, then return the exit status the helper would have. */
int privsep_serve(int fd, struct privsep_ctx *ctx);

#endif
