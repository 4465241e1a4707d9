/* SPDX-License-Identifier: Apache-2.0 */
#include "sandbox/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/toolcache.h"

/* Bounded: a command that hammers a blocked call cannot grow our memory. */
#define TRACE_MAX_ENTRIES 256

struct trace_entry {
	char what[512];
	unsigned long count;
	bool observed; /* observe mode: would have been denied, was not */
};

struct trace_log {
	struct trace_entry e[TRACE_MAX_ENTRIES];
	size_t n;
	unsigned long dropped;
	unsigned long observed; /* operations let through that enforce mode would deny */
	bool observe;           /* the session is in observe mode */
	char *scratch;          /* the sandbox's private home, or NULL */
	char *watched[4];       /* airlock's own directories: every miss there is recorded */
	void (*sink)(void *ctx, const char *line, size_t len);
	void *sink_ctx;
	char emfile[128]; /* "openat by python3": the first call refused EMFILE */
};

void trace_set_sink(struct trace_log *t, void (*sink)(void *ctx, const char *line, size_t len), void *ctx)
{
	if (!t)
		return;
	t->sink = sink;
	t->sink_ctx = ctx;
}

void trace_set_observe(struct trace_log *t)
{
	if (t)
		t->observe = true;
}

unsigned long trace_observed(const struct trace_log *t)
{
	return t ? t->observed : 0;
}

/* One denial as an audit event: {"kind":KIND,"decision":"deny",...}. In
 * observe mode each says whether it was enforced: a seccomp refusal still
 * is (the filter stays), a file access is only recorded. */
static void emit(struct trace_log *t, const char *kind, const char *syscall, const char *file, const char *command,
		 const char *reason, bool enforced, pid_t pid)
{
	if (!t->sink)
		return;
	struct buf b = { 0 };
	const char *keys[] = { "syscall", "file", "command", "reason" };
	const char *vals[] = { syscall, file, command, reason };
	int r = buf_printf(&b, "{\"kind\":\"%s\",\"decision\":\"deny\"", kind);
	for (size_t i = 0; i < ARRAY_SIZE(keys) && !r; i++)
		if (vals[i])
			r = buf_printf(&b, ",\"%s\":", keys[i]) ?: buf_json_string(&b, vals[i], strlen(vals[i]));
	if (t->observe && !r)
		r = buf_puts(&b, enforced ? ",\"enforced\":true" : ",\"enforced\":false");
	/* The pid last: the flood control of identical denials
	 * (sandbox/auditlog.c) compares what comes before it. */
	r = r ?: buf_printf(&b, ",\"pid\":%d}\n", (int)pid);
	if (!r && b.len <= 4000)
		t->sink(t->sink_ctx, b.data, b.len);
	buf_free(&b);
}

struct trace_log *trace_new(void)
{
	return calloc(1, sizeof(struct trace_log));
}

void trace_free(struct trace_log *t)
{
	if (t) {
		free(t->scratch);
		for (size_t i = 0; i < ARRAY_SIZE(t->watched); i++)
			free(t->watched[i]);
	}
	free(t);
}

void trace_watch(struct trace_log *t, const char *dir)
{
	for (size_t i = 0; t && dir && i < ARRAY_SIZE(t->watched); i++)
		if (!t->watched[i]) {
			t->watched[i] = strdup(dir);
			return;
		}
}

