#!/usr/bin/env bash
# The values-only refresh of AMG set up on the device (issues 52, 55) and the AMG smoothers on the
# device-built hierarchy, in one device call:
#   1. the GPU tests (CUDA, NVIDIA OpenCL, host; --include-ignored, the host timing report skipped);
#   2. the refresh against the setup: the ignored timing test on CUDA (2D Poisson 512^2, 2048^2,
#      3D Poisson 64^3, 128^3), its lines into $OUT/refresh-times.txt;
#   3. CG + AMG (set up on the device) with the Jacobi and Chebyshev smoothers on 2D Poisson
#      4.19M and 3D Poisson 2.1M, CUDA and NVIDIA OpenCL, AMGCL built and run in the same call.
# Packed on the workstation with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test values_refresh_amg_fsai --test amg_device_setup
# Writes $OUT/tests.txt, $OUT/refresh-times.txt (committed as refresh-times-<commit>.txt), $OUT/amg-smoothers.csv.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for t in $(ls .device/bin | grep '^test-'); do
  timeout "${TEST_TIMEOUT:-200}" bash .device/run "$t" --include-ignored --skip host_refresh_time \
    --skip cuda_refresh_time > "$OUT/$t.log" 2>&1
  echo "$t: rc=$? $(grep -E '^test result' "$OUT/$t.log" | tail -1)"
done | tee "$OUT/tests.txt"
timeout 300 bash .device/run test-values_refresh_amg_fsai --ignored --nocapture cuda_refresh_time \
  2>&1 | grep -E '^cuda ' | tee "$OUT/refresh-times.txt"
csv="$OUT/amg-smoothers.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
amgcl_rows
for spec in poisson2d:4194304 poisson3d:2097152; do
  for backend in cuda opencl; do
    for smoother in jacobi chebyshev:2 chebyshev:3; do
      ours "$backend" device "$spec" --amg-smoother "$smoother"
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["method"], r["problem"], r["backend"], r["iterations"], r["setup_s"][:6],
          r["solve_s"][:7], r["us_per_iter"][:6], r["total_s"][:6])
PY
