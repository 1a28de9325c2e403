#!/usr/bin/env bash
# Issue 53's one-call overhead with SciPy's int32 CSR built by CsrMatrix::from_i32 (one pass;
# 8ab84a0) against the wheel of 1453b59 (int32 -> usize, then CsrMatrix::new's checks), on the GPU
# machine: paired.py (pipekrylov.cg against the crate's one call, alternated pairs) with both
# wheels alternated over two rounds, CUDA and host backends.
# Packed on the workstation: (cd python && maturin build --release --features "cuda opencl"
#   --auditwheel skip -o ../.device/wheels-new), the same in a clone at 1453b59 into
#   .device/wheels-old.
# Run: OUT=$OUT bash bench/experiments/python-overhead/from_i32.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
for w in old new; do
  python3 -m pip install -q --no-index --no-deps --target "/tmp/pyk_$w" .device/wheels-$w/*.whl
done
for round in 1 2; do
  for w in old new; do
    for be in cuda host; do
      PYTHONPATH=/tmp/pyk_$w python3 bench/experiments/python-overhead/paired.py "$be" "${PAIRS:-200}" 2>&1 \
        | sed "s/^/$w round $round: /" >> "$OUT/from_i32.txt"
    done
  done
done
python3 - "$OUT/from_i32.txt" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) round (\d): (\w+) n = (\d+): .*paired_overhead (-?[\d.]+)", line)
    if m:
        rows.setdefault((m[3], int(m[4]), m[1]), []).append(float(m[5]))
print(f"{'backend':7} {'n':>5} {'old us':>8} {'new us':>8}")
for (be, n) in sorted({(k[0], k[1]) for k in rows}):
    med = lambda w: statistics.median(rows.get((be, n, w), [float('nan')]))
    print(f"{be:7} {n:5} {med('old'):8.1f} {med('new'):8.1f}")
PY
