#!/usr/bin/env bash
# AMG's cycle with the fused correction and Jacobi post-sweeps (`csr_update`: x = t + s (b - A t)
# after t = x + P x_c, one kernel each, instead of SpMV, axpby, residual, diag_scale, axpby):
# CG + AMG (defaults: the device setup, `Variant::Auto` = classical CG) before (`pipekrylov-base`,
# eff8bc9) and after (`pipekrylov`), alternating, twice, CUDA and NVIDIA OpenCL, with AMGCL built
# in the same call (carried in .anchors/amgcl with the anchor driver, as amg-device-setup/common.sh
# says); then a CUDA kernel trace of 2D Poisson 4.19M, one iteration and the whole solve.
# With TESTS=1, first the GPU tests of the new kernel and of AMG (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of this commit's pipekrylov and integration test binary (as test-integration) and the base's
# pipekrylov (as pipekrylov-base).
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/amg-fused-sweep/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 200 bash .device/run test-integration --include-ignored --test-threads 8 backend_agreement amg:: \
    > "$OUT/integration-gpu.txt" 2>&1
  echo "integration backend_agreement amg::: rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-gpu.txt" | head -5
fi
csv="$OUT/amg-device-setup.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
amgcl_rows
fcsv="$OUT/amg-fused-sweep.csv"
echo "build,rep,backend,problem,n,iterations,relative_residual,setup_s,solve_s,us_per_iter,precond_apply_s,launches_per_apply" > "$fcsv"
for backend in cuda opencl; do
  for problem in poisson2d:2048x2048 poisson3d:128x128x128 poisson2d:4096x4096 thermal2d:1048576 jump3d:1030301; do
    for rep in 1 2; do
      for build in base new; do
        exe=pipekrylov; [ "$build" = base ] && exe=pipekrylov-base
        json=$(timeout 240 bash .device/run "$exe" solve --generate "$problem" --rhs a-ones --solver cg --precond amg \
          --backend "$backend" --json 2>"$OUT/last-stderr.txt")
        [ -n "$json" ] || { echo "$build,$rep,$backend,${problem%%:*},,,,,,,," >> "$fcsv"; tail -3 "$OUT/last-stderr.txt"; continue; }
        python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in sys.argv[2:5] + [v["problem"], v["n"], v["iterations"], v["relative_residual"], v["setup_seconds"],
  v["solve_seconds"], v["seconds_per_iteration"] * 1e6, v["precond_apply_seconds"], v["precond_launches_per_apply"]]))
' "$json" "$build" "$rep" "$backend" >> "$fcsv"
      done
    done
  done
done
for its in 1 full; do
  limit=(); [ "$its" = 1 ] && limit=(--max-iter 1)
  bash .device/run pipekrylov solve --generate poisson2d:2048x2048 --solver cg --precond amg --backend cuda --rhs a-ones \
    "${limit[@]}" --tune "cuda_trace=/tmp/trace-$its.csv" --json > "/tmp/trace-$its.json" 2>> "$OUT/trace-run.log"
done
python3 - "$OUT" <<'PY'
import csv, json, os, sys
out = sys.argv[1]
s = {}
for its in ("1", "full"):
    sums, counts = {}, {}
    for r in csv.DictReader(open(f"/tmp/trace-{its}.csv")):
        sums[r["kernel"]] = sums.get(r["kernel"], 0.0) + float(r["end_us"]) - float(r["start_us"])
        counts[r["kernel"]] = counts.get(r["kernel"], 0) + 1
    s[its] = (sums, counts, json.load(open(f"/tmp/trace-{its}.json"))["iterations"])
(s1, c1, i1), (sf, cf, i_f) = s["1"], s["full"]
rows = []
print(f"== poisson2d 4.19M cycle, per iteration ({i_f} iterations): {(sum(sf.values()) - sum(s1.values())) / (i_f - i1):.0f} us")
for k in sorted(sf, key=lambda k: -(sf[k] - s1.get(k, 0))):
    n = (cf[k] - c1.get(k, 0)) / (i_f - i1)
    if n > 0:
        us = (sf[k] - s1.get(k, 0)) / (i_f - i1)
        print(f"  {k:30} {us:8.1f} us {n:6.1f} launches")
        rows.append(["poisson2d", "per_iteration", k, round(n, 2), round(us, 1)])
with open(os.path.join(out, "kernel-times.csv"), "w") as f:
    f.write("problem,part,kernel,launches,sum_us\n")
    for r in rows:
        f.write(",".join(map(str, r)) + "\n")
PY
python3 - "$csv" "$fcsv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["method"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["solve_s"][:7])
for r in csv.DictReader(open(sys.argv[2])):
    print(r["build"], r["rep"], r["backend"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["solve_s"][:7],
          r["us_per_iter"][:7], r["launches_per_apply"])
PY
