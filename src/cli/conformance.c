/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock conformance --runtime PREFIX: the conformance suite against any
 * runtime's command prefix (src/conformance/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "conformance/conformance.h"

static const char conformance_usage[] =
	"usage: airlock conformance --runtime PREFIX [--profile baseline|strict]\n"
	"                           [--format table|json|junit] [--probe PATH] [--keep]\n"
	"                           [--timeout SECONDS]\n"
	"\n"
	"Runs the static probe through PREFIX (a command prefix run by /bin/sh in the\n"
	"suite's workspace, so with absolute paths: e.g.\n"
	"'airlock run --', 'bwrap ... --', 'firejail --quiet', 'runsc do') from a\n"
	"scratch workspace, and reports each requirement as held, FAILED or n/a, with\n"
	"the evidence. In PREFIX, {workspace}, {home} and {audit} stand for the\n"
	"workspace, the temporary HOME and a directory for the runtime's decision\n"
	"record (airlock: 'airlock run --audit {audit} --').\n"
	"Exit status: 0 every requirement of the profile held or was not applicable,\n"
	"1 one failed (or the runtime ran nothing), 2 usage or setup error.\n";

int cli_conformance(int argc, char **argv)
{
	struct conf_opts o = { .timeout_s = 300 };
	enum conf_format fmt = CONF_TABLE;
	struct error err = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(conformance_usage, stdout);
			return 0;
		} else if (!strcmp(a, "--keep")) {
			o.keep = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "airlock conformance: %s needs a value\n\n%s", a, conformance_usage);
			return 2;
		}
		i++;
		if (!strcmp(a, "--runtime")) {
			o.runtime = v;
		} else if (!strcmp(a, "--probe")) {
			o.probe = v;
		} else if (!strcmp(a, "--profile")) {
			if (strcmp(v, "baseline") && strcmp(v, "strict")) {
				fprintf(stderr, "airlock conformance: --profile: \"%s\" is not baseline or strict\n", v);
				return 2;
			}
			o.strict = !strcmp(v, "strict");
		} else if (!strcmp(a, "--format")) {
			if (!strcmp(v, "table"))
				fmt = CONF_TABLE;
			else if (!strcmp(v, "json"))
				fmt = CONF_JSON;
			else if (!strcmp(v, "junit"))
				fmt = CONF_JUNIT;
			else {
				fprintf(stderr, "airlock conformance: --format: \"%s\" is not table, json or junit\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--timeout")) {
			char *end;
			errno = 0;
			long t = strtol(v, &end, 10);
			if (errno || *end || t < 1 || t > 3600) {
				fprintf(stderr, "airlock conformance: --timeout: \"%s\" is not 1 to 3600 seconds\n", v);
				return 2;
			}
			o.timeout_s = (int)t;
		} else {
			fprintf(stderr, "airlock conformance: unknown option '%s'\n\n%s", a, conformance_usage);
			return 2;
		}
	}
	if (!o.runtime || !o.runtime[0]) {
		fprintf(stderr, "airlock conformance: --runtime PREFIX is required\n\n%s", conformance_usage);
		return 2;
	}
	/* The prefix runs in the scratch workspace: a relative program path
	 * would name nothing there. */
	size_t wl = strcspn(o.runtime, " \t");
	if (o.runtime[0] != '/' && memchr(o.runtime, '/', wl)) {
		fprintf(stderr,
			"airlock conformance: --runtime: \"%.*s\" is a relative path, but the prefix runs in the suite's workspace; give it absolute\n",
			(int)wl, o.runtime);
		return 2;
	}
	struct conf_result *res = calloc(conf_nreqs, sizeof(*res));
	struct conf_info *info = calloc(1, sizeof(*info));
	if (!res || !info) {
		free(res);
		free(info);
		fprintf(stderr, "airlock conformance: out of memory\n");
		return 2;
	}
	if (conf_run(&o, res, info, &err) < 0) {
		fprintf(stderr, "airlock conformance: %s\n", err.msg);
		free(res);
		free(info);
		return 2;
	}
	conf_report(stdout, fmt, &o, info, res);
	fflush(stdout);
	if (info->scratch[0])
		fprintf(stderr, "airlock conformance: scratch directory kept: %s\n", info->scratch);
	int rc = 0;
	if (!info->ran) {
		fprintf(stderr, "airlock conformance: the runtime ran no probe (%s)\n", info->runtime_status);
		rc = 1;
	}
	for (size_t i = 0; i < conf_nreqs; i++)
		if (res[i].verdict == CONF_FAILED && conf_in_profile(&conf_reqs[i], o.strict))
			rc = 1;
	free(res);
	free(info);
	return rc;
}
