/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_CREDSTORE_H
#define AIRLOCK_UTIL_CREDSTORE_H

/* Where credentials live in a home or on the host: keys, cloud and
 * registry tokens, password stores. A learn run records a program that
 * asked for one like any other hidden path, but `policy suggest` never
 * offers it: a prompt-injected probe for ~/.ssh/id_ed25519 during the
 * learn run would otherwise come back as a policy line granting it. A
 * credential reaches the agent through `credentials:` (the broker, which
 * shows it a placeholder), or by a line the author writes knowingly.
 * Some are configuration too (~/.npmrc, ~/.m2/settings.xml,
 * ~/.gradle/gradle.properties): they hold registry tokens often enough
 * to be listed. */

#include <stdbool.h>
#include <string.h>

#include "util/toolcache.h"

static inline bool credstore_path(const char *path)
{
	static const char *const names[] = {
		/* keys and agents */
		"/.ssh", "/.gnupg", "/.password-store", "/.local/share/keyrings", "/.pki",
		/* clouds and clusters */
		"/.aws", "/.azure", "/.config/gcloud", "/.kube", "/.oci", "/.config/doctl", "/.config/rclone",
		"/.s3cfg", "/.boto", "/.vault-token", "/.terraform.d/credentials.tfrc.json", "/.docker/config.json",
		/* forges and registries */
		"/.netrc", "/.git-credentials", "/.config/git/credentials", "/.config/gh", "/.config/hub",
		"/.npmrc", "/.yarnrc.yml", "/.pypirc", "/.config/pip/pip.conf", "/.cargo/credentials",
		"/.cargo/credentials.toml", "/.gem/credentials", "/.m2/settings.xml", "/.m2/settings-security.xml",
		"/.gradle/gradle.properties", "/.composer/auth.json", "/.config/composer/auth.json",
		/* databases */
		"/.pgpass", "/.my.cnf",
	};
	static const char *const host[] = { "/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_" };

	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		if (strncmp(path, host[i], strlen(host[i])) == 0)
			return true;
	return home_names_match(path, names, sizeof(names) / sizeof(names[0]));
}

#endif
