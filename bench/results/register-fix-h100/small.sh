# A/B of the device-resident ladders (GMRES(30), BiCGStab) for three builds, two rounds, same card.
for r in 1 2; do for b in .bisect/pipekrylov-f294993 .bisect/pipekrylov-395c1a7 .device/bin/pipekrylov; do for p in poisson2d poisson3d; do
  t=$(basename $b)-$p-r$r
  timeout 100 $b bench --backends cuda --solvers bicgstab,gmres --executions resident --problem $p --max-n 70000 --iterations 300 --repeats 10 --out $OUT/s-$t.csv --quiet >/dev/null 2>&1 || echo "fail $t"
done; done; done
cd $OUT; python3 - <<'PY'
import csv,glob,collections,statistics
d=collections.defaultdict(list)
for f in glob.glob('s-*.csv'):
  b=f.split('-')[2] if f.count('-')>=4 else 'HEAD'
  b=f[len('s-pipekrylov-'):].split('-poisson')[0] if '-poisson' in f[len('s-pipekrylov-'):] else 'HEAD'
  for r in csv.DictReader(open(f)):
    d[(r['solver'],r['problem'],int(r['n']),b)].append(float(r['median_s_per_iter'])*1e6)
keys=sorted({k[:3] for k in d})
print('solver problem n  f294993  395c1a7  HEAD (median of rounds, us)')
for k in keys:
  print(*k, *[('%.2f'%statistics.median(d[k+(b,)])) if d.get(k+(b,)) else '-' for b in ('f294993','395c1a7','HEAD')])
PY
tar czf small-ab.tgz s-*.csv; rm s-*.csv
