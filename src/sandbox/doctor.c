/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `airlock doctor`: what this kernel offers, and what airlock will refuse
 * or degrade because of it. Every probe here is side-effect free: it
 * creates namespaces or rulesets only in short-lived children or fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/sandbox.h"

static bool can_clone(int flags)
{
	pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return false;
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static const char *yesno(bool b)
{
	return b ? "yes" : "no";
}

bool sandbox_doctor(FILE *f)
{
	bool ok = true;
	struct utsname u;
	uname(&u);
	fprintf(f, "kernel:            %s %s (%s)\n", u.sysname, u.release, u.machine);
	fprintf(f, "running as:        uid %u%s\n", getuid(),
		geteuid() == 0 ? " (root: the sandbox maps to an unprivileged host uid)" : " (unprivileged)");

	bool userns = can_clone(CLONE_NEWUSER);
	bool allns = can_clone(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
			       CLONE_NEWUTS | CLONE_NEWCGROUP);
	fprintf(f, "user namespaces:   %s\n", yesno(userns));
	fprintf(f, "all namespaces:    %s (user, mount, pid, net, ipc, uts, cgroup)\n", yesno(allns));
	if (!allns) {
		fprintf(f, "  REFUSE: airlock cannot build its boundary without these namespaces\n");
		ok = false;
	}

	int abi = landlock_abi();
	fprintf(f, "Landlock ABI:      %d\n", abi);
	if (abi < 1) {
		fprintf(f, "  REFUSE: Landlock is required (kernel 5.13+, 'landlock' in lsm=)\n");
		ok = false;
	} else {
		fprintf(f, "  filesystem:      yes (exec allow-list, read/write rules)\n");
		fprintf(f, "  refer/rename:    %s\n", yesno(abi >= 2));
		fprintf(f, "  truncate:        %s\n", yesno(abi >= 3));
		fprintf(f, "  TCP bind/connect: %s\n", abi >= 4 ? "yes" : "no (DEGRADED: the network namespace alone isolates)");
		fprintf(f, "  device ioctl:    %s\n", yesno(abi >= 5));
		fprintf(f, "  IPC scoping:     %s\n",
			abi >= 6 ? "yes (abstract unix sockets, signals)"
				 : "no (DEGRADED: the net and pid namespaces alone isolate)");
		fprintf(f, "  audit logging:   %s\n", yesno(abi >= 7));
	}

	bool sc = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	const struct scmp_version *v = seccomp_version();
	unsigned api = seccomp_api_get();
	fprintf(f, "seccomp:           %s (libseccomp %u.%u.%u, API level %u)\n", yesno(sc), v->major, v->minor,
		v->micro, api);
	fprintf(f, "  user notification: %s\n",
		api >= 6 ? "yes (--trace-denials reports blocked syscalls)" : "no (--trace-denials unavailable)");
	if (!sc) {
		fprintf(f, "  REFUSE: seccomp is required\n");
		ok = false;
	}

	bool mountapi = syscall(SYS_open_tree, -1, "", 0) < 0 && errno != ENOSYS;
	bool setattr = syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) < 0 && errno != ENOSYS;
	fprintf(f, "new mount API:     %s\n", yesno(mountapi && setattr));
	if (!(mountapi && setattr)) {
		fprintf(f, "  REFUSE: open_tree and mount_setattr (Linux 5.12+) are required\n");
		ok = false;
	}
	bool pidfd = syscall(SYS_pidfd_open, getpid(), 0) >= 0;
	fprintf(f, "pidfd:             %s\n", yesno(pidfd));

	struct policy_limits probe = { .memory_bytes = 1 << 30, .pids = 1024 };
	struct cgroup_handle cg;
	struct error err = { 0 };
	int c = limits_cgroup_create(&probe, &cg, &err);
	if (c > 0)
		fprintf(f, "cgroups:           %s, writable (memory and pids limits enforced by cgroup)\n",
			cg.v2 ? "v2" : "v1");
	else
		fprintf(f, "cgroups:           no writable hierarchy with memory+pids (DEGRADED: memory uses "
			   "RLIMIT_DATA per process, pids uses RLIMIT_NPROC)\n");
	limits_cgroup_destroy(&cg);

	fprintf(f, "boundaries:        process (available), gvisor (not in this build), microvm (not in this build)\n");
	fprintf(f, "verdict:           %s\n", ok ? "airlock run will work here" : "airlock run will refuse to run here");
	return ok;
}
