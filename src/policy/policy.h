/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_POLICY_POLICY_H
#define AIRLOCK_POLICY_POLICY_H

/*
 * The effective policy: what the YAML says after defaults are applied and
 * every path is made absolute. The sandbox reads only this structure; it
 * never sees YAML.
 *
 * Ownership: a struct policy owns every string and array reachable from it;
 * policy_free() releases all of it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

#define POLICY_VERSION 1

/* Where a value came from, for diagnostics and for `policy check` output.
 * file is borrowed from struct policy.file (or the literal "<default>"). */
struct policy_loc {
	const char *file;
	unsigned line; /* 1-based; 0 = built-in default */
	unsigned col;  /* 1-based */
	const char *note; /* borrowed; when set, the printer writes this comment
	                   * instead of file:line (`policy suggest` says why an
	                   * entry was added) */
	const char *layer; /* static; when set (a layered policy), the printer
	                    * writes "LAYER file:line": "developer", "enterprise" */
};

enum policy_boundary {
	POLICY_BOUNDARY_PROCESS = 0,
	POLICY_BOUNDARY_GVISOR,
	POLICY_BOUNDARY_MICROVM,
};

/* sandbox.workspace_mode: where the agent's writes to the workspace go. */
enum policy_workspace_mode {
	POLICY_WS_DIRECT = 0, /* to the workspace itself */
	POLICY_WS_REVIEW,     /* to a copy-on-write layer a human reviews and applies (docs/handoff.md) */
	POLICY_WS_HOLD,       /* to that layer; what is not flagged lands at exit, the flagged is held */
};

enum policy_mode {
	POLICY_MODE_ENFORCE = 0,
	POLICY_MODE_LEARN,   /* enforce, and report what was denied */
	POLICY_MODE_OBSERVE, /* nothing enforced: decisions are only recorded */
};

struct policy_path {
	char *path; /* absolute, normalised (no "." / ".." / "//", no trailing "/") */
	struct policy_loc loc;
};

struct policy_paths {
	struct policy_path *v;
	size_t n;
};

struct policy_env_var {
	char *name;
	char *value;
	struct policy_loc loc;
};

/* 0 in any field means "no limit". */
struct policy_limits {
	uint64_t memory_bytes;
	uint64_t pids;
	uint64_t open_files;
	uint64_t cpu_seconds;
	uint64_t wall_seconds;
};

/* ---- network (the egress proxy) ---- */

enum policy_net_mode {
	POLICY_NET_NONE = 0,     /* no `network` section: no network at all */
	POLICY_NET_PROXY,        /* the agent reaches the proxy through HTTP(S)_PROXY */
	POLICY_NET_TRANSPARENT,  /* every TCP connection is redirected to the proxy */
};

/* A request rule inside an endpoint. Empty methods = any method. */
struct policy_net_rule {
	char *id;             /* "network.endpoints[2].rules[0]" unless given */
	char **methods;       /* upper-case, NULL-terminated; NULL = any */
	size_t n_methods;
	char *path;           /* glob: '*' within a segment, '**' across; NULL = any */
	char *query;          /* glob over the raw query string; NULL = any */
	bool websocket;       /* Upgrade: websocket allowed on matching requests */
	struct policy_loc loc;
};

struct policy_endpoint {
	char *id;             /* "network.endpoints[2]" unless given */
	char *host;           /* lower-case, no trailing dot; "*.example.com" or exact
	                       * (a DNS name, or an IP address in canonical form) */
	uint16_t *ports;      /* default {80, 443} */
	size_t n_ports;
	bool intercept;       /* tls: intercept */
	/* protocol: mcp: POST bodies are MCP JSON-RPC messages, decided by
	 * mcp.servers.<mcp_server> (src/proxy/mcp_http.c); NULL otherwise. */
	char *mcp_server;
	struct policy_loc mcp_loc; /* of the protocol field */
	struct policy_net_rule *rules; /* empty = every request to host:port */
	size_t n_rules;
	struct policy_loc loc;
};

