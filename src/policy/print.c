/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The effective policy as YAML in the version 1 schema: reading the output
 * back gives the same policy. Strings are always double-quoted with
 * escapes, so no path or value can be read back as another type or break
 * out of its line.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/internal.h"
#include "policy/mcp.h"
#include "util/cleanup.h"
#include "util/utf8.h"

const char *policy_mode_name(enum policy_mode m)
{
	switch (m) {
	case POLICY_MODE_ENFORCE:
		return "enforce";
	case POLICY_MODE_LEARN:
		return "learn";
	case POLICY_MODE_OBSERVE:
		return "observe";
	}
	return "unknown";
}

int policy_workspace_mode_rank(enum policy_workspace_mode m)
{
	switch (m) {
	case POLICY_WS_HOLD:
		return 0;
	case POLICY_WS_DIRECT:
		return 1;
	case POLICY_WS_REVIEW:
		return 2;
	}
	return 2;
}

const char *policy_workspace_mode_name(enum policy_workspace_mode m)
{
	switch (m) {
	case POLICY_WS_DIRECT:
		return "direct";
	case POLICY_WS_REVIEW:
		return "review";
	case POLICY_WS_HOLD:
		return "hold";
	}
	return "unknown";
}

const char *policy_boundary_name(enum policy_boundary b)
{
	switch (b) {
	case POLICY_BOUNDARY_PROCESS:
		return "process";
	case POLICY_BOUNDARY_GVISOR:
		return "gvisor";
	case POLICY_BOUNDARY_MICROVM:
		return "microvm";
	}
	return "unknown";
}

static void paths_free(struct policy_paths *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->v[i].path);
	free(ps->v);
}

void policy_rule_clear(struct policy_net_rule *r)
{
	free(r->id);
	if (r->methods)
		for (size_t k = 0; k < r->n_methods; k++)
			free(r->methods[k]);
	free(r->methods);
	free(r->path);
	free(r->query);
	memset(r, 0, sizeof(*r));
}

void policy_endpoint_clear(struct policy_endpoint *ep)
{
	for (size_t j = 0; j < ep->n_rules; j++)
		policy_rule_clear(&ep->rules[j]);
	free(ep->rules);
	free(ep->id);
	free(ep->host);
	free(ep->mcp_server);
	free(ep->ports);
	memset(ep, 0, sizeof(*ep));
}

static void net_free(struct policy_network *net)
{
	for (size_t i = 0; i < net->n_endpoints; i++)
		policy_endpoint_clear(&net->endpoints[i]);
	free(net->endpoints);
	free(net->allow_private);
	for (size_t i = 0; i < net->n_resolve; i++) {
		free(net->resolve[i].host);
		free(net->resolve[i].addr);
	}
	free(net->resolve);
	free(net->upstream_ca);
	free(net->log);
}

static void strv_free(char **v, size_t n)
{
	if (v)
		for (size_t i = 0; i < n; i++)
			free(v[i]);
	free(v);
}

void policy_binding_clear(struct policy_cred_binding *b)
{
	free(b->id);
	free(b->host);
	free(b->header);
	free(b->tmpl);
	free(b->username);
	free(b->query);
	strv_free(b->methods, b->n_methods);
	strv_free(b->paths, b->n_paths);
	if (b->git) {
		strv_free(b->git->repos, b->git->n_repos);
		strv_free(b->git->push, b->git->n_push);
		free(b->git);
	}
	memset(b, 0, sizeof(*b));
}

static void cred_free(struct policy_credential *c)
{
	free(c->name);
	free(c->source_arg);
	strv_free(c->command, c->n_command);
	free(c->env);
	for (size_t i = 0; i < c->n_bindings; i++)
		policy_binding_clear(&c->bindings[i]);
	free(c->bindings);
}

