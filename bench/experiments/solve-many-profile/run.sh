#!/usr/bin/env bash
# Issue 55 item 3: where an iteration of CG with 8 right-hand sides goes on the H200, per kernel
# (ncu: duration, DRAM bytes read and written), against one right-hand side (classical and
# pipelined). 3D Poisson 160^3 (4.1M), CUDA, 12 iterations, the launches of the last few.
# Packed with: pack-for-device --features "cuda opencl cli" -- --bin pipekrylov
# Run: OUT=$OUT bash bench/experiments/solve-many-profile/run.sh  (CSV: $OUT/ncu-<case>.csv)
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
prof() {  # name nrhs variant
  timeout 200 ncu --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --launch-skip "${SKIP:-40}" --launch-count "${COUNT:-30}" \
    bash .device/run pipekrylov solve --generate poisson3d:4096000 --rhs a-ones --solver cg \
    --backend cuda --nrhs "$2" --variant "$3" --max-iter 12 > "$OUT/ncu-$1.csv" 2> "$OUT/ncu-$1.err"
}
prof k8-classical 8 classical
prof k1-classical 1 classical
prof k1-pipelined 1 pipelined
python3 - "$OUT" <<'PY'
import csv, io, os, sys
from collections import defaultdict
out = sys.argv[1]
for case in ("k8-classical", "k1-classical", "k1-pipelined"):
    text = open(os.path.join(out, f"ncu-{case}.csv")).read()
    lines = text[text.find('"ID"'):] if '"ID"' in text else ""
    agg = defaultdict(lambda: defaultdict(list))
    for r in csv.DictReader(io.StringIO(lines)):
        v = float(r["Metric Value"].replace(",", ""))
        agg[r["Kernel Name"]][r["Metric Name"]].append((r["Metric Unit"], v))
    print(f"== {case}")
    for k, m in agg.items():
        def mean(name, scale):
            xs = m.get(name, [])
            if not xs: return float("nan")
            unit = xs[0][0]
            f = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3}.get(unit, 1)
            return sum(x for _, x in xs) / len(xs) * f
        t = mean("gpu__time_duration.sum", 1); rd = mean("dram__bytes_read.sum", 1); wr = mean("dram__bytes_write.sum", 1)
        n = len(m.get("gpu__time_duration.sum", []))
        print(f"  {k[:40]:40} x{n:3} {t:9.1f} us  read {rd:8.1f} MB  write {wr:8.1f} MB  {(rd+wr)/t*1e-3 if t else 0:6.2f} TB/s")
PY
