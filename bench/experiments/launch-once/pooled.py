"""new / old per ladder row pooled over several folders of run.sh (each round's median us per
iteration of each binary): the ratio of the medians, of the means, of the minima and of the lower
quartiles over the rounds, per row, and the rows where the mean or the minimum is beyond 3%. (The
synchronous small-n rows are bimodal between rounds, for both binaries alike: the lower quartile
and the minimum compare the fast mode, the median and the mean also how often each binary met the
slow one.)
Usage: python3 pooled.py FOLDER [FOLDER ...] > pooled.txt"""
import csv, glob, os, statistics as st, sys

t = {}
for folder in sys.argv[1:]:
    for f in glob.glob(os.path.join(folder, "ladder-*-r*.csv")):
        v = os.path.basename(f).split("-")[1]
        for d in csv.DictReader(open(f)):
            k = (d["solver"], d["backend"], d["execution"], int(d["n"]))
            t.setdefault(k, {}).setdefault(v, []).append(float(d["median_s_per_iter"]) * 1e6)
print("solver backend execution n rounds old_median_us new_median_us median_ratio mean_ratio min_ratio q1_ratio")
groups = {}
for k in sorted(t):
    o, n = t[k].get("old", []), t[k].get("new", [])
    if not o or not n:
        continue
    q1 = lambda x: st.quantiles(x, n=4)[0] if len(x) > 1 else x[0]
    r = (st.median(n) / st.median(o), st.mean(n) / st.mean(o), min(n) / min(o), q1(n) / q1(o))
    groups.setdefault((k[1], k[2]), []).append(r)
    flag = "  beyond 3%" if max(r[1], r[2]) > 1.03 or min(r[1], r[2]) < 0.97 else ""
    print(*k, len(o), f"{st.median(o):.1f} {st.median(n):.1f} {r[0]:.3f} {r[1]:.3f} {r[2]:.3f} {r[3]:.3f}{flag}")
for g, rs in sorted(groups.items()):
    print(g, "rows", len(rs), "median of: median ratios %.3f, mean ratios %.3f, min ratios %.3f, "
          "lower-quartile ratios %.3f" % tuple(st.median(x[i] for x in rs) for i in range(4)))