void policy_credential_clear(struct policy_credential *c)
{
	cred_free(c);
	memset(c, 0, sizeof(*c));
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	free(p->file);
	free(p->dir);
	free(p->name);
	free(p->identity.agent);
	free(p->audit.dir);
	free(p->sandbox.workspace);
	paths_free(&p->filesystem.read);
	paths_free(&p->filesystem.write);
	paths_free(&p->filesystem.deny);
	paths_free(&p->filesystem.protect);
	paths_free(&p->filesystem.sockets);
	paths_free(&p->process.exec);
	if (p->process.env_pass)
		for (size_t i = 0; i < p->process.n_env_pass; i++)
			free(p->process.env_pass[i]);
	free(p->process.env_pass);
	free(p->process.env_pass_loc);
	for (size_t i = 0; i < p->process.n_env_set; i++) {
		free(p->process.env_set[i].name);
		free(p->process.env_set[i].value);
	}
	free(p->process.env_set);
	net_free(&p->network);
	for (size_t i = 0; i < p->n_credentials; i++)
		cred_free(&p->credentials[i]);
	free(p->credentials);
	for (size_t i = 0; i < p->n_layer_files; i++)
		free(p->layer_files[i]);
	free(p->layer_files);
	policy_mcp_free(p->mcp);
	free(p);
}

/* Code points that YAML cannot carry raw in a double-quoted scalar: C0
 * and C1 controls, DEL, the BOM and non-characters, and NEL/LS/PS, which a
 * reader folds as line breaks. */
static bool needs_escape(uint32_t c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029 ||
	       c == 0xfeff || c == 0xfffe || c == 0xffff;
}

static void print_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		uint32_t c = 0;
		size_t n = utf8_decode(s, 4, &c);

		if (n == 0) {
			/* Not UTF-8 (only possible in a directory name taken
			 * from the environment): YAML cannot say this byte, so
			 * the closest escape is written. */
			fprintf(f, "\\x%02x", *s);
			s++;
			continue;
		}
		if (c == '"')
			fputs("\\\"", f);
		else if (c == '\\')
			fputs("\\\\", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c <= 0xff && needs_escape(c))
			fprintf(f, "\\x%02" PRIx32, c);
		else if (needs_escape(c))
			fprintf(f, "\\u%04" PRIx32, c);
		else
			fwrite(s, 1, n, f);
		s += n;
	}
	fputc('"', f);
}

/* A comment must stay on its line: anything a YAML reader could take for
 * a line break or that a terminal would act on becomes '?'. */
