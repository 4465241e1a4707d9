/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Step-up over HTTP: an MCP call the policy holds for a person waits in
 * its exchange until someone approves or denies it through the proxy's
 * control socket, or its time runs out.
 */
#include "proxy/mcp_http_internal.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/fiber.h"

static int su_fd = -1; /* the step-up control socket, or -1 */

/* A step_up call holds its exchange's thread until a person decides
 * through the proxy's control socket (one per proxy: the supervisor makes
 * it in the 0700 run directory and hands it over) or the server's
 * step_up_timeout passes. The wait is outside the engine's lock, so the
 * server's other calls go on. Tokens are unique in the proxy; at most
 * MCP_MAX_HELD calls wait at once. */
enum { SU_WAITING, SU_APPROVED, SU_DENIED };

struct step_up_wait {
	unsigned long token;
	char tool[128];
	int state;
	int decided; /* eventfd: written when state leaves SU_WAITING */
	struct step_up_wait *next;
};

/* WARNING: never held across a wait (util/fiber.h): the held call waits
 * on its eventfd with the lock released. */
static pthread_mutex_t su_lock = PTHREAD_MUTEX_INITIALIZER;
static struct step_up_wait *su_waits;
static size_t su_n;
static unsigned long su_next;
static char su_path[4096];

/* The proxy's control socket speaks the gateways' protocol
 * (mcp_control_serve), so `airlock approve` works against either. */
static bool su_waiting(void *ctx, size_t i, char *token, size_t token_len, char *tool, size_t tool_len)
{
	(void)ctx;
	bool found = false;
	pthread_mutex_lock(&su_lock);
	for (struct step_up_wait *w = su_waits; w && !found; w = w->next)
		if (w->state == SU_WAITING && i-- == 0) {
			snprintf(token, token_len, "%lu", w->token);
			snprintf(tool, tool_len, "%s", w->tool);
			found = true;
		}
	pthread_mutex_unlock(&su_lock);
	return found;
}

static bool su_decide(void *ctx, const char *t, bool approve)
{
	(void)ctx;
	char *end;
	errno = 0;
	unsigned long token = strtoul(t, &end, 10);
	if (*t < '0' || *t > '9' || *end || errno)
		return false;
	bool found = false;
	pthread_mutex_lock(&su_lock);
	for (struct step_up_wait *w = su_waits; w; w = w->next)
		if (w->token == token && w->state == SU_WAITING) {
			w->state = approve ? SU_APPROVED : SU_DENIED;
			uint64_t one = 1;
			(void)!write(w->decided, &one, sizeof(one));
			found = true;
		}
	pthread_mutex_unlock(&su_lock);
	return found;
}

/* The peer is the session's user: the socket is 0600 in a 0700
 * directory the sandbox does not show. */
static void *su_main(void *arg)
{
	static const struct mcp_control_ops ops = { .waiting = su_waiting, .decide = su_decide };
	(void)arg;
	for (;;)
		mcp_control_serve(su_fd, &ops, NULL);
	return NULL;
}

int mcp_http_step_up_serve(int fd, const char *path, struct error *err)
{
	snprintf(su_path, sizeof(su_path), "%s", path);
	su_fd = fd;
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	int r = pthread_create(&t, &attr, su_main, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		su_fd = -1;
		return error_set(err, r, "cannot start the step-up listener");
	}
	return 0;
}

/* The second record; the call goes to the server or an error result to
 * the agent. */
int mcp_http_step_up_wait(struct mcp_http_exchange *x, struct error *err)
{
	const char *tool = NULL;
	char local[24];
	snprintf(local, sizeof(local), "%s", mcp_gateway_held(&x->gw, 0, &tool));
	struct step_up_wait w = { .state = SU_WAITING, .decided = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
	snprintf(w.tool, sizeof(w.tool), "%s", tool);
	unsigned timeout = x->gw.step_up_timeout;
	pthread_mutex_lock(&su_lock);
	/* No eventfd: refused as when the queue is full. */
	bool full = su_n >= MCP_MAX_HELD || w.decided < 0;
	if (!full) {
		w.token = ++su_next;
		w.next = su_waits;
		su_waits = &w;
		su_n++;
	}
	pthread_mutex_unlock(&su_lock);
	if (!full)
		mcp_say(-1, "airlock: step-up %lu: server %s asks to run tool %s (%s:%u); approve with 'airlock approve "
		       "--socket %s %lu' or deny with 'airlock deny --socket %s %lu' within %us\n",
		       w.token, x->srv->name, w.tool, x->host, x->port, su_path, w.token, su_path, w.token, timeout);
	int64_t until = clock_mono_ns() + (int64_t)timeout * 1000000000;
	bool left = false;
	for (;;) {
		pthread_mutex_lock(&su_lock);
		bool waiting = !full && w.state == SU_WAITING;
		pthread_mutex_unlock(&su_lock);
		int64_t now = clock_mono_ns();
		if (!waiting || now >= until)
			break;
		/* The person's answer, or the agent hanging up: a call whose
		 * agent left is not kept for a person to approve into the
		 * void. */
		struct pollfd p[2] = { { .fd = w.decided, .events = POLLIN },
				       { .fd = x->client_fd, .events = POLLRDHUP } };
		int64_t ms = (until - now + 999999) / 1000000;
		if (fiber_poll(p, x->client_fd >= 0 ? 2 : 1, ms > 60000 ? 60000 : (int)ms) > 0 &&
		    (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
			pthread_mutex_lock(&su_lock);
			left = w.state == SU_WAITING;
			pthread_mutex_unlock(&su_lock);
			if (left)
				break;
		}
	}
	pthread_mutex_lock(&su_lock);
	int state = w.state;
	if (!full) {
		for (struct step_up_wait **p = &su_waits; *p; p = &(*p)->next)
			if (*p == &w) {
				*p = w.next;
				break;
			}
		su_n--;
	}
	pthread_mutex_unlock(&su_lock);
	if (w.decided >= 0)
		close(w.decided);
	char by[80];
	if (state != SU_WAITING)
		snprintf(by, sizeof(by), "through the control socket");
	else if (left)
		snprintf(by, sizeof(by), "because the client left");
	else if (full)
		snprintf(by, sizeof(by), "at once: %d calls already wait", MCP_MAX_HELD);
	else
		snprintf(by, sizeof(by), "by the timeout after %us", timeout);
	int rc = 0;
	pthread_mutex_lock(&x->srv->lock);
	bool known = mcp_gateway_resolve(&x->gw, local, state == SU_APPROVED, by, err, &rc);
	pthread_mutex_unlock(&x->srv->lock);
	return known ? rc : error_set(err, EINVAL, "a held call was lost");
}

bool mcp_http_step_up_listening(void)
{
	return su_fd >= 0;
}
