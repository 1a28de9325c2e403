#!/usr/bin/env bash
# One environment switch at two ranks, A/B (issue 14): in each of ROUNDS rounds (default 2), the
# studies of bench/experiments/h200-scaling.sh (STUDIES, default weak) at 1 and 2 GPUs as the defaults
# run them ("base"), then the 2-GPU runs again with the assignment AB (for example
# AB=PIPEKRYLOV_HALO_PEER=1) in the environment ("ab"); the one-GPU runs are shared, so both
# tables give efficiencies against the same one-GPU times. Tables under $OUT/r<round>-{base,ab}.
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... AB=NAME=VALUE bash bench/experiments/h200x2-env-ab.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
: "${AB:?set AB to NAME=VALUE, the switch to compare}"
for round in $(seq 1 "${ROUNDS:-2}"); do
  mkdir -p "$OUT/r$round-base" "$OUT/r$round-ab"
  OUT=$OUT/r$round-base RANKS="1 2" STUDIES="${STUDIES:-weak}" bash bench/experiments/h200-scaling.sh > "$OUT/r$round-base/table.txt" 2>&1
  cp "$OUT/r$round-base"/*-np1.* "$OUT/r$round-ab/"
  env "$AB" OUT="$OUT/r$round-ab" RANKS="2" STUDIES="${STUDIES:-weak}" bash bench/experiments/h200-scaling.sh > "$OUT/r$round-ab/table.txt" 2>&1
  for v in base ab; do
    label=$v; [ "$v" = ab ] && label="ab ($AB)"
    echo "== round $round, $label"; grep -v "status" "$OUT/r$round-$v/table.txt" | tail -n +2
  done
done
