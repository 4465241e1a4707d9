/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The supervisor's privilege drop and its privileged helper (privsep.h).
 *
 * Why the drop keeps the loop working: the sandbox's user namespace is
 * made with the sandbox's uid as its owner (supervisor.c), and a process
 * of the owner's uid in the parent namespace holds every capability in
 * it. So the supervisor, once that uid, still reads a notifying caller's
 * memory (process_vm_readv), takes its fds (pidfd_getfd) and ptraces the
 * command, all checked against the sandbox's namespace, and holds no
 * capability over the host: a bug in the code that reads the agent's
 * memory, the proxy's records or the MCP gateways' records no longer
 * hands out root.
 *
 * What needs root after that is in the table below, and only there:
 *  - MCP connections: each is served by a monitor that starts the
 *    server's own sandbox, as root (the server's sandbox is another
 *    airlock run, which drops its own supervisor in turn), and then
 *    gives root up itself (sandbox/mcpgw.c);
 *  - the proxy's signals, in the few milliseconds after its start when it
 *    is still root (proxy.c drops before it reads the agent's first byte);
 *  - review mode's end: reading the change from the session directory,
 *    which is root's, and landing the unheld part in the workspace as its
 *    owner;
 *  - the cgroup's and the host sockets' removal.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

#include "sandbox/ftrace.h"
#include "sandbox/privsep.h"
#include "sandbox/proto.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"
#include "util/fds.h"
#include "util/statedir.h"

enum phase {
	PHASE_SETUP = 1 << 0, /* PRIV_SETUP not yet served: the supervisor is root */
	PHASE_RUN = 1 << 1,   /* the sandbox's init lives */
	PHASE_END = 1 << 2,   /* it exited */
};

/* What came with a request: the fd it takes (-1 otherwise) and the
 * bytes after the op's (NUL-terminated past len; a path for
 * PRIV_HOST_LOOK, struct privsep_setup for PRIV_SETUP, unaligned). */
struct privsep_req {
	enum privsep_op op;
	int fd;
	const char *path;
	size_t len;
};

static int op_mcp(struct privsep_ctx *c, const struct privsep_req *rq)
{
	if (rq->op == PRIV_MCP_CONN)
		mcpgw_conn_start(c->mcp, rq->fd);
	else if (rq->op == PRIV_MCP_KILL)
		mcpgw_kill_local(c->mcp);
	else {
		mcpgw_stop_conns(c->mcp);
		mcpgw_remove_socket(c->mcp);
	}
	return 0;
}

/* The proxy runs as the sandbox's uid when airlock can make it so, and
 * as root otherwise (egress.c): SIGTERM to stop, SIGKILL at the end. */
static int op_proxy(struct privsep_ctx *c, const struct privsep_req *rq)
{
	if (c->egress->pid > 0)
		kill(c->egress->pid, rq->op == PRIV_PROXY_KILL ? SIGKILL : SIGTERM);
	return 0;
}

static int op_end(struct privsep_ctx *c, const struct privsep_req *rq)
{
	(void)rq;
	/* A finished session is reported (and dropped when it holds
	 * nothing); one that never ran is dropped. */
	if (c->finished)
		review_run_report(c->rr);
	review_run_abort(c->rr);
	limits_cgroup_destroy(c->cg);
	if (c->egress->step_up_sock[0])
		unlink(c->egress->step_up_sock);
	mcpgw_remove_socket(c->mcp);
	return 0;
}

/* Review's change read once the sandbox is gone, the unheld part landed,
 * its flagged entries sent to the log (before the seal, which the
 * supervisor asks for once this is answered). What is held is said at
 * PRIV_END, while the writer seals. */
static int op_finish(struct privsep_ctx *c, const struct privsep_req *rq)
{
	(void)rq;
	review_run_finish(c->rr, c->workspace, c->audit);
	c->finished = true;
	return 0;
}

/* Does an absolute host path exist (lstat), and is it, or what it
 * links to, a directory? The supervisor's record of a refused call says
 * "hidden" when the sandbox answered ENOENT for a path the host has
 * (ftrace.c); the sandbox's uid cannot look into root's 0700 home. The
 * one request with an argument, answered with two bits: names, never
 * contents, and nothing is opened. */
static int op_host_look(struct privsep_ctx *c, const struct privsep_req *rq)
{
	/* A bound on what a supervisor taken over learns of root's files
	 * (existence, one name at a time): the supervisor asks only for
	 * paths its own uid cannot look at (privsep_host_look). */
	if (c->looks >= PRIVSEP_MAX_LOOKS)
		return 0;
	c->looks++;
	return (int)ftrace_host_look_local(rq->path);
}

/* What the supervisor decided since the fork, while still root (the
 * setup phase's one request: served once, first). Each field is checked
 * as though it were not trusted all the same: a malformed one ends the
 * helper, and with it the run. */
static int op_setup(struct privsep_ctx *c, const struct privsep_req *rq)
{
	struct privsep_setup setup, *su = &setup;
	if (rq->len != sizeof(setup))
		return -EINVAL;
	memcpy(&setup, rq->path, sizeof(setup));
	if (su->proxy_pid < 0 || !memchr(su->step_up_sock, '\0', sizeof(su->step_up_sock)) ||
	    !memchr(su->review_id, '\0', sizeof(su->review_id)))
		return -EINVAL;
	c->egress->pid = su->proxy_pid;
	snprintf(c->egress->step_up_sock, sizeof(c->egress->step_up_sock), "%s", su->step_up_sock);
	if (c->rr->active) {
		/* The session was renamed for the log's session once the
		 * writer answered (review_run_name): the name it has now. */
		char dir[PATH_MAX];
		struct error err = { 0 };
		if (!review_id_valid(su->review_id) || review_session_dir(su->review_id, dir, sizeof(dir), &err) < 0)
			return -EINVAL;
		char *d = strdup(dir);
		if (!d)
			return -ENOMEM;
		free(c->rr->dir);
		c->rr->dir = d;
		snprintf(c->rr->id, sizeof(c->rr->id), "%s", su->review_id);
	}
	if (rq->fd >= 0) {
		int fd = fcntl(rq->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -errno;
		review_run_hold_layer(c->rr, fd);
	}
	c->set_up = true;
	return 0;
}

/* body: a path follows the op's byte, absolute, NUL-free, shorter than
 * PATH_MAX. */
#define PRIVSEP_PATH ((size_t)-1)

enum fd_rule {
	FD_NONE,  /* a request with an fd is refused */
	FD_ONE,   /* one, always */
	FD_MAYBE, /* one or none */
};

static const struct privsep_op_def {
	enum privsep_op op;
	unsigned phases;
	enum fd_rule fds;
	size_t body; /* bytes that follow the op's: PRIVSEP_PATH for PRIV_HOST_LOOK's path, else exactly these */
	bool late;  /* out of its phase it is not served, but answered: it
		     * may have been sent as the phase ended */
	/* the answer's byte, or a negative errno that ends the helper */
	int (*run)(struct privsep_ctx *c, const struct privsep_req *rq);
} ops[] = {
	/* Once, first, and never again: the run's phases follow it. */
	{ PRIV_SETUP, PHASE_SETUP, FD_MAYBE, sizeof(struct privsep_setup), false, op_setup },
	/* A connection opened by the agent starts a server only while the
	 * session runs; one accepted as the sandbox exited is dropped. */
	{ PRIV_MCP_CONN, PHASE_RUN, FD_ONE, 0, true, op_mcp },
	{ PRIV_MCP_KILL, PHASE_RUN | PHASE_END, FD_NONE, 0, false, op_mcp },
	{ PRIV_MCP_STOP, PHASE_RUN | PHASE_END, FD_NONE, 0, false, op_mcp },
	{ PRIV_PROXY_SIGNAL, PHASE_RUN | PHASE_END, FD_NONE, 0, false, op_proxy },
	{ PRIV_PROXY_KILL, PHASE_RUN | PHASE_END, FD_NONE, 0, false, op_proxy },
	{ PRIV_HOST_LOOK, PHASE_RUN | PHASE_END, FD_NONE, PRIVSEP_PATH, false, op_host_look },
	/* Not while the agent can still write the layer: the change read
	 * would not be the change landed. The supervisor asks only once it
	 * has reaped the sandbox: a request before is not its own. */
	{ PRIV_FINISH, PHASE_END, FD_NONE, 0, false, op_finish },
	{ PRIV_END, PHASE_RUN | PHASE_END, FD_NONE, 0, false, op_end },
};

static const struct privsep_op_def *op_find(int op)
{
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if ((int)ops[i].op == op)
			return &ops[i];
	return NULL;
}

static enum phase phase_now(const struct privsep_ctx *c)
{
	if (!c->set_up)
		return PHASE_SETUP;
	if (c->sandbox_pidfd < 0)
		return PHASE_END;
	struct pollfd p = { .fd = c->sandbox_pidfd, .events = POLLIN };
	return poll(&p, 1, 0) == 1 ? PHASE_END : PHASE_RUN;
}

static bool send_byte(int fd, char b, const void *extra, size_t n)
{
	char msg[1 + sizeof(int)];
	msg[0] = b;
	memcpy(msg + 1, extra, n);
	return send(fd, msg, 1 + n, MSG_NOSIGNAL) == (ssize_t)(1 + n);
}

/* The helper's monitors that ended go to the supervisor, which decides
 * what a killed gateway means for the run. */
static int helper_fd = -1;

static void report_ended(struct mcpgw *g, int status)
{
	(void)g;
	(void)send_byte(helper_fd, PRIV_EV_MCP_ENDED, &status, sizeof(status));
}

static void reap_monitors(struct privsep_ctx *c)
{
	int st;
	pid_t w;
	while ((w = waitpid(-1, &st, WNOHANG)) > 0)
		(void)mcpgw_reaped(c->mcp, w, st);
}

/* The bytes after the op's are what it takes: a path (absolute,
 * NUL-free, shorter than PATH_MAX) or exactly its body's size. */
static bool body_ok(const struct privsep_op_def *d, const char *msg, int n, int size)
{
	if (d->body != PRIVSEP_PATH)
		return (size_t)n == 1 + d->body;
	return n >= 2 && n < size - 1 && msg[1] == '/' && !memchr(msg + 1, '\0', (size_t)n - 1);
}

/* The helper's last act, whatever ended it: the session's end, unless
 * it never began (the setup phase: the supervisor, root still, does the
 * end itself, and the state here is not yet the run's). */
static int helper_end(struct privsep_ctx *ctx, int status)
{
	if (ctx->set_up)
		(void)op_end(ctx, NULL);
	return status;
}

int privsep_serve(int fd, struct privsep_ctx *ctx)
{
	helper_fd = fd;
	ctx->mcp->ended = report_ended;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	_cleanup_close_ int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			reap_monitors(ctx);
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		/* One byte more than the longest request: a longer one is
		 * seen as such (proto_recv takes MSG_TRUNC's length). */
		static char msg[1 + PATH_MAX + 1];
		int fds[PROTO_MAX_FDS];
		int n = proto_recv(fd, msg, sizeof(msg), fds);
		if (n <= 0) /* the supervisor is gone: the end, without its requests */
			return helper_end(ctx, 0);
		const struct privsep_op_def *d = op_find((unsigned char)msg[0]);
		int nfds = 0;
		while (nfds < PROTO_MAX_FDS && fds[nfds] >= 0)
			nfds++;
		/* A request outside the table, out of its phase, with an fd it
		 * does not take, or with bytes it does not take is not served:
		 * the supervisor that sent it is not the one that was forked,
		 * and the session ends. */
		bool in_phase = d && (d->phases & phase_now(ctx));
		bool fds_ok = d && (d->fds == FD_ONE ? nfds == 1 : d->fds == FD_MAYBE ? nfds <= 1 : nfds == 0);
		if (!d || (!in_phase && !d->late) || !fds_ok || !body_ok(d, msg, n, (int)sizeof(msg))) {
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			return helper_end(ctx, 2);
		}
		msg[n] = '\0';
		int answer = 0;
		if (in_phase) {
			struct privsep_req rq = { d->op, nfds ? fds[0] : -1, msg + 1, (size_t)n - 1 };
			answer = d->run(ctx, &rq);
		}
		if (nfds)
			close(fds[0]);
		if (answer < 0)
			return helper_end(ctx, 2);
		reap_monitors(ctx);
		if (d->op == PRIV_SETUP)
			continue;
		char byte = (char)answer;
		if (!send_byte(fd, PRIV_DONE, &byte, 1) || d->op == PRIV_END)
			return 0;
	}
}

/* In the helper, right after the fork: nothing of the supervisor's but
 * what the operations use. */
static __attribute__((noreturn)) void helper_main(int fd, struct privsep_ctx *ctx, pid_t supervisor)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != supervisor)
		_exit(1);
	prctl(PR_SET_NAME, "airlock-priv");
	int keep[8];
	size_t n = 0;
	keep[n++] = fd;
	keep[n++] = ctx->sandbox_pidfd;
	if (ctx->rr->layer_held)
		keep[n++] = ctx->rr->layer;
	if (ctx->rr->locked)
		keep[n++] = ctx->rr->lock;
	keep[n++] = ctx->mcp->rec_wr; /* the monitors' records go straight to the supervisor */
	if (ctx->audit)
		keep[n++] = ctx->audit->events; /* review's file_flagged records */
	if (fds_close_from(3, keep, n) < 0)
		_exit(1);
	/* The user's secrets stay with the supervisor: the helper keeps of
	 * the environment only where airlock keeps its state (review's
	 * session is named at PRIV_SETUP), unless it starts MCP servers,
	 * whose sandboxes read it as any run does (env.pass, credential
	 * sources, the values the server's proxy scans for). */
	if (ctx->mcp->n_srv == 0 && caps_wipe_environ_but(statedir_env_vars) < 0)
		_exit(1);
	/* Closed above: no operation may take their numbers for them. */
	ctx->mcp->listen = ctx->mcp->rec_rd = -1;
	ctx->egress->control = ctx->egress->records = ctx->egress->log_fd = -1;
	/* The terminal's signals are the supervisor's to relay. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	_exit(privsep_serve(fd, ctx));
}

int privsep_fork(struct privsep *p, struct privsep_ctx *ctx, struct error *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_sys(err, errno, "socketpair");
	pid_t me = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return error_sys(err, e, "cannot start the privileged helper (fork)");
	}
	if (pid == 0) {
		close(sv[0]);
		helper_main(sv[1], ctx, me);
	}
	close(sv[1]);
	p->pid = pid;
	p->fd = sv[0];
	/* Held by the helper alone from here: the lock with the session,
	 * and the monitors' records end when the last monitor's does. */
	if (ctx->rr->locked)
		close(ctx->rr->lock);
	ctx->rr->locked = false;
	ctx->rr->lock = -1;
	if (ctx->mcp->rec_wr >= 0)
		close(ctx->mcp->rec_wr);
	ctx->mcp->rec_wr = -1;
	return 0;
}

