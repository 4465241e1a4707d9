/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the conformance suite's pure parts: the probe's batch
 * lines are read back exactly and anything else is refused; a row is held
 * only when every attack was blocked and every neighbour allowed, failed
 * on either an allowed attack or a blocked neighbour, not applicable when
 * a line is missing; placeholders expand and unknown ones are refused; the
 * table is well formed, and every hand-off row writes a file that the
 * hand-off table (src/handoff/rules.c) names, so the two cannot drift;
 * what the probe leaves in the workspace is judged by what the host holds.
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
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "conformance/conformance.h"
#include "handoff/handoff.h"

static void test_parse_line(void **state)
{
	struct conf_line l;
	size_t idx = 99;

	(void)state;
	assert_int_equal(conf_parse_line("@3 read: blocked (ENOENT)", &idx, &l), 0);
	assert_int_equal(idx, 3);
	assert_int_equal(l.outcome, CONF_BLOCKED);
	assert_string_equal(l.why, "ENOENT");

	assert_int_equal(conf_parse_line("@0 keyctl: allowed", &idx, &l), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(l.outcome, CONF_ALLOWED);
	assert_string_equal(l.why, "");

	/* A reason holding ": " and parentheses stays whole. */
	assert_int_equal(conf_parse_line("@12 bpf: allowed (prog-load allowed (x): y)", &idx, &l), 0);
	assert_int_equal(idx, 12);
	assert_string_equal(l.why, "prog-load allowed (x): y");

	assert_int_equal(conf_parse_line("@7 tiocsti: error no terminal to test", &idx, &l), 0);
	assert_int_equal(l.outcome, CONF_ERROR);
	assert_string_equal(l.why, "no terminal to test");

	assert_int_equal(conf_parse_line("@end", &idx, &l), 1);

	/* Not the probe's: refused, never guessed. */
	static const char *const bad[] = { "", "@", "@x read: blocked", "3 read: blocked", "@3read: blocked",
					   "@3 read blocked", "@3 read: maybe", "@99999999999999999999 a: allowed",
					   "@-1 a: allowed", "@4097 a: allowed", "read: allowed", "@end2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(conf_parse_line(bad[i], &idx, &l), -EINVAL);
}

static const struct conf_req *row(const char *id)
{
	for (size_t i = 0; i < conf_nreqs; i++)
		if (!strcmp(conf_reqs[i].id, id))
			return &conf_reqs[i];
	fail_msg("no row %s", id);
	return NULL;
}

static struct conf_line L(enum conf_outcome o, const char *why)
{
	struct conf_line l = { .outcome = o };
	snprintf(l.why, sizeof(l.why), "%s", why);
	return l;
}

static void test_judge(void **state)
{
	const struct conf_req *q = row("boundary.ptrace"); /* two attacks, one neighbour */
	struct conf_result res;
	struct conf_line att[2], nb[1];

	(void)state;
	att[0] = L(CONF_BLOCKED, "EPERM");
	att[1] = L(CONF_BLOCKED, "EPERM");
	nb[0] = L(CONF_ALLOWED, "");
	conf_judge(q, att, 2, nb, 1, &res);
	assert_int_equal(res.verdict, CONF_HELD);
	assert_string_equal(res.evidence,
			    "ptrace: blocked (EPERM); process-vm-readv: blocked (EPERM); neighbour clone-ok: allowed");

	/* One attack through: failed, whatever the rest did. */
	att[1] = L(CONF_ALLOWED, "read the child's memory");
	conf_judge(q, att, 2, nb, 1, &res);
	assert_int_equal(res.verdict, CONF_FAILED);
	assert_non_null(strstr(res.evidence, "process-vm-readv: allowed (read the child's memory)"));

	/* Everything blocked, the neighbour too: a broken runtime, not a
	 * containing one. */
	att[1] = L(CONF_BLOCKED, "EPERM");
	nb[0] = L(CONF_BLOCKED, "EPERM");
	conf_judge(q, att, 2, nb, 1, &res);
	assert_int_equal(res.verdict, CONF_FAILED);
	assert_non_null(strstr(res.evidence, "neighbour clone-ok: blocked (EPERM)"));

	/* A line missing or in error: no verdict either way. */
	nb[0] = L(CONF_ALLOWED, "");
	att[0] = L(CONF_MISSING, "");
	conf_judge(q, att, 2, nb, 1, &res);
	assert_int_equal(res.verdict, CONF_NA);
	assert_non_null(strstr(res.evidence, "ptrace: no result"));
	att[0] = L(CONF_ERROR, "fork: EAGAIN");
	conf_judge(q, att, 2, nb, 1, &res);
	assert_int_equal(res.verdict, CONF_NA);
	/* ... unless an attack got through anyway. */
	att[1] = L(CONF_ALLOWED, "");
	conf_judge(q, att, 2, nb, 1, &res);
	assert_int_equal(res.verdict, CONF_FAILED);

	/* No attack lines at all is never "held". */
	conf_judge(q, att, 0, nb, 1, &res);
	assert_int_equal(res.verdict, CONF_NA);
}

static void test_evidence_never_holds_the_canary(void **state)
{
	const struct conf_req *q = row("credentials.env");
	struct conf_result res;
	struct conf_line att[1] = { L(CONF_ALLOWED, "in $GITHUB_TOKEN") };

	(void)state;
	conf_judge(q, att, 1, NULL, 0, &res);
	assert_int_equal(res.verdict, CONF_FAILED);
	/* The template, not the expanded argument. */
	assert_string_equal(res.evidence, "env-secret {canary}: allowed (in $GITHUB_TOKEN)");
}

static void test_expand(void **state)
{
	const char *vars[] = { "ws", "/t/ws", "canary", "c0ffee", NULL };
	struct error err = { 0 };
	char out[32];

	(void)state;
	assert_int_equal(conf_expand("{ws}/.git/config", vars, out, sizeof(out), &err), 0);
	assert_string_equal(out, "/t/ws/.git/config");
	assert_int_equal(conf_expand("x{canary}y{ws}", vars, out, sizeof(out), &err), 0);
	assert_string_equal(out, "xc0ffeey/t/ws");
	assert_int_equal(conf_expand("plain", vars, out, sizeof(out), &err), 0);
	assert_string_equal(out, "plain");
	assert_int_equal(conf_expand("{nope}/x", vars, out, sizeof(out), &err), -EINVAL);
	assert_non_null(strstr(err.msg, "unknown placeholder"));
	assert_int_equal(conf_expand("{ws", vars, out, sizeof(out), &err), -EINVAL);
	/* Exactly full (31 bytes and the NUL) fits; one more does not. */
	assert_int_equal(conf_expand("{ws}/aaaaaaaaaaaaaaaaaaaaaaaaa", vars, out, sizeof(out), &err), 0);
	assert_int_equal(conf_expand("{ws}/aaaaaaaaaaaaaaaaaaaaaaaaaa", vars, out, sizeof(out), &err), -ENAMETOOLONG);
}

/* Every placeholder a row uses is one run.c provides. */
static void test_table_well_formed(void **state)
{
	static const char *const vars[] = { "ws", "x", "outside", "x", "home", "x", "canary", "x", "label", "x",
					    "svc_pid", "1", "lo_tcp", "1", "lo_udp", "1", "sock", "x", "audit", "x",
					    "meta", "x", "priv", "x", "pub", "x", NULL };
	struct error err = { 0 };
	char out[256];

	(void)state;
	assert_true(conf_nreqs >= 30);
	for (size_t i = 0; i < conf_nreqs; i++) {
		const struct conf_req *q = &conf_reqs[i];
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "%s.", conf_group_name(q->group));
		if (q->group == CONF_HANDOFF)
			snprintf(prefix, sizeof(prefix), "handoff.");
		assert_true(strncmp(q->id, prefix, strlen(prefix)) == 0);
		assert_true(q->rationale && q->rationale[0] && !strchr(q->rationale, '\n'));
		assert_true(q->aicm && q->aicm[0]);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(q->id, conf_reqs[j].id);
		/* Only audit.denials is judged from the record alone. */
		if (strcmp(q->id, "audit.denials") != 0)
			assert_non_null(q->attacks[0]);
		for (int nb = 0; nb < 2; nb++)
			for (size_t k = 0; k < CONF_MAX_PROBES && (nb ? q->neighbours : q->attacks)[k]; k++) {
				const char *line = (nb ? q->neighbours : q->attacks)[k];
				size_t nl = strcspn(line, " ");
				/* Neighbours are the probe's "-ok" tests, attacks are not. */
				assert_int_equal(nl > 3 && !strncmp(line + nl - 3, "-ok", 3), nb);
				assert_int_equal(conf_expand(line, vars, out, sizeof(out), &err), 0);
			}
	}
}

static void test_handoff_rows_follow_the_handoff_table(void **state)
{
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < conf_nreqs; i++) {
		const struct conf_req *q = &conf_reqs[i];
		if (q->group != CONF_HANDOFF)
			continue;
		for (size_t k = 0; k < CONF_MAX_PROBES && q->attacks[k]; k++) {
			const char *a = q->attacks[k];
			const char *ws = strstr(a, "{ws}/");
			if (strncmp(a, "write ", 6) != 0 || !ws)
				continue;
			const struct handoff_rule *rule = handoff_match(ws + 5);
			if (!rule)
				fail_msg("%s: %s matches no rule of the hand-off table", q->id, ws + 5);
			n++;
		}
	}
	/* git hook, git config, .envrc, editor task, CI workflow, venv, npm shim */
	assert_int_equal(n, 7);
	/* And the table does not match the neighbour they are judged against. */
	assert_null(handoff_match("src/main.py"));
	/* The link of the symlinked-directory row leads where a hand-off
	 * would be: the name it makes is one the table names. */
	assert_non_null(handoff_match("web/.vscode/tasks.json"));
}


