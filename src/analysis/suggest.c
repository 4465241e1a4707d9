/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Denials in, the smallest policy additions out (see suggest.h).
 *
 * How each denial is read (the reasons are src/sandbox/trace.c's and
 * src/net/netpolicy.c's; the record shapes docs/audit.md's):
 *  - execve/execveat refused, or an exec_denied record: process.exec gets
 *    the binary itself, and filesystem.read the binary too when the
 *    sandbox hid it (ENOENT [hidden...]): Landlock's exec right alone does
 *    not make a file visible.
 *  - a call that would create a name in a directory the sandbox hides
 *    (ENOENT [hidden: its directory ...]), or creates or removes a name on
 *    a read-only mount (EROFS from creat, mkdir, unlink, rename, ...):
 *    filesystem.write gets the directory. A write-only bind of a file that
 *    does not exist yet is skipped by the sandbox (plan.c binds only what
 *    exists), and a name cannot appear in or vanish from a single-file
 *    bind, so the directory is the smallest thing that works.
 *  - any other write refused on a read-only mount (EROFS): the file
 *    itself in filesystem.write when it exists, else its directory.
 *  - a host file the sandbox hides (ENOENT [hidden: exists ...]):
 *    filesystem.read gets the file itself.
 *  - a request or tunnel refused for its host or port: a new
 *    network.endpoints entry with that host and port exactly, and for
 *    HTTP one rule per path (the query left open) with the methods seen;
 *    refused by the rules of an endpoint: a rule added to that endpoint.
 *  - a destination refused as private: network.allow_private gets the
 *    address and port the proxy named.
 * Everything else is listed as not offered, with why.
 */
#include "analysis/suggest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doc/json.h"
#include "net/addr.h"
#include "net/netpolicy.h"
#include "util/credstore.h"
#include "util/toolcache.h"
#include "policy/internal.h"
#include "util/cleanup.h"

#define SG_MAX_METHODS 16
#define SG_TOKENS 512
#define SG_DEPTH 16

struct sg_item {
	char *key;      /* a path, an allow_private entry, a host; or why, for the unanswered */
	char *example;  /* the first denial it answers, as text */
	uint64_t count;
	bool dropped;   /* merged into another item */
};

struct sg_list {
	struct sg_item *v;
	size_t n, cap;
};

struct sg_rule {
	char *path;
	char *methods[SG_MAX_METHODS];
	size_t n_methods;
	char *example;
	uint64_t count;
};

struct sg_endpoint {
	char *host;
	uint16_t port;
	int base;       /* index of the base policy's endpoint the rules go into; -1: a new entry */
	char *base_id;  /* without a base policy: the id of the endpoint whose rules refused */
	bool whole;     /* a tunnel or redirected connection: host and port alone, no rules */
	struct sg_rule *rules;
	size_t n_rules;
	char *example;
	uint64_t count;
	char *note;     /* the comment printed with it */
};

struct suggest {
	const struct policy *base;
	struct sg_list read, write, exec, private_, dns, none;
	struct sg_endpoint *eps;
	size_t n_eps;
	uint64_t records, denials;
	char policy_file[4096];
	char policy_sha256[65];
	bool finished;
};

/* ---- small helpers ---- */

static void list_free(struct sg_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].example);
	}
	free(l->v);
}

void suggest_free(struct suggest *s)
{
	if (!s)
		return;
	list_free(&s->read);
	list_free(&s->write);
	list_free(&s->exec);
	list_free(&s->private_);
	list_free(&s->dns);
	list_free(&s->none);
	for (size_t i = 0; i < s->n_eps; i++) {
		struct sg_endpoint *e = &s->eps[i];
		for (size_t j = 0; j < e->n_rules; j++) {
			free(e->rules[j].path);
			for (size_t k = 0; k < e->rules[j].n_methods; k++)
				free(e->rules[j].methods[k]);
			free(e->rules[j].example);
		}
		free(e->rules);
		free(e->host);
		free(e->base_id);
		free(e->example);
		free(e->note);
	}
	free(s->eps);
	free(s);
}

int suggest_new(const struct policy *base, struct suggest **out)
{
	struct suggest *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base = base;
	*out = s;
	return 0;
}

