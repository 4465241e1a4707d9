/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An effective airlock policy into srt settings or an MXC sandbox policy.
 * Each airlock setting is either expressed by the target, refused with its
 * airlock field, or (only with accept_wider) converted to something the
 * target grants more widely and described in the warnings.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/import.h"
#include "policy/internal.h"
#include "util/buf.h"

struct ex {
	const char *target;
	bool wider;
	struct buf warn;
	struct error *err;
};

static int widen(struct ex *x, const char *field, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* A setting the target can only grant more widely. */
static int widen(struct ex *x, const char *field, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!x->wider)
		return error_set(x->err, EINVAL, "%s: %s; %s would grant more (pass --accept-wider to export anyway)",
				 field, msg, x->target);
	if (buf_printf(&x->warn, "airlock: export: wider in %s: %s: %s\n", x->target, field, msg) < 0)
		return error_set(x->err, ENOMEM, "out of memory");
	return 0;
}

static bool is_protect_all(const struct policy *p)
{
	for (size_t i = 0; i < p->filesystem.protect.n; i++)
		if (!strcmp(p->filesystem.protect.v[i].path, "**"))
			return true;
	return false;
}

/* Settings neither target has. */
static int common_checks(struct ex *x, const struct policy *p)
{
	int r = 0;

	if (p->sandbox.mode != POLICY_MODE_ENFORCE)
		return error_set(x->err, EINVAL, "sandbox.mode: %s is not expressible in %s (it enforces or nothing)",
				 policy_mode_name(p->sandbox.mode), x->target);
	if (p->n_credentials)
		return error_set(x->err, EINVAL, "credentials: %s has no credential broker", x->target);
	if (p->network.n_resolve)
		return error_set(x->err, EINVAL, "network.resolve: %s has no fixed name resolution", x->target);
	if (p->network.upstream_ca)
		return error_set(x->err, EINVAL, "network.upstream_ca: %s has no setting for trusted authorities",
				 x->target);
	if (p->sandbox.boundary != POLICY_BOUNDARY_PROCESS &&
	    (r = widen(x, "sandbox.boundary", "%s is a stronger boundary than %s's",
		       policy_boundary_name(p->sandbox.boundary), x->target)) < 0)
		return r;
	if (p->sandbox.host_uid != -1 || p->sandbox.host_gid != -1)
		if ((r = widen(x, "sandbox.host_uid", "%s runs as the invoking user", x->target)) < 0)
			return r;
	const struct policy_limits *l = &p->sandbox.limits;
	if ((l->memory_bytes || l->pids || l->open_files || l->cpu_seconds) &&
	    (r = widen(x, "sandbox.limits", "%s has no memory, process, open-file or CPU limits", x->target)) < 0)
		return r;
	if (p->process.exec_set &&
	    (r = widen(x, "process.exec", "%s cannot restrict which programs run", x->target)) < 0)
		return r;
	if ((r = widen(x, "process.env", "%s passes the caller's whole environment", x->target)) < 0)
		return r;
	if (p->filesystem.protect_build &&
	    (r = widen(x, "filesystem.protect_build", "%s has no build entry-point protection", x->target)) < 0)
		return r;
	if (p->audit.enabled && (r = widen(x, "audit", "%s writes no signed decision log", x->target)) < 0)
		return r;
	if (p->identity.header &&
	    (r = widen(x, "identity.header", "%s adds no signed identity header", x->target)) < 0)
		return r;
	return 0;
}

static int json_str(struct buf *o, const char *s)
{
	return buf_json_string(o, s, strlen(s));
}

static int json_paths(struct buf *o, const char *key, const char *const *v, size_t n, bool comma)
{
	int r = buf_printf(o, "%s\n    \"%s\": [", comma ? "," : "", key);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if ((r = buf_puts(o, i ? ", " : "")) < 0)
			break;
		r = json_str(o, v[i]);
	}
	if (r >= 0)
		r = buf_puts(o, "]");
	return r;
}

static const char **paths_of(const struct policy_paths *pp, size_t extra)
{
	const char **v = calloc(pp->n + extra + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < pp->n; i++)
		v[i] = pp->v[i].path;
	return v;
}

