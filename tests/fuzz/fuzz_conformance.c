/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for what the conformance suite reads back from a
 * runtime it is testing: the probe's batch lines, which the runtime (or an
 * agent inside it) can forge or mangle, and their judgement.
 *
 * The input is cut into lines, as run.c does. Besides crashes and
 * sanitizer reports it checks:
 *  - a line is "@end" (1), refused (-EINVAL), or parsed (0) into an index
 *    of at most 4096 and one of the three outcomes, with a NUL-terminated
 *    reason;
 *  - a row judged from parsed lines has a NUL-terminated evidence string,
 *    and is never "held" when an attack was allowed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/conformance.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	struct conf_line att[CONF_MAX_PROBES];
	size_t na = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		struct conf_line cl;
		size_t idx = 0;
		int r = conf_parse_line(l, &idx, &cl);
		if (r != 0 && r != 1 && r != -EINVAL)
			abort();
		if (r != 0)
			continue;
		if (idx > 4096 || memchr(cl.why, '\0', sizeof(cl.why)) == NULL ||
		    (cl.outcome != CONF_BLOCKED && cl.outcome != CONF_ALLOWED && cl.outcome != CONF_ERROR))
			abort();
		if (na < CONF_MAX_PROBES)
			att[na++] = cl;
	}
	/* The row with the most attack lines, judged on what was parsed. */
	const struct conf_req *q = &conf_reqs[0];
	size_t qn = 0;
	for (size_t i = 0; i < conf_nreqs; i++) {
		size_t n = 0;
		while (n < CONF_MAX_PROBES && conf_reqs[i].attacks[n])
			n++;
		if (n > qn) {
			qn = n;
			q = &conf_reqs[i];
		}
	}
	if (na > qn)
		na = qn;
	struct conf_result res;
	conf_judge(q, att, na, NULL, 0, &res);
	if (memchr(res.evidence, '\0', sizeof(res.evidence)) == NULL)
		abort();
	for (size_t i = 0; i < na; i++)
		if (att[i].outcome == CONF_ALLOWED && res.verdict != CONF_FAILED)
			abort();
	free(buf);
	return 0;
}
