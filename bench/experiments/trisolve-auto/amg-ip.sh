#!/usr/bin/env bash
# CG with AMG, Incomplete Poisson (scaled where the diagonal varies) and Jacobi on the H200,
# CUDA and NVIDIA OpenCL: iterations, setup and solve seconds (issues 50 item 1 and 52).
# Runs on the device machine from the repository root with a packed `pipekrylov`; writes
# $OUT/amg-ip-<card>.csv and prints it.
set -uo pipefail
out=${OUT:-/tmp}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | awk '{print tolower($2)}')
csv="$out/amg-ip-${card:-unknown}.csv"
echo "problem,n,backend,precond,iterations,stop,relative_residual,setup_s,precond_setup_host_s,precond_setup_device_s,solve_s,total_s,s_per_iter,levels,operator_complexity" > "$csv"
for backend in cuda opencl; do
  for spec in ${SPECS:-poisson2d:4194304 poisson3d:2097152 randjump3d:1000000 thermal2d:1048576 aniso2d:1048576}; do
    for pc in ${PRECONDS:-amg ip jacobi}; do
      json=$(timeout 60 bash .device/run pipekrylov solve --generate "$spec" --rhs a-ones --solver cg \
        --precond "$pc" --backend "$backend" --maxit 20000 --json 2>/dev/null)
      [ -n "$json" ] || { echo "${spec%%:*},${spec##*:},$backend,$pc,,timeout_or_error,,,,,,,,," >> "$csv"; continue; }
      python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v.get("precond_params", {})
print(",".join(str(x) for x in [v["problem"], v["n"], v["backend"], v["precond"], v["iterations"], v["stop_reason"],
  v["relative_residual"], v["setup_seconds"], v.get("precond_setup_host_seconds"), v.get("precond_setup_device_seconds"),
  v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"], v["seconds_per_iteration"], p.get("levels", ""), p.get("operator_complexity", "")]))
' "$json" >> "$csv"
    done
  done
done
column -s, -t "$csv"
