/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy sections sandbox, filesystem and process, and the contradictions
 * between their paths and variables (see parse.c for the loader).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/parse.h"
/* ---- sections ---- */

#define AT(field) offsetof(struct policy, field)
#define ORIGIN(name) offsetof(struct policy, origin.name)

static const struct parse_key limits_keys[] = {
	{ "memory", parse_size_at, AT(sandbox.limits.memory_bytes), ORIGIN(memory), NULL, 0 },
	{ "pids", parse_count_at, AT(sandbox.limits.pids), ORIGIN(pids), NULL, 0 },
	{ "open_files", parse_count_at, AT(sandbox.limits.open_files), ORIGIN(open_files), NULL, 0 },
	{ "cpu", parse_duration_at, AT(sandbox.limits.cpu_seconds), ORIGIN(cpu), NULL, 0 },
	{ "wall", parse_duration_at, AT(sandbox.limits.wall_seconds), ORIGIN(wall), NULL, 0 },
};
const struct parse_table parse_limits_table = PARSE_TABLE("sandbox.limits", limits_keys);

/* The workspace replaces the default (the current directory) only once
 * it has been read without fault. */
static int parse_workspace_at(struct loader *l, const struct parse_at *at, void *data)
{
	_cleanup_free_ char *ws = NULL;
	int r = parse_load_path(l, at->v, at->field, false, &ws);

	if (r < 0)
		return r;
	free(l->p->sandbox.workspace);
	l->p->sandbox.workspace = steal_pointer(&ws);
	*(struct policy_loc *)data = parse_loc_of(l, at->v);
	return 0;
}

static const char *const boundaries[] = { "process", "gvisor", "microvm" };
static const char *const modes[] = { "enforce", "learn", "observe" };
static const char *const ws_modes[] = { "direct", "review", "hold" };
static const struct parse_enum boundary_enum = PARSE_ENUM(boundaries);
static const struct parse_enum mode_enum = PARSE_ENUM(modes);
static const struct parse_enum ws_mode_enum = PARSE_ENUM(ws_modes);

static const struct parse_key sandbox_keys[] = {
	{ "boundary", parse_enum_at, AT(sandbox.boundary), ORIGIN(boundary), &boundary_enum, 0 },
	{ "workspace", parse_workspace_at, AT(sandbox.workspace_loc), PARSE_NO_ORIGIN, NULL, 0 },
	{ "mode", parse_enum_at, AT(sandbox.mode), ORIGIN(mode), &mode_enum, 0 },
	{ "workspace_mode", parse_enum_at, AT(sandbox.workspace_mode), ORIGIN(workspace_mode), &ws_mode_enum, 0 },
	{ "host_uid", parse_id_at, AT(sandbox.host_uid), ORIGIN(host_uid), NULL, 0 },
	{ "host_gid", parse_id_at, AT(sandbox.host_gid), ORIGIN(host_gid), NULL, 0 },
	{ "limits", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_limits_table, 0 },
};
const struct parse_table parse_sandbox_table = PARSE_TABLE("sandbox", sandbox_keys);

static int parse_protect_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_protect_list(l, at->v, at->field, data);
}

static int parse_sockets_at(struct loader *l, const struct parse_at *at, void *data)
{
	return parse_load_str_list(l, at->v, at->field, data, parse_load_socket_path);
}

static const struct parse_key filesystem_keys[] = {
	{ "baseline", parse_bool_at, AT(filesystem.baseline), ORIGIN(baseline), NULL, 0 },
	{ "read", parse_paths_at, AT(filesystem.read), PARSE_NO_ORIGIN, NULL, 0 },
	{ "write", parse_paths_at, AT(filesystem.write), PARSE_NO_ORIGIN, NULL, 0 },
	{ "deny", parse_paths_at, AT(filesystem.deny), PARSE_NO_ORIGIN, NULL, 0 },
	{ "protect", parse_protect_at, AT(filesystem.protect), PARSE_NO_ORIGIN, NULL, 0 },
	{ "sockets", parse_sockets_at, AT(filesystem.sockets), PARSE_NO_ORIGIN, NULL, 0 },
	{ "protect_defaults", parse_bool_at, AT(filesystem.protect_defaults), ORIGIN(protect_defaults), NULL, 0 },
	{ "protect_build", parse_bool_at, AT(filesystem.protect_build), ORIGIN(protect_build), NULL, 0 },
};
const struct parse_table parse_filesystem_table = PARSE_TABLE("filesystem", filesystem_keys);

