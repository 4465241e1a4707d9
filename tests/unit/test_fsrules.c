/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The evaluator observe mode judges file accesses with: for each path and
 * set of Landlock rights, what enforce mode's root and ruleset would have
 * answered. Every refusal is paired with the allowed neighbour.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "sandbox/fsrules.h"
#include "sandbox/internal.h"
#include "sandbox/landlock_abi.h"

/* ---- a made-up plan and host ---- */

static struct mount_entry mounts[] = {
	{ .kind = MOUNT_BIND, .src = "/usr", .dst = "/usr", .readonly = true, .tree_fd = -1, .exec = true },
	{ .kind = MOUNT_TMPFS, .dst = "/tmp", .tree_fd = -1 },
	{ .kind = MOUNT_TMPFS, .dst = "/home/u", .tree_fd = -1 },
	{ .kind = MOUNT_BIND, .src = "/home/u/ws", .dst = "/home/u/ws", .tree_fd = -1, .exec = true },
	{ .kind = MOUNT_BIND, .src = "/home/u/ws/ro", .dst = "/home/u/ws/ro", .readonly = true, .tree_fd = -1,
	  .exec = true },
	/* exec: the rule on /lnk reaches into it. */
	{ .kind = MOUNT_BIND, .src = "/srv/data", .dst = "/srv/data", .readonly = true, .tree_fd = -1, .exec = true },
	{ .kind = MOUNT_BIND, .src = "/srv/out", .dst = "/srv/out", .tree_fd = -1 },
	/* Mounted before the deny above it: covered by the deny's mount. */
	{ .kind = MOUNT_BIND, .src = "/home/u/ws/secrets/granted", .dst = "/home/u/ws/secrets/granted", .tree_fd = -1 },
	{ .kind = MOUNT_SYMLINK, .src = "usr/bin", .dst = "/bin", .tree_fd = -1 },
	{ .kind = MOUNT_HIDE_FILE, .dst = "/home/u/ws/.env", .tree_fd = -1 },
	{ .kind = MOUNT_HIDE_DIR, .dst = "/home/u/ws/secrets", .tree_fd = -1 },
	/* A protected path keeps the exec of what it covers. */
	{ .kind = MOUNT_PROTECT, .dst = "/home/u/ws/.venv/bin", .readonly = true, .tree_fd = -1 },
	/* A write path an execute rule reaches, yet not mounted exec: the
	 * mount decides first, as in the kernel. */
	{ .kind = MOUNT_BIND, .src = "/srv/odd", .dst = "/srv/odd", .tree_fd = -1 },
};

static struct ll_rule rules[] = {
	{ "/", LL_FS_READ_DIR },
	{ "/usr", LL_READ | LL_FS_EXECUTE },
	{ "/tmp", LL_RW },
	{ "/home/u", LL_RW },
	{ "/home/u/ws", LL_RW | LL_FS_EXECUTE },
	{ "/home/u/ws/ro", LL_READ },
	{ "/srv/data", LL_READ },
	{ "/srv/out", LL_RW },
	{ "/lnk", LL_READ | LL_FS_EXECUTE }, /* a link to /srv/data/tools */
	{ "/srv/odd", LL_RW | LL_FS_EXECUTE },
	{ "/dev/null", LL_FS_READ_FILE | LL_FS_WRITE_FILE },
	{ "/proc", LL_READ },
};

static struct sandbox_plan plan = {
	.mounts = mounts,
	.n_mounts = sizeof(mounts) / sizeof(mounts[0]),
	.rules = rules,
	.n_rules = sizeof(rules) / sizeof(rules[0]),
};

/* What exists on the host (observe mode's view). */
static const char *const host[] = {
	"/etc", "/tmp/hostfile", "/tmp/other-user-dir", "/home/u/.ssh", "/srv",
};

static bool host_exists(const char *path, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		if (strcmp(host[i], path) == 0)
			return true;
	return false;
}

static bool host_exists_real(const char *path, void *ctx)
{
	(void)ctx;
	struct stat st;
	return lstat(path, &st) == 0;
}

static void canon(char *path, size_t len)
{
	if (strcmp(path, "/lnk") == 0)
		snprintf(path, len, "/srv/data/tools");
}

static struct fsrules R;

static int setup(void **state)
{
	(void)state;
	return fsrules_from_plan(&plan, LL_FS_V1 | LL_FS_REFER | LL_FS_TRUNCATE, canon, &R);
}

