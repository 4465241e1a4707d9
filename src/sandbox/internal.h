/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_SANDBOX_INTERNAL_H
#define AIRLOCK_SANDBOX_INTERNAL_H

/*
 * The plan: everything the child needs, computed by the supervisor before
 * clone() so the child does as little as possible between clone and
 * execve. The child only reads it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "policy/protect.h"
#include "sandbox/seccomp_bpf.h"
#include "policy/policy.h"
#include "util/buf.h"
#include "util/error.h"

enum mount_kind {
	MOUNT_BIND,       /* bind src (a host path) at dst */
	MOUNT_TMPFS,      /* empty private tmpfs at dst */
	MOUNT_HIDE_DIR,   /* empty read-only tmpfs over a directory */
	MOUNT_HIDE_FILE,  /* an empty read-only file over a file */
	MOUNT_SYMLINK,    /* a symlink dst -> src in the new root */
	MOUNT_PROTECT,    /* dst, as the sandbox already shows it, bound
	                   * read-only over itself (a protected path) */
};

struct mount_entry {
	enum mount_kind kind;
	char *src;       /* host path (BIND), link target (SYMLINK), NULL otherwise */
	char *dst;       /* absolute path inside the sandbox */
	bool readonly;
	bool is_dir;     /* BIND: mount point is a directory (else a file) */
	unsigned mode;   /* TMPFS: permission bits of its root */
	bool user_path;  /* named by the policy (workspace, read, write): idmapped when needed */
	int tree_fd;     /* prepared detached tree (idmapped), or -1 */
	bool overlay;    /* BIND of the workspace in review mode: an overlay
	                  * goes on top, with this bind as its lower layer */
	bool exec;       /* BIND, TMPFS: mounted without noexec, because a
	                  * Landlock rule grants execute within it (plan.c,
	                  * plan_mark_exec); false: noexec */
};

/* Landlock rule: grant `access` beneath path (a path inside the sandbox). */
struct ll_rule {
	char *path;
	uint64_t access;
};

struct sandbox_plan {
	struct mount_entry *mounts;
	size_t n_mounts;
	struct ll_rule *rules;
	size_t n_rules;

	uid_t inner_uid, host_uid;
	gid_t inner_gid, host_gid;
	bool privileged;   /* started as root: supervisor writes full maps */

	char **argv;       /* borrowed */
	char **envp;       /* owned */
	char *cwd;         /* inside path to chdir into */
	char *hostname;

	struct {
		int resource;
		rlim_t value;
	} rlimits[8];
	size_t n_rlimits;

	enum seccomp_trace trace; /* not OFF: seccomp denials are sent to the supervisor,
	                           * and file calls stop for its tracer (seccomp_bpf.h) */
	bool send_root;    /* READY carries the sandbox's root (PROTO_FD_ROOT) for the caller
	                    * (sandbox_opts.report_root) */
	bool hold;         /* after READY, wait for PROTO_START before the command starts
	                    * (SECCOMP_TRACE_ALL: the tracer attaches first) */
	uint16_t proxy_port; /* the egress proxy's port on the sandbox's loopback; 0 = no network */
	bool transparent;  /* network.mode: transparent: redirect all TCP and DNS to the proxy */
	char *ca_bundle;   /* PEM for /run/airlock/ca.pem (system roots + session CA), or NULL */
	struct buf java_store; /* the same as a JKS for /run/airlock/cacerts (empty: none) */
	bool pty;          /* give the command a pty from the sandbox's own devpts */
	bool observe;      /* sandbox.mode: observe: the host's tree, no Landlock ruleset (see plan_observe) */
	char *home;        /* inside path of the private home, or NULL */
	char *workspace;   /* the workspace, resolved (the same path inside) */
	struct protect_set protect; /* filesystem.protect's globs; n > 0 turns
	                             * the guard on (guard.c) */
	int guard_fd;      /* child: the guard's end of its socket, or -1 */
	/* Review mode (sandbox.workspace_mode: review): the directory
	 * holding the overlay's upper and work directories, outside the
	 * sandbox (review_run.c), or NULL. Started as root, the sandbox's uid
	 * cannot walk the path to it, and review_tree_fd is a detached clone
	 * of it (else -1); the child closes it once the overlay is mounted. */
	char *review_layer;
	int review_tree_fd;
	/* Unix sockets: every connect (and sendto with an address) goes
	 * through the guard, which lets a pathname socket be reached only
	 * when it is one of these (filesystem.sockets, resolved, bound at
	 * the same path) or was bound inside the sandbox. Off in observe
	 * mode. */
	bool sockguard;
	char **sockets;    /* at most PLAN_MAX_SOCKETS */
	size_t n_sockets;
};

