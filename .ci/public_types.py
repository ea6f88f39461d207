#!/usr/bin/env python3
"""Counts the types a user of `singletable` can name: the structs, enums, unions, traits and
type aliases of the runtime crate that its documentation reaches, walking rustdoc's JSON from
the crate root through public modules and re-exports. Hidden items and hidden re-exports are
stripped there, and so are not reached (rustdoc's index may still hold an item whose only
public path is a hidden re-export, with no module listing it: that is not counted). Fails when
the count is over the ceiling, so the public surface cannot grow back unnoticed.

usage: .ci/public_types.py [--ceiling N] [--list]
"""
import argparse
import json
import os
import subprocess
import sys

KINDS = {"struct", "enum", "union", "trait", "type_alias"}


def kind_of(item):
    inner = item["inner"]
    return next(iter(inner)) if isinstance(inner, dict) else inner


def reachable(doc):
    """The ids of the items the documentation lists, from the root through modules and
    re-exports (a glob re-export of a module reaches that module's items)."""
    index = doc["index"]
    seen = set()
    queue = [str(doc["root"])]
    while queue:
        item_id = queue.pop()
        if item_id in seen or item_id not in index:
            continue
        seen.add(item_id)
        item = index[item_id]
        kind = kind_of(item)
        if kind == "module":
            queue.extend(str(child) for child in item["inner"]["module"]["items"])
        elif kind == "use":
            target = item["inner"]["use"].get("id")
            if target is not None:
                queue.append(str(target))
    return seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ceiling", type=int, default=None)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    subprocess.run(
        ["cargo", "rustdoc", "-q", "-p", "singletable-runtime", "--all-features", "--",
         "-Z", "unstable-options", "--output-format", "json"],
        check=True, env=env)
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    with open(os.path.join(target, "doc", "singletable_runtime.json")) as file:
        doc = json.load(file)
    names = []
    for item_id in reachable(doc):
        item = doc["index"][item_id]
        if item.get("crate_id") != 0 or kind_of(item) not in KINDS:
            continue
        path = doc["paths"].get(item_id, {}).get("path") or [item.get("name") or "?"]
        names.append("::".join(path))
    names.sort()
    if args.list:
        print("\n".join(names))
    print(f"{len(names)} public types in singletable-runtime")
    if args.ceiling is not None and len(names) > args.ceiling:
        print(f"over the ceiling of {args.ceiling}: make new types pub(crate), or move "
              "derive support into __private")
        sys.exit(1)


if __name__ == "__main__":
    main()
