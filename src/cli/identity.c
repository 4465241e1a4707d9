/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock identity verify TOKEN: the verifier of the signed identity
 * header lives in airlock-audit, the executable that links libcrypto
 * (airlock itself never loads it); this verb hands over to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const char usage[] =
	"usage: airlock identity verify TOKEN|- [--authority PUBKEY] [--audience AUD] [--at EPOCH]\n"
	"\n"
	"Check an Airlock-Identity header's token: the session certificate against\n"
	"the authority (PUBKEY, PEM or 64 hex digits; default: this machine's local\n"
	"authority), the token's signature by the certified session key, its\n"
	"validity at EPOCH (default: now) and, when given, its audience\n"
	"(scheme://host[:port]). '-' reads the token from standard input.\n"
	"Exit status: 0 valid, 1 invalid, 2 bad usage.\n";

int cli_identity(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 3 || strcmp(argv[1], "verify") != 0) {
		fputs(usage, stderr);
		return 2;
	}
	char self[PATH_MAX], exe[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "airlock: cannot find airlock's own executable: %s\n", strerror(errno));
		return 2;
	}
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(exe, sizeof(exe), "%s/airlock-audit", self);
	/* argv[0] "identity", argv[1] "verify": airlock-audit identity-verify ARGS */
	argv[0] = exe;
	argv[1] = "identity-verify";
	execv(exe, argv);
	fprintf(stderr, "airlock: cannot run %s: %s\n", exe, strerror(errno));
	return 2;
}
