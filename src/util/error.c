/* SPDX-License-Identifier: Apache-2.0 */
#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int error_vset(struct error *err, int code, const char *fmt, va_list ap, bool sys)
	PRINTF_LIKE(3, 0);

static int error_vset(struct error *err, int code, const char *fmt, va_list ap, bool sys)
{
	if (code < 0)
		code = -code;
	if (code == 0)
		code = EINVAL;
	if (!err)
		return -code;
	err->code = code;
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (sys && n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s", strerror(code));
	return -code;
}

int error_set(struct error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = error_vset(err, code, fmt, ap, false);
	va_end(ap);
	return r;
}

int error_sys(struct error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = error_vset(err, code, fmt, ap, true);
	va_end(ap);
	return r;
}

int error_prefix(struct error *err, const char *fmt, ...)
{
	if (!err)
		return -EINVAL;
	char ctx[ERROR_MSG_MAX], old[ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", ctx, old);
	return -(err->code ? err->code : EINVAL);
}

void error_clear(struct error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
