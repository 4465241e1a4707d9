/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leak scanning of requests, and of responses from a credential's endpoint.
 *
 * Registered secrets are expanded into needles (the value and its common
 * encodings) and matched in one pass with an Aho-Corasick automaton built
 * when a secret is added, so that dlp_scan only reads shared state. The
 * automaton runs only where a filter on sampled 4-byte grams says a needle
 * may start: most of a clean buffer is read one position in (the shortest
 * needle's length - 3), 41 for a 44-byte key. A
 * second pass matches the same needles against a percent-decoded view of
 * the buffer, which catches any mix of escaped and literal bytes (and
 * base64 whose '+', '/' and '=' were escaped to go into a URL), when the
 * buffer contains a '%' at all.
 *
 * The built-in credential formats are recognised by small hand-written
 * matchers behind a filter on the first two bytes.
 *
 * The input is chosen by a hostile agent: every scan is linear in its
 * length and allocates nothing. The secrets come from the supervisor; their
 * number and the size of their needles are bounded anyway, and so is the
 * automaton: at most DLP_MAX_NEEDLE_BYTES + 1 nodes of 16 bytes each plus
 * a dense transition table of at most DLP_DENSE_BYTES.
 */
#include "net/dlp.h"
#include "net/dlp_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/hex.h"

static const char *enc_label(enum enc e, bool decoded)
{
	switch (e) {
	case ENC_RAW:
		return decoded ? "url" : "raw";
	case ENC_BASE64:
		return decoded ? "base64, url" : "base64";
	case ENC_BASE64URL:
		return decoded ? "base64url, url" : "base64url";
	case ENC_HEX:
		return decoded ? "hex, url" : "hex";
	case ENC_URL:
		return decoded ? "url, url" : "url";
	case ENC_FORM:
		return decoded ? "form, url" : "form";
	case ENC_REVERSED:
		return decoded ? "reversed, url" : "reversed";
	case ENC_JSON:
		return decoded ? "json, url" : "json";
	case ENC_HTML:
		return decoded ? "html, url" : "html";
	}
	return "?";
}

/* ---- scanning for secrets ---- */

struct ac_match {
	size_t start; /* SIZE_MAX: none */
	int32_t needle;
};

/* The state after state t on class c, when t is not a plain dense row:
 * it has AC_HIT or AC_SPARSE set. */
static uint32_t ac_step_slow(const struct ac *a, uint32_t t, unsigned c)
{
	t &= ~AC_HIT;
	if (!(t & AC_SPARSE))
		return a->dense[t + c];
	for (uint32_t s = t & AC_VALUE;; s = a->node[s].fail) {
		if (s < a->ndense)
			return a->dense[(size_t)s * a->ncls + c];
		uint32_t x = ac_child(a, s, c);
		if (x)
			return ac_encode(a, x);
	}
}

static inline uint32_t ac_step(const struct ac *a, uint32_t t, unsigned c)
{
	return t < AC_SPARSE ? a->dense[t + c] : ac_step_slow(a, t, c);
}

/*
 * The needle occurrence that starts first, among those starting before
 * limit; at the same start the one that ends first. A node's hit is the
 * longest needle ending there, which is the one starting first.
 * A match ending at i starts at i + 1 - maxlen or later: once that passes
 * the best start, the scan stops.
 */
/* The automaton from byte i in state t, with m the best match so far
 * (starting at best, or nothing before limit): it runs until no needle
 * starting earlier than the best can still end. */
static struct ac_match ac_run(const struct ac *a, const uint8_t *buf, size_t len, size_t i, uint32_t t,
			      struct ac_match m, size_t best)
{
	size_t end = len;

	if (best < SIZE_MAX - a->maxlen && best + a->maxlen - 1 < end)
		end = best + a->maxlen - 1;
	for (; i < end; i++) {
		t = ac_step(a, t, a->cls[buf[i]]);
		if (!(t & AC_HIT))
			continue;
		int32_t h = a->node[ac_decode(a, t)].hit;
		size_t st = i + 1 - a->nlen[h];
		if (st < best) {
			best = st;
			m.start = st;
			m.needle = h;
			if (best + a->maxlen - 1 < end)
				end = best + a->maxlen - 1;
		}
	}
	return m;
}

static struct ac_match ac_scan(const struct ac *a, const uint8_t *buf, size_t len, size_t limit)
{
	return ac_run(a, buf, len, 0, 0, (struct ac_match){ SIZE_MAX, -1 }, limit);
}

/*
 * The same answer as ac_scan, reading most of buf only through the
 * filter. A needle occurrence at s is at least step + 3 bytes long, so
 * the probe at the multiple of step within [s, s + step) reads 4 of its
 * bytes from offsets 0 .. step-1, whose bit is set: a probe whose bit is
 * clear rules out every start it covers, (q - step, q]. After a set bit
 * the automaton runs from the first start the probe covers (or goes on
 * from where it stopped) until its state holds no partial match starting
 * at or before q: what it leaves is either ruled out or in its state. It
 * reads each byte at most once, so the scan stays linear whatever the
 * input, and with a clear bitmap it reads one byte in step.
 */
static struct ac_match ac_scan_sampled(const struct ac *a, const uint8_t *buf, size_t len, size_t limit)
{
	struct ac_match m = { SIZE_MAX, -1 };
	const size_t k = a->step;
	size_t best = limit;
	size_t i = 0;   /* the next byte the automaton reads */
	uint32_t t = 0; /* its state before that byte */

	if (!k)
		return ac_scan(a, buf, len, limit);
	for (size_t q = 0; q + 4 <= len; q += k) {
		size_t first = q >= k - 1 ? q - (k - 1) : 0;
		if (first >= best)
			break;
		if (!gram_set(a->grams, gram_hash(buf + q)))
			continue;
		if (first > i) {
			/* What lay between was ruled out by clear bits. */
			i = first;
			t = 0;
		}
		while (i < len) {
			t = ac_step(a, t, a->cls[buf[i++]]);
			if (t & AC_HIT) {
				int32_t h = a->node[ac_decode(a, t)].hit;
				size_t st = i - a->nlen[h];
				if (st < best) {
					best = st;
					m.start = st;
					m.needle = h;
				}
			}
			if (i - a->depth[ac_decode(a, t)] > q)
				break;
		}
		if (m.needle >= 0)
			break;
	}
	if (m.needle < 0)
		return m;
	/* A needle starting before the one found ends within maxlen of its
	 * start; every such start is in the state or was ruled out. */
	return ac_run(a, buf, len, i, t, m, best);
}

static inline bool is_escape(const uint8_t *buf, size_t len, size_t i)
{
	return buf[i] == '%' && len - i > 2 && hex_digit_value((unsigned char)buf[i + 1]) >= 0 && hex_digit_value((unsigned char)buf[i + 2]) >= 0;
}

/* The byte of the percent-decoded view at buf[*i], advancing *i. */
static inline uint8_t pct_next(const uint8_t *buf, size_t len, size_t *i)
{
	uint8_t c = buf[*i];
	if (is_escape(buf, len, *i)) {
		c = (uint8_t)(hex_digit_value((unsigned char)buf[*i + 1]) << 4 | hex_digit_value((unsigned char)buf[*i + 2]));
		*i += 3;
		return c;
	}
	*i += 1;
	return c;
}

/*
 * Like ac_scan over the percent-decoded view of buf[ws..we) ("%41" reads
 * as 'A'; '+' stays '+', the form needles cover it). ws must not be inside
 * an escape. Decoding keeps order, so the first match in the view is the
 * first in buf; its start is mapped back with a second walk. A decoded
 * offset never exceeds the raw one, so stopping on decoded offsets is
 * conservative.
 */
static struct ac_match ac_scan_pct_window(const struct ac *a, const uint8_t *buf, size_t len,
					  size_t ws, size_t we, size_t limit)
{
	struct ac_match m = { SIZE_MAX, -1 };
	size_t dbest = SIZE_MAX;
	uint32_t t = 0;

	for (size_t i = ws, di = 0; i < we; di++) {
		if (di + 1 >= a->maxlen &&
		    (di + 1 - a->maxlen >= dbest || ws + di + 1 - a->maxlen >= limit))
			break;
		t = ac_step(a, t, a->cls[pct_next(buf, len, &i)]);
		if (!(t & AC_HIT))
			continue;
		int32_t h = a->node[ac_decode(a, t)].hit;
		size_t st = di + 1 - a->nlen[h];
		if (st < dbest) {
			dbest = st;
			m.needle = h;
		}
	}
	if (m.needle < 0)
		return m;
	size_t i = ws;
	for (size_t di = 0; di < dbest; di++)
		(void)pct_next(buf, len, &i);
	if (i >= limit)
		return (struct ac_match){ SIZE_MAX, -1 };
	m.start = i;
	return m;
}

/*
 * The first match, starting before limit, in the percent-decoded view that
 * the raw scan could not see: one that contains an escape. Such a match
 * spans at most 3 * maxlen raw bytes, so only windows of that reach
 * around escapes are decoded; a body with a few escapes costs little more
 * than the raw scan. Each escape's window holds every match containing it.
 * Windows may overlap (by less than their length: the scan stays linear)
 * and start in order; a match reported before limit contains an escape
 * (the raw scan has set limit at or before any other), which lies before
 * the next window's escapes, so the first window with a match has the
 * first match.
 */
static struct ac_match ac_scan_pct(const struct ac *a, const uint8_t *buf, size_t len,
				   size_t limit)
{
	const size_t reach = 3 * a->maxlen + 3;
	size_t p = 0;

	while (p < len) {
		const uint8_t *q = memchr(buf + p, '%', len - p);
		if (!q)
			break;
		size_t e = (size_t)(q - buf);
		if (!is_escape(buf, len, e)) {
			p = e + 1;
			continue;
		}
		size_t ws = e > reach ? e - reach : 0, we = e + 3;
		/* A '%' is never inside an escape: step back out of one. */
		for (size_t k = 1; k <= 2 && ws >= k; k++)
			if (is_escape(buf, len, ws - k))
				ws -= k;
		/* Take in every escape within reach of the window's end. */
		for (p = we; p < len && p < we + reach;) {
			q = memchr(buf + p, '%', (we + reach < len ? we + reach : len) - p);
			if (!q)
				break;
			p = (size_t)(q - buf);
			if (is_escape(buf, len, p)) {
				we = p + 3;
				p += 3;
			} else {
				p++;
			}
		}
		we = we + reach < len ? we + reach : len;
		if (ws >= limit)
			break;
		struct ac_match m = ac_scan_pct_window(a, buf, len, ws, we, limit);
		if (m.needle >= 0)
			return m;
		p = we;
	}
	return (struct ac_match){ SIZE_MAX, -1 };
}

/* ---- built-in credential formats ---- */

enum pat {
	PAT_AWS,
	PAT_GITHUB,
	PAT_GITLAB,
	PAT_SLACK,
	PAT_STRIPE,
	PAT_GOOGLE,
	PAT_OPENAI,
	PAT_ANTHROPIC,
	PAT_PEM,
	PAT_JWT,
	PAT_NPM,
	PAT_PYPI,
	PAT_COUNT,
};

/* One row a format: its name, which a refusal gives ("pattern NAME"), and what
 * it matches. */
const char *const dlp_patterns[][2] = {
	[PAT_AWS] = { "aws-access-key-id", "AWS access key id: AKIA, ASIA, AGPA, AIDA, AROA, ANPA, ANVA or APKA and 16 characters of A-Z2-7" },
	[PAT_GITHUB] = { "github-token", "GitHub token: ghp_, gho_, ghu_, ghs_ or ghr_ and 36 alphanumerics; github_pat_, 22 alphanumerics, _ and 59 alphanumerics" },
	[PAT_GITLAB] = { "gitlab-token", "GitLab personal access token: glpat- and 20 of A-Za-z0-9_-" },
	[PAT_SLACK] = { "slack-token", "Slack token: xoxa-, xoxb-, xoxp-, xoxr- or xoxs- and at least 10 of A-Za-z0-9-" },
	[PAT_STRIPE] = { "stripe-secret-key", "Stripe live secret or restricted key: sk_live_ or rk_live_ and at least 24 alphanumerics" },
	[PAT_GOOGLE] = { "google-api-key", "Google API key: AIza and 35 of A-Za-z0-9_-" },
	[PAT_OPENAI] = { "openai-api-key", "OpenAI API key: sk- (also sk-proj-) and at least 40 of A-Za-z0-9_-, not sk-ant-" },
	[PAT_ANTHROPIC] = { "anthropic-api-key", "Anthropic API key: sk-ant- and at least 80 of A-Za-z0-9_-" },
	[PAT_PEM] = { "private-key-pem", "PEM private key header: -----BEGIN, optional words such as RSA, EC, OPENSSH or ENCRYPTED, then PRIVATE KEY-----" },
	[PAT_JWT] = { "jwt", "JSON Web Token: header and payload both starting with eyJ, three base64url parts separated by dots" },
	[PAT_NPM] = { "npm-token", "npm access token: npm_ and 36 alphanumerics" },
	[PAT_PYPI] = { "pypi-token", "PyPI API token: pypi-AgEIcHlwaS5vcmc and at least 50 base64url characters" },
	[PAT_COUNT] = { NULL, NULL },
};

static inline bool is_b64url(uint8_t c)
{
	return is_alnum(c) || c == '-' || c == '_';
}

static inline bool is_alnum_dash(uint8_t c)
{
	return is_alnum(c) || c == '-';
}

static inline bool is_b32_upper(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7');
}

static inline bool is_upper_digit(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Length of the run of bytes satisfying pred at p, counting at most max. */
static inline size_t run(const uint8_t *p, size_t n, bool (*pred)(uint8_t), size_t max)
{
	size_t i = 0;
	if (n > max)
		n = max;
	while (i < n && pred(p[i]))
		i++;
	return i;
}

static inline bool has(const uint8_t *p, size_t n, const char *lit, size_t litlen)
{
	return n >= litlen && memcmp(p, lit, litlen) == 0;
}

#define HAS(p, n, lit) has((p), (n), (lit), sizeof(lit) - 1)

/*
 * A token starts where the byte before it cannot belong to the same word:
 * "XAKIA..." is part of something longer. Escapes count as separators, so
 * the token in a JSON string after "\n" or "\u0022", or in a URL after
 * "%22", is still seen.
 */
static bool at_boundary(const uint8_t *b, size_t i)
{
	if (i == 0 || !is_alnum(b[i - 1]))
		return true;
	if (i >= 2 && b[i - 2] == '\\')
		return true;
	if (i >= 3 && b[i - 3] == '%' && hex_digit_value((unsigned char)b[i - 2]) >= 0 && hex_digit_value((unsigned char)b[i - 1]) >= 0)
		return true;
	if (i >= 6 && b[i - 6] == '\\' && b[i - 5] == 'u' && hex_digit_value((unsigned char)b[i - 4]) >= 0 &&
	    hex_digit_value((unsigned char)b[i - 3]) >= 0 && hex_digit_value((unsigned char)b[i - 2]) >= 0 && hex_digit_value((unsigned char)b[i - 1]) >= 0)
		return true;
	return false;
}

/* A word separator inside a PEM header: space, or space as a form or URL
 * encoding writes it. Returns its length, 0 if none. */
static size_t pem_sep(const uint8_t *p, size_t n)
{
	if (n >= 1 && (p[0] == ' ' || p[0] == '+'))
		return 1;
	if (HAS(p, n, "%20"))
		return 3;
	return 0;
}

static bool match_pem(const uint8_t *p, size_t n)
{
	size_t q = sizeof("-----BEGIN") - 1;

	if (!HAS(p, n, "-----BEGIN"))
		return false;
	/* At most four words before PRIVATE KEY: the scan stays bounded. */
	for (int words = 0; words <= 4; words++) {
		size_t s = pem_sep(p + q, n - q);
		if (!s)
			return false;
		q += s;
		if (HAS(p + q, n - q, "PRIVATE")) {
			size_t k = q + sizeof("PRIVATE") - 1;
			size_t s2 = pem_sep(p + k, n - k);
			if (s2 && HAS(p + k + s2, n - k - s2, "KEY")) {
				k += s2 + sizeof("KEY") - 1;
				if (HAS(p + k, n - k, "-----"))
					return true;
				size_t s3 = pem_sep(p + k, n - k);
				if (s3 && HAS(p + k + s3, n - k - s3, "BLOCK-----"))
					return true;
			}
		}
		size_t w = run(p + q, n - q, is_upper_digit, 24);
		if (w == 0)
			return false;
		q += w;
	}
	return false;
}

/*
 * header.payload.signature, header and payload "eyJ" (base64 of '{"') and
 * at least 10 more characters each, the signature at least 10. The header
 * run is unbounded; every later start inside the same run would see the
 * same run end and a shorter header, so after a check fails no start
 * before *skip is tried again. Each run is read at most twice.
 */
static bool match_jwt(const uint8_t *b, size_t len, size_t i, size_t *skip)
{
	size_t e1, q, e2;

	if (i < *skip || !HAS(b + i, len - i, "eyJ"))
		return false;
	e1 = i + run(b + i, len - i, is_b64url, SIZE_MAX);
	*skip = e1;
	if (e1 - i < 13 || e1 >= len || b[e1] != '.')
		return false;
	q = e1 + 1;
	if (!HAS(b + q, len - q, "eyJ"))
		return false;
	e2 = q + run(b + q, len - q, is_b64url, SIZE_MAX);
	if (e2 - q < 13 || e2 >= len || b[e2] != '.')
		return false;
	return run(b + e2 + 1, len - e2 - 1, is_b64url, 10) == 10;
}

/* The pattern that starts at b[i], or -1. */
static int match_at(const uint8_t *b, size_t len, size_t i, size_t *jwt_skip)
{
	const uint8_t *p = b + i;
	size_t n = len - i;

	if (p[0] == '-')
		return match_pem(p, n) ? PAT_PEM : -1;
	if (!at_boundary(b, i))
		return -1;
	switch (p[0]) {
	case 'A':
		if (n >= 20 && (HAS(p, n, "AKIA") || HAS(p, n, "ASIA") || HAS(p, n, "AGPA") ||
				HAS(p, n, "AIDA") || HAS(p, n, "AROA") || HAS(p, n, "ANPA") ||
				HAS(p, n, "ANVA") || HAS(p, n, "APKA")) &&
		    run(p + 4, n - 4, is_b32_upper, 16) == 16)
			return PAT_AWS;
		if (HAS(p, n, "AIza") && run(p + 4, n - 4, is_b64url, 35) == 35)
			return PAT_GOOGLE;
		return -1;
	case 'g':
		if (n >= 4 && p[1] == 'h' && p[2] && strchr("pousr", p[2]) && p[3] == '_' &&
		    run(p + 4, n - 4, is_alnum, 36) == 36)
			return PAT_GITHUB;
		if (HAS(p, n, "github_pat_") && run(p + 11, n - 11, is_alnum, 22) == 22 &&
		    n > 33 && p[33] == '_' && run(p + 34, n - 34, is_alnum, 59) == 59)
			return PAT_GITHUB;
		if (HAS(p, n, "glpat-") && run(p + 6, n - 6, is_b64url, 20) == 20)
			return PAT_GITLAB;
		return -1;
	case 'x':
		if (n >= 5 && HAS(p, n, "xox") && p[3] && strchr("abprs", p[3]) && p[4] == '-' &&
		    run(p + 5, n - 5, is_alnum_dash, 10) == 10)
			return PAT_SLACK;
		return -1;
	case 's':
		if (HAS(p, n, "sk_live_") && run(p + 8, n - 8, is_alnum, 24) == 24)
			return PAT_STRIPE;
		if (HAS(p, n, "sk-ant-"))
			return run(p + 7, n - 7, is_b64url, 80) == 80 ? PAT_ANTHROPIC : -1;
		if (HAS(p, n, "sk-") && run(p + 3, n - 3, is_b64url, 40) == 40)
			return PAT_OPENAI;
		return -1;
	case 'r':
		if (HAS(p, n, "rk_live_") && run(p + 8, n - 8, is_alnum, 24) == 24)
			return PAT_STRIPE;
		return -1;
	case 'e':
		return match_jwt(b, len, i, jwt_skip) ? PAT_JWT : -1;
	case 'n':
		if (HAS(p, n, "npm_") && run(p + 4, n - 4, is_alnum, 36) == 36)
			return PAT_NPM;
		return -1;
	case 'p':
		if (HAS(p, n, "pypi-AgEIcHlwaS5vcmc") && run(p + 20, n - 20, is_b64url, 50) == 50)
			return PAT_PYPI;
		return -1;
	default:
		return -1;
	}
}

/*
 * A cheap filter in front of match_at: the first two bytes of every
 * prefix. A pair can start a pattern when pat_first[b0] & pat_second[b1].
 * WARNING: a prefix added to match_at must be added here, or it is never
 * tried.
 */
enum {
	F_A = 1 << 0, /* AKIA ASIA AGPA AIDA AROA ANPA ANVA APKA AIza */
	F_G = 1 << 1, /* ghp_ .. ghr_ github_pat_ glpat- */
	F_X = 1 << 2, /* xox */
	F_S = 1 << 3, /* sk_live_ sk- */
	F_R = 1 << 4, /* rk_live_ */
	F_D = 1 << 5, /* ----- */
	F_E = 1 << 6, /* eyJ */
	F_N = 1 << 7, /* npm_ */
	F_P = 1 << 8, /* pypi- */
};

static const uint16_t pat_first[256] = {
	['A'] = F_A, ['g'] = F_G, ['x'] = F_X, ['s'] = F_S, ['r'] = F_R,
	['-'] = F_D, ['e'] = F_E, ['n'] = F_N, ['p'] = F_P,
};

static const uint16_t pat_second[256] = {
	['K'] = F_A, ['S'] = F_A, ['G'] = F_A, ['I'] = F_A, ['R'] = F_A, ['N'] = F_A,
	['P'] = F_A, ['h'] = F_G, ['i'] = F_G, ['l'] = F_G, ['o'] = F_X, ['k'] = F_S | F_R,
	['-'] = F_D, ['y'] = F_E | F_P, ['p'] = F_N,
};

/* The first pattern by start position; *start is set when one is found.
 * Each position costs a bounded amount of work but JWT runs, see
 * match_jwt. */
static int pattern_scan(const uint8_t *b, size_t len, size_t *start)
{
	size_t jwt_skip = 0;

	for (size_t i = 0; i + 1 < len; i++) {
		if (!(pat_first[b[i]] & pat_second[b[i + 1]]))
			continue;
		int p = match_at(b, len, i, &jwt_skip);
		if (p >= 0) {
			*start = i;
			return p;
		}
	}
	return -1;
}

static bool scan(const struct dlp *d, const uint8_t *buf, size_t len, bool patterns, char *what,
		 size_t what_len)
{
	size_t pstart = SIZE_MAX;
	int pat;
	struct ac_match m = { SIZE_MAX, -1 };
	bool decoded = false;

	if (what && what_len)
		what[0] = '\0';
	if (!buf || len == 0)
		return false;
	pat = patterns ? pattern_scan(buf, len, &pstart) : -1;
	/* At the same start a secret wins: its name says more. */
	if (d && d->ac && d->ac->maxlen) {
		size_t limit = pat >= 0 ? pstart + 1 : SIZE_MAX;
		m = ac_scan_sampled(d->ac, buf, len, limit);
		if (memchr(buf, '%', len)) {
			struct ac_match u = ac_scan_pct(d->ac, buf, len,
							m.needle >= 0 ? m.start : limit);
			if (u.needle >= 0) {
				m = u;
				decoded = true;
			}
		}
	}
	if (m.needle >= 0) {
		const struct needle *nd = &d->needles[m.needle];
		if (what && what_len)
			snprintf(what, what_len, "secret %s (%s)", d->names[nd->secret],
				 enc_label((enum enc)nd->enc, decoded));
		return true;
	}
	if (pat >= 0) {
		if (what && what_len)
			snprintf(what, what_len, "pattern %s", dlp_patterns[pat][0]);
		return true;
	}
	return false;
}

bool dlp_scan(const struct dlp *d, const uint8_t *buf, size_t len, char *what, size_t what_len)
{
	return scan(d, buf, len, true, what, what_len);
}

bool dlp_scan_secrets(const struct dlp *d, const uint8_t *buf, size_t len, char *what, size_t what_len)
{
	return scan(d, buf, len, false, what, what_len);
}

/* ---- streams ---- */

/*
 * A stream is scanned as a sliding window: every feed scans the bytes it
 * holds back from before and the new ones together. A needle occurrence
 * spans at most 3 * maxlen raw bytes (every byte percent-escaped), so one
 * that ends in the new bytes starts within the held-back window: it is
 * found whole however the stream was cut (a secret split over two reads,
 * two chunks, a chunk-size line), and none of its bytes has been released
 * yet. Cost: the window is scanned again on every feed; memory: the
 * window and one feed.
 */
struct dlp_stream {
	const struct dlp *d;
	size_t window;
	uint8_t *buf;    /* held-back bytes, then the last feed */
	size_t len, cap;
	size_t high;     /* bytes of buf ever written: what is wiped */
	size_t released; /* buf[0..released) was handed out by the last call */
};

size_t dlp_window(const struct dlp *d)
{
	return d && d->ac && d->ac->maxlen ? 3 * d->ac->maxlen + 3 : 0;
}

int dlp_stream_new(const struct dlp *d, struct dlp_stream **out)
{
	struct dlp_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->d = d;
	s->window = dlp_window(d);
	*out = s;
	return 0;
}

void dlp_stream_free(struct dlp_stream *s)
{
	if (!s)
		return;
	/* The window may hold the start of a secret that never completed,
	 * or after a hit the secret itself, also where compaction moved it
	 * from. */
	if (s->buf)
		explicit_bzero(s->buf, s->high);
	free(s->buf);
	free(s);
}

static void stream_compact(struct dlp_stream *s)
{
	if (s->released) {
		memmove(s->buf, s->buf + s->released, s->len - s->released);
		s->len -= s->released;
		s->released = 0;
	}
}

int dlp_stream_feed(struct dlp_stream *s, const uint8_t *p, size_t n, const uint8_t **out, size_t *out_len,
		    char *what, size_t what_len)
{
	*out = NULL;
	*out_len = 0;
	stream_compact(s);
	if (s->len + n > s->cap) {
		size_t cap = s->len + n > 2 * s->cap ? s->len + n : 2 * s->cap;
		uint8_t *b = malloc(cap);
		if (!b)
			return -ENOMEM;
		if (s->len)
			memcpy(b, s->buf, s->len);
		wipe_free(s->buf, s->high);
		s->buf = b;
		s->cap = cap;
		s->high = s->len;
	}
	if (n)
		memcpy(s->buf + s->len, p, n);
	s->len += n;
	if (s->len > s->high)
		s->high = s->len;
	if (dlp_scan_secrets(s->d, s->buf, s->len, what, what_len))
		return 1;
	s->released = s->len > s->window ? s->len - s->window : 0;
	*out = s->buf;
	*out_len = s->released;
	return 0;
}

void dlp_stream_end(struct dlp_stream *s, const uint8_t **out, size_t *out_len)
{
	stream_compact(s);
	s->released = s->len;
	*out = s->buf;
	*out_len = s->len;
}
