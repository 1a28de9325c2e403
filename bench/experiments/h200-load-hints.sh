#!/usr/bin/env bash
# Cache hints of the SpMV loads on the H200 (issue 16), CUDA and NVIDIA OpenCL: the same build
# run with PIPEKRYLOV_MATRIX_LOAD_HINTS=0 (plain loads), 1 (matrix streamed, evict first; the
# default) and 2 (also the gathers through the read-only path), on the SpMV alone (`bench --solvers spmv`, the
# automatic format) and the solvers, beside cuSPARSE's cusparseSpMV (benches/cusparse_spmv.cu,
# built here with nvcc) on the same matrices; then Nsight Compute's DRAM bytes and L2 hit rate
# of the power-law product for both kernels. Run from the repository root on the device after a
# release build with --features "cuda opencl cli" packed into .device/bin (the layout of the
# other device scripts):
#   OUT=... PARTS="tests spmv cusparse solvers ncu" bash bench/experiments/h200-load-hints.sh
# MATRICES (problem:n pairs) and HINTS (values) narrow the sweep. PARTS=refresh re-measures
# issue 16's matrices at n >= 3.9M with the default hints (REFRESH: problem:n:format triples;
# `pipekrylov bench --solvers spmv,cg,bicgstab,gmres --repeats 5`, CSVs refresh-hints-*).
# CSV under $OUT, a table last.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
PARTS=${PARTS:-tests spmv cusparse solvers ncu}
MATRICES=${MATRICES:-powerlaw:4194304 circuit:4194304 poisson2d:4190209 poisson3d:4096000 stencil27:4096000 elasticity3d:324864}
SOLVER_MATRICES=${SOLVER_MATRICES:-powerlaw:4194304 circuit:4194304}
HINTS=${HINTS:-0 1 2}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
TMP=$(mktemp -d)
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

if has tests; then
  for t in backend_agreement cuda_backend; do
    for h in 1 2; do
      PIPEKRYLOV_MATRIX_LOAD_HINTS=$h timeout 300 bash .device/run "test-$t" --include-ignored \
        > "$TMP/test-$t-h$h.log" 2>&1
      echo "test $t hints $h: status $?"
      grep -E "test result|FAILED|panicked" "$TMP/test-$t-h$h.log" | head -n 6
    done
  done
  cat "$TMP"/test-*.log > "$OUT/test-load-hints-h200.log"
