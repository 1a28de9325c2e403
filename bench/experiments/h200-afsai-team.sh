#!/usr/bin/env bash
# The adaptive FSAI growth by a 32-wide team per row (afsai_grow_team) against one work-item
# per row (afsai_grow), issue 13: GPU tests (afsai on CUDA and NVIDIA OpenCL), then PCG to 1e-6
# (b = A 1) with aFSAI (eq. 17 and the step rule, f64 and f32 setups) grown by each kernel
# (PIPEKRYLOV_AFSAI_GROW_KERNEL), Jacobi-PCG beside, on the three FSAI problems, CUDA and
# OpenCL. From the repository root on the device, after the release build with
# --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-team.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
for t in ${TESTS-afsai}; do
  timeout 200 bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
  grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | sed "s/^/$t: /"
done
problems="${PROBLEMS:-aniso2d:2700000 jump3d:1000000 elasticity3d:300000}"
afsai="afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32"
csv_row="$OUT/afsai-team-h200-row.csv"
csv_team="$OUT/afsai-team-h200-team.csv"
PIPEKRYLOV_AFSAI_GROW_KERNEL=row PRECS="$afsai" timeout "${BENCH_TIMEOUT:-240}" \
  bash scripts/fsai-bench.sh "$csv_row" "${BACKENDS:-cuda opencl}" "$problems" > /dev/null
echo "bench row: status $?"
PRECS="jacobi $afsai $afsai" timeout "${BENCH_TIMEOUT:-300}" \
  bash scripts/fsai-bench.sh "$csv_team" "${BACKENDS:-cuda opencl}" "$problems" > /dev/null
echo "bench team: status $?"
python3 - "$csv_row" "$csv_team" <<'PY'
import csv, sys
from collections import defaultdict
rows = defaultdict(list)
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        rows[(r["problem"], r["backend"], r["precond"], r["stop"], r["eps"], r["setup_precision"], r["growth_kernel"])].append(r)
print(f"{'problem':12} {'be':6} {'precond':6} {'rule':5} {'eps':6} {'prec':5} {'kernel':16} {'its':>5} {'setup':>7} {'growth':>7} {'batches':>7} {'solve':>7} {'total':>7} {'peak/G':>6}")
for k, rs in sorted(rows.items()):
    m = lambda f: min(float(r[f]) for r in rs)
    peak = max(float(r["peak_setup_bytes"]) / max(float(r["memory_bytes"]), 1.0) for r in rs)
    print(f"{k[0]:12} {k[1]:6} {k[2]:6} {k[3]:5} {k[4]:6} {k[5]:5} {k[6]:16} {rs[0]['iterations']:>5} {m('setup_s'):7.3f} "
          f"{m('growth_s'):7.3f} {rs[0]['growth_batches']:>7} {m('solve_s'):7.3f} {m('total_s'):7.3f} {peak:6.2f}")
PY
