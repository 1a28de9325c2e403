#!/usr/bin/env bash
# CSR stream kernel against the vector kernel in the solvers (issue 16), and the stream
# kernel's grid: PIPEKRYLOV_REDUCTION_GROUPS_PER_SM=4 (the reduction plan) or 8 (full
# occupancy) for every partials buffer. CG, BiCGStab, GMRES(30), pipelined f64, CSR, n at the
# ladder top; run on the H200 from the repository root with the packed build (see
# bench/experiments/h200-stream.sh). One CSV `stream-grid-h200.csv` (column `knob`) under $OUT.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
TMP=$(mktemp -d)
PK="bash .device/run pipekrylov"
for case in powerlaw:4194304 stencil27:4096000 elasticity3d:324864; do
  p=${case%%:*}; n=${case#*:}
  for K in vector stream; do
    for G in 4 8; do
      [ $G = 8 ] && [ $K = vector ] && continue
      PIPEKRYLOV_REDUCTION_GROUPS_PER_SM=$G PIPEKRYLOV_CSR_KERNEL=$K timeout 200 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres \
        --problem $p --min-n $n --max-n $n --format csr --repeats 5 --out "$TMP/exp-$p-$K-g$G.csv" --quiet > /dev/null 2>&1
      echo "$p $K g$G: $?"
    done
  done
done
python3 - "$TMP" "$OUT" <<'PY'
import csv, glob, os, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "exp-*.csv")))
with open(os.path.join(sys.argv[2], "stream-grid-h200.csv"), "w") as w:
    for i, f in enumerate(files):
        lines = open(f).read().splitlines()
        if i == 0:
            w.write(lines[0] + ",knob\n")
        w.writelines(l + "," + os.path.basename(f)[4:-4] + "\n" for l in lines[1:])
for f in sorted(glob.glob(os.path.join(sys.argv[1], "exp-*.csv"))):
    for r in csv.DictReader(open(f)):
        print(f"{os.path.basename(f)[4:-4]:28} {r['backend']:7} {r['solver']:9} {float(r['median_s_per_iter'])*1e6:9.1f} {float(r['floor_ratio']):6.2f}")
PY
rm -rf "$TMP"
