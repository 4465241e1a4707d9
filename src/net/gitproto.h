/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_GITPROTO_H
#define AIRLOCK_NET_GITPROTO_H

/*
 * Git smart HTTP, as far as the egress proxy must understand it to decide
 * whether a credential bound to git operations (struct policy_git_binding)
 * may be injected into a request: which operation a request is, on which
 * repository, and for a push which refs it updates. Everything is decided
 * before a byte of the request reaches the server, so a push is held back
 * until its command list (the pkt-lines before the pack) has arrived.
 *
 * Pure functions, no I/O, no allocation. Every input is agent-controlled;
 * anything a server could read differently from us (encoded paths, dot
 * segments, a service named twice, ref names git itself would refuse) is
 * refused rather than interpreted.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define GIT_PKT_MAX 65520       /* largest pkt-line, its 4 length bytes included */
#define GIT_OID_HEX_SHA1 40
#define GIT_OID_HEX_SHA256 64
#define GIT_REF_MAX 255         /* longest ref name we accept, in bytes */
#define GIT_REPO_MAX 1024       /* longest repository path we classify */

enum git_op {
	GIT_OP_NONE,             /* not git smart HTTP (or not in a shape we accept) */
	GIT_OP_FETCH_ADVERTISE,  /* GET .../info/refs?service=git-upload-pack */
	GIT_OP_FETCH,            /* POST .../git-upload-pack */
	GIT_OP_PUSH_ADVERTISE,   /* GET .../info/refs?service=git-receive-pack */
	GIT_OP_PUSH,             /* POST .../git-receive-pack */
};

/* A printable name of op ("fetch", "push advertisement", ...); static. */
const char *git_op_name(enum git_op op);

/*
 * Classify a request by method, path and query (the query without its
 * '?', NULL or empty when absent; path and query need not be
 * NUL-terminated). On a git operation the repository path, the part of
 * path before "/info/refs", "/git-upload-pack" or "/git-receive-pack"
 * ("/acme/widget.git"), is copied NUL-terminated into repo (repo_len
 * bytes, caller-owned; GIT_REPO_MAX + 1 always suffices); otherwise repo
 * gets "". repo may be NULL when only the operation is wanted.
 *
 * Accepted shapes, exactly (anything else is GIT_OP_NONE, so that the
 * caller denies the credential):
 *  - GET  <repo>/info/refs?service=git-upload-pack      FETCH_ADVERTISE
 *  - GET  <repo>/info/refs?service=git-receive-pack     PUSH_ADVERTISE
 *  - POST <repo>/git-upload-pack       (no query)       FETCH
 *  - POST <repo>/git-receive-pack      (no query)       PUSH
 * The query must be that one parameter and nothing else: a second
 * service= (servers disagree on which one wins), any other parameter, or
 * an unknown service is GIT_OP_NONE; so is info/refs without a service
 * (the dumb protocol, which reads files and carries no operation).
 * Methods are case-sensitive (RFC 9110).
 *
 * The path must start with '/', be at most GIT_REPO_MAX bytes before its
 * suffix, hold at least one byte of repository after the '/', and consist
 * of printable ASCII other than '%', '\\', ';', '?' and '#', with no empty
 * ("//"), "." or ".." segment: a server would decode, normalise or split
 * those into a repository other than the one the policy matched.
 */
enum git_op git_classify(const char *method, const char *path, size_t path_len, const char *query,
			 size_t query_len, char *repo, size_t repo_len);

/* One command of a push: old and new object ids as lower-case hex (both
 * 40 digits for SHA-1 or both 64 for SHA-256, NUL-terminated; all zeros
 * in old for a creation, in new for a deletion) and the full ref name. */
struct git_ref_update {
	char old_id[GIT_OID_HEX_SHA256 + 1];
	char new_id[GIT_OID_HEX_SHA256 + 1];
	char ref[GIT_REF_MAX + 1];
};

