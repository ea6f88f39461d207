#!/usr/bin/env python3
"""Paired ratios generated/hand-written over several random code layouts.

Where the linker places functions moves these operations by several percent either way (the
SDK's per-request code is far larger than the instruction cache), so one binary's ratio can
flatter or wrong either side. This builds `benches/operations.rs` again for each seed's
random function order (LLD's `--shuffle-sections`; LLD is Rust's default linker on x86-64
Linux from Rust 1.90, and with another linker the link fails; only the bench crate itself is
compiled again, about ten seconds a seed), runs its interleaved `paired` measurement `runs`
times, and prints each operation's median, lowest and highest ratio over all of them.

Usage: python3 benches/layouts.py [seeds, default 8] [runs per layout, default 1]
"""

import json
import statistics
import subprocess
import sys


def link(seed):
    """Links the bench with function order `seed`; returns the executable's path."""
    command = [
        "cargo", "rustc", "--quiet", "--profile", "bench", "--bench", "operations",
        "--message-format=json", "--",
        "-C", f"link-arg=-Wl,--shuffle-sections=*={seed}",
    ]
    built = subprocess.run(command, capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(
            "linking with a shuffled function order failed (it needs LLD, Rust's default "
            f"linker on x86-64 Linux from Rust 1.90):\n{built.stderr}"
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


def main():
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    by_operation = {}
    for seed in range(1, seeds + 1):
        executable = link(seed)
        for _ in range(runs):
            measured = ratios(executable)
            print(f"layout {seed}: " + ", ".join(f"{op} {r:.2f}" for op, r in measured.items()))
            for operation, ratio in measured.items():
                by_operation.setdefault(operation, []).append(ratio)
    print()
    print(f"| operation | median of {seeds * runs} ({seeds} layouts) | lowest | highest |")
    print("| --- | ---: | ---: | ---: |")
    for operation, values in by_operation.items():
        print(
            f"| {operation} | {statistics.median(values):.2f} "
            f"| {min(values):.2f} | {max(values):.2f} |"
        )


if __name__ == "__main__":
    main()
