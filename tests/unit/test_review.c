/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for review mode's pure parts and its recovery: the line diff
 * finds the shortest edit (checked against an LCS reference on generated
 * inputs) and its unified output, patched back onto the old text, gives
 * the new one; each kind of flag is raised by its case and not by the
 * harmless neighbour; path escaping round-trips; an apply interrupted
 * midway is rolled back from its journal, and one past its commit point
 * is finished.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "review/review.h"

/* ---- diff ---- */

static size_t lines_of(const char *s, size_t len, const char **v, size_t *l)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		const char *e = memchr(s + i, '\n', len - i);
		size_t k = e ? (size_t)(e - (s + i)) + 1 : len - i;
		v[n] = s + i;
		l[n++] = k;
		i += k;
	}
	return n;
}

/* The reference: n + m - 2 * LCS, by dynamic programming. */
static long lcs_distance(const char *a, size_t alen, const char *b, size_t blen)
{
	const char *av[64], *bv[64];
	size_t al[64], bl[64];
	size_t n = lines_of(a, alen, av, al), m = lines_of(b, blen, bv, bl);
	static long t[65][65];
	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= m; j++) {
			if (!i || !j)
				t[i][j] = 0;
			else if (al[i - 1] == bl[j - 1] && !memcmp(av[i - 1], bv[j - 1], al[i - 1]))
				t[i][j] = t[i - 1][j - 1] + 1;
			else
				t[i][j] = t[i - 1][j] > t[i][j - 1] ? t[i - 1][j] : t[i][j - 1];
		}
	return (long)(n + m) - 2 * t[n][m];
}

/* Apply a unified diff to a; returns the result (malloc'd). */
static char *patch(const char *a, size_t alen, const char *diff, size_t *outlen)
{
	const char *av[64];
	size_t al[64];
	size_t n = lines_of(a, alen, av, al), ai = 0;
	char *out = calloc(1, alen + strlen(diff) + 1);
	size_t o = 0;
	const char *p = diff;
	/* skip the two name lines */
	p = strchr(p, '\n') + 1;
	p = strchr(p, '\n') + 1;
	char *last_plus = NULL;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = (size_t)(e - p);
		if (p[0] == '@') {
			unsigned long as;
			assert_int_equal(sscanf(p, "@@ -%lu", &as), 1);
			size_t start = as ? as - 1 : 0;
			/* "-0,0" and "-k,0" name the line before an empty side */
			if (strstr(p, ",0 +") && as)
				start = as;
			while (ai < start && ai < n) {
				memcpy(out + o, av[ai], al[ai]);
				o += al[ai++];
			}
			last_plus = NULL;
		} else if (p[0] == ' ' || p[0] == '-') {
			assert_true(ai < n);
			assert_int_equal(al[ai] - (av[ai][al[ai] - 1] == '\n'), len - 1);
			assert_memory_equal(av[ai], p + 1, len - 1);
			if (p[0] == ' ') {
				memcpy(out + o, av[ai], al[ai]);
				o += al[ai];
			}
			ai++;
			last_plus = NULL;
		} else if (p[0] == '+') {
			memcpy(out + o, p + 1, len - 1);
			o += len - 1;
			out[o++] = '\n';
			last_plus = out + o - 1;
		} else if (p[0] == '\\') {
			if (last_plus) /* the new side's last line has no newline */
				o--;
		}
		p = e + 1;
	}
	while (ai < n) {
		memcpy(out + o, av[ai], al[ai]);
		o += al[ai++];
	}
	*outlen = o;
	return out;
}

static char *diff_text(const char *a, size_t alen, const char *b, size_t blen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(review_diff(f, "x", a, alen, b, blen), 0);
	fclose(f);
	return buf;
}

static void gen(unsigned *seed, char *out, size_t *len)
{
	static const char *const words[] = { "a\n", "b\n", "c\n", "d\n", "a", "e\n" };
	size_t n = (size_t)(rand_r(seed) % 12), o = 0;
	for (size_t i = 0; i < n; i++) {
		const char *w = words[rand_r(seed) % 6];
		/* a line without its newline only at the end */
		if (w[1] != '\n' && i + 1 != n)
			w = "f\n";
		memcpy(out + o, w, strlen(w));
		o += strlen(w);
	}
	out[o] = '\0';
	*len = o;
}

