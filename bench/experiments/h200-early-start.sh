#!/usr/bin/env bash
# Issue 15: how early a CUDA kernel starts under programmatic dependent launch
# (PIPEKRYLOV_CUDA_EARLY_START, src/backend/tuning.rs): 0 = when the previous kernel's blocks
# exit, 1 = as soon as they have all waited (griddepcontrol.launch_dependents after the wait),
# 2 = as 1 and the CSR products read their first rows before waiting (EARLY_MATRIX), 3 = as 2
# and the CSR products start their next kernel right after their wait (EARLY_NEXT). GPU tests
# (PARTS=tests; CUDA and NVIDIA OpenCL against the host; one log), then the device-resident CG,
# BiCGStab and GMRES(30) on the 2D and 3D Poisson ladders up to 65K, 300-iteration solves,
# CUDA with the settings alternated over two rounds (PARTS=ladder), then 1M and 4.19M
# (PARTS=large), and both execution modes on CUDA and OpenCL at the defaults on the ladders
# (PARTS=modes, modes-300it-*-h200.csv). One CSV under $OUT (early-start-h200.csv: the bench's columns after early and
# round), a table last. From the repository root on the device after a
# release build with --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-early-start.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
parts=${PARTS:-tests ladder}
PK="bash .device/run pipekrylov"
CSV="$OUT/early-start-h200.csv"
# Append the rows of the bench CSV $1 to $CSV with the columns early=$2 and round=$3 first.
append() {
  python3 - "$1" "$2" "$3" "$CSV" <<'PY'
import csv, os, sys
src, early, rnd, dst = sys.argv[1:]
rows = list(csv.DictReader(open(src)))
if not rows:
    sys.exit()
new = not os.path.exists(dst)
with open(dst, "a", newline="") as f:
    w = csv.DictWriter(f, ["early", "round"] + list(rows[0].keys()))
    if new:
        w.writeheader()
    for r in rows:
        w.writerow({"early": early, "round": rnd, **r})
PY
  rm -f "$1"
}
for part in $parts; do
  case $part in
    tests)
      for t in ${TESTS:-afsai opencl_backend backend_agreement device_resident resident_many_groups cuda_backend}; do
        timeout 240 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-early-start-h200.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        rm -f "$OUT/test.tmp"
      done ;;
    ladder)
      for round in ${ROUNDS:-1 2}; do
        for early in ${LEVELS:-0 1 2 3}; do
          for p in poisson2d poisson3d; do
            PIPEKRYLOV_CUDA_EARLY_START=$early timeout 200 $PK bench --backends cuda --solvers cg,bicgstab,gmres \
              --executions resident --problem $p --max-n 70000 --iterations 300 --repeats 10 \
              --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "round $round early $early $p: status $?"; append "$OUT/b.csv" $early $round
          done
        done
      done ;;
    modes)
      for p in poisson2d poisson3d; do
        timeout 250 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres --executions sync,resident \
          --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/modes-300it-$p-h200.csv" --quiet > /dev/null 2>&1
        echo "modes $p: status $?"
      done ;;
    large)
      for early in 0 3; do
        PIPEKRYLOV_CUDA_EARLY_START=$early timeout 200 $PK bench --backends cuda --solvers cg,bicgstab,gmres \
          --executions resident --problem poisson2d --min-n 1000000 --max-n 4300000 \
          --out "$OUT/b.csv" --quiet > /dev/null 2>&1
        echo "large early $early: status $?"; append "$OUT/b.csv" $early large
      done ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, os, statistics, sys
out = sys.argv[1]
rows = {}
path = os.path.join(out, "early-start-h200.csv")
for r in (csv.DictReader(open(path)) if os.path.exists(path) else []):
    key = (r["solver"], r["problem"], int(r["n"]))
    rows.setdefault(key, {}).setdefault(r["early"], []).append(float(r["median_s_per_iter"]) * 1e6)
print(f"{'solver':9} {'problem':10} {'n':>8} {'early 0 us':>11} {'early 1 us':>11} {'early 2 us':>11} {'early 3 us':>11} {'0 / 2':>6}")
for k in sorted(rows):
    med = {e: statistics.median(v) for e, v in rows[k].items()}
    cells = " ".join(f"{med[e]:11.2f}" if e in med else f"{'-':>11}" for e in "0123")
    ratio = f"{med['0'] / med['2']:6.3f}" if "0" in med and "2" in med else f"{'-':>6}"
    print(f"{k[0]:9} {k[1]:10} {k[2]:>8} {cells} {ratio}")
PY
