/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_SECCOMP_RULES_H
#define AIRLOCK_SANDBOX_SECCOMP_RULES_H

#include <seccomp.h>
#include <stdbool.h>

#include "sandbox/seccomp_bpf.h"
#include "util/error.h"

/* Build the sandbox's filter. Denied calls return EPERM, or with notify
 * go to the supervisor through a user notification (which answers EPERM
 * and records them). With trace, path-taking calls stop for the
 * supervisor's ptrace, as enum seccomp_trace says. With protect, calls that create a name go to the
 * supervisor as user notifications (guard.c), and openat2 returns ENOSYS.
 * With sockets, connect, sendto with an address and the creation of
 * datagram unix sockets do too (guard.c). *out is owned by the caller
 * (seccomp_release). */
int seccomp_rules_build(bool notify, enum seccomp_trace trace, bool protect, bool sockets, scmp_filter_ctx *out,
			struct error *err);

/* airlock-proxy's filter for itself, once it serves: an allow-list of
 * what it calls (seccomp_rules.c), calls only an attacker would make
 * killing the process, the rest ENOSYS. Files are opened for reading
 * alone, unless pins: the MCP gateway's pins files are written too (the
 * proxy's Landlock domain says where). *out as above. */
int seccomp_rules_build_proxy(bool pins, scmp_filter_ctx *out, struct error *err);

/* airlock-mcp-gateway's filter for itself, before it reads the agent's
 * first byte: an allow-list of its relay's calls (seccomp_rules.c), every
 * other call killing the process. *out as above. */
int seccomp_rules_build_gateway(scmp_filter_ctx *out, struct error *err);

/* An MCP connection's monitor's filter for itself, once the server's
 * sandbox, the gateway and the pins keeper are started: its control
 * loop's calls and the path lookups of inside_workspace (O_PATH alone),
 * every other call killing the process. *out as above. */
int seccomp_rules_build_monitor(scmp_filter_ctx *out, struct error *err);

#endif
