/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the audit log: events in, records out, the chain, and the
 * verifier.
 *
 * The events are the lines the proxy and the supervisor write today. Every
 * malformed event is refused next to a legitimate neighbour that is
 * accepted. A record has a golden line, is built alike twice, and each kind
 * lands in its OCSF class. Logs are written with the real functions and
 * real Ed25519 keys, then tampered with in every way the verifier claims to
 * notice: each tampered log is refused (or reported unsealed or torn) at
 * the right line with the right words, and the intact log it came from
 * verifies.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit/audit.h"
#include "doc/json.h"
#include "util/base64.h"
#include "util/buf.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define SESSION_ID "0190b5a2-7c1e-7abc-8def-0123456789ab"
#define POLICY_SHA "5f2b6c0e3a1d4f7e9b8c2a1d0e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f"
#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/airlock-test-audit-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void session_fill(struct audit_session *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->agent, sizeof(s->agent), "test-agent");
	snprintf(s->session_id, sizeof(s->session_id), SESSION_ID);
	snprintf(s->boundary, sizeof(s->boundary), "process");
	snprintf(s->policy_sha256, sizeof(s->policy_sha256), POLICY_SHA);
	snprintf(s->host, sizeof(s->host), "testhost");
	snprintf(s->mode, sizeof(s->mode), "enforce");
	s->enforced = true;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static struct audit_event ev;

static void parse_ok(const char *json)
{
	int r = audit_event_parse(json, strlen(json), &ev);
	if (r != 0)
		fail_msg("event refused: %s", json);
}

/* ---- events ---- */

/* The proxy's records exactly as format_record writes them. */
static void test_event_proxy_records(void **state)
{
	(void)state;
	parse_ok("{\"time\":1796019715315,\"decision\":\"allow\",\"kind\":\"http\",\"method\":\"GET\","
		 "\"host\":\"api.example.com\",\"path\":\"/v1/items?q=1\",\"rule\":\"network.endpoints[0]\","
		 "\"port\":443,\"status\":200,\"bytes_up\":102,\"bytes_down\":422}\n");
	assert_int_equal(ev.n, 11);
	assert_string_equal(audit_event_str(&ev, "kind"), "http");
	assert_string_equal(audit_event_str(&ev, "decision"), "allow");
	assert_string_equal(audit_event_str(&ev, "method"), "GET");
	assert_string_equal(audit_event_str(&ev, "host"), "api.example.com");
	assert_string_equal(audit_event_str(&ev, "path"), "/v1/items?q=1");
	assert_string_equal(audit_event_str(&ev, "rule"), "network.endpoints[0]");
	assert_int_equal(audit_event_int(&ev, "time", 0), 1796019715315LL);
	assert_int_equal(audit_event_int(&ev, "port", 0), 443);
	assert_int_equal(audit_event_int(&ev, "status", 0), 200);
	assert_int_equal(audit_event_int(&ev, "bytes_up", 0), 102);
	assert_int_equal(audit_event_int(&ev, "bytes_down", 0), 422);
	/* wrong type or absent: the default, or NULL */
	assert_null(audit_event_str(&ev, "port"));
	assert_int_equal(audit_event_int(&ev, "host", -7), -7);
	assert_null(audit_event_str(&ev, "reason"));
	assert_int_equal(audit_event_int(&ev, "nothing", 5), 5);

	/* A refusal with the agent's bytes in it, escaped by buf_json_string. */
	parse_ok("{\"time\":1796019715316,\"decision\":\"deny\",\"kind\":\"tunnel-request\",\"method\":\"POST\","
		 "\"host\":\"evil.example\",\"path\":\"/\\u001b[31m\\\"x\\\\y\\ufffd\",\"reason\":\"no rule allows "
		 "POST evil.example:443/\",\"port\":443,\"bytes_up\":0,\"bytes_down\":0}");
	assert_string_equal(audit_event_str(&ev, "path"), "/\x1b[31m\"x\\y\xef\xbf\xbd");
	assert_string_equal(audit_event_str(&ev, "kind"), "tunnel-request");

	parse_ok("{\"time\":1,\"decision\":\"deny\",\"kind\":\"dns\",\"method\":\"TXT\",\"host\":\"c2VjcmV0.exfil.example\","
		 "\"reason\":\"no rule allows this name\",\"bytes_up\":0,\"bytes_down\":0}");
	assert_string_equal(audit_event_str(&ev, "method"), "TXT");
	parse_ok("{\"time\":1,\"decision\":\"deny\",\"kind\":\"malformed\",\"reason\":\"request line: bad method\","
		 "\"bytes_up\":0,\"bytes_down\":0}");
	parse_ok("{\"time\":1,\"decision\":\"allow\",\"kind\":\"connect\",\"host\":\"example.com\",\"rule\":\"r\","
		 "\"port\":443,\"bytes_up\":5120,\"bytes_down\":1048576}");
	/* The supervisor's (src/sandbox/trace.c, supervisor.c). */
	parse_ok("{\"kind\":\"file_denied\",\"decision\":\"deny\",\"syscall\":\"openat\",\"file\":\"/etc/shadow\","
		 "\"command\":\"cat\",\"reason\":\"EACCES [filesystem]\"}\n");
	assert_string_equal(audit_event_str(&ev, "file"), "/etc/shadow");
	parse_ok("{\"kind\":\"policy_loaded\",\"decision\":\"allow\",\"policy_file\":\"/home/u/p.yaml\"}");
	parse_ok("{\"kind\":\"session_end\",\"exit_status\":-9,\"session\":true,\"x\":false}");
	assert_int_equal(audit_event_int(&ev, "exit_status", 0), -9);
	assert_int_equal(ev.f[2].v.type, AUDIT_BOOL);
	assert_true(ev.f[2].v.b);
	assert_false(ev.f[3].v.b);
	/* Unicode: raw UTF-8 kept, escapes decoded, surrogate pairs joined. */
	parse_ok("{\"a\":\"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00 \xf0\x9f\x98\x80\",\"b\":\"\\/\\b\\f\\n\\r\\t\"}");
	assert_string_equal(audit_event_str(&ev, "a"), "caf\xc3\xa9 \xc3\xa9 \xf0\x9f\x98\x80 \xf0\x9f\x98\x80");
	assert_string_equal(audit_event_str(&ev, "b"), "/\b\f\n\r\t");
	/* JSON whitespace between tokens; the empty object. */
	parse_ok(" { \"a\" : 1 ,\t\"b\" :\r\n\"c\" } \r\n");
	assert_int_equal(ev.n, 2);
	parse_ok("{}");
	assert_int_equal(ev.n, 0);
}

static void test_event_limits(void **state)
{
	(void)state;
	/* Keys of 31 bytes pass, 32 do not. */
	parse_ok("{\"k234567890123456789012345678901\":1}");
	assert_int_equal(audit_event_int(&ev, "k234567890123456789012345678901", 0), 1);
	assert_int_equal(audit_event_parse("{\"k2345678901234567890123456789012\":1}", 37, &ev), -EINVAL);
	/* 32 fields pass, 33 do not. */
	struct buf b = { 0 };
	for (int n = 32; n <= 33; n++) {
		buf_reset(&b);
		assert_int_equal(buf_puts(&b, "{"), 0);
		for (int i = 0; i < n; i++)
			assert_int_equal(buf_printf(&b, "%s\"f%d\":%d", i ? "," : "", i, i), 0);
		assert_int_equal(buf_puts(&b, "}"), 0);
		assert_int_equal(audit_event_parse(b.data, b.len, &ev), n == 32 ? 0 : -EINVAL);
		if (n == 32)
			assert_int_equal(audit_event_int(&ev, "f31", 0), 31);
	}
	/* A line of AUDIT_EVENT_MAX_LINE bytes passes, one more does not. */
	for (size_t len = AUDIT_EVENT_MAX_LINE; len <= AUDIT_EVENT_MAX_LINE + 1; len++) {
		buf_reset(&b);
		assert_int_equal(buf_puts(&b, "{\"a\":\""), 0);
		while (b.len < len - 2)
			assert_int_equal(buf_puts(&b, "x"), 0);
		assert_int_equal(buf_puts(&b, "\"}"), 0);
		assert_int_equal(b.len, len);
		assert_int_equal(audit_event_parse(b.data, b.len, &ev), len == AUDIT_EVENT_MAX_LINE ? 0 : -EINVAL);
	}
	buf_free(&b);
	/* int64 bounds */
	parse_ok("{\"a\":9223372036854775807,\"b\":-9223372036854775808,\"c\":0,\"d\":-0}");
	assert_int_equal(audit_event_int(&ev, "a", 0), INT64_MAX);
	assert_int_equal(audit_event_int(&ev, "b", 0), INT64_MIN);
	assert_int_equal(audit_event_parse("{\"a\":9223372036854775808}", 25, &ev), -EINVAL);
	assert_int_equal(audit_event_parse("{\"a\":-9223372036854775809}", 26, &ev), -EINVAL);
	/* Never past len: the text goes on, or stops inside a string. */
	const char *more = "{\"a\":1}, \"b\":2}";
	assert_int_equal(audit_event_parse(more, 7, &ev), 0);
	assert_int_equal(ev.n, 1);
	char cut[] = { '{', '"', 'a', '"', ':', '"', 'b', 'c' };
	assert_int_equal(audit_event_parse(cut, sizeof(cut), &ev), -EINVAL);
	char cut2[] = { '{', '"', 'a', '"', ':', '"', '\\', 'u', '0', '0' };
	assert_int_equal(audit_event_parse(cut2, sizeof(cut2), &ev), -EINVAL);
	char cut3[] = { '{', '"', 'a', '"', ':', '"', '\xc3' };
	assert_int_equal(audit_event_parse(cut3, sizeof(cut3), &ev), -EINVAL);
	assert_int_equal(audit_event_parse(NULL, 0, &ev), -EINVAL);
}

