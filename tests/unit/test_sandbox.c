/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the sandbox's pure parts (the plan) and of each kernel
 * layer applied alone in a forked child: the layer must refuse what it
 * exists to refuse, and let the neighbouring legitimate call through.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "sandbox/internal.h"
#include "sandbox/landlock_abi.h"
#include "sandbox/proto.h"
#include "sandbox/trace.h"

static char tmpdir[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/airlock-unit.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct policy *default_policy(const char *ws)
{
	struct policy_ctx ctx = { .home = "/nonexistent-home", .cwd = ws };
	struct policy *p = NULL;
	struct error err = { 0 };
	assert_int_equal(policy_default(&ctx, &p, &err), 0);
	return p;
}

/* The planned mount at dst; fails the test (never returns NULL) when
 * there is none. */
static const struct mount_entry *find_mount(const struct sandbox_plan *p, const char *dst)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (strcmp(p->mounts[i].dst, dst) == 0)
			return &p->mounts[i];
	fail_msg("no mount at %s", dst);
	abort();
}

static size_t mount_index(const struct sandbox_plan *p, const char *dst)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (strcmp(p->mounts[i].dst, dst) == 0)
			return i;
	fail_msg("no mount at %s", dst);
	return 0;
}

/* Landlock unions the rights of every rule on a path. */
static uint64_t rule_for(const struct sandbox_plan *p, const char *path)
{
	uint64_t a = 0;
	for (size_t i = 0; i < p->n_rules; i++)
		if (strcmp(p->rules[i].path, path) == 0)
			a |= p->rules[i].access;
	return a;
}

/* The default plan: baseline read-only, workspace read-write under the
 * private /tmp, exec from the workspace and system dirs but not /tmp. */
static void test_plan_default(void **state)
{
	(void)state;
	char ws[PATH_MAX + 8];
	snprintf(ws, sizeof(ws), "%s/ws", tmpdir);
	assert_int_equal(mkdir(ws, 0755), 0);
	struct policy *pol = default_policy(ws);
	struct sandbox_plan plan;
	struct error err = { 0 };
	char *argv[] = { "true", NULL };
	assert_int_equal(plan_build(pol, argv, false, &plan, &err), 0);

	const struct mount_entry *usr = find_mount(&plan, "/usr");
	assert_true(usr->readonly);
	const struct mount_entry *w = find_mount(&plan, ws);
	assert_false(w->readonly);
	assert_true(w->user_path);
	/* /tmp's private tmpfs must be mounted before the workspace under it. */
	assert_true(mount_index(&plan, "/tmp") < mount_index(&plan, ws));

	assert_true(rule_for(&plan, ws) & LL_FS_EXECUTE);
	assert_true(rule_for(&plan, ws) & LL_FS_WRITE_FILE);
	assert_false(rule_for(&plan, "/tmp") & LL_FS_EXECUTE);
	assert_true(rule_for(&plan, "/usr") & LL_FS_EXECUTE);
	assert_false(rule_for(&plan, "/etc") & LL_FS_EXECUTE);
	assert_false(rule_for(&plan, "/usr") & LL_FS_WRITE_FILE);
	/* Mounts an execute rule reaches into keep exec; the rest are
	 * noexec (the loader and mmap(PROT_EXEC) pass Landlock by). */
	assert_true(usr->exec);
	assert_true(w->exec);
	assert_false(find_mount(&plan, "/etc")->exec);
	assert_false(find_mount(&plan, "/tmp")->exec);

	/* The environment is the safe list plus what airlock sets. */
	bool path = false, marker = false;
	for (char **e = plan.envp; *e; e++) {
		path |= strncmp(*e, "PATH=", 5) == 0;
		marker |= strcmp(*e, "AIRLOCK_SANDBOX=process") == 0;
		assert_true(strncmp(*e, "AIRLOCK_UNIT_CANARY", 19) != 0);
	}
	assert_true(path);
	assert_true(marker);
	assert_string_equal(plan.cwd, ws);
	plan_free(&plan);
	policy_free(pol);
}

