#!/usr/bin/env bash
# Issue 13's memory goal with the single-precision setup: the rounded copy of A shares the
# solver's row pointers and column indices (GPU backends). GPU tests afsai and fsai (CUDA and
# NVIDIA OpenCL), then PCG to 1e-6 with aFSAI (eq. 17 and the step rule, f64 and f32 setups) on
# the three FSAI problems, CUDA and OpenCL, printing the peak setup memory over the final
# factors; then the OpenCL Poisson ladders (both execution modes, 300-iteration solves) once
# more (PARTS=opencl). From the repository root on the device, after the release build with
# --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-afsai-f32-shared.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
ln -sfn "$PWD" /tmp/clean 2>/dev/null || true
export PK="bash .device/run pipekrylov"
for t in afsai fsai; do
  timeout 200 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
  { echo "== $t"; cat "$OUT/test.tmp"; } >> "$OUT/tests.log"
  grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | sed "s/^/$t: /"
done
rm -f "$OUT/test.tmp"
csv="$OUT/afsai-f32-shared-h200.csv"
PRECS="afsai afsai:30:1:1e-3:ratio:f32 afsai:30:1:1e-2:step afsai:30:1:1e-2:step:f32" \
  timeout 300 bash scripts/fsai-bench.sh "$csv" "cuda opencl" "${PROBLEMS:-elasticity3d:300000 aniso2d:2700000 jump3d:1000000}" > /dev/null
echo "bench: status $?"
python3 - "$csv" <<'PY'
import csv, sys
print(f"{'problem':12} {'backend':7} {'precond':8} {'rule':5} {'setup prec':10} {'its':>5} {'setup s':>8} {'peak/final':>10}")
for r in csv.DictReader(open(sys.argv[1])):
    mem = int(r["memory_bytes"]) or 1
    print(f"{r['problem']:12} {r['backend']:7} {r['precond']:8} {r['stop']:5} {r.get('setup_precision', '-'):10} {r['iterations']:>5} "
          f"{float(r['setup_s']):8.3f} {int(r['peak_setup_bytes']) / mem:10.2f}")
PY
if [[ " ${PARTS:-} " == *" opencl "* ]]; then
  OUT=$OUT BACKENDS=opencl PARTS=long bash bench/experiments/h200-resident.sh | tail -50
fi
