#!/usr/bin/env bash
# Issue 52: the AMG device setup's power iterations with their sums read once per 4 steps (3
# reads per estimate instead of 10; 567259c) against the build before (1a8a3b6), CG + AMG to
# 1e-8 on b = A 1: setup, solve and time to solution on CUDA and NVIDIA OpenCL, the two builds
# alternated (order flipped each repetition), then the AMG integration tests of the new build
# (the device hierarchy against the host's, CUDA and NVIDIA OpenCL).
# Packed on the workstation: `pack-for-device --features "cuda opencl cli" -- --bin pipekrylov
#   --test integration`, and the base's release `pipekrylov` (same features) copied to
#   .device/bin/pipekrylov-base.
# Run: OUT=$OUT [REPS="1 2 3"] [SPECS="..."] bash bench/experiments/amg-power-reads/run.sh
#   (writes $OUT/amg-power-reads.csv and $OUT/test-amg.txt)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
csv="$OUT/amg-power-reads.csv"
echo "build,rep,backend,problem,n,iterations,relative_residual,setup_s,solve_s,total_s" > "$csv"
row() {  # binary backend spec rep
  json=$(timeout 120 bash .device/run "$1" solve --generate "$3" --rhs a-ones --solver cg --precond amg \
    --backend "$2" --tol 1e-8 --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$4,$2,${3%%:*},,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [sys.argv[2], sys.argv[3], v["backend"], v["problem"], v["n"], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"]]))
' "$json" "$1" "$4" >> "$csv"
}
for rep in ${REPS:-1 2 3}; do
  builds="pipekrylov-base pipekrylov"
  [ $((rep % 2)) = 0 ] && builds="pipekrylov pipekrylov-base"
  for spec in ${SPECS:-poisson2d:1048576 aniso2d:1048576 thermal2d:1048576 jump3d:1030301 poisson2d:4194304}; do
    for bin in $builds; do
      for backend in cuda opencl; do row "$bin" "$backend" "$spec" "$rep"; done
    done
  done
done
timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 amg \
  > "$OUT/test-amg.txt" 2>&1
echo "amg tests (new build, CUDA/OpenCL/host): rc=$? $(grep -E '^test result' "$OUT/test-amg.txt" | tail -1)"
grep -E "FAILED|panicked" "$OUT/test-amg.txt" | head -5
python3 - "$csv" <<'PY'
import csv, sys, statistics as st
from collections import defaultdict
g = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    if r["setup_s"]:
        g[(r["problem"] + ":" + r["n"], r["build"], r["backend"])].append(r)
print(f"{'problem':18} {'build':15} {'backend':7} {'its':>4} {'setup ms':>9} {'solve ms':>9} {'total ms':>9} (medians)")
tot = {}
for k, v in sorted(g.items()):
    m = lambda f: st.median(float(x[f]) for x in v) * 1e3
    tot[k] = m("total_s")
    print(f"{k[0]:18} {k[1]:15} {k[2]:7} {v[0]['iterations']:>4} {m('setup_s'):9.2f} {m('solve_s'):9.2f} {m('total_s'):9.2f}")
print("OpenCL / CUDA total:")
for (p, b, be), t in sorted(tot.items()):
    if be == "opencl" and (p, b, "cuda") in tot:
        print(f"  {p:18} {b:15} {t / tot[(p, b, 'cuda')]:.2f}")
PY