static struct conf_line line_of(enum conf_outcome o, const char *why)
{
	struct conf_line l = { .outcome = o };
	snprintf(l.why, sizeof(l.why), "%s", why);
	return l;
}

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* The host decides: a thing the probe made that the host does not hold is
 * blocked (a throwaway overlay contained it), and a thing the host holds
 * is allowed whatever the probe was told. */
static void test_host_view(void **state)
{
	char root[] = "/tmp/test-conformance.XXXXXX", p[512], p2[512];
	struct conf_line l;
	const char *a[3];

	(void)state;
	assert_non_null(mkdtemp(root));

	/* Set-ID plant: none on the host, then one. */
	snprintf(p, sizeof(p), "%s/setid", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p2, sizeof(p2), "%s/setid/chmod-u", root);
	put(p2, "x", 0700);
	a[0] = p;
	l = line_of(CONF_ALLOWED, "set-ID bit on chmod-u");
	assert_true(conf_host_view("setid-plant", a, 1, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	assert_non_null(strstr(l.why, "inside the runtime only"));
	assert_int_equal(chmod(p2, 04700), 0);
	l = line_of(CONF_BLOCKED, "chmod-u: EPERM");
	assert_true(conf_host_view("setid-plant", a, 1, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);
	assert_string_equal(l.why, "on the host: set-ID bit or file capabilities on chmod-u");
	assert_int_equal(chmod(p2, 0700), 0);
	/* File capabilities are set-uid by another name (setting them needs
	 * CAP_SETFCAP: only where the test has it). */
	static const uint32_t cap[5] = { 0x02000001, 1u << 7, 0, 0, 0 };
	if (setxattr(p2, "security.capability", cap, sizeof(cap), 0) == 0) {
		l = line_of(CONF_BLOCKED, "setcap: EPERM");
		assert_true(conf_host_view("setid-plant", a, 1, &l));
		assert_int_equal(l.outcome, CONF_ALLOWED);
		assert_int_equal(removexattr(p2, "security.capability"), 0);
	}
	l = line_of(CONF_BLOCKED, "EPERM");
	assert_true(conf_host_view("setid-plant", a, 1, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	snprintf(p2, sizeof(p2), "%s/setid/dir-chmod-g", root);
	assert_int_equal(mkdir(p2, 0700), 0);
	assert_int_equal(chmod(p2, 02700), 0);
	l = line_of(CONF_BLOCKED, "EPERM");
	assert_true(conf_host_view("setid-plant", a, 1, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);

	/* Git redirects, each kind by its own file. */
	a[0] = root;
	a[1] = "commondir";
	snprintf(p, sizeof(p), "%s/.git", root);
	assert_int_equal(mkdir(p, 0700), 0);
	l = line_of(CONF_ALLOWED, "commondir written");
	assert_true(conf_host_view("git-redirect", a, 2, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	snprintf(p, sizeof(p), "%s/.git/commondir", root);
	put(p, "../elsewhere\n", 0644);
	l = line_of(CONF_BLOCKED, "EACCES");
	assert_true(conf_host_view("git-redirect", a, 2, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);
	a[1] = "gitfile";
	snprintf(p, sizeof(p), "%s/lib", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/lib/.git", root);
	put(p, "not a redirect\n", 0644);
	l = line_of(CONF_ALLOWED, "gitfile written");
	assert_true(conf_host_view("git-redirect", a, 2, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	put(p, "gitdir: ../elsewhere\n", 0644);
	l = line_of(CONF_BLOCKED, "EACCES");
	assert_true(conf_host_view("git-redirect", a, 2, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);
	a[1] = "bare";
	snprintf(p, sizeof(p), "%s/tools", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/tools/HEAD", root);
	put(p, "ref: refs/heads/main\n", 0644);
	l = line_of(CONF_ALLOWED, "bare written");
	assert_true(conf_host_view("git-redirect", a, 2, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	snprintf(p, sizeof(p), "%s/tools/config", root);
	put(p, "[core]\n\tfsmonitor = x\n", 0644);
	l = line_of(CONF_BLOCKED, "EACCES");
	assert_true(conf_host_view("git-redirect", a, 2, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);
	a[1] = "worktrees";
	l = line_of(CONF_ALLOWED, "");
	assert_false(conf_host_view("git-redirect", a, 2, &l));

	/* A hand-off behind a link: the link and what it reaches. */
	snprintf(p, sizeof(p), "%s/web", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/web/inner", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/web/inner/tasks.json", root);
	put(p, "{\"runOptions\": {\"runOn\": \"folderOpen\"}}\n", 0644);
	snprintf(p, sizeof(p), "%s/web", root);
	a[0] = p;
	a[1] = ".vscode";
	a[2] = "last";
	l = line_of(CONF_ALLOWED, ".vscode -> inner holds tasks.json");
	assert_true(conf_host_view("handoff-symlink", a, 3, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	snprintf(p2, sizeof(p2), "%s/web/.vscode", root);
	assert_int_equal(symlink("inner", p2), 0);
	l = line_of(CONF_BLOCKED, "symlink: EACCES");
	assert_true(conf_host_view("handoff-symlink", a, 3, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);

	/* Neighbours: done on the host, or not let through. */
	snprintf(p, sizeof(p), "%s/latest", root);
	a[0] = p;
	a[1] = "web";
	l = line_of(CONF_ALLOWED, "");
	assert_true(conf_host_view("symlink-ok", a, 2, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	assert_int_equal(symlink("web", p), 0);
	l = line_of(CONF_ALLOWED, "");
	assert_true(conf_host_view("symlink-ok", a, 2, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);
	snprintf(p, sizeof(p), "%s/build.sh", root);
	put(p, "#!/bin/sh\n", 0644);
	l = line_of(CONF_ALLOWED, "");
	assert_true(conf_host_view("chmod-ok", a, 1, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	assert_int_equal(chmod(p, 0755), 0);
	l = line_of(CONF_ALLOWED, "");
	assert_true(conf_host_view("chmod-ok", a, 1, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);
	snprintf(p, sizeof(p), "%s/out.txt", root);
	put(p, "other text\n", 0644);
	l = line_of(CONF_ALLOWED, "");
	assert_true(conf_host_view("write", a, 1, &l));
	assert_int_equal(l.outcome, CONF_BLOCKED);
	put(p, "airlock-probe was here\n", 0644);
	l = line_of(CONF_ALLOWED, "");
	assert_true(conf_host_view("write-ok", a, 1, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);

	/* Lines the host does not judge are left as the probe said. */
	l = line_of(CONF_ALLOWED, "ran");
	assert_false(conf_host_view("memfd-exec", NULL, 0, &l));
	assert_int_equal(l.outcome, CONF_ALLOWED);

	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_evidence_never_holds_the_canary),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_table_well_formed),
		cmocka_unit_test(test_handoff_rows_follow_the_handoff_table),
		cmocka_unit_test(test_host_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
