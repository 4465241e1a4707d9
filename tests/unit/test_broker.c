/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the credential broker. Requests are real request bytes
 * run through the HTTP parser, decided against a policy loaded from YAML,
 * and judged by the upstream head the proxy would send. Every attack (a
 * placeholder out of place, on another host, port, method or path, in a
 * header name, hidden in basic authentication, a git push to a ref the
 * binding does not name) sits next to the legitimate request it differs
 * from; and after every decision the reason is searched for every secret.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "net/broker.h"
#include "net/http.h"
#include "policy/policy.h"
#include "util/base64.h"
#include "util/buf.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- placeholders and secrets ---- */

#define PH_HDR "airlock_ph_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3d"
#define PH_BAS "airlock_ph_b00b1e5c0ffee0ddba11fa11ed5eed5caff01d42"
#define PH_QRY "airlock_ph_9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d"
#define PH_GIT "airlock_ph_deadbeef00112233445566778899aabbccddeeff"
#define PH_GOT "airlock_ph_c0c0a0b0d0e0f01020304050607080900a0b0c0d"

#define S_HDR "hdr-SECRET-9f8e7d"
#define S_BAS "bas:ic-SECRET/42"
#define S_QRY "a b/c+d%&=Q-SECRET"
#define S_QRY_PCT "a%20b%2Fc%2Bd%25%26%3DQ-SECRET"
#define S_AHDR "ALWAYS-hdr-SECRET"
#define S_ABAS "ALWAYS-basic-SECRET"
#define S_AQ "always q+SECRET"
#define S_AQ_PCT "always%20q%2BSECRET"
#define S_GIT "git-SECRET-77"
#define S_GOT "git-other-SECRET"
#define S_BOT "gitbot-SECRET"

/* base64("svc:" PH_BAS) and base64("x-access-token:" PH_GIT), as a client
 * sends them (computed with base64(1), not with our encoder). */
#define B64_SVC_PH "c3ZjOmFpcmxvY2tfcGhfYjAwYjFlNWMwZmZlZTBkZGJhMTFmYTExZWQ1ZWVkNWNhZmYwMWQ0Mg=="
#define B64_GIT_PH                                                                                         \
	"eC1hY2Nlc3MtdG9rZW46YWlybG9ja19waF9kZWFkYmVlZjAwMTEyMjMzNDQ1NTY2Nzc4ODk5YWFiYmNjZGRlZWZm"
/* ... and what must reach the server instead. */
#define B64_SVC_SECRET "c3ZjOmJhczppYy1TRUNSRVQvNDI="
#define B64_BOT_ABAS "Ym90OkFMV0FZUy1iYXNpYy1TRUNSRVQ="
#define B64_GIT_SECRET "eC1hY2Nlc3MtdG9rZW46Z2l0LVNFQ1JFVC03Nw=="

static const char *const secrets[] = { S_HDR, S_BAS, S_QRY, S_QRY_PCT, S_AHDR, S_ABAS,
				       S_AQ,  S_AQ_PCT, S_GIT, S_GOT, S_BOT };

static const char policy_yaml[] =
	"version: 1\n"
	"network:\n"
	"  endpoints:\n"
	"    - {host: api.example.com, ports: [443, 8443], tls: intercept}\n"
	"    - {host: other.example.com, ports: [443], tls: intercept}\n"
	"    - {host: basic.example.com, ports: [443], tls: intercept}\n"
	"    - {host: query.example.com, ports: [443], tls: intercept}\n"
	"    - {host: always.example.com, ports: [443], tls: intercept}\n"
	"    - {host: git.example.com, ports: [443], tls: intercept}\n"
	"    - {host: gitbot.example.com, ports: [443], tls: intercept}\n"
	"    - {host: multi.example.com, ports: [443], tls: intercept}\n"
	"credentials:\n"
	"  - name: hdr\n"
	"    source: env:HDR_TOKEN\n"
	"    env: HDR_TOKEN\n"
	"    bindings:\n"
	"      - id: hdr-api\n"
	"        host: api.example.com\n"
	"        methods: [GET, POST]\n"
	"        paths: [\"/v1/**\"]\n"
	"  - name: basic\n"
	"    source: env:BASIC_TOKEN\n"
	"    env: BASIC_TOKEN\n"
	"    bindings:\n"
	"      - {id: basic-api, host: basic.example.com, basic: {username: svc}, paths: [\"/b/**\"]}\n"
	"  - name: qry\n"
	"    source: env:QRY_TOKEN\n"
	"    env: QRY_TOKEN\n"
	"    bindings:\n"
	"      - {id: qry-api, host: query.example.com, query: api_key}\n"
	"  - name: always_hdr\n"
	"    source: env:AHDR\n"
	"    inject: always\n"
	"    bindings:\n"
	"      - {id: always-hdr, host: always.example.com, header: X-Api-Key, template: \"key {secret}\",\n"
	"         paths: [\"/h/**\"]}\n"
	"  - name: always_basic\n"
	"    source: env:ABAS\n"
	"    inject: always\n"
	"    bindings:\n"
	"      - {id: always-basic, host: always.example.com, basic: {username: bot}, paths: [\"/b/**\"]}\n"
	"  - name: always_q\n"
	"    source: env:AQ\n"
	"    inject: always\n"
	"    bindings:\n"
	"      - {id: always-q, host: always.example.com, query: api_key, paths: [\"/q/**\"]}\n"
	"  - name: git\n"
	"    source: env:GIT_TOKEN\n"
	"    env: GIT_TOKEN\n"
	"    bindings:\n"
	"      - id: git-widget\n"
	"        host: git.example.com\n"
	"        basic: {username: x-access-token}\n"
	"        git:\n"
	"          repos: [\"/acme/widget.git\"]\n"
	"          push: [\"refs/heads/agent/**\"]\n"
	"  - name: git_other\n"
	"    source: env:GIT_OTHER\n"
	"    env: GIT_OTHER\n"
	"    bindings:\n"
	"      - id: git-other\n"
	"        host: git.example.com\n"
	"        basic: {username: x-access-token}\n"
	"        git: {repos: [\"/acme/other.git\"]}\n"
	"  - name: gitbot\n"
	"    source: env:GITBOT\n"
	"    inject: always\n"
	"    bindings:\n"
	"      - id: gitbot-widget\n"
	"        host: gitbot.example.com\n"
	"        basic: {username: bot}\n"
	"        git:\n"
	"          repos: [\"/acme/widget.git\"]\n"
	"          push: [\"refs/heads/agent/**\"]\n"
	"  - name: multi\n"
	"    source: env:MULTI\n"
	"    inject: always\n"
	"    bindings:\n"
	"      - id: multi-push\n"
	"        host: multi.example.com\n"
	"        basic: {username: bot}\n"
	"        git: {repos: [\"/acme/widget.git\"], fetch: false, push: [\"refs/heads/agent/**\"]}\n"
	"      - id: multi-fetch\n"
	"        host: multi.example.com\n"
	"        basic: {username: bot}\n"
	"        git: {repos: [\"/acme/widget.git\"]}\n";

static const struct {
	const char *name, *placeholder, *secret;
} creds[] = {
	{ "hdr", PH_HDR, S_HDR },	  { "basic", PH_BAS, S_BAS },	    { "qry", PH_QRY, S_QRY },
	{ "always_hdr", "", S_AHDR },	  { "always_basic", "", S_ABAS },   { "always_q", "", S_AQ },
	{ "git", PH_GIT, S_GIT },	  { "git_other", PH_GOT, S_GOT },  { "gitbot", "", S_BOT },
	{ "multi", "", "multi-SECRET" },
};

static const struct policy_ctx ctx = { .home = "/home/u", .cwd = "/work/proj" };

static struct policy *pol;
static struct broker *brk;

static struct policy *load_policy(void)
{
	struct error err = { 0 };
	struct policy *p = NULL;
	if (policy_load_buffer("policy.yaml", "/etc/airlock", policy_yaml, strlen(policy_yaml), &ctx, &p,
			       &err) < 0)
		fail_msg("test policy does not load: %s", err.msg);
	return p;
}

static struct broker *new_broker(const struct policy *p)
{
	struct broker *b = broker_new(p);
	assert_non_null(b);
	assert_int_equal(b->n, ARRAY_LEN(creds));
	assert_false(broker_complete(b));
	for (size_t i = 0; i < ARRAY_LEN(creds); i++)
		assert_int_equal(broker_set(b, creds[i].name, creds[i].placeholder,
					    (const uint8_t *)creds[i].secret, strlen(creds[i].secret)),
				 0);
	assert_true(broker_complete(b));
	return b;
}

