/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OpenAI Codex config.toml into an airlock policy: the sandbox settings
 * documented in the project's docs/config.md, `sandbox_mode` and
 * `[sandbox_workspace_write]` (writable_roots, network_access,
 * exclude_tmpdir_env_var, exclude_slash_tmp), and `approval_policy`.
 * The newer permission profiles (`default_permissions`, `[permissions]`,
 * in beta) are refused by name rather than guessed at.
 *
 * A config.toml holds much besides the sandbox (models, MCP servers, the
 * interface); those keys are listed in the output as not imported, and a
 * key this file does not know is an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/import/build.h"
#include "policy/internal.h"

/* Keys of a config.toml that say nothing about what commands may do. */
static const struct {
	const char *key, *why;
} not_policy[] = {
	{ "model", "the model" },
	{ "model_provider", "the model provider" },
	{ "model_providers", "model provider definitions" },
	{ "model_reasoning_effort", "a model setting" },
	{ "model_reasoning_summary", "a model setting" },
	{ "model_verbosity", "a model setting" },
	{ "model_context_window", "a model setting" },
	{ "model_max_output_tokens", "a model setting" },
	{ "model_supports_reasoning_summaries", "a model setting" },
	{ "model_instructions_file", "instructions for the model" },
	{ "instructions", "instructions for the model" },
	{ "developer_instructions", "instructions for the model" },
	{ "project_doc_max_bytes", "how much of AGENTS.md the model reads" },
	{ "profile", "which config profile is active (profiles setting the sandbox are refused)" },
	{ "projects", "trust levels of project directories for Codex's own prompts" },
	{ "mcp_servers", "MCP servers Codex starts itself, outside its sandbox" },
	{ "notify", "a program Codex runs on events" },
	{ "history", "Codex's history file" },
	{ "tui", "the terminal interface" },
	{ "file_opener", "the editor links open in" },
	{ "hide_agent_reasoning", "the interface" },
	{ "show_raw_agent_reasoning", "the interface" },
	{ "disable_response_storage", "the model provider's storage" },
	{ "preferred_auth_method", "sign-in" },
	{ "forced_login_method", "sign-in" },
	{ "chatgpt_base_url", "the service address" },
	{ "openai_base_url", "the service address" },
	{ "check_for_update_on_startup", "updates" },
	{ "analytics", "telemetry" },
	{ "feedback", "telemetry" },
	{ "otel", "telemetry" },
	{ "windows", "Windows sandbox settings" },
	{ "features", "Codex feature flags" },
	{ "tools", "Codex's built-in tools" },
};

static const char *const known_top[] = { "sandbox_mode", "sandbox_workspace_write", "approval_policy",
					 "shell_environment_policy", "default_permissions", "permissions",
					 "profiles", NULL };

static bool is_known(const char *key)
{
	for (size_t i = 0; known_top[i]; i++)
		if (!strcmp(known_top[i], key))
			return true;
	for (size_t i = 0; i < sizeof(not_policy) / sizeof(not_policy[0]); i++)
		if (!strcmp(not_policy[i].key, key))
			return true;
	return false;
}

/* The read-only names Codex keeps inside every writable root. */
static const char *const codex_protected[] = { ".git", ".codex", ".agents", NULL };

