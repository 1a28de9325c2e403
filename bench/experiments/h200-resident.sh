#!/usr/bin/env bash
# Device-resident pipelined CG and BiCGStab on the H200 (issue 15): GPU tests (device-resident ==
# synchronous bit for bit on CUDA and NVIDIA OpenCL; the paper's counts in the synchronous mode),
# then both modes side by side on the 2D and 3D Poisson ladders up to 65K (the latency regime;
# `small` with the benchmark method's 30-iteration solves, `long` with 300-iteration solves) and
# the large sizes, CUDA and OpenCL, CSV under $OUT. SOLVERS (default "cg,bicgstab,gmres") picks the
# solvers, BACKENDS (default "cuda,opencl") the backends, TESTS the test executables of `tests`. Run from the repository root on the device after
#   (release build of every target with --features "cuda opencl mpi cli", executables packed into
#   .device/bin with the .device/run launcher, the layout the other device scripts use)
#   bash bench/experiments/h200-resident.sh          (about 4 minutes; PARTS="tests small long large")
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
parts=${PARTS:-tests small long large}
solvers=${SOLVERS:-cg,bicgstab,gmres}
backends=${BACKENDS:-cuda,opencl}
PK="bash .device/run pipekrylov"
for part in $parts; do
  case $part in
    tests)
      for t in ${TESTS:-device_resident backend_agreement cuda_backend dcgs2_two_kernels}; do
        bash .device/run "test-$t" --include-ignored > "$OUT/test-$t.log" 2>&1
        echo "$t: status $?"; grep -E "test result|FAILED|panicked" "$OUT/test-$t.log" | head -n 8
      done ;;
    small)
      for p in poisson2d poisson3d; do
        timeout 250 $PK bench --backends "$backends" --solvers "$solvers" --executions sync,resident \
          --problem $p --max-n 70000 --repeats 20 --out "$OUT/resident-$p-h200.csv" --quiet > /dev/null 2>&1
        echo "small $p: status $?"
      done ;;
    long)
      for p in poisson2d poisson3d; do
        timeout 250 $PK bench --backends "$backends" --solvers "$solvers" --executions sync,resident \
          --problem $p --max-n 70000 --iterations 300 --repeats 10 --out "$OUT/resident-300it-$p-h200.csv" \
          --quiet > /dev/null 2>&1
        echo "long $p: status $?"
      done ;;
    f32diag)
      # Pipelined BiCGStab in f32 on convdiff3d n=4096 (cuda_backend f32_solves_agree_with_host).
      for be in cuda host; do
        $PK solve --generate convdiff3d:4096 --solver bicgstab --precision f32 --tol 1e-4 --backend $be --json 2>&1 \
          | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["backend"], d["iterations"], d["stop_reason"], d["relative_residual"], d.get("accuracy_warning"))'
      done ;;
    large)
      for p in poisson2d poisson3d; do
        timeout 250 $PK bench --backends "$backends" --solvers "$solvers" --executions sync,resident \
          --problem $p --min-n 70000 --max-n 1100000 --out "$OUT/resident-large-$p-h200.csv" --quiet > /dev/null 2>&1
        echo "large $p: status $?"
      done ;;
  esac
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
print(f"{'file':22} {'solver':8} {'backend':7} {'problem':10} {'n':>8} {'sync us':>8} {'resident us':>11} {'speedup':>7} {'launch/it':>9} {'xfer/it':>7}")
for f in sorted(glob.glob(os.path.join(out, "resident-*.csv"))):
    rows = list(csv.DictReader(open(f)))
    by = {}
    for r in rows:
        by.setdefault((r["solver"], r["backend"], r["problem"], int(r["n"])), {})[r["execution"]] = r
    tag = os.path.basename(f).replace("resident-", "").replace("-h200.csv", "")
    for (sv, b, p, n), m in sorted(by.items()):
        if "sync" in m and "resident" in m:
            s, d = float(m["sync"]["median_s_per_iter"]), float(m["resident"]["median_s_per_iter"])
            print(f"{tag:22} {sv:8} {b:7} {p:10} {n:>8} {s*1e6:8.2f} {d*1e6:11.2f} {s/d:7.2f} {float(m['resident']['launches_per_iter']):9.2f} {float(m['resident']['transfers_per_iter']):7.3f}")
PY
