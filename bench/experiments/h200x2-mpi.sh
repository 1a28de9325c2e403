#!/usr/bin/env bash
# Issue 14 on the two-GPU H200 machine (device kind nvidia-h200-x2): the distributed tests with one
# rank per GPU, the strong/weak scaling study 1 -> 2 GPUs (bench/experiments/h200-scaling.sh with RANKS="1 2")
# and BILU(0)-preconditioned GMRES(30) on the atmosmodd-like problem of Preconditioning I
# (convdiff3d, n = 1,259,712, block size 4, relative residual 1e-5) on 1 and 2 GPUs, next to none
# and Jacobi. CSV and logs under $OUT, tables last. From the repository root on the device, after
# the release build with --features "cuda opencl mpi cli" packed into .device/bin (executables
# pipekrylov, test-mpi and test-backend_agreement; BIN, BACKEND and SIZE override for a try elsewhere):
#   OUT=... bash bench/experiments/h200x2-mpi.sh            (PARTS="topo tests scaling bilu", about 5 minutes;
#                                                 PARTS=ranks: both ranks' split, each GPU alone)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libpocl.so.2:libnvidia-opencl.so.1}
bin=${BIN:-.device/bin}
for part in ${PARTS:-topo tests scaling bilu}; do
  case $part in
    topo)
      nvidia-smi -L; nvidia-smi topo -m 2>&1 | head -n 6 | tee "$OUT/topology.txt" ;;
    tests)
      bash .device/run test-backend_agreement --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/backend_agreement: /"
      echo "== mpirun -np 2 tests/mpi.rs (host, OpenCL, CUDA; one GPU per rank)"
      timeout 300 mpirun --oversubscribe -np 2 "$bin/test-mpi" > "$OUT/mpi-test-np2-x2.log" 2>&1
      echo "status $?"; grep -E "mpi tests|FAILED|rank .*:" "$OUT/mpi-test-np2-x2.log" | tail -n 6 ;;
    scaling)
      RANKS="1 2" OUT="$OUT" bash bench/experiments/h200-scaling.sh ;;
    ranks)
      # Both ranks' split of a 2-GPU solve (the bench reports rank 0's), and each GPU alone on
      # the weak-scaling size: is one of them slower?
      for s in cg bicgstab gmres; do
        timeout 200 mpirun --oversubscribe -np 2 "$bin/pipekrylov" solve --generate poisson3d:16777216 \
          --solver $s --backend cuda --tol 1e-30 --maxit 300 > "$OUT/ranks-$s-np2.log" 2>&1
        echo "== $s, 2 ranks:"; grep -A3 "^rank " "$OUT/ranks-$s-np2.log"
      done
      for d in 0 1; do
        CUDA_VISIBLE_DEVICES=$d timeout 200 "$bin/pipekrylov" bench --backends cuda --solvers cg,bicgstab,gmres \
          --problem poisson3d:8388608 --repeats 5 --out "$OUT/gpu$d-poisson3d-8m.csv" --quiet > /dev/null 2>&1
        echo "GPU $d alone, poisson3d 8.4M (solver, us/iter):"
        cut -d, -f3,9 "$OUT/gpu$d-poisson3d-8m.csv" | tail -n 3
      done ;;
    bilu)
      for np in 1 2; do
        for pc in none jacobi "bilu0 --trisolve exact" "bilu0 --trisolve sweeps:1" \
          "bilu0 --trisolve sweeps:2" "bilu0 --trisolve sweeps:3"; do
          tag=$(echo "$pc" | sed 's/ --trisolve /-/; s/:/-/')
          timeout 200 mpirun --oversubscribe -np $np "$bin/pipekrylov" solve \
            --generate convdiff3d:${SIZE:-1259712} --solver gmres --restart 30 --tol 1e-5 --maxit 20000 \
            --backend ${BACKEND:-cuda} --block-size 4 --precond $pc > "$OUT/bilu-$tag-np$np.log" 2>&1
          echo "bilu $tag np=$np: status $?"
        done
      done
      python3 - "$OUT" <<'PY'
import glob, os, re, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "bilu-*-np*.log"))):
    tag, np = re.match(r".*/bilu-(.*)-np(\d+)\.log", f).groups()
    t = open(f).read()
    it = re.search(r"after (\d+) iterations", t)
    tm = re.search(r"setup ([\d.]+) ms, solve ([\d.]+) ms, ([\d.]+) us per iteration", t)
    res = re.search(r"\|\|b - Ax\|\|/\|\|b\|\| = (\S+)", t)
    ranks = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", t, re.M)
    if not (it and tm):
        rows.append([tag, np, "failed"] + [""] * 8); continue
    setup, solve, per = map(float, tm.groups())
    halo = max((float(r[5]) for r in ranks), default=0.0)
    red = max((float(r[6]) for r in ranks), default=0.0)
    rows.append([tag, np, it.group(1), res.group(1) if res else "", f"{setup:.1f}", f"{solve:.1f}",
                 f"{setup + solve:.1f}", f"{per:.1f}", f"{halo:.1f}", f"{red:.1f}", len(ranks)])
hdr = ["config", "ranks", "iterations", "true_rel_residual", "setup_ms", "solve_ms", "total_ms",
       "us_per_iter", "max_halo_us_per_iter", "max_reduce_us_per_iter", "ranks_reported"]
with open(os.path.join(out, "bilu-convdiff3d-x2.csv"), "w") as f:
    f.write(",".join(hdr) + "\n")
    for r in rows:
        f.write(",".join(map(str, r)) + "\n")
print(f"{hdr[0]:>18} " + " ".join(f"{h[:12]:>12}" for h in hdr[1:10]))
for r in rows:
    print(f"{r[0]:>18} " + " ".join(f"{str(v)[:12]:>12}" for v in r[1:10]))
PY
      ;;
  esac
done
