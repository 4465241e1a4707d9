/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_AUDIT_SUGGEST_H
#define AIRLOCK_AUDIT_SUGGEST_H

/*
 * `airlock policy suggest`: the denials of a decision log (learn mode, or
 * --trace-denials) turned into the smallest policy additions that would
 * allow them.
 *
 * Smallest means exact: a file rather than its directory, unless the call
 * creates or removes an entry (then the directory must be writable: a
 * single-file bind cannot gain or lose a name); the binary itself for
 * process.exec; host and port exactly as requested, and for HTTP one rule
 * per path with the methods seen there. A denial no policy field can allow
 * (a system call on the seccomp deny list, a leak, a credential outside
 * its binding, a path under filesystem.deny, ...) is listed with the
 * reason, never dropped and never answered by something wider.
 *
 * The builder reads only records a verified log holds; the caller
 * (airlock-audit suggest) verifies the log first.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"
#include "util/error.h"

/* One record of a log, as far as suggest reads it. Borrowed strings; NULL
 * when the record has none. */
struct suggest_denial {
	uint64_t line;       /* of the log, for messages */
	const char *kind;    /* airlock.kind */
	const char *decision;
	const char *syscall; /* unmapped.syscall */
	const char *file;    /* file.path, or process.file.path */
	const char *command; /* actor.process.name */
	const char *method;  /* http_request.http_method */
	const char *host;    /* dst_endpoint.hostname, or query.hostname */
	const char *path;    /* http_request.url.path (its query included) */
	const char *reason;  /* message */
	int64_t port;        /* dst_endpoint.port; -1 when none */
};

struct suggest;

/* A new, empty suggestion. base (borrowed, may be NULL) is the policy the
 * additions are for: with it, what the policy already allows or denies on
 * purpose is told apart, and new rules go into the endpoint that decides
 * their host and port. Returns 0 or -ENOMEM. */
int suggest_new(const struct policy *base, struct suggest **out);
void suggest_free(struct suggest *s);

/* Take one record into account; records other than denials count only
 * for the summary. Returns 0 or -ENOMEM. */
int suggest_add(struct suggest *s, const struct suggest_denial *d);

/* One line of a log (without its newline): parse the record and add it;
 * also notes the policy file and hash the log names. Returns 0, or
 * -EINVAL with err naming the line, -ENOMEM. */
int suggest_add_line(struct suggest *s, const char *line, size_t len, uint64_t lineno, struct error *err);

/* What the log named: the policy file of its policy_loaded record and the
 * policy_sha256 of its records ("" when none). Borrowed from s. */
const char *suggest_log_policy_file(const struct suggest *s);
const char *suggest_log_policy_sha256(const struct suggest *s);

/* Merge what is subsumed (a file under a directory made writable, ...) and
 * sort out what base already allows or denies. Call once, after the last
 * suggest_add. */
void suggest_finish(struct suggest *s);

/* Denials read, and whether any addition is offered. */
uint64_t suggest_denials(const struct suggest *s);
bool suggest_has_additions(const struct suggest *s);

/* The denials no addition answers, as YAML comment lines. */
void suggest_print_unanswered(const struct suggest *s, FILE *f);

/* The additions alone, as a YAML fragment with a comment on each entry. */
void suggest_print_fragment(const struct suggest *s, FILE *f);

/* Merge the additions into p (normally a copy of base, loaded again). The
 * notes on the new entries are borrowed from s, which must outlive p's
 * printing. A learn-mode policy becomes an enforce-mode one: the log has
 * taught it what to allow. Returns 0, or a negative errno with err set. */
int suggest_merge(const struct suggest *s, struct policy *p, struct error *err);

#endif