/* process.exec narrows the exec mounts with the rules: the workspace is
 * noexec once no rule reaches into it, /usr stays exec for the one
 * program listed there, a read path holding a listed tool is exec, and a
 * tmpfs above a listed path (home above the workspace) is not. */
static void test_plan_exec_mounts(void **state)
{
	(void)state;
	char ws[PATH_MAX + 8], tools[PATH_MAX + 16], data[PATH_MAX + 16], pfile[PATH_MAX + 16];
	snprintf(ws, sizeof(ws), "%s/ws-exec", tmpdir);
	snprintf(tools, sizeof(tools), "%s/tools", tmpdir);
	snprintf(data, sizeof(data), "%s/data", tmpdir);
	snprintf(pfile, sizeof(pfile), "%s/p3.yaml", tmpdir);
	assert_int_equal(mkdir(ws, 0755), 0);
	assert_int_equal(mkdir(tools, 0755), 0);
	assert_int_equal(mkdir(data, 0755), 0);
	FILE *f = fopen(pfile, "w");
	assert_non_null(f);
	fprintf(f,
		"version: 1\nsandbox:\n  workspace: %s\nfilesystem:\n  read: [%s, %s]\n"
		"process:\n  exec: [/usr/bin/env, %s/t]\n",
		ws, tools, data, tools);
	fclose(f);
	struct policy_ctx ctx = { .home = "/nonexistent-home", .cwd = tmpdir };
	struct policy *pol = NULL;
	struct error err = { 0 };
	assert_int_equal(policy_load_file(pfile, &ctx, &pol, &err), 0);
	struct sandbox_plan plan;
	char *argv[] = { "true", NULL };
	assert_int_equal(plan_build(pol, argv, false, &plan, &err), 0);
	assert_true(find_mount(&plan, "/usr")->exec);
	assert_true(find_mount(&plan, tools)->exec);
	assert_false(find_mount(&plan, data)->exec);
	assert_false(find_mount(&plan, ws)->exec);
	assert_false(find_mount(&plan, "/tmp")->exec);
	assert_false(find_mount(&plan, "/etc")->exec);
	/* A mount added later for a rule added later (the MCP gateway's
	 * binary) is exec; one without a rule is not. */
	assert_int_equal(plan_add_mount(&plan, MOUNT_BIND, "/usr/bin/env", "/run/x/bin", true, false), 0);
	assert_int_equal(plan_add_mount(&plan, MOUNT_BIND, "/usr/bin/env", "/run/x/sock", false, false), 0);
	assert_false(find_mount(&plan, "/run/x/bin")->exec);
	assert_int_equal(plan_add_rule(&plan, "/run/x/bin", LL_FS_READ_FILE | LL_FS_EXECUTE), 0);
	assert_true(find_mount(&plan, "/run/x/bin")->exec);
	assert_false(find_mount(&plan, "/run/x/sock")->exec);
	plan_free(&plan);
	policy_free(pol);
}

/* Denied paths under a visible tree are covered; a read-only path under
 * the workspace lands on top of it. */
