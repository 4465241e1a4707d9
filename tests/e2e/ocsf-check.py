#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ocsf-check.py REQUIRED LOG... [--classes UID,UID,...]

Checks every record of the decision logs against what OCSF requires
(REQUIRED: tests/data/ocsf-1.3.0-required.txt): each attribute its class
requires, and in every object a record holds, at any depth, the object's
required attributes and one of its at_least_one set. `unmapped` and
airlock's own `airlock` member are not OCSF's and are not looked into.
With --classes, each of those classes must occur. Prints one line per
problem (FILE:LINE: class C (kind K): what is missing) and exits 1 when
there is one."""
import json
import sys

args = [a for a in sys.argv[1:]]
want = []
if "--classes" in args:
    i = args.index("--classes")
    want = [int(c) for c in args[i + 1].split(",")]
    del args[i:i + 2]
required_file, logs = args[0], args[1:]

classes, obj_req, obj_one, types = {}, {}, {}, {}
with open(required_file) as f:
    for line in f:
        if line.startswith("#") or not line.strip():
            continue
        head, _, rest = line.partition(":")
        words, names = head.split(), rest.split()
        if words[0] == "class":
            classes[int(words[1])] = (words[2], set(names))
        elif words[0] == "object" and words[2] == "required":
            obj_req[words[1]] = set(names)
        elif words[0] == "object" and words[2] == "at_least_one":
            obj_one[words[1]] = set(names)
        elif words[0] == "type":
            types[words[1]] = words[2]

problems = []


def present(v):
    return v is not None and v != [] and v != {} and v != ""


def check_object(where, name, value, obj_type):
    values = value if isinstance(value, list) else [value]
    for k, v in enumerate(values):
        at = f"{where}{name}" + (f"[{k}]" if isinstance(value, list) else "")
        if not isinstance(v, dict):
            problems.append(f"{at} is not an object ({obj_type})")
            continue
        for r in sorted(obj_req.get(obj_type, ())):
            if not present(v.get(r)):
                problems.append(f"{at}.{r} is missing ({obj_type} requires it)")
        one = obj_one.get(obj_type)
        if one and not any(present(v.get(r)) for r in one):
            problems.append(f"{at} has none of {' '.join(sorted(one))} ({obj_type} needs one)")
        check_members(at + ".", v)


def check_members(where, obj):
    for name, v in obj.items():
        if name in types and isinstance(v, (dict, list)):
            check_object(where, name, v, types[name])


seen = set()
for log in logs:
    with open(log) as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)
            uid = rec.get("class_uid")
            kind = rec.get("airlock", {}).get("kind")
            before = len(problems)
            seen.add(uid)
            if uid not in classes:
                problems.append(f"class_uid {uid} is no class of the schema")
            else:
                for r in sorted(classes[uid][1]):
                    if not present(rec.get(r)):
                        problems.append(f"{r} is missing ({classes[uid][0]} requires it)")
            check_members("", {k: v for k, v in rec.items() if k not in ("unmapped", "airlock")})
            for p in problems[before:]:
                print(f"{log}:{n}: class {uid} (kind {kind}): {p}")
for c in want:
    if c not in seen:
        problems.append(f"no record of class {c}")
        print(f"no record of class {c} in {' '.join(logs)}")
sys.exit(1 if problems else 0)
