#!/usr/bin/env bash
# GMRES on several right-hand sides in lockstep (Gmres::solve_many, issue 55) on one H200: the
# solve_many tests of the integration binary (CUDA, NVIDIA OpenCL, host), then `pipekrylov solve
# --nrhs K` against single solves: GMRES(30) on 3D convection-diffusion 100^3 (1M), Jacobi, b = A 1
# (column c scaled row by row, see --nrhs), rtol 1e-8, CUDA and NVIDIA OpenCL; and CG on the
# 27-point stencil 160^3 (4.1M, 27 entries per row: the matrix is most of the traffic), CUDA.
# Packed with pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test integration
# (the test binary as test-integration). Writes $OUT/solve-many-gmres.csv and the test log.
# Run: OUT=$OUT bash bench/experiments/solve-many/gmres.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
timeout 300 bash .device/run test-integration --include-ignored solve_many:: > "$OUT/test-solve_many.log" 2>&1
echo "solve_many tests: rc=$? $(grep -E '^test result' "$OUT/test-solve_many.log" | tail -1)"
csv="$OUT/solve-many-gmres.csv"
echo "solver,variant,backend,problem,n,nrhs,iterations_max,iterations_columns,solve_s,us_per_iteration,worst_residual" > "$csv"
run() {  # solver backend spec nrhs variant [extra args]
  json=$(timeout 300 bash .device/run pipekrylov solve --generate "$3" --rhs a-ones --solver "$1" \
    --backend "$2" --nrhs "$4" --variant "$5" "${@:6}" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$5,$2,${3%%:*},,$4,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
cols = v.get("columns") or [{"iterations": v["iterations"], "relative_residual": v["relative_residual"]}]
its = [c["iterations"] for c in cols]
solve = v["solve_seconds"]
print(",".join(str(x) for x in [v["solver"], sys.argv[2], v["backend"], v["problem"], v["n"], len(cols), max(its),
  chr(34) + " ".join(map(str, its)) + chr(34), solve, solve / max(max(its), 1) * 1e6,
  max(c["relative_residual"] for c in cols)]))
' "$json" "$5" >> "$csv"
}
for backend in cuda opencl; do
  run gmres $backend convdiff3d:1000000 1 pipelined --precond jacobi
  run gmres $backend convdiff3d:1000000 1 classical --precond jacobi
  run gmres $backend convdiff3d:1000000 8 classical --precond jacobi
done
run cg cuda stencil27:4096000 1 pipelined
run cg cuda stencil27:4096000 1 classical
run cg cuda stencil27:4096000 8 classical
python3 - "$csv" <<'PY'
import csv, sys
print(f"{'solver':7} {'variant':10} {'backend':7} {'problem':11} {'k':>2} {'its':>5} {'solve s':>9} {'us/it':>9} worst res")
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['solver']:7} {r['variant']:10} {r['backend']:7} {r['problem']:11} {r['nrhs']:>2} {r['iterations_max']:>5} {r['solve_s'][:8]:>9} {r['us_per_iteration'][:8]:>9} {r['worst_residual'][:8]}")
PY
