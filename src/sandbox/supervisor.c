/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The supervisor: builds the plan, starts the child in its namespaces,
 * writes its id maps, joins it to its cgroup, then relays the terminal,
 * forwards signals, enforces the wall-clock limit, answers seccomp
 * notifications when tracing, and turns the end of the run into an exit
 * code. It stays outside every namespace the sandbox has.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "sandbox/sandbox.h"
#include "sandbox/egress.h"
#include "sandbox/fsrules.h"
#include "sandbox/ftrace.h"
#include "sandbox/mcpgw.h"
#include "sandbox/privsep.h"
#include "sandbox/landlock_abi.h"
#include "sandbox/review_run.h"
#include "sandbox/seccomp_bpf.h"
#include "sandbox/trace.h"
#include "policy/protect.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/statedir.h"

#define CLONE_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

struct term {
	int master;
	int out; /* the host terminal the pty's output goes to */
	bool raw;
	struct termios saved;
};

static void term_restore(struct term *t)
{
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &t->saved);
	t->raw = false;
}

/* When stdin is a terminal the command gets a pty of the sandbox's own
 * (see child.c): job control and a real terminal, without ever holding the
 * host's one (TIOCSTI on it could type into the user's shell after we
 * exit). Here: copy the host terminal's settings and size onto it and put
 * the host terminal in raw mode for the relay. */
static void term_attach(struct term *t, int master)
{
	t->master = master;
	t->out = isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO) ? STDOUT_FILENO : STDERR_FILENO;
	struct winsize ws;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
	if (tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		tcsetattr(master, TCSANOW, &t->saved);
		struct termios raw = t->saved;
		cfmakeraw(&raw);
		if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0)
			t->raw = true;
	}
}

