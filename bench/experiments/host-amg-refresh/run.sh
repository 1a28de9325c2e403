#!/usr/bin/env bash
# Issue 55: the host AMG refresh against a full setup on the GPU machine's 16 cores, two builds
# alternated (old = 3c06754, new = the commit named in the results' README): the values_refresh
# bench (host backend, amg, 1M) and examples/probes/amg_refresh_parts.rs, ROUNDS rounds.
# Packed on the workstation (host only, no GPU feature):
#   cargo build --release --bench values_refresh --example amg_refresh_parts, here and in a
#   worktree of 3c06754 (CARGO_TARGET_DIR=target-old); the bench's and the probe's executables
#   copied to .device/bin/{refresh,parts}-{new,old}.
# Run: OUT=$OUT bash bench/experiments/host-amg-refresh/run.sh  (files under $OUT/results.tgz)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
res=/tmp/host-amg-refresh && mkdir -p $res
for round in $(seq 1 "${ROUNDS:-3}"); do
  for b in old new; do
    timeout 120 .device/bin/refresh-$b --backend host --n 1000000 --only amg \
      --out $res/refresh_${b}_$round.csv > $res/refresh_${b}_$round.txt 2>&1
    timeout 120 .device/bin/parts-$b > $res/parts_${b}_$round.txt 2>&1
  done
done
nproc > $res/nproc.txt
tar czf "$OUT/results.tgz" -C /tmp host-amg-refresh
python3 - $res <<'PY'
import csv, glob, os, sys
res = sys.argv[1]
print(f"{'build':5} {'round':5} {'full s':>8} {'steady s':>9} {'ratio':>6} | hierarchy build / refresh ms")
for f in sorted(glob.glob(os.path.join(res, "refresh_*.csv"))):
    b, r = os.path.basename(f)[8:-4].split("_")
    row = next(csv.DictReader(open(f)))
    parts = open(os.path.join(res, f"parts_{b}_{r}.txt")).readline().strip()
    print(f"{b:5} {r:5} {float(row['full_setup_s']):8.3f} {float(row['steady_refresh_s']):9.3f} "
          f"{float(row['steady_over_full']):6.3f} | {parts.split(':', 1)[-1]}")
PY
