/* SPDX-License-Identifier: Apache-2.0 */
#include "sandbox/egress.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "mcp/gateway.h"
#include "policy/mcp.h"
#include "proto/proxy.h"
#include "sandbox/creds.h"
#include "sandbox/proto.h"
#include "util/cleanup.h"
#include "util/file.h"

extern char **environ;

const char *const plan_system_bundles[PLAN_SYSTEM_BUNDLES_N] = {
	"/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine */
	"/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
	"/etc/ssl/cert.pem",                  /* Arch, Alpine, BSDs */
};

/* MCP over HTTP with a step_up rule: the proxy's control socket, 0600 in
 * the 0700 run directory under the host's state directory (which the
 * sandbox does not show), made here so that the supervisor, not the
 * unprivileged proxy, removes it at the end. Without it a step_up call is
 * denied at once, and the run says so. */
static int step_up_socket(const struct policy *pol, struct egress *e, struct error *err)
{
	bool needed = false;
	for (size_t i = 0; i < pol->network.n_endpoints && !needed; i++) {
		const char *name = pol->network.endpoints[i].mcp_server;
		needed = name && policy_mcp_steps_up(policy_mcp_server(pol->mcp, name));
	}
	if (!needed)
		return 0;
	char rd[4096];
	struct error derr = { 0 };
	int fd = -1;
	if (mcp_control_dir(rd, sizeof(rd)) < 0)
		error_set(&derr, EINVAL, "neither XDG_STATE_HOME nor HOME is an absolute path");
	else if (file_mkdir_p(rd, 0700, &derr) == 0) {
		snprintf(e->step_up_sock, sizeof(e->step_up_sock), "%s/session-%d-http.sock", rd, (int)getpid());
		fd = mcp_control_listen(e->step_up_sock, &derr);
	}
	if (fd < 0) {
		fprintf(stderr, "airlock: MCP over HTTP: no control socket for step-up: %s\n", derr.msg);
		e->step_up_sock[0] = '\0';
		return 0;
	}
	struct buf m = { 0 };
	int r = buf_puts(&m, "S");
	if (r >= 0)
		r = buf_puts(&m, e->step_up_sock);
	if (r >= 0)
		r = proto_send(e->control, m.data, m.len + 1, &fd, 1);
	buf_free(&m);
	close(fd);
	return r < 0 ? error_sys(err, -r, "cannot hand the proxy its step-up socket") : 0;
}

/* The proxy's whole environment: the user's secrets stay out of it (a
 * process of the same uid reads /proc/PID/environ, and a proxy taken over
 * would read its own), and reach its leak scanner over the control
 * socket instead (creds_env_hand_over). What it keeps, when set:
 *   HOME             the policy's ~/ paths (mcp.servers.*.pins), read
 *                    again by the proxy as the supervisor read them;
 *   SSL_CERT_FILE, SSL_CERT_DIR, OPENSSL_CONF
 *                    the trust store the proxy verifies upstreams with;
 *   RES_OPTIONS, LOCALDOMAIN
 *                    glibc's resolver settings for the names it resolves;
 *   ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS
 *                    the sanitizers' settings in a sanitized build.
 * envp[] receives pointers into airlock's environment, home into buf. */
static void proxy_env(const char *home, char *buf, size_t len, char *envp[], size_t max)
{
	static const char *const kept[] = { "SSL_CERT_FILE", "SSL_CERT_DIR", "OPENSSL_CONF", "RES_OPTIONS",
					    "LOCALDOMAIN" };
	snprintf(buf, len, "HOME=%s", home);
	envp[0] = buf;
	sibling_env(kept, ARRAY_SIZE(kept), envp, 1, max);
}

