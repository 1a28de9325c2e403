#!/usr/bin/env bash
# Issue 16 at its close (2026-11-28): every matrix of the issue at n >= 3.9M with the automatic
# format, `pipekrylov bench --solvers spmv,cg,bicgstab,gmres --repeats 5` on CUDA and NVIDIA OpenCL,
# after the fused SELL DCGS2 step (CUDA) and SELL for short rows on OpenCL from 1M rows. On an
# H200 only the matrices those changes touch (CASES; circuit and power-law keep the kernels of
# bench/results/h200-issue16-final/); on any other card every matrix and cuSPARSE's CSR SpMV
# (benches/cusparse_spmv.cu, built with nvcc) as well, so that the card's table stands alone. The
# files carry the card's tag (h200 / h100); BUDGET_S stops starting cases after that many
# seconds. From the repository root on the device, release build with --features "cuda opencl
# mpi cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-issue16-close.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
nvidia-smi -L
if nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then card=h200; else card=h100; fi
all="poisson2d:4190209:auto poisson3d:4096000:auto stencil27:4096000:auto elasticity3d:4000000:auto circuit:4194304:auto powerlaw:4194304:auto"
if [ $card = h200 ]; then
  CASES=${CASES:-poisson2d:4190209:auto poisson3d:4096000:auto stencil27:4096000:auto elasticity3d:4000000:auto}
  CUSPARSE=${CUSPARSE:-0}
else
  CASES=${CASES:-$all}
  CUSPARSE=${CUSPARSE:-1}
fi
start=$SECONDS
if [ "$CUSPARSE" = 1 ]; then
  TMP=$(mktemp -d)
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  $NVCC -O3 -o "$TMP/cusparse_spmv" benches/cusparse_spmv.cu -lcusparse || echo "nvcc failed"
  echo "problem,n,nnz,algorithm,median_s,min_s,max_s,floor_bytes" > "$OUT/close-cusparse-$card.csv"
  for case in $CASES; do
    p=${case%%:*}; rest=${case#*:}; n=${rest%%:*}
    $PK export --generate "$p:$n" --raw --out "$TMP/m.csr" > /dev/null \
      && timeout 120 "$TMP/cusparse_spmv" "$TMP/m.csr" "$p" 20 >> "$OUT/close-cusparse-$card.csv"
    echo "cusparse $p: status $?"
    rm -f "$TMP/m.csr"
  done
  rm -rf "$TMP"
fi
for case in $CASES; do
  if [ $((SECONDS - start)) -ge "${BUDGET_S:-470}" ]; then echo "skipped $case (time)"; continue; fi
  p=${case%%:*}; rest=${case#*:}; n=${rest%%:*}; f=${rest#*:}
  timeout 200 $PK bench --backends cuda,opencl --solvers spmv,cg,bicgstab,gmres --problem "$p:$n" \
    --format "$f" --repeats 5 --out "$OUT/close-$p-$f-$card.csv" --quiet > /dev/null 2>&1
  echo "close $p $f: status $? at $((SECONDS - start)) s"
done
python3 bench/experiments/issue16_table.py "$OUT" "$card"
