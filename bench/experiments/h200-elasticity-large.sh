#!/usr/bin/env bash
# Issue 16 on elasticity3d at the bandwidth study's size (n = 3.96M, 175M nonzeros, 44 per row):
# the SpMV and CG, BiCGStab, GMRES(30) (pipelined, f64) with the automatic format and with CSR,
# SELL and BSR 3 forced, CUDA and OpenCL; cuSPARSE's CSR SpMV on the same matrix
# (benches/cusparse_spmv.cu); the circuit matrix re-measured with the automatic format. Then the
# GPU test device_resident (every preconditioner, CUDA and NVIDIA OpenCL). From the repository
# root on the device, release build with --features "cuda opencl cli" in .device/bin:
#   OUT=... bash bench/experiments/h200-elasticity-large.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
E=${ELASTICITY:-elasticity3d:4000000}
for F in ${FORMATS:-auto csr sell bsr:3}; do
  tag=${F/:/}
  timeout 200 $PK bench --backends cuda,opencl --solvers spmv,cg,bicgstab,gmres --problem "$E" \
    --format "$F" --repeats 5 --out "$OUT/elasticity-large-$tag-h200.csv" --quiet > /dev/null 2>&1
  echo "elasticity $F: status $?"
done
timeout 200 $PK bench --backends cuda,opencl --solvers spmv,cg,bicgstab,gmres --problem circuit:4194304 \
  --format auto --repeats 5 --out "$OUT/circuit-auto-h200.csv" --quiet > /dev/null 2>&1
echo "circuit auto: status $?"
if [ "${CUSPARSE:-1}" = 1 ]; then
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  TMP=$(mktemp -d)
  $NVCC -O3 -o "$TMP/cusparse_spmv" benches/cusparse_spmv.cu -lcusparse || echo "nvcc failed"
  echo "problem,n,nnz,algorithm,median_s,min_s,max_s,floor_bytes" > "$OUT/elasticity-large-cusparse-h200.csv"
  $PK export --generate "$E" --raw --out "$TMP/e.csr" \
    && "$TMP/cusparse_spmv" "$TMP/e.csr" elasticity3d 20 >> "$OUT/elasticity-large-cusparse-h200.csv"
  echo "cusparse: status $?"; rm -rf "$TMP"
fi
if [ "${TESTS:-1}" = 1 ]; then
  timeout 200 bash .device/run test-device_resident --include-ignored > "$OUT/test-device_resident.log" 2>&1
  grep -E "test result|FAILED|panicked" "$OUT/test-device_resident.log"
fi
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
print(f"{'file':34} {'backend':7} {'solver':9} {'format':12} {'kernel':24} {'us/it':>9} {'x floor':>7} {'GB/s':>7}")
for f in sorted(glob.glob(os.path.join(out, "*-h200.csv"))):
    if "cusparse" in f:
        for r in csv.DictReader(open(f)):
            print(f"{os.path.basename(f):34} cusparse {r['algorithm']:>10} {float(r['median_s'])*1e6:9.1f} us")
        continue
    for r in csv.DictReader(open(f)):
        print(f"{os.path.basename(f):34} {r['backend']:7} {r['solver']:9} {r['format']:12} {r.get('kernel',''):24} "
              f"{float(r['median_s_per_iter'])*1e6:9.1f} {float(r['floor_ratio']):7.2f} {r.get('achieved_gb_per_s',''):>7}")
PY
