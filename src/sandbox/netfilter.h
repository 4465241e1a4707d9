/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_NETFILTER_H
#define AIRLOCK_SANDBOX_NETFILTER_H

/* The transparent network mode: inside the sandbox's network namespace
 * (loopback only), every outbound TCP connection is redirected to the
 * egress proxy on 127.0.0.1/[::1]:tcp_port, which reads where it was
 * going with SO_ORIGINAL_DST; every IPv4 UDP datagram to port 53 is
 * redirected to the DNS listener on 127.0.0.1:dns_port; anything else
 * that is not addressed to loopback is dropped (senders get EPERM).
 *
 * Spoken to the kernel over raw netlink (NETLINK_ROUTE for the default
 * routes through lo, NETLINK_NETFILTER for one atomic nftables batch);
 * no external binaries. */

#include <stdint.h>

#include "util/error.h"

/* Install the routes and the nftables table "inet airlock" in the
 * calling thread's network namespace. Needs CAP_NET_ADMIN in the user
 * namespace owning it; loopback must already be up. Calling it again
 * replaces the table atomically. Ports are in host byte order and
 * nonzero. Returns 0, or a negative errno with err naming the step that
 * failed. */
int netfilter_transparent(uint16_t tcp_port, uint16_t dns_port, struct error *err) WUR;

#endif