static void test_diff_generated(void **state)
{
	(void)state;
	unsigned seed = 1234;
	for (int round = 0; round < 3000; round++) {
		char a[64], b[64];
		size_t alen, blen;
		gen(&seed, a, &alen);
		gen(&seed, b, &blen);
		/* shortest */
		assert_int_equal(review_diff_distance(a, alen, b, blen), lcs_distance(a, alen, b, blen));
		/* and right */
		char *d = diff_text(a, alen, b, blen);
		size_t plen;
		char *res = patch(a, alen, d, &plen);
		if (plen != blen || memcmp(res, b, blen)) {
			fprintf(stderr, "a=[%s] b=[%s] diff:\n%s\ngot [%.*s]\n", a, b, d, (int)plen, res);
			fail();
		}
		free(res);
		free(d);
	}
}

static void test_diff_output(void **state)
{
	(void)state;
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
	const char *b = "1\n2\n3\n4\n5\nsix\n7\n8\n9\n10\n11\n12\nthirteen";
	char *d = diff_text(a, strlen(a), b, strlen(b));
	/* as diff -u has it: changes six lines apart share a hunk */
	assert_string_equal(d, "--- a/x\n+++ b/x\n"
			       "@@ -3,10 +3,11 @@\n 3\n 4\n 5\n-6\n+six\n 7\n 8\n 9\n 10\n 11\n 12\n+thirteen\n"
			       "\\ No newline at end of file\n");
	free(d);
	const char *c = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n";
	const char *e = "1\ntwo\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n13\n14\n";
	d = diff_text(c, strlen(c), e, strlen(e));
	assert_string_equal(d, "--- a/x\n+++ b/x\n"
			       "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
			       "@@ -9,6 +9,6 @@\n 9\n 10\n 11\n-12\n+twelve\n 13\n 14\n");
	free(d);
	/* a new file, a terminal escape in it shown escaped */
	d = diff_text(NULL, 0, "x\x1b[2J\n", 6);
	assert_string_equal(d, "--- /dev/null\n+++ b/x\n@@ -0,0 +1,1 @@\n+x\\x1b[2J\n");
	free(d);
	d = diff_text("a\0b", 3, "c", 1);
	assert_string_equal(d, "Binary files differ\n");
	free(d);
}

/* ---- judging ---- */

static unsigned judge(const char *path, enum review_kind kind, mode_t mode, mode_t old_mode, const char *data,
		      const char *link, char *reason)
{
	struct review_change c = { .path = (char *)path, .kind = kind, .mode = mode, .old_mode = old_mode };
	struct stat st = { .st_mode = mode };
	review_judge(&c, kind == REVIEW_DELETED ? NULL : &st, data, data ? strlen(data) : 0, link, NULL);
	if (reason)
		strcpy(reason, c.reason);
	return c.flags;
}

