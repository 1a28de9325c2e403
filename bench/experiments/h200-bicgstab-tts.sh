#!/usr/bin/env bash
# Issue 15: time to solution of the device-resident BiCGStab on NVIDIA OpenCL with its update fused
# (the default up to 131072 rows) against three kernels (PIPEKRYLOV_BICGSTAB_FUSED=0): solve
# seconds, tol 1e-8, b = ones, three rounds, each solve its own process; the same iterations in
# both checked by the table. From the repository root on the device: OUT=... bash bench/experiments/h200-bicgstab-tts.sh
set -uo pipefail
csv=$OUT/tts-opencl-bicgstab-h200.csv
echo "problem,fused,round,iterations,solve_s,seconds_per_iteration,stop" > $csv
for round in 1 2 3; do
for c in convdiff3d:32768 poisson2d:65025 convdiff3d:125000 fem2d:100000; do
  for f in 0 default; do
    PIPEKRYLOV_BICGSTAB_FUSED=$f timeout 120 bash .device/run pipekrylov solve --generate $c --solver bicgstab --backend opencl --execution resident --tol 1e-8 --maxit 3000 --json 2>/dev/null | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(",".join(str(v) for v in [sys.argv[1], sys.argv[2], sys.argv[3], d["iterations"], d["solve_seconds"], d["seconds_per_iteration"], d["stop_reason"]]))' $c $f $round >> $csv
  done
done
done
python3 - $csv <<'PY'
import csv, sys, statistics, collections
t = collections.defaultdict(list); its = collections.defaultdict(set)
for r in csv.DictReader(open(sys.argv[1])):
    t[(r["problem"], r["fused"])].append(float(r["solve_s"])); its[r["problem"]].add(r["iterations"] + " " + r["stop"])
for p in its:
    a, b = statistics.median(t[(p, "0")]), statistics.median(t[(p, "default")])
    print(f"{p:20} {sorted(its[p])} unfused {a*1e3:8.3f} ms fused {b*1e3:8.3f} ms ratio {b/a:5.3f}")
PY
