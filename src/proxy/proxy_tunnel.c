/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy's CONNECT tunnels: decided on host and port, and then
 * either intercepted (TLS ended with a certificate of the session's CA,
 * each request inside decided as a plain one) or relayed blind with the
 * ClientHello's SNI held to the same host.
 */
#include "proxy/proxy_internal.h"

/* The CA's leaf cache is not thread-safe, and a context it returns lives
 * only until the next call: both the lookup and SSL_new happen under this. */
static pthread_mutex_t ca_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- CONNECT ---- */

/* Read the ClientHello (without consuming it) until its SNI is known. */
static int peek_sni(struct conn *c, char *sni, size_t len)
{
	for (;;) {
		if (c->in.len) {
			int r = tls_parse_sni((const uint8_t *)c->in.data, c->in.len, sni, len);
			if (r != 0)
				return r;
		}
		if (c->in.len > 16384 + 5)
			return -EINVAL;
		if (buf_reserve(&c->in, 4096) < 0)
			return -ENOMEM;
		ssize_t n = cread(c, c->in.data + c->in.len, 4096);
		if (n <= 0)
			return -EIO;
		c->in.len += (size_t)n;
	}
}

/* A tunnel the decision d refused: answered 403 (when the agent waits for
 * an answer) and recorded, true; or, in observe mode, let through with
 * the denial noted in rec, false. */
static bool tunnel_refused(struct conn *c, struct rec *rec, char *obs, size_t obs_len, bool announce,
			   const char *verb, const char *host, uint16_t port, const struct net_decision *d)
{
	if (proxy_let_through(rec, obs, obs_len, NULL, d->rule, d->reason))
		return false;
	if (announce) {
		char reason[512];
		snprintf(reason, sizeof(reason), "%s %s:%u: %s", verb, host, port, d->reason);
		proxy_answer(c, 403, "denied", reason);
	}
	rec->rule = d->rule;
	rec->reason = d->reason;
	proxy_record(rec);
	return true;
}

/* WARNING: the sandbox's path of the bundle (PLAN_CA_BUNDLE in
 * src/sandbox/internal.h); the reason below sends users to it. */
#define PROXY_CA_BUNDLE "/run/airlock/ca.pem"

/* The agent's side of an intercepted handshake: has our certificate gone
 * out? (app data: a bool). */
static void note_cert_sent(const SSL *ssl, int where, int ret)
{
	(void)ret;
	if ((where & SSL_CB_LOOP) && SSL_get_state(ssl) == TLS_ST_SW_CERT)
		*(bool *)SSL_get_app_data(ssl) = true;
}

/* Why the agent's side of an intercepted handshake failed. A client that
 * does not trust the session CA (its own CA setting, a pinned bundle, a
 * JDK with a store of its own) says so with an alert, unknown_ca from
 * OpenSSL, Go and node, certificate_unknown from Java and NSS,
 * bad_certificate from others, or hangs up once it has seen our
 * certificate; the tool then prints a certificate error that never names
 * airlock. The reason names the session bundle and the variables that
 * point tools at it. No 403 page is possible: the client refused the only
 * channel it would read one from. */
