#!/usr/bin/env python3
"""Paired ratios generated/hand-written over several random code layouts, optionally beside
an earlier revision's, measured in the same run.

Where the linker places functions moves these operations by several percent either way (the
SDK's per-request code is far larger than the instruction cache), so one binary's ratio can
flatter or wrong either side. This builds `benches/operations.rs` again for each seed's
random function order (LLD's `--shuffle-sections`; LLD is Rust's default linker on x86-64
Linux from Rust 1.90, and with another linker the link fails; only the bench crate itself is
compiled again, about ten seconds a seed), runs its interleaved `paired` measurement `runs`
times, and prints each operation's median, lowest and highest ratio over all of them.

The ratios also move from machine to machine (the same build measured 1.02 on one and 1.16
on another), so "no worse than before" is only a fair question on one machine, in one run.
`--against REV` answers it: it checks revision REV out into a git worktree under
`target/layouts-baseline/` and builds it there with a target directory of its own (two
checkouts of the same crates must not share one: Cargo takes one's artifacts for the
other's), then measures both builds at every seed, alternating which goes first, and prints
both tables and the differences of their medians. The baseline's first build compiles its
dependencies once (minutes); later runs reuse them.

Usage: python3 benches/layouts.py [seeds, default 8] [runs per layout, default 1]
                                  [--against REV]
"""

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def link(seed, tree=ROOT, target_dir=None):
    """Links the bench of `tree` with function order `seed`; returns the executable's path."""
    command = [
        "cargo", "rustc", "--quiet", "--profile", "bench", "--bench", "operations",
        "--message-format=json", "--",
        "-C", f"link-arg=-Wl,--shuffle-sections=*={seed}",
    ]
    environment = dict(os.environ)
    if target_dir is not None:
        environment["CARGO_TARGET_DIR"] = str(target_dir)
    built = subprocess.run(command, cwd=tree, env=environment, capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(
            f"building {tree} with a shuffled function order failed (the link needs LLD, "
            f"Rust's default linker on x86-64 Linux from Rust 1.90):\n{built.stderr}"
        )
    for line in built.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable"):
            return message["executable"]
    sys.exit("cargo reported no bench executable")


def ratios(executable):
    """The `generated / hand-written` ratio of each operation in one paired run."""
    output = subprocess.run(
        [executable, "--bench", "paired"], check=True, capture_output=True, text=True
    ).stdout
    found = {}
    for line in output.splitlines():
        words = line.split()
        if "generated / hand-written" in line and len(words) > 4:
            found[words[0]] = float(words[4])
    return found


def baseline(revision):
    """A worktree of `revision` and the target directory its builds use."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{revision}^{{commit}}"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.strip()
    home = ROOT / "target" / "layouts-baseline"
    tree = home / commit[:12]
    if not tree.exists():
        # A worktree deleted with target/ is still registered until pruned.
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=True)
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), commit],
            cwd=ROOT, check=True, capture_output=True,
        )
    return tree, home / "target"


def table(title, by_operation, count):
    print(f"\n{title}")
    print(f"| operation | median of {count} | lowest | highest |")
    print("| --- | ---: | ---: | ---: |")
    for operation, values in by_operation.items():
        print(
            f"| {operation} | {statistics.median(values):.2f} "
            f"| {min(values):.2f} | {max(values):.2f} |"
        )


def main():
    arguments = sys.argv[1:]
    against = None
    if "--against" in arguments:
        at = arguments.index("--against")
        if at + 1 >= len(arguments):
            sys.exit("--against needs a revision")
        against = arguments[at + 1]
        del arguments[at:at + 2]
    seeds = int(arguments[0]) if len(arguments) > 0 else 8
    runs = int(arguments[1]) if len(arguments) > 1 else 1
    builds = {"this tree": (ROOT, None)}
    if against is not None:
        builds[against] = baseline(against)
    measured = {name: {} for name in builds}
    for seed in range(1, seeds + 1):
        executables = {name: link(seed, *where) for name, where in builds.items()}
        for run in range(runs):
            # Alternate which build goes first, so that neither always runs on a warmer machine.
            order = list(builds) if (seed + run) % 2 == 0 else list(reversed(builds))
            for name in order:
                found = ratios(executables[name])
                print(
                    f"{name}, layout {seed}: "
                    + ", ".join(f"{op} {r:.2f}" for op, r in found.items()),
                    flush=True,
                )
                for operation, ratio in found.items():
                    measured[name].setdefault(operation, []).append(ratio)
    for name, by_operation in measured.items():
        table(f"{name} ({seeds} layouts)", by_operation, seeds * runs)
    if against is not None:
        print(f"\nthis tree less {against}, difference of the medians:")
        for operation, values in measured["this tree"].items():
            before = measured[against].get(operation)
            if before:
                change = statistics.median(values) - statistics.median(before)
                print(f"  {operation}: {change:+.2f}")


if __name__ == "__main__":
    main()