static int setup(void **state)
{
	(void)state;
	pol = load_policy();
	brk = new_broker(pol);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	broker_free(brk);
	policy_free(pol);
	return 0;
}

static void assert_no_secret(const char *what, const char *s, size_t len)
{
	for (size_t i = 0; i < ARRAY_LEN(secrets); i++)
		if (memmem(s, len, secrets[i], strlen(secrets[i])))
			fail_msg("%s holds the secret %s: %.*s", what, secrets[i], (int)len, s);
}

static const char *placeholder_of(const char *credential)
{
	for (size_t i = 0; i < ARRAY_LEN(creds); i++)
		if (strcmp(creds[i].name, credential) == 0)
			return creds[i].placeholder;
	fail_msg("no credential %s", credential);
	return "";
}

/* ---- running requests ---- */

struct run {
	char *raw; /* the request bytes; req points into them */
	size_t len;
	struct http_request req;
	struct buf side;
	struct buf head; /* the upstream head after the broker */
	struct buf orig; /* the upstream head of the same bytes without it */
	struct broker_result res;
};

static void run_free(struct run *r)
{
	buf_wipe(&r->side);
	buf_wipe(&r->head);
	buf_free(&r->orig);
	free(r->raw);
	free(r);
}

static void run_freep(struct run **r)
{
	if (*r)
		run_free(*r);
}
#define _cleanup_run_ __attribute__((cleanup(run_freep)))

static void parse(const char *raw, size_t len, struct http_request *req)
{
	int status = 0;
	struct error err = { 0 };
	int n = http_parse_request(raw, len, req, &status, &err);
	if (n <= 0)
		fail_msg("test request does not parse (%d, status %d): %s\n%.*s", n, status, err.msg, (int)len,
			 raw);
}

/* Run raw[0..len) (head and body), bound for host:port, through the
 * broker; check what holds for every verdict. The caller frees. */
static struct run *apply_n(const char *host, uint16_t port, const char *raw, size_t len)
{
	struct run *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->raw = malloc(len + 1);
	assert_non_null(r->raw);
	memcpy(r->raw, raw, len);
	r->raw[len] = '\0';
	r->len = len;

	struct http_request *plain = calloc(1, sizeof(*plain));
	assert_non_null(plain);
	parse(r->raw, len, plain);
	assert_int_equal(http_build_upstream_head(plain, false, &r->orig), 0);
	free(plain);

	parse(r->raw, len, &r->req);
	size_t hl = r->req.head_len;
	int rc = broker_apply(brk, host, port, &r->req, r->raw + hl, len - hl, &r->side, &r->res);
	assert_int_equal(rc, 0);
	assert_no_secret("the reason", r->res.reason, strlen(r->res.reason));
	assert_int_equal(http_build_upstream_head(&r->req, false, &r->head), 0);

	switch (r->res.verdict) {
	case BROKER_PASS:
		assert_null(r->res.credential);
		assert_string_equal(r->res.reason, "");
		/* Unchanged, byte for byte. */
		assert_int_equal(r->head.len, r->orig.len);
		assert_memory_equal(r->head.data, r->orig.data, r->orig.len);
		assert_no_secret("a passed head", r->head.data, r->head.len);
		break;
	case BROKER_INJECT: {
		assert_non_null(r->res.credential);
		assert_non_null(r->res.binding);
		const char *ph = placeholder_of(r->res.credential);
		if (ph[0] && memmem(r->head.data, r->head.len, ph, strlen(ph)))
			fail_msg("the placeholder of %s survived injection:\n%s", r->res.credential, r->head.data);
		break;
	}
	case BROKER_MISUSE:
	case BROKER_DENY:
		assert_non_null(r->res.credential);
		assert_true(strlen(r->res.reason) > 0);
		/* Nothing was pointed at the secret. */
		assert_no_secret("a refused head", r->head.data, r->head.len);
		break;
	}
	return r;
}

static struct run *apply_s(const char *host, uint16_t port, const char *raw)
{
	return apply_n(host, port, raw, strlen(raw));
}

/* printf into a fresh string (text requests only). */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, f);
	int n = vasprintf(&s, f, ap);
	va_end(ap);
	assert_true(n >= 0);
	return s;
}

static enum broker_verdict verdict_of(const char *host, uint16_t port, const char *raw)
{
	_cleanup_run_ struct run *r = apply_s(host, port, raw);
	return r->res.verdict;
}

/* The same, for a request built with fmt (freed here). */
static enum broker_verdict verdict_f(const char *host, uint16_t port, char *raw)
{
	enum broker_verdict v = verdict_of(host, port, raw);
	free(raw);
	return v;
}

static bool has(const struct buf *b, const char *s)
{
	return memmem(b->data, b->len, s, strlen(s)) != NULL;
}

/* How many header lines of head are called name (any case). */
static size_t count_header(const struct buf *head, const char *name)
{
	size_t n = 0, nl = strlen(name);
	const char *p = strstr(head->data, "\r\n");
	while (p && p[2] != '\r') {
		p += 2;
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':')
			n++;
		p = strstr(p, "\r\n");
	}
	return n;
}

/* The value of the first header called name, copied into out. */
static const char *header_value(const struct buf *head, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	const char *p = strstr(head->data, "\r\n");
	while (p && p[2] != '\r') {
		p += 2;
		const char *e = strstr(p, "\r\n");
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			while (*v == ' ')
				v++;
			snprintf(out, cap, "%.*s", (int)(e - v), v);
			return out;
		}
		p = e;
	}
	fail_msg("no header %s in\n%s", name, head->data);
	return NULL;
}

static void assert_first_line(const struct buf *head, const char *line)
{
	size_t n = strlen(line);
	if (head->len < n + 2 || memcmp(head->data, line, n) != 0 || memcmp(head->data + n, "\r\n", 2) != 0)
		fail_msg("request line is not \"%s\":\n%s", line, head->data);
}

/* ---------------------------------------------------------------- */
/* Placeholders                                                      */

static bool ph_form(const char *p)
{
	if (strlen(p) != BROKER_PLACEHOLDER_LEN || strncmp(p, "airlock_ph_", 11) != 0)
		return false;
	for (size_t i = 11; i < BROKER_PLACEHOLDER_LEN; i++)
		if (!strchr("0123456789abcdef", p[i]))
			return false;
	return true;
}

static int cmp_ph(const void *a, const void *b)
{
	return memcmp(a, b, BROKER_PLACEHOLDER_LEN + 1);
}

static void test_make_placeholder(void **state)
{
	(void)state;
	enum { N = 4096 };
	char(*v)[BROKER_PLACEHOLDER_LEN + 1] = calloc(N, sizeof(*v));
	assert_non_null(v);
	unsigned seen_digit[16] = { 0 };
	for (size_t i = 0; i < N; i++) {
		memset(v[i], 'X', sizeof(v[i]));
		assert_int_equal(broker_make_placeholder(v[i]), 0);
		if (!ph_form(v[i]))
			fail_msg("placeholder of the wrong form: %s", v[i]);
		for (size_t k = BROKER_PREFIX_LEN; k < BROKER_PLACEHOLDER_LEN; k++)
			seen_digit[v[i][k] <= '9' ? v[i][k] - '0' : v[i][k] - 'a' + 10]++;
	}
	/* Every digit occurs: not a constant, not only decimal digits. */
	for (size_t d = 0; d < 16; d++)
		assert_true(seen_digit[d] > 0);
	qsort(v, N, sizeof(*v), cmp_ph);
	for (size_t i = 1; i < N; i++)
		if (memcmp(v[i - 1], v[i], sizeof(v[i])) == 0)
			fail_msg("placeholder made twice: %s", v[i]);

	/* A made placeholder is one broker_set accepts. */
	struct broker *b = broker_new(pol);
	assert_non_null(b);
	assert_int_equal(broker_set(b, "hdr", v[0], (const uint8_t *)"s3cr3t-value", 12), 0);
	assert_string_equal(b->v[0].placeholder, v[0]);
	broker_free(b);
	free(v);
}

static const struct broker_cred *cred_named(const char *name)
{
	for (size_t i = 0; i < brk->n; i++)
		if (strcmp(brk->v[i].pol->name, name) == 0)
			return &brk->v[i];
	fail_msg("no credential %s", name);
	return NULL;
}

static const struct broker_cred *find_s(const char *s)
{
	return broker_find(brk, s, strlen(s));
}

