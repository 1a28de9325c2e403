#!/usr/bin/env bash
# Issue 55: block-ISAI with host factors keeps its refresh state from the setup on (315ebe0), so
# the first values refresh is a values-only one too (reverted after this measurement: 2.4x the
# preconditioner's device memory; see bench/log/2026-12-02-plain-call-power-isai.md). On the GPU machine:
#  1. the values_refresh bench (refresh against preconditioner setup + CSR upload, first and
#     loop refresh) at n = 1M on CUDA and NVIDIA OpenCL, every preconditioner (AMG's device setup
#     also changed in 567259c), and on the host for isai and amg;
#  2. ISAI's setup time and device memory, this build against 1a8a3b6 (`solve --precond isai
#     --json` on 3D Poisson 1M, CUDA; the builds alternated, two repetitions).
# Packed on the workstation: `pack-for-device --features "cuda opencl cli" -- --bin pipekrylov
#   --test integration --bench values_refresh`, the base's release `pipekrylov` copied to
#   .device/bin/pipekrylov-base.
# Run: OUT=$OUT bash bench/experiments/isai-kept-state/run.sh  (CSV and logs under $OUT)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for backend in cuda opencl; do
  timeout 240 bash .device/run test-values_refresh --backend $backend --n 1000000 \
    --out "$OUT/refresh_$backend.csv" > "$OUT/refresh_$backend.txt" 2>&1
  echo "values_refresh $backend: rc=$?"
done
for only in isai amg; do
  timeout 200 bash .device/run test-values_refresh --backend host --n 1000000 --only $only \
    --out "$OUT/refresh_host_$only.csv" > "$OUT/refresh_host_$only.txt" 2>&1
  echo "values_refresh host $only: rc=$?"
done
csv="$OUT/isai-setup.csv"
echo "build,rep,backend,n,iterations,setup_s,solve_s,precond_memory_bytes" > "$csv"
for rep in 1 2; do
  for bin in pipekrylov-base pipekrylov; do
    json=$(timeout 120 bash .device/run "$bin" solve --generate poisson3d:1000000 --rhs a-ones --solver cg \
      --precond isai --backend cuda --tol 1e-8 --json 2>"$OUT/last-stderr.txt")
    [ -n "$json" ] || { echo "$bin,$rep,cuda,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; continue; }
    python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [sys.argv[2], sys.argv[3], v["backend"], v["n"], v["iterations"],
  v["setup_seconds"], v["solve_seconds"], v.get("precond_memory_bytes", "")]))
' "$json" "$bin" "$rep" >> "$csv"
  done
done
echo "== isai setup and memory"; column -s, -t "$csv"
for f in "$OUT"/refresh_*.txt; do echo "== $f"; tail -n 16 "$f"; done
