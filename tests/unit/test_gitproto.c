/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for git smart HTTP: every operation is classified and each
 * of its neighbours (wrong method, dumb protocol, extra or doubled query,
 * encoded or dotted path) is not; push command lists captured from git
 * 2.39 (SHA-1, SHA-256, shallow, the "0000" probe) parse to the right
 * commands, every prefix of them asks for more, and every malformed or
 * unsupported list is refused with the documented code next to the
 * legitimate list it differs from; decisions allow exactly what the
 * binding names and say what was refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/gitproto.h"

/* ---- ids ---- */

#define A1 "d857ba09d4f4be00882499b2fa0e0c6aaece368e"
#define B1 "d6bc4a560b52a400aee338053a7d8bc83862f98a"
#define Z1 "0000000000000000000000000000000000000000"
#define A2 "c5168abf287d17c35d1507d0211e8952d788ec9f5fdaa382e3e85b02f0ff4063"
#define B2 "8a5e323d1cb2d6feec98bf2c234bcf396f2d7deefee102a6382574315e40f3f4"
#define Z2 "0000000000000000000000000000000000000000000000000000000000000000"
#define CAPS1 " report-status-v2 side-band-64k quiet object-format=sha1 agent=git/2.39.5"
#define CAPS2 " report-status-v2 side-band-64k quiet object-format=sha256 agent=git/2.39.5"

/* ---- request bodies captured from `git push` over HTTP (git 2.39.5),
 * up to the flush and the first bytes of the pack ---- */

/* git push o main (a new repository) */
static const char cap_create[] =
	"00af" Z1 " " A1 " refs/heads/main\0" CAPS1
	"0000"
	"PACK\0\0\0\x02\0\0\0\x03";

/* git push --atomic o main HEAD:refs/heads/agent/x v1 :refs/heads/old */
static const char cap_multi[] =
	"00b6" A1 " " B1 " refs/heads/main\0"
	" report-status-v2 side-band-64k quiet atomic object-format=sha1 agent=git/2.39.5"
	"0064" A1 " " Z1 " refs/heads/old"
	"0068" Z1 " " B1 " refs/heads/agent/x"
	"0062" Z1 " " B1 " refs/tags/v1"
	"0000"
	"PACK\0\0\0\x02\0\0\0\x03";

/* git push o :refs/heads/agent/x (no pack follows a deletion) */
static const char cap_delete[] =
	"00b2" B1 " " Z1 " refs/heads/agent/x\0" CAPS1
	"0000";

/* git push o main HEAD:refs/heads/agent/y in a SHA-256 repository */
static const char cap_sha256[] =
	"00e1" A2 " " B2 " refs/heads/main\0" CAPS2
	"0098" Z2 " " B2 " refs/heads/agent/y"
	"0000"
	"PACK\0\0\0\x02\0\0\0\x03";

/* git push origin HEAD:refs/heads/agent/shallow from a --depth 1 clone */
static const char cap_shallow[] =
	"0035shallow db4ed416861beb302341d99c90fb2d2fb3577255\n"
	"00b8" Z1 " fd8bb19a9a9e1192a5a2c410e547deddc1b6f853 refs/heads/agent/shallow\0" CAPS1
	"0000"
	"PACK\0\0\0\x02\0\0\0\x03";

/* git -c http.postBuffer=1024 push (a large push): the probe */
static const char cap_probe[] = "0000";

#define LIT(s) (const uint8_t *)(s), (sizeof(s) - 1)

/* ---- a body builder ---- */

static struct {
	uint8_t b[1 << 18];
	size_t n;
} bd;

static void reset(void)
{
	bd.n = 0;
}

static void raw(const void *d, size_t len)
{
	assert_true(bd.n + len <= sizeof(bd.b));
	memcpy(bd.b + bd.n, d, len);
	bd.n += len;
}

static void pkt(const void *d, size_t len)
{
	char h[5];

	snprintf(h, sizeof(h), "%04zx", len + 4);
	raw(h, 4);
	raw(d, len);
}

static void line(const char *s)
{
	pkt(s, strlen(s));
}

/* "old new ref", with NUL and caps when caps is given, then lf. */
static void cmd(const char *old, const char *new, const char *ref, const char *caps, const char *lf)
{
	char p[70000];
	int k = snprintf(p, sizeof(p), "%s %s %s", old, new, ref);
	size_t n = (size_t)k;

	if (caps) {
		p[n++] = '\0';
		memcpy(p + n, caps, strlen(caps));
		n += strlen(caps);
	}
	memcpy(p + n, lf, strlen(lf));
	n += strlen(lf);
	pkt(p, n);
}

static void flush(void)
{
	raw("0000", 4);
}

/* ---- parsing ---- */

#define MAXCMD 16

static struct git_ref_update out[MAXCMD];
static size_t n_out, used;

static int parse_max(const uint8_t *d, size_t n, size_t max)
{
	/* An exact-size heap copy, so an over-read trips ASan. */
	uint8_t *copy = malloc(n ? n : 1);
	int r;

	assert_non_null(copy);
	if (n)
		memcpy(copy, d, n);
	memset(out, 0x5a, sizeof(out));
	n_out = used = 12345;
	r = git_parse_push_commands(copy, n, max ? out : NULL, max, &n_out, &used);
	free(copy);
	if (r != 1) {
		assert_int_equal(n_out, 0);
		assert_int_equal(used, 0);
	}
	return r;
}

static int parse(const uint8_t *d, size_t n)
{
	return parse_max(d, n, MAXCMD);
}

static int parse_bd(void)
{
	return parse(bd.b, bd.n);
}

/* Every prefix before the flush's end asks for more; from there on the
 * verdict is the whole list's. */
static void check_prefixes(const uint8_t *d, size_t n, size_t want_used, size_t want_n)
{
	for (size_t k = 0; k <= n; k++) {
		int r = parse(d, k);

		if (k < want_used) {
			if (r != 0)
				fail_msg("prefix of %zu bytes: %d, want 0", k, r);
		} else {
			assert_int_equal(r, 1);
			assert_int_equal(used, want_used);
			assert_int_equal(n_out, want_n);
		}
	}
}

