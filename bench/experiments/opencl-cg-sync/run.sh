#!/usr/bin/env bash
# Issue 51: which commit made pipelined CG on NVIDIA OpenCL, synchronous, 2-6% slower per
# iteration at n <= 65K than d8856ce (the commit before the redesign)? Every packed binary
# `.device/bin/pipekrylov-<commit>` runs the CG rows of the latency ladder (2D Poisson up to 65K,
# NVIDIA OpenCL, synchronous; the CUDA rows beside them as a control), all binaries once per
# round, the order rotated each round, each run pinned to one core (`taskset -c $PIN`, default
# 8). Then summary.py: per binary and row the median over the rounds of each round's median us
# per iteration, and its ratio to the first binary named in BASE (default d8856ce).
# Packed on the workstation: the team's pack-for-device tool (any target), then each commit's
# release `pipekrylov` (`--features "cuda opencl cli"`) copied in as .device/bin/pipekrylov-<commit>.
# ROUNDS (default 12), ITER (default 1000), BACKENDS (the order the bench runs them in, default
# opencl,cuda), ONLY (the binaries to run, default every packed one), SOLVERS (default cg; e.g.
# cg,bicgstab,gmres for every synchronous row of the ladder, 2026-12-02 (e)).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=$(cd "$(dirname "$0")" && pwd)
final=$OUT
OUT=$(mktemp -d)
mapfile -t bins < <(ls .device/bin | grep '^pipekrylov-' | sed 's/^pipekrylov-//')
[ -n "${ONLY:-}" ] && read -r -a bins <<< "$ONLY"
pin="taskset -c ${PIN:-8}"
for r in $(seq 1 "${ROUNDS:-12}"); do
  k=$(( (r - 1) % ${#bins[@]} ))
  order=("${bins[@]:k}" "${bins[@]:0:k}")
  for v in "${order[@]}"; do
    timeout 200 $pin bash .device/run "pipekrylov-$v" bench --backends "${BACKENDS:-opencl,cuda}" --solvers "${SOLVERS:-cg}" \
      --executions sync --problem poisson2d --max-n 70000 --iterations "${ITER:-1000}" --repeats 5 \
      --quiet --out "$OUT/cg-$v-r$r.csv" > /dev/null 2>&1
    echo "$v r$r: status $?"
  done
done > "$OUT/runs.txt"
python3 "$here/summary.py" "$OUT" "${BASE:-d8856ce}" > "$OUT/summary.txt" 2>&1
tar czf "$final/results.tgz" -C "$OUT" .
grep -vc "status 0" "$OUT/runs.txt"
cat "$OUT/summary.txt"
