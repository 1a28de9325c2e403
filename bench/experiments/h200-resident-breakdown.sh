#!/usr/bin/env bash
# Issue 15: where the device-resident iterations' time goes above 16K unknowns on the H200.
# PARTS=formats: CG, BiCGStab and GMRES(30) resident, 300-iteration solves, CSR against SELL
# (C = 32, sigma = 256) on the 2D ladder from 16K to 65K and 3D 32K (formats-resident-h200.csv).
# PARTS=groups: the same solvers at n = 16K and 65K (2D), 32K (3D) with 1, 2 and 4 reduction
# groups per SM (groups-per-sm-resident-h200.csv).
# PARTS=ncu: Nsight Compute's duration and memory counters of every kernel of a few iterations of
# each solver at n = 16129 and 65025 (2D), serialized by the profiler, caches kept warm and
# clocks free as in a solve (ncu-resident-kernels-h200.csv). From the repository root on the
# device after a release build with --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-resident-breakdown.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
parts=${PARTS:-formats ncu}
PK="bash .device/run pipekrylov"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for part in $parts; do
  case $part in
    formats)
      rm -f "$OUT/formats-resident-h200.csv"
      for round in 1 2; do
        for fmt in csr sell; do
          for p in poisson2d:16129 poisson2d:65025 poisson3d:32768; do
            timeout 100 $PK bench --backends cuda --solvers cg,bicgstab,gmres --executions resident --problem $p \
              --format $fmt --iterations 300 --repeats 10 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            echo "formats round $round $fmt $p: status $?"
            python3 - "$OUT/b.csv" "$OUT/formats-resident-h200.csv" $round <<'PY'
import csv, os, sys
src, dst, rnd = sys.argv[1:]
rows = list(csv.DictReader(open(src)))
new = not os.path.exists(dst)
with open(dst, "a", newline="") as f:
    w = csv.DictWriter(f, ["round"] + list(rows[0].keys()))
    if new:
        w.writeheader()
    for r in rows:
        w.writerow({"round": rnd, **r})
PY
            rm -f "$OUT/b.csv"
          done
        done
      done
      python3 - "$OUT/formats-resident-h200.csv" <<'PY'
import csv, statistics, sys
t = {}
for r in csv.DictReader(open(sys.argv[1])):
    fmt = r["format"].split(":")[0]
    t.setdefault((r["solver"], r["problem"], int(r["n"])), {}).setdefault(fmt, []).append(float(r["median_s_per_iter"]) * 1e6)
print(f"{'solver':9} {'problem':10} {'n':>7} {'csr us':>8} {'sell us':>8}")
for k, v in sorted(t.items()):
    c = [f"{statistics.median(v[f]):8.2f}" if f in v else f"{'-':>8}" for f in ("csr", "sell")]
    print(f"{k[0]:9} {k[1]:10} {k[2]:>7} {c[0]} {c[1]}")
PY
      ;;
    groups)
      # The reduction's groups per SM (PIPEKRYLOV_REDUCTION_GROUPS_PER_SM; default 4, capped by
      # n / 256): 1 and 2 give fewer partials to finish but two rows per thread.
      rm -f "$OUT/groups-per-sm-resident-h200.csv"
      for round in 1 2; do
        for g in 4 1 2; do
          for p in poisson2d:65025 poisson3d:32768 poisson2d:16129; do
            PIPEKRYLOV_REDUCTION_GROUPS_PER_SM=$g timeout 100 $PK bench --backends cuda --solvers cg,bicgstab,gmres \
              --executions resident --problem $p --iterations 300 --repeats 10 --out "$OUT/b.csv" --quiet > /dev/null 2>&1
            python3 - "$OUT/b.csv" "$OUT/groups-per-sm-resident-h200.csv" $round $g <<'PY'
import csv, os, sys
src, dst, rnd, g = sys.argv[1:]
rows = list(csv.DictReader(open(src)))
new = not os.path.exists(dst)
with open(dst, "a", newline="") as f:
    w = csv.DictWriter(f, ["round", "groups_per_sm"] + list(rows[0].keys()))
    if new:
        w.writeheader()
    for r in rows:
        w.writerow({"round": rnd, "groups_per_sm": g, **r})
PY
            rm -f "$OUT/b.csv"
          done
        done
      done ;;
    ncu)
      M="gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum"
      M="$M,sm__warps_active.avg.pct_of_peak_sustained_active"
      M="$M,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
      M="$M,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
      rm -f "$OUT/ncu-resident-kernels-h200.csv"
      for n in 16129 65025; do
        for s in cg bicgstab gmres; do
          # 300-iteration solve; skip the solvers' first 150 kernels (setup, first batches),
          # profile 40 (the bench's bandwidth probe runs other kernels first).
          timeout 150 $NCU --csv --print-units base --cache-control none --clock-control none --metrics "$M" -k regex:"resident|spmv|gmres|bicgstab|cg_" \
            --launch-skip 150 --launch-count 40 \
            bash .device/run pipekrylov bench --backends cuda --solvers $s --executions resident \
            --problem poisson2d:$n --iterations 300 --repeats 1 --quiet > "$OUT/n.csv" 2> "$OUT/n.err"
          echo "ncu $s $n: status $?"; tail -n 2 "$OUT/n.err"
          grep '^"' "$OUT/n.csv" | sed "s/^/\"$s\",\"$n\",/" >> "$OUT/ncu-resident-kernels-h200.csv"
          rm -f "$OUT/n.csv" "$OUT/n.err"
        done
      done
      python3 - "$OUT/ncu-resident-kernels-h200.csv" <<'PY'
import csv, statistics, sys
t = {}
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 6 or r[2] == "ID":
        continue
    solver, n = r[0], r[1]
    # ncu --csv columns: ID, Process ID, Process Name, Host Name, Kernel Name, Context, Stream,
    # Block Size, Grid Size, Device, CC, Section Name, Metric Name, Metric Unit, Metric Value
    kernel, metric, unit, value = r[6], r[14], r[15], r[16]
    t.setdefault((solver, n, kernel), {}).setdefault(metric, []).append((unit, value.replace(",", "")))
print(f"{'solver':9} {'n':>6} {'kernel':34} {'count':>5} {'us':>7} {'L2 MB':>7} {'warps %':>7} {'lsb':>6}")
for (s, n, k), m in sorted(t.items()):
    d = m.get("gpu__time_duration.sum", [])
    us = [float(v) / 1000.0 for _, v in d]
    l2 = [float(v) for _, v in m.get("lts__t_bytes.sum", [])]
    wa = [float(v) for _, v in m.get("sm__warps_active.avg.pct_of_peak_sustained_active", [])]
    ls = [float(v) for _, v in m.get("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", [])]
    med = lambda x: statistics.median(x) if x else float("nan")
    print(f"{s:9} {n:>6} {k[:34]:34} {len(us):5} {med(us):7.2f} {med(l2) / 1e6:7.2f} {med(wa):7.1f} {med(ls):6.2f}")
PY
      ;;
  esac
done
