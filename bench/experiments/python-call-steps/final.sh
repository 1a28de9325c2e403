#!/usr/bin/env bash
# Issue 53: the plain call of the final wheel (CsrView, four-chain fingerprints), three rounds of
# steps.py with the borrowed Rust call as a second reference (CUDA and host; NVIDIA OpenCL once),
# then every CUDA test (--include-ignored), the CsrView / one-call / values-refresh tests on NVIDIA
# OpenCL, and the package's tests (CUDA, NVIDIA OpenCL, CuPy inputs).
# Packed on the workstation:
#   pack-for-device --features "cuda opencl" -- --test integration
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip -o DIR),
#   copied to .device/wheels-new; pip download pytest -d .device/wheels-pytest
# Run: OUT=$OUT bash bench/experiments/python-call-steps/final.sh   (everything in $OUT/results.tgz)
set -u
: "${OUT:?set OUT to the output folder}"
here=bench/experiments/python-call-steps
repo=$(pwd)
raw=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk_new .device/wheels-new/*.whl
python3 -m pip install -q --no-index --target /tmp/pyk_pytest .device/wheels-pytest/*.whl 2>/dev/null
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
for round in 1 2 3; do
  for backend in cuda host; do
    PYTHONPATH=/tmp/pyk_new timeout 100 python3 $here/steps.py $backend "${ROUNDS:-200}" borrowed 2>&1 \
      | sed "s/^/new round $round: /" >> "$raw/steps.txt"
  done
done
PYTHONPATH=/tmp/pyk_new timeout 100 python3 $here/steps.py opencl 100 borrowed 2>&1 \
  | sed "s/^/new round 1: /" >> "$raw/steps.txt"
timeout 150 .device/run test-integration --include-ignored --test-threads=8 cuda \
  > "$raw/tests-cuda.txt" 2>&1
timeout 120 .device/run test-integration --test-threads=8 opencl_solver_from_view one_call \
  values_refresh > "$raw/tests-opencl.txt" 2>&1
(cd /tmp && PYTHONPATH=/tmp/pyk_new:/tmp/pyk_pytest timeout 200 python3 -m pytest -q -rfs --tb=line \
  -p no:warnings "$repo/python/tests" > "$raw/pytest.txt" 2>&1)
(cd "$raw" && tar czf "$OUT/results.tgz" .)
echo "== per round: cg - solve (owned Rust call) / cg - solve_b (borrowed Rust call), us"
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
    rows.setdefault((backend, int(n)), []).append(f"{v['cg-solve']:.1f}/{v['cg-solve_b']:.1f}")
for (backend, n), vals in sorted(rows.items()):
    print(f"{backend:6} n = {n:6}: {'  '.join(vals)}")
PY
for f in "$raw"/tests-*.txt; do echo "$(basename "$f"): $(grep -E '^test result' "$f" | tail -1)"; done
grep -E "\.\.\. FAILED" "$raw"/tests-*.txt | head
echo "== pytest"; tail -n 2 "$raw/pytest.txt"
