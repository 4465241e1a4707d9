/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for `airlock policy suggest`'s builder: denials in, the
 * smallest additions out.
 *
 * Each test feeds denials shaped like the ones the supervisor and the
 * proxy record (src/sandbox/trace.c, src/net/netpolicy.c) and checks the
 * printed additions both ways: what must be there, exactly, and the
 * wider or wrong thing that must not. Denials no policy allows must show
 * up as comments next to an ordinary addition that is still offered. A
 * merged policy must read back through the real parser.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit/audit.h"
#include "analysis/suggest.h"
#include "policy/policy.h"
#include "util/buf.h"
#include "util/cleanup.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/airlock-test-suggest-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A path under the test's directory. */
static const char *at(const char *rel)
{
	static char bufs[8][512];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, 512, "%s/%s", tmpdir, rel);
	return b;
}

static void mkfile(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("x\n", f);
	fclose(f);
}

static void file_denial(struct suggest *s, const char *syscall, const char *path, const char *reason)
{
	struct suggest_denial d = { .kind = "file_denied", .decision = "deny", .syscall = syscall, .file = path,
				    .command = "tool", .reason = reason, .port = -1 };
	assert_int_equal(suggest_add(s, &d), 0);
}

static void request(struct suggest *s, const char *kind, const char *method, const char *host, int port,
		    const char *path, const char *reason)
{
	struct suggest_denial d = { .kind = kind, .decision = "deny", .method = method, .host = host, .port = port,
				    .path = path, .reason = reason };
	assert_int_equal(suggest_add(s, &d), 0);
}

#define HIDDEN "ENOENT [hidden: exists outside the sandbox]"
#define DIR_HIDDEN "ENOENT [hidden: its directory exists outside the sandbox]"
#define ROFS "EROFS [read-only]"
#define NO_ENDPOINT "no network.endpoints entry allows api.test:8080; add {host: api.test, ports: [8080]}"

/* The fragment (and the unanswered comments) as text. */
static char *fragment(struct suggest *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	suggest_finish(s);
	suggest_print_unanswered(s, f);
	suggest_print_fragment(s, f);
	fclose(f);
	return out;
}

static struct policy *load(const char *yaml)
{
	struct policy_ctx ctx = { .home = tmpdir, .cwd = tmpdir };
	struct policy *p = NULL;
	struct error err = { 0 };
	int r = policy_load_buffer("test.yaml", NULL, yaml, strlen(yaml), &ctx, &p, &err);
	if (r < 0)
		fail_msg("policy does not load: %s\n%s", err.msg, yaml);
	return p;
}

/* Merge s into p, print it after the unanswered comments as `airlock
 * policy suggest` does, and read the print back: it must load. */
