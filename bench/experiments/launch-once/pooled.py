"""new / old per ladder row pooled over several folders of run.sh (each round's median us per
iteration of each binary): the ratio of the medians, of the means and of the minima over the
rounds, per row, and the rows where the mean or the minimum is beyond 3%.
Usage: python3 pooled.py FOLDER [FOLDER ...] > pooled.txt"""
import csv, glob, os, statistics as st, sys

t = {}
for folder in sys.argv[1:]:
    for f in glob.glob(os.path.join(folder, "ladder-*-r*.csv")):
        v = os.path.basename(f).split("-")[1]
        for d in csv.DictReader(open(f)):
            k = (d["solver"], d["backend"], d["execution"], int(d["n"]))
            t.setdefault(k, {}).setdefault(v, []).append(float(d["median_s_per_iter"]) * 1e6)
print("solver backend execution n rounds old_median_us new_median_us median_ratio mean_ratio min_ratio")
groups = {}
for k in sorted(t):
    o, n = t[k].get("old", []), t[k].get("new", [])
    if not o or not n:
        continue
    r = (st.median(n) / st.median(o), st.mean(n) / st.mean(o), min(n) / min(o))
    groups.setdefault((k[1], k[2]), []).append(r)
    flag = "  beyond 3%" if max(r[1], r[2]) > 1.03 or min(r[1], r[2]) < 0.97 else ""
    print(*k, len(o), f"{st.median(o):.1f} {st.median(n):.1f} {r[0]:.3f} {r[1]:.3f} {r[2]:.3f}{flag}")
for g, rs in sorted(groups.items()):
    print(g, "rows", len(rs), "median of: median ratios %.3f, mean ratios %.3f, min ratios %.3f"
          % tuple(st.median(x[i] for x in rs) for i in range(3)))
