/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The requirement table, and the pure parts of the suite: parsing the
 * probe's lines, judging a row, expanding a probe line's placeholders.
 *
 * Placeholders (set by run.c): {ws} the workspace (the runtime's current
 * directory), {outside} a directory beside it standing for the rest of the
 * host's files, {home} the temporary HOME with a fake SSH key and cloud
 * credentials, {canary} the secret placed in the runtime's environment and
 * in a host process's, {label} the same as a DNS label, {svc_pid} that host
 * process, {lo_tcp} and {lo_udp} its loopback ports, {sock} a fake Docker
 * socket, {audit} the runtime's decision record directory, {meta}, {priv}
 * and {pub}: the metadata, a private and a stand-in public address on the
 * suite's own network namespace. "$HOME" and "$TMPDIR" are left to the
 * probe, which reads them from the environment the runtime gave it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/conformance.h"

/* Neighbours are the legitimate operations a runtime must keep working
 * for an agent to work at all (its workspace, fork, exec, its own /proc);
 * when one is refused the row fails, since refusing everything is not
 * containment. The egress and socket rows have none: a runtime that gives
 * the agent no network, not even a loopback of its own, contains egress.
 * vsock's neighbour is a unix socket, local IPC no agent works without.
 *
 * The rows that leave something in the workspace (writes, set-ID bits,
 * git redirects, links) are judged on what the host sees after the run
 * (conf_host_view), not on what the probe saw inside.
 *
 * The hand-off rows write the files of the hand-off table
 * (src/handoff/rules.c); a unit test checks that each path below matches
 * a rule there, so the two cannot drift apart. */
