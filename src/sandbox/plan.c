/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From policy to plan: which host paths appear where, with which Landlock
 * rights, as which ids, with which environment. Runs in the supervisor,
 * where symlinks are resolved against the host's view once, before any
 * sandboxed code exists.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "sandbox/sandbox.h"
#include "proto/proxy.h"
#include "sandbox/landlock_abi.h"
#include "sandbox/review_run.h"
#include "util/cleanup.h"

#define NOBODY 65534

static const char *const baseline_dirs[] = { "/usr", "/etc", "/opt" };
static const char *const baseline_maybe_links[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };
static const char *const default_exec_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
						 "/opt" };
static const char *const dynamic_loaders[] = { "/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1",
					       "/lib/ld-linux.so.2", "/lib/ld-linux-armhf.so.3" };

void plan_free(struct sandbox_plan *p)
{
	for (size_t i = 0; i < p->n_mounts; i++) {
		free(p->mounts[i].src);
		free(p->mounts[i].dst);
		if (p->mounts[i].tree_fd >= 0)
			close(p->mounts[i].tree_fd);
	}
	free(p->mounts);
	for (size_t i = 0; i < p->n_rules; i++)
		free(p->rules[i].path);
	free(p->rules);
	for (size_t i = 0; i < p->n_sockets; i++)
		free(p->sockets[i]);
	free(p->sockets);
	if (p->envp) {
		for (char **e = p->envp; *e; e++)
			free(*e);
		free(p->envp);
	}
	free(p->cwd);
	free(p->hostname);
	free(p->home);
	free(p->workspace);
	protect_set_free(&p->protect);
	free(p->review_layer);
	if (p->review_tree_fd >= 0)
		close(p->review_tree_fd);
	if (p->ca_bundle)
		free(p->ca_bundle);
	buf_free(&p->java_store);
	memset(p, 0, sizeof(*p));
	p->review_tree_fd = -1;
}

static bool path_under(const char *path, const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return true;
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int add_mount(struct sandbox_plan *p, enum mount_kind kind, const char *src, const char *dst, bool ro,
		     bool is_dir, unsigned mode)
{
	struct mount_entry *v = realloc(p->mounts, (p->n_mounts + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->mounts = v;
	struct mount_entry *m = &v[p->n_mounts];
	*m = (struct mount_entry){ .kind = kind, .readonly = ro, .is_dir = is_dir, .mode = mode, .tree_fd = -1 };
	m->src = src ? strdup(src) : NULL;
	m->dst = strdup(dst);
	if ((src && !m->src) || !m->dst) {
		free(m->src);
		free(m->dst);
		return -ENOMEM;
	}
	p->n_mounts++;
	return 0;
}

static int add_rule(struct sandbox_plan *p, const char *path, uint64_t access)
{
	struct ll_rule *v = realloc(p->rules, (p->n_rules + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->rules = v;
	v[p->n_rules].path = strdup(path);
	if (!v[p->n_rules].path)
		return -ENOMEM;
	v[p->n_rules].access = access;
	p->n_rules++;
	return 0;
}

/* The mount that shows path: the deepest one above it, the later of two
 * at one path, or SIZE_MAX. A protected path's bind is a clone of what the
 * sandbox shows beneath it (mount.c) and keeps that mount's exec, so it
 * does not count; nor does a symlink. */
static size_t owner_of(const struct sandbox_plan *p, const char *path)
{
	size_t owner = SIZE_MAX, owner_len = 0;
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct mount_entry *m = &p->mounts[i];
		size_t len = strlen(m->dst);
		if (m->kind != MOUNT_SYMLINK && m->kind != MOUNT_PROTECT && path_under(path, m->dst) &&
		    (owner == SIZE_MAX || len >= owner_len)) {
			owner = i;
			owner_len = len;
		}
	}
	return owner;
}

/*
 * Which binds and tmpfs mounts keep exec. Landlock's execute right is
 * checked by execve alone: the kernel's loader maps any readable file as
 * a program (`ld-linux-x86-64.so.2 /tmp/prog`), and mmap(PROT_EXEC) of a
 * readable file (python's ctypes or mmap module) runs code that no rule
 * lets execve start. A noexec mount refuses both (execve, the loader's
 * mmap and every PROT_EXEC mapping of its files: EACCES/EPERM). So every
 * mount is noexec unless an execute rule reaches into it: the rule's path
 * lies beneath the mount, and this mount, not a deeper one, shows it; or
 * the mount lies beneath the rule's path. A rule's path is compared as
 * its real path on the host (a rule on /bin holds for /usr/bin when /bin
 * links there), but as written where a private tmpfs shows it (the host's
 * /tmp is not the sandbox's). Shared libraries load only from exec
 * mounts: a library directory outside the exec set must be listed in
 * process.exec.
 *
 * WARNING: run again after every change of mounts or rules
 * (plan_add_mount and plan_add_rule do): a mount added without it stays
 * noexec, and fsrules.c judges from these flags.
 */
static void plan_mark_exec(struct sandbox_plan *p)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		p->mounts[i].exec = false;
	for (size_t r = 0; r < p->n_rules; r++) {
		if (!(p->rules[r].access & LL_FS_EXECUTE))
			continue;
		char real[PATH_MAX];
		const char *path = p->rules[r].path;
		size_t owner = owner_of(p, path);
		bool private = owner != SIZE_MAX && p->mounts[owner].kind == MOUNT_TMPFS;
		if (!private && realpath(path, real)) {
			path = real;
			owner = owner_of(p, path);
		}
		for (size_t i = 0; i < p->n_mounts; i++) {
			struct mount_entry *m = &p->mounts[i];
			if ((m->kind == MOUNT_BIND || m->kind == MOUNT_TMPFS) && (i == owner || path_under(m->dst, path)))
				m->exec = true;
		}
	}
}

int plan_add_mount(struct sandbox_plan *p, enum mount_kind kind, const char *src, const char *dst, bool ro,
		   bool is_dir)
{
	int r = add_mount(p, kind, src, dst, ro, is_dir, 0);
	if (r == 0)
		plan_mark_exec(p);
	return r;
}

int plan_add_rule(struct sandbox_plan *p, const char *path, uint64_t access)
{
	int r = add_rule(p, path, access);
	if (r == 0 && (access & LL_FS_EXECUTE))
		plan_mark_exec(p);
	return r;
}

/* Is the host's `path` visible through a bind already planned? (Under a
 * private tmpfs it is not: that shows an empty directory instead.) */
static bool covered(const struct sandbox_plan *p, const char *path)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].kind == MOUNT_BIND && path_under(path, p->mounts[i].dst))
			return true;
	return false;
}