static void print_comment_text(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		uint32_t c = 0;
		size_t n = utf8_decode(s, 4, &c);

		if (n == 0 || needs_escape(c)) {
			fputc('?', f);
			s += n ? n : 1;
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
}

/* An environment variable name: plain when it is a valid name that YAML
 * would not read as null, quoted otherwise. */
static void print_name(FILE *f, const char *name)
{
	bool plain = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9') &&
		     strcmp(name, "null") != 0 && strcmp(name, "Null") != 0 &&
		     strcmp(name, "NULL") != 0;

	for (const char *c = name; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || *c == '_';
	if (plain)
		fputs(name, f);
	else
		print_str(f, name);
}

void policy_print_string(FILE *f, const char *s)
{
	print_str(f, s);
}

void policy_print_comment(FILE *f, const char *s)
{
	print_comment_text(f, s);
}

static void end_line(FILE *f, const struct policy_loc *loc)
{
	if (loc->note) {
		fputs("  # ", f);
		print_comment_text(f, loc->note);
	} else if (loc->line > 0 && loc->file) {
		fputs("  # ", f);
		if (loc->layer) {
			fputs(loc->layer, f);
			fputc(' ', f);
		}
		print_comment_text(f, loc->file);
		fprintf(f, ":%u", loc->line);
	}
	fputc('\n', f);
}

static void print_paths(FILE *f, const char *indent, const char *key, const struct policy_paths *ps)
{
	if (ps->n == 0) {
		fprintf(f, "%s%s: []\n", indent, key);
		return;
	}
	fprintf(f, "%s%s:\n", indent, key);
	for (size_t i = 0; i < ps->n; i++) {
		fprintf(f, "%s  - ", indent);
		print_str(f, ps->v[i].path);
		end_line(f, &ps->v[i].loc);
	}
}

static void print_id(FILE *f, const char *key, int64_t id, const struct policy_loc *loc)
{
	if (id < 0)
		fprintf(f, "  %s: auto", key);
	else
		fprintf(f, "  %s: %" PRId64, key, id);
	end_line(f, loc);
}

static void print_count(FILE *f, const char *key, uint64_t v, const struct policy_loc *loc)
{
	if (v == 0)
		fprintf(f, "    %s: unlimited", key);
	else
		fprintf(f, "    %s: %" PRIu64, key, v);
	end_line(f, loc);
}

static void print_size(FILE *f, const char *key, uint64_t v, const struct policy_loc *loc)
{
	char buf[32] = "unlimited";

	if (v)
		policy_format_size(v, buf, sizeof(buf));
	fprintf(f, "    %s: %s", key, buf);
	end_line(f, loc);
}

static void print_duration(FILE *f, const char *key, uint64_t v, const struct policy_loc *loc)
{
	char buf[32] = "unlimited";

	if (v)
		policy_format_duration(v, buf, sizeof(buf));
	fprintf(f, "    %s: %s", key, buf);
	end_line(f, loc);
}

/* ---- network ---- */

static bool str_eq(const char *a, const char *b);

static const char *const read_only_methods[] = { "GET", "HEAD", "OPTIONS" };

/* The rule `access: read-only` stands for (the parser names it like its
 * endpoint, which no rule of the file may be). */
static bool is_read_only(const struct policy_endpoint *ep)
{
	const struct policy_net_rule *r = ep->rules;

	if (ep->n_rules != 1 || !str_eq(r->id, ep->id) || r->path || r->query || r->websocket ||
	    r->n_methods != ARRAY_SIZE(read_only_methods))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(read_only_methods); i++)
		if (!str_eq(r->methods[i], read_only_methods[i]))
			return false;
	return true;
}

/* Ids the parser gives when the file gives none are not printed, so the
 * output reads back to the same ones. */
static bool is_default_id(const char *id, size_t ep, size_t rule)
{
	char buf[POLICY_FIELD_MAX];

	if (rule == SIZE_MAX)
		snprintf(buf, sizeof(buf), "network.endpoints[%zu]", ep);
	else
		snprintf(buf, sizeof(buf), "network.endpoints[%zu].rules[%zu]", ep, rule);
	return str_eq(id, buf);
}

static void print_rule(FILE *f, const struct policy_net_rule *r, size_t ep, size_t idx)
{
	const char *lead = "        - ";
	bool first = true;

#define RULE_LINE_END()                          \
	do {                                     \
		if (first)                       \
			end_line(f, &r->loc);    \
		else                             \
			fputc('\n', f);          \
		first = false;                   \
		lead = "          ";             \
	} while (0)

	if (!is_default_id(r->id, ep, idx)) {
		fprintf(f, "%sid: ", lead);
		print_str(f, r->id ? r->id : "");
		RULE_LINE_END();
	}
	if (r->n_methods > 0) {
		fprintf(f, "%smethods: [", lead);
		for (size_t i = 0; i < r->n_methods; i++) {
			if (i)
				fputs(", ", f);
			print_str(f, r->methods[i]);
		}
		fputc(']', f);
		RULE_LINE_END();
	}
	if (r->path) {
		fprintf(f, "%spath: ", lead);
		print_str(f, r->path);
		RULE_LINE_END();
	}
	if (r->query) {
		fprintf(f, "%squery: ", lead);
		print_str(f, r->query);
		RULE_LINE_END();
	}
	fprintf(f, "%swebsocket: %s", lead, r->websocket ? "true" : "false");
	RULE_LINE_END();
#undef RULE_LINE_END
}

static void print_endpoint(FILE *f, const struct policy_endpoint *ep, size_t idx)
{
	fputs("    - host: ", f);
	print_str(f, ep->host ? ep->host : "");
	end_line(f, &ep->loc);
	if (!is_default_id(ep->id, idx, SIZE_MAX)) {
		fputs("      id: ", f);
		print_str(f, ep->id ? ep->id : "");
		fputc('\n', f);
	}
	fputs("      ports: [", f);
	for (size_t i = 0; i < ep->n_ports; i++)
		fprintf(f, "%s%u", i ? ", " : "", ep->ports[i]);
	fputs("]\n", f);
	fprintf(f, "      tls: %s\n", ep->intercept ? "intercept" : "passthrough");
	if (ep->mcp_server) {
		fputs("      protocol: mcp\n      mcp_server: ", f);
		print_str(f, ep->mcp_server);
		fputc('\n', f);
	}
	if (ep->n_rules == 0)
		return;
	if (is_read_only(ep)) {
		fputs("      access: read-only", f);
		end_line(f, &ep->rules[0].loc);
		return;
	}
	fputs("      rules:\n", f);
	for (size_t i = 0; i < ep->n_rules; i++)
		print_rule(f, &ep->rules[i], idx, i);
}

static void print_network(FILE *f, const struct policy *p)
{
	const struct policy_network *net = &p->network;
	char buf[80];

	if (net->mode == POLICY_NET_NONE) {
		fputs("# No network section: the agent has no network access.\n", f);
		return;
	}
	fputs("network:", f);
	end_line(f, &net->loc);
	fprintf(f, "  mode: %s", net->mode == POLICY_NET_TRANSPARENT ? "transparent" : "proxy");
	end_line(f, &p->origin.net_mode);
	fputs("  default: deny\n", f);
	if (net->n_endpoints == 0) {
		fputs("  endpoints: []\n", f);
	} else {
		fputs("  endpoints:\n", f);
		for (size_t i = 0; i < net->n_endpoints; i++)
			print_endpoint(f, &net->endpoints[i], i);
	}
	if (net->n_allow_private == 0) {
		fputs("  allow_private: []\n", f);
	} else {
		fputs("  allow_private:\n", f);
		for (size_t i = 0; i < net->n_allow_private; i++) {
			policy_cidr_format(&net->allow_private[i], buf, sizeof(buf));
			fputs("    - ", f);
			print_str(f, buf);
			end_line(f, &net->allow_private[i].loc);
		}
	}
	if (net->n_resolve == 0) {
		fputs("  resolve: {}\n", f);
	} else {
		fputs("  resolve:\n", f);
		for (size_t i = 0; i < net->n_resolve; i++) {
			fputs("    ", f);
			print_str(f, net->resolve[i].host);
			fputs(": ", f);
			print_str(f, net->resolve[i].addr);
			end_line(f, &net->resolve[i].loc);
		}
	}
	if (net->upstream_ca) {
		fputs("  upstream_ca: ", f);
		print_str(f, net->upstream_ca);
		end_line(f, &p->origin.upstream_ca);
	}
	fputs("  leak_scan:\n", f);
	policy_format_size(net->max_body ? net->max_body : POLICY_DEFAULT_MAX_BODY, buf, sizeof(buf));
	fprintf(f, "    max_body: %s", buf);
	end_line(f, &p->origin.max_body);
	fprintf(f, "    allow_compressed: %s", net->allow_compressed ? "true" : "false");
	end_line(f, &p->origin.allow_compressed);
	if (net->log) {
		fputs("  log: ", f);
		print_str(f, net->log);
		end_line(f, &p->origin.net_log);
	}
}

/* ---- credentials ---- */

static void print_flow_list(FILE *f, char *const *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		print_str(f, v[i]);
	}
	fputc(']', f);
}

