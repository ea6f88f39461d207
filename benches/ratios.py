#!/usr/bin/env python3
"""Ratios generated/hand-written from the last `cargo bench --bench operations` run.

Reads criterion's median estimates under target/criterion and prints a Markdown table:
the time of each side, the ratio, and for the operations (stopped before serialization)
the ratio of construction alone, each side less its own SDK floor.

Usage: python3 benches/ratios.py [target/criterion]
"""

import json
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
GROUPS = [
    ("put_item_encode", "item of a 10-field entity with 2 GSIs (`item::encode`)"),
    ("put", "put of that entity (`db.put(&e).send()`)"),
    ("status_update", "status update that rewrites the GSI1 key"),
    ("query", "query: `begins_with` on GSI1 + filter"),
    ("decode_page_100", "decode a page of 100 items (`item::decode`)"),
]


def median_ns(group, bench):
    path = ROOT / group / bench / "new" / "estimates.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"]


def us(ns):
    return f"{ns / 1000:.2f} µs"


print("| operation | singletable | hand-written | ratio | construction only (less SDK floor) |")
print("| --- | ---: | ---: | ---: | ---: |")
for group, label in GROUPS:
    generated = median_ns(group, "singletable")
    hand = median_ns(group, "hand_written")
    if generated is None or hand is None:
        continue
    floor = median_ns(group, "sdk_floor")
    floor_generated = median_ns(group, "sdk_floor_singletable_error")
    construction = "—"
    if floor is not None and floor_generated is not None:
        built, written = generated - floor_generated, hand - floor
        construction = f"{us(built)} / {us(written)} = {built / written:.2f}"
    print(f"| {label} | {us(generated)} | {us(hand)} | {generated / hand:.2f} | {construction} |")

floors = [
    (group, median_ns(group, "sdk_floor"), median_ns(group, "sdk_floor_singletable_error"))
    for group, _ in GROUPS
]
floors = [f"{g}: {us(a)} / {us(b)}" for g, a, b in floors if a is not None and b is not None]
if floors:
    print()
    print("SDK floor (BoxError / singletable::Error): " + "; ".join(floors))

pieces = sorted(p.name for p in (ROOT / "breakdown").glob("*") if (p / "new").exists())
if pieces:
    print()
    print("Breakdown: " + "; ".join(f"{p} {us(median_ns('breakdown', p))}" for p in pieces))
