#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Loopback servers for the egress proxy's end-to-end tests.

    servers.py DIR      write DIR/ports (http https ws), DIR/ca.pem, then serve

HTTP and HTTPS answer every request with a JSON echo of method, path, the
headers and the body, except GET /git/... which serves files from DIR/git,
and GET .../gen-MODE-N, which sends N bytes of a fixed pattern (byte i is
(7 i + 3) mod 256) framed by MODE: length (Content-Length), chunked, or
eof (neither: until the connection closes); /ws on the WebSocket port
completes the handshake and echoes one text frame. .../desync sends a
bodiless response with a second one behind it; .../idle-close answers,
then closes the connection without having said it would.

With a file DIR/token (the credential tests' secret), the echo shows it
as <token> wherever it occurs in a header, /api/... answers
only a request carrying "Authorization: Bearer TOKEN" or ?api_key=TOKEN,
and /smart/... is git's smart HTTP (git http-backend over DIR/smart) for
basic authentication with TOKEN as the password (anonymous fetches are
allowed, pushes are not). Neither echoes the request's headers.
.../mirror/MODE hands the request's headers back in the ways mirror()
lists, for the broker's response scan. The HTTPS certificate is for secure.test, tunnel.test
and 127.0.0.1, signed by a CA made for this run. Everything listens on
127.0.0.1 only.
"""
import base64
import hashlib
import http.server
import json
import os
import socket
import socketserver
import ssl
import subprocess
import sys
import time
import threading

d = sys.argv[1]


def run(*args):
    subprocess.run(args, check=True, capture_output=True)


def make_certs():
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", "2", "-subj", "/CN=airlock e2e CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{d}/srv.key", "-out", f"{d}/srv.csr", "-subj", "/CN=secure.test")
    with open(f"{d}/ext.cnf", "w") as f:
        f.write("subjectAltName=DNS:secure.test,DNS:tunnel.test,DNS:other.test,IP:127.0.0.1\n"
                "extendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", f"{d}/srv.csr", "-CA", f"{d}/ca.pem", "-CAkey", f"{d}/ca.key",
        "-CAcreateserial", "-out", f"{d}/srv.pem", "-days", "2", "-extfile", f"{d}/ext.cnf")


class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def raw_chunked(self):
        raw = b""
        while True:
            line = self.rfile.readline()
            raw += line
            if int(line.split(b";")[0].strip() or b"0", 16) == 0:
                while True:
                    t = self.rfile.readline()
                    raw += t
                    if t in (b"\r\n", b"\n", b""):
                        return raw
            raw += self.rfile.read(int(line.split(b";")[0].strip(), 16) + 2)

    def reply(self, status, data, ctype="application/json", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def token(self):
        try:
            with open(f"{d}/token") as f:
                return f.read().strip()
        except OSError:
            return None

    def api(self):
        tok = self.token()
        body = self.body()
        query = self.path.split("?", 1)[1] if "?" in self.path else ""
        ok = self.headers.get("Authorization") == f"Bearer {tok}" or f"api_key={tok}" in query.split("&")
        out = json.dumps({"auth": "ok" if ok else "missing", "method": self.command,
                          "path": self.path.split("?")[0], "body_len": len(body)}).encode()
        self.reply(200 if ok else 401, out)

    def smart(self):
        tok = self.token()
        body = self.body()
        user = ""
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            name, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            if password == tok:
                user = name
        path, _, query = self.path.partition("?")
        push = "git-receive-pack" in path or "service=git-receive-pack" in query
        if push and not user:
            return self.reply(401, b"authentication required\n", "text/plain",
                              [("WWW-Authenticate", 'Basic realm="git"')])
        env = dict(os.environ, GIT_PROJECT_ROOT=f"{d}/smart", GIT_HTTP_EXPORT_ALL="1",
                   REQUEST_METHOD=self.command, PATH_INFO=path[len("/smart"):], QUERY_STRING=query,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(len(body)),
                   REMOTE_USER=user, REMOTE_ADDR="127.0.0.1",
                   HTTP_GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
        if self.headers.get("Content-Encoding", "") == "gzip":
            env["HTTP_CONTENT_ENCODING"] = "gzip"
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, data = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.split(b"\r\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k and k.lower() != "content-length":
                headers.append((k, v.strip()))
        ctype = dict((k.lower(), v) for k, v in headers).get("content-type", "text/plain")
        self.reply(status, data, ctype, [(k, v) for k, v in headers if k.lower() != "content-type"])

    def answer(self):
        if self.path.startswith("/api/") and self.token() is not None:
            return self.api()
        if self.path.startswith("/smart/") and self.token() is not None:
            return self.smart()
        if self.command in ("GET", "HEAD") and self.path.startswith("/git/"):
            return self.static()
        if self.command == "GET" and "/gen-" in self.path:
            return self.generated()
        if "/mirror/" in self.path:
            return self.mirror()
        if self.path.endswith("/desync"):
            # A response with no body followed by bytes that read as a
            # second response: a proxy that reuses this connection would
            # hand them to the client's next request.
            # The extra bytes come a little later, in a read of their own
            # (bytes that arrive only after the next request went out are
            # that request's answer as far as anyone can tell), and the
            # connection stays open for the next request.
            self.wfile.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            self.wfile.flush()
            time.sleep(0.1)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nSMUGGLED")
            self.wfile.flush()
            self.close_connection = False
            return
        if self.path.endswith("/idle-close"):
            # Framed by length and not announced as the last, then the
            # connection is closed, as a server ends an idle keep-alive.
            self.reply(200, b"closing")
            self.wfile.flush()
            self.close_connection = True
            return
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            # A chunked body echoed as it arrived, framing, extensions
            # and trailers included, for tests that check what passed.
            body = self.raw_chunked().decode("latin-1")
        headers = dict(self.headers)
        tok = self.token()
        if tok:
            # The credential tests' secret is shown as <token>: the test
            # sees that it arrived, and the proxy, which withholds an
            # answer that hands a secret back, lets the echo through.
            headers = {k: v.replace(tok, "<token>") for k, v in headers.items()}
        out = json.dumps({"method": self.command, "path": self.path, "headers": headers,
                          "body": body}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    def mirror(self):
        # .../mirror/MODE: the request's Authorization (or, for body and
        # trace, every header) handed back in one more way a server may:
        # a header, a chunked body cut into 3-byte chunks sent in separate
        # writes, base64, hex, reversed, percent-encoded, an HTML page,
        # gzip, until close, a 103 interim response; store keeps it and
        # recall (on either port) shows it to a later request; plain
        # answers an ordinary body.
        self.body()
        mode = self.path.split("/mirror/", 1)[1].split("?")[0].split("/")[-1]
        auth = self.headers.get("Authorization", "")
        raw = auth.encode()
        whole = json.dumps({"method": self.command, "path": self.path, "headers": dict(self.headers)}).encode()
        if mode == "store":
            Echo.stored = raw
            return self.reply(200, b"stored\n", "text/plain")
        if mode == "recall":
            return self.reply(200, b"recalled: " + getattr(Echo, "stored", b"") + b"\n", "text/plain")
        if mode == "plain":
            return self.reply(200, b"an ordinary answer\n", "text/plain")
        if mode == "header":
            return self.reply(200, b"see the header\n", "text/plain", [("X-Seen-Authorization", auth)])
        if mode == "early":
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nX-Seen: " + raw + b"\r\n\r\n")
            return self.reply(200, b"after the hint\n", "text/plain")
        if mode == "chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(whole), 3):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(whole[i:i + 3]), whole[i:i + 3]))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        if mode == "eof":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(whole)
            self.close_connection = True
            return
        if mode == "gzip":
            import gzip
            return self.reply(200, gzip.compress(whole), "application/json", [("Content-Encoding", "gzip")])
        out = {"body": whole, "b64": base64.b64encode(raw), "b64url": base64.urlsafe_b64encode(raw),
               "hex": raw.hex().encode(), "reversed": raw[::-1],
               "url": "".join("%%%02X" % c for c in raw).encode(),
               "html": b"<html><body><pre>" + __import__("html").escape(auth).encode() + b"</pre></body></html>",
               }.get(mode)
        if out is None:
            return self.reply(404, b"no such mirror\n", "text/plain")
        self.reply(200, out, "text/plain")

    def static(self):
        # Files under DIR/git, for git's dumb HTTP protocol.
        rel = os.path.normpath(self.path.split("?")[0][len("/git/"):])
        path = os.path.join(d, "git", rel)
        if rel.startswith("..") or not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(data)

    def generated(self):
        mode, n = self.path.rsplit("/gen-", 1)[1].split("-")
        data = bytes((7 * i + 3) % 256 for i in range(int(n)))
        self.send_response(200)
        if mode == "length":
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif mode == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            # Chunks of uneven sizes, so that their lines fall anywhere in
            # the proxy's reads.
            i, k = 0, 0
            while i < len(data):
                part = data[i:i + (1000, 17, 40000, 4096)[k % 4]]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                i, k = i + len(part), k + 1
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = do_TRACE = answer


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def ws_server(sock):
    while True:
        c, _ = sock.accept()
        threading.Thread(target=ws_conn, args=(c,), daemon=True).start()


def ws_conn(c):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = c.recv(4096)
            if not chunk:
                return
            data += chunk
        key = ""
        for line in data.split(b"\r\n"):
            if line.lower().startswith(b"sec-websocket-key:"):
                key = line.split(b":", 1)[1].strip().decode()
        acc = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  b"Sec-WebSocket-Accept: " + acc + b"\r\n\r\n")
        hdr = c.recv(2)
        n = hdr[1] & 0x7F
        mask = c.recv(4)
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(c.recv(n)))
        c.sendall(bytes([0x81, len(payload)]) + payload)
    finally:
        c.close()


make_certs()
http_srv = Server(("127.0.0.1", 0), Echo)
https_srv = Server(("127.0.0.1", 0), Echo)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(f"{d}/srv.pem", f"{d}/srv.key")
https_srv.socket = ctx.wrap_socket(https_srv.socket, server_side=True)
ws = socket.socket()
ws.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ws.bind(("127.0.0.1", 0))
ws.listen(16)
for s in (http_srv, https_srv):
    threading.Thread(target=s.serve_forever, daemon=True).start()
threading.Thread(target=ws_server, args=(ws,), daemon=True).start()
with open(f"{d}/ports.tmp", "w") as f:
    f.write(f"{http_srv.server_address[1]} {https_srv.server_address[1]} {ws.getsockname()[1]}\n")
os.rename(f"{d}/ports.tmp", f"{d}/ports")
threading.Event().wait()
