/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the transparent network mode. Each test forks a child
 * that makes its own user and network namespaces (loopback only, as in
 * the sandbox), installs the routes and ruleset, and then sends real
 * traffic: redirected connections must land on our listeners with their
 * original destination readable, loopback must pass untouched, and
 * everything else must be dropped. The child reports a failure as text
 * through a pipe and a nonzero exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "sandbox/netfilter.h"
#include "util/cleanup.h"
#include "util/error.h"

#define PROXY_PORT 15001
#define PROXY_PORT2 15011
#define DNS_PORT 15053
#define OTHER_PORT 15002

/* SOL_IP / SOL_IPV6 option giving a redirected connection's original
 * destination (<linux/netfilter_ipv4.h>, <linux/netfilter_ipv6/ip6_tables.h>). */
#define ORIGINAL_DST 80

/* A child's exit status meaning "cannot run here": the parent skips. */
#define CHILD_SKIP 77

/* ---- the child's side ---------------------------------------------------- */

static int report_fd = -1;

/* Tell the parent what went wrong; returns the exit status to use. */
static int child_say(int status, const char *fmt, ...) PRINTF_LIKE(2, 3);
static int child_say(int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return status;
	if ((size_t)n > sizeof(msg) - 2)
		n = (int)sizeof(msg) - 2;
	msg[n++] = '\n';
	(void)!write(report_fd, msg, (size_t)n);
	return status;
}

#define FAIL(...) child_say(1, __VA_ARGS__)

union sa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	struct sockaddr_storage ss;
};

static socklen_t mkaddr(union sa *a, const char *ip, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, ip, &a->in.sin_addr) == 1) {
		a->in.sin_family = AF_INET;
		a->in.sin_port = htons(port);
		return sizeof(a->in);
	}
	if (inet_pton(AF_INET6, ip, &a->in6.sin6_addr) != 1)
		abort();
	a->in6.sin6_family = AF_INET6;
	a->in6.sin6_port = htons(port);
	return sizeof(a->in6);
}

static const char *addr_str(const union sa *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	if (a->sa.sa_family == AF_INET) {
		inet_ntop(AF_INET, &a->in.sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(a->in.sin_port));
	} else if (a->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->in6.sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(a->in6.sin6_port));
	} else {
		snprintf(buf, len, "(family %d)", a->sa.sa_family);
	}
	return buf;
}

static bool addr_eq(const union sa *a, const union sa *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->in.sin_port == b->in.sin_port && a->in.sin_addr.s_addr == b->in.sin_addr.s_addr;
	return a->in6.sin6_port == b->in6.sin6_port &&
	       memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr, sizeof(a->in6.sin6_addr)) == 0;
}

/* Bound every wait, so that a broken ruleset fails the test instead of
 * hanging it. Not a timing assertion: loopback answers at once. */
static void bound_waits(int fd)
{
	struct timeval tv = { .tv_sec = 5 };
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int new_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return FAIL("socket: %s", strerror(errno)), -1;
	bound_waits(fd);
	return fd;
}

