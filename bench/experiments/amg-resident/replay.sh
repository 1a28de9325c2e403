#!/usr/bin/env bash
# Issue 56: CG + AMG in the device-resident mode once its batches are recorded and replayed (a
# ReusableSolver solving again; `examples/probes/amg_resident_replay.rs`), against the synchronous
# modes, CUDA, 2D Poisson 4096..65536; then the cycle's kernel time without launches by ncu
# (`ncu-cycle.sh`), the issue's measure. Packed: pack-for-device --features "cuda opencl cli" --
# --bin pipekrylov, the probe built with `cargo build --release --features cuda --example
# amg_resident_replay` and copied to .device/bin.
# Run: OUT=$OUT bash bench/experiments/amg-resident/replay.sh  (files in $OUT/replay/)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
dir="$OUT/replay"
mkdir -p "$dir"
timeout 200 .device/bin/amg_resident_replay cuda "${ROUNDS:-20}" 2>&1 | tee "$dir/replay-cuda.txt"
OUT="$dir" bash bench/experiments/amg-resident/ncu-cycle.sh 2>&1 | tail -4
