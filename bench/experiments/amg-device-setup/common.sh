#!/usr/bin/env bash
# Shared by the AMG device scripts (sourced, with $OUT and $csv set; the CSV columns are
# amg-device-setup/run.sh's):
#   amgcl_rows: AMGCL built here with nvcc (header-only, carried in .anchors/amgcl with the anchor
#     driver) and run on 2D Poisson 2048^2 and 3D Poisson 128^3;
#   ours BACKEND SETUP PROBLEM [ARGS...]: `pipekrylov solve` with CG + AMG, b = A 1, one row
#     ($PK_RUN runs the binary: default `bash .device/run pipekrylov`, the packed one).
amgcl_rows() {
  if nvcc -O3 -std=c++17 -arch=sm_90 -DAMGCL_NO_BOOST -I .anchors/amgcl .anchors/amgcl/driver.cu -lcusparse -o /tmp/amgcl_driver 2> "$OUT/amgcl-build.log"; then
    for p in "poisson2d 2048" "poisson3d 128"; do
      # The driver prints amgcl,problem,n,method,iterations,error,setup_s,solve_s,us_per_iter.
      /tmp/amgcl_driver $p 2>>"$OUT/amgcl-run.log" | grep '^amgcl,' | python3 -c '
import sys
for line in sys.stdin:
    f = line.strip().split(",")
    method, (it, err, setup, solve, us) = ",".join(f[3:-5]), f[-5:]
    print(",".join(["amgcl", "host", chr(34) + method + chr(34), f[1].split(":")[0], f[2], "cuda", it, err, setup, setup, solve,
                    str(float(setup) + float(solve)), us, "", "", "", ""]))' >> "$csv"
    done
  else
    echo "amgcl build failed: see amgcl-build.log"
  fi
}

ours() {  # backend setup problem [more solve arguments, e.g. --amg-smoother chebyshev:2]
  json=$(timeout 240 ${PK_RUN:-bash .device/run pipekrylov} solve --generate "$3" --rhs a-ones --solver cg \
    --precond amg --amg-setup "$2" --backend "$1" "${@:4}" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "pipekrylov,$2,cg+amg,${3%%:*},,$1,,,,,,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]
sm = p["smoother"]
sm = sm.lower().replace("chebyshev { degree: ", "chebyshev:").replace(" }", "")
print(",".join(str(x) for x in ["pipekrylov", sys.argv[2], chr(34) + " ".join(["cg+amg(sa," + sm + ")"] + [x for x in sys.argv[3:] if x != "--amg-smoother" and not x.startswith(("jacobi", "chebyshev", "l1"))]) + chr(34), v["problem"], v["n"], v["backend"], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["precond_setup_host_seconds"], v["solve_seconds"],
  v["setup_seconds"] + v["solve_seconds"], v["seconds_per_iteration"] * 1e6, p["levels"],
  p["operator_complexity"], chr(34) + " ".join(str(r) for r in p["level_rows"]) + chr(34),
  chr(34) + " ".join(f"{k}={v:.4f}" for k, v in (p.get("setup_phases_s") or {}).items()) + chr(34)]))
' "$json" "$2" "${@:4}" >> "$csv"
}
