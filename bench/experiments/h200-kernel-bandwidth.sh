#!/usr/bin/env bash
# Achieved bandwidth per SpMV kernel (issue 16, item 4) on the H200: `pipekrylov bench --solvers
# spmv` on the matrices of the bandwidth study, CUDA and NVIDIA OpenCL, for every layout a user
# can pick: CSR with the vector kernel, CSR with the stream kernel and 16-bit offsets, SELL
# (16-bit offsets where the slices fit) and, for elasticity3d, BSR with 3 x 3 blocks. The floor
# is CSR's traffic for every layout (one yardstick, `floor_ratio`); `moved_bytes_per_iter` is
# what the layout that ran moves (padding, block fill, offsets) and `achieved_gb_per_s` those
# bytes over the median time. One CSV ($OUT/kernel-bandwidth-h200.csv), a table last. From the
# repository root on the device, after the release build with --features "cuda opencl cli"
# packed into .device/bin (about 4 minutes):
#   OUT=... bash bench/experiments/h200-kernel-bandwidth.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
PK="bash .device/run pipekrylov"
TMP=$(mktemp -d)
csv="$OUT/kernel-bandwidth-h200.csv"
first=1
for case in ${MATRICES:-poisson3d:4096000 stencil27:4096000 elasticity3d:324864 powerlaw:4194304 circuit:4194304}; do
  p=${case%%:*}; n=${case#*:}
  layouts="csr:vector csr:stream-compact sell:auto"
  [ "$p" = elasticity3d ] && layouts="$layouts bsr:3:auto"
  for layout in $layouts; do
    fmt=${layout%:*}; K=${layout##*:}
    [ "$K" = auto ] && K=""
    PIPEKRYLOV_CSR_KERNEL=$K timeout 150 $PK bench --backends cuda,opencl --solvers spmv \
      --problem "$p" --min-n "$n" --max-n "$n" --format "$fmt" --repeats 20 \
      --out "$TMP/one.csv" --quiet > /dev/null 2>&1
    echo "$p $fmt ${K:-default}: status $?"
    if [ -f "$TMP/one.csv" ]; then
      if [ $first = 1 ]; then head -n 1 "$TMP/one.csv" > "$csv"; first=0; fi
      tail -n +2 "$TMP/one.csv" >> "$csv"
      rm -f "$TMP/one.csv"
    fi
  done
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'problem':13} {'backend':7} {'format':12} {'kernel':28} {'us':>8} {'floor x':>8} {'moved/floor':>11} {'GB/s':>7}")
for r in rows:
    t = float(r["median_s_per_iter"])
    print(f"{r['problem']:13} {r['backend']:7} {r['format']:12} {r['kernel']:28} {t*1e6:8.1f} "
          f"{float(r['floor_ratio']):8.3f} {float(r['moved_bytes_per_iter'])/float(r['floor_bytes_per_iter']):11.3f} "
          f"{float(r['achieved_gb_per_s']):7.0f}")
PY
