/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading the prebuilt seccomp program (see seccomp_rules.c for what it
 * denies and why). Runs in the child after no_new_privs and Landlock.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/seccomp_bpf.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
/* memfd_create's limit on a name (MFD_NAME_MAX_LEN), with its NUL. */
#define MEMFD_NAME_MAX 250

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
	bool listen = plan->trace != SECCOMP_TRACE_OFF || guard;
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

/* A generated program of a helper's own, on every thread (TSYNC: a
 * thread a library started before this call is filtered too, or refused,
 * as one with a filter of its own). */
static int apply_own(const unsigned char *prog, unsigned long len, const char *whose, struct error *err)
{
	struct sock_fprog fprog = {
		.len = (unsigned short)(len / sizeof(struct sock_filter)),
		.filter = (struct sock_filter *)(uintptr_t)prog,
	};
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog);
	if (r != 0) /* > 0: the id of a thread that could not be synchronised */
		return error_sys(err, r < 0 ? errno : EBUSY, "cannot install %s seccomp filter", whose);
	return 0;
}

int seccomp_apply_proxy(bool pins, struct error *err)
{
	return pins ? apply_own(seccomp_bpf_proxy_pins, seccomp_bpf_proxy_pins_len, "the egress proxy's", err)
		    : apply_own(seccomp_bpf_proxy, seccomp_bpf_proxy_len, "the egress proxy's", err);
}

int seccomp_apply_gateway(struct error *err)
{
	return apply_own(seccomp_bpf_gateway, seccomp_bpf_gateway_len, "the MCP gateway's", err);
}

int seccomp_apply_monitor(struct error *err)
{
	return apply_own(seccomp_bpf_monitor, seccomp_bpf_monitor_len, "the MCP monitor's", err);
}

/* The file-system uid and gid of task pid, as the host sees them. */
bool seccomp_caller_fsids(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	unsigned u[4], g[4];
	const char *pu = strstr(buf, "\nUid:"), *pg = strstr(buf, "\nGid:");
	if (!pu || !pg || sscanf(pu, "\nUid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4 ||
	    sscanf(pg, "\nGid: %u %u %u %u", &g[0], &g[1], &g[2], &g[3]) != 4)
		return false;
	*uid = u[3];
	*gid = g[3];
	return true;
}

/* A memfd is executable unless vm.memfd_noexec is 2 in its creator's pid
 * namespace, and the kernel lets only the host's root set that (see
 * child.c): a memfd the sandbox makes itself could be run with fexecve or
 * through /proc/self/fd, past every exec rule. So the filter sends
 * memfd_create here, and the supervisor makes the memfd, with the caller's
 * name and flags plus MFD_NOEXEC_SEAL (mode 0666 and F_SEAL_EXEC: no exec
 * bit, ever), and installs it in the caller as the call's result. The
 * pages are charged to whoever touches them: the sandbox. MFD_EXEC never
 * gets here (the filter refuses it). Linux before 6.3 knows no
 * MFD_NOEXEC_SEAL: the call goes on as the caller made it, executable, as
 * docs/sandbox.md says. */
bool seccomp_memfd_handle(int notify, const struct seccomp_notif *req)
{
	struct seccomp_notif_resp resp = { .id = req->id };
	char name[MEMFD_NAME_MAX];
	unsigned flags = (unsigned)req->data.args[1];
	size_t got = 0;

	/* MFD_EXEC is a denied call the filter reports (with trace on): the
	 * caller records and refuses it. WARNING: it must never reach the
	 * CONTINUE below. */
	if (flags & MFD_EXEC)
		return false;
	/* The name, page by page (a read across the end of a mapping fails
	 * whole); only a name, never judged. */
	while (got < sizeof(name)) {
		unsigned long long addr = req->data.args[0] + got;
		size_t chunk = 4096 - (addr & 4095);
		if (chunk > sizeof(name) - got)
			chunk = sizeof(name) - got;
		struct iovec local = { .iov_base = name + got, .iov_len = chunk };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = chunk };
		ssize_t n = process_vm_readv(req->pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			break;
		if (memchr(name + got, '\0', (size_t)n)) {
			got = SIZE_MAX;
			break;
		}
		got += (size_t)n;
	}
	if (got != SIZE_MAX) {
		resp.error = got >= sizeof(name) ? -EINVAL : -EFAULT;
		(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		return true;
	}
	/* Started as root, the memfd would be root's: the caller could not
	 * fchmod it, and would see an owner it cannot map. Made with the
	 * caller's file-system ids instead (a pid reused since the call was
	 * sent gets nothing: the notification is gone and ADDFD fails). */
	uid_t fsuid = (uid_t)-1;
	gid_t fsgid = (gid_t)-1;
	if (geteuid() == 0 && !seccomp_caller_fsids(req->pid, &fsuid, &fsgid)) {
		resp.error = -ESRCH;
		(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		return true;
	}
	if (fsuid != (uid_t)-1) {
		setfsgid(fsgid);
		setfsuid(fsuid);
	}
	int fd = memfd_create(name, flags | MFD_NOEXEC_SEAL);
	int create_errno = errno;
	if (fsuid != (uid_t)-1) {
		setfsuid(0);
		setfsgid(0);
	}
	errno = create_errno;
	if (fd < 0) {
		if (errno == EINVAL && !(flags & MFD_NOEXEC_SEAL))
			resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE; /* < 6.3, or flags the kernel refuses itself */
		else
			resp.error = -errno;
		(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		return true;
	}
	struct seccomp_notif_addfd add = {
		.id = req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = (flags & MFD_CLOEXEC) ? O_CLOEXEC : 0,
	};
	int added = ioctl(notify, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	int e = errno;
	close(fd);
	if (added >= 0 || e == ENOENT)
		return true; /* answered, or the caller is gone */
	resp.error = -e; /* EMFILE: the caller's fd limit */
	(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	return true;
}