static void test_event_rejects(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		size_t len; /* 0: strlen */
	} bad[] = {
		{ "", 0 },
		{ "\n", 0 },
		{ "{", 0 },
		{ "}", 0 },
		{ "[]", 0 },
		{ "\"a\"", 0 },
		{ "1", 0 },
		{ "null", 0 },
		{ "{\"a\":1,}", 0 },            /* trailing comma */
		{ "{,\"a\":1}", 0 },
		{ "{\"a\":1 \"b\":2}", 0 },     /* missing comma */
		{ "{\"a\" 1}", 0 },             /* missing colon */
		{ "{\"a\":}", 0 },
		{ "{a:1}", 0 },                 /* bare key */
		{ "{'a':1}", 0 },               /* single quotes */
		{ "{\"a\":1}}", 0 },
		{ "{\"a\":1} x", 0 },           /* trailing bytes */
		{ "{\"a\":1}{}", 0 },
		{ "{\"a\":1,\"a\":2}", 0 },     /* duplicate key */
		{ "{\"a\":1,\"\\u0061\":2}", 0 }, /* duplicate after unescaping */
		/* duplicates at any length and position (the keys are first
		 * compared by a fingerprint, read two ways) */
		{ "{\"rule\":1,\"decision\":\"allow\",\"rule\":2}", 0 },
		{ "{\"x\":0,\"rule\":1,\"decision\":\"allow\",\"rule\":2}", 0 },
		{ "{\"abcdefgh\":1,\"x\":2,\"abcdefgh\":3}", 0 },
		{ "{\"abcdefghijklmnopq\":1,\"abcdefghijklmnopr\":2,\"abcdefghijklmnopq\":3}", 0 },
		{ "{\"\":1,\"\":2}", 0 },
		{ "{\"\\u00e9\":1,\"\xc3\xa9\":2}", 0 },
		{ "{\"a\":{}}", 0 },            /* nesting */
		{ "{\"a\":[1]}", 0 },
		{ "{\"a\":null}", 0 },
		{ "{\"a\":1.5}", 0 },           /* not an integer */
		{ "{\"a\":1e3}", 0 },
		{ "{\"a\":1E+3}", 0 },
		{ "{\"a\":01}", 0 },            /* leading zero */
		{ "{\"a\":-}", 0 },
		{ "{\"a\":+1}", 0 },
		{ "{\"a\":.5}", 0 },
		{ "{\"a\":1.}", 0 },
		{ "{\"a\":0x10}", 0 },
		{ "{\"a\":NaN}", 0 },
		{ "{\"a\":tru}", 0 },
		{ "{\"a\":True}", 0 },
		{ "{\"a\":\"x}", 0 },           /* unterminated */
		{ "{\"a\":\"\\x\"}", 0 },       /* invalid escape */
		{ "{\"a\":\"\\'\"}", 0 },
		{ "{\"a\":\"\\u12\"}", 0 },
		{ "{\"a\":\"\\u12g4\"}", 0 },
		{ "{\"a\":\"\\u0000\"}", 0 },   /* NUL */
		{ "{\"a\":\"\\ud800\"}", 0 },   /* lone high surrogate */
		{ "{\"a\":\"\\ud800\\u0041\"}", 0 },
		{ "{\"a\":\"\\udc00\"}", 0 },   /* lone low surrogate */
		{ "{\"a\":\"\x01\"}", 0 },      /* raw control character */
		{ "{\"a\":\"\t\"}", 0 },
		{ "{\"a\":\"\xff\"}", 0 },      /* invalid UTF-8 */
		{ "{\"a\":\"\xc0\xaf\"}", 0 },  /* overlong */
		{ "{\"a\":\"\xe0\x80\xaf\"}", 0 },
		{ "{\"a\":\"\xed\xa0\x80\"}", 0 }, /* a surrogate in UTF-8 */
		{ "{\"a\":\"\xf4\x90\x80\x80\"}", 0 }, /* past U+10FFFF */
		{ "{\"a\":\"\xc3\"}", 0 },      /* cut sequence */
		{ "{\"a\":\"b\0\"}", 10 },       /* a NUL byte in the text */
		{ "{\"a\":1}\0", 8 },
		{ "\xef\xbb\xbf{\"a\":1}", 0 }, /* BOM */
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
		ev.n = 99;
		if (audit_event_parse(bad[i].text, len, &ev) != -EINVAL)
			fail_msg("accepted bad event #%zu: %s", i, bad[i].text);
		assert_int_equal(ev.n, 0);
	}
	/* The neighbours of those refusals are accepted. */
	static const char *const good[] = {
		"{\"a\":1,\"b\":2}",
		"{\"a\":1,\"A\":2}",
		"{\"rule\":1,\"decision\":\"allow\",\"rules\":2,\"rul\":3,\"Rule\":4}",
		"{\"abcdefghijklmnopq\":1,\"abcdefghijklmnopr\":2,\"bbcdefghijklmnopq\":3}",
		"{\"\":1}", /* the empty key */
		"{\"a\":0}",
		"{\"a\":-1}",
		"{\"a\":true}",
		"{\"a\":\"\\u0001\\ud800\\udc00\\u00e9\\uFFFF\"}",
		"{\"a\":\"\x7f\"}",
		"{\"a\":\"\xf4\x8f\xbf\xbf\"}",
		"{\"a\":\"\\\\u0000\"}",
		"{\"a\":1}\n",
	};
	for (size_t i = 0; i < ARRAY_LEN(good); i++)
		if (audit_event_parse(good[i], strlen(good[i]), &ev) != 0)
			fail_msg("refused good event #%zu: %s", i, good[i]);
}

/* The generic reader nests, but only as deep as asked, and reports where. */
static void test_json_reader(void **state)
{
	(void)state;
	struct doc_json_tok tok[16];
	struct doc_json j;
	const char *t = "{\"a\":{\"b\":[1,{\"c\":null}]},\"d\":\"e\"}";
	assert_int_equal(doc_json_parse(&j, t, strlen(t), tok, 16, 4), 0);
	assert_int_equal(j.ntok, 11);
	assert_int_equal(doc_json_parse(&j, t, strlen(t), tok, 16, 3), -EINVAL);
	assert_string_equal(j.err, "nested too deep");
	assert_int_equal(doc_json_parse(&j, t, strlen(t), tok, 10, 4), -EINVAL);
	assert_string_equal(j.err, "too many values");
	assert_int_equal(doc_json_parse(&j, t, strlen(t), tok, 11, 4), 0);
	int a = doc_json_member(&j, 0, "a");
	assert_true(a > 0);
	assert_int_equal(tok[a].type, DOC_JSON_OBJECT);
	int d = doc_json_member(&j, 0, "d");
	char out[8];
	assert_int_equal(doc_json_str(&j, d, out, sizeof(out)), 1);
	assert_string_equal(out, "e");
	assert_int_equal(doc_json_member(&j, 0, "b"), -1); /* not a member of the root */
	assert_int_equal(doc_json_member(&j, a, "b"), a + 2);
	const char *dup = "[{\"x\":1},{\"y\":{\"x\":2,\"x\":3}}]";
	assert_int_equal(doc_json_parse(&j, dup, strlen(dup), tok, 16, 4), -EINVAL);
	assert_string_equal(j.err, "duplicate key");
	assert_int_equal(j.err_at, 21);
	const char *ok = "[{\"x\":1},{\"y\":{\"x\":2}, \"x\":3}]";
	assert_int_equal(doc_json_parse(&j, ok, strlen(ok), tok, 16, 4), 0);
	/* Past 32 keys every key is compared in full: a duplicate is still
	 * found, wherever it is. */
	struct doc_json_tok many[128];
	struct buf b = { 0 };
	for (int twin = 0; twin < 3; twin++) {
		buf_reset(&b);
		assert_int_equal(buf_puts(&b, "{"), 0);
		for (int i = 0; i < 40; i++)
			assert_int_equal(buf_printf(&b, "%s\"key%d\":%d", i ? "," : "", i, i), 0);
		if (twin == 1)
			assert_int_equal(buf_puts(&b, ",\"key3\":0"), 0);
		if (twin == 2)
			assert_int_equal(buf_puts(&b, ",\"key\\u0033\":0"), 0);
		assert_int_equal(buf_puts(&b, "}"), 0);
		assert_int_equal(doc_json_parse(&j, b.data, b.len, many, ARRAY_LEN(many), 1), twin ? -EINVAL : 0);
		if (twin)
			assert_string_equal(j.err, "duplicate key");
	}
	buf_free(&b);
	const char *deep = "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]";
	assert_int_equal(doc_json_parse(&j, deep, strlen(deep), tok, 16, 16), -EINVAL);
	const char *num = "[-0.5e-3,1E9,0]";
	assert_int_equal(doc_json_parse(&j, num, strlen(num), tok, 16, 1), 0);
	assert_false(tok[1].integer);
	assert_true(tok[3].integer);
	int64_t v;
	assert_int_equal(doc_json_int(&j, 1, &v), -EINVAL);
	assert_int_equal(doc_json_int(&j, 3, &v), 0);
	assert_int_equal(v, 0);
	/* decoding into a buffer too small */
	const char *s = "\"ab\\u00e9\"";
	assert_int_equal(doc_json_parse(&j, s, strlen(s), tok, 16, 1), 0);
	assert_int_equal(doc_json_str(&j, 0, out, 4), -E2BIG);
	assert_int_equal(doc_json_str(&j, 0, out, 5), 4);
	assert_string_equal(out, "ab\xc3\xa9");
}

/* ---- records ---- */

