#!/usr/bin/env bash
# On the GPU machine: per-iteration times of the pipelined solvers (poisson2d) on NVIDIA OpenCL
# under each launch configuration ADDRESS_ARGS/WAIT/FLUSH (PIPEKRYLOV_OPENCL_ADDRESS_ARGS,
# PIPEKRYLOV_OPENCL_WAIT, PIPEKRYLOV_OPENCL_FLUSH), with CUDA measured in the same run before and
# after. Writes $OUT/submit_sweep.csv (config column first) and prints OpenCL / CUDA per config
# (the better of the two CUDA runs).
# Usage: bash bench/experiments/opencl-submit-sweep.sh "1/block/none 0/block/none 1/spin/none" [max_n]
set -uo pipefail
configs=${1:-"1/block/none 0/block/none"}
max_n=${2:-300000}
out=${OUT:-/tmp/pipekrylov-out}
mkdir -p "$out"
csv="$out/submit_sweep_${PROBLEM:-poisson2d}.csv"
rm -f "$csv"
one() { # policy-label, backend
  local tmp=/tmp/sweep_$$.csv
  bash .device/run pipekrylov bench --backends "$2" --solvers cg,bicgstab,gmres --variants pipelined \
    --problem "${PROBLEM:-poisson2d}" --max-n "$max_n" --out "$tmp" --quiet >/dev/null 2>&1 || echo "bench failed: $1 $2"
  if [ ! -f "$csv" ]; then echo "policy,$(head -1 "$tmp")" >"$csv"; fi
  tail -n +2 "$tmp" | sed "s|^|$1,|" >>"$csv"
}
one cuda-before cuda
for c in $configs; do
  IFS=/ read -r a w f <<<"$c"
  PIPEKRYLOV_OPENCL_ADDRESS_ARGS=$a PIPEKRYLOV_OPENCL_WAIT=$w PIPEKRYLOV_OPENCL_FLUSH=$f one "$c" opencl
done
one cuda-after cuda
python3 - "$csv" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
cuda = collections.defaultdict(list)
for r in rows:
    if r['policy'].startswith('cuda'):
        cuda[(r['solver'], int(r['n']))].append(float(r['median_s_per_iter']))
keys = sorted(cuda)
pols = []
for r in rows:
    if r['policy'] not in pols: pols.append(r['policy'])
print('config'.ljust(14) + ''.join(f"{s[:4]}{n:>8}" for s, n in keys))
for p in pols:
    t = {(r['solver'], int(r['n'])): float(r['median_s_per_iter']) for r in rows if r['policy'] == p}
    if p.startswith('cuda'):
        print(p.ljust(14) + ''.join(f"{t[k]*1e6:12.1f}" for k in keys))
    else:
        print(p.ljust(14) + ''.join(f"{t[k]/min(cuda[k]):12.2f}" for k in keys))
PY
