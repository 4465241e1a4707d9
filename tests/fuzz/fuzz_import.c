/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for `airlock policy import`: the strict JSON reader,
 * the TOML-subset reader, and the four importers behind them. The first
 * byte picks the format; the rest is the file.
 *
 * Besides crashes and sanitizer reports it checks:
 *  - a refusal by a reader names "fuzz:LINE:COL: " (or is about size or
 *    memory);
 *  - every refusal, by a reader, an importer or the policy parser reading
 *    what an importer emitted, carries a message (the CLI prints nothing
 *    the policy parser refuses).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/doc.h"
#include "policy/import/import.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct policy_ctx ctx = { .home = "/home/fuzz", .cwd = "/work/fuzz" };

static void check_reader_message(const struct error *err)
{
	static const char prefix[] = "fuzz:";
	char *end;

	if (err->code == ENOMEM || err->code == EFBIG)
		return;
	if (!strncmp(err->msg, "fuzz: NUL byte", 14))
		return;
	if (strncmp(err->msg, prefix, sizeof(prefix) - 1) != 0 ||
	    strtoul(err->msg + sizeof(prefix) - 1, &end, 10) == 0 || *end != ':' ||
	    strtoul(end + 1, &end, 10) == 0 || strncmp(end, ": ", 2) != 0) {
		fprintf(stderr, "reader message without a position: %s\n", err->msg);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imp_node *n = NULL;
	struct error err = { 0 };
	char *yaml = NULL;

	if (size < 1)
		return 0;
	unsigned sel = data[0] % 4;
	const char *text = (const char *)data + 1;
	size--;

	if (sel == 0 || sel == 2) {
		if (imp_json_parse("fuzz", text, size, &n, &err) < 0)
			check_reader_message(&err);
		imp_node_free(n);
		n = NULL;
	}
	if (sel == 1) {
		if (imp_toml_parse("fuzz", text, size, &n, &err) < 0)
			check_reader_message(&err);
		imp_node_free(n);
	}
	static const enum imp_format fmts[] = { IMP_FORMAT_SRT, IMP_FORMAT_CODEX, IMP_FORMAT_MXC, IMP_FORMAT_OPENSHELL };
	memset(&err, 0, sizeof(err));
	if (imp_convert(fmts[sel], "fuzz", text, size, data[size] & 1, &yaml, &err) == 0) {
		struct policy *p = NULL;
		if (policy_load_buffer("(imported)", NULL, yaml, strlen(yaml), &ctx, &p, &err) < 0 && !err.msg[0]) {
			fprintf(stderr, "imported policy refused without a message:\n%s\n", yaml);
			abort();
		}
		policy_free(p);
		free(yaml);
	} else if (!err.msg[0]) {
		fprintf(stderr, "import refused without a message\n");
		abort();
	}
	return 0;
}
