#!/usr/bin/env bash
# On the GPU machine: the small/mid poisson2d sweep (pipelined CG, BiCGStab, GMRES(30); n <= MAX_N)
# in REPS separate processes per backend, alternating CUDA and OpenCL, optionally under a CPU
# binding (BIND="taskset -c 0-7"). Prints one line per process (us per iteration) so the spread
# between processes is visible; all rows in $OUT/repeat_<label>_<problem>.csv (label, rep first).
# Usage: REPS=4 MAX_N=20000 BIND="" bash bench/experiments/repeat-sweep.sh [label]
set -uo pipefail
label=${1:-default}
out=${OUT:-/tmp/pipekrylov-out}
mkdir -p "$out"
all="$out/repeat_${label}_${PROBLEM:-poisson2d}.csv"
rm -f "$all"
for rep in $(seq 1 "${REPS:-4}"); do
  for be in cuda opencl; do
    f="/tmp/repeat_${label}_${be}_$rep.csv"
    ${BIND:-} bash .device/run pipekrylov bench --backends $be --solvers cg,bicgstab,gmres --variants pipelined \
      --problem "${PROBLEM:-poisson2d}" --max-n "${MAX_N:-20000}" --out "$f" --quiet >/dev/null 2>&1
    python3 - "$f" "$label" "$be" "$rep" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = " ".join(f"{r['solver'][:4]}{r['n']}={float(r['median_s_per_iter'])*1e6:.1f}" for r in rows)
print(f"{sys.argv[2]} {sys.argv[3]:6} rep{sys.argv[4]}: {cells}")
PY
    if [ ! -f "$all" ]; then echo "label,rep,$(head -1 "$f")" >"$all"; fi
    tail -n +2 "$f" | sed "s|^|$label,$rep,|" >>"$all"
  done
done
