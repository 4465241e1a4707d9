#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a session's private key is, in the memory of running processes.

    keyscan.py SESSION-KEY-HEX WRITER-PID PID...

SESSION-KEY-HEX is the session certificate's session_key (the public
key). The writer keeps its key in libsodium's form, the 32-byte seed
followed by the public key: every 32 bytes before a copy of the public key
in the writer's memory whose Ed25519 public key is that key are the seed.
Then each PID's readable memory and environment are searched for the seed
(raw, hex, base64, base64url). Prints one line per process:
"PID COMM found|absent", after "seed found" (the writer) or
"seed not-found" (then nothing else: the search cannot be trusted).
Exits 3 when a process's memory cannot be read (not root).

Mappings of a GiB or more are reservations, not data: a sanitizer's
shadow memory, which would take hours to read page by page. They are
left out; every heap, stack and library mapping is far smaller.
"""
import base64
import re
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

CHUNK = 1 << 20
RESERVATION = 1 << 30


def regions(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
            if not m or m.group(3)[0] != "r":
                continue
            start, end = int(m.group(1), 16), int(m.group(2), 16)
            if end - start < RESERVATION:
                yield start, end


def scan(pid, needles):
    """Offsets of any needle in pid's readable memory (a list of (needle
    index, address)), and whether anything could be read."""
    hits, read_any = [], False
    longest = max(len(n) for n in needles)
    with open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for start, end in regions(pid):
            pos, tail = start, b""
            while pos < end:
                try:
                    mem.seek(pos)
                    data = mem.read(min(CHUNK, end - pos))
                except (OSError, ValueError, OverflowError):
                    break
                if not data:
                    break
                read_any = True
                buf = tail + data
                for i, n in enumerate(needles):
                    at = buf.find(n)
                    while at >= 0:
                        hits.append((i, pos - len(tail) + at))
                        at = buf.find(n, at + 1)
                tail = buf[-(longest - 1):] if longest > 1 else b""
                pos += len(data)
    return hits, read_any


def public_of(seed):
    key = Ed25519PrivateKey.from_private_bytes(seed)
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def main():
    pub = bytes.fromhex(sys.argv[1])
    writer = int(sys.argv[2])
    others = [int(p) for p in sys.argv[3:]]
    try:
        hits, ok = scan(writer, [pub])
    except PermissionError:
        sys.exit(3)
    seed = None
    with open(f"/proc/{writer}/mem", "rb", 0) as mem:
        for _, addr in hits:
            try:
                mem.seek(addr - 32)
                cand = mem.read(32)
            except OSError:
                continue
            if len(cand) == 32 and public_of(cand) == pub:
                seed = cand
                break
    if not ok or seed is None:
        print("seed not-found")
        return
    print("seed found")
    forms = [seed, seed.hex().encode(), base64.b64encode(seed).rstrip(b"="),
             base64.urlsafe_b64encode(seed).rstrip(b"=")]
    for pid in others:
        comm = open(f"/proc/{pid}/comm").read().strip()
        try:
            hits, ok = scan(pid, forms)
            env = open(f"/proc/{pid}/environ", "rb").read()
        except PermissionError:
            sys.exit(3)
        if not ok:
            sys.exit(3)
        inenv = any(f in env for f in forms)
        print(pid, comm, "found" if hits or inenv else "absent")


main()
