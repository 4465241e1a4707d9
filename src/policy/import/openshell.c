/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NVIDIA OpenShell sandbox policy (YAML) into an airlock policy, per the
 * project's docs/reference/policy-schema.mdx: version, filesystem_policy
 * (include_workdir, read_only, read_write), landlock (compatibility),
 * process (run_as_user, run_as_group), network_policies (named entries of
 * endpoints and binaries), network_middlewares.
 *
 * OpenShell grants nothing it does not list, as airlock does; its network
 * entries are per program, which airlock's are not, so an entry limited to
 * some programs is refused (or, with --narrow, left out).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/build.h"
#include "policy/internal.h"

static const char *const endpoint_keys[] = { "host", "port", "ports", "path", "protocol", "tls", "enforcement",
					     "access", "rules", "deny_rules", "allowed_ips", "allow_encoded_slash",
					     "websocket_credential_rewrite", "request_body_credential_rewrite",
					     "allow_uninspected_credentials", "credential_signing", "signing_service",
					     "signing_region", "credential_binding", "persisted_queries",
					     "graphql_persisted_queries", "graphql_max_body_bytes", "mcp", "json_rpc",
					     NULL };

/* Device and process files every airlock sandbox has of its own. */
static bool sandbox_provides(const char *p)
{
	static const char *const own[] = { "/proc", "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					   "/dev/urandom", "/dev/tty", NULL };
	for (size_t i = 0; own[i]; i++)
		if (!strcmp(p, own[i]))
			return true;
	return false;
}

struct os_to {
	bool rw;
	bool *ws_set;
};

static int os_path(struct imp_build *b, const struct imp_node *e, const char *f, size_t i, void *ctx)
{
	const struct os_to *t = ctx;
	int r;

	(void)i;
	if (sandbox_provides(e->str))
		return imp_skip(b, e, f, "the sandbox has its own /proc and these devices");
	/* Landlock's read rules in OpenShell let programs under a granted
	 * path run; airlock's exec list says so. */
	if ((r = imp_add(b, &b->exec, e->str, e, f)) < 0)
		return r;
	if (t->rw && !*t->ws_set) {
		/* airlock always has a writable workspace: the first
		 * read-write path is it. */
		b->workspace = strdup(e->str);
		b->workspace_src = imp_src(b, e, f);
		if (!b->workspace || !b->workspace_src)
			return error_set(b->err, ENOMEM, "out of memory");
		*t->ws_set = true;
		return 0;
	}
	return imp_add(b, t->rw ? &b->write : &b->read, e->str, e, f);
}

static int os_paths(struct imp_build *b, const struct imp_node *n, const char *field, bool rw, bool *ws_set)
{
	struct os_to t = { rw, ws_set };
	return imp_paths(b, n, field, "absolute (OpenShell requires it)", os_path, &t);
}

static int os_filesystem(struct imp_build *b, const struct imp_node *fs)
{
	static const char *const known[] = { "include_workdir", "read_only", "read_write", NULL };
	const struct imp_node *v, *ro;
	bool ws_set = false;
	int r;

	if ((r = imp_want(b, fs, "filesystem_policy", IMP_MAP)) < 0 ||
	    (r = imp_known_keys(b, fs, "filesystem_policy", known)) < 0)
		return r;
	/* Only what is listed: no system baseline. */
	b->baseline = 0;
	if (!(b->baseline_src = imp_src(b, fs, "filesystem_policy (grants only the paths it lists)")))
		return error_set(b->err, ENOMEM, "out of memory");
	if ((v = imp_get(fs, "include_workdir"))) {
		if ((r = imp_want(b, v, "filesystem_policy.include_workdir", IMP_BOOL)) < 0)
			return r;
		/* The working directory is airlock's default workspace. */
		ws_set = v->b;
		if (v->b && (r = imp_add(b, &b->exec, "$WORKSPACE", v, "filesystem_policy.include_workdir")) < 0)
			return r;
	}
	if ((v = imp_get(fs, "read_write")) && (r = os_paths(b, v, "filesystem_policy.read_write", true, &ws_set)) < 0)
		return r;
	ro = imp_get(fs, "read_only");
	if (!ws_set && ro && ro->kind == IMP_LIST && ro->n && ro->v[0].kind == IMP_STR &&
	    !sandbox_provides(ro->v[0].str)) {
		/* No writable path at all: the first read-only one is the
		 * workspace, protected as a whole. */
		if ((r = os_paths(b, ro, "filesystem_policy.read_only", true, &ws_set)) < 0)
			return r;
		/* os_paths put the rest under write; they are read-only. */
		b->read = b->write;
		b->write = (struct imp_list){ 0 };
		return imp_add(b, &b->protect, "**", &ro->v[0], "filesystem_policy.read_only[0] (the workspace, "
			       "read-only)");
	}
	if (!ws_set)
		return imp_fail(b, fs, "filesystem_policy", "grants no path; airlock always gives the agent a "
				"workspace, so a policy that grants none cannot be expressed");
	if (ro && (r = os_paths(b, ro, "filesystem_policy.read_only", false, &ws_set)) < 0)
		return r;
	return 0;
}

static int os_port(struct imp_build *b, const struct imp_node *v, const char *f, uint16_t *out)
{
	int r = imp_want(b, v, f, IMP_NUM);
	char *end;
	long p;

	if (r < 0)
		return r;
	p = strtol(v->str, &end, 10);
	if (*end || p < 1 || p > 65535)
		return imp_fail(b, v, f, "%s is not a port (1 to 65535)", v->str);
	*out = (uint16_t)p;
	return 0;
}

static int os_endpoint(struct imp_build *b, const struct imp_node *ep, const char *field)
{
	static const char *const unsupported[] = { "rules", "deny_rules", "allowed_ips", "websocket_credential_rewrite",
						   "request_body_credential_rewrite", "allow_uninspected_credentials",
						   "credential_signing", "signing_service", "signing_region",
						   "credential_binding", "persisted_queries", "graphql_persisted_queries",
						   "graphql_max_body_bytes", "mcp", "json_rpc", NULL };
	const struct imp_node *v, *hn;
	char f[POLICY_FIELD_MAX], host[POLICY_HOST_MAX];
	uint16_t ports[IMP_PORTS_MAX];
	size_t np = 0;
	const char *access = NULL, *methods = NULL, *proto = NULL;
	int r;

	if ((r = imp_want(b, ep, field, IMP_MAP)) < 0 || (r = imp_known_keys(b, ep, field, endpoint_keys)) < 0)
		return r;
	for (size_t i = 0; unsupported[i]; i++)
		if ((v = imp_get(ep, unsupported[i]))) {
			snprintf(f, sizeof(f), "%s.%s", field, unsupported[i]);
			return imp_fail(b, v, f, "has no airlock form this importer can vouch for (airlock's path "
					"globs, credential injection and request rules differ from OpenShell's); "
					"write it in the airlock policy");
		}
	snprintf(f, sizeof(f), "%s.host", field);
	if (!(hn = imp_get(ep, "host")))
		return imp_fail(b, ep, f, "is missing (a hostless endpoint is an address list airlock has no form for)");
	if ((r = imp_want(b, hn, f, IMP_STR)) < 0)
		return r;
	/* OpenShell's "*." matches one label, "**." any number; airlock's
	 * "*." any number. */
	if (!strncmp(hn->str, "**.", 3)) {
		char tmp[POLICY_HOST_MAX + 2];
		snprintf(tmp, sizeof(tmp), "*.%s", hn->str + 3);
		if (strlen(hn->str) >= POLICY_HOST_MAX || policy_host_normalize(tmp, host) != POLICY_HOST_WILDCARD)
			return imp_fail(b, hn, f, "\"%s\" is not a wildcard airlock accepts", hn->str);
	} else if (strchr(hn->str, '*')) {
		return imp_fail(b, hn, f, "\"%s\": OpenShell's '*' matches within one label; airlock's \"*.\" "
				"matches any depth, so this would widen (write \"**.\" for any depth)", hn->str);
	} else if ((r = imp_host(b, hn, f, host)) < 0) {
		return r;
	}
	if ((v = imp_get(ep, "port"))) {
		snprintf(f, sizeof(f), "%s.port", field);
		if ((r = os_port(b, v, f, &ports[np])) < 0)
			return r;
		np++;
	}
	if ((v = imp_get(ep, "ports"))) {
		snprintf(f, sizeof(f), "%s.ports", field);
		if ((r = imp_want(b, v, f, IMP_LIST)) < 0)
			return r;
		for (size_t i = 0; i < v->n; i++) {
			snprintf(f, sizeof(f), "%s.ports[%zu]", field, i);
			if (np == IMP_PORTS_MAX)
				return imp_fail(b, &v->v[i], f, "more than %d ports", IMP_PORTS_MAX);
			if ((r = os_port(b, &v->v[i], f, &ports[np])) < 0)
				return r;
			for (size_t k = 0; k < np; k++)
				if (ports[k] == ports[np])
					return imp_fail(b, &v->v[i], f, "port %u given twice", ports[np]);
			np++;
		}
	}
	if (!np)
		return imp_fail(b, ep, field, "has no port");
	if ((v = imp_get(ep, "path"))) {
		snprintf(f, sizeof(f), "%s.path", field);
		if ((r = imp_want(b, v, f, IMP_STR)) < 0)
			return r;
		if (v->len)
			return imp_fail(b, v, f, "endpoint path selectors have no airlock form");
	}
	if ((v = imp_get(ep, "protocol"))) {
		snprintf(f, sizeof(f), "%s.protocol", field);
		if ((r = imp_want(b, v, f, IMP_STR)) < 0)
			return r;
		proto = v->str;
		if (strcmp(proto, "rest"))
			return imp_fail(b, v, f, "\"%s\": only rest (HTTP method and path) has an airlock form", proto);
	}
	if ((v = imp_get(ep, "enforcement"))) {
		snprintf(f, sizeof(f), "%s.enforcement", field);
		if ((r = imp_want(b, v, f, IMP_STR)) < 0)
			return r;
		if (strcmp(v->str, "enforce"))
			return imp_fail(b, v, f, "\"%s\": airlock has no per-endpoint audit-only mode", v->str);
	}
	if ((v = imp_get(ep, "access"))) {
		snprintf(f, sizeof(f), "%s.access", field);
		if ((r = imp_want(b, v, f, IMP_STR)) < 0)
			return r;
		if (!proto)
			return imp_fail(b, v, f, "access without protocol: rest is not inspected by OpenShell either");
		if (!strcmp(v->str, "read-only"))
			access = "read-only"; /* GET, HEAD, OPTIONS in both */
		else if (!strcmp(v->str, "read-write"))
			methods = "[GET, HEAD, OPTIONS, POST, PUT, PATCH]";
		else if (strcmp(v->str, "full"))
			return imp_fail(b, v, f, "\"%s\" is not one of read-only, read-write, full", v->str);
	} else if (proto) {
		return imp_fail(b, ep, field, "protocol: rest without access or rules allows nothing in OpenShell");
	}
	if ((v = imp_get(ep, "tls"))) {
		snprintf(f, sizeof(f), "%s.tls", field);
		if ((r = imp_want(b, v, f, IMP_STR)) < 0)
			return r;
		if (!strcmp(v->str, "skip") && (access || methods))
			return imp_fail(b, v, f, "skip: OpenShell would not see the requests its access rule names");
		if (strcmp(v->str, "skip") && strcmp(v->str, "terminate") && strcmp(v->str, "passthrough"))
			return imp_fail(b, v, f, "\"%s\" is not one of skip, terminate, passthrough", v->str);
	}
	if ((v = imp_get(ep, "allow_encoded_slash")) &&
	    (r = imp_skip(b, v, "allow_encoded_slash", "how OpenShell parses paths; the imported rules do not "
			  "look at paths")) < 0)
		return r;
	/* A host given twice with a port in common: airlock's first entry
	 * would decide alone. */
	for (size_t k = 0; k < b->endpoints.n; k++) {
		const struct imp_entry *o = &b->endpoints.v[k];
		if (!policy_host_covers(o->val, host))
			continue;
		for (size_t i = 0; i < np; i++)
			for (size_t j = 0; j < o->n_ports; j++)
				if (ports[i] == o->ports[j])
					return imp_fail(b, hn, field, "%s:%u is also allowed by %s; airlock lets the "
							"first entry decide, so merge the two", host, ports[i], o->src);
	}
	struct imp_entry *e = imp_push(b, &b->endpoints, host, hn, field);
	if (!e)
		return -ENOMEM;
	memcpy(e->ports, ports, np * sizeof(ports[0]));
	e->n_ports = np;
	e->access = access;
	e->methods = methods;
	return 0;
}

static int os_network(struct imp_build *b, const struct imp_node *np)
{
	int r;

	if ((r = imp_want(b, np, "network_policies", IMP_MAP)) < 0)
		return r;
	b->network = true;
	if (!(b->network_src = imp_src(b, np, "network_policies")))
		return error_set(b->err, ENOMEM, "out of memory");
	for (size_t i = 0; i < np->n; i++) {
		static const char *const known[] = { "name", "endpoints", "binaries", NULL };
		const struct imp_node *ent = &np->v[i], *eps, *bins;
		char f[POLICY_FIELD_MAX] = "network_policies", g[POLICY_FIELD_MAX];
		policy_field_append_key(f, sizeof(f), ent->key, strlen(ent->key));
		if ((r = imp_want(b, ent, f, IMP_MAP)) < 0 || (r = imp_known_keys(b, ent, f, known)) < 0)
			return r;
		snprintf(g, sizeof(g), "%s.binaries", f);
		if (!(bins = imp_get(ent, "binaries")))
			return imp_fail(b, ent, g, "is missing (OpenShell requires it)");
		if ((r = imp_want(b, bins, g, IMP_LIST)) < 0)
			return r;
		bool any = false;
		for (size_t k = 0; k < bins->n; k++) {
			const struct imp_node *p = imp_get(&bins->v[k], "path");
			if (bins->v[k].kind != IMP_MAP || !p || p->kind != IMP_STR || bins->v[k].n != 1)
				return imp_fail(b, &bins->v[k], g, "each entry is {path: PROGRAM}");
			if (!strcmp(p->str, "/**"))
				any = true;
		}
		snprintf(g, sizeof(g), "%s.endpoints", f);
		if (!(eps = imp_get(ent, "endpoints")))
			return imp_fail(b, ent, g, "is missing (OpenShell requires it)");
		if ((r = imp_want(b, eps, g, IMP_LIST)) < 0)
			return r;
		if (!any) {
			/* airlock's endpoints apply to every program in the
			 * sandbox: leaving the entry out is the narrower
			 * choice. Its keys are still checked: a misspelt one
			 * must not pass unnoticed. */
			snprintf(g, sizeof(g), "%s.binaries", f);
			r = imp_narrow(b, bins, g, "OpenShell lets only the listed programs reach this entry's "
				       "endpoints; airlock cannot tell programs apart, so the entry is left out");
			for (size_t k = 0; r == 0 && k < eps->n; k++) {
				snprintf(g, sizeof(g), "%s.endpoints[%zu]", f, k);
				if ((r = imp_want(b, &eps->v[k], g, IMP_MAP)) == 0)
					r = imp_known_keys(b, &eps->v[k], g, endpoint_keys);
			}
			if (r < 0)
				return r;
			continue;
		}
		for (size_t k = 0; k < eps->n; k++) {
			snprintf(g, sizeof(g), "%s.endpoints[%zu]", f, k);
			if ((r = os_endpoint(b, &eps->v[k], g)) < 0)
				return r;
		}
	}
	return 0;
}

int imp_openshell(struct imp_build *b, const struct imp_node *root)
{
	static const char *const known[] = { "version", "filesystem_policy", "landlock", "process", "network_policies",
					     "network_middlewares", NULL };
	const struct imp_node *v;
	int r;

	if ((r = imp_known_keys(b, root, "", known)) < 0)
		return r;
	if (!(v = imp_get(root, "version")))
		return imp_fail(b, root, "version", "is missing (OpenShell requires version: 1)");
	if (v->kind != IMP_NUM || strcmp(v->str, "1"))
		return imp_fail(b, v, "version", "must be 1");
	if ((r = imp_filesystem(b, root, "filesystem_policy", os_filesystem)) < 0)
		return r;
	if ((v = imp_get(root, "landlock"))) {
		static const char *const lk[] = { "compatibility", NULL };
		const struct imp_node *c;
		if ((r = imp_want(b, v, "landlock", IMP_MAP)) < 0 || (r = imp_known_keys(b, v, "landlock", lk)) < 0)
			return r;
		if ((c = imp_get(v, "compatibility"))) {
			if ((r = imp_want(b, c, "landlock.compatibility", IMP_STR)) < 0)
				return r;
			if (!strcmp(c->str, "best_effort")) {
				/* airlock refuses to run weaker than the policy. */
				if ((r = imp_narrow(b, c, "landlock.compatibility", "best_effort runs without Landlock "
						    "where it is missing; airlock refuses to run")) < 0)
					return r;
			} else if (strcmp(c->str, "hard_requirement")) {
				return imp_fail(b, c, "landlock.compatibility", "\"%s\" is not one of best_effort, "
						"hard_requirement", c->str);
			}
		}
	}
	if ((v = imp_get(root, "process"))) {
		static const char *const pk[] = { "run_as_user", "run_as_group", NULL };
		if ((r = imp_want(b, v, "process", IMP_MAP)) < 0 || (r = imp_known_keys(b, v, "process", pk)) < 0)
			return r;
		if ((r = imp_skip(b, v, "process", "the user inside OpenShell's container; airlock runs the agent "
				  "as the invoking user, without capabilities")) < 0)
			return r;
	}
	if ((v = imp_get(root, "network_middlewares")) && !(v->kind == IMP_MAP && v->n == 0))
		return imp_fail(b, v, "network_middlewares", "middleware has no airlock form");
	if ((v = imp_get(root, "network_policies")) && (r = os_network(b, v)) < 0)
		return r;
	return 0;
}
