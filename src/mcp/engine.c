/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decision engine: one server's rules applied to tool calls, tools/list
 * entries, resources, prompts and server-initiated requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "match/glob.h"
#include "mcp/mcp.h"
#include "net/dlp.h"
#include "net/netpolicy.h"
#include "policy/internal.h"
#include "util/cleanup.h"
#include "util/urlunit.h"

int mcp_engine_init(struct mcp_engine *e, const struct policy_mcp_server *srv, const char *name,
		    const char *workspace, const char *pins_path, struct error *err)
{
	memset(e, 0, sizeof(*e));
	e->srv = srv;
	e->server = name;
	/* Paths in arguments are judged against the workspace as the
	 * filesystem has it, symlinks resolved, like the paths themselves. */
	e->workspace = realpath(workspace, NULL);
	if (!e->workspace)
		return error_set(err, errno, "workspace %s: %s", workspace, strerror(errno));
	if (srv && srv->n_tools && !(e->rule_calls = calloc(srv->n_tools, sizeof(uint64_t))))
		return error_set(err, ENOMEM, "out of memory");
	if (!(e->dlp = dlp_new()))
		return error_set(err, ENOMEM, "out of memory");
	if (pins_path)
		return mcp_pins_load(&e->pins, pins_path, err);
	return 0;
}

void mcp_engine_fini(struct mcp_engine *e)
{
	free(e->workspace);
	free(e->rule_calls);
	dlp_free(e->dlp);
	mcp_pins_free(&e->pins);
	memset(e, 0, sizeof(*e));
}

const struct policy_mcp_rule *mcp_tool_rule(const struct policy_mcp_server *srv, const char *tool, size_t *index)
{
	return srv ? policy_mcp_rule_first(srv->tools, srv->n_tools, tool, index) : NULL;
}

bool mcp_tool_listed(const struct mcp_engine *e, const char *tool)
{
	const struct policy_mcp_rule *r = mcp_tool_rule(e->srv, tool, NULL);
	return r && r->decision != POLICY_MCP_DENY;
}

static void verdict(struct mcp_verdict *v, enum policy_mcp_decision d, const char *rule, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

static void verdict(struct mcp_verdict *v, enum policy_mcp_decision d, const char *rule, const char *fmt, ...)
{
	v->decision = d;
	snprintf(v->rule, sizeof(v->rule), "%s", rule);
	v->reason[0] = '\0';
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
		va_end(ap);
	}
}

/* ---- paths ---- */

/* Every lookup below goes through the kernel, as the server's own open
 * would: a path judged by its text ("sub/link/../x" read as "sub/x",
 * where the link leads elsewhere) is judged by something other than
 * what the server opens. */
#define INSIDE_MAX_HOPS 40 /* symlinks followed, as the kernel's ELOOP bound */
#define INSIDE_MAX_DEPTH 4096

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* path (absolute) opened O_PATH in root's view: beneath root, ".."
 * stopping at it and absolute symlinks starting from it
 * (RESOLVE_IN_ROOT); root < 0: this process's own view. */
static int open_in(int root, const char *path, int flags)
{
	if (root < 0)
		return openat(AT_FDCWD, path, O_PATH | O_CLOEXEC | flags);
	struct open_how how = { .flags = (uint64_t)(O_PATH | O_CLOEXEC | flags),
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
}

/* The directory dir is ws, or below it: its ".." walked up (across
 * mounts, as the kernel walks them) until ws, or the top of root's view
 * (top, or a ".." that stays where it is). */
static bool dir_below(int dir, const struct stat *ws, const struct stat *top)
{
	int cur = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	bool in = false;
	for (int depth = 0; cur >= 0 && depth < INSIDE_MAX_DEPTH; depth++) {
		struct stat st, up_st;
		if (fstat(cur, &st) < 0)
			break;
		if (same_file(&st, ws)) {
			in = true;
			break;
		}
		if (same_file(&st, top))
			break;
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(up, &up_st) < 0 || same_file(&up_st, &st)) {
			if (up >= 0)
				close(up);
			break;
		}
		close(cur);
		cur = up;
	}
	if (cur >= 0)
		close(cur);
	return in;
}

