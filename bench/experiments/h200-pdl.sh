#!/usr/bin/env bash
# Issue 15: programmatic dependent launch (PDL) on the H200. Every GPU test binary on CUDA and
# NVIDIA OpenCL (PARTS=tests; one log, tests.log), then both execution modes on the 2D and 3D
# Poisson ladders up to 65K with 300-iteration solves, CUDA and OpenCL with PDL on (the default)
# and CUDA again with PIPEKRYLOV_CUDA_PDL=0 (PARTS=long), then CUDA at 1M and 4M unknowns with
# PDL on and off (PARTS=large); CSV under $OUT, a comparison table last. From the repository root
# on the device, after a release build with --features "cuda opencl cli" (bin, the test binaries
# below) was packed into .device/bin:
#   OUT=... bash bench/experiments/h200-pdl.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
parts=${PARTS:-tests long large}
PK="bash .device/run pipekrylov"
for part in $parts; do
  case $part in
    tests)
      for t in ${TESTS:-afsai approx_inverse backend_agreement bilu_device cuda_backend dcgs2_two_kernels \
               device_resident faults fsai gmres_reference ip_device precond resident_many_groups solvers}; do
        timeout 240 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        rm -f "$OUT/test.tmp"
      done ;;
    long)
      for p in poisson2d poisson3d; do
        timeout 250 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres --executions sync,resident \
          --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/pdl-on-300it-$p-h200.csv" --quiet > /dev/null 2>&1
        echo "long $p pdl on: status $?"
        PIPEKRYLOV_CUDA_PDL=0 timeout 250 $PK bench --backends cuda --solvers cg,bicgstab,gmres --executions sync,resident \
          --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/pdl-off-300it-$p-h200.csv" --quiet > /dev/null 2>&1
        echo "long $p pdl off: status $?"
      done ;;
    large)
      for pdl in on off; do
        v=1; [ $pdl = off ] && v=0
        PIPEKRYLOV_CUDA_PDL=$v timeout 250 $PK bench --backends cuda --solvers cg,bicgstab,gmres --executions sync,resident \
          --problem poisson2d --min-n 1000000 --max-n 4300000 --out "$OUT/pdl-$pdl-large-poisson2d-h200.csv" --quiet > /dev/null 2>&1
        echo "large pdl $pdl: status $?"
      done ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
rows = {}
for f in glob.glob(os.path.join(out, "pdl-*.csv")):
    pdl = "on" if "pdl-on" in f else "off"
    for r in csv.DictReader(open(f)):
        key = (r["solver"], r["backend"], r["problem"], int(r["n"]), r["execution"])
        rows.setdefault(key, {})[pdl] = float(r["median_s_per_iter"]) * 1e6
print(f"{'solver':9} {'backend':7} {'problem':10} {'n':>8} {'mode':9} {'PDL off us':>10} {'PDL on us':>10} {'gain':>6}")
for k in sorted(rows):
    m = rows[k]
    off, on = m.get("off"), m.get("on")
    fmt = lambda v: f"{v:10.2f}" if v is not None else f"{'-':>10}"
    gain = f"{off / on:6.3f}" if off and on else f"{'-':>6}"
    print(f"{k[0]:9} {k[1]:7} {k[2]:10} {k[3]:>8} {k[4]:9} {fmt(off)} {fmt(on)} {gain}")
PY
