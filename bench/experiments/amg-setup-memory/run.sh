#!/usr/bin/env bash
# Issue 52's memory goal, "peak device memory of the setup <= 4x A's", measured with the backends'
# buffer ledger (`VectorOps::memory_use`; `solve --json` fields `matrix_device_bytes` and
# `precond_setup_peak_bytes`): CG + AMG (defaults, device setup) on 2D Poisson 2048^2 (4.19M)
# and 3D Poisson 128^3 (2.1M) and 256^3 (16.8M) on CUDA and NVIDIA OpenCL, one H200. With
# TESTS=1, first the GPU integration tests (`--include-ignored`, the CLI tests skipped: they
# name the workstation's binary path).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`) of
# this commit's pipekrylov and the integration test binary (as test-integration); `.device/run NAME
# ARGS` runs one with the OpenCL environment.
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/amg-setup-memory/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 420 bash .device/run test-integration --include-ignored --test-threads 8 \
    --skip cli:: --skip cli_defects:: --skip latency_report --skip driver_out_of_memory_is_recoverable \
    --skip size_table_and_timing --skip refresh_time_against_setup_time > "$OUT/integration-gpu.txt" 2>&1
  echo "integration: rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
  grep -E "AMG setup peak" "$OUT/integration-gpu.txt"
fi
csv="$OUT/amg-setup-memory.csv"
echo "backend,problem,n,iterations,converged,setup_s,solve_s,matrix_device_bytes,precond_setup_peak_bytes,precond_memory_bytes,peak_over_a" > "$csv"
for backend in cuda opencl; do
  for problem in poisson2d:2048x2048 poisson3d:128x128x128 poisson3d:256x256x256; do
    json=$(timeout 200 bash .device/run pipekrylov solve --generate "$problem" --solver cg --precond amg \
      --amg-setup device --backend "$backend" --json --rtol 1e-8)
    JSON="$json" B="$backend" P="$problem" python3 -c '
import json, os
v = json.loads(os.environ["JSON"])
a, p = v["matrix_device_bytes"], v["precond_setup_peak_bytes"]
print(",".join(str(x) for x in [os.environ["B"], os.environ["P"], v["n"], v["iterations"], v["converged"],
      round(v["precond_setup_seconds"], 4), round(v["solve_seconds"], 4), a, p, v["precond_memory_bytes"], round(p / a, 3)]))
' >> "$csv" || echo "$backend $problem: failed: $json" | head -c 600
  done
done
python3 -c "import csv,sys; [print('  '.join(f'{c:>14}' for c in r)) for r in csv.reader(open(sys.argv[1]))]" "$csv"
