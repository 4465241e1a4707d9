/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The built-in policy, and the starting point of every loaded one: a file
 * states only what it changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/internal.h"
#include "util/cleanup.h"

/* Terminal and locale settings only: nothing that names a credential, a
 * socket or a search path (PATH, LD_*, SSH_AUTH_SOCK, *_TOKEN stay out). */
const char *const policy_default_env_pass[] = {
	"TERM",	       "COLORTERM", "LANG",	  "LANGUAGE", "LC_ALL",  "LC_CTYPE",
	"LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC", "LC_TIME",  "TZ",	 "NO_COLOR",
};
const size_t policy_default_env_pass_count = ARRAY_SIZE(policy_default_env_pass);

static const struct policy_loc default_loc = { POLICY_DEFAULT_FILE, 0, 0 };

int policy_init_defaults(struct policy *p, const struct policy_ctx *ctx, struct error *err)
{
	size_t n = policy_default_env_pass_count;

	if (!ctx || !ctx->cwd || ctx->cwd[0] != '/')
		return error_set(err, EINVAL, "policy: the current directory must be an absolute path");

	p->version = POLICY_VERSION;
	p->name = strdup("default");
	p->sandbox.workspace = policy_path_normalize(ctx->cwd);
	if (!p->name || !p->sandbox.workspace)
		return error_set(err, ENOMEM, "policy: out of memory");
	if (strlen(p->sandbox.workspace) >= PATH_MAX)
		return error_set(err, ENAMETOOLONG, "policy: the current directory is too long");
	p->sandbox.workspace_loc = default_loc;
	p->sandbox.boundary = POLICY_BOUNDARY_PROCESS;
	p->sandbox.mode = POLICY_MODE_ENFORCE;
	/* Hand-off files the agent makes are held for a person rather than
	 * refused, so that npm, venv and git work (docs/handoff.md, Hold mode). */
	p->sandbox.workspace_mode = POLICY_WS_HOLD;
	p->sandbox.host_uid = -1;
	p->sandbox.host_gid = -1;
	p->sandbox.limits = (struct policy_limits){
		.memory_bytes = 0,
		.pids = 4096,
		.open_files = 1024,
		.cpu_seconds = 0,
		.wall_seconds = 0,
	};

	/* No network section: no network at all. */
	p->network.mode = POLICY_NET_NONE;
	p->network.max_body = POLICY_DEFAULT_MAX_BODY;
	p->network.allow_compressed = false;
	p->network.loc = default_loc;

	p->filesystem.baseline = true;
	p->audit.enabled = true;
	p->audit.max_size = POLICY_DEFAULT_AUDIT_MAX_SIZE;
	p->filesystem.protect_defaults = true;
	p->filesystem.protect_build = false;
	p->process.exec_set = false;

	p->process.env_pass = calloc(n + 1, sizeof(char *));
	p->process.env_pass_loc = calloc(n, sizeof(struct policy_loc));
	if (!p->process.env_pass || !p->process.env_pass_loc)
		return error_set(err, ENOMEM, "policy: out of memory");
	for (size_t i = 0; i < n; i++) {
		p->process.env_pass[i] = strdup(policy_default_env_pass[i]);
		if (!p->process.env_pass[i])
			return error_set(err, ENOMEM, "policy: out of memory");
		p->process.n_env_pass = i + 1;
		p->process.env_pass_loc[i] = default_loc;
	}

	p->origin.version = default_loc;
	p->origin.name = default_loc;
	p->origin.boundary = default_loc;
	p->origin.mode = default_loc;
	p->origin.workspace_mode = default_loc;
	p->origin.host_uid = default_loc;
	p->origin.host_gid = default_loc;
	p->origin.memory = default_loc;
	p->origin.pids = default_loc;
	p->origin.open_files = default_loc;
	p->origin.cpu = default_loc;
	p->origin.wall = default_loc;
	p->origin.baseline = default_loc;
	p->origin.protect_defaults = default_loc;
	p->origin.protect_build = default_loc;
	p->origin.exec = default_loc;
	p->origin.env_pass = default_loc;
	p->origin.env_set = default_loc;
	p->origin.git_identity = default_loc;
	p->origin.net_mode = default_loc;
	p->origin.upstream_ca = default_loc;
	p->origin.max_body = default_loc;
	p->origin.allow_compressed = default_loc;
	p->origin.net_log = default_loc;
	p->origin.audit_enabled = default_loc;
	p->origin.audit_max_size = default_loc;
	return 0;
}

int policy_default(const struct policy_ctx *ctx, struct policy **out, struct error *err)
{
	_cleanup_policy_ struct policy *p = NULL;
	int r;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return error_set(err, ENOMEM, "policy: out of memory");
	r = policy_init_defaults(p, ctx, err);
	if (r < 0)
		return r;
	p->file = strdup(POLICY_DEFAULT_FILE);
	p->dir = strdup(p->sandbox.workspace);
	if (!p->file || !p->dir)
		return error_set(err, ENOMEM, "policy: out of memory");
	*out = steal_pointer(&p);
	return 0;
}

bool policy_is_default(const struct policy *p)
{
	return p->file && !strcmp(p->file, POLICY_DEFAULT_FILE);
}