/* "/a/./b/../c" -> "/a/c", in place, for an absolute path. Used only on
 * a link's target joined to its directory, which has no links itself. */
static void lexical_normalise(char *path)
{
	char *out = path + 1;
	const char *in = path + 1;
	while (*in) {
		const char *end = strchrnul(in, '/');
		size_t n = (size_t)(end - in);
		if (n == 0 || (n == 1 && in[0] == '.')) {
			/* skip */
		} else if (n == 2 && in[0] == '.' && in[1] == '.') {
			if (out > path + 1) {
				out--; /* the '/' that ended the last kept component */
				while (out > path + 1 && out[-1] != '/')
					out--;
			}
		} else {
			memmove(out, in, n);
			out += n;
			*out++ = '/';
		}
		in = *end ? end + 1 : end;
	}
	if (out > path + 1)
		out--;
	*out = '\0';
}

static bool has_link(const struct sandbox_plan *p, const char *dst)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].kind == MOUNT_SYMLINK && strcmp(p->mounts[i].dst, dst) == 0)
			return true;
	return false;
}

/*
 * A listed path is bound at its real location; the names that led there
 * through symlinks (/lib64 -> usr/lib64 on a merged-/usr system) are
 * recreated as the same symlinks wherever no bind shows them already, so
 * that the path as written, and the loader's own paths, still resolve
 * with `filesystem.baseline: false`. A link's target is followed the same
 * way, a bounded number of times.
 */
static int add_links_along(struct sandbox_plan *p, const char *path, int budget)
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);
	if (len >= sizeof(prefix) || budget <= 0)
		return 0;
	for (size_t i = 1; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		struct stat st;
		if (lstat(prefix, &st) < 0)
			return 0;
		if (!S_ISLNK(st.st_mode))
			continue;
		char target[PATH_MAX];
		ssize_t n = readlink(prefix, target, sizeof(target) - 1);
		if (n <= 0)
			return 0;
		target[n] = '\0';
		if (!covered(p, prefix) && !has_link(p, prefix) &&
		    add_mount(p, MOUNT_SYMLINK, target, prefix, true, false, 0) < 0)
			return -ENOMEM;
		/* The link's target, then what lay beyond the link. */
		char next[PATH_MAX];
		int w;
		if (target[0] == '/') {
			w = snprintf(next, sizeof(next), "%s%s", target, path + i);
		} else {
			char *slash = strrchr(prefix, '/');
			*slash = '\0';
			w = snprintf(next, sizeof(next), "%s/%s%s", prefix, target, path + i);
		}
		if (w < 0 || (size_t)w >= sizeof(next))
			return 0;
		lexical_normalise(next);
		return add_links_along(p, next, budget - 1);
	}
	return 0;
}

