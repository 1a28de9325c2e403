#!/usr/bin/env bash
# Issue 15's floors: each backend's launch-throughput floor measured in the same run as the
# device-resident solves. GPU test device_resident (CUDA and NVIDIA OpenCL), the graph-node cost
# (`example-persistent_cg`: 2 empty kernels per iteration in a CUDA graph), the back-to-back
# launch cost of a stream / queue (`example-latency_breakdown N`: fill(1)), then both execution
# modes with 300-iteration solves on the 2D and 3D ladders (bench/experiments/h200-resident.sh PARTS=long).
# From the repository root on the device, release build with --features "cuda opencl cli"
# (bin, test-device_resident, example-persistent_cg, example-latency_breakdown) in .device/bin:
#   OUT=... bash bench/experiments/h200-floors.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
timeout 300 bash .device/run test-device_resident --include-ignored > "$OUT/test-device_resident.log" 2>&1
grep -E "test result|FAILED|panicked" "$OUT/test-device_resident.log"
timeout 120 bash .device/run example-persistent_cg > "$OUT/persistent-cg-probe.txt" 2>&1
cat "$OUT/persistent-cg-probe.txt"
for n in 225 3969 65025; do
  timeout 120 bash .device/run example-latency_breakdown $n > "$OUT/latency-breakdown-$n.txt" 2>&1
  cat "$OUT/latency-breakdown-$n.txt"
done
OUT=$OUT PARTS=long bash bench/experiments/h200-resident.sh 2>&1 | tail -70
