#!/usr/bin/env bash
# The automatic format choice against the fixed formats on the H200 (issue 16): pipelined CG,
# f64, one size per matrix, CUDA and OpenCL; `--format auto` rows should match the fastest fixed
# format of their matrix and backend. CSV under $OUT, a table last. Run from the repository root
# on the device after packing the release build into .device/ (about 3 minutes).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
for case in stencil27:1000000 poisson3d:1000000 poisson2d:1000000 elasticity3d:324864 powerlaw:1048576 circuit:1048576; do
  name=${case%%:*}
  formats="auto csr sell"
  [ "$name" = elasticity3d ] && formats="auto csr sell bsr:3"
  for f in $formats; do
    timeout 200 $PK bench --backends cuda,opencl --solvers cg --problem "$case" --format "$f" \
      --repeats 10 --out "$OUT/format-$name-${f//:/-}-h200.csv" --quiet > /dev/null 2>&1
    echo "$case $f: status $?"
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "format-*.csv"))):
    req = os.path.basename(f).split("-", 2)[2].replace("-h200.csv", "")
    for r in csv.DictReader(open(f)):
        r["request"] = req
        rows.append(r)
print(f"{'problem':13} {'backend':7} {'request':8} {'format':12} {'us/iter':>9} {'x floor':>8}")
for r in sorted(rows, key=lambda r: (r["problem"], r["backend"], float(r["median_s_per_iter"]))):
    print(f"{r['problem']:13} {r['backend']:7} {r['request']:8} {r['format']:12} {float(r['median_s_per_iter'])*1e6:9.1f} {float(r['floor_ratio']):8.2f}")
PY
cd "$OUT" && tar czf all.tgz format-*.csv
