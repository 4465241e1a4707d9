/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Path strings in a policy: expansion and lexical normalisation.
 *
 * Nothing here touches the filesystem. In particular symlinks are not
 * resolved: a policy is checked where it is written, but the sandbox opens
 * each path itself through fds (O_PATH|O_NOFOLLOW walks), so a link planted
 * between check and use cannot redirect it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/internal.h"
#include "util/cleanup.h"

#define WORKSPACE_VAR "$WORKSPACE"

char *policy_path_normalize(const char *abs)
{
	size_t len, out_len = 0;
	const char *s;
	char *out;

	if (!abs || abs[0] != '/') {
		errno = EINVAL;
		return NULL;
	}
	len = strlen(abs);
	out = malloc(len + 2);
	if (!out)
		return NULL;

	s = abs;
	while (*s) {
		const char *seg;
		size_t n;

		while (*s == '/')
			s++;
		seg = s;
		while (*s && *s != '/')
			s++;
		n = (size_t)(s - seg);
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			/* "/.." is "/": the root is its own parent. */
			while (out_len > 0 && out[out_len - 1] != '/')
				out_len--;
			if (out_len > 0)
				out_len--;
			continue;
		}
		out[out_len++] = '/';
		memcpy(out + out_len, seg, n);
		out_len += n;
	}
	if (out_len == 0)
		out[out_len++] = '/';
	out[out_len] = '\0';
	return out;
}

bool policy_path_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	/* WARNING: a bare prefix test would put "/home/alice2" under
	 * "/home/alice"; the next byte must end the path or start a component. */
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static char *join(const char *a, const char *b)
{
	char *out = NULL;

	if (asprintf(&out, "%s/%s", a, b) < 0)
		return NULL;
	return out;
}

enum policy_path_status policy_path_resolve(const char *in, const struct policy_path_base *base,
					    char **out)
{
	_cleanup_free_ char *joined = NULL;
	const char *prefix = NULL, *rest = NULL;
	char *norm;

	*out = NULL;
	if (in[0] == '\0')
		return POLICY_PATH_EMPTY;
	if (strlen(in) >= PATH_MAX)
		return POLICY_PATH_TOO_LONG;

	if (in[0] == '~') {
		if (in[1] != '\0' && in[1] != '/')
			return POLICY_PATH_TILDE_USER;
		if (!base->home || base->home[0] != '/')
			return POLICY_PATH_NO_HOME;
		prefix = base->home;
		rest = in + 1;
	} else if (in[0] == '$') {
		size_t n = strlen(WORKSPACE_VAR);
		if (strncmp(in, WORKSPACE_VAR, n) != 0 || (in[n] != '\0' && in[n] != '/'))
			return POLICY_PATH_UNKNOWN_VAR;
		if (!base->workspace)
			return POLICY_PATH_NO_WORKSPACE;
		prefix = base->workspace;
		rest = in + n;
	} else if (in[0] != '/') {
		prefix = base->dir;
		rest = in;
	}

	if (prefix) {
		joined = join(prefix, rest);
		if (!joined)
			return POLICY_PATH_NOMEM;
		in = joined;
	}
	norm = policy_path_normalize(in);
	if (!norm)
		return errno == ENOMEM ? POLICY_PATH_NOMEM : POLICY_PATH_EMPTY;
	if (strlen(norm) >= PATH_MAX) {
		free(norm);
		return POLICY_PATH_TOO_LONG;
	}
	*out = norm;
	return POLICY_PATH_OK;
}
