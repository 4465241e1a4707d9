/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The supervisor's side of review and hold mode (sandbox.workspace_mode:
 * review, hold): before the sandbox starts, a session
 * (src/review/session.c) whose upper directory the workspace's overlay
 * writes to; after the command ends, before the decision log is sealed,
 * each flagged change becomes a file_flagged record (decision defer: held
 * for a human). In hold mode what is not held then lands in the
 * workspace at once (src/review/apply.c), and the held groups are named
 * with the command that accepts each.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review/review.h"
#include "sandbox/internal.h"
#include "sandbox/review_run.h"
#include "util/buf.h"

static bool under(const char *path, const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return true;
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A writable path of the policy that holds the workspace, or lies in it:
 * a second way to the real files, around the layer. Its index, or -1. */
static long write_over(const struct policy *pol, const char *ws)
{
	for (size_t i = 0; i < pol->filesystem.write.n; i++) {
		char real[PATH_MAX];
		if (realpath(pol->filesystem.write.v[i].path, real) && (under(ws, real) || under(real, ws)))
			return (long)i;
	}
	return -1;
}

enum policy_workspace_mode review_run_mode(const struct policy *pol, const char **why)
{
	*why = NULL;
	if (pol->sandbox.workspace_mode != POLICY_WS_HOLD)
		return pol->sandbox.workspace_mode;
	/* Observe mode enforces nothing and shows the host's own tree: the
	 * writes go where they would without airlock, and each protected
	 * path written is recorded as direct mode would have refused it. */
	if (pol->sandbox.mode == POLICY_MODE_OBSERVE) {
		*why = "observe mode enforces nothing";
		return POLICY_WS_DIRECT;
	}
	/* Hold left to its default gives way where the policy cannot run
	 * behind a layer; named in the policy, the run is refused
	 * (review_run_check). Direct mode refuses the hand-off files hold
	 * would have held: nothing unreviewed lands either way. */
	if (pol->origin.workspace_mode.line != 0)
		return POLICY_WS_HOLD;
	char ws[PATH_MAX], root[PATH_MAX], real[PATH_MAX];
	struct error err = { 0 };
	if (!realpath(pol->sandbox.workspace, ws))
		return POLICY_WS_DIRECT; /* the sandbox's setup names it, as ever */
	if (write_over(pol, ws) >= 0) {
		*why = "a filesystem.write path holds the workspace or lies in it";
		return POLICY_WS_DIRECT;
	}
	/* `read` naming the workspace makes it read-only (plan.c; an MCP
	 * server's sandbox): nothing is written there to hold. */
	for (size_t i = 0; i < pol->filesystem.read.n; i++)
		if (realpath(pol->filesystem.read.v[i].path, real) && strcmp(real, ws) == 0)
			return POLICY_WS_DIRECT;
	if (review_root(root, sizeof(root), &err) == 0) {
		/* The state directory may not exist yet: its nearest existing
		 * parent decides. */
		char probe[PATH_MAX];
		snprintf(probe, sizeof(probe), "%s", root);
		bool found;
		while (!(found = realpath(probe, real) != NULL) && strrchr(probe, '/') && strrchr(probe, '/') != probe)
			*strrchr(probe, '/') = '\0';
		if (found && under(root, ws) && under(real, ws)) {
			*why = "the state directory, which holds the layer, lies in the workspace";
			return POLICY_WS_DIRECT;
		}
		struct stat st;
		if (!found || stat(real, &st) < 0 || !S_ISDIR(st.st_mode) || access(real, W_OK) < 0) {
			*why = "the state directory cannot be made";
			return POLICY_WS_DIRECT;
		}
	} else {
		*why = "no state directory for the layer";
		return POLICY_WS_DIRECT;
	}
	return POLICY_WS_HOLD;
}

int review_run_check(const struct policy *pol, struct error *err)
{
	char ws[PATH_MAX];
	const char *why;
	enum policy_workspace_mode mode = review_run_mode(pol, &why);
	if (mode == POLICY_WS_DIRECT)
		return 0;
	if (mode == POLICY_WS_REVIEW && pol->sandbox.mode == POLICY_MODE_OBSERVE)
		return error_set(err, EINVAL,
				 "%s:%u:%u: sandbox.workspace_mode: review needs sandbox.mode enforce or learn "
				 "(observe mode shows the host's own tree)",
				 pol->origin.workspace_mode.file, pol->origin.workspace_mode.line,
				 pol->origin.workspace_mode.col);
	if (!realpath(pol->sandbox.workspace, ws))
		return error_sys(err, errno, "%s:%u:%u: sandbox.workspace: cannot resolve %s", pol->sandbox.workspace_loc.file,
				 pol->sandbox.workspace_loc.line, pol->sandbox.workspace_loc.col, pol->sandbox.workspace);
	long i = write_over(pol, ws);
	if (i >= 0) {
		const struct policy_path *w = &pol->filesystem.write.v[i];
		char real[PATH_MAX];
		if (!realpath(w->path, real))
			real[0] = '\0';
		return error_set(err, EINVAL,
				 "%s:%u:%u: filesystem.write[%ld]: %s %s the workspace %s, which "
				 "sandbox.workspace_mode: %s keeps behind a layer; it would let the agent "
				 "write the workspace directly (name a path outside it, or use direct mode)",
				 w->loc.file, w->loc.line, w->loc.col, i, w->path, under(ws, real) ? "holds" : "lies in",
				 ws, policy_workspace_mode_name(mode));
	}
	return 0;
}

int review_run_prepare(const struct policy *pol, struct sandbox_plan *plan, struct review_run *rr, struct error *err)
{
	memset(rr, 0, sizeof(*rr));
	int r = review_run_check(pol, err);
	if (r < 0)
		return r;
	struct mount_entry *wsm = NULL;
	for (size_t i = 0; i < plan->n_mounts; i++)
		if (plan->mounts[i].kind == MOUNT_BIND && strcmp(plan->mounts[i].dst, plan->workspace) == 0 &&
		    plan->mounts[i].user_path && !plan->mounts[i].readonly)
			wsm = &plan->mounts[i];
	if (!wsm)
		return error_set(err, EINVAL, "review mode: the workspace %s has no bind in the plan", plan->workspace);
	struct protect_set globs = { 0 };
	if (protect_set_from_policy(pol, &globs) < 0)
		return error_set(err, ENOMEM, "out of memory");
	const char *why;
	rr->hold = review_run_mode(pol, &why) == POLICY_WS_HOLD;
	r = review_session_begin(plan->workspace, plan->host_uid, plan->host_gid, &globs, rr->hold, &rr->dir, err);
	protect_set_free(&globs);
	if (r < 0)
		return r;
	/* Held for the whole run: an `airlock apply`, `review` or `discard`
	 * from another terminal would read a layer the agent is still
	 * writing, judging one file and copying another. */
	if ((r = review_session_lock(rr->dir, err)) < 0) {
		review_run_abort(rr);
		return r;
	}
	rr->lock = r;
	rr->locked = true;
	if (asprintf(&plan->review_layer, "%s/layer", rr->dir) < 0) {
		plan->review_layer = NULL;
		review_run_abort(rr);
		return error_set(err, ENOMEM, "out of memory");
	}
	if (plan->privileged) {
		/* See mount.c: the sandbox's uid cannot walk root's state
		 * directory; it gets the layer as a detached tree. */
		plan->review_tree_fd = (int)syscall(SYS_open_tree, AT_FDCWD, plan->review_layer,
						    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (plan->review_tree_fd < 0) {
			r = error_sys(err, errno, "review mode: cannot clone %s", plan->review_layer);
			review_run_abort(rr);
			return r;
		}
	}
	/* The layer lives outside what the sandbox shows; a read or write
	 * path of the policy that shows it would hand the agent the upper
	 * directory itself. */
	if (plan_shows(plan, rr->dir)) {
		r = error_set(err, EINVAL,
			      "review mode: the session directory %s would be visible inside the sandbox (a path of "
			      "the policy or the workspace holds it); point XDG_STATE_HOME elsewhere",
			      rr->dir);
		review_run_abort(rr);
		return r;
	}
	wsm->overlay = true;
	rr->active = true;
	return 0;
}

/*
 * When the overlay's last mount goes, overlayfs syncs the filesystem that
 * holds its upper layer, all of it (the state directory's: on a busy
 * host, everyone's dirty pages and a cache flush of the disk). Left to
 * the sandbox, its init would do that as it exits, and the run would
 * wait for it. So the sandbox hands the supervisor the overlay's mount
 * (PROTO_FD_LAYER), and the supervisor, once the change is read, lets it
 * go in a process of its own that outlives the run, as the audit writer
 * does for the log's fsync. The sync itself stays: a change held for
 * review reaches the disk as before, it is only not waited for.
 */
void review_run_hold_layer(struct review_run *rr, int fd)
{
	if (!rr->active || rr->layer_held) {
		close(fd);
		return;
	}
	rr->layer = fd;
	rr->layer_held = true;
}

struct let_go {
	int layer;
	int wait; /* read end of a pipe whose writer is the supervisor */
};

/* The child shares the supervisor's memory (CLONE_VM) and touches none of
 * it: its own stack and arguments only, and system calls whose arguments
 * cannot fail them (errno is the supervisor's). */
static int let_go(void *arg)
{
	const struct let_go *a = arg;
	unsigned lo = (unsigned)(a->layer < a->wait ? a->layer : a->wait);
	unsigned hi = (unsigned)(a->layer < a->wait ? a->wait : a->layer);
	/* Nothing of the caller's stays open here: a pipe it reads to its end
	 * (airlock's stdout) would wait for the disk too. */
	if (lo > 0)
		syscall(SYS_close_range, 0U, lo - 1, 0U);
	if (hi > lo + 1)
		syscall(SYS_close_range, lo + 1, hi - 1, 0U);
	syscall(SYS_close_range, hi + 1, ~0U, 0U);
	/* EOF once the supervisor closed its copy: ours is then the last. */
	char c;
	while (syscall(SYS_read, a->wait, &c, 1) > 0)
		;
	syscall(SYS_close, a->layer);
	return 0;
}

static void release_layer(struct review_run *rr)
{
	if (!rr->layer_held)
		return;
	rr->layer_held = false;
	enum { STACK = 64 * 1024 };
	int p[2] = { -1, -1 };
	/* The stack is never unmapped: the child may run after we return
	 * (each run is a process of its own, which ends soon after). */
	void *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack != MAP_FAILED && pipe2(p, O_CLOEXEC) == 0) {
		struct let_go *a = stack; /* page-aligned */
		*a = (struct let_go){ .layer = rr->layer, .wait = p[0] };
		/* CLONE_VM: no copy of the supervisor's page tables for a
		 * process that makes a few system calls. Failing, the sync
		 * happens below, in the run, as it did in the sandbox. */
		(void)clone(let_go, (char *)stack + STACK, CLONE_VM | SIGCHLD, a);
	}
	close(rr->layer);
	rr->layer = -1;
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
}

int review_run_name(struct review_run *rr, const char *session, struct error *err)
{
	if (!rr->active)
		return 0;
	if (session && session[0])
		snprintf(rr->id, sizeof(rr->id), "%s", session);
	else
		review_new_id(rr->id);
	return review_session_name(&rr->dir, rr->id, err);
}

/* Each flagged change becomes a file_flagged record (defer). */
static void log_flagged(const struct review_changes *ch, const char *ws, struct auditlog *audit)
{
	for (size_t i = 0; audit && audit->pid > 0 && i < ch->n; i++) {
		const struct review_change *c = &ch->c[i];
		if (!c->flags)
			continue;
		struct buf ev = { 0 };
		char path[PATH_MAX * 2], reason[sizeof(c->reason) + 32];
		snprintf(path, sizeof(path), "%s/%s", ws, c->path);
		snprintf(reason, sizeof(reason), "held for review: %s", c->reason);
		if (buf_puts(&ev, "{\"kind\":\"file_flagged\",\"decision\":\"defer\",\"file\":") == 0 &&
		    buf_json_string(&ev, path, strlen(path)) == 0 && buf_puts(&ev, ",\"reason\":") == 0 &&
		    buf_json_string(&ev, reason, strlen(reason)) == 0 && buf_puts(&ev, "}\n") == 0)
			(void)auditlog_event(audit, ev.data, ev.len);
		buf_free(&ev);
	}
}

struct hold_seen {
	struct review_run *rr;
	const char *ws;
	struct auditlog *audit;
	bool called;
};

/* The change as the exit's apply read it, once: logged, counted, and
 * its groups (all held, since nothing is accepted at exit) kept for the
 * summary. */
static void hold_seen(const struct review_changes *ch, const struct review_groups *g, void *ctx)
{
	struct hold_seen *hs = ctx;
	struct review_run *rr = hs->rr;
	hs->called = true;
	log_flagged(ch, hs->ws, hs->audit);
	rr->n_changes = ch->n;
	rr->n_flagged = review_changes_flagged(ch);
	/* What stays: a group held whole, or a member flagged for more
	 * than being a new executable (apply.c lands those). */
	bool *keep = calloc(g->n + 1, sizeof(bool));
	rr->n_held = 0;
	for (size_t i = 0; keep && i < ch->n; i++) {
		const struct review_change *c = &ch->c[i];
		if (c->group >= 0 && (g->g[c->group].whole || review_held_flags(c->flags))) {
			rr->n_held++;
			keep[c->group] = true;
		}
	}
	rr->groups.g = calloc(g->n + 1, sizeof(*g->g));
	for (size_t k = 0; keep && rr->groups.g && k < g->n; k++) {
		if (!keep[k])
			continue;
		struct review_group *d = &rr->groups.g[rr->groups.n];
		*d = g->g[k];
		if (!(d->root = strdup(g->g[k].root)))
			break;
		rr->groups.n++;
	}
	free(keep);
}

/* Nothing at all in the layer: the run changed nothing (a deletion, a
 * rename or a made-opaque directory leaves an entry there too). An upper
 * that cannot be read is not empty: the full reading says why. */
static bool layer_empty(const char *upper)
{
	DIR *d = opendir(upper);
	if (!d)
		return false;
	bool empty = true;
	errno = 0;
	for (struct dirent *de; empty && (de = readdir(d));)
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	empty = empty && errno == 0;
	closedir(d);
	return empty;
}

void review_run_finish(struct review_run *rr, const char *ws, struct auditlog *audit)
{
	if (!rr->active)
		return;
	char upper[PATH_MAX];
	snprintf(upper, sizeof(upper), "%s/" REVIEW_UPPER, rr->dir);
	/* The common end of a run that wrote nothing: no change to judge,
	 * and no walk of the workspace for its links, nor of the manifest;
	 * the session is dropped by review_run_report. */
	if (layer_empty(upper)) {
		rr->n_changes = 0;
		return;
	}
	struct review_changes ch = { 0 };
	struct error err = { 0 };
	struct protect_set globs = { 0 };
	if (rr->hold) {
		/* Hold mode: what is not held lands now (the sandbox is gone,
		 * nothing writes the layer); the groups held stay in the
		 * session. A conflict with the workspace lands nothing and
		 * holds it all. */
		struct hold_seen hs = { .rr = rr, .ws = ws, .audit = audit };
		struct review_apply_opts o = { .quiet = true, .seen = hold_seen, .seen_ctx = &hs };
		if (review_apply(rr->dir, &o, stderr, &err) == 0) {
			rr->gone = access(rr->dir, F_OK) < 0;
			return;
		}
		if (hs.called) {
			fprintf(stderr, "airlock: hold mode: %s\n", err.msg);
			rr->land_failed = true;
			return;
		}
		/* Not even read: read it here for the log and the count. */
		rr->land_failed = true;
		fprintf(stderr, "airlock: hold mode: %s\n", err.msg);
		err = (struct error){ 0 };
	}
	int r = review_session_protect(rr->dir, &globs, &err);
	if (r >= 0)
		r = review_changes_read(upper, ws, &globs, &ch, &err);
	protect_set_free(&globs);
	if (r < 0) {
		fprintf(stderr, "airlock: review mode: %s\n", err.msg);
		rr->n_changes = (size_t)-1;
		return;
	}
	rr->n_changes = ch.n;
	rr->n_flagged = review_changes_flagged(&ch);
	rr->n_held = ch.n;
	log_flagged(&ch, ws, audit);
	review_changes_free(&ch);
}

/* Hold mode: one line for what landed, one per group held, and the
 * command that accepts each. */
static void hold_report(struct review_run *rr)
{
	if (rr->gone || rr->n_changes == 0) {
		if (rr->n_changes == 0) {
			struct error err = { 0 };
			if (review_session_remove(rr->dir, &err) < 0)
				fprintf(stderr, "airlock: hold mode: %s\n", err.msg);
		}
		return;
	}
	if (rr->land_failed) {
		fprintf(stderr, "airlock: hold mode: nothing landed; %zu change%s held in session %s: airlock review %s | "
				"airlock apply %s | airlock discard %s\n",
			rr->n_changes, rr->n_changes == 1 ? "" : "s", rr->id, rr->id, rr->id, rr->id);
		return;
	}
	fprintf(stderr, "airlock: hold mode: %zu change%s landed; held in session %s for review:\n",
		rr->n_changes - rr->n_held, rr->n_changes - rr->n_held == 1 ? "" : "s", rr->id);
	review_groups_print(stderr, &rr->groups, 12);
	fprintf(stderr, "airlock: accept a group: airlock apply %s --accept %s (airlock review %s shows them, "
			"airlock discard %s drops them)\n",
		rr->id, rr->groups.n ? rr->groups.g[0].root : "PATH", rr->id, rr->id);
}

static void unlock(struct review_run *rr)
{
	if (rr->locked)
		close(rr->lock);
	rr->locked = false;
}

void review_run_report(struct review_run *rr)
{
	unlock(rr);
	release_layer(rr);
	if (!rr->active)
		return;
	if (rr->hold) {
		hold_report(rr);
		review_groups_free(&rr->groups);
		free(rr->dir);
		rr->dir = NULL;
		rr->active = false;
		return;
	}
	if (rr->n_changes == 0) {
		struct error err = { 0 };
		if (review_session_remove(rr->dir, &err) == 0) {
			fprintf(stderr, "airlock: review mode: no changes; the workspace is as it was\n");
			free(rr->dir);
			rr->dir = NULL;
			rr->active = false;
			return;
		}
	}
	if (rr->n_changes == (size_t)-1)
		fprintf(stderr, "airlock: review mode: the change is held in session %s: airlock review %s | "
				"airlock apply %s | airlock discard %s\n",
			rr->id, rr->id, rr->id, rr->id);
	else
		fprintf(stderr,
			"airlock: review mode: %zu change%s held in session %s: airlock review %s | airlock apply %s | "
			"airlock discard %s\n",
			rr->n_changes, rr->n_changes == 1 ? "" : "s", rr->id, rr->id, rr->id, rr->id);
	if (rr->n_flagged)
		fprintf(stderr, "airlock: review mode: %zu of them flagged for review (hand-off files, executables, "
				"links, credentials): apply refuses them unless accepted\n",
			rr->n_flagged);
	free(rr->dir);
	rr->dir = NULL;
	rr->active = false;
}

void review_run_abort(struct review_run *rr)
{
	unlock(rr);
	if (rr->layer_held)
		close(rr->layer);
	rr->layer_held = false;
	if (!rr->dir)
		return;
	struct error err = { 0 };
	if (review_session_remove(rr->dir, &err) < 0)
		fprintf(stderr, "airlock: review mode: %s\n", err.msg);
	free(rr->dir);
	rr->dir = NULL;
	rr->active = false;
}