static void test_find(void **state)
{
	(void)state;
	/* Each credential's placeholder, anywhere in a buffer. */
	for (size_t i = 0; i < ARRAY_LEN(creds); i++) {
		const char *ph = creds[i].placeholder;
		if (!ph[0])
			continue;
		const struct broker_cred *want = cred_named(creds[i].name);
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", ph);
		assert_ptr_equal(find_s(buf), want);
		snprintf(buf, sizeof(buf), "Bearer %s", ph);
		assert_ptr_equal(find_s(buf), want);
		snprintf(buf, sizeof(buf), "%s.example.com", ph);
		assert_ptr_equal(find_s(buf), want);
		snprintf(buf, sizeof(buf), "x=airlock_ph_&y=airlock_ph_airlock_ph_%s&z", ph + BROKER_PREFIX_LEN);
		assert_ptr_equal(find_s(buf), want);
		/* Bytes that are not text around it. */
		char bin[128];
		memset(bin, 0, sizeof(bin));
		memcpy(bin + 40, ph, BROKER_PLACEHOLDER_LEN);
		assert_ptr_equal(broker_find(brk, bin, sizeof(bin)), want);
		/* The buffer's length is respected: cut one byte short. */
		assert_null(broker_find(brk, bin, 40 + BROKER_PLACEHOLDER_LEN - 1));
		assert_ptr_equal(broker_find(brk, bin, 40 + BROKER_PLACEHOLDER_LEN), want);
	}
	/* Two placeholders: one of them is found. */
	const struct broker_cred *two = find_s("a " PH_QRY " b " PH_HDR);
	assert_true(two == cred_named("qry") || two == cred_named("hdr"));

	/* Near misses: every hex digit changed in turn, the case changed,
	 * truncated, the prefix alone, the digits alone, another prefix. */
	for (size_t k = BROKER_PREFIX_LEN; k < BROKER_PLACEHOLDER_LEN; k++) {
		char near[BROKER_PLACEHOLDER_LEN + 8];
		snprintf(near, sizeof(near), "%s", PH_HDR);
		near[k] = near[k] == '0' ? '1' : '0';
		assert_null(find_s(near));
		snprintf(near, sizeof(near), "%s", PH_HDR);
		if (near[k] >= 'a' && near[k] <= 'f') {
			near[k] = (char)(near[k] - 'a' + 'A');
			assert_null(find_s(near));
		}
	}
	char cut[BROKER_PLACEHOLDER_LEN + 1];
	for (size_t n = 0; n < BROKER_PLACEHOLDER_LEN; n++) {
		snprintf(cut, sizeof(cut), "%.*s", (int)n, PH_HDR);
		assert_null(find_s(cut));
		char padded[BROKER_PLACEHOLDER_LEN * 2];
		snprintf(padded, sizeof(padded), "%s and more text after it", cut);
		assert_null(find_s(padded));
	}
	assert_null(find_s("airlock_ph_"));
	assert_null(find_s("airlock_ph_ airlock_ph_ airlock_ph_ airlock_ph_ airlock_ph_"));
	assert_null(find_s("0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3d"));
	assert_null(find_s("airlock-ph_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3d"));
	assert_null(find_s("AIRLOCK_PH_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3d"));
	/* A placeholder of the right form that is no credential's. */
	assert_null(find_s("airlock_ph_1111111111111111111111111111111111111111"));
	assert_null(broker_find(brk, NULL, 0));
	assert_null(broker_find(NULL, PH_HDR, strlen(PH_HDR)));
	assert_null(broker_find(brk, PH_HDR, 0));
}

/* ---------------------------------------------------------------- */
/* broker_set                                                        */

static void test_set_refusals(void **state)
{
	(void)state;
	struct broker *b = broker_new(pol);
	assert_non_null(b);
	const uint8_t *good = (const uint8_t *)"good-secret";

	assert_int_equal(broker_set(b, "nope", PH_HDR, good, 11), -ENOENT);
	assert_int_equal(broker_set(b, "HDR", PH_HDR, good, 11), -ENOENT);
	assert_int_equal(broker_set(b, "hd", PH_HDR, good, 11), -ENOENT);

	static const char *const bad_ph[] = {
		"airlock_ph_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3",   /* 39 digits */
		"airlock_ph_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3d0", /* 41 */
		"airlock_ph_0F1E2D3C4B5A69788796A5B4C3D2E1F00A1B2C3D",  /* upper case */
		"airlock_ph_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3g",  /* not hex */
		"airlock_pH_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3d",  /* prefix */
		"xairlock_ph_0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3",  /* shifted */
		"airlock_ph_0f1e2d3c4b5a69788796a5b4c\r\n2e1f00a1b2c3d", /* a line break */
		"airlock_ph_",
		"airlock_ph_ 0f1e2d3c4b5a69788796a5b4c3d2e1f00a1b2c3",
	};
	for (size_t i = 0; i < ARRAY_LEN(bad_ph); i++)
		if (broker_set(b, "hdr", bad_ph[i], good, 11) != -EINVAL)
			fail_msg("placeholder accepted: %s", bad_ph[i]);
	assert_false(broker_complete(b));

	assert_int_equal(broker_set(b, "hdr", PH_HDR, good, 0), -EINVAL);
	uint8_t *big = malloc(BROKER_MAX_SECRET + 1);
	assert_non_null(big);
	memset(big, 'k', BROKER_MAX_SECRET + 1);
	assert_int_equal(broker_set(b, "hdr", PH_HDR, big, BROKER_MAX_SECRET + 1), -EINVAL);
	static const char *const bad_secret[] = { "ab\rcd", "ab\ncd", "abcd\r\n", "\nabcd" };
	for (size_t i = 0; i < ARRAY_LEN(bad_secret); i++)
		assert_int_equal(broker_set(b, "hdr", PH_HDR, (const uint8_t *)bad_secret[i], strlen(bad_secret[i])),
				 -EINVAL);
	assert_int_equal(broker_set(b, "hdr", PH_HDR, (const uint8_t *)"ab\0cd", 5), -EINVAL);
	assert_int_equal(broker_set(b, "hdr", PH_HDR, (const uint8_t *)"abcd\0", 5), -EINVAL);
	assert_null(b->v[0].secret);
	assert_string_equal(b->v[0].placeholder, "");

	/* Too short to be told apart from ordinary bytes in a response. */
	assert_int_equal(broker_set(b, "hdr", PH_HDR, (const uint8_t *)"x", 1), -EINVAL);
	assert_int_equal(broker_set(b, "hdr", PH_HDR, (const uint8_t *)"1234567", 7), -EINVAL);

	/* The neighbours: the longest secret, a tab, bytes above 0x7f, the
	 * shortest. */
	assert_int_equal(broker_set(b, "hdr", PH_HDR, big, BROKER_MAX_SECRET), 0);
	assert_int_equal(b->v[0].secret_len, BROKER_MAX_SECRET);
	assert_int_equal(broker_set(b, "hdr", PH_HDR, (const uint8_t *)"a\tb\xc3\xa9xyzw", 9), 0);
	assert_int_equal(broker_set(b, "hdr", PH_HDR, (const uint8_t *)"12345678", 8), 0);
	free(big);

	/* A refusal leaves what was set before. */
	assert_int_equal(broker_set(b, "hdr", "airlock_ph_", good, 11), -EINVAL);
	assert_int_equal(broker_set(b, "hdr", PH_BAS, (const uint8_t *)"a\nb", 3), -EINVAL);
	assert_string_equal(b->v[0].placeholder, PH_HDR);
	assert_int_equal(b->v[0].secret_len, 8);
	assert_memory_equal(b->v[0].secret, "12345678", 8);

	/* No placeholder at all (inject: always) is a form of its own. */
	assert_int_equal(broker_set(b, "always_hdr", "", good, 11), 0);
	assert_false(broker_complete(b));
	broker_free(b);
	broker_free(NULL);
}

/* ---------------------------------------------------------------- */
/* Header binding                                                    */

#define API "api.example.com"
#define HDR_OK                                                                                             \
	"GET /v1/items?x=1 HTTP/1.1\r\n"                                                                    \
	"Host: api.example.com\r\n"                                                                         \
	"Accept: */*\r\n"                                                                                   \
	"Authorization: Bearer " PH_HDR "\r\n"                                                              \
	"X-Other: keep me\r\n"                                                                              \
	"\r\n"

