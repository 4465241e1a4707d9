/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_TRACE_H
#define AIRLOCK_SANDBOX_TRACE_H

/* What the sandbox blocked during a run, collected by the supervisor and
 * reported at exit (`airlock run --trace-denials`, and learn mode). */

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct trace_log;

/* Returns a new, empty log owned by the caller, or NULL. */
struct trace_log *trace_new(void);
void trace_free(struct trace_log *t);

/* A syscall refused by the seccomp filter, from a user notification. */
void trace_record_syscall(struct trace_log *t, const struct seccomp_notif *req);

/* A file operation refused with EACCES/EPERM (Landlock or permissions),
 * EROFS, or ENOENT for a host path the sandbox hides. dir_hidden: the path
 * itself does not exist but the call would have created it in a directory
 * that exists outside the sandbox. creates: the call makes a name. path
 * is copied. ENOENTs the program's own work explains are not recorded. */
void trace_record_file(struct trace_log *t, pid_t pid, const char *syscall, const char *path, int err,
		       bool dir_hidden, bool creates);

/* The sandbox's private home (a fresh tmpfs): a name the program fails to
 * make there for want of its directory is no denial (trace.c). */
void trace_set_scratch_home(struct trace_log *t, const char *home);

/* A directory of airlock's own (the audit log's): every miss there is
 * recorded, wherever it lies. At most four. */
void trace_watch(struct trace_log *t, const char *dir);

/* Observe mode: an operation enforce mode would have refused with why
 * ("EACCES [filesystem]", ...) and that was let through. exec: it was a
 * program's execution (an exec_denied record), else a file access. */
void trace_record_would_deny(struct trace_log *t, pid_t pid, const char *syscall, const char *path, bool exec,
			     const char *why);

/* A write to a protected path refused (filesystem.protect): recorded as
 * file_denied with "ERRNO [protected: GLOB]" as its reason. */
void trace_record_protected(struct trace_log *t, pid_t pid, const char *syscall, const char *path, int err,
			    const char *glob);

/* Any other denial, as a line of text (copied); observed: it was only
 * recorded, not enforced (observe mode). */
void trace_record_text(struct trace_log *t, const char *what, bool observed);

/* A traced call of pid failed with EMFILE: the open-files limit was
 * reached. trace_emfile says by which call and program (the first), NULL
 * when none did. */
void trace_note_emfile(struct trace_log *t, pid_t pid, const char *syscall);
const char *trace_emfile(const struct trace_log *t);

/* The session is in observe mode: records say whether they were enforced,
 * and the report says what would have been denied. */
void trace_set_observe(struct trace_log *t);

/* How many operations were let through that enforce mode would deny. */
unsigned long trace_observed(const struct trace_log *t);

/* Every denial recorded from now on is also passed to sink, as one flat
 * JSON line (newline included) for the audit log. */
void trace_set_sink(struct trace_log *t, void (*sink)(void *ctx, const char *line, size_t len), void *ctx);

/* Print one "airlock: denied: ..." line per distinct denial, with counts. */
void trace_report(const struct trace_log *t, FILE *f);

#endif
