#!/usr/bin/env bash
# Issue 52's memory goal after SpGEMM's symbolic phase went to blocks of rows: the AMG
# device setup's peak (`solve --json`: `precond_setup_peak_bytes` / `matrix_device_bytes`) and
# setup time, CG + AMG (defaults, device setup), b = A 1, rtol 1e-8, on 2D Poisson 2048^2 (4.19M)
# and 3D Poisson 128^3 (2.1M) and 256^3 (16.8M), CUDA and NVIDIA OpenCL, one H200: the commit
# before (d25640e, `pipekrylov-base`) and this one (`pipekrylov`), alternating, 3 runs each.
# With TESTS=1, first the GPU integration tests (`--include-ignored`; the CLI tests skipped:
# they name the workstation's binary path).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of this commit's pipekrylov and integration test binary (as test-integration) and the base
# commit's pipekrylov (as pipekrylov-base); `.device/run NAME ARGS` runs one with the OpenCL
# environment.
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/spgemm-blocks/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 420 bash .device/run test-integration --include-ignored --test-threads 8 \
    --skip cli:: --skip cli_defects:: --skip latency_report --skip driver_out_of_memory_is_recoverable \
    --skip size_table_and_timing --skip refresh_time_against_setup_time > "$OUT/integration-gpu.txt" 2>&1
  echo "integration: rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
  grep -E "AMG setup peak" "$OUT/integration-gpu.txt"
fi
csv="$OUT/spgemm-blocks.csv"
echo "build,backend,problem,run,n,format,iterations,converged,setup_s,solve_s,matrix_device_bytes,precond_setup_peak_bytes,precond_memory_bytes,peak_over_a" > "$csv"
for backend in cuda opencl; do
  for problem in poisson2d:2048x2048 poisson3d:128x128x128 poisson3d:256x256x256; do
    for run in 1 2 3; do
      for build in base new; do
        exe=pipekrylov; [ "$build" = base ] && exe=pipekrylov-base
        json=$(timeout 200 bash .device/run "$exe" solve --generate "$problem" --solver cg --precond amg \
          --amg-setup device --backend "$backend" --rhs a-ones --json --rtol 1e-8)
        JSON="$json" B="$backend" P="$problem" BUILD="$build" RUN="$run" python3 -c '
import json, os
v = json.loads(os.environ["JSON"])
a, p = v["matrix_device_bytes"], v["precond_setup_peak_bytes"]
print(",".join(str(x) for x in [os.environ["BUILD"], os.environ["B"], os.environ["P"], os.environ["RUN"], v["n"], v.get("format"),
      v["iterations"], v["converged"], round(v["precond_setup_seconds"], 4), round(v["solve_seconds"], 4), a, p,
      v["precond_memory_bytes"], round(p / a, 3)]))
' >> "$csv" || echo "$build $backend $problem: failed: $json" | head -c 600
      done
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'backend':8} {'problem':24} {'its b/n':>8} {'setup s base':>12} {'new':>8} {'peak/A base':>11} {'new':>6}")
keys = sorted({(r["backend"], r["problem"]) for r in rows})
for b, p in keys:
    g = lambda build, f: [float(r[f]) for r in rows if (r["backend"], r["problem"], r["build"]) == (b, p, build)]
    its = lambda build: "/".join(sorted({r["iterations"] for r in rows if (r["backend"], r["problem"], r["build"]) == (b, p, build)}))
    med = lambda build, f: statistics.median(g(build, f)) if g(build, f) else float("nan")
    print(f"{b:8} {p:24} {its('base') + '/' + its('new'):>8} {med('base', 'setup_s'):12.4f} {med('new', 'setup_s'):8.4f} "
          f"{med('base', 'peak_over_a'):11.3f} {med('new', 'peak_over_a'):6.3f}")
PY
