/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The supervisor's side of the guard (guard.c says what the guard does):
 * which notified calls go to it, decoding a notification into a request
 * with the caller's path and directory copied once, the exchange with the
 * guard, and the answer to the caller when the guard did not give it.
 * The unix-socket calls (connect, sendto) come the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <unistd.h>

#include "sandbox/ftrace.h"
#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "sandbox/trace.h"
#include "util/cleanup.h"
#include "util/fds.h"

#include "sandbox/guard_proto.h"

/* ----------------------------------------------------------- supervisor */

void guard_attach(int guard, int notify)
{
	struct guard_req *q = calloc(1, sizeof(*q));
	if (!q)
		return; /* the supervisor answers every call itself */
	q->op = G_NOTIFY;
	(void)proto_send(guard, q, sizeof(*q), &notify, 1);
	free(q);
}

bool guard_syscall(int nr)
{
	switch (nr) {
	case SYS_open: case SYS_openat: case SYS_creat: case SYS_mkdir: case SYS_mkdirat: case SYS_mknod:
	case SYS_mknodat: case SYS_symlink: case SYS_symlinkat: case SYS_link: case SYS_linkat:
	case SYS_rename: case SYS_renameat: case SYS_renameat2:
		return true;
	default:
		return false;
	}
}

/* Copy a NUL-terminated string out of the caller, once. Reads page by
 * page (a read across the end of a mapping fails whole). */
static int copy_path(pid_t pid, unsigned long long addr, char *out, size_t len)
{
	size_t got = 0;
	while (got < len) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > len - got)
			chunk = len - got;
		struct iovec local = { .iov_base = out + got, .iov_len = chunk };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)(addr + got), .iov_len = chunk };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -EFAULT;
		if (memchr(out + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/* The caller's directory for dirfd: its cwd for AT_FDCWD, else a copy of
 * its fd. Opened by the supervisor, which can (it owns the sandbox's user
 * namespace); the caller cannot (pidfd_getfd is denied inside). */
static int caller_dir(int pidfd, pid_t pid, int dirfd)
{
	if (dirfd == AT_FDCWD) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/cwd", (int)pid);
		int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, dirfd, 0);
	return fd < 0 ? -errno : fd;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* A pidfd for the calling task, which may be any thread of its process
 * (req->pid is its thread id): PIDFD_THREAD (Linux 6.9+) names a thread;
 * without it pidfd_open takes only a thread group's leader (ESRCH for
 * the others; a resolver thread's connect would fail). The fd table a
 * pidfd_getfd copies from is the process's, shared by its threads. */
static int caller_pidfd(pid_t tid)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, tid, 0);
	return fd;
}

/* /proc/TID/status of the last callers, kept open to be read again. An
 * open entry stays bound to the task it was opened for (its struct pid,
 * not its number): once that task has exited the read fails (ESRCH) and
 * the slot is opened anew, so a thread id the kernel hands to another
 * task never reads the umask of the one before. WARNING: nothing read
 * from it may be kept by the number alone. */
#define GUARD_STATUS_FDS 16
static struct {
	pid_t tid;
	int fd; /* -1 when free: see status_of */
} status_fds[GUARD_STATUS_FDS];
static unsigned status_next;
static bool status_init;

static ssize_t status_of(pid_t tid, char *buf, size_t len)
{
	if (!status_init) {
		for (size_t i = 0; i < GUARD_STATUS_FDS; i++)
			status_fds[i].fd = -1;
		status_init = true;
	}
	for (size_t i = 0; i < GUARD_STATUS_FDS; i++) {
		if (status_fds[i].fd < 0 || status_fds[i].tid != tid)
			continue;
		ssize_t n = pread(status_fds[i].fd, buf, len - 1, 0);
		if (n > 0) {
			buf[n] = '\0';
			return n;
		}
		close(status_fds[i].fd); /* its task is gone: the tid is another's */
		status_fds[i].fd = -1;
	}
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (n <= 0) {
		if (fd >= 0)
			close(fd);
		return n;
	}
	unsigned k = status_next++ % GUARD_STATUS_FDS;
	if (status_fds[k].fd >= 0)
		close(status_fds[k].fd);
	status_fds[k].tid = tid;
	status_fds[k].fd = fd;
	return n;
}

