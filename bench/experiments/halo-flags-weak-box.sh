#!/usr/bin/env bash
# One lease of a multi-GPU node (2026-11-27 session): the distributed tests with NP ranks (one GPU
# each, device-to-device halo link with fenced flags), then per RANKS the scaling study with the
# box-shaped weak problem (bench/experiments/h200-scaling.sh), then the link's flag write A/B: fenced
# cuStreamWriteValue32 (PIPEKRYLOV_HALO_FLAG_WRITE=1, the default) against cuMemsetD32Async (=0)
# at NP ranks on 3D Poisson 256^3, two rounds. From the repository root on the device after a
# release build with --features "cuda opencl mpi cli" packed into .device/bin (pipekrylov, test-mpi):
#   OUT=... NP=2 RANKS="1 2" bash bench/experiments/halo-flags-weak-box.sh
#   OUT=... NP=4 RANKS="1 2 4" bash bench/experiments/halo-flags-weak-box.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
NP=${NP:-2}
nvidia-smi -L
PIPEKRYLOV_HALO_PEER=1 timeout 240 mpirun --oversubscribe -np $NP .device/bin/test-mpi > $OUT/mpi-test-np$NP.log 2>&1; echo "mpi test status $?"
grep -E "mpi tests|FAILED|panicked" $OUT/mpi-test-np$NP.log | tail -3; grep "^cuda" $OUT/mpi-test-np$NP.log | head -4
PIPEKRYLOV_HALO_PEER=1 timeout 60 mpirun --oversubscribe -np $NP .device/bin/pipekrylov solve --generate poisson3d:128x128x256 --solver cg --backend cuda --tol 1e-8 > $OUT/solve-box-np$NP.log 2>&1; echo "solve status $?"; grep -E "halo exchanges|stop|error" $OUT/solve-box-np$NP.log | head -4
RANKS="${RANKS:-1 $NP}" OUT="$OUT" bash bench/experiments/h200-scaling.sh | tee $OUT/scaling-table.txt
for r in 1 2; do for mode in 1 0; do
  t=flag$mode-np$NP-r$r
  PIPEKRYLOV_HALO_FLAG_WRITE=$mode timeout 150 mpirun --oversubscribe -np $NP .device/bin/pipekrylov bench --backends cuda --solvers cg,bicgstab,gmres --problem poisson3d:16777216 --repeats 5 --out $OUT/ab-$t.csv --quiet > /dev/null 2>&1; echo "$t: $?"
done; done
cd $OUT; python3 - <<'PY'
import csv,glob,collections,statistics
d=collections.defaultdict(list)
for f in glob.glob('ab-*.csv'):
  mode,np,r=f[3:-4].split('-')
  for x in csv.DictReader(open(f)):
    d[(np,x['solver'],mode)].append(float(x['slowest_rank_s_per_iter'])*1e6)
print('ranks solver | memset flags us/it | fenced flags us/it  [rounds]')
for k in sorted({k[:2] for k in d}):
  print(*k,'|',d.get(k+('flag0',)),'|',d.get(k+('flag1',)))
PY
tar czf results-np$NP.tgz *.csv *.log *.txt; rm -f *.csv *.log
