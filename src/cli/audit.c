/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock audit ...: the audit log's verifier lives in airlock-audit, the
 * only executable that links libcrypto; this verb hands over to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

int cli_audit_exec(const char *verb, int argc, char **argv)
{
	char self[PATH_MAX], exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "airlock: cannot find airlock's own executable: %s\n", strerror(errno));
		return 2;
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(exe, sizeof(exe), "%s/airlock-audit", self);
	/* argv[0] is the verb's own name (argv[0] of `airlock audit`, or
	 * "suggest" of `airlock policy suggest`): it becomes the
	 * executable's, and verb its first argument. */
	char **args = calloc((size_t)argc + 2, sizeof(char *));
	if (!args) {
		fprintf(stderr, "airlock: out of memory\n");
		return 2;
	}
	args[0] = exe;
	args[1] = (char *)verb;
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	execv(exe, args);
	fprintf(stderr, "airlock: cannot run %s: %s\n", exe, strerror(errno));
	free(args);
	return 2;
}

int cli_audit(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "write") == 0) {
		fprintf(stderr, "usage: airlock audit verify LOG [--authority PUBKEY]\n");
		return 2;
	}
	return cli_audit_exec(argv[1], argc - 1, argv + 1);
}