static const char *agent_handshake_failure(SSL *ssl, int ret, bool cert_sent, char *buf, size_t len)
{
	static const char fix[] = "trust " PROXY_CA_BUNDLE " in its CA setting (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, "
				  "REQUESTS_CA_BUNDLE, GIT_SSL_CAINFO, NPM_CONFIG_CAFILE point there; Java: "
				  "its default trust store)";
	int alert = -1;
	bool eof = SSL_get_error(ssl, ret) == SSL_ERROR_SYSCALL || SSL_get_error(ssl, ret) == SSL_ERROR_ZERO_RETURN;
	unsigned long e;
	while ((e = ERR_get_error())) {
		int why = ERR_GET_REASON(e);
		if (ERR_GET_LIB(e) == ERR_LIB_SSL && why > SSL_AD_REASON_OFFSET && why < SSL_AD_REASON_OFFSET + 256)
			alert = why - SSL_AD_REASON_OFFSET;
		else if (ERR_GET_LIB(e) == ERR_LIB_SSL && why == SSL_R_UNEXPECTED_EOF_WHILE_READING)
			eof = true;
	}
	switch (alert) {
	case SSL_AD_UNKNOWN_CA:
	case SSL_AD_BAD_CERTIFICATE:
	case SSL_AD_CERTIFICATE_UNKNOWN:
	case SSL_AD_UNSUPPORTED_CERTIFICATE:
		snprintf(buf, len, "the agent's TLS client refused the session CA (alert %s); %s",
			 SSL_alert_desc_string_long(alert), fix);
		return buf;
	case -1:
		break;
	default:
		snprintf(buf, len, "TLS handshake with the agent failed (alert %s)", SSL_alert_desc_string_long(alert));
		return buf;
	}
	if (cert_sent && eof) {
		snprintf(buf, len, "the agent's TLS client refused the session CA (it hung up after the certificate); %s",
			 fix);
		return buf;
	}
	return "TLS handshake with the agent failed";
}

/* A TLS tunnel to target_host:port: asked for with CONNECT (announce: the
 * agent waits for our 200), or a redirected connection whose first byte
 * opened a TLS handshake (nothing to announce; the agent's ClientHello is
 * still unread in the socket). */
