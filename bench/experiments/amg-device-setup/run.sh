#!/usr/bin/env bash
# AMG set up on the device (issue 52) in one device call: the GPU tests of the device setup and of
# the host-setup AMG (CUDA, NVIDIA OpenCL, host; --include-ignored), then CG + AMG time to solution
# with the setup on the device against the setup on the host and against AMGCL built in the same
# call (header-only, carried in .anchors/amgcl with the anchor driver, built with nvcc).
# b = A 1, rtol 1e-8 on the true residual. Packed on the workstation with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test amg_device_setup --test amg
# Writes $OUT/tests.txt, $OUT/amg-device-setup.csv.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for t in $(ls .device/bin | grep '^test-'); do
  timeout "${TEST_TIMEOUT:-150}" bash .device/run "$t" --include-ignored > "$OUT/$t.log" 2>&1
  echo "$t: rc=$? $(grep -E '^test result' "$OUT/$t.log" | tail -1)"
done | tee "$OUT/tests.txt"
csv="$OUT/amg-device-setup.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/common.sh"
amgcl_rows
for spec in poisson2d:65536 poisson2d:1048576 poisson2d:4194304 poisson2d:16777216 \
            poisson3d:32768 poisson3d:262144 poisson3d:2097152 poisson3d:16777216 \
            thermal2d:1048576 aniso2d:1048576 jump3d:1030301; do
  ours cuda device "$spec"
done
for spec in poisson2d:4194304 poisson3d:2097152; do
  ours cuda host "$spec"
  ours opencl device "$spec"
done
python3 - "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["setup_on"], r["method"], r["problem"], r["backend"], r["iterations"], r["setup_s"][:6],
          r["solve_s"][:7], r["us_per_iter"][:6], r["operator_complexity"][:5], r["phases"])
PY