static char *merged(struct suggest *s, struct policy *p)
{
	struct error err = { 0 };
	suggest_finish(s);
	assert_int_equal(suggest_merge(s, p, &err), 0);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	suggest_print_unanswered(s, f);
	policy_print(p, f);
	fclose(f);
	policy_free(load(out));
	return out;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Repeated denials of one file make one entry that counts them; a file
 * under a directory that becomes writable makes none of its own. */
static void test_paths_deduplicated_and_minimal(void **state)
{
	(void)state;
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(NULL, &s), 0);
	mkdir(at("data"), 0700);
	mkdir(at("out"), 0700);
	mkfile(at("data/a.csv"));
	mkfile(at("out/old.txt"));
	for (int i = 0; i < 3; i++)
		file_denial(s, "openat", at("data/a.csv"), HIDDEN);
	file_denial(s, "openat", at("out/new.txt"), DIR_HIDDEN);
	file_denial(s, "openat", at("out/old.txt"), HIDDEN); /* read, then answered by out/ */
	mkdir(at("out/sub"), 0700);
	file_denial(s, "mkdir", at("out/sub/d"), DIR_HIDDEN); /* out/sub, answered by out/ */
	_cleanup_free_ char *out = fragment(s);

	char want[1024];
	snprintf(want, sizeof(want), "  read:\n    - \"%s\"  # 3 denials, e.g. openat(\"%s\") by tool\n", at("data/a.csv"),
		 at("data/a.csv"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "  write:\n    - \"%s\"  # 3 denials, e.g. openat(\"%s\") by tool\n", at("out"),
		 at("out/new.txt"));
	assert_non_null(strstr(out, want));
	/* Not the directory of the file read, nor the file under out/. */
	snprintf(want, sizeof(want), "\"%s\"", at("data"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"", at("out/old.txt"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"", at("out/sub"));
	assert_null(strstr(out, want));
	assert_int_equal(suggest_denials(s), 6);
	suggest_free(s);
}

/* A write to an existing file asks for that file; a name created or
 * removed asks for its directory. */
static void test_files_versus_directories(void **state)
{
	(void)state;
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(NULL, &s), 0);
	mkdir(at("ro"), 0700);
	mkdir(at("ro2"), 0700);
	mkdir(at("ro3"), 0700);
	mkfile(at("ro/existing.txt"));
	mkfile(at("ro2/gone.txt"));
	file_denial(s, "openat", at("ro/existing.txt"), ROFS); /* an edit in place */
	file_denial(s, "unlinkat", at("ro2/gone.txt"), ROFS);  /* a removal */
	file_denial(s, "openat", at("ro3/fresh.txt"), ROFS);   /* a create: the file is not there */
	_cleanup_free_ char *out = fragment(s);
	char want[512];
	snprintf(want, sizeof(want), "- \"%s\"  #", at("ro/existing.txt"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"  #", at("ro"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"  #", at("ro2"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"  #", at("ro2/gone.txt"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"  #", at("ro3"));
	assert_non_null(strstr(out, want));
	assert_null(strstr(out, "read:"));
	suggest_free(s);
}

/* Exec of a hidden binary: the binary itself, executable and visible; a
 * merged policy without process.exec keeps its defaults listed. */
/* A refused host socket is never offered, and nothing is added for it,
 * not even a read grant of its directory. */
static void test_host_socket_not_offered(void **state)
{
	(void)state;
	mkdir(at("run"), 0700);
	mkfile(at("run/docker.sock"));
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(NULL, &s), 0);
	file_denial(s, "connect", at("run/docker.sock"),
		    "EACCES [protected: a host socket filesystem.sockets does not name]");
	_cleanup_free_ char *out = fragment(s);
	assert_non_null(strstr(out, "a host socket: filesystem.sockets names the ones the agent may reach"));
	char want[512];
	snprintf(want, sizeof(want), "- \"%s", at("run"));
	assert_null(strstr(out, want));
	suggest_free(s);
}

/* A tool's cache in a home is never offered, read or write (a shared
 * cache carries one run's packages into the next); nor is a credential
 * store (~/.npmrc holds registry tokens); configuration that is neither
 * is. */
static void test_tool_cache_not_offered(void **state)
{
	(void)state;
	mkdir(at(".npm"), 0700);
	mkdir(at(".npm/_cacache"), 0700);
	mkfile(at(".npm/_cacache/index"));
	mkfile(at(".npmrc"));
	mkfile(at(".gitconfig"));
	mkdir(at(".ssh"), 0700);
	mkfile(at(".ssh/id_ed25519"));
	mkdir(at(".aws"), 0700);
	mkfile(at(".aws/credentials"));
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(NULL, &s), 0);
	file_denial(s, "openat", at(".npm/_cacache/index"), "ENOENT [hidden: exists outside the sandbox]");
	file_denial(s, "mkdir", at(".npm/_cacache/tmp"), "ENOENT [hidden: its directory exists outside the sandbox]");
	file_denial(s, "openat", at(".npmrc"), "ENOENT [hidden: exists outside the sandbox]");
	file_denial(s, "openat", at(".ssh/id_ed25519"), "ENOENT [hidden: exists outside the sandbox]");
	file_denial(s, "openat", at(".aws/credentials"), "ENOENT [hidden: exists outside the sandbox]");
	file_denial(s, "mkdir", at(".ssh/sockets"), "ENOENT [hidden: its directory exists outside the sandbox]");
	file_denial(s, "openat", at(".gitconfig"), "ENOENT [hidden: exists outside the sandbox]");
	_cleanup_free_ char *out = fragment(s);
	assert_non_null(strstr(out, "a tool's cache or state in a home"));
	assert_non_null(strstr(out, "a credential store"));
	assert_null(strstr(out, "_cacache\""));
	char want[512];
	snprintf(want, sizeof(want), "- \"%s\"", at(".gitconfig"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s", at(".npmrc"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s", at(".ssh"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s", at(".aws"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"", at(".npm"));
	assert_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s/", at(".npm"));
	assert_null(strstr(out, want));
	suggest_free(s);
}

static void test_exec_exact_binary(void **state)
{
	(void)state;
	mkdir(at("bin"), 0700);
	mkfile(at("bin/tool"));
	mkfile(at("bin/other"));
	mkdir(at("ws"), 0700);
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(NULL, &s), 0);
	file_denial(s, "execve", at("bin/tool"), HIDDEN);
	file_denial(s, "execve", at("bin/other"), "EACCES [filesystem]"); /* visible already */
	_cleanup_free_ char *out = fragment(s);
	char want[512];
	snprintf(want, sizeof(want), "  exec:\n    - \"%s\"  # 1 denial: execve(\"%s\") by tool\n    - \"%s\"", at("bin/tool"),
		 at("bin/tool"), at("bin/other"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "  read:\n    - \"%s\"  #", at("bin/tool"));
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "- \"%s\"  #", at("bin/other"));
	assert_int_equal(count_of(out, want), 1); /* exec only, not read */
	snprintf(want, sizeof(want), "\"%s\"", at("bin"));
	assert_null(strstr(out, want));
	suggest_free(s);

	char yaml[512];
	snprintf(yaml, sizeof(yaml), "version: 1\nsandbox:\n  mode: learn\n  workspace: %s\n", at("ws"));
	struct policy *p = load(yaml);
	assert_int_equal(suggest_new(p, &s), 0);
	file_denial(s, "execve", at("bin/tool"), HIDDEN);
	_cleanup_free_ char *m = merged(s, p);
	snprintf(want, sizeof(want), "  exec:\n    - \"/usr\"  # the default");
	assert_non_null(strstr(m, want));
	snprintf(want, sizeof(want), "    - \"%s\"  # the default", at("ws"));
	assert_non_null(strstr(m, want));
	snprintf(want, sizeof(want), "    - \"%s\"  # 1 denial", at("bin/tool"));
	assert_int_equal(count_of(m, want), 2); /* in read and in exec */
	assert_non_null(strstr(m, "  mode: enforce  # learn in the policy given"));
	suggest_free(s);
	policy_free(p);
}

/* Endpoints by host and port exactly; one rule per path with the
 * methods seen there; the query left out of the path. */
static void test_endpoints_by_host_and_port(void **state)
{
	(void)state;
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(NULL, &s), 0);
	request(s, "http", "GET", "api.test", 8080, "/v1/items?q=1", NO_ENDPOINT);
	request(s, "http", "GET", "api.test", 8080, "/v1/items?q=2", NO_ENDPOINT);
	request(s, "http", "POST", "api.test", 8080, "/v1/items", NO_ENDPOINT);
	request(s, "http", "GET", "api.test", 8080, "/v1/other", NO_ENDPOINT);
	request(s, "http", "GET", "api.test", 9090, "/v1/items", NO_ENDPOINT);
	request(s, "connect", NULL, "files.test", 443, NULL,
		"no network.endpoints entry allows files.test:443; add {host: files.test, ports: [443]}");
	_cleanup_free_ char *out = fragment(s);
	assert_non_null(strstr(out, "    - host: \"api.test\"  # 4 denials, e.g. GET http://api.test:8080/v1/items?q=1\n"
				    "      ports: [8080]\n"
				    "      rules:\n"
				    "        - methods: [\"GET\", \"POST\"]  # 3 denials, e.g. GET http://api.test:8080/v1/items?q=1\n"
				    "          path: \"/v1/items\"\n"
				    "        - methods: [\"GET\"]  # 1 denial: GET http://api.test:8080/v1/other\n"
				    "          path: \"/v1/other\"\n"));
	assert_non_null(strstr(out, "      ports: [9090]\n"));
	/* A tunnel: host and port alone. */
	assert_non_null(strstr(out, "    - host: \"files.test\"  # 1 denial: connect files.test:443\n      ports: [443]\n"));
	assert_null(strstr(out, "q=1\"")); /* no query in a rule path */
	assert_null(strstr(out, "*"));     /* nothing wider than what was seen */
	assert_int_equal(count_of(out, "- host: \"api.test\""), 2);
	suggest_free(s);

	/* More methods on one path than one rule holds: none is left out. */
	assert_int_equal(suggest_new(NULL, &s), 0);
	char m[8];
	for (int i = 0; i < 20; i++) {
		snprintf(m, sizeof(m), "X%d", i);
		request(s, "http", m, "api.test", 8080, "/many", NO_ENDPOINT);
	}
	_cleanup_free_ char *many = fragment(s);
	for (int i = 0; i < 20; i++) {
		char q[16];
		snprintf(q, sizeof(q), "\"X%d\"", i);
		assert_int_equal(count_of(many, q), 1);
	}
	assert_int_equal(count_of(many, "path: \"/many\""), 2);
	suggest_free(s);
}

/* With the policy given: rules go into the endpoint that decides the host
 * and port (a read-only preset gets a rule id of its own), a pinned
 * loopback name gets its exact address and port in allow_private, and the
 * result reads back. */
static void test_merge_into_endpoint(void **state)
{
	(void)state;
	mkdir(at("ws2"), 0700);
	mkdir(at("shared"), 0700);
	char yaml[1024];
	snprintf(yaml, sizeof(yaml),
		 "version: 1\nsandbox:\n  workspace: %s\nfilesystem:\n  read: [%s]\nnetwork:\n"
		 "  resolve: { api.test: 127.0.0.1 }\n"
		 "  endpoints:\n    - host: api.test\n      id: api\n      ports: [8080]\n      access: read-only\n",
		 at("ws2"), at("shared"));
	struct policy *p = load(yaml);
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(p, &s), 0);
	request(s, "http", "POST", "api.test", 8080, "/upload",
		"POST /upload is not allowed by any rule of endpoint api; add a rule {methods: [POST], path: /upload}");
	file_denial(s, "openat", at("shared/new.txt"), ROFS);
	_cleanup_free_ char *m = merged(s, p);
	assert_non_null(strstr(m, "        - methods: [\"POST\"]  # 1 denial: POST http://api.test:8080/upload\n"
				  "          path: \"/upload\"\n"));
	assert_int_equal(count_of(m, "- host: \"api.test\""), 1);
	assert_non_null(strstr(m, "    - \"127.0.0.1:8080\"  # 1 denial: POST http://api.test:8080/upload\n"));
	/* shared/ moved from read to write. */
	char want[512];
	snprintf(want, sizeof(want), "  read: []\n  write:\n    - \"%s\"  # 1 denial", at("shared"));
	assert_non_null(strstr(m, want));
	suggest_free(s);
	policy_free(p);
}

/* What no policy allows is listed with why, never dropped, never widened;
 * the ordinary addition next to it is still offered. */
static void test_unanswerable_listed(void **state)
{
	(void)state;
	mkdir(at("ws3"), 0700);
	mkdir(at("secret"), 0700);
	mkdir(at("fine"), 0700);
	mkfile(at("secret/key"));
	mkfile(at("fine/f"));
	char yaml[512];
	snprintf(yaml, sizeof(yaml), "version: 1\nsandbox:\n  workspace: %s\nfilesystem:\n  deny: [%s]\nnetwork: {}\n",
		 at("ws3"), at("secret"));
	struct policy *p = load(yaml);
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(p, &s), 0);
	struct suggest_denial sys = { .kind = "syscall_denied", .decision = "deny", .syscall = "bpf",
				      .command = "probe", .port = -1 };
	assert_int_equal(suggest_add(s, &sys), 0);
	struct suggest_denial leak = { .kind = "leak", .decision = "deny", .method = "POST", .host = "x.test",
				       .port = 80, .path = "/", .reason = "the request carries AWS access key" };
	assert_int_equal(suggest_add(s, &leak), 0);
	struct suggest_denial dns = { .kind = "dns", .decision = "deny", .host = "lookup.test", .port = -1,
				      .reason = "no network.endpoints entry names lookup.test; add {host: lookup.test, ports: [...]}" };
	assert_int_equal(suggest_add(s, &dns), 0);
	file_denial(s, "openat", "relative/file", HIDDEN);
	file_denial(s, "openat", "/proc/1/environ", "EACCES [filesystem]");
	file_denial(s, "openat", at("secret/key"), HIDDEN);
	file_denial(s, "openat", at("fine/f"), HIDDEN);
	request(s, "http", "GET", "api.test", 8080, "/a/../admin",
		"no network.endpoints entry allows api.test:8080; add {host: api.test, ports: [8080]}");
	_cleanup_free_ char *m = merged(s, p);
	assert_non_null(strstr(m, "system call bpf is refused by the seccomp filter"));
	assert_non_null(strstr(m, "1 denial: bpf by probe"));
	assert_non_null(strstr(m, "a secret in outbound traffic (the request carries AWS access key)"));
	assert_non_null(strstr(m, "a DNS lookup of lookup.test with no connection after it"));
	assert_non_null(strstr(m, "a relative path"));
	assert_non_null(strstr(m, "/proc, /sys and /dev"));
	assert_non_null(strstr(m, "filesystem.deny names"));
	assert_non_null(strstr(m, "a path with a . or .. segment is never matched by a rule"));
	/* Nothing of theirs became an addition... */
	char want[512];
	snprintf(want, sizeof(want), "- \"%s\"  #", at("secret/key"));
	assert_null(strstr(m, want));
	assert_null(strstr(m, "host: \"lookup.test\""));
	assert_null(strstr(m, "host: \"x.test\""));
	assert_null(strstr(m, "host: \"api.test\""));
	assert_null(strstr(m, "path: \"/a/../admin\""));
	/* ...while the ordinary neighbour is offered. */
	snprintf(want, sizeof(want), "    - \"%s\"  # 1 denial", at("fine/f"));
	assert_non_null(strstr(m, want));
	assert_int_equal(suggest_denials(s), 8);
	suggest_free(s);
	policy_free(p);
}

/* Log lines as the writer builds them are read into denials; a line that
 * is not a record is an error naming it. */
static void test_reads_log_lines(void **state)
{
	(void)state;
	struct audit_session ss = { .agent = "agent", .session_id = "0190b5a2-7c1e-7abc-8def-0123456789ab",
				   .boundary = "process", .policy_sha256 = "none", .host = "h", .mode = "learn",
				   .enforced = true };
	char ev_text[1024];
	mkdir(at("logdata"), 0700);
	mkfile(at("logdata/in.csv"));
	snprintf(ev_text, sizeof(ev_text),
		 "{\"kind\":\"file_denied\",\"decision\":\"deny\",\"syscall\":\"openat\",\"file\":\"%s\","
		 "\"command\":\"python3\",\"reason\":\"" HIDDEN "\"}",
		 at("logdata/in.csv"));
	struct audit_event *ev = malloc(sizeof(*ev));
	assert_non_null(ev);
	assert_int_equal(audit_event_parse(ev_text, strlen(ev_text), ev), 0);
	struct buf line = { 0 };
	char zeros[65];
	memset(zeros, '0', 64);
	zeros[64] = '\0';
	assert_int_equal(audit_record_build(ev, &ss, 3, zeros, 1, &line), 0);
	assert_int_equal(buf_printf(&line, ",\"hash\":\"%s\"}}", zeros), 0);

	struct suggest *s = NULL;
	struct error err = { 0 };
	assert_int_equal(suggest_new(NULL, &s), 0);
	assert_int_equal(suggest_add_line(s, line.data, line.len, 3, &err), 0);
	const char *bad = "{\"class_uid\":1001,";
	assert_int_equal(suggest_add_line(s, bad, strlen(bad), 7, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 7"));
	const char *nokind = "{\"airlock\":{\"seq\":1}}";
	assert_int_equal(suggest_add_line(s, nokind, strlen(nokind), 8, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 8: airlock.kind is missing"));
	_cleanup_free_ char *out = fragment(s);
	char want[512];
	snprintf(want, sizeof(want), "  read:\n    - \"%s\"  # 1 denial: openat(\"%s\") by python3\n", at("logdata/in.csv"),
		 at("logdata/in.csv"));
	assert_non_null(strstr(out, want));
	suggest_free(s);
	buf_free(&line);
	free(ev);
}

/* Allowed records only: nothing to add. */
static void test_allows_only(void **state)
{
	(void)state;
	struct suggest *s = NULL;
	assert_int_equal(suggest_new(NULL, &s), 0);
	struct suggest_denial a = { .kind = "http", .decision = "allow", .method = "GET", .host = "api.test",
				    .port = 80, .path = "/" };
	assert_int_equal(suggest_add(s, &a), 0);
	suggest_finish(s);
	assert_int_equal(suggest_denials(s), 0);
	assert_false(suggest_has_additions(s));
	suggest_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_deduplicated_and_minimal),
		cmocka_unit_test(test_files_versus_directories),
		cmocka_unit_test(test_exec_exact_binary),
		cmocka_unit_test(test_host_socket_not_offered),
		cmocka_unit_test(test_tool_cache_not_offered),
		cmocka_unit_test(test_endpoints_by_host_and_port),
		cmocka_unit_test(test_merge_into_endpoint),
		cmocka_unit_test(test_unanswerable_listed),
		cmocka_unit_test(test_reads_log_lines),
		cmocka_unit_test(test_allows_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
