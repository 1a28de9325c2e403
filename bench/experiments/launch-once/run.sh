#!/usr/bin/env bash
# Issue 51, the launches written once (the vector, Krylov and preconditioner kernels launched through
# `GpuRuntime` by the ops traits' default bodies instead of once per runtime): the GPU suite of the
# integration binary on the H200 (CUDA, NVIDIA OpenCL, host; `--include-ignored`, without the CLI
# tests, which name the workstation's binary), then the A/B of the latency ladder (2D Poisson up to
# 65K, CG/BiCGStab/GMRES, CUDA and NVIDIA OpenCL, both execution modes) and the 4M rows: the binary
# packed as `.device/bin/pipekrylov-old` (2026-12-01: a00dc97, the commit before the launches
# written once; 2026-12-02 (d): d8856ce, the commit before the whole redesign) against this
# commit's (`pipekrylov-new`), alternated in one call (old first in odd rounds), each run pinned to one
# core (`taskset -c $PIN`, default 8: the unpinned synchronous rows moved by 10-15% between runs
# of one binary), then ../redesign-ab/summary.py (new / old per row). Everything is written to a
# temporary folder and packed into $OUT/results.tgz (the device returns a few files only).
# Packed on the workstation:
#   the team's pack-for-device tool with --features "cuda opencl cli" -- --test integration --bin pipekrylov
#   (release executables copied into .device/bin, a .device/run wrapper)
#   mv .device/bin/pipekrylov .device/bin/pipekrylov-new   (and a00dc97's pipekrylov as pipekrylov-old)
# TESTS=0 skips the tests, TEST_FILTER narrows them (the host's refresh timing test is left to
# the refresh benchmarks: it took over a minute beside the GPU tests); rounds FIRST..LAST (default 1..8); LARGE=0
# skips the 4M rows; BACKENDS and EXECUTIONS narrow the ladder.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=$(cd "$(dirname "$0")" && pwd)
final=$OUT
OUT=$(mktemp -d)
if [ "${TESTS:-1}" = 1 ]; then
  # shellcheck disable=SC2086
  timeout "${TEST_TIMEOUT:-330}" bash .device/run test-integration --include-ignored --test-threads 8 \
    --skip cli:: --skip cli_defects:: --skip host_refresh_time_against_setup_time ${TEST_FILTER:-} > "$OUT/test-integration.log" 2>&1
  echo "test-integration: rc=$? $(grep -E '^test result' "$OUT/test-integration.log" | tail -1)" | tee "$OUT/tests.txt"
  grep -E "FAILED|panicked" "$OUT/test-integration.log" | head -20
fi
pin="taskset -c ${PIN:-8}"
pk() { v=$1; shift; timeout 200 $pin bash .device/run "pipekrylov-$v" "$@" --quiet > /dev/null 2>&1; echo "$v $1 ${*: -1}: status $?"; }
for r in $(seq "${FIRST:-1}" "${LAST:-8}"); do
  order="old new"; [ $((r % 2)) -eq 0 ] && order="new old"
  for v in $order; do
    pk $v bench --backends "${BACKENDS:-cuda,opencl}" --solvers cg,bicgstab,gmres --executions "${EXECUTIONS:-sync,resident}" \
      --problem poisson2d --max-n 70000 --iterations 300 --repeats 5 --out "$OUT/ladder-$v-r$r.csv"
  done
done > "$OUT/runs.txt"
if [ "${LARGE:-1}" = 1 ]; then
  for v in old new; do
    pk $v bench --backends cuda,opencl --solvers cg,bicgstab,gmres --problem poisson3d:4096000 \
      --iterations 30 --repeats 5 --out "$OUT/large-$v.csv"
  done >> "$OUT/runs.txt"
fi
python3 "$here/../redesign-ab/summary.py" "$OUT" > "$OUT/summary.txt" 2>&1
python3 "$here/pooled.py" "$OUT" > "$OUT/pooled.txt" 2>&1
[ -f "$OUT/redesign-ab.csv" ] && mv "$OUT/redesign-ab.csv" "$OUT/launch-once-ab.csv"
tar czf "$final/results.tgz" -C "$OUT" .
cat "$OUT/tests.txt" 2>/dev/null
head -14 "$OUT/summary.txt"
grep "rows" "$OUT/pooled.txt"
