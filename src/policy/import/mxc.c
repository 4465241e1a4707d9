/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Microsoft MXC configuration (JSON) into an airlock policy: either a
 * container config (the `mxc` CLI's input: containerId, containment,
 * process, filesystem, network, lifecycle, ui, ...; schemas/stable in the
 * microsoft/mxc repository) or the portable SandboxPolicy of schema 0.8
 * (version, filesystem, network, ui, timeoutMs; docs/sandbox-policy).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/build.h"
#include "policy/internal.h"

struct mxc_to {
	struct imp_list *to, *first_out;
	bool take_first;
};

static int mxc_path(struct imp_build *b, const struct imp_node *e, const char *f, size_t i, void *ctx)
{
	const struct mxc_to *t = ctx;
	return imp_add(b, t->take_first && i == 0 ? t->first_out : t->to, e->str, e, f);
}

static int mxc_paths(struct imp_build *b, const struct imp_node *n, const char *field, struct imp_list *to,
		     struct imp_list *first_out, bool take_first)
{
	struct mxc_to t = { to, first_out, take_first };
	return imp_paths(b, n, field, "an absolute POSIX path (a Windows path has no meaning in a Linux sandbox)",
			 mxc_path, &t);
}

static int mxc_filesystem(struct imp_build *b, const struct imp_node *fs)
{
	static const char *const known[] = { "readwritePaths", "readonlyPaths", "deniedPaths", "clearPolicyOnExit",
					     NULL };
	const struct imp_node *rw, *ro, *dn, *v;
	struct imp_list ws = { 0 };
	int r;

	if ((r = imp_want(b, fs, "filesystem", IMP_MAP)) < 0 || (r = imp_known_keys(b, fs, "filesystem", known)) < 0)
		return r;
	rw = imp_get(fs, "readwritePaths");
	ro = imp_get(fs, "readonlyPaths");
	dn = imp_get(fs, "deniedPaths");
	/* airlock always has a writable workspace: the first read-write
	 * path is it. Without one, the first read-only path is, protected
	 * as a whole so that it stays read-only. */
	bool rw_first = rw && rw->kind == IMP_LIST && rw->n;
	bool ro_first = !rw_first && ro && ro->kind == IMP_LIST && ro->n;
	if (rw && (r = mxc_paths(b, rw, "filesystem.readwritePaths", &b->write, &ws, rw_first)) < 0)
		goto out;
	if (ro && (r = mxc_paths(b, ro, "filesystem.readonlyPaths", &b->read, &ws, ro_first)) < 0)
		goto out;
	if (dn && (r = mxc_paths(b, dn, "filesystem.deniedPaths", &b->deny, NULL, false)) < 0)
		goto out;
	if (!ws.n) {
		r = imp_fail(b, fs, "filesystem", "grants no path; airlock always gives the agent a workspace, "
			     "so a policy that grants none cannot be expressed");
		goto out;
	}
	b->workspace = ws.v[0].val;
	b->workspace_src = ws.v[0].src;
	ws.v[0].val = ws.v[0].src = NULL;
	if (ro_first && (r = imp_add(b, &b->protect, "**", ro, "filesystem.readonlyPaths[0] (the workspace, "
				     "read-only)")) < 0)
		goto out;
	/* A denied path that is also granted: MXC's deny wins; airlock
	 * refuses the contradiction, so say which field. */
	for (size_t i = 0; dn && i < b->deny.n; i++) {
		const char *d = b->deny.v[i].val;
		const char *other = !strcmp(d, b->workspace) ? b->workspace_src : NULL;
		for (size_t k = 0; !other && k < b->write.n; k++)
			if (!strcmp(d, b->write.v[k].val))
				other = b->write.v[k].src;
		for (size_t k = 0; !other && k < b->read.n; k++)
			if (!strcmp(d, b->read.v[k].val))
				other = b->read.v[k].src;
		if (other) {
			r = imp_fail(b, &dn->v[i], "filesystem.deniedPaths", "\"%s\" is also granted by %s; airlock "
				     "refuses a path both granted and denied (remove one)", d, other);
			goto out;
		}
	}
	if ((v = imp_get(fs, "clearPolicyOnExit")) &&
	    (r = imp_skip(b, v, "filesystem.clearPolicyOnExit", "what MXC keeps after the run; airlock keeps "
			  "nothing")) < 0)
		goto out;
	r = 0;
out:
	for (size_t i = 0; i < ws.n; i++) {
		free(ws.v[i].val);
		free(ws.v[i].src);
	}
	free(ws.v);
	return r;
}

