#!/usr/bin/env python3
"""Where the derive's compile cost goes, part by part, in instructions rather than seconds.

Expands the 100-entity crate (hundred/, written by run.sh or hundred.py) with and without the
singletable derives (`-Zunpretty=expanded`, through RUSTC_BOOTSTRAP), makes the expanded
source compile on its own (helper attributes and the derives' unstable internals), and then,
for each part of what the derive emits, a copy with that part cut out. rustc checks each copy
(`--emit=metadata`, one thread) under callgrind, which counts the instructions it executes:
the same count on a loaded machine as on a quiet one, so parts a few percent apart can be told
apart, which timings on two shared cores cannot. What a part costs is the full expansion's
count less the count without it. Macro expansion itself (the derives' own run) is not in
these counts: the copies are already expanded.

A cut copy only has to type-check, not to work: nothing in the crate calls what is cut.

Usage: bench-compile/parts.py   (about two minutes a copy; needs valgrind and hundred/src/lib.rs)
"""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRATE = HERE / "hundred"
FEATURES = (
    "#![feature(coverage_attribute, trivial_clone, structural_match, derive_eq_internals, "
    "fmt_helpers_for_derive, core_intrinsics)]\n#![allow(warnings)]\n"
)

# Each part: a pattern for the first line of each item of it.
PARTS = {
    "typed paths (`Ticket::STATUS`)": r"^\s*pub const [A-Z_0-9]+:\s*__singletable::Field<",
    "query and key constructors (`Ticket::gsi1(..)`, `Ticket::key(..)`)": r"^\s*pub fn (?:partition|gsi\d+|lsi\d+|key)(?=\()",
    "sort key parts (`SortKeyPart` impls)": r"^\s*impl __singletable::SortKeyPart<",
    "update state (`TouchInput`, `UpdateComplete` impls)": r"^\s*impl<[^{]*?__singletable::state::(?:TouchInput|UpdateComplete)<",
}


def expand(features):
    """The crate's expanded source, and the rustc arguments that find its dependencies."""
    command = ["cargo", "rustc", "--lib", "-v", *features, "--", "-Zunpretty=expanded"]
    done = subprocess.run(
        command, cwd=CRATE, capture_output=True, text=True,
        env=dict(os.environ, RUSTC_BOOTSTRAP="1"), check=True,
    )
    # The crate's own command only: when a dependency was rebuilt first, cargo prints its
    # command too.
    command_line = next(line for line in done.stderr.splitlines()
                        if "--crate-name singletable_bench_compile_hundred" in line)
    externs = re.findall(r"--extern (\S+)", command_line)
    deps = re.findall(r"-L (dependency=\S+)", command_line)
    arguments = [a for e in externs for a in ("--extern", e)] + [
        a for d in deps for a in ("-L", d)
    ]
    return done.stdout, arguments


def without_attribute(source, name):
    """`source` with every `#[name(..)]` attribute removed (inert helpers after expansion)."""
    out, start = [], 0
    while (found := source.find(f"#[{name}(", start)) >= 0:
        out.append(source[start:found])
        start = closing(source, found + 1)
    out.append(source[start:])
    return "".join(out)


def closing(source, opening):
    """The index after the bracket that closes the one at `opening`."""
    depth = 0
    for index in range(opening, len(source)):
        if source[index] in "([{":
            depth += 1
        elif source[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
    raise ValueError("unbalanced source")


def cut(source, pattern):
    """`source` without the items whose first line matches `pattern`: each up to its `;` or
    its closing brace. A cut function leaves a trivial one in its place, so that attributes
    before it still have an item."""
    out, start, count = [], 0, 0
    expression = re.compile(pattern, re.M)
    while match := expression.search(source, start):
        out.append(source[start:match.start()])
        index, depth = match.end(), 0
        while True:
            char = source[index]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0 and char == "}":
                    index += 1
                    break
            elif char == ";" and depth == 0:
                break
            index += 1
        index += source[index:index + 1] == ";"
        if " fn " in match.group(0) or match.group(0).lstrip().startswith("pub fn"):
            out.append(f" fn __cut_{count}() {{}}")
        count += 1
        start = index
    out.append(source[start:])
    return "".join(out), count


def instructions(path, arguments):
    """Instructions rustc executes checking the crate at `path`."""
    rustc = subprocess.run(["rustup", "which", "rustc"], capture_output=True, text=True,
                           check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", rustc,
             "--crate-name", "parts", "--edition=2021", str(path), "--crate-type", "lib",
             "--emit=metadata", "-Z", "threads=1", "--out-dir", out, *arguments],
            capture_output=True, text=True, env=dict(os.environ, RUSTC_BOOTSTRAP="1"),
        )
    if done.returncode != 0:
        sys.exit(f"{path} does not compile:\n{done.stderr[:3000]}")
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def main():
    if not (CRATE / "src" / "lib.rs").exists():
        subprocess.run([sys.executable, str(HERE / "hundred.py")], check=True)
    work = Path(tempfile.mkdtemp(prefix="parts-"))
    copies = {}
    arguments = None
    for label, features in (("serde only", []), ("serde + singletable", ["--features", "singletable"])):
        source, found = expand(features)
        arguments = found if features else arguments
        for attribute in ("dynamo", "serde"):
            source = without_attribute(source, attribute)
        copies[label] = FEATURES + source
    full = copies["serde + singletable"]
    for label, pattern in PARTS.items():
        source, count = cut(full, pattern)
        copies[f"without {label}: {count} items"] = source
    counts = {}
    for label, source in copies.items():
        path = work / (re.sub(r"\W+", "_", label)[:40] + ".rs")
        path.write_text(source)
        counts[label] = instructions(path, arguments)
        print(f"{label}: {counts[label]:,} instructions", file=sys.stderr)
    serde, whole = counts["serde only"], counts["serde + singletable"]
    added = whole - serde
    print("| expansion checked | instructions | the derive's share |")
    print("| --- | ---: | ---: |")
    print(f"| serde only | {serde / 1e9:.2f} G | |")
    print(f"| serde + singletable | {whole / 1e9:.2f} G | {added / 1e9:.2f} G (100%) |")
    for label, count in counts.items():
        if label.startswith("without"):
            part = whole - count
            print(f"| {label} | {count / 1e9:.2f} G | {part / 1e9:.2f} G ({100 * part / added:.0f}%) |")


if __name__ == "__main__":
    main()