/* An address range opted in for private/loopback/link-local destinations. */
struct policy_cidr {
	int family;           /* AF_INET or AF_INET6 */
	uint8_t addr[16];     /* network byte order; first 4 bytes for AF_INET */
	unsigned prefix;      /* 0..32 or 0..128 */
	uint16_t port;        /* 0 = any port */
	struct policy_loc loc;
};

/* A fixed name -> address mapping the proxy uses instead of DNS (like
 * curl --resolve); used to pin names and by tests. */
struct policy_resolve {
	char *host;
	char *addr;           /* numeric IPv4 or IPv6 */
	struct policy_loc loc;
};

struct policy_network {
	enum policy_net_mode mode;
	struct policy_endpoint *endpoints;
	size_t n_endpoints;
	struct policy_cidr *allow_private;
	size_t n_allow_private;
	struct policy_resolve *resolve;
	size_t n_resolve;
	char *upstream_ca;    /* extra PEM bundle trusted for upstream TLS, or NULL */
	uint64_t max_body;    /* bytes of each body scanned for leaks (default 1 MiB) */
	bool allow_compressed; /* compressed request bodies pass unscanned (default false) */
	char *log;            /* path of the JSON-lines decision log, or NULL */
	struct policy_loc loc;
};

/* ---- credentials (the broker in the egress proxy) ---- */

enum policy_cred_source {
	POLICY_CRED_ENV = 0,  /* source: env:NAME, the supervisor's environment */
	POLICY_CRED_FILE,     /* source: file:PATH, read by the supervisor */
	POLICY_CRED_COMMAND,  /* command: [argv...], run by the supervisor; stdout */
};

enum policy_cred_inject {
	POLICY_INJECT_PLACEHOLDER = 0, /* the agent sends a placeholder; the proxy swaps it */
	POLICY_INJECT_ALWAYS,          /* the proxy adds the secret to matching requests */
};

enum policy_cred_where {
	POLICY_CRED_HEADER = 0, /* header: NAME with template "... {secret} ..." */
	POLICY_CRED_BASIC,      /* basic: {username: U}: Authorization: Basic base64(U:secret) */
	POLICY_CRED_QUERY,      /* query: PARAM: ?PARAM=secret */
};

/* Git smart HTTP operations a binding allows. */
struct policy_git_binding {
	char **repos;         /* path globs of repositories ("/acme/widget.git",
	                       * "/acme/" then "**"), NULL-terminated; NULL = any repository */
	size_t n_repos;
	bool fetch;           /* clone and fetch (git-upload-pack); default true */
	char **push;          /* ref globs that may be updated ("refs/heads/agent/" then "**"),
	                       * NULL-terminated; NULL = no push at all */
	size_t n_push;
	bool delete_refs;     /* `delete: true`: a matching ref may be deleted; default false */
	bool tags;            /* `tags: true`: refs/tags/... may be pushed (created only); default false */
	struct policy_loc loc;
};

/* Where and for which requests a credential may be used. */
struct policy_cred_binding {
	char *id;             /* "credentials[0].bindings[1]" unless given */
	char *host;           /* exact or "*.example.com", normalised like endpoint hosts */
	uint16_t port;        /* default 443 */
	enum policy_cred_where where;
	char *header;         /* HEADER: the header's name (default "Authorization") */
	char *tmpl;           /* HEADER: value template holding "{secret}" once (default "Bearer {secret}") */
	char *username;       /* BASIC: the user name (may be empty) */
	char *query;          /* QUERY: the parameter's name */
	char **methods;       /* upper-case, NULL-terminated; NULL = any method */
	size_t n_methods;
	char **paths;         /* path globs, NULL-terminated; NULL = any path */
	size_t n_paths;
	struct policy_git_binding *git; /* NULL unless `git:` is given (then only git
	                                 * smart HTTP requests it allows carry the secret) */
	struct policy_loc loc;
};

