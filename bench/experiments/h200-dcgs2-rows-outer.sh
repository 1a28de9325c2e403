#!/usr/bin/env bash
# Ran once at commit 3ba22ca (2026-11-27 (f)) and reverted: slower everywhere (bench/log/2026-11-27-dcgs2-register-probes.md); the switch
# PIPEKRYLOV_DCGS2_ROWS_OUTER no longer exists.
# Issue 15/16: the dots of GMRES's fused DCGS2 product (gmres_dcgs2_spmv_dots, CUDA) with the tile's
# rows outer and the warp's columns inner (PK_DCGS2_ROWS_OUTER=1: the loads of all its columns in
# flight together) against columns outer (0: one chain of L2 round trips per column); the same bits.
# GPU tests of both (PARTS=tests), GMRES(30) resident on the 2D/3D ladders from 4K to 65K, 300
# iterations, 10 repeats, ROUNDS alternated (PARTS=ladder), and sync at n >= 4M (PARTS=large). One CSV
# (dcgs2-rows-outer-h200.csv: the bench's columns after rows_outer and round), a table last.
# From the repository root on the device after a release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200-dcgs2-rows-outer.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
CSV="$OUT/dcgs2-rows-outer-h200.csv"
append() {
  python3 bench/experiments/append_tagged.py "$1" "$CSV" rows_outer=$2 round=$3
}
nvidia-smi -L
for part in ${PARTS:-tests ladder large}; do
  case $part in
    tests)
      for ro in 1 0; do
        for t in "device_resident gmres" "dcgs2_two_kernels dcgs2" "backend_agreement"; do
          set -- $t
          PIPEKRYLOV_DCGS2_ROWS_OUTER=$ro timeout 240 bash .device/run "test-$1" --include-ignored ${2:-} > "$OUT/test.tmp" 2>&1
          status=$?
          { echo "== $t (rows outer $ro): status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-dcgs2-rows-outer-h200.log"
          echo "$t (rows outer $ro): status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -3
          rm -f "$OUT/test.tmp"
        done
      done ;;
    ladder)
      for round in ${ROUNDS:-1 2}; do
        for ro in 0 1; do
          for p in poisson2d poisson3d; do
            PIPEKRYLOV_DCGS2_ROWS_OUTER=$ro timeout 200 $PK bench --backends cuda --solvers gmres --executions resident \
              --problem $p --min-n 3000 --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "round $round rows outer $ro $p: status $?"; append "$OUT/b.csv" $ro $round
          done
        done
      done ;;
    large)
      for ro in 0 1; do
        for p in poisson2d:4190209 poisson3d:4096000; do
          PIPEKRYLOV_DCGS2_ROWS_OUTER=$ro timeout 200 $PK bench --backends cuda --solvers gmres --executions sync \
            --problem $p --format auto --repeats 5 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
          echo "large rows outer $ro $p: status $?"; append "$OUT/b.csv" $ro large
        done
      done ;;
  esac
done
python3 - "$CSV" <<'PY'
import csv, os, statistics, sys, collections
path = sys.argv[1]
d = collections.defaultdict(list)
for r in (csv.DictReader(open(path)) if os.path.exists(path) else []):
    d[(r["problem"], int(r["n"]), r["execution"], r["rows_outer"])].append(float(r["median_s_per_iter"]) * 1e6)
print("GMRES(30) CUDA, us per iteration (median over rounds): problem n execution | columns outer | rows outer | ratio")
for k in sorted({k[:3] for k in d}):
    a, b = d.get(k + ("0",)), d.get(k + ("1",))
    if a and b:
        a, b = statistics.median(a), statistics.median(b)
        print(f"{k[0]:10} {k[1]:>8} {k[2]:9} | {a:8.2f} | {b:8.2f} | {b/a:5.3f}")
PY
cd "$OUT" && tar czf dcgs2-rows-outer.tgz *.csv *.log 2>/dev/null; rm -f *.log
