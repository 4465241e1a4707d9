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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handoff/handoff.h"
#include "match/glob.h"

const struct handoff_rule handoff_rules[] = {
	/* git: run by commit, checkout, merge, push, status, diff */
	{ "**/.git/hooks/**", "git", "git runs hooks on commit, checkout, merge, push", false },
	{ "**/.git/config", "git", "git config can name commands (hooksPath, fsmonitor, sshCommand, filters, aliases)", false },
	{ "**/.git/commondir", "git", "a commondir makes another directory the repository: its config, hooks and objects", false },
	{ "**/.git/objects/info/alternates", "git", "git reads objects from the directories it names", false },
	{ "**/.git/modules/**/commondir", "git", "a submodule's commondir: another directory becomes its repository", false },
	/* A bare repository kept in the workspace, by git's naming
	 * convention: its existing config and hooks are made read-only as
	 * .git's are (one of another name is judged by its shape). */
	{ "**/*.git/config", "git", "a bare repository's git config", false },
	{ "**/*.git/hooks/**", "git", "a bare repository's hooks", false },
	{ "**/.git/worktrees/*/commondir", "git", "names the repository a worktree uses, with its config and hooks (judged by where it leads)", false, true },
	{ "**/.git/config.worktree", "git", "per-worktree git config, read like .git/config", false },
	{ "**/.git/worktrees/*/config.worktree", "git", "per-worktree git config, read like .git/config", false },
	{ "**/.git/info/attributes", "git", "selects filter, diff and merge drivers by path", false },
	{ "**/.git/modules/**/hooks/**", "git", "a submodule's hooks", false },
	{ "**/.git/modules/**/config", "git", "a submodule's git config", false },
	{ "**/.git", "git", "a .git file names the repository git uses, with its hooks and config", false, true },
	{ "**/.gitmodules", "git", "submodule URLs and update commands", false },
	{ "**/.gitattributes", "git", "selects filter, diff and merge drivers by path", false },
	{ "**/.hg/hgrc", "vcs", "Mercurial runs the hooks and loads the extensions it names", false },
	{ "**/.hg/hgrc-not-shared", "vcs", "Mercurial config of a shared repository, read like .hg/hgrc", false },
	{ "**/.hg/sharedpath", "vcs", "points Mercurial at another repository, whose hgrc and store it uses", false },
	{ "**/.hgsub", "vcs", "Mercurial subrepositories, checked out by git and svn commands", false },
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
	{ "**/.yarnrc", "node", "yarn 1 runs its yarn-path script instead of itself", false },
	{ "**/.pnpmfile.cjs", "node", "pnpm runs its hooks at every install", false },
	{ "**/.pnpmfile.mjs", "node", "pnpm runs its hooks at every install", false },
	{ "**/bunfig.toml", "node", "bun preloads the scripts it names", false },
	{ "**/.yarn/releases/**", "node", "the yarn release that .yarnrc.yml runs", false },
	{ "**/.tool-versions", "shell", "asdf and mise install and run the tools it names", false },
	{ "**/.mise.toml", "shell", "mise runs the tasks and hooks it names", false },
	{ "**/mise.toml", "shell", "mise runs the tasks and hooks it names", false },
	{ "**/.mise.local.toml", "shell", "mise runs the tasks and hooks it names", false },
	{ "**/mise.local.toml", "shell", "mise runs the tasks and hooks it names", false },
	{ "**/.mise/**", "shell", "mise config directory: tasks and hooks", false },
	{ "**/.config/mise.toml", "shell", "mise runs the tasks and hooks it names", false },
	{ "**/.config/mise/**", "shell", "mise config directory: tasks and hooks", false },
	{ "**/.rtx.toml", "shell", "rtx (mise's old name) runs what it names", false },
	{ "**/devbox.json", "shell", "devbox runs its init_hook in the user's shell", false },
	{ "**/.pdbrc", "python", "pdb runs its commands (Python too) when a debugger starts here", false },
	{ "**/.irbrc", "shell", "irb runs it (Ruby) when started here", false },
	{ "**/.pryrc", "shell", "pry runs it (Ruby) when started here", false },
	{ "**/.Rprofile", "shell", "R runs it when started here", false },
	{ "**/.exrc", "editor", "vim and neovim run it with the exrc option", false },
	{ "**/.nvim.lua", "editor", "neovim runs it with the exrc option", false },
	{ "**/.nvimrc", "editor", "neovim runs it with the exrc option", false },
	{ "**/.pylintrc", "python", "pylint runs its init-hook as Python code", false },
	{ "**/pylintrc", "python", "pylint runs its init-hook as Python code", false },
	/* toolchains and build tools that read per-directory config naming
	 * programs, on every run rather than only when the build runs */
	{ "**/.cargo/config", "build", "cargo runs the runner, rustc-wrapper and linker it names", false },
	{ "**/.cargo/config.toml", "build", "cargo runs the runner, rustc-wrapper and linker it names", false },
	{ "**/rust-toolchain", "build", "rustup runs the toolchain it names, a path too", false },
	{ "**/rust-toolchain.toml", "build", "rustup runs the toolchain it names, a path too", false },
	{ "**/.bazelrc", "build", "bazel takes options from it (--run_under, wrappers, startup options)", false },
	{ "**/.mvn/**", "build", "maven reads its JVM options and extensions, the wrapper runs its jar", false },
	{ "**/gradle/wrapper/**", "build", "the gradle wrapper downloads and runs the distribution it names", false },
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
	{ "**/gradlew", "build", "the gradle wrapper script the user runs", true },
	{ "**/tools/bazel", "build", "bazelisk runs this script instead of bazel", true },
	{ "**/mvnw", "build", "the maven wrapper script the user runs", true },
	{ "**/gradle.properties", "build", "gradle takes JVM options and the Java home from it", true },
	{ "**/tox.ini", "build", "tox runs the commands it lists", true },
	{ "**/Gemfile", "build", "bundler runs it (Ruby)", true },
	{ "**/Rakefile", "build", "rake runs it", true },
	{ "**/Vagrantfile", "build", "vagrant runs it (Ruby)", true },
	{ "**/noxfile.py", "build", "nox runs it", true },
	{ "**/eslint.config.*", "build", "eslint and editor extensions load and run it", true },
	{ "**/.eslintrc.js", "build", "eslint and editor extensions load and run it", true },
	{ "**/.eslintrc.cjs", "build", "eslint and editor extensions load and run it", true },
	{ NULL, NULL, NULL, false, false },
};

