/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hand-off table and its glob matcher.
 *
 * Each row is a file that some host tool executes, or trusts to tell it
 * what to execute, after the agent's run is over. The published sandbox
 * escapes of 2025-2026 used these rows, not a kernel bug: a pre-commit
 * hook, core.fsmonitor in .git/config, a filter driver named from
 * .gitattributes, a replaced .venv/bin/python, a VS Code task that runs
 * on folder open, an .envrc, a CI workflow, an agent's settings file that
 * names an MCP server command.
 */
#include <string.h>

#include "handoff/handoff.h"

const struct handoff_rule handoff_rules[] = {
	/* git: run by commit, checkout, merge, push, status, diff */
	{ "**/.git/hooks/**", "git", "git runs hooks on commit, checkout, merge, push", false },
	{ "**/.git/config", "git", "git config can name commands (hooksPath, fsmonitor, sshCommand, filters, aliases)", false },
	{ "**/.git/config.worktree", "git", "per-worktree git config, read like .git/config", false },
	{ "**/.git/worktrees/*/config.worktree", "git", "per-worktree git config, read like .git/config", false },
	{ "**/.git/info/attributes", "git", "selects filter, diff and merge drivers by path", false },
	{ "**/.git/modules/**/hooks/**", "git", "a submodule's hooks", false },
	{ "**/.git/modules/**/config", "git", "a submodule's git config", false },
	{ "**/.git", "git", "a .git file names the repository git uses, with its hooks and config", false },
	{ "**/.gitmodules", "git", "submodule URLs and update commands", false },
	{ "**/.gitattributes", "git", "selects filter, diff and merge drivers by path", false },
	{ "**/.husky/**", "git", "husky installs these as git hooks", false },
	{ "**/.pre-commit-config.yaml", "git", "pre-commit runs the hooks it names", false },
	{ "**/lefthook.yml", "git", "lefthook runs the commands it names as git hooks", false },
	{ "**/.lefthook.yml", "git", "lefthook runs the commands it names as git hooks", false },
	/* editors */
	{ "**/.vscode/**", "editor", "VS Code tasks, launch configurations and interpreter settings", false },
	{ "**/*.code-workspace", "editor", "VS Code workspace settings and tasks", false },
	{ "**/.idea/**", "editor", "JetBrains run configurations and tool settings", false },
	{ "**/.zed/**", "editor", "Zed tasks and settings", false },
	/* shells and environments */
	{ "**/.envrc", "shell", "direnv evaluates it in the user's shell on cd", false },
	{ "**/.direnv/**", "shell", "direnv's cached environment and layouts", false },
	{ "**/.bashrc", "shell", "bash runs it at start", false },
	{ "**/.bash_profile", "shell", "bash runs it at login", false },
	{ "**/.bash_login", "shell", "bash runs it at login", false },
	{ "**/.profile", "shell", "sh runs it at login", false },
	{ "**/.zshrc", "shell", "zsh runs it at start", false },
	{ "**/.zshenv", "shell", "zsh runs it at every start", false },
	{ "**/.zprofile", "shell", "zsh runs it at login", false },
	/* interpreters and package managers */
	{ "**/.venv/bin/**", "python", "virtualenv interpreters and entry points the user runs", false },
	{ "**/venv/bin/**", "python", "virtualenv interpreters and entry points the user runs", false },
	{ "**/.venv/pyvenv.cfg", "python", "names the interpreter a virtualenv runs", false },
	{ "**/site-packages/*.pth", "python", "Python executes import lines in .pth files at every start", false },
	{ "**/sitecustomize.py", "python", "Python imports it at every start", false },
	{ "**/usercustomize.py", "python", "Python imports it at every start", false },
	{ "**/conftest.py", "python", "pytest imports it when collecting tests", true },
	{ "**/node_modules/.bin/**", "node", "npm scripts run these shims", false },
	{ "**/.npmrc", "node", "npm settings can name the script shell and git", false },
	{ "**/.yarnrc.yml", "node", "yarnPath names a script yarn runs instead of itself", false },
	{ "**/.yarn/releases/**", "node", "the yarn release that .yarnrc.yml runs", false },
	{ "**/.tool-versions", "shell", "asdf and mise install and run the tools it names", false },
	{ "**/.mise.toml", "shell", "mise runs the tasks and hooks it names", false },
	/* CI and containers */
	{ "**/.github/workflows/**", "ci", "GitHub Actions runs workflows with the repository's secrets", false },
	{ "**/.github/actions/**", "ci", "local GitHub Actions used by workflows", false },
	{ "**/.gitlab-ci.yml", "ci", "GitLab CI runs it with the project's variables", false },
	{ "**/.circleci/**", "ci", "CircleCI runs it", false },
	{ "**/.buildkite/**", "ci", "Buildkite runs it", false },
	{ "**/azure-pipelines.yml", "ci", "Azure Pipelines runs it", false },
	{ "**/Jenkinsfile", "ci", "Jenkins runs it", false },
	{ "**/.travis.yml", "ci", "Travis CI runs it", false },
	{ "**/.devcontainer/**", "container", "dev container definitions run commands on the host and in containers", false },
	{ "**/.devcontainer.json", "container", "dev container definition", false },
	/* agents */
	{ "**/.claude/**", "agent", "Claude Code settings: hooks and MCP server commands", false },
	{ "**/.mcp.json", "agent", "MCP server commands a client starts", false },
	{ "**/.cursor/**", "agent", "Cursor settings and MCP server commands", false },
	{ "**/.gemini/**", "agent", "Gemini CLI settings and MCP server commands", false },
	{ "**/.codex/**", "agent", "Codex settings and MCP server commands", false },
	{ "**/.continue/**", "agent", "Continue settings and MCP server commands", false },
	/* build entry points: protected only when the policy says so */
	{ "**/Makefile", "build", "make runs it", true },
	{ "**/GNUmakefile", "build", "make runs it", true },
	{ "**/makefile", "build", "make runs it", true },
	{ "**/*.mk", "build", "included by makefiles", true },
	{ "**/CMakeLists.txt", "build", "cmake runs it", true },
	{ "**/meson.build", "build", "meson runs it", true },
	{ "**/package.json", "build", "npm runs its install and run scripts", true },
	{ "**/setup.py", "build", "pip runs it to build the package", true },
	{ "**/pyproject.toml", "build", "names the build backend pip runs", true },
	{ "**/build.rs", "build", "cargo runs it when building", true },
	{ "**/build.gradle", "build", "gradle runs it", true },
	{ "**/build.gradle.kts", "build", "gradle runs it", true },
	{ "**/justfile", "build", "just runs it", true },
	{ "**/Taskfile.yml", "build", "task runs it", true },
	{ NULL, NULL, NULL, false },
};

