/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the MCP gateway: JSON-RPC framing, the policy
 * matcher, and the gateway's handling of whole lines from either side.
 * The first byte picks what runs:
 *   even: the line is a message from the client, odd: from the server
 *   (a response then answers a tools/list when bit 1 is set, else a
 *   tools/call, which the harness sends first);
 * in both the line goes through mcp_frame_parse (and, when it frames,
 * through mcp_gateway_line against a fixed policy, writing to /dev/null);
 * the arguments of a framed tools/call are also matched directly.
 *
 * Besides crashes and sanitizer reports it checks:
 *  - what frames, written back by mcp_json_write, frames again and writes
 *    back to the same bytes (what the gateway forwards is what it checked);
 *  - a refusal always carries a message;
 *  - the canonical (sorted) form of a message is a fixed point too.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/gateway.h"
#include "mcp/mcp.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_text[] =
	"version: 1\n"
	"sandbox:\n  workspace: /tmp\n"
	"mcp:\n  servers:\n    s:\n      max_calls: 1000000\n      tools:\n"
	"        - name: \"read_*\"\n          decision: allow\n          args:\n"
	"            path: {inside_workspace: true, max_length: 200}\n"
	"            \"opts.mode\": {enum: [a, b, 1]}\n"
	"            \"paths[*]\": {glob: \"/tmp/*\", regex: \"[a-z/]+\"}\n"
	"            n: {min: -5, max: 5.5}\n"
	"        - {name: \"step\", decision: step_up}\n"
	"        - {name: \"*\", decision: deny}\n"
	"      resources:\n        - {uri: \"file:///tmp/*\", decision: allow}\n"
	"      prompts:\n        - {name: \"p*\", decision: allow}\n"
	"      server_requests: {sampling: true}\n"
	"      scan: {secrets: redact, injection: redact}\n";

static struct policy *pol;
static struct mcp_engine eng;
static struct mcp_gateway gw;

static bool sink(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	/* Every record is one line of one flat object. */
	if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1)) {
		fprintf(stderr, "record is not one line\n");
		abort();
	}
	return true;
}

static void init_once(void)
{
	struct error err = { 0 };
	struct policy_ctx ctx = { .home = "/tmp", .cwd = "/tmp" };
	if (policy_load_buffer("fuzz.yaml", NULL, policy_text, strlen(policy_text), &ctx, &pol, &err) < 0 ||
	    mcp_engine_init(&eng, policy_mcp_server(pol->mcp, "s"), "s", "/tmp", NULL, &err) < 0) {
		fprintf(stderr, "fuzz setup: %s\n", err.msg);
		abort();
	}
	int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	gw = (struct mcp_gateway){ .engine = &eng, .client_in = -1, .client_out = nul, .server_in = nul,
				   .server_out = -1, .record = sink, .control_fd = -1, .tty_fd = -1 };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pol)
		init_once();
	if (size < 1)
		return 0;
	bool from_client = (data[0] & 1) == 0;
	const char *line = (const char *)data + 1;
	size_t len = size - 1;

	struct imp_node *m = NULL;
	struct error err = { 0 };
	enum mcp_frame f = mcp_frame_parse(line, len, &m, &err);
	if (f != MCP_FRAME_OK) {
		if (!err.msg[0]) {
			fprintf(stderr, "refusal without a message\n");
			abort();
		}
		return 0;
	}
	for (int sorted = 0; sorted <= 1; sorted++) {
		struct buf a = { 0 }, b = { 0 };
		struct imp_node *m2 = NULL;
		struct error e2 = { 0 };
		if (mcp_json_write(&a, m, sorted) < 0)
			abort();
		if (mcp_frame_parse(a.data, a.len, &m2, &e2) != MCP_FRAME_OK) {
			fprintf(stderr, "our own serialisation does not frame: %s\n", e2.msg);
			abort();
		}
		if (mcp_json_write(&b, m2, sorted) < 0 || a.len != b.len || memcmp(a.data, b.data, a.len)) {
			fprintf(stderr, "serialisation is not a fixed point\n");
			abort();
		}
		imp_node_free(m2);
		buf_free(&a);
		buf_free(&b);
	}
	const struct imp_node *params = imp_get(m, "params");
	const struct imp_node *name = imp_get(params, "name");
	if (name && name->kind == IMP_STR) {
		struct mcp_verdict v;
		bool ok = mcp_tool_call_allowed(&eng, name->str, imp_get(params, "arguments"), &v);
		if (!ok && !v.reason[0])
			abort();
	}
	/* A response from the server is only looked at when it answers a
	 * request: the second bit picks a tools/list or a tools/call. */
	const struct imp_node *id = imp_get(m, "id");
	if (!from_client && id && !imp_get(m, "method")) {
		struct buf req = { 0 };
		if (buf_puts(&req, "{\"jsonrpc\":\"2.0\",\"id\":") < 0 || mcp_json_write(&req, id, false) < 0 ||
		    buf_puts(&req, data[0] & 2 ? ",\"method\":\"tools/list\"}"
					      : ",\"method\":\"tools/call\",\"params\":{\"name\":\"read_a\"}}") < 0)
			abort();
		(void)mcp_gateway_line(&gw, true, req.data, req.len, &err);
		buf_free(&req);
	}
	imp_node_free(m);
	(void)mcp_gateway_line(&gw, from_client, line, len, &err);
	/* Keep the pending table from growing across runs. */
	mcp_gateway_fini(&gw);
	return 0;
}