static void test_header_inject(void **state)
{
	(void)state;
	_cleanup_run_ struct run *r = apply_s(API, 443, HDR_OK);
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_string_equal(r->res.credential, "hdr");
	assert_string_equal(r->res.binding, "hdr-api");
	assert_first_line(&r->head, "GET /v1/items?x=1 HTTP/1.1");
	assert_true(has(&r->head, "\r\nAuthorization: Bearer " S_HDR "\r\n"));
	assert_int_equal(count_header(&r->head, "Authorization"), 1);
	assert_true(has(&r->head, "\r\nAccept: */*\r\n"));
	assert_true(has(&r->head, "\r\nX-Other: keep me\r\n"));
	assert_true(has(&r->head, "\r\nHost: api.example.com\r\n"));
	assert_false(has(&r->head, "airlock_ph_"));
	/* Only the value changed: the same head with the secret typed in. */
	char *want = fmt("%s", r->orig.data);
	char *at = strstr(want, PH_HDR);
	assert_non_null(at);
	memmove(at + strlen(S_HDR), at + strlen(PH_HDR), strlen(at + strlen(PH_HDR)) + 1);
	memcpy(at, S_HDR, strlen(S_HDR));
	assert_string_equal(r->head.data, want);
	free(want);

	/* POST with a body that does not hold it, a deeper path, the
	 * placeholder between other words of the value. */
	_cleanup_run_ struct run *p = apply_s(API, 443,
					      "POST /v1/a/b/c HTTP/1.1\r\nHost: api.example.com\r\n"
					      "Authorization: token " PH_HDR " extra\r\n"
					      "Content-Length: 7\r\n\r\n{\"a\":1}");
	assert_int_equal(p->res.verdict, BROKER_INJECT);
	assert_true(has(&p->head, "\r\nAuthorization: token " S_HDR " extra\r\n"));
	assert_true(has(&p->head, "\r\nContent-Length: 7\r\n"));

	/* Any case of the header's name. */
	_cleanup_run_ struct run *l = apply_s(API, 443,
					      "GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\n"
					      "authorization: Bearer " PH_HDR "\r\n\r\n");
	assert_int_equal(l->res.verdict, BROKER_INJECT);
	assert_true(has(&l->head, "Bearer " S_HDR "\r\n"));
}

static void test_header_no_placeholder(void **state)
{
	(void)state;
	/* apply_n checks that a PASS leaves the head as it was. */
	assert_int_equal(verdict_of(API, 443, "GET /v1/items HTTP/1.1\r\nHost: api.example.com\r\n\r\n"),
			 BROKER_PASS);
	assert_int_equal(verdict_of(API, 443,
				    "GET /v1/items HTTP/1.1\r\nHost: api.example.com\r\n"
				    "Authorization: Bearer the-agents-own-token\r\n\r\n"),
			 BROKER_PASS);
	/* Another placeholder of the right form is nobody's. */
	assert_int_equal(verdict_of(API, 443,
				    "GET /v1/items HTTP/1.1\r\nHost: api.example.com\r\n"
				    "Authorization: Bearer airlock_ph_1111111111111111111111111111111111111111\r\n\r\n"),
			 BROKER_PASS);
	/* Neither a request elsewhere, nor one outside the binding. */
	assert_int_equal(verdict_of("other.example.com", 443, "DELETE /x HTTP/1.1\r\nHost: other.example.com\r\n\r\n"),
			 BROKER_PASS);
	assert_int_equal(verdict_of(API, 443, "DELETE /v2/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n"),
			 BROKER_PASS);
}

static void expect_misuse(const char *host, uint16_t port, char *raw, const char *credential)
{
	_cleanup_run_ struct run *r = apply_s(host, port, raw);
	if (r->res.verdict != BROKER_MISUSE)
		fail_msg("verdict %d, not misuse, for\n%s", r->res.verdict, raw);
	assert_string_equal(r->res.credential, credential);
	assert_non_null(strstr(r->res.reason, credential));
	free(raw);
}

static void test_header_misplaced(void **state)
{
	(void)state;
	/* The neighbour of each: HDR_OK, injected above. */
	assert_int_equal(verdict_of(API, 443, HDR_OK), BROKER_INJECT);
	/* Also in another header, or only there. */
	expect_misuse(API, 443,
		      fmt("GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\n"
			  "Authorization: Bearer %s\r\nX-Copy: %s\r\n\r\n",
			  PH_HDR, PH_HDR),
		      "hdr");
	expect_misuse(API, 443, fmt("GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\nX-Token: %s\r\n\r\n", PH_HDR),
		      "hdr");
	expect_misuse(API, 443, fmt("GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\nCookie: t=%s\r\n\r\n", PH_HDR),
		      "hdr");
	/* In the path, the query, the body. */
	expect_misuse(API, 443, fmt("GET /v1/%s HTTP/1.1\r\nHost: api.example.com\r\n\r\n", PH_HDR), "hdr");
	expect_misuse(API, 443,
		      fmt("GET /v1/x?t=%s HTTP/1.1\r\nHost: api.example.com\r\n"
			  "Authorization: Bearer %s\r\n\r\n",
			  PH_HDR, PH_HDR),
		      "hdr");
	expect_misuse(API, 443, fmt("GET /v1/x?%s HTTP/1.1\r\nHost: api.example.com\r\n\r\n", PH_HDR), "hdr");
	expect_misuse(API, 443,
		      fmt("POST /v1/x HTTP/1.1\r\nHost: api.example.com\r\n"
			  "Authorization: Bearer %s\r\nContent-Length: %zu\r\n\r\ntoken=%s",
			  PH_HDR, strlen(PH_HDR) + 6, PH_HDR),
		      "hdr");
	expect_misuse(API, 443,
		      fmt("POST /v1/x HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "%zx\r\n%s\r\n0\r\n\r\n",
			  strlen(PH_HDR), PH_HDR),
		      "hdr");
	/* As a header's name, alone or next to the legitimate use. */
	expect_misuse(API, 443, fmt("GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\n%s: 1\r\n\r\n", PH_HDR), "hdr");
	expect_misuse(API, 443,
		      fmt("GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\n"
			  "Authorization: Bearer %s\r\nX-%s: 1\r\n\r\n",
			  PH_HDR, PH_HDR),
		      "hdr");
	/* Hidden in basic authentication: the binding names a bearer header. */
	struct buf b64 = { 0 };
	assert_int_equal(base64_encode((const uint8_t *)"u:" PH_HDR, strlen("u:" PH_HDR), &b64), 0);
	expect_misuse(API, 443,
		      fmt("GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Basic %s\r\n\r\n",
			  b64.data),
		      "hdr");
	buf_free(&b64);
	/* Another credential's binding does not carry this one. */
	expect_misuse("basic.example.com", 443,
		      fmt("GET /b/x HTTP/1.1\r\nHost: basic.example.com\r\nAuthorization: Bearer %s\r\n\r\n", PH_HDR),
		      "hdr");
}

static void test_header_scope(void **state)
{
	(void)state;
	/* Allowed: GET and POST, under /v1/, on api.example.com:443. */
	assert_int_equal(verdict_f(API, 443,
				   fmt("GET /v1/a/b HTTP/1.1\r\nHost: api.example.com\r\n"
				       "Authorization: Bearer %s\r\n\r\n",
				       PH_HDR)),
			 BROKER_INJECT);
	assert_int_equal(verdict_f(API, 443,
				   fmt("POST /v1/a HTTP/1.1\r\nHost: api.example.com\r\n"
				       "Authorization: Bearer %s\r\nContent-Length: 0\r\n\r\n",
				       PH_HDR)),
			 BROKER_INJECT);
	/* Another method (and the method's case matters). */
	static const char *const methods[] = { "DELETE", "PUT", "PATCH", "HEAD", "get", "Post" };
	for (size_t i = 0; i < ARRAY_LEN(methods); i++)
		expect_misuse(API, 443,
			      fmt("%s /v1/a HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n\r\n",
				  methods[i], PH_HDR),
			      "hdr");
	/* A path outside the globs. */
	static const char *const paths[] = { "/v2/a", "/v1x/a", "/", "/V1/a", "/api/v1/a", "/v1%2Fa" };
	for (size_t i = 0; i < ARRAY_LEN(paths); i++)
		expect_misuse(API, 443,
			      fmt("GET %s HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer %s\r\n\r\n",
				  paths[i], PH_HDR),
			      "hdr");
	/* Another host, another port of the same host. */
	expect_misuse("other.example.com", 443,
		      fmt("GET /v1/a HTTP/1.1\r\nHost: other.example.com\r\nAuthorization: Bearer %s\r\n\r\n", PH_HDR),
		      "hdr");
	expect_misuse(API, 8443,
		      fmt("GET /v1/a HTTP/1.1\r\nHost: api.example.com:8443\r\nAuthorization: Bearer %s\r\n\r\n",
			  PH_HDR),
		      "hdr");
	expect_misuse("evil.test", 443,
		      fmt("GET /v1/a HTTP/1.1\r\nHost: evil.test\r\nAuthorization: Bearer %s\r\n\r\n", PH_HDR), "hdr");
	/* A dot segment that would climb out of /v1/ never gets this far. */
	struct http_request req;
	int status = 0;
	struct error err = { 0 };
	const char dots[] = "GET /v1/../admin HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
	assert_true(http_parse_request(dots, strlen(dots), &req, &status, &err) < 0);
}

