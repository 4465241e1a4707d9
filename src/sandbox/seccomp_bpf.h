/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_SECCOMP_BPF_H
#define AIRLOCK_SANDBOX_SECCOMP_BPF_H

#include <linux/seccomp.h>
#include <stdbool.h>

/* The sandbox's seccomp programs (struct sock_filter arrays), generated at
 * build time by seccomp-gen from seccomp_rules.c: one per combination of
 * trace mode, filesystem.protect's creating calls and the socket guard's
 * calls sent to the supervisor, indexed by seccomp_bpf_index. */
extern const unsigned char *const seccomp_bpf_progs[8];
extern const unsigned long *const seccomp_bpf_lens[8];

static inline int seccomp_bpf_index(bool trace, bool protect, bool sockets)
{
	return (sockets ? 4 : 0) + (protect ? 2 : 0) + (trace ? 1 : 0);
}

/* supervisor: answers the sandbox's memfd_create (sent by the filter when
 * there is a listener) with a memfd it makes itself, sealed against exec
 * (MFD_NOEXEC_SEAL), installed in the caller. See seccomp.c. Returns
 * false, having answered nothing, for a call the caller must refuse. */
bool seccomp_memfd_handle(int notify, const struct seccomp_notif *req);

#endif