/* The caller's umask (the kernel applies the caller's, not the guard's)
 * and its pid inside the sandbox (its last NSpid): one read of its
 * status. */
static void caller_info(pid_t pid, struct guard_req *q)
{
	char buf[4096];
	q->umask = 077; /* cannot tell: the safe side */
	if (status_of(pid, buf, sizeof(buf)) > 0) {
		const char *u = strstr(buf, "\nUmask:\t");
		if (u)
			q->umask = (unsigned)strtoul(u + 8, NULL, 8) & 0777;
		const char *ns = strstr(buf, "\nNSpid:");
		if (ns) {
			ns += 7;
			char *end;
			for (long v; (v = strtol(ns, &end, 10)), end != ns; ns = end)
				q->vpid = (int32_t)v;
		}
	}
}

static void respond(int notify, const struct seccomp_notif *req, int res)
{
	struct seccomp_notif_resp resp = { .id = req->id };
	if (res < 0)
		resp.error = res;
	else
		resp.val = res;
	(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* Decode the call into a request: which arguments hold the paths, the
 * directory fds, the flags. */
static int decode(const struct seccomp_notif *req, struct guard_req *q, int dirs[2], unsigned long long paths[2])
{
	const __u64 *a = req->data.args;
	dirs[0] = dirs[1] = AT_FDCWD;
	paths[0] = paths[1] = 0;
	switch (req->data.nr) {
	case SYS_open:
		*q = (struct guard_req){ .op = G_OPEN, .flags = (int)a[1], .mode = (uint32_t)a[2] };
		paths[0] = a[0];
		break;
	case SYS_creat:
		*q = (struct guard_req){ .op = G_OPEN, .flags = O_CREAT | O_WRONLY | O_TRUNC, .mode = (uint32_t)a[1] };
		paths[0] = a[0];
		break;
	case SYS_openat:
		*q = (struct guard_req){ .op = G_OPEN, .flags = (int)a[2], .mode = (uint32_t)a[3] };
		dirs[0] = (int)a[0];
		paths[0] = a[1];
		break;
	case SYS_mkdir:
		*q = (struct guard_req){ .op = G_MKDIR, .mode = (uint32_t)a[1] };
		paths[0] = a[0];
		break;
	case SYS_mkdirat:
		*q = (struct guard_req){ .op = G_MKDIR, .mode = (uint32_t)a[2] };
		dirs[0] = (int)a[0];
		paths[0] = a[1];
		break;
	case SYS_mknod:
		*q = (struct guard_req){ .op = G_MKNOD, .mode = (uint32_t)a[1], .dev = a[2] };
		paths[0] = a[0];
		break;
	case SYS_mknodat:
		*q = (struct guard_req){ .op = G_MKNOD, .mode = (uint32_t)a[2], .dev = a[3] };
		dirs[0] = (int)a[0];
		paths[0] = a[1];
		break;
	case SYS_symlink: /* target, linkpath */
		*q = (struct guard_req){ .op = G_SYMLINK };
		paths[0] = a[0];
		paths[1] = a[1];
		break;
	case SYS_symlinkat: /* target, newdirfd, linkpath */
		*q = (struct guard_req){ .op = G_SYMLINK };
		paths[0] = a[0];
		dirs[1] = (int)a[1];
		paths[1] = a[2];
		break;
	case SYS_link:
	case SYS_rename:
		*q = (struct guard_req){ .op = req->data.nr == SYS_link ? G_LINK : G_RENAME };
		paths[0] = a[0];
		paths[1] = a[1];
		break;
	case SYS_linkat:
	case SYS_renameat:
	case SYS_renameat2:
		*q = (struct guard_req){ .op = req->data.nr == SYS_linkat ? G_LINK : G_RENAME,
					 .flags = req->data.nr == SYS_renameat ? 0 : (int)a[4] };
		dirs[0] = (int)a[0];
		paths[0] = a[1];
		dirs[1] = (int)a[2];
		paths[1] = a[3];
		break;
	default:
		return -ENOSYS;
	}
	return 0;
}

/* Hand q (and data, for sendto) with fds to the guard and wait for its
 * answer to this request. 0 with *resp filled and *opened the fd it sent
 * back (or -1), or -EACCES when the guard is gone or stuck: the call is
 * then refused. */
static int exchange(int guard, struct guard_req *q, const void *data, size_t dlen, const int *fds, size_t nfds,
		    struct guard_resp *resp, int *opened)
{
	static uint64_t next_seq;
	static bool timeout_set;
	q->seq = ++next_seq;
	*opened = -1;
	if (!timeout_set) {
		struct timeval tv = { .tv_sec = GUARD_TIMEOUT_S };
		timeout_set = setsockopt(guard, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0;
	}
	int r;
	if (dlen) {
		/* One message: the request, then the data. */
		union {
			char buf[CMSG_SPACE(sizeof(int) * 2)];
			struct cmsghdr align;
		} c;
		memset(&c, 0, sizeof(c));
		struct iovec iov[2] = { { .iov_base = q, .iov_len = sizeof(*q) },
					{ .iov_base = (void *)(uintptr_t)data, .iov_len = dlen } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = c.buf,
				     .msg_controllen = CMSG_SPACE(sizeof(int) * nfds) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
		r = sendmsg(guard, &mh, MSG_NOSIGNAL) == (ssize_t)(sizeof(*q) + dlen) ? 0 : -EACCES;
	} else {
		r = proto_send(guard, q, sizeof(*q), fds, nfds);
	}
	if (r < 0)
		return -EACCES;
	ssize_t n;
	/* A late answer to a call that timed out carries an older sequence
	 * number: drop it, with its fd. */
	do {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = resp, .iov_len = sizeof(*resp) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		n = recvmsg(guard, &mh, MSG_CMSG_CLOEXEC);
		*opened = -1;
		for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len >= CMSG_LEN(sizeof(int)))
				memcpy(opened, CMSG_DATA(c), sizeof(int));
		if (n == (ssize_t)sizeof(*resp) && resp->seq != q->seq && *opened >= 0)
			close(*opened);
	} while (n == (ssize_t)sizeof(*resp) && resp->seq != q->seq);
	if (n != (ssize_t)sizeof(*resp)) {
		if (*opened >= 0)
			close(*opened);
		*opened = -1;
		return -EACCES;
	}
	resp->glob[sizeof(resp->glob) - 1] = resp->where[sizeof(resp->where) - 1] = '\0';
	return 0;
}

static void record(struct trace_log *log, const struct seccomp_notif *req, const struct guard_req *q,
		   const struct guard_resp *resp)
{
	char name[64];
	seccomp_syscall_name(req->data.nr, name, sizeof(name));
	if (resp->glob[0]) {
		trace_record_protected(log, (pid_t)req->pid, name, resp->where, resp->res < 0 ? -resp->res : EACCES,
				       resp->glob);
		return;
	}
	int e = -resp->res;
	const char *path = q->op == G_OPEN || q->op == G_MKDIR || q->op == G_MKNOD ? q->p1 : q->p2;
	/* A create into a directory the sandbox does not show fails with
	 * ENOENT: a denial all the same (learn mode suggests from it). */
	bool dir_hidden = e == ENOENT && ftrace_dir_exists(path);
	if (e == EACCES || e == EPERM || e == EROFS || dir_hidden)
		trace_record_file(log, (pid_t)req->pid, name, path, e, dir_hidden,
				  q->op == G_MKDIR || q->op == G_MKNOD || (q->op == G_OPEN && (q->flags & O_CREAT)));
}

void guard_handle(int notify, int guard, const struct seccomp_notif *req, struct trace_log *log)
{
	struct guard_req *q = calloc(1, sizeof(*q));
	struct guard_resp *resp = calloc(1, sizeof(*resp));
	int dirs[2], fds[2] = { -1, -1 }, res;
	unsigned long long paths[2];
	pid_t pid = (pid_t)req->pid;
	_cleanup_close_ int pidfd = -1;
	int opened = -1;

	if (!q || !resp || guard < 0) {
		res = -EACCES; /* fail closed: no guard, no creation */
		goto out;
	}
	if ((res = decode(req, q, dirs, paths)) < 0)
		goto out;
	/* The one copy of each path the call will use. */
	if ((res = copy_path(pid, paths[0], q->p1, sizeof(q->p1))) < 0 ||
	    (paths[1] && (res = copy_path(pid, paths[1], q->p2, sizeof(q->p2))) < 0))
		goto out;
	/* The umask matters to what is made with a mode (a symlink's is
	 * always 0777; a link or a rename makes no new inode), the pid inside
	 * the sandbox to the names rewrite_self rewrites, and to /dev/tty,
	 * which only an open reaches. */
	if (q->op == G_OPEN || q->op == G_MKDIR || q->op == G_MKNOD || strncmp(q->p1, "/proc/", 6) == 0 ||
	    strncmp(q->p1, "/dev/", 5) == 0 || strncmp(q->p2, "/proc/", 6) == 0 || strncmp(q->p2, "/dev/", 5) == 0)
		caller_info(pid, q);
	/* One absolute path: the kernel ignores the directory fd (even a
	 * closed one), and the guard looks the path up from its own root,
	 * which is the caller's (chroot is denied in the sandbox). */
	bool no_dir = !paths[1] && q->p1[0] == '/';
	/* A pidfd only to copy a directory fd: AT_FDCWD is the cwd. */
	if (!no_dir && (dirs[0] != AT_FDCWD || (paths[1] && dirs[1] != AT_FDCWD)) &&
	    (pidfd = caller_pidfd(pid)) < 0) {
		res = -ESRCH;
		goto out;
	}
	/* A symlink's target text names no directory: only its link path's
	 * does; linkat(fd, "", AT_EMPTY_PATH) hands over the file itself. */
	bool first_is_text = q->op == G_SYMLINK;
	if (first_is_text) {
		if ((fds[0] = caller_dir(pidfd, pid, dirs[1])) < 0) {
			res = fds[0];
			goto out;
		}
		q->cwd = dirs[1] == AT_FDCWD;
	} else if (!no_dir) {
		if ((fds[0] = caller_dir(pidfd, pid, dirs[0])) < 0) {
			res = fds[0];
			goto out;
		}
		q->cwd = (dirs[0] == AT_FDCWD) | (paths[1] && dirs[1] == AT_FDCWD) << 1;
		if (paths[1] && (fds[1] = caller_dir(pidfd, pid, dirs[1])) < 0) {
			res = fds[1];
			goto out;
		}
	}
	/* The pid may have been reused between the notification and the
	 * opens above: the fds are the caller's only if its call is still
	 * pending. */
	if (ioctl(notify, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		res = -ESRCH;
		goto out;
	}
	q->id = req->id;
	if ((res = exchange(guard, q, NULL, 0, fds, fds[1] >= 0 ? 2 : fds[0] >= 0 ? 1 : 0, resp, &opened)) < 0)
		goto out;
	record(log, req, q, resp);
	if (resp->answered)
		goto done;
	res = resp->res;
	if (res >= 0 && q->op == G_OPEN) {
		if (opened < 0) {
			res = -EIO;
			goto out;
		}
		/* Install the file in the caller and answer its call with the
		 * new fd number, in one step. */
		struct seccomp_notif_addfd add = {
			.id = req->id,
			.flags = SECCOMP_ADDFD_FLAG_SEND,
			.srcfd = (uint32_t)opened,
			.newfd_flags = (q->flags & O_CLOEXEC) ? O_CLOEXEC : 0,
		};
		int added = ioctl(notify, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
		int e = errno;
		close(opened);
		if (added >= 0 || e == ENOENT)
			goto done; /* answered, or the caller is gone */
		res = -e;      /* e.g. EMFILE: the call fails with it */
		goto out;
	}
	if (opened >= 0)
		close(opened);
out:
	respond(notify, req, res);
done:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(q);
	free(resp);
}

/* ------------------------------------------------------ unix sockets */

bool guard_socket_syscall(int nr)
{
	return nr == SYS_connect || nr == SYS_sendto || nr == SYS_socket || nr == SYS_socketpair;
}

/* Copy len bytes out of the caller, once. */
static int copy_bytes(pid_t pid, unsigned long long addr, void *out, size_t len)
{
	struct iovec local = { .iov_base = out, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	return len == 0 || process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A TCP connect the supervisor may perform itself, without the guard's
 * round trip: on a non-blocking socket (so the call cannot hold the
 * supervisor up) of the internet families (no path is looked up, and the
 * address cannot reach a unix socket: the socket's family decides, and a
 * copy of the socket is what is connected, whatever the caller's fd
 * number names meanwhile). The supervisor has no Landlock domain, so
 * Landlock's TCP rule is applied here in its stead: only the proxy's
 * port, unless in transparent mode (where Landlock leaves connect alone);
 * AF_UNSPEC (dissolving a connection) always. Returns false when the
 * guard must perform the call; else true with *res the call's result. */
static bool tcp_direct(int sock, const void *addr, socklen_t alen, const struct guard_net *net, int *res)
{
	int dom = 0, type = 0;
	socklen_t l = sizeof(int);
	int fl = fcntl(sock, F_GETFL);
	if (fl < 0 || !(fl & O_NONBLOCK) || getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &dom, &l) < 0 ||
	    (dom != AF_INET && dom != AF_INET6))
		return false;
	l = sizeof(int);
	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		return false;
	/* Only stream sockets (TCP, and MPTCP, which Landlock judges as
	 * TCP): a datagram one goes to the guard. */
	if (type != SOCK_STREAM)
		return false;
	sa_family_t fam = AF_UNSPEC;
	if (alen >= sizeof(fam))
		memcpy(&fam, addr, sizeof(fam));
	if (!net->transparent && fam != AF_UNSPEC) {
		uint16_t port = 0;
		if (fam == AF_INET && alen >= sizeof(struct sockaddr_in))
			port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
		else if (fam == AF_INET6 && alen >= sizeof(struct sockaddr_in6))
			port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
		else
			return false; /* a malformed address: the guard, under Landlock, answers it */
		if (!net->proxy_port || port != net->proxy_port) {
			*res = -EACCES; /* as Landlock refuses it (and on a kernel without
					 * Landlock's TCP rule, ABI < 4, all the same) */
			return true;
		}
	}
	*res = connect(sock, addr, alen) < 0 ? -errno : 0;
	return true;
}

void guard_handle_socket(int notify, int guard, const struct seccomp_notif *req, struct trace_log *log,
			 const struct guard_net *net)
{
	bool named = net->named;
	const __u64 *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	struct guard_req *q = NULL;
	struct guard_resp *resp = NULL;
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int pidfd = -1;
	int fds[2] = { -1, -1 }, res, opened = -1;
	size_t dlen = 0;

	if (req->data.nr == SYS_socket || req->data.nr == SYS_socketpair) {
		/* A datagram unix socket (the filter matched the family and
		 * type, which are in registers). Its sendmsg could name any
		 * socket, and no filter sees that address: refused, unless the
		 * policy names a socket (a datagram one, perhaps), and then
		 * let through with the limit docs/sandbox.md states. Letting it
		 * continue is safe here: the decision reads no memory of the
		 * caller's, only the registers the kernel already judged. */
		struct seccomp_notif_resp r = { .id = req->id };
		if (named)
			r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		else
			r.error = -EACCES;
		if (!named && log) {
			char what[256];
			snprintf(what, sizeof(what), "%s(AF_UNIX, SOCK_DGRAM) = EACCES [socket: a datagram unix socket, "
				 "whose sendmsg no filter can judge; refused while filesystem.sockets is empty]",
				 req->data.nr == SYS_socket ? "socket" : "socketpair");
			trace_record_text(log, what, false);
		}
		(void)ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &r);
		return;
	}
	q = calloc(1, sizeof(*q));
	resp = calloc(1, sizeof(*resp));
	if (!q || !resp || guard < 0) {
		res = -EACCES;
		goto out;
	}
	/* connect(fd, addr, len); sendto(fd, buf, n, flags, addr, len). */
	bool is_connect = req->data.nr == SYS_connect;
	unsigned long long addr = is_connect ? a[1] : a[4];
	unsigned long long alen = is_connect ? a[2] : a[5];
	q->op = is_connect ? G_CONNECT : G_SENDTO;
	if ((int)alen < 0 || alen > sizeof(struct sockaddr_storage)) {
		res = -EINVAL;
		goto out;
	}
	q->mode = (uint32_t)alen;
	if ((res = copy_bytes(pid, addr, q->p1, alen)) < 0)
		goto out;
	if (!is_connect) {
		q->flags = (int)a[3];
		dlen = (size_t)a[2];
		if (dlen > GUARD_MAX_DATA) {
			res = -EMSGSIZE;
			goto out;
		}
		if (dlen && (!(data = malloc(dlen)) || (res = copy_bytes(pid, a[1], data, dlen)) < 0)) {
			res = data ? res : -ENOMEM;
			goto out;
		}
	}
	pidfd = caller_pidfd(pid);
	if (pidfd < 0) {
		res = -ESRCH;
		goto out;
	}
	if ((fds[0] = (int)syscall(SYS_pidfd_getfd, pidfd, (int)a[0], 0)) < 0) {
		res = -EBADF;
		goto out;
	}
	if (is_connect && ioctl(notify, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0 &&
	    tcp_direct(fds[0], q->p1, (socklen_t)alen, net, &res))
		goto out;
	/* A unix pathname: a relative one is looked up from the caller's
	 * directory; one through /proc/self or /dev/fd names the caller's. */
	const struct sockaddr_un *un = (const struct sockaddr_un *)(const void *)q->p1;
	if (alen > offsetof(struct sockaddr_un, sun_path) && un->sun_family == AF_UNIX && un->sun_path[0]) {
		if (un->sun_path[0] != '/' && (fds[1] = caller_dir(pidfd, pid, AT_FDCWD)) < 0) {
			res = fds[1];
			goto out;
		}
		if (strncmp(un->sun_path, "/proc/", 6) == 0 || strncmp(un->sun_path, "/dev/", 5) == 0)
			caller_info(pid, q);
	}
	if (ioctl(notify, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		res = -ESRCH;
		goto out;
	}
	q->id = req->id;
	if ((res = exchange(guard, q, data, dlen, fds, fds[1] >= 0 ? 2 : 1, resp, &opened)) < 0)
		goto out;
	if (opened >= 0)
		close(opened);
	res = resp->res;
	if (resp->glob[0]) {
		char name[64];
		seccomp_syscall_name(req->data.nr, name, sizeof(name));
		trace_record_protected(log, pid, name, resp->where, EACCES, resp->glob);
	}
	if (resp->answered)
		goto done;
out:
	respond(notify, req, res);
done:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(q);
	free(resp);
}
