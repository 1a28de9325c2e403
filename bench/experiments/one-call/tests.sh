#!/usr/bin/env bash
# One device call, tests only: the CUDA pool's own binary and the CUDA tests (--include-ignored,
# every test named "cuda"), then the OpenCL integration, borrowed-buffer and fault tests on NVIDIA
# OpenCL. Logs in $OUT/tests.tgz; a summary last. The measurements after the review mends are
# `TESTS=0 bash run.sh` followed by this (not run on 2026-12-02: no device time left).
# Packed on the workstation: pack-for-device --features "cuda opencl" -- --test integration --test cuda_pool
set -u
out=${OUT:-/tmp/out}
raw=$(mktemp -d)
mkdir -p "$out"
[ -x .device/bin/test-cuda_pool ] && timeout 30 .device/run test-cuda_pool --include-ignored \
  > "$raw/tests-cuda-pool.txt" 2>&1
timeout ${CUDA_S:-200} .device/run test-integration --include-ignored --test-threads=8 cuda \
  > "$raw/tests-cuda.txt" 2>&1
timeout ${OPENCL_S:-200} .device/run test-integration --test-threads=8 opencl device_buffers faults \
  > "$raw/tests-opencl.txt" 2>&1
(cd "$raw" && tar czf "$out/tests.tgz" .)
for f in "$raw"/tests-*.txt; do
  echo "$(basename "$f"): $(grep -E '^test result' "$f" | tail -1)"
  grep -E '\.\.\. FAILED|has been running' "$f" | head -8
done
