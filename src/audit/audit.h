/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_AUDIT_AUDIT_H
#define AIRLOCK_AUDIT_AUDIT_H

/*
 * Signed decision records.
 *
 * Every decision of a session becomes one JSON line in OCSF form with an
 * `airlock` extension object. Lines are chained: each carries its sequence
 * number, the previous line's hash and its own hash, SHA-256 over its
 * canonical text (the line as written without its `"hash":"..."` member,
 * which is always the last member of the `airlock` object, itself the last
 * member of the record). The session's Ed25519 key, certified by a local
 * authority key, signs a checkpoint line every N lines and every T seconds
 * and a seal line at the end. `airlock audit verify` needs only the
 * authority's public key.
 *
 * airlock-audit links this library (and libcrypto); it runs outside the
 * sandbox, where the agent cannot reach the log or the keys. airlock-proxy
 * links it for identity.c alone (the Airlock-Identity header, signed with
 * the session key the writer hands over when identity.header is on).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/buf.h"
#include "util/error.h"

/* ---- events: flat JSON objects in, from the supervisor and the proxy ---- */

#define AUDIT_EVENT_MAX_FIELDS 32
#define AUDIT_EVENT_MAX_LINE 8192

/* A value of a flat JSON object: a string (unescaped, NUL-terminated; may
 * hold any byte but NUL), an integer, or a boolean. */
struct audit_value {
	enum { AUDIT_STR, AUDIT_INT, AUDIT_BOOL } type;
	const char *s; /* AUDIT_STR: into the event's own storage */
	int64_t i;
	bool b;
};

struct audit_event {
	size_t n;
	struct {
		char key[32];
		struct audit_value v;
	} f[AUDIT_EVENT_MAX_FIELDS];
	char store[AUDIT_EVENT_MAX_LINE]; /* unescaped strings live here */
};

/* Parse one line holding one flat JSON object (string, integer, true,
 * false values; no nesting, no floats, no null; keys of at most 31 bytes,
 * unique; at most AUDIT_EVENT_MAX_FIELDS; strict JSON escapes). Returns 0
 * or -EINVAL. Never reads past len. */
int audit_event_parse(const char *line, size_t len, struct audit_event *ev);

/* A field's string value, or NULL when absent or not a string. */
const char *audit_event_str(const struct audit_event *ev, const char *key);
/* A field's integer value, or def. */
int64_t audit_event_int(const struct audit_event *ev, const char *key, int64_t def);

/* ---- the session's identity ---- */

struct audit_session {
	char agent[128];          /* identity.agent, or "agent" */
	char session_id[37];      /* UUIDv7, text */
	char boundary[16];        /* process | gvisor | microvm */
	char policy_sha256[65];   /* hex of the policy file's bytes */
	char host[256];           /* the machine's host name */
	char mode[16];            /* enforce | learn | observe */
	bool enforced;            /* false only in observe mode */
};

/* ---- records ---- */

/* OCSF classes used (class_uid; category_uid = class_uid / 1000). */
#define AUDIT_CLASS_FILE 1001       /* File System Activity */
#define AUDIT_CLASS_PROCESS 1007    /* Process Activity */
#define AUDIT_CLASS_FINDING 2004    /* Detection Finding: leaks, credential misuse */
#define AUDIT_CLASS_NETWORK 4001    /* Network Activity: CONNECT, TLS tunnels */
#define AUDIT_CLASS_HTTP 4002       /* HTTP Activity */
#define AUDIT_CLASS_DNS 4003        /* DNS Activity */
#define AUDIT_CLASS_API 6003        /* API Activity: MCP, and the session's own records */

/* A log line, its newline included, is at most AUDIT_LINE_MAX bytes: the
 * verifier takes a longer one for tampering. audit_record_build keeps the
 * canonical text within AUDIT_CANONICAL_MAX, which leaves room for the
 * hash member (`,"hash":"<64 hex>"}}`) and the newline, by cutting the
 * longest strings of the agent's choosing shorter. */
#define AUDIT_LINE_MAX 65536
#define AUDIT_HASH_SUFFIX_LEN 76
#define AUDIT_CANONICAL_MAX (AUDIT_LINE_MAX - AUDIT_HASH_SUFFIX_LEN - 1)

