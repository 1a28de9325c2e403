#!/usr/bin/env bash
# The last GPU check of a session: the GPU tests of the changed code (CUDA and NVIDIA OpenCL
# against the host), then the device-resident CG on the 2D/3D ladders with the defaults (one
# round, 300-iteration solves, 10 repeats) to confirm a refactor left the times alone.
# From the repository root on the device after a release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200-final-check.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
nvidia-smi -L
for t in ${TESTS:-device_resident resident_many_groups solvers precond backend_agreement}; do
  timeout 300 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
  status=$?
  { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-final-check-h200.log"
  echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
  rm -f "$OUT/test.tmp"
done
for p in poisson2d poisson3d; do
  timeout 200 bash .device/run pipekrylov bench --backends cuda,opencl --solvers ${SOLVERS:-cg} --executions resident \
    --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/final-check-$p-h200.csv" --quiet > /dev/null 2>&1
  echo "ladder $p: status $?"
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "final-check-*.csv"))):
    for r in csv.DictReader(open(f)):
        print(f"{r['solver']:8} {r['problem']:10} {r['n']:>6} {r['backend']:7} {float(r['median_s_per_iter'])*1e6:7.2f} us  launches {r['launches_per_iter']}")
PY
