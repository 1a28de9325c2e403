#!/usr/bin/env bash
# Issue 51's "behaviour unchanged" check of the typed tuning (commit 7baa3a7): the latency ladder (2D
# Poisson up to 65K, both execution modes) and the rows at 4M unknowns, the binary of the commit before
# the change (a1df02c, `.device/bin/pipekrylov-old`) against HEAD's (`pipekrylov-new`), alternated in
# the same device call, then the ratio new / old per row. Packed on the workstation:
#   release `--features "cuda opencl cli" --bin pipekrylov` at each commit, copied to .device/bin.
# AB_NAME names the summary CSV (default tuning-ab; ../kernels-once/device.sh sets kernels-ab).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
pk() { v=$1; shift; timeout 200 bash .device/run "pipekrylov-$v" "$@" --quiet > /dev/null 2>&1; echo "$v $1 ${*: -1}: status $?"; }
# The order alternates between rounds (old first in odd rounds), so that neither binary always runs on a
# cold or warm device.
for r in $(seq 1 "${ROUNDS:-2}"); do
  order="old new"; [ $((r % 2)) -eq 0 ] && order="new old"
  for v in $order; do
    pk $v bench --backends cuda,opencl --solvers cg,bicgstab,gmres --executions sync,resident \
      --problem poisson2d --max-n 70000 --iterations 300 --repeats 5 --out "$OUT/ladder-$v-r$r.csv"
  done
done
for v in ${LARGE-old new}; do
  pk $v bench --backends cuda,opencl --solvers cg,bicgstab,gmres --problem poisson3d:4096000 \
    --iterations 30 --repeats 5 --out "$OUT/large-$v.csv"
done
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys
out = sys.argv[1]
def table(pattern):
    t = {}
    for f in glob.glob(os.path.join(out, pattern)):
        for r in csv.DictReader(open(f)):
            k = (r["solver"], r.get("variant", ""), r["problem"], r["n"], r["backend"], r.get("execution", ""),
                 r.get("format", ""))
            t.setdefault(k, []).append(float(r["median_s_per_iter"]))
    return {k: statistics.median(v) for k, v in t.items()}
rows = []
for kind in ("ladder", "large"):
    old, new = table(f"{kind}-old*.csv"), table(f"{kind}-new*.csv")
    for k in sorted(set(old) & set(new)):
        rows.append((kind,) + k + (old[k] * 1e6, new[k] * 1e6, new[k] / old[k]))
with open(os.path.join(out, os.environ.get("AB_NAME", "tuning-ab") + ".csv"), "w") as f:
    w = csv.writer(f)
    w.writerow(["kind", "solver", "variant", "problem", "n", "backend", "execution", "format", "old_us", "new_us",
                "new_over_old"])
    w.writerows(rows)
ratios = [r[-1] for r in rows]
print(f"{len(rows)} rows; new/old median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")
for r in rows:
    if abs(r[-1] - 1) > 0.03:
        print("beyond 3%:", r[:8], f"{r[-3]:.1f} -> {r[-2]:.1f} us ({r[-1]:.3f})")
PY
