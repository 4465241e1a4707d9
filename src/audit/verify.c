/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `airlock audit verify`: read a log anyone may have edited and say whether
 * it is the one the session wrote, and if not, where and how it differs.
 *
 * The rules (docs/audit.md says the same for readers of the logs):
 *  - every line is one JSON object, at most AUDIT_LINE_MAX bytes with its
 *    newline, ending in `,"hash":"<64 hex>"}}` where the hash is SHA-256
 *    of the line up to that member (its canonical text);
 *  - airlock.seq counts from 1 without gaps; airlock.prev is the previous
 *    line's hash (64 zeros on line 1); airlock.session never changes;
 *  - line 1 is the session_start record, whose certificate the authority
 *    signed and whose session key signs every checkpoint and the seal;
 *  - a checkpoint or seal covers the record just before it and names its
 *    hash; nothing follows the seal.
 * A last line cut short (no newline, or not a record at all) is a crash
 * while writing, not tampering: the log is then reported torn and
 * unsealed.
 *
 * Nothing is allocated per line; a line is parsed in place.
 */
#include "audit/audit.h"
#include "doc/json.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/hex.h"

/* A record has about a hundred values; 512 leave room and bound the work
 * a hostile line can cause. */
#define VERIFY_TOKENS 512
#define VERIFY_DEPTH 16
/* Small enough that what was just read is still in the cache when it is
 * parsed and hashed; at least twice AUDIT_LINE_MAX. */
#define READ_CHUNK (256 * 1024)

static const char zero_hash[65] = "0000000000000000000000000000000000000000000000000000000000000000";

enum state {
	RUNNING,
	HUNTING, /* a seq gap: looking for the missing record further on */
	DONE,    /* tampered: rep says how */
};

struct verifier {
	struct audit_report *rep;
	const uint8_t *authority; /* the caller's, or NULL */
	enum state state;
	uint64_t line;           /* of the current line */
	uint64_t seq;            /* of the last good record */
	uint64_t signed_upto;    /* the highest seq a signature covers */
	char prev[65];           /* hash of the last good record */
	char session[37];
	char agent[128];         /* as the certificate has it; rep->agent is for display */
	char policy[65];
	uint8_t session_key[AUDIT_PUB_LEN];

	/* HUNTING */
	uint64_t want;           /* the missing seq */
	uint64_t gap_line;       /* the line where the jump showed */
	uint64_t gap_seq;        /* the seq found there */

	/* A line that is not a record: tampering, unless it is the last. */
	bool pending;
	uint64_t pending_line;
	char pending_why[256];

	struct doc_json_tok tok[VERIFY_TOKENS];
	struct doc_json_tok cert_tok[64];
	char cert[AUDIT_LINE_MAX]; /* the certificate, unescaped */
};

/* What one line holds, as token indices into v->tok. */
struct rec {
	struct doc_json j;
	int airlock;
	int kind, session, agent, policy, certificate, certificate_sig, authority, checkpoint;
	uint64_t seq;
	const char *prev;         /* 64 hex, into the line */
	const char *hash;         /* 64 hex, into the line */
	size_t canonical_len;
};

static void PRINTF_LIKE(3, 4) problem(struct verifier *v, uint64_t line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->rep->problem, sizeof(v->rep->problem), fmt, ap);
	va_end(ap);
	v->rep->bad_line = line;
	v->state = DONE;
}

/* A value from the log for a message: printable ASCII as it is, anything
 * else as '?', cut to fit. The log may hold terminal escapes. */