/* ---------------------------------------------------------------- */
/* Basic binding                                                     */

#define BAS "basic.example.com"

static char *basic_req(const char *path, const char *value)
{
	return fmt("GET %s HTTP/1.1\r\nHost: basic.example.com\r\nAuthorization: Basic %s\r\n\r\n", path, value);
}

static char *basic_of(const char *plain, size_t len)
{
	struct buf b = { 0 };
	assert_int_equal(base64_encode((const uint8_t *)plain, len, &b), 0);
	return b.data;
}

static void test_basic_inject(void **state)
{
	(void)state;
	char *raw = basic_req("/b/x", B64_SVC_PH);
	_cleanup_run_ struct run *r = apply_s(BAS, 443, raw);
	free(raw);
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_string_equal(r->res.credential, "basic");
	assert_string_equal(r->res.binding, "basic-api");
	assert_true(has(&r->head, "\r\nAuthorization: Basic " B64_SVC_SECRET "\r\n"));
	assert_int_equal(count_header(&r->head, "Authorization"), 1);

	/* What decodes is user:secret, whatever user the client chose. */
	char *v = basic_of("me@example.com:" PH_BAS, strlen("me@example.com:" PH_BAS));
	raw = basic_req("/b/deeper/path", v);
	free(v);
	_cleanup_run_ struct run *u = apply_s(BAS, 443, raw);
	free(raw);
	assert_int_equal(u->res.verdict, BROKER_INJECT);
	char val[256];
	header_value(&u->head, "Authorization", val, sizeof(val));
	assert_int_equal(strncmp(val, "Basic ", 6), 0);
	uint8_t dec[256];
	ssize_t d = base64_decode(val + 6, strlen(val + 6), dec, sizeof(dec));
	assert_int_equal(d, (ssize_t)strlen("me@example.com:" S_BAS));
	assert_memory_equal(dec, "me@example.com:" S_BAS, (size_t)d);

	/* Scheme in any case, an empty user name. */
	v = basic_of(":" PH_BAS, strlen(":" PH_BAS));
	raw = fmt("GET /b/x HTTP/1.1\r\nHost: basic.example.com\r\nAuthorization: basic %s\r\n\r\n", v);
	free(v);
	_cleanup_run_ struct run *e = apply_s(BAS, 443, raw);
	free(raw);
	assert_int_equal(e->res.verdict, BROKER_INJECT);
	header_value(&e->head, "Authorization", val, sizeof(val));
	d = base64_decode(val + 6, strlen(val + 6), dec, sizeof(dec));
	assert_int_equal(d, (ssize_t)strlen(":" S_BAS));
	assert_memory_equal(dec, ":" S_BAS, (size_t)d);
}

static void test_basic_misplaced(void **state)
{
	(void)state;
	static const char *const plains[] = {
		PH_BAS ":pw",         /* the placeholder as the user name */
		PH_BAS ":" PH_BAS,    /* ... and as the password */
		PH_BAS,               /* no colon at all */
		"x" PH_BAS "y:pw",    /* inside the user name */
	};
	for (size_t i = 0; i < ARRAY_LEN(plains); i++) {
		char *v = basic_of(plains[i], strlen(plains[i]));
		expect_misuse(BAS, 443, basic_req("/b/x", v), "basic");
		free(v);
	}
	/* Sent raw, not encoded: the binding names basic authentication. */
	expect_misuse(BAS, 443,
		      fmt("GET /b/x HTTP/1.1\r\nHost: basic.example.com\r\nAuthorization: Bearer %s\r\n\r\n", PH_BAS),
		      "basic");
	expect_misuse(BAS, 443, basic_req("/b/x", PH_BAS), "basic");
	/* Outside the binding's paths, host or port. */
	expect_misuse(BAS, 443, basic_req("/c/x", B64_SVC_PH), "basic");
	expect_misuse(API, 443,
		      fmt("GET /b/x HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Basic %s\r\n\r\n", B64_SVC_PH),
		      "basic");
	/* A second Authorization whose user name hides the placeholder behind
	 * a NUL, next to a legitimate one: the secret must not go into the
	 * user name. */
	static const char nul_user[] = "\0" PH_BAS ":pw";
	char *v = basic_of(nul_user, sizeof(nul_user) - 1);
	expect_misuse(BAS, 443,
		      fmt("GET /b/x HTTP/1.1\r\nHost: basic.example.com\r\nAuthorization: Basic %s\r\n"
			  "Authorization: Basic %s\r\n\r\n",
			  B64_SVC_PH, v),
		      "basic");
	free(v);
	/* The same placeholder in the user name of a second Authorization. */
	v = basic_of(PH_BAS ":pw", strlen(PH_BAS ":pw"));
	expect_misuse(BAS, 443,
		      fmt("GET /b/x HTTP/1.1\r\nHost: basic.example.com\r\nAuthorization: Basic %s\r\n"
			  "Authorization: Basic %s\r\n\r\n",
			  B64_SVC_PH, v),
		      "basic");
	free(v);
	/* Credentials longer than the broker decodes are not looked into:
	 * nothing is swapped (the server gets the worthless placeholder),
	 * never the secret. */
	char longp[1400];
	snprintf(longp, sizeof(longp), "%0*d:%s", 1200, 0, PH_BAS);
	v = basic_of(longp, strlen(longp));
	assert_int_not_equal(verdict_f(BAS, 443, basic_req("/b/x", v)), BROKER_INJECT);
	free(v);
	/* The neighbour: two legitimate ones are both swapped. */
	char *raw = fmt("GET /b/x HTTP/1.1\r\nHost: basic.example.com\r\nAuthorization: Basic %s\r\n"
			"Authorization: Basic %s\r\n\r\n",
			B64_SVC_PH, B64_SVC_PH);
	_cleanup_run_ struct run *r = apply_s(BAS, 443, raw);
	free(raw);
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_int_equal(count_header(&r->head, "Authorization"), 2);
	assert_false(has(&r->head, B64_SVC_PH));
}

static void test_basic_malformed(void **state)
{
	(void)state;
	/* Base64 the strict decoder refuses (padding dropped, a stray
	 * character, whitespace inside) is not looked into: nothing is
	 * swapped and the request passes as it is, placeholder and all, so
	 * the server sees a worthless string and never the secret. */
	const char *unpadded = B64_SVC_PH;
	char cut[sizeof(B64_SVC_PH)];
	snprintf(cut, sizeof(cut), "%.*s", (int)(strlen(unpadded) - 2), unpadded);
	assert_int_equal(verdict_f(BAS, 443, basic_req("/b/x", cut)), BROKER_PASS);
	char stray[sizeof(B64_SVC_PH) + 1];
	snprintf(stray, sizeof(stray), "!%s", B64_SVC_PH);
	assert_int_equal(verdict_f(BAS, 443, basic_req("/b/x", stray)), BROKER_PASS);
	char spaced[sizeof(B64_SVC_PH) + 1];
	snprintf(spaced, sizeof(spaced), "%.8s %s", B64_SVC_PH, B64_SVC_PH + 8);
	assert_int_equal(verdict_f(BAS, 443, basic_req("/b/x", spaced)), BROKER_PASS);
	assert_int_equal(verdict_f(BAS, 443, basic_req("/b/x", "%%%%")), BROKER_PASS);
	/* The neighbour: the same value well-formed. */
	assert_int_equal(verdict_f(BAS, 443, basic_req("/b/x", B64_SVC_PH)), BROKER_INJECT);
	/* Basic credentials without the placeholder pass unchanged. */
	char *v = basic_of("svc:own-password", strlen("svc:own-password"));
	assert_int_equal(verdict_f(BAS, 443, basic_req("/b/x", v)), BROKER_PASS);
	free(v);
}

/* ---------------------------------------------------------------- */
/* Query binding                                                     */

#define QRY "query.example.com"

static char *query_req(const char *query)
{
	return fmt("GET /data?%s HTTP/1.1\r\nHost: query.example.com\r\n\r\n", query);
}

