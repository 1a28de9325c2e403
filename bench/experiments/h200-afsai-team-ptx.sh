#!/usr/bin/env bash
# Issue 13 on NVIDIA OpenCL: the adaptive FSAI's team growth kernel as warps (inline PTX shuffles
# and ballots, `-D PK_NV_PTX`) instead of work-group barriers. GPU tests afsai, fsai and
# opencl_backend (CUDA and NVIDIA OpenCL: every pattern bit for bit against the host), then PCG
# to 1e-6 with aFSAI (eq. 17 and the step rule, f64 and f32 setups, each twice) on the three
# FSAI problems, CUDA and OpenCL, and a table of the f32 setup's gain. From the repository root
# on the device, after the release build with --features "cuda opencl cli" packed into
# .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-team-ptx.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export PK="bash .device/run pipekrylov"
for t in afsai fsai opencl_backend; do
  timeout 240 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
  { echo "== $t"; cat "$OUT/test.tmp"; } >> "$OUT/test-afsai-team-ptx-h200.log"
  grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | sed "s/^/$t: /"
done
rm -f "$OUT/test.tmp"
csv="$OUT/afsai-team-ptx-h200.csv"
PRECS="afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32 afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32" \
  timeout 400 bash scripts/fsai-bench.sh "$csv" "cuda opencl" "${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}" > /dev/null
echo "bench: status $?"
python3 - "$csv" <<'PY'
import csv, sys
from statistics import mean
runs = {}
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["problem"], r["backend"], r["stop"], r.get("growth_kernel", ""))
    runs.setdefault(key, {}).setdefault(r["setup_precision"], []).append(
        (float(r["setup_s"]), float(r["growth_s"]), int(r["iterations"]), float(r["total_s"])))
print(f"{'problem':12} {'backend':7} {'rule':5} {'growth kernel':14} {'setup f64':>9} {'setup f32':>9} {'gain':>6} {'growth f64/f32':>15} {'its':>9}")
for k, v in sorted(runs.items()):
    a, b = v.get("solve", []), v.get("f32", [])
    if a and b:
        sa, sb = mean(x[0] for x in a), mean(x[0] for x in b)
        ga, gb = mean(x[1] for x in a), mean(x[1] for x in b)
        print(f"{k[0]:12} {k[1]:7} {k[2]:5} {k[3]:14} {sa:9.3f} {sb:9.3f} {1 - sb / sa:6.1%} {ga:7.3f}/{gb:.3f} {a[0][2]:>4}/{b[0][2]}")
PY
