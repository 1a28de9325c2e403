#!/usr/bin/env bash
# The 2026-11-24 session's device run: GPU tests of the adaptive FSAI and the DCGS2 GMRES (sums
# finished once by gmres_dcgs2_finish), the DCGS2 per-kernel breakdown and its per-iteration
# cost next to the paper's simpler GMRES, then the aFSAI setup and PCG measurements (GPU vs the
# device machine's 16-core host). From the repository root on the device, after
# the release build of every target with --features "cuda opencl cli", executables packed into
# .device/bin (the layout the other device scripts use):
#   OUT=... PARTS="tests gmres" bash bench/experiments/h200-afsai-dcgs2.sh
#   OUT=... PARTS="afsai" bash bench/experiments/h200-afsai-dcgs2.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
parts=${PARTS:-tests gmres afsai}
export PK="bash .device/run pipekrylov"
for part in $parts; do
  case $part in
    tests)
      for t in afsai fsai backend_agreement gmres_reference faults; do
        timeout 200 bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$t: /"
      done ;;
    gmres)
      for n in 1048576 4194304; do
        timeout 120 bash .device/run example-gmres_breakdown $n 16 poisson2d 2>&1 | tail -12
      done
      for p in poisson2d convdiff3d; do
        timeout 200 $PK bench --backends cuda,opencl --solvers gmres,gmres-simpler --problem $p \
          --min-n 100000 --out "$OUT/gmres-dcgs2-finish-$p-h200.csv" --quiet | tail -12
      done ;;
    afsai)
      PRECS="${PRECS:-jacobi fsai:1 afsai}" timeout 580 bash scripts/fsai-bench.sh "$OUT/afsai-h200.csv" "${BACKENDS:-cuda host}" \
        "${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}" ;;
  esac
done
