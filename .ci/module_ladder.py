#!/usr/bin/env python3
"""Fails when a top-level module of the runtime imports one on its own rung or above it.

The ladder is read from ARCHITECTURE.md (the fenced block tagged `ladder`, one rung per line,
the bottom rung first), so the map and the check cannot disagree. An import is any path in a
file (comments and `#[cfg(test)] mod tests` aside) that starts with `crate::` or, from a
top-level module's own file, `super::`; a name the crate root re-exports (`crate::Db`) counts as
an import of the module it comes from. Every top-level module must stand on a rung.

Usage: module_ladder.py ARCHITECTURE.md SRC_DIR   (exits 1 and prints each import up the ladder)
"""
import os
import re
import sys


def ladder(architecture):
    with open(architecture) as text:
        block = re.search(r"```ladder\n(.*?)```", text.read(), re.S)
    if not block:
        sys.exit(f"{architecture}: no ```ladder block")
    rungs = {}
    for height, line in enumerate(block.group(1).strip().split("\n")):
        for module in line.split("#")[0].split():
            rungs[module] = height
    return rungs


def source(path):
    with open(path) as file:
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", file.read())[0]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] for line in text.split("\n"))


def root_exports(root):
    """`pub use module::..::{A, B}` at the crate root: the module each name comes from."""
    exports = {}
    text = source(os.path.join(root, "lib.rs"))
    for module, names in re.findall(r"pub use ([a-z_][a-z0-9_]*)(?:::[a-z_][a-z0-9_]*)*::\{([^}]*)\}", text):
        for name in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\b", names):
            exports[name] = module
    for module, name in re.findall(r"pub use ([a-z_][a-z0-9_]*)(?:::[a-z_][a-z0-9_]*)*::([A-Z][A-Za-z0-9_]*);", text):
        exports[name] = module
    return exports


def paths(text):
    """Every path after `crate::`, with `crate::{a::b, C}` groups spread out."""
    found = []
    for group in re.findall(r"crate::\{([^}]*)\}", text):
        found += [part.strip() for part in group.split(",") if part.strip()]
    found += re.findall(r"crate::([A-Za-z_][A-Za-z0-9_]*)", text)
    return found


def main(architecture, root):
    rungs = ladder(architecture)
    exports = root_exports(root)
    tops = sorted(
        name[:-3] if name.endswith(".rs") else name
        for name in os.listdir(root)
        if name not in ("lib.rs",) and (name.endswith(".rs") or os.path.isdir(os.path.join(root, name)))
    )
    failed = False
    for top in tops:
        if top not in rungs:
            print(f"{root}: module `{top}` stands on no rung of the ladder in {architecture}")
            failed = True
    for top in tops:
        files = []
        if os.path.isdir(os.path.join(root, top)):
            for directory, _, names in os.walk(os.path.join(root, top)):
                files += [os.path.join(directory, n) for n in names if n.endswith(".rs")]
        else:
            files.append(os.path.join(root, top + ".rs"))
        for path in sorted(files):
            text = source(path)
            imported = paths(text)
            if path == os.path.join(root, top + ".rs") or path == os.path.join(root, top, "mod.rs"):
                imported += re.findall(r"\bsuper::([A-Za-z_][A-Za-z0-9_]*)", text)
            for first in sorted(set(p.split("::")[0] for p in imported)):
                target = first if first in rungs else exports.get(first)
                if target is None or target == top or top not in rungs:
                    continue
                if rungs[target] >= rungs[top]:
                    where = "its own rung" if rungs[target] == rungs[top] else "above it"
                    print(f"{path}: `{top}` imports `{target}` (`crate::{first}`), on {where}")
                    failed = True
    if not failed:
        print(f"{root}: {len(tops)} top-level modules, every import goes down the ladder")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
