"""Per binary and ladder row of run.sh's CSVs (cg-<binary>-r<round>.csv): the median over the
rounds of each round's median us per iteration, and its ratio to BASE's; per binary, solver and
backend the median of those ratios and of the lower quartiles' ratios.
Usage: python3 summary.py FOLDER BASE"""
import csv, glob, os, statistics as st, sys

folder, base = sys.argv[1], sys.argv[2]
t = {}
for f in glob.glob(os.path.join(folder, "cg-*-r*.csv")):
    v = os.path.basename(f)[len("cg-"):].rsplit("-r", 1)[0]
    for d in csv.DictReader(open(f)):
        k = (d["solver"], d["backend"], d["execution"], int(d["n"]))
        t.setdefault(k, {}).setdefault(v, []).append(float(d["median_s_per_iter"]) * 1e6)
bins = sorted({v for row in t.values() for v in row})
print("solver backend execution n " + " ".join(f"{b}(us,ratio)" for b in bins))
ratios = {b: [] for b in bins}
q1_ratios = {b: [] for b in bins}
q1 = lambda x: st.quantiles(x, n=4)[0] if len(x) > 1 else x[0]
for k in sorted(t):
    if base not in t[k]:
        continue
    ref = st.median(t[k][base])
    cells = []
    for b in bins:
        m = st.median(t[k][b]) if b in t[k] else float("nan")
        ratios[b].append((k[0], k[1], m / ref))
        if b in t[k]:
            q1_ratios[b].append((k[0], k[1], q1(t[k][b]) / q1(t[k][base])))
        cells.append(f"{m:.2f},{m / ref:.3f}")
    print(*k, " ".join(cells))
for b in bins:
    for solver, backend in sorted({r[:2] for r in ratios[b]}):
        rs = [r[2] for r in ratios[b] if r[:2] == (solver, backend)]
        print(f"{b} {solver} {backend}: median ratio to {base} {st.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})")
for b in bins:
    for solver, backend in sorted({r[:2] for r in q1_ratios[b]}):
        rs = [r[2] for r in q1_ratios[b] if r[:2] == (solver, backend)]
        print(f"{b} {solver} {backend}: median lower-quartile ratio to {base} {st.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})")
