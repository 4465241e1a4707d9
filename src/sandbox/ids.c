/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing the child's uid and gid maps, from the supervisor.
 *
 * One id in, one id out, in both cases. Unprivileged, the kernel only lets
 * us map our own ids and requires setgroups to be denied first. Started as
 * root we could map anything, and deliberately map the sandbox to an
 * unprivileged host id: a kernel escape from the sandbox then lands as
 * that id, not as root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/cleanup.h"

static int write_proc(pid_t pid, const char *file, const char *text, struct error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, errno, "cannot open %s", path);
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		return error_sys(err, errno, "cannot write %s (\"%.*s\")", path, (int)strcspn(text, "\n"), text);
	return 0;
}

int ids_write_maps(pid_t child, const struct sandbox_plan *plan, struct error *err)
{
	char map[64];
	int r;
	/* Unprivileged: required before gid_map. Privileged: the child calls
	 * setgroups(0, NULL) itself to shed root's supplementary groups, so
	 * setgroups stays allowed there. */
	if (!plan->privileged && (r = write_proc(child, "setgroups", "deny", err)) < 0)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", plan->inner_uid, plan->host_uid);
	if ((r = write_proc(child, "uid_map", map, err)) < 0)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", plan->inner_gid, plan->host_gid);
	return write_proc(child, "gid_map", map, err);
}