static void test_plan_deny_and_nesting(void **state)
{
	(void)state;
	char ws[PATH_MAX + 8], sub[PATH_MAX + 16], secret[PATH_MAX + 16], pfile[PATH_MAX + 16];
	snprintf(ws, sizeof(ws), "%s/ws2", tmpdir);
	snprintf(sub, sizeof(sub), "%s/ro", ws);
	snprintf(secret, sizeof(secret), "%s/.env", ws);
	snprintf(pfile, sizeof(pfile), "%s/p.yaml", tmpdir);
	assert_int_equal(mkdir(ws, 0755), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	FILE *f = fopen(secret, "w");
	assert_non_null(f);
	fclose(f);
	f = fopen(pfile, "w");
	assert_non_null(f);
	fprintf(f, "version: 1\nsandbox:\n  workspace: %s\nfilesystem:\n  read: [%s]\n  deny: [%s]\n", ws, sub,
		secret);
	fclose(f);
	struct policy_ctx ctx = { .home = "/nonexistent-home", .cwd = tmpdir };
	struct policy *pol = NULL;
	struct error err = { 0 };
	assert_int_equal(policy_load_file(pfile, &ctx, &pol, &err), 0);
	struct sandbox_plan plan;
	char *argv[] = { "true", NULL };
	assert_int_equal(plan_build(pol, argv, false, &plan, &err), 0);
	assert_true(mount_index(&plan, ws) < mount_index(&plan, sub));
	assert_true(find_mount(&plan, sub)->readonly);
	const struct mount_entry *hide = find_mount(&plan, secret);
	assert_int_equal(hide->kind, MOUNT_HIDE_FILE);
	plan_free(&plan);
	policy_free(pol);
}

/* filesystem.sockets: each named socket is bound alone at its own path,
 * on top of a directory that shows it, and handed to the guard; a path
 * that is not a socket is refused naming the entry. */
static void test_plan_sockets(void **state)
{
	(void)state;
	char ws[PATH_MAX + 8], run[PATH_MAX + 16], sock[PATH_MAX + 32], file[PATH_MAX + 32], pfile[PATH_MAX + 16];
	snprintf(ws, sizeof(ws), "%s/ws3", tmpdir);
	snprintf(run, sizeof(run), "%s/run", tmpdir);
	snprintf(sock, sizeof(sock), "%s/agent.sock", run);
	snprintf(file, sizeof(file), "%s/not-a-socket", run);
	snprintf(pfile, sizeof(pfile), "%s/s.yaml", tmpdir);
	assert_int_equal(mkdir(ws, 0755), 0);
	assert_int_equal(mkdir(run, 0755), 0);
	int sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	assert_true(strlen(sock) < sizeof(sun.sun_path));
	strcpy(sun.sun_path, sock);
	assert_int_equal(bind(sfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	struct policy_ctx ctx = { .home = "/nonexistent-home", .cwd = tmpdir };
	struct error err = { 0 };
	char *argv[] = { "true", NULL };

	f = fopen(pfile, "w");
	assert_non_null(f);
	fprintf(f, "version: 1\nsandbox:\n  workspace: %s\nfilesystem:\n  read: [%s]\n  sockets: [%s]\n", ws, run,
		sock);
	fclose(f);
	struct policy *pol = NULL;
	assert_int_equal(policy_load_file(pfile, &ctx, &pol, &err), 0);
	struct sandbox_plan plan;
	assert_int_equal(plan_build(pol, argv, false, &plan, &err), 0);
	assert_true(plan.sockguard);
	assert_int_equal(plan.n_sockets, 1);
	assert_string_equal(plan.sockets[0], sock);
	const struct mount_entry *m = find_mount(&plan, sock);
	assert_int_equal(m->kind, MOUNT_BIND);
	assert_false(m->is_dir);
	assert_string_equal(m->src, sock);
	assert_true(mount_index(&plan, run) < mount_index(&plan, sock));
	plan_free(&plan);
	policy_free(pol);

	f = fopen(pfile, "w");
	assert_non_null(f);
	fprintf(f, "version: 1\nsandbox:\n  workspace: %s\nfilesystem:\n  sockets:\n    - %s\n", ws, file);
	fclose(f);
	pol = NULL;
	assert_int_equal(policy_load_file(pfile, &ctx, &pol, &err), 0);
	assert_true(plan_build(pol, argv, false, &plan, &err) < 0);
	char want[PATH_MAX * 2];
	snprintf(want, sizeof(want), "%s:6:7: filesystem.sockets[0]: %s is not a unix socket", pfile, file);
	assert_string_equal(err.msg, want);
	plan_free(&plan);
	policy_free(pol);
	close(sfd);
}

static void test_plan_missing_workspace(void **state)
{
	(void)state;
	struct policy *pol = default_policy("/nonexistent/airlock/ws");
	struct sandbox_plan plan;
	struct error err = { 0 };
	char *argv[] = { "true", NULL };
	assert_true(plan_build(pol, argv, false, &plan, &err) < 0);
	assert_non_null(strstr(err.msg, "sandbox.workspace"));
	plan_free(&plan);
	policy_free(pol);
}

/* Run fn in a child; return its exit status. */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int seccomp_child(void)
{
	struct sandbox_plan plan = { .trace = false };
	struct error err = { 0 };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_apply(&plan, NULL, &err) < 0)
		return 10;
	/* Attacks refused ... */
	if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
		return 11;
	if (syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) == 0 || errno != EPERM)
		return 12;
	if (syscall(SYS_personality, 0x0040000 /* ADDR_NO_RANDOMIZE */) != -1 || errno != EPERM)
		return 13;
	if (syscall(SYS_personality, 0x0000003) != -1 || errno != EPERM)
		return 14;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 15;
	char c = 'x';
	if (ioctl(0, TIOCSTI, &c) == 0 || errno != EPERM)
		return 16;
	if (syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0) != -1 || errno != EPERM)
		return 17;
	/* ... and their neighbours allowed. */
	if (syscall(SYS_personality, 0xffffffffUL) < 0)
		return 20;
	if (syscall(SYS_personality, 0UL) < 0)
		return 21;
	pid_t p = fork();
	if (p < 0)
		return 22;
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	int n;
	if (ioctl(0, FIONREAD, &n) < 0 && errno == EPERM)
		return 23;
	return 0;
}

