/* SPDX-License-Identifier: Apache-2.0 */
#include "sandbox/creds.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/broker.h"
#include "proto/proxy.h"
#include "util/cleanup.h"
#include "util/spawn.h"

#define COMMAND_SECONDS 30

extern char **environ;

/* Read fd to EOF into out[0..cap), bounded in bytes and (when deadline
 * is not 0) in time. Returns the length, -E2BIG when longer than cap,
 * -ETIMEDOUT, or another negative errno. */
static ssize_t read_bounded(int fd, uint8_t *out, size_t cap, time_t deadline)
{
	size_t n = 0;
	for (;;) {
		if (deadline) {
			int left = (int)(deadline - time(NULL));
			struct pollfd p = { .fd = fd, .events = POLLIN };
			if (left <= 0)
				return -ETIMEDOUT;
			int pr = poll(&p, 1, left * 1000);
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr <= 0)
				return pr == 0 ? -ETIMEDOUT : -errno;
		}
		if (n == cap) {
			uint8_t extra;
			ssize_t r = read(fd, &extra, 1);
			explicit_bzero(&extra, 1);
			return r == 0 ? (ssize_t)n : -E2BIG;
		}
		ssize_t r = read(fd, out + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return (ssize_t)n;
		n += (size_t)r;
	}
}

/* Run argv with stdout to us and stdin from /dev/null; its output, one
 * line, is the secret. */
