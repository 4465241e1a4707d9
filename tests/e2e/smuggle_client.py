# SPDX-License-Identifier: Apache-2.0
"""The agent's side of the request smuggling tests, run inside the sandbox.

    smuggle_client.py SCENARIO HOST PORT [tls|direct]

Speaks HTTP/1.1 by hand to the proxy on 127.0.0.1:3128 (absolute-form
requests, or origin-form inside a CONNECT tunnel the proxy intercepts, with
"tls"), or straight to HOST:PORT as a client that ignores the proxy
(with "direct": network.mode transparent redirects it), so that every
byte of the attack is the test's own. Prints one line
per response: "STEP STATUS BODY", or "STEP closed" when the proxy ended the
connection instead.
"""
import base64
import os
import socket
import ssl
import sys

scenario, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
tls = len(sys.argv) > 4 and sys.argv[4] == "tls"
direct = len(sys.argv) > 4 and sys.argv[4] == "direct"
auth = f"{host}:{port}"
SMUGGLED = f"POST /admin/delete-all HTTP/1.1\r\nHost: {auth}\r\nContent-Length: 0\r\n\r\n".encode()


class Conn:
    def __init__(self):
        if direct:
            self.s, self.buf = socket.create_connection((host, port), timeout=20), b""
            return
        s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
        if tls:
            s.sendall(f"CONNECT {auth} HTTP/1.1\r\nHost: {auth}\r\n\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head:
                head += s.recv(1)
            assert b" 200 " in head.split(b"\r\n")[0], head
            s = ssl.create_default_context().wrap_socket(s, server_hostname=host)
        self.s, self.buf = s, b""

    def target(self, path):
        return path if tls or direct else f"http://{auth}{path}"

    def send(self, data):
        self.s.sendall(data)

    def fill(self):
        data = self.s.recv(65536)
        if not data:
            raise EOFError
        self.buf += data

    def response(self, method="GET"):
        """One response (interim ones included); returns (status, body)."""
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        n = 0
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            if k.strip().lower() == "content-length":
                n = int(v)
        if method == "HEAD" or status < 200 or status in (204, 304):
            n = 0
        while len(self.buf) < n:
            self.fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, body.decode("latin-1").strip()


def show(step, c, method="GET"):
    try:
        status, body = c.response(method)
        print(step, status, body.split("\n")[0][:120], flush=True)
        return status
    except (EOFError, OSError):
        print(step, "closed", flush=True)
        return None


def send(c, method, path, headers="", body=b""):
    c.send(f"{method} {c.target(path)} HTTP/1.1\r\nHost: {auth}\r\n{headers}\r\n".encode() + body)


def after(c, step="after"):
    """The legitimate neighbour: a GET without a body, on the same
    connection when the proxy kept it, else on a new one."""
    try:
        send(c, "GET", "/public/after")
        if show(step, c) is not None:
            return
    except OSError:
        pass
    c = Conn()
    send(c, "GET", "/public/after-new")
    show(step + "-new", c)


def chunked(data):
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)


def ws_key():
    return base64.b64encode(os.urandom(16)).decode()


c = Conn()
if scenario == "bodiless":
    # A body on each method that defines none, framed both ways.
    method = sys.argv[5]
    path = {"DELETE": "/public/items/1"}.get(method, "/public/x")
    send(c, method, path, f"Content-Length: {len(SMUGGLED)}\r\n", SMUGGLED)
    show("attack-cl", c, method)
    after(c)
    c = Conn()
    send(c, method, path, "Transfer-Encoding: chunked\r\n", chunked(SMUGGLED))
    show("attack-chunked", c, method)
    after(c)
elif scenario == "keepalive":
    # Several bodiless requests on one connection, then a POST whose body
    # holds request-like text, then one more: all on one connection.
    for i in range(3):
        send(c, "GET", f"/public/k{i}", "Content-Length: 0\r\n" if i == 1 else "")
        show(f"get{i}", c)
    send(c, "POST", "/public/upload", f"Content-Length: {len(SMUGGLED)}\r\n", SMUGGLED)
    show("post", c)
    send(c, "POST", "/public/upload", "Transfer-Encoding: chunked\r\n", chunked(SMUGGLED))
    show("post-chunked", c)
    send(c, "HEAD", "/public/h")
    show("head", c, "HEAD")
    # Interim responses, then the final one.
    send(c, "GET", "/public/interim")
    while (show("interim", c) or 200) < 200:
        pass
    after(c)
elif scenario == "pipelined":
    # Two requests in one write: each is decided on its own.
    c.send(f"GET {c.target('/public/p1')} HTTP/1.1\r\nHost: {auth}\r\n\r\n".encode()
           + (SMUGGLED if tls or direct else SMUGGLED.replace(b"POST /admin", f"POST http://{auth}/admin".encode())))
    show("pipe1", c)
    show("pipe2", c)
elif scenario == "expect":
    # Expect: 100-continue to a path the upstream refuses at once: the
    # body must never become a request of its own.
    for path in ("/public/upload-auth", "/public/upload"):
        send(c, "POST", path, f"Content-Length: {len(SMUGGLED)}\r\nExpect: 100-continue\r\n")
        c.s.settimeout(3)
        try:
            status, _ = c.response("POST")
        except socket.timeout:
            status = None  # no 100: send the body anyway, as curl does
        c.s.settimeout(20)
        print(path, "interim", status, flush=True)
        if status == 100:
            c.send(SMUGGLED)
            show(path, c, "POST")
        elif status is None:
            c.send(SMUGGLED)
            show(path, c, "POST")
        else:
            print(path, status, flush=True)
    after(c)
    c = Conn()
    send(c, "POST", "/public/upload", "Content-Length: 5\r\nExpect: 200-ok\r\n", b"hello")
    show("expect-other", c, "POST")
elif scenario == "upgrade":
    # Upgrades the upstream may take for a switch while it goes on reading
    # HTTP/1.1: whatever follows would reach it undecided.
    for name, path, up in (("h2c", "/public/ws", "h2c"), ("ws-h2c", "/public/ws", "websocket, h2c"),
                           ("h2c-ws", "/public/ws", "h2c, websocket"), ("fake101", "/public/ws/fake101", "websocket")):
        c = Conn()
        send(c, "GET", path, f"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: {up}\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"
             f"Sec-WebSocket-Key: {ws_key()}\r\nSec-WebSocket-Version: 13\r\n")
        status = show(name, c)
        if status == 101:
            try:
                c.send(SMUGGLED)
                show(name + "-raw", c, "POST")
            except OSError:
                print(name + "-raw", "closed", flush=True)
    after(Conn())
elif scenario == "websocket":
    # The neighbour: a real WebSocket (servers.py's echo) still works.
    send(c, "GET", "/ws", f"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: {ws_key()}\r\n"
         "Sec-WebSocket-Version: 13\r\n")
    status = show("ws", c)
    if status == 101:
        c.send(bytes([0x81, 0x85, 1, 2, 3, 4]) + bytes(b ^ [1, 2, 3, 4][i % 4] for i, b in enumerate(b"hello")))
        while len(c.buf) < 7:
            c.fill()
        print("ECHO", c.buf[2:7].decode(), flush=True)
elif scenario == "early":
    # A body the proxy streams (over max_body) to a path the upstream
    # answers before reading it.
    big = SMUGGLED + b"x" * 200000
    send(c, "POST", "/public/upload-early", f"Content-Length: {len(big)}\r\n")
    try:
        c.send(big)
    except OSError:
        pass
    show("early", c, "POST")
    after(Conn())
else:
    sys.exit(f"unknown scenario {scenario}")
