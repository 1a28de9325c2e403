#!/usr/bin/env bash
# One H200, 2026-11-27 (d): (1) the column-panel probe (examples/probes/column_panels.rs) on the
# power-law and circuit matrices at 4.19M: does a product over 1/P of x at a time beat the whole
# matrix when x (34 MB) does not stay in L2? (2) BiCGStab on 3D Poisson n = 512 with the bench's
# new iterations/stop columns, 300 and 60 iterations, both modes (why its per-iteration time is
# off the ladder). (3) tests/mpi.rs with 2 ranks on the one GPU (both on device 0): the device
# sums must refuse to link two ranks on one device by default (0 reductions on the devices).
# From the repository root on the device, release build packed into .device/bin:
#   OUT=... bash bench/experiments/h200-panels-probe.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 OCL_ICD_FILENAMES=libpocl.so.2:libnvidia-opencl.so.1
nvidia-smi -L
B=.device/bin
if [[ " ${PARTS:-panels n512 mpi} " == *" panels "* ]]; then
  for spec in ${PANEL_MATRICES:-powerlaw:4194304 circuit:4194304}; do
    timeout 300 $B/example-column_panels "$spec" "${PANEL_COUNTS:-1,2,3,4,6}" | tee -a "$OUT/panels-probe-h200.txt"
  done
fi
if [[ " ${PARTS:-panels n512 mpi} " == *" n512 "* ]]; then
  for it in 300 60; do
    timeout 120 $B/pipekrylov bench --backends cuda,opencl --solvers bicgstab --problem poisson3d:512 \
      --executions sync,resident --iterations $it --repeats 10 --out "$OUT/bicgstab-n512-${it}it-h200.csv" > /dev/null 2>&1
    echo "status $?"
  done
  python3 - "$OUT"/bicgstab-n512-*it-h200.csv <<'PY'
import csv, sys
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        print(f.split('/')[-1], r['backend'], r['execution'], '%.2f us' % (float(r['median_s_per_iter']) * 1e6),
              'launches', r['launches_per_iter'], 'transfers', r['transfers_per_iter'], 'iterations', r.get('iterations'), r.get('stop'))
PY
fi
if [[ " ${PARTS:-panels n512 mpi} " == *" mpi "* ]]; then
  t0=$SECONDS
  timeout 240 mpirun --oversubscribe -np 2 $B/test-mpi > "$OUT/mpi-np2-one-gpu.log" 2>&1
  echo "mpi np=2 on one GPU: status $? in $((SECONDS - t0)) s"
  grep -E "cuda device|mpi tests|FAILED|panicked" "$OUT/mpi-np2-one-gpu.log" | sort | uniq | head -6
  grep -c "on devices     0" "$OUT/mpi-np2-one-gpu.log"
  grep "^cuda" "$OUT/mpi-np2-one-gpu.log" | grep -v "on devices     0)" | head -5
fi
