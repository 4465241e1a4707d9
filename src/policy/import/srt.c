/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Anthropic sandbox-runtime settings (srt --settings FILE, JSON) into an
 * airlock policy. The settings' shape is the one the project's README and
 * src/sandbox/sandbox-config.ts describe: network.{allowedDomains,
 * deniedDomains, allowUnixSockets, allowAllUnixSockets, allowLocalBinding,
 * httpProxyPort, socksProxyPort}, filesystem.{denyRead, allowWrite,
 * denyWrite, allowGitConfig}, ignoreViolations, enableWeakerNestedSandbox,
 * ripgrep, mandatoryDenySearchDepth, allowPty.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/build.h"
#include "policy/internal.h"

/* A path as srt reads it (relative to the current directory, "~"
 * expanded, no globs on Linux) in airlock's spelling: "~/..." as is,
 * absolute as is, relative under $WORKSPACE, which is the current
 * directory of `airlock run` unless the policy names another. *cwd is set
 * when the path is the current directory itself. */
static int srt_path(struct imp_build *b, const struct imp_node *n, const char *field, char **out, bool *cwd)
{
	int r = imp_want(b, n, field, IMP_STR);

	*cwd = false;
	if (r < 0)
		return r;
	const char *s = n->str;
	if (!*s)
		return imp_fail(b, n, field, "is empty");
	if (strpbrk(s, "*?["))
		return imp_fail(b, n, field, "\"%s\" is a glob; airlock paths are literal (srt on Linux reads "
				"them literally too, so write the directory itself)", s);
	if (s[0] == '$')
		return imp_fail(b, n, field, "\"%s\" starts with '$'; airlock expands only $WORKSPACE and srt "
				"expands nothing, so the two would read it differently", s);
	if (s[0] == '~' && s[1] && s[1] != '/')
		return imp_fail(b, n, field, "\"%s\": ~user is not supported", s);
	if (s[0] == '~' || s[0] == '/') {
		*out = strdup(s);
		return *out ? 0 : error_set(b->err, ENOMEM, "out of memory");
	}
	/* Relative: drop "." and empty components to see whether anything is
	 * left; ".." is left to airlock's lexical normalisation. */
	bool rest = false;
	for (const char *p = s; *p;) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len && !(len == 1 && p[0] == '.'))
			rest = true;
		p += len;
		if (*p)
			p++;
	}
	if (!rest) {
		*cwd = true;
		*out = strdup("$WORKSPACE");
		return *out ? 0 : error_set(b->err, ENOMEM, "out of memory");
	}
	if (asprintf(out, "$WORKSPACE/%s", s) < 0)
		return error_set(b->err, ENOMEM, "out of memory");
	return 0;
}

/* A ".." component: the path may leave the current directory. */
static bool has_dotdot(const char *s)
{
	for (const char *p = s; *p;) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += len;
		if (*p)
			p++;
	}
	return false;
}

static int str_list(struct imp_build *b, const struct imp_node *n, const char *field)
{
	int r = imp_want(b, n, field, IMP_LIST);
	for (size_t i = 0; r == 0 && i < n->n; i++) {
		char f[POLICY_FIELD_MAX];
		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		r = imp_want(b, &n->v[i], f, IMP_STR);
	}
	return r;
}

/* One path of a filesystem list, as srt_path() read it (p; cwd when it
 * is the current directory). */
typedef int (*srt_path_fn)(struct imp_build *b, const struct imp_node *n, const char *field, const char *p, bool cwd,
			   bool *cwd_writable);

/* Each path of the list at fs's key (a list of strings), in order. */
static int srt_paths(struct imp_build *b, const struct imp_node *fs, const char *key, srt_path_fn fn,
		     bool *cwd_writable)
{
	const struct imp_node *v = imp_get(fs, key);
	char field[POLICY_FIELD_MAX], f[POLICY_FIELD_MAX + 32];
	int r;

	if (!v)
		return 0;
	snprintf(field, sizeof(field), "filesystem.%s", key);
	if ((r = str_list(b, v, field)) < 0)
		return r;
	for (size_t i = 0; i < v->n; i++) {
		char *p = NULL;
		bool cwd;
		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		if ((r = srt_path(b, &v->v[i], f, &p, &cwd)) < 0)
			return r;
		r = fn(b, &v->v[i], f, p, cwd, cwd_writable);
		free(p);
		if (r < 0)
			return r;
	}
	return 0;
}