static int export_srt(struct ex *x, const struct policy *p, const char *cwd, struct buf *o)
{
	int r;
	bool ws_ro = is_protect_all(p);

	if ((r = widen(x, "filesystem.read", "srt lets the program read every path not in denyRead (the home "
		       "directory included)")) < 0)
		return r;
	if (!p->filesystem.baseline &&
	    (r = widen(x, "filesystem.baseline", "srt always lets the system directories be read")) < 0)
		return r;
	if (p->filesystem.protect_defaults &&
	    (r = widen(x, "filesystem.protect_defaults", "srt's own list of protected files is not airlock's "
		       "and stops at a depth")) < 0)
		return r;

	/* Writes: the workspace ("." when it is the directory srt runs in),
	 * then the write paths. */
	const char **w = paths_of(&p->filesystem.write, 1);
	const char **dw = calloc(p->filesystem.protect.n + 1, sizeof(*dw));
	char **owned = calloc(p->filesystem.protect.n + 1, sizeof(*owned));
	size_t nw = 0, ndw = 0;
	if (!w || !dw || !owned) {
		r = error_set(x->err, ENOMEM, "out of memory");
		goto out;
	}
	if (!ws_ro)
		w[nw++] = !strcmp(p->sandbox.workspace, cwd) ? "." : p->sandbox.workspace;
	for (size_t i = 0; i < p->filesystem.write.n; i++)
		w[nw++] = p->filesystem.write.v[i].path;
	/* A protected glob "DIR/" then "**", with no other wildcard, is srt's
	 * denyWrite of DIR, relative to the current directory. */
	for (size_t i = 0; i < p->filesystem.protect.n; i++) {
		const char *g = p->filesystem.protect.v[i].path;
		size_t gl = strlen(g);
		if (!strcmp(g, "**"))
			continue;
		if (gl > 3 && !strcmp(g + gl - 3, "/**") && !memchr(g, '*', gl - 3) &&
		    !strcmp(p->sandbox.workspace, cwd)) {
			if (asprintf(&owned[ndw], "./%.*s", (int)(gl - 3), g) < 0) {
				r = error_set(x->err, ENOMEM, "out of memory");
				goto out;
			}
			dw[ndw] = owned[ndw];
			ndw++;
			continue;
		}
		r = error_set(x->err, EINVAL, "filesystem.protect[%zu]: \"%s\" is not expressible in srt (only "
			      "\"DIR/**\" in the workspace srt runs in, as denyWrite)", i, g);
		goto out;
	}
	const char **dr = paths_of(&p->filesystem.deny, 0);
	if (!dr) {
		r = error_set(x->err, ENOMEM, "out of memory");
		goto out;
	}

	/* Network: srt filters by name only, on every port. */
	const char **hosts = calloc(p->network.n_endpoints + 1, sizeof(*hosts));
	if (!hosts) {
		free(dr);
		r = error_set(x->err, ENOMEM, "out of memory");
		goto out;
	}
	r = 0;
	if (p->network.mode == POLICY_NET_TRANSPARENT)
		r = widen(x, "network.mode", "srt has no transparent mode (its DNS filtering has no srt form)");
	if (r == 0 && p->network.n_allow_private)
		r = error_set(x->err, EINVAL, "network.allow_private: srt has no address ranges");
	if (r == 0 && p->network.mode != POLICY_NET_NONE)
		r = widen(x, "network.leak_scan", "srt does not scan request bodies for leaked secrets");
	for (size_t i = 0; r == 0 && i < p->network.n_endpoints; i++) {
		const struct policy_endpoint *e = &p->network.endpoints[i];
		char f[64];
		snprintf(f, sizeof(f), "network.endpoints[%zu]", i);
		if (e->n_rules || e->intercept)
			r = error_set(x->err, EINVAL, "%s.rules: srt cannot filter requests inside a connection", f);
		if (r == 0)
			r = widen(x, f, "%s: srt allows every port of the host, not only the endpoint's ports",
				  e->host);
		hosts[i] = e->host;
	}
	if (r == 0) {
		r = buf_puts(o, "{\n  \"network\": {");
		if (r >= 0)
			r = json_paths(o, "allowedDomains", hosts, p->network.n_endpoints, false);
		if (r >= 0)
			r = buf_puts(o, ",\n    \"deniedDomains\": []\n  },\n  \"filesystem\": {");
		if (r >= 0)
			r = json_paths(o, "denyRead", dr, p->filesystem.deny.n, false);
		if (r >= 0)
			r = json_paths(o, "allowWrite", w, nw, true);
		if (r >= 0)
			r = json_paths(o, "denyWrite", dw, ndw, true);
		if (r >= 0)
			r = buf_puts(o, "\n  }\n}\n");
		if (r < 0)
			r = error_set(x->err, ENOMEM, "out of memory");
	}
	free(hosts);
	free(dr);
out:
	for (size_t i = 0; owned && i < ndw; i++)
		free(owned[i]);
	free(owned);
	free(w);
	free(dw);
	return r;
}