static void assert_cmd(size_t i, const char *old, const char *new, const char *ref)
{
	assert_string_equal(out[i].old_id, old);
	assert_string_equal(out[i].new_id, new);
	assert_string_equal(out[i].ref, ref);
}

static void test_parse_captured_create(void **state)
{
	(void)state;
	assert_int_equal(parse(LIT(cap_create)), 1);
	assert_int_equal(n_out, 1);
	assert_int_equal(used, 179);
	assert_memory_equal(cap_create + used, "PACK", 4);
	assert_cmd(0, Z1, A1, "refs/heads/main");
	check_prefixes(LIT(cap_create), 179, 1);
}

static void test_parse_captured_multi(void **state)
{
	(void)state;
	assert_int_equal(parse(LIT(cap_multi)), 1);
	assert_int_equal(n_out, 4);
	assert_int_equal(used, 488);
	assert_cmd(0, A1, B1, "refs/heads/main");
	assert_cmd(1, A1, Z1, "refs/heads/old");
	assert_cmd(2, Z1, B1, "refs/heads/agent/x");
	assert_cmd(3, Z1, B1, "refs/tags/v1");
	check_prefixes(LIT(cap_multi), 488, 4);
}

static void test_parse_captured_delete(void **state)
{
	(void)state;
	assert_int_equal(parse(LIT(cap_delete)), 1);
	assert_int_equal(n_out, 1);
	assert_int_equal(used, sizeof(cap_delete) - 1);
	assert_cmd(0, B1, Z1, "refs/heads/agent/x");
	check_prefixes(LIT(cap_delete), sizeof(cap_delete) - 1, 1);
}

static void test_parse_captured_sha256(void **state)
{
	(void)state;
	assert_int_equal(parse(LIT(cap_sha256)), 1);
	assert_int_equal(n_out, 2);
	assert_int_equal(used, 381);
	assert_cmd(0, A2, B2, "refs/heads/main");
	assert_cmd(1, Z2, B2, "refs/heads/agent/y");
	check_prefixes(LIT(cap_sha256), 381, 2);
}

static void test_parse_captured_shallow(void **state)
{
	(void)state;
	assert_int_equal(parse(LIT(cap_shallow)), 1);
	assert_int_equal(n_out, 1);
	assert_int_equal(used, 241);
	assert_cmd(0, Z1, "fd8bb19a9a9e1192a5a2c410e547deddc1b6f853", "refs/heads/agent/shallow");
	check_prefixes(LIT(cap_shallow), 241, 1);
}

static void test_parse_probe(void **state)
{
	(void)state;
	assert_int_equal(parse(LIT(cap_probe)), 1);
	assert_int_equal(n_out, 0);
	assert_int_equal(used, 4);
	check_prefixes(LIT(cap_probe), 4, 0);
	/* no room for commands is fine for a probe ... */
	assert_int_equal(parse_max(LIT(cap_probe), 0), 1);
	/* ... and bytes after the flush are not looked at */
	assert_int_equal(parse(LIT("0000\xff\xff garbage")), 1);
	assert_int_equal(used, 4);
	/* an empty body is not a probe yet */
	assert_int_equal(parse(NULL, 0), 0);
}

static void test_parse_shallow_only(void **state)
{
	(void)state;
	/* a shallow repository with nothing to update sends its shallow
	 * lines and a flush */
	reset();
	line("shallow " A1 "\n");
	line("shallow " B1 "\n");
	flush();
	assert_int_equal(parse_bd(), 1);
	assert_int_equal(n_out, 0);
	assert_int_equal(used, bd.n);
	check_prefixes(bd.b, bd.n, bd.n, 0);

	/* SHA-256 shallow lines with SHA-256 commands */
	reset();
	line("shallow " A2);
	cmd(Z2, B2, "refs/heads/agent/z", CAPS2, "");
	flush();
	assert_int_equal(parse_bd(), 1);
	assert_cmd(0, Z2, B2, "refs/heads/agent/z");
	check_prefixes(bd.b, bd.n, bd.n, 1);
}

static void test_parse_variants(void **state)
{
	char up[sizeof(cap_multi)];

	(void)state;
	/* upper-case length digits */
	memcpy(up, cap_multi, sizeof(up));
	memcpy(up, "00B6", 4);
	assert_int_equal(parse((const uint8_t *)up, sizeof(up) - 1), 1);
	assert_int_equal(n_out, 4);

	/* an LF after every line, after the capabilities too */
	reset();
	cmd(A1, B1, "refs/heads/agent/a", CAPS1, "\n");
	cmd(Z1, B1, "refs/heads/agent/b", NULL, "\n");
	flush();
	assert_int_equal(parse_bd(), 1);
	assert_int_equal(n_out, 2);
	assert_cmd(0, A1, B1, "refs/heads/agent/a");
	assert_cmd(1, Z1, B1, "refs/heads/agent/b");
	check_prefixes(bd.b, bd.n, bd.n, 2);

	/* a first command without capabilities, and an empty list after
	 * the NUL */
	reset();
	cmd(A1, B1, "refs/heads/agent/a", NULL, "");
	flush();
	assert_int_equal(parse_bd(), 1);
	reset();
	cmd(A1, B1, "refs/heads/agent/a", "", "");
	flush();
	assert_int_equal(parse_bd(), 1);

	/* capabilities without object-format */
	reset();
	cmd(A2, B2, "refs/heads/agent/a", " report-status side-band-64k", "");
	flush();
	assert_int_equal(parse_bd(), 1);
}

/* ---- refusals ---- */

