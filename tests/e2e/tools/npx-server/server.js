#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// A stdio MCP server without dependencies: one tool, "hello".
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
	let m;
	try { m = JSON.parse(line); } catch { return; }
	if (m.id === undefined) return;
	if (m.method === "initialize")
		send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion,
			capabilities: { tools: {} }, serverInfo: { name: "mcp-server-e2e", version: "1.0.0" } } });
	else if (m.method === "tools/list")
		send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "hello", description: "Says hello",
			inputSchema: { type: "object", properties: {} } }] } });
	else if (m.method === "tools/call")
		send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "hello from npx" }] } });
	else
		send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } });
});
