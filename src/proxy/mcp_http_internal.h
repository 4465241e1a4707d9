/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_NET_MCP_HTTP_INTERNAL_H
#define AIRLOCK_NET_MCP_HTTP_INTERNAL_H

/*
 * What MCP over HTTP's two files share: a server's engine and one
 * exchange through the gateway (mcp_http.c), and the step-up wait a held
 * call makes (mcp_http_stepup.c).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcp/gateway.h"
#include "mcp/mcp.h"
#include "proxy/mcp_http.h"

#pragma GCC visibility push(hidden)

struct mcp_http_server {
	char *name;
	struct mcp_engine engine;
	pthread_mutex_t lock; /* the engine's counters and pins; one message at a time */
};

struct mcp_http_exchange {
	struct mcp_http_server *srv;
	struct mcp_gateway gw;
	int to_server, to_client; /* memfds: the gateway's outputs */
	char host[HTTP_MAX_HOST + 1];
	uint16_t port;
	int client_fd; /* the agent's connection (watched while a call waits), or -1 */
};

/* Whether the step-up control socket is being served: a held call then
 * waits for a person instead of being refused at once. */
bool mcp_http_step_up_listening(void);

/* Wait for a person's answer to the exchange's held call, then resolve
 * it in the gateway. */
int mcp_http_step_up_wait(struct mcp_http_exchange *x, struct error *err);

#pragma GCC visibility pop

#endif
