#!/usr/bin/env bash
# Issues 15 and 16: the device-resident CG in one kernel per iteration (cg_fused_resident: the
# update, then the product of the new p with its entries recomputed where they are read) against
# two (PIPEKRYLOV_CG_FUSED=0). GPU tests on CUDA and NVIDIA OpenCL (PARTS=tests), the resident CG
# on the 2D/3D Poisson ladders up to 65K, 300-iteration solves, 10 repeats, ROUNDS alternated
# (PARTS=ladder), at 262K-1M (PARTS=mid), and CG at n >= 4M in both execution modes (PARTS=large). One CSV
# (cg-fused-h200.csv: the bench's columns after fused and round), a table last.
# From the repository root on the device after a release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200-cg-fused.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
CSV="$OUT/cg-fused-h200.csv"
append() {
  python3 bench/experiments/append_tagged.py "$1" "$CSV" fused=$2 round=$3
}
nvidia-smi -L
for part in ${PARTS:-tests ladder large}; do
  case $part in
    tests)
      for t in ${TESTS:-device_resident resident_many_groups solvers faults}; do
        timeout 300 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-cg-fused-h200.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        rm -f "$OUT/test.tmp"
      done ;;
    ladder)
      for round in ${ROUNDS:-1 2}; do
        for fused in 0 1; do
          for p in poisson2d poisson3d; do
            PIPEKRYLOV_CG_FUSED=$fused timeout 200 $PK bench --backends cuda,opencl --solvers cg --executions resident \
              --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "round $round fused $fused $p: status $?"; append "$OUT/b.csv" $fused $round
          done
        done
      done ;;
    mid)
      for round in ${ROUNDS:-1 2}; do
        for fused in 0 1; do
          for p in poisson2d:262144 poisson2d:1048576 poisson3d:262144; do
            PIPEKRYLOV_CG_FUSED=$fused timeout 200 $PK bench --backends cuda,opencl --solvers cg --executions resident \
              --problem $p --iterations 300 --repeats 5 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "mid round $round fused $fused $p: status $?"; append "$OUT/b.csv" $fused $round
          done
        done
      done ;;
    large)
      for fused in 0 1; do
        for p in poisson2d:4190209 poisson3d:4096000; do
          PIPEKRYLOV_CG_FUSED=$fused timeout 200 $PK bench --backends cuda,opencl --solvers cg \
            --executions sync,resident --problem $p --format auto --repeats 5 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
          echo "large fused $fused $p: status $?"; append "$OUT/b.csv" $fused large
        done
      done ;;
  esac
done
python3 - "$CSV" <<'PY'
import csv, os, statistics, sys, collections
path = sys.argv[1]
d = collections.defaultdict(list)
for r in (csv.DictReader(open(path)) if os.path.exists(path) else []):
    k = (r["problem"], int(r["n"]), r["backend"], r["execution"])
    d[k + (r["fused"],)].append(float(r["median_s_per_iter"]) * 1e6)
    d[k + ("floor", r["fused"])].append(float(r["floor_ratio"]))
    d[k + ("launches", r["fused"])].append(float(r["launches_per_iter"]))
print("CG us per iteration (median over rounds): problem n backend execution | two kernels | fused | ratio (x floor fused; launches)")
for k in sorted({k[:4] for k in d}):
    a, b = d.get(k + ("0",)), d.get(k + ("1",))
    if a and b:
        a, b = statistics.median(a), statistics.median(b)
        fl, la = statistics.median(d[k + ("floor", "1")]), statistics.median(d[k + ("launches", "1")])
        print(f"{k[0]:10} {k[1]:>8} {k[2]:7} {k[3]:9} | {a:8.2f} | {b:8.2f} | {b/a:5.3f} ({fl:4.2f}; {la:4.2f})")
PY
cd "$OUT" && tar czf cg-fused.tgz *.csv *.log 2>/dev/null; rm -f *.log
