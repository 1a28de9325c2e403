#!/usr/bin/env bash
# Bandwidth baseline on the irregular matrices of issue 16 (H200): CG, BiCGStab and GMRES(30),
# pipelined, f64, CUDA and OpenCL, today's CSR and SELL-32-256 kernels, on stencil27 (k = 160,
# 4.1M unknowns), powerlaw and circuit (4.19M) and elasticity3d (m = 47 and CSR/BSR:3). CSV under
# $OUT. Run from the repository root on the device after
#   (release build of every target with --features "cuda opencl cli", executables packed into
#   .device/bin with the .device/run launcher, the layout the other device scripts use)
#   bash bench/experiments/h200-irregular.sh         (about 4 minutes)
# PARTS="tests bench" (default bench only) picks the parts; FORMATS (default "csr sell") the
# formats of the generated matrices; TAG (default empty) is appended to the CSV names.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
TAG=${TAG:-}
for part in ${PARTS:-bench}; do
  [ "$part" = tests ] || continue
  for t in backend_agreement cuda_backend device_resident; do
    bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
    echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | head -n 8
  done
done
case " ${PARTS:-bench} " in *" bench "*) ;; *) exit 0 ;; esac
for p in stencil27 powerlaw circuit; do
  for f in ${FORMATS:-csr sell}; do
    timeout 280 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres --problem $p \
      --min-n 3000000 --format $f --repeats 5 --out "$OUT/irregular-$p-$f$TAG-h200.csv" --quiet > /dev/null 2>&1
    echo "$p $f: status $?"
  done
done
for f in ${ELASTICITY_FORMATS:-csr bsr:3}; do
  timeout 200 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres --problem elasticity3d \
    --min-n 300000 --format $f --repeats 5 --out "$OUT/irregular-elasticity3d-${f%%:*}$TAG-h200.csv" --quiet > /dev/null 2>&1
  echo "elasticity3d $f: status $?"
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
print(f"{'problem':12} {'format':6} {'backend':7} {'solver':9} {'n':>8} {'nnz':>9} {'us/iter':>9} {'x floor':>7}")
for f in sorted(glob.glob(os.path.join(out, "irregular-*.csv"))):
    for r in csv.DictReader(open(f)):
        print(f"{r['problem']:12} {r['format']:6} {r['backend']:7} {r['solver']:9} {r['n']:>8} {r['nnz']:>9} {float(r['median_s_per_iter'])*1e6:9.1f} {float(r['floor_ratio']):7.2f}")
PY
