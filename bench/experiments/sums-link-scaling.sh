#!/usr/bin/env bash
# The device-to-device global sums (PIPEKRYLOV_SUMS_PEER) in the scaling study of issue 14: the
# one-GPU runs once, then 1 -> N GPUs (RANKS, default 2) with the sums on the host (=0) and on the devices (=1), in
# the same call on the same machine (bench/experiments/h200-scaling.sh for each, STUDIES as there); the
# efficiency tables of both last. From the repository root on the device, release build with
# --features "cuda opencl mpi cli" packed into .device/bin:
#   OUT=... bash bench/experiments/sums-link-scaling.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
studies=${STUDIES:-strong3d strong2d weak}
mkdir -p "$OUT/sums0" "$OUT/sums1"
STUDIES="$studies" RANKS=1 OUT="$OUT/sums0" bash bench/experiments/h200-scaling.sh > /dev/null
cp "$OUT"/sums0/*-np1.csv "$OUT/sums1/"
for mode in 0 1; do
  PIPEKRYLOV_SUMS_PEER=$mode STUDIES="$studies" RANKS="${RANKS:-2}" OUT="$OUT/sums$mode" bash bench/experiments/h200-scaling.sh \
    > "$OUT/table-sums$mode.txt"
done
for mode in 0 1; do echo "== PIPEKRYLOV_SUMS_PEER=$mode"; grep -v 'status' "$OUT/table-sums$mode.txt"; done
# One archive (the device returns a limited number of files).
(cd "$OUT" && tar czf sums-link-scaling.tgz sums0 sums1 table-*.txt && rm -rf sums0 sums1)