fi
if has cusparse; then
  $NVCC -O3 -o "$TMP/cusparse_spmv" benches/cusparse_spmv.cu -lcusparse || echo "nvcc failed"
  echo "problem,n,nnz,algorithm,median_s,min_s,max_s,floor_bytes" > "$OUT/load-hints-cusparse-h200.csv"
  for case in $MATRICES; do
    p=${case%%:*}; n=${case#*:}
    $PK export --generate "$p:$n" --raw --out "$TMP/m.csr" > /dev/null \
      && "$TMP/cusparse_spmv" "$TMP/m.csr" "$p" 20 >> "$OUT/load-hints-cusparse-h200.csv"
    echo "cusparse $p: status $?"
    rm -f "$TMP/m.csr"
  done
fi
if has spmv; then
  for case in $MATRICES; do
    p=${case%%:*}; n=${case#*:}
    for h in $HINTS; do
      PIPEKRYLOV_MATRIX_LOAD_HINTS=$h timeout 150 $PK bench --backends cuda,opencl --solvers spmv \
        --problem "$p" --min-n "$n" --max-n "$n" --format auto --repeats 20 \
        --out "$TMP/spmv-$p-h$h.csv" --quiet > /dev/null 2>&1
      echo "spmv $p hints $h: status $?"
    done
  done
fi
if has solvers; then
  for case in $SOLVER_MATRICES; do
    p=${case%%:*}; n=${case#*:}
    for h in $HINTS; do
      PIPEKRYLOV_MATRIX_LOAD_HINTS=$h timeout 200 $PK bench --backends cuda,opencl --solvers cg,bicgstab,gmres \
        --problem "$p" --min-n "$n" --max-n "$n" --format auto --repeats 5 \
        --out "$TMP/solvers-$p-h$h.csv" --quiet > /dev/null 2>&1
      echo "solvers $p hints $h: status $?"
    done
  done
fi
if has refresh; then
  for case in ${REFRESH:-poisson2d:4190209:sell poisson2d:4190209:auto poisson3d:4096000:auto poisson3d:4096000:sell elasticity3d:4000000:auto circuit:4194304:auto powerlaw:4194304:auto stencil27:4096000:auto}; do
    p=${case%%:*}; rest=${case#*:}; n=${rest%%:*}; f=${rest#*:}
    timeout 280 $PK bench --backends cuda,opencl --solvers spmv,cg,bicgstab,gmres --problem "$p:$n" \
      --format "$f" --repeats 5 --out "$OUT/refresh-hints-$p-$f-h200.csv" \
      --quiet > /dev/null 2>&1
    echo "refresh $p $f: status $?"
  done
  python3 bench/experiments/issue16_table.py "$OUT"
fi
if has ncu; then
  M="gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum"
  M="$M,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem"
  M="$M,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed"
  for h in 0 1 2; do
    PIPEKRYLOV_MATRIX_LOAD_HINTS=$h timeout 200 $NCU --csv --metrics "$M" -k regex:spmv_dots \
      --launch-skip 10 --launch-count 3 bash .device/run pipekrylov bench --backends cuda \
      --solvers spmv --problem powerlaw --min-n 4194304 --max-n 4194304 --repeats 2 --quiet \
      > "$TMP/ncu-h$h.csv" 2> "$TMP/ncu-h$h.err"
    echo "ncu hints $h: status $?"; tail -n 3 "$TMP/ncu-h$h.err"
  done
  if [ -x "$TMP/cusparse_spmv" ]; then
    $PK export --generate powerlaw:4194304 --raw --out "$TMP/m.csr" > /dev/null
    timeout 200 $NCU --csv --metrics "$M" --launch-skip 70 --launch-count 3 "$TMP/cusparse_spmv" \
      "$TMP/m.csr" powerlaw 2 > "$TMP/ncu-cusparse.csv" 2> "$TMP/ncu-cusparse.err"
    echo "ncu cusparse: status $?"; tail -n 3 "$TMP/ncu-cusparse.err"
  fi
  for f in "$TMP"/ncu-*.csv; do echo "== $(basename "$f")"; grep -v "^==PROF==" "$f"; done \
    > "$OUT/load-hints-ncu-powerlaw-h200.txt"
fi
python3 - "$TMP" "$OUT" <<'PY'
import csv, glob, os, sys
tmp, out = sys.argv[1], sys.argv[2]
for part in ("spmv", "solvers"):
    files = sorted(glob.glob(os.path.join(tmp, f"{part}-*-h*.csv")))
    if not files:
        continue
    with open(os.path.join(out, f"load-hints-{part}-h200.csv"), "w") as w:
        for i, f in enumerate(files):
            lines = open(f).read().splitlines()
            hints = f.rsplit("-h", 1)[1][:-4]
            if i == 0:
                w.write(lines[0] + ",load_hints\n")
            for l in lines[1:]:
                w.write(l + "," + hints + "\n")
ref = {}
cus = os.path.join(out, "load-hints-cusparse-h200.csv")
if os.path.exists(cus):
    for r in csv.DictReader(open(cus)):
        ref.setdefault(r["problem"], []).append(float(r["median_s"]))
rows = {}
for part in ("spmv", "solvers"):
    f = os.path.join(out, f"load-hints-{part}-h200.csv")
    if not os.path.exists(f):
        continue
    for r in csv.DictReader(open(f)):
        key = (r["problem"], r["solver"], r["backend"], r.get("format", ""), r.get("kernel", ""))
        rows.setdefault(key, {})[r["load_hints"]] = (float(r["median_s_per_iter"]) * 1e6, float(r["floor_ratio"]))
print(f"{'problem':12} {'solver':9} {'backend':7} {'format':12} {'kernel':22} " + " ".join(f"{'hints ' + h:>16}" for h in "012") + f" {'cusparse':>9}")
for key, v in sorted(rows.items()):
    cells = " ".join(f"{v[h][0]:8.1f} ({v[h][1]:4.2f})" if h in v else f"{'-':>16}" for h in "012")
    c = min(ref.get(key[0], [float("nan")])) * 1e6 if key[1] == "spmv" else float("nan")
    print(f"{key[0]:12} {key[1]:9} {key[2]:7} {key[3]:12} {key[4]:22} {cells} {c:9.1f}")
PY
rm -rf "$TMP"
