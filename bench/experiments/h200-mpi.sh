#!/usr/bin/env bash
# The multi-GPU layer on one H200 (the 2-GPU kind was not lent): GPU tests of the halo kernels
# and of the distributed solvers (CUDA, NVIDIA OpenCL and host; 2 ranks share the GPU), then the
# cost of the distributed backend at one rank: `pipekrylov bench` (plain code path) against
# `mpirun -np 1 pipekrylov bench` (DistBackend with one rank) on both Poisson ladders. CSV under
# $OUT. Run from the repository root on the device after
#   (release build of every target with --features "cuda opencl mpi cli", executables packed into
#   .device/bin with the .device/run launcher, the layout the other device scripts use)
#   bash bench/experiments/h200-mpi.sh            (about 5 minutes; PARTS="tests overhead ranks2")
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
parts=${PARTS:-tests overhead ranks2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
bin=.device/bin
for part in $parts; do
  case $part in
    tests)
      bash .device/run test-backend_agreement --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/backend_agreement: /"
      for np in 1 2; do
        echo "== mpirun -np $np tests/mpi.rs (host, OpenCL, CUDA)"
        timeout 300 mpirun --oversubscribe -np $np $bin/test-mpi > "$OUT/mpi-test-np$np.log" 2>&1
        echo "status $?"; grep -E "^(cuda|opencl)|mpi tests|FAILED|rank .*:" "$OUT/mpi-test-np$np.log" | tail -n 12
      done ;;
    overhead)
      for p in poisson2d poisson3d; do
        for mode in plain mpi1; do
          launch=""; [ $mode = mpi1 ] && launch="mpirun -np 1"
          timeout 280 $launch $bin/pipekrylov bench --backends cuda --solvers cg,bicgstab,gmres \
            --variants pipelined --problem $p --out "$OUT/overhead-$mode-$p-h200.csv" --quiet > /dev/null 2>&1
          echo "$mode $p: status $?"
        done
      done
      python3 - "$OUT" <<'PY'
import csv, sys, os
out = sys.argv[1]
print(f"{'problem':10} {'solver':9} {'n':>8} {'plain us':>9} {'1 rank us':>9} {'ratio':>6}")
for p in ("poisson2d", "poisson3d"):
    try:
        plain = list(csv.DictReader(open(os.path.join(out, f"overhead-plain-{p}-h200.csv"))))
        mpi1 = list(csv.DictReader(open(os.path.join(out, f"overhead-mpi1-{p}-h200.csv"))))
    except FileNotFoundError as e:
        print("missing", e); continue
    for a, b in zip(plain, mpi1):
        pa, pb = float(a["median_s_per_iter"]), float(b["median_s_per_iter"])
        print(f"{p:10} {a['solver']:9} {a['n']:>8} {pa*1e6:9.2f} {pb*1e6:9.2f} {pb/pa:6.3f}")
PY
      ;;
    ranks2)
      # Two ranks on the one GPU: the report format and the per-rank split (not a scaling
      # measurement: both ranks share one device).
      timeout 200 mpirun --oversubscribe -np 2 $bin/pipekrylov solve --generate poisson3d:2097152 \
        --backend cuda --solver cg 2>&1 | tail -n 8 ;;
  esac
done
