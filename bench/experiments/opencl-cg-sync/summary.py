"""Per binary and ladder row of run.sh's CSVs (cg-<binary>-r<round>.csv): the median over the
rounds of each round's median us per iteration, and its ratio to BASE's.
Usage: python3 summary.py FOLDER BASE"""
import csv, glob, os, statistics as st, sys

folder, base = sys.argv[1], sys.argv[2]
t = {}
for f in glob.glob(os.path.join(folder, "cg-*-r*.csv")):
    v = os.path.basename(f)[len("cg-"):].rsplit("-r", 1)[0]
    for d in csv.DictReader(open(f)):
        k = (d["backend"], d["execution"], int(d["n"]))
        t.setdefault(k, {}).setdefault(v, []).append(float(d["median_s_per_iter"]) * 1e6)
bins = sorted({v for row in t.values() for v in row})
print("backend execution n " + " ".join(f"{b}(us,ratio)" for b in bins))
ratios = {b: [] for b in bins}
for k in sorted(t):
    if base not in t[k]:
        continue
    ref = st.median(t[k][base])
    cells = []
    for b in bins:
        m = st.median(t[k][b]) if b in t[k] else float("nan")
        ratios[b].append((k[0], m / ref))
        cells.append(f"{m:.2f},{m / ref:.3f}")
    print(*k, " ".join(cells))
for b in bins:
    for backend in sorted({r[0] for r in ratios[b]}):
        rs = [r[1] for r in ratios[b] if r[0] == backend]
        print(f"{b} {backend}: median ratio to {base} {st.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})")