static void test_parse_bad_length(void **state)
{
	static const char *bad[] = { "00g0", "zzzz", " 0a0", "0x10", "-001", "\0\0\0\0" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reset();
		raw(bad[i], 4);
		raw(cap_create + 4, sizeof(cap_create) - 5);
		assert_int_equal(parse_bd(), -EINVAL);
	}
	/* refused as soon as the bad digit arrives */
	assert_int_equal(parse(LIT("00g")), -EINVAL);
	assert_int_equal(parse(LIT("0")), 0);
	assert_int_equal(parse(LIT("00a")), 0);

	/* 1..3 are not lengths; 4 is an empty line, not a command */
	assert_int_equal(parse(LIT("0001")), -EINVAL);
	assert_int_equal(parse(LIT("0002")), -EINVAL);
	assert_int_equal(parse(LIT("0003")), -EINVAL);
	assert_int_equal(parse(LIT("00040000")), -EINVAL);
	assert_int_equal(parse(LIT("0005\n0000")), -EINVAL);
	/* after a valid command too */
	reset();
	raw(cap_create, 179 - 4);
	raw("0001", 4);
	assert_int_equal(parse_bd(), -EINVAL);

	/* longer than 65520 bytes: refused as soon as the length is read */
	assert_int_equal(parse(LIT("fff1")), -EINVAL);
	assert_int_equal(parse(LIT("ffff")), -EINVAL);
	assert_int_equal(parse(LIT("FFF1")), -EINVAL);
	assert_int_equal(parse(LIT("fff")), 0);  /* fff0 is still possible */
	assert_int_equal(parse(LIT("fff0")), 0); /* and then needs its bytes */
}

static void test_parse_pkt_max(void **state)
{
	static char caps[GIT_PKT_MAX];
	size_t fixed = 4 + 40 + 1 + 40 + 1 + strlen("refs/heads/agent/a") + 1;

	(void)state;
	/* a capability list filling the largest pkt-line is accepted */
	memset(caps, 'x', sizeof(caps));
	caps[0] = ' ';
	caps[GIT_PKT_MAX - fixed] = '\0';
	reset();
	cmd(A1, B1, "refs/heads/agent/a", caps, "");
	assert_memory_equal(bd.b, "fff0", 4);
	flush();
	assert_int_equal(parse_bd(), 1);

	/* one byte more is refused */
	caps[GIT_PKT_MAX - fixed] = 'x';
	caps[GIT_PKT_MAX - fixed + 1] = '\0';
	reset();
	cmd(A1, B1, "refs/heads/agent/a", caps, "");
	assert_memory_equal(bd.b, "fff1", 4);
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
}

static void test_parse_truncated(void **state)
{
	(void)state;
	/* a pkt-line longer than what arrived asks for more, and the list
	 * is never complete without its flush */
	assert_int_equal(parse((const uint8_t *)cap_create, 100), 0);
	assert_int_equal(parse((const uint8_t *)cap_create, 175), 0);
	assert_int_equal(parse((const uint8_t *)cap_create, 178), 0);
	assert_int_equal(parse((const uint8_t *)cap_create, 179), 1);

	/* a length shorter than the line cuts it: the ref becomes
	 * "refs/heads" (a valid name), and the rest is read as the next
	 * pkt-line, which is not one */
	reset();
	raw("0060", 4);
	raw(cap_create + 4, sizeof(cap_create) - 5);
	assert_int_equal(parse_bd(), -EINVAL);
	/* a length cutting inside the new id */
	reset();
	raw("0040", 4);
	raw(cap_create + 4, sizeof(cap_create) - 5);
	assert_int_equal(parse_bd(), -EINVAL);
}

