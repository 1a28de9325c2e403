#!/usr/bin/env bash
# The adaptive FSAI setup grown and compacted batch by batch (no n x k_max array): GPU tests
# (afsai, fsai: CUDA and NVIDIA OpenCL), then PCG + aFSAI on the three FSAI problems on CUDA,
# every configuration twice (the first row of a process compiles the kernels before the timed
# setup), printing setup, growth, launches and the peak setup memory over the final factors.
# From the repository root on the device, after the release build with --features
# "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-memory.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
for t in afsai fsai; do
  timeout 200 bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$t: /"
done
problems=${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}
PRECS="${PRECS:-jacobi afsai afsai:30:1:1e-2:step afsai:30:1:5e-2:step afsai afsai:30:1:1e-2:step afsai:30:1:5e-2:step}" \
  timeout 300 bash scripts/fsai-bench.sh "$OUT/afsai-memory-cuda-h200.csv" cuda "$problems" > /dev/null
echo "bench: status $?"
python3 - "$OUT/afsai-memory-cuda-h200.csv" <<'PY'
import csv, sys
print(f"{'problem':12} {'precond':6} {'rule':5} {'eps':6} {'its':>5} {'setup s':>8} {'growth s':>8} {'batches':>7} "
      f"{'solve s':>8} {'total s':>8} {'density':>7} {'peak/final':>10} {'apply ms':>8}")
for r in csv.DictReader(open(sys.argv[1])):
    mem = int(r["memory_bytes"]) or 1
    print(f"{r['problem']:12} {r['precond']:6} {r['stop']:5} {r['eps']:6} {r['iterations']:>5} {float(r['setup_s']):8.3f} "
          f"{float(r['growth_s']):8.3f} {r['growth_batches']:>7} {float(r['solve_s']):8.3f} {float(r['total_s']):8.3f} "
          f"{r['density']:>7} {int(r['peak_setup_bytes']) / mem:10.2f} {float(r['apply_s']) * 1e3:8.3f}")
PY
