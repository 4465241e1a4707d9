/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for net/addr.c and net/netpolicy.c: every spelling of an
 * address, every address class, host patterns, globs (against a
 * brute-force reference), and the decisions with their reasons. Each
 * denial is paired with the allowed neighbour of the same request. Also
 * the JSON string escaping of the proxy's records (util/buf.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "net/addr.h"
#include "net/netpolicy.h"
#include "policy/internal.h"
#include "policy/policy.h"
#include "util/buf.h"
#include "util/cleanup.h"

static const struct policy_ctx ctx = { .home = "/home/u", .cwd = "/work/proj" };

static struct policy *load(const char *yaml)
{
	struct error err = { 0 };
	struct policy *p = NULL;

	if (policy_load_buffer("net.yaml", "/etc/airlock", yaml, strlen(yaml), &ctx, &p, &err) < 0)
		fail_msg("policy does not load: %s", err.msg);
	return p;
}

static struct net_addr addr_of(const char *text)
{
	struct net_addr a = { 0 };

	if (addr_normalize_host(text, NULL, 0, &a) != 1)
		fail_msg("%s is not an address", text);
	return a;
}

/* An IPv6 address exactly as written: no conversion of mapped forms. */
static struct net_addr raw_v6(const char *text)
{
	struct net_addr a = { .family = AF_INET6 };

	assert_int_equal(inet_pton(AF_INET6, text, a.a), 1);
	return a;
}

/* ---------------------------------------------------------------- */
/* addr_normalize_host                                               */

static void test_numeric_forms(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "127.0.0.1", "127.0.0.1" },
		{ "127.0.0.1.", "127.0.0.1" },
		{ "0x7f.1", "127.0.0.1" },
		{ "0X7F.1", "127.0.0.1" },
		{ "2130706433", "127.0.0.1" },
		{ "127.1", "127.0.0.1" },
		{ "127.0.1", "127.0.0.1" },
		{ "0177.0.0.1", "127.0.0.1" },
		{ "0177.0.0.01", "127.0.0.1" },
		{ "017700000001", "127.0.0.1" },
		{ "0x7f000001", "127.0.0.1" },
		{ "0x7f.0.0x0.1", "127.0.0.1" },
		{ "0x7f.0x.0.1", "127.0.0.1" },
		{ "[::ffff:127.0.0.1]", "127.0.0.1" },
		{ "[::ffff:7f00:1]", "127.0.0.1" },
		{ "::FFFF:7F00:1", "127.0.0.1" },
		{ "[::127.0.0.1]", "127.0.0.1" },
		{ "[::7f00:1]", "127.0.0.1" },
		{ "[fe80::1%25eth0]", "fe80::1" },
		{ "[fe80::1%eth0]", "fe80::1" },
		{ "fe80::1%eth0", "fe80::1" },
		{ "169.254.43518", "169.254.169.254" },
		{ "0xa9fea9fe", "169.254.169.254" },
		{ "2852039166", "169.254.169.254" },
		{ "0251.0376.0251.0376", "169.254.169.254" },
		{ "0", "0.0.0.0" },
		{ "00", "0.0.0.0" },
		{ "0x", "0.0.0.0" },
		{ "0.0", "0.0.0.0" },
		{ "4294967295", "255.255.255.255" },
		{ "0xffffffff", "255.255.255.255" },
		{ "037777777777", "255.255.255.255" },
		{ "1.0x10.0377.9", "1.16.255.9" },
		{ "1.2.0xffff", "1.2.255.255" },
		{ "1.0xffffff", "1.255.255.255" },
		{ "::1", "::1" },
		{ "[::1]", "::1" },
		{ "[::]", "::" },
		{ "[::2]", "0.0.0.2" },
		{ "[2001:DB8:0:0:0:0:0:1]", "2001:db8::1" },
		{ "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1" },
		{ "[64:ff9b::127.0.0.1]", "64:ff9b::7f00:1" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char out[64];
		struct net_addr a = { 0 };
		char back[64];
		int r = addr_normalize_host(cases[i].in, out, sizeof(out), &a);

		if (r != 1)
			fail_msg("%s: %d, expected a numeric host", cases[i].in, r);
		assert_string_equal(out, cases[i].out);
		addr_format(&a, back, sizeof(back));
		assert_string_equal(back, cases[i].out);
		assert_int_equal(a.family, strchr(cases[i].out, ':') ? AF_INET6 : AF_INET);
	}
}

static void test_invalid_hosts(void **state)
{
	static const char *const bad[] = {
		"",		 " ",		  "a b",	    "1.2.3.4 ",	      " 1.2.3.4",
		"\t1.2.3.4",	 "4294967296",	  "0x100000000",    "99999999999999999999",
		"256.0.0.1",	 "1.256.0.1",	  "1.2.256.1",	    "1.2.3.256",      "1.2.65536",
		"1.16777216",	 "08.0.0.1",	  "0x1g.1",	    "1.2.3.4.5",      "1..2",
		".1",		 "..",		  "example.123",    "a.0x10",	      "1.2.3.4..",
		"[127.0.0.1]",	 "[::1",	  "::1]",	    "1:2",	      "example.com:80",
		"[::1]:80",	 "exa%mple.com", "127.0.0.1%eth0", "a..b",	      ".",
		"ü.example",	  "a*.example",	    "*.example.com", "a/b",
		"user@a.example", "[]",		  "[%eth0]",	    "0x.0x.0x.0x.0x", "1.2.3.0x100",
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char out[64] = "unchanged";
		struct net_addr a = { 0 };
		int r = addr_normalize_host(bad[i], out, sizeof(out), &a);

		if (r != -EINVAL)
			fail_msg("\"%s\": %d (%s), expected -EINVAL", bad[i], r, out);
		assert_string_equal(out, "");
	}
	assert_int_equal(addr_normalize_host(NULL, NULL, 0, NULL), -EINVAL);
}

