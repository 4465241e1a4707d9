/* SPDX-License-Identifier: Apache-2.0 */
/*
 * process.git_identity: host. The host user's git user.name and
 * user.email, read before the sandbox starts, reach the agent as
 * GIT_AUTHOR_* and GIT_COMMITTER_* (the sandbox's private home has no
 * gitconfig, and `git commit` stops for lack of an identity).
 *
 * Only the host's global file is read (`git config --global`): the
 * workspace's .git/config is the agent's to write, and a value taken from
 * it would be the agent's own choosing passed back as the host's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/cleanup.h"
#include "util/spawn.h"

#define GITID_MAX 256 /* longer than any name or address worth offering */

/* `git config --global --get KEY` into out (the value without its
 * newline, "" when unset); -ENOENT when there is no git to run, -EIO
 * when git failed, -E2BIG when the value is longer than GITID_MAX. */
static int git_config_get(const char *key, char *out, size_t len)
{
	out[0] = '\0';
	char *argv[] = { "git", "config", "--global", "--get", (char *)key, NULL };
	struct spawn s = { .argv = argv, .stdin_fd = -1, .stderr_null = true, .dir = "/" };
	int fd;
	pid_t pid = spawn_reader(&s, &fd);
	if (pid < 0)
		return (int)pid; /* -ENOENT: no git */
	size_t got = 0;
	bool big = false;
	for (;;) {
		char chunk[512];
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got + (size_t)n >= len) {
			big = true; /* read on: git must not block on a full pipe */
			continue;
		}
		memcpy(out + got, chunk, (size_t)n);
		got += (size_t)n;
	}
	close(fd);
	int status = spawn_wait(pid);
	out[got] = '\0';
	if (big)
		return out[0] = '\0', -E2BIG;
	/* 1: the key is not set; anything else but 0: git failed (an
	 * unreadable or malformed file). */
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1))
		return out[0] = '\0', -EIO;
	if (got && out[got - 1] == '\n')
		out[--got] = '\0';
	return 0;
}

/* A value git would write into a commit's header: a newline there would
 * end the author line and let the rest be read as headers of the
 * agent's commits (a forged committer, a "gpgsig"). Control characters
 * and the angle brackets that delimit the address are refused. */
static bool ident_ok(const char *v)
{
	for (const unsigned char *c = (const unsigned char *)v; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c == '<' || *c == '>')
			return false;
	return true;
}

int gitid_offer(const struct policy *pol, struct sandbox_plan *p, struct error *err)
{
	if (!pol->process.git_identity)
		return 0;
	static const struct {
		const char *key;
		const char *vars[2];
	} ids[] = {
		{ "user.name", { "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME" } },
		{ "user.email", { "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL" } },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		char v[GITID_MAX + 1];
		int r = git_config_get(ids[i].key, v, sizeof(v));
		if (r == -E2BIG)
			return error_set(err, E2BIG,
					 "%s: process.git_identity: host: the host's git %s is longer than %d bytes",
					 pol->file, ids[i].key, GITID_MAX);
		if (r == -ENOENT)
			return error_set(err, ENOENT, "%s: process.git_identity: host: no git to read the host's identity with",
					 pol->file);
		if (r < 0)
			return error_sys(err, -r,
					 "%s: process.git_identity: host: cannot read the host's git %s (git config --global)",
					 pol->file, ids[i].key);
		if (!ident_ok(v))
			return error_set(err, EINVAL,
					 "%s: process.git_identity: host: the host's git %s holds a control character or "
					 "angle bracket; fix it in the host's gitconfig or remove the field",
					 pol->file, ids[i].key);
		if (!v[0]) {
			fprintf(stderr, "airlock: process.git_identity: host: the host's git config sets no %s\n",
				ids[i].key);
			continue;
		}
		/* process.env.set names them on purpose: it wins. */
		for (size_t k = 0; k < 2; k++) {
			bool set = false;
			for (size_t j = 0; j < pol->process.n_env_set && !set; j++)
				set = !strcmp(pol->process.env_set[j].name, ids[i].vars[k]);
			if (!set && plan_env_set(p, ids[i].vars[k], v) < 0)
				return error_set(err, ENOMEM, "out of memory");
		}
	}
	return 0;
}
