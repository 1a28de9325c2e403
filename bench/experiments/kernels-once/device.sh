#!/usr/bin/env bash
# One device call for issue 51 item 5 (kernels written once): the GPU test suites of the packed test
# executables (CUDA, NVIDIA OpenCL and host; --include-ignored), then ../tuning-ab/run.sh's A/B of
# the ladder and the 4M rows (old = 9bc654b, new = this commit; summary kernels-ab.csv). Packed on the
# workstation: release executables of `--features "cuda opencl cli"` (the pipekrylov binary at each
# commit, renamed pipekrylov-old / pipekrylov-new, and the GPU test executables as test-NAME) in
# .device/bin, with a .device/run wrapper that sets the OpenCL and MPI environment.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for t in $(ls .device/bin | grep '^test-'); do
  timeout "${TEST_TIMEOUT:-80}" bash .device/run "$t" --include-ignored > "$OUT/$t.log" 2>&1
  echo "$t: rc=$? $(grep -E '^test result' "$OUT/$t.log" | tail -1)"
done | tee "$OUT/tests.txt"
AB_NAME=kernels-ab ROUNDS=${ROUNDS:-1} bash "$(dirname "$0")/../tuning-ab/run.sh" 2>&1 | tail -40
