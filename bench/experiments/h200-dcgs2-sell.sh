#!/usr/bin/env bash
# GMRES(30)'s DCGS2 step with the product and dots fused for SELL (`gmres_dcgs2_spmv_dots_sell`)
# against the product and `basis_dots2` apart, one H200: the GPU tests (CUDA and NVIDIA OpenCL
# against the host), then GMRES(30) at n >= 4M on SELL with PIPEKRYLOV_DCGS2_SELL_FUSED = 0 / 1
# alternated over ROUNDS rounds (5 repeats each; LARGE: problem:n:format triples, format `sell`
# = SELL-32-256 or `auto`), with CSR beside them (CSR: problem:n pairs, its fused kernel
# unchanged). From the repository root on the device, release build with --features "cuda opencl
# mpi cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-dcgs2-sell.sh            (PARTS="tests gmres"; TEST_FILTER: a test name filter; BACKENDS)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
nvidia-smi -L
# The files carry the card's tag (a call that names nvidia-h200 may get an H100).
if nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then card=h200; else card=h100; fi
for part in ${PARTS:-tests gmres}; do
  case $part in
    tests)
      for t in ${TESTS:-backend_agreement dcgs2_two_kernels device_resident}; do
        timeout 300 bash .device/run "test-$t" --include-ignored ${TEST_FILTER:-} > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-$card.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
      done
      rm -f "$OUT/test.tmp" ;;
    gmres)
      for r in $(seq 1 "${ROUNDS:-1}"); do
        for v in 0 1; do
          for pf in ${LARGE:-poisson2d:4190209:sell poisson3d:4096000:sell}; do
            p=${pf%:*}; f=${pf##*:}
            PIPEKRYLOV_DCGS2_SELL_FUSED=$v timeout 200 $PK bench --backends "${BACKENDS:-cuda,opencl}" --solvers gmres \
              --problem $p --format $f --repeats 5 --out "$OUT/gmres-$v-${p%%:*}-$f-r$r.csv" --quiet > /dev/null 2>&1
            echo "gmres fused_sell=$v $p $f round $r: status $?"
          done
        done
        for pn in ${CSR:-poisson2d:4190209 poisson3d:4096000}; do
          timeout 200 $PK bench --backends "${BACKENDS:-cuda,opencl}" --solvers gmres --problem $pn --format csr --repeats 5 \
            --out "$OUT/gmres-csr-${pn%%:*}-csr-r$r.csv" --quiet > /dev/null 2>&1
          echo "gmres csr $pn round $r: status $?"
        done
      done ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys, collections
out = sys.argv[1]
d = collections.defaultdict(list)
for f in glob.glob(os.path.join(out, "gmres-*.csv")):
    v = os.path.basename(f).split("-")[1]
    for r in csv.DictReader(open(f)):
        d[(r["problem"], r["format"], r["backend"], r.get("execution", ""), v)].append(
            (float(r["median_s_per_iter"]) * 1e6, float(r["floor_ratio"]), float(r["launches_per_iter"])))
print("GMRES(30) at n >= 4M, us per iteration (x floor, launches), median of rounds: apart (0) | fused SELL (1) | CSR")
for k in sorted({k[:4] for k in d}):
    cells = []
    for v in ("0", "1", "csr"):
        x = d.get(k + (v,), [])
        if x:
            us = statistics.median(a for a, _, _ in x)
            fl = statistics.median(b for _, b, _ in x)
            cells.append(f"{us:7.1f} ({fl:4.2f}, {x[0][2]:.2f})")
        else:
            cells.append("-")
    print(f"{k[0]:12} {k[1]:12} {k[2]:7} {k[3]:9} | {cells[0]} | {cells[1]} | {cells[2]}")
PY
# One CSV (the device returns a limited number of files).
files=$(ls "$OUT"/gmres-*.csv 2>/dev/null)
if [ -n "$files" ]; then
  python3 bench/experiments/merge_tagged.py "$OUT/dcgs2-sell-gmres-${TAG:-a}-$card.csv" $files
fi
