"""new / old per row of run.sh's CSVs (the median over rounds of each binary's median us per
iteration); writes redesign-ab.csv in the folder and prints the rows beyond 3%.
Usage: python3 summary.py FOLDER (every ladder-*-r*.csv and large-*.csv in it)."""
import csv, glob, os, statistics, sys

out = sys.argv[1]


def table(pattern):
    t = {}
    for f in glob.glob(os.path.join(out, pattern)):
        for r in csv.DictReader(open(f)):
            k = (r["solver"], r.get("variant", ""), r["problem"], r["n"], r["backend"],
                 r.get("execution", ""), r.get("format", ""))
            t.setdefault(k, []).append(float(r["median_s_per_iter"]))
    return {k: (statistics.median(v), len(v)) for k, v in t.items()}


rows = []
for kind in ("ladder", "large"):
    old, new = table(f"{kind}-old*.csv"), table(f"{kind}-new*.csv")
    for k in sorted(set(old) & set(new)):
        rows.append((kind,) + k + (old[k][1], old[k][0] * 1e6, new[k][0] * 1e6, new[k][0] / old[k][0]))
with open(os.path.join(out, "redesign-ab.csv"), "w") as f:
    w = csv.writer(f)
    w.writerow(["kind", "solver", "variant", "problem", "n", "backend", "execution", "format", "rounds",
                "old_us", "new_us", "new_over_old"])
    w.writerows(rows)
if not rows:
    sys.exit("no rows")
ratios = [r[-1] for r in rows]
print(f"{len(rows)} rows; new/old median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
      f"max {max(ratios):.3f}")
for group in sorted({(r[0], r[5], r[6]) for r in rows}):
    g = [r[-1] for r in rows if (r[0], r[5], r[6]) == group]
    print(f"  {group[0]:6s} {group[1]:6s} {group[2]:9s} {len(g):3d} rows: median {statistics.median(g):.3f}"
          f" ({min(g):.3f}-{max(g):.3f})")
for r in rows:
    if abs(r[-1] - 1) > 0.03:
        print("beyond 3%:", r[:8], f"{r[-3]:.1f} -> {r[-2]:.1f} us ({r[-1]:.3f})")
