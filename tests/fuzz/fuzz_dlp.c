/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the leak scanner.
 *
 * Besides crashes and sanitizer reports it checks:
 *  - with a fixed secret registered, an input that contains the secret is
 *    reported;
 *  - with the first bytes of the input registered as a secret, the rest
 *    is reported when it contains the secret, and so is the rest with the
 *    secret spliced in and then base64-, hex- or percent-encoded by this
 *    file's own encoders (a second implementation to disagree with);
 *  - a hit's text never carries the secret;
 *  - the streaming scan, fed in pieces the input picks, finds what one
 *    scan of the whole buffer finds, releases none of it, and otherwise
 *    releases the input unchanged.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_secret[] = "fuzz-fixed-secret-0123456789";

/* Encoded forms are built from at most this many input bytes. */
#define SPLICE_MAX 4096

static void must_hit(const struct dlp *d, const uint8_t *buf, size_t len, size_t slen,
		     const char *how)
{
	char what[256];

	if (!dlp_scan(d, buf, len, what, sizeof(what))) {
		fprintf(stderr, "%s: the secret (%zu bytes) is not found in %zu bytes\n", how, slen,
			len);
		abort();
	}
	/* "secret S (...)" or "pattern ...": neither can hold 8+ secret
	 * bytes unless the secret is made of those words. */
	if (strncmp(what, "secret S (", 10) != 0 && strncmp(what, "pattern ", 8) != 0) {
		fprintf(stderr, "%s: unexpected hit text %s\n", how, what);
		abort();
	}
}

static size_t b64(const uint8_t *p, size_t n, bool url, bool pad, char *o)
{
	const char *alpha = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
				: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t w = 0;

	for (size_t i = 0; i < n; i += 3) {
		size_t have = n - i < 3 ? n - i : 3;
		uint32_t x = (uint32_t)p[i] << 16;
		if (have > 1)
			x |= (uint32_t)p[i + 1] << 8;
		if (have > 2)
			x |= p[i + 2];
		for (size_t j = 0; j < 4; j++) {
			if (j <= have)
				o[w++] = alpha[(x >> (18 - 6 * j)) & 63];
			else if (pad)
				o[w++] = '=';
		}
	}
	return w;
}

static size_t hex(const uint8_t *p, size_t n, bool upper, char *o)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		o[2 * i] = dig[p[i] >> 4];
		o[2 * i + 1] = dig[p[i] & 15];
	}
	return 2 * n;
}

/* Escape each byte whose bit in mask (cycled) is set: any mix of escaped
 * and literal bytes, in either case. */
static size_t pct(const uint8_t *p, size_t n, uint8_t mask, bool upper, char *o)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		if (mask & (1u << (i % 8)) || p[i] == '%') {
			o[w++] = '%';
			o[w++] = dig[p[i] >> 4];
			o[w++] = dig[p[i] & 15];
		} else {
			o[w++] = (char)p[i];
		}
	}
	return w;
}

static void check_spliced(const struct dlp *d, const uint8_t *secret, size_t slen,
			  const uint8_t *rest, size_t rlen, uint8_t ctl)
{
	static uint8_t stream[SPLICE_MAX + 64];
	static char enc[4 * (SPLICE_MAX + 64)];
	size_t at, n, k;

	if (rlen > SPLICE_MAX)
		rlen = SPLICE_MAX;
	at = rlen ? ctl % (rlen + 1) : 0;
	memcpy(stream, rest, at);
	memcpy(stream + at, secret, slen);
	memcpy(stream + at + slen, rest + at, rlen - at);
	n = rlen + slen;

	k = b64(stream, n, ctl & 1, ctl & 2, enc);
	must_hit(d, (const uint8_t *)enc, k, slen, "spliced base64");
	k = hex(stream, n, ctl & 4, enc);
	must_hit(d, (const uint8_t *)enc, k, slen, "spliced hex");
	k = pct(stream, n, (uint8_t)(ctl * 37), ctl & 8, enc);
	must_hit(d, (const uint8_t *)enc, k, slen, "spliced percent-encoding");
}

