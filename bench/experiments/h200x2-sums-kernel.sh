#!/usr/bin/env bash
# Two H200s, 2026-11-27 (e) (issue 14): the global sums of two ranks in one kernel
# (halo_sums_link: finish, push, pull and rank sums) instead of four (PIPEKRYLOV_SUMS_KERNEL=0).
# (1) tests/mpi.rs at 2 ranks with the one kernel (the default);
# (2) CG, BiCGStab and GMRES(30) solves of poisson3d:128x128x256 at 1 rank and at 2 ranks with
#     one kernel and with four: the same iterations and residuals;
# (3) the scaling studies at 2 ranks, one kernel ("base") against four ("ab"), ROUNDS rounds
#     (bench/experiments/h200x2-env-ab.sh), STUDIES (default weak strong3d strong2d).
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200x2-sums-kernel.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
nvidia-smi -L
if [[ " ${PARTS:-tests solves scaling} " == *" tests "* ]]; then
  t0=$SECONDS
  timeout 200 mpirun --oversubscribe -np 2 .device/bin/test-mpi > "$OUT/mpi-np2-sums-kernel.log" 2>&1
  echo "mpi np=2 sums by one kernel: status $? in $((SECONDS - t0)) s"
  grep -E "mpi tests|FAILED|panicked|test result" "$OUT/mpi-np2-sums-kernel.log" | sort | uniq -c | head -6
fi
if [[ " ${PARTS:-tests solves scaling} " == *" solves "* ]]; then
  for solver in cg bicgstab gmres; do
    for run in "1 1" "2 1" "2 0"; do
      set -- $run
      log="$OUT/solve-$solver-np$1-kernel$2.log"
      PIPEKRYLOV_SUMS_KERNEL=$2 timeout 90 mpirun --oversubscribe -np "$1" .device/bin/pipekrylov solve \
        --generate poisson3d:128x128x256 --solver "$solver" --backend cuda --tol 1e-8 > "$log" 2>&1
      echo "solve $solver np=$1 sums_kernel=$2: status $?; $(grep -E 'stop:|relative residual|global reductions' "$log" | tr -s ' ' | tr '\n' ';' | cut -c1-260)"
    done
  done
fi
if [[ " ${PARTS:-tests solves scaling} " == *" scaling "* ]]; then
  OUT=$OUT AB=PIPEKRYLOV_SUMS_KERNEL=0 STUDIES="${STUDIES:-weak strong3d strong2d}" bash bench/experiments/h200x2-env-ab.sh
  (cd "$OUT" && tar czf scaling.tgz r*-base r*-ab && rm -rf r*-base r*-ab)
fi