static void test_judge(void **state)
{
	(void)state;
	char why[1024];
	/* hand-off files, with what runs inside named */
	assert_int_equal(judge(".git/config", REVIEW_MODIFIED, S_IFREG | 0644, S_IFREG | 0644,
			       "[core]\n\tfsmonitor = sh -c id\n", NULL, why),
			 REVIEW_FLAG_HANDOFF);
	assert_non_null(strstr(why, "core.fsmonitor"));
	assert_int_equal(judge("sub/.envrc", REVIEW_ADDED, S_IFREG | 0644, 0, "x\n", NULL, NULL), REVIEW_FLAG_HANDOFF);
	assert_int_equal(judge(".envrc", REVIEW_DELETED, 0, S_IFREG | 0644, NULL, NULL, NULL), REVIEW_FLAG_HANDOFF);
	/* neighbours: an ordinary file, a hand-off directory itself, a build
	 * entry point without a command in it */
	assert_int_equal(judge("src/envrc.c", REVIEW_ADDED, S_IFREG | 0644, 0, "int x;\n", NULL, NULL), 0);
	assert_int_equal(judge(".vscode", REVIEW_ADDED, S_IFDIR | 0755, 0, NULL, NULL, NULL), 0);
	assert_int_equal(judge("Makefile", REVIEW_MODIFIED, S_IFREG | 0644, S_IFREG | 0644, "all:\n\tcc x.c\n", NULL, NULL),
			 0);
	/* executables: new, or newly so; an executable edited stays quiet */
	assert_int_equal(judge("run.sh", REVIEW_ADDED, S_IFREG | 0755, 0, "#!/bin/sh\n", NULL, why), REVIEW_FLAG_EXEC);
	assert_string_equal(why, "new executable");
	assert_int_equal(judge("run.sh", REVIEW_MODIFIED, S_IFREG | 0744, S_IFREG | 0644, "#!/bin/sh\n", NULL, why),
			 REVIEW_FLAG_EXEC);
	assert_string_equal(why, "became executable");
	assert_int_equal(judge("run.sh", REVIEW_MODIFIED, S_IFREG | 0755, S_IFREG | 0755, "#!/bin/sh\n", NULL, NULL), 0);
	/* set-ID bits */
	assert_int_equal(judge("t", REVIEW_MODIFIED, S_IFREG | 04644, S_IFREG | 0644, "", NULL, NULL), REVIEW_FLAG_SETID);
	assert_int_equal(judge("t", REVIEW_MODIFIED, S_IFREG | 02644, S_IFREG | 0644, "", NULL, NULL), REVIEW_FLAG_SETID);
	/* links: leaving the workspace, or not */
	assert_int_equal(judge("keys", REVIEW_ADDED, S_IFLNK | 0777, 0, NULL, "/home/u/.ssh", NULL), REVIEW_FLAG_LINK);
	assert_int_equal(judge("a/k", REVIEW_ADDED, S_IFLNK | 0777, 0, NULL, "../../etc", NULL), REVIEW_FLAG_LINK);
	assert_int_equal(judge("a/k", REVIEW_ADDED, S_IFLNK | 0777, 0, NULL, "../src", NULL), 0);
	/* special files */
	assert_int_equal(judge("p", REVIEW_ADDED, S_IFIFO | 0644, 0, NULL, NULL, NULL), REVIEW_FLAG_SPECIAL);
	assert_int_equal(judge("s", REVIEW_ADDED, S_IFSOCK | 0755, 0, NULL, NULL, NULL), REVIEW_FLAG_SPECIAL);
	/* credentials, in the proxy's formats */
	assert_int_equal(judge("creds", REVIEW_ADDED, S_IFREG | 0644, 0, "key = AKIAQWERTYUIOPASDFGH\n", NULL, why),
			 REVIEW_FLAG_SECRET);
	assert_non_null(strstr(why, "aws-access-key-id"));
	assert_int_equal(judge("creds", REVIEW_ADDED, S_IFREG | 0644, 0, "key = AKIA-not-a-key\n", NULL, NULL), 0);
	/* several at once, all named */
	assert_int_equal(judge(".git/hooks/pre-commit", REVIEW_ADDED, S_IFREG | 0755, 0, "#!/bin/sh\n", NULL, why),
			 REVIEW_FLAG_HANDOFF | REVIEW_FLAG_EXEC);
	assert_non_null(strstr(why, "hook"));
	assert_non_null(strstr(why, "new executable"));
}

/* The policy's own protected paths, which review mode flags rather than
 * keeps read-only. */
static void test_judge_policy_globs(void **state)
{
	(void)state;
	struct protect_set set = { 0 };
	assert_int_equal(protect_set_add(&set, "config/**"), 0);
	assert_int_equal(protect_set_add(&set, "**/Makefile"), 0);
	assert_int_equal(protect_set_add(&set, "**/.envrc"), 0);
	struct review_change c = { .path = "config/db.yml", .kind = REVIEW_MODIFIED, .mode = S_IFREG | 0644 };
	struct stat st = { .st_mode = S_IFREG | 0644 };
	review_judge(&c, &st, "x: 1\n", 5, NULL, &set);
	assert_int_equal(c.flags, REVIEW_FLAG_PROTECT);
	assert_string_equal(c.reason, "protected by the policy: config/**");
	c.path = "sub/Makefile";
	review_judge(&c, &st, "all:\n", 5, NULL, &set);
	assert_int_equal(c.flags, REVIEW_FLAG_PROTECT);
	/* the neighbours: an unprotected file; the same files without the
	 * policy's globs; a table file is named once, as a hand-off file */
	c.path = "configs/db.yml";
	review_judge(&c, &st, "x: 1\n", 5, NULL, &set);
	assert_int_equal(c.flags, 0);
	c.path = "config/db.yml";
	review_judge(&c, &st, "x: 1\n", 5, NULL, NULL);
	assert_int_equal(c.flags, 0);
	c.path = ".envrc";
	review_judge(&c, &st, "x\n", 2, NULL, &set);
	assert_int_equal(c.flags, REVIEW_FLAG_HANDOFF);
	/* a directory of a directory glob: its files are what is flagged */
	struct stat dst = { .st_mode = S_IFDIR | 0755 };
	c.path = "config";
	c.kind = REVIEW_ADDED;
	review_judge(&c, &dst, NULL, 0, NULL, &set);
	assert_int_equal(c.flags, 0);
	protect_set_free(&set);
}