static void test_seccomp_filter(void **state)
{
	(void)state;
	assert_int_equal(in_child(seccomp_child), 0);
}

static char ll_allowed[PATH_MAX + 16], ll_denied[PATH_MAX + 16];

static int landlock_child(void)
{
	struct ll_rule rules[] = { { .path = ll_allowed, .access = LL_RW } };
	struct sandbox_plan plan = { .rules = rules, .n_rules = 1 };
	struct error err = { 0 };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || landlock_apply(&plan, &err) < 0)
		return 10;
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/f", ll_denied);
	if (open(p, O_RDONLY | O_CLOEXEC) >= 0 || errno != EACCES)
		return 11;
	snprintf(p, sizeof(p), "%s/new", ll_allowed);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 12;
	close(fd);
	/* TCP connect is denied outright (ABI 4+). */
	if (landlock_abi() >= 4) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
		a.sin_addr.s_addr = htonl(0x7f000001);
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 || errno != EACCES)
			return 13;
	}
	return 0;
}

static void test_landlock(void **state)
{
	(void)state;
	if (landlock_abi() < 1)
		skip();
	snprintf(ll_allowed, sizeof(ll_allowed), "%s/ll-ok", tmpdir);
	snprintf(ll_denied, sizeof(ll_denied), "%s/ll-no", tmpdir);
	assert_int_equal(mkdir(ll_allowed, 0755), 0);
	assert_int_equal(mkdir(ll_denied, 0755), 0);
	char f[PATH_MAX + 32];
	snprintf(f, sizeof(f), "%s/f", ll_denied);
	int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(in_child(landlock_child), 0);
}

