/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AIRLOCK_MCP_MCP_H
#define AIRLOCK_MCP_MCP_H

/*
 * The MCP gateway's core: JSON-RPC framing, the decision engine for one
 * server (policy/mcp.h), tool pinning and the scanning of tool results
 * and definitions. docs/mcp.md describes the behaviour; gateway.c moves
 * the bytes.
 *
 * Messages are parsed with the strict JSON reader of policy/import
 * (duplicate keys, bad UTF-8, NUL in strings and nesting deeper than
 * IMP_MAX_DEPTH are refused) and written back compactly by mcp_json_write:
 * what is forwarded is always our own serialisation of what we checked,
 * never the peer's bytes, so that two readers cannot disagree.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/import/doc.h"
#include "policy/mcp.h"
#include "util/buf.h"
#include "util/error.h"

/* Bound on one message (one line on stdio), newline excluded. */
#define MCP_MAX_MESSAGE (4 * 1024 * 1024)

/* JSON-RPC error codes we answer with. */
#define MCP_ERR_PARSE (-32700)
#define MCP_ERR_INVALID (-32600)
#define MCP_ERR_DENIED (-32001) /* in the server-error range: refused by policy */

/* ---- JSON ---- */

/* Append n compactly; with sorted, members in byte order of their keys
 * (the canonical form pins hash). -ENOMEM. */
int mcp_json_write(struct buf *b, const struct imp_node *n, bool sorted) WUR;

/* The node at a path of policy/mcp.h's syntax ("a.b", "x[0]", "$"); "[*]"
 * selects every entry. Calls fn for each value selected; returns how many. */
size_t mcp_json_select(const struct imp_node *root, const char *path,
		       void (*fn)(const struct imp_node *v, void *ctx), void *ctx);

/* ---- framing ---- */

enum mcp_frame {
	MCP_FRAME_OK = 0,
	MCP_FRAME_PARSE,    /* not JSON (or beyond the reader's bounds) */
	MCP_FRAME_INVALID,  /* JSON but not one JSON-RPC 2.0 message */
	MCP_FRAME_TOO_BIG,  /* longer than MCP_MAX_MESSAGE */
};

/* Parse one line (without its newline) into *msg (owned by the caller)
 * and check its JSON-RPC shape: an object with "jsonrpc": "2.0", and a
 * method (string) for requests and notifications, or an id with exactly
 * one of result and error for responses; ids are strings or integers.
 * Keys of one object that differ only in case, and methods outside
 * [A-Za-z0-9/_.$-], are refused. Batches (arrays) are refused: neither revision the gateway speaks has
 * them. On failure err says why. */
enum mcp_frame mcp_frame_parse(const char *line, size_t len, struct imp_node **msg, struct error *err);

/* ---- the engine ---- */

struct mcp_verdict {
	enum policy_mcp_decision decision;
	char rule[128];   /* "mcp.servers.fs.tools[2]", or "default" */
	char reason[384]; /* for the model and the record; empty when allowed */
};

struct dlp;

struct mcp_pin {
	char *tool;
	char sha256[65];
	char *definition; /* canonical JSON */
	char pending_sha256[65]; /* a changed definition awaiting approval, or "" */
	char *pending_definition;
	bool dirty; /* changed here since the file was last read or written */
};

struct mcp_pins {
	char *path;
	struct mcp_pin *v;
	size_t n;
};

struct mcp_engine {
	const struct policy_mcp_server *srv; /* borrowed; NULL: every tool denied */
	const char *server;                  /* borrowed name for records */
	char *workspace;                     /* realpath of the workspace */
	uint64_t calls;
	uint64_t *rule_calls;                /* per tools rule */
	struct dlp *dlp;                     /* credential formats, and secret values when known */
	struct mcp_pins pins;
	/* Judges an argument's path (inside_workspace); NULL: mcp_path_inside
	 * against workspace, through this process's view of the filesystem.
	 * A session's gateway, which may not see the path, asks its monitor
	 * (proto/mcpgw.h). */
	bool (*path_inside)(void *ctx, const char *path);
	void *path_ctx;
};

/* srv and name borrowed (must outlive the engine); workspace resolved
 * through the filesystem; pins_path: the pin file (loaded when present). */
int mcp_engine_init(struct mcp_engine *e, const struct policy_mcp_server *srv, const char *name,
		    const char *workspace, const char *pins_path, struct error *err) WUR;
void mcp_engine_fini(struct mcp_engine *e);

/* The rule for a tool name (first match in file order), or NULL. */
const struct policy_mcp_rule *mcp_tool_rule(const struct policy_mcp_server *srv, const char *tool, size_t *index);

/* May this tool be called with these arguments? Counts the call against
 * the limits when allowed or stepped up. v says which rule and why. */
bool mcp_tool_call_allowed(struct mcp_engine *e, const char *tool, const struct imp_node *args,
			   struct mcp_verdict *v);

/* Is the tool listed at all (its rule does not deny it)? */
bool mcp_tool_listed(const struct mcp_engine *e, const char *tool);

