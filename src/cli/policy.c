/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "policy/layer.h"
#include "util/cleanup.h"
#include "sandbox/sandbox.h"

static const char policy_usage[] =
	"usage: airlock policy check [--enterprise FILE|DIR] [--strict] FILE\n"
	"       airlock policy explain [--enterprise FILE|DIR] FILE [--request 'METHOD URL' | --path P\n"
	"                              [--access read|write|exec] | --exec P | --tool SERVER.TOOL]\n"
	"       airlock policy default\n"
	"       airlock policy suggest LOG [--policy [FILE]]\n"
	"       airlock policy import --from srt|codex|mxc|openshell [--narrow] FILE\n"
	"       airlock policy export --to srt|mxc [--accept-wider] FILE\n"
	"       airlock policy diff OLD NEW [--json]\n"
	"\n"
	"check    validate FILE and print the effective policy (defaults filled in,\n"
	"         paths resolved) with the file:line each value came from.\n"
	"         Exit 0 when valid, 2 with a file:line:column message when not.\n"
	"         The enterprise policy (/etc/airlock/enterprise.yaml, enterprise.d/,\n"
	"         --enterprise) narrows it; each cut is a warning (exit 2 when the\n"
	"         enterprise says on_excess: refuse). Lint warnings (rules that never\n"
	"         match, shadowed rules, credentials on hosts open on every path,\n"
	"         writable hand-off paths, observe mode) name file:line; with\n"
	"         --strict they make the exit status 1.\n"
	"explain  print the effective policy with the layer and file:line of each\n"
	"         rule, or answer one question (allow: exit 0, deny: exit 1) with the\n"
	"         deciding rule.\n"
	"default  print the built-in policy used when 'airlock run' has no --policy.\n"
	"suggest  read the denials of a signed decision log (sandbox.mode: learn, or\n"
	"         --trace-denials, with --audit DIR) and print the smallest policy\n"
	"         additions that allow them, as a YAML fragment; with --policy FILE,\n"
	"         FILE with them merged in (--policy alone: the policy file the log\n"
	"         names). Refuses a log that fails verification (exit 3).\n"
	"diff     decide whether NEW allows anything OLD does not; one line per\n"
	"         widening with a witness. Exit 0 no wider, 1 wider, 2 on error.\n"
	"import   convert another runtime's settings into an airlock policy\n"
	"export   convert a policy into srt or MXC settings (see import --help)\n";

int cli_policy(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(policy_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? SANDBOX_EXIT_USAGE : 0;
	}
	const char *file = NULL;
	if (!strcmp(argv[1], "import") || !strcmp(argv[1], "export"))
		return !strcmp(argv[1], "import") ? cli_policy_import(argc - 1, argv + 1) : cli_policy_export(argc - 1, argv + 1);
	if (!strcmp(argv[1], "suggest"))
		return cli_audit_exec("suggest", argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return cli_policy_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "explain"))
		return cli_policy_explain(argc - 1, argv + 1);
	const char *enterprise = NULL;
	bool strict = false, check = false;
	if (!strcmp(argv[1], "check")) {
		check = true;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--strict"))
				strict = true;
			else if (!strcmp(argv[i], "--enterprise") && i + 1 < argc)
				enterprise = argv[++i];
			else if (argv[i][0] != '-' && !file)
				file = argv[i];
			else
				file = NULL, i = argc; /* unknown option or a second file */
		}
		if (!file) {
			fputs(policy_usage, stderr);
			return SANDBOX_EXIT_USAGE;
		}
	} else if (strcmp(argv[1], "default") != 0) {
		fprintf(stderr, "airlock policy: unknown subcommand '%s'\n\n%s", argv[1], policy_usage);
		return SANDBOX_EXIT_USAGE;
	}
	struct error err = { 0 };
	_cleanup_policy_ struct policy *pol = NULL;
	_cleanup_(policy_layer_report_free) struct policy_layer_report rep = { 0 };
	if ((check ? cli_load_layered(file, enterprise, &pol, &rep, &err) : cli_load_policy(file, &pol, &err)) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	policy_print(pol, stdout);
	if (pol->sandbox.mode == POLICY_MODE_OBSERVE)
		fprintf(stderr, POLICY_OBSERVE_WARNING "\n");
	if (!check)
		return 0;
	fflush(stdout);
	bool refused = cli_layer_report(&rep, stderr);
	size_t warnings = cli_policy_lint(pol, stderr);
	if (refused)
		return SANDBOX_EXIT_USAGE;
	return strict && (warnings || rep.n_msgs) ? 1 : 0;
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
