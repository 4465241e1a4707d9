/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Looking inside hand-off files for the entries that make a host tool run
 * a command. Line based and pure: the input is whatever the agent wrote,
 * so nothing here allocates, recurses or trusts a length.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "handoff/handoff.h"

struct sink {
	struct handoff_finding *out;
	size_t n, max;
};

static void add(struct sink *k, unsigned line, const char *fmt, ...) PRINTF_LIKE(3, 4);
static void add(struct sink *k, unsigned line, const char *fmt, ...)
{
	if (k->n >= k->max)
		return;
	struct handoff_finding *f = &k->out[k->n++];
	va_list ap;
	f->line = line;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
}

static const char *base_name(const char *rel)
{
	const char *s = strrchr(rel, '/');
	return s ? s + 1 : rel;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Copy one line (without its newline) into buf, bounded, with control
 * bytes shown as '?' so a finding never carries an escape sequence to the
 * terminal that prints it. */
static void take_line(const char *p, size_t n, char *buf, size_t cap)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 1 < cap; i++)
		buf[j++] = p[i] == '\t' ? ' ' : (unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i];
	buf[j] = '\0';
}

/* The next line of data[*pos..len) into buf (as take_line), advancing
 * *pos past it and counting it in *line. false at the end. */
static bool next_line(const char *data, size_t len, size_t *pos, unsigned *line, char *buf, size_t cap)
{
	if (*pos >= len)
		return false;
	size_t e = *pos;
	while (e < len && data[e] != '\n')
		e++;
	take_line(data + *pos, e - *pos, buf, cap);
	(*line)++;
	*pos = e + 1;
	return true;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* ---- git config ---- */

/* Keys (section.key, or section.*.key for a subsection of any name) whose
 * value git runs, or which move git's work somewhere else. */
static const struct {
	const char *key;
	const char *why;
} git_keys[] = {
	{ "core.hookspath", "points git's hooks at another directory" },
	{ "core.fsmonitor", "runs a command on every git status" },
	{ "core.sshcommand", "runs a command for every ssh fetch or push" },
	{ "core.pager", "runs a command for every paged output" },
	{ "core.editor", "runs a command on commit and rebase" },
	{ "core.askpass", "runs a command to ask for credentials" },
	{ "core.gitproxy", "runs a command for git:// connections" },
	{ "core.alternaterefscommand", "runs a command on fetch" },
	{ "core.worktree", "moves the work tree outside the repository" },
	{ "sequence.editor", "runs a command on interactive rebase" },
	{ "diff.external", "runs a command for every diff" },
	{ "diff.*.command", "runs a command for diffs of some paths" },
	{ "diff.*.textconv", "runs a command for diffs of some paths" },
	{ "filter.*.clean", "runs a command on git add and status" },
	{ "filter.*.smudge", "runs a command on checkout" },
	{ "filter.*.process", "runs a long-lived command on add and checkout" },
	{ "merge.*.driver", "runs a command on merges" },
	{ "credential.helper", "runs a command that receives credentials" },
	{ "credential.*.helper", "runs a command that receives credentials" },
	{ "include.path", "reads more config from another file" },
	{ "includeif.*.path", "reads more config from another file" },
	{ "remote.*.uploadpack", "runs a command on fetch" },
	{ "remote.*.receivepack", "runs a command on push" },
	{ "uploadpack.packobjectshook", "runs a command on fetch" },
	{ "gpg.program", "runs a command on signed commits and tags" },
	{ "gpg.*.program", "runs a command on signed commits and tags" },
	{ "protocol.allow", "allows transports such as ext::, which run commands" },
	{ "protocol.ext.allow", "allows the ext:: transport, which runs commands" },
	{ "interactive.difffilter", "runs a command on git add -p" },
	{ "pager.*", "runs a command as the pager of a git command" },
	{ "difftool.*.cmd", "runs a command on git difftool" },
	{ "mergetool.*.cmd", "runs a command on git mergetool" },
	{ "browser.*.cmd", "runs a command on git help --web" },
	{ "man.*.cmd", "runs a command on git help" },
	{ "sendemail.smtpserver", "may name a command git send-email runs" },
};

/* key is "section.sub.name" or "section.name", lower-cased except sub. */
static const char *git_key_why(const char *section, const char *sub, const char *name)
{
	for (size_t i = 0; i < sizeof(git_keys) / sizeof(git_keys[0]); i++) {
		const char *k = git_keys[i].key;
		const char *dot = strchr(k, '.');
		size_t slen = (size_t)(dot - k);
		if (strlen(section) != slen || strncasecmp(section, k, slen) != 0)
			continue;
		const char *rest = dot + 1;
		if (!strncmp(rest, "*.", 2)) {
			if (sub && !strcasecmp(name, rest + 2))
				return git_keys[i].why;
		} else if (!strcmp(rest, "*")) {
			if (!sub)
				return git_keys[i].why;
		} else if (!sub && !strcasecmp(name, rest)) {
			return git_keys[i].why;
		}
	}
	return NULL;
}

static void inspect_git_config(const char *data, size_t len, struct sink *k)
{
	char section[64] = "", sub[128] = "";
	bool has_sub = false;
	unsigned line = 0;

	char buf[1024];
	for (size_t pos = 0; next_line(data, len, &pos, &line, buf, sizeof(buf));) {
		char *s = trim(buf);
		if (*s == '#' || *s == ';' || !*s)
			continue;
		if (*s == '[') {
			/* [section], [section "sub"], or the old [section.sub]. */
			char *close = strchr(s, ']');
			if (!close)
				continue;
			*close = '\0';
			s++;
			char *q = strchr(s, '"');
			has_sub = false;
			if (q) {
				*q = '\0';
				char *q2 = strrchr(q + 1, '"');
				if (q2)
					*q2 = '\0';
				snprintf(sub, sizeof(sub), "%s", q + 1);
				has_sub = true;
			} else if ((q = strchr(s, '.'))) {
				*q = '\0';
				snprintf(sub, sizeof(sub), "%s", q + 1);
				has_sub = true;
			}
			snprintf(section, sizeof(section), "%s", trim(s));
			/* A key may follow on the same line: "[core] fsmonitor = x". */
			s = trim(close + 1);
			if (!*s)
				continue;
		}
		char *eq = strchr(s, '=');
		char *name = s, *value = NULL;
		if (eq) {
			*eq = '\0';
			value = trim(eq + 1);
		}
		name = trim(name);
		/* A boolean "false" (or empty) turns these off, except for the
		 * keys whose value is a path or command where "false" is one. */
		if (value && (!strcasecmp(value, "false") || !*value))
			continue;
		const char *why = git_key_why(section, has_sub ? sub : NULL, name);
		if (!why && !strcasecmp(section, "alias") && value && value[0] == '!')
			why = "an alias that runs a shell command";
		if (why) {
			char key[256];
			snprintf(key, sizeof(key), "%s%s%s.%s", section, has_sub ? "." : "", has_sub ? sub : "",
				 name);
			add(k, line, "%s: %s", key, why);
		}
	}
}

/* ---- .gitattributes, info/attributes, .gitmodules ---- */

static void inspect_attributes(const char *data, size_t len, struct sink *k)
{
	unsigned line = 0;
	char buf[1024];
	for (size_t pos = 0; next_line(data, len, &pos, &line, buf, sizeof(buf));) {
		char *s = trim(buf);
		if (*s == '#')
			continue;
		static const char *const drivers[] = { "filter=", "diff=", "merge=" };
		for (size_t d = 0; d < 3; d++) {
			char *at = strstr(s, drivers[d]);
			/* "diff=" alone selects a built-in driver only for a few
			 * names, but a configured one runs a command: report all. */
			if (at && (at == s || isspace((unsigned char)at[-1])))
				add(k, line, "%s driver selected for some paths: runs whatever git config names for it",
				    drivers[d]);
		}
	}
}

static void inspect_gitmodules(const char *data, size_t len, struct sink *k)
{
	unsigned line = 0;
	char buf[1024];
	for (size_t pos = 0; next_line(data, len, &pos, &line, buf, sizeof(buf));) {
		char *s = trim(buf);
		char *eq = strchr(s, '=');
		if (!eq)
			continue;
		*eq = '\0';
		char *name = trim(s), *value = trim(eq + 1);
		if (!strcasecmp(name, "update") && value[0] == '!')
			add(k, line, "submodule update runs a command: %s", value);
		/* CVE-2018-17456: a URL or path starting with '-' became an
		 * option to the ssh or git it was passed to. */
		if ((!strcasecmp(name, "url") || !strcasecmp(name, "path")) && value[0] == '-')
			add(k, line, "submodule %s starts with '-' and can be taken for an option", name);
		if (!strcasecmp(name, "url") && !strncasecmp(value, "ext::", 5))
			add(k, line, "submodule url uses the ext:: transport, which runs a command");
	}
}

/* ---- JSON-ish settings: tasks, editor and agent settings ---- */

/* A key whose string value a tool runs or loads as a program. */
static bool command_key(const char *key, size_t n)
{
	static const char *const suffixes[] = { "command", "Command", "path", "Path", "executable",
						"Executable", "interpreter", "Interpreter", "shell", "Shell",
						"runtime", "Runtime", "program", "Program", "args" };
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t m = strlen(suffixes[i]);
		if (n >= m && !memcmp(key + n - m, suffixes[i], m))
			return true;
	}
	return false;
}