static bool is_default_binding_id(const char *id, size_t cred, size_t bind)
{
	char buf[POLICY_FIELD_MAX];

	snprintf(buf, sizeof(buf), "credentials[%zu].bindings[%zu]", cred, bind);
	return str_eq(id, buf);
}

static void print_binding(FILE *f, const struct policy_cred_binding *b, size_t cred, size_t idx)
{
	fputs("      - host: ", f);
	print_str(f, b->host ? b->host : "");
	end_line(f, &b->loc);
	if (!is_default_binding_id(b->id, cred, idx)) {
		fputs("        id: ", f);
		print_str(f, b->id ? b->id : "");
		fputc('\n', f);
	}
	fprintf(f, "        port: %u\n", b->port);
	switch (b->where) {
	case POLICY_CRED_HEADER:
		fputs("        header: ", f);
		print_str(f, b->header ? b->header : "");
		fputs("\n        template: ", f);
		print_str(f, b->tmpl ? b->tmpl : "");
		fputc('\n', f);
		break;
	case POLICY_CRED_BASIC:
		fputs("        basic: {username: ", f);
		print_str(f, b->username ? b->username : "");
		fputs("}\n", f);
		break;
	case POLICY_CRED_QUERY:
		fputs("        query: ", f);
		print_str(f, b->query ? b->query : "");
		fputc('\n', f);
		break;
	}
	if (b->n_methods > 0) {
		fputs("        methods: ", f);
		print_flow_list(f, b->methods, b->n_methods);
		fputc('\n', f);
	}
	if (b->n_paths > 0) {
		fputs("        paths: ", f);
		print_flow_list(f, b->paths, b->n_paths);
		fputc('\n', f);
	}
	if (b->git) {
		const struct policy_git_binding *g = b->git;

		fputs("        git:", f);
		end_line(f, &g->loc);
		if (g->n_repos > 0) {
			fputs("          repos: ", f);
			print_flow_list(f, g->repos, g->n_repos);
			fputc('\n', f);
		}
		fprintf(f, "          fetch: %s\n", g->fetch ? "true" : "false");
		if (g->n_push > 0) {
			fputs("          push: ", f);
			print_flow_list(f, g->push, g->n_push);
			fputc('\n', f);
		}
		fprintf(f, "          delete: %s\n", g->delete_refs ? "true" : "false");
		fprintf(f, "          tags: %s\n", g->tags ? "true" : "false");
	}
}

