#!/usr/bin/env bash
# The CSR kernel of the FSAI factors G and G^T (issue 13): GPU tests (afsai, fsai: CUDA and
# NVIDIA OpenCL), then PCG + aFSAI to 1e-6 (b = A 1) on the three FSAI problems with G and G^T
# run by the automatic choice and by each kernel forced (--fsai-kernel), CUDA and OpenCL, every
# configuration twice. From the repository root on the device, after the release build with
# --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-fsai-kernel.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
if [ "${TESTS:-1}" = 1 ]; then
  for t in afsai fsai; do
    timeout 200 bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
    grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | sed "s/^/$t: /"
  done
fi
problems=${PROBLEMS:-aniso2d:2700000 jump3d:1000000 elasticity3d:300000}
backends=${BACKENDS:-cuda opencl}
csv="$OUT/fsai-kernel-h200.csv"
rm -f "$csv"
for k in ${KERNELS:-auto vector stream stream-compact}; do
  precs="${KPRECS:-afsai:30:1:1e-2:step afsai:30:1:5e-2:step afsai:30:1:1e-2:step afsai:30:1:5e-2:step}"
  [ "$k" = auto ] && precs="jacobi jacobi $precs afsai afsai"
  FSAI_KERNEL=$k PRECS="$precs" timeout "${BENCH_TIMEOUT:-150}" bash scripts/fsai-bench.sh "$OUT/k-$k.csv" "$backends" "$problems" > /dev/null
  echo "bench $k: status $?"
  if [ ! -f "$csv" ]; then head -1 "$OUT/k-$k.csv" | sed 's/$/,requested_kernel/' > "$csv"; fi
  tail -n +2 "$OUT/k-$k.csv" | sed "s/$/,$k/" >> "$csv"
done
python3 - "$csv" <<'PY'
import csv, sys
from collections import defaultdict
rows = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["problem"], r["backend"], r["precond"], r["stop"], r["eps"], r["requested_kernel"])
    rows[key].append(r)
print(f"{'problem':12} {'be':6} {'precond':6} {'rule':5} {'eps':6} {'kernel':14} {'g / gt kernel':44} {'its':>5} "
      f"{'setup':>7} {'klay':>6} {'solve':>7} {'total':>7} {'apply ms':>8}")
for key, rs in rows.items():
    m = lambda f: min(float(r[f]) for r in rs)
    r = rs[-1]
    print(f"{key[0]:12} {key[1]:6} {key[2]:6} {key[3]:5} {key[4]:6} {key[5]:14} {r['g_kernel'] + ' / ' + r['gt_kernel']:44} "
          f"{r['iterations']:>5} {m('setup_s'):7.3f} {m('kernel_layout_s'):6.3f} {m('solve_s'):7.3f} {m('total_s'):7.3f} "
          f"{m('apply_s') * 1e3:8.3f}")
PY
