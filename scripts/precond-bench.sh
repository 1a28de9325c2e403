#!/usr/bin/env bash
# Preconditioning I benchmark ([Ma21a] Tables 2-4 shape): GMRES(30) to a relative residual of
# 1e-5, right-hand side of ones, on an atmosmodd-like 3D convection-diffusion (n = 108^3 =
# 1,259,712, block size 4) and a thermal2-like 2D heat-conduction FEM problem (n = 1095^2 =
# 1,199,025, block size 5), with no preconditioner, Jacobi, point-block Jacobi, BILU(0) with the
# exact level-scheduled triangular solves, BILU(0) with K = 1..6 block-Jacobi sweeps and
# block-ISAI of the BILU(0) factors (Preconditioning II, [Ma21b]) with pattern levels k = 1..3.
# One CSV row per solve: iterations, time to solution, setup time (host and device parts),
# median time of one preconditioner application, launches per application.
#
#   scripts/precond-bench.sh OUT.csv [backends] [problems]
#     backends: space-separated (default "cuda opencl"); problems: "convdiff3d thermal2d"
#   PK: the command that runs the CLI (default: bash .device/run pipekrylov)
#   SWEEPS: the K values (default "1 2 3 4 5 6"); ISAI: the k values (default "1 2 3")
#   CONFIGS: the whole list instead (precond:trisolve or isai:k, e.g. "bilu0:exact isai:2"); a
#     suffix @F on a bilu0 / block-jacobi / isai entry picks its factorization (host, the default, or
#     sweeps:F on the device, e.g. "bilu0:sweeps:1@sweeps:2")
#   TOL, MAXIT: the relative tolerance and iteration cap (default 1e-5 and 20000)
#   CONVDIFF_N, THERMAL_N: other sizes (a smoke test on the host: 13824 and 10000)
#   RHS: the right-hand side (default ones; a-ones is b = A 1: on thermal2d with n = 250K, b = 1
#   makes GMRES(30) + BILU(0) stall near a relative residual of 0.98, b = A 1 converges)
set -euo pipefail
out=${1:?output CSV}
backends=${2:-cuda opencl}
problems=${3:-convdiff3d thermal2d}
pk=${PK:-bash .device/run pipekrylov}
sweeps=${SWEEPS:-1 2 3 4 5 6}
echo "problem,n,tol,backend,precond,trisolve,block_size,iterations,converged,relative_residual,precond_setup_s,precond_setup_host_s,precond_setup_device_s,precond_apply_s,precond_launches_per_apply,precond_memory_bytes,solve_s,total_s,s_per_iteration,isai_level,isai_factor_s,isai_pattern_s,isai_upload_s,isai_solve_s,factorization,format" > "$out"
for prob in $problems; do
  case $prob in
    convdiff3d) gen=convdiff3d:${CONVDIFF_N:-1259712}; bs=4 ;;
    thermal2d) gen=thermal2d:${THERMAL_N:-1199025}; bs=5 ;;
    *) echo "unknown problem $prob"; exit 2 ;;
  esac
  for be in $backends; do
    configs="none:exact jacobi:exact point-block-jacobi:exact bilu0:exact"
    for k in $sweeps; do configs="$configs bilu0:sweeps:$k"; done
    for k in ${ISAI:-1 2 3}; do configs="$configs isai:$k"; done
    configs=${CONFIGS:-$configs}
    for cfg in $configs; do
      fz=host
      if [[ $cfg == *@* ]]; then fz=${cfg#*@}; cfg=${cfg%@*}; fi
      pc=${cfg%%:*}; ts=${cfg#*:}
      if [ "$pc" = isai ]; then pcargs="--isai-level $ts --factorization $fz"; else pcargs="--trisolve $ts --factorization $fz"; fi
      json=$($pk solve --generate "$gen" --solver gmres --restart 30 --rtol "${TOL:-1e-5}" --max-iter "${MAXIT:-20000}" \
        --rhs "${RHS:-ones}" --precond "$pc" $pcargs --block-size "$bs" --backend "$be" --json 2>/dev/null || true)
      if [ -z "$json" ]; then echo "$prob $be $cfg: no result" >&2; continue; fi
      echo "$json" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
g = lambda k: d.get(k, 0.0) or 0.0
setup = g("precond_setup_seconds")
pc = d["precond"]
row = [sys.argv[1], d["n"], sys.argv[2], d["backend"], pc, d.get("trisolve", "-") if pc in ("bilu0", "block-jacobi") else "-",
       d.get("block_size", "-") if pc not in ("none", "jacobi") else "-", d["iterations"], d["converged"],
       "%.3e" % d["relative_residual"], "%.6f" % setup, "%.6f" % g("precond_setup_host_seconds"),
       "%.6f" % g("precond_setup_device_seconds"), "%.3e" % g("precond_apply_seconds"),
       d.get("precond_launches_per_apply", 0), d.get("precond_memory_bytes", 0),
       "%.6f" % d["solve_seconds"], "%.6f" % (setup + d["solve_seconds"]), "%.3e" % d["seconds_per_iteration"]]
split = (d.get("precond_params") or {}).get("setup_split_seconds") or {}
row += [d.get("isai_level", "-") if pc == "isai" else "-"] + ["%.6f" % split[k] if k in split else "-" for k in ("factor", "pattern", "upload", "solve")]
row += [d.get("factorization", "-") if pc in ("bilu0", "block-jacobi", "isai") else "-", d.get("format", "-")]
print(",".join(str(x) for x in row))' "$prob" "${TOL:-1e-5}" >> "$out"
      tail -1 "$out"
    done
  done
done
