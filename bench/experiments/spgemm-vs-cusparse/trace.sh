#!/usr/bin/env bash
# Where the AMG device setup's time goes per kernel: `solve --tune cuda_trace=FILE` (a CUDA event
# pair around every kernel; about 3 us added per boundary) on 3D Poisson 2.1M and 16.8M and 2D
# Poisson 4.19M, CG + AMG, one iteration (the setup's kernels and a few of the solve's), then the
# kernels' summed durations, largest first. Packed as run.sh beside it says.
# Run: OUT=$OUT bash bench/experiments/spgemm-vs-cusparse/trace.sh   (writes $OUT/trace-*.csv, kernel-times.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for p in poisson3d:128x128x128 poisson3d:256x256x256 poisson2d:2048x2048; do
  bash .device/run pipekrylov solve --generate "$p" --solver cg --precond amg --backend cuda --rhs a-ones \
    --max-iter 1 --tune "cuda_trace=$OUT/trace-${p%%:*}-${p##*:}.csv" --json > /dev/null 2>> "$OUT/trace-run.log"
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "trace-*.csv"))):
    problem = os.path.basename(path)[6:-4]
    sums, counts = {}, {}
    for r in csv.DictReader(open(path)):
        d = float(r["end_us"]) - float(r["start_us"])
        sums[r["kernel"]] = sums.get(r["kernel"], 0.0) + d
        counts[r["kernel"]] = counts.get(r["kernel"], 0) + 1
    total = sum(sums.values())
    print(f"== {problem}: {total / 1e3:.1f} ms in {sum(counts.values())} kernels")
    for k, v in sorted(sums.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {k:32} {v / 1e3:8.2f} ms {counts[k]:6d} launches")
        rows.append([problem, k, counts[k], round(v, 1)])
with open(os.path.join(out, "kernel-times.csv"), "w") as f:
    f.write("problem,kernel,launches,sum_us\n")
    for r in rows:
        f.write(",".join(map(str, r)) + "\n")
PY