/* resources/read by URI (normalised by mcp_uri_normalize, then matched
 * with the proxy's path globs: '*' within a segment, '**' across),
 * prompts/get by name. */
bool mcp_resource_allowed(const struct mcp_engine *e, const char *uri, struct mcp_verdict *v);
bool mcp_prompt_allowed(const struct mcp_engine *e, const char *name, struct mcp_verdict *v);

/* uri as a server resolves it (newly allocated): escapes of unreserved
 * characters decoded and others upper-cased, "." and ".." segments of
 * the path resolved, repeated slashes joined; scheme and authority kept.
 * NULL, with why, for a URI that cannot be read one way only: an invalid
 * or escaped escape, an encoded separator or control character, a ".."
 * above the start, a dot segment in the query. */
char *mcp_uri_normalize(const char *uri, char *why, size_t why_len);

/* A server-to-client request (sampling/createMessage, elicitation/create,
 * roots/list; ping is always allowed, anything else refused). */
bool mcp_server_request_allowed(const struct mcp_engine *e, const char *method, struct mcp_verdict *v);

/* One argument constraint against the value(s) its path selects; paths
 * judged as e says (e->workspace, e->path_inside). */
bool mcp_arg_ok(const struct policy_mcp_arg *a, const struct imp_node *args, const struct mcp_engine *e, char *why,
		size_t why_len);

/* path as the server would open it (relative to workspace; every
 * "..", and every symlink of the part that exists, resolved by the
 * kernel) is workspace or below it, in root's view of the filesystem:
 * root an O_PATH directory (the server sandbox's "/", where absolute
 * paths and symlinks start and ".." stops), workspace a path in that
 * view. A name that exists but leads nowhere (a dangling symlink: a
 * write through it makes its target) is outside, as is anything that
 * cannot be looked up. root -1: this process's own view. */
bool mcp_path_inside_root(int root, const char *workspace, const char *path);
bool mcp_path_inside(const char *workspace, const char *path);

/* ---- pins ---- */

enum mcp_pin_state {
	MCP_PIN_NEW,      /* first seen: pinned now */
	MCP_PIN_SAME,
	MCP_PIN_CHANGED,  /* blocked until approved */
};

/* The SHA-256 (hex) of a tool definition's canonical form: the members
 * name, title, description, inputSchema, outputSchema, annotations, keys
 * sorted. *canon (owned by the caller) receives the text hashed. */
int mcp_tool_hash(const struct imp_node *tool, char hex[65], char **canon) WUR;

int mcp_pins_load(struct mcp_pins *p, const char *path, struct error *err) WUR;
/* Write the pins this process changed (dirty) into the file as it is now,
 * under a lock, and take the result as p: another gateway's pins and an
 * approval made meanwhile are kept, not overwritten by a stale copy. */
int mcp_pins_save(struct mcp_pins *p, struct error *err) WUR;
/* The pending definition becomes the approved one; false when none is
 * pending. */
bool mcp_pin_approve(struct mcp_pin *pin);
void mcp_pins_free(struct mcp_pins *p);

/* One pin as a gateway sends it to its monitor (proto/mcpgw.h's 'P',
 * after the type byte): tool, sha256, definition, pending sha256 or "",
 * pending definition or "", each NUL-terminated. Appended to out; 0 or
 * -ENOMEM. */
int mcp_pin_encode(const struct mcp_pin *pin, struct buf *out) WUR;
/* How many bytes mcp_pin_encode appends for pin: what a batch of pins
 * weighs on both sides of the wire (proto/mcpgw.h's bound). */
size_t mcp_pin_encoded_len(const struct mcp_pin *pin);

/* The same read back, every field checked (the sender may have been
 * taken over): a tool and a definition not empty, a sha256 of 64
 * lower-case hex digits, the pending pair whole or absent, nothing
 * after. Appended to p, dirty; decoding what mcp_pin_encode wrote gives
 * the same pin, and encoding what this accepts gives the same bytes. 0,
 * -EINVAL or -ENOMEM. */
int mcp_pin_decode(struct mcp_pins *p, const char *msg, size_t len) WUR;
/* Check a tool against the pins, pinning a new one and recording a change
 * as pending. *changed set when the file needs saving. */
enum mcp_pin_state mcp_pins_check(struct mcp_pins *p, const char *tool, const char *hex, const char *canon,
				  bool *changed);
struct mcp_pin *mcp_pins_find(const struct mcp_pins *p, const char *tool);

/* ---- scanning ---- */

/* An injection marker in s: invisible Unicode (zero-width, bidi controls,
 * tag characters U+E0000..U+E007F), ANSI/C1 escapes, or one of the
 * instruction phrases of docs/mcp.md (only when phrases is true: they
 * are looked for in descriptions, not in tool results). Returns true and
 * names the marker in what. */
bool mcp_scan_injection(const char *s, size_t len, bool phrases, char *what, size_t what_len);

/* s without its invisible characters and escape sequences (newly
 * allocated), for redaction. */
char *mcp_strip_invisible(const char *s, size_t len);

#endif
