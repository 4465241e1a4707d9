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

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

int seccomp_apply(const struct sandbox_plan *plan, int *notify_fd, struct error *err)
{
	bool protect = plan->protect.n > 0, guard = protect || plan->sockguard;
	int k = seccomp_bpf_index(plan->trace, protect, plan->sockguard);
	const unsigned char *prog = seccomp_bpf_progs[k];
	unsigned long len = *seccomp_bpf_lens[k];
	struct sock_fprog fprog = {
		.len = (unsigned short)(len / sizeof(struct sock_filter)),
		.filter = (struct sock_filter *)(uintptr_t)prog,
	};
	bool listen = plan->trace || guard;
	/* WAIT_KILLABLE_RECV (Linux 5.19): once the supervisor has taken a
	 * call, only a fatal signal interrupts it, so a call the guard has
	 * performed is not restarted and performed twice. */
	unsigned flags = listen ? SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV : 0;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
	if (r < 0 && listen && errno == EINVAL)
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
	if (r < 0)
		return error_sys(err, errno, "cannot install the seccomp filter");
	if (notify_fd)
		*notify_fd = listen ? (int)r : -1;
	return 0;
}
