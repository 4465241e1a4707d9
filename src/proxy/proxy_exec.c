/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-proxy: the egress proxy as an executable of its own.
 *
 * Only this program links the TLS libraries: `airlock run` without a
 * network section never loads them (they cost about 3 ms on every start).
 * The supervisor starts it before the sandbox exists:
 *
 *   airlock-proxy POLICY CWD HOME CONTROL-FD RECORDS-FD DROP-UID DROP-GID
 *
 * with an environment cleared but for the few variables egress.c names
 * (HOME, the TLS trust store's and the resolver's): the user's secrets
 * are never in its environment, where /proc/PID/environ would show them.
 *
 * It loads the same policy the supervisor loaded, makes the session CA
 * when an endpoint intercepts TLS and sends its certificate on CONTROL-FD
 * (or none, or why not), then waits there for the credentials, the
 * secret-looking values of the supervisor's environment for the leak
 * scanner, the step-up socket, the session certificate and a channel to
 * the audit writer, which signs the identity header (with
 * identity.header), and the listening sockets: proto/proxy.h holds the
 * messages. It serves them in a sandbox of its own (proxy_contain.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/broker.h"
#include "net/dlp.h"
#include "proto/proxy.h"
#include "proxy/proxy.h"
#include "net/tls.h"
#include "policy/layer.h"
#include "sandbox/creds.h"
#include "sandbox/internal.h"
#include "sandbox/proto.h"
#include "util/buf.h"
#include "util/cleanup.h"

__attribute__((noreturn)) static void refuse(int control, const char *msg)
{
	char buf[ERROR_MSG_MAX + 2];
	int n = snprintf(buf, sizeof(buf), "%c%s", PROXY_MSG_ERROR, msg);
	(void)!send(control, buf, n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, MSG_NOSIGNAL);
	_exit(1);
}

/* What the control socket hands over before the sockets: the proxy's
 * state as the messages build it. */
struct handover {
	int control;
	struct dlp *dlp;
	struct broker *broker;
	struct identity_signer *identity;
	int step_up_fd;
	char *step_up_path;
	bool env_full;
};

/* 'V': the supervisor's environment holds secrets the sandbox never sees
 * (it is cleared); if one turns up in a request anyway (read from a file
 * the agent could reach, say), the proxy refuses to send it. After the
 * credentials, which the scanner's room is kept for first. */
static void take_env(struct handover *h, char *buf, int n, const int *fds)
{
	(void)fds;
	const char *nul = memchr(buf + 1, '\0', (size_t)n - 1);
	if (!nul)
		_exit(1);
	int r = h->env_full ? 0 : dlp_add_secret(h->dlp, buf + 1, (const uint8_t *)nul + 1, (size_t)(buf + n - nul - 1));
	if (r == -E2BIG)
		h->env_full = true; /* no room left: the rest go unscanned, as before */
	else if (r < 0 && r != -EINVAL)
		_exit(1);
}

/* 'S': MCP step-up over HTTP: the control socket the supervisor made, and
 * its path (egress.c). Once. */
static void take_step_up(struct handover *h, char *buf, int n, const int *fds)
{
	if (h->step_up_fd >= 0 || fds[0] < 0 || n < 2 || !(h->step_up_path = strdup(buf + 1)))
		_exit(1);
	h->step_up_fd = fds[0];
}

/* 'I': the session certificate and the channel to the writer, which
 * signs for us (auditlog.h's 'I' message). Once. */
static void take_identity(struct handover *h, char *buf, int n, const int *fds)
{
	char sig[2 * 64 + 1];
	struct error err = { 0 };
	if (h->identity || fds[0] < 0 || n < 1 + 128 + 2)
		_exit(1);
	memcpy(sig, buf + 1, 128);
	sig[128] = '\0';
	const char *cert = buf + 1 + 128;
	if (identity_signer_new(fds[0], cert, (size_t)(buf + n - cert), sig, &h->identity, &err) < 0)
		refuse(h->control, err.msg);
}

/* 'K': a credential: name, placeholder and secret (creds.c). */
static void take_cred(struct handover *h, char *buf, int n, const int *fds)
{
	(void)fds;
	const char *name = buf + 1;
	const char *ph = memchr(name, '\0', (size_t)n - 1) ? name + strlen(name) + 1 : NULL;
	const char *secret = ph && ph < buf + n ? ph + strlen(ph) + 1 : NULL;
	size_t len = secret && secret <= buf + n ? (size_t)(buf + n - secret) : 0;
	if (!secret || broker_set(h->broker, name, ph, (const uint8_t *)secret, len) < 0)
		_exit(1);
	/* The real value must not leave by any other way either (a short
	 * one would match by accident: not scanned). */
	char label[96];
	snprintf(label, sizeof(label), "credential:%s", name);
	int r = dlp_add_secret(h->dlp, label, (const uint8_t *)secret, len);
	if (r < 0 && r != -EINVAL)
		_exit(1);
}

static const struct {
	char msg;
	void (*take)(struct handover *h, char *buf, int n, const int *fds);
} handover_msgs[] = {
	{ PROXY_MSG_CRED, take_cred },
	{ PROXY_MSG_ENV, take_env },
	{ PROXY_MSG_STEP_UP, take_step_up },
	{ PROXY_MSG_IDENTITY, take_identity },
};

/* The credentials, the environment's secrets, the step-up socket and the
 * identity channel, in any order and until the first other message,
 * whose length is returned (buf and fds hold it). Each secret is wiped
 * from buf once taken. */
static int take_handover(struct handover *h, char *buf, size_t cap, int fds[PROTO_MAX_FDS])
{
	int n;
	while ((n = proto_recv(h->control, buf, cap, fds)) > 0) {
		size_t i = 0;
		while (i < ARRAY_SIZE(handover_msgs) && handover_msgs[i].msg != buf[0])
			i++;
		if (i == ARRAY_SIZE(handover_msgs))
			break;
		handover_msgs[i].take(h, buf, n, fds);
		explicit_bzero(buf, cap);
	}
	return n;
}

/* The policy as `airlock run` loaded it: the same file and the same
 * enterprise narrowing (argv[8...], policy/layer.h), or the proxy would
 * allow what the enterprise cut. Its messages were said already. */
static struct policy *load_policy(int argc, char **argv, int control)
{
	struct policy_ctx ctx = { .cwd = argv[2], .home = argv[3], .no_env = true };
	struct error err = { 0 };
	struct policy *pol = NULL;
	if ((strcmp(argv[1], "<default>") == 0 ? policy_default(&ctx, &pol, &err)
					       : policy_load_file(argv[1], &ctx, &pol, &err)) < 0)
		refuse(control, err.msg);
	if (argc > 8) {
		struct policy_layer_report rep = { 0 };
		int lr = policy_apply_enterprise(pol, argv + 8, (size_t)(argc - 8), &ctx, &rep, &err);
		policy_layer_report_free(&rep);
		if (lr < 0)
			refuse(control, err.msg);
	}
	return pol;
}

/* The session CA when an endpoint intercepts TLS, its certificate sent to
 * the supervisor (or PROXY_MSG_NO_CA). */
static struct tls_ca *start_ca(const struct policy *pol, int control)
{
	struct error err = { 0 };
	struct tls_ca *ca = NULL;
	struct buf msg = { 0 };
	if (intercepts(pol)) {
		if (tls_ca_new(&ca, &err) < 0)
			refuse(control, err.msg);
		if (buf_append(&msg, &(char){ PROXY_MSG_CA }, 1) < 0 || buf_puts(&msg, tls_ca_cert_pem(ca)) < 0)
			refuse(control, "out of memory");
	} else if (buf_append(&msg, &(char){ PROXY_MSG_NO_CA }, 1) < 0) {
		refuse(control, "out of memory");
	}
	if (send(control, msg.data, msg.len, MSG_NOSIGNAL) != (ssize_t)msg.len)
		_exit(1);
	buf_free(&msg);
	return ca;
}

int main(int argc, char **argv)
{
	prctl(PR_SET_PDEATHSIG, 9 /* SIGKILL */);
	if (argc < 8) {
		fprintf(stderr, "airlock-proxy: started by airlock run, not by hand\n");
		return 2;
	}
	int control = atoi(argv[4]);
	struct policy *pol = load_policy(argc, argv, control);
	struct dlp *dlp = dlp_new();
	if (!dlp)
		refuse(control, "cannot set up the leak scanner");
	struct tls_ca *ca = start_ca(pol, control);

	/* Then the hand-over (proto/proxy.h), and 'L' with one letter per
	 * socket attached (egress.c): '4' the listener, '6' its IPv6 twin,
	 * 'D' the DNS socket. */
	struct handover h = { .control = control, .dlp = dlp, .broker = broker_new(pol), .step_up_fd = -1 };
	size_t cap = 1 + 65 + BROKER_PLACEHOLDER_LEN + 1 + BROKER_MAX_SECRET + 1;
	if (cap < CREDS_ENV_MSG_MAX + 1)
		cap = CREDS_ENV_MSG_MAX + 1;
	char *buf = malloc(cap);
	int fds[PROTO_MAX_FDS];
	if (!h.broker || !buf)
		_exit(1);
	int n = take_handover(&h, buf, cap, fds);
	if (n < 2 || buf[0] != PROXY_MSG_LISTEN || buf[1] != PROXY_SOCK_LISTEN4 || !broker_complete(h.broker))
		_exit(1); /* the sandbox was never built */
	if (pol->identity.header && !h.identity)
		_exit(1); /* no request may leave without the header asked for */
	int listen6 = -1, dns = -1;
	for (int i = 1; i < n; i++) {
		if (fds[i - 1] < 0)
			_exit(1);
		if (buf[i] == PROXY_SOCK_LISTEN6)
			listen6 = fds[i - 1];
		else if (buf[i] == PROXY_SOCK_DNS)
			dns = fds[i - 1];
	}
	close(control);
	if (pol->network.mode == POLICY_NET_TRANSPARENT && dns < 0)
		_exit(1);

	struct proxy_config pc = {
		.policy = pol,
		.listen_fd = fds[0],
		.listen6_fd = listen6,
		.dns_fd = dns,
		.transparent = pol->network.mode == POLICY_NET_TRANSPARENT,
		.records_fd = atoi(argv[5]),
		.dlp = dlp,
		.broker = h.broker,
		.ca = ca,
		.identity = h.identity,
		.observe = pol->sandbox.mode == POLICY_MODE_OBSERVE,
		.step_up_fd = h.step_up_fd,
		.step_up_path = h.step_up_path,
		.drop_uid = (uid_t)strtoul(argv[6], NULL, 10),
		.drop_gid = (gid_t)strtoul(argv[7], NULL, 10),
		.contain = proxy_contain,
	};
	proxy_main(&pc);
}
