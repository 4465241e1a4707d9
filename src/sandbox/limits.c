/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Resource limits: rlimits in the child (only ever lowered: a hard limit
 * we cannot raise is kept as it is), and a cgroup when one is writable.
 *
 * cgroup v2 is used when a cgroup2 hierarchy with the needed controllers is
 * writable by us (the delegated subtree of a user session, or root). On a
 * v1 or hybrid host started as root, the v1 memory and pids controllers
 * are used instead. Neither is fatal when absent: rlimits still apply and
 * `airlock doctor` says which is in force.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/cleanup.h"

static int write_str(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, val, strlen(val));
	int e = errno;
	close(fd);
	return n < 0 ? -e : 0;
}

static bool read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Our own cgroup v2 path from /proc/self/cgroup ("0::/path"). */
static bool own_v2_path(char *buf, size_t len)
{
	char content[4096];
	if (!read_str("/proc/self/cgroup", content, sizeof(content)))
		return false;
	for (char *line = strtok(content, "\n"); line; line = strtok(NULL, "\n"))
		if (strncmp(line, "0::", 3) == 0) {
			snprintf(buf, len, "%s", line + 3);
			return true;
		}
	return false;
}

static const char *v2_mount(void)
{
	static const char *const cands[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < ARRAY_SIZE(cands); i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s/cgroup.controllers", cands[i]);
		if (access(p, R_OK) == 0)
			return cands[i];
	}
	return NULL;
}

static bool has_word(const char *list, const char *w)
{
	size_t wl = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += wl)
		if ((p == list || p[-1] == ' ') && (p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n'))
			return true;
	return false;
}

static int try_v2(const struct policy_limits *l, struct cgroup_handle *cg)
{
	const char *mnt = v2_mount();
	char self[PATH_MAX], parent[PATH_MAX], ctl[512];
	if (!mnt || !own_v2_path(self, sizeof(self)))
		return -ENOENT;
	/* We cannot put the sandbox under our own cgroup if we live in it
	 * (no internal processes), so use our cgroup's parent... only when we
	 * may write there; in a delegated user session our own cgroup is the
	 * delegation boundary, so try it as a parent first. */
	snprintf(parent, sizeof(parent), "%s%s", mnt, strcmp(self, "/") == 0 ? "" : self);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
	if (!read_str(path, ctl, sizeof(ctl)))
		return -ENOENT;
	bool need_mem = l->memory_bytes != 0, need_pids = l->pids != 0;
	if ((need_mem && !has_word(ctl, "memory")) || (need_pids && !has_word(ctl, "pids"))) {
		char avail[512];
		snprintf(path, sizeof(path), "%s/cgroup.controllers", parent);
		if (!read_str(path, avail, sizeof(avail)))
			return -ENOENT;
		if ((need_mem && !has_word(avail, "memory")) || (need_pids && !has_word(avail, "pids")))
			return -EOPNOTSUPP;
		if (need_mem && write_str(parent, "cgroup.subtree_control", "+memory") < 0)
			return -EACCES;
		if (need_pids && write_str(parent, "cgroup.subtree_control", "+pids") < 0)
			return -EACCES;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/airlock-%d", parent, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return -errno;
	cg->v2 = true;
	cg->paths[cg->n++] = strdup(dir);
	char val[32];
	if (need_mem) {
		snprintf(val, sizeof(val), "%" PRIu64, l->memory_bytes);
		if (write_str(dir, "memory.max", val) < 0)
			return -EACCES;
		(void)write_str(dir, "memory.swap.max", "0"); /* absent without swap accounting */
		cg->memory_dir = strdup(dir);
	}
	if (need_pids) {
		snprintf(val, sizeof(val), "%" PRIu64, l->pids);
		if (write_str(dir, "pids.max", val) < 0)
			return -EACCES;
		cg->pids_dir = strdup(dir);
	}
	return 0;
}

static int try_v1(const struct policy_limits *l, struct cgroup_handle *cg)
{
	char val[32], dir[PATH_MAX];
	if (l->memory_bytes) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory/airlock-%d", (int)getpid());
		if (mkdir(dir, 0755) < 0)
			return -errno;
		cg->paths[cg->n++] = strdup(dir);
		snprintf(val, sizeof(val), "%" PRIu64, l->memory_bytes);
		if (write_str(dir, "memory.limit_in_bytes", val) < 0)
			return -EACCES;
		/* Swap counts too where accounting exists; ignore if not. */
		(void)write_str(dir, "memory.memsw.limit_in_bytes", val);
		cg->memory_dir = strdup(dir);
	}
	if (l->pids) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/pids/airlock-%d", (int)getpid());
		if (mkdir(dir, 0755) < 0)
			return -errno;
		cg->paths[cg->n++] = strdup(dir);
		snprintf(val, sizeof(val), "%" PRIu64, l->pids);
		if (write_str(dir, "pids.max", val) < 0)
			return -EACCES;
		cg->pids_dir = strdup(dir);
	}
	return 0;
}

int limits_cgroup_create(const struct policy_limits *l, struct cgroup_handle *cg, struct error *err)
{
	memset(cg, 0, sizeof(*cg));
	if (!l->memory_bytes && !l->pids)
		return 0;
	if (try_v2(l, cg) == 0)
		return 1;
	limits_cgroup_destroy(cg);
	if (geteuid() == 0 && access("/sys/fs/cgroup/memory/memory.limit_in_bytes", W_OK) == 0 &&
	    try_v1(l, cg) == 0)
		return 1;
	limits_cgroup_destroy(cg);
	(void)err;
	return 0; /* rlimits only */
}

