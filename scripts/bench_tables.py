#!/usr/bin/env python3
"""Markdown tables (the 2026-11-20 ladder in bench/log/) from `pipekrylov bench` CSVs, next to ViennaCL 1.7.1
measured on the same H200 model on 2026-11-20 (us per iteration, the tables below).
Usage: python3 scripts/bench_tables.py bench/results/h200_poisson2d.csv [...]"""
import csv, sys

VCL_CUDA = {
 'poisson2d': {'cg': {225:33.6,961:33.0,3969:32.8,16129:32.5,65025:35.2,261121:59.2,1046529:191.4,4190209:676.3},
               'bicgstab': {225:41.7,961:43.8,3969:42.1,16129:43.5,65025:53.8,261121:82.1,1046529:297.2,4190209:1004.6},
               'gmres': {225:33.1,961:33.6,3969:33.9,16129:35.9,65025:55.7,261121:205.6,1046529:879.4,4190209:3491.2}},
 'poisson3d': {'cg': {512:37.9,4096:37.7,32768:43.6,262144:72.7,2097152:440.4,4096000:812.3},
               'bicgstab': {512:48.4,4096:50.2,32768:56.6,262144:107.2,2097152:699.8,4096000:1278.2},
               'gmres': {512:35.8,4096:36.5,32768:50.0,262144:236.4,2097152:1900.9,4096000:3640.8}}}
VCL_OCL = {
 'poisson2d': {'cg': {225:46.1,16129:46.9,65025:51.8,261121:67.3,1046529:172.1,4190209:540.5},
               'bicgstab': {225:67.2,16129:71.1,65025:78.6,261121:100.4,1046529:310.2,4190209:1019.8},
               'gmres': {225:43.8,16129:47.0,65025:66.9,261121:229.3,1046529:949.8,4190209:3666.0}},
 'poisson3d': {'cg': {4096:46.8,262144:70.1,4096000:654.4},
               'bicgstab': {4096:67.8,262144:113.9,4096000:1262.5},
               'gmres': {4096:44.4,262144:248.9,4096000:3835.2}}}

def fmt(v):
    return '-' if v is None else f'{v:.1f}'

for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    t = {(r['backend'], r['solver'], r['variant'], int(r['n'])): r for r in rows}
    prob = rows[0]['problem']
    ns = sorted({k[3] for k in t})
    for s in ['cg', 'bicgstab', 'gmres']:
        name = {'cg': 'CG', 'bicgstab': 'BiCGStab', 'gmres': 'GMRES(30)'}[s]
        print(f'\n### {prob}, {name} (us per iteration, median of 10 solves of 30 iterations)\n')
        print('| n | nnz | CUDA pipe | CUDA class | OpenCL pipe | OpenCL class | host pipe | host class | ViennaCL CUDA | ViennaCL OpenCL | floor (CUDA) | CUDA x floor | OpenCL / CUDA |')
        print('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
        cross = None
        for n in ns:
            g = lambda b, v: float(t[(b, s, v, n)]['median_s_per_iter']) * 1e6 if (b, s, v, n) in t else None
            c, o, h = g('cuda', 'pipelined'), g('opencl', 'pipelined'), g('host', 'pipelined')
            floor = float(t[('cuda', s, 'pipelined', n)]['floor_s_per_iter']) * 1e6 if ('cuda', s, 'pipelined', n) in t else None
            if cross is None and h is not None and c is not None and c < h:
                cross = n
            print(f"| {n} | {t[('host', s, 'pipelined', n)]['nnz'] if ('host', s, 'pipelined', n) in t else '-'} | {fmt(c)} | {fmt(g('cuda','classical'))} | {fmt(o)} | {fmt(g('opencl','classical'))} | {fmt(h)} | {fmt(g('host','classical'))} | {fmt(VCL_CUDA.get(prob,{}).get(s,{}).get(n))} | {fmt(VCL_OCL.get(prob,{}).get(s,{}).get(n))} | {fmt(floor)} | {c/floor if c and floor else 0:.2f} | {o/c if o and c else 0:.2f} |")
        print(f'\nFirst size where CUDA pipelined beats the 16-core host: n = {cross}.')
