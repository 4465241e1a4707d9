/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The child, from clone() to becoming the sandbox's init. Runs as pid 1 of
 * a new pid namespace, inside new user, mount, net, ipc and uts
 * namespaces. Order follows the design: namespaces -> mounts ->
 * pivot_root -> capability bounding set -> uid/gid -> no_new_privs ->
 * Landlock -> seccomp.
 *
 * WARNING: any failure here must end the child. A half-built sandbox never
 * runs the command: fail() reports to the supervisor and _exit()s.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/netfilter.h"
#include "sandbox/proto.h"
#include "util/cleanup.h"
#include "util/fds.h"

__attribute__((noreturn)) static void fail(int sync_fd, const struct error *err)
{
	char msg[ERROR_MSG_MAX + 1];
	int n = snprintf(msg, sizeof(msg), "%c%s", PROTO_ERROR, err->msg);
	if (n > 0)
		(void)!send(sync_fd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1, MSG_NOSIGNAL);
	_exit(SANDBOX_EXIT_SETUP_CHILD);
}

static int loopback_up(struct error *err)
{
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return error_sys(err, errno, "socket");
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return error_sys(err, errno, "cannot read loopback flags");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return error_sys(err, errno, "cannot bring up loopback");
	return 0;
}

/* A pty from the sandbox's own devpts instance: the command's terminal
 * then has a name inside the sandbox (/dev/pts/0) and the host's terminal
 * is never handed in. The supervisor gets the master and relays. */
static int open_pty(int *master, int *slave, struct error *err)
{
	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0)
		return error_sys(err, errno, "cannot open /dev/ptmx");
	if (unlockpt(*master) < 0)
		return error_sys(err, errno, "unlockpt");
	char name[64];
	if (ptsname_r(*master, name, sizeof(name)) != 0)
		return error_sys(err, errno, "ptsname");
	*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		return error_sys(err, errno, "cannot open %s", name);
	return 0;
}

/* The egress proxy's sockets, created here so that they live in the
 * sandbox's network namespace: the agent reaches 127.0.0.1:port and
 * nothing else, with no forwarder inside. The supervisor serves them. */
static int netns_socket(int family, int type, uint16_t port, bool required, int *out, struct error *err)
{
	*out = -1;
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if (!required && errno == EAFNOSUPPORT)
			return 0;
		return error_sys(err, errno, "socket");
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} a = { 0 };
	socklen_t len;
	if (family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		a.in6 = (struct sockaddr_in6){ .sin6_family = AF_INET6, .sin6_port = htons(port),
					       .sin6_addr = IN6ADDR_LOOPBACK_INIT };
		len = sizeof(a.in6);
	} else {
		a.in = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
					     .sin_addr = { .s_addr = htonl(INADDR_LOOPBACK) } };
		len = sizeof(a.in);
	}
	if (bind(fd, &a.sa, len) < 0 || (type == SOCK_STREAM && listen(fd, 512) < 0)) {
		int e = errno;
		close(fd);
		/* No ::1 in the namespace (IPv6 disabled): v4 only, which is
		 * still closed, since nothing else is routable either. */
		if (!required && (e == EADDRNOTAVAIL || e == EAFNOSUPPORT))
			return 0;
		return error_sys(err, e, "cannot %s on %s:%u inside the sandbox",
				 type == SOCK_STREAM ? "listen" : "bind", family == AF_INET6 ? "[::1]" : "127.0.0.1",
				 port);
	}
	*out = fd;
	return 0;
}

