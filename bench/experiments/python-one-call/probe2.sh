#!/usr/bin/env bash
# Issue 53, second call: are the wrapper's Python steps slow after a CUDA call because other
# threads still run (a busy-wait before them would help; fewer rayon threads would help) or
# for good (cold caches)? steps.py on CUDA: default; after busy-waits of 200 and 1000 us; with
# RAYON_NUM_THREADS=4; pinned to one core. Run: OUT=$OUT bash bench/experiments/python-one-call/probe2.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
here=bench/experiments/python-one-call
python3 -m pip install -q --no-index --no-deps --target /tmp/pyk_new .device/wheels-new/*.whl 2>/dev/null
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
{
  PYTHONPATH=/tmp/pyk_new python3 $here/steps.py cuda 0
  PYTHONPATH=/tmp/pyk_new python3 $here/steps.py cuda 200
  PYTHONPATH=/tmp/pyk_new python3 $here/steps.py cuda 1000
  echo "RAYON_NUM_THREADS=4"; RAYON_NUM_THREADS=4 PYTHONPATH=/tmp/pyk_new python3 $here/steps.py cuda 0
  echo "taskset -c 8"; PYTHONPATH=/tmp/pyk_new taskset -c 8 python3 $here/steps.py cuda 0
  echo "ps of threads"; PYTHONPATH=/tmp/pyk_new python3 -c "
import numpy as np, scipy.sparse as sp, pipekrylov, os
A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(16, 16), format='csr')
pipekrylov.cg(A, np.ones(16), backend='cuda')
print(len(os.listdir('/proc/self/task')), 'threads')"
} > $OUT/probe2.txt 2>&1
cat $OUT/probe2.txt
