/* SPDX-License-Identifier: Apache-2.0 */
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>

#include "sandbox/internal.h"

const char *seccomp_syscall_name(int nr, char *buf, size_t len)
{
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	if (name) {
		snprintf(buf, len, "%s", name);
		free(name);
	} else {
		snprintf(buf, len, "syscall_%d", nr);
	}
	return buf;
}
