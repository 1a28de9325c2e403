#!/usr/bin/env bash
# Two H200s, 2026-11-27 (d) (issue 14): the weak study at 2 ranks with the device-to-device halo
# link (PIPEKRYLOV_HALO_PEER=1) against the host-staged halo (the 2-rank default then), the
# global sums' link by kernels in both; ROUNDS rounds, one-GPU runs in each
# (bench/experiments/h200x2-env-ab.sh: "base" = host-staged, "ab" = link).
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200x2-halo-link-ab.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
AB=PIPEKRYLOV_HALO_PEER=1 bash bench/experiments/h200x2-env-ab.sh
(cd "$OUT" && tar czf halo-ab.tgz r*-* && rm -rf r*-base r*-ab)
