#!/usr/bin/env bash
# Two H200s, 2026-11-27 (d) (issue 14): does where mpirun places the two ranks change the weak
# study? The host-staged halo exchange's time varied 135-456 us per iteration between machine
# instances and rounds. The weak box at 1 rank, then at 2 ranks with Open MPI's default placement,
# --map-by socket --bind-to socket, and --bind-to none; nvidia-smi topo -m first.
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200x2-binding.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
nvidia-smi topo -m | head -8
bench() { # label np mpirun-args...
  local label=$1 np=$2; shift 2
  timeout 200 mpirun --oversubscribe -np "$np" --report-bindings "$@" .device/bin/pipekrylov bench --backends cuda \
    --solvers cg,bicgstab,gmres --problem "poisson3d:256x256x$((128 * np))" --repeats 5 \
    --out "$OUT/weak-$label.csv" --quiet > "$OUT/weak-$label.log" 2>&1
  echo "$label: status $?"; grep -i "bound\|binding" "$OUT/weak-$label.log" | head -2
}
for round in $(seq 1 ${ROUNDS:-2}); do
  bench "np1-r$round" 1
  bench "default-r$round" 2
  bench "socket-r$round" 2 --map-by socket --bind-to socket
  bench "none-r$round" 2 --bind-to none
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
def rows(label):
    f = os.path.join(out, f"weak-{label}.csv")
    return {r["solver"]: r for r in csv.DictReader(open(f))} if os.path.exists(f) else {}
for rnd in sorted({f.split("-r")[-1][:-4] for f in glob.glob(os.path.join(out, "weak-*-r*.csv"))}):
    base = rows(f"np1-r{rnd}")
    for label in ("default", "socket", "none"):
        rr = rows(f"{label}-r{rnd}")
        cells = []
        for s in ("cg", "bicgstab", "gmres"):
            if s in rr and s in base:
                t = float(rr[s]["slowest_rank_s_per_iter"]); b = float(base[s]["slowest_rank_s_per_iter"])
                ex = float(rr[s].get("exchange_s_per_iter", 0) or 0)
                cells.append(f"{s} {t*1e6:7.1f} ({b/t:.3f}, exch {ex*1e6:5.1f})")
        print(f"round {rnd} {label:8} " + "  ".join(cells))
PY
