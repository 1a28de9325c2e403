#!/usr/bin/env bash
# AMG's device setup with the high-contrast rule's diagonal extremes found on the device (kernels
# amg_diagonal and abs_extremes) against the build before (the extremes by a host pass over A):
# CG + AMG setup, solve and iterations on CUDA and NVIDIA OpenCL, alternated, three rounds.
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of pipekrylov (new) and pipekrylov-base (before).
# Run: OUT=$OUT [REPS="1 2 3"] [SPECS="..."] bash bench/experiments/amg-device-contrast/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
csv="$OUT/amg-device-contrast.csv"
echo "build,backend,problem,n,iterations,setup_s,solve_s" > "$csv"
for rep in ${REPS:-1 2 3}; do
  for spec in ${SPECS:-poisson2d:4194304 poisson3d:2097152 jump3d:1030301}; do
    for backend in cuda opencl; do
      for bin in pipekrylov-base pipekrylov; do
        json=$(timeout 240 bash .device/run "$bin" solve --generate "$spec" --rhs a-ones --solver cg \
          --precond amg --backend "$backend" --json 2>/dev/null)
        python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [sys.argv[2], v["backend"], v["problem"], v["n"], v["iterations"],
  v["setup_seconds"], v["solve_seconds"]]))
' "$json" "$bin" >> "$csv" || echo "$bin,$backend,$spec,,,," >> "$csv"
      done
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
keys = sorted({(r["backend"], r["problem"]) for r in rows if r["n"]})
for backend, problem in keys:
    line = [backend, problem]
    for b in ("pipekrylov-base", "pipekrylov"):
        s = [float(r["setup_s"]) for r in rows if r["build"] == b and r["backend"] == backend
             and r["problem"] == problem and r["setup_s"]]
        its = {r["iterations"] for r in rows if r["build"] == b and r["backend"] == backend and r["problem"] == problem}
        line.append(f"{b}: setup median {statistics.median(s):.4f} its {sorted(its)}")
    print(" | ".join(line))
PY
