#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Differential test of `airlock policy diff`, `airlock policy explain` and
real enforcement, on random policies.

usage: policy-differential.py --airlock A --probe P --workspace WS
                              [--seed N] [--families F] [--size K]
                              [--actions M] [--real R]

F families of K random policies each are made (the first at random, the
others mutations of it: entries added, dropped, moved, narrowed), over a
fixture tree made under /var/tmp (denied, granted and protected paths,
files beneath them, programs) and the workspace WS. Every policy is asked
the same M random actions with `explain` (read, write, exec of paths,
beneath deny and protect entries too; requests by method, scheme, host,
port and path, malformed paths and private addresses included). Then:

  1. for every ordered pair (A, B) of a family, `diff A B`: exit 0 means
     no action explain allows under B is denied under A; exit 1: each
     witness of the network and filesystem sections is allowed by
     explain(B) and denied by explain(A);
  2. for R policies, the filesystem actions run for real inside
     `airlock run --policy P` with the probe, and each outcome is what
     explain said.

Prints each disagreement found, then one line "N passed, N failed" and the
counts; exits 1 when anything disagreed. The same seed makes the same
policies and actions.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

NET_HOSTS = ["api.test", "*.svc.test", "open.test", "10.0.0.5", "127.0.0.1"]
NET_PATHS = ["/**", "/a/*", "/a/**", "/repos/*/x", "/*"]
PRIVATE = ["10.0.0.0/8", "10.0.0.5:8080", "127.0.0.1", "::/0", "fc00::/7", "0.0.0.0/0"]
REQ_HOSTS = ["api.test", "x.svc.test", "open.test", "10.0.0.5", "127.0.0.1", "other.test", "[::ffff:10.0.0.5]"]
REQ_PATHS = ["/", "/a/b", "/a", "/repos/r/x", "/.", "/a/../b", "/%2", "/a/%2e%2e/b", "//x", "/a/b/."]


class Fixture:
    """The host tree the policies name: real files, so that explain and
    the sandbox see what the policies mean."""

    def __init__(self, ws):
        self.ws = os.path.realpath(ws)
        self.root = tempfile.mkdtemp(prefix="airlock-differential.", dir="/var/tmp")
        r, w = self.root, self.ws
        self.dirs = [f"{r}/srv", f"{r}/srv/D", f"{r}/srv/D/a", f"{r}/srv/D/a/b", f"{r}/srv/E", f"{r}/srv/E/sub",
                     f"{r}/lib", f"{r}/lib/dpkg", f"{r}/bin", f"{w}/data", f"{w}/data/sub", f"{w}/src",
                     f"{w}/.git", f"{w}/.git/hooks", f"{w}/.vscode"]
        files = [f"{r}/srv/D/a/b/f", f"{r}/srv/D/a/g", f"{r}/srv/D/x", f"{r}/srv/E/f", f"{r}/srv/E/sub/f",
                 f"{r}/lib/dpkg/status", f"{w}/src/a.c", f"{w}/.git/config", f"{w}/.git/HEAD",
                 f"{w}/.git/hooks/pre-commit", f"{w}/.vscode/settings.json", f"{w}/data/key", f"{w}/data/sub/f"]
        self.progs = [f"{r}/bin/tool", f"{r}/srv/D/a/b/tool", f"{w}/tool", f"{w}/data/tool"]
        for d in self.dirs:
            os.makedirs(d, exist_ok=True)
        os.makedirs(f"{w}/.git/objects", exist_ok=True)
        os.makedirs(f"{w}/.git/refs", exist_ok=True)
        for f in files:
            with open(f, "w") as fh:
                fh.write("ref: refs/heads/main\n" if f.endswith("HEAD") else "text\n")
        for p in self.progs:
            shutil.copy("/bin/true", p)
        self.files = files
        self.new = [f"{r}/srv/D/a/b/new", f"{r}/srv/E/new", f"{r}/lib/dpkg/new", f"{w}/new.txt", f"{w}/.envrc",
                    f"{w}/data/new", f"{w}/.git/hooks/post-commit", f"{w}/.vscode/tasks.json", f"{w}/src/b.c"]
        # The sandbox runs as another uid when started as root.
        for p in self.dirs + [f"{w}/.git/objects", f"{w}/.git/refs"]:
            os.chmod(p, 0o777)
        for p in files:
            os.chmod(p, 0o666)
        for p in self.progs:
            os.chmod(p, 0o777)
        os.chmod(r, 0o755)
        os.chmod(w, 0o777)

    def clean_new(self):
        for p in self.new:
            if os.path.lexists(p):
                os.unlink(p)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def gen_policy(rng, fx):
    fs = {"read": [], "write": [], "deny": []}
    grantable = [d for d in fx.dirs if not d.startswith(fx.ws + "/.")] + ["/etc/ssl", "/etc/ssl/certs"]
    for k, n in (("read", 3), ("write", 2), ("deny", 2)):
        for _ in range(rng.randint(0, n)):
            fs[k].append(rng.choice(grantable + ([f"{fx.ws}/.git", "/etc/ssl", "/usr/share"] if k == "deny" else [])))
    p = {"baseline": rng.random() < 0.95, "protect": [], "protect_defaults": rng.random() < 0.85,
         "ws_ro": rng.random() < 0.15, "exec": None, "net": None}
    p.update(fs)
    if rng.random() < 0.3:
        p["protect"] = rng.sample(["data/**", "src/*.c", "data/sub/**", "tool"], rng.randint(1, 2))
    if rng.random() < 0.25:
        p["exec"] = ["/usr", "/bin", fx.ws] + rng.sample([f"{fx.root}/bin", f"{fx.root}/srv/D/a/b"], rng.randint(0, 2))
    if rng.random() < 0.85:
        p["net"] = gen_net(rng)
    return p


