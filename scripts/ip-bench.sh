#!/usr/bin/env bash
# Incomplete Poisson benchmark ([Ament10] Table II shape): CG to a relative residual of 1e-6,
# right-hand side of ones, on the 3D Poisson problem 256^3 (n = 16,777,216, the paper's largest
# single-GPU case), without a preconditioner, with Jacobi, with the assembled IP (one SpMV on
# A's pattern) and with the matrix-free IP (no matrix stored). One CSV row per solve:
# iterations, time to solution, setup, per-iteration time, preconditioner memory.
#
#   scripts/ip-bench.sh OUT.csv [backends] [precs]
#     backends: space-separated (default "cuda opencl"); precs: default
#     "none jacobi ip ip-matrix-free"
#   PK: the command that runs the CLI (default: bash .device/run pipekrylov)
#   GEN: the problem (default poisson3d:16777216; a host smoke test: poisson3d:32768)
#   TOL, MAXIT, FORMAT: tolerance (1e-6), iteration cap (20000), device format (csr)
#   REPEAT: solves per configuration, one row each (default 1)
set -euo pipefail
out=${1:?output CSV}
backends=${2:-cuda opencl}
precs=${3:-none jacobi ip ip-matrix-free}
pk=${PK:-bash .device/run pipekrylov}
gen=${GEN:-poisson3d:16777216}
echo "problem,n,tol,backend,format,precond,iterations,converged,relative_residual,precond_setup_s,precond_memory_bytes,solve_s,total_s,s_per_iteration,launches_per_iteration" > "$out"
for be in $backends; do
  for pc in $precs; do
   for _ in $(seq "${REPEAT:-1}"); do
    json=$($pk solve --generate "$gen" --solver cg --rtol "${TOL:-1e-6}" --max-iter "${MAXIT:-20000}" \
      --precond "$pc" --format "${FORMAT:-csr}" --backend "$be" --json 2>/dev/null || true)
    if [ -z "$json" ]; then echo "$be $pc: no result" >&2; continue; fi
    echo "$json" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
g = lambda k: d.get(k, 0.0) or 0.0
setup = g("precond_setup_seconds")
row = [sys.argv[1], d["n"], sys.argv[2], d["backend"], sys.argv[3], d["precond"], d["iterations"], d["converged"],
       "%.3e" % d["relative_residual"], "%.6f" % setup, d.get("precond_memory_bytes", 0),
       "%.6f" % d["solve_seconds"], "%.6f" % (setup + d["solve_seconds"]), "%.3e" % d["seconds_per_iteration"],
       d["launches_per_iteration"]]
print(",".join(str(x) for x in row))' "${gen%%:*}" "${TOL:-1e-6}" "${FORMAT:-csr}" >> "$out"
    tail -1 "$out"
   done
  done
done