static int teardown(void **state)
{
	(void)state;
	fsrules_free(&R);
	return 0;
}

static enum fsrules_verdict check(const char *path, uint64_t access)
{
	return fsrules_check(&R, path, access, host_exists, NULL);
}

/* ---- tests ---- */

static void test_baseline_read_only(void **state)
{
	(void)state;
	assert_int_equal(check("/usr/bin/ls", LL_FS_READ_FILE), FSR_ALLOW);
	assert_int_equal(check("/usr/bin/ls", LL_FS_EXECUTE), FSR_ALLOW);
	assert_int_equal(check("/usr/bin/ls", LL_FS_WRITE_FILE), FSR_DENY_READONLY);
	assert_int_equal(check("/usr/bin", LL_FS_MAKE_REG), FSR_DENY_READONLY);
}

static void test_unlisted_host_paths_hidden(void **state)
{
	(void)state;
	assert_int_equal(check("/etc/passwd", LL_FS_READ_FILE), FSR_DENY_HIDDEN);
	assert_int_equal(check("/etc", LL_FS_READ_DIR), FSR_DENY_HIDDEN);
	/* The root itself, and a directory on the way to a mount, exist. */
	assert_int_equal(check("/", LL_FS_READ_DIR), FSR_ALLOW);
	assert_int_equal(check("/home", LL_FS_READ_DIR), FSR_ALLOW);
	assert_int_equal(check("/srv", LL_FS_READ_DIR), FSR_ALLOW);
	/* ...but holds none of the host's other entries, and takes no new
	 * ones (the root grants only READ_DIR). */
	assert_int_equal(check("/srv/other", LL_FS_READ_FILE), FSR_DENY_HIDDEN);
	assert_int_equal(check("/srv", LL_FS_MAKE_REG), FSR_DENY_ACCESS);
	assert_int_equal(check("/", LL_FS_MAKE_DIR), FSR_DENY_ACCESS);
}

static void test_private_tmp_and_home(void **state)
{
	(void)state;
	/* The host's files under the private /tmp and home are not shown. */
	assert_int_equal(check("/tmp/hostfile", LL_FS_READ_FILE), FSR_DENY_HIDDEN);
	assert_int_equal(check("/tmp/other-user-dir", LL_FS_MAKE_REG), FSR_DENY_HIDDEN);
	assert_int_equal(check("/tmp/other-user-dir/x", LL_FS_WRITE_FILE), FSR_DENY_HIDDEN);
	assert_int_equal(check("/home/u/.ssh/id_rsa", LL_FS_READ_FILE), FSR_DENY_HIDDEN);
	/* What the agent makes there is its own. */
	assert_int_equal(check("/tmp", LL_FS_MAKE_REG), FSR_ALLOW);
	assert_int_equal(check("/tmp/new", LL_FS_WRITE_FILE | LL_FS_READ_FILE), FSR_ALLOW);
	assert_int_equal(check("/home/u", LL_FS_MAKE_DIR), FSR_ALLOW);
	/* Never executable: noexec mounts. */
	assert_int_equal(check("/tmp/new", LL_FS_EXECUTE), FSR_DENY_NOEXEC);
	assert_int_equal(check("/home/u/prog", LL_FS_EXECUTE), FSR_DENY_NOEXEC);
}

/* Every mount no execute rule reaches into is noexec, and the kernel asks
 * the mount before Landlock; the neighbours on exec mounts run. */
static void test_noexec_mounts(void **state)
{
	(void)state;
	assert_int_equal(check("/srv/out/prog", LL_FS_EXECUTE), FSR_DENY_NOEXEC);
	assert_int_equal(check("/srv/out/prog", LL_FS_READ_FILE), FSR_ALLOW);
	assert_int_equal(check("/dev/shm/prog", LL_FS_EXECUTE), FSR_DENY_NOEXEC);
	assert_int_equal(check("/srv/odd/prog", LL_FS_EXECUTE), FSR_DENY_NOEXEC);
	assert_int_equal(check("/srv/odd/prog", LL_FS_WRITE_FILE), FSR_ALLOW);
	assert_int_equal(check("/home/u/ws/.venv/bin/python", LL_FS_EXECUTE), FSR_ALLOW);
	assert_int_equal(check("/home/u/ws/.venv/bin/python", LL_FS_WRITE_FILE), FSR_DENY_READONLY);
	assert_int_equal(check("/home/u/ws/ro/tool", LL_FS_EXECUTE), FSR_ALLOW);
	assert_int_equal(check("/usr/bin/python3", LL_FS_EXECUTE), FSR_ALLOW);
	assert_string_equal(fsrules_verdict_name(FSR_DENY_NOEXEC), "EACCES [noexec mount]");
}

