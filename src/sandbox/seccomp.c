/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading the prebuilt seccomp program (see seccomp_rules.c for what it
 * denies and why). Runs in the child after no_new_privs and Landlock.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/seccomp_bpf.h"

int seccomp_apply(const struct sandbox_plan *plan, int *notify_fd, struct error *err)
{
	const unsigned char *prog = plan->trace ? seccomp_bpf_trace : seccomp_bpf_errno;
	unsigned long len = plan->trace ? seccomp_bpf_trace_len : seccomp_bpf_errno_len;
	struct sock_fprog fprog = {
		.len = (unsigned short)(len / sizeof(struct sock_filter)),
		.filter = (struct sock_filter *)(uintptr_t)prog,
	};
	unsigned flags = plan->trace ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
	if (r < 0)
		return error_sys(err, errno, "cannot install the seccomp filter");
	if (notify_fd)
		*notify_fd = plan->trace ? (int)r : -1;
	return 0;
}