static const char *shown(const struct doc_json *j, int t, char *buf, size_t cap)
{
	if (t < 0) {
		snprintf(buf, cap, "(none)");
		return buf;
	}
	const struct doc_json_tok *tk = &j->tok[t];
	size_t n = tk->len, k = 0;
	for (; k < n && k + 4 < cap; k++) {
		unsigned char c = (unsigned char)j->text[tk->start + k];
		buf[k] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (k < n && cap >= 4)
		memcpy(buf + k, "...", 3), k += 3;
	buf[k] = '\0';
	return buf;
}

/* Hex a token holds: doc_json_is_hex checked its length and digits
 * before any of these is decoded. */
static void unhex(const char *s, uint8_t *out, size_t n)
{
	(void)hex_decode(s, 2 * n, out, n);
}

/* Whether token t is the string literal s, as written (keys of our own
 * records are never escaped). */
static inline bool tok_eq(const struct doc_json *j, int t, const char *s, size_t n)
{
	return t >= 0 && j->tok[t].len == n && j->tok[t].type == DOC_JSON_STRING && !j->tok[t].escaped &&
	       memcmp(j->text + j->tok[t].start, s, n) == 0;
}

#define tok_is(j, t, lit) tok_eq(j, t, "" lit, sizeof(lit) - 1)

/* Parse a line into r: the JSON, the airlock object as the record's last
 * member, and seq, prev, hash as its last three. Returns NULL, or why the
 * line is not a record. */
static const char *parse_line(struct verifier *v, const char *line, size_t len, struct rec *r, char *why,
			      size_t whycap)
{
	static const char head[] = ",\"hash\":\"";
	memset(r, 0, sizeof(*r));
	r->airlock = r->kind = r->session = r->agent = r->policy = -1;
	r->certificate = r->certificate_sig = r->authority = r->checkpoint = -1;
	/* The literal tail first: cheap, and it pins where the canonical text
	 * ends before anything else is read. */
	if (len < AUDIT_HASH_SUFFIX_LEN + 2 || memcmp(line + len - 3, "\"}}", 3) != 0 ||
	    memcmp(line + len - AUDIT_HASH_SUFFIX_LEN, head, sizeof(head) - 1) != 0)
		return "it does not end in its hash member";
	if (doc_json_parse(&r->j, line, len, v->tok, VERIFY_TOKENS, VERIFY_DEPTH) < 0) {
		snprintf(why, whycap, "%s at byte %zu", r->j.err, r->j.err_at + 1);
		return why;
	}
	const struct doc_json *j = &r->j;
	const struct doc_json_tok *t = v->tok;
	if (t[0].type != DOC_JSON_OBJECT || t[0].end < 3)
		return "it is not a JSON object";
	int last = 1;
	while ((int)t[last + 1].end < (int)t[0].end)
		last = (int)t[last + 1].end;
	if (!tok_is(j, last, "airlock") || t[last + 1].type != DOC_JSON_OBJECT)
		return "its last member is not the airlock object";
	r->airlock = last + 1;
	/* The airlock object's members, and the keys of its last three. */
	int k3[3] = { -1, -1, -1 };
	for (int m = r->airlock + 1; m < (int)t[r->airlock].end; m = (int)t[m + 1].end) {
		k3[0] = k3[1], k3[1] = k3[2], k3[2] = m;
		int val = m + 1;
		if (tok_is(j, m, "kind"))
			r->kind = val;
		else if (tok_is(j, m, "session"))
			r->session = val;
		else if (tok_is(j, m, "agent"))
			r->agent = val;
		else if (tok_is(j, m, "policy_sha256"))
			r->policy = val;
		else if (tok_is(j, m, "certificate"))
			r->certificate = val;
		else if (tok_is(j, m, "certificate_sig"))
			r->certificate_sig = val;
		else if (tok_is(j, m, "authority"))
			r->authority = val;
		else if (tok_is(j, m, "checkpoint"))
			r->checkpoint = val;
	}
	if (!tok_is(j, k3[0], "seq") || !tok_is(j, k3[1], "prev") || !tok_is(j, k3[2], "hash"))
		return "the airlock object does not end in seq, prev and hash";
	int64_t seq;
	if (doc_json_int(j, k3[0] + 1, &seq) < 0 || seq < 1)
		return "airlock.seq is not a positive integer";
	/* prev and hash are only compared with hashes in hex, which any other
	 * 64 bytes fail; their length is what matters here. */
	if (t[k3[1] + 1].type != DOC_JSON_STRING || t[k3[1] + 1].len != 64)
		return "airlock.prev is not 64 hex digits";
	/* The hash member parsed is the literal tail checked above: its value
	 * starts 67 bytes before the end. */
	if (t[k3[2] + 1].type != DOC_JSON_STRING || t[k3[2] + 1].len != 64 || t[k3[2] + 1].start != len - 67)
		return "airlock.hash is not 64 hex digits";
	if (r->kind < 0 || t[r->kind].type != DOC_JSON_STRING)
		return "airlock.kind is missing";
	if (r->session < 0 || t[r->session].type != DOC_JSON_STRING)
		return "airlock.session is missing";
	r->seq = (uint64_t)seq;
	r->prev = line + t[k3[1] + 1].start;
	r->hash = line + t[k3[2] + 1].start;
	r->canonical_len = len - AUDIT_HASH_SUFFIX_LEN;
	return NULL;
}

/* Line 1: the certificate and what it binds. */
static void check_start(struct verifier *v, struct rec *r)
{
	const struct doc_json *j = &r->j;
	char a[48], b[48];
	if (!tok_is(j, r->kind, "session_start")) {
		problem(v, v->line,
			"the log does not begin with its session_start record: line 1 is a \"%s\" record (seq %" PRIu64
			")",
			shown(j, r->kind, a, sizeof(a)), r->seq);
		return;
	}
	if (r->seq != 1 || memcmp(r->prev, zero_hash, 64) != 0) {
		problem(v, v->line,
			"the session_start record has seq %" PRIu64 " and prev %.8s...: not seq 1 after 64 zeros", r->seq,
			r->prev);
		return;
	}
	if (r->certificate < 0 || !doc_json_is_hex(j, r->certificate_sig, 2 * AUDIT_SIG_LEN) ||
	    !doc_json_is_hex(j, r->authority, 2 * AUDIT_PUB_LEN)) {
		problem(v, v->line, "the session_start record lacks its certificate, certificate_sig or authority");
		return;
	}
	int clen = doc_json_str(j, r->certificate, v->cert, sizeof(v->cert));
	struct doc_json c;
	if (clen < 0 ||
	    doc_json_parse(&c, v->cert, (size_t)clen, v->cert_tok, ARRAY_SIZE(v->cert_tok), 1) < 0 ||
	    v->cert_tok[0].type != DOC_JSON_OBJECT) {
		problem(v, v->line, "the certificate is not a JSON object");
		return;
	}
	static const char *const strings[] = { "agent", "session", "boundary", "policy_sha256", "host" };
	int cv[ARRAY_SIZE(strings)];
	for (size_t k = 0; k < ARRAY_SIZE(strings); k++) {
		cv[k] = doc_json_member(&c, 0, strings[k]);
		if (cv[k] < 0 || v->cert_tok[cv[k]].type != DOC_JSON_STRING) {
			problem(v, v->line, "the certificate has no %s", strings[k]);
			return;
		}
	}
	int64_t t;
	if (doc_json_int(&c, doc_json_member(&c, 0, "not_before"), &t) < 0 ||
	    doc_json_int(&c, doc_json_member(&c, 0, "not_after"), &t) < 0) {
		problem(v, v->line, "the certificate has no not_before or not_after");
		return;
	}
	int skey = doc_json_member(&c, 0, "session_key"), cauth = doc_json_member(&c, 0, "authority");
	if (!doc_json_is_hex(&c, skey, 2 * AUDIT_PUB_LEN) || !doc_json_is_hex(&c, cauth, 2 * AUDIT_PUB_LEN)) {
		problem(v, v->line, "the certificate's session_key or authority is not 64 hex digits");
		return;
	}
	const char *rec_auth = j->text + j->tok[r->authority].start;
	if (memcmp(c.text + c.tok[cauth].start, rec_auth, 64) != 0) {
		problem(v, v->line, "the certificate names authority %.64s, the record %.64s", c.text + c.tok[cauth].start,
			rec_auth);
		return;
	}
	if (v->authority) {
		char given[65];
		hex_encode(v->authority, AUDIT_PUB_LEN, given);
		if (memcmp(given, rec_auth, 64) != 0) {
			problem(v, v->line, "signed by authority %.64s, not the one given", rec_auth);
			return;
		}
	}
	uint8_t auth[AUDIT_PUB_LEN], sig[AUDIT_SIG_LEN];
	unhex(rec_auth, auth, sizeof(auth));
	unhex(j->text + j->tok[r->certificate_sig].start, sig, sizeof(sig));
	if (!audit_sig_ok(auth, v->cert, (size_t)clen, sig)) {
		problem(v, v->line, "bad certificate signature: it does not verify with authority %.64s", rec_auth);
		return;
	}
	/* The certificate's identity is the session's; every record repeats it. */
	if (doc_json_str(&c, cv[1], v->session, sizeof(v->session)) < 0 ||
	    doc_json_str(&c, cv[3], v->policy, sizeof(v->policy)) < 0 ||
	    doc_json_str(&c, cv[0], v->agent, sizeof(v->agent)) < 0) {
		problem(v, v->line, "the certificate's session, agent or policy_sha256 is too long");
		return;
	}
	/* The session id goes into messages and file names: a UUID's
	 * characters only. */
	if (strspn(v->session, "0123456789abcdef-") != strlen(v->session) || !v->session[0]) {
		problem(v, v->line, "the certificate's session is not a UUID");
		return;
	}
	const struct {
		const char *name;
		int rec_tok;
		const char *cert;
	} same[] = {
		{ "session", r->session, v->session },
		{ "agent", r->agent, v->agent },
		{ "policy_sha256", r->policy, v->policy },
	};
	for (size_t k = 0; k < ARRAY_SIZE(same); k++)
		if (same[k].rec_tok < 0 || !doc_json_key_is(j, same[k].rec_tok, same[k].cert)) {
			snprintf(b, sizeof(b), "%s", same[k].cert);
			for (char *p = b; *p; p++)
				if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
					*p = '?';
			problem(v, v->line, "the certificate is for %s \"%s\", the log for \"%s\"", same[k].name, b,
				shown(j, same[k].rec_tok, a, sizeof(a)));
			return;
		}
	memcpy(v->rep->session_id, v->session, sizeof(v->session));
	/* For display: the agent's name may hold terminal escapes. */
	for (size_t k = 0; k < sizeof(v->agent) && v->agent[k]; k++) {
		unsigned char ch = (unsigned char)v->agent[k];
		v->rep->agent[k] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
		v->rep->agent[k + 1] = '\0';
	}
	unhex(c.text + c.tok[skey].start, v->session_key, sizeof(v->session_key));
}

/* A checkpoint or the seal: the session key signs the head it names. */
static void check_checkpoint(struct verifier *v, struct rec *r, bool seal)
{
	const struct doc_json *j = &r->j;
	const char *what = seal ? "seal" : "checkpoint";
	int cp = r->checkpoint;
	int covers = doc_json_member(j, cp, "covers_seq"), head = doc_json_member(j, cp, "head"),
	    sig = doc_json_member(j, cp, "sig");
	int64_t n;
	if (cp < 0 || doc_json_int(j, covers, &n) < 0 || !doc_json_is_hex(j, head, 64) ||
	    !doc_json_is_hex(j, sig, 2 * AUDIT_SIG_LEN)) {
		problem(v, v->line, "a %s record (seq %" PRIu64 ") without a well-formed checkpoint object", what, r->seq);
		return;
	}
	if ((uint64_t)n != r->seq - 1) {
		problem(v, v->line, "the %s covers seq %" PRId64 " but follows seq %" PRIu64, what, n, r->seq - 1);
		return;
	}
	const char *h = j->text + j->tok[head].start;
	if (memcmp(h, r->prev, 64) != 0) {
		problem(v, v->line, "the %s's head is not the hash of seq %" PRIu64, what, r->seq - 1);
		return;
	}
	char msg[256];
	int len = snprintf(msg, sizeof(msg), "airlock-%s\n%s\n%" PRIu64 "\n%.64s\n", what, v->session, (uint64_t)n, h);
	uint8_t s[AUDIT_SIG_LEN];
	unhex(j->text + j->tok[sig].start, s, sizeof(s));
	if (len < 0 || (size_t)len >= sizeof(msg) || !audit_sig_ok(v->session_key, msg, (size_t)len, s)) {
		problem(v, v->line,
			"bad %s signature (seq %" PRIu64 "): it does not verify with the certificate's session key", what,
			r->seq);
		return;
	}
	v->signed_upto = (uint64_t)n;
	if (seal)
		v->rep->sealed = true;
	else
		v->rep->checkpoints++;
}

static void line_full(struct verifier *v, const char *line, size_t len)
{
	struct rec r;
	char why[160], a[48], b[48];
	const char *bad = parse_line(v, line, len, &r, why, sizeof(why));
	if (bad) {
		/* Tampering if another line follows; a crash if none does. */
		v->pending = true;
		v->pending_line = v->line;
		snprintf(v->pending_why, sizeof(v->pending_why), "not a record: %s", bad);
		return;
	}
	const struct doc_json *j = &r.j;
	char hash[65];
	audit_sha256_hex(line, r.canonical_len, hash);
	if (!hash[0] || memcmp(hash, r.hash, 64) != 0) {
		problem(v, v->line, "hash mismatch: the record (seq %" PRIu64 ") was edited after it was written", r.seq);
		return;
	}
	if (v->line == 1) {
		check_start(v, &r);
		if (v->state == DONE)
			return;
	} else {
		if (!doc_json_key_is(j, r.session, v->session)) {
			problem(v, v->line, "the session changes from %s to \"%s\"", v->session,
				shown(j, r.session, a, sizeof(a)));
			return;
		}
		if (r.seq > v->seq + 1) {
			v->state = HUNTING;
			v->want = v->seq + 1;
			v->gap_line = v->line;
			v->gap_seq = r.seq;
			return;
		}
		if (r.seq <= v->seq) {
			if (r.seq == v->seq && memcmp(r.hash, v->prev, 64) == 0)
				problem(v, v->line, "seq %" PRIu64 " appears twice: line %" PRIu64 " duplicates line %" PRIu64,
					r.seq, v->line, v->line - 1);
			else if (r.seq == v->seq)
				problem(v, v->line,
					"seq %" PRIu64 " appears twice, on lines %" PRIu64 " and %" PRIu64
					": a record was inserted",
					r.seq, v->line - 1, v->line);
			else
				problem(v, v->line,
					"seq %" PRIu64 " after seq %" PRIu64 ": a record was inserted or duplicated", r.seq,
					v->seq);
			return;
		}
		if (memcmp(r.prev, v->prev, 64) != 0) {
			problem(v, v->line,
				"the chain is broken: prev of seq %" PRIu64 " is not the hash of seq %" PRIu64
				" on the line before; a record was inserted, removed or changed there",
				r.seq, v->seq);
			return;
		}
		if (r.agent < 0 || !doc_json_key_is(j, r.agent, v->agent) || r.policy < 0 ||
		    !doc_json_key_is(j, r.policy, v->policy)) {
			problem(v, v->line, "seq %" PRIu64 " names agent \"%s\" or policy \"%s\", not the certificate's", r.seq,
				shown(j, r.agent, a, sizeof(a)), shown(j, r.policy, b, sizeof(b)));
			return;
		}
		if (tok_is(j, r.kind, "session_start")) {
			problem(v, v->line, "a second session_start record (seq %" PRIu64 ")", r.seq);
			return;
		}
		bool seal = tok_is(j, r.kind, "seal");
		if (seal || tok_is(j, r.kind, "checkpoint")) {
			check_checkpoint(v, &r, seal);
			if (v->state == DONE)
				return;
		}
	}
	v->seq = r.seq;
	memcpy(v->prev, r.hash, 64);
	v->prev[64] = '\0';
	v->rep->records++;
}

/* After a gap: is the missing record further on (the records were moved),
 * or nowhere (it was deleted)? */
static void line_hunt(struct verifier *v, const char *line, size_t len)
{
	struct rec r;
	char why[160];
	if (parse_line(v, line, len, &r, why, sizeof(why)))
		return;
	if (r.seq == v->want)
		problem(v, v->gap_line,
			"records out of order: seq %" PRIu64 " is on line %" PRIu64 ", after seq %" PRIu64 " on line %" PRIu64,
			v->want, v->line, v->gap_seq, v->gap_line);
}

static void verify_line(struct verifier *v, const char *line, size_t len, bool newline)
{
	v->line++;
	if (v->state == HUNTING) {
		line_hunt(v, line, len);
		return;
	}
	if (v->pending) {
		problem(v, v->pending_line, "%s", v->pending_why);
		return;
	}
	if (v->rep->sealed) {
		problem(v, v->line, "line %" PRIu64 " follows the seal", v->line);
		return;
	}
	if (!newline) {
		/* One write(2) per line: a line without its newline is the end
		 * of a write a crash cut short. */
		v->pending = true;
		v->pending_line = v->line;
		snprintf(v->pending_why, sizeof(v->pending_why), "not a record: no newline");
		return;
	}
	line_full(v, line, len);
}

static void covered(struct verifier *v, char *out, size_t cap)
{
	if (v->signed_upto == 0)
		snprintf(out, cap, "no signature covers any record; the hash chain alone links all %" PRIu64, v->seq);
	else
		snprintf(out, cap,
			 "seq 1..%" PRIu64 " are covered by a checkpoint signature, the %" PRIu64
			 " after them by the hash chain only",
			 v->signed_upto, v->seq - v->signed_upto);
}

static int finish(struct verifier *v)
{
	struct audit_report *rep = v->rep;
	char cov[200];
	if (v->state == HUNTING) {
		uint64_t n = v->gap_seq - v->want;
		problem(v, v->gap_line,
			"seq jumps from %" PRIu64 " to %" PRIu64 ": %" PRIu64 " record%s deleted", v->want - 1, v->gap_seq, n,
			n == 1 ? " was" : "s were");
	}
	if (v->state == DONE)
		return 2;
	if (v->pending) {
		rep->torn_tail = true;
		rep->bad_line = v->pending_line;
		if (rep->records == 0) {
			snprintf(rep->problem, sizeof(rep->problem),
				 "torn last line: the log holds no complete session_start record");
			return 2;
		}
		covered(v, cov, sizeof(cov));
		snprintf(rep->problem, sizeof(rep->problem),
			 "torn last line (line %" PRIu64 "); unsealed: the log ends at seq %" PRIu64 " without a seal; %s",
			 v->pending_line, v->seq, cov);
		return 1;
	}
	if (rep->records == 0) {
		snprintf(rep->problem, sizeof(rep->problem), "the log is empty: no session_start record");
		return 2;
	}
	if (rep->sealed)
		return 0;
	covered(v, cov, sizeof(cov));
	snprintf(rep->problem, sizeof(rep->problem), "unsealed: the log ends at seq %" PRIu64 " without a seal; %s", v->seq,
		 cov);
	return 1;
}

static void cleanup_verifier(struct verifier **v)
{
	free(*v);
}

int audit_verify_file(const char *path, const uint8_t *authority, struct audit_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	_cleanup_(cleanup_verifier) struct verifier *v = calloc(1, sizeof(*v));
	_cleanup_free_ char *buf = malloc(READ_CHUNK);
	if (!v || !buf) {
		snprintf(rep->problem, sizeof(rep->problem), "out of memory");
		return 2;
	}
	v->rep = rep;
	v->authority = authority;
	memcpy(v->prev, zero_hash, sizeof(v->prev));
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(rep->problem, sizeof(rep->problem), "cannot open %s: %s", path, strerror(errno));
		return 2;
	}
	size_t have = 0, off = 0;
	bool eof = false;
	while (v->state != DONE) {
		char *nl = memchr(buf + off, '\n', have - off);
		if (nl) {
			size_t len = (size_t)(nl - (buf + off));
			if (len + 1 > AUDIT_LINE_MAX) {
				problem(v, v->line + 1, "line %" PRIu64 " is longer than %d bytes", v->line + 1, AUDIT_LINE_MAX);
				break;
			}
			verify_line(v, buf + off, len, true);
			off += len + 1;
			continue;
		}
		if (have - off >= AUDIT_LINE_MAX) {
			problem(v, v->line + 1, "line %" PRIu64 " is longer than %d bytes", v->line + 1, AUDIT_LINE_MAX);
			break;
		}
		if (eof) {
			if (have > off)
				verify_line(v, buf + off, have - off, false);
			break;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
		off = 0;
		ssize_t n;
		do
			n = read(fd, buf + have, READ_CHUNK - have);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			snprintf(rep->problem, sizeof(rep->problem), "cannot read %s: %s", path, strerror(errno));
			rep->bad_line = v->line + 1;
			return 2;
		}
		if (n == 0)
			eof = true;
		have += (size_t)n;
	}
	return finish(v);
}
