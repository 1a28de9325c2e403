#!/usr/bin/env bash
# Device-to-device halo link (v3: copies and flags on the link's stream) on four GPUs: the
# distributed tests with 4 ranks, then peer against host-staged exchanges: 4 ranks on 3D 256^3
# (strong) and 3D 33.6M (weak, 8.4M per rank), 2 ranks on 3D 256^3; two rounds.
# From the repository root on the device after a release build with --features "cuda opencl mpi cli"
# packed into .device/bin (pipekrylov, test-mpi):  OUT=... bash scripts/THIS.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
nvidia-smi -L
timeout 200 mpirun --oversubscribe -np 4 .device/bin/test-mpi > $OUT/mpi-test-np4-peer.log 2>&1; echo "mpi test np4 status $?"
grep -E "mpi tests|FAILED|panicked" $OUT/mpi-test-np4-peer.log | tail -3; grep "^cuda" $OUT/mpi-test-np4-peer.log | head -2
for r in 1 2; do for mode in 1 0; do for pp in 4:poisson3d:16777216 4:poisson3d:33554432 2:poisson3d:16777216; do
  np=${pp%%:*}; p=${pp#*:}; t=peer$mode-${p%%:*}${p##*:}-np$np-r$r
  PIPEKRYLOV_HALO_PEER=$mode timeout 120 mpirun --oversubscribe -np $np .device/bin/pipekrylov bench --backends cuda --solvers cg,bicgstab,gmres --problem $p --repeats 5 --out $OUT/ab-$t.csv --quiet > /dev/null 2>&1; echo "$t: $?"
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
tar czf peer4.tgz *.csv *.log; rm -f *.csv *.log