/*
 * The stream (the response scan's) against one scan of the whole buffer,
 * fed in pieces whose sizes the input picks: a secret the whole scan finds
 * the stream finds too, before releasing any byte of it; without a hit,
 * what it releases is the input, unchanged and in order.
 */
static void check_stream(const struct dlp *d, const uint8_t *buf, size_t len, uint8_t seed)
{
	struct dlp_stream *st;
	char what[256];
	if (dlp_stream_new(d, &st) < 0)
		return;
	uint8_t *out = malloc(len + 1);
	size_t olen = 0, pos = 0;
	int r = 0;
	if (!out)
		abort();
	for (unsigned k = seed; pos < len && r == 0; k = k * 1103515245u + 12345u) {
		size_t n = 1 + (k >> 16) % 97;
		if (n > len - pos)
			n = len - pos;
		const uint8_t *rel;
		size_t rl;
		r = dlp_stream_feed(st, buf + pos, n, &rel, &rl, what, sizeof(what));
		if (r == 0) {
			if (rl)
				memcpy(out + olen, rel, rl);
			olen += rl;
		}
		pos += n;
	}
	bool whole = dlp_scan_secrets(d, buf, len, NULL, 0);
	if (r < 0) {
		dlp_stream_free(st);
		free(out);
		return;
	}
	if (whole && r != 1) {
		fprintf(stderr, "stream: the whole scan finds a secret, the stream does not\n");
		abort();
	}
	if (r == 1) {
		/* Whatever went out holds no secret. */
		if (olen && dlp_scan_secrets(d, out, olen, NULL, 0)) {
			fprintf(stderr, "stream: a secret was released before the hit\n");
			abort();
		}
	} else {
		const uint8_t *rel;
		size_t rl;
		dlp_stream_end(st, &rel, &rl);
		if (rl)
			memcpy(out + olen, rel, rl);
		olen += rl;
		if (olen != len || (len && memcmp(out, buf, len) != 0)) {
			fprintf(stderr, "stream: released %zu bytes for %zu, or changed them\n", olen, len);
			abort();
		}
	}
	dlp_stream_free(st);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dlp *fixed;
	char what[256];

	if (!fixed) {
		fixed = dlp_new();
		if (!fixed ||
		    dlp_add_secret(fixed, "S", (const uint8_t *)fixed_secret,
				   sizeof(fixed_secret) - 1) < 0)
			abort();
	}
	bool hit = dlp_scan(fixed, data, size, what, sizeof(what));
	if (memmem(data, size, fixed_secret, sizeof(fixed_secret) - 1) && !hit) {
		fprintf(stderr, "the fixed secret is not found\n");
		abort();
	}

	/* data[0]: secret length 8..39 and where to splice it; then the
	 * secret; then the buffer. */
	if (size < 2)
		return 0;
	size_t slen = 8 + data[0] % 32;
	if (size - 1 < slen)
		return 0;
	const uint8_t *secret = data + 1, *rest = data + 1 + slen;
	size_t rlen = size - 1 - slen;
	struct dlp *d = dlp_new();
	if (!d)
		return 0;
	int r = dlp_add_secret(d, "S", secret, slen);
	if (r < 0) {
		fprintf(stderr, "dlp_add_secret refused a %zu-byte secret: %d\n", slen, r);
		abort();
	}
	hit = dlp_scan(d, rest, rlen, what, sizeof(what));
	if (memmem(rest, rlen, secret, slen))
		must_hit(d, rest, rlen, slen, "raw");
	check_spliced(d, secret, slen, rest, rlen, (uint8_t)(data[0] / 32 + (rlen ? rest[0] : 0)));
	check_stream(d, rest, rlen, data[0]);
	dlp_free(d);
	(void)hit;
	return 0;
}
