#!/usr/bin/env bash
# Exact triangular solves with runs of narrow levels in one launch (`bsr_trsv_levels_group`):
# before (`pipekrylov-base`, bc8dd86) and after (`pipekrylov`), alternating, three times, CUDA
# and NVIDIA OpenCL: GMRES(30) to 1e-8, b = A 1, with `bilu0` and `ilu` on the real matrices of
# tests/data where ILU(0) factors (issue 54: ilu no slower than bilu0 by more than 10%).
# (The first call also ran BILU(0) `--trisolve exact` on 2D Poisson 1M: 6393 GMRES iterations,
# 100 s a run, which used up the call before the OpenCL rows; BACKENDS=opencl ran those after.)
# With TESTS=1, first the GPU tests of the triangular solves and the preconditioners that use them
# (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of this commit's pipekrylov and integration test binary (as test-integration) and the base's
# pipekrylov (as pipekrylov-base).
# Run: OUT=$OUT [TESTS=1] [BACKENDS="cuda opencl"] bash bench/experiments/trsv-levels-group/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 240 bash .device/run test-integration --include-ignored --test-threads 8 trsv_levels:: bilu_device:: ilu:: \
    precond:: approx_inverse:: > "$OUT/integration-gpu.txt" 2>&1
  echo "integration (triangular solves): rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-gpu.txt" | head -5
fi
csv="$OUT/trsv-levels-group.csv"
echo "build,rep,backend,precond,matrix,n,iterations,relative_residual,setup_s,solve_s,us_per_iter,launches_per_apply" > "$csv"
row() {  # build rep backend precond matrix-arguments...
  local exe=pipekrylov; [ "$1" = base ] && exe=pipekrylov-base
  json=$(timeout 120 bash .device/run "$exe" solve "${@:5}" --rhs a-ones --solver gmres --restart 30 \
    --precond "$4" --backend "$3" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,$3,$4,$5,,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in sys.argv[2:6] + [v.get("problem") or sys.argv[6], v["n"], v["iterations"], v["relative_residual"],
  v["setup_seconds"], v["solve_seconds"], v["seconds_per_iteration"] * 1e6, v["precond_launches_per_apply"]]))
' "$json" "$1" "$2" "$3" "$4" "$(basename "${6:-x}" .mtx)" >> "$csv"
}
for backend in ${BACKENDS:-cuda opencl}; do
  for m in olm500 olm1000 Pd 494_bus; do
    for pc in bilu0 ilu; do
      for rep in 1 2 3; do
        for build in base new; do row "$build" "$rep" "$backend" "$pc" --matrix "tests/data/$m.mtx"; done
      done
    done
  done
done
python3 - "$csv" <<'PY'
import csv, statistics, sys
by = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["solve_s"]:
        by.setdefault((r["matrix"], r["backend"], r["precond"], r["build"]), []).append(r)
for (m, b, p, build), rs in sorted(by.items()):
    print(m, b, p, build, rs[0]["iterations"], "its", "median solve %.5f s" % statistics.median(float(r["solve_s"]) for r in rs),
          "launches/apply", rs[0]["launches_per_apply"], rs[0]["relative_residual"][:8])
PY