static void inspect_settings(const char *data, size_t len, bool tasks, struct sink *k)
{
	unsigned line = 0;
	char buf[1024];
	for (size_t pos = 0; next_line(data, len, &pos, &line, buf, sizeof(buf));) {
		char *s = trim(buf);
		if (tasks && strstr(s, "\"runOn\"") && strstr(s, "folderOpen"))
			add(k, line, "a task that runs when the folder is opened");
		/* "key": — the last quoted name before a colon. */
		if (*s != '"')
			continue;
		char *q = strchr(s + 1, '"');
		if (!q || !strchr(q, ':'))
			continue;
		size_t n = (size_t)(q - (s + 1));
		if (command_key(s + 1, n)) {
			*q = '\0';
			add(k, line, "\"%s\" names a program a tool runs", s + 1);
		}
	}
}

static void inspect_lines_starting(const char *data, size_t len, const char *const *prefixes, size_t np,
				   const char *why, struct sink *k)
{
	unsigned line = 0;
	char buf[1024];
	for (size_t pos = 0; next_line(data, len, &pos, &line, buf, sizeof(buf));) {
		char *s = trim(buf);
		for (size_t p = 0; p < np; p++)
			if (!strncmp(s, prefixes[p], strlen(prefixes[p]))) {
				add(k, line, "%s: %s", prefixes[p], why);
				break;
			}
	}
}

