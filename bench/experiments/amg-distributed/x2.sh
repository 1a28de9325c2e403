#!/usr/bin/env bash
# The distributed AMG on two H200s (`nvidia-h200-x2`, issue 56 item 1): tests/mpi_amg.rs on 2
# ranks (one GPU each), then CG (classical) + AMG to 1e-8 with `mpirun -np R pipekrylov solve
# --precond amg` (the hierarchy set up on the ranks' hosts, 16 rayon threads per rank): strong
# scaling on 3D Poisson 256^3 (R = 1, 2) and weak scaling on the 256 x 256 x 128 box per rank
# (R = 1: 256x256x128, R = 2: 256x256x256). Packed with
#   pack-for-device --features "cuda opencl cli mpi" -- --bin pipekrylov --test mpi_amg
# Writes $OUT/mpi_amg-x2.log and $OUT/amg-distributed-x2.csv.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
bin=.device/bin
PK_MPI_TEST_OPENCL=0 timeout 200 mpirun --oversubscribe --bind-to none -np 2 $bin/test-mpi_amg > "$OUT/mpi_amg-x2.log" 2>&1
echo "tests/mpi_amg.rs on 2 ranks, 2 GPUs: status $?"
grep -E "^cuda.*(poisson3d|jump3d)|checks passed|FAILED|rank [0-9]+:" "$OUT/mpi_amg-x2.log" | tail -n 6
csv="$OUT/amg-distributed-x2.csv"
echo "study,ranks,problem,n,iterations,relative_residual,precond_setup_s,solve_s,us_per_iter,slowest_rank_us_per_iter,halo_us,levels,level_rows" > "$csv"
run() {  # study ranks spec
  json=$(timeout 240 mpirun --oversubscribe --bind-to none -np "$2" -x RAYON_NUM_THREADS=16 $bin/pipekrylov solve \
    --generate "$3" --rhs a-ones --solver cg --variant classical --precond amg --backend cuda --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,$2,$3,,,,,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]; ranks = v.get("per_rank") or [{}]
print(",".join(str(x) for x in [sys.argv[2], sys.argv[3], sys.argv[4], v["n"], v["iterations"], v["relative_residual"],
  v["precond_setup_seconds"], v["solve_seconds"], v["seconds_per_iteration"] * 1e6,
  max(r.get("iteration_us", 0) for r in ranks), max(r.get("halo_us", 0) for r in ranks), p["levels"],
  chr(34) + " ".join(str(r) for r in p["level_rows"]) + chr(34)]))
' "$json" "$1" "$2" "$3" >> "$csv"
}
run strong 1 poisson3d:256x256x256
run strong 2 poisson3d:256x256x256
run weak 1 poisson3d:256x256x128
run weak 2 poisson3d:256x256x256
cat "$csv"
