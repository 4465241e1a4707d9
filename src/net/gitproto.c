/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Git smart HTTP: classify requests, parse a push's command list, decide
 * them against a credential's git binding.
 *
 * The proxy holds a credential that can push; the agent chooses every
 * byte of the request. So the parser accepts only what git's own
 * send-pack writes (and receive-pack would read the same way), bounded by
 * the pkt-line limit, and the decision re-checks what it is given instead
 * of trusting that it came from the parser.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "net/gitproto.h"
#include "net/netpolicy.h"
#include "util/error.h"
#include "util/hex.h"

/* ---- requests ---- */

const char *git_op_name(enum git_op op)
{
	switch (op) {
	case GIT_OP_NONE:
		return "not git";
	case GIT_OP_FETCH_ADVERTISE:
		return "fetch advertisement";
	case GIT_OP_FETCH:
		return "fetch";
	case GIT_OP_PUSH_ADVERTISE:
		return "push advertisement";
	case GIT_OP_PUSH:
		return "push";
	}
	return "unknown";
}

/*
 * A path we can match as the server will read it: '/' and then non-empty
 * segments other than "." and "..", of printable ASCII without '%' (a
 * server decodes it; "%2e%2e" is ".."), '\\' (a '/' to some servers), ';'
 * (path parameters, dropped by some servers), '?' and '#' (the caller
 * already split them off; one here means a confused split).
 */
static bool path_ok(const char *p, size_t len)
{
	if (len == 0 || p[0] != '/')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c <= 0x20 || c >= 0x7f || c == '%' || c == '\\' || c == ';' || c == '?' || c == '#')
			return false;
	}
	for (size_t i = 0; i < len;) {
		size_t j = i + 1;

		while (j < len && p[j] != '/')
			j++;
		/* WARNING: an empty segment must stay refused: with "//"
		 * a '*' in a repository glob matches nothing between the
		 * slashes, and a server that merges them serves a
		 * repository the glob never named. */
		if (j == i + 1)
			return false;
		if (p[i + 1] == '.' && (j == i + 2 || (j == i + 3 && p[i + 2] == '.')))
			return false;
		i = j;
	}
	return true;
}

struct shape {
	const char *suffix;
	const char *method;
	const char *query; /* NULL: no query at all */
	enum git_op op;
};

static const struct shape shapes[] = {
	{ "/info/refs", "GET", "service=git-upload-pack", GIT_OP_FETCH_ADVERTISE },
	{ "/info/refs", "GET", "service=git-receive-pack", GIT_OP_PUSH_ADVERTISE },
	{ "/git-upload-pack", "POST", NULL, GIT_OP_FETCH },
	{ "/git-receive-pack", "POST", NULL, GIT_OP_PUSH },
};

enum git_op git_classify(const char *method, const char *path, size_t path_len, const char *query,
			 size_t query_len, char *repo, size_t repo_len)
{
	if (repo && repo_len > 0)
		repo[0] = '\0';
	if (!method || !path || (!query && query_len > 0))
		return GIT_OP_NONE;
	if (!path_ok(path, path_len))
		return GIT_OP_NONE;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *s = &shapes[i];
		size_t sl = strlen(s->suffix), rl;

		if (path_len < sl || memcmp(path + path_len - sl, s->suffix, sl) != 0)
			continue;
		if (strcmp(method, s->method) != 0)
			continue;
		/* Exactly the one parameter git sends: anything more is
		 * something a server might read and we would not. */
		if (s->query ? query_len != strlen(s->query) || memcmp(query, s->query, query_len) != 0
			     : query_len != 0)
			continue;
		rl = path_len - sl;
		/* path_ok leaves no empty segment, so rl > 0 means at
		 * least "/x". */
		if (rl == 0 || rl > GIT_REPO_MAX)
			return GIT_OP_NONE;
		if (repo) {
			if (repo_len <= rl)
				return GIT_OP_NONE;
			memcpy(repo, path, rl);
			repo[rl] = '\0';
		}
		return s->op;
	}
	return GIT_OP_NONE;
}

/* ---- ref names and object ids ---- */