/* INI and TOML alike: each "key = value" (or "key: value") line whose key
 * is one of keys (any key when keys is NULL), inside [section] when
 * section is not NULL (a section header's first word, case-insensitive;
 * TOML's dotted and quoted headers are matched by their first word). */
static void inspect_keys(const char *data, size_t len, const char *section, const char *const *keys, size_t nk,
			 const char *why, struct sink *k)
{
	unsigned line = 0;
	char buf[1024];
	bool in = section == NULL;
	for (size_t pos = 0; next_line(data, len, &pos, &line, buf, sizeof(buf));) {
		char *s = trim(buf);
		if (*s == '[') {
			if (section) {
				s++;
				while (*s == '[' || *s == '"' || *s == ' ')
					s++;
				size_t n = strlen(section);
				in = !strncasecmp(s, section, n) && (s[n] == ']' || s[n] == '.' || s[n] == '"' ||
								     s[n] == ' ' || s[n] == '\0');
			}
			continue;
		}
		if (!in || !*s || *s == '#' || *s == ';')
			continue;
		size_t kl = strcspn(s, "=: \t");
		char *rest = s + kl;
		while (*rest == ' ' || *rest == '\t')
			rest++;
		if (!kl || (*rest != '=' && *rest != ':'))
			continue;
		bool hit = keys == NULL;
		for (size_t i = 0; !hit && i < nk; i++)
			hit = strlen(keys[i]) == kl && !strncasecmp(s, keys[i], kl);
		if (!hit)
			continue;
		s[kl] = '\0';
		add(k, line, "%s: %s", s, why);
	}
}

