"""Merge bench CSVs into one with a first column `file` (each source's name without .csv), then
delete the sources (the device returns a limited number of files):
    python3 bench/experiments/merge_tagged.py DST SRC [SRC ...]
Used by h200-cg-sums-kernel.sh, h200-dcgs2-sell.sh and h200-opencl-sell-ladder.sh."""
import csv, os, sys

dst, srcs = sys.argv[1], sys.argv[2:]
with open(dst, "w", newline="") as f:
    w = None
    for src in srcs:
        tag = os.path.basename(src)[:-4]
        for r in csv.DictReader(open(src)):
            if w is None:
                w = csv.DictWriter(f, ["file"] + list(r.keys()))
                w.writeheader()
            w.writerow({"file": tag, **r})
for src in srcs:
    os.remove(src)