static void test_workspace(void **state)
{
	(void)state;
	assert_int_equal(check("/home/u/ws/src/a.c", LL_FS_READ_FILE | LL_FS_WRITE_FILE), FSR_ALLOW);
	assert_int_equal(check("/home/u/ws/src", LL_FS_MAKE_REG | LL_FS_REMOVE_FILE), FSR_ALLOW);
	assert_int_equal(check("/home/u/ws/run.sh", LL_FS_EXECUTE), FSR_ALLOW);
	/* A read-only path inside: Landlock's union would grant the write
	 * (the workspace rule covers it), the read-only mount does not. */
	assert_int_equal(check("/home/u/ws/ro/f", LL_FS_WRITE_FILE), FSR_DENY_READONLY);
	assert_int_equal(check("/home/u/ws/ro/f", LL_FS_READ_FILE), FSR_ALLOW);
	/* Denied paths: covered, whatever the access. */
	assert_int_equal(check("/home/u/ws/.env", LL_FS_READ_FILE), FSR_DENY_HIDDEN);
	assert_int_equal(check("/home/u/ws/secrets/key", LL_FS_READ_FILE), FSR_DENY_HIDDEN);
	assert_int_equal(check("/home/u/ws/secrets", LL_FS_MAKE_REG), FSR_DENY_HIDDEN);
	/* Paths compare by component, never by string prefix. */
	assert_int_equal(check("/home/u/ws/.envrc", LL_FS_READ_FILE), FSR_ALLOW);
	assert_int_equal(check("/home/u/ws/secrets2/k", LL_FS_READ_FILE), FSR_ALLOW);
	assert_int_equal(check("/home/u/wsx/f", LL_FS_READ_FILE), FSR_ALLOW); /* not on the host */
}

static void test_policy_paths(void **state)
{
	(void)state;
	assert_int_equal(check("/srv/data/x", LL_FS_READ_FILE), FSR_ALLOW);
	assert_int_equal(check("/srv/data/x", LL_FS_WRITE_FILE), FSR_DENY_READONLY);
	/* An exec mount (for /lnk's sake), but no rule for this file. */
	assert_int_equal(check("/srv/data/x", LL_FS_EXECUTE), FSR_DENY_ACCESS);
	assert_int_equal(check("/srv/out/x", LL_FS_WRITE_FILE), FSR_ALLOW);
	assert_int_equal(check("/srv/out", LL_FS_REMOVE_FILE), FSR_ALLOW);
}

/* The mount made last over a path decides, not the deepest: a deny's
 * cover hides a grant mounted beneath it before. */
static void test_later_mount_covers_deeper(void **state)
{
	(void)state;
	assert_int_equal(check("/home/u/ws/secrets/granted/f", LL_FS_READ_FILE), FSR_DENY_HIDDEN);
	assert_int_equal(check("/home/u/ws/secrets/granted/f", LL_FS_WRITE_FILE), FSR_DENY_HIDDEN);
	/* Neighbour: a write path no deny covers. */
	assert_int_equal(check("/srv/out/f", LL_FS_WRITE_FILE), FSR_ALLOW);
}

static void test_rule_paths_canonical(void **state)
{
	(void)state;
	/* The rule on /lnk holds where the link points. */
	assert_int_equal(check("/srv/data/tools/t", LL_FS_EXECUTE), FSR_ALLOW);
	assert_int_equal(check("/srv/data/other", LL_FS_EXECUTE), FSR_DENY_ACCESS);
}

static void test_own_dev_proc(void **state)
{
	(void)state;
	assert_int_equal(check("/dev/null", LL_FS_WRITE_FILE), FSR_ALLOW);
	assert_int_equal(check("/dev/sda", LL_FS_READ_FILE), FSR_DENY_ACCESS);
	assert_int_equal(check("/proc/self/status", LL_FS_READ_FILE), FSR_ALLOW);
	assert_int_equal(check("/proc/sys/kernel/x", LL_FS_WRITE_FILE), FSR_DENY_ACCESS);
}

/* Landlock judges only the rights the kernel handles; a read-only mount
 * refuses writes on any kernel. */
