#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/architecture.md's file map against the tree.

Every .c and .h file under src/ must have exactly one line in the file map
(the section "## File map": lines "- `src/PATH`: what it holds"), and every
line there must name a file that exists. Fails, naming each difference,
when a file is added, removed or renamed without its map line.

    check-file-map.py [SOURCE_ROOT]
"""
import os
import re
import sys

ENTRY = re.compile(r"^- `(src/[^`]+)`: \S")


def tree_files(root):
    found = set()
    for d, dirs, files in os.walk(os.path.join(root, "src")):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in files:
            if f.endswith((".c", ".h")):
                found.add(os.path.relpath(os.path.join(d, f), root))
    return found


def map_files(path, problems):
    listed = {}
    in_map = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("## "):
                in_map = line == "## File map"
                continue
            if not in_map or not line.startswith("- "):
                continue
            m = ENTRY.match(line)
            if not m:
                problems.append(f"{path}:{n}: not a map line (- `src/PATH`: what it holds): {line}")
                continue
            name = m.group(1)
            if name in listed:
                problems.append(f"{path}:{n}: {name} is listed twice (first on line {listed[name]})")
            else:
                listed[name] = n
    return listed


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    doc = os.path.join(root, "docs", "architecture.md")
    problems = []
    listed = map_files(doc, problems)
    if not listed:
        problems.append(f"{doc}: no file map (a section '## File map' with lines - `src/PATH`: ...)")
    tree = tree_files(root)
    for name in sorted(tree - set(listed)):
        problems.append(f"{name}: in the tree but not in the file map of docs/architecture.md")
    for name in sorted(set(listed) - tree):
        problems.append(f"{doc}:{listed[name]}: {name} is in the file map but not in the tree")
    for p in problems:
        print(p)
    print(f"file map: {len(listed)} entries, tree: {len(tree)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
