#!/usr/bin/env bash
# Second device run of the 2026-11-24 (b) session: the single-precision FSAI/aFSAI setup with the
# kernels compiled before the timed setup (the CLI's prepare_kernels), CUDA on the H200, and the
# SELL rows of the irregular benchmark with the full-occupancy SELL grid default (issue 16).
# From the repository root on the device, after the release build with --features
# "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-f32.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
problems=${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}
PRECS="${GPU_PRECS:-afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32 fsai:1 fsai:1:0:f32 afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32 fsai:1 fsai:1:0:f32}" \
  timeout 300 bash scripts/fsai-bench.sh "$OUT/afsai-f32-cuda-h200.csv" cuda "$problems"
if [ -n "${SELL:-1}" ]; then
  FORMATS=sell ELASTICITY_FORMATS=" " TAG=-gridfix timeout 250 bash bench/experiments/h200-irregular.sh
fi
