#!/usr/bin/env bash
# The device aggregation's first independent set with degree keys (`amg_mis2_priority`: the
# nodes with the fewest undecided strong neighbours first): CG + AMG (defaults) before
# (`pipekrylov-base`, bc8dd86) and after (`pipekrylov`), alternating, twice, on CUDA and NVIDIA
# OpenCL, with AMGCL built in the same call (carried in .anchors/amgcl, as
# amg-device-setup/common.sh says); OpenCL's classical against pipelined CG + AMG (which `auto`
# should pick there); then a CUDA kernel trace of the whole 2D Poisson 4.19M solve (every launch,
# for the per-level times of the cycle).
# With TESTS=1, first the GPU tests of the device setup (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of this commit's pipekrylov and integration test binary (as test-integration) and the base's
# pipekrylov (as pipekrylov-base).
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/amg-mis2-priority/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 amg_device_setup:: \
    > "$OUT/integration-gpu.txt" 2>&1
  echo "integration amg_device_setup::: rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-gpu.txt" | head -5
fi
csv="$OUT/amg-device-setup.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
amgcl_rows
pcsv="$OUT/amg-mis2-priority.csv"
echo "build,rep,backend,variant,problem,n,iterations,relative_residual,setup_s,solve_s,us_per_iter,operator_complexity,level_rows" > "$pcsv"
row() {  # build rep backend variant problem
  local exe=pipekrylov; [ "$1" = base ] && exe=pipekrylov-base
  json=$(timeout 240 bash .device/run "$exe" solve --generate "$5" --rhs a-ones --solver cg --precond amg \
    --backend "$3" --variant "$4" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,$3,$4,${5%%:*},,,,,,,," >> "$pcsv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]
print(",".join(str(x) for x in sys.argv[2:6] + [v["problem"], v["n"], v["iterations"], v["relative_residual"], v["setup_seconds"],
  v["solve_seconds"], v["seconds_per_iteration"] * 1e6, p["operator_complexity"], chr(34) + " ".join(map(str, p["level_rows"])) + chr(34)]))
' "$json" "$1" "$2" "$3" "$4" >> "$pcsv"
}
for backend in cuda opencl; do
  for problem in poisson2d:2048x2048 poisson3d:128x128x128 thermal2d:1048576 aniso2d:1048576 jump3d:1030301; do
    for rep in 1 2; do
      for build in base new; do row "$build" "$rep" "$backend" auto "$problem"; done
    done
  done
done
for problem in poisson2d:2048x2048 poisson3d:128x128x128; do
  for rep in 1 2; do
    for variant in classical pipelined; do row new "$rep" opencl "$variant" "$problem"; done
  done
done
bash .device/run pipekrylov solve --generate poisson2d:2048x2048 --solver cg --precond amg --backend cuda --rhs a-ones \
  --tune "cuda_trace=$OUT/trace-poisson2d-4m.csv" --json > "$OUT/trace-poisson2d-4m.json" 2>> "$OUT/trace-run.log"
python3 - "$csv" "$pcsv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["method"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["solve_s"][:7])
for r in csv.DictReader(open(sys.argv[2])):
    print(r["build"], r["rep"], r["backend"], r["variant"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6],
          r["solve_s"][:7], r["us_per_iter"][:7], r["operator_complexity"][:5])
PY
