#!/usr/bin/env python3
"""OpenCL / CUDA from repeat-sweep CSVs: per (solver, n) the median over processes of each
backend's per-process median time per iteration, the ratio, and the per-process range.
Usage: python3 bench/experiments/repeat_table.py bench/results/repeat_final_poisson2d.csv [...]"""
import csv, statistics, sys, collections

for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    t = collections.defaultdict(list)
    for r in rows:
        t[(r['backend'], r['solver'], int(r['n']))].append(float(r['median_s_per_iter']) * 1e6)
    problem = rows[0]['problem'] if rows else path
    print(f"\n### {problem}: us per iteration, median over {len(t[next(iter(t))])} processes (range)\n")
    print("| solver | n | CUDA | OpenCL | OpenCL / CUDA |")
    print("|---|---|---|---|---|")
    for solver in ['cg', 'bicgstab', 'gmres']:
        for n in sorted({k[2] for k in t if k[1] == solver}):
            c, o = t[('cuda', solver, n)], t[('opencl', solver, n)]
            mc, mo = statistics.median(c), statistics.median(o)
            print(f"| {solver} | {n} | {mc:.1f} ({min(c):.1f}-{max(c):.1f}) | "
                  f"{mo:.1f} ({min(o):.1f}-{max(o):.1f}) | {mo / mc:.2f} |")