int egress_prepare(const struct policy *pol, struct sandbox_plan *plan, struct egress *e, struct error *err)
{
	*e = (struct egress)EGRESS_INIT;
	if (policy_net_mode(pol) == POLICY_NET_NONE)
		return 0;
	char exe[PATH_MAX];
	int r = sibling_path("airlock-proxy", exe, sizeof(exe), err);
	if (r < 0)
		return r;
	if (pol->network.log) {
		e->log_fd = open(pol->network.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (e->log_fd < 0)
			return error_sys(err, errno, "network.log: cannot open %s", pol->network.log);
		e->log_max = pol->audit.max_size;
	}
	int rp[2], cs[2];
	if (pipe2(rp, O_CLOEXEC) < 0)
		return error_sys(err, errno, "pipe");
	e->records = rp[0];
	/* Room for the records of the supervisor's pause between two reads
	 * of a busy stream (supervisor.c), and more: a full pipe only makes
	 * the proxy wait. Best effort: the default 64 KiB holds a pause at
	 * over 100,000 requests a second. */
	(void)fcntl(rp[0], F_SETPIPE_SZ, EGRESS_RECORDS_PIPE);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cs) < 0) {
		close(rp[1]);
		return error_sys(err, errno, "socketpair");
	}
	e->control = cs[0];

	char cwd[PATH_MAX], uid[16], gid[16];
	const char *home = getenv("HOME");
	if (!getcwd(cwd, sizeof(cwd)))
		return error_sys(err, errno, "getcwd");
	snprintf(uid, sizeof(uid), "%u", plan->host_uid);
	snprintf(gid, sizeof(gid), "%u", plan->host_gid);
	/* The enterprise files the policy was narrowed by follow: the proxy
	 * reads the policy again and must narrow it the same way. */
	if (!home || home[0] != '/')
		home = "/";
	char *fixed[] = { exe, pol->file, cwd, (char *)home, "3", "4", uid, gid };
	char **argv = sibling_argv(fixed, ARRAY_SIZE(fixed), pol);
	if (!argv) {
		close(cs[1]);
		close(rp[1]);
		return error_set(err, ENOMEM, "out of memory");
	}
	char home_var[PATH_MAX + 8], *envp[16];
	proxy_env(home, home_var, sizeof(home_var), envp, ARRAY_SIZE(envp));
	pid_t pid = sibling_spawn(argv, envp, cs[1], rp[1]);
	free(argv);
	if (pid < 0)
		return error_sys(err, errno, "cannot start the egress proxy");
	close(cs[1]);
	close(rp[1]);
	e->pid = pid;

	/* The proxy's answer: the session CA's certificate, or none. */
	char *msg = malloc(65536);
	if (!msg)
		return error_set(err, ENOMEM, "out of memory");
	int fds[PROTO_MAX_FDS];
	int n = proto_recv(e->control, msg, 65536, fds);
	for (int i = 0; i < PROTO_MAX_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (n <= 0 || (msg[0] != PROXY_MSG_CA && msg[0] != PROXY_MSG_NO_CA)) {
		r = error_set(err, EIO, "the egress proxy did not start: %s",
			      n > 0 && msg[0] == PROXY_MSG_ERROR ? msg + 1 : "no answer");
		free(msg);
		return r;
	}
	if (msg[0] == PROXY_MSG_CA) {
		struct buf bundle = { 0 };
		for (size_t i = 0; i < ARRAY_SIZE(plan_system_bundles); i++) {
			int rr = file_read_all(plan_system_bundles[i], 8u << 20, &bundle);
			if (rr == -ENOMEM)
				goto oom;
			if (rr == 0) {
				if (buf_puts(&bundle, "\n") < 0)
					goto oom;
				break;
			}
			buf_reset(&bundle); /* missing or too large: the next one */
		}
		if (buf_puts(&bundle, msg + 1) < 0)
			goto oom;
		plan->ca_bundle = bundle.data;
		/* The JVM's own store, from the same certificates. */
		if (jks_from_pem(plan->ca_bundle, &plan->java_store) == -ENOMEM)
			goto oom;
	}
	free(msg);
	/* The credentials' secrets go to the proxy now, their placeholders
	 * into the sandbox's environment. */
	r = creds_hand_over(pol, plan, e->control, err);
	if (r >= 0)
		r = creds_env_hand_over(pol, e->control, err);
	return r < 0 ? r : step_up_socket(pol, e, err);
oom:
	free(msg);
	return error_set(err, ENOMEM, "out of memory");
}

