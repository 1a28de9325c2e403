#!/usr/bin/env bash
# Rejected (reverted in 706dccd): several work-items per row in the block product (csr_spmm /
# csr_spmm_dots, e004533) against one
# per row (2de2022, `pipekrylov-base`), one H200, alternated, 2 runs each: `solve --nrhs 8` (classical
# lockstep) of CG on the 27-point stencil 160^3 (4.1M, 27 per row: 4 lanes) and on 3D Poisson 160^3
# (7 per row: 1 lane, the control), BiCGStab on convdiff3d 100^3 (1M, 1 lane), CUDA and NVIDIA
# OpenCL; the single-column pipelined solves for reference; first the solve_many tests.
# Packed with pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test integration,
# plus the base commit's pipekrylov as pipekrylov-base.
# Run: OUT=$OUT bash bench/experiments/solve-many/spmm-lanes.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
timeout 300 bash .device/run test-integration --include-ignored solve_many:: > "$OUT/test-solve_many.log" 2>&1
echo "solve_many tests: rc=$? $(grep -E '^test result' "$OUT/test-solve_many.log" | tail -1)"
csv="$OUT/spmm-lanes.csv"
echo "build,solver,variant,backend,problem,n,nrhs,run,iterations_max,solve_s,us_per_iteration,worst_residual" > "$csv"
run() {  # build solver backend spec nrhs variant run
  exe=pipekrylov; [ "$1" = base ] && exe=pipekrylov-base
  json=$(timeout 300 bash .device/run "$exe" solve --generate "$4" --rhs a-ones --solver "$2" \
    --backend "$3" --nrhs "$5" --variant "$6" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,$6,$3,${4%%:*},,$5,$7,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
cols = v.get("columns") or [{"iterations": v["iterations"], "relative_residual": v["relative_residual"]}]
its = max(c["iterations"] for c in cols)
print(",".join(str(x) for x in [sys.argv[2], v["solver"], sys.argv[3], v["backend"], v["problem"], v["n"], len(cols),
  sys.argv[4], its, v["solve_seconds"], v["solve_seconds"] / max(its, 1) * 1e6,
  max(c["relative_residual"] for c in cols)]))
' "$json" "$1" "$6" "$7" >> "$csv"
}
for spec in "cg stencil27:4096000" "cg poisson3d:4096000" "bicgstab convdiff3d:1000000"; do
  set -- $spec
  for backend in cuda opencl; do
    run new "$1" "$backend" "$2" 1 pipelined 1
    for r in 1 2; do
      run base "$1" "$backend" "$2" 8 classical "$r"
      run new "$1" "$backend" "$2" 8 classical "$r"
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'solver':9} {'backend':7} {'problem':11} {'1 col us/it':>11} {'8 base':>9} {'8 new':>9} {'new/1':>6}")
keys = []
for r in rows:
    k = (r["solver"], r["backend"], r["problem"])
    if k not in keys: keys.append(k)
for k in keys:
    pick = lambda b, n: [float(r["us_per_iteration"]) for r in rows if (r["solver"], r["backend"], r["problem"]) == k and r["build"] == b and r["nrhs"] == n and r["us_per_iteration"]]
    one, base, new = pick("new", "1"), pick("base", "8"), pick("new", "8")
    if not (one and base and new): print(k, "missing"); continue
    print(f"{k[0]:9} {k[1]:7} {k[2]:11} {one[0]:11.1f} {min(base):9.1f} {min(new):9.1f} {min(new) / one[0]:6.2f}")
PY