/* Count one more denial under key, keeping the first example. */
static int list_add(struct sg_list *l, const char *key, const char *example, uint64_t count)
{
	for (size_t i = 0; i < l->n; i++)
		if (!l->v[i].dropped && strcmp(l->v[i].key, key) == 0) {
			l->v[i].count += count;
			return 0;
		}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct sg_item *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	struct sg_item *it = &l->v[l->n];
	*it = (struct sg_item){ .key = strdup(key), .example = strdup(example ? example : ""), .count = count };
	if (!it->key || !it->example) {
		free(it->key);
		free(it->example);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

static int none(struct suggest *s, const char *why, const char *example)
{
	return list_add(&s->none, why, example, 1);
}

static int nonef(struct suggest *s, const char *example, const char *fmt, ...) PRINTF_LIKE(3, 4);
static int nonef(struct suggest *s, const char *example, const char *fmt, ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return none(s, why, example);
}

static bool starts(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_one_of(const char *s, const char *const *set)
{
	for (; s && *set; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

/* A path a policy can name exactly: absolute, already in the normal form
 * the parser would give it (no ".", "..", "//", trailing "/"), and text a
 * YAML reader keeps as it is. */
static bool exact_path(const char *path)
{
	if (!path || path[0] != '/' || strlen(path) >= 4096)
		return false;
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	_cleanup_free_ char *norm = policy_path_normalize(path);
	return norm && strcmp(norm, path) == 0;
}

/* The directory of an absolute path ("/" for "/x"). */
static void parent_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash && slash != path ? (size_t)(slash - path) : 1;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, path, n);
	out[n] = '\0';
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* ---- files ---- */

static const char *const exec_calls[] = { "execve", "execveat", NULL };
/* Calls that add or remove a name in a directory: on a read-only mount
 * only a writable directory lets them through. */
static const char *const name_calls[] = { "creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink",
					  "symlinkat", "link", "linkat", "unlink", "unlinkat", "rmdir",
					  "rename", "renameat", "renameat2", NULL };

static int add_file(struct suggest *s, const struct suggest_denial *d)
{
	char ex[4200], dir[4096];
	const char *path = d->file;
	bool exec = (d->kind && strcmp(d->kind, "exec_denied") == 0) || is_one_of(d->syscall, exec_calls);
	snprintf(ex, sizeof(ex), "%s(\"%s\") by %s", d->syscall ? d->syscall : exec ? "execve" : "?",
		 path ? path : "?", d->command ? d->command : "?");
	if (!path || path[0] != '/')
		return none(s, "a relative path: the log does not say which directory it was relative to", ex);
	if (!exact_path(path))
		return none(s, "a path with \".\", \"..\", \"//\" or control characters: no policy entry names it exactly",
			    ex);
	if (starts(path, "/proc/") || starts(path, "/sys/") || starts(path, "/dev/") || !strcmp(path, "/proc") ||
	    !strcmp(path, "/sys") || !strcmp(path, "/dev"))
		return none(s, "/proc, /sys and /dev are the sandbox's own; no policy path changes what they show", ex);
	if (toolcache_path(path))
		return none(s, "a tool's cache or state in a home: the sandbox's tools make their own; sharing the "
			       "host's would carry what one run put there into the next, and to the host",
			    ex);
	if (credstore_path(path))
		return none(s, "a credential store (keys, cloud or registry tokens): a credential reaches the agent "
			       "through credentials:, as a placeholder; a policy line granting the file is the "
			       "author's to write, knowingly",
			    ex);
	const char *why = d->reason ? d->reason : "";
	bool hidden = starts(why, "ENOENT [hidden: exists");
	bool dir_hidden = starts(why, "ENOENT [hidden: its directory");
	bool rofs = starts(why, "EROFS");
	/* A host socket is never suggested: what naming one grants (root on
	 * the host for Docker's, signing for ssh-agent's) is the author's
	 * decision. The reason is guard.c's. */
	if (strstr(why, "[protected: a host socket"))
		return none(s, "a host socket: filesystem.sockets names the ones the agent may reach (what each grants: "
			       "docs/sandbox.md, \"Host sockets\")",
			    ex);
	if (exec) {
		int r = list_add(&s->exec, path, ex, 1);
		if (r == 0 && hidden)
			r = list_add(&s->read, path, ex, 1);
		return r;
	}
	if (dir_hidden || (rofs && (is_one_of(d->syscall, name_calls) || !exists(path)))) {
		parent_of(path, dir, sizeof(dir));
		if (strcmp(dir, "/") == 0)
			return none(s, "it would need / itself writable", ex);
		return list_add(&s->write, dir, ex, 1);
	}
	if (rofs)
		return list_add(&s->write, path, ex, 1);
	if (hidden)
		return list_add(&s->read, path, ex, 1);
	return nonef(s, ex,
		     "refused with %s on a path the sandbox shows (its file permissions, or a Landlock right "
		     "the policy does not grant): the log does not say which access was wanted",
		     why[0] ? why : "an unknown error");
}

/* ---- network ---- */

static struct sg_endpoint *endpoint_for(struct suggest *s, const char *host, uint16_t port, int base)
{
	for (size_t i = 0; i < s->n_eps; i++)
		if (s->eps[i].port == port && s->eps[i].base == base && strcmp(s->eps[i].host, host) == 0)
			return &s->eps[i];
	struct sg_endpoint *v = realloc(s->eps, (s->n_eps + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->eps = v;
	struct sg_endpoint *e = &v[s->n_eps];
	*e = (struct sg_endpoint){ .host = strdup(host), .port = port, .base = base };
	if (!e->host)
		return NULL;
	s->n_eps++;
	return e;
}

static int set_example(char **slot, const char *ex)
{
	if (*slot)
		return 0;
	*slot = strdup(ex);
	return *slot ? 0 : -ENOMEM;
}

/* A rule for one request: its path without the query, with the method.
 * A path holds one rule with every method seen there (a second one when
 * the first is full: nothing seen is left out). */
static int endpoint_rule(struct sg_endpoint *e, const char *method, const char *path, const char *ex)
{
	struct sg_rule *room = NULL;
	for (size_t i = 0; i < e->n_rules; i++) {
		struct sg_rule *r = &e->rules[i];
		if (strcmp(r->path, path) != 0)
			continue;
		for (size_t k = 0; k < r->n_methods; k++)
			if (strcmp(r->methods[k], method) == 0) {
				r->count++;
				return 0;
			}
		if (!room && r->n_methods < SG_MAX_METHODS)
			room = r;
	}
	if (room) {
		room->methods[room->n_methods] = strdup(method);
		if (!room->methods[room->n_methods])
			return -ENOMEM;
		room->n_methods++;
		room->count++;
		return 0;
	}
	struct sg_rule *v = realloc(e->rules, (e->n_rules + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	e->rules = v;
	struct sg_rule *r = &v[e->n_rules];
	*r = (struct sg_rule){ .path = strdup(path), .example = strdup(ex), .count = 1 };
	r->methods[0] = strdup(method);
	r->n_methods = 1;
	if (!r->path || !r->example || !r->methods[0]) {
		free(r->path);
		free(r->example);
		free(r->methods[0]);
		return -ENOMEM;
	}
	e->n_rules++;
	return 0;
}

/* A "." or ".." segment, raw or %2E-encoded: the proxy never matches
 * such a path with a rule (netpolicy.c says why). */
static bool dot_segment(const char *path)
{
	for (const char *seg = path; seg; seg = strchr(seg, '/') ? strchr(seg, '/') + 1 : NULL) {
		size_t n = strcspn(seg, "/"), dots = 0, other = 0;
		for (size_t i = 0; i < n; i++) {
			if (seg[i] == '.')
				dots++;
			else if (seg[i] == '%' && i + 2 < n + 1 && seg[i + 1] == '2' && (seg[i + 2] == 'e' || seg[i + 2] == 'E'))
				dots++, i += 2;
			else
				other++;
		}
		if (other == 0 && (dots == 1 || dots == 2))
			return true;
	}
	return false;
}

static const char *const request_kinds[] = { "http", "tunnel-request", "transparent", NULL };
static const char *const connection_kinds[] = { "connect", "transparent-tls", NULL };

/* With the policy given, the proxy's address check can be foreseen for a
 * numeric host or one the policy's `resolve` pins (no DNS is asked here):
 * a private destination it would refuse next needs its exact address and
 * port in allow_private; a metadata address is never offered. Returns 0,
 * 1 when the denial is answered as not offered, or -ENOMEM. */
static int private_need(struct suggest *s, const char *host, uint16_t port, const char *ex)
{
	const struct policy_network *net = &s->base->network;
	char canon[256], text[80], entry[100];
	struct net_addr a;
	int kind = addr_normalize_host(host, canon, sizeof(canon), &a);
	for (size_t i = 0; kind == 0 && i < net->n_resolve; i++)
		if (strcmp(net->resolve[i].host, canon) == 0)
			kind = addr_normalize_host(net->resolve[i].addr, text, sizeof(text), &a);
	if (kind != 1)
		return 0;
	struct net_decision nd;
	if (netpol_decide_address(net, &a, port, &nd))
		return 0;
	if (addr_classify(&a) == ADDR_METADATA) {
		int r = nonef(s, ex, "%s:%u is a cloud metadata address: it is never offered", host, port);
		return r < 0 ? r : 1;
	}
	addr_format(&a, text, sizeof(text));
	snprintf(entry, sizeof(entry), strchr(text, ':') ? "[%s]:%u" : "%s:%u", text, port);
	int r = list_add(&s->private_, entry, ex, 1);
	return r < 0 ? r : 0;
}

/* A request or connection that needs host:port (and, for a request, its
 * method and path) allowed. from_rules: an endpoint matched and its rules
 * refused; rules_of: that endpoint's id, from the reason. */
static int add_net(struct suggest *s, const struct suggest_denial *d, const char *ex, bool from_rules,
		   const char *rules_of)
{
	bool request = is_one_of(d->kind, request_kinds);
	uint16_t port = (uint16_t)d->port;
	int base = -1;
	if (s->base) {
		struct net_decision nd;
		if (netpol_decide_host(&s->base->network, d->host, port, &nd)) {
			const struct policy_endpoint *ep = nd.ep;
			if (ep->n_rules == 0 || !request)
				return nonef(s, ex,
					     "endpoint %s of the policy given already allows %s:%u (the log came from "
					     "another policy?)",
					     ep->id, d->host, port);
			base = (int)(ep - s->base->network.endpoints);
		}
	}
	if (s->base) {
		int r = private_need(s, d->host, port, ex);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	_cleanup_free_ char *rp = NULL;
	if (request) {
		/* One rule per path; the query is left open (a rule's query
		 * glob is for the policy's author to narrow). */
		const char *path = d->path ? d->path : "/";
		size_t n = strcspn(path, "?");
		_cleanup_free_ char *p = strndup(path, n);
		if (!p)
			return -ENOMEM;
		if (!d->method || !policy_method_valid(d->method))
			return none(s, "a request without a valid method: no rule names it", ex);
		if (strchr(p, '*') || policy_glob_normalize(p, true, &rp) != POLICY_GLOB_OK)
			return none(s, "a path a rule cannot name exactly (a '*', space, '#' or byte outside ASCII)", ex);
		if (dot_segment(p) || strstr(d->reason ? d->reason : "", "a . or .. segment"))
			return none(s, "a path with a . or .. segment is never matched by a rule", ex);
	}
	struct sg_endpoint *e = endpoint_for(s, d->host, port, base);
	if (!e)
		return -ENOMEM;
	e->count++;
	if (set_example(&e->example, ex) < 0)
		return -ENOMEM;
	if (!s->base && from_rules && rules_of && !e->base_id && !(e->base_id = strdup(rules_of)))
		return -ENOMEM;
	if (!request) {
		e->whole = true;
		return 0;
	}
	return endpoint_rule(e, d->method, rp, ex);
}

static int add_network(struct suggest *s, const struct suggest_denial *d)
{
	char ex[4500];
	const char *why = d->reason ? d->reason : "";
	const char *host = d->host ? d->host : "?";
	bool request = is_one_of(d->kind, request_kinds);
	if (request)
		snprintf(ex, sizeof(ex), "%s %s://%s:%lld%s", d->method ? d->method : "?",
			 strcmp(d->kind, "tunnel-request") == 0 ? "https" : "http", host, (long long)d->port,
			 d->path ? d->path : "");
	else if (strcmp(d->kind, "dns") == 0)
		snprintf(ex, sizeof(ex), "DNS query for %s", host);
	else if (d->port >= 0)
		snprintf(ex, sizeof(ex), "%s %s:%lld", d->kind, host, (long long)d->port);
	else
		snprintf(ex, sizeof(ex), "%s %s", d->kind, host);

	if (strcmp(d->kind, "leak") == 0)
		return nonef(s, ex, "a secret in outbound traffic (%s): no policy lets a secret out", why);
	if (strcmp(d->kind, "credential_misuse") == 0)
		return nonef(s, ex, "a credential outside its binding (%s): bindings are not suggested", why);
	if (strcmp(d->kind, "dns") == 0) {
		if (d->host && starts(why, "no network.endpoints entry names"))
			return list_add(&s->dns, d->host, ex, 1);
		return nonef(s, ex, "DNS: %s", why[0] ? why : "refused");
	}
	bool known = is_one_of(d->kind, request_kinds) || is_one_of(d->kind, connection_kinds);
	if (!known || !d->host || d->port < 1 || d->port > 65535)
		return nonef(s, ex, "%s refused: %s", d->kind, why[0] ? why : "no reason recorded");
	/* The host as a policy writes it; anything else (a wildcard, a URL)
	 * is no host an entry can name exactly. */
	char canon[POLICY_HOST_MAX];
	enum policy_host_status hs = policy_host_normalize(d->host, canon);
	if (hs != POLICY_HOST_NAME && hs != POLICY_HOST_IP)
		return nonef(s, ex, "%s refused for a host no policy entry names exactly", d->kind);
	struct suggest_denial named = *d;
	named.host = canon;
	d = &named;
	if (starts(why, "no network.endpoints entry allows") || strstr(why, ": endpoint ") ||
	    starts(why, "the policy has no network section"))
		return add_net(s, d, ex, false, NULL);
	const char *of = strstr(why, " is not allowed by any rule of endpoint ");
	if (of) {
		char id[256];
		of += strlen(" is not allowed by any rule of endpoint ");
		size_t n = strcspn(of, ";");
		snprintf(id, sizeof(id), "%.*s", (int)(n < 255 ? n : 255), of);
		return add_net(s, d, ex, true, id);
	}
	const char *add = strstr(why, "allow_private does not name it (add \"");
	if (add) {
		char entry[128];
		add += strlen("allow_private does not name it (add \"");
		size_t n = strcspn(add, "\"");
		struct policy_cidr c;
		snprintf(entry, sizeof(entry), "%.*s", (int)(n < 127 ? n : 127), add);
		if (policy_cidr_parse(entry, &c) != POLICY_CIDR_OK)
			return nonef(s, ex, "%s refused: %s", d->kind, why);
		return list_add(&s->private_, entry, ex, 1);
	}
	return nonef(s, ex, "%s refused: %s", d->kind, why[0] ? why : "no reason recorded");
}

int suggest_add(struct suggest *s, const struct suggest_denial *d)
{
	s->records++;
	if (!d->decision || strcmp(d->decision, "deny") != 0 || !d->kind)
		return 0;
	s->denials++;
	if (!strcmp(d->kind, "file_denied") || !strcmp(d->kind, "exec_denied"))
		return add_file(s, d);
	if (!strcmp(d->kind, "syscall_denied")) {
		char ex[256];
		snprintf(ex, sizeof(ex), "%s by %s", d->syscall ? d->syscall : "?", d->command ? d->command : "?");
		return nonef(s, ex, "system call %s is refused by the seccomp filter whatever the policy says",
			     d->syscall ? d->syscall : "?");
	}
	if (is_one_of(d->kind, request_kinds) || is_one_of(d->kind, connection_kinds) || !strcmp(d->kind, "dns") ||
	    !strcmp(d->kind, "leak") || !strcmp(d->kind, "credential_misuse"))
		return add_network(s, d);
	char ex[512];
	snprintf(ex, sizeof(ex), "line %llu", (unsigned long long)d->line);
	return nonef(s, ex, "a %s record: %s", d->kind, d->reason ? d->reason : "no policy field decides it");
}

/* ---- reading log lines ---- */

/* The string at the dotted member path of obj, or "" (also when it does
 * not fit). */
static const char *member(const struct doc_json *j, int obj, const char *dotted, char *buf, size_t cap)
{
	char key[64];
	buf[0] = '\0';
	while (obj >= 0 && *dotted) {
		size_t n = strcspn(dotted, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, dotted);
		if (j->tok[obj].type != DOC_JSON_OBJECT)
			return buf;
		obj = doc_json_member(j, obj, key);
		dotted += n + (dotted[n] == '.');
	}
	if (obj >= 0 && doc_json_str(j, obj, buf, cap) < 0)
		buf[0] = '\0';
	return buf;
}

struct line_fields {
	char kind[64], decision[32], syscall[64], file[4096], command[64], method[64], host[512], path[4096],
		reason[4096], policy_file[4096], sha[80];
	struct doc_json_tok tok[SG_TOKENS];
};

static const char *or_null(const char *s)
{
	return s[0] ? s : NULL;
}

int suggest_add_line(struct suggest *s, const char *line, size_t len, uint64_t lineno, struct error *err)
{
	_cleanup_free_ struct line_fields *f = malloc(sizeof(*f));
	if (!f)
		return error_set(err, ENOMEM, "out of memory");
	struct doc_json j;
	if (doc_json_parse(&j, line, len, f->tok, SG_TOKENS, SG_DEPTH) < 0)
		return error_set(err, EINVAL, "line %llu: not a JSON record: %s at byte %zu", (unsigned long long)lineno,
				 j.err, j.err_at + 1);
	if (f->tok[0].type != DOC_JSON_OBJECT)
		return error_set(err, EINVAL, "line %llu: not a JSON object", (unsigned long long)lineno);
	int air = doc_json_member(&j, 0, "airlock");
	if (air < 0 || !member(&j, air, "kind", f->kind, sizeof(f->kind))[0])
		return error_set(err, EINVAL, "line %llu: airlock.kind is missing", (unsigned long long)lineno);
	if (!s->policy_sha256[0] && member(&j, air, "policy_sha256", f->sha, sizeof(f->sha))[0])
		snprintf(s->policy_sha256, sizeof(s->policy_sha256), "%.64s", f->sha);
	if (strcmp(f->kind, "policy_loaded") == 0 && !s->policy_file[0])
		snprintf(s->policy_file, sizeof(s->policy_file), "%s",
			 member(&j, 0, "unmapped.policy_file", f->policy_file, sizeof(f->policy_file)));
	struct suggest_denial d = {
		.line = lineno,
		.kind = f->kind,
		.decision = or_null(member(&j, air, "decision", f->decision, sizeof(f->decision))),
		.syscall = or_null(member(&j, 0, "unmapped.syscall", f->syscall, sizeof(f->syscall))),
		.command = or_null(member(&j, 0, "actor.process.name", f->command, sizeof(f->command))),
		.method = or_null(member(&j, 0, "http_request.http_method", f->method, sizeof(f->method))),
		.path = or_null(member(&j, 0, "http_request.url.path", f->path, sizeof(f->path))),
		.reason = or_null(member(&j, 0, "message", f->reason, sizeof(f->reason))),
		.port = -1,
	};
	if (!member(&j, 0, "file.path", f->file, sizeof(f->file))[0])
		member(&j, 0, "process.file.path", f->file, sizeof(f->file));
	d.file = or_null(f->file);
	if (!member(&j, 0, "dst_endpoint.hostname", f->host, sizeof(f->host))[0])
		member(&j, 0, "query.hostname", f->host, sizeof(f->host));
	d.host = or_null(f->host);
	int dst = doc_json_member(&j, 0, "dst_endpoint");
	int port = dst >= 0 && j.tok[dst].type == DOC_JSON_OBJECT ? doc_json_member(&j, dst, "port") : -1;
	int64_t pv;
	if (port >= 0 && doc_json_int(&j, port, &pv) == 0)
		d.port = pv;
	int r = suggest_add(s, &d);
	if (r < 0)
		return error_set(err, -r, "out of memory");
	return 0;
}

const char *suggest_log_policy_file(const struct suggest *s)
{
	return s->policy_file;
}

const char *suggest_log_policy_sha256(const struct suggest *s)
{
	return s->policy_sha256;
}

static char *note_of(uint64_t count, const char *example);

/* ---- minimising ---- */

/* Fold item it into into (counts add up; into's example stays). */
static void fold(struct sg_item *into, struct sg_item *it)
{
	into->count += it->count;
	it->dropped = true;
}

/* The first live item of l that covers path (equal, or a directory above
 * it), other than skip. */
static struct sg_item *covering(struct sg_list *l, const char *path, const struct sg_item *skip)
{
	for (size_t i = 0; i < l->n; i++)
		if (&l->v[i] != skip && !l->v[i].dropped && policy_path_is_under(path, l->v[i].key))
			return &l->v[i];
	return NULL;
}

static const char *under_any(const struct policy_paths *ps, const char *path)
{
	for (size_t i = 0; i < ps->n; i++)
		if (policy_path_is_under(path, ps->v[i].path))
			return ps->v[i].path;
	return NULL;
}

static const char *const baseline_dirs[] = { "/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
					     "/libx32", NULL };

/* What the policy given already shows: the workspace, its read and write
 * paths, and the system baseline. */
static const char *visible_in(const struct policy *p, const char *path, bool write)
{
	if (p->sandbox.workspace && policy_path_is_under(path, p->sandbox.workspace))
		return p->sandbox.workspace;
	const char *hit = under_any(&p->filesystem.write, path);
	if (hit || write)
		return hit;
	if ((hit = under_any(&p->filesystem.read, path)))
		return hit;
	for (size_t i = 0; p->filesystem.baseline && baseline_dirs[i]; i++)
		if (policy_path_is_under(path, baseline_dirs[i]))
			return baseline_dirs[i];
	return NULL;
}

/* Items the policy given hides on purpose or already allows go to the
 * unanswered, with why. */
static void against_base(struct suggest *s, struct sg_list *l, const char *field, bool write)
{
	const struct policy *p = s->base;
	for (size_t i = 0; i < l->n; i++) {
		struct sg_item *it = &l->v[i];
		if (it->dropped)
			continue;
		char why[1200];
		const char *hit;
		why[0] = '\0';
		if ((hit = under_any(&p->filesystem.deny, it->key)))
			snprintf(why, sizeof(why), "%s for %s: filesystem.deny names %s, and a suggestion never lifts a deny",
				 field, it->key, hit);
		else if (p->file && strcmp(p->file, it->key) == 0)
			snprintf(why, sizeof(why), "%s for %s: the policy file is hidden from the sandbox on purpose", field,
				 it->key);
		else if (strcmp(field, "process.exec") != 0 && (hit = visible_in(p, it->key, write)))
			snprintf(why, sizeof(why),
				 "%s for %s: the policy given already allows it (under %s); the log came from another "
				 "policy, or the path is reached through a symbolic link",
				 field, it->key, hit);
		else if (strcmp(field, "process.exec") == 0 && p->process.exec_set &&
			 (hit = under_any(&p->process.exec, it->key)))
			snprintf(why, sizeof(why), "%s for %s: the policy given already allows it (under %s)", field,
				 it->key, hit);
		if (!why[0])
			continue;
		/* The count goes with it: every denial stays accounted for. */
		for (uint64_t k = 0; k < it->count; k++)
			(void)list_add(&s->none, why, it->example, 1);
		it->dropped = true;
	}
}

void suggest_finish(struct suggest *s)
{
	if (s->finished)
		return;
	s->finished = true;
	/* A directory made writable answers every write and read beneath it. */
	for (size_t i = 0; i < s->write.n; i++) {
		struct sg_item *it = &s->write.v[i], *d;
		if (!it->dropped && (d = covering(&s->write, it->key, it)) && strcmp(d->key, it->key) != 0)
			fold(d, it);
	}
	for (size_t i = 0; i < s->read.n; i++) {
		struct sg_item *it = &s->read.v[i], *d;
		if (it->dropped)
			continue;
		if ((d = covering(&s->write, it->key, NULL)) || ((d = covering(&s->read, it->key, it)) &&
								 strcmp(d->key, it->key) != 0))
			fold(d, it);
	}
	if (s->base) {
		against_base(s, &s->write, "filesystem.write", true);
		against_base(s, &s->read, "filesystem.read", false);
		against_base(s, &s->exec, "process.exec", false);
	}
	/* A lookup alone names no port; the endpoint offered for the same
	 * host answers it. */
	for (size_t i = 0; i < s->dns.n; i++) {
		struct sg_item *it = &s->dns.v[i];
		bool answered = false;
		for (size_t k = 0; k < s->n_eps && !answered; k++)
			if (strcmp(s->eps[k].host, it->key) == 0) {
				s->eps[k].count += it->count;
				answered = true;
			}
		if (!answered) {
			char why[700];
			snprintf(why, sizeof(why),
				 "a DNS lookup of %s with no connection after it: a lookup names no port, so no "
				 "endpoint is offered",
				 it->key);
			for (uint64_t k = 0; k < it->count; k++)
				(void)list_add(&s->none, why, it->example, 1);
		}
		it->dropped = true;
	}
	/* A tunnel to host:port needs the endpoint whole: its rules would be
	 * moot (and on 443 need interception). */
	for (size_t i = 0; i < s->n_eps; i++) {
		struct sg_endpoint *e = &s->eps[i];
		const char *of = e->base >= 0 ? s->base->network.endpoints[e->base].id : e->base_id;
		if (of) {
			if (asprintf(&e->note, "rules to add to endpoint %s, which names this host and port", of) < 0)
				e->note = NULL;
		} else {
			e->note = note_of(e->count, e->example);
		}
	}
}

/* ---- output ---- */

static size_t live(const struct sg_list *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += !l->v[i].dropped;
	return n;
}

uint64_t suggest_denials(const struct suggest *s)
{
	return s->denials;
}

bool suggest_has_additions(const struct suggest *s)
{
	return live(&s->read) || live(&s->write) || live(&s->exec) || live(&s->private_) || s->n_eps;
}

/* "3 denials, e.g. X" / "1 denial: X", the comment of an addition. */
static char *note_of(uint64_t count, const char *example)
{
	char *out = NULL;
	if (asprintf(&out, count == 1 ? "%llu denial: %s" : "%llu denials, e.g. %s", (unsigned long long)count,
		     example) < 0)
		return NULL;
	return out;
}

static void print_note(FILE *f, uint64_t count, const char *example)
{
	_cleanup_free_ char *n = note_of(count, example);
	fputs("  # ", f);
	policy_print_comment(f, n ? n : example);
	fputc('\n', f);
}

void suggest_print_unanswered(const struct suggest *s, FILE *f)
{
	if (!live(&s->none))
		return;
	fputs("# Not offered: no policy addition allows these denials.\n", f);
	for (size_t i = 0; i < s->none.n; i++) {
		const struct sg_item *it = &s->none.v[i];
		_cleanup_free_ char *n = note_of(it->count, it->example);
		fputs("#   - ", f);
		policy_print_comment(f, it->key);
		fputs("\n#     ", f);
		policy_print_comment(f, n ? n : it->example);
		fputc('\n', f);
	}
}

static void print_list(FILE *f, const char *indent, const char *key, const struct sg_list *l)
{
	if (!live(l))
		return;
	fprintf(f, "%s%s:\n", indent, key);
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].dropped)
			continue;
		fprintf(f, "%s  - ", indent);
		policy_print_string(f, l->v[i].key);
		print_note(f, l->v[i].count, l->v[i].example);
	}
}

static void print_rules(FILE *f, const struct sg_endpoint *e)
{
	fputs("      rules:\n", f);
	for (size_t k = 0; k < e->n_rules; k++) {
		const struct sg_rule *r = &e->rules[k];
		fputs("        - methods: [", f);
		for (size_t m = 0; m < r->n_methods; m++) {
			if (m)
				fputs(", ", f);
			policy_print_string(f, r->methods[m]);
		}
		fputc(']', f);
		print_note(f, r->count, r->example);
		fputs("          path: ", f);
		policy_print_string(f, r->path);
		fputc('\n', f);
	}
}

void suggest_print_fragment(const struct suggest *s, FILE *f)
{
	if (live(&s->read) || live(&s->write)) {
		fputs("filesystem:\n", f);
		print_list(f, "  ", "read", &s->read);
		print_list(f, "  ", "write", &s->write);
	}
	if (live(&s->exec)) {
		fputs("process:\n", f);
		fputs("  # Listing exec replaces the default (the system baseline and the workspace):\n"
		      "  # keep what the policy lists, or add those directories, too.\n",
		      f);
		print_list(f, "  ", "exec", &s->exec);
	}
	if (s->n_eps || live(&s->private_)) {
		fputs("network:\n", f);
		if (s->n_eps)
			fputs("  endpoints:\n", f);
		for (size_t i = 0; i < s->n_eps; i++) {
			const struct sg_endpoint *e = &s->eps[i];
			fputs("    - host: ", f);
			policy_print_string(f, e->host);
			fputs("  # ", f);
			policy_print_comment(f, e->note ? e->note : "");
			fprintf(f, "\n      ports: [%u]\n", e->port);
			if (!e->whole && e->n_rules)
				print_rules(f, e);
		}
		print_list(f, "  ", "allow_private", &s->private_);
	}
}

/* ---- merging into a policy ---- */

static int append_path(struct policy_paths *ps, const char *path, const char *note)
{
	struct policy_path *v = realloc(ps->v, (ps->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ps->v = v;
	v[ps->n] = (struct policy_path){ .path = strdup(path), .loc = { .note = note } };
	if (!v[ps->n].path)
		return -ENOMEM;
	ps->n++;
	return 0;
}

static void remove_path(struct policy_paths *ps, const char *path)
{
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->v[i].path, path) == 0) {
			free(ps->v[i].path);
			memmove(&ps->v[i], &ps->v[i + 1], (ps->n - i - 1) * sizeof(ps->v[0]));
			ps->n--;
			return;
		}
}

/* The notes live as long as s: they are kept in its items. */
static const char *item_note(struct sg_item *it)
{
	char *n = note_of(it->count, it->example);
	if (!n)
		return NULL;
	free(it->example);
	it->example = n; /* printed as it is from here on */
	return n;
}

static const char *const default_exec_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
						 "/opt", NULL };

static int make_rule(struct policy_net_rule *r, const struct sg_rule *sr, size_t ep, size_t idx, const char *note)
{
	*r = (struct policy_net_rule){ .loc = { .note = note } };
	if (asprintf(&r->id, "network.endpoints[%zu].rules[%zu]", ep, idx) < 0) {
		r->id = NULL;
		return -ENOMEM;
	}
	r->path = strdup(sr->path);
	r->methods = calloc(sr->n_methods + 1, sizeof(char *));
	if (!r->path || !r->methods)
		return -ENOMEM;
	for (size_t m = 0; m < sr->n_methods; m++)
		if (!(r->methods[m] = strdup(sr->methods[m])))
			return -ENOMEM;
	r->n_methods = sr->n_methods;
	return 0;
}

static int merge_endpoint(const struct sg_endpoint *e, struct policy_network *net)
{
	size_t idx;
	struct policy_endpoint *ep;
	if (e->base >= 0) {
		idx = (size_t)e->base;
		ep = &net->endpoints[idx];
		/* `access: read-only` names its one rule like the endpoint,
		 * which a rule next to others may not be: give it its own. */
		if (ep->n_rules == 1 && ep->rules[0].id && ep->id && strcmp(ep->rules[0].id, ep->id) == 0) {
			char *id = NULL;
			if (asprintf(&id, "network.endpoints[%zu].rules[0]", idx) < 0)
				return -ENOMEM;
			free(ep->rules[0].id);
			ep->rules[0].id = id;
		}
	} else {
		struct policy_endpoint *v = realloc(net->endpoints, (net->n_endpoints + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		net->endpoints = v;
		idx = net->n_endpoints;
		ep = &v[idx];
		*ep = (struct policy_endpoint){ .loc = { .note = e->note } };
		net->n_endpoints++;
		if (asprintf(&ep->id, "network.endpoints[%zu]", idx) < 0) {
			ep->id = NULL;
			return -ENOMEM;
		}
		ep->host = strdup(e->host);
		ep->ports = malloc(sizeof(uint16_t));
		if (!ep->host || !ep->ports)
			return -ENOMEM;
		ep->ports[0] = e->port;
		ep->n_ports = 1;
	}
	if (e->whole)
		return 0;
	struct policy_net_rule *v = realloc(ep->rules, (ep->n_rules + e->n_rules) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ep->rules = v;
	for (size_t k = 0; k < e->n_rules; k++) {
		int r = make_rule(&ep->rules[ep->n_rules], &e->rules[k], idx, ep->n_rules, e->rules[k].example);
		ep->n_rules++;
		if (r < 0)
			return r;
	}
	return 0;
}

int suggest_merge(const struct suggest *cs, struct policy *p, struct error *err)
{
	struct suggest *s = (struct suggest *)cs; /* the notes are kept in its items */
	int r = 0;
	for (size_t i = 0; i < s->write.n && r == 0; i++) {
		struct sg_item *it = &s->write.v[i];
		if (it->dropped)
			continue;
		/* One path in one list: what becomes writable leaves read. */
		remove_path(&p->filesystem.read, it->key);
		r = append_path(&p->filesystem.write, it->key, item_note(it));
	}
	for (size_t i = 0; i < s->read.n && r == 0; i++)
		if (!s->read.v[i].dropped)
			r = append_path(&p->filesystem.read, s->read.v[i].key, item_note(&s->read.v[i]));
	if (r == 0 && live(&s->exec) && !p->process.exec_set) {
		/* Listing exec replaces the default: spell the default out. */
		static const char note[] = "the default: the system baseline and the workspace";
		for (size_t i = 0; p->filesystem.baseline && default_exec_dirs[i] && r == 0; i++)
			if (exists(default_exec_dirs[i]))
				r = append_path(&p->process.exec, default_exec_dirs[i], note);
		if (r == 0 && p->sandbox.workspace)
			r = append_path(&p->process.exec, p->sandbox.workspace, note);
		p->process.exec_set = true;
	}
	for (size_t i = 0; i < s->exec.n && r == 0; i++)
		if (!s->exec.v[i].dropped)
			r = append_path(&p->process.exec, s->exec.v[i].key, item_note(&s->exec.v[i]));
	if (r == 0 && (s->n_eps || live(&s->private_)) && p->network.mode == POLICY_NET_NONE)
		p->network.mode = POLICY_NET_PROXY;
	for (size_t i = 0; i < s->n_eps && r == 0; i++) {
		struct sg_endpoint *e = &s->eps[i];
		for (size_t k = 0; k < e->n_rules && r == 0; k++) {
			char *n = note_of(e->rules[k].count, e->rules[k].example);
			if (!n) {
				r = -ENOMEM;
				break;
			}
			free(e->rules[k].example);
			e->rules[k].example = n;
		}
		if (r == 0)
			r = merge_endpoint(e, &p->network);
	}
	for (size_t i = 0; i < s->private_.n && r == 0; i++) {
		struct sg_item *it = &s->private_.v[i];
		if (it->dropped)
			continue;
		struct policy_cidr c;
		if (policy_cidr_parse(it->key, &c) != POLICY_CIDR_OK)
			continue; /* checked when it was added */
		struct policy_cidr *v = realloc(p->network.allow_private, (p->network.n_allow_private + 1) * sizeof(*v));
		if (!v) {
			r = -ENOMEM;
			break;
		}
		c.loc = (struct policy_loc){ .note = item_note(it) };
		v[p->network.n_allow_private++] = c;
		p->network.allow_private = v;
	}
	if (r < 0)
		return error_set(err, -r, "out of memory");
	if (p->sandbox.mode == POLICY_MODE_LEARN) {
		p->sandbox.mode = POLICY_MODE_ENFORCE;
		p->origin.mode = (struct policy_loc){ .note = "learn in the policy given: the additions answer what it "
							      "recorded" };
	}
	return 0;
}
