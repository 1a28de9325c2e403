#!/usr/bin/env bash
# Issue 53: where the one call's time goes when made from Python (steps.py here), CUDA, NVIDIA
# OpenCL and host; then, when TESTS=1, the tests of the 2026-12-02 review mends that did not run on
# the GPU (one-call/tests.sh: the CUDA pool binary, every CUDA test, OpenCL and fault tests).
# Packed on the workstation:
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip -o ../.device/wheels)
#   pack-for-device --features "cuda opencl" -- --test integration --test cuda_pool
# Run: OUT=$OUT bash bench/experiments/python-call-steps/run.sh   (everything in $OUT/results.tgz)
set -u
: "${OUT:?set OUT to the output folder}"
here=bench/experiments/python-call-steps
raw=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk .device/wheels/*.whl
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
for backend in cuda host opencl; do
  PYTHONPATH=/tmp/pyk timeout 150 python3 $here/steps.py $backend "${ROUNDS:-200}" \
    >> "$raw/steps.txt" 2>&1
done
if [ "${TESTS:-1}" = 1 ]; then
  OUT=$raw bash bench/experiments/one-call/tests.sh > "$raw/tests-summary.txt" 2>&1
fi
(cd "$raw" && tar czf "$OUT/results.tgz" .)
cat "$raw/steps.txt"
[ -f "$raw/tests-summary.txt" ] && cat "$raw/tests-summary.txt"
