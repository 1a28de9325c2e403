#!/usr/bin/env bash
# Issue 15 at the end, one H200: the GPU tests of the device-resident mode (CUDA and NVIDIA OpenCL
# against the host, and CUDA again with the fused BiCGStab update forced on), each runtime's floors
# (a CUDA graph node: example-persistent_cg; a back-to-back launch: example-latency_breakdown), both
# execution modes side by side on the 2D and 3D Poisson ladders up to 65K (300-iteration solves, 10
# repeats, ROUNDS rounds), and Nsight Compute's per-kernel times of the CUDA resident solves where a
# goal is missed (NCU_CASES, solver:problem:n; serialized by the profiler, caches warm, clocks free).
# From the repository root on the device, release build with --features "cuda opencl mpi cli" packed
# into .device/bin (pipekrylov, the tests below, example-persistent_cg, example-latency_breakdown):
#   OUT=... bash bench/experiments/h200-issue15-final.sh            (PARTS="tests floors modes short ncu")
# `short`: BiCGStab stops by a rho breakdown after a few dozen iterations on 3D n = 512 (the residual
# is then about 1e-37 of its start), so its "300-iteration" time is that of a short solve; this
# part times 3D n = 4096, which runs every iteration, with as few iterations (SHORT_ITERATIONS).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi -L
for part in ${PARTS:-tests floors modes short ncu}; do
  case $part in
    tests)
      for t in ${TESTS:-device_resident resident_many_groups backend_agreement cuda_nvrtc}; do
        timeout 300 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-h200.log"
        echo "$t: status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
      done
      for t in device_resident resident_many_groups; do
        PIPEKRYLOV_BICGSTAB_FUSED=1 timeout 300 bash .device/run "test-$t" --include-ignored > "$OUT/test.tmp" 2>&1
        status=$?
        { echo "== $t, PIPEKRYLOV_BICGSTAB_FUSED=1: status $status"; cat "$OUT/test.tmp"; } >> "$OUT/tests-h200.log"
        echo "$t (fused BiCGStab forced): status $status"; grep -E "test result|FAILED|panicked" "$OUT/test.tmp" | head -4
      done
      rm -f "$OUT/test.tmp" ;;
    floors)
      timeout 120 bash .device/run example-persistent_cg > "$OUT/floor-persistent-cg.txt" 2>&1
      tail -n 4 "$OUT/floor-persistent-cg.txt"
      for n in 225 3969 65025; do
        timeout 120 bash .device/run example-latency_breakdown $n > "$OUT/floor-latency-breakdown-$n.txt" 2>&1
        grep -iE "fill|back-to-back" "$OUT/floor-latency-breakdown-$n.txt" | head -n 4
      done ;;
    modes)
      for r in $(seq 1 "${ROUNDS:-2}"); do for p in poisson2d poisson3d; do
        timeout 280 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres --executions sync,resident \
          --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/modes-$p-r$r-h200.csv" --quiet \
          > /dev/null 2>&1
        echo "modes $p round $r: status $?"
      done; done ;;
    short)
      for it in ${SHORT_ITERATIONS:-37 71 300}; do
        timeout 120 $PK bench --backends cuda,opencl --solvers bicgstab --executions resident --problem poisson3d:4096 \
          --iterations $it --repeats 10 --out "$OUT/short-poisson3d-4096-${it}it-h200.csv" --quiet > /dev/null 2>&1
        echo "short 3D 4096, $it iterations: status $?"
      done
      python3 - "$OUT" <<'PY'
import csv, glob, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "short-*.csv"))):
    for r in csv.DictReader(open(f)):
        print(f"short {r['problem']} {r['n']} {r['backend']:7} {r['iterations']:>4} iterations ({r['stop']}): "
              f"{float(r['median_s_per_iter']) * 1e6:6.2f} us per iteration, {float(r['launches_per_iter']):.2f} launches")
PY
      ;;
    ncu)
      M="gpu__time_duration.sum,launch__grid_size,lts__t_bytes.sum,dram__bytes_read.sum"
      M="$M,sm__warps_active.avg.pct_of_peak_sustained_active"
      M="$M,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
      for c in ${NCU_CASES:-cg:poisson2d:65025 bicgstab:poisson2d:65025 gmres:poisson2d:65025 gmres:poisson3d:32768}; do
        IFS=: read -r s p n <<< "$c"
        # A 300-iteration resident solve: skip the first 150 kernels (setup, the first batches),
        # profile the next 60.
        timeout 150 $NCU --csv --print-units base --cache-control none --clock-control none --metrics "$M" \
          -k regex:"resident|spmv|gmres|bicgstab|cg_" --launch-skip 150 --launch-count 60 \
          bash .device/run pipekrylov bench --backends cuda --solvers $s --executions resident \
          --problem $p:$n --iterations 300 --repeats 1 --quiet > "$OUT/n.csv" 2> "$OUT/n.err"
        echo "ncu $c: status $?"; tail -n 2 "$OUT/n.err"
        grep '^"' "$OUT/n.csv" | sed "s/^/\"$s\",\"$p\",\"$n\",/" >> "$OUT/ncu-resident-kernels-h200.csv"
        rm -f "$OUT/n.csv" "$OUT/n.err"
      done ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys, collections
out = sys.argv[1]
d = collections.defaultdict(list)
launches = {}
for f in glob.glob(os.path.join(out, "modes-*.csv")):
    for r in csv.DictReader(open(f)):
        k = (r["solver"], r["problem"], int(r["n"]), r["backend"], r["execution"])
        d[k].append(float(r["median_s_per_iter"]) * 1e6)
        launches[k] = float(r["launches_per_iter"])
if d:
    print("us per iteration, median of rounds (launches per iteration): cuda sync | cuda resident | opencl sync | opencl resident")
    for k in sorted({k[:3] for k in d}):
        def cell(b, e):
            v = d.get(k + (b, e))
            return f"{statistics.median(v):7.2f} ({launches[k + (b, e)]:4.2f})" if v else "      -       "
        print(f"{k[0]:9} {k[1]:10} {k[2]:>6} | {cell('cuda', 'sync')} | {cell('cuda', 'resident')} | "
              f"{cell('opencl', 'sync')} | {cell('opencl', 'resident')}")
f = os.path.join(out, "ncu-resident-kernels-h200.csv")
if os.path.exists(f):
    t = {}
    for r in csv.reader(open(f)):
        # prefix solver, problem, n; then ncu's ID, Process ID, Process Name, Host Name, Kernel Name,
        # Context, Stream, Block Size, Grid Size, Device, CC, Section Name, Metric Name, Unit, Value
        if len(r) < 18 or r[3] == "ID":
            continue
        t.setdefault((r[0], r[1], r[2], r[7]), {}).setdefault(r[15], []).append(float(r[17].replace(",", "")))
    med = lambda x: statistics.median(x) if x else float("nan")
    print(f"{'solver':9} {'problem':10} {'n':>6} {'kernel':34} {'count':>5} {'us':>6} {'L2 MB':>6} {'warps%':>6} {'lsb':>5}")
    for (s, p, n, k), m in sorted(t.items()):
        us = [v / 1000.0 for v in m.get("gpu__time_duration.sum", [])]
        print(f"{s:9} {p:10} {n:>6} {k[:34]:34} {len(us):5} {med(us):6.2f} "
              f"{med(m.get('lts__t_bytes.sum', [])) / 1e6:6.2f} "
              f"{med(m.get('sm__warps_active.avg.pct_of_peak_sustained_active', [])):6.1f} "
              f"{med(m.get('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio', [])):5.2f}")
PY
