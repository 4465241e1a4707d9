/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock audit ...: the audit log's verifier lives in airlock-audit, the
 * only executable that links libcrypto; this verb hands over to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

int cli_audit(int argc, char **argv)
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
	if (argc < 2 || strcmp(argv[1], "write") == 0) {
		fprintf(stderr, "usage: airlock audit verify LOG [--authority PUBKEY]\n");
		return 2;
	}
	argv[0] = exe;
	execv(exe, argv);
	fprintf(stderr, "airlock: cannot run %s: %s\n", exe, strerror(errno));
	return 2;
}
