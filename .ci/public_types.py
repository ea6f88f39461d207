#!/usr/bin/env python3
"""Counts the types a user of `singletable` can name: the public, documented (not
`#[doc(hidden)]`) structs, enums, unions, traits and type aliases of the runtime crate, as
rustdoc's JSON output lists them (private modules and hidden items are stripped there, so
what is left is exactly what users reach). Fails when the count is over the ceiling, so the
public surface cannot grow back unnoticed.

usage: .ci/public_types.py [--ceiling N] [--list]
"""
import argparse
import json
import os
import subprocess
import sys

KINDS = {"struct", "enum", "union", "trait", "type_alias"}


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
    for item_id, item in doc["index"].items():
        if item.get("crate_id") != 0 or item.get("visibility") != "public":
            continue
        kind = next(iter(item["inner"])) if isinstance(item["inner"], dict) else item["inner"]
        if kind not in KINDS:
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