def gen_net(rng):
    eps = []
    for _ in range(rng.randint(0, 3)):
        ports = sorted(set(rng.sample([80, 443, 8080], rng.randint(1, 2))))
        rules = []
        if rng.random() < 0.6:
            for _ in range(rng.randint(1, 2)):
                rule = {"path": rng.choice(NET_PATHS)}
                if rng.random() < 0.7:
                    rule["methods"] = sorted(set(rng.sample(["GET", "POST", "DELETE"], rng.randint(1, 2))))
                rules.append(rule)
        tls = rng.choice(["intercept", "passthrough"])
        if 443 in ports and rules:
            tls = "intercept"
        eps.append({"host": rng.choice(NET_HOSTS), "ports": ports, "tls": tls, "rules": rules})
    return {"endpoints": eps,
            "allow_private": sorted(set(rng.sample(PRIVATE, rng.randint(0, 2)))),
            "resolve": rng.choice([None, None, "127.0.0.1", "10.0.0.5"])}


def mutate(rng, p, fx):
    q = json.loads(json.dumps(p))
    for _ in range(rng.randint(1, 3)):
        what = rng.choice(["read", "write", "deny", "protect", "flag", "net", "net", "net"])
        other = gen_policy(rng, fx)
        if what in ("read", "write", "deny"):
            if q[what] and rng.random() < 0.5:
                q[what].pop(rng.randrange(len(q[what])))
            else:
                q[what] += other[what][:1] or [rng.choice(fx.dirs)]
        elif what == "protect":
            q["protect"] = other["protect"]
        elif what == "flag":
            k = rng.choice(["protect_defaults", "ws_ro", "baseline"])
            q[k] = not q[k]
        elif q["net"] is None or other["net"] is None:
            q["net"] = other["net"]
        else:
            n = q["net"]
            r = rng.random()
            if n["endpoints"] and r < 0.3:
                n["endpoints"].pop(rng.randrange(len(n["endpoints"])))
            elif n["endpoints"] and r < 0.6:
                ep = rng.choice(n["endpoints"])
                if ep["rules"] and rng.random() < 0.5:
                    ep["rules"].pop(rng.randrange(len(ep["rules"])))
                elif rng.random() < 0.5:
                    ep["tls"] = "passthrough" if ep["tls"] == "intercept" else "intercept"
                    if 443 in ep["ports"] and ep["rules"]:
                        ep["tls"] = "intercept"
                else:
                    ep["ports"] = sorted(set(ep["ports"] + [rng.choice([80, 443, 8080])]))
                    if 443 in ep["ports"] and ep["rules"]:
                        ep["tls"] = "intercept"
            elif r < 0.8:
                n["endpoints"] += other["net"]["endpoints"][:1]
            else:
                n["allow_private"] = other["net"]["allow_private"]
                n["resolve"] = other["net"]["resolve"]
    return q


