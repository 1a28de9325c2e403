#!/usr/bin/env bash
# Four H200s (x4 machine), 2026-11-28: what the last session changed without a GPU. The GPU
# agreement tests of the kernels (backend_agreement on CUDA and NVIDIA OpenCL, cuda_nvrtc), the
# distributed tests with one GPU per rank (each rank prints its device) at 4 ranks with the
# device-to-device global sums on (PIPEKRYLOV_SUMS_PEER=1) and off, and at 2 ranks with them on.
# The scaling A/B of the sums link is bench/experiments/sums-link-scaling.sh.
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200x4-verify.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
nvidia-smi -L
if [ -z "${NOGPUTESTS:-}" ]; then
  for t in backend_agreement cuda_nvrtc; do
    timeout 240 .device/bin/test-$t --include-ignored > "$OUT/test-$t.log" 2>&1
    echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | head -4
  done
fi
run_mpi() { # np sums timeout
  local t0=$SECONDS
  PIPEKRYLOV_SUMS_PEER=$2 timeout $3 mpirun --oversubscribe -np $1 .device/bin/test-mpi > "$OUT/mpi-np$1-sums$2.log" 2>&1
  echo "mpi np=$1 sums=$2: status $? in $((SECONDS - t0)) s"
  grep -E "cuda device|mpi tests|FAILED|panicked|error" "$OUT/mpi-np$1-sums$2.log" | sort | uniq | head -8
  grep "^cuda" "$OUT/mpi-np$1-sums$2.log" | awk '{print}' | head -3
}
run_mpi 4 1 360
run_mpi 4 0 300
run_mpi 2 1 240
