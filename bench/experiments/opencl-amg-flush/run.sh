#!/usr/bin/env bash
# Issue 52: does the OpenCL backend's queue flush policy (`opencl_flush`, tuned on solver loops)
# change the AMG device setup at 1M? CG + AMG to 1e-8, b = A 1, CUDA and OpenCL with the
# default policy (none), `1:0` and `1:8` (docs/TUNING.md), REPS repetitions alternated.
# Packed with: pack-for-device --features "cuda opencl cli" -- --bin pipekrylov
# Run: OUT=$OUT bash bench/experiments/opencl-amg-flush/run.sh  (CSV: $OUT/opencl-amg-flush.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
csv="$OUT/opencl-amg-flush.csv"
echo "problem,n,backend,flush,rep,iterations,setup_s,solve_s,total_s,phases" > "$csv"
row() {  # backend flush spec rep
  local env=()
  [ "$2" != none ] && env=(env PIPEKRYLOV_OPENCL_FLUSH="$2")
  json=$(timeout 120 "${env[@]}" bash .device/run pipekrylov solve --generate "$3" --rhs a-ones --solver cg \
    --precond amg --backend "$1" --tol 1e-8 --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "${3%%:*},,$1,$2,$4,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
ph = chr(34) + " ".join(f"{k}={x:.4f}" for k, x in (v["precond_params"].get("setup_phases_s") or {}).items()) + chr(34)
print(",".join(str(x) for x in [v["problem"], v["n"], v["backend"], sys.argv[2], sys.argv[3], v["iterations"],
  v["setup_seconds"], v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"], ph]))
' "$json" "$2" "$4" >> "$csv"
}
for rep in $(seq 1 "${REPS:-3}"); do
  for spec in poisson2d:1048576 aniso2d:1048576; do
    row cuda none "$spec" "$rep"
    for flush in none 1:0 1:8; do row opencl "$flush" "$spec" "$rep"; done
  done
done
python3 - "$csv" <<'PY'
import csv, sys, statistics as st
from collections import defaultdict
g = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    if r["setup_s"]: g[(r["problem"], r["backend"], r["flush"])].append((float(r["setup_s"]), float(r["solve_s"]), r["iterations"]))
print(f"{'problem':10} {'backend':7} {'flush':5} {'its':>4} {'setup ms':>9} {'solve ms':>9}  (medians)")
for k, v in sorted(g.items()):
    print(f"{k[0]:10} {k[1]:7} {k[2]:5} {v[0][2]:>4} {st.median(x[0] for x in v)*1e3:9.2f} {st.median(x[1] for x in v)*1e3:9.2f}")
PY
