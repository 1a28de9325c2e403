#!/usr/bin/env bash
# Everything the 2026-11-23 afternoon session built but could not run on a GPU (none was lent),
# in one command for the device: the GPU tests, then the H200 measurements of block-ISAI,
# Incomplete Poisson, static FSAI and the CGS2 GMRES, CSV under $OUT. Run from the repository
# root on the device after the release build of every target with --features "cuda opencl" was
# packed into .device/ (the layout the other device scripts use):
#   bash bench/experiments/h200-session.sh            (about 10 minutes; set PARTS to run a subset)
# PARTS: any of "tests isai ip fsai gmres" (default: all).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
parts=${PARTS:-tests isai ip fsai gmres}
export PK="bash .device/run pipekrylov"
for part in $parts; do
  case $part in
    tests)
      for t in approx_inverse fsai gmres_reference precond backend_agreement; do
        bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$t: /"
      done ;;
    isai)
      CONFIGS="none:exact bilu0:exact bilu0:sweeps:2 bilu0:sweeps:3 isai:1 isai:2 isai:3" \
        timeout 400 bash scripts/precond-bench.sh "$OUT/isai-convdiff3d-h200.csv" "cuda opencl" convdiff3d ;;
    ip)
      timeout 300 bash scripts/ip-bench.sh "$OUT/ip-poisson3d-h200.csv" "cuda opencl" ;;
    fsai)
      PRECS="jacobi fsai:1 fsai:2" timeout 400 bash scripts/fsai-bench.sh "$OUT/fsai-h200.csv" "cuda host" ;;
    gmres)
      for p in poisson2d convdiff3d; do
        timeout 300 $PK bench --backends cuda,opencl --solvers gmres,gmres-cgs2,gmres-simpler --problem $p \
          --min-n 100000 --out "$OUT/gmres-cgs2-$p-h200.csv" --quiet | tail -20
      done ;;
  esac
done
