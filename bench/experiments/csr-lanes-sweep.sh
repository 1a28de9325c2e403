#!/usr/bin/env bash
# CSR kernel and lanes-per-row sweep of plain pipelined CG on the 16.8M-unknown 2D and 3D Poisson
# problems (300 iterations each; seconds per iteration from the CLI's JSON), with SELL-32-256 for
# comparison: which layout the automatic choice should take (issue 16).
#   bench/experiments/csr-lanes-sweep.sh OUT.csv     PK: the CLI command (default: bash .device/run pipekrylov)
set -euo pipefail
out=${1:?output CSV}
pk=${PK:-bash .device/run pipekrylov}
echo "problem,backend,setting,iterations,s_per_iteration,kernel" > $out
for gen in poisson3d:16777216 poisson2d:16777216; do
 for be in cuda opencl; do
  for set in default L1 L2 L4 L8 L16 stream sell; do
   env="PIPEKRYLOV_UNUSED=1" fmt=csr
   case $set in L*) env="PIPEKRYLOV_CSR_LANES=${set#L}";; stream) env="PIPEKRYLOV_CSR_KERNEL=stream";; sell) fmt=sell;; esac
   json=$(env $env $pk solve --generate $gen --solver cg --tol 1e-30 --maxit 300 --format $fmt \
     --backend $be --json 2>/dev/null || true)
   [ -n "$json" ] || { echo "$gen $be $set: no result" >&2; continue; }
   echo "$json" | python3 -c '
import json,sys
d=json.loads(sys.stdin.read())
print(",".join(str(x) for x in [sys.argv[1],sys.argv[2],sys.argv[3],d["iterations"],"%.4e"%d["seconds_per_iteration"],d.get("spmv_kernel","")]))' $gen $be $set >> $out
   tail -1 $out
  done
 done
done
