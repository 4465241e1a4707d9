/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/statedir.h"

const char *const statedir_env_vars[] = { "XDG_STATE_HOME", "HOME", NULL };

int statedir_path(const char *sub, char *out, size_t len, struct error *err)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	const char *sep = sub ? "/" : "", *tail = sub ? sub : "";
	int n;

	/* The base directory specification: a relative value is ignored. */
	if (state && state[0] == '/')
		n = snprintf(out, len, "%s/airlock%s%s", state, sep, tail);
	else if (home && home[0] == '/')
		n = snprintf(out, len, "%s/.local/state/airlock%s%s", home, sep, tail);
	else
		return error_set(err, ENOENT,
				 "airlock keeps its state in $XDG_STATE_HOME/airlock, else $HOME/.local/state/airlock, "
				 "and neither variable holds an absolute path; set one of them");
	if (n < 0 || (size_t)n >= len)
		return error_set(err, ENAMETOOLONG, "airlock's state directory%s%s: the path is too long", sub ? " " : "",
				 tail);
	return 0;
}
