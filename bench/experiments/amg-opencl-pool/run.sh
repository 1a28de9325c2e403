#!/usr/bin/env bash
# The OpenCL backend's pool of dropped buffers (src/backend/opencl/pool.rs) against the build
# before: CG + AMG setup, solve and time to solution on NVIDIA OpenCL (issue 52's OpenCL goal:
# within 1.25x of CUDA at n >= 1M), CUDA once for the ratio, the setup's peak bytes, and the
# OpenCL kernel timeline of 2D Poisson 1M after the change (idle time between kernels). With
# TESTS=1, first the integration tests named by TEST_FILTER (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of pipekrylov and the integration tests (test-integration), the base as pipekrylov-base, and
# other builds to compare named in BUILDS (binaries in .device/bin).
# Run: OUT=$OUT [TESTS=1] [TEST_FILTER=...] [REPS="1 2"] [SPECS="..."] [BUILDS="..."] bash bench/experiments/amg-opencl-pool/run.sh
#   (writes $OUT/amg-opencl-pool.csv, $OUT/amg-opencl-trace.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=$(dirname "$0")
if [ "${TESTS:-0}" = 1 ]; then
  timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 ${TEST_FILTER:-opencl_pool} \
    > "$OUT/integration-gpu.txt" 2>&1
  echo "integration: rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-gpu.txt" | head -5
fi
csv="$OUT/amg-opencl-pool.csv"
echo "build,backend,problem,n,iterations,relative_residual,setup_s,solve_s,total_s,us_per_iter,setup_peak_bytes" > "$csv"
row() {  # binary backend problem
  json=$(timeout 240 bash .device/run "$1" solve --generate "$3" --rhs a-ones --solver cg --precond amg \
    --backend "$2" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,${3%%:*},,,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [sys.argv[2], v["backend"], v["problem"], v["n"], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"],
  v["seconds_per_iteration"] * 1e6, v.get("precond_setup_peak_bytes", "")]))
' "$json" "$1" >> "$csv"
}
for rep in ${REPS:-1 2}; do
  for spec in ${SPECS:-poisson2d:1048576 poisson2d:4194304 poisson2d:16777216 poisson3d:2097152 poisson3d:16777216 \
              thermal2d:1048576 aniso2d:1048576 jump3d:1030301}; do
    for bin in ${BUILDS:-pipekrylov-base pipekrylov}; do row "$bin" opencl "$spec"; done
    [ "$rep" = 1 ] && row pipekrylov cuda "$spec"
  done
done
for backend in cuda opencl; do
  timeout 240 bash .device/run pipekrylov solve --generate poisson2d:1048576 --rhs a-ones --solver cg --precond amg \
    --backend "$backend" --tune "${backend}_trace=$OUT/trace-poisson2d-1048576-$backend.csv" --json \
    > "$OUT/trace-poisson2d-1048576-$backend.json" 2>> "$OUT/trace-run.log"
done
python3 "$here/../amg-opencl-trace/trace_compare.py" "$OUT" > "$OUT/amg-opencl-trace.csv"
(cd "$OUT" && tar czf traces.tar.gz trace-*.csv trace-*.json && rm -f trace-*.csv trace-*.json)
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print(r["build"], r["backend"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["solve_s"][:7],
          r["total_s"][:6], r["us_per_iter"][:7], r["setup_peak_bytes"])
PY
head -40 "$OUT/amg-opencl-trace.csv"