def yaml_of(p, fx):
    q = lambda s: json.dumps(s)
    out = ["version: 1", f"sandbox: {{workspace: {q(fx.ws)}, workspace_mode: direct}}", "filesystem:",
           f"  baseline: {'true' if p['baseline'] else 'false'}",
           f"  protect_defaults: {'true' if p['protect_defaults'] else 'false'}"]
    read = list(dict.fromkeys(p["read"] + ([fx.ws] if p["ws_ro"] else [])))
    for k, v in (("read", read), ("write", list(dict.fromkeys(p["write"]))), ("deny", list(dict.fromkeys(p["deny"]))),
                 ("protect", p["protect"])):
        if v:
            out.append(f"  {k}: [{', '.join(q(x) for x in v)}]")
    if p["exec"]:
        out += ["process:", f"  exec: [{', '.join(q(x) for x in p['exec'])}]"]
    n = p["net"]
    if n is not None:
        out.append("network:")
        if n["resolve"]:
            out.append(f"  resolve: {{api.test: {n['resolve']}}}")
        if n["allow_private"]:
            out.append(f"  allow_private: [{', '.join(q(x) for x in n['allow_private'])}]")
        out.append("  endpoints:" + ("" if n["endpoints"] else " []"))
        for ep in n["endpoints"]:
            out += [f"    - host: {q(ep['host'])}", f"      ports: {ep['ports']}", f"      tls: {ep['tls']}"]
            if ep["rules"]:
                out.append("      rules:")
                for r in ep["rules"]:
                    m = f"methods: [{', '.join(r['methods'])}], " if "methods" in r else ""
                    out.append(f"        - {{{m}path: {q(r['path'])}}}")
    return "\n".join(out) + "\n"


