/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running the suite: the scratch tree, the network namespace and the
 * stand-in services the probes aim at, one run of the probe through the
 * runtime's prefix, and the judgement of each row.
 *
 * WARNING: every address the probes are pointed at beyond loopback lives
 * on a network namespace this file creates (unshare(CLONE_NEWNET), with a
 * user namespace when unprivileged); nothing is ever added to the host's
 * own namespace, and without that namespace those rows are reported not
 * applicable rather than aimed at real addresses.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <linux/close_range.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance/conformance.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/hex.h"

#define META_ADDR "169.254.169.254"
#define PRIV_ADDR "10.213.13.1"
#define PUB_ADDR "198.51.100.7" /* TEST-NET-2: stands for the internet */

extern char **environ;

/* ---- small file helpers ---- */

static int put_file(const char *dir, const char *rel, const char *text, mode_t mode, struct error *err)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return error_set(err, ENAMETOOLONG, "%s/%s: path too long", dir, rel);
	/* Parents first: rel may name subdirectories. */
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return error_sys(err, errno, "mkdir %s", path);
		*s = '/';
	}
	if (!text) {
		if (mkdir(path, mode) < 0 && errno != EEXIST)
			return error_sys(err, errno, "mkdir %s", path);
		return chmod(path, mode) < 0 ? error_sys(err, errno, "chmod %s", path) : 0;
	}
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return error_sys(err, errno, "create %s", path);
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		return error_sys(err, errno, "write %s", path);
	/* The mode exactly, whatever the umask: the rows test the sandbox,
	 * not file permissions. */
	return fchmod(fd, mode) < 0 ? error_sys(err, errno, "chmod %s", path) : 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_tree(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* ---- the network namespace ---- */

static int nl_addr(int nl, unsigned ifindex, const char *addr, struct error *err)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
		char attrs[64];
	} req;
	struct in_addr a;

	if (inet_pton(AF_INET, addr, &a) != 1)
		return error_set(err, EINVAL, "bad address %s", addr);
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	req.nh.nlmsg_type = RTM_NEWADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
	req.ifa.ifa_family = AF_INET;
	req.ifa.ifa_prefixlen = 32;
	req.ifa.ifa_scope = RT_SCOPE_HOST;
	req.ifa.ifa_index = ifindex;
	static const unsigned short types[] = { IFA_LOCAL, IFA_ADDRESS };
	/* Attributes are copied in, header then payload: the buffer is bytes,
	 * and no cast gives it a struct's alignment. */
	for (size_t i = 0; i < 2; i++) {
		struct rtattr rta = { .rta_len = RTA_LENGTH(sizeof(a)), .rta_type = types[i] };
		char *at = (char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len);
		memcpy(at, &rta, sizeof(rta));
		memcpy(at + RTA_LENGTH(0), &a, sizeof(a));
		req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(rta.rta_len);
	}
	if (send(nl, &req, req.nh.nlmsg_len, 0) < 0)
		return error_sys(err, errno, "netlink send");
	char buf[512];
	ssize_t n = recv(nl, buf, sizeof(buf), 0);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return error_sys(err, n < 0 ? errno : EIO, "netlink answer");
	struct nlmsghdr h;
	memcpy(&h, buf, sizeof(h));
	if (h.nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr e;
		memcpy(&e, buf + NLMSG_HDRLEN, sizeof(e));
		if (e.error)
			return error_sys(err, -e.error, "add %s", addr);
	}
	return 0;
}

static int write_proc(const char *path, const char *text, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, errno, "open %s", path);
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		return error_sys(err, errno, "write %s", path);
	return 0;
}

/* Move this process into a network namespace of its own (with a user
 * namespace when not root), bring its loopback up and put the metadata,
 * private and stand-in public addresses on it. The loopback device is
 * enough: a /32 on lo is local, so everything sent to these addresses
 * stays in the namespace, and no dummy module is needed. */
static int enter_netns(struct error *err)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int r;

	if (uid == 0) {
		if (unshare(CLONE_NEWNET) < 0)
			return error_sys(err, errno, "unshare(CLONE_NEWNET)");
	} else {
		char map[64];
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			return error_sys(err, errno, "unshare(CLONE_NEWUSER|CLONE_NEWNET)");
		/* Ourselves only, as ourselves: the runtime then starts as the
		 * same unprivileged user it would be outside (exec drops the
		 * capabilities unshare gave us in the new namespace). */
		snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
		if ((r = write_proc("/proc/self/uid_map", map, err)) < 0)
			return r;
		if ((r = write_proc("/proc/self/setgroups", "deny\n", err)) < 0)
			return r;
		snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
		if ((r = write_proc("/proc/self/gid_map", map, err)) < 0)
			return r;
	}
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return error_sys(err, errno, "socket");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return error_sys(err, errno, "SIOCGIFFLAGS lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return error_sys(err, errno, "bring lo up");
	unsigned idx = if_nametoindex("lo");
	_cleanup_close_ int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl < 0 || idx == 0)
		return error_sys(err, errno, "netlink");
	if ((r = nl_addr(nl, idx, META_ADDR, err)) < 0 || (r = nl_addr(nl, idx, PRIV_ADDR, err)) < 0 ||
	    (r = nl_addr(nl, idx, PUB_ADDR, err)) < 0)
		return r;
	return 0;
}