/*
 * The matcher is a set-of-states simulation (no backtracking, so no
 * pattern can make it slow): the pattern becomes tokens, and after each
 * byte of the path we keep the set of tokens that could come next.
 *   '*'       any run of bytes but '/'
 *   '**'      any run of bytes
 *   '**' '/'  at a name boundary: nothing, or any run ending in '/'
 *             (zero or more whole directories)
 */
#define GLOB_MAX 256
enum { T_STAR = 256, T_DSTAR, T_DSTAR_SLASH };

/* State flags: FRESH when a token was just reached (from the token before
 * it, or at the start), LOOP when a wildcard consumed a byte and stays.
 * "**" + "/" may be skipped only when fresh: once it has consumed a byte
 * it must end with a '/'. */
#define FRESH 1
#define LOOP 2

static void glob_closure(const unsigned *tok, size_t nt, unsigned char *set)
{
	for (size_t k = 0; k < nt; k++)
		if ((set[k] && (tok[k] == T_STAR || tok[k] == T_DSTAR)) || (set[k] & FRESH && tok[k] == T_DSTAR_SLASH))
			set[k + 1] |= FRESH;
}

/* Run pattern over path; *alive tells whether some continuation of path
 * could still match (the set of states is not empty). */
static bool glob_run(const char *pattern, const char *path, bool *alive)
{
	unsigned tok[GLOB_MAX + 1];
	tok[0] = 0; /* the first nt are set below; this quiets a false warning for an empty pattern */
	unsigned char a[GLOB_MAX + 1], b[GLOB_MAX + 1];
	unsigned char *cur = a, *next = b;
	size_t nt = 0, plen = strlen(pattern);

	*alive = false;
	if (plen > GLOB_MAX)
		return false;
	for (size_t i = 0; i < plen;) {
		if (pattern[i] != '*') {
			tok[nt++] = (unsigned char)pattern[i++];
			continue;
		}
		if (pattern[i + 1] != '*') {
			tok[nt++] = T_STAR;
			i++;
			continue;
		}
		size_t first = i;
		while (pattern[i] == '*')
			i++;
		bool at_boundary = first == 0 || pattern[first - 1] == '/';
		if (at_boundary && pattern[i] == '/') {
			tok[nt++] = T_DSTAR_SLASH;
			i++;
		} else {
			tok[nt++] = T_DSTAR;
		}
	}
	memset(cur, 0, nt + 1);
	cur[0] = FRESH;
	glob_closure(tok, nt, cur);
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		bool any = false;
		memset(next, 0, nt + 1);
		for (size_t k = 0; k < nt; k++) {
			if (!cur[k])
				continue;
			switch (tok[k]) {
			case T_STAR:
				if (*s != '/') {
					next[k] |= LOOP;
					any = true;
				}
				break;
			case T_DSTAR:
				next[k] |= LOOP;
				any = true;
				break;
			case T_DSTAR_SLASH:
				next[k] |= LOOP;
				any = true;
				if (*s == '/')
					next[k + 1] |= FRESH;
				break;
			default:
				if (tok[k] == *s) {
					next[k + 1] |= FRESH;
					any = true;
				}
				break;
			}
		}
		if (!any)
			return false;
		glob_closure(tok, nt, next);
		unsigned char *t = cur;
		cur = next;
		next = t;
	}
	/* Every token can consume some bytes and reach the next one, so a
	 * live state always has a continuation that matches. */
	*alive = true;
	return cur[nt] != 0;
}

