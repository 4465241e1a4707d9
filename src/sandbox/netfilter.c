/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Transparent network mode, spoken to the kernel in raw netlink.
 *
 * Routes first: the namespace has loopback only, so without a default
 * route connect() to any other address fails with ENETUNREACH before
 * netfilter sees the packet. Default routes through lo send everything
 * into the OUTPUT hook, where this ruleset decides:
 *
 *   table inet airlock {
 *     chain nat_out { type nat hook output priority -100; policy accept;
 *       meta nfproto ipv4 udp dport 53 redirect to :DNS_PORT
 *       ip daddr 127.0.0.0/8 return
 *       ip6 daddr ::1 return
 *       meta l4proto tcp redirect to :TCP_PORT
 *     }
 *     chain filter_out { type filter hook output priority 0; policy drop;
 *       ip daddr 127.0.0.0/8 accept
 *       ip6 daddr ::1 accept
 *     }
 *   }
 *
 * The NAT chain runs first (priority -100), so the filter chain sees
 * redirected packets with their new, loopback destination. Replies are
 * un-NATed by conntrack: the agent's socket sees its peer as the address
 * it connected to, and the proxy reads that address with SO_ORIGINAL_DST.
 * A packet the filter drops on OUTPUT fails the sender's call with EPERM.
 *
 * The whole table goes in as one nftables batch, which the kernel applies
 * atomically or not at all.
 */
#include "sandbox/netfilter.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "util/cleanup.h"

#define TABLE "airlock"
#define CHAIN_NAT "nat_out"
#define CHAIN_FILTER "filter_out"

/* Everything here fits in a few KiB; a batch that does not is a bug
 * caught by `overflow`, never a truncated message sent to the kernel. */
#define NL_BUF_SIZE 8192
#define NL_MAX_MSGS 32

/* The register every expression loads into and reads from; 16 bytes, so
 * it holds an IPv6 address. */
#define REG NFT_REG_1

/* One datagram of netlink messages under construction. Messages are
 * numbered from 1 in nlmsg_seq, and step[seq - 1] says in words what
 * each one does, so that an error from the kernel names its step. */
struct nl_batch {
	uint8_t buf[NL_BUF_SIZE];
	size_t len;
	bool overflow;
	size_t msg;                    /* offset of the message being built */
	uint32_t n_msgs;
	uint32_t n_acks;               /* messages sent with NLM_F_ACK */
	const char *step[NL_MAX_MSGS]; /* static strings */
};

/* ---- a small attribute builder ---------------------------------------
 * Headers are copied in with memcpy rather than cast onto the byte
 * buffer: no alignment assumptions, no aliasing questions. */

static void nl_put(struct nl_batch *b, const void *data, size_t len)
{
	size_t padded = NLMSG_ALIGN(len);
	if (b->overflow || padded < len || padded > sizeof(b->buf) - b->len) {
		b->overflow = true;
		return;
	}
	if (len)
		memcpy(b->buf + b->len, data, len);
	memset(b->buf + b->len + len, 0, padded - len);
	b->len += padded;
}

static void nl_attr(struct nl_batch *b, uint16_t type, const void *data, size_t len)
{
	if (len > NL_BUF_SIZE) {
		b->overflow = true;
		return;
	}
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };
	nl_put(b, &a, sizeof(a));
	nl_put(b, data, len);
}

static void nl_attr_str(struct nl_batch *b, uint16_t type, const char *s)
{
	nl_attr(b, type, s, strlen(s) + 1);
}

/* rtnetlink integers are in host byte order... */
static void nl_attr_u32(struct nl_batch *b, uint16_t type, uint32_t v)
{
	nl_attr(b, type, &v, sizeof(v));
}

/* ...nftables integers in network byte order. */
static void nl_attr_be32(struct nl_batch *b, uint16_t type, uint32_t v)
{
	uint32_t be = htonl(v);
	nl_attr(b, type, &be, sizeof(be));
}

/* Returns the nest's offset, for nl_nest_end to fill in its length. */
static size_t nl_nest_begin(struct nl_batch *b, uint16_t type)
{
	size_t at = b->len;
	struct nlattr a = { .nla_type = type | NLA_F_NESTED };
	nl_put(b, &a, sizeof(a));
	return at;
}

static void nl_nest_end(struct nl_batch *b, size_t at)
{
	if (b->overflow)
		return;
	uint16_t len = (uint16_t)(b->len - at);
	memcpy(b->buf + at + offsetof(struct nlattr, nla_len), &len, sizeof(len));
}