static bool refname_ok(const char *r, size_t len)
{
	size_t comp = 0; /* start of the current component */

	if (len <= 5 || len > GIT_REF_MAX || memcmp(r, "refs/", 5) != 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)r[i];

		if (c < 0x20 || c == 0x7f || c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' ||
		    c == '*' || c == '[' || c == '\\')
			return false;
		if (c == '.' && i + 1 < len && r[i + 1] == '.')
			return false;
		if (c == '@' && i + 1 < len && r[i + 1] == '{')
			return false;
		if (c == '.' && i == comp)
			return false; /* component starting with '.' */
		if (c == '/') {
			if (i == comp)
				return false; /* "//" */
			if (i - comp >= 5 && memcmp(r + i - 5, ".lock", 5) == 0)
				return false;
			comp = i + 1;
		}
	}
	if (comp == len)
		return false; /* trailing '/' */
	if (len - comp >= 5 && memcmp(r + len - 5, ".lock", 5) == 0)
		return false;
	return r[len - 1] != '.';
}

bool git_refname_ok(const char *ref)
{
	return ref && refname_ok(ref, strnlen(ref, GIT_REF_MAX + 1));
}

static bool lower_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

static bool all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != '0')
			return false;
	return true;
}

/* The length of a NUL-terminated id of lower-case hex, if it is one of
 * the two we know; else 0. */
static size_t oid_len(const char *id)
{
	size_t n = strnlen(id, GIT_OID_HEX_SHA256 + 1);

	if (n != GIT_OID_HEX_SHA1 && n != GIT_OID_HEX_SHA256)
		return 0;
	return lower_hex((const uint8_t *)id, n) ? n : 0;
}

/* ---- pkt-lines ---- */


struct push_parse {
	size_t oid;   /* hex digits of every id so far; 0 before the first */
	size_t n;     /* commands so far */
};

/* An id of the length the list uses (fixed by its first id). */
static bool take_oid(struct push_parse *st, const uint8_t *p, size_t n)
{
	if (n != GIT_OID_HEX_SHA1 && n != GIT_OID_HEX_SHA256)
		return false;
	if (st->oid && st->oid != n)
		return false;
	if (!lower_hex(p, n))
		return false;
	st->oid = n;
	return true;
}

/* The first command's capability list: printable ASCII words separated
 * by spaces; an object-format must name the ids' algorithm, so that we
 * never read ids of one length as the other algorithm's. */
static int check_caps(const struct push_parse *st, const uint8_t *p, size_t n)
{
	static const char of[] = "object-format=";
	const size_t ofl = sizeof(of) - 1;

	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] >= 0x7f)
			return -EINVAL;
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && p[j] != ' ')
			j++;
		if (j - i > ofl && memcmp(p + i, of, ofl) == 0) {
			const uint8_t *v = p + i + ofl;
			size_t vl = j - i - ofl;
			size_t want = 0;

			if (vl == 4 && memcmp(v, "sha1", 4) == 0)
				want = GIT_OID_HEX_SHA1;
			else if (vl == 6 && memcmp(v, "sha256", 6) == 0)
				want = GIT_OID_HEX_SHA256;
			if (want != st->oid)
				return -EINVAL;
		}
		i = j + 1;
	}
	return 0;
}

/* One command pkt-line's payload (its LF removed) into *u. */
static int parse_command(struct push_parse *st, const uint8_t *p, size_t n, struct git_ref_update *u)
{
	const uint8_t *nul = memchr(p, '\0', n), *ref;
	size_t cl = nul ? (size_t)(nul - p) : n, ol, rl;

	/* receive-pack reads capabilities after a NUL on any line; we take
	 * them from the first only, and refuse them elsewhere so that both
	 * sides agree on what was asked. */
	if (nul && st->n > 0)
		return -EINVAL;
	for (ol = 0; ol < cl && p[ol] != ' '; ol++)
		;
	if (!take_oid(st, p, ol) || cl < 2 * ol + 2 || p[ol + 1 + ol] != ' ')
		return -EINVAL;
	if (!take_oid(st, p + ol + 1, ol))
		return -EINVAL;
	ref = p + 2 * ol + 2;
	rl = cl - (2 * ol + 2);
	if (!refname_ok((const char *)ref, rl))
		return -EINVAL;

	/* whole arrays zeroed, so no stale bytes follow the strings */
	memset(u, 0, sizeof(*u));
	memcpy(u->old_id, p, ol);
	u->old_id[ol] = '\0';
	memcpy(u->new_id, p + ol + 1, ol);
	u->new_id[ol] = '\0';
	memcpy(u->ref, ref, rl);
	u->ref[rl] = '\0';
	if (all_zero(u->old_id, ol) && all_zero(u->new_id, ol))
		return -EINVAL; /* neither a creation, an update nor a deletion */
	if (nul) {
		int r = check_caps(st, nul + 1, n - cl - 1);
		if (r < 0)
			return r;
	}
	return 0;
}