static bool copy_fd(int from, int to)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return false;
		}
		off += w;
	}
	return true;
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static const int relayed[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

struct run_state {
	pid_t child;
	int sync;
	int notify;
	int guard;  /* filesystem.protect: socket to the guard (guard.c), or -1 */
	int status; /* init's raw wait status */
	int cmd_status; /* the command's raw status as reported by init, or -1 */
	int timer; /* sandbox.limits.wall: an armed timerfd, or -1 */
	bool wall_hit;
	struct trace_log *trace;
	struct ftrace *ftrace;
	struct egress egress;
	struct auditlog audit;
	struct mcpgw mcp; /* the session's MCP gateway (mcpgw.h) */
	bool protect; /* creating calls come through the notify fd */
	bool sockguard; /* so do connect and sendto (guard.c) */
	struct guard_net net; /* what guard_handle_socket needs of the plan */
	/* The decision log's writer has not answered yet (see
	 * audit_now_ready): the command may have started, but no decision is
	 * taken until the writer can take its record. */
	bool audit_pending;
	bool audit_failed;       /* it answered that it could not start, or died first */
	struct error audit_err;  /* ... and why */
	int net_fds[3];          /* the proxy's listener, IPv6 listener, DNS socket until then, or -1 */
	const char *log_label;   /* sandbox_opts.log_label */
	struct review_run *rr;
	/* Started as root: the helper that keeps root once the supervisor
	 * has dropped it (privsep.h), and what its operations act on. */
	bool privileged;
	uid_t uid;
	gid_t gid;
	struct privsep priv;
	struct privsep_ctx pctx;
};

/* Denials the sandbox reports go to the audit log too. */
static void audit_sink(void *ctx, const char *line, size_t len)
{
	(void)auditlog_event(ctx, line, len);
}

/* A creating call for the guard to judge and perform. An open without
 * O_CREAT comes to be noted (SECCOMP_TRACE_WRITES) or, with O_TMPFILE
 * and a set-ID mode, refused: the guard took those before the log
 * noted writes, and takes them still. */
static bool to_guard(const struct seccomp_notif *req)
{
	int nr = req->data.nr;
	if (!guard_syscall(nr))
		return false;
	if (nr != SYS_open && nr != SYS_openat)
		return true;
	uint64_t flags = req->data.args[nr == SYS_open ? 1 : 2], mode = req->data.args[nr == SYS_open ? 2 : 3];
	return (flags & O_CREAT) || ((flags & O_TMPFILE) == O_TMPFILE && (mode & (S_ISUID | S_ISGID)));
}

static void handle_notify(struct run_state *s)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	memset(&req, 0, sizeof(req));
	if (ioctl(s->notify, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return;
	if (req.data.nr == SYS_memfd_create && seccomp_memfd_handle(s->notify, &req))
		return;
	if (s->protect && to_guard(&req)) {
		guard_handle(s->notify, s->guard, &req, s->trace);
		return;
	}
	if (s->sockguard && guard_socket_syscall(req.data.nr)) {
		guard_handle_socket(s->notify, s->guard, &req, s->trace, &s->net);
		return;
	}
	if (ftrace_notified(s->ftrace, s->trace, s->notify, &req))
		return;
	trace_record_syscall(s->trace, &req);
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.error = -EPERM;
	(void)ioctl(s->notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* The writer's answer: the log is open and its certificate written, or it
 * could not start. With a log, this is the gate of every decision.
 *
 * At SECCOMP_TRACE_WRITES (the log on, the default) the command starts
 * while the writer may still be starting: nothing holds it after the
 * sandbox is built. What holds the agent instead is that every exec is a
 * user notification, the command's first one too, and that the
 * supervisor reads no notification, takes no MCP connection and gives
 * the proxy no listener until this function has run (event_loop leaves
 * them out of its poll while s->audit_pending). An agent racing its first
 * exfiltration against the writer's start (a request to the proxy, a
 * write to a protected path, a refused exec, an MCP call, sent the
 * instant it runs) gets nothing answered, allowed or denied, before the
 * writer can take the record: its first instruction runs only after its
 * exec was let continue, and that exec waited in the kernel for the
 * listener the supervisor does not read yet. A writer that cannot start
 * ends the run with the command still blocked in that exec: nothing it
 * would do ran.
 *
 * WARNING: every channel that produces a record must stay shut while
 * s->audit_pending; a new one (a socket the supervisor serves, a helper
 * that answers the agent) is shut there too, or is started from here.
 *
 * With start_proxy, the proxy gets the session key for the identity
 * header, then its sockets (egress_start closes its control socket). */
static int drop_root(struct run_state *s, struct error *err);

static int audit_now_ready(struct run_state *s, bool start_proxy, struct error *err)
{
	s->audit_pending = false;
	/* Reaped before it answered: auditlog_ready, seeing no writer, would
	 * take that for a run without a log. */
	if (s->audit.died)
		return error_set(err, EIO, "the audit writer did not start: it exited before answering");
	int r = auditlog_ready(&s->audit, err);
	if (r < 0)
		return r;
	if (s->log_label && s->audit.path[0])
		fprintf(stderr, "%s: %s\n", s->log_label, s->audit.path);
	if ((r = review_run_name(s->rr, s->audit.session[0] ? s->audit.session : NULL, err)) < 0 ||
	    (r = egress_identity(&s->egress, &s->audit, err)) < 0)
		return r;
	if (start_proxy && s->net_fds[0] >= 0) {
		r = egress_start(&s->egress, s->net_fds, err);
		/* egress_start closed them, whatever it returned. */
		s->net_fds[0] = s->net_fds[1] = s->net_fds[2] = -1;
	}
	/* Root goes here, before the first decision: until now the loop
	 * has heard only the writer, init, the terminal and signals. */
	if (r >= 0 && start_proxy && s->privileged)
		r = drop_root(s, err);
	/* What the environment held has gone where it is used: the proxy's
	 * leak scanner has its secret-looking values, the command its
	 * env.pass, the proxy its own few. The loop, which reads the agent's
	 * memory and the proxy's records, keeps none of it but where the
	 * state is, unless it forks MCP monitors itself (unprivileged, with
	 * MCP servers), whose runners read it as any run does. */
	if (r >= 0 && start_proxy && (s->mcp.n_srv == 0 || s->priv.set_up) &&
	    (r = caps_wipe_environ_but(statedir_env_vars)) < 0)
		r = error_sys(err, -r, "cannot clear the supervisor's environment");
	return r;
}

static void priv_kill_monitors(void *arg)
{
	struct run_state *s = arg;
	if (privsep_call(&s->priv, &s->pctx, PRIV_MCP_KILL, -1, -1, NULL, NULL) < 0 && s->child > 0)
		kill(s->child, SIGKILL);
}

static void read_mcp_records(void *arg)
{
	(void)mcpgw_read(arg);
}

static void priv_stop_monitors(void *arg)
{
	struct run_state *s = arg;
	(void)privsep_call(&s->priv, &s->pctx, PRIV_MCP_STOP, -1, s->mcp.rec_rd, read_mcp_records, &s->mcp);
}

static void priv_signal_proxy(void *arg, int sig)
{
	struct run_state *s = arg;
	(void)privsep_call(&s->priv, &s->pctx, sig == SIGKILL ? PRIV_PROXY_KILL : PRIV_PROXY_SIGNAL, -1, -1, NULL,
			   NULL);
}

static unsigned priv_host_look(void *arg, const char *path)
{
	struct run_state *s = arg;
	return privsep_host_look(&s->priv, &s->pctx, path);
}

/* Started as root, while the sandbox builds itself: the privileged
 * helper, forked here rather than at the drop, where the command's first
 * call would wait for the copy of our address space. */
static int fork_helper(struct run_state *s, struct error *err)
{
	s->pctx.sandbox_pidfd = (int)syscall(SYS_pidfd_open, s->child, 0);
	if (s->pctx.sandbox_pidfd < 0)
		return error_sys(err, errno, "pidfd_open");
	int r = privsep_fork(&s->priv, &s->pctx, err);
	close(s->pctx.sandbox_pidfd);
	s->pctx.sandbox_pidfd = -1;
	return r;
}

/* Started as root: set the privileged helper up, then become the
 * sandbox's uid for the rest of the run (privsep.c says what it keeps). */
static int drop_root(struct run_state *s, struct error *err)
{
	s->privileged = false;
	int r = privsep_drop(&s->priv, &s->pctx, s->uid, s->gid, err);
	if (r < 0)
		return r;
	/* Monitors are started only for a connection to the gateway's
	 * socket: without one there are none to end. */
	if (s->mcp.listen >= 0) {
		s->mcp.kill_all = priv_kill_monitors;
		s->mcp.stop_all = priv_stop_monitors;
		s->mcp.remote = s;
	}
	s->egress.signal_root = priv_signal_proxy;
	s->egress.signal_arg = s;
	ftrace_set_host_look(priv_host_look, s);
	return 0;
}

/* One message from init: the command's exit status is the only one
 * expected after setup; any fd attached is refused. Returns false at EOF
 * (and closes the socket). */
static bool take_sync_message(struct run_state *s)
{
	char buf[64];
	int fds[PROTO_MAX_FDS];
	int n = proto_recv(s->sync, buf, sizeof(buf), fds);
	for (int i = 0; i < PROTO_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (n == 1 + (int)sizeof(int) && buf[0] == PROTO_EXIT)
		memcpy(&s->cmd_status, buf + 1, sizeof(int));
	if (n <= 0) {
		close(s->sync);
		s->sync = -1;
		return false;
	}
	return true;
}

/* A signal for the loop: the terminal's size passed on, SIGCHLD left
 * to reap_children, any other forwarded to the sandbox's init. False
 * when none could be read. */
static bool take_signal(struct run_state *s, struct term *t, int sfd)
{
	struct signalfd_siginfo si;
	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		return false;
	if (si.ssi_signo == SIGWINCH) {
		struct winsize ws;
		if (t->master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
			ioctl(t->master, TIOCSWINSZ, &ws);
	} else if (si.ssi_signo != SIGCHLD) {
		kill(s->child, (int)si.ssi_signo);
	}
	return true;
}

/* Every child that changed state, each to its owner; true once the
 * sandbox's init has exited (its status in s->status). */
static bool reap_children(struct run_state *s)
{
	int st;
	pid_t w;
	bool done = false;
	while ((w = waitpid(-1, &st, __WALL | WNOHANG)) > 0) {
		if (s->ftrace && ftrace_handle(s->ftrace, s->trace, w, st))
			continue;
		if (egress_reaped(&s->egress, w) && s->child > 0) {
			/* Fail closed: no proxy, no run. */
			kill(s->child, SIGKILL);
			continue;
		}
		if (auditlog_reaped(&s->audit, w)) {
			/* Fail closed: nothing may go unrecorded, MCP
			 * traffic included. */
			s->mcp.lost = true;
			mcpgw_kill(&s->mcp);
			if (s->child > 0)
				kill(s->child, SIGKILL);
			continue;
		}
		if (privsep_reaped(&s->priv, w)) {
			if (s->child > 0)
				kill(s->child, SIGKILL);
			continue;
		}
		if (mcpgw_reaped(&s->mcp, w, st)) {
			/* Fail closed: a gateway killed (taken over), no
			 * run. */
			if (s->mcp.gateway_killed && s->child > 0)
				kill(s->child, SIGKILL);
			continue;
		}
		if (w == s->child && (WIFEXITED(st) || WIFSIGNALED(st))) {
			s->status = st;
			s->child = 0;
			done = true;
		}
	}
	return done;
}

/* The sandbox has exited: what the command printed last, its exit
 * status from init, and the notifications still queued. */
static void drain_after_exit(struct run_state *s, struct term *t)
{
	while (t->master >= 0 && copy_fd(t->master, t->out)) {
		struct pollfd mp = { .fd = t->master, .events = POLLIN };
		if (poll(&mp, 1, 0) <= 0 || !(mp.revents & POLLIN))
			break;
	}
	while (s->sync >= 0) {
		struct pollfd sp = { .fd = s->sync, .events = POLLIN };
		if (poll(&sp, 1, 0) <= 0 || !take_sync_message(s))
			break;
	}
	while (s->notify >= 0) {
		struct pollfd np = { .fd = s->notify, .events = POLLIN };
		if (poll(&np, 1, 0) <= 0 || !(np.revents & POLLIN))
			break;
		handle_notify(s);
	}
}

/* After a read of the proxy's or the MCP gateways' records, their pipe and
 * socket are left alone this long before they are looked at again, and
 * again while each look finds records: under a busy proxy the records of
 * a few milliseconds are taken, filtered and sent to the writer together,
 * and a request's record wakes no one (a wake-up of the supervisor, and
 * the writer's that follows, cost more than the record itself: with 1 ms
 * the supervisor took 4.5 µs of CPU per proxied request, with 4 ms 1.6).
 * A look that finds nothing goes back to waiting, so a lone record is
 * read at once. Nothing else waits: the pause leaves out only the
 * records' channels, which hold far more than a pause's worth
 * (EGRESS_RECORDS_PIPE, 256 KiB: some 870 records of 300 bytes, 29 ms
 * at 30,000 requests/s; a gateway whose socket fills waits to send). */
#define RECORDS_PAUSE_NS 4000000LL

static int event_loop(struct run_state *s, struct term *t, int sfd)
{
	bool stdin_open = t->master >= 0;
	int64_t records_resume = 0; /* the records pipe is left out of the poll until then */
	for (;;) {
		enum { P_SIG, P_SYNC, P_NOTIFY, P_TIMER, P_STDIN, P_MASTER, P_RECORDS, P_MCP, P_MCP_REC, P_AUDIT, P_PRIV,
		       P_N };
		/* Until the writer answers, only it, the signals, the timer,
		 * the terminal and init are heard (audit_now_ready). */
		bool held = s->audit_pending;
		struct pollfd p[P_N] = {
			[P_SIG] = { .fd = sfd, .events = POLLIN },
			[P_SYNC] = { .fd = s->sync, .events = POLLIN },
			[P_NOTIFY] = { .fd = held ? -1 : s->notify, .events = POLLIN },
			[P_TIMER] = { .fd = s->timer, .events = POLLIN },
			[P_STDIN] = { .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
			[P_MASTER] = { .fd = t->master, .events = POLLIN },
			[P_RECORDS] = { .fd = held ? -1 : s->egress.records, .events = POLLIN },
			[P_MCP] = { .fd = held ? -1 : s->mcp.listen, .events = POLLIN },
			[P_MCP_REC] = { .fd = held ? -1 : s->mcp.rec_rd, .events = POLLIN },
			[P_AUDIT] = { .fd = held ? s->audit.control : -1, .events = POLLIN },
			[P_PRIV] = { .fd = s->priv.fd, .events = POLLIN },
		};
		struct timespec pause, *timeout = NULL;
		if (records_resume) {
			int64_t left = records_resume - clock_mono_ns();
			if (left > 0) {
				p[P_RECORDS].fd = p[P_MCP_REC].fd = -1;
				pause = (struct timespec){ left / 1000000000LL, left % 1000000000LL };
				timeout = &pause;
			} else {
				records_resume = 0;
			}
		}
		if (ppoll(p, P_N, timeout, NULL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if ((p[P_AUDIT].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    audit_now_ready(s, true, &s->audit_err) < 0) {
			/* Fail closed: the command is still in its first exec. */
			s->audit_failed = true;
			if (s->child > 0)
				kill(s->child, SIGKILL);
		}
		if (p[P_MASTER].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!copy_fd(t->master, t->out) && !(p[P_MASTER].revents & POLLIN)) {
				/* Slave side fully closed: nothing left to relay. */
				close(t->master);
				t->master = -1;
			}
		}
		if (p[P_STDIN].revents & (POLLIN | POLLHUP))
			if (!copy_fd(STDIN_FILENO, t->master))
				stdin_open = false;
		if (p[P_NOTIFY].revents & POLLIN)
			handle_notify(s);
		if (p[P_RECORDS].revents & (POLLIN | POLLHUP | POLLERR)) {
			records_resume = egress_read(&s->egress, s->trace) ? clock_mono_ns() + RECORDS_PAUSE_NS : 0;
			/* Fail closed: no decision goes on unlogged. */
			if (s->egress.log_full && s->child > 0)
				kill(s->child, SIGKILL);
		}
		if ((p[P_MCP_REC].revents & POLLIN) && mcpgw_read(&s->mcp))
			records_resume = clock_mono_ns() + RECORDS_PAUSE_NS;
		if (p[P_MCP].revents & POLLIN) {
			int c = mcpgw_accept(&s->mcp);
			if (c >= 0 && privsep_call(&s->priv, &s->pctx, PRIV_MCP_CONN, c, -1, NULL, NULL) < 0 &&
			    s->child > 0)
				kill(s->child, SIGKILL);
			if (c >= 0)
				close(c);
		}
		/* Fail closed: without its helper the session cannot end as it
		 * must (the cgroup, the held change), nor start MCP servers. */
		if ((p[P_PRIV].revents & (POLLIN | POLLHUP | POLLERR)) && !privsep_read(&s->priv, &s->pctx) &&
		    s->child > 0)
			kill(s->child, SIGKILL);
		if (s->mcp.gateway_killed && s->child > 0)
			kill(s->child, SIGKILL);
		if (p[P_NOTIFY].revents & (POLLHUP | POLLERR)) {
			close(s->notify);
			s->notify = -1;
		}
		if (p[P_SYNC].revents & POLLIN)
			take_sync_message(s);
		if (p[P_TIMER].revents & POLLIN) {
			s->wall_hit = true;
			kill(s->child, SIGKILL);
			close(s->timer);
			s->timer = -1;
		}
		if ((p[P_SIG].revents & POLLIN) && !take_signal(s, t, sfd))
			continue;
		if (reap_children(s)) {
			drain_after_exit(s, t);
			return 0;
		}
	}
}

/* A rule's path as the kernel would hold it: Landlock opens it, following
 * its links (/bin, a link to usr/bin, grants beneath /usr/bin). */
static void canon_path(char *path, size_t len)
{
	char real[PATH_MAX];
	if (realpath(path, real) && strlen(real) < len)
		memcpy(path, real, strlen(real) + 1);
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return SANDBOX_EXIT_SETUP;
}

/* The log is on by default: a user who never asked for it learns where it
 * was going and how to move it or turn it off. */
static void audit_default_hint(struct error *err, const char *dir)
{
	char why[ERROR_MSG_MAX];
	snprintf(why, sizeof(why), "%s", err->msg);
	(void)error_set(err, err->code ? err->code : EIO,
			"cannot write the decision log in the default directory %s (%s); choose another with "
			"--audit DIR or audit.dir in the policy, or turn the log off with --no-audit or "
			"audit.enabled: false",
			dir, why);
}

/* Everything one run holds, from its plan to its end: the steps below
 * take it in turn (sandbox_run). */
struct run {
	const struct sandbox_opts *opts;
	const struct policy *pol;
	struct run_state s;
	struct sandbox_plan plan;
	struct cgroup_handle cg;
	struct fsrules rules;
	struct term term;
	struct protect_set protect;
	struct review_run rr;
	char ws[PATH_MAX];
	int sfd, sv[2];
	sigset_t mask, oldmask;
	bool masked;
	bool review, observe, report;
	enum seccomp_trace trace;
	pid_t memfd_writer; /* privsep_pidns_start's child until reaped, or 0 */
	const char *audit_dir; /* the log's directory (audit_buf), or NULL: no log */
	bool audit_default;
	char audit_buf[4096];
};


/* The log's directory, the trace level, the writer started, the plan
 * built. A failure returns at once: nothing needs undoing but what it
 * undoes itself. */
static int run_begin(struct run *R, struct error *err)
{
	struct run_state *s = &R->s;
	struct sandbox_plan *plan = &R->plan;
	const struct policy *pol = R->pol;
	int r = 0;
	if (pol->sandbox.boundary != POLICY_BOUNDARY_PROCESS)
		return error_set(err, ENOTSUP,
				 "sandbox.boundary: %s is not available in this build; only \"process\" is "
				 "(airlock refuses to run a weaker boundary than the policy asks for)",
				 policy_boundary_name(pol->sandbox.boundary));
	/* Observe mode enforces no policy decision: the filesystem is the
	 * host's, the proxy lets through what it would refuse. It must never
	 * be mistaken for a sandbox: a warning before the command starts and
	 * another after it ends. It traces, to record what would have been
	 * denied. */
	R->observe = pol->sandbox.mode == POLICY_MODE_OBSERVE;
	if (R->observe)
		fprintf(stderr, POLICY_OBSERVE_WARNING "\n");
	R->report = R->opts->trace_denials || pol->sandbox.mode == POLICY_MODE_LEARN || R->observe;
	R->audit_default = false;
	r = auditlog_dir(R->opts->audit_dir, R->opts->no_audit, pol, R->audit_buf, sizeof(R->audit_buf),
			 &R->audit_default, err);
	if (r < 0)
		return r;
	R->audit_dir = r > 0 ? R->audit_buf : NULL;
	/* The header is signed by the session key of the decision log: no
	 * log, no key, and a header nobody can tie to a log is worse than
	 * none. */
	if (pol->identity.header && !R->audit_dir)
		return error_set(err, EINVAL,
				 "%s: identity.header: true needs the signed decision log, whose session key signs the "
				 "header; it is turned off here (--no-audit or audit.enabled: false)",
				 pol->file);
	/* A refused write (to a protected path, a read-only mount, a hidden
	 * directory) is a decision the log must hold: with the log on, the
	 * calls that change the tree, and execs, come to the supervisor as
	 * notifications it notes (ftrace_notified), and only they: reads,
	 * stats and probes run at native speed, and nothing is ptraced. A
	 * refused read (a file the sandbox hides answers ENOENT) is recorded
	 * only when every call is traced: --trace-denials, learn and observe
	 * modes (whose report is the only one printed on stderr). */
	if ((r = protect_set_from_policy(pol, &R->protect)) < 0)
		return error_set(err, ENOMEM, "out of memory");
	/* Held for review instead (plan.c), but the log still holds the
	 * other refusals (a write to /usr, a hidden host file) as it does
	 * in direct mode: hold, the default, must not thin the record. */
	R->trace = R->report || R->observe ? SECCOMP_TRACE_ALL
		   : R->audit_dir	       ? SECCOMP_TRACE_WRITES
					       : SECCOMP_TRACE_OFF;
	if (R->review)
		protect_set_free(&R->protect);
	/* The audit writer starts first: loading libcrypto, its
	 * configuration and the authority key take longer than anything else
	 * here, and they run while the sandbox is planned and built. */
	if (R->audit_dir && (r = auditlog_start(pol, R->audit_dir, &s->audit, err)) < 0) {
		if (R->audit_default)
			audit_default_hint(err, R->audit_dir);
		protect_set_free(&R->protect);
		return r;
	}
	if ((r = plan_build(pol, R->opts->argv, R->trace, plan, err)) < 0 || (r = gitid_offer(pol, plan, err)) < 0) {
		plan_free(plan);
		protect_set_free(&R->protect);
		if (s->audit.pid > 0) {
			/* The log records that the sandbox could not be built. */
			struct error aerr = { 0 };
			(void)auditlog_finish(&s->audit, SANDBOX_EXIT_SETUP, &aerr);
		}
		return r;
	}
	plan->send_root = R->opts->report_root;
	return r;
}

/* What the agent must not see of airlock's own (the log, the authority
 * key's directory); in observe mode, what enforce mode would have built,
 * to judge by. */
static int run_own_paths(struct run *R, struct error *err)
{
	struct sandbox_plan *plan = &R->plan;
	const struct policy *pol = R->pol;
	int r = 0;
	if (R->observe) {
		/* What enforce mode would have built is kept to judge by; the
		 * sandbox gets the host's tree and no ruleset. On a kernel
		 * without Landlock (enforce mode would refuse to run) the
		 * rights of ABI 3 are judged. */
		int abi = landlock_abi();
		if (fsrules_from_plan(plan, landlock_fs_mask(abi > 0 ? abi : 3), canon_path, &R->rules) < 0) {
			r = error_set(err, ENOMEM, "out of memory");
			return r;
		}
		/* The key is hidden from the agent: a run that cannot say where
		 * it is does not start. */
		char key[PATH_MAX];
		if ((r = auditlog_authority_path(key, sizeof(key), err)) < 0)
			return r;
		*strrchr(key, '/') = '\0';
		/* Both made now, before the writer makes the key: the covers
		 * need something to cover. */
		if (R->audit_dir && ((r = file_mkdir_p(R->audit_dir, 0700, err)) < 0 || (r = file_mkdir_p(key, 0700, err)) < 0))
			return r;
		if (plan_observe(plan, pol, R->audit_dir, key) < 0) {
			r = error_set(err, ENOMEM, "out of memory");
			return r;
		}
	} else {
		char key[PATH_MAX];
		struct error kerr = { 0 };
		if (auditlog_authority_path(key, sizeof(key), &kerr) < 0)
			key[0] = '\0';
		else
			*strrchr(key, '/') = '\0';
		const char *own[] = { R->audit_dir, pol->network.log, key[0] ? key : NULL };
		if (plan_hide_own(plan, own, ARRAY_SIZE(own)) < 0) {
			r = error_set(err, ENOMEM, "out of memory");
			return r;
		}
	}
	return r;
}

/* Everything the sandbox needs before it exists: review's layer, the MCP
 * gateway's socket, idmapped trees, the cgroup, the proxy, the tracer's
 * log, the wall-clock timer. */
static int run_prepare(struct run *R, struct error *err)
{
	struct run_state *s = &R->s;
	struct sandbox_plan *plan = &R->plan;
	const struct policy *pol = R->pol;
	int r = 0;
	s->privileged = plan->privileged;
	s->uid = plan->host_uid;
	s->gid = plan->host_gid;
	s->pctx.workspace = plan->workspace;
	s->pctx.audit = R->audit_dir ? &s->audit : NULL;
	if (R->review && (r = review_run_prepare(pol, plan, &R->rr, err)) < 0)
		return r;
	if ((r = run_own_paths(R, err)) < 0)
		return r;
	/* After observe mode's plan: the gateway's socket and the binary
	 * that speaks to it are airlock's own, in either mode. */
	if ((r = mcpgw_prepare(pol, R->audit_dir, plan, &s->mcp, err)) < 0)
		return r;
	if (R->audit_dir)
		s->mcp.audit = &s->audit;
	if (plan->privileged && (r = idmap_prepare(plan, err)) < 0)
		return r;
	if ((r = limits_cgroup_create(&pol->sandbox.limits, &R->cg, err)) < 0)
		return r;
	/* Without a cgroup: cap each process's data segment, and count
	 * processes per uid (RLIMIT_NPROC counts per user namespace since
	 * Linux 5.14, so only the sandbox's processes count). */
	if (pol->sandbox.limits.memory_bytes && !R->cg.memory_dir)
		plan->rlimits[plan->n_rlimits++] =
			(typeof(plan->rlimits[0])){ RLIMIT_DATA, pol->sandbox.limits.memory_bytes };
	if (pol->sandbox.limits.pids && !R->cg.pids_dir)
		plan->rlimits[plan->n_rlimits++] = (typeof(plan->rlimits[0])){ RLIMIT_NPROC, pol->sandbox.limits.pids };
	plan->pty = isatty(STDIN_FILENO);
	if ((r = egress_prepare(pol, plan, &s->egress, err)) < 0)
		return r;
	if (R->audit_dir)
		s->egress.audit = &s->audit;
	if (R->trace && !(s->trace = trace_new())) {
		r = error_set(err, ENOMEM, "out of memory");
		return r;
	}
	if (R->audit_dir)
		trace_set_sink(s->trace, audit_sink, &s->audit);
	if (R->observe)
		trace_set_observe(s->trace);
	trace_watch(s->trace, R->audit_dir);
	for (size_t i = 0; s->trace && plan->home && i < plan->n_mounts; i++)
		if (plan->mounts[i].kind == MOUNT_TMPFS && !strcmp(plan->mounts[i].dst, plan->home))
			trace_set_scratch_home(s->trace, plan->home);

	/* Armed before the sandbox exists: a limit that cannot be kept
	 * stops the run before anything runs (the time of the setup counts
	 * towards it, a few milliseconds). */
	if (pol->sandbox.limits.wall_seconds &&
	    (r = s->timer = limits_wall_timer(pol->sandbox.limits.wall_seconds, err)) < 0)
		return r;

	return r;
}

/* The log's first record names the policy file, absolute, so that
 * `airlock policy suggest` finds it from wherever it is run. */
static void log_policy_loaded(struct run *R)
{
	struct run_state *s = &R->s;
	const struct policy *pol = R->pol;
	if (R->audit_dir) {
		struct buf ev = { 0 };
		/* Absolute, so that `airlock policy suggest` finds the file
		 * from wherever it is run. */
		char abs[PATH_MAX];
		const char *pf = pol->file;
		if (pf[0] != '/' && pf[0] != '<' && realpath(pf, abs))
			pf = abs;
		if (buf_puts(&ev, "{\"kind\":\"policy_loaded\",\"decision\":\"allow\",\"policy_file\":") == 0 &&
		    buf_json_string(&ev, pf, strlen(pf)) == 0 && buf_puts(&ev, "}\n") == 0)
			(void)auditlog_event(&s->audit, ev.data, ev.len);
		buf_free(&ev);
	}
}

/* One byte of the setup's protocol to the child (PROTO_GO, PROTO_START). */
static int send_to_child(struct run_state *s, char byte, struct error *err)
{
	if (send(s->sync, &byte, 1, MSG_NOSIGNAL) != 1)
		return error_sys(err, errno, "the sandbox died during setup");
	return 0;
}

/* The child in its namespaces, its id maps and cgroup, and the go. */
static int run_clone(struct run *R, struct error *err)
{
	struct run_state *s = &R->s;
	struct sandbox_plan *plan = &R->plan;
	int r = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, R->sv) < 0) {
		r = error_sys(err, errno, "socketpair");
		return r;
	}

	/* Signals are handled through a signalfd from here on; block them
	 * before clone so none is lost between clone and the loop. */
	sigemptyset(&R->mask);
	sigaddset(&R->mask, SIGCHLD);
	sigaddset(&R->mask, SIGWINCH);
	for (size_t i = 0; i < ARRAY_SIZE(relayed); i++)
		sigaddset(&R->mask, relayed[i]);
	sigprocmask(SIG_BLOCK, &R->mask, &R->oldmask);
	R->masked = true;
	R->sfd = signalfd(-1, &R->mask, SFD_CLOEXEC);
	if (R->sfd < 0) {
		r = error_sys(err, errno, "signalfd");
		return r;
	}

	/* Started as root, the sandbox's user namespace is made as the
	 * sandbox's uid, which thereby owns it: the supervisor, once that uid
	 * (drop_root), keeps every right over the sandbox it needs and none
	 * over the host. */
	if (plan->privileged && (setresgid(-1, plan->host_gid, -1) < 0 || setresuid(-1, plan->host_uid, -1) < 0)) {
		r = error_sys(err, errno, "cannot take the sandbox's ids to make its namespaces");
		return r;
	}
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_FLAGS | SIGCHLD, NULL, NULL, NULL, NULL);
	int clone_errno = errno;
	if (pid != 0 && plan->privileged && (setresuid(-1, 0, -1) < 0 || setresgid(-1, 0, -1) < 0)) {
		r = error_sys(err, errno, "cannot take root back after clone");
		if (pid > 0)
			kill(pid, SIGKILL);
		return r;
	}
	if (pid < 0) {
		r = error_sys(err, clone_errno, "cannot create the sandbox's namespaces (clone)");
		return r;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &R->oldmask, NULL);
		close(R->sfd);
		child_main(plan, R->sv[1]);
	}
	s->child = pid;
	close(R->sv[1]);
	R->sv[1] = -1;
	s->sync = R->sv[0];
	R->sv[0] = -1;

	if ((r = ids_write_maps(pid, plan, err)) < 0 || (r = limits_cgroup_attach(&R->cg, pid, err)) < 0)
		return r;
	log_policy_loaded(R);
	if ((r = send_to_child(s, PROTO_GO, err)) < 0)
		return r;
	/* While the sandbox builds itself: the command waits for it (a
	 * plan->privileged child waits for PROTO_START after READY). */
	if (plan->privileged) {
		pid_t w = privsep_pidns_start(pid, err);
		if (w < 0)
			return (int)w;
		R->memfd_writer = w;
		r = fork_helper(s, err);
	}
	return r;
}

/* What the tracer judges by. */
static int run_tracer(struct run *R, struct error *err)
{
	struct run_state *s = &R->s;
	struct sandbox_plan *plan = &R->plan;
	const struct policy *pol = R->pol;
	int r = 0;
	/* What the tracer judges by is made while the sandbox builds its tree
	 * (the canonical paths of the Landlock rules cost a realpath each),
	 * not after: the command's first exec waits for it. */
	if (R->trace) {
		if (!(s->ftrace = ftrace_new())) {
			r = error_set(err, ENOMEM, "out of memory");
			return r;
		}
		if (R->observe)
			ftrace_observe(s->ftrace, &R->rules);
		else if (R->trace == SECCOMP_TRACE_WRITES) {
			int abi = landlock_abi();
			if (abi > 0 && fsrules_from_plan(plan, landlock_fs_mask(abi), canon_path, &R->rules) < 0) {
				r = error_set(err, ENOMEM, "out of memory");
				return r;
			}
			ftrace_landlock(s->ftrace, abi > 0 ? &R->rules : NULL);
		}
		/* The sandbox shows the workspace at its host path. */
		if (R->protect.n && realpath(pol->sandbox.workspace, R->ws))
			ftrace_set_protect(s->ftrace, &R->protect, R->ws);
	}
	return r;
}

/* The sandbox's READY and its fds; the guard, the tracer and the writer
 * joined; the command let go. */
static int run_ready(struct run *R, struct error *err)
{
	struct run_state *s = &R->s;
	struct sandbox_plan *plan = &R->plan;
	const struct policy *pol = R->pol;
	int r = 0;
	char buf[ERROR_MSG_MAX + 2];
	int fds[PROTO_MAX_FDS];
	int n = proto_recv(s->sync, buf, sizeof(buf), fds);
	if (n != 2 || buf[0] != PROTO_READY) {
		for (int i = 0; i < PROTO_MAX_FDS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (n > 0 && buf[0] == PROTO_ERROR)
			r = error_set(err, EIO, "sandbox setup failed: %s", buf + 1);
		else
			r = error_set(err, EIO, "sandbox setup failed: the child exited before reporting");
		return r;
	}
	/* The command may start once its pid namespace is set; a command
	 * held for its tracer is let go below instead. */
	if (R->memfd_writer > 0) {
		pid_t w = R->memfd_writer;
		R->memfd_writer = 0;
		if ((r = privsep_pidns_wait(w, err)) < 0 || (!plan->hold && (r = send_to_child(s, PROTO_START, err)) < 0)) {
			for (int i = 0; i < PROTO_MAX_FDS; i++)
				if (fds[i] >= 0)
					close(fds[i]);
			return r;
		}
	}
	int k = 0;
	if (buf[1] & PROTO_FD_NOTIFY) {
		s->notify = fds[k++];
		/* Linux 6.6+: the supervisor answers each call and then
		 * sleeps, so waking the caller synchronously (on this CPU,
		 * rather than wherever the scheduler would place it) saves a
		 * migration on every guarded call. Older kernels: EINVAL,
		 * and the ordinary wake-up. */
		(void)ioctl(s->notify, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	}
	if (buf[1] & PROTO_FD_PTY)
		term_attach(&R->term, fds[k++]);
	if (buf[1] & PROTO_FD_LISTEN)
		s->net_fds[0] = fds[k++];
	if (buf[1] & PROTO_FD_LISTEN6)
		s->net_fds[1] = fds[k++];
	if (buf[1] & PROTO_FD_DNS)
		s->net_fds[2] = fds[k++];
	if (buf[1] & PROTO_FD_GUARD)
		s->guard = fds[k++];
	if (buf[1] & PROTO_FD_LAYER)
		review_run_hold_layer(&R->rr, fds[k++]);
	int root = buf[1] & PROTO_FD_ROOT ? fds[k++] : -1;
	s->protect = plan->protect.n > 0;
	s->sockguard = plan->sockguard;
	s->net = (struct guard_net){ .named = plan->n_sockets > 0, .proxy_port = plan->proxy_port,
				    .transparent = plan->transparent };
	if ((s->protect || s->sockguard) && (s->guard < 0 || s->notify < 0)) {
		r = error_set(err, EIO, "sandbox setup failed: no guard");
		return r;
	}
	if (s->guard >= 0 && s->notify >= 0)
		guard_attach(s->guard, s->notify);
	if (s->net_fds[0] < 0 && policy_net_mode(pol) != POLICY_NET_NONE) {
		r = error_set(err, EIO, "sandbox setup failed: no proxy socket");
		return r;
	}
	/* The caller's copy first (it judges paths as the sandbox sees them):
	 * one try, and a caller gone hears nothing. */
	if (root >= 0 && R->opts->report_root)
		(void)proto_send(R->opts->root_to, (char[]){ SANDBOX_ROOT_MSG }, 1, &root, 1);
	if (R->trace == SECCOMP_TRACE_WRITES) {
		if (root < 0) {
			r = error_set(err, EIO, "sandbox setup failed: no root to note calls in");
			return r;
		}
		ftrace_root(s->ftrace, root);
		root = -1;
	}
	if (root >= 0)
		close(root);
	if (R->trace == SECCOMP_TRACE_ALL && (r = ftrace_attach(s->child, err)) < 0)
		return r;
	/* The writer started before the sandbox was planned, and has usually
	 * answered by now; the policy_loaded event above waited in the
	 * socket. Where the command is held until the go below (a tracer to
	 * attach, plan.hold), or there is no log, its answer is taken here: a
	 * writer that could not start ends the run before the command runs.
	 * At SECCOMP_TRACE_WRITES the command is not held: the writer's
	 * answer is taken in the event loop, and until then no decision is
	 * (audit_now_ready says how). */
	s->audit_pending = R->audit_dir && R->trace == SECCOMP_TRACE_WRITES && !plan->hold;
	if (!s->audit_pending && (r = audit_now_ready(s, true, err)) < 0) {
		if (R->audit_default && R->audit_dir)
			audit_default_hint(err, R->audit_dir);
		return r;
	}
	if (plan->hold)
		r = send_to_child(s, PROTO_START, err);

	return r;
}

/* After the loop: the run's exit code and what it says of its end. */
static int run_end(struct run *R, int *exit_code, struct error *err)
{
	struct run_state *s = &R->s;
	const struct policy *pol = R->pol;
	int r = 0;
	r = event_loop(s, &R->term, R->sfd);
	term_restore(&R->term);
	if (r < 0) {
		r = error_sys(err, -r, "supervisor loop");
		return r;
	}
	/* The run ended before the writer answered (init killed, the wall
	 * clock): its answer names the session the log and any held change
	 * belong to; the proxy is not started for a sandbox that is gone. */
	if (s->audit_pending && audit_now_ready(s, false, &s->audit_err) < 0)
		s->audit_failed = true;
	if (s->audit_failed) {
		*err = s->audit_err;
		if (R->audit_default)
			audit_default_hint(err, R->audit_dir);
		r = -(err->code ? err->code : EIO);
		return r;
	}

	int status = s->cmd_status != -1 ? s->cmd_status : s->status;
	*exit_code = exit_code_of(status);
	/* The proxy's last records go to the log before the seal (this
	 * resets s.egress: read what it says first). */
	/* The MCP servers' last records, too. */
	mcpgw_stop(&s->mcp);
	bool proxy_died = s->egress.died, audit_lost = s->egress.audit_lost || s->mcp.lost;
	bool net_log_full = s->egress.log_full;
	egress_stop(&s->egress, s->trace);
	audit_lost = audit_lost || s->egress.audit_lost;
	net_log_full = net_log_full || s->egress.log_full;
	if (s->audit.full) {
		/* The agent filled the log (a flood of junk requests or
		 * denials): the run ends rather than go on unrecorded. */
		fprintf(stderr,
			"airlock: the decision log reached audit.max_size (%llu bytes); the run was ended (fail "
			"closed)\n",
			(unsigned long long)s->audit.max_size);
		*exit_code = 128 + SIGKILL;
	} else if (net_log_full) {
		fprintf(stderr,
			"airlock: network.log reached audit.max_size (%llu bytes); the run was ended (fail closed)\n",
			(unsigned long long)pol->audit.max_size);
		*exit_code = 128 + SIGKILL;
	} else if (proxy_died) {
		fprintf(stderr, "airlock: the egress proxy stopped; the run was ended (fail closed)\n");
		*exit_code = SANDBOX_EXIT_SETUP;
	} else if (s->mcp.monitor_killed) {
		fprintf(stderr, "airlock: an MCP gateway's monitor was killed (its seccomp filter ends a monitor that "
				"makes a call it never makes); the run was ended (fail closed)\n");
		*exit_code = SANDBOX_EXIT_SETUP;
	} else if (s->mcp.gateway_killed) {
		fprintf(stderr, "airlock: an MCP gateway was killed (its seccomp filter ends a gateway that makes a call "
				"it never makes); the run was ended (fail closed)\n");
		*exit_code = SANDBOX_EXIT_SETUP;
	} else if (s->audit.died || audit_lost) {
		fprintf(stderr, "airlock: the audit writer stopped; the run was ended (fail closed)\n");
		*exit_code = SANDBOX_EXIT_SETUP;
	} else if (s->wall_hit) {
		fprintf(stderr, "airlock: wall-clock limit of %llus reached; the run was ended\n",
			(unsigned long long)pol->sandbox.limits.wall_seconds);
		*exit_code = 128 + SIGKILL;
	} else if (limits_cgroup_oom(&R->cg)) {
		fprintf(stderr, "airlock: memory limit of %llu bytes reached; the kernel killed a process\n",
			(unsigned long long)pol->sandbox.limits.memory_bytes);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
		fprintf(stderr, "airlock: CPU time limit of %llus reached; the run was ended\n",
			(unsigned long long)pol->sandbox.limits.cpu_seconds);
	}
	bool pids_hit = limits_cgroup_pids_hit(&R->cg);
	if (pids_hit)
		fprintf(stderr, "airlock: process limit of %llu reached; process creation failed inside the sandbox\n",
			(unsigned long long)pol->sandbox.limits.pids);
	/* A command that failed under limits the kernel reports to nobody:
	 * airlock cannot know that one was reached, so it names them, and the
	 * error each makes the program print, rather than stay silent. */
	/* Traced (--trace-denials, learn mode), the refused call is seen. */
	const char *emfile = trace_emfile(s->trace);
	if (emfile && pol->sandbox.limits.open_files)
		fprintf(stderr, "airlock: open-files limit of %llu reached (sandbox.limits.open_files): %s failed with EMFILE\n",
			(unsigned long long)pol->sandbox.limits.open_files, emfile);
	else if (emfile)
		fprintf(stderr, "airlock: the open-files limit airlock was started with (RLIMIT_NOFILE) was reached: %s "
				"failed with EMFILE\n",
			emfile);
	char unreported[768];
	if (*exit_code != 0 && !emfile && !s->wall_hit && !pids_hit && !limits_cgroup_oom(&R->cg) &&
	    limits_unreported(&pol->sandbox.limits, &R->cg, unreported, sizeof(unreported)))
		fprintf(stderr,
			"airlock: the command failed (exit %d) under per-process limits whose reaching the kernel "
			"does not report: %s; if its error is one of these, that limit was reached\n",
			*exit_code, unreported);
	if (s->trace && R->report)
		trace_report(s->trace, stderr);
	if (R->observe)
		fprintf(stderr,
			"airlock: WARNING: observe mode: nothing was enforced; %lu operation%s would have been denied\n",
			trace_observed(s->trace), trace_observed(s->trace) == 1 ? "" : "s");
	/* The change is read once the sandbox is gone (nothing writes the
	 * layer any more), and its flagged entries go into the log before
	 * the seal. Without a session there is nothing to ask the helper:
	 * our copy of rr->active is as it was when the helper was forked,
	 * and a request costs two wake-ups. */
	if (privsep_finish(&s->priv, &s->pctx, s->rr->active) < 0)
		*exit_code = SANDBOX_EXIT_SETUP;
	/* The writer seals the log while the helper says what is held and
	 * removes the cgroup and sockets; both are awaited last
	 * (run_cleanup). */
	if (R->audit_dir)
		auditlog_end(&s->audit, *exit_code);
	if (R->audit_dir && !s->audit.ending) {
		struct error aerr = { 0 };
		if (auditlog_finish(&s->audit, *exit_code, &aerr) < 0) {
			fprintf(stderr, "airlock: %s\n", aerr.msg);
			*exit_code = SANDBOX_EXIT_SETUP;
		}
	}
	if (s->priv.died) {
		fprintf(stderr, "airlock: the privileged helper stopped; the run was ended (fail closed)\n");
		*exit_code = SANDBOX_EXIT_SETUP;
	}
	r = 0;
	return r;
}

/* Whatever happened: everything released, the log sealed, the helper
 * told the run is over. */
static void run_cleanup(struct run *R, int *exit_code)
{
	struct run_state *s = &R->s;
	struct sandbox_plan *plan = &R->plan;
	term_restore(&R->term);
	if (s->child > 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	if (R->masked)
		sigprocmask(SIG_SETMASK, &R->oldmask, NULL);
	for (int i = 0; i < 2; i++)
		if (R->sv[i] >= 0)
			close(R->sv[i]);
	if (s->sync >= 0)
		close(s->sync);
	if (s->notify >= 0)
		close(s->notify);
	if (s->guard >= 0)
		close(s->guard);
	if (s->timer >= 0)
		close(s->timer);
	for (int i = 0; i < 3; i++)
		if (s->net_fds[i] >= 0)
			close(s->net_fds[i]);
	if (R->sfd >= 0)
		close(R->sfd);
	if (R->term.master >= 0)
		close(R->term.master);
	mcpgw_stop(&s->mcp);
	egress_stop(&s->egress, NULL);
	if (!s->audit.ending && (s->audit.pid > 0 || s->audit.events >= 0)) {
		/* Setup failed: the log records that, and is sealed. */
		struct error aerr = { 0 };
		(void)auditlog_finish(&s->audit, SANDBOX_EXIT_SETUP, &aerr);
	}
	/* The session that never ran, the cgroup, the host's sockets; on a
	 * run that ended through run_end, the answer to the PRIV_END it
	 * posted. */
	(void)privsep_call(&s->priv, &s->pctx, PRIV_END, -1, -1, NULL, NULL);
	if (s->priv.fd >= 0)
		close(s->priv.fd);
	if (R->memfd_writer > 0)
		waitpid(R->memfd_writer, NULL, 0);
	limits_cgroup_forget(&R->cg);
	if (s->audit.ending) {
		/* The run's end is in the log: the seal must be too before
		 * airlock exits (auditlog_end above). */
		struct error aerr = { 0 };
		if (auditlog_finish(&s->audit, 0, &aerr) < 0) {
			fprintf(stderr, "airlock: %s\n", aerr.msg);
			*exit_code = SANDBOX_EXIT_SETUP;
		}
	}
	/* The helper has done all it does (it answered PRIV_END, or is
	 * gone) and only exits, its address space's
	 * teardown a few hundred microseconds here: reaped last, while the
	 * writer sealed the log.
	 * Reaped all the same: an init that reaps nothing (a container's
	 * first process) would keep it. */
	if (s->priv.pid > 0)
		waitpid(s->priv.pid, NULL, 0);
	trace_free(s->trace);
	ftrace_free(s->ftrace);
	fsrules_free(&R->rules);
	protect_set_free(&R->protect);
	plan_free(plan);
}

int sandbox_run(const struct sandbox_opts *opts, int *exit_code, struct error *err)
{
	struct run R = { .opts = opts,
			 .pol = opts->policy,
			 .s = { .notify = -1, .guard = -1, .sync = -1, .cmd_status = -1, .timer = -1,
				.egress = EGRESS_INIT, .audit = AUDITLOG_INIT, .mcp = MCPGW_INIT,
				.net_fds = { -1, -1, -1 }, .log_label = opts->log_label, .priv = PRIVSEP_INIT },
			 .term = { .master = -1 },
			 .sfd = -1,
			 .sv = { -1, -1 } };
	const char *ws_why;
	R.review = review_run_mode(R.pol, &ws_why) != POLICY_WS_DIRECT;
	R.s.rr = &R.rr;
	R.s.pctx = (struct privsep_ctx){ .mcp = &R.s.mcp, .egress = &R.s.egress, .rr = &R.rr, .cg = &R.cg,
					 .sandbox_pidfd = -1 };
	int r = run_begin(&R, err);
	if (r < 0)
		return r;
	if ((r = run_prepare(&R, err)) >= 0 && (r = run_clone(&R, err)) >= 0 && (r = run_tracer(&R, err)) >= 0 &&
	    (r = run_ready(&R, err)) >= 0)
		r = run_end(&R, exit_code, err);
	run_cleanup(&R, exit_code);
	return r;
}