static int workspace_write(struct imp_build *b, const struct imp_node *root)
{
	static const char *const known[] = { "writable_roots", "network_access", "exclude_tmpdir_env_var",
					     "exclude_slash_tmp", NULL };
	const struct imp_node *sw = imp_get(root, "sandbox_workspace_write"), *v;
	char f[POLICY_FIELD_MAX];
	bool slash_tmp = true, tmpdir = true;
	int r;

	if (sw && ((r = imp_want(b, sw, "sandbox_workspace_write", IMP_MAP)) < 0 ||
		   (r = imp_known_keys(b, sw, "sandbox_workspace_write", known)) < 0))
		return r;
	/* The current directory is writable: airlock's workspace, with the
	 * names Codex keeps read-only in it protected. */
	for (size_t i = 0; codex_protected[i]; i++) {
		char g[32];
		snprintf(g, sizeof(g), "%s/**", codex_protected[i]);
		if ((r = imp_add(b, &b->protect, g, imp_get(root, "sandbox_mode"),
				 "sandbox_mode (workspace-write keeps .git, .codex and .agents read-only)")) < 0)
			return r;
	}
	if ((v = sw ? imp_get(sw, "writable_roots") : NULL)) {
		if ((r = imp_want(b, v, "sandbox_workspace_write.writable_roots", IMP_LIST)) < 0)
			return r;
		for (size_t i = 0; i < v->n; i++) {
			const struct imp_node *e = &v->v[i];
			snprintf(f, sizeof(f), "sandbox_workspace_write.writable_roots[%zu]", i);
			if ((r = imp_want(b, e, f, IMP_STR)) < 0)
				return r;
			if (e->str[0] != '/' && !(e->str[0] == '~' && (e->str[1] == '/' || !e->str[1])))
				return imp_fail(b, e, f, "\"%s\" is not an absolute path", e->str);
			if (strpbrk(e->str, "*?["))
				return imp_fail(b, e, f, "\"%s\" is a glob; airlock paths are literal", e->str);
			if ((r = imp_add(b, &b->write, e->str, e, f)) < 0)
				return r;
			/* Inside another writable root airlock has no read-only
			 * path; hiding those names is the narrower choice. */
			for (size_t k = 0; codex_protected[k]; k++) {
				char *d = NULL;
				if (asprintf(&d, "%s/%s", e->str, codex_protected[k]) < 0)
					return error_set(b->err, ENOMEM, "out of memory");
				r = imp_add(b, &b->deny, d, e, f);
				free(d);
				if (r < 0)
					return r;
			}
			if ((r = imp_narrow(b, e, f, "Codex keeps .git, .codex and .agents inside it read-only; "
					    "airlock hides them")) < 0)
				return r;
		}
	}
	if ((v = sw ? imp_get(sw, "exclude_slash_tmp") : NULL)) {
		if ((r = imp_want(b, v, "sandbox_workspace_write.exclude_slash_tmp", IMP_BOOL)) < 0)
			return r;
		slash_tmp = !v->b;
	}
	if ((v = sw ? imp_get(sw, "exclude_tmpdir_env_var") : NULL)) {
		if ((r = imp_want(b, v, "sandbox_workspace_write.exclude_tmpdir_env_var", IMP_BOOL)) < 0)
			return r;
		tmpdir = !v->b;
	}
	/* Codex makes the host's /tmp writable; airlock gives the agent a
	 * private /tmp, and names the host's only when it is a write path. */
	for (size_t i = 0; slash_tmp && i < b->write.n; i++)
		if (!strcmp(b->write.v[i].val, "/tmp"))
			slash_tmp = false; /* listed in writable_roots already */
	if (slash_tmp && (r = imp_add(b, &b->write, "/tmp", sw ? sw : root,
				      "sandbox_workspace_write.exclude_slash_tmp (false: /tmp is writable)")) < 0)
		return r;
	if (tmpdir && (r = imp_narrow(b, sw ? sw : root, "sandbox_workspace_write.exclude_tmpdir_env_var",
				      "Codex makes $TMPDIR writable, wherever it points when Codex runs; airlock "
				      "does not follow the variable")) < 0)
		return r;
	if ((v = sw ? imp_get(sw, "network_access") : NULL)) {
		if ((r = imp_want(b, v, "sandbox_workspace_write.network_access", IMP_BOOL)) < 0)
			return r;
		if (v->b && (r = imp_narrow(b, v, "sandbox_workspace_write.network_access",
					    "Codex lets commands reach any host; airlock allows hosts by name only, so "
					    "the imported policy has no network")) < 0)
			return r;
	}
	return 0;
}