const struct conf_req conf_reqs[] = {
	/* ---- boundary ---- */
	{ "boundary.host-files", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "files outside the workspace are unreadable: the agent cannot browse the host",
	  { "read {outside}/notes.txt", "read {outside}", NULL },
	  { "read-ok {ws}/README.md", NULL } },
	{ "boundary.write-outside", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "nothing outside the workspace can be created or changed",
	  { "write {outside}/planted.txt", NULL },
	  { "write-ok {ws}/output.txt", NULL } },
	{ "boundary.proc-host", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "the host's processes are invisible in /proc: no command lines, no environments",
	  { "proc-host", NULL },
	  { "proc-self-ok", NULL } },
	{ "boundary.ptrace", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "no debugging interface: reading or rewriting another process's memory",
	  { "ptrace", "process-vm-readv", NULL },
	  { "clone-ok", NULL } },
	{ "boundary.kernel-surface", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "bpf, perf, io_uring, keyrings and userfaultfd, the usual kernel exploit entry points, are refused",
	  { "bpf", "perf-event-open", "io-uring-setup", "keyctl", "userfaultfd", NULL },
	  { "cbpf-ok", NULL } },
	{ "boundary.userns", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "no nested user namespace: it hands back every capability over new namespaces",
	  { "unshare-user", "clone-newuser", NULL },
	  { "clone-ok", NULL } },
	{ "boundary.tty-injection", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "TIOCSTI and TIOCLINUX cannot type commands into the user's terminal",
	  { "tiocsti", "tioclinux", NULL },
	  { "ioctl-ok", NULL } },
	{ "boundary.setuid", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "no capabilities and no_new_privs set: setuid binaries grant nothing",
	  { "caps", "setuid-root", NULL },
	  { "exec-ok /bin/sh -c :", NULL } },
	{ "boundary.devices", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "no device nodes beyond the harmless ones: no memory, disks, FUSE, or new nodes",
	  { "dev-mem", "mknod", "stat /dev/fuse", NULL },
	  { "read-ok /dev/urandom", NULL } },
	{ "boundary.fd-leak", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "no file descriptor of the host crosses in (the suite leaves one open to a host file)",
	  { "fds", NULL },
	  { NULL } },
	{ "boundary.signals", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "host processes cannot be signalled",
	  { "signal {svc_pid}", NULL },
	  { "signal-ok", NULL } },
	{ "boundary.setid-plant", CONF_BOUNDARY, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "no set-uid, set-gid or file-capability file reaches the host: any local user would run it as the file's owner, root when the runtime runs as root",
	  { "setid-plant {ws}/setid", NULL },
	  { "chmod-ok {ws}/src/build.sh", NULL } },
	{ "boundary.exec-writable", CONF_BOUNDARY, CONF_STRICT, CONF_NEED_NOTHING, "AIS-11",
	  "a program the agent copies to /tmp, /var/tmp, /dev/shm or its home does not run, neither directly nor through the dynamic loader",
	  { "exec-copy /tmp", "exec-copy /var/tmp", "exec-copy /dev/shm", "exec-copy $HOME", NULL },
	  { "exec-copy-ok {ws}", NULL } },
	{ "boundary.memfd-exec", CONF_BOUNDARY, CONF_STRICT, CONF_NEED_NOTHING, "AIS-11",
	  "bytes written to a memfd never run as a program (fexecve, execveat, /proc/self/fd)",
	  { "memfd-exec", NULL },
	  { "memfd-ok", NULL } },
	/* ---- egress ---- */
	{ "egress.tcp", CONF_EGRESS, CONF_BASELINE, CONF_NEED_NETNS, "AIS-11,AIS-13",
	  "no direct TCP connection out of the sandbox",
	  { "connect-local {pub} 80", NULL },
	  { NULL } },
	{ "egress.udp", CONF_EGRESS, CONF_BASELINE, CONF_NEED_NETNS, "AIS-11,AIS-13",
	  "no direct UDP exchange out of the sandbox",
	  { "udp-local {pub} 7", NULL },
	  { NULL } },
	{ "egress.dns", CONF_EGRESS, CONF_BASELINE, CONF_NEED_NETNS, "AIS-11,AIS-13",
	  "a DNS query cannot carry data to a resolver the agent picks",
	  { "dns-exfil {pub} 53 {label}", NULL },
	  { NULL } },
	{ "egress.metadata", CONF_EGRESS, CONF_BASELINE, CONF_NEED_NETNS, "AIS-11,IAM-18",
	  "the cloud metadata address (169.254.169.254), which hands out instance credentials, is unreachable",
	  { "connect-local {meta} 80", NULL },
	  { NULL } },
	{ "egress.host-loopback", CONF_EGRESS, CONF_BASELINE, CONF_NEED_NOTHING, "AIS-11",
	  "services on the host's loopback (databases, agents, dev servers) are unreachable",
	  { "connect 127.0.0.1 {lo_tcp}", "udp 127.0.0.1 {lo_udp}", NULL },
	  { NULL } },
	{ "egress.private-range", CONF_EGRESS, CONF_BASELINE, CONF_NEED_NETNS, "AIS-11",
	  "private address ranges (the LAN, internal services) are unreachable",
	  { "connect-local {priv} 80", NULL },
	  { NULL } },
	{ "egress.vsock", CONF_EGRESS, CONF_BASELINE, CONF_NEED_VSOCK, "AIS-11,AIS-13",
	  "no AF_VSOCK socket: vsock is not namespaced, and on a virtual machine it reaches the hypervisor's services past any proxy",
	  { "vsock", NULL },
	  { "unix-ok", NULL } },
	{ "egress.proxy-bypass", CONF_EGRESS, CONF_STRICT, CONF_NEED_NETNS, "AIS-11,AIS-13",
	  "a client that ignores HTTP_PROXY gets no response: the proxy is the only way out",
	  { "http-direct {pub} 80", NULL },
	  { NULL } },
	/* ---- credentials ---- */
	{ "credentials.env", CONF_CREDENTIALS, CONF_BASELINE, CONF_NEED_NOTHING, "IAM-18",
	  "secrets in the caller's environment (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY) do not reach the agent",
	  { "env-secret {canary}", NULL },
	  { NULL } },
	{ "credentials.files", CONF_CREDENTIALS, CONF_BASELINE, CONF_NEED_NOTHING, "IAM-18",
	  "credential files in the user's home (SSH keys, cloud credentials) are unreadable",
	  { "read {home}/.ssh/id_ed25519", "read {home}/.aws/credentials", NULL },
	  { "read-ok {ws}/README.md", NULL } },
	{ "credentials.proc", CONF_CREDENTIALS, CONF_BASELINE, CONF_NEED_NOTHING, "IAM-18",
	  "secrets in other processes' environments cannot be read through /proc",
	  { "proc-environ {canary}", NULL },
	  { "proc-self-ok", NULL } },
	/* ---- hand-offs ---- */
	{ "handoff.git-hook", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "no git hook can be planted: git would run it on the host at the next commit",
	  { "write {ws}/.git/hooks/pre-commit", NULL },
	  { "write-ok {ws}/src/main.py", NULL } },
	{ "handoff.git-config", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "the repository's git config cannot be edited (core.fsmonitor, core.sshCommand, aliases run commands)",
	  { "write {ws}/.git/config", NULL },
	  { "write-ok {ws}/src/main.py", NULL } },
	{ "handoff.envrc", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "no .envrc: direnv would evaluate it in the user's shell",
	  { "write {ws}/.envrc", NULL },
	  { "write-ok {ws}/src/main.py", NULL } },
	{ "handoff.editor-task", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "no editor task (.vscode/tasks.json) that runs when the folder opens",
	  { "write {ws}/.vscode/tasks.json", NULL },
	  { "write-ok {ws}/src/main.py", NULL } },
	{ "handoff.ci-workflow", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "no CI workflow: it would run with the repository's secrets",
	  { "write {ws}/.github/workflows/ci.yml", NULL },
	  { "write-ok {ws}/src/main.py", NULL } },
	{ "handoff.venv", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "the virtualenv's interpreter cannot be replaced: the user runs it outside",
	  { "write {ws}/.venv/bin/python", NULL },
	  { "write-ok {ws}/src/main.py", NULL } },
	{ "handoff.git-indirection", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "git cannot be pointed at config the agent keeps elsewhere (.git/commondir, a gitdir: file, a planted repository): git status on the host would run its core.fsmonitor",
	  { "git-redirect {ws} commondir", "git-redirect {ws} gitfile", "git-redirect {ws} bare", NULL },
	  { "write-ok {ws}/src/main.py", "write-ok {ws}/.gitignore", NULL } },
	{ "handoff.symlinked-dir", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "a hand-off directory is known by every name that reaches it: a link .vscode -> inner holding tasks.json is refused, and so is tasks.json written through a link to .vscode",
	  { "handoff-symlink {ws}/web .vscode first", "handoff-symlink {ws}/app .vscode last",
	    "handoff-symlink {ws}/docs .vscode rename", "handoff-symlink {ws} editor into", NULL },
	  { "symlink-ok {ws}/latest src", NULL } },
	{ "handoff.privileged-socket", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13,IAM-18",
	  "no container engine socket (Docker's is root on the host by another name)",
	  { "unix-connect {sock}", "unix-connect /var/run/docker.sock", NULL },
	  { NULL } },
	{ "handoff.command-name", CONF_HANDOFF, CONF_STRICT, CONF_NEED_NOTHING, "AIS-13",
	  "no program named like a trusted command (git) where the user's PATH or npm finds it first",
	  { "write {home}/.local/bin/git", "write {ws}/node_modules/.bin/git", NULL },
	  { "write-ok {ws}/src/main.py", NULL } },
	/* ---- audit ---- */
	{ "audit.denials", CONF_AUDIT, CONF_STRICT, CONF_NEED_AUDIT, "LOG",
	  "the runtime keeps a verifiable decision record, and the probe's denials are in it",
	  { NULL },
	  { NULL } },
	{ "audit.tamper", CONF_AUDIT, CONF_STRICT, CONF_NEED_AUDIT, "LOG",
	  "the agent can neither reach nor edit the record, and it verifies intact afterwards",
	  { "read {audit}", "write {audit}/forged.jsonl", NULL },
	  { NULL } },
};