/* Build the canonical text of the record for ev (a record without its
 * hash: the `airlock` object is left open, ending in the `prev` member).
 * ev's "kind" says what it is: the proxy's kinds (http, connect,
 * tunnel-request, transparent, transparent-tls, dns, leak,
 * credential_misuse, git, malformed), and the supervisor's
 * (session_start, session_end, policy_loaded, file_denied, exec_denied,
 * syscall_denied, checkpoint, seal). Appends to out. */
int audit_record_build(const struct audit_event *ev, const struct audit_session *s, uint64_t seq,
		       const char prev_hex[65], int64_t time_ms, struct buf *out);

/* ---- the chain ---- */

struct audit_chain {
	uint64_t seq;          /* of the next record, from 1 */
	char prev[65];         /* hex hash of the last record; 64 '0' at the start */
	int fd;                /* the log, O_APPEND */
	struct buf *batch;     /* when not NULL: finished lines collect here until
	                        * audit_chain_flush writes them (one write(2) for
	                        * all the records of a burst) */
};

/* Append one record (its canonical text as built by audit_record_build):
 * hash it, close the `airlock` object with the hash, write the line with
 * one write(2), advance seq and prev. Returns 0 or a negative errno. */
int audit_chain_append(struct audit_chain *c, struct buf *canonical, struct error *err);

/* Write the lines collected in c->batch with one write(2). */
int audit_chain_flush(struct audit_chain *c, struct error *err);

/* SHA-256 of buf as 64 lower-case hex digits. */
void audit_sha256_hex(const void *buf, size_t len, char out[65]);

/* ---- keys and signatures (Ed25519) ----
 * sign.c implements these with libcrypto (the verifier, the proxy);
 * key_sodium.c with libsodium, for airlock-audit-writer, which must start
 * without loading libcrypto (writer.c). The key file and the signatures
 * are the same from either. */

#define AUDIT_PUB_LEN 32
#define AUDIT_SIG_LEN 64

struct audit_key;

/* A fresh key pair. */
int audit_key_generate(struct audit_key **out, struct error *err);
/* Load the PEM private key at path, or create it (0600, parent directory
 * made 0700) when absent. */
int audit_key_load_or_create(const char *path, struct audit_key **out, struct error *err);
/* Load the PEM private key at path; -ENOENT when there is none. */
int audit_key_load(const char *path, struct audit_key **out, struct error *err);
void audit_key_free(struct audit_key *k);
/* The private key's 32-byte seed (RFC 8032), for handing the session key
 * to the egress proxy; the caller wipes it. */
int audit_key_seed(const struct audit_key *k, uint8_t seed[32]);
void audit_key_public(const struct audit_key *k, uint8_t pub[AUDIT_PUB_LEN]);
int audit_sign(const struct audit_key *k, const void *msg, size_t len, uint8_t sig[AUDIT_SIG_LEN]);
bool audit_sig_ok(const uint8_t pub[AUDIT_PUB_LEN], const void *msg, size_t len, const uint8_t sig[AUDIT_SIG_LEN]);
/* A public key from a file: PEM (SubjectPublicKeyInfo), or one line of 64
 * hex digits. */
int audit_pub_load(const char *path, uint8_t pub[AUDIT_PUB_LEN], struct error *err);
/* A UUIDv7 (RFC 9562) in text form (session.c). */
int audit_uuid7(char out[37]);
/* SHA-256 of the policy file's bytes, "none" for the built-in default,
 * which has no file (session.c). */
void audit_policy_sha256(const char *path, char out[65]);

/* ---- verification ---- */

struct audit_report {
	uint64_t records;      /* well-formed records read */
	uint64_t checkpoints;
	bool sealed;
	bool torn_tail;        /* the last line is incomplete (a crash while writing) */
	uint64_t bad_line;     /* 1-based line of the first problem, 0 when none */
	char problem[512];     /* what is wrong there, "" when nothing */
	char session_id[37];
	char agent[128];
};

/* Verify the log at path: certificate (against authority when given, else
 * only self-consistency is reported as unanchored), every hash, prev link,
 * sequence number, checkpoint and seal signature. Returns 0 when the log
 * is intact and sealed, 1 when intact but unsealed or torn at the end, 2
 * when tampered or unreadable; rep says what and where. */
int audit_verify_file(const char *path, const uint8_t *authority /* AUDIT_PUB_LEN or NULL */,
		      struct audit_report *rep);

#endif
