#!/usr/bin/env bash
# Device-to-device halo link (CUDA IPC) on a multi-GPU node: the distributed tests with NP ranks
# (one GPU each), a solve that reports the halo path, then link (PIPEKRYLOV_HALO_PEER=1) against
# host-staged exchanges (=0) at each POINTS entry RANKS:PROBLEM, two rounds, a table last.
# From the repository root on the device after a release build with --features "cuda opencl mpi cli"
# packed into .device/bin (pipekrylov, test-mpi):
#   OUT=... bash bench/experiments/peer-link-ab.sh                      (2 GPUs: 3D and 2D 16.8M)
#   OUT=... NP=4 POINTS="4:poisson3d:16777216 4:poisson3d:33554432 2:poisson3d:16777216" \
#     bash bench/experiments/peer-link-ab.sh                            (4 GPUs; bench/experiments/peer-link-x4.sh)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
NP=${NP:-2}
POINTS=${POINTS:-$NP:poisson3d:16777216 $NP:poisson2d:16777216}
nvidia-smi -L
if [ -z "${NOTEST:-}" ]; then
  PIPEKRYLOV_HALO_PEER=1 timeout 240 mpirun --oversubscribe -np $NP .device/bin/test-mpi > $OUT/mpi-test-np$NP-peer.log 2>&1; echo "mpi test status $?"
  grep -E "mpi tests|FAILED|panicked" $OUT/mpi-test-np$NP-peer.log | tail -3; grep "^cuda" $OUT/mpi-test-np$NP-peer.log | head -4
  PIPEKRYLOV_HALO_PEER=1 timeout 60 mpirun --oversubscribe -np $NP .device/bin/pipekrylov solve --generate poisson3d:2097152 --solver cg --backend cuda --tol 1e-8 > $OUT/solve-np$NP.log 2>&1; echo "solve status $?"; grep -E "halo exchanges|iterations|error" $OUT/solve-np$NP.log | head -4
fi
for r in 1 2; do for mode in 1 0; do for pp in $POINTS; do
  np=${pp%%:*}; p=${pp#*:}; t=peer$mode-${p%%:*}${p##*:}-np$np-r$r
  PIPEKRYLOV_HALO_PEER=$mode timeout 150 mpirun --oversubscribe -np $np .device/bin/pipekrylov bench --backends cuda --solvers cg,bicgstab,gmres --problem $p --repeats 5 --out $OUT/ab-$t.csv --quiet > /dev/null 2>&1; echo "$t: $?"
done; done; done
cd $OUT; python3 - <<'PY'
import csv,glob,collections,statistics
d=collections.defaultdict(list)
for f in glob.glob('ab-*.csv'):
  mode,prob,np,r=f[3:-4].split('-')
  for x in csv.DictReader(open(f)):
    d[(prob,np,x['solver'],mode)].append((float(x['slowest_rank_s_per_iter'])*1e6, float(x['halo_s_per_iter'])*1e6))
print('problem ranks solver | host us/it (halo) | peer us/it (halo)  [median of rounds]')
for k in sorted({k[:3] for k in d}):
  cell=lambda m: '%.1f (%.1f)'%(statistics.median(v[0] for v in d[k+(m,)]), statistics.median(v[1] for v in d[k+(m,)])) if d.get(k+(m,)) else '-'
  print(*k,'|',cell('peer0'),'|',cell('peer1'))
PY
tar czf peer-np$NP.tgz *.csv *.log; rm -f *.csv *.log
