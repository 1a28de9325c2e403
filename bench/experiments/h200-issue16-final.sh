#!/usr/bin/env bash
# Issue 16 at the end, one H200, the default build and settings: every matrix of the issue at
# n >= 3.9M with the SpMV and CG, BiCGStab, GMRES(30) on CUDA and NVIDIA OpenCL (the automatic
# format; SELL forced as well on 2D/3D Poisson), cuSPARSE's CSR SpMV on the same matrices, Nsight
# Compute's DRAM bytes, L2 sectors and hit rate of the power-law product (ours and cuSPARSE's), and
# each step of a 2D Poisson CG iteration at n = 4.19M alone (example-latency_breakdown). The parts
# are those of bench/experiments/h200-load-hints.sh with the default hints. From the repository root on the
# device, release build with --features "cuda opencl cli" packed into .device/bin (pipekrylov,
# example-latency_breakdown):
#   OUT=... PARTS="cusparse ncu breakdown" bash bench/experiments/h200-issue16-final.sh
#   OUT=... PARTS=refresh bash bench/experiments/h200-issue16-final.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export HINTS=1
export MATRICES=${MATRICES:-powerlaw:4194304 circuit:4194304 poisson2d:4190209 poisson3d:4096000 stencil27:4096000 elasticity3d:4000000}
parts=${PARTS:-cusparse ncu breakdown}
load_parts=""
for p in $parts; do
  case $p in
    cusparse | ncu | refresh) load_parts="$load_parts $p" ;;
  esac
done
nvidia-smi -L
if [ -n "$load_parts" ]; then
  PARTS="$load_parts" bash bench/experiments/h200-load-hints.sh
fi
case " $parts " in
  *" breakdown "*)
    for n in ${BREAKDOWN_N:-4190209}; do
      timeout 200 bash .device/run example-latency_breakdown "$n" > "$OUT/cg-breakdown-$n-h200.txt" 2>&1
      echo "breakdown $n: status $?"; cat "$OUT/cg-breakdown-$n-h200.txt"
    done ;;
esac
