#!/usr/bin/env bash
# AMG's Jacobi weight relative to each level's spectral radius (w = 4/3 / rho, the prolongator
# smoothing's weight, instead of 0.8 min(1, 2 / rho)): the AMG table of BENCHMARKS.md with AMGCL
# built in the same call (amg-device-setup/common.sh), the base build's rows on CUDA beside the
# new ones (same kernels: the per-iteration times should agree, the iterations drop), and the
# other solvers and families (BiCGStab and GMRES(30) on convdiff3d 1M, elasticity3d 1M with block
# size 3 and the host setup). With TESTS=1, first every AMG GPU test (`--include-ignored amg`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of pipekrylov, the integration test binary (as test-integration) and the base build of 054b3ae
# as pipekrylov-base.
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/amg-jacobi-weight/run.sh
#   (writes $OUT/amg-device-setup.csv, $OUT/amg-base.csv, $OUT/amg-solvers.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 amg \
    > "$OUT/integration-amg-gpu.txt" 2>&1
  echo "integration amg: rc=$? $(grep -E '^test result' "$OUT/integration-amg-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-amg-gpu.txt" | head -5
fi
header="library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases"
source "$(dirname "$0")/../amg-device-setup/common.sh"
csv="$OUT/amg-base.csv"
echo "$header" > "$csv"
for spec in poisson2d:1048576 poisson2d:4194304 poisson3d:2097152 thermal2d:1048576 aniso2d:1048576 jump3d:1030301; do
  PK_RUN="bash .device/run pipekrylov-base" ours cuda device "$spec"
done
csv="$OUT/amg-device-setup.csv"
echo "$header" > "$csv"
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
scsv="$OUT/amg-solvers.csv"
echo "build,solver,problem,n,backend,iterations,relative_residual,setup_s,solve_s,us_per_iter" > "$scsv"
solver_row() {  # binary solver problem
  json=$(timeout 240 bash .device/run "$1" solve --generate "$3" --rhs a-ones --solver "$2" --precond amg \
    --backend cuda --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,${3%%:*},,cuda,,,,," >> "$scsv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [sys.argv[2], v["solver"], v["problem"], v["n"], v["backend"], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["solve_seconds"], v["seconds_per_iteration"] * 1e6]))
' "$json" "$1" >> "$scsv"
}
for bin in pipekrylov-base pipekrylov; do
  solver_row "$bin" bicgstab convdiff3d:1000000
  solver_row "$bin" gmres convdiff3d:1000000
  solver_row "$bin" cg elasticity3d:1000000
done
python3 - "$OUT/amg-base.csv" "$OUT/amg-device-setup.csv" "$scsv" <<'PY'
import csv, sys
for f in sys.argv[1:3]:
    print(f.split("/")[-1])
    for r in csv.DictReader(open(f)):
        print(r["library"], r["setup_on"], r["problem"], r["n"], r["backend"], r["iterations"], r["setup_s"][:6],
              r["solve_s"][:7], r["total_s"][:6], r["us_per_iter"][:6], r["operator_complexity"][:5])
print("amg-solvers.csv")
for r in csv.DictReader(open(sys.argv[3])):
    print(r["build"], r["solver"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["solve_s"][:7], r["us_per_iter"][:6])
PY
