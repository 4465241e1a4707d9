/* SPDX-License-Identifier: Apache-2.0 */
#include "sandbox/auditlog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/statedir.h"

/* Where the local authority key lives by default. (The writer hashes
 * the policy file itself: it links libcrypto, we do not.) */
int auditlog_authority_path(char *out, size_t len, struct error *err)
{
	int r = statedir_path("authority.key", out, len, err);
	return r < 0 ? error_prefix(err, "the authority key that signs the decision log") : 0;
}

int auditlog_dir(const char *cli_dir, bool no_audit, const struct policy *pol, char *out, size_t len,
		 bool *is_default, struct error *err)
{
	*is_default = false;
	const char *dir = cli_dir;
	if (!dir && (no_audit || !pol->audit.enabled))
		return 0;
	if (!dir)
		dir = pol->audit.dir;
	if (dir) {
		if ((size_t)snprintf(out, len, "%s", dir) >= len)
			return error_set(err, ENAMETOOLONG, "audit directory %s: path too long", dir);
		return 1;
	}
	/* On by default, in the XDG state directory: the log is kept like the
	 * authority key beside it, out of the workspace the agent writes. */
	int r = statedir_path("audit", out, len, err);
	if (r == -ENOENT)
		return error_set(err, ENOENT,
				 "the decision log is on by default in $XDG_STATE_HOME/airlock/audit or "
				 "$HOME/.local/state/airlock/audit, and neither variable holds an absolute path; "
				 "set one, choose a directory with --audit DIR or audit.dir, or turn the log off with "
				 "--no-audit or audit.enabled: false");
	if (r < 0)
		return r;
	*is_default = true;
	return 1;
}

int auditlog_start(const struct policy *pol, const char *dir, struct auditlog *a, struct error *err)
{
	*a = (struct auditlog)AUDITLOG_INIT;
	char exe[PATH_MAX], key[PATH_MAX];
	/* The key's place first: a log is not started without it. */
	int r = auditlog_authority_path(key, sizeof(key), err);
	if (r < 0 || (r = sibling_path("airlock-audit-writer", exe, sizeof(exe), err)) < 0 ||
	    (r = file_mkdir_p(dir, 0700, err)) < 0)
		return r;
	int ep[2], cs[2];
	/* A stream socket rather than a pipe: a send to a writer that died
	 * fails with EPIPE instead of raising SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ep) < 0)
		return error_sys(err, errno, "socketpair");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cs) < 0) {
		close(ep[0]);
		close(ep[1]);
		return error_sys(err, errno, "socketpair");
	}
	const char *boundary = policy_boundary_name(pol->sandbox.boundary);
	const char *mode = policy_mode_name(pol->sandbox.mode);
	const char *agent = pol->identity.agent ? pol->identity.agent : pol->name && pol->name[0] ? pol->name : "agent";
	char max_size[24];
	snprintf(max_size, sizeof(max_size), "%llu", (unsigned long long)pol->audit.max_size);
	char *argv[] = { exe, "write", (char *)dir, key, "3", "4", (char *)agent, (char *)boundary,
			 (char *)mode, pol->file, pol->identity.header ? "identity" : "-", max_size, NULL };
	/* The writer reads no variable: it gets none of the user's (the
	 * sanitizers' settings alone, in a sanitized build). */
	char *envp[4];
	sibling_env(NULL, 0, envp, 0, ARRAY_SIZE(envp));
	pid_t pid = sibling_spawn(argv, envp, cs[1], ep[0]);
	if (pid < 0)
		return error_sys(err, errno, "cannot start the audit writer");
	close(cs[1]);
	close(ep[0]);
	a->pid = pid;
	a->max_size = pol->audit.max_size;
	a->want_identity = pol->identity.header;
	a->control = cs[0];
	a->events = ep[1];
	return 0;
}