struct policy_credential {
	char *name;           /* [a-z0-9_-]{1,64}, unique */
	enum policy_cred_source source;
	char *source_arg;     /* ENV: the variable's name; FILE: absolute path */
	char **command;       /* COMMAND: argv, NULL-terminated (argv[0] absolute or found in PATH) */
	size_t n_command;
	char *env;            /* the variable the agent sees holding the placeholder, or NULL */
	enum policy_cred_inject inject;
	struct policy_cred_binding *bindings;
	size_t n_bindings;
	struct policy_loc loc;
};

struct policy {
	char *file;   /* path of the policy file, or "<default>" */
	char *dir;    /* directory relative paths were resolved against */
	int version;
	char *name;

	struct {
		enum policy_boundary boundary;
		char *workspace;            /* absolute */
		struct policy_loc workspace_loc;
		enum policy_mode mode;
		enum policy_workspace_mode workspace_mode;
		int64_t host_uid;           /* -1 = auto (docs/policy.md) */
		int64_t host_gid;           /* -1 = auto */
		struct policy_limits limits;
	} sandbox;

	struct {
		bool baseline;              /* bind the system baseline read-only */
		struct policy_paths read;   /* extra read-only paths */
		struct policy_paths write;  /* extra read-write paths (workspace is implicit) */
		struct policy_paths deny;   /* hidden even when under read/write paths */
		/* Protected paths: read-only inside the sandbox (docs/handoff.md).
		 * protect holds globs relative to the workspace in .path ("**" + "/"
		 * for any depth), added to the hand-off table's rows unless
		 * protect_defaults is false; protect_build adds the table's
		 * opt-in rows (build entry points). */
		struct policy_paths protect;
		bool protect_defaults;
		bool protect_build;
		/* Host unix sockets made reachable, each bound at its own path
		 * ($NAME and ${NAME} expanded from airlock's environment when
		 * the policy is loaded). No other host socket is. */
		struct policy_paths sockets;
	} filesystem;

	struct {
		bool exec_set;              /* false: exec from baseline + workspace */
		struct policy_paths exec;   /* Landlock EXECUTE granted beneath these */
		char **env_pass;            /* NULL-terminated names copied from the caller */
		size_t n_env_pass;
		struct policy_env_var *env_set;
		size_t n_env_set;
		struct policy_loc *env_pass_loc; /* n_env_pass entries, parallel to env_pass */
		bool git_identity;          /* git_identity: host: the host's git user.name/user.email */
	} process;

	struct policy_network network;

	struct policy_mcp *mcp;             /* the mcp section (policy/mcp.h), or NULL */

	struct policy_credential *credentials;
	size_t n_credentials;

	struct {
		char *agent;                /* the agent's name in records and certificates, or NULL */
		bool header;                /* the proxy adds a signed Airlock-Identity header */
	} identity;

	struct {
		bool enabled;               /* write the signed decision log (default true) */
		char *dir;                  /* absolute: write it here, or NULL for the state directory */
		uint64_t max_size;          /* bytes the log may reach; then the run ends (default 1 GiB) */
	} audit;

	/* Enterprise files this policy was narrowed by (policy/layer.h), owned:
	 * the locs of entries they contributed borrow these names. */
	char **layer_files;
	size_t n_layer_files;

	/* Where each single-valued setting came from (line 0: built-in default). */
	struct {
		struct policy_loc version, name, boundary, mode, workspace_mode, host_uid, host_gid;
		struct policy_loc memory, pids, open_files, cpu, wall;
		struct policy_loc baseline, exec, env_pass, env_set, protect_defaults, protect_build, git_identity;
		struct policy_loc net_mode, upstream_ca, max_body, allow_compressed, net_log;
		struct policy_loc agent, identity_header, audit_enabled, audit_dir, audit_max_size;
	} origin;
};

