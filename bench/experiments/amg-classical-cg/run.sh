#!/usr/bin/env bash
# Classical CG with <p, Ap> fused into the product and alpha finished on the device (two reads
# of the sums per iteration instead of three): before (`pipekrylov-base`, bc8dd86) and after
# (`pipekrylov`), alternating, twice, on CUDA and NVIDIA OpenCL: CG + AMG (the defaults: the
# device setup, `Variant::Auto` = classical CG) and classical CG without a preconditioner, with
# AMGCL built in the same call (carried in .anchors/amgcl, as amg-device-setup/common.sh says);
# then CUDA kernel traces of CG + AMG with 1, 2 and 4 lanes per CSR row forced (`--tune
# csr_lanes=K`), for the per-level times of the cycle against the automatic choice.
# With TESTS=1, first the GPU tests of the solvers and AMG (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of this commit's pipekrylov and integration test binary (as test-integration) and the base's
# pipekrylov (as pipekrylov-base).
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/amg-classical-cg/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 330 bash .device/run test-integration --include-ignored --test-threads 8 cuda_backend:: solvers:: \
    attainable_accuracy:: faults:: interrupt:: amg:: > "$OUT/integration-gpu.txt" 2>&1
  echo "integration (solvers, AMG): rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-gpu.txt" | head -5
fi
csv="$OUT/amg-device-setup.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
amgcl_rows
ccsv="$OUT/classical-cg.csv"
echo "build,rep,backend,precond,problem,n,iterations,relative_residual,setup_s,solve_s,us_per_iter,transfers_per_iteration,launches_per_iteration" > "$ccsv"
row() {  # build rep backend precond problem [more solve arguments]
  local exe=pipekrylov; [ "$1" = base ] && exe=pipekrylov-base
  json=$(timeout 240 bash .device/run "$exe" solve --generate "$5" --rhs a-ones --solver cg --precond "$4" \
    --backend "$3" --variant classical "${@:6}" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,$3,$4,${5%%:*},,,,,,,," >> "$ccsv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in sys.argv[2:6] + [v["problem"], v["n"], v["iterations"], v["relative_residual"], v["setup_seconds"],
  v["solve_seconds"], v["seconds_per_iteration"] * 1e6, v["transfers_per_iteration"], v["launches_per_iteration"]]))
' "$json" "$1" "$2" "$3" "$4" >> "$ccsv"
}
for backend in cuda opencl; do
  for case in "amg poisson2d:2048x2048" "amg poisson3d:128x128x128" "amg thermal2d:1048576" "none poisson2d:2048x2048" \
              "none poisson3d:128x128x128"; do
    for rep in 1 2; do
      for build in base new; do row "$build" "$rep" "$backend" $case; done
    done
  done
done
for problem in poisson2d:2048x2048 poisson3d:128x128x128; do
  for lanes in auto 1 2 4; do
    tune=(); [ "$lanes" = auto ] || tune=(--tune "csr_lanes=$lanes")
    bash .device/run pipekrylov solve --generate "$problem" --solver cg --precond amg --backend cuda --rhs a-ones \
      "${tune[@]}" --tune "cuda_trace=$OUT/trace-${problem%%:*}-lanes-$lanes.csv" \
      --json > "$OUT/trace-${problem%%:*}-lanes-$lanes.json" 2>> "$OUT/trace-run.log"
    for rep in 1 2; do row new "$rep" cuda amg "$problem" "${tune[@]}"; sed -i '$ s/^new,/lanes-'"$lanes"',/' "$ccsv"; done
  done
done
(cd "$OUT" && tar czf traces.tar.gz trace-*.csv trace-*.json && rm -f trace-*.csv trace-*.json)
python3 - "$csv" "$ccsv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["method"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["solve_s"][:7])
for r in csv.DictReader(open(sys.argv[2])):
    print(r["build"], r["rep"], r["backend"], r["precond"], r["problem"], r["n"], r["iterations"], r["solve_s"][:7],
          r["us_per_iter"][:7], r["transfers_per_iteration"][:4], r["launches_per_iteration"][:5])
PY
