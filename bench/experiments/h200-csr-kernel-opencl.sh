#!/usr/bin/env bash
# The CSR vector kernel against the stream kernel (16-bit offsets where they fit) with the SpMV
# load hints, CUDA and NVIDIA OpenCL, on the short-row matrices that the automatic choice keeps
# on the vector kernel (issue 16): `PIPEKRYLOV_CSR_KERNEL=vector|stream-compact pipekrylov bench
# --format csr --solvers spmv,cg,bicgstab,gmres --repeats 5`. Run from the repository root on
# the device after a release build with --features "cuda opencl cli" packed into .device/bin:
#   OUT=... bash bench/experiments/h200-csr-kernel-opencl.sh      (CASES: problem:n list)
# CSV $OUT/csr-kernel-hints-h200.csv (column csr_kernel_env), a table last.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
TMP=$(mktemp -d)
for case in ${CASES:-circuit:4194304 circuit:1048576 poisson2d:4190209 poisson3d:4096000 poisson2d:1000000}; do
  for k in vector stream-compact; do
    PIPEKRYLOV_CSR_KERNEL=$k timeout 200 $PK bench --backends cuda,opencl --solvers spmv,cg,bicgstab,gmres \
      --problem "$case" --format csr --repeats 5 --out "$TMP/${case/:/-}-$k.csv" --quiet > /dev/null 2>&1
    echo "$case $k: status $?"
  done
done
python3 - "$TMP" "$OUT/csr-kernel-hints-h200.csv" <<'PY'
import csv, glob, os, sys
tmp, dest = sys.argv[1], sys.argv[2]
rows = []
with open(dest, "w") as w:
    for i, f in enumerate(sorted(glob.glob(os.path.join(tmp, "*.csv")))):
        k = "stream-compact" if f.endswith("stream-compact.csv") else "vector"
        lines = open(f).read().splitlines()
        if i == 0:
            w.write(lines[0] + ",csr_kernel_env\n")
        for l in lines[1:]:
            w.write(l + "," + k + "\n")
t = {}
for r in csv.DictReader(open(dest)):
    t.setdefault((r["problem"], r["n"], r["backend"], r["solver"]), {})[r["csr_kernel_env"]] = (
        float(r["median_s_per_iter"]) * 1e6, float(r["floor_ratio"]), r["kernel"])
print(f"{'problem':10} {'n':>8} {'backend':7} {'solver':9} {'vector us (x floor)':>20} {'stream us (x floor)':>20} stream/vector")
for k, v in sorted(t.items()):
    a, b = v.get("vector"), v.get("stream-compact")
    if a and b:
        print(f"{k[0]:10} {k[1]:>8} {k[2]:7} {k[3]:9} {a[0]:12.1f} ({a[1]:4.2f}) {b[0]:12.1f} ({b[1]:4.2f}) {b[0]/a[0]:8.3f}  {b[2]}")
PY
rm -rf "$TMP"
