/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"

int cli_load_policy(const char *file, struct policy **out, struct error *err)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return error_sys(err, errno, "cannot determine the current directory");
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir ? pw->pw_dir : "/";
	}
	struct policy_ctx ctx = { .home = home, .cwd = cwd };
	if (!file)
		return policy_default(&ctx, out, err);
	return policy_load_file(file, &ctx, out, err);
}