void proxy_open_tunnel(struct conn *c, const char *target_host, uint16_t port, bool announce)
{
	const struct policy_network *net = &proxy_cfg->policy->network;
	char host[HTTP_MAX_HOST + 1], reason[512];
	struct net_addr ip;
	struct net_decision d = { 0 }, would;
	struct rec rec = { .decision = "deny", .kind = announce ? "connect" : "transparent-tls",
			   .method = announce ? "CONNECT" : NULL, .port = port };
	char obs[512]; /* observe mode: the reason of the denial let through */
	const char *verb = announce ? "CONNECT" : "TLS to";
	int kind = addr_normalize_host(target_host, host, sizeof(host), &ip);
	rec.host = kind >= 0 ? host : target_host;
	if (kind < 0) {
		if (announce)
			proxy_answer(c, 400, "invalid host", target_host);
		rec.reason = "invalid host";
		record_for(c, &rec);
		return;
	}
	const struct broker_cred *bc = proxy_cfg->broker ? broker_find(proxy_cfg->broker, host, strlen(host)) : NULL;
	if (bc) {
		snprintf(reason, sizeof(reason), "the placeholder of credential %s in the host name", bc->pol->name);
		rec.credential = bc->pol->name;
		if (!proxy_let_through(&rec, obs, sizeof(obs), "credential_misuse", NULL, reason)) {
			if (announce)
				proxy_answer(c, 403, "credential misuse", reason);
			rec.kind = "credential_misuse";
			rec.reason = reason;
			record_for(c, &rec);
			return;
		}
	}
	if (!netpol_decide_host(net, host, port, &d) &&
	    tunnel_refused(c, &rec, obs, sizeof(obs), announce, verb, host, port, &d))
		return;
	/* NULL when observe mode let a denied host through: a tunnel
	 * spliced as it is, not intercepted. */
	const struct policy_endpoint *ep = d.ep;
	if (!rec.observed)
		rec.rule = d.rule;
	/* A passthrough tunnel is opaque: refused to an endpoint whose rules
	 * or protocol: mcp would have decided each request in it. */
	struct net_decision td;
	if (ep && !netpol_decide_tunnel(ep, port, &td)) {
		if (tunnel_refused(c, &rec, obs, sizeof(obs), announce, verb, host, port, &td))
			return;
		ep = NULL; /* observe mode: spliced as it is, not intercepted */
	}
	int fd = proxy_upstream_connect(host, kind == 1, &ip, port, &d, reason, sizeof(reason), &would);
	if (would.reason[0])
		(void)proxy_let_through(&rec, obs, sizeof(obs), NULL, would.rule, would.reason);
	if (fd < 0) {
		if (announce)
			proxy_answer(c, fd == -EACCES ? 403 : 502, fd == -EACCES ? "denied" : "bad gateway", reason);
		if (!rec.observed)
			rec.reason = reason;
		record_for(c, &rec);
		return;
	}
	c->ufd = fd;
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	if (announce && !cwrite(c, ok, sizeof(ok) - 1))
		return;

	if (ep && ep->intercept) {
		struct error err = { 0 };
		if (!proxy_cfg->ca || c->in.len) {
			rec.reason = proxy_cfg->ca ? "bytes before the TLS handshake" : "no session CA";
			record_for(c, &rec);
			return;
		}
		pthread_mutex_lock(&ca_lock);
		SSL_CTX *sctx = tls_ca_server_ctx(proxy_cfg->ca, host, &err);
		c->cssl = sctx ? SSL_new(sctx) : NULL;
		pthread_mutex_unlock(&ca_lock);
		if (!c->cssl) {
			rec.reason = err.msg[0] ? err.msg : "cannot make a TLS session";
			record_for(c, &rec);
			return;
		}
		bool cert_sent = false;
		SSL_set_app_data(c->cssl, &cert_sent);
		SSL_set_info_callback(c->cssl, note_cert_sent);
		int ar = SSL_set_fd(c->cssl, c->cfd) ? proxy_ssl_handshake(c->cssl, c->cfd, SSL_accept) : -1;
		SSL_set_info_callback(c->cssl, NULL);
		SSL_set_app_data(c->cssl, NULL);
		if (ar != 1) {
			rec.reason = agent_handshake_failure(c->cssl, ar, cert_sent, reason, sizeof(reason));
			record_for(c, &rec);
			return;
		}
		/* The name the agent's TLS stack asked for must be the
		 * CONNECT host (no fronting behind an allowed name). */
		const char *sni = SSL_get_servername(c->cssl, TLSEXT_NAMETYPE_host_name);
		if ((sni && strcasecmp(sni, host) != 0) || (!sni && kind == 0)) {
			snprintf(reason, sizeof(reason), "TLS SNI %s does not match %s %s", sni ? sni : "(none)",
				 verb, host);
			if (!proxy_let_through(&rec, obs, sizeof(obs), NULL, NULL, reason)) {
				rec.reason = reason;
				record_for(c, &rec);
				return;
			}
		}
		if (!proxy_upstream_tls_start(c, host, port, reason, sizeof(reason))) {
			proxy_answer(c, 502, "bad gateway", reason);
			rec.reason = reason;
			record_for(c, &rec);
			return;
		}
		if (!rec.observed) {
			rec.decision = "allow";
			rec.reason = "intercepted";
		}
		record_for(c, &rec);
		snprintf(c->thost, sizeof(c->thost), "%s", host);
		c->tport = port;
		c->tep = ep;
		snprintf(c->uhost, sizeof(c->uhost), "%s", host);
		c->uport = port;
		proxy_serve_requests(c);
		return;
	}

	/* Not intercepted: decided on host and port, and the SNI must agree. */
	char sni[256];
	int r = peek_sni(c, sni, sizeof(sni));
	bool sni_ok = (r == 1 && strcmp(sni, host) == 0) || (r == -ENOENT && kind == 1);
	if (!sni_ok) {
		if (r == 1)
			snprintf(reason, sizeof(reason), "TLS SNI %s does not match %s %s (domain fronting)", sni,
				 verb, host);
		else
			snprintf(reason, sizeof(reason), "the tunnel to %s:%u did not start with a TLS ClientHello %s",
				 host, port, r == -ENOENT ? "naming the host" : "");
		if (!proxy_let_through(&rec, obs, sizeof(obs), NULL, NULL, reason)) {
			rec.reason = reason;
			record_for(c, &rec);
			return;
		}
	}
	rec.decision = rec.observed ? "deny" : "allow";
	if (!proxy_io_write(c->ufd, NULL, c->in.data, c->in.len))
		return;
	rec.up = c->in.len;
	buf_reset(&c->in);
	proxy_splice_relay(c->cfd, c->ufd, &rec.up, &rec.down);
	record_for(c, &rec);
}