int git_parse_push_commands(const uint8_t *body, size_t len, struct git_ref_update *out, size_t max,
			    size_t *n_out, size_t *consumed)
{
	struct push_parse st = { 0 };
	size_t off = 0;

	if (n_out)
		*n_out = 0;
	if (consumed)
		*consumed = 0;
	if (!n_out || !consumed || (!body && len > 0) || (!out && max > 0))
		return -EINVAL;

	for (;;) {
		size_t avail = len - off, plen = 0, pl, i;
		const uint8_t *p;
		struct git_ref_update u;
		int r;

		for (i = 0; i < 4 && i < avail; i++) {
			int d = hex_digit_value((unsigned char)body[off + i]);
			if (d < 0)
				return -EINVAL;
			plen = plen * 16 + (size_t)d;
		}
		if (i < 4)
			return 0;
		if (plen == 0) {
			*n_out = st.n;
			*consumed = off + 4;
			return 1;
		}
		/* 1..3 are not lengths (v2's delim and response-end are
		 * not part of this protocol); 4, an empty line, is not a
		 * command; git never writes more than GIT_PKT_MAX. */
		if (plen <= 4 || plen > GIT_PKT_MAX)
			return -EINVAL;
		if (avail < plen)
			return 0;

		p = body + off + 4;
		pl = plen - 4;
		if (p[pl - 1] == '\n')
			pl--;

		if (st.n == 0 && pl >= 9 && memcmp(p, "push-cert", 9) == 0 &&
		    (pl == 9 || p[9] == '\0'))
			return -ENOTSUP;
		if (st.n == 0 && pl >= 8 && memcmp(p, "shallow ", 8) == 0) {
			if (!take_oid(&st, p + 8, pl - 8))
				return -EINVAL;
			off += plen;
			continue;
		}

		r = parse_command(&st, p, pl, &u);
		if (r < 0)
			return r;
		if (st.n >= max)
			return -E2BIG;
		out[st.n++] = u;
		off += plen;
	}
}

/* ---- decisions ---- */

/* s for a message: printable ASCII as is, other bytes as \xNN, cut with
 * "..." when it does not fit. */