static int export_mxc(struct ex *x, const struct policy *p, struct buf *o)
{
	int r;
	bool ws_ro = is_protect_all(p);

	/* MXC's backends provide the system files a program needs; that is
	 * what airlock's baseline is. Without it airlock grants less. */
	if (!p->filesystem.baseline &&
	    (r = widen(x, "filesystem.baseline", "MXC's backends provide the system files a program needs")) < 0)
		return r;
	if (p->filesystem.protect_defaults &&
	    (r = widen(x, "filesystem.protect_defaults", "MXC has no protected paths inside writable ones")) < 0)
		return r;
	for (size_t i = 0; i < p->filesystem.protect.n; i++)
		if (strcmp(p->filesystem.protect.v[i].path, "**"))
			return error_set(x->err, EINVAL, "filesystem.protect[%zu]: MXC has no read-only path inside "
					 "a writable one", i);
	if (p->network.mode != POLICY_NET_NONE)
		return error_set(x->err, EINVAL, "network: MXC's host filtering depends on its backend and has no "
				 "ports, so airlock endpoints are not exported");

	const char **rw = paths_of(&p->filesystem.write, 1), **ro = paths_of(&p->filesystem.read, 1);
	const char **dn = paths_of(&p->filesystem.deny, 0);
	size_t nrw = 0, nro = 0;
	r = -ENOMEM;
	if (!rw || !ro || !dn)
		goto out;
	/* The workspace first, so that an import makes it the workspace
	 * again. */
	if (ws_ro)
		ro[nro++] = p->sandbox.workspace;
	else
		rw[nrw++] = p->sandbox.workspace;
	for (size_t i = 0; i < p->filesystem.write.n; i++)
		rw[nrw++] = p->filesystem.write.v[i].path;
	for (size_t i = 0; i < p->filesystem.read.n; i++)
		ro[nro++] = p->filesystem.read.v[i].path;
	if ((r = buf_puts(o, "{\n  \"version\": \"0.8.0-alpha\",\n  \"filesystem\": {")) < 0 ||
	    (r = json_paths(o, "readwritePaths", rw, nrw, false)) < 0 ||
	    (r = json_paths(o, "readonlyPaths", ro, nro, true)) < 0 ||
	    (r = json_paths(o, "deniedPaths", dn, p->filesystem.deny.n, true)) < 0 ||
	    (r = buf_puts(o, "\n  },\n  \"network\": {\n    \"egress\": {\"default\": \"deny\"},\n"
			  "    \"ingress\": {\"default\": \"deny\", \"hostLoopback\": \"deny\"}\n  }")) < 0)
		goto out;
	if (p->sandbox.limits.wall_seconds &&
	    (r = buf_printf(o, ",\n  \"timeoutMs\": %llu", (unsigned long long)p->sandbox.limits.wall_seconds * 1000)) < 0)
		goto out;
	r = buf_puts(o, "\n}\n");
out:
	free(rw);
	free(ro);
	free(dn);
	if (r == -ENOMEM)
		return error_set(x->err, ENOMEM, "out of memory");
	return r;
}

int imp_export(enum imp_format f, const struct policy *p, const char *cwd, bool accept_wider, char **json,
	       char **warnings, struct error *err)
{
	struct ex x = { .wider = accept_wider, .err = err };
	struct buf o = { 0 };
	int r;

	*json = NULL;
	*warnings = NULL;
	if (f == IMP_FORMAT_SRT)
		x.target = "srt";
	else if (f == IMP_FORMAT_MXC)
		x.target = "MXC";
	else
		return error_set(err, EINVAL, "cannot export to %s", imp_format_name(f));
	r = common_checks(&x, p);
	if (r == 0 && (p->sandbox.limits.wall_seconds && f == IMP_FORMAT_SRT))
		r = widen(&x, "sandbox.limits.wall", "srt has no time limit");
	if (r == 0)
		r = f == IMP_FORMAT_SRT ? export_srt(&x, p, cwd, &o) : export_mxc(&x, p, &o);
	if (r < 0) {
		buf_free(&o);
		buf_free(&x.warn);
		return r;
	}
	if (buf_puts(&x.warn, "") < 0) {
		buf_free(&o);
		buf_free(&x.warn);
		return error_set(err, ENOMEM, "out of memory");
	}
	*json = o.data;
	*warnings = x.warn.data;
	return 0;
}
