#!/usr/bin/env bash
# Short rows on NVIDIA OpenCL: CSR against SELL-32-256 over the whole size ladder of 2D and 3D
# Poisson (5 and 7 entries per row), the SpMV and pipelined CG, BiCGStab, GMRES(30) in the default
# execution mode, one H200 (the automatic format keeps CSR for rows this short; this asks whether
# OpenCL should take SELL). From the repository root on the device, release build with --features
# "cuda opencl mpi cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-opencl-sell-ladder.sh     (PROBLEMS="poisson2d poisson3d", BACKENDS=opencl)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
nvidia-smi -L
# The files carry the card's tag (a call that names nvidia-h200 may get an H100).
if nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then card=h200; else card=h100; fi
for p in ${PROBLEMS:-poisson2d poisson3d}; do
  for f in csr sell; do
    timeout 280 $PK bench --backends "${BACKENDS:-opencl}" --solvers spmv,cg,bicgstab,gmres --problem "$p" \
      --format $f --repeats 5 --out "$OUT/ladder-$p-$f.csv" --quiet > /dev/null 2>&1
    echo "ladder $p $f: status $?"
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys, collections
out = sys.argv[1]
d = {}
for f in glob.glob(os.path.join(out, "ladder-*.csv")):
    for r in csv.DictReader(open(f)):
        d[(r["backend"], r["problem"], r["solver"], int(r["n"]), r["format"].split(":")[0])] = float(r["median_s_per_iter"]) * 1e6
print("us per iteration: CSR | SELL-32-256 (SELL / CSR)")
for k in sorted({k[:4] for k in d}):
    c, s = d.get(k + ("csr",)), d.get(k + ("sell",))
    if c and s:
        print(f"{k[0]:7} {k[1]:10} {k[2]:9} {k[3]:>8} | {c:8.2f} | {s:8.2f} ({s / c:5.3f})")
PY
files=$(ls "$OUT"/ladder-*.csv 2>/dev/null)
if [ -n "$files" ]; then
  python3 bench/experiments/merge_tagged.py "$OUT/opencl-sell-ladder-$card.csv" $files
fi
