/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for what the hand-off scanner reads from an agent's
 * workspace: the content inspector, the glob matcher and the link escape
 * check.
 *
 * The first byte picks which hand-off file the rest is read as. Besides
 * crashes and sanitizer reports (the data is copied to a buffer of exactly
 * its size, so an over-read is caught) it checks:
 *  - at most HANDOFF_MAX_FINDINGS findings, each NUL-terminated within its
 *    buffer, with no control byte in its text and a line number no greater
 *    than the number of lines in the input;
 *  - the glob matcher, given a pattern and path cut from the input, agrees
 *    with itself on the same input (no hidden state) and matches every
 *    path against the pattern "**".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handoff/handoff.h"

static const char *const names[] = {
	".git/config", "sub/.git/config", ".gitattributes", ".git/info/attributes", ".gitmodules",
	".vscode/tasks.json", ".vscode/settings.json", "a.code-workspace", ".mcp.json",
	"lib/site-packages/x.pth", ".yarnrc.yml", ".npmrc", "sub/.git", "README.md",
	".git/commondir", ".git/worktrees/w/commondir", ".git/objects/info/alternates", ".hg/sharedpath",
	".hg/hgrc", ".cargo/config.toml", "rust-toolchain.toml", ".yarnrc", ".pylintrc", ".bazelrc",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *rel = names[data[0] % (sizeof(names) / sizeof(names[0]))];
	size_t len = size - 1;
	char *copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, len);

	struct handoff_finding f[HANDOFF_MAX_FINDINGS];
	size_t n = handoff_inspect(rel, copy, len, f, HANDOFF_MAX_FINDINGS);
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += copy[i] == '\n';
	if (n > HANDOFF_MAX_FINDINGS)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (!memchr(f[i].what, '\0', sizeof(f[i].what)) || f[i].line > lines)
			abort();
		for (const char *p = f[i].what; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				abort();
	}

	/* Pattern and path: the input split at its first NUL (or halved). */
	char *pat = calloc(1, len + 1), *path = calloc(1, len + 1);
	if (pat && path) {
		size_t cut = len / 2;
		const char *z = memchr(copy, '\0', len);
		if (z)
			cut = (size_t)(z - copy);
		memcpy(pat, copy, cut);
		if (cut < len)
			memcpy(path, copy + cut + (z ? 1 : 0), len - cut - (z ? 1 : 0));
		bool a = handoff_glob_match(pat, path), b = handoff_glob_match(pat, path);
		if (a != b || !handoff_glob_match("**", path))
			abort();
		/* A path that matches has every prefix still alive (the walk of
		 * protected paths skips a directory on a dead prefix). */
		if (a) {
			size_t pl = strlen(path);
			for (size_t k = 0; k <= pl; k++) {
				char saved = path[k];
				path[k] = '\0';
				bool alive = handoff_glob_prefix(pat, path);
				path[k] = saved;
				if (!alive)
					abort();
			}
		}
		(void)handoff_path_escapes(path, pat);
	}
	free(pat);
	free(path);
	free(copy);
	return 0;
}
