/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_FUZZ_CHECK_H
#define AIRLOCK_FUZZ_CHECK_H

/* A harness's own assertion: an invariant the code under test must keep
 * for every input, checked in every build type (assert would vanish
 * under NDEBUG), and a crash libFuzzer records with its input. */

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

#endif
