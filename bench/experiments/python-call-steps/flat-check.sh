#!/usr/bin/env bash
# Issue 53: the CSR check in flat passes (6354cbb, "new") against the wheel before it (0aa1919,
# "old"): steps.py on CUDA with the borrowed Rust call as a second reference, three rounds, the
# two wheels alternated (order flipped each round); then the CSR-check and plain-call tests
# (integration: csr_view, one_call, matrix checks; the package's tests: CUDA, NVIDIA OpenCL,
# CuPy inputs) with the new wheel.
# Packed on the workstation:
#   pack-for-device --features "cuda opencl cli" -- --test integration --bin pipekrylov
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip -o DIR) at
#   both commits, copied to .device/wheels-new and .device/wheels-old;
#   pip download pytest -d .device/wheels-pytest
# Run: OUT=$OUT bash bench/experiments/python-call-steps/flat-check.sh  (raw files: $OUT/python/)
set -u
: "${OUT:?set OUT to the output folder}"
here=bench/experiments/python-call-steps
repo=$(pwd)
raw="$OUT/python"
mkdir -p "$raw"
for w in new old; do
  python3 -m pip install -q --no-index --no-deps --target "/tmp/pyk_$w" .device/wheels-$w/*.whl
done
python3 -m pip install -q --no-index --target /tmp/pyk_pytest .device/wheels-pytest/*.whl 2>/dev/null
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
for round in 1 2 3; do
  order="old new"; [ $((round % 2)) = 0 ] && order="new old"
  for w in $order; do
    PYTHONPATH=/tmp/pyk_$w timeout 100 python3 $here/steps.py cuda "${ROUNDS:-120}" borrowed 2>&1 \
      | sed "s/^/$w round $round: /" >> "$raw/steps.txt"
  done
done
timeout 120 .device/run test-integration --include-ignored --test-threads=8 csr_view one_call \
  formats matrix_market > "$raw/tests-integration.txt" 2>&1
(cd /tmp && PYTHONPATH=/tmp/pyk_new:/tmp/pyk_pytest timeout 200 python3 -m pytest -q -rfs --tb=line \
  -p no:warnings "$repo/python/tests" > "$raw/pytest.txt" 2>&1)
echo "== cg - solve (owned Rust call) / cg - solve_b (borrowed) / matrix_b (the view's check), us"
python3 - "$raw/steps.txt" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) round (\d): (\w+) n = (\d+): (.*)", line)
    if not m:
        continue
    w, r, backend, n, rest = m.groups()
    t = rest.split()
    v = dict(zip(t[::2], map(float, t[1::2])))
    rows.setdefault((int(n), w), []).append(
        f"{v['cg-solve']:.1f}/{v['cg-solve_b']:.1f}/{v['matrix_b']:.1f}")
for (n, w), vals in sorted(rows.items()):
    print(f"n = {n:6} {w}: {'  '.join(vals)}")
PY
echo "integration: $(grep -E '^test result' "$raw/tests-integration.txt" | tail -1)"
grep -E "\.\.\. FAILED" "$raw/tests-integration.txt" | head
echo "pytest: $(tail -n 1 "$raw/pytest.txt")"