static const char *quote(const char *s, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		size_t need = (c >= 0x20 && c < 0x7f && c != '\\') ? 1 : 4;

		if (o + need + 4 > size) {
			memcpy(buf + o, "...", 4);
			return buf;
		}
		if (need == 1) {
			buf[o++] = (char)c;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	buf[o] = '\0';
	return buf;
}

static bool deny(char *reason, size_t reason_len, const char *fmt, ...) PRINTF_LIKE(3, 4);

static bool deny(char *reason, size_t reason_len, const char *fmt, ...)
{
	va_list ap;

	if (reason && reason_len > 0) {
		va_start(ap, fmt);
		vsnprintf(reason, reason_len, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool repo_matches(const struct policy_git_binding *b, const char *repo, size_t len)
{
	char with_git[GIT_REPO_MAX + sizeof(".git")];
	bool try_git = len < 4 || memcmp(repo + len - 4, ".git", 4) != 0;

	if (!b->repos)
		return true;
	if (try_git) {
		memcpy(with_git, repo, len);
		memcpy(with_git + len, ".git", sizeof(".git"));
	}
	for (char **g = b->repos; *g; g++) {
		if (netpol_glob_match(*g, repo, len))
			return true;
		if (try_git && netpol_glob_match(*g, with_git, len + 4))
			return true;
	}
	return false;
}

static bool push_glob_match(const struct policy_git_binding *b, const char *ref)
{
	if (!b->push)
		return false;
	for (char **g = b->push; *g; g++)
		if (netpol_glob_match(*g, ref, strlen(ref)))
			return true;
	return false;
}

static bool may_push(const struct policy_git_binding *b)
{
	return (b->push && b->push[0]) || b->tags;
}

static bool command_ok(const struct policy_git_binding *b, const char *repo, const struct git_ref_update *u,
		       size_t i, char *reason, size_t reason_len)
{
	char q[GIT_REF_MAX * 4 + 8];
	size_t ol = oid_len(u->old_id);
	bool is_tag, creation, deletion;

	if (!git_refname_ok(u->ref) || ol == 0 || oid_len(u->new_id) != ol)
		return deny(reason, reason_len, "git push to %s: command %zu is malformed", repo, i + 1);
	quote(u->ref, q, sizeof(q));
	if (strchr(u->ref, '%'))
		return deny(reason, reason_len,
			    "git push to %s: ref %s holds a '%%', which ref globs would read as an escape; "
			    "push it under a name without '%%'",
			    repo, q);
	is_tag = strncmp(u->ref, "refs/tags/", 10) == 0;
	creation = all_zero(u->old_id, ol);
	deletion = all_zero(u->new_id, ol);

	if (deletion) {
		bool glob = push_glob_match(b, u->ref), tags_ok = !is_tag || b->tags;

		if (b->delete_refs && glob && tags_ok)
			return true;
		return deny(reason, reason_len, "git push to %s: deleting %s needs %s%s%s%s%s", repo, q,
			    b->delete_refs ? "" : "delete: true", !b->delete_refs && !glob ? " and " : "",
			    glob ? "" : "a push glob matching it", !tags_ok && (!b->delete_refs || !glob) ? " and " : "",
			    tags_ok ? "" : "tags: true");
	}
	if (is_tag) {
		if (!creation)
			return deny(reason, reason_len,
				    "git push to %s: %s already exists and would be moved; tags are only "
				    "created, never moved, whatever the policy",
				    repo, q);
		if (!b->tags)
			return deny(reason, reason_len, "git push to %s: creating tag %s needs tags: true", repo,
				    q);
		return true;
	}
	if (!push_glob_match(b, u->ref))
		return deny(reason, reason_len,
			    "git push to %s: %s %s is not matched by any git push glob; add %s to push", repo,
			    creation ? "creating" : "updating", q, q);
	return true;
}

bool git_decide(const struct policy_git_binding *b, enum git_op op, const char *repo,
		const struct git_ref_update *u, size_t n, char *reason, size_t reason_len)
{
	char q[GIT_REPO_MAX * 4 + 8];
	size_t rl;

	if (reason && reason_len > 0)
		reason[0] = '\0';
	switch (op) {
	case GIT_OP_NONE:
		return deny(reason, reason_len, "not a git smart HTTP request");
	case GIT_OP_FETCH_ADVERTISE:
	case GIT_OP_FETCH:
	case GIT_OP_PUSH_ADVERTISE:
	case GIT_OP_PUSH:
		break;
	default:
		return deny(reason, reason_len, "not a git smart HTTP request");
	}
	if (!b)
		return deny(reason, reason_len, "no git binding");
	if (!repo)
		return deny(reason, reason_len, "git %s: no repository", git_op_name(op));
	rl = strnlen(repo, GIT_REPO_MAX + 1);
	quote(repo, q, sizeof(q));
	if (rl > GIT_REPO_MAX || !path_ok(repo, rl))
		return deny(reason, reason_len, "git %s: repository path %s is not one we match", git_op_name(op),
			    q);
	if (!repo_matches(b, repo, rl))
		return deny(reason, reason_len,
			    "git %s of %s: the repository is not in this credential's git repos; add %s%s to "
			    "repos",
			    git_op_name(op), q, q, rl >= 4 && memcmp(repo + rl - 4, ".git", 4) == 0 ? "" : ".git");

	switch (op) {
	case GIT_OP_FETCH_ADVERTISE:
	case GIT_OP_FETCH:
		if (!b->fetch)
			return deny(reason, reason_len, "git fetch from %s: this credential has fetch: false", q);
		return true;
	case GIT_OP_PUSH_ADVERTISE:
	case GIT_OP_PUSH:
		if (!may_push(b))
			return deny(reason, reason_len,
				    "git push to %s: this credential allows no push; add ref globs to push "
				    "(or set tags: true)",
				    q);
		if (op == GIT_OP_PUSH_ADVERTISE || n == 0)
			return true;
		if (!u)
			return deny(reason, reason_len, "git push to %s: no commands given", q);
		for (size_t i = 0; i < n; i++)
			if (!command_ok(b, q, &u[i], i, reason, reason_len))
				return false;
		return true;
	case GIT_OP_NONE:
		break;
	}
	return deny(reason, reason_len, "not a git smart HTTP request");
}
