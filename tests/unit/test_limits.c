/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the wall-clock limit's timer: armed when it can be, and a
 * clear error (never a run without its limit) when the kernel refuses the
 * timer: here for real, with no descriptor left to give it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/internal.h"

static void test_wall_timer_armed(void **state)
{
	struct error err = { 0 };
	struct itimerspec its;

	(void)state;
	int fd = limits_wall_timer(7, &err);
	assert_true(fd >= 0);
	assert_int_equal(timerfd_gettime(fd, &its), 0);
	assert_true(its.it_value.tv_sec > 0 || its.it_value.tv_nsec > 0);
	assert_true(its.it_value.tv_sec <= 7);
	close(fd);
	assert_true(limits_wall_timer(0, &err) == -EINVAL);
	assert_non_null(strstr(err.msg, "sandbox.limits.wall"));
	assert_true(limits_wall_timer(UINT64_MAX, &err) == -EINVAL);
}

/* With RLIMIT_NOFILE at the lowest free descriptor, timerfd_create fails
 * (EMFILE): the function says so and names the limit; it does not hand
 * back a timer that will never fire. */
static void test_wall_timer_refused(void **state)
{
	(void)state;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct error err = { 0 };
		int lowest = dup(0);
		if (lowest < 0)
			_exit(10);
		close(lowest);
		struct rlimit rl = { (rlim_t)lowest, (rlim_t)lowest };
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(11);
		int r = limits_wall_timer(5, &err);
		if (r != -EMFILE)
			_exit(12);
		if (!strstr(err.msg, "sandbox.limits.wall") || !strstr(err.msg, "timerfd_create") ||
		    !strstr(err.msg, "not started"))
			_exit(13);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wall_timer_armed),
		cmocka_unit_test(test_wall_timer_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