/* Start a message: netlink header, then the family header hdr. */
static void nl_msg_begin(struct nl_batch *b, uint16_t type, uint16_t flags, const char *step,
			 const void *hdr, size_t hdr_len)
{
	if (b->n_msgs >= NL_MAX_MSGS) {
		b->overflow = true;
		return;
	}
	b->step[b->n_msgs] = step;
	struct nlmsghdr h = {
		.nlmsg_type = type,
		.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags),
		.nlmsg_seq = ++b->n_msgs,
	};
	if (flags & NLM_F_ACK)
		b->n_acks++;
	b->msg = b->len;
	nl_put(b, &h, sizeof(h));
	nl_put(b, hdr, hdr_len);
}

static void nl_msg_end(struct nl_batch *b)
{
	if (b->overflow)
		return;
	uint32_t len = (uint32_t)(b->len - b->msg);
	memcpy(b->buf + b->msg + offsetof(struct nlmsghdr, nlmsg_len), &len, sizeof(len));
}

/* ---- talking to the kernel ------------------------------------------ */

static int nl_open(int protocol, const char *what, struct error *err)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
	if (fd < 0)
		return error_sys(err, errno, "transparent network: cannot open a %s netlink socket", what);
	/* Best effort, for better messages: errors without our request
	 * echoed back, and with the kernel's own explanation attached. */
	int one = 1;
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	/* The kernel answers while processing our send, so the answers are
	 * queued by the time we read; the timeout only guards against a
	 * kernel that stays silent. */
	struct timeval tv = { .tv_sec = 5 };
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* The extended-ACK message attached to the NLMSG_ERROR at msg (total
 * length len), copied into out; empty when there is none. */