static int mxc_hosts(struct imp_build *b, const struct imp_node *n, const char *field, bool allow)
{
	char f[POLICY_FIELD_MAX];
	int r = imp_want(b, n, field, IMP_LIST);

	for (size_t i = 0; r == 0 && i < n->n; i++) {
		char host[POLICY_HOST_MAX];
		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		if ((r = imp_want(b, &n->v[i], f, IMP_STR)) < 0)
			break;
		if (strchr(n->v[i].str, '/'))
			return imp_fail(b, &n->v[i], f, "\"%s\" is an address range; airlock allows hosts by name "
					"or single address", n->v[i].str);
		if ((r = imp_host(b, &n->v[i], f, host)) < 0)
			break;
		for (size_t k = 0; k < b->endpoints.n; k++) {
			const char *a = b->endpoints.v[k].val;
			if (!allow && (policy_host_covers(a, host) || policy_host_covers(host, a)))
				return imp_fail(b, &n->v[i], f, "\"%s\" overlaps %s; airlock has no exception inside "
						"an allowed host", host, b->endpoints.v[k].src);
		}
		if (!allow)
			continue;
		r = imp_add_host(b, host, &n->v[i], f);
	}
	return r;
}

static int want_enum(struct imp_build *b, const struct imp_node *n, const char *field, const char *const *vals)
{
	int r = imp_want(b, n, field, IMP_STR);
	if (r < 0)
		return r;
	for (size_t i = 0; vals[i]; i++)
		if (!strcmp(n->str, vals[i]))
			return (int)i;
	return imp_fail(b, n, field, "\"%s\" is not a value MXC documents", n->str);
}

static int mxc_network(struct imp_build *b, const struct imp_node *net)
{
	static const char *const known[] = { "allowOutbound", "allowLocalNetwork", "allowedHosts", "blockedHosts",
					     "proxy", "enforcementMode", "defaultPolicy", "egress", "ingress", NULL };
	static const char *const allow_deny[] = { "deny", "allow", NULL };
	const struct imp_node *v, *hosts;
	int r;

	if ((r = imp_want(b, net, "network", IMP_MAP)) < 0 || (r = imp_known_keys(b, net, "network", known)) < 0)
		return r;
	if ((v = imp_get(net, "proxy")))
		return imp_fail(b, v, "network.proxy", "hands filtering to another proxy; airlock's own proxy "
				"decides, so what this allows cannot be known from the file");
	if ((v = imp_get(net, "defaultPolicy"))) {
		static const char *const vals[] = { "block", "allow", NULL };
		if ((r = want_enum(b, v, "network.defaultPolicy", vals)) < 0)
			return r;
		if (r == 1)
			return imp_fail(b, v, "network.defaultPolicy", "\"allow\" lets everything out; airlock "
					"allows hosts by name only");
	}
	if ((v = imp_get(net, "enforcementMode"))) {
		static const char *const vals[] = { "firewall", "proxy", "both", "capabilities", NULL };
		if ((r = want_enum(b, v, "network.enforcementMode", vals)) < 0)
			return r;
		if ((r = imp_skip(b, v, "network.enforcementMode", "how MXC enforces; airlock's proxy enforces "
				  "the same hosts")) < 0)
			return r;
	}
	hosts = imp_get(net, "allowedHosts");
	v = imp_get(net, "allowOutbound");
	if (v) {
		if ((r = imp_want(b, v, "network.allowOutbound", IMP_BOOL)) < 0)
			return r;
		if (v->b && !(hosts && hosts->kind == IMP_LIST && hosts->n))
			return imp_fail(b, v, "network.allowOutbound", "true with no allowedHosts lets everything "
					"out; airlock allows hosts by name only");
	}
	if ((v = imp_get(net, "allowLocalNetwork"))) {
		if ((r = imp_want(b, v, "network.allowLocalNetwork", IMP_BOOL)) < 0)
			return r;
		if (v->b && (r = imp_narrow(b, v, "network.allowLocalNetwork",
					    "nothing outside the sandbox can connect into it")) < 0)
			return r;
	}
	if (hosts) {
		if ((r = mxc_hosts(b, hosts, "network.allowedHosts", true)) < 0)
			return r;
		if (hosts->n) {
			b->network = true;
			if (!(b->network_src = imp_src(b, hosts, "network.allowedHosts")))
				return error_set(b->err, ENOMEM, "out of memory");
			if ((r = imp_narrow(b, hosts, "network.allowedHosts",
					    "MXC allows every port of an allowed host; airlock allows ports 80 and "
					    "443")) < 0)
				return r;
		}
	}
	if ((v = imp_get(net, "blockedHosts")) && (r = mxc_hosts(b, v, "network.blockedHosts", false)) < 0)
		return r;
	if ((v = imp_get(net, "egress"))) {
		static const char *const ek[] = { "default", "allow", "deny", NULL };
		const struct imp_node *d;
		if ((r = imp_want(b, v, "network.egress", IMP_MAP)) < 0 ||
		    (r = imp_known_keys(b, v, "network.egress", ek)) < 0)
			return r;
		if ((d = imp_get(v, "default"))) {
			if ((r = want_enum(b, d, "network.egress.default", allow_deny)) < 0)
				return r;
			if (r == 1)
				return imp_fail(b, d, "network.egress.default", "\"allow\" lets everything out; airlock "
						"allows hosts by name only");
		}
		if ((d = imp_get(v, "allow")))
			return imp_fail(b, d, "network.egress.allow", "address-range rules have no airlock form "
					"(airlock allows hosts by name, through its proxy)");
		if ((d = imp_get(v, "deny")) &&
		    (r = imp_skip(b, d, "network.egress.deny", "everything is denied already (egress default "
				  "deny)")) < 0)
			return r;
	}
	if ((v = imp_get(net, "ingress"))) {
		static const char *const ik[] = { "default", "hostLoopback", NULL };
		const struct imp_node *d;
		if ((r = imp_want(b, v, "network.ingress", IMP_MAP)) < 0 ||
		    (r = imp_known_keys(b, v, "network.ingress", ik)) < 0)
			return r;
		if ((d = imp_get(v, "default"))) {
			if ((r = want_enum(b, d, "network.ingress.default", allow_deny)) < 0)
				return r;
			if (r == 1 && (r = imp_narrow(b, d, "network.ingress.default",
						      "nothing outside the sandbox can connect into it")) < 0)
				return r;
		}
		if ((d = imp_get(v, "hostLoopback"))) {
			if ((r = want_enum(b, d, "network.ingress.hostLoopback", allow_deny)) < 0)
				return r;
			if (r == 1 && (r = imp_narrow(b, d, "network.ingress.hostLoopback",
						      "the sandbox has its own loopback; the host's is not reachable")) < 0)
				return r;
		}
	}
	return 0;
}