static const char golden_http[] =
	"{\"class_uid\":4002,\"category_uid\":4,\"activity_id\":3,\"type_uid\":400203,\"time\":1796019715315,"
	"\"severity_id\":1,\"metadata\":{\"product\":{\"name\":\"airlock\",\"vendor_name\":\"airlock\",\"version\":\"" AIRLOCK_VERSION
	"\"},\"version\":\"1.3.0\",\"log_name\":\"decisions\",\"uid\":\"" SESSION_ID ":7\"},"
	"\"actor\":{\"app_name\":\"airlock\",\"session\":{\"uid\":\"" SESSION_ID "\"},"
	"\"user\":{\"name\":\"test-agent\",\"type_id\":99,\"type\":\"non-human\"}},"
	"\"dst_endpoint\":{\"hostname\":\"api.example.com\",\"port\":443},"
	"\"http_request\":{\"http_method\":\"GET\",\"url\":{\"path\":\"/v1/items?q=\\\"1\\\"\",\"hostname\":\"api.example.com\","
	"\"port\":443}},\"http_response\":{\"code\":200},\"traffic\":{\"bytes_in\":422,\"bytes_out\":102},"
	"\"disposition_id\":1,\"action_id\":1,\"status_id\":1,\"message\":\"matched\","
	"\"airlock\":{\"decision\":\"allow\",\"enforced\":true,\"kind\":\"http\",\"rule\":\"network.endpoints[0]\","
	"\"credential\":\"github\",\"policy_sha256\":\"" POLICY_SHA "\",\"session\":\"" SESSION_ID "\","
	"\"agent\":\"test-agent\",\"boundary\":\"process\",\"mode\":\"enforce\",\"seq\":7,"
	"\"prev\":\"abababababababababababababababababababababababababababababababab\"";

static void test_record_golden(void **state)
{
	(void)state;
	struct audit_session s;
	session_fill(&s);
	parse_ok("{\"time\":1,\"decision\":\"allow\",\"kind\":\"http\",\"method\":\"GET\",\"host\":\"api.example.com\","
		 "\"path\":\"/v1/items?q=\\\"1\\\"\",\"rule\":\"network.endpoints[0]\",\"credential\":\"github\","
		 "\"reason\":\"matched\",\"port\":443,\"status\":200,\"bytes_up\":102,\"bytes_down\":422}");
	char prev[65];
	memset(prev, 'a', 64);
	for (int i = 1; i < 64; i += 2)
		prev[i] = 'b';
	prev[64] = '\0';
	struct buf a = { 0 }, b = { 0 };
	assert_int_equal(audit_record_build(&ev, &s, 7, prev, 1796019715315LL, &a), 0);
	assert_string_equal(a.data, golden_http);
	/* Built again: the same bytes. Appended: after what was there. */
	assert_int_equal(buf_puts(&b, "xyz"), 0);
	assert_int_equal(audit_record_build(&ev, &s, 7, prev, 1796019715315LL, &b), 0);
	assert_int_equal(b.len, a.len + 3);
	assert_memory_equal(b.data + 3, a.data, a.len);

	/* Observe mode: the deny is logged, not enforced. */
	s.enforced = false;
	snprintf(s.mode, sizeof(s.mode), "observe");
	parse_ok("{\"decision\":\"deny\",\"kind\":\"connect\",\"host\":\"x.example\",\"port\":22}");
	buf_reset(&a);
	assert_int_equal(audit_record_build(&ev, &s, 1, ZEROS, 5, &a), 0);
	assert_non_null(strstr(a.data, "\"activity_id\":1,\"type_uid\":400101,\"time\":5,\"severity_id\":3,"));
	assert_non_null(strstr(a.data, ",\"disposition_id\":17,\"action_id\":1,\"status_id\":1,\"airlock\":"
				       "{\"decision\":\"deny\",\"enforced\":false,\"kind\":\"connect\""));
	assert_non_null(strstr(a.data, "\"mode\":\"observe\""));
	/* An event that was enforced all the same (a seccomp refusal in
	 * observe mode) says so and is recorded as blocked... */
	parse_ok("{\"decision\":\"deny\",\"kind\":\"connect\",\"host\":\"x.example\",\"port\":22,\"enforced\":true}");
	buf_reset(&a);
	assert_int_equal(audit_record_build(&ev, &s, 1, ZEROS, 5, &a), 0);
	assert_non_null(strstr(a.data, ",\"disposition_id\":2,\"action_id\":2,\"status_id\":2,\"airlock\":"
				       "{\"decision\":\"deny\",\"enforced\":true,"));
	/* ...but no event takes enforcement away from a session that
	 * enforces. */
	s.enforced = true;
	snprintf(s.mode, sizeof(s.mode), "enforce");
	parse_ok("{\"decision\":\"deny\",\"kind\":\"connect\",\"host\":\"x.example\",\"port\":22,\"enforced\":false}");
	buf_reset(&a);
	assert_int_equal(audit_record_build(&ev, &s, 1, ZEROS, 5, &a), 0);
	assert_non_null(strstr(a.data, "{\"decision\":\"deny\",\"enforced\":true,"));
	assert_null(strstr(a.data, "\"enforced\":false"));
	parse_ok("{\"decision\":\"deny\",\"kind\":\"connect\",\"host\":\"x.example\",\"port\":22}");
	buf_reset(&a);
	assert_int_equal(audit_record_build(&ev, &s, 1, ZEROS, 5, &a), 0);
	assert_non_null(strstr(a.data, "\"activity_id\":5,\"type_uid\":400105,"));
	assert_non_null(strstr(a.data, ",\"disposition_id\":2,\"action_id\":2,\"status_id\":2,"));
	buf_free(&a);
	buf_free(&b);
}

/* Each kind in its class, with the activity OCSF 1.3.0 gives it; the
 * record closed with a hash is one valid JSON object. */