static void test_names(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "Example.COM.", "example.com" },
		{ "localhost", "localhost" },
		{ "_srv._tcp.example", "_srv._tcp.example" },
		{ "a-b.example", "a-b.example" },
		{ "1x.example", "1x.example" },
		{ "example.0x1g", "example.0x1g" },
		{ "123.example", "123.example" },
		{ "xn--bcher-kva.example", "xn--bcher-kva.example" },
		/* Not numeric in the last label: a name (the resolver's answer
		 * is checked like any other). */
		{ "1.2.3.-4", "1.2.3.-4" },
		{ "1.2.3.0x1g", "1.2.3.0x1g" },
	};
	char label[64], name[300], out[300];
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct net_addr a = { .family = 99 };
		assert_int_equal(addr_normalize_host(cases[i].in, out, sizeof(out), &a), 0);
		assert_string_equal(out, cases[i].out);
		assert_int_equal(a.family, 99); /* untouched for a name */
	}

	/* Labels of 63 bytes and names of 253 are the limits. */
	memset(label, 'a', 63);
	label[63] = '\0';
	snprintf(name, sizeof(name), "%s.%s.%s.%.61s", label, label, label, label);
	assert_int_equal(strlen(name), 253);
	assert_int_equal(addr_normalize_host(name, out, sizeof(out), NULL), 0);
	assert_string_equal(out, name);
	strcat(name, ".");
	assert_int_equal(addr_normalize_host(name, out, sizeof(out), NULL), 0);
	snprintf(name, sizeof(name), "a.%s.%s.%s.%.61s", label, label, label, label);
	assert_int_equal(addr_normalize_host(name, out, sizeof(out), NULL), -EINVAL);
	snprintf(name, sizeof(name), "a%s.example", label);
	assert_int_equal(addr_normalize_host(name, out, sizeof(out), NULL), -EINVAL);

	/* The output must fit; out and addr may be omitted. */
	assert_int_equal(addr_normalize_host("example.com", out, 11, NULL), -ENOSPC);
	assert_int_equal(addr_normalize_host("example.com", out, 12, NULL), 0);
	assert_int_equal(addr_normalize_host("0x7f.1", out, 9, NULL), -ENOSPC);
	assert_int_equal(addr_normalize_host("0x7f.1", NULL, 0, NULL), 1);
}

/* A host the policy accepts is stored in the very text the proxy derives
 * from a request for the same host. */
static void test_agrees_with_policy(void **state)
{
	static const char *const hosts[] = {
		"Example.COM.",	     "localhost",	    "_a.b-c.example", "10.1.2.3",
		"0.0.0.0",	     "255.255.255.255",	    "[::1]",	      "::",
		"[2001:DB8::0:1]",   "::ffff:192.0.2.1",    "[::c000:201]",   "::2",
		"64:ff9b::192.0.2.1", "fe80::1:2:3:4",	    "1:0:0:1:0:0:0:1", "2001:db8:0:1:1:1:1:1",
		"1x.example",	     "example.0x1g",	    "123.example",    "127.0.0.1.",
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(hosts); i++) {
		char from_policy[POLICY_HOST_MAX], from_request[POLICY_HOST_MAX];
		enum policy_host_status st = policy_host_normalize(hosts[i], from_policy);
		int r = addr_normalize_host(hosts[i], from_request, sizeof(from_request), NULL);

		if (st != POLICY_HOST_NAME && st != POLICY_HOST_IP)
			fail_msg("%s: policy status %d", hosts[i], st);
		assert_int_equal(r, st == POLICY_HOST_IP ? 1 : 0);
		assert_string_equal(from_policy, from_request);
	}
}

/* ---------------------------------------------------------------- */
/* Classes                                                           */

static void test_classify(void **state)
{
	static const struct {
		const char *addr;
		enum addr_class cls;
	} cases[] = {
		{ "8.8.8.8", ADDR_PUBLIC },
		{ "1.1.1.1", ADDR_PUBLIC },
		{ "9.255.255.255", ADDR_PUBLIC },
		{ "11.0.0.0", ADDR_PUBLIC },
		{ "172.15.255.255", ADDR_PUBLIC },
		{ "172.32.0.0", ADDR_PUBLIC },
		{ "192.167.255.255", ADDR_PUBLIC },
		{ "192.169.0.0", ADDR_PUBLIC },
		{ "100.63.255.255", ADDR_PUBLIC },
		{ "100.128.0.0", ADDR_PUBLIC },
		{ "169.253.255.255", ADDR_PUBLIC },
		{ "169.255.0.0", ADDR_PUBLIC },
		{ "198.17.255.255", ADDR_PUBLIC },
		{ "198.20.0.0", ADDR_PUBLIC },
		{ "192.0.1.1", ADDR_PUBLIC },
		{ "192.0.3.1", ADDR_PUBLIC },
		{ "223.255.255.255", ADDR_PUBLIC },
		{ "2606:4700::1111", ADDR_PUBLIC },
		{ "2a00:1450::1", ADDR_PUBLIC },
		{ "64:ff9b::8.8.8.8", ADDR_PUBLIC },
		{ "2002:808:808::1", ADDR_PUBLIC },

		{ "127.0.0.1", ADDR_LOOPBACK },
		{ "127.255.255.255", ADDR_LOOPBACK },
		{ "::1", ADDR_LOOPBACK },
		{ "::ffff:127.0.0.1", ADDR_LOOPBACK },

		{ "10.0.0.0", ADDR_PRIVATE },
		{ "10.255.255.255", ADDR_PRIVATE },
		{ "172.16.0.0", ADDR_PRIVATE },
		{ "172.31.255.255", ADDR_PRIVATE },
		{ "192.168.0.1", ADDR_PRIVATE },
		{ "192.168.255.255", ADDR_PRIVATE },
		{ "fc00::1", ADDR_PRIVATE },
		{ "fdff:ffff::1", ADDR_PRIVATE },
		{ "fec0::1", ADDR_PRIVATE },
		{ "feff::1", ADDR_PRIVATE },

		{ "169.254.0.1", ADDR_LINK_LOCAL },
		{ "169.254.255.255", ADDR_LINK_LOCAL },
		{ "fe80::1", ADDR_LINK_LOCAL },
		{ "febf:ffff::1", ADDR_LINK_LOCAL },

		{ "100.64.0.0", ADDR_CGNAT },
		{ "100.127.255.255", ADDR_CGNAT },

		{ "224.0.0.1", ADDR_MULTICAST },
		{ "239.255.255.255", ADDR_MULTICAST },
		{ "ff02::1", ADDR_MULTICAST },
		{ "ff0e::1", ADDR_MULTICAST },

		{ "0.0.0.0", ADDR_UNSPECIFIED },
		{ "0.1.2.3", ADDR_UNSPECIFIED },
		{ "::", ADDR_UNSPECIFIED },

		{ "255.255.255.255", ADDR_BROADCAST },

		{ "169.254.169.254", ADDR_METADATA },
		{ "100.100.100.200", ADDR_METADATA },
		{ "fd00:ec2::254", ADDR_METADATA },
		{ "168.63.129.16", ADDR_METADATA },
		{ "169.254.170.2", ADDR_METADATA },

		{ "240.0.0.1", ADDR_RESERVED },
		{ "255.255.255.254", ADDR_RESERVED },
		{ "192.0.0.1", ADDR_RESERVED },
		{ "192.0.0.255", ADDR_RESERVED },
		{ "192.0.2.1", ADDR_RESERVED },
		{ "198.51.100.1", ADDR_RESERVED },
		{ "203.0.113.1", ADDR_RESERVED },
		{ "198.18.0.1", ADDR_RESERVED },
		{ "198.19.255.255", ADDR_RESERVED },
		{ "192.88.99.1", ADDR_RESERVED },
		{ "2001:db8::1", ADDR_RESERVED },
		{ "3fff::1", ADDR_RESERVED },
		{ "64:ff9b::10.0.0.1", ADDR_RESERVED },
		{ "64:ff9b::127.0.0.1", ADDR_RESERVED },
		{ "64:ff9b::169.254.169.254", ADDR_RESERVED },
		{ "64:ff9b:1::8.8.8.8", ADDR_RESERVED },
		{ "2002:7f00:1::1", ADDR_RESERVED },
		{ "2002:a9fe:a9fe::1", ADDR_RESERVED },
		{ "2001::1", ADDR_RESERVED },
		{ "100::1", ADDR_RESERVED },
		{ "4000::1", ADDR_RESERVED },
		{ "::ffff:0:808:808", ADDR_RESERVED },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* Both as the proxy sees it (normalised) and as raw bytes. */
		struct net_addr a = addr_of(cases[i].addr);
		enum addr_class c = addr_classify(&a);

		if (c != cases[i].cls)
			fail_msg("%s: %s, expected %s", cases[i].addr, addr_class_name(c),
				 addr_class_name(cases[i].cls));
		if (strchr(cases[i].addr, ':')) {
			struct net_addr r = raw_v6(cases[i].addr);
			assert_int_equal(addr_classify(&r), cases[i].cls);
		}
	}
	/* Raw IPv4-mapped forms are classified by their IPv4 address. */
	{
		struct net_addr m = raw_v6("::ffff:169.254.169.254");
		assert_int_equal(addr_classify(&m), ADDR_METADATA);
		m = raw_v6("::10.0.0.1");
		assert_int_equal(addr_classify(&m), ADDR_PRIVATE);
	}
	{
		struct net_addr odd = { .family = AF_UNIX };
		assert_int_equal(addr_classify(&odd), ADDR_RESERVED);
	}

	assert_string_equal(addr_class_name(ADDR_PUBLIC), "public");
	assert_string_equal(addr_class_name(ADDR_LOOPBACK), "loopback");
	assert_string_equal(addr_class_name(ADDR_PRIVATE), "private");
	assert_string_equal(addr_class_name(ADDR_LINK_LOCAL), "link-local");
	assert_string_equal(addr_class_name(ADDR_CGNAT), "carrier-grade NAT");
	assert_string_equal(addr_class_name(ADDR_MULTICAST), "multicast");
	assert_string_equal(addr_class_name(ADDR_UNSPECIFIED), "unspecified");
	assert_string_equal(addr_class_name(ADDR_BROADCAST), "broadcast");
	assert_string_equal(addr_class_name(ADDR_METADATA), "cloud metadata");
	assert_string_equal(addr_class_name(ADDR_RESERVED), "reserved");
}

