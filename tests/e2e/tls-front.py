#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A TLS front for a plain loopback server, for tests that need HTTPS to a
server that speaks only HTTP (server-everything's Streamable HTTP mode).

    tls-front.py DIR NAME BACKEND-PORT   write DIR/ca.pem (a CA made for the
    test) and DIR/port, then accept TLS for NAME on 127.0.0.1 and relay
    each connection's bytes to 127.0.0.1:BACKEND-PORT.
"""
import os, socket, ssl, subprocess, sys, threading

d, name, backend = sys.argv[1], sys.argv[2], int(sys.argv[3])


def run(*args):
    subprocess.run(args, check=True, capture_output=True)


run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", "2", "-subj", "/CN=airlock e2e CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-keyout", f"{d}/srv.key", "-out", f"{d}/srv.csr", "-subj", f"/CN={name}")
with open(f"{d}/ext.cnf", "w") as f:
    f.write(f"subjectAltName=DNS:{name}\nextendedKeyUsage=serverAuth\n")
run("openssl", "x509", "-req", "-in", f"{d}/srv.csr", "-CA", f"{d}/ca.pem", "-CAkey", f"{d}/ca.key",
    "-CAcreateserial", "-out", f"{d}/srv.pem", "-days", "2", "-extfile", f"{d}/ext.cnf")

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(f"{d}/srv.pem", f"{d}/srv.key")
lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(64)
with open(f"{d}/port.tmp", "w") as f:
    f.write(f"{lsock.getsockname()[1]}\n")
os.rename(f"{d}/port.tmp", f"{d}/port")


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(c):
    try:
        t = ctx.wrap_socket(c, server_side=True)
    except (OSError, ssl.SSLError):
        c.close()
        return
    u = socket.create_connection(("127.0.0.1", backend))
    threading.Thread(target=pipe, args=(u, t), daemon=True).start()
    pipe(t, u)


while True:
    c, _ = lsock.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
