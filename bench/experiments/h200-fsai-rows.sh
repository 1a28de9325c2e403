#!/usr/bin/env bash
# The FSAI row solves with the dense systems of a warp's rows interleaved (issue 13): GPU tests
# (afsai, fsai, backend_agreement, cuda_backend: CUDA and NVIDIA OpenCL), then PCG to 1e-6
# (b = A 1) with static FSAI (levels 1-3) and aFSAI (eq. 17 and the step rule, f64 and f32
# setups) on the three FSAI problems, CUDA and OpenCL. From the repository root on the device,
# after the release build with --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-fsai-rows.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
for t in ${TESTS-afsai fsai backend_agreement cuda_backend}; do
  timeout 200 bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
  grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | sed "s/^/$t: /"
done
csv="$OUT/fsai-rows-h200.csv"
PRECS="${PRECS:-jacobi fsai:1 fsai:2 fsai:3 afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32 afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32}" \
  timeout "${BENCH_TIMEOUT:-300}" bash scripts/fsai-bench.sh "$csv" "${BACKENDS:-cuda opencl}" \
  "${PROBLEMS:-aniso2d:2700000 jump3d:1000000 elasticity3d:300000}" > /dev/null
echo "bench: status $?"
python3 - "$csv" <<'PY'
import csv, sys
from collections import defaultdict
rows = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    rows[(r["problem"], r["backend"], r["precond"], r["level"], r["stop"], r["eps"], r["setup_precision"])].append(r)
print(f"{'problem':12} {'be':6} {'precond':6} {'lvl':3} {'rule':5} {'eps':6} {'prec':5} {'its':>5} {'setup':>7} {'rows':>7} {'growth':>7} {'solve':>7} {'total':>7}")
for k, rs in rows.items():
    m = lambda f: min(float(r[f]) for r in rs)
    print(f"{k[0]:12} {k[1]:6} {k[2]:6} {k[3]:3} {k[4]:5} {k[5]:6} {k[6]:5} {rs[0]['iterations']:>5} {m('setup_s'):7.3f} "
          f"{m('rows_s'):7.3f} {m('growth_s'):7.3f} {m('solve_s'):7.3f} {m('total_s'):7.3f}")
PY
