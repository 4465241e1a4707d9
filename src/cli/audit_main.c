/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-audit: the audit log's verifier and readers. The writer is
 * airlock-audit-writer (writer.c), which `airlock run` starts.
 *
 *   airlock-audit identity-verify TOKEN|- [--authority PUBKEY] [--audience AUD] [--at EPOCH]
 *   airlock-audit verify LOG [--authority PUBKEY]
 *   airlock-audit show LOG [--decision D] [--kind K]
 *   airlock-audit suggest LOG [--policy FILE]
 *       the policy additions that would allow the log's denials (see
 *       suggest.h); refuses a log that fails verification
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "audit/audit.h"
#include "audit/identity.h"
#include "doc/json.h"
#include "analysis/suggest.h"
#include "cli/cli.h"
#include "sandbox/auditlog.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static int cmd_verify(int argc, char **argv)
{
	const char *log = NULL, *authority = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--authority") == 0 && i + 1 < argc)
			authority = argv[++i];
		else if (!log)
			log = argv[i];
		else {
			fprintf(stderr, "usage: airlock audit verify LOG [--authority PUBKEY]\n");
			return 2;
		}
	}
	if (!log) {
		fprintf(stderr, "usage: airlock audit verify LOG [--authority PUBKEY]\n");
		return 2;
	}
	uint8_t pub[AUDIT_PUB_LEN];
	struct error err = { 0 };
	if (authority && audit_pub_load(authority, pub, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return 2;
	}
	struct audit_report rep;
	int r = audit_verify_file(log, authority ? pub : NULL, &rep);
	if (r == 0) {
		printf("%s: intact and sealed: %llu records, %llu checkpoints, session %s, agent %s\n", log,
		       (unsigned long long)rep.records, (unsigned long long)rep.checkpoints, rep.session_id, rep.agent);
		return 0;
	}
	if (rep.bad_line)
		printf("%s:%llu: %s\n", log, (unsigned long long)rep.bad_line, rep.problem);
	else
		printf("%s: %s\n", log, rep.problem);
	printf("%s: %llu records verified before that\n", log, (unsigned long long)rep.records);
	return r == 1 ? 1 : 3;
}

/* ---- identity tokens ---- */

/* A value from a token for the terminal: controls shown as '?'. */
static const char *printable(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return s;
}

static void print_time(const char *label, int64_t t)
{
	char when[64];
	time_t secs = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&secs, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "?");
	printf("%-10s %s (%lld)\n", label, when, (long long)t);
}

