#!/usr/bin/env bash
# One device call: the OpenCL tests touched by the shared context (lib and integration, NVIDIA
# OpenCL), the CUDA integration tests, then `benches/one_call.rs` on CUDA, NVIDIA OpenCL and
# the host at n = 16, 1024, 4096 (and, when .device/old holds the bench of an earlier commit,
# that one on OpenCL, for before/after). Results in $OUT; a table last.
#
# Here: ../shared/tools/pack-for-device --features "cuda opencl" -- --lib --test integration --bench one_call
# (the old bench: built in a worktree of the earlier commit, copied to .device/old/test-one_call)
# There: bash bench/experiments/one-call/run.sh
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
run=".device/run"
lib=$(ls .device/bin | grep '^test-pipekrylov' | head -1)
if [ "${TESTS:-1}" = 1 ]; then
  timeout 200 $run "$lib" opencl --test-threads=4 > "$out/tests-lib-opencl.txt" 2>&1
  timeout 200 $run test-integration opencl device_buffers --test-threads=4 > "$out/tests-integration-opencl.txt" 2>&1
  timeout 200 $run test-integration cuda --test-threads=4 > "$out/tests-integration-cuda.txt" 2>&1
fi
calls=${CALLS:-50}
for n in 16 1024 4096; do
  $run test-one_call --backend cuda --backend opencl --backend host --n $n --calls $calls \
    --out "$out/one-call-n$n.csv" > "$out/one-call-n$n.txt" 2>&1
  if [ -x .device/old/test-one_call ]; then
    OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1 .device/old/test-one_call --backend opencl \
      --backend cuda --n $n --calls $calls --out "$out/one-call-old-n$n.csv" > "$out/one-call-old-n$n.txt" 2>&1
  fi
done
(cd "$out" && tar czf results.tgz *.txt *.csv)
for f in "$out"/tests-*.txt; do echo "$(basename "$f"): $(grep -E '^test result' "$f" | tail -1)"; done
cat "$out"/one-call-n*.txt "$out"/one-call-old-n*.txt 2>/dev/null
