#!/usr/bin/env bash
# Two H200s, 2026-11-27 (d) (issue 14): the global sums' device-to-device link exchanged by two
# single-block kernels on the compute stream (halo_link_push / halo_link_pull) instead of the
# copy stream's copy and flag operations. (1) tests/mpi.rs at 2 ranks with the kernels (the
# default) and without (PIPEKRYLOV_LINK_KERNELS=0); (2) the weak and strong studies at 1 and 2
# GPUs (bench/experiments/h200-scaling.sh), kernels on, then the 2-GPU runs with them off, in ROUNDS
# rounds; (3) the kernel timeline's idle gaps at 2 ranks (bench/experiments/trace-dist-gaps.sh).
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200x2-link-kernels.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
nvidia-smi -L
if [[ " ${PARTS:-tests scaling trace} " == *" tests "* ]]; then
  for kern in 1 0; do
    t0=$SECONDS
    PIPEKRYLOV_LINK_KERNELS=$kern timeout 200 mpirun --oversubscribe -np 2 .device/bin/test-mpi > "$OUT/mpi-np2-kernels$kern.log" 2>&1
    echo "mpi np=2 link kernels=$kern: status $? in $((SECONDS - t0)) s"
    grep -E "mpi tests|FAILED|panicked" "$OUT/mpi-np2-kernels$kern.log" | sort | uniq | head -4
    grep "^cuda" "$OUT/mpi-np2-kernels$kern.log" | grep -v "on devices     0)" | grep -c "on devices"
  done
fi
if [[ " ${PARTS:-tests scaling trace} " == *" scaling "* ]]; then
  # "base" = the kernels (the default), "ab" = the copy stream.
  AB=PIPEKRYLOV_LINK_KERNELS=0 bash bench/experiments/h200x2-env-ab.sh
fi
if [[ " ${PARTS:-tests scaling trace} " == *" trace "* ]]; then
  mkdir -p "$OUT/trace"
  OUT=$OUT/trace NPS=2 SOLVERS="gmres bicgstab" bash bench/experiments/trace-dist-gaps.sh | grep -E "^==|idle" | head -40
  rm -f "$OUT"/trace/trace-*.csv.rank*
fi
