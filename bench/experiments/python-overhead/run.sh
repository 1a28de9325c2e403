#!/usr/bin/env bash
# Issue 53's per-call overhead after the array addresses came from NumPy's __array_struct__
# (49a33d3) against the wheel of 78d5ea7, on the GPU machine: overhead_parts.py (medians of 40
# calls and 200 warm calls, us) with the CUDA and host backends, wheels alternated over 3 rounds;
# then run.py's overhead part (the BENCHMARKS table) and the package's tests, both with the new
# wheel (CUDA, NVIDIA OpenCL, CuPy inputs).
# Packed on the workstation (nothing else needed in .device):
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip -o ../.device/wheels-new)
#   the same at 78d5ea7 into .device/wheels-old; pip download pytest -d .device/wheels-pytest
# Run: OUT=$OUT bash bench/experiments/python-overhead/run.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
repo=$(pwd)
for w in new old; do
  python3 -m pip install -q --no-index --no-deps --target "/tmp/pyk_$w" .device/wheels-$w/*.whl
done
python3 -m pip install -q --no-index --target /tmp/pyk_pytest .device/wheels-pytest/*.whl
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
for round in 1 2 3; do
  for w in old new; do
    for backend in cuda host; do
      PYTHONPATH=/tmp/pyk_$w python3 bench/experiments/python-vs-cupy/overhead_parts.py "$backend" 2>&1 \
        | grep " n = " | sed "s/^/$w round $round: /" >> "$OUT/overhead_parts.txt"
    done
  done
done
PYTHONPATH=/tmp/pyk_new python3 bench/experiments/python-vs-cupy/run.py "$OUT" overhead 2>&1 | tail -8
(cd /tmp && PYTHONPATH=/tmp/pyk_new:/tmp/pyk_pytest python3 -m pytest -q -rfs --tb=line -p no:warnings \
  "$repo/python/tests" 2>&1 | tail -n 6)
python3 - "$OUT/overhead_parts.txt" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    head, _, rest = line.partition(" n = ")
    w = head.split()[0]
    backend = head.split(":")[1].split()[0]
    n, _, fields = rest.partition(":")
    d = {k: float(v) for k, v in re.findall(r"(\w+) (-?[\d.]+)", fields)}
    rows.setdefault((backend, int(n), w), []).append(d)
print(f"{'backend':7} {'n':>5} {'wheel':5} {'py_one_call - rust':>18} {'warm overhead':>13} {'Solver.__init__ - ctor':>22}")
for (backend, n, w), ds in sorted(rows.items()):
    med = lambda f: statistics.median(f(d) for d in ds)
    print(f"{backend:7} {n:5} {w:5} {med(lambda d: d['py_one_call'] - d['rust_one_call']):18.1f} "
          f"{med(lambda d: d['warm_overhead']):13.1f} {med(lambda d: d['py_Solver_init'] - d['ctor_wall']):22.1f}")
PY
