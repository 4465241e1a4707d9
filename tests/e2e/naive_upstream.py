#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A deliberately naive HTTP/1.1 upstream, for the request smuggling tests.

    naive_upstream.py DIR      write DIR/naive-ports (plain tls), then serve

It frames requests the way careless servers do, so that bytes a proxy
forwards as a body can run here as a request of their own:

- GET, HEAD, DELETE, OPTIONS and TRACE bodies are never read (neither a
  Content-Length nor a chunked body): the bytes are the next request.
- Before a request line, lines that are not one are skipped (a chunk-size
  line does not stop the smuggled request behind it).
- POST .../upload-auth with "Expect: 100-continue" is answered 401 at
  once, and the body, which the client was to hold back, is taken for the
  next request; without Expect the body is read first. Other POSTs with
  Expect get 100 Continue, then the body is read.
- POST .../upload-early is answered 401 as soon as its head is read, and
  its body is left for the next request.
- "Upgrade: h2c" (alone or in a list) is answered 101 with h2c, and
  .../fake101 answers any upgrade 101 without Sec-WebSocket-Accept; either
  way the connection then goes on reading HTTP/1.1 requests.
- HEAD responses carry the body a GET would get.
- .../interim is answered 103 and 100 before the final response.
- "Connection: close" is honoured.

Every request it runs is appended to DIR/naive.log as "METHOD PATH", and
answered 200 with "ran METHOD PATH" (framed by Content-Length).
"""
import os
import socket
import ssl
import sys
import threading

d = sys.argv[1]
lock = threading.Lock()
BODILESS = ("GET", "HEAD", "DELETE", "OPTIONS", "TRACE")


def log(line):
    with lock, open(f"{d}/naive.log", "a") as f:
        f.write(line + "\n")


class Conn:
    def __init__(self, s):
        self.s = s
        self.buf = b""

    def fill(self):
        data = self.s.recv(65536)
        if not data:
            raise EOFError
        self.buf += data

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        ln, self.buf = self.buf.split(b"\r\n", 1)
        return ln

    def take(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, data):
        self.s.sendall(data)


def is_request_line(ln):
    parts = ln.split(b" ")
    return len(parts) == 3 and parts[0].isalpha() and parts[2].startswith(b"HTTP/1.")


def read_body(c, headers):
    if headers.get("transfer-encoding", "").lower() == "chunked":
        data = b""
        while True:
            size = int(c.line().split(b";")[0], 16)
            if size == 0:
                while c.line():
                    pass
                return data
            data += c.take(size)
            c.line()
    n = int(headers.get("content-length") or 0)
    return c.take(n) if n else b""


def answer(c, status, text, close=False):
    body = text.encode()
    c.send(b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status, b"OK" if status == 200 else b"Unauthorized", len(body),
        b"Connection: close\r\n" if close else b"", body))


def serve(c):
    while True:
        ln = c.line()
        while not is_request_line(ln):
            ln = c.line()
        method, path, _ = ln.decode("latin-1").split(" ")
        headers = {}
        while True:
            h = c.line()
            if not h:
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        close = "close" in headers.get("connection", "").lower()
        upgrade = headers.get("upgrade", "").lower()
        expect = headers.get("expect", "").lower() == "100-continue"
        if "h2c" in upgrade or (upgrade and path.endswith("/fake101")):
            log(f"{method} {path}")
            proto = b"h2c" if "h2c" in upgrade else b"websocket"
            c.send(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + proto + b"\r\n\r\n")
            continue  # and reads HTTP/1.1 on, as if nothing had switched
        if method == "POST" and path.endswith("/upload-auth") and expect:
            log(f"{method} {path} (refused before the body)")
            answer(c, 401, "authentication required")
            continue  # the body, "not sent", is the next request
        if method == "POST" and path.endswith("/upload-early"):
            log(f"{method} {path} (answered before the body)")
            answer(c, 401, "authentication required", close=close)
            if close:
                return
            continue
        if method not in BODILESS:
            if expect:
                c.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = read_body(c, headers)
        else:
            body = b""
        log(f"{method} {path}")
        text = f"ran {method} {path} body={len(body)}"
        if path.endswith("/interim"):
            # Interim responses before the final one, in one write.
            c.send(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n")
        if method == "HEAD":
            # The body a GET would get, after a HEAD's head.
            b = text.encode()
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(b), b))
        elif path.endswith("/upload-auth"):
            answer(c, 401, text, close=close)
        else:
            answer(c, 200, text, close=close)
        if close:
            return


def conn_thread(s, ctx):
    try:
        if ctx:
            s = ctx.wrap_socket(s, server_side=True)
        serve(Conn(s))
        # A lingering close, as servers do: what the client still sends
        # is read and dropped, so that the answer is not lost to a reset.
        if not ctx:
            s.shutdown(socket.SHUT_WR)
        s.settimeout(2)
        while s.recv(65536):
            pass
    except (EOFError, OSError, ValueError, ssl.SSLError):
        pass
    finally:
        s.close()


def listen():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    return s


def accept_loop(s, ctx):
    while True:
        c, _ = s.accept()
        threading.Thread(target=conn_thread, args=(c, ctx), daemon=True).start()


plain, tls = listen(), listen()
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(f"{d}/srv.pem", f"{d}/srv.key")
threading.Thread(target=accept_loop, args=(plain, None), daemon=True).start()
threading.Thread(target=accept_loop, args=(tls, ctx), daemon=True).start()
with open(f"{d}/naive-ports.tmp", "w") as f:
    f.write(f"{plain.getsockname()[1]} {tls.getsockname()[1]}\n")
os.rename(f"{d}/naive-ports.tmp", f"{d}/naive-ports")
threading.Event().wait()