/* The target of a pointer file (a gitdir, a commondir, an alternate, a
 * Mercurial sharedpath) at rel, relative to the scanned directory's top,
 * into out: false when it leaves the directory. root: the directory's
 * absolute path (an absolute target inside it is taken as relative), or
 * NULL. */
static bool pointer_target(const char *root, const char *rel, const char *text, char *out, size_t len)
{
	char dir[4096];
	if (text[0] == '/') {
		size_t n = root ? strlen(root) : 0;
		if (!n || strncmp(text, root, n) != 0 || (text[n] != '/' && text[n] != '\0'))
			return false;
		return handoff_path_resolve("", text + n + (text[n] == '/'), out, len);
	}
	snprintf(dir, sizeof(dir), "%s", rel);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	return handoff_path_resolve(dir, text, out, len);
}

/* The first line of data, trimmed, into buf. */
static char *first_line(const char *data, size_t len, char *buf, size_t cap)
{
	size_t e = 0;
	while (e < len && data[e] != '\n')
		e++;
	take_line(data, e, buf, cap);
	return trim(buf);
}

static void inspect_pointer(const char *root, const char *rel, const char *base, const char *data, size_t len,
			    struct sink *k)
{
	char buf[1024], to[4096];
	if (!strcmp(base, ".git")) {
		/* A gitdir pointer (worktrees, submodules): "gitdir: PATH".
		 * Git makes them lead to a worktree's administrative
		 * directory or a submodule's repository; anywhere else is a
		 * repository git takes as this one, with its hooks and
		 * config. */
		char *s = first_line(data, len, buf, sizeof(buf));
		if (strncmp(s, "gitdir:", 7) != 0)
			return;
		s = trim(s + 7);
		if (!pointer_target(root, rel, s, to, sizeof(to)))
			add(k, 1, "points git at the repository %s, outside the directory: its hooks and config apply here", s);
		else if (!handoff_glob_match("**/.git/worktrees/*", to) && !handoff_glob_match("**/.git/modules/**", to) &&
			 !handoff_glob_match("**/.git", to))
			add(k, 1, "points git at %s, not a worktree's or a submodule's directory: its hooks and config apply here", s);
	} else if (!strcmp(base, "commondir")) {
		/* A worktree's commondir leads to the repository that holds
		 * its administrative directory (git writes "../.."); any
		 * other, and any commondir of a main repository, makes git
		 * take config and hooks from there. */
		char *s = first_line(data, len, buf, sizeof(buf));
		char own[4096];
		snprintf(own, sizeof(own), "%s", rel);
		for (int up = 0; up < 3; up++) {
			char *slash = strrchr(own, '/');
			if (slash)
				*slash = '\0';
			else
				own[0] = '\0';
		}
		bool worktree = handoff_glob_match("**/.git/worktrees/*/commondir", rel);
		if (!pointer_target(root, rel, s, to, sizeof(to)))
			add(k, 1, "commondir leads git to %s, outside the directory: its config and hooks apply here", s);
		else if (!worktree || strcmp(to, own) != 0)
			add(k, 1, "commondir leads git to %s: its config and hooks apply here", *s ? s : "(empty)");
	} else if (!strcmp(base, "alternates")) {
		unsigned line = 0;
		for (size_t pos = 0; next_line(data, len, &pos, &line, buf, sizeof(buf));) {
			char *s = trim(buf);
			if (*s && *s != '#')
				add(k, line, "git reads objects from %s", s);
		}
	} else if (!strcmp(base, "sharedpath")) {
		char *s = first_line(data, len, buf, sizeof(buf));
		add(k, 1, "Mercurial uses the repository at %s (its store, and its hgrc with share-safe)", s);
	}
}

size_t handoff_inspect(const char *rel, const char *data, size_t len, struct handoff_finding *out, size_t max)
{
	return handoff_inspect_in(NULL, rel, data, len, out, max);
}