static struct policy_cidr cidr(const char *s)
{
	struct policy_cidr c;

	if (policy_cidr_parse(s, &c) != POLICY_CIDR_OK)
		fail_msg("%s is not a range", s);
	return c;
}

static void test_in_cidr(void **state)
{
	static const struct {
		const char *range, *addr;
		uint16_t port;
		bool in;
	} cases[] = {
		{ "10.0.0.0/8", "10.0.0.0", 1, true },
		{ "10.0.0.0/8", "10.255.255.255", 1, true },
		{ "10.0.0.0/8", "11.0.0.0", 1, false },
		{ "10.0.0.0/8", "9.255.255.255", 1, false },
		{ "172.16.0.0/12", "172.31.1.1", 80, true },
		{ "172.16.0.0/12", "172.32.0.0", 80, false },
		{ "127.0.0.1", "127.0.0.1", 5, true },
		{ "127.0.0.1", "127.0.0.2", 5, false },
		{ "127.0.0.1:8080", "127.0.0.1", 8080, true },
		{ "127.0.0.1:8080", "127.0.0.1", 8081, false },
		{ "0.0.0.0/0", "203.0.113.9", 1, true },
		{ "0.0.0.0/0", "::1", 1, false },
		{ "::/0", "127.0.0.1", 1, false },
		{ "::/0", "2001:db8::1", 1, true },
		{ "fd00::/8", "fd12:3456::1", 443, true },
		{ "fd00::/8", "fc00::1", 443, false },
		{ "[fd00::]/8:443", "fd00::1", 443, true },
		{ "[fd00::]/8:443", "fd00::1", 80, false },
		{ "[::1]:9000", "::1", 9000, true },
		{ "2001:db8::/33", "2001:db8:7fff::1", 1, true },
		{ "2001:db8::/33", "2001:db8:8000::1", 1, false },
		{ "fe80::/10", "febf::1", 1, true },
		{ "fe80::/10", "fec0::1", 1, false },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct policy_cidr c = cidr(cases[i].range);
		struct net_addr a = addr_of(cases[i].addr);

		if (addr_in_cidr(&a, cases[i].port, &c) != cases[i].in)
			fail_msg("%s in %s port %u: expected %d", cases[i].addr, cases[i].range,
				 cases[i].port, cases[i].in);
	}
	{
		struct policy_cidr c = cidr("10.0.0.0/8");
		struct net_addr a = addr_of("10.0.0.1");
		c.prefix = 33; /* not from the parser: never matches */
		assert_false(addr_in_cidr(&a, 1, &c));
	}
}

static void test_format(void **state)
{
	struct net_addr a = addr_of("192.0.2.1");
	char buf[64];
	(void)state;

	addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.1");
	addr_format(&a, buf, 4);
	assert_string_equal(buf, "192");
	a = raw_v6("2001:0db8:0000:0000:0001:0000:0000:0001");
	addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8::1:0:0:1");
	a = raw_v6("2001:db8:0:1:1:1:1:1");
	addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8:0:1:1:1:1:1");
	a.family = AF_UNIX;
	addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "?");
}

/* ---------------------------------------------------------------- */
/* Resolution                                                        */

