#!/usr/bin/env bash
# The AMG table of BENCHMARKS.md again after the finest level's second-set rule: AMGCL (built here
# with nvcc from its header-only source, carried in .anchors/amgcl with the anchor driver, as
# amg-device-setup/common.sh says) and ours in the same call, CG + AMG to 1e-8 (true), b = A 1:
# the device setup on CUDA over the generated families, on NVIDIA OpenCL at 1M-16.8M, and the
# host setup at the anchor sizes. Packed as run.sh beside it says.
# Run: OUT=$OUT bash bench/experiments/amg-finest-share/anchor.sh   (writes $OUT/amg-device-setup.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
csv="$OUT/amg-device-setup.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
amgcl_rows
for spec in poisson2d:65536 poisson2d:1048576 poisson2d:4194304 poisson2d:16777216 \
            poisson3d:32768 poisson3d:262144 poisson3d:2097152 poisson3d:16777216 \
            thermal2d:1048576 aniso2d:1048576 jump3d:1030301; do
  ours cuda device "$spec"
  case "$spec" in *:65536|*:32768|*:262144) ;; *) ours opencl device "$spec" ;; esac
done
for spec in poisson2d:4194304 poisson3d:2097152; do
  ours cuda host "$spec"
done
python3 - "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["setup_on"], r["method"], r["problem"], r["n"], r["backend"], r["iterations"], r["setup_s"][:6],
          r["solve_s"][:7], r["total_s"][:6], r["operator_complexity"][:5])
PY
