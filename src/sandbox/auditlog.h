/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_AUDITLOG_H
#define AIRLOCK_SANDBOX_AUDITLOG_H

/*
 * The supervisor's side of the signed decision log: it starts
 * airlock-audit-writer (which alone holds the session's signing key),
 * hands it every decision as one flat JSON line, and on exit
 * lets it seal the log. If the writer dies, the run ends: no decision may
 * go unrecorded.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "util/buf.h"
#include "util/error.h"

/* Identical denials close together are written once, then counted: see
 * auditlog_event. */
#define AUDITLOG_REPEAT_SLOTS 32
#define AUDITLOG_REPEAT_EVERY 1000  /* held-back denials per "repeated" record */
#define AUDITLOG_REPEAT_WINDOW_MS 1000
#define AUDITLOG_REPEAT_LINE_MAX 8192

struct auditlog_repeat {
	char *line;       /* the denial as it was sent, owned; NULL when the slot is free */
	size_t len;
	size_t key_off, key_len; /* the part that says what was denied (no time, no byte counts) */
	uint64_t count;   /* identical denials held back since */
	int64_t since_ms; /* when it was sent */
};

struct auditlog {
	pid_t pid;             /* the writer, 0 when none */
	int control;           /* our end of its control socket, -1 when none */
	int events;            /* our end of its events socket, -1 when none */
	bool died;             /* the writer exited while the sandbox ran */
	bool ending;           /* auditlog_end sent the session's end; the seal is awaited */
	bool full;             /* ... because the log reached audit.max_size (it sealed the log) */
	uint64_t max_size;     /* audit.max_size */
	struct auditlog_repeat *repeat; /* AUDITLOG_REPEAT_SLOTS, owned, or NULL */
	struct buf out;        /* a batch as it goes to the writer */
	char session[37];
	char path[4096];       /* the session's log */
	bool want_identity;    /* identity.header: the writer hands over a signing channel */
	uint8_t *identity;     /* its 'I' message until the proxy has it, or NULL */
	size_t identity_len;
	int sign_fd;           /* the proxy's end of the writer's signing channel until the proxy has it, or -1 */
};

/* The 'I' message: 'I', the certificate's signature (128 hex digits), the
 * certificate's JSON text (at most 2048 bytes, IDENTITY_CERT_MAX), and
 * attached the proxy's end of the writer's signing channel
 * (audit/signproto.h). No key: the session key never leaves the writer. */
#define AUDITLOG_IDENTITY_MAX (1 + 128 + 2048)

#define AUDITLOG_INIT { .control = -1, .events = -1, .sign_fd = -1 }

/* Where the local authority key lives: authority.key in airlock's state
 * directory (util/statedir.h). 0, or a negative errno with err set when
 * there is no state directory (the run must not start then). */
int auditlog_authority_path(char *out, size_t len, struct error *err) WUR;
/* Where this run's log goes: opts->audit_dir (--audit DIR), else nothing
 * with --no-audit or the policy's audit.enabled: false, else audit.dir,
 * else the state directory ($XDG_STATE_HOME/airlock/audit, else
 * $HOME/.local/state/airlock/audit). Writes the directory to out and
 * sets *is_default when it is the state directory; returns 1 when the run
 * has a log, 0 when it has none, or a negative errno when the state
 * directory cannot be named. */
int auditlog_dir(const char *cli_dir, bool no_audit, const struct policy *pol, char *out, size_t len,
		 bool *is_default, struct error *err) WUR;

/* Start the writer for a log under dir (created 0700 when missing). */
int auditlog_start(const struct policy *pol, const char *dir, struct auditlog *a, struct error *err) WUR;

/* Wait for the writer's answer: the log is open and its first record
 * (the session certificate) written. With identity.header, also take the
 * certificate and the signing channel for the proxy into a->identity and
 * a->sign_fd. */
int auditlog_ready(struct auditlog *a, struct error *err) WUR;

/* Free the identity message and close the signing channel's end, if
 * any. */
void auditlog_identity_close(struct auditlog *a);

/* Decisions: whole lines, each a flat JSON object with its newline, in
 * order. false when the writer is gone. A denial identical to one sent
 * less than AUDITLOG_REPEAT_WINDOW_MS before (but for its time and byte
 * counts) is held back and counted; the count goes to the log as a copy
 * of that denial with "repeated": N, every AUDITLOG_REPEAT_EVERY, when
 * the window has passed, and at the end. Nothing is dropped uncounted. */
bool auditlog_event(struct auditlog *a, const char *line, size_t len);

/* auditlog_event in two steps, for a caller that writes the batch
 * elsewhere too (network.log): the batch after flood control, in *line
 * and *len (a->out, or the batch itself), false when out of memory; then
 * that batch to the writer, false when the writer is gone. */
bool auditlog_filter(struct auditlog *a, const char **line, size_t *len);
bool auditlog_send(struct auditlog *a, const char *line, size_t len);

/* A child exited: true when it was the writer. Its "B" (the log reached
 * audit.max_size, and is sealed) sets a->full. */
bool auditlog_reaped(struct auditlog *a, pid_t pid);

/* Record the session's end, let the writer seal the log and wait for it.
 * Returns 0 when the log was sealed. After auditlog_end, only the wait
 * (exit_status is the one auditlog_end recorded). */
int auditlog_finish(struct auditlog *a, int exit_status, struct error *err);

/* The first half of auditlog_finish, for a caller with work of its own
 * before it exits: record the session's end and let the writer seal the
 * log while that work is done; auditlog_finish then waits for the seal.
 * Nothing more may be sent. Does nothing for a writer not yet ready or
 * gone (auditlog_finish handles those). */
void auditlog_end(struct auditlog *a, int exit_status);

#endif