int auditlog_ready(struct auditlog *a, struct error *err)
{
	if (a->pid <= 0)
		return 0;
	char msg[ERROR_MSG_MAX + 4200];
	int fds[PROTO_MAX_FDS];
	int n = proto_recv(a->control, msg, sizeof(msg), fds);
	for (int i = 0; i < PROTO_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (n > 1 && msg[0] == 'S' && a->want_identity) {
		/* The certificate and the signing channel for the proxy's
		 * identity header: held only until egress_identity has sent
		 * them on. */
		a->identity = malloc(AUDITLOG_IDENTITY_MAX + 1);
		int k = a->identity ? proto_recv(a->control, (char *)a->identity, AUDITLOG_IDENTITY_MAX + 1, fds) : -1;
		for (int i = 0; k >= 0 && i < PROTO_MAX_FDS; i++) {
			if (i == 0)
				a->sign_fd = fds[0];
			else if (fds[i] >= 0)
				close(fds[i]);
		}
		if (k < 1 + 128 + 2 || a->identity[0] != 'I' || a->sign_fd < 0) {
			auditlog_identity_close(a);
			close(a->control);
			a->control = -1;
			return error_set(err, EIO, "the audit writer did not hand over its signing channel for identity.header");
		}
		a->identity_len = (size_t)k;
	}
	close(a->control);
	a->control = -1;
	if (n <= 1 || msg[0] != 'S')
		return error_set(err, EIO, "the audit writer did not start: %s",
				 n > 1 && msg[0] == 'E' ? msg + 1 : "no answer");
	char *tab = strchr(msg + 1, '\t');
	if (!tab)
		return error_set(err, EIO, "the audit writer's answer is malformed");
	*tab = '\0';
	snprintf(a->session, sizeof(a->session), "%s", msg + 1);
	snprintf(a->path, sizeof(a->path), "%s", tab + 1);
	return 0;
}

void auditlog_identity_close(struct auditlog *a)
{
	free(a->identity);
	a->identity = NULL;
	a->identity_len = 0;
	if (a->sign_fd >= 0)
		close(a->sign_fd);
	a->sign_fd = -1;
}

static bool send_all(struct auditlog *a, const char *line, size_t len)
{
	/* A stream socket may take a long batch in parts. */
	while (len > 0) {
		ssize_t w = send(a->events, line, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		line += w;
		len -= (size_t)w;
	}
	return true;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define DENY_MEMBER "\"decision\":\"deny\""

/* What a denial says, without what changes from one to the next: the
 * proxy's leading "time" and trailing byte counts, the supervisor's
 * trailing "pid" (the same refusal to many processes of one tool is
 * one flood). */
static void denial_key(const char *line, size_t len, size_t *off, size_t *klen)
{
	size_t s = 0, e = len;
	if (len > 9 && memcmp(line, "{\"time\":", 8) == 0) {
		s = 8;
		while (s < len && line[s] >= '0' && line[s] <= '9')
			s++;
	}
	const char *b = memmem(line + s, len - s, ",\"bytes_up\":", 12);
	if (!b)
		b = memmem(line + s, len - s, ",\"pid\":", 7);
	if (b)
		e = (size_t)(b - line);
	*off = s;
	*klen = e - s;
}

/* The held-back count of slot r as a record of its own: the denial it
 * stands for with "repeated": N. */
static int emit_repeat(struct auditlog *a, struct auditlog_repeat *r)
{
	if (!r->line || r->count == 0)
		return 0;
	size_t body = r->len;
	while (body > 0 && (r->line[body - 1] == '\n' || r->line[body - 1] == '}'))
		body--;
	int e = buf_append(&a->out, r->line, body) ?: buf_printf(&a->out, ",\"repeated\":%llu}\n", (unsigned long long)r->count);
	r->count = 0;
	return e;
}

/* Flood control for one denial: true when it is held back (counted), false
 * when it goes to the log; records of held-back counts that are due go
 * into a->out first. */
static bool held_back(struct auditlog *a, const char *line, size_t len, int64_t now, int *e)
{
	size_t off, klen;
	denial_key(line, len, &off, &klen);
	struct auditlog_repeat *slot = NULL, *oldest = &a->repeat[0];
	for (size_t i = 0; i < AUDITLOG_REPEAT_SLOTS; i++) {
		struct auditlog_repeat *r = &a->repeat[i];
		if (!r->line) {
			if (oldest->line)
				oldest = r;
			continue;
		}
		if (!slot && r->key_len == klen && memcmp(r->line + r->key_off, line + off, klen) == 0) {
			slot = r;
			continue;
		}
		/* Counts whose window has passed are written now. */
		if (r->count && now - r->since_ms >= AUDITLOG_REPEAT_WINDOW_MS && (*e = emit_repeat(a, r)) < 0)
			return false;
		if (oldest->line && r->since_ms < oldest->since_ms)
			oldest = r;
	}
	if (slot && now - slot->since_ms < AUDITLOG_REPEAT_WINDOW_MS) {
		if (++slot->count >= AUDITLOG_REPEAT_EVERY) {
			*e = emit_repeat(a, slot);
			slot->since_ms = now;
		}
		return true;
	}
	if (slot) {
		/* The window has passed: what was held back, then this one. */
		if ((*e = emit_repeat(a, slot)) < 0)
			return false;
		slot->since_ms = now;
		return false;
	}
	/* A new denial: it takes a free slot, or the oldest one's. */
	if ((*e = emit_repeat(a, oldest)) < 0)
		return false;
	char *copy = malloc(len);
	if (!copy) {
		*e = -ENOMEM;
		return false;
	}
	memcpy(copy, line, len);
	free(oldest->line);
	*oldest = (struct auditlog_repeat){ .line = copy, .len = len, .key_off = off, .key_len = klen, .since_ms = now };
	return false;
}

bool auditlog_filter(struct auditlog *a, const char **linep, size_t *lenp)
{
	const char *line = *linep;
	size_t len = *lenp;
	/* Most batches hold no denial: they go as they are. */
	if (!memmem(line, len, DENY_MEMBER, sizeof(DENY_MEMBER) - 1))
		return true;
	if (!a->repeat && !(a->repeat = calloc(AUDITLOG_REPEAT_SLOTS, sizeof(*a->repeat))))
		return false;
	int64_t now = now_ms();
	int e = 0;
	buf_reset(&a->out);
	for (const char *p = line, *end = line + len; p < end && e == 0;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p + 1) : (size_t)(end - p);
		bool deny = n <= AUDITLOG_REPEAT_LINE_MAX && memmem(p, n, DENY_MEMBER, sizeof(DENY_MEMBER) - 1);
		if (!(deny && held_back(a, p, n, now, &e)) && e == 0)
			e = buf_append(&a->out, p, n);
		p += n;
	}
	/* Out of memory: nothing may be left out unrecorded. */
	if (e < 0)
		return false;
	*linep = a->out.data ? a->out.data : "";
	*lenp = a->out.len;
	return true;
}

bool auditlog_send(struct auditlog *a, const char *line, size_t len)
{
	if (a->events < 0)
		return a->pid == 0 && !a->died; /* no audit log in this run */
	return send_all(a, line, len);
}

bool auditlog_event(struct auditlog *a, const char *line, size_t len)
{
	if (a->events < 0)
		return a->pid == 0 && !a->died;
	return auditlog_filter(a, &line, &len) && send_all(a, line, len);
}

/* The counts still held back, before the session ends. */
static void flush_repeats(struct auditlog *a)
{
	if (!a->repeat)
		return;
	buf_reset(&a->out);
	for (size_t i = 0; i < AUDITLOG_REPEAT_SLOTS; i++) {
		(void)emit_repeat(a, &a->repeat[i]);
		free(a->repeat[i].line);
	}
	free(a->repeat);
	a->repeat = NULL;
	if (a->out.len && a->events >= 0)
		(void)send_all(a, a->out.data, a->out.len);
	buf_free(&a->out);
}

bool auditlog_reaped(struct auditlog *a, pid_t pid)
{
	if (a->pid <= 0 || pid != a->pid)
		return false;
	a->pid = 0;
	a->died = true;
	char b = 0;
	if (a->events >= 0 && recv(a->events, &b, 1, MSG_DONTWAIT) == 1 && b == 'B')
		a->full = true;
	if (a->events >= 0)
		close(a->events);
	a->events = -1;
	return true;
}

/* session_end, then EOF on the events: the writer signs and writes the
 * seal, and answers with one byte on the same socket once the seal is in
 * the file. */
static void send_end(struct auditlog *a, int exit_status)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "{\"kind\":\"session_end\",\"decision\":\"allow\",\"exit_status\":%d}\n",
			 exit_status);
	(void)auditlog_event(a, line, (size_t)n);
	(void)shutdown(a->events, SHUT_WR);
	a->ending = true;
}