void handoff_glob_prepare(const char *pattern, struct handoff_glob *g)
{
	/* A matching path holds each literal run of the pattern as it is:
	 * the longest one rules most paths out at the cost of a substring
	 * search (the walks match every pattern against every entry). */
	g->pattern = pattern;
	g->lit = NULL;
	g->lit_len = 0;
	g->head_len = strcspn(pattern, "*");
	size_t n = g->len = strlen(pattern);
	g->tail_len = 0;
	while (g->tail_len < n && pattern[n - 1 - g->tail_len] != '*')
		g->tail_len++;
	/* After "**" at a name boundary, the run's '/' is the wildcard's:
	 * "**" + "/.envrc" matches ".envrc". */
	size_t star = n - g->tail_len; /* just past the last '*' */
	if (g->tail_len && star >= 2 && pattern[star] == '/' && pattern[star - 1] == '*' && pattern[star - 2] == '*') {
		size_t first = star - 2;
		while (first > 0 && pattern[first - 1] == '*')
			first--;
		if (first == 0 || pattern[first - 1] == '/')
			g->tail_len--;
	}
	for (const char *p = pattern; *p;) {
		if (*p == '*') {
			/* "**" + "/" at a name boundary may match nothing,
			 * its '/' included: that '/' is the wildcard's. */
			const char *first = p;
			while (*p == '*')
				p++;
			if (p - first >= 2 && *p == '/' && (first == pattern || first[-1] == '/'))
				p++;
			continue;
		}
		const char *q = p;
		while (*q && *q != '*')
			q++;
		if ((size_t)(q - p) > g->lit_len) {
			g->lit = p;
			g->lit_len = (size_t)(q - p);
		}
		p = q;
	}
}

bool handoff_glob_match_prepared(const struct handoff_glob *g, const char *path, size_t path_len)
{
	/* The cheap tests first: the fixed start and end, then the longest
	 * run anywhere when it is neither. */
	if (g->head_len > path_len || memcmp(path, g->pattern, g->head_len) != 0)
		return false;
	size_t n = g->len;
	if (g->tail_len > path_len || memcmp(path + path_len - g->tail_len, g->pattern + n - g->tail_len, g->tail_len))
		return false;
	bool fixed = g->lit == g->pattern || (g->lit && g->lit + g->lit_len == g->pattern + n);
	if (g->lit_len && !fixed && !memmem(path, path_len, g->lit, g->lit_len))
		return false;
	bool alive;
	return glob_run(g->pattern, path, &alive);
}

bool handoff_glob_match(const char *pattern, const char *path)
{
	struct handoff_glob g;
	handoff_glob_prepare(pattern, &g);
	return handoff_glob_match_prepared(&g, path, strlen(path));
}

bool handoff_glob_prefix(const char *pattern, const char *prefix)
{
	bool alive;
	(void)glob_run(pattern, prefix, &alive);
	return alive;
}

/* Does a link at rel (relative to the root) with this target leave the
 * root? Lexically: an absolute target, or more ".." than the link's depth
 * plus the names climbed back down. */
bool handoff_path_escapes(const char *rel, const char *target)
{
	if (target[0] == '/')
		return true;
	int depth = 0;
	for (const char *p = rel; *p; p++)
		if (*p == '/')
			depth++;
	const char *p = target;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return true;
		} else if (n && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return false;
}

const struct handoff_rule *handoff_match(const char *path)
{
	for (const struct handoff_rule *r = handoff_rules; r->pattern; r++)
		if (handoff_glob_match(r->pattern, path))
			return r;
	return NULL;
}
