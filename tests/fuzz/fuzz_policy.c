/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the policy parser.
 *
 * Besides crashes and sanitizer reports it checks two properties:
 *  - a refused policy gets a "FILE:LINE:COL: FIELD: ..." message;
 *  - an accepted policy printed with policy_print parses back to the same
 *    policy.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/internal.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct policy_ctx ctx = { .home = "/home/fuzz", .cwd = "/work/fuzz" };

static void check_message(const struct error *err)
{
	static const char prefix[] = "fuzz.yaml:";
	const char *s = err->msg + sizeof(prefix) - 1;
	char *end;

	if (err->code == ENOMEM)
		return;
	if (err->code != EINVAL || strncmp(err->msg, prefix, sizeof(prefix) - 1) != 0)
		goto bad;
	if (strtoul(s, &end, 10) == 0 || *end != ':')
		goto bad;
	if (strtoul(end + 1, &end, 10) == 0 || strncmp(end, ": ", 2) != 0)
		goto bad;
	if (!strstr(end + 2, ": "))
		goto bad;
	return;
bad:
	fprintf(stderr, "malformed error message (code %d): %s\n", err->code, err->msg);
	abort();
}

static void check_round_trip(const struct policy *p)
{
	struct policy *q = NULL;
	struct error err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	policy_print(p, f);
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	/* Expanded paths can make the output larger than the input bound;
	 * that is not a parser bug. */
	if (len <= POLICY_MAX_FILE) {
		if (policy_load_buffer("printed.yaml", "/", text, len, &ctx, &q, &err) < 0) {
			fprintf(stderr, "printed policy does not parse: %s\n%s", err.msg, text);
			abort();
		}
		if (!policy_equal(p, q)) {
			fprintf(stderr, "printed policy parses differently:\n%s", text);
			abort();
		}
		policy_free(q);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct policy *p = NULL;
	struct error err = { 0 };

	if (!devnull)
		devnull = fopen("/dev/null", "we");
	if (policy_load_buffer("fuzz.yaml", "/etc/fuzz", (const char *)data, size, &ctx, &p, &err) <
	    0) {
		if (p)
			abort();
		check_message(&err);
		return 0;
	}
	if (devnull)
		policy_print(p, devnull);
	check_round_trip(p);
	policy_free(p);
	return 0;
}
