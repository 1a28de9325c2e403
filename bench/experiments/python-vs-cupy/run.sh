#!/usr/bin/env bash
# On the GPU machine (device `run`, carry .device): the Rust tests of the caller's CUDA memory
# and the interrupt, the backend agreement on CUDA and NVIDIA OpenCL, the Python package's
# tests (CUDA, NVIDIA OpenCL, CuPy inputs), then run.py's measurements against CuPy.
# Packed beforehand on the workstation:
#   ../shared/tools/pack-for-device --features "cuda opencl" -- --test device_buffers \
#     --test interrupt --test backend_agreement
#   (cd python && maturin build --release --features opencl --auditwheel skip -o ../.device/wheels)
#   pip download pytest -d .device/wheels
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
repo=$(pwd)
status=0
for t in device_buffers interrupt; do
  bash .device/run "test-$t" --include-ignored 2>&1 | grep -E "^test |test result" || status=1
done
bash .device/run test-backend_agreement --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" || status=1
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk .device/wheels/*.whl
export PYTHONPATH=/tmp/pyk
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
(cd /tmp && python3 -m pytest -q -rs "$repo/python/tests" 2>&1 | tail -n 15) || status=1
python3 bench/experiments/python-vs-cupy/run.py "$out" || status=1
exit $status
