#!/usr/bin/env bash
# Where NVIDIA OpenCL loses time against CUDA in CG + AMG (issue 52's OpenCL goal, 1.25x): kernel
# timelines of the same solves on both runtimes (`--tune cuda_trace=FILE`, `--tune
# opencl_trace=FILE`, the OpenCL one from profiling events), then per kernel name the device time
# per iteration on each runtime and the idle time between kernels (tools: trace_compare.py beside
# this script).
# Packed on the workstation: `.device/bin` holds release builds (`--features "cuda opencl cli"`)
# of pipekrylov.
# Run: OUT=$OUT bash bench/experiments/amg-opencl-trace/run.sh   (writes $OUT/traces.tar.gz,
#   $OUT/amg-opencl-trace.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=$(dirname "$0")
for spec in poisson3d:2097152 poisson2d:1048576 poisson2d:4194304; do
  name=${spec%%:*}-${spec##*:}
  for backend in cuda opencl; do
    timeout 240 bash .device/run pipekrylov solve --generate "$spec" --rhs a-ones --solver cg --precond amg \
      --backend "$backend" --tune "${backend}_trace=$OUT/trace-$name-$backend.csv" --json \
      > "$OUT/trace-$name-$backend.json" 2>> "$OUT/trace-run.log"
  done
done
python3 "$here/trace_compare.py" "$OUT" > "$OUT/amg-opencl-trace.csv"
(cd "$OUT" && tar czf traces.tar.gz trace-*.csv trace-*.json && rm -f trace-*.csv trace-*.json)
column -s, -t < "$OUT/amg-opencl-trace.csv" | head -80
