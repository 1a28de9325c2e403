#!/usr/bin/env bash
# Sweep of the adaptive FSAI's rows per growth launch (PIPEKRYLOV_AFSAI_BATCH_FACTOR = 1, 2, 4, 8:
# the growth scratch budget n (k_max + 1) scalars times the factor) on the H200, CUDA, for the
# paper's rule and the step rule: growth time and peak setup memory per factor. From the
# repository root on the device, after the release build with --features "cuda opencl cli"
# packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-batch.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export PK="bash .device/run pipekrylov"
problems=${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}
for f in ${FACTORS:-1 2 4 8}; do
  PIPEKRYLOV_AFSAI_BATCH_FACTOR=$f PRECS="${PRECS:-afsai afsai:30:1:1e-2:step}" \
    timeout 140 bash scripts/fsai-bench.sh "$OUT/afsai-batch$f-cuda-h200.csv" cuda "$problems" > /dev/null
  echo "factor $f: status $?"
done
python3 - "$OUT" <<'PY'
import csv, glob, os, re, sys
print(f"{'factor':>6} {'problem':12} {'rule':5} {'growth s':>9} {'setup s':>8} {'peak/final':>10}")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "afsai-batch*-cuda-h200.csv")),
                key=lambda p: int(re.search(r"batch(\d+)", p).group(1))):
    k = re.search(r"batch(\d+)", f).group(1)
    for r in csv.DictReader(open(f)):
        print(f"{k:>6} {r['problem']:12} {r['stop']:5} {float(r['growth_s']):9.3f} {float(r['setup_s']):8.3f} "
              f"{int(r['peak_setup_bytes']) / int(r['memory_bytes']):10.2f}")
PY
