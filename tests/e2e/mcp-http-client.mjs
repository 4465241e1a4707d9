// An MCP client on the official SDK over Streamable HTTP
// (StreamableHTTPClientTransport), as an agent inside `airlock run` would
// use it: every request goes to the egress proxy named by HTTP_PROXY
// (Node's fetch ignores that variable, so the transport is given a fetch
// that sends absolute-form requests to the proxy). Runs the operations
// given and prints one JSON line per operation.
//   node mcp-http-client.mjs '{"url":"http://mcp.test:PORT/mcp","ops":[{"op":"list"},
//        {"op":"call","name":"echo","arguments":{"message":"hi"}}]}'
// op list: {"tools":[names]}; op call: the tool result, or {"error":message}
// when the request failed at the protocol level; op progress: a call whose
// progress notifications (SSE events before the result) are counted.
import http from "node:http";
import https from "node:https";
import tls from "node:tls";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdkDir = path.join(here, "mcp", "node_modules", "@modelcontextprotocol", "sdk");
const { Client } = await import(path.join(sdkDir, "dist/esm/client/index.js"));
const { StreamableHTTPClientTransport } = await import(path.join(sdkDir, "dist/esm/client/streamableHttp.js"));
const { CreateMessageRequestSchema } = await import(path.join(sdkDir, "dist/esm/types.js"));

const proxy = new URL(process.env.HTTP_PROXY || process.env.http_proxy);

// https: a CONNECT tunnel through the proxy, then TLS inside it (the
// proxy intercepts; NODE_EXTRA_CA_CERTS names the session's authority).
function tunnel(url) {
	const hp = `${url.hostname}:${url.port || 443}`;
	return new Promise((resolve, reject) => {
		const r = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: hp,
					 headers: { host: hp }, agent: false });
		r.on("connect", (res, socket) =>
			res.statusCode === 200 ? resolve(socket) : reject(new Error(`CONNECT ${hp}: ${res.statusCode}`)));
		r.on("error", reject);
		r.end();
	});
}

async function proxyFetch(input, init = {}) {
	const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
	if (url.protocol !== "https:") return plainFetch(url, init);
	const socket = await tunnel(url);
	// An agent whose only connection is TLS over the tunnel.
	const agent = new https.Agent({ keepAlive: false });
	agent.createConnection = () => tls.connect({ socket, servername: url.hostname });
	const headers = {};
	new Headers(init.headers || {}).forEach((v, k) => {
		headers[k] = v;
	});
	const body = init.body == null ? null : Buffer.from(init.body);
	if (body) headers["content-length"] = String(body.length);
	return new Promise((resolve, reject) => {
		const req = https.request(
			{ host: url.hostname, port: url.port || 443, method: init.method || "GET", path: url.pathname + url.search,
			  headers, agent },
			(res) => {
				const h = new Headers();
				for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(", ") : v);
				const nobody = res.statusCode === 202 || res.statusCode === 204;
				resolve(new Response(nobody ? null : Readable.toWeb(res), { status: res.statusCode, headers: h }));
			},
		);
		req.on("error", reject);
		if (init.signal) init.signal.addEventListener("abort", () => req.destroy(new Error("aborted")));
		req.end(body || undefined);
	});
}

function plainFetch(input, init = {}) {
	const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
	const headers = {};
	new Headers(init.headers || {}).forEach((v, k) => {
		headers[k] = v;
	});
	const body = init.body == null ? null : Buffer.from(init.body);
	if (body) headers["content-length"] = String(body.length);
	headers["host"] = url.host;
	return new Promise((resolve, reject) => {
		const req = http.request(
			// agent: false: a connection per request, so that what the
			// proxy keeps per session is seen to span connections.
			{ host: proxy.hostname, port: proxy.port, method: init.method || "GET", path: url.href, headers,
			  agent: false },
			(res) => {
				const h = new Headers();
				for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(", ") : v);
				const nobody = res.statusCode === 202 || res.statusCode === 204;
				resolve(new Response(nobody ? null : Readable.toWeb(res), { status: res.statusCode, headers: h }));
			},
		);
		req.on("error", reject);
		if (init.signal) init.signal.addEventListener("abort", () => req.destroy(new Error("aborted")));
		req.end(body || undefined);
	});
}

const spec = JSON.parse(process.argv[2]);
const transport = new StreamableHTTPClientTransport(new URL(spec.url), { fetch: proxyFetch });
// With "sampling": true the client offers sampling and answers each
// request with a fixed message; the last line then says how many came.
const client = new Client(
	{ name: "airlock-e2e-http", version: "1.0.0" },
	{ capabilities: spec.sampling ? { sampling: {} } : {} },
);
let sampled = 0;
if (spec.sampling)
	client.setRequestHandler(CreateMessageRequestSchema, async () => {
		sampled++;
		return { model: "e2e", role: "assistant", content: { type: "text", text: "sampled by the client" } };
	});
await client.connect(transport);
for (const op of spec.ops) {
	try {
		if (op.op === "list") {
			const r = await client.listTools();
			console.log(JSON.stringify({ tools: r.tools.map((t) => t.name).sort() }));
		} else if (op.op === "call") {
			// op.timeout bounds a call whose server waits for an answer
			// that may never come (a refused server request).
			const r = await client.callTool({ name: op.name, arguments: op.arguments || {} }, undefined,
				op.timeout ? { timeout: op.timeout } : undefined);
			console.log(JSON.stringify(r));
		} else if (op.op === "progress") {
			let n = 0;
			const r = await client.callTool({ name: op.name, arguments: op.arguments || {} }, undefined, {
				onprogress: () => n++,
			});
			console.log(JSON.stringify({ progress: n, result: r }));
		}
	} catch (e) {
		console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
	}
}
if (spec.sampling) console.log(JSON.stringify({ sampled }));
await client.close();