static int bound_socket(int type, const char *ip, uint16_t port)
{
	union sa a;
	socklen_t len = mkaddr(&a, ip, port);
	int fd = new_socket(a.sa.sa_family, type);
	if (fd < 0)
		return -1;
	int one = 1;
	if (a.sa.sa_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, &a.sa, len) < 0 || (type == SOCK_STREAM && listen(fd, 8) < 0)) {
		FAIL("bind/listen %s port %u: %s", ip, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* connect() to ip:port; returns the socket, or -1 with errno set and
 * nothing reported (callers decide whether failing is the point). */
static int try_connect(const char *ip, uint16_t port)
{
	union sa a;
	socklen_t len = mkaddr(&a, ip, port);
	int fd = new_socket(a.sa.sa_family, SOCK_STREAM);
	if (fd < 0)
		return -1;
	if (connect(fd, &a.sa, len) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static ssize_t try_sendto(int fd, const char *ip, uint16_t port, const char *msg)
{
	union sa a;
	socklen_t len = mkaddr(&a, ip, port);
	return sendto(fd, msg, strlen(msg), 0, &a.sa, len);
}

/* Whether a listener has a connection waiting, without waiting. */
static bool has_pending(int listener)
{
	int flags = fcntl(listener, F_GETFL);
	if (flags < 0 || fcntl(listener, F_SETFL, flags | O_NONBLOCK) < 0)
		return true; /* cannot tell: count it against the caller */
	int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return false;
}

static bool ipv6_here(void)
{
	_cleanup_close_ int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	union sa a;
	socklen_t len = mkaddr(&a, "::1", 0);
	return s >= 0 && bind(s, &a.sa, len) == 0;
}

static int transparent(uint16_t proxy_port, uint16_t dns_port)
{
	struct error err = { 0 };
	int r = netfilter_transparent(proxy_port, dns_port, &err);
	if (r < 0)
		return FAIL("netfilter_transparent: %d: %s", r, err.msg);
	if (err.msg[0])
		return FAIL("netfilter_transparent succeeded but left a message: %s", err.msg);
	return 0;
}

/* Connect to dst_ip:dst_port with the ruleset in place: the connection
 * must be accepted by proxy_listener, report its original destination,
 * look to the client as though it reached dst, and carry data both ways. */
static int check_redirected(int proxy_listener, const char *dst_ip, uint16_t dst_port)
{
	char s1[80], s2[80];
	union sa dst;
	mkaddr(&dst, dst_ip, dst_port);
	_cleanup_close_ int c = try_connect(dst_ip, dst_port);
	if (c < 0)
		return FAIL("connect to %s: %s", addr_str(&dst, s1, sizeof(s1)), strerror(errno));
	_cleanup_close_ int a = accept4(proxy_listener, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		return FAIL("the proxy's listener got no connection for %s: %s", addr_str(&dst, s1, sizeof(s1)),
			    strerror(errno));
	bound_waits(a);

	union sa peer = { 0 };
	socklen_t len = sizeof(peer);
	if (getpeername(c, &peer.sa, &len) < 0 || !addr_eq(&peer, &dst))
		return FAIL("the client's peer is %s, expected %s", addr_str(&peer, s1, sizeof(s1)),
			    addr_str(&dst, s2, sizeof(s2)));

	union sa orig = { 0 };
	len = sizeof(orig);
	int level = dst.sa.sa_family == AF_INET ? SOL_IP : SOL_IPV6;
	if (getsockopt(a, level, ORIGINAL_DST, &orig, &len) < 0)
		return FAIL("SO_ORIGINAL_DST: %s", strerror(errno));
	if (!addr_eq(&orig, &dst))
		return FAIL("SO_ORIGINAL_DST is %s, expected %s", addr_str(&orig, s1, sizeof(s1)),
			    addr_str(&dst, s2, sizeof(s2)));

	char buf[8] = { 0 };
	if (write(c, "ping", 4) != 4 || read(a, buf, sizeof(buf)) != 4 || memcmp(buf, "ping", 4) != 0)
		return FAIL("client to proxy: data lost");
	if (write(a, "pong", 4) != 4 || read(c, buf, sizeof(buf)) != 4 || memcmp(buf, "pong", 4) != 0)
		return FAIL("proxy to client: data lost");
	return 0;
}

/* ---- the children --------------------------------------------------------- */

static int child_tcp4(void)
{
	/* Before: without the route, the connection fails outright... */
	int c = try_connect("203.0.113.7", 443);
	if (c >= 0 || errno != ENETUNREACH)
		return FAIL("before setup, connect to 203.0.113.7:443 gave %s, expected ENETUNREACH",
			    c >= 0 ? "success" : strerror(errno));
	/* ...after, it reaches the proxy. */
	_cleanup_close_ int l = bound_socket(SOCK_STREAM, "127.0.0.1", PROXY_PORT);
	if (l < 0)
		return 1;
	if (transparent(PROXY_PORT, DNS_PORT))
		return 1;
	if (check_redirected(l, "203.0.113.7", 443))
		return 1;
	/* Any address, any port. */
	return check_redirected(l, "198.51.100.20", 22);
}

static int child_tcp6(void)
{
	if (!ipv6_here())
		return child_say(CHILD_SKIP, "no IPv6 on loopback in a new network namespace");
	_cleanup_close_ int l = bound_socket(SOCK_STREAM, "::1", PROXY_PORT);
	if (l < 0)
		return 1;
	int c = try_connect("2001:db8::7", 80);
	if (c >= 0 || (errno != ENETUNREACH && errno != EHOSTUNREACH))
		return FAIL("before setup, connect to [2001:db8::7]:80 gave %s, expected ENETUNREACH",
			    c >= 0 ? "success" : strerror(errno));
	if (transparent(PROXY_PORT, DNS_PORT))
		return 1;
	return check_redirected(l, "2001:db8::7", 80);
}

static int child_dns(void)
{
	char s1[80];
	_cleanup_close_ int srv = bound_socket(SOCK_DGRAM, "127.0.0.1", DNS_PORT);
	_cleanup_close_ int cli = new_socket(AF_INET, SOCK_DGRAM);
	if (srv < 0 || cli < 0)
		return 1;
	if (transparent(PROXY_PORT, DNS_PORT))
		return 1;

	if (try_sendto(cli, "192.0.2.1", 53, "query") != 5)
		return FAIL("sendto 192.0.2.1:53: %s", strerror(errno));
	char buf[16] = { 0 };
	union sa from = { 0 };
	socklen_t len = sizeof(from);
	if (recvfrom(srv, buf, sizeof(buf), 0, &from.sa, &len) != 5 || memcmp(buf, "query", 5) != 0)
		return FAIL("the DNS listener did not get the query: %s", strerror(errno));

	/* The answer goes back to the client's real address; conntrack makes
	 * it come from the server the client asked. */
	if (sendto(srv, "answer", 6, 0, &from.sa, len) != 6)
		return FAIL("sendto the client at %s: %s", addr_str(&from, s1, sizeof(s1)), strerror(errno));
	union sa server = { 0 }, expected;
	mkaddr(&expected, "192.0.2.1", 53);
	len = sizeof(server);
	if (recvfrom(cli, buf, sizeof(buf), 0, &server.sa, &len) != 6 || memcmp(buf, "answer", 6) != 0)
		return FAIL("the client did not get the answer: %s", strerror(errno));
	if (!addr_eq(&server, &expected))
		return FAIL("the answer came from %s, expected 192.0.2.1:53", addr_str(&server, s1, sizeof(s1)));

	/* DNS over IPv6 is not redirected, hence dropped. */
	if (ipv6_here()) {
		_cleanup_close_ int cli6 = new_socket(AF_INET6, SOCK_DGRAM);
		if (cli6 < 0)
			return 1;
		if (try_sendto(cli6, "2001:db8::53", 53, "query") >= 0 || errno != EPERM)
			return FAIL("sendto [2001:db8::53]:53 was not refused with EPERM: %s", strerror(errno));
	}
	return 0;
}

static int child_drop(void)
{
	_cleanup_close_ int cli = new_socket(AF_INET, SOCK_DGRAM);
	if (cli < 0)
		return 1;
	/* Before: no route, so ENETUNREACH. After: the route exists and only
	 * the filter chain's drop can answer EPERM. */
	if (try_sendto(cli, "192.0.2.1", 9999, "x") >= 0 || errno != ENETUNREACH)
		return FAIL("before setup, sendto 192.0.2.1:9999 gave %s, expected ENETUNREACH", strerror(errno));
	if (transparent(PROXY_PORT, DNS_PORT))
		return 1;
	if (try_sendto(cli, "192.0.2.1", 9999, "x") >= 0 || errno != EPERM)
		return FAIL("sendto 192.0.2.1:9999 was not refused with EPERM: %s", strerror(errno));
	/* Neither DNS's port on another protocol... */
	if (try_sendto(cli, "192.0.2.1", 54, "x") >= 0 || errno != EPERM)
		return FAIL("sendto 192.0.2.1:54 was not refused with EPERM: %s", strerror(errno));
	if (ipv6_here()) {
		_cleanup_close_ int cli6 = new_socket(AF_INET6, SOCK_DGRAM);
		if (cli6 < 0)
			return 1;
		if (try_sendto(cli6, "2001:db8::1", 9999, "x") >= 0 || errno != EPERM)
			return FAIL("sendto [2001:db8::1]:9999 was not refused with EPERM: %s", strerror(errno));
	}

	/* The neighbour: UDP over loopback still flows. */
	_cleanup_close_ int srv = bound_socket(SOCK_DGRAM, "127.0.0.1", 9999);
	if (srv < 0)
		return 1;
	if (try_sendto(cli, "127.0.0.1", 9999, "local") != 5)
		return FAIL("sendto 127.0.0.1:9999: %s", strerror(errno));
	char buf[8];
	if (recv(srv, buf, sizeof(buf), 0) != 5)
		return FAIL("UDP over loopback was lost: %s", strerror(errno));
	return 0;
}

/* A loopback connection reaches its own listener, not the proxy, and
 * carries no redirection. */
static int check_loopback(const char *ip, const char *proxy_ip)
{
	char s1[80];
	_cleanup_close_ int proxy = bound_socket(SOCK_STREAM, proxy_ip, PROXY_PORT);
	_cleanup_close_ int l = bound_socket(SOCK_STREAM, ip, OTHER_PORT);
	if (proxy < 0 || l < 0)
		return 1;
	_cleanup_close_ int c = try_connect(ip, OTHER_PORT);
	if (c < 0)
		return FAIL("connect to %s port %d: %s", ip, OTHER_PORT, strerror(errno));
	_cleanup_close_ int a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		return FAIL("the listener on %s port %d got nothing: %s", ip, OTHER_PORT, strerror(errno));
	if (has_pending(proxy))
		return FAIL("a connection to %s port %d reached the proxy", ip, OTHER_PORT);

	/* Either conntrack has no NAT record (ENOENT), or the destination it
	 * records is the one the client used; never a rewrite. */
	union sa self, orig = { 0 };
	mkaddr(&self, ip, OTHER_PORT);
	socklen_t len = sizeof(orig);
	int level = self.sa.sa_family == AF_INET ? SOL_IP : SOL_IPV6;
	if (getsockopt(a, level, ORIGINAL_DST, &orig, &len) == 0) {
		if (!addr_eq(&orig, &self))
			return FAIL("SO_ORIGINAL_DST of a loopback connection is %s",
				    addr_str(&orig, s1, sizeof(s1)));
	} else if (errno != ENOENT) {
		return FAIL("SO_ORIGINAL_DST of a loopback connection: %s", strerror(errno));
	}
	return 0;
}

static int child_loopback(void)
{
	if (transparent(PROXY_PORT, DNS_PORT))
		return 1;
	if (check_loopback("127.0.0.1", "127.0.0.1") || check_loopback("127.0.0.2", "127.0.0.1"))
		return 1;
	if (ipv6_here() && check_loopback("::1", "::1"))
		return 1;
	return 0;
}

/* A second call replaces the table: redirection follows the new port,
 * and nothing of the old one is left. */
static int child_reapply(void)
{
	_cleanup_close_ int old = bound_socket(SOCK_STREAM, "127.0.0.1", PROXY_PORT);
	_cleanup_close_ int l = bound_socket(SOCK_STREAM, "127.0.0.1", PROXY_PORT2);
	if (old < 0 || l < 0)
		return 1;
	if (transparent(PROXY_PORT, DNS_PORT) || transparent(PROXY_PORT2, DNS_PORT))
		return 1;
	if (check_redirected(l, "203.0.113.7", 443))
		return 1;
	if (has_pending(old))
		return FAIL("a connection still went to the first call's port");
	return 0;
}

static int child_no_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		return FAIL("capset: %s", strerror(errno));

	struct error err = { 0 };
	int r = netfilter_transparent(PROXY_PORT, DNS_PORT, &err);
	if (r != -EPERM)
		return FAIL("without CAP_NET_ADMIN: returned %d, expected -EPERM (%s)", r, err.msg);
	if (err.code != EPERM || !strstr(err.msg, "route") || !strstr(err.msg, "CAP_NET_ADMIN"))
		return FAIL("without CAP_NET_ADMIN: unhelpful message \"%s\"", err.msg);

	/* Nothing was applied: still no route. */
	_cleanup_close_ int cli = new_socket(AF_INET, SOCK_DGRAM);
	if (cli < 0)
		return 1;
	if (try_sendto(cli, "192.0.2.1", 9999, "x") >= 0 || errno != ENETUNREACH)
		return FAIL("after the failed call, sendto 192.0.2.1:9999 gave %s", strerror(errno));
	return 0;
}

static int child_bad_ports(void)
{
	struct error err = { 0 };
	int r = netfilter_transparent(0, DNS_PORT, &err);
	if (r != -EINVAL || !strstr(err.msg, "port"))
		return FAIL("proxy port 0: returned %d (%s), expected -EINVAL", r, err.msg);
	error_clear(&err);
	r = netfilter_transparent(PROXY_PORT, 0, &err);
	if (r != -EINVAL || !strstr(err.msg, "port"))
		return FAIL("DNS port 0: returned %d (%s), expected -EINVAL", r, err.msg);
	/* and nothing was applied */
	int c = try_connect("203.0.113.7", 443);
	if (c >= 0 || errno != ENETUNREACH)
		return FAIL("after refusing bad ports, connect gave %s, expected ENETUNREACH",
			    c >= 0 ? "success" : strerror(errno));
	return 0;
}

/* ---- the parent's side ---------------------------------------------------- */

static int enter_namespaces(void)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return child_say(CHILD_SKIP, "cannot create user and network namespaces here: %s", strerror(errno));
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return FAIL("loopback flags: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return FAIL("bring up loopback: %s", strerror(errno));
	return 0;
}

/* Run fn in a child in fresh namespaces; fail the test with the child's
 * report, or skip when it cannot run here. */
static void in_namespaces(int (*fn)(void))
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		int r = enter_namespaces();
		_exit(r ? r : fn());
	}
	close(p[1]);
	char msg[4096];
	size_t len = 0;
	while (len < sizeof(msg) - 1) {
		ssize_t n = read(p[0], msg + len, sizeof(msg) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	msg[len] = '\0';
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_SKIP) {
		print_message("skipped: %s", msg);
		skip();
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("child (status 0x%x): %s", (unsigned)st, msg);
}

static void test_tcp_redirect_ipv4(void **state)
{
	(void)state;
	in_namespaces(child_tcp4);
}

static void test_tcp_redirect_ipv6(void **state)
{
	(void)state;
	in_namespaces(child_tcp6);
}

static void test_dns_redirect(void **state)
{
	(void)state;
	in_namespaces(child_dns);
}

static void test_other_traffic_dropped(void **state)
{
	(void)state;
	in_namespaces(child_drop);
}

static void test_loopback_untouched(void **state)
{
	(void)state;
	in_namespaces(child_loopback);
}

static void test_reapply_replaces(void **state)
{
	(void)state;
	in_namespaces(child_reapply);
}

static void test_without_cap_net_admin(void **state)
{
	(void)state;
	in_namespaces(child_no_caps);
}

static void test_bad_ports(void **state)
{
	(void)state;
	/* In a namespace too: should the check ever move, a root test run
	 * must not rewrite the host's routes. */
	in_namespaces(child_bad_ports);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_redirect_ipv4),
		cmocka_unit_test(test_tcp_redirect_ipv6),
		cmocka_unit_test(test_dns_redirect),
		cmocka_unit_test(test_other_traffic_dropped),
		cmocka_unit_test(test_loopback_untouched),
		cmocka_unit_test(test_reapply_replaces),
		cmocka_unit_test(test_without_cap_net_admin),
		cmocka_unit_test(test_bad_ports),
	};
	return cmocka_run_group_tests_name("netfilter", tests, NULL, NULL);
}
