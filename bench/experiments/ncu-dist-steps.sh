#!/usr/bin/env bash
# Where a distributed iteration's device time goes (issue 14): Nsight Compute's duration of every
# kernel of rank 0 in 20 iterations of pipelined GMRES(30) and BiCGStab on the weak box
# (poisson3d:256x256x(128 NP), the same slab per rank), at 1 and 2 ranks; the other rank runs
# unprofiled. A table per solver last: per kernel, launches per iteration and microseconds per
# iteration at each rank count. From the repository root on a 2-GPU machine, release build
# packed into .device/bin:
#   OUT=... bash bench/experiments/ncu-dist-steps.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
ITS=${ITS:-20}
for solver in ${SOLVERS:-gmres bicgstab}; do for np in 1 2; do
  p=poisson3d:256x256x$((128 * np))
  args="solve --generate $p --solver $solver --backend cuda --maxit $ITS --tol 1e-30"
  log=$OUT/ncu-$solver-np$np.csv
  timeout 280 mpirun --oversubscribe -np $np bash -c "if [ \"\$OMPI_COMM_WORLD_RANK\" = 0 ]; then
      exec ncu --metrics gpu__time_duration.sum --csv --print-units base --log-file $log .device/bin/pipekrylov $args;
    else exec .device/bin/pipekrylov $args > /dev/null; fi" > $OUT/solve-$solver-np$np.log 2>&1
  echo "$solver np=$np: status $?"
done; done
python3 - "$OUT" "$ITS" <<'PY'
import csv, glob, io, os, sys, collections
out, its = sys.argv[1], int(sys.argv[2])
for solver in ("gmres", "bicgstab"):
    per = {}
    for np in (1, 2):
        f = os.path.join(out, f"ncu-{solver}-np{np}.csv")
        if not os.path.exists(f):
            continue
        text = open(f).read()
        start = text.find('"ID"')
        if start < 0:
            continue
        d = collections.defaultdict(lambda: [0, 0.0])
        for r in csv.DictReader(io.StringIO(text[start:])):
            if r.get("Metric Name") != "gpu__time_duration.sum":
                continue
            k = r["Kernel Name"].split("(")[0]
            d[k][0] += 1
            d[k][1] += float(r["Metric Value"].replace(",", "")) / 1e3
        per[np] = d
    names = sorted(set().union(*[set(v) for v in per.values()]))
    print(f"== {solver}: kernel, launches and us over the run (rank 0), 1 rank | 2 ranks")
    tot = {1: 0.0, 2: 0.0}
    for k in names:
        cells = []
        for np in (1, 2):
            c, us = per.get(np, {}).get(k, [0, 0.0])
            tot[np] += us
            cells.append(f"{c:5d} {us:10.1f}")
        print(f"{k:40} {cells[0]} | {cells[1]}")
    print(f"{'total':40} {'':5} {tot[1]:10.1f} | {'':5} {tot[2]:10.1f}")
PY
