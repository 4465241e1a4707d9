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
	/* Where changed pins are written: NULL, the engine's pins file
	 * (mcp_pins_save); else this, which returns 0 or a negative errno
	 * with err set, and clears the pins' dirty marks once written (a
	 * session's gateway hands them to its monitor, proto/mcpgw.h). */
	int (*pins_save)(void *ctx, struct mcp_pins *pins, struct error *err);
	void *pins_ctx;
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

/* The control sockets' protocol: one connection, one line ("list",
 * "approve TOKEN" or "deny TOKEN"), one answer ("TOKEN TOOL" lines;
 * "approved TOKEN", "denied TOKEN" or "error: ..."). The owner of the
 * waiting calls answers through these. */
struct mcp_control_ops {
	/* The i-th waiting call: its token and tool; false past the last. */
	bool (*waiting)(void *ctx, size_t i, char *token, size_t token_len, char *tool, size_t tool_len);
	/* Decide the call under token; false when none waits under it. */
	bool (*decide)(void *ctx, const char *token, bool approve);
};

/* Accept one connection on the listening control socket, read its line
 * (a 2 s bound on a silent peer) and answer it through ops. */
void mcp_control_serve(int listen_fd, const struct mcp_control_ops *ops, void *ctx);

/* To the person: stderr (an MCP client shows a server's stderr as its
 * log; a session's is the user's) and tty_fd when >= 0, control
 * characters of the peer's names made harmless. */
void mcp_say(int tty_fd, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* Where control sockets live: a 0700 directory under the state directory
 * ($XDG_STATE_HOME or ~/.local/state, then airlock/mcp/run), which no
 * sandbox shows (its home is private). -1 when neither is set. The
 * standalone gateway and a session's gateways both put theirs there, so
 * `airlock approve TOKEN` finds the only one without --socket. */
int mcp_control_dir(char *out, size_t len);

/* The listening control socket at path, made 0600; or a negative errno. */
int mcp_control_listen(const char *path, struct error *err) WUR;

#endif
