/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_TRACE_H
#define AIRLOCK_SANDBOX_TRACE_H

/* What the sandbox blocked during a run, collected by the supervisor and
 * reported at exit (`airlock run --trace-denials`, and learn mode). */

#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/types.h>

struct trace_log;

/* Returns a new, empty log owned by the caller, or NULL. */
struct trace_log *trace_new(void);
void trace_free(struct trace_log *t);

/* A syscall refused by the seccomp filter, from a user notification. */
void trace_record_syscall(struct trace_log *t, const struct seccomp_notif *req);

/* A file operation refused with EACCES/EPERM (Landlock or permissions).
 * path and detail are copied. */
void trace_record_file(struct trace_log *t, pid_t pid, const char *syscall, const char *path, int err);

/* A write to a protected path refused (filesystem.protect): recorded as
 * file_denied with "ERRNO [protected: GLOB]" as its reason. */
void trace_record_protected(struct trace_log *t, pid_t pid, const char *syscall, const char *path, int err,
			    const char *glob);

/* Any other denial, as a line of text (copied). */
void trace_record_text(struct trace_log *t, const char *what);

/* Every denial recorded from now on is also passed to sink, as one flat
 * JSON line (newline included) for the audit log. */
void trace_set_sink(struct trace_log *t, void (*sink)(void *ctx, const char *line, size_t len), void *ctx);

/* Print one "airlock: denied: ..." line per distinct denial, with counts. */
void trace_report(const struct trace_log *t, FILE *f);

#endif