static void print_credentials(FILE *f, const struct policy *p)
{
	/* Absent and empty are the same: nothing is printed. */
	if (p->n_credentials == 0)
		return;
	fputs("credentials:\n", f);
	for (size_t i = 0; i < p->n_credentials; i++) {
		const struct policy_credential *c = &p->credentials[i];

		fputs("  - name: ", f);
		print_str(f, c->name ? c->name : "");
		end_line(f, &c->loc);
		switch (c->source) {
		case POLICY_CRED_ENV:
		case POLICY_CRED_FILE: {
			_cleanup_free_ char *src = NULL;

			if (asprintf(&src, "%s:%s", c->source == POLICY_CRED_ENV ? "env" : "file",
				     c->source_arg ? c->source_arg : "") < 0) {
				/* Out of memory: a line that no reader accepts
				 * rather than a different policy. */
				fputs("    source: !!invalid\n", f);
				break;
			}
			fputs("    source: ", f);
			print_str(f, src);
			fputc('\n', f);
			break;
		}
		case POLICY_CRED_COMMAND:
			fputs("    command: ", f);
			print_flow_list(f, c->command, c->n_command);
			fputc('\n', f);
			break;
		}
		if (c->env) {
			fputs("    env: ", f);
			print_name(f, c->env);
			fputc('\n', f);
		}
		fprintf(f, "    inject: %s\n",
			c->inject == POLICY_INJECT_ALWAYS ? "always" : "placeholder");
		fputs("    bindings:\n", f);
		for (size_t j = 0; j < c->n_bindings; j++)
			print_binding(f, &c->bindings[j], i, j);
	}
}

