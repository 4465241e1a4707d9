/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An event becomes the canonical text of one OCSF 1.3.0 record.
 *
 * The text is a function of its inputs alone: members in a fixed order, no
 * whitespace, strings escaped by buf_json_string, integers in plain
 * decimal. The verifier hashes the bytes as written, so nothing here needs
 * to be reproducible by anyone else; but two builds of one event must not
 * differ, or a golden-line test could not pin the format down.
 *
 * The agent chooses many of the strings (host names, paths, reasons). They
 * are escaped, never interpreted, and the record is kept under
 * AUDIT_LINE_MAX by cutting the longest of them shorter (see
 * audit_record_build), never by dropping the record.
 */
#include "audit/audit.h"

#include <errno.h>
#include <string.h>

#include "util/cleanup.h"

#define OCSF_SCHEMA_VERSION "1.3.0"

/* ---- what each kind of event becomes ---- */

enum activity_rule {
	ACT_FIXED,       /* the table's activity_id */
	ACT_HTTP_METHOD, /* HTTP Activity: from the request method */
	ACT_CONNECTION,  /* Network Activity: Open when let through, Refuse when blocked */
	ACT_FILE_OP,     /* File System Activity: from the denied system call */
};

/* WARNING: docs/audit.md carries this table for readers of the logs; keep
 * the two in step. Activity ids are OCSF 1.3.0's for each class:
 *   1001 File System Activity: see file_activity()
 *   1007 Process Activity: 1 Launch, 99 Other
 *   2004 Detection Finding: 1 Create
 *   4001 Network Activity: 1 Open, 5 Refuse
 *   4002 HTTP Activity: see http_activity()
 *   4003 DNS Activity: 1 Query
 *   6003 API Activity: 1 Create, 2 Read, 4 Delete, 99 Other */
static const struct kind_map {
	const char *kind;
	uint16_t class_uid;
	uint8_t activity_id;
	uint8_t rule;
	const char *title; /* Detection Finding: finding_info.title */
} kinds[] = {
	{ "http", AUDIT_CLASS_HTTP, 0, ACT_HTTP_METHOD, NULL },
	{ "tunnel-request", AUDIT_CLASS_HTTP, 0, ACT_HTTP_METHOD, NULL },
	{ "transparent", AUDIT_CLASS_HTTP, 0, ACT_HTTP_METHOD, NULL },
	{ "malformed", AUDIT_CLASS_HTTP, 0, ACT_HTTP_METHOD, NULL },
	{ "git", AUDIT_CLASS_HTTP, 0, ACT_HTTP_METHOD, NULL },
	{ "connect", AUDIT_CLASS_NETWORK, 0, ACT_CONNECTION, NULL },
	{ "transparent-tls", AUDIT_CLASS_NETWORK, 0, ACT_CONNECTION, NULL },
	{ "dns", AUDIT_CLASS_DNS, 1, ACT_FIXED, NULL },
	{ "leak", AUDIT_CLASS_FINDING, 1, ACT_FIXED, "Secret in outbound traffic" },
	{ "credential_misuse", AUDIT_CLASS_FINDING, 1, ACT_FIXED, "Credential used outside its binding" },
	{ "file_denied", AUDIT_CLASS_FILE, 0, ACT_FILE_OP, NULL },
	{ "file_flagged", AUDIT_CLASS_FILE, 99, ACT_FIXED, NULL },
	{ "exec_denied", AUDIT_CLASS_PROCESS, 1, ACT_FIXED, NULL },
	{ "syscall_denied", AUDIT_CLASS_PROCESS, 99, ACT_FIXED, NULL },
	{ "session_start", AUDIT_CLASS_API, 1, ACT_FIXED, NULL },
	{ "session_end", AUDIT_CLASS_API, 4, ACT_FIXED, NULL },
	{ "policy_loaded", AUDIT_CLASS_API, 2, ACT_FIXED, NULL },
	{ "checkpoint", AUDIT_CLASS_API, 99, ACT_FIXED, NULL },
	{ "seal", AUDIT_CLASS_API, 99, ACT_FIXED, NULL },
	{ "mcp", AUDIT_CLASS_API, 99, ACT_FIXED, NULL },
};

/* Any other kind: an API Activity of activity Other, so that a record is
 * never refused for its kind. */
