"""Per kernel name, the device time per iteration of the solve phase on CUDA and OpenCL.

Reads OUT/trace-<problem>-<backend>.csv (kernel,start_us,end_us) and the matching .json (the
solve's report: iterations). The solve phase is taken as the kernels after the last launch of an
AMG setup kernel (names starting amg_, spgemm, or the setup's sparse helpers) and the first
`spmv_dots_csr`; times are summed per name and divided by the iterations. Prints CSV:
problem,backend,kernel,launches_per_iter,us_per_iter, then per problem and backend the rows
`(busy)` (kernel time per iteration), `(span)` (first start to last end, per iteration) and
`(idle)` (span - busy); then the setup's totals (not per iteration): `(setup busy)`, `(setup
span)` and `(setup idle)`, with the setup's launches in the launches column.
"""
import csv
import glob
import json
import os
import sys

out = sys.argv[1]
print("problem,backend,kernel,launches_per_iter,us_per_iter")
for path in sorted(glob.glob(os.path.join(out, "trace-*.csv"))):
    stem = os.path.basename(path)[len("trace-"):-len(".csv")]
    problem, backend = stem.rsplit("-", 1)
    try:
        report = json.load(open(path[:-4] + ".json"))
    except (OSError, ValueError):
        continue
    its = max(1, report["iterations"])
    rows = [(r["kernel"], float(r["start_us"]), float(r["end_us"])) for r in csv.DictReader(open(path))]
    # The solve starts at the first product of CG after the setup: the last kernel whose name
    # belongs to the setup, then the first spmv_dots_csr after it.
    setup_names = ("amg_", "spgemm", "transpose", "scan", "compact", "fill_u32", "csr_sort", "power")
    last_setup = max((i for i, r in enumerate(rows) if r[0].startswith(setup_names)), default=-1)
    first = next((i for i in range(last_setup + 1, len(rows)) if rows[i][0].startswith("spmv_dots")), None)
    if first is None:
        continue
    solve = rows[first:]
    by = {}
    for name, s, e in solve:
        n, t = by.get(name, (0, 0.0))
        by[name] = (n + 1, t + (e - s))
    busy = sum(t for _, t in by.values())
    span = solve[-1][2] - solve[0][1]
    for name, (n, t) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"{problem},{backend},{name},{n / its:.2f},{t / its:.1f}")
    print(f"{problem},{backend},(busy),,{busy / its:.1f}")
    print(f"{problem},{backend},(span),,{span / its:.1f}")
    print(f"{problem},{backend},(idle),,{(span - busy) / its:.1f}")
    setup = rows[:first]
    if setup:
        s_busy = sum(e - s for _, s, e in setup)
        s_span = setup[-1][2] - setup[0][1]
        print(f"{problem},{backend},(setup busy),{len(setup)},{s_busy:.1f}")
        print(f"{problem},{backend},(setup span),{len(setup)},{s_span:.1f}")
        print(f"{problem},{backend},(setup idle),{len(setup)},{s_span - s_busy:.1f}")