static void test_record_classes(void **state)
{
	(void)state;
	static const struct {
		const char *event;
		int class_uid, activity_id;
		const char *has; /* a member the class brings */
	} cases[] = {
		{ "{\"decision\":\"allow\",\"kind\":\"http\",\"method\":\"POST\",\"host\":\"h\",\"path\":\"/\"}", 4002, 6,
		  "\"http_request\":{\"http_method\":\"POST\",\"url\":{\"path\":\"/\",\"hostname\":\"h\"}}" },
		{ "{\"decision\":\"allow\",\"kind\":\"tunnel-request\",\"method\":\"PATCH\"}", 4002, 99, "\"http_request\":" },
		{ "{\"decision\":\"deny\",\"kind\":\"transparent\",\"method\":\"DELETE\"}", 4002, 2,
		  "\"user\":{\"name\":\"test-agent\",\"type_id\":99,\"type\":\"non-human\"}},\"dst_endpoint\":{\"name\":"
		  "\"(unknown)\"},\"http_request\":{\"http_method\":\"DELETE\"},\"http_response\":{\"code\":0}" },
		{ "{\"decision\":\"deny\",\"kind\":\"malformed\",\"reason\":\"bad\"}", 4002, 0, "\"message\":\"bad\"" },
		{ "{\"decision\":\"allow\",\"kind\":\"git\",\"method\":\"GET\"}", 4002, 3, "\"http_method\":\"GET\"" },
		{ "{\"decision\":\"allow\",\"kind\":\"connect\",\"host\":\"h\",\"port\":443}", 4001, 1,
		  "\"dst_endpoint\":{\"hostname\":\"h\",\"port\":443}" },
		{ "{\"decision\":\"deny\",\"kind\":\"transparent-tls\",\"host\":\"h\"}", 4001, 5, "\"dst_endpoint\":" },
		{ "{\"decision\":\"deny\",\"kind\":\"dns\",\"method\":\"TXT\",\"host\":\"x.example\"}", 4003, 1,
		  "\"query\":{\"hostname\":\"x.example\",\"type\":\"TXT\"}" },
		{ "{\"decision\":\"deny\",\"kind\":\"leak\",\"method\":\"POST\",\"host\":\"h\",\"path\":\"/up\"}", 2004, 1,
		  "\"finding_info\":{\"title\":\"Secret in outbound traffic\",\"uid\":\"" SESSION_ID ":3\"},"
		  "\"evidences\":[{\"dst_endpoint\":{\"hostname\":\"h\"},\"http_request\":" },
		{ "{\"decision\":\"deny\",\"kind\":\"credential_misuse\",\"credential\":\"gh\"}", 2004, 1,
		  "\"title\":\"Credential used outside its binding\"" },
		{ "{\"kind\":\"file_denied\",\"decision\":\"deny\",\"syscall\":\"openat\",\"file\":\"/etc/shadow\","
		  "\"command\":\"cat\"}",
		  1001, 14, "\"file\":{\"name\":\"shadow\",\"path\":\"/etc/shadow\",\"type_id\":0}" },
		{ "{\"kind\":\"file_denied\",\"decision\":\"deny\",\"syscall\":\"unlinkat\",\"file\":\"/x\"}", 1001, 4,
		  "\"unmapped\":{\"syscall\":\"unlinkat\"}" },
		{ "{\"kind\":\"file_denied\",\"decision\":\"deny\",\"syscall\":\"frobnicate\"}", 1001, 99, "\"class_uid\":1001" },
		{ "{\"kind\":\"exec_denied\",\"decision\":\"deny\",\"file\":\"/usr/bin/nc\",\"command\":\"sh\"}", 1007, 1,
		  "\"actor\":{\"app_name\":\"airlock\",\"session\":{\"uid\":\"" SESSION_ID "\"},\"user\":{\"name\":"
		  "\"test-agent\",\"type_id\":99,\"type\":\"non-human\"},\"process\":{\"name\":\"sh\",\"uid\":\"unknown\"}},"
		  "\"device\":{\"hostname\":\"testhost\",\"type_id\":0},\"process\":{\"name\":\"nc\",\"uid\":\"unknown\","
		  "\"file\":{\"name\":\"nc\",\"path\":\"/usr/bin/nc\",\"type_id\":1}}" },
		{ "{\"kind\":\"syscall_denied\",\"decision\":\"deny\",\"syscall\":\"ptrace\",\"command\":\"gdb\",\"pid\":42}",
		  1007, 99, "\"process\":{\"name\":\"gdb\",\"pid\":42}},\"device\":{\"hostname\":\"testhost\",\"type_id\":0},"
		  "\"process\":{\"name\":\"gdb\",\"pid\":42}" },
		{ "{\"kind\":\"syscall_denied\",\"decision\":\"deny\",\"syscall\":\"ptrace\"}", 1007, 99, "\"syscall\":\"ptrace\"" },
		{ "{\"kind\":\"policy_loaded\",\"decision\":\"allow\",\"policy_file\":\"p.yaml\"}", 6003, 2,
		  "\"api\":{\"operation\":\"policy_loaded\"},\"src_endpoint\":{\"hostname\":\"testhost\"}" },
		{ "{\"kind\":\"session_end\",\"exit_status\":3}", 6003, 4, "\"unmapped\":{\"exit_status\":3}" },
		{ "{\"kind\":\"mcp\",\"decision\":\"step_up\",\"method\":\"tools/call\"}", 6003, 99,
		  "\"api\":{\"operation\":\"tools/call\"}" },
		{ "{\"kind\":\"mcp\",\"decision\":\"defer\"}", 6003, 99, "\"disposition\":\"Deferred\",\"action_id\":0" },
		{ "{\"kind\":\"http\",\"decision\":\"modify\",\"method\":\"GET\"}", 4002, 3,
		  "\"disposition_id\":99,\"disposition\":\"Modified\",\"action_id\":1,\"status_id\":1" },
		{ "{\"kind\":\"brand-new-kind\",\"decision\":\"allow\"}", 6003, 99,
		  "\"api\":{\"operation\":\"brand-new-kind\"}" },
	};
	struct audit_session s;
	session_fill(&s);
	struct buf b = { 0 };
	struct doc_json_tok tok[256];
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		parse_ok(cases[i].event);
		buf_reset(&b);
		assert_int_equal(audit_record_build(&ev, &s, 3, ZEROS, 1000, &b), 0);
		char want[128];
		snprintf(want, sizeof(want), "{\"class_uid\":%d,\"category_uid\":%d,\"activity_id\":%d,\"type_uid\":%d,",
			 cases[i].class_uid, cases[i].class_uid / 1000, cases[i].activity_id,
			 cases[i].class_uid * 100 + cases[i].activity_id);
		if (strncmp(b.data, want, strlen(want)) != 0)
			fail_msg("case %zu: %.120s, not %s", i, b.data, want);
		if (!strstr(b.data, cases[i].has))
			fail_msg("case %zu: no %s in %s", i, cases[i].has, b.data);
		/* findings are High; a deny Medium; the rest Informational or Low */
		assert_int_equal(buf_puts(&b, ",\"hash\":\"" ZEROS "\"}}"), 0);
		struct doc_json j;
		if (doc_json_parse(&j, b.data, b.len, tok, ARRAY_LEN(tok), 8) != 0)
			fail_msg("case %zu: not JSON (%s at %zu): %s", i, j.err, j.err_at, b.data);
		int air = doc_json_member(&j, 0, "airlock");
		assert_true(air > 0);
		assert_int_equal(tok[air].end, j.ntok); /* the last member */
	}
	/* No kind, no record. */
	parse_ok("{\"decision\":\"allow\"}");
	assert_int_equal(audit_record_build(&ev, &s, 3, ZEROS, 1, &b), -EINVAL);
	/* A seq of 0 or a prev that is not a hash is the writer's bug. */
	parse_ok("{\"kind\":\"http\"}");
	assert_int_equal(audit_record_build(&ev, &s, 0, ZEROS, 1, &b), -EINVAL);
	char notahash[65];
	memcpy(notahash, ZEROS, 65);
	notahash[10] = 'G';
	assert_int_equal(audit_record_build(&ev, &s, 1, notahash, 1, &b), -EINVAL);
	notahash[10] = '\0';
	assert_int_equal(audit_record_build(&ev, &s, 1, notahash, 1, &b), -EINVAL);
	buf_free(&b);
}

/* A checkpoint must name the head it follows; a session_start must carry
 * its certificate. */
static void test_record_checkpoint_fields(void **state)
{
	(void)state;
	struct audit_session s;
	session_fill(&s);
	struct buf b = { 0 };
	char sig[129];
	memset(sig, 'c', 128);
	sig[128] = '\0';
	char head[65];
	memset(head, 'd', 64);
	head[64] = '\0';
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"checkpoint\",\"decision\":\"allow\",\"covers_seq\":9,\"head\":\"%s\",\"sig\":\"%s\"}",
		 head, sig);
	parse_ok(json);
	assert_int_equal(audit_record_build(&ev, &s, 10, head, 1, &b), 0);
	char want[300];
	snprintf(want, sizeof(want), ",\"checkpoint\":{\"covers_seq\":9,\"head\":\"%s\",\"sig\":\"%s\"},\"seq\":10,\"prev\":\"%s\"",
		 head, sig, head);
	assert_non_null(strstr(b.data, want));
	buf_reset(&b);
	assert_int_equal(audit_record_build(&ev, &s, 11, head, 1, &b), -EINVAL); /* covers 9, not 10 */
	assert_int_equal(audit_record_build(&ev, &s, 10, ZEROS, 1, &b), -EINVAL); /* another head */
	assert_int_equal(b.len, 0);
	snprintf(json, sizeof(json), "{\"kind\":\"seal\",\"covers_seq\":9,\"head\":\"%s\",\"sig\":\"abc\"}", head);
	parse_ok(json);
	assert_int_equal(audit_record_build(&ev, &s, 10, head, 1, &b), -EINVAL); /* sig not 128 hex */
	/* checkpoint members on any other record are not copied */
	snprintf(json, sizeof(json), "{\"kind\":\"http\",\"covers_seq\":9,\"head\":\"%s\",\"sig\":\"%s\",\"certificate\":\"{}\"}",
		 head, sig);
	parse_ok(json);
	assert_int_equal(audit_record_build(&ev, &s, 10, head, 1, &b), 0);
	assert_null(strstr(b.data, "checkpoint"));
	assert_null(strstr(b.data, "certificate"));
	buf_reset(&b);
	parse_ok("{\"kind\":\"session_start\",\"certificate\":\"{}\"}");
	assert_int_equal(audit_record_build(&ev, &s, 1, ZEROS, 1, &b), -EINVAL);
	buf_free(&b);
}

/* An event whose strings hold raw bytes that need escaping, as a caller
 * may build one without audit_event_parse: host and path of n bytes each. */
static void event_raw(const char *kind, size_t n)
{
	memset(&ev, 0, sizeof(ev));
	char *p = ev.store;
	const struct {
		const char *key, *val;
		unsigned char fill;
	} f[] = { { "kind", kind, 0 }, { "decision", "deny", 0 }, { "host", NULL, 0x01 }, { "path", NULL, 0xff } };
	for (size_t i = 0; i < ARRAY_LEN(f); i++) {
		snprintf(ev.f[i].key, sizeof(ev.f[i].key), "%s", f[i].key);
		ev.f[i].v.type = AUDIT_STR;
		ev.f[i].v.s = p;
		if (f[i].val) {
			p += sprintf(p, "%s", f[i].val) + 1;
		} else {
			memset(p, f[i].fill, n);
			p[n] = '\0';
			p += n + 1;
		}
	}
	ev.n = ARRAY_LEN(f);
}

/* Strings of the agent's choosing that would push a line past the limit
 * are cut shorter; the record is kept and stays valid JSON. */
static void test_record_long_strings(void **state)
{
	(void)state;
	struct audit_session s;
	session_fill(&s);
	struct buf b = { 0 };
	/* 3000 bytes escape to 18000, four times over (host twice, path in
	 * the url, and again in a finding's evidences). */
	static const char *const kinds[] = { "http", "leak" };
	for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
		event_raw(kinds[k], 3000);
		buf_reset(&b);
		assert_int_equal(audit_record_build(&ev, &s, 1, ZEROS, 1, &b), 0);
		assert_true(b.len <= AUDIT_CANONICAL_MAX);
		assert_true(b.len > 4 * 4096); /* cut to 4096 bytes each, not emptied */
		assert_non_null(strstr(b.data, ",\"seq\":1,\"prev\":\"" ZEROS "\""));
		assert_int_equal(buf_puts(&b, ",\"hash\":\"" ZEROS "\"}}"), 0);
		struct doc_json_tok tok[256];
		struct doc_json j;
		assert_int_equal(doc_json_parse(&j, b.data, b.len, tok, ARRAY_LEN(tok), 8), 0);
	}
	/* Short enough: nothing is cut. */
	event_raw("http", 1000);
	buf_reset(&b);
	assert_int_equal(audit_record_build(&ev, &s, 1, ZEROS, 1, &b), 0);
	assert_true(b.len > 3 * 6000);
	buf_free(&b);
}

/* ---- the chain ---- */

