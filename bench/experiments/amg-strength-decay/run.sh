#!/usr/bin/env bash
# AmgOptions::strength_decay (--amg-strength-decay): CG + AMG to 1e-8, b = A 1, on the generated
# elliptic families at about 1M unknowns, the threshold halved per level (0.5, the default) against
# kept (1), with the device setup (MIS-2) and, where SETUPS says, the host's greedy one; jump3d also
# with a degree-3 Chebyshev smoother. On the device (packed as amg-f32/run.sh says, tests
# included: amg, amg_device_setup) it first runs the AMG GPU tests; on the workstation
#   PK_RUN=target/release/pipekrylov BACKENDS=host SETUPS="host device" OUT=... bash bench/experiments/amg-strength-decay/run.sh
# Writes $OUT/amg-strength-decay.csv (amg-device-setup/run.sh's columns plus decay).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
if [ -z "${PK_RUN:-}" ]; then
  for t in $(ls .device/bin | grep '^test-'); do
    timeout "${TEST_TIMEOUT:-200}" bash .device/run "$t" --include-ignored --skip refresh_time \
      > "$OUT/$t.log" 2>&1
    echo "$t: rc=$? $(grep -E '^test result' "$OUT/$t.log" | tail -1)"
  done | tee "$OUT/tests.txt"
fi
csv="$OUT/amg-strength-decay.csv"
echo "library,setup_on,method,problem,n,backend,iterations,relative_residual,setup_s,setup_host_s,solve_s,total_s,us_per_iter,levels,operator_complexity,level_rows,phases" > "$csv"
source "$(dirname "$0")/../amg-device-setup/common.sh"
for backend in ${BACKENDS:-cuda opencl}; do
  for setup in ${SETUPS:-device}; do
    for spec in jump3d:1030301 aniso2d:1048576 thermal2d:1048576 poisson2d:1048576 poisson3d:1030301 randjump3d:1030301; do
      for decay in 0.5 1; do
        ours "$backend" "$setup" "$spec" --amg-strength-decay "$decay"
      done
    done
    for decay in 0.5 1; do
      ours "$backend" "$setup" jump3d:1030301 --amg-smoother chebyshev:3 --amg-strength-decay "$decay"
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["setup_on"], r["method"], r["problem"], r["backend"], r["iterations"], r["operator_complexity"][:5],
          r["setup_s"][:6], r["solve_s"][:7], r["total_s"][:6])
PY