static void test_query_inject(void **state)
{
	(void)state;
	char *raw = query_req("api_key=" PH_QRY "&x=1");
	_cleanup_run_ struct run *r = apply_s(QRY, 443, raw);
	free(raw);
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_string_equal(r->res.credential, "qry");
	assert_string_equal(r->res.binding, "qry-api");
	assert_first_line(&r->head, "GET /data?api_key=" S_QRY_PCT "&x=1 HTTP/1.1");
	assert_false(has(&r->head, S_QRY));

	raw = query_req("x=1&api_key=" PH_QRY);
	_cleanup_run_ struct run *l = apply_s(QRY, 443, raw);
	free(raw);
	assert_int_equal(l->res.verdict, BROKER_INJECT);
	assert_first_line(&l->head, "GET /data?x=1&api_key=" S_QRY_PCT " HTTP/1.1");

	/* The placeholder need not be the whole value. */
	raw = query_req("api_key=pre" PH_QRY);
	_cleanup_run_ struct run *p = apply_s(QRY, 443, raw);
	free(raw);
	assert_int_equal(p->res.verdict, BROKER_INJECT);
	assert_first_line(&p->head, "GET /data?api_key=pre" S_QRY_PCT " HTTP/1.1");

	/* Without the placeholder: unchanged. */
	assert_int_equal(verdict_f(QRY, 443, query_req("api_key=mine&x=1")), BROKER_PASS);
}

static void test_query_misplaced(void **state)
{
	(void)state;
	static const char *const queries[] = {
		"token=" PH_QRY,
		"api_key=ok&copy=" PH_QRY,
		"api_key=" PH_QRY "&copy=" PH_QRY,
		PH_QRY "=1",
		PH_QRY,
		"api_key_x=" PH_QRY,
		"xapi_key=" PH_QRY,
		"API_KEY=" PH_QRY,
		"api_key" PH_QRY "=1",
	};
	for (size_t i = 0; i < ARRAY_LEN(queries); i++)
		expect_misuse(QRY, 443, query_req(queries[i]), "qry");
	/* In a header, the path or the body of the bound host. */
	expect_misuse(QRY, 443,
		      fmt("GET /data HTTP/1.1\r\nHost: query.example.com\r\nAuthorization: Bearer %s\r\n\r\n", PH_QRY),
		      "qry");
	expect_misuse(QRY, 443, fmt("GET /data/%s?api_key=x HTTP/1.1\r\nHost: query.example.com\r\n\r\n", PH_QRY),
		      "qry");
	expect_misuse(QRY, 443,
		      fmt("POST /data?api_key=%s HTTP/1.1\r\nHost: query.example.com\r\nContent-Length: %zu\r\n\r\n%s",
			  PH_QRY, strlen(PH_QRY), PH_QRY),
		      "qry");
	/* The right parameter on another host. */
	expect_misuse(API, 443, fmt("GET /v1/x?api_key=%s HTTP/1.1\r\nHost: api.example.com\r\n\r\n", PH_QRY),
		      "qry");
}

/* ---------------------------------------------------------------- */
/* inject: always                                                    */

#define ALW "always.example.com"

static void test_always_header(void **state)
{
	(void)state;
	_cleanup_run_ struct run *r = apply_s(ALW, 443, "GET /h/x HTTP/1.1\r\nHost: always.example.com\r\n\r\n");
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_string_equal(r->res.credential, "always_hdr");
	assert_string_equal(r->res.binding, "always-hdr");
	assert_int_equal(count_header(&r->head, "X-Api-Key"), 1);
	assert_true(has(&r->head, "\r\nX-Api-Key: key " S_AHDR "\r\n"));

	/* The agent's own values, in any case, are replaced, not added to. */
	_cleanup_run_ struct run *o = apply_s(ALW, 443,
					      "GET /h/x HTTP/1.1\r\nHost: always.example.com\r\n"
					      "X-Api-Key: key agent-value\r\nAccept: */*\r\nx-api-key: second\r\n\r\n");
	assert_int_equal(o->res.verdict, BROKER_INJECT);
	assert_int_equal(count_header(&o->head, "X-Api-Key"), 1);
	assert_true(has(&o->head, "\r\nX-Api-Key: key " S_AHDR "\r\n"));
	assert_false(has(&o->head, "agent-value"));
	assert_false(has(&o->head, "second"));
	assert_true(has(&o->head, "\r\nAccept: */*\r\n"));
}

static void test_always_basic(void **state)
{
	(void)state;
	_cleanup_run_ struct run *r = apply_s(ALW, 443, "GET /b/x HTTP/1.1\r\nHost: always.example.com\r\n\r\n");
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_string_equal(r->res.credential, "always_basic");
	assert_true(has(&r->head, "\r\nAuthorization: Basic " B64_BOT_ABAS "\r\n"));
	assert_int_equal(count_header(&r->head, "Authorization"), 1);

	_cleanup_run_ struct run *o = apply_s(ALW, 443,
					      "GET /b/x HTTP/1.1\r\nHost: always.example.com\r\n"
					      "authorization: Bearer agent\r\nAuthorization: Basic YTpi\r\n\r\n");
	assert_int_equal(o->res.verdict, BROKER_INJECT);
	assert_int_equal(count_header(&o->head, "Authorization"), 1);
	assert_true(has(&o->head, "\r\nAuthorization: Basic " B64_BOT_ABAS "\r\n"));
	assert_false(has(&o->head, "agent"));
	assert_false(has(&o->head, "YTpi"));
}

static void test_always_query(void **state)
{
	(void)state;
	_cleanup_run_ struct run *r = apply_s(ALW, 443, "GET /q/x HTTP/1.1\r\nHost: always.example.com\r\n\r\n");
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_string_equal(r->res.credential, "always_q");
	assert_first_line(&r->head, "GET /q/x?api_key=" S_AQ_PCT " HTTP/1.1");

	_cleanup_run_ struct run *o =
		apply_s(ALW, 443,
			"GET /q/x?a=1&api_key=mine&api_key=two&api_key&b=2&api_keyx=3 HTTP/1.1\r\n"
			"Host: always.example.com\r\n\r\n");
	assert_int_equal(o->res.verdict, BROKER_INJECT);
	assert_first_line(&o->head, "GET /q/x?a=1&b=2&api_keyx=3&api_key=" S_AQ_PCT " HTTP/1.1");

	_cleanup_run_ struct run *e =
		apply_s(ALW, 443, "GET /q/x?api_key=mine HTTP/1.1\r\nHost: always.example.com\r\n\r\n");
	assert_int_equal(e->res.verdict, BROKER_INJECT);
	assert_first_line(&e->head, "GET /q/x?api_key=" S_AQ_PCT " HTTP/1.1");
}

static void test_always_unmatched(void **state)
{
	(void)state;
	/* Nothing added where no binding matches (apply_n checks the head
	 * is unchanged and holds no secret). */
	assert_int_equal(verdict_of(ALW, 443, "GET /other HTTP/1.1\r\nHost: always.example.com\r\n\r\n"),
			 BROKER_PASS);
	assert_int_equal(verdict_of(ALW, 443, "GET /hx HTTP/1.1\r\nHost: always.example.com\r\n\r\n"), BROKER_PASS);
	assert_int_equal(verdict_of(ALW, 443,
				    "GET /other?api_key=mine HTTP/1.1\r\nHost: always.example.com\r\n"
				    "X-Api-Key: mine\r\n\r\n"),
			 BROKER_PASS);
	assert_int_equal(verdict_of("other.example.com", 443, "GET /h/x HTTP/1.1\r\nHost: other.example.com\r\n\r\n"),
			 BROKER_PASS);
	assert_int_equal(verdict_of(ALW, 8443, "GET /h/x HTTP/1.1\r\nHost: always.example.com:8443\r\n\r\n"),
			 BROKER_PASS);
}

/* GET /h/x with Host and n - 1 more headers, the fifth of them key
 * (when not NULL) instead of X-H5. */
static void many_headers(struct buf *raw, int n, const char *key)
{
	assert_int_equal(buf_puts(raw, "GET /h/x HTTP/1.1\r\nHost: always.example.com\r\n"), 0);
	for (int i = 1; i < n; i++)
		assert_int_equal(i == 5 && key ? buf_printf(raw, "%s: %d\r\n", key, i) :
						 buf_printf(raw, "X-H%d: %d\r\n", i, i),
				 0);
	assert_int_equal(buf_puts(raw, "\r\n"), 0);
}