static int mxc_timeout(struct imp_build *b, const struct imp_node *v, const char *field)
{
	int r = imp_want(b, v, field, IMP_NUM);
	char *end;
	unsigned long long ms;

	if (r < 0)
		return r;
	ms = strtoull(v->str, &end, 10);
	if (*end || v->str[0] == '-' || ms == 0)
		return imp_fail(b, v, field, "\"%s\" is not a positive whole number of milliseconds", v->str);
	if (b->wall)
		return imp_fail(b, v, field, "a second timeout (the first is %s)", b->wall_src);
	/* airlock's wall limit has whole seconds; rounding up would widen. */
	if (ms % 1000 && (r = imp_narrow(b, v, field, "%llu ms is rounded down to %llu s", ms, ms / 1000)) < 0)
		return r;
	if (ms < 1000)
		return imp_fail(b, v, field, "%llu ms is less than airlock's one-second resolution", ms);
	b->wall = ms / 1000;
	b->wall_src = imp_src(b, v, field);
	return b->wall_src ? 0 : error_set(b->err, ENOMEM, "out of memory");
}

static int mxc_ui(struct imp_build *b, const struct imp_node *ui)
{
	int r;

	if ((r = imp_want(b, ui, "ui", IMP_MAP)) < 0)
		return r;
	/* Two spellings: the container config's {disable, clipboard,
	 * injection} and the sandbox policy's {allowWindows, clipboard,
	 * allowInputInjection}. The sandbox has no display either way. */
	for (size_t i = 0; i < ui->n; i++) {
		const struct imp_node *v = &ui->v[i];
		char f[POLICY_FIELD_MAX] = "ui";
		policy_field_append_key(f, sizeof(f), v->key, strlen(v->key));
		bool denies;
		if (!strcmp(v->key, "disable")) {
			if ((r = imp_want(b, v, f, IMP_BOOL)) < 0)
				return r;
			denies = v->b;
		} else if (!strcmp(v->key, "allowWindows") || !strcmp(v->key, "allowInputInjection") ||
			   !strcmp(v->key, "injection")) {
			if ((r = imp_want(b, v, f, IMP_BOOL)) < 0)
				return r;
			denies = !v->b;
		} else if (!strcmp(v->key, "clipboard")) {
			if ((r = imp_want(b, v, f, IMP_STR)) < 0)
				return r;
			denies = !strcmp(v->str, "none");
		} else {
			return imp_fail(b, v, f, "unknown key (known: disable, allowWindows, clipboard, "
					"allowInputInjection, injection)");
		}
		if (!denies && (r = imp_narrow(b, v, f, "the sandbox has no display, clipboard or input")) < 0)
			return r;
	}
	return 0;
}