/* One step of mcp_path_inside_root: p (absolute, no trailing '/'; cut
 * in place) judged, or, when its last component is a symlink that
 * exists, the path it leads to left in next. 1 inside, 0 not, 2 go on
 * with next. */
static int inside_step(int root, char *p, const struct stat *ws, const struct stat *top, char *next, size_t cap)
{
	char *slash = strrchr(p, '/');
	const char *last = slash + 1;
	*slash = '\0';
	const char *dir = p[0] ? p : "/";
	/* The longest prefix of the directory part that exists; the rest
	 * is to be made (mkdir -p), and holds no "..", which only an
	 * existing directory has, and no name that exists already: that
	 * is a symlink that leads nowhere yet (a write through it makes
	 * its target, wherever that is). */
	char *tail = NULL;
	int d;
	while ((d = open_in(root, dir, O_DIRECTORY)) < 0) {
		if (errno != ENOENT)
			return 0;
		char *cut = strrchr(p, '/');
		if (!cut)
			return 0;
		if (tail)
			tail[-1] = '/';
		tail = cut + 1;
		*cut = '\0';
		dir = p[0] ? p : "/";
	}
	_cleanup_close_ int dfd = d;
	struct stat st;
	const char *first = tail ? tail : last;
	char name[NAME_MAX + 1];
	size_t n = strcspn(first, "/");
	if (n > NAME_MAX)
		return 0;
	memcpy(name, first, n);
	name[n] = '\0';
	if (tail) {
		for (const char *q = tail; *q; q += strcspn(q, "/"), q += *q == '/')
			if (!strncmp(q, "../", 3) || !strcmp(q, ".."))
				return 0;
		if (!strcmp(last, ".."))
			return 0;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			return 0;
		return dir_below(dfd, ws, top);
	}
	if (!strcmp(last, ".") || !strcmp(last, "..")) {
		/* Resolved in root's view, where ".." stops at its top. */
		slash[0] = '/';
		_cleanup_close_ int f = open_in(root, p[0] ? p : "/", O_DIRECTORY);
		return f >= 0 && dir_below(f, ws, top);
	}
	if (fstatat(dfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT && dir_below(dfd, ws, top); /* to be made here */
	if (S_ISDIR(st.st_mode)) {
		/* Its own "..", which for a mount's root leads to where it is
		 * mounted. */
		_cleanup_close_ int f = openat(dfd, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return f >= 0 && dir_below(f, ws, top);
	}
	if (!S_ISLNK(st.st_mode))
		return dir_below(dfd, ws, top);
	/* A symlink: where it leads, read from the directory that holds it
	 * (a relative target is that directory's, and dir names it). */
	char target[PATH_MAX];
	ssize_t tn = readlinkat(dfd, last, target, sizeof(target) - 1);
	if (tn <= 0)
		return 0;
	target[tn] = '\0';
	int w = target[0] == '/' ? snprintf(next, cap, "%s", target)
				 : snprintf(next, cap, "%s/%s", strcmp(dir, "/") ? dir : "", target);
	return w > 0 && (size_t)w < cap ? 2 : 0;
}

bool mcp_path_inside_root(int root, const char *workspace, const char *path)
{
	/* "~" is expanded by some servers (server-filesystem does) to a home
	 * directory we cannot see from here: never inside. */
	if (!path[0] || path[0] == '~' || !workspace || workspace[0] != '/')
		return false;
	char *p = malloc(PATH_MAX), *next = malloc(PATH_MAX);
	struct stat ws, top;
	int in = 0;
	_cleanup_close_ int wfd = open_in(root, workspace, O_DIRECTORY);
	int w = !p ? -1 : path[0] == '/' ? snprintf(p, PATH_MAX, "%s", path) : snprintf(p, PATH_MAX, "%s/%s", workspace, path);
	if (!next || wfd < 0 || w <= 0 || w >= PATH_MAX || fstat(wfd, &ws) < 0 ||
	    (root >= 0 ? fstat(root, &top) : stat("/", &top)) < 0)
		goto out;
	for (int hop = 0; hop <= INSIDE_MAX_HOPS; hop++) {
		/* "a/b/" names what "a/b" does, a directory. */
		for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
			p[n - 1] = '\0';
		if (!strcmp(p, "/")) {
			_cleanup_close_ int f = open_in(root, "/", O_DIRECTORY);
			in = f >= 0 && dir_below(f, &ws, &top);
			break;
		}
		in = inside_step(root, p, &ws, &top, next, PATH_MAX);
		if (in != 2)
			break;
		char *t = p;
		p = next;
		next = t;
		in = 0;
	}
out:
	free(p);
	free(next);
	return in == 1;
}

bool mcp_path_inside(const char *workspace, const char *path)
{
	return mcp_path_inside_root(-1, workspace, path);
}

/* ---- argument constraints ---- */

struct argctx {
	const struct policy_mcp_arg *a;
	const struct mcp_engine *e;
	char *why;
	size_t why_len;
	bool ok;
};

static void fail(struct argctx *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void fail(struct argctx *c, const char *fmt, ...)
{
	if (!c->ok)
		return;
	c->ok = false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->why_len, fmt, ap);
	va_end(ap);
}

static void check_value(const struct imp_node *v, void *vctx)
{
	struct argctx *c = vctx;
	const struct policy_mcp_arg *a = c->a;
	const char *p = a->path;

	if (a->glob || a->regex || a->inside_workspace) {
		if (v->kind != IMP_STR) {
			fail(c, "argument %s is not a string", p);
			return;
		}
		/* A glob that cannot be read holds for no value. */
		if (a->glob && match_name_glob(a->glob, v->str) != 1)
			fail(c, "argument %s does not match the glob %s", p, a->glob);
		if (a->regex && regexec(&a->re, v->str, 0, NULL, 0) != 0)
			fail(c, "argument %s does not match the regular expression %s", p, a->regex);
		if (a->inside_workspace && !(c->e->path_inside ? c->e->path_inside(c->e->path_ctx, v->str)
							       : mcp_path_inside(c->e->workspace, v->str)))
			fail(c, "argument %s names a path outside the workspace %s", p, c->e->workspace);
	}
	if (a->n_enum) {
		bool found = false;
		if (v->kind == IMP_STR || v->kind == IMP_NUM || v->kind == IMP_BOOL)
			for (size_t i = 0; i < a->n_enum && !found; i++)
				found = v->kind == IMP_BOOL ? !strcmp(a->enum_vals[i], v->b ? "true" : "false")
							    : !strcmp(a->enum_vals[i], v->str);
		if (!found)
			fail(c, "argument %s is not one of the values the policy allows", p);
	}
	if (a->has_min || a->has_max) {
		if (v->kind != IMP_NUM) {
			fail(c, "argument %s is not a number", p);
			return;
		}
		double d = strtod(v->str, NULL);
		if ((a->has_min && d < a->min) || (a->has_max && d > a->max))
			fail(c, "argument %s is outside the range the policy allows", p);
	}
	if (a->has_max_length) {
		size_t n = v->kind == IMP_STR ? v->len : v->kind == IMP_LIST ? v->n : 0;
		if (v->kind != IMP_STR && v->kind != IMP_LIST)
			fail(c, "argument %s is neither a string nor an array", p);
		else if (n > a->max_length)
			fail(c, "argument %s is longer than %llu", p, (unsigned long long)a->max_length);
	}
}

bool mcp_arg_ok(const struct policy_mcp_arg *a, const struct imp_node *args, const struct mcp_engine *e, char *why,
		size_t why_len)
{
	struct argctx c = { a, e, why, why_len, true };
	static const struct imp_node empty = { .kind = IMP_MAP };
	size_t n = mcp_json_select(args ? args : &empty, a->path, check_value, &c);
	if (n == 0 && a->required)
		fail(&c, "argument %s is required by the policy", a->path);
	return c.ok;
}

/* ---- decisions ---- */

bool mcp_tool_call_allowed(struct mcp_engine *e, const char *tool, const struct imp_node *args,
			   struct mcp_verdict *v)
{
	size_t idx = 0;
	char rname[128];
	const struct policy_mcp_rule *r = mcp_tool_rule(e->srv, tool, &idx);
	if (!r) {
		verdict(v, POLICY_MCP_DENY, "default",
			"airlock denied the call: the policy does not list the tool %s of server %s", tool, e->server);
		return false;
	}
	snprintf(rname, sizeof(rname), "mcp.servers.%s.tools[%zu]", e->server, idx);
	if (r->decision == POLICY_MCP_DENY) {
		verdict(v, POLICY_MCP_DENY, rname, "airlock denied the call: the policy denies the tool %s", tool);
		return false;
	}
	struct mcp_pin *pin = mcp_pins_find(&e->pins, tool);
	if (pin && pin->pending_sha256[0]) {
		verdict(v, POLICY_MCP_DENY, rname,
			"airlock denied the call: the definition of tool %s changed since it was approved "
			"(sha256 %s, now %s); a person must approve it with 'airlock mcp pins approve'",
			tool, pin->sha256, pin->pending_sha256);
		return false;
	}
	if (args && args->kind != IMP_MAP) {
		verdict(v, POLICY_MCP_DENY, rname, "airlock denied the call: its arguments are not an object");
		return false;
	}
	for (size_t i = 0; i < r->n_args; i++) {
		char why[256];
		if (!mcp_arg_ok(&r->args[i], args, e, why, sizeof(why))) {
			verdict(v, POLICY_MCP_DENY, rname, "airlock denied the call: %s", why);
			return false;
		}
	}
	if (e->srv->max_calls && e->calls >= e->srv->max_calls) {
		snprintf(rname, sizeof(rname), "mcp.servers.%s.max_calls", e->server);
		verdict(v, POLICY_MCP_DENY, rname, "airlock denied the call: the session's %llu tool calls are used",
			(unsigned long long)e->srv->max_calls);
		return false;
	}
	if (r->max_calls && e->rule_calls[idx] >= r->max_calls) {
		verdict(v, POLICY_MCP_DENY, rname, "airlock denied the call: the session's %llu calls of %s are used",
			(unsigned long long)r->max_calls, tool);
		return false;
	}
	e->calls++;
	e->rule_calls[idx]++;
	verdict(v, r->decision, rname, NULL);
	return true;
}

static bool match_rules(const struct mcp_engine *e, const char *kind, const struct policy_mcp_rule *rules, size_t n,
			const char *what, struct mcp_verdict *v)
{
	size_t i = 0;
	const struct policy_mcp_rule *r = policy_mcp_rule_first(rules, n, what, &i);
	if (r) {
		char rname[128];
		snprintf(rname, sizeof(rname), "mcp.servers.%s.%s[%zu]", e->server, kind, i);
		if (r->decision == POLICY_MCP_ALLOW) {
			verdict(v, POLICY_MCP_ALLOW, rname, NULL);
			return true;
		}
		verdict(v, POLICY_MCP_DENY, rname, "airlock denied it: the policy denies %s %s", kind, what);
		return false;
	}
	verdict(v, POLICY_MCP_DENY, "default", "airlock denied it: the policy does not list %s %s", kind, what);
	return false;
}

/* ---- resource URIs ---- */

static bool uri_scheme_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
}

/* Append the escapes of s[0..n) normalised: %XX of an unreserved
 * character decoded, any other kept with upper-case hex. in_path: an
 * encoded '/' or '\' would be a separator to some servers and part of a
 * name to others, so it is refused there. */
static int uri_escapes(struct buf *b, const char *s, size_t n, bool in_path, char *why, size_t why_len)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || c == '\\') {
			snprintf(why, why_len, "it holds a control character or a backslash");
			return -EINVAL;
		}
		if (c != '%') {
			if (buf_append(b, s + i, 1) < 0)
				return -ENOMEM;
			continue;
		}
		int hi = i + 2 < n ? hex_digit_value((unsigned char)s[i + 1]) : -1;
		int lo = i + 2 < n ? hex_digit_value((unsigned char)s[i + 2]) : -1;
		if (hi < 0 || lo < 0) {
			snprintf(why, why_len, "it holds a %% that is not an escape of two hex digits");
			return -EINVAL;
		}
		unsigned v = (unsigned)(hi * 16 + lo);
		if (v < 0x20 || v == 0x7f || (in_path && (v == '/' || v == '\\'))) {
			snprintf(why, why_len, "it encodes %s", v == '/' || v == '\\' ? "a separator inside a segment"
											  : "a control character");
			return -EINVAL;
		}
		/* "%252e": an escaped escape, which a server that decodes
		 * twice would read as "." */
		if (v == '%' && i + 4 < n && hex_digit_value((unsigned char)s[i + 3]) >= 0 &&
		    hex_digit_value((unsigned char)s[i + 4]) >= 0) {
			snprintf(why, why_len, "it holds an escaped escape");
			return -EINVAL;
		}
		int r = url_unreserved(v) ? buf_printf(b, "%c", (char)v) : buf_printf(b, "%%%02X", v);
		if (r < 0)
			return -ENOMEM;
		i += 2;
	}
	return 0;
}

