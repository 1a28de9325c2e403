#!/usr/bin/env bash
# One device call: the tests touched (CUDA with --include-ignored; the OpenCL integration tests
# and the borrowed-buffer ones on NVIDIA OpenCL), then `benches/one_call.rs` at n = 16, 1024,
# 4096, two rounds, alternating this build (CUDA, NVIDIA OpenCL, host) with the bench of an
# earlier commit in .device/old (CUDA and OpenCL), when there is one. Everything in
# $OUT/results.tgz; a table last.
#
# Packed on the workstation: pack-for-device --features "cuda opencl" -- --test integration --bench one_call
# (the old bench: benches/one_call.rs copied into a worktree of the earlier commit, built there,
# copied to .device/old/test-one_call)
# There: bash bench/experiments/one-call/run.sh   (TESTS=0 skips the tests; CALLS=K)
set -u
out=${OUT:-/tmp/out}
raw=$(mktemp -d)
mkdir -p "$out"
run=".device/run"
if [ "${TESTS:-1}" = 1 ]; then
  timeout 240 $run test-integration --include-ignored --test-threads=8 cuda_backend \
    > "$raw/tests-cuda.txt" 2>&1
  timeout 200 $run test-integration --test-threads=8 opencl device_buffers \
    > "$raw/tests-opencl.txt" 2>&1
fi
calls=${CALLS:-30}
for round in 1 2; do
  for n in 16 1024 4096; do
    $run test-one_call --backend cuda --backend opencl --backend host --n $n --calls $calls \
      --out "$raw/new-n$n-r$round.csv" > "$raw/new-n$n-r$round.txt" 2>&1
    if [ -x .device/old/test-one_call ]; then
      OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 .device/old/test-one_call --backend cuda \
        --backend opencl --n $n --calls $calls --out "$raw/old-n$n-r$round.csv" \
        > "$raw/old-n$n-r$round.txt" 2>&1
    fi
  done
done
(cd "$raw" && tar czf "$out/results.tgz" .)
for f in "$raw"/tests-*.txt; do
  [ -f "$f" ] && echo "$(basename "$f"): $(grep -E '^test result' "$f" | tail -1) $(grep -c '\.\.\. FAILED' "$f") failed lines"
  grep -E '\.\.\. FAILED' "$f" | head -5
done
for f in "$raw"/new-*.csv "$raw"/old-*.csv; do
  [ -f "$f" ] && tail -n +2 "$f" | sed "s|^|$(basename "$f" .csv),|"
done | cut -d, -f1,2,3,6,8,11-16
