#!/usr/bin/env bash
# The distributed AMG (issue 56 item 1, `Amg::new_distributed`) on one H200 (the multi-GPU kinds
# were not lent): tests/mpi_amg.rs on 1 and 2 ranks (host, NVIDIA OpenCL, CUDA; 2 ranks share the
# GPU), then CG (classical) + AMG to 1e-8 on 3D Poisson 128^3 and 256^3 and jump3d 128^3: one
# process with the hierarchy set up on the device (the default) and on the host, and `mpirun`
# with 1 and 2 ranks (the distributed hierarchy, set up on the ranks' hosts; 2 ranks on one GPU
# give its iterations, not its scaling). Packed on the workstation with
#   pack-for-device --features "cuda opencl cli mpi" -- --bin pipekrylov --test mpi_amg
# Writes $OUT/mpi_amg-np*.log and $OUT/amg-distributed.csv.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
bin=.device/bin
for np in 1 2; do
  timeout 200 mpirun --oversubscribe --bind-to none -np $np $bin/test-mpi_amg > "$OUT/mpi_amg-np$np.log" 2>&1
  echo "tests/mpi_amg.rs on $np rank(s): status $?"
  grep -E "^(cuda|opencl).*(poisson3d|jump3d)|checks passed|FAILED|rank [0-9]+:" "$OUT/mpi_amg-np$np.log" | tail -n 8
done
csv="$OUT/amg-distributed.csv"
echo "mode,ranks,problem,n,backend,iterations,relative_residual,setup_s,precond_setup_s,setup_host_s,solve_s,us_per_iter,levels,operator_complexity,level_rows" > "$csv"
run() {  # mode ranks problem
  local mode=$1 ranks=$2 spec=$3 launch=() extra=()
  case $mode in
    device) extra=(--amg-setup device) ;;
    host) extra=(--amg-setup host) ;;
    distributed) launch=(mpirun --oversubscribe --bind-to none -np "$ranks" -x RAYON_NUM_THREADS=$((16 / ranks))) ;;
  esac
  json=$(timeout 200 "${launch[@]}" $bin/pipekrylov solve --generate "$spec" --rhs a-ones --solver cg \
    --variant classical --precond amg --backend cuda "${extra[@]}" --json 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$mode,$ranks,${spec%%:*},,cuda,,,,,,,,,," >> "$csv"; tail -3 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1]); p = v["precond_params"]
print(",".join(str(x) for x in [sys.argv[2], sys.argv[3], v["problem"], v["n"], v["backend"], v["iterations"],
  v["relative_residual"], v["setup_seconds"], v["precond_setup_seconds"], v["precond_setup_host_seconds"], v["solve_seconds"],
  v["seconds_per_iteration"] * 1e6, p["levels"], p["operator_complexity"],
  chr(34) + " ".join(str(r) for r in p["level_rows"]) + chr(34)]))
' "$json" "$mode" "$ranks" >> "$csv"
}
for spec in poisson3d:2097152 jump3d:2097152 poisson3d:16777216; do
  run device 1 "$spec"
  run host 1 "$spec"
  run distributed 1 "$spec"
  run distributed 2 "$spec"
done
python3 - "$csv" <<'PY'
import csv, sys
print(f"{'mode':12} {'ranks':>5} {'problem':10} {'n':>9} {'its':>4} {'setup s':>8} {'pc setup':>8} {'solve s':>8} {'us/it':>8} levels")
for r in csv.DictReader(open(sys.argv[1])):
    f = lambda k, d: (r[k] or "nan")[:d]
    print(f"{r['mode']:12} {r['ranks']:>5} {r['problem']:10} {r['n']:>9} {r['iterations']:>4} {f('setup_s', 7):>8} {f('precond_setup_s', 7):>8} {f('solve_s', 7):>8} {f('us_per_iter', 7):>8} {r['level_rows']}")
PY
