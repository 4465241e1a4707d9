/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_TOOLCACHE_H
#define AIRLOCK_UTIL_TOOLCACHE_H

/* Where package managers and build tools keep caches and state of their
 * own in a home directory (npm's _cacache, pip's and go's build caches,
 * Cargo's registry, Maven's repository...). A tool in the sandbox finds
 * none in its private home and makes a fresh one: the host's copy is not
 * something it asked for. The trace does not record those misses as
 * hidden paths, and `policy suggest` never offers one: a shared cache is
 * a channel between runs (a poisoned package in it reaches the host's
 * next build). Configuration beside them (~/.npmrc, ~/.gradle/
 * gradle.properties, ~/.cargo/config.toml) is not listed: reading it is
 * a request for the host's settings. */

#include <stdbool.h>
#include <string.h>

/* Does path hold one of the n names ("/.npm") as whole components, the
 * name itself or anything in it, at any depth (HOME may be anywhere)? */
static inline bool home_names_match(const char *path, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		for (const char *p = strstr(path, names[i]); p; p = strstr(p + 1, names[i]))
			if (p[len] == '\0' || p[len] == '/')
				return true;
	}
	return false;
}

static inline bool toolcache_path(const char *path)
{
	static const char *const dirs[] = {
		"/.cache",	     "/.npm",		      "/.local/state",	       "/.node-gyp",
		"/.cargo/registry",  "/.cargo/git",	      "/.m2/repository",       "/.gradle/caches",
		"/.gradle/wrapper/dists", "/.pnpm-store",     "/.local/share/pnpm/store", "/.yarn/berry/cache",
		"/.bun/install/cache", "/go/pkg/mod",	      "/.nuget/packages",      "/.composer/cache",
	};
	return home_names_match(path, dirs, sizeof(dirs) / sizeof(dirs[0]));
}

#endif