void auditlog_end(struct auditlog *a, int exit_status)
{
	if (a->pid <= 0 || a->control >= 0 || a->events < 0 || a->ending)
		return;
	auditlog_identity_close(a);
	flush_repeats(a);
	send_end(a, exit_status);
}

int auditlog_finish(struct auditlog *a, int exit_status, struct error *err)
{
	auditlog_identity_close(a);
	if (!a->ending)
		flush_repeats(a);
	if (a->pid <= 0) {
		if (a->events >= 0)
			close(a->events);
		a->events = -1;
		/* A log that reached its size was sealed by the writer. */
		return a->died && !a->full ? error_set(err, EIO, "the audit writer stopped before the end of the session")
					   : 0;
	}
	/* Setup failed before the writer was waited for: let it finish
	 * starting (it gives up on a session whose answer nobody reads), so
	 * that the log it began is sealed with the failure. */
	if (a->control >= 0 && auditlog_ready(a, err) < 0) {
		/* It failed and exits: nothing to seal. */
		close(a->events);
		a->events = -1;
		while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
			;
		a->pid = 0;
		return -EIO;
	}
	if (!a->ending)
		send_end(a, exit_status);
	/* The writer syncs the file to disk after its answer, which the run
	 * does not wait for. No byte (the writer failed or died) is a log
	 * left unsealed. */
	char ack = 0;
	ssize_t got;
	do
		got = recv(a->events, &ack, 1, 0);
	while (got < 0 && errno == EINTR);
	close(a->events);
	a->events = -1;
	int st = 0;
	pid_t w = got == 1 && ack == 'S' ? waitpid(a->pid, &st, WNOHANG) : waitpid(a->pid, &st, 0);
	while (w < 0 && errno == EINTR)
		w = waitpid(a->pid, &st, 0);
	a->pid = 0;
	if (got == 1 && ack == 'B') {
		a->full = true;
		return error_set(err, EIO, "the decision log reached audit.max_size (%llu bytes); the session was ended",
				 (unsigned long long)a->max_size);
	}
	if (got != 1 || ack != 'S' || (w > 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)))
		return error_set(err, EIO, "the audit writer failed to seal %s", a->path);
	return 0;
}
