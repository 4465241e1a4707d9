/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Idmapped binds for a sandbox started as root.
 *
 * Root maps the agent to an unprivileged host uid. A workspace owned by
 * root would then be read-only to the agent. Rather than run the agent as
 * root or chown the user's files, the supervisor clones each policy-named
 * tree and idmaps it (mount_setattr MOUNT_ATTR_IDMAP, Linux 5.12+): the
 * owner's files appear owned by the sandbox's uid, and what the agent
 * creates is stored as the owner. Only the supervisor can do this: the
 * kernel requires privilege over the filesystem's own user namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/cleanup.h"

/* The helper: it only holds its user namespace until the supervisor has
 * written the maps and opened it, and is then killed. It shares the
 * supervisor's memory (CLONE_VM) and touches none of it but its own stack
 * and arguments: system calls only, whose errno would be the
 * supervisor's. */
struct userns_hold {
	int wait, wake; /* the pipe's ends: EOF when the supervisor is gone */
};

static int userns_hold(void *arg)
{
	const struct userns_hold *a = arg;
	char c;
	syscall(SYS_close, a->wake);
	syscall(SYS_read, a->wait, &c, 1);
	return 0;
}

/* A user namespace whose maps are "owner -> host" for uid and gid, held by
 * an fd; the helper process that created it is gone on return. */
static int userns_for(uid_t owner, gid_t gowner, uid_t host, gid_t ghost, struct error *err)
{
	/* A fork would copy the supervisor's page tables and make its every
	 * later write a fault, for a process that makes one system call. */
	enum { STACK = 16 * 1024 };
	static void *stack; /* page-aligned: the helper's arguments sit at its start */
	if (!stack) {
		void *m = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (m == MAP_FAILED)
			return error_sys(err, errno, "mmap");
		stack = m;
	}
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_sys(err, errno, "pipe");
	/* One helper at a time uses the stack: each is killed and reaped
	 * before this returns. */
	struct userns_hold *a = stack;
	*a = (struct userns_hold){ .wait = pipefd[0], .wake = pipefd[1] };
	pid_t pid = clone(userns_hold, (char *)stack + STACK, CLONE_VM | CLONE_NEWUSER | SIGCHLD, a);
	if (pid < 0) {
		int e = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return error_sys(err, e, "clone(CLONE_NEWUSER)");
	}
	close(pipefd[0]);
	/* Both are released on return: the helper is killed and reaped. */
	_cleanup_kill_ pid_t child = pid;
	_cleanup_close_ int wake = pipefd[1];
	(void)child;
	(void)wake;
	char path[64], map[64];
	const char *files[2] = { "uid_map", "gid_map" };
	unsigned in[2] = { owner, gowner }, out[2] = { host, ghost };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, files[i]);
		snprintf(map, sizeof(map), "%u %u 1\n", in[i], out[i]);
		_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return error_sys(err, errno, "cannot write %s", path);
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	int ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return error_sys(err, errno, "cannot open %s", path);
	return ns;
}

int idmap_prepare(struct sandbox_plan *plan, struct error *err)
{
	for (size_t i = 0; i < plan->n_mounts; i++) {
		struct mount_entry *m = &plan->mounts[i];
		struct stat st;
		/* Read-only paths are shown as they are, except the workspace
		 * (made read-only by `read` naming it, plan.c): the sandbox's
		 * uid must still read what it would otherwise write. */
		if (m->kind != MOUNT_BIND || !m->user_path || m->tree_fd >= 0)
			continue;
		if (m->readonly && strcmp(m->dst, plan->workspace) != 0) {
			/* A path the policy lets the agent read may lie under a
			 * directory the sandbox's uid cannot enter (root's 0700
			 * home: `read: [~/.gitconfig]`); the child could not clone
			 * it, so the supervisor does. Not idmapped: the files'
			 * own modes still decide what that uid reads (`read:
			 * [/etc]` does not make /etc/shadow readable). */
			m->tree_fd = (int)syscall(SYS_open_tree, AT_FDCWD, m->src,
						  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
			if (m->tree_fd < 0)
				return error_sys(err, errno, "cannot clone %s", m->src);
			continue;
		}
		if (stat(m->src, &st) < 0)
			return error_sys(err, errno, "cannot stat %s", m->src);
		if (st.st_uid == plan->host_uid)
			continue;
		_cleanup_close_ int ns = userns_for(st.st_uid, st.st_gid, plan->host_uid, plan->host_gid, err);
		if (ns < 0)
			return ns;
		_cleanup_close_ int tree =
			(int)syscall(SYS_open_tree, AT_FDCWD, m->src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (tree < 0)
			return error_sys(err, errno, "cannot clone %s", m->src);
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)ns };
		if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
			return error_sys(err, errno,
					 "cannot idmap %s (owned by uid %u) for the sandbox's uid %u; the filesystem may "
					 "not support idmapped mounts: set sandbox.host_uid to the owner",
					 m->src, st.st_uid, plan->host_uid);
		m->tree_fd = TAKE_FD(tree);
	}
	return 0;
}
