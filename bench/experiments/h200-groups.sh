#!/usr/bin/env bash
# Occupancy of the fused kernels on the H200 (issue 16): every kernel that writes partials runs
# with the reduction plan's grid, REDUCTION_BLOCKS_PER_SM (CUDA) / GROUPS_PER_CU (OpenCL) blocks
# per multiprocessor, 4 so far (half the threads an SM can hold with 256-thread blocks). This
# runs CG, BiCGStab and GMRES(30), pipelined f64, CUDA and NVIDIA OpenCL, at the top of the
# ladders with PIPEKRYLOV_REDUCTION_GROUPS_PER_SM = each of $GROUP_COUNTS (default "4 8"), CSV under
# $OUT (one file, a `groups` column). Run from the repository root on the device after
#   (release build of every target with --features "cuda opencl cli", executables packed into
#   .device/bin with the .device/run launcher, the layout the other device scripts use)
#   bash bench/experiments/h200-groups.sh            (about 2 minutes; CASES="NAME:N ...", FORMAT=sell)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
TMP=$(mktemp -d)
for G in ${GROUP_COUNTS:-4 8}; do
  for case in ${CASES:-poisson2d:4190209 poisson3d:4096000 stencil27:4096000 elasticity3d:324864 powerlaw:4194304}; do
    p=${case%%:*}; n=${case#*:}
    PIPEKRYLOV_REDUCTION_GROUPS_PER_SM=$G timeout 100 $PK bench --backends cuda,opencl \
      --solvers cg,bicgstab,gmres --problem $p --min-n $n --max-n $n --repeats 5 --format "${FORMAT:-csr}" \
      --out "$TMP/g$G-$p.csv" --quiet > /dev/null 2>&1
    echo "groups $G $p: status $?"
  done
done
python3 - "$TMP" "$OUT" <<'PY'
import csv, glob, os, sys
tmp, out = sys.argv[1], sys.argv[2]
rows, header = [], None
for f in sorted(glob.glob(os.path.join(tmp, "g*.csv"))):
    g = os.path.basename(f).split("-")[0][1:]
    lines = open(f).read().splitlines()
    header = lines[0]
    rows += [l + "," + g for l in lines[1:]]
with open(os.path.join(out, "groups-h200.csv"), "w") as w:
    w.write(header + ",groups\n" + "\n".join(rows) + "\n")
t = {}
for r in csv.DictReader(open(os.path.join(out, "groups-h200.csv"))):
    t.setdefault((r["problem"], r["backend"], r["solver"]), {})[r["groups"]] = (float(r["median_s_per_iter"]) * 1e6, float(r["floor_ratio"]))
gs = sorted({g for v in t.values() for g in v}, key=int)
print(f"{'problem':12} {'backend':7} {'solver':9} " + " ".join(f"{'G='+g+' us':>10} {'x fl':>5}" for g in gs))
for k, v in sorted(t.items()):
    print(f"{k[0]:12} {k[1]:7} {k[2]:9} " + " ".join(f"{v.get(g, (float('nan'),)*2)[0]:10.1f} {v.get(g, (float('nan'),)*2)[1]:5.2f}" for g in gs))
PY
rm -rf "$TMP"
