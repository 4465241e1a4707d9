/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for fds_close_from: every descriptor from the bound up but the
 * kept ones is closed, by close_range and, when a filter hides close_range
 * (ENOSYS, as on Linux < 5.9), by the walk of /proc/self/fd or the loop to
 * the limit; and when an fd cannot be closed, the caller is told.
 * Each case runs in a child of its own: it closes descriptors and loads
 * seccomp filters the test runner must keep clear of.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <seccomp.h>

#include "util/fds.h"

enum way { WAY_DEFAULT, WAY_NO_CLOSE_RANGE, WAY_WALK, WAY_LOOP, WAY_NOTHING_CLOSES };

/* Refuse close_range with ENOSYS, and close too when everything fails. */
static bool load_filter(enum way w)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	bool ok = ctx && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
		  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(close_range), 0) == 0 &&
		  (w != WAY_NOTHING_CLOSES || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(close), 0) == 0) &&
		  seccomp_load(ctx) == 0;
	seccomp_release(ctx);
	return ok;
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* In a child: open fds at 3.., 40, 41, 300 and 1000, keep 41 and 300 (and
 * stdio), close the rest the given way. Exit 0 when exactly the right fds
 * are left, 10 + a code otherwise; for WAY_NOTHING_CLOSES, 0 when the
 * failure was reported. */
static int run_case(enum way w)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int p[2];
		if (pipe(p) < 0 || dup2(p[0], 40) < 0 || dup2(p[1], 41) < 0 || dup2(p[0], 300) < 0 ||
		    dup2(p[1], 1000) < 0)
			_exit(11);
		const int keep[] = { 300, 41, 41, 2 };
		int r;
		if (w != WAY_DEFAULT && w != WAY_WALK && w != WAY_LOOP && !load_filter(w))
			_exit(12);
		if (w == WAY_NO_CLOSE_RANGE && (syscall(SYS_close_range, 3U, ~0U, 0U) == 0 || errno != ENOSYS))
			_exit(13); /* the filter must really hide it */
		if (w == WAY_WALK)
			r = fds_close_from_walk(3, keep, 4);
		else if (w == WAY_LOOP)
			r = fds_close_from_loop(3, keep, 4);
		else
			r = fds_close_from(3, keep, 4);
		if (w == WAY_NOTHING_CLOSES)
			_exit(r < 0 && is_open(40) ? 0 : 14);
		if (r != 0)
			_exit(15);
		if (is_open(p[0]) || is_open(p[1]) || is_open(40) || is_open(1000))
			_exit(16);
		if (!is_open(41) || !is_open(300) || !is_open(0) || !is_open(1) || !is_open(2))
			_exit(17);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_close_range(void **state)
{
	(void)state;
	assert_int_equal(run_case(WAY_DEFAULT), 0);
}

static void test_without_close_range(void **state)
{
	(void)state;
	assert_int_equal(run_case(WAY_NO_CLOSE_RANGE), 0);
}

static void test_walk(void **state)
{
	(void)state;
	assert_int_equal(run_case(WAY_WALK), 0);
}

static void test_loop(void **state)
{
	(void)state;
	assert_int_equal(run_case(WAY_LOOP), 0);
}

/* Fail closed: with close_range hidden and close refused, the fds stay
 * open and the caller hears of it. */
static void test_fails_closed(void **state)
{
	(void)state;
	assert_int_equal(run_case(WAY_NOTHING_CLOSES), 0);
}

static void test_too_many_to_keep(void **state)
{
	int keep[FDS_MAX_KEEP + 1];
	(void)state;
	for (size_t i = 0; i < FDS_MAX_KEEP + 1; i++)
		keep[i] = (int)(1000 + i);
	assert_int_equal(fds_close_from(3, keep, FDS_MAX_KEEP + 1), -E2BIG);
	assert_int_equal(fds_close_from_walk(3, keep, FDS_MAX_KEEP + 1), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_range),
		cmocka_unit_test(test_without_close_range),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_fails_closed),
		cmocka_unit_test(test_too_many_to_keep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