/* PRIV_SETUP: what the helper's copy of ctx lacks since the fork. */
static int send_setup(struct privsep *p, const struct privsep_ctx *ctx)
{
	char msg[1 + sizeof(struct privsep_setup)];
	struct privsep_setup su = { .proxy_pid = ctx->egress->pid > 0 ? ctx->egress->pid : 0 };
	if (snprintf(su.step_up_sock, sizeof(su.step_up_sock), "%s", ctx->egress->step_up_sock) >=
		    (int)sizeof(su.step_up_sock) ||
	    snprintf(su.review_id, sizeof(su.review_id), "%s", ctx->rr->active ? ctx->rr->id : "") >=
		    (int)sizeof(su.review_id))
		return -ENAMETOOLONG;
	msg[0] = PRIV_SETUP;
	memcpy(msg + 1, &su, sizeof(su));
	int fd = ctx->rr->layer_held ? ctx->rr->layer : -1;
	int r = proto_send(p->fd, msg, sizeof(msg), &fd, fd >= 0 ? 1 : 0);
	if (r < 0)
		return r;
	p->set_up = true;
	return 0;
}

int privsep_drop(struct privsep *p, struct privsep_ctx *ctx, uid_t uid, gid_t gid, struct error *err)
{
	int r = p->pid > 0 && p->fd >= 0 ? send_setup(p, ctx) : -EPIPE;
	if (r < 0)
		return error_sys(err, -r, "cannot set the privileged helper up");
	/* Held by the helper alone from here: the overlay's last reference
	 * must go when it lets it go (review_run.c). */
	if (ctx->rr->layer_held)
		close(ctx->rr->layer);
	ctx->rr->layer_held = false;
	ctx->rr->layer = -1;
	free(ctx->rr->dir); /* the helper finishes or removes the session */
	ctx->rr->dir = NULL;
	/* Not dumpable: another process of this uid (the agent's own, seen
	 * from the host) must not read or ptrace the supervisor. */
	r = caps_drop_root(uid, gid, err);
	return r < 0 ? error_prefix(err, "the supervisor, for the sandbox's uid") : 0;
}

