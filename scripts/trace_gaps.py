"""Summarize a PIPEKRYLOV_CUDA_TRACE timeline (kernel,start_us,end_us): over the iterations after
the fifth (delimited by a kernel launched once per iteration, an update where there is one),
the span per iteration, the kernels' busy time, the idle time, each kernel's time, and the idle
gaps before kernels summed by (kernel before -> kernel after). Usage: trace_gaps.py CSV LABEL ITS"""
import collections
import csv
import sys

path, label, its = sys.argv[1], sys.argv[2], int(sys.argv[3])
acts = [(float(r["start_us"]), float(r["end_us"]), r["kernel"]) for r in csv.DictReader(open(path))]
if not acts:
    print(f"== {label}: empty trace")
    sys.exit()
counts = collections.Counter(a[2] for a in acts)
once = [n for n, c in counts.items() if its - 8 <= c <= its + 8]
main = (sorted(n for n in once if "update" in n) or sorted(once, key=lambda n: -counts[n]))
if not main:
    print(f"== {label}: no kernel runs once per iteration: {counts.most_common(6)}")
    sys.exit()
main = main[0]
starts = [a[0] for a in acts if a[2] == main]
lo, hi, n_it = starts[5], starts[-1], len(starts) - 6
window = [a for a in acts if lo <= a[0] < hi]
busy = sum(e - s for s, e, _ in window)
print(f"== {label}: {n_it} iterations (by {main}), {(hi - lo) / n_it:.1f} us each: "
      f"kernels {busy / n_it:.1f}, idle {(hi - lo - busy) / n_it:.1f}")
per = collections.defaultdict(lambda: [0, 0.0])
gaps = collections.defaultdict(lambda: [0, 0.0])
prev_end, prev = lo, "(window start)"
for s, e, name in window:
    per[name][0] += 1
    per[name][1] += e - s
    if s - prev_end > 0.5:
        gaps[(prev, name)][0] += 1
        gaps[(prev, name)][1] += s - prev_end
    prev_end, prev = e, name
for name, (c, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
    print(f"   kernel {name:34} {c / n_it:5.2f}/it {t / n_it:8.1f} us/it")
for (a, b), (c, t) in sorted(gaps.items(), key=lambda kv: -kv[1][1])[:10]:
    print(f"   idle   {a[:30]:30} -> {b[:30]:30} {c / n_it:5.2f}/it {t / n_it:7.1f} us/it")
