#!/usr/bin/env bash
# The Python package's time to solution against CuPy's CG (bench/experiments/python-vs-cupy/run.py,
# part time_to_solution: 2D Poisson 1M and 4.19M, CuPy matrix and b, CG to 1e-8) now that
# precond="amg" is set up on the device (the Python numbers in BENCHMARKS.md predate it).
# Packed on the workstation: the wheel (`cd python && maturin build --release --features opencl
# --auditwheel skip -o ../.device/wheels`).
# Run: OUT=$OUT bash bench/experiments/spgemm-blocks/python.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk .device/wheels/pipekrylov-*.whl
export PYTHONPATH=/tmp/pyk
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
python3 bench/experiments/python-vs-cupy/run.py "$OUT" time_to_solution
