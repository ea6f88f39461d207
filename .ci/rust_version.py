#!/usr/bin/env python3
"""The workspace's `rust-version` must be the real minimum of the published crates: at least
the `rust-version` of every locked dependency they build, with every feature on (normal and
build dependencies; dev-dependencies build only the project's own tests). Fails naming the
dependency that needs more, and prints the minimum either way."""
import json
import subprocess
import sys

PUBLISHED = {"singletable", "singletable-macros", "singletable-runtime", "singletable-cli"}


def version_key(text):
    return tuple(int(part) for part in text.split("."))


metadata = json.loads(
    subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--all-features"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
)
packages = {package["id"]: package for package in metadata["packages"]}
nodes = {node["id"]: node for node in metadata["resolve"]["nodes"]}
declared = {
    packages[member]["name"]: packages[member].get("rust_version")
    for member in metadata["workspace_members"]
}
roots = [member for member in metadata["workspace_members"] if packages[member]["name"] in PUBLISHED]


def reachable(root):
    """Every package `root` builds, following normal and build edges only, with the crate
    that brings each in."""
    seen, stack = {}, [(root, packages[root]["name"])]
    while stack:
        current, via = stack.pop()
        if current in seen:
            continue
        seen[current] = via
        for dep in nodes[current]["deps"]:
            kinds = {kind["kind"] for kind in dep["dep_kinds"]}
            if kinds & {None, "build"}:
                stack.append((dep["pkg"], packages[current]["name"]))
    return seen


failed = False
for root in sorted(roots, key=lambda root: packages[root]["name"]):
    name = packages[root]["name"]
    minimum, needs = "1.0", "(no dependency states one)"
    for package_id, via in reachable(root).items():
        package = packages[package_id]
        wanted = package.get("rust_version")
        if package_id != root and wanted and version_key(wanted) > version_key(minimum):
            minimum, needs = wanted, f"{package['name']} {package['version']} (through {via})"
    stated = declared.get(name)
    print(f"{name}: states {stated}; its dependencies need {minimum}: {needs}")
    if stated is None or version_key(stated) < version_key(minimum):
        print(f"  {name}'s rust-version is below what it builds")
        failed = True
sys.exit(1 if failed else 0)
