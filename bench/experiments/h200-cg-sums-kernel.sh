#!/usr/bin/env bash
# The resident CG's sums finished once (`cg_sums_resident`) against every update block finishing
# them, one H200: the GPU tests (CUDA and NVIDIA OpenCL against the host) with the sums kernel forced
# (PIPEKRYLOV_CG_SUMS_KERNEL=1, also with the fused CG off so that every CG update takes it), then
# resident CG at n >= 4M with CSR and SELL, PIPEKRYLOV_CG_SUMS_KERNEL = 0 / 1 alternated over ROUNDS
# rounds (5 repeats each; LARGE: problem:n:format triples), and the ladder up to 65K with the default (the sums kernel stays off
# there). From the repository root on the device, release build with --features "cuda opencl mpi
# cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-cg-sums-kernel.sh            (PARTS="tests large ladder")
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
nvidia-smi -L
for part in ${PARTS:-tests large ladder}; do
  case $part in
    tests)
      for env in "PIPEKRYLOV_CG_SUMS_KERNEL=1" "PIPEKRYLOV_CG_SUMS_KERNEL=1 PIPEKRYLOV_CG_FUSED=0" ""; do
        for t in device_resident resident_many_groups ${EXTRA_TESTS:-}; do
          env $env timeout 300 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
          status=$?
          { echo "== $t [$env]: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-h200.log"
          echo "$t [$env]: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        done
      done
      rm -f "$OUT/test.tmp" ;;
    large)
      for r in $(seq 1 "${ROUNDS:-2}"); do
        for v in 0 1; do
          for pf in ${LARGE:-poisson2d:4190209:csr poisson2d:4190209:sell poisson3d:4096000:csr poisson3d:4096000:sell}; do
            p=${pf%:*}; f=${pf##*:}
            {
              PIPEKRYLOV_CG_SUMS_KERNEL=$v timeout 200 $PK bench --backends cuda,opencl --solvers cg --executions resident \
                --problem $p --format $f --repeats 5 --out "$OUT/large-$v-${p%%:*}-$f-r$r-h200.csv" --quiet > /dev/null 2>&1
              echo "large sums=$v $p $f round $r: status $?"
            }
          done
        done
      done ;;
    ladder)
      timeout 250 $PK bench --backends cuda,opencl --solvers cg --executions resident --problem poisson2d --max-n 70000 \
        --iterations 300 --repeats 10 --out "$OUT/ladder-default-h200.csv" --quiet > /dev/null 2>&1
      echo "ladder: status $?" ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys, collections
out = sys.argv[1]
d = collections.defaultdict(list)
for f in glob.glob(os.path.join(out, "large-*.csv")):
    v = os.path.basename(f).split("-")[1]
    for r in csv.DictReader(open(f)):
        d[(r["problem"], r["format"].split(":")[0], r["backend"], v)].append(
            (float(r["median_s_per_iter"]) * 1e6, float(r["floor_ratio"]), float(r["launches_per_iter"])))
print("resident CG at n >= 4M, us per iteration (x floor, launches), median of rounds: sums kernel off | on")
for k in sorted({k[:3] for k in d}):
    cells = []
    for v in ("0", "1"):
        x = d.get(k + (v,), [])
        if x:
            us = statistics.median(a for a, _, _ in x)
            fl = statistics.median(b for _, b, _ in x)
            cells.append(f"{us:7.1f} ({fl:4.2f}, {x[0][2]:.2f})")
        else:
            cells.append("-")
    print(f"{k[0]:10} {k[1]:5} {k[2]:7} | {cells[0]} | {cells[1]}")
for f in glob.glob(os.path.join(out, "ladder-*.csv")):
    for r in csv.DictReader(open(f)):
        print(f"ladder {r['backend']:7} {r['problem']} {r['n']:>6} {float(r['median_s_per_iter'])*1e6:6.2f} us, {r['launches_per_iter']} launches")
PY
# One CSV per part (the device returns a limited number of files).
for part in large ladder; do
  files=$(ls "$OUT"/$part-*.csv 2>/dev/null)
  [ -n "$files" ] || continue
  python3 bench/experiments/merge_tagged.py "$OUT/cg-sums-$part-h200.csv" $files
done
