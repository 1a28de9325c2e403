#!/usr/bin/env bash
# One environment switch on one GPU, A/B (issues 15 and 16): the GPU tests on CUDA and NVIDIA
# OpenCL (PARTS=tests; TESTS names them), then `pipekrylov bench` of SOLVERS with ENV set to each
# of VALUES (default "0 1") in turn, ROUNDS rounds alternated (default 2):
#   ladder  the 2D/3D Poisson ladders up to 65K, device-resident, 300 iterations, 10 repeats;
#   mid     MID problems (default 2D 131K / 262K / 1M, 3D 133K / 262K), resident, 5 repeats;
#   large   LARGE problems (default 2D 4.19M, 3D 4.1M), both execution modes, format auto.
# One CSV ($OUT/env-ab-h200.csv: the bench's columns after value and round) and a table last
# (median over rounds per value, and the last value's time over the first's).
# BIN names the packed executable (default pipekrylov), BACKENDS the backends (default cuda,opencl).
# From the repository root on the device after a release build packed into .device/bin:
#   OUT=... ENV=PIPEKRYLOV_BICGSTAB_FUSED SOLVERS=bicgstab bash bench/experiments/h200-env-ab.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
: "${ENV:?set ENV to the variable to switch}"
SOLVERS=${SOLVERS:-cg,bicgstab,gmres}
VALUES=${VALUES:-0 1}
PK="bash .device/run ${BIN:-pipekrylov}"
BACKENDS=${BACKENDS:-cuda,opencl}
CSV="$OUT/env-ab-h200.csv"
bench() { # value round tag bench-arguments...
  local value=$1 round=$2 tag=$3; shift 3
  env "$ENV=$value" timeout 300 $PK bench --backends "$BACKENDS" --solvers "$SOLVERS" "$@" \
    --out "$OUT/b.csv" --quiet > /dev/null 2>&1
  echo "$tag round $round $ENV=$value $*: status $?"
  python3 bench/experiments/append_tagged.py "$OUT/b.csv" "$CSV" value="$value" round="$round"
}
nvidia-smi -L
for part in ${PARTS:-tests ladder}; do
  case $part in
    tests)
      for t in ${TESTS:-device_resident resident_many_groups solvers faults cuda_backend}; do
        timeout 300 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-h200.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        rm -f "$OUT/test.tmp"
      done ;;
    ladder|mid|large)
      for round in $(seq 1 "${ROUNDS:-2}"); do
        for value in $VALUES; do
          case $part in
            ladder)
              for p in poisson2d poisson3d; do
                bench "$value" "$round" ladder --executions resident --problem $p --max-n 70000 \
                  --iterations 300 --repeats 10
              done ;;
            mid)
              for p in ${MID:-poisson2d:131072 poisson2d:262144 poisson2d:1048576 poisson3d:132651 poisson3d:262144}; do
                bench "$value" "$round" mid --executions resident --problem $p --iterations 300 --repeats 5
              done ;;
            large)
              for p in ${LARGE:-poisson2d:4190209 poisson3d:4096000}; do
                bench "$value" "$round" large --executions sync,resident --problem $p --format auto --repeats 5
              done ;;
          esac
        done
      done ;;
  esac
done
python3 - "$CSV" "$ENV" $VALUES <<'PY'
import csv, os, statistics, sys, collections
path, env, values = sys.argv[1], sys.argv[2], sys.argv[3:]
d = collections.defaultdict(list)
for r in (csv.DictReader(open(path)) if os.path.exists(path) else []):
    k = (r["solver"], r["problem"], int(r["n"]), r["backend"], r["execution"])
    d[k + (r["value"],)].append(float(r["median_s_per_iter"]) * 1e6)
    d[k + ("launches", r["value"])].append(float(r["launches_per_iter"]))
print(f"us per iteration, median over rounds, {env} = " + " | ".join(values)
      + f" | {values[-1]} / {values[0]} (launches per iteration at {values[-1]})")
for k in sorted({k[:5] for k in d}):
    cells = [d.get(k + (v,)) for v in values]
    if all(cells):
        t = [statistics.median(c) for c in cells]
        la = statistics.median(d[k + ("launches", values[-1])])
        print(f"{k[0]:8} {k[1]:10} {k[2]:>8} {k[3]:7} {k[4]:9} | "
              + " | ".join(f"{x:8.2f}" for x in t) + f" | {t[-1] / t[0]:5.3f} ({la:4.2f})")
PY
cd "$OUT" && tar czf env-ab.tgz *.csv *.log 2>/dev/null; rm -f *.log