static int cmd_identity_verify(int argc, char **argv)
{
	static const char usage[] =
		"usage: airlock identity verify TOKEN|- [--authority PUBKEY] [--audience AUD] [--at EPOCH]\n";
	const char *token = NULL, *authority = NULL, *audience = NULL, *at = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--authority") == 0 && i + 1 < argc)
			authority = argv[++i];
		else if (strcmp(argv[i], "--audience") == 0 && i + 1 < argc)
			audience = argv[++i];
		else if (strcmp(argv[i], "--at") == 0 && i + 1 < argc)
			at = argv[++i];
		else if (!token && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
			token = argv[i];
		else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!token) {
		fputs(usage, stderr);
		return 2;
	}
	int64_t now = time(NULL);
	if (at) {
		char *end;
		errno = 0;
		long long v = strtoll(at, &end, 10);
		if (errno || end == at || *end || v < 0) {
			fprintf(stderr, "airlock: --at %s: not a time in seconds since the epoch\n", at);
			return 2;
		}
		now = v;
	}
	/* The token from stdin: one line, bounded like an argument. */
	char *in = NULL;
	if (strcmp(token, "-") == 0) {
		in = malloc(IDENTITY_TOKEN_MAX + 2);
		if (!in)
			return 2;
		size_t n = fread(in, 1, IDENTITY_TOKEN_MAX + 1, stdin);
		while (n && (in[n - 1] == '\n' || in[n - 1] == '\r' || in[n - 1] == ' '))
			n--;
		in[n] = '\0';
		token = in;
	}
	struct error err = { 0 };
	uint8_t pub[AUDIT_PUB_LEN];
	char where[4096] = "";
	const char *anchor = "the one given";
	bool have = false;
	if (authority) {
		if (audit_pub_load(authority, pub, &err) < 0) {
			fprintf(stderr, "airlock: %s\n", err.msg);
			free(in);
			return 2;
		}
		have = true;
	} else {
		/* No key given: the local authority's, which signed this
		 * machine's sessions. */
		struct audit_key *k = NULL;
		/* No state directory: no local authority, as when its key
		 * was never made. */
		int r = auditlog_authority_path(where, sizeof(where), NULL) < 0 ? -ENOENT
										  : audit_key_load(where, &k, &err);
		if (r == 0) {
			audit_key_public(k, pub);
			audit_key_free(k);
			have = true;
			anchor = "the local authority";
		} else if (r != -ENOENT) {
			fprintf(stderr, "airlock: %s\n", err.msg);
			free(in);
			return 2;
		}
	}
	struct identity_claims c;
	int r = identity_token_verify(token, strlen(token), have ? pub : NULL, audience, now, &c, &err);
	free(in);
	if (r < 0) {
		printf("invalid identity token: %s%s%s%s\n", printable(err.msg),
		       have && !authority ? " (checked against the local authority " : "", have && !authority ? where : "",
		       have && !authority ? ")" : "");
		return 1;
	}
	char auth[2 * AUDIT_PUB_LEN + 1];
	hex(c.authority, sizeof(c.authority), auth);
	printf("valid identity token\n");
	printf("%-10s %s\n", "agent", printable(c.agent));
	printf("%-10s %s\n", "session", c.session);
	printf("%-10s %s\n", "audience", printable(c.aud));
	print_time("issued", c.iat);
	print_time("expires", c.exp);
	printf("%-10s %s\n", "boundary", printable(c.boundary));
	printf("%-10s %s\n", "policy", printable(c.policy_sha256));
	printf("%-10s %s\n", "host", printable(c.host));
	printf("%-10s %s\n", "token id", printable(c.jti));
	if (c.anchored)
		printf("%-10s %s (%s)\n", "authority", auth, anchor);
	else
		printf("%-10s %s (UNANCHORED: no authority key at %s; anyone can make a key and sign a token, "
		       "pass --authority PUBKEY)\n",
		       "authority", auth, where);
	return 0;
}

/* ---- reading a log for people: show, stats, export ---- */

#define SHOW_TOKENS 512

struct row {
	long long seq, time, class_uid, port, exit_status, count;
	char decision[16], kind[32], host[256], method[64], path[512], rule[128], reason[512], credential[64];
	char program[64], access[32], server[128], tool[256];
};

/* The value at obj.a.b.c (dots between member names; the first element
 * of an array on the way), -1 when absent. */
static int member_at(const struct doc_json *j, int obj, const char *dotted)
{
	char key[32];
	int t = obj;
	while (t >= 0 && *dotted) {
		size_t n = strcspn(dotted, ".");
		if (n >= sizeof(key))
			return -1;
		memcpy(key, dotted, n);
		key[n] = '\0';
		dotted += n + (dotted[n] == '.');
		if (j->tok[t].type == DOC_JSON_ARRAY)
			t = j->tok[t].end > (uint32_t)t + 1 ? t + 1 : -1;
		t = t >= 0 && j->tok[t].type == DOC_JSON_OBJECT ? doc_json_member(j, t, key) : -1;
	}
	return t;
}

/* The string at obj.a.b (see member_at), "" when absent or too long. */
static void member_str(const struct doc_json *j, int obj, const char *dotted, char *out, size_t cap)
{
	out[0] = '\0';
	if (doc_json_str(j, member_at(j, obj, dotted), out, cap) < 0)
		out[0] = '\0';
}

