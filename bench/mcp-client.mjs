// tools/call round trips with the MCP SDK client, sequentially: prints
// {"calls":N,"seconds":S,"p50_us":..,"p99_us":..} for the server command
// given. Used by bench/mcp.
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, "..", "tests", "e2e", "mcp", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const { Client } = await import(path.join(sdk, "client/index.js"));
const { StdioClientTransport } = await import(path.join(sdk, "client/stdio.js"));

const [n, command, ...args] = process.argv.slice(2);
const client = new Client({ name: "bench", version: "1" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore", env: { ...process.env } }));
await client.listTools();
for (let i = 0; i < 200; i++) // warm up
	await client.callTool({ name: "greet", arguments: { name: "w" } });
const lat = [];
const t0 = process.hrtime.bigint();
for (let i = 0; i < Number(n); i++) {
	const s = process.hrtime.bigint();
	await client.callTool({ name: "greet", arguments: { name: "bench" } });
	lat.push(Number(process.hrtime.bigint() - s) / 1000);
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
lat.sort((a, b) => a - b);
console.log(JSON.stringify({ calls: Number(n), seconds: secs, rps: Number(n) / secs,
	p50_us: lat[Math.floor(lat.length * 0.5)], p99_us: lat[Math.floor(lat.length * 0.99)] }));
await client.close();
