/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the git smart HTTP module: the push command
 * parser, request classification and push decisions.
 *
 * The input is a git-receive-pack request body. Besides crashes and
 * sanitizer reports (the input is copied to a buffer of exactly its
 * size, so any over-read is caught) it checks:
 *  - the result is 1, 0, -EINVAL, -ENOTSUP or -E2BIG, and the counts are
 *    zero unless 1 is returned;
 *  - an accepted list ends in a flush within the input, has at most max
 *    commands, and every command holds ids of one length (40 or 64
 *    lower-case hex digits, old and new not both zero) and a ref name
 *    valid by git-check-ref-format's rules, checked here independently;
 *  - prefixes: any prefix shorter than the list gives 0, any longer one
 *    gives the same list (the proxy parses a growing buffer);
 *  - max: the list parses the same with room for exactly its commands,
 *    and one fewer gives -E2BIG;
 *  - decisions on an accepted list allow only what the binding names:
 *    no deletion without delete, no tag moved, no branch outside the
 *    push globs; and a denial's reason is printable ASCII.
 * The same bytes, split at their first two LFs into method, path and
 * query, are classified: an operation's repository is a proper prefix of
 * the path with no '%', "//" or dot segment, and the method and query are
 * the ones the operation needs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net/gitproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXCMD 32
#define PREFIX_CHECKS 600

static struct git_ref_update cmds[MAXCMD], again[MAXCMD];

static int parse_exact(const uint8_t *data, size_t size, struct git_ref_update *out, size_t max, size_t *n,
		       size_t *used)
{
	uint8_t *copy = malloc(size ? size : 1);
	int r;

	CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	*n = *used = 7777;
	r = git_parse_push_commands(copy, size, max ? out : NULL, max, n, used);
	free(copy);
	CHECK(r == 1 || r == 0 || r == -EINVAL || r == -ENOTSUP || r == -E2BIG);
	if (r != 1)
		CHECK(*n == 0 && *used == 0);
	return r;
}

/* git-check-ref-format, written out again rather than trusted. */
static bool ref_valid(const char *r)
{
	size_t len = strnlen(r, GIT_REF_MAX + 1);
	const char *comp = r;

	if (len > GIT_REF_MAX || strncmp(r, "refs/", 5) != 0 || len == 5)
		return false;
	if (strstr(r, "..") || strstr(r, "@{") || strstr(r, "//"))
		return false;
	if (r[len - 1] == '/' || r[len - 1] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)r[i];
		if (c < 0x20 || c == 0x7f || strchr(" ~^:?*[\\", c))
			return false;
	}
	for (;;) {
		const char *slash = strchr(comp, '/');
		size_t cl = slash ? (size_t)(slash - comp) : strlen(comp);

		if (cl == 0 || comp[0] == '.')
			return false;
		if (cl >= 5 && memcmp(comp + cl - 5, ".lock", 5) == 0)
			return false;
		if (!slash)
			return true;
		comp = slash + 1;
	}
}

static size_t id_len(const char *id)
{
	size_t n = strnlen(id, GIT_OID_HEX_SHA256 + 1);

	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", id[i]) || id[i] == '\0')
			return 0;
	return n == GIT_OID_HEX_SHA1 || n == GIT_OID_HEX_SHA256 ? n : 0;
}

static bool zero_id(const char *id)
{
	return strspn(id, "0") == strlen(id);
}

static void check_commands(const struct git_ref_update *u, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		size_t ol = id_len(u[i].old_id);

		CHECK(ol != 0);
		CHECK(id_len(u[i].new_id) == ol);
		CHECK(len == 0 || len == ol);
		len = ol;
		CHECK(!(zero_id(u[i].old_id) && zero_id(u[i].new_id)));
		CHECK(ref_valid(u[i].ref));
		CHECK(git_refname_ok(u[i].ref));
	}
}

