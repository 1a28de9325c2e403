#!/usr/bin/env bash
# On the GPU machine (device `run`, carry .device): the Rust tests of the caller's CUDA memory
# and the interrupt, the backend agreement on CUDA and NVIDIA OpenCL, the Python package's
# tests (CUDA, NVIDIA OpenCL, CuPy inputs), then run.py's measurements against CuPy.
# Packed beforehand on the workstation:
#   the team's pack-for-device tool (release test binaries into .device/bin) with --features "cuda opencl" -- --test device_buffers \
#     --test interrupt --test ilu
#   (cd python && maturin build --release --features opencl --auditwheel skip -o ../.device/wheels)
#   pip download pytest -d .device/wheels
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
repo=$(pwd)
status=0
for t in device_buffers interrupt; do
  bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "^test |test result" || status=1
done
# ILU on the real matrices, host, OpenCL (the GPU) and CUDA: iterations, fill, setup per line.
bash .device/run test-ilu --include-ignored --nocapture --test-threads 1 2>&1 \
  | grep -E "^(host|opencl|cuda) |test result|FAILED|panicked" | tee "$out/ilu_real_matrices.txt" || status=1
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk .device/wheels/*.whl
export PYTHONPATH=/tmp/pyk
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
(cd /tmp && python3 -m pytest -q -rfs --tb=line -p no:warnings "$repo/python/tests" 2>&1 | tail -n 25) || status=1
python3 bench/experiments/python-vs-cupy/run.py "$out" || status=1
exit $status
