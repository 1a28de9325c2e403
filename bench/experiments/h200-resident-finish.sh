#!/usr/bin/env bash
# Issue 15 (and 16): the device-resident CG's sums finished once by the product's last work-group
# (cg_spmv_finish_resident) instead of by every work-group of the next update. GPU tests
# (PARTS=tests; CUDA and NVIDIA OpenCL against the host, also with 8 reduction groups per SM), then
# the resident CG on the 2D/3D Poisson ladders up to 65K, 300-iteration solves, 10 repeats, CUDA
# and NVIDIA OpenCL, PIPEKRYLOV_RESIDENT_FINISH=0/1 alternated over ROUNDS (PARTS=ladder), then
# CG at n >= 4M in both modes with 4 and 8 reduction groups per SM (PARTS=large). One CSV
# (resident-finish-h200.csv: the bench's columns after finish, groups and round), a table last.
# From the repository root on the device after a release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200-resident-finish.sh
# Ran once at commit 6fdc3a8 (2026-11-27 (f)); the kernel was rejected and reverted (CUDA CG 1.2-1.7 us
# slower per iteration up to 65K), so PIPEKRYLOV_RESIDENT_FINISH no longer exists: results and reasons in
# bench/results/h200-resident-finish-rejected/ and bench/log/2026-11-27-cg-sums-last-workgroup.md.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
CSV="$OUT/resident-finish-h200.csv"
# Append the rows of the bench CSV $1 to $CSV with the columns finish=$2, groups=$3, round=$4 first.
append() {
  python3 bench/experiments/append_tagged.py "$1" "$CSV" finish=$2 groups_per_sm=$3 round=$4
}
nvidia-smi -L
for part in ${PARTS:-tests ladder large}; do
  case $part in
    tests)
      for t in ${TESTS:-device_resident resident_many_groups backend_agreement}; do
        timeout 240 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-resident-finish-h200.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        rm -f "$OUT/test.tmp"
      done
      PIPEKRYLOV_REDUCTION_GROUPS_PER_SM=8 timeout 240 bash .device/run test-device_resident --include-ignored \
        resident_matches_sync cg_spmv > "$OUT/test.tmp" 2>&1
      status=$?
      { echo "== device_resident, 8 groups per SM: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-resident-finish-h200.log"
      echo "device_resident (8 groups per SM): status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
      rm -f "$OUT/test.tmp" ;;
    ladder)
      for round in ${ROUNDS:-1 2}; do
        for fin in 0 1; do
          for p in poisson2d poisson3d; do
            PIPEKRYLOV_RESIDENT_FINISH=$fin timeout 200 $PK bench --backends cuda,opencl --solvers cg \
              --executions resident --problem $p --max-n 70000 --iterations 300 --repeats 10 \
              --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "round $round finish $fin $p: status $?"; append "$OUT/b.csv" $fin 4 $round
          done
        done
      done ;;
    large)
      for groups in ${GROUPS_PER_SM:-4 8}; do
        for fin in 0 1; do
          for p in poisson2d:4190209 poisson3d:4096000; do
            PIPEKRYLOV_REDUCTION_GROUPS_PER_SM=$groups PIPEKRYLOV_RESIDENT_FINISH=$fin timeout 200 $PK bench \
              --backends cuda,opencl --solvers cg --executions sync,resident --problem $p --format auto \
              --repeats 5 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "large groups $groups finish $fin $p: status $?"; append "$OUT/b.csv" $fin $groups large
          done
        done
      done ;;
  esac
done
python3 - "$CSV" <<'PY'
import csv, os, statistics, sys, collections
path = sys.argv[1]
d = collections.defaultdict(list)
for r in (csv.DictReader(open(path)) if os.path.exists(path) else []):
    k = (r["problem"], int(r["n"]), r["backend"], r["execution"], r["groups_per_sm"])
    d[k + (r["finish"],)].append(float(r["median_s_per_iter"]) * 1e6)
    d[k + ("floor", r["finish"])].append(float(r["floor_ratio"]))
print("CG us per iteration (median over rounds): problem n backend execution groups/SM | finish=0 | finish=1 | ratio (x floor at finish=1)")
for k in sorted({k[:5] for k in d}):
    a, b = d.get(k + ("0",)), d.get(k + ("1",))
    if not a or not b:
        continue
    a, b = statistics.median(a), statistics.median(b)
    fl = statistics.median(d[k + ("floor", "1")])
    print(f"{k[0]:10} {k[1]:>8} {k[2]:7} {k[3]:9} {k[4]} | {a:8.2f} | {b:8.2f} | {b/a:5.3f} ({fl:4.2f})")
PY
cd "$OUT" && tar czf resident-finish.tgz *.csv *.log 2>/dev/null; rm -f *.log