void policy_print(const struct policy *p, FILE *f)
{
	const struct policy_limits *lim = &p->sandbox.limits;

	fputs("# Effective policy from ", f);
	print_comment_text(f, p->file ? p->file : POLICY_DEFAULT_FILE);
	fputs(".\n# \"# FILE:LINE\" after an entry: where it was set; no comment: built-in default.\n",
	      f);
	for (size_t i = 0; i < p->n_layer_files; i++) {
		fputs("# Narrowed by the enterprise policy ", f);
		print_comment_text(f, p->layer_files[i]);
		fputs(".\n", f);
	}

	fprintf(f, "version: %d", p->version);
	end_line(f, &p->origin.version);
	fputs("name: ", f);
	print_str(f, p->name ? p->name : "");
	end_line(f, &p->origin.name);

	fputs("sandbox:\n", f);
	fprintf(f, "  boundary: %s", policy_boundary_name(p->sandbox.boundary));
	end_line(f, &p->origin.boundary);
	fputs("  workspace: ", f);
	print_str(f, p->sandbox.workspace ? p->sandbox.workspace : "");
	end_line(f, &p->sandbox.workspace_loc);
	fprintf(f, "  mode: %s", policy_mode_name(p->sandbox.mode));
	end_line(f, &p->origin.mode);
	fprintf(f, "  workspace_mode: %s", policy_workspace_mode_name(p->sandbox.workspace_mode));
	end_line(f, &p->origin.workspace_mode);
	print_id(f, "host_uid", p->sandbox.host_uid, &p->origin.host_uid);
	print_id(f, "host_gid", p->sandbox.host_gid, &p->origin.host_gid);
	fputs("  limits:\n", f);
	print_size(f, "memory", lim->memory_bytes, &p->origin.memory);
	print_count(f, "pids", lim->pids, &p->origin.pids);
	print_count(f, "open_files", lim->open_files, &p->origin.open_files);
	print_duration(f, "cpu", lim->cpu_seconds, &p->origin.cpu);
	print_duration(f, "wall", lim->wall_seconds, &p->origin.wall);

	fputs("filesystem:\n", f);
	fprintf(f, "  baseline: %s", p->filesystem.baseline ? "true" : "false");
	end_line(f, &p->origin.baseline);
	print_paths(f, "  ", "read", &p->filesystem.read);
	print_paths(f, "  ", "write", &p->filesystem.write);
	print_paths(f, "  ", "deny", &p->filesystem.deny);
	print_paths(f, "  ", "protect", &p->filesystem.protect);
	print_paths(f, "  ", "sockets", &p->filesystem.sockets);
	fprintf(f, "  protect_defaults: %s", p->filesystem.protect_defaults ? "true" : "false");
	end_line(f, &p->origin.protect_defaults);
	fprintf(f, "  protect_build: %s", p->filesystem.protect_build ? "true" : "false");
	end_line(f, &p->origin.protect_build);

	fputs("process:\n", f);
	if (p->process.exec_set)
		print_paths(f, "  ", "exec", &p->process.exec);
	fputs("  env:\n", f);
	if (p->process.n_env_pass == 0) {
		fputs("    pass: []\n", f);
	} else {
		fputs("    pass:\n", f);
		for (size_t i = 0; i < p->process.n_env_pass; i++) {
			fputs("      - ", f);
			print_name(f, p->process.env_pass[i]);
			if (p->process.env_pass_loc)
				end_line(f, &p->process.env_pass_loc[i]);
			else
				fputc('\n', f);
		}
	}
	if (p->process.n_env_set == 0) {
		fputs("    set: {}\n", f);
	} else {
		fputs("    set:\n", f);
		for (size_t i = 0; i < p->process.n_env_set; i++) {
			const struct policy_env_var *e = &p->process.env_set[i];

			fputs("      ", f);
			print_name(f, e->name);
			fputs(": ", f);
			print_str(f, e->value);
			end_line(f, &e->loc);
		}
	}
	fprintf(f, "  git_identity: %s", p->process.git_identity ? "host" : "none");
	end_line(f, &p->origin.git_identity);

	print_network(f, p);
	print_credentials(f, p);
	if (p->identity.agent || p->identity.header)
		fputs("identity:\n", f);
	if (p->identity.agent) {
		fputs("  agent: ", f);
		print_str(f, p->identity.agent);
		end_line(f, &p->origin.agent);
	}
	if (p->identity.header) {
		fputs("  header: true", f);
		end_line(f, &p->origin.identity_header);
	}
	fprintf(f, "audit:\n  enabled: %s", p->audit.enabled ? "true" : "false");
	end_line(f, &p->origin.audit_enabled);
	if (p->audit.dir) {
		fputs("  dir: ", f);
		print_str(f, p->audit.dir);
		end_line(f, &p->origin.audit_dir);
	} else if (p->audit.enabled) {
		fputs("  # dir not set: $XDG_STATE_HOME/airlock/audit, else ~/.local/state/airlock/audit\n", f);
	}
	if (p->audit.enabled && p->origin.audit_max_size.line) {
		char size[64];
		policy_format_size(p->audit.max_size, size, sizeof(size));
		fprintf(f, "  max_size: %s", size);
		end_line(f, &p->origin.audit_max_size);
	}
	policy_mcp_print(p->mcp, f);
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool paths_eq(const struct policy_paths *a, const struct policy_paths *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!str_eq(a->v[i].path, b->v[i].path))
			return false;
	return true;
}