static const struct kind_map unknown_kind = { NULL, AUDIT_CLASS_API, 99, ACT_FIXED, NULL };

static const struct kind_map *kind_lookup(const char *kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return &kinds[i];
	return &unknown_kind;
}

/* HTTP Activity ids of OCSF 1.3.0; PATCH and others are 99 Other there. */
static int http_activity(const char *method)
{
	static const char *const methods[] = { "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "TRACE" };
	if (!method)
		return 0; /* Unknown: a request too malformed to have a method */
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (strcmp(methods[i], method) == 0)
			return (int)i + 1;
	return 99;
}

/* File System Activity ids of OCSF 1.3.0 for the system calls the
 * supervisor reports denied. */
static int file_activity(const char *syscall)
{
	static const struct {
		const char *name;
		int id;
	} ops[] = {
		{ "open", 14 },     { "openat", 14 },   { "openat2", 14 },  { "creat", 1 },
		{ "mkdir", 1 },     { "mkdirat", 1 },   { "mknod", 1 },     { "mknodat", 1 },
		{ "symlink", 1 },   { "symlinkat", 1 }, { "link", 1 },      { "linkat", 1 },
		{ "read", 2 },      { "write", 3 },     { "truncate", 3 },  { "ftruncate", 3 },
		{ "unlink", 4 },    { "unlinkat", 4 },  { "rmdir", 4 },     { "rename", 5 },
		{ "renameat", 5 },  { "renameat2", 5 }, { "chmod", 6 },     { "fchmod", 6 },
		{ "fchmodat", 6 },  { "chown", 6 },     { "fchown", 6 },    { "fchownat", 6 },
		{ "lchown", 6 },    { "utimensat", 6 }, { "setxattr", 6 },  { "stat", 8 },
		{ "statx", 8 },     { "newfstatat", 8 }, { "access", 8 },   { "faccessat", 8 },
		{ "faccessat2", 8 }, { "mount", 12 },   { "umount2", 13 },
	};
	if (!syscall)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (strcmp(ops[i].name, syscall) == 0)
			return ops[i].id;
	return 99;
}

/* The security control profile of OCSF 1.3.0. There, action_id knows only
 * 0 Unknown, 1 Allowed and 2 Denied (Observed and Modified came in later
 * versions), and a disposition without its own id is 99 Other with the
 * `disposition` caption saying what it was:
 *   allow    action 1 Allowed, disposition 1 Allowed
 *   deny     action 2 Denied,  disposition 2 Blocked; in observe mode,
 *            where nothing is enforced, action 1 and disposition 17 Logged
 *   modify   action 1 Allowed, disposition 99 "Modified" (let through
 *            changed, e.g. with a credential injected)
 *   step_up  action 0 Unknown, disposition 99 "Step-up" (held for a human)
 *   defer    action 0 Unknown, disposition 99 "Deferred"
 * status_id (base event): 1 Success when the activity went ahead, 2
 * Failure when it was blocked, 0 Unknown while it waits. */
struct outcome {
	int action_id;
	int disposition_id;
	const char *disposition; /* caption for 99 Other */
	int status_id;
	int severity_id; /* 1 Informational, 2 Low, 3 Medium */
};

static struct outcome outcome_of(const char *decision, bool enforced)
{
	if (strcmp(decision, "allow") == 0)
		return (struct outcome){ 1, 1, NULL, 1, 1 };
	if (strcmp(decision, "deny") == 0)
		return enforced ? (struct outcome){ 2, 2, NULL, 2, 3 } : (struct outcome){ 1, 17, NULL, 1, 3 };
	if (strcmp(decision, "modify") == 0)
		return (struct outcome){ 1, 99, "Modified", 1, 1 };
	if (strcmp(decision, "step_up") == 0)
		return (struct outcome){ 0, 99, "Step-up", 0, 2 };
	if (strcmp(decision, "defer") == 0)
		return (struct outcome){ 0, 99, "Deferred", 0, 2 };
	return (struct outcome){ 0, 0, NULL, 0, 1 };
}

/* ---- the event's fields, looked up once ---- */

enum field {
	F_KIND,
	F_DECISION,
	F_METHOD,
	F_HOST,
	F_PORT,
	F_PATH,
	F_RULE,
	F_CREDENTIAL,
	F_REASON,
	F_STATUS,
	F_BYTES_UP,
	F_BYTES_DOWN,
	F_EXIT_STATUS,
	F_SYSCALL,
	F_FILE,
	F_COMMAND,
	F_POLICY_FILE,
	F_CERTIFICATE,
	F_CERTIFICATE_SIG,
	F_AUTHORITY,
	F_COVERS_SEQ,
	F_HEAD,
	F_SIG,
	F_SERVER,
	F_TOOL,
	F_TARGET,
	F_DIRECTION,
	F_ARGS_SHA256,
	F_ARGUMENTS,
	F_OLD_SHA256,
	F_NEW_SHA256,
	F_REPEATED,
	F_PID,
	F_COUNT,
};

static const char *const field_names[F_COUNT] = {
	[F_KIND] = "kind",
	[F_DECISION] = "decision",
	[F_METHOD] = "method",
	[F_HOST] = "host",
	[F_PORT] = "port",
	[F_PATH] = "path",
	[F_RULE] = "rule",
	[F_CREDENTIAL] = "credential",
	[F_REASON] = "reason",
	[F_STATUS] = "status",
	[F_BYTES_UP] = "bytes_up",
	[F_BYTES_DOWN] = "bytes_down",
	[F_EXIT_STATUS] = "exit_status",
	[F_SYSCALL] = "syscall",
	[F_FILE] = "file",
	[F_COMMAND] = "command",
	[F_POLICY_FILE] = "policy_file",
	[F_CERTIFICATE] = "certificate",
	[F_CERTIFICATE_SIG] = "certificate_sig",
	[F_AUTHORITY] = "authority",
	[F_COVERS_SEQ] = "covers_seq",
	[F_HEAD] = "head",
	[F_SIG] = "sig",
	[F_SERVER] = "server",
	[F_TOOL] = "tool",
	[F_TARGET] = "target",
	[F_DIRECTION] = "direction",
	[F_ARGS_SHA256] = "args_sha256",
	[F_ARGUMENTS] = "arguments",
	[F_OLD_SHA256] = "old_sha256",
	[F_NEW_SHA256] = "new_sha256",
	[F_REPEATED] = "repeated",
	[F_PID] = "pid",
};

struct fields {
	const char *s[F_COUNT]; /* string values */
	bool has_i[F_COUNT];
	int64_t i[F_COUNT]; /* integer values */
};

static void fields_index(const struct audit_event *ev, struct fields *f)
{
	/* The fields by first letter (each plus one; 0 ends a list), so that
	 * a key is compared with two or three names, not all.
	 * WARNING: a field added to field_names must be added here too. */
#define L(c) [(c) - 'a']
	static const uint8_t first[26][6] = {
		L('a') = { F_AUTHORITY + 1, F_ARGS_SHA256 + 1, F_ARGUMENTS + 1 },
		L('b') = { F_BYTES_UP + 1, F_BYTES_DOWN + 1 },
		L('c') = { F_CREDENTIAL + 1, F_COMMAND + 1, F_CERTIFICATE + 1, F_CERTIFICATE_SIG + 1, F_COVERS_SEQ + 1 },
		L('d') = { F_DECISION + 1, F_DIRECTION + 1 },
		L('e') = { F_EXIT_STATUS + 1 },
		L('f') = { F_FILE + 1 },
		L('h') = { F_HOST + 1, F_HEAD + 1 },
		L('k') = { F_KIND + 1 },
		L('m') = { F_METHOD + 1 },
		L('p') = { F_PORT + 1, F_PATH + 1, F_POLICY_FILE + 1, F_PID + 1 },
		L('r') = { F_RULE + 1, F_REASON + 1, F_REPEATED + 1 },
		L('n') = { F_NEW_SHA256 + 1 },
		L('o') = { F_OLD_SHA256 + 1 },
		L('s') = { F_STATUS + 1, F_SYSCALL + 1, F_SIG + 1, F_SERVER + 1 },
		L('t') = { F_TOOL + 1, F_TARGET + 1 },
	};
#undef L
	memset(f, 0, sizeof(*f));
	for (size_t k = 0; k < ev->n; k++) {
		const char *key = ev->f[k].key;
		if (key[0] < 'a' || key[0] > 'z')
			continue;
		for (const uint8_t *slot = first[key[0] - 'a']; *slot; slot++) {
			int n = *slot - 1;
			if (strcmp(key, field_names[n]) != 0)
				continue;
			if (ev->f[k].v.type == AUDIT_STR) {
				f->s[n] = ev->f[k].v.s;
			} else if (ev->f[k].v.type == AUDIT_INT) {
				f->has_i[n] = true;
				f->i[n] = ev->f[k].v.i;
			}
			break;
		}
	}
}

/* ---- output ---- */

struct out {
	struct buf *b;
	int e;       /* first error */
	size_t cap;  /* longest string of the agent's choosing, in bytes */
};

/* Bytes as they are. The common case, room enough, is a copy: a record is
 * a hundred of these. The NUL buf_append would add after each is written
 * once at the end (see audit_record_build). */
static inline void lit(struct out *o, const char *s, size_t n)
{
	struct buf *b = o->b;
	if (n < b->cap - b->len) {
		memcpy(b->data + b->len, s, n);
		b->len += n;
	} else if (!o->e) {
		o->e = buf_append(b, s, n);
	}
}

#define LIT(o, s) lit(o, s, sizeof(s) - 1)

/* A string as a JSON literal, cut to o->cap bytes at a character
 * boundary. */
static void str_capped(struct out *o, const char *s, size_t cap)
{
	if (o->e)
		return;
	size_t n = strlen(s);
	if (n > cap) {
		n = cap;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	o->e = buf_json_string(o->b, s, n);
}

static void str(struct out *o, const char *s)
{
	str_capped(o, s, o->cap);
}

/* Strings that are signed or checked byte for byte (the certificate, keys,
 * hashes, our own identity) are never cut. */
static void str_whole(struct out *o, const char *s)
{
	str_capped(o, s, SIZE_MAX);
}

/* `key` and the field's value, when the record has the field. */
static void opt_str(struct out *o, const char *key, size_t key_len, const char *v)
{
	if (v) {
		lit(o, key, key_len);
		str(o, v);
	}
}
#define OPT_STR(o, key, v) opt_str(o, key, sizeof(key) - 1, v)

static void num(struct out *o, int64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	lit(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

static void opt_num(struct out *o, const char *key, size_t key_len, bool has, int64_t v)
{
	if (has) {
		lit(o, key, key_len);
		num(o, v);
	}
}
#define OPT_NUM(o, key, f, k) opt_num(o, key, sizeof(key) - 1, (f)->has_i[k], (f)->has_i[k] ? (f)->i[k] : 0)

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

static bool is_hex(const char *s, size_t n)
{
	if (!s || strlen(s) != n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (!((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f')))
			return false;
	return true;
}

/* prefix (`,"dst_endpoint":`) and {"hostname":H,"port":P} with what is
 * known; nothing when nothing is. */
static bool endpoint(struct out *o, const char *prefix, const struct fields *f)
{
	if (!f->s[F_HOST] && !f->has_i[F_PORT])
		return false;
	lit(o, prefix, strlen(prefix));
	LIT(o, "{");
	if (f->s[F_HOST]) {
		LIT(o, "\"hostname\":");
		str(o, f->s[F_HOST]);
	} else {
		/* OCSF's endpoint names itself somehow; a port alone does not. */
		LIT(o, "\"name\":\"(unknown)\"");
	}
	if (f->has_i[F_PORT])
		LIT(o, ",");
	OPT_NUM(o, "\"port\":", f, F_PORT);
	LIT(o, "}");
	return true;
}

static void http_request(struct out *o, const struct fields *f)
{
	LIT(o, "\"http_request\":{");
	OPT_STR(o, "\"http_method\":", f->s[F_METHOD]);
	/* OCSF's url needs a path (or the whole URL): without one it is
	 * left out, the host and port are the endpoint's. */
	if (f->s[F_PATH]) {
		if (f->s[F_METHOD])
			LIT(o, ",");
		LIT(o, "\"url\":{\"path\":");
		str(o, f->s[F_PATH]);
		OPT_STR(o, ",\"hostname\":", f->s[F_HOST]);
		OPT_NUM(o, ",\"port\":", f, F_PORT);
		LIT(o, "}");
	}
	LIT(o, "}");
}

static void traffic(struct out *o, const struct fields *f)
{
	if (!f->has_i[F_BYTES_UP] && !f->has_i[F_BYTES_DOWN])
		return;
	LIT(o, ",\"traffic\":{");
	OPT_NUM(o, "\"bytes_in\":", f, F_BYTES_DOWN);
	if (f->has_i[F_BYTES_UP]) {
		if (f->has_i[F_BYTES_DOWN])
			LIT(o, ",");
		LIT(o, "\"bytes_out\":");
		num(o, f->i[F_BYTES_UP]);
	}
	LIT(o, "}");
}

/* ,"pid":N of the event's process, or "uid":"unknown" for an event
 * that names none (OCSF's process needs one of the two). */
static void process_id(struct out *o, const struct fields *f)
{
	if (f->has_i[F_PID]) {
		LIT(o, ",\"pid\":");
		num(o, f->i[F_PID]);
	} else {
		LIT(o, ",\"uid\":\"unknown\"");
	}
}

/* uid of this record: "<session>:<seq>" */
static void record_uid(struct out *o, const struct audit_session *s, uint64_t seq)
{
	LIT(o, "\"");
	lit(o, s->session_id, strlen(s->session_id));
	LIT(o, ":");
	num(o, (int64_t)seq);
	LIT(o, "\"");
}

/* The record's head: what it is, when, by whom; and the device for
 * the System category. */
static void put_head(struct out *o, const struct fields *f, const struct kind_map *km,
		     const struct audit_session *s, uint64_t seq, int64_t time_ms, int activity, int severity)
{
	LIT(o, "{\"class_uid\":");
	num(o, km->class_uid);
	LIT(o, ",\"category_uid\":");
	num(o, km->class_uid / 1000);
	LIT(o, ",\"activity_id\":");
	num(o, activity);
	LIT(o, ",\"type_uid\":");
	num(o, (int64_t)km->class_uid * 100 + activity);
	LIT(o, ",\"time\":");
	num(o, time_ms);
	LIT(o, ",\"severity_id\":");
	num(o, severity);

	LIT(o, ",\"metadata\":{\"product\":{\"name\":\"airlock\",\"vendor_name\":\"airlock\",\"version\":\"" AIRLOCK_VERSION
	       "\"},\"version\":\"" OCSF_SCHEMA_VERSION "\",\"log_name\":\"decisions\",\"uid\":");
	record_uid(o, s, seq);
	LIT(o, "},\"actor\":{\"app_name\":\"airlock\",\"session\":{\"uid\":");
	str_whole(o, s->session_id);
	LIT(o, "},\"user\":{\"name\":");
	str_whole(o, s->agent);
	/* OCSF user type 99 Other, with the caption saying what it is. */
	LIT(o, ",\"type_id\":99,\"type\":\"non-human\"}");
	if (f->s[F_COMMAND]) {
		/* The process that acted: its command name and its pid (as
		 * the supervisor sees it, outside the sandbox's pid
		 * namespace); OCSF's process needs a pid or a uid. */
		LIT(o, ",\"process\":{\"name\":");
		str(o, f->s[F_COMMAND]);
		process_id(o, f);
		LIT(o, "}");
	}
	LIT(o, "}");
	if (km->class_uid == AUDIT_CLASS_FILE || km->class_uid == AUDIT_CLASS_PROCESS) {
		/* OCSF's System category requires the device: the host the
		 * sandbox runs on, of type 0 Unknown. */
		LIT(o, ",\"device\":{\"hostname\":");
		str_whole(o, s->host);
		LIT(o, ",\"type_id\":0}");
	}
}

/* What the record's class requires of it. */
static void put_class(struct out *o, const struct fields *f, const struct kind_map *km,
		      const struct audit_session *s, uint64_t seq)
{
	switch (km->class_uid) {
	case AUDIT_CLASS_HTTP:
		/* OCSF 1.3.0 requires dst_endpoint, http_request and
		 * http_response of HTTP Activity: a request too malformed to
		 * name its destination has the endpoint "(unknown)", one
		 * nobody answered (the connection closed first) the code 0. */
		if (!endpoint(o, ",\"dst_endpoint\":", f))
			LIT(o, ",\"dst_endpoint\":{\"name\":\"(unknown)\"}");
		LIT(o, ",");
		http_request(o, f);
		LIT(o, ",\"http_response\":{\"code\":");
		num(o, f->has_i[F_STATUS] ? f->i[F_STATUS] : 0);
		LIT(o, "}");
		traffic(o, f);
		break;
	case AUDIT_CLASS_NETWORK:
		if (!endpoint(o, ",\"dst_endpoint\":", f))
			LIT(o, ",\"dst_endpoint\":{\"name\":\"(unknown)\"}");
		traffic(o, f);
		break;
	case AUDIT_CLASS_DNS:
		LIT(o, ",\"query\":{");
		if (f->s[F_HOST]) {
			LIT(o, "\"hostname\":");
			str(o, f->s[F_HOST]);
			if (f->s[F_METHOD])
				LIT(o, ",");
		}
		OPT_STR(o, "\"type\":", f->s[F_METHOD]);
		LIT(o, "}");
		break;
	case AUDIT_CLASS_FINDING:
		LIT(o, ",\"finding_info\":{\"title\":");
		str_whole(o, km->title);
		LIT(o, ",\"uid\":");
		record_uid(o, s, seq);
		LIT(o, "}");
		if (f->s[F_HOST] || f->has_i[F_PORT] || f->s[F_PATH]) {
			/* Where the secret or the credential was headed. */
			LIT(o, ",\"evidences\":[{");
			bool comma = endpoint(o, "\"dst_endpoint\":", f);
			if (f->s[F_PATH] || f->s[F_METHOD]) {
				if (comma)
					LIT(o, ",");
				http_request(o, f);
			}
			LIT(o, "}]");
		}
		break;
	case AUDIT_CLASS_FILE:
		if (f->s[F_FILE]) {
			/* type_id 0 Unknown: the supervisor saw a path, not an inode */
			LIT(o, ",\"file\":{\"name\":");
			str(o, basename_of(f->s[F_FILE]));
			LIT(o, ",\"path\":");
			str(o, f->s[F_FILE]);
			LIT(o, ",\"type_id\":0}");
		}
		break;
	case AUDIT_CLASS_PROCESS:
		/* Required of the class: the process refused a program (the
		 * one that was to run) or a system call. Its pid is the
		 * caller's: an exec keeps it. */
		LIT(o, ",\"process\":{");
		if (f->s[F_COMMAND] && !f->s[F_FILE]) {
			LIT(o, "\"name\":");
			str(o, f->s[F_COMMAND]);
		} else {
			LIT(o, "\"name\":");
			str(o, f->s[F_FILE] ? basename_of(f->s[F_FILE]) : f->s[F_KIND]);
		}
		process_id(o, f);
		if (f->s[F_FILE]) {
			/* the program that was to run; type_id 1 Regular File */
			LIT(o, ",\"file\":{\"name\":");
			str(o, basename_of(f->s[F_FILE]));
			LIT(o, ",\"path\":");
			str(o, f->s[F_FILE]);
			LIT(o, ",\"type_id\":1}");
		}
		LIT(o, "}");
		break;
	case AUDIT_CLASS_API:
	default:
		LIT(o, ",\"api\":{\"operation\":");
		str(o, f->s[F_METHOD] ? f->s[F_METHOD] : f->s[F_KIND]);
		if (f->s[F_SERVER]) {
			/* MCP: the server is the API's service. */
			LIT(o, ",\"service\":{\"name\":");
			str(o, f->s[F_SERVER]);
			LIT(o, "}");
		}
		LIT(o, "},\"src_endpoint\":{\"hostname\":");
		str_whole(o, s->host);
		LIT(o, "}");
		break;
	}
}

/* The unmapped object, when the event has anything for it. */
static void put_unmapped(struct out *o, const struct fields *f)
{
	static const enum field mcp_fields[] = { F_TOOL, F_TARGET, F_DIRECTION, F_ARGS_SHA256,
						 F_ARGUMENTS, F_OLD_SHA256, F_NEW_SHA256 };
	bool has_mcp = false;
	for (size_t i = 0; i < ARRAY_SIZE(mcp_fields); i++)
		has_mcp = has_mcp || f->s[mcp_fields[i]];
	if (f->s[F_SYSCALL] || f->has_i[F_EXIT_STATUS] || f->s[F_POLICY_FILE] || has_mcp) {
		/* What OCSF has no attribute for, under its own name. */
		LIT(o, ",\"unmapped\":{");
		bool comma = false;
		if (f->s[F_SYSCALL]) {
			LIT(o, "\"syscall\":");
			str(o, f->s[F_SYSCALL]);
			comma = true;
		}
		if (f->has_i[F_EXIT_STATUS]) {
			if (comma)
				LIT(o, ",");
			LIT(o, "\"exit_status\":");
			num(o, f->i[F_EXIT_STATUS]);
			comma = true;
		}
		if (f->s[F_POLICY_FILE]) {
			if (comma)
				LIT(o, ",");
			LIT(o, "\"policy_file\":");
			str(o, f->s[F_POLICY_FILE]);
			comma = true;
		}
		if (has_mcp) {
			/* MCP: the tool (or resource, prompt), the digest of the
			 * arguments (the arguments only when the policy asks),
			 * and for a changed tool definition both hashes. */
			if (comma)
				LIT(o, ",");
			LIT(o, "\"mcp\":{");
			bool c2 = false;
			for (size_t i = 0; i < ARRAY_SIZE(mcp_fields); i++) {
				if (!f->s[mcp_fields[i]])
					continue;
				if (c2)
					LIT(o, ",");
				LIT(o, "\"");
				lit(o, field_names[mcp_fields[i]], strlen(field_names[mcp_fields[i]]));
				LIT(o, "\":");
				str(o, f->s[mcp_fields[i]]);
				c2 = true;
			}
			LIT(o, "}");
		}
		LIT(o, "}");
	}
}

/* The count, then airlock's own object, last. */
static void put_airlock(struct out *o, const struct fields *f, const struct audit_session *s,
			const char *decision, uint64_t seq, const char prev_hex[65])
{
	/* Identical denials the supervisor held back and counted
	 * (sandbox/auditlog.c): this record stands for that many more of the
	 * one before it with the same content. OCSF's count. */
	if (f->has_i[F_REPEATED] && f->i[F_REPEATED] > 0) {
		LIT(o, ",\"count\":");
		num(o, f->i[F_REPEATED]);
	}
	/* WARNING: the `airlock` object is the record's last member and `seq`,
	 * `prev` (then `hash`, added by audit_chain_append) its last three, in
	 * that order: the verifier relies on both. */
	LIT(o, ",\"airlock\":{");
	if (decision) {
		LIT(o, "\"decision\":");
		str(o, decision);
		LIT(o, ",");
	}
	LIT(o, "\"enforced\":");
	if (s->enforced)
		LIT(o, "true");
	else
		LIT(o, "false");
	LIT(o, ",\"kind\":");
	str(o, f->s[F_KIND]);
	OPT_STR(o, ",\"rule\":", f->s[F_RULE]);
	OPT_STR(o, ",\"credential\":", f->s[F_CREDENTIAL]);
	LIT(o, ",\"policy_sha256\":");
	str_whole(o, s->policy_sha256);
	LIT(o, ",\"session\":");
	str_whole(o, s->session_id);
	LIT(o, ",\"agent\":");
	str_whole(o, s->agent);
	LIT(o, ",\"boundary\":");
	str_whole(o, s->boundary);
	LIT(o, ",\"mode\":");
	str_whole(o, s->mode);
	if (f->s[F_CERTIFICATE]) {
		LIT(o, ",\"certificate\":");
		str_whole(o, f->s[F_CERTIFICATE]);
		LIT(o, ",\"certificate_sig\":");
		str_whole(o, f->s[F_CERTIFICATE_SIG]);
		LIT(o, ",\"authority\":");
		str_whole(o, f->s[F_AUTHORITY]);
	}
	if (f->s[F_SIG]) {
		LIT(o, ",\"checkpoint\":{\"covers_seq\":");
		num(o, f->i[F_COVERS_SEQ]);
		LIT(o, ",\"head\":");
		str_whole(o, f->s[F_HEAD]);
		LIT(o, ",\"sig\":");
		str_whole(o, f->s[F_SIG]);
		LIT(o, "}");
	}
	LIT(o, ",\"seq\":");
	num(o, (int64_t)seq);
	LIT(o, ",\"prev\":\"");
	lit(o, prev_hex, 64);
	LIT(o, "\"");
}

static void build(struct out *o, const struct fields *f, const struct kind_map *km, const struct audit_session *s,
		  uint64_t seq, const char prev_hex[65], int64_t time_ms)
{
	const char *decision = f->s[F_DECISION];
	struct outcome oc = decision ? outcome_of(decision, s->enforced) : (struct outcome){ 0, 0, NULL, 0, 1 };
	int activity = km->activity_id;
	switch ((enum activity_rule)km->rule) {
	case ACT_HTTP_METHOD:
		activity = http_activity(f->s[F_METHOD]);
		break;
	case ACT_CONNECTION:
		activity = oc.action_id == 2 ? 5 : oc.action_id == 1 ? 1 : 0;
		break;
	case ACT_FILE_OP:
		activity = file_activity(f->s[F_SYSCALL]);
		break;
	case ACT_FIXED:
		break;
	}
	int severity = km->class_uid == AUDIT_CLASS_FINDING ? 4 /* High */ : oc.severity_id;

	put_head(o, f, km, s, seq, time_ms, activity, severity);
	put_class(o, f, km, s, seq);
	if (decision) {
		LIT(o, ",\"disposition_id\":");
		num(o, oc.disposition_id);
		if (oc.disposition) {
			LIT(o, ",\"disposition\":");
			str_whole(o, oc.disposition);
		}
		LIT(o, ",\"action_id\":");
		num(o, oc.action_id);
		LIT(o, ",\"status_id\":");
		num(o, oc.status_id);
	}
	OPT_STR(o, ",\"message\":", f->s[F_REASON]);
	put_unmapped(o, f);
	put_airlock(o, f, s, decision, seq, prev_hex);
}

int audit_record_build(const struct audit_event *ev, const struct audit_session *s, uint64_t seq,
		       const char prev_hex[65], int64_t time_ms, struct buf *out)
{
	struct fields f;
	fields_index(ev, &f);
	const char *kind = f.s[F_KIND];
	if (!kind || seq == 0 || seq > INT64_MAX || !is_hex(prev_hex, 64))
		return -EINVAL;
	bool checkpoint = strcmp(kind, "checkpoint") == 0 || strcmp(kind, "seal") == 0;
	bool start = strcmp(kind, "session_start") == 0;
	/* The verifier insists on these; a writer that gets them wrong learns
	 * it here rather than from a log that no longer verifies. */
	if (start && (!f.s[F_CERTIFICATE] || !is_hex(f.s[F_CERTIFICATE_SIG], 2 * AUDIT_SIG_LEN) ||
		      !is_hex(f.s[F_AUTHORITY], 2 * AUDIT_PUB_LEN)))
		return -EINVAL;
	if (!start)
		f.s[F_CERTIFICATE] = NULL;
	if (checkpoint) {
		if (!f.has_i[F_COVERS_SEQ] || (uint64_t)f.i[F_COVERS_SEQ] != seq - 1 || f.i[F_COVERS_SEQ] < 0 ||
		    !f.s[F_HEAD] || strcmp(f.s[F_HEAD], prev_hex) != 0 || !is_hex(f.s[F_SIG], 2 * AUDIT_SIG_LEN))
			return -EINVAL;
	} else {
		f.s[F_SIG] = NULL;
	}

	/* Observe mode: a record is not enforced, unless its event says it
	 * was (a seccomp refusal, a request the proxy could not forward). An
	 * event can only say so, never take enforcement away from a session
	 * that enforces. */
	struct audit_session enforced_copy;
	if (!s->enforced) {
		for (size_t k = 0; k < ev->n; k++)
			if (ev->f[k].v.type == AUDIT_BOOL && ev->f[k].v.b && strcmp(ev->f[k].key, "enforced") == 0) {
				enforced_copy = *s;
				enforced_copy.enforced = true;
				s = &enforced_copy;
				break;
			}
	}

	/* Cut the agent's strings shorter until the line fits: every record
	 * is kept, the longest values are what give. */
	static const size_t caps[] = { SIZE_MAX, 4096, 1024, 256, 64 };
	size_t mark = out->len;
	int e = buf_reserve(out, 2048);
	if (e < 0)
		return e;
	for (size_t c = 0; c < ARRAY_SIZE(caps); c++) {
		struct out o = { .b = out, .cap = caps[c] };
		build(&o, &f, kind_lookup(kind), s, seq, prev_hex, time_ms);
		out->data[out->len] = '\0';
		if (o.e) {
			out->len = mark;
			if (out->data)
				out->data[mark] = '\0';
			return o.e;
		}
		if (out->len - mark <= AUDIT_CANONICAL_MAX)
			return 0;
		out->len = mark;
		out->data[mark] = '\0';
	}
	return -E2BIG;
}
