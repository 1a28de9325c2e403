#!/usr/bin/env bash
# The kernel time of one AMG V-cycle without launches (issue 56 item 3's measure), on the H200 with
# ncu: CG + AMG (device setup) on 2D Poisson n = 4096, 16384, 65536, every kernel's
# gpu__time_duration with warm caches (--cache-control none --clock-control none). The CLI times 10
# applications after the solve (`precond_apply_seconds`), so the last `precond_launches_per_apply`
# kernels of the process are one V-cycle; `parse` sums them. Same pack as run.sh.
#   OUT=$OUT bash bench/experiments/amg-resident/ncu-cycle.sh; bash bench/experiments/amg-resident/ncu-cycle.sh parse DIR
set -uo pipefail
if [ "${1:-}" = parse ]; then
  python3 - "$2" <<'PY'
import csv, glob, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "ncu-cycle-*.csv"))):
    rows = [r for r in csv.reader(open(path)) if len(r) > 5][1:]
    names = [r[4] for r in rows]
    t = [float(r[14].replace(",", "")) / 1e3 for r in rows]
    k = next(k for k in range(8, 64) if names[-k:] == names[-2 * k:-k])
    print(os.path.basename(path), f"{k} kernels per cycle, {sum(t[-k:]):.1f} us")
PY
  exit 0
fi
: "${OUT:?set OUT to the output folder}"
for n in 4096 16384 65536; do
  timeout 200 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv \
    --target-processes all --log-file "$OUT/ncu-cycle-$n.csv" bash .device/run pipekrylov solve \
    --generate poisson2d:$n --rhs a-ones --precond amg --solver cg --execution sync --backend cuda \
    --json > "$OUT/solve-$n.json"
  sed -i '/^==PROF==/d' "$OUT/ncu-cycle-$n.csv"
done
bash "$0" parse "$OUT"