static void test_resolve_override(void **state)
{
	_cleanup_policy_ struct policy *p = load("version: 1\n"
						 "network:\n"
						 "  resolve:\n"
						 "    Test.Example: 127.0.0.1\n"
						 "    v6.example: \"::1\"\n"
						 "    localhost: 192.0.2.7\n");
	struct net_addr out[4];
	struct error err = { 0 };
	char buf[64];
	(void)state;

	/* Fixed entries win over DNS and /etc/hosts, case-insensitively. */
	assert_int_equal(addr_resolve(&p->network, "test.example", out, 4, &err), 1);
	addr_format(&out[0], buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1");
	assert_int_equal(addr_resolve(&p->network, "TEST.example.", out, 4, &err), 1);
	assert_int_equal(out[0].family, AF_INET);
	assert_int_equal(addr_resolve(&p->network, "v6.example", out, 4, &err), 1);
	assert_int_equal(out[0].family, AF_INET6);
	assert_int_equal(addr_resolve(&p->network, "localhost", out, 4, &err), 1);
	addr_format(&out[0], buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.7");
	/* Only the exact name: not a subdomain, not a suffix. */
	assert_int_not_equal(addr_resolve(&p->network, "a.test.example", out, 4, &err), 1);

	/* A numeric host is its own address, whatever its spelling. */
	assert_int_equal(addr_resolve(&p->network, "0x7f.1", out, 4, &err), 1);
	addr_format(&out[0], buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1");
	assert_int_equal(addr_resolve(NULL, "[::ffff:10.0.0.1]", out, 4, &err), 1);
	assert_int_equal(out[0].family, AF_INET);

	assert_int_equal(addr_resolve(&p->network, "a b", out, 4, &err), -EINVAL);
	assert_string_equal(err.msg, "no address for a b: not a valid host name");
	assert_int_equal(addr_resolve(&p->network, "x\x1b[2J", out, 4, &err), -EINVAL);
	assert_null(strchr(err.msg, '\x1b'));
	assert_int_equal(addr_resolve(&p->network, "test.example", out, 0, &err), -EINVAL);
}

static void test_resolve_entries_dedup_and_cap(void **state)
{
	struct policy_resolve entries[] = {
		{ .host = "multi.example", .addr = "192.0.2.1" },
		{ .host = "MULTI.example.", .addr = "192.0.2.1" },
		{ .host = "multi.example", .addr = "192.0.2.2" },
		{ .host = "multi.example", .addr = "2001:db8::1" },
		{ .host = "other.example", .addr = "192.0.2.9" },
	};
	struct policy_network net = { .mode = POLICY_NET_PROXY,
				      .resolve = entries,
				      .n_resolve = ARRAY_SIZE(entries) };
	struct net_addr out[8];
	struct error err = { 0 };
	char buf[64];
	(void)state;

	assert_int_equal(addr_resolve(&net, "multi.example", out, 8, &err), 3);
	addr_format(&out[1], buf, sizeof(buf));
	assert_string_equal(buf, "192.0.2.2");
	addr_format(&out[2], buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8::1");
	assert_int_equal(addr_resolve(&net, "multi.example", out, 2, &err), 2);
}

static void test_resolve_dns(void **state)
{
	struct net_addr out[16];
	struct error err = { 0 };
	int n;
	(void)state;

	/* localhost comes from /etc/hosts (or the resolver's own rule). */
	n = addr_resolve(NULL, "localhost", out, ARRAY_SIZE(out), &err);
	if (n < 0)
		skip();
	for (int i = 0; i < n; i++) {
		assert_int_equal(addr_classify(&out[i]), ADDR_LOOPBACK);
		for (int j = 0; j < i; j++)
			assert_false(out[i].family == out[j].family &&
				     memcmp(out[i].a, out[j].a, 16) == 0);
	}
	/* RFC 6761: .invalid never resolves. */
	n = addr_resolve(NULL, "no-such-host.invalid", out, ARRAY_SIZE(out), &err);
	assert_true(n < 0);
	assert_memory_equal(err.msg, "no address for no-such-host.invalid",
			    strlen("no address for no-such-host.invalid"));
}

/* ---------------------------------------------------------------- */
/* Host patterns                                                     */

static void test_host_match(void **state)
{
	(void)state;
	assert_true(netpol_host_match("api.example.com", "api.example.com"));
	assert_true(netpol_host_match("api.example.com", "API.Example.com."));
	assert_false(netpol_host_match("api.example.com", "api.example.com.evil"));
	assert_false(netpol_host_match("api.example.com", "xapi.example.com"));
	assert_false(netpol_host_match("api.example.com", "example.com"));
	assert_true(netpol_host_match("127.0.0.1", "127.0.0.1"));
	assert_false(netpol_host_match("127.0.0.1", "127.0.0.10"));

	assert_true(netpol_host_match("*.example.com", "a.example.com"));
	assert_true(netpol_host_match("*.example.com", "a.b.example.com"));
	assert_true(netpol_host_match("*.example.com", "A.EXAMPLE.COM."));
	assert_false(netpol_host_match("*.example.com", "example.com"));
	assert_false(netpol_host_match("*.example.com", "example.com."));
	assert_false(netpol_host_match("*.example.com", "aexample.com"));
	assert_false(netpol_host_match("*.example.com", ".example.com"));
	assert_false(netpol_host_match("*.example.com", "a.example.com.evil.net"));
	assert_false(netpol_host_match("*.example.com", "a.example.org"));
	assert_false(netpol_host_match("*.example.com", "com"));
	assert_false(netpol_host_match("*.example.com", ""));
	assert_false(netpol_host_match(NULL, "a"));
	assert_false(netpol_host_match("a", NULL));
}

/* ---------------------------------------------------------------- */
/* Globs                                                             */

static bool glob(const char *g, const char *s)
{
	return netpol_glob_match(g, s, strlen(s));
}

static void test_glob_semantics(void **state)
{
	static const struct {
		const char *glob, *path;
		bool match;
	} cases[] = {
		{ "/repos/*", "/repos/x", true },
		{ "/repos/*", "/repos/", true },
		{ "/repos/*", "/repos/x/y", false },
		{ "/repos/*", "/repos", false },
		{ "/repos/*/issues", "/repos/a/issues", true },
		{ "/repos/*/issues", "/repos/a/b/issues", false },
		{ "/repos/**", "/repos/x/y/z", true },
		{ "/repos/**", "/repos/", true },
		{ "/repos/**", "/repos", false },
		{ "/repos/**", "/reposx", false },
		{ "/a/**/b", "/a/b", true },
		{ "/a/**/b", "/a/x/b", true },
		{ "/a/**/b", "/a/x/y/b", true },
		{ "/a/**/b", "/a//b", true },
		{ "/a/**/b", "/a/xb", false },
		{ "/a/**/b", "/ab", false },
		{ "/a/**/b", "/a/x/yb", false },
		{ "/a/**/", "/a/", true },
		{ "/a/**/", "/a/x/", true },
		{ "/a/**/", "/a/x", false },
		{ "/**/x", "/x", true },
		{ "/**/x", "/a/b/x", true },
		{ "/**/x", "/ax", false },
		{ "/a**b", "/a/x/b", true },
		{ "/a**b", "/ab", true },
		{ "/a***b", "/a/x/b", true },
		{ "/**", "/", true },
		{ "/**", "/any/thing/at/all", true },
		{ "**", "", true },
		{ "**", "x/y", true },
		{ "*", "", true },
		{ "*", "a/b", false },
		{ "/a*b", "/ab", true },
		{ "/a*b", "/axxb", true },
		{ "/a*b", "/ax/b", false },
		{ "/a*b*c", "/abbbc", true },
		{ "/a*b*c", "/acb", false },
		{ "/x", "/x", true },
		{ "/x", "/X", false },
		{ "/x", "/x/", false },
		{ "", "", true },
		{ "", "/", false },
		/* Unreserved characters compare decoded, on both sides. */
		{ "/~user", "/%7euser", true },
		{ "/~user", "/%7Euser", true },
		{ "/%7Euser", "/~user", true },
		{ "/A-._~9", "/%41%2D%2E%5F%7E%39", true },
		{ "/a", "/%61", true },
		/* Reserved characters stay encoded: %2F is not '/'. */
		{ "/a%2Fb", "/a%2fb", true },
		{ "/a%2fb", "/a%2Fb", true },
		{ "/a/b", "/a%2Fb", false },
		{ "/a%2Fb", "/a/b", false },
		{ "/a/*", "/a/b%2Fc", true },
		{ "/a/*/d", "/a/b%2Fc/d", true },
		{ "/a/b/*", "/a/b%2Fc", false },
		{ "/a%2A", "/a*", false },
		{ "/a%2A", "/a%2a", true },
		{ "/a b", "/a%20b", false },
		{ "/a%20b", "/a%20b", true },
		/* A '%' without two hex digits is a plain character. */
		{ "/%", "/%", true },
		{ "/%2", "/%2", true },
		{ "/%zz", "/%zz", true },
		{ "/100%", "/100%25", false },
		{ "/100%25", "/100%25", true },
		/* Query strings. */
		{ "page=*", "page=1", true },
		{ "page=*", "page=1&x=2", true },
		{ "page=*", "page=a/b", false },
		{ "page=**", "page=a/b", true },
		{ "a=%3D", "a=%3d", true },
		{ "a=%3D", "a==", false },
		{ "a=1&b=2", "a=1%26b=2", false },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (glob(cases[i].glob, cases[i].path) != cases[i].match)
			fail_msg("glob \"%s\" on \"%s\": expected %d", cases[i].glob, cases[i].path,
				 cases[i].match);

	/* Length, not the NUL, bounds the subject. */
	assert_true(netpol_glob_match("/ab", "/abc", 3));
	assert_false(netpol_glob_match("/abc", "/abc", 3));
	assert_true(netpol_glob_match("/a%41", "/a%41", 5));
	assert_false(netpol_glob_match("/a%41", "/a%41", 4));
	assert_true(netpol_glob_match("/a%4", "/a%41", 4));
	assert_true(netpol_glob_match("**", NULL, 0));
	assert_false(netpol_glob_match(NULL, "/", 1));
}

static void test_glob_pathological(void **state)
{
	/* Globs a backtracking matcher would need years for: the automaton
	 * takes glob x path steps. */
	_cleanup_free_ char *path = malloc(8193);
	_cleanup_free_ char *long_glob = malloc(4200);
	size_t n = 0;
	(void)state;

	assert_non_null(path);
	assert_non_null(long_glob);
	path[n++] = '/';
	while (n < 8190) {
		path[n++] = 'a';
		path[n++] = '/';
	}
	path[n++] = 'y';
	path[n] = '\0';

	assert_false(glob("/**/**/**/**/x", path));
	assert_true(glob("/**/**/**/**/y", path));
	assert_false(glob("/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/x", path));
	assert_false(glob("/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", path));
	assert_false(glob("**a**a**a**a**a**a**a**a**a**a**a**a**a**a**a**a**a**b", path));

	memset(path + 1, 'a', 8191);
	path[8192] = '\0';
	assert_false(glob("/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", path));
	assert_true(glob("/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", path));

	/* The longest glob a policy can hold, against the longest path. */
	n = 0;
	while (n + 3 <= 4095) {
		memcpy(long_glob + n, "*a*", 3);
		n += 3;
	}
	long_glob[n] = '\0';
	assert_false(glob(long_glob, path));
	/* Beyond 4096 bytes a glob matches nothing. */
	memset(long_glob, '*', 4097);
	long_glob[4097] = '\0';
	assert_false(glob(long_glob, "/"));
}

/*
 * A reference matcher, written for clarity rather than speed: recursive
 * backtracking over decoded units, straight from the documented rules.
 */
enum { R_STAR = 1000, R_DSTAR, R_DSTAR_SLASH };

static size_t ref_units(const char *s, bool is_glob, int *u)
{
	size_t n = 0, len = strlen(s);

	for (size_t i = 0; i < len;) {
		if (is_glob && s[i] == '*') {
			size_t j = i;
			while (j < len && s[j] == '*')
				j++;
			if (j - i == 1)
				u[n++] = R_STAR;
			else if (n > 0 && u[n - 1] == '/' && j < len && s[j] == '/')
				u[n++] = R_DSTAR_SLASH;
			else
				u[n++] = R_DSTAR;
			i = j;
			continue;
		}
		if (s[i] == '%' && i + 2 < len && strchr("0123456789abcdefABCDEF", s[i + 1]) &&
		    strchr("0123456789abcdefABCDEF", s[i + 2])) {
			char hex[3] = { s[i + 1], s[i + 2], 0 };
			int v = (int)strtol(hex, NULL, 16);
			bool unres = (v >= 'a' && v <= 'z') || (v >= 'A' && v <= 'Z') ||
				     (v >= '0' && v <= '9') || v == '-' || v == '.' || v == '_' || v == '~';
			u[n++] = unres ? v : 256 + v;
			i += 3;
			continue;
		}
		u[n++] = (unsigned char)s[i++];
	}
	return n;
}

static bool ref_match(const int *g, size_t ng, const int *s, size_t ns)
{
	if (ng == 0)
		return ns == 0;
	switch (g[0]) {
	case R_STAR:
		for (size_t k = 0; k <= ns; k++) {
			if (ref_match(g + 1, ng - 1, s + k, ns - k))
				return true;
			if (k < ns && s[k] == '/')
				break;
		}
		return false;
	case R_DSTAR_SLASH:
		/* Between two '/', the wildcard may also vanish with the next '/'. */
		if (ng >= 2 && ref_match(g + 2, ng - 2, s, ns))
			return true;
		for (size_t k = 0; k <= ns; k++)
			if (ref_match(g + 1, ng - 1, s + k, ns - k))
				return true;
		return false;
	case R_DSTAR:
		for (size_t k = 0; k <= ns; k++)
			if (ref_match(g + 1, ng - 1, s + k, ns - k))
				return true;
		return false;
	default:
		return ns > 0 && s[0] == g[0] && ref_match(g + 1, ng - 1, s + 1, ns - 1);
	}
}

static void test_glob_against_reference(void **state)
{
	static const char *const glob_parts[] = { "a", "b", "/", "*", "*", "**", "%2F", "%61", "%2f" };
	static const char *const str_parts[] = { "a", "b", "/", "/", "%2F", "%2f", "%61", "%", "%2" };
	unsigned seed = 12345;
	size_t checked = 0, matched = 0;
	(void)state;

	for (int iter = 0; iter < 100000; iter++) {
		char g[64] = "", s[64] = "";
		int gu[64], su[64];
		size_t ng, ns, glen, slen;

		seed = seed * 1103515245u + 12345u;
		glen = (seed >> 16) % 7;
		for (size_t i = 0; i < glen; i++) {
			seed = seed * 1103515245u + 12345u;
			strcat(g, glob_parts[(seed >> 16) % ARRAY_SIZE(glob_parts)]);
		}
		seed = seed * 1103515245u + 12345u;
		slen = (seed >> 16) % 8;
		for (size_t i = 0; i < slen; i++) {
			seed = seed * 1103515245u + 12345u;
			strcat(s, str_parts[(seed >> 16) % ARRAY_SIZE(str_parts)]);
		}
		ng = ref_units(g, true, gu);
		ns = ref_units(s, false, su);
		bool want = ref_match(gu, ng, su, ns);
		if (glob(g, s) != want)
			fail_msg("glob \"%s\" on \"%s\": reference says %d", g, s, want);
		checked++;
		matched += want;
	}
	/* The generator must exercise both outcomes. */
	assert_true(matched > checked / 50);
	assert_true(matched < checked - checked / 50);
}

/* ---------------------------------------------------------------- */
/* Decisions                                                         */

static const char net_yaml[] = "version: 1\n"
			       "network:\n"
			       "  endpoints:\n"
			       "    - host: api.github.com\n"
			       "      id: github\n"
			       "      ports: [443]\n"
			       "      tls: intercept\n"
			       "      access: read-only\n"
			       "    - host: \"*.example.com\"\n"
			       "      id: example\n"
			       "      ports: [80]\n"
			       "      rules:\n"
			       "        - {id: read, methods: [GET, HEAD], path: \"/repos/**\"}\n"
			       "        - {id: search, methods: [GET], path: /search, query: \"q=*\"}\n"
			       "        - {id: push, methods: [POST], path: \"/repos/*/push\"}\n"
			       "        - {id: ws, path: /ws, websocket: true}\n"
			       "        - {id: poll, path: /poll}\n"
			       "    - host: 127.0.0.1\n"
			       "      id: local\n"
			       "      ports: [8080]\n"
			       "    - host: \"::1\"\n"
			       "      id: local6\n"
			       "      ports: [9000]\n"
			       "    - host: pypi.org\n"
			       "  allow_private: [127.0.0.1:8080, 10.0.0.0/8, \"[::1]:9000\", fd00::/8, "
			       "169.254.0.0/16, 0.0.0.0/0]\n";

static void test_decide_host(void **state)
{
	_cleanup_policy_ struct policy *p = load(net_yaml);
	const struct policy_network *net = &p->network;
	struct net_decision d;
	(void)state;

	assert_true(netpol_decide_host(net, "api.github.com", 443, &d));
	assert_true(d.allow);
	assert_string_equal(d.rule, "github");
	assert_ptr_equal(d.ep, &net->endpoints[0]);
	assert_true(netpol_decide_host(net, "API.GitHub.COM.", 443, &d));
	assert_string_equal(d.rule, "github");

	assert_false(netpol_decide_host(net, "api.github.com", 80, &d));
	assert_false(d.allow);
	assert_null(d.ep);
	assert_string_equal(d.rule, "network.default");
	assert_string_equal(d.reason, "api.github.com:80: endpoint github allows ports [443], not 80; "
				      "add 80 to its ports");

	assert_false(netpol_decide_host(net, "example.org", 443, &d));
	assert_string_equal(d.reason, "no network.endpoints entry allows example.org:443; add {host: "
				      "example.org, ports: [443]}");
	assert_false(netpol_decide_host(net, "github.com", 443, &d));
	assert_false(netpol_decide_host(net, "evil-api.github.com", 443, &d));

	/* Wildcards: subdomains only. */
	assert_true(netpol_decide_host(net, "a.example.com", 80, &d));
	assert_string_equal(d.rule, "example");
	assert_true(netpol_decide_host(net, "a.b.example.com", 80, &d));
	assert_false(netpol_decide_host(net, "example.com", 80, &d));
	assert_string_equal(d.reason, "no network.endpoints entry allows example.com:80; add {host: "
				      "example.com, ports: [80]}");

	/* Default ports and ids. */
	assert_true(netpol_decide_host(net, "pypi.org", 80, &d));
	assert_string_equal(d.rule, "network.endpoints[4]");
	assert_true(netpol_decide_host(net, "pypi.org", 443, &d));
	assert_false(netpol_decide_host(net, "pypi.org", 8443, &d));

	/* Every spelling of an address is that address. */
	static const char *const loopback[] = { "127.0.0.1", "0x7f.1",	       "2130706433",
						"127.1",     "0177.0.0.1",     "017700000001",
						"0x7f000001", "[::ffff:127.0.0.1]", "::ffff:7f00:1",
						"[::127.0.0.1]", "127.0.0.1." };
	for (size_t i = 0; i < ARRAY_SIZE(loopback); i++) {
		if (!netpol_decide_host(net, loopback[i], 8080, &d))
			fail_msg("%s:8080: %s", loopback[i], d.reason);
		assert_string_equal(d.rule, "local");
		assert_false(netpol_decide_host(net, loopback[i], 8081, &d));
	}
	assert_true(netpol_decide_host(net, "[::1]", 9000, &d));
	assert_string_equal(d.rule, "local6");
	assert_false(netpol_decide_host(net, "[::1]", 443, &d));
	assert_string_equal(d.reason, "[::1]:443: endpoint local6 allows ports [9000], not 443; add "
				      "443 to its ports");
	assert_false(netpol_decide_host(net, "::2", 443, &d));
	assert_string_equal(d.reason, "no network.endpoints entry allows 0.0.0.2:443; add {host: "
				      "0.0.0.2, ports: [443]}");
	assert_false(netpol_decide_host(net, "2001:db8::1", 443, &d));
	assert_string_equal(d.reason, "no network.endpoints entry allows [2001:db8::1]:443; add {host: "
				      "2001:db8::1, ports: [443]}");

	assert_false(netpol_decide_host(net, "exa mple.com", 80, &d));
	assert_string_equal(d.reason, "\"exa mple.com\" is not a valid host name or address");
	assert_false(netpol_decide_host(net, "a\x1b[2J.example.com", 80, &d));
	assert_null(strchr(d.reason, '\x1b'));
	assert_false(netpol_decide_host(net, NULL, 80, &d));
}

static void test_decide_host_first_match_and_off(void **state)
{
	_cleanup_policy_ struct policy *p = load("version: 1\n"
						 "network:\n"
						 "  endpoints:\n"
						 "    - {host: a.example.com, id: first, ports: [443]}\n"
						 "    - {host: \"*.example.com\", id: second, ports: [443, 80]}\n");
	_cleanup_policy_ struct policy *none = load("version: 1\n");
	struct net_decision d;
	(void)state;

	assert_true(netpol_decide_host(&p->network, "a.example.com", 443, &d));
	assert_string_equal(d.rule, "first");
	assert_true(netpol_decide_host(&p->network, "a.example.com", 80, &d));
	assert_string_equal(d.rule, "second");
	assert_true(netpol_decide_host(&p->network, "b.example.com", 443, &d));
	assert_string_equal(d.rule, "second");

	/* No network section: nothing is reachable, and it says why. */
	assert_false(netpol_decide_host(&none->network, "a.example.com", 443, &d));
	assert_string_equal(d.reason, "the policy has no network section, so the agent has no network "
				      "access");
	assert_false(netpol_decide_host(NULL, "a.example.com", 443, &d));
}

static bool req(const struct policy_endpoint *ep, const char *method, const char *path,
		const char *query, bool ws, struct net_decision *d)
{
	return netpol_decide_request(ep, method, path, strlen(path), query, query ? strlen(query) : 0,
				     ws, d);
}

static void test_decide_request(void **state)
{
	_cleanup_policy_ struct policy *p = load(net_yaml);
	const struct policy_endpoint *gh = &p->network.endpoints[0];
	const struct policy_endpoint *ex = &p->network.endpoints[1];
	const struct policy_endpoint *local = &p->network.endpoints[2];
	struct net_decision d;
	(void)state;

	/* access: read-only */
	assert_true(req(gh, "GET", "/repos/a/b", NULL, false, &d));
	assert_string_equal(d.rule, "github");
	assert_ptr_equal(d.ep, gh);
	assert_true(req(gh, "HEAD", "/", NULL, false, &d));
	assert_true(req(gh, "OPTIONS", "/x", "a=b", false, &d));
	assert_false(req(gh, "POST", "/repos/a/b", NULL, false, &d));
	assert_string_equal(d.rule, "network.default");
	assert_ptr_equal(d.ep, gh);
	assert_string_equal(d.reason, "POST /repos/a/b is not allowed by any rule of endpoint github; "
				      "add a rule {methods: [POST], path: /repos/a/b}");
	assert_false(req(gh, "DELETE", "/", NULL, false, &d));
	/* Methods are case-sensitive: "get" is not GET. */
	assert_false(req(gh, "get", "/repos/a/b", NULL, false, &d));
	/* A read-only endpoint opens no websocket. */
	assert_false(req(gh, "GET", "/socket", NULL, true, &d));
	assert_string_equal(d.reason, "websocket upgrade GET /socket: rule github of endpoint github "
				      "matches but does not allow websocket; add websocket: true to it");

	/* Rules in order. */
	assert_true(req(ex, "GET", "/repos/a/b/c", NULL, false, &d));
	assert_string_equal(d.rule, "read");
	assert_true(req(ex, "HEAD", "/repos/", NULL, false, &d));
	assert_false(req(ex, "GET", "/repos", NULL, false, &d));
	assert_false(req(ex, "PUT", "/repos/a", NULL, false, &d));
	assert_true(req(ex, "POST", "/repos/a/push", NULL, false, &d));
	assert_string_equal(d.rule, "push");
	assert_false(req(ex, "POST", "/repos/a/b/push", NULL, false, &d));
	assert_string_equal(d.reason, "POST /repos/a/b/push is not allowed by any rule of endpoint "
				      "example; add a rule {methods: [POST], path: /repos/a/b/push}");

	/* Query globs: no query is the empty query. */
	assert_true(req(ex, "GET", "/search", "q=airlock", false, &d));
	assert_string_equal(d.rule, "search");
	assert_true(req(ex, "GET", "/search", "q=", false, &d));
	assert_false(req(ex, "GET", "/search", "x=1", false, &d));
	assert_false(req(ex, "GET", "/search", NULL, false, &d));

	/* Websocket only where a rule allows it. */
	assert_true(req(ex, "GET", "/ws", NULL, true, &d));
	assert_string_equal(d.rule, "ws");
	assert_true(req(ex, "GET", "/poll", NULL, false, &d));
	assert_string_equal(d.rule, "poll");
	assert_false(req(ex, "GET", "/poll", NULL, true, &d));
	assert_string_equal(d.reason, "websocket upgrade GET /poll: rule poll of endpoint example matches "
				      "but does not allow websocket; add websocket: true to it");

	/* Dot segments never match a rule, however they are spelled; the
	 * neighbours that only look like them do. */
	static const char *const dotted[] = {
		"/repos/../admin",   "/repos/./x",	     "/repos/%2e%2e/admin", "/repos/.%2E/admin",
		"/repos/..;/admin",  "/repos/..;x=1/admin", "/repos/a%2F..%2Fadmin", "/repos/a%2f..%2f",
		"/repos/..\\admin",  "/repos/a%5C..%5Cadmin", "/repos/..",	    "/repos/.",
	};
	for (size_t i = 0; i < ARRAY_SIZE(dotted); i++) {
		if (req(ex, "GET", dotted[i], NULL, false, &d))
			fail_msg("%s allowed", dotted[i]);
		assert_non_null(strstr(d.reason, "a path with a . or .. segment is never matched by a "
						 "rule (endpoint example)"));
	}
	static const char *const not_dotted[] = { "/repos/..foo/x", "/repos/a.b/x", "/repos/.well-known",
						  "/repos/.../x",   "/repos/x..",   "/repos/a;..",
						  "/repos/%2e%2e%2e" };
	for (size_t i = 0; i < ARRAY_SIZE(not_dotted); i++)
		if (!req(ex, "GET", not_dotted[i], NULL, false, &d))
			fail_msg("%s denied: %s", not_dotted[i], d.reason);

	/* No rules: every request, websocket included. */
	assert_true(req(local, "DELETE", "/../anything", NULL, true, &d));
	assert_string_equal(d.rule, "local");

	/* Long and hostile paths are shortened and made printable in the
	 * reason. */
	{
		char path[600];
		memset(path, 'x', sizeof(path) - 1);
		path[0] = '/';
		path[10] = '\x1b';
		path[sizeof(path) - 1] = '\0';
		assert_false(req(ex, "GET", path, NULL, false, &d));
		assert_null(strchr(d.reason, '\x1b'));
		assert_non_null(strstr(d.reason, "..."));
		assert_true(strlen(d.reason) < sizeof(d.reason));
	}
	assert_false(req(NULL, "GET", "/", NULL, false, &d));
	assert_false(netpol_decide_request(ex, NULL, NULL, 0, NULL, 0, false, &d));
}

static bool address(const struct policy_network *net, const char *a, uint16_t port,
		    struct net_decision *d)
{
	struct net_addr x = addr_of(a);
	return netpol_decide_address(net, &x, port, d);
}

static void test_decide_address(void **state)
{
	_cleanup_policy_ struct policy *p = load(net_yaml);
	_cleanup_policy_ struct policy *strict = load("version: 1\n"
						      "network:\n"
						      "  allow_private: [127.0.0.1:8080, \"[::1]:9000\", "
						      "10.0.0.0/8, 169.254.169.254]\n");
	_cleanup_policy_ struct policy *none = load("version: 1\n");
	const struct policy_network *net = &p->network, *sn = &strict->network;
	struct net_decision d;
	(void)state;

	assert_true(address(sn, "93.184.216.34", 443, &d));
	assert_true(address(sn, "2606:2800:220:1::1", 443, &d));

	/* Loopback with a port: exactly that port. */
	assert_true(address(sn, "127.0.0.1", 8080, &d));
	assert_string_equal(d.rule, "network.allow_private");
	assert_string_equal(d.reason, "127.0.0.1 is allowed by network.allow_private[0]");
	assert_false(address(sn, "127.0.0.1", 8081, &d));
	assert_string_equal(d.rule, "network.default");
	assert_string_equal(d.reason, "127.0.0.1 is a loopback address; allow_private names it only "
				      "for port 8080, not 8081");
	assert_false(address(sn, "127.0.0.2", 8080, &d));
	assert_string_equal(d.reason, "127.0.0.2 is a loopback address; allow_private does not name it "
				      "(add \"127.0.0.2:8080\" to network.allow_private to allow it)");
	assert_true(address(sn, "::1", 9000, &d));
	assert_false(address(sn, "::1", 9001, &d));

	/* Ranges. */
	assert_true(address(sn, "10.20.30.40", 5432, &d));
	assert_false(address(sn, "172.16.0.1", 443, &d));
	assert_string_equal(d.reason, "172.16.0.1 is a private address; allow_private does not name it "
				      "(add \"172.16.0.1:443\" to network.allow_private to allow it)");
	assert_false(address(sn, "fe80::1", 80, &d));
	assert_string_equal(d.reason, "fe80::1 is a link-local address; allow_private does not name it "
				      "(add \"[fe80::1]:80\" to network.allow_private to allow it)");
	assert_false(address(sn, "0.0.0.0", 80, &d));
	assert_string_equal(d.reason, "0.0.0.0 is an unspecified address; allow_private does not name "
				      "it (add \"0.0.0.0:80\" to network.allow_private to allow it)");

	/* Metadata: only an entry naming the very address opens it. */
	assert_true(address(sn, "169.254.169.254", 80, &d));
	assert_false(address(net, "169.254.169.254", 80, &d));
	assert_string_equal(d.reason, "169.254.169.254 is a cloud metadata address; allow_private does "
				      "not name it");
	assert_false(address(net, "100.100.100.200", 80, &d));
	assert_string_equal(d.reason, "100.100.100.200 is a cloud metadata address; allow_private does "
				      "not name it");
	assert_false(address(net, "fd00:ec2::254", 80, &d));
	assert_string_equal(d.reason, "fd00:ec2::254 is a cloud metadata address; allow_private does "
				      "not name it");
	/* ... while the broad ranges still open their other addresses. */
	assert_true(address(net, "169.254.1.1", 80, &d));
	assert_true(address(net, "fd00::5", 80, &d));
	assert_true(address(net, "192.0.2.1", 80, &d)); /* reserved, inside 0.0.0.0/0 */

	/* Every spelling of the metadata address is refused alike. */
	static const char *const spellings[] = { "169.254.169.254", "0xa9fea9fe", "2852039166",
						 "0251.0376.0251.0376", "169.254.43518",
						 "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]",
						 "[::169.254.169.254]" };
	for (size_t i = 0; i < ARRAY_SIZE(spellings); i++) {
		if (address(net, spellings[i], 80, &d))
			fail_msg("%s allowed", spellings[i]);
		assert_string_equal(d.reason, "169.254.169.254 is a cloud metadata address; "
					      "allow_private does not name it");
	}
	/* A raw IPv4-mapped address from a socket is checked as IPv4. */
	{
		struct net_addr m = raw_v6("::ffff:127.0.0.1");
		assert_true(netpol_decide_address(sn, &m, 8080, &d));
		assert_false(netpol_decide_address(sn, &m, 8081, &d));
		m = raw_v6("::ffff:169.254.169.254");
		assert_false(netpol_decide_address(net, &m, 80, &d));
		assert_string_equal(d.reason, "169.254.169.254 is a cloud metadata address; "
					      "allow_private does not name it");
	}
	/* NAT64 of a private address is not a way around allow_private. */
	assert_false(address(sn, "64:ff9b::10.0.0.1", 80, &d));
	assert_string_equal(d.reason, "64:ff9b::a00:1 is a reserved address; allow_private does not "
				      "name it (add \"[64:ff9b::a00:1]:80\" to network.allow_private to "
				      "allow it)");
	assert_true(address(sn, "64:ff9b::8.8.8.8", 80, &d));

	assert_false(address(&none->network, "8.8.8.8", 443, &d));
	assert_string_equal(d.reason, "the policy has no network section, so the agent has no network "
				      "access");
	assert_false(netpol_decide_address(sn, NULL, 80, &d));
}

/* Runs of plain characters and every kind of escape, next to each other. */
static void test_json_string(void **state)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
	} cases[] = {
		{ "", 0, "\"\"" },
		{ "GET /a?b=c", 10, "\"GET /a?b=c\"" },
		{ "a\"b\\c", 5, "\"a\\\"b\\\\c\"" },
		{ "x\ny\x7fz\x01", 6, "\"x\\u000ay\\u007fz\\u0001\"" },
		{ "caf\xc3\xa9!", 6, "\"caf\xc3\xa9!\"" },
		{ "a\xc3", 2, "\"a\\ufffd\"" },
		{ "\xff\xfeok", 4, "\"\\ufffd\\ufffdok\"" },
		{ "nul\0after", 9, "\"nul\\u0000after\"" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b = { 0 };
		assert_int_equal(buf_json_string(&b, cases[i].in, cases[i].n), 0);
		assert_string_equal(b.data, cases[i].out);
		buf_free(&b);
	}
}

/* A TLS tunnel: intercepted (requests decided inside), or passthrough
 * only where the endpoint would allow every request: never past rules or
 * an MCP gateway the tunnel would hide. */
static void test_tunnels(void **state)
{
	(void)state;
	struct policy *p = load("version: 1\nnetwork:\n  endpoints:\n"
				"    - {host: a.test, ports: [8443], rules: [{methods: [GET], path: \"/x\"}]}\n"
				"    - {host: b.test, ports: [8443]}\n"
				"    - {host: c.test, ports: [443], tls: intercept, rules: [{path: \"/x\"}]}\n");
	struct net_decision d;
	assert_false(netpol_decide_tunnel(&p->network.endpoints[0], 8443, &d));
	assert_non_null(strstr(d.reason, "has rules"));
	/* Neighbours: no rules; intercepted rules. */
	assert_true(netpol_decide_tunnel(&p->network.endpoints[1], 8443, &d));
	assert_true(netpol_decide_tunnel(&p->network.endpoints[2], 443, &d));
	assert_false(netpol_decide_tunnel(NULL, 443, &d));
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numeric_forms),
		cmocka_unit_test(test_tunnels),
		cmocka_unit_test(test_invalid_hosts),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_agrees_with_policy),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_in_cidr),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_resolve_override),
		cmocka_unit_test(test_resolve_entries_dedup_and_cap),
		cmocka_unit_test(test_resolve_dns),
		cmocka_unit_test(test_host_match),
		cmocka_unit_test(test_glob_semantics),
		cmocka_unit_test(test_glob_pathological),
		cmocka_unit_test(test_glob_against_reference),
		cmocka_unit_test(test_decide_host),
		cmocka_unit_test(test_decide_host_first_match_and_off),
		cmocka_unit_test(test_decide_request),
		cmocka_unit_test(test_decide_address),
		cmocka_unit_test(test_json_string),
	};

	return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