/*
 * Parse the command list at the start of a git-receive-pack request body
 * (gitprotocol-pack, "Reference Update Request"): len bytes at body
 * (caller-owned, read only), commands into out[0..max) (caller-owned; out
 * may be NULL when max is 0).
 *
 * Returns
 *   1         the list is complete: *n_out commands were parsed and
 *             *consumed is the offset just past its flush-pkt (the pack
 *             and any push options follow, and are not looked at);
 *   0         body is incomplete: more bytes are needed (an empty body,
 *             or a cut inside a pkt-line or before the flush);
 *   -EINVAL   malformed;
 *   -ENOTSUP  a signed push (push-cert), which we do not parse;
 *   -E2BIG    more than max commands.
 * *n_out and *consumed are 0, and out's contents unspecified, unless 1
 * is returned. The function keeps no state: call it again on the whole,
 * longer body; the caller bounds how many bytes it buffers and denies
 * when the bound is reached with 0.
 *
 * Accepted: pkt-lines of 4 hex digits (either case) giving the length
 * with those 4 bytes, 5..GIT_PKT_MAX, then "0000" (flush); lengths 1..4
 * are refused. Optional "shallow <id>" lines come first, then commands
 * "<old> SP <new> SP <ref>", the first of which may carry NUL and a
 * capability list of printable ASCII (only the first: a later NUL is
 * refused, since receive-pack would read capabilities from any line).
 * Each line may end in one LF. Ids are lower-case hex, all of one length
 * (40 or 64, shallow lines included) and agreeing with an
 * "object-format=" capability when one is given; old and new are never
 * both zero. A ref name starts with "refs/" ("HEAD" is refused), is at
 * most GIT_REF_MAX bytes and follows git-check-ref-format: no control
 * character, space, '~', '^', ':', '?', '*', '[' or '\\', no "..", "@{"
 * or "//", no component starting with '.' or ending in ".lock", and no
 * trailing '/' or '.'. A flush alone (the "0000" probe git sends before a
 * large push), or shallow lines and a flush, is a complete list of no
 * commands.
 */
int git_parse_push_commands(const uint8_t *body, size_t len, struct git_ref_update *out, size_t max,
			    size_t *n_out, size_t *consumed) __attribute__((warn_unused_result));

/* Whether ref (a NUL-terminated string) is a name git_parse_push_commands
 * accepts. */
bool git_refname_ok(const char *ref);

/*
 * Decide whether b allows the operation op on repo (as given by
 * git_classify) with, for GIT_OP_PUSH, the n commands at u (as parsed by
 * git_parse_push_commands; u may be NULL when n is 0). All pointers are
 * borrowed. On a denial, reason (reason_len bytes, caller-owned, may be
 * NULL) says what was denied and what would allow it; on an allow it
 * gets "".
 *
 *  - repo must match one of b->repos (NULL: any). A repository path
 *    without ".git" is also tried with ".git" appended, since servers
 *    serve "/acme/widget" and "/acme/widget.git" as one repository: the
 *    glob "/acme/widget.git" allows both. The reverse is not tried.
 *  - Fetch and its advertisement need b->fetch.
 *  - A push advertisement, and a push of no commands (the probe), need
 *    some push permission: a push glob or b->tags.
 *  - A push needs every command allowed; the first that is not is named:
 *      deletion (new id zero): b->delete_refs and a push glob matching
 *        the ref, and for refs/tags/... also b->tags;
 *      refs/tags/...: b->tags, and only a creation (old id zero): moving
 *        an existing tag is refused whatever the policy;
 *      any other ref: a push glob matching it.
 *    Whether an update is a fast-forward cannot be told from the
 *    commands, so a push glob allows forced updates too.
 *    A ref holding '%' is refused: globs decode %XX (for URL paths), so
 *    "refs/heads/m%61in" would match a glob meant for "refs/heads/main".
 *  - GIT_OP_NONE is always denied.
 */
bool git_decide(const struct policy_git_binding *b, enum git_op op, const char *repo,
		const struct git_ref_update *u, size_t n, char *reason, size_t reason_len);

#endif
