// An MCP client on the official SDK (@modelcontextprotocol/sdk), as an
// agent would use it: starts the server command over stdio, then runs the
// operations given and prints one JSON line per operation.
//   node mcp-client.mjs '{"command":"airlock","args":[...],"ops":[{"op":"list"},
//        {"op":"call","name":"read_text_file","arguments":{"path":"a.txt"}}]}'
// op list: {"tools":[names]}; op call: the tool result, or {"error":message}
// when the request failed at the protocol level.
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdkDir = path.join(here, "mcp", "node_modules", "@modelcontextprotocol", "sdk");
const { Client } = await import(path.join(sdkDir, "dist/esm/client/index.js"));
const { StdioClientTransport } = await import(path.join(sdkDir, "dist/esm/client/stdio.js"));

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
	command: spec.command,
	args: spec.args || [],
	env: { ...process.env },
	stderr: "inherit",
	cwd: spec.cwd || process.cwd(),
});
const client = new Client({ name: "airlock-e2e", version: "1.0.0" });
await client.connect(transport);
for (const op of spec.ops) {
	try {
		if (op.op === "list") {
			const r = await client.listTools();
			console.log(JSON.stringify({ tools: r.tools.map((t) => t.name).sort() }));
		} else if (op.op === "describe") {
			const r = await client.listTools();
			const t = r.tools.find((x) => x.name === op.name);
			console.log(JSON.stringify({ description: t ? t.description : null }));
		} else if (op.op === "call") {
			const r = await client.callTool({ name: op.name, arguments: op.arguments || {} });
			console.log(JSON.stringify(r));
		} else if (op.op === "read") {
			const r = await client.readResource({ uri: op.uri });
			console.log(JSON.stringify(r));
		}
	} catch (e) {
		console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
	}
}
await client.close();
