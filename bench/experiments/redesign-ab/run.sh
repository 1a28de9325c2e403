#!/usr/bin/env bash
# Issue 51's "behaviour unchanged" check of the whole redesign: the H200 latency ladder (2D Poisson
# up to 65K, CG/BiCGStab/GMRES, CUDA and NVIDIA OpenCL, both execution modes) and the rows at 4M
# unknowns, the binary of the commit before the redesign (d8856ce, `.device/bin/pipekrylov-old`)
# against this commit's (`pipekrylov-new`), alternated in one device call (old first in odd
# rounds). With TESTS=1, first every packed GPU test executable (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of this commit's pipekrylov (renamed pipekrylov-new) and test executables (as test-NAME), and
# d8856ce's pipekrylov as pipekrylov-old; `.device/run NAME ARGS` runs one with the OpenCL
# environment. The calls of 2026-11-29 shipped `.device/bin` as an xz tarball (under the 64 MiB
# the device takes) and unpacked it first: `tar xJf .device/bin.tar.xz -C .device`.
# Rounds FIRST..LAST (default 1..3); LARGE=1 adds the 4M rows. summary.py merges the calls.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  for t in $(ls .device/bin | grep '^test-'); do
    timeout "${TEST_TIMEOUT:-200}" bash .device/run "$t" --include-ignored --test-threads 4 > "$OUT/$t.log" 2>&1
    echo "$t: rc=$? $(grep -E '^test result' "$OUT/$t.log" | tail -1)"
  done | tee "$OUT/tests.txt"
fi
pk() { v=$1; shift; timeout 200 bash .device/run "pipekrylov-$v" "$@" --quiet > /dev/null 2>&1; echo "$v $1 ${*: -1}: status $?"; }
for r in $(seq "${FIRST:-1}" "${LAST:-3}"); do
  order="old new"; [ $((r % 2)) -eq 0 ] && order="new old"
  for v in $order; do
    pk $v bench --backends cuda,opencl --solvers cg,bicgstab,gmres --executions sync,resident \
      --problem poisson2d --max-n 70000 --iterations 300 --repeats 5 --out "$OUT/ladder-$v-r$r.csv"
  done
done
if [ "${LARGE:-0}" = 1 ]; then
  for v in old new; do
    pk $v bench --backends cuda,opencl --solvers cg,bicgstab,gmres --problem poisson3d:4096000 \
      --iterations 30 --repeats 5 --out "$OUT/large-$v.csv"
  done
fi
python3 "$(dirname "$0")/summary.py" "$OUT"