int egress_identity(struct egress *e, struct auditlog *a, struct error *err)
{
	if (!a->identity)
		return 0;
	/* Over the control socket, never through the sandbox; our end of
	 * the channel is closed once sent, so that only the proxy can ask
	 * the writer to sign. */
	int r = e->control < 0 ? -EPIPE : proto_send(e->control, a->identity, a->identity_len, &a->sign_fd, 1);
	auditlog_identity_close(a);
	return r < 0 ? error_sys(err, -r, "cannot hand the egress proxy its channel to the audit writer") : 0;
}

int egress_start(struct egress *e, const int fds[3], struct error *err)
{
	/* 'L', then one letter per fd attached, in order: '4' the listener,
	 * '6' its IPv6 twin, 'D' the DNS socket. */
	static const char names[3] = { PROXY_SOCK_LISTEN4, PROXY_SOCK_LISTEN6, PROXY_SOCK_DNS };
	char msg[4] = { PROXY_MSG_LISTEN };
	int send_fds[3];
	size_t n = 0;
	for (size_t i = 0; i < 3; i++)
		if (fds[i] >= 0) {
			msg[1 + n] = names[i];
			send_fds[n++] = fds[i];
		}
	if (n == 0)
		return error_set(err, EINVAL, "no socket for the proxy");
	int r = proto_send(e->control, msg, 1 + n, send_fds, n);
	for (size_t i = 0; i < n; i++)
		close(send_fds[i]);
	close(e->control);
	e->control = -1;
	if (r < 0)
		return error_sys(err, -r, "cannot hand the proxy its sockets");
	return 0;
}

/* A denial of the proxy's for --trace-denials' report, as one readable
 * line: "http GET api.test:80/private/b: REASON [RULE]". The host, path
 * and reason come from the agent's request: control characters are
 * shown as '?', so they cannot draw on the terminal the report goes to. */
