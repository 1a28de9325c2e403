#!/usr/bin/env bash
# Where a distributed iteration's GPU sits idle (issue 14): the CUDA kernel timeline of
# PIPEKRYLOV_CUDA_TRACE (src/backend/cuda/trace.rs: every launch between two timing events) for
# pipelined GMRES(30), BiCGStab and CG on the weak box (poisson3d:256x256x(128 NP), the same slab
# per rank) at 1 and 2 ranks, synchronous mode (as the distributed solvers run). Per run and rank:
# the iteration's span, kernel time and idle time over the iterations after the fifth, the
# kernels' time per iteration, and the idle gaps (stream idle before a kernel: host late, or a
# copy on another stream it waits for) summed by (kernel before -> kernel after).
# From the repository root on a 2-GPU machine, release build packed into .device/bin:
#   OUT=... bash bench/experiments/trace-dist-gaps.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
ITS=${ITS:-40}
for solver in ${SOLVERS:-gmres bicgstab cg}; do for np in ${NPS:-1 2}; do
  p=poisson3d:256x256x$((128 * np))
  trace=$OUT/trace-$solver-np$np.csv
  PIPEKRYLOV_CUDA_TRACE=$trace timeout 200 mpirun --oversubscribe -np $np .device/bin/pipekrylov solve \
    --generate $p --solver $solver --backend cuda --maxit $ITS --tol 1e-30 --execution sync \
    > $OUT/solve-$solver-np$np.log 2>&1
  echo "$solver np=$np: status $?"
  for f in $trace.rank*; do
    python3 scripts/trace_gaps.py "$f" "$solver np=$np ${f##*.}" "$ITS" | tee -a $OUT/gaps-table.txt
  done
done; done
