/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Landlock: the filesystem, TCP and IPC-scope layer. Applied after
 * pivot_root, so every rule names a path in the sandbox's own root.
 *
 * We define the ABI ourselves rather than rely on <linux/landlock.h>: the
 * build host's headers may predate the kernel we run on, and the ABI is
 * stable and versioned.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/landlock_abi.h"
#include "util/cleanup.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

#define LL_RULE_NET_PORT 2

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_RULE_PATH_BENEATH 1
#define LL_CREATE_RULESET_VERSION (1U << 0)

int landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}

uint64_t landlock_fs_mask(int abi)
{
	uint64_t m = 0;
	if (abi >= 1)
		m |= LL_FS_V1;
	if (abi >= 2)
		m |= LL_FS_REFER;
	if (abi >= 3)
		m |= LL_FS_TRUNCATE;
	if (abi >= 5)
		m |= LL_FS_IOCTL_DEV;
	return m;
}

/* Grant access beneath path (a file: its file rights alone). A path that
 * does not exist grants nothing. */
static int add_path_rule(int ruleset, const char *path, uint64_t access, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* nothing there to grant */
		return error_sys(err, errno, "landlock: cannot open %s", path);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_sys(err, errno, "landlock: fstat %s", path);
	/* Directory-only rights are invalid on a file rule. */
	if (!S_ISDIR(st.st_mode))
		access &= LL_FS_FILE_RIGHTS;
	if (!access)
		return 0;
	struct ll_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return error_sys(err, errno, "landlock_add_rule %s", path);
	return 0;
}

/* A ruleset that handles every file right this kernel knows (*fs) and,
 * where it can, the TCP rights in net and the scopes: abstract unix
 * sockets and signals cannot cross the domain (not to the supervisor,
 * the same uid unprivileged; not to a desktop's or a container runtime's
 * abstract sockets). Without Landlock: ENOSYS, and airlock refuses to
 * run. Returns the ruleset's fd (*abi_out: the kernel's Landlock ABI),
 * or negative errno. */
static int ruleset_create(uint64_t net, int *abi_out, uint64_t *fs, struct error *err)
{
	int abi = landlock_abi();
	if (abi < 1)
		return error_set(err, ENOSYS,
				 "Landlock is not available (kernel 5.13+ with landlock in the lsm= list is required); "
				 "airlock refuses to run without it");
	struct ll_ruleset_attr attr = { .handled_access_fs = landlock_fs_mask(abi) };
	size_t attr_size = sizeof(uint64_t); /* ABI 1-3 know only the fs field */
	if (abi >= 4) {
		attr.handled_access_net = net;
		attr_size = 2 * sizeof(uint64_t);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0)
		return error_sys(err, errno, "landlock_create_ruleset (ABI %d)", abi);
	*abi_out = abi;
	*fs = attr.handled_access_fs;
	return ruleset;
}

int landlock_apply(const struct sandbox_plan *plan, struct error *err)
{
	/* Every TCP bind and connect is denied, but a connect to the
	 * egress proxy's port. The sandbox's network namespace holds only
	 * loopback anyway; this also closes loopback listeners inside it to
	 * a compromised agent. Transparent mode: a connect to any address
	 * and port is redirected to the proxy after this check, so connect
	 * must pass here; the redirect and the drop of everything else
	 * (netfilter.c) are what confine it. Bind stays denied. */
	int abi;
	uint64_t fs;
	_cleanup_close_ int ruleset = ruleset_create(
		plan->transparent ? LL_NET_BIND_TCP : LL_NET_BIND_TCP | LL_NET_CONNECT_TCP, &abi, &fs, err);
	if (ruleset < 0)
		return ruleset;

	for (size_t i = 0; i < plan->n_rules; i++) {
		int r = add_path_rule(ruleset, plan->rules[i].path, plan->rules[i].access & fs, err);
		if (r < 0)
			return r;
	}

	if (abi >= 4 && plan->proxy_port && !plan->transparent) {
		struct ll_net_port_attr np = { .allowed_access = LL_NET_CONNECT_TCP, .port = plan->proxy_port };
		if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &np, 0) < 0)
			return error_sys(err, errno, "landlock: cannot allow the proxy port %u", plan->proxy_port);
	}

	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		return error_sys(err, errno, "landlock_restrict_self");
	return abi;
}

int landlock_scope_self(void)
{
	if (landlock_abi() < 6)
		return 0;
	/* A layer denies REFER (a rename or link across directories) even
	 * where it handles no file access at all: this one handles it and
	 * grants it from the root down, leaving every file decision to the
	 * outer layer. Without the rule every such call failed with EXDEV
	 * (apt, pip, Python's os.rename), hidden only where the guard made
	 * the call instead. */
	struct ll_ruleset_attr attr = { .handled_access_fs = LL_FS_REFER,
					.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL };
	int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return -errno;
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct ll_path_beneath_attr pb = { .allowed_access = LL_FS_REFER, .parent_fd = root };
	if (root < 0 || syscall(SYS_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
		int e = errno;
		if (root >= 0)
			close(root);
		close(fd);
		return -e;
	}
	close(root);
	int r = (int)syscall(SYS_landlock_restrict_self, fd, 0);
	int e = errno;
	close(fd);
	return r < 0 ? -e : 0;
}

int landlock_confine(const struct landlock_grant *grants, size_t n, struct error *err)
{
	/* Every file right the kernel knows is handled: what no grant names
	 * (execute, any write, creating a device or a link) is refused
	 * everywhere. No TCP bind: no listener for a process that only
	 * connects. */
	int abi;
	uint64_t fs;
	_cleanup_close_ int ruleset = ruleset_create(LL_NET_BIND_TCP, &abi, &fs, err);
	if (ruleset < 0)
		return ruleset;
	for (size_t i = 0; i < n; i++) {
		int r = add_path_rule(ruleset, grants[i].path, grants[i].access & fs, err);
		if (r < 0)
			return r;
	}
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		return error_sys(err, errno, "landlock_restrict_self");
	return abi;
}
