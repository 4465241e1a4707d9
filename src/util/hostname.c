/* SPDX-License-Identifier: Apache-2.0 */
#include "util/hostname.h"

bool host_last_label_numeric(const char *s, size_t len)
{
	size_t start = len;

	while (start > 0 && s[start - 1] != '.')
		start--;
	if (start == len)
		return false;
	if (len - start >= 2 && s[start] == '0' && (s[start + 1] == 'x' || s[start + 1] == 'X')) {
		for (size_t i = start + 2; i < len; i++)
			if (!host_is_hex(s[i]))
				return false;
		return true;
	}
	for (size_t i = start; i < len; i++)
		if (!host_is_digit(s[i]))
			return false;
	return true;
}
