/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the SNI parser.
 *
 * Besides crashes and sanitizer reports (the input is copied to a buffer
 * of exactly its size, so any over-read is caught) it checks:
 *  - the result is one of the documented codes, and sni is "" unless 1;
 *  - an accepted name is 1..255 bytes of lower-case letters, digits, '-',
 *    '_' and dots, with no empty label, none over 63, no trailing dot;
 *  - the answer does not depend on the output buffer beyond -ENOSPC: the
 *    same input with a buffer of exactly the name's size gives the same
 *    name, one byte less gives -ENOSPC;
 *  - one byte less of input never turns "need more" into an answer, and
 *    never turns one answer into a different one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool name_ok(const char *s)
{
	size_t len = strlen(s), label = 0;

	if (len == 0 || len > 255)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0;
}

static void fail(const char *what, int r, const char *sni)
{
	fprintf(stderr, "fuzz_sni: %s (result %d, sni \"%s\")\n", what, r, sni);
	abort();
}

static int parse_exact(const uint8_t *data, size_t size, char *sni, size_t sni_len)
{
	uint8_t *copy = malloc(size ? size : 1);
	int r;

	if (!copy)
		abort();
	if (size)
		memcpy(copy, data, size);
	r = tls_parse_sni(copy, size, sni, sni_len);
	free(copy);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char sni[256], again[256];
	int r, r2;
	size_t n;

	memset(sni, 'x', sizeof(sni));
	r = parse_exact(data, size, sni, sizeof(sni));
	if (r != 1 && r != 0 && r != -ENOENT && r != -EINVAL)
		fail("unexpected result", r, "");
	if (r != 1) {
		if (sni[0] != '\0')
			fail("sni not cleared", r, "");
	} else if (!name_ok(sni)) {
		fail("invalid name accepted", r, sni);
	}

	if (r == 1) {
		n = strlen(sni);
		memset(again, 'x', sizeof(again));
		if (parse_exact(data, size, again, n + 1) != 1 || strcmp(again, sni) != 0)
			fail("exact-size buffer gives another answer", r, sni);
		memset(again, 'x', sizeof(again));
		r2 = parse_exact(data, size, again, n);
		if (r2 != -ENOSPC || again[0] != '\0' || again[n] != 'x')
			fail("short buffer not -ENOSPC", r2, sni);
	}

	if (size > 0) {
		r2 = parse_exact(data, size - 1, again, sizeof(again));
		if (r == 0 && r2 != 0)
			fail("a prefix of an incomplete stream is not incomplete", r2, again);
		if (r2 != 0 && r2 != r)
			fail("a prefix gives another answer", r2, again);
		if (r2 == 1 && strcmp(again, sni) != 0)
			fail("a prefix gives another name", r2, again);
	}
	return 0;
}