static int deny_read(struct imp_build *b, const struct imp_node *n, const char *f, const char *p, bool cwd,
		     bool *cwd_writable)
{
	(void)cwd_writable;
	if (cwd)
		return imp_fail(b, n, f, "denies the current directory, which airlock makes the workspace; run "
				"airlock from another directory instead");
	return imp_add(b, &b->deny, p, n, f);
}

static int allow_write(struct imp_build *b, const struct imp_node *n, const char *f, const char *p, bool cwd,
		       bool *cwd_writable)
{
	if (!cwd)
		return imp_add(b, &b->write, p, n, f);
	/* The workspace is always writable in airlock. */
	if (*cwd_writable)
		return imp_fail(b, n, f, "the current directory is listed twice");
	*cwd_writable = true;
	return 0;
}

/* The protected glob of "$WORKSPACE/DIR" (DIR itself and all beneath
 * it), without "." or empty components; malloc'd, NULL when out of
 * memory. */
static char *protect_glob(const char *p)
{
	char *g = malloc(strlen(p) + 4);
	size_t gl = 0;

	if (!g)
		return NULL;
	for (const char *c = p + 11; *c;) {
		const char *e = strchr(c, '/');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		if (len && !(len == 1 && c[0] == '.')) {
			memcpy(g + gl, c, len);
			gl += len;
			g[gl++] = '/';
		}
		c += len;
		if (*c)
			c++;
	}
	memcpy(g + gl, "**", 3);
	return g;
}

static int deny_write(struct imp_build *b, const struct imp_node *n, const char *f, const char *p, bool cwd,
		      bool *cwd_writable)
{
	int r;

	if (cwd)
		return *cwd_writable ? imp_fail(b, n, f, "denies writing the current directory that allowWrite "
						"allows; say one or the other")
				     : 0;
	if (!strncmp(p, "$WORKSPACE/", 11) && !has_dotdot(p + 11)) {
		/* Read-only inside the workspace: a protected path, whether
		 * a file or a directory. */
		char *g = protect_glob(p);
		if (!g)
			return error_set(b->err, ENOMEM, "out of memory");
		r = imp_add(b, &b->protect, g, n, f);
		free(g);
		return r;
	}
	/* Outside the current directory airlock has no
	 * read-only-under-a-write-path rule; hiding the path is the
	 * narrower choice. */
	r = imp_narrow(b, n, f, "\"%s\" is outside the current directory, where airlock cannot make a path "
		       "read-only inside a writable one; it is denied (hidden) instead", n->str);
	return r < 0 ? r : imp_add(b, &b->deny, p, n, f);
}

