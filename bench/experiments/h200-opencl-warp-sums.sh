#!/usr/bin/env bash
# HISTORICAL: the warp-shuffle group sums it measured were rejected and removed (bench/log/2026-11-25-opencl-inline-ptx.md,
# "NVIDIA OpenCL: the inline-PTX program only where it gains"); with the current code it compares
# the portable program against PIPEKRYLOV_OPENCL_INLINE_PTX=0, which for these kernels is the same.
# NVIDIA OpenCL's work-group sums with warp shuffles (inline PTX, -D PK_NV_PTX) against the
# portable tree (PIPEKRYLOV_OPENCL_INLINE_PTX=0), on the H200: GPU tests first (CUDA and NVIDIA
# OpenCL), then the device-resident ladders of issue 15 (300-iteration solves, n <= 65K) for
# OpenCL with and without the inline PTX and CUDA beside them, then the CSR product and CG at
# n = 4.19M (issue 16). From the repository root on the device after a release build with
# --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-opencl-warp-sums.sh
# CSV $OUT/opencl-warp-sums-{ladder,large}-h200.csv (column inline_ptx: 1, 0, or - for CUDA).
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
TMP=$(mktemp -d)
for t in ${TESTS:-backend_agreement device_resident opencl_backend solvers}; do
  timeout 240 bash .device/run "test-$t" --include-ignored > "$TMP/t.log" 2>&1
  echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$TMP/t.log" | head -n 6
  { echo "== $t"; cat "$TMP/t.log"; } >> "$OUT/test-opencl-warp-sums-h200.log"
done
for p in poisson2d poisson3d; do
  for ptx in 1 0; do
    PIPEKRYLOV_OPENCL_INLINE_PTX=$ptx timeout 200 $PK bench --backends opencl --solvers cg,bicgstab,gmres \
      --executions resident --problem $p --max-n 70000 --iterations 300 --repeats 10 \
      --out "$TMP/ladder-$p-ptx$ptx.csv" --quiet > /dev/null 2>&1
    echo "ladder $p opencl ptx $ptx: status $?"
  done
  timeout 200 $PK bench --backends cuda --solvers cg,bicgstab,gmres --executions resident --problem $p \
    --max-n 70000 --iterations 300 --repeats 10 --out "$TMP/ladder-$p-ptx-.csv" --quiet > /dev/null 2>&1
  echo "ladder $p cuda: status $?"
done
for p in poisson2d:4190209 circuit:4194304; do
  for ptx in 1 0; do
    PIPEKRYLOV_OPENCL_INLINE_PTX=$ptx timeout 200 $PK bench --backends opencl --solvers spmv,cg,bicgstab \
      --problem $p --format csr --repeats 5 --out "$TMP/large-${p%%:*}-ptx$ptx.csv" --quiet > /dev/null 2>&1
    echo "large $p ptx $ptx: status $?"
  done
done
python3 - "$TMP" "$OUT" <<'PY'
import csv, glob, os, sys
tmp, out = sys.argv[1], sys.argv[2]
for part in ("ladder", "large"):
    files = sorted(glob.glob(os.path.join(tmp, f"{part}-*.csv")))
    dest = os.path.join(out, f"opencl-warp-sums-{part}-h200.csv")
    with open(dest, "w") as w:
        for i, f in enumerate(files):
            lines = open(f).read().splitlines()
            tag = f.rsplit("-ptx", 1)[1][:-4]
            if i == 0:
                w.write(lines[0] + ",inline_ptx\n")
            for l in lines[1:]:
                w.write(l + "," + tag + "\n")
    t = {}
    for r in csv.DictReader(open(dest)):
        t.setdefault((r["problem"], int(r["n"]), r["solver"]), {})[r["backend"] + r["inline_ptx"]] = float(r["median_s_per_iter"]) * 1e6
    print(f"{part}: {'problem':10} {'n':>8} {'solver':9} {'opencl tree':>11} {'opencl warp':>11} {'cuda':>8} {'warp/tree':>9} {'warp/cuda':>9}")
    for k, v in sorted(t.items()):
        a, b, c = v.get("opencl0"), v.get("opencl1"), v.get("cuda-")
        f = lambda x: f"{x:11.2f}" if x else f"{'-':>11}"
        print(f"{part}: {k[0]:10} {k[1]:>8} {k[2]:9} {f(a)} {f(b)} {f(c)[3:]} {b / a if a and b else float('nan'):9.3f} {b / c if b and c else float('nan'):9.3f}")
PY
rm -rf "$TMP"
