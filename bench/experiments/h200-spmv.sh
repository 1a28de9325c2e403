#!/usr/bin/env bash
# The SpMV alone on the H200 (issue 16): pipekrylov's kernels (`bench --solvers spmv`, CUDA and
# NVIDIA OpenCL, CSR and the alternative format of each matrix) against cuSPARSE's cusparseSpMV
# (benches/cusparse_spmv.cu, built here with nvcc) on the same matrices, exported with
# `pipekrylov export --raw`; then sweeps of the CSR tuning knobs (src/backend/tuning.rs).
# CUSPARSE=0 skips the reference, ALT=0 the alternative formats; SWEEP_FACTOR and SWEEP_LANES
# name the sweeps' matrices (empty: skip). CSV under $OUT, a table last. Run from the repository root on the
# device after
#   (release build of every target with --features "cuda opencl cli", executables packed into
#   .device/bin with the .device/run launcher, the layout the other device scripts use)
#   bash bench/experiments/h200-spmv.sh              (about 7 minutes; SWEEP_FACTOR, SWEEP_LANES pick the
#                                           sweeps' matrices, empty to skip)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
TMP=$(mktemp -d)
# CUSPARSE=0 skips the reference (the table then compares with the committed one).
CUSPARSE=${CUSPARSE:-1}
REF="$OUT/cusparse-spmv-h200.csv"
if [ "$CUSPARSE" = 1 ]; then
  $NVCC -O3 -o "$TMP/cusparse_spmv" benches/cusparse_spmv.cu -lcusparse || { echo "nvcc failed"; exit 1; }
  echo "problem,n,nnz,algorithm,median_s,min_s,max_s,floor_bytes" > "$REF"
else
  REF=bench/results/cusparse-spmv-h200.csv
fi
# problem, unknowns (the top of the bench ladder), alternative format
for case in poisson2d:4190209:sell poisson3d:4096000:sell stencil27:4096000:sell \
            elasticity3d:324864:bsr:3 powerlaw:4194304:sell circuit:4194304:sell; do
  p=${case%%:*}; rest=${case#*:}; n=${rest%%:*}; alt=${rest#*:}
  if [ "$CUSPARSE" = 1 ]; then
    $PK export --generate "$p:$n" --raw --out "$TMP/$p.csr" || { echo "$p: export failed"; continue; }
    "$TMP/cusparse_spmv" "$TMP/$p.csr" "$p" 20 >> "$REF"
    echo "$p cusparse: status $?"
    rm -f "$TMP/$p.csr"
  fi
  [ "${ALT:-1}" = 1 ] || alt=
  for f in csr $alt; do
    timeout 200 $PK bench --backends cuda,opencl --solvers spmv --problem "$p" --min-n "$n" \
      --max-n "$n" --format "$f" --repeats 20 --out "$TMP/spmv-$p-${f%%:*}.csv" --quiet > /dev/null 2>&1
    echo "$p $f: status $?"
  done
done
# The tuning knobs of src/backend/tuning.rs, CSR: the long-row factor (0 = off, the kernel
# before the long-row path) and the lanes per row (default: from the mean row length).
for p in ${SWEEP_FACTOR-powerlaw circuit}; do
  for F in 0 2 4 8 16 32; do
    PIPEKRYLOV_LONG_ROW_FACTOR=$F timeout 120 $PK bench --backends cuda,opencl --solvers spmv \
      --problem $p --min-n 4194304 --max-n 4194304 --repeats 5 \
      --out "$TMP/sweep-longrow-$p-f$F.csv" --quiet > /dev/null 2>&1
    echo "$p factor $F: status $?"
  done
done
for case in ${SWEEP_LANES-powerlaw:4194304 stencil27:4096000 elasticity3d:324864 poisson3d:4096000}; do
  p=${case%%:*}; n=${case#*:}
  for K in 1 2 4 8 16 32; do
    PIPEKRYLOV_CSR_LANES=$K timeout 120 $PK bench --backends cuda,opencl --solvers spmv \
      --problem $p --min-n $n --max-n $n --repeats 5 \
      --out "$TMP/sweep-lanes-$p-k$K.csv" --quiet > /dev/null 2>&1
    echo "$p lanes $K: status $?"
  done
done
# One CSV per part (the device tool returns few files); the sweep files gain a `knob` column.
python3 - "$TMP" "$OUT" <<'PY'
import glob, os, sys
tmp, out = sys.argv[1], sys.argv[2]
def merge(pattern, dest, knob):
    files = sorted(glob.glob(os.path.join(tmp, pattern)))
    with open(os.path.join(out, dest), "w") as w:
        for i, f in enumerate(files):
            lines = open(f).read().splitlines()
            tag = os.path.basename(f)[:-4]
            if i == 0:
                w.write(lines[0] + (",knob" if knob else "") + "\n")
            for l in lines[1:]:
                w.write(l + ("," + tag if knob else "") + "\n")
merge("spmv-*.csv", "spmv-h200.csv", False)
merge("sweep-*.csv", "spmv-sweeps-h200.csv", True)
PY
rm -rf "$TMP"
python3 - "$OUT" "$REF" <<'PY'
import csv, glob, os, sys
out, ref_file = sys.argv[1], sys.argv[2]
ref = {}
for r in csv.DictReader(open(ref_file)):
    t = float(r["median_s"])
    ref.setdefault(r["problem"], []).append((t, r["algorithm"]))
print(f"{'problem':12} {'format':12} {'backend':7} {'n':>8} {'nnz':>10} {'us':>8} {'GB/s':>6} {'x floor':>7} {'cusparse us':>11} {'vs cusparse':>11}")
for f in [os.path.join(out, "spmv-h200.csv")]:
    for r in csv.DictReader(open(f)):
        t = float(r["median_s_per_iter"]); b = float(r["floor_bytes_per_iter"])
        best = min(ref.get(r["problem"], [(float("nan"), "")]))
        print(f"{r['problem']:12} {r['format']:12} {r['backend']:7} {r['n']:>8} {r['nnz']:>10} {t*1e6:8.1f} {b/t/1e9:6.0f} {float(r['floor_ratio']):7.2f} {best[0]*1e6:11.1f} {t/best[0]:11.2f}")
for p, v in sorted(ref.items()):
    print(p, " ".join(f"{a}={t*1e6:.1f}us" for t, a in v))
print("sweeps (us per SpMV):")
sweep = {}
sweeps = os.path.join(out, "spmv-sweeps-h200.csv")
for r in (csv.DictReader(open(sweeps)) if os.path.getsize(sweeps) else []):
    sweep.setdefault(r["knob"], []).append(f"{r['backend']}={float(r['median_s_per_iter'])*1e6:.1f}")
for k, v in sorted(sweep.items()):
    print(k, " ".join(v))
PY