void plan_free(struct sandbox_plan *p);

/* filesystem.sockets: the most a policy may name. */
#define PLAN_MAX_SOCKETS 64 /* the policy's; airlock's own MCP gateway socket may be one more */

/* Transparent mode: where the DNS listener answers inside the sandbox. */
#define PLAN_DNS_PORT 53

/* Where the sandbox finds the CA bundle that trusts the session CA. */
#define PLAN_CA_BUNDLE "/run/airlock/ca.pem"
#define PLAN_JAVA_STORE "/run/airlock/cacerts"
#define PLAN_JAVA_CACERTS "/etc/ssl/certs/java/cacerts"

/* The system's CA bundle files (absolute): the session CA's bundle is made
 * from the first that can be read (egress.c) and shown in place of each
 * the sandbox shows (mount.c). */
#define PLAN_SYSTEM_BUNDLES_N 3
extern const char *const plan_system_bundles[PLAN_SYSTEM_BUNDLES_N];

/* Does some endpoint ask for TLS interception? */
bool intercepts(const struct policy *pol);

/* sibling.c: the helper executables beside airlock's own. */
int sibling_path(const char *name, char *out, size_t len, struct error *err) WUR;
/* Start argv[0] with keep_a as its fd 3, keep_b as its fd 4, stdio, and
 * nothing else open (argv names them "3" and "4"), with the environment
 * envp (sibling_env's: never airlock's own); the child's pid, or -1 (errno) when it
 * could not be started. */
pid_t sibling_spawn(char *const argv[], char *const envp[], int keep_a, int keep_b);
/* A helper's environment: from airlock's, only the variables named in
 * kept and the sanitizers' settings (ASAN_OPTIONS, UBSAN_OPTIONS,
 * LSAN_OPTIONS), after the n entries envp[] already holds; NULL-ended
 * within max. Nothing else: the user's secrets in a helper's environment
 * are in /proc/PID/environ for whatever runs as its uid, and in the hands
 * of whoever takes the helper over. Pointers into environ. */
void sibling_env(const char *const kept[], size_t n_kept, char *envp[], size_t n, size_t max);

/* A helper's argv that reads pol again: fixed[0..n), then the enterprise
 * files pol was narrowed by (the helper narrows it the same way), then
 * NULL. calloc'd, the strings borrowed; NULL when out of memory. */
char **sibling_argv(char *const fixed[], size_t n, const struct policy *pol);

/* jks.c: the certificates of a PEM bundle as a Java KeyStore of trusted
 * certificates (store password "changeit"); out is the caller's. 0,
 * -EINVAL (no certificate), -ENOMEM. */
int jks_from_pem(const char *pem, struct buf *out) WUR;

/* gitid.c: process.git_identity: host: the host's git user.name and
 * user.email into the plan's environment as GIT_AUTHOR_* and
 * GIT_COMMITTER_*; a value with a control character refuses the run. */
int gitid_offer(const struct policy *pol, struct sandbox_plan *p, struct error *err) WUR;

/* plan.c */
/* Set NAME=value in the plan's environment, replacing NAME if present. */
int plan_env_set(struct sandbox_plan *p, const char *name, const char *value) WUR;
/* Append a mount (after plan_build: it lands on top) or a Landlock rule.
 * 0 or -ENOMEM. */
/* A socket the guard lets the sandbox connect to, by its path inside the
 * sandbox (airlock's own MCP gateway socket, say). -E2BIG, -ENOMEM. */
int plan_add_socket(struct sandbox_plan *p, const char *path) WUR;
int plan_add_mount(struct sandbox_plan *p, enum mount_kind kind, const char *src, const char *dst, bool ro,
		   bool is_dir) WUR;