static bool rule_eq(const struct policy_net_rule *a, const struct policy_net_rule *b)
{
	if (!str_eq(a->id, b->id) || a->n_methods != b->n_methods || !str_eq(a->path, b->path) ||
	    !str_eq(a->query, b->query) || a->websocket != b->websocket)
		return false;
	for (size_t i = 0; i < a->n_methods; i++)
		if (!str_eq(a->methods[i], b->methods[i]))
			return false;
	return true;
}

static bool endpoint_eq(const struct policy_endpoint *a, const struct policy_endpoint *b)
{
	if (!str_eq(a->id, b->id) || !str_eq(a->host, b->host) || a->n_ports != b->n_ports ||
	    a->intercept != b->intercept || !str_eq(a->mcp_server, b->mcp_server) || a->n_rules != b->n_rules)
		return false;
	for (size_t i = 0; i < a->n_ports; i++)
		if (a->ports[i] != b->ports[i])
			return false;
	for (size_t i = 0; i < a->n_rules; i++)
		if (!rule_eq(&a->rules[i], &b->rules[i]))
			return false;
	return true;
}

static bool network_eq(const struct policy_network *a, const struct policy_network *b)
{
	if (a->mode != b->mode || a->n_endpoints != b->n_endpoints ||
	    a->n_allow_private != b->n_allow_private || a->n_resolve != b->n_resolve ||
	    !str_eq(a->upstream_ca, b->upstream_ca) || a->max_body != b->max_body ||
	    a->allow_compressed != b->allow_compressed || !str_eq(a->log, b->log))
		return false;
	for (size_t i = 0; i < a->n_endpoints; i++)
		if (!endpoint_eq(&a->endpoints[i], &b->endpoints[i]))
			return false;
	for (size_t i = 0; i < a->n_allow_private; i++) {
		const struct policy_cidr *x = &a->allow_private[i], *y = &b->allow_private[i];
		if (x->family != y->family || x->prefix != y->prefix || x->port != y->port ||
		    memcmp(x->addr, y->addr, sizeof(x->addr)) != 0)
			return false;
	}
	for (size_t i = 0; i < a->n_resolve; i++)
		if (!str_eq(a->resolve[i].host, b->resolve[i].host) ||
		    !str_eq(a->resolve[i].addr, b->resolve[i].addr))
			return false;
	return true;
}

static bool strv_eq(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!str_eq(a[i], b[i]))
			return false;
	return true;
}

static bool git_eq(const struct policy_git_binding *a, const struct policy_git_binding *b)
{
	if (!a || !b)
		return a == b;
	return strv_eq(a->repos, a->n_repos, b->repos, b->n_repos) && a->fetch == b->fetch &&
	       strv_eq(a->push, a->n_push, b->push, b->n_push) && a->delete_refs == b->delete_refs &&
	       a->tags == b->tags;
}

static bool binding_eq(const struct policy_cred_binding *a, const struct policy_cred_binding *b)
{
	return str_eq(a->id, b->id) && str_eq(a->host, b->host) && a->port == b->port &&
	       a->where == b->where && str_eq(a->header, b->header) && str_eq(a->tmpl, b->tmpl) &&
	       str_eq(a->username, b->username) && str_eq(a->query, b->query) &&
	       strv_eq(a->methods, a->n_methods, b->methods, b->n_methods) &&
	       strv_eq(a->paths, a->n_paths, b->paths, b->n_paths) && git_eq(a->git, b->git);
}