static long long member_int(const struct doc_json *j, int obj, const char *dotted)
{
	int64_t v = 0;
	if (doc_json_int(j, member_at(j, obj, dotted), &v) < 0)
		return -1;
	return (long long)v;
}

/* What a record says happened, by class: the program that acted and what
 * it asked (file and process records), the request (HTTP, network, DNS,
 * findings), the server, method and tool (MCP), the credential a
 * brokered request carried (its name; the secret is never in a record). */
static bool read_row(const char *line, size_t len, struct doc_json_tok *tok, struct row *r)
{
	struct doc_json j;
	if (doc_json_parse(&j, line, len, tok, SHOW_TOKENS, 8) < 0 || tok[0].type != DOC_JSON_OBJECT)
		return false;
	int air = doc_json_member(&j, 0, "airlock");
	memset(r, 0, sizeof(*r));
	r->seq = member_int(&j, air, "seq");
	r->time = member_int(&j, 0, "time");
	r->class_uid = member_int(&j, 0, "class_uid");
	r->exit_status = member_int(&j, 0, "unmapped.exit_status");
	r->count = member_int(&j, 0, "count");
	member_str(&j, air, "decision", r->decision, sizeof(r->decision));
	member_str(&j, air, "kind", r->kind, sizeof(r->kind));
	member_str(&j, air, "rule", r->rule, sizeof(r->rule));
	member_str(&j, air, "credential", r->credential, sizeof(r->credential));
	member_str(&j, 0, "message", r->reason, sizeof(r->reason));
	member_str(&j, 0, "actor.process.name", r->program, sizeof(r->program));
	member_str(&j, 0, "unmapped.syscall", r->access, sizeof(r->access));
	/* A finding names where the secret was headed in its evidence. */
	int at = r->class_uid == 2004 ? member_at(&j, 0, "evidences") : 0;
	r->port = member_int(&j, at, "dst_endpoint.port");
	member_str(&j, at, "dst_endpoint.hostname", r->host, sizeof(r->host));
	if (!r->host[0]) /* DNS Activity names the host in its query */
		member_str(&j, 0, "query.hostname", r->host, sizeof(r->host));
	member_str(&j, at, "http_request.http_method", r->method, sizeof(r->method));
	if (!r->method[0])
		member_str(&j, 0, "query.type", r->method, sizeof(r->method));
	member_str(&j, at, "http_request.url.path", r->path, sizeof(r->path));
	switch (r->class_uid) {
	case 1001: /* File System Activity */
		member_str(&j, 0, "file.path", r->path, sizeof(r->path));
		break;
	case 1007: /* Process Activity: the program refused */
		member_str(&j, 0, "process.file.path", r->path, sizeof(r->path));
		break;
	case 6003: /* API Activity: an MCP message, or the session's own */
		member_str(&j, 0, "api.service.name", r->server, sizeof(r->server));
		member_str(&j, 0, "api.operation", r->method, sizeof(r->method));
		if (strcmp(r->method, r->kind) == 0)
			r->method[0] = '\0';
		member_str(&j, 0, "unmapped.mcp.tool", r->tool, sizeof(r->tool));
		if (!r->tool[0])
			member_str(&j, 0, "unmapped.mcp.target", r->tool, sizeof(r->tool));
		member_str(&j, 0, "unmapped.policy_file", r->path, sizeof(r->path));
		break;
	default:
		break;
	}
	return true;
}

/* A field for a table or CSV: control characters shown as '?', so a
 * value from the agent can neither draw on the reader's terminal nor
 * start a line of its own that passes for another record. */
static void clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* One CSV field (RFC 4180): always quoted, quotes doubled. The agent
 * chooses paths, hosts and tool names: a field a spreadsheet would read as
 * a formula (= + - @, or a tab or carriage return before one) gets a
 * leading apostrophe, so opening the export cannot run
 * =HYPERLINK(...) or =cmd|... from a name the agent made up. */
