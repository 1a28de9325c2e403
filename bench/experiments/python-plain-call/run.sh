#!/usr/bin/env bash
# Issue 53's one-call overhead after the plain call moved into the extension (`solve_plain`,
# 567259c), on the GPU machine:
#  1. paired.py (python-overhead/) with the wheel of 567259c ("new") and of 1a8a3b6 ("old"),
#     alternated over two rounds, CUDA and host;
#  2. plain.py (this folder) with the new wheel, CUDA and host;
#  3. the package's tests with the new wheel (CUDA, NVIDIA OpenCL, CuPy inputs).
# Packed on the workstation:
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip -o ../.device/wheels-new)
#   the same at 1a8a3b6 into .device/wheels-old; pip download pytest -d .device/wheels-pytest
# Run: OUT=$OUT bash bench/experiments/python-plain-call/run.sh  (text files under $OUT)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
repo=$(pwd)
here=bench/experiments/python-plain-call
for w in new old; do
  python3 -m pip install -q --no-index --no-deps --target "/tmp/pyk_$w" .device/wheels-$w/*.whl
done
python3 -m pip install -q --no-index --target /tmp/pyk_pytest .device/wheels-pytest/*.whl 2>/dev/null
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
for round in 1 2; do
  for w in old new; do
    for backend in cuda host; do
      PYTHONPATH=/tmp/pyk_$w timeout 120 python3 bench/experiments/python-overhead/paired.py "$backend" 200 2>&1 \
        | grep " n = " | sed "s/^/$w round $round: /" >> "$OUT/paired.txt"
    done
  done
done
for backend in cuda host; do
  PYTHONPATH=/tmp/pyk_new timeout 120 python3 $here/plain.py $backend 300 >> "$OUT/plain.txt" 2>&1
done
(cd /tmp && PYTHONPATH=/tmp/pyk_new:/tmp/pyk_pytest timeout 300 python3 -m pytest -q -rfs --tb=line \
  -p no:warnings "$repo/python/tests" > "$OUT/pytest.txt" 2>&1)
echo "== paired (median paired_overhead, us)"
grep -o "^[a-z]* round [0-9]: [a-z]* n = [0-9]*: py [0-9.]* rust [0-9.]* paired_overhead [0-9.-]*" "$OUT/paired.txt"
echo "== plain"; cat "$OUT/plain.txt"
echo "== pytest"; tail -n 4 "$OUT/pytest.txt"
