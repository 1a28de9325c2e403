#!/usr/bin/env bash
# Follow-up of run.sh: only pipelined CG, synchronous, on NVIDIA OpenCL (the ladder rows that
# differed), old and new alternated ROUNDS times (default 12). summary.py reads the CSVs.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for r in $(seq 1 "${ROUNDS:-12}"); do
  order="old new"; [ $((r % 2)) -eq 0 ] && order="new old"
  for v in $order; do
    timeout 100 bash .device/run "pipekrylov-$v" bench --backends opencl --solvers cg --executions sync \
      --problem poisson2d --max-n 70000 --iterations 300 --repeats 5 --quiet \
      --out "$OUT/ladder-$v-r$r.csv" > /dev/null 2>&1 || echo "$v round $r: status $?"
  done
done
python3 "$(dirname "$0")/summary.py" "$OUT"
