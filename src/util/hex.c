/* SPDX-License-Identifier: Apache-2.0 */
#include "util/hex.h"

void hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t k = 0; k < n; k++) {
		out[2 * k] = digits[in[k] >> 4];
		out[2 * k + 1] = digits[in[k] & 15];
	}
	out[2 * n] = '\0';
}

bool hex_decode(const char *s, size_t len, uint8_t *out, size_t n)
{
	if (len != 2 * n)
		return false;
	for (size_t k = 0; k < 2 * n; k++)
		if (!((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f')))
			return false; /* upper case too: one spelling per value */
	for (size_t k = 0; k < n; k++)
		out[k] = (uint8_t)(hex_digit_value((unsigned char)s[2 * k]) << 4 |
				   hex_digit_value((unsigned char)s[2 * k + 1]));
	return true;
}