int imp_codex(struct imp_build *b, const struct imp_node *root)
{
	const struct imp_node *v, *mode;
	int r;

	for (size_t i = 0; i < root->n; i++) {
		if (is_known(root->v[i].key))
			continue;
		char f[POLICY_FIELD_MAX] = "";
		policy_field_append_key(f, sizeof(f), root->v[i].key, strlen(root->v[i].key));
		return imp_fail(b, &root->v[i], f, "unknown key; not a Codex setting this importer knows (a "
				"sandbox setting it does not know could grant anything)");
	}
	if ((v = imp_get(root, "default_permissions")) || (v = imp_get(root, "permissions")))
		return imp_fail(b, v, v->key, "Codex permission profiles (beta) are not imported; only "
				"sandbox_mode and [sandbox_workspace_write] are");
	if ((v = imp_get(root, "profiles"))) {
		if ((r = imp_want(b, v, "profiles", IMP_MAP)) < 0)
			return r;
		for (size_t i = 0; i < v->n; i++)
			if (imp_get(&v->v[i], "sandbox_mode") || imp_get(&v->v[i], "sandbox_workspace_write") ||
			    imp_get(&v->v[i], "approval_policy")) {
				char f[POLICY_FIELD_MAX] = "profiles";
				policy_field_append_key(f, sizeof(f), v->v[i].key, strlen(v->v[i].key));
				return imp_fail(b, &v->v[i], f, "a profile with its own sandbox settings: which "
						"applies depends on --profile at run time");
			}
	}
	for (size_t i = 0; i < sizeof(not_policy) / sizeof(not_policy[0]); i++)
		if ((v = imp_get(root, not_policy[i].key)) &&
		    (r = imp_skip(b, v, not_policy[i].key, not_policy[i].why)) < 0)
			return r;
	if ((v = imp_get(root, "profiles")) && (r = imp_skip(b, v, "profiles", "model settings only")) < 0)
		return r;

	mode = imp_get(root, "sandbox_mode");
	const char *m = "read-only"; /* Codex's default */
	if (mode) {
		if ((r = imp_want(b, mode, "sandbox_mode", IMP_STR)) < 0)
			return r;
		m = mode->str;
	}
	/* Codex lets every command read every file. */
	if ((r = imp_narrow(b, mode ? mode : root, "sandbox_mode",
			    "Codex lets commands read any file on disk; airlock reads only the system baseline, "
			    "the workspace and filesystem.read, and hides the home directory")) < 0)
		return r;
	if (!strcmp(m, "read-only")) {
		if ((v = imp_get(root, "sandbox_workspace_write")) &&
		    (r = imp_skip(b, v, "sandbox_workspace_write", "applies only to sandbox_mode workspace-write")) < 0)
			return r;
		/* Nothing is writable: the workspace is protected as a whole. */
		if ((r = imp_add(b, &b->protect, "**", mode ? mode : root, "sandbox_mode (read-only)")) < 0)
			return r;
	} else if (!strcmp(m, "workspace-write")) {
		if ((r = workspace_write(b, root)) < 0)
			return r;
	} else if (!strcmp(m, "danger-full-access")) {
		return imp_fail(b, mode, "sandbox_mode", "danger-full-access is no sandbox at all");
	} else {
		return imp_fail(b, mode, "sandbox_mode", "\"%s\" is not one of read-only, workspace-write, "
				"danger-full-access", m);
	}
	if ((v = imp_get(root, "approval_policy"))) {
		if ((r = imp_want(b, v, "approval_policy", IMP_STR)) < 0)
			return r;
		if (strcmp(v->str, "never") && strcmp(v->str, "untrusted") && strcmp(v->str, "on-failure") &&
		    strcmp(v->str, "on-request"))
			return imp_fail(b, v, "approval_policy", "\"%s\" is not one of untrusted, on-failure, "
					"on-request, never", v->str);
		/* Approvals let a command run outside Codex's sandbox; airlock
		 * has no such way out. */
		if (strcmp(v->str, "never") &&
		    (r = imp_narrow(b, v, "approval_policy", "Codex may run an approved command outside its "
				    "sandbox; under airlock nothing leaves the policy")) < 0)
			return r;
	}
	if ((v = imp_get(root, "shell_environment_policy")) &&
	    (r = imp_narrow(b, v, "shell_environment_policy", "airlock passes only process.env.pass (a short "
			    "list of terminal and locale variables); review it")) < 0)
		return r;
	return 0;
}
