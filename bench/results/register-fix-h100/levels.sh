# GMRES(30) resident ladder, two builds x early-start levels 0..3, two rounds, same card.
for r in 1 2; do for b in .bisect/pipekrylov-f294993 .bisect/pipekrylov-395c1a7 .device/bin/pipekrylov; do for e in 0 1 2 3; do for p in poisson2d poisson3d; do
  t=$(basename $b | sed 's/pipekrylov-//; s/^pipekrylov$/HEAD/')-e$e-$p-r$r
  PIPEKRYLOV_CUDA_EARLY_START=$e timeout 100 $b bench --backends cuda --solvers gmres --executions resident --problem $p --min-n 3000 --max-n 70000 --iterations 300 --repeats 10 --out $OUT/s-$t.csv --quiet >/dev/null 2>&1 || echo "fail $t"
done; done; done; done
cd $OUT; python3 - <<'PY'
import csv,glob,collections,statistics
d=collections.defaultdict(list)
for f in glob.glob('s-*.csv'):
  b,e,_,_=f[2:-4].split('-')
  for r in csv.DictReader(open(f)):
    d[(r['problem'],int(r['n']),b,e)].append(float(r['median_s_per_iter'])*1e6)
print('problem n build | level 0 1 2 3 (median of rounds, us)')
for k in sorted({(k[0],k[1],k[2]) for k in d}):
  print(*k, '|', *[('%.2f'%statistics.median(d[k+(e,)])) if d.get(k+(e,)) else '-' for e in '0123'])
PY
tar czf levels-ab.tgz s-*.csv; rm s-*.csv