static void test_sha256(void **state)
{
	(void)state;
	char h[65];
	audit_sha256_hex("abc", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	audit_sha256_hex("", 0, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* ---- the authority key ---- */

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* An Ed25519 PKCS#8 PEM (RFC 8410) of the 32-byte seed, with oid's last
 * byte as given (0x70 Ed25519, 0x6e X25519). */
static void pkcs8_pem(const uint8_t seed[32], uint8_t oid_last, const char *before, char *out, size_t cap)
{
	uint8_t der[48] = { 0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20 };
	der[11] = oid_last;
	memcpy(der + 16, seed, 32);
	struct buf b = { 0 };
	assert_int_equal(base64_encode(der, sizeof(der), &b), 0);
	snprintf(out, cap, "%s-----BEGIN PRIVATE KEY-----\n%.*s\n-----END PRIVATE KEY-----\n", before, (int)b.len, b.data);
	buf_free(&b);
}

/* Many first runs at once: each gets the one key that ends up in the
 * file, none sees it half written. Processes, because the race is between
 * writers started together. */
static void test_authority_key_first_runs_at_once(void **state)
{
	(void)state;
	enum { RUNS = 12, ROUNDS = 6 };
	for (int round = 0; round < ROUNDS; round++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/race%d/airlock/authority.key", tmpdir, round);
		int fds[RUNS][2];
		pid_t pids[RUNS];
		for (int i = 0; i < RUNS; i++) {
			assert_int_equal(pipe(fds[i]), 0);
			pids[i] = fork();
			assert_true(pids[i] >= 0);
			if (pids[i] == 0) {
				struct error err = { 0 };
				struct audit_key *k = NULL;
				uint8_t pub[AUDIT_PUB_LEN] = { 0 };
				if (audit_key_load_or_create(path, &k, &err) == 0)
					audit_key_public(k, pub);
				else
					fprintf(stderr, "run %d: %s\n", i, err.msg);
				_exit(write(fds[i][1], pub, sizeof(pub)) == (ssize_t)sizeof(pub) ? 0 : 1);
			}
			close(fds[i][1]);
		}
		uint8_t first[AUDIT_PUB_LEN], zero[AUDIT_PUB_LEN] = { 0 };
		for (int i = 0; i < RUNS; i++) {
			uint8_t pub[AUDIT_PUB_LEN];
			assert_int_equal(read(fds[i][0], pub, sizeof(pub)), (ssize_t)sizeof(pub));
			close(fds[i][0]);
			int status;
			assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			assert_memory_not_equal(pub, zero, sizeof(pub));
			if (i == 0)
				memcpy(first, pub, sizeof(pub));
			assert_memory_equal(pub, first, sizeof(pub));
		}
		struct error err = { 0 };
		struct audit_key *k = NULL;
		uint8_t pub[AUDIT_PUB_LEN];
		assert_int_equal(audit_key_load_or_create(path, &k, &err), 0);
		audit_key_public(k, pub);
		audit_key_free(k);
		assert_memory_equal(pub, first, sizeof(pub));
	}
}

/* The key made on first use is the key loaded afterwards, by the quick
 * reader of our own PEM and by libcrypto's for any other layout; a key of
 * another type, or readable by others, is refused. */
static void test_authority_key(void **state)
{
	(void)state;
	struct error err = { 0 };
	char path[256], pem[512];
	snprintf(path, sizeof(path), "%s/state/airlock/authority.key", tmpdir);
	struct audit_key *made = NULL, *loaded = NULL;
	assert_int_equal(audit_key_load_or_create(path, &made, &err), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	uint8_t a[AUDIT_PUB_LEN], b[AUDIT_PUB_LEN];
	audit_key_public(made, a);
	assert_int_equal(audit_key_load_or_create(path, &loaded, &err), 0);
	audit_key_public(loaded, b);
	assert_memory_equal(a, b, AUDIT_PUB_LEN);
	audit_key_free(loaded);
	loaded = NULL;
	audit_key_free(made);

	/* RFC 8032's first test key: seed 9d61b1..., public d75a98.... */
	static const uint8_t seed[32] = { 0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a,
					  0xf4, 0x92, 0xec, 0x2c, 0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32,
					  0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60 };
	static const uint8_t pub[32] = { 0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe,
					 0xd3, 0xc9, 0x64, 0x07, 0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6,
					 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a };
	/* As written: the quick reader. */
	pkcs8_pem(seed, 0x70, "", pem, sizeof(pem));
	write_text(path, pem, 0600);
	assert_int_equal(audit_key_load_or_create(path, &loaded, &err), 0);
	audit_key_public(loaded, b);
	assert_memory_equal(pub, b, AUDIT_PUB_LEN);
	audit_key_free(loaded);
	loaded = NULL;
	/* Text before the PEM, which PEM readers skip: libcrypto's reader,
	 * the same key. */
	pkcs8_pem(seed, 0x70, "authority of host x\n", pem, sizeof(pem));
	write_text(path, pem, 0600);
	assert_int_equal(audit_key_load_or_create(path, &loaded, &err), 0);
	audit_key_public(loaded, b);
	assert_memory_equal(pub, b, AUDIT_PUB_LEN);
	audit_key_free(loaded);
	loaded = NULL;
	/* The same layout for an X25519 key: not a signing key. */
	pkcs8_pem(seed, 0x6e, "", pem, sizeof(pem));
	write_text(path, pem, 0600);
	assert_int_equal(audit_key_load_or_create(path, &loaded, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not an Ed25519 private key"));
	/* Readable by others. */
	pkcs8_pem(seed, 0x70, "", pem, sizeof(pem));
	write_text(path, pem, 0644);
	assert_int_equal(audit_key_load_or_create(path, &loaded, &err), -EPERM);
	assert_non_null(strstr(err.msg, "readable by others"));
	unlink(path);
}

static void test_chain_append(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/chain.jsonl", tmpdir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	struct audit_chain c = { .seq = 1, .fd = fd };
	memcpy(c.prev, ZEROS, 65);
	struct audit_session s;
	session_fill(&s);
	struct buf b = { 0 };
	struct error err = { 0 };
	char first_hash[65];
	for (int i = 0; i < 2; i++) {
		parse_ok("{\"kind\":\"http\",\"decision\":\"allow\",\"method\":\"GET\"}");
		buf_reset(&b);
		assert_int_equal(audit_record_build(&ev, &s, c.seq, c.prev, 1, &b), 0);
		char h[65];
		audit_sha256_hex(b.data, b.len, h);
		size_t canon = b.len;
		char prev_before[65];
		memcpy(prev_before, c.prev, 65);
		assert_int_equal(audit_chain_append(&c, &b, &err), 0);
		/* the line: canonical, hash member, closing braces, newline */
		assert_int_equal(b.len, canon + AUDIT_HASH_SUFFIX_LEN + 1);
		char tail[128];
		snprintf(tail, sizeof(tail), ",\"hash\":\"%s\"}}\n", h);
		assert_string_equal(b.data + canon, tail);
		assert_int_equal(c.seq, (uint64_t)i + 2);
		assert_string_equal(c.prev, h);
		if (i == 0) {
			assert_non_null(strstr(b.data, "\"seq\":1,\"prev\":\"" ZEROS "\",\"hash\""));
			memcpy(first_hash, h, 65);
		} else {
			char want[100];
			snprintf(want, sizeof(want), "\"seq\":2,\"prev\":\"%s\",", first_hash);
			assert_non_null(strstr(b.data, want));
			assert_string_equal(prev_before, first_hash);
		}
	}
	close(fd);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);

	/* A write that fails leaves the chain and the buffer as they were. */
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	c.fd = p[1];
	buf_reset(&b);
	assert_int_equal(audit_record_build(&ev, &s, c.seq, c.prev, 1, &b), 0);
	size_t canon = b.len;
	char prev[65];
	memcpy(prev, c.prev, 65);
	assert_int_equal(audit_chain_append(&c, &b, &err), -EPIPE);
	assert_non_null(strstr(err.msg, "cannot write the audit log"));
	assert_int_equal(c.seq, 3);
	assert_string_equal(c.prev, prev);
	assert_int_equal(b.len, canon);
	close(p[1]);
	c.fd = -1;
	assert_int_equal(audit_chain_append(&c, &b, &err), -EBADF);
	/* an empty record is not appended */
	struct buf empty = { 0 };
	assert_int_equal(audit_chain_append(&c, &empty, &err), -EINVAL);
	buf_free(&b);
}

/* ---- whole logs ---- */

struct logw {
	char path[160];
	struct audit_key *authority;
	struct audit_key *session_key;
	struct audit_session s;
	struct audit_chain c;
	struct buf line;
};

static void put_event(struct logw *w)
{
	struct error err = { 0 };
	buf_reset(&w->line);
	assert_int_equal(audit_record_build(&ev, &w->s, w->c.seq, w->c.prev, 1796019715000LL + (int64_t)w->c.seq, &w->line), 0);
	if (audit_chain_append(&w->c, &w->line, &err) != 0)
		fail_msg("append: %s", err.msg);
}

static void put_json(struct logw *w, const char *json)
{
	parse_ok(json);
	put_event(w);
}

/* The certificate, as the writer makes it, signed by signer and naming
 * the authority whose public key is `named`. */
static void put_start(struct logw *w, const struct audit_key *signer, const uint8_t named[AUDIT_PUB_LEN])
{
	uint8_t spub[AUDIT_PUB_LEN], sig[AUDIT_SIG_LEN];
	char spub_hex[65], apub_hex[65], sig_hex[129];
	audit_key_public(w->session_key, spub);
	hex(spub, sizeof(spub), spub_hex);
	hex(named, AUDIT_PUB_LEN, apub_hex);
	char cert[1024];
	snprintf(cert, sizeof(cert),
		 "{\"agent\":\"%s\",\"session\":\"%s\",\"boundary\":\"process\",\"policy_sha256\":\"%s\",\"host\":"
		 "\"testhost\",\"not_before\":1796019715000,\"not_after\":1796106115000,\"session_key\":\"%s\","
		 "\"authority\":\"%s\"}",
		 w->s.agent, w->s.session_id, w->s.policy_sha256, spub_hex, apub_hex);
	assert_int_equal(audit_sign(signer, cert, strlen(cert), sig), 0);
	hex(sig, sizeof(sig), sig_hex);
	struct buf e = { 0 };
	assert_int_equal(buf_puts(&e, "{\"kind\":\"session_start\",\"decision\":\"allow\",\"certificate\":"), 0);
	assert_int_equal(buf_json_string(&e, cert, strlen(cert)), 0);
	assert_int_equal(buf_printf(&e, ",\"certificate_sig\":\"%s\",\"authority\":\"%s\"}", sig_hex, apub_hex), 0);
	put_json(w, e.data);
	buf_free(&e);
}

/* A checkpoint or the seal over the current head, signed by signer over
 * the message for `covers` (normally the head's own seq). */
static void put_checkpoint_as(struct logw *w, bool seal, const struct audit_key *signer, uint64_t covers)
{
	char msg[256], sig_hex[129], json[512];
	uint8_t sig[AUDIT_SIG_LEN];
	int n = snprintf(msg, sizeof(msg), "%s\n%s\n%llu\n%s\n", seal ? "airlock-seal" : "airlock-checkpoint",
			 w->s.session_id, (unsigned long long)covers, w->c.prev);
	assert_int_equal(audit_sign(signer, msg, (size_t)n, sig), 0);
	hex(sig, sizeof(sig), sig_hex);
	snprintf(json, sizeof(json),
		 "{\"kind\":\"%s\",\"decision\":\"allow\",\"covers_seq\":%llu,\"head\":\"%s\",\"sig\":\"%s\"}",
		 seal ? "seal" : "checkpoint", (unsigned long long)(w->c.seq - 1), w->c.prev, sig_hex);
	put_json(w, json);
}

static void put_checkpoint(struct logw *w, bool seal)
{
	put_checkpoint_as(w, seal, w->session_key, w->c.seq - 1);
}

static void put_http(struct logw *w, int i)
{
	char json[512];
	snprintf(json, sizeof(json),
		 "{\"time\":1796019715315,\"decision\":\"%s\",\"kind\":\"http\",\"method\":\"GET\",\"host\":"
		 "\"api.example.com\",\"path\":\"/v1/items/%d\",\"rule\":\"network.endpoints[0]\",\"port\":443,"
		 "\"status\":200,\"bytes_up\":102,\"bytes_down\":422}",
		 i % 3 ? "allow" : "deny", i);
	put_json(w, json);
}

static void logw_open(struct logw *w, const char *name)
{
	memset(w, 0, sizeof(*w));
	struct error err = { 0 };
	snprintf(w->path, sizeof(w->path), "%s/%s", tmpdir, name);
	assert_int_equal(audit_key_generate(&w->authority, &err), 0);
	assert_int_equal(audit_key_generate(&w->session_key, &err), 0);
	session_fill(&w->s);
	w->c.seq = 1;
	memcpy(w->c.prev, ZEROS, 65);
	w->c.fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	assert_true(w->c.fd >= 0);
}

static void logw_close(struct logw *w)
{
	close(w->c.fd);
	audit_key_free(w->authority);
	audit_key_free(w->session_key);
	buf_free(&w->line);
}

/*
 * The standard log, 21 lines:
 *   1 session_start, 2 policy_loaded, 3..9 http, 10 checkpoint (covers 9),
 *   11..15 dns, file_denied, leak, connect, http, 16 checkpoint (covers 15),
 *   17..19 http, 20 session_end, 21 seal (covers 20).
 */
#define STD_LINES 21

static void std_log(struct logw *w, const char *name)
{
	logw_open(w, name);
	uint8_t apub[AUDIT_PUB_LEN];
	audit_key_public(w->authority, apub);
	put_start(w, w->authority, apub);
	put_json(w, "{\"kind\":\"policy_loaded\",\"decision\":\"allow\",\"policy_file\":\"/home/u/policy.yaml\"}");
	for (int i = 3; i <= 9; i++)
		put_http(w, i);
	put_checkpoint(w, false);
	put_json(w, "{\"time\":1,\"decision\":\"deny\",\"kind\":\"dns\",\"method\":\"TXT\",\"host\":\"x.exfil.example\","
		    "\"reason\":\"no rule allows this name\",\"bytes_up\":0,\"bytes_down\":0}");
	put_json(w, "{\"kind\":\"file_denied\",\"decision\":\"deny\",\"syscall\":\"openat\",\"file\":\"/etc/shadow\","
		    "\"command\":\"cat\",\"reason\":\"EACCES [filesystem]\"}");
	put_json(w, "{\"time\":1,\"decision\":\"deny\",\"kind\":\"leak\",\"method\":\"POST\",\"host\":\"paste.example\","
		    "\"path\":\"/api\",\"reason\":\"aws-access-key in the body\",\"port\":443,\"bytes_up\":0,\"bytes_down\":0}");
	put_json(w, "{\"time\":1,\"decision\":\"allow\",\"kind\":\"connect\",\"host\":\"github.com\",\"rule\":\"r\","
		    "\"port\":443,\"bytes_up\":5120,\"bytes_down\":1048576}");
	put_http(w, 15);
	put_checkpoint(w, false);
	for (int i = 17; i <= 19; i++)
		put_http(w, i);
	put_json(w, "{\"kind\":\"session_end\",\"decision\":\"allow\",\"exit_status\":0}");
	put_checkpoint(w, true);
	assert_int_equal(w->c.seq, STD_LINES + 1);
}

/* ---- the log's lines, for tampering ---- */

struct lines {
	char *l[64];
	size_t n;
};

static void lines_read(const char *path, struct lines *ls)
{
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	ls->n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		assert_true(ls->n < ARRAY_LEN(ls->l));
		ls->l[ls->n++] = strndup(line, (size_t)n);
	}
	free(line);
	fclose(f);
}

static void lines_free(struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->l[i]);
	ls->n = 0;
}

static void lines_write(const struct lines *ls, const char *path)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	for (size_t i = 0; i < ls->n; i++)
		if (ls->l[i])
			fputs(ls->l[i], f);
	fclose(f);
}

/* Remove line i (0-based). */
static void lines_del(struct lines *ls, size_t i)
{
	free(ls->l[i]);
	memmove(&ls->l[i], &ls->l[i + 1], (ls->n - i - 1) * sizeof(ls->l[0]));
	ls->n--;
}

/* Insert a copy of s before line i. */
static void lines_ins(struct lines *ls, size_t i, const char *s)
{
	assert_true(ls->n < ARRAY_LEN(ls->l));
	memmove(&ls->l[i + 1], &ls->l[i], (ls->n - i) * sizeof(ls->l[0]));
	ls->l[i] = strdup(s);
	ls->n++;
}

/* Replace the first `from` in line i by `to`. */
static void lines_edit(struct lines *ls, size_t i, const char *from, const char *to)
{
	char *p = strstr(ls->l[i], from);
	assert_non_null(p);
	size_t len = strlen(ls->l[i]) - strlen(from) + strlen(to) + 1;
	char *n = malloc(len);
	assert_non_null(n);
	snprintf(n, len, "%.*s%s%s", (int)(p - ls->l[i]), ls->l[i], to, p + strlen(from));
	free(ls->l[i]);
	ls->l[i] = n;
}

/* What a forger without the keys can do: recompute line i's hash, and link
 * every line after it again (prev, then hash), up to the end. */
static void lines_rechain(struct lines *ls, size_t from)
{
	for (size_t i = from; i < ls->n; i++) {
		char *l = ls->l[i];
		size_t len = strlen(l) - 1; /* without the newline */
		size_t canon = len - AUDIT_HASH_SUFFIX_LEN;
		if (i > from) {
			const char *prev_line = ls->l[i - 1];
			memcpy(l + canon - 65, prev_line + strlen(prev_line) - 1 - 67, 64);
		}
		char h[65];
		audit_sha256_hex(l, canon, h);
		memcpy(l + len - 67, h, 64);
	}
}

static int verify(const char *path, const uint8_t *authority, struct audit_report *rep)
{
	int r = audit_verify_file(path, authority, rep);
	if (getenv("TEST_AUDIT_VERBOSE"))
		fprintf(stderr, "verify %s: %d line %llu: %s\n", path, r, (unsigned long long)rep->bad_line, rep->problem);
	return r;
}

static void assert_problem(const struct audit_report *rep, uint64_t line, const char *text)
{
	if (rep->bad_line != line || strcmp(rep->problem, text) != 0)
		fail_msg("line %llu: \"%s\"; expected line %llu: \"%s\"", (unsigned long long)rep->bad_line, rep->problem,
			 (unsigned long long)line, text);
}

static void assert_problem_prefix(const struct audit_report *rep, uint64_t line, const char *text)
{
	if (rep->bad_line != line || strncmp(rep->problem, text, strlen(text)) != 0)
		fail_msg("line %llu: \"%s\"; expected line %llu: \"%s...\"", (unsigned long long)rep->bad_line,
			 rep->problem, (unsigned long long)line, text);
}

static void test_verify_intact(void **state)
{
	(void)state;
	struct logw w;
	std_log(&w, "intact.jsonl");
	uint8_t apub[AUDIT_PUB_LEN];
	audit_key_public(w.authority, apub);
	struct audit_report rep;
	assert_int_equal(verify(w.path, NULL, &rep), 0);
	assert_int_equal(rep.records, STD_LINES);
	assert_int_equal(rep.checkpoints, 2);
	assert_true(rep.sealed);
	assert_false(rep.torn_tail);
	assert_int_equal(rep.bad_line, 0);
	assert_string_equal(rep.problem, "");
	assert_string_equal(rep.session_id, SESSION_ID);
	assert_string_equal(rep.agent, "test-agent");
	/* anchored to its authority */
	assert_int_equal(verify(w.path, apub, &rep), 0);
	assert_int_equal(rep.records, STD_LINES);

	/* ...and not to another one */
	struct audit_key *other;
	struct error err = { 0 };
	assert_int_equal(audit_key_generate(&other, &err), 0);
	uint8_t opub[AUDIT_PUB_LEN];
	audit_key_public(other, opub);
	char ahex[65], want[200];
	hex(apub, sizeof(apub), ahex);
	snprintf(want, sizeof(want), "signed by authority %s, not the one given", ahex);
	assert_int_equal(verify(w.path, opub, &rep), 2);
	assert_problem(&rep, 1, want);
	audit_key_free(other);
	logw_close(&w);
}

/* Each tamper next to the intact log it came from. */
static void tampered(const char *name, void (*edit)(struct lines *), int rc, uint64_t line, const char *problem,
		     bool prefix)
{
	struct logw w;
	std_log(&w, name);
	struct audit_report rep;
	assert_int_equal(verify(w.path, NULL, &rep), 0);
	struct lines ls;
	lines_read(w.path, &ls);
	assert_int_equal(ls.n, STD_LINES);
	edit(&ls);
	lines_write(&ls, w.path);
	lines_free(&ls);
	int r = verify(w.path, NULL, &rep);
	if (r != rc)
		fail_msg("%s: verify returned %d, not %d: line %llu: %s", name, r, rc, (unsigned long long)rep.bad_line,
			 rep.problem);
	if (prefix)
		assert_problem_prefix(&rep, line, problem);
	else
		assert_problem(&rep, line, problem);
	logw_close(&w);
}

static void edit_reason(struct lines *ls)
{
	lines_edit(ls, 12, "aws-access-key in the body", "nothing to see here, move on");
}

/* The edited line's own hash recomputed, and nothing after it. */
static void edit_reason_rehash_one(struct lines *ls)
{
	lines_edit(ls, 12, "aws-access-key in the body", "nothing to see here, move on");
	struct lines one = { .n = 13 };
	memcpy(one.l, ls->l, 13 * sizeof(ls->l[0]));
	lines_rechain(&one, 12);
}

static void delete_one(struct lines *ls)
{
	lines_del(ls, 4); /* seq 5 */
}

static void delete_three(struct lines *ls)
{
	lines_del(ls, 4);
	lines_del(ls, 4);
	lines_del(ls, 4); /* seq 5, 6, 7 */
}

static void duplicate(struct lines *ls)
{
	lines_ins(ls, 5, ls->l[4]); /* seq 5 again, on line 6 */
}

static void duplicate_far(struct lines *ls)
{
	lines_ins(ls, 7, ls->l[2]); /* seq 3 again, after seq 7 */
}

static void insert_forged(struct lines *ls)
{
	/* A record of seq 5 that links to seq 4, before the real seq 5. */
	lines_ins(ls, 4, ls->l[4]);
	lines_edit(ls, 4, "/v1/items/5", "/v1/items/5-forged");
	struct lines upto = { .n = 5 };
	memcpy(upto.l, ls->l, 5 * sizeof(ls->l[0]));
	lines_rechain(&upto, 4);
}

static void swap(struct lines *ls)
{
	char *t = ls->l[4];
	ls->l[4] = ls->l[5];
	ls->l[5] = t; /* 4, 6, 5, 7 */
}

static void move_later(struct lines *ls)
{
	char *t = ls->l[4];
	memmove(&ls->l[4], &ls->l[5], 3 * sizeof(ls->l[0]));
	ls->l[7] = t; /* 4, 6, 7, 8, 5, 9 */
}

static void truncate_tail(struct lines *ls)
{
	while (ls->n > 13)
		lines_del(ls, ls->n - 1); /* ends at seq 13; last checkpoint covers 9 */
}

static void truncate_before_seal(struct lines *ls)
{
	lines_del(ls, ls->n - 1);
}

static void truncate_nothing_signed(struct lines *ls)
{
	while (ls->n > 5)
		lines_del(ls, ls->n - 1);
}

static void torn_no_newline(struct lines *ls)
{
	lines_del(ls, ls->n - 1);
	char *l = ls->l[ls->n - 1];
	l[strlen(l) / 2] = '\0'; /* seq 20 half written */
}

static void torn_whole_but_no_newline(struct lines *ls)
{
	char *l = ls->l[ls->n - 1];
	l[strlen(l) - 1] = '\0'; /* the seal, all but its newline */
}

static void torn_garbage(struct lines *ls)
{
	lines_del(ls, ls->n - 1);
	lines_ins(ls, ls->n, "{\"class_uid\":4002,\"categ\n");
}

static void garbage_middle(struct lines *ls)
{
	lines_edit(ls, 6, "}}\n", "}\n");
}

static void blank_middle(struct lines *ls)
{
	lines_ins(ls, 6, "\n");
}

static void after_seal(struct lines *ls)
{
	lines_ins(ls, ls->n, ls->l[ls->n - 2]);
}

static void after_seal_torn(struct lines *ls)
{
	lines_ins(ls, ls->n, "{\"class_uid\":");
}

static void no_start(struct lines *ls)
{
	lines_del(ls, 0);
}

static void rechain_all(struct lines *ls)
{
	/* A forger who rewrites the whole chain after an edit: the checkpoint
	 * after it names the old head. */
	lines_edit(ls, 12, "aws-access-key in the body", "nothing to see here, move on");
	lines_rechain(ls, 12);
}

static void session_switch(struct lines *ls)
{
	lines_edit(ls, 4, "\"session\":\"" SESSION_ID "\"", "\"session\":\"0190b5a2-7c1e-7abc-8def-0123456789ac\"");
	lines_rechain(ls, 4);
}

static void test_verify_edits(void **state)
{
	(void)state;
	tampered("edit.jsonl", edit_reason, 2, 13, "hash mismatch: the record (seq 13) was edited after it was written",
		 false);
	tampered("edit-rehash.jsonl", edit_reason_rehash_one, 2, 14,
		 "the chain is broken: prev of seq 14 is not the hash of seq 13 on the line before; a record was "
		 "inserted, removed or changed there",
		 false);
	tampered("edit-rechain.jsonl", rechain_all, 2, 16, "the checkpoint's head is not the hash of seq 15", false);
	tampered("session.jsonl", session_switch, 2, 5,
		 "the session changes from " SESSION_ID " to \"0190b5a2-7c1e-7abc-8def-0123456789ac\"", false);
}

static void test_verify_deletions(void **state)
{
	(void)state;
	tampered("del1.jsonl", delete_one, 2, 5, "seq jumps from 4 to 6: 1 record was deleted", false);
	tampered("del3.jsonl", delete_three, 2, 5, "seq jumps from 4 to 8: 3 records were deleted", false);
	tampered("nostart.jsonl", no_start, 2, 1,
		 "the log does not begin with its session_start record: line 1 is a \"policy_loaded\" record (seq 2)",
		 false);
}

static void test_verify_insertions(void **state)
{
	(void)state;
	tampered("dup.jsonl", duplicate, 2, 6, "seq 5 appears twice: line 6 duplicates line 5", false);
	tampered("dupfar.jsonl", duplicate_far, 2, 8, "seq 3 after seq 7: a record was inserted or duplicated", false);
	tampered("forged.jsonl", insert_forged, 2, 6, "seq 5 appears twice, on lines 5 and 6: a record was inserted",
		 false);
	tampered("blank.jsonl", blank_middle, 2, 7, "not a record: it does not end in its hash member", false);
	tampered("garbage.jsonl", garbage_middle, 2, 7, "not a record: it does not end in its hash member", false);
	tampered("afterseal.jsonl", after_seal, 2, 22, "line 22 follows the seal", false);
	tampered("afterseal-torn.jsonl", after_seal_torn, 2, 22, "line 22 follows the seal", false);
}

static void test_verify_reorder(void **state)
{
	(void)state;
	tampered("swap.jsonl", swap, 2, 5, "records out of order: seq 5 is on line 6, after seq 6 on line 5", false);
	tampered("later.jsonl", move_later, 2, 5, "records out of order: seq 5 is on line 8, after seq 6 on line 5",
		 false);
}

static void test_verify_truncation(void **state)
{
	(void)state;
	tampered("trunc.jsonl", truncate_tail, 1, 0,
		 "unsealed: the log ends at seq 13 without a seal; seq 1..9 are covered by a checkpoint signature, "
		 "the 4 after them by the hash chain only",
		 false);
	tampered("noseal.jsonl", truncate_before_seal, 1, 0,
		 "unsealed: the log ends at seq 20 without a seal; seq 1..15 are covered by a checkpoint signature, "
		 "the 5 after them by the hash chain only",
		 false);
	tampered("unsigned.jsonl", truncate_nothing_signed, 1, 0,
		 "unsealed: the log ends at seq 5 without a seal; no signature covers any record; the hash chain alone "
		 "links all 5",
		 false);
	tampered("torn.jsonl", torn_no_newline, 1, 20,
		 "torn last line (line 20); unsealed: the log ends at seq 19 without a seal; seq 1..15 are covered by a "
		 "checkpoint signature, the 4 after them by the hash chain only",
		 false);
	tampered("torn-whole.jsonl", torn_whole_but_no_newline, 1, 21, "torn last line (line 21); unsealed", true);
	tampered("torn-garbage.jsonl", torn_garbage, 1, 21, "torn last line (line 21); unsealed: the log ends at seq 20",
		 true);

	/* What the report says beside the text. */
	struct logw w;
	std_log(&w, "torn-report.jsonl");
	struct lines ls;
	lines_read(w.path, &ls);
	torn_no_newline(&ls);
	lines_write(&ls, w.path);
	lines_free(&ls);
	struct audit_report rep;
	assert_int_equal(verify(w.path, NULL, &rep), 1);
	assert_true(rep.torn_tail);
	assert_false(rep.sealed);
	assert_int_equal(rep.records, 19);
	assert_int_equal(rep.checkpoints, 2);
	logw_close(&w);
}

static void test_verify_signatures(void **state)
{
	(void)state;
	struct audit_report rep;
	struct error err = { 0 };
	uint8_t apub[AUDIT_PUB_LEN];
	char want[300];

	/* A checkpoint whose signature is over another message. */
	struct logw w;
	logw_open(&w, "badsig.jsonl");
	audit_key_public(w.authority, apub);
	put_start(&w, w.authority, apub);
	put_http(&w, 2);
	put_checkpoint_as(&w, false, w.session_key, 1);
	put_checkpoint(&w, true);
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 3,
		       "bad checkpoint signature (seq 3): it does not verify with the certificate's session key");
	logw_close(&w);

	/* The neighbour: the same log signed right verifies. */
	logw_open(&w, "goodsig.jsonl");
	audit_key_public(w.authority, apub);
	put_start(&w, w.authority, apub);
	put_http(&w, 2);
	put_checkpoint(&w, false);
	put_checkpoint(&w, true);
	assert_int_equal(verify(w.path, apub, &rep), 0);
	assert_int_equal(rep.checkpoints, 1);
	assert_int_equal(rep.records, 4);
	logw_close(&w);

	/* Swapped keys: the checkpoint signed by the authority, not the
	 * session key. */
	logw_open(&w, "swap-cp.jsonl");
	audit_key_public(w.authority, apub);
	put_start(&w, w.authority, apub);
	put_http(&w, 2);
	put_checkpoint_as(&w, false, w.authority, 2);
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 3,
		       "bad checkpoint signature (seq 3): it does not verify with the certificate's session key");
	logw_close(&w);

	/* The seal signed by the authority. */
	logw_open(&w, "swap-seal.jsonl");
	audit_key_public(w.authority, apub);
	put_start(&w, w.authority, apub);
	put_http(&w, 2);
	put_checkpoint_as(&w, true, w.authority, 2);
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 3, "bad seal signature (seq 3): it does not verify with the certificate's session key");
	logw_close(&w);

	/* A checkpoint message of the seal's kind does not pass for a seal
	 * (and the other way round). */
	logw_open(&w, "cp-as-seal.jsonl");
	audit_key_public(w.authority, apub);
	put_start(&w, w.authority, apub);
	{
		char msg[256], sig_hex[129], json[512];
		uint8_t sig[AUDIT_SIG_LEN];
		int n = snprintf(msg, sizeof(msg), "airlock-checkpoint\n%s\n1\n%s\n", w.s.session_id, w.c.prev);
		assert_int_equal(audit_sign(w.session_key, msg, (size_t)n, sig), 0);
		hex(sig, sizeof(sig), sig_hex);
		snprintf(json, sizeof(json), "{\"kind\":\"seal\",\"covers_seq\":1,\"head\":\"%s\",\"sig\":\"%s\"}", w.c.prev,
			 sig_hex);
		put_json(&w, json);
	}
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 2, "bad seal signature (seq 2): it does not verify with the certificate's session key");
	logw_close(&w);

	/* Swapped keys: the certificate signed by another authority than the
	 * one it names. */
	struct audit_key *other;
	assert_int_equal(audit_key_generate(&other, &err), 0);
	logw_open(&w, "swap-cert.jsonl");
	audit_key_public(w.authority, apub);
	put_start(&w, other, apub);
	put_checkpoint(&w, true);
	char ahex[65];
	hex(apub, sizeof(apub), ahex);
	snprintf(want, sizeof(want), "bad certificate signature: it does not verify with authority %s", ahex);
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 1, want);
	logw_close(&w);

	/* A whole log made under another authority verifies on its own, and
	 * not against the authority given. */
	logw_open(&w, "other-authority.jsonl");
	uint8_t opub[AUDIT_PUB_LEN];
	audit_key_public(other, opub);
	put_start(&w, other, opub);
	put_checkpoint(&w, true);
	audit_key_public(w.authority, apub);
	assert_int_equal(verify(w.path, NULL, &rep), 0);
	assert_int_equal(verify(w.path, opub, &rep), 0);
	hex(opub, sizeof(opub), ahex);
	snprintf(want, sizeof(want), "signed by authority %s, not the one given", ahex);
	assert_int_equal(verify(w.path, apub, &rep), 2);
	assert_problem(&rep, 1, want);
	logw_close(&w);
	audit_key_free(other);
}