int plan_add_rule(struct sandbox_plan *p, const char *path, uint64_t access) WUR;
int plan_build(const struct policy *pol, char *const *argv, enum seccomp_trace trace, struct sandbox_plan *out,
	       struct error *err) WUR;

/* Does the sandbox show the host's path through one of the plan's binds? */
bool plan_shows(const struct sandbox_plan *p, const char *path);

/* Observe mode: turn an enforce plan (already copied into fsrules by the
 * caller) into observe mode's: no Landlock rules, and no mounts but those
 * idmapping needs and the covers of airlock's own files (the policy file,
 * audit_dir and network.log read-only, authority_dir hidden; each may be
 * NULL or missing). Returns 0 or -ENOMEM. */
/* airlock's own files (the decision log's directory, network.log, the
 * authority key) hidden where they lie beneath a path the agent may write:
 * a policy that puts the log in the workspace must not let the agent
 * delete or rewrite the record of what it did. -ENOMEM or 0. */
int plan_hide_own(struct sandbox_plan *p, const char *const *paths, size_t n);
int plan_observe(struct sandbox_plan *p, const struct policy *pol, const char *audit_dir,
		 const char *authority_dir) WUR;

/* protect.c: append a MOUNT_PROTECT entry for every protected path that
 * exists under the workspace ws (a resolved host path). Refuses, naming
 * the bound, a workspace with more than PROTECT_MAX_MOUNTS of them. */
#define PROTECT_MAX_MOUNTS 1024
#define PROTECT_MAX_ENTRIES 1000000
#define PROTECT_MAX_DEPTH 64
int protect_plan(struct sandbox_plan *p, const struct policy *pol, const char *ws, struct error *err) WUR;

/* guard.c: creating calls under filesystem.protect, and connect/sendto.
 * The guard is a process of the sandbox (its user and mount namespaces,
 * its uid, its Landlock domain, no seccomp filter) that performs each
 * call the supervisor hands it after judging the name it would create or
 * the socket it would reach. */
/* child: fork the guard; returns the supervisor's end of its socket, or
 * -1 with err set. */
int guard_start(const struct sandbox_plan *plan, struct error *err) WUR;
/* supervisor: answer one user notification for a creating call. guard is
 * the socket to the guard (or -1 when it is gone: the call fails). */
struct trace_log;
struct seccomp_notif;
void guard_handle(int notify, int guard, const struct seccomp_notif *req, struct trace_log *log);
/* supervisor: hand the guard the notification listener, once, so that it
 * answers the calls it performs itself (the caller resumes one wake-up
 * sooner); without it the supervisor answers them. The guard keeps its
 * own copy: notify stays the caller's. */
void guard_attach(int guard, int notify);
/* supervisor: is nr a call guard_handle answers? */
bool guard_syscall(int nr);
/* supervisor: answer connect, sendto with an address, or the creation of
 * a datagram unix socket (allowed only when named: the policy names a
 * socket). */
struct guard_net {
	bool named;          /* filesystem.sockets names at least one */
	uint16_t proxy_port; /* as in the plan: the only TCP port Landlock lets the sandbox connect to */
	bool transparent;    /* as in the plan: Landlock leaves TCP connects alone */
};
void guard_handle_socket(int notify, int guard, const struct seccomp_notif *req, struct trace_log *log,
			 const struct guard_net *net);
bool guard_socket_syscall(int nr);

/* mount.c: runs in the child, in its new user+mount namespace. *layer
 * gets the review overlay's mount (an O_PATH fd, the caller's), or -1. */
int mount_build_root(const struct sandbox_plan *plan, int *layer, struct error *err) WUR;

/* idmap.c: runs in the supervisor when privileged. Prepares detached
 * idmapped trees so files owned by `owner` appear owned by the sandbox's
 * host uid. */
int idmap_prepare(struct sandbox_plan *plan, struct error *err) WUR;

/* landlock.c */
int landlock_abi(void);
int landlock_apply(const struct sandbox_plan *plan, struct error *err) WUR;
/* A nested domain that only scopes signals and abstract sockets: the
 * command cannot signal its init (ABI 6+; a no-op before). */
