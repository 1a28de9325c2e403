#!/usr/bin/env bash
# AMG inside the device-resident batches (issue 56 item 3), one device call: tests/device_resident.rs
# (AMG's resident solves equal the synchronous ones bit for bit, CUDA and NVIDIA OpenCL) and
# tests/ilu.rs (after the AMD change), then CG + AMG (device setup) on 2D Poisson n = 4K..1M and 3D
# Poisson 32K..1M, pipelined sync / pipelined resident / classical sync, CUDA: us per iteration
# against the synchronized time of one V-cycle (`precond_apply_seconds`, median of 10). Packed with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test device_resident --test ilu
# Writes $OUT/amg-resident.csv and the test logs.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for t in device_resident ilu; do
  timeout 240 bash .device/run "test-$t" --include-ignored --nocapture --test-threads 1 > "$OUT/test-$t.log" 2>&1
  echo "test-$t: rc=$? $(grep -E '^test result' "$OUT/test-$t.log" | tail -1)" | tee -a "$OUT/tests.txt"
done
grep -oE "(host|opencl|cuda) +[A-Za-z0-9_]+ +n +[0-9]+ its.*" "$OUT/test-ilu.log" > "$OUT/ilu_real_matrices.txt"
csv="$OUT/amg-resident.csv"
echo "problem,n,backend,variant,execution,iterations,relative_residual,setup_s,solve_s,us_per_iter,cycle_us,levels" > "$csv"
for spec in poisson2d:4096 poisson2d:16384 poisson2d:65536 poisson2d:262144 poisson2d:1048576 \
            poisson3d:32768 poisson3d:262144 poisson3d:1030301; do
  for mode in "pipelined sync" "pipelined resident" "classical sync"; do
    set -- $mode
    json=$(timeout 120 bash .device/run pipekrylov solve --generate "$spec" --rhs a-ones --solver cg \
      --precond amg --variant "$1" --execution "$2" --backend cuda --json 2>>"$OUT/stderr.txt")
    python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]
print(",".join(str(x) for x in [v["problem"], v["n"], v["backend"], sys.argv[2], sys.argv[3], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["solve_seconds"], v["seconds_per_iteration"] * 1e6,
  v["precond_apply_seconds"] * 1e6, p["levels"]]))' "$json" "$1" "$2" >> "$csv" || echo "$spec $mode failed"
  done
done
cat "$OUT/tests.txt"
python3 -c "import csv,sys; [print(*r.values()) for r in csv.DictReader(open(sys.argv[1]))]" "$csv"
