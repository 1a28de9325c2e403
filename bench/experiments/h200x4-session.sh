#!/usr/bin/env bash
# Four GPUs of one node (2026-11-27): the distributed tests with 4 ranks (device-to-device halo
# link), the scaling study over RANKS (default "1 2 4") with STUDIES (default "strong3d weak": 3D
# Poisson 256^3 and the 256 x 256 x (128 ranks) box), then the 4-rank points again with the
# host-staged halo (PIPEKRYLOV_HALO_PEER=0) for comparison. From the repository root on the device
# after a release build with --features "cuda opencl mpi cli" packed into .device/bin
# (pipekrylov, test-mpi):
#   OUT=... bash bench/experiments/h200x4-session.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
nvidia-smi -L
timeout 240 mpirun --oversubscribe -np 4 .device/bin/test-mpi > $OUT/mpi-test-np4.log 2>&1; echo "mpi test status $?"
grep -E "mpi tests|FAILED|panicked" $OUT/mpi-test-np4.log | tail -3; grep "^cuda" $OUT/mpi-test-np4.log | head -2
STUDIES=${STUDIES:-strong3d weak} RANKS="${RANKS:-1 2 4}" OUT="$OUT" bash bench/experiments/h200-scaling.sh | tee $OUT/scaling-table.txt
for p in poisson3d:16777216 poisson3d:256x256x512; do
  t=host-staged-np4-${p//[:x]/-}
  PIPEKRYLOV_HALO_PEER=0 timeout 150 mpirun --oversubscribe -np 4 .device/bin/pipekrylov bench --backends cuda --solvers cg,bicgstab,gmres --problem $p --repeats 5 --out $OUT/$t.csv --quiet > /dev/null 2>&1; echo "$t: $?"
  python3 -c "import csv,sys; [print('   ', r['solver'], round(float(r['slowest_rank_s_per_iter'])*1e6,1)) for r in csv.DictReader(open(sys.argv[1]))]" $OUT/$t.csv
done
cd $OUT && tar czf results-np4.tgz *.csv *.log *.txt && rm -f *.csv *.log