static void test_always_too_many_headers(void **state)
{
	(void)state;
	/* No room for the added header: refused, not truncated. */
	struct buf raw = { 0 };
	many_headers(&raw, HTTP_MAX_HEADERS, NULL);
	struct http_request *req = calloc(1, sizeof(*req));
	assert_non_null(req);
	parse(raw.data, raw.len, req);
	assert_int_equal(req->n_headers, HTTP_MAX_HEADERS);
	struct buf side = { 0 };
	struct broker_result res;
	assert_true(broker_apply(brk, ALW, 443, req, NULL, 0, &side, &res) < 0);
	buf_wipe(&side);
	free(req);
	buf_free(&raw);

	/* The neighbours: one header fewer, or one of them the agent's
	 * X-Api-Key, which is replaced. */
	many_headers(&raw, HTTP_MAX_HEADERS - 1, NULL);
	_cleanup_run_ struct run *f = apply_n(ALW, 443, raw.data, raw.len);
	assert_int_equal(f->res.verdict, BROKER_INJECT);
	assert_int_equal(count_header(&f->head, "X-Api-Key"), 1);
	buf_free(&raw);
	many_headers(&raw, HTTP_MAX_HEADERS, "x-api-key");
	_cleanup_run_ struct run *r = apply_n(ALW, 443, raw.data, raw.len);
	assert_int_equal(r->res.verdict, BROKER_INJECT);
	assert_int_equal(count_header(&r->head, "X-Api-Key"), 1);
	assert_true(has(&r->head, "\r\nX-Api-Key: key " S_AHDR "\r\n"));
	buf_free(&raw);
}

/* ---------------------------------------------------------------- */
/* Git bindings                                                      */

#define GIT "git.example.com"
#define Z1 "0000000000000000000000000000000000000000"
#define A1 "d857ba09d4f4be00882499b2fa0e0c6aaece368e"
#define B1 "d6bc4a560b52a400aee338053a7d8bc83862f98a"
#define CAPS " report-status-v2 side-band-64k quiet object-format=sha1 agent=git/2.39.5"

/* A pkt-line holding data[0..len). */
static void pkt(struct buf *b, const char *data, size_t len)
{
	assert_int_equal(buf_printf(b, "%04zx", len + 4), 0);
	assert_int_equal(buf_append(b, data, len), 0);
}

/* A receive-pack body: one command per ref (creating it), then the flush
 * and the start of a pack. refs is NULL-terminated; none: the probe. */
static void push_body(struct buf *b, const char *const *refs)
{
	for (size_t i = 0; refs && refs[i]; i++) {
		char line[512];
		int n = snprintf(line, sizeof(line), "%s %s %s", Z1, A1, refs[i]);
		if (i == 0) {
			memcpy(line + n, "\0" CAPS, sizeof(CAPS));
			n += (int)sizeof(CAPS);
		}
		pkt(b, line, (size_t)n);
	}
	assert_int_equal(buf_puts(b, "0000"), 0);
	if (refs && refs[0])
		assert_int_equal(buf_append(b, "PACK\0\0\0\x02\0\0\0\x03", 12), 0);
}

enum framing { LENGTH, CHUNKED, CHUNKED_SMALL };

/* A push request to host for repo with body; auth NULL: none. */
static struct run *push_req(const char *host, const char *repo, const char *auth, const char *const *refs,
			    enum framing fr)
{
	struct buf body = { 0 }, raw = { 0 };
	push_body(&body, refs);
	assert_int_equal(buf_printf(&raw,
				    "POST %s/git-receive-pack HTTP/1.1\r\nHost: %s\r\n"
				    "Content-Type: application/x-git-receive-pack-request\r\n",
				    repo, host),
			 0);
	if (auth)
		assert_int_equal(buf_printf(&raw, "Authorization: Basic %s\r\n", auth), 0);
	if (fr == LENGTH) {
		assert_int_equal(buf_printf(&raw, "Content-Length: %zu\r\n\r\n", body.len), 0);
		assert_int_equal(buf_append(&raw, body.data, body.len), 0);
	} else {
		/* Small chunks cut the pkt-lines, and the ref names, apart. */
		size_t step = fr == CHUNKED ? body.len : 7;
		assert_int_equal(buf_puts(&raw, "Transfer-Encoding: chunked\r\n\r\n"), 0);
		for (size_t off = 0; off < body.len; off += step) {
			size_t n = body.len - off < step ? body.len - off : step;
			assert_int_equal(buf_printf(&raw, "%zx%s\r\n", n, off ? "" : ";ext=1"), 0);
			assert_int_equal(buf_append(&raw, body.data + off, n), 0);
			assert_int_equal(buf_puts(&raw, "\r\n"), 0);
		}
		assert_int_equal(buf_puts(&raw, "0\r\n\r\n"), 0);
	}
	struct run *r = apply_n(host, 443, raw.data, raw.len);
	buf_free(&body);
	buf_free(&raw);
	return r;
}

static const char *const refs_agent[] = { "refs/heads/agent/x", NULL };
static const char *const refs_main[] = { "refs/heads/main", NULL };
static const char *const refs_mixed[] = { "refs/heads/agent/x", "refs/heads/main", NULL };
static const char *const refs_tag[] = { "refs/tags/v1", NULL };

static void test_git_fetch(void **state)
{
	(void)state;
	const char *auth = "Authorization: Basic " B64_GIT_PH "\r\n";
	static const char *const paths[] = {
		"GET /acme/widget.git/info/refs?service=git-upload-pack",
		"GET /acme/widget/info/refs?service=git-upload-pack",
		"GET /acme/widget.git/info/refs?service=git-receive-pack",
	};
	for (size_t i = 0; i < ARRAY_LEN(paths); i++) {
		char *raw = fmt("%s HTTP/1.1\r\nHost: git.example.com\r\n%s\r\n", paths[i], auth);
		_cleanup_run_ struct run *r = apply_s(GIT, 443, raw);
		free(raw);
		assert_int_equal(r->res.verdict, BROKER_INJECT);
		assert_string_equal(r->res.credential, "git");
		assert_string_equal(r->res.binding, "git-widget");
		assert_true(has(&r->head, "\r\nAuthorization: Basic " B64_GIT_SECRET "\r\n"));
		/* inject: placeholder, so without it nothing is added. */
		raw = fmt("%s HTTP/1.1\r\nHost: git.example.com\r\n\r\n", paths[i]);
		assert_int_equal(verdict_f(GIT, 443, raw), BROKER_PASS);
	}
	/* The fetch itself. */
	char *raw = fmt("POST /acme/widget.git/git-upload-pack HTTP/1.1\r\nHost: git.example.com\r\n%s"
			"Content-Length: 4\r\n\r\n0000",
			auth);
	assert_int_equal(verdict_f(GIT, 443, raw), BROKER_INJECT);

	/* Not git smart HTTP, on the git binding's host: the binding does
	 * not match, so the placeholder is misused, and without it the
	 * request is not the broker's business. */
	static const char *const not_git[] = {
		"GET /acme/widget.git/info/refs",                              /* dumb protocol */
		"GET /acme/widget.git/info/refs?service=git-upload-pack&x=1",  /* extra parameter */
		"GET /acme/widget.git/HEAD",
		"GET /api/v3/user",
		"POST /acme/widget.git/git-upload-pack?x=1",
	};
	for (size_t i = 0; i < ARRAY_LEN(not_git); i++) {
		bool post = not_git[i][0] == 'P';
		expect_misuse(GIT, 443,
			      fmt("%s HTTP/1.1\r\nHost: git.example.com\r\n%s%s\r\n", not_git[i], auth,
				  post ? "Content-Length: 0\r\n" : ""),
			      "git");
		assert_int_equal(verdict_f(GIT, 443,
					   fmt("%s HTTP/1.1\r\nHost: git.example.com\r\n%s\r\n", not_git[i],
					       post ? "Content-Length: 0\r\n" : "")),
				 BROKER_PASS);
	}
}

static void test_git_push_allowed(void **state)
{
	(void)state;
	static const enum framing frs[] = { LENGTH, CHUNKED, CHUNKED_SMALL };
	for (size_t i = 0; i < ARRAY_LEN(frs); i++) {
		_cleanup_run_ struct run *r = push_req(GIT, "/acme/widget.git", B64_GIT_PH, refs_agent, frs[i]);
		assert_int_equal(r->res.verdict, BROKER_INJECT);
		assert_string_equal(r->res.binding, "git-widget");
		assert_true(has(&r->head, "\r\nAuthorization: Basic " B64_GIT_SECRET "\r\n"));
		_cleanup_run_ struct run *n = push_req(GIT, "/acme/widget.git", NULL, refs_agent, frs[i]);
		assert_int_equal(n->res.verdict, BROKER_PASS);
		/* The "0000" probe git sends before a large push. */
		_cleanup_run_ struct run *p = push_req(GIT, "/acme/widget.git", B64_GIT_PH, NULL, frs[i]);
		assert_int_equal(p->res.verdict, BROKER_INJECT);
	}
}

static void expect_git_deny(struct run *r, const char *binding, const char *what)
{
	if (r->res.verdict != BROKER_DENY)
		fail_msg("verdict %d, not deny (%s)", r->res.verdict, r->res.reason);
	assert_string_equal(r->res.binding, binding);
	if (!strstr(r->res.reason, what))
		fail_msg("reason does not name %s: %s", what, r->res.reason);
}

