#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes tests/data/ocsf-1.3.0-required.txt from a checkout of the OCSF
schema (github.com/ocsf/ocsf-schema at tag 1.3.0):

    git clone -b 1.3.0 https://github.com/ocsf/ocsf-schema /tmp/ocsf
    tests/e2e/ocsf-required-gen.py /tmp/ocsf "$(git -C /tmp/ocsf rev-parse HEAD)" \
        > tests/data/ocsf-1.3.0-required.txt

A class requires what base_event, its category and the class itself mark
`"requirement": "required"`, with their $include files; a profile's
attributes (profiles/*.json) are required only of events that declare the
profile, which airlock's records do not. An object requires its own and
its parents' required attributes, and may carry an `at_least_one`
constraint. Attribute types come from dictionary.json."""
import json
import os
import sys

root = sys.argv[1]


def load(p):
    with open(os.path.join(root, p)) as f:
        return json.load(f)


def attrs_of(d):
    out = {}
    for k, v in d.get("attributes", {}).items():
        if k == "$include":
            for inc in v if isinstance(v, list) else [v]:
                if inc.startswith("profiles/"):
                    continue
                for kk, vv in attrs_of(load(inc)).items():
                    out.setdefault(kk, {}).update({x: y for x, y in vv.items() if y is not None})
            continue
        out.setdefault(k, {}).update({x: y for x, y in v.items() if y is not None})
    return out


def resolve(table, name):
    d = table[name]
    base = resolve(table, d["extends"]) if d.get("extends") else {}
    for k, v in attrs_of(d).items():
        base.setdefault(k, {}).update(v)
    return base


events, objects = {}, {}
for sub, table in (("events", events), ("objects", objects)):
    for dirpath, _, files in os.walk(os.path.join(root, sub)):
        for f in sorted(files):
            if f.endswith(".json"):
                with open(os.path.join(dirpath, f)) as fh:
                    d = json.load(fh)
                table[d["name"]] = d
cats = load("categories.json")["attributes"]
version = load("version.json")["version"]
dictionary = load("dictionary.json")["attributes"]

commit = f", commit {sys.argv[2]}" if len(sys.argv) > 2 else ""
print(f"# OCSF schema {version} (github.com/ocsf/ocsf-schema, tag {version}{commit}): what it requires.")
print("# Written by tests/e2e/ocsf-required-gen.py; read by tests/e2e/ocsf-check.py.")
print("# class UID NAME: ATTR...            attributes the class requires (base_event, category, class)")
print("# object NAME required: ATTR...      attributes the object requires (with its parents)")
print("# object NAME at_least_one: ATTR...  of which the object must have one")
print("# type ATTR OBJECT                   the object an attribute holds (an array of them or one)")


def class_uid(name):
    d = events[name]
    cat = d.get("category")
    e = d
    while not cat and e.get("extends"):
        e = events[e["extends"]]
        cat = e.get("category")
    if d.get("uid") is None or not cat:
        return None
    return cats[cat]["uid"] * 1000 + d["uid"]


for name in sorted(events, key=lambda n: class_uid(n) or 0):
    uid = class_uid(name)
    if uid is None:
        continue
    req = sorted(k for k, v in resolve(events, name).items() if v.get("requirement") == "required")
    print(f"class {uid} {name}: {' '.join(req)}")
for name in sorted(objects):
    if name.startswith("_"):
        continue
    a = resolve(objects, name)
    req = sorted(k for k, v in a.items() if v.get("requirement") == "required")
    if req:
        print(f"object {name} required: {' '.join(req)}")
    d, c = objects[name], None
    while d is not None:
        c = c or (d.get("constraints") or {}).get("at_least_one")
        d = objects.get(d["extends"]) if d.get("extends") else None
    if c:
        print(f"object {name} at_least_one: {' '.join(c)}")
for k in sorted(dictionary):
    v = dictionary[k]
    if v.get("type") in objects:
        print(f"type {k} {v['type']}")
