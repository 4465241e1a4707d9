/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/proto.h"

int proto_send(int sock, const void *msg, size_t len, const int *fds, size_t n)
{
	if (n > PROTO_MAX_FDS)
		return -EINVAL;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * PROTO_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		if (!c)
			return -EINVAL;
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	ssize_t sent = sendmsg(sock, &mh, MSG_NOSIGNAL);
	if (sent < 0)
		return -errno;
	return sent == (ssize_t)len ? 0 : -EIO;
}

int proto_send_ready(int sock, const int fds_in[PROTO_MAX_FDS])
{
	char msg[2] = { PROTO_READY, 0 };
	int fds[PROTO_MAX_FDS];
	size_t n = 0;
	for (int i = 0; i < PROTO_MAX_FDS; i++)
		if (fds_in[i] >= 0) {
			msg[1] |= (char)(1 << i);
			fds[n++] = fds_in[i];
		}
	return proto_send(sock, msg, sizeof(msg), fds, n);
}

int proto_recv(int sock, char *buf, size_t len, int fds[PROTO_MAX_FDS])
{
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * PROTO_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)
	};
	for (int i = 0; i < PROTO_MAX_FDS; i++)
		fds[i] = -1;
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	size_t got = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int tmp[PROTO_MAX_FDS * 2];
		if (k > PROTO_MAX_FDS * 2)
			k = PROTO_MAX_FDS * 2;
		memcpy(tmp, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (got < PROTO_MAX_FDS)
				fds[got++] = tmp[i];
			else
				close(tmp[i]); /* more than we asked for: refuse to hold them */
		}
	}
	return (int)n;
}