static bool supervisor_gone(int sync_fd)
{
	struct pollfd p = { .fd = sync_fd, .events = POLLIN };
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

static int close_all_except(const struct sandbox_plan *plan, int sync_fd)
{
	int keep[64];
	size_t n = 0;
	keep[n++] = sync_fd;
	for (size_t i = 0; i < plan->n_mounts && n < ARRAY_SIZE(keep); i++)
		if (plan->mounts[i].tree_fd >= 0)
			keep[n++] = plan->mounts[i].tree_fd;
	if (plan->review_tree_fd >= 0 && n < ARRAY_SIZE(keep))
		keep[n++] = plan->review_tree_fd;
	return fds_close_from(3, keep, n);
}

__attribute__((noreturn)) void child_main(const struct sandbox_plan *plan, int sync_fd)
{
	struct error err = { 0 };

	/* Hold nothing but stdio, our end of the socket and the trees the
	 * supervisor prepared: not its other fds, and not whatever the caller
	 * of airlock left open (a directory fd would be a way out). One that
	 * cannot be closed ends the child (fail closed). */
	int cr = close_all_except(plan, sync_fd);
	if (cr < 0)
		(error_set(&err, -cr, "cannot close the descriptors airlock inherited: %s", strerror(-cr)),
		 fail(sync_fd, &err));

	/* The user's environment is the supervisor's: the command's is
	 * plan->envp, built before the clone. Zeroed here, so that init and
	 * the guard (which parses what the agent's calls name), both of the
	 * agent's uid and in its namespaces, hold no copy of a secret in it. */
	caps_wipe_environ();

	/* If the supervisor dies, so do we (and with pid 1, the namespace). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	char go;
	if (recv(sync_fd, &go, 1, 0) != 1 || go != PROTO_GO)
		_exit(SANDBOX_EXIT_SETUP_CHILD); /* supervisor gone or failed */

	/* Leave the host terminal's session at once: nothing in the sandbox,
	 * init included, keeps the host's controlling terminal. */
	if (setsid() < 0)
		(error_sys(&err, errno, "setsid"), fail(sync_fd, &err));
	if (plan->privileged && setgroups(0, NULL) < 0)
		(error_sys(&err, errno, "setgroups"), fail(sync_fd, &err));
	/* Become the sandbox's ids now, keeping our namespace capabilities for
	 * the mounts: started as root our host uid 0 is unmapped here, and
	 * files we create for mount points must have a mapped owner. */
	if (caps_become(plan->inner_uid, plan->inner_gid, &err) < 0)
		fail(sync_fd, &err);
	/* After the supervisor moved us into our cgroup: that cgroup becomes
	 * our root, and the host's hierarchy is not visible. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		(error_sys(&err, errno, "unshare(CLONE_NEWCGROUP)"), fail(sync_fd, &err));
	if (sethostname(plan->hostname, strlen(plan->hostname)) < 0)
		(error_sys(&err, errno, "sethostname"), fail(sync_fd, &err));
	int layer = -1;
	if (mount_build_root(plan, &layer, &err) < 0)
		fail(sync_fd, &err);
	if (loopback_up(&err) < 0)
		fail(sync_fd, &err);
	int pty_master = -1, pty_slave = -1;
	if (plan->pty && open_pty(&pty_master, &pty_slave, &err) < 0)
		fail(sync_fd, &err);
	/* notify, pty master, listener, IPv6 listener, DNS, guard, layer,
	 * root: see proto.h */
	int fds[PROTO_MAX_FDS] = { -1, pty_master, -1, -1, -1, -1, layer, -1 };
	/* The root the noted calls' paths resolve in, handed over rather than
	 * opened by the supervisor as /proc/1/root: the command may start
	 * before the supervisor looks (nothing holds it at SECCOMP_TRACE_WRITES,
	 * whose first exec waits for the supervisor instead), and init is not
	 * dumpable by then, which an unprivileged supervisor needs to open
	 * that link. */
	if ((plan->trace == SECCOMP_TRACE_WRITES || plan->send_root) &&
	    (fds[7] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		(error_sys(&err, errno, "cannot open the sandbox's root"), fail(sync_fd, &err));
	if (plan->proxy_port && netns_socket(AF_INET, SOCK_STREAM, plan->proxy_port, true, &fds[2], &err) < 0)
		fail(sync_fd, &err);
	if (plan->transparent) {
		/* Every TCP connection and DNS query that leaves loopback is
		 * redirected here (netfilter.c); nothing else leaves at all. */
		if (netns_socket(AF_INET6, SOCK_STREAM, plan->proxy_port, false, &fds[3], &err) < 0 ||
		    netns_socket(AF_INET, SOCK_DGRAM, PLAN_DNS_PORT, true, &fds[4], &err) < 0 ||
		    netfilter_transparent(plan->proxy_port, PLAN_DNS_PORT, &err) < 0)
			fail(sync_fd, &err);
	}

	if (caps_drop_all(&err) < 0)
		fail(sync_fd, &err);
	if (caps_clear_sets(&err) < 0)
		fail(sync_fd, &err);
	/* A credential change clears the parent-death signal: set it again,
	 * then make sure the supervisor did not die in between. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || supervisor_gone(sync_fd))
		_exit(SANDBOX_EXIT_SETUP_CHILD);

	if (limits_apply_rlimits(plan, &err) < 0)
		fail(sync_fd, &err);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		(error_sys(&err, errno, "PR_SET_NO_NEW_PRIVS"), fail(sync_fd, &err));
	/* Observe mode: no ruleset (the supervisor judges each path-taking
	 * call against enforce mode's rules instead, see ftrace.c); what
	 * stays is what is no policy decision: signals and abstract sockets
	 * do not cross out of the sandbox (ABI 6+). */
	int lr = plan->observe ? landlock_scope_self() : landlock_apply(plan, &err);
	if (lr < 0) {
		if (plan->observe)
			error_sys(&err, -lr, "landlock: cannot scope signals and abstract sockets");
		fail(sync_fd, &err);
	}
	/* The guard: after Landlock (its calls are judged like the agent's),
	 * before seccomp (its own calls must not come back to it). */
	if ((plan->protect.n || plan->sockguard) && (fds[5] = guard_start(plan, &err)) < 0)
		fail(sync_fd, &err);
	int notify_fd = -1;
	if (seccomp_apply(plan, &notify_fd, &err) < 0)
		fail(sync_fd, &err);

	fds[0] = notify_fd;
	if (proto_send_ready(sync_fd, fds) < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	for (int i = 0; i < PROTO_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* Tracing every call: the supervisor must hold us (ptrace) before the
	 * command starts, or the filter's trace stops would fail its calls.
	 * Started as root: the pid namespace's vm.memfd_noexec is set by the
	 * host's root (privsep.c) while we build, and must be before the
	 * command can make a memfd. (A decision log still starting holds
	 * nothing here: the command's first exec is a noted call, and the
	 * supervisor answers none before the writer is ready; see
	 * supervisor.c, audit_pending.) */
	char ack;
	if ((plan->hold || plan->privileged) && (recv(sync_fd, &ack, 1, 0) != 1 || ack != PROTO_START))
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	/* Not dumpable from here on: the command, same uid and same Landlock
	 * domain, must not open /proc/1/mem. (Only now: an unprivileged
	 * supervisor can seize a dumpable process only.) */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		_exit(SANDBOX_EXIT_SETUP_CHILD);
	init_main(plan, sync_fd, pty_slave);
}
