#!/usr/bin/env bash
# NVIDIA OpenCL with two programs: the kernels of PTX_KERNELS (src/backend/opencl/program.rs)
# from the inline-PTX program, every other kernel from the portable one. GPU tests (afsai,
# opencl_backend, backend_agreement, device_resident; CUDA and NVIDIA OpenCL), then OpenCL with
# PIPEKRYLOV_OPENCL_INLINE_PTX=1 and 0 alternated: the device-resident CG/BiCGStab ladder at
# n <= 16K (300-iteration solves; must not differ: those kernels are portable either way), the
# the power-law product (CSR stream) and the 27-point stencil's (`--format csr`: the CSR stream kernel) at n >= 4M and aFSAI's setup on elasticity3d. From the
# repository root on the device after a release build with --features "cuda opencl cli" packed
# into .device/bin:
#   OUT=... bash bench/experiments/h200-opencl-ptx-program.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
for t in ${TESTS:-afsai opencl_backend backend_agreement device_resident}; do
  timeout 240 bash .device/run "test-$t" --include-ignored > "$OUT/t.log" 2>&1
  echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$OUT/t.log" | head -n 6
  { echo "== $t"; cat "$OUT/t.log"; } >> "$OUT/test-opencl-ptx-program-h200.log"
done
rm -f "$OUT/t.log"
echo "order,inline_ptx,problem,n,solver,us_per_iter,format,kernel" > "$OUT/opencl-ptx-program-h200.csv"
row() { python3 -c "
import csv, sys
for r in csv.DictReader(open('$1')):
    print('$2,$3,%s,%s,%s,%.3f,%s,%s' % (r['problem'], r['n'], r['solver'], float(r['median_s_per_iter']) * 1e6, r['format'], r['kernel']))" >> "$OUT/opencl-ptx-program-h200.csv"; }
for round in 1 2; do
  for ptx in 0 1; do
    export PIPEKRYLOV_OPENCL_INLINE_PTX=$ptx
    $PK bench --backends opencl --solvers cg,bicgstab --executions resident --problem poisson2d --max-n 17000 \
      --iterations 300 --repeats 10 --out "$OUT/b.csv" --quiet > /dev/null 2>&1 && row "$OUT/b.csv" $round $ptx
    for p in stencil27:4096000 powerlaw:4194304; do
      $PK bench --backends opencl --solvers spmv --problem $p --repeats 10 --out "$OUT/b.csv" --quiet > /dev/null 2>&1 \
        && row "$OUT/b.csv" $round $ptx
    done
    echo "round $round ptx $ptx: done"
  done
done
unset PIPEKRYLOV_OPENCL_INLINE_PTX
rm -f "$OUT/b.csv"
for ptx in 0 1; do
  PIPEKRYLOV_OPENCL_INLINE_PTX=$ptx PRECS="afsai afsai:30:1:1e-3:ratio:f32" timeout 200 bash scripts/fsai-bench.sh \
    "$OUT/afsai-ptx$ptx.csv" "opencl" "elasticity3d:300000" > /dev/null
done
python3 - "$OUT" <<'PY'
import csv, os, sys
out = sys.argv[1]
t = {}
for r in csv.DictReader(open(os.path.join(out, "opencl-ptx-program-h200.csv"))):
    t.setdefault((r["problem"], int(r["n"]), r["solver"], r["kernel"]), {}).setdefault(r["inline_ptx"], []).append(float(r["us_per_iter"]))
print(f"{'problem':10} {'n':>8} {'solver':9} {'kernel':24} {'portable us':>20} {'inline PTX us':>20}")
for k, v in sorted(t.items()):
    f = lambda x: " / ".join(f"{y:.2f}" for y in x)
    print(f"{k[0]:10} {k[1]:>8} {k[2]:9} {k[3]:24} {f(v.get('0', [])):>20} {f(v.get('1', [])):>20}")
for ptx in "01":
    for r in csv.DictReader(open(os.path.join(out, f"afsai-ptx{ptx}.csv"))):
        print(f"afsai elasticity3d opencl inline_ptx={ptx} setup_precision={r['setup_precision']} setup {float(r['setup_s']):.3f} s growth {float(r['growth_s']):.3f} s kernel {r['growth_kernel']}")
PY
