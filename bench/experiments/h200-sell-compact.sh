#!/usr/bin/env bash
# SELL-32-256 with 16-bit column offsets per slice against 32-bit indices
# (PIPEKRYLOV_SELL_COMPACT=0) on the H200 (issue 16): the GPU tests, then the SpMV alone (20
# samples) and CG, BiCGStab (pipelined, f64, 5 repeats) on MATRICES (default: 2D/3D Poisson,
# 27-point stencil, elasticity3d at the ladder top), CUDA and NVIDIA OpenCL. One CSV
# `sell-compact-h200.csv` (column `knob` = u16 or u32 and the part) under $OUT, a table last.
# Run from the repository root with the release build packed into .device/bin.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
TMP=$(mktemp -d)
for t in ${TESTS-backend_agreement cuda_backend}; do
  bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
  echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | head -n 4
done
for case in ${MATRICES:-poisson2d:4190209 poisson3d:4096000 stencil27:4096000 elasticity3d:324864}; do
  p=${case%%:*}; n=${case#*:}
  for C in 1 0; do
    w=$([ $C = 1 ] && echo u16 || echo u32)
    PIPEKRYLOV_SELL_COMPACT=$C timeout 120 $PK bench --backends cuda,opencl --solvers spmv \
      --problem $p --min-n $n --max-n $n --format sell:32:256 --repeats 20 \
      --out "$TMP/s-$p-$w-spmv.csv" --quiet > /dev/null 2>&1
    echo "$p $w spmv: $?"
    PIPEKRYLOV_SELL_COMPACT=$C timeout 200 $PK bench --backends cuda,opencl --solvers cg,bicgstab \
      --problem $p --min-n $n --max-n $n --format sell:32:256 --repeats 5 \
      --out "$TMP/s-$p-$w-solvers.csv" --quiet > /dev/null 2>&1
    echo "$p $w solvers: $?"
  done
done
python3 - "$TMP" "$OUT" <<'PY'
import csv, glob, os, sys
tmp, out = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(tmp, "s-*.csv")))
rows = []
with open(os.path.join(out, "sell-compact-h200.csv"), "w") as w:
    for i, f in enumerate(files):
        lines = open(f).read().splitlines()
        tag = os.path.basename(f)[2:-4]
        if i == 0:
            w.write(lines[0] + ",knob\n")
        w.writelines(l + "," + tag + "\n" for l in lines[1:])
        rows += [(tag, r) for r in csv.DictReader(open(f))]
print(f"{'knob':28} {'kernel':20} {'backend':7} {'solver':9} {'us':>8} {'x floor':>7}")
for tag, r in rows:
    print(f"{tag:28} {r['kernel']:20} {r['backend']:7} {r['solver']:9} {float(r['median_s_per_iter'])*1e6:8.1f} {float(r['floor_ratio']):7.2f}")
PY
rm -rf "$TMP"
