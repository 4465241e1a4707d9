/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for what `airlock review` does with an agent's bytes:
 * the line diff and the judge of a changed file.
 *
 * The input is split at its first 0xff byte into the old and the new
 * text (no 0xff: the second half of the input is the new text). Besides
 * crashes and sanitizer reports it checks:
 *  - the diff's output holds no control byte but newline and tab (a file
 *    under review cannot drive the reviewer's terminal);
 *  - its '-' and '+' lines are as many as the edit distance says, and the
 *    distance is the same both ways;
 *  - the judge's reason is NUL-terminated within its buffer and free of
 *    control bytes except those of the file names it quotes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "review/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	const uint8_t *cut = memchr(data, 0xff, size);
	size_t alen = cut ? (size_t)(cut - data) : size / 2;
	size_t boff = cut ? alen + 1 : alen;
	char *a = malloc(alen + 1), *b = malloc(size - boff + 1);
	if (!a || !b)
		abort();
	memcpy(a, data, alen);
	memcpy(b, data + boff, size - boff);
	size_t blen = size - boff;

	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	if (!f || review_diff(f, "x", a, alen, b, blen) < 0)
		abort();
	fclose(f);
	long d = review_diff_distance(a, alen, b, blen);
	if (d != review_diff_distance(b, blen, a, alen))
		abort();
	bool binary = memchr(a, '\0', alen) || memchr(b, '\0', blen);
	long edits = 0, line = 0;
	for (size_t i = 0; i < olen; i++) {
		unsigned char c = (unsigned char)out[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			abort();
		/* after the two name lines, one per line removed or added */
		if ((i == 0 || out[i - 1] == '\n') && line++ >= 2 && (c == '-' || c == '+'))
			edits++;
	}
	if (!binary && d >= 0 && edits != d)
		abort();
	free(out);

	/* The judge, on the new text as a file of a path taken from the old. */
	char path[64];
	size_t pl = alen < sizeof(path) - 1 ? alen : sizeof(path) - 1;
	memcpy(path, a, pl);
	path[pl] = '\0';
	if (!path[0])
		strcpy(path, ".git/config");
	struct review_change c = { .path = path, .kind = REVIEW_ADDED, .mode = S_IFREG | 0644 };
	struct stat st = { .st_mode = S_IFREG | (size & 1 ? 0755 : 0644) };
	review_judge(&c, &st, b, blen, NULL, NULL);
	if (!memchr(c.reason, '\0', sizeof(c.reason)))
		abort();
	free(a);
	free(b);
	return 0;
}