static int mxc_process(struct imp_build *b, const struct imp_node *p)
{
	static const char *const known[] = { "commandLine", "cwd", "env", "timeout", NULL };
	const struct imp_node *v;
	int r;

	if ((r = imp_want(b, p, "process", IMP_MAP)) < 0 || (r = imp_known_keys(b, p, "process", known)) < 0)
		return r;
	if ((v = imp_get(p, "commandLine")) &&
	    (r = imp_skip(b, v, "process.commandLine", "the command to run (give it to airlock run)")) < 0)
		return r;
	if ((v = imp_get(p, "cwd")) && (r = imp_skip(b, v, "process.cwd", "where the command starts")) < 0)
		return r;
	if ((v = imp_get(p, "env")) && !(v->kind == IMP_MAP && v->n == 0))
		return imp_fail(b, v, "process.env", "MXC's environment rules are not documented well enough to "
				"import faithfully; write process.env in the airlock policy");
	if ((v = imp_get(p, "timeout")) && (r = mxc_timeout(b, v, "process.timeout")) < 0)
		return r;
	return 0;
}

int imp_mxc(struct imp_build *b, const struct imp_node *root)
{
	static const char *const known[] = { "$schema", "_comment", "version", "containerId", "containment", "fallback",
					     "process", "filesystem", "network", "lifecycle", "lxc", "ui",
					     "timeoutMs", "runtimeConfig", "processContainer", "seatbelt", NULL };
	const struct imp_node *v;
	int r;

	if ((r = imp_known_keys(b, root, "", known)) < 0)
		return r;
	v = imp_get(root, "version");
	if (!v)
		return imp_fail(b, root, "version", "is missing; MXC requires it");
	if ((r = imp_want(b, v, "version", IMP_STR)) < 0)
		return r;
	if (strncmp(v->str, "0.6.", 4) && strncmp(v->str, "0.7.", 4) && strncmp(v->str, "0.8.", 4) &&
	    strncmp(v->str, "0.9.", 4))
		return imp_fail(b, v, "version", "\"%s\" is not a schema version this importer knows (0.6 to 0.9)",
				v->str);
	static const struct {
		const char *key, *why;
	} skip[] = {
		{ "$schema", "the schema file editors check against" },
		{ "_comment", "a comment" },
		{ "containerId", "the container's name" },
		{ "containment", "which MXC backend runs it; airlock's process boundary enforces the imported "
				 "fields" },
		{ "fallback", "which MXC backend to try next" },
		{ "lifecycle", "what MXC keeps after the run; airlock keeps nothing" },
		{ "lxc", "the LXC image to run in" },
		{ "seatbelt", "macOS backend settings" },
	};
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if ((v = imp_get(root, skip[i].key)) && (r = imp_skip(b, v, skip[i].key, skip[i].why)) < 0)
			return r;
	if ((v = imp_get(root, "processContainer")))
		return imp_fail(b, v, "processContainer", "Windows AppContainer capabilities have no airlock form");
	if ((v = imp_get(root, "runtimeConfig")))
		return imp_fail(b, v, "runtimeConfig", "a proxy of your own decides; what it allows cannot be "
				"known from the file");
	/* MXC's backends provide the system files a program needs to run;
	 * airlock's baseline (system directories read-only) is that. */
	if ((r = imp_filesystem(b, root, "filesystem", mxc_filesystem)) < 0)
		return r;
	if ((v = imp_get(root, "network")) && (r = mxc_network(b, v)) < 0)
		return r;
	if ((v = imp_get(root, "process")) && (r = mxc_process(b, v)) < 0)
		return r;
	if ((v = imp_get(root, "timeoutMs")) && (r = mxc_timeout(b, v, "timeoutMs")) < 0)
		return r;
	if ((v = imp_get(root, "ui")) && (r = mxc_ui(b, v)) < 0)
		return r;
	return 0;
}
