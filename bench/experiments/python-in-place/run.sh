#!/usr/bin/env bash
# A CuPy matrix used in place by the CUDA backend (DeviceMatrix::from_csr_buffers,
# ReusableSolver::on_device, the Python package's _Solver.on_device): the GPU tests of the crate
# (integration tests named by TEST_FILTER, `--include-ignored`: CUDA and NVIDIA OpenCL) and of the
# Python package (pytest with CuPy), then the setup and time to solution from a SciPy matrix
# against the same CuPy matrix used in place, with CuPy's CG in the same run
# (bench/experiments/python-vs-cupy/run.py, part in_place_matrix).
# Packed on the workstation: `.device/bin` with the integration tests (pack-for-device
# --features "cuda opencl cli" -- --bin pipekrylov --test integration) and the wheel
# (`cd python && maturin build --release --features opencl --auditwheel skip -o ../.device/wheels`).
# Run: OUT=$OUT [TEST_FILTER=...] bash bench/experiments/python-in-place/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 \
  ${TEST_FILTER:-device_matrix device_buffers amg_device_setup precond::} > "$OUT/integration-gpu.txt" 2>&1
echo "integration: rc=$? $(grep -E '^test result' "$OUT/integration-gpu.txt" | tail -1)"
grep -E "FAILED|panicked" "$OUT/integration-gpu.txt" | head -5
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk .device/wheels/pipekrylov-*.whl
export PYTHONPATH=/tmp/pyk
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
(cd /tmp && timeout 300 python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests") > "$OUT/pytest-gpu.txt" 2>&1
echo "pytest: rc=$? $(tail -1 "$OUT/pytest-gpu.txt")"
grep -E "^FAILED|Error" "$OUT/pytest-gpu.txt" | head -8
timeout 300 python3 bench/experiments/python-vs-cupy/run.py "$OUT" in_place_matrix
