#!/usr/bin/env bash
# Issue 52's anchor for the device SpGEMM (the kernels of AMG's Galerkin products): C = A A on the
# generated 2D/3D Poisson matrices, f64, ours (`pipekrylov bench --solvers spgemm`, CUDA and NVIDIA
# OpenCL: symbolic and numeric phases, C allocated, median of 5 after a warm-up) against cuSPARSE's
# SpGEMM (cusparse_spgemm.cu beside this script, built here with nvcc: descriptors, work estimation,
# compute, C allocated, copy, median of 5). One H200.
# Packed on the workstation: pack-for-device --features "cuda opencl cli" -- --bin pipekrylov
# Run: OUT=$OUT bash bench/experiments/spgemm-vs-cusparse/run.sh   (writes $OUT/spgemm-vs-cusparse.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=$(dirname "$0")
nvcc -O3 -std=c++17 -arch=sm_90 "$here/cusparse_spgemm.cu" -lcusparse -o /tmp/cusparse_spgemm \
  2> "$OUT/cusparse-build.log" || { echo "cusparse driver build failed"; tail -5 "$OUT/cusparse-build.log"; }
csv="$OUT/spgemm-vs-cusparse.csv"
echo "library,backend,problem,n,nnz_a,nnz_c,median_s,min_s" > "$csv"
for p in "poisson2d 2048" "poisson2d 4096" "poisson3d 128" "poisson3d 256"; do
  set -- $p
  /tmp/cusparse_spgemm "$1" "$2" 5 2>> "$OUT/cusparse-run.log" | sed 's/^cusparse,/cusparse,cuda,/' >> "$csv"
  if [ "$1" = poisson2d ]; then spec="$1:$2x$2"; else spec="$1:$2x$2x$2"; fi
  for backend in cuda opencl; do
    bash .device/run pipekrylov bench --backends "$backend" --solvers spgemm --problem "$spec" --format csr \
      --repeats 5 --warmup 1 --quiet --out "/tmp/ours-$backend-$1-$2.csv" > /dev/null 2>> "$OUT/ours-run.log"
    python3 - "/tmp/ours-$backend-$1-$2.csv" "$spec" >> "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(",".join(["pipekrylov", r["backend"], sys.argv[2], r["n"], r["nnz"], r["iterations"], r["median_s_per_iter"], r["min_s_per_iter"]]))
PY
  done
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'library':11} {'backend':7} {'problem':22} {'nnz(C)':>10} {'median ms':>10}")
for r in rows:
    print(f"{r['library']:11} {r['backend']:7} {r['problem']:22} {r['nnz_c']:>10} {1e3 * float(r['median_s']):10.2f}")
PY
