#!/usr/bin/env bash
# Device run of the adaptive FSAI with its pattern laid out on the device, the step-reduction
# stopping rule and the single-precision setup (issue 13): GPU tests (CUDA and NVIDIA OpenCL),
# then setup and PCG times, GPU against the device machine's 16-core host. From the repository
# root on the device, after the release build of every target with --features "cuda opencl cli"
# packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-layout.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
for t in afsai fsai; do
  timeout 200 bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$t: /"
done
problems=${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}
# GPU: Jacobi, aFSAI with the paper's rule and with the step rule, each in f64 and f32 setup.
PRECS="${GPU_PRECS:-jacobi afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32 afsai:30:1:5e-2:step afsai:30:1:5e-2:step:f32 fsai:1 fsai:1:0:f32}" \
  timeout 300 bash scripts/fsai-bench.sh "$OUT/afsai-layout-cuda-h200.csv" cuda "$problems"
# Host (16 cores): the same factors in f64, for the GPU/host setup ratio.
PRECS="${HOST_PRECS:-jacobi afsai afsai:30:1:1e-2:step afsai:30:1:5e-2:step}" \
  timeout 280 bash scripts/fsai-bench.sh "$OUT/afsai-layout-host-h200.csv" host "$problems"
