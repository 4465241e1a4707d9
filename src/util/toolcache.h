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

static inline bool toolcache_path(const char *path)
{
	static const char *const dirs[] = {
		"/.cache",	     "/.npm",		      "/.local/state",	       "/.node-gyp",
		"/.cargo/registry",  "/.cargo/git",	      "/.m2/repository",       "/.gradle/caches",
		"/.gradle/wrapper/dists", "/.pnpm-store",     "/.local/share/pnpm/store", "/.yarn/berry/cache",
		"/.bun/install/cache", "/go/pkg/mod",	      "/.nuget/packages",      "/.composer/cache",
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);
		/* the directory itself or anything in it, at any depth of
		 * a home (HOME may be anywhere) */
		for (const char *p = strstr(path, dirs[i]); p; p = strstr(p + 1, dirs[i]))
			if (p[n] == '\0' || p[n] == '/')
				return true;
	}
	return false;
}

#endif