/* ---- stand-in services ---- */

static int listen_on(const char *addr, int port, int type, int *bound_port, struct error *err)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t len = sizeof(sin);
	int one = 1;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return error_set(err, EINVAL, "bad address %s", addr);
	_cleanup_close_ int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		return error_sys(err, errno, "listen on %s:%d", addr, port);
	if (bound_port)
		*bound_port = ntohs(sin.sin_port);
	return TAKE_FD(fd);
}

/* The servers of the namespace, in a child of ours: TCP answers a line of
 * HTTP and closes, UDP echoes. They exist so that an allowed attack is
 * seen to reach something, not just to leave. */
static pid_t serve(const int *fds, const int *stream, size_t n)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd pfd[8];
	for (size_t i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	for (;;) {
		/* The suite may have died before the prctl took hold. */
		if (getppid() == 1)
			_exit(0);
		if (poll(pfd, n, 500) <= 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (stream[i]) {
				int c = accept4(fds[i], NULL, NULL, SOCK_CLOEXEC);
				if (c >= 0) {
					static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
					/* Best effort: a client that left early is no error. */
					ssize_t w = write(c, resp, sizeof(resp) - 1);
					(void)w;
					close(c);
				}
			} else {
				struct sockaddr_storage from;
				socklen_t fl = sizeof(from);
				char buf[512];
				ssize_t m = recvfrom(fds[i], buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
				if (m > 0)
					sendto(fds[i], buf, (size_t)m, 0, (struct sockaddr *)&from, fl);
			}
		}
	}
}

/* The host process whose environment holds the canary and which the
 * signal probe aims at: the probe's own UDP echo helper, exec'd (so
 * /proc/PID/environ shows the canary) in a session of its own (so the
 * probe's "outside our session" rule counts it as the host's). Its argv[0]
 * names the run's scratch directory, "airlock-conformance-service:ROOT",
 * so that one run's service is told from another's of the same user. */
static pid_t spawn_holder(const char *probe, const char *canary, const char *root, int *udp_port,
			  struct error *err)
{
	char name[PATH_MAX + 32];
	snprintf(name, sizeof(name), "airlock-conformance-service:%s", root);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_sys(err, errno, "pipe");
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return error_sys(err, errno, "fork");
	}
	if (pid == 0) {
		char env1[128], env2[128];
		snprintf(env1, sizeof(env1), "GITHUB_TOKEN=ghp_%s", canary);
		snprintf(env2, sizeof(env2), "AWS_SECRET_ACCESS_KEY=%s", canary);
		char *envp[] = { env1, env2, (char *)"PATH=/usr/bin:/bin", NULL };
		char *argv[] = { name, (char *)"serve-udp", (char *)"0", (char *)"3600", NULL };
		setsid();
		/* Kept across execve: the helper dies with the suite. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull >= 0)
			dup2(devnull, 0);
		execve(probe, argv, envp);
		_exit(127);
	}
	close(p[1]);
	char line[64] = "";
	FILE *f = fdopen(p[0], "r");
	if (!f) {
		close(p[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return error_sys(err, errno, "fdopen");
	}
	/* The helper keeps writing to the pipe only at exit ("served N"). */
	if (!fgets(line, sizeof(line), f) || sscanf(line, "port %d", udp_port) != 1) {
		fclose(f);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return error_set(err, EIO, "%s serve-udp did not start", probe);
	}
	fclose(f);
	return pid;
}

/* ---- finding the probe ---- */

static int find_probe(const char *given, char *out, size_t len, struct error *err)
{
	static const char *const rel[] = { "airlock-probe", "../tests/probe/airlock-probe",
					   "../libexec/airlock/airlock-probe" };
	if (given) {
		if (access(given, X_OK) < 0)
			return error_sys(err, errno, "--probe %s", given);
		if (!realpath(given, out))
			return error_sys(err, errno, "--probe %s", given);
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return error_sys(err, errno, "cannot find airlock's own executable");
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char p[PATH_MAX * 2];
		snprintf(p, sizeof(p), "%s/%s", self, rel[i]);
		if (access(p, X_OK) == 0 && realpath(p, out))
			return 0;
	}
	(void)len;
	return error_set(err, ENOENT,
			 "the static probe airlock-probe is not beside %s nor in ../tests/probe; name it with --probe PATH",
			 self);
}

/* ---- the run ---- */

struct entry {
	size_t row;
	bool neighbour;
	size_t k; /* index in the row's attacks or neighbours */
};

/* Quote for /bin/sh: '...' with each ' written as '\''. */
static int sh_quote(struct buf *b, const char *s)
{
	int r = buf_puts(b, "'");
	for (; r == 0 && *s; s++)
		r = *s == '\'' ? buf_puts(b, "'\\''") : buf_append(b, s, 1);
	return r ? r : buf_puts(b, "'");
}

/* The runtime prefix with {workspace}, {home} and {audit} replaced by
 * quoted paths, followed by "$@" (the probe and its arguments). */
static int build_script(const char *runtime, const char *ws, const char *home, const char *audit,
			bool *uses_audit, struct buf *out, struct error *err)
{
	static const char *const names[] = { "{workspace}", "{home}", "{audit}" };
	const char *vals[] = { ws, home, audit };
	const char *p = runtime;
	*uses_audit = false;
	while (*p) {
		size_t i;
		for (i = 0; i < 3; i++)
			if (strncmp(p, names[i], strlen(names[i])) == 0)
				break;
		if (i < 3) {
			if (sh_quote(out, vals[i]) < 0)
				return error_set(err, ENOMEM, "out of memory");
			*uses_audit |= i == 2;
			p += strlen(names[i]);
		} else if (buf_append(out, p++, 1) < 0) {
			return error_set(err, ENOMEM, "out of memory");
		}
	}
	if (buf_puts(out, " \"$@\"") < 0 || buf_append(out, "", 1) < 0)
		return error_set(err, ENOMEM, "out of memory");
	return 0;
}

/* The probe's stdout, whole, bounded, with a deadline. */
static int read_output(int fd, pid_t pid, int timeout_s, struct buf *out, int *status, bool *timed_out)
{
	time_t end = time(NULL) + timeout_s;
	char tmp[4096];
	*timed_out = false;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		time_t now = time(NULL);
		if (now >= end) {
			*timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		int pr = poll(&pfd, 1, (int)(end - now) * 1000);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len < (1u << 20) && buf_append(out, tmp, (size_t)n) < 0)
			return -ENOMEM;
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static void tail_of_file(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(out, len, "%s", line);
	}
}

/* After the run: the record in dir, verified by airlock's own verifier
 * (the runtime's claims about its record are not taken on trust). */
static void check_audit(const char *dir, struct conf_result *denials, bool *intact, char *why, size_t wlen)
{
	_cleanup_(cleanup_closedirp) DIR *d = opendir(dir);
	char file[PATH_MAX] = "";
	struct dirent *de;
	*intact = false;
	while (d && (de = readdir(d)))
		if (strlen(de->d_name) > 6 && !strcmp(de->d_name + strlen(de->d_name) - 6, ".jsonl"))
			snprintf(file, sizeof(file), "%s/%s", dir, de->d_name);
	if (!file[0]) {
		snprintf(why, wlen, "no decision record: nothing was written to the {audit} directory");
		denials->verdict = CONF_FAILED;
		snprintf(denials->evidence, sizeof(denials->evidence), "%s", why);
		return;
	}
	long lines = 0, denies = 0;
	{
		_cleanup_fclose_ FILE *f = fopen(file, "re");
		_cleanup_free_ char *line = NULL;
		size_t cap = 0;
		while (f && getline(&line, &cap, f) > 0) {
			lines++;
			/* A hand-off held back from the workspace (hold mode)
			 * is recorded as defer: a decision against the probe
			 * as much as a refusal. */
			denies += strstr(line, "\"decision\":\"deny\"") != NULL ||
				  strstr(line, "\"decision\":\"defer\"") != NULL;
		}
	}
	char self[PATH_MAX], verdict[512] = "";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int p[2];
	int status = -1;
	if (n > 0 && pipe2(p, O_CLOEXEC) == 0) {
		self[n] = '\0';
		pid_t pid = fork();
		if (pid == 0) {
			dup2(p[1], 1);
			dup2(p[1], 2);
			execl(self, "airlock", "audit", "verify", file, (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		ssize_t m, off = 0;
		while (off < (ssize_t)sizeof(verdict) - 1 &&
		       (m = read(p[0], verdict + off, sizeof(verdict) - 1 - (size_t)off)) > 0)
			off += m;
		verdict[off] = '\0';
		verdict[strcspn(verdict, "\n")] = '\0';
		close(p[0]);
		if (pid > 0)
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
	}
	/* The verifier prints "FILE: intact and sealed: ..."; keep the tail. */
	const char *v = strstr(verdict, ": ");
	v = v ? v + 2 : verdict;
	*intact = status == 0;
	snprintf(why, wlen, "airlock audit verify: %s", v[0] ? v : "no output");
	denials->verdict = *intact && denies > 0 ? CONF_HELD : CONF_FAILED;
	snprintf(denials->evidence, sizeof(denials->evidence), "%ld records, %ld denials; %s%s", lines,
		 denies, why, denies ? "" : "; the probe's refused operations were not recorded");
}

/* One run of the suite: its scratch tree, its services and the batch the
 * probe runs, shared by the steps below. */
struct run {
	const struct conf_opts *opts;
	struct conf_info *info;
	char probe[PATH_MAX], root[PATH_MAX], ws[PATH_MAX + 8], outside[PATH_MAX + 16], home[PATH_MAX + 8],
		audit[PATH_MAX + 8], sock[PATH_MAX + 16], errlog[PATH_MAX + 16], wsprobe[PATH_MAX + 32],
		batchpath[PATH_MAX + 32];
	char canary[32], label[40], pidstr[16], tcpstr[16], udpstr[16];
	const char *vars[27]; /* name, value, ..., NULL */
	bool have_netns, have_vsock, uses_audit;
	pid_t holder, server;
	int lo_tcp, lo_udp, lo_fd, sock_fd;
	int ns_fds[5];
	struct buf script, output, batch;
	struct entry *ent;
	size_t nent, cap;
	char **argv;
	size_t argc, acap;
	char **envp;
	struct conf_line *lines;
	char env[5][PATH_MAX + 8192]; /* the variables build_env sets */
};

/* The namespace first (every service must live in it), then vsock, a
 * question for the host's kernel asked outside any runtime. */
static void probe_host(struct run *u)
{
	struct error nserr = { 0 };
	u->have_netns = enter_netns(&nserr) == 0;
	if (u->have_netns)
		snprintf(u->info->netns, sizeof(u->info->netns), "created: %s, %s, %s on its loopback%s", META_ADDR,
			 PRIV_ADDR, PUB_ADDR, geteuid() == 0 ? "" : " (in a user namespace)");
	else
		snprintf(u->info->netns, sizeof(u->info->netns), "not available (%s)", nserr.msg);
	/* Without vsock the row has nothing to contain. Only a socket is
	 * made; nothing is sent. */
	int vs = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	u->have_vsock = vs >= 0;
	if (u->have_vsock) {
		close(vs);
		snprintf(u->info->vsock, sizeof(u->info->vsock), "available");
	} else {
		snprintf(u->info->vsock, sizeof(u->info->vsock), "not available (socket(AF_VSOCK): %s)",
			 strerror(errno));
	}
}

/* The scratch directory, its paths, and the canary the secrets carry. */
static int make_root(struct run *u, struct error *err)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if ((size_t)snprintf(u->root, sizeof(u->root), "%s/airlock-conformance.XXXXXX", tmp) >= sizeof(u->root) ||
	    !mkdtemp(u->root)) {
		u->root[0] = '\0';
		return error_sys(err, errno, "cannot create a scratch directory in %s", tmp);
	}
	/* World-readable: a runtime that maps the agent to another uid must
	 * be judged on its sandbox, not on this directory's mode. */
	chmod(u->root, 0755);
	snprintf(u->ws, sizeof(u->ws), "%s/ws", u->root);
	snprintf(u->outside, sizeof(u->outside), "%s/outside", u->root);
	snprintf(u->home, sizeof(u->home), "%s/home", u->root);
	snprintf(u->audit, sizeof(u->audit), "%s/audit", u->root);
	snprintf(u->sock, sizeof(u->sock), "%s/run/docker.sock", u->root);
	snprintf(u->errlog, sizeof(u->errlog), "%s/runtime.stderr", u->root);
	snprintf(u->wsprobe, sizeof(u->wsprobe), "%s/airlock-probe", u->ws);
	unsigned char rnd[12];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return error_sys(err, errno, "getrandom");
	hex_encode(rnd, sizeof(rnd), u->canary);
	snprintf(u->label, sizeof(u->label), "c%s", u->canary);
	return 0;
}

/* The tree. Files the agent should not reach are world-readable and
 * directories world-writable for the same reason as the root's mode. */
static int make_tree(struct run *u, struct error *err)
{
	char keytext[256], awstext[256];
	snprintf(keytext, sizeof(keytext),
		 "-----BEGIN OPENSSH PRIVATE KEY-----\nairlock-conformance-%s\n-----END OPENSSH PRIVATE KEY-----\n",
		 u->canary);
	snprintf(awstext, sizeof(awstext), "[default]\naws_access_key_id = AKIAAIRLOCKCONFORM\naws_secret_access_key = %s\n",
		 u->canary);
	const struct {
		int where; /* 0 the root, 1 the workspace, 2 outside, 3 home */
		const char *rel, *text;
		mode_t mode;
	} tree[] = {
		{ 0, "ws", NULL, 0777 },
		{ 1, "README.md", "the workspace of the conformance suite\n", 0666 },
		{ 1, "src", NULL, 0777 },
		{ 1, ".git/hooks", NULL, 0777 },
		{ 1, ".git/config", "[core]\n\trepositoryformatversion = 0\n", 0666 },
		{ 1, ".git/HEAD", "ref: refs/heads/main\n", 0666 },
		{ 1, ".vscode", NULL, 0777 },
		{ 1, ".github/workflows", NULL, 0777 },
		{ 1, ".venv/bin/python", "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n", 0777 },
		{ 1, "node_modules/.bin", NULL, 0777 },
		{ 0, "outside", NULL, 0777 },
		{ 2, "notes.txt", "a host file outside the workspace\n", 0644 },
		{ 3, ".ssh/id_ed25519", keytext, 0644 },
		{ 3, ".aws/credentials", awstext, 0644 },
		{ 3, ".local/bin", NULL, 0777 },
		{ 0, "run", NULL, 0777 },
		{ 0, "audit", NULL, 0700 },
	};
	const char *dirs[] = { u->root, u->ws, u->outside, u->home };
	for (size_t i = 0; i < ARRAY_SIZE(tree); i++) {
		int r = put_file(dirs[tree[i].where], tree[i].rel, tree[i].text, tree[i].mode, err);
		if (r < 0)
			return r;
	}
	/* The probe inside the workspace: every runtime shows its workspace,
	 * and some execute nothing from anywhere else. */
	_cleanup_close_ int in = open(u->probe, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int o = open(u->wsprobe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	char b[65536];
	ssize_t n;
	if (in < 0 || o < 0)
		return error_sys(err, errno, "copy %s into the workspace", u->probe);
	while ((n = read(in, b, sizeof(b))) > 0)
		if (write(o, b, (size_t)n) != n)
			return error_sys(err, errno, "copy %s", u->probe);
	return 0;
}

/* The services the probe tries to reach: a loopback listener, the holder
 * of a secret in its memory, a Docker socket, and in the namespace the
 * metadata, private and public addresses. */
static int start_services(struct run *u, struct error *err)
{
	u->lo_fd = listen_on("127.0.0.1", 0, SOCK_STREAM, &u->lo_tcp, err);
	if (u->lo_fd < 0)
		return u->lo_fd;
	u->holder = spawn_holder(u->probe, u->canary, u->root, &u->lo_udp, err);
	if (u->holder < 0)
		return (int)u->holder;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", u->sock);
	u->sock_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (u->sock_fd < 0 || bind(u->sock_fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(u->sock_fd, 16) < 0 || chmod(u->sock, 0666) < 0)
		return error_sys(err, errno, "listen on %s", u->sock);
	if (u->have_netns) {
		static const int stream[5] = { 1, 1, 1, 0, 0 };
		struct error e2 = { 0 };
		u->ns_fds[0] = listen_on(META_ADDR, 80, SOCK_STREAM, NULL, &e2);
		u->ns_fds[1] = listen_on(PRIV_ADDR, 80, SOCK_STREAM, NULL, &e2);
		u->ns_fds[2] = listen_on(PUB_ADDR, 80, SOCK_STREAM, NULL, &e2);
		u->ns_fds[3] = listen_on(PUB_ADDR, 53, SOCK_DGRAM, NULL, &e2);
		u->ns_fds[4] = listen_on(PUB_ADDR, 7, SOCK_DGRAM, NULL, &e2);
		for (size_t i = 0; i < 5; i++)
			if (u->ns_fds[i] < 0) {
				u->have_netns = false;
				snprintf(u->info->netns, sizeof(u->info->netns),
					 "created, but its servers could not start (%s)", e2.msg);
			}
		if (u->have_netns)
			u->server = serve(u->ns_fds, stream, 5);
	}
	snprintf(u->pidstr, sizeof(u->pidstr), "%d", (int)u->holder);
	snprintf(u->tcpstr, sizeof(u->tcpstr), "%d", u->lo_tcp);
	snprintf(u->udpstr, sizeof(u->udpstr), "%d", u->lo_udp);
	const char *vars[] = { "ws", u->ws, "outside", u->outside, "home", u->home, "canary", u->canary,
			       "label", u->label, "svc_pid", u->pidstr, "lo_tcp", u->tcpstr, "lo_udp", u->udpstr,
			       "sock", u->sock, "audit", u->audit, "meta", META_ADDR, "priv", PRIV_ADDR,
			       "pub", PUB_ADDR, NULL };
	_Static_assert(sizeof(vars) == sizeof(u->vars), "struct run holds every variable");
	memcpy(u->vars, vars, sizeof(vars));
	return 0;
}

static int push_arg(struct run *u, const char *s, struct error *err)
{
	if (u->argc + 2 > u->acap) {
		size_t acap = u->acap ? u->acap * 2 : 64;
		char **na = realloc(u->argv, acap * sizeof(*na));
		if (!na)
			return error_set(err, ENOMEM, "out of memory");
		u->argv = na;
		u->acap = acap;
	}
	if (!(u->argv[u->argc] = strdup(s)))
		return error_set(err, ENOMEM, "out of memory");
	u->argv[++u->argc] = NULL;
	return 0;
}

/* One probe line of row i into the batch, its place into ent. */
static int batch_line(struct run *u, size_t i, int nb, size_t k, const char *probe_line, struct error *err)
{
	char tmpl[512], *save = NULL;
	int r;
	snprintf(tmpl, sizeof(tmpl), "%s", probe_line);
	for (char *tok = strtok_r(tmpl, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char arg[PATH_MAX + 64];
		if ((r = conf_expand(tok, u->vars, arg, sizeof(arg), err)) < 0)
			return r;
		if (strpbrk(arg, "\t\n"))
			return error_set(err, EINVAL, "%s: a tab or newline in a path of the suite", arg);
		if ((tok != tmpl && buf_puts(&u->batch, "\t") < 0) || buf_puts(&u->batch, arg) < 0)
			return error_set(err, ENOMEM, "out of memory");
	}
	if (buf_puts(&u->batch, "\n") < 0)
		return error_set(err, ENOMEM, "out of memory");
	if (u->nent == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		struct entry *ne = realloc(u->ent, cap * sizeof(*ne));
		if (!ne)
			return error_set(err, ENOMEM, "out of memory");
		u->ent = ne;
		u->cap = cap;
	}
	u->ent[u->nent++] = (struct entry){ .row = i, .neighbour = nb, .k = k };
	return 0;
}

/* Whether row q can be asked here at all. */
static bool row_runs(const struct run *u, const struct conf_req *q)
{
	return !((q->need == CONF_NEED_NETNS && !u->have_netns) || (q->need == CONF_NEED_AUDIT && !u->uses_audit) ||
		 (q->need == CONF_NEED_VSOCK && !u->have_vsock));
}

/* The command line (the runtime's prefix around the probe) and the batch:
 * every row's lines, in table order. The batch goes in a file beside the
 * probe rather than on the command line: some runtimes cap their
 * argument count. */
static int build_batch(struct run *u, struct error *err)
{
	int r = build_script(u->opts->runtime, u->ws, u->home, u->audit, &u->uses_audit, &u->script, err);
	if (r < 0)
		return r;
	snprintf(u->batchpath, sizeof(u->batchpath), "%s/airlock-probe.batch", u->ws);
	/* Absolute paths: some runtimes (firejail) resolve no relative one. */
	const char *args[] = { "/bin/sh", "-c", (char *)u->script.data, "airlock-conformance", u->wsprobe,
			       "batch-file", u->batchpath };
	for (size_t i = 0; i < ARRAY_SIZE(args); i++)
		if ((r = push_arg(u, args[i], err)) < 0)
			return r;
	for (size_t i = 0; i < conf_nreqs; i++) {
		const struct conf_req *q = &conf_reqs[i];
		if (!row_runs(u, q))
			continue;
		for (int nb = 0; nb < 2; nb++) {
			const char *const *pl = nb ? q->neighbours : q->attacks;
			for (size_t k = 0; k < CONF_MAX_PROBES && pl[k]; k++)
				if ((r = batch_line(u, i, nb, k, pl[k], err)) < 0)
					return r;
		}
	}
	return put_file(u->ws, "airlock-probe.batch", u->batch.len ? u->batch.data : "", 0644, err);
}

/* The environment: the caller's, with the temporary HOME, the canary
 * under the names real secrets have, and a Docker socket to find. */
static int build_env(struct run *u, struct error *err)
{
	char(*e)[PATH_MAX + 8192] = u->env;
	size_t nenv = 0;
	for (char **v = environ; *v; v++)
		nenv++;
	u->envp = calloc(nenv + 8, sizeof(*u->envp));
	if (!u->envp)
		return error_set(err, ENOMEM, "out of memory");
	const char *path = getenv("PATH");
	snprintf(e[0], sizeof(e[0]), "HOME=%s", u->home);
	snprintf(e[1], sizeof(e[1]), "GITHUB_TOKEN=ghp_%s", u->canary);
	snprintf(e[2], sizeof(e[2]), "AWS_SECRET_ACCESS_KEY=%s", u->canary);
	snprintf(e[3], sizeof(e[3]), "DOCKER_HOST=unix://%s", u->sock);
	snprintf(e[4], sizeof(e[4]), "PATH=%s/.local/bin:%s", u->home, path ? path : "/usr/bin:/bin");
	size_t k = 0;
	for (char **v = environ; *v; v++)
		/* TMPDIR too: it names where the suite keeps its scratch tree
		 * (and so the "outside" files), and runtimes give the agent's
		 * TMPDIR to the agent (codex makes it writable; runsc puts its
		 * own root there). */
		if (strncmp(*v, "HOME=", 5) && strncmp(*v, "TMPDIR=", 7) && strncmp(*v, "GITHUB_TOKEN=", 13) &&
		    strncmp(*v, "AWS_SECRET_ACCESS_KEY=", 22) && strncmp(*v, "DOCKER_HOST=", 12) &&
		    strncmp(*v, "PATH=", 5))
			u->envp[k++] = *v;
	for (size_t i = 0; i < 5; i++)
		u->envp[k++] = e[i];
	u->envp[k] = NULL;
	return 0;
}

/* The runtime, with the probe's batch; its output into u->output and
 * what became of it into info->runtime_status. */
static int run_runtime(struct run *u, struct error *err)
{
	/* The deliberate leak: a host file open without O_CLOEXEC, as a
	 * careless parent (an IDE, an agent framework) would hand down. */
	_cleanup_close_ int leak = open(u->outside, O_RDONLY | O_DIRECTORY);
	int out_pipe[2];
	if (leak < 0 || pipe2(out_pipe, O_CLOEXEC) < 0)
		return error_sys(err, errno, "setup");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(out_pipe[0]);
		close(out_pipe[1]);
		return error_sys(err, e, "fork");
	}
	if (pid == 0) {
		/* A process group of its own, so a timeout kills it all. */
		setpgid(0, 0);
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int errfd = open(u->errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (in < 0 || errfd < 0 || chdir(u->ws) < 0)
			_exit(127);
		dup2(in, 0);
		dup2(out_pipe[1], 1);
		dup2(errfd, 2);
		/* Only stdio and the deliberate leak reach the runtime: the
		 * caller's own descriptors are not ours to hand on. */
		close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
		if (fcntl(leak, F_SETFD, 0) < 0)
			_exit(127);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve("/bin/sh", u->argv, u->envp);
		_exit(127);
	}
	close(out_pipe[1]);
	close(leak);
	leak = -1;
	int status = 0;
	bool timed_out = false;
	int r = read_output(out_pipe[0], pid, u->opts->timeout_s > 0 ? u->opts->timeout_s : 300, &u->output,
			    &status, &timed_out);
	close(out_pipe[0]);
	if (r < 0)
		return error_set(err, -r, "reading the probe's output");
	char errtail[200];
	struct conf_info *info = u->info;
	tail_of_file(u->errlog, errtail, sizeof(errtail));
	if (timed_out)
		snprintf(info->runtime_status, sizeof(info->runtime_status), "killed after %d s", u->opts->timeout_s);
	else if (WIFSIGNALED(status))
		snprintf(info->runtime_status, sizeof(info->runtime_status), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(info->runtime_status, sizeof(info->runtime_status), "exit status %d%s%s",
			 WEXITSTATUS(status), errtail[0] ? "; last stderr line: " : "", errtail);
	return 0;
}

/* The probe's answers, by index, then what it left in the workspace as
 * the host sees it (conf_host_view): a runtime that writes into a
 * throwaway overlay (gVisor's runsc do) has contained a write, and a
 * hand-off nobody on the host will find is no hand-off; a set-ID bit or a
 * git redirect the host holds got through whatever the probe was told.
 * The same holds for the neighbour: the agent's own work that never
 * reaches the workspace on the host was not let through. */
static int read_lines(struct run *u, struct error *err)
{
	u->lines = calloc(u->nent ? u->nent : 1, sizeof(*u->lines));
	if (!u->lines || buf_append(&u->output, "", 1) < 0)
		return error_set(err, ENOMEM, "out of memory");
	bool ended = false;
	char *save = NULL;
	for (char *l = strtok_r((char *)u->output.data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t idx;
		struct conf_line cl;
		int pr = conf_parse_line(l, &idx, &cl);
		if (pr == 1)
			ended = true;
		else if (pr == 0 && idx < u->nent) {
			u->lines[idx] = cl;
			u->info->ran = true;
		}
	}
	struct conf_info *info = u->info;
	if (!ended && info->ran)
		snprintf(info->runtime_status + strlen(info->runtime_status),
			 sizeof(info->runtime_status) - strlen(info->runtime_status),
			 "; the probe did not finish its batch");
	for (size_t e = 0; e < u->nent; e++) {
		const struct conf_req *q = &conf_reqs[u->ent[e].row];
		const char *t = u->ent[e].neighbour ? q->neighbours[u->ent[e].k] : q->attacks[u->ent[e].k];
		char tmpl[512], name[64], expanded[4][PATH_MAX + 64], *tsave = NULL;
		const char *args[4];
		size_t nargs = 0;
		struct error xe = { 0 };
		bool ok = true;
		snprintf(tmpl, sizeof(tmpl), "%s", t);
		char *tok = strtok_r(tmpl, " ", &tsave);
		snprintf(name, sizeof(name), "%s", tok ? tok : "");
		while (ok && (tok = strtok_r(NULL, " ", &tsave))) {
			ok = nargs < 4 && conf_expand(tok, u->vars, expanded[nargs], sizeof(expanded[nargs]), &xe) == 0;
			if (ok) {
				args[nargs] = expanded[nargs];
				nargs++;
			}
		}
		if (ok)
			conf_host_view(name, args, nargs, &u->lines[e]);
	}
	return 0;
}

/* Each row's verdict from its lines; then the log's rows from the log. */
static void judge(struct run *u, struct conf_result *res)
{
	const struct conf_info *info = u->info;
	for (size_t i = 0; i < conf_nreqs; i++) {
		const struct conf_req *q = &conf_reqs[i];
		struct conf_line att[CONF_MAX_PROBES], nb[CONF_MAX_PROBES];
		size_t na = 0, nn = 0;
		const char *why = NULL;
		enum conf_verdict v = CONF_NA;
		char text[sizeof(res[i].evidence)];
		if (q->need == CONF_NEED_NETNS && !u->have_netns) {
			snprintf(text, sizeof(text), "needs the suite's network namespace, which is %s", info->netns);
			why = text;
		} else if (q->need == CONF_NEED_VSOCK && !u->have_vsock) {
			snprintf(text, sizeof(text), "this host's kernel offers no vsock: %s", info->vsock);
			why = text;
		} else if (q->need == CONF_NEED_AUDIT && !u->uses_audit) {
			v = CONF_FAILED;
			why = "no decision record: the runtime prefix names no {audit} directory to keep one in";
		} else if (!info->ran) {
			snprintf(text, sizeof(text), "the runtime did not run the probe (%s)", info->runtime_status);
			why = text;
		}
		if (why) {
			res[i].verdict = v;
			snprintf(res[i].evidence, sizeof(res[i].evidence), "%s", why);
			continue;
		}
		for (size_t e = 0; e < u->nent; e++) {
			if (u->ent[e].row != i)
				continue;
			if (u->ent[e].neighbour)
				nb[nn++] = u->lines[e];
			else
				att[na++] = u->lines[e];
		}
		conf_judge(q, att, na, nb, nn, &res[i]);
	}
	if (!u->uses_audit || !info->ran)
		return;
	bool intact;
	char why[600];
	for (size_t i = 0; i < conf_nreqs; i++) {
		if (strcmp(conf_reqs[i].id, "audit.denials") != 0)
			continue;
		check_audit(u->audit, &res[i], &intact, why, sizeof(why));
		for (size_t j = 0; j < conf_nreqs; j++) {
			if (strcmp(conf_reqs[j].id, "audit.tamper") != 0)
				continue;
			size_t used = strlen(res[j].evidence);
			snprintf(res[j].evidence + used, sizeof(res[j].evidence) - used, "; after the run: %s", why);
			if (!intact)
				res[j].verdict = CONF_FAILED;
		}
	}
}

static void run_release(struct run *u)
{
	if (u->server > 0) {
		kill(u->server, SIGKILL);
		waitpid(u->server, NULL, 0);
	}
	if (u->holder > 0) {
		kill(u->holder, SIGKILL);
		waitpid(u->holder, NULL, 0);
	}
	for (size_t i = 0; i < 5; i++)
		if (u->ns_fds[i] >= 0)
			close(u->ns_fds[i]);
	if (u->lo_fd >= 0)
		close(u->lo_fd);
	if (u->sock_fd >= 0)
		close(u->sock_fd);
	if (u->root[0]) {
		if (u->opts->keep)
			snprintf(u->info->scratch, sizeof(u->info->scratch), "%s", u->root);
		else
			rm_tree(u->root);
	}
	buf_free(&u->script);
	buf_free(&u->output);
	buf_free(&u->batch);
	free(u->ent);
	for (size_t i = 0; u->argv && i < u->argc; i++)
		free(u->argv[i]);
	free(u->argv);
	free(u->envp);
	free(u->lines);
	free(u);
}

int conf_run(const struct conf_opts *opts, struct conf_result *res, struct conf_info *info,
	     struct error *err)
{
	memset(info, 0, sizeof(*info));
	for (size_t i = 0; i < conf_nreqs; i++)
		memset(&res[i], 0, sizeof(res[i]));
	/* On the heap: the paths and variables are a few pages. */
	struct run *u = calloc(1, sizeof(*u));
	if (!u)
		return error_set(err, ENOMEM, "out of memory");
	*u = (struct run){ .opts = opts, .info = info, .holder = -1, .server = -1, .lo_fd = -1, .sock_fd = -1,
			   .ns_fds = { -1, -1, -1, -1, -1 } };
	int r = find_probe(opts->probe, u->probe, sizeof(u->probe), err);
	if (r < 0) {
		free(u);
		return r;
	}
	snprintf(info->probe, sizeof(info->probe), "%s", u->probe);
	probe_host(u);
	if ((r = make_root(u, err)) >= 0 && (r = make_tree(u, err)) >= 0 && (r = start_services(u, err)) >= 0 &&
	    (r = build_batch(u, err)) >= 0 && (r = build_env(u, err)) >= 0 &&
	    (r = run_runtime(u, err)) >= 0 && (r = read_lines(u, err)) >= 0) {
		judge(u, res);
		r = 0;
	}
	run_release(u);
	return r;
}