int limits_cgroup_attach(const struct cgroup_handle *cg, pid_t pid, struct error *err)
{
	char val[32];
	snprintf(val, sizeof(val), "%d", (int)pid);
	for (size_t i = 0; i < cg->n; i++) {
		int r = write_str(cg->paths[i], "cgroup.procs", val);
		if (r < 0)
			return error_sys(err, -r, "cannot move the sandbox into %s", cg->paths[i]);
	}
	return 0;
}

bool limits_cgroup_oom(const struct cgroup_handle *cg)
{
	if (!cg->memory_dir)
		return false;
	char path[PATH_MAX], buf[1024];
	if (cg->v2) {
		snprintf(path, sizeof(path), "%s/memory.events", cg->memory_dir);
		if (!read_str(path, buf, sizeof(buf)))
			return false;
		const char *p = strstr(buf, "oom_kill ");
		return p && strtoull(p + 9, NULL, 10) > 0;
	}
	snprintf(path, sizeof(path), "%s/memory.oom_control", cg->memory_dir);
	if (read_str(path, buf, sizeof(buf))) {
		const char *p = strstr(buf, "oom_kill ");
		if (p && strtoull(p + 9, NULL, 10) > 0)
			return true;
	}
	snprintf(path, sizeof(path), "%s/memory.failcnt", cg->memory_dir);
	return read_str(path, buf, sizeof(buf)) && strtoull(buf, NULL, 10) > 0;
}

bool limits_cgroup_pids_hit(const struct cgroup_handle *cg)
{
	if (!cg->pids_dir)
		return false;
	char path[PATH_MAX], buf[256];
	snprintf(path, sizeof(path), "%s/pids.events", cg->pids_dir);
	if (!read_str(path, buf, sizeof(buf)))
		return false;
	const char *p = strstr(buf, "max ");
	return p && strtoull(p + 4, NULL, 10) > 0;
}

size_t limits_unreported(const struct policy_limits *l, const struct cgroup_handle *cg, char *out, size_t cap)
{
	/* The kernel says nothing when a process reaches an rlimit: the
	 * call fails (EMFILE, ENOMEM, EAGAIN) and no event, signal or
	 * counter tells the supervisor (a cgroup's memory.events and
	 * pids.events do, and are read instead where there is one). */
	size_t n = 0;
	out[0] = '\0';
	if (l->open_files)
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0,
				      "%sopen files %llu per process (sandbox.limits.open_files: EMFILE, \"Too many open "
				      "files\")",
				      n ? "; " : "", (unsigned long long)l->open_files);
	if (l->memory_bytes && !cg->memory_dir && n < cap)
		n += (size_t)snprintf(out + n, cap - n,
				      "%smemory %llu bytes per process (sandbox.limits.memory, as RLIMIT_DATA: ENOMEM, "
				      "\"Cannot allocate memory\")",
				      n ? "; " : "", (unsigned long long)l->memory_bytes);
	if (l->pids && !cg->pids_dir && n < cap)
		n += (size_t)snprintf(out + n, cap - n,
				      "%sprocesses %llu (sandbox.limits.pids, as RLIMIT_NPROC: fork fails with EAGAIN, "
				      "\"Resource temporarily unavailable\")",
				      n ? "; " : "", (unsigned long long)l->pids);
	return n;
}

void limits_cgroup_destroy(struct cgroup_handle *cg)
{
	for (size_t i = 0; i < cg->n; i++) {
		if (cg->v2)
			(void)write_str(cg->paths[i], "cgroup.kill", "1");
		/* Processes may take a moment to leave after the kill. */
		for (int tries = 0; tries < 100 && rmdir(cg->paths[i]) < 0 && errno == EBUSY; tries++)
			usleep(1000);
	}
	limits_cgroup_forget(cg);
}

void limits_cgroup_forget(struct cgroup_handle *cg)
{
	for (size_t i = 0; i < cg->n; i++) {
		free(cg->paths[i]);
		cg->paths[i] = NULL;
	}
	cg->n = 0;
	free(cg->memory_dir);
	cg->memory_dir = NULL;
	free(cg->pids_dir);
	cg->pids_dir = NULL;
}

int limits_apply_rlimits(const struct sandbox_plan *plan, struct error *err)
{
	for (size_t i = 0; i < plan->n_rlimits; i++) {
		struct rlimit cur;
		int res = plan->rlimits[i].resource;
		if (getrlimit(res, &cur) < 0)
			return error_sys(err, errno, "getrlimit %d", res);
		rlim_t v = plan->rlimits[i].value;
		/* Lower only: never ask for more than the hard limit we hold. */
		if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
			v = cur.rlim_max;
		struct rlimit nl = { v, v };
		if (setrlimit(res, &nl) < 0)
			return error_sys(err, errno, "setrlimit %d to %llu", res, (unsigned long long)v);
	}
	return 0;
}

int limits_wall_timer(uint64_t seconds, struct error *err)
{
	/* WARNING: a limit that silently does not arm is a run with no
	 * limit, which the policy forbids: every failure here ends the run
	 * before it starts. */
	/* time_t is signed: a count beyond its range would arm a timer in
	 * the past, which fires at once, or none. */
	if (seconds == 0 || seconds > (uint64_t)INT64_MAX)
		return error_set(err, EINVAL, "sandbox.limits.wall: %" PRIu64 " seconds cannot be armed", seconds);
	_cleanup_close_ int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return error_sys(err, errno,
				 "sandbox.limits.wall: cannot make the wall-clock timer (timerfd_create); the run was not "
				 "started");
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)seconds } };
	if (timerfd_settime(fd, 0, &its, NULL) < 0)
		return error_sys(err, errno,
				 "sandbox.limits.wall: cannot arm the wall-clock timer (timerfd_settime); the run was not "
				 "started");
	return TAKE_FD(fd);
}
