#!/usr/bin/env bash
# The CG update kernels with two elements per grid-stride step (issue 16) against the build
# before (packed as .device/bin/pipekrylov-base), in one run on the H200: the CUDA tests that
# hold the resident kernels to the synchronous bits, then pipelined CG, f64, CSR, 2D/3D Poisson
# at the ladder top, alternating the two builds (3 rounds, 10 repeats each). One CSV
# `update-unroll-h200.csv` (column `knob` = build and round) under $OUT, a table last.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
TMP=$(mktemp -d)
for t in device_resident cuda_backend; do
  bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
  echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | head -n 4
done
for round in 1 2 3; do
  for build in pipekrylov-base pipekrylov; do
    for case in poisson2d:4190209 poisson3d:4096000; do
      p=${case%%:*}; n=${case#*:}
      timeout 120 bash .device/run $build bench --backends cuda --solvers ${SOLVERS:-cg} --problem $p \
        --min-n $n --max-n $n --format csr --repeats 10 --out "$TMP/u-$build-$p-r$round.csv" --quiet > /dev/null 2>&1
      echo "$build $p r$round: $?"
    done
  done
done
python3 - "$TMP" "$OUT" <<'PY'
import csv, glob, os, sys
tmp, out = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(tmp, "u-*.csv")))
rows = []
with open(os.path.join(out, "update-unroll-h200.csv"), "w") as w:
    for i, f in enumerate(files):
        lines = open(f).read().splitlines()
        tag = os.path.basename(f)[2:-4]
        if i == 0:
            w.write(lines[0] + ",knob\n")
        for l in lines[1:]:
            w.write(l + "," + tag + "\n")
        for r in csv.DictReader(open(f)):
            rows.append((tag, r))
for tag, r in rows:
    print(f"{tag:32} {r['solver']:9} {float(r['median_s_per_iter'])*1e6:8.1f} {float(r['floor_ratio']):6.2f}")
PY
rm -rf "$TMP"