const size_t conf_nreqs = sizeof(conf_reqs) / sizeof(conf_reqs[0]);

const char *conf_group_name(enum conf_group g)
{
	switch (g) {
	case CONF_BOUNDARY:
		return "boundary";
	case CONF_EGRESS:
		return "egress";
	case CONF_CREDENTIALS:
		return "credentials";
	case CONF_HANDOFF:
		return "hand-offs";
	case CONF_AUDIT:
		return "audit";
	}
	return "?";
}

const char *conf_level_name(enum conf_level l)
{
	return l == CONF_BASELINE ? "baseline" : "strict";
}

const char *conf_verdict_name(enum conf_verdict v)
{
	switch (v) {
	case CONF_HELD:
		return "held";
	case CONF_FAILED:
		return "FAILED";
	case CONF_NA:
		return "n/a";
	}
	return "?";
}

bool conf_in_profile(const struct conf_req *r, bool strict)
{
	return strict || r->level == CONF_BASELINE;
}

int conf_parse_line(const char *line, size_t *idx, struct conf_line *out)
{
	char *end;
	const char *p, *colon;
	unsigned long n;

	memset(out, 0, sizeof(*out));
	if (strcmp(line, "@end") == 0)
		return 1;
	if (line[0] != '@' || line[1] < '0' || line[1] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(line + 1, &end, 10);
	if (errno || *end != ' ' || n > 4096)
		return -EINVAL;
	colon = strstr(end + 1, ": ");
	if (!colon)
		return -EINVAL;
	p = colon + 2;
	if (strncmp(p, "blocked", 7) == 0) {
		out->outcome = CONF_BLOCKED;
		p += 7;
	} else if (strncmp(p, "allowed", 7) == 0) {
		out->outcome = CONF_ALLOWED;
		p += 7;
	} else if (strncmp(p, "error", 5) == 0) {
		out->outcome = CONF_ERROR;
		p += 5;
	} else {
		return -EINVAL;
	}
	while (*p == ' ')
		p++;
	/* "(WHY)" for blocked and allowed, bare WHY for error. */
	size_t l = strlen(p);
	if (out->outcome != CONF_ERROR && l >= 2 && p[0] == '(' && p[l - 1] == ')') {
		p++;
		l -= 2;
	}
	if (l >= sizeof(out->why))
		l = sizeof(out->why) - 1;
	memcpy(out->why, p, l);
	out->why[l] = '\0';
	*idx = n;
	return 0;
}

static void ev_add(struct conf_result *out, const char *tmpl, const struct conf_line *l,
		   bool neighbour)
{
	size_t used = strlen(out->evidence);
	static const char *const names[] = { "no result", "blocked", "allowed", "error" };

	if (used >= sizeof(out->evidence) - 1)
		return;
	snprintf(out->evidence + used, sizeof(out->evidence) - used, "%s%s%s: %s%s%s%s", used ? "; " : "",
		 neighbour ? "neighbour " : "", tmpl, names[l->outcome], l->why[0] ? " (" : "", l->why,
		 l->why[0] ? ")" : "");
}

void conf_judge(const struct conf_req *r, const struct conf_line *att, size_t na,
		const struct conf_line *nb, size_t nn, struct conf_result *out)
{
	bool attack_allowed = false, neighbour_blocked = false, unusable = false;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < na; i++) {
		attack_allowed |= att[i].outcome == CONF_ALLOWED;
		unusable |= att[i].outcome == CONF_ERROR || att[i].outcome == CONF_MISSING;
	}
	for (i = 0; i < nn; i++) {
		neighbour_blocked |= nb[i].outcome == CONF_BLOCKED;
		unusable |= nb[i].outcome == CONF_ERROR || nb[i].outcome == CONF_MISSING;
	}
	/* An attack that got through decides; so does a neighbour that was
	 * refused, since a runtime that breaks the legitimate operation next
	 * to an attack has not shown that it contains the attack rather than
	 * merely failing. */
	if (attack_allowed || neighbour_blocked)
		out->verdict = CONF_FAILED;
	else if (unusable || na == 0)
		out->verdict = CONF_NA;
	else
		out->verdict = CONF_HELD;
	for (i = 0; i < na; i++)
		ev_add(out, r->attacks[i], &att[i], false);
	for (i = 0; i < nn; i++)
		ev_add(out, r->neighbours[i], &nb[i], true);
}

int conf_expand(const char *tmpl, const char *const *vars, char *out, size_t len, struct error *err)
{
	size_t o = 0;
	const char *p = tmpl;

	while (*p) {
		const char *val = NULL;
		size_t vl;
		if (*p == '{') {
			const char *close = strchr(p, '}');
			size_t nl = close ? (size_t)(close - p - 1) : 0;
			for (size_t i = 0; close && vars[i]; i += 2)
				if (strlen(vars[i]) == nl && strncmp(vars[i], p + 1, nl) == 0)
					val = vars[i + 1];
			if (!val)
				return error_set(err, EINVAL, "%s: unknown placeholder at '%s'", tmpl, p);
			p = close + 1;
		} else {
			val = p;
			vl = 1;
			p++;
			goto copy;
		}
		vl = strlen(val);
copy:
		if (o + vl >= len)
			return error_set(err, ENAMETOOLONG, "%s: expands beyond %zu bytes", tmpl, len);
		memcpy(out + o, val, vl);
		o += vl;
	}
	out[o] = '\0';
	return 0;
}
