/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock identity verify TOKEN: the verifier of the signed identity
 * header lives in airlock-audit, the executable that links libcrypto
 * (airlock itself never loads it); this verb hands over to it.
 */
#include <stdio.h>
#include <string.h>

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
	/* argv[1] is "verify": airlock-audit identity-verify ARGS */
	return cli_audit_exec("identity-verify", argc - 1, argv + 1);
}