static int srt_filesystem(struct imp_build *b, const struct imp_node *fs)
{
	static const char *const known[] = { "denyRead", "allowWrite", "denyWrite", "allowGitConfig", NULL };
	const struct imp_node *v;
	bool cwd_writable = false;
	int r;

	if ((r = imp_want(b, fs, "filesystem", IMP_MAP)) < 0 ||
	    (r = imp_known_keys(b, fs, "filesystem", known)) < 0)
		return r;
	/* srt's reads are deny-listed: everything not in denyRead can be
	 * read, the home directory included. airlock's are allow-listed. */
	if ((r = imp_narrow(b, imp_get(fs, "denyRead") ? imp_get(fs, "denyRead") : fs, "filesystem.denyRead",
			    "srt lets the program read every path not listed in denyRead; airlock reads only the "
			    "system baseline, the workspace and filesystem.read, and hides the home directory")) < 0)
		return r;
	if ((r = srt_paths(b, fs, "denyRead", deny_read, &cwd_writable)) < 0 ||
	    (r = srt_paths(b, fs, "allowWrite", allow_write, &cwd_writable)) < 0)
		return r;
	if (!cwd_writable) {
		/* airlock's workspace (the current directory) is always
		 * writable; protecting all of it keeps it read-only, as srt has
		 * it. A write path inside it would then be read-only too. */
		const struct imp_node *at = imp_get(fs, "allowWrite") ? imp_get(fs, "allowWrite") : fs;
		if ((r = imp_add(b, &b->protect, "**", at, "filesystem.allowWrite (no \".\": the current directory "
				 "is read-only)")) < 0)
			return r;
		for (size_t i = 0; i < b->write.n; i++)
			if (!strncmp(b->write.v[i].val, "$WORKSPACE/", 11) &&
			    (r = imp_narrow(b, at, "filesystem.allowWrite",
					    "%s is inside the current directory, which is not writable; airlock "
					    "protects the whole workspace, so it is read-only too",
					    b->write.v[i].val)) < 0)
				return r;
	}
	if ((r = srt_paths(b, fs, "denyWrite", deny_write, &cwd_writable)) < 0)
		return r;
	if ((v = imp_get(fs, "allowGitConfig"))) {
		if ((r = imp_want(b, v, "filesystem.allowGitConfig", IMP_BOOL)) < 0)
			return r;
		if (v->b && (r = imp_narrow(b, v, "filesystem.allowGitConfig",
					    "airlock protects .git/config at any depth (filesystem.protect_defaults)")) < 0)
			return r;
	}
	return 0;
}

static int srt_network(struct imp_build *b, const struct imp_node *net)
{
	static const char *const known[] = { "allowedDomains", "deniedDomains", "allowUnixSockets",
					     "allowAllUnixSockets", "allowLocalBinding", "httpProxyPort",
					     "socksProxyPort", NULL };
	const struct imp_node *v, *allowed;
	char f[POLICY_FIELD_MAX];
	int r;

	if ((r = imp_want(b, net, "network", IMP_MAP)) < 0 || (r = imp_known_keys(b, net, "network", known)) < 0)
		return r;
	if ((v = imp_get(net, "httpProxyPort")) || (v = imp_get(net, "socksProxyPort")))
		return imp_fail(b, v, v->key[0] == 'h' ? "network.httpProxyPort" : "network.socksProxyPort",
				"hands filtering to a proxy of your own; airlock's own proxy decides, so what this "
				"allows cannot be known from the file");
	if ((v = imp_get(net, "allowUnixSockets"))) {
		if ((r = str_list(b, v, "network.allowUnixSockets")) < 0)
			return r;
		if (v->n && (r = imp_narrow(b, v, "network.allowUnixSockets",
					    "airlock gives the agent no Unix socket of the host")) < 0)
			return r;
	}
	if ((v = imp_get(net, "allowAllUnixSockets"))) {
		if ((r = imp_want(b, v, "network.allowAllUnixSockets", IMP_BOOL)) < 0)
			return r;
		if (v->b && (r = imp_narrow(b, v, "network.allowAllUnixSockets",
					    "airlock gives the agent no Unix socket of the host")) < 0)
			return r;
	}
	if ((v = imp_get(net, "allowLocalBinding"))) {
		if ((r = imp_want(b, v, "network.allowLocalBinding", IMP_BOOL)) < 0)
			return r;
		if (v->b && (r = imp_narrow(b, v, "network.allowLocalBinding",
					    "the agent can bind ports only on the sandbox's own loopback, which the "
					    "host cannot reach")) < 0)
			return r;
	}
	allowed = imp_get(net, "allowedDomains");
	if (allowed) {
		if ((r = str_list(b, allowed, "network.allowedDomains")) < 0)
			return r;
		if (allowed->n) {
			b->network = true;
			if (!(b->network_src = imp_src(b, allowed, "network.allowedDomains")))
				return error_set(b->err, ENOMEM, "out of memory");
			/* srt's proxies filter by name only; an airlock
			 * endpoint names its ports. */
			if ((r = imp_narrow(b, allowed, "network.allowedDomains",
					    "srt allows every port of an allowed domain; airlock allows ports 80 "
					    "and 443")) < 0)
				return r;
		}
		for (size_t i = 0; i < allowed->n; i++) {
			char host[POLICY_HOST_MAX];
			snprintf(f, sizeof(f), "network.allowedDomains[%zu]", i);
			if ((r = imp_host(b, &allowed->v[i], f, host)) < 0)
				return r;
			if ((r = imp_add_host(b, host, &allowed->v[i], f)) < 0)
				return r;
		}
	}
	if ((v = imp_get(net, "deniedDomains"))) {
		if ((r = str_list(b, v, "network.deniedDomains")) < 0)
			return r;
		for (size_t i = 0; i < v->n; i++) {
			char host[POLICY_HOST_MAX];
			snprintf(f, sizeof(f), "network.deniedDomains[%zu]", i);
			if ((r = imp_host(b, &v->v[i], f, host)) < 0)
				return r;
			/* airlock denies by default, so a denied domain no
			 * allowed pattern reaches needs nothing. One inside an
			 * allowed wildcard is an exception airlock has no
			 * form for. */
			for (size_t k = 0; k < b->endpoints.n; k++) {
				const char *a = b->endpoints.v[k].val;
				if (policy_host_covers(a, host) || policy_host_covers(host, a))
					return imp_fail(b, &v->v[i], f, "\"%s\" overlaps %s; airlock has no exception "
							"inside an allowed host (list the allowed names one by one)",
							host, b->endpoints.v[k].src);
			}
		}
	}
	return 0;
}