static void check_reason(const char *reason, bool ok)
{
	if (ok) {
		CHECK(reason[0] == '\0');
		return;
	}
	CHECK(reason[0] != '\0');
	for (const char *p = reason; *p; p++)
		CHECK(*p >= 0x20 && *p < 0x7f);
}

static void check_decisions(const struct git_ref_update *u, size_t n)
{
	static char *agent[] = { "refs/heads/agent/**", NULL };
	static char *all[] = { "refs/**", NULL };
	static char *repos[] = { "/acme/widget.git", NULL };
	struct policy_git_binding b = { 0 };
	char reason[512];
	bool ok;

	b.repos = repos;
	b.n_repos = 1;
	b.fetch = true;
	b.push = agent;
	b.n_push = 1;
	ok = git_decide(&b, GIT_OP_PUSH, "/acme/widget.git", u, n, reason, sizeof(reason));
	check_reason(reason, ok);
	if (ok) {
		for (size_t i = 0; i < n; i++) {
			CHECK(strncmp(u[i].ref, "refs/heads/agent/", 17) == 0);
			CHECK(!zero_id(u[i].new_id));
			CHECK(!strchr(u[i].ref, '%'));
		}
	}
	/* another repository: never */
	ok = git_decide(&b, GIT_OP_PUSH, "/acme/gadget.git", u, n, reason, sizeof(reason));
	CHECK(!ok);
	check_reason(reason, ok);

	/* everything but tag moves */
	b.push = all;
	b.tags = true;
	b.delete_refs = true;
	ok = git_decide(&b, GIT_OP_PUSH, "/acme/widget", u, n, reason, sizeof(reason));
	check_reason(reason, ok);
	{
		bool refused = false;

		for (size_t i = 0; i < n; i++) {
			if (strncmp(u[i].ref, "refs/tags/", 10) == 0 && !zero_id(u[i].old_id) &&
			    !zero_id(u[i].new_id))
				refused = true;
			if (strchr(u[i].ref, '%'))
				refused = true;
		}
		CHECK(ok == !refused);
	}

	/* tags only */
	b.push = NULL;
	b.delete_refs = false;
	ok = git_decide(&b, GIT_OP_PUSH, "/acme/widget.git", u, n, reason, sizeof(reason));
	check_reason(reason, ok);
	if (ok)
		for (size_t i = 0; i < n; i++) {
			CHECK(strncmp(u[i].ref, "refs/tags/", 10) == 0);
			CHECK(zero_id(u[i].old_id) && !zero_id(u[i].new_id));
		}
}

static void check_prefix(const uint8_t *data, size_t k, size_t n, size_t used)
{
	size_t n2, used2;
	int r = parse_exact(data, k, again, MAXCMD, &n2, &used2);

	if (k < used) {
		CHECK(r == 0);
		return;
	}
	CHECK(r == 1 && n2 == n && used2 == used);
	CHECK(memcmp(again, cmds, n * sizeof(cmds[0])) == 0);
}

static void check_parse(const uint8_t *data, size_t size)
{
	size_t n, used, n2, used2, step;
	int r, r2;

	r = parse_exact(data, size, cmds, MAXCMD, &n, &used);
	if (r != 1) {
		/* a refusal stays one with more bytes */
		if (r < 0) {
			uint8_t *more = malloc(size + 4);
			CHECK(more != NULL);
			memcpy(more, data, size);
			memcpy(more + size, "0000", 4);
			r2 = git_parse_push_commands(more, size + 4, cmds, MAXCMD, &n2, &used2);
			free(more);
			CHECK(r2 == r);
		}
		return;
	}

	CHECK(used >= 4 && used <= size);
	CHECK(memcmp(data + used - 4, "0000", 4) == 0);
	CHECK(n <= MAXCMD);
	check_commands(cmds, n);

	/* the list alone is the same list */
	r2 = parse_exact(data, used, again, MAXCMD, &n2, &used2);
	CHECK(r2 == 1 && n2 == n && used2 == used);
	CHECK(memcmp(again, cmds, n * sizeof(cmds[0])) == 0);

	/* room for exactly its commands, and one fewer */
	r2 = parse_exact(data, size, again, n, &n2, &used2);
	CHECK(r2 == 1 && n2 == n && used2 == used);
	if (n > 0) {
		r2 = parse_exact(data, size, again, n - 1, &n2, &used2);
		CHECK(r2 == -E2BIG);
	}

	/* prefixes: every one when few, else a spread; and the edges */
	step = used / PREFIX_CHECKS + 1;
	for (size_t k = 0; k < used; k += step)
		check_prefix(data, k, n, used);
	for (size_t k = used >= 5 ? used - 5 : 0; k <= size && k <= used + 8; k++)
		check_prefix(data, k, n, used);
	check_prefix(data, size, n, used);

	check_decisions(cmds, n);
}

