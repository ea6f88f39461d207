#!/usr/bin/env bash
# What singletable's derives cost to compile: the 30 entities of src/lib.rs built with serde
# derives only, and with serde plus singletable derives (`--features singletable`).
#
# Measured, for each variant:
#   - clean build: `cargo build` (dev profile) from an empty target directory, dependencies
#     included (once; the AWS SDK dominates the singletable variant);
#   - entity crate build: the compile time of this crate alone, its dependencies already
#     built, for `cargo check` and `cargo build` (dev). Each run touches src/lib.rs and
#     rebuilds with CARGO_INCREMENTAL=0, so nothing is reused; the time is rustc's time for
#     this crate as cargo's --timings report records it (cargo's own start-up excluded).
#     The two variants alternate run by run, so load from other processes on a shared
#     machine falls on both alike; reported are the minimum and the median of RUNS runs
#     and the median of the per-run ratios;
#   - the incremental case: a crate of 100 entities (hundred/, written by hundred.py from the
#     30), checked once, then re-checked after each edit of one entity's field, incremental
#     compilation on (cargo's default for dev), the variants alternating as above;
#   - generated code size, by stable means (macro expansion output needs nightly): the
#     lines of MIR (`--emit=mir`: every function body in the crate, generic ones included,
#     after expansion), and the size of the .rmeta (`cargo check`) and .rlib (`cargo build`).
#
# Usage: bench-compile/run.sh                (RUNS=7 by default; results in bench-compile/results/)
#        SKIP_CLEAN=1 bench-compile/run.sh   (skips the clean builds, which take minutes)
set -euo pipefail
cd "$(dirname "$0")"
RUNS=${RUNS:-7}
CRATE=singletable-bench-compile
VARIANTS=(serde singletable)
OUT=results
mkdir -p "$OUT"
rm -f "$OUT"/*.tsv
# The main workspace's lock file: the same dependency versions as the library's own build.
[ -f Cargo.lock ] || cp ../Cargo.lock Cargo.lock

flags_of() {
    case "$1" in
        serde) echo "" ;;
        singletable) echo "--features singletable" ;;
    esac
}

now() { date +%s.%N; }

# rustc's duration for crate $1 (default: this one) in the last --timings report.
unit_seconds() {
    python3 - "${1:-$CRATE}" <<'EOF'
import json, re, sys
html = open("target/cargo-timings/cargo-timing.html").read()
match = re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S)
units = [u for u in json.loads(match.group(1)) if u["name"] == sys.argv[1]]
print(f"{units[-1]['duration']:.3f}")
EOF
}

# The artifact files cargo reports for this crate (`--message-format=json`).
artifacts() {
    python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message["target"]["name"] == sys.argv[1]:
        print("\n".join(message["filenames"]))
' "${CRATE//-/_}"
}

if [ -z "${SKIP_CLEAN:-}" ]; then
    for variant in "${VARIANTS[@]}"; do
        cargo clean -q
        start=$(now)
        # shellcheck disable=SC2046
        cargo build -q $(flags_of "$variant")
        end=$(now)
        seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
        printf '%s\t%s\n' "$variant" "$seconds" >>"$OUT/clean_build.tsv"
        echo "clean build, $variant: $seconds s" >&2
    done
fi

for command in check build; do
    # Dependencies first, so the runs below compile this crate only.
    for variant in "${VARIANTS[@]}"; do
        # shellcheck disable=SC2046
        cargo "$command" -q $(flags_of "$variant")
    done
    for run in $(seq "$RUNS"); do
        for variant in "${VARIANTS[@]}"; do
            touch src/lib.rs
            # shellcheck disable=SC2046
            CARGO_INCREMENTAL=0 cargo "$command" -q $(flags_of "$variant") --timings 2>/dev/null
            printf '%s\t%s\t%s\t%s\n' "$command" "$run" "$variant" "$(unit_seconds)" >>"$OUT/crate_build.tsv"
        done
    done
    echo "$command: $(grep -c "^$command" "$OUT/crate_build.tsv") builds timed" >&2
done

# The incremental case, in hundred/ with this crate's target directory (the dependencies are
# shared; cargo keeps each crate's and each feature set's incremental state apart).
HUNDRED=singletable-bench-compile-hundred
python3 hundred.py
[ -f hundred/Cargo.lock ] || cp Cargo.lock hundred/Cargo.lock
for variant in "${VARIANTS[@]}"; do
    # shellcheck disable=SC2046
    cargo check -q --manifest-path hundred/Cargo.toml --target-dir target $(flags_of "$variant")
done
for run in $(seq "$RUNS"); do
    python3 hundred.py --edit "$run"
    for variant in "${VARIANTS[@]}"; do
        # shellcheck disable=SC2046
        CARGO_INCREMENTAL=1 cargo check -q --manifest-path hundred/Cargo.toml --target-dir target \
            $(flags_of "$variant") --timings 2>/dev/null
        printf '%s\t%s\t%s\t%s\n' "recheck" "$run" "$variant" "$(unit_seconds "$HUNDRED")" >>"$OUT/crate_build.tsv"
    done
done
echo "recheck: $(grep -c "^recheck" "$OUT/crate_build.tsv") checks timed" >&2

for variant in "${VARIANTS[@]}"; do
    flags=$(flags_of "$variant")
    # shellcheck disable=SC2086
    rmeta=$(touch src/lib.rs && cargo check -q $flags --message-format=json | artifacts | grep '\.rmeta$')
    # shellcheck disable=SC2086
    rlib=$(touch src/lib.rs && cargo build -q $flags --message-format=json | artifacts | grep '\.rlib$')
    rm -f target/debug/deps/*.mir
    # shellcheck disable=SC2086
    cargo rustc -q --lib $flags -- --emit=mir
    mir_lines=$(cat target/debug/deps/*.mir | wc -l)
    printf '%s\t%s\t%s\t%s\n' "$variant" "$mir_lines" "$(stat -c %s "$rmeta")" "$(stat -c %s "$rlib")" >>"$OUT/size.tsv"
done

python3 - "$OUT" <<'EOF' | tee "$OUT/summary.md"
import statistics, sys
out = sys.argv[1]
def rows(name):
    try:
        return [line.rstrip("\n").split("\t") for line in open(f"{out}/{name}.tsv")]
    except FileNotFoundError:
        return []
print("| measure | serde only | serde + singletable | ratio |")
print("| --- | ---: | ---: | ---: |")
clean = {r[0]: float(r[1]) for r in rows("clean_build")}
if clean:
    print(f"| clean `cargo build`, dependencies included | {clean['serde']:.1f} s | "
          f"{clean['singletable']:.1f} s | {clean['singletable'] / clean['serde']:.1f} |")
builds = rows("crate_build")
labels = {
    "check": "entity crate only, `cargo check`",
    "build": "entity crate only, `cargo build`",
    "recheck": "100 entities, `cargo check` after editing one field (incremental)",
}
for command in ["check", "build", "recheck"]:
    runs = {}
    for c, run, variant, seconds in builds:
        if c == command:
            runs.setdefault(run, {})[variant] = float(seconds)
    serde = [r["serde"] for r in runs.values()]
    ours = [r["singletable"] for r in runs.values()]
    ratio = statistics.median(r["singletable"] / r["serde"] for r in runs.values())
    if not runs:
        continue
    print(f"| {labels[command]}, min (median) of {len(runs)} | "
          f"{min(serde):.2f} s ({statistics.median(serde):.2f} s) | "
          f"{min(ours):.2f} s ({statistics.median(ours):.2f} s) | {ratio:.2f} |")
size = {r[0]: [int(x) for x in r[1:]] for r in rows("size")}
for i, label in enumerate(["MIR, lines", ".rmeta, bytes", ".rlib, bytes"]):
    a, b = size["serde"][i], size["singletable"][i]
    print(f"| {label} | {a:,} | {b:,} | {b / a:.2f} |")
EOF