static void test_proto_fds(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	int a = open("/dev/null", O_RDONLY | O_CLOEXEC), b = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	assert_int_equal(proto_send_ready(sv[0], (int[PROTO_MAX_FDS]){ a, b, -1, -1, -1, -1, -1, -1 }), 0);
	char buf[16];
	int fds[PROTO_MAX_FDS];
	assert_int_equal(proto_recv(sv[1], buf, sizeof(buf), fds), 2);
	assert_int_equal(buf[0], PROTO_READY);
	assert_int_equal(buf[1], PROTO_FD_NOTIFY | PROTO_FD_PTY);
	struct stat s1, s2;
	assert_int_equal(fstat(fds[1], &s1), 0);
	assert_int_equal(fstat(b, &s2), 0);
	assert_int_equal(s1.st_rdev, s2.st_rdev);
	for (int i = 0; i < 2; i++)
		close(fds[i]);
	/* The flags name each fd by its slot, the fds come in slot order. */
	assert_int_equal(proto_send_ready(sv[0], (int[PROTO_MAX_FDS]){ -1, -1, a, -1, b, -1, -1, -1 }), 0);
	assert_int_equal(proto_recv(sv[1], buf, sizeof(buf), fds), 2);
	assert_int_equal(buf[1], PROTO_FD_LISTEN | PROTO_FD_DNS);
	assert_int_equal(fstat(fds[1], &s1), 0);
	assert_int_equal(s1.st_rdev, s2.st_rdev);
	assert_int_equal(fds[2], -1);
	close(fds[0]);
	close(fds[1]);
	/* The guard's socket (filesystem.protect), then the overlay's mount
	 * (review and hold mode). */
	assert_int_equal(proto_send_ready(sv[0], (int[PROTO_MAX_FDS]){ a, -1, -1, -1, -1, b, -1, -1 }), 0);
	assert_int_equal(proto_recv(sv[1], buf, sizeof(buf), fds), 2);
	assert_int_equal(buf[1], PROTO_FD_NOTIFY | PROTO_FD_GUARD);
	assert_int_equal(fstat(fds[1], &s1), 0);
	assert_int_equal(s1.st_rdev, s2.st_rdev);
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(proto_send_ready(sv[0], (int[PROTO_MAX_FDS]){ -1, -1, -1, -1, -1, a, b, -1 }), 0);
	assert_int_equal(proto_recv(sv[1], buf, sizeof(buf), fds), 2);
	assert_int_equal(buf[1], PROTO_FD_GUARD | PROTO_FD_LAYER);
	assert_int_equal(fstat(fds[1], &s1), 0);
	assert_int_equal(s1.st_rdev, s2.st_rdev);
	assert_int_equal(fds[2], -1);
	close(fds[0]);
	close(fds[1]);
	/* The sandbox's root (SECCOMP_TRACE_WRITES), the last slot: its flag
	 * is the byte's top bit. */
	assert_int_equal(proto_send_ready(sv[0], (int[PROTO_MAX_FDS]){ a, -1, -1, -1, -1, -1, -1, b }), 0);
	assert_int_equal(proto_recv(sv[1], buf, sizeof(buf), fds), 2);
	assert_int_equal(buf[1] & 0xff, PROTO_FD_NOTIFY | PROTO_FD_ROOT);
	assert_true(buf[1] & PROTO_FD_ROOT);
	assert_int_equal(fstat(fds[1], &s1), 0);
	assert_int_equal(s1.st_rdev, s2.st_rdev);
	assert_int_equal(fds[2], -1);
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(proto_send_ready(sv[0], (int[PROTO_MAX_FDS]){ -1, -1, -1, -1, -1, -1, -1, -1 }), 0);
	assert_int_equal(proto_recv(sv[1], buf, sizeof(buf), fds), 2);
	assert_int_equal(buf[1], 0);
	assert_int_equal(fds[0], -1);
	close(a);
	close(b);
	close(sv[0]);
	close(sv[1]);
}

static void test_trace_log_bounded(void **state)
{
	(void)state;
	struct trace_log *t = trace_new();
	assert_non_null(t);
	for (int i = 0; i < 1000; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/secret/%d", i % 300);
		trace_record_file(t, getpid(), "openat", path, EACCES, false, false);
	}
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	trace_report(t, f);
	fclose(f);
	assert_non_null(strstr(out, "airlock: denied: openat(\"/secret/0\") = EACCES"));
	assert_non_null(strstr(out, "(4 times)"));
	assert_non_null(strstr(out, "further denials not listed"));
	free(out);
	trace_free(t);
}

/* ENOENTs the program's own work explains are not denials: a name made
 * in its scratch home or /tmp, a tool cache, /proc and /sys. A read of a
 * host file the private home hides is, and so is a name made where the
 * sandbox hides the directory outside its scratch. */
