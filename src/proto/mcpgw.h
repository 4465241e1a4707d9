/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_PROTO_MCPGW_H
#define AIRLOCK_PROTO_MCPGW_H

/*
 * The wire between a session's MCP connection monitor (the privileged
 * side: a fork of the supervisor, sandbox/mcpgw.c) and the gateway it
 * starts for the connection, airlock-mcp-gateway (mcp/gateway_exec.c),
 * which parses the agent's and the server's JSON-RPC in a sandbox of its
 * own. Everything that crosses, in one place:
 *
 *   argv  airlock-mcp-gateway POLICY CWD HOME [LAYER...]
 *         the session's policy file, read again as the supervisor read
 *         it (HOME for its ~/ paths), and the enterprise files it was
 *         narrowed by; no secret, and an environment with nothing of the
 *         supervisor's (a gateway taken over would read its own).
 *   fd 3  GWPROTO_FD_CONTROL: the monitor's SOCK_SEQPACKET control
 *         socket, messages below.
 *   fd 4  GWPROTO_FD_RECORDS: the supervisor's SOCK_SEQPACKET records
 *         socket, shared by the session's gateways: one decision record a
 *         message, one flat JSON line (kind "mcp") ending in "\n", no
 *         letter; the supervisor refuses anything else and stops all MCP
 *         traffic (mcpgw_read).
 *   fd 2  the supervisor's stderr, for fatal messages and step-up
 *         prompts.
 *
 * Control messages, one a SOCK_SEQPACKET message, the first byte the
 * type:
 *
 *   type  from -> to         payload (NUL-separated)         fds (SCM_RIGHTS)
 *   'G'   monitor->gateway   server name, pins file,         the agent's connection,
 *                            workspace, step-up socket's     the server's stdin,
 *                            path or "", step-up timeout     the server's stdout,
 *                            (s), uid, gid                   the step-up listener (when a path)
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
 * (mcp/gateway_exec.c) before it answers the agent "OK\n" (or
 * "ERR why\n", sandbox/mcpgw.h) and reads the agent's first byte. The
 * pins file is written, and an argument's path resolved, by the monitor:
 * the gateway opens and resolves no path (as root, the sandbox's uid
 * could neither write root's pins file nor enter a workspace below a
 * directory only root may search). The monitor checks every field (a
 * gateway taken over may send anything), writes only the pins file of
 * the connection's server, and answers 'I' with one bit: whether the
 * path is inside the workspace it chose, never where the path leads.
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

/* Fields of a 'G' message, in order. */
enum gwproto_start_field {
	GWPROTO_START_NAME,
	GWPROTO_START_PINS,
	GWPROTO_START_WORKSPACE,
	GWPROTO_START_STEP_UP_PATH,
	GWPROTO_START_STEP_UP_TIMEOUT,
	GWPROTO_START_UID,
	GWPROTO_START_GID,
	GWPROTO_START_FIELDS
};

/* Fds of a 'G' message, in order. */
enum gwproto_start_fd { GWPROTO_FD_CLIENT, GWPROTO_FD_SERVER_IN, GWPROTO_FD_SERVER_OUT, GWPROTO_FD_STEP_UP };

/* Bounds: the largest control message either side accepts, below a
 * socket's default send buffer (net.core.wmem_default, 208 KiB): a pin
 * whose definitions do not fit is not written, and the gateway records
 * that (rule "pins"), as for a pins file it cannot write; and the pins
 * one 'W' may carry. */
#define GWPROTO_MAX_MSG (192 * 1024)
#define GWPROTO_MAX_PINS 4096

#endif
