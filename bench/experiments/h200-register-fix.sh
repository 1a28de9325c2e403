#!/usr/bin/env bash
# Issues 15 and 16 after the register fix of 1ea855f (`gmres_dcgs2_spmv_dots` and
# `bicgstab_s_spmv_resident` back to 64 registers): the GPU tests of both kernels (PARTS=tests; CUDA
# and NVIDIA OpenCL against the host), GMRES(30) at 4.1M-16.8M where the regression was bisected
# (PARTS=large: 3D 4.1M and 8.4M, 2D 4.19M and 16.8M, sync mode, CUDA), and the device-resident
# CG, BiCGStab and GMRES(30) on the 2D and 3D Poisson ladders up to 65K, 300-iteration solves,
# against the (h) section (PARTS=ladder, CUDA and NVIDIA OpenCL). CSV under $OUT, a table last.
# From the repository root on the device after a release build with --features "cuda opencl cli"
# packed into .device/bin:
#   OUT=... bash bench/experiments/h200-register-fix.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
for part in ${PARTS:-tests large ladder}; do
  case $part in
    tests)
      for t in ${TESTS:-backend_agreement device_resident cuda_nvrtc}; do
        timeout 300 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-register-fix-h200.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        rm -f "$OUT/test.tmp"
      done ;;
    large)
      for p in poisson3d:4096000 poisson3d:8388608 poisson2d:4194304 poisson2d:16777216; do
        timeout 200 $PK bench --backends cuda --solvers gmres --problem $p --repeats 5 \
          --out "$OUT/large-${p/:/-}.csv" --quiet > /dev/null 2>&1
        echo "gmres $p: status $?"
      done ;;
    ladder)
      for p in poisson2d poisson3d; do
        timeout 250 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres --executions sync,resident \
          --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/modes-300it-$p-h200.csv" \
          --quiet > /dev/null 2>&1
        echo "modes $p: status $?"
      done ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
print(f"{'file':28} {'backend':7} {'solver':9} {'exec':9} {'n':>9} {'us/iter':>9} {'floor x':>8}")
for f in sorted(glob.glob(os.path.join(out, "*.csv"))):
    for r in csv.DictReader(open(f)):
        us = float(r["median_s_per_iter"]) * 1e6
        fl = r.get("floor_ratio", "")
        print(f"{os.path.basename(f)[:28]:28} {r['backend']:7} {r['solver']:9} {r.get('execution',''):9} "
              f"{r['n']:>9} {us:9.2f} {fl[:8]:>8}")
PY
