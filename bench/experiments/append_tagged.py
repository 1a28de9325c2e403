"""Append the rows of a bench CSV to a collecting CSV with tag columns first, then delete it.
The device A/B scripts (h200-resident-finish.sh, h200-dcgs2-*.sh) call it after each run:
    python3 bench/experiments/append_tagged.py SRC DST name=value [name=value ...]
A missing or empty SRC appends nothing."""
import csv, os, sys

src, dst, tags = sys.argv[1], sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]]
rows = list(csv.DictReader(open(src))) if os.path.exists(src) else []
if rows:
    new = not os.path.exists(dst)
    with open(dst, "a", newline="") as f:
        w = csv.DictWriter(f, [k for k, _ in tags] + list(rows[0].keys()))
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({**dict(tags), **r})
if os.path.exists(src):
    os.remove(src)
