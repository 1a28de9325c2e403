#!/usr/bin/env bash
# On the GPU machine (device `run`, carry .device): the values-only refresh on CUDA and NVIDIA
# OpenCL (tests against fresh setups, the device-resident case, AMG and the FSAIs), the GPU
# suites the typed tuning touched, then the refresh-vs-setup benchmark at 1M unknowns on CUDA,
# OpenCL and the host (16 cores). Packed beforehand on the workstation:
#   the team's pack-for-device tool with --features "cuda opencl" -- --test values_refresh \
#     --test values_refresh_amg_fsai --bench values_refresh --test backend_agreement ... (the
#     test names in `suites` below)
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
status=0
for t in values_refresh values_refresh_amg_fsai; do
  bash .device/run "test-$t" --include-ignored --test-threads 1 2>&1 \
    | grep -E "^test |test result|panicked" | tee -a "$out/refresh_tests.txt" || status=1
done
suites=${SUITES:-"backend_agreement cuda_backend opencl_backend resident_sums_kernel resident_many_groups device_resident"}
for t in $suites; do
  [ -e ".device/bin/test-$t" ] || { echo "not packed: $t"; continue; }
  bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" \
    | sed "s/^/$t: /" | tee -a "$out/gpu_suites.txt" || status=1
done
for be in ${BENCH_BACKENDS:-cuda opencl host}; do
  bash .device/run bench-values_refresh --backend "$be" --n 1000000 --out "$out/refresh_$be.csv" \
    2>&1 | tail -n 13 || status=1
done
exit $status
