#!/usr/bin/env bash
# The AMG table of BENCHMARKS.md after this session's setup changes (the transpose's rank sort,
# the blocked coarsest inverse, the parallel finiteness check, the leftover join by most strong
# couplings) and `Variant::Auto` (CG with AMG runs classical): AMGCL built here with nvcc from its
# header-only source (carried in .anchors/amgcl with the anchor driver, as
# amg-device-setup/common.sh says) and ours in the same call, CG + AMG to 1e-8 (true), b = A 1.
# Then the variants side by side at the anchor sizes (CG + AMG pipelined against auto = classical,
# the f32 hierarchy; BiCGStab and GMRES(30) + AMG on convdiff3d 1M, pipelined and classical).
# With TESTS=1, first the AMG device-setup GPU tests (`--include-ignored`).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of pipekrylov and the integration test binary (as test-integration).
# Run: OUT=$OUT [TESTS=1] bash bench/experiments/amg-auto-variant/run.sh
#   (writes $OUT/amg-device-setup.csv, $OUT/amg-variants.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ "${TESTS:-0}" = 1 ]; then
  timeout 240 bash .device/run test-integration --include-ignored --test-threads 8 amg_device_setup \
    > "$OUT/integration-amg-device-setup-gpu.txt" 2>&1
  echo "integration amg_device_setup: rc=$? $(grep -E '^test result' "$OUT/integration-amg-device-setup-gpu.txt" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/integration-amg-device-setup-gpu.txt" | head -5
fi
csv="$OUT/amg-device-setup.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
amgcl_rows
for spec in poisson2d:65536 poisson2d:1048576 poisson2d:4194304 poisson2d:16777216 \
            poisson3d:32768 poisson3d:262144 poisson3d:2097152 poisson3d:16777216 \
            thermal2d:1048576 aniso2d:1048576 jump3d:1030301; do
  ours cuda device "$spec"
  case "$spec" in *:65536|*:32768|*:262144) ;; *) ours opencl device "$spec" ;; esac
done
for spec in poisson2d:4194304 poisson3d:2097152; do
  ours cuda host "$spec"
done
vcsv="$OUT/amg-variants.csv"
echo "solver,variant_asked,variant_ran,amg_precision,problem,n,backend,iterations,relative_residual,setup_s,solve_s,us_per_iter" > "$vcsv"
variant_row() {  # backend solver variant precision problem
  json=$(timeout 240 bash .device/run pipekrylov solve --generate "$5" --rhs a-ones --solver "$2" --variant "$3" \
    --precond amg --amg-precision "$4" --backend "$1" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$2,$3,,$4,${5%%:*},,$1,,,,," >> "$vcsv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [v["solver"], sys.argv[2], v["variant"], sys.argv[3], v["problem"], v["n"], v["backend"],
  v["iterations"], v["relative_residual"], v["setup_seconds"], v["solve_seconds"], v["seconds_per_iteration"] * 1e6]))
' "$json" "$3" "$4" >> "$vcsv"
}
for rep in 1 2; do
  for spec in poisson2d:4194304 poisson3d:2097152; do
    for variant in pipelined auto; do
      variant_row cuda cg "$variant" solve "$spec"
    done
    variant_row cuda cg auto f32 "$spec"
  done
  for solver in bicgstab gmres; do
    for variant in pipelined classical; do
      variant_row cuda "$solver" "$variant" solve convdiff3d:1000000
    done
  done
done
python3 - "$csv" "$vcsv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["library"], r["setup_on"], r["method"], r["problem"], r["n"], r["backend"], r["iterations"], r["setup_s"][:6],
          r["solve_s"][:7], r["total_s"][:6], r["operator_complexity"][:5])
for r in csv.DictReader(open(sys.argv[2])):
    print(r["solver"], r["variant_asked"], r["variant_ran"], r["amg_precision"], r["problem"], r["n"], r["iterations"],
          r["setup_s"][:6], r["solve_s"][:7], r["us_per_iter"][:7])
PY