static void test_escape(void **state)
{
	(void)state;
	const char *cases[] = { "plain/path.c", "with space", "new\nline", "100%", "tab\there", "\x7f\x01" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = review_escape(cases[i]);
		assert_non_null(e);
		assert_null(strpbrk(e, " \n\t"));
		assert_true(review_unescape(e));
		assert_string_equal(e, cases[i]);
		free(e);
	}
	char bad[] = "a%0";
	assert_false(review_unescape(bad));
	char nul[] = "a%00b";
	assert_false(review_unescape(nul));
	assert_true(review_id_valid("01a22c62-50bb-7337-a1cb-09282a25ee14"));
	assert_false(review_id_valid("../x"));
	assert_false(review_id_valid(".new-abc"));
	assert_false(review_id_valid(""));
}

/* ---- recovery from the journal ---- */

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void journal_case(bool committed)
{
	char tmpl[] = "/tmp/review-unit-XXXXXX", p[512];
	assert_non_null(mkdtemp(tmpl));
	char ws[300], sess[300];
	snprintf(ws, sizeof(ws), "%s/ws", tmpl);
	snprintf(sess, sizeof(sess), "%s/sess", tmpl);
	assert_int_equal(mkdir(ws, 0755), 0);
	assert_int_equal(mkdir(sess, 0700), 0);
	snprintf(p, sizeof(p), "%s/meta", sess);
	char meta[400];
	snprintf(meta, sizeof(meta), "workspace %s\nstarted 0\n", ws);
	put(p, meta);
	/* An apply of "a" (modified) and "n" (added), killed after both were
	 * placed: the old "a" in the backup, a staged name left over. */
	snprintf(p, sizeof(p), "%s/.airlock-apply-1", ws);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/.airlock-apply-1/0", ws);
	put(p, "old a\n");
	snprintf(p, sizeof(p), "%s/a", ws);
	put(p, "new a\n");
	snprintf(p, sizeof(p), "%s/n", ws);
	put(p, "new n\n");
	snprintf(p, sizeof(p), "%s/.airlock-stage-1-3", ws);
	put(p, "half\n");
	snprintf(p, sizeof(p), "%s/journal", sess);
	put(p, committed ? "backup .airlock-apply-1\nstage .airlock-stage-1-1\nstage .airlock-stage-1-2\n"
			   "stage .airlock-stage-1-3\nmoved a 0\nplaced a\nplaced n\ncommit\n"
			 : "backup .airlock-apply-1\nstage .airlock-stage-1-1\nstage .airlock-stage-1-2\n"
			   "stage .airlock-stage-1-3\nmoved a 0\nplaced a\nplaced n\nplac");
	struct error err = { 0 };
	FILE *out = fopen("/dev/null", "w");
	assert_int_equal(review_recover(sess, out, &err), 1);
	fclose(out);
	snprintf(p, sizeof(p), "%s/a", ws);
	assert_string_equal(get(p), committed ? "new a\n" : "old a\n");
	snprintf(p, sizeof(p), "%s/n", ws);
	if (committed)
		assert_string_equal(get(p), "new n\n");
	else
		assert_null(get(p));
	snprintf(p, sizeof(p), "%s/.airlock-apply-1", ws);
	assert_int_equal(access(p, F_OK), -1);
	if (!committed) {
		snprintf(p, sizeof(p), "%s/.airlock-stage-1-3", ws);
		assert_int_equal(access(p, F_OK), -1);
		snprintf(p, sizeof(p), "%s/journal", sess);
		assert_int_equal(access(p, F_OK), -1);
		/* A second look finds nothing to do. */
		out = fopen("/dev/null", "w");
		assert_int_equal(review_recover(sess, out, &err), 0);
		fclose(out);
	} else {
		assert_int_equal(access(sess, F_OK), -1); /* the session is spent */
	}
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	assert_int_equal(system(cmd), 0);
}

static void test_recover_rolls_back(void **state)
{
	(void)state;
	journal_case(false);
}

static void test_recover_finishes_a_commit(void **state)
{
	(void)state;
	journal_case(true);
}

/* ---- reading a change out of an upper directory ---- */

static void mk(const char *root, const char *rel, const char *text, mode_t mode)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *q = path + strlen(root) + 1; (q = strchr(q, '/')); q++) {
		*q = '\0';
		mkdir(path, 0755);
		*q = '/';
	}
	if (text) {
		put(path, text);
		assert_int_equal(chmod(path, mode), 0);
	} else {
		mkdir(path, mode);
	}
}

static void ln(const char *root, const char *rel, const char *target)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static const struct review_change *change_of(const struct review_changes *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->c[i].path, path))
			return &c->c[i];
	fail_msg("%s is not in the change", path);
	return NULL;
}