static ssize_t run_command(char *const *argv, uint8_t *out, size_t cap, struct error *err, const char *who)
{
	struct spawn s = { .argv = argv, .stdin_fd = -1 };
	int fd;
	pid_t pid = spawn_reader(&s, &fd);
	if (pid < 0)
		return error_sys(err, (int)-pid, "%s: cannot run %s", who, argv[0]);
	ssize_t n = read_bounded(fd, out, cap, time(NULL) + COMMAND_SECONDS);
	close(fd);
	if (n < 0)
		kill(pid, SIGKILL);
	int status = spawn_wait(pid);
	if (n == -ETIMEDOUT)
		return error_set(err, ETIMEDOUT, "%s: %s did not finish within %d s", who, argv[0], COMMAND_SECONDS);
	if (n < 0)
		return error_set(err, (int)-n, "%s: cannot read the output of %s: %s", who, argv[0],
				 n == -E2BIG ? "longer than a secret can be" : strerror((int)-n));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		explicit_bzero(out, (size_t)n);
		return error_set(err, EIO, "%s: %s failed (%s %d)", who, argv[0],
				 WIFEXITED(status) ? "exit status" : "signal",
				 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	return n;
}

/* The secret of c into out[0..cap): its length, or a negative errno. */
static ssize_t read_secret(const struct policy_credential *c, uint8_t *out, size_t cap, struct error *err)
{
	char who[128];
	snprintf(who, sizeof(who), "%s: credential %s", c->loc.file ? c->loc.file : "policy", c->name);
	ssize_t n;
	switch (c->source) {
	case POLICY_CRED_ENV: {
		const char *v = getenv(c->source_arg);
		if (!v || !*v)
			return error_set(err, ENOENT, "%s: source env:%s is not set in airlock's environment", who,
					 c->source_arg);
		n = (ssize_t)strlen(v);
		if ((size_t)n > cap)
			return error_set(err, E2BIG, "%s: env:%s is longer than %d bytes", who, c->source_arg,
					 BROKER_MAX_SECRET);
		memcpy(out, v, (size_t)n);
		break;
	}
	case POLICY_CRED_FILE: {
		int fd = open(c->source_arg, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return error_sys(err, errno, "%s: cannot open file:%s", who, c->source_arg);
		n = read_bounded(fd, out, cap, 0);
		close(fd);
		if (n < 0)
			return error_set(err, (int)-n, "%s: cannot read file:%s: %s", who, c->source_arg,
					 n == -E2BIG ? "longer than a secret can be" : strerror((int)-n));
		break;
	}
	case POLICY_CRED_COMMAND:
		n = run_command(c->command, out, cap, err, who);
		if (n < 0)
			return n;
		break;
	default:
		return error_set(err, EINVAL, "%s: unknown source", who);
	}
	/* One trailing newline is the file's or the command's, not the secret's. */
	if (n > 0 && out[n - 1] == '\n')
		n--;
	if (n > 0 && out[n - 1] == '\r')
		n--;
	if (n == 0)
		return error_set(err, ENODATA, "%s: the secret is empty", who);
	if (n < BROKER_MIN_SECRET) {
		explicit_bzero(out, (size_t)n);
		return error_set(err, EINVAL,
				 "%s: the secret is shorter than %d bytes: what comes back from its endpoints could "
				 "not be told apart from it",
				 who, BROKER_MIN_SECRET);
	}
	if (memchr(out, '\n', (size_t)n) || memchr(out, '\r', (size_t)n) || memchr(out, '\0', (size_t)n)) {
		explicit_bzero(out, (size_t)n);
		return error_set(err, EINVAL, "%s: the secret holds a line break or NUL, which no header can carry",
				 who);
	}
	return n;
}

int creds_hand_over(const struct policy *pol, struct sandbox_plan *plan, int control, struct error *err)
{
	if (pol->n_credentials > BROKER_MAX_CREDENTIALS)
		return error_set(err, E2BIG, "%s: more than %d credentials", pol->file, BROKER_MAX_CREDENTIALS);
	/* 'K' name NUL placeholder NUL secret: one message per credential. */
	size_t cap = 1 + 65 + BROKER_PLACEHOLDER_LEN + 1 + BROKER_MAX_SECRET;
	uint8_t *msg = malloc(cap);
	if (!msg)
		return error_set(err, ENOMEM, "out of memory");
	int r = 0;
	for (size_t i = 0; i < pol->n_credentials && r == 0; i++) {
		const struct policy_credential *c = &pol->credentials[i];
		char ph[BROKER_PLACEHOLDER_LEN + 1] = "";
		if (c->env && (r = broker_make_placeholder(ph)) < 0) {
			r = error_sys(err, -r, "getrandom");
			break;
		}
		size_t head = 1 + strlen(c->name) + 1 + strlen(ph) + 1;
		msg[0] = PROXY_MSG_CRED;
		memcpy(msg + 1, c->name, strlen(c->name) + 1);
		memcpy(msg + 1 + strlen(c->name) + 1, ph, strlen(ph) + 1);
		ssize_t n = read_secret(c, msg + head, cap - head, err);
		if (n < 0) {
			r = (int)n;
			break;
		}
		ssize_t sent = send(control, msg, head + (size_t)n, MSG_NOSIGNAL);
		explicit_bzero(msg, cap);
		if (sent != (ssize_t)(head + (size_t)n)) {
			r = error_sys(err, errno, "cannot hand credential %s to the egress proxy", c->name);
			break;
		}
		if (c->env && (r = plan_env_set(plan, c->env, ph)) < 0)
			r = error_set(err, ENOMEM, "out of memory");
	}
	explicit_bzero(msg, cap);
	free(msg);
	return r;
}

/* Names under which environments usually carry secrets. */
static bool secret_name(const char *name, size_t len)
{
	static const char *const words[] = { "TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY",
					     "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL", "AUTH" };
	char up[256];
	if (len >= sizeof(up))
		len = sizeof(up) - 1;
	for (size_t i = 0; i < len; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strstr(up, words[i]))
			return true;
	return false;
}

/* A variable the policy passes into the sandbox (process.env.pass) is the
 * agent's to send: not scanned for. */
static bool passed_in(const struct policy *pol, const char *name, size_t len)
{
	for (size_t i = 0; i < pol->process.n_env_pass; i++)
		if (strlen(pol->process.env_pass[i]) == len && strncmp(pol->process.env_pass[i], name, len) == 0)
			return true;
	return false;
}

int creds_env_hand_over(const struct policy *pol, int control, struct error *err)
{
	/* 'V' name NUL value: one message per secret-looking variable. */
	uint8_t *msg = malloc(CREDS_ENV_MSG_MAX);
	if (!msg)
		return error_set(err, ENOMEM, "out of memory");
	int r = 0;
	for (char **e = environ; e && *e && r == 0; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		size_t nlen = (size_t)(eq - *e), vlen = strlen(eq + 1);
		/* A short value would match by accident; a longer one than the
		 * bound is no token. */
		if (vlen < 8 || vlen > CREDS_ENV_VALUE_MAX || !secret_name(*e, nlen) || passed_in(pol, *e, nlen))
			continue;
		if (nlen > CREDS_ENV_NAME_MAX)
			nlen = CREDS_ENV_NAME_MAX; /* the scanner's label only */
		msg[0] = PROXY_MSG_ENV;
		memcpy(msg + 1, *e, nlen);
		msg[1 + nlen] = '\0';
		memcpy(msg + 2 + nlen, eq + 1, vlen);
		ssize_t sent = send(control, msg, 2 + nlen + vlen, MSG_NOSIGNAL);
		if (sent != (ssize_t)(2 + nlen + vlen))
			r = error_sys(err, errno, "cannot hand the environment's secrets to the egress proxy");
		explicit_bzero(msg, 2 + nlen + vlen);
	}
	free(msg);
	return r;
}
