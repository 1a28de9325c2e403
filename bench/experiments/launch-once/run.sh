#!/usr/bin/env bash
# Issue 51, the launches written once (the vector, Krylov and preconditioner kernels launched through
# `GpuRuntime` by the ops traits' default bodies instead of once per runtime): the GPU suite of the
# integration binary on the H200 (CUDA, NVIDIA OpenCL, host; `--include-ignored`, without the CLI
# tests, which name the workstation's binary), then ../redesign-ab/run.sh's A/B of the latency
# ladder and the 4M rows: the binary of the commit before (a00dc97, `.device/bin/pipekrylov-old`)
# against this commit's (`pipekrylov-new`), alternated in one call.
# Packed on the workstation:
#   ../shared/tools/pack-for-device --features "cuda opencl cli" -- --test integration --bin pipekrylov
#   mv .device/bin/pipekrylov .device/bin/pipekrylov-new   (and a00dc97's pipekrylov as pipekrylov-old)
# TESTS=0 skips the tests; FIRST/LAST/LARGE as in ../redesign-ab/run.sh.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=$(dirname "$0")
if [ "${TESTS:-1}" = 1 ]; then
  timeout "${TEST_TIMEOUT:-330}" bash .device/run test-integration --include-ignored --test-threads 8 \
    --skip cli:: --skip cli_defects:: > "$OUT/test-integration.log" 2>&1
  echo "test-integration: rc=$? $(grep -E '^test result' "$OUT/test-integration.log" | tail -1)" | tee "$OUT/tests.txt"
  grep -E "FAILED|panicked" "$OUT/test-integration.log" | head -20
fi
TESTS=0 bash "$here/../redesign-ab/run.sh"
[ -f "$OUT/redesign-ab.csv" ] && mv "$OUT/redesign-ab.csv" "$OUT/launch-once-ab.csv"
true
