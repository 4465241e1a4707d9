/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "policy/layer.h"
#include "util/cleanup.h"
#include "sandbox/review_run.h"
#include "sandbox/sandbox.h"

static const char run_usage[] =
	"usage: airlock run [--policy FILE] [--enterprise FILE|DIR] [--trace-denials] [--audit DIR | --no-audit]\n"
	"                   [--] CMD [ARGS...]\n"
	"\n"
	"Run CMD in airlock's process boundary: new user, mount, pid, net, ipc, uts\n"
	"and cgroup namespaces; a fresh root of read-only system directories, the\n"
	"workspace read-write, private /tmp and home; no capabilities; Landlock;\n"
	"seccomp. Without --policy the built-in default policy applies (see\n"
	"'airlock policy default').\n"
	"\n"
	"  -p, --policy FILE    the policy file (YAML, version 1)\n"
	"  -e, --enterprise FILE|DIR\n"
	"                       an enterprise policy (a ceiling) narrowing the policy, in\n"
	"                       addition to /etc/airlock/enterprise.yaml and\n"
	"                       /etc/airlock/enterprise.d/*.yaml, which always apply\n"
	"  -t, --trace-denials  report, at exit, the operations the sandbox blocked\n"
	"  -a, --audit DIR      write the session's signed decision log in DIR\n"
	"                       (verify it with 'airlock audit verify'); without it\n"
	"                       the log goes to audit.dir, else to\n"
	"                       $XDG_STATE_HOME/airlock/audit (~/.local/state/...)\n"
	"  -A, --no-audit       no decision log for this run\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: CMD's own (128+N if killed by signal N); 2 for a bad command\n"
	"line or policy (CMD did not run); 125 if the sandbox could not be built.\n";

int cli_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "enterprise", required_argument, NULL, 'e' },
		{ "trace-denials", no_argument, NULL, 't' },
		{ "audit", required_argument, NULL, 'a' },
		{ "no-audit", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *policy_file = NULL, *audit_dir = NULL, *enterprise = NULL;
	bool trace = false, no_audit = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:e:ta:Ah", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_file = optarg;
			break;
		case 'e':
			enterprise = optarg;
			break;
		case 't':
			trace = true;
			break;
		case 'a':
			audit_dir = optarg;
			break;
		case 'A':
			no_audit = true;
			break;
		case 'h':
			fputs(run_usage, stdout);
			return 0;
		default:
			fputs(run_usage, stderr);
			return SANDBOX_EXIT_USAGE;
		}
	}
	if (audit_dir && no_audit) {
		fprintf(stderr, "airlock run: --audit DIR and --no-audit contradict each other\n\n%s", run_usage);
		return SANDBOX_EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "airlock run: no command given\n\n%s", run_usage);
		return SANDBOX_EXIT_USAGE;
	}

	struct error err = { 0 };
	_cleanup_policy_ struct policy *pol = NULL;
	_cleanup_(policy_layer_report_free) struct policy_layer_report rep = { 0 };
	if (cli_load_layered(policy_file, enterprise, &pol, &rep, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	/* The enterprise's cuts are said before anything runs; with
	 * on_excess: refuse nothing runs. */
	if (cli_layer_report(&rep, stderr))
		return SANDBOX_EXIT_USAGE;
	if (no_audit && rep.require_audit) {
		fprintf(stderr, "airlock: enterprise: --no-audit %s: the decision log is required (enterprise rule %s)\n",
			rep.refuse ? "refused" : "ignored", rep.audit_by ? rep.audit_by : "?");
		if (rep.refuse)
			return SANDBOX_EXIT_USAGE;
		no_audit = false;
	}
	/* A policy that cannot run as written is a usage error (exit 2), not
	 * a sandbox that failed to build; sandbox_run checks it as well. */
	if (cli_no_audit_contradicts(pol, no_audit))
		return SANDBOX_EXIT_USAGE;
	/* The log is on by default (auditlog_dir): the header is refused only
	 * where the log is turned off. */
	if (pol->identity.header && !audit_dir && (no_audit || !pol->audit.enabled)) {
		fprintf(stderr,
			"airlock: %s: identity.header: true needs the signed decision log, whose session key signs "
			"the header; it is turned off here (%s): drop that, or pass --audit DIR\n",
			pol->file, no_audit ? "--no-audit" : "audit.enabled: false");
		return SANDBOX_EXIT_USAGE;
	}
	if (review_run_check(pol, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_USAGE;
	}
	/* Hold mode gave way to direct: said once, since hand-off files are
	 * then refused where the tools expected them held. Observe mode says
	 * enough already. */
	const char *ws_why = NULL;
	if (review_run_mode(pol, &ws_why) == POLICY_WS_DIRECT && ws_why && pol->sandbox.mode != POLICY_MODE_OBSERVE)
		fprintf(stderr, "airlock: workspace_mode hold runs as direct here (%s): hand-off files are refused, not held\n",
			ws_why);
	struct sandbox_opts so = { .policy = pol, .argv = argv + optind, .trace_denials = trace,
				 .audit_dir = audit_dir, .no_audit = no_audit };
	int code = 0;
	if (sandbox_run(&so, &code, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return SANDBOX_EXIT_SETUP;
	}
	return code;
}
