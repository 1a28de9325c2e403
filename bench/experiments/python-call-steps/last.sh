#!/usr/bin/env bash
# Issue 53, a short call: the wheel that reads the solution straight into NumPy's x
# (`ReusableSolver::solve_into`): the CsrView tests (host, NVIDIA OpenCL, CUDA, with solve_into),
# the plain-call Python tests, and one round of steps.py on CUDA with the borrowed reference.
# Packed as final.sh says (pytest wheels in .device/wheels-pytest).
# Run: OUT=$OUT bash bench/experiments/python-call-steps/last.sh   (everything in $OUT/results.tgz)
set -u
: "${OUT:?set OUT to the output folder}"
here=bench/experiments/python-call-steps
repo=$(pwd)
raw=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk_new .device/wheels-new/*.whl
python3 -m pip install -q --no-index --target /tmp/pyk_pytest .device/wheels-pytest/*.whl 2>/dev/null
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
timeout 60 .device/run test-integration --include-ignored csr_view > "$raw/tests-csr-view.txt" 2>&1
(cd /tmp && PYTHONPATH=/tmp/pyk_new:/tmp/pyk_pytest timeout 60 python3 -m pytest -q -rfs --tb=line \
  -p no:warnings "$repo/python/tests/test_plain_call.py" > "$raw/pytest-plain.txt" 2>&1)
PYTHONPATH=/tmp/pyk_new timeout 60 python3 $here/steps.py cuda "${ROUNDS:-150}" borrowed 2>&1 \
  | sed "s/^/new round 1: /" > "$raw/steps.txt"
(cd "$raw" && tar czf "$OUT/results.tgz" .)
grep -E "^test result|FAILED" "$raw/tests-csr-view.txt"
tail -n 1 "$raw/pytest-plain.txt"
grep -o "cuda n = [0-9]*:\|cg-solve [0-9.-]*\|cg-solve_b [0-9.-]*\|matrix_b [0-9.-]*" "$raw/steps.txt" | paste -sd' ' | sed 's/cuda n/\ncuda n/g'
