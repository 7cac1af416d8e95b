#!/bin/bash
# Verilator line and toggle coverage of the emitted Verilog (rtl/mascar_issue_top.v, which
# holds the WRC, WST and scheduler, and rtl/mascar_reexec_queue.v) over the Verilator
# lockstep runs of the test suite: the coverage table's runs (testbench/coverage.rs) and the
# lockstep windows of every built-in under every RTL scheduler (testbench/verilator.rs).
# docs/verification.md has the last result. Not part of CI: it builds a second copy of the
# crate with `MASCAR_VERILATOR_COVERAGE=1` (build.rs adds `--coverage-line
# --coverage-toggle`), in its own target directory so the normal build is untouched.
#
#   tools/verilator-coverage.sh [OUT]
#
# OUT (default target/verilator-coverage): dat/ (one file per Verilated model), merged.dat,
# annotated/ (`verilator_coverage --annotate`: every source line, uncovered points marked
# with %000000), summary.txt (printed too). Target directory: $MASCAR_COVERAGE_TARGET_DIR,
# default target/vlcov. Needs verilator, verilator_coverage and python3.
set -euo pipefail

cd "$(dirname "$0")/.."
OUT="${1:-target/verilator-coverage}"
export CARGO_TARGET_DIR="${MASCAR_COVERAGE_TARGET_DIR:-target/vlcov}"
rm -rf "$OUT"
mkdir -p "$OUT/dat"
OUT="$(cd "$OUT" && pwd)"

MASCAR_VERILATOR_COVERAGE=1 MASCAR_VERILATOR_COVERAGE_DIR="$OUT/dat" \
  cargo test --release --features verilator --test testbench -- \
  every_reachable_corner_is_reached_by_the_verilog_in_lockstep \
  lockstep_against_the_verilog_passes

shopt -s nullglob
dats=("$OUT"/dat/*.dat)
if [ ${#dats[@]} -eq 0 ]; then
  echo "no coverage files in $OUT/dat: was the library built with MASCAR_VERILATOR_COVERAGE=1?" >&2
  exit 1
fi
verilator_coverage --write "$OUT/merged.dat" "${dats[@]}"
verilator_coverage --annotate "$OUT/annotated" --annotate-min 1 "$OUT/merged.dat" > /dev/null

python3 - "$OUT/merged.dat" "${#dats[@]}" <<'EOF' | tee "$OUT/summary.txt"
# Summary of a merged Verilator coverage file: per source file and kind (line, branch,
# toggle), points hit / points; then what is not hit, toggles grouped by signal.
import collections, re, sys

path, models = sys.argv[1], sys.argv[2]
points = {}
for raw in open(path, encoding="latin-1"):
    if not raw.startswith("C '"):
        continue
    key, count = raw[3:].rsplit("' ", 1)
    f = dict(kv.split("\x02", 1) for kv in key.split("\x01") if "\x02" in kv)
    points[key] = (f, int(count))

def short(h):
    """An instance path without the build's wrapper levels (`u` is the block itself)."""
    return re.sub(r"^[^.]*\.[^.]*_vl\.", "", h)

# Only the blocks' own Verilog: the build's `_vl` wrappers just rename the ports.
rows = collections.defaultdict(lambda: [0, 0])
missed = collections.defaultdict(list)
for f, count in points.values():
    source = f.get("f", "?").rsplit("/", 1)[-1]
    if source.endswith("_vl.v"):
        continue
    kind = f.get("page", "?").split("/", 1)[0].removeprefix("v_")
    rows[(source, kind)][0] += count > 0
    rows[(source, kind)][1] += 1
    if count == 0:
        missed[(source, kind)].append(f)

print(f"Verilator coverage of {models} models (merged): points hit / points")
for (source, kind), (hit, total) in sorted(rows.items()):
    print(f"  {source:<24} {kind:<7} {hit:>6} / {total:<6} {100 * hit / total:6.2f} %")
for kind in sorted({k for _, k in rows}):
    hit = sum(v[0] for (s, k), v in rows.items() if k == kind)
    total = sum(v[1] for (s, k), v in rows.items() if k == kind)
    print(f"  {'all':<24} {kind:<7} {hit:>6} / {total:<6} {100 * hit / total:6.2f} %")

for (source, kind), fs in sorted(missed.items()):
    print(f"\nnot hit: {source}, {kind} ({len(fs)} points)")
    if kind == "toggle":
        # One line per signal: its instance path, name without the bit index, bits not toggled.
        by_signal = collections.Counter()
        for f in fs:
            name = re.sub(r"\[\d+\]$", "", f.get("o", "?"))
            # Verilator's name mangling: `__024` is `$`, `__05F` is `_`.
            name = re.sub(r"__0([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), name)
            by_signal[(short(f.get("h", "?")), name)] += 1
        for (h, name), n in sorted(by_signal.items()):
            print(f"  {h}: {name} ({n} bit{'s' * (n > 1)})")
    else:
        # One line per instance: how many points, at which source lines.
        by_instance = collections.defaultdict(list)
        for f in fs:
            by_instance[short(f.get("h", "?"))].append(int(f.get("l", 0)))
        for h, ls in sorted(by_instance.items()):
            n, ls = len(ls), sorted(set(ls))
            more = f" … ({len(ls)} lines)" if len(ls) > 16 else ""
            print(f"  {h}: {n} points, lines {', '.join(map(str, ls[:16]))}{more}")
EOF
echo "annotated sources: $OUT/annotated"