size_t handoff_inspect_in(const char *root, const char *rel, const char *data, size_t len, struct handoff_finding *out,
			  size_t max)
{
	struct sink k = { .out = out, .max = max };
	const char *base = base_name(rel);

	if (!strcmp(base, ".git") || !strcmp(base, "commondir") ||
	    (!strcmp(base, "alternates") && ends_with(rel, "objects/info/alternates")) ||
	    (!strcmp(base, "sharedpath") && ends_with(rel, ".hg/sharedpath"))) {
		inspect_pointer(root, rel, base, data, len, &k);
	} else if ((!strcmp(base, "hgrc") || !strcmp(base, "hgrc-not-shared")) && (strstr(rel, ".hg/") == rel || strstr(rel, "/.hg/"))) {
		inspect_keys(data, len, "hooks", NULL, 0, "a Mercurial hook runs this command", &k);
		inspect_keys(data, len, "extensions", NULL, 0, "Mercurial loads this extension", &k);
		static const char *const ui[] = { "ssh", "editor", "merge" };
		inspect_keys(data, len, "ui", ui, 3, "Mercurial runs this program", &k);
		static const char *const inc[] = { "%include" };
		inspect_lines_starting(data, len, inc, 1, "Mercurial reads config from another file", &k);
	} else if (!strcmp(base, "config") && (strstr(rel, ".cargo/") == rel || strstr(rel, "/.cargo/"))) {
		goto cargo;
	} else if (!strcmp(base, "config.toml") && (strstr(rel, ".cargo/") == rel || strstr(rel, "/.cargo/"))) {
	cargo:;
		static const char *const keys[] = { "runner", "rustc-wrapper", "rustc-workspace-wrapper", "rustc",
						    "rustdoc", "linker", "RUSTC_WRAPPER", "RUSTC", "RUSTC_LINKER" };
		inspect_keys(data, len, NULL, keys, sizeof(keys) / sizeof(keys[0]), "cargo runs this program", &k);
	} else if (!strcmp(base, "rust-toolchain.toml") || !strcmp(base, "rust-toolchain")) {
		static const char *const keys[] = { "path" };
		inspect_keys(data, len, NULL, keys, 1, "rustup runs the toolchain at this path", &k);
	} else if (!strcmp(base, ".yarnrc")) {
		static const char *const p[] = { "yarn-path", "\"yarn-path\"" };
		inspect_lines_starting(data, len, p, 2, "yarn runs this script instead of itself", &k);
	} else if (!strcmp(base, ".pylintrc") || !strcmp(base, "pylintrc")) {
		static const char *const keys[] = { "init-hook" };
		inspect_keys(data, len, NULL, keys, 1, "pylint runs this Python code", &k);
	} else if (!strcmp(base, ".bazelrc")) {
		static const char *const p[] = { "build --run_under", "run --run_under", "test --run_under", "import",
						 "try-import" };
		inspect_lines_starting(data, len, p, 5, "bazel runs or reads what it names", &k);
	} else if (!strcmp(base, "config") || !strcmp(base, "config.worktree")) {
		/* Only git's own config files: .git/config, a worktree's or a
		 * submodule's. */
		if (strstr(rel, ".git/") == rel || strstr(rel, "/.git/"))
			inspect_git_config(data, len, &k);
	} else if (!strcmp(base, ".gitattributes") || ends_with(rel, ".git/info/attributes")) {
		inspect_attributes(data, len, &k);
	} else if (!strcmp(base, ".gitmodules")) {
		inspect_gitmodules(data, len, &k);
	} else if (!strcmp(base, "tasks.json")) {
		inspect_settings(data, len, true, &k);
	} else if (ends_with(base, ".code-workspace")) {
		inspect_settings(data, len, true, &k);
	} else if (ends_with(base, ".json")) {
		inspect_settings(data, len, false, &k);
	} else if (ends_with(base, ".pth")) {
		static const char *const p[] = { "import ", "import\t" };
		inspect_lines_starting(data, len, p, 2, "Python executes this line at every start", &k);
	} else if (!strcmp(base, ".yarnrc.yml")) {
		static const char *const p[] = { "yarnPath" };
		inspect_lines_starting(data, len, p, 1, "yarn runs this script instead of itself", &k);
	} else if (!strcmp(base, ".npmrc")) {
		static const char *const p[] = { "script-shell", "git", "node-options", "onload-script" };
		inspect_lines_starting(data, len, p, 4, "npm runs or loads what it names", &k);
	}
	return k.n;
}
