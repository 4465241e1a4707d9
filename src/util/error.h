/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_UTIL_ERROR_H
#define AIRLOCK_UTIL_ERROR_H

/*
 * The error contract, followed by every module:
 *
 *  - A fallible function returns an int: 0 (or a non-negative count) on
 *    success, a negative errno-style value on failure.
 *  - On failure it fills the caller's `struct error` with one human-readable
 *    message. Library code never prints and never exits; only main() and the
 *    CLI verbs do.
 *  - Messages about user input name the place: "policy.yaml:14:7:
 *    sandbox.mode: \"fast\" is not one of enforce, learn, observe".
 *  - Permission checks return bool, never a three-valued int.
 */

#include <stddef.h>

#define ERROR_MSG_MAX 1024

struct error {
	int code;		/* positive errno value, 0 when unset */
	char msg[ERROR_MSG_MAX];
};

#define WUR __attribute__((warn_unused_result))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* Record an error and return -code (code is a positive errno value; 0 is
 * treated as EINVAL). `err` may be NULL. */
int error_set(struct error *err, int code, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Like error_set but appends ": strerror(code)". */
int error_sys(struct error *err, int code, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Prepend context to an existing message: "context: old message". Returns
 * -err->code so it can be used in a return statement. */
int error_prefix(struct error *err, const char *fmt, ...) PRINTF_LIKE(2, 3);

void error_clear(struct error *err);

#endif