/* A checkpoint that names a head other than the chain's, or covers another
 * seq, even when correctly signed over what it names. */
static void test_verify_checkpoint_fields(void **state)
{
	(void)state;
	struct audit_report rep;
	uint8_t apub[AUDIT_PUB_LEN];
	struct logw w;
	std_log(&w, "cp-fields.jsonl");
	struct lines ls;
	lines_read(w.path, &ls);
	/* seq 10's checkpoint says it covers 8 */
	lines_edit(&ls, 9, "\"covers_seq\":9,", "\"covers_seq\":8,");
	lines_rechain(&ls, 9);
	lines_write(&ls, w.path);
	lines_free(&ls);
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 10, "the checkpoint covers seq 8 but follows seq 9");
	logw_close(&w);

	/* A checkpoint record without its checkpoint object. */
	std_log(&w, "cp-missing.jsonl");
	lines_read(w.path, &ls);
	char *p = strstr(ls.l[9], ",\"checkpoint\":{");
	assert_non_null(p);
	char *end = strstr(p, "},\"seq\":");
	assert_non_null(end);
	memmove(p, end + 1, strlen(end + 1) + 1);
	lines_rechain(&ls, 9);
	lines_write(&ls, w.path);
	lines_free(&ls);
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 10, "a checkpoint record (seq 10) without a well-formed checkpoint object");
	logw_close(&w);

	/* A second session_start further on. */
	logw_open(&w, "two-starts.jsonl");
	audit_key_public(w.authority, apub);
	put_start(&w, w.authority, apub);
	put_start(&w, w.authority, apub);
	assert_int_equal(verify(w.path, NULL, &rep), 2);
	assert_problem(&rep, 2, "a second session_start record (seq 2)");
	logw_close(&w);
}

