#!/usr/bin/env bash
# Issue 52: where the OpenCL AMG setup at 1M waits. A CLI built with temporary counters in the
# OpenCL backend (not committed: the patch beside this script, `counters.patch`, applied to the
# commit named in the log note) prints at the end of a run the count and host milliseconds of
# clFinish, new memory objects (clCreateBuffer; their first fill waited for, address read),
# blocking reads and waited pool releases. CG + AMG (device setup) to 1e-8, b = A 1, REPS
# repetitions; CUDA with the packed CLI beside it for the phases.
# Packed: pack-for-device --features "cuda opencl cli" -- --bin pipekrylov, and the patched
# build copied to .device/bin/pipekrylov-instr.
# Run: OUT=$OUT bash bench/experiments/amg-opencl-waits/run.sh  (CSV: $OUT/amg/waits.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
dir="$OUT/amg"
mkdir -p "$dir"
csv="$dir/waits.csv"
echo "problem,n,backend,rep,iterations,setup_s,solve_s,phases,counters" > "$csv"
row() {  # exe backend spec rep
  json=$(timeout 120 bash .device/run "$1" solve --generate "$3" --rhs a-ones --solver cg --precond amg \
    --amg-setup device --backend "$2" --tol 1e-8 --json 2>"$dir/stderr.txt")
  counters=$(grep "^DBG" "$dir/stderr.txt" | tr '\n' ' ' | tr -d ',')
  [ -n "$json" ] || { echo "${3%%:*},,$2,$4,,,,,\"$counters\"" >> "$csv"; tail -3 "$dir/stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
ph = " ".join(f"{k}={x:.4f}" for k, x in (v["precond_params"].get("setup_phases_s") or {}).items())
q = chr(34)
print(",".join(str(x) for x in [v["problem"], v["n"], v["backend"], sys.argv[2], v["iterations"],
  v["setup_seconds"], v["solve_seconds"], q + ph + q, q + sys.argv[3] + q]))
' "$json" "$4" "$counters" >> "$csv"
}
for rep in $(seq 1 "${REPS:-3}"); do
  for spec in poisson2d:1048576 aniso2d:1048576 thermal2d:1048576; do
    row pipekrylov cuda "$spec" "$rep"
    row pipekrylov-instr opencl "$spec" "$rep"
  done
done
python3 - "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["problem"], r["backend"], r["rep"], "setup", r["setup_s"][:7], "solve", r["solve_s"][:7])
    if r["counters"]:
        print("   ", r["counters"])
PY