static void csv_field(FILE *f, char *s, bool last)
{
	clean(s);
	fputc('"', f);
	if (strchr("=+-@", s[0]) && s[0])
		fputc('\'', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputs(last ? "\"\n" : "\",", f);
}

/* Appends a space (unless at the start) and the formatted text to out,
 * cut at its end. */
static void __attribute__((format(printf, 4, 5))) add_part(char *out, size_t cap, size_t *len, const char *fmt, ...)
{
	if (*len + 2 >= cap)
		return;
	if (*len)
		out[(*len)++] = ' ';
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + *len, cap - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 ? *len : *len + (size_t)n >= cap ? cap - 1 : *len + (size_t)n;
}

/* The row as one readable phrase: [server] [access] [method]
 * [host[:port]][path] [tool] [by program] [with credential NAME]
 * [exit N], each part only when the record has it. */
static void describe(const struct row *r, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	const char *parts[] = { r->server, r->access, r->method };
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (parts[i][0])
			add_part(out, cap, &n, "%s", parts[i]);
	if (r->host[0] && r->port > 0)
		add_part(out, cap, &n, "%s:%lld%s", r->host, r->port, r->path);
	else if (r->host[0] || r->path[0])
		add_part(out, cap, &n, "%s%s", r->host, r->path);
	if (r->tool[0])
		add_part(out, cap, &n, "%s", r->tool);
	if (r->program[0])
		add_part(out, cap, &n, "by %s", r->program);
	if (r->credential[0])
		add_part(out, cap, &n, "with credential %s", r->credential);
	if (r->exit_status >= 0 && strcmp(r->kind, "session_end") == 0)
		add_part(out, cap, &n, "exit %lld", r->exit_status);
	if (r->count > 0)
		add_part(out, cap, &n, "(%lld more)", r->count);
}

static int cmd_read(int argc, char **argv)
{
	const char *verb = argv[1], *log = NULL, *decision = NULL, *kind = NULL, *format = "jsonl";
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--decision") == 0 && i + 1 < argc)
			decision = argv[++i];
		else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc)
			kind = argv[++i];
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (!log)
			log = argv[i];
		else
			log = NULL, i = argc;
	}
	bool export = strcmp(verb, "export") == 0, stats = strcmp(verb, "stats") == 0;
	if (!log || (export && strcmp(format, "jsonl") != 0 && strcmp(format, "ocsf") != 0 &&
		     strcmp(format, "csv") != 0)) {
		fprintf(stderr, "usage: airlock audit show LOG [--decision D] [--kind K]\n"
				"       airlock audit export LOG --format ocsf|jsonl|csv [--decision D] [--kind K]\n"
				"       airlock audit stats LOG\n");
		return 2;
	}
	FILE *f = fopen(log, "re");
	if (!f) {
		fprintf(stderr, "airlock: cannot open %s: %s\n", log, strerror(errno));
		return 2;
	}
	/* Records read from a log that does not verify are what someone
	 * wrote, not what airlock decided: an edited denial exported as an
	 * allowance would pass for evidence. They are still shown (they are
	 * what there is to investigate), with a warning and exit status 3,
	 * verify's own for a tampered log, so that a pipeline notices. A log
	 * only unsealed (its session still running, or ended by a kill) is
	 * noted, not refused. */
	struct audit_report rep;
	int verdict = audit_verify_file(log, NULL, &rep);
	if (verdict == 1)
		fprintf(stderr, "airlock: note: %s is not sealed (%s)\n", log, rep.problem);
	else if (verdict != 0)
		fprintf(stderr,
			"airlock: WARNING: %s does not verify%s%.0llu: %s; what follows is not a record of what airlock "
			"decided (airlock audit verify %s)\n",
			log, rep.bad_line ? " at line " : "", (unsigned long long)rep.bad_line, rep.problem, log);
	struct doc_json_tok *tok = calloc(SHOW_TOKENS, sizeof(*tok));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long long total = 0, unreadable = 0, counts[5] = { 0 };
	static const char *const decisions[5] = { "allow", "deny", "modify", "step_up", "defer" };
	if (!export && !stats)
		printf("%-6s %-24s %-6s %-18s %-40s %s\n", "seq", "time (UTC)", "dec", "kind", "what", "rule / reason");
	if (export && strcmp(format, "csv") == 0)
		printf("seq,time,class_uid,decision,kind,method,host,port,path,rule,credential,reason,"
		       "program,access,server,tool\n");
	while (tok && (n = getline(&line, &cap, f)) > 0) {
		struct row r;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (!read_row(line, (size_t)n, tok, &r)) {
			unreadable++;
			continue;
		}
		total++;
		for (size_t i = 0; i < 5; i++)
			if (strcmp(r.decision, decisions[i]) == 0)
				counts[i]++;
		if ((decision && strcmp(decision, r.decision) != 0) || (kind && strcmp(kind, r.kind) != 0) || stats)
			continue;
		if (export && strcmp(format, "csv") != 0) {
			printf("%s\n", line);
			continue;
		}
		char seq[32], t[32], cls[16], port[16];
		snprintf(seq, sizeof(seq), "%lld", r.seq);
		snprintf(cls, sizeof(cls), "%lld", r.class_uid);
		port[0] = '\0';
		if (r.port > 0)
			snprintf(port, sizeof(port), "%lld", r.port);
		time_t secs = (time_t)(r.time / 1000);
		struct tm tm;
		gmtime_r(&secs, &tm);
		size_t tl = strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(t + tl, sizeof(t) - tl, ".%03lldZ", r.time % 1000);
		if (export) {
			char *v[] = { seq,    t,	  cls,	      r.decision, r.kind,    r.method,
				      r.host, port,	  r.path,     r.rule,	  r.credential, r.reason,
				      r.program, r.access, r.server, r.tool };
			for (size_t i = 0; i < ARRAY_SIZE(v); i++)
				csv_field(stdout, v[i], i + 1 == ARRAY_SIZE(v));
			continue;
		}
		char what[1200];
		describe(&r, what, sizeof(what));
		clean(what);
		clean(r.kind);
		clean(r.decision);
		clean(r.rule);
		clean(r.reason);
		printf("%-6s %-24s %-6s %-18s %-40.400s %s%s%s\n", seq, t, r.decision, r.kind, what, r.rule,
		       r.rule[0] && r.reason[0] ? " / " : "", r.reason);
	}
	if (stats) {
		printf("%llu records", total);
		for (size_t i = 0; i < 5; i++)
			if (counts[i])
				printf(", %llu %s", counts[i], decisions[i]);
		printf("%s\n", unreadable ? "" : "");
		if (unreadable)
			printf("%llu lines unreadable (run airlock audit verify)\n", unreadable);
	}
	free(line);
	free(tok);
	fclose(f);
	return verdict == 0 || verdict == 1 ? 0 : 3;
}

