#!/usr/bin/env bash
# One H200 after the register fix and GMRES's early-start rule (2026-11-27): the GPU tests of the
# changed kernels (CUDA and NVIDIA OpenCL against the host), issue 15's two execution modes on the
# 2D/3D ladders up to 65K (300-iteration solves, 10 repeats; ROUNDS, default 2), and issue 16's
# Poisson rows at n >= 4M with the automatic format (SpMV, CG, BiCGStab, GMRES(30), 5 repeats).
# From the repository root on the device after `pack-for-device --features "cuda opencl mpi cli"`:
#   OUT=... bash bench/experiments/h200-refresh.sh            (PARTS="tests modes large")
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
nvidia-smi -L
for part in ${PARTS:-tests modes large}; do
  case $part in
    tests)
      for t in ${TESTS:-backend_agreement device_resident cuda_nvrtc}; do
        timeout 240 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-refresh-h200.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
        rm -f "$OUT/test.tmp"
      done ;;
    modes)
      for r in ${ROUNDS:-1 2}; do for p in poisson2d poisson3d; do
        timeout 250 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres --executions sync,resident \
          --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/modes-300it-$p-r$r-h200.csv" --quiet > /dev/null 2>&1
        echo "modes $p round $r: status $?"
      done; done ;;
    large)
      for p in poisson2d:4190209 poisson3d:4096000; do
        timeout 250 $PK bench --backends cuda,opencl --solvers spmv,cg,bicgstab,gmres --problem $p --format auto \
          --repeats 5 --out "$OUT/large-auto-${p%%:*}-h200.csv" --quiet > /dev/null 2>&1
        echo "large $p: status $?"
      done ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys, collections
out = sys.argv[1]
d = collections.defaultdict(list)
for f in glob.glob(os.path.join(out, "modes-300it-*.csv")):
    for r in csv.DictReader(open(f)):
        d[(r["solver"], r["problem"], int(r["n"]), r["backend"], r["execution"])].append(float(r["median_s_per_iter"]) * 1e6)
print("issue 15 (us per iteration, median of rounds): solver problem n | cuda sync | cuda resident | opencl sync | opencl resident")
for k in sorted({k[:3] for k in d}):
    cell = lambda b, e: f"{statistics.median(d[k + (b, e)]):7.2f}" if d.get(k + (b, e)) else "      -"
    print(f"{k[0]:9} {k[1]:10} {k[2]:>7} | {cell('cuda','sync')} | {cell('cuda','resident')} | {cell('opencl','sync')} | {cell('opencl','resident')}")
print("issue 16 (us per iteration, x floor, format): problem solver backend")
for f in sorted(glob.glob(os.path.join(out, "large-auto-*.csv"))):
    for r in csv.DictReader(open(f)):
        print(f"{r['problem']:10} {r['solver']:9} {r['backend']:7} {float(r['median_s_per_iter'])*1e6:9.1f} {float(r['floor_ratio']):5.2f} {r.get('format','')}")
PY
cd "$OUT" && tar czf refresh.tgz *.csv *.log && rm -f *.csv *.log