static void test_handled_rights(void **state)
{
	(void)state;
	struct fsrules old;
	assert_int_equal(fsrules_from_plan(&plan, LL_FS_V1, NULL, &old), 0);
	assert_int_equal(fsrules_check(&old, "/srv/data/x", LL_FS_TRUNCATE, host_exists, NULL), FSR_DENY_READONLY);
	assert_int_equal(fsrules_check(&old, "/home/u/ws", LL_FS_REFER, host_exists, NULL), FSR_ALLOW);
	assert_int_equal(fsrules_check(&old, "/", LL_FS_REFER, host_exists, NULL), FSR_ALLOW);
	assert_int_equal(check("/", LL_FS_REFER), FSR_DENY_ACCESS);
	assert_int_equal(fsrules_check(&old, "/", LL_FS_MAKE_REG, host_exists, NULL), FSR_DENY_ACCESS);
	fsrules_free(&old);
}

/* A plan built from a policy, judged: the derivation and the evaluator
 * agree on the workspace and on what lies beside it. */
static void test_from_a_real_plan(void **state)
{
	(void)state;
	char dir[] = "/tmp/airlock-unit-fsrules.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char ws[PATH_MAX], beside[PATH_MAX], inws[PATH_MAX + 8];
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(beside, sizeof(beside), "%s/beside", dir);
	snprintf(inws, sizeof(inws), "%s/f", ws);
	assert_int_equal(mkdir(ws, 0755), 0);
	assert_int_equal(mkdir(beside, 0755), 0);
	struct policy_ctx ctx = { .home = "/nonexistent-home", .cwd = ws };
	struct policy *pol = NULL;
	struct error err = { 0 };
	assert_int_equal(policy_default(&ctx, &pol, &err), 0);
	struct sandbox_plan p;
	char *argv[] = { "true", NULL };
	assert_int_equal(plan_build(pol, argv, true, &p, &err), 0);
	struct fsrules fr;
	assert_int_equal(fsrules_from_plan(&p, LL_FS_V1 | LL_FS_REFER | LL_FS_TRUNCATE, NULL, &fr), 0);
	/* The workspace (under the private /tmp) is read-write... */
	assert_int_equal(fsrules_check(&fr, inws, LL_FS_WRITE_FILE | LL_FS_READ_FILE, NULL, NULL), FSR_ALLOW);
	assert_int_equal(fsrules_check(&fr, ws, LL_FS_MAKE_REG, NULL, NULL), FSR_ALLOW);
	/* ...a directory beside it, which the private /tmp hides, is not. */
	char beside_f[PATH_MAX + 8];
	snprintf(beside_f, sizeof(beside_f), "%s/f", beside);
	assert_int_equal(fsrules_check(&fr, beside_f, LL_FS_READ_FILE, host_exists_real, NULL), FSR_DENY_HIDDEN);
	/* The workspace runs its programs; the private /tmp does not. */
	assert_int_equal(fsrules_check(&fr, inws, LL_FS_EXECUTE, NULL, NULL), FSR_ALLOW);
	assert_int_equal(fsrules_check(&fr, "/tmp/prog", LL_FS_EXECUTE, NULL, NULL), FSR_DENY_NOEXEC);
	/* Once the plan is observe mode's, it has no rules left: the
	 * evaluator's copy is what keeps them. */
	assert_int_equal(plan_observe(&p, pol, NULL, NULL), 0);
	assert_int_equal(p.n_rules, 0);
	assert_true(p.observe);
	assert_int_equal(fsrules_check(&fr, beside_f, LL_FS_READ_FILE, host_exists_real, NULL), FSR_DENY_HIDDEN);
	fsrules_free(&fr);
	plan_free(&p);
	policy_free(pol);
	rmdir(ws);
	rmdir(beside);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_baseline_read_only),
		cmocka_unit_test(test_noexec_mounts),
		cmocka_unit_test(test_unlisted_host_paths_hidden),
		cmocka_unit_test(test_private_tmp_and_home),
		cmocka_unit_test(test_workspace),
		cmocka_unit_test(test_policy_paths),
		cmocka_unit_test(test_rule_paths_canonical),
		cmocka_unit_test(test_later_mount_covers_deeper),
		cmocka_unit_test(test_own_dev_proc),
		cmocka_unit_test(test_handled_rights),
		cmocka_unit_test(test_from_a_real_plan),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