static void take_event(struct privsep_ctx *ctx, const char *msg, int n)
{
	int status;
	if (n == 1 + (int)sizeof(int) && msg[0] == PRIV_EV_MCP_ENDED) {
		memcpy(&status, msg + 1, sizeof(status));
		mcpgw_monitor_ended(ctx->mcp, status);
	}
}

bool privsep_read(struct privsep *p, struct privsep_ctx *ctx)
{
	for (;;) {
		char msg[8];
		int fds[PROTO_MAX_FDS];
		ssize_t n = recv(p->fd, msg, sizeof(msg), MSG_DONTWAIT);
		(void)fds;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0) {
			close(p->fd);
			p->fd = -1;
			return false;
		}
		take_event(ctx, msg, (int)n);
	}
}

/* The request, or with a helper not (yet) set up, its work here: 1 when
 * sent (the answer is to be read), 0 when done here (*here its answer),
 * or a negative errno. */
static int send_req(struct privsep *p, struct privsep_ctx *ctx, enum privsep_op op, int fd, const char *path,
		    int *here)
{
	bool last = op == PRIV_END;
	if (p->died)
		return -EPIPE;
	if (p->pid <= 0 || !p->set_up) {
		/* No helper, or one not yet set up: we are root (or never
		 * were). A helper waiting for its setup is let go at the end,
		 * and exits without acting (helper_end). */
		const struct privsep_op_def *d = op_find(op);
		struct privsep_req rq = { op, fd, path, path ? strlen(path) : 0 };
		p->ended = last;
		if (last && p->fd >= 0) {
			close(p->fd);
			p->fd = -1;
		}
		*here = d ? d->run(ctx, &rq) : -EINVAL;
		return *here < 0 ? *here : 0;
	}
	if (p->fd < 0)
		return -EPIPE;
	char req[1 + PATH_MAX];
	size_t len = path ? strlen(path) : 0;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	req[0] = (char)op;
	if (len)
		memcpy(req + 1, path, len);
	int r = proto_send(p->fd, req, 1 + len, &fd, fd >= 0 ? 1 : 0);
	return r < 0 ? r : 1;
}

