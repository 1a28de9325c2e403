#!/usr/bin/env bash
# NVIDIA OpenCL's plain CSR products on the element-wise grid over rows x lanes (as CUDA's),
# against the build before (the reduction plan over rows alone): CG + AMG time to solution on
# both runtimes (issue 52's OpenCL goal: within 1.25x of CUDA at n >= 1M), unpreconditioned CG
# (the finest products, with and without dots), and the OpenCL kernel timeline of 3D Poisson 2.1M
# after the change. With TESTS=1, first the integration tests whose names contain `opencl`
# (`--include-ignored`: NVIDIA OpenCL beside PoCL and the host).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of pipekrylov and the integration tests (test-integration), and the base as pipekrylov-base.
# Run: OUT=$OUT [TESTS=1] [TEST_FILTER=...] [REPS="1 2"] [SPECS="..."] bash bench/experiments/amg-opencl-grid/run.sh (writes
#   $OUT/amg-opencl-grid.csv, $OUT/amg-opencl-trace.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=$(dirname "$0")
if [ "${TESTS:-0}" = 1 ]; then
  timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 "${TEST_FILTER:-opencl}" \
    > "$OUT/integration-opencl-gpu.txt" 2>&1
  echo "integration opencl: rc=$? $(grep -E '^test result' "$OUT/integration-opencl-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-opencl-gpu.txt" | head -5
fi
csv="$OUT/amg-opencl-grid.csv"
echo "build,backend,precond,problem,n,iterations,relative_residual,setup_s,solve_s,total_s,us_per_iter" > "$csv"
row() {  # binary backend precond problem
  json=$(timeout 240 bash .device/run "$1" solve --generate "$4" --rhs a-ones --solver cg --precond "$3" \
    --backend "$2" --maxit 20000 --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,$3,${4%%:*},,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [sys.argv[2], v["backend"], sys.argv[3], v["problem"], v["n"], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"],
  v["seconds_per_iteration"] * 1e6]))
' "$json" "$1" "$3" >> "$csv"
}
for rep in ${REPS:-1 2}; do
  for spec in ${SPECS:-poisson2d:1048576 poisson2d:4194304 poisson2d:16777216 poisson3d:2097152 poisson3d:16777216 \
              thermal2d:1048576 aniso2d:1048576 jump3d:1030301}; do
    for bin in pipekrylov-base pipekrylov; do row "$bin" opencl amg "$spec"; done
    [ "$rep" = 1 ] && row pipekrylov cuda amg "$spec"
  done
done
for spec in poisson2d:4194304 poisson3d:2097152; do
  for bin in pipekrylov-base pipekrylov; do row "$bin" opencl none "$spec"; done
done
timeout 240 bash .device/run pipekrylov solve --generate poisson3d:2097152 --rhs a-ones --solver cg --precond amg \
  --backend opencl --tune "opencl_trace=$OUT/trace-poisson3d-2097152-opencl.csv" --json \
  > "$OUT/trace-poisson3d-2097152-opencl.json" 2>> "$OUT/trace-run.log"
python3 "$here/../amg-opencl-trace/trace_compare.py" "$OUT" > "$OUT/amg-opencl-trace.csv"
(cd "$OUT" && tar czf traces.tar.gz trace-*.csv trace-*.json && rm -f trace-*.csv trace-*.json)
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print(r["build"], r["backend"], r["precond"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["solve_s"][:7],
          r["total_s"][:6], r["us_per_iter"][:7])
PY
cat "$OUT/amg-opencl-trace.csv"