char *mcp_uri_normalize(const char *uri, char *why, size_t why_len)
{
	struct buf b = { 0 }, path = { 0 };
	size_t n = strlen(uri), i = 0, pre = 0;
	char *out = NULL;

	/* scheme ":" ["//" authority]: kept as given, escapes checked. */
	while (pre < n && uri_scheme_char(uri[pre], pre == 0))
		pre++;
	if (pre > 0 && pre < n && uri[pre] == ':') {
		pre++;
		if (!strncmp(uri + pre, "//", 2))
			pre += 2 + strcspn(uri + pre + 2, "/?#");
	} else {
		pre = 0;
	}
	size_t plen = strcspn(uri + pre, "?#");
	if (uri_escapes(&b, uri, pre, false, why, why_len) < 0 ||
	    uri_escapes(&path, uri + pre, plen, true, why, why_len) < 0)
		goto out;
	/* The path's segments: "." and empty ones dropped, ".." takes the
	 * one before it; one that would climb above the start is refused
	 * (it names something outside every rule's prefix). */
	const char *p = path.data ? path.data : "";
	size_t pl = path.len;
	size_t *starts = calloc(pl + 1, sizeof(*starts)), depth = 0;
	if (!starts)
		goto out;
	if (pl && p[0] == '/' && buf_puts(&b, "/") < 0)
		goto out_starts;
	size_t base = b.len;
	bool dir = false;
	for (i = 0; i < pl;) {
		size_t sl = strcspn(p + i, "/");
		if (sl > pl - i)
			sl = pl - i;
		dir = false;
		if (sl == 0 || (sl == 1 && p[i] == '.')) {
			dir = true;
		} else if (sl == 2 && p[i] == '.' && p[i + 1] == '.') {
			if (depth == 0) {
				snprintf(why, why_len, "its \"..\" leads above where it starts");
				goto out_starts;
			}
			b.len = starts[--depth];
			dir = true;
		} else {
			starts[depth++] = b.len;
			if ((b.len > base && buf_puts(&b, "/") < 0) || buf_append(&b, p + i, sl) < 0)
				goto out_starts;
		}
		i += sl + 1;
	}
	if ((dir || (pl && p[pl - 1] == '/')) && b.len > base && buf_puts(&b, "/") < 0)
		goto out_starts;
	/* A query or fragment with a dot segment: a server that does not
	 * split it off would climb with it. */
	size_t tstart = b.len;
	const char *tail = uri + pre + plen;
	if (uri_escapes(&b, tail, strlen(tail), false, why, why_len) < 0)
		goto out_starts;
	for (size_t t = tstart; t < b.len;) {
		size_t sl = strcspn(b.data + t, "/?#&=");
		if ((sl == 1 && b.data[t] == '.') || (sl == 2 && !strncmp(b.data + t, "..", 2))) {
			snprintf(why, why_len, "its query holds a \".\" or \"..\" segment");
			goto out_starts;
		}
		t += sl + 1;
	}
	if (!b.data && buf_puts(&b, "") < 0)
		goto out_starts;
	out = b.data;
	b.data = NULL;
out_starts:
	free(starts);
out:
	buf_free(&b);
	buf_free(&path);
	if (!out && !why[0])
		snprintf(why, why_len, "out of memory");
	return out;
}