/* What the agent left in the layer, judged by every name a host tool
 * reaches it by, set-ID bits, and repositories planted in
 * subdirectories; the neighbours stay unflagged. */
static void test_changes_read_indirection(void **state)
{
	(void)state;
	char ws[] = "/tmp/airlock-review-ws.XXXXXX", up[] = "/tmp/airlock-review-up.XXXXXX";
	assert_non_null(mkdtemp(ws));
	assert_non_null(mkdtemp(up));
	/* The workspace: a link the user already had, and a directory. */
	mk(ws, "tools/readme.txt", "x\n", 0644);
	ln(ws, ".github", "ci");
	mk(ws, "ci/x", "x\n", 0644);
	/* The agent's change. */
	mk(up, "tools/tasks.json", "{\"tasks\":[]}\n", 0644);        /* reached as .vscode/tasks.json */
	ln(up, ".vscode", "tools");                                  /* a link standing for .vscode */
	mk(up, "ci/workflows/x.yml", "on: push\n", 0644);           /* reached through the user's .github */
	mk(up, "l1/settings.json", "{}\n", 0644);
	ln(up, "l2", "l1");
	ln(up, ".claude", "l2");                                     /* a chain */
	mk(up, "suid", "x", 04755);
	mk(up, "sgid", "x", 02755);
	mk(up, "vendor/b/HEAD", "ref: refs/heads/main\n", 0644);     /* a bare repository */
	mk(up, "vendor/b/objects", NULL, 0755);
	mk(up, "vendor/b/refs", NULL, 0755);
	mk(up, "vendor/b/config", "[core]\n\tfsmonitor = id\n", 0644);
	mk(up, "wt/.git", "gitdir: ../e4\n", 0644);
	mk(up, ".git/worktrees/wt/commondir", "../../../e1\n", 0644);
	mk(up, ".git/worktrees/ok/commondir", "../..\n", 0644);
	/* neighbours */
	mk(up, "src/a.c", "int a;\n", 0644);
	ln(up, "src/alias.c", "a.c");
	mk(up, "app/config/x.ini", "k=v\n", 0644);
	mk(up, "app/objects/o.c", "int o;\n", 0644);
	mk(up, "app/refs/r.c", "int r;\n", 0644);

	struct review_changes c;
	struct error err = { 0 };
	assert_int_equal(review_changes_read(up, ws, NULL, &c, &err), 0);
	static const struct {
		const char *path;
		unsigned flag;
		const char *why;
	} want[] = {
		{ "tools/tasks.json", REVIEW_FLAG_HANDOFF, ".vscode/tasks.json" },
		{ ".vscode", REVIEW_FLAG_HANDOFF, "standing for a hand-off directory" },
		{ "ci/workflows/x.yml", REVIEW_FLAG_HANDOFF, ".github/workflows/x.yml" },
		{ "l1/settings.json", REVIEW_FLAG_HANDOFF, ".claude/settings.json" },
		{ ".claude", REVIEW_FLAG_HANDOFF, "standing for" },
		{ "l2", REVIEW_FLAG_HANDOFF, "as .claude" }, /* the middle of the chain */
		{ "suid", REVIEW_FLAG_SETID, "set-user-ID" },
		{ "sgid", REVIEW_FLAG_SETID, "set-group-ID" },
		{ "vendor/b/config", REVIEW_FLAG_HANDOFF, "core.fsmonitor" },
		{ "wt/.git", REVIEW_FLAG_HANDOFF, "not a worktree's" },
		{ ".git/worktrees/wt/commondir", REVIEW_FLAG_HANDOFF, "commondir leads git to" },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct review_change *x = change_of(&c, want[i].path);
		if (!(x->flags & want[i].flag) || !strstr(x->reason, want[i].why))
			fail_msg("%s: flags %#x, reason \"%s\"", want[i].path, x->flags, x->reason);
	}
	static const char *const quiet[] = { "src/a.c", "src/alias.c", "app/config/x.ini", "app/objects/o.c",
					     "app/refs/r.c", ".git/worktrees/ok/commondir" };
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		const struct review_change *x = change_of(&c, quiet[i]);
		if (x->flags)
			fail_msg("%s is flagged: %s", quiet[i], x->reason);
	}
	review_changes_free(&c);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", ws, up);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_generated),
		cmocka_unit_test(test_diff_output),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_judge_policy_globs),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_recover_rolls_back),
		cmocka_unit_test(test_recover_finishes_a_commit),
		cmocka_unit_test(test_changes_read_indirection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
