#!/usr/bin/env bash
# Two H200s, 2026-11-27 (d) (issue 14): the weak study at 2 ranks with the device-to-device halo
# link (PIPEKRYLOV_HALO_PEER=1) against the host-staged halo (the 2-rank default), the global
# sums' link by kernels in both; ROUNDS rounds, one-GPU runs in each.
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash scripts/h200x2-halo-link-ab.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for round in $(seq 1 ${ROUNDS:-2}); do
  mkdir -p "$OUT/r$round-staged" "$OUT/r$round-link"
  OUT=$OUT/r$round-staged RANKS="1 2" STUDIES="${STUDIES:-weak}" bash scripts/h200-scaling.sh > "$OUT/r$round-staged/table.txt" 2>&1
  cp "$OUT/r$round-staged"/*-np1.* "$OUT/r$round-link/"
  OUT=$OUT/r$round-link RANKS="2" STUDIES="${STUDIES:-weak}" PIPEKRYLOV_HALO_PEER=1 bash scripts/h200-scaling.sh > "$OUT/r$round-link/table.txt" 2>&1
  for v in staged link; do echo "== round $round, halo $v"; grep -v "status" "$OUT/r$round-$v/table.txt" | tail -n +2; done
done
(cd "$OUT" && tar czf halo-ab.tgz r*-* && rm -rf r*-staged r*-link)
