#!/usr/bin/env bash
# The single-precision AMG hierarchy inside double-precision CG (issue 56 item 2), in one device
# call: the GPU tests of AMG (CUDA, NVIDIA OpenCL, host; --include-ignored, timing reports
# skipped), then CG + AMG (set up on the device) to 1e-8 with the f64 and the f32 hierarchy,
# classical CG (the f32 cycle needs it: see AmgPrecision::F32) and, for reference, the default
# pipelined CG with the f64 one; 2D Poisson 4.19M, 3D Poisson 2.1M and 16.8M, CUDA and NVIDIA
# OpenCL; AMGCL built and run in the same call. Packed on the workstation with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test amg_device_setup --test values_refresh_amg_fsai --test amg
# Writes $OUT/tests.txt, $OUT/amg-f32.csv.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for t in $(ls .device/bin | grep '^test-'); do
  timeout "${TEST_TIMEOUT:-200}" bash .device/run "$t" --include-ignored --skip refresh_time \
    > "$OUT/$t.log" 2>&1
  echo "$t: rc=$? $(grep -E '^test result' "$OUT/$t.log" | tail -1)"
done | tee "$OUT/tests.txt"
csv="$OUT/amg-f32.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
amgcl_rows
for spec in poisson2d:4194304 poisson3d:2097152 poisson3d:16777216; do
  for backend in cuda opencl; do
    [ "$backend" = opencl ] && [ "$spec" = poisson3d:16777216 ] && continue
    ours "$backend" device "$spec"
    ours "$backend" device "$spec" --variant classical --amg-precision solve
    ours "$backend" device "$spec" --variant classical --amg-precision f32
  done
done
python3 - "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["method"], r["problem"], r["backend"], r["iterations"], r["relative_residual"][:8], r["setup_s"][:6],
          r["solve_s"][:7], r["us_per_iter"][:6], r["total_s"][:6])
PY
