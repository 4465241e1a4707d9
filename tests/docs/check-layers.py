#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layers of src/ against every #include in it.

Each folder under src/ is a layer (policy/import/ is one of its own, above
policy/). A file may include headers of its own layer and of the layers
below it, as LAYERS says; an include that reaches up or sideways is how a
dependency cycle starts, and fails this check with the file and line
named. src/meson.build links each layer's library alone against the same
layers below it, which refuses the calls; this refuses the headers (types,
macros and inline functions a link never sees).

    check-layers.py [SOURCE_ROOT]
"""
import os
import re
import sys

# Each layer and the layers directly below it; what is below those is
# allowed too. The order of src/meson.build's libraries.
LAYERS = {
    "util": [],
    "proto": [],
    "doc": ["util"],
    "match": ["util"],
    "handoff": ["match"],
    "audit": ["doc", "proto"],
    "policy": ["handoff"],
    "policy/import": ["policy", "doc"],
    "net": ["policy", "proto"],
    "mcp": ["net", "policy/import"],
    "review": ["net", "handoff"],
    "analysis": ["net", "audit"],
    "sandbox": ["mcp", "review", "audit"],
    "proxy": ["sandbox"],
    "mcpgw": ["sandbox"],
    "conformance": ["util"],
    "cli": ["proxy", "mcpgw", "analysis", "conformance"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def below(layer, seen=None):
    """The layer and every layer beneath it."""
    seen = set() if seen is None else seen
    if layer not in seen:
        seen.add(layer)
        for lower in LAYERS[layer]:
            below(lower, seen)
    return seen


def layer_of(rel):
    """The layer of a path under src/ ("policy/import/json.c" -> policy/import)."""
    parts = rel.split("/")
    if len(parts) > 2 and "/".join(parts[:2]) in LAYERS:
        return "/".join(parts[:2])
    return parts[0] if len(parts) > 1 else None


def check(root):
    src = os.path.join(root, "src")
    problems = []
    for d, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(d, f), src)
            layer = layer_of(rel)
            if layer not in LAYERS:
                problems.append(f"src/{rel}: folder '{layer}' is in no layer (add it to LAYERS)")
                continue
            allowed = below(layer)
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = layer_of(m.group(1))
                    if target not in allowed:
                        problems.append(f"src/{rel}:{n}: includes {m.group(1)}: layer '{layer}' "
                                        f"may reach only {', '.join(sorted(allowed))}")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    for layer, lowers in LAYERS.items():
        for lower in lowers:
            if layer in below(lower):
                print(f"check-layers: LAYERS has a cycle through '{layer}' and '{lower}'")
                return 1
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-layers: {len(problems)} include(s) reach outside their layer")
        return 1
    print("check-layers: every include stays in its layer or below")
    return 0


if __name__ == "__main__":
    sys.exit(main())
