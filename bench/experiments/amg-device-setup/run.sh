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
ours() {  # backend setup problem
  json=$(timeout 240 bash .device/run pipekrylov solve --generate "$3" --rhs a-ones --solver cg \
    --precond amg --amg-setup "$2" --backend "$1" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "pipekrylov,$2,cg+amg,${3%%:*},,$1,,,,,,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]
print(",".join(str(x) for x in ["pipekrylov", sys.argv[2], chr(34) + "cg+amg(sa,jacobi)" + chr(34), v["problem"], v["n"], v["backend"], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["precond_setup_host_seconds"], v["solve_seconds"],
  v["setup_seconds"] + v["solve_seconds"], v["seconds_per_iteration"] * 1e6, p["levels"],
  p["operator_complexity"], chr(34) + " ".join(str(r) for r in p["level_rows"]) + chr(34),
  chr(34) + " ".join(f"{k}={v:.4f}" for k, v in (p.get("setup_phases_s") or {}).items()) + chr(34)]))
' "$json" "$2" >> "$csv"
}
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
