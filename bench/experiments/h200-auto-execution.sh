#!/usr/bin/env bash
# Issue 15 item 4 / issue 16: where should `--execution auto` stop picking the device-resident
# mode? Time to solution (solve seconds, median of REPEATS solves, each its own process) of both
# execution modes above 131K unknowns, CUDA and NVIDIA OpenCL, pipelined f64, tol 1e-8, b = ones,
# the same iterations in both modes checked. CSV $OUT/auto-execution-h200.csv, table last. From
# the repository root on the device (release build with --features "cuda opencl cli" packed):
#   OUT=... bash bench/experiments/h200-auto-execution.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
csv="$OUT/auto-execution-h200.csv"
echo "problem,solver,backend,execution,iterations,solve_s,seconds_per_iteration,stop" > "$csv"
cases=${CASES:-"poisson2d:262144:cg poisson2d:1048576:cg poisson2d:4194304:cg poisson3d:1000000:cg poisson3d:4096000:cg
  elasticity3d:300000:cg poisson2d:1048576:bicgstab convdiff3d:1000000:bicgstab poisson2d:1048576:gmres
  convdiff3d:1000000:gmres convdiff3d:262144:gmres convdiff3d:262144:bicgstab"}
for c in $cases; do
  IFS=: read -r prob n solver <<< "$c"
  for be in ${BACKENDS:-cuda opencl}; do
    for ex in sync resident; do
      for r in $(seq "${REPEATS:-3}"); do
        timeout 120 $PK solve --generate "$prob:$n" --solver "$solver" --backend "$be" --execution "$ex" \
          --tol 1e-8 --maxit 3000 --json 2>/dev/null | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(",".join(str(v) for v in [sys.argv[1], d["solver"], d["backend"], d["execution"], d["iterations"], d["solve_seconds"], d["seconds_per_iteration"], d["stop_reason"]]))' "$prob:$n" >> "$csv"
      done
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys, statistics
from collections import defaultdict
t = defaultdict(list); its = defaultdict(set)
for r in csv.DictReader(open(sys.argv[1])):
    k = (r["problem"], r["solver"], r["backend"])
    t[k + (r["execution"],)].append(float(r["solve_s"])); its[k].add(r["iterations"] + " " + r["stop"])
print(f"{'problem':24} {'solver':9} {'backend':7} {'iterations':>16} {'sync s':>8} {'resident s':>10} {'speedup':>7}")
for k in sorted(its):
    s, d = t.get(k + ("sync",)), t.get(k + ("resident",))
    if s and d:
        s, d = statistics.median(s), statistics.median(d)
        print(f"{k[0]:24} {k[1]:9} {k[2]:7} {'/'.join(sorted(its[k])):>16} {s:8.4f} {d:10.4f} {s / d:7.3f}")
PY
