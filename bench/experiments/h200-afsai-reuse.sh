#!/usr/bin/env bash
# Third device run of the 2026-11-24 (b) session: FSAI/aFSAI set up on the solver's device copy of
# A (no second upload), GPU tests, then CUDA rows twice (kernels compiled before the timed setup)
# and the host rows of the step rule. From the repository root on the device, after the release
# build with --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-reuse.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
for t in afsai fsai; do
  timeout 200 bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$t: /"
done
problems=${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}
PRECS="${GPU_PRECS:-jacobi afsai afsai:30:1:1e-2:step afsai:30:1:5e-2:step fsai:1 afsai afsai:30:1:1e-2:step afsai:30:1:5e-2:step fsai:1}" \
  timeout 300 bash scripts/fsai-bench.sh "$OUT/afsai-reuse-cuda-h200.csv" cuda "$problems"
PRECS="${HOST_PRECS:-afsai:30:1:1e-2:step afsai:30:1:5e-2:step}" \
  timeout 200 bash scripts/fsai-bench.sh "$OUT/afsai-reuse-host-h200.csv" host "$problems"