def gen_actions(rng, fx, m):
    fs = []
    for p in fx.files + fx.dirs + ["/etc/ssl/certs", "/etc/hostname", "/usr/share/doc"]:
        fs.append(("read", p))
    for p in fx.files + fx.new:
        fs.append(("write", p))
    for p in fx.progs + ["/usr/bin/true"]:
        fs.append(("exec", p))
    net = []
    for _ in range(m * 2):
        scheme = rng.choice(["http", "https"])
        port = rng.choice(["", "", ":8080", ":443" if scheme == "http" else ":80"])
        net.append(("request", f"{rng.choice(['GET', 'POST', 'DELETE'])} {scheme}://{rng.choice(REQ_HOSTS)}{port}"
                               f"{rng.choice(REQ_PATHS)}"))
    rng.shuffle(fs)
    nf = min(len(fs), max(1, m // 2))
    return fs[:nf] + list(dict.fromkeys(net))[:m - nf]


class Airlock:
    def __init__(self, binary, cwd):
        self.bin = binary
        self.cwd = cwd
        self.calls = 0

    def run(self, *args):
        self.calls += 1
        return subprocess.run([self.bin, *args], cwd=self.cwd, capture_output=True, text=True)

    def explain(self, pol, action):
        kind, what = action
        if kind == "request":
            p = self.run("policy", "explain", pol, "--request", what)
        elif kind == "exec":
            p = self.run("policy", "explain", pol, "--exec", what)
        else:
            p = self.run("policy", "explain", pol, "--path", what, "--access", kind)
        if p.returncode not in (0, 1):
            raise RuntimeError(f"explain {pol} {action}: exit {p.returncode}: {p.stderr.strip()}")
        return p.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--airlock", required=True)
    ap.add_argument("--probe", required=True)
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--families", type=int, default=6)
    ap.add_argument("--size", type=int, default=4)
    ap.add_argument("--actions", type=int, default=40)
    ap.add_argument("--real", type=int, default=4)
    ap.add_argument("--keep", action="store_true", help="keep the policies (printed) for a report")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    fx = Fixture(a.workspace)
    work = tempfile.mkdtemp(prefix="airlock-differential-policies.")
    al = Airlock(os.path.abspath(a.airlock), work)
    bad = []
    checks = pairs = wider = witnesses = reals = 0
    try:
        actions = gen_actions(rng, fx, a.actions)
        names, answers = [], {}
        for f in range(a.families):
            family = []
            tries = 0
            while len(family) < a.size and tries < a.size * 20:
                tries += 1
                p = gen_policy(rng, fx) if not family else mutate(rng, rng.choice(family), fx)
                name = f"p{f}-{len(family)}.yaml"
                with open(os.path.join(work, name), "w") as fh:
                    fh.write(yaml_of(p, fx))
                if al.run("policy", "check", name).returncode != 0:
                    continue  # refused (two lists name one path, and the like): another
                family.append(p)
                names.append((f, name, p))
        for _, name, _ in names:
            answers[name] = [al.explain(name, x) for x in actions]
        for f in range(a.families):
            fam = [(n, p) for g, n, p in names if g == f]
            for old, _ in fam:
                for new, _ in fam:
                    if old == new:
                        continue
                    pairs += 1
                    d = al.run("policy", "diff", old, new, "--json")
                    if d.returncode == 0:
                        for i, x in enumerate(actions):
                            checks += 1
                            if answers[new][i] and not answers[old][i]:
                                bad.append(f"diff {old} {new} says no wider, but explain allows {x} under NEW "
                                           f"and denies it under OLD")
                        continue
                    if d.returncode != 1:
                        bad.append(f"diff {old} {new}: exit {d.returncode}: {d.stderr.strip()}")
                        continue
                    wider += 1
                    for w in json.loads(d.stdout):
                        sec, wit = w["section"], w["witness"]
                        if sec == "network" and "websocket" not in wit:
                            act = ("request", wit)
                        elif sec in ("filesystem.read", "filesystem.write"):
                            act = (sec.split(".")[1], wit)
                        elif sec == "filesystem.exec":
                            act = ("exec", wit)
                        else:
                            continue
                        # The prover judges paths as written: one this
                        # machine does not have (/libx32) is a widening
                        # that no sandbox here can show.
                        if act[0] != "request" and not os.path.lexists(
                                act[1] if act[0] != "write" else os.path.dirname(act[1])):
                            continue
                        witnesses += 1
                        checks += 1
                        yn, yo = al.explain(new, act), al.explain(old, act)
                        if act[0] == "read" and yn and yo and os.path.isdir(act[1]):
                            # A directory on the way to a path OLD shows is
                            # there in OLD too, empty but for that path: the
                            # witness stands for what lies in it.
                            act = (act[0], act[1].rstrip("/") + "/airlock-differential-name")
                            yn, yo = al.explain(new, act), al.explain(old, act)
                        if not yn or yo:
                            bad.append(f"diff {old} {new}: witness {act} ({w['message']}): explain says "
                                       f"{'allow' if yn else 'deny'} under NEW, {'allow' if yo else 'deny'} under OLD")
        # Real runs: the filesystem actions, each through the probe.
        probe = os.path.join(fx.ws, "airlock-probe")
        if not os.path.exists(probe):
            shutil.copy(a.probe, probe)
            os.chmod(probe, 0o755)
        fsacts = [(i, x) for i, x in enumerate(actions) if x[0] != "request"]
        runnable = [(n, p) for _, n, p in names if p["baseline"] and not p["ws_ro"]]
        rng.shuffle(runnable)
        for name, p in runnable[:a.real]:
            fx.clean_new()
            script = "".join(f"echo '@{i}'; ./airlock-probe {x[0]} '{x[1]}' 2>/dev/null\n" for i, x in fsacts) + "exit 0\n"
            r = al.run("run", "--policy", os.path.join(work, name), "--", "/bin/sh", "-c", script)
            fx.clean_new()
            if "@" not in r.stdout or r.returncode != 0:
                bad.append(f"airlock run --policy {name}: exit {r.returncode}: {r.stderr.strip()[:300]}")
                continue
            reals += 1
            seen = {}
            cur = None
            for line in r.stdout.splitlines():
                if line.startswith("@"):
                    cur = int(line[1:])
                elif cur is not None and ": " in line:
                    seen[cur] = line.split(": ", 1)[1]
            for i, x in fsacts:
                checks += 1
                got = seen.get(i, "no output")
                if got.startswith("error"):
                    bad.append(f"{name}: the probe could not run {x}: {got}")
                    continue
                # A denied path itself is covered by an empty, read-only
                # file or directory: reading it shows nothing of what is
                # there, which explain calls hidden.
                placeholder = x[0] == "read" and x[1] in p["deny"]
                if placeholder and got.startswith("allowed") and not answers[name][i]:
                    continue
                if got.startswith("allowed") != answers[name][i]:
                    bad.append(f"{name}: explain says {'allow' if answers[name][i] else 'deny'} for {x}, "
                               f"the sandbox: {got}")
    finally:
        fx.clean_new()
        fx.remove()
        if a.keep:
            print(f"policies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for b in bad[:60]:
        print("DISAGREE:", b)
    print(f"seed {a.seed}: {len(names)} policies, {pairs} ordered pairs ({wider} wider), {len(actions)} actions, "
          f"{witnesses} witnesses, {reals} real runs, {checks} checks, {al.calls} airlock calls")
    print(f"{checks - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