static void nl_ext_msg(const uint8_t *msg, size_t len, char *out, size_t out_len)
{
	out[0] = '\0';
	struct nlmsghdr h;
	struct nlmsgerr e;
	memcpy(&h, msg, sizeof(h));
	memcpy(&e, msg + NLMSG_HDRLEN, sizeof(e));
	if (!(h.nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	size_t off = NLMSG_HDRLEN + sizeof(e);
	if (!(h.nlmsg_flags & NLM_F_CAPPED) && e.msg.nlmsg_len > NLMSG_HDRLEN)
		off += NLMSG_ALIGN(e.msg.nlmsg_len) - NLMSG_HDRLEN;
	while (off + NLA_HDRLEN <= len) {
		struct nlattr a;
		memcpy(&a, msg + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len - off)
			return;
		if ((a.nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
			size_t n = a.nla_len - NLA_HDRLEN;
			if (n >= out_len)
				n = out_len - 1;
			memcpy(out, msg + off + NLA_HDRLEN, n);
			out[n] = '\0';
			out[strcspn(out, "\n")] = '\0';
			return;
		}
		off += NLA_ALIGN(a.nla_len);
	}
}

static const char *hint(int code)
{
	switch (code) {
	case EPERM:
		return " (needs CAP_NET_ADMIN over this network namespace)";
	case ENOENT:
	case EOPNOTSUPP:
	case EAFNOSUPPORT:
		return " (does this kernel have nf_tables with NAT and redirect?)";
	default:
		return "";
	}
}

/* Send b as one datagram and read an ACK for every message that asked
 * for one. The first error reported is the one returned: the kernel
 * answers in request order, and later failures in a batch are mostly
 * consequences of the first. */
static int nl_talk(int fd, const struct nl_batch *b, const char *what, struct error *err)
{
	if (b->overflow)
		return error_set(err, ENOBUFS, "transparent network: %s: request too large", what);
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n = sendto(fd, b->buf, b->len, 0, (const struct sockaddr *)&kernel, sizeof(kernel));
	if (n < 0)
		return error_sys(err, errno, "transparent network: %s: cannot send to the kernel", what);
	if ((size_t)n != b->len)
		return error_set(err, EIO, "transparent network: %s: short send to the kernel", what);

	uint32_t acked = 0;
	while (acked < b->n_acks) {
		uint8_t reply[8192];
		n = recv(fd, reply, sizeof(reply), MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
			return error_sys(err, e, "transparent network: %s: no answer from the kernel", what);
		}
		if ((size_t)n > sizeof(reply))
			return error_set(err, EMSGSIZE, "transparent network: %s: oversized answer from the kernel",
					 what);
		size_t len = (size_t)n;
		for (size_t off = 0; off + NLMSG_HDRLEN <= len;) {
			struct nlmsghdr h;
			memcpy(&h, reply + off, sizeof(h));
			if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - off)
				return error_set(err, EPROTO, "transparent network: %s: malformed answer from the kernel",
						 what);
			if (h.nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr e;
				if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
					return error_set(err, EPROTO,
							 "transparent network: %s: malformed answer from the kernel", what);
				memcpy(&e, reply + off + NLMSG_HDRLEN, sizeof(e));
				if (e.error != 0) {
					int code = e.error < 0 ? -e.error : e.error;
					const char *step = h.nlmsg_seq >= 1 && h.nlmsg_seq <= b->n_msgs
								   ? b->step[h.nlmsg_seq - 1]
								   : what;
					char ext[256];
					nl_ext_msg(reply + off, h.nlmsg_len, ext, sizeof(ext));
					return error_set(err, code, "transparent network: %s: %s%s%s%s", step,
							 strerror(code), ext[0] ? " (kernel: " : "", ext,
							 ext[0] ? ")" : hint(code));
				}
				acked++;
			}
			off += NLMSG_ALIGN(h.nlmsg_len);
		}
	}
	return 0;
}

/* ---- routes ---------------------------------------------------------- */

/* Whether the namespace speaks IPv6 on loopback: the kernel has IPv6
 * (not booted with ipv6.disable=1) and lo carries ::1 (disable_ipv6 is
 * off). Any other failure says yes and lets the route itself report. */
static bool ipv6_on_loopback(void)
{
	_cleanup_close_ int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno != EAFNOSUPPORT;
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	return bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 || errno != EADDRNOTAVAIL;
}

/* ip route replace default dev lo src 127.0.0.1, and
 * ip -6 route replace default dev lo. REPLACE makes a second call
 * harmless. */
static void route_default(struct nl_batch *b, uint8_t family, uint32_t lo, const char *step)
{
	struct rtmsg rt = {
		.rtm_family = family,
		.rtm_dst_len = 0,
		.rtm_table = RT_TABLE_MAIN,
		.rtm_protocol = RTPROT_BOOT,
		.rtm_scope = family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE,
		.rtm_type = RTN_UNICAST,
	};
	nl_msg_begin(b, RTM_NEWROUTE, NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, step, &rt, sizeof(rt));
	nl_attr_u32(b, RTA_OIF, lo);
	if (family == AF_INET) {
		/* src 127.0.0.1. WARNING: without it IPv4 sockets leave with
		 * source 0.0.0.0 (127.0.0.1 is host scope, outside this
		 * route's), the redirected listener answers 0.0.0.0, which is
		 * its own 127.0.0.1, and conntrack sees a new flow instead of
		 * the reply: nothing is un-NATed and TCP never connects. IPv6
		 * picks ::1 by itself. */
		uint32_t src = htonl(INADDR_LOOPBACK);
		nl_attr(b, RTA_PREFSRC, &src, sizeof(src));
	}
	nl_msg_end(b);
}

static int add_routes(struct error *err)
{
	unsigned int lo = if_nametoindex("lo");
	if (lo == 0)
		return error_sys(err, errno, "transparent network: no loopback interface");
	struct nl_batch b = { .len = 0 };
	route_default(&b, AF_INET, lo, "add route 0.0.0.0/0 dev lo");
	if (ipv6_on_loopback())
		route_default(&b, AF_INET6, lo, "add route ::/0 dev lo");
	_cleanup_close_ int fd = nl_open(NETLINK_ROUTE, "route", err);
	if (fd < 0)
		return fd;
	return nl_talk(fd, &b, "add default routes", err);
}

/* ---- nftables messages ------------------------------------------------ */

static void nft_msg_begin(struct nl_batch *b, uint16_t type, uint16_t flags, const char *step)
{
	struct nfgenmsg g = { .nfgen_family = NFPROTO_INET, .version = NFNETLINK_V0 };
	nl_msg_begin(b, (uint16_t)((NFNL_SUBSYS_NFTABLES << 8) | type), (uint16_t)(NLM_F_ACK | flags), step,
		     &g, sizeof(g));
}

/* NFNL_MSG_BATCH_BEGIN / _END, addressed to the nftables subsystem. No
 * ACK is asked for: whether those are acknowledged depends on the kernel
 * version. A failure to start or commit the batch is still reported,
 * with BEGIN's sequence number. */
static void nft_batch_mark(struct nl_batch *b, uint16_t type, const char *step)
{
	struct nfgenmsg g = {
		.nfgen_family = AF_UNSPEC,
		.version = NFNETLINK_V0,
		.res_id = htons(NFNL_SUBSYS_NFTABLES),
	};
	nl_msg_begin(b, type, 0, step, &g, sizeof(g));
	nl_msg_end(b);
}

/* add table inet airlock; delete table inet airlock; add table inet
 * airlock: whatever an earlier call left is replaced, in the same atomic
 * commit as the rest. */
static void nft_table(struct nl_batch *b)
{
	nft_msg_begin(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, "add table inet " TABLE);
	nl_attr_str(b, NFTA_TABLE_NAME, TABLE);
	nl_msg_end(b);
	nft_msg_begin(b, NFT_MSG_DELTABLE, 0, "delete table inet " TABLE " (to replace it)");
	nl_attr_str(b, NFTA_TABLE_NAME, TABLE);
	nl_msg_end(b);
	nft_msg_begin(b, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL, "create table inet " TABLE);
	nl_attr_str(b, NFTA_TABLE_NAME, TABLE);
	nl_msg_end(b);
}

/* chain NAME { type TYPE hook output priority PRIO; policy POLICY; } */
static void nft_chain(struct nl_batch *b, const char *name, const char *type, int32_t prio, uint32_t policy,
		      const char *step)
{
	nft_msg_begin(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL, step);
	nl_attr_str(b, NFTA_CHAIN_TABLE, TABLE);
	nl_attr_str(b, NFTA_CHAIN_NAME, name);
	size_t hook = nl_nest_begin(b, NFTA_CHAIN_HOOK);
	nl_attr_be32(b, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
	nl_attr_be32(b, NFTA_HOOK_PRIORITY, (uint32_t)prio);
	nl_nest_end(b, hook);
	nl_attr_be32(b, NFTA_CHAIN_POLICY, policy);
	nl_attr_str(b, NFTA_CHAIN_TYPE, type);
	nl_msg_end(b);
}

/* A rule appended to chain; expressions follow until rule_end. */
static size_t rule_begin(struct nl_batch *b, const char *chain, const char *step)
{
	nft_msg_begin(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND, step);
	nl_attr_str(b, NFTA_RULE_TABLE, TABLE);
	nl_attr_str(b, NFTA_RULE_CHAIN, chain);
	return nl_nest_begin(b, NFTA_RULE_EXPRESSIONS);
}

static void rule_end(struct nl_batch *b, size_t exprs)
{
	nl_nest_end(b, exprs);
	nl_msg_end(b);
}

/* ---- expressions: one list element each ------------------------------ */

struct expr {
	size_t elem, data;
};

static struct expr expr_begin(struct nl_batch *b, const char *name)
{
	struct expr e;
	e.elem = nl_nest_begin(b, NFTA_LIST_ELEM);
	nl_attr_str(b, NFTA_EXPR_NAME, name);
	e.data = nl_nest_begin(b, NFTA_EXPR_DATA);
	return e;
}

static void expr_end(struct nl_batch *b, struct expr e)
{
	nl_nest_end(b, e.data);
	nl_nest_end(b, e.elem);
}

/* A constant: attribute type holding { NFTA_DATA_VALUE: bytes }. */
static void nl_data_value(struct nl_batch *b, uint16_t type, const void *value, size_t len)
{
	size_t nest = nl_nest_begin(b, type);
	nl_attr(b, NFTA_DATA_VALUE, value, len);
	nl_nest_end(b, nest);
}

/* [ meta load KEY => reg ] */
static void expr_meta(struct nl_batch *b, uint32_t key)
{
	struct expr e = expr_begin(b, "meta");
	nl_attr_be32(b, NFTA_META_KEY, key);
	nl_attr_be32(b, NFTA_META_DREG, REG);
	expr_end(b, e);
}

/* [ cmp eq reg VALUE ] */
static void expr_cmp_eq(struct nl_batch *b, const void *value, size_t len)
{
	struct expr e = expr_begin(b, "cmp");
	nl_attr_be32(b, NFTA_CMP_SREG, REG);
	nl_attr_be32(b, NFTA_CMP_OP, NFT_CMP_EQ);
	nl_data_value(b, NFTA_CMP_DATA, value, len);
	expr_end(b, e);
}

/* [ payload load LEN @ BASE header + OFFSET => reg ] */
static void expr_payload(struct nl_batch *b, uint32_t base, uint32_t offset, uint32_t len)
{
	struct expr e = expr_begin(b, "payload");
	nl_attr_be32(b, NFTA_PAYLOAD_DREG, REG);
	nl_attr_be32(b, NFTA_PAYLOAD_BASE, base);
	nl_attr_be32(b, NFTA_PAYLOAD_OFFSET, offset);
	nl_attr_be32(b, NFTA_PAYLOAD_LEN, len);
	expr_end(b, e);
}

/* [ bitwise reg = (reg & MASK) ^ 0 ] */
static void expr_mask(struct nl_batch *b, const void *mask, size_t len)
{
	static const uint8_t zero[16];
	struct expr e = expr_begin(b, "bitwise");
	nl_attr_be32(b, NFTA_BITWISE_SREG, REG);
	nl_attr_be32(b, NFTA_BITWISE_DREG, REG);
	nl_attr_be32(b, NFTA_BITWISE_LEN, (uint32_t)len);
	nl_data_value(b, NFTA_BITWISE_MASK, mask, len);
	nl_data_value(b, NFTA_BITWISE_XOR, zero, len);
	expr_end(b, e);
}

/* [ immediate reg 0 VERDICT ]: accept, return, ... */
static void expr_verdict(struct nl_batch *b, int32_t code)
{
	struct expr e = expr_begin(b, "immediate");
	nl_attr_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	size_t data = nl_nest_begin(b, NFTA_IMMEDIATE_DATA);
	size_t verdict = nl_nest_begin(b, NFTA_DATA_VERDICT);
	nl_attr_be32(b, NFTA_VERDICT_CODE, (uint32_t)code);
	nl_nest_end(b, verdict);
	nl_nest_end(b, data);
	expr_end(b, e);
}

/* redirect to :PORT, as
 *   [ immediate reg PORT ]
 *   [ redir proto_min reg proto_max reg flags PROTO_SPECIFIED ] */
static void expr_redirect(struct nl_batch *b, uint16_t port)
{
	uint16_t be = htons(port);
	struct expr e = expr_begin(b, "immediate");
	nl_attr_be32(b, NFTA_IMMEDIATE_DREG, REG);
	nl_data_value(b, NFTA_IMMEDIATE_DATA, &be, sizeof(be));
	expr_end(b, e);

	e = expr_begin(b, "redir");
	nl_attr_be32(b, NFTA_REDIR_REG_PROTO_MIN, REG);
	nl_attr_be32(b, NFTA_REDIR_REG_PROTO_MAX, REG);
	nl_attr_be32(b, NFTA_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	expr_end(b, e);
}

/* ---- matches ------------------------------------------------------------ */

/* meta nfproto ipv4|ipv6 (an inet chain sees both families) */
static void match_nfproto(struct nl_batch *b, uint8_t nfproto)
{
	expr_meta(b, NFT_META_NFPROTO);
	expr_cmp_eq(b, &nfproto, sizeof(nfproto));
}

/* meta l4proto tcp|udp */
static void match_l4proto(struct nl_batch *b, uint8_t proto)
{
	expr_meta(b, NFT_META_L4PROTO);
	expr_cmp_eq(b, &proto, sizeof(proto));
}

/* ip daddr 127.0.0.0/8: the IPv4 header's destination is at offset 16. */
static void match_ip4_loopback(struct nl_batch *b)
{
	static const uint8_t mask[4] = { 255, 0, 0, 0 }, net[4] = { 127, 0, 0, 0 };
	match_nfproto(b, NFPROTO_IPV4);
	expr_payload(b, NFT_PAYLOAD_NETWORK_HEADER, 16, sizeof(net));
	expr_mask(b, mask, sizeof(mask));
	expr_cmp_eq(b, net, sizeof(net));
}

/* ip6 daddr ::1: the IPv6 header's destination is at offset 24. */
static void match_ip6_loopback(struct nl_batch *b)
{
	static const struct in6_addr lo = IN6ADDR_LOOPBACK_INIT;
	match_nfproto(b, NFPROTO_IPV6);
	expr_payload(b, NFT_PAYLOAD_NETWORK_HEADER, 24, sizeof(lo));
	expr_cmp_eq(b, &lo, sizeof(lo));
}

/* ---- rules -------------------------------------------------------------- */

/* meta nfproto ipv4 udp dport 53 redirect to :DNS_PORT
 * Every IPv4 resolver address works, so whatever the agent's resolv.conf
 * or hard-coded 8.8.8.8 says, the query meets our DNS listener. */
static void rule_dns_redirect(struct nl_batch *b, uint16_t dns_port)
{
	uint16_t dport = htons(53);
	size_t r = rule_begin(b, CHAIN_NAT, "add rule " CHAIN_NAT ": meta nfproto ipv4 udp dport 53 redirect");
	match_nfproto(b, NFPROTO_IPV4);
	match_l4proto(b, IPPROTO_UDP);
	expr_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, sizeof(dport)); /* udp dport */
	expr_cmp_eq(b, &dport, sizeof(dport));
	expr_redirect(b, dns_port);
	rule_end(b, r);
}

/* ip daddr 127.0.0.0/8 VERDICT */
static void rule_ip4_loopback(struct nl_batch *b, const char *chain, int32_t verdict, const char *step)
{
	size_t r = rule_begin(b, chain, step);
	match_ip4_loopback(b);
	expr_verdict(b, verdict);
	rule_end(b, r);
}

/* ip6 daddr ::1 VERDICT */
static void rule_ip6_loopback(struct nl_batch *b, const char *chain, int32_t verdict, const char *step)
{
	size_t r = rule_begin(b, chain, step);
	match_ip6_loopback(b);
	expr_verdict(b, verdict);
	rule_end(b, r);
}

/* meta l4proto tcp redirect to :TCP_PORT
 * Both families: the proxy listens on 127.0.0.1 and [::1]. */
static void rule_tcp_redirect(struct nl_batch *b, uint16_t tcp_port)
{
	size_t r = rule_begin(b, CHAIN_NAT, "add rule " CHAIN_NAT ": meta l4proto tcp redirect");
	match_l4proto(b, IPPROTO_TCP);
	expr_redirect(b, tcp_port);
	rule_end(b, r);
}

static int add_ruleset(uint16_t tcp_port, uint16_t dns_port, struct error *err)
{
	struct nl_batch b = { .len = 0 };
	nft_batch_mark(&b, NFNL_MSG_BATCH_BEGIN, "nftables batch");
	nft_table(&b);

	nft_chain(&b, CHAIN_NAT, "nat", -100 /* dstnat */, NF_ACCEPT,
		  "add chain " CHAIN_NAT " (type nat hook output)");
	rule_dns_redirect(&b, dns_port);
	/* WARNING: these returns keep loopback traffic (the proxy's own
	 * listeners included) from being redirected; they must stay before
	 * the TCP redirect. */
	rule_ip4_loopback(&b, CHAIN_NAT, NFT_RETURN, "add rule " CHAIN_NAT ": ip daddr 127.0.0.0/8 return");
	rule_ip6_loopback(&b, CHAIN_NAT, NFT_RETURN, "add rule " CHAIN_NAT ": ip6 daddr ::1 return");
	rule_tcp_redirect(&b, tcp_port);

	nft_chain(&b, CHAIN_FILTER, "filter", 0 /* filter */, NF_DROP,
		  "add chain " CHAIN_FILTER " (type filter hook output)");
	rule_ip4_loopback(&b, CHAIN_FILTER, NF_ACCEPT, "add rule " CHAIN_FILTER ": ip daddr 127.0.0.0/8 accept");
	rule_ip6_loopback(&b, CHAIN_FILTER, NF_ACCEPT, "add rule " CHAIN_FILTER ": ip6 daddr ::1 accept");

	nft_batch_mark(&b, NFNL_MSG_BATCH_END, "nftables batch end");

	_cleanup_close_ int fd = nl_open(NETLINK_NETFILTER, "netfilter", err);
	if (fd < 0)
		return fd;
	return nl_talk(fd, &b, "install table inet " TABLE, err);
}

int netfilter_transparent(uint16_t tcp_port, uint16_t dns_port, struct error *err)
{
	if (tcp_port == 0 || dns_port == 0)
		return error_set(err, EINVAL, "transparent network: the proxy port (%u) and DNS port (%u) must be nonzero",
				 tcp_port, dns_port);
	int r = add_routes(err);
	if (r < 0)
		return r;
	return add_ruleset(tcp_port, dns_port, err);
}
