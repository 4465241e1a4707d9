/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_FTRACE_H
#define AIRLOCK_SANDBOX_FTRACE_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/types.h>

#include "sandbox/trace.h"
#include "util/error.h"

struct ftrace;

struct ftrace *ftrace_new(void);
void ftrace_free(struct ftrace *f);

struct fsrules;

/* Observe mode: judge each traced path-taking call at its entry against
 * rules (borrowed; enforce mode's), record what would have been denied,
 * and let every call run. */
void ftrace_observe(struct ftrace *f, const struct fsrules *rules);

struct protect_set;
/* Name protected paths in the records: a failed call whose path (or
 * rename/link destination) lies in the workspace ws (an inside path) and
 * is protected by set is recorded with the glob as its reason, whatever
 * its errno (a rename onto a protected file fails with EBUSY). Both are
 * borrowed for the tracer's lifetime. */
void ftrace_set_protect(struct ftrace *f, const struct protect_set *set, const char *ws);

/* Seize the sandbox's init; its descendants are traced automatically. */
int ftrace_attach(pid_t init, struct error *err) WUR;

/* SECCOMP_TRACE_WRITES: the supervisor traces nothing; the calls that
 * change the tree come as user notifications instead. ftrace_root takes
 * the sandbox's root (an O_PATH fd init opened once its tree was built,
 * owned from here on), to look at what those calls name as the sandbox
 * sees it. */
void ftrace_root(struct ftrace *f, int root);

/* And the Landlock rules the sandbox runs under (borrowed for the
 * tracer's lifetime), to name the refusals Landlock makes where the mount
 * lets a write through (the sandbox's /dev, say). */
void ftrace_landlock(struct ftrace *f, const struct fsrules *rules);

/* A user notification of a call SECCOMP_TRACE_WRITES sends to be noted:
 * records it when the mounts will refuse it (see predict() in ftrace.c),
 * and answers it, to run as it would have. Returns false, having
 * answered nothing, for any other notification (a refusal, the guard's). */
bool ftrace_notified(struct ftrace *f, struct trace_log *log, int notify, const struct seccomp_notif *req);

/* Handle one wait status of a tracee. Returns true when the status was a
 * ptrace stop that has been dealt with (the caller ignores it). */
bool ftrace_handle(struct ftrace *f, struct trace_log *log, pid_t tid, int status);

/* What the host has at an absolute path, as the supervisor records a
 * refusal: FTRACE_HOST_EXISTS (lstat finds it), FTRACE_HOST_DIR (it, or
 * what it links to, is a directory). Started as root, the supervisor that
 * gave up root does not see all of the host (root's 0700 home): it asks
 * the privileged helper through look (privsep.c), set once. */
#define FTRACE_HOST_EXISTS 1u
#define FTRACE_HOST_DIR 2u
unsigned ftrace_host_look_local(const char *path);
unsigned ftrace_host_look(const char *path);
void ftrace_set_host_look(unsigned (*look)(void *arg, const char *path), void *arg);

/* Is the directory that would hold path (absolute) there on the host? A
 * create that failed with ENOENT inside the sandbox while it is there
 * refused by the sandbox's view, not by a missing directory. */
bool ftrace_dir_exists(const char *path);

#endif
