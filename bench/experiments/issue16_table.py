#!/usr/bin/env python3
"""Issue 16's consolidated table: for every matrix x solver x backend at n >= 3.9M, the best
H200 row among the committed bench CSVs whose floor is CSR's for every layout (files with the
`moved_bytes_per_iter` column, 2026-11-24 (i) on; rows of runs with non-default
PIPEKRYLOV_MATRIX_LOAD_HINTS left out), with its format, kernel, achieved bandwidth
and file; cuSPARSE's CSR SpMV (ALG1) on the same matrix. Markdown on stdout.

    python3 bench/experiments/issue16_table.py [bench/results] [CARD]

CARD (default h200): the tag the file names carry, e.g. h100 for a table of an H100's runs.
"""
import csv
import glob
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
card = sys.argv[2] if len(sys.argv) > 2 else "h200"
best, cusparse = {}, {}
for f in sorted(glob.glob(os.path.join(root, "*.csv"))):
    name = os.path.basename(f)
    if card not in name:
        continue
    try:
        rows = list(csv.DictReader(open(f)))
    except (OSError, csv.Error, UnicodeDecodeError):
        continue
    for r in rows:
        try:
            n = int(r.get("n") or 0)
        except ValueError:
            continue
        if n < 3_900_000:
            continue
        if r.get("algorithm") == "csr_alg1" and r.get("median_s"):
            v = float(r["median_s"]) * 1e6
            if r["problem"] not in cusparse or v < cusparse[r["problem"]][0]:
                cusparse[r["problem"]] = (v, name)
            continue
        if "moved_bytes_per_iter" not in r or r.get("backend") not in ("cuda", "opencl"):
            continue
        if r.get("precision") != "f64" or r.get("variant") != "pipelined":
            continue
        if r.get("load_hints", "1") != "1":
            continue  # comparison runs with non-default SpMV load hints
        if r.get("solver") not in ("spmv", "cg", "bicgstab", "gmres") or r.get("restart") not in ("30", ""):
            continue
        key = (r["problem"], r["solver"], r["backend"])
        ratio = float(r["floor_ratio"])
        if key not in best or ratio < best[key][0]:
            best[key] = (ratio, float(r["median_s_per_iter"]) * 1e6, r.get("format", ""),
                         r.get("kernel", ""), r.get("achieved_gb_per_s", ""), name)
goal = {"poisson2d": 1.10, "poisson3d": 1.10}
print("| problem | solver | backend | us/iter | x CSR floor (goal) | format | kernel | GB/s | cuSPARSE SpMV us | file |")
print("|---|---|---|---|---|---|---|---|---|---|")
for key in sorted(best):
    ratio, us, fmt, kernel, gb, name = best[key]
    g = goal.get(key[0], 1.25)
    mark = f"**{ratio:.2f}**" if ratio <= g else f"{ratio:.2f}"
    cu = f"{cusparse[key[0]][0]:.1f}" if key[1] == "spmv" and key[0] in cusparse else ""
    print(f"| {key[0]} | {key[1]} | {key[2]} | {us:.1f} | {mark} ({g}) | {fmt} | {kernel} | {gb} | {cu} | `{name}` |")