bool parse_valid_env_name(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

int parse_bad_env_name(struct loader *l, const struct policy_ynode *n, const char *field)
{
	char q[96];

	parse_quote(n, q, sizeof(q));
	return FAIL(l, n, field,
		    "%s is not a variable name; use letters, digits and _, not starting with a digit",
		    q);
}

static void env_pass_clear(struct policy *p)
{
	for (size_t i = 0; i < p->process.n_env_pass; i++)
		free(p->process.env_pass[i]);
	free(p->process.env_pass);
	free(p->process.env_pass_loc);
	p->process.env_pass = NULL;
	p->process.env_pass_loc = NULL;
	p->process.n_env_pass = 0;
}

static int load_env_pass(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	int r;

	r = parse_want_list(l, n, "process.env.pass");
	if (r < 0)
		return r;
	env_pass_clear(p);
	p->process.env_pass = calloc(n->n + 1, sizeof(char *));
	p->process.env_pass_loc = calloc(n->n ? n->n : 1, sizeof(struct policy_loc));
	if (!p->process.env_pass || !p->process.env_pass_loc)
		return parse_oom(l);
	for (size_t i = 0; i < n->n; i++) {
		const struct policy_ynode *e = n->items[i];
		char field[POLICY_FIELD_MAX];

		parse_field_index(field, sizeof(field), "process.env.pass", i);
		r = parse_want_scalar(l, e, field, "an environment variable name");
		if (r < 0)
			return r;
		if (!parse_valid_env_name(e->str, e->len))
			return parse_bad_env_name(l, e, field);
		p->process.env_pass[i] = strdup(e->str);
		if (!p->process.env_pass[i])
			return parse_oom(l);
		p->process.env_pass_loc[i] = parse_loc_of(l, e);
		p->process.n_env_pass = i + 1;
	}
	p->origin.env_pass = parse_loc_of(l, n);
	return 0;
}

static int load_env_set(struct loader *l, const struct policy_ynode *n)
{
	struct policy *p = l->p;
	size_t count = n->n / 2;
	int r;

	r = parse_want_map(l, n, "process.env.set");
	if (r < 0)
		return r;
	if (count == 0) {
		p->origin.env_set = parse_loc_of(l, n);
		return 0;
	}
	p->process.env_set = calloc(count, sizeof(*p->process.env_set));
	if (!p->process.env_set)
		return parse_oom(l);
	for (size_t i = 0; i < count; i++) {
		const struct policy_ynode *k = n->items[2 * i], *v = n->items[2 * i + 1];
		struct policy_env_var *e = &p->process.env_set[i];
		char field[POLICY_FIELD_MAX] = "process.env.set";

		policy_field_append_key(field, sizeof(field), k->str, k->len);
		if (!parse_valid_env_name(k->str, k->len))
			return parse_bad_env_name(l, k, field);
		r = parse_load_string(l, v, field, "a string (use \"\" for an empty value)", true, &e->value);
		if (r < 0)
			return r;
		e->name = strdup(k->str);
		if (!e->name) {
			free(e->value);
			e->value = NULL;
			return parse_oom(l);
		}
		e->loc = parse_loc_of(l, k);
		p->process.n_env_set = i + 1;
	}
	p->origin.env_set = parse_loc_of(l, n);
	return 0;
}


static int parse_env_pass_at(struct loader *l, const struct parse_at *at, void *data)
{
	(void)data;
	int r = load_env_pass(l, at->v);
	if (r == 0)
		l->pass_given = true;
	return r;
}

static int parse_env_set_at(struct loader *l, const struct parse_at *at, void *data)
{
	(void)data;
	return load_env_set(l, at->v);
}

static const struct parse_key env_keys[] = {
	{ "pass", parse_env_pass_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
	{ "set", parse_env_set_at, 0, PARSE_NO_ORIGIN, NULL, 0 },
};
const struct parse_table parse_env_table = PARSE_TABLE("process.env", env_keys);

static int parse_exec_at(struct loader *l, const struct parse_at *at, void *data)
{
	int r = parse_load_path_list(l, at->v, at->field, data);

	if (r < 0)
		return r;
	if (l->p->process.exec.n == 0)
		return FAIL(l, at->v, at->field,
			    "is an empty list, which would forbid running the command itself; "
			    "list directories or omit exec for the baseline and workspace");
	l->p->process.exec_set = true;
	return 0;
}

static int parse_git_identity_at(struct loader *l, const struct parse_at *at, void *data)
{
	static const char *const gi[] = { "none", "host" };
	int e, r = parse_load_enum(l, at->v, at->field, gi, ARRAY_SIZE(gi), &e);

	if (r == 0)
		*(bool *)data = e == 1;
	return r;
}

static const struct parse_key process_keys[] = {
	{ "exec", parse_exec_at, AT(process.exec), ORIGIN(exec), NULL, 0 },
	{ "env", parse_map_at, 0, PARSE_NO_ORIGIN, &parse_env_table, 0 },
	{ "git_identity", parse_git_identity_at, AT(process.git_identity), ORIGIN(git_identity), NULL, 0 },
};
const struct parse_table parse_process_table = PARSE_TABLE("process", process_keys);

/* ---- contradictions ---- */

struct entry {
	const char *s;
	const char *list;
	size_t idx;
	struct policy_loc loc;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c)
		return c;
	if (x->loc.line != y->loc.line)
		return x->loc.line < y->loc.line ? -1 : 1;
	return (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
}

bool parse_loc_before(const struct policy_loc *a, const struct policy_loc *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* Sort e[0..n) and find the repeated string whose second occurrence comes
 * first in the file. Returns false when every string is distinct. */
static bool find_repeat(struct entry *e, size_t n, const struct entry **first,
			const struct entry **again)
{
	*first = *again = NULL;
	if (n < 2)
		return false;
	qsort(e, n, sizeof(*e), entry_cmp);
	for (size_t i = 0; i + 1 < n;) {
		size_t j = i + 1;
		for (; j < n && strcmp(e[j].s, e[i].s) == 0; j++) {
			if (!*again || parse_loc_before(&e[j].loc, &(*again)->loc)) {
				*again = &e[j];
				*first = &e[i];
			}
		}
		i = j;
	}
	return *again != NULL;
}

static void add_paths(struct entry *e, size_t *n, const struct policy_paths *ps, const char *list)
{
	for (size_t i = 0; i < ps->n; i++)
		e[(*n)++] = (struct entry){ ps->v[i].path, list, i, ps->v[i].loc };
}

static int repeat_error(struct loader *l, const struct entry *first, const struct entry *again,
			const char *rule)
{
	char field[POLICY_FIELD_MAX], other[POLICY_FIELD_MAX];
	char q[96];

	parse_field_index(field, sizeof(field), again->list, again->idx);
	parse_field_index(other, sizeof(other), first->list, first->idx);
	policy_quote(again->s, strlen(again->s), q, sizeof(q));
	if (strcmp(first->list, again->list) == 0)
		return policy_fail(l->err, l->p->file, again->loc.line, again->loc.col, field,
				   "%s is listed twice (first at %s, line %u); remove one", q, other,
				   first->loc.line);
	return policy_fail(l->err, l->p->file, again->loc.line, again->loc.col, field,
			   "%s is also in %s (line %u); %s", q, other, first->loc.line, rule);
}

/* The entry of sorted[0..n) equal to path or to one of its ancestors,
 * nearest first; NULL if none. */
static const struct entry *find_ancestor(const struct entry *sorted, size_t n, const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (n == 0 || len >= sizeof(buf))
		return NULL;
	memcpy(buf, path, len + 1);
	for (;;) {
		size_t lo = 0, hi = n;

		/* Lower bound, so that the first (earliest) of equal paths wins. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(sorted[mid].s, buf) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && strcmp(sorted[lo].s, buf) == 0)
			return &sorted[lo];
		if (len == 1)
			return NULL;
		while (len > 1 && buf[len - 1] != '/')
			len--;
		if (len > 1)
			len--;
		buf[len] = '\0';
	}
}

int parse_check_filesystem(struct loader *l)
{
	const struct policy *p = l->p;
	const struct policy_paths *deny = &p->filesystem.deny;
	size_t total = p->filesystem.read.n + p->filesystem.write.n + deny->n;
	_cleanup_free_ struct entry *all = NULL;
	_cleanup_free_ struct entry *denied = NULL;
	const struct entry *first, *again, *hit;
	size_t n = 0, nd = 0;

	if (total > 0) {
		all = calloc(total, sizeof(*all));
		if (!all)
			return parse_oom(l);
		add_paths(all, &n, &p->filesystem.read, "filesystem.read");
		add_paths(all, &n, &p->filesystem.write, "filesystem.write");
		add_paths(all, &n, deny, "filesystem.deny");
		if (find_repeat(all, n, &first, &again))
			return repeat_error(l, first, again,
					    "a path may be in only one of read, write and deny");
	}

	if (deny->n) {
		denied = calloc(deny->n, sizeof(*denied));
		if (!denied)
			return parse_oom(l);
		add_paths(denied, &nd, deny, "filesystem.deny");
		qsort(denied, nd, sizeof(*denied), entry_cmp);
	}

	/* The agent must be able to reach its workspace. */
	hit = find_ancestor(denied, nd, p->sandbox.workspace);
	if (hit) {
		char field[POLICY_FIELD_MAX], q[96], w[96];

		parse_field_index(field, sizeof(field), hit->list, hit->idx);
		policy_quote(hit->s, strlen(hit->s), q, sizeof(q));
		policy_quote(p->sandbox.workspace, strlen(p->sandbox.workspace), w, sizeof(w));
		return policy_fail(l->err, p->file, hit->loc.line, hit->loc.col, field,
				   "%s hides the workspace %s; deny paths inside the workspace, or "
				   "choose another workspace",
				   q, w);
	}

	if (p->process.exec_set) {
		const struct policy_paths *ex = &p->process.exec;
		_cleanup_free_ struct entry *execs = calloc(ex->n, sizeof(*execs));
		size_t ne = 0;

		if (!execs)
			return parse_oom(l);
		add_paths(execs, &ne, ex, "process.exec");
		if (find_repeat(execs, ne, &first, &again))
			return repeat_error(l, first, again, "");

		/* execs is sorted now; report in list order. */
		for (size_t i = 0; i < ex->n; i++) {
			char field[POLICY_FIELD_MAX], other[POLICY_FIELD_MAX], q[96];

			hit = find_ancestor(denied, nd, ex->v[i].path);
			if (!hit)
				continue;
			parse_field_index(field, sizeof(field), "process.exec", i);
			parse_field_index(other, sizeof(other), hit->list, hit->idx);
			policy_quote(ex->v[i].path, strlen(ex->v[i].path), q, sizeof(q));
			return policy_fail(l->err, p->file, ex->v[i].loc.line, ex->v[i].loc.col,
					   field,
					   "%s is inside %s (line %u), which is denied; remove it from "
					   "exec or from deny",
					   q, other, hit->loc.line);
		}
	}
	return 0;
}

int parse_check_env(struct loader *l, bool pass_given)
{
	struct policy *p = l->p;
	size_t np = p->process.n_env_pass;
	_cleanup_free_ struct entry *pass = NULL;
	const struct entry *first, *again;
	size_t n = 0;

	if (np == 0)
		return 0;
	pass = calloc(np, sizeof(*pass));
	if (!pass)
		return parse_oom(l);
	for (size_t i = 0; i < np; i++)
		pass[n++] = (struct entry){ p->process.env_pass[i], "process.env.pass", i,
					    p->process.env_pass_loc[i] };

	if (!pass_given) {
		/* The default pass list yields to an explicit value: "set:
		 * {LANG: C}" alone means what it says. */
		size_t keep = 0;
		for (size_t i = 0; i < np; i++) {
			bool drop = false;
			for (size_t j = 0; j < p->process.n_env_set; j++)
				if (strcmp(p->process.env_pass[i], p->process.env_set[j].name) == 0)
					drop = true;
			if (drop) {
				free(p->process.env_pass[i]);
				continue;
			}
			p->process.env_pass[keep] = p->process.env_pass[i];
			p->process.env_pass_loc[keep] = p->process.env_pass_loc[i];
			keep++;
		}
		p->process.env_pass[keep] = NULL;
		p->process.n_env_pass = keep;
		return 0;
	}

	if (find_repeat(pass, n, &first, &again))
		return repeat_error(l, first, again, "");

	for (size_t j = 0; j < p->process.n_env_set; j++) {
		const struct policy_env_var *e = &p->process.env_set[j];
		const struct entry *hit = NULL;
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(pass[mid].s, e->name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && strcmp(pass[lo].s, e->name) == 0)
			hit = &pass[lo];
		if (hit) {
			char field[POLICY_FIELD_MAX] = "process.env.set", other[POLICY_FIELD_MAX];

			policy_field_append_key(field, sizeof(field), e->name, strlen(e->name));
			parse_field_index(other, sizeof(other), hit->list, hit->idx);
			return policy_fail(l->err, p->file, e->loc.line, e->loc.col, field,
					   "%s is also in %s (line %u); pass copies the caller's value "
					   "and set gives a fixed one: keep one",
					   e->name, other, hit->loc.line);
		}
	}
	return 0;
}
