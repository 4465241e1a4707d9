/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for `airlock audit suggest` (analysis/suggest.c): the
 * input's lines, taken as a log's records, turned into policy additions.
 *
 * Besides crashes and sanitizer reports it checks that every line is
 * taken or refused with -EINVAL, that the comments and the fragment
 * print, and that the policy the additions are merged into always reads
 * back through the policy parser: whatever a log holds, suggest never
 * prints a policy airlock would refuse. The seed corpus is the audit
 * harness's: real, signed logs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "analysis/suggest.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_suggest(const char *text, size_t size)
{
	static const char yaml[] = "version: 1\nsandbox:\n  mode: learn\n  workspace: /tmp\n"
				   "filesystem:\n  read: [/var/tmp/r]\n  deny: [/var/tmp/d]\n"
				   "network:\n  resolve: { api.test: 127.0.0.1 }\n"
				   "  endpoints:\n    - host: api.test\n      ports: [80]\n      access: read-only\n";
	struct policy_ctx ctx = { .home = "/tmp", .cwd = "/tmp" };
	struct policy *pol = NULL;
	struct error err = { 0 };
	CHECK(policy_load_buffer("fuzz.yaml", NULL, yaml, sizeof(yaml) - 1, &ctx, &pol, &err) == 0);
	struct suggest *s = NULL;
	CHECK(suggest_new(pol, &s) == 0);
	uint64_t lineno = 0;
	for (size_t at = 0; at < size;) {
		const char *nl = memchr(text + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (text + at)) : size - at;
		int r = suggest_add_line(s, text + at, len, ++lineno, &err);
		CHECK(r == 0 || r == -EINVAL);
		at += len + 1;
	}
	suggest_finish(s);
	char *out = NULL, *frag = NULL;
	size_t outlen = 0, fraglen = 0;
	FILE *f = open_memstream(&frag, &fraglen);
	CHECK(f != NULL);
	suggest_print_fragment(s, f);
	fclose(f);
	free(frag);
	f = open_memstream(&out, &outlen);
	CHECK(f != NULL);
	suggest_print_unanswered(s, f);
	CHECK(suggest_merge(s, pol, &err) == 0);
	policy_print(pol, f);
	fclose(f);
	struct policy *back = NULL;
	if (policy_load_buffer("merged.yaml", NULL, out, outlen, &ctx, &back, &err) != 0) {
		fprintf(stderr, "the merged policy does not read back: %s\n%s\n", err.msg, out);
		abort();
	}
	policy_free(back);
	free(out);
	suggest_free(s);
	policy_free(pol);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly the input's bytes, so that reading one more is caught. */
	char *copy = malloc(size ? size : 1);
	CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	fuzz_suggest(copy, size);
	free(copy);
	return 0;
}
