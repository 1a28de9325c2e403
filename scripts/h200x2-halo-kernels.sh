#!/usr/bin/env bash
# Two H200s, 2026-11-27 (e) (issue 14): the halo link at two ranks exchanged by the link kernels
# (halo_link_push / halo_link_pull with as many blocks as the payload needs) instead of the host
# (MPI through page-locked memory, the 2-rank default) or the copy stream.
# (1) tests/mpi.rs at 2 ranks with the halo link forced (every exchange by the kernels);
# (2) BiCGStab, CG and GMRES(30) solves of poisson3d:128x128x256 (a halo of 128 KB, 16 blocks)
#     at 1 rank and at 2 ranks host-staged and by kernels: the same iterations and residuals;
# (3) the scaling studies at 2 ranks, host-staged ("base") against the kernels ("ab",
#     PIPEKRYLOV_HALO_PEER=1), ROUNDS rounds (scripts/h200x2-env-ab.sh).
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash scripts/h200x2-halo-kernels.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
nvidia-smi -L
if [[ " ${PARTS:-tests solves scaling} " == *" tests "* ]]; then
  t0=$SECONDS
  PIPEKRYLOV_HALO_PEER=1 timeout 200 mpirun --oversubscribe -np 2 .device/bin/test-mpi > "$OUT/mpi-np2-halo-kernels.log" 2>&1
  echo "mpi np=2 halo link by kernels: status $? in $((SECONDS - t0)) s"
  grep -E "mpi tests|FAILED|panicked|test result" "$OUT/mpi-np2-halo-kernels.log" | sort | uniq -c | head -6
fi
if [[ " ${PARTS:-tests solves scaling} " == *" solves "* ]]; then
  for solver in cg bicgstab gmres; do
    for run in "1 0" "2 0" "2 1"; do
      set -- $run
      log="$OUT/solve-$solver-np$1-halo$2.log"
      PIPEKRYLOV_HALO_PEER=$2 timeout 90 mpirun --oversubscribe -np "$1" .device/bin/pipekrylov solve \
        --generate poisson3d:128x128x256 --solver "$solver" --backend cuda --tol 1e-8 > "$log" 2>&1
      echo "solve $solver np=$1 halo_peer=$2: status $?; $(grep -E 'stop:|relative residual|halo exchanges' "$log" | tr -s ' ' | tr '\n' ';' | cut -c1-260)"
    done
  done
fi
if [[ " ${PARTS:-tests solves scaling} " == *" scaling "* ]]; then
  OUT=$OUT AB=PIPEKRYLOV_HALO_PEER=1 STUDIES="${STUDIES:-weak strong3d strong2d}" bash scripts/h200x2-env-ab.sh
  (cd "$OUT" && tar czf scaling.tgz r*-base r*-ab && rm -rf r*-base r*-ab)
fi