static void check_classify(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nl1 = memchr(s, '\n', size), *nl2, *path, *query;
	size_t path_len, query_len;
	char method[16], repo[GIT_REPO_MAX + 1];
	enum git_op op;

	if (!nl1 || (size_t)(nl1 - s) >= sizeof(method))
		return;
	memcpy(method, s, (size_t)(nl1 - s));
	method[nl1 - s] = '\0';
	path = nl1 + 1;
	nl2 = memchr(path, '\n', size - (size_t)(path - s));
	path_len = nl2 ? (size_t)(nl2 - path) : size - (size_t)(path - s);
	query = nl2 ? nl2 + 1 : NULL;
	query_len = nl2 ? size - (size_t)(query - s) : 0;

	memset(repo, 'x', sizeof(repo));
	op = git_classify(method, path, path_len, query, query_len, repo, sizeof(repo));
	if (op == GIT_OP_NONE) {
		CHECK(repo[0] == '\0');
		return;
	}
	{
		size_t rl = strlen(repo);
		const char *suffix = (op == GIT_OP_FETCH_ADVERTISE || op == GIT_OP_PUSH_ADVERTISE) ? "/info/refs"
				     : op == GIT_OP_FETCH ? "/git-upload-pack"
							  : "/git-receive-pack";
		char reason[512];
		struct policy_git_binding b = { 0 };
		bool ok;

		CHECK(rl >= 2 && rl <= GIT_REPO_MAX && repo[0] == '/');
		CHECK(rl + strlen(suffix) == path_len);
		CHECK(memcmp(repo, path, rl) == 0 && memcmp(path + rl, suffix, strlen(suffix)) == 0);
		CHECK(!strchr(repo, '%') && !strchr(repo, '\\') && !strstr(repo, "//"));
		CHECK(!strstr(repo, "/./") && !strstr(repo, "/../"));
		CHECK(strcmp(repo + rl - 2, "/.") != 0 && (rl < 3 || strcmp(repo + rl - 3, "/..") != 0));
		for (size_t i = 0; i < path_len; i++)
			CHECK(path[i] > 0x20 && path[i] < 0x7f);
		switch (op) {
		case GIT_OP_FETCH_ADVERTISE:
			CHECK(strcmp(method, "GET") == 0);
			CHECK(query_len == 23 && memcmp(query, "service=git-upload-pack", 23) == 0);
			break;
		case GIT_OP_PUSH_ADVERTISE:
			CHECK(strcmp(method, "GET") == 0);
			CHECK(query_len == 24 && memcmp(query, "service=git-receive-pack", 24) == 0);
			break;
		case GIT_OP_FETCH:
		case GIT_OP_PUSH:
			CHECK(strcmp(method, "POST") == 0);
			CHECK(query_len == 0);
			break;
		case GIT_OP_NONE:
			CHECK(!"unreachable");
		}
		/* what classify gives, decide takes */
		b.fetch = true;
		ok = git_decide(&b, op, repo, NULL, 0, reason, sizeof(reason));
		check_reason(reason, ok);
		CHECK(ok == (op == GIT_OP_FETCH || op == GIT_OP_FETCH_ADVERTISE));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_parse(data, size);
	check_classify(data, size);
	return 0;
}
