#!/usr/bin/env bash
# Issue 13: the adaptive FSAI's growth kernel on matrices with short rows (aniso2d 2.7M, 5 per
# row; jump3d 1M, 7 per row), where the automatic choice is the one-work-item-per-row kernel:
# PCG to 1e-6 with aFSAI (eq. 17, f64 and f32 setups) with PIPEKRYLOV_AFSAI_GROW_KERNEL=row and
# team, CUDA and OpenCL, twice each (afsai-team-short-rows-h200.csv), and the f32 setup's gain.
# From the repository root on the device after a release build with --features "cuda opencl
# cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-team-short-rows.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export PK="bash .device/run pipekrylov"
csv="$OUT/afsai-team-short-rows-h200.csv"
for round in ${ROUNDS:-1 2}; do
  for kernel in row team; do
    PIPEKRYLOV_AFSAI_GROW_KERNEL=$kernel PRECS="afsai afsai:30:1:1e-3:ratio:f32" timeout 250 bash scripts/fsai-bench.sh \
      "$OUT/b.csv" "cuda opencl" "${PROBLEMS:-aniso2d:2700000 jump3d:1000000}" > /dev/null
    echo "round $round $kernel: status $?"
    if [ -f "$csv" ]; then tail -n +2 "$OUT/b.csv" >> "$csv"; else cp "$OUT/b.csv" "$csv"; fi
    rm -f "$OUT/b.csv"
  done
done
python3 - "$csv" <<'PY'
import csv, sys
from statistics import mean
runs = {}
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["problem"], r["backend"], r.get("growth_kernel", ""))
    runs.setdefault(key, {}).setdefault(r["setup_precision"], []).append(
        (float(r["setup_s"]), float(r["growth_s"]), int(r["iterations"])))
print(f"{'problem':10} {'backend':7} {'growth kernel':16} {'setup f64':>9} {'setup f32':>9} {'gain':>6} {'growth f64/f32':>15} {'its':>9}")
for k, v in sorted(runs.items()):
    a, b = v.get("solve", []), v.get("f32", [])
    if a and b:
        sa, sb = mean(x[0] for x in a), mean(x[0] for x in b)
        ga, gb = mean(x[1] for x in a), mean(x[1] for x in b)
        print(f"{k[0]:10} {k[1]:7} {k[2]:16} {sa:9.3f} {sb:9.3f} {1 - sb / sa:6.1%} {ga:7.3f}/{gb:.3f} {a[0][2]:>4}/{b[0][2]}")
PY
