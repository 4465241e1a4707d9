/* SPDX-License-Identifier: Apache-2.0 */
#include "sandbox/egress.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/proxy.h"
#include "util/cleanup.h"

extern char **environ;

static const char *const system_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine */
	"/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
	"/etc/ssl/cert.pem",                  /* Arch, BSDs */
};

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

static bool passed_in(const struct policy *pol, const char *name, size_t len)
{
	for (size_t i = 0; i < pol->process.n_env_pass; i++)
		if (strlen(pol->process.env_pass[i]) == len && strncmp(pol->process.env_pass[i], name, len) == 0)
			return true;
	return false;
}

/* The supervisor's environment holds secrets the sandbox never sees (it
 * is cleared); if one turns up in a request anyway (read from a file the
 * agent could reach, say), the proxy refuses to send it. */
static int add_env_secrets(const struct policy *pol, struct dlp *d, struct error *err)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		size_t nlen = (size_t)(eq - *e);
		size_t vlen = strlen(eq + 1);
		if (vlen < 8 || !secret_name(*e, nlen) || passed_in(pol, *e, nlen))
			continue;
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)(nlen < 100 ? nlen : 100), *e);
		int r = dlp_add_secret(d, name, (const uint8_t *)eq + 1, vlen);
		if (r == -E2BIG)
			break;
		if (r < 0 && r != -EINVAL)
			return error_sys(err, -r, "leak scanner");
	}
	return 0;
}

static char *read_file(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct buf b = { 0 };
	char chunk[8192];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&b, chunk, n) < 0 || b.len > (8u << 20)) {
			buf_free(&b);
			return NULL;
		}
	return b.data;
}

int egress_prepare(const struct policy *pol, struct sandbox_plan *plan, struct egress *e, struct error *err)
{
	*e = (struct egress){ .records = -1, .records_w = -1, .log_fd = -1 };
	if (pol->network.mode == POLICY_NET_NONE)
		return 0;
	if (pol->network.mode == POLICY_NET_TRANSPARENT)
		return error_set(err, ENOTSUP,
				 "network.mode: transparent is not available in this build; use proxy");
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_sys(err, errno, "pipe");
	e->records = p[0];
	e->records_w = p[1];
	if (pol->network.log) {
		e->log_fd = open(pol->network.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (e->log_fd < 0)
			return error_sys(err, errno, "network.log: cannot open %s", pol->network.log);
	}
	if (!(e->dlp = dlp_new()))
		return error_set(err, ENOMEM, "out of memory");
	int r = add_env_secrets(pol, e->dlp, err);
	if (r < 0)
		return r;
	if (intercepts(pol)) {
		if ((r = tls_ca_new(&e->ca, err)) < 0)
			return r;
		struct buf bundle = { 0 };
		for (size_t i = 0; i < ARRAY_SIZE(system_bundles); i++) {
			_cleanup_free_ char *sys = read_file(system_bundles[i]);
			if (sys) {
				if (buf_puts(&bundle, sys) < 0 || buf_puts(&bundle, "\n") < 0)
					goto oom;
				break;
			}
		}
		if (buf_puts(&bundle, tls_ca_cert_pem(e->ca)) < 0)
			goto oom;
		plan->ca_bundle = bundle.data;
	}
	return 0;
oom:
	return error_set(err, ENOMEM, "out of memory");
}

int egress_start(struct egress *e, const struct policy *pol, const struct sandbox_plan *plan, int listen_fd,
		 struct error *err)
{
	pid_t pid = fork();
	if (pid < 0) {
		close(listen_fd);
		return error_sys(err, errno, "cannot start the egress proxy");
	}
	if (pid == 0) {
		/* The proxy keeps its socket, the records pipe and stderr. */
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
		}
		int keep[2] = { listen_fd < e->records_w ? listen_fd : e->records_w,
				listen_fd < e->records_w ? e->records_w : listen_fd };
		syscall(SYS_close_range, 3U, (unsigned)keep[0] - 1, 0U);
		syscall(SYS_close_range, (unsigned)keep[0] + 1, (unsigned)keep[1] - 1, 0U);
		syscall(SYS_close_range, (unsigned)keep[1] + 1, ~0U, 0U);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		struct proxy_config pc = {
			.policy = pol,
			.listen_fd = listen_fd,
			.records_fd = e->records_w,
			.dlp = e->dlp,
			.ca = e->ca,
			.drop_uid = plan->host_uid,
			.drop_gid = plan->host_gid,
		};
		proxy_main(&pc);
	}
	close(listen_fd);
	close(e->records_w);
	e->records_w = -1;
	e->pid = pid;
	return 0;
}

static void take_line(struct egress *e, const char *line, size_t len, struct trace_log *t)
{
	if (e->log_fd >= 0)
		(void)!write(e->log_fd, line, len);
	if (t && len > 1 && memmem(line, len, "\"decision\":\"deny\"", 17)) {
		char what[512];
		snprintf(what, sizeof(what), "network %.*s", (int)(len - 1 > 480 ? 480 : len - 1), line);
		trace_record_text(t, what);
	}
}

void egress_read(struct egress *e, struct trace_log *t)
{
	if (e->records < 0)
		return;
	char chunk[16384];
	ssize_t n = read(e->records, chunk, sizeof(chunk));
	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(e->records);
			e->records = -1;
		}
		return;
	}
	if (buf_append(&e->partial, chunk, (size_t)n) < 0)
		return;
	char *start = e->partial.data, *nl;
	while ((nl = memchr(start, '\n', e->partial.len - (size_t)(start - e->partial.data)))) {
		take_line(e, start, (size_t)(nl - start + 1), t);
		start = nl + 1;
	}
	buf_consume(&e->partial, (size_t)(start - e->partial.data));
}

bool egress_reaped(struct egress *e, pid_t pid)
{
	if (e->pid <= 0 || pid != e->pid)
		return false;
	e->pid = 0;
	e->died = true;
	return true;
}

void egress_stop(struct egress *e, struct trace_log *t)
{
	if (e->pid > 0) {
		kill(e->pid, SIGKILL);
		waitpid(e->pid, NULL, 0);
		e->pid = 0;
	}
	while (e->records >= 0)
		egress_read(e, t);
	if (e->records_w >= 0)
		close(e->records_w);
	if (e->log_fd >= 0)
		close(e->log_fd);
	dlp_free(e->dlp);
	tls_ca_free(e->ca);
	buf_free(&e->partial);
	*e = (struct egress){ .records = -1, .records_w = -1, .log_fd = -1 };
}
