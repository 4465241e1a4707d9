/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_MCP_GATEWAY_H
#define AIRLOCK_MCP_GATEWAY_H

/*
 * The stdio relay: messages from the client (the agent) to the server and
 * back, one JSON-RPC message per line, each checked by the engine before
 * it is passed on. Nothing is forwarded that was not parsed, checked and
 * re-serialised.
 */

#include "mcp/mcp.h"

struct mcp_pending;
struct mcp_held;

/* Bound on calls waiting for a person at once; more are denied. */
#define MCP_MAX_HELD 64

struct mcp_gateway {
	struct mcp_engine *engine;  /* borrowed */
	int client_in, client_out;  /* borrowed fds: the agent's side */
	int server_in, server_out;  /* borrowed fds: the server's stdin and stdout (server_in is closed
				     * by the gateway when the client's input ends) */
	/* Each record as one flat JSON line (kind "mcp"), newline included;
	 * NULL for none. */
	bool (*record)(void *ctx, const char *line, size_t len); /* false: the log is gone */
	void *record_ctx;
	bool record_failed;         /* then nothing more is forwarded (fail closed) */
	struct mcp_pending *pending; /* requests awaiting their response */
	size_t n_pending, cap_pending;
	/* Step-up: calls held until a person decides, through the control
	 * socket (airlock approve / deny) or the terminal; -1 when none.
	 * Without either, a step-up call is denied at once. */
	int control_fd;             /* borrowed listening socket */
	const char *control_path;   /* borrowed, for the prompt */
	int tty_fd;                 /* borrowed /dev/tty, or -1 */
	unsigned step_up_timeout;   /* seconds; then the call is denied */
	/* Held calls are announced and resolved by the caller (the proxy's
	 * step-up registry, mcp_http.c) rather than by mcp_gateway_run:
	 * hold() keeps the call and says nothing. */
	bool hold_for_caller;
	struct mcp_held *held;
	size_t n_held;
	unsigned long next_token;
};

/* Relay until the server's output ends. Returns 0, or a negative errno
 * when a write to either side fails. */
int mcp_gateway_run(struct mcp_gateway *g, struct error *err) WUR;

/* Handle one line from the client (to_server false: from the server),
 * writing whatever results to the fds. Exposed for the fuzz harness and
 * the unit tests. */
int mcp_gateway_line(struct mcp_gateway *g, bool from_client, const char *line, size_t len, struct error *err) WUR;

void mcp_gateway_fini(struct mcp_gateway *g);

/* Resolve a held call by its token: approve or deny. "reason" says by
 * whom, for the record. Returns false when no call has that token. */
bool mcp_gateway_resolve(struct mcp_gateway *g, const char *token, bool approve, const char *by, struct error *err,
			 int *rc);

/* The i-th held call's token, and its tool in *tool; NULL past the end. */
const char *mcp_gateway_held(const struct mcp_gateway *g, size_t i, const char **tool);

/* The control sockets' protocol: one line per connection, "list",
 * "approve TOKEN" or "deny TOKEN"; one answer. */
enum mcp_control_cmd { MCP_CONTROL_BAD, MCP_CONTROL_LIST, MCP_CONTROL_APPROVE, MCP_CONTROL_DENY };
enum mcp_control_cmd mcp_control_parse(const char *line, const char **token);

/* Accept one connection on the listening control socket, read its line
 * (a 2 s bound on a silent peer), answer it with handle's out. */
void mcp_control_serve(int listen_fd, void (*handle)(void *ctx, const char *line, char *out, size_t out_len),
		       void *ctx);

/* A command line from the control socket ("approve TOKEN", "deny TOKEN",
 * "list"), answered into out. */
void mcp_gateway_control(struct mcp_gateway *g, const char *line, char *out, size_t out_len, int *rc,
			 struct error *err);

/* Where control sockets live: a 0700 directory under the state directory
 * ($XDG_STATE_HOME or ~/.local/state, then airlock/mcp/run), which no
 * sandbox shows (its home is private). -1 when neither is set. The
 * standalone gateway and a session's gateways both put theirs there, so
 * `airlock approve TOKEN` finds the only one without --socket. */
int mcp_control_dir(char *out, size_t len);

/* The listening control socket at path, made 0600; or a negative errno. */
int mcp_control_listen(const char *path, struct error *err) WUR;

#endif
