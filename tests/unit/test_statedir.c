/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for statedir_path: XDG_STATE_HOME first, HOME next, only
 * absolute values, and a refusal (never a fixed fallback) with neither.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/statedir.h"

static void test_statedir(void **state)
{
	struct error err = { 0 };
	char out[256], small[16];

	(void)state;
	setenv("XDG_STATE_HOME", "/x/state", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(statedir_path("authority.key", out, sizeof(out), &err), 0);
	assert_string_equal(out, "/x/state/airlock/authority.key");
	assert_int_equal(statedir_path(NULL, out, sizeof(out), &err), 0);
	assert_string_equal(out, "/x/state/airlock");

	setenv("XDG_STATE_HOME", "relative", 1);
	assert_int_equal(statedir_path("audit", out, sizeof(out), &err), 0);
	assert_string_equal(out, "/home/u/.local/state/airlock/audit");
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(statedir_path("mcp/run", out, sizeof(out), &err), 0);
	assert_string_equal(out, "/home/u/.local/state/airlock/mcp/run");

	/* Neither: refused, whatever the caller (no /root, no passwd). */
	unsetenv("HOME");
	strcpy(out, "untouched");
	assert_int_equal(statedir_path("authority.key", out, sizeof(out), &err), -ENOENT);
	assert_non_null(strstr(err.msg, "neither variable holds an absolute path"));
	setenv("HOME", "home/u", 1);
	assert_int_equal(statedir_path("mcp", out, sizeof(out), NULL), -ENOENT);

	setenv("HOME", "/home/a-rather-long-name", 1);
	assert_int_equal(statedir_path("audit", small, sizeof(small), &err), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statedir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