bool plan_shows(const struct sandbox_plan *p, const char *path)
{
	return covered(p, path);
}

static size_t depth(const char *path)
{
	size_t d = 0;
	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* Stable sort by depth: parents mount before children, and of two
 * entries for one path the later (more specific policy) one lands on top. */
static void sort_by_depth(struct mount_entry *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct mount_entry m = v[i];
		size_t d = depth(m.dst), j = i;
		for (; j > 0 && depth(v[j - 1].dst) > d; j--)
			v[j] = v[j - 1];
		v[j] = m;
	}
}

/* Resolve a host path; *exists=false when it is missing (not an error:
 * policy may name optional files such as ~/.gitconfig). */
static int resolve(const char *path, char *out, bool *exists, struct stat *st, struct error *err)
{
	if (!realpath(path, out)) {
		if (errno == ENOENT || errno == ENOTDIR) {
			*exists = false;
			return 0;
		}
		return error_sys(err, errno, "cannot resolve %s", path);
	}
	if (stat(out, st) < 0)
		return error_sys(err, errno, "cannot stat %s", out);
	*exists = true;
	return 0;
}

/* Does filesystem.deny hide the host path real (resolved)? Deny wins over
 * every grant: a read or write path beneath a denied one is not shown.
 * Its mount alone would not do: a deny is covered only where a bind shows
 * it, and /var/lib denied with /var/lib/dpkg read has no bind above it
 * to cover, so the grant's own bind would show what the policy hides. */
static bool plan_denied(const struct policy *pol, const char *real)
{
	for (size_t i = 0; i < pol->filesystem.deny.n; i++) {
		char d[PATH_MAX];
		if (realpath(pol->filesystem.deny.v[i].path, d) && path_under(real, d))
			return true;
	}
	return false;
}

static char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (h && h[0] == '/')
		return strdup(h);
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir ? strdup(pw->pw_dir) : NULL;
}

/* filesystem.sockets: each bound read-only at its own path (connecting
 * needs no write access to the mount, only to the inode) and remembered
 * for the guard, which lets these and no other host socket be reached. */
