#!/usr/bin/env bash
# `ilu` against `bilu0` on the real matrices where ILU(0) factors (issue 54: ilu's solve no slower
# than bilu0's by more than 10%), GMRES(30) to 1e-8, b = A 1, CUDA and NVIDIA OpenCL, 5 repeats
# each (the median solve time is kept); then the several-right-hand-sides rows again
# (`AMG_TESTS=0 bash bench/experiments/solve-many/run.sh`, its OpenCL rows predate 0c39a5b).
# Packed with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test solve_many
# Writes $OUT/ilu-vs-bilu0.csv, $OUT/solve-many.csv.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
csv="$OUT/ilu-vs-bilu0.csv"
echo "matrix,backend,precond,repeat,iterations,relative_residual,setup_s,solve_s" > "$csv"
for m in olm500 olm1000 Pd 494_bus; do
  for backend in cuda opencl; do
    for pc in bilu0 ilu; do
      for rep in 1 2 3 4 5; do
        json=$(timeout 60 bash .device/run pipekrylov solve --matrix "tests/data/$m.mtx" --rhs a-ones \
          --solver gmres --restart 30 --precond "$pc" --backend "$backend" --json 2>>"$OUT/stderr.txt")
        python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [sys.argv[2], v["backend"], sys.argv[3], sys.argv[4], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["solve_seconds"]]))' "$json" "$m" "$pc" "$rep" >> "$csv" \
          || echo "$m,$backend,$pc,$rep,,,," >> "$csv"
      done
    done
  done
done
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    if r["solve_s"]:
        by.setdefault((r["matrix"], r["backend"], r["precond"]), []).append(r)
for (m, b, p), rs in sorted(by.items()):
    print(m, b, p, rs[0]["iterations"], "its", "%.5f" % statistics.median(float(r["solve_s"]) for r in rs),
          "s", rs[0]["relative_residual"][:8])
PY
AMG_TESTS=0 OUT="$OUT" bash bench/experiments/solve-many/run.sh
