/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "sandbox/sandbox.h"

static const char policy_usage[] =
	"usage: airlock policy check FILE\n"
	"       airlock policy default\n"
	"       airlock policy suggest LOG [--policy [FILE]]\n"
	"       airlock policy diff OLD NEW [--json]\n"
	"\n"
	"check    validate FILE and print the effective policy (defaults filled in,\n"
	"         paths resolved) with the file:line each value came from.\n"
	"         Exit 0 when valid, 2 with a file:line:column message when not.\n"
	"default  print the built-in policy used when 'airlock run' has no --policy.\n"
	"suggest  read the denials of a signed decision log (sandbox.mode: learn, or\n"
	"         --trace-denials, with --audit DIR) and print the smallest policy\n"
	"         additions that allow them, as a YAML fragment; with --policy FILE,\n"
	"         FILE with them merged in (--policy alone: the policy file the log\n"
	"         names). Refuses a log that fails verification (exit 3).\n"
	"diff     decide whether NEW allows anything OLD does not; one line per\n"
	"         widening with a witness. Exit 0 no wider, 1 wider, 2 on error.\n";

int cli_policy(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(policy_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? SANDBOX_EXIT_USAGE : 0;
	}
	const char *file = NULL;
	if (!strcmp(argv[1], "suggest"))
		return cli_audit_exec("suggest", argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return cli_policy_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check")) {
		if (argc != 3) {
			fputs(policy_usage, stderr);
			return SANDBOX_EXIT_USAGE;
		}
		file = argv[2];
	} else if (strcmp(argv[1], "default") != 0) {
		fprintf(stderr, "airlock policy: unknown subcommand '%s'\n\n%s", argv[1], policy_usage);
		return SANDBOX_EXIT_USAGE;
	}
	struct error err = { 0 };
	_cleanup_policy_ struct policy *pol = NULL;
	if (cli_load_policy(file, &pol, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	policy_print(pol, stdout);
	if (pol->sandbox.mode == POLICY_MODE_OBSERVE)
		fprintf(stderr, POLICY_OBSERVE_WARNING "\n");
	return 0;
}

int cli_doctor(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fputs("usage: airlock doctor\n", argc > 1 && !strcmp(argv[1], "--help") ? stdout : stderr);
		return strcmp(argv[1], "--help") ? SANDBOX_EXIT_USAGE : 0;
	}
	return sandbox_doctor(stdout) ? 0 : 1;
}

int cli_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("airlock %s\n", AIRLOCK_VERSION);
	return 0;
}