/* ---- suggest ---- */

static const char suggest_usage[] = "usage: airlock policy suggest LOG [--policy [FILE]]\n";

/* Feed the first `records` lines of the log copy at fd (the verified
 * ones) to s; log names it in messages. */
static int suggest_read(struct suggest *s, int fd, const char *log, uint64_t records, struct error *err)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return error_sys(err, errno, "cannot read %s", log);
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	_cleanup_fclose_ FILE *f = dup_fd >= 0 ? fdopen(dup_fd, "r") : NULL;
	if (!f) {
		if (dup_fd >= 0)
			close(dup_fd);
		return error_sys(err, errno, "cannot read %s", log);
	}
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	for (uint64_t lineno = 1; lineno <= records; lineno++) {
		if ((n = getline(&line, &cap, f)) <= 0)
			return error_set(err, EIO, "%s:%llu: the log ends before the records verify read",
					 log, (unsigned long long)lineno);
		if (line[n - 1] == '\n')
			n--;
		int r = suggest_add_line(s, line, (size_t)n, lineno, err);
		if (r < 0)
			return error_prefix(err, "%s", log), r;
	}
	return 0;
}

/* The log's bytes in an anonymous memory file (bounded: a log is records
 * of at most AUDIT_LINE_MAX bytes, and suggest keeps only what they ask
 * for, but the copy is whole). Returns its fd or a negative errno. */
