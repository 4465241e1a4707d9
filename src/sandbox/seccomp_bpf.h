/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_SECCOMP_BPF_H
#define AIRLOCK_SANDBOX_SECCOMP_BPF_H

/* The sandbox's seccomp programs (struct sock_filter arrays), generated at
 * build time by seccomp-gen from seccomp_rules.c. */
extern const unsigned char seccomp_bpf_errno[];
extern const unsigned long seccomp_bpf_errno_len;
extern const unsigned char seccomp_bpf_trace[];
extern const unsigned long seccomp_bpf_trace_len;
/* The same with filesystem.protect's creating calls sent to the supervisor. */
extern const unsigned char seccomp_bpf_errno_protect[];
extern const unsigned long seccomp_bpf_errno_protect_len;
extern const unsigned char seccomp_bpf_trace_protect[];
extern const unsigned long seccomp_bpf_trace_protect_len;

#endif