static void test_trace_enoent_only_what_was_hidden(void **state)
{
	(void)state;
	struct trace_log *t = trace_new();
	assert_non_null(t);
	trace_set_scratch_home(t, "/home/u");
	pid_t me = getpid();
	trace_record_file(t, me, "mkdir", "/home/u/.npm/_cacache/index-v5/ab/cd", ENOENT, true, true);
	trace_record_file(t, me, "openat", "/home/u/.config/tool/new.json", ENOENT, false, true);
	trace_record_file(t, me, "openat", "/tmp/build-1/x/y.o", ENOENT, true, true);
	trace_record_file(t, me, "openat", "/home/u/.cache/pip/http/ab", ENOENT, false, false);
	trace_record_file(t, me, "openat", "/home/u/.cargo/registry/index/x", ENOENT, false, false);
	trace_record_file(t, me, "openat", "/sys/fs/cgroup/memory.max", ENOENT, false, false);
	trace_record_file(t, me, "openat", "/sys/devices/system/cpu/online", ENOENT, false, false);
	trace_record_file(t, me, "openat", "/proc/sys/kernel/osrelease", ENOENT, false, false);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	trace_report(t, f);
	fclose(f);
	assert_string_equal(out, "airlock: no operation was denied\n");
	free(out);

	/* What the program asked of the host. */
	trace_record_file(t, me, "openat", "/home/u/.gitconfig", ENOENT, false, false);
	trace_record_file(t, me, "openat", "/home/u/.npmrc", ENOENT, false, false);
	trace_record_file(t, me, "mkdir", "/srv/data/new", ENOENT, true, true);
	trace_record_file(t, me, "openat", "/home/u/.cachex/y", ENOENT, false, false);
	/* airlock's own log, in the scratch home's state directory */
	trace_watch(t, "/home/u/.local/state/airlock/audit");
	trace_record_file(t, me, "openat", "/home/u/.local/state/airlock/audit/forged.jsonl", ENOENT, true, true);
	f = open_memstream(&out, &len);
	trace_report(t, f);
	fclose(f);
	assert_non_null(strstr(out, "openat(\"/home/u/.gitconfig\") = ENOENT [hidden: exists"));
	assert_non_null(strstr(out, "openat(\"/home/u/.npmrc\") = ENOENT [hidden: exists"));
	assert_non_null(strstr(out, "mkdir(\"/srv/data/new\") = ENOENT [hidden: its directory"));
	assert_non_null(strstr(out, "/home/u/.cachex/y"));
	assert_non_null(strstr(out, "audit/forged.jsonl"));
	free(out);
	trace_free(t);
}

/* The JVM's trust store: a JKS the JDK's own digest accepts (the digest
 * below is Python's hashlib over the same bytes), with a block that does
 * not decode left out and a bundle without certificates refused. */
static void test_jks_from_pem(void **state)
{
	(void)state;
	static const char pem[] = "junk before\n-----BEGIN CERTIFICATE-----\nAA\nEC\n-----END CERTIFICATE-----\n"
				  "-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n"
				  "-----BEGIN CERTIFICATE-----\r\naGVsbG8s\r\nIGNlcnQ=\r\n-----END CERTIFICATE-----\r\n";
	static const uint8_t digest[20] = { 0xde, 0x6a, 0x3e, 0xde, 0x2c, 0x7d, 0x71, 0x95, 0x39, 0x36,
					    0x58, 0x9c, 0xba, 0x12, 0xa8, 0x72, 0x75, 0x69, 0xa4, 0x9f };
	struct buf b = { 0 };
	assert_int_equal(jks_from_pem(pem, &b), 0);
	assert_int_equal(b.len, 94 + 20);
	const uint8_t *u = (const uint8_t *)b.data;
	assert_memory_equal(u, "\xfe\xed\xfe\xed\0\0\0\x02\0\0\0\x02", 12);
	assert_memory_equal(u + 94, digest, 20);
	buf_free(&b);
	assert_int_equal(jks_from_pem("no certificate here\n", &b), -EINVAL);
	assert_int_equal(b.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_default),
		cmocka_unit_test(test_plan_deny_and_nesting),
		cmocka_unit_test(test_plan_exec_mounts),
		cmocka_unit_test(test_plan_sockets),
		cmocka_unit_test(test_plan_missing_workspace),
		cmocka_unit_test(test_seccomp_filter),
		cmocka_unit_test(test_landlock),
		cmocka_unit_test(test_proto_fds),
		cmocka_unit_test(test_trace_log_bounded),
		cmocka_unit_test(test_jks_from_pem),
		cmocka_unit_test(test_trace_enoent_only_what_was_hidden),
	};
	return cmocka_run_group_tests_name("sandbox", tests, setup, teardown);
}
