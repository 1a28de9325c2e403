#!/usr/bin/env bash
# The AMG device setup after the transpose's rank sort (`csr_rank_rows`, one work-item per entry,
# instead of an insertion sort per row), the blocked Gauss-Jordan inverse of the coarsest level
# and the parallel finiteness check of A: CG + AMG (defaults: the device setup), b = A 1, rtol
# 1e-8 on the true residual, f64, one H200, CUDA and NVIDIA OpenCL, the commit before
# (`pipekrylov-base`) and this one (`pipekrylov`) alternating, twice. Then a CUDA kernel trace
# (`--tune cuda_trace=FILE`) of 2D Poisson 4.19M and 3D Poisson 2.1M, one iteration and the whole
# solve, so the cycle's kernels per iteration are the difference.
# With TESTS=1, first the AMG GPU integration tests (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of this commit's pipekrylov and integration test binary (as test-integration) and the base
# commit's pipekrylov (as pipekrylov-base); `.device/run NAME ARGS` runs one with the OpenCL
# environment.
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/amg-setup-rank/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 amg \
    > "$OUT/integration-amg-gpu.txt" 2>&1
  echo "integration amg: rc=$? $(grep -E '^test result' "$OUT/integration-amg-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-amg-gpu.txt" | head -5
fi
csv="$OUT/amg-setup-rank.csv"
echo "build,rep,backend,problem,n,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,setup_phases" > "$csv"
run_one() {  # build rep backend problem
  local exe=pipekrylov; [ "$1" = base ] && exe=pipekrylov-base
  json=$(timeout 240 bash .device/run "$exe" solve --generate "$4" --rhs a-ones --solver cg --precond amg \
    --backend "$3" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,$3,${4%%:*},,,,,,,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]
ph = " ".join(f"{k}={x:.4f}" for k, x in (p.get("setup_phases_s") or {}).items())
print(",".join(str(x) for x in sys.argv[2:5] + [v["problem"], v["n"], v["iterations"], v["relative_residual"],
  v["setup_seconds"], v["precond_setup_host_seconds"], v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"],
  v["seconds_per_iteration"] * 1e6, p["levels"], p["operator_complexity"],
  chr(34) + " ".join(str(r) for r in p["level_rows"]) + chr(34), chr(34) + ph + chr(34)]))
' "$json" "$1" "$2" "$3" >> "$csv"
}
for backend in cuda opencl; do
  for problem in poisson2d:2048x2048 poisson2d:4096x4096 poisson3d:128x128x128 poisson3d:256x256x256 jump3d:1030301; do
    for rep in 1 2; do
      for build in base new; do
        run_one "$build" "$rep" "$backend" "$problem"
      done
    done
  done
done
for p in poisson2d:2048x2048 poisson3d:128x128x128; do
  for its in 1 full; do
    limit=(); [ "$its" = 1 ] && limit=(--max-iter 1)
    bash .device/run pipekrylov solve --generate "$p" --solver cg --precond amg --backend cuda --rhs a-ones \
      "${limit[@]}" --tune "cuda_trace=$OUT/trace-${p%%:*}-$its.csv" --json > "$OUT/trace-${p%%:*}-$its.json" 2>> "$OUT/trace-run.log"
  done
done
python3 - "$OUT" <<'PY'
import csv, json, os, sys
out = sys.argv[1]
rows = []
for problem in ("poisson2d", "poisson3d"):
    sums = {}
    for its in ("1", "full"):
        s, c = {}, {}
        for r in csv.DictReader(open(os.path.join(out, f"trace-{problem}-{its}.csv"))):
            d = float(r["end_us"]) - float(r["start_us"])
            s[r["kernel"]] = s.get(r["kernel"], 0.0) + d
            c[r["kernel"]] = c.get(r["kernel"], 0) + 1
        sums[its] = (s, c, json.load(open(os.path.join(out, f"trace-{problem}-{its}.json")))["iterations"])
    (s1, c1, i1), (sf, cf, i_f) = sums["1"], sums["full"]
    print(f"== {problem}: setup + 1 iteration {sum(s1.values()) / 1e3:.1f} ms; per further iteration "
          f"{(sum(sf.values()) - sum(s1.values())) / (i_f - i1):.0f} us ({i_f} iterations)")
    for k in sorted(s1, key=lambda k: -s1[k])[:10]:
        print(f"  setup {k:30} {s1[k] / 1e3:8.2f} ms {c1[k]:6d} launches")
        rows.append([problem, "setup+1", k, c1[k], round(s1[k], 1)])
    per = {k: (sf.get(k, 0) - s1.get(k, 0)) / (i_f - i1) for k in sf}
    for k in sorted(per, key=lambda k: -per[k]):
        n = (cf.get(k, 0) - c1.get(k, 0)) / (i_f - i1)
        if n > 0:
            print(f"  cycle {k:30} {per[k]:8.1f} us {n:6.1f} launches per iteration")
            rows.append([problem, "per_iteration", k, round(n, 2), round(per[k], 1)])
with open(os.path.join(out, "kernel-times.csv"), "w") as f:
    f.write("problem,part,kernel,launches,sum_us\n")
    for r in rows:
        f.write(",".join(map(str, r)) + "\n")
PY
python3 - "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["build"], r["rep"], r["backend"], r["problem"], r["n"], r["iterations"], r["setup_s"][:6], r["setup_host_s"][:6],
          r["solve_s"][:7], r["total_s"][:6])
PY