/* The answer to the request in flight: its byte (>= 0) or a negative
 * errno; side_fd is served meanwhile. */
static int wait_answer(struct privsep *p, struct privsep_ctx *ctx, bool last, int side_fd, void (*side)(void *),
		       void *arg)
{
	for (;;) {
		struct pollfd pf[2] = { { .fd = p->fd, .events = POLLIN }, { .fd = side_fd, .events = POLLIN } };
		if (poll(pf, side_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (side_fd >= 0 && (pf[1].revents & (POLLIN | POLLHUP)))
			side(arg);
		if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		char msg[8];
		ssize_t n = recv(p->fd, msg, sizeof(msg), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(p->fd);
			p->fd = -1;
			return -EPIPE;
		}
		if (n == 2 && msg[0] == PRIV_DONE) {
			p->ended = last;
			return (unsigned char)msg[1];
		}
		take_event(ctx, msg, (int)n);
	}
}

static int call(struct privsep *p, struct privsep_ctx *ctx, enum privsep_op op, int fd, const char *path,
		int side_fd, void (*side)(void *), void *arg)
{
	/* The end is carried out once: posted early (privsep_finish), its
	 * answer is what is left to wait for. */
	if (p->ended)
		return op == PRIV_END ? 0 : -EPIPE;
	if (op == PRIV_END && p->end_posted) {
		p->end_posted = false;
		return p->fd < 0 ? -EPIPE : wait_answer(p, ctx, true, -1, NULL, NULL);
	}
	int here = 0;
	int r = send_req(p, ctx, op, fd, path, &here);
	if (r == 1)
		return wait_answer(p, ctx, op == PRIV_END, side_fd, side, arg);
	return r < 0 ? r : here;
}

int privsep_finish(struct privsep *p, struct privsep_ctx *ctx, bool review)
{
	if (p->ended || p->end_posted)
		return -EPIPE;
	int here = 0, r = 0, sent = 0;
	if (review && (r = send_req(p, ctx, PRIV_FINISH, -1, NULL, &here)) < 0)
		return r;
	sent = r;
	/* Queued behind it: the helper goes on to the end as soon as it has
	 * answered, without waiting to be woken for it. */
	p->end_posted = send_req(p, ctx, PRIV_END, -1, NULL, &here) == 1;
	return sent == 1 ? wait_answer(p, ctx, false, -1, NULL, NULL) : 0;
}

int privsep_call(struct privsep *p, struct privsep_ctx *ctx, enum privsep_op op, int fd, int side_fd,
		 void (*side)(void *), void *arg)
{
	int r = call(p, ctx, op, fd, NULL, side_fd, side, arg);
	return r < 0 ? r : 0;
}

unsigned privsep_host_look(struct privsep *p, struct privsep_ctx *ctx, const char *path)
{
	if (path[0] != '/')
		return 0;
	/* Most refused paths are in directories our uid may search: no
	 * round trip, and nothing asked of root that we could see. */
	struct stat st;
	if (lstat(path, &st) == 0 || errno != EACCES)
		return ftrace_host_look_local(path);
	int r = call(p, ctx, PRIV_HOST_LOOK, -1, path, -1, NULL, NULL);
	return r < 0 ? 0 : (unsigned)r;
}

bool privsep_reaped(struct privsep *p, pid_t pid)
{
	if (p->pid <= 0 || pid != p->pid)
		return false;
	p->pid = 0;
	p->died = !p->ended;
	return true;
}

/* privsep_pidns_start's child, in the sandbox's pid namespace, on the
 * caller's memory while the caller waits: two system calls (their errno
 * is the caller's, which clone's success makes moot) and an exit status
 * that says which step failed; no stdio, no allocation, no handler. */
static int pidns_write(void *arg)
{
	(void)arg;
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(errno == ENOENT || errno == EROFS ? 0 : 2);
	_exit(write(fd, "2", 1) == 1 ? 0 : 3);
}

pid_t privsep_pidns_start(pid_t child, struct error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)child);
	_cleanup_close_ int ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return error_sys(err, errno, "cannot open %s", path);
	_cleanup_close_ int own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (own < 0)
		return error_sys(err, errno, "cannot open /proc/self/ns/pid");
	/* Executable memfds run bytes that never were a file, past every
	 * exec rule (Landlock does not judge the kernel's internal mounts).
	 * vm.memfd_noexec = 2 in the sandbox's pid namespace makes every
	 * memfd sealed non-executable and refuses MFD_EXEC (the filter
	 * refuses it too). The value belongs to the writer's pid namespace,
	 * and the kernel lets only the host's root uid write it (test_perm in
	 * proc_sysctl.c), with CAP_SYS_ADMIN over the namespace. setns only
	 * moves the caller's children: the one started between the two setns
	 * calls is in the sandbox's namespace, and nothing else of ours is.
	 * Linux < 6.3 has no such setting (ENOENT), and a host /proc/sys
	 * mounted read-only (EROFS) cannot take it: the run goes on as an
	 * unprivileged one does, and docs/sandbox.md says what that leaves. */
	if (setns(ns, CLONE_NEWPID) < 0)
		return error_sys(err, errno, "cannot join the sandbox's pid namespace");
	/* The writer shares our memory and runs on a stack of its own while
	 * we wait (CLONE_VFORK), as posix_spawn's child does: a copy of the
	 * address space costs a millisecond on some virtual machines, where
	 * this takes tens of microseconds. It makes two system calls and
	 * exits; the signals it could take are blocked (run_clone). */
	static char stack[16384] __attribute__((aligned(16)));
	pid_t pid = clone(pidns_write, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	int e = errno;
	/* Back at once: a later child (the helper, an MCP monitor) must not
	 * be born in the sandbox's namespace. Our active namespace is the
	 * one we left, which setns always allows; should it not, no child of
	 * this process can be trusted to start where it should. */
	if (setns(own, CLONE_NEWPID) < 0) {
		if (pid > 0)
			kill(pid, SIGKILL);
		_exit(SANDBOX_EXIT_SETUP);
	}
	if (pid < 0)
		return error_sys(err, e, "clone");
	return pid;
}

int privsep_pidns_wait(pid_t writer, struct error *err)
{
	int st = 0;
	pid_t w;
	while ((w = waitpid(writer, &st, 0)) < 0 && errno == EINTR)
		;
	if (w != writer || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return error_set(err, EPERM, "cannot set vm.memfd_noexec to 2 in the sandbox's pid namespace (step %d)",
				 w == writer && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