static int plan_sockets(struct sandbox_plan *p, const struct policy *pol, struct error *err)
{
	const struct policy_paths *ps = &pol->filesystem.sockets;
	p->sockguard = true;
	if (ps->n > PLAN_MAX_SOCKETS)
		return error_set(err, E2BIG, "%s:%u:%u: filesystem.sockets: names %zu sockets; at most %d",
				 ps->v[0].loc.file, ps->v[0].loc.line, ps->v[0].loc.col, ps->n, PLAN_MAX_SOCKETS);
	if (ps->n && !(p->sockets = calloc(ps->n, sizeof(*p->sockets))))
		return error_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < ps->n; i++) {
		const struct policy_loc *loc = &ps->v[i].loc;
		char real[PATH_MAX];
		struct stat st;
		if (!realpath(ps->v[i].path, real) || stat(real, &st) < 0)
			return error_sys(err, errno, "%s:%u:%u: filesystem.sockets[%zu]: cannot reach %s", loc->file,
					 loc->line, loc->col, i, ps->v[i].path);
		if (!S_ISSOCK(st.st_mode))
			return error_set(err, ENOTSOCK, "%s:%u:%u: filesystem.sockets[%zu]: %s is not a unix socket",
					 loc->file, loc->line, loc->col, i, real);
		if (plan_denied(pol, real))
			continue; /* deny wins: neither shown nor reachable */
		if (!(p->sockets[p->n_sockets] = strdup(real)))
			return error_set(err, ENOMEM, "out of memory");
		p->n_sockets++;
		if (add_mount(p, MOUNT_BIND, real, real, true, false, 0) < 0)
			return error_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

int plan_add_socket(struct sandbox_plan *p, const char *path)
{
	if (p->n_sockets >= PLAN_MAX_SOCKETS + 1)
		return -E2BIG;
	char **v = realloc(p->sockets, (p->n_sockets + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->sockets = v;
	if (!(v[p->n_sockets] = strdup(path)))
		return -ENOMEM;
	p->n_sockets++;
	return 0;
}

bool intercepts(const struct policy *pol)
{
	for (size_t i = 0; i < pol->network.n_endpoints; i++)
		if (pol->network.endpoints[i].intercept)
			return true;
	return false;
}

int plan_env_set(struct sandbox_plan *p, const char *name, const char *value)
{
	char *entry;
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return -ENOMEM;
	size_t nlen = strlen(name), n = 0;
	for (; p->envp && p->envp[n]; n++)
		if (strncmp(p->envp[n], name, nlen) == 0 && p->envp[n][nlen] == '=') {
			free(p->envp[n]);
			p->envp[n] = entry;
			return 0;
		}
	char **grown = realloc(p->envp, (n + 2) * sizeof(char *));
	if (!grown) {
		free(entry);
		return -ENOMEM;
	}
	grown[n] = entry;
	grown[n + 1] = NULL;
	p->envp = grown;
	return 0;
}

static int build_env(struct sandbox_plan *p, const struct policy *pol)
{
	size_t cap = pol->process.n_env_pass + pol->process.n_env_set + 32, n = 0;
	char **env = calloc(cap, sizeof(char *));
	if (!env)
		return -ENOMEM;
	p->envp = env;
	bool have_path = false, have_home = false;
	for (size_t i = 0; i < pol->process.n_env_set; i++) {
		const struct policy_env_var *v = &pol->process.env_set[i];
		if (asprintf(&env[n++], "%s=%s", v->name, v->value) < 0)
			return env[--n] = NULL, -ENOMEM;
		have_path |= strcmp(v->name, "PATH") == 0;
		have_home |= strcmp(v->name, "HOME") == 0;
	}
	for (size_t i = 0; i < pol->process.n_env_pass; i++) {
		const char *name = pol->process.env_pass[i];
		const char *val = getenv(name);
		if (!val)
			continue;
		if (asprintf(&env[n++], "%s=%s", name, val) < 0)
			return env[--n] = NULL, -ENOMEM;
		have_path |= strcmp(name, "PATH") == 0;
		have_home |= strcmp(name, "HOME") == 0;
	}
	if (!have_path && !(env[n++] = strdup("PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin")))
		return -ENOMEM;
	if (!have_home && p->home && asprintf(&env[n++], "HOME=%s", p->home) < 0)
		return env[--n] = NULL, -ENOMEM;
	if (!(env[n++] = strdup("AIRLOCK_SANDBOX=process")))
		return -ENOMEM;
	if (p->proxy_port) {
		/* Both spellings: tools disagree on which they read. */
		static const char *const proxy_vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
							  "http_proxy", "https_proxy", "all_proxy" };
		for (size_t i = 0; i < ARRAY_SIZE(proxy_vars); i++)
			if (asprintf(&env[n++], "%s=http://127.0.0.1:%u", proxy_vars[i], p->proxy_port) < 0)
				return env[--n] = NULL, -ENOMEM;
		/* Empty on purpose: inside the sandbox only the proxy's port can
		 * be reached at all, so nothing may bypass it, loopback included
		 * (the host's loopback is reached through the proxy when
		 * allow_private names it). */
		if (!(env[n++] = strdup("NO_PROXY=")) || !(env[n++] = strdup("no_proxy=")))
			return -ENOMEM;
	}
	if (intercepts(pol)) {
		/* Each tool's own variable where it has one: npm's (which
		 * wins over a cafile in an npmrc, where NODE_EXTRA_CA_CERTS
		 * does not), pip's, Cargo's, Deno's. Programs that read only
		 * the system's bundle find it in its place (mount.c). */
		static const char *const ca_vars[] = { "SSL_CERT_FILE",	    "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
						       "GIT_SSL_CAINFO",    "CURL_CA_BUNDLE",	  "NPM_CONFIG_CAFILE",
						       "PIP_CERT",	    "CARGO_HTTP_CAINFO",  "DENO_CERT" };
		for (size_t i = 0; i < ARRAY_SIZE(ca_vars); i++)
			if (asprintf(&env[n++], "%s=" PLAN_CA_BUNDLE, ca_vars[i]) < 0)
				return env[--n] = NULL, -ENOMEM;
	}
	env[n] = NULL;
	return 0;
}

static int plan_ids(struct sandbox_plan *p, const struct policy *pol, const struct stat *ws, struct error *err)
{
	p->privileged = geteuid() == 0;
	if (!p->privileged) {
		if (pol->sandbox.host_uid >= 0 && (uid_t)pol->sandbox.host_uid != getuid())
			return error_set(err, EPERM,
					 "%s: sandbox.host_uid: only a sandbox started as root can choose its host uid",
					 pol->file);
		p->host_uid = p->inner_uid = geteuid();
		p->host_gid = p->inner_gid = getegid();
		return 0;
	}
	/* Root: never run the agent as host root. Default to the workspace's
	 * owner (so `sudo airlock run` in a user's project writes files as
	 * that user), else nobody. */
	if (pol->sandbox.host_uid > 0)
		p->host_uid = (uid_t)pol->sandbox.host_uid;
	else
		p->host_uid = ws->st_uid != 0 ? ws->st_uid : NOBODY;
	if (pol->sandbox.host_gid > 0)
		p->host_gid = (gid_t)pol->sandbox.host_gid;
	else
		p->host_gid = ws->st_uid != 0 && ws->st_gid != 0 ? ws->st_gid : NOBODY;
	if (p->host_uid == 0 || p->host_gid == 0)
		return error_set(err, EPERM, "refusing to map the sandbox to host root");
	p->inner_uid = p->host_uid;
	p->inner_gid = p->host_gid;
	return 0;
}

/* Observe mode: cover path read-only (or hide it) when it exists. */
static int observe_cover(struct sandbox_plan *p, const char *path, bool hide)
{
	char real[PATH_MAX];
	struct stat st;
	if (!path || !realpath(path, real) || stat(real, &st) < 0)
		return 0;
	if (hide)
		return add_mount(p, S_ISDIR(st.st_mode) ? MOUNT_HIDE_DIR : MOUNT_HIDE_FILE, NULL, real, true, false, 0);
	return add_mount(p, MOUNT_BIND, real, real, true, S_ISDIR(st.st_mode), 0);
}

int plan_hide_own(struct sandbox_plan *p, const char *const *paths, size_t n)
{
	bool added = false;
	/* Directories first: a file beneath one hidden is hidden with it. */
	for (size_t k = 0; k < 2 * n; k++) {
		char real[PATH_MAX];
		struct stat st;
		if (!paths[k % n] || !realpath(paths[k % n], real) || stat(real, &st) < 0 ||
		    S_ISDIR(st.st_mode) != (k < n))
			continue;
		/* Only where the agent could write: elsewhere the sandbox shows
		 * none of it already (a private home hides the default log). */
		bool writable = false, hidden = false;
		for (size_t i = 0; i < p->n_mounts; i++) {
			writable |= p->mounts[i].kind == MOUNT_BIND && !p->mounts[i].readonly &&
				    path_under(real, p->mounts[i].dst);
			hidden |= p->mounts[i].kind == MOUNT_HIDE_DIR && path_under(real, p->mounts[i].dst);
		}
		if (!writable || hidden)
			continue;
		if (add_mount(p, S_ISDIR(st.st_mode) ? MOUNT_HIDE_DIR : MOUNT_HIDE_FILE, NULL, real, true, false, 0) < 0)
			return -ENOMEM;
		added = true;
	}
	if (added)
		sort_by_depth(p->mounts, p->n_mounts);
	return 0;
}

int plan_observe(struct sandbox_plan *p, const struct policy *pol, const char *audit_dir, const char *authority_dir)
{
	/* Only the workspace and the policy's write paths stay, and only
	 * started as root: shown at their own place (so nothing changes) but
	 * through an idmapped mount (idmap.c), so that the sandbox's
	 * unprivileged uid writes there as it would in enforce mode. */
	size_t kept = 0;
	for (size_t i = 0; i < p->n_mounts; i++) {
		struct mount_entry *m = &p->mounts[i];
		if (p->privileged && m->kind == MOUNT_BIND && m->user_path && !m->readonly) {
			p->mounts[kept++] = *m;
			continue;
		}
		free(m->src);
		free(m->dst);
		if (m->tree_fd >= 0)
			close(m->tree_fd);
	}
	p->n_mounts = kept;
	/* Started as root, the agent runs as an unprivileged uid, to which
	 * root's home is closed: every tool that writes a cache or a dot file
	 * there failed, so an observed run predicted nothing of an enforced
	 * one (whose home is private scratch the agent owns). The home is
	 * shown through an idmapped bind, as the workspace is: written as an
	 * unprivileged caller's observed run writes its own. */
	if (p->privileged && p->home && !covered(p, p->home)) {
		if (add_mount(p, MOUNT_BIND, p->home, p->home, false, true, 0) < 0)
			return -ENOMEM;
		p->mounts[p->n_mounts - 1].user_path = true;
	}
	for (size_t i = 0; i < p->n_rules; i++)
		free(p->rules[i].path);
	p->n_rules = 0;
	/* filesystem.protect is a decision of the policy too: not applied
	 * (no read-only covers, no guard) in observe mode. */
	protect_set_free(&p->protect);
	p->observe = true;
	p->sockguard = false; /* observe mode records, it does not refuse */
	/* airlock's own files are no decision of the policy, and stay out of
	 * the agent's hands: the policy file read-only (a mount point, it
	 * cannot be renamed over or unlinked either: an agent that rewrote it
	 * during an observed run would weaken every enforced run after it),
	 * the audit log and network log read-only (the record of this run),
	 * and the authority key hidden (with it, any log could be forged). */
	const char *policy_file = pol->file && strcmp(pol->file, "<default>") != 0 ? pol->file : NULL;
	if (observe_cover(p, policy_file, false) < 0 || observe_cover(p, audit_dir, false) < 0 ||
	    observe_cover(p, pol->network.log, false) < 0 || observe_cover(p, authority_dir, true) < 0)
		return -ENOMEM;
	/* The enterprise files, for the same reason as the policy file. */
	for (size_t i = 0; i < pol->n_layer_files; i++)
		if (observe_cover(p, pol->layer_files[i], false) < 0)
			return -ENOMEM;
	sort_by_depth(p->mounts, p->n_mounts);
	return 0;
}

/* The workspace must exist and be a directory; ws (PATH_MAX bytes) gets
 * its resolved path, ws_st its stat. */
static int check_workspace(const struct policy *pol, char *ws, struct stat *ws_st, struct error *err)
{
	bool exists;
	int r;

	if ((r = resolve(pol->sandbox.workspace, ws, &exists, ws_st, err)) < 0)
		return r;
	if (!exists || !S_ISDIR(ws_st->st_mode))
		return error_set(err, ENOENT, "%s:%u:%u: sandbox.workspace: %s is not an existing directory",
				 pol->sandbox.workspace_loc.file, pol->sandbox.workspace_loc.line,
				 pol->sandbox.workspace_loc.col, pol->sandbox.workspace);
	if (strcmp(ws, "/") == 0)
		return error_set(err, EINVAL, "sandbox.workspace: refusing to use / as the workspace");
	/* Started from the home directory (or above it) without naming a
	 * workspace, the agent would get the whole home read-write: keys,
	 * cloud credentials, shell start-up files, every other project.
	 * Refused unless the policy names it. */
	if (pol->sandbox.workspace_loc.line == 0) {
		_cleanup_free_ char *h = home_dir();
		char hreal[PATH_MAX];
		bool hexists = false;
		struct stat hst;
		struct error ignore = { 0 };
		if (h && resolve(h, hreal, &hexists, &hst, &ignore) == 0 && hexists && strcmp(hreal, "/") != 0 &&
		    path_under(hreal, ws))
			return error_set(err, EINVAL,
					 "the workspace would be %s, the current directory, which holds your home %s: "
					 "the agent could read and change every file in it, your keys included. Run "
					 "airlock from a project directory, or name the workspace with sandbox.workspace "
					 "in a policy file",
					 ws, hreal);
	}
	return 0;
}

/* The system baseline, read-only. */
static int plan_baseline(struct sandbox_plan *p, const struct policy *pol, struct error *err)
{
	struct stat st;

	if (!pol->filesystem.baseline)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(baseline_dirs); i++) {
		if (stat(baseline_dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (add_mount(p, MOUNT_BIND, baseline_dirs[i], baseline_dirs[i], true, true, 0) < 0)
			goto oom;
	}
	for (size_t i = 0; i < ARRAY_SIZE(baseline_maybe_links); i++) {
		const char *d = baseline_maybe_links[i];
		if (lstat(d, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlink(d, target, sizeof(target) - 1);
			if (n < 0)
				continue;
			target[n] = '\0';
			if (add_mount(p, MOUNT_SYMLINK, target, d, true, false, 0) < 0)
				goto oom;
		} else if (S_ISDIR(st.st_mode)) {
			if (add_mount(p, MOUNT_BIND, d, d, true, true, 0) < 0)
				goto oom;
		}
	}
	return 0;
oom:
	return error_set(err, ENOMEM, "out of memory");
}

/* Private /tmp and a private, empty home. */
static int plan_private_dirs(struct sandbox_plan *p, struct error *err)
{
	char real[PATH_MAX];
	struct stat st;
	bool exists;
	_cleanup_free_ char *home = NULL;

	if (add_mount(p, MOUNT_TMPFS, NULL, "/tmp", false, true, 01777) < 0)
		goto oom;
	home = home_dir();
	if (home && resolve(home, real, &exists, &st, err) == 0 && exists && strcmp(real, "/") != 0) {
		/* Hidden behind an empty private tmpfs, unless a bind (the
		 * workspace, say) shows it already. */
		if (!covered(p, real) && add_mount(p, MOUNT_TMPFS, NULL, real, false, true, 0700) < 0)
			goto oom;
		if (!(p->home = strdup(real)))
			goto oom;
	}
	return 0;
oom:
	return error_set(err, ENOMEM, "out of memory");
}

/* The workspace and the policy's own paths. */
static int plan_user_paths(struct sandbox_plan *p, const struct policy *pol, const char *ws, struct error *err)
{
	char real[PATH_MAX];
	struct stat st;
	bool exists;
	int r;

	if (add_mount(p, MOUNT_BIND, ws, ws, false, true, 0) < 0)
		goto oom;
	p->mounts[p->n_mounts - 1].user_path = true;
	const struct policy_paths *lists[2] = { &pol->filesystem.read, &pol->filesystem.write };
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++) {
			if ((r = resolve(lists[l]->v[i].path, real, &exists, &st, err)) < 0)
				return r;
			if (!exists || plan_denied(pol, real))
				continue;
			/* `read` naming the workspace itself: the workspace is
			 * read-only (a server's sandbox in a session, mcpgw.c).
			 * Its own bind is made read-only rather than covered by
			 * a second one, so that started as root it keeps its
			 * idmapping (idmap.c) and stays readable. */
			if (l == 0 && strcmp(real, ws) == 0) {
				for (size_t k = 0; k < p->n_mounts; k++)
					if (p->mounts[k].kind == MOUNT_BIND && strcmp(p->mounts[k].dst, ws) == 0)
						p->mounts[k].readonly = true;
				continue;
			}
			if (add_mount(p, MOUNT_BIND, real, real, l == 0, S_ISDIR(st.st_mode), 0) < 0)
				goto oom;
			p->mounts[p->n_mounts - 1].user_path = true;
		}
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++) {
			bool ex;
			if ((r = resolve(lists[l]->v[i].path, real, &ex, &st, err)) < 0)
				return r;
			if ((!ex || !plan_denied(pol, real)) && add_links_along(p, lists[l]->v[i].path, 8) < 0)
				goto oom;
		}
	return 0;
oom:
	return error_set(err, ENOMEM, "out of memory");
}

/* Denied paths that would otherwise be visible are covered last, and
 * so is the policy file itself, and the enterprise files that
 * narrowed it: the agent neither reads its rules nor edits them for
 * the next run. */
static int plan_hides(struct sandbox_plan *p, const struct policy *pol, struct error *err)
{
	char real[PATH_MAX];
	struct stat st;
	bool exists;
	int r;

	for (size_t i = 0; i <= pol->filesystem.deny.n + pol->n_layer_files; i++) {
		size_t nd = pol->filesystem.deny.n;
		const char *path = i < nd ? pol->filesystem.deny.v[i].path
			: i > nd ? pol->layer_files[i - nd - 1]
			: pol->file && strcmp(pol->file, "<default>") != 0 ? pol->file : NULL;
		if (!path)
			continue;
		if ((r = resolve(path, real, &exists, &st, err)) < 0)
			return r;
		if (!exists || !covered(p, real))
			continue;
		if (add_mount(p, S_ISDIR(st.st_mode) ? MOUNT_HIDE_DIR : MOUNT_HIDE_FILE, NULL, real, true, false,
			      0) < 0)
			return error_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

/* Landlock rights, mirroring the mounts. */
static int plan_landlock(struct sandbox_plan *p, const struct policy *pol, const char *ws, struct error *err)
{
	char real[PATH_MAX];
	bool exec_default = !pol->process.exec_set;

	if (add_rule(p, "/", LL_FS_READ_DIR) < 0)
		goto oom;
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct mount_entry *m = &p->mounts[i];
		if (m->kind != MOUNT_BIND && m->kind != MOUNT_TMPFS)
			continue;
		uint64_t a = m->readonly ? LL_READ : LL_RW;
		if (exec_default && m->kind == MOUNT_BIND && path_under(m->dst, ws))
			a |= LL_FS_EXECUTE;
		if (add_rule(p, m->dst, a) < 0)
			goto oom;
	}
	if (exec_default) {
		for (size_t i = 0; i < ARRAY_SIZE(default_exec_dirs); i++)
			if (pol->filesystem.baseline && add_rule(p, default_exec_dirs[i], LL_READ | LL_FS_EXECUTE) < 0)
				goto oom;
	} else {
		for (size_t i = 0; i < pol->process.exec.n; i++)
			if (add_rule(p, pol->process.exec.v[i].path, LL_FS_READ_FILE | LL_FS_EXECUTE) < 0)
				goto oom;
		/* The kernel opens an ELF interpreter with exec rights. */
		for (size_t i = 0; i < ARRAY_SIZE(dynamic_loaders); i++)
			if (realpath(dynamic_loaders[i], real) && add_rule(p, real, LL_FS_READ_FILE | LL_FS_EXECUTE) < 0)
				goto oom;
	}
	static const char *const dev_rw[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom" };
	for (size_t i = 0; i < ARRAY_SIZE(dev_rw); i++)
		if (add_rule(p, dev_rw[i], LL_FS_READ_FILE | LL_FS_WRITE_FILE) < 0)
			goto oom;
	if (add_rule(p, "/dev/tty", LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV) < 0 ||
	    add_rule(p, "/dev/pts", LL_READ | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV) < 0 ||
	    add_rule(p, "/dev/shm", LL_RW) < 0 || add_rule(p, "/proc", LL_READ) < 0)
		goto oom;
	return 0;
oom:
	return error_set(err, ENOMEM, "out of memory");
}

/* Where the command starts, its limits and its network. */
static int plan_process(struct sandbox_plan *p, const struct policy *pol, const char *ws, struct error *err)
{
	char real[PATH_MAX];

	/* Where the command starts: the caller's directory if the sandbox
	 * shows it, else the workspace. */
	char cwd[PATH_MAX];
	bool visible = getcwd(cwd, sizeof(cwd)) && realpath(cwd, real) && covered(p, real);
	p->cwd = strdup(visible ? real : ws);
	p->hostname = strdup("airlock");
	if (!p->cwd || !p->hostname)
		goto oom;

	/* Limits. Core dumps are always off: a dump could carry a secret
	 * out of a process's memory into the workspace. */
	const struct policy_limits *lim = &pol->sandbox.limits;
	p->rlimits[p->n_rlimits++] = (typeof(p->rlimits[0])){ RLIMIT_CORE, 0 };
	if (lim->open_files)
		p->rlimits[p->n_rlimits++] = (typeof(p->rlimits[0])){ RLIMIT_NOFILE, lim->open_files };
	if (lim->cpu_seconds)
		p->rlimits[p->n_rlimits++] = (typeof(p->rlimits[0])){ RLIMIT_CPU, lim->cpu_seconds };

	if (policy_net_mode(pol) != POLICY_NET_NONE)
		p->proxy_port = PROXY_PORT;
	p->transparent = policy_net_mode(pol) == POLICY_NET_TRANSPARENT;
	if (intercepts(pol) && add_rule(p, "/run/airlock", LL_READ) < 0)
		goto oom;
	return 0;
oom:
	return error_set(err, ENOMEM, "out of memory");
}

int sandbox_host_ids(const struct policy *pol, uid_t *uid, gid_t *gid, struct error *err)
{
	struct stat ws_st;
	char ws[PATH_MAX];
	struct sandbox_plan p = { 0 };
	int r = check_workspace(pol, ws, &ws_st, err);
	if (r >= 0 && (r = plan_ids(&p, pol, &ws_st, err)) >= 0) {
		*uid = p.host_uid;
		*gid = p.host_gid;
	}
	return r;
}

int plan_build(const struct policy *pol, char *const *argv, enum seccomp_trace trace, struct sandbox_plan *p,
	       struct error *err)
{
	struct stat ws_st;
	int r;

	memset(p, 0, sizeof(*p));
	p->guard_fd = -1;
	p->review_tree_fd = -1;
	p->argv = (char **)argv;
	p->trace = trace;
	/* Only a ptracing supervisor holds the command: at WRITES its first
	 * exec is a user notification, which waits for the supervisor
	 * anyway. */
	p->hold = trace == SECCOMP_TRACE_ALL;

	char ws[PATH_MAX];
	if ((r = check_workspace(pol, ws, &ws_st, err)) < 0)
		return r;

	if ((r = plan_ids(p, pol, &ws_st, err)) < 0)
		return r;
	if (!(p->workspace = strdup(ws)))
		goto oom;

	if ((r = plan_baseline(p, pol, err)) < 0 || (r = plan_private_dirs(p, err)) < 0 ||
	    (r = plan_user_paths(p, pol, ws, err)) < 0)
		return r;
	if ((r = plan_sockets(p, pol, err)) < 0)
		return r;
	/* Parents before children: a workspace under /tmp or home lands on
	 * top of the private tmpfs, a read-only path under the workspace on
	 * top of the workspace. */
	sort_by_depth(p->mounts, p->n_mounts);

	if ((r = plan_hides(p, pol, err)) < 0)
		return r;

	/* Protected paths last: read-only over whatever the workspace and
	 * the policy's paths show there. In review mode the workspace is a
	 * layer nothing leaves unreviewed: a hand-off file written there is
	 * held and flagged (review_run.c), not refused. */
	const char *ws_why;
	if (review_run_mode(pol, &ws_why) == POLICY_WS_DIRECT && (r = protect_plan(p, pol, ws, err)) < 0)
		return r;

	if ((r = plan_landlock(p, pol, ws, err)) < 0 || (r = plan_process(p, pol, ws, err)) < 0)
		return r;
	plan_mark_exec(p);
	if (build_env(p, pol) < 0)
		goto oom;
	return 0;
oom:
	return error_set(err, ENOMEM, "out of memory");
}
