/* SPDX-License-Identifier: Apache-2.0 */
/*
 * airlock-proxy's own sandbox. It parses HTTP, TLS and JSON that the
 * agent writes and holds every brokered secret, so it is confined at
 * least as closely as the agent: once it holds all it needs (the policy,
 * the credentials, the session CA, its sockets, its dropped ids) and
 * before it reads a byte from the agent, it enters a Landlock domain
 * that reads only what name resolution and the trust store need, writes
 * nothing (but the MCP gateway's pins files, when the policy names some)
 * and executes nothing, and then a seccomp allow-list
 * (seccomp_rules_build_proxy). A request that takes the proxy over gets
 * a process that cannot run a program, read the user's files or the
 * supervisor's /proc/PID/environ (the same uid, unprivileged), write a
 * file, trace or signal another process, or make memory executable.
 */
#include <errno.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy.h"
#include "policy/mcp.h"
#include "sandbox/internal.h"
#include "sandbox/landlock_abi.h"
#include "util/cleanup.h"

#define GRANTS_MAX 64

/* Read beneath, no more. */
static const char *const read_dirs[] = {
	/* nsswitch.conf, resolv.conf, hosts, gai.conf, ld.so.cache, and the
	 * trust store of most distributions (/etc/ssl, /etc/pki) */
	"/etc",
	/* the NSS modules getaddrinfo loads on its first call (libnss_dns,
	 * libnss_resolve, libnss_mdns...) and the libraries they need */
	"/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib",
	/* the certificates /etc/ssl/certs/HASH.0 links to (Debian), which
	 * OpenSSL's directory lookup opens during a handshake */
	"/usr/share/ca-certificates", "/usr/local/share/ca-certificates",
};

/* Resolver files that may link out of /etc: with systemd-resolved,
 * resolv.conf is /run/systemd/resolve/stub-resolv.conf, replaced by a
 * rename on each change, so the directory it is in is granted. */
static const char *const linked[] = {
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
};

struct grants {
	struct landlock_grant v[GRANTS_MAX];
	char *owned[GRANTS_MAX];
	size_t n;
};

static void grants_free(struct grants *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->owned[i]);
}

/* path is owned by g from here on when owned. */
static int grant(struct grants *g, const char *path, uint64_t access, bool owned)
{
	if (!path) /* a strdup or realpath that failed: ENOENT, or out of memory */
		return errno == ENOMEM ? -ENOMEM : 0;
	if (g->n == GRANTS_MAX) {
		if (owned)
			free((char *)path);
		return -E2BIG;
	}
	g->v[g->n] = (struct landlock_grant){ .path = path, .access = access };
	g->owned[g->n++] = owned ? (char *)path : NULL;
	return 0;
}

/* The directory a file is in, as the kernel resolves it, or NULL. */
static char *dir_of(const char *file)
{
	char *real = realpath(file, NULL);
	char *slash = real ? strrchr(real, '/') : NULL;
	if (slash)
		*(slash == real ? slash + 1 : slash) = '\0';
	return real;
}

static int add_grants(const struct policy *pol, struct grants *g, bool *pins)
{
	int r = 0;
	for (size_t i = 0; i < ARRAY_SIZE(read_dirs) && r == 0; i++)
		r = grant(g, read_dirs[i], LL_READ, false);
	for (size_t i = 0; i < ARRAY_SIZE(linked) && r == 0; i++) {
		_cleanup_free_ char *d = dir_of(linked[i]);
		if (d && strcmp(d, "/etc") != 0 && strncmp(d, "/etc/", 5) != 0)
			r = grant(g, steal_pointer(&d), LL_READ, true);
	}
	/* The trust store's directory, and $SSL_CERT_DIR's (a list): OpenSSL
	 * looks a certificate up there while it verifies an upstream. */
	if (r == 0)
		r = grant(g, X509_get_default_cert_dir(), LL_READ, false);
	const char *env = getenv(X509_get_default_cert_dir_env());
	_cleanup_free_ char *dirs = env ? strdup(env) : NULL;
	char *save = NULL;
	for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && r == 0; d = strtok_r(NULL, ":", &save))
		if (d[0] == '/')
			r = grant(g, strdup(d), LL_READ, true);
	/* The pins file of each MCP server the gateway reaches over HTTP
	 * (mcp/pins.c writes a lock file and a temporary file renamed over
	 * it, in the pins file's directory): written there, nowhere else. */
	const uint64_t pins_rw = LL_READ | LL_FS_WRITE_FILE | LL_FS_MAKE_REG | LL_FS_REMOVE_FILE | LL_FS_TRUNCATE;
	for (size_t i = 0; i < pol->network.n_endpoints && r == 0; i++) {
		const char *name = pol->network.endpoints[i].mcp_server;
		const struct policy_mcp_server *srv = name ? policy_mcp_server(pol->mcp, name) : NULL;
		if (!srv || !srv->pins)
			continue;
		*pins = true;
		_cleanup_free_ char *d = strdup(srv->pins);
		char *slash = d ? strrchr(d, '/') : NULL;
		if (slash)
			*(slash == d ? slash + 1 : slash) = '\0';
		r = grant(g, steal_pointer(&d), pins_rw, true);
	}
	return r;
}

int proxy_contain(const struct policy *pol, struct error *err)
{
	struct grants g = { .n = 0 };
	bool pins = false;
	int r = add_grants(pol, &g, &pins);
	if (r < 0) {
		grants_free(&g);
		return error_sys(err, -r, "egress proxy: its Landlock rules");
	}
	/* Landlock first: seccomp then refuses its calls. */
	r = landlock_confine(g.v, g.n, err);
	grants_free(&g);
	if (r < 0)
		return r;
	return seccomp_apply_proxy(pins, err);
}