void handoff_glob_prepare(const char *pattern, struct handoff_glob *g)
{
	memset(g, 0, sizeof(*g));
	if (strlen(pattern) > HANDOFF_GLOB_MAX) {
		g->too_long = true;
		return;
	}
	g->nt = match_file_tokens(pattern, g->tok);
	/* A matching path holds each run of literal tokens as it is (the
	 * slash of a "**" + "/" is the wildcard's, not a literal): the
	 * fixed start and end and the longest run rule most paths out
	 * before the automaton runs (the walks match every pattern against
	 * every entry). */
	for (size_t k = 0, run = 0; k < g->nt; k++) {
		bool lit = g->tok[k] < 0x100;
		g->bytes[k] = lit ? (char)g->tok[k] : 0;
		run = lit ? run + 1 : 0;
		if (run > g->lit_len) {
			g->lit_len = run;
			g->lit_at = k + 1 - run;
		}
	}
	while (g->head_len < g->nt && g->tok[g->head_len] < 0x100)
		g->head_len++;
	while (g->tail_len < g->nt && g->tok[g->nt - 1 - g->tail_len] < 0x100)
		g->tail_len++;
}

bool handoff_glob_match_prepared(const struct handoff_glob *g, const char *path, size_t path_len)
{
	if (g->too_long)
		return false;
	if (g->head_len > path_len || memcmp(path, g->bytes, g->head_len) != 0)
		return false;
	if (g->tail_len > path_len || memcmp(path + path_len - g->tail_len, g->bytes + g->nt - g->tail_len, g->tail_len))
		return false;
	bool fixed = g->lit_at == 0 || g->lit_at + g->lit_len == g->nt; /* tested just above */
	if (g->lit_len && !fixed && !memmem(path, path_len, g->bytes + g->lit_at, g->lit_len))
		return false;
	return match_bytes(g->tok, g->nt, NULL, path, NULL);
}