static void test_git_push_denied(void **state)
{
	(void)state;
	static const enum framing frs[] = { LENGTH, CHUNKED, CHUNKED_SMALL };
	for (size_t i = 0; i < ARRAY_LEN(frs); i++) {
		/* With the placeholder and without: the ref is the binding's
		 * business either way. */
		const char *auths[] = { B64_GIT_PH, NULL };
		for (size_t a = 0; a < ARRAY_LEN(auths); a++) {
			_cleanup_run_ struct run *m = push_req(GIT, "/acme/widget.git", auths[a], refs_main, frs[i]);
			expect_git_deny(m, "git-widget", "refs/heads/main");
			assert_string_equal(m->res.credential, "git");
			/* One bad command among good ones. */
			_cleanup_run_ struct run *x = push_req(GIT, "/acme/widget.git", auths[a], refs_mixed, frs[i]);
			expect_git_deny(x, "git-widget", "refs/heads/main");
			_cleanup_run_ struct run *t = push_req(GIT, "/acme/widget.git", auths[a], refs_tag, frs[i]);
			expect_git_deny(t, "git-widget", "refs/tags/v1");
		}
	}
	/* A command list that is cut off, or malformed, is refused too. */
	const char *cut = "POST /acme/widget.git/git-receive-pack HTTP/1.1\r\nHost: git.example.com\r\n"
			  "Content-Length: 8\r\n\r\n00680000";
	_cleanup_run_ struct run *c = apply_s(GIT, 443, cut);
	expect_git_deny(c, "git-widget", "incomplete");
	const char *bad = "POST /acme/widget.git/git-receive-pack HTTP/1.1\r\nHost: git.example.com\r\n"
			  "Content-Length: 12\r\n\r\n0009hello0000";
	_cleanup_run_ struct run *b = apply_s(GIT, 443, bad);
	expect_git_deny(b, "git-widget", "malformed");
	/* An empty body is a list that never arrived. */
	const char *empty = "POST /acme/widget.git/git-receive-pack HTTP/1.1\r\nHost: git.example.com\r\n"
			    "Content-Length: 0\r\n\r\n";
	_cleanup_run_ struct run *e = apply_s(GIT, 443, empty);
	expect_git_deny(e, "git-widget", "incomplete");
}

static void test_git_other_repo(void **state)
{
	(void)state;
	/* Another repository on the same host is outside the binding: the
	 * placeholder there is misused, and without it the request is not
	 * this binding's to refuse. */
	static const char *const repos[] = { "/acme/widget2.git", "/other/widget.git", "/acme/widget.git/sub" };
	for (size_t i = 0; i < ARRAY_LEN(repos); i++) {
		expect_misuse(GIT, 443,
			      fmt("GET %s/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: git.example.com\r\n"
				  "Authorization: Basic %s\r\n\r\n",
				  repos[i], B64_GIT_PH),
			      "git");
		assert_int_equal(verdict_f(GIT, 443,
					   fmt("GET %s/info/refs?service=git-upload-pack HTTP/1.1\r\n"
					       "Host: git.example.com\r\n\r\n",
					       repos[i])),
				 BROKER_PASS);
		_cleanup_run_ struct run *p = push_req(GIT, repos[i], B64_GIT_PH, refs_agent, LENGTH);
		assert_int_equal(p->res.verdict, BROKER_MISUSE);
		_cleanup_run_ struct run *n = push_req(GIT, repos[i], NULL, refs_main, LENGTH);
		assert_int_equal(n->res.verdict, BROKER_PASS);
	}
	/* Another credential's repository on the same host is that
	 * credential's: its own placeholder goes in, this one's does not. */
	char *v = basic_of("x-access-token:" PH_GOT, strlen("x-access-token:" PH_GOT));
	char *raw = fmt("GET /acme/other.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: git.example.com\r\n"
			"Authorization: Basic %s\r\n\r\n",
			v);
	_cleanup_run_ struct run *o = apply_s(GIT, 443, raw);
	free(raw);
	assert_int_equal(o->res.verdict, BROKER_INJECT);
	assert_string_equal(o->res.credential, "git_other");
	assert_string_equal(o->res.binding, "git-other");
	expect_misuse(GIT, 443,
		      fmt("GET /acme/widget.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"
			  "Host: git.example.com\r\nAuthorization: Basic %s\r\n\r\n",
			  v),
		      "git_other");
	expect_misuse(GIT, 443,
		      fmt("GET /acme/other.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"
			  "Host: git.example.com\r\nAuthorization: Basic %s\r\n\r\n",
			  B64_GIT_PH),
		      "git");
	/* git_other allows no push at all. */
	_cleanup_run_ struct run *p = push_req(GIT, "/acme/other.git", v, refs_agent, LENGTH);
	expect_git_deny(p, "git-other", "push");
	free(v);
}

static void test_git_always(void **state)
{
	(void)state;
	const char *host = "gitbot.example.com";
	_cleanup_run_ struct run *f = apply_s(host, 443,
					      "GET /acme/widget.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"
					      "Host: gitbot.example.com\r\n\r\n");
	assert_int_equal(f->res.verdict, BROKER_INJECT);
	assert_string_equal(f->res.credential, "gitbot");
	char val[256];
	header_value(&f->head, "Authorization", val, sizeof(val));
	uint8_t dec[128];
	ssize_t d = base64_decode(val + 6, strlen(val + 6), dec, sizeof(dec));
	assert_int_equal(d, (ssize_t)strlen("bot:" S_BOT));
	assert_memory_equal(dec, "bot:" S_BOT, (size_t)d);

	_cleanup_run_ struct run *p = push_req(host, "/acme/widget.git", NULL, refs_agent, CHUNKED_SMALL);
	assert_int_equal(p->res.verdict, BROKER_INJECT);
	assert_int_equal(count_header(&p->head, "Authorization"), 1);
	_cleanup_run_ struct run *m = push_req(host, "/acme/widget.git", NULL, refs_main, CHUNKED_SMALL);
	expect_git_deny(m, "gitbot-widget", "refs/heads/main");
	_cleanup_run_ struct run *o = push_req(host, "/acme/other.git", NULL, refs_main, LENGTH);
	assert_int_equal(o->res.verdict, BROKER_PASS);
	assert_int_equal(verdict_of(host, 443, "GET /acme/widget.git/HEAD HTTP/1.1\r\nHost: gitbot.example.com\r\n\r\n"),
			 BROKER_PASS);
}

static void test_git_bindings_combine(void **state)
{
	(void)state;
	/* multi: one binding pushes without fetching, the other fetches.
	 * Each allows what the other refuses; neither vetoes the other. */
	const char *host = "multi.example.com";
	_cleanup_run_ struct run *f = apply_s(host, 443,
					      "GET /acme/widget.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"
					      "Host: multi.example.com\r\n\r\n");
	assert_int_equal(f->res.verdict, BROKER_INJECT);
	assert_string_equal(f->res.binding, "multi-fetch");
	_cleanup_run_ struct run *p = push_req(host, "/acme/widget.git", NULL, refs_agent, LENGTH);
	assert_int_equal(p->res.verdict, BROKER_INJECT);
	assert_string_equal(p->res.binding, "multi-push");
	/* What neither allows is refused. */
	_cleanup_run_ struct run *m = push_req(host, "/acme/widget.git", NULL, refs_main, LENGTH);
	assert_int_equal(m->res.verdict, BROKER_DENY);
	assert_non_null(strstr(m->res.reason, "refs/heads/main"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make_placeholder),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_set_refusals),
		cmocka_unit_test(test_header_inject),
		cmocka_unit_test(test_header_no_placeholder),
		cmocka_unit_test(test_header_misplaced),
		cmocka_unit_test(test_header_scope),
		cmocka_unit_test(test_basic_inject),
		cmocka_unit_test(test_basic_misplaced),
		cmocka_unit_test(test_basic_malformed),
		cmocka_unit_test(test_query_inject),
		cmocka_unit_test(test_query_misplaced),
		cmocka_unit_test(test_always_header),
		cmocka_unit_test(test_always_basic),
		cmocka_unit_test(test_always_query),
		cmocka_unit_test(test_always_unmatched),
		cmocka_unit_test(test_always_too_many_headers),
		cmocka_unit_test(test_git_fetch),
		cmocka_unit_test(test_git_push_allowed),
		cmocka_unit_test(test_git_push_denied),
		cmocka_unit_test(test_git_other_repo),
		cmocka_unit_test(test_git_always),
		cmocka_unit_test(test_git_bindings_combine),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