bool mcp_resource_allowed(const struct mcp_engine *e, const char *uri, struct mcp_verdict *v)
{
	/* Rules match the URI as the server resolves it: escapes decoded,
	 * "." and ".." resolved, repeated slashes joined; "*" stays inside
	 * one segment (a rule "public/" + "*" is not "public/../private/x"). What
	 * cannot be read one way only is refused. */
	char why[160] = "";
	_cleanup_free_ char *norm = mcp_uri_normalize(uri, why, sizeof(why));
	if (!norm) {
		verdict(v, POLICY_MCP_DENY, "protocol", "airlock denied it: the resource URI %s cannot be normalised: %s",
			uri, why);
		return false;
	}
	const struct policy_mcp_rule *rules = e->srv ? e->srv->resources : NULL;
	size_t n = e->srv ? e->srv->n_resources : 0;
	for (size_t i = 0; i < n; i++) {
		if (!netpol_glob_match(rules[i].match, norm, strlen(norm)))
			continue;
		char rname[128];
		snprintf(rname, sizeof(rname), "mcp.servers.%s.resources[%zu]", e->server, i);
		if (rules[i].decision == POLICY_MCP_ALLOW) {
			verdict(v, POLICY_MCP_ALLOW, rname, NULL);
			return true;
		}
		verdict(v, POLICY_MCP_DENY, rname, "airlock denied it: the policy denies resources %s", norm);
		return false;
	}
	verdict(v, POLICY_MCP_DENY, "default", "airlock denied it: the policy does not list resources %s", norm);
	return false;
}

