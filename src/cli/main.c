/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
	"usage: airlock COMMAND [ARGS]\n"
	"\n"
	"A containment runtime for AI agents.\n"
	"\n"
	"commands:\n"
	"  run [--policy FILE] [--trace-denials] [--audit DIR] -- CMD [ARGS...]\n"
	"                      run CMD in the sandbox the policy describes\n"
	"                      (without --policy: the built-in default policy)\n"
	"  audit verify LOG [--authority PUBKEY]\n"
	"                      check a session's signed decision log\n"
	"  handoff scan DIR [--since REF|--baseline FILE]\n"
	"                      list the files host tools would execute or trust,\n"
	"                      and what changed\n"
	"  review [--list] | review SESSION [--json]\n"
	"                      what a run in review mode holds, flagged first, with diffs\n"
	"  apply SESSION [--exclude GLOB]... [--accept PATH]...\n"
	"                      put a reviewed change in the workspace, all or nothing\n"
	"  discard SESSION     drop a review session\n"
	"  identity verify TOKEN [--authority PUBKEY] [--audience AUD] [--at EPOCH]\n"
	"                      check an Airlock-Identity header's token\n"
	"  conformance --runtime PREFIX [--profile baseline|strict] [--format table|json|junit]\n"
	"                      attack a runtime (airlock or any other) with the probe\n"
	"                      and report which requirements held\n"
	"  mcp run [--policy FILE] [--server NAME] -- CMD [ARGS...]\n"
	"                      a stdio MCP server command: CMD sandboxed, every message\n"
	"                      checked against the policy's mcp section\n"
	"  mcp pins list|diff|approve [TOOL...]\n"
	"                      pinned tool definitions, and changes awaiting approval\n"
	"  approve|deny [--socket PATH] TOKEN | --list\n"
	"                      decide a step_up MCP call a gateway holds\n"
	"  policy check FILE   validate a policy and print the effective policy\n"
	"  policy default      print the built-in default policy\n"
	"  policy suggest LOG [--policy [FILE]]\n"
	"                      the smallest policy additions that allow a log's denials\n"
	"  policy import --from srt|codex|mxc|openshell [--narrow] FILE\n"
	"                      convert another runtime's settings into a policy\n"
	"  policy export --to srt|mxc [--accept-wider] FILE\n"
	"                      convert a policy into srt or MXC settings\n"
	"  doctor              what this kernel supports, and what airlock refuses\n"
	"  version             print the version\n"
	"\n"
	"exit status of run: the command's own status (128+N if killed by signal N);\n"
	"2 for a bad command line or policy; 125 if the sandbox could not be built.\n"
	"Run 'airlock COMMAND --help' for more.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || !strcmp(verb, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(verb, "run"))
		return cli_run(argc - 1, argv + 1);
	if (!strcmp(verb, "audit"))
		return cli_audit(argc - 1, argv + 1);
	if (!strcmp(verb, "handoff"))
		return cli_handoff(argc - 1, argv + 1);
	if (!strcmp(verb, "review"))
		return cli_review(argc - 1, argv + 1);
	if (!strcmp(verb, "apply"))
		return cli_apply(argc - 1, argv + 1);
	if (!strcmp(verb, "discard"))
		return cli_discard(argc - 1, argv + 1);
	if (!strcmp(verb, "identity"))
		return cli_identity(argc - 1, argv + 1);
	if (!strcmp(verb, "conformance"))
		return cli_conformance(argc - 1, argv + 1);
	if (!strcmp(verb, "mcp"))
		return cli_mcp(argc - 1, argv + 1);
	if (!strcmp(verb, "approve") || !strcmp(verb, "deny"))
		return cli_mcp_decide(argc - 1, argv + 1);
	if (!strcmp(verb, "policy"))
		return cli_policy(argc - 1, argv + 1);
	if (!strcmp(verb, "doctor"))
		return cli_doctor(argc - 1, argv + 1);
	if (!strcmp(verb, "version") || !strcmp(verb, "--version"))
		return cli_version(argc - 1, argv + 1);
	fprintf(stderr, "airlock: unknown command '%s'\n\n%s", verb, usage);
	return 2;
}
