/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 as FIPS 180-4 section 6.2 describes it; on x86-64 processors
 * with the SHA extensions, the rounds and the message schedule of each
 * block in their instructions (sha256rnds2, sha256msg1, sha256msg2),
 * four to five times as fast: the decision log's writer hashes every
 * record with it (audit/digest_plain.c). */
#include <stdbool.h>
#include <string.h>

#include "util/hex.h"
#include "util/sha256.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static bool portable; /* tests: the portable rounds whatever the processor has */

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void compress(uint32_t h[8], const uint8_t p[64])
{
	uint32_t w[64];
	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 |
		       p[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += k;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

/* Unaligned 16-byte loads and stores, as movdqu, without a cast that
 * claims an alignment the words do not have. */
static inline __m128i load128(const void *p)
{
	__m128i x;
	memcpy(&x, p, sizeof(x));
	return x;
}

static inline void store128(void *p, __m128i x)
{
	memcpy(p, &x, sizeof(x));
}

/* The eight words live in two registers as the instructions want them:
 * abef = (a, b, e, f) and cdgh = (c, d, g, h), highest lane first. */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_ni(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i dcba = load128(&h[0]);
	__m128i hgfe = load128(&h[4]);
	__m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
	__m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
	__m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
	__m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
	for (; blocks > 0; blocks--, p += 64) {
		__m128i abef0 = abef, cdgh0 = cdgh, w[16];
		for (int g = 0; g < 16; g++) {
			if (g < 4) {
				w[g] = _mm_shuffle_epi8(load128(p + 16 * g), bswap);
			} else {
				/* W[t-16] + s0(W[t-15]), + W[t-7], + s1(W[t-2]). */
				__m128i t = _mm_sha256msg1_epu32(w[g - 4], w[g - 3]);
				t = _mm_add_epi32(t, _mm_alignr_epi8(w[g - 1], w[g - 2], 4));
				w[g] = _mm_sha256msg2_epu32(t, w[g - 1]);
			}
			__m128i m = _mm_add_epi32(w[g], load128(&K[4 * g]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	__m128i feba = _mm_shuffle_epi32(abef, 0x1B);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
	store128(&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
	store128(&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

static _Atomic int have_sha = -1; /* the processor's SHA extensions: unknown, no, yes */

/* CPUID leaf 1: SSSE3 (ECX bit 9), SSE4.1 (bit 19); leaf 7: SHA (EBX bit
 * 29). Asked once: in a VM each CPUID is an exit to the hypervisor. */
static bool have_ni(void)
{
	int h = have_sha;
	if (h < 0) {
		unsigned a, b, c, d;
		bool sse = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 9)) && (c & (1u << 19));
		bool sha = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
		have_sha = h = sse && sha;
	}
	return h && !portable;
}
#else
static void compress_ni(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	(void)h, (void)p, (void)blocks;
}

static bool have_ni(void)
{
	return portable && false;
}
#endif

void sha256_force_portable(bool on)
{
	portable = on;
}

static void compress_blocks(uint32_t h[8], const uint8_t *p, size_t blocks)
{
	if (have_ni()) {
		compress_ni(h, p, blocks);
		return;
	}
	for (; blocks > 0; blocks--, p += 64)
		compress(h, p);
}

void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(c->h, iv, sizeof(iv));
	c->bytes = 0;
	c->fill = 0;
}

void sha256_update(struct sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	c->bytes += len;
	if (c->fill) {
		size_t take = 64 - c->fill < len ? 64 - c->fill : len;
		memcpy(c->block + c->fill, p, take);
		c->fill += take;
		p += take;
		len -= take;
		if (c->fill < 64)
			return;
		compress_blocks(c->h, c->block, 1);
		c->fill = 0;
	}
	compress_blocks(c->h, p, len / 64);
	p += len / 64 * 64;
	len %= 64;
	memcpy(c->block, p, len);
	c->fill = len;
}

void sha256_final(struct sha256 *c, uint8_t out[32])
{
	uint64_t bits = c->bytes * 8;
	uint8_t pad = 0x80, zero = 0, len[8];
	sha256_update(c, &pad, 1);
	while (c->fill != 56)
		sha256_update(c, &zero, 1);
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, len, 8);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
}

void sha256_hex(const void *data, size_t len, char out[65])
{
	struct sha256 c;
	uint8_t d[32];
	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, d);
	hex_encode(d, sizeof(d), out);
}
