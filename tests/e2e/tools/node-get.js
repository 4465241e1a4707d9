// GET URL through the proxy in $HTTPS_PROXY (node 20 does not read it):
// CONNECT, then TLS with node's own trust (NODE_EXTRA_CA_CERTS or none).
// Prints the body, or "error: CODE" and exits 1.
const http = require("http"), tls = require("tls");
const u = new URL(process.argv[2]), p = new URL(process.env.HTTPS_PROXY);
const opts = JSON.parse(process.argv[3] || "{}");
if (opts.ca) opts.ca = require("fs").readFileSync(opts.ca);
http.request({ host: p.hostname, port: p.port, method: "CONNECT", path: `${u.hostname}:${u.port}`,
	headers: { Host: `${u.hostname}:${u.port}` } })
	.on("connect", (res, sock) => {
		if (res.statusCode !== 200) { console.log("error: CONNECT " + res.statusCode); process.exit(1); }
		const s = tls.connect({ socket: sock, servername: u.hostname, ...opts }, () => {
			s.write(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`);
		});
		let out = "";
		s.on("data", (d) => (out += d));
		s.on("end", () => console.log(out.split("\r\n\r\n").slice(1).join("\r\n\r\n")));
		s.on("error", (e) => { console.log("error: " + (e.code || e.message) + " after " + JSON.stringify(out.slice(0, 300))); process.exit(1); });
	})
	.on("error", (e) => { console.log("error: " + e.message); process.exit(1); })
	.end();
