/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_SECCOMP_BPF_H
#define AIRLOCK_SANDBOX_SECCOMP_BPF_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

/* How much of the sandbox's file activity stops for the supervisor's
 * ptrace (ftrace.c), to record what was refused:
 *   OFF     nothing.
 *   WRITES  the calls that change the tree (an open for writing, creating,
 *           removing, renaming or linking a name, truncate) and exec: what
 *           the decision log records in enforce mode. They come to the
 *           supervisor as user notifications, are noted and run
 *           (ftrace_notified); nothing is ptraced. Reads, stats and
 *           access probes run unseen, at native speed.
 *   ALL     every call that takes a path, reads and probes too: learn and
 *           observe modes and --trace-denials, which must see a read of a
 *           hidden file to suggest or report it. */
enum seccomp_trace { SECCOMP_TRACE_OFF, SECCOMP_TRACE_WRITES, SECCOMP_TRACE_ALL };
#define SECCOMP_TRACE_LEVELS 3

/* The sandbox's seccomp programs (struct sock_filter arrays), generated at
 * build time by seccomp-gen from seccomp_rules.c: one per combination of
 * the trace level (enum seccomp_trace), filesystem.protect's creating
 * calls and the socket guard's calls sent to the supervisor, indexed by
 * seccomp_bpf_index. */
#define SECCOMP_BPF_PROGS (SECCOMP_TRACE_LEVELS * 2 * 2)
extern const unsigned char *const seccomp_bpf_progs[SECCOMP_BPF_PROGS];
extern const unsigned long *const seccomp_bpf_lens[SECCOMP_BPF_PROGS];

/* airlock-proxy's own programs (seccomp_rules_build_proxy), generated
 * with the others: files read only, or the MCP pins files written too. */
extern const unsigned char seccomp_bpf_proxy[], seccomp_bpf_proxy_pins[];
extern const unsigned long seccomp_bpf_proxy_len, seccomp_bpf_proxy_pins_len;

/* airlock-mcp-gateway's program (seccomp_rules_build_gateway), generated
 * with the others: the gateway compiles nothing at its start. */
extern const unsigned char seccomp_bpf_gateway[];
extern const unsigned long seccomp_bpf_gateway_len;

/* An MCP connection monitor's program (seccomp_rules_build_monitor). */
extern const unsigned char seccomp_bpf_monitor[];
extern const unsigned long seccomp_bpf_monitor_len;

static inline int seccomp_bpf_index(enum seccomp_trace trace, bool protect, bool sockets)
{
	return ((sockets ? 2 : 0) + (protect ? 1 : 0)) * SECCOMP_TRACE_LEVELS + (int)trace;
}

/* supervisor: answers the sandbox's memfd_create (sent by the filter when
 * there is a listener) with a memfd it makes itself, sealed against exec
 * (MFD_NOEXEC_SEAL), installed in the caller. See seccomp.c. Returns
 * false, having answered nothing, for a call the caller must refuse. */
bool seccomp_memfd_handle(int notify, const struct seccomp_notif *req);

/* airlock-proxy: install its program (with pins: the one that writes
 * the MCP pins files) on every thread of the process (TSYNC).
 * no_new_privs must be set. Returns 0 or a negative errno with err set. */
int seccomp_apply_proxy(bool pins, struct error *err) WUR;

/* airlock-mcp-gateway: install its program (single-threaded: no TSYNC
 * needed, none asked). no_new_privs must be set. 0 or a negative errno
 * with err set. */
int seccomp_apply_gateway(struct error *err) WUR;

/* An MCP connection's monitor: install its program (single-threaded).
 * no_new_privs must be set. 0 or a negative errno with err set. */
int seccomp_apply_monitor(struct error *err) WUR;

/* The file-system uid and gid of task pid, as the host sees them (from
 * /proc/PID/status). */
bool seccomp_caller_fsids(pid_t pid, uid_t *uid, gid_t *gid);

#endif
