#!/usr/bin/env bash
# Ran once at commit 4c53959 (2026-11-27 (f)) and reverted in a4dd1f7: no gain (bench/log/2026-11-27-dcgs2-register-probes.md); the switches
# no longer exist.
# Issue 15: GMRES(30)'s device-resident step at n = 4K-65K on CUDA with the fused DCGS2 product
# limited to B blocks per multiprocessor (PIPEKRYLOV_DCGS2_PRODUCT_BLOCKS_PER_SM, reserved shared
# memory; 0 = no limit) and the DCGS2 update starting the product right after its wait by rule R
# (PIPEKRYLOV_DCGS2_START_NEXT: 0 never, 1 the default rule, 2 always). The 128-register product of
# 395c1a7 was 0.6-0.9 us faster per iteration at 32K-65K than the 64-register one, which lets twice
# as many of its blocks wait beside the running update. GPU tests of GMRES with the settings
# (PARTS=tests), then the ladders (PARTS=ladder: SETTINGS "B:R ...", ROUNDS alternated). One CSV
# (dcgs2-occupancy-h200.csv: the bench's columns after blocks, rule and round), a table last.
# From the repository root on the device after a release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200-dcgs2-occupancy.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
CSV="$OUT/dcgs2-occupancy-h200.csv"
SETTINGS=${SETTINGS:-0:1 2:1 2:2 3:2 0:2}
append() {
  python3 bench/experiments/append_tagged.py "$1" "$CSV" blocks_per_sm=$2 start_next_rule=$3 round=$4
}
nvidia-smi -L
for part in ${PARTS:-tests ladder}; do
  case $part in
    tests)
      for s in $SETTINGS; do
        for t in device_resident dcgs2_two_kernels; do
          PIPEKRYLOV_DCGS2_PRODUCT_BLOCKS_PER_SM=${s%%:*} PIPEKRYLOV_DCGS2_START_NEXT=${s##*:} \
            timeout 240 bash .device/run "test-$t" --include-ignored gmres dcgs2 > "$OUT/test.tmp" 2>&1
          status=$?
          { echo "== $t ($s): status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-dcgs2-occupancy-h200.log"
          echo "$t ($s): status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -3
          rm -f "$OUT/test.tmp"
        done
      done ;;
    ladder)
      for round in ${ROUNDS:-1 2}; do
        for s in $SETTINGS; do
          for p in poisson2d poisson3d; do
            PIPEKRYLOV_DCGS2_PRODUCT_BLOCKS_PER_SM=${s%%:*} PIPEKRYLOV_DCGS2_START_NEXT=${s##*:} timeout 200 $PK bench \
              --backends cuda --solvers gmres --executions resident --problem $p --min-n 3000 --max-n 70000 \
              --iterations 300 --repeats 10 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "round $round setting $s $p: status $?"; append "$OUT/b.csv" ${s%%:*} ${s##*:} $round
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
    d[(r["problem"], int(r["n"]), r["blocks_per_sm"] + ":" + r["start_next_rule"])].append(float(r["median_s_per_iter"]) * 1e6)
settings = sorted({k[2] for k in d})
print("GMRES(30) resident CUDA, us per iteration (median over rounds); columns blocks/SM:start-next rule")
print(f"{'problem':10} {'n':>6} | " + " | ".join(f"{s:>6}" for s in settings))
for p, n in sorted({k[:2] for k in d}):
    print(f"{p:10} {n:>6} | " + " | ".join(f"{statistics.median(d[(p, n, s)]):6.2f}" if d.get((p, n, s)) else "     -" for s in settings))
PY
cd "$OUT" && tar czf dcgs2-occupancy.tgz *.csv *.log 2>/dev/null; rm -f *.log
