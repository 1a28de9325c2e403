#!/usr/bin/env bash
# The CSR kernels (issue 16, src/backend/row_blocks.rs) on the H200: the GPU tests, then the
# SpMV alone with each CSR kernel forced (PIPEKRYLOV_CSR_KERNEL=vector|stream|stream-compact,
# KERNELS picks them) on the six matrices of the bandwidth study at the ladder top (MATRICES),
# cuSPARSE's cusparseSpMV on the same matrices (benches/cusparse_spmv.cu, CUSPARSE=0 to skip),
# and CG, BiCGStab and GMRES(30) (pipelined, f64, CSR) with each kernel on SOLVER_MATRICES
# (default: power-law, 27-point stencil, elasticity3d). CSV under $OUT, a table last. Run from
# the repository root on the device after
#   (release build of every target with --features "cuda opencl cli", executables packed into
#   .device/bin with the .device/run launcher, the layout the other device scripts use)
#   PARTS="tests spmv solvers" bash bench/experiments/h200-stream.sh      (about 12 minutes: run the
#   parts in two calls under a 10-minute limit; TAG names the CSVs stream-*$TAG-h200.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export TAG=${TAG:-}
PK="bash .device/run pipekrylov"
PARTS=" ${PARTS:-tests spmv solvers} "
MATRICES_SPMV=${MATRICES:-powerlaw:4194304 circuit:4194304 poisson2d:4190209 poisson3d:4096000 stencil27:4096000 elasticity3d:324864}
TMP=$(mktemp -d)
case "$PARTS" in *" tests "*)
  for t in backend_agreement cuda_backend; do
    bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
    echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | head -n 8
  done ;;
esac
case "$PARTS" in *" spmv "*)
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if [ "${CUSPARSE:-1}" = 1 ]; then
    $NVCC -O3 -o "$TMP/cusparse_spmv" benches/cusparse_spmv.cu -lcusparse || echo "nvcc failed"
    echo "problem,n,nnz,algorithm,median_s,min_s,max_s,floor_bytes" > "$OUT/stream-cusparse$TAG-h200.csv"
  fi
  for case in $MATRICES_SPMV; do
    p=${case%%:*}; n=${case#*:}
    if [ -x "$TMP/cusparse_spmv" ]; then
      $PK export --generate "$p:$n" --raw --out "$TMP/$p.csr" \
        && "$TMP/cusparse_spmv" "$TMP/$p.csr" "$p" 20 >> "$OUT/stream-cusparse$TAG-h200.csv"
      echo "$p cusparse: status $?"; rm -f "$TMP/$p.csr"
    fi
    for K in ${KERNELS:-vector stream stream-compact}; do
      PIPEKRYLOV_CSR_KERNEL=$K timeout 150 $PK bench --backends cuda,opencl --solvers spmv \
        --problem "$p" --min-n "$n" --max-n "$n" --format csr --repeats 20 \
        --out "$TMP/spmv-$p-$K.csv" --quiet > /dev/null 2>&1
      echo "$p $K: status $?"
    done
  done ;;
esac
case "$PARTS" in *" solvers "*)
  for case in ${SOLVER_MATRICES:-powerlaw:4194304 stencil27:4096000 elasticity3d:324864}; do
    p=${case%%:*}; n=${case#*:}
    for K in ${KERNELS:-vector stream stream-compact}; do
      PIPEKRYLOV_CSR_KERNEL=$K timeout 250 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres \
        --problem "$p" --min-n "$n" --max-n "$n" --format csr --repeats 5 \
        --out "$TMP/solvers-$p-$K.csv" --quiet > /dev/null 2>&1
      echo "$p solvers $K: status $?"
    done
  done ;;
esac
python3 - "$TMP" "$OUT" <<'PY'
import csv, glob, os, sys
tmp, out = sys.argv[1], sys.argv[2]
def merge(pattern, dest):
    files = sorted(glob.glob(os.path.join(tmp, pattern)))
    if not files:
        return
    with open(os.path.join(out, dest), "w") as w:
        for i, f in enumerate(files):
            lines = open(f).read().splitlines()
            if lines:
                w.write((lines[0] + "\n") if i == 0 else "")
                w.writelines(l + "\n" for l in lines[1:])
tag = os.environ.get("TAG", "")
merge("spmv-*.csv", f"stream-spmv{tag}-h200.csv")
merge("solvers-*.csv", f"stream-solvers{tag}-h200.csv")
ref = {}
rf = os.path.join(out, f"stream-cusparse{tag}-h200.csv")
if os.path.exists(rf):
    for r in csv.DictReader(open(rf)):
        ref.setdefault(r["problem"], []).append((float(r["median_s"]), r["algorithm"]))
for name in [f"stream-spmv{tag}-h200.csv", f"stream-solvers{tag}-h200.csv"]:
    f = os.path.join(out, name)
    if not os.path.exists(f):
        continue
    print(f"{'problem':12} {'kernel':22} {'backend':7} {'solver':9} {'n':>8} {'us':>9} {'GB/s':>6} {'x floor':>7} {'/cusparse':>9}")
    for r in csv.DictReader(open(f)):
        t = float(r["median_s_per_iter"]); b = float(r["floor_bytes_per_iter"])
        best = min(ref.get(r["problem"], [(float("nan"), "")]))[0]
        print(f"{r['problem']:12} {r['kernel']:22} {r['backend']:7} {r['solver']:9} {r['n']:>8} {t*1e6:9.1f} {b/t/1e9:6.0f} {float(r['floor_ratio']):7.2f} {t/best:9.2f}")
for p, v in sorted(ref.items()):
    print(p, " ".join(f"{a}={t*1e6:.1f}us" for t, a in v))
PY
rm -rf "$TMP"
