#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A raw JSON-RPC client for the MCP gateway's tests: writes the lines of
# INPUT to CMD's stdin, keeps stdin open until CMD has answered every
# request id named, then closes it and prints everything CMD wrote.
#   mcp-raw.py INPUT IDS -- CMD...      (IDS: comma-separated, e.g. 1,2,8)
# Holding stdin open matters: a server's own requests come after the
# client's, and the gateway stops relaying to a server whose client is gone.
import json, subprocess, sys, threading

inp, ids = sys.argv[1], set(sys.argv[2].split(",")) - {""}
cmd = sys.argv[sys.argv.index("--") + 1:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out, seen, done = [], set(), threading.Event()

def reader():
    for raw in p.stdout:
        out.append(raw.decode("utf-8", "replace").rstrip("\n"))
        try:
            m = json.loads(raw)
            if isinstance(m, dict) and "id" in m and "method" not in m:
                seen.add(str(m["id"]))
        except ValueError:
            pass
        if ids <= seen:
            done.set()
    done.set()

t = threading.Thread(target=reader)
t.start()
with open(inp, "rb") as f:
    for line in f:
        try:
            p.stdin.write(line)
            p.stdin.flush()
        except BrokenPipeError:
            break
done.wait()
try:
    p.stdin.close()
except BrokenPipeError:
    pass
t.join()
rc = p.wait()
print("\n".join(out))
sys.exit(rc)
