/* SPDX-License-Identifier: Apache-2.0 */
#include "util/base64.h"

#include <errno.h>
#include <stdbool.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Both alphabets share the first 62 characters; the URL one (RFC 4648
 * section 5) goes without padding. */
static int encode(const uint8_t *in, size_t len, struct buf *out, const char *alpha, bool pad)
{
	int r = buf_reserve(out, (len + 2) / 3 * 4 + 1);
	if (r < 0)
		return r;
	char *o = out->data + out->len;
	size_t i = 0;
	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*o++ = alpha[v >> 18];
		*o++ = alpha[(v >> 12) & 63];
		*o++ = alpha[(v >> 6) & 63];
		*o++ = alpha[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);
		*o++ = alpha[v >> 18];
		*o++ = alpha[(v >> 12) & 63];
		if (i + 1 < len)
			*o++ = alpha[(v >> 6) & 63];
		else if (pad)
			*o++ = '=';
		if (pad)
			*o++ = '=';
	}
	out->len = (size_t)(o - out->data);
	out->data[out->len] = '\0';
	return 0;
}

int base64_encode(const uint8_t *in, size_t len, struct buf *out)
{
	return encode(in, len, out, alphabet, true);
}

/* The value of c in an alphabet whose last two characters are c62, c63. */
static int digit_of(char c, char c62, char c63)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == c62)
		return 62;
	if (c == c63)
		return 63;
	return -1;
}

ssize_t base64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
	if (len % 4)
		return -EINVAL;
	size_t n = 0;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		size_t pad = 0;
		for (int k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == len && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad) /* '=' only at the very end */
				return -EINVAL;
			if ((v[k] = digit_of(in[i + k], '+', '/')) < 0)
				return -EINVAL;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		/* Bits under the padding must be zero: one encoding per value. */
		if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
			return -EINVAL;
		size_t k = 3 - pad;
		if (n + k > cap)
			return -ENOSPC;
		out[n++] = (uint8_t)(w >> 16);
		if (k > 1)
			out[n++] = (uint8_t)(w >> 8);
		if (k > 2)
			out[n++] = (uint8_t)w;
	}
	return (ssize_t)n;
}

static const char url_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int base64url_encode(const uint8_t *in, size_t len, struct buf *out)
{
	return encode(in, len, out, url_alphabet, false);
}

ssize_t base64url_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
	if (len % 4 == 1)
		return -EINVAL;
	size_t n = 0;
	for (size_t i = 0; i < len; i += 4) {
		size_t k = len - i < 4 ? len - i : 4;
		uint32_t w = 0;
		for (size_t j = 0; j < 4; j++) {
			int v = j < k ? digit_of(in[i + j], '-', '_') : 0;
			if (v < 0)
				return -EINVAL;
			w = w << 6 | (uint32_t)v;
		}
		/* k characters carry k*6 bits: k-1 whole bytes, and the bits
		 * below them must be zero. */
		size_t bytes = k - 1;
		if ((bytes == 1 && (w & 0xffff)) || (bytes == 2 && (w & 0xff)))
			return -EINVAL;
		if (n + bytes > cap)
			return -ENOSPC;
		out[n++] = (uint8_t)(w >> 16);
		if (bytes > 1)
			out[n++] = (uint8_t)(w >> 8);
		if (bytes > 2)
			out[n++] = (uint8_t)w;
	}
	return (ssize_t)n;
}
