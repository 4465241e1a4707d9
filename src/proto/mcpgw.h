/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_PROTO_MCPGW_H
#define AIRLOCK_PROTO_MCPGW_H

/*
 * The wire between an MCP gateway's monitor and the gateway it starts,
 * airlock-mcp-gateway (mcpgw/gateway_exec.c), which parses the client's
 * and the server's JSON-RPC in a sandbox of its own. The monitor is a
 * session's connection monitor (a fork of the supervisor, one per
 * connection, sandbox/mcpgw.c), or `airlock mcp run` itself for a stdio
 * client (cli/mcp.c). Everything that crosses, in one place:
 *
 *   argv  airlock-mcp-gateway POLICY CWD HOME [LAYER...]
 *         the policy file, read again as the monitor's side read it
 *         (HOME for its ~/ paths; "" for the built-in default), and the
 *         enterprise files it was narrowed by; no secret, and an
 *         environment with nothing of the monitor's (a gateway taken
 *         over would read its own).
 *   fd 3  GWPROTO_FD_CONTROL: the monitor's SOCK_SEQPACKET control
 *         socket, messages below.
 *   fd 4  GWPROTO_FD_RECORDS: a SOCK_SEQPACKET records socket (the
 *         supervisor's, shared by the session's gateways; `mcp run`'s
 *         own): one decision record a message, one flat JSON line (kind
 *         "mcp") ending in "\n", no letter; the reader refuses anything
 *         else and stops all MCP traffic (mcpgw_record_ok).
 *   fd 2  the monitor's stderr, for fatal messages and step-up
 *         prompts.
 *
 * Control messages, one a SOCK_SEQPACKET message, the first byte the
 * type:
 *
 *   type  from -> to         payload (NUL-separated)         fds (SCM_RIGHTS)
 *   'G'   monitor->gateway   server name, pins file,         the client's input, the
 *                            workspace, step-up socket's     client's output (a session's
 *                            path or "", step-up timeout     connection twice), the
 *                            (s), uid, gid, mode ("session"  server's stdin and stdout,
 *                            or "stdio"), terminal ("1" or   the step-up listener (when a
 *                            "0")                            path), the terminal (when "1")
 *   'P'   gateway->monitor   one changed pin: tool, sha256,  none
 *                            definition, pending sha256 or
 *                            "", pending definition or ""
 *   'W'   gateway->monitor   none: write the pins sent since none
 *                            the last 'W' into the pins file
 *   'K'   monitor->gateway   none: written                   none
 *   'E'   monitor->gateway   why the pins were not written   none
 *   'I'   gateway->monitor   a path an argument names        none
 *                            (inside_workspace)
 *   'Y'   monitor->gateway   none: the path, symlinks        none
 *                            resolved, is inside the server's
 *                            workspace (mcp_path_inside)
 *   'N'   monitor->gateway   none: it is not                 none
 *
 * 'G' is the first and only message to the gateway before its sandbox:
 * it then drops to the uid and gid (as root), and confines itself
 * (mcpgw/gateway_exec.c) before it reads the client's first byte. In a
 * session it first answers the connection "OK\n" (or "ERR why\n",
 * sandbox/mcpgw.h); a stdio client hears nothing but JSON-RPC, and a
 * refusal goes to stderr alone. A server name the policy does not
 * declare is refused in a session; for `mcp run` it is the policy's
 * having no entry, and every tool is denied. The
 * pins file is written, and an argument's path resolved, by the monitor:
 * the gateway opens and resolves no path (as root, the sandbox's uid
 * could neither write root's pins file nor enter a workspace below a
 * directory only root may search). The monitor checks every field (a
 * gateway taken over may send anything), writes only the pins file of
 * the connection's server, and answers 'I' with one bit: whether the
 * path is inside the workspace it chose, never where the path leads.
 * The path is judged as the server's sandbox sees it: beneath that
 * sandbox's "/", which the server's supervisor sends the monitor once it
 * is built (sandbox_opts.report_root), through its symlinks and mounts.
 *
 * The pins keeper. A session's monitor serves the gateway under its own
 * Landlock domain and seccomp filter (no file written, no signal sent)
 * and, started as root, as the server sandbox's uid; before that it
 * forks the pins keeper (root, when it was), which does the little the
 * monitor may not, on its own SOCK_SEQPACKET socket, a closed list
 * (sandbox/mcpgw_monitor.c):
 *
 *   type  from -> to         payload                         fds
 *   'P'   monitor->keeper    a 'P' the gateway sent, as it   none
 *                            sent it (checked on both sides)
 *   'W'   monitor->keeper    none: write them                none
 *   'K'   keeper->monitor    as to the gateway, which the    none
 *   'E'                      monitor relays it to
 *   'T'   monitor->keeper    none: SIGTERM to the server's   none
 *                            supervisor (through its pidfd)
 *   'X'   monitor->keeper    none: SIGKILL to it             none
 *   'Z'   monitor->keeper    none: SIGKILL to the gateway    none
 *
 * Anything else ends the keeper. At the end of its socket (the monitor
 * done, or dead) it removes the connection's step-up socket from root's
 * state directory and exits.
 */

#define GWPROTO_FD_CONTROL 3
#define GWPROTO_FD_RECORDS 4

#define GWPROTO_START 'G'
#define GWPROTO_PIN 'P'
#define GWPROTO_PINS_WRITE 'W'
#define GWPROTO_PINS_OK 'K'
#define GWPROTO_PINS_ERR 'E'
#define GWPROTO_INSIDE 'I'
#define GWPROTO_INSIDE_YES 'Y'
#define GWPROTO_INSIDE_NO 'N'
#define GWPROTO_KEEPER_TERM 'T'
#define GWPROTO_KEEPER_KILL 'X'
#define GWPROTO_KEEPER_KILL_GATEWAY 'Z'

/* Fields of a 'G' message, in order. */
enum gwproto_start_field {
	GWPROTO_START_NAME,
	GWPROTO_START_PINS,
	GWPROTO_START_WORKSPACE,
	GWPROTO_START_STEP_UP_PATH,
	GWPROTO_START_STEP_UP_TIMEOUT,
	GWPROTO_START_UID,
	GWPROTO_START_GID,
	GWPROTO_START_MODE,
	GWPROTO_START_TTY,
	GWPROTO_START_FIELDS
};

#define GWPROTO_MODE_SESSION "session"
#define GWPROTO_MODE_STDIO "stdio"

/* Fds of a 'G' message, in order; the optional ones follow only when
 * their field says so, the terminal after the step-up listener. */
enum gwproto_start_fd {
	GWPROTO_FD_CLIENT_IN,
	GWPROTO_FD_CLIENT_OUT,
	GWPROTO_FD_SERVER_IN,
	GWPROTO_FD_SERVER_OUT,
	GWPROTO_FD_FIXED, /* how many always come */
};

/* Bounds: the largest control message either side accepts, below a
 * socket's default send buffer (net.core.wmem_default, 208 KiB): a pin
 * whose definitions do not fit is not written, and the gateway records
 * that (rule "pins"), as for a pins file it cannot write; and the pins
 * one 'W' may carry, in number and in their definitions' bytes (what
 * the monitor, and the keeper as root, hold until the write; no more
 * than a pins file may hold and be read back, MCP_MAX_MESSAGE). A
 * gateway sends no more (the batch is not written, and recorded as
 * above); one that does broke the protocol. */
#define GWPROTO_MAX_MSG (192 * 1024)
#define GWPROTO_MAX_PINS 4096
#define GWPROTO_MAX_PIN_BYTES (4 * 1024 * 1024)

#endif