static void trace_line(const char *line, size_t len, struct trace_log *t)
{
	if (!t || len <= 1 || !memmem(line, len, "\"decision\":\"deny\"", 17))
		return;
	_cleanup_free_ struct audit_event *ev = malloc(sizeof(*ev));
	char what[800];
	/* A client that refused the session CA: its own message never names
	 * airlock, and the fix is in the reason, said whole (recognised by
	 * the reason field alone: a path is the agent's to write). */
	static const char refused[] = "the agent's TLS client refused the session CA";
	if (!ev || audit_event_parse(line, len, ev) < 0) {
		snprintf(what, sizeof(what), "network: a record the proxy wrote could not be read");
	} else {
		const char *kind = audit_event_str(ev, "kind"), *method = audit_event_str(ev, "method"),
			   *host = audit_event_str(ev, "host"), *path = audit_event_str(ev, "path"),
			   *rule = audit_event_str(ev, "rule"), *cred = audit_event_str(ev, "credential"),
			   *reason = audit_event_str(ev, "reason");
		int64_t port = audit_event_int(ev, "port", -1);
		char portbuf[16] = "";
		if (port > 0 && host)
			snprintf(portbuf, sizeof(portbuf), ":%lld", (long long)port);
		if (reason && !strncmp(reason, refused, sizeof(refused) - 1))
			snprintf(what, sizeof(what), "network: TLS to %s: %s", host ? host : "?", reason);
		else
			snprintf(what, sizeof(what), "%s%s%s%s%s%s%s: %s%s%s%s%s%s", kind ? kind : "network",
				 method ? " " : "", method ? method : "", host || path ? " " : "", host ? host : "",
				 portbuf, path ? path : "", reason ? reason : "denied", rule ? " [" : "", rule ? rule : "",
				 rule ? "]" : "", cred ? " credential " : "", cred ? cred : "");
		for (char *p = what; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
	}
	/* Observe mode: the proxy let it through and says so. */
	trace_record_text(t, what, memmem(line, len, "\"enforced\":false", sizeof("\"enforced\":false") - 1) != NULL);
}

bool egress_read(struct egress *e, struct trace_log *t)
{
	if (e->records < 0)
		return false;
	/* One read takes all the pipe holds (EGRESS_RECORDS_PIPE), straight
	 * into the partial line's buffer. */
	if (buf_reserve(&e->partial, EGRESS_RECORDS_PIPE) < 0) {
		/* Out of memory: the records cannot be kept, so the run ends
		 * (audit_lost) rather than go on unrecorded. */
		e->audit_lost = true;
		close(e->records);
		e->records = -1;
		return false;
	}
	ssize_t n = read(e->records, e->partial.data + e->partial.len, EGRESS_RECORDS_PIPE);
	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(e->records);
			e->records = -1;
		}
		return false;
	}
	e->partial.len += (size_t)n;
	char *start = e->partial.data, *nl;
	while ((nl = memchr(start, '\n', e->partial.len - (size_t)(start - e->partial.data)))) {
		trace_line(start, (size_t)(nl - start + 1), t);
		start = nl + 1;
	}
	/* Every whole line read goes on with one write to the network log and
	 * one send to the audit writer, in the proxy's order: a send per
	 * record cost a system call and a wake-up of the writer per request. */
	size_t whole = (size_t)(start - e->partial.data);
	const char *out = e->partial.data;
	size_t len = whole;
	/* Identical denials are counted, not repeated, in both logs. */
	if (whole && e->audit && !auditlog_filter(e->audit, &out, &len))
		e->audit_lost = true;
	if (len && e->log_fd >= 0) {
		/* network.log is bounded like the decision log: a flood of
		 * junk requests must not fill the host's disk through it
		 * either, with the decision log off or on. It stops here, and
		 * the run is ended (the supervisor reads log_full). */
		if (len > e->log_max - e->log_bytes) {
			e->log_full = true;
			close(e->log_fd);
			e->log_fd = -1;
		} else {
			(void)!write(e->log_fd, out, len);
			e->log_bytes += len;
		}
	}
	if (len && e->audit && !auditlog_send(e->audit, out, len))
		e->audit_lost = true;
	buf_consume(&e->partial, whole);
	return true;
}

bool egress_reaped(struct egress *e, pid_t pid)
{
	if (e->pid <= 0 || pid != e->pid)
		return false;
	e->pid = 0;
	e->died = true;
	return true;
}

static void proxy_signal(struct egress *e, int sig)
{
	if (kill(e->pid, sig) < 0 && errno == EPERM && e->signal_root)
		e->signal_root(e->signal_arg, sig);
}

void egress_stop(struct egress *e, struct trace_log *t)
{
	if (e->pid > 0) {
		/* SIGTERM first: the proxy sends the records it holds, wipes
		 * the credentials' secrets and exits; SIGKILL after 200 ms
		 * whatever it does. The records are read after it is gone. */
		proxy_signal(e, SIGTERM);
		bool reaped = false;
		for (int i = 0; i < 200 && !reaped; i++) {
			reaped = waitpid(e->pid, NULL, WNOHANG) == e->pid;
			if (!reaped)
				usleep(1000);
		}
		if (!reaped) {
			proxy_signal(e, SIGKILL);
			waitpid(e->pid, NULL, 0);
		}
		e->pid = 0;
	}
	while (e->records >= 0)
		egress_read(e, t);
	if (e->control >= 0)
		close(e->control);
	if (e->log_fd >= 0)
		close(e->log_fd);
	if (e->step_up_sock[0])
		unlink(e->step_up_sock);
	buf_free(&e->partial);
	bool lost = e->audit_lost, full = e->log_full; /* the caller still needs to know */
	*e = (struct egress)EGRESS_INIT;
	e->audit_lost = lost;
	e->log_full = full;
}
