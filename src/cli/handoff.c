/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock handoff scan DIR [--since REF | --baseline FILE]: the files in a
 * directory that host tools would execute or trust, and what changed.
 * Usable after any agent run, under airlock or not.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "handoff/handoff.h"

static const char handoff_usage[] =
	"usage: airlock handoff scan DIR [--since REF | --baseline FILE] [--all-executables] [--json]\n"
	"       airlock handoff baseline DIR FILE\n"
	"\n"
	"scan lists the files in DIR that a tool on the host will execute or trust\n"
	"(git hooks and config, editor tasks, virtualenv interpreters, CI workflows,\n"
	"agent settings, ...), set-ID files and symlinks leaving DIR; '!' marks what\n"
	"needs review. With --baseline (a file written by 'handoff baseline') or\n"
	"--since REF (a git commit of DIR's repository) only what changed is listed,\n"
	"with new executables. Exit status: 0 nothing flagged, 1 something flagged,\n"
	"2 an error.\n";

int cli_handoff(int argc, char **argv)
{
	struct error err = { 0 };

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(handoff_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "baseline")) {
		if (argc != 4) {
			fputs(handoff_usage, stderr);
			return 2;
		}
		if (handoff_baseline_save(argv[2], argv[3], &err) < 0) {
			fprintf(stderr, "airlock handoff baseline: %s\n", err.msg);
			return 2;
		}
		return 0;
	}
	if (strcmp(argv[1], "scan") != 0) {
		fprintf(stderr, "airlock handoff: unknown subcommand '%s'\n\n%s", argv[1], handoff_usage);
		return 2;
	}
	const char *dir = NULL, *since = NULL, *base = NULL;
	struct handoff_scan_opts opts = { 0 };
	bool json = false;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--since") && i + 1 < argc) {
			since = argv[++i];
		} else if (!strcmp(argv[i], "--baseline") && i + 1 < argc) {
			base = argv[++i];
		} else if (!strcmp(argv[i], "--all-executables")) {
			opts.all_executables = true;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (argv[i][0] == '-' || dir) {
			fprintf(stderr, "airlock handoff scan: unexpected argument '%s'\n\n%s", argv[i], handoff_usage);
			return 2;
		} else {
			dir = argv[i];
		}
	}
	if (!dir || (since && base)) {
		fputs(handoff_usage, stderr);
		return 2;
	}
	struct handoff_baseline *b = NULL;
	if ((since && handoff_baseline_git(dir, since, &b, &err) < 0) ||
	    (base && handoff_baseline_load(base, &b, &err) < 0)) {
		fprintf(stderr, "airlock handoff scan: %s\n", err.msg);
		return 2;
	}
	opts.baseline = b;
	struct handoff_report rep = { 0 };
	int r = handoff_scan(dir, &opts, &rep, &err);
	handoff_baseline_free(b);
	if (r < 0) {
		handoff_report_free(&rep);
		fprintf(stderr, "airlock handoff scan: %s\n", err.msg);
		return 2;
	}
	handoff_report_print(&rep, json, stdout);
	size_t flagged = 0;
	for (size_t i = 0; i < rep.n; i++)
		flagged += rep.e[i].flagged;
	if (!json)
		fprintf(stderr, "airlock handoff scan: %zu listed, %zu flagged, %zu entries looked at\n", rep.n,
			flagged, rep.files_seen);
	handoff_report_free(&rep);
	return flagged ? 1 : 0;
}