static bool credential_eq(const struct policy_credential *a, const struct policy_credential *b)
{
	if (!str_eq(a->name, b->name) || a->source != b->source ||
	    !str_eq(a->source_arg, b->source_arg) ||
	    !strv_eq(a->command, a->n_command, b->command, b->n_command) || !str_eq(a->env, b->env) ||
	    a->inject != b->inject || a->n_bindings != b->n_bindings)
		return false;
	for (size_t i = 0; i < a->n_bindings; i++)
		if (!binding_eq(&a->bindings[i], &b->bindings[i]))
			return false;
	return true;
}

/* The mcp sections by their printed form, which carries every setting. */
static bool mcp_eq(const struct policy_mcp *a, const struct policy_mcp *b)
{
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	if (fa)
		policy_mcp_print(a, fa), fclose(fa);
	if (fb)
		policy_mcp_print(b, fb), fclose(fb);
	bool eq = fa && fb && ta && tb && la == lb && !memcmp(ta, tb, la);
	free(ta);
	free(tb);
	return eq;
}

bool policy_equal(const struct policy *a, const struct policy *b)
{
	const struct policy_limits *la = &a->sandbox.limits, *lb = &b->sandbox.limits;

	if (a->version != b->version || !str_eq(a->name, b->name) || !str_eq(a->identity.agent, b->identity.agent) ||
	    a->identity.header != b->identity.header || a->audit.enabled != b->audit.enabled ||
	    !str_eq(a->audit.dir, b->audit.dir) || a->audit.max_size != b->audit.max_size ||
	    a->sandbox.boundary != b->sandbox.boundary ||
	    !str_eq(a->sandbox.workspace, b->sandbox.workspace) ||
	    a->sandbox.mode != b->sandbox.mode || a->sandbox.workspace_mode != b->sandbox.workspace_mode ||
	    a->sandbox.host_uid != b->sandbox.host_uid ||
	    a->sandbox.host_gid != b->sandbox.host_gid || a->process.git_identity != b->process.git_identity)
		return false;
	if (la->memory_bytes != lb->memory_bytes || la->pids != lb->pids ||
	    la->open_files != lb->open_files || la->cpu_seconds != lb->cpu_seconds ||
	    la->wall_seconds != lb->wall_seconds)
		return false;
	if (a->filesystem.baseline != b->filesystem.baseline ||
	    !paths_eq(&a->filesystem.read, &b->filesystem.read) ||
	    !paths_eq(&a->filesystem.write, &b->filesystem.write) ||
	    !paths_eq(&a->filesystem.deny, &b->filesystem.deny) ||
	    !paths_eq(&a->filesystem.protect, &b->filesystem.protect) ||
	    !paths_eq(&a->filesystem.sockets, &b->filesystem.sockets) ||
	    a->filesystem.protect_defaults != b->filesystem.protect_defaults ||
	    a->filesystem.protect_build != b->filesystem.protect_build)
		return false;
	if (a->process.exec_set != b->process.exec_set ||
	    !paths_eq(&a->process.exec, &b->process.exec))
		return false;
	if (a->process.n_env_pass != b->process.n_env_pass ||
	    a->process.n_env_set != b->process.n_env_set)
		return false;
	for (size_t i = 0; i < a->process.n_env_pass; i++)
		if (!str_eq(a->process.env_pass[i], b->process.env_pass[i]))
			return false;
	for (size_t i = 0; i < a->process.n_env_set; i++)
		if (!str_eq(a->process.env_set[i].name, b->process.env_set[i].name) ||
		    !str_eq(a->process.env_set[i].value, b->process.env_set[i].value))
			return false;
	if (!network_eq(&a->network, &b->network) || a->n_credentials != b->n_credentials)
		return false;
	for (size_t i = 0; i < a->n_credentials; i++)
		if (!credential_eq(&a->credentials[i], &b->credentials[i]))
			return false;
	return mcp_eq(a->mcp, b->mcp);
}
