#!/usr/bin/env bash
# pipekrylov's CG + AMG against AMGCL's CG + AMG on the same GPU in one device call (issue 52):
# AMGCL (header-only, carried in .anchors/amgcl with the anchor driver, built here with nvcc)
# on 2D Poisson 2048^2 and 3D Poisson 128^3; pipekrylov CG + AMG on the 2D and 3D Poisson
# ladders (CUDA) and at the two anchor sizes on NVIDIA OpenCL. b = A 1, rtol 1e-8.
# Writes $OUT/amg-vs-amgcl-<card>.csv.
set -uo pipefail
out=${OUT:-/tmp}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | awk '{print tolower($2)}')
csv="$out/amg-vs-amgcl-${card:-unknown}.csv"
echo "library,problem,n,backend,method,iterations,relative_residual,setup_s,solve_s,total_s,us_per_iter,levels,operator_complexity" > "$csv"
if nvcc -O3 -std=c++17 -arch=sm_90 -DAMGCL_NO_BOOST -I .anchors/amgcl .anchors/amgcl/driver.cu -lcusparse -o /tmp/amgcl_driver 2> "$out/amgcl-build.log"; then
  for p in "poisson2d 2048" "poisson3d 128"; do
    # amgcl,problem,n,method,iterations,error,setup_s,solve_s,us_per_iter
    # The driver prints amgcl,problem,n,method,iterations,error,setup_s,solve_s,us_per_iter, and
    # a method may hold a comma ("cg+amg(sa,spai0)"): joined back and quoted.
    /tmp/amgcl_driver $p 2>>"$out/amgcl-run.log" | grep '^amgcl,' | python3 -c '
import sys
for line in sys.stdin:
    f = line.strip().split(",")
    method, (it, err, setup, solve, us) = ",".join(f[3:-5]), f[-5:]
    print(",".join(["amgcl", f[1], f[2], "cuda", chr(34) + method + chr(34), it, err, setup, solve,
                    str(float(setup) + float(solve)), us, "", ""]))' >> "$csv"
  done
else
  echo "amgcl build failed: see amgcl-build.log"
fi
ours() {  # backend spec
  json=$(timeout 200 bash .device/run pipekrylov solve --generate "$2" --rhs a-ones --solver cg \
    --precond amg --backend "$1" --json 2>/dev/null)
  [ -n "$json" ] || { echo "pipekrylov,${2%%:*},,$1,cg+amg,,,,,,,," >> "$csv"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]
print(",".join(str(x) for x in ["pipekrylov", v["problem"], v["n"], v["backend"], chr(34) + "cg+amg(sa,jacobi)" + chr(34), v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"],
  v["seconds_per_iteration"] * 1e6, p["levels"], p["operator_complexity"]]))
' "$json" >> "$csv"
}
for spec in poisson2d:65536 poisson2d:262144 poisson2d:1048576 poisson2d:4194304 poisson2d:16777216 \
            poisson3d:32768 poisson3d:262144 poisson3d:2097152 poisson3d:16777216; do
  ours cuda "$spec"
done
for spec in poisson2d:4194304 poisson3d:2097152; do ours opencl "$spec"; done
cat "$csv"