static void test_verify_odd_files(void **state)
{
	(void)state;
	struct audit_report rep;
	char path[200];
	snprintf(path, sizeof(path), "%s/empty.jsonl", tmpdir);
	FILE *f = fopen(path, "we");
	fclose(f);
	assert_int_equal(verify(path, NULL, &rep), 2);
	assert_problem(&rep, 0, "the log is empty: no session_start record");

	snprintf(path, sizeof(path), "%s/absent.jsonl", tmpdir);
	assert_int_equal(verify(path, NULL, &rep), 2);
	assert_non_null(strstr(rep.problem, "cannot open"));

	/* A torn first line: nothing to anchor the log. */
	snprintf(path, sizeof(path), "%s/torn-first.jsonl", tmpdir);
	f = fopen(path, "we");
	fputs("{\"class_uid\":6003,", f);
	fclose(f);
	assert_int_equal(verify(path, NULL, &rep), 2);
	assert_true(rep.torn_tail);
	assert_problem(&rep, 1, "torn last line: the log holds no complete session_start record");

	/* A line longer than the limit, with and without its newline. */
	for (int nl = 0; nl < 2; nl++) {
		snprintf(path, sizeof(path), "%s/long%d.jsonl", tmpdir, nl);
		struct logw w;
		logw_open(&w, nl ? "long-base1.jsonl" : "long-base0.jsonl");
		uint8_t apub[AUDIT_PUB_LEN];
		audit_key_public(w.authority, apub);
		put_start(&w, w.authority, apub);
		put_checkpoint(&w, false);
		struct lines ls;
		lines_read(w.path, &ls);
		char *big = malloc(AUDIT_LINE_MAX + 2);
		memset(big, 'x', AUDIT_LINE_MAX + 1);
		big[AUDIT_LINE_MAX] = nl ? '\n' : 'x';
		big[AUDIT_LINE_MAX + 1] = '\0';
		lines_ins(&ls, 1, big);
		free(big);
		lines_write(&ls, path);
		lines_free(&ls);
		assert_int_equal(verify(path, NULL, &rep), 2);
		assert_problem(&rep, 2, "line 2 is longer than 65536 bytes");
		logw_close(&w);
	}
}

