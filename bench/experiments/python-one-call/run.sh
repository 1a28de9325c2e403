#!/usr/bin/env bash
# Issue 53's one-call overhead after the plain call was fused into one extension call
# (`_pipekrylov.solve_once`), on the GPU machine, and issue 55's host AMG refresh baseline:
#  1. paired.py (python-overhead/) with the wheel of this commit and of 5ec990f, alternated over
#     two rounds, CUDA and host;
#  2. fused.py and steps.py (this folder) with the new wheel, CUDA and host;
#  3. the crate's one call taken apart in Rust (examples/probes/one_call_parts.rs), CUDA and host;
#  4. the package's tests with the new wheel (CUDA, NVIDIA OpenCL, CuPy inputs);
#  5. the values_refresh bench, host backend, amg at 1M (16 cores), and the host AMG refresh
#     taken apart (examples/probes/amg_refresh_parts.rs).
# Packed on the workstation:
#   ${PACK:-pack-for-device} --features "cuda opencl" -- --example one_call_parts --example amg_refresh_parts --bench values_refresh
#   (cd python && maturin build --release --features "cuda opencl" --auditwheel skip -o ../.device/wheels-new)
#   the same at 5ec990f into .device/wheels-old; pip download pytest -d .device/wheels-pytest
# Run: OUT=$OUT bash bench/experiments/python-one-call/run.sh  (everything under $OUT/results.tgz)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
repo=$(pwd)
res=/tmp/results && mkdir -p $res
here=bench/experiments/python-one-call
for w in new old; do
  python3 -m pip install -q --no-index --no-deps --target "/tmp/pyk_$w" .device/wheels-$w/*.whl
done
python3 -m pip install -q --no-index --target /tmp/pyk_pytest .device/wheels-pytest/*.whl 2>/dev/null
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
for round in 1 2; do
  for w in old new; do
    for backend in cuda host; do
      PYTHONPATH=/tmp/pyk_$w timeout 120 python3 bench/experiments/python-overhead/paired.py "$backend" 200 2>&1 \
        | grep " n = " | sed "s/^/$w round $round: /" >> $res/paired.txt
    done
  done
done
for backend in cuda host; do
  PYTHONPATH=/tmp/pyk_new timeout 120 python3 $here/fused.py $backend 300 >> $res/fused.txt 2>&1
  PYTHONPATH=/tmp/pyk_new timeout 60 python3 $here/steps.py $backend >> $res/steps.txt 2>&1
  timeout 120 bash .device/run example-one_call_parts $backend 300 >> $res/one_call_parts.txt 2>&1
done
(cd /tmp && PYTHONPATH=/tmp/pyk_new:/tmp/pyk_pytest timeout 300 python3 -m pytest -q -rfs --tb=line \
  -p no:warnings "$repo/python/tests" > $res/pytest.txt 2>&1)
timeout 200 bash .device/run test-values_refresh --backend host --n 1000000 --only amg \
  --out $res/refresh_host_amg.csv > $res/refresh_host_amg.txt 2>&1
timeout 200 bash .device/run example-amg_refresh_parts > $res/amg_refresh_parts.txt 2>&1
nproc > $res/nproc.txt
tar czf "$OUT/results.tgz" -C /tmp results
echo "== paired (median paired_overhead, us)"
grep -o "^[a-z]* round [0-9]: [a-z]* n = [0-9]*: py [0-9.]* rust [0-9.]* paired_overhead [0-9.]*" $res/paired.txt
echo "== fused"; cat $res/fused.txt
echo "== steps"; cat $res/steps.txt
echo "== one_call_parts"; cat $res/one_call_parts.txt
echo "== pytest"; tail -n 4 $res/pytest.txt
echo "== refresh"; tail -n 4 $res/refresh_host_amg.txt; cat $res/amg_refresh_parts.txt