bool mcp_prompt_allowed(const struct mcp_engine *e, const char *name, struct mcp_verdict *v)
{
	return match_rules(e, "prompts", e->srv ? e->srv->prompts : NULL, e->srv ? e->srv->n_prompts : 0, name, v);
}

bool mcp_server_request_allowed(const struct mcp_engine *e, const char *method, struct mcp_verdict *v)
{
	char rname[128];
	const char *key = NULL;
	bool allowed = false;
	if (!strcmp(method, "ping")) {
		verdict(v, POLICY_MCP_ALLOW, "ping", NULL);
		return true;
	}
	if (!strcmp(method, "sampling/createMessage")) {
		key = "sampling";
		allowed = e->srv && e->srv->sampling;
	} else if (!strcmp(method, "elicitation/create")) {
		key = "elicitation";
		allowed = e->srv && e->srv->elicitation;
	} else if (!strcmp(method, "roots/list")) {
		key = "roots";
		allowed = e->srv && e->srv->roots;
	}
	if (!key) {
		verdict(v, POLICY_MCP_DENY, "default", "airlock refused the server's request %s", method);
		return false;
	}
	snprintf(rname, sizeof(rname), "mcp.servers.%s.server_requests.%s", e->server, key);
	if (allowed) {
		verdict(v, POLICY_MCP_ALLOW, rname, NULL);
		return true;
	}
	verdict(v, POLICY_MCP_DENY, rname, "airlock refused the server's request %s: the policy does not allow %s",
		method, key);
	return false;
}
