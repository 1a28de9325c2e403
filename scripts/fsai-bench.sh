#!/usr/bin/env bash
# FSAI benchmark ([Bernaschi19] Tables 5/6 shape): PCG to a relative residual of 1e-6 with b = A 1,
# Jacobi-PCG against static FSAI at levels 1..3 and adaptive FSAI, on elasticity3d (geomechanics-like), aniso2d
# (the paper's pi8grid8-like anisotropy) and jump3d (coefficient jumps 1e4-1e6). One CSV row per
# solve: iterations, setup (with its split), solve and total time, density, memory.
#
#   scripts/fsai-bench.sh OUT.csv [backends] [problems]
#     backends: default "cuda opencl"; problems: default "elasticity3d:1000000 aniso2d:2700000 jump3d:1000000"
#   PK: the command that runs the CLI (default: bash .device/run pipekrylov)
#   PRECS: the configurations (default "jacobi fsai:1 fsai:2 fsai:3 afsai"; fsai:K:TAU[:PREC] for
#          prefiltration; afsai:KMAX:S:EPS[:STOP[:PREC]], default 30:1:1e-3:ratio:f64 as in the
#          paper; STOP ratio (eq. 17) or step; PREC the setup precision, f64 or f32)
#   TOL, MAXIT: tolerance (1e-6) and iteration cap (20000)
#   FSAI_KERNEL: the CSR kernel of G and G^T (--fsai-kernel; default: the automatic choice)
#   PIPEKRYLOV_AFSAI_GROW_KERNEL (environment, passed on): row or team, the aFSAI growth kernel
set -euo pipefail
out=${1:?output CSV}
backends=${2:-cuda opencl}
problems=${3:-elasticity3d:1000000 aniso2d:2700000 jump3d:1000000}
pk=${PK:-bash .device/run pipekrylov}
echo "problem,n,nnz,backend,precond,level,tau,iterations,converged,relative_residual,setup_s,pattern_s,upload_s,rows_s,solve_s,total_s,s_per_iteration,density,memory_bytes,peak_setup_bytes,growth_s,max_steps,step_size,eps,stop,setup_precision,layout_s,cast_s,growth_batches,apply_s,kernel_layout_s,g_kernel,gt_kernel,growth_kernel" > "$out"
for prob in $problems; do
  for be in $backends; do
    for cfg in ${PRECS:-jacobi fsai:1 fsai:2 fsai:3 afsai}; do
      IFS=: read -r pc level tau eps stop prec <<< "$cfg"
      args=(--precond "$pc")
      if [ "$pc" = fsai ]; then
        args+=(--fsai-level "${level:-1}" --fsai-tau "${tau:-0}" --fsai-setup-precision "${eps:-f64}")
      fi
      if [ -n "${FSAI_KERNEL:-}" ] && [ "$pc" != jacobi ]; then
        args+=(--fsai-kernel "$FSAI_KERNEL")
      fi
      if [ "$pc" = afsai ]; then
        args+=(--afsai-max-steps "${level:-30}" --afsai-step-size "${tau:-1}" --afsai-eps "${eps:-1e-3}" \
          --afsai-stop "${stop:-ratio}" --fsai-setup-precision "${prec:-f64}")
      fi
      json=$($pk solve --generate "$prob" --solver cg --rhs a-ones --rtol "${TOL:-1e-6}" --max-iter "${MAXIT:-20000}" \
        "${args[@]}" --backend "$be" --json 2>/dev/null || true)
      if [ -z "$json" ]; then echo "$prob $be $cfg: no result" >&2; continue; fi
      echo "$json" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
g = lambda k: d.get(k, 0.0) or 0.0
p = d.get("precond_params") or {}
sp = p.get("setup_split_seconds") or {}
setup = g("precond_setup_seconds")
row = [sys.argv[1].split(":")[0], d["n"], d["nnz"], d["backend"], d["precond"], p.get("level", "-"), p.get("tau", "-"),
       d["iterations"], d["converged"], "%.3e" % d["relative_residual"], "%.6f" % setup,
       "%.6f" % sp.get("pattern", 0), "%.6f" % sp.get("upload", 0), "%.6f" % sp.get("rows", 0),
       "%.6f" % d["solve_seconds"], "%.6f" % (setup + d["solve_seconds"]), "%.3e" % d["seconds_per_iteration"],
       "%.3f" % p.get("density", 0), d.get("precond_memory_bytes", 0), p.get("peak_setup_bytes", 0),
       "%.6f" % sp.get("growth", 0), p.get("max_steps", "-"), p.get("step_size", "-"), p.get("eps", "-"),
       p.get("stop", "-"), p.get("setup_precision", "-"), "%.6f" % sp.get("layout", 0), "%.6f" % sp.get("cast", 0), p.get("growth_batches", 0), "%.6e" % g("precond_apply_seconds"),
       "%.6f" % sp.get("kernel_layout", 0), p.get("g_kernel", "-"), p.get("gt_kernel", "-"),
       p.get("growth_kernel") or "-"]
print(",".join(str(x) for x in row))' "$prob" >> "$out"
      tail -1 "$out"
    done
  done
done
