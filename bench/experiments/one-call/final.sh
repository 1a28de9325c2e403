#!/usr/bin/env bash
# One short device call after the review mends: `one_call` on NVIDIA OpenCL and CUDA at n = 16
# and 1024, the CUDA pool test binary, the OpenCL integration tests on NVIDIA OpenCL and the
# `cuda_backend` tests. Logs in $OUT/final.tgz; a summary last. Not run on 2026-12-02 (no device
# time left); with `opencl-spare.patch` applied (`git apply`) it measures the OpenCL spare list.
# Here: ../shared/tools/pack-for-device --features "cuda opencl" -- --test integration --test cuda_pool --bench one_call
set -u
out=${OUT:-/tmp/out}
raw=$(mktemp -d)
mkdir -p "$out"
for n in 16 1024; do
  timeout 30 .device/run test-one_call --backend opencl --backend cuda --n $n --calls 20 \
    --out "$raw/one-call-n$n.csv" > "$raw/one-call-n$n.txt" 2>&1
done
timeout 30 .device/run test-cuda_pool --include-ignored > "$raw/tests-cuda-pool.txt" 2>&1
timeout 120 .device/run test-integration --test-threads=8 opencl device_buffers faults \
  > "$raw/tests-opencl.txt" 2>&1
timeout 40 .device/run test-integration --include-ignored --test-threads=8 cuda_backend \
  > "$raw/tests-cuda.txt" 2>&1
(cd "$raw" && tar czf "$out/final.tgz" .)
for f in "$raw"/tests-*.txt; do
  echo "$(basename "$f"): $(grep -E '^test result' "$f" | tail -1)"
  grep -E '\.\.\. FAILED|has been running|panicked' "$f" | head -5
done
cat "$raw"/one-call-n*.txt
