#!/usr/bin/env bash
# Several right-hand sides at once (issue 55 item 3) on one H200: tests/solve_many.rs (CUDA,
# NVIDIA OpenCL, host), then `pipekrylov solve --nrhs K` against single solves: CG on 3D Poisson
# 160^3 (4.1M; CUDA and NVIDIA OpenCL), BiCGStab on 3D convection-diffusion 100^3 (1M),
# no preconditioner, b = A 1 (column c scaled row by row, see --nrhs), rtol 1e-8. Then the AMG GPU tests left unrun at 3f273f7 and the refresh share of
# the setup (values_refresh_amg_fsai, cuda_refresh_time_against_setup_time). Packed with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test solve_many --test amg --test amg_device_setup --test values_refresh_amg_fsai
# Writes $OUT/*.log and $OUT/solve-many.csv. AMG_TESTS=0 skips the AMG part (the fused block
# kernels' rerun at 44adf22: `AMG_TESTS=0 OUT=$OUT bash bench/experiments/solve-many/run.sh`).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
timeout 200 bash .device/run test-solve_many --include-ignored > "$OUT/test-solve_many.log" 2>&1
echo "solve_many tests: rc=$? $(grep -E '^test result' "$OUT/test-solve_many.log" | tail -1)"
csv="$OUT/solve-many.csv"
echo "solver,variant,backend,problem,n,nrhs,iterations_max,iterations_columns,solve_s,us_per_iteration,worst_residual" > "$csv"
run() {  # solver backend spec nrhs variant
  json=$(timeout 200 bash .device/run pipekrylov solve --generate "$3" --rhs a-ones --solver "$1" \
    --backend "$2" --nrhs "$4" --variant "$5" --json 2>"$OUT/last-stderr.txt")
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
  run cg $backend poisson3d:4096000 1 pipelined
  run cg $backend poisson3d:4096000 1 classical
  run cg $backend poisson3d:4096000 8 classical
done
run bicgstab cuda convdiff3d:1000000 1 pipelined
run bicgstab cuda convdiff3d:1000000 1 classical
run bicgstab cuda convdiff3d:1000000 8 classical
python3 - "$csv" <<'PY'
import csv, sys
print(f"{'solver':9} {'variant':10} {'backend':7} {'problem':11} {'k':>2} {'its':>5} {'solve s':>9} {'us/it':>9} worst res")
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['solver']:9} {r['variant']:10} {r['backend']:7} {r['problem']:11} {r['nrhs']:>2} {r['iterations_max']:>5} {r['solve_s'][:8]:>9} {r['us_per_iteration'][:8]:>9} {r['worst_residual'][:8]}")
PY
[ "${AMG_TESTS:-1}" = 0 ] && exit 0
for t in test-amg test-amg_device_setup test-values_refresh_amg_fsai; do
  timeout 200 bash .device/run "$t" --include-ignored --skip refresh_time > "$OUT/$t.log" 2>&1
  echo "$t: rc=$? $(grep -E '^test result' "$OUT/$t.log" | tail -1)"
done
timeout 200 bash .device/run test-values_refresh_amg_fsai --include-ignored --nocapture cuda_refresh_time_against_setup_time \
  > "$OUT/refresh-share.log" 2>&1
echo "refresh share: rc=$?"; grep -iE "refresh|share|setup" "$OUT/refresh-share.log" | tail -8