bool handoff_glob_match(const char *pattern, const char *path)
{
	struct handoff_glob g;
	handoff_glob_prepare(pattern, &g);
	return handoff_glob_match_prepared(&g, path, strlen(path));
}

bool handoff_glob_prefix(const char *pattern, const char *prefix)
{
	struct handoff_glob g;
	handoff_glob_prepare(pattern, &g);
	bool alive = false;
	if (!g.too_long)
		/* Every file glob token can consume some bytes and reach
		 * the next one, so a live state always has a continuation
		 * that matches. */
		(void)match_bytes(g.tok, g.nt, NULL, prefix, &alive);
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

/* ---- git's repository shape (handoff.h) ---- */

const char *const handoff_git_names[HANDOFF_GIT_NAMES] = {
	"HEAD", "objects", "refs", "config", "config.worktree", "hooks", "commondir",
};

unsigned handoff_git_name_bit(const char *name)
{
	for (unsigned i = 0; i < HANDOFF_GIT_NAMES; i++)
		if (strcmp(name, handoff_git_names[i]) == 0)
			return 1u << i;
	return 0;
}

unsigned handoff_git_entry_bit(const char *name, bool is_dir)
{
	const unsigned files = HANDOFF_GIT_HEAD | HANDOFF_GIT_CONFIG | HANDOFF_GIT_CONFIG_WT | HANDOFF_GIT_COMMONDIR;
	unsigned b = handoff_git_name_bit(name);
	return is_dir && (b & files) ? 0 : b;
}

const char *handoff_git_shape(unsigned have, unsigned add, bool admin)
{
	const unsigned control = HANDOFF_GIT_CONFIG | HANDOFF_GIT_CONFIG_WT | HANDOFF_GIT_HOOKS | HANDOFF_GIT_COMMONDIR;
	if (!add)
		return NULL; /* a name of no meaning to git changes nothing */
	if (admin)
		/* git worktree add writes HEAD, commondir, gitdir, index and
		 * refs here; with config, hooks or objects of its own the
		 * directory would stand as a repository once its commondir
		 * (an existing file, rewritten in place) stops leading away. */
		return add & (HANDOFF_GIT_CONFIG | HANDOFF_GIT_HOOKS | HANDOFF_GIT_OBJECTS)
			       ? "(config, hooks or objects in a worktree's administrative directory)"
			       : NULL;
	unsigned s = have | add;
	bool repo = (s & HANDOFF_GIT_HEAD) || ((s & HANDOFF_GIT_OBJECTS) && (s & HANDOFF_GIT_REFS));
	return repo && (s & control) ? "(a git repository with config, hooks or a commondir of its own)" : NULL;
}

bool handoff_git_repository(unsigned have)
{
	return ((have & HANDOFF_GIT_HEAD) && (have & HANDOFF_GIT_COMMONDIR)) ||
	       ((have & HANDOFF_GIT_OBJECTS) && (have & HANDOFF_GIT_REFS));
}

bool handoff_git_admin_dir(const char *rel)
{
	return handoff_glob_match("**/.git/worktrees/*", rel);
}

/* ---- names through links (handoff.h) ---- */

/* At most this many names are tried for one path: links to the top or
 * in a cycle give endless ones (a -> ., a/a/a/...). */
#define ALIAS_MAX 64
#define ALIAS_PATH_MAX 4096

bool handoff_path_resolve(const char *dir, const char *target, char *out, size_t len)
{
	char tmp[ALIAS_PATH_MAX];
	int m = *dir ? snprintf(tmp, sizeof(tmp), "%s/%s", dir, target) : snprintf(tmp, sizeof(tmp), "%s", target);
	if (m < 0 || (size_t)m >= sizeof(tmp) || (size_t)m >= len)
		return false;
	size_t o = 0;
	for (const char *p = tmp; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (!o)
				return false;
			while (o && out[o - 1] != '/')
				o--;
			if (o)
				o--; /* the slash */
		} else if (n && !(n == 1 && p[0] == '.')) {
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	out[o] = '\0';
	return true;
}

int handoff_links_add(struct handoff_links *l, const char *rel, const char *target)
{
	char dir[ALIAS_PATH_MAX], norm[ALIAS_PATH_MAX];
	if (target[0] == '/' || strlen(rel) >= sizeof(dir))
		return 0;
	snprintf(dir, sizeof(dir), "%s", rel);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	if (!handoff_path_resolve(dir, target, norm, sizeof(norm)))
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *v = realloc(l->v, cap * sizeof(*l->v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	char *p = strdup(rel), *t = strdup(norm);
	if (!p || !t) {
		free(p);
		free(t);
		return -ENOMEM;
	}
	l->v[l->n].path = p;
	l->v[l->n].target = t;
	l->n++;
	return 0;
}

void handoff_links_free(struct handoff_links *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].target);
	}
	free(l->v);
	*l = (struct handoff_links){ 0 };
}

/* A rule a path beneath a link at name would match past the rule's own
 * leading "**" + "/": .vscode (.vscode/ and "**"), .github
 * (.github/workflows/...), sub/.git (.git/hooks/...). The link makes its
 * target that directory. (A rule only the leading "**" + "/" reaches
 * through, as for .envrc, protects the target's own names in their own
 * right.) */
static const struct handoff_rule *match_dir_head(const char *name)
{
	char prefix[ALIAS_PATH_MAX + 1];
	for (const struct handoff_rule *r = handoff_rules; r->pattern; r++) {
		bool any_depth = strncmp(r->pattern, "**/", 3) == 0;
		const char *anchored = any_depth ? r->pattern + 3 : r->pattern;
		for (const char *suffix = name; suffix;) {
			int n = snprintf(prefix, sizeof(prefix), "%s/", suffix);
			if (n > 0 && (size_t)n < sizeof(prefix) && handoff_glob_prefix(anchored, prefix))
				return r;
			if (!any_depth)
				break;
			suffix = strchr(suffix, '/');
			if (suffix)
				suffix++;
		}
	}
	return NULL;
}

const struct handoff_rule *handoff_match_aliases(const struct handoff_links *l, const char *rel, bool is_link,
						 char *via, size_t vlen)
{
	static char names[ALIAS_MAX][ALIAS_PATH_MAX]; /* WARNING: not reentrant; the walks are single-threaded */
	size_t n = 0;
	if (vlen)
		via[0] = '\0';
	if (strlen(rel) >= ALIAS_PATH_MAX)
		return handoff_match(rel);
	snprintf(names[n++], ALIAS_PATH_MAX, "%s", rel);
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i];
		const struct handoff_rule *r = handoff_match(name);
		if (!r && is_link)
			r = match_dir_head(name);
		if (r) {
			if (i && vlen)
				snprintf(via, vlen, "%s", name);
			return r;
		}
		/* Every link whose target is name or a directory above it
		 * gives name another name: the link's path and the rest. */
		for (size_t k = 0; l && k < l->n && n < ALIAS_MAX; k++) {
			const char *t = l->v[k].target;
			size_t tl = strlen(t);
			const char *rest;
			if (tl == 0)
				rest = name; /* a link to the top */
			else if (strncmp(name, t, tl) == 0 && (name[tl] == '\0' || name[tl] == '/'))
				rest = name + tl + (name[tl] == '/');
			else
				continue;
			char cand[ALIAS_PATH_MAX];
			int m = *rest ? snprintf(cand, sizeof(cand), "%s/%s", l->v[k].path, rest)
				      : snprintf(cand, sizeof(cand), "%s", l->v[k].path);
			if (m < 0 || (size_t)m >= sizeof(cand))
				continue;
			bool seen = false;
			for (size_t j = 0; j < n && !seen; j++)
				seen = strcmp(names[j], cand) == 0;
			if (!seen)
				memcpy(names[n++], cand, (size_t)m + 1);
		}
	}
	return NULL;
}
