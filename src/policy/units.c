/* SPDX-License-Identifier: Apache-2.0 */
/* Integers, sizes and durations as written in a policy. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy/internal.h"
#include "util/cleanup.h"

struct unit {
	const char *suffix;
	uint64_t factor;
};

#define KIB UINT64_C(1024)
#define KB UINT64_C(1000)

static const struct unit size_units[] = {
	{ "", 1 },
	{ "B", 1 },
	{ "K", KIB },
	{ "KiB", KIB },
	{ "KB", KB },
	{ "M", KIB * KIB },
	{ "MiB", KIB * KIB },
	{ "MB", KB * KB },
	{ "G", KIB * KIB * KIB },
	{ "GiB", KIB * KIB * KIB },
	{ "GB", KB * KB * KB },
	{ "T", KIB * KIB * KIB * KIB },
	{ "TiB", KIB * KIB * KIB * KIB },
};

static const struct unit duration_units[] = {
	{ "", 1 },
	{ "s", 1 },
	{ "m", 60 },
	{ "h", 3600 },
};

/* Read the leading decimal digits of s into *out; *end points past them. */
static enum policy_num_status digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return POLICY_NUM_SYNTAX;
	if (p[0] == '0' && p[1] >= '0' && p[1] <= '9')
		return POLICY_NUM_SYNTAX;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10) {
			/* Keep scanning so that "99999999999999999999x" is a
			 * syntax error rather than a range error. */
			while (*p >= '0' && *p <= '9')
				p++;
			*end = p;
			return POLICY_NUM_RANGE;
		}
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return POLICY_NUM_OK;
}

enum policy_num_status policy_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v = 0;
	enum policy_num_status st = digits(s, &v, &end);

	if (st == POLICY_NUM_SYNTAX || *end != '\0')
		return POLICY_NUM_SYNTAX;
	if (st == POLICY_NUM_RANGE || v > max)
		return POLICY_NUM_RANGE;
	*out = v;
	return POLICY_NUM_OK;
}

static enum policy_num_status parse_with_units(const char *s, const struct unit *units, size_t n,
					       uint64_t *out)
{
	const char *end;
	uint64_t v = 0;
	enum policy_num_status st = digits(s, &v, &end);

	if (st == POLICY_NUM_SYNTAX)
		return st;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		if (st == POLICY_NUM_RANGE || v > UINT64_MAX / units[i].factor)
			return POLICY_NUM_RANGE;
		*out = v * units[i].factor;
		return POLICY_NUM_OK;
	}
	return POLICY_NUM_SYNTAX;
}

enum policy_num_status policy_parse_size(const char *s, uint64_t *out)
{
	return parse_with_units(s, size_units, ARRAY_SIZE(size_units), out);
}

enum policy_num_status policy_parse_duration(const char *s, uint64_t *out)
{
	return parse_with_units(s, duration_units, ARRAY_SIZE(duration_units), out);
}

void policy_format_size(uint64_t bytes, char *buf, size_t size)
{
	static const struct unit order[] = {
		{ "TiB", KIB * KIB * KIB * KIB },
		{ "GiB", KIB * KIB * KIB },
		{ "MiB", KIB * KIB },
		{ "KiB", KIB },
		{ "GB", KB * KB * KB },
		{ "MB", KB * KB },
		{ "KB", KB },
	};

	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		if (bytes % order[i].factor == 0) {
			snprintf(buf, size, "%" PRIu64 "%s", bytes / order[i].factor, order[i].suffix);
			return;
		}
	}
	snprintf(buf, size, "%" PRIu64 "B", bytes);
}

void policy_format_duration(uint64_t seconds, char *buf, size_t size)
{
	if (seconds % 3600 == 0)
		snprintf(buf, size, "%" PRIu64 "h", seconds / 3600);
	else if (seconds % 60 == 0)
		snprintf(buf, size, "%" PRIu64 "m", seconds / 60);
	else
		snprintf(buf, size, "%" PRIu64 "s", seconds);
}