int imp_srt(struct imp_build *b, const struct imp_node *root)
{
	static const char *const known[] = { "network", "filesystem", "ignoreViolations", "enableWeakerNestedSandbox",
					     "ripgrep", "mandatoryDenySearchDepth", "allowPty", NULL };
	const struct imp_node *v;
	int r;

	if ((r = imp_known_keys(b, root, "", known)) < 0)
		return r;
	/* srt's mandatory deny paths (shell rc files, .git/hooks,
	 * .git/config, editor and agent settings) are close to airlock's
	 * protected paths, which stay on. */
	if ((v = imp_get(root, "filesystem")) && (r = srt_filesystem(b, v)) < 0)
		return r;
	if (!v) {
		/* The schema requires the key; reading it as empty would
		 * still need the read narrowing. */
		return imp_fail(b, root, "filesystem", "is missing (srt requires it)");
	}
	if ((v = imp_get(root, "network")) && (r = srt_network(b, v)) < 0)
		return r;
	if ((v = imp_get(root, "ignoreViolations"))) {
		if ((r = imp_want(b, v, "ignoreViolations", IMP_MAP)) < 0)
			return r;
		if ((r = imp_skip(b, v, "ignoreViolations", "only silences srt's violation reports; airlock "
				  "records every denial")) < 0)
			return r;
	}
	if ((v = imp_get(root, "enableWeakerNestedSandbox"))) {
		if ((r = imp_want(b, v, "enableWeakerNestedSandbox", IMP_BOOL)) < 0)
			return r;
		if (v->b && (r = imp_narrow(b, v, "enableWeakerNestedSandbox",
					    "airlock has no weaker mode for nested containers")) < 0)
			return r;
	}
	if ((v = imp_get(root, "ripgrep")) && (r = imp_skip(b, v, "ripgrep", "the search tool srt runs itself")) < 0)
		return r;
	if ((v = imp_get(root, "mandatoryDenySearchDepth"))) {
		if ((r = imp_want(b, v, "mandatoryDenySearchDepth", IMP_NUM)) < 0)
			return r;
		if ((r = imp_narrow(b, v, "mandatoryDenySearchDepth",
				    "airlock protects its protected paths at any depth")) < 0)
			return r;
	}
	if ((v = imp_get(root, "allowPty"))) {
		if ((r = imp_want(b, v, "allowPty", IMP_BOOL)) < 0)
			return r;
		if (v->b && (r = imp_narrow(b, v, "allowPty", "airlock does not promise a new pseudo-terminal")) < 0)
			return r;
	}
	return 0;
}
