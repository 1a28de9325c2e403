#!/usr/bin/env bash
# BILU(0)'s triangular solves on a GPU: exact (one launch per level) against K block-Jacobi
# sweeps per factor, time to solution with BiCGStab (rtol 1e-8, b = A 1), for the crossover of
# `--trisolve auto` (issue 50 item 9). Runs on the device machine from the repository root with
# a packed `pipekrylov` (../../../.device); writes $OUT/trisolve-auto-<card>.csv and prints it.
#   bash bench/experiments/trisolve-auto/run.sh
set -uo pipefail
out=${OUT:-/tmp}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | awk '{print tolower($2)}')
csv="$out/trisolve-auto-${card:-unknown}.csv"
echo "problem,n,backend,trisolve,levels,iterations,stop,setup_s,solve_s,total_s,s_per_iter,apply_s,launches_per_apply" > "$csv"
for backend in cuda opencl; do
  for spec in ${SPECS:-convdiff3d:64000 convdiff3d:262144 convdiff3d:1000000 poisson2d:16384 \
              poisson2d:262144 poisson2d:1048576 elasticity3d:80000}; do
    for ts in ${MODES:-exact sweeps:1 sweeps:2 sweeps:3 auto}; do
      json=$(timeout 40 bash .device/run pipekrylov solve --generate "$spec" --rhs a-ones \
        --solver bicgstab --precond bilu0 --trisolve "$ts" --backend "$backend" --maxit 5000 --json 2>/dev/null)
      [ -n "$json" ] || { echo "${spec%%:*},${spec##*:},$backend,$ts,,,timeout,,,,,," >> "$csv"; continue; }
      python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v.get("precond_params", {})
levels = (p.get("levels_l") or 0) + (p.get("levels_u") or 0)
ts = p.get("trisolve", sys.argv[3])
if sys.argv[3] == "auto": ts = "auto=" + ts
tot = v["setup_seconds"] + v["solve_seconds"]
print(",".join(str(x) for x in [sys.argv[2].split(":")[0], v["n"], v["backend"], ts, levels, v["iterations"], v["stop_reason"],
  v["setup_seconds"], v["solve_seconds"], tot, v["seconds_per_iteration"], v.get("precond_apply_seconds"), v.get("precond_launches_per_apply")]))
' "$json" "$spec" "$ts" >> "$csv"
    done
  done
done
column -s, -t "$csv"
