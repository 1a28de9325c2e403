#!/usr/bin/env bash
# Multi-GPU scaling study (issue 19) with the distributed bench (one rank per GPU): strong scaling
# of pipelined CG, BiCGStab and GMRES(30) on 3D Poisson 256^3 and 2D Poisson 4096^2 (n = 16.8M)
# over 1, 2, 4, 8 ranks, 3D Poisson 512^3 (n = 134M, BIG=1), and weak scaling at 8.4M unknowns
# per rank on a box 256 x 256 x (128 ranks), so that every rank holds the same 256 x 256 x 128
# slab as the one-GPU run (CUBE=1: the cube of 8.4M x ranks unknowns instead, as before
# 2026-11-27, whose one-GPU 203^3 runs 6-7% faster per row than the slabs); every CSV row carries the slowest rank's time per iteration and rank 0's split (local
# SpMV, exposed halo, reductions). One CSV per point under $OUT, a table of the efficiencies last.
# From the repository root on the device, after the release build with
# --features "cuda opencl mpi cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-scaling.sh
# RANKS: the rank counts (default 1 2 4 8 up to the GPUs the machine has). DRY=1: run RANKS as
# given even on fewer GPUs (ranks share devices: checks the script and the reports, measures no
# scaling) at the sizes divided by SHRINK (default 64). BACKEND (default cuda) and BIN (default
# .device/bin) for a try on another machine. STUDIES (default "strong3d strong2d weak") picks
# the studies.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=${BIN:-.device/bin}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ -n "${DRY:-}" ]; then
  ranks=${RANKS:-1 2 4}; shrink=${SHRINK:-64}
else
  ranks=""; for r in ${RANKS:-1 2 4 8}; do [ "$r" -le "$gpus" ] && ranks="$ranks $r"; done
  shrink=1
fi
echo "GPUs: $gpus; rank counts:$ranks; sizes / $shrink"
run() { # name np problem
  timeout 580 mpirun --oversubscribe -np "$2" $bin/pipekrylov bench --backends "${BACKEND:-cuda}" \
    --solvers cg,bicgstab,gmres --problem "$3" --repeats 5 --out "$OUT/$1-np$2.csv" --quiet \
    > "$OUT/$1-np$2.log" 2>&1
  echo "$1 np=$2 $3: status $?"
}
studies=" ${STUDIES:-strong3d strong2d weak} "
for np in $ranks; do
  [[ $studies == *" strong3d "* ]] && run strong-poisson3d "$np" "poisson3d:$((16777216 / shrink))"
  [[ $studies == *" strong2d "* ]] && run strong-poisson2d "$np" "poisson2d:$((16777216 / shrink))"
  [ -n "${BIG:-}" ] && run strong-poisson3d-512 "$np" "poisson3d:$((134217728 / shrink))"
  if [[ $studies != *" weak "* ]]; then
    :
  elif [ -n "${CUBE:-}" ]; then
    run weak-poisson3d "$np" "poisson3d:$((8388608 * np / shrink))"
  elif [ "$shrink" = 1 ]; then
    run weak-poisson3d-box "$np" "poisson3d:256x256x$((128 * np))"
  else
    run weak-poisson3d-box "$np" "poisson3d:64x64x$((32 * np))"
  fi
done
python3 - "$OUT" <<'PY'
import csv, glob, os, re, sys
out = sys.argv[1]
base = {}
rows = []
for f in sorted(glob.glob(os.path.join(out, "*-np*.csv"))):
    name, np = re.match(r".*/(.*)-np(\d+)\.csv", f).groups()
    for r in csv.DictReader(open(f)):
        t = float(r["slowest_rank_s_per_iter"])
        rows.append((name, int(np), r["solver"], int(r["n"]), t, r))
        if int(np) == 1:
            base[(name, r["solver"])] = t
print(f"{'study':20} {'solver':9} {'ranks':>5} {'n':>10} {'us/iter':>9} {'eff':>6} {'spmv':>7} {'exch':>7} {'glob':>7} {'halo':>7} {'reduce':>7}")
for name, np, solver, n, t, r in sorted(rows):
    b = base.get((name, solver))
    eff = "" if b is None else f"{(b / t if name.startswith('weak') else b / (np * t)):6.2f}"
    us = lambda k: float(r[k]) * 1e6
    print(f"{name:20} {solver:9} {np:5} {n:10} {t*1e6:9.1f} {eff:>6} {us('local_spmv_s_per_iter'):7.1f} "
          f"{us('exchange_s_per_iter'):7.1f} {us('globalize_s_per_iter'):7.1f} "
          f"{us('halo_s_per_iter'):7.1f} {us('reduce_s_per_iter'):7.1f}")
PY