#define SUGGEST_LOG_MAX (4ULL << 30)
static int copy_log(const char *log, struct error *err)
{
	_cleanup_close_ int in = open(log, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return error_sys(err, errno, "cannot open %s", log);
	_cleanup_close_ int mem = memfd_create("airlock-suggest-log", MFD_CLOEXEC);
	if (mem < 0)
		return error_sys(err, errno, "cannot copy %s", log);
	char buf[65536];
	unsigned long long total = 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_sys(err, errno, "cannot read %s", log);
		if (n == 0)
			break;
		if ((total += (unsigned long long)n) > SUGGEST_LOG_MAX)
			return error_set(err, EFBIG, "%s is larger than %llu bytes, more than suggest reads", log,
					 SUGGEST_LOG_MAX);
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(mem, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return error_sys(err, errno, "cannot copy %s", log);
			off += w;
		}
	}
	return TAKE_FD(mem);
}

static void suggest_freep(struct suggest **s)
{
	suggest_free(*s);
}

static int cmd_suggest(int argc, char **argv)
{
	const char *log = NULL, *policy_file = NULL;
	bool merge = false; /* --policy: FILE, or alone the file the log names */
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--policy") == 0) {
			merge = true;
			if (i + 1 < argc && argv[i + 1][0] != '-')
				policy_file = argv[++i];
		} else if (strncmp(argv[i], "--policy=", 9) == 0 && argv[i][9]) {
			merge = true;
			policy_file = argv[i] + 9;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(suggest_usage, stdout);
			return 0;
		} else if (!log && argv[i][0] != '-') {
			log = argv[i];
		} else {
			fputs(suggest_usage, stderr);
			return 2;
		}
	}
	if (!log) {
		fputs(suggest_usage, stderr);
		return 2;
	}
	/* Only what the session wrote is evidence of what it needs: an
	 * edited log could smuggle any allowance into the suggestion. The
	 * log is copied once into memory, and that copy is both verified and
	 * read, so the file cannot change between the two. */
	_cleanup_close_ int copy = -1;
	char copy_path[64];
	{
		struct error cerr = { 0 };
		if ((copy = copy_log(log, &cerr)) < 0) {
			fprintf(stderr, "airlock: %s\n", cerr.msg);
			return 2;
		}
	}
	snprintf(copy_path, sizeof(copy_path), "/proc/self/fd/%d", copy);
	struct audit_report rep;
	int v = audit_verify_file(copy_path, NULL, &rep);
	if (v == 2) {
		if (rep.bad_line)
			fprintf(stderr, "airlock: %s:%llu: the log fails verification, so nothing is suggested from it: %s\n",
				log, (unsigned long long)rep.bad_line, rep.problem);
		else
			fprintf(stderr, "airlock: %s: the log fails verification, so nothing is suggested from it: %s\n", log,
				rep.problem);
		return 3;
	}
	if (v == 1)
		fprintf(stderr, "airlock: warning: %s: %s; suggesting from the %llu records verified\n", log, rep.problem,
			(unsigned long long)rep.records);

	struct error err = { 0 };
	_cleanup_(suggest_freep) struct suggest *s = NULL;
	if (suggest_new(NULL, &s) < 0 || suggest_read(s, copy, log, rep.records, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg[0] ? err.msg : "out of memory");
		return 2;
	}
	if (suggest_denials(s) == 0) {
		fprintf(stderr, "airlock: nothing to suggest: %s records no denial (%llu records)\n", log,
			(unsigned long long)rep.records);
		return 0;
	}

	/* The base policy: the one given, or with --policy alone the one the
	 * log names, when it is a file still readable here. */
	char named[4096];
	snprintf(named, sizeof(named), "%s", suggest_log_policy_file(s));
	if (merge && !policy_file) {
		if (named[0] != '/' || access(named, R_OK) != 0) {
			fprintf(stderr, "airlock: %s names %s%s%s; give the policy as --policy FILE\n", log,
				named[0] ? "the policy file " : "no policy file", named,
				named[0] ? ", which cannot be read here" : "");
			return 2;
		}
		policy_file = named;
	}
	/* Even for the additions alone, the policy the log names (when it
	 * can be read) tells what it already allows or denies on purpose. */
	bool implicit = !policy_file && named[0] == '/' && access(named, R_OK) == 0;
	const char *base_file = policy_file ? policy_file : implicit ? named : NULL;
	_cleanup_policy_ struct policy *pol = NULL;
	if (base_file && cli_load_policy(base_file, &pol, &err) < 0) {
		if (!implicit) {
			fprintf(stderr, "airlock: %s\n", err.msg);
			return 2;
		}
		fprintf(stderr, "airlock: warning: the policy the log names does not load, so additions are not "
				"checked against it: %s\n",
			err.msg);
		pol = NULL;
	}
	if (pol) {
		char sha[65];
		audit_policy_sha256(base_file, sha);
		const char *logged = suggest_log_policy_sha256(s);
		if (logged[0] && strcmp(sha, logged) != 0)
			fprintf(stderr, "airlock: warning: %s is not the policy file the session ran with "
					"(its SHA-256 differs from the log's policy_sha256)\n",
				base_file);
		suggest_free(s);
		s = NULL;
		if (suggest_new(pol, &s) < 0 || suggest_read(s, copy, log, rep.records, &err) < 0) {
			fprintf(stderr, "airlock: %s\n", err.msg[0] ? err.msg : "out of memory");
			return 2;
		}
	}
	suggest_finish(s);

	printf("# airlock policy suggest: %llu denial%s in %s\n", (unsigned long long)suggest_denials(s),
	       suggest_denials(s) == 1 ? "" : "s", log);
	suggest_print_unanswered(s, stdout);
	if (!merge) {
		if (suggest_has_additions(s))
			suggest_print_fragment(s, stdout);
		else
			printf("# No addition is offered.\n");
		return 0;
	}
	if (suggest_merge(s, pol, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return 2;
	}
	/* What is printed must be a policy airlock accepts: read it back. */
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem) {
		fprintf(stderr, "airlock: out of memory\n");
		return 2;
	}
	policy_print(pol, mem);
	fclose(mem);
	_cleanup_policy_ struct policy *back = NULL;
	char cwd[PATH_MAX];
	const char *home = getenv("HOME");
	struct policy_ctx ctx = { .home = home && home[0] == '/' ? home : "/",
				  .cwd = getcwd(cwd, sizeof(cwd)) ? cwd : "/" };
	if (policy_load_buffer("(suggested policy)", NULL, text, len, &ctx, &back, &err) < 0) {
		fprintf(stderr, "airlock: the merged policy would not be accepted, so it is not printed: %s\n", err.msg);
		return 2;
	}
	fwrite(text, 1, len, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "verify") == 0)
		return cmd_verify(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "identity-verify") == 0)
		return cmd_identity_verify(argc, argv);
	if (argc >= 2 && (strcmp(argv[1], "show") == 0 || strcmp(argv[1], "export") == 0 ||
			  strcmp(argv[1], "stats") == 0))
		return cmd_read(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "suggest") == 0)
		return cmd_suggest(argc, argv);
	fprintf(stderr, "usage: airlock audit verify LOG [--authority PUBKEY]\n");
	return 2;
}
