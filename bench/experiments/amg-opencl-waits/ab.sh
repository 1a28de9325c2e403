#!/usr/bin/env bash
# Issue 52: OpenCL's new memory objects waited for once (the fill by the address read) and the
# pool's releases put aside until the backend's next wait (b335fc4, "new") against the build
# before (7d07434, "old"), CG + AMG (device setup) to 1e-8, b = A 1, at 1M: REPS rounds, the
# builds alternated (order flipped each round), CUDA beside them; then one run of each build
# with the counters (counters.patch on 7d07434, counters-b335fc4.patch on b335fc4); then the
# OpenCL pool, address, fault, memory and AMG tests on NVIDIA OpenCL (new integration binary).
# Packed: pack-for-device --features "cuda opencl cli" -- --test integration --bin pipekrylov
# (new), the old CLI copied to .device/bin/pipekrylov-old, the counters builds to
# .device/bin/pipekrylov-instr and pipekrylov-old-instr.
# Run: OUT=$OUT bash bench/experiments/amg-opencl-waits/ab.sh  (CSV: $OUT/amg/ab.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
dir="$OUT/amg"
mkdir -p "$dir"
csv="$dir/ab.csv"
echo "problem,n,backend,build,rep,iterations,setup_s,solve_s,total_s,phases,counters" > "$csv"
row() {  # exe backend spec rep build
  json=$(timeout 120 bash .device/run "$1" solve --generate "$3" --rhs a-ones --solver cg --precond amg \
    --amg-setup device --backend "$2" --tol 1e-8 --json 2>"$dir/stderr.txt")
  counters=$(grep "^DBG" "$dir/stderr.txt" | tr '\n' ' ' | tr -d ',')
  [ -n "$json" ] || { echo "${3%%:*},,$2,$5,$4,,,,,,\"$counters\"" >> "$csv"; tail -3 "$dir/stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
ph = " ".join(f"{k}={x:.4f}" for k, x in (v["precond_params"].get("setup_phases_s") or {}).items())
q = chr(34)
print(",".join(str(x) for x in [v["problem"], v["n"], v["backend"], sys.argv[3], sys.argv[2], v["iterations"],
  v["setup_seconds"], v["solve_seconds"], v["setup_seconds"] + v["solve_seconds"], q + ph + q, q + sys.argv[4] + q]))
' "$json" "$4" "$5" "$counters" >> "$csv"
}
specs="poisson2d:1048576 aniso2d:1048576 thermal2d:1048576 jump3d:1030301"
for rep in $(seq 1 "${REPS:-5}"); do
  order="old new"; [ $((rep % 2)) = 0 ] && order="new old"
  for spec in $specs; do
    row pipekrylov cuda "$spec" "$rep" cuda
    for b in $order; do
      exe=pipekrylov; [ "$b" = old ] && exe=pipekrylov-old
      row "$exe" opencl "$spec" "$rep" "$b"
    done
  done
done
for spec in poisson2d:1048576 aniso2d:1048576; do
  row pipekrylov-old-instr opencl "$spec" 0 old-counters
  row pipekrylov-instr opencl "$spec" 0 new-counters
done
timeout 240 .device/run test-integration --include-ignored --test-threads=8 opencl_pool address faults \
  memory_use amg_device_setup opencl_backend > "$dir/tests-opencl.txt" 2>&1
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    if r["total_s"] and r["rep"] != "0":
        by.setdefault((r["problem"], r["build"]), []).append((float(r["setup_s"]), float(r["total_s"])))
print("problem     build  setup ms (median)  total ms (median)  OpenCL/CUDA total")
for problem in sorted({p for p, _ in by}):
    cuda = statistics.median(t for _, t in by.get((problem, "cuda"), [(0, float("nan"))]))
    for b in ("cuda", "old", "new"):
        v = by.get((problem, b))
        if not v:
            continue
        s, t = statistics.median(x for x, _ in v), statistics.median(x for _, x in v)
        print(f"{problem:11} {b:5} {1e3*s:8.2f}          {1e3*t:8.2f}          {t/cuda:5.2f}")
for r in rows:
    if r["rep"] == "0":
        print(r["problem"], r["build"], r["counters"])
PY
echo "tests: $(grep -E '^test result' "$dir/tests-opencl.txt" | tail -1)"
grep -E "\.\.\. FAILED" "$dir/tests-opencl.txt" | head
