#!/usr/bin/env python3
"""Fails when an import circle spans more than two files of a crate.

An edge from file A to file B is a `crate::` or `super::` path in A that names B (comments and
`#[cfg(test)] mod tests` aside), a `use super::*` in A where B is its parent, or a parent A's
`use child::..` of its child B. A circle is a strongly connected component of those edges.

Usage: import_circles.py SRC_DIR...   (exits 1 and prints the circles when one is too large)
"""
import os
import re
import sys

LIMIT = 2


def modules(root):
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(directory, name)
                module = os.path.relpath(path, root)[:-3].replace(os.sep, "::")
                module = re.sub(r"(::)?(mod|lib)$", "", module)
                with open(path) as source:
                    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", source.read())[0]
                lines = [line for line in text.split("\n") if not line.strip().startswith("//")]
                found[module] = lines
    return found


def edges_of(found):
    names = set(found)

    def resolve(path):
        parts = path.strip(":").split("::")
        for length in range(len(parts), 0, -1):
            candidate = "::".join(parts[:length])
            if candidate in names:
                return candidate
        return None

    edges = {module: set() for module in found}
    for module, lines in found.items():
        parent = "::".join(module.split("::")[:-1]) if module else None
        # `use super::..` inside an inline module refers to that module, not to the file's parent.
        top = [line for line in lines if not re.match(r"^\s+use super::", line)]
        text = "\n".join(top)
        for path in re.findall(r"crate::([a-z_][a-z0-9_:]*)", text):
            target = resolve(path)
            if target and target != module and not target.startswith(module + "::"):
                edges[module].add(target)
        if parent is not None:
            for path in re.findall(r"\bsuper::(\*|[a-z_][a-z0-9_:]*)", text):
                if path == "*":
                    if parent:
                        edges[module].add(parent)
                    continue
                target = resolve((parent + "::" if parent else "") + path)
                if target and target != module:
                    edges[module].add(target)
        for child in re.findall(r"^(?:pub(?:\([a-z]+\))? )?use ([a-z_][a-z0-9_]*)::", text, re.M):
            target = resolve((module + "::" if module else "") + child)
            if target and target != module and target.startswith(module + "::" if module else ""):
                edges[module].add(target)
    return edges


def circles(edges):
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            found.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return found


failed = False
for root in sys.argv[1:]:
    edges = edges_of(modules(root))
    components = circles(edges)
    largest = max(len(component) for component in components)
    print(f"{root}: largest import circle {largest} file(s)")
    for component in components:
        if len(component) > LIMIT:
            failed = True
            print(f"  {len(component)} files: {', '.join(m or '(root)' for m in component)}")
sys.exit(1 if failed else 0)
