#!/usr/bin/env bash
# One device call, tests only: the CUDA tests (--include-ignored, every test named "cuda") and
# the OpenCL integration tests on NVIDIA OpenCL. Logs in $OUT/tests.tgz; a summary last.
# Here: ../shared/tools/pack-for-device --features "cuda opencl" -- --test integration
set -u
out=${OUT:-/tmp/out}
raw=$(mktemp -d)
mkdir -p "$out"
timeout ${CUDA_S:-200} .device/run test-integration --include-ignored --test-threads=8 cuda \
  > "$raw/tests-cuda.txt" 2>&1
timeout ${OPENCL_S:-200} .device/run test-integration --test-threads=8 opencl device_buffers \
  > "$raw/tests-opencl.txt" 2>&1
(cd "$raw" && tar czf "$out/tests.tgz" .)
for f in "$raw"/tests-*.txt; do
  echo "$(basename "$f"): $(grep -E '^test result' "$f" | tail -1)"
  grep -E '\.\.\. FAILED|has been running' "$f" | head -8
done
