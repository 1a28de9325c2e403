#!/usr/bin/env bash
# One device call (nvidia-h200) for session 2026-11-29 (g): ILUTP on the real matrices (tests/ilu.rs
# prints every backend's iterations), the AMG GPU suites, --amg-strength-decay on CUDA
# (../amg-strength-decay/run.sh), and the Python package: its tests on CUDA / NVIDIA OpenCL / CuPy
# and the one-call overhead (../python-vs-cupy/overhead_parts.py, cold and warm). Packed on the
# workstation with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test ilu --test amg --test amg_device_setup
#   (cd python && maturin build --release --features opencl --auditwheel skip -o ../.device/wheels)
#   pip download pytest -d .device/wheels
# Writes $OUT/*.log, $OUT/ilu_real_matrices.txt, $OUT/amg-strength-decay.csv, $OUT/overhead_parts.txt.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
repo=$(pwd)
bash .device/run test-ilu --include-ignored --nocapture --test-threads 1 > "$OUT/test-ilu.log" 2>&1
echo "test-ilu: rc=$? $(grep -E '^test result' "$OUT/test-ilu.log" | tail -1)" | tee "$OUT/tests.txt"
grep -oE "(host|opencl|cuda) +[A-Za-z0-9_]+ +n +[0-9]+ its.*" "$OUT/test-ilu.log" > "$OUT/ilu_real_matrices.txt"
for t in amg amg_device_setup; do
  timeout 200 bash .device/run "test-$t" --include-ignored --skip refresh_time > "$OUT/test-$t.log" 2>&1
  echo "test-$t: rc=$? $(grep -E '^test result' "$OUT/test-$t.log" | tail -1)" | tee -a "$OUT/tests.txt"
done
PK_RUN="bash .device/run pipekrylov" BACKENDS=cuda OUT="$OUT" bash bench/experiments/amg-strength-decay/run.sh > "$OUT/amg-strength-decay.txt" 2>&1
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk .device/wheels/*.whl
export PYTHONPATH=/tmp/pyk
(cd /tmp && timeout 240 python3 -m pytest -q -rfs --tb=line -p no:warnings "$repo/python/tests" 2>&1 | tail -n 8) \
  | tee "$OUT/pytest.txt"
for backend in cuda host; do
  (cd /tmp && timeout 120 python3 "$repo/bench/experiments/python-vs-cupy/overhead_parts.py" "$backend") \
    2>&1 | tee -a "$OUT/overhead_parts.txt"
done
echo "== summary"
cat "$OUT/tests.txt"
sed -n 's/^\(cuda\|opencl\|host\) *\([A-Za-z0-9_]*\) *n *\([0-9]*\) its *\([0-9]*\).*/\1 \2 \4/p' "$OUT/ilu_real_matrices.txt"
tail -n 32 "$OUT/amg-strength-decay.txt"
