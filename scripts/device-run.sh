#!/usr/bin/env bash
# One call on the GPU machine (after the release executables of `--features "cuda opencl"`
# were copied to .device/bin with a .device/run wrapper that sets the OpenCL/MPI environment):
# conformance of CUDA and NVIDIA OpenCL against host, FEM-ladder iteration counts, then the
# latency sweeps. Results under $OUT (8 files at most come back): device.log, fem2d_iterations.csv,
# h200_<problem>.{csv,svg} (markdown tables go to the log). Usage: bash scripts/device-run.sh [tests|bench|all]
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/pipekrylov-out}
mkdir -p "$out"
log="$out/device.log"
run() { bash .device/run "$@"; }
{
  echo "== $(date -u) $(git rev-parse --short HEAD 2>/dev/null || echo nogit)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  run pipekrylov info --probe
} 2>&1 | tee -a "$log"
summary=()
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in test-backend_agreement test-cuda_backend test-opencl_backend test-cuda_nvrtc test-solvers; do
    [ -x .device/bin/$t ] || { summary+=("$t: not packed"); continue; }
    tl=/tmp/$t.log
    if run "$t" --include-ignored >"$tl" 2>&1; then r=pass; else r=FAIL; fi
    { echo "== $t: $r"; grep -vE '^test .* ok$' "$tl" | tail -n 60; } >>"$log"
    summary+=("$t: $r ($(grep -E '^test result' "$tl" | tail -1))")
  done
  # FEM ladder: iteration counts per backend (issue: OpenCL within 1 iteration or 1% of host).
  echo "backend,n,iterations,relative_residual,seconds_per_iteration" >"$out/fem2d_iterations.csv"
  for be in host cuda opencl; do
    for n in 225 961 3969 16129 65025 261121; do
      j=$(run pipekrylov solve --generate fem2d:$n --solver cg --backend $be --json 2>/dev/null)
      echo "$j" | python3 -c "import json,sys; d=json.load(sys.stdin); print(f\"{d['backend']},{d['n']},{d['iterations']},{d['relative_residual']:.3e},{d['seconds_per_iteration']:.3e}\")" >>"$out/fem2d_iterations.csv" 2>/dev/null || echo "$be,$n,error,," >>"$out/fem2d_iterations.csv"
    done
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  for prob in poisson2d poisson3d; do
    run pipekrylov bench --backends cuda,opencl,host --solvers cg,bicgstab,gmres \
      --variants pipelined,classical --problem $prob --out "$out/h200_$prob.csv" \
      --plot "$out/h200_$prob.svg" --quiet >>"$log" 2>&1
    summary+=("bench $prob: rc=$? rows=$(($(wc -l <"$out/h200_$prob.csv") - 1))")
  done
fi
cat "$out/fem2d_iterations.csv" 2>/dev/null
printf '%s\n' "${summary[@]}"
