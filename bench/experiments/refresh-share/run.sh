#!/usr/bin/env bash
# Issue 55's refresh share (values-only refresh against a full setup, 1M unknowns) after the
# refresh changes of 2026-11-30 (q) (fingerprints computed once per matrix, point-block Jacobi
# inverted in parallel, host-only refreshes run before the values are written: no device backup)
# against the bench of 3dded85, both in this call, on CUDA, NVIDIA OpenCL and the host (16
# cores); the refresh tests on CUDA and NVIDIA OpenCL first; then issue 53's one-call overhead in
# alternated pairs (bench/experiments/python-overhead/paired.py) with the new wheel.
# Packed on the workstation (a clone at the commit measured):
#   the team's pack-for-device tool with --features "cuda opencl cli" -- --test integration \
#     --bench values_refresh
#   cp of 3dded85's test-values_refresh (the same tool in a clone at 3dded85) to .device/old/
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip \
#     -o ../.device/wheels)
# Run: OUT=$OUT bash bench/experiments/refresh-share/run.sh (PYTHON=0: no Python part;
# BENCH_OLD=0: no bench of 3dded85; BENCH_BACKENDS, TESTS: the backends and test filters).
# The tests that start the CLI binary (cli_defects) are skipped: the packed test binary looks
# for it where it was built.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
status=0
timeout 300 bash .device/run test-integration --include-ignored --test-threads 8 ${TESTS:-values_refresh \
  device_matrix device_buffers approx_inverse bilu precond} --skip refresh_time_against_setup_time \
  --skip cli_defects \
  > "$OUT/tests.txt" 2>&1 || status=1
grep -E "FAILED|panicked|test result" "$OUT/tests.txt" | tail -n 5
for be in ${BENCH_BACKENDS:-cuda opencl host}; do
  bash .device/run test-values_refresh --backend "$be" --n 1000000 --out "$OUT/refresh_${be}_new.csv" \
    > "$OUT/refresh_${be}_new.txt" 2>&1 || status=1
  if [ "${BENCH_OLD:-1}" = 1 ]; then
    OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1} \
      .device/old/test-values_refresh --backend "$be" --n 1000000 --out "$OUT/refresh_${be}_old.csv" \
      > "$OUT/refresh_${be}_old.txt" 2>&1 || status=1
  fi
done
if [ "${PYTHON:-1}" = 1 ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/pyk .device/wheels/pipekrylov-*.whl
  for be in cuda host; do
    PYTHONPATH=/tmp/pyk python3 bench/experiments/python-overhead/paired.py "$be" 300 \
      >> "$OUT/paired_overhead.txt" 2>&1 || status=1
  done
  cat "$OUT/paired_overhead.txt"
fi
python3 - "$OUT" <<'PY'
import csv, sys, os
out = sys.argv[1]
print(f"{'backend':7} {'precond':19} {'old ratio':>9} {'new ratio':>9} {'steady':>7} {'new full s':>10} {'new refresh s':>13}")
for be in ("cuda", "opencl", "host"):
    rows = {}
    for w in ("old", "new"):
        p = os.path.join(out, f"refresh_{be}_{w}.csv")
        if os.path.exists(p):
            for r in csv.DictReader(open(p)):
                rows.setdefault(r["precond"], {})[w] = r
    for name, d in rows.items():
        o, n = d.get("old"), d.get("new")
        f = lambda r, k: float(r[k]) if r else float("nan")
        steady = float(n["steady_over_full"]) if n and "steady_over_full" in n else float("nan")
        print(f"{be:7} {name:19} {f(o, 'refresh_over_full'):9.3f} {f(n, 'refresh_over_full'):9.3f} {steady:7.3f} "
              f"{f(n, 'full_setup_s'):10.4f} {f(n, 'refresh_s'):13.4f}")
PY
# One archive back (the device call returns a limited number of files).
tar czf /tmp/results.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/results.tgz "$OUT/"
exit $status