void trace_set_scratch_home(struct trace_log *t, const char *home)
{
	if (t && home)
		t->scratch = strdup(home);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* ENOENT is recorded as a denial only when the sandbox hid something the
 * program asked of the host. Not: a name it was making in its own scratch
 * (npm makes its cache deepest directory first, each miss a ENOENT; the
 * host's copy of that directory is not what it wanted), a tool's cache
 * (toolcache.h), or the parts of /proc and /sys the sandbox does not show
 * (every node process probes the cgroup files, git the CPU count): no
 * policy entry changes those, and one npm install logged hundreds. */
static bool enoent_expected(const struct trace_log *t, const char *path, bool creates)
{
	/* An attempt on airlock's own log or keys (the default log lives in
	 * ~/.local/state) is always worth a record. */
	for (size_t i = 0; i < ARRAY_SIZE(t->watched); i++)
		if (t->watched[i] && under(path, t->watched[i]))
			return false;
	if (under(path, "/proc") || under(path, "/sys"))
		return true;
	if (toolcache_path(path))
		return true;
	return creates && ((t->scratch && under(path, t->scratch)) || under(path, "/tmp"));
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static void add(struct trace_log *t, const char *what, bool observed)
{
	if (observed)
		t->observed++;
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].observed == observed && strcmp(t->e[i].what, what) == 0) {
			t->e[i].count++;
			return;
		}
	if (t->n == TRACE_MAX_ENTRIES) {
		t->dropped++;
		return;
	}
	snprintf(t->e[t->n].what, sizeof(t->e[t->n].what), "%s", what);
	/* Paths and names are the agent's: a newline in one would start a
	 * line of the report that passes for a denial of airlock's own. */
	for (char *p = t->e[t->n].what; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	t->e[t->n].observed = observed;
	t->e[t->n++].count = 1;
}

void trace_record_syscall(struct trace_log *t, const struct seccomp_notif *req)
{
	if (!t)
		return;
	char name[64], comm[32], what[512];
	seccomp_syscall_name(req->data.nr, name, sizeof(name));
	comm_of((pid_t)req->pid, comm, sizeof(comm));
	snprintf(what, sizeof(what), "%s(0x%llx, 0x%llx, ...) = EPERM [seccomp] by %s", name,
		 (unsigned long long)req->data.args[0], (unsigned long long)req->data.args[1], comm);
	add(t, what, false);
	emit(t, "syscall_denied", name, NULL, comm, "EPERM [seccomp]", true, (pid_t)req->pid);
}

void trace_record_file(struct trace_log *t, pid_t pid, const char *syscall, const char *path, int err,
		       bool dir_hidden, bool creates)
{
	if (!t)
		return;
	if ((err == ENOENT || dir_hidden) && enoent_expected(t, path, creates || dir_hidden))
		return;
	char comm[32], what[512];
	comm_of(pid, comm, sizeof(comm));
	/* WARNING: `airlock policy suggest` (src/analysis/suggest.c) reads these
	 * reasons to tell a read from a write; keep the two in step. */
	const char *why = dir_hidden    ? "ENOENT [hidden: its directory exists outside the sandbox]"
			  : err == EACCES ? "EACCES [filesystem]"
			  : err == EPERM  ? "EPERM [filesystem]"
			  : err == EROFS  ? "EROFS [read-only]"
			  : err == ENOENT ? "ENOENT [hidden: exists outside the sandbox]"
					  : strerror(err);
	snprintf(what, sizeof(what), "%s(\"%s\") = %s by %s", syscall, path, why, comm);
	add(t, what, false);
	emit(t, "file_denied", syscall, path, comm, why, true, pid);
}

void trace_record_protected(struct trace_log *t, pid_t pid, const char *syscall, const char *path, int err,
			    const char *glob)
{
	if (!t)
		return;
	char comm[32], why[320], what[512];
	comm_of(pid, comm, sizeof(comm));
	snprintf(why, sizeof(why), "%s [protected: %s]", strerrorname_np(err) ?: "error", glob);
	snprintf(what, sizeof(what), "%s(\"%s\") = %s by %s", syscall, path, why, comm);
	add(t, what, false);
	emit(t, "file_denied", syscall, path, comm, why, true, pid);
}

void trace_record_would_deny(struct trace_log *t, pid_t pid, const char *syscall, const char *path, bool exec,
			     const char *why)
{
	if (!t)
		return;
	char comm[32], what[512], reason[160];
	comm_of(pid, comm, sizeof(comm));
	snprintf(what, sizeof(what), "%s(\"%s\") = %s by %s", syscall, path, why, comm);
	add(t, what, true);
	snprintf(reason, sizeof(reason), "would be %s; not enforced (observe mode)", why);
	emit(t, exec ? "exec_denied" : "file_denied", syscall, path, comm, reason, false, pid);
}

void trace_note_emfile(struct trace_log *t, pid_t pid, const char *syscall)
{
	if (!t || t->emfile[0])
		return;
	char comm[32];
	comm_of(pid, comm, sizeof(comm));
	snprintf(t->emfile, sizeof(t->emfile), "%s by %s", syscall, comm);
	for (char *p = t->emfile; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

const char *trace_emfile(const struct trace_log *t)
{
	return t && t->emfile[0] ? t->emfile : NULL;
}

void trace_record_text(struct trace_log *t, const char *what, bool observed)
{
	if (t)
		add(t, what, observed);
}

void trace_report(const struct trace_log *t, FILE *f)
{
	if (!t)
		return;
	if (t->n == 0) {
		fprintf(f, t->observe ? "airlock: no operation would have been denied\n"
				      : "airlock: no operation was denied\n");
		return;
	}
	for (size_t i = 0; i < t->n; i++) {
		const char *how = t->e[i].observed ? "would deny (not enforced)" : "denied";
		if (t->e[i].count > 1)
			fprintf(f, "airlock: %s: %s (%lu times)\n", how, t->e[i].what, t->e[i].count);
		else
			fprintf(f, "airlock: %s: %s\n", how, t->e[i].what);
	}
	if (t->dropped)
		fprintf(f, "airlock: %lu further denials not listed\n", t->dropped);
}
