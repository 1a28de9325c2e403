#!/usr/bin/env bash
# Global sums device to device (PIPEKRYLOV_SUMS_PEER, src/dist/backend.rs SumsPath) on a
# multi-GPU node: the distributed tests with NP ranks (one GPU each; the report lines count the
# reductions summed on the devices; the link forced on), a solve that reports them, then the sums
# link (=1; off by default since 2026-11-27) against the host path (=0) at NP ranks on PROBLEMS (default the 3D weak box of NP ranks), ROUNDS rounds
# (default 2), a table last. From the repository root on the device after a release build with
# --features "cuda opencl mpi cli" packed into .device/bin (pipekrylov, test-mpi):
#   OUT=... NP=2 bash bench/experiments/sums-link-ab.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
NP=${NP:-2}
PROBLEMS=${PROBLEMS:-poisson3d:256x256x$((128 * NP))}
nvidia-smi -L
if [ -z "${NOTEST:-}" ]; then
  PIPEKRYLOV_SUMS_PEER=1 timeout 240 mpirun --oversubscribe -np $NP .device/bin/test-mpi > $OUT/mpi-test-np$NP.log 2>&1; echo "mpi test status $?"
  grep -E "mpi tests|FAILED|panicked|error" $OUT/mpi-test-np$NP.log | tail -4; grep "^cuda" $OUT/mpi-test-np$NP.log | head -12
  PIPEKRYLOV_SUMS_PEER=1 timeout 60 mpirun --oversubscribe -np $NP .device/bin/pipekrylov solve --generate poisson3d:128x128x256 --solver gmres --backend cuda --tol 1e-8 > $OUT/solve-np$NP.log 2>&1; echo "solve status $?"; grep -E "halo exchanges|global reductions|stop|error" $OUT/solve-np$NP.log | head -5
fi
for r in $(seq 1 ${ROUNDS:-2}); do for mode in 1 0; do for p in $PROBLEMS; do
  t=sums$mode-${p//[:x]/-}-np$NP-r$r
  PIPEKRYLOV_SUMS_PEER=$mode timeout 150 mpirun --oversubscribe -np $NP .device/bin/pipekrylov bench --backends cuda --solvers ${SOLVERS:-cg,bicgstab,gmres} --problem $p --repeats 5 --out $OUT/ab-$t.csv --quiet > /dev/null 2>&1; echo "$t: $?"
done; done; done
cd $OUT; python3 - <<'PY'
import csv,glob,collections,statistics
d=collections.defaultdict(list)
for f in glob.glob('ab-*.csv'):
  parts=f[3:-4].split('-')
  mode=parts[0]; prob='-'.join(parts[1:-2])
  for x in csv.DictReader(open(f)):
    d[(prob,x['solver'],mode)].append((float(x['slowest_rank_s_per_iter'])*1e6, float(x['globalize_s_per_iter'])*1e6))
print('problem solver | host sums us/it (globalize) | device sums us/it (globalize)  [median of rounds]')
for k in sorted({k[:2] for k in d}):
  cell=lambda m: '%.1f (%.1f)'%(statistics.median(v[0] for v in d[k+(m,)]), statistics.median(v[1] for v in d[k+(m,)])) if d.get(k+(m,)) else '-'
  print(*k,'|',cell('sums0'),'|',cell('sums1'))
PY
tar czf sums-np$NP.tgz *.csv *.log; rm -f *.csv *.log