static void test_parse_bad_ids(void **state)
{
	static const struct {
		const char *old, *new;
	} bad[] = {
		{ Z1, A2 },                                          /* 40 and 64 */
		{ A2, Z1 },                                          /* 64 and 40 */
		{ "D857BA09D4F4BE00882499B2FA0E0C6AAECE368E", B1 }, /* upper case */
		{ A1, "D6bc4a560b52a400aee338053a7d8bc83862f98a" },  /* one upper-case digit */
		{ "d857ba09d4f4be00882499b2fa0e0c6aaece368", B1 },   /* 39 */
		{ A1, "d6bc4a560b52a400aee338053a7d8bc83862f98a0" }, /* 41 */
		{ "g857ba09d4f4be00882499b2fa0e0c6aaece368e", B1 }, /* not hex */
		{ "", B1 },
		{ Z1, Z1 }, /* neither creation, update nor deletion */
		{ Z2, Z2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reset();
		cmd(bad[i].old, bad[i].new, "refs/heads/agent/a", CAPS1, "");
		flush();
		assert_int_equal(parse_bd(), -EINVAL);
	}
	/* the neighbours */
	reset();
	cmd(Z1, B1, "refs/heads/agent/a", CAPS1, "");
	flush();
	assert_int_equal(parse_bd(), 1);

	/* one length for the whole list: a SHA-256 command after a SHA-1
	 * one, or after a SHA-1 shallow line */
	reset();
	cmd(A1, B1, "refs/heads/agent/a", NULL, "");
	cmd(Z2, B2, "refs/heads/agent/b", NULL, "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	line("shallow " A1);
	cmd(Z2, B2, "refs/heads/agent/b", NULL, "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	line("shallow " A2);
	cmd(Z2, B2, "refs/heads/agent/b", NULL, "");
	flush();
	assert_int_equal(parse_bd(), 1);

	/* and the one object-format says */
	reset();
	cmd(A1, B1, "refs/heads/agent/a", CAPS2, "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	cmd(A2, B2, "refs/heads/agent/a", CAPS1, "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	cmd(A1, B1, "refs/heads/agent/a", " report-status object-format=md5", "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	cmd(A1, B1, "refs/heads/agent/a", " object-format=sha1 object-format=sha256", "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
}

static void test_parse_bad_shape(void **state)
{
	static const char *bad[] = {
		A1 "  " B1 " refs/heads/agent/a",  /* two spaces */
		A1 "\t" B1 " refs/heads/agent/a",  /* a tab */
		A1 " " B1 "\trefs/heads/agent/a",
		" " A1 " " B1 " refs/heads/agent/a", /* leading space */
		A1 " " B1,                           /* no ref */
		A1 " " B1 " ",                       /* empty ref */
		A1 B1 " refs/heads/agent/a",
		A1 " " B1 " refs/heads/agent/a\n\n", /* two LFs */
		A1 " " B1 " refs/heads/agent/a\r",
		"shallow",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reset();
		line(bad[i]);
		flush();
		assert_int_equal(parse_bd(), -EINVAL);
	}

	/* capabilities only on the first command */
	reset();
	cmd(A1, B1, "refs/heads/agent/a", CAPS1, "");
	cmd(Z1, B1, "refs/heads/agent/b", " report-status", "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	/* printable capabilities only */
	reset();
	cmd(A1, B1, "refs/heads/agent/a", " report-status\x01", "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	cmd(A1, B1, "refs/heads/agent/a", " agent=\xc3\xa9", "");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	{
		static const char nul2[] = A1 " " B1 " refs/heads/agent/a\0 report-status\0x";
		reset();
		pkt(nul2, sizeof(nul2) - 1);
		flush();
		assert_int_equal(parse_bd(), -EINVAL);
	}

	/* shallow lines only before the commands, with one valid id */
	reset();
	cmd(Z1, B1, "refs/heads/agent/a", CAPS1, "");
	line("shallow " A1);
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	line("shallow " A1 " " B1);
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	line("shallow  " A1);
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	line("shallow D857BA09D4F4BE00882499B2FA0E0C6AAECE368E");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
	reset();
	line("deepen 1");
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
}

static void test_parse_push_cert(void **state)
{
	static const char cert_caps[] = "push-cert\0 report-status-v2 side-band-64k object-format=sha1 "
					"agent=git/2.39.5\n";

	(void)state;
	/* a signed push, as send-pack writes it */
	reset();
	pkt(cert_caps, sizeof(cert_caps) - 1);
	line("certificate version 0.1\n");
	line("pusher a <a@b> 1577836800 +0000\n");
	line("pushee http://127.0.0.1/r1.git\n");
	line("nonce 1577836800-abcdef\n");
	line("\n");
	line(Z1 " " A1 " refs/heads/main\n");
	line("-----BEGIN PGP SIGNATURE-----\n");
	line("-----END PGP SIGNATURE-----\n");
	line("push-cert-end\n");
	flush();
	assert_int_equal(parse_bd(), -ENOTSUP);
	/* refused once its first line is complete, not before */
	assert_int_equal(parse(bd.b, 4 + sizeof(cert_caps) - 2), 0);
	assert_int_equal(parse(bd.b, 4 + sizeof(cert_caps) - 1), -ENOTSUP);
	/* after shallow lines too */
	reset();
	line("shallow " A1 "\n");
	pkt(cert_caps, sizeof(cert_caps) - 1);
	flush();
	assert_int_equal(parse_bd(), -ENOTSUP);
	/* bare */
	reset();
	line("push-cert");
	flush();
	assert_int_equal(parse_bd(), -ENOTSUP);
	/* a push-cert line among commands is just malformed */
	reset();
	cmd(Z1, A1, "refs/heads/agent/a", CAPS1, "");
	pkt(cert_caps, sizeof(cert_caps) - 1);
	flush();
	assert_int_equal(parse_bd(), -EINVAL);
}

static void test_parse_too_many(void **state)
{
	(void)state;
	reset();
	cmd(Z1, A1, "refs/heads/agent/a", CAPS1, "");
	cmd(Z1, A1, "refs/heads/agent/b", NULL, "");
	cmd(Z1, A1, "refs/heads/agent/c", NULL, "");
	flush();
	assert_int_equal(parse_max(bd.b, bd.n, 3), 1);
	assert_int_equal(n_out, 3);
	assert_int_equal(parse_max(bd.b, bd.n, 2), -E2BIG);
	assert_int_equal(parse_max(bd.b, bd.n, 0), -E2BIG);
	/* not written past max */
	{
		struct git_ref_update two[3];
		size_t nn, cc;

		memset(two, 0x5a, sizeof(two));
		assert_int_equal(git_parse_push_commands(bd.b, bd.n, two, 2, &nn, &cc), -E2BIG);
		for (size_t i = 0; i < sizeof(two[2]); i++)
			assert_int_equal(((uint8_t *)&two[2])[i], 0x5a);
	}
	/* a malformed command past max is still malformed */
	reset();
	cmd(Z1, A1, "refs/heads/agent/a", CAPS1, "");
	cmd(Z1, A1, "refs/heads/agent/..", NULL, "");
	flush();
	assert_int_equal(parse_max(bd.b, bd.n, 1), -EINVAL);
}

static void test_parse_null_args(void **state)
{
	size_t a, b;

	(void)state;
	assert_int_equal(git_parse_push_commands(LIT(cap_create), out, 1, NULL, &b), -EINVAL);
	assert_int_equal(git_parse_push_commands(LIT(cap_create), out, 1, &a, NULL), -EINVAL);
	assert_int_equal(git_parse_push_commands(NULL, 4, out, 1, &a, &b), -EINVAL);
	assert_int_equal(git_parse_push_commands(LIT(cap_create), NULL, 1, &a, &b), -EINVAL);
	assert_int_equal(git_parse_push_commands(LIT(cap_create), out, 1, &a, &b), 1);
}

/* ---- ref names ---- */

static int parse_ref(const char *ref)
{
	reset();
	cmd(Z1, A1, ref, CAPS1, "\n");
	flush();
	return parse_bd();
}

static void test_refnames(void **state)
{
	static const char *bad[] = {
		"HEAD",
		"main",
		"heads/main",
		"refs/",
		"refs",
		"Refs/heads/a",
		"refsx/heads/a",
		"/refs/heads/a",
		"refs/heads/a b",
		"refs/heads/a~1",
		"refs/heads/a^",
		"refs/heads/a^{}",
		"refs/heads/a:b",
		"refs/heads/a?",
		"refs/heads/a*",
		"refs/heads/a[b",
		"refs/heads/a\\b",
		"refs/heads/a..b",
		"refs/heads/..",
		"refs/heads/a@{1}",
		"refs/heads/@{",
		"refs/heads//a",
		"refs//heads",
		"refs/heads/a/",
		"refs/heads/a.lock",
		"refs/heads/a.lock/b",
		"refs/heads/.lock",
		"refs/heads/.a",
		"refs/heads/a/.b",
		"refs/.heads/a",
		"refs/heads/a.",
		"refs/heads/a/.",
		"refs/heads/a\x01",
		"refs/heads/a\x1f",
		"refs/heads/a\x7f",
		"refs/heads/a\tb",
	};
	static const char *good[] = {
		"refs/heads/main",
		"refs/heads",
		"refs/heads/a.b",
		"refs/heads/a.b.c/d",
		"refs/heads/a@b",
		"refs/heads/@",
		"refs/heads/a{b}",
		"refs/heads/a}",
		"refs/heads/lock",
		"refs/heads/a.locks",
		"refs/heads/a.lockx/b",
		"refs/heads/a-.-b",
		"refs/heads/a%b",
		"refs/heads/\xc3\xbc",
		"refs/tags/v1.0.0",
		"refs/notes/commits",
	};
	char longref[GIT_REF_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse_ref(bad[i]) != -EINVAL)
			fail_msg("%s accepted", bad[i]);
		assert_false(git_refname_ok(bad[i]));
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (parse_ref(good[i]) != 1)
			fail_msg("%s refused", good[i]);
		assert_string_equal(out[0].ref, good[i]);
		assert_true(git_refname_ok(good[i]));
	}
	/* 255 bytes at most */
	memset(longref, 'a', sizeof(longref));
	memcpy(longref, "refs/heads/", 11);
	longref[GIT_REF_MAX] = '\0';
	assert_int_equal(parse_ref(longref), 1);
	assert_string_equal(out[0].ref, longref);
	assert_true(git_refname_ok(longref));
	longref[GIT_REF_MAX] = 'a';
	longref[GIT_REF_MAX + 1] = '\0';
	assert_int_equal(parse_ref(longref), -EINVAL);
	assert_false(git_refname_ok(longref));
	assert_false(git_refname_ok(NULL));

	/* a NUL inside the ref ends it: the rest is capabilities, which a
	 * later command may not have */
	{
		static const char second[] = Z1 " " A1 " refs/heads/agent/b\0/../../main";
		reset();
		cmd(Z1, A1, "refs/heads/agent/a", CAPS1, "");
		pkt(second, sizeof(second) - 1);
		flush();
		assert_int_equal(parse_bd(), -EINVAL);
		/* the same line first is a ref and capabilities */
		reset();
		pkt(second, sizeof(second) - 1);
		flush();
		assert_int_equal(parse_bd(), 1);
		assert_string_equal(out[0].ref, "refs/heads/agent/b");
	}
}

/* ---- classification ---- */

static enum git_op classify(const char *method, const char *path, const char *query, char *repo,
			    size_t repo_len)
{
	return git_classify(method, path, strlen(path), query, query ? strlen(query) : 0, repo, repo_len);
}

static void assert_op(const char *method, const char *path, const char *query, enum git_op want,
		      const char *want_repo)
{
	char repo[GIT_REPO_MAX + 1];
	enum git_op op;

	memset(repo, 'x', sizeof(repo));
	op = classify(method, path, query, repo, sizeof(repo));
	if (op != want)
		fail_msg("%s %s?%s: %s, want %s", method, path, query ? query : "", git_op_name(op),
			 git_op_name(want));
	assert_string_equal(repo, want_repo);
}

static void test_classify_ops(void **state)
{
	(void)state;
	assert_op("GET", "/acme/widget.git/info/refs", "service=git-upload-pack", GIT_OP_FETCH_ADVERTISE,
		  "/acme/widget.git");
	assert_op("POST", "/acme/widget.git/git-upload-pack", NULL, GIT_OP_FETCH, "/acme/widget.git");
	assert_op("GET", "/acme/widget.git/info/refs", "service=git-receive-pack", GIT_OP_PUSH_ADVERTISE,
		  "/acme/widget.git");
	assert_op("POST", "/acme/widget.git/git-receive-pack", NULL, GIT_OP_PUSH, "/acme/widget.git");
	/* without .git, nested, one segment */
	assert_op("POST", "/acme/widget/git-receive-pack", NULL, GIT_OP_PUSH, "/acme/widget");
	assert_op("GET", "/g/a/b/c.git/info/refs", "service=git-upload-pack", GIT_OP_FETCH_ADVERTISE,
		  "/g/a/b/c.git");
	assert_op("POST", "/r/git-upload-pack", "", GIT_OP_FETCH, "/r");
	/* dots inside a segment are not dot segments */
	assert_op("POST", "/acme/.../a..b/.x/git-upload-pack", NULL, GIT_OP_FETCH, "/acme/.../a..b/.x");
	assert_op("POST", "/a/info/refs/git-upload-pack", NULL, GIT_OP_FETCH, "/a/info/refs");
	assert_op("GET", "/a/git-receive-pack/info/refs", "service=git-receive-pack", GIT_OP_PUSH_ADVERTISE,
		  "/a/git-receive-pack");
	/* no repo buffer */
	assert_int_equal(classify("POST", "/a/git-upload-pack", NULL, NULL, 0), GIT_OP_FETCH);
}

static void test_classify_neighbours(void **state)
{
	char path[GIT_REPO_MAX + 64], repo[16];

	(void)state;
	/* wrong method for the shape */
	assert_op("POST", "/acme/w.git/info/refs", "service=git-upload-pack", GIT_OP_NONE, "");
	assert_op("PUT", "/acme/w.git/info/refs", "service=git-receive-pack", GIT_OP_NONE, "");
	assert_op("HEAD", "/acme/w.git/info/refs", "service=git-upload-pack", GIT_OP_NONE, "");
	assert_op("get", "/acme/w.git/info/refs", "service=git-upload-pack", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/git-upload-pack", NULL, GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("PUT", "/acme/w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("post", "/acme/w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST ", "/acme/w.git/git-receive-pack", NULL, GIT_OP_NONE, "");

	/* the dumb protocol, and queries that are not exactly the one
	 * parameter */
	assert_op("GET", "/acme/w.git/info/refs", NULL, GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-upload-pack&service=git-receive-pack",
		  GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-receive-pack&service=git-upload-pack",
		  GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-upload-pack&service=git-upload-pack",
		  GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-upload-pack&x=1", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "x=1&service=git-upload-pack", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-upload-archive", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-upload-pac", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-upload-packs", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "SERVICE=git-upload-pack", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git%2Dupload-pack", GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs", "service=git-upload-pack&", GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/git-receive-pack", "service=git-receive-pack", GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/git-upload-pack", "x", GIT_OP_NONE, "");
	assert_int_equal(git_classify("POST", "/a/git-upload-pack", 18, NULL, 3, NULL, 0), GIT_OP_NONE);

	/* other files of the repository */
	assert_op("GET", "/acme/w.git/HEAD", NULL, GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/objects/info/packs", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/git-upload-archive", NULL, GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/refs/", "service=git-upload-pack", GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/git-receive-pack/", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/GIT-RECEIVE-PACK", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/xgit-receive-pack", NULL, GIT_OP_NONE, "");

	/* paths a server would read as another repository */
	assert_op("POST", "/acme/w%2Egit/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/%2e%2e/secret.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme%2Fw.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/git-receive-pack%00", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/../secret.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/./w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/../w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/../git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git/./git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("GET", "/acme/w.git/info/./refs", "service=git-upload-pack", GIT_OP_NONE, "");
	assert_op("POST", "/acme/..", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme//w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "//acme/w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git//git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme\\..\\secret.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme;x=1/w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git?/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w.git#/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w .git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w\x7f.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "/acme/w\xc3\xa9.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "acme/w.git/git-receive-pack", NULL, GIT_OP_NONE, "");
	assert_op("POST", "", NULL, GIT_OP_NONE, "");
	assert_int_equal(git_classify("POST", "/a\0/git-upload-pack", 19, NULL, 0, NULL, 0), GIT_OP_NONE);
	assert_int_equal(git_classify("POST", NULL, 0, NULL, 0, NULL, 0), GIT_OP_NONE);
	assert_int_equal(git_classify(NULL, "/a/git-upload-pack", 18, NULL, 0, NULL, 0), GIT_OP_NONE);

	/* no repository before the suffix */
	assert_op("GET", "/info/refs", "service=git-upload-pack", GIT_OP_NONE, "");
	assert_op("POST", "/git-receive-pack", NULL, GIT_OP_NONE, "");

	/* the path's length is what counts, not a NUL after it */
	assert_int_equal(git_classify("POST", "/a/git-upload-packXYZ", 18, NULL, 0, NULL, 0), GIT_OP_FETCH);
	assert_int_equal(git_classify("POST", "/a/git-upload-pack", 17, NULL, 0, NULL, 0), GIT_OP_NONE);

	/* a repository that does not fit the caller's buffer, or is over
	 * GIT_REPO_MAX, is not classified */
	memset(repo, 'x', sizeof(repo));
	assert_int_equal(classify("POST", "/acme/widget.git/git-upload-pack", NULL, repo, sizeof(repo)),
			 GIT_OP_NONE);
	assert_string_equal(repo, "");
	assert_int_equal(classify("POST", "/acme/widget.gi/git-upload-pack", NULL, repo, sizeof(repo)),
			 GIT_OP_FETCH);
	assert_string_equal(repo, "/acme/widget.gi");
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	strcpy(path + GIT_REPO_MAX, "/git-upload-pack");
	assert_int_equal(classify("POST", path, NULL, NULL, 0), GIT_OP_FETCH);
	path[GIT_REPO_MAX] = 'a';
	strcpy(path + GIT_REPO_MAX + 1, "/git-upload-pack");
	assert_int_equal(classify("POST", path, NULL, NULL, 0), GIT_OP_NONE);
}

/* ---- decisions ---- */

static char *g_repos[] = { "/acme/widget.git", "/tools/**", NULL };
static char *g_push[] = { "refs/heads/agent/**", NULL };
static char *g_push_all[] = { "refs/**", NULL };
static char *g_none[] = { NULL };

static struct policy_git_binding binding(void)
{
	struct policy_git_binding b = { 0 };

	b.repos = g_repos;
	b.n_repos = 2;
	b.fetch = true;
	b.push = g_push;
	b.n_push = 1;
	return b;
}

static char reason[512];

static bool decide(const struct policy_git_binding *b, enum git_op op, const char *repo,
		   const struct git_ref_update *u, size_t n)
{
	bool ok;

	memset(reason, 'x', sizeof(reason));
	ok = git_decide(b, op, repo, u, n, reason, sizeof(reason));
	if (ok) {
		assert_string_equal(reason, "");
	} else {
		assert_true(reason[0] != '\0');
		for (const char *p = reason; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7f);
	}
	return ok;
}

static bool push1(const struct policy_git_binding *b, const char *old, const char *new, const char *ref)
{
	struct git_ref_update u;

	snprintf(u.old_id, sizeof(u.old_id), "%s", old);
	snprintf(u.new_id, sizeof(u.new_id), "%s", new);
	snprintf(u.ref, sizeof(u.ref), "%s", ref);
	return decide(b, GIT_OP_PUSH, "/acme/widget.git", &u, 1);
}

static void assert_reason_has(const char *s)
{
	if (!strstr(reason, s))
		fail_msg("reason \"%s\" lacks \"%s\"", reason, s);
}

static void test_decide_fetch(void **state)
{
	struct policy_git_binding b = binding();

	(void)state;
	assert_true(decide(&b, GIT_OP_FETCH_ADVERTISE, "/acme/widget.git", NULL, 0));
	assert_true(decide(&b, GIT_OP_FETCH, "/acme/widget.git", NULL, 0));
	/* the same repository without .git */
	assert_true(decide(&b, GIT_OP_FETCH, "/acme/widget", NULL, 0));
	assert_true(decide(&b, GIT_OP_FETCH, "/tools/a/b", NULL, 0));

	/* repository glob mismatch */
	assert_false(decide(&b, GIT_OP_FETCH, "/acme/other.git", NULL, 0));
	assert_reason_has("/acme/other.git");
	assert_reason_has("repos");
	assert_false(decide(&b, GIT_OP_FETCH, "/acme/widget.git.git", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, "/acme/widgetx", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, "/acme/widget.gitx", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, "/acme/widget/x", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, "/ACME/widget.git", NULL, 0));
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/other.git", NULL, 0));
	assert_false(decide(&b, GIT_OP_PUSH_ADVERTISE, "/x/widget.git", NULL, 0));
	/* the glob is not given a decoded or dotted path to match */
	assert_false(decide(&b, GIT_OP_FETCH, "/acme/widget%2Egit", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, "/tools/../secret.git", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, "/tools//x", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, "", NULL, 0));
	assert_false(decide(&b, GIT_OP_FETCH, NULL, NULL, 0));

	/* the reverse of the .git rule is not applied */
	{
		static char *bare[] = { "/acme/widget", NULL };
		b.repos = bare;
		assert_true(decide(&b, GIT_OP_FETCH, "/acme/widget", NULL, 0));
		assert_false(decide(&b, GIT_OP_FETCH, "/acme/widget.git", NULL, 0));
		b = binding();
	}

	/* any repository */
	b.repos = NULL;
	assert_true(decide(&b, GIT_OP_FETCH, "/anything/at/all", NULL, 0));
	b = binding();

	/* fetch disallowed: both fetch requests refused, push unaffected */
	b.fetch = false;
	assert_false(decide(&b, GIT_OP_FETCH_ADVERTISE, "/acme/widget.git", NULL, 0));
	assert_reason_has("fetch: false");
	assert_false(decide(&b, GIT_OP_FETCH, "/acme/widget.git", NULL, 0));
	assert_true(decide(&b, GIT_OP_PUSH_ADVERTISE, "/acme/widget.git", NULL, 0));
	assert_true(push1(&b, A1, B1, "refs/heads/agent/x"));
}

static void test_decide_none(void **state)
{
	struct policy_git_binding b = binding();

	(void)state;
	assert_false(decide(&b, GIT_OP_NONE, "/acme/widget.git", NULL, 0));
	assert_reason_has("not a git smart HTTP request");
	assert_false(decide(&b, (enum git_op)42, "/acme/widget.git", NULL, 0));
	assert_false(decide(NULL, GIT_OP_FETCH, "/acme/widget.git", NULL, 0));
	/* a NULL reason is fine */
	assert_false(git_decide(&b, GIT_OP_NONE, "/acme/widget.git", NULL, 0, NULL, 0));
	assert_true(git_decide(&b, GIT_OP_FETCH, "/acme/widget.git", NULL, 0, NULL, 0));
}

static void test_decide_push_branches(void **state)
{
	struct policy_git_binding b = binding();

	(void)state;
	assert_true(decide(&b, GIT_OP_PUSH_ADVERTISE, "/acme/widget.git", NULL, 0));
	/* the probe */
	assert_true(decide(&b, GIT_OP_PUSH, "/acme/widget.git", NULL, 0));

	/* allowed branch: creation and update, SHA-1 and SHA-256 */
	assert_true(push1(&b, Z1, A1, "refs/heads/agent/x"));
	assert_true(push1(&b, A1, B1, "refs/heads/agent/x/y"));
	assert_true(push1(&b, A2, B2, "refs/heads/agent/x"));

	/* push to main refused, naming it */
	assert_false(push1(&b, A1, B1, "refs/heads/main"));
	assert_reason_has("refs/heads/main");
	assert_reason_has("push");
	assert_false(push1(&b, Z1, B1, "refs/heads/agentx"));
	assert_false(push1(&b, Z1, B1, "refs/heads/agent"));
	assert_false(push1(&b, Z1, B1, "refs/notes/agent/x"));

	/* a '%' would be decoded by the glob: refused, its plain
	 * neighbour allowed */
	{
		static char *main_only[] = { "refs/heads/main", NULL };
		b.push = main_only;
		assert_true(push1(&b, A1, B1, "refs/heads/main"));
		assert_false(push1(&b, A1, B1, "refs/heads/m%61in"));
		assert_reason_has("'%'");
		b = binding();
	}

	/* commands that did not come from the parser */
	assert_false(push1(&b, A1, B2, "refs/heads/agent/x"));
	assert_false(push1(&b, "D857BA09D4F4BE00882499B2FA0E0C6AAECE368E", B1, "refs/heads/agent/x"));
	assert_false(push1(&b, A1, B1, "refs/heads/agent/../../main"));
	assert_false(push1(&b, A1, B1, "HEAD"));
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/widget.git", NULL, 1));

	/* no push permission at all */
	b.push = NULL;
	assert_false(decide(&b, GIT_OP_PUSH_ADVERTISE, "/acme/widget.git", NULL, 0));
	assert_reason_has("no push");
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/widget.git", NULL, 0));
	assert_false(push1(&b, Z1, A1, "refs/heads/agent/x"));
	b.push = g_none;
	assert_false(decide(&b, GIT_OP_PUSH_ADVERTISE, "/acme/widget.git", NULL, 0));
	b.delete_refs = true;
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/widget.git", NULL, 0));
	/* tags alone are a push permission */
	b.tags = true;
	assert_true(decide(&b, GIT_OP_PUSH_ADVERTISE, "/acme/widget.git", NULL, 0));
	assert_true(decide(&b, GIT_OP_PUSH, "/acme/widget.git", NULL, 0));
	assert_true(push1(&b, Z1, A1, "refs/tags/v1"));
	assert_false(push1(&b, Z1, A1, "refs/heads/agent/x"));
}

static void test_decide_delete(void **state)
{
	struct policy_git_binding b = binding();

	(void)state;
	/* refused without delete: true, even where the glob matches */
	assert_false(push1(&b, A1, Z1, "refs/heads/agent/x"));
	assert_reason_has("refs/heads/agent/x");
	assert_reason_has("delete: true");
	assert_false(push1(&b, A2, Z2, "refs/heads/agent/x"));

	b.delete_refs = true;
	assert_true(push1(&b, A1, Z1, "refs/heads/agent/x"));
	assert_true(push1(&b, A2, Z2, "refs/heads/agent/x"));
	/* delete: true does not reach past the push globs */
	assert_false(push1(&b, A1, Z1, "refs/heads/main"));
	assert_reason_has("refs/heads/main");
	assert_reason_has("push glob");

	/* tags: deleting one needs delete, a glob and tags */
	b.push = g_push_all;
	assert_false(push1(&b, A1, Z1, "refs/tags/v1"));
	assert_reason_has("tags: true");
	b.tags = true;
	assert_true(push1(&b, A1, Z1, "refs/tags/v1"));
	b.delete_refs = false;
	assert_false(push1(&b, A1, Z1, "refs/tags/v1"));
}

static void test_decide_tags(void **state)
{
	struct policy_git_binding b = binding();

	(void)state;
	/* tag creation: refused without tags, even under a glob that
	 * matches every ref */
	assert_false(push1(&b, Z1, A1, "refs/tags/v1"));
	assert_reason_has("refs/tags/v1");
	assert_reason_has("tags: true");
	b.push = g_push_all;
	assert_false(push1(&b, Z1, A1, "refs/tags/v1"));
	b.tags = true;
	assert_true(push1(&b, Z1, A1, "refs/tags/v1"));
	assert_true(push1(&b, Z2, A2, "refs/tags/release/2.0"));

	/* moving a tag: refused whatever the policy */
	b.delete_refs = true;
	assert_false(push1(&b, A1, B1, "refs/tags/v1"));
	assert_reason_has("refs/tags/v1");
	assert_reason_has("never moved");
	assert_false(push1(&b, A2, B2, "refs/tags/v1"));
	/* refs/tagsx is not a tag */
	assert_true(push1(&b, A1, B1, "refs/tagsx/v1"));
}

static void test_decide_parsed(void **state)
{
	struct policy_git_binding b = binding();

	(void)state;
	/* the captured atomic push: main update, old deletion, agent/x
	 * creation, tag v1 creation */
	assert_int_equal(parse(LIT(cap_multi)), 1);
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/widget.git", out, n_out));
	assert_reason_has("refs/heads/main");

	b.push = g_push_all;
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/widget.git", out, n_out));
	assert_reason_has("refs/heads/old"); /* the first offender */
	b.delete_refs = true;
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/widget.git", out, n_out));
	assert_reason_has("refs/tags/v1");
	b.tags = true;
	assert_true(decide(&b, GIT_OP_PUSH, "/acme/widget.git", out, n_out));
	assert_true(decide(&b, GIT_OP_PUSH, "/acme/widget", out, n_out));
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/gadget.git", out, n_out));

	/* the captured SHA-256 push, with only agent/ branches allowed */
	b = binding();
	assert_int_equal(parse(LIT(cap_sha256)), 1);
	assert_false(decide(&b, GIT_OP_PUSH, "/acme/widget.git", out, n_out));
	assert_reason_has("refs/heads/main");
	assert_true(decide(&b, GIT_OP_PUSH, "/acme/widget.git", out + 1, 1));
}

static void test_decide_reason_quoting(void **state)
{
	struct policy_git_binding b = binding();
	char small[24];

	(void)state;
	/* non-ASCII in a ref is quoted, never copied raw into a log */
	assert_false(push1(&b, Z1, A1, "refs/heads/\xc3\xbc"));
	assert_reason_has("refs/heads/\\xc3\\xbc");
	/* a short buffer gets a terminated cut */
	memset(small, 'x', sizeof(small));
	assert_false(git_decide(&b, GIT_OP_FETCH, "/acme/other.git", NULL, 0, small, sizeof(small)));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	memset(small, 'x', sizeof(small));
	assert_false(git_decide(&b, GIT_OP_FETCH, "/acme/other.git", NULL, 0, small, 1));
	assert_int_equal(small[0], '\0');
	assert_int_equal(small[1], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_captured_create),
		cmocka_unit_test(test_parse_captured_multi),
		cmocka_unit_test(test_parse_captured_delete),
		cmocka_unit_test(test_parse_captured_sha256),
		cmocka_unit_test(test_parse_captured_shallow),
		cmocka_unit_test(test_parse_probe),
		cmocka_unit_test(test_parse_shallow_only),
		cmocka_unit_test(test_parse_variants),
		cmocka_unit_test(test_parse_bad_length),
		cmocka_unit_test(test_parse_pkt_max),
		cmocka_unit_test(test_parse_truncated),
		cmocka_unit_test(test_parse_bad_ids),
		cmocka_unit_test(test_parse_bad_shape),
		cmocka_unit_test(test_parse_push_cert),
		cmocka_unit_test(test_parse_too_many),
		cmocka_unit_test(test_parse_null_args),
		cmocka_unit_test(test_refnames),
		cmocka_unit_test(test_classify_ops),
		cmocka_unit_test(test_classify_neighbours),
		cmocka_unit_test(test_decide_fetch),
		cmocka_unit_test(test_decide_none),
		cmocka_unit_test(test_decide_push_branches),
		cmocka_unit_test(test_decide_delete),
		cmocka_unit_test(test_decide_tags),
		cmocka_unit_test(test_decide_parsed),
		cmocka_unit_test(test_decide_reason_quoting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
