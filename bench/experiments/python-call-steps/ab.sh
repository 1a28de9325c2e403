#!/usr/bin/env bash
# Issue 53: the plain call with int32 SciPy arrays borrowed as the crate's CsrView ("new") against
# the wheel before it ("old", the same steps hook), steps.py alternated over two rounds (CUDA and
# host; NVIDIA OpenCL once each), then the new wheel's Python tests (CUDA, NVIDIA OpenCL, CuPy
# inputs) and the CsrView integration tests (host, NVIDIA OpenCL, CUDA).
# Packed on the workstation:
#   pack-for-device --features "cuda opencl" -- --test integration
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip -o DIR) for
#   both commits, copied to .device/wheels-new and .device/wheels-old;
#   pip download pytest -d .device/wheels-pytest
# Run: OUT=$OUT bash bench/experiments/python-call-steps/ab.sh   (everything in $OUT/results.tgz)
set -u
: "${OUT:?set OUT to the output folder}"
here=bench/experiments/python-call-steps
repo=$(pwd)
raw=$(mktemp -d)
for w in new old; do
  python3 -m pip install -q --no-index --no-deps --target "/tmp/pyk_$w" .device/wheels-$w/*.whl
done
python3 -m pip install -q --no-index --target /tmp/pyk_pytest .device/wheels-pytest/*.whl 2>/dev/null
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
rounds=${ROUNDS:-200}
for round in 1 2; do
  for w in old new; do
    for backend in cuda host; do
      PYTHONPATH=/tmp/pyk_$w timeout 100 python3 $here/steps.py $backend $rounds 2>&1 \
        | sed "s/^/$w round $round: /" >> "$raw/steps.txt"
    done
  done
done
for w in old new; do
  PYTHONPATH=/tmp/pyk_$w timeout 100 python3 $here/steps.py opencl 100 2>&1 \
    | sed "s/^/$w round 1: /" >> "$raw/steps.txt"
done
(cd /tmp && PYTHONPATH=/tmp/pyk_new:/tmp/pyk_pytest timeout 200 python3 -m pytest -q -rfs --tb=line \
  -p no:warnings "$repo/python/tests" > "$raw/pytest.txt" 2>&1)
timeout 150 .device/run test-integration --include-ignored --test-threads=8 csr_view one_call \
  > "$raw/tests-integration.txt" 2>&1
(cd "$raw" && tar czf "$OUT/results.tgz" .)
echo "== cg - solve (us): the plain call over the crate's one call on an owned CsrMatrix"
python3 - "$raw/steps.txt" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) round (\d): (\w+) n = (\d+): (.*)", line)
    if not m:
        continue
    w, r, backend, n, rest = m.groups()
    vals = dict(zip(rest.split()[::2], map(float, rest.split()[1::2])))
    rows.setdefault((backend, int(n)), {}).setdefault(w, []).append(
        f"{vals['cg-solve']:.1f}/{vals['solve']:.0f}")
for (backend, n), ws in sorted(rows.items()):
    print(f"{backend:6} n = {n:6}: old {' '.join(ws.get('old', []))}  new {' '.join(ws.get('new', []))}")
PY
echo "== pytest"; tail -n 3 "$raw/pytest.txt"
echo "== integration"; grep -E "^test result|FAILED" "$raw/tests-integration.txt" | head
