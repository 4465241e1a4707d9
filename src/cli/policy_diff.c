/* SPDX-License-Identifier: Apache-2.0 */
/* airlock policy diff OLD NEW [--json]: does NEW allow anything OLD does not? */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "analysis/diff.h"

static const char diff_usage[] =
	"usage: airlock policy diff OLD NEW [--json]\n"
	"\n"
	"Decide whether NEW allows anything OLD does not, in every section, and\n"
	"print one line per widening with the NEW setting (file:line) and a\n"
	"witness: a request, path or use that NEW allows and OLD denies.\n"
	"--json prints the widenings as a JSON array instead.\n"
	"Exit 0 when NEW is no wider than OLD, 1 when it is, 2 on an error.\n";

int cli_policy_diff(int argc, char **argv)
{
	const char *files[2] = { NULL, NULL };
	bool json = false;
	size_t nf = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(diff_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--json")) {
			json = true;
			continue;
		}
		if (nf == 2 || (argv[i][0] == '-' && argv[i][1] != '\0')) {
			fputs(diff_usage, stderr);
			return 2;
		}
		files[nf++] = argv[i];
	}
	if (nf != 2) {
		fputs(diff_usage, stderr);
		return 2;
	}
	struct error err = { 0 };
	_cleanup_policy_ struct policy *old = NULL;
	_cleanup_policy_ struct policy *new_ = NULL;
	if (cli_load_policy(files[0], &old, &err) < 0 || cli_load_policy(files[1], &new_, &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		return 2;
	}
	struct policy_diff d = { 0 };
	if (policy_diff(old, new_, &d, &err) < 0) {
		fprintf(stderr, "airlock: policy diff: %s\n", err.msg);
		policy_diff_free(&d);
		return 2;
	}
	if (json)
		policy_diff_print_json(&d, stdout);
	else
		policy_diff_print(&d, stdout);
	int rc = d.n ? 1 : 0;
	policy_diff_free(&d);
	return rc;
}
