// A small MCP server for t_mcp_session.sh, with no dependencies (raw
// JSON-RPC lines on stdio, revision 2025-11-25), that does what the
// filesystem server will not: read any path it is given (so that only its
// sandbox stands in the way), show its environment, and call an HTTPS
// upstream with a credential through the egress proxy of its sandbox.
// Every line it receives is appended to received.log in its working
// directory when it can write there.
//   tools: read {path} -> the file's text, or "ERROR code"
//          write {path} -> writes "written", answers WROTE or "ERROR code"
//          env         -> its environment as JSON
//          whoami      -> the body of GET https://$UPSTREAM/api/whoami with
//                         "Authorization: Bearer $API_TOKEN", via the proxy
//                         named by HTTPS_PROXY (CONNECT, then TLS trusting
//                         NODE_EXTRA_CA_CERTS)
import fs from "node:fs";
import http from "node:http";
import readline from "node:readline";
import tls from "node:tls";

const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const obj = { type: "object", properties: { path: { type: "string" } } };
const tools = [
	{ name: "read", description: "Read a file", inputSchema: obj },
	{ name: "write", description: "Write a file", inputSchema: obj },
	{ name: "env", description: "Show the environment", inputSchema: { type: "object" } },
	{ name: "whoami", description: "Ask the upstream who we are", inputSchema: { type: "object" } },
];

function whoami() {
	return new Promise((resolve) => {
		const proxy = new URL(process.env.HTTPS_PROXY || "http://127.0.0.1:1");
		const target = process.env.UPSTREAM || "";
		const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: target,
					    headers: { Host: target } });
		req.on("error", (e) => resolve("ERROR " + e.message));
		req.on("connect", (res, socket) => {
			if (res.statusCode !== 200)
				return resolve("ERROR CONNECT " + res.statusCode);
			const ca = fs.readFileSync(process.env.NODE_EXTRA_CA_CERTS || "/run/airlock/ca.pem");
			const t = tls.connect({ socket, servername: target.split(":")[0], ca }, () => {
				t.write(`GET /api/whoami HTTP/1.1\r\nHost: ${target}\r\n` +
					`Authorization: Bearer ${process.env.API_TOKEN || ""}\r\nConnection: close\r\n\r\n`);
			});
			let data = "";
			t.on("data", (d) => (data += d));
			t.on("end", () => resolve(data.split("\r\n\r\n").slice(1).join("\r\n\r\n")));
			t.on("error", (e) => resolve("ERROR " + e.message));
		});
		req.end();
	});
}

rl.on("line", async (line) => {
	// What the gateway forwarded, for the tests (in the working
	// directory: the server's own workspace).
	try {
		fs.appendFileSync("received.log", line + "\n");
	} catch {}
	let m;
	try {
		m = JSON.parse(line);
	} catch {
		return;
	}
	if (!m.method || m.id === undefined)
		return;
	const reply = (result) => send({ jsonrpc: "2.0", id: m.id, result });
	const text = (t) => reply({ content: [{ type: "text", text: t }] });
	switch (m.method) {
	case "initialize":
		return reply({ protocolVersion: "2025-11-25", capabilities: { tools: {} },
			       serverInfo: { name: "airlock-session-server", version: "1.0.0" } });
	case "tools/list":
		return reply({ tools });
	case "tools/call": {
		const args = m.params.arguments || {};
		if (m.params.name === "read") {
			try {
				return text(fs.readFileSync(args.path, "utf8"));
			} catch (e) {
				return text("ERROR " + e.code);
			}
		}
		if (m.params.name === "write") {
			try {
				fs.writeFileSync(args.path, "written\n");
				return text("WROTE");
			} catch (e) {
				return text("ERROR " + e.code);
			}
		}
		if (m.params.name === "env")
			return text(JSON.stringify(process.env));
		if (m.params.name === "whoami")
			return text(await whoami());
		return send({ jsonrpc: "2.0", id: m.id, error: { code: -32602, message: "no such tool" } });
	}
	default:
		return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found" } });
	}
});