int landlock_scope_self(void) WUR;
/* A helper of airlock's own (airlock-proxy) confines itself: access
 * beneath each grant's path (a missing path grants nothing), no other
 * file access anywhere, no TCP bind (ABI 4+), no signal or abstract
 * socket beyond its domain (ABI 6+). For the calling thread and the
 * threads it starts later. Returns the ABI, or a negative errno with err
 * set (-ENOSYS: the kernel has no Landlock). */
struct landlock_grant {
	const char *path;
	uint64_t access; /* LL_* rights (landlock_abi.h) */
};
int landlock_confine(const struct landlock_grant *grants, size_t n, struct error *err) WUR;

/* seccomp.c: installs the filter; when plan->trace, *notify_fd receives
 * the user-notification listener. */
int seccomp_apply(const struct sandbox_plan *plan, int *notify_fd, struct error *err) WUR;
const char *seccomp_syscall_name(int nr, char *buf, size_t len);

/* caps.c */
int caps_drop_all(struct error *err) WUR;   /* bounding, ambient, securebits */
int caps_clear_sets(struct error *err) WUR;
/* Switch to uid/gid keeping the capabilities held in our namespace. */
int caps_become(uid_t uid, gid_t gid, struct error *err) WUR;  /* permitted, effective, inheritable */
/* Root given up for good: uid and gid (real, effective, saved), no
 * supplementary groups, checked; then not dumpable (another process of
 * that uid must not read or ptrace this one) and no_new_privs. The drop
 * clears the parent-death signal: the caller sets it again. */
int caps_drop_root(uid_t uid, gid_t gid, struct error *err) WUR;
/* The environment's strings zeroed where they lie, then the environment
 * emptied: a process that needs it no more keeps no copy of the user's
 * secrets (/proc/PID/environ reads zeros from then on). */
void caps_wipe_environ(void);
/* The same, but for the variables keep names (NULL-terminated, at most
 * eight, none of them a secret), set again with their values. 0, or a
 * negative errno with the environment emptied all the same. */
int caps_wipe_environ_but(const char *const *keep) WUR;

/* ids.c: supervisor side */
int ids_write_maps(pid_t child, const struct sandbox_plan *plan, struct error *err) WUR;

/* limits.c */
struct cgroup_handle {
	char *paths[4]; /* cgroup directories we created (v2: one; v1: per controller) */
	size_t n;
	bool v2;
	char *memory_dir; /* the directory holding memory.* files, or NULL */
	char *pids_dir;   /* the directory holding pids.* files, or NULL */
};
int limits_cgroup_create(const struct policy_limits *l, struct cgroup_handle *cg, struct error *err) WUR;
int limits_cgroup_attach(const struct cgroup_handle *cg, pid_t pid, struct error *err) WUR;
bool limits_cgroup_oom(const struct cgroup_handle *cg);
bool limits_cgroup_pids_hit(const struct cgroup_handle *cg);
/* The limits in force whose reaching the kernel does not report (every
 * rlimit: open files, and memory and processes without a cgroup), as
 * text for people in out (cap bytes, cut to fit); their length, 0 when
 * there are none. */
size_t limits_unreported(const struct policy_limits *l, const struct cgroup_handle *cg, char *out, size_t cap);
void limits_cgroup_destroy(struct cgroup_handle *cg);
/* Free the handle's names and leave the groups: started as root, the
 * privileged helper removes them (privsep.c), from its own copy. */
void limits_cgroup_forget(struct cgroup_handle *cg);
int limits_apply_rlimits(const struct sandbox_plan *plan, struct error *err) WUR;
/* sandbox.limits.wall: a timerfd (CLOEXEC, non-blocking) armed to expire
 * after seconds, which the caller owns; or a negative errno with err set.
 * The run must not start without it. */
int limits_wall_timer(uint64_t seconds, struct error *err) WUR;

/* init.c: pid 1 of the sandbox; never returns. */
__attribute__((noreturn)) void init_main(const struct sandbox_plan *plan, int sync_fd, int pty_slave);

/* child.c: the path from clone to execve. Never returns. */
__attribute__((noreturn)) void child_main(const struct sandbox_plan *plan, int sync_fd);

#endif