/* Context for resolving "~" and relative paths. Borrowed strings. */
struct policy_ctx {
	const char *home; /* invoking user's home directory */
	const char *cwd;  /* current directory: the default workspace */
	/* Loaded without airlock's environment (airlock-proxy, whose own is
	 * cleared): a socket path's $NAME is kept as written, unresolved;
	 * the sandbox's sockets are none of the proxy's business. */
	bool no_env;
};

/* Parse a policy file. On success *out is a new policy owned by the caller.
 * On failure err holds "FILE:LINE:COL: FIELD: what is wrong and what would
 * be valid" and the return value is negative. A relative path is opened
 * from ctx->cwd, and relative paths inside the file resolve against the
 * file's directory. docs/policy.md describes the schema and every rule. */
int policy_load_file(const char *path, const struct policy_ctx *ctx, struct policy **out,
		     struct error *err) WUR;

/* Same as policy_load_file for a buffer; `name` is used in diagnostics and
 * relative paths resolve against `dir` (itself relative to ctx->cwd; NULL
 * means ctx->cwd). buf and name are borrowed. */
int policy_load_buffer(const char *name, const char *dir, const char *buf, size_t len,
		       const struct policy_ctx *ctx, struct policy **out, struct error *err) WUR;

/* The built-in default policy: workspace = ctx->cwd read-write, system
 * baseline read-only, home hidden, no network, environment cleared to a
 * safe list. */
int policy_default(const struct policy_ctx *ctx, struct policy **out, struct error *err) WUR;

/* Whether p came from policy_default rather than a file (a helper that
 * reads the policy again loads the default too). */
bool policy_is_default(const struct policy *p);

/* Print the effective policy as YAML (with "# file:line" provenance
 * comments) to f. The output is a valid policy that parses back to the same
 * settings. */
void policy_print(const struct policy *p, FILE *f);

/* s as a YAML double-quoted scalar that reads back to s exactly. */
void policy_print_string(FILE *f, const char *s);

/* s as the text of a YAML comment: anything that could end the line or act
 * on a terminal becomes '?'. */
void policy_print_comment(FILE *f, const char *s);

void policy_free(struct policy *p);

static inline void policy_freep(struct policy **p)
{
	policy_free(*p);
}
#define _cleanup_policy_ __attribute__((cleanup(policy_freep)))

const char *policy_mode_name(enum policy_mode m);
const char *policy_workspace_mode_name(enum policy_workspace_mode m);
/* How much of the agent's writing needs a person before it reaches the
 * workspace: hold 0 (a hand-off file lands on one accept), direct 1 (a
 * hand-off file never lands), review 2 (nothing lands unreviewed). The
 * layering ceiling and `policy diff` both order the modes by it. Pure. */
int policy_workspace_mode_rank(enum policy_workspace_mode m);

/* The network mode a run uses. Observe mode without a network section
 * still puts the proxy in front of the sandbox (with no endpoints, so that
 * every request is recorded as one the policy would deny): the agent's
 * traffic is then seen, rather than cut off, which would be enforcing. */
static inline enum policy_net_mode policy_net_mode(const struct policy *p)
{
	if (p->network.mode == POLICY_NET_NONE && p->sandbox.mode == POLICY_MODE_OBSERVE)
		return POLICY_NET_PROXY;
	return p->network.mode;
}

/* The line `airlock run` and `airlock policy check` print on stderr for a
 * policy in observe mode. */
#define POLICY_OBSERVE_WARNING \
	"airlock: WARNING: observe mode: nothing is enforced; decisions are only recorded"

const char *policy_boundary_name(enum policy_boundary b);

/* The same secret: one source (variable, file, command and its arguments).
 * Layering keeps a credential only with the enterprise's source; the
 * prover counts another source as a new secret. */
bool policy_credential_same_source(const struct policy_credential *a, const struct policy_credential *b);

#endif