/* The longest records the builder makes are read back whole. */
static void test_verify_long_records(void **state)
{
	(void)state;
	struct logw w;
	logw_open(&w, "long-records.jsonl");
	uint8_t apub[AUDIT_PUB_LEN];
	audit_key_public(w.authority, apub);
	put_start(&w, w.authority, apub);
	event_raw("leak", 3000);
	put_event(&w);
	assert_true(w.line.len > 4 * 4096);
	event_raw("http", 1500);
	put_event(&w);
	assert_true(w.line.len > 3 * 9000);
	put_checkpoint(&w, true);
	struct audit_report rep;
	assert_int_equal(verify(w.path, apub, &rep), 0);
	assert_int_equal(rep.records, 4);
	logw_close(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_proxy_records),
		cmocka_unit_test(test_event_limits),
		cmocka_unit_test(test_event_rejects),
		cmocka_unit_test(test_json_reader),
		cmocka_unit_test(test_record_golden),
		cmocka_unit_test(test_record_classes),
		cmocka_unit_test(test_record_checkpoint_fields),
		cmocka_unit_test(test_record_long_strings),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_authority_key),
		cmocka_unit_test(test_authority_key_first_runs_at_once),
		cmocka_unit_test(test_chain_append),
		cmocka_unit_test(test_verify_intact),
		cmocka_unit_test(test_verify_edits),
		cmocka_unit_test(test_verify_deletions),
		cmocka_unit_test(test_verify_insertions),
		cmocka_unit_test(test_verify_reorder),
		cmocka_unit_test(test_verify_truncation),
		cmocka_unit_test(test_verify_signatures),
		cmocka_unit_test(test_verify_checkpoint_fields),
		cmocka_unit_test(test_verify_odd_files),
		cmocka_unit_test(test_verify_long_records),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
